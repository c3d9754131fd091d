//! Applies the folds to a copy of the buffer: new names and float32 data are appended at the end and
//! the existing Tensor / ValueInfo fields are repointed at them (uoffsets point forward, so appended
//! data is reachable); the folded nodes and initializers are then dropped by compacting their vectors
//! in place. Same byte layout as the Python prototype fold_ort.py.

use super::fb::{self, Reader, Result};
use super::graph::*;
use super::pattern::{self, Chain, TransposeFold};
use super::{FoldError, Folded};
use std::collections::{HashMap, HashSet};

pub fn fold(model: &[u8]) -> Result<Folded> {
    if model.get(4..8) != Some(b"ORTM".as_slice()) {
        return Err(FoldError::NotOrtFormat);
    }
    let r = Reader::new(model);
    let graph = read_graph(&r, main_graph(&r)?)?;
    let chains = pattern::find_chains(&r, &graph)?;
    if chains.is_empty() {
        return Ok(Folded {
            bytes: model.to_vec(),
            chains: 0,
            transposes: 0,
        });
    }
    let transposes = pattern::find_transposes(&r, &graph, &chains)?;

    let mut out = Vec::with_capacity(output_size(model.len(), &chains, &transposes)?);
    out.extend_from_slice(model);
    let data = chains
        .iter()
        .map(|c| append_chain(&mut out, model, c))
        .collect::<Result<Vec<_>>>()?;
    for t in &transposes {
        append_transpose(&mut out, t, &chains[t.chain], data[t.chain])?;
    }

    // Drop the Transpose nodes, one pass per subgraph in first-seen order, then the chain nodes. One
    // budget for all passes: a real file has no vector shared between graphs.
    let mut budget = model.len() / 4 + 1024;
    let mut subgraphs: Vec<(usize, HashSet<u32>)> = Vec::new();
    let mut subgraph_index: HashMap<usize, usize> = HashMap::new();
    for &(sg, index) in transposes.iter().flat_map(|t| &t.sites) {
        let k = *subgraph_index.entry(sg).or_insert(subgraphs.len());
        if k == subgraphs.len() {
            subgraphs.push((sg, HashSet::new()));
        }
        subgraphs[k].1.insert(index);
    }
    for (sg, removed) in &subgraphs {
        budget = remove_nodes(&mut out, *sg, removed, budget)?;
    }
    let removed: HashSet<u32> = chains.iter().flat_map(|c| c.nodes).collect();
    budget = remove_nodes(&mut out, graph.table, &removed, budget)?;

    // Drop the scale and offset initializers, except scales reused for a transposed weight.
    let reused: HashSet<Name> = transposes
        .iter()
        .map(|t| chains[t.chain].scale_name)
        .collect();
    let dropped: HashSet<Name> = chains
        .iter()
        .flat_map(|c| [c.scale_name, c.offset_name])
        .filter(|n| !reused.contains(n))
        .collect();
    let r = Reader::with_budget(&out, budget);
    if let Some(v) = r.counted_vector(graph.table, GRAPH_INITIALIZERS, 4)? {
        let mut keep = Vec::new();
        for i in 0..v.len {
            let name = r.string(r.deref(v.at(i))?, TENSOR_NAME)?;
            if !name.is_some_and(|n| dropped.contains(n)) {
                keep.push(i);
            }
        }
        fb::compact_tables(&mut out, v, &keep)?;
    }
    Ok(Folded {
        bytes: out,
        chains: chains.len(),
        transposes: transposes.len(),
    })
}

/// Upper bound of the output size; refuses more than ten times the input (a damaged file whose
/// tensors share data could otherwise ask for far more memory than any real model).
fn output_size(input: usize, chains: &[Chain], transposes: &[TransposeFold]) -> Result<usize> {
    const PAD: usize = 32;
    let chain_bytes = chains
        .iter()
        .map(|c| c.out.len() + 4 * c.quant.len + 2 * PAD);
    let transpose_bytes = transposes
        .iter()
        .map(|t| t.out.len() * 2 + 8 * t.out_dims.len() + 4 * chains[t.chain].quant.len + 4 * PAD);
    let total = chain_bytes
        .chain(transpose_bytes)
        .fold(input, usize::saturating_add);
    if total > input.saturating_mul(10).saturating_add(1 << 20) {
        return Err(FoldError::TooLarge);
    }
    Ok(total)
}

/// Appends the chain's output name and float32 data, repoints the int8 Tensor table at them;
/// returns the position of the float data.
fn append_chain(out: &mut Vec<u8>, model: &[u8], c: &Chain) -> Result<usize> {
    let q = Reader::new(model).bytes(c.quant.at(0), c.quant.len)?;
    let name = fb::append_string(out, c.out)?;
    let raw = fb::append_vector(out, 4 * q.len(), 1, 16, |b| {
        for &x in q {
            // Exactly what Cast, Mul and Add compute: two float32 roundings, no fused multiply-add.
            let scaled = (x as i8 as f32) * c.scale;
            let w = scaled + c.offset;
            b.extend_from_slice(&w.to_le_bytes());
        }
        Ok(())
    })?;
    fb::point(out, c.name_field, name)?;
    fb::put_i32(out, c.type_field, FLOAT)?;
    fb::point(out, c.raw_field, raw)?;
    Ok(raw + 4)
}

/// Appends the transposed copy of a folded weight, stored in the chain's (otherwise dropped) scale
/// Tensor table, and renames and reshapes the chain's Mul output ValueInfo to describe it.
fn append_transpose(out: &mut Vec<u8>, t: &TransposeFold, c: &Chain, data: usize) -> Result<()> {
    let [f_name, f_dims, f_raw] = t.scale_fields;
    let name = fb::append_string(out, t.out)?;
    let dims: Vec<i64> = t.out_dims.iter().map(|&d| d as i64).collect();
    let dims_pos = fb::append_i64s(out, &dims)?;
    let n = 4 * c.quant.len;
    let raw = fb::append_vector(out, n, 1, 16, |b| {
        let start = b.len();
        b.resize(start + n, 0);
        let (head, tail) = b.split_at_mut(start);
        let src = head
            .get(data..data + n)
            .ok_or(FoldError::OutOfBounds { at: data })?;
        transpose(src, tail, &c.dims, &t.perm)
    })?;
    fb::point(out, f_name, name)?;
    fb::point(out, f_dims, dims_pos)?;
    fb::point(out, f_raw, raw)?;
    let vi_name = fb::append_string(out, t.out)?;
    fb::point(out, t.value_info_name, vi_name)?;
    for (&p, &d) in t.dim_values.iter().zip(&dims) {
        fb::put_i64(out, p, d)?;
    }
    Ok(())
}

/// Row-major transpose of 4-byte elements: `dst` axis i is `src` axis `perm[i]`.
pub fn transpose(src: &[u8], dst: &mut [u8], dims: &[usize], perm: &[usize]) -> Result<()> {
    let count = dims.iter().try_fold(4usize, |n, &d| n.checked_mul(d));
    if count != Some(src.len()) || src.len() != dst.len() || dims.len() != perm.len() {
        return Err(FoldError::Malformed("transpose of inconsistent size"));
    }
    if let (&[rows, cols], [1, 0]) = (dims, perm) {
        // 2-D (the tied embedding): in tiles, so reads and writes both stay in cache.
        const TILE: usize = 32;
        for r0 in (0..rows).step_by(TILE) {
            for c0 in (0..cols).step_by(TILE) {
                for c in c0..cols.min(c0 + TILE) {
                    for r in r0..rows.min(r0 + TILE) {
                        let (s, d) = (4 * (r * cols + c), 4 * (c * rows + r));
                        dst[d..d + 4].copy_from_slice(&src[s..s + 4]);
                    }
                }
            }
        }
        return Ok(());
    }
    let Some(&inner_axis) = perm.last() else {
        dst.copy_from_slice(src);
        return Ok(());
    };
    let mut stride = vec![1usize; dims.len()];
    for i in (0..dims.len() - 1).rev() {
        stride[i] = stride[i + 1] * dims[i + 1];
    }
    let out_dims: Vec<usize> = perm.iter().map(|&a| dims[a]).collect();
    let step: Vec<usize> = perm.iter().map(|&a| stride[a]).collect();
    let (inner, inner_step) = (dims[inner_axis], stride[inner_axis]);
    if inner == 0 || src.is_empty() {
        return Ok(());
    }
    let outer = out_dims.len() - 1;
    let (mut idx, mut base) = (vec![0usize; outer], 0usize);
    for row in dst.chunks_exact_mut(4 * inner) {
        for (j, d) in row.chunks_exact_mut(4).enumerate() {
            let s = 4 * (base + j * inner_step);
            d.copy_from_slice(
                src.get(s..s + 4)
                    .ok_or(FoldError::Malformed("transpose index"))?,
            );
        }
        // Odometer over the outer output axes.
        for a in (0..outer).rev() {
            idx[a] += 1;
            base += step[a];
            if idx[a] < out_dims[a] {
                break;
            }
            base -= step[a] * out_dims[a];
            idx[a] = 0;
        }
    }
    Ok(())
}

/// Drops nodes (by Node.index) from graph `g`: the nodes vector, their NodeEdge entries, and the
/// EdgeEnds that name them. Returns what is left of the read budget.
fn remove_nodes(buf: &mut [u8], g: usize, removed: &HashSet<u32>, budget: usize) -> Result<usize> {
    let r = Reader::with_budget(buf, budget);
    let mut plan = Vec::new(); // (vector, kept indices, is a struct vector) in write order
    if let Some(v) = r.counted_vector(g, GRAPH_NODES, 4)? {
        let mut keep = Vec::new();
        for i in 0..v.len {
            if !removed.contains(&r.field_u32(r.deref(v.at(i))?, NODE_INDEX, 0)?) {
                keep.push(i);
            }
        }
        plan.push((v, keep, false));
    }
    if let Some(edges) = r.counted_vector(g, GRAPH_NODE_EDGES, 4)? {
        let mut keep_edges = Vec::new();
        for i in 0..edges.len {
            let e = r.deref(edges.at(i))?;
            if removed.contains(&r.field_u32(e, EDGE_NODE, 0)?) {
                continue;
            }
            keep_edges.push(i);
            for slot in [EDGE_INPUTS, EDGE_OUTPUTS] {
                let Some(ends) = r.counted_vector(e, slot, EDGE_END_SIZE)? else {
                    continue;
                };
                let mut keep = Vec::new();
                for j in 0..ends.len {
                    if !removed.contains(&r.u32(ends.at(j))?) {
                        keep.push(j);
                    }
                }
                plan.push((ends, keep, true));
            }
        }
        plan.push((edges, keep_edges, false));
    }
    let budget = r.budget();
    for (v, keep, is_struct) in plan {
        if is_struct {
            fb::compact_structs(buf, v, &keep)?;
        } else {
            fb::compact_tables(buf, v, &keep)?;
        }
    }
    Ok(budget)
}
