//! Rewrites moonshine-base's graphs where ONNX Runtime's optimisers leave dozens of small
//! operations (a decoder step runs about a third fewer of them after the first two rewrites) or
//! pass by a faster kernel (the third):
//! - each mean-centred norm (`ReduceMean`, `Sub`, `Pow`, `ReduceMean`, `Add`, `Sqrt`, `Div`,
//!   `Mul` by the weight) becomes one `LayerNormalization` (ONNX Runtime fuses only its second
//!   half);
//! - each interleaved rotary position embedding on the first channels of a head (slices of the
//!   rotated and the kept channels, of the even and the odd ones, `Neg`, `Unsqueeze`, `Concat`,
//!   `Reshape`, products with the cosine and sine of the positions, `Add`, `Concat`) becomes one
//!   `com.microsoft.RotaryEmbedding` that reads cosine and sine tables computed here from the
//!   graph's own frequencies;
//! - each attention product of queries and keys both scaled by a one-element factor takes the
//!   product of the two factors on the queries alone, as a vector of the head's width
//!   ([`scale`]: ONNX Runtime's one-query kernel would otherwise be passed by).
//!
//! Matching is by structure and constants only: a pattern that differs in any detail is left as
//! it is. Nodes that nothing reads any more go afterwards.

mod norm;
mod rotary;
mod scale;
#[cfg(test)]
mod tests;
mod view;

pub use rotary::ROTARY_POSITIONS;

use super::ir::*;
use norm::layer_norm;
use rotary::rotary;
use scale::attention_scale;
use std::collections::{HashMap, HashSet};
use view::{Scope, View, known};

/// What the fusion did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Fused {
    pub layer_norms: usize,
    pub rotary_embeddings: usize,
    pub attention_scales: usize,
}

/// Initializers the fusions add to the main graph (the branches read them from there), each
/// made once.
#[derive(Default)]
struct Added<'a> {
    tensors: Vec<Tensor<'a>>,
    /// Cosine and sine tables by the frequency initializer they are computed from.
    by_frequencies: HashMap<Vec<u8>, (Name<'a>, Name<'a>)>,
    /// One-element int64 shapes `[width]` by the width.
    by_width: HashMap<i64, Name<'a>>,
}

pub fn fuse(model: &mut Model) -> Fused {
    let mut fused = Fused::default();
    let mut added = Added::default();
    fuse_graph(&mut model.graph, &[], &mut added, &mut fused);
    model.graph.initializers.append(&mut added.tensors);
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

fn fuse_graph<'a>(g: &mut Graph<'a>, outer: &[&Scope], added: &mut Added<'a>, fused: &mut Fused) {
    let local: Scope = g.initializers.iter().map(known).collect();
    let mut scopes = outer.to_vec();
    scopes.push(&local);
    // Each matched node and what takes its place (one or more nodes, the last making its
    // output; the others read only values made before it).
    let replacements: Vec<(usize, Vec<Node<'a>>)> = {
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
                    Some((i, vec![norm]))
                } else if let Some(rotary) = rotary(&view, n, added) {
                    fused.rotary_embeddings += 1;
                    Some((i, vec![rotary]))
                } else if let Some(scaled) = attention_scale(&view, n, added) {
                    fused.attention_scales += 1;
                    Some((i, scaled))
                } else {
                    None
                }
            })
            .collect()
    };
    for (i, nodes) in replacements.into_iter().rev() {
        g.nodes.splice(i..=i, nodes);
    }
    for n in &mut g.nodes {
        for a in &mut n.attributes {
            if let Value::Graph(sub) = &mut a.value {
                fuse_graph(sub, &scopes, added, fused);
            }
        }
    }
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
