//! One request, its language settled: its chunks handed out one at a time to whichever decoder
//! state is free (on the request's state alone, or shared out among several states on scoped
//! threads, each on its share of the threads), each heard as [`super::run`] says, the segments
//! put back in the chunks' order and moved to the request's timeline.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::super::{EngineError, EngineOutput, EngineRequest, Segment};
use super::context::Decoders;
use super::decode::in_timeline;
use super::lock;
use super::pass::{Chunk, Retries, Settings};
use super::run::hear_chunk;
use whisper_rs::WhisperState;

/// The request's output, and what it cost in retries. `decoders`: the context `state` belongs
/// to (a retry at temperature runs on a fresh state of its own, so that its random numbers are
/// the same whatever the pooled state decoded before). With more than one worker, the chunks
/// are shared out among that many decoder states, each on its share of the threads (`state`
/// is one of them; the others come from and go back to `decoders`' pool).
pub(super) fn run(
    state: &mut WhisperState,
    decoders: &Decoders,
    request: &EngineRequest<'_>,
    settings: &Settings,
) -> Result<(EngineOutput, Retries), EngineError> {
    let workers = settings.workers.clamp(1, request.chunks.len().max(1));
    let (heard, retries) = if workers == 1 {
        hear_in_turn(state, decoders, request, settings, &Shared::new(request))?
    } else {
        hear_in_parallel(state, decoders, request, settings, workers)?
    };
    let mut segments = Vec::new();
    for (range, chunk) in request.chunks.iter().zip(heard) {
        segments.extend(in_timeline(chunk, range));
    }
    let output = EngineOutput::of_segments(segments, settings.language.clone());
    Ok((output, retries))
}

/// The chunks of one request, handed out one at a time to whichever worker is free.
pub(super) struct Shared {
    next: AtomicUsize,
    chunks: usize,
    /// Set when a worker fails: the others take no further chunk.
    failed: AtomicBool,
}

impl Shared {
    pub(super) fn new(request: &EngineRequest<'_>) -> Shared {
        Shared {
            next: AtomicUsize::new(0),
            chunks: request.chunks.len(),
            failed: AtomicBool::new(false),
        }
    }

    fn take(&self) -> Option<usize> {
        if self.failed.load(Ordering::Relaxed) {
            return None;
        }
        let index = self.next.fetch_add(1, Ordering::Relaxed);
        (index < self.chunks).then_some(index)
    }
}

/// What one worker heard: each chunk's segments by the chunk's index, in its own timeline.
type Heard = Vec<(usize, Vec<Segment>)>;

/// Chunks taken from `shared` and heard one after the other on `state`, until none is left.
fn hear_taken(
    state: &mut WhisperState,
    decoders: &Decoders,
    request: &EngineRequest<'_>,
    settings: &Settings,
    shared: &Shared,
) -> Result<(Heard, Retries), EngineError> {
    let mut heard = Vec::new();
    let mut retries = Retries::default();
    while let Some(index) = shared.take() {
        let range = request.chunks[index].clone();
        let samples = request.samples.get(range).unwrap_or_default();
        let chunk = Chunk {
            samples,
            language: settings.language.as_deref(),
            said: settings.said_before.as_ref().filter(|_| index == 0),
            heard_before: None,
        };
        let result = if samples.is_empty() {
            Ok(Vec::new())
        } else {
            hear_chunk(state, decoders, request, &chunk, settings, &mut retries)
        };
        match result {
            Ok(segments) => heard.push((index, segments)),
            Err(e) => {
                shared.failed.store(true, Ordering::Relaxed);
                return Err(e);
            }
        }
    }
    Ok((heard, retries))
}

/// Every chunk on `state`, in order.
pub(super) fn hear_in_turn(
    state: &mut WhisperState,
    decoders: &Decoders,
    request: &EngineRequest<'_>,
    settings: &Settings,
    shared: &Shared,
) -> Result<(Vec<Vec<Segment>>, Retries), EngineError> {
    let (heard, retries) = hear_taken(state, decoders, request, settings, shared)?;
    Ok((heard.into_iter().map(|(_, s)| s).collect(), retries))
}

/// The chunks shared out among `workers` decoder states on scoped threads, each with its share
/// of the threads; the first error wins (a cancelled request stops every worker at its next
/// check).
pub(super) fn hear_in_parallel(
    state: &mut WhisperState,
    decoders: &Decoders,
    request: &EngineRequest<'_>,
    settings: &Settings,
    workers: usize,
) -> Result<(Vec<Vec<Segment>>, Retries), EngineError> {
    let shared = Shared::new(request);
    let settings = Settings {
        threads: (settings.threads / workers).max(1),
        ..settings.clone()
    };
    let (settings, shared) = (&settings, &shared);
    let results =
        std::thread::scope(|scope| {
            let others: Vec<_> = (1..workers)
                .map(|_| {
                    scope.spawn(move || {
                        let mut own = decoders.state(&decoders.idle)?;
                        let result = hear_taken(&mut own, decoders, request, settings, shared);
                        // A state whose pass was aborted half-way is not reused.
                        if !matches!(result, Err(EngineError::Cancelled)) {
                            lock(&decoders.idle).push(own);
                        }
                        result
                    })
                })
                .collect();
            let mut results = vec![hear_taken(state, decoders, request, settings, shared)];
            for worker in others {
                results.push(worker.join().unwrap_or_else(|_| {
                    Err(EngineError::Failed("a decoder thread panicked".into()))
                }));
            }
            results
        });
    let mut by_chunk: Vec<Vec<Segment>> = vec![Vec::new(); request.chunks.len()];
    let mut retries = Retries::default();
    for result in results {
        let (heard, cost) = result?;
        retries += cost;
        for (index, segments) in heard {
            by_chunk[index] = segments;
        }
    }
    Ok((by_chunk, retries))
}
