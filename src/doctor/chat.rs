//! The chat provider prompt actions run through: not set up (actions are optional), set up
//! wrongly, unreachable, or up and serving `chatModel`. Never a failure: dictation works
//! without it, and a failed action keeps the transcript.

use std::time::Duration;

use super::Finding;
use crate::chat::models::serves;
use crate::chat::{ChatSettings, NotReady};

const NAME: &str = "prompt actions";
const TIMEOUT: Duration = Duration::from_secs(3);

pub fn chat(settings: Option<&ChatSettings>) -> Finding {
    let Some(settings) = settings.filter(|s| s.endpoint() != Err(NotReady::NoModel)) else {
        return Finding::ok(
            NAME,
            "no chat model set: actions are off (`verbatim config set chatModel NAME`, docs/prompt-actions.md)",
        );
    };
    let base = &settings.base_url;
    let served = match settings.served_models(TIMEOUT) {
        Ok(served) => served,
        Err(err) => {
            return Finding::warn(
                NAME,
                format!("{err}: actions keep the text as transcribed"),
                "start the provider (Ollama: `ollama serve`) or `verbatim config set chatBaseUrl URL`",
            );
        }
    };
    if serves(&served, &settings.model) {
        Finding::ok(NAME, format!("{base} serves '{}'", settings.model))
    } else {
        let listed = if served.is_empty() {
            "none".to_string()
        } else {
            served.join(", ")
        };
        Finding::warn(
            NAME,
            format!(
                "{base} does not serve '{}' (it serves: {listed})",
                settings.model
            ),
            format!(
                "`ollama pull {}`, or `verbatim config set chatModel NAME` with one it serves",
                settings.model
            ),
        )
    }
}
