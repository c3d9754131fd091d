//! Crash consistency of every kind of write: the real `verbatim serve --sim` is killed with
//! SIGKILL at a random moment during a stream of writes (dictionary terms, corrections,
//! transcriptions saved to history, settings imports), 200 times on one data folder. After
//! each kill: `PRAGMA integrity_check` is ok, the discovery file is whole, and once the server
//! is back every write it acknowledged is there.

use crate::common;

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::SpawnedServer;
use common::probe::Random;
use rusqlite::{Connection, OpenFlags};
use serde_json::{Value, json};
use verbatim::discovery::Discovery;

const RUNS: usize = 200;

/// The simulated engine answers at once, so transcriptions land between the kills too.
const SCENARIO: &str = r#"
[engine]
selected_model = "tiny.en"
latency_seconds = 0.0

[models]
"tiny.en" = "present"
"#;

/// The writes the server answered 200 to.
#[derive(Default)]
struct Acknowledged {
    terms: Vec<String>,
    corrections: Vec<String>,
    imported_terms: Vec<String>,
    imported_history: Vec<String>,
    transcriptions: u64,
    /// Every history write sent, answered or not (an unanswered one may have landed).
    history_attempts: u64,
}

/// One request on a fresh connection; `None` when the server died before answering in full.
fn try_http(port: u16, method: &str, path: &str, body: Option<&Value>) -> Option<(u16, Value)> {
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .ok()?;
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .ok()?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).ok()?;
    let (status, _, text) = common::parse_response(&raw);
    let value = serde_json::from_str(&text).ok()?;
    Some((status, value))
}

fn get(port: u16, path: &str) -> Value {
    let (status, body) = try_http(port, "GET", path, None).expect("the server answers");
    assert_eq!(status, 200, "{path}: {body}");
    body
}

fn clip() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/clips/en-apples.wav")
}

/// A backup holding one term and one history entry, both named by `tag`.
fn backup(tag: &str) -> Value {
    json!({
        "schemaVersion": 1,
        "dictionaryEntries": [{"type": "term", "term": tag, "isEnabled": true}],
        "history": [{
            "id": uuid::Uuid::new_v4().to_string(),
            "text": tag, "rawText": tag,
            "timestamp": "2026-05-01T10:00:00Z",
            "duration": 1.0, "engine": "whisper", "wordsCount": 1
        }]
    })
}

/// Sends writes of every kind until `stop`, or until the server stops answering.
fn write_until_killed(port: u16, run: usize, acked: &Mutex<Acknowledged>, stop: &AtomicBool) {
    // Each run starts with another kind of write, so every kind is cut off now and then.
    for n in run.. {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let tag = format!("r{run}w{n}");
        let (path, body) = match n % 4 {
            0 => ("/v1/dictionary/terms", json!({"terms": [tag]})),
            1 => (
                "/v1/dictionary/corrections",
                json!({"original": tag, "replacement": "done"}),
            ),
            2 => ("/v1/transcribe/local-file", json!({"path": clip()})),
            _ => ("/v1/settings/import", backup(&tag)),
        };
        let method = if n % 4 < 2 { "PUT" } else { "POST" };
        if n % 4 >= 2 {
            acked.lock().unwrap().history_attempts += 1;
        }
        let Some((status, answer)) = try_http(port, method, path, Some(&body)) else {
            return; // killed before it answered: this write is not acknowledged
        };
        assert_eq!(status, 200, "{path}: {answer}");
        let mut acked = acked.lock().unwrap();
        match n % 4 {
            0 => acked.terms.push(tag),
            1 => acked.corrections.push(tag),
            2 => acked.transcriptions += 1,
            _ => {
                acked.imported_terms.push(tag.clone());
                acked.imported_history.push(tag);
            }
        }
    }
}

/// SQLite's own check of the file the killed server left.
fn assert_database_intact(home: &Path) {
    let conn = Connection::open_with_flags(
        home.join("verbatim.sqlite3"),
        OpenFlags::SQLITE_OPEN_READ_WRITE,
    )
    .unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}

/// The discovery file is absent or whole (it is replaced atomically), naming the killed server.
fn assert_discovery_sane(home: &Path, pid: u32) {
    let Ok(text) = std::fs::read_to_string(home.join("api-discovery.json")) else {
        return;
    };
    let found: Discovery = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("a torn discovery file ({e}): {text:?}"));
    assert_eq!(found.pid, pid);
}

/// Every acknowledged write is there, read back through the API.
fn assert_all_present(port: u16, acked: &Acknowledged) {
    let terms = get(port, "/v1/dictionary/terms");
    let terms: HashSet<&str> = terms["terms"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for term in acked.terms.iter().chain(&acked.imported_terms) {
        assert!(terms.contains(&term.as_str()), "term {term} was lost");
    }
    let corrections = get(port, "/v1/dictionary/corrections");
    let originals: HashSet<&str> = corrections["corrections"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["original"].as_str())
        .collect();
    for original in &acked.corrections {
        assert!(
            originals.contains(&original.as_str()),
            "correction {original} was lost"
        );
    }
    let history = get(port, "/v1/history?limit=1");
    let total = history["total"].as_u64().unwrap();
    let answered = acked.transcriptions + acked.imported_history.len() as u64;
    assert!(
        (answered..=acked.history_attempts).contains(&total),
        "{total} history entries for {answered} acknowledged of {} sent",
        acked.history_attempts
    );
    // The last imported entry, by its text.
    if let Some(tag) = acked.imported_history.last() {
        let found = get(port, &format!("/v1/history?q={tag}"));
        assert_eq!(found["total"], 1, "history entry {tag} was lost");
    }
}

#[test]
fn acknowledged_writes_survive_two_hundred_kills() {
    let home = tempfile::tempdir().unwrap();
    let set = common::verbatim(home.path())
        .args(["config", "set", "saveApiTranscriptionsToHistory", "true"])
        .output()
        .unwrap();
    assert!(set.status.success(), "{set:?}");
    let mut random = Random::from_clock();
    // The engine knows the one clip the writes transcribe: 200 starts read and index one clip.
    let corpus = tempfile::tempdir().unwrap();
    let clip_alone = common::one_clip_corpus(corpus.path(), "en-apples");
    let scenario = common::write_scenario_on(corpus.path(), SCENARIO, &clip_alone);
    let args = ["--sim", "--scenario", scenario.to_str().unwrap()];
    let acked = Arc::new(Mutex::new(Acknowledged::default()));
    for run in 0..RUNS {
        let mut server = SpawnedServer::start(home.path(), &args);
        let port = server.discovery.port;
        assert_all_present(port, &acked.lock().unwrap());
        let stop = Arc::new(AtomicBool::new(false));
        let writer = {
            let (acked, stop) = (acked.clone(), stop.clone());
            std::thread::spawn(move || write_until_killed(port, run, &acked, &stop))
        };
        std::thread::sleep(Duration::from_millis(random.below(150)));
        server.signal(libc::SIGKILL);
        server.wait_exit();
        stop.store(true, Ordering::SeqCst);
        writer.join().unwrap();
        assert_database_intact(home.path());
        assert_discovery_sane(home.path(), server.child.id());
    }
    let server = SpawnedServer::start(home.path(), &args);
    let acked = acked.lock().unwrap();
    assert_all_present(server.discovery.port, &acked);
    println!(
        "{} terms, {} corrections, {} transcriptions, {} imports acknowledged",
        acked.terms.len(),
        acked.corrections.len(),
        acked.transcriptions,
        acked.imported_terms.len()
    );
    assert!(
        [
            acked.terms.len(),
            acked.corrections.len(),
            acked.transcriptions as usize,
            acked.imported_terms.len()
        ]
        .iter()
        .all(|n| *n > RUNS / 4),
        "too few writes landed between the kills to prove anything"
    );
}
