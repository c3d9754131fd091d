//! Reads a JSON document field by field and names the first problem by its path
//! (`workflows[3].priority: expected an integer.`).

use std::fmt;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::wire;

/// The first problem found in a document: where it is and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// `workflows[3].priority`; empty for the document itself.
    pub path: String,
    /// One sentence, ending with a period.
    pub what: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.what)
        } else {
            write!(f, "{}: {}", self.path, self.what)
        }
    }
}

pub type Read<T> = Result<T, Problem>;

/// A JSON object and where it sits in the document.
#[derive(Debug, Clone)]
pub struct Obj<'a> {
    path: String,
    map: &'a Map<String, Value>,
}

impl Problem {
    /// The document is not a JSON object.
    pub fn top_level_not_an_object() -> Problem {
        Problem {
            path: String::new(),
            what: "The top level must be a JSON object.".into(),
        }
    }
}

impl<'a> Obj<'a> {
    /// The object `map` found at `path` (`workflows[3]`; empty for the document).
    pub fn at(path: String, map: &'a Map<String, Value>) -> Obj<'a> {
        Obj { path, map }
    }

    /// The path of `key` in this object.
    pub fn path_of(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    /// A problem with the field `key`.
    pub fn problem(&self, key: &str, what: impl Into<String>) -> Problem {
        Problem {
            path: self.path_of(key),
            what: what.into(),
        }
    }

    /// The field's value; `null` counts as absent.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    fn required(&self, key: &str) -> Read<&'a Value> {
        self.get(key)
            .ok_or_else(|| self.problem(key, "required field is missing."))
    }

    /// Every field, for objects whose keys are data (preferences).
    pub fn fields(&self) -> impl Iterator<Item = (&'a String, &'a Value)> {
        self.map.iter()
    }

    pub fn string(&self, key: &str) -> Read<String> {
        as_string(self.required(key)?).ok_or_else(|| self.problem(key, "expected a string."))
    }

    /// A string that is not empty once trimmed (returned as given).
    pub fn text(&self, key: &str) -> Read<String> {
        let text = self.string(key)?;
        if text.trim().is_empty() {
            return Err(self.problem(key, "must not be empty."));
        }
        Ok(text)
    }

    pub fn opt_string(&self, key: &str) -> Read<Option<String>> {
        self.get(key)
            .map(|v| as_string(v).ok_or_else(|| self.problem(key, "expected a string.")))
            .transpose()
    }

    pub fn bool_or(&self, key: &str, default: bool) -> Read<bool> {
        match self.get(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(self.problem(key, "expected true or false.")),
        }
    }

    pub fn int_or(&self, key: &str, default: i64) -> Read<i64> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v
                .as_i64()
                .ok_or_else(|| self.problem(key, "expected an integer.")),
        }
    }

    pub fn opt_int(&self, key: &str) -> Read<Option<i64>> {
        self.get(key)
            .map(|v| {
                v.as_i64()
                    .ok_or_else(|| self.problem(key, "expected an integer."))
            })
            .transpose()
    }

    pub fn number(&self, key: &str) -> Read<f64> {
        self.required(key)?
            .as_f64()
            .ok_or_else(|| self.problem(key, "expected a number."))
    }

    pub fn opt_number(&self, key: &str) -> Read<Option<f64>> {
        self.get(key)
            .map(|v| {
                v.as_f64()
                    .ok_or_else(|| self.problem(key, "expected a number."))
            })
            .transpose()
    }

    pub fn uuid(&self, key: &str) -> Read<Uuid> {
        as_string(self.required(key)?)
            .and_then(|s| wire::parse_uuid(&s))
            .ok_or_else(|| self.problem(key, "expected a UUID."))
    }

    pub fn opt_uuid(&self, key: &str) -> Read<Option<Uuid>> {
        match self.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => as_string(value)
                .and_then(|s| wire::parse_uuid(&s))
                .map(Some)
                .ok_or_else(|| self.problem(key, "expected a UUID.")),
        }
    }

    pub fn timestamp(&self, key: &str) -> Read<DateTime<Utc>> {
        self.opt_timestamp(key)?
            .ok_or_else(|| self.problem(key, "required field is missing."))
    }

    pub fn opt_timestamp(&self, key: &str) -> Read<Option<DateTime<Utc>>> {
        self.get(key)
            .map(|v| {
                as_string(v)
                    .and_then(|s| wire::parse_timestamp(&s))
                    .ok_or_else(|| {
                        self.problem(
                            key,
                            "expected an ISO 8601 timestamp such as 2026-04-13T10:15:00Z.",
                        )
                    })
            })
            .transpose()
    }

    /// An array of strings; absent means empty.
    pub fn strings(&self, key: &str) -> Read<Vec<String>> {
        self.array(key)?
            .iter()
            .enumerate()
            .map(|(i, v)| {
                as_string(v).ok_or_else(|| Problem {
                    path: format!("{}[{i}]", self.path_of(key)),
                    what: "expected a string.".into(),
                })
            })
            .collect()
    }

    /// A nested object, if present.
    pub fn object(&self, key: &str) -> Read<Option<Obj<'a>>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Object(map)) => Ok(Some(Obj {
                path: self.path_of(key),
                map,
            })),
            Some(_) => Err(self.problem(key, "expected an object.")),
        }
    }

    fn array(&self, key: &str) -> Read<&'a [Value]> {
        match self.get(key) {
            None => Ok(&[]),
            Some(Value::Array(items)) => Ok(items),
            Some(_) => Err(self.problem(key, "expected an array.")),
        }
    }
}

fn as_string(value: &Value) -> Option<String> {
    value.as_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn problems_name_their_path() {
        let doc = json!({"workflows": [{}, {"priority": "high", "hints": ["a", 3]}]});
        let root = Obj::at(String::new(), doc.as_object().unwrap());
        let item = |i: usize| {
            let map = doc["workflows"][i].as_object().unwrap();
            Obj::at(format!("{}[{i}]", root.path_of("workflows")), map)
        };
        let items = [item(0), item(1)];
        let err = items[1].int_or("priority", 0).unwrap_err();
        assert_eq!(
            err.to_string(),
            "workflows[1].priority: expected an integer."
        );
        let err = items[1].strings("hints").unwrap_err();
        assert_eq!(err.to_string(), "workflows[1].hints[1]: expected a string.");
        let err = items[0].text("name").unwrap_err();
        assert_eq!(
            err.to_string(),
            "workflows[0].name: required field is missing."
        );
    }
}
