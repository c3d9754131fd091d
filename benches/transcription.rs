//! Engine time per clip (2 s, 5 s, 20 s of speech) against the full HTTP path for the same
//! clips (local-file route on a server over 127.0.0.1), to measure what the server adds. Both
//! take the path the server takes: voice activity detection, then each chunk of speech through
//! an encoder window fitted to it.
//!
//! Criterion times each separately; whisper's run-to-run spread on a small machine is larger
//! than the server's share, so a paired measurement follows: every HTTP request's wall time
//! against the engine time the server reports for that same request (`Server-Timing`), and
//! against an engine-alone call made just before it (target: the server adds at most 3 %).
//!
//! Measures the model people get, tiny.en with q8_0 weights (what `./scripts/serve` installs):
//! `$VERBATIM_TEST_MODELS`, else `~/.cache/verbatim/models` (`./scripts/test` installs it
//! there). Run: `cargo bench --bench transcription`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use verbatim::app::{App, Backends, Config};
use verbatim::discovery::DataDir;
use verbatim::engine::models::ModelDir;
use verbatim::engine::{Engine, EngineRequest, LanguageChoice, Task};
use verbatim::store::{PrefValue, preferences};

/// The model `./scripts/serve` installs.
const MODEL: &str = "tiny.en-q8_0";

const TEXT: &str = "We will meet at the library after lunch to discuss the new project plan. \
    Please send the quarterly report to the finance team before Friday afternoon. \
    Thank you for calling, please leave a message after the tone. ";

fn models_dir() -> PathBuf {
    std::env::var_os("VERBATIM_TEST_MODELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME").expect("HOME is set");
            Path::new(&home).join(".cache/verbatim/models")
        })
}

/// A clip of exactly `seconds` of espeak-ng speech (16 kHz mono WAV).
fn clip(dir: &Path, seconds: u32) -> PathBuf {
    let spoken = dir.join(format!("spoken-{seconds}.wav"));
    let text = TEXT.repeat((seconds / 10 + 1) as usize);
    let ok = Command::new("espeak-ng")
        .args(["-v", "en-us", "-s", "150", "-w"])
        .arg(&spoken)
        .arg(&text)
        .status()
        .expect("espeak-ng is installed")
        .success();
    assert!(ok);
    let decoded = verbatim::audio::decode::decode_file(&spoken, Some("wav")).unwrap();
    let mut samples = decoded.samples;
    samples.resize((seconds * 16_000) as usize, 0.0);
    let path = dir.join(format!("clip-{seconds}s.wav"));
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 16_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut writer = hound::WavWriter::create(&path, spec).unwrap();
    for s in samples {
        writer
            .write_sample((s.clamp(-1.0, 1.0) * 32767.0) as i16)
            .unwrap();
    }
    writer.finalize().unwrap();
    path
}

/// Paired rounds per clip: an engine-alone call and one HTTP request, in alternating order.
const PAIRED_ROUNDS: usize = 15;

/// A server over 127.0.0.1 on a real app with tiny.en selected, and its engine.
struct Bench {
    engine: Arc<dyn Engine>,
    agent: ureq::Agent,
    url: String,
    _runtime: tokio::runtime::Runtime,
    _data: tempfile::TempDir,
}

impl Bench {
    fn start(models: ModelDir) -> Bench {
        let data = tempfile::tempdir().unwrap();
        let app = App::build(Config {
            data_dir: DataDir::at(data.path().join("data")),
            backends: Backends::Real,
            require_token: false,
            models,
            scenario: None,
            sim_clock: None,
            realtime_idle: verbatim::realtime::IDLE_TIMEOUT,
        })
        .unwrap();
        app.store
            .set_pref(
                &preferences::SELECTED_ENGINE,
                &PrefValue::Text("whisper".into()),
            )
            .unwrap();
        app.store
            .set_pref(&preferences::SELECTED_MODEL, &PrefValue::Text(MODEL.into()))
            .unwrap();
        let engine = app.transcriber.engines()[0].clone();
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let port = listener.local_addr().unwrap().port();
        let router = verbatim::api::router(Arc::clone(&app), port);
        runtime.spawn(verbatim::server::serve(
            listener,
            router,
            std::future::pending(),
        ));
        Bench {
            engine,
            agent: ureq::Agent::config_builder()
                .proxy(None)
                .build()
                .new_agent(),
            url: format!("http://127.0.0.1:{port}/v1/transcribe/local-file"),
            _runtime: runtime,
            _data: data,
        }
    }

    fn engine_alone(&self, request: &EngineRequest<'_>) {
        self.engine.transcribe(MODEL, request).unwrap();
    }

    /// One request through the local-file route; returns its `Server-Timing` engine time.
    fn http(&self, path: &Path) -> Duration {
        let body = serde_json::json!({ "path": path }).to_string();
        let mut response = self
            .agent
            .post(&self.url)
            .header("Content-Type", "application/json")
            .send(&body)
            .unwrap();
        let timing = response
            .headers()
            .get("Server-Timing")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        response.body_mut().read_to_string().unwrap();
        stage_ms(&timing, "engine")
            .map(|ms| Duration::from_secs_f64(ms / 1000.0))
            .unwrap_or_else(|| panic!("no engine time in Server-Timing '{timing}'"))
    }
}

/// A stage's duration in milliseconds from a `Server-Timing` value (`name;dur=12.3, ...`).
fn stage_ms(header: &str, stage: &str) -> Option<f64> {
    header.split(',').find_map(|entry| {
        let mut parts = entry.trim().split(';');
        (parts.next()? == stage).then_some(())?;
        parts.find_map(|p| p.trim().strip_prefix("dur=")?.parse().ok())
    })
}

/// The engine call the server makes for `samples`: the chunks of speech voice activity
/// detection finds, each through an encoder window fitted to it.
fn engine_request(samples: &[f32]) -> EngineRequest<'_> {
    let scores = verbatim::audio::vad::frame_scores(samples);
    EngineRequest {
        samples,
        chunks: verbatim::audio::vad::plan_chunks(&scores, samples.len()),
        trimmed_to_speech: true,
        language: LanguageChoice::Auto,
        task: Task::Transcribe,
        initial_prompt: None,
        words: false,
        cancel: verbatim::cancel::Cancel::new(),
        calls_at_once: 1,
        provisional: false,
        said_before: None,
    }
}

fn criterion_groups(c: &mut Criterion, bench: &Bench, clips: &[(u32, PathBuf, Vec<f32>)]) {
    let mut group = c.benchmark_group("transcription");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    for (seconds, path, samples) in clips {
        let request = engine_request(samples);
        group.bench_function(format!("engine/{seconds}s"), |b| {
            b.iter(|| bench.engine_alone(&request))
        });
        group.bench_function(format!("http/{seconds}s"), |b| b.iter(|| bench.http(path)));
    }
    group.finish();
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len().is_multiple_of(2) {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    }
}

/// Interleaved rounds; prints medians (ms) and the server's share. Returns the worst clip's
/// overhead in percent of the engine's own time in the same request.
fn paired(bench: &Bench, clips: &[(u32, PathBuf, Vec<f32>)]) -> f64 {
    println!(
        "\npaired rounds ({PAIRED_ROUNDS} per clip, medians in ms)\n{:<5} {:>12} {:>12} {:>14} {:>16} {:>12} {:>14}",
        "clip",
        "engine alone",
        "HTTP wall",
        "engine in req",
        "wall - in req",
        "overhead",
        "wall - alone"
    );
    let mut worst: f64 = 0.0;
    for (seconds, path, samples) in clips {
        let request = engine_request(samples);
        let (mut alone, mut wall, mut inside, mut added, mut versus_alone) =
            (vec![], vec![], vec![], vec![], vec![]);
        for round in 0..PAIRED_ROUNDS {
            let time_alone = || {
                let started = Instant::now();
                bench.engine_alone(&request);
                started.elapsed().as_secs_f64() * 1000.0
            };
            let time_http = || {
                let started = Instant::now();
                let engine = bench.http(path);
                (started.elapsed().as_secs_f64() * 1000.0, engine)
            };
            // Alternate which goes first, so neither always runs on a warmer or cooler machine.
            let (alone_ms, (wall_ms, engine)) = if round % 2 == 0 {
                (time_alone(), time_http())
            } else {
                let http = time_http();
                (time_alone(), http)
            };
            let inside_ms = engine.as_secs_f64() * 1000.0;
            alone.push(alone_ms);
            wall.push(wall_ms);
            inside.push(inside_ms);
            added.push(wall_ms - inside_ms);
            versus_alone.push(wall_ms - alone_ms);
        }
        let inside = median(inside);
        let added = median(added);
        let share = added / inside * 100.0;
        worst = worst.max(share);
        println!(
            "{:<5} {:>12.1} {:>12.1} {:>14.1} {:>16.2} {:>11.2}% {:>14.1}",
            format!("{seconds}s"),
            median(alone),
            median(wall),
            inside,
            added,
            share,
            median(versus_alone)
        );
    }
    worst
}

fn main() {
    let models = ModelDir::new(models_dir());
    let _ = models.adopt_flat_files();
    if !models.is_installed(verbatim::engine::models::whisper_model(MODEL).unwrap()) {
        eprintln!(
            "no {MODEL} model in {}: run ./scripts/test first",
            models.path().display()
        );
        return;
    }
    let bench = Bench::start(models);
    let tmp = tempfile::tempdir().unwrap();
    let clips: Vec<(u32, PathBuf, Vec<f32>)> = [2u32, 5, 20]
        .into_iter()
        .map(|seconds| {
            let path = clip(tmp.path(), seconds);
            let samples = verbatim::audio::decode::decode_file(&path, Some("wav"))
                .unwrap()
                .samples;
            (seconds, path, samples)
        })
        .collect();
    // Load the model and warm both paths once.
    for (_, path, samples) in &clips {
        bench.engine_alone(&engine_request(samples));
        bench.http(path);
    }

    let mut criterion = Criterion::default().configure_from_args();
    criterion_groups(&mut criterion, &bench, &clips);
    let worst = paired(&bench, &clips);
    println!(
        "server overhead, worst clip: {worst:.2} % of the engine's own time (target: at most 3 %)"
    );
    criterion.final_summary();
}
