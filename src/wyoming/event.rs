//! Wyoming's framing, bounded: a JSON header line (`type`, optional `data`, `data_length`,
//! `payload_length`, `version`), then `data_length` bytes of JSON merged into `data`, then
//! `payload_length` bytes of payload. Every part has a limit checked before it is read, so a
//! header that claims gigabytes is refused at once rather than waited for.

use serde_json::{Map, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The longest header line, its newline included.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;
/// The most bytes of `data` after a header.
pub const MAX_DATA_BYTES: usize = 64 * 1024;
/// The largest payload (an `audio-chunk`'s samples: clients send a few kilobytes at a time;
/// one second of 48 kHz stereo 32-bit audio is 384 KiB).
pub const MAX_PAYLOAD_BYTES: usize = 1024 * 1024;

/// The protocol version written in every header (the PyPI `wyoming` package this follows).
pub const PROTOCOL_VERSION: &str = "1.10.2";

/// One event, read or to write.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub kind: String,
    pub data: Map<String, Value>,
    pub payload: Option<Vec<u8>>,
}

impl Event {
    /// An event of `kind` with `data` (a JSON object; anything else is taken as no data).
    pub fn new(kind: &str, data: Value) -> Event {
        let data = match data {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        Event {
            kind: kind.to_string(),
            data,
            payload: None,
        }
    }

    /// The string field `key` of the data, if it is one.
    pub fn text(&self, key: &str) -> Option<&str> {
        self.data.get(key).and_then(Value::as_str)
    }
}

/// Why an event could not be read. Every one ends the connection: the framing is lost.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("the connection closed")]
    Closed,
    #[error("A header line is over {MAX_HEADER_BYTES} bytes")]
    HeaderTooLong,
    #[error("The header's data_length {0} is over the limit of {MAX_DATA_BYTES} bytes")]
    DataTooLong(u64),
    #[error("The header's payload_length {0} is over the limit of {MAX_PAYLOAD_BYTES} bytes")]
    PayloadTooLong(u64),
    #[error("The header is not a JSON object with a string 'type': {0}")]
    Malformed(String),
    #[error("The data after the header is not a JSON object: {0}")]
    MalformedData(String),
    #[error("An event began but did not arrive whole within {0} s")]
    Slow(u64),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl ReadError {
    /// The contract's error code for it.
    pub fn code(&self) -> &'static str {
        match self {
            ReadError::HeaderTooLong | ReadError::DataTooLong(_) | ReadError::PayloadTooLong(_) => {
                "payload_too_large"
            }
            ReadError::Slow(_) => "request_timeout",
            _ => "bad_request",
        }
    }
}

/// Reads the next event. `Closed` when the connection ends between events; an end inside one
/// is an I/O error.
pub async fn read_event<R: AsyncBufRead + Unpin>(reader: &mut R) -> Result<Event, ReadError> {
    let line = read_header_line(reader).await?;
    let header: Value =
        serde_json::from_slice(&line).map_err(|e| ReadError::Malformed(e.to_string()))?;
    let Value::Object(mut header) = header else {
        return Err(ReadError::Malformed("not an object".into()));
    };
    let kind = match header.remove("type") {
        Some(Value::String(kind)) => kind,
        _ => return Err(ReadError::Malformed("no string 'type'".into())),
    };
    let mut data = match header.remove("data") {
        Some(Value::Object(data)) => data,
        None | Some(Value::Null) => Map::new(),
        Some(_) => return Err(ReadError::Malformed("'data' is not an object".into())),
    };
    let data_length = length(&header, "data_length")?;
    let payload_length = length(&header, "payload_length")?;
    if data_length > MAX_DATA_BYTES as u64 {
        return Err(ReadError::DataTooLong(data_length));
    }
    if payload_length > MAX_PAYLOAD_BYTES as u64 {
        return Err(ReadError::PayloadTooLong(payload_length));
    }
    if data_length > 0 {
        let mut bytes = vec![0; data_length as usize];
        reader.read_exact(&mut bytes).await?;
        match serde_json::from_slice(&bytes) {
            Ok(Value::Object(more)) => data.extend(more),
            Ok(_) => return Err(ReadError::MalformedData("not an object".into())),
            Err(e) => return Err(ReadError::MalformedData(e.to_string())),
        }
    }
    let payload = if payload_length > 0 {
        let mut bytes = vec![0; payload_length as usize];
        reader.read_exact(&mut bytes).await?;
        Some(bytes)
    } else {
        None
    };
    Ok(Event {
        kind,
        data,
        payload,
    })
}

/// A length field of the header: absent or null is 0; anything but a whole number is malformed.
fn length(header: &Map<String, Value>, key: &str) -> Result<u64, ReadError> {
    match header.get(key) {
        None | Some(Value::Null) => Ok(0),
        Some(value) => value
            .as_u64()
            .ok_or_else(|| ReadError::Malformed(format!("'{key}' is not a whole number"))),
    }
}

/// The bytes of one header line, without its newline, never more than [`MAX_HEADER_BYTES`]
/// held. Blank lines between events are skipped.
async fn read_header_line<R: AsyncBufRead + Unpin>(reader: &mut R) -> Result<Vec<u8>, ReadError> {
    let mut line = Vec::new();
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Err(if line.is_empty() {
                ReadError::Closed
            } else {
                ReadError::Io(std::io::ErrorKind::UnexpectedEof.into())
            });
        }
        let (taken, ended) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (at + 1, true),
            None => (available.len(), false),
        };
        if line.len() + taken > MAX_HEADER_BYTES {
            return Err(ReadError::HeaderTooLong);
        }
        line.extend_from_slice(&available[..taken]);
        reader.consume(taken);
        if ended {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                line.clear();
                continue;
            }
            return Ok(line);
        }
    }
}

/// Writes `event` as the `wyoming` package does: the data after the header, its length in
/// `data_length`.
pub async fn write_event<W: AsyncWrite + Unpin>(
    writer: &mut W,
    event: &Event,
) -> std::io::Result<()> {
    let mut header = Map::new();
    header.insert("type".into(), Value::String(event.kind.clone()));
    header.insert("version".into(), Value::String(PROTOCOL_VERSION.into()));
    let data = if event.data.is_empty() {
        None
    } else {
        let bytes = serde_json::to_vec(&event.data).map_err(std::io::Error::other)?;
        header.insert("data_length".into(), Value::from(bytes.len()));
        Some(bytes)
    };
    if let Some(payload) = &event.payload {
        header.insert("payload_length".into(), Value::from(payload.len()));
    }
    let mut out = serde_json::to_vec(&header).map_err(std::io::Error::other)?;
    out.push(b'\n');
    if let Some(data) = data {
        out.extend_from_slice(&data);
    }
    if let Some(payload) = &event.payload {
        out.extend_from_slice(payload);
    }
    writer.write_all(&out).await?;
    writer.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tokio::io::BufReader;

    async fn read_all(bytes: &[u8]) -> Vec<Result<Event, String>> {
        let mut reader = BufReader::new(bytes);
        let mut events = Vec::new();
        loop {
            match read_event(&mut reader).await {
                Err(ReadError::Closed) => return events,
                Err(err) => {
                    events.push(Err(err.to_string()));
                    return events;
                }
                Ok(event) => events.push(Ok(event)),
            }
        }
    }

    #[tokio::test]
    async fn events_written_are_read_back_with_data_and_payload() {
        let mut chunk = Event::new(
            "audio-chunk",
            json!({"rate": 16000, "width": 2, "channels": 1}),
        );
        chunk.payload = Some(vec![1, 2, 3, 4]);
        let events = [
            Event::new("describe", json!({})),
            Event::new(
                "transcript",
                json!({"text": "Grüße, ünïcödé", "language": "de"}),
            ),
            chunk,
        ];
        let mut bytes = Vec::new();
        for event in &events {
            write_event(&mut bytes, event).await.unwrap();
        }
        let first_line = bytes.split(|&b| b == b'\n').next().unwrap();
        let header: Value = serde_json::from_slice(first_line).unwrap();
        assert_eq!(
            header,
            json!({"type": "describe", "version": PROTOCOL_VERSION})
        );
        let read: Vec<Event> = read_all(&bytes)
            .await
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(read, events);
    }

    #[tokio::test]
    async fn data_inline_and_after_the_header_are_merged() {
        let data = br#"{"language": "en"}"#;
        let bytes = format!(
            "{{\"type\": \"transcribe\", \"data\": {{\"name\": \"tiny.en\"}}, \"data_length\": {}}}\n",
            data.len()
        );
        let mut stream = bytes.into_bytes();
        stream.extend_from_slice(data);
        let read = read_all(&stream).await;
        let event = read[0].as_ref().unwrap();
        assert_eq!(event.text("name"), Some("tiny.en"));
        assert_eq!(event.text("language"), Some("en"));
    }

    #[tokio::test]
    async fn lengths_over_the_limits_are_refused_before_anything_is_read() {
        let huge = b"{\"type\": \"audio-chunk\", \"payload_length\": 2000000000}\n";
        let read = read_all(huge).await;
        assert_eq!(read.len(), 1);
        assert!(
            read[0]
                .as_ref()
                .unwrap_err()
                .contains("payload_length 2000000000")
        );
        let data = b"{\"type\": \"transcribe\", \"data_length\": 100000}\n";
        assert!(
            read_all(data).await[0]
                .as_ref()
                .unwrap_err()
                .contains("data_length 100000")
        );
        let long = vec![b'x'; MAX_HEADER_BYTES + 10];
        let err = read_all(&long).await;
        assert!(
            err[0].as_ref().unwrap_err().contains("header line"),
            "{err:?}"
        );
    }

    #[tokio::test]
    async fn malformed_headers_and_data_are_errors() {
        for bytes in [
            &b"not json\n"[..],
            b"[1, 2]\n",
            b"{\"data\": {}}\n",
            b"{\"type\": 5}\n",
            b"{\"type\": \"ping\", \"data\": [1]}\n",
            b"{\"type\": \"ping\", \"payload_length\": -1}\n",
            b"{\"type\": \"ping\", \"data_length\": 2}\n[]",
            b"{\"type\": \"ping\", \"data_length\": 4}\n{\"a\"",
        ] {
            let read = read_all(bytes).await;
            assert!(
                read[0].is_err(),
                "{}: {read:?}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    #[tokio::test]
    async fn blank_lines_between_events_are_skipped_and_the_end_is_closed() {
        let read = read_all(b"\n\r\n{\"type\": \"ping\"}\r\n\n").await;
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].as_ref().unwrap().kind, "ping");
    }
}
