//! Measures the fitted encoder window: speed and word error rate on the corpus's clips for
//! each encoder window, interleaved so that a busy machine weighs on every one alike.
//!
//! ```text
//! VERBATIM_TEST_MODELS=~/.cache/verbatim/models \
//!     cargo run --release --example window_floor -- [--model tiny.en] [--rounds 3] \
//!     [--longest 8] [--names] [--show] WINDOW...
//! ```
//!
//! Each WINDOW is `whole` (no voice activity detection, Whisper's full 30 s window: the
//! path before either existed), `full` (the chunks of speech, full window) or a floor in
//! encoder frames (chunks of speech in a window fitted to each, never under the floor; 50
//! frames a second). Clips: the English ones no longer than `--longest` seconds. Prints, per
//! window: median seconds per clip, seconds per round, WER against the reference texts (numbers
//! normalised on both sides), and how many chunks the guard sent back to the full window.
//! `--names` gives each clip the names in its reference text (capitalised words after the
//! first) as the initial prompt, as dictionary terms would be.

use std::time::Instant;

use verbatim::audio::vad;
use verbatim::cancel::Cancel;
use verbatim::engine::models::ModelDir;
use verbatim::engine::whisper::{EncoderWindow, WhisperEngine};
use verbatim::engine::{Engine, EngineRequest, LanguageChoice, Task};
use verbatim::transcribe::numbers::normalize_numbers;
use verbatim_sim::{Clip, Corpus, word_errors};

/// One window to measure.
struct Contender {
    name: String,
    engine: WhisperEngine,
    /// Voice activity detection first.
    vad: bool,
    seconds: Vec<f64>,
    errors: (usize, usize),
}

struct Options {
    model: String,
    rounds: usize,
    longest: f64,
    names: bool,
    show: bool,
    windows: Vec<String>,
}

fn options() -> Options {
    let mut options = Options {
        model: "tiny.en".into(),
        rounds: 3,
        longest: 8.0,
        names: false,
        show: false,
        windows: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().expect("a value after the option");
        match arg.as_str() {
            "--model" => options.model = value(),
            "--rounds" => options.rounds = value().parse().expect("--rounds N"),
            "--longest" => options.longest = value().parse().expect("--longest SECONDS"),
            "--show" => options.show = true,
            "--names" => options.names = true,
            _ => options.windows.push(arg),
        }
    }
    assert!(!options.windows.is_empty(), "name at least one WINDOW");
    options
}

fn contender(name: &str, models: &ModelDir) -> Contender {
    let (window, vad) = match name {
        "whole" => (EncoderWindow::Full, false),
        "full" => (EncoderWindow::Full, true),
        floor => (
            EncoderWindow::Fitted {
                floor: floor.parse().expect("whole, full or a floor in frames"),
            },
            true,
        ),
    };
    Contender {
        name: name.into(),
        engine: WhisperEngine::new(models.clone(), 0).with_window(window),
        vad,
        seconds: Vec::new(),
        errors: (0, 0),
    }
}

/// The names in a clip's reference text: its capitalised words after the first.
fn names(clip: &Clip) -> Option<String> {
    let names: Vec<&str> = clip
        .entry
        .text
        .split_whitespace()
        .skip(1)
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| w.chars().next().is_some_and(char::is_uppercase))
        .collect();
    (!names.is_empty()).then(|| names.join("\n"))
}

/// Transcribes `clip` as `contender` does (with its names as the prompt when `names`), timed.
fn hear(contender: &Contender, model: &str, clip: &Clip, names: bool) -> (String, f64) {
    let samples = &clip.samples;
    let chunks = if contender.vad {
        vad::plan_chunks(&vad::frame_scores(samples), samples.len())
    } else {
        std::iter::once(0..samples.len()).collect()
    };
    let request = EngineRequest {
        samples,
        chunks,
        trimmed_to_speech: contender.vad,
        language: LanguageChoice::Exact(clip.entry.language.clone()),
        task: Task::Transcribe,
        initial_prompt: if names { self::names(clip) } else { None },
        words: false,
        cancel: Cancel::new(),
    };
    let started = Instant::now();
    let text = contender
        .engine
        .transcribe(model, &request)
        .expect("the engine transcribes")
        .text;
    (text, started.elapsed().as_secs_f64())
}

fn main() {
    let options = options();
    let models =
        ModelDir::new(std::env::var("VERBATIM_TEST_MODELS").expect("VERBATIM_TEST_MODELS"));
    let corpus = Corpus::load(&Corpus::source_dir()).expect("the corpus");
    let clips: Vec<&Clip> = corpus
        .clips()
        .iter()
        .filter(|c| c.entry.language == "en" && c.duration() <= options.longest)
        .collect();
    let mut contenders: Vec<Contender> = options
        .windows
        .iter()
        .map(|name| contender(name, &models))
        .collect();
    for contender in &contenders {
        hear(contender, &options.model, clips[0], false); // loads the model
    }
    let reruns_before: Vec<u64> = contenders.iter().map(|c| c.engine.reruns()).collect();
    for round in 0..options.rounds {
        for clip in &clips {
            for k in 0..contenders.len() {
                let i = (k + round) % contenders.len();
                let (text, seconds) = hear(&contenders[i], &options.model, clip, options.names);
                let contender = &mut contenders[i];
                contender.seconds.push(seconds);
                if round == 0 {
                    let (errors, words) = word_errors(
                        &normalize_numbers(&clip.entry.text),
                        &normalize_numbers(&text),
                    );
                    contender.errors.0 += errors;
                    contender.errors.1 += words;
                    if options.show {
                        eprintln!("{} {}: {text}", contender.name, clip.id());
                    }
                }
            }
        }
    }
    println!(
        "{} clips of at most {} s, {} rounds, {}",
        clips.len(),
        options.longest,
        options.rounds,
        options.model
    );
    println!("window  median s/clip  s/round  WER %  reruns");
    for (contender, before) in contenders.iter().zip(reruns_before) {
        let mut seconds = contender.seconds.clone();
        seconds.sort_by(f64::total_cmp);
        println!(
            "{:>6}  {:>13.3}  {:>7.2}  {:>5.1}  {}/{}",
            contender.name,
            seconds[seconds.len() / 2],
            seconds.iter().sum::<f64>() / options.rounds as f64,
            contender.errors.0 as f64 * 100.0 / contender.errors.1.max(1) as f64,
            contender.engine.reruns() - before,
            clips.len() * options.rounds,
        );
    }
}
