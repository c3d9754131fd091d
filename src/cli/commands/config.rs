//! `verbatim config list|get|set|unset`: preferences in the local store; `set-secret`, a
//! secret read from standard input. A running server reads
//! them on use, so a change (for example switching token checking on) applies at once.
//! `verbatim config hotkey` is in [`super::hotkey`].

use serde_json::{Map, Value};

use crate::store::preferences;

use super::super::output::print_json;
use super::super::{CliError, Globals};
use super::local_store::open_store;

#[derive(Debug, clap::Subcommand)]
pub enum ConfigCommand {
    /// List every preference with its value (defaults marked).
    List,
    /// Print one preference.
    Get {
        /// The preference's name, e.g. `apiServerPort` (see `verbatim config list`).
        key: String,
    },
    /// Change one preference.
    Set {
        /// The preference's name, e.g. `apiServerPort` (see `verbatim config list`).
        key: String,
        /// The new value, as `verbatim config list` shows values (`true`, `8978`, text).
        value: String,
    },
    /// Reset one preference to its default.
    Unset {
        /// The preference's name, e.g. `apiServerPort` (see `verbatim config list`).
        key: String,
    },
    /// Store a secret read from standard input (never from the command line, where other users
    /// and the shell's history could see it): `chatApiKey`, the chat provider's API key. An
    /// empty line removes it.
    SetSecret {
        /// The secret's name: chatApiKey.
        name: String,
    },
    /// List the global hotkeys, or show, bind or clear one slot's. SHORTCUT is like
    /// Ctrl+Alt+Space (modifiers Ctrl, Alt, Shift, Super, then one key).
    #[command(visible_alias = "hotkeys")]
    Hotkey {
        /// The slot: dictation.toggle, dictation.start, dictation.stop, recorder.toggle,
        /// recorder.start or recorder.stop.
        slot: Option<String>,
        /// The key combination to bind to the slot.
        shortcut: Option<String>,
        /// Unbind the slot.
        #[arg(long, requires = "slot", conflicts_with = "shortcut")]
        clear: bool,
    },
}

pub fn run(globals: &Globals, command: ConfigCommand) -> Result<(), CliError> {
    let store = open_store(globals)?;
    match command {
        ConfigCommand::List => {
            let prefs = store.list_prefs().map_err(CliError::local)?;
            if globals.json {
                let map: Map<String, Value> = prefs
                    .iter()
                    .map(|(pref, value, _)| (pref.key.to_string(), value.to_json()))
                    .collect();
                print_json(&Value::Object(map));
            } else {
                for (pref, value, is_set) in prefs {
                    let marker = if is_set { "" } else { " (default)" };
                    println!("{} = {value}{marker}\n    {}", pref.key, pref.help);
                }
            }
        }
        ConfigCommand::Get { key } => {
            let pref = preferences::find(&key).map_err(CliError::local)?;
            let value = store.pref(pref).map_err(CliError::local)?;
            print_one(globals, pref.key, &value);
        }
        ConfigCommand::Set { key, value } => {
            let pref = preferences::find(&key).map_err(CliError::local)?;
            // A model is selected as `models select` does it: only an installed one.
            if pref.key == preferences::SELECTED_MODEL.key {
                return super::models::select(globals, value.trim());
            }
            let parsed = pref.parse(&value).map_err(CliError::local)?;
            store.set_pref(pref, &parsed).map_err(CliError::local)?;
            print_one(globals, pref.key, &parsed);
        }
        ConfigCommand::Unset { key } => {
            let pref = preferences::find(&key).map_err(CliError::local)?;
            let was_set = store.unset_pref(pref).map_err(CliError::local)?;
            let value = pref.default_value();
            if globals.json {
                print_one(globals, pref.key, &value);
            } else if was_set {
                println!("{} = {value} (default)", pref.key);
            } else {
                println!("{} = {value} (default; it was not set)", pref.key);
            }
        }
        ConfigCommand::SetSecret { name } => {
            if name != crate::chat::API_KEY_SECRET {
                return Err(CliError::Local(format!(
                    "Unknown secret '{}': the one set this way is {} (the API token: `verbatim token`)",
                    crate::wire::echo(&name),
                    crate::chat::API_KEY_SECRET
                )));
            }
            let value = read_secret(&name)?;
            if value.is_empty() {
                store.delete_secret(&name).map_err(CliError::local)?;
                println!("{name} removed.");
            } else {
                store.set_secret(&name, &value).map_err(CliError::local)?;
                println!("{name} stored ({} characters).", value.chars().count());
            }
        }
        ConfigCommand::Hotkey {
            slot,
            shortcut,
            clear,
        } => {
            use super::hotkey::Request;
            let request = match (slot.as_deref(), shortcut.as_deref()) {
                (Some(slot), _) if clear => Request::Clear(slot),
                (Some(slot), Some(shortcut)) => Request::Bind(slot, shortcut),
                (Some(slot), None) => Request::Show(slot),
                (None, _) => Request::List,
            };
            return super::hotkey::run(globals, &store, request);
        }
    }
    Ok(())
}

/// The first line of standard input, trimmed; prompted for (without echo being turned off:
/// paste it, or pipe it in) when standard input is a terminal.
fn read_secret(name: &str) -> Result<String, CliError> {
    use std::io::{BufRead, IsTerminal, Read};
    if std::io::stdin().is_terminal() {
        eprintln!("Paste {name} and press Enter (an empty line removes it):");
    }
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .take(64 * 1024)
        .read_line(&mut line)
        .map_err(|e| CliError::Local(format!("cannot read standard input: {e}")))?;
    Ok(line.trim().to_string())
}

fn print_one(globals: &Globals, key: &str, value: &preferences::PrefValue) {
    if globals.json {
        let mut map = Map::new();
        map.insert(key.into(), value.to_json());
        print_json(&Value::Object(map));
    } else {
        println!("{key} = {value}");
    }
}
