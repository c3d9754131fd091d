//! Prompt actions run through one OpenAI-compatible chat provider per machine (Ollama by
//! default; llama.cpp's server, LM Studio and hosted providers speak the same API): its address,
//! model and timeout are preferences a settings backup cannot set, its API key a secret that is
//! never exported, logged or echoed and is sent only over HTTPS or to this machine. The call goes
//! through the download stack ([`crate::net`]: proxies, the system's certificate authorities).
//! An action is checked ([`prepare`]: it exists, is enabled, a provider is set) before any
//! engine work; a failed run says in one sentence what failed and what to check, and the caller
//! keeps the text it had.

pub mod completion;
pub mod models;
mod replay;

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use url::{Host, Url};

use crate::cancel::Cancel;
use crate::net::{HttpClient, NetError, Timeouts};
use crate::store::preferences::{CHAT_BASE_URL, CHAT_MODEL, CHAT_TIMEOUT_SECONDS};
use crate::store::prompt_actions::Found;
use crate::store::{PrefValue, PromptAction, Store, StoreError};
use completion::AnswerError;

/// The secret that holds the provider's API key (`verbatim config set-secret chatApiKey`).
pub const API_KEY_SECRET: &str = "chatApiKey";
/// The most of an error answer read for its message.
const MAX_ERROR_BYTES: u64 = 64 * 1024;
/// Chat calls under way at once, on one server: each holds a blocking thread for up to
/// `chatTimeoutSeconds`, so many clients asking a slow provider must not take the threads the
/// store's work runs on.
pub const MAX_CALLS_AT_ONCE: usize = 8;

/// The chat calls under way on one server.
#[derive(Debug, Clone, Default)]
pub struct Calls(Arc<std::sync::atomic::AtomicUsize>);

/// A chat call's place among the [`MAX_CALLS_AT_ONCE`]; given back on drop.
struct CallSlot(Calls);

impl Calls {
    fn take(&self) -> Result<CallSlot, ChatError> {
        use std::sync::atomic::Ordering;
        self.0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < MAX_CALLS_AT_ONCE).then_some(n + 1)
            })
            .map(|_| CallSlot(self.clone()))
            .map_err(|_| ChatError::Busy)
    }
}

impl Drop for CallSlot {
    fn drop(&mut self) {
        (self.0).0.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

/// Opening a connection never waits longer than this, whatever the timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The provider as this machine's preferences set it.
#[derive(Clone)]
pub struct ChatSettings {
    pub base_url: String,
    pub model: String,
    pub timeout: Duration,
    key: Option<String>,
}

impl std::fmt::Debug for ChatSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatSettings")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("timeout", &self.timeout)
            .field("key", &self.key.as_ref().map(|_| "(set)"))
            .finish()
    }
}

impl ChatSettings {
    pub fn load(store: &Store) -> Result<ChatSettings, StoreError> {
        let text = |value: PrefValue| match value {
            PrefValue::Text(text) => text.trim().to_string(),
            _ => String::new(),
        };
        let seconds = match store.pref(&CHAT_TIMEOUT_SECONDS)? {
            PrefValue::Int(seconds) => seconds.max(1) as u64,
            _ => 30,
        };
        let key = store
            .secret(API_KEY_SECRET)?
            .map(|key| key.trim().to_string())
            .filter(|key| !key.is_empty());
        Ok(ChatSettings {
            base_url: text(store.pref(&CHAT_BASE_URL)?),
            model: text(store.pref(&CHAT_MODEL)?),
            timeout: Duration::from_secs(seconds),
            key,
        })
    }

    /// Whether an API key is set.
    pub fn has_key(&self) -> bool {
        self.key.is_some()
    }

    /// The completions address, or why no action can run.
    pub fn endpoint(&self) -> Result<Url, NotReady> {
        if self.model.is_empty() {
            return Err(NotReady::NoModel);
        }
        self.address("chat/completions")
    }

    /// `tail` under the provider's base address (its `/v1`), or why it cannot be used.
    fn address(&self, tail: &str) -> Result<Url, NotReady> {
        let bad = || NotReady::BadUrl {
            url: crate::wire::echo(&self.base_url).to_string(),
        };
        let base = Url::parse(&self.base_url).map_err(|_| bad())?;
        if !matches!(base.scheme(), "http" | "https") || base.host().is_none() {
            return Err(bad());
        }
        if self.key.is_some() && base.scheme() != "https" && !is_loopback(&base) {
            return Err(NotReady::KeyInClear {
                url: base.to_string(),
            });
        }
        let path = format!("{}/{tail}", base.path().trim_end_matches('/'));
        let mut url = base;
        url.set_path(&path);
        Ok(url)
    }

    /// The `Authorization` header's value, when a key is set.
    fn authorization(&self) -> Option<String> {
        self.key.as_ref().map(|key| format!("Bearer {key}"))
    }
}

/// Whether `url` names this machine.
fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        None => false,
    }
}

/// Why prompt actions cannot run with these settings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotReady {
    #[error(
        "No chat model is set for prompt actions: `verbatim config set chatModel NAME` sets one \
         your provider serves (for example llama3.2 on Ollama)"
    )]
    NoModel,
    #[error(
        "chatBaseUrl '{url}' is not an http(s) address: set it to your provider's /v1 address, \
         for example http://127.0.0.1:11434/v1"
    )]
    BadUrl { url: String },
    #[error(
        "The chat API key is sent only over HTTPS or to this machine, and chatBaseUrl is {url}: \
         use an https address, or clear the key with `verbatim config set-secret chatApiKey`"
    )]
    KeyInClear { url: String },
}

/// Why an action was refused before it ran.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("No prompt action has the id or name '{0}': `verbatim actions list` shows them")]
    Unknown(String),
    #[error("Several prompt actions are named '{0}': name the one to run by its id")]
    Several(String),
    #[error("The prompt action '{0}' is disabled: enable it to run it")]
    Disabled(String),
    #[error("{0}")]
    NotReady(#[from] NotReady),
    #[error("{0}")]
    Store(String),
}

/// Where prompt actions go.
#[derive(Debug, Clone)]
pub enum Provider {
    /// The provider the preferences name, over HTTP, with the calls under way.
    Http(Calls),
    /// Sim mode's built-in provider ([`replay`]).
    Replay(Arc<verbatim_sim::ChatSpec>),
}

/// An action checked and ready to run: it exists, is enabled, and the provider is set.
#[derive(Debug, Clone)]
pub struct ReadyAction {
    pub action: PromptAction,
    pub settings: ChatSettings,
    route: Route,
}

impl Default for Provider {
    fn default() -> Provider {
        Provider::Http(Calls::default())
    }
}

/// Where a ready action is sent.
#[derive(Debug, Clone)]
enum Route {
    Http(Url, Calls),
    Replay(Arc<verbatim_sim::ChatSpec>),
}

/// Looks up the action `key` (an id or a name) and checks it can run on `provider`.
pub fn prepare(store: &Store, provider: &Provider, key: &str) -> Result<ReadyAction, Refused> {
    let store_error = |e: StoreError| Refused::Store(e.to_string());
    let shown = crate::wire::echo(key.trim()).to_string();
    let action = match store.find_prompt_action(key).map_err(store_error)? {
        Found::One(action) => action,
        Found::None => return Err(Refused::Unknown(shown)),
        Found::Several => return Err(Refused::Several(shown)),
    };
    if !action.enabled {
        return Err(Refused::Disabled(action.name));
    }
    let mut settings = ChatSettings::load(store).map_err(store_error)?;
    let route = match provider {
        Provider::Http(calls) => Route::Http(settings.endpoint()?, calls.clone()),
        Provider::Replay(spec) => {
            settings.model = spec.model.clone();
            Route::Replay(spec.clone())
        }
    };
    Ok(ReadyAction {
        action,
        settings,
        route,
    })
}

/// What an action made of a text.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub text: String,
    /// The model that answered (as the provider names it, else the one asked for).
    pub model: String,
    /// Seconds in the chat call.
    pub seconds: f64,
}

/// Why a run gave no text; the message says what failed and what to check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChatError {
    #[error(
        "The chat provider at {base} cannot be reached ({cause}): check that it is running \
         (Ollama: `ollama serve`) or set chatBaseUrl"
    )]
    Unreachable { base: String, cause: String },
    #[error(
        "The chat provider at {base} did not answer within {seconds} s: check that it is running \
         and can load the model, or raise chatTimeoutSeconds"
    )]
    TimedOut { base: String, seconds: u64 },
    #[error("The chat provider answered {status} ({message}): check chatModel '{model}'{key_hint}")]
    Status {
        status: u16,
        message: String,
        model: String,
        key_hint: &'static str,
    },
    #[error(
        "The chat provider's answer is not a chat completion ({why}): check that chatBaseUrl is \
         its OpenAI-compatible /v1 address"
    )]
    Malformed { why: String },
    #[error(
        "The chat provider answered with no text: check that chatModel '{model}' is a chat model"
    )]
    Empty { model: String },
    #[error("The prompt action was stopped: its request ended")]
    Cancelled,
    #[error(
        "{MAX_CALLS_AT_ONCE} prompt actions are already waiting for the chat provider: try again \
         when one has finished"
    )]
    Busy,
}

impl ReadyAction {
    /// Runs the action on `text`, stopped early by `cancel`.
    pub fn run(&self, text: &str, cancel: &Cancel) -> Result<Reply, ChatError> {
        let (endpoint, calls) = match &self.route {
            Route::Http(endpoint, calls) => (endpoint, calls),
            Route::Replay(spec) => {
                let timeout = self.settings.timeout;
                return replay::answer(spec, &self.action, text, timeout, cancel);
            }
        };
        let _slot = calls.take()?;
        let started = Instant::now();
        let settings = &self.settings;
        let base = settings.base_url.clone();
        let client = HttpClient::new(Timeouts {
            connect: settings.timeout.min(CONNECT_TIMEOUT),
            read: settings.timeout,
            total: Some(settings.timeout),
        });
        let authorization = settings.authorization();
        let mut headers = vec![("accept", "text/event-stream, application/json")];
        if let Some(authorization) = &authorization {
            headers.push(("authorization", authorization));
        }
        let body = completion::request_body(&settings.model, &self.action.prompt, text);
        let timed_out = || ChatError::TimedOut {
            base: base.clone(),
            seconds: settings.timeout.as_secs(),
        };
        let response = client
            .post_json(endpoint, &headers, &body)
            .map_err(|err| match err {
                NetError::TimedOut { .. } => timed_out(),
                NetError::Unreachable { cause, .. } => ChatError::Unreachable {
                    base: base.clone(),
                    cause,
                },
                other => ChatError::Unreachable {
                    base: base.clone(),
                    cause: other.to_string(),
                },
            })?;
        let status = response.status().as_u16();
        let content_type = crate::net::header(response.headers(), "content-type")
            .unwrap_or("")
            .to_ascii_lowercase();
        let mut reader = response.into_body().into_reader();
        if !(200..300).contains(&status) {
            let mut bytes = Vec::new();
            let _ = std::io::Read::read_to_end(
                &mut std::io::Read::take(&mut reader, MAX_ERROR_BYTES),
                &mut bytes,
            );
            return Err(ChatError::Status {
                status,
                message: completion::error_message(&bytes),
                model: settings.model.clone(),
                key_hint: if matches!(status, 401 | 403) {
                    " and chatApiKey"
                } else {
                    ""
                },
            });
        }
        let answer =
            completion::read_answer(&content_type, reader, cancel).map_err(|err| match err {
                AnswerError::Malformed(why) => ChatError::Malformed { why },
                AnswerError::Empty => ChatError::Empty {
                    model: settings.model.clone(),
                },
                AnswerError::Cancelled => ChatError::Cancelled,
                AnswerError::Broken(_) if started.elapsed() >= settings.timeout => timed_out(),
                AnswerError::Broken(cause) => ChatError::Unreachable {
                    base: base.clone(),
                    cause,
                },
            })?;
        Ok(Reply {
            text: answer.text,
            model: answer.model.unwrap_or_else(|| settings.model.clone()),
            seconds: started.elapsed().as_secs_f64(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(base_url: &str, model: &str, key: Option<&str>) -> ChatSettings {
        ChatSettings {
            base_url: base_url.into(),
            model: model.into(),
            timeout: Duration::from_secs(30),
            key: key.map(str::to_string),
        }
    }

    #[test]
    fn the_endpoint_is_under_the_base_and_a_key_goes_only_over_https_or_loopback() {
        let ollama = settings("http://127.0.0.1:11434/v1", "llama3.2", None);
        assert_eq!(
            ollama.endpoint().unwrap().as_str(),
            "http://127.0.0.1:11434/v1/chat/completions"
        );
        let slash = settings("https://api.example.com/v1/", "m", Some("k"));
        assert_eq!(
            slash.endpoint().unwrap().as_str(),
            "https://api.example.com/v1/chat/completions"
        );
        for local in [
            "http://localhost:8080/v1",
            "http://[::1]:8080/v1",
            "http://127.0.0.2/v1",
        ] {
            assert!(
                settings(local, "m", Some("k")).endpoint().is_ok(),
                "{local}"
            );
        }
        assert!(matches!(
            settings("http://192.168.1.9:11434/v1", "m", Some("k")).endpoint(),
            Err(NotReady::KeyInClear { .. })
        ));
        assert!(
            settings("http://192.168.1.9:11434/v1", "m", None)
                .endpoint()
                .is_ok()
        );
        assert_eq!(
            settings("http://127.0.0.1/v1", "", None).endpoint(),
            Err(NotReady::NoModel)
        );
        for bad in ["", "ftp://host/v1", "127.0.0.1:11434", "http://"] {
            assert!(
                matches!(
                    settings(bad, "m", None).endpoint(),
                    Err(NotReady::BadUrl { .. })
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_key_never_shows_in_debug_output() {
        let shown = format!("{:?}", settings("https://x/v1", "m", Some("sk-secret")));
        assert!(
            !shown.contains("sk-secret") && shown.contains("(set)"),
            "{shown}"
        );
    }
}
