//! Folds the int8 dequantize chains of an ONNX Runtime ORT-format model (`.ort` flatbuffer, file
//! identifier "ORTM") into float32 initializers.
//!
//! ONNX Runtime does not constant-fold ORT-format models, so a weight stored as
//! `Cast(int8 initializer, to=FLOAT) -> Mul(scale) -> Add(offset)` is dequantized again on every run,
//! as is a `Transpose` of such a weight inside an `If` subgraph (a tied embedding). This module rewrites
//! the file so those values are plain float32 initializers, computed exactly as the nodes would
//! (`(q as f32) * scale`, then `+ offset`, each rounded to f32). moonshine-base ships this way
//! (PyPI `moonshine-cpp`): folded when it is loaded, a decoder step takes a tenth of the time.
//!
//! Modules: [`fb`] (checked flatbuffer reads and in-place writes), [`graph`] (schema slots, parsed
//! graph), [`pattern`] (what can be folded), [`rewrite`] (applying it).

mod fb;
mod graph;
mod pattern;
mod rewrite;
#[cfg(test)]
mod tests;

use std::fmt;

/// The rewritten model.
#[derive(Debug)]
pub struct Folded {
    /// The new `.ort` file. Equal to the input when nothing was folded (`chains == 0`).
    pub bytes: Vec<u8>,
    /// Number of Cast -> Mul -> Add chains folded into float32 initializers.
    pub chains: usize,
    /// Number of weights whose Transpose (in a subgraph) was folded into a second initializer.
    pub transposes: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FoldError {
    /// The buffer lacks the "ORTM" file identifier.
    NotOrtFormat,
    /// An offset or length points outside the buffer (position of the read).
    OutOfBounds { at: usize },
    /// A structure the rewrite needs is missing or inconsistent.
    Malformed(&'static str),
    /// The output would exceed the flatbuffer 4 GiB offset range or ten times the input.
    TooLarge,
}

impl fmt::Display for FoldError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            FoldError::NotOrtFormat => {
                write!(f, "not an ORT-format model (no \"ORTM\" identifier)")
            }
            FoldError::OutOfBounds { at } => write!(
                f,
                "damaged model: offset or length out of bounds at byte {at}"
            ),
            FoldError::Malformed(what) => write!(f, "damaged model: {what}"),
            FoldError::TooLarge => write!(f, "folded model would be too large"),
        }
    }
}

impl std::error::Error for FoldError {}

/// Rewrites an ORT-format model so its int8 dequantize chains (and a Transpose of such a weight in a
/// subgraph) become float32 initializers. The result computes bit-identical outputs; ONNX Runtime
/// must load it with `session.disable_prepacking=1` for that to hold exactly.
///
/// Never panics on damaged input: every offset and length is checked against `model`.
pub fn fold_dequantized_weights(model: &[u8]) -> Result<Folded, FoldError> {
    rewrite::fold(model)
}
