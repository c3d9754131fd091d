//! The typed HTTP client of the CLI: finds the server (flags, environment, discovery file)
//! and turns the server's Error object and connection failures into [`CliError`]s.

use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{CliError, Globals};
use crate::discovery::{self, DataDir};
use crate::store::preferences;
use crate::wire::ErrorBody;

pub struct Client {
    base: String,
    token: Option<String>,
    agent: ureq::Agent,
}

impl Client {
    /// Port: `--port`, else the discovery file, else 8978. Token: `--api-token`, else
    /// `VERBATIM_API_TOKEN` (both arrive in `globals`), else the discovery file.
    pub fn from_globals(globals: &Globals) -> Result<Client, CliError> {
        let published = DataDir::resolve(globals.dev)
            .ok()
            .and_then(|dir| discovery::read(&dir));
        let default_port = match preferences::API_SERVER_PORT.kind {
            preferences::PrefKind::Int { default, .. } => default as u16,
            _ => 8978,
        };
        let port = globals
            .port
            .or(published.as_ref().map(|d| d.port))
            .unwrap_or(default_port);
        let token = globals
            .api_token
            .clone()
            .filter(|t| !t.is_empty())
            .or(published.map(|d| d.token));
        Ok(Client::new(port, token))
    }

    pub fn new(port: u16, token: Option<String>) -> Client {
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(Duration::from_secs(5))
            .build();
        Client {
            base: format!("http://127.0.0.1:{port}"),
            token,
            agent,
        }
    }

    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// `GET path`, the answer read as `T`.
    pub fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, CliError> {
        self.call("GET", path, &[], Body::None)
    }

    /// `GET path?name=value&...` (values are URL-encoded).
    pub fn get_with_query<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<T, CliError> {
        self.call("GET", path, query, Body::None)
    }

    /// A request with a JSON body (`PUT`, `DELETE`, `POST`).
    pub fn send<B: Serialize, T: DeserializeOwned>(
        &self,
        method: &str,
        path: &str,
        body: &B,
    ) -> Result<T, CliError> {
        let bytes = serde_json::to_vec(body).map_err(CliError::local)?;
        self.call(method, path, &[], Body::Json(&bytes))
    }

    /// A request without a body and with query parameters (`DELETE /v1/history?id=`...).
    pub fn send_query<T: DeserializeOwned>(
        &self,
        method: &str,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<T, CliError> {
        self.call(method, path, query, Body::None)
    }

    /// `POST` of an empty JSON object (`{}`), for routes that take no arguments.
    pub fn post_empty<T: DeserializeOwned>(&self, path: &str) -> Result<T, CliError> {
        self.call("POST", path, &[], Body::Json(b"{}"))
    }

    /// `POST` of raw bytes (an audio upload) with extra headers.
    pub fn post_bytes<T: DeserializeOwned>(
        &self,
        path: &str,
        bytes: &[u8],
        headers: &[(&str, String)],
    ) -> Result<T, CliError> {
        self.call("POST", path, &[], Body::Raw { bytes, headers })
    }

    /// `POST` of a JSON document that is already serialized (a settings backup file).
    pub fn post_json_bytes<T: DeserializeOwned>(
        &self,
        path: &str,
        bytes: &[u8],
    ) -> Result<T, CliError> {
        self.call("POST", path, &[], Body::Json(bytes))
    }

    fn call<T: DeserializeOwned>(
        &self,
        method: &str,
        path: &str,
        query: &[(&str, String)],
        body: Body<'_>,
    ) -> Result<T, CliError> {
        let mut request = self.agent.request(method, &format!("{}{path}", self.base));
        for (name, value) in query {
            request = request.query(name, value);
        }
        if let Some(token) = &self.token {
            request = request.set("Authorization", &format!("Bearer {token}"));
        }
        let result = match body {
            Body::None => request.call(),
            Body::Json(bytes) => request
                .set("Content-Type", "application/json")
                .send_bytes(bytes),
            Body::Raw { bytes, headers } => {
                for (name, value) in headers {
                    request = request.set(name, value);
                }
                request.send_bytes(bytes)
            }
        };
        match result {
            Ok(response) => read_answer(response),
            Err(ureq::Error::Status(status, response)) => Err(server_error(status, response)),
            Err(ureq::Error::Transport(transport)) => Err(CliError::CannotConnect(format!(
                "Cannot connect to the Verbatim server at {} ({}). Is it running? Start it with `verbatim serve`.",
                self.base,
                transport.kind()
            ))),
        }
    }
}

/// What a request carries.
enum Body<'a> {
    None,
    /// Serialized JSON.
    Json(&'a [u8]),
    Raw {
        bytes: &'a [u8],
        headers: &'a [(&'a str, String)],
    },
}

/// The answer read as `T` (an empty answer reads as JSON `null`). Read as a stream: a settings
/// export can be far larger than what `into_string` accepts.
fn read_answer<T: DeserializeOwned>(response: ureq::Response) -> Result<T, CliError> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut response.into_reader(), &mut bytes)
        .map_err(|e| CliError::local(format!("could not read the server's answer: {e}")))?;
    let answer = if bytes.iter().all(u8::is_ascii_whitespace) {
        serde_json::from_value(Value::Null)
    } else {
        serde_json::from_slice(&bytes)
    };
    answer.map_err(|e| CliError::local(format!("the server's answer is not readable: {e}")))
}

fn server_error(status: u16, response: ureq::Response) -> CliError {
    let text = response.into_string().unwrap_or_default();
    let message = serde_json::from_str::<ErrorBody>(&text)
        .map(|body| body.error.message)
        .unwrap_or_else(|_| {
            if text.trim().is_empty() {
                "no error message".into()
            } else {
                text.trim().chars().take(200).collect()
            }
        });
    CliError::Server { status, message }
}
