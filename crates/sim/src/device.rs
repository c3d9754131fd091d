//! Simulated capture devices (microphone and system audio): each plays its playlist as time passes
//! on a clock and hands out what has been "captured" in chunks of any size, with scripted faults:
//! no device, device lost after N seconds, buffer overruns.

use std::fmt;
use std::sync::{Arc, Mutex};

use crate::clock::Clock;
use crate::playlist::Playlist;

/// Which source a device stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    Microphone,
    SystemAudio,
}

impl fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeviceKind::Microphone => "microphone",
            DeviceKind::SystemAudio => "system audio source",
        })
    }
}

/// Where a new capture starts in the playlist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Playback {
    /// Every capture plays the items from the first.
    #[default]
    Restart,
    /// A capture goes on where the previous one stopped (the playlist pauses in between).
    Resume,
}

/// Faults of a device, timed from the start of each capture.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Faults {
    /// The device disappears after this many seconds of capture.
    pub lost_after: Option<f64>,
    /// Buffer overruns, in time order, not overlapping.
    pub overruns: Vec<OverrunFault>,
}

/// A scripted overrun: the samples captured from `at` seconds on, `samples` of them, are dropped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OverrunFault {
    pub at: f64,
    pub samples: u64,
}

/// Why a device cannot deliver audio.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DeviceError {
    #[error("no {0} is available")]
    NotFound(DeviceKind),
    #[error("the {kind} was disconnected after {seconds} s of capture")]
    Lost { kind: DeviceKind, seconds: f64 },
}

/// An overrun as the reader sees it: `dropped` samples are missing between the samples delivered
/// so far (`delivered_before`) and the next one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overrun {
    pub delivered_before: u64,
    pub dropped: u64,
}

/// What one read returns.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Chunk {
    /// Mono samples at the device's rate, -1..1.
    pub samples: Vec<f32>,
    /// Overruns that happened within this chunk.
    pub overruns: Vec<Overrun>,
}

/// A simulated device. Opening it starts a [`Capture`].
#[derive(Debug, Clone)]
pub struct SimDevice {
    kind: DeviceKind,
    present: bool,
    playlist: Arc<Playlist>,
    faults: Faults,
    playback: Playback,
    clock: Arc<dyn Clock>,
    /// Playlist position where the last capture stopped (used by [`Playback::Resume`]).
    stopped_at: Arc<Mutex<u64>>,
}

impl SimDevice {
    /// A device of `kind`; when `present` is false every open fails.
    pub fn new(
        kind: DeviceKind,
        present: bool,
        playlist: Playlist,
        faults: Faults,
        playback: Playback,
        clock: Arc<dyn Clock>,
    ) -> Self {
        SimDevice {
            kind,
            present,
            playlist: Arc::new(playlist),
            faults,
            playback,
            clock,
            stopped_at: Arc::new(Mutex::new(0)),
        }
    }

    /// Which source this device stands for.
    pub fn kind(&self) -> DeviceKind {
        self.kind
    }

    /// False when the scenario says there is no such device.
    pub fn is_present(&self) -> bool {
        self.present
    }

    /// The rate the device delivers at; resampling is the reader's job.
    pub fn sample_rate(&self) -> u32 {
        self.playlist.sample_rate()
    }

    /// Starts capturing now; fails with [`DeviceError::NotFound`] when the device is absent.
    pub fn open(&self) -> Result<Capture, DeviceError> {
        if !self.present {
            return Err(DeviceError::NotFound(self.kind));
        }
        let rate = f64::from(self.sample_rate());
        let base = match self.playback {
            Playback::Restart => 0,
            Playback::Resume => *self.stopped_at.lock().unwrap_or_else(|e| e.into_inner()),
        };
        Ok(Capture {
            device: self.clone(),
            started: self.clock.now(),
            base,
            position: 0,
            delivered: 0,
            lost_at: self.faults.lost_after.map(|s| (s * rate).round() as u64),
            gaps: self
                .faults
                .overruns
                .iter()
                .map(|o| ((o.at * rate).round() as u64, o.samples))
                .collect(),
            next_gap: 0,
        })
    }
}

/// A running capture. Position counts samples of capture time since it started, dropped ones
/// included; what the reader gets is that stream less the overruns, cut short if the device is lost.
#[derive(Debug)]
pub struct Capture {
    device: SimDevice,
    started: std::time::Duration,
    /// Playlist position of capture position 0.
    base: u64,
    position: u64,
    delivered: u64,
    lost_at: Option<u64>,
    /// (start, length) of each overrun, in capture positions.
    gaps: Vec<(u64, u64)>,
    next_gap: usize,
}

impl Capture {
    /// The rate the device delivers at.
    pub fn sample_rate(&self) -> u32 {
        self.device.sample_rate()
    }

    /// Samples delivered so far.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Capture positions that time has reached: `floor(elapsed * rate)`.
    fn available(&self) -> u64 {
        let elapsed = self.device.clock.now().saturating_sub(self.started);
        (elapsed.as_nanos() * u128::from(self.sample_rate()) / 1_000_000_000) as u64
    }

    /// Everything captured by now that has not been read, at most `max` samples. Once a lost
    /// device has delivered all it captured, every read fails with [`DeviceError::Lost`].
    pub fn read(&mut self, max: usize) -> Result<Chunk, DeviceError> {
        let end = self.available().min(self.lost_at.unwrap_or(u64::MAX));
        if self.lost_at == Some(self.position) {
            return Err(DeviceError::Lost {
                kind: self.device.kind,
                seconds: self.position as f64 / f64::from(self.sample_rate()),
            });
        }
        let mut chunk = Chunk::default();
        while chunk.samples.len() < max && self.position < end {
            if let Some(&(at, len)) = self.gaps.get(self.next_gap)
                && at <= self.position
            {
                self.next_gap += 1;
                let resume = (at + len).max(self.position);
                let resume = resume.min(self.lost_at.unwrap_or(u64::MAX));
                chunk.overruns.push(Overrun {
                    delivered_before: self.delivered,
                    dropped: resume - self.position,
                });
                self.position = resume;
                continue;
            }
            let next_gap = self.gaps.get(self.next_gap).map_or(u64::MAX, |g| g.0);
            let room = (max - chunk.samples.len()) as u64;
            let take = (end.min(next_gap) - self.position).min(room) as usize;
            let from = chunk.samples.len();
            chunk.samples.resize(from + take, 0.0);
            self.device
                .playlist
                .fill(self.base + self.position, &mut chunk.samples[from..]);
            self.position += take as u64;
            self.delivered += take as u64;
        }
        Ok(chunk)
    }

    /// Everything captured by now that has not been read.
    pub fn read_available(&mut self) -> Result<Chunk, DeviceError> {
        self.read(usize::MAX)
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        *self
            .device
            .stopped_at
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = self.base + self.position;
    }
}
