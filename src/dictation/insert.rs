//! Where dictated text goes: nowhere, the system clipboard, keystrokes into the focused window, or
//! (in sim mode) a record that tests can read. The desktop backends run the usual command-line
//! tools (xclip/xsel, wl-copy, xdotool, wtype) with the text on stdin or as one argument, never
//! through a shell, and give up on a tool that hangs.

use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::path::PathBuf;
use std::process::{Child, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::desktop::{DesktopEnv, Session};
use crate::wire;

/// Puts dictated text somewhere. Implementations block (they may run a helper tool for up to its
/// timeout): call them from a blocking thread, not from async code.
pub trait Inserter: Send + Sync {
    /// The backend's name: the `dictationInsertion` preference value that selects it, or `sim`.
    fn name(&self) -> &'static str;
    fn insert(&self, text: &str) -> Result<(), InsertError>;
}

/// Why text could not be inserted; the message is shown to the user as the dictation's error.
#[derive(Debug, thiserror::Error)]
pub enum InsertError {
    #[error(
        "No X11 or Wayland display is available to insert text into (neither DISPLAY nor \
         WAYLAND_DISPLAY is set): run Verbatim inside the desktop session or set \
         dictationInsertion to none"
    )]
    NoDisplay,
    #[error(
        "Inserting into the clipboard needs xclip or xsel (Debian: apt install xclip) under X11, \
         or wl-clipboard under Wayland"
    )]
    ClipboardToolMissing,
    #[error(
        "Typing text needs xdotool (Debian: apt install xdotool) under X11, or wtype (Debian: \
         apt install wtype) under Wayland"
    )]
    TypingToolMissing,
    #[error(
        "{tool} did not finish within {} s and was stopped, so the text may not have been \
         inserted; check that the desktop session is responsive",
        seconds(*after)
    )]
    TimedOut { tool: &'static str, after: Duration },
    #[error("{tool} could not insert the text: {detail}")]
    ToolFailed { tool: &'static str, detail: String },
    #[error("Could not run {tool}: {source}")]
    Spawn {
        tool: &'static str,
        #[source]
        source: io::Error,
    },
    #[error("Could not record the insertion in {}: {source}", path.display())]
    Record {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// `5` for whole seconds, `0.25` otherwise.
fn seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{secs:.0}")
    } else {
        format!("{secs}")
    }
}

/// The backend the `dictationInsertion` preference names (`none`, `clipboard` or `type`), in this
/// process's desktop session. An unknown value, which the preference store does not accept, gets
/// the preference's default, the clipboard.
pub fn for_preference(value: &str) -> Arc<dyn Inserter> {
    for_preference_in(value, DesktopEnv::from_env())
}

/// [`for_preference`] in the given desktop session.
pub fn for_preference_in(value: &str, env: DesktopEnv) -> Arc<dyn Inserter> {
    match value {
        "none" => Arc::new(NoInsertion),
        "type" => Arc::new(Typing::new(env)),
        _ => Arc::new(Clipboard::new(env)),
    }
}

/// Leaves the text in history only (preference value `none`).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoInsertion;

impl Inserter for NoInsertion {
    fn name(&self) -> &'static str {
        "none"
    }

    fn insert(&self, _text: &str) -> Result<(), InsertError> {
        Ok(())
    }
}

/// Copies the text to the system clipboard: `wl-copy` under Wayland, `xclip` (else `xsel`) under
/// X11. These tools stay in the background to serve the clipboard until something else is copied;
/// `insert` returns as soon as the clipboard is set. Empty text leaves the clipboard alone.
#[derive(Debug, Clone)]
pub struct Clipboard {
    env: DesktopEnv,
}

impl Clipboard {
    pub fn new(env: DesktopEnv) -> Self {
        Clipboard { env }
    }

    pub fn from_env() -> Self {
        Self::new(DesktopEnv::from_env())
    }
}

impl Inserter for Clipboard {
    fn name(&self) -> &'static str {
        "clipboard"
    }

    fn insert(&self, text: &str) -> Result<(), InsertError> {
        if text.is_empty() {
            return Ok(());
        }
        let tools: &[(&'static str, &[&str])] = match self.env.session() {
            None => return Err(InsertError::NoDisplay),
            Some(Session::Wayland) => &[("wl-copy", &[])],
            Some(Session::X11) => &[
                ("xclip", &["-selection", "clipboard"]),
                ("xsel", &["--clipboard", "--input"]),
            ],
        };
        for (tool, args) in tools {
            let run = Run {
                tool,
                args: args.iter().map(OsStr::new).collect(),
                stdin: Some(text.as_bytes()),
                vars: &[],
                timeout: self.env.timeout,
            };
            match run.run(&self.env) {
                Err(RunError::NotFound) => continue,
                other => return other.map_err(|err| err.into_insert_error(tool)),
            }
        }
        Err(InsertError::ClipboardToolMissing)
    }
}

/// Types the text into the focused window: `xdotool type` under X11, `wtype` under Wayland (on
/// compositors with the virtual keyboard protocol). Empty text types nothing.
#[derive(Debug, Clone)]
pub struct Typing {
    env: DesktopEnv,
}

impl Typing {
    /// Time allowed per character on top of the session's tool timeout: typing is not instant.
    pub const PER_CHARACTER: Duration = Duration::from_millis(20);

    pub fn new(env: DesktopEnv) -> Self {
        Typing { env }
    }

    pub fn from_env() -> Self {
        Self::new(DesktopEnv::from_env())
    }
}

impl Inserter for Typing {
    fn name(&self) -> &'static str {
        "type"
    }

    fn insert(&self, text: &str) -> Result<(), InsertError> {
        // An argument cannot hold NUL, and a NUL is nothing anyone dictated.
        let text = text.replace('\0', "");
        if text.is_empty() {
            return Ok(());
        }
        let (tool, args): (&'static str, &[&str]) = match self.env.session() {
            None => return Err(InsertError::NoDisplay),
            Some(Session::Wayland) => ("wtype", &["--"]),
            Some(Session::X11) => (
                "xdotool",
                &["type", "--clearmodifiers", "--delay", "0", "--"],
            ),
        };
        let characters = u32::try_from(text.chars().count()).unwrap_or(u32::MAX);
        let mut args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        args.push(OsStr::new(&text));
        let run = Run {
            tool,
            args,
            stdin: None,
            // xdotool and wtype decode their argument by the locale: under a non-UTF-8 one they
            // reject any non-ASCII text.
            vars: &[("LC_ALL", "C.UTF-8")],
            timeout: self
                .env
                .timeout
                .saturating_add(Self::PER_CHARACTER.saturating_mul(characters)),
        };
        run.run(&self.env).map_err(|err| match err {
            RunError::NotFound => InsertError::TypingToolMissing,
            err => err.into_insert_error(tool),
        })
    }
}

/// One insertion the [`SimInserter`] received.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Insertion {
    pub text: String,
    #[serde(serialize_with = "wire::timestamp")]
    pub at: DateTime<Utc>,
}

/// Sim mode's insertion: remembers every text and appends it as one JSON line
/// `{"text":"...","at":"2025-01-01T00:00:00Z"}` to a file, so tests outside the process can see
/// what would have been typed.
#[derive(Debug)]
pub struct SimInserter {
    log: Option<PathBuf>,
    inserted: Mutex<Vec<Insertion>>,
}

impl SimInserter {
    /// Records into `log` (created, with its parent folders, on the first insertion; appended to
    /// when it exists).
    pub fn new(log: impl Into<PathBuf>) -> Self {
        SimInserter {
            log: Some(log.into()),
            inserted: Mutex::default(),
        }
    }

    /// Records in memory only.
    pub fn in_memory() -> Self {
        SimInserter {
            log: None,
            inserted: Mutex::default(),
        }
    }

    /// The file insertions are appended to, if any.
    pub fn log(&self) -> Option<&std::path::Path> {
        self.log.as_deref()
    }

    /// Every text inserted so far, oldest first.
    pub fn inserted(&self) -> Vec<String> {
        self.insertions().into_iter().map(|i| i.text).collect()
    }

    /// Every insertion so far with its time, oldest first.
    pub fn insertions(&self) -> Vec<Insertion> {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Insertion>> {
        self.inserted
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    fn append(path: &std::path::Path, insertion: &Insertion) -> io::Result<()> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        let mut line = serde_json::to_vec(insertion).map_err(io::Error::other)?;
        line.push(b'\n');
        let mut file = OpenOptions::new().create(true).append(true).open(path)?;
        file.write_all(&line)?;
        file.flush()?;
        file.sync_data()
    }
}

impl Inserter for SimInserter {
    fn name(&self) -> &'static str {
        "sim"
    }

    /// Appends to the file first (holding the lock, so lines keep the order of the memory
    /// record); a text that could not be written is not recorded at all.
    fn insert(&self, text: &str) -> Result<(), InsertError> {
        let insertion = Insertion {
            text: text.to_owned(),
            at: Utc::now(),
        };
        let mut inserted = self.lock();
        if let Some(path) = &self.log {
            Self::append(path, &insertion).map_err(|source| InsertError::Record {
                path: path.clone(),
                source,
            })?;
        }
        inserted.push(insertion);
        Ok(())
    }
}

/// One run of a helper tool.
struct Run<'a> {
    tool: &'static str,
    args: Vec<&'a OsStr>,
    stdin: Option<&'a [u8]>,
    /// Variables set for this tool on top of the session's.
    vars: &'a [(&'a str, &'a str)],
    timeout: Duration,
}

#[derive(Debug)]
enum RunError {
    NotFound,
    Spawn(io::Error),
    TimedOut(Duration),
    Failed(String),
}

impl RunError {
    fn into_insert_error(self, tool: &'static str) -> InsertError {
        match self {
            // Callers turn NotFound into their own "install this" message first.
            RunError::NotFound => InsertError::Spawn {
                tool,
                source: io::ErrorKind::NotFound.into(),
            },
            RunError::Spawn(source) => InsertError::Spawn { tool, source },
            RunError::TimedOut(after) => InsertError::TimedOut { tool, after },
            RunError::Failed(detail) => InsertError::ToolFailed { tool, detail },
        }
    }
}

/// How much of a tool's stderr ends up in an error message.
const MAX_DETAIL: usize = 300;

impl Run<'_> {
    /// Runs the tool and waits for it to exit, at most `timeout` (then kills it).
    ///
    /// Only the tool's own exit is awaited, not the end of its output: xclip, xsel and wl-copy
    /// leave a child behind that keeps serving the clipboard and holds on to the inherited
    /// descriptors. So stdout goes nowhere and stderr into an unnamed file read after the exit.
    fn run(&self, env: &DesktopEnv) -> Result<(), RunError> {
        let mut stderr = tempfile::tempfile().map_err(RunError::Spawn)?;
        let mut command = env.command(self.tool);
        command
            .args(&self.args)
            .envs(self.vars.iter().copied())
            .stdin(if self.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::null())
            .stderr(stderr.try_clone().map_err(RunError::Spawn)?);
        let mut child = command.spawn().map_err(|err| match err.kind() {
            io::ErrorKind::NotFound => RunError::NotFound,
            _ => RunError::Spawn(err),
        })?;
        // Written from a thread so a tool that does not read cannot block us past the timeout.
        // The tool's exit status is its verdict: the writer is not awaited.
        if let Some(input) = self.stdin {
            let mut pipe = child.stdin.take().expect("stdin is piped");
            let input = input.to_vec();
            std::thread::spawn(move || {
                let _ = pipe.write_all(&input);
            });
        }
        let status = wait_until(&mut child, Instant::now() + self.timeout)
            .map_err(RunError::Spawn)?
            .ok_or(RunError::TimedOut(self.timeout))?;
        if !status.success() {
            return Err(RunError::Failed(failure_detail(status, &mut stderr)));
        }
        Ok(())
    }
}

/// Waits for the child to exit until `deadline`; past it, kills and reaps it and answers None.
fn wait_until(child: &mut Child, deadline: Instant) -> io::Result<Option<ExitStatus>> {
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        let now = Instant::now();
        if now >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// The tool's complaint (the end of its stderr), else its exit status.
fn failure_detail(status: ExitStatus, stderr: &mut File) -> String {
    let mut output = Vec::new();
    let _ = stderr
        .rewind()
        .and_then(|()| stderr.take(64 * 1024).read_to_end(&mut output));
    let output = String::from_utf8_lossy(&output);
    let text = output.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return format!("it exited with {status}");
    }
    match text.char_indices().nth(MAX_DETAIL) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::PrefKind;
    use crate::store::preferences::DICTATION_INSERTION;
    use chrono::Timelike;

    #[test]
    fn every_preference_value_selects_the_backend_of_that_name() {
        let PrefKind::Choice { default, options } = DICTATION_INSERTION.kind else {
            panic!("dictationInsertion is a choice");
        };
        for option in options {
            let inserter = for_preference_in(option, DesktopEnv::headless());
            assert_eq!(inserter.name(), *option);
        }
        assert_eq!(
            for_preference_in("unknown", DesktopEnv::headless()).name(),
            default
        );
    }

    #[test]
    fn without_a_display_the_desktop_backends_say_so() {
        for inserter in [
            for_preference_in("clipboard", DesktopEnv::headless()),
            for_preference_in("type", DesktopEnv::headless()),
        ] {
            let err = inserter.insert("hello").unwrap_err();
            assert!(matches!(err, InsertError::NoDisplay), "{err:?}");
            assert!(err.to_string().contains("No X11 or Wayland display"));
        }
        NoInsertion.insert("hello").unwrap();
    }

    #[test]
    fn empty_text_runs_no_tool() {
        Clipboard::new(DesktopEnv::headless()).insert("").unwrap();
        Typing::new(DesktopEnv::headless()).insert("\0").unwrap();
    }

    #[test]
    fn timeouts_read_as_seconds() {
        assert_eq!(seconds(Duration::from_secs(5)), "5");
        assert_eq!(seconds(Duration::from_millis(250)), "0.25");
    }

    #[test]
    fn the_sim_inserter_keeps_order_in_memory_and_in_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/folder/inserted.jsonl");
        let sim = SimInserter::new(&path);
        sim.insert("first").unwrap();
        sim.insert("zweite \"Zeile\"\n").unwrap();
        assert_eq!(sim.inserted(), ["first", "zweite \"Zeile\"\n"]);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1]["text"], "zweite \"Zeile\"\n");
        let at = lines[0]["at"].as_str().unwrap();
        assert_eq!(
            wire::parse_timestamp(at),
            Some(sim.insertions()[0].at.with_nanosecond(0).unwrap())
        );
    }

    #[test]
    fn a_sim_log_that_cannot_be_written_fails_and_records_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, "").unwrap();
        let sim = SimInserter::new(blocker.join("inserted.jsonl"));
        let err = sim.insert("lost").unwrap_err();
        assert!(matches!(err, InsertError::Record { .. }), "{err:?}");
        assert!(
            err.to_string()
                .starts_with("Could not record the insertion in ")
        );
        assert!(sim.inserted().is_empty());
    }
}
