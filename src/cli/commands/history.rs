//! `verbatim history [list] [--query Q] [--limit N] [--offset N]` and `history delete ID` (the
//! entry's id or the start of it).

use super::super::output::{print_answer, print_json, print_table};
use super::super::{CliError, Client, Globals};
use super::pick::{Candidate, pick, whole_id};
use crate::store::preferences;
use crate::wire::history::{Deleted, Page};
use crate::wire::{format_timestamp, format_uuid};

#[derive(Debug, clap::Subcommand)]
pub enum HistoryCommand {
    /// List entries, newest first (the default).
    List(ListArgs),
    /// Delete one entry by its id.
    Delete {
        /// The entry's id, or the start of it (at least 4 characters), as `verbatim history`
        /// shows it.
        id: String,
    },
}

#[derive(Debug, Default, Clone, clap::Args)]
pub struct ListArgs {
    /// Only entries whose text, raw text or app name contain these words (any case or accent).
    #[arg(long, short)]
    pub query: Option<String>,
    /// Entries per page (default 50, at most 200).
    #[arg(long, allow_negative_numbers = true)]
    pub limit: Option<i64>,
    /// Entries to skip (default 0).
    #[arg(long, allow_negative_numbers = true)]
    pub offset: Option<i64>,
}

pub fn run(
    globals: &Globals,
    command: Option<HistoryCommand>,
    list_args: ListArgs,
) -> Result<(), CliError> {
    let client = Client::from_globals(globals)?;
    match command {
        None => list(globals, &client, &list_args),
        Some(HistoryCommand::List(args)) => list(globals, &client, &args),
        Some(HistoryCommand::Delete { id }) => {
            let id = match whole_id(&id) {
                Some(id) => id,
                None => pick_entry(&client, &id)?,
            };
            let id = format_uuid(&id);
            let answer: Deleted =
                client.send_query("DELETE", "/v1/history", &[("id", id.clone())])?;
            print_answer(globals.json, &answer, |_| {
                println!("Deleted history entry {id}.")
            });
            Ok(())
        }
    }
}

/// Entries read per request while looking for the one an id's start means (the API's most).
const PAGE: usize = 200;

/// The entry whose id starts with `typed`, looked for over every page of history.
fn pick_entry(client: &Client, typed: &str) -> Result<uuid::Uuid, CliError> {
    let mut entries = Vec::new();
    loop {
        let query = [
            ("limit", PAGE.to_string()),
            ("offset", entries.len().to_string()),
        ];
        let page: Page = client.get_with_query("/v1/history", &query)?;
        let done =
            page.entries.len() < PAGE || entries.len() + page.entries.len() >= page.total as usize;
        entries.extend(page.entries);
        if done {
            break;
        }
    }
    let listed: Vec<Candidate> = entries
        .iter()
        .map(|e| Candidate {
            id: e.id,
            name: None,
            shown: format!(
                "{}  {}",
                format_uuid(&e.id),
                e.text.chars().take(50).collect::<String>()
            ),
        })
        .collect();
    pick(typed, &listed, "history entry", "verbatim history")
}

/// Where transcriptions through the API are not saved (the default), the note that says so and
/// how to change it: otherwise a history that stays empty after many transcriptions puzzles.
fn api_saving_note(globals: &Globals) -> Option<String> {
    let store = super::local_store::open_store(globals).ok()?;
    let pref = &preferences::SAVE_API_TRANSCRIPTIONS_TO_HISTORY;
    if store.pref_bool(pref).ok()? {
        return None;
    }
    Some(format!(
        "Note: transcriptions through the API are not saved to history ({} is off); \
         `verbatim config set {} true` saves them.",
        pref.key, pref.key
    ))
}

fn list(globals: &Globals, client: &Client, args: &ListArgs) -> Result<(), CliError> {
    let mut query = Vec::new();
    if let Some(q) = &args.query {
        query.push(("q", q.clone()));
    }
    if let Some(limit) = args.limit {
        query.push(("limit", limit.to_string()));
    }
    if let Some(offset) = args.offset {
        query.push(("offset", offset.to_string()));
    }
    let page: Page = client.get_with_query("/v1/history", &query)?;
    if globals.json {
        print_json(&page);
        return Ok(());
    }
    let Page {
        entries,
        total,
        offset,
        ..
    } = page;
    let offset = offset.max(0) as u64;
    if let Some(note) = api_saving_note(globals) {
        eprintln!("{note}");
    }
    if entries.is_empty() {
        match (&args.query, total) {
            (_, 0) if args.query.is_some() => println!("No history entries match."),
            (_, 0) => println!("No history entries."),
            _ => println!("No entries on this page ({total} in all)."),
        }
        return Ok(());
    }
    let rows: Vec<[String; 5]> = entries
        .iter()
        .map(|e| {
            [
                format_uuid(&e.id),
                format_timestamp(&e.timestamp),
                e.app_name.clone().unwrap_or_default(),
                e.words_count.to_string(),
                preview(&e.text, 60),
            ]
        })
        .collect();
    print_table(&["ID", "TIME", "APP", "WORDS", "TEXT"], &rows);
    let first = offset + 1;
    let last = offset + entries.len() as u64;
    println!("Showing {first}-{last} of {total}.");
    Ok(())
}

/// One line of at most `max` characters.
fn preview(text: &str, max: usize) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= max {
        return line;
    }
    let cut: String = line.chars().take(max - 1).collect();
    format!("{cut}…")
}
