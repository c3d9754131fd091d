//! Language detection, language-hint shortlists and translation on the multilingual base model,
//! the request prompt on tiny.en, and the CT2 importer against the models setup installed (its
//! f16 output byte for byte; its quantized outputs loaded and transcribing).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use axum::body::Body;
use axum::http::StatusCode;
use common::{TestApp, request, send, test_models};
use serde_json::{Value, json};
use verbatim::engine::models::ModelDir;
use verbatim::engine::models::catalog::whisper_model;

fn espeak(dir: &Path, voice: &str, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(format!("{name}.wav"));
    let ok = Command::new("espeak-ng")
        .args(["-v", voice, "-s", "140", "-w"])
        .arg(&path)
        .arg(text)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    path
}

async fn transcribe(app: &TestApp, body: Value) -> Value {
    let req = request("POST", "/v1/transcribe/local-file")
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let (status, _, answer) = send(&app.router(), req).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    answer
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn languages_are_detected_restricted_by_hints_and_translated() {
    let Some(models) = test_models() else { return };
    let app = TestApp::real(models);
    app.select("base");
    let dir = tempfile::tempdir().unwrap();
    let german = espeak(
        dir.path(),
        "de",
        "de",
        "Guten Morgen. Heute ist das Wetter sehr schön und wir gehen in den Park.",
    );
    let french = espeak(
        dir.path(),
        "fr",
        "fr",
        "Bonjour. Aujourd'hui il fait très beau et nous allons au parc.",
    );

    let de = transcribe(&app, json!({"path": german})).await;
    assert_eq!(de["language"], "de", "{de}");
    assert!(
        de["text"].as_str().unwrap().contains("Guten Morgen"),
        "{de}"
    );
    let fr = transcribe(&app, json!({"path": french})).await;
    assert_eq!(fr["language"], "fr", "{fr}");

    // A shortlist picks its most likely member...
    let hinted = transcribe(
        &app,
        json!({"path": german, "language_hints": ["es", "de"]}),
    )
    .await;
    assert_eq!(hinted["language"], "de");
    // ...and never a language outside it.
    let restricted = transcribe(
        &app,
        json!({"path": german, "language_hints": ["fr", "es"]}),
    )
    .await;
    let language = restricted["language"].as_str().unwrap();
    assert!(language == "fr" || language == "es", "{restricted}");
    // One hint is an exact language.
    let exact = transcribe(&app, json!({"path": french, "language_hints": ["fr"]})).await;
    assert_eq!(exact["language"], "fr");

    let translated = transcribe(&app, json!({"path": german, "task": "translate"})).await;
    let text = translated["text"].as_str().unwrap().to_lowercase();
    assert!(
        text.contains("morning") || text.contains("weather") || text.contains("park"),
        "{text}"
    );
    assert!(!text.contains("guten"), "{text}");

    let unknown = request("POST", "/v1/transcribe/local-file")
        .header("content-type", "application/json")
        .body(Body::from(
            json!({"path": german, "language": "xx"}).to_string(),
        ))
        .unwrap();
    let (status, _, body) = send(&app.router(), unknown).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"]["message"], "Unknown language code 'xx'");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_prompt_steers_a_name_the_model_otherwise_mishears() {
    let Some(models) = test_models() else { return };
    let app = TestApp::real(models);
    app.select("tiny.en");
    // "Please send the quarterly report to Siobhan before Friday."
    let clip = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/clips/en-siobhan.wav");
    let plain = transcribe(&app, json!({"path": clip})).await;
    assert!(
        !plain["text"].as_str().unwrap().contains("Siobhan"),
        "{plain}"
    );
    let prompted = transcribe(&app, json!({"path": clip, "prompt": "Siobhan"})).await;
    assert!(
        prompted["text"].as_str().unwrap().contains("Siobhan"),
        "{prompted}"
    );
}

/// The CTranslate2 models scripts/test fetched (`VERBATIM_TEST_CT2`, one folder per model).
fn test_ct2() -> Option<PathBuf> {
    let dir = std::env::var_os("VERBATIM_TEST_CT2");
    if dir.is_none() {
        common::skip("VERBATIM_TEST_CT2 is not set (the CTranslate2 models scripts/test fetches)");
    }
    dir.map(PathBuf::from)
}

/// `verbatim models import-ct2 SOURCE [--quantize Q]` into the models folder `target`.
fn import_ct2(home: &Path, target: &Path, source: &Path, quantize: Option<&str>) {
    let mut cmd = Command::new(common::binary());
    cmd.env("VERBATIM_HOME", home)
        .env("VERBATIM_MODELS_DIR", target)
        .args(["models", "import-ct2"])
        .arg(source);
    if let Some(q) = quantize {
        cmd.args(["--quantize", q]);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn importing_the_ct2_model_reproduces_the_installed_model() {
    let Some(models) = test_models() else { return };
    let Some(ct2) = test_ct2() else { return };
    let home = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    import_ct2(home.path(), target.path(), &ct2.join("tiny.en"), None);
    // The f16 conversion is deterministic: byte for byte the model the tests transcribe with.
    let converted =
        std::fs::read(common::weights(&ModelDir::new(target.path()), "tiny.en")).unwrap();
    let installed = std::fs::read(common::weights(&models, "tiny.en")).unwrap();
    assert!(
        converted == installed,
        "conversion differs from the installed model"
    );
}

/// Quantized imports of tiny.en install under the id their weights give them, have the layout
/// whisper.cpp's quantizer writes (each is smaller than the f16 file by exactly as many bytes
/// as whisper.cpp's published files of that type are), and whisper.cpp loads and transcribes
/// them: a clip all three weights hear right comes out right.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quantized_imports_load_and_transcribe() {
    let Some(models) = test_models() else { return };
    let Some(ct2) = test_ct2() else { return };
    let home = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let f16_bytes = std::fs::metadata(common::weights(&models, "tiny.en"))
        .unwrap()
        .len();
    let published = |id: &str| whisper_model(id).unwrap().pin().unwrap().size;
    let app = TestApp::real(ModelDir::new(target.path()));
    let clip = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/clips/en-founded.wav");
    for quantize in ["q8_0", "q5_1"] {
        import_ct2(
            home.path(),
            target.path(),
            &ct2.join("tiny.en"),
            Some(quantize),
        );
        let id = format!("tiny.en-{quantize}");
        let bytes = std::fs::metadata(common::weights(&ModelDir::new(target.path()), &id))
            .unwrap()
            .len();
        assert_eq!(
            f16_bytes - bytes,
            published("tiny.en") - published(&id),
            "{id}: {bytes} bytes"
        );
        app.select(&id);
        let answer = transcribe(&app, json!({"path": clip, "language": "en"})).await;
        let text = answer["text"].as_str().unwrap().to_lowercase();
        // "The company was founded in two thousand and six."
        for word in ["the company was founded", "2006"] {
            assert!(text.contains(word), "{id}: {text}");
        }
    }
}
