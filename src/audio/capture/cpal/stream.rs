//! The reading side of a capture: delivers what the device thread sends, reports a loss once
//! everything before it has been read, and stops the device when dropped.

use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use super::{Event, STOP_TIMEOUT};
use crate::audio::capture::{CaptureError, CaptureStream, SourceKind};

/// A running capture; dropping it stops the device thread.
pub(super) struct CpalStream {
    kind: SourceKind,
    sample_rate: u32,
    events: Receiver<Event>,
    /// A loss seen while samples were being delivered, reported by the next read.
    pending_loss: Option<String>,
    stop: Option<Sender<()>>,
    /// Disconnects when the device thread ends.
    done: Receiver<()>,
    thread: Option<JoinHandle<()>>,
}

impl CpalStream {
    /// The capture whose device thread is `thread`: it sends on `events`, stops when `stop`
    /// disconnects and disconnects `done` when it ends.
    pub(super) fn new(
        kind: SourceKind,
        sample_rate: u32,
        events: Receiver<Event>,
        stop: Sender<()>,
        done: Receiver<()>,
        thread: JoinHandle<()>,
    ) -> Self {
        CpalStream {
            kind,
            sample_rate,
            events,
            pending_loss: None,
            stop: Some(stop),
            done,
            thread: Some(thread),
        }
    }

    fn lost(&self, reason: &str) -> CaptureError {
        CaptureError::Lost {
            kind: self.kind,
            reason: reason.to_owned(),
        }
    }
}

impl CaptureStream for CpalStream {
    fn sample_rate(&self) -> u32 {
        self.sample_rate
    }

    fn read(&mut self, out: &mut Vec<f32>, timeout: Duration) -> Result<(), CaptureError> {
        if let Some(reason) = &self.pending_loss {
            return Err(self.lost(reason));
        }
        let first = match self.events.recv_timeout(timeout) {
            Ok(event) => event,
            Err(RecvTimeoutError::Timeout) => return Ok(()),
            Err(RecvTimeoutError::Disconnected) => {
                self.pending_loss = Some("the capture thread stopped".into());
                return Err(self.lost("the capture thread stopped"));
            }
        };
        let before = out.len();
        let mut next = Some(first);
        while let Some(event) = next {
            match event {
                Event::Samples(samples) => out.extend_from_slice(&samples),
                Event::Lost(reason) => {
                    // Everything captured before the loss has been delivered by now.
                    self.pending_loss = Some(reason);
                    break;
                }
            }
            next = self.events.try_recv().ok();
        }
        match &self.pending_loss {
            Some(reason) if out.len() == before => Err(self.lost(reason)),
            _ => Ok(()),
        }
    }
}

impl Drop for CpalStream {
    fn drop(&mut self) {
        // Disconnecting the stop channel lets the device thread drop the cpal stream.
        self.stop.take();
        match self.done.recv_timeout(STOP_TIMEOUT) {
            Err(RecvTimeoutError::Disconnected) => {
                if let Some(thread) = self.thread.take() {
                    let _ = thread.join();
                }
            }
            _ => tracing::warn!(
                "the {} did not stop within {} s; leaving it to stop on its own",
                self.kind,
                STOP_TIMEOUT.as_secs()
            ),
        }
    }
}
