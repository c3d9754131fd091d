//! The limits a chunk planner works to: padding, the pause that ends a chunk, the longest chunk,
//! the detector's thresholds; for files, live dictation and realtime turns.

use super::*;

/// Where chunks end: at a pause of at least `long_pause` frames between padded regions, at any
/// pause between padded regions once the chunk holds `close_after` frames, or when longer than
/// `max_chunk` frames, cut at the quietest frame at least `earliest_cut` frames in; speech
/// begins at a frame scoring at least `threshold`, and a region proves to be speech with
/// enough frames scoring at least `confident`. With `leave_out_pauses`, the silence between the
/// padded regions a chunk packs is not heard (see [`ChunkPlanner::take_gaps_before`]). With
/// `cut_at_dips`, a chunk that holds `close_after` frames also ends where the voice dips
/// without a pause (see [`Limits::cutting_at_dips_after`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    pub padding: usize,
    pub long_pause: usize,
    pub close_after: usize,
    pub max_chunk: usize,
    pub earliest_cut: usize,
    pub threshold: f32,
    pub confident: f32,
    pub leave_out_pauses: bool,
    pub cut_at_dips: bool,
}

impl Limits {
    /// Files: chunks of up to Whisper's 30 s window, packed across pauses under 3.2 s. Ending
    /// them at the first pause after 12 s (`close_after`) made long files up to a fifth faster
    /// but cost words on the development sets' speech joined with short pauses (`window_floor
    /// ... 256/w2@12`, docs/journal/), so they are packed to the full 30 s.
    /// The pauses inside a chunk are left out down to the padding on either side (0.8 s of
    /// silence between two stretches of speech): the encoder's time goes with the audio it
    /// hears, and a quarter of a chunk of read speech can be silence. On the development sets' long file
    /// it was a sixth faster and read as well or better (docs/performance.md, "Pauses left
    /// out").
    pub const FILE: Limits = Limits {
        padding: PADDING_FRAMES,
        long_pause: LONG_PAUSE_FRAMES,
        close_after: MAX_CHUNK_FRAMES,
        max_chunk: MAX_CHUNK_FRAMES,
        earliest_cut: EARLIEST_CUT_FRAMES,
        threshold: super::super::ENTER,
        confident: CONFIDENT,
        leave_out_pauses: true,
        cut_at_dips: false,
    };

    /// Live audio: a chunk ends once 0.72 s have passed without speech (0.24 s of padding on
    /// each side and 15 frames between), and is at most 15 s, cut at its quietest moment after
    /// 8 s. Of pauses of 0.56, 0.72 and 0.88 s, 0.56 s cut sentences of real speech into more
    /// pieces and made 1.8 points more word errors (tiny.en, `scripts/bench-dictation`); 0.88 s
    /// was no better than 0.72 s and commits later. Padding of 0.32 s made 3.7 points more.
    /// A region proves to be speech with eight frames at 0.85 (not 0.9), since nothing of it is
    /// heard before it does: a soft reader a few minutes into a dictation scored 0.85–0.92 and
    /// took 2.2 s to reach eight frames at 0.9, 0.4 s at 0.85. Of sox's brown, pink and white
    /// noise at five volumes, a tone, a chord, a hum and a sweep, right after speech, 0.85
    /// proves two more than 0.9 (the loudest pink noise after 5.6 s, the sweep after 2.6 s;
    /// 0.9 proves the loud brown noise, the chord and the tone), and whisper hears no words in
    /// any of them.
    pub const LIVE: Limits = Limits {
        padding: LIVE_PADDING_FRAMES,
        long_pause: 15,
        close_after: 15 * SAMPLE_RATE / FRAME,
        max_chunk: 15 * SAMPLE_RATE / FRAME,
        earliest_cut: 8 * SAMPLE_RATE / FRAME,
        threshold: super::super::ENTER,
        confident: LIVE_CONFIDENT,
        leave_out_pauses: false,
        cut_at_dips: false,
    };

    /// These limits with a chunk ending at the first pause once it holds `seconds` (never past
    /// `max_chunk`).
    pub fn closing_after(self, seconds: f64) -> Limits {
        let frames = (seconds.max(0.0) * SAMPLE_RATE as f64) as usize / FRAME;
        Limits {
            close_after: frames.min(self.max_chunk),
            ..self
        }
    }

    /// These limits with a chunk ending once it holds `seconds` (never past `max_chunk`) at the
    /// first pause, or at a dip of the voice (see [`ChunkPlanner::cut_at_dip`]) after
    /// `earliest_cut`; and speech after a short pause joining the chunk at once, whatever its
    /// length will be: realtime turns. Without, a turn running on without a pause that ends it
    /// was held open until its speech passed the longest turn, then cut at its quietest
    /// moment: its text came seconds after its audio (`scripts/bench-realtime`,
    /// docs/journal/2026-12.md).
    pub fn cutting_at_dips_after(self, seconds: f64) -> Limits {
        Limits {
            cut_at_dips: true,
            ..self.closing_after(seconds)
        }
    }

    /// Frames of silence after speech before a live chunk is settled.
    pub const fn pause(&self) -> usize {
        2 * self.padding + self.long_pause
    }
}
