//! Where an engine's time goes on short clips: each clip of a list (one `file<TAB>text` line
//! each, or the corpus's real recordings) heard by a model after one warm-up, in rounds; prints
//! per clip the time of each round, then median, p90 and total per round. With
//! `RUST_LOG=verbatim::engine::moonshine=debug` the Moonshine engine logs its encoder and decoder
//! time of every chunk. With a list, also the word error rate of the first round against its
//! reference texts (numbers normalised on both sides). Chunks are planned as the server plans a
//! file's for the engine; `--close-after S` ends a chunk at the first pause once it holds S
//! seconds instead, `--close-after off` packs chunks up to 30 s.
//!
//! ```text
//! VERBATIM_TEST_MODELS=~/.cache/verbatim/models \
//!     cargo run --release --example engine_stages -- moonshine-base [LIST] [--rounds N] \
//!     [--threads N] [--workers N] [--close-after S|off]
//! ```

use std::path::{Path, PathBuf};
use std::time::Instant;

use verbatim::audio::{decode, vad};
use verbatim::engine::models::ModelDir;
use verbatim::engine::{Engine, EngineRequest, LanguageChoice};
use verbatim::transcribe::numbers::normalize_numbers;
use verbatim_sim::word_errors;

/// The clips of `list` (`file<TAB>text`, files relative to the list) with their texts, or the
/// corpus's real ones (no texts).
fn clips(list: Option<&Path>) -> Vec<(PathBuf, Option<String>)> {
    match list {
        Some(list) => {
            let base = list.parent().unwrap_or(Path::new("."));
            std::fs::read_to_string(list)
                .expect("the list")
                .lines()
                .filter_map(|line| {
                    let mut fields = line.split('\t');
                    let file = fields.next().filter(|file| !file.is_empty())?;
                    Some((base.join(file), fields.next().map(str::to_owned)))
                })
                .collect()
        }
        None => {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/clips");
            let mut clips: Vec<PathBuf> = std::fs::read_dir(&dir)
                .expect("the corpus")
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("real-"))
                })
                .filter(|p| !p.to_string_lossy().contains("noise"))
                .collect();
            clips.sort();
            clips.into_iter().map(|clip| (clip, None)).collect()
        }
    }
}

/// The engine of `model`; `workers`: a file's chunks heard at once (None: the engine's default).
fn engine_for(
    models: ModelDir,
    model: &str,
    threads: usize,
    workers: Option<usize>,
) -> Box<dyn Engine> {
    use verbatim::engine::{moonshine::MoonshineEngine, whisper::WhisperEngine};
    let spec = verbatim::engine::catalog::find_model(model).expect("a model of the catalog");
    match (spec.engine, workers) {
        ("moonshine", None) => Box::new(MoonshineEngine::new(models, threads)),
        ("moonshine", Some(n)) => Box::new(MoonshineEngine::new(models, threads).with_workers(n)),
        (_, None) => Box::new(WhisperEngine::new(models, threads)),
        (_, Some(n)) => Box::new(WhisperEngine::new(models, threads).with_workers(n)),
    }
}

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let mut args = std::env::args().skip(1);
    let model = args.next().expect("a model id");
    let (mut list, mut rounds, mut threads, mut close_after) = (None, 3usize, 2usize, None);
    let mut workers = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rounds" => rounds = args.next().and_then(|n| n.parse().ok()).expect("N"),
            "--threads" => threads = args.next().and_then(|n| n.parse().ok()).expect("N"),
            "--workers" => workers = Some(args.next().and_then(|n| n.parse().ok()).expect("N")),
            "--close-after" => {
                let value = args.next().expect("S or off");
                close_after = Some(value.parse::<f64>().ok().filter(|s| *s > 0.0));
            }
            _ => list = Some(PathBuf::from(arg)),
        }
    }
    let models =
        ModelDir::new(std::env::var("VERBATIM_TEST_MODELS").expect("VERBATIM_TEST_MODELS"));
    let engine = engine_for(models, &model, threads, workers);
    let audio: Vec<(PathBuf, Option<String>, Vec<f32>)> = clips(list.as_deref())
        .into_iter()
        .map(|(path, text)| {
            let samples = decode::decode_file(&path, None).expect("a clip").samples;
            (path, text, samples)
        })
        .collect();
    let limits = match close_after.unwrap_or(engine.close_file_chunks_after()) {
        Some(seconds) => vad::Limits::FILE.closing_after(seconds),
        None => vad::Limits::FILE,
    };
    let chunks = |samples: &[f32]| {
        vad::plan_chunks_within(&vad::frame_scores(samples), samples.len(), limits)
    };
    let hear = |samples: &[f32]| {
        let request =
            EngineRequest::speech(samples, chunks(samples), LanguageChoice::Exact("en".into()));
        let started = Instant::now();
        let heard = engine.transcribe(&model, &request).expect("transcribed");
        (started.elapsed().as_secs_f64(), heard.text)
    };
    hear(&audio[0].2);
    let mut times = Vec::new();
    let mut totals = vec![0.0; rounds];
    let (mut errors, mut words) = (0, 0);
    for (path, text, samples) in &audio {
        let mut line = format!(
            "{:>5.1} s {}",
            samples.len() as f64 / 16_000.0,
            path.file_name().unwrap().to_string_lossy()
        );
        for (round, total) in totals.iter_mut().enumerate() {
            let (seconds, heard) = hear(samples);
            if let (0, Some(reference)) = (round, text) {
                let (e, w) = word_errors(&normalize_numbers(reference), &normalize_numbers(&heard));
                (errors, words) = (errors + e, words + w);
            }
            line += &format!(" {seconds:.3}");
            *total += seconds;
            times.push(seconds);
        }
        println!("{line}");
    }
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    let per_round = totals.iter().sum::<f64>() / rounds as f64;
    let wer = if words > 0 {
        format!(
            ", WER {:.1} % ({errors}/{words})",
            100.0 * errors as f64 / words as f64
        )
    } else {
        String::new()
    };
    println!(
        "{model}: median {:.3} s, p90 {:.3} s, {per_round:.2} s per round{wer} ({} clips, {rounds} rounds, {threads} threads)",
        at(0.5),
        at(0.9),
        audio.len()
    );
}
