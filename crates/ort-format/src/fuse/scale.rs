//! Attention scores scaled on the queries alone. moonshine-base scales both sides of each
//! attention product by the root of `1 / sqrt(head)`: `MatMul(Mul(q, a), Mul(k, b))`. ONNX
//! Runtime folds such one-element factors into the product's `alpha`, and its kernel for one
//! query row (a decoder step's) takes only `alpha = 1`, so every cached step scored its
//! cross-attention through the general kernel at about twice the time. Here the product becomes
//! `MatMul(Mul(q, Expand(Mul(a, b), [head])), k)`: the same scores, with the factor on the
//! query as a vector of the head's width, which is not folded into `alpha`.

use super::super::ir::*;
use super::super::schema::INT64;
use super::Added;
use super::view::{View, arg, both_orders};
use std::borrow::Cow;

/// How deep [`one_element`] follows a factor back (a damaged graph may loop).
const DEPTH: usize = 8;

/// `MatMul(Mul(q, a), Mul(k, b))`, `a` and `b` of one element each and `q` split into heads
/// (`Transpose(Reshape(.., [_, _, heads, head]), [0, 2, 1, 3])`), as the nodes that compute it
/// with the factor on the query alone; the last makes the product's output.
pub(super) fn attention_scale<'a>(
    v: &View<'_, '_, 'a>,
    matmul: &Node<'a>,
    added: &mut Added<'a>,
) -> Option<Vec<Node<'a>>> {
    if &*matmul.op != b"MatMul" || !matmul.domain.is_empty() || matmul.outputs.len() != 1 {
        return None;
    }
    let [scaled_query, scaled_key] = matmul.inputs.as_slice() else {
        return None;
    };
    let (query, a) = one_element_factor(v, scaled_query)?;
    let (key, b) = one_element_factor(v, scaled_key)?;
    let (_, head) = v.heads_of(query)?;
    let made = |suffix: &str| -> Name<'a> {
        let mut name = matmul.outputs[0].to_vec();
        name.extend_from_slice(suffix.as_bytes());
        Cow::Owned(name)
    };
    let (scale, widened, scaled) = (
        made(".verbatim_scale"),
        made(".verbatim_scale_by_channel"),
        made(".verbatim_scaled_query"),
    );
    let width = added.width_shape(head);
    Some(vec![
        node(
            scale.clone(),
            "Mul",
            "",
            vec![a.clone(), b.clone()],
            scale.clone(),
            vec![],
        ),
        node(
            widened.clone(),
            "Expand",
            "",
            vec![scale, width],
            widened.clone(),
            vec![],
        ),
        node(
            scaled.clone(),
            "Mul",
            "",
            vec![query.clone(), widened],
            scaled.clone(),
            vec![],
        ),
        node(
            matmul.name.clone(),
            "MatMul",
            "",
            vec![scaled, key.clone()],
            matmul.outputs[0].clone(),
            vec![],
        ),
    ])
}

/// `(x, s)` of `value = Mul(x, s)` (either order) with `s` of one element.
fn one_element_factor<'g, 'a>(
    v: &View<'_, 'g, 'a>,
    value: &[u8],
) -> Option<(&'g Name<'a>, &'g Name<'a>)> {
    let mul = v.made_by(value, "Mul")?;
    both_orders(mul)
        .into_iter()
        .find(|(_, factor)| one_element(v, factor, DEPTH))
}

/// Whether `value` holds exactly one element, in at most one dimension: a one-element
/// initializer, one element sliced or gathered from a `Shape`, or elementwise arithmetic on such
/// values (followed at most `depth` nodes back).
fn one_element(v: &View, value: &[u8], depth: usize) -> bool {
    if let Some(known) = v.known(value) {
        return known.dims.len() <= 1 && known.dims.iter().all(|&d| d == 1);
    }
    if depth == 0 {
        return false;
    }
    let unary = ["Sqrt", "Cast", "Neg", "Reciprocal"];
    let binary = ["Mul", "Div", "Add", "Sub"];
    if let Some(n) = unary.iter().find_map(|op| v.made_by(value, op)) {
        return n.inputs.len() == 1 && one_element(v, &n.inputs[0], depth - 1);
    }
    if let Some(n) = binary.iter().find_map(|op| v.made_by(value, op)) {
        return n.inputs.len() == 2 && n.inputs.iter().all(|i| one_element(v, i, depth - 1));
    }
    if let Some(slice) = v.made_by(value, "Slice") {
        return one_dimension_picked(v, slice);
    }
    if let Some(gather) = v.made_by(value, "Gather") {
        let index_is_scalar = arg(gather, 1)
            .and_then(|i| v.known(i))
            .is_some_and(|k| k.dims.is_empty());
        return index_is_scalar && arg(gather, 0).is_some_and(|s| is_shape(v, s));
    }
    false
}

/// Whether `slice` takes one dimension out of a `Shape`: `[-1:]` (to the end) or `[i:i + 1]`,
/// on axis 0 with step 1.
fn one_dimension_picked(v: &View, slice: &Node) -> bool {
    let one = |i: usize| -> Option<f64> { v.scalar(slice.inputs.get(i)?) };
    let check = || -> Option<bool> {
        let of_shape = is_shape(v, arg(slice, 0)?);
        let (start, end) = (one(1)?, one(2)?);
        let axis_zero = slice.inputs.len() < 4 || one(3)? == 0.0;
        let step_one = slice.inputs.len() < 5 || one(4)? == 1.0;
        let picks_one =
            (start == -1.0 && end >= f64::from(i32::MAX)) || (start >= 0.0 && end == start + 1.0);
        Some(of_shape && axis_zero && step_one && picks_one)
    };
    check().unwrap_or(false)
}

/// Whether `value` is the `Shape` of a value (a rank-one tensor of integers).
fn is_shape(v: &View, value: &[u8]) -> bool {
    v.made_by(value, "Shape")
        .is_some_and(|n| n.inputs.len() == 1)
}

impl<'a> Added<'a> {
    /// The int64 shape `[width]`, an initializer of the main graph.
    fn width_shape(&mut self, width: i64) -> Name<'a> {
        if let Some(name) = self.by_width.get(&width) {
            return name.clone();
        }
        let name = owned(&format!("verbatim.width.{width}"));
        self.tensors.push(Tensor {
            name: name.clone(),
            data_type: INT64,
            dims: vec![1],
            raw: Cow::Owned(width.to_le_bytes().to_vec()),
            strings: Vec::new(),
        });
        self.by_width.insert(width, name.clone());
        name
    }
}
