//! ggml's block quantizations (q8_0, q5_1): the quantizers, byte for byte as ggml's reference
//! quantizers write them, are `verbatim_kernels::weights` (optimised in every profile: a
//! model's conversion quantizes every value); here, their inverses for the tests.

#[cfg(test)]
use half::f16;

// Optimised in every profile (the kernels crate): a model's conversion quantizes every value.
pub(super) use verbatim_kernels::weights::{BLOCK_VALUES, quantize_q5_1, quantize_q8_0};
#[cfg(test)]
pub(super) use verbatim_kernels::weights::{Q5_1_BLOCK_BYTES, Q8_0_BLOCK_BYTES};

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
