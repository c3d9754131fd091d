//! Slow and numerous clients against the real binary in sim mode, over raw sockets: a trickled
//! body is cut off with 408, an idle keep-alive connection is closed, the open file limit is
//! raised at start, and the connection cap keeps a flood of slow connections (heads never
//! finished, uploads that stall after their head) from locking out a new client or exhausting
//! the server's file descriptors.

use crate::common;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{SpawnedServer, parse_response};
use verbatim::api::ApiError;
use verbatim::server::MAX_CONNECTIONS;
use verbatim::server::descriptors::connection_cap;

/// `verbatim serve --sim` whose open file limit starts at `soft` / `hard`.
fn serve_with_file_limit(home: &std::path::Path, soft: u64, hard: u64) -> SpawnedServer {
    let mut command = common::with_file_limit(common::verbatim(home), soft, hard);
    command
        .args(["serve", "--port", "0", "--sim"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    SpawnedServer::adopt(command.spawn().unwrap(), home)
}

fn open_files(pid: i32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

/// Whether the server has closed `stream` (nothing is ever sent to these connections).
fn closed_by_server(stream: &TcpStream) -> bool {
    peeked(stream).is_some_and(|n| n == 0)
}

/// Whether the server has answered or closed `stream`.
fn answered(stream: &TcpStream) -> bool {
    peeked(stream).is_some()
}

/// What a non-blocking peek sees: Some(0) closed, Some(n) bytes waiting, None nothing yet.
fn peeked(stream: &TcpStream) -> Option<usize> {
    stream.set_nonblocking(true).unwrap();
    let mut byte = [0u8; 1];
    let seen = match stream.peek(&mut byte) {
        Ok(n) => Some(n),
        Err(e) if e.kind() == ErrorKind::WouldBlock => None,
        Err(_) => Some(0),
    };
    stream.set_nonblocking(false).unwrap();
    seen
}

fn connect(port: u16) -> TcpStream {
    TcpStream::connect(("127.0.0.1", port)).unwrap()
}

/// `GET /v1/status` on a new connection; the status and how long the answer took.
fn status_from_a_new_client(port: u16) -> (u16, Duration) {
    let started = Instant::now();
    let mut stream = connect(port);
    stream
        .set_read_timeout(Some(Duration::from_secs(40)))
        .unwrap();
    write!(
        stream,
        "GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    (parse_response(&raw).0, started.elapsed())
}

/// `count` connections that each send the start of a request head and never finish it.
fn half_sent_requests(port: u16, count: usize) -> Vec<TcpStream> {
    (0..count)
        .map(|_| {
            let mut stream = connect(port);
            write!(
                stream,
                "GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            )
            .unwrap();
            stream
        })
        .collect()
}

/// A request head for a 100-byte JSON body, whose body is then sent one byte at a time.
fn trickled_put_head(port: u16) -> String {
    format!(
        "PUT /v1/dictionary/terms HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    )
}

#[test]
fn a_body_trickled_at_one_byte_every_two_seconds_is_cut_off_with_408() {
    let home = tempfile::tempdir().unwrap();
    let server = SpawnedServer::start(home.path(), &["--sim"]);
    let port = server.discovery.port;
    let mut stream = connect(port);
    stream
        .set_read_timeout(Some(Duration::from_secs(40)))
        .unwrap();
    let started = Instant::now();
    stream
        .write_all(trickled_put_head(port).as_bytes())
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    let trickler = std::thread::spawn(move || {
        for byte in br#"{"terms":["slow"#.iter().cycle() {
            if writer.write_all(&[*byte]).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_secs(2));
        }
    });
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let took = started.elapsed();
    let (status, _, body) = parse_response(&raw);
    println!("cut off after {took:?}");
    assert_eq!(status, 408, "{}", String::from_utf8_lossy(&raw));
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        body,
        serde_json::to_value(ApiError::BodyTooSlow.body()).unwrap()
    );
    assert!(
        took >= Duration::from_secs(9) && took < Duration::from_secs(30),
        "cut off after {took:?}"
    );
    // read_to_end returned: the server closed the connection after answering.
    drop(stream);
    trickler.join().unwrap();
}

#[test]
fn an_idle_keep_alive_connection_is_closed_after_the_header_timeout() {
    let home = tempfile::tempdir().unwrap();
    let server = SpawnedServer::start(home.path(), &["--sim"]);
    let port = server.discovery.port;
    let mut stream = connect(port);
    stream
        .set_read_timeout(Some(Duration::from_secs(40)))
        .unwrap();
    write!(
        stream,
        "GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
    )
    .unwrap();
    let mut answer = [0u8; 4096];
    let n = stream.read(&mut answer).unwrap();
    assert_eq!(parse_response(&answer[..n]).0, 200);
    let idle = Instant::now();
    let mut rest = Vec::new();
    let _ = stream.read_to_end(&mut rest);
    let took = idle.elapsed();
    println!("idle keep-alive connection closed after {took:?}");
    assert!(
        took >= Duration::from_secs(5) && took < Duration::from_secs(25),
        "closed after {took:?}"
    );
}

#[test]
fn the_open_file_limit_is_raised_to_the_hard_limit_at_start() {
    let home = tempfile::tempdir().unwrap();
    let server = serve_with_file_limit(home.path(), 256, 4096);
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", server.pid())).unwrap();
    let open_files = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let numbers: Vec<&str> = open_files.split_whitespace().skip(3).take(2).collect();
    assert_eq!(numbers, ["4096", "4096"], "{open_files}");
}

/// 1100 connections that never finish their request head, against a server whose open file
/// limit is the usual 1024: the cap holds the server's descriptors, and a new client is answered
/// at once, long before the header timeout would free anything.
#[test]
fn a_flood_of_half_sent_requests_neither_exhausts_descriptors_nor_locks_out_a_new_client() {
    let home = tempfile::tempdir().unwrap();
    let server = serve_with_file_limit(home.path(), 1024, 1024);
    let port = server.discovery.port;
    let before = open_files(server.pid());
    let started = Instant::now();
    let slow = half_sent_requests(port, 1100);

    let (status, took) = status_from_a_new_client(port);
    assert_eq!(status, 200);
    assert!(took < Duration::from_secs(5), "answered after {took:?}");
    let held = open_files(server.pid()) - before;
    let closed = slow.iter().filter(|s| closed_by_server(s)).count();
    println!(
        "new client answered in {took:?}; server holds {held} more descriptors; {closed} of 1100 slow connections closed after {:?}",
        started.elapsed()
    );
    // Before the header timeout (10 s), only the cap can have closed connections.
    assert!(started.elapsed() < Duration::from_secs(9));
    assert!(held <= MAX_CONNECTIONS + 4, "{held} descriptors");
    assert!(closed >= 1100 - MAX_CONNECTIONS, "{closed} closed");
}

/// An open file limit of 256 that cannot be raised: the cap shrinks to what fits beside the
/// server's own files, so 300 connections that never finish their head neither exhaust its
/// descriptors nor keep a new client from `/v1/status`.
#[test]
fn under_a_low_open_file_limit_the_cap_leaves_room_for_the_servers_own_files() {
    let home = tempfile::tempdir().unwrap();
    let mut server = serve_with_file_limit(home.path(), 256, 256);
    let port = server.discovery.port;
    let cap = connection_cap(Some(256));
    assert!(cap < MAX_CONNECTIONS);
    let before = open_files(server.pid());
    let slow = half_sent_requests(port, 300);

    for _ in 0..3 {
        let (status, took) = status_from_a_new_client(port);
        assert_eq!(status, 200);
        assert!(took < Duration::from_secs(5), "answered after {took:?}");
    }
    let held = open_files(server.pid()) - before;
    let closed = slow.iter().filter(|s| closed_by_server(s)).count();
    println!("cap {cap}: server holds {held} more descriptors; {closed} of 300 closed");
    assert!(held <= cap + 4, "{held} descriptors");
    assert!(closed >= 300 - cap, "{closed} closed");
    drop(slow);
    server.signal(libc::SIGTERM);
    server.wait_exit();
    assert!(
        server
            .stderr()
            .contains(&format!("at most {cap} connections")),
        "the log does not say the cap"
    );
}

/// Every slot held by a request whose body trickles in: a new client waits, and is answered
/// once those bodies miss their deadline (408) and free their slots.
#[test]
fn slots_held_by_trickled_bodies_come_free_for_a_new_client() {
    let home = tempfile::tempdir().unwrap();
    let server = SpawnedServer::start(home.path(), &["--sim"]);
    let port = server.discovery.port;
    let count = MAX_CONNECTIONS + 44;
    let mut slow: Vec<TcpStream> = (0..count)
        .map(|_| {
            let mut stream = connect(port);
            stream
                .write_all(trickled_put_head(port).as_bytes())
                .unwrap();
            stream
        })
        .collect();
    let writers: Vec<TcpStream> = slow.iter().map(|s| s.try_clone().unwrap()).collect();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let trickler = std::thread::spawn({
        let stop = stop.clone();
        move || {
            let mut writers = writers;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                // Writing to a connection the server has answered and closed would reset it
                // and could discard the answer before it is read.
                writers.retain(|w| !answered(w));
                for writer in &mut writers {
                    let _ = writer.write_all(b" ");
                }
                // Well within the half second a body may send nothing before its connection can
                // be closed to make room: these bodies keep coming, only too slowly.
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    });

    let (status, took) = status_from_a_new_client(port);
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    trickler.join().unwrap();
    println!("new client answered after {took:?}");
    assert_eq!(status, 200);
    assert!(took < Duration::from_secs(30), "answered after {took:?}");
    // The connections that held slots were answered 408 (within a few seconds of each other:
    // their heads were read over a moment).
    std::thread::sleep(Duration::from_secs(3));
    let mut timed_out = 0;
    for stream in &mut slow {
        stream
            .set_read_timeout(Some(Duration::from_millis(10)))
            .unwrap();
        let mut answer = [0u8; 512];
        if let Ok(n) = stream.read(&mut answer)
            && parse_response(&answer[..n]).0 == 408
        {
            timed_out += 1;
        }
    }
    println!("{timed_out} of {count} trickled bodies answered 408");
    assert!(
        timed_out >= MAX_CONNECTIONS - 16,
        "{timed_out} answered 408"
    );
}

/// `count` uploads that send their head (a 1 MB WAV announced) and then nothing.
fn stalled_uploads(port: u16, count: usize) -> Vec<TcpStream> {
    (0..count)
        .map(|_| {
            let mut stream = connect(port);
            write!(
                stream,
                "POST /v1/transcribe HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: audio/wav\r\nContent-Length: 1000000\r\n\r\n"
            )
            .unwrap();
            stream
        })
        .collect()
}

/// Uploads a minute of WAV (1.9 MB) at a steady 256 KiB/s (16 KiB every 62 ms, about 7 s, as
/// a program reading a recording would) and returns the answer's status.
fn steady_upload(port: u16) -> u16 {
    let wav = common::wav_bytes((0..60 * 16_000).map(|i| ((i % 160) as i16 - 80) * 40));
    let mut stream = connect(port);
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    write!(
        stream,
        "POST /v1/transcribe HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: audio/wav\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        wav.len()
    )
    .unwrap();
    for piece in wav.chunks(16 * 1024) {
        if stream.write_all(piece).is_err() {
            break;
        }
        std::thread::sleep(Duration::from_millis(62));
    }
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    parse_response(&raw).0
}

/// 300 uploads that send their head and stall, at hard open file limits of 256, 1,024 and
/// 4,096 (caps of 96, 256 and 256 connections): each connection stalled past the grace is
/// closed to make room, so `/v1/status` from new clients stays quick (p99 under 100 ms) long
/// before any body deadline, and an upload sending at a normal rate all along is never the
/// one closed.
#[test]
fn uploads_that_stall_after_their_head_yield_their_slots_to_new_clients() {
    for limit in [256, 1024, 4096] {
        let home = tempfile::tempdir().unwrap();
        let server = serve_with_file_limit(home.path(), limit, limit);
        let port = server.discovery.port;
        let cap = connection_cap(Some(limit));
        let steady = std::thread::spawn(move || steady_upload(port));
        std::thread::sleep(Duration::from_millis(200));
        let flooded = Instant::now();
        let stalled = stalled_uploads(port, 300);
        let (status, first) = status_from_a_new_client(port);
        assert_eq!(status, 200);
        // Every stalled upload the cap leaves no room for has been taken in and closed.
        let deadline = flooded + Duration::from_secs(8);
        while stalled.iter().filter(|s| closed_by_server(s)).count() < 300 - cap {
            assert!(
                Instant::now() < deadline,
                "limit {limit}: the backlog was not taken in ({} of 300 closed)",
                stalled.iter().filter(|s| closed_by_server(s)).count()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let settled = flooded.elapsed();
        let mut took: Vec<Duration> = (0..100)
            .map(|_| {
                let (status, took) = status_from_a_new_client(port);
                assert_eq!(status, 200);
                took
            })
            .collect();
        // Before the body deadline (10 s) only the cap can have freed anything.
        assert!(
            flooded.elapsed() < Duration::from_secs(9),
            "{:?}",
            flooded.elapsed()
        );
        took.sort();
        let (median, p99, max) = (took[49], took[98], took[99]);
        let closed = stalled.iter().filter(|s| closed_by_server(s)).count();
        println!(
            "limit {limit}, cap {cap}: first /v1/status after {first:?}, backlog taken in after {settled:?}; then median {median:?}, p99 {p99:?}, max {max:?}; {closed} of 300 stalled uploads closed"
        );
        assert!(
            p99 < Duration::from_millis(100),
            "limit {limit}: p99 {p99:?}"
        );
        assert_eq!(
            steady.join().unwrap(),
            200,
            "limit {limit}: the steady upload"
        );
        drop(stalled);
    }
}
