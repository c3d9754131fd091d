//! Settings backups: the export document, the import's refusals (415, 400 with the first
//! problem, all or nothing), and round trips that change nothing (merge, never overwrite).

use serde_json::{Value, json};

use crate::context::Exchange;
use crate::expect::{Kind, fields, fresh_uuid, marker};
use crate::http::{Body, Request};
use crate::{Check, Ctx, Needs, Step, skip};

const BACKUP: &str = "Settings backup";
const SECOND: &str = "Additions (second wave)";
const INVALID: &str = "The document is not a valid Verbatim settings backup.";
const CATEGORIES: &[&str] = &[
    "workflows",
    "dictionaryEntries",
    "snippets",
    "promptActions",
    "profiles",
    "hotkeys",
    "plugins",
    "history",
];

/// A backup document holding only `history` and `workflows`.
pub fn document(history: Vec<Value>, workflows: Vec<Value>) -> Value {
    json!({
        "schemaVersion": 1, "exportedAt": chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        "appVersion": "conformance-kit", "workflows": workflows, "dictionaryEntries": [], "snippets": [],
        "promptActions": [], "profiles": [], "hotkeys": [], "plugins": [], "history": history, "preferences": {}
    })
}

/// `POST /v1/settings/import` of `document`, expecting 200 and the Import summary.
pub fn import(cx: &mut Ctx, document: &Value) -> Step<(Exchange, Value)> {
    let ex = cx.send(Request::new("POST", "/v1/settings/import").json(document))?;
    let summary = ex.ok_json()?;
    summary_fields(&ex, &summary)?;
    Ok((ex, summary))
}

fn summary_fields(ex: &Exchange, summary: &Value) -> Step {
    use Kind::*;
    let mut spec: Vec<(&str, Kind)> = [
        "workflowsImported",
        "dictionaryImported",
        "dictionarySkipped",
        "snippetsImported",
        "snippetsSkipped",
        "promptActionsImported",
        "profilesImported",
        "hotkeysApplied",
        "hotkeysSkipped",
        "pluginsInstalled",
        "pluginsSkipped",
        "historyImported",
        "historySkippedByRetention",
        "preferencesApplied",
    ]
    .iter()
    .map(|name| (*name, Int))
    .collect();
    spec.extend([
        ("pluginsRegistryFetchFailed", Bool),
        ("updateChannelApplied", Bool),
        ("preferencesSkipped?", Arr),
    ]);
    fields(ex, summary, "Import summary", &spec)
}

fn export(cx: &mut Ctx) -> Step<(Exchange, Value)> {
    cx.get_json("/v1/settings/export")
}

fn invalid(cx: &mut Ctx, document: &Value) -> Step<(Exchange, String)> {
    let ex = cx.send(Request::new("POST", "/v1/settings/import").json(document))?;
    let message = ex.error_starting(400, "bad_request", INVALID)?;
    Ok((ex, message))
}

fn sizes(export: &Value) -> Vec<usize> {
    CATEGORIES
        .iter()
        .map(|c| export[c].as_array().map_or(0, Vec::len))
        .collect()
}

pub fn checks() -> Vec<Check> {
    vec![
        Check::new(
            "backup.export-fields",
            (
                BACKUP,
                "`{schemaVersion:1, exportedAt, appVersion, workflows, dictionaryEntries, snippets, promptActions, profiles, hotkeys, plugins, history, updateChannel?, preferences}`",
            ),
            Needs::ACCESS,
            |cx| {
                let (ex, doc) = export(cx)?;
                use Kind::*;
                let mut spec = vec![
                    ("schemaVersion", Int),
                    ("exportedAt", Time),
                    ("appVersion", Str),
                    ("updateChannel?", Str),
                    ("preferences", Obj),
                ];
                spec.extend(CATEGORIES.iter().map(|c| (*c, Arr)));
                fields(&ex, &doc, "backup document", &spec)?;
                ex.ensure(
                    doc["schemaVersion"] == 1,
                    "schemaVersion 1",
                    &doc["schemaVersion"],
                )
            },
        ),
        Check::new(
            "backup.export-machine-settings",
            (
                SECOND,
                "Backups never carry `modelDownloadBaseUrl` or `dictationInsertion`",
            ),
            Needs::ACCESS,
            |cx| {
                let (ex, doc) = export(cx)?;
                let carried: Vec<&str> = ["modelDownloadBaseUrl", "dictationInsertion"]
                    .into_iter()
                    .filter(|k| doc["preferences"].get(k).is_some())
                    .collect();
                ex.ensure(
                    carried.is_empty(),
                    "no modelDownloadBaseUrl or dictationInsertion in preferences",
                    format!("{carried:?}"),
                )
            },
        ),
        Check::new(
            "backup.import-content-type",
            (
                BACKUP,
                "`POST /v1/settings/import` requires `Content-Type: application/json` (else 415)",
            ),
            Needs::ACCESS,
            |cx| {
                let body = Body::Bytes {
                    bytes: document(vec![], vec![]).to_string().into_bytes(),
                    content_type: "application/x-www-form-urlencoded".into(),
                    label: "backup.json".into(),
                };
                cx.send(Request::new("POST", "/v1/settings/import").body(body))?
                    .error(415, "unsupported_media_type")
                    .map(drop)
            },
        ),
        Check::new(
            "backup.import-invalid",
            (
                BACKUP,
                "invalid document 400 `The document is not a valid Verbatim settings backup.`",
            ),
            Needs::ACCESS,
            |cx| invalid(cx, &json!({"conformance_kit": "not a backup"})).map(drop),
        ),
        Check::new(
            "backup.import-first-problem",
            (
                SECOND,
                "followed by the first problem (`workflows[0].id: expected a UUID.`)",
            ),
            Needs::ACCESS,
            |cx| {
                let (ex, message) =
                    invalid(cx, &document(vec![], vec![json!({"id": "not-a-uuid"})]))?;
                let expected = format!("{INVALID} workflows[0].id: expected a UUID.");
                ex.ensure(
                    message == expected,
                    format!("{expected:?}"),
                    format!("{message:?}"),
                )
            },
        ),
        Check::new(
            "backup.import-all-or-nothing",
            (
                BACKUP,
                "the import runs in one transaction (all or nothing)",
            ),
            Needs::ACCESS,
            |cx| {
                let word = marker();
                let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string();
                let entry = json!({"id": fresh_uuid(), "text": word, "rawText": word, "timestamp": now, "duration": 1.0, "engine": "whisper", "wordsCount": 1});
                invalid(
                    cx,
                    &document(vec![entry], vec![json!({"id": "not-a-uuid"})]),
                )?;
                let (ex, page) = cx.get_json(&format!("/v1/history?q={word}"))?;
                ex.ensure(
                    page["total"] == 0,
                    "nothing of a refused document imported",
                    &page,
                )
            },
        ),
        Check::new(
            "backup.import-summary",
            (BACKUP, "answers the Import summary of the spec"),
            Needs::WRITES,
            |cx| import(cx, &document(vec![], vec![])).map(drop),
        ),
        Check::new(
            "backup.round-trip",
            (BACKUP, "Never overwrites: ... duplicates skipped"),
            Needs::WRITES,
            |cx| {
                let (_, before) = export(cx)?;
                let (ex, summary) = import(cx, &before)?;
                let added: Vec<&str> = [
                    "workflowsImported",
                    "dictionaryImported",
                    "historyImported",
                    "profilesImported",
                    "promptActionsImported",
                    "snippetsImported",
                ]
                .into_iter()
                .filter(|k| summary[k] != 0)
                .collect();
                ex.ensure(
                    added.is_empty(),
                    "importing the server's own export adds nothing",
                    format!("{added:?} in {summary}"),
                )?;
                let (ex, after) = export(cx)?;
                ex.ensure(
                    sizes(&after) == sizes(&before),
                    format!(
                        "the same number of items per category {CATEGORIES:?}: {:?}",
                        sizes(&before)
                    ),
                    format!("{:?}", sizes(&after)),
                )
            },
        ),
        Check::new(
            "backup.never-overwrites",
            (BACKUP, "Never overwrites"),
            Needs::WRITES,
            |cx| {
                let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string();
                let (first, second) = (marker(), marker());
                let id = fresh_uuid();
                let entry = |text: &str| json!({"id": id, "text": text, "rawText": text, "timestamp": now, "duration": 1.0, "engine": "whisper", "wordsCount": 1});
                import(cx, &document(vec![entry(&first)], vec![]))?;
                let outcome = import(cx, &document(vec![entry(&second)], vec![])).and_then(
                    |(ex, summary)| {
                        ex.ensure(
                            summary["historyImported"] == 0,
                            "historyImported 0 for an entry already there",
                            &summary,
                        )?;
                        let (ex, page) = cx.get_json(&format!("/v1/history?q={first}"))?;
                        ex.ensure(page["total"] == 1, "the first text kept", &page)
                    },
                );
                let cleanup = cx.send(Request::new("DELETE", &format!("/v1/history?id={id}")));
                outcome?;
                cleanup?.ok_json().map(drop)
            },
        ),
        Check::new(
            "backup.retention-not-shortened",
            (
                SECOND,
                "A `historyRetentionDays` shorter than the current one is not applied ... `preferencesSkipped: [name]`",
            ),
            Needs::WRITES,
            |cx| {
                let (_, before) = export(cx)?;
                let current = before["preferences"]["historyRetentionDays"]
                    .as_u64()
                    .unwrap_or(0);
                let shorter = match current {
                    0 => 1,
                    1 => return skip("history is kept for 1 day: no shorter retention to offer"),
                    days => days - 1,
                };
                let mut doc = document(vec![], vec![]);
                doc["preferences"] = json!({"historyRetentionDays": shorter});
                let (ex, summary) = import(cx, &doc)?;
                let skipped = summary["preferencesSkipped"]
                    .as_array()
                    .is_some_and(|s| s.iter().any(|n| n == "historyRetentionDays"));
                ex.ensure(
                    skipped,
                    "preferencesSkipped lists historyRetentionDays",
                    &summary,
                )?;
                let (ex, after) = export(cx)?;
                ex.ensure(
                    after["preferences"]["historyRetentionDays"]
                        == before["preferences"]["historyRetentionDays"],
                    "historyRetentionDays unchanged",
                    &after["preferences"],
                )
            },
        ),
    ]
}
