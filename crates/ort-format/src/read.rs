//! Reads an ORT-format file (an `InferenceSession` flatbuffer, file identifier "ORTM") into
//! [`ir`](super::ir): every offset and length is checked, nesting is bounded, and anything the
//! ONNX form cannot carry (sparse or external initializers, non-tensor graph inputs) is refused.

use super::FormatError;
use super::fb::{Reader, Result};
use super::ir::*;
use super::schema::*;
use std::borrow::Cow;
use std::collections::HashMap;

/// Subgraphs deeper than this are refused (an If holds one level; a damaged file could nest
/// far enough to exhaust the stack).
const MAX_DEPTH: usize = 8;

pub fn model(bytes: &[u8]) -> Result<Model<'_>> {
    if bytes.get(4..8) != Some(b"ORTM".as_slice()) {
        return Err(FormatError::NotOrtFormat);
    }
    let r = Reader::new(bytes);
    let session = r.deref(0)?;
    let model = r
        .table(session, SESSION_MODEL)?
        .ok_or(FormatError::Malformed("no model"))?;
    let graph = r
        .table(model, MODEL_GRAPH)?
        .ok_or(FormatError::Malformed("no graph"))?;
    let opsets = r
        .tables(model, MODEL_OPSET_IMPORT)?
        .into_iter()
        .map(|o| {
            Ok((
                name(r.string(o, OPSET_DOMAIN)?),
                r.field_i64(o, OPSET_VERSION, 0)?,
            ))
        })
        .collect::<Result<_>>()?;
    Ok(Model {
        ir_version: r.field_i64(model, MODEL_IR_VERSION, 0)?,
        opsets,
        producer: name(r.string(model, MODEL_PRODUCER_NAME)?),
        graph: read_graph(&r, graph, 0)?,
    })
}

fn name(s: Option<&[u8]>) -> Name<'_> {
    Cow::Borrowed(s.unwrap_or_default())
}

fn read_graph<'a>(r: &Reader<'a>, g: usize, depth: usize) -> Result<Graph<'a>> {
    if depth > MAX_DEPTH {
        return Err(FormatError::Malformed("subgraphs nested too deep"));
    }
    if !r.tables(g, GRAPH_SPARSE_INITIALIZERS)?.is_empty() {
        return Err(FormatError::Unsupported("sparse initializers"));
    }
    let types: HashMap<&[u8], usize> = r
        .tables(g, GRAPH_NODE_ARGS)?
        .into_iter()
        .filter_map(|v| match r.string(v, VALUE_INFO_NAME) {
            Ok(Some(n)) => Some(Ok((n, v))),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        })
        .collect::<Result<_>>()?;
    let initializers: Vec<Tensor> = r
        .tables(g, GRAPH_INITIALIZERS)?
        .into_iter()
        .map(|t| read_tensor(r, t))
        .collect::<Result<_>>()?;
    let mut nodes = r
        .tables(g, GRAPH_NODES)?
        .into_iter()
        .map(|n| Ok((r.field_u32(n, NODE_INDEX, 0)?, read_node(r, n, depth)?)))
        .collect::<Result<Vec<_>>>()?;
    // Node indices follow the order of the ONNX graph the file was made from.
    nodes.sort_by_key(|(index, _)| *index);
    let value = |n: &'a [u8]| -> Result<ValueInfo<'a>> {
        let tensor = match types.get(n) {
            Some(&v) => tensor_type(r, v)?,
            None => None,
        };
        Ok(ValueInfo {
            name: Cow::Borrowed(n),
            tensor,
        })
    };
    let is_initializer = |n: &[u8]| initializers.iter().any(|t| *t.name == *n);
    let inputs = r
        .strings(g, GRAPH_INPUTS)?
        .into_iter()
        .filter(|n| !is_initializer(n))
        .map(value)
        .collect::<Result<_>>()?;
    let outputs = r
        .strings(g, GRAPH_OUTPUTS)?
        .into_iter()
        .map(value)
        .collect::<Result<_>>()?;
    Ok(Graph {
        nodes: nodes.into_iter().map(|(_, n)| n).collect(),
        initializers,
        inputs,
        outputs,
    })
}

fn read_node<'a>(r: &Reader<'a>, n: usize, depth: usize) -> Result<Node<'a>> {
    let attributes = r
        .tables(n, NODE_ATTRIBUTES)?
        .into_iter()
        .map(|a| read_attribute(r, a, depth))
        .collect::<Result<_>>()?;
    let names = |slot| -> Result<Vec<Name<'a>>> {
        Ok(r.strings(n, slot)?.into_iter().map(Cow::Borrowed).collect())
    };
    Ok(Node {
        name: name(r.string(n, NODE_NAME)?),
        op: name(r.string(n, NODE_OP_TYPE)?),
        domain: name(r.string(n, NODE_DOMAIN)?),
        inputs: names(NODE_INPUTS)?,
        outputs: names(NODE_OUTPUTS)?,
        attributes,
    })
}

fn read_attribute<'a>(r: &Reader<'a>, a: usize, depth: usize) -> Result<Attribute<'a>> {
    let value = match r.field_i32(a, ATTR_TYPE, 0)? {
        ATTR_TYPE_FLOAT => Value::Float(r.field_f32(a, ATTR_F, 0.0)?),
        ATTR_TYPE_INT => Value::Int(r.field_i64(a, ATTR_I, 0)?),
        ATTR_TYPE_STRING => Value::Bytes(name(r.string(a, ATTR_S)?)),
        ATTR_TYPE_TENSOR => {
            let t = r
                .table(a, ATTR_T)?
                .ok_or(FormatError::Malformed("tensor attribute without a tensor"))?;
            Value::Tensor(read_tensor(r, t)?)
        }
        ATTR_TYPE_GRAPH => {
            let g = r
                .table(a, ATTR_G)?
                .ok_or(FormatError::Malformed("graph attribute without a graph"))?;
            Value::Graph(read_graph(r, g, depth + 1)?)
        }
        ATTR_TYPE_FLOATS => Value::Floats(r.f32s(a, ATTR_FLOATS)?),
        ATTR_TYPE_INTS => Value::Ints(r.i64s(a, ATTR_INTS)?.unwrap_or_default()),
        ATTR_TYPE_STRINGS => Value::Strings(
            r.strings(a, ATTR_STRINGS)?
                .into_iter()
                .map(Cow::Borrowed)
                .collect(),
        ),
        _ => return Err(FormatError::Unsupported("an attribute of that type")),
    };
    Ok(Attribute {
        name: name(r.string(a, ATTR_NAME)?),
        value,
    })
}

fn read_tensor<'a>(r: &Reader<'a>, t: usize) -> Result<Tensor<'a>> {
    if r.field_i64(t, TENSOR_EXTERNAL_DATA_OFFSET, -1)? >= 0 {
        return Err(FormatError::Unsupported("external initializer data"));
    }
    Ok(Tensor {
        name: name(r.string(t, TENSOR_NAME)?),
        data_type: r.field_i32(t, TENSOR_DATA_TYPE, 0)?,
        dims: r.i64s(t, TENSOR_DIMS)?.unwrap_or_default(),
        raw: Cow::Borrowed(r.raw(t, TENSOR_RAW_DATA)?.unwrap_or_default()),
        strings: r
            .strings(t, TENSOR_STRING_DATA)?
            .into_iter()
            .map(Cow::Borrowed)
            .collect(),
    })
}

/// The tensor type of the ValueInfo table `v`, when it records one.
fn tensor_type<'a>(r: &Reader<'a>, v: usize) -> Result<Option<TensorType<'a>>> {
    let Some(info) = r.table(v, VALUE_INFO_TYPE)? else {
        return Ok(None);
    };
    if r.field_u8(info, TYPE_INFO_VALUE_TYPE, 0)? != TYPE_INFO_TENSOR {
        return Err(FormatError::Unsupported(
            "a graph value that is not a tensor",
        ));
    }
    let Some(tensor) = r.table(info, TYPE_INFO_VALUE)? else {
        return Ok(None);
    };
    let shape = match r.table(tensor, TENSOR_TYPE_SHAPE)? {
        None => None,
        Some(shape) => Some(
            r.tables(shape, SHAPE_DIMS)?
                .into_iter()
                .map(|d| dim(r, d))
                .collect::<Result<_>>()?,
        ),
    };
    Ok(Some(TensorType {
        elem_type: r.field_i32(tensor, TENSOR_TYPE_ELEM_TYPE, 0)?,
        shape,
    }))
}

fn dim<'a>(r: &Reader<'a>, d: usize) -> Result<Dim<'a>> {
    let Some(value) = r.table(d, DIMENSION_VALUE)? else {
        return Ok(Dim::Unknown);
    };
    Ok(match r.field_i8(value, DIM_VALUE_TYPE, 0)? {
        DIM_TYPE_VALUE => Dim::Value(r.field_i64(value, DIM_VALUE_VALUE, 0)?),
        DIM_TYPE_PARAM => Dim::Param(name(r.string(value, DIM_VALUE_PARAM)?)),
        _ => Dim::Unknown,
    })
}
