//! `verbatim models [list]`: the models every loaded engine offers.

use serde_json::Value;

use super::super::output::print_json;
use super::super::{CliError, Client, Globals};

#[derive(Debug, Default, clap::Subcommand)]
pub enum ModelsCommand {
    /// List models with their status (the default).
    #[default]
    List,
}

pub fn run(globals: &Globals, command: Option<ModelsCommand>) -> Result<(), CliError> {
    match command.unwrap_or_default() {
        ModelsCommand::List => list(globals),
    }
}

fn list(globals: &Globals) -> Result<(), CliError> {
    let answer = Client::from_globals(globals)?.get("/v1/models")?;
    if globals.json {
        print_json(&answer);
        return Ok(());
    }
    let models = answer
        .get("models")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if models.is_empty() {
        println!("No models available.");
        return Ok(());
    }
    let text = |m: &Value, key: &str| m.get(key).and_then(Value::as_str).unwrap_or("").to_string();
    let rows: Vec<[String; 6]> = models
        .iter()
        .map(|m| {
            let selected = if m.get("selected").and_then(Value::as_bool) == Some(true) {
                "*"
            } else {
                ""
            };
            [
                format!("{selected}{}", text(m, "id")),
                text(m, "engine"),
                text(m, "name"),
                text(m, "size_description"),
                m.get("language_count")
                    .and_then(Value::as_u64)
                    .map(|n| n.to_string())
                    .unwrap_or_default(),
                text(m, "status"),
            ]
        })
        .collect();
    print_table(
        &["ID", "ENGINE", "NAME", "SIZE", "LANGUAGES", "STATUS"],
        &rows,
    );
    Ok(())
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
