//! Decompression bombs against the real binary in sim mode: a FLAC of about 50 KB holding four
//! hours of silence, sent once to the end and eight times by clients that leave while it decodes.
//! The server's peak memory is read from `/proc/<pid>/status` (VmHWM).

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::probe::{cpu_ticks, peak_memory_kib};
use common::{SpawnedServer, flac, parse_response, serve_scenario};
use verbatim::audio::decode::MAX_DURATION_SECS;

/// Peak resident memory of `pid`, in MiB.
fn peak_mib(pid: i32) -> u64 {
    peak_memory_kib(pid) / 1024
}

/// Sends `flac` as a raw upload and returns the open connection.
fn send_flac(port: u16, flac: &[u8]) -> TcpStream {
    send_flac_with(port, flac, "")
}

/// [`send_flac`] with extra header lines (each ending in CRLF).
fn send_flac_with(port: u16, flac: &[u8], headers: &str) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    write!(
        stream,
        "POST /v1/transcribe HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: audio/flac\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
        flac.len()
    )
    .unwrap();
    stream.write_all(flac).unwrap();
    stream
}

/// Waits (up to a minute) until the server has used no CPU for half a second: whatever work
/// the abandoned requests left running is over.
fn wait_until_idle(pid: i32) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let mut last = cpu_ticks(pid);
    while std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(500));
        let now = cpu_ticks(pid);
        if now == last {
            return;
        }
        last = now;
    }
}

fn answer(mut stream: TcpStream) -> (u16, String) {
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let (status, _, body) = parse_response(&raw);
    (status, body)
}

/// Four hours of 16 kHz samples, as the engine takes them.
const FOUR_HOURS_MIB: u64 = MAX_DURATION_SECS * 16_000 * 4 / (1 << 20);

/// The simulated engine fails its first request at once, so the peak is the decode's own.
const ENGINE_FAILS_FIRST: &str = r#"
[engine]
selected_model = "tiny.en"
fail_requests = [1]

[models]
"tiny.en" = "present"
"#;

#[test]
fn four_hours_of_compressed_silence_cost_their_samples_once() {
    let home = tempfile::tempdir().unwrap();
    let server = serve_scenario(home.path(), ENGINE_FAILS_FIRST);
    let bomb = flac::silent_flac(MAX_DURATION_SECS, 16_000);
    assert!(bomb.len() < 64 * 1024, "{} bytes", bomb.len());
    let before = peak_mib(server.pid());

    // Without voice activity detection (which would find no speech and skip the engine): decoded
    // in full, then handed to the engine, which fails as the scenario says.
    let (status, body) = answer(send_flac_with(
        server.discovery.port,
        &bomb,
        "X-Vad: false\r\n",
    ));
    assert_eq!(
        (status, body.as_str()),
        (
            500,
            r#"{"error":{"code":"internal_error","message":"Internal error: transcription failed"}}"#
        )
    );

    let growth = peak_mib(server.pid()) - before;
    // The samples once (879 MiB), reserved from the declared length, plus a working margin;
    // a vector that doubles on its way there peaks near 1.5 GiB.
    assert!(
        growth < FOUR_HOURS_MIB + 200,
        "peak memory grew by {growth} MiB for {FOUR_HOURS_MIB} MiB of samples"
    );
}

#[test]
fn clients_that_leave_stop_their_decodes_and_free_the_engine() {
    let home = tempfile::tempdir().unwrap();
    let server = SpawnedServer::start(home.path(), &["--sim"]);
    let port = server.discovery.port;
    let bomb = flac::silent_flac(MAX_DURATION_SECS, 16_000);
    let before = peak_mib(server.pid());

    let leaving: Vec<_> = (0..8).map(|_| send_flac(port, &bomb)).collect();
    // Long enough for the uploads to be read and a decode to be under way.
    std::thread::sleep(Duration::from_millis(400));
    drop(leaving);

    // The queue and the engine slot are free again: a short clip is answered.
    let (status, body) = answer(send_flac(port, &flac::silent_flac(1, 16_000)));
    assert_eq!(status, 200, "{body}");
    wait_until_idle(server.pid());
    let growth = peak_mib(server.pid()) - before;
    println!("peak memory grew by {growth} MiB");
    // One decode at a time, each stopped at its next packet once its client is gone: far
    // below one full decode, let alone eight at once.
    assert!(
        growth < FOUR_HOURS_MIB / 2,
        "peak memory grew by {growth} MiB with eight abandoned four-hour uploads"
    );
}
