//! Model weights element by element: little-endian runs of f32, f16, bf16 and integers read as
//! f32; f32 written as little-endian f32 or f16; ggml's block quantizations (q8_0, q5_1). A
//! model's conversion runs them over every one of its tens of millions of values.
//!
//! The quantizers write byte for byte what ggml's reference quantizers `quantize_row_q8_0_ref`
//! and `quantize_row_q5_1_ref` (ggml-quants.c) write; whisper.cpp's `quantize` tool passes no
//! importance matrix, so `ggml_quantize_chunk` uses exactly these. Both cut a row into blocks
//! of 32 values; a trailing partial block is ignored (callers pass whole rows whose length is
//! a multiple of 32). Scales are rounded to f16 (nearest, ties to even, as `GGML_FP32_TO_FP16`)
//! only when stored: the quants are computed from the f32 values.

use half::f16;

/// How the elements of a run of bytes are stored (little endian).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Element {
    F32,
    F16,
    BF16,
    I8,
    I16,
    I32,
}

/// Appends the values of `bytes` (whole elements of `element`) to `out` as f32.
pub fn decode_le(element: Element, bytes: &[u8], out: &mut Vec<f32>) {
    match element {
        Element::F32 => out.extend(
            bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        ),
        Element::F16 => out.extend(
            bytes
                .chunks_exact(2)
                .map(|b| f16::from_le_bytes([b[0], b[1]]).to_f32()),
        ),
        Element::BF16 => out.extend(
            bytes
                .chunks_exact(2)
                .map(|b| f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16)),
        ),
        Element::I8 => out.extend(bytes.iter().map(|&b| b as i8 as f32)),
        Element::I16 => out.extend(
            bytes
                .chunks_exact(2)
                .map(|b| i16::from_le_bytes([b[0], b[1]]) as f32),
        ),
        Element::I32 => out.extend(
            bytes
                .chunks_exact(4)
                .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32),
        ),
    }
}

/// Appends `values` to `out` as little-endian f32.
pub fn encode_f32_le(values: &[f32], out: &mut Vec<u8>) {
    out.reserve(values.len() * 4);
    out.extend(values.iter().flat_map(|v| v.to_le_bytes()));
}

/// Appends `values` to `out` as little-endian f16 (nearest, ties to even).
pub fn encode_f16_le(values: &[f32], out: &mut Vec<u8>) {
    out.reserve(values.len() * 2);
    out.extend(values.iter().flat_map(|&v| f16::from_f32(v).to_le_bytes()));
}

/// Values per block, for both formats (`QK8_0`, `QK5_1`).
pub const BLOCK_VALUES: usize = 32;
/// A q8_0 block: f16 scale `d`, then 32 signed bytes; a value is `q * d`.
pub const Q8_0_BLOCK_BYTES: usize = 2 + BLOCK_VALUES;
/// A q5_1 block: f16 scale `d`, f16 minimum `m`, a little-endian u32 holding the fifth bit of
/// each quant (bit j for value j), then 16 bytes of low nibbles (value j in the low nibble of
/// byte j, value j + 16 in its high nibble); a value is `q * d + m`, q in 0..=31.
pub const Q5_1_BLOCK_BYTES: usize = 2 + 2 + 4 + BLOCK_VALUES / 2;

/// q8_0: per block, d = max|x| / 127, q = round(x / d) (halves away from zero, as `roundf`),
/// the reciprocal taken from the f32 d.
pub fn quantize_q8_0(values: &[f32], out: &mut Vec<u8>) {
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
pub fn quantize_q5_1(values: &[f32], out: &mut Vec<u8>) {
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
