//! Load test of the real server (`verbatim serve --sim`, release build) on a history of
//! 100,000 entries: concurrent clients mix transcription uploads, history searches (some of
//! them hostile: kilobytes of distinct words) and `/v1/status` polls for a fixed time.
//! Reports throughput per kind, `/v1/status` latency percentiles (target: p99 under 50 ms) and
//! the server's peak memory. Not a timed test: run it with `cargo bench --bench load`
//! (`-- --clients N --seconds S` to change the mix's size).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const HISTORY: usize = 100_000;

/// What one kind of client did.
#[derive(Default, Clone)]
struct Tally {
    ok: u64,
    refused: u64,
    latencies: Vec<Duration>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Upload,
    Search,
    HostileSearch,
    Status,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Upload => "transcription (local-file, corpus clip en-apples)",
            Kind::Search => "history search",
            Kind::HostileSearch => "hostile search (6 KB, 1,000 words)",
            Kind::Status => "GET /v1/status",
        }
    }
}

struct Server {
    child: Child,
    port: u16,
    _home: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server() -> Server {
    let home = tempfile::tempdir().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_verbatim"))
        .env("VERBATIM_HOME", home.path())
        .args(["serve", "--sim", "--port", "0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let discovery = home.path().join("api-discovery.json");
    let deadline = Instant::now() + Duration::from_secs(30);
    let port = loop {
        if let Ok(text) = std::fs::read_to_string(&discovery)
            && let Ok(found) = serde_json::from_str::<serde_json::Value>(&text)
            && found["pid"] == child.id()
        {
            break found["port"].as_u64().unwrap() as u16;
        }
        assert!(Instant::now() < deadline, "the server did not start");
        std::thread::sleep(Duration::from_millis(20));
    };
    Server {
        child,
        port,
        _home: home,
    }
}

/// One request on a fresh connection: the status, or `None` when the connection failed.
fn request(port: u16, method: &str, path: &str, body: &str) -> Option<u16> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .ok()?;
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .ok()?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).ok()?;
    let head = String::from_utf8_lossy(&raw[..raw.len().min(32)]).to_string();
    head.split_whitespace().nth(1)?.parse().ok()
}

/// A backup of `HISTORY` entries of made-up words, imported before the run.
fn fill_history(port: u16) {
    let words = [
        "café", "meeting", "budget", "réunion", "draft", "kernel", "zebra", "quartz",
    ];
    let history: Vec<serde_json::Value> = (0..HISTORY)
        .map(|i| {
            let text: Vec<String> = (0..12)
                .map(|k| {
                    format!(
                        "{}{}",
                        words[(i * 7 + k * 3) % words.len()],
                        (i * 31 + k) % 997
                    )
                })
                .collect();
            serde_json::json!({
                "id": uuid::Uuid::new_v4().to_string(),
                "text": text.join(" "), "rawText": text.join(" "),
                "timestamp": "2026-05-01T10:00:00Z", "duration": 2.0,
                "engine": "whisper", "wordsCount": 12
            })
        })
        .collect();
    let backup = serde_json::json!({"schemaVersion": 1, "history": history}).to_string();
    assert_eq!(
        request(port, "POST", "/v1/settings/import", &backup),
        Some(200),
        "history import"
    );
}

fn hostile_query() -> String {
    let words: Vec<String> = (0..1000).map(|i| format!("w{i:04}")).collect();
    format!("/v1/history?q={}", words.join("+"))
}

fn clip() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/clips/en-apples.wav")
}

fn client(port: u16, kind: Kind, stop: &AtomicBool, seed: usize) -> Tally {
    let mut tally = Tally::default();
    let upload = serde_json::json!({"path": clip()}).to_string();
    let hostile = hostile_query();
    let mut n = seed;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let started = Instant::now();
        let status = match kind {
            Kind::Upload => request(port, "POST", "/v1/transcribe/local-file", &upload),
            Kind::Search => {
                let q = format!("/v1/history?q=café{}&limit=20", n % 997);
                request(port, "GET", &q, "")
            }
            Kind::HostileSearch => request(port, "GET", &hostile, ""),
            Kind::Status => request(port, "GET", "/v1/status", ""),
        };
        tally.latencies.push(started.elapsed());
        match status {
            Some(200) => tally.ok += 1,
            _ => tally.refused += 1,
        }
        if kind == Kind::Status {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    tally
}

fn peak_rss_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0)
        / 1024
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this once, quickly.
    let quick = !std::env::args().any(|a| a == "--bench");
    let clients = arg("--clients", 16) as usize;
    let seconds = arg("--seconds", if quick { 2 } else { 30 });
    let server = start_server();
    let port = server.port;
    let filled = Instant::now();
    fill_history(port);
    println!(
        "imported {HISTORY} history entries in {:?}",
        filled.elapsed()
    );
    let rss_before = peak_rss_mib(server.child.id());

    // A quarter uploads, an eighth searches, an eighth hostile searches, half status polls.
    let kinds: Vec<Kind> = (0..clients)
        .map(|i| match i % 8 {
            0 | 1 => Kind::Upload,
            2 => Kind::Search,
            3 => Kind::HostileSearch,
            _ => Kind::Status,
        })
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let results = Arc::new(Mutex::new(Vec::new()));
    let threads: Vec<_> = kinds
        .iter()
        .enumerate()
        .map(|(i, &kind)| {
            let (stop, results) = (stop.clone(), results.clone());
            std::thread::spawn(move || {
                let tally = client(port, kind, &stop, i * 1000);
                results.lock().unwrap().push((kind, tally));
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(seconds));
    stop.store(true, Ordering::Relaxed);
    for thread in threads {
        thread.join().unwrap();
    }
    let peak = peak_rss_mib(server.child.id());

    println!(
        "\n{clients} clients for {seconds} s against `serve --sim` on {HISTORY} history entries"
    );
    println!("| requests | answered 200 | other | per second | p50 | p99 | max |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let results = results.lock().unwrap();
    let mut status_p99 = Duration::ZERO;
    for kind in [
        Kind::Upload,
        Kind::Search,
        Kind::HostileSearch,
        Kind::Status,
    ] {
        let mut all = Tally::default();
        for (_, tally) in results.iter().filter(|(k, _)| *k == kind) {
            all.ok += tally.ok;
            all.refused += tally.refused;
            all.latencies.extend(&tally.latencies);
        }
        all.latencies.sort();
        let p99 = percentile(&all.latencies, 0.99);
        if kind == Kind::Status {
            status_p99 = p99;
        }
        println!(
            "| {} | {} | {} | {:.1} | {:.1} ms | {:.1} ms | {:.1} ms |",
            kind.name(),
            all.ok,
            all.refused,
            (all.ok + all.refused) as f64 / seconds as f64,
            percentile(&all.latencies, 0.5).as_secs_f64() * 1e3,
            p99.as_secs_f64() * 1e3,
            all.latencies
                .last()
                .copied()
                .unwrap_or_default()
                .as_secs_f64()
                * 1e3,
        );
    }
    println!("\npeak server memory: {peak} MiB ({rss_before} MiB after the history import)");
    let verdict = if status_p99 < Duration::from_millis(50) {
        "met"
    } else {
        "MISSED"
    };
    println!(
        "/v1/status p99 {:.1} ms: target (< 50 ms) {verdict}",
        status_p99.as_secs_f64() * 1e3
    );
}
