//! The transcription routes on the wire: one table of option fields (multipart name, `X-*`
//! header, local-file JSON key, kind) read by the server's three parsers and by the CLI client,
//! and the Transcription object they answer. A new option is one row of the table.

mod kinds;

use serde::{Deserialize, Serialize};

use kinds::is_unset;
pub use kinds::{
    FieldKind, Flag, Format, Granularities, Granularity, Hints, OneText, Prompt, TaskName, Text,
    Unset, Words,
};

/// What is done with the speech: the `task` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    Transcribe,
    /// Into English (multilingual models only).
    Translate,
}

/// Why an option value was refused: a 400 with this message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FieldError(pub String);

/// The answer's shape: `verbose_json` adds `segments`; any other value gives the plain shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResponseFormat {
    #[default]
    Json,
    VerboseJson,
}

/// One transcription option as each carrier names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The option's name: its local-file JSON key, and the name used in error messages.
    pub name: &'static str,
    /// The multipart form field (the JSON key is accepted there too).
    pub form: &'static str,
    /// The raw-body route's header (lower case).
    pub header: &'static str,
    /// How the value is read: `Text`, `Prompt`, `Hints`, `TaskName`, `Format` or `Flag`.
    pub kind: &'static str,
}

/// Declares the options: the [`TranscribeOptions`] struct, the local-file body and [`FIELDS`],
/// all from one list, so no carrier can miss an option.
macro_rules! transcription_fields {
    ($($(#[doc = $doc:literal])* $name:ident: $kind:ident { form: $form:literal, header: $header:literal },)*) => {
        /// Every option of the transcription routes, whichever carrier brought it.
        #[derive(Debug, Clone, PartialEq, Default)]
        pub struct TranscribeOptions {
            $($(#[doc = $doc])* pub $name: <$kind as FieldKind>::Value,)*
        }

        /// The JSON body of `POST /v1/transcribe/local-file`: the path and the options by name.
        /// Unknown keys are ignored: clients of other implementations send extras.
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
        pub struct LocalFileRequest {
            pub path: String,
            $(#[serde(default, skip_serializing_if = "is_unset")] pub $name: <$kind as FieldKind>::Json,)*
        }

        /// Every option, in the order the contract lists them.
        pub const FIELDS: &[Field] = &[
            $(Field { name: stringify!($name), form: $form, header: $header, kind: stringify!($kind) },)*
        ];

        impl TranscribeOptions {
            /// Applies one option given as text; false when `name` is no option's name.
            fn set_named(&mut self, name: &str, value: &str, list: bool) -> Result<bool, FieldError> {
                match name {
                    $(stringify!($name) => <$kind as FieldKind>::set_text(&mut self.$name, name, value, list)?,)*
                    _ => return Ok(false),
                }
                Ok(true)
            }

            /// Every set option as `(form field, value)` pairs, in table order.
            pub fn form_fields(&self) -> Vec<(&'static str, String)> {
                let mut fields = Vec::new();
                $(fields.extend(<$kind as FieldKind>::to_text(&self.$name).into_iter().map(|v| ($form, v)));)*
                fields
            }
        }

        impl LocalFileRequest {
            /// The body that carries `options` for the file at `path`.
            pub fn new(path: String, options: &TranscribeOptions) -> LocalFileRequest {
                LocalFileRequest {
                    path,
                    $($name: <$kind as FieldKind>::to_json(&options.$name),)*
                }
            }

            /// The options the body carries.
            pub fn options(self) -> Result<TranscribeOptions, FieldError> {
                let mut options = TranscribeOptions::default();
                $(<$kind as FieldKind>::set_json(&mut options.$name, stringify!($name), self.$name)?;)*
                Ok(options)
            }
        }
    };
}

transcription_fields! {
    /// Spoken language (ISO 639-1); none detects it.
    language: Text { form: "language", header: "x-language" },
    /// Candidate languages: one means exactly that language, several a shortlist to detect among.
    language_hints: Hints { form: "language_hint", header: "x-language-hints" },
    /// `transcribe` (default) or `translate` (into English).
    task: TaskName { form: "task", header: "x-task" },
    /// Target language of a translation provider (none is configured on this host).
    target_language: Text { form: "target_language", header: "x-target-language" },
    /// `json` (default) or `verbose_json` (with segments).
    response_format: Format { form: "response_format", header: "x-response-format" },
    /// Text that steers the engine's vocabulary and style.
    prompt: Prompt { form: "prompt", header: "x-prompt" },
    /// Engine override.
    engine: Text { form: "engine", header: "x-engine" },
    /// Model override.
    model: Text { form: "model", header: "x-model" },
    /// Spoken numbers to digits (default: the `normalizeNumbers` preference).
    normalize_numbers: Flag { form: "normalize_numbers", header: "x-normalize-numbers" },
    /// Dictionary corrections (default on).
    apply_corrections: Flag { form: "apply_corrections", header: "x-apply-corrections" },
    /// Voice activity detection before the engine (default: the `voiceActivityDetection`
    /// preference, on): only the speech is transcribed, and audio without speech is `""`.
    vad: Flag { form: "vad", header: "x-vad" },
    /// `word` and/or `segment`: with `verbose_json`, `word` adds the timed `words`.
    timestamp_granularities: Granularities { form: "timestamp_granularities", header: "x-timestamp-granularities" },
    /// Answer with server-sent events, a segment at a time, as they are decoded.
    stream: Flag { form: "stream", header: "x-stream" },
    /// A prompt action (id or name) run on the text: the answer's `text` is its output.
    prompt_action: Text { form: "prompt_action", header: "x-prompt-action" },
}

impl TranscribeOptions {
    /// Applies a multipart form field; fields that name no option are ignored.
    pub fn set_form_field(&mut self, name: &str, value: &str) -> Result<(), FieldError> {
        match FIELDS.iter().find(|f| f.form == name) {
            Some(field) => self.set_named(field.name, value, false).map(drop),
            None => self.set_named(name, value, true).map(drop),
        }
    }

    /// Every set option as `(header, value)` pairs, in table order: the raw-body route's
    /// headers (a list joined with commas).
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        let fields = self.form_fields();
        FIELDS
            .iter()
            .filter_map(|field| {
                let values: Vec<&str> = fields
                    .iter()
                    .filter(|(form, _)| *form == field.form)
                    .map(|(_, value)| value.as_str())
                    .collect();
                (!values.is_empty()).then(|| (field.header, values.join(",")))
            })
            .collect()
    }

    /// The options carried by `X-*` headers; `header` looks one up by its lower-case name and
    /// gives None when absent, `Err` when its value is not plain text.
    pub fn from_headers<'a>(
        header: impl Fn(&str) -> Option<Result<&'a str, ()>>,
    ) -> Result<TranscribeOptions, FieldError> {
        let mut options = TranscribeOptions::default();
        for field in FIELDS {
            if let Some(value) = header(field.header) {
                let value = value.map_err(|()| {
                    FieldError(format!("The '{}' header must be plain text.", field.header))
                })?;
                options.set_named(field.name, value, true)?;
            }
        }
        Ok(options)
    }

    /// Whether the answer carries timed words (`word` granularity with `verbose_json`).
    pub fn wants_words(&self) -> bool {
        self.response_format == ResponseFormat::VerboseJson
            && self.timestamp_granularities.contains(&Granularity::Word)
    }

    /// Checks combinations that need no engine: language and hints together.
    pub fn validate(&self) -> Result<(), FieldError> {
        if self.language.is_some() && !self.language_hints.is_empty() {
            return Err(FieldError(
                "Use either 'language' or 'language_hint', not both".into(),
            ));
        }
        Ok(())
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

/// The Transcription object both transcription routes answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transcription {
    /// The transcript, or with a prompt action, the action's output.
    pub text: String,
    /// With a prompt action: what the engine heard (after corrections).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcribed_text: Option<String>,
    /// With a prompt action that failed: why (one sentence); `text` is then the transcript.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_action_error: Option<String>,
    /// With a prompt action: the seconds its chat call took (not in `processing_time`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action_processing_time: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    pub duration: f64,
    pub processing_time: f64,
    pub engine: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// With `response_format=verbose_json` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segments: Option<Vec<TranscriptionSegment>>,
    /// With `response_format=verbose_json` and the `word` timestamp granularity only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub words: Option<Vec<TranscriptionWord>>,
}

/// One word and when it was said (seconds from the start of the audio).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TranscriptionWord {
    pub word: String,
    pub start: f64,
    pub end: f64,
}

/// One timed stretch of text (seconds from the start of the audio).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TranscriptionSegment {
    pub start: f64,
    pub end: f64,
    pub text: String,
}

#[cfg(test)]
mod tests {
    use super::Task;
    use super::*;

    #[test]
    fn hints_split_on_commas_and_drop_empties() {
        assert_eq!(split_hints(" de, fr ,,es,"), vec!["de", "fr", "es"]);
    }

    #[test]
    fn bad_values_are_refused_with_the_option_named() {
        let mut o = TranscribeOptions::default();
        let err = o.set_form_field("task", "summarize").unwrap_err();
        assert!(err.0.contains("'task'"), "{err}");
        let err = o
            .set_form_field("apply_corrections", "perhaps")
            .unwrap_err();
        assert!(err.0.contains("apply_corrections"));
        o.set_form_field("normalize_numbers", "OFF").unwrap();
        assert_eq!(o.normalize_numbers, Some(false));
        o.set_form_field("response_format", "srt").unwrap();
        assert_eq!(o.response_format, ResponseFormat::Json);
        o.set_form_field("language", "en").unwrap();
        o.set_form_field("language_hint", "de").unwrap();
        assert!(o.validate().is_err());
    }

    #[test]
    fn every_carrier_reads_the_same_table() {
        let mut form = TranscribeOptions::default();
        form.set_form_field("language_hint", "de").unwrap();
        form.set_form_field("language_hints", "fr, es").unwrap();
        form.set_form_field("task", "Translate").unwrap();
        form.set_form_field("prompt", " Notes ").unwrap();
        form.set_form_field("apply_corrections", "no").unwrap();
        form.set_form_field("vad", "off").unwrap();
        form.set_form_field("not_an_option", "x").unwrap();
        let headers = [
            ("x-language-hints", "de,fr , es"),
            ("x-task", "translate"),
            ("x-prompt", " Notes "),
            ("x-apply-corrections", "0"),
            ("x-vad", "false"),
        ];
        let from_headers = TranscribeOptions::from_headers(|name| {
            headers
                .iter()
                .find(|(h, _)| *h == name)
                .map(|(_, v)| Ok(*v))
        })
        .unwrap();
        let json: LocalFileRequest = serde_json::from_value(serde_json::json!({
            "path": "/a.wav", "language_hints": ["de", " fr", "es"], "task": "translate",
            "prompt": " Notes ", "apply_corrections": false, "vad": false
        }))
        .unwrap();
        let from_json = json.options().unwrap();
        assert_eq!(form, from_headers);
        assert_eq!(form, from_json);
        assert_eq!(form.task, Some(Task::Translate));
        assert_eq!(form.language_hints, vec!["de", "fr", "es"]);
        assert_eq!(form.vad, Some(false));
        // And the client writes back what the server reads.
        let mut again = TranscribeOptions::default();
        for (name, value) in form.form_fields() {
            again.set_form_field(name, &value).unwrap();
        }
        assert_eq!(again, form);
    }

    #[test]
    fn the_client_writes_headers_and_bodies_the_server_reads_back() {
        let mut options = TranscribeOptions {
            language_hints: vec!["de".into(), "fr".into()],
            task: Some(Task::Translate),
            response_format: ResponseFormat::VerboseJson,
            prompt: Some("Notes, minutes".into()),
            apply_corrections: Some(false),
            ..TranscribeOptions::default()
        };
        let headers = options.headers();
        assert!(headers.contains(&("x-language-hints", "de,fr".into())));
        let read = TranscribeOptions::from_headers(|name| {
            headers
                .iter()
                .find(|(h, _)| *h == name)
                .map(|(_, v)| Ok(v.as_str()))
        })
        .unwrap();
        assert_eq!(read, options);
        options.prompt = None;
        let body = serde_json::to_value(LocalFileRequest::new("/a.wav".into(), &options)).unwrap();
        assert_eq!(
            body,
            serde_json::json!({"path": "/a.wav", "language_hints": ["de", "fr"],
                "task": "translate", "response_format": "verbose_json", "apply_corrections": false})
        );
        let read: LocalFileRequest = serde_json::from_value(body).unwrap();
        assert_eq!(read.options().unwrap(), options);
    }

    #[test]
    fn a_header_that_is_not_text_is_named() {
        let err = TranscribeOptions::from_headers(|name| (name == "x-model").then_some(Err(())))
            .unwrap_err();
        assert_eq!(err.0, "The 'x-model' header must be plain text.");
    }

    #[test]
    fn every_field_has_a_distinct_header_and_form_name() {
        for (i, a) in FIELDS.iter().enumerate() {
            assert!(a.header.starts_with("x-"), "{}", a.header);
            for b in &FIELDS[i + 1..] {
                assert!(a.header != b.header && a.form != b.form && a.name != b.name);
            }
        }
    }
}
