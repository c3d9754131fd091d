//! `verbatim actions list|add|remove|run`: prompt actions through the server, run on a text by
//! the chat provider it is set up with (`chatBaseUrl`, `chatModel`; see docs/prompt-actions.md).

use std::io::{IsTerminal, Read};

use super::super::output::{print_answer, print_table_or, yes_no};
use super::super::{CliError, Client, Globals};
use super::pick::{Candidate, pick};
use crate::wire::format_uuid;
use crate::wire::prompt_actions::{Action, ActionList, ActionRun, Deleted, PutAction, RunAction};

#[derive(Debug, clap::Subcommand)]
pub enum ActionsCommand {
    /// List the prompt actions (the default).
    List,
    /// Add a prompt action, or change the one of that name.
    Add {
        /// The action's name, e.g. "Fix grammar".
        name: String,
        /// What the chat model is told to do with the text, e.g. "Fix the grammar. Answer
        /// with the text only."
        prompt: String,
        /// Add it switched off.
        #[arg(long)]
        disabled: bool,
    },
    /// Remove a prompt action.
    Remove {
        /// The action: its name (any case), its id, or the start of its id.
        action: String,
    },
    /// Run a prompt action on a text and print what the chat model made of it.
    Run {
        /// The action: its name (any case) or its id.
        action: String,
        /// The text; `-` or nothing reads it from standard input.
        text: Option<String>,
    },
}

pub fn run(globals: &Globals, command: Option<ActionsCommand>) -> Result<(), CliError> {
    let client = Client::from_globals(globals)?;
    match command.unwrap_or(ActionsCommand::List) {
        ActionsCommand::List => {
            let answer: ActionList = client.get("/v1/prompt-actions")?;
            print_answer(globals.json, &answer, |answer| list(&answer.actions));
        }
        ActionsCommand::Add {
            name,
            prompt,
            disabled,
        } => {
            let listed: ActionList = client.get("/v1/prompt-actions")?;
            let same = listed
                .actions
                .iter()
                .find(|a| a.name.trim().to_lowercase() == name.trim().to_lowercase());
            let body = PutAction {
                id: same.map(|a| format_uuid(&a.id)),
                name,
                prompt,
                enabled: Some(!disabled),
            };
            let answer: Action = client.send("PUT", "/v1/prompt-actions", &body)?;
            print_answer(globals.json, &answer, |answer| {
                let done = if same.is_some() { "changed" } else { "added" };
                println!(
                    "Prompt action '{}' {done} ({}).",
                    answer.name,
                    format_uuid(&answer.id)
                );
            });
        }
        ActionsCommand::Remove { action } => {
            let listed: ActionList = client.get("/v1/prompt-actions")?;
            let candidates: Vec<Candidate> = listed
                .actions
                .iter()
                .map(|a| Candidate::named(a.id, &a.name))
                .collect();
            let id = pick(&action, &candidates, "prompt action", "verbatim actions")?;
            let answer: Deleted =
                client.send_query("DELETE", "/v1/prompt-actions", &[("id", format_uuid(&id))])?;
            print_answer(globals.json, &answer, |_| {
                println!("Prompt action removed.")
            });
        }
        ActionsCommand::Run { action, text } => {
            let text = match text.as_deref() {
                None | Some("-") => read_text()?,
                Some(text) => text.to_string(),
            };
            let (id, name) = match crate::wire::parse_uuid(&action) {
                Some(_) => (Some(action), None),
                None => (None, Some(action)),
            };
            let answer: ActionRun = client.send(
                "POST",
                "/v1/prompt-actions/run",
                &RunAction { id, name, text },
            )?;
            print_answer(globals.json, &answer, |answer| println!("{}", answer.text));
        }
    }
    Ok(())
}

fn list(actions: &[Action]) {
    let rows: Vec<[String; 4]> = actions
        .iter()
        .map(|a| {
            [
                format_uuid(&a.id),
                a.name.clone(),
                yes_no(a.enabled),
                a.prompt.split_whitespace().collect::<Vec<_>>().join(" "),
            ]
        })
        .collect();
    print_table_or(
        "No prompt actions: `verbatim actions add NAME PROMPT` adds one.",
        &["ID", "NAME", "ENABLED", "PROMPT"],
        &rows,
    );
}

/// The text on standard input; a terminal is not read (nobody would know it waits).
fn read_text() -> Result<String, CliError> {
    if std::io::stdin().is_terminal() {
        return Err(CliError::Local(
            "No text given. Usage: verbatim actions run ACTION TEXT (or pipe it in: `... | verbatim actions run ACTION -`)".into(),
        ));
    }
    let mut text = String::new();
    std::io::stdin()
        .take(4 * 1024 * 1024)
        .read_to_string(&mut text)
        .map_err(|e| CliError::Local(format!("cannot read standard input as text: {e}")))?;
    if text.trim().is_empty() {
        return Err(CliError::Local("No text on standard input".into()));
    }
    Ok(text)
}
