//! Tests on small ORT flatbuffers built here (a top-down builder: children after parents, so every
//! uoffset points forward): the ONNX written back is read with a small protobuf reader, and
//! damaged input never panics.

use super::schema::*;
use super::{FormatError, onnx_from_ort};

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
    F32s(Vec<f32>),
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
        F::F32s(v) => raw(
            b,
            v.len(),
            4,
            &v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>(),
        ),
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
const SCALE: f32 = 0.0093;

struct Opts {
    /// The offset, in scales.
    offset_steps: f32,
    /// The embedding also reads the weight (a Gather), so its chain stays.
    gathered: bool,
    /// The Gather's `axis` attribute, when it has one.
    gather_axis: Option<i64>,
    perm: &'static [i64],
}

const DEFAULT: Opts = Opts {
    offset_steps: 21.0,
    gathered: true,
    gather_axis: None,
    perm: &[1, 0],
};

/// Main graph: Cast(q) -> Mul(s) -> Add(z) -> w, [Gather(w)], MatMul(x, w) and an If whose
/// branches compute Transpose(w) -> MatMul(h, wt), as moonshine-base's decoder does.
fn model(o: &Opts) -> Vec<u8> {
    let branch = |tag: &str| {
        let wt = format!("wt_{tag}");
        T(vec![
            (
                2,
                F::Tables(vec![
                    node(
                        0,
                        "Transpose",
                        &["w"],
                        &[&wt],
                        vec![attr_ints("perm", o.perm)],
                    ),
                    node(1, "MatMul", &["h", &wt], &[&format!("y_{tag}")], vec![]),
                ]),
            ),
            (6, strs(&[&format!("y_{tag}")])),
        ])
    };
    let mut nodes = vec![
        node(0, "Cast", &["q"], &["qc"], vec![attr_i("to", FLOAT as i64)]),
        node(1, "Mul", &["qc", "s"], &["qm"], vec![]),
        node(2, "Add", &["qm", "z"], &["w"], vec![]),
        node(3, "MatMul", &["x", "w"], &["xw"], vec![]),
        node(
            4,
            "If",
            &["cond"],
            &["y"],
            vec![
                attr_graph("then_branch", branch("then")),
                attr_graph("else_branch", branch("else")),
            ],
        ),
    ];
    let mut outputs = vec!["xw", "y"];
    if o.gathered {
        let axis = o
            .gather_axis
            .map(|a| attr_i("axis", a))
            .into_iter()
            .collect();
        nodes.push(node(5, "Gather", &["w", "ids"], &["emb"], axis));
        outputs.push("emb");
    }
    let graph = T(vec![
        (
            0,
            F::Tables(vec![
                tensor("q", INT8, &[2, 3], Q.iter().map(|&q| q as u8).collect()),
                tensor("s", FLOAT, &[], f32s(&[SCALE])),
                tensor("z", FLOAT, &[1], f32s(&[o.offset_steps * SCALE])),
            ]),
        ),
        (
            1,
            F::Tables(vec![value_info("x", &[4, 2]), value_info("h", &[1, 3])]),
        ),
        (2, F::Tables(nodes)),
        (5, strs(&["x", "h", "cond", "ids"])),
        (6, strs(&outputs)),
    ]);
    let opsets = F::Tables(vec![T(vec![(0, s("")), (1, F::I64(14))])]);
    build(&T(vec![(
        1,
        F::Table(T(vec![
            (0, F::I64(10)),
            (1, opsets),
            (2, s("test")),
            (7, F::Table(graph)),
        ])),
    )]))
}

/// A protobuf field's value.
#[derive(Debug, Clone, Copy)]
enum Wire<'a> {
    Varint(u64),
    Fixed32(u32),
    Bytes(&'a [u8]),
}

/// The fields of one protobuf message, in order.
fn fields(mut b: &[u8]) -> Vec<(u32, Wire<'_>)> {
    fn varint(b: &mut &[u8]) -> u64 {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = b[0];
            *b = &b[1..];
            v |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                break;
            }
        }
        v
    }
    let mut out = Vec::new();
    while !b.is_empty() {
        let key = varint(&mut b);
        let value = match key & 7 {
            0 => Wire::Varint(varint(&mut b)),
            5 => {
                let v = u32::from_le_bytes(b[..4].try_into().unwrap());
                b = &b[4..];
                Wire::Fixed32(v)
            }
            2 => {
                let n = varint(&mut b) as usize;
                let (v, rest) = b.split_at(n);
                b = rest;
                Wire::Bytes(v)
            }
            w => panic!("wire type {w}"),
        };
        out.push(((key >> 3) as u32, value));
    }
    out
}

fn all(msg: &[u8], field: u32) -> Vec<&[u8]> {
    fields(msg)
        .into_iter()
        .filter(|(f, _)| *f == field)
        .map(|(_, v)| match v {
            Wire::Bytes(b) => b,
            other => panic!("field {field}: {other:?}"),
        })
        .collect()
}

fn one(msg: &[u8], field: u32) -> &[u8] {
    let found = all(msg, field);
    assert_eq!(found.len(), 1, "field {field}");
    found[0]
}

fn varint_of(msg: &[u8], field: u32) -> Option<u64> {
    fields(msg).into_iter().find_map(|(f, v)| match v {
        Wire::Varint(n) if f == field => Some(n),
        _ => None,
    })
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

/// A NodeProto as (op_type, domain, inputs, outputs).
type NodeView = (String, String, Vec<String>, Vec<String>);

fn node_view(n: &[u8]) -> NodeView {
    let names = |field| all(n, field).into_iter().map(text).collect();
    let domain = all(n, 7).first().map(|d| text(d)).unwrap_or_default();
    (text(one(n, 4)), domain, names(1), names(2))
}

/// An initializer (TensorProto) as (name, data type, dims, raw data).
fn tensor_view(t: &[u8]) -> (String, u64, Vec<u64>, Vec<u8>) {
    let mut dims = Vec::new();
    for packed in all(t, 1) {
        let mut rest = packed;
        while !rest.is_empty() {
            let (n, used) = leb128(rest);
            dims.push(n);
            rest = &rest[used..];
        }
    }
    let raw = all(t, 9).first().map(|r| r.to_vec()).unwrap_or_default();
    (text(one(t, 8)), varint_of(t, 2).unwrap(), dims, raw)
}

fn leb128(b: &[u8]) -> (u64, usize) {
    let mut v = 0;
    for (i, &byte) in b.iter().enumerate() {
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte < 0x80 {
            return (v, i + 1);
        }
    }
    panic!("unterminated varint")
}

/// The main graph's GraphProto and the nodes of the If's two branches.
fn graphs(onnx: &[u8]) -> (&[u8], Vec<Vec<NodeView>>) {
    let graph = one(onnx, 7);
    let branches = all(graph, 1)
        .into_iter()
        .flat_map(|n| all(n, 5))
        .filter(|a| varint_of(a, 20) == Some(5))
        .map(|a| all(one(a, 6), 1).into_iter().map(node_view).collect())
        .collect();
    (graph, branches)
}

#[test]
fn int8_matmuls_become_dynamic_quantize_matmul_with_the_offset_as_zero_point() {
    let converted = onnx_from_ort(&model(&DEFAULT)).unwrap();
    assert_eq!(converted.int8_matmuls, 3);
    let onnx = &converted.onnx;
    assert_eq!(varint_of(onnx, 1), Some(10), "ir_version");
    assert_eq!(text(one(one(onnx, 8), 1)), "");
    let (graph, branches) = graphs(onnx);

    // The main graph: the MatMul takes q, its scale and zero; the Gather takes q's rows and
    // the chain's arithmetic moves after it, so the float weight is never made.
    let nodes: Vec<_> = all(graph, 1).into_iter().map(node_view).collect();
    let ops: Vec<&str> = nodes.iter().map(|n| n.0.as_str()).collect();
    assert_eq!(
        ops,
        [
            "DynamicQuantizeMatMul",
            "If",
            "Gather",
            "Cast",
            "Mul",
            "Add"
        ]
    );
    let zero = "verbatim.int8_zero.-21";
    assert_eq!(nodes[0].1, "com.microsoft");
    assert_eq!(nodes[0].2, ["x", "q", "s", zero]);
    assert_eq!(nodes[0].3, ["xw"]);
    let (rows, floats) = ("emb.verbatim_int8_rows", "emb.verbatim_float_rows");
    let scaled = "emb.verbatim_scaled_rows";
    let wiring: Vec<(Vec<&str>, Vec<&str>)> = nodes[2..]
        .iter()
        .map(|n| {
            (
                n.2.iter().map(String::as_str).collect(),
                n.3.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        wiring,
        [
            (vec!["q", "ids"], vec![rows]),
            (vec![rows], vec![floats]),
            (vec![floats, "s"], vec![scaled]),
            (vec![scaled, "z"], vec!["emb"]),
        ]
    );

    // Each branch: the transpose is an initializer now, read by the integer product.
    assert_eq!(branches.len(), 2);
    for (branch, tag) in branches.iter().zip(["then", "else"]) {
        assert_eq!(branch.len(), 1, "{branch:?}");
        let (op, domain, inputs, outputs) = &branch[0];
        assert_eq!(
            (op.as_str(), domain.as_str()),
            ("DynamicQuantizeMatMul", "com.microsoft")
        );
        assert_eq!(inputs, &["h", "q.verbatim_transposed", "s", zero]);
        assert_eq!(outputs, &[format!("y_{tag}")]);
    }

    // weight = s * (q + 21) = s * (q - zero): zero = -21; the transpose is q's, column by column.
    let inits: Vec<_> = all(graph, 5).into_iter().map(tensor_view).collect();
    let find = |name: &str| {
        inits
            .iter()
            .find(|t| t.0 == name)
            .unwrap_or_else(|| panic!("{name}"))
    };
    assert_eq!(find(zero).1, INT8 as u64);
    assert_eq!(find(zero).3, [(-21i8) as u8]);
    let transposed = find("q.verbatim_transposed");
    assert_eq!(transposed.2, [3, 2]);
    let q = |r: usize, c: usize| Q[r * 3 + c] as u8;
    assert_eq!(
        transposed.3,
        [q(0, 0), q(1, 0), q(0, 1), q(1, 1), q(0, 2), q(1, 2)]
    );
    assert_eq!(find("q").3, Q.map(|v| v as u8));

    // The graph's inputs keep their types; initializers are not inputs.
    let inputs: Vec<String> = all(graph, 11)
        .into_iter()
        .map(|v| text(one(v, 1)))
        .collect();
    assert_eq!(inputs, ["x", "h", "cond", "ids"]);
    let x_type = one(one(all(graph, 11)[0], 2), 1);
    assert_eq!(varint_of(x_type, 1), Some(FLOAT as u64));
    let dims: Vec<u64> = all(one(x_type, 2), 1)
        .into_iter()
        .map(|d| varint_of(d, 1).unwrap())
        .collect();
    assert_eq!(dims, [4, 2]);
}

#[test]
fn a_chain_only_matrix_products_read_is_dropped_with_its_offset() {
    let converted = onnx_from_ort(&model(&Opts {
        gathered: false,
        ..DEFAULT
    }))
    .unwrap();
    let (graph, _) = graphs(&converted.onnx);
    let ops: Vec<String> = all(graph, 1).into_iter().map(|n| node_view(n).0).collect();
    assert_eq!(ops, ["DynamicQuantizeMatMul", "If"]);
    let inits: Vec<String> = all(graph, 5)
        .into_iter()
        .map(|t| tensor_view(t).0)
        .collect();
    assert!(!inits.contains(&"z".to_string()), "{inits:?}");
    assert!(inits.contains(&"s".to_string()) && inits.contains(&"q".to_string()));
}

#[test]
fn weights_without_a_whole_zero_point_stay_float() {
    for offset_steps in [0.5, 300.0, -200.0] {
        let converted = onnx_from_ort(&model(&Opts {
            offset_steps,
            ..DEFAULT
        }))
        .unwrap();
        assert_eq!(converted.int8_matmuls, 0, "offset {offset_steps} scales");
        let (graph, branches) = graphs(&converted.onnx);
        let ops: Vec<String> = all(graph, 1).into_iter().map(|n| node_view(n).0).collect();
        assert_eq!(ops, ["Cast", "Mul", "Add", "MatMul", "If", "Gather"]);
        assert!(
            branches
                .iter()
                .all(|b| b[0].0 == "Transpose" && b[1].0 == "MatMul")
        );
    }
}

#[test]
fn a_gather_of_rows_reads_int8_rows_and_one_along_columns_keeps_the_chain() {
    let ops = |gather_axis| {
        let converted = onnx_from_ort(&model(&Opts {
            gather_axis,
            ..DEFAULT
        }))
        .unwrap();
        let (graph, _) = graphs(&converted.onnx);
        all(graph, 1)
            .into_iter()
            .map(|n| node_view(n).0)
            .collect::<Vec<_>>()
    };
    let rows = [
        "DynamicQuantizeMatMul",
        "If",
        "Gather",
        "Cast",
        "Mul",
        "Add",
    ];
    assert_eq!(ops(Some(0)), rows);
    assert_eq!(
        ops(Some(1)),
        [
            "Cast",
            "Mul",
            "Add",
            "DynamicQuantizeMatMul",
            "If",
            "Gather"
        ]
    );
}

#[test]
fn only_a_transpose_of_rows_and_columns_is_rewritten() {
    let converted = onnx_from_ort(&model(&Opts {
        perm: &[0, 1],
        ..DEFAULT
    }))
    .unwrap();
    assert_eq!(converted.int8_matmuls, 1);
    let (_, branches) = graphs(&converted.onnx);
    assert!(branches.iter().all(|b| b[1].0 == "MatMul"), "{branches:?}");
}

#[test]
fn attributes_of_every_kind_are_written_back() {
    let attr = |name: &str, kind: i32, slot: usize, value: F| {
        T(vec![(0, s(name)), (2, F::I32(kind)), (slot, value)])
    };
    let attributes = vec![
        attr("f", ATTR_TYPE_FLOAT, ATTR_F, F::U32(0.5f32.to_bits())),
        attr("i", ATTR_TYPE_INT, ATTR_I, F::I64(-3)),
        attr("s", ATTR_TYPE_STRING, ATTR_S, s("abc")),
        attr(
            "t",
            ATTR_TYPE_TENSOR,
            ATTR_T,
            F::Table(tensor("t0", FLOAT, &[2], f32s(&[1.0, -2.0]))),
        ),
        attr(
            "fs",
            ATTR_TYPE_FLOATS,
            ATTR_FLOATS,
            F::F32s(vec![1.5, -0.25]),
        ),
        attr("is", ATTR_TYPE_INTS, ATTR_INTS, F::I64s(vec![7, -1])),
        attr("ss", ATTR_TYPE_STRINGS, ATTR_STRINGS, strs(&["x", "yz"])),
    ];
    let graph = T(vec![
        (
            2,
            F::Tables(vec![node(0, "Custom", &["a"], &["b"], attributes)]),
        ),
        (5, strs(&["a"])),
        (6, strs(&["b"])),
    ]);
    let model = build(&T(vec![(1, F::Table(T(vec![(7, F::Table(graph))])))]));
    let onnx = onnx_from_ort(&model).unwrap().onnx;
    let node = one(one(&onnx, 7), 1);
    assert_eq!(node_view(node).0, "Custom");
    // AttributeProto: name 1, f 2, i 3, s 4, t 5, floats 7, ints 8, strings 9, type 20.
    let attributes: Vec<Vec<(u32, Wire)>> = all(node, 5).into_iter().map(fields).collect();
    let kinds: Vec<u64> = attributes
        .iter()
        .map(|a| match a.last() {
            Some((20, Wire::Varint(kind))) => *kind,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(kinds, [1, 2, 3, 4, 6, 7, 8]);
    let bytes = |a: &[(u32, Wire)], field: u32| -> Vec<u8> {
        a.iter()
            .find_map(|(f, v)| match v {
                Wire::Bytes(b) if *f == field => Some(b.to_vec()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("field {field}: {a:?}"))
    };
    assert!(matches!(attributes[0][1], (2, Wire::Fixed32(bits)) if f32::from_bits(bits) == 0.5));
    assert!(matches!(attributes[1][1], (3, Wire::Varint(v)) if v as i64 == -3));
    assert_eq!(bytes(&attributes[2], 4), b"abc");
    let t = tensor_view(&bytes(&attributes[3], 5));
    assert_eq!((t.0.as_str(), t.1, t.2), ("t0", FLOAT as u64, vec![2]));
    assert_eq!(t.3, f32s(&[1.0, -2.0]));
    let floats: Vec<f32> = bytes(&attributes[4], 7)
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(floats, [1.5, -0.25]);
    let mut ints = Vec::new();
    let packed = bytes(&attributes[5], 8);
    let mut rest = packed.as_slice();
    while !rest.is_empty() {
        let (v, used) = leb128(rest);
        ints.push(v as i64);
        rest = &rest[used..];
    }
    assert_eq!(ints, [7, -1]);
    let strings: Vec<String> = attributes[6]
        .iter()
        .filter_map(|(f, v)| match v {
            Wire::Bytes(b) if *f == 9 => Some(text(b)),
            _ => None,
        })
        .collect();
    assert_eq!(strings, ["x", "yz"]);
}

#[test]
fn refuses_other_formats() {
    assert_eq!(onnx_from_ort(b"").unwrap_err(), FormatError::NotOrtFormat);
    let mut b = model(&DEFAULT);
    b[4..8].copy_from_slice(b"ONNX");
    assert_eq!(onnx_from_ort(&b).unwrap_err(), FormatError::NotOrtFormat);
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

#[test]
fn truncated_small_model_never_panics() {
    let b = model(&DEFAULT);
    let errors = (0..b.len())
        .filter(|&n| onnx_from_ort(&b[..n]).is_err())
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
    // (refused, converted without int8 products, converted with some)
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
        let slot = match onnx_from_ort(&d) {
            Err(_) => 0,
            Ok(c) => {
                assert!(c.onnx.len() <= 4 * d.len() + 4096);
                if c.int8_matmuls == 0 { 1 } else { 2 }
            }
        };
        counts[slot] += 1;
    }
    assert!(counts.iter().all(|&c| c > 0), "{counts:?}");
}
