//! What live audio's open chunk reads as it grows: each live chunk of each recording heard
//! through its prefixes, 0.1 s apart from the 0.6 s of the first provisional pass, once as a
//! provisional pass (tentative text) and once as a committed one would hear it. A prefix ends
//! where the capture is, often inside a word, which whisper may take for silence.
//!
//! ```text
//! VERBATIM_TEST_MODELS=~/.cache/verbatim/models \
//!     cargo run --release --example open_chunk -- [--model tiny.en-q8_0] [--until 3.0] \
//!     [--whole] [--show] LIST
//! ```
//!
//! LIST: recordings, one `path<TAB>anything` a line. `--whole` hears each recording as one
//! open chunk from its start instead of cutting it with the live voice activity detection (for
//! noise, which opens no chunk: as if it had fooled the detector). `--until` ends each chunk's
//! prefixes there (seconds). `--show` prints every prefix's texts. Prints, per recording and in
//! all, the prefixes heard and how many read empty each way.

#[path = "shared/args.rs"]
mod args;

use std::path::Path;

use verbatim::audio::decode;
use verbatim::audio::vad::chunks::Limits;
use verbatim::audio::vad::{Chunker, SpeechChunk};
use verbatim::engine::models::ModelDir;
use verbatim::engine::whisper::WhisperEngine;
use verbatim::engine::{Engine, EngineRequest, LanguageChoice};
use verbatim::transcribe::MIN_PROVISIONAL_SAMPLES;

use args::Args;

const RATE: f64 = 16_000.0;
/// The first provisional pass comes once the open chunk holds this much.
const FIRST_PASS_SECONDS: f64 = MIN_PROVISIONAL_SAMPLES as f64 / RATE;
const STEP_SECONDS: f64 = 0.1;

#[derive(Default)]
struct Tally {
    prefixes: usize,
    empty_provisional: usize,
    empty_committed: usize,
}

fn main() {
    let mut args = Args::from_env();
    let whole = args.flag("--whole");
    let show = args.flag("--show");
    let model = args.value("--model", "tiny.en-q8_0");
    let until: f64 = args
        .value("--until", "3.0")
        .parse()
        .expect("--until seconds");
    let list = args.rest().first().expect("LIST").clone();
    let models =
        ModelDir::new(std::env::var("VERBATIM_TEST_MODELS").expect("VERBATIM_TEST_MODELS"));
    let engine = WhisperEngine::new(models, 2);

    let mut all = Tally::default();
    let text = std::fs::read_to_string(&list).expect("the list");
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let path = line.split('\t').next().unwrap_or(line);
        let path = Path::new(&list)
            .parent()
            .unwrap_or(Path::new("."))
            .join(path);
        let samples = decode::decode_file(&path, None)
            .expect("a recording")
            .samples;
        let chunks = if whole {
            vec![SpeechChunk {
                start: 0,
                samples: samples.clone(),
                cuts: Vec::new(),
            }]
        } else {
            Chunker::within(true, Limits::LIVE).chunks_of(&samples)
        };
        let mut tally = Tally::default();
        for chunk in &chunks {
            if show {
                println!(
                    "{}: chunk at {:.2} s, {:.2} s",
                    path.display(),
                    chunk.start as f64 / RATE,
                    chunk.samples.len() as f64 / RATE
                );
            }
            let last = (chunk.samples.len() as f64 / RATE).min(until);
            let mut seconds = FIRST_PASS_SECONDS;
            while seconds <= last + 1e-9 {
                let prefix = &chunk.samples[..((seconds * RATE) as usize).min(chunk.samples.len())];
                let tentative = hear(&engine, &model, prefix, true);
                let committed = hear(&engine, &model, prefix, false);
                if show {
                    println!("  {seconds:.1} s: {tentative:?} (committed: {committed:?})");
                }
                tally.prefixes += 1;
                tally.empty_provisional += usize::from(tentative.is_empty());
                tally.empty_committed += usize::from(committed.is_empty());
                seconds += STEP_SECONDS;
            }
        }
        report(&path.display().to_string(), &tally);
        all.prefixes += tally.prefixes;
        all.empty_provisional += tally.empty_provisional;
        all.empty_committed += tally.empty_committed;
    }
    report("all", &all);
}

/// The text of `samples` heard as the open chunk; `provisional`: for tentative text.
fn hear(engine: &WhisperEngine, model: &str, samples: &[f32], provisional: bool) -> String {
    engine
        .transcribe(
            model,
            &EngineRequest {
                provisional,
                ..EngineRequest::speech(
                    samples,
                    std::iter::once(0..samples.len()).collect(),
                    LanguageChoice::Exact("en".into()),
                )
            },
        )
        .expect("the engine hears the audio")
        .text
        .trim()
        .to_string()
}

fn report(name: &str, tally: &Tally) {
    println!(
        "{name}: {} prefixes, empty provisionally {}, empty as committed {}",
        tally.prefixes, tally.empty_provisional, tally.empty_committed
    );
}
