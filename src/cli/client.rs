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

/// An answer of the server, its body still to read.
type Answer = ureq::http::Response<ureq::Body>;

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
        // Loopback only: no proxy of the environment, every status read as an answer.
        let agent = ureq::Agent::config_builder()
            .proxy(None)
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_connect(Some(Duration::from_secs(5)))
            .build()
            .new_agent();
        Client {
            base: format!("http://127.0.0.1:{port}"),
            token,
            agent,
        }
    }

    /// The token requests carry, if any.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
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

    /// `POST path` with a JSON body, answered with server-sent events: `on_event(name, data)`
    /// for each, as it arrives (data lines joined with newlines; comments skipped).
    pub fn post_for_events<B: Serialize>(
        &self,
        path: &str,
        body: &B,
        on_event: impl FnMut(&str, &str) -> Result<(), CliError>,
    ) -> Result<(), CliError> {
        let bytes = serde_json::to_vec(body).map_err(CliError::local)?;
        self.events(path, Body::Json(&bytes), on_event)
    }

    /// `POST path` of raw bytes with extra headers, answered with server-sent events (see
    /// [`Client::post_for_events`]).
    pub fn post_bytes_for_events(
        &self,
        path: &str,
        bytes: &[u8],
        headers: &[(&str, String)],
        on_event: impl FnMut(&str, &str) -> Result<(), CliError>,
    ) -> Result<(), CliError> {
        self.events(path, Body::Raw { bytes, headers }, on_event)
    }

    /// `GET path`, answered with server-sent events: `on_event(name, data)` for each as it
    /// arrives, until it answers false or the server ends the stream.
    pub fn get_events(
        &self,
        path: &str,
        on_event: impl FnMut(&str, &str) -> Result<bool, CliError>,
    ) -> Result<(), CliError> {
        let response = self.respond("GET", path, &[], Body::None, Some("text/event-stream"))?;
        let reader = response.into_body().into_reader();
        read_events(std::io::BufReader::new(reader), on_event)
    }

    fn events(
        &self,
        path: &str,
        body: Body<'_>,
        mut on_event: impl FnMut(&str, &str) -> Result<(), CliError>,
    ) -> Result<(), CliError> {
        let response = self.respond("POST", path, &[], body, Some("text/event-stream"))?;
        let reader = std::io::BufReader::new(response.into_body().into_reader());
        read_events(reader, |name, data| on_event(name, data).map(|()| true))
    }

    fn call<T: DeserializeOwned>(
        &self,
        method: &str,
        path: &str,
        query: &[(&str, String)],
        body: Body<'_>,
    ) -> Result<T, CliError> {
        read_answer(self.respond(method, path, query, body, None)?)
    }

    /// Sends a request; an error status is the server's message.
    fn respond(
        &self,
        method: &str,
        path: &str,
        query: &[(&str, String)],
        body: Body<'_>,
        accept: Option<&str>,
    ) -> Result<Answer, CliError> {
        let mut url = format!("{}{path}", self.base);
        if !query.is_empty() {
            let encoded = form_urlencoded::Serializer::new(String::new())
                .extend_pairs(query.iter().map(|(name, value)| (*name, value.as_str())))
                .finish();
            url.push(if path.contains('?') { '&' } else { '?' });
            url.push_str(&encoded);
        }
        let mut request = ureq::http::Request::builder().method(method).uri(&url);
        if let Some(token) = &self.token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        if let Some(accept) = accept {
            request = request.header("Accept", accept);
        }
        let sent = match body {
            Body::None => request.body(()).map(|r| self.agent.run(r)),
            Body::Json(bytes) => request
                .header("Content-Type", "application/json")
                .body(bytes)
                .map(|r| self.agent.run(r)),
            Body::Raw { bytes, headers } => {
                for (name, value) in headers {
                    request = request.header(*name, value.as_str());
                }
                request.body(bytes).map(|r| self.agent.run(r))
            }
        };
        let result = sent.map_err(|e| CliError::local(format!("cannot make the request: {e}")))?;
        match result {
            Ok(response) if response.status().as_u16() < 400 => Ok(response),
            Ok(response) => Err(server_error(response)),
            Err(err) => Err(CliError::CannotConnect(format!(
                "Cannot connect to the Verbatim server at {} ({err}). Is it running? Start it with `verbatim serve`.",
                self.base,
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
fn read_answer<T: DeserializeOwned>(response: Answer) -> Result<T, CliError> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut response.into_body().into_reader(), &mut bytes)
        .map_err(|e| CliError::local(format!("could not read the server's answer: {e}")))?;
    let answer = if bytes.iter().all(u8::is_ascii_whitespace) {
        serde_json::from_value(Value::Null)
    } else {
        serde_json::from_slice(&bytes)
    };
    answer.map_err(|e| CliError::local(format!("the server's answer is not readable: {e}")))
}

/// Reads server-sent events to the end of the stream, handing each to `on_event`.
fn read_events(
    reader: impl std::io::BufRead,
    mut on_event: impl FnMut(&str, &str) -> Result<bool, CliError>,
) -> Result<(), CliError> {
    let (mut name, mut data) = (String::new(), Vec::<String>::new());
    for line in reader.lines() {
        let line =
            line.map_err(|e| CliError::local(format!("the server's events stopped: {e}")))?;
        if line.is_empty() {
            if !data.is_empty() {
                let event = if name.is_empty() { "message" } else { &name };
                if !on_event(event, &data.join("\n"))? {
                    return Ok(());
                }
            }
            name.clear();
            data.clear();
            continue;
        }
        let (field, value) = line.split_once(':').unwrap_or((&line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => name = value.to_string(),
            "data" => data.push(value.to_string()),
            _ => {}
        }
    }
    Ok(())
}

/// The HTTP status an Error object's `code` stands for (an error sent inside a stream has
/// no status of its own).
pub fn status_of_code(code: &str) -> u16 {
    match code {
        "bad_request" => 400,
        "unauthorized" => 401,
        "forbidden" => 403,
        "not_found" => 404,
        "request_timeout" => 408,
        "conflict" => 409,
        "payload_too_large" => 413,
        "unsupported_media_type" => 415,
        "not_implemented" => 501,
        "service_unavailable" => 503,
        _ => 500,
    }
}

fn server_error(response: Answer) -> CliError {
    let status = response.status().as_u16();
    let text = response.into_body().read_to_string().unwrap_or_default();
    let (code, message) = serde_json::from_str::<ErrorBody>(&text)
        .map(|body| (body.error.code, body.error.message))
        .unwrap_or_else(|_| {
            let message = if text.trim().is_empty() {
                "no error message".into()
            } else {
                text.trim().chars().take(200).collect()
            };
            ("unknown".into(), message)
        });
    CliError::Server {
        status,
        code,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_read_with_their_names_and_joined_data() {
        let stream = ": keep-alive\n\nevent: segment\ndata: {\"a\":1}\n\ndata: one\ndata:two\n\n";
        let mut seen = Vec::new();
        read_events(stream.as_bytes(), |name, data| {
            seen.push((name.to_string(), data.to_string()));
            Ok(true)
        })
        .unwrap();
        assert_eq!(
            seen,
            vec![
                ("segment".to_string(), "{\"a\":1}".to_string()),
                ("message".to_string(), "one\ntwo".to_string()),
            ]
        );
        // A reader that has what it wanted stops there.
        let mut first = Vec::new();
        read_events(stream.as_bytes(), |name, _| {
            first.push(name.to_string());
            Ok(false)
        })
        .unwrap();
        assert_eq!(first, ["segment"]);
    }
}
