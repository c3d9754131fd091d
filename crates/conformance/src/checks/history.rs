//! `GET /v1/history` paging and clamping, search, and `DELETE /v1/history` (on an entry the
//! kit imported itself, deleted again at the end).

use serde_json::{Value, json};

use super::backup::{document, import};
use crate::context::Exchange;
use crate::expect::{Kind, fields, fresh_uuid, marker};
use crate::http::Request;
use crate::{Check, Ctx, Needs, Step, skip};

const HISTORY: &str = "History";

fn page(cx: &mut Ctx, query: &str) -> Step<(Exchange, Value)> {
    let (ex, json) = cx.get_json(&format!("/v1/history{query}"))?;
    use Kind::*;
    fields(
        &ex,
        &json,
        "history page",
        &[
            ("entries", Arr),
            ("total", Int),
            ("limit", Int),
            ("offset", Int),
        ],
    )?;
    Ok((ex, json))
}

fn paging(cx: &mut Ctx, query: &str, limit: u64, offset: u64) -> Step<(Exchange, Value)> {
    let (ex, json) = page(cx, query)?;
    ex.ensure(
        json["limit"] == limit && json["offset"] == offset,
        format!("limit {limit}, offset {offset}"),
        format!("limit {}, offset {}", json["limit"], json["offset"]),
    )?;
    Ok((ex, json))
}

fn entries(json: &Value) -> &[Value] {
    json["entries"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Imports one history entry marked with fresh words, runs `body` with it, then deletes it.
fn with_entry(cx: &mut Ctx, body: fn(&mut Ctx, &Value) -> Step) -> Step {
    let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string();
    let (text, raw, app) = (marker(), marker(), marker());
    let entry = json!({
        "id": fresh_uuid(), "text": format!("Crème brûlée {text}"), "rawText": format!("crème brûlée {raw}"),
        "timestamp": now, "appName": format!("Éditeur {app}"), "duration": 1.5, "engine": "whisper", "wordsCount": 3
    });
    let (ex, summary) = import(cx, &document(vec![entry.clone()], vec![]))?;
    ex.ensure(
        summary["historyImported"] == 1,
        "historyImported 1",
        &summary,
    )?;
    let outcome = body(cx, &entry);
    let id = entry["id"].as_str().unwrap_or_default();
    let cleanup = cx.send(Request::new("DELETE", &format!("/v1/history?id={id}")));
    outcome?;
    cleanup?.ok_json().map(drop)
}

fn finds(cx: &mut Ctx, q: &str, entry: &Value) -> Step {
    let (ex, json) = page(cx, &format!("?q={}", q.replace(' ', "%20")))?;
    let ids: Vec<&Value> = entries(&json).iter().map(|e| &e["id"]).collect();
    ex.ensure(
        json["total"] == 1 && ids == [&entry["id"]],
        format!("q={q:?} finds exactly the kit's entry {}", entry["id"]),
        format!("total {}, ids {ids:?}", json["total"]),
    )
}

fn last_word(text: &Value) -> String {
    text.as_str()
        .unwrap_or_default()
        .rsplit(' ')
        .next()
        .unwrap_or_default()
        .to_string()
}

pub fn checks() -> Vec<Check> {
    vec![
        Check::new(
            "history.envelope",
            (HISTORY, "`{entries:[...], total, limit, offset}`"),
            Needs::ACCESS,
            |cx| page(cx, "").map(drop),
        ),
        Check::new(
            "history.defaults",
            (HISTORY, "`limit` default 50 ... `offset` default 0"),
            Needs::ACCESS,
            |cx| paging(cx, "", 50, 0).map(drop),
        ),
        Check::new(
            "history.limit-max",
            (HISTORY, "clamped to 0..200"),
            Needs::ACCESS,
            |cx| paging(cx, "?limit=1000", 200, 0).map(drop),
        ),
        Check::new(
            "history.limit-min",
            (HISTORY, "clamped to 0..200"),
            Needs::ACCESS,
            |cx| {
                let (ex, json) = paging(cx, "?limit=-5", 0, 0)?;
                ex.ensure(entries(&json).is_empty(), "no entries with limit 0", &json)
            },
        ),
        Check::new(
            "history.offset-min",
            (HISTORY, "`offset` default 0, clamped ≥ 0"),
            Needs::ACCESS,
            |cx| paging(cx, "?offset=-3", 50, 0).map(drop),
        ),
        Check::new(
            "history.total-counts-all",
            (HISTORY, "`total` counts all matches"),
            Needs::ACCESS,
            |cx| {
                let (_, all) = page(cx, "?limit=200")?;
                let (ex, none) = page(cx, "?limit=0")?;
                ex.ensure(
                    none["total"] == all["total"],
                    format!("total {} whatever the limit", all["total"]),
                    &none["total"],
                )?;
                let (ex, one) = page(cx, "?limit=1")?;
                ex.ensure(
                    entries(&one).len() <= 1 && one["total"] == all["total"],
                    "at most 1 entry, the same total",
                    &one,
                )
            },
        ),
        Check::new(
            "history.offset-past-end",
            (HISTORY, "`total` counts all matches"),
            Needs::ACCESS,
            |cx| {
                let (_, all) = page(cx, "?limit=0")?;
                let past = all["total"].as_u64().unwrap_or(0) + 10;
                let (ex, json) = paging(cx, &format!("?offset={past}"), 50, past)?;
                ex.ensure(
                    entries(&json).is_empty() && json["total"] == all["total"],
                    "no entries past the end, the same total",
                    &json,
                )
            },
        ),
        Check::new(
            "history.bad-limit",
            (HISTORY, "`limit` ... 400 for an invalid query parameter"),
            Needs::ACCESS,
            |cx| {
                cx.get("/v1/history?limit=fifty")?
                    .error(400, "bad_request")
                    .map(drop)
            },
        ),
        Check::new(
            "history.newest-first",
            (HISTORY, "newest first"),
            Needs::ACCESS,
            |cx| {
                let (ex, json) = page(cx, "?limit=200")?;
                let stamps: Vec<&str> = entries(&json)
                    .iter()
                    .filter_map(|e| e["timestamp"].as_str())
                    .collect();
                if stamps.len() < 2 {
                    return skip("fewer than two history entries on this server");
                }
                ex.ensure(
                    stamps.windows(2).all(|w| w[0] >= w[1]),
                    "timestamps newest first",
                    format!("{stamps:?}"),
                )
            },
        ),
        Check::new(
            "history.entry-fields",
            (
                HISTORY,
                "Entry: `{id, text, raw_text, timestamp, app_name?, app_bundle_id?, app_url?, duration, language?, engine, model?, words_count}`",
            ),
            Needs::ACCESS,
            |cx| {
                let (ex, json) = page(cx, "?limit=200")?;
                if entries(&json).is_empty() {
                    return skip("no history entry on this server");
                }
                use Kind::*;
                for entry in entries(&json) {
                    fields(
                        &ex,
                        entry,
                        "history entry",
                        &[
                            ("id", Uuid),
                            ("text", Str),
                            ("raw_text", Str),
                            ("timestamp", Time),
                            ("app_name?", Str),
                            ("app_bundle_id?", Str),
                            ("app_url?", Str),
                            ("duration", Num),
                            ("language?", Str),
                            ("engine", Str),
                            ("model?", Str),
                            ("words_count", Int),
                        ],
                    )?;
                }
                Ok(())
            },
        ),
        Check::new(
            "history.search-no-match",
            (HISTORY, "`q` matches text, raw text and app name"),
            Needs::ACCESS,
            |cx| {
                let (ex, json) = page(cx, &format!("?q={}", marker()))?;
                ex.ensure(
                    json["total"] == 0 && entries(&json).is_empty(),
                    "no match for words nobody said",
                    &json,
                )
            },
        ),
        Check::new(
            "history.delete-bad-id",
            (
                HISTORY,
                "bad id 400 `Missing or invalid 'id' query parameter`",
            ),
            Needs::ACCESS,
            |cx| {
                for path in ["/v1/history?id=not-a-uuid", "/v1/history"] {
                    cx.send(Request::new("DELETE", path))?.error_message(
                        400,
                        "bad_request",
                        "Missing or invalid 'id' query parameter",
                    )?;
                }
                Ok(())
            },
        ),
        Check::new(
            "history.delete-unknown",
            (HISTORY, "unknown 404 `History entry not found`"),
            Needs::ACCESS,
            |cx| {
                let path = format!("/v1/history?id={}", fresh_uuid());
                cx.send(Request::new("DELETE", &path))?.error_message(
                    404,
                    "not_found",
                    "History entry not found",
                )
            },
        ),
        Check::new(
            "history.search-text",
            (HISTORY, "`q` matches text ... case- and accent-insensitive"),
            Needs::WRITES,
            |cx| {
                with_entry(cx, |cx, entry| {
                    finds(
                        cx,
                        &format!("CREME BRULEE {}", last_word(&entry["text"]).to_uppercase()),
                        entry,
                    )
                })
            },
        ),
        Check::new(
            "history.search-raw-text",
            (HISTORY, "`q` matches ... raw text"),
            Needs::WRITES,
            |cx| {
                with_entry(cx, |cx, entry| {
                    finds(cx, &last_word(&entry["rawText"]), entry)
                })
            },
        ),
        Check::new(
            "history.search-app-name",
            (HISTORY, "`q` matches ... app name"),
            Needs::WRITES,
            |cx| {
                with_entry(cx, |cx, entry| {
                    finds(
                        cx,
                        &format!("editeur {}", last_word(&entry["appName"])),
                        entry,
                    )
                })
            },
        ),
        Check::new(
            "history.delete",
            (HISTORY, "`DELETE /v1/history?id=` → `{deleted:true}`"),
            Needs::WRITES,
            |cx| {
                with_entry(cx, |cx, entry| {
                    let lower = entry["id"].as_str().unwrap_or_default().to_lowercase();
                    let ex = cx.send(Request::new("DELETE", &format!("/v1/history?id={lower}")))?;
                    let json = ex.ok_json()?;
                    ex.ensure(
                        json == json!({"deleted": true}),
                        "{\"deleted\":true}",
                        &json,
                    )?;
                    let again =
                        cx.send(Request::new("DELETE", &format!("/v1/history?id={lower}")))?;
                    again.error_message(404, "not_found", "History entry not found")?;
                    // Put it back so that the clean-up's delete finds it.
                    import(cx, &document(vec![entry.clone()], vec![])).map(drop)
                })
            },
        ),
    ]
}
