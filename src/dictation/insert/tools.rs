//! The desktop insertion adapters: nowhere, the system clipboard, or keystrokes into the focused
//! window. They run the usual command-line tools (xclip/xsel, wl-copy, xdotool, wtype) with the
//! text on stdin or as one argument, never through a shell, and give up on a tool that hangs.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::{InsertError, Inserter};
use crate::dictation::desktop::{DesktopEnv, DisplayServer};

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
            Some(DisplayServer::Wayland) => &[("wl-copy", &[])],
            Some(DisplayServer::X11) => &[
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
            Some(DisplayServer::Wayland) => ("wtype", &["--"]),
            Some(DisplayServer::X11) => (
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

    #[test]
    fn empty_text_runs_no_tool() {
        Clipboard::new(DesktopEnv::headless()).insert("").unwrap();
        Typing::new(DesktopEnv::headless()).insert("\0").unwrap();
    }
}
