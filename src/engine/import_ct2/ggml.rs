//! Writer for whisper.cpp's ggml model format, and q8_0 block encoding.
//!
//! File layout (little endian, as `whisper_model_load` reads it): magic, 11
//! i32 hyperparameters, mel filterbank (i32 n_mel, i32 n_fft, f32 data),
//! vocabulary (i32 count, then i32 length + bytes per token), then tensors:
//! i32 n_dims, i32 name length, i32 ggml type, i32 dims (innermost first),
//! name bytes, data. Data is packed with no alignment padding.

use std::io::{self, Write};

use half::f16;

pub(super) const GGML_MAGIC: u32 = 0x6767_6d6c;
/// `GGML_QNT_VERSION` and `GGML_QNT_VERSION_FACTOR` from ggml.h.
const GGML_QNT_VERSION: i32 = 2;
const GGML_QNT_VERSION_FACTOR: i32 = 1000;
/// Values per q8_0 block (`QK8_0`); a block is an f16 scale and 32 i8 values.
pub(super) const QK8_0: usize = 32;
const Q8_0_BLOCK_BYTES: usize = 2 + QK8_0;

/// Storage type of one tensor (`ggml_type` ids).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TensorType {
    F32,
    F16,
    Q8_0,
}

impl TensorType {
    pub fn ggml_id(self) -> i32 {
        match self {
            Self::F32 => 0,
            Self::F16 => 1,
            Self::Q8_0 => 8,
        }
    }

    /// Bytes used by `n` values (`n` a multiple of the block size for q8_0).
    #[cfg(test)]
    pub fn bytes_for(self, n: u64) -> u64 {
        match self {
            Self::F32 => n * 4,
            Self::F16 => n * 2,
            Self::Q8_0 => n / QK8_0 as u64 * Q8_0_BLOCK_BYTES as u64,
        }
    }
}

/// The `ftype` hyperparameter for a given type of the 2-D weights:
/// `GGML_FTYPE_MOSTLY_F16` (1) as written by whisper.cpp's converter, or
/// `GGML_FTYPE_MOSTLY_Q8_0` (7) plus the quantization version, as written by
/// whisper.cpp's quantizer.
pub(super) fn ftype_for(weights: TensorType) -> i32 {
    match weights {
        TensorType::F32 => 0,
        TensorType::F16 => 1,
        TensorType::Q8_0 => 7 + GGML_QNT_VERSION * GGML_QNT_VERSION_FACTOR,
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

    /// Appends tensor data. For q8_0, `values.len()` must be a multiple of 32
    /// and start on a row boundary.
    pub fn tensor_data(&mut self, values: &[f32], ty: TensorType) -> io::Result<()> {
        match ty {
            TensorType::F32 => self.f32_slice(values),
            TensorType::F16 => {
                for chunk in values.chunks(1 << 16) {
                    let mut buf = std::mem::take(&mut self.chunk_buf);
                    buf.clear();
                    buf.extend(chunk.iter().flat_map(|&v| f16::from_f32(v).to_le_bytes()));
                    let r = self.raw(&buf);
                    self.chunk_buf = buf;
                    r?;
                }
                Ok(())
            }
            TensorType::Q8_0 => {
                for chunk in values.chunks(QK8_0 << 11) {
                    let mut buf = std::mem::take(&mut self.chunk_buf);
                    buf.clear();
                    quantize_q8_0(chunk, &mut buf);
                    let r = self.raw(&buf);
                    self.chunk_buf = buf;
                    r?;
                }
                Ok(())
            }
        }
    }

    fn f32_slice(&mut self, values: &[f32]) -> io::Result<()> {
        for chunk in values.chunks(1 << 16) {
            let mut buf = std::mem::take(&mut self.chunk_buf);
            buf.clear();
            buf.extend(chunk.iter().flat_map(|v| v.to_le_bytes()));
            let r = self.raw(&buf);
            self.chunk_buf = buf;
            r?;
        }
        Ok(())
    }
}

/// q8_0 encoding as ggml's `quantize_row_q8_0_ref`: per block of 32 values,
/// d = max|x| / 127 stored as f16, q = round(x / d) (half away from zero),
/// with the reciprocal taken from the f32 d. A trailing partial block is
/// ignored; callers pass whole blocks.
pub(super) fn quantize_q8_0(values: &[f32], out: &mut Vec<u8>) {
    out.reserve(values.len() / QK8_0 * Q8_0_BLOCK_BYTES);
    for block in values.chunks_exact(QK8_0) {
        let amax = block.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let d = amax / 127.0;
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        out.extend_from_slice(&f16::from_f32(d).to_le_bytes());
        out.extend(block.iter().map(|&x| (x * id).round() as i8 as u8));
    }
}

/// Inverse of [`quantize_q8_0`] (ggml's `dequantize_row_q8_0`).
#[cfg(test)]
pub(super) fn dequantize_q8_0(bytes: &[u8]) -> Vec<f32> {
    let mut out = Vec::with_capacity(bytes.len() / Q8_0_BLOCK_BYTES * QK8_0);
    for block in bytes.chunks_exact(Q8_0_BLOCK_BYTES) {
        let d = f16::from_le_bytes([block[0], block[1]]).to_f32();
        out.extend(block[2..].iter().map(|&q| q as i8 as f32 * d));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q8_0_block_layout_and_round_trip() {
        let values: Vec<f32> = (0..64)
            .map(|i| ((i as f32) * 0.37).sin() * if i < 32 { 1.5 } else { 0.01 })
            .collect();
        let mut bytes = Vec::new();
        quantize_q8_0(&values, &mut bytes);
        assert_eq!(bytes.len(), 2 * 34);
        // The element with the largest magnitude maps to +-127.
        let first = &bytes[..34];
        assert!(
            first[2..]
                .iter()
                .any(|&q| q as i8 == 127 || q as i8 == -127)
        );
        let d = f16::from_le_bytes([first[0], first[1]]).to_f32();
        let amax = values[..32].iter().fold(0.0f32, |m, v| m.max(v.abs()));
        assert!((d - amax / 127.0).abs() <= amax / 127.0 * 1e-3);
        let back = dequantize_q8_0(&bytes);
        for (block, (a, b)) in values
            .iter()
            .zip(&back)
            .enumerate()
            .map(|(i, p)| (i / 32, p))
        {
            let bmax = values[block * 32..block * 32 + 32]
                .iter()
                .fold(0.0f32, |m, v| m.max(v.abs()));
            assert!(
                (a - b).abs() <= bmax / 127.0 * 0.5 + bmax * 1e-3,
                "{a} vs {b}"
            );
        }
    }

    #[test]
    fn q8_0_exact_cases() {
        // All zeros: scale 0, quants 0.
        let mut bytes = Vec::new();
        quantize_q8_0(&[0.0; 32], &mut bytes);
        assert_eq!(bytes, vec![0u8; 34]);
        // 127 * k values round-trip exactly when d = 1.
        let values: Vec<f32> = (0..32)
            .map(|i| (i as f32 * 8.0 - 127.0).clamp(-127.0, 127.0))
            .collect();
        bytes.clear();
        quantize_q8_0(&values, &mut bytes);
        assert_eq!(f16::from_le_bytes([bytes[0], bytes[1]]).to_f32(), 1.0);
        assert_eq!(dequantize_q8_0(&bytes), values);
        // Halves round away from zero, as C's roundf.
        let mut v = [0.0f32; 32];
        v[0] = 127.0;
        v[1] = 2.5;
        v[2] = -2.5;
        bytes.clear();
        quantize_q8_0(&v, &mut bytes);
        assert_eq!((bytes[3] as i8, bytes[4] as i8), (3, -3));
    }

    #[test]
    fn ftypes() {
        assert_eq!(ftype_for(TensorType::F16), 1);
        assert_eq!(ftype_for(TensorType::Q8_0), 2007);
        assert_eq!(TensorType::Q8_0.bytes_for(64), 68);
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
