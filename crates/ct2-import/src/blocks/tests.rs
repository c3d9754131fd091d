use half::f16;
use proptest::prelude::*;

use super::*;

fn f16_at(bytes: &[u8], at: usize) -> f32 {
    f16::from_le_bytes([bytes[at], bytes[at + 1]]).to_f32()
}

fn q8_0(values: &[f32]) -> Vec<u8> {
    let mut out = Vec::new();
    quantize_q8_0(values, &mut out);
    out
}

fn q5_1(values: &[f32]) -> Vec<u8> {
    let mut out = Vec::new();
    quantize_q5_1(values, &mut out);
    out
}

/// Deterministic, varied test data: a sine at `scale`, shifted by `offset`.
fn wave(n: usize, scale: f32, offset: f32) -> Vec<f32> {
    (0..n)
        .map(|i| ((i as f32) * 0.37).sin() * scale + offset)
        .collect()
}

// ------------------------------------------------------------------ q8_0

#[test]
fn q8_0_block_layout_and_round_trip() {
    let mut values = wave(32, 1.5, 0.0);
    values.extend(wave(32, 0.01, 0.0));
    let bytes = q8_0(&values);
    assert_eq!(bytes.len(), 2 * Q8_0_BLOCK_BYTES);
    // The element with the largest magnitude maps to +-127.
    let first = &bytes[..Q8_0_BLOCK_BYTES];
    assert!(
        first[2..]
            .iter()
            .any(|&q| q as i8 == 127 || q as i8 == -127)
    );
    let amax = values[..32].iter().fold(0.0f32, |m, v| m.max(v.abs()));
    assert!((f16_at(first, 0) - amax / 127.0).abs() <= amax / 127.0 * 1e-3);
    let back = dequantize_q8_0(&bytes);
    for (i, (a, b)) in values.iter().zip(&back).enumerate() {
        let block = &values[i / 32 * 32..i / 32 * 32 + 32];
        let bmax = block.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        assert!(
            (a - b).abs() <= bmax / 127.0 * 0.5 + bmax * 1e-3,
            "{a} vs {b}"
        );
    }
}

#[test]
fn q8_0_exact_cases() {
    // All zeros: scale 0, quants 0.
    assert_eq!(q8_0(&[0.0; 32]), vec![0u8; Q8_0_BLOCK_BYTES]);
    // 127 * k values round-trip exactly when d = 1.
    let values: Vec<f32> = (0..32)
        .map(|i| (i as f32 * 8.0 - 127.0).clamp(-127.0, 127.0))
        .collect();
    let bytes = q8_0(&values);
    assert_eq!(f16_at(&bytes, 0), 1.0);
    assert_eq!(dequantize_q8_0(&bytes), values);
    // Halves round away from zero, as C's roundf.
    let mut v = [0.0f32; 32];
    v[0] = 127.0;
    v[1] = 2.5;
    v[2] = -2.5;
    let bytes = q8_0(&v);
    assert_eq!((bytes[3] as i8, bytes[4] as i8), (3, -3));
    // A trailing partial block is not written.
    assert_eq!(q8_0(&[1.0; 40]).len(), Q8_0_BLOCK_BYTES);
}

// ------------------------------------------------------------------ q5_1

#[test]
fn q5_1_block_layout() {
    // 0..=31: m = 0, d = 1, quant j = j.
    let values: Vec<f32> = (0..32).map(|j| j as f32).collect();
    let bytes = q5_1(&values);
    assert_eq!(bytes.len(), Q5_1_BLOCK_BYTES);
    assert_eq!(Q5_1_BLOCK_BYTES, 24);
    assert_eq!(&bytes[0..2], &f16::from_f32(1.0).to_le_bytes());
    assert_eq!(&bytes[2..4], &[0, 0]);
    // The fifth bit is set for quants 16..=31: values 16..=31, bits 16..=31.
    assert_eq!(&bytes[4..8], &0xffff_0000u32.to_le_bytes());
    // Byte j: value j in the low nibble, value j + 16 (same low bits) in the high one.
    let nibbles: Vec<u8> = (0..16).map(|j| j | (j << 4)).collect();
    assert_eq!(&bytes[8..], &nibbles[..]);
    assert_eq!(dequantize_q5_1(&bytes), values);
}

#[test]
fn q5_1_exact_cases() {
    // All zeros: everything 0.
    assert_eq!(q5_1(&[0.0; 32]), vec![0u8; Q5_1_BLOCK_BYTES]);
    // A constant block: d = 0, m = the value, quants 0; it comes back exactly.
    let bytes = q5_1(&[-5.0; 32]);
    assert_eq!((f16_at(&bytes, 0), f16_at(&bytes, 2)), (0.0, -5.0));
    assert_eq!(&bytes[4..], &[0u8; 20]);
    assert_eq!(dequantize_q5_1(&bytes), vec![-5.0; 32]);
    // Values on the grid m + k/4 (reversed, so the minimum is last) come back exactly.
    let values: Vec<f32> = (0..32).rev().map(|k| -8.0 + k as f32 * 0.25).collect();
    let bytes = q5_1(&values);
    assert_eq!((f16_at(&bytes, 0), f16_at(&bytes, 2)), (0.25, -8.0));
    assert_eq!(dequantize_q5_1(&bytes), values);
    // Halves round up (not to even): with d = 1, 2.5 -> 3 and 4.5 -> 5.
    let mut v = [0.0f32; 32];
    v[31] = 31.0;
    v[1] = 2.5;
    v[17] = 4.5;
    let back = dequantize_q5_1(&q5_1(&v));
    assert_eq!((back[1], back[17], back[31]), (3.0, 5.0, 31.0));
    // A trailing partial block is not written.
    assert_eq!(q5_1(&[1.0; 63]).len(), Q5_1_BLOCK_BYTES);
}

/// What `dequantize_row_q5_1` gives back is within half a step of the input, plus the f16
/// rounding of d (up to 31 steps) and of m.
fn q5_1_bound(block: &[f32]) -> f32 {
    let min = block.iter().fold(f32::MAX, |m, &v| m.min(v));
    let max = block.iter().fold(-f32::MAX, |m, &v| m.max(v));
    let d = (max - min) / 31.0;
    0.5 * d + (31.0 * d + min.abs()) / 2048.0 + (max.abs() + min.abs()) * 1e-6
}

#[test]
fn q5_1_round_trip_stays_within_half_a_step() {
    let mut values = wave(32, 1.5, 0.0);
    values.extend(wave(32, 0.01, 0.3));
    values.extend(wave(32, 40.0, -7.0));
    let back = dequantize_q5_1(&q5_1(&values));
    assert_eq!(back.len(), values.len());
    let mut worst_step_fraction = 0.0f32;
    for (block, got) in values.chunks(32).zip(back.chunks(32)) {
        let bound = q5_1_bound(block);
        let step = (block.iter().fold(f32::MIN, |m, &v| m.max(v))
            - block.iter().fold(f32::MAX, |m, &v| m.min(v)))
            / 31.0;
        for (a, b) in block.iter().zip(got) {
            assert!((a - b).abs() <= bound, "{a} vs {b} (bound {bound})");
            worst_step_fraction = worst_step_fraction.max((a - b).abs() / step);
        }
    }
    // Five bits are coarser than eight: the error is a visible part of a step.
    assert!(worst_step_fraction > 0.1, "{worst_step_fraction}");
}

proptest! {
    #[test]
    fn q5_1_round_trip_bound_holds_for_any_block(
        block in proptest::collection::vec(-1000.0f32..1000.0, 32),
        scale in prop_oneof![Just(1e-4f32), Just(1.0f32), Just(30.0f32)],
    ) {
        let block: Vec<f32> = block.iter().map(|v| v * scale).collect();
        let back = dequantize_q5_1(&q5_1(&block));
        let bound = q5_1_bound(&block);
        for (a, b) in block.iter().zip(&back) {
            prop_assert!((a - b).abs() <= bound, "{} vs {} (bound {})", a, b, bound);
        }
    }
}

/// Against the ggml that whisper.cpp is built with: the same bytes as `ggml_quantize_chunk`
/// (what whisper.cpp's quantizer calls), and the same values back as ggml's `to_float`.
mod against_ggml {
    use proptest::prelude::*;
    use whisper_rs::whisper_rs_sys as sys;

    use super::super::*;

    fn ggml_quantize(ty: sys::ggml_type, block_bytes: usize, values: &[f32]) -> Vec<u8> {
        assert_eq!(
            values.len() % BLOCK_VALUES,
            0,
            "ggml aborts on partial blocks"
        );
        let mut out = vec![0u8; values.len() / BLOCK_VALUES * block_bytes];
        // SAFETY: one row of whole blocks; `out` holds exactly its quantized size, which
        // ggml returns and is checked.
        let written = unsafe {
            sys::ggml_quantize_chunk(
                ty,
                values.as_ptr(),
                out.as_mut_ptr().cast(),
                0,
                1,
                values.len() as i64,
                std::ptr::null(),
            )
        };
        assert_eq!(written, out.len());
        out
    }

    fn ggml_dequantize(ty: sys::ggml_type, bytes: &[u8], n: usize) -> Vec<f32> {
        let mut out = vec![0f32; n];
        // SAFETY: ggml's traits table is static; `bytes` holds n / 32 blocks of this type.
        unsafe {
            let to_float = (*sys::ggml_get_type_traits(ty)).to_float.expect("to_float");
            to_float(bytes.as_ptr().cast(), out.as_mut_ptr(), n as i64);
        }
        out
    }

    fn agree(values: &[f32]) -> Result<(), TestCaseError> {
        let mut ours = Vec::new();
        quantize_q8_0(values, &mut ours);
        prop_assert_eq!(
            &ours,
            &ggml_quantize(sys::ggml_type_GGML_TYPE_Q8_0, Q8_0_BLOCK_BYTES, values)
        );
        prop_assert_eq!(
            dequantize_q8_0(&ours),
            ggml_dequantize(sys::ggml_type_GGML_TYPE_Q8_0, &ours, values.len())
        );
        let mut ours = Vec::new();
        quantize_q5_1(values, &mut ours);
        prop_assert_eq!(
            &ours,
            &ggml_quantize(sys::ggml_type_GGML_TYPE_Q5_1, Q5_1_BLOCK_BYTES, values)
        );
        prop_assert_eq!(
            dequantize_q5_1(&ours),
            ggml_dequantize(sys::ggml_type_GGML_TYPE_Q5_1, &ours, values.len())
        );
        Ok(())
    }

    #[test]
    fn edge_blocks_encode_as_ggml_does() {
        let mut row = vec![0.0f32; 32];
        row.extend([3.25f32; 32]);
        row.extend((0..32).map(|j| j as f32));
        row.extend((0..32).map(|j| if j == 7 { 1e4 } else { 1e-3 * j as f32 }));
        row.extend((0..32).map(|j| -(j as f32) - 0.5));
        row.extend((0..32).map(|j| if j % 2 == 0 { 2.5 } else { -0.5 }));
        row.extend((0..32).map(|j| 6e4 * ((j as f32) * 0.1).sin()));
        row.extend((0..32).map(|j| 1e-6 * j as f32));
        agree(&row).unwrap();
    }

    proptest! {
        #[test]
        fn any_row_encodes_as_ggml_does(
            blocks in proptest::collection::vec(proptest::collection::vec(-1.0f32..1.0, 32), 1..8),
            scale in prop_oneof![Just(1e-3f32), Just(0.05f32), Just(1.0f32), Just(500.0f32)],
            offset in -2.0f32..2.0,
        ) {
            let row: Vec<f32> = blocks.concat().iter().map(|v| v * scale + offset * scale).collect();
            agree(&row)?;
        }
    }
}
