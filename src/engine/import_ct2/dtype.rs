//! The element types of CTranslate2 variables: their ids, sizes and names, and their decoding to f32.

use half::f16;

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
        match self {
            Self::F32 => out.extend(
                bytes
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            ),
            Self::F16 => out.extend(
                bytes
                    .chunks_exact(2)
                    .map(|b| f16::from_le_bytes([b[0], b[1]]).to_f32()),
            ),
            Self::BF16 => out.extend(
                bytes
                    .chunks_exact(2)
                    .map(|b| f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16)),
            ),
            Self::I8 => out.extend(bytes.iter().map(|&b| b as i8 as f32)),
            Self::I16 => out.extend(
                bytes
                    .chunks_exact(2)
                    .map(|b| i16::from_le_bytes([b[0], b[1]]) as f32),
            ),
            Self::I32 => out.extend(
                bytes
                    .chunks_exact(4)
                    .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32),
            ),
        }
    }
}
