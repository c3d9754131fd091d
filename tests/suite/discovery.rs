//! The discovery file, the server lock and signals, on the real binary.

use crate::common;

use std::fs;
use std::os::unix::fs::PermissionsExt;

use common::{SpawnedServer, raw_http, verbatim, wait_for_discovery};

fn mode(path: &std::path::Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn discovery_file_is_private_complete_and_removed_on_sigterm() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let mut server = SpawnedServer::start(&home, &[]);
    let path = home.join("api-discovery.json");
    assert_eq!(mode(&home), 0o700);
    assert_eq!(mode(&path), 0o600);
    let raw: serde_json::Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    let keys: Vec<&str> = raw
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys.len(), 4, "{raw}");
    for key in ["port", "token", "version", "pid"] {
        assert!(keys.contains(&key), "{key} missing in {raw}");
    }
    assert_eq!(raw["version"], 1);
    assert_eq!(server.discovery.pid, server.child.id());
    assert_eq!(server.discovery.token.len(), 43);
    // The published port is the one that answers.
    let port = server.discovery.port;
    let (status, _, body) = raw_http(
        port,
        &format!("GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"),
    );
    assert_eq!(status, 200, "{body}");

    server.signal(libc::SIGTERM);
    let status = server.wait_exit();
    assert!(status.success(), "{status:?}");
    assert!(!path.exists(), "discovery file left behind after SIGTERM");
    let log = server.stderr();
    assert!(
        log.contains(&format!(
            "listening on http://127.0.0.1:{port} (token not required)"
        )),
        "{log}"
    );
}

#[test]
fn sigint_also_stops_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let mut server = SpawnedServer::start(tmp.path(), &["--require-token"]);
    server.signal(libc::SIGINT);
    assert!(server.wait_exit().success());
    assert!(!tmp.path().join("api-discovery.json").exists());
    assert!(server.stderr().contains("(token required)"));
}

#[test]
fn a_stale_file_from_a_killed_server_is_replaced_and_the_token_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let mut first = SpawnedServer::start(home, &[]);
    let stale = first.discovery.clone();
    first.signal(libc::SIGKILL);
    first.wait_exit();
    assert!(
        home.join("api-discovery.json").exists(),
        "kill -9 cannot clean up"
    );

    let second = SpawnedServer::start(home, &[]);
    assert_ne!(second.discovery.pid, stale.pid);
    assert_eq!(
        second.discovery.token, stale.token,
        "the token persists across restarts"
    );
    let port = second.discovery.port;
    let (status, _, _) = raw_http(
        port,
        &format!("GET /v1/status HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n"),
    );
    assert_eq!(status, 200);
}

#[test]
fn a_second_server_on_the_same_folder_is_refused_and_leaves_the_first_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let first = SpawnedServer::start(tmp.path(), &[]);
    let output = verbatim(tmp.path())
        .args(["serve", "--port", "0"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("already running"), "{stderr}");
    assert!(
        stderr.contains(&format!("pid {}", first.discovery.pid)),
        "{stderr}"
    );
    assert_eq!(
        wait_for_discovery(tmp.path(), first.child.id()),
        first.discovery
    );
}

#[test]
fn a_planted_symlink_is_replaced_not_written_through() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    fs::create_dir(&home).unwrap();
    fs::set_permissions(&home, fs::Permissions::from_mode(0o700)).unwrap();
    let victim = tmp.path().join("victim.txt");
    fs::write(&victim, "precious").unwrap();
    std::os::unix::fs::symlink(&victim, home.join("api-discovery.json")).unwrap();

    let server = SpawnedServer::start(&home, &[]);
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
    let meta = fs::symlink_metadata(home.join("api-discovery.json")).unwrap();
    assert!(meta.file_type().is_file(), "still a symlink");
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(server.discovery.pid, server.child.id());
}

#[test]
fn token_rotation_reaches_the_running_server_and_its_discovery_file() {
    let tmp = tempfile::tempdir().unwrap();
    let server = SpawnedServer::start(tmp.path(), &["--require-token"]);
    let old = server.discovery.token.clone();
    let out = verbatim(tmp.path())
        .args(["token", "rotate"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let new = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert_ne!(new, old);
    let published = wait_for_discovery(tmp.path(), server.child.id());
    assert_eq!(published.token, new);
    let port = server.discovery.port;
    let ask = |token: &str| {
        raw_http(port, &format!(
            "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
        )).0
    };
    assert_eq!(ask(&old), 401);
    assert_eq!(ask(&new), 200);
}
