//! `/v1/prompt-actions`: the actions listed, created or changed, deleted, and run on a text.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::upper_uuid;

/// A prompt action as the routes show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Action {
    #[serde(serialize_with = "upper_uuid")]
    pub id: Uuid,
    pub name: String,
    pub prompt: String,
    pub enabled: bool,
}

/// `GET /v1/prompt-actions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionList {
    pub actions: Vec<Action>,
    pub count: usize,
}

/// `PUT /v1/prompt-actions`: a new action (no `id`) or the changes to action `id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PutAction {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub name: String,
    pub prompt: String,
    /// Absent: a new action is enabled, a changed one keeps its state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// `DELETE /v1/prompt-actions?id=`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deleted {
    pub deleted: bool,
}

/// `POST /v1/prompt-actions/run`: the action by `id` or `name`, and the text it runs on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunAction {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub text: String,
}

/// What a run made: the action's text, the action, the model that answered and the seconds
/// the chat call took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionRun {
    pub text: String,
    pub action: Action,
    pub model: String,
    pub processing_time: f64,
}
