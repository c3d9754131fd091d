//! The assembled application: data folder, store and the settings the routes share.
//! Built once by `verbatim serve` (real or simulated backends) and by tests.

use std::sync::Arc;

use crate::audio::capture::Devices;
use crate::dictation::context::{AppContext, AppContextSource, StaticContext};
use crate::dictation::insert::{InserterChoice, SimInserter};
use crate::dictation::service::Dictation;
use crate::discovery::{self, DataDir};
use crate::engine::Engine;
use crate::engine::models::ModelDir;
use crate::recorder::service::Recorder;
use crate::store::{Store, StoreError, preferences};
use crate::transcribe::{DEFAULT_QUEUE, Transcriber, TranscriberParts};

/// Which backends the application runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backends {
    /// Real microphone, system audio and Whisper models.
    Real,
    /// The simulated devices and replay engine of `verbatim-sim`.
    Simulated,
}

/// How the application is assembled.
#[derive(Debug, Clone)]
pub struct Config {
    pub data_dir: DataDir,
    pub backends: Backends,
    /// `serve --require-token`: require the token whatever the preference says.
    pub require_token: bool,
    /// Where model weights live (see [`model_dir`]).
    pub models: ModelDir,
    /// Sim mode: the scenario file (None: the default scenario).
    pub scenario: Option<std::path::PathBuf>,
    /// Sim mode: the clock the devices and the replay engine run on (None: real time). A
    /// virtual clock lets a test decide exactly how much audio the devices have played.
    pub sim_clock: Option<Arc<dyn verbatim_sim::Clock>>,
    /// How long a realtime session may stay silent with nothing waiting
    /// (`realtime::IDLE_TIMEOUT`; tests shorten it).
    pub realtime_idle: std::time::Duration,
}

impl Config {
    /// The usual assembly for a data folder: models in `$VERBATIM_MODELS_DIR` or the data folder.
    pub fn new(data_dir: DataDir, backends: Backends, require_token: bool) -> Config {
        Config {
            models: model_dir(&data_dir),
            data_dir,
            backends,
            require_token,
            scenario: None,
            sim_clock: None,
            realtime_idle: crate::realtime::IDLE_TIMEOUT,
        }
    }
}

/// Why the application could not be assembled.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("simulation: {0}")]
    Simulation(String),
}

/// Transcriptions that run at once; each uses every inference thread, so more only adds memory.
const TRANSCRIPTION_SLOTS: usize = 1;

/// The models folder: `$VERBATIM_MODELS_DIR`, else `models/` in the data folder. Models an
/// earlier version installed side by side are moved into their own folders first.
pub fn model_dir(data_dir: &DataDir) -> ModelDir {
    let models = match std::env::var_os("VERBATIM_MODELS_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => ModelDir::new(dir),
        None => ModelDir::new(data_dir.root().join("models")),
    };
    match models.adopt_flat_files() {
        Ok(0) => {}
        Ok(moved) => tracing::info!(
            "moved {moved} model files into one folder per model in {}",
            models.path().display()
        ),
        Err(err) => tracing::warn!(
            "could not move the models in {} into one folder per model: {err}",
            models.path().display()
        ),
    }
    models
}

/// The parts that differ between real and simulated backends.
struct Parts {
    engines: Vec<Arc<dyn Engine>>,
    devices: Devices,
    app_context: Arc<dyn AppContextSource>,
    /// Sim mode records insertions; the real backend follows the preference at each use.
    inserter: InserterChoice,
    /// Where prompt actions go: the preferences' provider, or sim mode's built-in one.
    chat: crate::chat::Provider,
}

fn parts_for(config: &Config, store: &Store) -> Result<Parts, BuildError> {
    match config.backends {
        Backends::Real => Ok(Parts {
            engines: real_engines(&config.models, store)?,
            devices: crate::audio::capture::real_devices(
                Some(store.pref_text(&preferences::PREFERRED_MICROPHONE)?)
                    .filter(|name| !name.trim().is_empty()),
            ),
            app_context: Arc::from(crate::dictation::context::detect()),
            inserter: InserterChoice::Preference,
            chat: crate::chat::Provider::default(),
        }),
        Backends::Simulated => simulated_parts(config, store),
    }
}

/// The replay engine, devices and app context of the scenario; its `selected_model` becomes the
/// selection when none is set. Insertions are recorded in `sim-insertions.jsonl`.
fn simulated_parts(config: &Config, store: &Store) -> Result<Parts, BuildError> {
    use crate::audio::capture::sim::SimSource;
    let clock: Arc<dyn verbatim_sim::Clock> = match &config.sim_clock {
        Some(clock) => clock.clone(),
        None => Arc::new(verbatim_sim::RealClock::new()),
    };
    let sim = verbatim_sim::Simulation::load(config.scenario.as_deref(), clock)
        .map_err(|e| BuildError::Simulation(e.to_string()))?;
    if let Some(model) = &sim.scenario.engine.selected_model
        && store.pref_text(&preferences::SELECTED_MODEL)?.is_empty()
    {
        use crate::store::PrefValue;
        let engine = crate::engine::catalog::find_model(model)
            .map_or(crate::engine::sim::default_engine(), |spec| spec.engine);
        store.set_pref(
            &preferences::SELECTED_ENGINE,
            &PrefValue::Text(engine.into()),
        )?;
        store.set_pref(
            &preferences::SELECTED_MODEL,
            &PrefValue::Text(model.clone()),
        )?;
    }
    let devices = Devices {
        microphone: Arc::new(SimSource::new(sim.microphone.clone(), sim.clock.clone())),
        system_audio: Arc::new(SimSource::new(sim.system_audio.clone(), sim.clock.clone())),
    };
    let context = &sim.scenario.app_context;
    let app_context = Arc::new(StaticContext(AppContext {
        app_name: context.app_name.clone(),
        app_id: context.app_id.clone(),
        url: context.url.clone(),
    }));
    let inserter = Arc::new(SimInserter::new(
        config.data_dir.root().join(SIM_INSERTIONS_FILE),
    ));
    let chat = match sim.scenario.chat.use_preferences {
        true => crate::chat::Provider::default(),
        false => crate::chat::Provider::Replay(Arc::new(sim.scenario.chat.clone())),
    };
    let sim = Arc::new(sim);
    let engines = crate::engine::registry::ENGINES
        .iter()
        .map(|kind| -> Arc<dyn Engine> {
            Arc::new(crate::engine::sim::SimEngine::standing_in_for(
                sim.clone(),
                kind.id,
            ))
        })
        .collect();
    Ok(Parts {
        engines,
        devices,
        app_context,
        inserter: InserterChoice::Fixed(inserter),
        chat,
    })
}

/// Sim mode: what dictation would have typed, one JSON line per insertion, in the data folder.
pub const SIM_INSERTIONS_FILE: &str = "sim-insertions.jsonl";

/// The engines of this build (the registry's), each with the configured threads.
fn real_engines(models: &ModelDir, store: &Store) -> Result<Vec<Arc<dyn Engine>>, StoreError> {
    let threads = store.pref_int(&preferences::WHISPER_THREADS)?.max(0) as usize;
    Ok(crate::engine::registry::build_all(models, threads))
}

/// Shared state of the running application.
pub struct App {
    pub data_dir: DataDir,
    pub store: Arc<Store>,
    pub backends: Backends,
    pub transcriber: Arc<Transcriber>,
    /// Where model weights live.
    pub models: ModelDir,
    pub recorder: Arc<Recorder>,
    pub dictation: Arc<Dictation>,
    /// Realtime sessions open now (at most `realtime::MAX_SESSIONS`).
    pub realtime_sessions: Arc<tokio::sync::Semaphore>,
    /// How long a realtime session may stay silent with nothing waiting.
    pub realtime_idle: std::time::Duration,
    require_token_flag: bool,
}

impl App {
    pub fn build(config: Config) -> Result<Arc<App>, BuildError> {
        let store = config.data_dir.open_store()?;
        let expired = store.apply_history_retention()?;
        if expired > 0 {
            tracing::info!("removed {expired} history entries outside the retention window");
        }
        // Create the token now so the discovery file and the auth check agree from the start.
        discovery::token(&store)?;
        let recovered = crate::recorder::service::recover_interrupted(&store)?
            + crate::dictation::service::recover_interrupted(&store)?;
        if recovered > 0 {
            tracing::warn!("recovered {recovered} sessions a previous run left unfinished");
        }
        let parts = parts_for(&config, &store)?;
        let store = Arc::new(store);
        let transcriber = Arc::new(
            Transcriber::new(TranscriberParts {
                engines: parts.engines,
                store: store.clone(),
                models: config.models.clone(),
                slots: TRANSCRIPTION_SLOTS,
                max_waiting: DEFAULT_QUEUE,
            })
            .with_session_language(crate::transcribe::locale::session_language())
            .with_chat(parts.chat),
        );
        let dictation = Dictation::new(
            store.clone(),
            parts.devices.microphone.clone(),
            parts.app_context,
            parts.inserter,
            transcriber.clone(),
        );
        let recorder = Recorder::new(
            store.clone(),
            parts.devices,
            config.data_dir.root().to_path_buf(),
            transcriber.clone(),
        );
        Ok(Arc::new(App {
            transcriber,
            models: config.models,
            recorder: Arc::new(recorder),
            dictation: Arc::new(dictation),
            data_dir: config.data_dir,
            store,
            backends: config.backends,
            realtime_sessions: Arc::new(tokio::sync::Semaphore::new(crate::realtime::MAX_SESSIONS)),
            realtime_idle: config.realtime_idle,
            require_token_flag: config.require_token,
        }))
    }

    /// Whether requests must carry the token. Read on every request, so
    /// `verbatim config set apiServerRequiresAuthentication true` applies to a running server.
    pub fn token_required(&self) -> Result<bool, StoreError> {
        Ok(self.require_token_flag
            || self
                .store
                .pref_bool(&preferences::API_SERVER_REQUIRES_AUTHENTICATION)?)
    }

    /// The current token (rotation applies to a running server at once).
    pub fn token(&self) -> Result<String, StoreError> {
        discovery::current_token(&self.store)
    }
}
