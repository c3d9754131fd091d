//! Fuses what ONNX Runtime's optimisers leave as dozens of small operations in moonshine-base's
//! graphs, so that a decoder step runs about a third fewer of them:
//! - each mean-centred norm (`ReduceMean`, `Sub`, `Pow`, `ReduceMean`, `Add`, `Sqrt`, `Div`,
//!   `Mul` by the weight) becomes one `LayerNormalization` (ONNX Runtime fuses only its second
//!   half);
//! - each interleaved rotary position embedding on the first channels of a head (slices of the
//!   rotated and the kept channels, of the even and the odd ones, `Neg`, `Unsqueeze`, `Concat`,
//!   `Reshape`, products with the cosine and sine of the positions, `Add`, `Concat`) becomes one
//!   `com.microsoft.RotaryEmbedding` that reads cosine and sine tables computed here from the
//!   graph's own frequencies.
//!
//! Matching is by structure and constants only: a pattern that differs in any detail is left as
//! it is. Nodes that nothing reads any more go afterwards.

use super::ir::*;
use super::schema::{FLOAT, INT64};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

/// Positions the rotary tables cover. A chunk (at most 30 s) is about 1,250 encoder frames and
/// at most 370 decoder tokens; ONNX Runtime does not check positions against the table, so the
/// engine refuses longer input ([`super::super::model`]).
pub const ROTARY_POSITIONS: usize = 4096;

/// What the fusion did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Fused {
    pub layer_norms: usize,
    pub rotary_embeddings: usize,
}

/// An initializer as the matchers see it: its dims, and its values when it is small.
struct Known {
    dims: Vec<i64>,
    values: Option<Vec<f64>>,
}

/// Initializers with at most this many elements have their values read.
const SMALL: usize = 256;

type Scope = HashMap<Vec<u8>, Known>;

pub fn fuse(model: &mut Model) -> Fused {
    let mut fused = Fused::default();
    let mut tables = Tables::default();
    fuse_graph(&mut model.graph, &[], &mut tables, &mut fused);
    model.graph.initializers.append(&mut tables.tensors);
    if fused.layer_norms > 0 {
        // LayerNormalization is in the default domain from opset 17; the operators these
        // graphs use mean the same from 14 to 17.
        for (domain, version) in &mut model.opsets {
            if (domain.is_empty() || &**domain == b"ai.onnx") && *version < 17 {
                *version = 17;
            }
        }
    }
    if fused != Fused::default() {
        prune(&mut model.graph);
    }
    fused
}

fn fuse_graph<'a>(g: &mut Graph<'a>, outer: &[&Scope], tables: &mut Tables<'a>, fused: &mut Fused) {
    let local: Scope = g.initializers.iter().map(known).collect();
    let mut scopes = outer.to_vec();
    scopes.push(&local);
    let replacements: Vec<(usize, Node<'a>)> = {
        let view = View {
            producer: g
                .nodes
                .iter()
                .filter(|n| n.outputs.len() == 1 && n.domain.is_empty())
                .map(|n| (&*n.outputs[0], n))
                .collect(),
            scopes: &scopes,
        };
        g.nodes
            .iter()
            .enumerate()
            .filter_map(|(i, n)| {
                if let Some(norm) = layer_norm(&view, n) {
                    fused.layer_norms += 1;
                    Some((i, norm))
                } else if let Some(rotary) = rotary(&view, n, tables) {
                    fused.rotary_embeddings += 1;
                    Some((i, rotary))
                } else {
                    None
                }
            })
            .collect()
    };
    for (i, node) in replacements {
        g.nodes[i] = node;
    }
    for n in &mut g.nodes {
        for a in &mut n.attributes {
            if let Value::Graph(sub) = &mut a.value {
                fuse_graph(sub, &scopes, tables, fused);
            }
        }
    }
}

fn known(t: &Tensor) -> (Vec<u8>, Known) {
    let count = t.elements().filter(|&n| n <= SMALL);
    let values = count.and_then(|n| match t.data_type {
        FLOAT if t.raw.len() == n * 4 => Some(
            t.raw
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64)
                .collect(),
        ),
        INT64 if t.raw.len() == n * 8 => Some(
            t.raw
                .chunks_exact(8)
                .map(|b| i64::from_le_bytes(b.try_into().unwrap_or_default()) as f64)
                .collect(),
        ),
        _ => None,
    });
    (
        t.name.to_vec(),
        Known {
            dims: t.dims.clone(),
            values,
        },
    )
}

/// A graph's nodes by the value they make, and the initializers in scope.
struct View<'v, 'g, 'a> {
    producer: HashMap<&'g [u8], &'g Node<'a>>,
    scopes: &'v [&'v Scope],
}

impl<'g, 'a> View<'_, 'g, 'a> {
    /// The `op` node (default domain, one output) that makes `value`.
    fn made_by(&self, value: &[u8], op: &str) -> Option<&'g Node<'a>> {
        self.producer
            .get(value)
            .copied()
            .filter(|n| &*n.op == op.as_bytes())
    }

    fn known(&self, value: &[u8]) -> Option<&Known> {
        self.scopes.iter().rev().find_map(|s| s.get(value))
    }

    fn values(&self, value: &[u8]) -> Option<&[f64]> {
        self.known(value)?.values.as_deref()
    }

    /// The single value of a one-element initializer.
    fn scalar(&self, value: &[u8]) -> Option<f64> {
        match self.values(value)? {
            [v] => Some(*v),
            _ => None,
        }
    }

    /// The input of an `Unsqueeze` by exactly `axes` (an input from opset 13, an attribute
    /// before).
    fn unsqueezed(&self, value: &[u8], axes: &[i64]) -> Option<&'g Name<'a>> {
        let n = self.made_by(value, "Unsqueeze")?;
        let given: Vec<i64> = match n.inputs.as_slice() {
            [_, a] => self.values(a)?.iter().map(|&v| v as i64).collect(),
            [_] => ints(n, "axes")?.to_vec(),
            _ => return None,
        };
        (given == axes).then_some(&n.inputs[0])
    }

    /// `(data, start, end, step)` of a `Slice` of the last axis of a four-dimensional value.
    fn last_axis_slice(&self, value: &[u8]) -> Option<(&'g Name<'a>, i64, i64, i64)> {
        let n = self.made_by(value, "Slice")?;
        let one = |i: usize| -> Option<i64> { Some(self.scalar(n.inputs.get(i)?)? as i64) };
        let axis = one(3)?;
        let step = if n.inputs.len() > 4 { one(4)? } else { 1 };
        matches!(axis, -1 | 3).then_some((&n.inputs[0], one(1)?, one(2)?, step))
    }

    /// Whether `shape` is `Concat(Slice(Shape(of), 0, -2), [-1])`: the shape that joins the
    /// last two axes of `of`.
    fn joins_last_two_axes(&self, shape: &[u8], of: &[u8]) -> bool {
        let check = || -> Option<bool> {
            let concat = self.made_by(shape, "Concat")?;
            let [lead, last] = concat.inputs.as_slice() else {
                return None;
            };
            let slice = self.made_by(lead, "Slice")?;
            let shape_of = self.made_by(arg(slice, 0)?, "Shape")?;
            let shape_of_what = arg(shape_of, 0)?;
            let one = |i: usize| -> Option<i64> { Some(self.scalar(slice.inputs.get(i)?)? as i64) };
            let axis_zero = slice.inputs.len() < 4 || one(3)? == 0;
            let step_one = slice.inputs.len() < 5 || one(4)? == 1;
            Some(
                int(concat, "axis") == Some(0)
                    && **shape_of_what == *of
                    && shape_of.attributes.is_empty()
                    && one(1)? == 0
                    && one(2)? == -2
                    && axis_zero
                    && step_one
                    && self.scalar(last)? == -1.0,
            )
        };
        check().unwrap_or(false)
    }
}

/// Input `i` of `n` (a damaged graph may give a node fewer inputs than its operator takes).
fn arg<'n, 'a>(n: &'n Node<'a>, i: usize) -> Option<&'n Name<'a>> {
    n.inputs.get(i)
}

fn int(n: &Node, name: &str) -> Option<i64> {
    n.attributes.iter().find_map(|a| match &a.value {
        Value::Int(i) if &*a.name == name.as_bytes() => Some(*i),
        _ => None,
    })
}

fn ints<'n>(n: &'n Node, name: &str) -> Option<&'n [i64]> {
    n.attributes.iter().find_map(|a| match &a.value {
        Value::Ints(i) if &*a.name == name.as_bytes() => Some(i.as_slice()),
        _ => None,
    })
}

/// The two inputs of a two-input node, in both orders.
fn both_orders<'n, 'a>(n: &'n Node<'a>) -> Vec<(&'n Name<'a>, &'n Name<'a>)> {
    match n.inputs.as_slice() {
        [a, b] => vec![(a, b), (b, a)],
        _ => Vec::new(),
    }
}

fn owned(s: &str) -> Name<'static> {
    Cow::Owned(s.as_bytes().to_vec())
}

fn node<'a>(
    name: Name<'a>,
    op: &str,
    domain: &str,
    inputs: Vec<Name<'a>>,
    output: Name<'a>,
    attributes: Vec<(&str, Value<'a>)>,
) -> Node<'a> {
    Node {
        name,
        op: owned(op),
        domain: owned(domain),
        inputs,
        outputs: vec![output],
        attributes: attributes
            .into_iter()
            .map(|(name, value)| Attribute {
                name: owned(name),
                value,
            })
            .collect(),
    }
}

fn renamed<'a>(n: &Node<'a>, suffix: &str) -> Name<'a> {
    let mut name = n.name.to_vec();
    name.extend_from_slice(suffix.as_bytes());
    Cow::Owned(name)
}

/// `Mul(Div(x - mean(x), sqrt(mean((x - mean(x))^2) + eps)), weight)`, both means over the last
/// axis, as `LayerNormalization(x, weight)`.
fn layer_norm<'a>(v: &View<'_, '_, 'a>, mul: &Node<'a>) -> Option<Node<'a>> {
    if &*mul.op != b"Mul" || !mul.domain.is_empty() || mul.outputs.len() != 1 {
        return None;
    }
    let means_last_axis = |n: &Node| {
        n.inputs.len() == 1 && ints(n, "axes") == Some(&[-1][..]) && int(n, "keepdims") != Some(0)
    };
    both_orders(mul).into_iter().find_map(|(normed, weight)| {
        let div = v.made_by(normed, "Div")?;
        let [centred, deviation] = div.inputs.as_slice() else {
            return None;
        };
        let sqrt = v.made_by(deviation, "Sqrt")?;
        let add = v.made_by(arg(sqrt, 0)?, "Add")?;
        let (variance, epsilon) = both_orders(add)
            .into_iter()
            .find_map(|(var, eps)| Some((v.made_by(var, "ReduceMean")?, v.scalar(eps)?)))?;
        let pow = v.made_by(arg(variance, 0)?, "Pow")?;
        let sub = v.made_by(centred, "Sub")?;
        let [x, mean] = sub.inputs.as_slice() else {
            return None;
        };
        let mean = v.made_by(mean, "ReduceMean")?;
        let matches = means_last_axis(variance)
            && means_last_axis(mean)
            && pow.inputs.len() == 2
            && pow.inputs[0] == *centred
            && v.scalar(&pow.inputs[1]) == Some(2.0)
            && mean.inputs[0] == *x
            && v.known(weight).is_some_and(|w| w.dims.len() == 1)
            && epsilon > 0.0;
        matches.then(|| {
            node(
                renamed(mul, ".verbatim_layer_norm"),
                "LayerNormalization",
                "",
                vec![x.clone(), weight.clone()],
                mul.outputs[0].clone(),
                vec![
                    ("axis", Value::Int(-1)),
                    ("epsilon", Value::Float(epsilon as f32)),
                ],
            )
        })
    })
}

/// Cosine and sine tables added to the main graph, one pair per frequency initializer.
#[derive(Default)]
struct Tables<'a> {
    tensors: Vec<Tensor<'a>>,
    by_frequencies: HashMap<Vec<u8>, (Name<'a>, Name<'a>)>,
}

impl<'a> Tables<'a> {
    fn for_frequencies(&mut self, name: &[u8], frequencies: &[f64]) -> (Name<'a>, Name<'a>) {
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
fn rotary<'a>(
    v: &View<'_, '_, 'a>,
    concat: &Node<'a>,
    tables: &mut Tables<'a>,
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
    let (heads, head) = heads_of(v, x, dims)?;
    let matches = of_x == x
        && end == dims
        && dims > 0
        && dims % 2 == 0
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
    let (cos, sin) = tables.for_frequencies(&frequencies_name, &frequencies);
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

/// The heads and the channels of a head of `x = Transpose(Reshape(.., shape), [0, 2, 1, 3])`,
/// the shape `[_, _, heads, head]` as a constant or a `Concat`, when the head holds at least
/// `dims` channels.
fn heads_of(v: &View, x: &[u8], dims: i64) -> Option<(i64, i64)> {
    let transpose = v.made_by(x, "Transpose")?;
    let reshape = v.made_by(arg(transpose, 0)?, "Reshape")?;
    let shape = reshape.inputs.get(1)?;
    let (heads, head) = match v.values(shape) {
        Some(&[_, _, heads, head]) => (heads as i64, head as i64),
        _ => {
            let [_, _, heads, head] = v.made_by(shape, "Concat")?.inputs.as_slice() else {
                return None;
            };
            (v.scalar(heads)? as i64, v.scalar(head)? as i64)
        }
    };
    (ints(transpose, "perm") == Some(&[0, 2, 1, 3][..]) && heads > 0 && head >= dims)
        .then_some((heads, head))
}

/// Drops nodes whose outputs nothing reads, in every graph, then initializers nothing reads.
fn prune(main: &mut Graph<'_>) {
    fn drop_unread<'a>(g: &mut Graph<'a>, used: &HashSet<Name<'a>>) -> bool {
        let before = g.nodes.len();
        g.nodes
            .retain(|n| n.outputs.is_empty() || n.outputs.iter().any(|o| used.contains(o)));
        let mut dropped = g.nodes.len() != before;
        for n in &mut g.nodes {
            for a in &mut n.attributes {
                if let Value::Graph(sub) = &mut a.value {
                    dropped |= drop_unread(sub, used);
                }
            }
        }
        dropped
    }
    fn drop_unread_initializers<'a>(g: &mut Graph<'a>, used: &HashSet<Name<'a>>) {
        g.initializers.retain(|t| used.contains(&t.name));
        for n in &mut g.nodes {
            for a in &mut n.attributes {
                if let Value::Graph(sub) = &mut a.value {
                    drop_unread_initializers(sub, used);
                }
            }
        }
    }
    loop {
        let mut used = HashSet::new();
        collect_uses(main, &mut used);
        if !drop_unread(main, &used) {
            drop_unread_initializers(main, &used);
            break;
        }
    }
}
