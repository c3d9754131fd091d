//! Dictation: the status, the refusals that need no capture, and (with `--allow-audio`) a
//! session's state machine. The kit deletes each session's history entry when it is done.

use serde_json::{Value, json};

use crate::context::Exchange;
use crate::expect::{Kind, fields, fresh_uuid};
use crate::http::Request;
use crate::{Check, Ctx, Needs, Step, skip};

const DICTATION: &str = "Dictation";

fn status(cx: &mut Ctx) -> Step<(Exchange, Value)> {
    cx.get_json("/v1/dictation/status")
}

fn start(cx: &mut Ctx, body: Value) -> Step<Exchange> {
    cx.send(Request::new("POST", "/v1/dictation/start").json(&body))
}

/// Skips unless dictation is idle: the kit never interrupts someone's dictation.
fn idle(cx: &mut Ctx) -> Step {
    let (_, json) = status(cx)?;
    if json["state"] != "idle" {
        return skip(format!(
            "dictation is busy ({}): the kit does not interrupt it",
            json["state"]
        ));
    }
    Ok(())
}

/// Starts a session, runs `body` with the start answer, then stops it (if still recording),
/// waits for its end and deletes its history entry.
fn session(cx: &mut Ctx, body: impl FnOnce(&mut Ctx, &Exchange, &str) -> Step) -> Step {
    idle(cx)?;
    let started = start(cx, json!({}))?;
    let answer = started.ok_json()?;
    let id = answer["id"].as_str().unwrap_or_default().to_string();
    let outcome = body(cx, &started, &id);
    let _ = cx.send(Request::new("POST", "/v1/dictation/stop"));
    let ended = finish(cx, &id);
    if !id.is_empty() {
        let _ = cx.send(Request::new("DELETE", &format!("/v1/history?id={id}")));
    }
    outcome?;
    ended.map(drop)
}

/// Polls the session until `completed` or `failed` (30 s at most).
fn finish(cx: &mut Ctx, id: &str) -> Step<(Exchange, Value)> {
    super::poll_until_ended(
        cx,
        &format!("/v1/dictation/transcription?id={id}"),
        ["recording", "processing"],
    )
}

pub fn checks() -> Vec<Check> {
    vec![
        Check::new(
            "dictation.events",
            (
                DICTATION,
                "`GET /v1/dictation/events`: a session's events, each `{type, id, ...}` with the contract's fields, `dictation.started`, `.stopped`, then `.completed` or `.failed`",
            ),
            Needs::AUDIO,
            |cx| {
                idle(cx)?;
                let mut events = cx.follow_events("/v1/dictation/events")?;
                // The stream answers its head at once; give it a moment to be subscribed.
                std::thread::sleep(std::time::Duration::from_millis(300));
                let mut session_id = String::new();
                session(cx, |_, _, id| {
                    session_id = id.to_string();
                    std::thread::sleep(std::time::Duration::from_secs(3));
                    Ok(())
                })?;
                let ends = ["dictation.completed", "dictation.failed"];
                let seen = events.until(&session_id, &ends, std::time::Duration::from_secs(10));
                crate::events::check_session("dictation", &session_id, seen).or_else(|wrong| {
                    crate::fail(
                        "the session's live events as the contract's third wave defines them",
                        wrong,
                    )
                })
            },
        ),
        Check::new(
            "dictation.status-fields",
            (
                DICTATION,
                "`{state, is_recording, active_model?, active_workflow?, active_workflow_id?}`",
            ),
            Needs::ACCESS,
            |cx| {
                let (ex, json) = status(cx)?;
                use Kind::*;
                fields(
                    &ex,
                    &json,
                    "dictation status",
                    &[
                        ("state", Str),
                        ("is_recording", Bool),
                        ("active_model?", Str),
                        ("active_workflow?", Str),
                        ("active_workflow_id?", Uuid),
                    ],
                )
            },
        ),
        Check::new(
            "dictation.status-values",
            (
                DICTATION,
                "state:\"idle\"|\"recording\"|\"processing\"|\"inserting\"|\"error\"",
            ),
            Needs::ACCESS,
            |cx| {
                let (ex, json) = status(cx)?;
                let state = json["state"].as_str().unwrap_or_default();
                ex.ensure(
                    ["idle", "recording", "processing", "inserting", "error"].contains(&state),
                    "a known state",
                    state,
                )?;
                ex.ensure(
                    (state == "recording") == (json["is_recording"] == true),
                    "is_recording true exactly while recording",
                    &json,
                )
            },
        ),
        Check::new(
            "dictation.stop-idle",
            (
                DICTATION,
                "`POST /v1/dictation/stop` ... 409 `Not recording`",
            ),
            Needs::ACCESS,
            |cx| {
                idle(cx)?;
                cx.send(Request::new("POST", "/v1/dictation/stop"))?
                    .error_message(409, "conflict", "Not recording")
            },
        ),
        Check::new(
            "dictation.transcription-unknown",
            (DICTATION, "404 `Dictation session not found`"),
            Needs::ACCESS,
            |cx| {
                let path = format!("/v1/dictation/transcription?id={}", fresh_uuid());
                cx.get(&path)?
                    .error_message(404, "not_found", "Dictation session not found")
            },
        ),
        Check::new(
            "dictation.transcription-bad-id",
            (
                DICTATION,
                "`GET /v1/dictation/transcription?id=`: 400 for an invalid id",
            ),
            Needs::ACCESS,
            |cx| {
                cx.get("/v1/dictation/transcription?id=not-a-uuid")?
                    .error(400, "bad_request")
                    .map(drop)
            },
        ),
        Check::new(
            "dictation.start-bad-workflow",
            (DICTATION, "400 `Missing or invalid 'workflow_id'`"),
            Needs::ACCESS,
            |cx| {
                start(cx, json!({"workflow_id": "not-a-uuid"}))?.error_message(
                    400,
                    "bad_request",
                    "Missing or invalid 'workflow_id'",
                )
            },
        ),
        Check::new(
            "dictation.start-unknown-workflow",
            (DICTATION, "404 `Workflow not found`"),
            Needs::ACCESS,
            |cx| {
                idle(cx)?;
                start(cx, json!({"workflow_id": fresh_uuid()}))?.error_message(
                    404,
                    "not_found",
                    "Workflow not found",
                )
            },
        ),
        Check::new(
            "dictation.start-disabled-workflow",
            (DICTATION, "409 `Workflow is disabled`"),
            Needs::ACCESS,
            |cx| {
                let (_, rules) = cx.get_json("/v1/rules")?;
                let disabled = rules["rules"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|r| r["is_enabled"] == false)
                    .cloned();
                let Some(rule) = disabled else {
                    return skip("no disabled rule on this server");
                };
                idle(cx)?;
                start(cx, json!({"workflow_id": rule["id"]}))?.error_message(
                    409,
                    "conflict",
                    "Workflow is disabled",
                )
            },
        ),
        Check::new(
            "dictation.start",
            (
                DICTATION,
                "`POST /v1/dictation/start` → `{id, status:\"recording\"}`; answered once capture has really started",
            ),
            Needs::AUDIO,
            |cx| {
                session(cx, |cx, started, _| {
                    super::answered_recording(started)?;
                    let (ex, now) = status(cx)?;
                    ex.ensure(
                        now["state"] == "recording" && now["is_recording"] == true,
                        "the status says recording as soon as start answered",
                        &now,
                    )
                })
            },
        ),
        Check::new(
            "dictation.start-twice",
            (DICTATION, "409 `Dictation is not idle`"),
            Needs::AUDIO,
            |cx| {
                session(cx, |cx, _, _| {
                    start(cx, json!({}))?.error_message(409, "conflict", "Dictation is not idle")
                })
            },
        ),
        Check::new(
            "dictation.stop",
            (
                DICTATION,
                "`POST /v1/dictation/stop` → `{id, status:\"stopped\"}`",
            ),
            Needs::AUDIO,
            |cx| {
                session(cx, |cx, _, id| {
                    let ex = cx.send(Request::new("POST", "/v1/dictation/stop"))?;
                    let json = ex.ok_json()?;
                    ex.ensure(
                        json["id"] == id && json["status"] == "stopped",
                        format!("{{\"id\":\"{id}\",\"status\":\"stopped\"}}"),
                        &json,
                    )?;
                    cx.send(Request::new("POST", "/v1/dictation/stop"))?
                        .error_message(409, "conflict", "Not recording")
                })
            },
        ),
        Check::new(
            "dictation.result",
            (
                DICTATION,
                "`{id, status, transcription?, error?}`; `transcription` is a history entry without `id`",
            ),
            Needs::AUDIO,
            |cx| {
                session(cx, |cx, _, id| {
                    cx.send(Request::new("POST", "/v1/dictation/stop"))?;
                    let (ex, json) = finish(cx, id)?;
                    // The kit's sessions are ordinary ones: one that fails is the server's fault.
                    ex.ensure(json["status"] == "completed", "a completed session", &json)?;
                    let entry = &json["transcription"];
                    ex.ensure(
                        entry.get("id").is_none(),
                        "a transcription without `id`",
                        entry,
                    )?;
                    use Kind::*;
                    fields(
                        &ex,
                        entry,
                        "transcription",
                        &[
                            ("text", Str),
                            ("raw_text", Str),
                            ("timestamp", Time),
                            ("duration", Num),
                            ("engine", Str),
                            ("words_count", Int),
                            ("language?", Str),
                            ("model?", Str),
                        ],
                    )
                })
            },
        ),
        Check::new(
            "dictation.history-entry",
            (DICTATION, "A session id is also its history entry id"),
            Needs::AUDIO,
            |cx| {
                session(cx, |cx, _, id| {
                    cx.send(Request::new("POST", "/v1/dictation/stop"))?;
                    let (ex, json) = finish(cx, id)?;
                    ex.ensure(json["status"] == "completed", "a completed session", &json)?;
                    let (ex, page) = cx.get_json("/v1/history?limit=200")?;
                    let found = page["entries"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|e| e["id"] == id);
                    ex.ensure(found, format!("a history entry with id {id}"), "none")
                })
            },
        ),
        Check::new(
            "dictation.idle-again",
            (DICTATION, "state:\"idle\" ... is_recording"),
            Needs::AUDIO,
            |cx| {
                session(cx, |_, _, _| Ok(()))?;
                let (ex, json) = status(cx)?;
                ex.ensure(
                    json["state"] == "idle" && json["is_recording"] == false,
                    "idle after a session ended",
                    &json,
                )
            },
        ),
        Check::new(
            "dictation.workflow",
            (
                DICTATION,
                "(optional `{workflow_id}`) → `{id, status, workflow_id?, workflow_name?}`",
            ),
            Needs::AUDIO,
            |cx| {
                let (_, rules) = cx.get_json("/v1/rules")?;
                let enabled = rules["rules"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|r| r["is_enabled"] == true)
                    .cloned();
                let Some(rule) = enabled else {
                    return skip("no enabled rule on this server");
                };
                idle(cx)?;
                let ex = start(cx, json!({"workflow_id": rule["id"]}))?;
                let answer = ex.ok_json();
                let (_, now) = status(cx)?;
                let _ = cx.send(Request::new("POST", "/v1/dictation/stop"));
                let id = answer
                    .as_ref()
                    .ok()
                    .and_then(|a| a["id"].as_str())
                    .unwrap_or_default()
                    .to_string();
                let ended = finish(cx, &id);
                let _ = cx.send(Request::new("DELETE", &format!("/v1/history?id={id}")));
                let answer = answer?;
                ended?;
                ex.ensure(
                    answer["workflow_id"] == rule["id"] && answer["workflow_name"] == rule["name"],
                    format!(
                        "workflow_id {} and workflow_name {}",
                        rule["id"], rule["name"]
                    ),
                    &answer,
                )?;
                ex.ensure(
                    now["active_workflow_id"] == rule["id"],
                    "the status names the active workflow",
                    &now,
                )
            },
        ),
    ]
}
