//! A provisional pass over live audio's open chunk that keeps listening: the engine runs on a
//! thread of its own while the blocks captured meanwhile are heard as they come, and the pass
//! is given up the moment they show the voice dropping (or the capture stopping), so that a
//! pass begun in the last words of a sentence no longer holds the engine while the sentence
//! settles: the pass ahead, whose text the commit or the stop takes, starts at once.

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use crate::cancel::Cancel;
use crate::engine::{Engine, EngineError, EngineOutput, EngineRequest};

/// How long the listener waits for a block before it looks again whether the pass has ended.
const LOOK_EVERY: Duration = Duration::from_millis(5);

/// Runs `request` on `engine` while the blocks from `incoming` go to `hear`, which answers
/// true when what it heard ends the pass's use (the voice dropped, a chunk settled, the capture
/// failed); then, or once `stop` is cancelled or the capture ends, `given_up` (the request's
/// token) is cancelled and the engine stops at its next step. What the engine heard, and
/// whether the pass was given up.
pub(super) fn hear_while_listening(
    engine: &dyn Engine,
    model: &str,
    request: &EngineRequest<'_>,
    given_up: &Cancel,
    stop: &Cancel,
    incoming: &Receiver<Vec<f32>>,
    mut hear: impl FnMut(&[f32]) -> bool,
) -> (Result<EngineOutput, EngineError>, bool) {
    std::thread::scope(|scope| {
        let pass = scope.spawn(|| engine.transcribe(model, request));
        while !pass.is_finished() {
            if stop.is_cancelled() {
                given_up.cancel();
            }
            match incoming.recv_timeout(LOOK_EVERY) {
                Ok(block) => {
                    if hear(&block) {
                        given_up.cancel();
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    given_up.cancel();
                    break;
                }
            }
        }
        let heard = pass
            .join()
            .unwrap_or_else(|_| Err(EngineError::Failed("the engine stopped".into())));
        (heard, given_up.is_cancelled())
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;

    use super::*;
    use crate::engine::LanguageChoice;
    use crate::transcribe::testing::Endless;

    /// A pass of `engine` over a second of audio while the blocks from `incoming` go to `hear`:
    /// what it heard, and whether it was given up.
    fn pass(
        engine: &dyn Engine,
        stop: &Cancel,
        incoming: &mpsc::Receiver<Vec<f32>>,
        hear: impl FnMut(&[f32]) -> bool,
    ) -> (Result<EngineOutput, EngineError>, bool) {
        let given_up = Cancel::new();
        let samples = vec![0.0; 16_000];
        let whole = std::iter::once(0..samples.len()).collect();
        let request = EngineRequest {
            cancel: given_up.clone(),
            ..EngineRequest::speech(&samples, whole, LanguageChoice::Auto)
        };
        hear_while_listening(engine, "tiny.en", &request, &given_up, stop, incoming, hear)
    }

    fn endless() -> (Endless, Arc<AtomicUsize>) {
        let cancelled = Arc::new(AtomicUsize::new(0));
        let engine = Endless {
            started: Arc::new(AtomicUsize::new(0)),
            cancelled: cancelled.clone(),
        };
        (engine, cancelled)
    }

    #[test]
    fn the_pass_is_given_up_once_a_block_heard_beside_it_says_so_and_every_block_is_heard() {
        let (engine, cancelled) = endless();
        let (tx, rx) = mpsc::channel();
        for level in 1..=5 {
            tx.send(vec![level as f32; 256]).unwrap();
        }
        let mut heard = Vec::new();
        let (output, was_given_up) = pass(&engine, &Cancel::new(), &rx, |block| {
            heard.push(block[0]);
            block[0] == 3.0
        });
        assert!(was_given_up);
        assert!(matches!(output, Err(EngineError::Cancelled)), "{output:?}");
        assert_eq!(cancelled.load(Ordering::SeqCst), 1);
        // The blocks after the one that gave the pass up are heard while the engine stops, or
        // wait in the channel for the listener's next turn: none is lost or heard twice.
        let left: Vec<f32> = rx.try_iter().map(|b| b[0]).collect();
        heard.extend(left);
        assert_eq!(heard, [1.0, 2.0, 3.0, 4.0, 5.0]);
        drop(tx);
    }

    #[test]
    fn the_pass_is_given_up_when_the_capture_stops_or_ends() {
        let (engine, cancelled) = endless();
        // Stopped: the capture's token.
        let stop = Cancel::new();
        stop.cancel();
        let (_tx, rx) = mpsc::channel();
        assert!(pass(&engine, &stop, &rx, |_| false).1);
        // Ended: the capture's sender gone.
        let (tx, rx) = mpsc::channel::<Vec<f32>>();
        drop(tx);
        assert!(pass(&engine, &Cancel::new(), &rx, |_| false).1);
        assert_eq!(cancelled.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_pass_nothing_gives_up_ends_with_what_the_engine_heard() {
        let engine = crate::transcribe::testing::Paced {
            log: Arc::default(),
            pause: Duration::from_millis(30),
            at_once: 1,
        };
        let (tx, rx) = mpsc::channel();
        tx.send(vec![0.5; 256]).unwrap();
        let mut blocks = 0;
        let (output, was_given_up) = pass(&engine, &Cancel::new(), &rx, |_| {
            blocks += 1;
            false
        });
        assert!(!was_given_up);
        assert!(output.is_ok(), "{output:?}");
        assert_eq!(blocks, 1);
        drop(tx);
    }
}
