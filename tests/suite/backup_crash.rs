//! Crash safety of the import: the real `verbatim serve` imports a large backup and is killed
//! with SIGKILL at random moments; every time, the database passes its integrity checks and
//! holds either none or all of the backup.

use crate::common;

use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use common::probe::Random;
use common::{SpawnedServer, sample_backup};
use rusqlite::Connection;

const HISTORY: usize = 12_000;
const RUNS: usize = 24;

/// Sends the import request from a thread; joining it gives the raw answer (empty when the
/// server died first).
fn send_import(port: u16, body: &'static [u8]) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut answer = Vec::new();
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
            return answer;
        };
        let head = format!(
            "POST /v1/settings/import HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let _ = stream.write_all(head.as_bytes());
        let _ = stream.write_all(body);
        let _ = std::io::Read::read_to_end(&mut stream, &mut answer);
        answer
    })
}

/// Rows per table after a crash; panics unless SQLite and the search index are intact.
fn counts(home: &Path) -> [i64; 6] {
    let conn = Connection::open(home.join("verbatim.sqlite3")).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    conn.execute(
        "INSERT INTO history_fts (history_fts) VALUES ('integrity-check')",
        [],
    )
    .expect("the search index matches the history");
    let count = |table: &str| -> i64 {
        conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .unwrap()
    };
    [
        count("history"),
        count("workflows"),
        count("dictionary_terms") + count("dictionary_corrections"),
        count("snippets") + count("prompt_actions") + count("profiles"),
        count("hotkeys"),
        count("preferences"),
    ]
}

#[test]
fn a_killed_import_leaves_none_or_all_of_the_backup() {
    let body: &'static [u8] = Box::leak(
        sample_backup(HISTORY)
            .to_string()
            .into_bytes()
            .into_boxed_slice(),
    );
    let empty = [0, 0, 0, 0, 0, 0];
    // Preferences: the update channel; the backup's 365-day retention would shorten this
    // store's keep-forever window, so an import never applies it.
    let full = [HISTORY as i64, 2, 3, 3, 2, 1];

    // One undisturbed import tells how long the whole thing takes.
    let calibration = tempfile::tempdir().unwrap();
    let server = SpawnedServer::start(calibration.path(), &[]);
    let started = Instant::now();
    let answer = send_import(server.discovery.port, body).join().unwrap();
    let full_time = started.elapsed();
    assert_eq!(
        common::parse_response(&answer).0,
        200,
        "{}",
        String::from_utf8_lossy(&answer)
    );
    drop(server);
    assert_eq!(
        counts(calibration.path()),
        full,
        "an undisturbed import stores everything"
    );

    println!("full import {full_time:?}");
    let mut random = Random::from_clock();
    let seed = random.0;
    // Mostly while the import runs (parsing, then the write transaction).
    let window = full_time.as_micros() as u64 * 12 / 10;
    let floor = full_time.as_micros() as u64 / 4;
    let (mut none, mut all) = (0, 0);
    let suite = Instant::now();
    for run in 0..RUNS {
        // The first run dies before the request is handled, the last after it is done.
        let delay = match run {
            0 => Duration::ZERO,
            r if r == RUNS - 1 => full_time * 2,
            _ => Duration::from_micros(floor + random.below(window - floor)),
        };
        let home = tempfile::tempdir().unwrap();
        let mut server = SpawnedServer::start(home.path(), &[]);
        let sender = send_import(server.discovery.port, body);
        std::thread::sleep(delay);
        server.signal(libc::SIGKILL);
        server.wait_exit();
        sender.join().unwrap();
        let found = counts(home.path());
        println!("run {run}: killed after {delay:?}: {found:?}");
        if found == empty {
            none += 1;
        } else if found == full {
            all += 1;
        } else {
            panic!(
                "run {run} (seed {seed}, killed after {delay:?}) left a partial import: {found:?}"
            );
        }
    }
    println!(
        "{none} runs kept nothing, {all} kept everything, in {:?}",
        suite.elapsed()
    );
    assert!(none >= 1 && all >= 1);
}
