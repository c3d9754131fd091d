//! The recorded corpus against the live engine: when whisper's output for a clip no longer
//! matches `corpus/recordings/<model>.json` (tiny.en; base and moonshine-tiny where installed),
//! sim mode would
//! replay stale answers. Clips go through the transcription path the recorder uses (voice
//! activity detection, the engine, no post-processing).
#![cfg(feature = "whisper")]

use crate::common;

use std::path::Path;
use std::sync::Arc;

use verbatim::engine::Engine;
use verbatim::engine::models::ModelDir;
use verbatim::engine::whisper::WhisperEngine;
use verbatim::store::Store;
use verbatim::transcribe::{Audio, Caller, Job, Transcriber, TranscriberParts, Transcript};
use verbatim::wire::transcription::{ResponseFormat, TranscribeOptions};
use verbatim_sim::{Corpus, Recording, word_errors};

/// One clip of each kind the corpus covers (speech with numbers and names, another language,
/// silence, noise, a clip longer than one window, a real voice the 5 s window makes loop, real
/// noise); the whole corpus is re-checked by
/// `verbatim corpus record`.
const CLIPS: &[&str] = &[
    "en-apples",
    "en-siobhan",
    "de-morning",
    "silence-1s",
    "noise-white",
    "noise-brown",
    "en-long-minutes",
    "real-goforward",
    "real-noise",
];

/// A transcriber over `engine` with a store of its own, as `verbatim corpus record` builds it.
fn corpus_transcriber(
    engines: Vec<Arc<dyn Engine>>,
    models: &ModelDir,
) -> (tempfile::TempDir, Arc<Transcriber>) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("corpus.sqlite3")).unwrap();
    let transcriber = Transcriber::new(TranscriberParts {
        engines,
        store: Arc::new(store),
        models: models.clone(),
        slots: 1,
        max_waiting: 0,
    });
    (dir, Arc::new(transcriber))
}

/// Whether `spec`'s text for a clip in `language` is compared with its recording (silence and
/// noise have no language). Whisper's always is. What an English-only Moonshine model makes of
/// another language is noise on the edge of every decision: moonshine-tiny heard the corpus's
/// German clip as "In the closing market, we get a seen and hoiter." on an AVX-512 CPU and "In
/// the future, we will be able to see the results." on an AVX2 one, so such clips are replayed
/// as recorded but not compared.
fn compared(spec: &verbatim::engine::ModelSpec, language: &str) -> bool {
    spec.engine == "whisper" || spec.multilingual() || language.is_empty() || language == "en"
}

/// Words of a recording of `words` words that the live engine may say otherwise. Whisper
/// (whisper.cpp) gave the same texts on an AVX-512 and an AVX2 CPU, so none. ONNX Runtime picks
/// its kernels by CPU and rounds differently on each: moonshine-tiny said "support schedule" on
/// one and "support scheduled" on the other in the corpus's 100-word minutes, so one word in 50
/// (none on a short clip). A stale recording (a changed engine or model) differs by far more.
fn allowed_drift(spec: &verbatim::engine::ModelSpec, words: usize) -> usize {
    if spec.engine == "whisper" {
        0
    } else {
        words / 50
    }
}

#[test]
fn the_live_engine_still_says_what_was_recorded() {
    let Some(models) = common::test_models() else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = Corpus::load(&root.join("corpus")).unwrap();
    let engines: Vec<Arc<dyn Engine>> = vec![
        Arc::new(WhisperEngine::new(models.clone(), common::ENGINE_THREADS)),
        #[cfg(feature = "moonshine")]
        Arc::new(verbatim::engine::moonshine::MoonshineEngine::new(
            models.clone(),
            common::ENGINE_THREADS,
        )),
    ];
    let (_store, transcriber) = corpus_transcriber(engines, &models);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for model in ["tiny.en", "base", "moonshine-tiny"] {
        let Some(spec) = verbatim::engine::catalog::find_model(model) else {
            continue;
        };
        let recorded = root.join(format!("corpus/recordings/{model}.json"));
        let installed = verbatim::engine::catalog::is_installed(&models, spec);
        if model != "tiny.en" && !(installed && recorded.is_file()) {
            eprintln!("{model}: not installed or not recorded; its recording is not checked");
            continue;
        }
        let recording = Recording::load(&recorded).unwrap();
        assert_eq!(
            recording.clips.len(),
            corpus.clips().len(),
            "every clip has a {model} recording"
        );
        let options = TranscribeOptions {
            engine: Some(spec.engine.into()),
            model: Some(model.into()),
            response_format: ResponseFormat::VerboseJson,
            normalize_numbers: Some(false),
            apply_corrections: Some(false),
            ..TranscribeOptions::default()
        };
        for id in CLIPS {
            let clip = corpus.clip(id).unwrap();
            if !compared(spec, &clip.entry.language) {
                continue;
            }
            let job = Job {
                audio: Audio::Samples(clip.samples.to_vec()),
                options: options.clone(),
                await_download: false,
                caller: Caller::Corpus,
            };
            let live: Transcript = runtime.block_on(transcriber.run(job)).unwrap();
            let recorded = &recording.clips[*id];
            let (mut differ, words) = word_errors(&recorded.text, &live.raw_text);
            if live.raw_text != recorded.text {
                // Punctuation or case alone counts as one word.
                differ = differ.max(1);
            }
            assert!(
                differ <= allowed_drift(spec, words),
                "clip {id}: the live {model} engine differs from the recording in {differ} of \
                 {words} words; re-record with `verbatim corpus record --model {model}`\n  \
                 live: {:?}\n  recorded: {:?}",
                live.raw_text,
                recorded.text
            );
            assert_eq!(
                live.language, recorded.language,
                "clip {id}: re-record with `verbatim corpus record --model {model}`"
            );
        }
    }
}
