//! `ApiJson<T>`: a JSON body extractor whose every rejection is the contract's Error object.

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use serde::de::DeserializeOwned;

use super::ApiError;
use super::security::body_read_error;

/// Like `axum::Json`, with rejections mapped to 400 / 413 / 415 Error objects.
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        match axum::Json::<T>::from_request(request, state).await {
            Ok(axum::Json(value)) => Ok(ApiJson(value)),
            Err(rejection) => Err(json_rejection(rejection)),
        }
    }
}

fn json_rejection(rejection: JsonRejection) -> ApiError {
    match rejection {
        JsonRejection::MissingJsonContentType(_) => ApiError::UnsupportedMediaType(
            "Send the body as JSON with Content-Type: application/json.".into(),
        ),
        JsonRejection::JsonDataError(e) => ApiError::BadRequest(format!(
            "The JSON body does not have the expected fields: {}",
            e.body_text()
                .trim_start_matches("Failed to deserialize the JSON body into the target type: ")
        )),
        JsonRejection::JsonSyntaxError(e) => ApiError::BadRequest(format!(
            "The body is not valid JSON: {}",
            e.body_text()
                .trim_start_matches("Failed to parse the request body as JSON: ")
        )),
        JsonRejection::BytesRejection(e) => body_read_error(&e),
        other => ApiError::BadRequest(format!("Invalid JSON body: {}", other.body_text())),
    }
}
