//! `verbatim listen`: streams the microphone (or a file, at real time) through the realtime
//! route, `GET /v1/realtime?intent=transcription`, and prints each turn's text as it comes.
//! Ctrl-C (or the file's end) commits what is still being said and waits for its text.

mod printer;
mod session;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::{Value, json};

use super::super::{CliError, Client, Globals};
use printer::Printer;
use session::RealtimeClient;

/// The rate audio is sent at (the session is told so).
const RATE: u32 = 16_000;
/// Audio goes out in messages of this length.
const BLOCK: Duration = Duration::from_millis(100);

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
