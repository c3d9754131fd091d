//! A private Xvfb server for tests that need an X11 display, and xdotool to press keys on it.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// An Xvfb server of the test's own, stopped when dropped.
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

impl Xvfb {
    /// Starts Xvfb on a display number it picks itself (`-displayfd`), without TCP, and waits
    /// for its socket. None (with a note) when Xvfb or xdotool is not installed; under `CI`
    /// that fails instead.
    pub fn start() -> Option<Xvfb> {
        for tool in ["Xvfb", "xdotool"] {
            if !installed(tool) {
                super::skip(&format!("{tool} is not installed"));
                return None;
            }
        }
        let mut child = Command::new("Xvfb")
            .args(["-displayfd", "1", "-nolisten", "tcp"])
            .args(["-screen", "0", "640x480x24"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot start Xvfb");
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

    /// Presses and releases `keys` (xdotool's syntax: `ctrl+alt+space`) on this display.
    pub fn key(&self, keys: &str) {
        let status = Command::new("xdotool")
            .args(["key", keys])
            .env("DISPLAY", &self.display)
            .status()
            .unwrap();
        assert!(status.success(), "xdotool key {keys}: {status}");
    }
}

fn installed(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(tool).is_file()))
}
