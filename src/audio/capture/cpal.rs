//! Real capture devices through cpal: the PulseAudio host when a sound server answers (PipeWire
//! included, through pipewire-pulse), ALSA otherwise. Each capture runs on a thread of its own that
//! owns the cpal stream and hands mono `f32` samples over a channel.

pub mod alsa_messages;
mod device_thread;
mod devices;
mod downmix;
mod stream;

pub use devices::{Inventory, inventory};

use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use super::{AudioSource, CaptureError, CaptureStream, SourceKind};
use stream::CpalStream;

/// The rate asked for when the device offers it (else the device's own rate is used).
const PREFERRED_RATE: u32 = 48_000;
/// Audio per device callback: short, so a stopped capture loses at most this much at its end.
const PERIOD: Duration = Duration::from_millis(40);
/// Longest wait for a device to start; `open` fails past it instead of hanging.
const OPEN_TIMEOUT: Duration = Duration::from_secs(5);
/// What cpal itself may spend creating the stream (inside [`OPEN_TIMEOUT`]).
const BUILD_TIMEOUT: Duration = Duration::from_secs(3);
/// Longest wait, when a stream is dropped, for its device to be released.
const STOP_TIMEOUT: Duration = Duration::from_secs(2);
/// Longest gap an overrun is filled with silence for (a longer one is a clock jump, not lost audio).
const MAX_GAP: Duration = Duration::from_secs(10);

/// A microphone or the system audio, found anew on each [`open`](AudioSource::open) so that a
/// device plugged in (or a default changed) after start-up is used.
pub struct CpalSource {
    kind: SourceKind,
    preferred: Option<String>,
}

impl CpalSource {
    /// The microphone: the input device named `preferred` (its PulseAudio or ALSA name, or the
    /// description a device list shows, the first matching exactly, else ignoring case), else the
    /// default input.
    ///
    /// A preferred device that is not connected does not stop a capture: it falls back to the
    /// default input and logs a warning naming it, as an unplugged headset would leave a user with
    /// the laptop's microphone rather than with no dictation at all. In the same spirit, when a
    /// device goes away during a capture PulseAudio moves the stream to the default input and the
    /// capture goes on; it ends with [`CaptureError::Lost`] when the server itself ends the stream
    /// (or, on ALSA, when the device goes). A monitor source (what a sink plays) is never taken as
    /// the microphone, even as the default input or by name.
    pub fn microphone(preferred: Option<String>) -> CpalSource {
        let preferred = preferred
            .map(|name| name.trim().to_owned())
            .filter(|name| !name.is_empty());
        CpalSource {
            kind: SourceKind::Microphone,
            preferred,
        }
    }

    /// The system audio: the monitor of the default output (with PulseAudio, the source named
    /// `<default sink>.monitor`), else any monitor source. ALSA alone has none.
    pub fn system_audio() -> CpalSource {
        CpalSource {
            kind: SourceKind::SystemAudio,
            preferred: None,
        }
    }
}

impl AudioSource for CpalSource {
    fn kind(&self) -> SourceKind {
        self.kind
    }

    fn open(&self) -> Result<Box<dyn CaptureStream>, CaptureError> {
        let kind = self.kind;
        let preferred = self.preferred.clone();
        let (ready_tx, ready_rx) = mpsc::sync_channel(1);
        let (events_tx, events_rx) = mpsc::channel();
        let (stop_tx, stop_rx) = mpsc::channel::<()>();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(format!("capture-{}", thread_name(kind)))
            .spawn(move || {
                device_thread::run_device(kind, preferred.as_deref(), ready_tx, events_tx, stop_rx);
                drop(done_tx);
            })
            .map_err(|e| CaptureError::OpenFailed {
                kind,
                reason: format!("no capture thread: {e}"),
            })?;
        match ready_rx.recv_timeout(OPEN_TIMEOUT) {
            Ok(Ok(sample_rate)) => Ok(Box::new(CpalStream::new(
                kind,
                sample_rate,
                events_rx,
                stop_tx,
                done_rx,
                thread,
            ))),
            Ok(Err(err)) => Err(err),
            // The thread stops the device if it ever starts: the receiver is gone.
            Err(RecvTimeoutError::Timeout) => Err(CaptureError::OpenFailed {
                kind,
                reason: format!(
                    "the device did not start within {} s",
                    OPEN_TIMEOUT.as_secs()
                ),
            }),
            Err(RecvTimeoutError::Disconnected) => Err(CaptureError::OpenFailed {
                kind,
                reason: "the capture thread stopped".into(),
            }),
        }
    }
}

fn thread_name(kind: SourceKind) -> &'static str {
    match kind {
        SourceKind::Microphone => "microphone",
        SourceKind::SystemAudio => "system-audio",
    }
}

/// What the device thread sends to the reading side.
enum Event {
    Samples(Vec<f32>),
    Lost(String),
}
