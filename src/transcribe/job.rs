//! What a transcription is asked to do ([`Job`]) and what it gives back ([`Transcript`]).

use std::path::PathBuf;
use std::time::Duration;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::resolve::Untranslatable;
use crate::engine::{Segment, SegmentDetail, Word};
use crate::wire::transcription::TranscribeOptions;

/// One transcription: the audio, the request's options and who asks (which decides the
/// post-processing and the history policy).
pub struct Job {
    pub audio: Audio,
    pub options: TranscribeOptions,
    /// Wait for a missing model's download instead of refusing (`?await_download=1`).
    pub await_download: bool,
    pub caller: Caller,
}

/// The audio of a job.
pub enum Audio {
    /// A file in any supported format; `hint`: its extension or MIME subtype.
    File { path: PathBuf, hint: Option<String> },
    /// A regular file already opened (see `audio::decode::open_regular`), so a path swapped
    /// after its checks cannot change what is decoded.
    Opened {
        file: std::fs::File,
        hint: Option<String>,
    },
    /// 16 kHz mono samples already in memory (captured); none gives empty text without the engine.
    Samples(Vec<f32>),
    /// 16 kHz mono samples as they are captured, a block at a time: each chunk of speech is
    /// transcribed as soon as a short pause closes it (`audio::vad::Limits::LIVE`), taking the
    /// engine for that chunk alone. The audio ends
    /// once every sender is gone; an empty block abandons it (the transcription is cancelled).
    Live(LiveAudio),
}

/// Audio captured now (see [`Audio::Live`]).
pub struct LiveAudio {
    pub blocks: std::sync::mpsc::Receiver<Vec<f32>>,
    /// Set by the capture as it stops: a provisional pass still running is abandoned and none
    /// starts again, so the last words are decoded at once.
    pub stopping: crate::cancel::Cancel,
}

impl LiveAudio {
    /// The audio `blocks` bring.
    pub fn new(blocks: std::sync::mpsc::Receiver<Vec<f32>>) -> LiveAudio {
        LiveAudio {
            blocks,
            stopping: crate::cancel::Cancel::new(),
        }
    }
}

/// Who asks for a transcription.
#[derive(Debug, Clone)]
pub enum Caller {
    /// An API request: saved to history when `saveApiTranscriptionsToHistory` is on.
    Api,
    /// A dictation: snippets are expanded, a translation the model cannot do is skipped, and the
    /// trimmed text is always saved to history as this session.
    Dictation(Dictated),
    /// A Recorder session: the text goes to the session, not to history.
    Recorder,
    /// A turn of a realtime session: saved to history only when the session asks (`save`).
    Stream { save: bool },
    /// The corpus recorder: the engine's own output, without the dictionary or history.
    Corpus,
}

/// The details of a dictation's history entry.
#[derive(Debug, Clone)]
pub struct Dictated {
    /// The session id, which becomes the history entry's id.
    pub id: Uuid,
    pub started_at: DateTime<Utc>,
    pub app_name: Option<String>,
    pub app_bundle_id: Option<String>,
    pub app_url: Option<String>,
}

impl Caller {
    pub(crate) fn untranslatable(&self) -> Untranslatable {
        match self {
            Caller::Dictation(_) => Untranslatable::Transcribe,
            _ => Untranslatable::Refuse,
        }
    }
}

/// What a transcription produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Transcript {
    /// After post-processing (for a dictation: as saved, trimmed).
    pub text: String,
    /// The engine's text before numbers, snippets and corrections.
    pub raw_text: String,
    pub language: Option<String>,
    /// Audio length in seconds (to the millisecond).
    pub duration: f64,
    /// Decode + engine + post-processing seconds (or the time the engine reports itself).
    pub processing_time: f64,
    pub engine: String,
    pub model: &'static str,
    /// Post-processed segments, in order.
    pub segments: Vec<TimedText>,
    pub stages: StageTimes,
    /// The request's prompt action, when it named one and there was text to run it on.
    pub action: Option<ActionRan>,
}

/// A prompt action run on a transcript.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActionRan {
    pub name: String,
    /// The transcript before the action (post-processed).
    pub transcribed_text: String,
    /// The model that answered; empty when the call failed.
    pub model: String,
    /// Seconds in the chat call.
    pub seconds: f64,
    /// Why it gave no text (the transcript is kept as it was).
    pub error: Option<String>,
}

/// A segment of a transcript (seconds, to the millisecond).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TimedText {
    pub start: f64,
    pub end: f64,
    /// Post-processed.
    pub text: String,
    /// Its words as the engine heard them (before post-processing), when they were asked for.
    pub words: Vec<Word>,
    /// The decoder's figures, from engines that have them.
    pub detail: Option<SegmentDetail>,
}

impl TimedText {
    /// `segment` with times rounded to the millisecond and its text passed through `finish`.
    pub fn from_segment(segment: &Segment, finish: impl Fn(&str) -> String) -> TimedText {
        TimedText {
            start: round_ms(segment.start),
            end: round_ms(segment.end),
            text: finish(&segment.text),
            words: segment
                .words
                .iter()
                .map(|w| Word {
                    word: w.word.clone(),
                    start: round_ms(w.start),
                    end: round_ms(w.end),
                })
                .collect(),
            detail: segment.detail.clone(),
        }
    }
}

/// Wall time of each step of one transcription.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StageTimes {
    /// Reading and resampling the audio (zero for samples already in memory).
    pub decode: Duration,
    /// Waiting for a free engine slot.
    pub queue: Duration,
    /// Voice activity detection (zero when it is off).
    pub vad: Duration,
    /// The engine call, measured around it on the blocking thread that runs it.
    pub engine: Duration,
    /// Number normalization, corrections and segment conversion.
    pub post: Duration,
}

impl StageTimes {
    /// Decode, voice activity detection, inference and post-processing: the `processing_time`
    /// (queueing not counted).
    pub fn busy(&self) -> Duration {
        self.decode + self.vad + self.engine + self.post
    }

    /// The `Server-Timing` header value (W3C Server Timing): milliseconds per stage.
    pub fn server_timing(&self) -> String {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        format!(
            "decode;dur={:.3}, queue;dur={:.3}, vad;dur={:.3}, engine;dur={:.3}, post;dur={:.3}",
            ms(self.decode),
            ms(self.queue),
            ms(self.vad),
            ms(self.engine),
            ms(self.post)
        )
    }
}

pub(crate) fn round_ms(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}
