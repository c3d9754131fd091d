//! Tests of [`super::fuse`] on small graphs built as moonshine-base's are: a norm in the main
//! graph, a rotary embedding inside an `If` branch that reads the main graph's frequencies, an
//! attention product scaled on both sides.

use super::super::ir::*;
use super::super::schema::{FLOAT, INT64};
use super::{Fused, ROTARY_POSITIONS, fuse};
use std::borrow::Cow;

fn name(s: &str) -> Name<'static> {
    Cow::Owned(s.as_bytes().to_vec())
}

fn node(
    op: &str,
    ins: &[&str],
    out: &str,
    attributes: Vec<(&str, Value<'static>)>,
) -> Node<'static> {
    Node {
        name: name(out),
        op: name(op),
        domain: name(""),
        inputs: ins.iter().map(|i| name(i)).collect(),
        outputs: vec![name(out)],
        attributes: attributes
            .into_iter()
            .map(|(n, value)| Attribute {
                name: name(n),
                value,
            })
            .collect(),
    }
}

fn floats(n: &str, dims: &[i64], values: &[f32]) -> Tensor<'static> {
    Tensor {
        name: name(n),
        data_type: FLOAT,
        dims: dims.to_vec(),
        raw: Cow::Owned(values.iter().flat_map(|v| v.to_le_bytes()).collect()),
        strings: Vec::new(),
    }
}

fn longs(n: &str, values: &[i64]) -> Tensor<'static> {
    Tensor {
        name: name(n),
        data_type: INT64,
        dims: vec![values.len() as i64],
        raw: Cow::Owned(values.iter().flat_map(|v| v.to_le_bytes()).collect()),
        strings: Vec::new(),
    }
}

fn value(n: &str) -> ValueInfo<'static> {
    ValueInfo {
        name: name(n),
        tensor: None,
    }
}

fn model(graph: Graph<'static>) -> Model<'static> {
    Model {
        ir_version: 7,
        opsets: vec![(name(""), 14), (name("com.microsoft"), 1)],
        producer: name("test"),
        graph,
    }
}

fn ops(g: &Graph) -> Vec<String> {
    g.nodes
        .iter()
        .map(|n| String::from_utf8_lossy(&n.op).into_owned())
        .collect()
}

fn attribute<'g>(n: &'g Node<'static>, attr: &str) -> &'g Value<'static> {
    &n.attributes
        .iter()
        .find(|a| &*a.name == attr.as_bytes())
        .expect("the attribute")
        .value
}

/// `y = w * (x - mean(x)) / sqrt(mean((x - mean(x))^power) + 1e-5)`, means over `axis`.
fn norm_graph(power: f32, axis: i64) -> Graph<'static> {
    let axes = || vec![("axes", Value::Ints(vec![axis]))];
    Graph {
        nodes: vec![
            node("ReduceMean", &["x"], "mean", axes()),
            node("Sub", &["x", "mean"], "centred", vec![]),
            node("Pow", &["centred", "power"], "squared", vec![]),
            node("ReduceMean", &["squared"], "variance", axes()),
            node("Add", &["variance", "epsilon"], "padded", vec![]),
            node("Sqrt", &["padded"], "deviation", vec![]),
            node("Div", &["centred", "deviation"], "normed", vec![]),
            node("Mul", &["weight", "normed"], "y", vec![]),
        ],
        initializers: vec![
            floats("power", &[], &[power]),
            floats("epsilon", &[], &[1e-5]),
            floats("weight", &[4], &[1.0, 2.0, 3.0, 4.0]),
        ],
        inputs: vec![value("x")],
        outputs: vec![value("y")],
    }
}

#[test]
fn a_mean_centred_norm_becomes_one_layer_normalization() {
    let mut m = model(norm_graph(2.0, -1));
    let fused = fuse(&mut m);
    assert_eq!(
        fused,
        Fused {
            layer_norms: 1,
            ..Fused::default()
        }
    );
    assert_eq!(ops(&m.graph), ["LayerNormalization"]);
    let norm = &m.graph.nodes[0];
    assert_eq!(norm.inputs, [name("x"), name("weight")]);
    assert_eq!(norm.outputs, [name("y")]);
    assert!(
        matches!(norm.attributes.iter().find(|a| &*a.name == b"epsilon").map(|a| &a.value),
        Some(Value::Float(e)) if *e == 1e-5)
    );
    assert!(matches!(
        norm.attributes
            .iter()
            .find(|a| &*a.name == b"axis")
            .map(|a| &a.value),
        Some(Value::Int(-1))
    ));
    // LayerNormalization needs opset 17; the constants nothing reads any more are gone.
    assert_eq!(m.opsets[0], (name(""), 17));
    let left: Vec<_> = m
        .graph
        .initializers
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert_eq!(left, [name("weight")]);
}

#[test]
fn a_norm_that_differs_is_left_alone() {
    for (power, axis) in [(3.0, -1), (2.0, 0)] {
        let mut m = model(norm_graph(power, axis));
        assert_eq!(fuse(&mut m), Fused::default(), "power {power}, axis {axis}");
        assert_eq!(m.graph.nodes.len(), 8);
        assert_eq!(m.opsets[0], (name(""), 14));
    }
}

/// What a rotary test graph differs in.
struct Rotary {
    /// Start of the odd channels' slice (1 in a real rotate_half).
    odd_start: i64,
    /// End of the kept channels' slice (past the head's 52 in a real one).
    kept_end: i64,
    /// Number of frequencies (half the rotated channels in a real one).
    frequencies: usize,
}

const REAL: Rotary = Rotary {
    odd_start: 1,
    kept_end: i64::MAX,
    frequencies: 16,
};

/// The frequencies of the test graphs.
fn frequency(i: usize) -> f32 {
    1.0 / 10_000f32.powf(i as f32 / 16.0)
}

/// `first` and `second` interleaved along their last axis, as moonshine-base's graphs do it:
/// `Reshape(Concat(Unsqueeze(first, -1), Unsqueeze(second, -1)), ..)`, the shape computed from
/// the `Concat`'s to join its last two axes (`Shape`, `Slice` to -2, `Concat` with -1).
fn interleave(nodes: &mut Vec<Node<'static>>, first: &str, second: &str, out: &str) {
    let (a, b, pairs) = (
        format!("{out}.a"),
        format!("{out}.b"),
        format!("{out}.pairs"),
    );
    let (shape, lead, joined) = (
        format!("{out}.shape"),
        format!("{out}.lead"),
        format!("{out}.joined"),
    );
    let axis = |axis: i64| vec![("axis", Value::Int(axis))];
    nodes.push(node("Unsqueeze", &[first, "minus_one"], &a, vec![]));
    nodes.push(node("Unsqueeze", &[second, "minus_one"], &b, vec![]));
    nodes.push(node("Concat", &[&a, &b], &pairs, axis(-1)));
    nodes.push(node("Shape", &[&pairs], &shape, vec![]));
    nodes.push(node(
        "Slice",
        &[&shape, "zero", "minus_two", "zero"],
        &lead,
        vec![],
    ));
    nodes.push(node("Concat", &[&lead, "minus_one"], &joined, axis(0)));
    nodes.push(node("Reshape", &[&pairs, &joined], out, vec![]));
}

/// `q` of 8 heads of 52 channels, the first 32 turned by interleaved pairs, inside an `If`
/// branch; the frequencies are a main-graph initializer, as in moonshine-base's decoder.
fn rotary_model(r: &Rotary) -> Model<'static> {
    let end = i64::MAX;
    let mut branch = Vec::new();
    let mut constants = vec![
        longs("shape", &[1, 1, 8, 52]),
        longs("one", &[1]),
        longs("zero", &[0]),
        longs("two", &[2]),
        longs("minus_one", &[-1]),
        longs("minus_two", &[-2]),
        longs("rotated", &[32]),
        longs("end", &[end]),
        longs("odd_start", &[r.odd_start]),
        longs("kept_end", &[r.kept_end]),
    ];
    let perm = |p: &[i64]| vec![("perm", Value::Ints(p.to_vec()))];
    branch.push(node("Reshape", &["proj", "shape"], "heads", vec![]));
    branch.push(node("Transpose", &["heads"], "x", perm(&[0, 2, 1, 3])));
    // Angles: positions start.. times the frequencies, each twice.
    branch.push(node(
        "Range",
        &["start", "limit", "one_scalar"],
        "range",
        vec![],
    ));
    branch.push(node("Unsqueeze", &["range", "zero"], "pos2", vec![]));
    branch.push(node("Unsqueeze", &["pos2", "one"], "pos3", vec![]));
    branch.push(node(
        "Cast",
        &["pos3"],
        "posf",
        vec![("to", Value::Int(FLOAT as i64))],
    ));
    branch.push(node("MatMul", &["frequencies", "posf"], "freqs", vec![]));
    branch.push(node("Transpose", &["freqs"], "freqs_t", perm(&[0, 2, 1])));
    interleave(&mut branch, "freqs_t", "freqs_t", "angles");
    branch.push(node("Cos", &["angles"], "cos", vec![]));
    branch.push(node("Sin", &["angles"], "sin", vec![]));
    branch.push(node("Unsqueeze", &["cos", "one"], "cos_h", vec![]));
    branch.push(node("Unsqueeze", &["sin", "one"], "sin_h", vec![]));
    // The channels turned and kept, and rotate_half of the turned ones.
    // Slices of the last axis: (data, start, end, step, out).
    for (data, start, end, step, out) in [
        ("x", "zero", "rotated", "one", "turn"),
        ("x", "rotated", "kept_end", "one", "keep"),
        ("turn", "zero", "end", "two", "even"),
        ("turn", "odd_start", "end", "two", "odd"),
    ] {
        let inputs = [data, start, end, "minus_one", step];
        branch.push(node("Slice", &inputs, out, vec![]));
    }
    branch.push(node("Neg", &["odd"], "odd_neg", vec![]));
    interleave(&mut branch, "odd_neg", "even", "half_turned");
    branch.push(node("Mul", &["turn", "cos_h"], "by_cos", vec![]));
    branch.push(node("Mul", &["sin_h", "half_turned"], "by_sin", vec![]));
    branch.push(node("Add", &["by_cos", "by_sin"], "turned", vec![]));
    branch.push(node(
        "Concat",
        &["turned", "keep"],
        "q",
        vec![("axis", Value::Int(-1))],
    ));
    let mut one_scalar = longs("one_scalar", &[1]);
    one_scalar.dims.clear();
    constants.push(one_scalar);
    let then_branch = Graph {
        nodes: branch,
        initializers: constants,
        inputs: Vec::new(),
        outputs: vec![value("q")],
    };
    let values: Vec<f32> = (0..r.frequencies).map(frequency).collect();
    Model {
        graph: Graph {
            nodes: vec![Node {
                attributes: vec![Attribute {
                    name: name("then_branch"),
                    value: Value::Graph(then_branch),
                }],
                ..node("If", &["cond"], "q", vec![])
            }],
            initializers: vec![floats(
                "frequencies",
                &[1, r.frequencies as i64, 1],
                &values,
            )],
            inputs: vec![value("cond"), value("proj"), value("start"), value("limit")],
            outputs: vec![value("q")],
        },
        ..model(Graph::default())
    }
}

fn branch<'m>(m: &'m Model<'static>) -> &'m Graph<'static> {
    match &m.graph.nodes[0].attributes[0].value {
        Value::Graph(g) => g,
        _ => panic!("an If branch"),
    }
}

fn table(m: &Model<'static>, n: &Name) -> Vec<f32> {
    let t = m
        .graph
        .initializers
        .iter()
        .find(|t| t.name == *n)
        .expect("a table");
    assert_eq!(t.dims, [ROTARY_POSITIONS as i64, 16]);
    t.raw
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

#[test]
fn an_interleaved_rotary_embedding_becomes_one_operation_reading_tables() {
    let mut m = rotary_model(&REAL);
    assert_eq!(
        fuse(&mut m),
        Fused {
            rotary_embeddings: 1,
            ..Fused::default()
        }
    );
    let g = branch(&m);
    // Only the heads' reshape and transpose are left before it.
    assert_eq!(ops(g), ["Reshape", "Transpose", "RotaryEmbedding"]);
    let rotary = &g.nodes[2];
    assert_eq!(&*rotary.domain, b"com.microsoft");
    assert_eq!(rotary.outputs, [name("q")]);
    assert_eq!(rotary.inputs[..2], [name("x"), name("start")]);
    for (attr, expected) in [
        ("interleaved", 1),
        ("num_heads", 8),
        ("rotary_embedding_dim", 32),
    ] {
        assert!(
            matches!(attribute(rotary, attr), Value::Int(v) if *v == expected),
            "{attr}"
        );
    }
    // The tables hold the cosine and sine of position times frequency, in the main graph; the
    // frequencies themselves are read by nothing any more.
    let (cos, sin) = (table(&m, &rotary.inputs[2]), table(&m, &rotary.inputs[3]));
    for (position, i) in [
        (0usize, 0usize),
        (7, 3),
        (1000, 15),
        (ROTARY_POSITIONS - 1, 1),
    ] {
        let angle = position as f32 * frequency(i);
        assert_eq!(cos[position * 16 + i], angle.cos());
        assert_eq!(sin[position * 16 + i], angle.sin());
    }
    assert!(
        m.graph
            .initializers
            .iter()
            .all(|t| &*t.name != b"frequencies")
    );
}

#[test]
fn a_rotary_embedding_that_differs_is_left_alone() {
    for r in [
        // Both halves from the even channels: not a rotation.
        Rotary {
            odd_start: 0,
            ..REAL
        },
        // Fewer frequencies than the rotated pairs.
        Rotary {
            frequencies: 8,
            ..REAL
        },
        // Channels of the head left out after the rotated ones.
        Rotary {
            kept_end: 48,
            ..REAL
        },
    ] {
        let mut m = rotary_model(&r);
        let before = branch(&m).nodes.len();
        assert_eq!(fuse(&mut m), Fused::default());
        assert_eq!(branch(&m).nodes.len(), before);
        assert_eq!(m.graph.initializers.len(), 1);
    }
}

/// Every node of `m`'s graphs, by its place: the main graph's, then the branch's.
fn places(m: &Model<'static>) -> Vec<(bool, usize)> {
    let main = (0..m.graph.nodes.len()).map(|i| (false, i));
    let in_branch = match m.graph.nodes.first().map(|n| &n.attributes[..]) {
        Some(
            [
                Attribute {
                    value: Value::Graph(g),
                    ..
                },
            ],
        ) => g.nodes.len(),
        _ => 0,
    };
    main.chain((0..in_branch).map(|i| (true, i))).collect()
}

fn node_at<'m>(m: &'m mut Model<'static>, (in_branch, i): (bool, usize)) -> &'m mut Node<'static> {
    if !in_branch {
        return &mut m.graph.nodes[i];
    }
    match &mut m.graph.nodes[0].attributes[0].value {
        Value::Graph(g) => &mut g.nodes[i],
        _ => panic!("an If branch"),
    }
}

#[test]
fn a_damaged_graph_is_left_as_it_is_without_a_panic_or_an_endless_walk() {
    let builders: [fn() -> Model<'static>; 3] = [
        || model(norm_graph(2.0, -1)),
        || rotary_model(&REAL),
        || model(scale_graph(&BOTH_SCALED)),
    ];
    for build in builders {
        for place in places(&build()) {
            // A node of the pattern that lost its inputs, or all but the first: nothing fused.
            for keep in [0, 1] {
                let mut m = build();
                let n = node_at(&mut m, place);
                if &*n.op == b"If" || n.inputs.len() <= keep {
                    continue;
                }
                n.inputs.truncate(keep);
                let fused = fuse(&mut m);
                assert_eq!(fused, Fused::default(), "{place:?} keeping {keep}");
            }
            // A node that reads its own output: a walk back through it never ends.
            let mut m = build();
            let n = node_at(&mut m, place);
            if let Some(first) = n.inputs.first_mut() {
                *first = n.outputs[0].clone();
            }
            fuse(&mut m);
        }
    }
}

/// What an attention test graph differs in.
struct Scaled {
    /// Start of the slice of the query's shape that gives the head's width (-1: the last).
    width_from: i64,
    /// The keys' factor is the one computed from the width (else a vector of two).
    key_factor_one_element: bool,
    /// The query comes split into heads (`Transpose(Reshape(..))`), else straight from an input.
    query_in_heads: bool,
    /// How the width is taken from the query's shape.
    width_by: Width,
}

#[derive(Clone, Copy, PartialEq)]
enum Width {
    /// `Slice(shape, width_from, end)`.
    Slice,
    /// `Gather(shape, 3)`, the index a scalar.
    Gather,
    /// `Gather(shape, [3])`: one element too, but not known to be here.
    GatherByList,
}

const BOTH_SCALED: Scaled = Scaled {
    width_from: -1,
    key_factor_one_element: true,
    query_in_heads: true,
    width_by: Width::Slice,
};

/// `MatMul(q * s, k * s)`, `s = sqrt(1 / sqrt(width))` computed from the query's shape as
/// moonshine-base does it, `q` two heads of 8 channels, `k` already transposed.
fn scale_graph(s: &Scaled) -> Graph<'static> {
    let mut nodes = Vec::new();
    let query = if s.query_in_heads {
        nodes.push(node("Reshape", &["proj", "heads"], "split", vec![]));
        let perm = vec![("perm", Value::Ints(vec![0, 2, 1, 3]))];
        nodes.push(node("Transpose", &["split"], "q", perm));
        "q"
    } else {
        "proj"
    };
    nodes.extend([
        node("Shape", &[query], "q_shape", vec![]),
        match s.width_by {
            Width::Slice => node("Slice", &["q_shape", "from", "to_end"], "width", vec![]),
            Width::Gather => node("Gather", &["q_shape", "last"], "width", vec![]),
            Width::GatherByList => node("Gather", &["q_shape", "last_list"], "width", vec![]),
        },
        node("Cast", &["width"], "width_f", vec![("to", Value::Int(1))]),
        node("Sqrt", &["width_f"], "root", vec![]),
        node("Div", &["one", "root"], "inverse", vec![]),
        node("Sqrt", &["inverse"], "s1", vec![]),
        node("Sqrt", &["inverse"], "s2", vec![]),
        node("Mul", &[query, "s1"], "qa", vec![]),
    ]);
    let key_factor = if s.key_factor_one_element {
        "s2"
    } else {
        "pair"
    };
    nodes.push(node("Mul", &["keys_t", key_factor], "kb", vec![]));
    nodes.push(node("MatMul", &["qa", "kb"], "scores", vec![]));
    Graph {
        nodes,
        initializers: vec![
            longs("heads", &[0, 0, 2, 8]),
            longs("from", &[s.width_from]),
            longs("to_end", &[i64::MAX]),
            Tensor {
                dims: Vec::new(),
                ..longs("last", &[3])
            },
            longs("last_list", &[3]),
            floats("one", &[1], &[1.0]),
            floats("pair", &[2], &[0.5, 0.25]),
        ],
        inputs: vec![value("proj"), value("keys_t")],
        outputs: vec![value("scores")],
    }
}

#[test]
fn an_attention_product_scaled_on_both_sides_is_scaled_on_the_query_by_channel() {
    let gathered = Scaled {
        width_by: Width::Gather,
        ..BOTH_SCALED
    };
    for scaled in [BOTH_SCALED, gathered] {
        attention_scale_moves_to_the_query(&scaled);
    }
}

fn attention_scale_moves_to_the_query(scaled: &Scaled) {
    let mut m = model(scale_graph(scaled));
    assert_eq!(
        fuse(&mut m),
        Fused {
            attention_scales: 1,
            ..Fused::default()
        }
    );
    // The factors' product widened to the head's 8 channels, on the query alone; the two
    // scaled copies are gone.
    assert_eq!(
        ops(&m.graph),
        [
            "Reshape",
            "Transpose",
            "Shape",
            if scaled.width_by == Width::Slice {
                "Slice"
            } else {
                "Gather"
            },
            "Cast",
            "Sqrt",
            "Div",
            "Sqrt",
            "Sqrt",
            "Mul",
            "Expand",
            "Mul",
            "MatMul"
        ]
    );
    let at = |i: usize| &m.graph.nodes[i];
    assert_eq!(at(9).inputs, [name("s1"), name("s2")]);
    assert_eq!(
        at(10).inputs,
        [at(9).outputs[0].clone(), name("verbatim.width.8")]
    );
    assert_eq!(at(11).inputs, [name("q"), at(10).outputs[0].clone()]);
    assert_eq!(at(12).inputs, [at(11).outputs[0].clone(), name("keys_t")]);
    assert_eq!(at(12).outputs, [name("scores")]);
    let width = m
        .graph
        .initializers
        .iter()
        .find(|t| t.name == name("verbatim.width.8"))
        .expect("the width");
    assert_eq!((width.data_type, &width.dims[..]), (INT64, &[1][..]));
    assert_eq!(&width.raw[..], &8i64.to_le_bytes());
    // Nothing here needs a newer opset.
    assert_eq!(m.opsets[0], (name(""), 14));
}

#[test]
fn an_attention_product_that_differs_is_left_alone() {
    let look_alikes = [
        // Two dimensions of the shape: the factor is not one element.
        Scaled {
            width_from: -2,
            ..BOTH_SCALED
        },
        // The keys scaled by a vector: it does not move across the product.
        Scaled {
            key_factor_one_element: false,
            ..BOTH_SCALED
        },
        // A query of unknown width.
        Scaled {
            query_in_heads: false,
            ..BOTH_SCALED
        },
        // The width gathered by a list of indices: not taken as one element.
        Scaled {
            width_by: Width::GatherByList,
            ..BOTH_SCALED
        },
    ];
    for (i, s) in look_alikes.iter().enumerate() {
        let mut m = model(scale_graph(s));
        let before = ops(&m.graph);
        assert_eq!(fuse(&mut m), Fused::default(), "look-alike {i}");
        assert_eq!(ops(&m.graph), before, "look-alike {i}");
    }
}
