//! ggml's block quantizations (q8_0, q5_1), byte for byte as ggml's reference quantizers
//! `quantize_row_q8_0_ref` and `quantize_row_q5_1_ref` (ggml-quants.c) write them. whisper.cpp's
//! `quantize` tool passes no importance matrix, so `ggml_quantize_chunk` uses exactly these.
//!
//! Both cut a row into blocks of 32 values; a trailing partial block is ignored (callers pass
//! whole rows whose length is a multiple of 32). Scales are rounded to f16 (nearest, ties to
//! even, as `GGML_FP32_TO_FP16`) only when stored: the quants are computed from the f32 values.

use half::f16;

/// Values per block, for both formats (`QK8_0`, `QK5_1`).
pub(super) const BLOCK_VALUES: usize = 32;
/// A q8_0 block: f16 scale `d`, then 32 signed bytes; a value is `q * d`.
pub(super) const Q8_0_BLOCK_BYTES: usize = 2 + BLOCK_VALUES;
/// A q5_1 block: f16 scale `d`, f16 minimum `m`, a little-endian u32 holding the fifth bit of
/// each quant (bit j for value j), then 16 bytes of low nibbles (value j in the low nibble of
/// byte j, value j + 16 in its high nibble); a value is `q * d + m`, q in 0..=31.
pub(super) const Q5_1_BLOCK_BYTES: usize = 2 + 2 + 4 + BLOCK_VALUES / 2;

/// q8_0: per block, d = max|x| / 127, q = round(x / d) (halves away from zero, as `roundf`),
/// the reciprocal taken from the f32 d.
pub(super) fn quantize_q8_0(values: &[f32], out: &mut Vec<u8>) {
    out.reserve(values.len() / BLOCK_VALUES * Q8_0_BLOCK_BYTES);
    for block in values.chunks_exact(BLOCK_VALUES) {
        let amax = block.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let d = amax / 127.0;
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        out.extend_from_slice(&f16::from_f32(d).to_le_bytes());
        out.extend(block.iter().map(|&x| (x * id).round() as i8 as u8));
    }
}

/// q5_1: per block, m = min x, d = (max x - m) / 31, q = trunc((x - m) / d + 0.5) (halves up),
/// the reciprocal taken from the f32 d. A constant block has d = 0 and all quants 0.
pub(super) fn quantize_q5_1(values: &[f32], out: &mut Vec<u8>) {
    const HALF: usize = BLOCK_VALUES / 2;
    out.reserve(values.len() / BLOCK_VALUES * Q5_1_BLOCK_BYTES);
    for block in values.chunks_exact(BLOCK_VALUES) {
        // Plain comparisons, as the C loop makes them.
        let (mut min, mut max) = (f32::MAX, -f32::MAX);
        for &v in block {
            if v < min {
                min = v;
            }
            if v > max {
                max = v;
            }
        }
        let d = (max - min) / 31.0;
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        let quant = |x: f32| ((x - min) * id + 0.5) as u8;
        let mut high_bits = 0u32;
        let mut nibbles = [0u8; HALF];
        for (j, nibble) in nibbles.iter_mut().enumerate() {
            let (q0, q1) = (quant(block[j]), quant(block[j + HALF]));
            *nibble = (q0 & 0x0f) | ((q1 & 0x0f) << 4);
            high_bits |= u32::from((q0 & 0x10) >> 4) << j;
            high_bits |= u32::from((q1 & 0x10) >> 4) << (j + HALF);
        }
        out.extend_from_slice(&f16::from_f32(d).to_le_bytes());
        out.extend_from_slice(&f16::from_f32(min).to_le_bytes());
        out.extend_from_slice(&high_bits.to_le_bytes());
        out.extend_from_slice(&nibbles);
    }
}

/// Inverse of [`quantize_q8_0`] (ggml's `dequantize_row_q8_0`).
#[cfg(test)]
pub(super) fn dequantize_q8_0(bytes: &[u8]) -> Vec<f32> {
    let mut out = Vec::with_capacity(bytes.len() / Q8_0_BLOCK_BYTES * BLOCK_VALUES);
    for block in bytes.chunks_exact(Q8_0_BLOCK_BYTES) {
        let d = f16::from_le_bytes([block[0], block[1]]).to_f32();
        out.extend(block[2..].iter().map(|&q| q as i8 as f32 * d));
    }
    out
}

/// Inverse of [`quantize_q5_1`] (ggml's `dequantize_row_q5_1`).
#[cfg(test)]
pub(super) fn dequantize_q5_1(bytes: &[u8]) -> Vec<f32> {
    let mut out = Vec::with_capacity(bytes.len() / Q5_1_BLOCK_BYTES * BLOCK_VALUES);
    for block in bytes.chunks_exact(Q5_1_BLOCK_BYTES) {
        let d = f16::from_le_bytes([block[0], block[1]]).to_f32();
        let m = f16::from_le_bytes([block[2], block[3]]).to_f32();
        let high_bits = u32::from_le_bytes([block[4], block[5], block[6], block[7]]);
        let nibbles = &block[8..];
        let q = |j: usize| {
            let low = if j < 16 {
                nibbles[j] & 0x0f
            } else {
                nibbles[j - 16] >> 4
            };
            low | ((((high_bits >> j) & 1) as u8) << 4)
        };
        out.extend((0..BLOCK_VALUES).map(|j| f32::from(q(j)) * d + m));
    }
    out
}

#[cfg(test)]
mod tests;
