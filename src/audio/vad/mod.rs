//! Voice activity detection on 16 kHz mono samples with earshot's built-in network (16 ms
//! frames, no model file): [`speech_regions`] finds where someone speaks, and [`chunks`] turns
//! those regions into what the engine transcribes. A region is speech when the network is sure
//! of some of its frames, or when its loudness rises and falls the way syllables do (a voice
//! the network is never sure of: a cold, falsetto, a soft last word), which steady noise never
//! does.

mod levels;

pub mod chunks;
pub mod stream;

use std::ops::Range;

use verbatim_kernels::VoiceDetector;

use levels::{Loudness, Spread};

pub use chunks::{Limits, MAX_CHUNK_SAMPLES, plan_chunks, plan_chunks_within};
pub use stream::{Chunker, Cut, SpeechChunk, Timeline};

/// Samples per second of the audio the detector takes.
pub const SAMPLE_RATE: usize = 16_000;
/// Samples per detector frame (16 ms).
pub const FRAME: usize = verbatim_kernels::FRAME;

/// A frame scoring at least this opens a speech region.
pub(crate) const ENTER: f32 = 0.5;
/// A region goes on while frames score at least this (hysteresis against flicker).
const STAY: f32 = 0.35;
/// A region ends after this many frames under [`STAY`] (160 ms).
const END_AFTER_FRAMES: usize = 10;
/// A region with fewer frames of at least [`ENTER`] is not speech (240 ms): the detector's
/// first frames on noise, clicks and bursts score high for a moment.
pub(crate) const MIN_VOICED_FRAMES: usize = 15;
/// Speech scores this or more in some frames; steady noise (brown noise, a tone) can hold
/// 0.5–0.87 for seconds without reaching it (measured on sox noise at the corpus's volumes).
pub(crate) const CONFIDENT: f32 = 0.9;
/// A region needs this many confident frames (128 ms) to be speech.
const MIN_CONFIDENT_FRAMES: usize = 8;
/// Or its loudness (each frame's last 80 ms) spread over at least this many decibels between
/// its quietest and loudest tenth. Measured (`docs/performance.md`, "Voices the detector is
/// never sure of"): sox's brown, pink and white noise, a tone, a chord, a hum and a sweep at five
/// volumes, after a second of silence or right after speech, spread 3.1 dB at most; regions of
/// real speech that never reached 0.85 (a speaker with a cold, falsetto, the soft end of a
/// sentence) 5.4 dB at least, most of them 8 to 60.
const MIN_SPEECH_SPREAD_DB: f32 = 4.5;

/// One 16 ms frame as the detection reads it: the detector's voice probability (0..1) and,
/// where the samples were at hand, how loud its last 80 ms were (decibels of full scale).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    pub score: f32,
    pub level: Option<f32>,
}

impl From<f32> for Frame {
    /// A frame known by its score alone.
    fn from(score: f32) -> Frame {
        Frame { score, level: None }
    }
}

/// What an engine hears of `samples` held whole in memory: the chunks of speech when `detect`,
/// else the whole audio as one chunk. Each chunk is a span heard whole, its pauses included;
/// the server's file path ([`Chunker`]) leaves them out.
pub fn chunks_to_hear(samples: &[f32], detect: bool) -> Vec<Range<usize>> {
    if detect {
        plan_chunks(&frame_scores(samples), samples.len())
    } else {
        std::iter::once(0..samples.len()).collect()
    }
}

/// Every 16 ms frame of `samples`, scored and with its loudness; the last partial frame is
/// padded with silence.
pub fn frame_scores(samples: &[f32]) -> Vec<Frame> {
    let mut frames = Vec::with_capacity(samples.len().div_ceil(FRAME));
    let mut scorer = Scorer::default();
    scorer.push(samples, &mut |frame| frames.push(frame));
    scorer.finish(&mut |frame| frames.push(frame));
    frames
}

/// Scores audio as it arrives: one [`Frame`] per whole 16 ms frame, the rest kept for the next
/// push.
pub struct Scorer {
    detector: VoiceDetector,
    loudness: Loudness,
    /// Samples of the frame not yet complete.
    partial: Vec<f32>,
}

impl Default for Scorer {
    fn default() -> Scorer {
        Scorer {
            detector: VoiceDetector::default(),
            loudness: Loudness::default(),
            partial: Vec::with_capacity(FRAME),
        }
    }
}

impl Scorer {
    /// Scores every frame `samples` completes, in order.
    pub fn push(&mut self, mut samples: &[f32], scored: &mut dyn FnMut(Frame)) {
        if !self.partial.is_empty() {
            let take = (FRAME - self.partial.len()).min(samples.len());
            self.partial.extend_from_slice(&samples[..take]);
            samples = &samples[take..];
            if self.partial.len() < FRAME {
                return;
            }
            scored(read(&mut self.detector, &mut self.loudness, &self.partial));
            self.partial.clear();
        }
        let mut frames = samples.chunks_exact(FRAME);
        for frame in &mut frames {
            scored(read(&mut self.detector, &mut self.loudness, frame));
        }
        self.partial.extend_from_slice(frames.remainder());
    }

    /// Scores the last partial frame, padded with silence (the end of the audio).
    pub fn finish(&mut self, scored: &mut dyn FnMut(Frame)) {
        if !self.partial.is_empty() {
            scored(read(&mut self.detector, &mut self.loudness, &self.partial));
            self.partial.clear();
        }
    }
}

/// One frame's samples, scored and with the level of the last 80 ms.
fn read(detector: &mut VoiceDetector, loudness: &mut Loudness, samples: &[f32]) -> Frame {
    Frame {
        score: detector.score(samples),
        level: Some(loudness.push(samples)),
    }
}

/// The stretches of speech in audio of `frames`, as frame ranges in order, none overlapping;
/// empty when nobody speaks.
pub fn speech_frames<F: Copy + Into<Frame>>(frames: &[F]) -> Vec<Range<usize>> {
    let mut tracker = RegionTracker::default();
    let mut regions: Vec<Closed> = frames
        .iter()
        .enumerate()
        .filter_map(|(i, &frame)| tracker.push(i, frame))
        .collect();
    regions.extend(tracker.finish());
    regions
        .into_iter()
        .filter(|region| region.speech)
        .map(|region| region.frames)
        .collect()
}

/// Under this level (decibels of full scale) a frame is quiet, whatever the detector scores: its
/// network holds 0.35-0.4 for seconds after a voice stops, over near-digital silence (-70 to
/// -90 dB after a falsetto sentence of the development set).
const QUIET_DB: f32 = -60.0;

/// The frames where a voice is heard now, as ranges in order: frames scoring at least
/// [`ENTER`] that are not quiet. Narrower than [`speech_frames`], whose regions run on through
/// the detector's hysteresis and the pauses inside speech; for telling whether words can have
/// been said in a stretch of audio.
pub fn voiced_frames<F: Copy + Into<Frame>>(frames: &[F]) -> Vec<Range<usize>> {
    let mut voiced: Vec<Range<usize>> = Vec::new();
    for (i, &frame) in frames.iter().enumerate() {
        let frame: Frame = frame.into();
        if frame.score < ENTER || frame.level.is_some_and(|db| db < QUIET_DB) {
            continue;
        }
        match voiced.last_mut() {
            Some(last) if last.end == i => last.end = i + 1,
            _ => voiced.push(i..i + 1),
        }
    }
    voiced
}

/// A region that has ended, with enough voiced frames to be a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closed {
    pub frames: Range<usize>,
    /// It had confident frames too, or loudness that rises and falls like syllables: speech
    /// on its own. Without either it may be a word said softly, or noise; it counts as speech
    /// only next to speech (see `chunks`).
    pub speech: bool,
}

/// Follows frame scores one at a time and names each stretch of speech once it has ended.
pub struct RegionTracker {
    open: Option<Region>,
    /// A frame scoring at least this opens a region and counts as voiced.
    enter: f32,
    /// A region goes on while frames score at least this.
    stay: f32,
    /// A frame scoring at least this counts as confident ([`CONFIDENT`] unless told).
    confident: f32,
}

impl Default for RegionTracker {
    fn default() -> RegionTracker {
        RegionTracker::with_threshold(ENTER)
    }
}

impl RegionTracker {
    /// A tracker whose regions open at frames scoring at least `enter` (0..1) and go on while
    /// frames score at least 0.7 of it (the default: [`ENTER`] and [`STAY`]).
    pub fn with_threshold(enter: f32) -> RegionTracker {
        let enter = enter.clamp(0.0, 1.0);
        RegionTracker {
            open: None,
            enter,
            stay: if enter == ENTER {
                STAY
            } else {
                enter * STAY / ENTER
            },
            confident: CONFIDENT,
        }
    }

    /// This tracker with frames counted as confident from `confident` (0..1) on.
    pub fn confident_from(self, confident: f32) -> RegionTracker {
        RegionTracker {
            confident: confident.clamp(0.0, 1.0),
            ..self
        }
    }

    /// Takes frame `i` (frames come in order); gives the region that ended before it, if one
    /// with enough voiced frames did.
    pub fn push(&mut self, i: usize, frame: impl Into<Frame>) -> Option<Closed> {
        let frame = frame.into();
        let score = frame.score;
        let thresholds = self.thresholds();
        match &mut self.open {
            None if score >= self.enter => {
                self.open = Some(Region::new(i, frame, thresholds));
                None
            }
            None => None,
            Some(region) if score >= self.stay => {
                region.extend(i, frame, thresholds);
                None
            }
            Some(region) if i - region.last < END_AFTER_FRAMES => None,
            Some(region) => {
                let closed = region.closed();
                self.open = None;
                closed
            }
        }
    }

    /// The scores from which a frame is voiced and confident.
    fn thresholds(&self) -> (f32, f32) {
        (self.enter, self.confident)
    }

    /// The region still open at the end of the audio, if it has enough voiced frames.
    pub fn finish(&mut self) -> Option<Closed> {
        self.open.take().and_then(|region| region.closed())
    }

    /// The region being read: its frames so far (to its last frame at or over the stay
    /// threshold), and whether it already counts as speech.
    pub fn open(&self) -> Option<(Range<usize>, bool)> {
        self.open
            .as_ref()
            .map(|region| (region.start..region.last + 1, region.speech().is_some()))
    }

    /// Forgets the open region's frames before `frame` (a region that has not proved to be
    /// speech in a chunk's length cannot be held in memory for ever).
    pub fn forget_before(&mut self, frame: usize) {
        if let Some(region) = &mut self.open {
            region.start = region.start.max(frame.min(region.last));
        }
    }
}

/// A region being read: its first frame, its last frame at or over [`STAY`], how many of its
/// frames were voiced and confident, and how its loudness spread.
#[derive(Debug)]
struct Region {
    start: usize,
    last: usize,
    voiced: usize,
    confident: usize,
    spread: Spread,
}

impl Region {
    fn new(i: usize, frame: Frame, thresholds: (f32, f32)) -> Region {
        let mut region = Region {
            start: i,
            last: i,
            voiced: 0,
            confident: 0,
            spread: Spread::default(),
        };
        region.extend(i, frame, thresholds);
        region
    }

    /// Takes frame `i`: voiced and confident from the `(voiced, confident)` thresholds on.
    fn extend(&mut self, i: usize, frame: Frame, (voiced, confident): (f32, f32)) {
        self.last = i;
        self.voiced += usize::from(frame.score >= voiced);
        self.confident += usize::from(frame.score >= confident);
        // A frame's loudness covers the 80 ms before it: the region's first frames still hear
        // what came before it (silence makes any sound's onset look like syllables).
        if let Some(level) = frame.level
            && i >= self.start + levels::FRAMES_HEARD - 1
        {
            self.spread.add(level);
        }
    }

    /// Its frames, when they are speech.
    fn speech(&self) -> Option<Range<usize>> {
        self.closed()
            .filter(|closed| closed.speech)
            .map(|closed| closed.frames)
    }

    /// Its frames, when it has enough voiced ones to be a word.
    fn closed(&self) -> Option<Closed> {
        (self.voiced >= MIN_VOICED_FRAMES).then(|| Closed {
            frames: self.start..self.last + 1,
            speech: self.confident >= MIN_CONFIDENT_FRAMES
                || self
                    .spread
                    .decibels()
                    .is_some_and(|db| db >= MIN_SPEECH_SPREAD_DB),
        })
    }
}

/// The stretches of speech in `samples`, as sample ranges in order; empty when nobody speaks.
pub fn speech_regions(samples: &[f32]) -> Vec<Range<usize>> {
    speech_frames(&frame_scores(samples))
        .into_iter()
        .map(|frames| frames.start * FRAME..(frames.end * FRAME).min(samples.len()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn voiced_frames_leave_out_the_detectors_tail_over_quiet() {
        let frame = |score: f32, level: f32| Frame {
            score,
            level: Some(level),
        };
        // A voice, a dip inside it, then the detector's slow fall over near silence.
        let frames = [
            frame(0.2, -80.0),
            frame(0.7, -20.0),
            frame(0.8, -18.0),
            frame(0.4, -30.0),
            frame(0.6, -25.0),
            frame(0.39, -75.0),
            frame(0.55, -85.0),
            frame(0.39, -90.0),
        ];
        assert_eq!(voiced_frames(&frames), vec![1..3, 4..5]);
        // Scores alone (no levels at hand): the score decides.
        assert_eq!(voiced_frames(&[0.6f32, 0.6, 0.1, 0.9]), vec![0..2, 3..4]);
    }

    #[test]
    fn short_bursts_are_not_speech_and_flicker_does_not_split_a_region() {
        let mut scores = vec![0.9; 5]; // a burst of 80 ms
        scores.extend([0.0; 20]);
        let speech_from = scores.len();
        scores.extend([0.9; 20]);
        scores.extend([0.2; 5]); // a dip shorter than END_AFTER_FRAMES
        scores.extend([0.9; 20]);
        scores.extend([0.4; 3]); // still over STAY: the region goes on
        let speech_to = scores.len();
        scores.extend([0.1; 30]);
        assert_eq!(speech_frames(&scores), vec![speech_from..speech_to]);
    }

    #[test]
    fn steady_scores_that_never_reach_confidence_are_not_speech() {
        // Brown noise: seconds between 0.5 and 0.87.
        let noise: Vec<f32> = (0..600).map(|i| 0.5 + (i % 37) as f32 / 100.0).collect();
        assert!(speech_frames(&noise).is_empty());
        let mut speech = noise.clone();
        speech[300..300 + MIN_CONFIDENT_FRAMES].fill(0.95);
        assert_eq!(speech_frames(&speech), vec![0..600]);
    }

    #[test]
    fn a_voice_never_confident_is_speech_when_its_loudness_rises_and_falls_like_syllables() {
        // Scores between 0.5 and 0.87 throughout, as a speaker with a cold reads.
        let frame = |i: usize, level: f32| Frame {
            score: 0.5 + (i % 37) as f32 / 100.0,
            level: Some(level),
        };
        let syllables: Vec<Frame> = (0..300)
            .map(|i| frame(i, if i % 16 < 9 { -24.0 } else { -36.0 }))
            .collect();
        assert_eq!(speech_frames(&syllables), vec![0..300]);
        // The same scores at a level that wavers by 3 dB: steady noise.
        let steady: Vec<Frame> = (0..300)
            .map(|i| frame(i, -30.0 + (i % 7) as f32 * 0.5))
            .collect();
        assert!(speech_frames(&steady).is_empty());
        // A steady sound after silence: its onset (the frames whose 80 ms still hold the
        // silence) does not count.
        let onset: Vec<Frame> = (0..300)
            .map(|i| {
                frame(
                    i,
                    if i < 4 {
                        -90.0 + 15.0 * i as f32
                    } else {
                        -30.0
                    },
                )
            })
            .collect();
        assert!(speech_frames(&onset).is_empty());
    }

    #[test]
    fn every_frame_read_from_samples_carries_its_level() {
        // A sine of amplitude 0.5 (-9 dB) after 0.1 s of silence, in pieces of any length.
        let mut samples = vec![0.0; 1600];
        samples.extend((0..FRAME * 20).map(|i| 0.5 * (i as f32 * 0.1).sin()));
        let frames = frame_scores(&samples);
        assert_eq!(frames.len(), samples.len().div_ceil(FRAME));
        assert_eq!(frames[0].level, Some(-100.0));
        let last = frames[frames.len() - 2].level.expect("a level");
        assert!((last + 9.03).abs() < 0.1, "{last}");
        let mut streamed = Vec::new();
        let mut scorer = Scorer::default();
        for piece in samples.chunks(1000) {
            scorer.push(piece, &mut |frame| streamed.push(frame));
        }
        scorer.finish(&mut |frame| streamed.push(frame));
        assert_eq!(streamed, frames);
    }

    #[test]
    fn a_region_open_at_the_end_is_kept() {
        let mut scores = vec![0.0; 10];
        scores.extend([0.95; 16]);
        assert_eq!(speech_frames(&scores), vec![10..26]);
    }

    #[test]
    fn digital_silence_has_no_speech() {
        assert!(speech_regions(&vec![0.0; SAMPLE_RATE * 2]).is_empty());
    }
}
