//! `verbatim serve --sim` over HTTP: the full API on the replay engine and the recorded corpus,
//! with scenario faults, paced downloads, auth, byte-identical answers across runs, and the
//! built-in chat provider of prompt actions.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{SpawnedServer, raw_http, recorded_text, recorded_text_of};
use serde_json::{Value, json};

fn corpus_clip(id: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("corpus/clips/{id}.wav"))
}

fn ask(
    server: &SpawnedServer,
    method: &str,
    path: &str,
    body: Option<Value>,
    token: Option<&str>,
) -> (u16, Value) {
    let port = server.discovery.port;
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let (status, _, text) = raw_http(
        port,
        &format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    );
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn local_file(server: &SpawnedServer, body: Value) -> (u16, Value) {
    ask(
        server,
        "POST",
        "/v1/transcribe/local-file",
        Some(body),
        None,
    )
}

fn sim(home: &Path, scenario: Option<&Path>, extra: &[&str]) -> SpawnedServer {
    let mut args = vec!["--sim"];
    let scenario = scenario.map(|p| p.to_string_lossy().into_owned());
    if let Some(s) = &scenario {
        args.extend(["--scenario", s.as_str()]);
    }
    args.extend(extra);
    SpawnedServer::start(home, &args)
}

#[test]
fn status_models_and_replayed_transcription() {
    let home = tempfile::tempdir().unwrap();
    let mut server = sim(home.path(), None, &[]);
    let (_, status) = ask(&server, "GET", "/v1/status", None, None);
    assert_eq!(
        (
            status["status"].as_str(),
            status["engine"].as_str(),
            status["model"].as_str()
        ),
        (Some("ready"), Some("whisper"), Some("tiny.en"))
    );
    let (_, models) = ask(&server, "GET", "/v1/models", None, None);
    let find = |id: &str| {
        models["models"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == id)
            .cloned()
            .unwrap()
    };
    assert_eq!(
        (
            find("tiny.en")["status"].as_str(),
            find("tiny.en")["selected"].as_bool()
        ),
        (Some("ready"), Some(true))
    );
    assert_eq!(find("base")["status"], "not_configured");

    let (code, result) = local_file(
        &server,
        json!({"path": corpus_clip("en-apples"), "response_format": "verbose_json"}),
    );
    assert_eq!(code, 200, "{result}");
    assert_eq!(
        result["text"].as_str(),
        Some(recorded_text("en-apples").as_str())
    );
    assert_eq!(result["language"], "en");
    assert!(result["segments"].as_array().is_some_and(|s| !s.is_empty()));

    // Unknown audio: a tone is not in the corpus.
    let dir = tempfile::tempdir().unwrap();
    let tone = dir.path().join("tone.wav");
    let ok = Command::new("sox")
        .args(["-n", "-r", "16000", "-c", "1"])
        .arg(&tone)
        .args(["synth", "2", "sine", "440"])
        .status();
    if ok.is_ok_and(|s| s.success()) {
        let (code, unknown) = local_file(&server, json!({"path": tone}));
        assert_eq!(code, 200);
        assert_eq!(unknown["text"], "");
    }

    // The same recording re-encoded (MP3, 44.1 kHz stereo) and uploaded is still recognised.
    let mp3 = dir.path().join("apples.mp3");
    let encoded = Command::new("ffmpeg")
        .args(["-loglevel", "error", "-y", "-i"])
        .arg(corpus_clip("en-apples"))
        .args(["-ar", "44100", "-ac", "2"])
        .arg(&mp3)
        .status();
    if encoded.is_ok_and(|s| s.success()) {
        let out = common::verbatim(home.path())
            .args(["transcribe", "-"])
            .stdin(std::fs::File::open(&mp3).unwrap())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            recorded_text("en-apples")
        );
    }

    // A model the scenario downloads in 5 s: 409 without waiting, then ready after the wait.
    let (code, _) = local_file(
        &server,
        json!({"path": corpus_clip("en-apples"), "model": "base"}),
    );
    assert_eq!(code, 409);
    let started = std::time::Instant::now();
    let port = server.discovery.port;
    let body = json!({"path": corpus_clip("en-apples"), "model": "base"}).to_string();
    let (code, _, answer) = raw_http(
        port,
        &format!(
            "POST /v1/transcribe/local-file?await_download=1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    );
    assert_eq!(code, 200);
    assert!(
        started.elapsed().as_secs_f64() >= 4.5,
        "the download is paced"
    );
    // base answers what the real base model heard, not tiny.en's words.
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["model"], "base");
    assert_eq!(
        answer["text"].as_str(),
        Some(recorded_text_of("base", "en-apples").as_str())
    );
    assert_ne!(
        recorded_text_of("base", "en-apples"),
        recorded_text("en-apples")
    );
    let (_, models) = ask(&server, "GET", "/v1/models", None, None);
    assert!(
        models["models"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["id"] == "base" && m["status"] == "ready")
    );

    assert!(server.stderr_line_contains("simulated"));
}

#[test]
fn scenario_faults_and_auth_behave_as_in_the_real_server() {
    let home = tempfile::tempdir().unwrap();
    let scenario = home.path().join("faulty.toml");
    std::fs::write(
        &scenario,
        "[engine]\nselected_model = \"tiny.en\"\nfail_requests = [2]\n\n[models]\n\"tiny.en\" = \"present\"\n",
    )
    .unwrap();
    let server = sim(home.path(), Some(&scenario), &["--require-token"]);
    let token = server.discovery.token.clone();
    let body = json!({"path": corpus_clip("en-apples")});
    assert_eq!(
        ask(
            &server,
            "POST",
            "/v1/transcribe/local-file",
            Some(body.clone()),
            None
        )
        .0,
        401
    );
    assert_eq!(ask(&server, "GET", "/v1/status", None, None).0, 200);
    assert_eq!(
        ask(
            &server,
            "POST",
            "/v1/transcribe/local-file",
            Some(body.clone()),
            Some(&token)
        )
        .0,
        200
    );
    let (code, failed) = ask(
        &server,
        "POST",
        "/v1/transcribe/local-file",
        Some(body.clone()),
        Some(&token),
    );
    assert_eq!(code, 500, "the scenario fails the second request: {failed}");
    assert_eq!(failed["error"]["code"], "internal_error");
    assert_eq!(
        ask(
            &server,
            "POST",
            "/v1/transcribe/local-file",
            Some(body),
            Some(&token)
        )
        .0,
        200
    );
}

#[test]
fn a_bad_scenario_is_refused_at_start_naming_the_key() {
    let home = tempfile::tempdir().unwrap();
    let scenario = home.path().join("bad.toml");
    std::fs::write(&scenario, "[engine]\nreal_time_factor = -1\n").unwrap();
    let out = common::verbatim(home.path())
        .args(["serve", "--sim", "--port", "0", "--scenario"])
        .arg(&scenario)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("real_time_factor"),
        "{out:?}"
    );
}

#[test]
fn the_same_requests_give_identical_answers_across_runs() {
    let answers = |_: u32| {
        let home = tempfile::tempdir().unwrap();
        let server = sim(home.path(), None, &[]);
        let mut out = Vec::new();
        for clip in ["en-apples", "en-siobhan", "de-morning", "silence-1s"] {
            out.push(local_file(
                &server,
                json!({"path": corpus_clip(clip), "response_format": "verbose_json"}),
            ));
        }
        out.push(ask(&server, "GET", "/v1/models", None, None));
        out.push(local_file(&server, json!({"path": "/no/such.wav"})));
        out
    };
    assert_eq!(answers(1), answers(2));
}

#[test]
fn unknown_and_unsupported_language_codes_are_refused_in_sim_mode_as_in_real_mode() {
    let home = tempfile::tempdir().unwrap();
    let server = &sim(home.path(), None, &[]);
    let clip = corpus_clip("en-apples");
    for body in [
        json!({"path": clip, "language": "xx"}),
        json!({"path": clip, "language_hints": ["de", "xx"]}),
    ] {
        let (code, answer) = local_file(server, body);
        assert_eq!(code, 400, "{answer}");
        assert_eq!(answer["error"]["message"], "Unknown language code 'xx'");
    }
    // A known code, or whisper's name for it, outside the English-only model's languages is
    // refused naming the engine; English by code or name is heard.
    for language in ["de", "German"] {
        let (code, answer) = local_file(server, json!({"path": clip, "language": language}));
        assert_eq!(code, 400, "{language}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!(
                "Engine 'whisper' does not support the language '{language}' with model 'tiny.en'; "
            )),
            "{message}"
        );
    }
    for language in ["en", "English"] {
        let (code, answer) = local_file(server, json!({"path": clip, "language": language}));
        assert_eq!(code, 200, "{language}: {answer}");
    }
    // The raw-body route refuses it from the header alone, before reading the audio.
    let port = server.discovery.port;
    let (status, _, text) = raw_http(
        port,
        &format!(
            "POST /v1/transcribe HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: audio/wav\r\nX-Language-Hints: fr, xx\r\nContent-Length: 4\r\nConnection: close\r\n\r\nRIFF"
        ),
    );
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("Unknown language code 'xx'"), "{text}");
}

#[cfg(feature = "moonshine")]
#[test]
fn a_scenario_on_moonshine_answers_as_the_moonshine_engine_with_its_recordings() {
    let home = tempfile::tempdir().unwrap();
    let scenario = home.path().join("moonshine.toml");
    std::fs::write(
        &scenario,
        "[engine]\nselected_model = \"moonshine-tiny\"\n\n[models]\n\"moonshine-tiny\" = \"present\"\n",
    )
    .unwrap();
    let server = sim(home.path(), Some(&scenario), &[]);
    let (_, status) = ask(&server, "GET", "/v1/status", None, None);
    assert_eq!(
        (&status["status"], &status["engine"], &status["model"]),
        (
            &json!("ready"),
            &json!("moonshine"),
            &json!("moonshine-tiny")
        )
    );
    assert_eq!(status["supports_translation"], false);
    let (_, models) = ask(&server, "GET", "/v1/models", None, None);
    let engine_of = |id: &str| {
        models["models"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == id)
            .map(|m| (m["engine"].clone(), m["status"].clone()))
    };
    assert_eq!(
        engine_of("moonshine-tiny"),
        Some((json!("moonshine"), json!("ready")))
    );
    assert_eq!(
        engine_of("moonshine-base"),
        Some((json!("moonshine"), json!("not_configured")))
    );
    assert_eq!(engine_of("tiny.en").unwrap().0, "whisper");

    let (code, result) = local_file(&server, json!({"path": corpus_clip("real-beckett")}));
    assert_eq!(code, 200, "{result}");
    assert_eq!(result["engine"], "moonshine");
    assert_eq!(
        result["text"].as_str(),
        Some(recorded_text_of("moonshine-tiny", "real-beckett").as_str())
    );
    // What Moonshine cannot do is refused in sim mode as in real mode.
    let (code, refused) = local_file(
        &server,
        json!({"path": corpus_clip("real-beckett"), "prompt": "Beckett"}),
    );
    assert_eq!(code, 400, "{refused}");
    assert_eq!(
        refused["error"]["message"],
        "Engine 'moonshine' does not support a prompt"
    );
}

/// Sim mode's built-in chat provider: prompt actions run with no provider and no `chatModel`,
/// answered as the scenario says (or `[NAME] TEXT`), on `/run` and on a transcription; a
/// scenario's fault fails every call as a real provider's would, the transcript kept.
#[test]
fn prompt_actions_run_on_the_built_in_chat_provider() {
    let home = tempfile::tempdir().unwrap();
    let scenario = r#"
[engine]
selected_model = "tiny.en"

[models]
"tiny.en" = "present"

[chat]
model = "replayed"
answers = { "fix grammar" = "Their going to the library." }
"#;
    let server = common::serve_scenario(home.path(), scenario);
    for (name, prompt) in [("Fix grammar", "Fix it."), ("Email", "As an email.")] {
        let body = json!({"name": name, "prompt": prompt});
        let (status, _) = ask(&server, "PUT", "/v1/prompt-actions", Some(body), None);
        assert_eq!(status, 200);
    }
    let run = json!({"name": "FIX GRAMMAR", "text": "their going too the libary"});
    let (status, ran) = ask(&server, "POST", "/v1/prompt-actions/run", Some(run), None);
    assert_eq!(status, 200, "{ran}");
    assert_eq!(
        (ran["text"].as_str(), ran["model"].as_str()),
        (Some("Their going to the library."), Some("replayed"))
    );
    let clip = corpus_clip("en-weather");
    let body = json!({"path": clip, "prompt_action": "Email"});
    let (status, answer) = local_file(&server, body);
    assert_eq!(status, 200, "{answer}");
    let heard = recorded_text("en-weather");
    assert_eq!(answer["transcribed_text"], heard.as_str());
    assert_eq!(answer["text"], format!("[Email] {heard}"));
    drop(server);

    let failing = tempfile::tempdir().unwrap();
    let scenario = scenario.replace("model = \"replayed\"", "fault = \"error_status\"");
    let server = common::serve_scenario(failing.path(), &scenario);
    let body = json!({"name": "Email", "prompt": "As an email."});
    ask(&server, "PUT", "/v1/prompt-actions", Some(body), None);
    let run = json!({"name": "Email", "text": "hello"});
    let (status, failed) = ask(&server, "POST", "/v1/prompt-actions/run", Some(run), None);
    assert_eq!(status, 503, "{failed}");
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("answered 500")
    );
    let (status, answer) = local_file(&server, json!({"path": clip, "prompt_action": "Email"}));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["text"], heard.as_str());
    assert!(
        answer["prompt_action_error"]
            .as_str()
            .unwrap()
            .contains("answered 500")
    );
}
