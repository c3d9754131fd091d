//! Shape assertions on JSON answers: typed fields (`name` required, `name?` optional), the
//! wire conventions (no `null`, timestamps, upper-case UUIDs) and the response headers every
//! answer carries.

use serde_json::Value;

use super::Step;
use super::context::Exchange;

/// The JSON type a field must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Str,
    Num,
    Int,
    Bool,
    Arr,
    Obj,
    /// A string UUID written upper-case.
    Uuid,
    /// A string timestamp `YYYY-MM-DDTHH:MM:SSZ`.
    Time,
}

impl Kind {
    fn accepts(self, value: &Value) -> bool {
        match self {
            Kind::Str => value.is_string(),
            Kind::Num => value.is_number(),
            Kind::Int => value.is_i64() || value.is_u64(),
            Kind::Bool => value.is_boolean(),
            Kind::Arr => value.is_array(),
            Kind::Obj => value.is_object(),
            Kind::Uuid => value.as_str().is_some_and(is_upper_uuid),
            Kind::Time => value.as_str().is_some_and(is_timestamp),
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Kind::Str => "a string",
            Kind::Num => "a number",
            Kind::Int => "an integer",
            Kind::Bool => "a boolean",
            Kind::Arr => "an array",
            Kind::Obj => "an object",
            Kind::Uuid => "an upper-case UUID",
            Kind::Time => "a timestamp like 2026-04-13T10:15:00Z",
        }
    }
}

/// Checks each `(name, kind)` of `spec` on the object `value` (`what` names it in failures).
/// A name ending in `?` is optional; a `null` counts as absent (`wire.no-null` judges nulls).
pub fn fields(ex: &Exchange, value: &Value, what: &str, spec: &[(&str, Kind)]) -> Step {
    ex.ensure(value.is_object(), format!("{what}: an object"), value)?;
    for &(name, kind) in spec {
        let (name, optional) = match name.strip_suffix('?') {
            Some(name) => (name, true),
            None => (name, false),
        };
        match value.get(name).filter(|v| !v.is_null()) {
            None if optional => {}
            None => {
                return Err(ex.fail(
                    format!("{what}: field `{name}` ({})", kind.describe()),
                    format!("no `{name}` in {}", abbreviate(value)),
                ));
            }
            Some(field) => ex.ensure(
                kind.accepts(field),
                format!("{what}: `{name}` is {}", kind.describe()),
                format!("`{name}`: {}", abbreviate(field)),
            )?,
        }
    }
    Ok(())
}

/// The path of the first `null` inside `value`, if any.
pub fn find_null(value: &Value, path: &str) -> Option<String> {
    match value {
        Value::Null => Some(if path.is_empty() {
            "$".into()
        } else {
            path.into()
        }),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| find_null(v, &format!("{path}[{i}]"))),
        Value::Object(map) => map.iter().find_map(|(k, v)| {
            let path = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            find_null(v, &path)
        }),
        _ => None,
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ`, a real date and time.
pub fn is_timestamp(text: &str) -> bool {
    text.len() == 20
        && text.ends_with('Z')
        && chrono::NaiveDateTime::parse_from_str(&text[..19], "%Y-%m-%dT%H:%M:%S").is_ok()
}

/// A UUID in its hyphenated form with no lower-case letter.
pub fn is_upper_uuid(text: &str) -> bool {
    uuid::Uuid::try_parse(text).is_ok()
        && text.len() == 36
        && !text.chars().any(|c| c.is_ascii_lowercase())
}

/// A JSON value, shortened for a report line.
pub fn abbreviate(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 300 {
        format!("{}...", text.chars().take(300).collect::<String>())
    } else {
        text
    }
}

/// A random upper-case UUID the server has never seen.
pub fn fresh_uuid() -> String {
    uuid::Uuid::new_v4().to_string().to_uppercase()
}

/// Eight random lower-case letters, to mark what the kit writes.
pub fn marker() -> String {
    uuid::Uuid::new_v4()
        .simple()
        .to_string()
        .chars()
        .filter(char::is_ascii_alphabetic)
        .chain("kitmarks".chars())
        .take(8)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_and_uuids() {
        assert!(is_timestamp("2026-04-13T10:15:00Z"));
        assert!(!is_timestamp("2026-04-13T10:15:00.5Z"));
        assert!(!is_timestamp("2026-13-13T10:15:00Z"));
        assert!(is_upper_uuid("0F8FAD5B-D9CB-469F-A165-70867728950E"));
        assert!(!is_upper_uuid("0f8fad5b-d9cb-469f-a165-70867728950e"));
        assert!(!is_upper_uuid("0F8FAD5BD9CB469FA16570867728950E"));
    }

    #[test]
    fn nulls_are_found_with_their_path() {
        let value = serde_json::json!({"a": [1, {"b": null}]});
        assert_eq!(find_null(&value, "").as_deref(), Some("a[1].b"));
        assert_eq!(find_null(&serde_json::json!({"a": 1}), ""), None);
    }
}
