//! What a simulated device plays: corpus clips, silence and tones, rendered at the device's own
//! sample rate (clips are resampled from 16 kHz by linear interpolation), then silence or a loop.

use std::sync::Arc;

use crate::corpus::{Corpus, SAMPLE_RATE};
use crate::resample::resample_linear;

/// One thing a device plays.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// A corpus clip, by id.
    Clip(String),
    /// Silence for this many seconds.
    Silence(f64),
    /// A sine tone.
    Tone {
        hz: f64,
        seconds: f64,
        /// Peak amplitude, 0..1.
        volume: f32,
    },
}

/// What a device plays once its items are over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum After {
    /// Silence for ever.
    #[default]
    Silence,
    /// The items again, from the first.
    Loop,
}

#[derive(Debug, Clone)]
enum Part {
    Samples(Arc<[f32]>),
    Silence(u64),
    Tone { hz: f64, volume: f32, len: u64 },
}

impl Part {
    fn len(&self) -> u64 {
        match self {
            Part::Samples(s) => s.len() as u64,
            Part::Silence(len) | Part::Tone { len, .. } => *len,
        }
    }

    /// Writes samples `from..from + out.len()` of this part.
    fn fill(&self, from: u64, rate: u32, out: &mut [f32]) {
        match self {
            Part::Samples(s) => out.copy_from_slice(&s[from as usize..from as usize + out.len()]),
            Part::Silence(_) => out.fill(0.0),
            Part::Tone { hz, volume, .. } => {
                for (k, v) in out.iter_mut().enumerate() {
                    let t = (from + k as u64) as f64 / f64::from(rate);
                    *v = volume * (std::f64::consts::TAU * hz * t).sin() as f32;
                }
            }
        }
    }
}

/// Items rendered at one sample rate, addressable by sample position.
#[derive(Debug, Clone)]
pub struct Playlist {
    rate: u32,
    parts: Vec<Part>,
    /// Start of each part, in samples.
    starts: Vec<u64>,
    len: u64,
    after: After,
}

impl Playlist {
    /// Renders `items` at `rate` Hz; fails with the id of a clip the corpus lacks.
    pub fn new(items: &[Item], corpus: &Corpus, rate: u32, after: After) -> Result<Self, String> {
        let seconds = |s: f64| (s * f64::from(rate)).round() as u64;
        let mut parts = Vec::with_capacity(items.len());
        for item in items {
            parts.push(match item {
                Item::Clip(id) => {
                    let clip = corpus.clip(id).ok_or_else(|| id.clone())?;
                    Part::Samples(resample_linear(&clip.samples, SAMPLE_RATE, rate).into())
                }
                Item::Silence(s) => Part::Silence(seconds(*s)),
                Item::Tone {
                    hz,
                    seconds: s,
                    volume,
                } => Part::Tone {
                    hz: *hz,
                    volume: *volume,
                    len: seconds(*s),
                },
            });
        }
        let mut starts = Vec::with_capacity(parts.len());
        let mut len = 0;
        for part in &parts {
            starts.push(len);
            len += part.len();
        }
        Ok(Playlist {
            rate,
            parts,
            starts,
            len,
            after,
        })
    }

    /// The rate the items are rendered at.
    pub fn sample_rate(&self) -> u32 {
        self.rate
    }

    /// Samples in one pass through the items.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when the items take no time at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Writes the samples at `position..position + out.len()` of the endless stream.
    pub fn fill(&self, mut position: u64, mut out: &mut [f32]) {
        while !out.is_empty() {
            let pass_position = match self.after {
                _ if position < self.len => position,
                After::Loop if self.len > 0 => position % self.len,
                _ => {
                    out.fill(0.0);
                    return;
                }
            };
            let n = self.starts.partition_point(|&s| s <= pass_position) - 1;
            let within = pass_position - self.starts[n];
            let take = ((self.parts[n].len() - within) as usize).min(out.len());
            let (head, rest) = out.split_at_mut(take);
            self.parts[n].fill(within, self.rate, head);
            out = rest;
            position += take as u64;
        }
    }

    /// The first `n` samples of the endless stream.
    pub fn render(&self, n: usize) -> Vec<f32> {
        let mut out = vec![0.0; n];
        self.fill(0, &mut out);
        out
    }
}
