//! A private Xvfb server for the tests that need an X11 display.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// An Xvfb server of this test's own, stopped when dropped.
pub struct Xvfb {
    child: Child,
    pub display: String,
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts Xvfb on a display number it picks itself (`-displayfd`), without TCP, and waits for
/// its socket. None (with a note) when Xvfb is not installed; under `CI` that fails instead.
pub fn xvfb() -> Option<Xvfb> {
    let spawned = Command::new("Xvfb")
        .args([
            "-displayfd",
            "1",
            "-nolisten",
            "tcp",
            "-screen",
            "0",
            "640x480x24",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            if std::env::var_os("CI").is_some() {
                panic!("Xvfb is not installed: run ./scripts/test");
            }
            eprintln!("skipped: Xvfb is not installed (run ./scripts/test to install it)");
            return None;
        }
        Err(err) => panic!("cannot start Xvfb: {err}"),
    };
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let number: u32 = line
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("Xvfb did not say which display it took: {line:?}"));
    let server = Xvfb {
        child,
        display: format!(":{number}"),
    };
    let socket = format!("/tmp/.X11-unix/X{number}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !Path::new(&socket).exists() {
        assert!(Instant::now() < deadline, "{socket} never appeared");
        std::thread::sleep(Duration::from_millis(10));
    }
    Some(server)
}
