//! The model's layout: ggml hyperparameters derived from the tensor shapes in `model.bin`,
//! with head counts from the model or `config.json`, checked against what whisper.cpp can run.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use super::Ct2Error;
use super::blocks::BLOCK_VALUES;
use super::ggml::{self, HParams, TensorType};
use super::reader::Ct2Model;

/// Largest config.json accepted.
const MAX_CONFIG_BYTES: u64 = 16 * 1024 * 1024;
/// Smallest Whisper vocabulary (English-only models).
const MIN_VOCAB: u64 = 51864;
/// whisper.cpp treats a model as multilingual from this vocabulary size on.
pub(super) const MULTILINGUAL_MIN_VOCAB: u64 = 51865;

/// Reads `config.json` (bounded in size) as a JSON object.
pub(super) fn load_config(
    path: &Path,
) -> Result<serde_json::Map<String, serde_json::Value>, Ct2Error> {
    let meta = fs::metadata(path).map_err(|e| Ct2Error::opening(path, e))?;
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(Ct2Error::Config {
            path: path.to_path_buf(),
            reason: format!("it is {} bytes long", meta.len()),
        });
    }
    let text = fs::read(path).map_err(Ct2Error::reading(path))?;
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

/// The ggml hyperparameters and the Whisper size name of `model`, from its tensor shapes,
/// its stored head counts or else `config`'s.
pub(super) fn derive_hparams(
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

    if weights.is_quantized() && n_state % BLOCK_VALUES as u64 != 0 {
        return Err(unsupported(format!(
            "{} needs rows that are multiples of {BLOCK_VALUES}, but the width is {n_state}",
            weights.name()
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
