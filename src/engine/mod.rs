//! The Engine port, with its adapters `whisper` (whisper-rs), `moonshine` (ONNX Runtime) and `sim`
//! (the replay engine); `registry` the table of this build's engine kinds, `catalog` their
//! models by id, `models` the weights on disk, `words` the engine-neutral assembly of timed
//! words. Engines are blocking; the transcription service runs
//! them on blocking threads.

pub mod catalog;
#[cfg(test)]
mod example;
pub mod guard;
pub mod models;
#[cfg(feature = "moonshine")]
pub mod moonshine;
pub mod registry;
pub mod sim;
#[cfg(feature = "whisper")]
pub mod whisper;
pub mod words;

use std::ops::Range;
use std::path::PathBuf;

use crate::cancel::Cancel;

pub use models::ModelSpec;

/// How the spoken language is chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LanguageChoice {
    /// Detect among every language the model knows.
    Auto,
    /// Transcribe as this language (ISO 639-1 code).
    Exact(String),
    /// Detect, restricted to this ordered shortlist (two or more codes).
    Shortlist(Vec<String>),
}

/// What the engine does with the speech (the request's `task` option, a wire type).
pub use crate::wire::transcription::Task;

/// One engine call: 16 kHz mono samples plus options.
#[derive(Debug, Clone)]
pub struct EngineRequest<'a> {
    pub samples: &'a [f32],
    /// The stretches of `samples` to transcribe, in order and not overlapping, each on its own:
    /// the chunks of speech voice activity detection found (at most 30 s each), or the whole
    /// audio. Segment times stay in the timeline of `samples`. The replay engine of sim mode
    /// reads the whole audio, as its recordings were made from whole clips.
    pub chunks: Vec<Range<usize>>,
    /// Every chunk is speech from end to end (voice activity detection trimmed it), so an
    /// engine may fit its window to the chunk; false: the audio as it came.
    pub trimmed_to_speech: bool,
    pub language: LanguageChoice,
    pub task: Task,
    /// Request prompt joined with the enabled recognition terms.
    pub initial_prompt: Option<String>,
    /// Time each word of each segment ([`Segment::words`]); costs some decoding time.
    pub words: bool,
    /// Set once nobody waits for the result any more: an engine stops as soon as it can, with
    /// [`EngineError::Cancelled`].
    pub cancel: Cancel,
    /// How many calls of one transcription run at the same time, this one among them: 1, but
    /// for a file's chunks heard side by side ([`Engine::chunks_at_once`]); the engine gives
    /// each its share of its threads.
    pub calls_at_once: usize,
    /// A provisional pass over live audio still being spoken, whose text the next pass or the
    /// commit replaces: an engine skips its costlier second attempts (whisper's wider window and
    /// temperature fallback) and cuts a loop out instead, so that tentative text stays quick.
    pub provisional: bool,
    /// The start of the first chunk was said before and its text is known: an engine that
    /// [`Engine::hears_said_before`] decodes that audio as that text (the way it would have gone
    /// on from it had it heard both at once) and returns only what comes after it, timed from
    /// the chunk's start as usual (so from the said audio's end on). Where that reading goes
    /// wrong ([`guard::better_alone`]) it returns the rest of the chunk heard alone; audio said
    /// before with no text is not heard at all.
    pub said_before: Option<SaidBefore>,
}

/// Audio at the start of a request's first chunk, and the text it was heard as.
#[derive(Debug, Clone, PartialEq)]
pub struct SaidBefore {
    pub text: String,
    /// How many samples of the first chunk it takes.
    pub samples: usize,
}

impl<'a> EngineRequest<'a> {
    /// Transcribing `chunks` of `samples`, speech from end to end, in `language`: no prompt, no
    /// timed words, one call at a time, not provisional, never cancelled. Other settings are
    /// given with `..` on it.
    pub fn speech(
        samples: &'a [f32],
        chunks: Vec<Range<usize>>,
        language: LanguageChoice,
    ) -> EngineRequest<'a> {
        EngineRequest {
            samples,
            chunks,
            trimmed_to_speech: true,
            language,
            task: Task::Transcribe,
            initial_prompt: None,
            words: false,
            cancel: Cancel::new(),
            calls_at_once: 1,
            provisional: false,
            said_before: None,
        }
    }
}

/// A timed stretch of text (seconds from the start of the audio the engine was given).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Segment {
    pub start: f64,
    pub end: f64,
    pub text: String,
    /// Its words with their times, when the request asked for them ([`EngineRequest::words`])
    /// and the engine times words; else empty.
    pub words: Vec<Word>,
    /// The decoder's figures for the segment, from engines that have them.
    pub detail: Option<SegmentDetail>,
}

/// One word and when it was said (seconds, in the same timeline as its segment).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Word {
    /// As the engine wrote it, without the space before it.
    pub word: String,
    pub start: f64,
    pub end: f64,
}

/// What whisper.cpp's decoder reports about a segment (OpenAI's `verbose_json` fields).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SegmentDetail {
    /// The text's token ids (no special tokens).
    pub tokens: Vec<i32>,
    /// Mean log probability of the text's tokens.
    pub avg_logprob: f64,
    /// Probability that the window held no speech.
    pub no_speech_prob: f64,
    /// Sampling temperature of the decode that produced the segment.
    pub temperature: f64,
    /// Length of the text over the length of its zlib-compressed form (repetition shows high).
    pub compression_ratio: f64,
}

impl Segment {
    /// A segment of `text` from `start` to `end`, without words or decoder figures.
    pub fn new(start: f64, end: f64, text: impl Into<String>) -> Segment {
        Segment {
            start,
            end,
            text: text.into(),
            ..Segment::default()
        }
    }

    /// The segment moved `offset` seconds later, its words with it.
    pub fn shifted(self, offset: f64) -> Segment {
        self.retimed(|t| t + offset)
    }

    /// The segment with every time (its own and its words') moved by `time`.
    pub fn retimed(mut self, time: impl Fn(f64) -> f64) -> Segment {
        self.start = time(self.start);
        self.end = time(self.end);
        for word in &mut self.words {
            word.start = time(word.start);
            word.end = time(word.end);
        }
        self
    }
}

impl From<verbatim_sim::Segment> for Segment {
    fn from(s: verbatim_sim::Segment) -> Segment {
        Segment::new(s.start, s.end, s.text)
    }
}

impl From<Segment> for verbatim_sim::Segment {
    fn from(s: Segment) -> verbatim_sim::Segment {
        verbatim_sim::Segment {
            start: s.start,
            end: s.end,
            text: s.text,
        }
    }
}

/// What an engine heard.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EngineOutput {
    pub text: String,
    pub language: Option<String>,
    pub segments: Vec<Segment>,
    /// Processing time the engine reports itself (the replay engine's simulated latency);
    /// None: the service measures wall time.
    pub processing_time: Option<f64>,
}

impl EngineOutput {
    /// The output of `segments`, its text theirs joined with spaces, timed by the service.
    pub fn of_segments(segments: Vec<Segment>, language: Option<String>) -> EngineOutput {
        let text = segments
            .iter()
            .map(|s| s.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        EngineOutput {
            text,
            language,
            segments,
            processing_time: None,
        }
    }
}

/// A model as an engine offers it, with its state on this machine.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelOffer {
    pub spec: &'static ModelSpec,
    /// Weights present and verified.
    pub downloaded: bool,
    /// In memory now.
    pub loaded: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("model '{0}' is not offered by this engine")]
    UnknownModel(String),
    #[error("model '{model}' is not installed: {path} is missing")]
    NotInstalled { model: String, path: PathBuf },
    #[error("could not load the model file {path}: {cause}")]
    Load { path: PathBuf, cause: String },
    #[error("language '{0}' is not known to this model")]
    UnknownLanguage(String),
    #[error("transcription failed: {0}")]
    Failed(String),
    #[error("this build of Verbatim has no engine '{0}' (it has: {engines})", engines = registry::ids())]
    NotInBuild(String),
    #[error("transcription stopped: nobody waits for it any more")]
    Cancelled,
    /// The engine cannot do what the request asks on this host (said to the client).
    #[error("{0}")]
    Unsupported(String),
}

/// A transcription engine.
pub trait Engine: Send + Sync {
    /// Engine identifier used by the API (`engine` field and override).
    fn id(&self) -> &'static str;
    /// Every model this engine offers, with its state.
    fn models(&self) -> Vec<ModelOffer>;
    /// Transcribes with `model`; blocking.
    fn transcribe(
        &self,
        model: &str,
        request: &EngineRequest<'_>,
    ) -> Result<EngineOutput, EngineError>;

    /// Fetches the weights of `spec` (from `base_url` for real engines), reporting progress.
    fn download(
        &self,
        spec: &'static ModelSpec,
        models: &models::ModelDir,
        base_url: &str,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<(), String> {
        catalog::download_model(models, spec, base_url, progress).map_err(|e| e.to_string())
    }

    /// Whether the engine needs each request's whole audio at once (the replay engine, whose
    /// recordings were made from whole clips); else it is called chunk by chunk as the audio
    /// streams in.
    fn hears_whole_clips(&self) -> bool {
        false
    }

    /// How many chunks of a file the engine hears at once (the whisper engine: its decoder
    /// states): a file's chunks then go to it one per call, that many calls at a time, each
    /// told so ([`EngineRequest::calls_at_once`]); one request that holds several chunks is
    /// shared out the same way inside the engine.
    fn chunks_at_once(&self) -> usize {
        1
    }

    /// A file's chunk ends at the first pause once it holds this many seconds; None: chunks are
    /// packed across pauses up to 30 s. Whisper hears a 30 s window whatever a chunk holds, so
    /// packing costs it nothing; an engine whose work per second grows with the chunk's length
    /// asks for shorter ones.
    fn close_file_chunks_after(&self) -> Option<f64> {
        None
    }

    /// Whether the engine decodes [`EngineRequest::said_before`] as its text; one that does not
    /// hears the whole chunk and should not be given audio said before.
    fn hears_said_before(&self) -> bool {
        false
    }

    fn offer(&self, model: &str) -> Option<ModelOffer> {
        self.models().into_iter().find(|m| m.spec.id == model)
    }

    /// Forgets a loaded model; its memory goes back to the system once no call still uses it.
    /// False when it was not loaded.
    fn unload(&self, _model: &str) -> bool {
        false
    }

    /// Loads `model` now (blocking), so that the first call on it does not wait for its
    /// weights; nothing for an engine without weights to load.
    fn preload(&self, _model: &str) -> Result<(), EngineError> {
        Ok(())
    }
}

/// Removes `model` from an engine's `loaded` models and gives the memory back (once no call
/// still holds it); false when it was not loaded.
pub fn forget_loaded<V>(
    loaded: &std::sync::Mutex<std::collections::HashMap<&'static str, V>>,
    model: &str,
) -> bool {
    let unloaded = loaded
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(model);
    let was_loaded = unloaded.is_some();
    drop(unloaded);
    give_back_memory();
    was_loaded
}

/// Hands memory the allocator keeps for reuse back to the system, after a model is unloaded
/// (glibc keeps freed heap, and a model's buffers are large).
pub fn give_back_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator; it has no inputs.
    unsafe {
        libc::malloc_trim(0);
    }
}
