//! Keeps int8 weights int8. moonshine-base's files store each weight as
//! `Cast(q: int8, to=FLOAT) -> Mul(scale) -> Add(offset)`, one scale and one offset per tensor,
//! the offset a whole number of scales: the weight is `scale * (q - zero)` with the int8
//! `zero = -offset / scale`. Each `MatMul` by such a weight (or by its transpose, the tied token
//! embedding inside the decoder's If branches) becomes ONNX Runtime's
//! `com.microsoft.DynamicQuantizeMatMul(x, q, scale, zero)`: the activations are quantized to
//! 8 bits as they come and the product is taken in integers, reading a quarter of the bytes a
//! float32 weight takes. A `Gather` of rows from such a weight (the token embedding) takes the
//! int8 rows and dequantizes those alone, so that no float32 copy of the table is ever made
//! (ONNX Runtime would fold the chain into one at load: 54.5 MB for moonshine-base's 32,768 ×
//! 416 embedding, in every copy of the model). Other uses keep the chain.

use super::ir::*;
use super::schema::{FLOAT, INT8};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

/// A weight stored as an int8 chain.
#[derive(Clone)]
struct Quantized<'a> {
    q: Name<'a>,
    scale: Name<'a>,
    /// The chain's offset (`-scale * zero`).
    offset: Name<'a>,
    zero: i8,
    /// The int8 matrix: rows, columns and bytes.
    dims: [i64; 2],
    data: Cow<'a, [u8]>,
    /// The chain's Cast, Mul and Add outputs (the last is the weight).
    chain: [Name<'a>; 3],
}

/// What the rewrite did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Rewritten {
    /// MatMul nodes that now take int8 weights.
    pub matmuls: usize,
}

pub fn rewrite(model: &mut Model) -> Rewritten {
    let chains = find_chains(&model.graph);
    if chains.is_empty() {
        return Rewritten::default();
    }
    let mut added = Added::default();
    let matmuls = rewrite_graph(&mut model.graph, &chains, &mut added);
    let graph = &mut model.graph;
    graph.initializers.append(&mut added.tensors);
    // The nodes of chains whose weight nothing reads any more go, then unread initializers.
    let chain_values: HashSet<Name> = chains.values().flat_map(|c| c.chain.clone()).collect();
    loop {
        let mut used = HashSet::new();
        collect_uses(graph, &mut used);
        let before = graph.nodes.len();
        graph.nodes.retain(|n| {
            let in_chain =
                !n.outputs.is_empty() && n.outputs.iter().all(|o| chain_values.contains(o));
            !in_chain || n.outputs.iter().any(|o| used.contains(o))
        });
        if graph.nodes.len() == before {
            break;
        }
    }
    let mut used = HashSet::new();
    collect_uses(graph, &mut used);
    graph.initializers.retain(|t| used.contains(&t.name));
    Rewritten { matmuls }
}

/// The chains of the main graph, by the weight they make.
fn find_chains<'a>(g: &Graph<'a>) -> HashMap<Name<'a>, Quantized<'a>> {
    let initializers: HashMap<&[u8], &Tensor> =
        g.initializers.iter().map(|t| (&*t.name, t)).collect();
    let producer: HashMap<&[u8], &Node> = g
        .nodes
        .iter()
        .flat_map(|n| n.outputs.iter().map(move |o| (&**o, n)))
        .collect();
    let scalar = |name: &[u8]| -> Option<f32> {
        let t = initializers.get(name)?;
        (t.data_type == FLOAT && t.elements() == Some(1) && t.raw.len() == 4)
            .then(|| f32::from_le_bytes(t.raw[..4].try_into().unwrap_or_default()))
    };
    let mut chains = HashMap::new();
    for add in g.nodes.iter().filter(|n| is(n, b"Add")) {
        let Some((mul, offset)) = operands(add, &producer, &scalar) else {
            continue;
        };
        if !is(mul, b"Mul") {
            continue;
        }
        let Some((cast, scale)) = operands(mul, &producer, &scalar) else {
            continue;
        };
        let Some(q) = cast.inputs.first().filter(|_| is(cast, b"Cast")) else {
            continue;
        };
        let casts_to_float = cast
            .attributes
            .iter()
            .any(|a| &*a.name == b"to" && matches!(a.value, Value::Int(t) if t == FLOAT as i64));
        let Some(matrix) = initializers.get(&**q).filter(|t| {
            t.data_type == INT8 && t.dims.len() == 2 && t.elements() == Some(t.raw.len())
        }) else {
            continue;
        };
        let Some(zero) = zero_point(scale.1, offset.1) else {
            continue;
        };
        if casts_to_float {
            chains.insert(
                add.outputs[0].clone(),
                Quantized {
                    q: q.clone(),
                    scale: scale.0,
                    offset: offset.0,
                    zero,
                    dims: [matrix.dims[0], matrix.dims[1]],
                    data: matrix.raw.clone(),
                    chain: [
                        cast.outputs[0].clone(),
                        mul.outputs[0].clone(),
                        add.outputs[0].clone(),
                    ],
                },
            );
        }
    }
    chains
}

fn is(n: &Node, op: &[u8]) -> bool {
    &*n.op == op && n.domain.is_empty() && n.outputs.len() == 1
}

/// For a two-input node, the node making one input and the name and value of the scalar
/// initializer that is the other.
fn operands<'g, 'a>(
    n: &Node<'a>,
    producer: &HashMap<&[u8], &'g Node<'a>>,
    scalar: &impl Fn(&[u8]) -> Option<f32>,
) -> Option<(&'g Node<'a>, (Name<'a>, f32))> {
    let [a, b] = n.inputs.as_slice() else {
        return None;
    };
    [(a, b), (b, a)].into_iter().find_map(|(value, constant)| {
        let made_by = producer.get(&**value)?;
        Some((*made_by, (constant.clone(), scalar(constant)?)))
    })
}

/// The int8 zero point that makes `scale * q + offset` equal `scale * (q - zero)`, when the
/// offset is a whole number of scales within int8's range.
fn zero_point(scale: f32, offset: f32) -> Option<i8> {
    if !scale.is_finite() || scale == 0.0 || !offset.is_finite() {
        return None;
    }
    let steps = offset / scale;
    let whole = steps.round();
    if (steps - whole).abs() > 1e-3 || whole * scale != offset {
        return None;
    }
    i8::try_from(-(whole as i64)).ok()
}

/// Initializers the rewrite adds to the main graph: zero points and transposed weights.
#[derive(Default)]
struct Added<'a> {
    tensors: Vec<Tensor<'a>>,
    zeros: HashMap<i8, Name<'a>>,
    transposed: HashMap<Name<'a>, Name<'a>>,
}

impl<'a> Added<'a> {
    fn zero(&mut self, zero: i8) -> Name<'a> {
        if let Some(name) = self.zeros.get(&zero) {
            return name.clone();
        }
        let name: Name = Cow::Owned(format!("verbatim.int8_zero.{zero}").into_bytes());
        self.tensors.push(Tensor {
            name: name.clone(),
            data_type: INT8,
            dims: Vec::new(),
            raw: Cow::Owned(vec![zero as u8]),
            strings: Vec::new(),
        });
        self.zeros.insert(zero, name.clone());
        name
    }

    /// The transpose of the chain's int8 matrix, as an initializer of its own.
    fn transposed(&mut self, q: &Quantized<'a>) -> Name<'a> {
        if let Some(name) = self.transposed.get(&q.q) {
            return name.clone();
        }
        let [rows, cols] = q.dims.map(|d| d as usize);
        let mut data = vec![0u8; q.data.len()];
        for (r, row) in q.data.chunks_exact(cols.max(1)).enumerate() {
            for (c, &v) in row.iter().enumerate() {
                data[c * rows + r] = v;
            }
        }
        let mut name = q.q.to_vec();
        name.extend_from_slice(b".verbatim_transposed");
        let name: Name = Cow::Owned(name);
        self.tensors.push(Tensor {
            name: name.clone(),
            data_type: INT8,
            dims: vec![q.dims[1], q.dims[0]],
            raw: Cow::Owned(data),
            strings: Vec::new(),
        });
        self.transposed.insert(q.q.clone(), name.clone());
        name
    }
}

/// Each `Gather` of rows (axis 0) from a chained weight becomes `Gather(q) -> Cast -> Mul(scale)
/// -> Add(offset)`: the chain's arithmetic, on the gathered rows alone.
fn gather_int8_rows<'a>(g: &mut Graph<'a>, chains: &HashMap<Name<'a>, Quantized<'a>>) {
    let rows_axis = |n: &Node| {
        n.attributes
            .iter()
            .all(|a| &*a.name != b"axis" || matches!(a.value, Value::Int(0)))
    };
    let mut nodes = Vec::with_capacity(g.nodes.len());
    for mut n in std::mem::take(&mut g.nodes) {
        let chain = (is(&n, b"Gather") && n.inputs.len() == 2 && rows_axis(&n))
            .then(|| chains.get(&n.inputs[0]))
            .flatten();
        let Some(c) = chain else {
            nodes.push(n);
            continue;
        };
        let out = n.outputs[0].clone();
        let named = |suffix: &str| -> Name<'a> {
            let mut name = out.to_vec();
            name.extend_from_slice(suffix.as_bytes());
            Cow::Owned(name)
        };
        let (rows, floats, scaled) = (
            named(".verbatim_int8_rows"),
            named(".verbatim_float_rows"),
            named(".verbatim_scaled_rows"),
        );
        n.inputs[0] = c.q.clone();
        n.outputs = vec![rows.clone()];
        nodes.push(n);
        nodes.push(node(
            floats.clone(),
            "Cast",
            "",
            vec![rows],
            floats.clone(),
            vec![("to", Value::Int(FLOAT as i64))],
        ));
        nodes.push(node(
            scaled.clone(),
            "Mul",
            "",
            vec![floats, c.scale.clone()],
            scaled.clone(),
            Vec::new(),
        ));
        nodes.push(node(
            out.clone(),
            "Add",
            "",
            vec![scaled, c.offset.clone()],
            out,
            Vec::new(),
        ));
    }
    g.nodes = nodes;
}

/// Rewrites the MatMuls of `g` and its subgraphs; returns how many.
fn rewrite_graph<'a>(
    g: &mut Graph<'a>,
    chains: &HashMap<Name<'a>, Quantized<'a>>,
    added: &mut Added<'a>,
) -> usize {
    let mut count = 0;
    gather_int8_rows(g, chains);
    // A Transpose (2-D, rows and columns swapped) of a chained weight stands for the weight's
    // transpose.
    let mut transposes: HashMap<Name<'a>, &Quantized<'a>> = HashMap::new();
    for n in &g.nodes {
        let swaps = n.attributes.iter().all(|a| match (&*a.name, &a.value) {
            (b"perm", Value::Ints(p)) => p.as_slice() == [1, 0],
            _ => false,
        });
        let transpose = &*n.op == b"Transpose" && n.domain.is_empty() && swaps;
        if let (true, [out], Some(c)) = (
            transpose,
            n.outputs.as_slice(),
            n.inputs.first().and_then(|i| chains.get(i)),
        ) {
            transposes.insert(out.clone(), c);
        }
    }
    for n in &mut g.nodes {
        for a in &mut n.attributes {
            if let Value::Graph(sub) = &mut a.value {
                count += rewrite_graph(sub, chains, added);
            }
        }
        if &*n.op != b"MatMul" || !n.domain.is_empty() || n.inputs.len() != 2 {
            continue;
        }
        let weight = &n.inputs[1];
        let (q, chain) = if let Some(c) = chains.get(weight) {
            (c.q.clone(), c)
        } else if let Some(&c) = transposes.get(weight) {
            (added.transposed(c), c)
        } else {
            continue;
        };
        n.op = Cow::Borrowed(b"DynamicQuantizeMatMul");
        n.domain = Cow::Borrowed(b"com.microsoft");
        n.inputs = vec![
            n.inputs[0].clone(),
            q,
            chain.scale.clone(),
            added.zero(chain.zero),
        ];
        count += 1;
    }
    // Transposes nothing reads any more go (the weight's transpose is an initializer now).
    let mut used = HashSet::new();
    collect_uses(g, &mut used);
    g.nodes.retain(|n| match n.outputs.as_slice() {
        [out] if &*n.op == b"Transpose" && transposes.contains_key(out) => used.contains(out),
        _ => true,
    });
    count
}
