//! Import of faster-whisper / CTranslate2 Whisper models as whisper.cpp ggml files.
//!
//! A CTranslate2 Whisper directory holds `model.bin` (weights), `config.json`
//! and a vocabulary (`vocabulary.json`, `vocabulary.txt`, or failing both,
//! `tokenizer.json`). [`import_ct2`] rewrites it as a single ggml file that
//! whisper.cpp (1.8, as bundled by whisper-rs 0.16) loads: same tensor names,
//! shapes and types as whisper.cpp's own converter and quantizer produce.
//!
//! Mapping of CTranslate2 variables to whisper.cpp tensors:
//!
//! | CTranslate2 | whisper.cpp |
//! | --- | --- |
//! | `encoder/conv{1,2}/{weight,bias}` | `encoder.conv{1,2}.{weight,bias}` (bias as `[n_state, 1]`) |
//! | `encoder/position_encodings/encodings` | `encoder.positional_embedding` |
//! | `encoder/layer_norm/{gamma,beta}` | `encoder.ln_post.{weight,bias}` |
//! | `*/layer_N/self_attention/layer_norm` | `*.blocks.N.attn_ln` |
//! | `*/layer_N/self_attention/linear_0` (q, k, v stacked by rows) | `*.blocks.N.attn.{query,key,value}` |
//! | `*/layer_N/self_attention/linear_1` | `*.blocks.N.attn.out` |
//! | `decoder/layer_N/attention/layer_norm` | `decoder.blocks.N.cross_attn_ln` |
//! | `decoder/layer_N/attention/linear_0` | `decoder.blocks.N.cross_attn.query` |
//! | `decoder/layer_N/attention/linear_1` (k, v stacked by rows) | `decoder.blocks.N.cross_attn.{key,value}` |
//! | `decoder/layer_N/attention/linear_2` | `decoder.blocks.N.cross_attn.out` |
//! | `*/layer_N/ffn/layer_norm`, `ffn/linear_0`, `ffn/linear_1` | `*.blocks.N.mlp_ln`, `mlp.0`, `mlp.2` |
//! | `decoder/embeddings/weight` | `decoder.token_embedding.weight` |
//! | `decoder/position_encodings/encodings` | `decoder.positional_embedding` |
//! | `decoder/layer_norm/{gamma,beta}` | `decoder.ln.{weight,bias}` |
//!
//! Whisper has no key bias; CTranslate2 stores a zero slice for it in the
//! fused biases, which is dropped (a key bias cannot change attention anyway:
//! it adds the same amount to every score of a query). `decoder/projection`
//! is tied to the token embedding and is not written.

mod blocks;
mod dtype;
mod error;
mod ggml;
mod header;
mod layout;
mod mel;
mod plan;
mod reader;
mod temp_file;
mod vocab;

use std::io::BufWriter;
use std::path::Path;

pub use error::Ct2Error;
use ggml::{GgmlWriter, TensorType};
use layout::{MULTILINGUAL_MIN_VOCAB, derive_hparams, load_config};
use plan::tensor_plan;
use reader::Ct2Model;
use temp_file::TempFile;
use vocab::{Vocabulary, ordinary_tokens};

/// Storage of the 2-D weight matrices in the produced file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Quantization {
    /// Half precision, as whisper.cpp's own converter writes.
    #[default]
    F16,
    /// 8-bit blocks (ggml q8_0), as whisper.cpp's quantizer writes.
    Q8_0,
    /// 5-bit blocks with a minimum (ggml q5_1), as whisper.cpp's quantizer writes.
    Q5_1,
}

impl Quantization {
    /// The weights' type: `f16`, `q8_0` or `q5_1`, as quantized model ids end.
    pub fn name(self) -> &'static str {
        self.weights().name()
    }

    fn weights(self) -> TensorType {
        match self {
            Quantization::F16 => TensorType::F16,
            Quantization::Q8_0 => TensorType::Q8_0,
            Quantization::Q5_1 => TensorType::Q5_1,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportOptions {
    pub quantization: Quantization,
}

/// What was converted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportReport {
    pub n_vocab: u32,
    pub multilingual: bool,
    pub n_audio_state: u32,
    pub n_audio_layer: u32,
    pub n_text_layer: u32,
    /// "tiny", "base", "small", "medium" or "large".
    pub size_name: &'static str,
    /// Size of the written ggml file.
    pub bytes_written: u64,
}

/// Tensor values converted per read.
const CHUNK_ELEMENTS: u64 = 1 << 20;

/// Converts `src_dir` into a ggml file at `dest`; writes to a temporary file beside `dest`,
/// fsyncs, renames; leaves no file behind on any error.
///
/// `progress` is called with the number of tensor elements converted so far
/// and the total, first with `done == 0` and last with `done == total`.
pub fn import_ct2(
    src_dir: &Path,
    dest: &Path,
    opts: &ImportOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ImportReport, Ct2Error> {
    let config = load_config(&src_dir.join("config.json"))?;
    let model_path = src_dir.join("model.bin");
    let mut model = Ct2Model::open(&model_path)?;
    if model.spec_name != "WhisperSpec" {
        return Err(Ct2Error::NotWhisper {
            path: model_path,
            spec: model.spec_name.clone(),
        });
    }
    let weights = opts.quantization.weights();
    let (hparams, size_name) = derive_hparams(&mut model, &model_path, &config, weights)?;

    let vocab = Vocabulary::load(src_dir)?;
    let multilingual = hparams.n_vocab as u64 >= MULTILINGUAL_MIN_VOCAB;
    let tokens = ordinary_tokens(&vocab, hparams.n_vocab as usize, multilingual)?;

    let plan = tensor_plan(&hparams);
    for item in &plan {
        item.validate(&model, &model_path)?;
    }
    let total: u64 = plan.iter().map(|i| i.elements()).sum();
    progress(0, total);

    let mut temp = TempFile::create(dest)?;
    let write_err = |source| Ct2Error::Write {
        path: dest.to_path_buf(),
        source,
    };
    let file = temp
        .file
        .take()
        .ok_or_else(|| write_err(std::io::Error::other("temporary file is gone")))?;
    let mut w = GgmlWriter::new(BufWriter::with_capacity(1 << 20, file));
    w.header(&hparams).map_err(write_err)?;
    let filters = mel::mel_filters(hparams.n_mels as usize);
    w.mel_filters(hparams.n_mels, mel::N_FREQ_BINS as i32, &filters)
        .map_err(write_err)?;
    w.vocabulary(&tokens).map_err(write_err)?;

    let mut done = 0u64;
    for item in &plan {
        let ty = item.kind.storage(weights);
        let dims: Vec<i32> = item.out_dims.iter().map(|&d| d as i32).collect();
        w.tensor_header(&item.name, &dims, ty).map_err(write_err)?;
        // Whole rows at a time (quantized blocks never straddle rows), about
        // CHUNK_ELEMENTS values per read, so memory stays small for any model.
        let row_len = (item.elements() / item.row_count.max(1)).max(1);
        let step = (CHUNK_ELEMENTS / row_len).max(1);
        let mut row = 0;
        while row < item.row_count {
            let n = step.min(item.row_count - row);
            let values = model.read_rows_f32(&item.source, item.row_start + row, n)?;
            if values.len() as u64 != n * row_len {
                return Err(Ct2Error::Malformed {
                    path: model_path.clone(),
                    reason: format!(
                        "variable `{}` yielded {} values instead of {}",
                        item.source,
                        values.len(),
                        n * row_len
                    ),
                });
            }
            w.tensor_data(&values, ty).map_err(write_err)?;
            done += values.len() as u64;
            progress(done, total);
            row += n;
        }
    }

    let bytes_written = w.written();
    let file = w
        .into_inner()
        .into_inner()
        .map_err(|e| write_err(e.into_error()))?;
    file.sync_all().map_err(write_err)?;
    drop(file);
    temp.commit(dest)?;

    Ok(ImportReport {
        n_vocab: hparams.n_vocab as u32,
        multilingual,
        n_audio_state: hparams.n_audio_state as u32,
        n_audio_layer: hparams.n_audio_layer as u32,
        n_text_layer: hparams.n_text_layer as u32,
        size_name,
        bytes_written,
    })
}

#[cfg(test)]
mod tests;
