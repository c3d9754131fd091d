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

mod ggml;
mod mel;
mod plan;
mod reader;
mod vocab;

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use ggml::{GgmlWriter, HParams, TensorType};
use plan::tensor_plan;
use reader::Ct2Model;
use vocab::Vocabulary;

/// Storage of the 2-D weight matrices in the produced file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Quantization {
    /// Half precision, as whisper.cpp's own converter writes.
    #[default]
    F16,
    /// 8-bit blocks (ggml q8_0), as whisper.cpp's quantizer writes.
    Q8_0,
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

#[derive(Debug, thiserror::Error)]
pub enum Ct2Error {
    #[error("required file {path} does not exist")]
    MissingFile { path: PathBuf },
    #[error("model directory {dir} has no vocabulary.json, vocabulary.txt or tokenizer.json")]
    MissingVocabulary { dir: PathBuf },
    #[error("could not read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("could not write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is truncated: it ends inside {what}")]
    Truncated { path: PathBuf, what: String },
    #[error(
        "{path} has CTranslate2 binary version {version}, but only versions 4 to 6 can be read"
    )]
    UnsupportedVersion { path: PathBuf, version: u32 },
    #[error("{path} holds a CTranslate2 `{spec}` model, not a Whisper model (`WhisperSpec`)")]
    NotWhisper { path: PathBuf, spec: String },
    #[error("{path} is malformed: {reason}")]
    Malformed { path: PathBuf, reason: String },
    #[error("{path} lacks the variable `{name}` that a Whisper model needs")]
    MissingVariable { path: PathBuf, name: String },
    #[error("{path} has variable `{name}` with shape {found:?} where {expected:?} was expected")]
    BadShape {
        path: PathBuf,
        name: String,
        found: Vec<u64>,
        expected: Vec<u64>,
    },
    #[error("{path} stores variable `{name}` in a form that cannot be converted: {reason}")]
    UnsupportedVariable {
        path: PathBuf,
        name: String,
        reason: String,
    },
    #[error("{path} describes a model whisper.cpp cannot run: {reason}")]
    Unsupported { path: PathBuf, reason: String },
    #[error("{path} is not a valid model configuration: {reason}")]
    Config { path: PathBuf, reason: String },
    #[error("{path} does not fit the model: {reason}")]
    Vocabulary { path: PathBuf, reason: String },
}

/// Tensor values converted per read.
const CHUNK_ELEMENTS: u64 = 1 << 20;
/// Largest config.json accepted.
const MAX_CONFIG_BYTES: u64 = 16 * 1024 * 1024;
/// Ordinary (BPE) tokens before `<|endoftext|>` in English-only and multilingual vocabularies.
const N_ORDINARY_EN: usize = 50256;
const N_ORDINARY_MULTILINGUAL: usize = 50257;
/// Smallest Whisper vocabulary (English-only models).
const MIN_VOCAB: u64 = 51864;
/// whisper.cpp treats a model as multilingual from this vocabulary size on.
const MULTILINGUAL_MIN_VOCAB: u64 = 51865;

/// Converts `src_dir` into a ggml file at `dest`; writes to a temporary file beside `dest`, fsyncs, renames; leaves no file behind on any error.
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
    let weights = match opts.quantization {
        Quantization::F16 => TensorType::F16,
        Quantization::Q8_0 => TensorType::Q8_0,
    };
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
        // Whole rows at a time (q8_0 blocks never straddle rows), about
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

fn load_config(path: &Path) -> Result<serde_json::Map<String, serde_json::Value>, Ct2Error> {
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Ct2Error::MissingFile {
                path: path.to_path_buf(),
            });
        }
        Err(source) => {
            return Err(Ct2Error::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(Ct2Error::Config {
            path: path.to_path_buf(),
            reason: format!("it is {} bytes long", meta.len()),
        });
    }
    let text = fs::read(path).map_err(|source| Ct2Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    match serde_json::from_slice(&text) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        Ok(_) => Err(Ct2Error::Config {
            path: path.to_path_buf(),
            reason: "it is not a JSON object".into(),
        }),
        Err(e) => Err(Ct2Error::Config {
            path: path.to_path_buf(),
            reason: format!("invalid JSON ({e})"),
        }),
    }
}

/// Whisper sizes by model width: (n_state, name, attention heads).
const KNOWN_SIZES: [(u64, &str, u64); 5] = [
    (384, "tiny", 6),
    (512, "base", 8),
    (768, "small", 12),
    (1024, "medium", 16),
    (1280, "large", 20),
];

fn derive_hparams(
    model: &mut Ct2Model,
    path: &Path,
    config: &serde_json::Map<String, serde_json::Value>,
    weights: TensorType,
) -> Result<(HParams, &'static str), Ct2Error> {
    let bad_shape = |name: &str, found: &[u64], expected: Vec<u64>| Ct2Error::BadShape {
        path: path.to_path_buf(),
        name: name.to_string(),
        found: found.to_vec(),
        expected,
    };
    let unsupported = |reason: String| Ct2Error::Unsupported {
        path: path.to_path_buf(),
        reason,
    };

    let conv1 = model.get("encoder/conv1/weight")?.shape.clone();
    if conv1.len() != 3 || conv1[2] != 3 {
        let (s, m) = (
            conv1.first().copied().unwrap_or(0),
            conv1.get(1).copied().unwrap_or(0),
        );
        return Err(bad_shape("encoder/conv1/weight", &conv1, vec![s, m, 3]));
    }
    let (n_state, n_mels) = (conv1[0], conv1[1]);
    let (size_name, default_heads) = KNOWN_SIZES
        .iter()
        .find(|(s, _, _)| *s == n_state)
        .map(|&(_, name, heads)| (name, heads))
        .ok_or_else(|| {
            unsupported(format!(
                "its width n_audio_state = {n_state} matches no Whisper size"
            ))
        })?;
    if n_mels != 80 && n_mels != 128 {
        return Err(unsupported(format!(
            "it expects {n_mels} mel bands; Whisper models use 80 or 128"
        )));
    }

    let first_dim = |model: &Ct2Model, name: &str| -> Result<u64, Ct2Error> {
        let shape = &model.get(name)?.shape;
        match shape.as_slice() {
            [rows, cols] if *cols == n_state => Ok(*rows),
            _ => Err(bad_shape(
                name,
                shape,
                vec![shape.first().copied().unwrap_or(0), n_state],
            )),
        }
    };
    let n_audio_ctx = first_dim(model, "encoder/position_encodings/encodings")?;
    let n_text_ctx = first_dim(model, "decoder/position_encodings/encodings")?;
    let n_vocab = first_dim(model, "decoder/embeddings/weight")?;

    if n_audio_ctx == 0 || n_text_ctx == 0 {
        return Err(unsupported(format!(
            "its context lengths are {n_audio_ctx} (audio) and {n_text_ctx} (text)"
        )));
    }
    if n_vocab < MIN_VOCAB {
        return Err(unsupported(format!(
            "its vocabulary has {n_vocab} tokens; Whisper models have at least {MIN_VOCAB}"
        )));
    }

    let n_audio_layer = count_layers(model, path, "encoder/layer_")?;
    let n_text_layer = count_layers(model, path, "decoder/layer_")?;

    let heads = |model: &mut Ct2Model, var: &str, keys: &[&str]| -> Result<u64, Ct2Error> {
        let from_model = model.scalar_int(var)?;
        let from_config = keys
            .iter()
            .find_map(|k| config.get(*k).and_then(|v| v.as_i64()));
        let h = from_model.or(from_config).unwrap_or(default_heads as i64);
        if h <= 0 || n_state % h as u64 != 0 {
            return Err(unsupported(format!(
                "{h} attention heads do not divide the width {n_state}"
            )));
        }
        Ok(h as u64)
    };
    let n_audio_head = heads(
        model,
        "encoder/num_heads",
        &["n_audio_head", "encoder_attention_heads", "num_heads"],
    )?;
    let n_text_head = heads(
        model,
        "decoder/num_heads",
        &["n_text_head", "decoder_attention_heads", "num_heads"],
    )?;

    if weights == TensorType::Q8_0 && n_state % ggml::QK8_0 as u64 != 0 {
        return Err(unsupported(format!(
            "q8_0 needs rows that are multiples of 32, but the width is {n_state}"
        )));
    }
    let int = |v: u64, what: &str| {
        i32::try_from(v)
            .map_err(|_| unsupported(format!("{what} = {v} does not fit the ggml header")))
    };
    // whisper.cpp counts tensor elements in an i32.
    let largest = [
        n_vocab * n_state,
        n_audio_ctx * n_state,
        4 * n_state * n_state,
    ];
    if largest.iter().any(|&n| n > i32::MAX as u64) {
        return Err(unsupported(
            "a tensor has more elements than whisper.cpp can count".into(),
        ));
    }
    let h = HParams {
        n_vocab: int(n_vocab, "n_vocab")?,
        n_audio_ctx: int(n_audio_ctx, "n_audio_ctx")?,
        n_audio_state: int(n_state, "n_audio_state")?,
        n_audio_head: int(n_audio_head, "n_audio_head")?,
        n_audio_layer: int(n_audio_layer, "n_audio_layer")?,
        n_text_ctx: int(n_text_ctx, "n_text_ctx")?,
        n_text_state: int(n_state, "n_text_state")?,
        n_text_head: int(n_text_head, "n_text_head")?,
        n_text_layer: int(n_text_layer, "n_text_layer")?,
        n_mels: int(n_mels, "n_mels")?,
        ftype: ggml::ftype_for(weights),
    };
    Ok((h, size_name))
}

/// Number of layers under `prefix` (e.g. `encoder/layer_`): names must be
/// `prefix<digits>/...`, numbered 0..n without gaps.
fn count_layers(model: &Ct2Model, path: &Path, prefix: &str) -> Result<u64, Ct2Error> {
    let mut seen = BTreeSet::new();
    for name in model.names() {
        let Some(rest) = name.strip_prefix(prefix) else {
            continue;
        };
        let Some((digits, _)) = rest.split_once('/') else {
            continue;
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let index: u64 = digits.parse().map_err(|_| Ct2Error::Malformed {
            path: path.to_path_buf(),
            reason: format!("layer number in `{name}` is out of range"),
        })?;
        seen.insert(index);
    }
    let n = seen.len() as u64;
    if n == 0 {
        return Err(Ct2Error::MissingVariable {
            path: path.to_path_buf(),
            name: format!("{prefix}0/..."),
        });
    }
    if seen.last().copied() != Some(n - 1) {
        let missing = (0..).find(|i| !seen.contains(i)).unwrap_or(0);
        return Err(Ct2Error::MissingVariable {
            path: path.to_path_buf(),
            name: format!("{prefix}{missing}/..."),
        });
    }
    Ok(n)
}

/// Keeps `<|endoftext|>` and everything after it out: whisper.cpp names the
/// special and timestamp tokens itself.
fn ordinary_tokens(
    vocab: &Vocabulary,
    n_vocab: usize,
    multilingual: bool,
) -> Result<Vec<Vec<u8>>, Ct2Error> {
    let bad = |reason: String| Ct2Error::Vocabulary {
        path: vocab.path.clone(),
        reason,
    };
    if vocab.complete && vocab.tokens.len() != n_vocab {
        return Err(bad(format!(
            "it has {} tokens but the model has {n_vocab}",
            vocab.tokens.len()
        )));
    }
    let expected = if multilingual {
        N_ORDINARY_MULTILINGUAL
    } else {
        N_ORDINARY_EN
    };
    match vocab.eot_index() {
        Some(i) if i == expected => {}
        Some(i) => {
            return Err(bad(format!(
                "`{}` is token {i}, but a {} model of {n_vocab} tokens has it at {expected}",
                vocab::EOT_TOKEN,
                if multilingual {
                    "multilingual"
                } else {
                    "English-only"
                }
            )));
        }
        None => return Err(bad(format!("it has no `{}` token", vocab::EOT_TOKEN))),
    }
    vocab.ordinary_token_bytes(expected)
}

/// A file beside the destination that is removed on drop unless committed.
struct TempFile {
    path: PathBuf,
    file: Option<File>,
    committed: bool,
}

impl TempFile {
    fn create(dest: &Path) -> Result<Self, Ct2Error> {
        let err = |source| Ct2Error::Write {
            path: dest.to_path_buf(),
            source,
        };
        let name = dest.file_name().ok_or_else(|| {
            err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the path has no file name",
            ))
        })?;
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".{}-{stamp}.part", std::process::id()));
        let path = dir.join(tmp_name);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(err)?;
        Ok(Self {
            path,
            file: Some(file),
            committed: false,
        })
    }

    fn commit(&mut self, dest: &Path) -> Result<(), Ct2Error> {
        fs::rename(&self.path, dest).map_err(|source| Ct2Error::Write {
            path: dest.to_path_buf(),
            source,
        })?;
        self.committed = true;
        // Make the rename durable; not every platform can open a directory.
        if let Some(dir) = dest.parent().filter(|p| !p.as_os_str().is_empty())
            && let Ok(d) = File::open(dir)
        {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        self.file.take();
        if !self.committed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests;
