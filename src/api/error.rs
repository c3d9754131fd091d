//! The closed set of API errors and their mapping to an HTTP status and the contract's Error object.
//!
//! Internal causes are logged on the server and never sent beyond a short cause.

use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use strum::{EnumDiscriminants, EnumIter};

use crate::wire::{ErrorBody, ErrorDetail};

/// Every error the API answers with. Each variant has a snapshot of its body
/// (`tests/suite/error_snapshots.rs` matches over [`ApiErrorKind`] with no wildcard arm).
#[derive(Debug, Clone, PartialEq, Eq, EnumDiscriminants)]
#[strum_discriminants(name(ApiErrorKind), derive(EnumIter, Hash))]
pub enum ApiError {
    /// A malformed or invalid request; the message says what to change.
    BadRequest(String),
    /// Token checking is on and no valid token was sent.
    Unauthorized,
    /// The `Host` header does not name the loopback server.
    HostNotAllowed { port: u16 },
    /// A web page (non-loopback `Origin`, or `Sec-Fetch-Site: cross-site`) sent the request.
    CrossOrigin,
    /// No route for this method and path.
    RouteNotFound { method: Method, path: String },
    /// A named resource (history entry, rule, session...) does not exist.
    NotFound(String),
    /// The request conflicts with the current state.
    Conflict(String),
    /// The body is over the route's limit (see `api::limits`), in MiB.
    PayloadTooLarge { limit_mib: u64 },
    /// The body arrived too slowly (see `api::limits`); the connection is closed after the answer.
    BodyTooSlow,
    /// The body's media type is not the one the route takes.
    UnsupportedMediaType(String),
    /// A failure inside the server; `cause` is short and safe to show.
    Internal { cause: String },
    /// A request handler panicked; the server keeps serving.
    HandlerPanicked,
    /// The feature exists in the API but not on this host.
    NotImplemented(String),
    /// The service cannot take the request now.
    ServiceUnavailable(String),
    /// Every transcription slot is taken and the queue is full.
    EngineBusy { retry_after_secs: u32 },
    /// The HTTP layer could not read the request head (see `server::head_errors`).
    MalformedHead(HeadProblem),
}

/// Why a request head could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeadProblem {
    /// Not HTTP/1.x: a bad request line, method, version or header (400).
    Unreadable,
    /// More headers, or more bytes of them, than the server takes (431).
    HeadersTooLarge,
    /// The request target is longer than the server takes (414).
    UriTooLong,
}

impl ApiError {
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::HostNotAllowed { .. } | ApiError::CrossOrigin => StatusCode::FORBIDDEN,
            ApiError::RouteNotFound { .. } | ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::BodyTooSlow => StatusCode::REQUEST_TIMEOUT,
            ApiError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::Internal { .. } | ApiError::HandlerPanicked => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
            ApiError::NotImplemented(_) => StatusCode::NOT_IMPLEMENTED,
            ApiError::ServiceUnavailable(_) | ApiError::EngineBusy { .. } => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            ApiError::MalformedHead(HeadProblem::Unreadable) => StatusCode::BAD_REQUEST,
            ApiError::MalformedHead(HeadProblem::HeadersTooLarge) => {
                StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE
            }
            ApiError::MalformedHead(HeadProblem::UriTooLong) => StatusCode::URI_TOO_LONG,
        }
    }

    /// The contract's error code for the status.
    pub fn code(&self) -> &'static str {
        match self.status() {
            StatusCode::BAD_REQUEST => "bad_request",
            StatusCode::UNAUTHORIZED => "unauthorized",
            StatusCode::FORBIDDEN => "forbidden",
            StatusCode::NOT_FOUND => "not_found",
            StatusCode::REQUEST_TIMEOUT => "request_timeout",
            StatusCode::URI_TOO_LONG => "uri_too_long",
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => "request_header_fields_too_large",
            StatusCode::CONFLICT => "conflict",
            StatusCode::PAYLOAD_TOO_LARGE => "payload_too_large",
            StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
            StatusCode::NOT_IMPLEMENTED => "not_implemented",
            StatusCode::SERVICE_UNAVAILABLE => "service_unavailable",
            _ => "internal_error",
        }
    }

    pub fn message(&self) -> String {
        match self {
            ApiError::BadRequest(m)
            | ApiError::NotFound(m)
            | ApiError::Conflict(m)
            | ApiError::UnsupportedMediaType(m)
            | ApiError::NotImplemented(m)
            | ApiError::ServiceUnavailable(m) => m.clone(),
            ApiError::Unauthorized => "Missing or invalid API token".into(),
            ApiError::HostNotAllowed { port } => format!(
                "Host not allowed. Address the server as 127.0.0.1:{port}, localhost:{port} or [::1]:{port}."
            ),
            ApiError::CrossOrigin => {
                "Cross-origin requests are not allowed. Call the API from a local program, not a web page."
                    .into()
            }
            ApiError::RouteNotFound { method, path } => format!("Not found: {method} {path}"),
            ApiError::PayloadTooLarge { limit_mib } => {
                format!("Payload too large. Maximum request body size is {limit_mib} MiB.")
            }
            ApiError::BodyTooSlow => super::limits::too_slow_message(),
            ApiError::Internal { cause } => format!("Internal error: {cause}"),
            ApiError::EngineBusy { retry_after_secs } => format!(
                "The engine is busy with other transcriptions. Try again in {retry_after_secs} seconds."
            ),
            ApiError::HandlerPanicked => {
                "Internal error: the request failed unexpectedly. The server is still running; try again."
                    .into()
            }
            ApiError::MalformedHead(HeadProblem::Unreadable) => {
                "The request could not be read as HTTP/1.1: check the request line and the headers."
                    .into()
            }
            ApiError::MalformedHead(HeadProblem::HeadersTooLarge) => {
                "The request headers are too large: send at most 100 headers, under 400 KiB in all."
                    .into()
            }
            ApiError::MalformedHead(HeadProblem::UriTooLong) => {
                "The request URI is too long: send long values in the request body instead.".into()
            }
        }
    }

    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            error: ErrorDetail {
                code: self.code().into(),
                message: self.message(),
                kind: None,
            },
        }
    }

    /// An internal failure: the full cause goes to the log, a short one to the client.
    pub fn internal(short_cause: &str, detail: impl std::fmt::Display) -> ApiError {
        tracing::error!("{short_cause}: {detail}");
        ApiError::Internal {
            cause: short_cause.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status(), axum::Json(self.body())).into_response();
        match self {
            ApiError::Unauthorized => {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            ApiError::EngineBusy { retry_after_secs } => {
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
            }
            _ => {}
        }
        response
    }
}

impl From<crate::store::StoreError> for ApiError {
    fn from(err: crate::store::StoreError) -> Self {
        use crate::store::{SEARCH_DEADLINE, StoreError};
        match err {
            StoreError::SearchTooLong => ApiError::ServiceUnavailable(format!(
                "The history search took longer than {} seconds and was stopped. Search with \
                 fewer or longer words.",
                SEARCH_DEADLINE.as_secs()
            )),
            err => ApiError::internal("database error", err),
        }
    }
}

/// A device that cannot be opened is a conflict with the machine's state, not a server fault.
impl From<crate::audio::capture::CaptureError> for ApiError {
    fn from(err: crate::audio::capture::CaptureError) -> Self {
        ApiError::Conflict(err.to_string())
    }
}

impl From<crate::session::Internal> for ApiError {
    fn from(err: crate::session::Internal) -> Self {
        ApiError::internal(err.cause, err.detail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_past_its_deadline_is_503_telling_to_narrow_it() {
        let err = ApiError::from(crate::store::StoreError::SearchTooLong);
        assert_eq!(err.status(), StatusCode::SERVICE_UNAVAILABLE);
        insta::with_settings!({ snapshot_path => "../../snapshots", prepend_module_to_snapshot => false }, {
            insta::assert_json_snapshot!("history_search_too_long", err.body());
        });
    }
}
