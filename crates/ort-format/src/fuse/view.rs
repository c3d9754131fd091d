//! What the matchers see of a graph: the node that makes each value, the initializers in scope
//! (with the values of small ones), and helpers to read nodes and make new ones.

use super::super::ir::*;
use super::super::schema::{FLOAT, INT64};
use std::borrow::Cow;
use std::collections::HashMap;

/// An initializer as the matchers see it: its dims, and its values when it is small.
pub(super) struct Known {
    pub(super) dims: Vec<i64>,
    pub(super) values: Option<Vec<f64>>,
}

/// Initializers with at most this many elements have their values read.
const SMALL: usize = 256;

pub(super) type Scope = HashMap<Vec<u8>, Known>;

pub(super) fn known(t: &Tensor) -> (Vec<u8>, Known) {
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
pub(super) struct View<'v, 'g, 'a> {
    pub(super) producer: HashMap<&'g [u8], &'g Node<'a>>,
    pub(super) scopes: &'v [&'v Scope],
}

impl<'g, 'a> View<'_, 'g, 'a> {
    /// The `op` node (default domain, one output) that makes `value`.
    pub(super) fn made_by(&self, value: &[u8], op: &str) -> Option<&'g Node<'a>> {
        self.producer
            .get(value)
            .copied()
            .filter(|n| &*n.op == op.as_bytes())
    }

    pub(super) fn known(&self, value: &[u8]) -> Option<&Known> {
        self.scopes.iter().rev().find_map(|s| s.get(value))
    }

    pub(super) fn values(&self, value: &[u8]) -> Option<&[f64]> {
        self.known(value)?.values.as_deref()
    }

    /// The single value of a one-element initializer.
    pub(super) fn scalar(&self, value: &[u8]) -> Option<f64> {
        match self.values(value)? {
            [v] => Some(*v),
            _ => None,
        }
    }

    /// The input of an `Unsqueeze` by exactly `axes` (an input from opset 13, an attribute
    /// before).
    pub(super) fn unsqueezed(&self, value: &[u8], axes: &[i64]) -> Option<&'g Name<'a>> {
        let n = self.made_by(value, "Unsqueeze")?;
        let given: Vec<i64> = match n.inputs.as_slice() {
            [_, a] => self.values(a)?.iter().map(|&v| v as i64).collect(),
            [_] => ints(n, "axes")?.to_vec(),
            _ => return None,
        };
        (given == axes).then_some(&n.inputs[0])
    }

    /// `(data, start, end, step)` of a `Slice` of the last axis of a four-dimensional value.
    pub(super) fn last_axis_slice(&self, value: &[u8]) -> Option<(&'g Name<'a>, i64, i64, i64)> {
        let n = self.made_by(value, "Slice")?;
        let one = |i: usize| -> Option<i64> { Some(self.scalar(n.inputs.get(i)?)? as i64) };
        let axis = one(3)?;
        let step = if n.inputs.len() > 4 { one(4)? } else { 1 };
        matches!(axis, -1 | 3).then_some((&n.inputs[0], one(1)?, one(2)?, step))
    }

    /// Whether `shape` is `Concat(Slice(Shape(of), 0, -2), [-1])`: the shape that joins the
    /// last two axes of `of`.
    pub(super) fn joins_last_two_axes(&self, shape: &[u8], of: &[u8]) -> bool {
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

    /// The heads and the channels of a head of `x = Transpose(Reshape(.., shape), [0, 2, 1, 3])`,
    /// the shape `[_, _, heads, head]` as a constant or a `Concat`: a value split into heads.
    pub(super) fn heads_of(&self, x: &[u8]) -> Option<(i64, i64)> {
        let transpose = self.made_by(x, "Transpose")?;
        let reshape = self.made_by(arg(transpose, 0)?, "Reshape")?;
        let shape = reshape.inputs.get(1)?;
        let (heads, head) = match self.values(shape) {
            Some(&[_, _, heads, head]) => (heads as i64, head as i64),
            _ => {
                let [_, _, heads, head] = self.made_by(shape, "Concat")?.inputs.as_slice() else {
                    return None;
                };
                (self.scalar(heads)? as i64, self.scalar(head)? as i64)
            }
        };
        (ints(transpose, "perm") == Some(&[0, 2, 1, 3][..]) && heads > 0 && head > 0)
            .then_some((heads, head))
    }
}

/// Input `i` of `n` (a damaged graph may give a node fewer inputs than its operator takes).
pub(super) fn arg<'n, 'a>(n: &'n Node<'a>, i: usize) -> Option<&'n Name<'a>> {
    n.inputs.get(i)
}

pub(super) fn int(n: &Node, name: &str) -> Option<i64> {
    n.attributes.iter().find_map(|a| match &a.value {
        Value::Int(i) if &*a.name == name.as_bytes() => Some(*i),
        _ => None,
    })
}

pub(super) fn ints<'n>(n: &'n Node, name: &str) -> Option<&'n [i64]> {
    n.attributes.iter().find_map(|a| match &a.value {
        Value::Ints(i) if &*a.name == name.as_bytes() => Some(i.as_slice()),
        _ => None,
    })
}

/// The two inputs of a two-input node, in both orders.
pub(super) fn both_orders<'n, 'a>(n: &'n Node<'a>) -> Vec<(&'n Name<'a>, &'n Name<'a>)> {
    match n.inputs.as_slice() {
        [a, b] => vec![(a, b), (b, a)],
        _ => Vec::new(),
    }
}

pub(super) fn renamed<'a>(n: &Node<'a>, suffix: &str) -> Name<'a> {
    let mut name = n.name.to_vec();
    name.extend_from_slice(suffix.as_bytes());
    Cow::Owned(name)
}
