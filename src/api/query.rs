//! Query-string parameters: decoded pairs, the `id` parameter and clamped integers.

use axum::http::Uri;
use uuid::Uuid;

use super::ApiError;
use crate::wire;

/// The decoded `name=value` pairs of a request's query string.
pub struct Query(Vec<(String, String)>);

impl Query {
    pub fn of(uri: &Uri) -> Query {
        Query(
            form_urlencoded::parse(uri.query().unwrap_or("").as_bytes())
                .into_owned()
                .collect(),
        )
    }

    /// The value of `name`, if present; when the key repeats, the last value wins.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .rfind(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// The `id` parameter as a UUID (any case); 400 when missing or not a UUID.
    pub fn id(&self) -> Result<Uuid, ApiError> {
        self.get("id")
            .and_then(wire::parse_uuid)
            .ok_or_else(|| ApiError::BadRequest("Missing or invalid 'id' query parameter".into()))
    }

    /// An integer parameter clamped to `min..=max`; `default` when absent or empty, 400 when
    /// it is not a whole number. Numbers too large for 64 bits clamp like any other.
    pub fn clamped_int(
        &self,
        name: &str,
        default: i64,
        min: i64,
        max: i64,
    ) -> Result<i64, ApiError> {
        let Some(raw) = self.get(name).map(str::trim).filter(|v| !v.is_empty()) else {
            return Ok(default);
        };
        let digits = raw.strip_prefix(['-', '+']).unwrap_or(raw);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ApiError::BadRequest(format!(
                "Invalid '{name}' query parameter: expected a whole number"
            )));
        }
        let value = raw.parse::<i64>().unwrap_or(if raw.starts_with('-') {
            i64::MIN
        } else {
            i64::MAX
        });
        Ok(value.clamp(min, max))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(text: &str) -> Query {
        Query::of(&format!("/v1/history?{text}").parse().unwrap())
    }

    #[test]
    fn integers_are_clamped_and_checked() {
        let q = query("limit=500&offset=-3&big=99999999999999999999999&bad=1.5&empty=");
        assert_eq!(q.clamped_int("limit", 50, 0, 200).unwrap(), 200);
        assert_eq!(q.clamped_int("offset", 0, 0, i64::MAX).unwrap(), 0);
        assert_eq!(q.clamped_int("big", 0, 0, 200).unwrap(), 200);
        assert_eq!(q.clamped_int("missing", 50, 0, 200).unwrap(), 50);
        assert_eq!(q.clamped_int("empty", 50, 0, 200).unwrap(), 50);
        assert!(q.clamped_int("bad", 50, 0, 200).is_err());
    }

    #[test]
    fn a_repeated_key_takes_its_last_value() {
        let q = query("limit=5&limit=7&await_download=1&await_download=0");
        assert_eq!(q.clamped_int("limit", 50, 0, 200).unwrap(), 7);
        assert_eq!(q.get("await_download"), Some("0"));
    }

    #[test]
    fn ids_are_uuids_in_any_case() {
        let id = "0f8fad5b-d9cb-469f-a165-70867728950e";
        assert!(query(&format!("id={}", id.to_uppercase())).id().is_ok());
        assert!(query("id=42").id().is_err());
        assert!(query("other=1").id().is_err());
    }
}
