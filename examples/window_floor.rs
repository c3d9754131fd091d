//! Measures encoder windows and recovery orders: speed (median, 90th percentile, slowest clip,
//! seconds per round) and word error rate, on the corpus's synthetic and real English clips
//! apart, and on clips of your own, interleaved so that a busy machine weighs on every one alike.
//!
//! ```text
//! VERBATIM_TEST_MODELS=~/.cache/verbatim/models \
//!     cargo run --release --example window_floor -- [--model tiny.en] [--rounds 3] \
//!     [--longest 8] [--names] [--show] [--extra LIST] [--only real|synthetic|extra] \
//!     [--max-chunk SECONDS] \
//!     CONTENDER...
//! ```
//!
//! A CONTENDER is `WINDOW` or `WINDOW:RETRIES`. WINDOW is `whole` (no voice activity detection,
//! Whisper's full 30 s window), `full` (the chunks of speech, full window) or a floor in encoder
//! frames (chunks of speech in a window fitted to each, never under the floor; 50 frames a
//! second). RETRIES is the recovery order, comma-separated: `temperature`, `wider`, `full`, or
//! `none` (default: the server's); a suffix `/wN` shares each file's chunks out among N decoder
//! states, the threads split between them (default: the server's). Clips: the English ones no
//! longer than `--longest` seconds; `--extra LIST` adds clips of your own, one
//! `path<TAB>reference text` a line (any format the server decodes), reported apart. Prints,
//! per contender and set: median, 90th percentile and slowest seconds per clip, seconds per
//! round, WER against the reference texts (numbers normalised on both sides), chunks heard
//! again, passes after the first, loops cut and short tails heard through a window of their
//! own.
//! `--max-chunk` packs speech into chunks of at most SECONDS (the server: 30, the most), cut
//! at the quietest moment after two thirds of it; a contender's suffix `@S` ends a chunk at the
//! first pause (padded regions apart) once it holds S seconds. `--names` gives each clip the
//! names in its reference text (capitalised words after the first) as the initial prompt, as
//! dictionary terms would be.
//! Chunks are heard whole, their pauses included (`vad::chunks_to_hear`): the server leaves the
//! pauses inside a file's chunks out (`Limits::leave_out_pauses`), so its figures for files are
//! measured through the server (`scripts/bench-peers`).

use std::path::Path;
use std::time::Instant;

use verbatim::audio::{decode, vad};
use verbatim::engine::models::ModelDir;
use verbatim::engine::whisper::{EncoderWindow, Recovery, WhisperEngine};
use verbatim::engine::{Engine, EngineRequest, LanguageChoice};
use verbatim::transcribe::numbers::normalize_numbers;
use verbatim_sim::{Corpus, word_errors};

/// One clip to hear, from the corpus or the extra list.
struct Sample {
    id: String,
    set: &'static str,
    text: String,
    samples: Vec<f32>,
}

/// One way of transcribing to measure.
struct Contender {
    name: String,
    engine: WhisperEngine,
    /// Voice activity detection first.
    vad: bool,
    /// A chunk holding this many seconds ends at the next pause (None: the server's rule).
    close_after: Option<f64>,
    /// Per set: seconds of every clip and round, word errors and reference words.
    seconds: Vec<Vec<f64>>,
    errors: Vec<(usize, usize)>,
}

struct Options {
    model: String,
    rounds: usize,
    longest: f64,
    names: bool,
    show: bool,
    extra: Option<String>,
    only: Option<String>,
    /// The longest chunk in seconds (None: the server's 30 s).
    max_chunk: Option<f64>,
    contenders: Vec<String>,
}

const SETS: [&str; 3] = ["synthetic", "real", "extra"];

fn options() -> Options {
    let mut options = Options {
        model: "tiny.en".into(),
        rounds: 3,
        longest: 8.0,
        names: false,
        show: false,
        extra: None,
        only: None,
        max_chunk: None,
        contenders: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().expect("a value after the option");
        match arg.as_str() {
            "--model" => options.model = value(),
            "--rounds" => options.rounds = value().parse().expect("--rounds N"),
            "--longest" => options.longest = value().parse().expect("--longest SECONDS"),
            "--extra" => options.extra = Some(value()),
            "--only" => options.only = Some(value()),
            "--max-chunk" => {
                options.max_chunk = Some(value().parse().expect("--max-chunk SECONDS"))
            }
            "--show" => options.show = true,
            "--names" => options.names = true,
            _ => options.contenders.push(arg),
        }
    }
    assert!(
        !options.contenders.is_empty(),
        "name at least one CONTENDER"
    );
    options
}

fn contender(name: &str, models: &ModelDir) -> Contender {
    let (name_only, close_after) = match name.split_once('@') {
        Some((plain, seconds)) => (plain, Some(seconds.parse().expect("@S: seconds"))),
        None => (name, None),
    };
    let (plain, workers) = match name_only.split_once("/w") {
        Some((plain, workers)) => (plain, Some(workers.parse().expect("/wN: N decoder states"))),
        None => (name_only, None),
    };
    let (window_name, retries) = plain.split_once(':').unwrap_or((plain, ""));
    let (window, vad) = match window_name {
        "whole" => (EncoderWindow::Full, false),
        "full" => (EncoderWindow::Full, true),
        floor => (
            EncoderWindow::Fitted {
                floor: floor.parse().expect("whole, full or a floor in frames"),
            },
            true,
        ),
    };
    let mut engine = WhisperEngine::new(models.clone(), 0).with_window(window);
    if let Some(workers) = workers {
        engine = engine.with_workers(workers);
    }
    if !retries.is_empty() {
        engine = engine.with_recovery(Recovery::parse(retries).expect("a recovery order"));
    }
    Contender {
        name: name.into(),
        engine,
        vad,
        close_after,
        seconds: vec![Vec::new(); SETS.len()],
        errors: vec![(0, 0); SETS.len()],
    }
}

/// The names in a reference text: its capitalised words after the first.
fn names(text: &str) -> Option<String> {
    let names: Vec<&str> = text
        .split_whitespace()
        .skip(1)
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| w.chars().next().is_some_and(char::is_uppercase))
        .collect();
    (!names.is_empty()).then(|| names.join("\n"))
}

/// Transcribes `sample` as `contender` does (with its names as the prompt under `--names`, in
/// chunks of at most `--max-chunk`), timed.
fn hear(contender: &Contender, options: &Options, sample: &Sample) -> (String, f64) {
    let (model, names) = (options.model.as_str(), options.names);
    let samples = &sample.samples;
    let started = Instant::now();
    let frames = |seconds: f64| {
        let samples_at_most = (seconds * vad::SAMPLE_RATE as f64) as usize;
        samples_at_most.min(vad::MAX_CHUNK_SAMPLES) / vad::FRAME
    };
    let chunks = match (options.max_chunk, contender.close_after) {
        (None, None) => vad::chunks_to_hear(samples, contender.vad),
        _ if !contender.vad => vad::chunks_to_hear(samples, false),
        (max_chunk, close_after) => {
            let mut limits = vad::Limits::FILE;
            if let Some(seconds) = max_chunk {
                limits.max_chunk = frames(seconds);
                limits.earliest_cut = limits.max_chunk * 2 / 3;
            }
            if let Some(seconds) = close_after {
                limits.close_after = frames(seconds);
            }
            vad::plan_chunks_within(&vad::frame_scores(samples), samples.len(), limits)
        }
    };
    let request = EngineRequest {
        trimmed_to_speech: contender.vad,
        initial_prompt: if names {
            self::names(&sample.text)
        } else {
            None
        },
        ..EngineRequest::speech(samples, chunks, LanguageChoice::Exact("en".into()))
    };
    let text = if request.chunks.is_empty() {
        String::new()
    } else {
        contender
            .engine
            .transcribe(model, &request)
            .expect("the engine transcribes")
            .text
    };
    (text, started.elapsed().as_secs_f64())
}

/// The clips of `list` (one `path<TAB>text` a line, paths relative to the list's folder).
fn extra_samples(list: &str) -> Vec<Sample> {
    let text = std::fs::read_to_string(list).expect("the extra list");
    let folder = Path::new(list).parent().unwrap_or(Path::new("."));
    text.lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (path, reference) = line.split_once('\t').expect("path<TAB>text");
            let path = folder.join(path);
            let decoded = decode::decode_file(&path, None).expect("a clip the server decodes");
            Sample {
                id: path.file_stem().unwrap().to_string_lossy().into(),
                set: "extra",
                text: reference.trim().into(),
                samples: decoded.samples,
            }
        })
        .collect()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = (p * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn main() {
    let options = options();
    let models =
        ModelDir::new(std::env::var("VERBATIM_TEST_MODELS").expect("VERBATIM_TEST_MODELS"));
    let corpus = Corpus::load(&Corpus::source_dir()).expect("the corpus");
    let mut samples: Vec<Sample> = corpus
        .clips()
        .iter()
        .filter(|c| c.entry.language == "en" && c.duration() <= options.longest)
        .map(|c| Sample {
            id: c.id().into(),
            set: if c.is_real() { "real" } else { "synthetic" },
            text: c.entry.text.clone(),
            samples: c.samples.to_vec(),
        })
        .collect();
    if let Some(list) = &options.extra {
        samples.extend(extra_samples(list));
    }
    if let Some(only) = &options.only {
        samples.retain(|s| s.set == only);
    }
    assert!(!samples.is_empty(), "no clips to hear");
    let mut contenders: Vec<Contender> = options
        .contenders
        .iter()
        .map(|name| contender(name, &models))
        .collect();
    for contender in &contenders {
        hear(contender, &options, &samples[0]); // loads the model
    }
    let before: Vec<_> = contenders.iter().map(|c| c.engine.retries()).collect();
    for round in 0..options.rounds {
        for sample in &samples {
            let set = SETS.iter().position(|s| *s == sample.set).unwrap();
            for k in 0..contenders.len() {
                let i = (k + round) % contenders.len();
                let (text, seconds) = hear(&contenders[i], &options, sample);
                let contender = &mut contenders[i];
                contender.seconds[set].push(seconds);
                if round == 0 {
                    let (errors, words) =
                        word_errors(&normalize_numbers(&sample.text), &normalize_numbers(&text));
                    contender.errors[set].0 += errors;
                    contender.errors[set].1 += words;
                    if options.show {
                        eprintln!(
                            "{} {} ({seconds:.2} s, {errors}): {text}",
                            contender.name, sample.id
                        );
                    }
                }
            }
        }
    }
    println!(
        "English clips of at most {} s, {} rounds, {}; retries: chunks/passes/cut/tails over all sets",
        options.longest, options.rounds, options.model
    );
    println!(
        "{:<22} {:<9} {:>5} {:>8} {:>6} {:>6} {:>8} {:>6}  retries",
        "contender", "set", "clips", "median s", "p90 s", "max s", "s/round", "WER %"
    );
    for (contender, before) in contenders.iter().zip(before) {
        let after = contender.engine.retries();
        for (set, name) in SETS.iter().enumerate() {
            let mut seconds = contender.seconds[set].clone();
            if seconds.is_empty() {
                continue;
            }
            seconds.sort_by(f64::total_cmp);
            let (errors, words) = contender.errors[set];
            println!(
                "{:<22} {:<9} {:>5} {:>8.3} {:>6.3} {:>6.3} {:>8.2} {:>6.1}  {}/{}/{}/{}",
                contender.name,
                name,
                seconds.len() / options.rounds,
                percentile(&seconds, 0.5),
                percentile(&seconds, 0.9),
                seconds[seconds.len() - 1],
                seconds.iter().sum::<f64>() / options.rounds as f64,
                errors as f64 * 100.0 / words.max(1) as f64,
                after.chunks - before.chunks,
                after.passes - before.passes,
                after.cut - before.cut,
                after.tails - before.tails,
            );
        }
    }
}
