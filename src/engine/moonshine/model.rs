//! One loaded Moonshine model: the encoder and merged decoder sessions and the tokenizer, and the
//! greedy decode of one chunk of audio with the decoder's key/value cache.

use std::borrow::Cow;
use std::path::Path;

use ort::session::builder::PrepackedWeights;
use ort::session::{RunOptions, Session, SessionInputValue};
use ort::value::{DynValue, Tensor};

use super::catalog::MoonshineModel;
use super::tokenizer::{END, START, Tokenizer};
use crate::cancel::Cancel;
use crate::engine::EngineError;
use crate::engine::guard;
use verbatim_ort_format::ROTARY_POSITIONS;

/// Samples per encoder frame (Moonshine's three convolutions stride 64, 3 and 2).
const ENCODER_STRIDE: usize = 384;

/// Whether a chunk of `samples` decoded to at most `max_tokens` tokens stays inside the fused
/// rotary embeddings' tables of [`ROTARY_POSITIONS`] rows (which ONNX Runtime does not check):
/// the encoder gives a position per 384 samples, the decoder one per token after the start.
fn fits_position_tables(samples: usize, max_tokens: usize) -> bool {
    (samples / ENCODER_STRIDE + 1).max(max_tokens + 2) < ROTARY_POSITIONS
}

/// A loaded model.
pub struct Model {
    encoder: Session,
    decoder: Session,
    pub tokenizer: Tokenizer,
    shape: &'static MoonshineModel,
    /// Runs that give the arena's free memory back when they end: every encoder run, and the
    /// first decoder step of a chunk (what the last chunk's decode grew goes then).
    shrink: RunOptions,
    plain: RunOptions,
}

/// What the decoder heard in a chunk: text tokens (no start or end) and their mean
/// log-probability.
#[derive(Debug, Clone, PartialEq)]
pub struct Heard {
    pub tokens: Vec<i64>,
    pub avg_logprob: f64,
    /// The decode ended by reaching its token limit or a loop, not the end token.
    pub stopped: bool,
}

/// An ORT-format model file as ONNX (see [`super::ort_format`]): ONNX Runtime optimises nothing
/// in that format, and moonshine-base's weights would be dequantized again at every step.
fn ort_as_onnx(path: &Path) -> Result<Vec<u8>, EngineError> {
    let load = |cause: String| EngineError::Load {
        path: path.to_path_buf(),
        cause,
    };
    let bytes = std::fs::read(path).map_err(|e| load(e.to_string()))?;
    let converted = verbatim_ort_format::onnx_from_ort(&bytes).map_err(|e| load(e.to_string()))?;
    tracing::debug!(
        "{}: read as ONNX, {} matrix products by int8 weights, {} norms and {} rotary embeddings \
         fused, {} attention scales moved to the queries",
        path.display(),
        converted.int8_matmuls,
        converted.fused.layer_norms,
        converted.fused.rotary_embeddings,
        converted.fused.attention_scales
    );
    Ok(converted.onnx)
}

fn failed(what: &str, err: impl std::fmt::Display) -> EngineError {
    EngineError::Failed(format!("moonshine {what}: {err}"))
}

impl Model {
    /// Loads the model in `folder` with `threads` threads per session; copies loaded with the
    /// same `prepacked` hold their packed weights once.
    pub fn load(
        environment: &ort::environment::Environment,
        folder: &Path,
        shape: &'static MoonshineModel,
        threads: usize,
        prepacked: &PrepackedWeights,
    ) -> Result<Model, EngineError> {
        let session = |file: &str| -> Result<Session, EngineError> {
            let path = folder.join(file);
            let load = |err: ort::Error| EngineError::Load {
                path: path.clone(),
                cause: err.to_string(),
            };
            let mut builder = Session::builder(environment)
                .map_err(load)?
                // With the arena, the encoder's attention over a long chunk reuses its buffers
                // (without it, each layer's were mapped and zeroed anew: a 28 s chunk took 1.0 s
                // instead of 0.65 s); [`Model::shrink`] hands what a run took back after it.
                .with_execution_providers([ort::ep::CPU::default()
                    .with_arena_allocator(true)
                    .build()])
                .map_err(|e| load(e.into()))?
                .with_memory_pattern(false)
                .map_err(|e| load(e.into()))?
                // Lets constant folding dequantize int8 initializers once at load: the tied
                // token embedding was otherwise dequantized again at every decoder step.
                .with_config_entry("session.disable_quant_qdq", "1")
                .map_err(|e| load(e.into()))?
                .with_intra_threads(threads.max(1))
                .map_err(|e| load(e.into()))?
                // Threads that wait for work sleep instead of spinning: a decoder step is
                // hundreds of small operations, and spinning between them kept the second core
                // busy for nothing (short clips took longer with it, at more CPU time;
                // docs/journal/2026-11.md) and starves copies hearing other chunks.
                .with_config_entry("session.intra_op.allow_spinning", "0")
                .map_err(|e| load(e.into()))?
                .with_prepacked_weights(prepacked)
                .map_err(|e| load(e.into()))?
                .with_inter_threads(1)
                .map_err(|e| load(e.into()))?
                // One clip at a time, one token a decoder step: with these sizes fixed, ONNX
                // Runtime computes most of the graph's shape arithmetic once at load (a third of
                // a decoder step's operations).
                .with_dimension_override("batch_size", 1)
                .map_err(|e| load(e.into()))?
                .with_dimension_override("decoder_sequence_length", 1)
                .map_err(|e| load(e.into()))?;
            if path.extension().is_some_and(|e| e == "ort") {
                let onnx = ort_as_onnx(&path)?;
                builder.commit_from_memory(&onnx).map_err(load)
            } else {
                builder.commit_from_file(&path).map_err(load)
            }
        };
        let tokenizer_path = folder.join(shape.tokenizer().name);
        let tokenizer = Tokenizer::load(&tokenizer_path).map_err(|err| EngineError::Load {
            path: tokenizer_path,
            cause: err.to_string(),
        })?;
        let mut shrink = RunOptions::new().map_err(|e| failed("run options", e))?;
        shrink
            .set("memory.enable_memory_arena_shrinkage", "cpu:0")
            .map_err(|e| failed("run options", e))?;
        Ok(Model {
            encoder: session(shape.encoder().name)?,
            decoder: session(shape.decoder().name)?,
            tokenizer,
            shape,
            shrink,
            plain: RunOptions::new().map_err(|e| failed("run options", e))?,
        })
    }

    /// Greedy decode of `samples` (16 kHz mono), at most `max_tokens` text tokens; the end token
    /// is refused as the first token when the audio is known to hold speech (base otherwise ends
    /// some clips at once). Stops early when the tokens end in a loop, or when `cancel` is set.
    pub fn hear(
        &mut self,
        samples: &[f32],
        max_tokens: usize,
        speech: bool,
        cancel: &Cancel,
    ) -> Result<Heard, EngineError> {
        if !fits_position_tables(samples.len(), max_tokens) {
            return Err(failed(
                "input",
                format!(
                    "{:.1} s in one chunk is more than the model's position tables hold",
                    samples.len() as f64 / 16_000.0
                ),
            ));
        }
        let started = std::time::Instant::now();
        let encoded = self.encode(samples)?;
        let encoded_at = started.elapsed();
        let (layers, heads, head_dim) = (self.shape.layers, self.shape.heads, self.shape.head_dim);
        let vocabulary = self.tokenizer.len();
        let empty = || Tensor::<f32>::from_array(([1, heads, 0, head_dim], Vec::<f32>::new()));
        let mut past: Vec<(String, DynValue)> = Vec::with_capacity(layers * 4);
        for layer in 0..layers {
            for part in [
                "decoder.key",
                "decoder.value",
                "encoder.key",
                "encoder.value",
            ] {
                let tensor = empty().map_err(|e| failed("cache", e))?;
                past.push((format!("past_key_values.{layer}.{part}"), tensor.into_dyn()));
            }
        }
        let mut tokens = Vec::new();
        let mut logprob_sum = 0.0;
        let mut last = START;
        let mut stopped = true;
        for step in 0..=max_tokens {
            if cancel.is_cancelled() {
                return Err(EngineError::Cancelled);
            }
            let ids = Tensor::<i64>::from_array(([1usize, 1], vec![last]))
                .map_err(|e| failed("input", e))?;
            let branch = Tensor::<bool>::from_array(([1usize], vec![step > 0]))
                .map_err(|e| failed("input", e))?;
            let mut inputs: Vec<(Cow<'_, str>, SessionInputValue<'_>)> = vec![
                ("input_ids".into(), ids.into()),
                ("encoder_hidden_states".into(), (&encoded).into()),
                ("use_cache_branch".into(), branch.into()),
            ];
            inputs.extend(
                past.iter()
                    .map(|(name, value)| (Cow::from(name.as_str()), value.into())),
            );
            let options = if step == 0 { &self.shrink } else { &self.plain };
            let mut outputs = self
                .decoder
                .run_with_options(inputs, options)
                .map_err(|e| failed("decoder", e))?;
            let (_, logits) = outputs["logits"]
                .try_extract_tensor::<f32>()
                .map_err(|e| failed("logits", e))?;
            let logits = &logits[..vocabulary.min(logits.len())];
            let blocked = (step == 0 && speech).then_some(END);
            let (next, logprob) = pick(logits, blocked);
            for (name, value) in past.iter_mut() {
                // The cross-attention cache is computed once, on the first step.
                if step > 0 && name.contains(".encoder.") {
                    continue;
                }
                let present = name.replace("past_key_values", "present");
                *value = outputs
                    .remove(present.as_str())
                    .ok_or_else(|| failed("decoder", format!("no output {present}")))?;
            }
            if next == END {
                stopped = false;
                break;
            }
            if step == max_tokens {
                break;
            }
            tokens.push(next);
            logprob_sum += logprob;
            last = next;
            let as_i32: Vec<i32> = tokens.iter().map(|&t| t as i32).collect();
            if guard::ends_in_loop(&as_i32) {
                break;
            }
        }
        tracing::debug!(
            "moonshine: {:.1} s of audio encoded in {} ms, {} tokens decoded in {} ms",
            samples.len() as f64 / 16_000.0,
            encoded_at.as_millis(),
            tokens.len(),
            (started.elapsed() - encoded_at).as_millis()
        );
        let avg_logprob = if tokens.is_empty() {
            0.0
        } else {
            logprob_sum / tokens.len() as f64
        };
        Ok(Heard {
            tokens,
            avg_logprob,
            stopped,
        })
    }

    fn encode(&mut self, samples: &[f32]) -> Result<DynValue, EngineError> {
        let input = Tensor::<f32>::from_array(([1usize, samples.len()], samples.to_vec()))
            .map_err(|e| failed("input", e))?;
        let mut outputs = self
            .encoder
            .run_with_options(
                vec![("input_values", SessionInputValue::from(input))],
                &self.shrink,
            )
            .map_err(|e| failed("encoder", e))?;
        outputs
            .remove("last_hidden_state")
            .ok_or_else(|| failed("encoder", "no output last_hidden_state"))
    }
}

/// The most likely token (never `blocked`) and its log-probability.
fn pick(logits: &[f32], blocked: Option<i64>) -> (i64, f64) {
    let mut best = (0usize, f32::NEG_INFINITY);
    for (id, &logit) in logits.iter().enumerate() {
        if Some(id as i64) != blocked && logit > best.1 {
            best = (id, logit);
        }
    }
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let sum: f64 = logits.iter().map(|&l| f64::from(l - max).exp()).sum();
    let logprob = f64::from(best.1 - max) - sum.ln();
    (best.0 as i64, logprob)
}

#[cfg(test)]
mod tests {
    use super::{ENCODER_STRIDE, ROTARY_POSITIONS, fits_position_tables, pick};
    use crate::engine::guard;

    #[test]
    fn the_longest_chunk_fits_the_position_tables_and_far_longer_input_does_not() {
        let thirty_seconds = 30 * 16_000;
        assert!(fits_position_tables(
            thirty_seconds,
            guard::max_tokens(30.0)
        ));
        let too_many_frames = (ROTARY_POSITIONS - 1) * ENCODER_STRIDE;
        assert!(!fits_position_tables(too_many_frames, 10));
        assert!(!fits_position_tables(16_000, ROTARY_POSITIONS));
    }

    #[test]
    fn picks_the_most_likely_token_unless_blocked() {
        let logits = [0.0, 1.0, 3.0, 2.0];
        let (id, logprob) = pick(&logits, None);
        assert_eq!(id, 2);
        let total: f64 = logits.iter().map(|&l| f64::from(l).exp()).sum();
        assert!((logprob - (3.0 - total.ln())).abs() < 1e-9);
        assert_eq!(pick(&logits, Some(2)).0, 3);
    }
}
