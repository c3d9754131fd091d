//! The list of tensors whisper.cpp loads, each tied to the CTranslate2
//! variable (or row range of one) that holds its data.

use std::path::Path;

use super::Ct2Error;
use super::ggml::{HParams, TensorType};
use super::reader::Ct2Model;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// Biases, layer norms, positional embeddings: f32.
    Vector,
    /// Convolution kernels and conv biases: kernels f16, biases f32 (2-D, but
    /// never quantized, as in whisper.cpp's quantizer).
    ConvKernel,
    ConvBias,
    PositionalEmbedding,
    /// 2-D weight matrices: f16, q8_0 or q5_1.
    Matrix,
}

impl Kind {
    pub fn storage(self, weights: TensorType) -> TensorType {
        match self {
            Kind::Vector | Kind::ConvBias | Kind::PositionalEmbedding => TensorType::F32,
            Kind::ConvKernel => TensorType::F16,
            Kind::Matrix => weights,
        }
    }
}

/// One ggml tensor and where its data comes from.
pub(super) struct PlanItem {
    pub name: String,
    pub source: String,
    /// Full shape the source variable must have.
    pub source_shape: Vec<u64>,
    pub row_start: u64,
    pub row_count: u64,
    /// Row-major shape written to the ggml file.
    pub out_dims: Vec<u64>,
    pub kind: Kind,
}

impl PlanItem {
    pub fn elements(&self) -> u64 {
        self.out_dims.iter().product()
    }

    pub fn validate(&self, model: &Ct2Model, path: &Path) -> Result<(), Ct2Error> {
        let var = model.get(&self.source)?;
        if var.shape != self.source_shape {
            return Err(Ct2Error::BadShape {
                path: path.to_path_buf(),
                name: self.source.clone(),
                found: var.shape.clone(),
                expected: self.source_shape.clone(),
            });
        }
        Ok(())
    }
}

struct PlanBuilder {
    /// Model width.
    s: u64,
    items: Vec<PlanItem>,
}

impl PlanBuilder {
    /// Adds a tensor from `source` (whose full shape is `shape`), optionally
    /// only rows `(start, count)` of it.
    fn add(
        &mut self,
        name: String,
        source: String,
        shape: Vec<u64>,
        rows: Option<(u64, u64)>,
        kind: Kind,
    ) {
        let (row_start, row_count) = rows.unwrap_or((0, shape.first().copied().unwrap_or(1)));
        let out_dims = if kind == Kind::ConvBias {
            vec![row_count, 1]
        } else {
            let mut d = shape.clone();
            if let Some(first) = d.first_mut() {
                *first = row_count;
            }
            d
        };
        self.items.push(PlanItem {
            name,
            source,
            source_shape: shape,
            row_start,
            row_count,
            out_dims,
            kind,
        });
    }

    fn norm(&mut self, dst: &str, src: &str) {
        self.add(
            format!("{dst}.weight"),
            format!("{src}/gamma"),
            vec![self.s],
            None,
            Kind::Vector,
        );
        self.add(
            format!("{dst}.bias"),
            format!("{src}/beta"),
            vec![self.s],
            None,
            Kind::Vector,
        );
    }

    /// A linear layer `dst` taken from `src`, a `[fused_rows, in_features]`
    /// weight and `[fused_rows]` bias, or from rows `rows` of them.
    fn linear(
        &mut self,
        dst: &str,
        src: &str,
        in_features: u64,
        fused_rows: u64,
        rows: Option<(u64, u64)>,
        bias: bool,
    ) {
        self.add(
            format!("{dst}.weight"),
            format!("{src}/weight"),
            vec![fused_rows, in_features],
            rows,
            Kind::Matrix,
        );
        if bias {
            self.add(
                format!("{dst}.bias"),
                format!("{src}/bias"),
                vec![fused_rows],
                rows,
                Kind::Vector,
            );
        }
    }

    fn self_attention(&mut self, dst: &str, src: &str) {
        let s = self.s;
        self.norm(
            &format!("{dst}.attn_ln"),
            &format!("{src}/self_attention/layer_norm"),
        );
        let qkv = format!("{src}/self_attention/linear_0");
        self.linear(
            &format!("{dst}.attn.query"),
            &qkv,
            s,
            3 * s,
            Some((0, s)),
            true,
        );
        self.linear(
            &format!("{dst}.attn.key"),
            &qkv,
            s,
            3 * s,
            Some((s, s)),
            false,
        );
        self.linear(
            &format!("{dst}.attn.value"),
            &qkv,
            s,
            3 * s,
            Some((2 * s, s)),
            true,
        );
        self.linear(
            &format!("{dst}.attn.out"),
            &format!("{src}/self_attention/linear_1"),
            s,
            s,
            None,
            true,
        );
    }

    fn cross_attention(&mut self, dst: &str, src: &str) {
        let s = self.s;
        self.norm(
            &format!("{dst}.cross_attn_ln"),
            &format!("{src}/attention/layer_norm"),
        );
        let kv = format!("{src}/attention/linear_1");
        self.linear(
            &format!("{dst}.cross_attn.query"),
            &format!("{src}/attention/linear_0"),
            s,
            s,
            None,
            true,
        );
        self.linear(
            &format!("{dst}.cross_attn.key"),
            &kv,
            s,
            2 * s,
            Some((0, s)),
            false,
        );
        self.linear(
            &format!("{dst}.cross_attn.value"),
            &kv,
            s,
            2 * s,
            Some((s, s)),
            true,
        );
        self.linear(
            &format!("{dst}.cross_attn.out"),
            &format!("{src}/attention/linear_2"),
            s,
            s,
            None,
            true,
        );
    }

    fn ffn(&mut self, dst: &str, src: &str) {
        let s = self.s;
        self.norm(&format!("{dst}.mlp_ln"), &format!("{src}/ffn/layer_norm"));
        self.linear(
            &format!("{dst}.mlp.0"),
            &format!("{src}/ffn/linear_0"),
            s,
            4 * s,
            None,
            true,
        );
        self.linear(
            &format!("{dst}.mlp.2"),
            &format!("{src}/ffn/linear_1"),
            4 * s,
            s,
            None,
            true,
        );
    }
}

/// Every tensor whisper.cpp loads, in the order written.
pub(super) fn tensor_plan(h: &HParams) -> Vec<PlanItem> {
    let s = h.n_audio_state as u64;
    let mut p = PlanBuilder {
        s,
        items: Vec::new(),
    };

    let pe = Kind::PositionalEmbedding;
    p.add(
        "encoder.positional_embedding".into(),
        "encoder/position_encodings/encodings".into(),
        vec![h.n_audio_ctx as u64, s],
        None,
        pe,
    );
    p.add(
        "encoder.conv1.weight".into(),
        "encoder/conv1/weight".into(),
        vec![s, h.n_mels as u64, 3],
        None,
        Kind::ConvKernel,
    );
    p.add(
        "encoder.conv1.bias".into(),
        "encoder/conv1/bias".into(),
        vec![s],
        None,
        Kind::ConvBias,
    );
    p.add(
        "encoder.conv2.weight".into(),
        "encoder/conv2/weight".into(),
        vec![s, s, 3],
        None,
        Kind::ConvKernel,
    );
    p.add(
        "encoder.conv2.bias".into(),
        "encoder/conv2/bias".into(),
        vec![s],
        None,
        Kind::ConvBias,
    );
    p.norm("encoder.ln_post", "encoder/layer_norm");
    for i in 0..h.n_audio_layer {
        let (dst, src) = (format!("encoder.blocks.{i}"), format!("encoder/layer_{i}"));
        p.self_attention(&dst, &src);
        p.ffn(&dst, &src);
    }

    p.add(
        "decoder.positional_embedding".into(),
        "decoder/position_encodings/encodings".into(),
        vec![h.n_text_ctx as u64, s],
        None,
        pe,
    );
    p.add(
        "decoder.token_embedding.weight".into(),
        "decoder/embeddings/weight".into(),
        vec![h.n_vocab as u64, s],
        None,
        Kind::Matrix,
    );
    p.norm("decoder.ln", "decoder/layer_norm");
    for i in 0..h.n_text_layer {
        let (dst, src) = (format!("decoder.blocks.{i}"), format!("decoder/layer_{i}"));
        p.self_attention(&dst, &src);
        p.cross_attention(&dst, &src);
        p.ffn(&dst, &src);
    }
    p.items
}
