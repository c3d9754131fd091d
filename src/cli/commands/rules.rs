//! `verbatim rules [list]` and `verbatim rules toggle ID`.

use serde_json::Value;

use super::super::output::{print_json, print_table, text_field};
use super::super::{CliError, Client, Globals};

#[derive(Debug, clap::Subcommand)]
pub enum RulesCommand {
    /// List the rules by priority (the default).
    List,
    /// Switch one rule on or off.
    Toggle { id: String },
}

pub fn run(globals: &Globals, command: Option<RulesCommand>) -> Result<(), CliError> {
    let client = Client::from_globals(globals)?;
    match command.unwrap_or(RulesCommand::List) {
        RulesCommand::List => list(globals, &client),
        RulesCommand::Toggle { id } => {
            let answer = client.send_query("PUT", "/v1/rules/toggle", &[("id", id)])?;
            if globals.json {
                print_json(&answer);
            } else {
                let state = if answer.get("is_enabled").and_then(Value::as_bool) == Some(true) {
                    "enabled"
                } else {
                    "disabled"
                };
                println!("Rule '{}' is now {state}.", text_field(&answer, "name"));
            }
            Ok(())
        }
    }
}

fn list(globals: &Globals, client: &Client) -> Result<(), CliError> {
    let answer = client.get("/v1/rules")?;
    if globals.json {
        print_json(&answer);
        return Ok(());
    }
    let rules = answer
        .get("rules")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if rules.is_empty() {
        println!("No rules.");
        return Ok(());
    }
    let rows: Vec<[String; 7]> = rules
        .iter()
        .map(|r| {
            let enabled = r.get("is_enabled").and_then(Value::as_bool) == Some(true);
            [
                text_field(r, "id"),
                text_field(r, "name"),
                if enabled { "yes" } else { "no" }.to_string(),
                r.get("priority").map(Value::to_string).unwrap_or_default(),
                joined(r, "bundle_identifiers"),
                joined(r, "url_patterns"),
                language(r),
            ]
        })
        .collect();
    print_table(
        &[
            "ID", "NAME", "ENABLED", "PRIORITY", "APPS", "URLS", "LANGUAGE",
        ],
        &rows,
    );
    Ok(())
}

fn joined(rule: &Value, key: &str) -> String {
    rule.get(key)
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

/// `exact fr`, `multiple de, en`, `auto`, `inherit`, with `-> en` for a translation target.
fn language(rule: &Value) -> String {
    let mut text = text_field(rule, "language_mode");
    match text.as_str() {
        "exact" => text = format!("{text} {}", text_field(rule, "input_language")),
        "multiple" => text = format!("{text} {}", joined(rule, "language_hints")),
        _ => {}
    }
    let target = text_field(rule, "translation_target_language");
    if !target.is_empty() {
        text = format!("{text} -> {target}");
    }
    text.trim().to_string()
}
