//! Measures what timing words costs: requests with and without words, on a copy of the model
//! with DTW alignment heads and on one without, interleaved so that a busy machine weighs on
//! every way alike; the server's path (voice activity detection, fitted windows).
//!
//! ```text
//! VERBATIM_TEST_MODELS=~/.cache/verbatim/models \
//!     cargo run --release --example word_timing -- [--model tiny.en] [--rounds 3] \
//!     [--longest 8] [--show]
//! ```
//!
//! Ways: `plain` (no DTW on the context, no words: an ordinary request on the server),
//! `dtw-ctx` (DTW on the context, no words: what every ordinary request would pay with DTW
//! always on), `tt-words` (words from token timestamps alone), `dtw-words` (words with DTW, on
//! the server's second copy of the model). Prints the resident memory before and after that
//! copy is loaded and, per way, median seconds per clip and seconds per round. `--show` prints
//! each clip's words with both timings.

use std::time::Instant;

use verbatim::audio::vad;
use verbatim::engine::models::ModelDir;
use verbatim::engine::whisper::{WhisperEngine, WordTiming};
use verbatim::engine::{Engine, EngineOutput, EngineRequest, LanguageChoice};
use verbatim_sim::{Clip, Corpus};

struct Way {
    name: &'static str,
    /// Index of its engine.
    engine: usize,
    words: bool,
    seconds: Vec<f64>,
}

/// This process's resident memory in MB.
fn resident_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .unwrap_or(0.0);
    kb / 1024.0
}

fn hear(engine: &WhisperEngine, way: &Way, model: &str, clip: &Clip) -> (EngineOutput, f64) {
    let samples = &clip.samples;
    let request = EngineRequest {
        words: way.words,
        ..EngineRequest::speech(
            samples,
            vad::plan_chunks(&vad::frame_scores(samples), samples.len()),
            LanguageChoice::Exact(clip.entry.language.clone()),
        )
    };
    let started = Instant::now();
    let output = engine
        .transcribe(model, &request)
        .expect("the engine transcribes");
    (output, started.elapsed().as_secs_f64())
}

fn show(name: &str, output: &EngineOutput) {
    let words: Vec<String> = output
        .segments
        .iter()
        .flat_map(|s| &s.words)
        .map(|w| format!("{}[{:.2}-{:.2}]", w.word, w.start, w.end))
        .collect();
    eprintln!("  {name:>9}: {}", words.join(" "));
}

fn main() {
    let mut model = "tiny.en".to_string();
    let mut rounds = 3;
    let mut longest = 8.0;
    let mut show_words = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().expect("a value after the option");
        match arg.as_str() {
            "--model" => model = value(),
            "--rounds" => rounds = value().parse().expect("--rounds N"),
            "--longest" => longest = value().parse().expect("--longest SECONDS"),
            "--show" => show_words = true,
            other => panic!("unknown argument {other}"),
        }
    }
    let models =
        ModelDir::new(std::env::var("VERBATIM_TEST_MODELS").expect("VERBATIM_TEST_MODELS"));
    let corpus = Corpus::load(&Corpus::source_dir()).expect("the corpus");
    let clips: Vec<&Clip> = corpus
        .clips()
        .iter()
        .filter(|c| c.entry.language == "en" && c.duration() <= longest)
        .collect();
    // The server's engine (DTW on a second copy, for words only), and the other two ways.
    let engines = [
        WordTiming::DtwOnDemand,
        WordTiming::DtwAlways,
        WordTiming::TokenTimestamps,
    ]
    .map(|timing| WhisperEngine::new(models.clone(), 0).with_word_timing(timing));
    let way = |name, engine, words| Way {
        name,
        engine,
        words,
        seconds: Vec::new(),
    };
    let mut ways = vec![
        way("plain", 0, false),
        way("dtw-ctx", 1, false),
        way("tt-words", 2, true),
        way("dtw-words", 0, true),
    ];
    // Loads the models: the plain copy, then the one for words.
    let before = resident_mb();
    hear(&engines[0], &ways[0], &model, clips[0]);
    let plain = resident_mb();
    hear(&engines[0], &ways[3], &model, clips[0]);
    let both = resident_mb();
    println!(
        "resident memory: {before:.0} MB, {plain:.0} MB with {model} loaded, {both:.0} MB with \
         its copy for words"
    );
    for way in &ways {
        hear(&engines[way.engine], way, &model, clips[0]);
    }
    for round in 0..rounds {
        for clip in &clips {
            if show_words && round == 0 {
                eprintln!(
                    "{} ({:.2} s): {}",
                    clip.id(),
                    clip.duration(),
                    clip.entry.text
                );
            }
            for k in 0..ways.len() {
                let i = (k + round + clip.duration() as usize) % ways.len();
                let (output, seconds) = hear(&engines[ways[i].engine], &ways[i], &model, clip);
                if show_words && round == 0 && ways[i].words {
                    show(ways[i].name, &output);
                }
                ways[i].seconds.push(seconds);
            }
        }
    }
    println!(
        "{} clips of at most {longest} s, {rounds} rounds, {model}",
        clips.len()
    );
    println!("way        median s/clip  s/round  vs plain");
    let plain: f64 = ways[0].seconds.iter().sum();
    for way in &ways {
        let mut seconds = way.seconds.clone();
        seconds.sort_by(f64::total_cmp);
        let total: f64 = seconds.iter().sum();
        println!(
            "{:>9}  {:>13.3}  {:>7.3}  {:>+7.1} %",
            way.name,
            seconds[seconds.len() / 2],
            total / rounds as f64,
            (total / plain - 1.0) * 100.0,
        );
    }
}
