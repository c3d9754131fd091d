//! Finds what can be folded in the main graph:
//! - chains `Cast(q: INT8 initializer, to=FLOAT) -> Mul(scale) -> Add(offset)`, where scale and offset
//!   are FLOAT one-element initializers used only there, and each intermediate has one consumer;
//! - `Transpose` nodes of such a folded weight inside the subgraphs of main-graph nodes (If/Loop).
//!
//! Only positions and names are collected here; nothing is written.

use super::FoldError;
use super::fb::{Reader, Result, Vector};
use super::graph::*;
use std::collections::HashMap;

pub struct Chain<'a> {
    /// Node.index of the Cast, Mul and Add nodes.
    pub nodes: [u32; 3],
    pub scale_name: Name<'a>,
    pub offset_name: Name<'a>,
    pub scale: f32,
    pub offset: f32,
    /// The int8 weight's data, and its dims.
    pub quant: Vector,
    pub dims: Vec<usize>,
    /// Field positions in the int8 Tensor table to repoint: name, data_type, raw_data.
    pub name_field: usize,
    pub type_field: usize,
    pub raw_field: usize,
    /// The scale's Tensor table (reused for a transposed copy).
    pub scale_table: usize,
    /// The Add output (name of the folded initializer) and the Mul output.
    pub out: Name<'a>,
    pub mul_out: Name<'a>,
}

pub struct TransposeFold<'a> {
    /// Index into the chain list of the transposed weight.
    pub chain: usize,
    pub perm: Vec<usize>,
    pub out_dims: Vec<usize>,
    /// Name of the Transpose output, which becomes an initializer.
    pub out: Name<'a>,
    /// (subgraph table, Node.index) of the Transpose nodes to drop.
    pub sites: Vec<(usize, u32)>,
    /// Field positions in the scale Tensor table to repoint: name, dims, raw_data.
    pub scale_fields: [usize; 3],
    /// The Mul output's ValueInfo: position of its name field and of each dim_value.
    pub value_info_name: usize,
    pub dim_values: Vec<usize>,
}

fn count_uses<'a>(g: &Graph<'a>) -> (HashMap<Name<'a>, Vec<usize>>, HashMap<Name<'a>, usize>) {
    let mut consumers: HashMap<Name, Vec<usize>> = HashMap::new();
    let mut init_uses: HashMap<Name, usize> = HashMap::new();
    for (k, node) in g.nodes.iter().enumerate() {
        for x in node.uses() {
            consumers.entry(x).or_default().push(k);
            if g.initializers.contains_key(x) {
                *init_uses.entry(x).or_default() += 1;
            }
        }
    }
    (consumers, init_uses)
}

fn product(dims: &[i64]) -> Option<usize> {
    dims.iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(usize::try_from(d).ok()?))
}

fn required(p: Option<usize>) -> Result<usize> {
    p.ok_or(FoldError::Malformed("missing tensor field"))
}

pub fn find_chains<'a>(r: &Reader<'a>, g: &Graph<'a>) -> Result<Vec<Chain<'a>>> {
    let (consumers, init_uses) = count_uses(g);
    let used_once = |name: Name| init_uses.get(name) == Some(&1);
    // The only consumer of `value`, when it has exactly one and is not a graph output.
    let sole_consumer = |value: Name| match consumers.get(value).map(Vec::as_slice) {
        Some(&[k]) if !g.outputs.contains(value) => Some(&g.nodes[k]),
        _ => None,
    };
    // The single other input of `node` besides `value`, when that is a FLOAT scalar initializer used once.
    let scalar_operand = |node: &Node<'a>, value: Name| -> Result<Option<(Name<'a>, f32, usize)>> {
        let others: Vec<_> = node.inputs.iter().filter(|&&x| x != value).collect();
        let &[&name] = others.as_slice() else {
            return Ok(None);
        };
        let Some(&t) = g.initializers.get(name).filter(|_| used_once(name)) else {
            return Ok(None);
        };
        let tensor = read_tensor(r, t)?;
        match tensor.raw {
            Some(raw) if tensor.data_type == FLOAT && product(&tensor.dims) == Some(1) => {
                let bytes = r.bytes(raw.at(0), raw.byte_len())?;
                Ok(<[u8; 4]>::try_from(bytes)
                    .ok()
                    .map(|b| (name, f32::from_le_bytes(b), t)))
            }
            _ => Ok(None),
        }
    };

    let mut chains = Vec::new();
    for cast in &g.nodes {
        if cast.op != b"Cast" || !cast.domain.is_empty() || cast.inputs.len() != 1 {
            continue;
        }
        let q = cast.inputs[0];
        let Some(&qt) = g.initializers.get(q).filter(|_| used_once(q)) else {
            continue;
        };
        let tensor = read_tensor(r, qt)?;
        let (Some(quant), Some(count)) = (tensor.raw, product(&tensor.dims)) else {
            continue;
        };
        if tensor.data_type != INT8 || quant.byte_len() != count {
            continue;
        }
        let Some(to) = cast.attr(b"to") else { continue };
        if r.field_i64(to, ATTR_I, 0)? != FLOAT as i64 {
            continue;
        }
        let Some(&cast_out) = cast.outputs.first() else {
            continue;
        };
        let Some(mul) = sole_consumer(cast_out).filter(|n| n.op == b"Mul") else {
            continue;
        };
        let Some((scale_name, scale, scale_table)) = scalar_operand(mul, cast_out)? else {
            continue;
        };
        let Some(&mul_out) = mul.outputs.first() else {
            continue;
        };
        let Some(add) = sole_consumer(mul_out).filter(|n| n.op == b"Add") else {
            continue;
        };
        let Some((offset_name, offset, _)) = scalar_operand(add, mul_out)? else {
            continue;
        };
        let Some(&out) = add.outputs.first() else {
            continue;
        };
        chains.push(Chain {
            nodes: [cast.index, mul.index, add.index],
            scale_name,
            offset_name,
            scale,
            offset,
            quant,
            dims: tensor.dims.iter().map(|&d| d as usize).collect(),
            name_field: required(r.field(qt, TENSOR_NAME)?)?,
            type_field: required(r.field(qt, TENSOR_DATA_TYPE)?)?,
            raw_field: required(r.field(qt, TENSOR_RAW_DATA)?)?,
            scale_table,
            out,
            mul_out,
        });
    }
    Ok(chains)
}

/// The permutation a Transpose applies to a tensor of rank `rank` (no perm: reverse the axes).
fn effective_perm(perm: &Option<Vec<i64>>, rank: usize) -> Option<Vec<usize>> {
    let perm: Vec<usize> = match perm {
        Some(p) if !p.is_empty() => p
            .iter()
            .map(|&a| usize::try_from(a).ok())
            .collect::<Option<_>>()?,
        _ => (0..rank).rev().collect(),
    };
    let mut seen = vec![false; rank];
    for &a in &perm {
        if a >= rank || std::mem::replace(&mut seen[a], true) {
            return None;
        }
    }
    (perm.len() == rank).then_some(perm)
}

/// Positions of the dim_value fields of a ValueInfo's tensor shape, when every dim is a known value.
fn dim_value_fields(r: &Reader, vi: usize) -> Result<Option<Vec<usize>>> {
    let Some(ti) = r.table(vi, VALUE_INFO_TYPE)? else {
        return Ok(None);
    };
    if r.field_u8(ti, TYPE_INFO_VALUE_TYPE, 0)? != TYPE_INFO_TENSOR {
        return Ok(None);
    }
    let Some(tts) = r.table(ti, TYPE_INFO_VALUE)? else {
        return Ok(None);
    };
    let Some(shape) = r.table(tts, TENSOR_TYPE_SHAPE)? else {
        return Ok(None);
    };
    let mut fields = Vec::new();
    for dim in r.tables(shape, SHAPE_DIMS)? {
        let Some(dv) = r.table(dim, DIMENSION_VALUE)? else {
            return Ok(None);
        };
        match r.field(dv, DIM_VALUE_VALUE)? {
            Some(p) if r.field_i8(dv, DIM_VALUE_TYPE, 0)? == DIM_TYPE_VALUE => fields.push(p),
            _ => return Ok(None),
        }
    }
    Ok(Some(fields))
}

type TransposeKey<'a> = (Name<'a>, Option<Vec<i64>>, Name<'a>);

/// Transposes of folded weights in the subgraphs of `g`'s nodes. A weight is handled only when all its
/// Transposes agree on perm and output name; the transposed copy reuses the chain's scale Tensor
/// table and its Mul output's ValueInfo, so both must have the fields to repoint.
pub fn find_transposes<'a>(
    r: &Reader<'a>,
    g: &Graph<'a>,
    chains: &[Chain<'a>],
) -> Result<Vec<TransposeFold<'a>>> {
    let folded: HashMap<Name, usize> = chains.iter().enumerate().map(|(i, c)| (c.out, i)).collect();
    // Distinct (weight, perm, output) keys in first-seen order, with the Transpose nodes of each.
    let mut found: Vec<(TransposeKey<'a>, Vec<(usize, u32)>)> = Vec::new();
    let mut key_index: HashMap<TransposeKey<'a>, usize> = HashMap::new();
    for sg in subgraphs(r, g)? {
        for t in r.tables(sg, GRAPH_NODES)? {
            let node = read_node(r, t)?;
            let (Some(&x), Some(&out)) = (node.inputs.first(), node.outputs.first()) else {
                continue;
            };
            if node.op != b"Transpose" || !folded.contains_key(x) {
                continue;
            }
            let perm = match node.attr(b"perm") {
                Some(a) => Some(r.i64s(a, ATTR_INTS)?.unwrap_or_default()),
                None => None,
            };
            let key = (x, perm, out);
            let k = *key_index.entry(key.clone()).or_insert(found.len());
            if k == found.len() {
                found.push((key, Vec::new()));
            }
            found[k].1.push((sg, node.index));
        }
    }
    let node_args = r.tables(g.table, GRAPH_NODE_ARGS)?;
    let mut folds = Vec::new();
    let mut forms: HashMap<Name, usize> = HashMap::new();
    for ((weight, _, _), _) in &found {
        *forms.entry(weight).or_default() += 1;
    }
    for ((weight, perm, out), sites) in &found {
        if forms[weight] != 1 {
            continue; // one transposed form per weight
        }
        let chain = folded[weight];
        let c = &chains[chain];
        let Some(perm) = effective_perm(perm, c.dims.len()) else {
            continue;
        };
        let st = c.scale_table;
        let (Some(f_name), Some(f_dims), Some(f_raw)) = (
            r.field(st, TENSOR_NAME)?,
            r.field(st, TENSOR_DIMS)?,
            r.field(st, TENSOR_RAW_DATA)?,
        ) else {
            continue;
        };
        let mut value_info = None;
        for &vi in &node_args {
            if r.string(vi, VALUE_INFO_NAME)? == Some(c.mul_out) {
                value_info = Some(vi);
                break;
            }
        }
        let Some(vi) = value_info else { continue };
        let Some(value_info_name) = r.field(vi, VALUE_INFO_NAME)? else {
            continue;
        };
        let Some(dim_values) = dim_value_fields(r, vi)?.filter(|d| d.len() == perm.len()) else {
            continue;
        };
        folds.push(TransposeFold {
            chain,
            out_dims: perm.iter().map(|&a| c.dims[a]).collect(),
            perm,
            out,
            sites: sites.clone(),
            scale_fields: [f_name, f_dims, f_raw],
            value_info_name,
            dim_values,
        });
    }
    Ok(folds)
}
