//! `GET /v1/history` and `DELETE /v1/history` in process: paging and search over 10,000
//! entries written through the Store API, clamping, deletion and the errors.

use crate::common;

use std::collections::HashSet;

use axum::http::StatusCode;
use chrono::{Duration, Utc};
use common::{TestApp, call};
use serde_json::{Value, json};
use verbatim::store::NewHistoryEntry;

const ENTRIES: usize = 10_000;
const APPS: [&str; 4] = ["Thunderbird", "Éditeur de texte", "Firefox", "Terminal"];

fn topic(i: usize) -> &'static str {
    match i % 3 {
        0 => "Café crème au comptoir",
        1 => "RÉSUMÉ of the weekly meeting",
        _ => "plain words only",
    }
}

/// 10,000 entries, entry `i` taken `i` seconds ago, written in one transaction.
fn with_history() -> TestApp {
    let t = TestApp::new();
    let now = Utc::now();
    let entries: Vec<NewHistoryEntry> = (0..ENTRIES)
        .map(|i| NewHistoryEntry {
            text: format!("Entry {i}: {}", topic(i)),
            raw_text: format!("entry {i} {}", topic(i).to_lowercase()),
            timestamp: Some(now - Duration::seconds(i as i64)),
            app_name: Some(APPS[i % 4].into()),
            app_bundle_id: Some(format!("app.{}", i % 4)),
            duration: 2.5,
            language: Some("fr".into()),
            engine: "whisper".into(),
            model: Some("base".into()),
            ..NewHistoryEntry::default()
        })
        .collect();
    let started = std::time::Instant::now();
    t.app.store.insert_history_many(&entries).unwrap();
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    t
}

fn entry_number(entry: &Value) -> usize {
    let text = entry["text"].as_str().unwrap();
    text["Entry ".len()..text.find(':').unwrap()]
        .parse()
        .unwrap()
}

async fn page(t: &TestApp, query: &str) -> Value {
    let (status, body) = call(&t.router(), "GET", &format!("/v1/history{query}"), None).await;
    assert_eq!(status, StatusCode::OK, "{query}: {body}");
    body
}

#[tokio::test]
async fn every_entry_is_listed_once_newest_first_across_pages() {
    let t = with_history();
    let first = page(&t, "").await;
    assert_eq!(
        (first["total"].as_u64(), first["limit"].as_u64()),
        (Some(10_000), Some(50))
    );
    assert_eq!(first["offset"], 0);
    assert_eq!(first["entries"].as_array().unwrap().len(), 50);
    let mut seen = HashSet::new();
    let mut previous = None;
    for offset in (0..ENTRIES).step_by(200) {
        let body = page(&t, &format!("?limit=200&offset={offset}")).await;
        let entries = body["entries"].as_array().unwrap();
        assert_eq!(entries.len(), 200);
        for entry in entries {
            let n = entry_number(entry);
            assert!(previous.is_none_or(|p| n == p + 1), "order broken at {n}");
            previous = Some(n);
            assert!(seen.insert(entry["id"].as_str().unwrap().to_string()));
        }
    }
    assert_eq!(seen.len(), ENTRIES);
}

#[tokio::test]
async fn entries_carry_the_contract_fields() {
    let t = with_history();
    let body = page(&t, "?limit=1").await;
    let entry = &body["entries"][0];
    let keys: Vec<&str> = entry
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        vec![
            "app_bundle_id",
            "app_name",
            "duration",
            "engine",
            "id",
            "language",
            "model",
            "raw_text",
            "text",
            "timestamp",
            "words_count"
        ]
    );
    let id = entry["id"].as_str().unwrap();
    assert_eq!(id, id.to_uppercase());
    assert!(entry["timestamp"].as_str().unwrap().ends_with('Z'));
    assert_eq!(entry["words_count"], 6);
    assert!(entry.get("app_url").is_none(), "absent fields are omitted");
}

#[tokio::test]
async fn search_ignores_case_and_accents_over_text_raw_text_and_app_name() {
    let t = with_history();
    let total = |body: &Value| body["total"].as_u64().unwrap();
    let cafe = (0..ENTRIES).filter(|i| i % 3 == 0).count() as u64;
    for q in ["cafe", "CAFÉ", "Café", "caf"] {
        assert_eq!(
            total(&page(&t, &format!("?q={}", urlencode(q))).await),
            cafe,
            "{q}"
        );
    }
    let resume = (0..ENTRIES).filter(|i| i % 3 == 1).count() as u64;
    assert_eq!(total(&page(&t, "?q=resume").await), resume);
    // App names are searched too.
    assert_eq!(total(&page(&t, "?q=editeur").await), (ENTRIES / 4) as u64);
    assert_eq!(
        total(&page(&t, "?q=THUNDERBIRD").await),
        (ENTRIES / 4) as u64
    );
    // Every word must match, wherever it is.
    let both = (0..ENTRIES).filter(|i| i % 12 == 0).count() as u64;
    let body = page(
        &t,
        &format!("?q={}&limit=200", urlencode("crème thunderbird")),
    )
    .await;
    assert_eq!(total(&body), both);
    let numbers: Vec<usize> = body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(entry_number)
        .collect();
    assert!(numbers.windows(2).all(|w| w[0] < w[1]), "newest first");
    assert!(numbers.iter().all(|n| n % 12 == 0));
    // Paging through search results.
    let later = page(
        &t,
        &format!("?q={}&limit=200&offset=800", urlencode("crème thunderbird")),
    )
    .await;
    assert_eq!(
        later["entries"].as_array().unwrap().len(),
        (both - 800) as usize
    );
    // No match, and search syntax is taken literally.
    assert_eq!(total(&page(&t, "?q=zebra").await), 0);
    assert_eq!(
        total(&page(&t, &format!("?q={}", urlencode("\"cafe* ("))).await),
        cafe
    );
    assert_eq!(total(&page(&t, "?q=%20%20").await), ENTRIES as u64);
}

fn urlencode(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

#[tokio::test]
async fn limit_and_offset_are_clamped() {
    let t = with_history();
    let body = page(&t, "?limit=1000").await;
    assert_eq!(
        (
            body["limit"].as_u64(),
            body["entries"].as_array().unwrap().len()
        ),
        (Some(200), 200)
    );
    let body = page(&t, "?limit=-4").await;
    assert_eq!(
        (
            body["limit"].as_u64(),
            body["entries"].as_array().unwrap().len()
        ),
        (Some(0), 0)
    );
    assert_eq!(body["total"], 10_000);
    let body = page(&t, "?offset=-10&limit=1").await;
    assert_eq!(body["offset"], 0);
    assert_eq!(entry_number(&body["entries"][0]), 0);
    let body = page(&t, "?offset=99999999999999999999").await;
    assert_eq!(body["entries"], json!([]));
    let (status, body) = call(&t.router(), "GET", "/v1/history?limit=ten", None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"]["code"], "bad_request");
}

#[tokio::test]
async fn deleting_removes_the_entry_from_listing_and_search() {
    let t = TestApp::new();
    let entry = t
        .app
        .store
        .insert_history(&NewHistoryEntry {
            text: "Réunion demain".into(),
            raw_text: "réunion demain".into(),
            engine: "whisper".into(),
            ..NewHistoryEntry::default()
        })
        .unwrap();
    let id = entry.id.to_string(); // lower case is accepted
    let router = t.router();
    let (status, body) = call(&router, "DELETE", &format!("/v1/history?id={id}"), None).await;
    assert_eq!((status, body), (StatusCode::OK, json!({"deleted": true})));
    let (status, body) = call(&router, "DELETE", &format!("/v1/history?id={id}"), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"]["message"], "History entry not found");
    assert_eq!(page(&t, "?q=reunion").await["total"], 0);
    assert_eq!(page(&t, "").await["total"], 0);
    for bad in ["", "?id=", "?id=12", "?other=1"] {
        let (status, body) = call(&router, "DELETE", &format!("/v1/history{bad}"), None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
        assert_eq!(
            body["error"]["message"],
            "Missing or invalid 'id' query parameter"
        );
    }
}
