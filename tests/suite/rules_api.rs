//! `GET /v1/rules`, `PUT /v1/rules/toggle` and their `/v1/profiles` aliases in process.

use crate::common;

use axum::http::StatusCode;
use common::{TestApp, call};
use serde_json::json;
use uuid::Uuid;
use verbatim::store::{LanguageMode, Workflow, WorkflowFields};

fn workflows(t: &TestApp) -> (Workflow, Workflow) {
    let mail = Workflow {
        id: Uuid::parse_str("0f8fad5b-d9cb-469f-a165-70867728950e").unwrap(),
        name: "Mail".into(),
        enabled: true,
        priority: 2,
        bundle_identifiers: vec!["org.mozilla.Thunderbird".into()],
        extra: WorkflowFields {
            language_mode: LanguageMode::Multiple,
            language_hints: vec!["de".into(), "en".into()],
            prompt_action_id: None,
        },
        ..Workflow::default()
    };
    let docs = Workflow {
        id: Uuid::parse_str("7c9e6679-7425-40de-944b-e07fc1f90ae7").unwrap(),
        name: "Docs".into(),
        enabled: false,
        priority: 1,
        url_patterns: vec!["docs.example.org/*".into()],
        input_language: Some("fr".into()),
        translation_target_language: Some("en".into()),
        extra: WorkflowFields {
            language_mode: LanguageMode::Exact,
            ..WorkflowFields::default()
        },
        ..Workflow::default()
    };
    t.app.store.add_workflow(&mail).unwrap();
    t.app.store.add_workflow(&docs).unwrap();
    (mail, docs)
}

#[tokio::test]
async fn rules_are_listed_by_priority_under_both_names() {
    let t = TestApp::new();
    workflows(&t);
    let expected_rules = json!([
        {
            "id": "7C9E6679-7425-40DE-944B-E07FC1F90AE7", "name": "Docs", "is_enabled": false,
            "priority": 1, "bundle_identifiers": [], "url_patterns": ["docs.example.org/*"],
            "input_language": "fr", "language_mode": "exact", "language_hints": [],
            "translation_target_language": "en"
        },
        {
            "id": "0F8FAD5B-D9CB-469F-A165-70867728950E", "name": "Mail", "is_enabled": true,
            "priority": 2, "bundle_identifiers": ["org.mozilla.Thunderbird"], "url_patterns": [],
            "language_mode": "multiple", "language_hints": ["de", "en"]
        }
    ]);
    for path in ["/v1/rules", "/v1/profiles"] {
        let (status, body) = call(&t.router(), "GET", path, None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            body,
            json!({"rules": expected_rules, "profiles": expected_rules}),
            "{path}"
        );
    }
}

#[tokio::test]
async fn toggling_flips_the_state_through_either_path() {
    let t = TestApp::new();
    let (mail, _) = workflows(&t);
    let router = t.router();
    let id = mail.id.to_string(); // any case is accepted
    let (status, body) = call(&router, "PUT", &format!("/v1/rules/toggle?id={id}"), None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        json!({
            "id": "0F8FAD5B-D9CB-469F-A165-70867728950E", "name": "Mail", "rule_name": "Mail",
            "profile_name": "Mail", "is_enabled": false
        })
    );
    let (_, body) = call(
        &router,
        "PUT",
        &format!("/v1/profiles/toggle?id={id}"),
        None,
    )
    .await;
    assert_eq!(body["is_enabled"], true);
    assert!(t.app.store.workflow(&mail.id).unwrap().unwrap().enabled);
    let unknown = Uuid::new_v4();
    for path in ["/v1/rules/toggle", "/v1/profiles/toggle"] {
        let (status, body) = call(&router, "PUT", &format!("{path}?id={unknown}"), None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(body["error"]["message"], "Rule not found");
        let (status, body) = call(&router, "PUT", &format!("{path}?id=mail"), None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(
            body["error"]["message"],
            "Missing or invalid 'id' query parameter"
        );
    }
    // Wrong method on the toggle route is an unknown route.
    let (status, _) = call(&router, "GET", &format!("/v1/rules/toggle?id={id}"), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}
