//! The actual HTTP error answers of the history, dictionary, rules, prompt actions and settings
//! backup routes, each snapshotted under `snapshots/` (status and body).

use crate::common;

use axum::body::Body;
use axum::http::Request;
use common::{TestApp, request, sample_backup, send};
use serde_json::{Value, json};

const UNKNOWN_ID: &str = "7C9E6679-7425-40DE-944B-E07FC1F90AE7";

fn json_body(method: &str, path: &str, body: &str) -> Request<Body> {
    request(method, path)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

fn empty(method: &str, path: &str) -> Request<Body> {
    request(method, path).body(Body::empty()).unwrap()
}

fn import_of(doc: &Value) -> Request<Body> {
    json_body("POST", "/v1/settings/import", &doc.to_string())
}

fn backup_with(pointer: &str, value: Value) -> Value {
    let mut doc = sample_backup(1);
    *doc.pointer_mut(pointer).unwrap() = value;
    doc
}

fn cases() -> Vec<(&'static str, Request<Body>)> {
    vec![
        (
            "history_list_bad_limit",
            empty("GET", "/v1/history?limit=many"),
        ),
        ("history_delete_missing_id", empty("DELETE", "/v1/history")),
        (
            "history_delete_bad_id",
            empty("DELETE", "/v1/history?id=42"),
        ),
        (
            "history_delete_unknown",
            empty("DELETE", &format!("/v1/history?id={UNKNOWN_ID}")),
        ),
        (
            "terms_both",
            json_body(
                "PUT",
                "/v1/dictionary/terms",
                r#"{"terms":["a"],"term_entries":[{"term":"b"}]}"#,
            ),
        ),
        (
            "terms_neither",
            json_body("PUT", "/v1/dictionary/terms", r#"{"replace":true}"#),
        ),
        (
            "terms_wrong_type",
            json_body("PUT", "/v1/dictionary/terms", r#"{"terms":[1]}"#),
        ),
        (
            "terms_malformed",
            json_body("PUT", "/v1/dictionary/terms", r#"{"terms":["a""#),
        ),
        (
            "terms_deep",
            json_body(
                "PUT",
                "/v1/dictionary/terms",
                &format!(r#"{{"extra":{}"#, "[".repeat(10_000)),
            ),
        ),
        (
            "terms_not_an_object",
            json_body("PUT", "/v1/dictionary/terms", r#"["a"]"#),
        ),
        (
            "terms_empty_body",
            json_body("PUT", "/v1/dictionary/terms", ""),
        ),
        (
            "terms_not_json",
            request("PUT", "/v1/dictionary/terms")
                .header("content-type", "text/plain")
                .body(Body::from(r#"{"terms":["a"]}"#))
                .unwrap(),
        ),
        (
            "term_delete_missing_field",
            json_body("DELETE", "/v1/dictionary/terms", "{}"),
        ),
        (
            "correction_empty_original",
            json_body(
                "PUT",
                "/v1/dictionary/corrections",
                r#"{"original":"","replacement":"x"}"#,
            ),
        ),
        (
            "correction_missing_replacement",
            json_body("PUT", "/v1/dictionary/corrections", r#"{"original":"teh"}"#),
        ),
        (
            "rules_toggle_bad_id",
            empty("PUT", "/v1/rules/toggle?id=mail"),
        ),
        (
            "rules_toggle_unknown",
            empty("PUT", &format!("/v1/rules/toggle?id={UNKNOWN_ID}")),
        ),
        (
            "profiles_toggle_unknown",
            empty("PUT", &format!("/v1/profiles/toggle?id={UNKNOWN_ID}")),
        ),
        (
            "prompt_action_delete_bad_id",
            empty("DELETE", "/v1/prompt-actions?id=fix"),
        ),
        (
            "prompt_action_delete_unknown",
            empty("DELETE", &format!("/v1/prompt-actions?id={UNKNOWN_ID}")),
        ),
        (
            "prompt_action_put_unknown",
            json_body(
                "PUT",
                "/v1/prompt-actions",
                &format!(r#"{{"id":"{UNKNOWN_ID}","name":"Fix","prompt":"Fix it."}}"#),
            ),
        ),
        (
            "prompt_action_put_no_name",
            json_body(
                "PUT",
                "/v1/prompt-actions",
                r#"{"name":" ","prompt":"Fix it."}"#,
            ),
        ),
        (
            "prompt_action_put_no_prompt",
            json_body("PUT", "/v1/prompt-actions", r#"{"name":"Fix"}"#),
        ),
        (
            "prompt_action_run_unknown",
            json_body(
                "POST",
                "/v1/prompt-actions/run",
                r#"{"name":"Summarise","text":"x"}"#,
            ),
        ),
        (
            "prompt_action_run_id_and_name",
            json_body(
                "POST",
                "/v1/prompt-actions/run",
                &format!(r#"{{"id":"{UNKNOWN_ID}","name":"Fix","text":"x"}}"#),
            ),
        ),
        (
            "prompt_action_run_no_text",
            json_body(
                "POST",
                "/v1/prompt-actions/run",
                r#"{"name":"Fix","text":""}"#,
            ),
        ),
        (
            "import_without_json_content_type",
            request("POST", "/v1/settings/import")
                .body(Body::from("{}"))
                .unwrap(),
        ),
        (
            "import_malformed",
            json_body("POST", "/v1/settings/import", r#"{"schemaVersion":1,"#),
        ),
        (
            "import_empty_body",
            json_body("POST", "/v1/settings/import", ""),
        ),
        (
            "import_deep_nesting",
            json_body("POST", "/v1/settings/import", &"[".repeat(10_000)),
        ),
        ("import_top_level_array", import_of(&json!([]))),
        (
            "import_missing_schema_version",
            import_of(&json!({"workflows": []})),
        ),
        (
            "import_schema_version_2",
            import_of(&json!({"schemaVersion": 2})),
        ),
        (
            "import_workflow_priority_not_integer",
            import_of(&backup_with("/workflows/1/priority", json!("high"))),
        ),
        (
            "import_workflow_bad_id",
            import_of(&backup_with("/workflows/0/id", json!("mail"))),
        ),
        (
            "import_language_mode",
            import_of(&backup_with("/workflows/0/languageMode", json!("french"))),
        ),
        (
            "import_dictionary_type",
            import_of(&backup_with("/dictionaryEntries/0/type", json!("rule"))),
        ),
        (
            "import_history_timestamp",
            import_of(&backup_with("/history/0/timestamp", json!("yesterday"))),
        ),
        (
            "import_plugin_id",
            import_of(&backup_with("/plugins/0/id", json!("../../etc"))),
        ),
        (
            "import_update_channel",
            import_of(&backup_with("/updateChannel", json!(3))),
        ),
        (
            "import_preference_out_of_range",
            import_of(&backup_with(
                "/preferences/historyRetentionDays",
                json!(99999),
            )),
        ),
        (
            "import_content_length_over_64_mib",
            request("POST", "/v1/settings/import")
                .header("content-type", "application/json")
                .header("content-length", (64u64 * 1024 * 1024 + 1).to_string())
                .body(Body::empty())
                .unwrap(),
        ),
        (
            "terms_content_length_over_1_mib",
            request("PUT", "/v1/dictionary/terms")
                .header("content-type", "application/json")
                .header("content-length", (1024 * 1024 + 1).to_string())
                .body(Body::empty())
                .unwrap(),
        ),
        // The page's own routes.
        (
            "page_select_without_id",
            empty("POST", "/page/models/select"),
        ),
        (
            "page_select_unknown_model",
            empty("POST", "/page/models/select?id=nope"),
        ),
        (
            "page_setting_unknown",
            json_body(
                "PUT",
                "/page/settings",
                r#"{"key":"noSuchThing","value":1}"#,
            ),
        ),
        (
            "page_setting_out_of_range",
            json_body(
                "PUT",
                "/page/settings",
                r#"{"key":"maxDictationSeconds","value":1}"#,
            ),
        ),
        (
            "page_setting_of_this_machine_only",
            json_body(
                "PUT",
                "/page/settings",
                r#"{"key":"dictationInsertion","value":"type"}"#,
            ),
        ),
        (
            "terms_from_a_web_page",
            request("PUT", "/v1/dictionary/terms")
                .header("content-type", "application/json")
                .header("origin", "https://evil.example")
                .body(Body::from(r#"{"terms":["pwned"]}"#))
                .unwrap(),
        ),
    ]
}

#[tokio::test]
async fn every_error_answer_of_the_personal_data_routes_is_snapshotted() {
    let t = TestApp::new();
    let router = t.router();
    for (name, req) in cases() {
        let (status, headers, body) = send(&router, req).await;
        assert!(status.is_client_error(), "{name}: {status}");
        assert_eq!(headers["content-type"], "application/json", "{name}");
        assert!(body["error"]["code"].as_str().is_some(), "{name}");
        let shown = json!({ "status": status.as_u16(), "body": body });
        insta::with_settings!({ snapshot_path => "../../snapshots", prepend_module_to_snapshot => false }, {
            insta::assert_json_snapshot!(format!("http_{name}"), shown);
        });
    }
}

#[tokio::test]
async fn without_the_token_the_new_routes_answer_401() {
    let t = TestApp::requiring_token();
    for (method, path) in [
        ("GET", "/v1/history"),
        ("DELETE", "/v1/history"),
        ("GET", "/v1/dictionary/terms"),
        ("PUT", "/v1/dictionary/corrections"),
        ("GET", "/v1/rules"),
        ("PUT", "/v1/profiles/toggle"),
        ("GET", "/v1/prompt-actions"),
        ("PUT", "/v1/prompt-actions"),
        ("DELETE", "/v1/prompt-actions"),
        ("POST", "/v1/prompt-actions/run"),
        ("GET", "/v1/settings/export"),
        ("POST", "/v1/settings/import"),
    ] {
        let (status, _, body) = send(&t.router(), empty(method, path)).await;
        assert_eq!(status.as_u16(), 401, "{method} {path}");
        assert_eq!(body["error"]["code"], "unauthorized");
    }
}
