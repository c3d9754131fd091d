//! The six dictionary routes in process: their answers, their 400s, and a property test that
//! any sequence of PUT and DELETE on terms and corrections matches a small reference model.

use crate::common;

use axum::http::StatusCode;
use common::{TestApp, call, request, send};
use proptest::prelude::*;
use serde_json::{Value, json};

#[tokio::test]
async fn terms_are_merged_deduplicated_recased_and_clamped() {
    let t = TestApp::new();
    let router = t.router();
    let (status, body) = call(
        &router,
        "PUT",
        "/v1/dictionary/terms",
        Some(json!({"term_entries": [
            {"term": " Kubernetes ", "ctc_min_similarity": 1.7},
            {"term": "café"},
            {"term": "CAFE", "ctc_min_similarity": 0.2},
            {"term": "   "}
        ]})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        json!({
            "terms": ["café", "Kubernetes"],
            "term_entries": [{"term": "café"}, {"term": "Kubernetes", "ctc_min_similarity": 1.0}],
            "count": 2
        })
    );
    // Merging re-cases and keeps the threshold; replace drops what is not listed.
    let (_, body) = call(
        &router,
        "PUT",
        "/v1/dictionary/terms",
        Some(json!({"terms": ["KUBERNETES", "Zürich"], "replace": true})),
    )
    .await;
    assert_eq!(
        body,
        json!({
            "terms": ["KUBERNETES", "Zürich"],
            "term_entries": [{"term": "KUBERNETES", "ctc_min_similarity": 1.0}, {"term": "Zürich"}],
            "count": 2
        })
    );
    let (status, listed) = call(&router, "GET", "/v1/dictionary/terms", None).await;
    assert_eq!((status, &listed), (StatusCode::OK, &body));
    let (_, body) = call(
        &router,
        "DELETE",
        "/v1/dictionary/terms",
        Some(json!({"term": "zurich"})),
    )
    .await;
    assert_eq!(body, json!({"deleted": true, "count": 1}));
    let (status, body) = call(
        &router,
        "DELETE",
        "/v1/dictionary/terms",
        Some(json!({"term": "zurich"})),
    )
    .await;
    assert_eq!(
        (status, body),
        (StatusCode::OK, json!({"deleted": false, "count": 1}))
    );
    // The transcription path sees the same list.
    let terms = t.app.store.enabled_terms().unwrap();
    assert_eq!(terms.len(), 1);
    assert_eq!(terms[0].term, "KUBERNETES");
}

#[tokio::test]
async fn corrections_are_upserted_by_case_insensitive_original() {
    let t = TestApp::new();
    let router = t.router();
    let put = |body: Value| call(&router, "PUT", "/v1/dictionary/corrections", Some(body));
    put(json!({"original": "teh", "replacement": "the"})).await;
    let (status, body) =
        put(json!({"original": "TEH", "replacement": "THE", "caseSensitive": true})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        json!({"corrections": [{"original": "TEH", "replacement": "THE", "caseSensitive": true}], "count": 1})
    );
    let (_, body) = put(json!({"original": "Colour", "replacement": "color"})).await;
    assert_eq!(body["count"], 2);
    assert_eq!(body["corrections"][0]["original"], "Colour");
    let (_, listed) = call(&router, "GET", "/v1/dictionary/corrections", None).await;
    assert_eq!(listed, body);
    let (_, body) = call(
        &router,
        "DELETE",
        "/v1/dictionary/corrections",
        Some(json!({"original": "colour"})),
    )
    .await;
    assert_eq!(body, json!({"deleted": true, "count": 1}));
    let corrections = t.app.store.enabled_corrections().unwrap();
    assert_eq!(corrections.len(), 1);
    assert!(corrections[0].case_sensitive);
}

#[tokio::test]
async fn invalid_requests_are_400_or_415_and_change_nothing() {
    let t = TestApp::new();
    let router = t.router();
    call(
        &router,
        "PUT",
        "/v1/dictionary/terms",
        Some(json!({"terms": ["keep"]})),
    )
    .await;
    call(
        &router,
        "PUT",
        "/v1/dictionary/corrections",
        Some(json!({"original": "a", "replacement": "b"})),
    )
    .await;
    let cases: Vec<(&str, &str, Value, &str)> = vec![
        (
            "PUT",
            "/v1/dictionary/terms",
            json!({"terms": ["x"], "term_entries": [{"term": "y"}]}),
            "Use either 'terms' or 'term_entries', not both",
        ),
        (
            "PUT",
            "/v1/dictionary/terms",
            json!({"replace": true}),
            "Missing 'terms' or 'term_entries' in the request body",
        ),
        ("PUT", "/v1/dictionary/terms", json!({"terms": "x"}), ""),
        (
            "PUT",
            "/v1/dictionary/terms",
            json!({"term_entries": [{"term": "x", "ctc_min_similarity": "high"}]}),
            "",
        ),
        (
            "PUT",
            "/v1/dictionary/terms",
            json!({"terms": ["x"], "replace": "yes"}),
            "",
        ),
        ("DELETE", "/v1/dictionary/terms", json!({}), ""),
        (
            "PUT",
            "/v1/dictionary/corrections",
            json!({"original": "  ", "replacement": "z"}),
            "'original' must not be empty",
        ),
        (
            "PUT",
            "/v1/dictionary/corrections",
            json!({"replacement": "z"}),
            "",
        ),
        (
            "DELETE",
            "/v1/dictionary/corrections",
            json!({"original": 3}),
            "",
        ),
    ];
    for (method, path, body, message) in cases {
        let (status, answer) = call(&router, method, path, Some(body.clone())).await;
        assert_eq!(
            status,
            StatusCode::BAD_REQUEST,
            "{method} {path} {body}: {answer}"
        );
        assert_eq!(answer["error"]["code"], "bad_request");
        if !message.is_empty() {
            assert_eq!(answer["error"]["message"], message);
        }
    }
    for (method, path) in [
        ("PUT", "/v1/dictionary/terms"),
        ("DELETE", "/v1/dictionary/corrections"),
    ] {
        let not_json = request(method, path)
            .header("content-type", "text/plain")
            .body(axum::body::Body::from(
                "{\"terms\":[\"x\"],\"original\":\"a\"}",
            ))
            .unwrap();
        let (status, _, answer) = send(&router, not_json).await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        assert_eq!(answer["error"]["code"], "unsupported_media_type");
        let broken = request(method, path)
            .header("content-type", "application/json; charset=utf-8")
            .body(axum::body::Body::from("{\"terms\": [\"x\""))
            .unwrap();
        let (status, _, answer) = send(&router, broken).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    }
    let (_, terms) = call(&router, "GET", "/v1/dictionary/terms", None).await;
    assert_eq!(terms["terms"], json!(["keep"]));
    let (_, corrections) = call(&router, "GET", "/v1/dictionary/corrections", None).await;
    assert_eq!(corrections["count"], 1);
}

#[tokio::test]
async fn deeply_nested_json_is_refused_without_overflowing_the_stack() {
    let t = TestApp::new();
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let nested_object = format!("{}1{}", "{\"terms\":".repeat(10_000), "}".repeat(10_000));
    let nested_unknown = format!("{{\"extra\":{}{}}}", "[".repeat(10_000), "]".repeat(10_000));
    for body in [deep, nested_object, nested_unknown] {
        let req = request("PUT", "/v1/dictionary/terms")
            .header("content-type", "application/json")
            .body(axum::body::Body::from(body))
            .unwrap();
        let (status, _, answer) = send(&t.router(), req).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    }
}

// --- The reference model ---------------------------------------------------------------

/// Words chosen to collide by case, accents and surrounding spaces.
const WORDS: &[&str] = &[
    "Foo", "foo", "FOO", "Fóo", "bar", "Bär", " bär ", "baz", "", "  ", "Qux",
];
const SIMILARITIES: &[f64] = &[-0.5, 0.0, 0.25, 1.0, 1.5];

#[derive(Debug, Clone)]
enum Op {
    PutTerms {
        items: Vec<(usize, Option<usize>)>,
        as_entries: bool,
        replace: bool,
    },
    DeleteTerm(usize),
    PutCorrection {
        original: usize,
        replacement: usize,
        case_sensitive: bool,
    },
    DeleteCorrection(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let word = 0..WORDS.len();
    prop_oneof![
        (
            prop::collection::vec(
                (word.clone(), prop::option::of(0..SIMILARITIES.len())),
                0..5
            ),
            any::<bool>(),
            any::<bool>()
        )
            .prop_map(|(items, as_entries, replace)| Op::PutTerms {
                items,
                as_entries,
                replace
            }),
        word.clone().prop_map(Op::DeleteTerm),
        (word.clone(), word.clone(), any::<bool>()).prop_map(
            |(original, replacement, case_sensitive)| {
                Op::PutCorrection {
                    original,
                    replacement,
                    case_sensitive,
                }
            }
        ),
        word.prop_map(Op::DeleteCorrection),
    ]
}

/// The model's own idea of "the same word": lower case, the two accents of WORDS removed.
fn model_fold(text: &str) -> String {
    text.trim()
        .to_lowercase()
        .replace('ó', "o")
        .replace('ä', "a")
}

#[derive(Debug, Default)]
struct Model {
    /// (text, threshold)
    terms: Vec<(String, Option<f64>)>,
    /// (original, replacement, case sensitive)
    corrections: Vec<(String, String, bool)>,
}

impl Model {
    fn put_terms(&mut self, items: &[(String, Option<f64>)], replace: bool) {
        let mut given: Vec<(String, Option<f64>)> = Vec::new();
        for (text, ctc) in items {
            let text = text.trim();
            if text.is_empty() || given.iter().any(|(g, _)| model_fold(g) == model_fold(text)) {
                continue;
            }
            given.push((text.to_string(), ctc.map(|c| c.clamp(0.0, 1.0))));
        }
        for (text, ctc) in &given {
            match self
                .terms
                .iter_mut()
                .find(|(t, _)| model_fold(t) == model_fold(text))
            {
                Some(existing) => *existing = (text.clone(), ctc.or(existing.1)),
                None => self.terms.push((text.clone(), *ctc)),
            }
        }
        if replace {
            self.terms
                .retain(|(t, _)| given.iter().any(|(g, _)| model_fold(g) == model_fold(t)));
        }
    }

    fn terms_json(&self) -> Value {
        let mut terms = self.terms.clone();
        terms.sort_by(|a, b| model_fold(&a.0).cmp(&model_fold(&b.0)).then(a.0.cmp(&b.0)));
        let entries: Vec<Value> = terms
            .iter()
            .map(|(t, ctc)| match ctc {
                Some(c) => json!({"term": t, "ctc_min_similarity": c}),
                None => json!({"term": t}),
            })
            .collect();
        let names: Vec<&String> = terms.iter().map(|(t, _)| t).collect();
        json!({"terms": names, "term_entries": entries, "count": terms.len()})
    }

    fn corrections_json(&self) -> Value {
        let mut list = self.corrections.clone();
        list.sort_by(|a, b| model_fold(&a.0).cmp(&model_fold(&b.0)).then(a.0.cmp(&b.0)));
        let entries: Vec<Value> = list
            .iter()
            .map(|(o, r, c)| json!({"original": o, "replacement": r, "caseSensitive": c}))
            .collect();
        json!({"corrections": entries, "count": list.len()})
    }
}

/// Case-insensitive, accents kept: the corrections' key.
fn correction_key(text: &str) -> String {
    text.trim().to_lowercase()
}

async fn check(router: &axum::Router, model: &mut Model, op: &Op) {
    match op {
        Op::PutTerms {
            items,
            as_entries,
            replace,
        } => {
            let items: Vec<(String, Option<f64>)> = items
                .iter()
                .map(|(w, c)| {
                    (
                        WORDS[*w].to_string(),
                        if *as_entries {
                            c.map(|c| SIMILARITIES[c])
                        } else {
                            None
                        },
                    )
                })
                .collect();
            let body = if *as_entries {
                let entries: Vec<Value> = items
                    .iter()
                    .map(|(t, c)| match c {
                        Some(c) => json!({"term": t, "ctc_min_similarity": c}),
                        None => json!({"term": t}),
                    })
                    .collect();
                json!({"term_entries": entries, "replace": replace})
            } else {
                let names: Vec<&String> = items.iter().map(|(t, _)| t).collect();
                json!({"terms": names, "replace": replace})
            };
            model.put_terms(&items, *replace);
            let (status, answer) = call(router, "PUT", "/v1/dictionary/terms", Some(body)).await;
            assert_eq!(status, StatusCode::OK);
            assert_eq!(answer, model.terms_json(), "{op:?}");
        }
        Op::DeleteTerm(w) => {
            let word = WORDS[*w];
            let before = model.terms.len();
            model
                .terms
                .retain(|(t, _)| model_fold(t) != model_fold(word));
            let expected =
                json!({"deleted": model.terms.len() < before, "count": model.terms.len()});
            let (_, answer) = call(
                router,
                "DELETE",
                "/v1/dictionary/terms",
                Some(json!({"term": word})),
            )
            .await;
            assert_eq!(answer, expected, "{op:?}");
        }
        Op::PutCorrection {
            original,
            replacement,
            case_sensitive,
        } => {
            let (original, replacement) = (WORDS[*original], WORDS[*replacement]);
            let body = json!({"original": original, "replacement": replacement, "caseSensitive": case_sensitive});
            let (status, answer) =
                call(router, "PUT", "/v1/dictionary/corrections", Some(body)).await;
            if original.trim().is_empty() {
                assert_eq!(status, StatusCode::BAD_REQUEST);
                return;
            }
            let entry = (
                original.trim().to_string(),
                replacement.to_string(),
                *case_sensitive,
            );
            match model
                .corrections
                .iter_mut()
                .find(|c| correction_key(&c.0) == correction_key(original))
            {
                Some(existing) => *existing = entry,
                None => model.corrections.push(entry),
            }
            assert_eq!(answer, model.corrections_json(), "{op:?}");
        }
        Op::DeleteCorrection(w) => {
            let word = WORDS[*w];
            let before = model.corrections.len();
            model
                .corrections
                .retain(|c| correction_key(&c.0) != correction_key(word));
            let expected = json!({"deleted": model.corrections.len() < before, "count": model.corrections.len()});
            let (_, answer) = call(
                router,
                "DELETE",
                "/v1/dictionary/corrections",
                Some(json!({"original": word})),
            )
            .await;
            assert_eq!(answer, expected, "{op:?}");
        }
    }
    let (_, terms) = call(router, "GET", "/v1/dictionary/terms", None).await;
    assert_eq!(terms, model.terms_json());
    let (_, corrections) = call(router, "GET", "/v1/dictionary/corrections", None).await;
    assert_eq!(corrections, model.corrections_json());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn any_sequence_of_changes_matches_the_model(ops in prop::collection::vec(op(), 1..20)) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let t = TestApp::new();
        let router = t.router();
        let mut model = Model::default();
        runtime.block_on(async {
            for op in &ops {
                check(&router, &mut model, op).await;
            }
        });
    }
}
