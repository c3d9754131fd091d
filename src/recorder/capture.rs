//! The Recorder's capture thread: reads every source, mixes what all of them have delivered at
//! 48 kHz (mono, or stereo with the microphone left), streams it to the WAV file and hands it,
//! at 16 kHz mono, to the live transcription.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::audio::capture::Feed;
use crate::audio::mix::{interleave_into, mix_into};
use crate::audio::resample::StreamingResampler;
use crate::audio::wav::WavSink;

/// The rate recordings are written at.
pub const RECORDING_RATE: u32 = 48_000;

/// How long one pass of the capture loop waits for each source.
const READ_SLICE: Duration = Duration::from_millis(20);

/// A source running ahead of the other by more than this is not waited for any longer: the
/// late one is padded with silence, so a stalled device cannot make memory grow.
const MAX_SKEW: usize = RECORDING_RATE as usize;

/// What the capture thread hands to finalization.
pub struct CaptureEnd {
    pub sink: WavSink,
    /// Why capture ended early (device lost, disk error).
    pub failure: Option<String>,
}

/// Where the mix goes besides the file: a live transcription, at 16 kHz mono.
pub struct Listener {
    resampler: StreamingResampler,
    blocks: std::sync::mpsc::Sender<Vec<f32>>,
    mono: Vec<f32>,
    /// Set when the recording ends (no more provisional text).
    stopping: crate::cancel::Cancel,
}

impl Listener {
    /// Hands the mix to `blocks` as it is written; sets `stopping` when the recording ends.
    pub fn new(
        blocks: std::sync::mpsc::Sender<Vec<f32>>,
        stopping: crate::cancel::Cancel,
    ) -> Listener {
        Listener {
            resampler: StreamingResampler::new(RECORDING_RATE),
            blocks,
            mono: Vec::new(),
            stopping,
        }
    }

    /// Hears the mix just written (interleaved when `stereo`).
    fn hear(&mut self, mix: &[f32], stereo: bool) {
        let mono = if stereo {
            self.mono.clear();
            self.mono
                .extend(mix.chunks_exact(2).map(|pair| (pair[0] + pair[1]) * 0.5));
            &self.mono[..]
        } else {
            mix
        };
        self.resampler.push(mono);
        let blocks = &self.blocks;
        // A transcription that stopped listening reports through its own result.
        self.resampler.drain_output(&mut |block| {
            let _ = blocks.send(block.to_vec());
            true
        });
    }

    /// The end of the recording: the rest of the audio, or, when the recording failed, an
    /// empty block, which abandons the transcription.
    fn finish(self, failed: bool) {
        self.stopping.cancel();
        if failed {
            let _ = self.blocks.send(Vec::new());
            return;
        }
        let rest = self.resampler.finish();
        if !rest.is_empty() {
            let _ = self.blocks.send(rest);
        }
    }
}

/// The capture loop: reads every source, mixes what all of them have delivered and appends it to
/// the file (and hands it to `listener`), until told to stop or a source fails (then
/// `on_failure` gets the reason).
pub fn capture(
    mut feeds: Vec<Feed>,
    mut sink: WavSink,
    stereo: bool,
    mut listener: Option<Listener>,
    stop: &AtomicBool,
    on_failure: impl FnOnce(String),
) -> CaptureEnd {
    let mut pending: Vec<Vec<f32>> = vec![Vec::new(); feeds.len()];
    let mut scratch = Vec::new();
    let slice = READ_SLICE / feeds.len().max(1) as u32;
    let mut failure = None;
    'capture: while !stop.load(Ordering::Acquire) {
        for (feed, buffer) in feeds.iter_mut().zip(pending.iter_mut()) {
            if let Err(err) = feed.pull(buffer, slice) {
                failure = Some(err.to_string());
                break 'capture;
            }
        }
        let shortest = pending.iter().map(Vec::len).min().unwrap_or(0);
        let longest = pending.iter().map(Vec::len).max().unwrap_or(0);
        let ready = shortest.max(longest.saturating_sub(MAX_SKEW));
        if let Err(err) = write_mixed(&mut sink, &mut pending, ready, stereo, &mut scratch) {
            failure = Some(format!("Could not write the recording: {err}"));
            break;
        }
        if let Some(listener) = &mut listener
            && ready > 0
        {
            listener.hear(&scratch, stereo);
        }
    }
    for (mut feed, buffer) in feeds.into_iter().zip(pending.iter_mut()) {
        if failure.is_none() {
            // What the device captured up to the stop, not yet read; a late fault changes nothing.
            let _ = feed.pull(buffer, Duration::ZERO);
        }
        feed.finish(buffer);
    }
    let rest = pending.iter().map(Vec::len).max().unwrap_or(0);
    if let Err(err) = write_mixed(&mut sink, &mut pending, rest, stereo, &mut scratch) {
        failure.get_or_insert(format!("Could not write the recording: {err}"));
    }
    if let Some(mut listener) = listener {
        if failure.is_none() && rest > 0 {
            listener.hear(&scratch, stereo);
        }
        listener.finish(failure.is_some());
    }
    if let Some(reason) = &failure {
        on_failure(reason.clone());
    }
    CaptureEnd { sink, failure }
}

/// Writes the first `n` samples of each source (padding a short one with silence) as one mono
/// mix, or as stereo (microphone left, system audio right), and removes them from `pending`.
fn write_mixed(
    sink: &mut WavSink,
    pending: &mut [Vec<f32>],
    n: usize,
    stereo: bool,
    scratch: &mut Vec<f32>,
) -> std::io::Result<()> {
    if n == 0 {
        return Ok(());
    }
    for buffer in pending.iter_mut() {
        if buffer.len() < n {
            buffer.resize(n, 0.0);
        }
    }
    match pending {
        [only] => mix_into(Some(&only[..n]), None, scratch),
        [mic, system] if stereo => interleave_into(&mic[..n], &system[..n], scratch),
        [mic, system] => mix_into(Some(&mic[..n]), Some(&system[..n]), scratch),
        _ => scratch.clear(),
    }
    sink.write(scratch)?;
    for buffer in pending.iter_mut() {
        buffer.drain(..n);
    }
    Ok(())
}
