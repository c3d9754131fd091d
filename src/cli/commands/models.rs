//! `verbatim models [list]`: the models every loaded engine offers.

use serde_json::Value;

use super::super::output::{print_json, print_table, text_field};
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
    let rows: Vec<[String; 6]> = models
        .iter()
        .map(|m| {
            let selected = if m.get("selected").and_then(Value::as_bool) == Some(true) {
                "*"
            } else {
                ""
            };
            [
                format!("{selected}{}", text_field(m, "id")),
                text_field(m, "engine"),
                text_field(m, "name"),
                text_field(m, "size_description"),
                m.get("language_count")
                    .and_then(Value::as_u64)
                    .map(|n| n.to_string())
                    .unwrap_or_default(),
                text_field(m, "status"),
            ]
        })
        .collect();
    print_table(
        &["ID", "ENGINE", "NAME", "SIZE", "LANGUAGES", "STATUS"],
        &rows,
    );
    Ok(())
}
