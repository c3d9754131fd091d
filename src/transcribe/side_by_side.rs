//! A file's chunks heard side by side: an engine that hears several chunks at once
//! ([`Engine::chunks_at_once`]) gets them one per call, on that many worker threads, each call
//! on its share of the engine's threads. A chunk goes to the first worker free, so no worker
//! waits for another to finish a longer chunk; at most one chunk waits for a worker (memory
//! holds a few chunks whatever the length of the audio), and what was heard comes back in the
//! audio's order.

use std::collections::BTreeMap;
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::audio::vad::Timeline;
use crate::engine::{Engine, EngineError, EngineOutput, EngineRequest};

/// What every call of one transcription shares: the engine, the model, and the request each
/// chunk's audio goes into (its samples and chunks are the chunk's).
#[derive(Clone)]
pub(super) struct CallSettings {
    pub engine: Arc<dyn Engine>,
    pub model: &'static str,
    pub request: EngineRequest<'static>,
}

/// One chunk for a worker: its place in the audio's order and its samples.
struct Job {
    order: u64,
    samples: Vec<f32>,
}

/// What a worker heard in the chunk of a place.
type Answer = (u64, Result<EngineOutput, EngineError>);

/// The workers of one transcription and the chunks they have not handed back yet.
pub(super) struct SideBySide {
    jobs: Option<SyncSender<Job>>,
    heard: Receiver<Answer>,
    workers: Vec<JoinHandle<()>>,
    /// Chunks given out, and where in the audio each not handed back yet lies.
    given: u64,
    starts: BTreeMap<u64, Timeline>,
    /// Results that came before one of an earlier chunk.
    early: BTreeMap<u64, Result<EngineOutput, EngineError>>,
    /// Since when some chunk has been out, and the time chunks were out before.
    busy_since: Option<Instant>,
    busy: Duration,
}

impl SideBySide {
    /// `count` workers (at least one) for the calls `settings` describes.
    pub fn new(settings: CallSettings, count: usize) -> SideBySide {
        let count = count.max(1);
        let (jobs, line) = sync_channel::<Job>(1);
        let line = Arc::new(Mutex::new(line));
        let (answers, heard) = channel();
        let workers: Vec<JoinHandle<()>> = (0..count)
            .filter_map(|n| {
                let (line, answers, settings) = (line.clone(), answers.clone(), settings.clone());
                std::thread::Builder::new()
                    .name(format!("chunks-{n}"))
                    .spawn(move || work(&line, &answers, &settings, count))
                    .map_err(|err| tracing::warn!("no thread for a decoder: {err}"))
                    .ok()
            })
            .collect();
        SideBySide {
            // Without a worker, every chunk given fails at once rather than wait in line.
            jobs: (!workers.is_empty()).then_some(jobs),
            heard,
            workers,
            given: 0,
            starts: BTreeMap::new(),
            early: BTreeMap::new(),
            busy_since: None,
            busy: Duration::ZERO,
        }
    }

    /// Gives out the chunk of `samples` that `timeline` places in the audio, once a worker or
    /// the one place in line is free (what was heard meanwhile waits in [`SideBySide::ready`]).
    pub fn give(&mut self, timeline: Timeline, samples: Vec<f32>) {
        let order = self.given;
        self.given += 1;
        self.starts.insert(order, timeline);
        self.busy_since.get_or_insert_with(Instant::now);
        let sent = self
            .jobs
            .as_ref()
            .is_some_and(|jobs| jobs.send(Job { order, samples }).is_ok());
        if !sent {
            self.early.insert(
                order,
                Err(EngineError::Failed("the decoder threads stopped".into())),
            );
        }
    }

    /// The next chunk in the audio's order, with where it starts, once it is heard: waits for
    /// it when `wait`, else only takes it if it is there. None when nothing is out, or (not
    /// waiting) it is not heard yet.
    pub fn ready(&mut self, wait: bool) -> Option<(Timeline, Result<EngineOutput, EngineError>)> {
        let order = *self.starts.first_key_value()?.0;
        while !self.early.contains_key(&order) {
            let next = if wait {
                self.heard.recv().ok()
            } else {
                self.heard.try_recv().ok()
            };
            match next {
                Some((n, result)) => {
                    self.early.insert(n, result);
                }
                None if wait => {
                    // Every worker is gone without an answer for this chunk.
                    self.early.insert(
                        order,
                        Err(EngineError::Failed("a decoder thread stopped".into())),
                    );
                }
                None => return None,
            }
        }
        let timeline = self.starts.remove(&order)?;
        if self.starts.is_empty()
            && let Some(since) = self.busy_since.take()
        {
            self.busy += since.elapsed();
        }
        self.early.remove(&order).map(|result| (timeline, result))
    }

    /// The time some chunk was out (the engine's share of a transcription's time).
    pub fn busy(&self) -> Duration {
        self.busy
            + self
                .busy_since
                .map_or(Duration::ZERO, |since| since.elapsed())
    }
}

impl Drop for SideBySide {
    /// The workers finish the chunk in hand (a cancelled request stops them early) and end.
    fn drop(&mut self) {
        self.jobs = None;
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

/// A worker: takes chunks from the line until it closes, each heard in one call.
fn work(
    line: &Mutex<Receiver<Job>>,
    answers: &Sender<Answer>,
    settings: &CallSettings,
    calls_at_once: usize,
) {
    loop {
        let job = match line.lock() {
            Ok(line) => line.recv(),
            Err(_) => return,
        };
        let Ok(Job { order, samples }) = job else {
            return;
        };
        let request = EngineRequest {
            samples: &samples,
            chunks: std::iter::once(0..samples.len()).collect(),
            calls_at_once,
            ..settings.request.clone()
        };
        let started = Instant::now();
        let heard = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            settings.engine.transcribe(settings.model, &request)
        }))
        .unwrap_or_else(|_| Err(EngineError::Failed("the engine panicked".into())));
        tracing::debug!(
            order,
            seconds = samples.len() as f64 / 16_000.0,
            took_ms = started.elapsed().as_millis() as u64,
            "chunk heard beside others"
        );
        if answers.send((order, heard)).is_err() {
            return;
        }
    }
}
