//! The recorded engine output: `corpus/recordings/<model>.json`, one file per model, holding what
//! the real engine heard in every clip. Keys are written sorted and pretty-printed for review.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::corpus_error::CorpusError;

/// Everything one model heard in the corpus.
///
/// Fields are declared in alphabetical order so that the JSON keys come out sorted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recording {
    /// Output per clip id.
    pub clips: BTreeMap<String, RecordedClip>,
    /// Engine id, for example `whisper`.
    pub engine: String,
    /// Model id, for example `tiny.en`; also the file name (`<model>.json`).
    pub model: String,
}

/// What the engine returned for one clip.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedClip {
    /// Length of the clip in seconds.
    pub duration: f64,
    /// Detected or forced language (ISO 639-1); omitted when the engine gave none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Seconds the engine took on the recording machine.
    pub processing_time: f64,
    /// Timed segments, in order, relative to the start of the clip.
    pub segments: Vec<Segment>,
    /// The full text, exactly as the engine returned it.
    pub text: String,
}

/// A timed piece of text, in seconds from the start of the audio.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Segment {
    pub end: f64,
    pub start: f64,
    pub text: String,
}

impl Recording {
    /// An empty recording for `engine`/`model`.
    pub fn new(engine: impl Into<String>, model: impl Into<String>) -> Self {
        Recording {
            clips: BTreeMap::new(),
            engine: engine.into(),
            model: model.into(),
        }
    }

    /// Parses and checks a recording; `path` only names the file in errors.
    pub fn from_json(path: &Path, json: &str) -> Result<Self, CorpusError> {
        let recording: Recording =
            serde_json::from_str(json).map_err(|e| CorpusError::invalid(path, e.to_string()))?;
        recording
            .check()
            .map_err(|message| CorpusError::invalid(path, message))?;
        Ok(recording)
    }

    /// Reads and checks `path`; its file stem must be the model id.
    pub fn load(path: &Path) -> Result<Self, CorpusError> {
        let json = std::fs::read_to_string(path).map_err(|e| CorpusError::io(path, e))?;
        let recording = Self::from_json(path, &json)?;
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        if stem != recording.model {
            return Err(CorpusError::invalid(
                path,
                format!(
                    "the file holds model '{}' but is named '{stem}.json'",
                    recording.model
                ),
            ));
        }
        Ok(recording)
    }

    /// The reviewable form: pretty-printed JSON with sorted keys and a final newline.
    pub fn to_json(&self) -> String {
        let mut json = serde_json::to_string_pretty(self).expect("a recording always serialises");
        json.push('\n');
        json
    }

    /// Writes `<dir>/<model>.json` (creating `dir`) through a temporary file, so a reader never
    /// sees half a file.
    pub fn save(&self, dir: &Path) -> Result<std::path::PathBuf, CorpusError> {
        std::fs::create_dir_all(dir).map_err(|e| CorpusError::io(dir, e))?;
        let path = dir.join(format!("{}.json", self.model));
        let temporary = dir.join(format!(".{}.json.tmp", self.model));
        std::fs::write(&temporary, self.to_json()).map_err(|e| CorpusError::io(&temporary, e))?;
        std::fs::rename(&temporary, &path).map_err(|e| CorpusError::io(&path, e))?;
        Ok(path)
    }

    /// Checks values a hand edit could break; the message names the clip and field.
    fn check(&self) -> Result<(), String> {
        if self.engine.is_empty() || self.model.is_empty() {
            return Err("'engine' and 'model' must not be empty".into());
        }
        for (id, clip) in &self.clips {
            let bad = |field: &str| Err(format!("clips.{id}.{field} is not a valid time"));
            if !is_time(clip.duration) {
                return bad("duration");
            }
            if !is_time(clip.processing_time) {
                return bad("processing_time");
            }
            for (n, segment) in clip.segments.iter().enumerate() {
                if !is_time(segment.start) || !is_time(segment.end) || segment.end < segment.start {
                    return bad(&format!("segments[{n}]"));
                }
            }
        }
        Ok(())
    }
}

fn is_time(seconds: f64) -> bool {
    seconds.is_finite() && seconds >= 0.0
}
