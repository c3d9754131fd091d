//! The scenario's `[chat]`: sim mode's chat provider for prompt actions, checked.

use serde::Deserialize;

use super::check::Check;
use super::{ChatFault, ChatSpec, ScenarioError};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawChat {
    provider: Option<String>,
    model: Option<String>,
    latency_seconds: Option<f64>,
    answers: Option<std::collections::BTreeMap<String, String>>,
    fault: Option<String>,
}

impl Check<'_> {
    pub(super) fn chat(&self, raw: Option<RawChat>) -> Result<ChatSpec, ScenarioError> {
        let mut spec = ChatSpec::default();
        let Some(raw) = raw else { return Ok(spec) };
        spec.use_preferences = match raw.provider.as_deref() {
            None | Some("built-in") => false,
            Some("preferences") => true,
            Some(other) => {
                return Err(self.error(
                    "chat.provider",
                    format!("'{other}' is not one of built-in, preferences"),
                ));
            }
        };
        if let Some(model) = raw.model {
            if model.trim().is_empty() {
                return Err(self.error("chat.model", "must not be empty"));
            }
            spec.model = model;
        }
        if let Some(seconds) = raw.latency_seconds {
            spec.latency_seconds = self.seconds("chat.latency_seconds", seconds)?;
        }
        spec.answers = raw
            .answers
            .unwrap_or_default()
            .into_iter()
            .map(|(name, text)| (name.trim().to_lowercase(), text))
            .collect();
        if let Some(fault) = raw.fault {
            spec.fault = Some(ChatFault::parse(&fault).ok_or_else(|| {
                self.error(
                    "chat.fault",
                    format!("'{fault}' is not one of {}", ChatFault::NAMES.join(", ")),
                )
            })?);
        }
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use crate::{ChatFault, Scenario};

    #[test]
    fn the_chat_section_is_read_and_bad_values_name_their_key() {
        let scenario = Scenario::parse(
            "[chat]\nmodel = \"m\"\nlatency_seconds = 0.5\nfault = \"empty\"\n\
             answers = { \" Fix Grammar \" = \"Fixed.\" }\n",
        )
        .unwrap();
        let chat = scenario.chat;
        assert_eq!((chat.model.as_str(), chat.latency_seconds), ("m", 0.5));
        assert_eq!(chat.fault, Some(ChatFault::Empty));
        assert_eq!(chat.answers["fix grammar"], "Fixed.");
        assert!(!chat.use_preferences);
        assert!(
            Scenario::parse("[chat]\nprovider = \"preferences\"\n")
                .unwrap()
                .chat
                .use_preferences
        );
        for (text, key) in [
            ("[chat]\nfault = \"slow\"\n", "chat.fault"),
            ("[chat]\nprovider = \"ollama\"\n", "chat.provider"),
            ("[chat]\nlatency_seconds = -1\n", "chat.latency_seconds"),
            ("[chat]\nmodel = \" \"\n", "chat.model"),
        ] {
            let err = Scenario::parse(text).unwrap_err();
            assert_eq!(err.key(), Some(key), "{text}: {err}");
        }
    }
}
