//! The slice of the ORT flatbuffer schema (onnxruntime/core/flatbuffers/schema/ort.fbs) that folding
//! uses: field slots and enum values, and a parsed view of a graph's nodes, initializers and outputs.

use super::FoldError;
use super::fb::{Reader, Result, Vector};
use std::collections::{HashMap, HashSet};

// Field slots (0-based field ids), per table.
pub const SESSION_MODEL: usize = 1;
pub const MODEL_GRAPH: usize = 7;
pub const GRAPH_INITIALIZERS: usize = 0;
pub const GRAPH_NODE_ARGS: usize = 1;
pub const GRAPH_NODES: usize = 2;
pub const GRAPH_NODE_EDGES: usize = 4;
pub const GRAPH_OUTPUTS: usize = 6;
pub const TENSOR_NAME: usize = 0;
pub const TENSOR_DIMS: usize = 2;
pub const TENSOR_DATA_TYPE: usize = 3;
pub const TENSOR_RAW_DATA: usize = 4;
pub const NODE_DOMAIN: usize = 2;
pub const NODE_INDEX: usize = 4;
pub const NODE_OP_TYPE: usize = 5;
pub const NODE_INPUTS: usize = 8;
pub const NODE_OUTPUTS: usize = 9;
pub const NODE_ATTRIBUTES: usize = 10;
pub const NODE_IMPLICIT_INPUTS: usize = 12;
pub const ATTR_NAME: usize = 0;
pub const ATTR_TYPE: usize = 2;
pub const ATTR_I: usize = 4;
pub const ATTR_G: usize = 7;
pub const ATTR_INTS: usize = 9;
pub const EDGE_NODE: usize = 0;
pub const EDGE_INPUTS: usize = 1;
pub const EDGE_OUTPUTS: usize = 2;
/// EdgeEnd is a struct {node_index: u32, src_arg_index: i32, dst_arg_index: i32}.
pub const EDGE_END_SIZE: usize = 12;
pub const VALUE_INFO_NAME: usize = 0;
pub const VALUE_INFO_TYPE: usize = 2;
pub const TYPE_INFO_VALUE_TYPE: usize = 1;
pub const TYPE_INFO_VALUE: usize = 2;
pub const TENSOR_TYPE_SHAPE: usize = 1;
pub const SHAPE_DIMS: usize = 0;
pub const DIMENSION_VALUE: usize = 0;
pub const DIM_VALUE_TYPE: usize = 0;
pub const DIM_VALUE_VALUE: usize = 1;

// Enum values.
pub const FLOAT: i32 = 1;
pub const INT8: i32 = 3;
pub const ATTR_TYPE_GRAPH: i32 = 5;
pub const TYPE_INFO_TENSOR: u8 = 1;
pub const DIM_TYPE_VALUE: i8 = 1;

/// A value name as stored (bytes, not decoded).
pub type Name<'a> = &'a [u8];

pub struct Node<'a> {
    pub index: u32,
    pub op: Name<'a>,
    pub domain: Name<'a>,
    pub inputs: Vec<Name<'a>>,
    pub outputs: Vec<Name<'a>>,
    pub implicit: Vec<Name<'a>>,
    /// (name, Attribute table); a repeated name keeps its first place and its last table.
    pub attrs: Vec<(Name<'a>, usize)>,
}

impl<'a> Node<'a> {
    pub fn attr(&self, name: &[u8]) -> Option<usize> {
        self.attrs.iter().find(|(n, _)| *n == name).map(|&(_, a)| a)
    }
    /// Explicit then implicit inputs.
    pub fn uses(&self) -> impl Iterator<Item = Name<'a>> + '_ {
        self.inputs.iter().chain(&self.implicit).copied()
    }
}

pub struct Graph<'a> {
    pub table: usize,
    pub nodes: Vec<Node<'a>>,
    /// Initializer name -> Tensor table (a repeated name maps to the last one).
    pub initializers: HashMap<Name<'a>, usize>,
    pub outputs: HashSet<Name<'a>>,
}

pub struct Tensor {
    pub data_type: i32,
    pub dims: Vec<i64>,
    pub raw: Option<Vector>,
}

/// Position of the main Graph table: InferenceSession.model.graph.
pub fn main_graph(r: &Reader) -> Result<usize> {
    let root = r.deref(0)?;
    let model = r
        .table(root, SESSION_MODEL)?
        .ok_or(FoldError::Malformed("no model"))?;
    r.table(model, MODEL_GRAPH)?
        .ok_or(FoldError::Malformed("no graph"))
}

pub fn read_node<'a>(r: &Reader<'a>, t: usize) -> Result<Node<'a>> {
    let mut attrs: Vec<(Name<'a>, usize)> = Vec::new();
    for a in r.tables(t, NODE_ATTRIBUTES)? {
        let name = r.string(a, ATTR_NAME)?.unwrap_or_default();
        match attrs.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = a,
            None => attrs.push((name, a)),
        }
    }
    Ok(Node {
        index: r.field_u32(t, NODE_INDEX, 0)?,
        op: r.string(t, NODE_OP_TYPE)?.unwrap_or_default(),
        domain: r.string(t, NODE_DOMAIN)?.unwrap_or_default(),
        inputs: r.strings(t, NODE_INPUTS)?,
        outputs: r.strings(t, NODE_OUTPUTS)?,
        implicit: r.strings(t, NODE_IMPLICIT_INPUTS)?,
        attrs,
    })
}

pub fn read_graph<'a>(r: &Reader<'a>, g: usize) -> Result<Graph<'a>> {
    let mut initializers = HashMap::new();
    for t in r.tables(g, GRAPH_INITIALIZERS)? {
        if let Some(name) = r.string(t, TENSOR_NAME)? {
            initializers.insert(name, t);
        }
    }
    let nodes = r
        .tables(g, GRAPH_NODES)?
        .into_iter()
        .map(|t| read_node(r, t))
        .collect::<Result<_>>()?;
    let outputs = r.strings(g, GRAPH_OUTPUTS)?.into_iter().collect();
    Ok(Graph {
        table: g,
        nodes,
        initializers,
        outputs,
    })
}

pub fn read_tensor(r: &Reader, t: usize) -> Result<Tensor> {
    Ok(Tensor {
        data_type: r.field_i32(t, TENSOR_DATA_TYPE, 0)?,
        dims: r.i64s(t, TENSOR_DIMS)?.unwrap_or_default(),
        raw: r.vector(t, TENSOR_RAW_DATA, 1)?,
    })
}

/// Subgraphs held by GRAPH attributes of the graph's nodes, in node and attribute order.
pub fn subgraphs(r: &Reader, g: &Graph) -> Result<Vec<usize>> {
    let mut subs = Vec::new();
    for node in &g.nodes {
        for &(_, a) in &node.attrs {
            if r.field_i32(a, ATTR_TYPE, 0)? == ATTR_TYPE_GRAPH {
                subs.extend(r.table(a, ATTR_G)?);
            }
        }
    }
    Ok(subs)
}
