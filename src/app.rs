//! The assembled application: data folder, store and the settings the routes share.
//! Built once by `verbatim serve` (real or simulated backends) and by tests.

use std::sync::Arc;

use crate::discovery::{self, DataDir};
use crate::store::{Store, StoreError, preferences};

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
}

/// Shared state of the running application.
pub struct App {
    pub data_dir: DataDir,
    pub store: Store,
    pub backends: Backends,
    require_token_flag: bool,
}

impl App {
    pub fn build(config: Config) -> Result<Arc<App>, StoreError> {
        let store = config.data_dir.open_store()?;
        let expired = store.apply_history_retention()?;
        if expired > 0 {
            tracing::info!("removed {expired} history entries outside the retention window");
        }
        // Create the token now so the discovery file and the auth check agree from the start.
        discovery::token(&store)?;
        Ok(Arc::new(App {
            data_dir: config.data_dir,
            store,
            backends: config.backends,
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
        discovery::token(&self.store)
    }
}
