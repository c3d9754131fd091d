//! Sim mode's chat provider, built in: a `--sim` server never calls out. It answers an action
//! with the text its scenario gives for the action's name, else `[NAME] TEXT`, after the
//! scenario's latency, or fails every call the way the scenario's `fault` says a real provider
//! can; its failures read as a real provider's do (`crates/sim/scenarios/README.md`, `[chat]`).

use std::time::{Duration, Instant};

use verbatim_sim::{ChatFault, ChatSpec};

use super::{ChatError, Reply};
use crate::cancel::Cancel;
use crate::store::PromptAction;

/// Where sim mode's provider says it is, in its failures.
const ADDRESS: &str = "sim://chat";

pub fn answer(
    spec: &ChatSpec,
    action: &PromptAction,
    text: &str,
    timeout: Duration,
    cancel: &Cancel,
) -> Result<Reply, ChatError> {
    let started = Instant::now();
    let latency = Duration::from_secs_f64(spec.latency_seconds);
    while started.elapsed() < latency.min(timeout) {
        if cancel.is_cancelled() {
            return Err(ChatError::Cancelled);
        }
        std::thread::sleep(Duration::from_millis(10).min(latency.min(timeout)));
    }
    if latency > timeout {
        return Err(ChatError::TimedOut {
            base: ADDRESS.into(),
            seconds: timeout.as_secs(),
        });
    }
    if let Some(fault) = spec.fault {
        return Err(match fault {
            ChatFault::Unreachable => ChatError::Unreachable {
                base: ADDRESS.into(),
                cause: "connection refused (the scenario's fault)".into(),
            },
            ChatFault::ErrorStatus => ChatError::Status {
                status: 500,
                message: "the scenario's fault".into(),
                model: spec.model.clone(),
                key_hint: "",
            },
            ChatFault::Malformed => ChatError::Malformed {
                why: "not JSON: the scenario's fault".into(),
            },
            ChatFault::Empty => ChatError::Empty {
                model: spec.model.clone(),
            },
        });
    }
    let text = match spec.answers.get(&action.name.trim().to_lowercase()) {
        Some(answer) => answer.clone(),
        None => format!("[{}] {}", action.name, text.trim()),
    };
    Ok(Reply {
        text,
        model: spec.model.clone(),
        seconds: started.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn action(name: &str) -> PromptAction {
        PromptAction {
            id: uuid::Uuid::new_v4(),
            name: name.into(),
            prompt: "p".into(),
            enabled: true,
        }
    }

    #[test]
    fn answers_are_the_scenarios_or_the_text_under_the_actions_name() {
        let mut spec = ChatSpec::default();
        spec.answers.insert("fix grammar".into(), "Fixed.".into());
        let (timeout, cancel) = (Duration::from_secs(30), Cancel::new());
        let fixed = answer(&spec, &action("Fix Grammar"), "fixd", timeout, &cancel).unwrap();
        assert_eq!(
            (fixed.text.as_str(), fixed.model.as_str()),
            ("Fixed.", "sim-chat")
        );
        let other = answer(&spec, &action("Email"), " hi there ", timeout, &cancel).unwrap();
        assert_eq!(other.text, "[Email] hi there");
    }

    #[test]
    fn faults_and_latency_fail_as_a_real_provider_does() {
        let cancel = Cancel::new();
        let slow = ChatSpec {
            latency_seconds: 2.0,
            ..ChatSpec::default()
        };
        let started = Instant::now();
        let err = answer(&slow, &action("A"), "x", Duration::from_millis(50), &cancel);
        assert!(matches!(err, Err(ChatError::TimedOut { .. })), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(1));
        for (fault, expected) in [
            (ChatFault::Unreachable, "cannot be reached"),
            (ChatFault::ErrorStatus, "answered 500"),
            (ChatFault::Malformed, "not a chat completion"),
            (ChatFault::Empty, "no text"),
        ] {
            let spec = ChatSpec {
                fault: Some(fault),
                ..ChatSpec::default()
            };
            let err = answer(&spec, &action("A"), "x", Duration::from_secs(1), &cancel)
                .unwrap_err()
                .to_string();
            assert!(err.contains(expected), "{fault:?}: {err}");
        }
    }
}
