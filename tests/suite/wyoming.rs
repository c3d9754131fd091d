//! The Wyoming speech-to-text server (`serve --wyoming`): the real `wyoming` package's client
//! (as Home Assistant uses it) describes, pings and transcribes corpus speech sent in several
//! PCM formats, in sim mode and with the real default model, ten clients at once; and the
//! protocol the way an attacker or a clumsy client would speak it, over raw TCP: lengths that
//! claim gigabytes, endless header lines, malformed JSON, events out of order, bad audio,
//! unknown models, silence mid-event, each answered with an `error` event (and a close where
//! the stream cannot go on) while the server goes on serving. Needs the `wyoming` package's
//! interpreter in `VERBATIM_TEST_WYOMING_PYTHON` for the client's tests.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{SpawnedServer, closed_port, http_json, recorded_text};
use serde_json::{Value, json};

const SCENARIO: &str = r#"
[engine]
selected_model = "tiny.en"

[models]
"tiny.en" = "present"
"base" = "absent"
"#;

/// The interpreter of the virtual environment holding the `wyoming` package, if set up.
fn wyoming_python() -> Option<PathBuf> {
    let python = std::env::var_os("VERBATIM_TEST_WYOMING_PYTHON").map(PathBuf::from);
    if python.is_none() {
        common::skip("VERBATIM_TEST_WYOMING_PYTHON is not set (the wyoming package's interpreter)");
    }
    python
}

/// Runs the client's `cases` against `port`; its answers, in order.
fn client(python: &Path, port: u16, cases: Value) -> Vec<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/wyoming/client.py");
    let output = Command::new(python)
        .arg(script)
        .arg("127.0.0.1")
        .arg(port.to_string())
        .arg(cases.to_string())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// A sim-mode server serving Wyoming on a free loopback port; the server and that port.
fn sim_server(home: &Path, extra: &[&str]) -> (SpawnedServer, u16) {
    let port = closed_port();
    let address = format!("127.0.0.1:{port}");
    let mut args = vec!["--wyoming", address.as_str()];
    args.extend_from_slice(extra);
    let server = common::serve_scenario_with(home, SCENARIO, &args);
    (server, port)
}

fn clip(id: &str) -> String {
    corpus_dir()
        .join(format!("clips/{id}.wav"))
        .display()
        .to_string()
}

fn corpus_dir() -> PathBuf {
    verbatim_sim::Corpus::source_dir()
}

/// The types of an utterance's events, in order.
fn kinds(answer: &Value) -> Vec<&str> {
    answer["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect()
}

/// The last event of an utterance (its transcript or error).
fn last(answer: &Value) -> &Value {
    answer["events"].as_array().unwrap().last().unwrap()
}

#[test]
fn the_wyoming_client_describes_pings_and_transcribes_in_any_format() {
    let Some(python) = wyoming_python() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let (_server, port) = sim_server(home.path(), &[]);
    let utterance = |format: Value| json!({"utterance": {"wav": clip("en-update"), "format": format, "chunk_ms": 30}});
    let answers = client(
        &python,
        port,
        json!([
            {"describe": true},
            {"ping": "are you there"},
            utterance(json!({"rate": 16000, "width": 2, "channels": 1})),
            utterance(json!({"rate": 44100, "width": 2, "channels": 2})),
            utterance(json!({"rate": 8000, "width": 4, "channels": 1})),
            utterance(json!({"rate": 48000, "width": 3, "channels": 2})),
            // 8-bit (unsigned) at 16 kHz: the package's converter distorts 8-bit audio whose
            // rate it also changes.
            utterance(json!({"rate": 16000, "width": 1, "channels": 1})),
            {"utterance": {"wav": clip("en-update"), "name": "tiny.en", "language": "en"}},
            // At the pace of speech, as a microphone sends it: heard live as it comes.
            {"utterance": {"wav": clip("en-update"), "chunk_ms": 64, "realtime": true}},
        ]),
    );
    let asr = &answers[0]["asr"];
    assert_eq!(asr.as_array().unwrap().len(), 1, "{asr}");
    assert_eq!(asr[0]["name"], "verbatim");
    assert_eq!(asr[0]["streaming"], true);
    let models = asr[0]["models"].as_array().unwrap();
    let names: Vec<&str> = models.iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"tiny.en"), "{names:?}");
    assert!(!names.contains(&"base"), "only installed models: {names:?}");
    let tiny = models.iter().find(|m| m["name"] == "tiny.en").unwrap();
    assert_eq!(tiny["languages"], json!(["en"]));
    assert_eq!(tiny["installed"], true);
    assert_eq!(tiny["attribution"], "OpenAI");
    assert_eq!(answers[1], json!({"type": "pong", "text": "are you there"}));

    let expected = recorded_text("en-update");
    for answer in &answers[2..] {
        let kinds = kinds(answer);
        assert_eq!(kinds.first(), Some(&"transcript-start"), "{answer}");
        assert_eq!(
            &kinds[kinds.len() - 2..],
            ["transcript-stop", "transcript"],
            "{answer}"
        );
        assert!(kinds.contains(&"transcript-chunk"), "{answer}");
        let text = last(answer)["data"]["text"].as_str().unwrap();
        assert!(
            common::word_error_rate(&expected, text) <= 0.15,
            "{text} / {expected}"
        );
        // The chunks, joined, are the text as it firmed up.
        let chunks: String = answer["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["type"] == "transcript-chunk")
            .map(|e| e["data"]["text"].as_str().unwrap())
            .collect();
        assert!(
            common::word_error_rate(text, &chunks) <= 0.15,
            "{chunks} / {text}"
        );
    }
    assert_eq!(last(&answers[7])["data"]["language"], "en");
    // Heard live, the text is ready as the audio stops.
    let live = answers[8]["stop_to_transcript_ms"].as_f64().unwrap();
    assert!(live < 1_000.0, "{}", answers[8]);
}

#[test]
fn models_and_languages_are_honoured_or_refused_like_the_http_routes() {
    let Some(python) = wyoming_python() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let (_server, port) = sim_server(home.path(), &[]);
    let answers = client(
        &python,
        port,
        json!([
            {"utterance": {"wav": clip("en-update"), "name": "tiny.en-typo"}},
            {"utterance": {"wav": clip("en-update"), "name": "base"}},
            {"utterance": {"wav": clip("en-update"), "language": "klingon"}},
            {"utterance": {"wav": clip("en-update"), "name": "verbatim"}},
        ]),
    );
    for (answer, code, words) in [
        (&answers[0], "bad_request", "Unknown model 'tiny.en-typo'"),
        (
            &answers[1],
            "conflict",
            "Model 'base' is not installed: `verbatim models download base` gets it",
        ),
        (&answers[2], "bad_request", "klingon"),
    ] {
        let error = last(answer);
        assert_eq!(error["type"], "error", "{answer}");
        assert_eq!(error["data"]["code"], code, "{answer}");
        assert!(
            error["data"]["text"].as_str().unwrap().contains(words),
            "{answer}"
        );
    }
    // The program's own name means the selected model.
    assert_eq!(last(&answers[3])["type"], "transcript", "{}", answers[3]);
}

#[test]
fn history_keeps_wyoming_transcriptions_only_when_asked() {
    let Some(python) = wyoming_python() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let (server, port) = sim_server(home.path(), &[]);
    let api = server.discovery.port;
    let count = || {
        let (code, page) = http_json(api, "GET", "/v1/history", None);
        assert_eq!(code, 200, "{page}");
        page["total"].as_u64().unwrap()
    };
    let utterance = json!([{"utterance": {"wav": clip("en-update")}}]);
    client(&python, port, utterance.clone());
    assert_eq!(count(), 0, "wyomingHistory is off by default");
    let set = common::verbatim(&home.path().join("data"))
        .args(["config", "set", "wyomingHistory", "true"])
        .output()
        .unwrap();
    assert!(set.status.success(), "{set:?}");
    let answers = client(&python, port, utterance);
    let text = last(&answers[0])["data"]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(count(), 1);
    let (_, page) = http_json(api, "GET", "/v1/history", None);
    assert_eq!(page["entries"][0]["text"], text, "{page}");
}

/// A raw connection to the Wyoming port.
struct Raw {
    stream: TcpStream,
    reader: BufReader<TcpStream>,
}

impl Raw {
    fn connect(port: u16) -> Raw {
        let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let reader = BufReader::new(stream.try_clone().unwrap());
        Raw { stream, reader }
    }

    fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap();
    }

    fn event(&mut self, kind: &str, data: Value, payload: &[u8]) {
        let data = data.to_string();
        let mut header = json!({"type": kind, "data_length": data.len()});
        if !payload.is_empty() {
            header["payload_length"] = json!(payload.len());
        }
        let mut bytes = format!("{header}\n{data}").into_bytes();
        bytes.extend_from_slice(payload);
        self.send(&bytes);
    }

    /// The next event's type and data; None when the server closed the connection.
    fn read(&mut self) -> Option<(String, Value)> {
        let mut line = String::new();
        if self.reader.read_line(&mut line).unwrap_or(0) == 0 {
            return None;
        }
        let header: Value = serde_json::from_str(&line).unwrap();
        let mut data = header.get("data").cloned().unwrap_or(json!({}));
        if let Some(length) = header["data_length"].as_u64() {
            let mut bytes = vec![0; length as usize];
            self.reader.read_exact(&mut bytes).unwrap();
            data = serde_json::from_slice(&bytes).unwrap();
        }
        Some((header["type"].as_str().unwrap().to_string(), data))
    }

    /// The next event is an error with `code` whose text holds `words`.
    /// The next event is an error with `code` whose text holds `words`; its data.
    fn expect_error(&mut self, code: &str, words: &str) -> Value {
        let (kind, data) = self.read().expect("an error event");
        assert_eq!(kind, "error", "{data}");
        assert_eq!(data["code"], code, "{data}");
        assert!(data["text"].as_str().unwrap().contains(words), "{data}");
        data
    }

    /// The server closes the connection (quickly: it waits for nothing more).
    fn expect_closed(&mut self) {
        let started = Instant::now();
        assert!(self.read().is_none(), "the connection stays open");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }
}

#[test]
fn bad_input_gets_an_error_and_the_server_goes_on() {
    let home = tempfile::tempdir().unwrap();
    let (server, port) = sim_server(home.path(), &[]);
    let format = json!({"rate": 16000, "width": 2, "channels": 1});
    // Every error event, snapshotted at the end.
    let mut errors = Vec::new();

    // A payload claimed at 2 GB is refused at once, not waited for.
    let mut raw = Raw::connect(port);
    raw.send(b"{\"type\": \"audio-chunk\", \"payload_length\": 2000000000}\n");
    errors.push(raw.expect_error("payload_too_large", "payload_length 2000000000"));
    raw.expect_closed();
    // So is data claimed at 1 GB, and a header line that never ends.
    let mut raw = Raw::connect(port);
    raw.send(b"{\"type\": \"transcribe\", \"data_length\": 1000000000}\n");
    errors.push(raw.expect_error("payload_too_large", "data_length"));
    raw.expect_closed();
    let mut raw = Raw::connect(port);
    let endless = vec![b'{'; 200_000];
    let _ = raw.stream.write_all(&endless);
    errors.push(raw.expect_error("payload_too_large", "header line"));
    raw.expect_closed();
    // Malformed JSON, and data that is not an object.
    for bytes in [
        &b"{not json}\n"[..],
        b"{\"type\": \"ping\", \"data_length\": 3}\n[1]",
    ] {
        let mut raw = Raw::connect(port);
        raw.send(bytes);
        errors.push(raw.expect_error("bad_request", ""));
        raw.expect_closed();
    }
    // A web page's request (a browser cannot open a raw connection, but it can POST anywhere)
    // begins with its request line, which is no event: refused and closed, its body unread.
    let mut raw = Raw::connect(port);
    raw.send(
        b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n\r\n\
          {\"type\": \"describe\"}\n",
    );
    errors.push(raw.expect_error("bad_request", "not a JSON object"));
    raw.expect_closed();
    // An unknown event is answered and the connection goes on.
    let mut raw = Raw::connect(port);
    raw.event("open-the-pod-bay-doors", json!({}), &[]);
    errors.push(raw.expect_error("bad_request", "Unknown event type 'open-the-pod-bay-doors'"));
    raw.event("ping", json!({"text": "still here"}), &[]);
    assert_eq!(
        raw.read().unwrap(),
        ("pong".into(), json!({"text": "still here"}))
    );
    // Events out of order.
    let mut raw = Raw::connect(port);
    raw.event("audio-chunk", format.clone(), &[0; 64]);
    errors.push(raw.expect_error("bad_request", "outside an utterance"));
    raw.expect_closed();
    let mut raw = Raw::connect(port);
    raw.event("audio-stop", json!({}), &[]);
    errors.push(raw.expect_error("bad_request", "outside an utterance"));
    raw.expect_closed();
    // Audio the protocol cannot mean.
    for (start, chunk, payload, words) in [
        (json!({"rate": 16000, "width": 2}), None, 0, "'channels'"),
        (
            json!({"rate": 1, "width": 2, "channels": 1}),
            None,
            0,
            "rate 1 Hz",
        ),
        (
            format.clone(),
            Some(json!({"rate": 16000, "width": 7, "channels": 1})),
            14,
            "width 7",
        ),
        (format.clone(), Some(format.clone()), 3, "3 bytes of audio"),
    ] {
        let mut raw = Raw::connect(port);
        raw.event("audio-start", start, &[]);
        if let Some(chunk) = chunk {
            let (kind, _) = raw.read().unwrap();
            assert_eq!(kind, "transcript-start");
            raw.event("audio-chunk", chunk, &vec![0; payload]);
        }
        errors.push(raw.expect_error("bad_request", words));
        raw.expect_closed();
    }
    // A client that begins an event and stops sending is closed.
    let mut raw = Raw::connect(port);
    raw.send(b"{\"type\": \"ping\", \"data_length\": 100}\n{");
    let started = Instant::now();
    let (kind, stalled) = raw.read().unwrap();
    assert_eq!(kind, "error");
    errors.push(stalled);
    assert!(raw.read().is_none());
    let waited = started.elapsed();
    assert!(
        (verbatim::wyoming::EVENT_TIMEOUT
            ..verbatim::wyoming::EVENT_TIMEOUT + Duration::from_secs(5))
            .contains(&waited),
        "{waited:?}"
    );

    // Through all of it the server kept serving: the API and a whole utterance.
    let (code, status) = http_json(server.discovery.port, "GET", "/v1/status", None);
    assert_eq!(code, 200, "{status}");
    let mut raw = Raw::connect(port);
    raw.event("describe", json!({}), &[]);
    assert_eq!(raw.read().unwrap().0, "info");
    common::snapshot_settings().bind(|| {
        insta::assert_json_snapshot!("wyoming_errors", errors);
    });
}

#[test]
fn serving_beyond_loopback_needs_an_allowlist_and_bad_addresses_are_refused() {
    let home = tempfile::tempdir().unwrap();
    for (args, words) in [
        (vec!["--wyoming", "0.0.0.0:10300"], "--wyoming-allow"),
        (vec!["--wyoming", "host:port"], "not a Wyoming address"),
        (
            vec!["--wyoming", "10300", "--wyoming-allow", "10.0.0.0/40"],
            "prefix must be 0 to 32",
        ),
        (
            vec!["--wyoming-allow", "10.0.0.0/8"],
            "needs a Wyoming listener",
        ),
    ] {
        let output = common::verbatim(home.path())
            .args(["serve", "--sim", "--port", "0"])
            .args(&args)
            .output()
            .unwrap();
        assert!(!output.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(words), "{args:?}: {stderr}");
    }
    // The preference serves it too; a port already taken fails the start with its fix.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let set = common::verbatim(home.path())
        .args(["config", "set", "wyomingAddress", &port.to_string()])
        .output()
        .unwrap();
    assert!(set.status.success(), "{set:?}");
    let output = common::verbatim(home.path())
        .args(["serve", "--sim", "--port", "0"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success() && stderr.contains("config set wyomingAddress"),
        "{stderr}"
    );
}

#[test]
fn the_preference_serves_wyoming_and_doctor_sees_it() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("data");
    let port = closed_port();
    let set = common::verbatim(&data)
        .args(["config", "set", "wyomingAddress", &port.to_string()])
        .output()
        .unwrap();
    assert!(set.status.success(), "{set:?}");
    let doctor = |data: &Path| -> Value {
        let out = common::verbatim(data)
            .args(["doctor", "--json"])
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "wyoming")
            .cloned()
            .unwrap()
    };
    let before = doctor(&data);
    assert_eq!(before["status"], "ok", "{before}");
    assert!(
        before["detail"].as_str().unwrap().contains("is free"),
        "{before}"
    );
    let _server = common::serve_scenario(home.path(), SCENARIO);
    let mut raw = Raw::connect(port);
    raw.event("describe", json!({}), &[]);
    assert_eq!(raw.read().unwrap().0, "info");
    let serving = doctor(&data);
    assert_eq!(serving["status"], "ok", "{serving}");
    assert!(
        serving["detail"]
            .as_str()
            .unwrap()
            .contains("served by Verbatim: 1 model(s)"),
        "{serving}"
    );
}

/// The model `./scripts/serve` installs.
const DEFAULT_MODEL: &str = "tiny.en-q8_0";

/// The default model behind Wyoming, with its address's port.
fn real_server(home: &Path) -> Option<(SpawnedServer, u16)> {
    let models = common::test_models()?;
    assert!(
        common::installed(&models, DEFAULT_MODEL),
        "scripts/test installs {DEFAULT_MODEL}"
    );
    let port = closed_port();
    let address = format!("127.0.0.1:{port}");
    let server = common::serve_model(home, &models, DEFAULT_MODEL, &["--wyoming", &address]);
    Some((server, port))
}

#[test]
fn ten_clients_at_once_get_real_speech_right_while_status_stays_quick() {
    let Some(python) = wyoming_python() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let Some((server, port)) = real_server(home.path()) else {
        return;
    };
    let corpus = verbatim_sim::Corpus::load(&corpus_dir()).unwrap();
    let voices: Vec<_> = corpus
        .clips()
        .iter()
        .filter(|c| c.entry.voice == "human" && c.entry.language == "en" && c.duration() < 12.0)
        .take(10)
        .collect();
    assert_eq!(voices.len(), 10);
    let together: Vec<Value> = voices
        .iter()
        .map(|c| json!({"wav": clip(c.id()), "chunk_ms": 40}))
        .collect();
    // /v1/status polled the whole time.
    let api = server.discovery.port;
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let poller = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut took = Vec::new();
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let asked = Instant::now();
                let (code, _) = http_json(api, "GET", "/v1/status", None);
                assert_eq!(code, 200);
                took.push(asked.elapsed());
                std::thread::sleep(Duration::from_millis(20));
            }
            took.sort();
            took
        })
    };
    let answers = client(&python, port, json!([{"together": together}]));
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let status_times = poller.join().unwrap();
    let (mut errors, mut words) = (0, 0);
    for (voice, answer) in voices.iter().zip(answers[0].as_array().unwrap()) {
        let transcript = last(answer);
        assert_eq!(transcript["type"], "transcript", "{}: {answer}", voice.id());
        let text = transcript["data"]["text"].as_str().unwrap();
        let (wrong, total) = verbatim_sim::word_errors(
            &verbatim::transcribe::numbers::normalize_numbers(&voice.entry.text),
            &verbatim::transcribe::numbers::normalize_numbers(text),
        );
        errors += wrong;
        words += total;
    }
    assert!(
        errors * 100 <= words * 12,
        "{errors} of {words} words wrong: {answers:?}"
    );
    // Status never waits for the transcriptions: most answers come at once (the figure is
    // scripts/bench-wyoming's; the suite runs beside other tests on two cores, so one answer
    // may wait for a CPU).
    let p90 = status_times[status_times.len() * 9 / 10];
    assert!(
        status_times.len() >= 5 && p90 < Duration::from_millis(300),
        "{status_times:?}"
    );
}

#[test]
fn a_client_that_leaves_mid_utterance_stops_its_transcription() {
    let home = tempfile::tempdir().unwrap();
    let Some((server, port)) = real_server(home.path()) else {
        return;
    };
    let corpus = verbatim_sim::Corpus::load(&corpus_dir()).unwrap();
    let long = corpus.clip("real-two-cities").unwrap();
    let pcm: Vec<u8> = long
        .samples
        .iter()
        .flat_map(|s| ((s * 32_767.0) as i16).to_le_bytes())
        .collect();
    let format = json!({"rate": 16000, "width": 2, "channels": 1});
    // Six minutes of speech, sent after a second (so it is transcribed live as it comes), then
    // the client is gone.
    let mut leaving = Raw::connect(port);
    leaving.event("audio-start", format.clone(), &[]);
    leaving.event("audio-chunk", format.clone(), &pcm[..3_200]);
    std::thread::sleep(verbatim::wyoming::LIVE_AFTER + Duration::from_millis(200));
    for _ in 0..8 {
        for chunk in pcm.chunks(32_000) {
            leaving.event("audio-chunk", format.clone(), chunk);
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    drop(leaving);
    // Its transcription stops: the server soon uses next to no CPU (hearing the six minutes
    // takes it several seconds of both cores).
    let used = cpu_seconds_in_two_after_a_pause(server.pid());
    assert!(
        used < 0.3,
        "{used:.2} s of CPU in 2 s after the client left"
    );
    // A client that ends six minutes of speech, begins its next utterance once the first words
    // come (the next waits for the transcript before) and leaves: the waiting stops, and the
    // transcription with it.
    let mut waiting = Raw::connect(port);
    waiting.event("audio-start", format.clone(), &[]);
    for _ in 0..8 {
        for chunk in pcm.chunks(32_000) {
            waiting.event("audio-chunk", format.clone(), chunk);
        }
    }
    waiting.event("audio-stop", json!({}), &[]);
    while waiting.read().expect("the first words").0 != "transcript-chunk" {}
    waiting.event("audio-start", format.clone(), &[]);
    drop(waiting);
    let used = cpu_seconds_in_two_after_a_pause(server.pid());
    assert!(
        used < 0.3,
        "{used:.2} s of CPU in 2 s after the client left while its next utterance waited"
    );
    // The next utterance is heard at once, not after the three minutes.
    let short = corpus.clip("real-goforward").unwrap();
    let pcm: Vec<u8> = short
        .samples
        .iter()
        .flat_map(|s| ((s * 32_767.0) as i16).to_le_bytes())
        .collect();
    let started = Instant::now();
    let mut next = Raw::connect(port);
    next.event("audio-start", format.clone(), &[]);
    next.event("audio-chunk", format.clone(), &pcm);
    next.event("audio-stop", json!({}), &[]);
    let text = loop {
        let (kind, data) = next.read().expect("an answer");
        if kind == "transcript" {
            break data["text"].as_str().unwrap().to_lowercase();
        }
        assert_ne!(kind, "error", "{data}");
    };
    assert!(text.contains("forward"), "{text}");
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );
}

/// The CPU seconds process `pid` uses in 2 s, once 0.7 s have passed.
fn cpu_seconds_in_two_after_a_pause(pid: i32) -> f64 {
    std::thread::sleep(Duration::from_millis(700));
    let busy = cpu_seconds(pid);
    std::thread::sleep(Duration::from_secs(2));
    cpu_seconds(pid) - busy
}

/// The CPU time process `pid` has used, in seconds (user and system, from /proc).
fn cpu_seconds(pid: i32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command name (which is in parentheses and may hold spaces).
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

/// Two network namespaces joined by a veth pair, made for one test and removed with it: the
/// server's (10.77.0.1) and its clients' (10.77.0.2 and 10.77.0.3). Nothing leaves the machine.
struct Namespaces {
    server: String,
    clients: String,
}

impl Namespaces {
    /// None (with a note) without root or `ip`.
    fn make() -> Option<Namespaces> {
        if unsafe { libc::geteuid() } != 0 || !Path::new("/usr/sbin/ip").exists() {
            common::note_skip("network namespaces need root and iproute2 (CI runs as root)");
            return None;
        }
        let tag = std::process::id();
        let names = Namespaces {
            server: format!("vb-wy-s{tag}"),
            clients: format!("vb-wy-c{tag}"),
        };
        let (s, c) = (names.server.as_str(), names.clients.as_str());
        let (va, vb) = (format!("vws{tag}"), format!("vwc{tag}"));
        for args in [
            vec!["netns", "add", s],
            vec!["netns", "add", c],
            vec![
                "link", "add", &va, "netns", s, "type", "veth", "peer", "name", &vb, "netns", c,
            ],
            vec!["-n", s, "addr", "add", "10.77.0.1/24", "dev", &va],
            vec!["-n", c, "addr", "add", "10.77.0.2/24", "dev", &vb],
            vec!["-n", c, "addr", "add", "10.77.0.3/24", "dev", &vb],
            vec!["-n", s, "link", "set", &va, "up"],
            vec!["-n", c, "link", "set", &vb, "up"],
            vec!["-n", s, "link", "set", "lo", "up"],
            vec!["-n", c, "link", "set", "lo", "up"],
        ] {
            let out = Command::new("ip").args(&args).output().unwrap();
            assert!(out.status.success(), "ip {args:?}: {out:?}");
        }
        Some(names)
    }

    /// A Python one-liner in the clients' namespace: connects from `source` to the server's
    /// Wyoming port, sends `describe` and prints the first line it gets back (empty when the
    /// server closed the connection).
    fn describe_from(&self, source: &str, port: u16) -> String {
        let script = format!(
            "import socket\n\
             s = socket.socket()\n\
             s.settimeout(10)\n\
             s.bind(('{source}', 0))\n\
             s.connect(('10.77.0.1', {port}))\n\
             try:\n    s.sendall(b'{{\"type\": \"describe\"}}\\n')\nexcept OSError:\n    pass\n\
             data = b''\n\
             try:\n    data = s.makefile('rb').readline()\nexcept OSError:\n    pass\n\
             print(data.decode().strip())\n"
        );
        let out = Command::new("ip")
            .args(["netns", "exec", &self.clients, "python3", "-c", &script])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for name in [&self.server, &self.clients] {
            let _ = Command::new("ip").args(["netns", "del", name]).output();
        }
    }
}

/// Listens in the clients' namespace for an mDNS packet naming `_wyoming`; prints `ready` once
/// listening, then `seen <sender> <names verbatim-> <holds 10.77.0.1>` (or nothing in 20 s).
const MDNS_LISTENER: &str = "\
import socket, struct, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('', 5353))
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
             struct.pack('4s4s', socket.inet_aton('224.0.0.251'), socket.inet_aton('10.77.0.2')))
s.settimeout(0.5)
print('ready', flush=True)
end = time.time() + 20
while time.time() < end:
    try:
        data, sender = s.recvfrom(9000)
    except socket.timeout:
        continue
    if b'_wyoming' in data:
        print('seen', sender[0], b'verbatim-' in data, bytes([10, 77, 0, 1]) in data, flush=True)
        break
";

#[test]
fn beyond_loopback_only_the_allowed_networks_get_in_and_mdns_announces_it() {
    let Some(names) = Namespaces::make() else {
        return;
    };
    let mut listener = Command::new("ip")
        .args([
            "netns",
            "exec",
            &names.clients,
            "python3",
            "-c",
            MDNS_LISTENER,
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut heard = BufReader::new(listener.stdout.take().unwrap());
    let mut line = String::new();
    heard.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "ready");
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("data");
    let scenario = common::write_scenario(home.path(), SCENARIO);
    let port = 10_300;
    let child = Command::new("ip")
        .args(["netns", "exec", &names.server])
        .arg(common::binary())
        .args(["serve", "--sim", "--scenario"])
        .arg(&scenario)
        .args(["--port", "0", "--wyoming", &format!("0.0.0.0:{port}")])
        .args(["--wyoming-allow", "10.77.0.2/32"])
        .env("VERBATIM_HOME", &data)
        .env_remove("VERBATIM_API_TOKEN")
        .env_remove("RUST_LOG")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut server = SpawnedServer::adopt(child, &data);
    // Allowed: the listener answers.
    let allowed = names.describe_from("10.77.0.2", port);
    assert!(allowed.contains("\"info\""), "{allowed:?}");
    // Not allowed: closed at accept, nothing said.
    let refused = names.describe_from("10.77.0.3", port);
    assert_eq!(refused, "");
    // Announced on the namespaces' network (and nowhere else: it is theirs alone).
    line.clear();
    heard.read_line(&mut line).unwrap();
    let _ = listener.kill();
    let _ = listener.wait();
    assert_eq!(line.trim(), "seen 10.77.0.1 True True", "{line:?}");
    assert!(
        server.stderr_line_contains("refused a connection from 10.77.0.3"),
        "{}",
        server.stderr()
    );
}
