//! `verbatim config hotkey [SLOT [SHORTCUT | --clear]]`: the global hotkeys in the local store.
//! A running server re-reads them within a second or two.

use serde_json::{Map, Value};

use super::super::output::{print_json, print_table};
use super::super::{CliError, Globals};
use crate::hotkeys::shortcut::Shortcut;
use crate::hotkeys::slots::{self, SLOTS};
use crate::store::{Hotkey, Store};

/// What `config hotkey` was asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request<'a> {
    List,
    Show(&'a str),
    Bind(&'a str, &'a str),
    Clear(&'a str),
}

pub fn run(globals: &Globals, store: &Store, request: Request<'_>) -> Result<(), CliError> {
    match request {
        Request::List => list(globals, store),
        Request::Show(slot) => {
            let slot = slots::find(slot).map_err(CliError::local)?;
            let shortcut = bound(store, slot.name)?;
            print_binding(globals, slot.name, shortcut.as_deref());
            Ok(())
        }
        Request::Bind(slot, shortcut) => {
            let slot = slots::find(slot).map_err(CliError::local)?;
            let parsed: Shortcut = shortcut.parse().map_err(CliError::local)?;
            let hotkey = Hotkey {
                slot: slot.name.into(),
                shortcut: parsed.to_string(),
            };
            let same = |other: &str| other.parse::<Shortcut>() == Ok(parsed);
            if let Some(other) = store.bind_hotkey(&hotkey, same).map_err(CliError::local)? {
                return Err(CliError::Local(format!(
                    "{parsed} is already the hotkey of {other}; free it first with `verbatim config hotkey {other} --clear`"
                )));
            }
            print_binding(globals, slot.name, Some(&hotkey.shortcut));
            Ok(())
        }
        Request::Clear(slot) => {
            // A slot this version does not know (from a backup) may still be cleared.
            let name = slots::find(slot).map(|s| s.name.to_string());
            let known = name.is_ok();
            let name = name.unwrap_or_else(|_| slot.trim().to_string());
            let removed = store.unbind_hotkey(&name).map_err(CliError::local)?;
            if !removed && !known {
                return Err(CliError::local(slots::find(slot).unwrap_err()));
            }
            print_binding(globals, &name, None);
            Ok(())
        }
    }
}

fn bound(store: &Store, slot: &str) -> Result<Option<String>, CliError> {
    let hotkeys = store.hotkeys().map_err(CliError::local)?;
    Ok(hotkeys
        .into_iter()
        .find(|h| h.slot == slot)
        .map(|h| h.shortcut))
}

/// `{slot: shortcut or null}` with `--json`, else `slot = Shortcut` or `slot is not bound`.
fn print_binding(globals: &Globals, slot: &str, shortcut: Option<&str>) {
    if globals.json {
        let mut map = Map::new();
        map.insert(slot.into(), shortcut.map_or(Value::Null, Value::from));
        print_json(&Value::Object(map));
    } else {
        match shortcut {
            Some(shortcut) => println!("{slot} = {shortcut}"),
            None => println!("{slot} is not bound"),
        }
    }
}

/// Every known slot (bound or not) and any other slot the store holds.
fn list(globals: &Globals, store: &Store) -> Result<(), CliError> {
    let stored = store.hotkeys().map_err(CliError::local)?;
    let shortcut_of = |slot: &str| {
        stored
            .iter()
            .find(|h| h.slot == slot)
            .map(|h| h.shortcut.clone())
    };
    let mut rows: Vec<(String, Option<String>, &str)> = SLOTS
        .iter()
        .map(|slot| {
            (
                slot.name.to_string(),
                shortcut_of(slot.name),
                slot.description,
            )
        })
        .collect();
    for hotkey in &stored {
        if slots::find(&hotkey.slot).is_err() {
            let note = "(not a slot this version knows; ignored)";
            rows.push((hotkey.slot.clone(), Some(hotkey.shortcut.clone()), note));
        }
    }
    if globals.json {
        let map: Map<String, Value> = rows
            .into_iter()
            .map(|(slot, shortcut, _)| (slot, shortcut.map_or(Value::Null, Value::from)))
            .collect();
        print_json(&Value::Object(map));
    } else {
        let rows: Vec<[String; 3]> = rows
            .into_iter()
            .map(|(slot, shortcut, what)| {
                [slot, shortcut.unwrap_or_else(|| "-".into()), what.into()]
            })
            .collect();
        print_table(&["SLOT", "SHORTCUT", "ACTION"], &rows);
    }
    Ok(())
}
