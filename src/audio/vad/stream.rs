//! Voice activity detection as audio arrives: [`Chunker`] scores each 16 ms frame, plans the
//! chunks with a [`ChunkPlanner`] and hands each chunk's samples out as soon as it is settled,
//! keeping only the audio a chunk still to come may need (about half a minute), whatever the
//! audio's length. A chunk of a file leaves out the pauses between its stretches of speech
//! ([`Limits::leave_out_pauses`]); its [`Timeline`] places what is heard in the audio.

use std::collections::VecDeque;
use std::ops::Range;

use super::chunks::{ChunkPlanner, Limits};
use super::{FRAME, SAMPLE_RATE, Scorer};

/// A chunk to transcribe: where it starts in the audio (in samples), its samples, and the
/// pauses left out of them.
#[derive(Debug, Clone, PartialEq)]
pub struct SpeechChunk {
    pub start: usize,
    pub samples: Vec<f32>,
    pub cuts: Vec<Cut>,
}

/// Audio left out of a chunk: `len` samples of the audio were taken out before sample `at` of
/// the chunk's samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    pub at: usize,
    pub len: usize,
}

impl SpeechChunk {
    /// Where it lies in the audio, in samples, pauses left out included.
    pub fn range(&self) -> Range<usize> {
        let left_out: usize = self.cuts.iter().map(|cut| cut.len).sum();
        self.start..self.start + self.samples.len() + left_out
    }

    /// Where its samples lie in the audio.
    pub fn timeline(&self) -> Timeline {
        Timeline {
            start: self.start,
            cuts: self.cuts.clone(),
        }
    }
}

/// Where the samples an engine heard lie in the audio: from sample `start` on, with `cuts` left
/// out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timeline {
    pub start: usize,
    pub cuts: Vec<Cut>,
}

impl Timeline {
    /// Samples heard as they are from sample `start` of the audio on.
    pub fn starting_at(start: usize) -> Timeline {
        Timeline {
            start,
            cuts: Vec::new(),
        }
    }

    /// The time in the audio (seconds) of `seconds` into the samples heard. A time at a cut is
    /// the end of what came before it.
    pub fn seconds(&self, seconds: f64) -> f64 {
        let at = seconds * SAMPLE_RATE as f64;
        let left_out: usize = self
            .cuts
            .iter()
            .take_while(|cut| (cut.at as f64) < at)
            .map(|cut| cut.len)
            .sum();
        (self.start + left_out) as f64 / SAMPLE_RATE as f64 + seconds
    }
}

/// Streams audio into chunks (see the module documentation).
pub struct Chunker {
    scorer: Scorer,
    planner: ChunkPlanner,
    /// Samples from `buffer_from` on.
    buffer: VecDeque<f32>,
    buffer_from: usize,
    /// Samples pushed so far.
    seen: usize,
    /// Planned chunks, in frames, not yet handed out.
    planned: Vec<Range<usize>>,
}

impl Chunker {
    /// Chunks of the speech only (`speech_only`), or of the whole audio cut at its quietest
    /// moments, within the limits for files.
    pub fn new(speech_only: bool) -> Chunker {
        Chunker::within(speech_only, Limits::FILE)
    }

    /// [`Chunker::new`] within `limits` ([`Limits::LIVE`] for someone speaking now).
    pub fn within(speech_only: bool, limits: Limits) -> Chunker {
        Chunker {
            scorer: Scorer::default(),
            planner: if speech_only {
                ChunkPlanner::speech(limits)
            } else {
                ChunkPlanner::everything(limits)
            },
            buffer: VecDeque::new(),
            buffer_from: 0,
            seen: 0,
            planned: Vec::new(),
        }
    }

    /// Takes the next samples (16 kHz mono); `ready` gets every chunk they settle, in order.
    pub fn push(&mut self, samples: &[f32], ready: &mut dyn FnMut(SpeechChunk)) {
        self.buffer.extend(samples);
        self.seen += samples.len();
        let (planner, planned) = (&mut self.planner, &mut self.planned);
        self.scorer
            .push(samples, &mut |score| planner.push(score, planned));
        self.hand_out(ready);
        let needed = self.planner.needed_from() * FRAME;
        let drop = needed
            .saturating_sub(self.buffer_from)
            .min(self.buffer.len());
        self.buffer.drain(..drop);
        self.buffer_from += drop;
    }

    /// The end of the audio: `ready` gets the remaining chunks.
    pub fn finish(&mut self, ready: &mut dyn FnMut(SpeechChunk)) {
        let (planner, planned) = (&mut self.planner, &mut self.planned);
        self.scorer
            .finish(&mut |score| planner.push(score, planned));
        self.planner.finish(&mut self.planned);
        self.hand_out(ready);
    }

    /// Every chunk of `samples`, given as one block and finished.
    pub fn chunks_of(mut self, samples: &[f32]) -> Vec<SpeechChunk> {
        let mut chunks = Vec::new();
        self.push(samples, &mut |chunk| chunks.push(chunk));
        self.finish(&mut |chunk| chunks.push(chunk));
        chunks
    }

    /// Samples held now (the audio chunks still to come may need).
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// Samples pushed so far.
    pub fn seen(&self) -> usize {
        self.seen
    }

    /// The chunk still open (speech has begun in it and it is not yet settled): where it
    /// starts, in samples.
    pub fn open_from(&self) -> Option<usize> {
        self.planner
            .open_from()
            .map(|frame| (frame * FRAME).min(self.seen))
    }

    /// The samples of the chunk still open, so far: what a provisional transcription hears.
    pub fn open_chunk(&self) -> Option<SpeechChunk> {
        let start = self.open_from()?.max(self.buffer_from);
        let samples: Vec<f32> = self
            .buffer
            .range(start - self.buffer_from..)
            .copied()
            .collect();
        (!samples.is_empty()).then_some(SpeechChunk {
            start,
            samples,
            cuts: Vec::new(),
        })
    }

    /// Whether speech starting at sample `next`, after a chunk that ended at sample `end`, went
    /// on without a pause that ends a chunk: the chunk was closed by its length, not by a pause.
    pub fn goes_on(&self, end: usize, next: usize) -> bool {
        next >= end && self.planner.goes_on(end / FRAME, next / FRAME)
    }

    /// Someone is speaking now.
    pub fn speaking(&self) -> bool {
        self.planner.speaking()
    }

    /// Someone was speaking and the voice has just dropped: the speech may be over (see
    /// [`ChunkPlanner::voice_dropped`]).
    pub fn voice_dropped(&self) -> bool {
        self.planner.voice_dropped()
    }

    /// The open chunk so far, and where it ends (samples) should it settle with no more speech,
    /// once the voice has dropped or nobody speaks (see [`ChunkPlanner::settles_at_if_quiet`]).
    pub fn quiet_chunk(&self) -> Option<(SpeechChunk, usize)> {
        let settles_at = self.planner.settles_at_if_quiet()? * FRAME;
        Some((self.open_chunk()?, settles_at))
    }

    /// Where the open chunk lies (samples) as it settles unless more speech comes (see
    /// [`ChunkPlanner::settling`]): what a live transcription can hear ahead, in the pause that
    /// may end the chunk.
    pub fn settling(&self) -> Option<Range<usize>> {
        let frames = self.planner.settling()?;
        Some(frames.start * FRAME..(frames.end * FRAME).min(self.seen))
    }

    /// [`Chunker::settling`]'s chunk, with its samples (live audio: no pause left out).
    pub fn settling_chunk(&self) -> Option<SpeechChunk> {
        self.chunk_of(self.planner.settling()?, &[])
    }

    fn hand_out(&mut self, ready: &mut dyn FnMut(SpeechChunk)) {
        for frames in std::mem::take(&mut self.planned) {
            let gaps = self.planner.take_gaps_before(frames.end);
            if let Some(chunk) = self.chunk_of(frames, &gaps) {
                ready(chunk);
            }
        }
    }

    /// The samples of the chunk planned over `frames`, but for the frames of `gaps` inside it;
    /// None when it holds none.
    fn chunk_of(&self, frames: Range<usize>, gaps: &[Range<usize>]) -> Option<SpeechChunk> {
        let range = frames.start * FRAME..(frames.end * FRAME).min(self.seen);
        if range.is_empty() || range.start < self.buffer_from {
            return None;
        }
        let mut samples = Vec::with_capacity(range.len());
        let mut cuts = Vec::new();
        let mut from = range.start;
        for gap in gaps {
            let gap = (gap.start * FRAME).max(range.start)..(gap.end * FRAME).min(range.end);
            if gap.start < from || gap.is_empty() {
                continue;
            }
            samples.extend(self.samples(from..gap.start));
            cuts.push(Cut {
                at: samples.len(),
                len: gap.len(),
            });
            from = gap.end;
        }
        samples.extend(self.samples(from..range.end));
        Some(SpeechChunk {
            start: range.start,
            samples,
            cuts,
        })
    }

    /// The buffered samples over `range` (samples of the audio).
    fn samples(&self, range: Range<usize>) -> impl Iterator<Item = f32> + '_ {
        let from = range.start - self.buffer_from;
        self.buffer.range(from..from + range.len()).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::super::chunks::{
        MAX_CHUNK_FRAMES, PADDING_FRAMES as PADDING, plan_chunks, plan_everything,
    };
    use super::super::frame_scores;
    use super::*;

    /// The corpus's English clips one after another, with pauses of 0.1 to 5 s between them
    /// (from a fixed seed), `seconds` long.
    fn audio(seconds: usize) -> Vec<f32> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/clips");
        let mut clips: Vec<Vec<f32>> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| {
                path.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("en-")
            })
            .map(|path| {
                let mut reader = hound::WavReader::open(path).unwrap();
                reader
                    .samples::<i16>()
                    .map(|s| f32::from(s.unwrap()) / 32768.0)
                    .collect()
            })
            .collect();
        clips.sort_by_key(Vec::len);
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut samples = Vec::with_capacity(seconds * 16_000);
        for clip in clips.iter().cycle() {
            if samples.len() >= seconds * 16_000 {
                break;
            }
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let pause = 1_600 + (state % 78_400) as usize;
            samples.extend(std::iter::repeat_n(0.0, pause));
            samples.extend(clip);
        }
        samples.truncate(seconds * 16_000);
        samples
    }

    fn streamed(samples: &[f32], speech_only: bool, piece: usize) -> (Vec<SpeechChunk>, usize) {
        let mut chunker = Chunker::new(speech_only);
        let mut chunks = Vec::new();
        let mut most_held = 0;
        for part in samples.chunks(piece) {
            chunker.push(part, &mut |chunk| chunks.push(chunk));
            most_held = most_held.max(chunker.buffered());
        }
        chunker.finish(&mut |chunk| chunks.push(chunk));
        (chunks, most_held)
    }

    #[test]
    fn streaming_in_any_pieces_plans_what_planning_at_once_does() {
        let samples = audio(150);
        let scores = frame_scores(&samples);
        for (speech_only, planned) in [
            (true, plan_chunks(&scores, samples.len())),
            (false, plan_everything(&scores, samples.len())),
        ] {
            for piece in [1000, 4096, 16_000 * 7 + 3] {
                let (chunks, _) = streamed(&samples, speech_only, piece);
                let ranges: Vec<_> = chunks.iter().map(SpeechChunk::range).collect();
                assert_eq!(
                    ranges, planned,
                    "speech only: {speech_only}, pieces of {piece}"
                );
                for chunk in &chunks {
                    assert_eq!(chunk.samples, heard_of(&samples, chunk));
                    if !speech_only {
                        assert!(chunk.cuts.is_empty());
                    }
                }
            }
        }
    }

    /// The samples of `audio` that `chunk` says it holds: its range but for its cuts.
    fn heard_of(audio: &[f32], chunk: &SpeechChunk) -> Vec<f32> {
        let mut heard = Vec::new();
        let mut from = chunk.start;
        let mut taken = 0;
        for cut in &chunk.cuts {
            heard.extend(&audio[from..from + cut.at - taken]);
            from += cut.at - taken + cut.len;
            taken = cut.at;
        }
        heard.extend(&audio[from..chunk.range().end]);
        heard
    }

    #[test]
    fn a_file_chunk_leaves_out_its_pauses_but_none_of_the_speech() {
        let samples = audio(150);
        let speech = super::super::speech_frames(&frame_scores(&samples));
        let (chunks, _) = streamed(&samples, true, 4096);
        let cuts: usize = chunks.iter().map(|chunk| chunk.cuts.len()).sum();
        assert!(cuts > 10, "{cuts} pauses left out");
        for chunk in &chunks {
            let timeline = chunk.timeline();
            let mut before = 0;
            for cut in &chunk.cuts {
                // Where the cut lies in the audio: every region keeps its padding around it.
                let end_before = timeline.seconds(cut.at as f64 / 16_000.0);
                let gap = (end_before * 16_000.0).round() as usize;
                let gap = gap..gap + cut.len;
                for region in &speech {
                    let padded = (region.start.saturating_sub(PADDING) * FRAME)
                        ..(region.end + PADDING) * FRAME;
                    assert!(
                        padded.end <= gap.start || gap.end <= padded.start,
                        "{gap:?} cuts into {padded:?}"
                    );
                }
                assert!(cut.at > before || before == 0, "{:?}", chunk.cuts);
                before = cut.at;
            }
        }
    }

    #[test]
    fn a_timeline_places_what_was_heard_in_the_audio() {
        let timeline = Timeline {
            start: 16_000,
            cuts: vec![
                Cut {
                    at: 32_000,
                    len: 8_000,
                },
                Cut {
                    at: 48_000,
                    len: 16_000,
                },
            ],
        };
        assert_eq!(timeline.seconds(0.0), 1.0);
        assert_eq!(timeline.seconds(1.5), 2.5);
        // At a cut: the end of what came before; just after it, past the pause.
        assert_eq!(timeline.seconds(2.0), 3.0);
        assert_eq!(timeline.seconds(2.25), 3.75);
        assert_eq!(timeline.seconds(3.5), 6.0);
        assert_eq!(Timeline::starting_at(8_000).seconds(1.0), 1.5);
    }

    #[test]
    fn chunks_of_a_block_are_the_chunks_of_its_parts() {
        let samples = audio(150);
        let mut chunker = Chunker::within(true, Limits::LIVE);
        let mut parts = Vec::new();
        for part in samples.chunks(320) {
            chunker.push(part, &mut |chunk| parts.push(chunk.range()));
        }
        chunker.finish(&mut |chunk| parts.push(chunk.range()));
        let block: Vec<_> = Chunker::within(true, Limits::LIVE)
            .chunks_of(&samples)
            .iter()
            .map(SpeechChunk::range)
            .collect();
        assert!(parts.len() > 10, "{parts:?}");
        assert_eq!(block, parts);
    }

    #[test]
    fn live_chunks_follow_each_other_without_overlap_and_hold_the_samples_they_say() {
        let samples = audio(150);
        let mut chunker = Chunker::within(true, Limits::LIVE);
        let mut chunks = Vec::new();
        for part in samples.chunks(320) {
            chunker.push(part, &mut |chunk| chunks.push(chunk));
        }
        chunker.finish(&mut |chunk| chunks.push(chunk));
        assert!(chunks.len() > 10, "{} chunks", chunks.len());
        for pair in chunks.windows(2) {
            assert!(
                pair[0].range().end <= pair[1].range().start,
                "{:?} then {:?}",
                pair[0].range(),
                pair[1].range()
            );
        }
        for chunk in &chunks {
            assert!(chunk.samples.len() <= Limits::LIVE.max_chunk * FRAME);
            assert_eq!(chunk.samples, samples[chunk.range()]);
        }
    }

    #[test]
    fn memory_stays_bounded_whatever_the_length() {
        let samples = audio(600);
        for speech_only in [true, false] {
            let (chunks, most_held) = streamed(&samples, speech_only, 16_000);
            assert!(chunks.len() > 10);
            // A chunk (30 s), and what may still join it: a long pause (3.2 s), padding, a
            // word next to it.
            assert!(
                most_held < 38 * 16_000,
                "held {most_held} samples (speech only: {speech_only})"
            );
            assert!(
                chunks
                    .iter()
                    .all(|c| c.samples.len() <= MAX_CHUNK_FRAMES * FRAME)
            );
        }
    }

    #[test]
    fn everything_covers_the_audio_without_gaps() {
        let samples = audio(95);
        let (chunks, _) = streamed(&samples, false, 5000);
        assert_eq!(chunks.first().unwrap().start, 0);
        assert_eq!(chunks.last().unwrap().range().end, samples.len());
        for pair in chunks.windows(2) {
            assert_eq!(pair[0].range().end, pair[1].start);
        }
        let (short, _) = streamed(&samples[..16_000 * 20], false, 5000);
        assert_eq!(short.len(), 1);
    }
}
