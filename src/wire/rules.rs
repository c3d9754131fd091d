//! `GET /v1/rules`, `PUT /v1/rules/toggle?id=` and their aliases under `/v1/profiles`: the
//! workflows as rules.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::upper_uuid;

/// A workflow as the rules routes show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    #[serde(serialize_with = "upper_uuid")]
    pub id: Uuid,
    pub name: String,
    pub is_enabled: bool,
    /// Lower numbers come first.
    pub priority: i64,
    pub bundle_identifiers: Vec<String>,
    pub url_patterns: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_language: Option<String>,
    /// `inherit`, `auto`, `exact` or `multiple`.
    pub language_mode: String,
    pub language_hints: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub translation_target_language: Option<String>,
    /// The prompt action dictations under this rule run on their text.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "super::upper_uuid_opt"
    )]
    pub prompt_action_id: Option<Uuid>,
}

/// `GET /v1/rules` (and `/v1/profiles`): the same list under both names, for clients of either.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleList {
    pub rules: Vec<Rule>,
    pub profiles: Vec<Rule>,
}

impl RuleList {
    /// The list under both names.
    pub fn new(rules: Vec<Rule>) -> RuleList {
        RuleList {
            profiles: rules.clone(),
            rules,
        }
    }
}

/// `PUT /v1/rules/toggle?id=`: the rule's new state; its name under every name clients use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Toggled {
    #[serde(serialize_with = "upper_uuid")]
    pub id: Uuid,
    pub name: String,
    pub rule_name: String,
    pub profile_name: String,
    pub is_enabled: bool,
}

impl Toggled {
    /// The answer for rule `id`, named `name`, now `is_enabled`.
    pub fn new(id: Uuid, name: String, is_enabled: bool) -> Toggled {
        Toggled {
            id,
            rule_name: name.clone(),
            profile_name: name.clone(),
            name,
            is_enabled,
        }
    }
}
