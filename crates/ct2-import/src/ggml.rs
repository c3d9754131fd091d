//! Writer for whisper.cpp's ggml model format.
//!
//! File layout (little endian, as `whisper_model_load` reads it): magic, 11
//! i32 hyperparameters, mel filterbank (i32 n_mel, i32 n_fft, f32 data),
//! vocabulary (i32 count, then i32 length + bytes per token), then tensors:
//! i32 n_dims, i32 name length, i32 ggml type, i32 dims (innermost first),
//! name bytes, data. Data is packed with no alignment padding.

use std::io::{self, Write};

use verbatim_kernels::weights;

use super::blocks::{self, BLOCK_VALUES};

pub(super) const GGML_MAGIC: u32 = 0x6767_6d6c;
/// `GGML_QNT_VERSION` and `GGML_QNT_VERSION_FACTOR` from ggml.h.
const GGML_QNT_VERSION: i32 = 2;
const GGML_QNT_VERSION_FACTOR: i32 = 1000;

/// Storage type of one tensor (`ggml_type` ids).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TensorType {
    F32,
    F16,
    Q8_0,
    Q5_1,
}

impl TensorType {
    /// `GGML_TYPE_*` from ggml.h.
    pub fn ggml_id(self) -> i32 {
        match self {
            Self::F32 => 0,
            Self::F16 => 1,
            Self::Q5_1 => 7,
            Self::Q8_0 => 8,
        }
    }

    /// Block-quantized: rows must be whole blocks of 32 values.
    pub fn is_quantized(self) -> bool {
        matches!(self, Self::Q8_0 | Self::Q5_1)
    }

    /// ggml's name of the type, as quantized model ids carry it.
    pub fn name(self) -> &'static str {
        match self {
            Self::F32 => "f32",
            Self::F16 => "f16",
            Self::Q8_0 => "q8_0",
            Self::Q5_1 => "q5_1",
        }
    }

    /// Bytes used by `n` values (`n` a multiple of the block size when quantized).
    #[cfg(test)]
    pub fn bytes_for(self, n: u64) -> u64 {
        let blocks = n / BLOCK_VALUES as u64;
        match self {
            Self::F32 => n * 4,
            Self::F16 => n * 2,
            Self::Q8_0 => blocks * blocks::Q8_0_BLOCK_BYTES as u64,
            Self::Q5_1 => blocks * blocks::Q5_1_BLOCK_BYTES as u64,
        }
    }
}

/// The `ftype` hyperparameter for a given type of the 2-D weights:
/// `GGML_FTYPE_MOSTLY_F16` (1) as written by whisper.cpp's converter, or
/// `GGML_FTYPE_MOSTLY_Q8_0` (7) / `GGML_FTYPE_MOSTLY_Q5_1` (9) plus
/// `GGML_QNT_VERSION * GGML_QNT_VERSION_FACTOR`, as written by whisper.cpp's
/// quantizer (the loader takes the remainder by the factor).
pub(super) fn ftype_for(weights: TensorType) -> i32 {
    let quantized = |ftype: i32| ftype + GGML_QNT_VERSION * GGML_QNT_VERSION_FACTOR;
    match weights {
        TensorType::F32 => 0,
        TensorType::F16 => 1,
        TensorType::Q8_0 => quantized(7),
        TensorType::Q5_1 => quantized(9),
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct HParams {
    pub n_vocab: i32,
    pub n_audio_ctx: i32,
    pub n_audio_state: i32,
    pub n_audio_head: i32,
    pub n_audio_layer: i32,
    pub n_text_ctx: i32,
    pub n_text_state: i32,
    pub n_text_head: i32,
    pub n_text_layer: i32,
    pub n_mels: i32,
    pub ftype: i32,
}

/// Counts bytes while writing.
pub(super) struct GgmlWriter<W: Write> {
    inner: W,
    written: u64,
    chunk_buf: Vec<u8>,
}

impl<W: Write> GgmlWriter<W> {
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            written: 0,
            chunk_buf: Vec::new(),
        }
    }

    pub fn written(&self) -> u64 {
        self.written
    }

    pub fn into_inner(self) -> W {
        self.inner
    }

    fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.inner.write_all(bytes)?;
        self.written += bytes.len() as u64;
        Ok(())
    }

    fn i32(&mut self, v: i32) -> io::Result<()> {
        self.raw(&v.to_le_bytes())
    }

    pub fn header(&mut self, h: &HParams) -> io::Result<()> {
        self.raw(&GGML_MAGIC.to_le_bytes())?;
        for v in [
            h.n_vocab,
            h.n_audio_ctx,
            h.n_audio_state,
            h.n_audio_head,
            h.n_audio_layer,
            h.n_text_ctx,
            h.n_text_state,
            h.n_text_head,
            h.n_text_layer,
            h.n_mels,
            h.ftype,
        ] {
            self.i32(v)?;
        }
        Ok(())
    }

    pub fn mel_filters(&mut self, n_mel: i32, n_fft: i32, data: &[f32]) -> io::Result<()> {
        self.i32(n_mel)?;
        self.i32(n_fft)?;
        self.f32_slice(data)
    }

    /// Token bytes; callers ensure counts and lengths fit in i32.
    pub fn vocabulary(&mut self, tokens: &[Vec<u8>]) -> io::Result<()> {
        self.i32(tokens.len() as i32)?;
        for t in tokens {
            self.i32(t.len() as i32)?;
            self.raw(t)?;
        }
        Ok(())
    }

    /// Writes a tensor header. `dims` is in row-major (numpy) order; ggml
    /// stores the innermost dimension first.
    pub fn tensor_header(&mut self, name: &str, dims: &[i32], ty: TensorType) -> io::Result<()> {
        self.i32(dims.len() as i32)?;
        self.i32(name.len() as i32)?;
        self.i32(ty.ggml_id())?;
        for &d in dims.iter().rev() {
            self.i32(d)?;
        }
        self.raw(name.as_bytes())
    }

    /// Appends tensor data. When quantized, `values.len()` must be a multiple
    /// of 32 and start on a row boundary (whisper's rows are whole blocks).
    pub fn tensor_data(&mut self, values: &[f32], ty: TensorType) -> io::Result<()> {
        match ty {
            TensorType::F32 => self.f32_slice(values),
            TensorType::F16 => self.encoded(values, 1 << 16, weights::encode_f16_le),
            TensorType::Q8_0 => self.encoded(values, BLOCK_VALUES << 11, blocks::quantize_q8_0),
            TensorType::Q5_1 => self.encoded(values, BLOCK_VALUES << 11, blocks::quantize_q5_1),
        }
    }

    fn f32_slice(&mut self, values: &[f32]) -> io::Result<()> {
        self.encoded(values, 1 << 16, weights::encode_f32_le)
    }

    /// Writes `values` in chunks of `chunk_len`, each encoded into a reused buffer.
    fn encoded(
        &mut self,
        values: &[f32],
        chunk_len: usize,
        encode: impl Fn(&[f32], &mut Vec<u8>),
    ) -> io::Result<()> {
        for chunk in values.chunks(chunk_len) {
            let mut buf = std::mem::take(&mut self.chunk_buf);
            buf.clear();
            encode(chunk, &mut buf);
            let r = self.raw(&buf);
            self.chunk_buf = buf;
            r?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ftypes() {
        assert_eq!(ftype_for(TensorType::F16), 1);
        assert_eq!(ftype_for(TensorType::Q8_0), 2007);
        assert_eq!(ftype_for(TensorType::Q5_1), 2009);
        assert_eq!(TensorType::Q8_0.bytes_for(64), 68);
        assert_eq!(TensorType::Q5_1.bytes_for(64), 48);
        assert_eq!(TensorType::Q5_1.ggml_id(), 7);
    }

    #[test]
    fn tensor_header_reverses_dims() {
        let mut w = GgmlWriter::new(Vec::new());
        w.tensor_header("x", &[3, 5], TensorType::F16).unwrap();
        let got = w.into_inner();
        let ints: Vec<i32> = got[..20]
            .chunks(4)
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        assert_eq!(ints, vec![2, 1, 1, 5, 3]);
        assert_eq!(&got[20..], b"x");
    }
}
