//! The transcription use case. Every caller (the HTTP routes, dictation, the Recorder, the
//! corpus recorder) goes through [`Transcriber::run`]: resolve the engine and model, wait for a
//! download when asked, queue, then decode, find the speech and run the engine chunk by chunk as
//! the audio streams in, post-process, apply the history policy.

pub mod corrections;
mod error;
mod job;
mod listening;
pub mod locale;
mod models;
pub mod numbers;
mod planned;
mod post;
mod queue;
mod readable;
pub mod residency;
mod resolve;
mod run;
pub mod said_before;
mod side_by_side;
mod speech;
mod watched_pass;
mod words;

pub use error::TranscribeError;
pub use job::{
    ActionRan, Audio, Caller, Dictated, Job, LiveAudio, StageTimes, TimedText, Transcript,
};
pub use planned::Planned;
pub use post::PostProcessing;
pub use queue::DEFAULT_QUEUE;
pub use residency::{SWEEP_INTERVAL, Unloaded};
pub use resolve::{Resolved, Untranslatable, download_base_url, language_choice};
#[cfg(test)]
pub(crate) use run::testing;
pub use run::{Progress, ProgressSink, Transcriber, TranscriberParts};
pub use speech::MIN_PROVISIONAL_SAMPLES;
