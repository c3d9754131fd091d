//! The corpus: `clips.toml` (what each clip says and how it was made), the clips themselves as
//! 16 kHz mono samples, and the recorded engine output per model (`recordings/<model>.json`).

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::corpus_error::CorpusError;
use crate::recording::Recording;

/// The `source.tool` of a real recording taken from a package.
pub const RECORDING_TOOL: &str = "recording";

/// Sample rate of every corpus clip and of the audio the fingerprint and the replay engine take.
pub const SAMPLE_RATE: u32 = 16_000;

/// What a clip holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClipKind {
    Speech,
    Silence,
    Noise,
}

/// One `[[clips]]` entry of `clips.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClipEntry {
    /// Unique id: lower-case letters, digits, `-` and `.`.
    pub id: String,
    /// WAV file relative to the corpus folder.
    pub file: String,
    pub kind: ClipKind,
    /// What was spoken; empty for silence and noise.
    pub text: String,
    /// ISO 639-1 code of the spoken language; empty for silence and noise.
    pub language: String,
    /// espeak-ng voice (with `+variant`), or `human` for a recording of a person; empty for
    /// silence and noise.
    pub voice: String,
    /// How the clip was made.
    pub source: ClipSource,
}

/// Provenance of a clip: the tool, its version and the settings it ran with; for a recording
/// taken from a package, the package, its version and the file inside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClipSource {
    /// `espeak-ng`, `sox`, or `recording` (a real recording shipped in a package).
    pub tool: String,
    pub version: String,
    /// The package a recording comes from: `deb:NAME` (Debian) or `pypi:NAME`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// The recording's path inside the package.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
    /// The SHA-256 of that file as the package ships it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// espeak-ng speed in words per minute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<u32>,
    /// sox synth type (`whitenoise`, `pinknoise`, `brownnoise`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synth: Option<String>,
    /// Length of generated silence or noise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    /// sox volume of generated noise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    clips: Vec<ClipEntry>,
}

/// A clip with its samples (16 kHz mono, -1..1).
#[derive(Debug, Clone)]
pub struct Clip {
    pub entry: ClipEntry,
    pub samples: Arc<[f32]>,
}

impl Clip {
    /// The clip id.
    pub fn id(&self) -> &str {
        &self.entry.id
    }

    /// A recording of a real voice (not synthetic speech, silence or noise made by a tool).
    pub fn is_real(&self) -> bool {
        self.entry.source.tool == RECORDING_TOOL
    }

    /// Length in seconds.
    pub fn duration(&self) -> f64 {
        self.samples.len() as f64 / f64::from(SAMPLE_RATE)
    }
}

/// The loaded corpus: clips in manifest order plus the recordings by model id.
#[derive(Debug, Clone)]
pub struct Corpus {
    dir: PathBuf,
    clips: Vec<Clip>,
    by_id: HashMap<String, usize>,
    recordings: BTreeMap<String, Recording>,
}

impl Corpus {
    /// The `corpus/` folder of the source tree this crate was built from (the crate is
    /// `crates/sim`).
    pub fn source_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus")
    }

    /// Loads `dir/clips.toml`, every clip it lists and every `dir/recordings/*.json`.
    pub fn load(dir: &Path) -> Result<Self, CorpusError> {
        let manifest_path = dir.join("clips.toml");
        let text = std::fs::read_to_string(&manifest_path)
            .map_err(|e| CorpusError::io(&manifest_path, e))?;
        let manifest: Manifest = toml::from_str(&text)
            .map_err(|e| CorpusError::invalid(&manifest_path, e.to_string()))?;
        let mut clips = Vec::with_capacity(manifest.clips.len());
        for (n, entry) in manifest.clips.into_iter().enumerate() {
            check_entry(&entry)
                .map_err(|m| CorpusError::invalid(&manifest_path, format!("clips[{n}]: {m}")))?;
            let samples = read_clip(&dir.join(&entry.file))?;
            clips.push(Clip {
                entry,
                samples: samples.into(),
            });
        }
        let mut corpus =
            Self::from_clips(dir, clips).map_err(|m| CorpusError::invalid(&manifest_path, m))?;
        for path in recording_files(&dir.join("recordings"))? {
            let recording = Recording::load(&path)?;
            corpus
                .insert_recording(recording)
                .map_err(|m| CorpusError::invalid(&path, m))?;
        }
        Ok(corpus)
    }

    /// A corpus from clips already in memory (no recordings); fails on a duplicate id.
    pub fn from_clips(dir: &Path, clips: Vec<Clip>) -> Result<Self, String> {
        let mut by_id = HashMap::with_capacity(clips.len());
        for (n, clip) in clips.iter().enumerate() {
            if by_id.insert(clip.id().to_owned(), n).is_some() {
                return Err(format!("clip id '{}' appears twice", clip.id()));
            }
        }
        Ok(Corpus {
            dir: dir.to_path_buf(),
            clips,
            by_id,
            recordings: BTreeMap::new(),
        })
    }

    /// Adds or replaces the recording of its model; fails when it names a clip the corpus lacks.
    pub fn insert_recording(&mut self, recording: Recording) -> Result<(), String> {
        if let Some(id) = recording.clips.keys().find(|id| self.clip(id).is_none()) {
            return Err(format!(
                "clip '{id}' is not in the corpus (record the corpus again)"
            ));
        }
        self.recordings.insert(recording.model.clone(), recording);
        Ok(())
    }

    /// The folder the corpus was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Every clip, in manifest order.
    pub fn clips(&self) -> &[Clip] {
        &self.clips
    }

    /// The clip with this id.
    pub fn clip(&self, id: &str) -> Option<&Clip> {
        self.by_id.get(id).map(|&n| &self.clips[n])
    }

    /// The recording of `model`, if one was made.
    pub fn recording(&self, model: &str) -> Option<&Recording> {
        self.recordings.get(model)
    }

    /// Every recording, by model id.
    pub fn recordings(&self) -> impl Iterator<Item = &Recording> {
        self.recordings.values()
    }
}

fn check_entry(entry: &ClipEntry) -> Result<(), String> {
    let id = &entry.id;
    let valid_id = id.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
    if !valid_id {
        return Err(format!(
            "id '{id}' must be lower-case letters, digits, '-' and '.'"
        ));
    }
    let speech = entry.kind == ClipKind::Speech;
    if speech && (entry.text.trim().is_empty() || entry.voice.is_empty()) {
        return Err(format!("speech clip '{id}' needs 'text' and 'voice'"));
    }
    let source = &entry.source;
    if source.tool == RECORDING_TOOL
        && (source.package.is_none() || source.member.is_none() || source.sha256.is_none())
    {
        return Err(format!(
            "recording '{id}' needs source.package, source.member and source.sha256"
        ));
    }
    let silent = entry.text.is_empty() && entry.language.is_empty();
    if !speech && !silent {
        return Err(format!(
            "clip '{id}' is not speech: 'text' and 'language' must be empty"
        ));
    }
    let language_ok = if speech {
        entry.language.len() == 2 && entry.language.chars().all(|c| c.is_ascii_lowercase())
    } else {
        true
    };
    if !language_ok {
        return Err(format!(
            "clip '{id}': language '{}' is not an ISO 639-1 code",
            entry.language
        ));
    }
    Ok(())
}

/// Reads a corpus WAV file: it must be 16 kHz, mono, 16-bit PCM.
fn read_clip(path: &Path) -> Result<Vec<f32>, CorpusError> {
    let invalid = |m: String| CorpusError::invalid(path, m);
    let reader = hound::WavReader::open(path).map_err(|e| match e {
        hound::Error::IoError(io) => CorpusError::io(path, io),
        other => invalid(other.to_string()),
    })?;
    let spec = reader.spec();
    if spec.sample_rate != SAMPLE_RATE
        || spec.channels != 1
        || spec.bits_per_sample != 16
        || spec.sample_format != hound::SampleFormat::Int
    {
        return Err(invalid(format!(
            "expected 16 kHz mono 16-bit PCM, found {} Hz, {} channel(s), {}-bit {:?} \
             (run scripts/make-corpus.sh)",
            spec.sample_rate, spec.channels, spec.bits_per_sample, spec.sample_format
        )));
    }
    // The samples read as one block of bytes: hound's reader takes them one call at a time,
    // which was most of a sim-mode server's start. The block is never larger than the file,
    // whatever its header claims.
    let declared = u64::from(reader.len()) * 2;
    let size = std::fs::metadata(path)
        .map_err(|e| CorpusError::io(path, e))?
        .len();
    if declared > size {
        return Err(invalid(format!(
            "the samples end early: the header declares {declared} bytes of them in a \
             {size}-byte file"
        )));
    }
    let mut bytes = vec![0u8; declared as usize];
    reader
        .into_inner()
        .read_exact(&mut bytes)
        .map_err(|e| invalid(format!("the samples end early: {e}")))?;
    Ok(bytes
        .chunks_exact(2)
        .map(|b| f32::from(i16::from_le_bytes([b[0], b[1]])) / 32768.0)
        .collect())
}

/// `*.json` files of the recordings folder, sorted; none when the folder does not exist.
fn recording_files(dir: &Path) -> Result<Vec<PathBuf>, CorpusError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(CorpusError::io(dir, e)),
    };
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| CorpusError::io(dir, e))?.path();
        if path.extension().is_some_and(|x| x == "json") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}
