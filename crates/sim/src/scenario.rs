//! The scenario: devices and their faults, engine latency and failures, models and the app context
//! of dictation, read from TOML and checked with errors that name the offending key. Every key is
//! documented in `crates/sim/scenarios/README.md`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::corpus::Corpus;
use crate::device::{Faults, Playback};
use crate::playlist::{After, Item};
use crate::replay::Latency;

mod chat;
mod check;
mod raw;

/// The scenario used when none is given (`crates/sim/scenarios/default.toml`).
pub const DEFAULT_SCENARIO: &str = include_str!("../scenarios/default.toml");

/// Lowest and highest delivery rates a device accepts.
pub const SAMPLE_RATES: std::ops::RangeInclusive<u32> = 8_000..=192_000;

/// A checked scenario.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Scenario {
    /// The file it was read from, if any.
    pub path: Option<PathBuf>,
    /// Corpus folder (relative paths resolved against the scenario's folder); `None`: the corpus
    /// of the source tree ([`Corpus::source_dir`]).
    pub corpus: Option<PathBuf>,
    pub microphone: DeviceSpec,
    pub system_audio: DeviceSpec,
    pub engine: EngineSpec,
    /// State of each model by id; models not listed are absent.
    pub models: BTreeMap<String, ModelState>,
    pub app_context: AppContext,
    /// The chat provider prompt actions run through in sim mode.
    pub chat: ChatSpec,
}

/// Sim mode's chat provider for prompt actions: an action's answer is the one given for its
/// name, else `[NAME] TEXT`; after `latency_seconds`; or the failure `fault` names, as a real
/// provider would fail.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatSpec {
    /// Send actions to the provider the preferences name instead (`provider = "preferences"`):
    /// a stand-in server in a client's tests.
    pub use_preferences: bool,
    /// The model the answers name (`sim-chat`).
    pub model: String,
    pub latency_seconds: f64,
    /// Answers by action name (any case).
    pub answers: BTreeMap<String, String>,
    pub fault: Option<ChatFault>,
}

impl Default for ChatSpec {
    fn default() -> Self {
        ChatSpec {
            use_preferences: false,
            model: "sim-chat".into(),
            latency_seconds: 0.0,
            answers: BTreeMap::new(),
            fault: None,
        }
    }
}

/// How sim mode's chat provider fails every call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatFault {
    /// Nothing listens at its address.
    Unreachable,
    /// It answers 500.
    ErrorStatus,
    /// It answers something that is not a chat completion.
    Malformed,
    /// It answers a completion with no text.
    Empty,
}

impl ChatFault {
    pub const NAMES: [&'static str; 4] = ["unreachable", "error_status", "malformed", "empty"];

    fn parse(name: &str) -> Option<ChatFault> {
        Some(match name {
            "unreachable" => ChatFault::Unreachable,
            "error_status" => ChatFault::ErrorStatus,
            "malformed" => ChatFault::Malformed,
            "empty" => ChatFault::Empty,
            _ => return None,
        })
    }
}

/// One simulated capture device.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceSpec {
    /// False: opening the device fails (no device).
    pub present: bool,
    /// Rate the device delivers at, Hz.
    pub sample_rate: u32,
    pub items: Vec<Item>,
    pub after: After,
    pub playback: Playback,
    pub faults: Faults,
}

impl Default for DeviceSpec {
    fn default() -> Self {
        DeviceSpec {
            present: true,
            sample_rate: 48_000,
            items: Vec::new(),
            after: After::Silence,
            playback: Playback::Restart,
            faults: Faults::default(),
        }
    }
}

/// The simulated engine.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EngineSpec {
    /// Model selected when the service starts; `None`: nothing selected.
    pub selected_model: Option<String>,
    pub latency: Latency,
    /// Request numbers (from 1) that fail.
    pub fail_requests: Vec<u64>,
}

/// Whether a model's weights are there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ModelState {
    /// Downloaded and ready.
    Present,
    /// Not downloaded, and a download fails.
    Absent,
    /// Not downloaded; a download succeeds after this many seconds, progressing evenly.
    Download { seconds: f64 },
}

/// The application dictation inserts into (what history records as app name, id and URL).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AppContext {
    pub app_name: Option<String>,
    pub app_id: Option<String>,
    pub url: Option<String>,
}

/// A scenario that cannot be read or is not valid.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Not TOML, an unknown key or a value of the wrong type.
    #[error("{origin}: {message}")]
    Syntax { origin: String, message: String },
    /// A value out of range or inconsistent; `key` is its dotted path.
    #[error("{origin}: {key}: {message}")]
    Invalid {
        origin: String,
        key: String,
        message: String,
    },
}

impl ScenarioError {
    /// The dotted key an [`ScenarioError::Invalid`] is about.
    pub fn key(&self) -> Option<&str> {
        match self {
            ScenarioError::Invalid { key, .. } => Some(key),
            _ => None,
        }
    }
}

impl Scenario {
    /// Parses and checks scenario TOML (clip ids are checked by [`Scenario::check_clips`]).
    pub fn parse(text: &str) -> Result<Self, ScenarioError> {
        raw::parse(text, "scenario")
    }

    /// Reads and checks a scenario file; a relative `corpus` is resolved against its folder.
    pub fn load(path: &Path) -> Result<Self, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let mut scenario = raw::parse(&text, &path.display().to_string())?;
        if let Some(corpus) = &scenario.corpus
            && corpus.is_relative()
        {
            let folder = path.parent().unwrap_or(Path::new("."));
            scenario.corpus = Some(folder.join(corpus));
        }
        scenario.path = Some(path.to_path_buf());
        Ok(scenario)
    }

    /// The built-in default scenario.
    pub fn default_scenario() -> Self {
        Self::parse(DEFAULT_SCENARIO).expect("the default scenario is valid")
    }

    /// The corpus folder this scenario plays from.
    pub fn corpus_dir(&self) -> PathBuf {
        self.corpus.clone().unwrap_or_else(Corpus::source_dir)
    }

    /// Checks that every clip the devices play is in `corpus`.
    pub fn check_clips(&self, corpus: &Corpus) -> Result<(), ScenarioError> {
        for (name, device) in [
            ("microphone", &self.microphone),
            ("system_audio", &self.system_audio),
        ] {
            for (n, item) in device.items.iter().enumerate() {
                if let Item::Clip(id) = item
                    && corpus.clip(id).is_none()
                {
                    return Err(self.invalid(
                        format!("{name}.items[{n}].clip"),
                        format!(
                            "no clip '{id}' in the corpus at {} (see its clips.toml)",
                            corpus.dir().display()
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    fn invalid(&self, key: String, message: String) -> ScenarioError {
        ScenarioError::Invalid {
            origin: self
                .path
                .as_ref()
                .map_or_else(|| "scenario".to_owned(), |p| p.display().to_string()),
            key,
            message,
        }
    }
}
