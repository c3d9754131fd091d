//! `verbatim rules [list]` and `verbatim rules toggle RULE` (its name, id or the start of its id).

use super::super::output::{print_answer, print_table_or, yes_no};
use super::super::{CliError, Client, Globals};
use super::pick::{Candidate, pick};
use crate::wire::format_uuid;
use crate::wire::rules::{Rule, RuleList, Toggled};

#[derive(Debug, clap::Subcommand)]
pub enum RulesCommand {
    /// List the rules by priority (the default).
    List,
    /// Switch one rule on or off.
    Toggle {
        /// The rule: its name (any case), its id, or the start of its id (at least 4
        /// characters), as `verbatim rules` shows them.
        rule: String,
    },
}

pub fn run(globals: &Globals, command: Option<RulesCommand>) -> Result<(), CliError> {
    let client = Client::from_globals(globals)?;
    match command.unwrap_or(RulesCommand::List) {
        RulesCommand::List => {
            let answer: RuleList = client.get("/v1/rules")?;
            print_answer(globals.json, &answer, |answer| list(&answer.rules));
        }
        RulesCommand::Toggle { rule } => {
            let rules: RuleList = client.get("/v1/rules")?;
            let listed: Vec<Candidate> = rules
                .rules
                .iter()
                .map(|r| Candidate::named(r.id, &r.name))
                .collect();
            let id = pick(&rule, &listed, "rule", "verbatim rules")?;
            let answer: Toggled =
                client.send_query("PUT", "/v1/rules/toggle", &[("id", format_uuid(&id))])?;
            print_answer(globals.json, &answer, |answer| {
                let state = if answer.is_enabled {
                    "enabled"
                } else {
                    "disabled"
                };
                println!("Rule '{}' is now {state}.", answer.name);
            });
        }
    }
    Ok(())
}

fn list(rules: &[Rule]) {
    let rows: Vec<[String; 7]> = rules
        .iter()
        .map(|r| {
            [
                format_uuid(&r.id),
                r.name.clone(),
                yes_no(r.is_enabled),
                r.priority.to_string(),
                r.bundle_identifiers.join(", "),
                r.url_patterns.join(", "),
                language(r),
            ]
        })
        .collect();
    print_table_or(
        "No rules.",
        &[
            "ID", "NAME", "ENABLED", "PRIORITY", "APPS", "URLS", "LANGUAGE",
        ],
        &rows,
    );
}

/// `exact fr`, `multiple de, en`, `auto`, `inherit`, with `-> en` for a translation target.
fn language(rule: &Rule) -> String {
    let mut text = rule.language_mode.clone();
    match text.as_str() {
        "exact" => {
            text = format!(
                "{text} {}",
                rule.input_language.as_deref().unwrap_or_default()
            )
        }
        "multiple" => text = format!("{text} {}", rule.language_hints.join(", ")),
        _ => {}
    }
    if let Some(target) = rule
        .translation_target_language
        .as_deref()
        .filter(|t| !t.is_empty())
    {
        text = format!("{text} -> {target}");
    }
    text.trim().to_string()
}
