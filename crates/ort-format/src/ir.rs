//! A model as ONNX describes it, the part an ORT-format file holds: the graph's nodes (with
//! their attributes and subgraphs), initializers, inputs and outputs. Names and tensor data
//! borrow from the file; what a rewrite adds is owned.

use std::borrow::Cow;
use std::collections::HashSet;

/// A value, node or attribute name.
pub type Name<'a> = Cow<'a, [u8]>;

pub struct Model<'a> {
    pub ir_version: i64,
    /// (domain, version) of each operator set the graph uses.
    pub opsets: Vec<(Name<'a>, i64)>,
    pub producer: Name<'a>,
    pub graph: Graph<'a>,
}

#[derive(Default)]
pub struct Graph<'a> {
    /// In the order they run.
    pub nodes: Vec<Node<'a>>,
    pub initializers: Vec<Tensor<'a>>,
    pub inputs: Vec<ValueInfo<'a>>,
    pub outputs: Vec<ValueInfo<'a>>,
}

pub struct Node<'a> {
    pub name: Name<'a>,
    pub op: Name<'a>,
    pub domain: Name<'a>,
    pub inputs: Vec<Name<'a>>,
    pub outputs: Vec<Name<'a>>,
    pub attributes: Vec<Attribute<'a>>,
}

pub struct Attribute<'a> {
    pub name: Name<'a>,
    pub value: Value<'a>,
}

pub enum Value<'a> {
    Float(f32),
    Int(i64),
    Bytes(Name<'a>),
    Tensor(Tensor<'a>),
    Graph(Graph<'a>),
    Floats(Vec<f32>),
    Ints(Vec<i64>),
    Strings(Vec<Name<'a>>),
}

pub struct Tensor<'a> {
    pub name: Name<'a>,
    pub data_type: i32,
    pub dims: Vec<i64>,
    /// Little-endian element bytes (empty for string tensors).
    pub raw: Cow<'a, [u8]>,
    pub strings: Vec<Name<'a>>,
}

impl Tensor<'_> {
    /// Number of elements the dims describe (None when one is negative or it overflows).
    pub fn elements(&self) -> Option<usize> {
        self.dims
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?))
    }
}

/// A graph input or output, with its tensor type when the file records it.
pub struct ValueInfo<'a> {
    pub name: Name<'a>,
    pub tensor: Option<TensorType<'a>>,
}

pub struct TensorType<'a> {
    pub elem_type: i32,
    /// None: the rank is unknown.
    pub shape: Option<Vec<Dim<'a>>>,
}

pub enum Dim<'a> {
    Value(i64),
    Param(Name<'a>),
    Unknown,
}

/// Every name `g` and its subgraphs read: node inputs and graph outputs.
pub fn collect_uses<'a>(g: &Graph<'a>, used: &mut HashSet<Name<'a>>) {
    for n in &g.nodes {
        used.extend(n.inputs.iter().cloned());
        for a in &n.attributes {
            if let Value::Graph(sub) = &a.value {
                collect_uses(sub, used);
            }
        }
    }
    used.extend(g.outputs.iter().map(|o| o.name.clone()));
}

/// A name of its own from `s`.
pub(super) fn owned(s: &str) -> Name<'static> {
    Cow::Owned(s.as_bytes().to_vec())
}

/// A node with one output; attributes by name.
pub(super) fn node<'a>(
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
