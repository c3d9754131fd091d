//! Every API error body, snapshotted under `snapshots/`. `example` matches over every
//! [`ApiErrorKind`] with no wildcard arm: a new error variant does not compile without one.

use strum::IntoEnumIterator;
use verbatim::api::{ApiError, ApiErrorKind, HeadProblem};

fn example(kind: ApiErrorKind) -> ApiError {
    match kind {
        ApiErrorKind::BadRequest => ApiError::BadRequest("Missing or invalid 'id' query parameter".into()),
        ApiErrorKind::Unauthorized => ApiError::Unauthorized,
        ApiErrorKind::HostNotAllowed => ApiError::HostNotAllowed { port: 8978 },
        ApiErrorKind::CrossOrigin => ApiError::CrossOrigin,
        ApiErrorKind::RouteNotFound => ApiError::RouteNotFound {
            method: axum::http::Method::GET,
            path: "/v1/nope".into(),
        },
        ApiErrorKind::NotFound => ApiError::NotFound("History entry not found".into()),
        ApiErrorKind::Conflict => ApiError::Conflict("Not recording".into()),
        ApiErrorKind::PayloadTooLarge => ApiError::PayloadTooLarge { limit_mib: 256 },
        ApiErrorKind::BodyTooSlow => ApiError::BodyTooSlow,
        ApiErrorKind::UnsupportedMediaType => {
            ApiError::UnsupportedMediaType("Send the backup with Content-Type: application/json.".into())
        }
        ApiErrorKind::Internal => ApiError::Internal { cause: "database error".into() },
        ApiErrorKind::HandlerPanicked => ApiError::HandlerPanicked,
        ApiErrorKind::NotImplemented => ApiError::NotImplemented(
            "Target-language translation needs a translation provider; none is configured on this host".into(),
        ),
        ApiErrorKind::ServiceUnavailable => {
            ApiError::ServiceUnavailable("No engine selected. Select an engine first.".into())
        }
        ApiErrorKind::EngineBusy => ApiError::EngineBusy { retry_after_secs: 5 },
        ApiErrorKind::MalformedHead => ApiError::MalformedHead(HeadProblem::Unreadable),
    }
}

#[test]
fn every_error_variant_has_a_snapshot_of_its_status_and_body() {
    insta::with_settings!({ snapshot_path => "../../snapshots", prepend_module_to_snapshot => false }, {
        for kind in ApiErrorKind::iter() {
            let err = example(kind);
            assert_eq!(ApiErrorKind::from(&err), kind);
            let shown = serde_json::json!({
                "status": err.status().as_u16(),
                "body": err.body(),
            });
            insta::assert_json_snapshot!(format!("error_{kind:?}"), shown);
        }
    });
}

#[test]
fn every_code_is_one_the_contract_names() {
    let allowed = [
        "bad_request",
        "unauthorized",
        "forbidden",
        "not_found",
        "conflict",
        // Statuses the contract's list does not name, coded the same way (the reason phrase in
        // snake case): 408 for a body that arrives too slowly, 414 and 431 for request heads
        // the HTTP layer refuses.
        "request_timeout",
        "uri_too_long",
        "request_header_fields_too_large",
        "payload_too_large",
        "unsupported_media_type",
        "internal_error",
        "not_implemented",
        "service_unavailable",
    ];
    for kind in ApiErrorKind::iter() {
        let err = example(kind);
        assert!(allowed.contains(&err.code()), "{kind:?} -> {}", err.code());
        assert!(!err.message().is_empty());
    }
}
