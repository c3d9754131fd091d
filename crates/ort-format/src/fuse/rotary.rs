//! Interleaved rotary position embeddings as one `com.microsoft.RotaryEmbedding`, with the
//! cosine and sine tables it reads computed from the graph's own frequencies.

use super::super::ir::*;
use super::super::schema::FLOAT;
use super::Added;
use super::view::{View, arg, both_orders, int, ints, renamed};
use std::borrow::Cow;

/// Positions the rotary tables cover. A chunk (at most 30 s) is about 1,250 encoder frames and
/// at most 370 decoder tokens; ONNX Runtime does not check positions against the table, so the
/// engine refuses longer input ([`super::super::model`]).
pub const ROTARY_POSITIONS: usize = 4096;

impl<'a> Added<'a> {
    /// The cosine and sine tables for a frequency initializer (made once per initializer).
    fn rotary_tables(&mut self, name: &[u8], frequencies: &[f64]) -> (Name<'a>, Name<'a>) {
        if let Some(names) = self.by_frequencies.get(name) {
            return names.clone();
        }
        let index = self.by_frequencies.len();
        let mut table = |kind: &str, f: fn(f32) -> f32| -> Name<'a> {
            let name = owned(&format!("verbatim.rotary_{kind}.{index}"));
            let mut raw = Vec::with_capacity(ROTARY_POSITIONS * frequencies.len() * 4);
            for position in 0..ROTARY_POSITIONS {
                for &frequency in frequencies {
                    // As the graph computes it: the position times the frequency in float32.
                    let angle = position as f32 * frequency as f32;
                    raw.extend_from_slice(&f(angle).to_le_bytes());
                }
            }
            self.tensors.push(Tensor {
                name: name.clone(),
                data_type: FLOAT,
                dims: vec![ROTARY_POSITIONS as i64, frequencies.len() as i64],
                raw: Cow::Owned(raw),
                strings: Vec::new(),
            });
            name
        };
        let names = (table("cos", f32::cos), table("sin", f32::sin));
        self.by_frequencies.insert(name.to_vec(), names.clone());
        names
    }
}

/// `Concat(x[..r] * cos + rotate_half(x[..r]) * sin, x[r..])` on the last axis of a
/// `(batch, heads, sequence, head)` value, with interleaved pairs and the cosine and sine of
/// `Range(start, ..)` times the frequencies, as `com.microsoft.RotaryEmbedding`.
pub(super) fn rotary<'a>(
    v: &View<'_, '_, 'a>,
    concat: &Node<'a>,
    added: &mut Added<'a>,
) -> Option<Node<'a>> {
    if &*concat.op != b"Concat" || !concat.domain.is_empty() || concat.outputs.len() != 1 {
        return None;
    }
    if !matches!(int(concat, "axis"), Some(-1 | 3)) {
        return None;
    }
    let [rotated, kept] = concat.inputs.as_slice() else {
        return None;
    };
    let (x, dims, kept_end, 1) = v.last_axis_slice(kept)? else {
        return None;
    };
    let add = v.made_by(rotated, "Add")?;
    let (by_cos, by_sin) = both_orders(add)
        .into_iter()
        .find_map(|(a, b)| Some((v.made_by(a, "Mul")?, v.made_by(b, "Mul")?)))?;
    // Each product is (channels, Unsqueeze(Cos or Sin(angles), [1])).
    let factor = |product: &Node<'a>, op: &str| {
        both_orders(product)
            .into_iter()
            .find_map(|(channels, table)| {
                let wave = v.made_by(v.unsqueezed(table, &[1])?, op)?;
                Some((channels.clone(), arg(wave, 0)?.clone()))
            })
    };
    let (channels, angles) = factor(by_cos, "Cos")?;
    let (turned, sin_angles) = factor(by_sin, "Sin")?;
    let reaches_end = |end: i64| end >= dims;
    let (of_x, 0, end, 1) = v.last_axis_slice(&channels)? else {
        return None;
    };
    // rotate_half, interleaved: (-x1, x0, -x3, x2, ...) from the odd and even channels.
    let reshape = v.made_by(&turned, "Reshape")?;
    let [pairs_value, pairs_shape] = reshape.inputs.as_slice() else {
        return None;
    };
    let pairs = v.made_by(pairs_value, "Concat")?;
    let [negated, even] = pairs.inputs.as_slice() else {
        return None;
    };
    let odd = v.made_by(v.unsqueezed(negated, &[-1])?, "Neg")?;
    let (odd_of, 1, odd_end, 2) = v.last_axis_slice(arg(odd, 0)?)? else {
        return None;
    };
    let (even_of, 0, even_end, 2) = v.last_axis_slice(v.unsqueezed(even, &[-1])?)? else {
        return None;
    };
    let (start, frequencies_name, frequencies) = positions(v, &angles)?;
    let (heads, head) = v.heads_of(x)?;
    let matches = of_x == x
        && end == dims
        && dims > 0
        && dims % 2 == 0
        && head >= dims
        && kept_end >= head
        && angles == sin_angles
        && *odd_of == channels
        && *even_of == channels
        && reaches_end(odd_end)
        && reaches_end(even_end)
        && matches!(int(pairs, "axis"), Some(-1 | 4))
        && v.joins_last_two_axes(pairs_shape, pairs_value)
        && frequencies.len() as i64 * 2 == dims;
    if !matches {
        return None;
    }
    let (cos, sin) = added.rotary_tables(&frequencies_name, &frequencies);
    Some(node(
        renamed(concat, ".verbatim_rotary"),
        "RotaryEmbedding",
        "com.microsoft",
        vec![x.clone(), start, cos, sin],
        concat.outputs[0].clone(),
        vec![
            ("interleaved", Value::Int(1)),
            ("num_heads", Value::Int(heads)),
            ("rotary_embedding_dim", Value::Int(dims)),
        ],
    ))
}

/// For rotary `angles` computed as
/// `Reshape(Concat(u, u), ..)`, `u = Unsqueeze(Transpose(MatMul(frequencies, Cast(p))), -1)`
/// (the two `u` may be two nodes) with `p` a `Range(start, .., 1)` unsqueezed, the `Reshape`
/// joining the last two axes (or to `[1, -1, 2 * frequencies]`, one clip, as the encoder has it):
/// the start, and the frequencies' name and values.
fn positions<'a>(v: &View<'_, '_, 'a>, angles: &[u8]) -> Option<(Name<'a>, Vec<u8>, Vec<f64>)> {
    let reshape = v.made_by(angles, "Reshape")?;
    let [doubled_value, doubled_shape] = reshape.inputs.as_slice() else {
        return None;
    };
    let doubled = v.made_by(doubled_value, "Concat")?;
    let [a, b] = doubled.inputs.as_slice() else {
        return None;
    };
    let turned = v.unsqueezed(a, &[-1])?;
    let transpose = v.made_by(turned, "Transpose")?;
    let product = v.made_by(arg(transpose, 0)?, "MatMul")?;
    let [frequencies, cast] = product.inputs.as_slice() else {
        return None;
    };
    let known = v.known(frequencies)?;
    let values = known.values.clone()?;
    let cast = v.made_by(cast, "Cast")?;
    // The positions, through a few Unsqueezes (a bounded walk: a damaged graph may loop).
    let mut value = arg(cast, 0)?;
    let mut range = None;
    for _ in 0..8 {
        if let Some(found) = v.made_by(value, "Range") {
            range = Some(found);
            break;
        }
        let unsqueeze = v.made_by(value, "Unsqueeze")?;
        let has_axes = unsqueeze.inputs.len() == 2 || ints(unsqueeze, "axes").is_some();
        value = arg(unsqueeze, 0).filter(|_| has_axes)?;
    }
    let range = range?;
    let [start, _, step] = range.inputs.as_slice() else {
        return None;
    };
    let matches = v.unsqueezed(b, &[-1]) == Some(turned)
        && matches!(int(doubled, "axis"), Some(-1 | 3))
        && ints(transpose, "perm") == Some(&[0, 2, 1][..])
        && int(cast, "to") == Some(FLOAT as i64)
        && known.dims.len() == 3
        && known.dims[0] == 1
        && known.dims[2] == 1
        && known.dims[1] as usize == values.len()
        && v.scalar(step) == Some(1.0)
        && (v.joins_last_two_axes(doubled_shape, doubled_value)
            || v.values(doubled_shape) == Some(&[1.0, -1.0, values.len() as f64 * 2.0]));
    matches.then(|| (start.clone(), frequencies.to_vec(), values))
}
