//! The private PulseAudio server `scripts/test` starts for the real-capture tests, taken one
//! test at a time (every test shares its sinks).

use std::fs::File;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};

/// Exclusive use of the test server's sinks, for this process and any other test run on it.
pub struct Pulse {
    /// The server's folder (`scripts/lib/pulse.sh`).
    pub dir: PathBuf,
    _process: MutexGuard<'static, ()>,
    _runs: File,
}

/// The test sound server: `None` (skip) outside `scripts/test`, a panic under `CI`.
pub fn pulse() -> Option<Pulse> {
    static TURN: Mutex<()> = Mutex::new(());
    let Some(dir) = std::env::var_os("VERBATIM_TEST_PULSE") else {
        super::skip("no test sound server (VERBATIM_TEST_PULSE is not set)");
        return None;
    };
    let answers = Command::new("pactl")
        .arg("info")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        answers,
        "no PulseAudio server answers on PULSE_SERVER={:?}: run ./scripts/test",
        std::env::var_os("PULSE_SERVER")
    );
    let dir = PathBuf::from(dir);
    assert!(
        dir.is_dir(),
        "VERBATIM_TEST_PULSE is the test server's folder: run ./scripts/test"
    );
    let process = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let lock = dir.join("tests.lock");
    let runs = File::create(&lock).unwrap();
    // SAFETY: flock on a descriptor this File owns; released when it is closed.
    let locked = unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&runs), libc::LOCK_EX) };
    assert_eq!(locked, 0, "flock {}", lock.display());
    Some(Pulse {
        dir,
        _process: process,
        _runs: runs,
    })
}
