//! The replay engine: recognises the corpus clips in the audio it is given and returns what the
//! real engine heard in them (the recording of the requested model), with the recorded or a
//! configured processing time. Unknown audio gets a fixed, documented result.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::corpus::{Corpus, SAMPLE_RATE};
use crate::fingerprint::{FingerprintIndex, Match};
use crate::recording::Segment;

/// How long the replay engine reports it took.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Latency {
    /// The recorded processing time of each recognised clip, summed (0 for audio that is not
    /// recognised and for clips with no recording).
    #[default]
    Recorded,
    /// Always this many seconds.
    Fixed(f64),
    /// This factor times the duration of the input.
    RealTimeFactor(f64),
}

/// What the replay engine heard.
///
/// Unknown audio (nothing recognised) is always: empty `text`, no `language`, no `segments`,
/// `recognised: false`, the input's `duration` and the configured processing time.
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    /// Texts of the recognised clips in input order, trimmed, joined by single spaces.
    pub text: String,
    /// Language of the first recognised clip.
    pub language: Option<String>,
    /// Length of the input in seconds.
    pub duration: f64,
    /// Seconds the engine reports it took (see [`Latency`]); the replay itself returns at once.
    pub processing_time: f64,
    /// Segments of every recognised clip, shifted to where the clip sits in the input.
    pub segments: Vec<Segment>,
    /// Whether any corpus clip was recognised.
    pub recognised: bool,
    /// The recognised clips, in input order.
    pub clips: Vec<ReplayedClip>,
}

/// One recognised clip and where its output came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayedClip {
    pub clip_id: String,
    /// Where the clip sits in the input, in seconds.
    pub start: f64,
    pub end: f64,
    /// False when the model has no recording of this clip: its text from `clips.toml` is used
    /// instead, as one segment spanning the clip.
    pub recorded: bool,
}

/// Why a replay failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReplayError {
    /// The scenario makes this request fail (requests are numbered from 1).
    #[error("simulated engine failure on request {request}")]
    Injected { request: u64 },
}

/// Replays the corpus recordings for the audio it recognises.
#[derive(Debug)]
pub struct ReplayEngine {
    corpus: Arc<Corpus>,
    index: FingerprintIndex,
    latency: Latency,
    fail_requests: Vec<u64>,
    requests: AtomicU64,
}

impl ReplayEngine {
    /// An engine over `corpus` with recorded latency and no failures.
    pub fn new(corpus: Arc<Corpus>) -> Self {
        let index = FingerprintIndex::from_corpus(&corpus);
        ReplayEngine {
            corpus,
            index,
            latency: Latency::Recorded,
            fail_requests: Vec::new(),
            requests: AtomicU64::new(0),
        }
    }

    /// Sets the reported processing time.
    pub fn with_latency(mut self, latency: Latency) -> Self {
        self.latency = latency;
        self
    }

    /// Makes the requests with these numbers (from 1) fail with [`ReplayError::Injected`].
    pub fn with_failures(mut self, requests: impl IntoIterator<Item = u64>) -> Self {
        self.fail_requests = requests.into_iter().collect();
        self
    }

    /// The corpus the engine replays.
    pub fn corpus(&self) -> &Arc<Corpus> {
        &self.corpus
    }

    /// The fingerprints of the corpus speech clips.
    pub fn fingerprints(&self) -> &FingerprintIndex {
        &self.index
    }

    /// Requests answered or failed so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }

    /// What `model` heard in `samples` (16 kHz mono). Every call counts as one request.
    pub fn transcribe(&self, model: &str, samples: &[f32]) -> Result<Replay, ReplayError> {
        let request = self.requests.fetch_add(1, Ordering::SeqCst) + 1;
        if self.fail_requests.contains(&request) {
            return Err(ReplayError::Injected { request });
        }
        let matches = self.index.recognise_sequence(samples);
        Ok(self.replay(model, samples.len(), &matches))
    }

    /// The output for `matches` found in an input of `len` samples; no request is counted.
    pub fn replay(&self, model: &str, len: usize, matches: &[Match]) -> Replay {
        let duration = len as f64 / f64::from(SAMPLE_RATE);
        let recording = self.corpus.recording(model);
        let mut texts = Vec::new();
        let mut replay = Replay {
            text: String::new(),
            language: None,
            duration,
            processing_time: 0.0,
            segments: Vec::new(),
            recognised: !matches.is_empty(),
            clips: Vec::new(),
        };
        let mut recorded_time = 0.0;
        for m in matches {
            let Some(clip) = self.corpus.clip(&m.clip_id) else {
                continue;
            };
            let shift = (m.start_sample as f64 - m.clip_offset as f64) / f64::from(SAMPLE_RATE);
            let place = |t: f64| (t + shift).clamp(0.0, duration);
            let recorded = recording.and_then(|r| r.clips.get(&m.clip_id));
            let (text, language, segments) = match recorded {
                Some(r) => {
                    recorded_time += r.processing_time;
                    (r.text.as_str(), r.language.clone(), r.segments.clone())
                }
                None => {
                    let text = clip.entry.text.as_str();
                    let language = Some(clip.entry.language.clone()).filter(|l| !l.is_empty());
                    let whole = Segment {
                        start: 0.0,
                        end: clip.duration(),
                        text: text.to_owned(),
                    };
                    (text, language, vec![whole])
                }
            };
            if !text.trim().is_empty() {
                texts.push(text.trim());
            }
            if replay.language.is_none() && replay.clips.is_empty() {
                replay.language = language;
            }
            replay
                .segments
                .extend(segments.into_iter().map(|s| Segment {
                    start: place(s.start),
                    end: place(s.end),
                    text: s.text,
                }));
            replay.clips.push(ReplayedClip {
                clip_id: m.clip_id.clone(),
                start: m.start_sample as f64 / f64::from(SAMPLE_RATE),
                end: m.end_sample as f64 / f64::from(SAMPLE_RATE),
                recorded: recorded.is_some(),
            });
        }
        replay.text = texts.join(" ");
        replay.processing_time = match self.latency {
            Latency::Recorded => recorded_time,
            Latency::Fixed(seconds) => seconds,
            Latency::RealTimeFactor(factor) => factor * duration,
        };
        replay
    }
}
