//! The six dictionary routes: recognition terms and corrections (GET, PUT, DELETE each).

use std::sync::Arc;

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};

use super::json::JsonBody;
use super::{ApiError, blocking};
use crate::app::App;
use crate::store::{Correction, Term};
use crate::wire::dictionary::{
    CorrectionEntry, Corrections, DeleteCorrection, DeleteTerm, Deleted, PutCorrection, PutTerms,
    TermEntry, Terms,
};

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route(
            "/v1/dictionary/terms",
            get(list_terms).put(put_terms).delete(delete_term),
        )
        .route(
            "/v1/dictionary/corrections",
            get(list_corrections)
                .put(put_correction)
                .delete(delete_correction),
        )
}

fn terms_answer(terms: Vec<Term>) -> Json<Terms> {
    Json(Terms {
        count: terms.len(),
        terms: terms.iter().map(|t| t.term.clone()).collect(),
        term_entries: terms
            .into_iter()
            .map(|t| TermEntry {
                term: t.term,
                ctc_min_similarity: t.ctc_min_similarity,
            })
            .collect(),
    })
}

fn corrections_answer(corrections: Vec<Correction>) -> Json<Corrections> {
    Json(Corrections {
        count: corrections.len(),
        corrections: corrections
            .into_iter()
            .map(|c| CorrectionEntry {
                original: c.original,
                replacement: c.replacement,
                case_sensitive: c.case_sensitive,
            })
            .collect(),
    })
}

async fn list_terms(State(app): State<Arc<App>>) -> Result<Json<Terms>, ApiError> {
    let terms = blocking(&app, |app| Ok(app.store.enabled_terms()?)).await?;
    Ok(terms_answer(terms))
}

async fn put_terms(
    State(app): State<Arc<App>>,
    JsonBody(body): JsonBody<PutTerms>,
) -> Result<Json<Terms>, ApiError> {
    let terms: Vec<Term> = match (body.terms, body.term_entries) {
        (Some(_), Some(_)) => {
            return Err(ApiError::BadRequest(
                "Use either 'terms' or 'term_entries', not both".into(),
            ));
        }
        (None, None) => {
            return Err(ApiError::BadRequest(
                "Missing 'terms' or 'term_entries' in the request body".into(),
            ));
        }
        (Some(terms), None) => terms
            .into_iter()
            .map(|term| Term {
                term,
                ctc_min_similarity: None,
            })
            .collect(),
        (None, Some(entries)) => entries
            .into_iter()
            .map(|e| Term {
                term: e.term,
                ctc_min_similarity: e.ctc_min_similarity,
            })
            .collect(),
    };
    let replace = body.replace.unwrap_or(false);
    let listed = blocking(&app, move |app| Ok(app.store.put_terms(&terms, replace)?)).await?;
    Ok(terms_answer(listed))
}

async fn delete_term(
    State(app): State<Arc<App>>,
    JsonBody(body): JsonBody<DeleteTerm>,
) -> Result<Json<Deleted>, ApiError> {
    let (deleted, count) =
        blocking(&app, move |app| Ok(app.store.delete_term(&body.term)?)).await?;
    Ok(Json(Deleted { deleted, count }))
}

async fn list_corrections(State(app): State<Arc<App>>) -> Result<Json<Corrections>, ApiError> {
    let corrections = blocking(&app, |app| Ok(app.store.enabled_corrections()?)).await?;
    Ok(corrections_answer(corrections))
}

async fn put_correction(
    State(app): State<Arc<App>>,
    JsonBody(body): JsonBody<PutCorrection>,
) -> Result<Json<Corrections>, ApiError> {
    if body.original.trim().is_empty() {
        return Err(ApiError::BadRequest("'original' must not be empty".into()));
    }
    let correction = Correction {
        original: body.original,
        replacement: body.replacement,
        case_sensitive: body.case_sensitive.unwrap_or(false),
    };
    let listed = blocking(&app, move |app| {
        Ok(app.store.put_correction(&correction)?)
    })
    .await?;
    Ok(corrections_answer(listed))
}

async fn delete_correction(
    State(app): State<Arc<App>>,
    JsonBody(body): JsonBody<DeleteCorrection>,
) -> Result<Json<Deleted>, ApiError> {
    let (deleted, count) = blocking(&app, move |app| {
        Ok(app.store.delete_correction(&body.original)?)
    })
    .await?;
    Ok(Json(Deleted { deleted, count }))
}
