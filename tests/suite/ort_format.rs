//! The ORT-format reader proves itself: moonshine-base's `.ort` files as its package ships them,
//! and the ONNX `verbatim-ort-format` reads them back as (int8 matrix products, fused norms and
//! rotary embeddings, attention scales moved to the queries), each loaded in ONNX Runtime and run
//! on real speech. The encoder's output and the decoder's logits over a greedy decode must agree
//! within the tolerances below. (moonshine-tiny ships as ONNX: there is no `.ort` of it to read.)
//! Skipped without the Moonshine models of VERBATIM_TEST_MODELS.

#![cfg(feature = "moonshine")]

use crate::common;

use std::borrow::Cow;

use ort::session::{Session, SessionInputValue};
use ort::value::{DynValue, Tensor};
use verbatim::engine::moonshine::catalog::moonshine_model;
use verbatim::engine::moonshine::tokenizer::START;

/// The most the two encoders' outputs may differ, relative to the largest value, and the least
/// cosine similarity of the whole output: int8 products quantize the activations and round
/// differently from the dequantized float products of the `.ort` graph (measured 2026-12-07 on
/// the two clips below: at most 4.4 % of the largest value, cosine 0.9987 and 0.9991).
const ENCODER_RELATIVE_DIFFERENCE: f32 = 0.05;
const ENCODER_COSINE: f64 = 0.998;
/// The least cosine similarity of the two decoders' logits at every step (measured: 0.99985 at
/// worst), the same greedy token at every step besides.
const LOGITS_COSINE: f64 = 0.9995;
/// Greedy steps compared.
const STEPS: usize = 12;

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let norm = |v: &[f32]| v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    dot / (norm(a) * norm(b))
}

fn argmax(values: &[f32]) -> usize {
    values
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map_or(0, |(i, _)| i)
}

/// One greedy decoder step: the logits, and the cache for the next step.
fn step(
    decoder: &mut Session,
    token: i64,
    first: bool,
    encoded: &DynValue,
    past: &mut [(String, DynValue)],
) -> Vec<f32> {
    let ids = Tensor::<i64>::from_array(([1usize, 1], vec![token])).unwrap();
    let branch = Tensor::<bool>::from_array(([1usize], vec![!first])).unwrap();
    let mut inputs: Vec<(Cow<'_, str>, SessionInputValue<'_>)> = vec![
        ("input_ids".into(), ids.into()),
        ("encoder_hidden_states".into(), encoded.into()),
        ("use_cache_branch".into(), branch.into()),
    ];
    inputs.extend(
        past.iter()
            .map(|(name, value)| (Cow::from(name.as_str()), value.into())),
    );
    let mut outputs = decoder.run(inputs).unwrap();
    let logits = outputs["logits"]
        .try_extract_tensor::<f32>()
        .unwrap()
        .1
        .to_vec();
    for (name, value) in past.iter_mut() {
        // The cross-attention cache is computed once, at the first step.
        if !first && name.contains(".encoder.") {
            continue;
        }
        *value = outputs
            .remove(name.replace("past_key_values", "present").as_str())
            .unwrap();
    }
    logits
}

#[test]
fn moonshine_base_read_back_as_onnx_computes_what_its_ort_file_does() {
    let Some(models) = common::test_models_with_moonshine_base() else {
        return;
    };
    let shape = moonshine_model("moonshine-base").unwrap();
    let environment = verbatim::engine::moonshine::runtime::environment(&models).unwrap();
    let folder = models.path().join("moonshine-base");
    let load_both = |file: &str| {
        let path = folder.join(file);
        assert_eq!(path.extension().unwrap(), "ort", "{}", path.display());
        let original = Session::builder(environment)
            .unwrap()
            .commit_from_file(&path)
            .unwrap();
        let converted = verbatim_ort_format::onnx_from_ort(&std::fs::read(&path).unwrap()).unwrap();
        assert!(converted.int8_matmuls > 0, "{file}: no int8 product");
        let read_back = Session::builder(environment)
            .unwrap()
            .commit_from_memory(&converted.onnx)
            .unwrap();
        (original, read_back)
    };
    let (mut original_encoder, mut read_back_encoder) = load_both(shape.encoder().name);
    let (mut original_decoder, mut read_back_decoder) = load_both(shape.decoder().name);

    let corpus = verbatim_sim::Corpus::load(&verbatim_sim::Corpus::source_dir()).unwrap();
    for id in ["real-goforward", "real-wizard"] {
        let samples = corpus.clip(id).unwrap().samples.to_vec();
        let encode = |encoder: &mut Session| {
            let input =
                Tensor::<f32>::from_array(([1usize, samples.len()], samples.clone())).unwrap();
            let mut outputs = encoder
                .run(vec![("input_values", SessionInputValue::from(input))])
                .unwrap();
            outputs.remove("last_hidden_state").unwrap()
        };
        let original = encode(&mut original_encoder);
        let read_back = encode(&mut read_back_encoder);
        let (a, b) = (
            original.try_extract_tensor::<f32>().unwrap().1.to_vec(),
            read_back.try_extract_tensor::<f32>().unwrap().1.to_vec(),
        );
        assert_eq!(a.len(), b.len(), "{id}");
        let largest = a.iter().fold(0f32, |m, v| m.max(v.abs()));
        let worst = a
            .iter()
            .zip(&b)
            .fold(0f32, |m, (x, y)| m.max((x - y).abs()));
        let similar = cosine(&a, &b);
        println!(
            "{id}: encoder output {} values, largest difference {worst:.4} of {largest:.3}, cosine {similar:.6}",
            a.len()
        );
        assert!(
            worst <= ENCODER_RELATIVE_DIFFERENCE * largest,
            "{id}: {worst} of {largest}"
        );
        assert!(similar >= ENCODER_COSINE, "{id}: cosine {similar}");

        // The same greedy decode through both decoders, each with its own cache, on the
        // original encoder's output: the logits agree at every step, and so do the tokens.
        let empty = || {
            Tensor::<f32>::from_array(([1, shape.heads, 0, shape.head_dim], Vec::<f32>::new()))
                .unwrap()
                .into_dyn()
        };
        let cache = || -> Vec<(String, DynValue)> {
            (0..shape.layers)
                .flat_map(|layer| {
                    [
                        "decoder.key",
                        "decoder.value",
                        "encoder.key",
                        "encoder.value",
                    ]
                    .map(|part| (format!("past_key_values.{layer}.{part}"), empty()))
                })
                .collect()
        };
        let (mut original_past, mut read_back_past) = (cache(), cache());
        let mut token = START;
        let mut least = 1.0f64;
        for n in 0..STEPS {
            let first = n == 0;
            let a = step(
                &mut original_decoder,
                token,
                first,
                &original,
                &mut original_past,
            );
            let b = step(
                &mut read_back_decoder,
                token,
                first,
                &original,
                &mut read_back_past,
            );
            let similar = cosine(&a, &b);
            least = least.min(similar);
            assert!(similar >= LOGITS_COSINE, "{id} step {n}: cosine {similar}");
            assert_eq!(argmax(&a), argmax(&b), "{id} step {n}: another token");
            token = argmax(&a) as i64;
            if token == verbatim::engine::moonshine::tokenizer::END {
                break;
            }
        }
        println!("{id}: decoder logits, least cosine over the decode {least:.6}");
    }
}
