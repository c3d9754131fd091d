//! The simulated devices of verbatim-sim as capture sources: playback on the simulation's clock,
//! with the scenario's faults (no device, device lost, overruns filled with silence).

use std::sync::Arc;
use std::time::Duration;

use verbatim_sim::{Capture, Clock, DeviceError, DeviceKind, SimDevice};

use super::{AudioSource, CaptureError, CaptureStream, SourceKind};

/// How often a read looks at the device when nothing has been captured yet.
const POLL: Duration = Duration::from_millis(10);

pub struct SimSource {
    device: SimDevice,
    clock: Arc<dyn Clock>,
}

impl SimSource {
    pub fn new(device: SimDevice, clock: Arc<dyn Clock>) -> SimSource {
        SimSource { device, clock }
    }
}

fn kind_of(kind: DeviceKind) -> SourceKind {
    match kind {
        DeviceKind::Microphone => SourceKind::Microphone,
        DeviceKind::SystemAudio => SourceKind::SystemAudio,
    }
}

fn capture_error(kind: SourceKind, err: DeviceError) -> CaptureError {
    match err {
        DeviceError::NotFound(_) => CaptureError::NotAvailable { kind },
        DeviceError::Lost { seconds, .. } => CaptureError::Lost {
            kind,
            reason: format!("disconnected after {seconds:.1} s"),
        },
    }
}

impl AudioSource for SimSource {
    fn kind(&self) -> SourceKind {
        kind_of(self.device.kind())
    }

    fn open(&self) -> Result<Box<dyn CaptureStream>, CaptureError> {
        let kind = self.kind();
        let capture = self.device.open().map_err(|e| capture_error(kind, e))?;
        Ok(Box::new(SimStream {
            kind,
            capture,
            clock: Arc::clone(&self.clock),
        }))
    }
}

struct SimStream {
    kind: SourceKind,
    capture: Capture,
    clock: Arc<dyn Clock>,
}

impl CaptureStream for SimStream {
    fn sample_rate(&self) -> u32 {
        self.capture.sample_rate()
    }

    fn read(&mut self, out: &mut Vec<f32>, timeout: Duration) -> Result<(), CaptureError> {
        let deadline = self.clock.now() + timeout;
        loop {
            let chunk = self
                .capture
                .read_available()
                .map_err(|e| capture_error(self.kind, e))?;
            if !chunk.samples.is_empty() || !chunk.overruns.is_empty() {
                let base = self.capture.delivered() - chunk.samples.len() as u64;
                let mut from = 0usize;
                for overrun in &chunk.overruns {
                    let at = (overrun.delivered_before - base) as usize;
                    out.extend_from_slice(&chunk.samples[from..at]);
                    out.resize(out.len() + overrun.dropped as usize, 0.0);
                    from = at;
                }
                out.extend_from_slice(&chunk.samples[from..]);
                return Ok(());
            }
            let now = self.clock.now();
            if now >= deadline {
                return Ok(());
            }
            self.clock.sleep((deadline - now).min(POLL));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use verbatim_sim::{
        After, Corpus, Faults, Item, OverrunFault, Playback, Playlist, VirtualClock,
    };

    fn device(clock: &Arc<VirtualClock>, faults: Faults, present: bool) -> SimSource {
        let corpus = Corpus::from_clips(std::path::Path::new("."), Vec::new()).unwrap();
        let tone = Item::Tone {
            hz: 440.0,
            seconds: 0.5,
            volume: 0.5,
        };
        let playlist = Playlist::new(&[tone], &corpus, 8_000, After::Loop).unwrap();
        let clock: Arc<dyn Clock> = clock.clone();
        let device = SimDevice::new(
            DeviceKind::Microphone,
            present,
            playlist,
            faults,
            Playback::Restart,
            Arc::clone(&clock),
        );
        SimSource::new(device, clock)
    }

    #[test]
    fn overruns_become_silence_and_a_lost_device_ends_the_stream() {
        let clock = Arc::new(VirtualClock::new());
        let faults = Faults {
            lost_after: Some(1.0),
            overruns: vec![OverrunFault {
                at: 0.25,
                samples: 800,
            }],
        };
        let source = device(&clock, faults, true);
        let mut stream = source.open().unwrap();
        clock.advance(Duration::from_secs(2));
        let mut out = Vec::new();
        stream.read(&mut out, Duration::ZERO).unwrap();
        assert_eq!(out.len(), 8_000, "one second, the overrun filled in");
        assert!(out[2_000..2_800].iter().all(|&s| s == 0.0));
        assert!(out[..2_000].iter().any(|&s| s != 0.0));
        let err = stream.read(&mut out, Duration::ZERO).unwrap_err();
        assert!(matches!(
            err,
            CaptureError::Lost {
                kind: SourceKind::Microphone,
                ..
            }
        ));
    }

    #[test]
    fn an_absent_device_is_not_available() {
        let clock = Arc::new(VirtualClock::new());
        let err = device(&clock, Faults::default(), false)
            .open()
            .err()
            .unwrap();
        assert_eq!(err.to_string(), "No microphone available");
    }
}
