//! `GET /v1/realtime?intent=transcription` against the real binary: sessions in sim mode driven
//! by a plain WebSocket client (turns cut by voice activity detection or committed by the
//! client, every event's shape and order, refused events, history only when asked, the
//! handshake's defences, the limits), and real speech through the official `openai` Python
//! package's realtime client and a browser-like client (`websockets`, token as subprotocol).

use crate::common;

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use base64::Engine as _;
use common::{SpawnedServer, http_json, microphone_scenario, raw_http, serve_scenario};
use serde_json::{Value, json};
use tungstenite::client::IntoClientRequest;
use tungstenite::protocol::CloseFrame;
use tungstenite::{Message, WebSocket};

fn clip_path(id: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("corpus/clips/{id}.wav"))
}

/// A corpus clip's PCM16 (16 kHz mono, as stored).
fn pcm(id: &str) -> Vec<i16> {
    let mut reader = hound::WavReader::open(clip_path(id)).unwrap();
    assert_eq!(reader.spec().sample_rate, 16_000);
    reader.samples::<i16>().map(Result::unwrap).collect()
}

fn silence(seconds: f32) -> Vec<i16> {
    vec![0; (seconds * 16_000.0) as usize]
}

/// A plain WebSocket client of the realtime route.
struct Client {
    socket: WebSocket<TcpStream>,
}

impl Client {
    /// Connects to `port` with `headers` added to the handshake.
    fn connect(port: u16, headers: &[(&str, &str)]) -> Result<Client, tungstenite::Error> {
        let url = format!("ws://127.0.0.1:{port}/v1/realtime?intent=transcription");
        let mut request = url.into_client_request().unwrap();
        for (name, value) in headers {
            request.headers_mut().insert(
                axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                value.parse().unwrap(),
            );
        }
        let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let (socket, _) = tungstenite::client::client(request, stream).map_err(|e| match e {
            tungstenite::HandshakeError::Failure(e) => e,
            tungstenite::HandshakeError::Interrupted(_) => panic!("blocking handshake"),
        })?;
        Ok(Client { socket })
    }

    /// Connects and reads `session.created`.
    fn session(port: u16) -> (Client, Value) {
        let mut client = Client::connect(port, &[]).unwrap();
        let created = client.next().expect("session.created");
        assert_eq!(created["type"], "session.created", "{created}");
        (client, created)
    }

    fn send(&mut self, event: Value) {
        self.socket.send(Message::text(event.to_string())).unwrap();
    }

    /// Sends `pcm` in 100 ms appends (at 16 kHz), as fast as the socket takes them.
    fn append(&mut self, pcm: &[i16]) {
        for block in pcm.chunks(1_600) {
            let bytes: Vec<u8> = block.iter().flat_map(|s| s.to_le_bytes()).collect();
            let audio = base64::engine::general_purpose::STANDARD.encode(bytes);
            self.send(json!({"type": "input_audio_buffer.append", "audio": audio}));
        }
    }

    /// The next server event; None once the server closed (its close frame is kept).
    fn next(&mut self) -> Option<Value> {
        loop {
            match self.socket.read() {
                Ok(Message::Text(text)) => return Some(serde_json::from_str(&text).unwrap()),
                Ok(Message::Close(frame)) => {
                    return Some(json!({"type": "closed", "code": close_code(frame)}));
                }
                Ok(_) => continue,
                Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => {
                    return None;
                }
                Err(e) => panic!("reading the session: {e}"),
            }
        }
    }

    /// Events up to and including the first of type `kind`.
    fn until(&mut self, kind: &str) -> Vec<Value> {
        let mut events = Vec::new();
        while let Some(event) = self.next() {
            let done = event["type"] == kind;
            let closed = event["type"] == "closed";
            events.push(event);
            if done || closed {
                break;
            }
        }
        assert_eq!(
            events.last().map(|e| e["type"].clone()),
            Some(json!(kind)),
            "{events:#?}"
        );
        events
    }
}

fn close_code(frame: Option<CloseFrame>) -> u16 {
    frame.map_or(1005, |f| f.code.into())
}

fn sim_server(home: &Path) -> SpawnedServer {
    serve_scenario(home, &microphone_scenario("en-hello", ""))
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

const SIXTEEN_K: &str = r#"{"type": "session.update", "session": {"type": "transcription", "audio": {"input": {"format": {"type": "audio/pcm", "rate": 16000}}}}}"#;

#[test]
fn server_vad_turns_each_get_their_events_and_text_in_order() {
    let home = tempfile::tempdir().unwrap();
    let server = sim_server(home.path());
    let (mut client, created) = Client::session(server.discovery.port);
    let session = &created["session"];
    assert_eq!(session["type"], "transcription");
    assert_eq!(session["audio"]["input"]["format"]["rate"], 24_000);
    assert_eq!(
        session["audio"]["input"]["turn_detection"]["type"],
        "server_vad"
    );
    assert_eq!(
        session["audio"]["input"]["transcription"]["model"],
        "tiny.en"
    );
    client.send(serde_json::from_str(SIXTEEN_K).unwrap());
    let updated = client.until("session.updated");
    assert_eq!(
        updated[0]["session"]["audio"]["input"]["format"]["rate"],
        16_000
    );

    let clips = ["en-hello", "en-weather"];
    let mut audio = silence(0.5);
    for clip in clips {
        audio.extend(pcm(clip));
        audio.extend(silence(1.5));
    }
    client.append(&audio);
    let mut events = client.until("conversation.item.input_audio_transcription.completed");
    events.extend(client.until("conversation.item.input_audio_transcription.completed"));
    let mut previous = Value::Null;
    let committed: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "input_audio_buffer.committed")
        .collect();
    assert_eq!(committed.len(), clips.len(), "{events:#?}");
    for (clip, commit) in clips.into_iter().zip(committed) {
        let turn: Vec<&Value> = events
            .iter()
            .filter(|e| e["item_id"] == commit["item_id"])
            .collect();
        let kinds: Vec<&str> = turn.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(
            kinds,
            [
                "input_audio_buffer.speech_started",
                "input_audio_buffer.speech_stopped",
                "input_audio_buffer.committed",
                "conversation.item.input_audio_transcription.delta",
                "conversation.item.input_audio_transcription.completed",
            ],
            "{events:#?}"
        );
        let (started, stopped) = (&turn[0], &turn[1]);
        assert!(started["audio_start_ms"].as_u64() < stopped["audio_end_ms"].as_u64());
        assert_eq!(turn[2]["previous_item_id"], previous);
        previous = turn[2]["item_id"].clone();
        let completed = turn[4];
        assert_eq!(completed["content_index"], 0);
        assert_eq!(completed["transcript"], common::recorded_text(clip).trim());
        assert_eq!(turn[3]["delta"], completed["transcript"]);
        assert_eq!(completed["usage"]["type"], "duration");
    }
    for event in &events {
        assert!(
            event["event_id"].as_str().unwrap().starts_with("event_"),
            "{event}"
        );
    }
    // A stream is not a dictation: nothing was saved.
    let (_, history) = http_json(server.discovery.port, "GET", "/v1/history", None);
    assert_eq!(history["entries"], json!([]), "{history}");
}

#[test]
fn the_client_commits_turns_in_the_beta_shape_and_may_save_them_to_history() {
    let home = tempfile::tempdir().unwrap();
    let server = sim_server(home.path());
    let (mut client, _) = Client::session(server.discovery.port);
    client.send(json!({"type": "transcription_session.update", "session": {
        "input_audio_format": "pcm16",
        "input_audio_transcription": {"model": "whisper-1"},
        "turn_detection": null,
        "include": ["verbatim.history"],
    }}));
    let updated = client.until("transcription_session.updated");
    assert_eq!(updated[0]["session"]["turn_detection"], Value::Null);
    assert_eq!(
        updated[0]["session"]["input_audio_transcription"]["model"], "tiny.en",
        "any other name is the selected model"
    );
    client.send(serde_json::from_str(SIXTEEN_K).unwrap());
    client.until("session.updated");
    client.append(&pcm("en-weather"));
    client.send(json!({"type": "input_audio_buffer.commit", "event_id": "c1"}));
    let events = client.until("conversation.item.input_audio_transcription.completed");
    assert_eq!(
        types(&events),
        [
            "input_audio_buffer.committed",
            "conversation.item.input_audio_transcription.delta",
            "conversation.item.input_audio_transcription.completed",
        ],
        "no speech events without detection"
    );
    let text = common::recorded_text("en-weather");
    assert_eq!(events[2]["transcript"], text.trim());
    client.send(json!({"type": "input_audio_buffer.commit", "event_id": "c2"}));
    let error = client.until("error");
    assert_eq!(error[0]["error"]["code"], "input_audio_buffer_commit_empty");
    assert_eq!(error[0]["error"]["event_id"], "c2");
    client.append(&silence(0.5));
    client.send(json!({"type": "input_audio_buffer.clear"}));
    client.until("input_audio_buffer.cleared");
    client.send(json!({"type": "input_audio_buffer.commit"}));
    client.until("error");

    let (_, history) = http_json(server.discovery.port, "GET", "/v1/history", None);
    let entries = history["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{history}");
    assert_eq!(entries[0]["text"], text.trim());
}

#[test]
fn events_that_cannot_be_acted_on_get_an_error_and_change_nothing() {
    let home = tempfile::tempdir().unwrap();
    let server = sim_server(home.path());
    let (mut client, created) = Client::session(server.discovery.port);
    let cases = [
        (json!("not json"), "invalid_json", None),
        (json!({"type": "response.create"}), "unsupported", None),
        (json!({"type": "session.poke"}), "unknown_event", None),
        (
            json!({"type": "input_audio_buffer.append", "audio": "%%%"}),
            "invalid_value",
            Some("audio"),
        ),
        (
            json!({"type": "session.update", "session": {"type": "realtime"}}),
            "unsupported",
            Some("session.type"),
        ),
        (
            json!({"type": "session.update", "session": {"audio": {"input": {
                "format": {"type": "audio/pcm", "rate": 16000},
                "noise_reduction": {"type": "near_field"},
            }}}}),
            "unsupported",
            Some("session.audio.input.noise_reduction"),
        ),
        (
            json!({"type": "session.update", "session": {"audio": {"input": {
                "turn_detection": {"type": "server_vad", "threshold": 7},
            }}}}),
            "invalid_value",
            Some("session.audio.input.turn_detection.threshold"),
        ),
    ];
    for (event, code, param) in cases {
        let text = match &event {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        client.socket.send(Message::text(text)).unwrap();
        let error = client.until("error");
        assert_eq!(error.len(), 1, "{error:#?}");
        assert_eq!(error[0]["error"]["type"], "invalid_request_error");
        assert_eq!(error[0]["error"]["code"], code, "{event}");
        assert_eq!(error[0]["error"]["param"], json!(param), "{event}");
        assert!(!error[0]["error"]["message"].as_str().unwrap().is_empty());
    }
    client.socket.send(Message::binary(vec![0u8; 16])).unwrap();
    assert_eq!(client.until("error")[0]["error"]["code"], "invalid_event");
    // A language the engine does not know is the transcription path's own 400.
    client.send(
        json!({"type": "session.update", "session": {"audio": {"input": {
        "transcription": {"language": "xx"}}}}}),
    );
    let error = client.until("error");
    assert_eq!(error[0]["error"]["code"], "bad_request", "{error:#?}");
    // The session is as it was: the same configuration comes back from an empty update.
    client.send(json!({"type": "session.update", "session": {}}));
    let updated = client.until("session.updated");
    assert_eq!(updated[0]["session"], created["session"]);
}

#[test]
fn the_handshake_is_refused_to_web_pages_other_intents_and_missing_tokens() {
    let home = tempfile::tempdir().unwrap();
    let file = common::write_scenario(home.path(), &microphone_scenario("en-hello", ""));
    let server = SpawnedServer::start(
        &home.path().join("data"),
        &[
            "--sim",
            "--scenario",
            file.to_str().unwrap(),
            "--require-token",
        ],
    );
    let port = server.discovery.port;
    let token = server.discovery.token.clone();
    let bearer = format!("Bearer {token}");
    let status = |headers: &[(&str, &str)]| match Client::connect(port, headers) {
        Ok(_) => 101,
        Err(tungstenite::Error::Http(response)) => response.status().as_u16(),
        Err(e) => panic!("{e}"),
    };
    assert_eq!(status(&[]), 401);
    assert_eq!(status(&[("authorization", &bearer)]), 101);
    let own = format!("http://localhost:{port}");
    assert_eq!(status(&[("authorization", &bearer), ("origin", &own)]), 101);
    for foreign in [
        "https://evil.example".to_string(),
        format!("http://127.0.0.1:{}", port.wrapping_add(1)),
        "null".to_string(),
    ] {
        assert_eq!(
            status(&[("authorization", &bearer), ("origin", &foreign)]),
            403,
            "{foreign}"
        );
    }
    // A browser: the token as a subprotocol, and `realtime` chosen from the ones offered.
    let protocols = format!("realtime, openai-insecure-api-key.{token}");
    let mut request = format!("ws://127.0.0.1:{port}/v1/realtime?intent=transcription")
        .into_client_request()
        .unwrap();
    request
        .headers_mut()
        .insert("sec-websocket-protocol", protocols.parse().unwrap());
    request.headers_mut().insert("origin", own.parse().unwrap());
    let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let (_, response) = tungstenite::client::client(request, stream).unwrap();
    assert_eq!(response.headers()["sec-websocket-protocol"], "realtime");
    let wrong = "realtime, openai-insecure-api-key.wrong".to_string();
    assert_eq!(status(&[("sec-websocket-protocol", &wrong)]), 401);

    // Not a handshake, or another intent: the Error object.
    let get = |path: &str| {
        raw_http(
            port,
            &format!(
                "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: {bearer}\r\nConnection: close\r\n\r\n"
            ),
        )
    };
    let (status, _, body) = get("/v1/realtime?intent=transcription");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("WebSocket"), "{body}");
    let (status, _, body) = get("/v1/realtime?intent=conversation");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("intent=transcription"), "{body}");
}

#[test]
fn sessions_messages_and_waiting_audio_are_bounded() {
    let home = tempfile::tempdir().unwrap();
    let scenario = microphone_scenario("en-hello", "latency_seconds = 30.0");
    let server = serve_scenario(home.path(), &scenario);
    let port = server.discovery.port;
    // At most 32 sessions: the next is told and closed with 1013.
    let open: Vec<Client> = (0..32).map(|_| Client::session(port).0).collect();
    let mut refused = Client::connect(port, &[]).unwrap();
    // What it sends before it reads (20 s of appends) is read and dropped, not answered with a
    // reset: it still reads why it was closed.
    refused.append(&silence(20.0));
    let error = refused.until("error");
    assert_eq!(error[0]["error"]["code"], "session_limit_reached");
    assert_eq!(refused.until("closed")[0]["code"], 1013);
    // One that never stops sending (and never reads) is read for at most CLOSE_DRAIN, then cut.
    let mut flooding = Client::connect(port, &[]).unwrap();
    let block = base64::engine::general_purpose::STANDARD.encode(vec![0u8; 3_200]);
    let append = json!({"type": "input_audio_buffer.append", "audio": block}).to_string();
    let started = Instant::now();
    while flooding.socket.send(Message::text(append.clone())).is_ok() {
        assert!(
            started.elapsed() < verbatim::realtime::CLOSE_DRAIN + Duration::from_secs(8),
            "a closed session still reads after {:?}",
            started.elapsed()
        );
    }
    drop(open);

    // A message over 1 MiB ends the session with 1009 (once the closed sessions are gone).
    let mut client = (0..100)
        .find_map(|_| {
            let mut client = Client::connect(port, &[]).unwrap();
            let first = client.next().unwrap();
            if first["type"] == "session.created" {
                return Some(client);
            }
            std::thread::sleep(Duration::from_millis(50));
            None
        })
        .expect("closed sessions give their places back");
    let huge = "A".repeat(2 << 20);
    let _ = client.socket.send(Message::text(
        json!({"type": "input_audio_buffer.append", "audio": huge}).to_string(),
    ));
    let closed = client.until("closed");
    assert_eq!(closed.last().unwrap()["code"], 1009);

    // Speech sent far faster than the (30 s a turn) engine hears it: cut once 2 minutes wait.
    let (mut client, _) = Client::session(port);
    client.send(serde_json::from_str(SIXTEEN_K).unwrap());
    client.until("session.updated");
    let mut speech = Vec::new();
    while speech.len() < 150 * 16_000 {
        speech.extend(pcm("en-long-minutes"));
        speech.extend(silence(1.0));
    }
    client.append(&speech);
    let events = client.until("closed");
    let error = events.iter().find(|e| e["type"] == "error").unwrap();
    assert_eq!(error["error"]["code"], "falling_behind", "{events:#?}");
    assert_eq!(events.last().unwrap()["code"], 1008);
    // The server goes on serving.
    let (status, _) = http_json(port, "GET", "/v1/status", None);
    assert_eq!(status, 200);
}

/// The official `openai` package's interpreter (with `websockets`), from `scripts/test`.
fn openai_python() -> Option<PathBuf> {
    let python = std::env::var_os("VERBATIM_TEST_OPENAI_PYTHON").map(PathBuf::from);
    if python.is_none() {
        common::skip("VERBATIM_TEST_OPENAI_PYTHON is not set (the openai package's interpreter)");
    }
    python
}

/// Runs `tests/openai/realtime_session.py` against `port`: the server events with their times.
fn python_session(python: &Path, port: u16, key: &str, case: Value) -> Vec<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/openai/realtime_session.py");
    let output = Command::new(python)
        .arg(script)
        .arg(format!("ws://127.0.0.1:{port}/v1"))
        .arg(key)
        .arg(case.to_string())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(result.get("error").is_none(), "{result}");
    result["events"].as_array().unwrap().clone()
}

#[test]
fn the_openai_sdk_and_a_browser_client_transcribe_real_speech_streamed_at_real_time() {
    let (Some(python), Some(models)) = (openai_python(), common::test_models()) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let server = common::serve_model(home.path(), &models, "tiny.en", &["--require-token"]);
    let port = server.discovery.port;
    let token = server.discovery.token.clone();
    // Two recordings with a pause between them, sent at 24 kHz in real time.
    let file = home.path().join("two.wav");
    let mut audio = silence(0.3);
    for clip in ["real-goforward", "real-something"] {
        audio.extend(pcm(clip));
        audio.extend(silence(1.0));
    }
    std::fs::write(&file, common::wav_bytes(audio)).unwrap();
    let references = ["go forward ten meters", "go somewhere and do something"];

    let sdk = python_session(
        &python,
        port,
        &token,
        json!({"file": file, "rate": 24000, "speed": 1.0, "turns": 2, "client": "sdk"}),
    );
    let browser = python_session(
        &python,
        port,
        "",
        json!({"file": file, "rate": 24000, "speed": 2.0, "turns": 2, "client": "websockets",
               "bearer": false, "origin": format!("http://127.0.0.1:{port}"),
               "protocols": ["realtime", format!("openai-insecure-api-key.{token}")]}),
    );
    for (client, events) in [("sdk", &sdk), ("browser", &browser)] {
        let completed: Vec<&Value> = events
            .iter()
            .filter(|e| e["type"] == "conversation.item.input_audio_transcription.completed")
            .collect();
        assert_eq!(completed.len(), 2, "{client}: {events:#?}");
        for (event, reference) in completed.iter().zip(references) {
            let transcript = event["transcript"].as_str().unwrap();
            let wer = common::word_error_rate(reference, transcript);
            assert!(wer <= 0.25, "{client}: {transcript:?} for {reference:?}");
            let item = &event["item_id"];
            let position = |kind: &str| {
                events
                    .iter()
                    .position(|e| e["type"] == kind && &e["item_id"] == item)
            };
            let committed = position("input_audio_buffer.committed").expect("committed");
            let delta =
                position("conversation.item.input_audio_transcription.delta").expect("a delta");
            let done = position("conversation.item.input_audio_transcription.completed").unwrap();
            assert!(committed < delta && delta < done, "{client}: {events:#?}");
        }
    }
}

/// `verbatim listen` on the private PulseAudio microphone: two recordings played into it come
/// back as two lines of text; Ctrl-C ends the command once the last turn's text is in.
#[cfg(feature = "capture")]
#[test]
fn verbatim_listen_prints_what_the_microphone_hears() {
    let (Some(pulse), Some(models)) = (common::pulse::pulse(), common::test_models()) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let server = common::serve_model(home.path(), &models, "tiny.en", &[]);
    let listen = common::verbatim(home.path())
        .args(["--port", &server.discovery.port.to_string(), "listen"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    for clip in ["real-goforward", "real-something"] {
        let status = Command::new("paplay")
            .args(["--device=verbatim_sink", "--latency-msec=50"])
            .arg(clip_path(clip))
            .status()
            .unwrap();
        assert!(status.success());
        std::thread::sleep(Duration::from_millis(1_200));
    }
    // SAFETY: signals a child this test spawned.
    unsafe { libc::kill(listen.id() as i32, libc::SIGINT) };
    let output = listen.wait_with_output().unwrap();
    drop(pulse);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    let lines: Vec<&str> = stdout.lines().filter(|l| !l.trim().is_empty()).collect();
    let references = ["go forward ten meters", "go somewhere and do something"];
    assert_eq!(lines.len(), 2, "{stdout}");
    for (line, reference) in lines.iter().zip(references) {
        let wer = common::word_error_rate(reference, line);
        assert!(wer <= 0.25, "{line:?} for {reference:?}");
    }
}

/// A session whose client sends nothing, with nothing waiting, is told and closed; one that
/// keeps sending is not (here with the idle time shortened to 0.6 s).
#[tokio::test(flavor = "multi_thread")]
async fn a_silent_session_is_told_and_closed() {
    use verbatim::app::{App, Backends, Config};
    let dir = tempfile::tempdir().unwrap();
    let scenario = common::write_scenario(dir.path(), &microphone_scenario("en-hello", ""));
    let data = verbatim::discovery::DataDir::at(dir.path().join("data"));
    let mut config = Config::new(data, Backends::Simulated, false);
    config.scenario = Some(scenario);
    config.realtime_idle = Duration::from_millis(600);
    let app = App::build(config).unwrap();
    let server = common::RunningServer::start(|port| verbatim::api::router(app, port)).await;
    let port = server.port;
    let (events, quiet_for) = tokio::task::spawn_blocking(move || {
        let (mut client, _) = Client::session(port);
        for _ in 0..6 {
            std::thread::sleep(Duration::from_millis(200));
            client.append(&silence(0.1));
        }
        let last_sent = Instant::now();
        let events = client.until("closed");
        (events, last_sent.elapsed())
    })
    .await
    .unwrap();
    assert_eq!(types(&events), ["error", "closed"], "{events:#?}");
    assert_eq!(events[0]["error"]["code"], "session_idle");
    assert_eq!(events[1]["code"], 1000);
    assert!(
        quiet_for >= Duration::from_millis(550),
        "closed {quiet_for:?} after the last message"
    );
    server.stop().await;
}

/// `verbatim listen --file` in sim mode: a line per turn with the text the recording has, in
/// order, then the end; a refused option ends the command with the server's message (exit 3).
#[test]
fn verbatim_listen_streams_a_file_and_says_why_a_session_cannot_transcribe() {
    let home = tempfile::tempdir().unwrap();
    let server = sim_server(home.path());
    let file = home.path().join("two.wav");
    let mut audio = silence(0.5);
    for clip in ["en-hello", "en-weather"] {
        audio.extend(pcm(clip));
        audio.extend(silence(1.5));
    }
    std::fs::write(&file, common::wav_bytes(audio)).unwrap();
    let port = server.discovery.port.to_string();
    let listen = |extra: &[&str]| {
        common::verbatim(home.path())
            .args(["--port", &port, "listen", "--file"])
            .arg(&file)
            .args(["--speed", "0"])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = listen(&[]);
    assert!(out.status.success(), "{out:?}");
    let expected: Vec<String> = ["en-hello", "en-weather"]
        .iter()
        .map(|c| common::recorded_text(c).trim().to_string())
        .collect();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .collect::<Vec<_>>(),
        expected
    );

    let refused = listen(&["--language", "xx"]);
    assert_eq!(refused.status.code(), Some(3), "{refused:?}");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("Unknown language code 'xx'"), "{stderr}");
    assert!(refused.stdout.is_empty());
}
