//! Engine time per clip (2 s, 5 s, 20 s of speech) against the full HTTP path for the same
//! clips (local-file route on a server over 127.0.0.1), to measure what the server adds.
//!
//! Needs the tiny.en model: `$VERBATIM_TEST_MODELS`, else `~/.cache/verbatim/models`
//! (`./scripts/test` installs it there). Run: `cargo bench --bench transcription`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use verbatim::app::{App, Backends, Config};
use verbatim::discovery::DataDir;
use verbatim::engine::models::ModelDir;
use verbatim::engine::{EngineRequest, LanguageChoice, Task};
use verbatim::store::{PrefValue, preferences};

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

fn bench(c: &mut Criterion) {
    let models = ModelDir::new(models_dir());
    if !models.path().join("ggml-tiny.en.bin").is_file() {
        eprintln!(
            "no tiny.en model in {}: run ./scripts/test first",
            models.path().display()
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let app = App::build(Config {
        data_dir: DataDir::at(tmp.path().join("data")),
        backends: Backends::Real,
        require_token: false,
        models,
        scenario: None,
        sim_clock: None,
    })
    .unwrap();
    app.store
        .set_pref(
            &preferences::SELECTED_ENGINE,
            &PrefValue::Text("whisper".into()),
        )
        .unwrap();
    app.store
        .set_pref(
            &preferences::SELECTED_MODEL,
            &PrefValue::Text("tiny.en".into()),
        )
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
    let agent = ureq::AgentBuilder::new().build();
    let url = format!("http://127.0.0.1:{port}/v1/transcribe/local-file");

    let mut group = c.benchmark_group("transcription");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    for seconds in [2u32, 5, 20] {
        let path = clip(tmp.path(), seconds);
        let samples = verbatim::audio::decode::decode_file(&path, Some("wav"))
            .unwrap()
            .samples;
        let request = EngineRequest {
            samples: &samples,
            language: LanguageChoice::Auto,
            task: Task::Transcribe,
            initial_prompt: None,
        };
        engine.transcribe("tiny.en", &request).unwrap(); // load the model once
        group.bench_function(format!("engine/{seconds}s"), |b| {
            b.iter(|| engine.transcribe("tiny.en", &request).unwrap())
        });
        let body = serde_json::json!({ "path": path }).to_string();
        group.bench_function(format!("http/{seconds}s"), |b| {
            b.iter(|| {
                agent
                    .post(&url)
                    .set("Content-Type", "application/json")
                    .send_string(&body)
                    .unwrap()
                    .into_string()
                    .unwrap()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
