//! What the engine transcribes: the speech regions, padded, packed in order into chunks of at
//! most 30 s (Whisper's window) cut at silences; the audio before the first and after the last
//! region, and long pauses between regions, are left out. With detection off, everything is
//! transcribed, still in chunks of at most 30 s cut at the quietest moments.
//!
//! [`ChunkPlanner`] decides frame by frame and gives each chunk out as soon as nothing later in
//! the audio can change it, so audio of any length is planned in bounded memory; planning all
//! at once ([`plan_chunks`]) is the same planner fed every score. Live audio (someone speaking
//! now, waiting for the text) is planned with [`Limits::LIVE`]: a chunk closes at a short pause
//! and is at most 15 s, so its text comes while the person speaks.

mod cuts;
mod limits;
mod live;

pub use limits::Limits;

use std::collections::VecDeque;
use std::ops::Range;

use super::{CONFIDENT, Closed, FRAME, Frame, MIN_VOICED_FRAMES, RegionTracker, SAMPLE_RATE};

/// The longest chunk: Whisper's 30 s window.
pub const MAX_CHUNK_SAMPLES: usize = 30 * SAMPLE_RATE;
pub(crate) const MAX_CHUNK_FRAMES: usize = MAX_CHUNK_SAMPLES / FRAME;
/// Non-speech kept on each side of a region (0.4 s): of 0, 0.08, 0.24, 0.4 and 0.64 s, the
/// lowest word error rate on the corpus's English clips as they are, with a second of silence
/// around them and with noise around them (tiny.en).
pub const PADDING_FRAMES: usize = 25;
/// A pause at least this long (3.2 s) between regions ends a chunk: transcribing it would cost
/// encoder time for nothing.
const LONG_PAUSE_FRAMES: usize = 200;
/// A region with voiced but no confident frames (a word said softly, or noise) counts as speech
/// when speech comes at most this long (1 s) before or after it: "Bonjour" in a French voice
/// scores 0.6–0.88 throughout, as steady brown noise does, and is followed by confident speech.
const NEXT_TO_SPEECH_FRAMES: usize = 62;
/// Such a region is a word or two at most (2 s); a longer one is noise.
const MAX_SOFT_WORD_FRAMES: usize = 125;
/// The stretch (160 ms) whose mean score places a cut in a region longer than a chunk.
const CUT_WINDOW_FRAMES: usize = 10;
/// A region longer than a chunk is cut at its quietest frame no earlier than this (20 s) into
/// the chunk.
const EARLIEST_CUT_FRAMES: usize = 20 * SAMPLE_RATE / FRAME;

/// Frames below the threshold that keeps a region open after which the voice counts as
/// dropped (48 ms; see [`ChunkPlanner::voice_dropped`]).
const VOICE_DROPPED_FRAMES: usize = 3;

/// Non-speech kept on each side of a region of live audio (0.24 s).
const LIVE_PADDING_FRAMES: usize = 15;
/// A frame of live audio scoring at least this counts as confident (see [`Limits::LIVE`]).
const LIVE_CONFIDENT: f32 = 0.85;

/// The chunks to transcribe in audio of `len` samples whose frames read `scores` (a
/// [`Frame`] each, or a score alone), as sample ranges in order, none overlapping, each at most
/// [`MAX_CHUNK_SAMPLES`]; empty when nobody speaks.
pub fn plan_chunks<F: Copy + Into<Frame>>(scores: &[F], len: usize) -> Vec<Range<usize>> {
    plan_chunks_padded(scores, len, PADDING_FRAMES)
}

/// [`plan_chunks`] with `padding` frames of non-speech kept on each side of a region.
pub fn plan_chunks_padded<F: Copy + Into<Frame>>(
    scores: &[F],
    len: usize,
    padding: usize,
) -> Vec<Range<usize>> {
    let limits = Limits {
        padding,
        ..Limits::FILE
    };
    plan_chunks_within(scores, len, limits)
}

/// The chunks of speech of the whole audio under `limits` (benchmarks weigh other limits than
/// [`Limits::FILE`] with it).
pub fn plan_chunks_within<F: Copy + Into<Frame>>(
    scores: &[F],
    len: usize,
    limits: Limits,
) -> Vec<Range<usize>> {
    plan_all(ChunkPlanner::speech(limits), scores, len)
}

/// The chunks of the whole audio, speech or not, each at most [`MAX_CHUNK_SAMPLES`].
pub fn plan_everything<F: Copy + Into<Frame>>(scores: &[F], len: usize) -> Vec<Range<usize>> {
    plan_all(ChunkPlanner::everything(Limits::FILE), scores, len)
}

fn plan_all<F: Copy + Into<Frame>>(
    mut planner: ChunkPlanner,
    scores: &[F],
    len: usize,
) -> Vec<Range<usize>> {
    let mut frames = Vec::new();
    for &score in scores {
        planner.push(score, &mut frames);
    }
    planner.finish(&mut frames);
    frames
        .into_iter()
        .map(|frames| frames.start * FRAME..(frames.end * FRAME).min(len))
        .filter(|samples| !samples.is_empty())
        .collect()
}

/// What a planner keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// The speech regions, with this many frames of padding on each side.
    Speech { padding: usize },
    /// Everything.
    Everything,
}

/// Plans chunks frame by frame (see the module documentation).
pub struct ChunkPlanner {
    keep: Keep,
    limits: Limits,
    /// Frames scored so far.
    frames: usize,
    regions: RegionTracker,
    /// The open region is speech and already part of `pending`, which grows with it.
    open_in_pending: bool,
    /// The last region with voiced but no confident frames, while speech may still come
    /// close enough after it to make it speech.
    maybe: Option<Range<usize>>,
    /// Where the last region of speech ended.
    last_speech_end: Option<usize>,
    /// The chunk being built, in frames; its end may lie past the frames scored (padding).
    pending: Option<Range<usize>>,
    /// With [`Limits::leave_out_pauses`]: the pauses between padded regions inside the chunks
    /// planned (given out or pending), in frames, in order, until taken.
    gaps: VecDeque<Range<usize>>,
    /// The scores from frame `scores_from` on: where a long chunk is cut.
    scores: VecDeque<f32>,
    scores_from: usize,
    /// With [`Limits::cut_at_dips`]: the quietest frame of the dip heard in a chunk past
    /// `close_after`, where the chunk is cut if the voice comes back.
    dip: Option<(usize, f32)>,
}

impl ChunkPlanner {
    /// A planner of the speech, within `limits`.
    pub fn speech(limits: Limits) -> ChunkPlanner {
        ChunkPlanner::new(
            Keep::Speech {
                padding: limits.padding,
            },
            limits,
        )
    }

    /// A planner of the whole audio, in chunks of at most `limits.max_chunk`.
    pub fn everything(limits: Limits) -> ChunkPlanner {
        ChunkPlanner::new(Keep::Everything, limits)
    }

    fn new(keep: Keep, limits: Limits) -> ChunkPlanner {
        ChunkPlanner {
            keep,
            limits,
            frames: 0,
            regions: RegionTracker::with_threshold(limits.threshold)
                .confident_from(limits.confident),
            open_in_pending: false,
            maybe: None,
            last_speech_end: None,
            pending: (keep == Keep::Everything).then_some(0..0),
            gaps: VecDeque::new(),
            scores: VecDeque::new(),
            scores_from: 0,
            dip: None,
        }
    }

    /// Takes the next frame; appends to `chunks` every chunk (in frames) that nothing later can
    /// change.
    pub fn push(&mut self, heard: impl Into<Frame>, chunks: &mut Vec<Range<usize>>) {
        let heard = heard.into();
        let frame = self.frames;
        self.frames += 1;
        self.scores.push_back(heard.score);
        match self.keep {
            Keep::Everything => {
                if let Some(pending) = &mut self.pending {
                    pending.end = self.frames;
                }
            }
            Keep::Speech { padding } => {
                if let Some(closed) = self.regions.push(frame, heard) {
                    self.add_closed(closed, padding, chunks);
                    self.open_in_pending = false;
                }
                self.forget_maybe();
                self.hold_long_region(padding, chunks);
                self.settle(padding, chunks);
            }
        }
        self.cut_long(false, chunks);
        self.cut_at_dip(chunks);
        self.forget_scores();
    }

    /// The end of the audio: appends the remaining chunks.
    pub fn finish(&mut self, chunks: &mut Vec<Range<usize>>) {
        if let Keep::Speech { padding } = self.keep
            && let Some(closed) = self.regions.finish()
        {
            self.add_closed(closed, padding, chunks);
        }
        if let Some(pending) = &mut self.pending {
            pending.end = pending.end.min(self.frames);
        }
        self.cut_long(true, chunks);
        if let Some(last) = self.pending.take().filter(|chunk| !chunk.is_empty()) {
            chunks.push(last);
        }
    }

    /// A region that has ended: speech, or a region without confident frames that counts as
    /// speech next to speech (held for a while in case speech follows).
    fn add_closed(&mut self, closed: Closed, padding: usize, chunks: &mut Vec<Range<usize>>) {
        if closed.speech {
            self.add_speech(closed.frames, padding, chunks);
        } else if closed.frames.len() > MAX_SOFT_WORD_FRAMES {
        } else if self
            .last_speech_end
            .is_some_and(|end| closed.frames.start <= end + NEXT_TO_SPEECH_FRAMES)
        {
            self.add_region(closed.frames, padding, chunks);
        } else {
            self.maybe = Some(closed.frames);
        }
    }

    /// Adds a region of speech, and the region without confident frames just before it.
    fn add_speech(&mut self, region: Range<usize>, padding: usize, chunks: &mut Vec<Range<usize>>) {
        if let Some(maybe) = self.maybe.take()
            && maybe.end + NEXT_TO_SPEECH_FRAMES >= region.start
        {
            self.add_region(maybe, padding, chunks);
        }
        self.last_speech_end = Some(region.end);
        self.add_region(region, padding, chunks);
    }

    /// Forgets the held region without confident frames once no speech can come close enough
    /// after it.
    fn forget_maybe(&mut self) {
        let Some(maybe) = &self.maybe else {
            return;
        };
        let next_start = self
            .regions
            .open()
            .map_or(self.frames, |(open, _)| open.start);
        if next_start > maybe.end + NEXT_TO_SPEECH_FRAMES {
            self.maybe = None;
        }
    }

    /// Adds a region of speech: into the pending chunk when their padding meets, or when the
    /// pause between them is short and the two fit in one chunk; else the pending chunk is
    /// done and the region starts the next.
    fn add_region(&mut self, region: Range<usize>, padding: usize, chunks: &mut Vec<Range<usize>>) {
        let padded = region.start.saturating_sub(padding)..region.end + padding;
        match &mut self.pending {
            Some(last) if padded.start <= last.end => last.end = last.end.max(padded.end),
            Some(last)
                if padded.start - last.end < self.limits.long_pause
                    && last.len() < self.limits.close_after
                    && padded.end - last.start <= self.limits.max_chunk =>
            {
                if self.limits.leave_out_pauses {
                    self.gaps.push_back(last.end..padded.start);
                }
                last.end = padded.end
            }
            _ => {
                if let Some(done) = self.pending.replace(padded) {
                    self.give_out(done, chunks);
                }
            }
        }
    }

    /// With [`Limits::cut_at_dips`], whether speech joins the pending chunk (or starts one) as
    /// soon as it has proved itself, whatever its length will be: a chunk is not held open
    /// while speech after a short pause goes on, to learn whether the two fit in one chunk
    /// (that wait lasted up to the longest chunk's length), and speech going on is in the
    /// chunk, where a dip can cut it. Past `close_after`, a pause ends the chunk instead.
    fn joins_at_once(&self, open: &Range<usize>, padding: usize) -> bool {
        self.limits.cut_at_dips
            && self.pending.as_ref().is_none_or(|pending| {
                pending.len() < self.limits.close_after
                    && open
                        .start
                        .saturating_sub(padding)
                        .saturating_sub(pending.end)
                        < self.limits.long_pause
            })
    }

    /// A region of speech joins the pending chunk before it ends where the join cannot depend
    /// on its end: where its padding meets the chunk's, or where it is longer than a chunk
    /// (such a region only ever joins by meeting). The chunk can then be cut and given out
    /// while the region goes on. A region longer than a chunk that has not proved to be speech
    /// keeps only its last chunk's length.
    fn hold_long_region(&mut self, padding: usize, chunks: &mut Vec<Range<usize>>) {
        let Some((open, speech)) = self.regions.open() else {
            return;
        };
        // A soft word just before speech joins as soon as the speech has proved itself.
        if speech
            && let Some(maybe) = self
                .maybe
                .take_if(|maybe| maybe.end + NEXT_TO_SPEECH_FRAMES >= open.start)
        {
            self.add_region(maybe, padding, chunks);
        }
        let meets = self
            .pending
            .as_ref()
            .is_some_and(|pending| open.start.saturating_sub(padding) <= pending.end);
        let max_chunk = self.limits.max_chunk;
        if speech
            && (meets
                || self.joins_at_once(&open, padding)
                || open.len() > max_chunk
                || self.open_in_pending)
        {
            self.add_speech(open, padding, chunks);
            self.open_in_pending = true;
        } else if !speech && open.len() > max_chunk {
            self.regions
                .forget_before(self.frames.saturating_sub(max_chunk));
        }
    }

    /// Gives the pending chunk out once no later region can join it: the earliest a region
    /// can start (with its padding) is past the chunk's end, and either past a long pause or
    /// the region would make the chunk too long.
    fn settle(&mut self, padding: usize, chunks: &mut Vec<Range<usize>>) {
        let Some(pending) = &self.pending else {
            return;
        };
        let open = self
            .maybe
            .clone()
            .or_else(|| self.regions.open().map(|(open, _)| open));
        let earliest = open.as_ref().map_or(self.frames, |open| open.start);
        let earliest_end = open.map_or(self.frames + MIN_VOICED_FRAMES, |open| open.end);
        let earliest_padded = earliest.saturating_sub(padding);
        let apart = earliest_padded > pending.end
            && (earliest_padded - pending.end >= self.limits.long_pause
                || pending.len() >= self.limits.close_after
                || earliest_end + padding - pending.start > self.limits.max_chunk);
        if apart && let Some(done) = self.pending.take() {
            self.give_out(done, chunks);
        }
    }

    /// A finished chunk, cut into pieces where it is too long.
    fn give_out(&mut self, chunk: Range<usize>, chunks: &mut Vec<Range<usize>>) {
        let pending = self.pending.replace(chunk);
        self.cut_long(true, chunks);
        chunks.extend(std::mem::replace(&mut self.pending, pending));
    }

    /// Drops the scores no cut can look at any more.
    fn forget_scores(&mut self) {
        let keep_from = self.needed_from();
        while self.scores_from < keep_from && !self.scores.is_empty() {
            self.scores.pop_front();
            self.scores_from += 1;
        }
    }
}

#[cfg(test)]
#[allow(clippy::single_range_in_vec_init)] // one stretch of speech, given as a list of them
mod tests {
    use super::*;

    const SECOND: usize = SAMPLE_RATE / FRAME; // 62.5 frames: 62

    /// Scores with speech (0.9) over the given frame ranges and silence (0.0) elsewhere.
    fn scores(frames: usize, speech: &[Range<usize>]) -> Vec<f32> {
        let mut scores = vec![0.0; frames];
        for range in speech {
            scores[range.clone()].fill(0.9);
        }
        scores
    }

    fn in_frames(chunks: Vec<Range<usize>>) -> Vec<Range<usize>> {
        chunks
            .into_iter()
            .map(|c| c.start / FRAME..c.end.div_ceil(FRAME))
            .collect()
    }

    #[test]
    fn leading_and_trailing_silence_is_trimmed_to_the_padding() {
        let s = scores(500, &[100..300]);
        let chunks = in_frames(plan_chunks(&s, 500 * FRAME));
        assert_eq!(chunks, vec![100 - PADDING_FRAMES..300 + PADDING_FRAMES]);
        // Padding stops at the audio's edges, and the last partial frame ends at `len`.
        let s = scores(200, &[0..200]);
        assert_eq!(plan_chunks(&s, 200 * FRAME - 7), vec![0..200 * FRAME - 7]);
    }

    #[test]
    fn no_speech_gives_no_chunk() {
        assert!(plan_chunks(&scores(1000, &[]), 1000 * FRAME).is_empty());
        assert!(plan_chunks::<f32>(&[], 0).is_empty());
    }

    #[test]
    fn short_pauses_stay_inside_a_chunk_and_long_ones_end_it() {
        let short = 2 * PADDING_FRAMES + LONG_PAUSE_FRAMES - 1;
        let s = scores(2000, &[100..200, 200 + short..400 + short]);
        assert_eq!(plan_chunks(&s, 2000 * FRAME).len(), 1);
        let long = 2 * PADDING_FRAMES + LONG_PAUSE_FRAMES;
        let s = scores(2000, &[100..200, 200 + long..300 + long]);
        let chunks = in_frames(plan_chunks(&s, 2000 * FRAME));
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].end, 200 + PADDING_FRAMES);
        assert_eq!(chunks[1].start, 200 + long - PADDING_FRAMES);
    }

    /// The chunks a live planner gives out, each with the frame at which it came out.
    fn live_chunks(scores: &[f32]) -> Vec<(Range<usize>, usize)> {
        live_chunks_within(scores, Limits::LIVE)
    }

    /// [`live_chunks`] within `limits`.
    fn live_chunks_within(scores: &[f32], limits: Limits) -> Vec<(Range<usize>, usize)> {
        let mut planner = ChunkPlanner::speech(limits);
        let mut out = Vec::new();
        let mut chunks = Vec::new();
        for (frame, &score) in scores.iter().enumerate() {
            planner.push(score, &mut chunks);
            out.extend(chunks.drain(..).map(|chunk| (chunk, frame)));
        }
        planner.finish(&mut chunks);
        out.extend(chunks.drain(..).map(|chunk| (chunk, scores.len())));
        out
    }

    #[test]
    fn live_chunks_close_once_a_short_pause_has_passed() {
        let pause = Limits::LIVE.pause();
        assert_eq!(pause, 45, "0.72 s");
        // A pause just under it joins two sentences; one of it parts them.
        let joined = scores(1000, &[100..200, 200 + pause - 1..300]);
        assert_eq!(live_chunks(&joined).len(), 1);
        let parted = scores(1000, &[100..200, 200 + pause..300 + pause]);
        let chunks = live_chunks(&parted);
        assert_eq!(chunks.len(), 2, "{chunks:?}");
        // The first is given out as soon as the pause has passed, not at the end of the audio.
        let (first, given_at) = &chunks[0];
        assert_eq!(first.clone(), 85..215);
        assert_eq!(*given_at, 200 + pause - 1);
    }

    #[test]
    fn a_live_chunk_is_settling_in_a_pause_once_its_padding_is_heard() {
        let s = scores(400, &[100..200, 300..350]);
        let mut planner = ChunkPlanner::speech(Limits::LIVE);
        let mut chunks = Vec::new();
        let mut settling = Vec::new();
        for &score in &s {
            planner.push(score, &mut chunks);
            settling.push(planner.settling());
        }
        planner.finish(&mut chunks);
        let padded = 100 - LIVE_PADDING_FRAMES..200 + LIVE_PADDING_FRAMES;
        // Nothing while nobody has spoken or someone speaks.
        assert!(settling[..200].iter().all(Option::is_none));
        // In the pause, once the padding after the speech is heard: the chunk as it settles.
        let first_settling = settling.iter().position(Option::is_some).unwrap();
        assert!(
            first_settling < 200 + Limits::LIVE.pause(),
            "{first_settling}"
        );
        assert_eq!(settling[first_settling].clone(), Some(padded.clone()));
        assert_eq!(chunks[0], padded);
        // Not while the next sentence is spoken, and again in the pause after it.
        assert!(settling[300..350].iter().all(Option::is_none));
        assert_eq!(settling[350..].iter().flatten().next(), Some(&chunks[1]));
        // Given out once the pause has passed: nothing settles any more.
        assert!(settling[399].is_none());
        // A file's planner of the whole audio never settles early.
        let mut everything = ChunkPlanner::everything(Limits::FILE);
        for &score in &s {
            everything.push(score, &mut chunks);
            assert!(everything.settling().is_none());
        }
    }

    #[test]
    fn a_file_chunk_gives_its_pauses_to_leave_out_and_live_audio_none() {
        let planned = |limits: Limits, s: &[f32]| {
            let mut planner = ChunkPlanner::speech(limits);
            let mut chunks = Vec::new();
            for &score in s {
                planner.push(score, &mut chunks);
            }
            planner.finish(&mut chunks);
            let gaps = planner.take_gaps_before(s.len());
            (chunks, gaps)
        };
        // A pause of 1.6 s: one chunk, and what lies between the padded regions left out.
        let s = scores(600, &[100..200, 300..400]);
        let (chunks, gaps) = planned(Limits::FILE, &s);
        assert_eq!(chunks, vec![75..425]);
        assert_eq!(gaps, vec![225..275]);
        // Padding that meets leaves nothing out.
        let s = scores(600, &[100..200, 240..400]);
        assert_eq!(planned(Limits::FILE, &s), (vec![75..425], vec![]));
        // Live audio hears its chunks whole.
        let s = scores(600, &[100..200, 240..400]);
        let (chunks, gaps) = planned(Limits::LIVE, &s);
        assert_eq!(chunks, vec![85..415]);
        assert!(gaps.is_empty(), "{gaps:?}");

        // A pause that a chunk ends in is parted: the rest stays for the next chunk.
        let mut planner = ChunkPlanner::speech(Limits::FILE);
        let mut chunks = Vec::new();
        for &score in &scores(600, &[100..200, 300..400]) {
            planner.push(score, &mut chunks);
        }
        assert_eq!(planner.take_gaps_before(250), vec![225..250]);
        assert_eq!(planner.take_gaps_before(600), vec![250..275]);
        assert!(planner.take_gaps_before(600).is_empty());
    }

    #[test]
    fn live_chunks_are_at_most_fifteen_seconds_and_cut_while_speech_goes_on() {
        let frames = 40 * SECOND;
        let talk = scores(frames, &[0..frames]);
        let chunks = live_chunks(&talk);
        assert!(chunks.len() >= 3, "{chunks:?}");
        for (chunk, given_at) in &chunks[..chunks.len() - 1] {
            assert!(chunk.len() <= Limits::LIVE.max_chunk, "{chunk:?}");
            assert!(chunk.len() >= Limits::LIVE.earliest_cut, "{chunk:?}");
            assert!(*given_at < frames, "given out while the speech went on");
        }
    }

    /// Realtime turns' limits: past 10 s, a chunk ends at a pause or a dip of the voice.
    fn turn_limits() -> Limits {
        Limits::LIVE.cutting_at_dips_after(10.0)
    }

    /// How long after its end each chunk but the last came out, in frames.
    fn lateness(chunks: &[(Range<usize>, usize)]) -> Vec<usize> {
        let given = &chunks[..chunks.len().saturating_sub(1)];
        given.iter().map(|(chunk, at)| at - chunk.end).collect()
    }

    #[test]
    fn a_turn_past_its_length_is_cut_at_a_dip_once_the_voice_comes_back() {
        // 20 s of speech whose voice dips to 0.4 (under the threshold, over what ends a
        // region) for 0.2 s at 5 s and again at 12 s.
        let frames = 20 * SECOND;
        let mut talk = scores(frames, &[0..frames]);
        let (early, late) = (5 * SECOND..5 * SECOND + 12, 12 * SECOND..12 * SECOND + 12);
        for dip in [early.clone(), late.clone()] {
            talk[dip].fill(0.4);
        }
        let chunks = live_chunks_within(&talk, turn_limits());
        assert_eq!(chunks.len(), 2, "{chunks:?}");
        let (first, given_at) = &chunks[0];
        // Not at the dip before 10 s; within the one after, as soon as the voice is back.
        assert!(late.contains(&first.end), "{first:?}");
        assert!(*given_at <= late.end + CUT_WINDOW_FRAMES, "{given_at}");
        assert_eq!(chunks[1].0.start, first.end);
        // Other live chunks are cut at their longest, at the quietest moment.
        let chunks = live_chunks(&talk);
        assert!(chunks[0].1 >= Limits::LIVE.max_chunk, "{chunks:?}");
    }

    #[test]
    fn a_turn_is_not_held_open_while_speech_after_a_short_pause_goes_on() {
        // 3 s of speech, a 0.6 s pause (parts the padded regions, ends no turn), then 17 s of
        // speech with a dip at 14 s.
        let pause = 37;
        assert!(2 * LIVE_PADDING_FRAMES < pause && pause < Limits::LIVE.pause());
        let frames = 21 * SECOND;
        let mut talk = scores(frames, &[0..3 * SECOND, 3 * SECOND + pause..frames]);
        talk[14 * SECOND..14 * SECOND + 12].fill(0.4);
        // Other live chunks wait to learn whether the speech after the pause fits in the
        // chunk: the first came out 15 s after it began, 12 s after its speech ended.
        let held = live_chunks(&talk);
        assert!(lateness(&held)[0] > 10 * SECOND, "{held:?}");
        // A turn takes the speech at once, and its first part comes out at the dip.
        let chunks = live_chunks_within(&talk, turn_limits());
        assert!(chunks.len() >= 2, "{chunks:?}");
        assert!(chunks[0].0.end > 14 * SECOND, "{chunks:?}");
        for late in lateness(&chunks) {
            assert!(late <= 2 * CUT_WINDOW_FRAMES, "{chunks:?}");
        }
    }

    #[test]
    fn a_dip_that_silence_follows_cuts_no_turn() {
        // 12 s of speech fading out (0.4 for 0.2 s), then silence: one turn, no piece of
        // silence after it.
        let frames = 20 * SECOND;
        let mut talk = scores(frames, &[0..12 * SECOND]);
        talk[12 * SECOND..12 * SECOND + 12].fill(0.4);
        let chunks = live_chunks_within(&talk, turn_limits());
        assert_eq!(chunks.len(), 1, "{chunks:?}");
        assert!(chunks[0].0.end >= 12 * SECOND + 12, "{chunks:?}");
    }

    /// Five 8 s sentences with `pause` frames between them, and the chunks planned in them.
    fn five_sentences(pause: usize, limits: Limits) -> (Vec<Range<usize>>, Vec<Range<usize>>) {
        let sentences: Vec<Range<usize>> = (0..5)
            .map(|n| n * (8 * SECOND + pause)..n * (8 * SECOND + pause) + 8 * SECOND)
            .collect();
        let frames = 5 * (8 * SECOND + pause);
        let chunks = plan_chunks_within(&scores(frames, &sentences), frames * FRAME, limits);
        (sentences, in_frames(chunks))
    }

    #[test]
    fn a_chunk_past_close_after_ends_at_the_next_pause() {
        let twelve = Limits::FILE.closing_after(12.0);
        assert_eq!(twelve.close_after, 12 * SAMPLE_RATE / FRAME);
        assert_eq!(
            Limits::FILE.closing_after(100.0).close_after,
            Limits::FILE.max_chunk
        );
        // 1 s pauses: the padded sentences stay apart, so each chunk ends at the first pause
        // after 12 s: two sentences, two sentences, one.
        let (sentences, chunks) = five_sentences(SECOND, twelve);
        let sentences_in = |chunk: &Range<usize>| {
            sentences
                .iter()
                .filter(|s| chunk.start <= s.start && s.end <= chunk.end)
                .count()
        };
        assert_eq!(
            chunks.iter().map(sentences_in).collect::<Vec<_>>(),
            [2, 2, 1]
        );
        // Pauses of 0.5 s, where the padding meets, are not where a chunk ends: they are packed
        // into 30 s and cut at their quietest moment.
        let (_, chunks) = five_sentences(SECOND / 2, twelve);
        assert_eq!(chunks.len(), 2, "{chunks:?}");
        assert!(chunks[0].len() > 20 * SECOND, "{chunks:?}");
    }

    #[test]
    fn chunks_never_exceed_thirty_seconds_and_cut_at_silences() {
        // Five 8 s sentences with 1 s pauses (44 s of audio), packed up to 30 s.
        let (sentences, chunks) = five_sentences(SECOND, Limits::FILE);
        assert_eq!(chunks.len(), 2);
        for chunk in &chunks {
            assert!(chunk.len() <= MAX_CHUNK_FRAMES, "{chunk:?}");
            // Every sentence lies wholly inside one chunk.
            for sentence in &sentences {
                let inside = chunk.start <= sentence.start && sentence.end <= chunk.end;
                let outside = sentence.end <= chunk.start || chunk.end <= sentence.start;
                assert!(inside || outside, "{chunk:?} cuts {sentence:?}");
            }
        }
        assert!(chunks[0].end <= chunks[1].start);
    }

    #[test]
    fn speech_without_pauses_is_cut_in_its_quietest_stretch() {
        let frames = 70 * SECOND;
        let mut s = scores(frames, &[0..frames]);
        let quiet = 25 * SECOND;
        s[quiet - 2..quiet + 3].fill(0.4); // still speech, but the quietest moment
        s[quiet + 200] = 0.0; // quieter, but only for a frame
        let chunks = in_frames(plan_chunks(&s, frames * FRAME));
        assert_eq!(chunks[0].start, 0);
        assert!(
            (quiet - 2..=quiet + 3).contains(&chunks[0].end),
            "{chunks:?}"
        );
        assert!(chunks.iter().all(|c| c.len() <= MAX_CHUNK_FRAMES));
        assert_eq!(chunks.last().unwrap().end, frames);
        // Pieces follow each other with nothing left out.
        for pair in chunks.windows(2) {
            assert_eq!(pair[0].end, pair[1].start);
        }
    }

    #[test]
    fn a_soft_word_next_to_speech_is_kept_and_soft_noise_alone_is_not() {
        // "Bonjour" never scores as confidently as speech, but speech follows within a second.
        let mut s = vec![0.0; 20];
        s.extend([0.8; 40]);
        s.extend([0.1; 20]);
        s.extend([0.95; 100]);
        s.extend([0.0; 300]);
        let chunks = in_frames(plan_chunks(&s, s.len() * FRAME));
        assert_eq!(chunks, vec![0..180 + PADDING_FRAMES]);
        // The same word alone, or a long stretch of such scores next to speech, is not speech.
        let mut alone = vec![0.0; 20];
        alone.extend([0.8; 40]);
        alone.extend([0.0; 300]);
        assert!(plan_chunks(&alone, alone.len() * FRAME).is_empty());
        let mut noise = vec![0.8; 400];
        noise.extend([0.1; 20]);
        noise.extend([0.95; 100]);
        noise.extend([0.0; 300]);
        let chunks = in_frames(plan_chunks(&noise, noise.len() * FRAME));
        assert_eq!(chunks, vec![420 - PADDING_FRAMES..520 + PADDING_FRAMES]);
    }

    #[test]
    fn the_voice_counts_as_dropped_from_a_few_quiet_frames_until_its_region_closes() {
        // Speech, a dip of two frames inside it, then quiet.
        let mut s = scores(300, &[50..150, 152..200]);
        s[150] = 0.1;
        s[151] = 0.1;
        let mut planner = ChunkPlanner::speech(Limits::LIVE);
        let mut chunks = Vec::new();
        let dropped: Vec<bool> = s
            .iter()
            .map(|&score| {
                planner.push(score, &mut chunks);
                planner.voice_dropped()
            })
            .collect();
        let first = dropped.iter().position(|&d| d).unwrap();
        // Not within the speech, its two-frame dip included...
        assert!(dropped[..200].iter().all(|&d| !d), "{dropped:?}");
        // ... but from the third quiet frame after it, while its region is still open.
        assert_eq!(first, 200 + VOICE_DROPPED_FRAMES - 1);
        let last = dropped.iter().rposition(|&d| d).unwrap();
        assert!(planner.regions.open().is_none());
        assert!(last < 200 + super::super::END_AFTER_FRAMES, "{last}");
        assert!(dropped[first..=last].iter().all(|&d| d));
    }

    #[test]
    fn a_soft_reader_proves_to_be_speech_sooner_live_than_in_a_file() {
        // A reader whose voice scores 0.85–0.89 for a second, then now and then 0.9.
        let mut s = vec![0.0; 30];
        s.extend([0.87; 62]);
        s.extend((0..200).map(|i| if i % 20 == 0 { 0.92 } else { 0.87 }));
        s.extend([0.0; 100]);
        let proved_at = |limits: Limits| {
            let mut planner = ChunkPlanner::speech(limits);
            let mut chunks = Vec::new();
            s.iter().position(|&score| {
                planner.push(score, &mut chunks);
                planner.speaking()
            })
        };
        // Live: once it is long enough to be a word (15 frames), all of them at 0.85.
        assert_eq!(proved_at(Limits::LIVE), Some(30 + MIN_VOICED_FRAMES - 1));
        // A file waits for eight frames at 0.9, 3.5 s into the reading.
        assert_eq!(proved_at(Limits::FILE), Some(30 + 62 + 7 * 20));
        // Both keep the whole reading.
        for limits in [Limits::LIVE, Limits::FILE] {
            let chunks = in_frames(plan_chunks_within(&s, s.len() * FRAME, limits));
            assert_eq!(chunks, vec![30 - limits.padding..292 + limits.padding]);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Silence, speech and noise (a region that never proves to be speech; always followed by
        /// enough silence to close it) in blocks of up to 10 s.
        #[test]
        fn chunks_hold_every_region_in_order_in_bounded_memory(
            blocks in proptest::collection::vec((0u8..3, 1usize..640), 1..60)
        ) {
            let mut s = Vec::new();
            for (kind, frames) in blocks {
                match kind {
                    0 => s.extend(std::iter::repeat_n(0.0, frames)),
                    1 => s.extend(std::iter::repeat_n(0.95, frames)),
                    _ => {
                        s.extend(std::iter::repeat_n(0.6, frames.min(200)));
                        s.extend(std::iter::repeat_n(0.0, 12));
                    }
                }
            }
            let mut planner = ChunkPlanner::speech(Limits::FILE);
            let mut chunks = Vec::new();
            let mut most_held = 0;
            for (i, &score) in s.iter().enumerate() {
                planner.push(score, &mut chunks);
                proptest::prop_assert!(chunks.iter().all(|c| c.end <= i + 1));
                most_held = most_held.max(i + 1 - planner.needed_from());
            }
            planner.finish(&mut chunks);
            proptest::prop_assert!(
                // A chunk, and what may still join it: a long pause, padding, a word next to it.
                most_held <= MAX_CHUNK_FRAMES + LONG_PAUSE_FRAMES + 2 * PADDING_FRAMES + NEXT_TO_SPEECH_FRAMES + MAX_SOFT_WORD_FRAMES + MIN_VOICED_FRAMES,
                "held {} frames", most_held
            );
            for chunk in &chunks {
                proptest::prop_assert!(!chunk.is_empty() && chunk.len() <= MAX_CHUNK_FRAMES, "{:?}", chunk);
            }
            for pair in chunks.windows(2) {
                proptest::prop_assert!(pair[0].end <= pair[1].start, "{:?}", chunks);
            }
            for region in crate::audio::vad::speech_frames(&s) {
                let covered = region.clone().all(|f| chunks.iter().any(|c| c.contains(&f)));
                proptest::prop_assert!(covered, "{:?} not in {:?}", region, chunks);
            }
        }
    }
}
