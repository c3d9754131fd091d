//! The recorded corpus against the live engine: when whisper's output for a clip no longer
//! matches `corpus/recordings/<model>.json` (tiny.en; base where installed), sim mode would
//! replay stale answers.
#![cfg(feature = "whisper")]

mod common;

use std::path::Path;

use verbatim::engine::whisper::WhisperEngine;
use verbatim::engine::{Engine, EngineRequest, LanguageChoice, Task};
use verbatim_sim::{Corpus, Recording};

/// One clip of each kind the corpus covers (speech with numbers and names, another language,
/// silence, noise); the whole corpus is re-checked by `verbatim corpus record`.
const CLIPS: &[&str] = &[
    "en-apples",
    "en-siobhan",
    "de-morning",
    "silence-1s",
    "noise-white",
];

#[test]
fn the_live_engine_still_says_what_was_recorded() {
    let Some(models) = common::test_models() else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = Corpus::load(&root.join("corpus")).unwrap();
    let engine = WhisperEngine::new(models.clone(), 0);
    for model in ["tiny.en", "base"] {
        let recorded = root.join(format!("corpus/recordings/{model}.json"));
        let installed = models.path().join(format!("ggml-{model}.bin")).is_file();
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
        for id in CLIPS {
            let clip = corpus.clip(id).unwrap();
            let live = engine
                .transcribe(
                    model,
                    &EngineRequest {
                        samples: &clip.samples,
                        language: LanguageChoice::Auto,
                        task: Task::Transcribe,
                        initial_prompt: None,
                    },
                )
                .unwrap();
            let recorded = &recording.clips[*id];
            assert_eq!(
                live.text, recorded.text,
                "clip {id}: the live {model} engine differs from the recording; re-record with `verbatim corpus record --model {model}`"
            );
            assert_eq!(
                live.language, recorded.language,
                "clip {id}: re-record with `verbatim corpus record --model {model}`"
            );
        }
    }
}
