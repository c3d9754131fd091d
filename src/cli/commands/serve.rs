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
    /// Do not serve the global hotkeys (`verbatim config hotkey`) from this server.
    #[arg(long)]
    pub no_hotkeys: bool,
}

pub fn run(globals: &Globals, args: ServeArgs) -> Result<(), CliError> {
    init_logging();
    let data_dir = DataDir::resolve(globals.dev).map_err(CliError::local)?;
    let backends = if args.sim {
        Backends::Simulated
    } else {
        Backends::Real
    };
    let mut config = Config::new(data_dir.clone(), backends, args.require_token);
    config.scenario = args.scenario;
    let app = App::build(config).map_err(CliError::local)?;
    let port = match globals.port {
        Some(port) => port,
        None => app
            .store
            .pref_int(&preferences::API_SERVER_PORT)
            .map_err(CliError::local)? as u16,
    };
    let token_required = app.token_required().map_err(CliError::local)?;
    let hotkeys = hotkeys::plan(&hotkeys::SessionVars::from_env(), !args.no_hotkeys);
    let hotkeys_app = app.clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CliError::local)?;
    let setup = ServeSetup {
        app,
        data_dir,
        port,
    };
    // Handlers first: a signal arriving once the discovery file is published must stop cleanly.
    let shutdown = {
        let _inside = runtime.enter();
        server::termination_signal().map_err(CliError::local)?
    };
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
            // Now that this server holds the data folder's lock: a second one must not grab
            // keys. The backends run on their own until the process ends.
            hotkeys::start(hotkeys_app, hotkeys);
        }))
        .map_err(CliError::local)
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,whisper_rs=warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .try_init();
}
