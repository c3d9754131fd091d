//! The backup document on the wire (camelCase keys): one writer and one reader per category,
//! side by side so the two cannot drift apart (rules and the other categories in submodules).
//! A document is read as it streams, one category item at a time (see `backup::stream`).

use serde::de::{DeserializeSeed, Deserializer, MapAccess};
use serde_json::{Map, Value, json};

mod items;
mod rules;

use items::{
    read_dictionary, read_history, read_hotkey, read_plugin, read_prompt_action, read_snippet,
    write_dictionary, write_history, write_hotkey, write_plugin, write_prompt_action,
    write_snippet,
};
use rules::{read_rule, write_rule};

use super::reader::{Obj, Problem, Read};
use super::stream::{Fields, Items, Object, ObjectSeed, Pruned, PrunedFields, Skip};
use super::{Backup, PluginRef, SCHEMA_VERSION, UPDATE_CHANNELS};
use crate::store::preferences::{self, NOT_IN_BACKUP, PrefError};
use crate::store::{
    DictionaryEntry, HistoryEntry, Hotkey, Profile, PromptAction, Snippet, Workflow,
};
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

/// Reads a document as it streams from `de`: each category's items as they arrive (see
/// [`Items`]), the other fields kept small. The outer error is the deserializer's (malformed
/// JSON); the inner one names the first problem, checked in the order of [`Parts::into_backup`].
pub fn read<'de, D: Deserializer<'de>>(de: D) -> Result<Read<Backup>, D::Error> {
    Ok(match ObjectSeed(Parts::default()).deserialize(de)? {
        Object::Fields(parts) => parts.into_backup(),
        Object::Null | Object::Other => Err(Problem::top_level_not_an_object()),
    })
}

/// The document as it arrives: each category read, and the other top-level fields the readers
/// look at, cut down ([`Pruned`]; `preferences` with the keys that travel in backups only).
/// A repeated key keeps its last value, as in a parsed `Value`.
#[derive(Default)]
struct Parts {
    fields: Map<String, Value>,
    workflows: Option<Read<Vec<Workflow>>>,
    dictionary: Option<Read<Vec<DictionaryEntry>>>,
    snippets: Option<Read<Vec<Snippet>>>,
    prompt_actions: Option<Read<Vec<PromptAction>>>,
    profiles: Option<Read<Vec<Profile>>>,
    hotkeys: Option<Read<Vec<Hotkey>>>,
    plugins: Option<Read<Vec<PluginRef>>>,
    history: Option<Read<Vec<HistoryEntry>>>,
}

impl<'de> Fields<'de> for Parts {
    type Output = Parts;

    fn field<A: MapAccess<'de>>(&mut self, key: String, map: &mut A) -> Result<(), A::Error> {
        match key.as_str() {
            "workflows" => {
                self.workflows = Some(map.next_value_seed(Items::new("workflows", read_rule))?)
            }
            "dictionaryEntries" => {
                self.dictionary =
                    Some(map.next_value_seed(Items::new("dictionaryEntries", read_dictionary))?)
            }
            "snippets" => {
                self.snippets = Some(map.next_value_seed(Items::new("snippets", read_snippet))?)
            }
            "promptActions" => {
                self.prompt_actions =
                    Some(map.next_value_seed(Items::new("promptActions", read_prompt_action))?)
            }
            "profiles" => {
                self.profiles = Some(map.next_value_seed(Items::new("profiles", read_rule))?)
            }
            "hotkeys" => {
                self.hotkeys = Some(map.next_value_seed(Items::new("hotkeys", read_hotkey))?)
            }
            "plugins" => {
                self.plugins = Some(map.next_value_seed(Items::new("plugins", read_plugin))?)
            }
            "history" => {
                self.history = Some(map.next_value_seed(Items::new("history", read_history))?)
            }
            "preferences" => {
                let prefs =
                    map.next_value_seed(ObjectSeed(PrunedFields::only(travels_in_backups)))?;
                self.fields.insert(key, prefs.into_value());
            }
            "schemaVersion" | "exportedAt" | "appVersion" | "updateChannel" => {
                let value = map.next_value_seed(Pruned::Field)?;
                self.fields.insert(key, value);
            }
            _ => map.next_value_seed(Skip)?,
        }
        Ok(())
    }

    fn finish(self) -> Parts {
        self
    }
}

impl Parts {
    /// The backup, or the first problem: `schemaVersion`, then the fields in this order.
    fn into_backup(self) -> Read<Backup> {
        let doc = Obj::at(String::new(), &self.fields);
        match doc.get("schemaVersion") {
            None => return Err(doc.problem("schemaVersion", "required field is missing.")),
            Some(v) if v.as_i64() == Some(SCHEMA_VERSION) => {}
            Some(_) => {
                return Err(doc.problem(
                    "schemaVersion",
                    format!(
                        "expected {SCHEMA_VERSION}, the only schema version this Verbatim reads."
                    ),
                ));
            }
        }
        Ok(Backup {
            exported_at: doc.opt_timestamp("exportedAt")?,
            app_version: doc.opt_string("appVersion")?,
            workflows: given(self.workflows)?,
            dictionary: given(self.dictionary)?,
            snippets: given(self.snippets)?,
            prompt_actions: given(self.prompt_actions)?,
            profiles: given(self.profiles)?,
            hotkeys: given(self.hotkeys)?,
            plugins: given(self.plugins)?,
            history: given(self.history)?,
            update_channel: read_update_channel(&doc)?,
            preferences: read_preferences(&doc)?,
        })
    }
}

/// A category's items; an absent category has none.
fn given<T>(items: Option<Read<Vec<T>>>) -> Read<Vec<T>> {
    items.unwrap_or_else(|| Ok(Vec::new()))
}

/// A preference key a backup may carry; the others are not kept while reading.
fn travels_in_backups(key: &str) -> bool {
    preferences::find(key).is_ok_and(|pref| !NOT_IN_BACKUP.contains(&pref.key))
}

/// Writes every item with `write_one`, in order.
fn array<T>(items: &[T], write_one: fn(&T) -> Value) -> Value {
    Value::Array(items.iter().map(write_one).collect())
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
