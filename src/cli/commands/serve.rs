//! `verbatim serve`: the headless application with its API server.

use crate::app::{App, Backends, Config};
use crate::discovery::DataDir;
use crate::hotkeys;
use crate::server::{self, ServeSetup};
use crate::store::preferences;

use super::super::{CliError, Globals};

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Run on the simulated devices and replay engine instead of real hardware and models.
    #[arg(long)]
    pub sim: bool,
    /// Scenario file for --sim (devices, engine latency, models, faults); default scenario if omitted.
    #[arg(long, requires = "sim")]
    pub scenario: Option<std::path::PathBuf>,
    /// Require the API token on every route but GET /v1/status, whatever the preference says.
    #[arg(long)]
    pub require_token: bool,
    /// How log lines (one per request, and the server's own) are written on standard error:
    /// `text` for people, `json` for one JSON object per line. RUST_LOG sets the level.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// Do not serve the global hotkeys (`verbatim config hotkey`) from this server.
    #[arg(long)]
    pub no_hotkeys: bool,
    /// Also serve the Wyoming protocol (Home Assistant's voice pipeline) on PORT (loopback) or
    /// ADDR:PORT; default: the wyomingAddress preference, empty for off.
    #[arg(long, value_name = "[ADDR:]PORT")]
    pub wyoming: Option<String>,
    /// Networks (CIDR, comma-separated) allowed to connect to Wyoming beside loopback; needed
    /// for an address beyond loopback (the protocol has no authentication).
    #[arg(long, value_name = "CIDR[,CIDR]")]
    pub wyoming_allow: Option<String>,
}

/// The format of the server's log lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

pub fn run(globals: &Globals, args: ServeArgs) -> Result<(), CliError> {
    init_logging(args.log_format);
    let data_dir = DataDir::resolve(globals.dev).map_err(CliError::local)?;
    let backends = if args.sim {
        Backends::Simulated
    } else {
        Backends::Real
    };
    let mut config = Config::new(data_dir.clone(), backends, args.require_token);
    config.scenario = args.scenario.clone();
    let app = App::build(config).map_err(CliError::local)?;
    let port = match globals.port {
        Some(port) => port,
        None => app
            .store
            .pref_int(&preferences::API_SERVER_PORT)
            .map_err(CliError::local)? as u16,
    };
    let token_required = app.token_required().map_err(CliError::local)?;
    let no_model = backends == Backends::Real && no_model_installed(&app);
    let hotkeys = hotkeys::plan(&hotkeys::SessionVars::from_env(), !args.no_hotkeys);
    let hotkeys_app = app.clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CliError::local)?;
    let wyoming = wyoming_setup(&app, &args)?;
    let setup = ServeSetup {
        app,
        data_dir,
        port,
        wyoming,
    };
    // Handlers first: a signal arriving once the discovery file is published must stop cleanly.
    let shutdown = {
        let _inside = runtime.enter();
        server::termination_signal().map_err(CliError::local)?
    };
    {
        let _inside = runtime.enter();
        setup.app.transcriber.spawn_idle_unloader();
    }
    runtime
        .block_on(server::run(setup, shutdown, |port| {
            let kind = match backends {
                Backends::Real => "Verbatim API",
                Backends::Simulated => "Verbatim API (simulated devices and engine)",
            };
            let token = if token_required {
                "required"
            } else {
                "not required"
            };
            tracing::info!("{kind} listening on http://127.0.0.1:{port} (token {token})");
            if no_model {
                tracing::warn!("{NO_MODEL_HINT}");
            }
            // Now that this server holds the data folder's lock: a second one must not grab
            // keys. The backends run on their own until the process ends.
            hotkeys::start(hotkeys_app, hotkeys);
        }))
        .map_err(CliError::local)
}

/// The Wyoming listener `--wyoming` (else the `wyomingAddress` preference) and
/// `--wyoming-allow` ask for; None when off.
fn wyoming_setup(
    app: &crate::app::App,
    args: &ServeArgs,
) -> Result<Option<crate::wyoming::WyomingSetup>, CliError> {
    use crate::wyoming::{Allowlist, WyomingSetup};
    let address = match &args.wyoming {
        Some(address) => address.clone(),
        None => app
            .store
            .pref_text(&preferences::WYOMING_ADDRESS)
            .map_err(CliError::local)?,
    };
    let allow = Allowlist::parse(args.wyoming_allow.as_deref().unwrap_or_default())
        .map_err(|why| CliError::Local(format!("--wyoming-allow: {why}")))?;
    if address.trim().is_empty() {
        if args.wyoming_allow.is_some() {
            return Err(CliError::Local(
                "--wyoming-allow needs a Wyoming listener: give --wyoming [ADDR:]PORT".into(),
            ));
        }
        return Ok(None);
    }
    WyomingSetup::parse(&address, allow)
        .map(Some)
        .map_err(|e| CliError::Local(e.to_string()))
}

/// Said once at start on a machine with no model yet (a first run): the one command that gets
/// one.
pub const NO_MODEL_HINT: &str = "no model is installed yet: `verbatim models download tiny.en` \
     gets one (`verbatim models import FILE` adds a ggml file you have)";

/// No engine has any model installed (reads each model's files: before serving).
fn no_model_installed(app: &crate::app::App) -> bool {
    !app.transcriber
        .engines()
        .iter()
        .any(|engine| engine.models().iter().any(|offer| offer.downloaded))
}

/// The log filter unless `RUST_LOG` says otherwise. The PulseAudio client's reactor logs an
/// ERROR ("Client disconnected") each time a capture stream is closed, a normal stop; a sound
/// server that really goes away is reported by the capture itself.
const DEFAULT_LOG_FILTER: &str = "info,whisper_rs=warn,pulseaudio::client::reactor=off";

/// Logs on standard error: colours only on a terminal and never when `NO_COLOR` is set (to
/// anything but the empty string, per no-color.org).
fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_LOG_FILTER));
    let colour = colour_wanted(
        std::env::var_os("NO_COLOR").as_deref(),
        std::io::IsTerminal::is_terminal(&std::io::stderr()),
    );
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false);
    let _ = match format {
        LogFormat::Text => builder.with_ansi(colour).try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .try_init(),
    };
}

/// Colours on a terminal, unless `NO_COLOR` is set to a non-empty value.
fn colour_wanted(no_color: Option<&std::ffi::OsStr>, terminal: bool) -> bool {
    terminal && no_color.is_none_or(|value| value.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn no_color_turns_colours_off_on_a_terminal() {
        assert!(colour_wanted(None, true));
        assert!(!colour_wanted(Some(OsStr::new("1")), true));
        assert!(colour_wanted(Some(OsStr::new("")), true));
        assert!(!colour_wanted(None, false));
    }
}
