//! `verbatim dictionary terms [list|add|remove|replace]` and
//! `verbatim dictionary corrections [list|set|remove]`.

use super::super::output::{print_answer, print_table_or, yes_no};
use super::super::{CliError, Client, Globals};
use crate::wire::dictionary::{
    Corrections, DeleteCorrection, DeleteTerm, Deleted, PutCorrection, PutTerms, Terms,
};

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
        /// The terms to add (quote a term of several words).
        #[arg(required = true)]
        terms: Vec<String>,
    },
    /// Remove one term (matched in any case or accent).
    Remove {
        /// The term to remove.
        term: String,
    },
    /// Make these terms the whole list (no terms: remove them all).
    Replace {
        /// The new list of terms (quote a term of several words).
        terms: Vec<String>,
    },
}

#[derive(Debug, clap::Subcommand)]
pub enum CorrectionsCommand {
    /// List the corrections (the default).
    List,
    /// Add a correction or change the one for ORIGINAL (matched in any case).
    Set {
        /// The text as the engine writes it.
        original: String,
        /// What to write instead.
        replacement: String,
        /// Only rewrite ORIGINAL when its case matches exactly.
        #[arg(long)]
        case_sensitive: bool,
    },
    /// Remove the correction for ORIGINAL (matched in any case).
    Remove {
        /// The text the correction rewrites.
        original: String,
    },
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

fn put_terms(terms: Vec<String>, replace: bool) -> PutTerms {
    PutTerms {
        terms: Some(terms),
        term_entries: None,
        replace: Some(replace),
    }
}

fn terms(
    globals: &Globals,
    client: &Client,
    command: Option<TermsCommand>,
) -> Result<(), CliError> {
    let answer: Terms = match command.unwrap_or(TermsCommand::List) {
        TermsCommand::List => client.get(TERMS)?,
        TermsCommand::Add { terms } => client.send("PUT", TERMS, &put_terms(terms, false))?,
        TermsCommand::Replace { terms } => client.send("PUT", TERMS, &put_terms(terms, true))?,
        TermsCommand::Remove { term } => {
            let answer = client.send("DELETE", TERMS, &DeleteTerm { term: term.clone() })?;
            return print_deleted(globals, &answer, &format!("the term '{term}'"), "term");
        }
    };
    print_answer(globals.json, &answer, |answer| {
        if answer.term_entries.is_empty() {
            println!("No recognition terms.");
            return;
        }
        for entry in &answer.term_entries {
            match entry.ctc_min_similarity {
                Some(similarity) => {
                    println!("{}  (minimum similarity {similarity})", entry.term)
                }
                None => println!("{}", entry.term),
            }
        }
        println!("{} in all.", plural(answer.term_entries.len(), "term"));
    });
    Ok(())
}

fn corrections(
    globals: &Globals,
    client: &Client,
    command: Option<CorrectionsCommand>,
) -> Result<(), CliError> {
    let answer: Corrections = match command.unwrap_or(CorrectionsCommand::List) {
        CorrectionsCommand::List => client.get(CORRECTIONS)?,
        CorrectionsCommand::Set {
            original,
            replacement,
            case_sensitive,
        } => {
            let body = PutCorrection {
                original,
                replacement,
                case_sensitive: Some(case_sensitive),
            };
            client.send("PUT", CORRECTIONS, &body)?
        }
        CorrectionsCommand::Remove { original } => {
            let body = DeleteCorrection {
                original: original.clone(),
            };
            let answer = client.send("DELETE", CORRECTIONS, &body)?;
            let what = format!("the correction for '{original}'");
            return print_deleted(globals, &answer, &what, "correction");
        }
    };
    print_answer(globals.json, &answer, |answer| {
        let rows: Vec<[String; 3]> = answer
            .corrections
            .iter()
            .map(|c| {
                [
                    c.original.clone(),
                    c.replacement.clone(),
                    yes_no(c.case_sensitive),
                ]
            })
            .collect();
        let header = ["ORIGINAL", "REPLACEMENT", "CASE-SENSITIVE"];
        print_table_or("No corrections.", &header, &rows);
    });
    Ok(())
}

fn print_deleted(
    globals: &Globals,
    answer: &Deleted,
    what: &str,
    noun: &str,
) -> Result<(), CliError> {
    print_answer(globals.json, answer, |answer| {
        let left = plural(answer.count, noun);
        if answer.deleted {
            println!("Removed {what}; {left} left.");
        } else {
            println!("There is no {}; {left}.", what.trim_start_matches("the "));
        }
    });
    Ok(())
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}
