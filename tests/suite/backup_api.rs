//! `GET /v1/settings/export` and `POST /v1/settings/import` in process: round trip, the merge
//! rules, the plugin registry, invalid documents (nothing changes), and arbitrary JSON.

use crate::common;

use axum::body::Body;
use axum::http::StatusCode;
use common::{TestApp, call, request, sample_backup, send, start_registry};
use proptest::prelude::*;
use serde_json::{Value, json};
use verbatim::store::{PrefValue, preferences};
use verbatim::wire::ImportSummary;

fn with_registry(url: &str) -> TestApp {
    let t = TestApp::new();
    t.app
        .store
        .set_pref(
            &preferences::PLUGIN_REGISTRY_URL,
            &PrefValue::Text(url.into()),
        )
        .unwrap();
    t
}

async fn export(t: &TestApp) -> Value {
    let (status, doc) = call(&t.router(), "GET", "/v1/settings/export", None).await;
    assert_eq!(status, StatusCode::OK);
    doc
}

async fn import(t: &TestApp, doc: &Value) -> (StatusCode, Value) {
    call(
        &t.router(),
        "POST",
        "/v1/settings/import",
        Some(doc.clone()),
    )
    .await
}

fn without_exported_at(mut doc: Value) -> Value {
    doc.as_object_mut().unwrap().remove("exportedAt");
    doc
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_import_export_gives_the_same_document() {
    let (_registry, url) = start_registry().await;
    let source = with_registry(&url);
    let (status, summary) = import(&source, &sample_backup(25)).await;
    assert_eq!(status, StatusCode::OK, "{summary}");
    // Changes made through the API travel too.
    call(
        &source.router(),
        "PUT",
        "/v1/dictionary/corrections",
        Some(json!({"original": "colour", "replacement": "color", "caseSensitive": true})),
    )
    .await;
    let first = export(&source).await;
    assert_eq!(first["schemaVersion"], 1);
    assert_eq!(first["history"].as_array().unwrap().len(), 25);
    assert_eq!(
        first["plugins"],
        json!([{"id": "punctuation", "version": "1.2.0", "isEnabled": true}])
    );

    let fresh = with_registry(&url);
    let (status, summary) = import(&fresh, &first).await;
    assert_eq!(status, StatusCode::OK, "{summary}");
    let second = export(&fresh).await;
    assert_ne!(first["exportedAt"], Value::Null);
    assert_eq!(without_exported_at(second), without_exported_at(first));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_second_import_of_a_document_skips_everything() {
    let (_registry, url) = start_registry().await;
    let t = with_registry(&url);
    let doc = sample_backup(10);
    let (status, first) = import(&t, &doc).await;
    assert_eq!(status, StatusCode::OK);
    let first: ImportSummary = serde_json::from_value(first).unwrap();
    assert_eq!(first.workflows_imported, 2);
    assert_eq!(
        (first.dictionary_imported, first.dictionary_skipped),
        (3, 0)
    );
    assert_eq!((first.snippets_imported, first.snippets_skipped), (1, 0));
    assert_eq!(first.prompt_actions_imported, 1);
    assert_eq!(first.profiles_imported, 1);
    assert_eq!((first.hotkeys_applied, first.hotkeys_skipped), (2, 0));
    assert_eq!((first.plugins_installed, first.plugins_skipped), (1, 1));
    assert!(!first.plugins_registry_fetch_failed);
    assert_eq!(
        (first.history_imported, first.history_skipped_by_retention),
        (10, 0)
    );
    assert!(first.update_channel_applied);
    // The backup's 365-day window would shorten this store's keep-forever one.
    assert_eq!(first.preferences_applied, 0);
    assert_eq!(first.preferences_skipped, vec!["historyRetentionDays"]);

    let (status, second) = import(&t, &doc).await;
    assert_eq!(status, StatusCode::OK);
    let keys: Vec<String> = second.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys.len(), 17, "every summary field is present: {keys:?}");
    let second: ImportSummary = serde_json::from_value(second).unwrap();
    assert_eq!(second.workflows_imported, 0);
    assert_eq!(second.dictionary_imported, 0);
    assert_eq!(second.dictionary_skipped, 3);
    assert_eq!(second.snippets_imported, 0);
    assert_eq!(second.snippets_skipped, 1);
    assert_eq!(second.prompt_actions_imported, 0);
    assert_eq!(second.profiles_imported, 0);
    assert_eq!(second.hotkeys_applied, 0);
    assert_eq!(second.hotkeys_skipped, 2);
    assert_eq!(second.plugins_installed, 0);
    assert_eq!(second.plugins_skipped, 2);
    assert!(!second.plugins_registry_fetch_failed);
    assert_eq!(second.history_imported, 0);
    assert_eq!(second.history_skipped_by_retention, 0);
    assert!(!second.update_channel_applied);
    assert_eq!(second.preferences_applied, 0);
    assert_eq!(t.app.store.workflows().unwrap().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn imports_merge_without_overwriting() {
    let t = TestApp::new();
    let store = &t.app.store;
    // The destination already has a workflow, a term, a hotkey in one slot, a preference
    // and a 7-day retention window.
    call(
        &t.router(),
        "PUT",
        "/v1/dictionary/terms",
        Some(json!({"terms": ["KUBERNETES"]})),
    )
    .await;
    store
        .set_pref(&preferences::HISTORY_RETENTION_DAYS, &PrefValue::Int(7))
        .unwrap();
    store
        .set_pref(
            &preferences::UPDATE_CHANNEL,
            &PrefValue::Text("stable".into()),
        )
        .unwrap();
    let mine = verbatim::store::Workflow {
        id: uuid::Uuid::new_v4(),
        name: "Mine".into(),
        priority: 10,
        ..Default::default()
    };
    store.add_workflow(&mine).unwrap();
    let mut doc = sample_backup(0);
    doc["hotkeys"] = json!([
        {"slot": "dictation.toggle", "shortcut": "Ctrl+Alt+Space"},
        {"slot": "dictation.toggle", "shortcut": "Ctrl+Alt+D"},
        {"slot": "recorder.toggle", "shortcut": "ctrl+alt+space"}
    ]);
    let old = (chrono::Utc::now() - chrono::Duration::days(30))
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let recent = (chrono::Utc::now() - chrono::Duration::days(1))
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    doc["history"] = json!([
        {"id": uuid::Uuid::new_v4(), "text": "old", "rawText": "old", "timestamp": old, "duration": 1, "engine": "whisper"},
        {"id": uuid::Uuid::new_v4(), "text": "recent", "rawText": "recent", "timestamp": recent, "duration": 1, "engine": "whisper"}
    ]);
    let (status, summary) = import(&t, &doc).await;
    assert_eq!(status, StatusCode::OK, "{summary}");
    let summary: ImportSummary = serde_json::from_value(summary).unwrap();
    // No registry is configured: plugins are skipped and the failure is reported.
    assert!(summary.plugins_registry_fetch_failed);
    assert_eq!((summary.plugins_installed, summary.plugins_skipped), (0, 2));
    assert_eq!(
        (summary.dictionary_imported, summary.dictionary_skipped),
        (2, 1)
    );
    assert_eq!((summary.hotkeys_applied, summary.hotkeys_skipped), (1, 2));
    assert_eq!(
        (
            summary.history_imported,
            summary.history_skipped_by_retention
        ),
        (1, 1)
    );
    assert!(!summary.update_channel_applied);
    assert_eq!(summary.preferences_applied, 0);
    // Kept: the existing spelling, the 7-day window, the channel; workflows appended after mine.
    assert_eq!(store.enabled_terms().unwrap()[0].term, "KUBERNETES");
    assert_eq!(
        store
            .pref_int(&preferences::HISTORY_RETENTION_DAYS)
            .unwrap(),
        7
    );
    let names: Vec<(String, i64)> = store
        .workflows()
        .unwrap()
        .into_iter()
        .map(|w| (w.name, w.priority))
        .collect();
    assert_eq!(
        names,
        vec![
            ("Mine".into(), 10),
            ("Mail".into(), 11),
            ("Docs".into(), 15)
        ]
    );
    let hotkeys = store.hotkeys().unwrap();
    assert_eq!(hotkeys.len(), 1);
    assert_eq!(hotkeys[0].shortcut, "Ctrl+Alt+Space");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_registry_is_reported_and_the_rest_imported() {
    let t = with_registry(&format!("http://127.0.0.1:{}", common::closed_port()));
    let (status, summary) = import(&t, &sample_backup(3)).await;
    assert_eq!(status, StatusCode::OK);
    let summary: ImportSummary = serde_json::from_value(summary).unwrap();
    assert!(summary.plugins_registry_fetch_failed);
    assert_eq!((summary.plugins_installed, summary.plugins_skipped), (0, 2));
    assert_eq!(summary.workflows_imported, 2);
    assert_eq!(summary.history_imported, 3);
    assert!(t.app.store.plugins().unwrap().is_empty());
}

/// Invalid documents and the problem each must name.
fn invalid_documents() -> Vec<(Value, &'static str)> {
    let with = |pointer: &str, value: Value| {
        let mut doc = sample_backup(2);
        *doc.pointer_mut(pointer).unwrap() = value;
        doc
    };
    let without = |key: &str| {
        let mut doc = sample_backup(2);
        doc.as_object_mut().unwrap().remove(key);
        doc
    };
    vec![
        (json!([1, 2]), "The top level must be a JSON object."),
        (
            without("schemaVersion"),
            "schemaVersion: required field is missing.",
        ),
        (
            with("/schemaVersion", json!(2)),
            "schemaVersion: expected 1, the only schema version this Verbatim reads.",
        ),
        (
            with("/workflows", json!({})),
            "workflows: expected an array.",
        ),
        (
            with("/workflows/1/priority", json!("high")),
            "workflows[1].priority: expected an integer.",
        ),
        (
            with("/workflows/0/id", json!("mail")),
            "workflows[0].id: expected a UUID.",
        ),
        (
            with("/workflows/0/languageMode", json!("french")),
            "workflows[0].languageMode: expected one of \"inherit\", \"auto\", \"exact\", \"multiple\".",
        ),
        (
            with("/dictionaryEntries/2/type", json!("rule")),
            "dictionaryEntries[2].type: expected \"term\" or \"correction\".",
        ),
        (
            with("/dictionaryEntries/0/term", json!(" ")),
            "dictionaryEntries[0].term: must not be empty.",
        ),
        (
            with("/snippets/0", json!("text")),
            "snippets[0]: expected an object.",
        ),
        (
            with("/promptActions/0/isEnabled", json!("yes")),
            "promptActions[0].isEnabled: expected true or false.",
        ),
        (
            with("/profiles/0/bundleIdentifiers/0", json!(7)),
            "profiles[0].bundleIdentifiers[0]: expected a string.",
        ),
        (
            with("/hotkeys/1/shortcut", Value::Null),
            "hotkeys[1].shortcut: required field is missing.",
        ),
        (
            with("/plugins/0/id", json!("../etc")),
            "plugins[0].id: expected 1 to 128 letters, digits, '.', '_' or '-', not starting with '.'.",
        ),
        (
            with("/history/1/timestamp", json!("yesterday")),
            "history[1].timestamp: expected an ISO 8601 timestamp such as 2026-04-13T10:15:00Z.",
        ),
        (
            with("/history/0/duration", json!("long")),
            "history[0].duration: expected a number.",
        ),
        (
            with("/updateChannel", json!("nightly")),
            "updateChannel: expected \"stable\" or \"beta\".",
        ),
        (
            with("/preferences/historyRetentionDays", json!(-1)),
            "preferences.historyRetentionDays: expected a whole number from 0 to 36500.",
        ),
        (
            with("/preferences", json!([])),
            "preferences: expected an object.",
        ),
    ]
}

#[tokio::test]
async fn invalid_documents_are_refused_naming_the_first_problem_and_change_nothing() {
    let t = TestApp::new();
    let before = without_exported_at(export(&t).await);
    for (doc, problem) in invalid_documents() {
        let (status, body) = import(&t, &doc).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{problem}");
        assert_eq!(
            body["error"]["message"],
            format!("The document is not a valid Verbatim settings backup. {problem}")
        );
        assert_eq!(without_exported_at(export(&t).await), before, "{problem}");
    }
}

#[tokio::test]
async fn the_import_needs_json_and_refuses_malformed_or_deep_documents() {
    let t = TestApp::new();
    let router = t.router();
    let doc = sample_backup(1).to_string();
    for content_type in [
        None,
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
    ] {
        let mut req = request("POST", "/v1/settings/import");
        if let Some(ct) = content_type {
            req = req.header("content-type", ct);
        }
        let (status, _, body) = send(&router, req.body(Body::from(doc.clone())).unwrap()).await;
        assert_eq!(
            status,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "{content_type:?}"
        );
        assert_eq!(body["error"]["code"], "unsupported_media_type");
    }
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let deep_object = format!("{}{}", "{\"a\":".repeat(10_000), "}".repeat(10_000));
    for body in [
        deep,
        deep_object,
        doc[..doc.len() / 2].to_string(),
        String::new(),
        format!("{doc} x"),
    ] {
        let req = request("POST", "/v1/settings/import")
            .header("content-type", "application/json")
            .body(Body::from(body))
            .unwrap();
        let (status, _, answer) = send(&router, req).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with(
                "The document is not a valid Verbatim settings backup. The JSON is malformed:"
            ),
            "{message}"
        );
    }
    assert!(t.app.store.workflows().unwrap().is_empty());
}

#[tokio::test]
async fn a_document_larger_than_the_memory_buffer_is_imported() {
    let t = TestApp::new();
    let doc = sample_backup(10_000);
    assert!(
        doc.to_string().len() > 2 * 1024 * 1024,
        "spooled to disk and past axum's 2 MB default"
    );
    let (status, summary) = import(&t, &doc).await;
    assert_eq!(status, StatusCode::OK, "{summary}");
    assert_eq!(summary["historyImported"], 10_000);
}

// --- Arbitrary JSON never panics the importer; an invalid document changes nothing --------

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        "[a-zA-Z0-9 .:\\-]{0,12}".prop_map(Value::from),
        Just(json!("0F8FAD5B-D9CB-469F-A165-70867728950E")),
        Just(json!("2026-04-13T10:15:00Z")),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("[a-zA-Z]{1,16}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A valid document with one field, anywhere in it, replaced by arbitrary JSON.
fn mutated_document() -> impl Strategy<Value = Value> {
    (any::<prop::sample::Index>(), arbitrary_json()).prop_map(|(index, replacement)| {
        let mut doc = sample_backup(2);
        let mut pointers = Vec::new();
        collect_pointers(&doc, String::new(), &mut pointers);
        let pointer = index.get(&pointers).clone();
        *doc.pointer_mut(&pointer).unwrap() = replacement;
        doc
    })
}

fn collect_pointers(value: &Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                collect_pointers(child, format!("{at}/{key}"), out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                collect_pointers(child, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_json_never_panics_and_an_invalid_document_changes_nothing(
        doc in prop_oneof![arbitrary_json(), mutated_document()]
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let t = TestApp::new();
        runtime.block_on(async {
            call(&t.router(), "PUT", "/v1/dictionary/terms", Some(json!({"terms": ["keep"]}))).await;
            let before = without_exported_at(export(&t).await);
            let (status, body) = import(&t, &doc).await;
            match status {
                StatusCode::OK => {
                    let _: ImportSummary = serde_json::from_value(body).unwrap();
                }
                StatusCode::BAD_REQUEST => {
                    assert!(body["error"]["message"].as_str().unwrap()
                        .starts_with("The document is not a valid Verbatim settings backup. "));
                    assert_eq!(without_exported_at(export(&t).await), before);
                }
                other => panic!("unexpected {other}: {body}"),
            }
        });
    }
}

/// A backup that holds only a one-day retention window must not make existing history expire,
/// at import or at the next start; the summary names what it kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_cannot_shorten_history_retention() {
    let t = TestApp::new();
    let old = chrono::Utc::now() - chrono::Duration::days(30);
    t.app
        .store
        .insert_history(&verbatim::store::NewHistoryEntry {
            text: "kept".into(),
            raw_text: "kept".into(),
            timestamp: Some(old),
            engine: "whisper".into(),
            ..Default::default()
        })
        .unwrap();
    let doc = json!({"schemaVersion": 1, "preferences": {"historyRetentionDays": 1}});
    let (status, summary) = import(&t, &doc).await;
    assert_eq!(status, StatusCode::OK, "{summary}");
    assert_eq!(
        summary["preferencesSkipped"],
        json!(["historyRetentionDays"])
    );
    assert_eq!(summary["preferencesApplied"], 0);
    // The next start applies the retention window in force: history is still whole.
    let data_dir = t.app.data_dir.clone();
    drop(t.app);
    let restarted = verbatim::app::App::build(verbatim::app::Config::new(
        data_dir,
        verbatim::app::Backends::Simulated,
        false,
    ))
    .unwrap();
    let page = restarted
        .store
        .history_page(&verbatim::store::HistoryQuery::default())
        .unwrap();
    assert_eq!(page.total, 1);
}
