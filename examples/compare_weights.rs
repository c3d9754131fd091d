//! Speed and word error rate of installed whisper models side by side, typically one model's
//! f16, q8_0 and q5_1 weights. Every model is loaded (and warmed by one clip) before timing;
//! then each round transcribes every corpus clip with every model, the models' order rotating
//! from round to round, so a machine's varying load falls on all of them alike. Requests are
//! what the server makes: voice activity chunks, the fitted encoder window, the clip's language.
//!
//! ```text
//! verbatim models import-ct2 ~/.cache/verbatim/ct2/tiny.en --quantize q5_1   # and q8_0, f16
//! cargo run --release --example compare_weights -- tiny.en tiny.en-q8_0 tiny.en-q5_1
//! ```
//!
//! Models come from `VERBATIM_MODELS_DIR` (default: the data folder's `models`). Settings:
//! `THREADS` (default 2), `ROUNDS` (3), `MIN_S` / `MAX_S` (clip length, default 1 to 7 s),
//! `LANGS` (comma-separated clip languages, default `en`), `SHOW=1` prints every text once.
//! WER counts words after number normalisation, lower case, letters and digits only.
//!
//! Columns: median wall time per clip, mean wall time per round, the sum over clips of each
//! clip's fastest run (the least disturbed by other work on the machine), the median over all
//! runs of the ratio of a run's wall time to the first model's run of the same clip in the same
//! round (runs seconds apart, so the ratio hardly feels load that changes more slowly), median
//! CPU time (user + system, all threads) per clip, and WER over all rounds.

use std::path::Path;
use std::time::Instant;

use verbatim::audio::vad;
use verbatim::engine::models::ModelDir;
use verbatim::engine::models::catalog::whisper_model;
use verbatim::engine::whisper::WhisperEngine;
use verbatim::engine::{Engine, EngineRequest, LanguageChoice};
use verbatim::transcribe::numbers::normalize_numbers;

/// Word errors of `hypothesis` against `reference`, numbers normalised on both sides.
fn word_errors(reference: &str, hypothesis: &str) -> (usize, usize) {
    verbatim_sim::word_errors(
        &normalize_numbers(reference),
        &normalize_numbers(hypothesis),
    )
}

fn setting<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v} is not valid")),
        Err(_) => default,
    }
}

/// The models folder the server uses (`VERBATIM_MODELS_DIR`, else the data folder's).
fn models_dir() -> ModelDir {
    let data = verbatim::discovery::DataDir::resolve(false).expect("the data folder");
    verbatim::app::model_dir(&data)
}

/// User + system CPU seconds this process has used, all threads.
fn cpu_seconds() -> f64 {
    // SAFETY: rusage is plain integers, so all zeros is a valid value; getrusage only writes it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let ok = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } == 0;
    assert!(ok, "getrusage");
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

struct Tally {
    /// Wall time per run, in the same (round, clip) order for every model.
    seconds: Vec<f64>,
    cpu: Vec<f64>,
    /// Fastest wall time per clip.
    best: Vec<f64>,
    errors: usize,
    words: usize,
}

fn main() {
    let ids: Vec<String> = std::env::args().skip(1).collect();
    assert!(
        !ids.is_empty(),
        "name the models to compare, e.g. tiny.en tiny.en-q5_1"
    );
    let threads: usize = setting("THREADS", 2);
    let rounds: usize = setting("ROUNDS", 3);
    let (min_s, max_s): (f64, f64) = (setting("MIN_S", 1.0), setting("MAX_S", 7.0));
    let langs: String = setting("LANGS", "en".to_string());
    let models = models_dir();
    let engine = WhisperEngine::new(models.clone(), threads);

    let corpus = verbatim_sim::Corpus::load(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("corpus")
            .as_path(),
    )
    .expect("the corpus");
    let clips: Vec<_> = corpus
        .clips()
        .iter()
        .filter(|c| {
            let seconds = c.samples.len() as f64 / verbatim_sim::SAMPLE_RATE as f64;
            !c.entry.text.is_empty()
                && langs.split(',').any(|l| l == c.entry.language)
                && (min_s..=max_s).contains(&seconds)
        })
        .collect();
    assert!(
        !clips.is_empty(),
        "no clip of {langs} lasts {min_s} to {max_s} s"
    );
    let requests: Vec<_> = clips
        .iter()
        .map(|clip| {
            let s = &clip.samples;
            EngineRequest::speech(
                s,
                vad::plan_chunks(&vad::frame_scores(s), s.len()),
                LanguageChoice::Exact(clip.entry.language.clone()),
            )
        })
        .collect();

    for id in &ids {
        let started = Instant::now();
        engine
            .transcribe(id, &requests[0])
            .expect("the model loads");
        eprintln!(
            "{id}: loaded and warmed in {:.2} s",
            started.elapsed().as_secs_f64()
        );
    }
    let mut tallies: Vec<Tally> = ids
        .iter()
        .map(|_| Tally {
            seconds: Vec::new(),
            cpu: Vec::new(),
            best: vec![f64::INFINITY; clips.len()],
            errors: 0,
            words: 0,
        })
        .collect();
    for round in 0..rounds {
        for (c, (clip, request)) in clips.iter().zip(&requests).enumerate() {
            for k in 0..ids.len() {
                let i = (k + round) % ids.len();
                let (started, cpu) = (Instant::now(), cpu_seconds());
                let out = engine.transcribe(&ids[i], request).expect("a transcript");
                let wall = started.elapsed().as_secs_f64();
                let tally = &mut tallies[i];
                tally.cpu.push(cpu_seconds() - cpu);
                tally.seconds.push(wall);
                tally.best[c] = tally.best[c].min(wall);
                let (errors, words) = word_errors(&clip.entry.text, &out.text);
                tally.errors += errors;
                tally.words += words;
                if round == 0 && std::env::var_os("SHOW").is_some() {
                    eprintln!("{} {}: {}", ids[i], clip.entry.id, out.text.trim());
                }
            }
        }
    }

    println!(
        "{} clips ({langs}, {min_s}-{max_s} s), {rounds} rounds, {threads} threads",
        clips.len()
    );
    println!(
        "| model | file size | median s/clip | total s/round | fastest runs s | time vs {} | CPU s/clip | WER (%) |",
        ids[0]
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (id, tally) in ids.iter().zip(&tallies) {
        let ratios: Vec<f64> = tally
            .seconds
            .iter()
            .zip(&tallies[0].seconds)
            .map(|(t, first)| t / first)
            .collect();
        let spec = whisper_model(id).expect("a catalog model");
        let bytes = std::fs::metadata(models.weights_path(spec)).map_or(0, |m| m.len());
        println!(
            "| {id} | {:.1} MB | {:.3} | {:.2} | {:.2} | {:.2} | {:.3} | {:.1} ({}/{}) |",
            bytes as f64 / 1e6,
            median(&tally.seconds),
            tally.seconds.iter().sum::<f64>() / rounds as f64,
            tally.best.iter().sum::<f64>(),
            median(&ratios),
            median(&tally.cpu),
            tally.errors as f64 * 100.0 / tally.words as f64,
            tally.errors,
            tally.words,
        );
    }
}
