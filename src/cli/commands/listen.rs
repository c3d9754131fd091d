//! `verbatim listen`: streams the microphone (or a file, at real time) through the realtime
//! route, `GET /v1/realtime?intent=transcription`, and prints each turn's text as it comes.
//! Ctrl-C (or the file's end) commits what is still being said and waits for its text.

use std::io::{IsTerminal, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use base64::Engine as _;
use clap::Args;
use serde_json::{Value, json};
use tungstenite::client::IntoClientRequest;
use tungstenite::{Message, WebSocket};

use super::super::{CliError, Client, Globals};
use crate::wire::ErrorBody;

/// The rate audio is sent at (the session is told so).
const RATE: u32 = 16_000;
/// Audio goes out in messages of this length.
const BLOCK: Duration = Duration::from_millis(100);
/// How long the last turns may take to come back after the audio ends.
const LAST_TEXT_WAIT: Duration = Duration::from_secs(60);

#[derive(Debug, Args)]
pub struct ListenArgs {
    /// Stream this audio file (any format `transcribe` takes) instead of the microphone.
    #[arg(long)]
    pub file: Option<PathBuf>,
    /// With --file: how many times real time to send it at (0: as fast as the server takes it).
    #[arg(long, default_value_t = 1.0, requires = "file")]
    pub speed: f64,
    /// Model id (an installed one; otherwise the selected model).
    #[arg(long)]
    pub model: Option<String>,
    /// Spoken language code (default: detect).
    #[arg(long)]
    pub language: Option<String>,
    /// Text that guides spelling and style.
    #[arg(long)]
    pub prompt: Option<String>,
    /// Save each turn's text to history (a stream is not saved by default).
    #[arg(long)]
    pub save: bool,
    /// Silence (ms) that ends a turn.
    #[arg(long, value_name = "MS")]
    pub silence: Option<u32>,
    /// The microphone to use, by name (default: the system's).
    #[arg(long, value_name = "NAME", conflicts_with = "file")]
    pub microphone: Option<String>,
}

pub fn run(globals: &Globals, args: ListenArgs) -> Result<(), CliError> {
    let client = Client::from_globals(globals)?;
    let mut source = match &args.file {
        Some(path) => Source::file(path, args.speed)?,
        None => Source::microphone(args.microphone.clone())?,
    };
    let mut session = RealtimeClient::connect(&client)?;
    session.send(&session_update(&args))?;
    let mut printer = Printer::new(globals.json);
    stop_on_interrupt();
    let mut block = Vec::new();
    while !STOP.load(Ordering::Relaxed) && source.next(&mut block)? {
        session.append(&block)?;
        block.clear();
        session.read_available(&mut printer)?;
    }
    // What is still being said becomes a turn; then every turn's text is waited for.
    session.send(&json!({"type": "input_audio_buffer.commit", "event_id": "listen-end"}))?;
    session.finish(&mut printer)
}

/// The session's settings from the command line.
fn session_update(args: &ListenArgs) -> Value {
    let mut detection = json!({"type": "server_vad"});
    if let Some(ms) = args.silence {
        detection["silence_duration_ms"] = json!(ms);
    }
    let mut session = json!({
        "type": "transcription",
        "audio": {"input": {
            "format": {"type": "audio/pcm", "rate": RATE},
            "transcription": {
                "model": args.model,
                "language": args.language,
                "prompt": args.prompt,
            },
            "turn_detection": detection,
        }},
    });
    if args.save {
        session["include"] = json!([crate::realtime::config::INCLUDE_HISTORY]);
    }
    json!({"type": "session.update", "session": session})
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn interrupted(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// The first Ctrl-C ends the audio (its text still comes); a second ends the command. Calls
/// the signal interrupts start again (`SA_RESTART`), so no read or write fails because of it.
fn stop_on_interrupt() {
    extern "C" fn again(_: libc::c_int) {
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(130) }
    }
    extern "C" fn first(signal: libc::c_int) {
        interrupted(signal);
        on_interrupt(again);
    }
    on_interrupt(first);
}

fn on_interrupt(handler: extern "C" fn(libc::c_int)) {
    // SAFETY: a zeroed sigaction with an empty mask and a plain handler function is valid;
    // sigaction is async-signal-safe, so the handler may re-arm itself.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler as *const () as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
    }
}

/// Where the audio comes from: a file paced at real time (times `speed`), or the microphone.
enum Source {
    File {
        samples: Vec<f32>,
        sent: usize,
        started: Instant,
        speed: f64,
    },
    #[cfg(feature = "capture")]
    Microphone(crate::audio::capture::Feed),
}

impl Source {
    fn file(path: &std::path::Path, speed: f64) -> Result<Source, CliError> {
        if !speed.is_finite() || speed < 0.0 {
            return Err(CliError::Local("--speed must be 0 or more".into()));
        }
        let decoded = crate::audio::decode::decode_file(path, None)
            .map_err(|e| CliError::Local(format!("{}: {e}", path.display())))?;
        Ok(Source::File {
            samples: decoded.samples,
            sent: 0,
            started: Instant::now(),
            speed,
        })
    }

    #[cfg(feature = "capture")]
    fn microphone(name: Option<String>) -> Result<Source, CliError> {
        let devices = crate::audio::capture::real_devices(name);
        let stream = devices.microphone.open().map_err(|e| {
            CliError::Local(format!("{e}. `verbatim doctor` checks the microphone."))
        })?;
        Ok(Source::Microphone(crate::audio::capture::Feed::new(
            stream, RATE,
        )))
    }

    #[cfg(not(feature = "capture"))]
    fn microphone(_name: Option<String>) -> Result<Source, CliError> {
        Err(CliError::Local(
            "this build has no audio capture (the `capture` feature): use --file".into(),
        ))
    }

    /// The next block of audio into `out`; false once there is no more.
    fn next(&mut self, out: &mut Vec<f32>) -> Result<bool, CliError> {
        match self {
            Source::File {
                samples,
                sent,
                started,
                speed,
            } => {
                if *sent >= samples.len() {
                    return Ok(false);
                }
                let block = (RATE as f64 * BLOCK.as_secs_f64()) as usize;
                let end = (*sent + block).min(samples.len());
                if *speed > 0.0 {
                    let due = Duration::from_secs_f64(end as f64 / RATE as f64 / *speed);
                    std::thread::sleep(due.saturating_sub(started.elapsed()));
                }
                out.extend_from_slice(&samples[*sent..end]);
                *sent = end;
                Ok(true)
            }
            #[cfg(feature = "capture")]
            Source::Microphone(feed) => {
                feed.pull(out, BLOCK)
                    .map_err(|e| CliError::Local(e.to_string()))?;
                Ok(true)
            }
        }
    }
}

/// The WebSocket session.
struct RealtimeClient {
    socket: WebSocket<TcpStream>,
    /// Turns committed whose text has not come yet.
    waiting: usize,
}

impl RealtimeClient {
    fn connect(client: &Client) -> Result<RealtimeClient, CliError> {
        let url = format!(
            "{}/v1/realtime?intent=transcription",
            client.base_url().replacen("http://", "ws://", 1)
        );
        let mut request = url.into_client_request().map_err(CliError::local)?;
        if let Some(token) = client.token() {
            let value = format!("Bearer {token}").parse().map_err(CliError::local)?;
            request.headers_mut().insert("authorization", value);
        }
        let cannot_connect = |e: &dyn std::fmt::Display| {
            CliError::CannotConnect(format!(
                "Cannot connect to the Verbatim server at {} ({e}). Is it running? Start it with `verbatim serve`.",
                client.base_url()
            ))
        };
        let address = client.base_url().trim_start_matches("http://").to_string();
        let stream = TcpStream::connect(&address).map_err(|e| cannot_connect(&e))?;
        let (socket, _) = tungstenite::client::client(request, stream).map_err(|e| match e {
            tungstenite::HandshakeError::Failure(tungstenite::Error::Http(response)) => {
                refused(*response)
            }
            tungstenite::HandshakeError::Failure(e) => cannot_connect(&e),
            tungstenite::HandshakeError::Interrupted(_) => cannot_connect(&"interrupted"),
        })?;
        socket
            .get_ref()
            .set_read_timeout(Some(Duration::from_millis(5)))
            .map_err(CliError::local)?;
        Ok(RealtimeClient { socket, waiting: 0 })
    }

    fn send(&mut self, event: &Value) -> Result<(), CliError> {
        self.socket
            .send(Message::text(event.to_string()))
            .map_err(|e| CliError::Local(format!("the session ended: {e}")))
    }

    fn append(&mut self, samples: &[f32]) -> Result<(), CliError> {
        let bytes: Vec<u8> = samples
            .iter()
            .flat_map(|s| ((s.clamp(-1.0, 1.0) * 32_767.0) as i16).to_le_bytes())
            .collect();
        let audio = base64::engine::general_purpose::STANDARD.encode(bytes);
        self.send(&json!({"type": "input_audio_buffer.append", "audio": audio}))
    }

    /// Prints the events already there; fails on the server's errors that end the session.
    fn read_available(&mut self, printer: &mut Printer) -> Result<(), CliError> {
        while let Some(event) = self.read()? {
            self.take(event, printer)?;
        }
        Ok(())
    }

    /// Waits for the text of every turn committed, then closes.
    fn finish(&mut self, printer: &mut Printer) -> Result<(), CliError> {
        // The commit is answered with its turn, or an error when nothing was being said.
        let deadline = Instant::now() + LAST_TEXT_WAIT;
        let mut answered = false;
        while (!answered || self.waiting > 0) && Instant::now() < deadline {
            match self.read()? {
                Some(event) => {
                    let kind = event["type"].as_str().unwrap_or_default();
                    answered |= kind == "input_audio_buffer.committed"
                        || (kind == "error" && event["error"]["event_id"] == "listen-end");
                    if kind == "error" && event["error"]["event_id"] == "listen-end" {
                        continue;
                    }
                    self.take(event, printer)?;
                }
                None => std::thread::sleep(Duration::from_millis(20)),
            }
        }
        let _ = self.socket.close(None);
        let _ = self.socket.flush();
        printer.end();
        Ok(())
    }

    /// The next event if one has come.
    fn read(&mut self) -> Result<Option<Value>, CliError> {
        match self.socket.read() {
            Ok(Message::Text(text)) => Ok(serde_json::from_str(&text).ok()),
            Ok(Message::Close(frame)) => Err(CliError::Local(format!(
                "the server ended the session{}",
                frame.map(|f| format!(": {}", f.reason)).unwrap_or_default()
            ))),
            Ok(_) => Ok(None),
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(CliError::Local(format!("the session ended: {e}"))),
        }
    }

    fn take(&mut self, event: Value, printer: &mut Printer) -> Result<(), CliError> {
        let kind = event["type"].as_str().unwrap_or_default();
        match kind {
            "input_audio_buffer.committed" => self.waiting += 1,
            "conversation.item.input_audio_transcription.completed"
            | "conversation.item.input_audio_transcription.failed" => {
                self.waiting = self.waiting.saturating_sub(1)
            }
            _ => {}
        }
        printer.show(&event);
        if kind == "error" {
            // A session that cannot transcribe (no model, a refused option) is no session.
            printer.end();
            let error = &event["error"];
            return Err(CliError::Server {
                status: if error["type"] == "server_error" {
                    500
                } else {
                    400
                },
                code: error["code"].as_str().unwrap_or("error").into(),
                message: error["message"].as_str().unwrap_or_default().into(),
            });
        }
        Ok(())
    }
}

/// A handshake the server refused: its Error object.
fn refused(response: tungstenite::http::Response<Option<Vec<u8>>>) -> CliError {
    let status = response.status().as_u16();
    let body = response.into_body().unwrap_or_default();
    match serde_json::from_slice::<ErrorBody>(&body) {
        Ok(body) => CliError::Server {
            status,
            code: body.error.code,
            message: body.error.message,
        },
        Err(_) => CliError::Server {
            status,
            code: "unknown".into(),
            message: String::from_utf8_lossy(&body).into_owned(),
        },
    }
}

/// Prints the session: each turn's text on its own line (on a terminal, its deltas as they
/// come); with `--json`, every event as a line.
struct Printer {
    json: bool,
    terminal: bool,
    line_open: bool,
}

impl Printer {
    fn new(json: bool) -> Printer {
        Printer {
            json,
            terminal: std::io::stdout().is_terminal(),
            line_open: false,
        }
    }

    fn show(&mut self, event: &Value) {
        let mut out = std::io::stdout();
        let kind = event["type"].as_str().unwrap_or_default();
        if self.json {
            let _ = writeln!(out, "{event}");
        } else {
            match kind {
                "conversation.item.input_audio_transcription.delta" if self.terminal => {
                    let _ = write!(out, "{}", event["delta"].as_str().unwrap_or_default());
                    self.line_open = true;
                }
                "conversation.item.input_audio_transcription.completed" => {
                    let text = event["transcript"].as_str().unwrap_or_default();
                    if self.terminal {
                        if !self.line_open && !text.is_empty() {
                            let _ = write!(out, "{text}");
                        }
                        if self.line_open || !text.is_empty() {
                            let _ = writeln!(out);
                        }
                    } else if !text.is_empty() {
                        let _ = writeln!(out, "{text}");
                    }
                    self.line_open = false;
                }
                "conversation.item.input_audio_transcription.failed" => {
                    let message = event["error"]["message"].as_str().unwrap_or_default();
                    eprintln!("A turn could not be transcribed: {message}");
                }
                _ => {}
            }
        }
        let _ = out.flush();
    }

    fn end(&mut self) {
        if self.line_open {
            println!();
            self.line_open = false;
        }
    }
}
