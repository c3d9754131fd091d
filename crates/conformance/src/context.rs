//! What every check works with: the target, the token, what the run may do, and the
//! [`Exchange`] of one request with its answer, whose assertions fail with the curl command.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::events::EventStream;

use super::http::{self, Request, Response, Target};
use super::{Failure, Outcome, Step, skip};

/// The run's state, shared by the checks in order.
pub struct Ctx {
    pub target: Target,
    pub token: Option<String>,
    /// The header that carries the token as an alternative to `Authorization: Bearer`.
    pub token_header: String,
    /// True when the server answered 401 to a request without a token.
    pub auth_required: bool,
    pub allow_writes: bool,
    pub allow_audio: bool,
    pub discovery: Option<PathBuf>,
    /// `HOST:PORT` of the server's Wyoming listener (`--wyoming`).
    pub wyoming: Option<String>,
    scratch: Option<tempfile::TempDir>,
    /// Answers kept for the run (`GET /v1/status`), by path.
    cache: HashMap<String, Value>,
    /// The message of a 409 saying the machine has no capture device (`No microphone
    /// available`), seen since the check began: a check that needs capture is then skipped
    /// with it rather than failed.
    pub no_capture: Option<String>,
}

impl Ctx {
    pub fn new(target: Target, token: Option<String>, token_header: String) -> Ctx {
        Ctx {
            target,
            token,
            token_header,
            auth_required: false,
            allow_writes: false,
            allow_audio: false,
            discovery: None,
            wyoming: None,
            scratch: None,
            cache: HashMap::new(),
            no_capture: None,
        }
    }

    /// Sends `request` with the token (when there is one) as `Authorization: Bearer`.
    pub fn send(&mut self, request: Request) -> Step<Exchange> {
        let request = match &self.token {
            Some(token) => request.header("Authorization", &format!("Bearer {token}")),
            None => request,
        };
        self.send_anonymous(request)
    }

    /// Follows the live events at `path` with the token (see [`EventStream`]).
    pub fn follow_events(&self, path: &str) -> Step<EventStream> {
        let headers: Vec<(String, String)> = self
            .token
            .iter()
            .map(|t| ("Authorization".to_string(), format!("Bearer {t}")))
            .collect();
        EventStream::follow(&self.target, path, &headers)
            .or_else(|e| super::fail(format!("`GET {path}` streams events"), e))
    }

    /// Sends `request` exactly as built: no token added.
    pub fn send_anonymous(&mut self, request: Request) -> Step<Exchange> {
        let mut curl = request.curl(&self.target);
        if let Some(token) = self.token.as_deref().filter(|t| !t.is_empty()) {
            // Reports end up in CI logs: the command reads the token from the environment.
            curl = curl.replace(token, "'\"$VERBATIM_API_TOKEN\"'");
        }
        match http::send(&self.target, &request) {
            Ok(response) => {
                if let Some(message) = no_capture_device(&response) {
                    self.no_capture = Some(message);
                }
                Ok(Exchange {
                    request,
                    response,
                    curl,
                })
            }
            Err(problem) => Err(Outcome::Fail(Failure {
                expected: "an HTTP answer".into(),
                observed: problem,
                curl: Some(curl),
            })),
        }
    }

    pub fn get(&mut self, path: &str) -> Step<Exchange> {
        self.send(Request::new("GET", path))
    }

    /// `GET path`, expecting 200 and a JSON body.
    pub fn get_json(&mut self, path: &str) -> Step<(Exchange, Value)> {
        let exchange = self.get(path)?;
        let json = exchange.ok_json()?;
        Ok((exchange, json))
    }

    /// `GET /v1/status`, read once per run.
    pub fn status(&mut self) -> Step<Value> {
        if let Some(status) = self.cache.get("/v1/status") {
            return Ok(status.clone());
        }
        let (_, status) = self.get_json("/v1/status")?;
        self.cache.insert("/v1/status".into(), status.clone());
        Ok(status)
    }

    /// Skips unless the server can transcribe without writing history the run may not write:
    /// the status is `ready`, and the backup's `saveApiTranscriptionsToHistory` is off or
    /// `--allow-writes` was given.
    pub fn may_transcribe(&mut self) -> Step {
        if self.status()?["status"] != "ready" {
            return skip("the server has no model ready (status is not 'ready')");
        }
        if self.allow_writes {
            return Ok(());
        }
        let (_, export) = self.get_json("/v1/settings/export")?;
        if export["preferences"]["saveApiTranscriptionsToHistory"] == true {
            return skip(
                "transcribing writes history on this server (saveApiTranscriptionsToHistory): pass --allow-writes",
            );
        }
        Ok(())
    }

    /// A folder of the kit's own for files the server reads (local-file transcription).
    pub fn scratch(&mut self) -> Step<&Path> {
        if self.scratch.is_none() {
            let dir = tempfile::Builder::new()
                .prefix("verbatim-conformance-")
                .tempdir()
                .map_err(|e| Outcome::Skip(format!("cannot make a temporary folder: {e}")))?;
            self.scratch = Some(dir);
        }
        Ok(self.scratch.as_ref().expect("made above").path())
    }
}

/// One request and its answer.
pub struct Exchange {
    pub request: Request,
    pub response: Response,
    pub curl: String,
}

impl Exchange {
    /// A failure of this exchange, with its curl command.
    pub fn fail(&self, expected: impl Into<String>, observed: impl Into<String>) -> Outcome {
        Outcome::Fail(Failure {
            expected: expected.into(),
            observed: observed.into(),
            curl: Some(self.curl.clone()),
        })
    }

    /// Fails with `expected` / `observed` unless `holds`.
    pub fn ensure(
        &self,
        holds: bool,
        expected: impl Into<String>,
        observed: impl std::fmt::Display,
    ) -> Step {
        if holds {
            Ok(())
        } else {
            Err(self.fail(expected, observed.to_string()))
        }
    }

    pub fn status(&self) -> u16 {
        self.response.status
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.response.header(name)
    }

    /// A short account of the answer: status and the start of the body.
    pub fn summary(&self) -> String {
        let text = self.response.text();
        let text = if text.chars().count() > 400 {
            format!("{}...", text.chars().take(400).collect::<String>())
        } else {
            text
        };
        format!("{} {}", self.response.status, text)
    }

    pub fn expect_status(&self, status: u16) -> Step {
        self.ensure(
            self.status() == status,
            format!("status {status}"),
            self.summary(),
        )
    }

    /// The body as JSON.
    pub fn json(&self) -> Step<Value> {
        serde_json::from_slice(&self.response.body)
            .map_err(|e| self.fail("a JSON body", format!("{} ({e})", self.summary())))
    }

    /// Status 200 and a JSON body.
    pub fn ok_json(&self) -> Step<Value> {
        self.expect_status(200)?;
        self.json()
    }

    /// The Error object with this status and code; returns its message.
    pub fn error(&self, status: u16, code: &str) -> Step<String> {
        self.expect_status(status)?;
        let json = self.json()?;
        let message = json["error"]["message"].as_str();
        self.ensure(
            json["error"]["code"] == code && message.is_some(),
            format!("{{\"error\":{{\"code\":\"{code}\",\"message\":...}}}}"),
            &json,
        )?;
        Ok(message.unwrap_or_default().to_string())
    }

    /// The Error object with this status, code and exact message.
    pub fn error_message(&self, status: u16, code: &str, message: &str) -> Step {
        let said = self.error(status, code)?;
        self.ensure(
            said == message,
            format!("{status} {code} with message {message:?}"),
            format!("message {said:?}"),
        )
    }

    /// The Error object with this status and code, its message starting with `prefix`.
    pub fn error_starting(&self, status: u16, code: &str, prefix: &str) -> Step<String> {
        let said = self.error(status, code)?;
        self.ensure(
            said.starts_with(prefix),
            format!("{status} {code} with a message starting {prefix:?}"),
            format!("message {said:?}"),
        )?;
        Ok(said)
    }
}

/// The message of `response` when it is a 409 saying a capture device is missing: the
/// contract's `No microphone available` or `No system audio source available`.
fn no_capture_device(response: &Response) -> Option<String> {
    if response.status != 409 {
        return None;
    }
    let body: Value = serde_json::from_slice(&response.body).ok()?;
    let message = body["error"]["message"].as_str()?;
    (message.starts_with("No microphone") || message.starts_with("No system audio"))
        .then(|| message.to_string())
}
