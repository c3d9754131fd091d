//! `verbatim history [list] [--query Q] [--limit N] [--offset N]` and `history delete ID`.

use serde_json::Value;

use super::super::output::{print_json, print_table, text_field};
use super::super::{CliError, Client, Globals};

#[derive(Debug, clap::Subcommand)]
pub enum HistoryCommand {
    /// List entries, newest first (the default).
    List(ListArgs),
    /// Delete one entry by its id.
    Delete { id: String },
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
            let answer = client.send_query("DELETE", "/v1/history", &[("id", id.clone())])?;
            if globals.json {
                print_json(&answer);
            } else {
                println!("Deleted history entry {id}.");
            }
            Ok(())
        }
    }
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
    let answer = client.get_with_query("/v1/history", &query)?;
    if globals.json {
        print_json(&answer);
        return Ok(());
    }
    let entries = answer
        .get("entries")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let number = |key: &str| answer.get(key).and_then(Value::as_u64).unwrap_or(0);
    let (total, offset) = (number("total"), number("offset"));
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
                text_field(e, "id"),
                text_field(e, "timestamp"),
                text_field(e, "app_name"),
                e.get("words_count")
                    .and_then(Value::as_u64)
                    .map(|n| n.to_string())
                    .unwrap_or_default(),
                preview(&text_field(e, "text"), 60),
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
