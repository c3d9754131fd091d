//! Sim mode's application context: always the scenario's (or empty on hosts without a display).

use super::{AppContext, AppContextSource};

/// Always the same context: sim mode's scenario context, or empty on hosts without a display.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StaticContext(pub AppContext);

impl AppContextSource for StaticContext {
    fn current(&self) -> AppContext {
        self.0.clone()
    }
}
