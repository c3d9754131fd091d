//! The backup document on the wire (camelCase keys): one writer and one reader per category,
//! side by side so the two cannot drift apart (rules and the other categories in submodules).

use serde_json::{Map, Value, json};

mod items;
mod rules;

use items::{
    read_dictionary, read_history, read_hotkey, read_plugin, read_prompt_action, read_snippet,
    write_dictionary, write_history, write_hotkey, write_plugin, write_prompt_action,
    write_snippet,
};
use rules::{read_rule, write_rule};

use super::reader::{Obj, Read};
use super::{Backup, SCHEMA_VERSION, UPDATE_CHANNELS};
use crate::store::preferences::{self, NOT_IN_BACKUP, PrefError};
use crate::wire::format_timestamp;

pub fn write(backup: &Backup) -> Value {
    let mut doc = Map::new();
    doc.insert("schemaVersion".into(), json!(SCHEMA_VERSION));
    if let Some(at) = &backup.exported_at {
        doc.insert("exportedAt".into(), json!(format_timestamp(at)));
    }
    if let Some(version) = &backup.app_version {
        doc.insert("appVersion".into(), json!(version));
    }
    let categories = [
        ("workflows", array(&backup.workflows, write_rule)),
        (
            "dictionaryEntries",
            array(&backup.dictionary, write_dictionary),
        ),
        ("snippets", array(&backup.snippets, write_snippet)),
        (
            "promptActions",
            array(&backup.prompt_actions, write_prompt_action),
        ),
        ("profiles", array(&backup.profiles, write_rule)),
        ("hotkeys", array(&backup.hotkeys, write_hotkey)),
        ("plugins", array(&backup.plugins, write_plugin)),
        ("history", array(&backup.history, write_history)),
    ];
    doc.extend(categories.map(|(key, items)| (key.to_string(), items)));
    if let Some(channel) = &backup.update_channel {
        doc.insert("updateChannel".into(), json!(channel));
    }
    let prefs: Map<String, Value> = backup
        .preferences
        .iter()
        .map(|(pref, value)| (pref.key.to_string(), value.to_json()))
        .collect();
    doc.insert("preferences".into(), Value::Object(prefs));
    Value::Object(doc)
}

pub fn read(value: &Value) -> Read<Backup> {
    let doc = Obj::root(value)?;
    match doc.get("schemaVersion") {
        None => return Err(doc.problem("schemaVersion", "required field is missing.")),
        Some(v) if v.as_i64() == Some(SCHEMA_VERSION) => {}
        Some(_) => {
            return Err(doc.problem(
                "schemaVersion",
                format!("expected {SCHEMA_VERSION}, the only schema version this Verbatim reads."),
            ));
        }
    }
    Ok(Backup {
        exported_at: doc.opt_timestamp("exportedAt")?,
        app_version: doc.opt_string("appVersion")?,
        workflows: each(&doc, "workflows", read_rule)?,
        dictionary: each(&doc, "dictionaryEntries", read_dictionary)?,
        snippets: each(&doc, "snippets", read_snippet)?,
        prompt_actions: each(&doc, "promptActions", read_prompt_action)?,
        profiles: each(&doc, "profiles", read_rule)?,
        hotkeys: each(&doc, "hotkeys", read_hotkey)?,
        plugins: each(&doc, "plugins", read_plugin)?,
        history: each(&doc, "history", read_history)?,
        update_channel: read_update_channel(&doc)?,
        preferences: read_preferences(&doc)?,
    })
}

/// Writes every item with `write_one`, in order.
fn array<T>(items: &[T], write_one: fn(&T) -> Value) -> Value {
    Value::Array(items.iter().map(write_one).collect())
}

/// Reads every object of the array `key` with `read_one`, stopping at the first problem.
fn each<T>(doc: &Obj, key: &str, read_one: fn(&Obj) -> Read<T>) -> Read<Vec<T>> {
    doc.objects(key)?.iter().map(read_one).collect()
}

/// Adds `key: value` when `value` is Some (optional fields are omitted, never null).
fn put_opt(map: &mut Map<String, Value>, key: &str, value: &Option<String>) {
    if let Some(value) = value {
        map.insert(key.into(), json!(value));
    }
}

fn read_update_channel(doc: &Obj) -> Read<Option<String>> {
    let expected = || {
        let names: Vec<String> = UPDATE_CHANNELS.iter().map(|c| format!("\"{c}\"")).collect();
        doc.problem("updateChannel", format!("expected {}.", names.join(" or ")))
    };
    match doc.opt_string("updateChannel") {
        Ok(None) => Ok(None),
        Ok(Some(channel)) if UPDATE_CHANNELS.contains(&channel.as_str()) => Ok(Some(channel)),
        _ => Err(expected()),
    }
}

/// Known preferences that travel in backups; other keys (from a newer Verbatim, or
/// machine-local ones) are ignored.
fn read_preferences(doc: &Obj) -> Read<Vec<(&'static preferences::Pref, crate::store::PrefValue)>> {
    let Some(prefs) = doc.object("preferences")? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (key, value) in prefs.fields() {
        let Ok(pref) = preferences::find(key) else {
            continue;
        };
        if NOT_IN_BACKUP.contains(&pref.key) {
            continue;
        }
        let parsed = pref.from_json(value).map_err(|err| {
            let what = match err {
                PrefError::Invalid { expected, .. } => expected.replace("JSON ", ""),
                other => other.to_string(),
            };
            prefs.problem(key, format!("{what}."))
        })?;
        out.push((pref, parsed));
    }
    Ok(out)
}
