//! The engine stage, on the blocking thread that holds the engine slot, fed as the audio is
//! decoded: voice activity detection cuts the audio into chunks of speech (switched off, into
//! chunks of the whole audio), and each chunk goes to the engine as soon as it is settled, its
//! segments handed on at once; an engine that hears several chunks at once (whisper, on two
//! decoder states) hears a file's chunks side by side ([`SideBySide`]), their segments handed on
//! in the audio's order. Only the audio the chunks still need is kept, so memory does not grow
//! with the audio's length. Audio without speech never reaches the engine. An engine that
//! hears whole clips (the replay engine) gets the whole audio and its chunks in one call; on live
//! audio, at each chunk, the audio since what it last recognised (so clips come out at the
//! pauses, as real engines' chunks do).
//! Live audio (see [`LiveSlots`]) is cut at short pauses and each chunk takes the engine for
//! itself. A live chunk's prompt is the request's alone: carrying the text heard so far made
//! tiny.en say the prompt's last sentence again, cost words with the loop guard too, and about
//! doubled the engine time (`scripts/bench-dictation`; docs/journal/2026-12.md, "The committed
//! text as the prompt, again"). What was said before reaches a live chunk another way: an engine
//! that can hears a committed chunk with the chunks before it in front, read as their
//! committed text ([`SaidBeforeChunks`]).
//!
//! The [`Listener`] is split by what it does: here, taking the audio in and settling chunks;
//! `open_chunk`, the open chunk heard before it settles (provisional text, heard ahead);
//! `committed`, settled chunks heard and committed; `whole`, engines that hear whole clips;
//! `engine_calls`, the requests and the engine taken from the slot.

mod committed;
mod engine_calls;
mod open_chunk;
mod whole;

use open_chunk::HeardAhead;

use std::ops::Range;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use super::said_before::SaidBeforeChunks;
use super::side_by_side::{CallSettings, SideBySide};
use super::watched_pass::hear_while_listening;
use crate::audio::decode::SampleSink;
use crate::audio::vad::{Chunker, Limits, SpeechChunk, Timeline};
use crate::cancel::Cancel;
use crate::engine::{
    Engine, EngineError, EngineOutput, EngineRequest, LanguageChoice, ModelSpec, Segment, Task,
};

/// Samples per second of the audio the engines take.
const SAMPLE_RATE: f64 = 16_000.0;

/// What the engine stage reports as it goes (times in seconds of the audio's timeline).
pub(super) enum Listened<'a> {
    /// A chunk's segments, settled for good, with the language heard so far.
    Segments(&'a [Segment], Option<&'a str>),
    /// Live audio: speech began at `at` (the padding kept before it included).
    SpeechStarted { at: f64 },
    /// Live audio: the chunk `start..end` is settled and goes to the engine; `goes_on`: speech
    /// goes on past its end (a long chunk was cut there, or closed at a pause too short to end
    /// it) rather than a pause ending it.
    Committed { start: f64, end: f64, goes_on: bool },
    /// Live audio: provisional segments of the chunk still open, with the language heard so
    /// far; the next provisional ones or the chunk's settled ones replace them.
    Tentative(&'a [Segment], Option<&'a str>),
}

/// Where the engine stage's reports go as soon as it has them.
pub(super) type EngineSink = Box<dyn FnMut(Listened<'_>) + Send>;

/// The open chunk of live audio is heard again for provisional text at most this often...
const PROVISIONAL_EVERY: Duration = Duration::from_secs(1);
/// ...and at least this many times as long as the last provisional pass took, so that live
/// work never takes more than half of the machine's CPU time (an engine call uses every core).
const PROVISIONAL_SPACING: u32 = 2;
/// The open chunk is first heard provisionally once it holds this much audio (0.6 s: the
/// padding before the speech and about a word).
pub const MIN_PROVISIONAL_SAMPLES: usize = 9_600;
/// Live audio, no language given: the first provisional pass over an open chunk this long or
/// longer (3 s) detects the language, and that settles it for the whole transcription, the
/// chunk's commit included. Detected as the first chunk settled, through whisper's full window,
/// the language held that commit back: base's pass as the voice dropped took 1.1 s on 2 cores
/// with it, the commit came 1.4 s after the pause began (`scripts/bench-dictation --model base`,
/// docs/performance.md). Shorter audio is a word or two to detect from: the passes before take
/// the first pass's language (or the guess) only for tentative text. A pass that hears no
/// words there settles nothing, and the next pass detects again.
const LANGUAGE_AHEAD_SAMPLES: usize = 48_000;
/// Until a provisional pass hears words in the open chunk, the next comes this soon (still
/// spaced by [`PROVISIONAL_SPACING`]): a first pass 0.35 s into the voice often hears none,
/// and the person would wait a whole second more for the first word.
const PROVISIONAL_EVERY_UNTIL_WORDS: Duration = Duration::from_millis(400);

/// What one engine call is made of, besides the audio.
pub(super) struct EngineCall {
    pub engine: std::sync::Arc<dyn Engine>,
    pub model: &'static ModelSpec,
    /// Voice activity detection first.
    pub vad: bool,
    pub language: LanguageChoice,
    pub task: crate::engine::Task,
    pub initial_prompt: Option<String>,
    /// Time each word.
    pub words: bool,
    pub cancel: Cancel,
    /// Live audio: where each chunk takes the engine.
    pub live: Option<LiveSlots>,
    /// Other audio: the slot held for the whole transcription, let go between two chunks to
    /// a live chunk waiting for the engine.
    pub held: Option<HeldSlot>,
    /// Live audio, no language given: the language provisional passes start from (the one
    /// the last live transcription settled on), until a committed chunk settles this one's.
    pub language_guess: Option<String>,
}

/// The slot a transcription of a file or upload holds from its first chunk to its last.
pub(super) struct HeldSlot {
    pub slot: Option<super::queue::Slot>,
    pub queue: std::sync::Arc<super::queue::Queue>,
    pub runtime: tokio::runtime::Handle,
}

impl HeldSlot {
    /// Lets a live chunk that waits for the engine go first, then takes the engine back (ahead
    /// of the requests in line): someone dictating waits for one engine call of an upload at
    /// most (one chunk, or the few an engine hears at once).
    fn give_way(&mut self) -> Result<(), EngineError> {
        // A share of a slot is held for one short clip's call, not let go half-way.
        if self.calls_at_once() > 1 || !self.queue.urgent_waiting() {
            return Ok(());
        }
        self.slot = None;
        let slot = self
            .runtime
            .block_on(self.queue.acquire_admitted())
            .map_err(|e| EngineError::Failed(e.to_string()))?;
        self.slot = Some(slot);
        Ok(())
    }

    /// Engine calls the slot runs side by side ([`super::queue::Slot::calls_at_once`]).
    fn calls_at_once(&self) -> usize {
        self.slot.as_ref().map_or(1, |slot| slot.calls_at_once())
    }
}

/// The queue a live transcription takes a slot from for each chunk, and the runtime it waits
/// on (from the blocking thread that hears the audio).
pub(super) struct LiveSlots {
    pub queue: std::sync::Arc<super::queue::Queue>,
    pub runtime: tokio::runtime::Handle,
}

/// What the engine stage heard, and how long its two steps took.
pub(super) struct Heard {
    pub output: Result<EngineOutput, EngineError>,
    pub vad: Duration,
    pub engine: Duration,
    /// Samples heard.
    pub samples: usize,
}

/// The engine stage of one transcription (see the module documentation).
pub(super) struct Listener {
    call: EngineCall,
    chunker: Chunker,
    /// The whole audio and its chunks, for an engine that hears whole clips.
    whole: Option<(Vec<f32>, Vec<Range<usize>>)>,
    on_segments: Option<EngineSink>,
    texts: Vec<String>,
    segments: Vec<Segment>,
    language: Option<String>,
    /// The first engine failure; nothing more is transcribed after it.
    failed: Option<EngineError>,
    vad: Duration,
    engine: Duration,
    /// Live audio: where the open chunk whose start was reported starts (samples).
    announced: Option<usize>,
    /// Live audio: the open chunk is not heard provisionally before this, nor once this is
    /// cancelled (the capture stopped), which also abandons a pass under way.
    next_provisional: Instant,
    /// Live audio: where the chunk the last pass over an open chunk heard starts (samples); a
    /// new chunk's first pass does not wait for the spacing from the chunk before.
    passed_from: Option<usize>,
    /// Live audio, no language given: the one a pass over an open chunk detected (or the
    /// guess the transcription started with), which the provisional passes take until a
    /// committed chunk, or a pass over [`LANGUAGE_AHEAD_SAMPLES`] of the open one, settles the
    /// language (whisper judges it through its full window: base took 1.3 s for it on 2 cores,
    /// every pass).
    provisional_language: Option<String>,
    provisional_stop: Option<Cancel>,
    /// Live audio: chunks settled while a provisional pass ran, transcribed once it ends.
    settled_beside_pass: Vec<SpeechChunk>,
    /// Live audio: the open chunk heard ahead, as the voice dropped or in the pause that may
    /// end it: its text when it settles with no more speech.
    heard_ahead: Option<HeardAhead>,
    /// Live audio: a pass over the open chunk as the voice drops may start from this moment
    /// on, so that live work never takes more than half of the machine's CPU time.
    spaced_until: Instant,
    /// Live audio on an engine that hears whole clips: the audio before this sample is
    /// recognised, and the time the engine reported for it.
    whole_heard: usize,
    whole_time: f64,
    /// A file's chunks out to an engine that hears several at once
    /// ([`Engine::chunks_at_once`]), once the language is settled.
    side_by_side: Option<SideBySide>,
    /// A file's first chunk, while it waits for a second to be heard beside it.
    first: Option<SpeechChunk>,
    /// Live audio on an engine that hears what was said before a chunk: the recent audio and
    /// committed chunks.
    said_before: Option<SaidBeforeChunks>,
}

impl Listener {
    pub fn new(call: EngineCall, on_segments: Option<EngineSink>) -> Listener {
        let whole = call.engine.hears_whole_clips().then(Default::default);
        let limits = match (call.live.is_some(), call.engine.close_file_chunks_after()) {
            (true, _) => Limits::LIVE,
            (false, None) => Limits::FILE,
            (false, Some(seconds)) => Limits::FILE.closing_after(seconds),
        };
        let language_guess = call.language_guess.clone();
        let said_before = (call.live.is_some()
            && call.engine.hears_said_before()
            && call.task == Task::Transcribe)
            .then(SaidBeforeChunks::default);
        Listener {
            said_before,
            chunker: Chunker::within(call.vad, limits),
            call,
            whole,
            on_segments,
            texts: Vec::new(),
            segments: Vec::new(),
            language: None,
            failed: None,
            vad: Duration::ZERO,
            engine: Duration::ZERO,
            announced: None,
            next_provisional: Instant::now(),
            passed_from: None,
            provisional_language: language_guess,
            provisional_stop: None,
            settled_beside_pass: Vec::new(),
            heard_ahead: None,
            spaced_until: Instant::now(),
            whole_heard: 0,
            whole_time: 0.0,
            side_by_side: None,
            first: None,
        }
    }

    /// Takes the next samples and transcribes the chunks they complete; false once the engine
    /// failed or the request was cancelled (feed it nothing more).
    pub fn hear(&mut self, samples: &[f32]) -> bool {
        if self.call.cancel.is_cancelled() {
            self.failed.get_or_insert(EngineError::Cancelled);
        }
        if self.failed.is_some() {
            return false;
        }
        let ready = self.detect(samples);
        self.settle(ready)
    }

    /// Takes the next samples into the audio kept and voice activity detection; the chunks
    /// they settle, to transcribe.
    fn detect(&mut self, samples: &[f32]) -> Vec<SpeechChunk> {
        if let Some((whole, _)) = &mut self.whole {
            whole.extend_from_slice(samples);
        }
        if let Some(said_before) = &mut self.said_before {
            said_before.hear(samples);
        }
        let started = Instant::now();
        let mut ready = Vec::new();
        self.chunker.push(samples, &mut |chunk| ready.push(chunk));
        self.vad += started.elapsed();
        ready
    }

    /// Live audio, a block captured while a provisional pass runs: detected at once, the
    /// chunks it settles kept for when the pass ends. True when the pass is of no more use:
    /// the voice dropped (the pass ahead is due), a chunk settled (its commit is due) or the
    /// capture failed (an empty block).
    fn hear_beside_pass(&mut self, samples: &[f32]) -> bool {
        if samples.is_empty() {
            self.call.cancel.cancel();
            return true;
        }
        let ready = self.detect(samples);
        self.settled_beside_pass.extend(ready);
        !self.settled_beside_pass.is_empty()
            || self.chunker.settling().is_some()
            || !self.chunker.speaking()
            || self.chunker.voice_dropped()
    }

    /// Transcribes the chunks the audio settled, reporting live audio's speech as it starts
    /// and as its chunks are committed; false once the engine failed.
    fn settle(&mut self, ready: Vec<SpeechChunk>) -> bool {
        let open = self.chunker.open_from();
        let starts: Vec<usize> = ready.iter().skip(1).map(|c| c.start).collect();
        for (i, chunk) in ready.into_iter().enumerate() {
            let end = chunk.range().end;
            let next = starts
                .get(i)
                .copied()
                .or(open.filter(|_| i == starts.len()));
            let goes_on = next.filter(|&next| self.chunker.goes_on(end, next));
            self.commit(&chunk, goes_on);
            if !self.transcribe(chunk) {
                return false;
            }
        }
        if let Some(start) = open
            && self.announced.is_none()
        {
            self.report_speech(start);
        }
        true
    }

    /// Whether the engine failed (or the request was cancelled) before the audio ended.
    pub fn failed(&self) -> bool {
        self.failed.is_some()
    }

    /// The end of the audio: transcribes what is left and gives what was heard.
    pub fn finish(mut self) -> Heard {
        let samples = self.chunker.seen();
        if self.failed.is_none() {
            let started = Instant::now();
            let mut ready = Vec::new();
            self.chunker.finish(&mut |chunk| ready.push(chunk));
            self.vad += started.elapsed();
            if self.settle(ready)
                && self.take_heard(true)
                && let Some(first) = self.first.take()
            {
                self.hear_alone(first);
            }
        }
        if let Some(side_by_side) = self.side_by_side.take() {
            self.engine += side_by_side.busy();
        }
        let output = match (self.failed.take(), self.whole.take()) {
            (Some(failed), _) => Err(failed),
            (None, Some((whole, chunks))) => self.transcribe_rest_whole(&whole, chunks),
            (None, None) if self.texts.is_empty() && self.segments.is_empty() => {
                Ok(self.nothing_heard())
            }
            (None, None) => Ok(EngineOutput {
                text: self.texts.join(" "),
                language: self.language.take(),
                segments: std::mem::take(&mut self.segments),
                processing_time: None,
            }),
        };
        Heard {
            output,
            vad: self.vad,
            engine: self.engine,
            samples,
        }
    }
}

/// The chunks from sample `from` on, timed from there.
fn since(chunks: &[Range<usize>], from: usize) -> Vec<Range<usize>> {
    chunks
        .iter()
        .filter(|c| c.start >= from)
        .map(|c| c.start - from..c.end - from)
        .collect()
}

/// The decoder feeds the listener as it goes; a failed engine stops the decode.
impl SampleSink for Listener {
    fn take(&mut self, samples: &[f32]) -> bool {
        self.hear(samples)
    }
}
