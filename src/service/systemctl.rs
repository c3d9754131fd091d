//! `systemctl --user`, run as a child process (found on `PATH`) with a time limit: its answer,
//! or why there is none (not installed, no user bus, a failed verb).

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The user's service manager, reached through its command-line tool.
#[derive(Debug, Clone)]
pub struct Systemctl {
    /// The program (`systemctl`, looked up on `PATH`).
    pub program: String,
    /// How long one call may take before it is abandoned.
    pub timeout: Duration,
}

impl Default for Systemctl {
    fn default() -> Self {
        Systemctl {
            program: "systemctl".into(),
            timeout: Duration::from_secs(30),
        }
    }
}

/// Why a call did not succeed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SystemctlError {
    #[error("systemctl is not installed (no systemd here?)")]
    NotFound,
    #[error("`{command}` failed: {detail}")]
    Failed { command: String, detail: String },
    #[error("`{command}` did not answer within {seconds} s")]
    TimedOut { command: String, seconds: u64 },
}

/// What one call printed and how it ended.
#[derive(Debug, Clone)]
pub struct Answer {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

impl Systemctl {
    /// The command line `systemctl --user <args>` as a person would type it.
    pub fn command_line(args: &[&str]) -> String {
        format!("systemctl --user {}", args.join(" "))
    }

    /// Runs `systemctl --user <args>`; a non-zero exit is an error carrying its complaint.
    pub fn run(&self, args: &[&str]) -> Result<Answer, SystemctlError> {
        let answer = self.call(args)?;
        if answer.success {
            return Ok(answer);
        }
        let detail = [answer.stderr.trim(), answer.stdout.trim()]
            .into_iter()
            .find(|text| !text.is_empty())
            .unwrap_or("no reason given")
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
        Err(SystemctlError::Failed {
            command: Self::command_line(args),
            detail,
        })
    }

    /// A query verb (`is-enabled`, `is-active`): the word it prints, whatever its exit code
    /// (they exit non-zero for `disabled`, `inactive`...); an error when it printed nothing.
    pub fn query(&self, verb: &str, unit: &str) -> Result<String, SystemctlError> {
        let answer = self.call(&[verb, unit])?;
        match answer.stdout.lines().next().map(str::trim) {
            Some(word) if !word.is_empty() => Ok(word.to_string()),
            _ => Err(SystemctlError::Failed {
                command: Self::command_line(&[verb, unit]),
                detail: answer.stderr.trim().to_string(),
            }),
        }
    }

    fn call(&self, args: &[&str]) -> Result<Answer, SystemctlError> {
        let command_line = Self::command_line(args);
        let mut child = Command::new(&self.program)
            .arg("--user")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|err| match err.kind() {
                std::io::ErrorKind::NotFound => SystemctlError::NotFound,
                _ => SystemctlError::Failed {
                    command: command_line.clone(),
                    detail: err.to_string(),
                },
            })?;
        // Drained on threads: a chatty child cannot block on a full pipe while we wait.
        let drain = |pipe: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut text = String::new();
                if let Some(pipe) = pipe {
                    let _ = pipe.take(64 * 1024).read_to_string(&mut text);
                }
                text
            })
        };
        let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
        let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
        let deadline = Instant::now() + self.timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                other => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(match other {
                        Err(err) => SystemctlError::Failed {
                            command: command_line,
                            detail: err.to_string(),
                        },
                        _ => SystemctlError::TimedOut {
                            command: command_line,
                            seconds: self.timeout.as_secs(),
                        },
                    });
                }
            }
        };
        Ok(Answer {
            success: status.success(),
            stdout: stdout.join().unwrap_or_default(),
            stderr: stderr.join().unwrap_or_default(),
        })
    }
}
