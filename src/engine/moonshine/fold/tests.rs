//! Tests on small ORT flatbuffers built here (a top-down builder: children after parents, so every
//! uoffset points forward, as the rewrite expects): folding, and damaged input never panicking.

use super::fb::Reader;
use super::graph::*;
use super::{FoldError, fold_dequantized_weights};

enum F {
    I8(i8),
    U8(u8),
    I32(i32),
    U32(u32),
    I64(i64),
    Str(String),
    Table(T),
    Tables(Vec<T>),
    Strs(Vec<String>),
    Bytes(Vec<u8>),
    I64s(Vec<i64>),
    /// Vector of structs: (element size, element bytes).
    Structs(usize, Vec<u8>),
}

struct T(Vec<(usize, F)>);

impl F {
    fn inline_size(&self) -> usize {
        match self {
            F::I8(_) | F::U8(_) => 1,
            F::I64(_) => 8,
            _ => 4,
        }
    }
}

fn pad(b: &mut Vec<u8>, align: usize, extra: usize) {
    while !(b.len() + extra).is_multiple_of(align) {
        b.push(0);
    }
}

fn put(b: &mut [u8], pos: usize, bytes: &[u8]) {
    b[pos..pos + bytes.len()].copy_from_slice(bytes);
}

fn write_table(b: &mut Vec<u8>, t: &T) -> usize {
    let slots = t.0.iter().map(|(s, _)| s + 1).max().unwrap_or(0);
    let mut offsets = vec![0u16; slots];
    let mut size: usize = 4;
    for (slot, f) in &t.0 {
        let n = f.inline_size();
        size = size.div_ceil(n) * n;
        offsets[*slot] = size as u16;
        size += n;
    }
    pad(b, 2, 0);
    let vt = b.len();
    b.extend_from_slice(&(4 + 2 * slots as u16).to_le_bytes());
    b.extend_from_slice(&(size as u16).to_le_bytes());
    offsets
        .iter()
        .for_each(|o| b.extend_from_slice(&o.to_le_bytes()));
    pad(b, 8, 0);
    let tp = b.len();
    b.resize(tp + size, 0);
    put(b, tp, &((tp - vt) as i32).to_le_bytes());
    for (slot, f) in &t.0 {
        let p = tp + offsets[*slot] as usize;
        match f {
            F::I8(v) => put(b, p, &v.to_le_bytes()),
            F::U8(v) => put(b, p, &[*v]),
            F::I32(v) => put(b, p, &v.to_le_bytes()),
            F::U32(v) => put(b, p, &v.to_le_bytes()),
            F::I64(v) => put(b, p, &v.to_le_bytes()),
            child => {
                let c = write_child(b, child);
                put(b, p, &((c - p) as u32).to_le_bytes());
            }
        }
    }
    tp
}

fn write_string(b: &mut Vec<u8>, s: &str) -> usize {
    pad(b, 4, 0);
    let p = b.len();
    b.extend_from_slice(&(s.len() as u32).to_le_bytes());
    b.extend_from_slice(s.as_bytes());
    b.push(0);
    p
}

/// A vector of offsets whose targets `write` appends after it.
fn write_offsets(
    b: &mut Vec<u8>,
    n: usize,
    mut write: impl FnMut(&mut Vec<u8>, usize) -> usize,
) -> usize {
    pad(b, 4, 0);
    let p = b.len();
    b.extend_from_slice(&(n as u32).to_le_bytes());
    b.resize(p + 4 + 4 * n, 0);
    for i in 0..n {
        let c = write(b, i);
        put(
            b,
            p + 4 + 4 * i,
            &((c - (p + 4 + 4 * i)) as u32).to_le_bytes(),
        );
    }
    p
}

fn write_child(b: &mut Vec<u8>, f: &F) -> usize {
    let raw = |b: &mut Vec<u8>, count: usize, align: usize, data: &[u8]| {
        pad(b, align, 4);
        let p = b.len();
        b.extend_from_slice(&(count as u32).to_le_bytes());
        b.extend_from_slice(data);
        p
    };
    match f {
        F::Str(s) => write_string(b, s),
        F::Table(t) => write_table(b, t),
        F::Tables(ts) => write_offsets(b, ts.len(), |b, i| write_table(b, &ts[i])),
        F::Strs(ss) => write_offsets(b, ss.len(), |b, i| write_string(b, &ss[i])),
        F::Bytes(d) => raw(b, d.len(), 16, d),
        F::I64s(v) => raw(
            b,
            v.len(),
            8,
            &v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>(),
        ),
        F::Structs(size, d) => raw(b, d.len() / size, 4, d),
        _ => unreachable!("scalars are inline"),
    }
}

fn build(root: &T) -> Vec<u8> {
    let mut b = vec![0u8; 8];
    b[4..8].copy_from_slice(b"ORTM");
    let t = write_table(&mut b, root);
    put(&mut b, 0, &(t as u32).to_le_bytes());
    b
}

fn s(x: &str) -> F {
    F::Str(x.to_string())
}
fn strs(xs: &[&str]) -> F {
    F::Strs(xs.iter().map(|x| x.to_string()).collect())
}
fn tensor(name: &str, dtype: i32, dims: &[i64], raw: Vec<u8>) -> T {
    T(vec![
        (0, s(name)),
        (2, F::I64s(dims.to_vec())),
        (3, F::I32(dtype)),
        (4, F::Bytes(raw)),
    ])
}
fn node(index: u32, op: &str, ins: &[&str], outs: &[&str], attrs: Vec<T>) -> T {
    let mut fields = vec![
        (0, s("")),
        (2, s("")),
        (4, F::U32(index)),
        (5, s(op)),
        (8, strs(ins)),
        (9, strs(outs)),
    ];
    fields.push((10, F::Tables(attrs)));
    T(fields)
}
fn attr_i(name: &str, i: i64) -> T {
    T(vec![(0, s(name)), (2, F::I32(2)), (4, F::I64(i))])
}
fn attr_ints(name: &str, ints: &[i64]) -> T {
    T(vec![
        (0, s(name)),
        (2, F::I32(7)),
        (9, F::I64s(ints.to_vec())),
    ])
}
fn attr_graph(name: &str, g: T) -> T {
    T(vec![
        (0, s(name)),
        (2, F::I32(ATTR_TYPE_GRAPH)),
        (7, F::Table(g)),
    ])
}
fn edge(node: u32, ins: &[u32], outs: &[u32]) -> T {
    let ends = |ns: &[u32]| {
        F::Structs(
            12,
            ns.iter()
                .flat_map(|&n| [n, 0, 0])
                .flat_map(u32::to_le_bytes)
                .collect(),
        )
    };
    T(vec![(0, F::U32(node)), (1, ends(ins)), (2, ends(outs))])
}
fn value_info(name: &str, dims: &[i64]) -> T {
    let dim = |d: i64| {
        T(vec![(
            0,
            F::Table(T(vec![(0, F::I8(DIM_TYPE_VALUE)), (1, F::I64(d))])),
        )])
    };
    let shape = T(vec![(0, F::Tables(dims.iter().map(|&d| dim(d)).collect()))]);
    let tts = T(vec![(0, F::I32(FLOAT)), (1, F::Table(shape))]);
    let type_info = T(vec![(1, F::U8(TYPE_INFO_TENSOR)), (2, F::Table(tts))]);
    T(vec![(0, s(name)), (2, F::Table(type_info))])
}
fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

const Q: [i8; 6] = [-128, -1, 0, 1, 7, 127];
const OFFSET: f32 = -0.3;

/// A scale for which `q * scale + OFFSET` rounded twice differs from a fused multiply-add for some q.
fn scale() -> f32 {
    (1..10_000)
        .map(|i| 0.01 + i as f32 * 1.37e-5)
        .find(|&s| {
            Q.iter()
                .any(|&q| (q as f32) * s + OFFSET != (q as f32).mul_add(s, OFFSET))
        })
        .expect("a scale where rounding differs")
}

struct Opts {
    cast_to: i64,
    scale_extra_use: bool,
    else_transpose_out: &'static str,
    mul_out_is_graph_output: bool,
}

const DEFAULT: Opts = Opts {
    cast_to: FLOAT as i64,
    scale_extra_use: false,
    else_transpose_out: "wt",
    mul_out_is_graph_output: false,
};

/// Main graph: Cast(q) -> Mul(s) -> Add(z) -> w, Gather(w), If(then/else: Transpose(w) -> MatMul).
fn model(o: &Opts) -> Vec<u8> {
    let branch = |out: &str| {
        T(vec![
            (
                2,
                F::Tables(vec![
                    node(
                        0,
                        "Transpose",
                        &["w"],
                        &[out],
                        vec![attr_ints("perm", &[1, 0])],
                    ),
                    node(1, "MatMul", &["h", out], &["y"], vec![]),
                ]),
            ),
            (4, F::Tables(vec![edge(0, &[], &[1]), edge(1, &[0], &[])])),
            (6, strs(&["y"])),
        ])
    };
    let mut nodes = vec![
        node(0, "Cast", &["q"], &["qc"], vec![attr_i("to", o.cast_to)]),
        node(1, "Mul", &["qc", "s"], &["qm"], vec![]),
        node(2, "Add", &["qm", "z"], &["w"], vec![]),
        node(3, "Gather", &["w", "ids"], &["emb"], vec![]),
        node(
            4,
            "If",
            &["cond"],
            &["y"],
            vec![
                attr_graph("then_branch", branch("wt")),
                attr_graph("else_branch", branch(o.else_transpose_out)),
            ],
        ),
    ];
    nodes[4].0.push((12, strs(&["w"])));
    if o.scale_extra_use {
        nodes.push(node(5, "Mul", &["emb", "s"], &["emb2"], vec![]));
    }
    let mut outputs = vec!["emb", "y"];
    if o.mul_out_is_graph_output {
        outputs.push("qm");
    }
    let graph = T(vec![
        (
            0,
            F::Tables(vec![
                tensor("q", INT8, &[2, 3], Q.iter().map(|&q| q as u8).collect()),
                tensor("s", FLOAT, &[], f32s(&[scale()])),
                tensor("z", FLOAT, &[1], f32s(&[OFFSET])),
                tensor("other", FLOAT, &[2], f32s(&[1.0, 2.0])),
            ]),
        ),
        (
            1,
            F::Tables(vec![
                value_info("qc", &[2, 3]),
                value_info("qm", &[2, 3]),
                value_info("w", &[2, 3]),
            ]),
        ),
        (2, F::Tables(nodes)),
        (
            4,
            F::Tables(vec![
                edge(0, &[], &[1]),
                edge(1, &[0], &[2]),
                edge(2, &[1], &[3, 4]),
                edge(3, &[2], &[]),
                edge(4, &[2], &[]),
            ]),
        ),
        (6, strs(&outputs)),
    ]);
    build(&T(vec![(1, F::Table(T(vec![(7, F::Table(graph))])))]))
}

/// (node index, input edge nodes, output edge nodes)
type Edge = (u32, Vec<u32>, Vec<u32>);

struct View {
    inits: Vec<(String, i32, Vec<i64>, Vec<u8>)>,
    nodes: Vec<(u32, String)>,
    edges: Vec<Edge>,
    subgraph_nodes: Vec<Vec<String>>,
    subgraph_edges: Vec<Vec<Edge>>,
    value_info_dims: Vec<(String, Vec<i64>)>,
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

/// Reads back what the rewrite touches, with the crate's own reader.
fn view(b: &[u8]) -> View {
    let r = Reader::new(b);
    let g = main_graph(&r).unwrap();
    let graph = read_graph(&r, g).unwrap();
    let edges = |g: usize| {
        r.tables(g, GRAPH_NODE_EDGES)
            .unwrap()
            .into_iter()
            .map(|e| {
                let ends = |slot| {
                    let v = r.vector(e, slot, 12).unwrap().unwrap();
                    (0..v.len).map(|j| r.u32(v.at(j)).unwrap()).collect()
                };
                (
                    r.field_u32(e, EDGE_NODE, 0).unwrap(),
                    ends(EDGE_INPUTS),
                    ends(EDGE_OUTPUTS),
                )
            })
            .collect::<Vec<_>>()
    };
    let subs = subgraphs(&r, &graph).unwrap();
    let value_info_dims = r
        .tables(g, GRAPH_NODE_ARGS)
        .unwrap()
        .into_iter()
        .map(|vi| {
            let ti = r.table(vi, VALUE_INFO_TYPE).unwrap().unwrap();
            let shape = r
                .table(
                    r.table(ti, TYPE_INFO_VALUE).unwrap().unwrap(),
                    TENSOR_TYPE_SHAPE,
                )
                .unwrap()
                .unwrap();
            let dims = r.tables(shape, SHAPE_DIMS).unwrap().into_iter();
            let dims = dims.map(|d| {
                r.field_i64(
                    r.table(d, DIMENSION_VALUE).unwrap().unwrap(),
                    DIM_VALUE_VALUE,
                    0,
                )
                .unwrap()
            });
            (
                text(r.string(vi, VALUE_INFO_NAME).unwrap().unwrap()),
                dims.collect(),
            )
        })
        .collect();
    View {
        inits: r
            .tables(g, GRAPH_INITIALIZERS)
            .unwrap()
            .into_iter()
            .map(|t| {
                let tensor = read_tensor(&r, t).unwrap();
                let raw = tensor.raw.unwrap();
                let data = r.bytes(raw.at(0), raw.len).unwrap().to_vec();
                (
                    text(r.string(t, TENSOR_NAME).unwrap().unwrap()),
                    tensor.data_type,
                    tensor.dims,
                    data,
                )
            })
            .collect(),
        nodes: graph.nodes.iter().map(|n| (n.index, text(n.op))).collect(),
        edges: edges(g),
        subgraph_nodes: subs
            .iter()
            .map(|&sg| {
                read_graph(&r, sg)
                    .unwrap()
                    .nodes
                    .iter()
                    .map(|n| text(n.op))
                    .collect()
            })
            .collect(),
        subgraph_edges: subs.iter().map(|&sg| edges(sg)).collect(),
        value_info_dims,
    }
}

#[test]
fn folds_chain_and_transpose() {
    let input = model(&DEFAULT);
    let before = view(&input);
    assert_eq!(before.nodes.len(), 5);
    let out = fold_dequantized_weights(&input).unwrap();
    assert_eq!((out.chains, out.transposes), (1, 1));
    assert_eq!(&out.bytes[..8], &input[..8]);
    let v = view(&out.bytes);

    let w: Vec<f32> = Q.iter().map(|&q| (q as f32) * scale() + OFFSET).collect();
    assert!(
        Q.iter()
            .zip(&w)
            .any(|(&q, &w)| w != (q as f32).mul_add(scale(), OFFSET))
    );
    let wt: Vec<f32> = [0, 3, 1, 4, 2, 5].iter().map(|&i| w[i]).collect();
    let expect = vec![
        ("w".to_string(), FLOAT, vec![2, 3], f32s(&w)),
        ("wt".to_string(), FLOAT, vec![3, 2], f32s(&wt)),
        ("other".to_string(), FLOAT, vec![2], f32s(&[1.0, 2.0])),
    ];
    assert_eq!(v.inits, expect);
    assert_eq!(
        v.nodes,
        vec![(3, "Gather".to_string()), (4, "If".to_string())]
    );
    assert_eq!(v.edges, vec![(3, vec![], vec![]), (4, vec![], vec![])]);
    assert_eq!(v.subgraph_nodes, vec![vec!["MatMul".to_string()]; 2]);
    assert_eq!(v.subgraph_edges, vec![vec![(1, vec![], vec![])]; 2]);
    let dims: Vec<_> = v
        .value_info_dims
        .iter()
        .map(|(n, d)| (n.as_str(), d.clone()))
        .collect();
    assert_eq!(
        dims,
        vec![("qc", vec![2, 3]), ("wt", vec![3, 2]), ("w", vec![2, 3])]
    );
}

#[test]
fn two_transposed_forms_fold_only_the_chain() {
    let out = fold_dequantized_weights(&model(&Opts {
        else_transpose_out: "wt2",
        ..DEFAULT
    }))
    .unwrap();
    assert_eq!((out.chains, out.transposes), (1, 0));
    let v = view(&out.bytes);
    assert_eq!(
        v.inits.iter().map(|i| i.0.as_str()).collect::<Vec<_>>(),
        ["w", "other"]
    );
    assert_eq!(
        v.subgraph_nodes,
        vec![vec!["Transpose".to_string(), "MatMul".to_string()]; 2]
    );
}

#[test]
fn unchanged_without_pattern() {
    for o in [
        Opts {
            cast_to: 6,
            ..DEFAULT
        },
        Opts {
            scale_extra_use: true,
            ..DEFAULT
        },
        Opts {
            mul_out_is_graph_output: true,
            ..DEFAULT
        },
    ] {
        let input = model(&o);
        let out = fold_dequantized_weights(&input).unwrap();
        assert_eq!((out.chains, out.transposes), (0, 0));
        assert_eq!(out.bytes, input);
    }
}

#[test]
fn refuses_other_formats() {
    for b in [
        &b""[..],
        b"ORTM",
        b"\x08\0\0\0ORTX\0\0\0\0",
        b"\x08\0\0\0ORT",
    ] {
        assert_eq!(
            fold_dequantized_weights(b).unwrap_err(),
            FoldError::NotOrtFormat
        );
    }
}

#[test]
fn transpose_2d_tiled() {
    let (rows, cols) = (70, 45);
    let src: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    let mut dst = vec![0u8; 4 * rows * cols];
    super::rewrite::transpose(&f32s(&src), &mut dst, &[rows, cols], &[1, 0]).unwrap();
    let naive: Vec<f32> = (0..cols)
        .flat_map(|c| (0..rows).map(move |r| (r * cols + c) as f32))
        .collect();
    assert_eq!(dst, f32s(&naive));
    let mut short = vec![0u8; 4];
    assert!(super::rewrite::transpose(&f32s(&src), &mut short, &[rows, cols], &[1, 0]).is_err());
    assert!(
        super::rewrite::transpose(&f32s(&src[1..]), &mut dst[4..], &[rows, cols], &[1, 0]).is_err()
    );
}

#[test]
fn transpose_matches_naive() {
    let dims = [2usize, 3, 4];
    let src: Vec<f32> = (0..24).map(|i| i as f32).collect();
    for perm in [[0, 1, 2], [2, 1, 0], [1, 2, 0], [2, 0, 1]] {
        let mut dst = vec![0u8; 96];
        super::rewrite::transpose(&f32s(&src), &mut dst, &dims, &perm).unwrap();
        let od: Vec<usize> = perm.iter().map(|&a| dims[a]).collect();
        let mut naive = Vec::new();
        for i in 0..od[0] {
            for j in 0..od[1] {
                for k in 0..od[2] {
                    let mut idx = [0; 3];
                    (idx[perm[0]], idx[perm[1]], idx[perm[2]]) = (i, j, k);
                    naive.push(src[idx[0] * 12 + idx[1] * 4 + idx[2]]);
                }
            }
        }
        assert_eq!(dst, f32s(&naive), "perm {perm:?}");
    }
}

/// xorshift64*: a small deterministic generator for the damage tests.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Damaged input must give Ok or Err, never a panic; an Ok output must stay bounded. Returns the
/// number of chains folded (None on error).
fn check_damaged(b: &[u8]) -> Option<usize> {
    let f = fold_dequantized_weights(b).ok()?;
    assert!(f.bytes.len() <= 10 * b.len() + (1 << 20));
    Some(f.chains)
}

/// Counts of (errors, Ok with nothing folded, Ok with chains folded).
fn tally(counts: &mut [usize; 3], r: Option<usize>) {
    counts[match r {
        None => 0,
        Some(0) => 1,
        Some(_) => 2,
    }] += 1;
}

#[test]
fn truncated_small_model_never_panics() {
    let b = model(&DEFAULT);
    let errors = (0..b.len())
        .filter(|&n| fold_dequantized_weights(&b[..n]).is_err())
        .count();
    assert!(
        errors * 10 > b.len() * 9,
        "{errors} of {} truncations refused",
        b.len()
    );
}

#[test]
fn garbled_small_model_never_panics() {
    let b = model(&DEFAULT);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut counts = [0; 3];
    for _ in 0..5_000 {
        let mut d = b.clone();
        for _ in 0..1 + rng.below(4) {
            let p = rng.below(d.len());
            d[p] = if rng.below(4) == 0 {
                d[p] ^ (1 << rng.below(8))
            } else {
                rng.next() as u8
            };
        }
        tally(&mut counts, check_damaged(&d));
    }
    assert!(counts.iter().all(|&c| c > 0));
}
