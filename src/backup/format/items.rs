//! The backup document's other categories: dictionary entries, snippets, prompt actions,
//! hotkeys, plugins and history, each with its writer beside its reader.

use serde_json::{Value, json};

use super::put_opt;
use crate::backup::PluginRef;
use crate::backup::reader::{Obj, Read};
use crate::store::dictionary::clamp_similarity;
use crate::store::text::count_words;
use crate::store::{
    Correction, DictionaryEntry, HistoryEntry, Hotkey, PromptAction, Snippet, Term,
};
use crate::wire::{format_timestamp, format_uuid};

pub fn write_dictionary(entry: &DictionaryEntry) -> Value {
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

pub fn read_dictionary(o: &Obj) -> Read<DictionaryEntry> {
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

pub fn write_snippet(s: &Snippet) -> Value {
    json!({"trigger": s.trigger, "text": s.text, "isEnabled": s.enabled})
}

pub fn read_snippet(o: &Obj) -> Read<Snippet> {
    Ok(Snippet {
        trigger: o.text("trigger")?,
        text: o.string("text")?,
        enabled: o.bool_or("isEnabled", true)?,
    })
}

pub fn write_prompt_action(a: &PromptAction) -> Value {
    json!({
        "id": format_uuid(&a.id),
        "name": a.name,
        "prompt": a.prompt,
        "isEnabled": a.enabled,
    })
}

pub fn read_prompt_action(o: &Obj) -> Read<PromptAction> {
    Ok(PromptAction {
        id: o.uuid("id")?,
        name: o.text("name")?,
        prompt: o.string("prompt")?,
        enabled: o.bool_or("isEnabled", true)?,
    })
}

pub fn write_hotkey(h: &Hotkey) -> Value {
    json!({"slot": h.slot, "shortcut": h.shortcut})
}

pub fn read_hotkey(o: &Obj) -> Read<Hotkey> {
    Ok(Hotkey {
        slot: o.text("slot")?,
        shortcut: o.text("shortcut")?,
    })
}

pub fn write_plugin(p: &PluginRef) -> Value {
    json!({"id": p.id, "version": p.version, "isEnabled": p.enabled})
}

pub fn read_plugin(o: &Obj) -> Read<PluginRef> {
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

pub fn write_history(h: &HistoryEntry) -> Value {
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
    put_opt(fields, "transcribedText", &h.transcribed_text);
    put_opt(fields, "promptActionError", &h.prompt_action_error);
    map
}

pub fn read_history(o: &Obj) -> Read<HistoryEntry> {
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
        transcribed_text: o.opt_string("transcribedText")?,
        prompt_action_error: o.opt_string("promptActionError")?,
        text,
    })
}
