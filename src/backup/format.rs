//! The backup document on the wire (camelCase keys): one writer and one reader per category,
//! side by side so the two cannot drift apart.

use serde_json::{Map, Value, json};

use super::reader::{Obj, Problem, Read};
use super::{Backup, PluginRef, SCHEMA_VERSION, UPDATE_CHANNELS};
use crate::store::dictionary::clamp_similarity;
use crate::store::preferences::{self, NOT_IN_BACKUP, PrefError};
use crate::store::text::count_words;
use crate::store::{
    Correction, DictionaryEntry, HistoryEntry, Hotkey, LanguageMode, Profile, PromptAction,
    Snippet, Term, Workflow,
};
use crate::wire::{format_timestamp, format_uuid};

pub fn write(backup: &Backup) -> Value {
    let mut doc = Map::new();
    doc.insert("schemaVersion".into(), json!(SCHEMA_VERSION));
    if let Some(at) = &backup.exported_at {
        doc.insert("exportedAt".into(), json!(format_timestamp(at)));
    }
    if let Some(version) = &backup.app_version {
        doc.insert("appVersion".into(), json!(version));
    }
    let list = |items: Vec<Value>| Value::Array(items);
    doc.insert(
        "workflows".into(),
        list(backup.workflows.iter().map(write_workflow).collect()),
    );
    doc.insert(
        "dictionaryEntries".into(),
        list(backup.dictionary.iter().map(write_dictionary).collect()),
    );
    doc.insert(
        "snippets".into(),
        list(backup.snippets.iter().map(write_snippet).collect()),
    );
    doc.insert(
        "promptActions".into(),
        list(
            backup
                .prompt_actions
                .iter()
                .map(write_prompt_action)
                .collect(),
        ),
    );
    doc.insert(
        "profiles".into(),
        list(backup.profiles.iter().map(write_profile).collect()),
    );
    doc.insert(
        "hotkeys".into(),
        list(backup.hotkeys.iter().map(write_hotkey).collect()),
    );
    doc.insert(
        "plugins".into(),
        list(backup.plugins.iter().map(write_plugin).collect()),
    );
    doc.insert(
        "history".into(),
        list(backup.history.iter().map(write_history).collect()),
    );
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
        workflows: each(&doc, "workflows", read_workflow)?,
        dictionary: each(&doc, "dictionaryEntries", read_dictionary)?,
        snippets: each(&doc, "snippets", read_snippet)?,
        prompt_actions: each(&doc, "promptActions", read_prompt_action)?,
        profiles: each(&doc, "profiles", read_profile)?,
        hotkeys: each(&doc, "hotkeys", read_hotkey)?,
        plugins: each(&doc, "plugins", read_plugin)?,
        history: each(&doc, "history", read_history)?,
        update_channel: read_update_channel(&doc)?,
        preferences: read_preferences(&doc)?,
    })
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

fn write_workflow(w: &Workflow) -> Value {
    let mut map = json!({
        "id": format_uuid(&w.id),
        "name": w.name,
        "isEnabled": w.enabled,
        "priority": w.priority,
        "bundleIdentifiers": w.bundle_identifiers,
        "urlPatterns": w.url_patterns,
        "languageMode": w.language_mode.as_str(),
        "languageHints": w.language_hints,
    });
    let fields = map.as_object_mut().expect("an object");
    put_opt(fields, "inputLanguage", &w.input_language);
    put_opt(
        fields,
        "translationTargetLanguage",
        &w.translation_target_language,
    );
    map
}

fn read_workflow(o: &Obj) -> Read<Workflow> {
    Ok(Workflow {
        id: o.uuid("id")?,
        name: o.text("name")?,
        enabled: o.bool_or("isEnabled", true)?,
        priority: o.int_or("priority", 0)?,
        bundle_identifiers: o.strings("bundleIdentifiers")?,
        url_patterns: o.strings("urlPatterns")?,
        input_language: o.opt_string("inputLanguage")?,
        language_mode: read_language_mode(o)?,
        language_hints: o.strings("languageHints")?,
        translation_target_language: o.opt_string("translationTargetLanguage")?,
    })
}

fn read_language_mode(o: &Obj) -> Read<LanguageMode> {
    match o.opt_string("languageMode") {
        Ok(None) => Ok(LanguageMode::default()),
        Ok(Some(mode)) => mode
            .parse()
            .map_err(|()| expected_one_of(o, "languageMode")),
        Err(_) => Err(expected_one_of(o, "languageMode")),
    }
}

fn expected_one_of(o: &Obj, key: &str) -> Problem {
    let modes: Vec<String> = LanguageMode::ALL
        .iter()
        .map(|m| format!("\"{m}\""))
        .collect();
    o.problem(key, format!("expected one of {}.", modes.join(", ")))
}

fn write_dictionary(entry: &DictionaryEntry) -> Value {
    match entry {
        DictionaryEntry::Term { term, enabled } => {
            let mut map = json!({"type": "term", "term": term.term, "isEnabled": enabled});
            if let Some(ctc) = term.ctc_min_similarity {
                map["ctcMinSimilarity"] = json!(ctc);
            }
            map
        }
        DictionaryEntry::Correction {
            correction,
            enabled,
        } => json!({
            "type": "correction",
            "original": correction.original,
            "replacement": correction.replacement,
            "caseSensitive": correction.case_sensitive,
            "isEnabled": enabled,
        }),
    }
}

fn read_dictionary(o: &Obj) -> Read<DictionaryEntry> {
    let enabled = o.bool_or("isEnabled", true)?;
    match o.opt_string("type").ok().flatten().as_deref() {
        Some("term") => Ok(DictionaryEntry::Term {
            term: Term {
                term: o.text("term")?.trim().to_string(),
                ctc_min_similarity: o.opt_number("ctcMinSimilarity")?.map(clamp_similarity),
            },
            enabled,
        }),
        Some("correction") => Ok(DictionaryEntry::Correction {
            correction: Correction {
                original: o.text("original")?.trim().to_string(),
                replacement: o.string("replacement")?,
                case_sensitive: o.bool_or("caseSensitive", false)?,
            },
            enabled,
        }),
        _ => Err(o.problem("type", "expected \"term\" or \"correction\".")),
    }
}

fn write_snippet(s: &Snippet) -> Value {
    json!({"trigger": s.trigger, "text": s.text, "isEnabled": s.enabled})
}

fn read_snippet(o: &Obj) -> Read<Snippet> {
    Ok(Snippet {
        trigger: o.text("trigger")?,
        text: o.string("text")?,
        enabled: o.bool_or("isEnabled", true)?,
    })
}

fn write_prompt_action(a: &PromptAction) -> Value {
    json!({
        "id": format_uuid(&a.id),
        "name": a.name,
        "prompt": a.prompt,
        "isEnabled": a.enabled,
    })
}

fn read_prompt_action(o: &Obj) -> Read<PromptAction> {
    Ok(PromptAction {
        id: o.uuid("id")?,
        name: o.text("name")?,
        prompt: o.string("prompt")?,
        enabled: o.bool_or("isEnabled", true)?,
    })
}

fn write_profile(p: &Profile) -> Value {
    let mut map = json!({
        "id": format_uuid(&p.id),
        "name": p.name,
        "isEnabled": p.enabled,
        "priority": p.priority,
        "bundleIdentifiers": p.bundle_identifiers,
        "urlPatterns": p.url_patterns,
    });
    let fields = map.as_object_mut().expect("an object");
    put_opt(fields, "inputLanguage", &p.input_language);
    put_opt(
        fields,
        "translationTargetLanguage",
        &p.translation_target_language,
    );
    put_opt(fields, "engine", &p.engine);
    put_opt(fields, "model", &p.model);
    map
}

fn read_profile(o: &Obj) -> Read<Profile> {
    Ok(Profile {
        id: o.uuid("id")?,
        name: o.text("name")?,
        enabled: o.bool_or("isEnabled", true)?,
        priority: o.int_or("priority", 0)?,
        bundle_identifiers: o.strings("bundleIdentifiers")?,
        url_patterns: o.strings("urlPatterns")?,
        input_language: o.opt_string("inputLanguage")?,
        translation_target_language: o.opt_string("translationTargetLanguage")?,
        engine: o.opt_string("engine")?,
        model: o.opt_string("model")?,
    })
}

fn write_hotkey(h: &Hotkey) -> Value {
    json!({"slot": h.slot, "shortcut": h.shortcut})
}

fn read_hotkey(o: &Obj) -> Read<Hotkey> {
    Ok(Hotkey {
        slot: o.text("slot")?,
        shortcut: o.text("shortcut")?,
    })
}

fn write_plugin(p: &PluginRef) -> Value {
    json!({"id": p.id, "version": p.version, "isEnabled": p.enabled})
}

fn read_plugin(o: &Obj) -> Read<PluginRef> {
    Ok(PluginRef {
        id: plugin_name(o, "id")?,
        version: plugin_name(o, "version")?,
        enabled: o.bool_or("isEnabled", true)?,
    })
}

/// Plugin ids and versions travel in registry URLs: letters, digits, `.`, `_` and `-` only.
fn plugin_name(o: &Obj, key: &str) -> Read<String> {
    let name = o.string(key)?;
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if name.is_empty() || name.len() > 128 || !name.chars().all(allowed) || name.starts_with('.') {
        return Err(o.problem(
            key,
            "expected 1 to 128 letters, digits, '.', '_' or '-', not starting with '.'.",
        ));
    }
    Ok(name)
}

fn write_history(h: &HistoryEntry) -> Value {
    let mut map = json!({
        "id": format_uuid(&h.id),
        "text": h.text,
        "rawText": h.raw_text,
        "timestamp": format_timestamp(&h.timestamp),
        "duration": h.duration,
        "engine": h.engine,
        "wordsCount": h.words_count,
    });
    let fields = map.as_object_mut().expect("an object");
    put_opt(fields, "appName", &h.app_name);
    put_opt(fields, "appBundleId", &h.app_bundle_id);
    put_opt(fields, "appUrl", &h.app_url);
    put_opt(fields, "language", &h.language);
    put_opt(fields, "model", &h.model);
    map
}

fn read_history(o: &Obj) -> Read<HistoryEntry> {
    let text = o.string("text")?;
    let words = match o.opt_int("wordsCount")? {
        None => count_words(&text),
        Some(n) => u32::try_from(n)
            .map_err(|_| o.problem("wordsCount", "expected an integer from 0 to 4294967295."))?,
    };
    let duration = o.number("duration")?;
    if duration < 0.0 {
        return Err(o.problem("duration", "must not be negative."));
    }
    Ok(HistoryEntry {
        id: o.uuid("id")?,
        raw_text: o.string("rawText")?,
        timestamp: o.timestamp("timestamp")?,
        app_name: o.opt_string("appName")?,
        app_bundle_id: o.opt_string("appBundleId")?,
        app_url: o.opt_string("appUrl")?,
        duration,
        language: o.opt_string("language")?,
        engine: o.string("engine")?,
        model: o.opt_string("model")?,
        words_count: words,
        text,
    })
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
