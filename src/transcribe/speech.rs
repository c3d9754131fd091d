//! The engine stage, on the blocking thread that holds the engine slot, fed as the audio is
//! decoded: voice activity detection cuts the audio into chunks of speech (switched off, into
//! chunks of the whole audio), and each chunk goes to the engine as soon as it is settled, its
//! segments handed on at once. Only the audio a chunk still needs is kept, so memory does not
//! grow with the audio's length. Audio without speech never reaches the engine. An engine that
//! hears whole clips (the replay engine) gets the whole audio and its chunks in one call.
//! Live audio (see [`LiveSlots`]) is cut at short pauses and each chunk takes the engine for
//! itself. A live chunk's prompt is the request's alone: carrying the text heard so far made
//! tiny.en say the prompt's last sentence again (`scripts/bench-dictation`: 33.9 % word errors
//! instead of 17.0 % on the corpus's real recordings, 69.1 % instead of 13.2 % on held-out
//! read speech).

use std::ops::Range;
use std::time::{Duration, Instant};

use crate::audio::decode::SampleSink;
use crate::audio::vad::{Chunker, Limits, SpeechChunk};
use crate::cancel::Cancel;
use crate::engine::{
    Engine, EngineError, EngineOutput, EngineRequest, LanguageChoice, ModelSpec, Segment,
};

/// Samples per second of the audio the engines take.
const SAMPLE_RATE: f64 = 16_000.0;

/// Where the engine's segments go as soon as it has them (times in the audio's timeline), with
/// the language heard so far.
pub(super) type EngineSink = Box<dyn FnMut(&[Segment], Option<&str>) + Send>;

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
}

impl Listener {
    pub fn new(call: EngineCall, on_segments: Option<EngineSink>) -> Listener {
        let whole = call.engine.hears_whole_clips().then(Default::default);
        let limits = match call.live {
            Some(_) => Limits::LIVE,
            None => Limits::FILE,
        };
        Listener {
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
        if let Some((whole, _)) = &mut self.whole {
            whole.extend_from_slice(samples);
        }
        let started = Instant::now();
        let mut ready = Vec::new();
        self.chunker.push(samples, &mut |chunk| ready.push(chunk));
        self.vad += started.elapsed();
        ready.into_iter().all(|chunk| self.transcribe(chunk))
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
            for chunk in ready {
                if !self.transcribe(chunk) {
                    break;
                }
            }
        }
        let output = match (self.failed.take(), self.whole.take()) {
            (Some(failed), _) => Err(failed),
            (None, Some((whole, chunks))) => self.transcribe_whole(&whole, chunks),
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
            return true;
        }
        if self.call.cancel.is_cancelled() {
            self.failed = Some(EngineError::Cancelled);
            return false;
        }
        let whole = std::iter::once(0..chunk.samples.len()).collect();
        let started = Instant::now();
        let heard = self.call_engine(&chunk.samples, whole);
        tracing::debug!(
            start = chunk.start as f64 / SAMPLE_RATE,
            seconds = chunk.samples.len() as f64 / SAMPLE_RATE,
            took_ms = started.elapsed().as_millis() as u64,
            text = heard.as_ref().map_or("", |h| h.text.as_str()),
            "chunk heard"
        );
        let heard = match heard {
            Ok(heard) => heard,
            Err(err) => {
                self.failed = Some(err);
                return false;
            }
        };
        // The first chunk settles the language of the rest, as it would for the whole audio.
        if self.language.is_none()
            && let Some(language) = &heard.language
        {
            self.language = Some(language.clone());
            self.call.language = LanguageChoice::Exact(language.clone());
        }
        let offset = chunk.start as f64 / SAMPLE_RATE;
        let segments: Vec<Segment> = heard
            .segments
            .into_iter()
            .map(|s| s.shifted(offset))
            .collect();
        if let Some(sink) = &mut self.on_segments
            && !segments.is_empty()
        {
            sink(&segments, self.language.as_deref());
        }
        if !heard.text.trim().is_empty() {
            self.texts.push(heard.text.trim().to_string());
        }
        self.segments.extend(segments);
        true
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
            sink(&output.segments, output.language.as_deref());
        }
        output
    }

    /// One engine call on `chunks` of `samples`, timed; live audio first takes a slot.
    fn call_engine(
        &mut self,
        samples: &[f32],
        chunks: Vec<Range<usize>>,
    ) -> Result<EngineOutput, EngineError> {
        let _slot = match &self.call.live {
            Some(live) => Some(
                live.runtime
                    .block_on(live.queue.acquire_admitted())
                    .map_err(|e| EngineError::Failed(e.to_string()))?,
            ),
            None => None,
        };
        let started = Instant::now();
        let output = self.call.engine.transcribe(
            self.call.model.id,
            &EngineRequest {
                samples,
                chunks,
                trimmed_to_speech: self.call.vad,
                language: self.call.language.clone(),
                task: self.call.task,
                initial_prompt: self.call.initial_prompt.clone(),
                words: self.call.words,
                cancel: self.call.cancel.clone(),
            },
        );
        self.engine += started.elapsed();
        output
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

/// The decoder feeds the listener as it goes; a failed engine stops the decode.
impl SampleSink for Listener {
    fn take(&mut self, samples: &[f32]) -> bool {
        self.hear(samples)
    }
}
