//! Transcription options as they arrive (multipart fields, `X-*` headers, local-file JSON),
//! checked into one [`TranscribeOptions`] with the contract's messages.

use serde::Deserialize;

use crate::api::ApiError;
use crate::engine::{LanguageChoice, Task};
use crate::wire::parse_bool_word;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResponseFormat {
    #[default]
    Json,
    /// Adds `segments`.
    VerboseJson,
}

/// Every option of both transcription routes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TranscribeOptions {
    pub language: Option<String>,
    pub language_hints: Vec<String>,
    pub task: Option<Task>,
    pub target_language: Option<String>,
    pub response_format: ResponseFormat,
    pub prompt: Option<String>,
    pub engine: Option<String>,
    pub model: Option<String>,
    pub normalize_numbers: Option<bool>,
    pub apply_corrections: Option<bool>,
}

impl TranscribeOptions {
    /// Applies one named option given as text (a form field or a header value).
    pub fn set_text(&mut self, name: &str, value: &str) -> Result<(), ApiError> {
        let text = || Some(value.trim().to_string()).filter(|v| !v.is_empty());
        match name {
            "language" => self.language = text(),
            "language_hint" => self.language_hints.extend(text()),
            "language_hints" => self.language_hints.extend(split_hints(value)),
            "task" => self.task = Some(parse_task(value)?),
            "target_language" => self.target_language = text(),
            "response_format" => self.response_format = parse_format(value),
            "prompt" => self.prompt = Some(value.to_string()).filter(|p| !p.trim().is_empty()),
            "engine" => self.engine = text(),
            "model" => self.model = text(),
            "normalize_numbers" => self.normalize_numbers = Some(parse_flag(name, value)?),
            "apply_corrections" => self.apply_corrections = Some(parse_flag(name, value)?),
            _ => {}
        }
        Ok(())
    }

    /// The options carried by the raw-body route's `X-*` headers.
    pub fn from_headers(headers: &axum::http::HeaderMap) -> Result<TranscribeOptions, ApiError> {
        const HEADERS: [(&str, &str); 10] = [
            ("x-language", "language"),
            ("x-language-hints", "language_hints"),
            ("x-task", "task"),
            ("x-target-language", "target_language"),
            ("x-response-format", "response_format"),
            ("x-prompt", "prompt"),
            ("x-engine", "engine"),
            ("x-model", "model"),
            ("x-normalize-numbers", "normalize_numbers"),
            ("x-apply-corrections", "apply_corrections"),
        ];
        let mut options = TranscribeOptions::default();
        for (header, name) in HEADERS {
            if let Some(value) = headers.get(header) {
                let value = value.to_str().map_err(|_| {
                    ApiError::BadRequest(format!("The '{header}' header must be plain text."))
                })?;
                options.set_text(name, value)?;
            }
        }
        Ok(options)
    }

    /// Checks combinations that need no engine: language and hints together.
    pub fn validate(&self) -> Result<(), ApiError> {
        if self.language.is_some() && !self.language_hints.is_empty() {
            return Err(ApiError::BadRequest(
                "Use either 'language' or 'language_hint', not both".into(),
            ));
        }
        Ok(())
    }

    /// One hint means that exact language; several mean a shortlist.
    pub fn language_choice(&self) -> LanguageChoice {
        match (&self.language, self.language_hints.as_slice()) {
            (Some(code), _) => LanguageChoice::Exact(code.clone()),
            (None, []) => LanguageChoice::Auto,
            (None, [one]) => LanguageChoice::Exact(one.clone()),
            (None, many) => LanguageChoice::Shortlist(many.to_vec()),
        }
    }
}

/// `X-Language-Hints`: comma-separated, items trimmed, empties dropped.
pub fn split_hints(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

fn parse_task(value: &str) -> Result<Task, ApiError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "transcribe" => Ok(Task::Transcribe),
        "translate" => Ok(Task::Translate),
        _ => Err(ApiError::BadRequest(format!(
            "Invalid 'task' value '{}': use 'transcribe' or 'translate'.",
            value.trim()
        ))),
    }
}

/// Any value other than `verbose_json` gives the plain shape.
fn parse_format(value: &str) -> ResponseFormat {
    if value.trim().eq_ignore_ascii_case("verbose_json") {
        ResponseFormat::VerboseJson
    } else {
        ResponseFormat::Json
    }
}

fn parse_flag(name: &str, value: &str) -> Result<bool, ApiError> {
    parse_bool_word(value).ok_or_else(|| {
        ApiError::BadRequest(format!(
            "Invalid '{name}' value '{}': use true or false.",
            value.trim()
        ))
    })
}

/// The JSON body of `POST /v1/transcribe/local-file`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalFileRequest {
    pub path: String,
    pub language: Option<String>,
    #[serde(default)]
    pub language_hints: Vec<String>,
    pub task: Option<String>,
    pub target_language: Option<String>,
    pub response_format: Option<String>,
    pub prompt: Option<String>,
    pub engine: Option<String>,
    pub model: Option<String>,
    pub normalize_numbers: Option<bool>,
    pub apply_corrections: Option<bool>,
}

impl LocalFileRequest {
    pub fn options(&self) -> Result<TranscribeOptions, ApiError> {
        let mut options = TranscribeOptions {
            normalize_numbers: self.normalize_numbers,
            apply_corrections: self.apply_corrections,
            ..TranscribeOptions::default()
        };
        let texts = [
            ("language", &self.language),
            ("task", &self.task),
            ("target_language", &self.target_language),
            ("response_format", &self.response_format),
            ("prompt", &self.prompt),
            ("engine", &self.engine),
            ("model", &self.model),
        ];
        for (name, value) in texts {
            if let Some(value) = value {
                options.set_text(name, value)?;
            }
        }
        for hint in &self.language_hints {
            options.set_text("language_hint", hint)?;
        }
        Ok(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_split_on_commas_and_drop_empties() {
        assert_eq!(split_hints(" de, fr ,,es,"), vec!["de", "fr", "es"]);
    }

    #[test]
    fn one_hint_is_exact_and_several_are_a_shortlist() {
        let mut o = TranscribeOptions::default();
        assert_eq!(o.language_choice(), LanguageChoice::Auto);
        o.set_text("language_hint", "de").unwrap();
        assert_eq!(o.language_choice(), LanguageChoice::Exact("de".into()));
        o.set_text("language_hint", "fr").unwrap();
        assert_eq!(
            o.language_choice(),
            LanguageChoice::Shortlist(vec!["de".into(), "fr".into()])
        );
        o.set_text("language", "en").unwrap();
        assert!(o.validate().is_err());
    }

    #[test]
    fn bad_values_are_refused_with_the_option_named() {
        let mut o = TranscribeOptions::default();
        let err = o.set_text("task", "summarize").unwrap_err();
        assert!(err.message().contains("'task'"), "{}", err.message());
        let err = o.set_text("apply_corrections", "perhaps").unwrap_err();
        assert!(err.message().contains("apply_corrections"));
        o.set_text("normalize_numbers", "OFF").unwrap();
        assert_eq!(o.normalize_numbers, Some(false));
        o.set_text("response_format", "srt").unwrap();
        assert_eq!(o.response_format, ResponseFormat::Json);
    }
}
