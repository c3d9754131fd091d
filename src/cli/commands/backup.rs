//! `verbatim export <path>` and `verbatim import <path>`: settings backups as files. The
//! export is written atomically and owner-only; neither command reads any other file.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::super::output::{print_answer, print_json, sorted};
use super::super::{CliError, Client, Globals};
use crate::backup::Backup;
use crate::files::write_private_atomically;
use crate::wire::{ImportSummary, MAX_IMPORT_BYTES, SettingsDocument};

pub fn export(globals: &Globals, path: &Path) -> Result<(), CliError> {
    let path = resolve(path)?;
    let folder = path.parent().unwrap_or(Path::new("/"));
    if !folder.is_dir() {
        return Err(CliError::Local(format!(
            "cannot export to {}: the folder {} does not exist",
            path.display(),
            folder.display()
        )));
    }
    if path.is_dir() {
        return Err(CliError::Local(format!(
            "cannot export to {}: it is a folder; give a file name",
            path.display()
        )));
    }
    let document: SettingsDocument = Client::from_globals(globals)?.get("/v1/settings/export")?;
    let backup = Backup::from_json(&document).map_err(|problem| {
        CliError::Local(format!(
            "the server's export is not a valid settings backup ({problem}); nothing was written"
        ))
    })?;
    let mut bytes = serde_json::to_vec_pretty(&sorted(&document)).map_err(CliError::local)?;
    bytes.push(b'\n');
    // Personal data: written owner-only, through a temporary file, synced, then renamed.
    write_private_atomically(&path, &bytes).map_err(|e| {
        CliError::Local(format!(
            "cannot write {}: {e}; nothing was written",
            path.display()
        ))
    })?;
    let counts: Map<String, Value> = backup
        .counts()
        .into_iter()
        .map(|(category, count)| (category.to_string(), json!(count)))
        .collect();
    if globals.json {
        print_json(&json!({
            "path": path.display().to_string(),
            "bytes": bytes.len(),
            "counts": counts,
        }));
    } else {
        let listed: Vec<String> = backup
            .counts()
            .into_iter()
            .filter(|(category, _)| *category != "updateChannel")
            .map(|(category, count)| format!("{count} {}", human(category)))
            .collect();
        println!(
            "Exported settings to {} ({} bytes): {}.",
            path.display(),
            bytes.len(),
            listed.join(", ")
        );
    }
    Ok(())
}

pub fn import(globals: &Globals, path: &Path) -> Result<(), CliError> {
    let path = resolve(path)?;
    let size = std::fs::metadata(&path)
        .map_err(|e| CliError::Local(format!("cannot read {}: {e}", path.display())))?
        .len();
    if size > MAX_IMPORT_BYTES {
        return Err(CliError::Local(format!(
            "{} is {size} bytes; a settings backup can be at most {} MiB",
            path.display(),
            MAX_IMPORT_BYTES >> 20
        )));
    }
    let bytes = std::fs::read(&path)
        .map_err(|e| CliError::Local(format!("cannot read {}: {e}", path.display())))?;
    let summary: ImportSummary =
        Client::from_globals(globals)?.post_json_bytes("/v1/settings/import", &bytes)?;
    print_answer(globals.json, &summary, |s| print_summary(&path, s));
    Ok(())
}

/// What an import did, one line per category.
fn print_summary(path: &Path, s: &ImportSummary) {
    let plugins_note = if s.plugins_registry_fetch_failed {
        " (the plugin registry could not be reached)"
    } else {
        ""
    };
    let lines = [
        ("workflows", format!("{} imported", s.workflows_imported)),
        (
            "dictionary",
            format!(
                "{} imported, {} skipped",
                s.dictionary_imported, s.dictionary_skipped
            ),
        ),
        (
            "snippets",
            format!(
                "{} imported, {} skipped",
                s.snippets_imported, s.snippets_skipped
            ),
        ),
        (
            "prompt actions",
            format!("{} imported", s.prompt_actions_imported),
        ),
        ("profiles", format!("{} imported", s.profiles_imported)),
        (
            "hotkeys",
            format!(
                "{} applied, {} skipped",
                s.hotkeys_applied, s.hotkeys_skipped
            ),
        ),
        (
            "plugins",
            format!(
                "{} installed, {} skipped{plugins_note}",
                s.plugins_installed, s.plugins_skipped
            ),
        ),
        (
            "history",
            format!(
                "{} imported, {} outside the retention window",
                s.history_imported, s.history_skipped_by_retention
            ),
        ),
        (
            "update channel",
            if s.update_channel_applied {
                "applied"
            } else {
                "kept"
            }
            .to_string(),
        ),
        (
            "preferences",
            match s.preferences_skipped.as_slice() {
                [] => format!("{} applied", s.preferences_applied),
                kept => format!(
                    "{} applied, kept: {} (a shorter history retention is never imported)",
                    s.preferences_applied,
                    kept.join(", ")
                ),
            },
        ),
    ];
    println!("Imported {}:", path.display());
    for (category, what) in lines {
        println!("  {category:<16}{what}");
    }
}

/// `~` and `~/...` expand to the home folder; relative paths are taken from the current
/// folder.
fn resolve(path: &Path) -> Result<PathBuf, CliError> {
    let text = path.to_string_lossy();
    let expanded = if text == "~" || text.starts_with("~/") {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .ok_or_else(|| CliError::local("cannot expand '~': HOME is not set"))?;
        PathBuf::from(home).join(text.trim_start_matches('~').trim_start_matches('/'))
    } else if text.starts_with('~') {
        return Err(CliError::Local(format!(
            "cannot expand {text}: only '~' and '~/...' are supported"
        )));
    } else {
        path.to_path_buf()
    };
    if expanded.is_absolute() {
        Ok(expanded)
    } else {
        let here = std::env::current_dir().map_err(CliError::local)?;
        Ok(here.join(expanded))
    }
}

fn human(category: &str) -> &'static str {
    match category {
        "workflows" => "workflows",
        "dictionaryEntries" => "dictionary entries",
        "snippets" => "snippets",
        "promptActions" => "prompt actions",
        "profiles" => "profiles",
        "hotkeys" => "hotkeys",
        "plugins" => "plugins",
        "history" => "history entries",
        _ => "preferences",
    }
}
