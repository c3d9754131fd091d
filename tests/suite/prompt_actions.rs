//! Prompt actions (`/v1/prompt-actions`, `prompt_action` on the transcription routes) against
//! a stand-in chat provider on loopback (wiremock playing Ollama's OpenAI-compatible API: no
//! chat server with a model can be had from the package registries here): the request as the
//! `openai` SDK sends it, answers streamed and whole, every failure (unreachable, too slow, an
//! error status, not a completion, no text) keeping the transcript and saying why, refusals
//! before any engine work, and the API key never shown, exported or sent in the clear.

use crate::common;

use std::path::Path;
use std::time::Duration;

use axum::http::StatusCode;
use common::{TestApp, call};
use serde_json::{Value, json};
use verbatim::store::PrefValue;
use verbatim::store::preferences::{CHAT_BASE_URL, CHAT_MODEL, CHAT_TIMEOUT_SECONDS};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

/// An app whose chat provider is `base` with model `llama3.2` (sim mode's transcription, the
/// preferences' provider).
fn app_with_provider(base: &str) -> TestApp {
    let app = TestApp::with_scenario(PREFERENCES_PROVIDER);
    let store = &app.app.store;
    store
        .set_pref(&CHAT_BASE_URL, &PrefValue::Text(base.into()))
        .unwrap();
    store
        .set_pref(&CHAT_MODEL, &PrefValue::Text("llama3.2".into()))
        .unwrap();
    app
}

/// Sim mode sending actions to the provider the preferences name, not its built-in one.
const PREFERENCES_PROVIDER: &str = r#"
[engine]
selected_model = "tiny.en"

[models]
"tiny.en" = "present"

[chat]
provider = "preferences"
"#;

/// A completion streamed as Ollama streams it: role, the text in two pieces, then `[DONE]`.
fn streamed(text: &str) -> ResponseTemplate {
    let (first, second) = text.split_at(text.len() / 2);
    let event = |delta: Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "llama3.2:latest",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
        )
    };
    let body = [
        event(json!({"role": "assistant", "content": ""})),
        event(json!({"content": first})),
        event(json!({"content": second})),
        "data: [DONE]\n\n".to_string(),
    ]
    .concat();
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

/// A completion answered whole.
fn whole(text: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-2", "object": "chat.completion", "model": "llama3.2:latest",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "finish_reason": "stop"}]
    }))
}

/// A stand-in provider on loopback answering every completion with `answer`.
pub(crate) async fn provider_answering(answer: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(answer)
        .mount(&server)
        .await;
    server
}

async fn add(app: &TestApp, name: &str, prompt: &str) -> Value {
    let (status, body) = call(
        &app.router(),
        "PUT",
        "/v1/prompt-actions",
        Some(json!({"name": name, "prompt": prompt})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

async fn run(app: &TestApp, body: Value) -> (StatusCode, Value) {
    call(&app.router(), "POST", "/v1/prompt-actions/run", Some(body)).await
}

fn received(requests: &[Request]) -> Value {
    assert_eq!(requests.len(), 1, "one call to the provider");
    serde_json::from_slice(&requests[0].body).unwrap()
}

#[tokio::test]
async fn actions_are_listed_created_changed_and_deleted() {
    let app = TestApp::new();
    let router = app.router();
    let (status, listed) = call(&router, "GET", "/v1/prompt-actions", None).await;
    assert_eq!(
        (status, listed),
        (StatusCode::OK, json!({"actions": [], "count": 0}))
    );
    let fix = add(
        &app,
        "Fix grammar",
        "Fix the grammar. Answer with the text only.",
    )
    .await;
    assert_eq!(fix["enabled"], true);
    let id = fix["id"].as_str().unwrap().to_string();
    assert_eq!(
        id,
        id.to_uppercase(),
        "ids are upper-case UUIDs, as elsewhere"
    );

    // Another action of the same name (any case) is refused; an unknown id is not found.
    let (status, body) = call(
        &router,
        "PUT",
        "/v1/prompt-actions",
        Some(json!({"name": "FIX GRAMMAR", "prompt": "x"})),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let (status, _) = call(
        &router,
        "PUT",
        "/v1/prompt-actions",
        Some(json!({"id": uuid::Uuid::new_v4().to_string(), "name": "New", "prompt": "x"})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    for bad in [
        json!({"name": " ", "prompt": "x"}),
        json!({"name": "A", "prompt": ""}),
        json!({"name": "A"}),
        json!({"name": "A", "prompt": "x", "colour": "red"}),
        json!({"id": "42", "name": "A", "prompt": "x"}),
        json!({"name": "A".repeat(201), "prompt": "x"}),
    ] {
        let (status, body) = call(&router, "PUT", "/v1/prompt-actions", Some(bad.clone())).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
        assert!(body["error"]["message"].is_string(), "{body}");
    }

    // Changed in place, its state kept unless given, then switched off.
    let (status, changed) = call(
        &router,
        "PUT",
        "/v1/prompt-actions",
        Some(json!({"id": id.to_lowercase(), "name": "Fix grammar", "prompt": "Fix it."})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (changed["id"].as_str(), changed["enabled"].as_bool()),
        (Some(id.as_str()), Some(true))
    );
    let (_, off) = call(
        &router,
        "PUT",
        "/v1/prompt-actions",
        Some(json!({"id": id, "name": "Fix grammar", "prompt": "Fix it.", "enabled": false})),
    )
    .await;
    assert_eq!(off["enabled"], false);
    add(&app, "Email", "Write it as an email.").await;
    let (_, listed) = call(&router, "GET", "/v1/prompt-actions", None).await;
    assert_eq!(listed["count"], 2);
    assert_eq!(listed["actions"][0]["prompt"], "Fix it.");

    let delete = format!("/v1/prompt-actions?id={id}");
    let (status, body) = call(&router, "DELETE", &delete, None).await;
    assert_eq!((status, body), (StatusCode::OK, json!({"deleted": true})));
    let (status, _) = call(&router, "DELETE", &delete, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = call(&router, "DELETE", "/v1/prompt-actions?id=nope", None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn an_action_runs_on_streamed_and_whole_answers_as_the_openai_sdk_asks() {
    let provider = provider_answering(streamed("Dear Sam, the meeting is at ten.")).await;
    let app = app_with_provider(&format!("{}/v1", provider.uri()));
    add(&app, "Email", "Write it as an email.").await;
    let (status, ran) = run(
        &app,
        json!({"name": "email", "text": "meeting at ten tell sam"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{ran}");
    assert_eq!(ran["text"], "Dear Sam, the meeting is at ten.");
    assert_eq!(ran["action"]["name"], "Email");
    assert_eq!(ran["model"], "llama3.2:latest");
    assert!(ran["processing_time"].as_f64().unwrap() >= 0.0);

    let requests = provider.received_requests().await.unwrap();
    let sent = received(&requests);
    assert_eq!(
        sent,
        json!({"model": "llama3.2", "stream": true, "messages": [
            {"role": "system", "content": "Write it as an email."},
            {"role": "user", "content": "meeting at ten tell sam"}]})
    );
    let headers = &requests[0].headers;
    assert_eq!(headers.get("content-type").unwrap(), "application/json");
    assert!(
        headers.get("authorization").is_none(),
        "no key, no Authorization"
    );

    // The same request from the `openai` package, where it is installed: the same address,
    // the same body.
    if let Some(python) = std::env::var_os("VERBATIM_TEST_OPENAI_PYTHON") {
        let sdk = provider_answering(streamed("ok")).await;
        let script = "import sys, openai\n\
            c = openai.OpenAI(base_url=sys.argv[1], api_key='unused')\n\
            s = c.chat.completions.create(model='llama3.2', stream=True, messages=[\n\
              {'role': 'system', 'content': 'Write it as an email.'},\n\
              {'role': 'user', 'content': 'meeting at ten tell sam'}])\n\
            print(''.join(x.choices[0].delta.content or '' for x in s))\n";
        let output = std::process::Command::new(python)
            .args(["-c", script, &format!("{}/v1", sdk.uri())])
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "ok");
        let theirs = sdk.received_requests().await.unwrap();
        assert_eq!(theirs[0].url.path(), requests[0].url.path());
        assert_eq!(received(&theirs), sent);
    }

    // A provider that answers whole.
    let provider = provider_answering(whole("Fixed text.")).await;
    let app = app_with_provider(&format!("{}/v1/", provider.uri()));
    let id = add(&app, "Fix", "Fix it.").await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, ran) = run(&app, json!({"id": id, "text": "fixd txt"})).await;
    assert_eq!(
        (status, ran["text"].as_str()),
        (StatusCode::OK, Some("Fixed text."))
    );
}

/// The run's 503 message for a provider that answers `answer` (or `base` itself when given).
async fn failure(answer: Option<ResponseTemplate>, base: Option<String>, timeout: i64) -> String {
    let provider = match answer {
        Some(answer) => Some(provider_answering(answer).await),
        None => None,
    };
    let base = base.unwrap_or_else(|| format!("{}/v1", provider.as_ref().unwrap().uri()));
    let port = base
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches("/v1")
        .to_string();
    let app = app_with_provider(&base);
    app.app
        .store
        .set_pref(&CHAT_TIMEOUT_SECONDS, &PrefValue::Int(timeout))
        .unwrap();
    add(&app, "Fix", "Fix it.").await;
    let (status, body) = run(&app, json!({"name": "Fix", "text": "some text"})).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"]["code"], "service_unavailable");
    // The provider's port changes from run to run.
    body["error"]["message"]
        .as_str()
        .unwrap()
        .replace(&format!(":{port}"), ":PORT")
}

#[tokio::test]
async fn every_failure_of_the_provider_says_what_failed_and_what_to_check() {
    let mut seen = serde_json::Map::new();
    let closed = format!("http://127.0.0.1:{}/v1", common::closed_port());
    let message = failure(None, Some(closed), 30).await;
    seen.insert("unreachable".into(), message.clone().into());
    assert!(
        message.contains("cannot be reached") && message.contains("chatBaseUrl"),
        "{message}"
    );

    let slow = whole("late").set_delay(Duration::from_secs(3));
    let message = failure(Some(slow), None, 1).await;
    seen.insert("slow".into(), message.clone().into());
    assert!(
        message.contains("within 1 s") && message.contains("chatTimeoutSeconds"),
        "{message}"
    );

    let missing = ResponseTemplate::new(404).set_body_json(
        json!({"error": {"message": "model \"llama3.2\" not found, try pulling it first"}}),
    );
    let message = failure(Some(missing), None, 30).await;
    seen.insert("missing_model".into(), message.clone().into());
    assert!(
        message.contains("answered 404") && message.contains("not found, try pulling"),
        "{message}"
    );
    assert!(message.contains("chatModel 'llama3.2'"), "{message}");
    let refused = ResponseTemplate::new(401).set_body_json(json!({"error": "invalid key"}));
    let message = failure(Some(refused), None, 30).await;
    seen.insert("bad_key".into(), message.clone().into());
    assert!(message.contains("chatApiKey"), "{message}");

    let page = ResponseTemplate::new(200).set_body_raw("<html>hello</html>", "text/html");
    let message = failure(Some(page), None, 30).await;
    seen.insert("not_a_completion".into(), message.clone().into());
    assert!(message.contains("not a chat completion"), "{message}");

    let message = failure(Some(whole("   ")), None, 30).await;
    seen.insert("no_text".into(), message.clone().into());
    assert!(message.contains("no text"), "{message}");
    let message = failure(Some(streamed("")), None, 30).await;
    assert!(message.contains("no text"), "{message}");
    insta::with_settings!({ snapshot_path => "../../snapshots", prepend_module_to_snapshot => false }, {
        insta::assert_json_snapshot!("prompt_action_provider_failures", seen);
    });
}

#[tokio::test]
async fn runs_that_cannot_start_are_refused_before_any_call() {
    let provider = provider_answering(whole("unused")).await;
    let app = app_with_provider(&format!("{}/v1", provider.uri()));
    let router = app.router();
    let fix = add(&app, "Fix", "Fix it.").await;
    let (status, body) = run(&app, json!({"name": "Summarise", "text": "x"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("'Summarise'")
    );
    for bad in [
        json!({"text": "x"}),
        json!({"id": fix["id"], "name": "Fix", "text": "x"}),
        json!({"name": "Fix", "text": "  "}),
        json!({"name": "Fix"}),
    ] {
        let (status, _) = run(&app, bad.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
    }
    call(
        &router,
        "PUT",
        "/v1/prompt-actions",
        Some(json!({"id": fix["id"], "name": "Fix", "prompt": "Fix it.", "enabled": false})),
    )
    .await;
    let mut refusals = serde_json::Map::new();
    let (status, body) = run(&app, json!({"name": "Fix", "text": "x"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("disabled")
    );
    refusals.insert("disabled".into(), body);

    add(&app, "Email", "As an email.").await;
    let store = &app.app.store;
    store
        .set_pref(&CHAT_MODEL, &PrefValue::Text(String::new()))
        .unwrap();
    let (status, body) = run(&app, json!({"name": "Email", "text": "x"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("chatModel")
    );
    refusals.insert("no_model".into(), body);

    // A key never goes in the clear to another machine.
    store
        .set_pref(&CHAT_MODEL, &PrefValue::Text("m".into()))
        .unwrap();
    store.set_secret("chatApiKey", "sk-test-secret").unwrap();
    store
        .set_pref(
            &CHAT_BASE_URL,
            &PrefValue::Text("http://192.0.2.7:11434/v1".into()),
        )
        .unwrap();
    let (status, body) = run(&app, json!({"name": "Email", "text": "x"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("HTTPS"));
    assert!(!body.to_string().contains("sk-test-secret"));
    refusals.insert("key_in_the_clear".into(), body);
    assert!(provider.received_requests().await.unwrap().is_empty());
    insta::with_settings!({ snapshot_path => "../../snapshots", prepend_module_to_snapshot => false }, {
        insta::assert_json_snapshot!("prompt_action_refusals", refusals);
    });
}

#[tokio::test]
async fn the_key_goes_to_the_provider_alone_and_never_into_a_backup() {
    let provider = provider_answering(whole("Done.")).await;
    let app = app_with_provider(&format!("{}/v1", provider.uri()));
    app.app
        .store
        .set_secret("chatApiKey", "sk-test-secret")
        .unwrap();
    add(&app, "Fix", "Fix it.").await;
    let (status, ran) = run(&app, json!({"name": "Fix", "text": "x"})).await;
    assert_eq!(status, StatusCode::OK, "{ran}");
    assert!(!ran.to_string().contains("sk-test-secret"));
    let requests = provider.received_requests().await.unwrap();
    assert_eq!(
        requests[0].headers.get("authorization").unwrap(),
        "Bearer sk-test-secret"
    );

    let (status, backup) = call(&app.router(), "GET", "/v1/settings/export", None).await;
    assert_eq!(status, StatusCode::OK);
    let exported = backup.to_string();
    assert!(!exported.contains("sk-test-secret"));
    assert!(
        !exported.contains("chatBaseUrl") && !exported.contains("chatModel"),
        "{exported}"
    );

    // A backup from elsewhere cannot point the actions at another server.
    let mut foreign = common::sample_backup(0);
    foreign["preferences"] = json!({
        "chatBaseUrl": "https://collector.example/v1", "chatModel": "theirs",
        "chatTimeoutSeconds": 600, "normalizeNumbers": false
    });
    let (status, summary) = call(&app.router(), "POST", "/v1/settings/import", Some(foreign)).await;
    assert_eq!(status, StatusCode::OK, "{summary}");
    let store = &app.app.store;
    assert_eq!(
        store.pref(&CHAT_BASE_URL).unwrap(),
        PrefValue::Text(format!("{}/v1", provider.uri()))
    );
    assert_eq!(
        store.pref(&CHAT_MODEL).unwrap(),
        PrefValue::Text("llama3.2".into())
    );
    assert_eq!(
        store.pref(&CHAT_TIMEOUT_SECONDS).unwrap(),
        PrefValue::Int(30)
    );
    assert_eq!(
        store
            .pref(&verbatim::store::preferences::NORMALIZE_NUMBERS)
            .unwrap(),
        PrefValue::Bool(false),
        "the backup's other preferences were imported"
    );
}

#[tokio::test]
async fn a_transcription_with_an_action_answers_its_output_and_keeps_the_words_when_it_fails() {
    let clip = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/clips/en-weather.wav");
    let wav = std::fs::read(&clip).unwrap();
    let transcribe = |app: &TestApp, action: &str| {
        let request = common::multipart(
            "/v1/transcribe",
            &[("prompt_action", action)],
            Some(("weather.wav", &wav)),
        );
        let router = app.router();
        async move { common::send(&router, request).await }
    };
    let provider = provider_answering(streamed("THE WEATHER, REWRITTEN.")).await;
    let app = app_with_provider(&format!("{}/v1", provider.uri()));
    add(&app, "Shout", "Write it in capitals.").await;
    let (status, _, answer) = transcribe(&app, "shout").await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["text"], "THE WEATHER, REWRITTEN.");
    let heard = answer["transcribed_text"].as_str().unwrap().to_string();
    assert!(!heard.is_empty() && heard != answer["text"], "{answer}");
    assert!(
        answer["action_processing_time"].as_f64().is_some(),
        "{answer}"
    );
    assert!(answer.get("prompt_action_error").is_none(), "{answer}");
    assert_eq!(
        received(&provider.received_requests().await.unwrap())["messages"][1]["content"],
        heard.as_str()
    );

    // A provider that fails: the words as heard, and why.
    let broken = provider_answering(ResponseTemplate::new(500).set_body_string("overloaded")).await;
    let app = app_with_provider(&format!("{}/v1", broken.uri()));
    add(&app, "Shout", "Write it in capitals.").await;
    let (status, _, answer) = transcribe(&app, "Shout").await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["text"], heard.as_str());
    assert_eq!(answer["transcribed_text"], heard.as_str());
    let why = answer["prompt_action_error"].as_str().unwrap();
    assert!(
        why.contains("answered 500") && why.contains("overloaded"),
        "{why}"
    );

    // An unknown action: refused before the audio is heard.
    let (status, _, answer) = transcribe(&app, "Summarise").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{answer}");
    // Or in the query, on either route.
    let request = common::multipart(
        "/v1/transcribe?prompt_action=Shout",
        &[],
        Some(("weather.wav", &wav)),
    );
    let (status, _, answer) = common::send(&app.router(), request).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert!(answer["prompt_action_error"].is_string(), "{answer}");
    let request = common::json_request(
        "POST",
        "/v1/transcribe/local-file?prompt_action=Summarise",
        &json!({"path": clip}),
    );
    let (status, _, answer) = common::send(&app.router(), request).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{answer}");
    // The raw-body route takes it as a header.
    let request = common::request("POST", "/v1/transcribe")
        .header("content-type", "audio/wav")
        .header("x-prompt-action", "Shout")
        .body(axum::body::Body::from(wav.clone()))
        .unwrap();
    let (status, _, answer) = common::send(&app.router(), request).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert!(answer["prompt_action_error"].is_string(), "{answer}");
}

/// The CLI end to end: the key read from standard input and never printed, actions added,
/// changed, listed, run (text as an argument or on standard input) and removed, errors with
/// the exit codes of every command; the server's log never holds the key.
#[test]
fn the_cli_sets_the_key_and_adds_runs_and_removes_actions() {
    use assert_cmd::Command;
    use predicates::prelude::*;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let provider = runtime.block_on(provider_answering(whole("Fixed, with care.")));
    let home = tempfile::tempdir().unwrap();
    let cli = || {
        let mut command = Command::new(common::binary());
        command
            .env("VERBATIM_HOME", home.path())
            .env_remove("VERBATIM_API_TOKEN");
        command
    };
    let base = format!("{}/v1", provider.uri());
    cli()
        .args(["config", "set", "chatBaseUrl", &base])
        .assert()
        .success();
    cli()
        .args(["config", "set", "chatModel", "llama3.2"])
        .assert()
        .success();
    cli()
        .args(["config", "set-secret", "chatApiKey"])
        .write_stdin("sk-cli-secret\n")
        .assert()
        .success()
        .stdout("chatApiKey stored (13 characters).\n");
    cli()
        .args(["config", "set-secret", "apiToken"])
        .write_stdin("x\n")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("Unknown secret 'apiToken'"));
    let listed = cli().args(["config", "list"]).assert().success();
    assert!(!String::from_utf8_lossy(&listed.get_output().stdout).contains("sk-cli"));

    // Doctor asks the provider for its models: one it serves, then one it does not.
    let doctor = |expected: &str| {
        let out = cli().args(["doctor", "--json"]).output().unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let check = report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "prompt actions")
            .unwrap()
            .clone();
        assert_eq!(check["status"], expected, "{check}");
        check["detail"].as_str().unwrap().to_string()
    };
    let detail = doctor("warn");
    assert!(detail.contains("answered 404 to GET /models"), "{detail}");
    runtime.block_on(
        Mock::given(method("GET"))
            .and(path("/v1/models"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "object": "list",
                "data": [{"id": "llama3.2:latest", "object": "model"}]
            })))
            .mount(&provider),
    );
    assert!(doctor("ok").contains("serves 'llama3.2'"));
    cli()
        .args(["config", "set", "chatModel", "mistral"])
        .assert()
        .success();
    assert!(doctor("warn").contains("does not serve 'mistral' (it serves: llama3.2:latest)"));
    cli()
        .args(["config", "set", "chatModel", "llama3.2"])
        .assert()
        .success();

    let mut server = common::SpawnedServer::start(home.path(), &[]);
    cli()
        .args(["actions"])
        .assert()
        .success()
        .stdout(predicate::str::contains("No prompt actions"));
    cli()
        .args(["actions", "add", "Fix grammar", "Fix the grammar."])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "Prompt action 'Fix grammar' added",
        ));
    cli()
        .args(["actions", "add", "fix grammar", "Fix grammar and spelling."])
        .assert()
        .success()
        .stdout(predicate::str::contains("changed"));
    cli()
        .args(["actions", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Fix grammar and spelling."));
    cli()
        .args(["actions", "run", "Fix grammar", "fixd with car"])
        .assert()
        .success()
        .stdout("Fixed, with care.\n");
    let out = cli()
        .args(["--json", "actions", "run", "FIX GRAMMAR", "-"])
        .write_stdin("from standard input\n")
        .assert()
        .success();
    let answer: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(answer["model"], "llama3.2:latest");
    let requests: Vec<Request> = runtime
        .block_on(provider.received_requests())
        .unwrap()
        .into_iter()
        .filter(|r| r.url.path().ends_with("/chat/completions"))
        .collect();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0].headers.get("authorization").unwrap(),
        "Bearer sk-cli-secret"
    );
    let all = runtime.block_on(provider.received_requests()).unwrap();
    assert!(
        all.iter()
            .all(|r| r.headers.get("authorization").unwrap() == "Bearer sk-cli-secret"),
        "doctor's requests carry the key too"
    );
    let body: Value = serde_json::from_slice(&requests[1].body).unwrap();
    assert_eq!(body["messages"][1]["content"], "from standard input\n");
    cli()
        .args(["actions", "run", "Summarise", "x"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("Server returned 404"));
    cli()
        .args(["actions", "remove", "Fix grammar"])
        .assert()
        .success()
        .stdout("Prompt action removed.\n");
    cli()
        .args(["actions", "remove", "Fix grammar"])
        .assert()
        .code(1);
    assert!(!server.stderr_line_contains("sk-cli"));
}

/// `verbatim transcribe FILE --action NAME` prints the action's output; when the provider
/// fails, the transcript, and why on standard error (sim mode's built-in provider both times).
#[test]
fn the_cli_transcribes_with_an_action_and_says_when_it_failed() {
    use assert_cmd::Command;
    let clip = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/clips/en-weather.wav");
    let heard = common::recorded_text("en-weather");
    for (fault, expected) in [
        ("", format!("[Email] {heard}")),
        ("fault = \"empty\"", heard.clone()),
    ] {
        let home = tempfile::tempdir().unwrap();
        let scenario = format!(
            "[engine]\nselected_model = \"tiny.en\"\n[models]\n\"tiny.en\" = \"present\"\n[chat]\n{fault}\n"
        );
        let _server = common::serve_scenario(home.path(), &scenario);
        let cli = || {
            let mut command = Command::new(common::binary());
            command
                .env("VERBATIM_HOME", home.path().join("data"))
                .env_remove("VERBATIM_API_TOKEN");
            command
        };
        cli()
            .args(["actions", "add", "Email", "As an email."])
            .assert()
            .success();
        let out = cli()
            .args(["transcribe", "--no-progress", "--action", "email"])
            .arg(&clip)
            .assert()
            .success();
        let output = out.get_output();
        assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), expected);
        let said = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            said.contains("The text is as transcribed"),
            !fault.is_empty(),
            "{said}"
        );
    }
}

/// llama.cpp's OpenAI-compatible server (llama-cpp-python's, built by scripts/test) on
/// loopback, stopped on drop.
struct ChatServer {
    child: std::process::Child,
    port: u16,
}

impl ChatServer {
    /// Serves the GGUF at `model` as `smollm2`, one thread; None (the test skipped) without it.
    fn start() -> Option<ChatServer> {
        let (Some(python), Some(model)) = (
            std::env::var_os("VERBATIM_TEST_CHAT_PYTHON"),
            std::env::var_os("VERBATIM_TEST_CHAT_MODEL"),
        ) else {
            common::skip(
                "VERBATIM_TEST_CHAT_PYTHON and VERBATIM_TEST_CHAT_MODEL are not set (llama.cpp's server and a GGUF model)",
            );
            return None;
        };
        let port = common::closed_port();
        let child = std::process::Command::new(python)
            .args(["-m", "llama_cpp.server", "--model"])
            .arg(model)
            .args(["--model_alias", "smollm2", "--host", "127.0.0.1", "--port"])
            .arg(port.to_string())
            .args(["--n_ctx", "2048", "--n_threads", "1", "--verbose", "false"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let server = ChatServer { child, port };
        let started = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "llama.cpp's server did not start"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(server)
    }
}

impl Drop for ChatServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A real chat server and model (llama.cpp's server with SmolLM2-135M-Instruct, from the
/// package registries): an action runs through it, streamed, on `/run` and on a transcription.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_chat_server_runs_actions_on_texts_and_transcripts() {
    let Some(server) = ChatServer::start() else {
        return;
    };
    let app = app_with_provider(&format!("http://127.0.0.1:{}/v1", server.port));
    app.app
        .store
        .set_pref(&CHAT_MODEL, &PrefValue::Text("smollm2".into()))
        .unwrap();
    add(
        &app,
        "Title",
        "Give the user's sentence a short title. Answer with the title only.",
    )
    .await;
    let (status, ran) = run(
        &app,
        json!({"name": "Title", "text": "The weather today is sunny and warm."}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{ran}");
    let title = ran["text"].as_str().unwrap();
    assert!(!title.trim().is_empty(), "{ran}");
    assert!(ran["processing_time"].as_f64().unwrap() > 0.0, "{ran}");

    let clip = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/clips/en-weather.wav");
    let request = common::json_request(
        "POST",
        "/v1/transcribe/local-file",
        &json!({"path": clip, "prompt_action": "Title"}),
    );
    let (status, _, answer) = common::send(&app.router(), request).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer["transcribed_text"],
        common::recorded_text("en-weather").as_str()
    );
    assert!(answer.get("prompt_action_error").is_none(), "{answer}");
    assert!(
        !answer["text"].as_str().unwrap().trim().is_empty(),
        "{answer}"
    );
    assert!(
        answer["action_processing_time"].as_f64().unwrap() > 0.0,
        "{answer}"
    );
}

/// Many clients asking a slow provider at once: at most `MAX_CALLS_AT_ONCE` calls wait on it,
/// the rest are refused at once (503) rather than take the threads other work runs on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_beyond_the_calls_at_once_are_refused_at_once() {
    use verbatim::chat::MAX_CALLS_AT_ONCE;
    let provider = provider_answering(whole("Late.").set_delay(Duration::from_secs(2))).await;
    let app = app_with_provider(&format!("{}/v1", provider.uri()));
    add(&app, "Fix", "Fix it.").await;
    let runs = (0..MAX_CALLS_AT_ONCE + 2).map(|_| run(&app, json!({"name": "Fix", "text": "x"})));
    let answers = futures_util::future::join_all(runs).await;
    let refused: Vec<&Value> = answers
        .iter()
        .filter(|(status, _)| *status == StatusCode::SERVICE_UNAVAILABLE)
        .map(|(_, body)| body)
        .collect();
    let done = answers
        .iter()
        .filter(|(status, _)| *status == StatusCode::OK)
        .count();
    assert_eq!((done, refused.len()), (MAX_CALLS_AT_ONCE, 2), "{answers:?}");
    assert!(
        refused[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already waiting for the chat provider"),
        "{}",
        refused[0]
    );
    insta::with_settings!({ snapshot_path => "../../snapshots", prepend_module_to_snapshot => false }, {
        insta::assert_json_snapshot!("prompt_action_busy", refused[0]);
    });
    // Their places come back: the next run gets through.
    let (status, _) = run(&app, json!({"name": "Fix", "text": "x"})).await;
    assert_eq!(status, StatusCode::OK);
}
