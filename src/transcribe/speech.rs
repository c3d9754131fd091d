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

    /// Live audio: reports that speech began at sample `start`.
    fn report_speech(&mut self, start: usize) {
        self.announced = Some(start);
        if self.call.live.is_some()
            && let Some(sink) = &mut self.on_segments
        {
            sink(Listened::SpeechStarted {
                at: start as f64 / SAMPLE_RATE,
            });
        }
    }

    /// Live audio: reports that `chunk` is settled (its speech reported first, if it came and
    /// went between two blocks); `goes_on`: where the next chunk starts when speech went on
    /// into it without a pause that ends a chunk (this one was closed by its length), so that
    /// speech neither stopped nor started again.
    fn commit(&mut self, chunk: &SpeechChunk, goes_on: Option<usize>) {
        if self.call.live.is_none() {
            return;
        }
        if self.announced.is_none() {
            self.report_speech(chunk.start);
        }
        let range = chunk.range();
        self.announced = goes_on;
        if let Some(sink) = &mut self.on_segments {
            sink(Listened::Committed {
                start: range.start as f64 / SAMPLE_RATE,
                end: range.end as f64 / SAMPLE_RATE,
                goes_on: goes_on.is_some(),
            });
        }
    }

    /// Live audio: provisional passes end when `stop` is cancelled (the capture stopped).
    pub fn stop_provisional_on(&mut self, stop: Cancel) {
        self.provisional_stop = Some(stop);
    }

    /// Live audio, once every block captured so far is heard: hears the open chunk again for
    /// provisional text, when someone is speaking, the spacing since the last pass over the
    /// same chunk has passed and the engine is free (provisional text never makes anyone wait);
    /// as the voice drops ([`Listener::hear_as_voice_drops`]) and in a pause
    /// ([`Listener::hear_ahead`]), hears it ahead.
    /// With `incoming`, the blocks still to come, a provisional pass goes on only while they
    /// carry the voice on ([`hear_while_listening`]).
    pub fn provisional(&mut self, incoming: Option<&Receiver<Vec<f32>>>) {
        let (Some(live), Some(stop)) = (&self.call.live, &self.provisional_stop) else {
            return;
        };
        if self.whole.is_some()
            || stop.is_cancelled()
            || self.failed.is_some()
            || self.on_segments.is_none()
        {
            return;
        }
        if self.chunker.settling().is_some() {
            self.hear_ahead();
            return;
        }
        if !self.chunker.speaking() || self.chunker.voice_dropped() {
            self.hear_as_voice_drops();
            return;
        }
        let same_chunk = self.passed_from.is_some() && self.chunker.open_from() == self.passed_from;
        if same_chunk && Instant::now() < self.next_provisional {
            return;
        }
        let Some(chunk) = self
            .chunker
            .open_chunk()
            .filter(|c| c.samples.len() >= MIN_PROVISIONAL_SAMPLES)
        else {
            return;
        };
        let Some(slot) = live.queue.try_acquire() else {
            return;
        };
        let stop = stop.clone();
        self.hear_open_chunk(&chunk, &stop, OpenPass::Provisional, incoming);
        drop(slot);
        let settled = std::mem::take(&mut self.settled_beside_pass);
        self.settle(settled);
    }

    /// Live audio, in a pause: hears the open chunk as it settles unless more speech comes, once
    /// and when the engine is free, so that its commit (or the stop) finds its text ready: the
    /// same samples through the same request read the same. The pass is not abandoned when the
    /// capture stops (the stop settles the chunk as it is). It is heard ahead once for each way
    /// the chunk may settle (once a pause, unless a soft sound in the pause lengthens it), and
    /// the next provisional pass over the same chunk keeps its spacing from it.
    fn hear_ahead(&mut self) {
        let Some(range) = self.chunker.settling() else {
            return;
        };
        if self
            .heard_ahead
            .as_ref()
            .is_some_and(|ahead| ahead.stands_for(&range))
        {
            return;
        }
        let Some(chunk) = self.chunker.settling_chunk() else {
            return;
        };
        self.hear_ahead_once_free(&chunk, range.end, OpenPass::Ahead);
    }

    /// Live audio, the voice just dropped (or gone, the chunk's padding still to come): hears
    /// the open chunk so far as a committed chunk is, once for each place the voice drops and
    /// when the engine is free and has rested as long as its last pass over the open chunk
    /// took, so that the commit (or a stop right after the last word) finds its text ready, or
    /// on the way, should nothing but quiet follow: heard only once the chunk settled, a
    /// sentence's text came hundreds of milliseconds after a stop right after its last word
    /// (`scripts/bench-dictation`, docs/journal/2026-12.md). Should the voice come back, the pass
    /// was the open chunk's provisional text.
    fn hear_as_voice_drops(&mut self) {
        if Instant::now() < self.spaced_until {
            return;
        }
        let Some((chunk, settles_by)) = self
            .chunker
            .quiet_chunk()
            .filter(|(chunk, _)| chunk.samples.len() >= MIN_PROVISIONAL_SAMPLES)
        else {
            return;
        };
        let range = chunk.range();
        if self
            .heard_ahead
            .as_ref()
            .is_some_and(|ahead| ahead.range.start == range.start && ahead.settles_by == settles_by)
        {
            return;
        }
        self.hear_ahead_once_free(&chunk, settles_by, OpenPass::AsVoiceDrops);
    }

    /// Hears the open `chunk` ahead when the engine is free (the pass is not abandoned when the
    /// capture stops), and keeps what it heard for the chunk that settles with the same start
    /// and an end up to `settles_by`.
    fn hear_ahead_once_free(&mut self, chunk: &SpeechChunk, settles_by: usize, pass: OpenPass) {
        let Some(live) = &self.call.live else {
            return;
        };
        let Some(_slot) = live.queue.try_acquire() else {
            return;
        };
        let cancel = self.call.cancel.clone();
        let (heard, took) = self.hear_open_chunk(chunk, &cancel, pass, None);
        self.engine += took;
        self.heard_ahead = heard.map(|heard| HeardAhead {
            range: chunk.range(),
            settles_by,
            heard,
        });
    }

    /// One pass over the open `chunk` (the engine slot taken), stopped early by `cancel` (a
    /// provisional one with `incoming`, also given up as the voice drops): the next
    /// provisional pass spaced from it and its segments sent as tentative text. What the
    /// engine heard (None when the pass failed or was stopped), and how long it took.
    fn hear_open_chunk(
        &mut self,
        chunk: &SpeechChunk,
        cancel: &Cancel,
        pass: OpenPass,
        incoming: Option<&Receiver<Vec<f32>>>,
    ) -> (Option<EngineOutput>, Duration) {
        let started = Instant::now();
        let provisional = matches!(pass, OpenPass::Provisional);
        let detects_language = provisional && self.detects_language_ahead(chunk.samples.len());
        let (heard, given_up) = match incoming.filter(|_| provisional) {
            Some(incoming) => self.hear_listening(chunk, cancel, incoming),
            None => (self.hear_chunk(chunk, cancel, provisional), false),
        };
        let took = started.elapsed();
        let heard_words = heard
            .as_ref()
            .is_ok_and(|heard| !heard.text.trim().is_empty());
        let every = match pass {
            OpenPass::Provisional if !heard_words => PROVISIONAL_EVERY_UNTIL_WORDS,
            _ => PROVISIONAL_EVERY,
        };
        self.next_provisional = started + every.max(took * PROVISIONAL_SPACING);
        // A pass given up as the voice dropped leaves the pass ahead free to start at once.
        if !given_up {
            self.spaced_until = started + took * PROVISIONAL_SPACING;
        }
        self.passed_from = Some(chunk.start);
        tracing::debug!(
            seconds = chunk.samples.len() as f64 / SAMPLE_RATE,
            took_ms = took.as_millis() as u64,
            how = pass.name(),
            given_up,
            "open chunk heard"
        );
        let Ok(heard) = heard else {
            return (None, took);
        };
        // A pass that heard no words (a cough, a noise before the speech) settles nothing.
        if detects_language
            && !heard.text.trim().is_empty()
            && let Some(language) = &heard.language
        {
            self.settle_language(language);
        }
        if self.provisional_language.is_none() {
            self.provisional_language = heard.language.clone();
        }
        let timeline = chunk.timeline();
        let segments: Vec<Segment> = heard
            .segments
            .iter()
            .map(|s| s.clone().retimed(|t| timeline.seconds(t)))
            .collect();
        let language = self.language.clone().or(heard.language.clone());
        if let Some(sink) = &mut self.on_segments {
            sink(Listened::Tentative(&segments, language.as_deref()));
        }
        (Some(heard), took)
    }

    /// A provisional pass over `chunk` (stopped early by `stop`) while the blocks from
    /// `incoming` are heard beside it ([`Listener::hear_beside_pass`]), given up once they
    /// show the voice dropping; whether it was given up.
    fn hear_listening(
        &mut self,
        chunk: &SpeechChunk,
        stop: &Cancel,
        incoming: &Receiver<Vec<f32>>,
    ) -> (Result<EngineOutput, EngineError>, bool) {
        let given_up = Cancel::new();
        let whole = std::iter::once(0..chunk.samples.len()).collect();
        let request = self.request(&chunk.samples, whole, &given_up, true);
        let engine = self.call.engine.clone();
        let model = self.call.model.id;
        let cancelled = self.call.cancel.clone();
        hear_while_listening(
            engine.as_ref(),
            model,
            &request,
            &given_up,
            stop,
            incoming,
            |block| self.hear_beside_pass(block) || cancelled.is_cancelled(),
        )
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

    /// Transcribes one chunk (or, for an engine that hears whole clips, notes where it is);
    /// false when the engine failed or the request was cancelled.
    fn transcribe(&mut self, chunk: SpeechChunk) -> bool {
        if let Some((_, chunks)) = &mut self.whole {
            chunks.push(chunk.range());
            return self.call.live.is_none() || self.hear_whole_so_far();
        }
        if self.call.cancel.is_cancelled() {
            self.failed = Some(EngineError::Cancelled);
            return false;
        }
        let at_once = self.call.engine.chunks_at_once();
        if self.call.live.is_none()
            && at_once > 1
            && self.shared_calls() == 1
            && self.language_settled()
        {
            // The first chunk waits for a second: a file of one chunk (most short clips) is
            // heard alone, on all the engine's threads.
            if self.side_by_side.is_none() {
                let Some(first) = self.first.take() else {
                    self.first = Some(chunk);
                    return true;
                };
                if !self.hear_side_by_side(first, at_once) {
                    return false;
                }
            }
            return self.hear_side_by_side(chunk, at_once);
        }
        self.hear_alone(chunk)
    }

    /// Transcribes `chunk` in one engine call of its own; false when the engine failed or the
    /// request was cancelled.
    fn hear_alone(&mut self, chunk: SpeechChunk) -> bool {
        let started = Instant::now();
        let (heard, ahead) = match self.heard_ahead.take() {
            Some(ahead) if ahead.stands_for(&chunk.range()) => (Ok(ahead.heard), true),
            _ => (
                self.with_engine(|listener| {
                    listener.hear_chunk(&chunk, &listener.call.cancel, false)
                }),
                false,
            ),
        };
        tracing::debug!(
            ahead,
            start = chunk.start as f64 / SAMPLE_RATE,
            seconds = chunk.samples.len() as f64 / SAMPLE_RATE,
            took_ms = started.elapsed().as_millis() as u64,
            text = heard.as_ref().map_or("", |h| h.text.as_str()),
            "chunk heard"
        );
        let Some(heard) = self.heard_or_failed(heard) else {
            return false;
        };
        if let Some(said_before) = &mut self.said_before {
            said_before.committed(chunk.range(), &heard.text);
        }
        self.keep(heard, &chunk.timeline());
        true
    }

    /// What a call on a file's chunks heard, its language settling the rest's (the first
    /// chunk's language, as it would for the whole audio); None when it failed, the failure
    /// kept.
    fn heard_or_failed(
        &mut self,
        heard: Result<EngineOutput, EngineError>,
    ) -> Option<EngineOutput> {
        let heard = match heard {
            Ok(heard) => heard,
            Err(err) => {
                self.failed = Some(err);
                return None;
            }
        };
        if self.language.is_none()
            && let Some(language) = &heard.language
        {
            self.settle_language(language);
        }
        Some(heard)
    }

    /// Takes `language` as the one every chunk from now on is heard in.
    fn settle_language(&mut self, language: &str) {
        self.language = Some(language.to_string());
        self.call.language = LanguageChoice::Exact(language.to_string());
        self.provisional_language = Some(language.to_string());
    }

    /// Whether a provisional pass over `samples` of the open chunk detects the language for
    /// the whole live transcription ([`LANGUAGE_AHEAD_SAMPLES`]).
    fn detects_language_ahead(&self, samples: usize) -> bool {
        self.call.live.is_some()
            && self.language.is_none()
            && !self.language_settled()
            && samples >= LANGUAGE_AHEAD_SAMPLES
    }

    /// Engine calls that run beside this transcription's on its slot (1 when it has the
    /// engine to itself): each of its calls takes that share of the threads.
    fn shared_calls(&self) -> usize {
        self.call.held.as_ref().map_or(1, HeldSlot::calls_at_once)
    }

    /// Whether every chunk is heard in a language known already (given, or the one an
    /// English-only model hears), so that none waits for the first to detect it.
    fn language_settled(&self) -> bool {
        !self.call.model.multilingual() || matches!(self.call.language, LanguageChoice::Exact(_))
    }

    /// Gives `chunk` to the engine's workers (a live chunk waiting for the engine goes first:
    /// what is out is heard, then the engine is let go) and hands on what they heard so far, in
    /// order. False when the engine failed or the request was cancelled.
    fn hear_side_by_side(&mut self, chunk: SpeechChunk, at_once: usize) -> bool {
        if let Some(held) = &self.call.held
            && held.queue.urgent_waiting()
        {
            if !self.take_heard(true) {
                return false;
            }
            if let Some(side_by_side) = self.side_by_side.take() {
                self.engine += side_by_side.busy();
            }
            if let Some(held) = &mut self.call.held
                && let Err(err) = held.give_way()
            {
                self.failed = Some(err);
                return false;
            }
        }
        let mut side_by_side = self.side_by_side.take().unwrap_or_else(|| {
            let settings = CallSettings {
                engine: self.call.engine.clone(),
                model: self.call.model.id,
                request: self.request(&[], Vec::new(), &self.call.cancel, false),
            };
            SideBySide::new(settings, at_once)
        });
        side_by_side.give(chunk.timeline(), chunk.samples);
        self.side_by_side = Some(side_by_side);
        self.take_heard(false)
    }

    /// Hands on, in the audio's order, what the workers heard (`wait`: everything given out,
    /// waiting for it). False when a chunk failed (the failure kept).
    fn take_heard(&mut self, wait: bool) -> bool {
        while let Some((timeline, heard)) = self.side_by_side.as_mut().and_then(|s| s.ready(wait)) {
            let Some(heard) = self.heard_or_failed(heard) else {
                return false;
            };
            self.keep(heard, &timeline);
        }
        true
    }

    /// Keeps what the engine heard of the audio `timeline` places (its segments moved into the
    /// audio's timeline) and hands the segments on.
    fn keep(&mut self, heard: EngineOutput, timeline: &Timeline) {
        let segments: Vec<Segment> = heard
            .segments
            .into_iter()
            .map(|s| s.retimed(|t| timeline.seconds(t)))
            .collect();
        if let Some(sink) = &mut self.on_segments
            && !segments.is_empty()
        {
            sink(Listened::Segments(&segments, self.language.as_deref()));
        }
        if !heard.text.trim().is_empty() {
            self.texts.push(heard.text.trim().to_string());
        }
        self.segments.extend(segments);
    }

    /// Live audio on an engine that hears whole clips: hears the audio from the end of what it
    /// last recognised to the end of the chunk just settled; what it recognises is settled (a
    /// clip cut by a pause of its own is recognised with its next chunk). False once it failed.
    fn hear_whole_so_far(&mut self) -> bool {
        let Some((whole, chunks)) = &self.whole else {
            return true;
        };
        let from = self.whole_heard;
        let to = chunks.last().map_or(from, |c| c.end).min(whole.len());
        let samples = whole[from..to].to_vec();
        let pending = since(chunks, from);
        let output = match self.call_engine(&samples, pending) {
            Ok(output) if !output.text.trim().is_empty() => output,
            Ok(_) => return true,
            Err(err) => {
                self.failed = Some(err);
                return false;
            }
        };
        self.whole_heard = to;
        self.settle_whole(output, from);
        true
    }

    /// Takes what an engine that hears whole clips recognised in the audio from sample `from`.
    fn settle_whole(&mut self, mut output: EngineOutput, from: usize) {
        if self.language.is_none() {
            self.language = output.language.take();
        }
        self.whole_time += output.processing_time.unwrap_or(0.0);
        self.keep(output, &Timeline::starting_at(from));
    }

    /// The end of the audio for an engine that hears whole clips: one call with what it has not
    /// recognised yet (all of it, but for live audio), joined to what it recognised before.
    fn transcribe_rest_whole(
        &mut self,
        whole: &[f32],
        chunks: Vec<Range<usize>>,
    ) -> Result<EngineOutput, EngineError> {
        let from = self.whole_heard.min(whole.len());
        if from == 0 {
            return self.transcribe_whole(whole, chunks);
        }
        let rest = since(&chunks, from);
        if !rest.is_empty() {
            let output = self.call_engine(&whole[from..], rest)?;
            self.settle_whole(output, from);
        }
        Ok(EngineOutput {
            text: self.texts.join(" "),
            language: self.language.take(),
            segments: std::mem::take(&mut self.segments),
            processing_time: Some(self.whole_time),
        })
    }

    /// One call with the whole audio and its chunks, for an engine that hears whole clips.
    fn transcribe_whole(
        &mut self,
        samples: &[f32],
        chunks: Vec<Range<usize>>,
    ) -> Result<EngineOutput, EngineError> {
        if chunks.is_empty() {
            // Such an engine reports its own (simulated) time; no call took none.
            return Ok(EngineOutput {
                processing_time: Some(0.0),
                ..self.nothing_heard()
            });
        }
        let output = self.call_engine(samples, chunks);
        if let (Ok(output), Some(sink)) = (&output, &mut self.on_segments)
            && !output.segments.is_empty()
        {
            sink(Listened::Segments(
                &output.segments,
                output.language.as_deref(),
            ));
        }
        output
    }

    /// One engine call on `chunks` of `samples`, timed; live audio first takes a slot.
    fn call_engine(
        &mut self,
        samples: &[f32],
        chunks: Vec<Range<usize>>,
    ) -> Result<EngineOutput, EngineError> {
        self.with_engine(|listener| {
            listener.engine_call(samples, chunks, &listener.call.cancel, false)
        })
    }

    /// `call`, timed, once the engine is this transcription's: live audio first takes a slot,
    /// a file lets a live chunk waiting for the engine go first.
    fn with_engine(
        &mut self,
        call: impl FnOnce(&Listener) -> Result<EngineOutput, EngineError>,
    ) -> Result<EngineOutput, EngineError> {
        if let Some(held) = &mut self.call.held {
            held.give_way()?;
        }
        let _slot = match &self.call.live {
            Some(live) => Some(
                live.runtime
                    .block_on(live.queue.acquire_admitted())
                    .map_err(|e| EngineError::Failed(e.to_string()))?,
            ),
            None => None,
        };
        let started = Instant::now();
        let output = call(self);
        self.engine += started.elapsed();
        output
    }

    /// The engine call on a live `chunk` (stopped early by `cancel`; `provisional`: for
    /// tentative text), its segments timed from the chunk's start. A committed chunk, or one
    /// heard ahead to be committed, is heard with the chunks said before it in front
    /// ([`SaidBeforeChunks`]), so that the commit and the pass ahead read the same; tentative
    /// text is heard alone, which is quicker.
    fn hear_chunk(
        &self,
        chunk: &SpeechChunk,
        cancel: &Cancel,
        provisional: bool,
    ) -> Result<EngineOutput, EngineError> {
        let before = self
            .said_before
            .as_ref()
            .filter(|_| !provisional)
            .and_then(|said_before| said_before.before(chunk));
        let Some((samples, said)) = before else {
            let whole = std::iter::once(0..chunk.samples.len()).collect();
            return self.engine_call(&chunk.samples, whole, cancel, provisional);
        };
        let from = said.samples as f64 / SAMPLE_RATE;
        let whole = std::iter::once(0..samples.len()).collect();
        let request = EngineRequest {
            said_before: Some(said),
            ..self.request(&samples, whole, cancel, provisional)
        };
        let mut heard = self.call.engine.transcribe(self.call.model.id, &request)?;
        heard.segments = std::mem::take(&mut heard.segments)
            .into_iter()
            .map(|s| s.retimed(|t| (t - from).max(0.0)))
            .collect();
        Ok(heard)
    }

    /// The engine call on `chunks` of `samples`, with the request's settings, stopped early
    /// by `cancel`; `provisional`: for tentative text ([`EngineRequest::provisional`]).
    fn engine_call(
        &self,
        samples: &[f32],
        chunks: Vec<Range<usize>>,
        cancel: &Cancel,
        provisional: bool,
    ) -> Result<EngineOutput, EngineError> {
        let request = self.request(samples, chunks, cancel, provisional);
        self.call.engine.transcribe(self.call.model.id, &request)
    }

    /// The engine request for `chunks` of `samples` with the transcription's settings.
    fn request<'a>(
        &self,
        samples: &'a [f32],
        chunks: Vec<Range<usize>>,
        cancel: &Cancel,
        provisional: bool,
    ) -> EngineRequest<'a> {
        EngineRequest {
            samples,
            chunks,
            trimmed_to_speech: self.call.vad,
            language: match &self.provisional_language {
                Some(heard)
                    if provisional
                        && !self.language_settled()
                        && !self.detects_language_ahead(samples.len()) =>
                {
                    LanguageChoice::Exact(heard.clone())
                }
                _ => self.call.language.clone(),
            },
            task: self.call.task,
            initial_prompt: self.call.initial_prompt.clone(),
            words: self.call.words,
            cancel: cancel.clone(),
            calls_at_once: self.shared_calls(),
            provisional,
            said_before: None,
        }
    }

    /// The answer for audio without speech: no text, and the language the engine would have
    /// named without hearing anything (English for English-only models, else the one given).
    fn nothing_heard(&self) -> EngineOutput {
        let language = match &self.call.language {
            _ if !self.call.model.multilingual() => Some("en".to_string()),
            LanguageChoice::Exact(code) => Some(code.to_ascii_lowercase()),
            LanguageChoice::Auto | LanguageChoice::Shortlist(_) => None,
        };
        EngineOutput {
            language,
            ..EngineOutput::default()
        }
    }
}

/// Why the open chunk of live audio is heard before it settles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OpenPass {
    /// For tentative text while someone speaks: the next pass replaces it, so the engine keeps
    /// it quick (no second attempts).
    Provisional,
    /// In a pause, for the text its commit gives when it settles on these samples: heard as a
    /// committed chunk is.
    Ahead,
    /// As the voice drops, for the text its commit or the stop gives should only quiet follow:
    /// heard as a committed chunk is.
    AsVoiceDrops,
}

/// The open chunk of live audio heard ahead: what the engine heard of the samples over `range`,
/// which stands for the chunk that settles with the same start and an end from `range`'s to
/// `settles_by` (more quiet heard after them, no speech).
struct HeardAhead {
    range: Range<usize>,
    settles_by: usize,
    heard: EngineOutput,
}

impl HeardAhead {
    /// Whether the chunk settled over `range` is the one heard ahead.
    fn stands_for(&self, range: &Range<usize>) -> bool {
        range.start == self.range.start && (self.range.end..=self.settles_by).contains(&range.end)
    }
}

impl OpenPass {
    fn name(self) -> &'static str {
        match self {
            OpenPass::Provisional => "provisionally",
            OpenPass::Ahead => "ahead",
            OpenPass::AsVoiceDrops => "as the voice drops",
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
