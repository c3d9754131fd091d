//! Printers: `--json` prints the server's JSON with keys sorted; plain output (tables and
//! lines) is for people.

use serde::Serialize;
use serde_json::{Map, Value};

/// Writes `bytes` to standard output as they are (a completion script, a manual page); a
/// reader that went away (`verbatim man | head`) is not an error.
pub fn print_raw(bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Prints `value` as pretty JSON with object keys sorted at every level.
pub fn print_json<T: Serialize + ?Sized>(value: &T) {
    let value = serde_json::to_value(value).unwrap_or_default();
    println!(
        "{}",
        serde_json::to_string_pretty(&sorted(&value)).unwrap_or_default()
    );
}

/// Prints a server's answer: as sorted JSON with `--json`, else as `for_people` writes it.
pub fn print_answer<T: Serialize>(json: bool, answer: &T, for_people: impl FnOnce(&T)) {
    if json {
        print_json(answer);
    } else {
        for_people(answer);
    }
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

/// [`print_table`], or the line `empty` when there are no rows.
pub fn print_table_or<const N: usize>(empty: &str, header: &[&str; N], rows: &[[String; N]]) {
    if rows.is_empty() {
        println!("{empty}");
    } else {
        print_table(header, rows);
    }
}

/// Left-aligned columns separated by two spaces.
pub fn print_table<const N: usize>(header: &[&str; N], rows: &[[String; N]]) {
    let mut widths: [usize; N] = header.map(str::len);
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        println!("{}", padded.join("  ").trim_end());
    };
    line(header.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
}

/// `yes` or `no`, for a table cell.
pub fn yes_no(flag: bool) -> String {
    if flag { "yes" } else { "no" }.to_string()
}

/// An optional text that is set and not empty.
pub fn non_empty(text: &Option<String>) -> Option<&str> {
    text.as_deref().filter(|text| !text.is_empty())
}

/// One line `<prefix><text>` for each text that is set and not empty.
pub fn print_lines(lines: &[(&str, &Option<String>)]) {
    for (prefix, text) in lines {
        if let Some(text) = non_empty(text) {
            println!("{prefix}{text}");
        }
    }
}
