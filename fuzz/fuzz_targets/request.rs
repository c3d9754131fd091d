//! Any request to any route of the real router (sim backends, one data folder for the whole
//! run): the server answers, never 500, and every refusal is the contract's Error object.
#![no_main]

use std::sync::{Arc, OnceLock};

use axum::body::Body;
use axum::http::Request;
use http_body_util::BodyExt;
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use tower::ServiceExt;
use verbatim::app::{App, Backends, Config};
use verbatim::discovery::DataDir;
use verbatim::engine::models::ModelDir;
use verbatim::wire::ErrorBody;

const PORT: u16 = 8978;
const ROUTES: &[(&str, &str)] = &[
    ("GET", "/v1/status"),
    ("GET", "/v1/models"),
    ("POST", "/v1/transcribe"),
    ("POST", "/v1/transcribe/local-file"),
    ("GET", "/v1/history"),
    ("DELETE", "/v1/history"),
    ("GET", "/v1/dictionary/terms"),
    ("PUT", "/v1/dictionary/terms"),
    ("DELETE", "/v1/dictionary/terms"),
    ("GET", "/v1/dictionary/corrections"),
    ("PUT", "/v1/dictionary/corrections"),
    ("DELETE", "/v1/dictionary/corrections"),
    ("GET", "/v1/rules"),
    ("PUT", "/v1/rules/toggle"),
    ("GET", "/v1/profiles"),
    ("PUT", "/v1/profiles/toggle"),
    ("GET", "/v1/settings/export"),
    ("POST", "/v1/settings/import"),
    ("POST", "/v1/dictation/start"),
    ("POST", "/v1/dictation/stop"),
    ("GET", "/v1/dictation/status"),
    ("GET", "/v1/dictation/transcription"),
    ("POST", "/v1/recorder/start"),
    ("POST", "/v1/recorder/stop"),
    ("GET", "/v1/recorder/status"),
    ("GET", "/v1/recorder/session"),
];
const CONTENT_TYPES: &[&str] = &[
    "application/json",
    "multipart/form-data; boundary=XyZ",
    "audio/wav",
    "audio/flac",
    "application/octet-stream",
    "text/plain",
];

#[derive(Debug, Arbitrary)]
struct FuzzRequest {
    route: u8,
    query: String,
    headers: Vec<(String, String)>,
    content_type: Option<u8>,
    body: Vec<u8>,
}

struct Fixture {
    _dir: tempfile::TempDir,
    app: Arc<App>,
    runtime: tokio::runtime::Runtime,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let app = App::build(Config {
            data_dir: DataDir::at(dir.path().join("data")),
            backends: Backends::Simulated,
            require_token: false,
            models: ModelDir::new(dir.path().join("models")),
            scenario: None,
            sim_clock: None,
            realtime_idle: verbatim::realtime::IDLE_TIMEOUT,
        })
        .unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        Fixture {
            _dir: dir,
            app,
            runtime,
        }
    })
}

fuzz_target!(|input: FuzzRequest| {
    let fixture = fixture();
    let (method, path) = ROUTES[input.route as usize % ROUTES.len()];
    let uri = if input.query.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{}", input.query)
    };
    let mut request = Request::builder()
        .method(method)
        .uri(uri)
        .header("host", format!("127.0.0.1:{PORT}"));
    for (name, value) in &input.headers {
        request = request.header(name.as_str(), value.as_str());
    }
    if let Some(kind) = input.content_type {
        request = request.header(
            "content-type",
            CONTENT_TYPES[kind as usize % CONTENT_TYPES.len()],
        );
    }
    // Names and values no client could send are not requests.
    let Ok(request) = request.body(Body::from(input.body)) else {
        return;
    };
    let router = verbatim::api::router(fixture.app.clone(), PORT);
    let (status, body) = fixture.runtime.block_on(async {
        let response = router.oneshot(request).await.unwrap();
        let status = response.status().as_u16();
        (
            status,
            response.into_body().collect().await.unwrap().to_bytes(),
        )
    });
    assert_ne!(status, 500, "{}", String::from_utf8_lossy(&body));
    if status >= 400 && method != "HEAD" {
        let error: ErrorBody = serde_json::from_slice(&body).expect("an Error object");
        assert!(!error.error.message.is_empty());
    }
});
