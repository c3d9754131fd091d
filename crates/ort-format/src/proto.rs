//! Writes [`ir`](super::ir) as an ONNX `ModelProto` (protocol buffers, field numbers from
//! onnx/onnx.proto), which ONNX Runtime optimises as it loads it, as it never does an ORT-format
//! file.

use super::ir::*;

/// The serialised model.
pub fn model(m: &Model) -> Vec<u8> {
    let mut w = Writer::default();
    w.varint(1, m.ir_version as u64);
    w.bytes(2, &m.producer);
    w.message(7, |w| graph(w, &m.graph, b"main"));
    for (domain, version) in &m.opsets {
        w.message(8, |w| {
            w.bytes(1, domain);
            w.varint(2, *version as u64);
        });
    }
    w.buf
}

fn graph(w: &mut Writer, g: &Graph, name: &[u8]) {
    for n in &g.nodes {
        w.message(1, |w| node(w, n));
    }
    w.bytes(2, name);
    for t in &g.initializers {
        w.message(5, |w| tensor(w, t));
    }
    for v in &g.inputs {
        w.message(11, |w| value_info(w, v));
    }
    for v in &g.outputs {
        w.message(12, |w| value_info(w, v));
    }
}

fn node(w: &mut Writer, n: &Node) {
    for input in &n.inputs {
        w.bytes(1, input);
    }
    for output in &n.outputs {
        w.bytes(2, output);
    }
    if !n.name.is_empty() {
        w.bytes(3, &n.name);
    }
    w.bytes(4, &n.op);
    for a in &n.attributes {
        w.message(5, |w| attribute(w, a));
    }
    if !n.domain.is_empty() {
        w.bytes(7, &n.domain);
    }
}

// AttributeProto.AttributeType, as in the ORT schema.
const FLOAT: u64 = 1;
const INT: u64 = 2;
const STRING: u64 = 3;
const TENSOR: u64 = 4;
const GRAPH: u64 = 5;
const FLOATS: u64 = 6;
const INTS: u64 = 7;
const STRINGS: u64 = 8;

fn attribute(w: &mut Writer, a: &Attribute) {
    w.bytes(1, &a.name);
    let kind = match &a.value {
        Value::Float(f) => {
            w.fixed32(2, f.to_bits());
            FLOAT
        }
        Value::Int(i) => {
            w.varint(3, *i as u64);
            INT
        }
        Value::Bytes(s) => {
            w.bytes(4, s);
            STRING
        }
        Value::Tensor(t) => {
            w.message(5, |w| tensor(w, t));
            TENSOR
        }
        Value::Graph(g) => {
            w.message(6, |w| graph(w, g, &a.name));
            GRAPH
        }
        Value::Floats(fs) => {
            w.packed(
                7,
                fs.iter().flat_map(|f| f.to_bits().to_le_bytes()).collect(),
            );
            FLOATS
        }
        Value::Ints(is) => {
            let mut packed = Writer::default();
            is.iter().for_each(|&i| packed.raw_varint(i as u64));
            w.packed(8, packed.buf);
            INTS
        }
        Value::Strings(ss) => {
            ss.iter().for_each(|s| w.bytes(9, s));
            STRINGS
        }
    };
    w.varint(20, kind);
}

fn tensor(w: &mut Writer, t: &Tensor) {
    let mut dims = Writer::default();
    t.dims.iter().for_each(|&d| dims.raw_varint(d as u64));
    w.packed(1, dims.buf);
    w.varint(2, t.data_type as u64);
    for s in &t.strings {
        w.bytes(6, s);
    }
    w.bytes(8, &t.name);
    if t.strings.is_empty() {
        w.bytes(9, &t.raw);
    }
}

fn value_info(w: &mut Writer, v: &ValueInfo) {
    w.bytes(1, &v.name);
    if let Some(t) = &v.tensor {
        // TypeProto.tensor_type: elem_type, shape.
        w.message(2, |w| {
            w.message(1, |w| {
                w.varint(1, t.elem_type as u64);
                if let Some(shape) = &t.shape {
                    w.message(2, |w| {
                        for d in shape {
                            w.message(1, |w| match d {
                                Dim::Value(n) => w.varint(1, *n as u64),
                                Dim::Param(p) => w.bytes(2, p),
                                Dim::Unknown => {}
                            });
                        }
                    });
                }
            });
        });
    }
}

/// Protocol-buffer encoding: each field a key (number and wire type) and its value.
#[derive(Default)]
pub(super) struct Writer {
    pub buf: Vec<u8>,
}

impl Writer {
    fn raw_varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    fn key(&mut self, field: u32, wire: u8) {
        self.raw_varint(u64::from(field) << 3 | u64::from(wire));
    }

    fn varint(&mut self, field: u32, v: u64) {
        self.key(field, 0);
        self.raw_varint(v);
    }

    fn fixed32(&mut self, field: u32, v: u32) {
        self.key(field, 5);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    fn bytes(&mut self, field: u32, b: &[u8]) {
        self.key(field, 2);
        self.raw_varint(b.len() as u64);
        self.buf.extend_from_slice(b);
    }

    /// A packed repeated field from its encoded elements.
    fn packed(&mut self, field: u32, encoded: Vec<u8>) {
        if !encoded.is_empty() {
            self.bytes(field, &encoded);
        }
    }

    /// A nested message, written by `write`.
    fn message(&mut self, field: u32, write: impl FnOnce(&mut Writer)) {
        let mut inner = Writer::default();
        write(&mut inner);
        self.bytes(field, &inner.buf);
    }
}
