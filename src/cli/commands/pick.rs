//! Picking one item by what a person types: a whole id, the start of one (as `git` takes a
//! commit's), or a name. The API takes whole UUIDs only; the CLI finds the one meant among the
//! items it lists, and says exactly what is missing when none or several match.

use uuid::Uuid;

use super::super::CliError;
use crate::wire::{format_uuid, parse_uuid};

/// An item that can be picked: its id and, where it has one, its name.
pub struct Candidate<'a> {
    pub id: Uuid,
    pub name: Option<&'a str>,
    /// How the item is shown when several match.
    pub shown: String,
}

impl<'a> Candidate<'a> {
    /// An item with a name, shown as its id and name.
    pub fn named(id: Uuid, name: &'a str) -> Candidate<'a> {
        Candidate {
            id,
            name: Some(name),
            shown: format!("{}  {name}", format_uuid(&id)),
        }
    }
}

/// The fewest characters of an id taken as its start.
pub const MIN_PREFIX: usize = 4;

/// `typed` as a whole id, when it is one.
pub fn whole_id(typed: &str) -> Option<Uuid> {
    parse_uuid(typed)
}

/// The id `typed` means among `candidates`: the item with that name (any case), or the one
/// whose id starts with it (any case, hyphens optional, at least [`MIN_PREFIX`] characters).
/// `what` names the items ("history entry"), `list` the command that lists them.
pub fn pick(
    typed: &str,
    candidates: &[Candidate],
    what: &str,
    list: &str,
) -> Result<Uuid, CliError> {
    let typed = typed.trim();
    if let Some(id) = whole_id(typed) {
        return Ok(id);
    }
    let named: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| c.name.is_some_and(|n| n.trim().eq_ignore_ascii_case(typed)))
        .collect();
    if let [one] = named.as_slice() {
        return Ok(one.id);
    }
    let prefix: String = typed.chars().filter(|c| *c != '-').collect();
    let by_id: Vec<&Candidate> =
        if prefix.len() >= MIN_PREFIX && prefix.chars().all(|c| c.is_ascii_hexdigit()) {
            candidates
                .iter()
                .filter(|c| {
                    format_uuid(&c.id)
                        .replace('-', "")
                        .starts_with(&prefix.to_ascii_uppercase())
                })
                .collect()
        } else {
            Vec::new()
        };
    let found = if named.is_empty() { by_id } else { named };
    match found.as_slice() {
        [one] => Ok(one.id),
        [] => {
            let named = candidates.iter().any(|c| c.name.is_some());
            Err(CliError::Local(nothing_matches(typed, what, list, named)))
        }
        several => Err(CliError::Local(format!(
            "'{typed}' matches {} {what}s; give more of the id:\n{}",
            several.len(),
            several
                .iter()
                .map(|c| format!("  {}", c.shown))
                .collect::<Vec<_>>()
                .join("\n")
        ))),
    }
}

fn nothing_matches(typed: &str, what: &str, list: &str, named: bool) -> String {
    let hex: String = typed.chars().filter(|c| *c != '-').collect();
    if hex.len() < MIN_PREFIX && hex.chars().all(|c| c.is_ascii_hexdigit()) && !hex.is_empty() {
        return format!(
            "'{typed}' is too short: give at least {MIN_PREFIX} characters of the {what}'s id (`{list}` shows them)."
        );
    }
    let by = if named { "id or name" } else { "id" };
    format!("No {what} has the {by} '{typed}'. `{list}` shows them.")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidates() -> Vec<(Uuid, &'static str)> {
        [
            ("0F8FAD5B-D9CB-469F-A165-70867728950E", "Mail"),
            ("7C9E6679-7425-40DE-944B-E07FC1F90AE7", "Docs"),
            ("7C9E1111-7425-40DE-944B-E07FC1F90AE7", "Notes"),
        ]
        .iter()
        .map(|(id, name)| (Uuid::parse_str(id).unwrap(), *name))
        .collect()
    }

    fn pick_in(typed: &str) -> Result<Uuid, CliError> {
        let items = candidates();
        let listed: Vec<Candidate> = items
            .iter()
            .map(|(id, name)| Candidate {
                id: *id,
                name: Some(name),
                shown: format!("{} {name}", format_uuid(id)),
            })
            .collect();
        pick(typed, &listed, "rule", "verbatim rules")
    }

    #[test]
    fn a_whole_id_a_start_of_one_or_a_name_picks_the_item() {
        let [(mail, _), (docs, _), (notes, _)] = candidates()[..] else {
            panic!()
        };
        for typed in [
            "0F8FAD5B-D9CB-469F-A165-70867728950E",
            "0f8fad5b",
            "0F8F",
            "0f8fad5b-d9cb",
            "mail",
            " Mail ",
        ] {
            assert_eq!(pick_in(typed).unwrap(), mail, "{typed}");
        }
        assert_eq!(pick_in("7c9e6").unwrap(), docs);
        assert_eq!(pick_in("NOTES").unwrap(), notes);
    }

    #[test]
    fn none_or_several_say_what_is_needed() {
        let several = pick_in("7c9e").unwrap_err().to_string();
        assert!(
            several.starts_with("'7c9e' matches 2 rules; give more of the id:"),
            "{several}"
        );
        assert!(
            several.contains("Docs") && several.contains("Notes"),
            "{several}"
        );
        let short = pick_in("7c9").unwrap_err().to_string();
        assert!(short.contains("at least 4 characters"), "{short}");
        let unknown = pick_in("Calendar").unwrap_err().to_string();
        assert_eq!(
            unknown,
            "No rule has the id or name 'Calendar'. `verbatim rules` shows them."
        );
        assert!(!unknown.contains("query parameter"));
    }
}
