//! Printers: `--json` prints the server's JSON with keys sorted; plain output is for people.

use serde_json::{Map, Value};

/// Prints `value` as pretty JSON with object keys sorted at every level.
pub fn print_json(value: &Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(&sorted(value)).unwrap_or_default()
    );
}

/// A copy of `value` whose objects list their keys in sorted order.
pub fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for key in keys {
                out.insert(key.clone(), sorted(&map[key]));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}
