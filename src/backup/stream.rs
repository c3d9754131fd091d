//! Serde visitors that read a JSON document as it streams, with bounded memory: a value skipped
//! without being kept, an object handed over field by field, an array of objects read item by
//! item, and values cut down to what the backup readers look at.
//!
//! Each piece asks for `deserialize_any`, so serde_json's nesting limit counts every level as it
//! does when a whole `Value` is parsed, and malformed input fails at the same place.
//!
//! Every value kept is counted against the document's [`budget`](super::budget).

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, Error, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::budget::keep;
use super::reader::{Obj, Problem, Read};

/// Visitor methods for booleans, numbers and strings, all answering `$answer`.
macro_rules! scalars_answer {
    ($answer:expr) => {
        fn visit_bool<E: Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($answer)
        }
        fn visit_i64<E: Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($answer)
        }
        fn visit_u64<E: Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($answer)
        }
        fn visit_f64<E: Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($answer)
        }
        fn visit_str<E: Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($answer)
        }
    };
}

/// Consumes one value, whatever it is, keeping nothing.
pub struct Skip;

impl<'de> DeserializeSeed<'de> for Skip {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Skip {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    scalars_answer!(());

    fn visit_unit<E: Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Skip)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key_seed(Skip)?.is_some() {
            map.next_value_seed(Skip)?;
        }
        Ok(())
    }
}

/// A value cut down to what the backup readers look at. In a field ([`Pruned::Field`]):
/// booleans, numbers, strings and `null` as they are; an array's strings up to its first other
/// element, kept as `null` (the readers take arrays of strings and stop at the first that is
/// not one); an object as `{}` (no reader looks inside one nested in a field). As an array
/// element ([`Pruned::Element`]): a string, or `null` for anything else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pruned {
    Field,
    Element,
}

impl Pruned {
    fn scalar(self, value: Value) -> Value {
        match self {
            Pruned::Field => value,
            Pruned::Element => Value::Null,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Pruned {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Pruned {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: Error>(self, v: bool) -> Result<Value, E> {
        keep()?;
        Ok(self.scalar(Value::Bool(v)))
    }

    fn visit_i64<E: Error>(self, v: i64) -> Result<Value, E> {
        keep()?;
        Ok(self.scalar(Value::from(v)))
    }

    fn visit_u64<E: Error>(self, v: u64) -> Result<Value, E> {
        keep()?;
        Ok(self.scalar(Value::from(v)))
    }

    fn visit_f64<E: Error>(self, v: f64) -> Result<Value, E> {
        keep()?;
        Ok(self.scalar(Value::from(v)))
    }

    fn visit_str<E: Error>(self, v: &str) -> Result<Value, E> {
        keep()?;
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: Error>(self, v: String) -> Result<Value, E> {
        keep()?;
        Ok(Value::String(v))
    }

    fn visit_unit<E: Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        if self == Pruned::Element {
            Skip.visit_seq(seq)?;
            return Ok(Value::Null);
        }
        let mut strings = Vec::new();
        while let Some(element) = seq.next_element_seed(Pruned::Element)? {
            let last = !element.is_string();
            strings.push(element);
            if last {
                while seq.next_element_seed(Skip)?.is_some() {}
                break;
            }
        }
        Ok(Value::Array(strings))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Value, A::Error> {
        Skip.visit_map(map)?;
        Ok(self.scalar(Value::Object(Map::new())))
    }
}

/// Receives an object's fields one at a time, each value still to be read from `map`.
pub trait Fields<'de> {
    type Output;

    fn field<A: MapAccess<'de>>(&mut self, key: String, map: &mut A) -> Result<(), A::Error>;

    fn finish(self) -> Self::Output;
}

/// What an [`ObjectSeed`] found.
pub enum Object<T> {
    Fields(T),
    Null,
    /// Any other value, consumed.
    Other,
}

impl Object<Map<String, Value>> {
    /// The value the readers see: the object, `null`, or for anything else an empty array,
    /// which stands for "neither an object nor absent".
    pub fn into_value(self) -> Value {
        match self {
            Object::Fields(map) => Value::Object(map),
            Object::Null => Value::Null,
            Object::Other => Value::Array(Vec::new()),
        }
    }
}

/// An object handed field by field to `F`; any other value is consumed and reported.
pub struct ObjectSeed<F>(pub F);

impl<'de, F: Fields<'de>> DeserializeSeed<'de> for ObjectSeed<F> {
    type Value = Object<F::Output>;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de, F: Fields<'de>> Visitor<'de> for ObjectSeed<F> {
    type Value = Object<F::Output>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    scalars_answer!(Object::Other);

    fn visit_unit<E: Error>(self) -> Result<Self::Value, E> {
        Ok(Object::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Skip.visit_seq(seq)?;
        Ok(Object::Other)
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Self::Value, A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            self.0.field(key, &mut map)?;
        }
        Ok(Object::Fields(self.0.finish()))
    }
}

/// An object's fields, each value [`Pruned::Field`]; with [`PrunedFields::only`], the other
/// keys are skipped. A repeated key keeps its last value, as in a parsed `Value`.
pub struct PrunedFields {
    keep: fn(&str) -> bool,
    map: Map<String, Value>,
}

impl PrunedFields {
    pub fn all() -> PrunedFields {
        PrunedFields::only(|_| true)
    }

    pub fn only(keep: fn(&str) -> bool) -> PrunedFields {
        PrunedFields {
            keep,
            map: Map::new(),
        }
    }
}

impl<'de> Fields<'de> for PrunedFields {
    type Output = Map<String, Value>;

    fn field<A: MapAccess<'de>>(&mut self, key: String, map: &mut A) -> Result<(), A::Error> {
        if (self.keep)(&key) {
            let value = map.next_value_seed(Pruned::Field)?;
            self.map.insert(key, value);
        } else {
            map.next_value_seed(Skip)?;
        }
        Ok(())
    }

    fn finish(self) -> Map<String, Value> {
        self.map
    }
}

/// An object whose fields are skipped: only whether it is one matters.
struct SkippedFields;

impl<'de> Fields<'de> for SkippedFields {
    type Output = ();

    fn field<A: MapAccess<'de>>(&mut self, _: String, map: &mut A) -> Result<(), A::Error> {
        map.next_value_seed(Skip)
    }

    fn finish(self) {}
}

/// The array of objects at top-level `key`, each element read by `read_one` as soon as it has
/// arrived, so that one element at a time is held besides the items. The answer is the one a
/// check of the whole array gives: `null` is empty, an element that is not an object is named
/// before any item's own problem (every element is checked), then the first item problem.
pub struct Items<T> {
    key: &'static str,
    read_one: fn(&Obj) -> Read<T>,
}

impl<T> Items<T> {
    pub fn new(key: &'static str, read_one: fn(&Obj) -> Read<T>) -> Items<T> {
        Items { key, read_one }
    }

    fn problem(&self, path: String, what: &str) -> Problem {
        Problem {
            path,
            what: what.into(),
        }
    }
}

impl<'de, T> DeserializeSeed<'de> for Items<T> {
    type Value = Read<Vec<T>>;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Read<Vec<T>>, D::Error> {
        let key = self.key;
        let not_an_array = self.problem(key.into(), "expected an array.");
        Ok(de.deserialize_any(self)?.unwrap_or(Err(not_an_array)))
    }
}

impl<'de, T> Visitor<'de> for Items<T> {
    /// None when the value is not an array (nor null).
    type Value = Option<Read<Vec<T>>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    scalars_answer!(None);

    fn visit_unit<E: Error>(self) -> Result<Self::Value, E> {
        Ok(Some(Ok(Vec::new())))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Skip.visit_map(map)?;
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        let mut item_problem: Option<Problem> = None;
        for index in 0usize.. {
            let path = format!("{}[{index}]", self.key);
            let is_object = if item_problem.is_some() {
                match seq.next_element_seed(ObjectSeed(SkippedFields))? {
                    None => break,
                    Some(element) => matches!(element, Object::Fields(())),
                }
            } else {
                match seq.next_element_seed(ObjectSeed(PrunedFields::all()))? {
                    None => break,
                    Some(Object::Fields(map)) => {
                        match (self.read_one)(&Obj::at(path.clone(), &map)) {
                            Ok(item) => items.push(item),
                            Err(problem) => {
                                item_problem = Some(problem);
                                items = Vec::new();
                            }
                        }
                        true
                    }
                    Some(_) => false,
                }
            };
            if !is_object {
                while seq.next_element_seed(Skip)?.is_some() {}
                return Ok(Some(Err(self.problem(path, "expected an object."))));
            }
        }
        Ok(Some(item_problem.map_or(Ok(items), Err)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pruned(json: &str) -> Value {
        let mut de = serde_json::Deserializer::from_str(json);
        Pruned::Field.deserialize(&mut de).unwrap()
    }

    #[test]
    fn pruned_values_keep_what_the_readers_look_at() {
        assert_eq!(pruned(r#""text""#), json!("text"));
        assert_eq!(pruned("-3"), json!(-3));
        assert_eq!(pruned("2.5"), json!(2.5));
        assert_eq!(pruned("null"), Value::Null);
        assert_eq!(pruned(r#"{"a":[1,2,{"b":3}]}"#), json!({}));
        assert_eq!(pruned(r#"["a","b",3,"c",[1],{}]"#), json!(["a", "b", null]));
        assert_eq!(pruned(r#"[["a"],"b"]"#), json!([null]));
    }

    #[test]
    fn skipping_keeps_the_nesting_limit_of_a_parsed_value() {
        let deep = "[".repeat(200);
        let skipped = Skip
            .deserialize(&mut serde_json::Deserializer::from_str(&deep))
            .unwrap_err();
        let parsed = serde_json::from_str::<Value>(&deep).unwrap_err();
        assert_eq!(skipped.to_string(), parsed.to_string());
    }

    fn read_name(o: &Obj) -> Read<String> {
        o.text("name")
    }

    fn items(json: &str) -> Read<Vec<String>> {
        let mut de = serde_json::Deserializer::from_str(json);
        let read = Items::new("things", read_name)
            .deserialize(&mut de)
            .unwrap();
        de.end().unwrap();
        read
    }

    #[test]
    fn items_are_read_one_by_one_with_the_problems_of_the_whole_array() {
        assert_eq!(
            items(r#"[{"name":"a"},{"name":"b","x":[1]}]"#),
            Ok(vec!["a".to_string(), "b".to_string()])
        );
        assert_eq!(items("null"), Ok(vec![]));
        let problem = |r: Read<Vec<String>>| r.unwrap_err().to_string();
        assert_eq!(
            problem(items(r#"{"name":"a"}"#)),
            "things: expected an array."
        );
        assert_eq!(
            problem(items(r#"[{"name":"a"},{},{"name":""}]"#)),
            "things[1].name: required field is missing."
        );
        // A non-object element anywhere comes first: every element is checked to be an object.
        assert_eq!(
            problem(items(r#"[{}, {"name":"a"}, 3, {}]"#)),
            "things[2]: expected an object."
        );
    }
}
