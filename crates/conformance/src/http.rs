//! A raw HTTP/1.1 client over `TcpStream`, in full control of what it sends (bad `Host`,
//! `Origin`, `HEAD`, `OPTIONS`, a `Content-Length` with no body, chunked bodies, malformed
//! heads), with a timeout on every read, and the curl command that reproduces each request.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Where the server listens: `host:port` as written in the URL.
#[derive(Debug, Clone)]
pub struct Target {
    pub host: String,
    pub port: u16,
}

impl Target {
    /// Reads `http://host:port` (a trailing `/` is allowed; https is not spoken).
    pub fn parse(url: &str) -> Result<Target, String> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| format!("'{url}': the URL must start with http://"))?;
        let authority = rest.trim_end_matches('/');
        if authority.contains('/') {
            return Err(format!("'{url}': give the server's root, without a path"));
        }
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !port.contains(']') => (
                host,
                port.parse()
                    .map_err(|_| format!("'{url}': '{port}' is not a port"))?,
            ),
            _ => (authority, 80),
        };
        if host.is_empty() {
            return Err(format!("'{url}': no host"));
        }
        Ok(Target {
            host: host.to_string(),
            port,
        })
    }

    /// The `Host` header a well-behaved client sends.
    pub fn authority(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.authority())
    }
}

/// What goes after the head.
#[derive(Debug, Clone)]
pub enum Body {
    Empty,
    /// A JSON text, sent with `Content-Type: application/json`.
    Json(String),
    /// Bytes with their content type; `label` names them in the curl command.
    Bytes {
        bytes: Vec<u8>,
        content_type: String,
        label: String,
    },
    /// `multipart/form-data` with text fields and an optional file `(name, bytes)`.
    Form {
        fields: Vec<(String, String)>,
        file: Option<(String, Vec<u8>)>,
    },
    /// `bytes` sent with `Transfer-Encoding: chunked`, 64 KiB per chunk.
    Chunked {
        bytes: Vec<u8>,
        content_type: String,
    },
    /// A `Content-Length: length` header and no body at all: the server must answer first.
    Withheld {
        length: u64,
        content_type: String,
    },
}

/// One request. Headers are sent as given, after `Host` (unless replaced or removed).
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Body,
    /// `Some(host)`: this `Host` header instead of the target's; `Some("")`: none.
    pub host: Option<String>,
    /// Sent as the whole request instead of what the fields describe (malformed heads).
    pub raw: Option<Vec<u8>>,
    pub timeout: Duration,
}

const BOUNDARY: &str = "verbatim-conformance-boundary";

impl Request {
    pub fn new(method: &str, path: &str) -> Request {
        Request {
            method: method.to_string(),
            path: path.to_string(),
            headers: Vec::new(),
            body: Body::Empty,
            host: None,
            raw: None,
            timeout: Duration::from_secs(30),
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Request {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    pub fn host(mut self, host: &str) -> Request {
        self.host = Some(host.to_string());
        self
    }

    pub fn json(mut self, json: &serde_json::Value) -> Request {
        self.body = Body::Json(json.to_string());
        self
    }

    pub fn body(mut self, body: Body) -> Request {
        self.body = body;
        self
    }

    pub fn timeout(mut self, timeout: Duration) -> Request {
        self.timeout = timeout;
        self
    }

    /// The bytes that go on the wire.
    fn encode(&self, target: &Target) -> (Vec<u8>, Vec<u8>, bool) {
        if let Some(raw) = &self.raw {
            return (raw.clone(), Vec::new(), false);
        }
        let mut head = format!("{} {} HTTP/1.1\r\n", self.method, self.path);
        match self.host.as_deref() {
            None => head.push_str(&format!("Host: {}\r\n", target.authority())),
            Some("") => {}
            Some(host) => head.push_str(&format!("Host: {host}\r\n")),
        }
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        let (content_type, body, chunked) = match &self.body {
            Body::Empty => (None, Vec::new(), false),
            Body::Json(text) => (Some("application/json".into()), text.clone().into(), false),
            Body::Bytes {
                bytes,
                content_type,
                ..
            } => (Some(content_type.clone()), bytes.clone(), false),
            Body::Form { fields, file } => (
                Some(format!("multipart/form-data; boundary={BOUNDARY}")),
                {
                    let fields: Vec<(&str, &str)> = fields
                        .iter()
                        .map(|(k, v)| (k.as_str(), v.as_str()))
                        .collect();
                    let file = file
                        .as_ref()
                        .map(|(name, bytes)| (name.as_str(), &bytes[..]));
                    multipart_body(BOUNDARY, &fields, file)
                },
                false,
            ),
            Body::Chunked {
                bytes,
                content_type,
            } => (Some(content_type.clone()), bytes.clone(), true),
            Body::Withheld {
                length,
                content_type,
            } => {
                head.push_str(&format!(
                    "Content-Type: {content_type}\r\nContent-Length: {length}\r\n"
                ));
                (None, Vec::new(), false)
            }
        };
        let has_type = self
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("content-type"));
        if let (Some(kind), false) = (content_type, has_type) {
            head.push_str(&format!("Content-Type: {kind}\r\n"));
        }
        let withheld = matches!(self.body, Body::Withheld { .. });
        if chunked {
            head.push_str("Transfer-Encoding: chunked\r\n");
        } else if !withheld && (!body.is_empty() || matches!(self.method.as_str(), "POST" | "PUT"))
        {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("Connection: close\r\n\r\n");
        (head.into_bytes(), body, chunked)
    }
}

/// What came back.
#[derive(Debug, Clone, Default)]
pub struct Response {
    pub status: u16,
    /// Names lower-cased, in the order received; repeated headers stay separate.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// The first value of header `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn headers_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Sends `request` and reads the whole answer (the request says `Connection: close`).
/// A connection to `target` (5 s to connect).
pub fn connect(target: &Target) -> Result<TcpStream, String> {
    let address = (target.host.trim_matches(['[', ']']), target.port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {}: {e}", target.authority()))?
        .next()
        .ok_or_else(|| format!("cannot resolve {}", target.authority()))?;
    TcpStream::connect_timeout(&address, Duration::from_secs(5))
        .map_err(|e| format!("cannot connect to {}: {e}", target.authority()))
}

pub fn send(target: &Target, request: &Request) -> Result<Response, String> {
    let mut stream = connect(target)?;
    stream
        .set_read_timeout(Some(request.timeout))
        .and_then(|()| stream.set_write_timeout(Some(request.timeout)))
        .map_err(|e| e.to_string())?;
    let (head, body, chunked) = request.encode(target);
    // A server may answer and close before the body is all sent (413): stop writing, then read.
    let written = stream.write_all(&head).and_then(|()| {
        if chunked {
            for chunk in body.chunks(64 * 1024) {
                stream.write_all(format!("{:x}\r\n", chunk.len()).as_bytes())?;
                stream.write_all(chunk)?;
                stream.write_all(b"\r\n")?;
            }
            stream.write_all(b"0\r\n\r\n")
        } else {
            stream.write_all(&body)
        }
    });
    let mut raw = Vec::new();
    let read = stream.read_to_end(&mut raw);
    if raw.is_empty() {
        return Err(match (written, read) {
            (_, Err(e)) if is_timeout(&e) => {
                format!("no answer within {} s", request.timeout.as_secs_f64())
            }
            (_, Err(e)) => format!("connection failed: {e}"),
            (Err(e), _) => format!("connection closed while sending: {e}"),
            _ => "the connection closed without an answer".into(),
        });
    }
    parse(&raw, request.method == "HEAD")
}

fn is_timeout(err: &std::io::Error) -> bool {
    matches!(
        err.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// Parses a complete response: status line, headers, then a body by `Content-Length`,
/// chunked transfer coding, or up to the end of the connection.
pub fn parse(raw: &[u8], head_request: bool) -> Result<Response, String> {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("the answer has no complete head")?;
    let head = String::from_utf8_lossy(&raw[..end]);
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .filter(|_| status_line.starts_with("HTTP/1."))
        .ok_or_else(|| format!("not an HTTP status line: {status_line:?}"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut response = Response {
        status,
        headers,
        body: Vec::new(),
    };
    let rest = &raw[end + 4..];
    if head_request || status == 204 || status == 304 {
        response.body = rest.to_vec();
        return Ok(response);
    }
    let chunked = response
        .header("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
    response.body = if chunked {
        dechunk(rest)?
    } else if let Some(length) = response.header("content-length") {
        let length: usize = length.parse().map_err(|_| "bad Content-Length")?;
        rest.get(..length)
            .ok_or_else(|| format!("body shorter than its Content-Length ({length})"))?
            .to_vec()
    } else {
        rest.to_vec()
    };
    Ok(response)
}

fn dechunk(mut rest: &[u8]) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    loop {
        let line_end = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("chunked body cut short")?;
        let size_text = String::from_utf8_lossy(&rest[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| format!("bad chunk size {size_text:?}"))?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Ok(body);
        }
        body.extend_from_slice(rest.get(..size).ok_or("chunk cut short")?);
        rest = rest.get(size + 2..).ok_or("chunk cut short")?;
    }
}

/// A `multipart/form-data` body with `boundary`: the text `fields`, then the part `file`
/// (`(file name, bytes)`) when given.
pub fn multipart_body(
    boundary: &str,
    fields: &[(&str, &str)],
    file: Option<(&str, &[u8])>,
) -> Vec<u8> {
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    }
    if let Some((file_name, bytes)) = file {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_chunked_and_repeated_headers() {
        let raw = b"HTTP/1.1 200 OK\r\nA: 1\r\na: 2\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        let response = parse(raw, false).unwrap();
        assert_eq!(response.status, 200);
        assert_eq!(response.headers_named("a").collect::<Vec<_>>(), ["1", "2"]);
        assert_eq!(response.body, b"abcde");
    }

    #[test]
    fn head_answers_have_no_body_whatever_the_length_says() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n";
        assert!(parse(raw, true).unwrap().body.is_empty());
        assert!(parse(raw, false).is_err());
    }

    #[test]
    fn targets_and_curl_commands() {
        let target = Target::parse("http://127.0.0.1:8978/").unwrap();
        assert_eq!(target.authority(), "127.0.0.1:8978");
        assert!(Target::parse("https://x").is_err());
        assert!(Target::parse("http://x:y").is_err());
        let request = Request::new("PUT", "/v1/x").json(&serde_json::json!({"a": "it's"}));
        assert_eq!(
            request.curl(&target),
            r#"curl -sS -i -X PUT 'http://127.0.0.1:8978/v1/x' -H 'Content-Type: application/json' --data-raw '{"a":"it'\''s"}'"#
        );
    }
}
