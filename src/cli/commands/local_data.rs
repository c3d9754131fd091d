//! `verbatim snippets`, `verbatim profiles` and `verbatim prompt-actions`: what a settings
//! backup brings that the API does not list, listed and deleted in the local data folder (like
//! `config`; a running server reads them on use).

use serde_json::json;
use uuid::Uuid;

use super::super::output::{print_json, print_table_or};
use super::super::{CliError, Globals};
use super::local_store::open_store;
use crate::store::Store;
use crate::wire::{format_uuid, parse_uuid};

/// What to do with one kind of local data.
#[derive(Debug, Default, clap::Subcommand)]
pub enum LocalDataCommand {
    /// List them (the default).
    #[default]
    List,
    /// Delete one: a snippet by its trigger, a profile or prompt action by its id.
    Delete {
        /// The snippet's trigger, or the profile's or prompt action's id (see the list).
        key: String,
    },
}

/// The kinds of local data these commands cover.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    Snippets,
    Profiles,
    PromptActions,
}

pub fn run(
    globals: &Globals,
    kind: Kind,
    command: Option<LocalDataCommand>,
) -> Result<(), CliError> {
    let store = open_store(globals)?;
    match command.unwrap_or_default() {
        LocalDataCommand::List => list(globals, &store, kind),
        LocalDataCommand::Delete { key } => delete(globals, &store, kind, &key),
    }
}

fn list(globals: &Globals, store: &Store, kind: Kind) -> Result<(), CliError> {
    let on_off = |enabled: bool| if enabled { "on" } else { "off" }.to_owned();
    match kind {
        Kind::Snippets => {
            let snippets = store.snippets().map_err(CliError::local)?;
            if globals.json {
                let items: Vec<_> = snippets
                    .iter()
                    .map(|s| json!({"trigger": s.trigger, "text": s.text, "enabled": s.enabled}))
                    .collect();
                print_json(&json!({ "snippets": items }));
                return Ok(());
            }
            let rows: Vec<[String; 3]> = snippets
                .iter()
                .map(|s| [s.trigger.clone(), on_off(s.enabled), preview(&s.text)])
                .collect();
            print_table_or("No snippets.", &["TRIGGER", "ENABLED", "TEXT"], &rows);
        }
        Kind::Profiles => {
            let profiles = store.profiles().map_err(CliError::local)?;
            if globals.json {
                let items: Vec<_> = profiles
                    .iter()
                    .map(|p| {
                        json!({
                            "id": format_uuid(&p.id),
                            "name": p.name,
                            "enabled": p.enabled,
                            "priority": p.priority,
                            "bundle_identifiers": p.bundle_identifiers,
                            "url_patterns": p.url_patterns,
                            "input_language": p.input_language,
                            "engine": p.extra.engine,
                            "model": p.extra.model,
                        })
                    })
                    .collect();
                print_json(&json!({ "profiles": items }));
                return Ok(());
            }
            let rows: Vec<[String; 5]> = profiles
                .iter()
                .map(|p| {
                    let engine = match (&p.extra.engine, &p.extra.model) {
                        (Some(e), Some(m)) => format!("{e} ({m})"),
                        (Some(e), None) => e.clone(),
                        (None, Some(m)) => m.clone(),
                        (None, None) => String::new(),
                    };
                    [
                        format_uuid(&p.id),
                        p.name.clone(),
                        on_off(p.enabled),
                        engine,
                        p.bundle_identifiers.join(", "),
                    ]
                })
                .collect();
            print_table_or(
                "No profiles.",
                &["ID", "NAME", "ENABLED", "ENGINE", "APPS"],
                &rows,
            );
        }
        Kind::PromptActions => {
            let actions = store.prompt_actions().map_err(CliError::local)?;
            if globals.json {
                let items: Vec<_> = actions
                    .iter()
                    .map(|a| {
                        json!({
                            "id": format_uuid(&a.id),
                            "name": a.name,
                            "prompt": a.prompt,
                            "enabled": a.enabled,
                        })
                    })
                    .collect();
                print_json(&json!({ "prompt_actions": items }));
                return Ok(());
            }
            let rows: Vec<[String; 4]> = actions
                .iter()
                .map(|a| {
                    [
                        format_uuid(&a.id),
                        a.name.clone(),
                        on_off(a.enabled),
                        preview(&a.prompt),
                    ]
                })
                .collect();
            print_table_or(
                "No prompt actions.",
                &["ID", "NAME", "ENABLED", "PROMPT"],
                &rows,
            );
        }
    }
    Ok(())
}

fn delete(globals: &Globals, store: &Store, kind: Kind, key: &str) -> Result<(), CliError> {
    let id = || -> Result<Uuid, CliError> {
        parse_uuid(key).ok_or_else(|| {
            CliError::Local(format!(
                "'{}' is not an id (a UUID, as the list shows)",
                crate::wire::echo(key)
            ))
        })
    };
    let (deleted, what) = match kind {
        Kind::Snippets => (store.delete_snippet(key), "snippet"),
        Kind::Profiles => (store.delete_profile(&id()?), "profile"),
        Kind::PromptActions => (store.delete_prompt_action(&id()?), "prompt action"),
    };
    let deleted = deleted.map_err(CliError::local)?;
    if globals.json {
        print_json(&json!({ "deleted": deleted }));
    } else if deleted {
        println!("Deleted the {what} {key}");
    } else {
        return Err(CliError::Local(format!(
            "No {what} {}",
            crate::wire::echo(key)
        )));
    }
    Ok(())
}

/// The first line of `text`, cut to 60 characters.
fn preview(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    }
}
