//! The capture of one dictation: the microphone read in slices until stopped, each block handed
//! to the live transcription as it comes.

use super::*;

/// How long one read of the microphone waits.
const READ_SLICE: Duration = Duration::from_millis(20);

/// Reads the microphone until stopped, the maximum length passes or the device is lost; hands
/// each block read to `heard` (the live transcription) as it comes, and answers every sample.
/// `stopping` is set as soon as the capture ends (no more provisional text).
pub(super) fn capture(
    mut feed: Feed,
    stop: &AtomicBool,
    max_samples: usize,
    post: impl Fn(Event),
    heard: std::sync::mpsc::Sender<Vec<f32>>,
    stopping: crate::cancel::Cancel,
) -> Vec<f32> {
    let _stopping = stopping.cancel_on_drop();
    let mut samples = Vec::new();
    // A transcription that stopped listening (its engine failed) reports through its result.
    let hand_on = |samples: &[f32], from: usize| {
        if samples.len() > from {
            let _ = heard.send(samples[from..].to_vec());
        }
    };
    while !stop.load(Ordering::Acquire) {
        let before = samples.len();
        if let Err(err) = feed.pull(&mut samples, READ_SLICE) {
            // The session fails: what was heard is not transcribed.
            let _ = heard.send(Vec::new());
            post(Event::CaptureFailed {
                reason: err.to_string(),
            });
            return samples;
        }
        hand_on(&samples, before);
        if samples.len() >= max_samples {
            post(Event::MaxLengthReached);
            break;
        }
    }
    // What the microphone captured up to the stop, not yet read.
    let before = samples.len();
    let _ = feed.pull(&mut samples, Duration::ZERO);
    feed.finish(&mut samples);
    hand_on(&samples, before);
    samples
}
