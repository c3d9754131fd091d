//! The element types of CTranslate2 variables: their ids, sizes and names, and their decoding to f32.

use verbatim_kernels::weights::{Element, decode_le};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DType {
    F32,
    I8,
    I16,
    I32,
    F16,
    BF16,
}

impl DType {
    pub fn from_id(id: u8) -> Option<Self> {
        Some(match id {
            0 => Self::F32,
            1 => Self::I8,
            2 => Self::I16,
            3 => Self::I32,
            4 => Self::F16,
            5 => Self::BF16,
            _ => return None,
        })
    }

    pub fn size(self) -> usize {
        match self {
            Self::I8 => 1,
            Self::I16 | Self::F16 | Self::BF16 => 2,
            Self::F32 | Self::I32 => 4,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Self::F32 | Self::F16 | Self::BF16)
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::F32 => "float32",
            Self::I8 => "int8",
            Self::I16 => "int16",
            Self::I32 => "int32",
            Self::F16 => "float16",
            Self::BF16 => "bfloat16",
        }
    }

    /// Appends the values of `bytes` (whole elements, little endian) to `out` as f32.
    pub fn decode(self, bytes: &[u8], out: &mut Vec<f32>) {
        let element = match self {
            Self::F32 => Element::F32,
            Self::I8 => Element::I8,
            Self::I16 => Element::I16,
            Self::I32 => Element::I32,
            Self::F16 => Element::F16,
            Self::BF16 => Element::BF16,
        };
        decode_le(element, bytes, out);
    }
}
