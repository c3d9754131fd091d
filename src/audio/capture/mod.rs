//! The capture port: a microphone or system-audio source that delivers mono samples as they are
//! captured. Adapters: `sim` (the verbatim-sim devices) and `cpal` (real devices).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

#[cfg(feature = "capture")]
pub mod cpal;
pub mod sim;

/// Which source a device stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SourceKind {
    Microphone,
    SystemAudio,
}

impl fmt::Display for SourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SourceKind::Microphone => "microphone",
            SourceKind::SystemAudio => "system audio source",
        })
    }
}

/// Why a source cannot deliver audio. The messages are what the API answers with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CaptureError {
    /// There is no such device (409 at start).
    #[error("No {kind} available")]
    NotAvailable { kind: SourceKind },
    /// The device exists but could not be opened.
    #[error("Could not open the {kind}: {reason}")]
    OpenFailed { kind: SourceKind, reason: String },
    /// The device went away during capture; what it captured before has been delivered.
    #[error("The {kind} was lost during capture: {reason}")]
    Lost { kind: SourceKind, reason: String },
}

/// A capture device. Opening it starts capturing at once.
pub trait AudioSource: Send + Sync {
    fn kind(&self) -> SourceKind;

    /// Starts a capture; [`CaptureError::NotAvailable`] when there is no such device.
    fn open(&self) -> Result<Box<dyn CaptureStream>, CaptureError>;
}

/// A running capture; dropping it stops the device.
pub trait CaptureStream: Send {
    /// The rate of the samples [`read`](CaptureStream::read) delivers, Hz.
    fn sample_rate(&self) -> u32;

    /// Waits at most `timeout` for captured audio and appends what there is (mono, -1..1) to
    /// `out`. Samples the device dropped (an overrun) are delivered as silence so the timeline
    /// stays intact. Once a lost device has delivered everything, returns
    /// [`CaptureError::Lost`].
    fn read(&mut self, out: &mut Vec<f32>, timeout: Duration) -> Result<(), CaptureError>;
}

/// The two capture sources the Recorder and dictation use.
#[derive(Clone)]
pub struct Devices {
    pub microphone: Arc<dyn AudioSource>,
    pub system_audio: Arc<dyn AudioSource>,
}

impl Devices {
    pub fn source(&self, kind: SourceKind) -> &Arc<dyn AudioSource> {
        match kind {
            SourceKind::Microphone => &self.microphone,
            SourceKind::SystemAudio => &self.system_audio,
        }
    }
}

/// A source that is never there: what a build or host without capture support offers.
pub struct Unavailable {
    pub kind: SourceKind,
}

impl AudioSource for Unavailable {
    fn kind(&self) -> SourceKind {
        self.kind
    }

    fn open(&self) -> Result<Box<dyn CaptureStream>, CaptureError> {
        Err(CaptureError::NotAvailable { kind: self.kind })
    }
}

/// The machine's microphone (`preferred_microphone` by name when connected, see
/// [`cpal::CpalSource::microphone`]) and system audio. Without the `capture` feature, sources that
/// are never available.
#[cfg(feature = "capture")]
pub fn real_devices(preferred_microphone: Option<String>) -> Devices {
    Devices {
        microphone: Arc::new(cpal::CpalSource::microphone(preferred_microphone)),
        system_audio: Arc::new(cpal::CpalSource::system_audio()),
    }
}

/// The machine's microphone and system audio: never available in a build without the `capture`
/// feature.
#[cfg(not(feature = "capture"))]
pub fn real_devices(preferred_microphone: Option<String>) -> Devices {
    let _ = preferred_microphone;
    tracing::warn!(
        "audio capture is not in this build (built without the `capture` feature): \
         no microphone or system audio"
    );
    Devices {
        microphone: Arc::new(Unavailable {
            kind: SourceKind::Microphone,
        }),
        system_audio: Arc::new(Unavailable {
            kind: SourceKind::SystemAudio,
        }),
    }
}

/// A capture stream resampled to a fixed rate as it is read.
pub struct Feed {
    stream: Box<dyn CaptureStream>,
    resampler: crate::audio::resample::StreamingResampler,
    raw: Vec<f32>,
}

impl Feed {
    /// Reads `stream` and delivers its audio at `rate` Hz.
    pub fn new(stream: Box<dyn CaptureStream>, rate: u32) -> Feed {
        let from = stream.sample_rate().max(1);
        Feed {
            stream,
            resampler: crate::audio::resample::StreamingResampler::between(from, rate),
            raw: Vec::new(),
        }
    }

    /// Waits at most `timeout` for audio and appends it, resampled, to `out`; fails once the
    /// device is lost (everything it captured has been delivered by then).
    pub fn pull(&mut self, out: &mut Vec<f32>, timeout: Duration) -> Result<(), CaptureError> {
        self.raw.clear();
        let read = self.stream.read(&mut self.raw, timeout);
        self.resampler.push(&self.raw);
        out.extend(self.resampler.take_output());
        read
    }

    /// Stops the device and appends the resampler's tail to `out`.
    pub fn finish(self, out: &mut Vec<f32>) {
        drop(self.stream);
        out.extend(self.resampler.finish());
    }
}
