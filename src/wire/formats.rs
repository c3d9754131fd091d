//! How values are written on the wire: UUIDs, timestamps and the contract's boolean words.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serializer;
use uuid::Uuid;

/// A UUID as the API writes it: upper-case, hyphenated.
pub fn format_uuid(id: &Uuid) -> String {
    id.hyphenated()
        .encode_upper(&mut Uuid::encode_buffer())
        .to_string()
}

/// A UUID as the API accepts it: any case.
pub fn parse_uuid(text: &str) -> Option<Uuid> {
    Uuid::try_parse(text.trim()).ok()
}

/// Serializes a UUID upper-case (`#[serde(serialize_with = "wire::upper_uuid")]`).
pub fn upper_uuid<S: Serializer>(id: &Uuid, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&format_uuid(id))
}

/// An optional UUID upper-case (pair with `skip_serializing_if = "Option::is_none"`).
pub fn upper_uuid_opt<S: Serializer>(id: &Option<Uuid>, serializer: S) -> Result<S::Ok, S::Error> {
    match id {
        Some(id) => serializer.serialize_str(&format_uuid(id)),
        None => serializer.serialize_none(),
    }
}

/// A timestamp as the API writes it: ISO 8601 UTC without fractional seconds.
pub fn format_timestamp(at: &DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Accepts any RFC 3339 timestamp (offset or `Z`, with or without fractions), as UTC.
pub fn parse_timestamp(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text.trim())
        .ok()
        .map(|at| at.with_timezone(&Utc))
}

/// Serializes a timestamp in the API's format.
pub fn timestamp<S: Serializer>(at: &DateTime<Utc>, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&format_timestamp(at))
}

/// Parses the contract's boolean words (`1/true/yes/on`, `0/false/no/off`, any case).
pub fn parse_bool_word(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bool_words_follow_the_contract() {
        for yes in ["1", "true", "YES", "On"] {
            assert_eq!(parse_bool_word(yes), Some(true), "{yes}");
        }
        for no in ["0", "False", "no", "OFF"] {
            assert_eq!(parse_bool_word(no), Some(false), "{no}");
        }
        for bad in ["", "2", "enabled", "t"] {
            assert_eq!(parse_bool_word(bad), None, "{bad}");
        }
    }

    #[test]
    fn uuids_are_written_upper_case_and_read_in_any_case() {
        let id = parse_uuid("0f8fad5b-d9cb-469f-a165-70867728950e").unwrap();
        assert_eq!(format_uuid(&id), "0F8FAD5B-D9CB-469F-A165-70867728950E");
        assert_eq!(parse_uuid(&format_uuid(&id)), Some(id));
        assert_eq!(parse_uuid("not-a-uuid"), None);
    }

    #[test]
    fn timestamps_are_utc_without_fractions() {
        let at = parse_timestamp("2026-04-13T12:15:00.750+02:00").unwrap();
        assert_eq!(format_timestamp(&at), "2026-04-13T10:15:00Z");
        assert_eq!(parse_timestamp("13/04/2026"), None);
    }
}
