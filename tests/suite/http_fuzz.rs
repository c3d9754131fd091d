//! Property-based fuzzing of every parser that takes a request's bytes, through the real
//! router: random methods, routes, query strings, option headers, content types and bodies
//! (random bytes, JSON built from the API's own keys, multipart forms with audio-looking parts).
//! Whatever arrives, the server answers, never with 500, and every refusal is the contract's
//! Error object. Failing inputs are kept by proptest in `http_fuzz.proptest-regressions`.

use crate::common;

use std::sync::OnceLock;

use axum::body::Body;
use axum::http::Request;
use common::{PORT, TestApp};
use http_body_util::BodyExt;
use proptest::prelude::*;
use serde_json::{Value, json};
use tower::ServiceExt;
use verbatim::wire::ErrorBody;
use verbatim::wire::transcription::FIELDS;

/// Every route with its method.
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

/// Keys the API reads from JSON bodies and query strings.
const KEYS: &[&str] = &[
    "path",
    "terms",
    "term_entries",
    "replace",
    "term",
    "original",
    "replacement",
    "case_sensitive",
    "id",
    "limit",
    "offset",
    "q",
    "await_download",
    "schemaVersion",
    "workflows",
    "dictionaryEntries",
    "history",
    "preferences",
    "workflow_id",
    "source",
    "language",
    "language_hints",
    "task",
    "response_format",
    "engine",
    "model",
    "prompt",
    "normalize_numbers",
    "apply_corrections",
    "target_language",
    "ctc_min_similarity",
];

fn app() -> &'static TestApp {
    static APP: OnceLock<TestApp> = OnceLock::new();
    APP.get_or_init(|| {
        let app = TestApp::new();
        app.select("tiny.en");
        app
    })
}

fn key() -> impl Strategy<Value = String> {
    let form_names: Vec<&'static str> = FIELDS.iter().map(|f| f.form).collect();
    prop_oneof![
        proptest::sample::select(KEYS).prop_map(str::to_string),
        proptest::sample::select(form_names).prop_map(str::to_string),
        "[a-z_]{0,12}",
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[a-z0-9 ]{0,16}",
        any::<String>(),
        proptest::sample::select(
            &[
                "en",
                "de",
                "xx",
                "verbose_json",
                "srt",
                "true",
                "-1",
                "1e309",
                "00000000-0000-0000-0000-000000000000",
                "/dev/zero",
                "/etc/passwd",
                "\"\\u0000\"",
                "NEAR(a b)",
                "*"
            ][..]
        )
        .prop_map(str::to_string),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        text().prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            proptest::collection::btree_map(key(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A body and the content type it is sent with.
fn body() -> impl Strategy<Value = (Option<String>, Vec<u8>)> {
    let json_body = proptest::collection::btree_map(key(), json_value(), 0..8)
        .prop_map(|m| serde_json::to_vec(&Value::Object(m.into_iter().collect())).unwrap());
    let multipart = proptest::collection::vec((key(), text(), any::<Vec<u8>>()), 0..5).prop_map(
        |parts| {
            let mut body = Vec::new();
            for (i, (name, value, bytes)) in parts.into_iter().enumerate() {
                body.extend_from_slice(b"--XyZ\r\n");
                if i % 2 == 0 {
                    let head = format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n");
                    body.extend_from_slice(head.as_bytes());
                } else {
                    body.extend_from_slice(b"Content-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\nContent-Type: audio/wav\r\n\r\nRIFF");
                    body.extend_from_slice(&bytes);
                    body.extend_from_slice(b"\r\n");
                }
            }
            body.extend_from_slice(b"--XyZ--\r\n");
            body
        },
    );
    prop_oneof![
        json_body.prop_map(|b| (Some("application/json".to_string()), b)),
        multipart.prop_map(|b| (Some("multipart/form-data; boundary=XyZ".to_string()), b)),
        (
            proptest::option::of(prop_oneof![
                proptest::sample::select(
                    &[
                        "audio/wav",
                        "audio/flac",
                        "audio/mpeg",
                        "application/octet-stream",
                        "application/json",
                        "multipart/form-data",
                        "text/plain"
                    ][..]
                )
                .prop_map(str::to_string),
                any::<String>(),
            ]),
            any::<Vec<u8>>(),
        ),
    ]
}

fn query() -> impl Strategy<Value = String> {
    proptest::collection::vec((key(), text()), 0..4).prop_map(|pairs| {
        form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs)
            .finish()
    })
}

fn headers() -> impl Strategy<Value = Vec<(String, String)>> {
    let names: Vec<&'static str> = FIELDS.iter().map(|f| f.header).collect();
    proptest::collection::vec((proptest::sample::select(names), text()), 0..4)
        .prop_map(|pairs| pairs.into_iter().map(|(n, v)| (n.to_string(), v)).collect())
}

/// A route and the method to call it with: mostly its own, sometimes any other.
fn route() -> impl Strategy<Value = (&'static str, &'static str)> {
    let any_method =
        proptest::sample::select(&["GET", "POST", "PUT", "DELETE", "HEAD", "PATCH"][..]);
    (
        proptest::sample::select(ROUTES),
        proptest::option::weighted(0.15, any_method),
    )
        .prop_map(|((own, path), other)| (other.unwrap_or(own), path))
}

async fn send(
    method: &str,
    uri: &str,
    headers: &[(String, String)],
    content_type: Option<&str>,
    body: Vec<u8>,
) -> Option<(u16, Vec<u8>)> {
    let mut request = Request::builder()
        .method(method)
        .uri(uri)
        .header("host", format!("127.0.0.1:{PORT}"));
    for (name, value) in headers {
        request = request.header(name.as_str(), value.as_str());
    }
    if let Some(content_type) = content_type {
        request = request.header("content-type", content_type);
    }
    // Values a client library could not send at all are not requests.
    let request = request.body(Body::from(body)).ok()?;
    let response = app().router().oneshot(request).await.unwrap();
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    Some((status, body.to_vec()))
}

fn check(method: &str, status: u16, body: &[u8]) -> Result<(), TestCaseError> {
    prop_assert_ne!(status, 500, "{}", String::from_utf8_lossy(body));
    if status >= 400 && method != "HEAD" {
        let error: Result<ErrorBody, _> = serde_json::from_slice(body);
        prop_assert!(
            error.as_ref().is_ok_and(|e| !e.error.message.is_empty()),
            "{status}: {}",
            String::from_utf8_lossy(body)
        );
    }
    Ok(())
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| tokio::runtime::Runtime::new().unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

    #[test]
    fn any_request_gets_an_answer_and_refusals_are_error_objects(
        (method, route) in route(),
        suffix in prop_oneof![8 => Just(String::new()), 1 => "/[a-z%0-9.]{0,8}"],
        query in query(),
        headers in headers(),
        (content_type, body) in body(),
    ) {
        let uri = if query.is_empty() {
            format!("{route}{suffix}")
        } else {
            format!("{route}{suffix}?{query}")
        };
        let answer = runtime().block_on(send(method, &uri, &headers, content_type.as_deref(), body));
        if let Some((status, body)) = answer {
            check(method, status, &body)?;
        }
    }
}

/// Every audio fixture (every container the server accepts), damaged where its demuxer trusts
/// the file by the fuzz targets' structure-aware mutator and uploaded: each answer is a
/// transcription or a 400 naming the problem, never a 500.
#[test]
fn uploads_damaged_in_their_container_structure_are_never_answered_500() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/audio");
    let mut answers = std::collections::BTreeMap::<u16, usize>::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        if name.ends_with(".sh") {
            continue;
        }
        let original = std::fs::read(&path).unwrap();
        for seed in 0..24u64 {
            let mut bytes = original.clone();
            common::mutate::mutate(&mut bytes, seed, 1 << 20);
            let request = common::multipart("/v1/transcribe", &[], Some((&name, &bytes)));
            let response = runtime().block_on(app().router().oneshot(request)).unwrap();
            let status = response.status().as_u16();
            let body = runtime()
                .block_on(response.into_body().collect())
                .unwrap()
                .to_bytes();
            if let Err(failure) = check("POST", status, &body) {
                panic!("{name} mutated with seed {seed}: {failure}");
            }
            *answers.entry(status).or_default() += 1;
        }
    }
    println!("answers by status: {answers:?}");
    assert!(answers.get(&200).is_some_and(|&n| n > 0), "{answers:?}");
    assert!(answers.get(&400).is_some_and(|&n| n > 0), "{answers:?}");
}
