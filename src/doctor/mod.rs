//! `verbatim doctor`: checks what dictation needs on this machine and explains each problem
//! with its fix. One module per group of checks; each check is a [`Finding`]. Only `fail` means
//! dictation cannot work; `warn` is something worth knowing (a stale file, no hotkeys).

mod chat;
mod data;
mod desktop;
mod limits;
mod model;
mod port;
pub mod program;
mod sound;
mod wyoming;

use std::path::PathBuf;

use serde::Serialize;

use crate::dictation::desktop::DesktopEnv;
use crate::discovery::DataDir;
use crate::engine::models::ModelDir;
use crate::store::{Store, preferences};

/// How a check went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    /// Worth fixing, but dictation works.
    Warn,
    /// Dictation cannot work until this is fixed.
    Fail,
}

/// One finding: what was checked, how it went, what was seen and, unless ok, how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub name: &'static str,
    pub status: Status,
    pub detail: String,
    pub fix: Option<String>,
}

impl Finding {
    pub fn ok(name: &'static str, detail: impl Into<String>) -> Finding {
        Finding {
            name,
            status: Status::Ok,
            detail: detail.into(),
            fix: None,
        }
    }

    pub fn warn(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Finding {
        Finding {
            status: Status::Warn,
            fix: Some(fix.into()),
            ..Finding::ok(name, detail)
        }
    }

    pub fn fail(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Finding {
        Finding {
            status: Status::Fail,
            ..Finding::warn(name, detail, fix)
        }
    }
}

/// Every check, in the order they ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    pub checks: Vec<Finding>,
    /// No check failed: everything dictation needs is there.
    pub ready: bool,
}

/// What the checks look at: the data folder and the session, as `serve` would see them.
#[derive(Debug, Clone)]
pub struct Context {
    pub data_dir: DataDir,
    pub models: ModelDir,
    /// `--port`, when given.
    pub port: Option<u16>,
    pub desktop: DesktopEnv,
    /// `XDG_RUNTIME_DIR`: where the sound server's and Wayland's sockets are.
    pub runtime_dir: Option<PathBuf>,
    /// `PULSE_SERVER`.
    pub pulse_server: Option<String>,
}

impl Context {
    /// This process's data folder (`dev`: the development one) and session.
    pub fn from_env(dev: bool, port: Option<u16>) -> std::io::Result<Context> {
        let data_dir = DataDir::resolve(dev)?;
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        Ok(Context {
            models: crate::app::model_dir(&data_dir),
            data_dir,
            port,
            desktop: DesktopEnv::from_env(),
            runtime_dir: var("XDG_RUNTIME_DIR").map(PathBuf::from),
            pulse_server: var("PULSE_SERVER"),
        })
    }
}

/// The preferences the checks need, read without creating anything.
#[derive(Debug, Clone)]
struct Settings {
    port: u16,
    engine: String,
    model: String,
    insertion: String,
    microphone: String,
    wyoming: String,
    /// The chat provider of prompt actions (None when it could not be read).
    chat: Option<crate::chat::ChatSettings>,
    /// Why the stored values could not be read (the defaults are used then).
    unreadable: Option<String>,
}

impl Settings {
    fn read(dir: &DataDir) -> Settings {
        let default_text = |pref: &preferences::Pref| match pref.kind {
            preferences::PrefKind::Text(default) => default.to_string(),
            preferences::PrefKind::Choice { default, .. } => default.to_string(),
            _ => String::new(),
        };
        let mut settings = Settings {
            port: match preferences::API_SERVER_PORT.kind {
                preferences::PrefKind::Int { default, .. } => default as u16,
                _ => 8978,
            },
            engine: String::new(),
            model: String::new(),
            insertion: default_text(&preferences::DICTATION_INSERTION),
            microphone: String::new(),
            wyoming: String::new(),
            chat: None,
            unreadable: None,
        };
        let path = dir.database_path();
        if !path.is_file() {
            return settings;
        }
        let read = || -> Result<Settings, crate::store::StoreError> {
            let store = Store::open(&path)?;
            Ok(Settings {
                port: store.pref_int(&preferences::API_SERVER_PORT)? as u16,
                engine: store.pref_text(&preferences::SELECTED_ENGINE)?,
                model: store.pref_text(&preferences::SELECTED_MODEL)?,
                insertion: store.pref_text(&preferences::DICTATION_INSERTION)?,
                microphone: store.pref_text(&preferences::PREFERRED_MICROPHONE)?,
                wyoming: store.pref_text(&preferences::WYOMING_ADDRESS)?,
                chat: Some(crate::chat::ChatSettings::load(&store)?),
                unreadable: None,
            })
        };
        match read() {
            Ok(stored) => stored,
            Err(err) => {
                settings.unreadable = Some(err.to_string());
                settings
            }
        }
    }
}

/// Why dictated text could not be typed into a window here, with its fix (the display and
/// insertion checks of [`run`]); None when it can, or when insertion is off.
pub fn insertion_problem(context: &Context) -> Option<(String, String)> {
    let settings = Settings::read(&context.data_dir);
    if settings.insertion == "none" {
        return None;
    }
    [
        desktop::display(context),
        desktop::insertion_tools(&context.desktop, &settings.insertion),
    ]
    .into_iter()
    .find(|check| check.status == Status::Fail)
    .map(|check| (check.detail, check.fix.unwrap_or_default()))
}

/// Runs every check.
pub fn run(context: &Context) -> Report {
    let settings = Settings::read(&context.data_dir);
    let mut checks = vec![
        program::program(),
        data::data_folder(&context.data_dir, settings.unreadable.as_deref()),
        data::discovery_file(&context.data_dir),
        port::port(context, settings.port),
        wyoming::wyoming(&settings.wyoming),
        chat::chat(settings.chat.as_ref()),
        limits::open_files(crate::server::descriptors::open_file_limit()),
        model::model(&context.models, &settings.engine, &settings.model),
        sound::sound_server(context),
    ];
    checks.extend(sound::capture_devices(&settings.microphone));
    let display = desktop::display(context);
    let reachable = display.status == Status::Ok;
    checks.push(desktop::relax_unless_inserting(
        display,
        &settings.insertion,
    ));
    checks.push(desktop::insertion_tools(
        &context.desktop,
        &settings.insertion,
    ));
    checks.push(desktop::hotkey_backend(&context.desktop, reachable));
    let ready = checks.iter().all(|check| check.status != Status::Fail);
    Report { checks, ready }
}
