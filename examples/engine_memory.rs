//! Memory of a loaded model: the process's resident set before loading, after loading and
//! transcribing a short real recording (one chunk), then a 44 s one (the peak of a long request,
//! several chunks: an engine that hears chunks side by side has made its second decoder state
//! or copies), and after unloading, per model, each in a fresh process so that one model's pages
//! never hide another's.
//!
//! ```text
//! VERBATIM_TEST_MODELS=~/.cache/verbatim/models \
//!     cargo run --release --example engine_memory -- moonshine-tiny moonshine-base tiny.en-q8_0
//! ```

use std::process::Command;

use verbatim::audio::{decode, vad};
use verbatim::engine::models::ModelDir;
use verbatim::engine::{Engine, EngineRequest, LanguageChoice};

/// Resident set size of this process, in MiB (`/proc/self/statm`).
fn resident_mib() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: f64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096.0 / (1024.0 * 1024.0)
}

/// The engine that runs a model.
enum Loaded {
    Moonshine(verbatim::engine::moonshine::MoonshineEngine),
    Whisper(verbatim::engine::whisper::WhisperEngine),
}

impl Loaded {
    fn for_model(models: ModelDir, model: &str) -> Loaded {
        let spec = verbatim::engine::catalog::find_model(model).expect("a model of the catalog");
        match spec.engine {
            "moonshine" => {
                Loaded::Moonshine(verbatim::engine::moonshine::MoonshineEngine::new(models, 2))
            }
            _ => Loaded::Whisper(verbatim::engine::whisper::WhisperEngine::new(models, 2)),
        }
    }

    fn engine(&self) -> &dyn Engine {
        match self {
            Loaded::Moonshine(engine) => engine,
            Loaded::Whisper(engine) => engine,
        }
    }

    fn unload(&self, model: &str) {
        self.engine().unload(model);
    }
}

/// The corpus recording `name`, heard by `model` on `loaded`.
fn hear(loaded: &Loaded, model: &str, name: &str) {
    let clip = format!("{}/corpus/clips/{name}.wav", env!("CARGO_MANIFEST_DIR"));
    let samples = decode::decode_file(std::path::Path::new(&clip), None)
        .expect("the clip")
        .samples;
    let request = EngineRequest::speech(
        &samples,
        vad::chunks_to_hear(&samples, true),
        LanguageChoice::Exact("en".into()),
    );
    let heard = loaded
        .engine()
        .transcribe(model, &request)
        .expect("the engine transcribes");
    assert!(!heard.text.is_empty());
}

/// One model, in this process: prints `model before short long unloaded` (MiB).
fn measure(model: &str) {
    let models =
        ModelDir::new(std::env::var("VERBATIM_TEST_MODELS").expect("VERBATIM_TEST_MODELS"));
    let before = resident_mib();
    let loaded = Loaded::for_model(models, model);
    hear(&loaded, model, "real-goforward");
    let short = resident_mib();
    hear(&loaded, model, "real-two-cities");
    let long = resident_mib();
    loaded.unload(model);
    let unloaded = resident_mib();
    println!("{model} {before:.1} {short:.1} {long:.1} {unloaded:.1}");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, model] = args.as_slice()
        && flag == "--one"
    {
        measure(model);
        return;
    }
    println!(
        "| Model | RSS before | loaded, after a 3 s clip | and after a 44 s clip | after unloading |"
    );
    println!("|---|---:|---:|---:|---:|");
    for model in &args {
        let out = Command::new(std::env::current_exe().unwrap())
            .args(["--one", model])
            .output()
            .expect("a child process");
        let line = String::from_utf8_lossy(&out.stdout);
        let fields: Vec<&str> = line.split_whitespace().collect();
        if let [id, before, short, long, unloaded] = fields.as_slice() {
            println!("| {id} | {before} MiB | {short} MiB | {long} MiB | {unloaded} MiB |");
        } else {
            eprintln!("{model}: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
}
