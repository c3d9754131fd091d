//! `verbatim conformance` against Verbatim itself: a sim server passes every check (writes and
//! audio included) and is left as it was found; a token-requiring server passes with the token
//! and the auth checks run; the JSON, text and JUnit reports (validated with xmllint); a real
//! server with the installed tiny.en model passes too.

use crate::common;

use std::path::Path;
use std::process::Output;

use common::{SpawnedServer, test_models, verbatim};
use serde_json::Value;

/// A backup with an enabled and a disabled rule, terms, a correction and two history entries,
/// so that the checks that need some of each run instead of skipping.
const SEED: &str = r#"{"schemaVersion":1,"exportedAt":"2026-04-13T10:15:00Z","appVersion":"0.1.0",
"workflows":[{"id":"0F8FAD5B-D9CB-469F-A165-70867728950E","name":"Mail","isEnabled":true,"priority":0,"bundleIdentifiers":["org.mozilla.Thunderbird"],"urlPatterns":[],"languageMode":"multiple","languageHints":["de","en"]},
{"id":"7C9E6679-7425-40DE-944B-E07FC1F90AE7","name":"Docs","isEnabled":false,"priority":4,"bundleIdentifiers":[],"urlPatterns":["docs.example.org/*"],"inputLanguage":"fr","languageMode":"exact","languageHints":[],"translationTargetLanguage":"en"}],
"dictionaryEntries":[{"type":"term","term":"Kubernetes","isEnabled":true,"ctcMinSimilarity":0.75},{"type":"term","term":"axum","isEnabled":true},{"type":"correction","original":"teh","replacement":"the","caseSensitive":false,"isEnabled":true}],
"snippets":[],"promptActions":[],"profiles":[],"hotkeys":[],"plugins":[],
"history":[{"id":"16FD2706-8BAF-433B-82EB-8C7FADA847DA","text":"Hello there","rawText":"hello there","timestamp":"2026-04-12T10:15:00Z","appName":"Terminal","duration":1.25,"language":"en","engine":"whisper","model":"tiny.en","wordsCount":2},
{"id":"26FD2706-8BAF-433B-82EB-8C7FADA847DA","text":"Second","rawText":"second","timestamp":"2026-04-13T10:15:00Z","duration":1.0,"engine":"whisper","wordsCount":1}],
"preferences":{}}"#;

/// Imports [`SEED`] into the server of `home`.
fn seed(home: &Path, server: &SpawnedServer) {
    let file = home.join("seed.json");
    std::fs::write(&file, SEED).unwrap();
    let port = server.discovery.port.to_string();
    let out = verbatim(home)
        .args(["--port", &port, "--api-token", &server.discovery.token])
        .arg("import")
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// Runs the kit against `server` with `args`; the output and the JSON report.
fn kit(home: &Path, server: &SpawnedServer, args: &[&str]) -> (Output, Value) {
    let url = format!("http://127.0.0.1:{}", server.discovery.port);
    // A data folder of its own: the kit takes no token from the server's discovery file.
    let out = verbatim(&home.join("client"))
        .args(["conformance", "--url", &url, "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON report ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out, report)
}

fn ids_with(report: &Value, outcome: &str) -> Vec<String> {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["outcome"] == outcome)
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

fn assert_no_failure(out: &Output, report: &Value) {
    let failed: Vec<&Value> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["outcome"] == "fail")
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

/// The export without its timestamp, dictionary entries in a stable order.
fn state(server: &SpawnedServer) -> Value {
    let (status, mut export) =
        common::http_json(server.discovery.port, "GET", "/v1/settings/export", None);
    assert_eq!(status, 200);
    export.as_object_mut().unwrap().remove("exportedAt");
    export["dictionaryEntries"]
        .as_array_mut()
        .unwrap()
        .sort_by_key(|e| e.to_string());
    export
}

#[test]
fn a_sim_server_passes_every_check_and_is_left_as_it_was() {
    let home = tempfile::tempdir().unwrap();
    let wyoming = format!("127.0.0.1:{}", common::closed_port());
    let server = SpawnedServer::start(home.path(), &["--sim", "--wyoming", &wyoming]);
    seed(home.path(), &server);
    let before = state(&server);
    let discovery = home.path().join("api-discovery.json");
    let (out, report) = kit(
        home.path(),
        &server,
        &[
            "--allow-writes",
            "--allow-audio",
            "--discovery",
            discovery.to_str().unwrap(),
            "--wyoming",
            &wyoming,
        ],
    );
    assert_no_failure(&out, &report);
    let summary = &report["summary"];
    assert!(summary["total"].as_u64().unwrap() >= 120, "{summary}");
    // What is skipped here needs a token-requiring server or no engine at all.
    let skipped = ids_with(&report, "skip");
    assert!(
        skipped.iter().all(|id| id.starts_with("auth.")
            || id == "openai.unauthorized"
            || id == "realtime.subprotocol-token"
            || id == "errors.service-unavailable"),
        "{skipped:?}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "{} contract points checked: {} passed, 0 failed, {} skipped",
            summary["total"], summary["passed"], summary["skipped"]
        )),
        "{stderr}"
    );
    // Dictation and the Recorder ran; every write was undone (history entries included).
    assert!(ids_with(&report, "pass").contains(&"recorder.output-file".to_string()));
    let wyoming_passed = ids_with(&report, "pass")
        .into_iter()
        .filter(|id| id.starts_with("wyoming."))
        .count();
    assert_eq!(wyoming_passed, 5, "{report}");
    assert_eq!(state(&server), before);
}

/// A valid server on a machine with no microphone or system audio answers capture 409 `No
/// microphone available` (or `No system audio source available`): with `--allow-audio` those
/// checks are skipped with that reason, none fails.
#[test]
fn a_server_without_capture_devices_gets_its_capture_checks_skipped_not_failed() {
    let home = tempfile::tempdir().unwrap();
    let scenario = common::write_scenario(
        home.path(),
        "[microphone]\npresent = false\n\n[system_audio]\npresent = false\n\n\
         [engine]\nselected_model = \"tiny.en\"\n\n[models]\n\"tiny.en\" = \"present\"\n",
    );
    let scenario = scenario.to_string_lossy().into_owned();
    let server = SpawnedServer::start(home.path(), &["--sim", "--scenario", &scenario]);
    let (out, report) = kit(home.path(), &server, &["--allow-writes", "--allow-audio"]);
    assert_no_failure(&out, &report);
    let skipped: Vec<&Value> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            c["outcome"] == "skip"
                && c.to_string()
                    .contains("no capture device for it: the server answered 409")
        })
        .collect();
    let ids: Vec<&str> = skipped.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert!(
        ids.iter().any(|id| id.starts_with("dictation."))
            && ids.iter().any(|id| id.starts_with("recorder.")),
        "{ids:?}"
    );
}

#[test]
fn a_token_server_passes_with_the_token_and_skips_without_it() {
    let home = tempfile::tempdir().unwrap();
    let server = SpawnedServer::start(home.path(), &["--sim", "--require-token"]);
    let token = server.discovery.token.clone();
    let (out, report) = kit(home.path(), &server, &["--token", &token]);
    assert_no_failure(&out, &report);
    let passed = ids_with(&report, "pass");
    for id in [
        "auth.every-route",
        "auth.bearer-any-case",
        "auth.www-authenticate",
        "openai.unauthorized",
        "realtime.session",
        "realtime.subprotocol-token",
        "realtime.foreign-origin",
    ] {
        assert!(passed.contains(&id.to_string()), "{id} did not pass");
    }
    // Read-only by default: what writes or starts capture is skipped, saying how to allow it.
    let reasons: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["id"] == "dictionary.replace" || c["id"] == "recorder.start")
        .map(|c| c["why"].as_str().unwrap())
        .collect();
    assert_eq!(
        reasons,
        [
            "changes data on the server (then restores it): pass --allow-writes",
            "starts dictation or the Recorder: pass --allow-audio"
        ]
    );

    // Without the token, only what needs none runs.
    let (out, report) = kit(home.path(), &server, &[]);
    assert_no_failure(&out, &report);
    let history = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "history.envelope")
        .unwrap();
    assert_eq!(
        history["why"],
        "the server requires a token: pass --token or --discovery"
    );
    assert!(ids_with(&report, "pass").contains(&"security.host-foreign".to_string()));

    // A wrong token makes the protected checks fail, with the status to see.
    let (out, report) = kit(
        home.path(),
        &server,
        &["--token", "wrong", "--only", "models"],
    );
    assert_eq!(out.status.code(), Some(4));
    assert!(ids_with(&report, "fail").contains(&"models.envelope".to_string()));
}

#[test]
fn reports_text_junit_and_usage_errors() {
    let home = tempfile::tempdir().unwrap();
    let server = SpawnedServer::start(home.path(), &["--sim"]);
    let url = format!("http://127.0.0.1:{}", server.discovery.port);
    let run = |args: &[&str]| {
        verbatim(home.path())
            .args([
                "conformance",
                "--url",
                &url,
                "--only",
                "status",
                "--only",
                "wire",
            ])
            .args(args)
            .output()
            .unwrap()
    };

    let text = run(&[]);
    assert_eq!(text.status.code(), Some(0), "{text:?}");
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("\nstatus\n  pass  status.fields\n  pass  status.api-version\n"),
        "{text}"
    );
    assert!(!text.contains("history."));
    let last = text.lines().last().unwrap();
    assert!(last.contains(" contract points checked: "), "{last}");

    let file = home.path().join("report.xml");
    let junit = run(&["--format", "junit", "--output", file.to_str().unwrap()]);
    assert_eq!(junit.status.code(), Some(0), "{junit:?}");
    assert!(
        junit.stdout.is_empty(),
        "nothing but the report goes to stdout"
    );
    let xml = std::fs::read_to_string(&file).unwrap();
    assert!(xml.contains("<testsuite name=\"wire\""), "{xml}");
    assert!(xml.contains("<testcase classname=\"status\" name=\"status.api-version\""));
    validate_junit(&file);

    let unknown = run(&["--only", "everything"]);
    assert_eq!(unknown.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        stderr.contains("unknown area 'everything': use one of wire, errors, status"),
        "{stderr}"
    );

    let closed = verbatim(home.path())
        .args([
            "conformance",
            "--url",
            &format!("http://127.0.0.1:{}", common::closed_port()),
        ])
        .output()
        .unwrap();
    assert_eq!(closed.status.code(), Some(2), "{closed:?}");
}

/// A JUnit report with failures and skips is valid against the Jenkins `junit-10.xsd` shape.
#[test]
fn a_junit_report_with_failures_and_skips_is_valid() {
    let home = tempfile::tempdir().unwrap();
    let server = SpawnedServer::start(home.path(), &["--sim", "--require-token"]);
    let file = home.path().join("report.xml");
    let url = format!("http://127.0.0.1:{}", server.discovery.port);
    let out = verbatim(home.path())
        .args([
            "conformance",
            "--url",
            &url,
            "--token",
            "wrong & <bad>",
            "--format",
            "junit",
        ])
        .args([
            "--output",
            file.to_str().unwrap(),
            "--only",
            "models",
            "--only",
            "history",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    let xml = std::fs::read_to_string(&file).unwrap();
    assert!(xml.contains("<failure message="), "{xml}");
    assert!(xml.contains("<skipped message="), "{xml}");
    validate_junit(&file);
}

fn validate_junit(file: &Path) {
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/junit-10.xsd");
    let checked = std::process::Command::new("xmllint")
        .args(["--noout", "--schema"])
        .arg(&schema)
        .arg(file)
        .output();
    match checked {
        Ok(out) => assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(_) => common::skip("xmllint is not installed (libxml2-utils)"),
    }
}

#[test]
fn a_real_server_passes_with_the_installed_model() {
    let Some(models) = test_models() else { return };
    let home = tempfile::tempdir().unwrap();
    let server = common::serve_model(home.path(), &models, "tiny.en", &[]);
    seed(home.path(), &server);
    let before = state(&server);
    let (out, report) = kit(home.path(), &server, &["--allow-writes"]);
    assert_no_failure(&out, &report);
    assert!(ids_with(&report, "pass").contains(&"transcribe.word-timestamps".to_string()));
    assert_eq!(state(&server), before);
}
