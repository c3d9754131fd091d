//! `verbatim dictionary terms [list|add|remove|replace]` and
//! `verbatim dictionary corrections [list|set|remove]`.

use serde_json::{Value, json};

use super::super::output::{print_json, print_table, text_field};
use super::super::{CliError, Client, Globals};

#[derive(Debug, clap::Subcommand)]
pub enum DictionaryCommand {
    /// Recognition terms: words the engine should expect.
    Terms {
        #[command(subcommand)]
        command: Option<TermsCommand>,
    },
    /// Corrections: text rewritten after transcription.
    Corrections {
        #[command(subcommand)]
        command: Option<CorrectionsCommand>,
    },
}

#[derive(Debug, clap::Subcommand)]
pub enum TermsCommand {
    /// List the enabled terms (the default).
    List,
    /// Add terms (a term already there in another case or accent takes the new spelling).
    Add {
        #[arg(required = true)]
        terms: Vec<String>,
    },
    /// Remove one term (matched in any case or accent).
    Remove { term: String },
    /// Make these terms the whole list (no terms: remove them all).
    Replace { terms: Vec<String> },
}

#[derive(Debug, clap::Subcommand)]
pub enum CorrectionsCommand {
    /// List the corrections (the default).
    List,
    /// Add a correction or change the one for ORIGINAL (matched in any case).
    Set {
        original: String,
        replacement: String,
        /// Only rewrite ORIGINAL when its case matches exactly.
        #[arg(long)]
        case_sensitive: bool,
    },
    /// Remove the correction for ORIGINAL (matched in any case).
    Remove { original: String },
}

const TERMS: &str = "/v1/dictionary/terms";
const CORRECTIONS: &str = "/v1/dictionary/corrections";

pub fn run(globals: &Globals, command: DictionaryCommand) -> Result<(), CliError> {
    let client = Client::from_globals(globals)?;
    match command {
        DictionaryCommand::Terms { command } => terms(globals, &client, command),
        DictionaryCommand::Corrections { command } => corrections(globals, &client, command),
    }
}

fn terms(
    globals: &Globals,
    client: &Client,
    command: Option<TermsCommand>,
) -> Result<(), CliError> {
    let answer = match command.unwrap_or(TermsCommand::List) {
        TermsCommand::List => client.get(TERMS)?,
        TermsCommand::Add { terms } => {
            client.send_json("PUT", TERMS, &json!({"terms": terms, "replace": false}))?
        }
        TermsCommand::Replace { terms } => {
            client.send_json("PUT", TERMS, &json!({"terms": terms, "replace": true}))?
        }
        TermsCommand::Remove { term } => {
            let answer = client.send_json("DELETE", TERMS, &json!({ "term": term }))?;
            return print_deleted(globals, &answer, &format!("the term '{term}'"), "terms");
        }
    };
    if globals.json {
        print_json(&answer);
        return Ok(());
    }
    let entries = list(&answer, "term_entries");
    if entries.is_empty() {
        println!("No recognition terms.");
        return Ok(());
    }
    for entry in &entries {
        match entry.get("ctc_min_similarity").and_then(Value::as_f64) {
            Some(similarity) => println!(
                "{}  (minimum similarity {similarity})",
                text_field(entry, "term")
            ),
            None => println!("{}", text_field(entry, "term")),
        }
    }
    println!("{} in all.", plural(entries.len(), "term"));
    Ok(())
}

fn corrections(
    globals: &Globals,
    client: &Client,
    command: Option<CorrectionsCommand>,
) -> Result<(), CliError> {
    let answer = match command.unwrap_or(CorrectionsCommand::List) {
        CorrectionsCommand::List => client.get(CORRECTIONS)?,
        CorrectionsCommand::Set {
            original,
            replacement,
            case_sensitive,
        } => client.send_json(
            "PUT",
            CORRECTIONS,
            &json!({"original": original, "replacement": replacement, "caseSensitive": case_sensitive}),
        )?,
        CorrectionsCommand::Remove { original } => {
            let answer = client.send_json("DELETE", CORRECTIONS, &json!({ "original": original }))?;
            let what = format!("the correction for '{original}'");
            return print_deleted(globals, &answer, &what, "corrections");
        }
    };
    if globals.json {
        print_json(&answer);
        return Ok(());
    }
    let entries = list(&answer, "corrections");
    if entries.is_empty() {
        println!("No corrections.");
        return Ok(());
    }
    let rows: Vec<[String; 3]> = entries
        .iter()
        .map(|c| {
            let sensitive = c.get("caseSensitive").and_then(Value::as_bool) == Some(true);
            [
                text_field(c, "original"),
                text_field(c, "replacement"),
                if sensitive { "yes" } else { "no" }.to_string(),
            ]
        })
        .collect();
    print_table(&["ORIGINAL", "REPLACEMENT", "CASE-SENSITIVE"], &rows);
    Ok(())
}

fn print_deleted(
    globals: &Globals,
    answer: &Value,
    what: &str,
    noun: &str,
) -> Result<(), CliError> {
    if globals.json {
        print_json(answer);
        return Ok(());
    }
    let count = answer.get("count").and_then(Value::as_u64).unwrap_or(0) as usize;
    let left = plural(count, &noun[..noun.len() - 1]);
    if answer.get("deleted").and_then(Value::as_bool) == Some(true) {
        println!("Removed {what}; {left} left.");
    } else {
        println!("There is no {}; {left}.", what.trim_start_matches("the "));
    }
    Ok(())
}

fn list(answer: &Value, key: &str) -> Vec<Value> {
    answer
        .get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}
