//! A realtime transcription session's configuration: read from `session.update` (OpenAI's GA
//! shape, `session.type: "transcription"`) or `transcription_session.update` (the beta shape
//! deployed clients still send), all or nothing, and written back in the shape the client used.
//! Only the fields present change; `turn_detection: null` means the client commits.

use serde_json::{Map, Value, json};

use super::detection::TurnDetection;

/// Input sample rates the session takes (PCM16 mono): OpenAI's 24 kHz, and 16 kHz.
pub const RATES: [u32; 2] = [24_000, 16_000];
/// `include` entry asking that each completed transcript be saved to history.
pub const INCLUDE_HISTORY: &str = "verbatim.history";

/// What the client set.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionConfig {
    /// Input PCM16 sample rate.
    pub rate: u32,
    /// The model as asked (an installed id, or any other name for the selected model).
    pub model: Option<String>,
    pub language: Option<String>,
    pub prompt: Option<String>,
    /// None: the client commits each turn.
    pub turn_detection: Option<TurnDetection>,
    /// Save each completed transcript to history.
    pub save_to_history: bool,
}

impl Default for SessionConfig {
    fn default() -> SessionConfig {
        SessionConfig {
            rate: RATES[0],
            model: None,
            language: None,
            prompt: None,
            turn_detection: Some(TurnDetection::DEFAULT),
            save_to_history: false,
        }
    }
}

/// Which shape of the protocol a client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `session.update` / `session.updated`.
    Ga,
    /// `transcription_session.update` / `transcription_session.updated`.
    Beta,
}

/// A field of an update that cannot be taken: the field's path and what to send instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub param: String,
    pub message: String,
    /// `unsupported` (a feature Verbatim does not have) or `invalid_value`.
    pub code: &'static str,
}

impl ConfigError {
    fn invalid(param: &str, message: impl Into<String>) -> ConfigError {
        ConfigError {
            param: param.to_string(),
            message: message.into(),
            code: "invalid_value",
        }
    }

    fn unsupported(param: &str, message: impl Into<String>) -> ConfigError {
        ConfigError {
            param: param.to_string(),
            message: message.into(),
            code: "unsupported",
        }
    }
}

impl SessionConfig {
    /// The configuration with `session` (the update's object) applied; `self` is unchanged
    /// when any field is refused.
    pub fn updated(&self, session: &Value, shape: Shape) -> Result<SessionConfig, ConfigError> {
        let session = object(session, "session")?;
        let mut next = self.clone();
        match shape {
            Shape::Ga => next.apply_ga(session)?,
            Shape::Beta => next.apply_beta(session)?,
        }
        if let Some(include) = session.get("include") {
            next.save_to_history = include_history(include, "session.include")?;
        }
        Ok(next)
    }

    fn apply_ga(&mut self, session: &Map<String, Value>) -> Result<(), ConfigError> {
        match session.get("type") {
            None => {}
            Some(Value::String(kind)) if kind == "transcription" => {}
            Some(_) => {
                return Err(ConfigError::unsupported(
                    "session.type",
                    "Verbatim serves transcription sessions only: send session.type \"transcription\"",
                ));
            }
        }
        let Some(audio) = session.get("audio") else {
            return Ok(());
        };
        let audio = object(audio, "session.audio")?;
        if audio.contains_key("output") {
            return Err(ConfigError::unsupported(
                "session.audio.output",
                "a transcription session has no audio output",
            ));
        }
        let Some(input) = audio.get("input") else {
            return Ok(());
        };
        let input = object(input, "session.audio.input")?;
        if let Some(format) = input.get("format") {
            self.rate = ga_format(format)?;
        }
        if let Some(transcription) = input.get("transcription") {
            self.apply_transcription(transcription, "session.audio.input.transcription")?;
        }
        if let Some(detection) = input.get("turn_detection") {
            self.turn_detection = turn_detection(
                detection,
                self.turn_detection,
                "session.audio.input.turn_detection",
            )?;
        }
        if let Some(noise) = input.get("noise_reduction") {
            no_noise_reduction(noise, "session.audio.input.noise_reduction")?;
        }
        Ok(())
    }

    fn apply_beta(&mut self, session: &Map<String, Value>) -> Result<(), ConfigError> {
        if let Some(format) = session.get("input_audio_format") {
            match format.as_str() {
                Some("pcm16") => self.rate = RATES[0],
                Some("g711_ulaw" | "g711_alaw") => {
                    return Err(ConfigError::unsupported(
                        "session.input_audio_format",
                        "Verbatim takes PCM16 only: send input_audio_format \"pcm16\"",
                    ));
                }
                _ => {
                    return Err(ConfigError::invalid(
                        "session.input_audio_format",
                        "input_audio_format must be \"pcm16\"",
                    ));
                }
            }
        }
        if let Some(transcription) = session.get("input_audio_transcription") {
            self.apply_transcription(transcription, "session.input_audio_transcription")?;
        }
        if let Some(detection) = session.get("turn_detection") {
            self.turn_detection =
                turn_detection(detection, self.turn_detection, "session.turn_detection")?;
        }
        if let Some(noise) = session.get("input_audio_noise_reduction") {
            no_noise_reduction(noise, "session.input_audio_noise_reduction")?;
        }
        Ok(())
    }

    /// `{model, language, prompt}`; null resets them.
    fn apply_transcription(&mut self, value: &Value, path: &str) -> Result<(), ConfigError> {
        if value.is_null() {
            (self.model, self.language, self.prompt) = (None, None, None);
            return Ok(());
        }
        let fields = object(value, path)?;
        for (name, slot) in [
            ("model", &mut self.model),
            ("language", &mut self.language),
            ("prompt", &mut self.prompt),
        ] {
            if let Some(value) = fields.get(name) {
                *slot = optional_text(value, &format!("{path}.{name}"))?;
            }
        }
        Ok(())
    }

    /// The session object in the client's shape; `model` is the model that transcribes.
    pub fn render(&self, id: &str, model: &str, shape: Shape) -> Value {
        let transcription = json!({
            "model": model,
            "language": self.language,
            "prompt": self.prompt.clone().unwrap_or_default(),
        });
        let detection = self.turn_detection.map(|d| {
            json!({
                "type": "server_vad",
                "threshold": d.threshold,
                "prefix_padding_ms": d.prefix_padding_ms,
                "silence_duration_ms": d.silence_duration_ms,
            })
        });
        let include = self.save_to_history.then(|| json!([INCLUDE_HISTORY]));
        match shape {
            Shape::Ga => json!({
                "type": "transcription",
                "object": "realtime.transcription_session",
                "id": id,
                "audio": {"input": {
                    "format": {"type": "audio/pcm", "rate": self.rate},
                    "transcription": transcription,
                    "noise_reduction": null,
                    "turn_detection": detection,
                }},
                "include": include,
            }),
            Shape::Beta => json!({
                "object": "realtime.transcription_session",
                "id": id,
                "input_audio_format": "pcm16",
                "input_audio_transcription": transcription,
                "turn_detection": detection,
                "input_audio_noise_reduction": null,
                "include": include,
            }),
        }
    }
}

fn object<'a>(value: &'a Value, path: &str) -> Result<&'a Map<String, Value>, ConfigError> {
    value
        .as_object()
        .ok_or_else(|| ConfigError::invalid(path, format!("{path} must be an object")))
}

fn optional_text(value: &Value, path: &str) -> Result<Option<String>, ConfigError> {
    match value {
        Value::Null => Ok(None),
        Value::String(text) => Ok(Some(text.trim().to_string()).filter(|t| !t.is_empty())),
        _ => Err(ConfigError::invalid(
            path,
            format!("{path} must be a string or null"),
        )),
    }
}

/// GA `format`: `{type: "audio/pcm", rate}` with a rate Verbatim takes.
fn ga_format(value: &Value) -> Result<u32, ConfigError> {
    let path = "session.audio.input.format";
    let format = object(value, path)?;
    match format.get("type").and_then(Value::as_str) {
        None | Some("audio/pcm") => {}
        Some("audio/pcmu" | "audio/pcma") => {
            return Err(ConfigError::unsupported(
                &format!("{path}.type"),
                "Verbatim takes PCM16 only: send format.type \"audio/pcm\"",
            ));
        }
        Some(_) => {
            return Err(ConfigError::invalid(
                &format!("{path}.type"),
                "format.type must be \"audio/pcm\"",
            ));
        }
    }
    match format.get("rate") {
        None => Ok(RATES[0]),
        Some(rate) => rate
            .as_u64()
            .and_then(|r| u32::try_from(r).ok())
            .filter(|r| RATES.contains(r))
            .ok_or_else(|| {
                ConfigError::unsupported(
                    &format!("{path}.rate"),
                    "format.rate must be 24000 or 16000 (PCM16 mono)",
                )
            }),
    }
}

/// `turn_detection`: null (the client commits) or `server_vad` with its three settings, each
/// kept from `current` (or the default) when absent.
fn turn_detection(
    value: &Value,
    current: Option<TurnDetection>,
    path: &str,
) -> Result<Option<TurnDetection>, ConfigError> {
    if value.is_null() {
        return Ok(None);
    }
    let fields = object(value, path)?;
    match fields.get("type").and_then(Value::as_str) {
        None | Some("server_vad") => {}
        Some("semantic_vad") => {
            return Err(ConfigError::unsupported(
                &format!("{path}.type"),
                "semantic_vad is not available: use \"server_vad\", or null to commit turns yourself",
            ));
        }
        Some(_) => {
            return Err(ConfigError::invalid(
                &format!("{path}.type"),
                "turn_detection.type must be \"server_vad\" (or turn_detection null)",
            ));
        }
    }
    let mut detection = current.unwrap_or(TurnDetection::DEFAULT);
    if let Some(threshold) = fields.get("threshold") {
        detection.threshold = threshold
            .as_f64()
            .filter(|t| (0.0..=1.0).contains(t))
            .ok_or_else(|| {
                ConfigError::invalid(
                    &format!("{path}.threshold"),
                    "threshold must be a number from 0 to 1",
                )
            })? as f32;
    }
    let milliseconds = |name: &str, range: std::ops::RangeInclusive<u64>| {
        fields
            .get(name)
            .map(|v| {
                v.as_u64()
                    .filter(|ms| range.contains(ms))
                    .map(|ms| ms as u32)
                    .ok_or_else(|| {
                        ConfigError::invalid(
                            &format!("{path}.{name}"),
                            format!(
                                "{name} must be a whole number of milliseconds from {} to {}",
                                range.start(),
                                range.end()
                            ),
                        )
                    })
            })
            .transpose()
    };
    if let Some(ms) = milliseconds("prefix_padding_ms", 0..=2_000)? {
        detection.prefix_padding_ms = ms;
    }
    if let Some(ms) = milliseconds("silence_duration_ms", 100..=10_000)? {
        detection.silence_duration_ms = ms;
    }
    Ok(Some(detection))
}

/// Noise reduction is not available: only null (or leaving it out) is taken.
fn no_noise_reduction(value: &Value, path: &str) -> Result<(), ConfigError> {
    if value.is_null() {
        return Ok(());
    }
    Err(ConfigError::unsupported(
        path,
        "Verbatim does not reduce noise: send null or leave the field out",
    ))
}

/// `include`: null or a list; [`INCLUDE_HISTORY`] saves transcripts to history.
fn include_history(value: &Value, path: &str) -> Result<bool, ConfigError> {
    let entries = match value {
        Value::Null => return Ok(false),
        Value::Array(entries) => entries,
        _ => {
            return Err(ConfigError::invalid(
                path,
                "include must be a list of strings",
            ));
        }
    };
    let mut history = false;
    for entry in entries {
        match entry.as_str() {
            Some(INCLUDE_HISTORY) => history = true,
            Some("item.input_audio_transcription.logprobs") => {
                return Err(ConfigError::unsupported(
                    path,
                    "Verbatim does not report log probabilities",
                ));
            }
            _ => {
                return Err(ConfigError::invalid(
                    path,
                    format!("include takes \"{INCLUDE_HISTORY}\" (save transcripts to history)"),
                ));
            }
        }
    }
    Ok(history)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ga_update_sets_only_what_it_names() {
        let config = SessionConfig::default();
        let update = json!({"type": "transcription", "audio": {"input": {
            "format": {"type": "audio/pcm", "rate": 16000},
            "transcription": {"model": "tiny.en", "language": "en"},
        }}});
        let next = config.updated(&update, Shape::Ga).unwrap();
        assert_eq!(next.rate, 16_000);
        assert_eq!(next.model.as_deref(), Some("tiny.en"));
        assert_eq!(next.language.as_deref(), Some("en"));
        assert_eq!(next.turn_detection, Some(TurnDetection::DEFAULT));
        assert!(!next.save_to_history);
        let manual =
            json!({"audio": {"input": {"turn_detection": null}}, "include": [INCLUDE_HISTORY]});
        let next = next.updated(&manual, Shape::Ga).unwrap();
        assert_eq!(next.turn_detection, None);
        assert!(next.save_to_history);
        assert_eq!(next.rate, 16_000, "kept");
    }

    #[test]
    fn server_vad_settings_are_taken_and_checked() {
        let update = json!({"audio": {"input": {"turn_detection": {
            "type": "server_vad", "threshold": 0.7, "silence_duration_ms": 500,
        }}}});
        let next = SessionConfig::default()
            .updated(&update, Shape::Ga)
            .unwrap();
        let detection = next.turn_detection.unwrap();
        assert_eq!(detection.threshold, 0.7);
        assert_eq!(detection.silence_duration_ms, 500);
        assert_eq!(detection.prefix_padding_ms, 240, "kept from the default");
        for (bad, param) in [
            (json!({"threshold": 1.5}), "threshold"),
            (json!({"prefix_padding_ms": -1}), "prefix_padding_ms"),
            (json!({"silence_duration_ms": 5}), "silence_duration_ms"),
            (json!({"type": "semantic_vad"}), "type"),
        ] {
            let update = json!({"audio": {"input": {"turn_detection": bad}}});
            let err = SessionConfig::default()
                .updated(&update, Shape::Ga)
                .unwrap_err();
            assert_eq!(
                err.param,
                format!("session.audio.input.turn_detection.{param}")
            );
        }
    }

    #[test]
    fn what_verbatim_cannot_do_is_refused_and_changes_nothing() {
        let config = SessionConfig::default();
        for (update, shape, param) in [
            (json!({"type": "realtime"}), Shape::Ga, "session.type"),
            (
                json!({"audio": {"input": {"noise_reduction": {"type": "near_field"}, "format": {"rate": 16000}}}}),
                Shape::Ga,
                "session.audio.input.noise_reduction",
            ),
            (
                json!({"audio": {"input": {"format": {"type": "audio/pcmu"}}}}),
                Shape::Ga,
                "session.audio.input.format.type",
            ),
            (
                json!({"audio": {"input": {"format": {"rate": 44100}}}}),
                Shape::Ga,
                "session.audio.input.format.rate",
            ),
            (
                json!({"include": ["item.input_audio_transcription.logprobs"]}),
                Shape::Ga,
                "session.include",
            ),
            (
                json!({"input_audio_format": "g711_ulaw"}),
                Shape::Beta,
                "session.input_audio_format",
            ),
            (
                json!({"input_audio_transcription": {"prompt": 3}}),
                Shape::Beta,
                "session.input_audio_transcription.prompt",
            ),
        ] {
            let err = config.updated(&update, shape).unwrap_err();
            assert_eq!(err.param, param, "{update}");
            assert!(!err.message.is_empty());
        }
        assert_eq!(config, SessionConfig::default());
    }

    #[test]
    fn the_beta_shape_is_read_and_written() {
        let update = json!({
            "input_audio_format": "pcm16",
            "input_audio_transcription": {"model": "whisper-1", "prompt": "Verbatim"},
            "turn_detection": null,
            "input_audio_noise_reduction": null,
        });
        let next = SessionConfig::default()
            .updated(&update, Shape::Beta)
            .unwrap();
        assert_eq!(next.turn_detection, None);
        assert_eq!(next.prompt.as_deref(), Some("Verbatim"));
        let written = next.render("sess_1", "tiny.en", Shape::Beta);
        assert_eq!(written["input_audio_transcription"]["model"], "tiny.en");
        assert_eq!(written["turn_detection"], Value::Null);
        let ga = next.render("sess_1", "tiny.en", Shape::Ga);
        assert_eq!(ga["type"], "transcription");
        assert_eq!(ga["audio"]["input"]["format"]["rate"], 24_000);
    }
}
