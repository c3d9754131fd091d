//! `GET /v1/history` (search and paging) and `DELETE /v1/history?id=`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::Uri;
use axum::routing::get;
use axum::{Json, Router};

use super::query::Query;
use super::{ApiError, blocking};
use crate::app::App;
use crate::store::HistoryQuery;
use crate::wire::history::{Deleted, Page};

/// Default and largest page size.
pub const DEFAULT_LIMIT: i64 = 50;
pub const MAX_LIMIT: i64 = 200;

pub fn routes() -> Router<Arc<App>> {
    Router::new().route("/v1/history", get(list).delete(delete))
}

async fn list(State(app): State<Arc<App>>, uri: Uri) -> Result<Json<Page>, ApiError> {
    let params = Query::of(&uri);
    let limit = params.clamped_int("limit", DEFAULT_LIMIT, 0, MAX_LIMIT)?;
    let offset = params.clamped_int("offset", 0, 0, i64::MAX)?;
    let query = HistoryQuery {
        query: params.get("q").map(str::to_string),
        limit: limit as u32,
        offset: offset as u64,
    };
    let page = blocking(&app, move |app| Ok(app.store.history_page(&query)?)).await?;
    Ok(Json(Page {
        entries: page.entries,
        total: page.total,
        limit,
        offset,
    }))
}

async fn delete(State(app): State<Arc<App>>, uri: Uri) -> Result<Json<Deleted>, ApiError> {
    let id = Query::of(&uri).id()?;
    if blocking(&app, move |app| Ok(app.store.delete_history(&id)?)).await? {
        Ok(Json(Deleted { deleted: true }))
    } else {
        Err(ApiError::NotFound("History entry not found".into()))
    }
}
