//! The dictionary routes: `GET`/`PUT`/`DELETE /v1/dictionary/terms` and
//! `/v1/dictionary/corrections`, their bodies and their answers.

use serde::{Deserialize, Serialize};

/// `GET`/`PUT /v1/dictionary/terms`: the enabled terms, as plain strings and as entries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Terms {
    pub terms: Vec<String>,
    pub term_entries: Vec<TermEntry>,
    pub count: usize,
}

/// One recognition term with its optional similarity threshold (CTC engines, 0..=1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TermEntry {
    pub term: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ctc_min_similarity: Option<f64>,
}

/// `PUT /v1/dictionary/terms`: plain `terms` or `term_entries` (not both); `replace` makes
/// them the whole list.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PutTerms {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terms: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub term_entries: Option<Vec<TermEntry>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replace: Option<bool>,
}

/// `DELETE /v1/dictionary/terms`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeleteTerm {
    pub term: String,
}

/// `DELETE` on either list: whether something was removed, and how many are left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deleted {
    pub deleted: bool,
    pub count: usize,
}

/// `GET`/`PUT /v1/dictionary/corrections`: every correction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Corrections {
    pub corrections: Vec<CorrectionEntry>,
    pub count: usize,
}

/// One correction as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CorrectionEntry {
    pub original: String,
    pub replacement: String,
    pub case_sensitive: bool,
}

/// `PUT /v1/dictionary/corrections`: adds a correction or changes the one for `original`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PutCorrection {
    pub original: String,
    pub replacement: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_sensitive: Option<bool>,
}

/// `DELETE /v1/dictionary/corrections`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeleteCorrection {
    pub original: String,
}
