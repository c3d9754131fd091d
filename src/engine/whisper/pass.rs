//! What every pass over a chunk shares: how the engine runs a request (`Settings`), the start
//! of a chunk said before, a chunk as it is heard, and what a request cost besides its first
//! passes.

use super::super::EngineError;
use super::recovery::Recovery;
use super::tokens::Reading;
use super::window::EncoderWindow;

/// Samples per second of the audio whisper takes.
pub(super) const SAMPLE_RATE: f64 = 16_000.0;

/// The first attempt's temperature: greedy.
pub(super) const TEMPERATURE: f32 = 0.0;

/// A retry at temperature samples from 0.2 up to 1.0 in steps of 0.2 (whisper.cpp's fallback,
/// which keeps the encoder's output and stops at the first decode its thresholds accept).
pub(super) const FALLBACK_TEMPERATURE: f32 = 0.2;

pub(super) fn failed(e: whisper_rs::WhisperError) -> EngineError {
    EngineError::Failed(e.to_string())
}

/// How the engine runs a request.
#[derive(Clone)]
pub(super) struct Settings {
    /// The language every chunk is decoded in; None detects (audio without chunks only).
    pub language: Option<String>,
    pub threads: usize,
    /// Decoder states the chunks are shared out among, `threads` split between them.
    pub workers: usize,
    /// The window for each chunk.
    pub window: EncoderWindow,
    /// How a chunk is heard again when its text is rejected.
    pub recovery: Recovery,
    /// How decoded segments are read (words timed or not).
    pub reading: Reading,
    /// whisper's first timestamp token (`<|0.00|>`).
    pub first_timestamp: i32,
    /// The decoders align tokens by DTW: no pass may hear too little audio for it
    /// ([`DTW_MIN_CENTISECONDS`]).
    pub aligned: bool,
    /// What the start of the request's first chunk was heard as ([`EngineRequest::said_before`]).
    pub said_before: Option<Said>,
}

/// The start of a chunk said before: its text, the tokens of it the decoder is made to read
/// first (after `<|0.00|>`), and how long it lasts.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Said {
    pub text: String,
    pub tokens: Vec<i32>,
    pub seconds: f64,
}

/// What a request cost besides its first pass over each chunk.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Retries {
    /// Chunks heard more than once.
    pub chunks: u64,
    /// Passes after the first, over all chunks.
    pub passes: u64,
    /// Chunks whose every attempt looped, cut where the loop starts.
    pub cut: u64,
    /// Rests after a chunk's last decoded timestamp heard through a window of their own
    /// instead of another pass as wide as the chunk's window.
    pub tails: u64,
    /// Chunks heard after what was said before whose text heard alone was kept instead.
    pub alone: u64,
    /// Rests of chunks whose text stopped early, heard on their own.
    pub rests: u64,
    /// Readings after what was said before ended where they said their own start again
    /// (then heard alone).
    pub start_said_again: u64,
    /// Chunks whose text ended in its last phrase said twice, their end heard again.
    pub ends: u64,
}

impl std::ops::AddAssign for Retries {
    fn add_assign(&mut self, other: Retries) {
        self.chunks += other.chunks;
        self.passes += other.passes;
        self.cut += other.cut;
        self.tails += other.tails;
        self.alone += other.alone;
        self.rests += other.rests;
        self.start_said_again += other.start_said_again;
        self.ends += other.ends;
    }
}

/// One chunk as whisper is asked to hear it.
#[derive(Clone, Copy)]
pub(super) struct Chunk<'a> {
    pub(super) samples: &'a [f32],
    /// None detects.
    pub(super) language: Option<&'a str>,
    /// Its start, said before.
    pub(super) said: Option<&'a Said>,
    /// The text heard in the audio just before it, in the same call (the rest of a chunk
    /// whose text stopped early): the prompt goes on from it.
    pub(super) heard_before: Option<&'a str>,
}

/// The part of a chunk after the text said before lasts at least this long (seconds) for a
/// loop in its reading after that text to send it straight to the chunk heard alone, that
/// reading neither heard again nor kept: whisper, made to read the text before, says the
/// chunk's sentence twice ("He began a confused complaint against the wizard... He began a
/// confused complaint...") where it reads it alone once, and a wider window took up to 1.2 s
/// of a live dictation's last chunk to loop again (`scripts/bench-dictation`). Shorter parts
/// are a word or two, which their own audio alone reads worse ("70." after the phone
/// prompts' words before, "7D" alone) and whose retries are cheap (docs/journal/2026-12.md).
pub(super) const ALONE_AFTER_LOOP_SECONDS: f64 = 3.0;

/// Whether a loop in a reading after the text said before, over `seconds` after that text,
/// sends the chunk to be heard alone ([`ALONE_AFTER_LOOP_SECONDS`]): such a reading also ends
/// where it says its own start again ([`Watch::ends_at_start_said_again`]), a loop.
pub(super) fn gives_way_to_alone(seconds: f64) -> bool {
    seconds >= ALONE_AFTER_LOOP_SECONDS
}
