//! The models a chat provider serves (`GET {chatBaseUrl}/models`, OpenAI's list, which Ollama,
//! llama.cpp's server and LM Studio answer too): `verbatim doctor` says whether the provider is
//! up and serves `chatModel`.

use std::time::Duration;

use serde_json::Value;

use super::{ChatSettings, NotReady};
use crate::net::{HttpClient, Timeouts};

/// Why the list could not be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListError {
    #[error("{0}")]
    NotReady(#[from] NotReady),
    #[error("cannot reach {base}: {cause}")]
    Unreachable { base: String, cause: String },
    #[error("{base} answered {status} to GET /models")]
    Status { base: String, status: u16 },
    #[error("{base} answered GET /models with no model list")]
    Malformed { base: String },
}

impl ChatSettings {
    /// The ids of the models the provider serves, asked with `timeout`.
    pub fn served_models(&self, timeout: Duration) -> Result<Vec<String>, ListError> {
        let url = self.address("models")?;
        let base = self.base_url.clone();
        let client = HttpClient::new(Timeouts {
            connect: timeout,
            read: timeout,
            total: Some(timeout),
        });
        let authorization = self.authorization();
        let headers: Vec<(&str, &str)> = authorization
            .as_deref()
            .map(|value| ("authorization", value))
            .into_iter()
            .collect();
        let fetched = client
            .get(&url, &headers)
            .map_err(|e| ListError::Unreachable {
                base: base.clone(),
                cause: e.to_string(),
            })?;
        let status = fetched.response.status().as_u16();
        if !(200..300).contains(&status) {
            return Err(ListError::Status { base, status });
        }
        let body = fetched
            .response
            .into_body()
            .with_config()
            .limit(1024 * 1024)
            .read_to_vec()
            .map_err(|_| ListError::Malformed { base: base.clone() })?;
        let list: Value = serde_json::from_slice(&body)
            .map_err(|_| ListError::Malformed { base: base.clone() })?;
        let models = list
            .get("data")
            .and_then(Value::as_array)
            .ok_or(ListError::Malformed { base })?;
        Ok(models
            .iter()
            .filter_map(|m| m.get("id").and_then(Value::as_str))
            .map(str::to_string)
            .collect())
    }
}

/// Whether `served` holds `wanted`: the same id, or the one Ollama means by a name without a
/// tag (`llama3.2` is `llama3.2:latest`).
pub fn serves(served: &[String], wanted: &str) -> bool {
    let latest = format!("{wanted}:latest");
    served.iter().any(|id| *id == wanted || *id == latest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_is_served_by_its_id_or_with_ollamas_tag() {
        let served = vec!["llama3.2:latest".to_string(), "qwen2.5:0.5b".to_string()];
        assert!(serves(&served, "llama3.2"));
        assert!(serves(&served, "llama3.2:latest"));
        assert!(serves(&served, "qwen2.5:0.5b"));
        assert!(!serves(&served, "qwen2.5"));
        assert!(!serves(&served, "llama3"));
    }
}
