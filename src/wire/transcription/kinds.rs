//! The kinds of transcription option: how each is read from text (form fields, headers) and
//! from JSON, and written back for the client.

use super::Task;
use super::{FieldError, ResponseFormat, split_hints};
use crate::wire::parse_bool_word;

/// Whether a value was taken (or why it was refused).
pub type Applied = Result<(), FieldError>;

/// How a kind of field is read from text (form fields, headers) and JSON, and written back.
pub trait FieldKind {
    /// The option's value in [`super::TranscribeOptions`].
    type Value;
    /// Its type in the local-file JSON body.
    type Json;
    /// Applies a text value; `list`: a comma-separated list (a header, or a plural form name).
    fn set_text(slot: &mut Self::Value, name: &str, value: &str, list: bool) -> Applied;
    /// Applies the value of the JSON key.
    fn set_json(slot: &mut Self::Value, name: &str, value: Self::Json) -> Applied;
    /// The value as form fields (none when unset).
    fn to_text(value: &Self::Value) -> Vec<String>;
    /// The value as its JSON key carries it (unset: `None` or empty, and left out).
    fn to_json(value: &Self::Value) -> Self::Json;
}

/// A JSON value the local-file body leaves out: `None`, or an empty list.
pub trait Unset {
    fn is_unset(&self) -> bool;
}

impl<T> Unset for Option<T> {
    fn is_unset(&self) -> bool {
        self.is_none()
    }
}

impl<T> Unset for Vec<T> {
    fn is_unset(&self) -> bool {
        self.is_empty()
    }
}

pub(super) fn is_unset(value: &impl Unset) -> bool {
    value.is_unset()
}

/// Free text; `Text` is trimmed, `Prompt` kept as written. Empty (or blank) means unset.
pub struct Words<const TRIM: bool>;
/// A plain text value, trimmed; empty means unset.
pub type Text = Words<true>;
/// Free text kept as written; blank means unset.
pub type Prompt = Words<false>;
/// Language codes: a form field per code, or a comma-separated list (items trimmed, empties dropped).
pub struct Hints;
/// `transcribe` or `translate`.
pub struct TaskName;
/// `json` or `verbose_json`.
pub struct Format;
/// The contract's boolean words in text, a boolean in JSON.
pub struct Flag;
/// Timestamp granularities (`word`, `segment`): a form field each, or a comma-separated list.
pub struct Granularities;

/// How finely an answer is timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Granularity {
    Segment,
    Word,
}

impl Granularity {
    pub fn name(self) -> &'static str {
        match self {
            Granularity::Segment => "segment",
            Granularity::Word => "word",
        }
    }
}

fn trimmed(value: &str) -> Option<String> {
    Some(value.trim().to_string()).filter(|v| !v.is_empty())
}

/// A kind given as one text value, whose JSON key is an optional string read like the text.
pub trait OneText {
    type Value;
    /// Applies the text.
    fn set(slot: &mut Self::Value, name: &str, value: &str) -> Applied;
    /// The value as text; None when unset.
    fn get(value: &Self::Value) -> Option<String>;
}

impl<K: OneText> FieldKind for K {
    type Value = K::Value;
    type Json = Option<String>;
    fn set_text(slot: &mut K::Value, name: &str, value: &str, _: bool) -> Applied {
        K::set(slot, name, value)
    }
    fn set_json(slot: &mut K::Value, name: &str, value: Self::Json) -> Applied {
        value.map_or(Ok(()), |v| K::set(slot, name, &v))
    }
    fn to_text(value: &K::Value) -> Vec<String> {
        K::get(value).into_iter().collect()
    }
    fn to_json(value: &K::Value) -> Self::Json {
        K::get(value)
    }
}

impl<const TRIM: bool> OneText for Words<TRIM> {
    type Value = Option<String>;
    fn set(slot: &mut Self::Value, _: &str, value: &str) -> Applied {
        *slot = if TRIM {
            trimmed(value)
        } else {
            Some(value.to_string()).filter(|p| !p.trim().is_empty())
        };
        Ok(())
    }
    fn get(value: &Self::Value) -> Option<String> {
        value.clone()
    }
}

impl OneText for TaskName {
    type Value = Option<Task>;
    fn set(slot: &mut Self::Value, _: &str, value: &str) -> Applied {
        *slot = Some(match value.trim().to_ascii_lowercase().as_str() {
            "transcribe" => Task::Transcribe,
            "translate" => Task::Translate,
            _ => {
                return Err(FieldError(format!(
                    "Invalid 'task' value '{}': use 'transcribe' or 'translate'.",
                    crate::wire::echo(value.trim())
                )));
            }
        });
        Ok(())
    }
    fn get(value: &Self::Value) -> Option<String> {
        value.map(|task| match task {
            Task::Transcribe => "transcribe".to_string(),
            Task::Translate => "translate".to_string(),
        })
    }
}

impl OneText for Format {
    type Value = ResponseFormat;
    fn set(slot: &mut Self::Value, _: &str, value: &str) -> Applied {
        *slot = if value.trim().eq_ignore_ascii_case("verbose_json") {
            ResponseFormat::VerboseJson
        } else {
            ResponseFormat::Json
        };
        Ok(())
    }
    fn get(value: &Self::Value) -> Option<String> {
        match value {
            ResponseFormat::Json => None,
            ResponseFormat::VerboseJson => Some("verbose_json".into()),
        }
    }
}

impl FieldKind for Hints {
    type Value = Vec<String>;
    type Json = Vec<String>;
    fn set_text(slot: &mut Self::Value, _: &str, value: &str, list: bool) -> Applied {
        if list {
            slot.extend(split_hints(value));
        } else {
            slot.extend(trimmed(value));
        }
        Ok(())
    }
    fn set_json(slot: &mut Self::Value, name: &str, value: Self::Json) -> Applied {
        for hint in value {
            Self::set_text(slot, name, &hint, false)?;
        }
        Ok(())
    }
    fn to_text(value: &Self::Value) -> Vec<String> {
        value.clone()
    }
    fn to_json(value: &Self::Value) -> Self::Json {
        value.clone()
    }
}

impl FieldKind for Flag {
    type Value = Option<bool>;
    type Json = Option<bool>;
    fn set_text(slot: &mut Self::Value, name: &str, value: &str, _: bool) -> Applied {
        let flag = parse_bool_word(value).ok_or_else(|| {
            FieldError(format!(
                "Invalid '{name}' value '{}': use true or false.",
                crate::wire::echo(value.trim())
            ))
        })?;
        *slot = Some(flag);
        Ok(())
    }
    fn set_json(slot: &mut Self::Value, _: &str, value: Self::Json) -> Applied {
        if value.is_some() {
            *slot = value;
        }
        Ok(())
    }
    fn to_text(value: &Self::Value) -> Vec<String> {
        value.iter().map(bool::to_string).collect()
    }
    fn to_json(value: &Self::Value) -> Self::Json {
        *value
    }
}

impl FieldKind for Granularities {
    type Value = Vec<Granularity>;
    type Json = Vec<String>;
    fn set_text(slot: &mut Self::Value, name: &str, value: &str, _: bool) -> Applied {
        for item in split_hints(value) {
            let granularity = match item.to_ascii_lowercase().as_str() {
                "segment" => Granularity::Segment,
                "word" => Granularity::Word,
                _ => {
                    return Err(FieldError(format!(
                        "Invalid '{name}' value '{}': use 'word' or 'segment'.",
                        crate::wire::echo(&item)
                    )));
                }
            };
            if !slot.contains(&granularity) {
                slot.push(granularity);
            }
        }
        Ok(())
    }
    fn set_json(slot: &mut Self::Value, name: &str, value: Self::Json) -> Applied {
        for item in value {
            Self::set_text(slot, name, &item, true)?;
        }
        Ok(())
    }
    fn to_text(value: &Self::Value) -> Vec<String> {
        value.iter().map(|g| g.name().to_string()).collect()
    }
    fn to_json(value: &Self::Value) -> Self::Json {
        Self::to_text(value)
    }
}
