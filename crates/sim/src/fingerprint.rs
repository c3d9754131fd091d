//! Recognises corpus clips in 16 kHz mono audio, alone or several in sequence, by correlating
//! band-energy features (see `features`) with a coarse-to-fine alignment search. Robust to lossy
//! re-encoding, resampling and channel changes of the same recording; not an exact sample hash.

use crate::corpus::{ClipKind, Corpus};
use crate::features::{COARSE, Extractor, Features, HOP, correlation};

/// Lowest correlation accepted as a match. The same clip after an MP3, Ogg, AAC or FLAC round
/// trip scores about 0.9 or more; another clip, silence, noise or a tone scores under 0.5.
pub const MATCH_THRESHOLD: f32 = 0.75;
/// Lowest coarse correlation worth refining.
const COARSE_THRESHOLD: f32 = 0.5;
/// Share of a clip that may lie outside the input (audio cut at its start or end).
const MAX_OVERHANG: f64 = 0.1;
/// Clips shorter than this many frames (0.5 s) are too short to recognise reliably.
const MIN_FRAMES: usize = 50;

/// A clip found in the input, in input samples (16 kHz); `end_sample` is exclusive.
#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    pub clip_id: String,
    /// Where the clip begins in the input.
    pub start_sample: usize,
    /// Where it ends (exclusive), at most the input's length.
    pub end_sample: usize,
    /// Samples of the clip cut off before the input starts (0 unless the input begins mid-clip).
    pub clip_offset: usize,
    /// Correlation of the clip with the input there, [`MATCH_THRESHOLD`]..1.
    pub score: f32,
}

#[derive(Debug, Clone)]
struct Entry {
    id: String,
    samples: usize,
    fine: Features,
    coarse: Features,
}

/// A possible placement of an entry: offset in fine frames (negative when cut at the start).
#[derive(Debug, Clone, Copy)]
struct Candidate {
    entry: usize,
    offset: isize,
    score: f32,
}

/// The fingerprints of a set of clips, searchable in any 16 kHz mono input.
#[derive(Clone)]
pub struct FingerprintIndex {
    extractor: Extractor,
    entries: Vec<Entry>,
}

impl Default for FingerprintIndex {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for FingerprintIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<&str> = self.entries.iter().map(|e| e.id.as_str()).collect();
        f.debug_struct("FingerprintIndex")
            .field("clips", &ids)
            .finish()
    }
}

impl FingerprintIndex {
    /// An empty index.
    pub fn new() -> Self {
        FingerprintIndex {
            extractor: Extractor::new(),
            entries: Vec::new(),
        }
    }

    /// The index of every speech clip of `corpus` (silence and noise are never recognised).
    pub fn from_corpus(corpus: &Corpus) -> Self {
        let mut index = Self::new();
        for clip in corpus.clips() {
            if clip.entry.kind == ClipKind::Speech {
                index.insert(clip.id(), &clip.samples);
            }
        }
        index
    }

    /// Adds a clip; returns false (and adds nothing) when it is under 0.5 s or has no variation.
    pub fn insert(&mut self, id: impl Into<String>, samples: &[f32]) -> bool {
        let fine = self.extractor.features(samples);
        // A clip correlates 1 with itself, or 0 when it has no variation to match on.
        if fine.frames < MIN_FRAMES || correlation(&fine, 0, &fine, 0, fine.frames) < 0.5 {
            return false;
        }
        let coarse = fine.coarse();
        self.entries.push(Entry {
            id: id.into(),
            samples: samples.len(),
            fine,
            coarse,
        });
        true
    }

    /// Removes the clip `id`; returns whether it was indexed.
    pub fn remove(&mut self, id: &str) -> bool {
        let before = self.entries.len();
        self.entries.retain(|e| e.id != id);
        self.entries.len() != before
    }

    /// Number of clips indexed.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no clip is indexed.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Ids of the indexed clips, in insertion order.
    pub fn clip_ids(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.id.as_str())
    }

    /// The best-scoring clip found in `samples`, if any.
    pub fn recognise(&self, samples: &[f32]) -> Option<Match> {
        self.recognise_sequence(samples)
            .into_iter()
            .max_by(|a, b| a.score.total_cmp(&b.score))
    }

    /// Every clip found in `samples`, in order of position, none overlapping another by more
    /// than a tenth of the shorter one. Unknown stretches (silence, other audio) are skipped.
    pub fn recognise_sequence(&self, samples: &[f32]) -> Vec<Match> {
        let fine = self.extractor.features(samples);
        let coarse = fine.coarse();
        let mut candidates = Vec::new();
        for (n, entry) in self.entries.iter().enumerate() {
            for coarse_offset in peaks(&entry.coarse, &coarse, COARSE_THRESHOLD) {
                if let Some(c) = refine(n, entry, &fine, coarse_offset) {
                    candidates.push(c);
                }
            }
        }
        candidates.sort_by(|a, b| b.score.total_cmp(&a.score));
        let mut chosen: Vec<Candidate> = Vec::new();
        for c in candidates {
            if chosen.iter().all(|k| !self.overlaps(c, *k)) {
                chosen.push(c);
            }
        }
        chosen.sort_by_key(|c| c.offset);
        chosen
            .into_iter()
            .map(|c| {
                let entry = &self.entries[c.entry];
                let start = c.offset * HOP as isize;
                Match {
                    clip_id: entry.id.clone(),
                    start_sample: start.max(0) as usize,
                    end_sample: ((start + entry.samples as isize).max(0) as usize)
                        .min(samples.len()),
                    clip_offset: (-start).max(0) as usize,
                    score: c.score,
                }
            })
            .collect()
    }

    fn overlaps(&self, a: Candidate, b: Candidate) -> bool {
        let (la, lb) = (
            self.entries[a.entry].fine.frames as isize,
            self.entries[b.entry].fine.frames as isize,
        );
        let overlap = (a.offset + la).min(b.offset + lb) - a.offset.max(b.offset);
        overlap > la.min(lb) / 10
    }
}

/// The window of `clip` placed at `offset` in `input`: (clip start, input start, length), when at
/// most [`MAX_OVERHANG`] of the clip lies outside the input.
fn placement(clip: &Features, input: &Features, offset: isize) -> Option<(usize, usize, usize)> {
    let (m, n) = (clip.frames as isize, input.frames as isize);
    let clip_start = (-offset).max(0);
    let clip_end = m.min(n - offset);
    let len = clip_end - clip_start;
    let allowed = (m as f64 * (1.0 - MAX_OVERHANG)).ceil() as isize;
    (len > 0 && len >= allowed).then(|| {
        (
            clip_start as usize,
            (offset + clip_start) as usize,
            len as usize,
        )
    })
}

/// Range of offsets of `clip` in `input` that [`placement`] accepts.
fn offsets(clip: &Features, input: &Features) -> std::ops::RangeInclusive<isize> {
    let overhang = (clip.frames as f64 * MAX_OVERHANG).floor() as isize;
    -overhang..=input.frames as isize - clip.frames as isize + overhang
}

fn score_at(clip: &Features, input: &Features, offset: isize) -> Option<f32> {
    placement(clip, input, offset).map(|(c, i, len)| correlation(clip, c, input, i, len))
}

/// Offsets where the coarse score is a local maximum of at least `threshold`.
fn peaks(clip: &Features, input: &Features, threshold: f32) -> Vec<isize> {
    let scored: Vec<(isize, f32)> = offsets(clip, input)
        .filter_map(|o| score_at(clip, input, o).map(|s| (o, s)))
        .collect();
    let mut found = Vec::new();
    for (k, &(offset, score)) in scored.iter().enumerate() {
        let left = k.checked_sub(1).map_or(f32::MIN, |j| scored[j].1);
        let right = scored.get(k + 1).map_or(f32::MIN, |s| s.1);
        if score >= threshold && score >= left && score > right {
            found.push(offset);
        }
    }
    found
}

/// Best fine offset around a coarse peak, if it scores a match.
fn refine(n: usize, entry: &Entry, input: &Features, coarse_offset: isize) -> Option<Candidate> {
    let centre = coarse_offset * COARSE as isize;
    let reach = COARSE as isize + 1;
    (centre - reach..=centre + reach)
        .filter_map(|o| score_at(&entry.fine, input, o).map(|s| (o, s)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .filter(|&(_, score)| score >= MATCH_THRESHOLD)
        .map(|(offset, score)| Candidate {
            entry: n,
            offset,
            score,
        })
}
