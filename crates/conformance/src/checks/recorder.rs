//! The Recorder: status, the refusals that need no capture, and (with `--allow-audio`) a
//! session from start to its finished WAV file.

use serde_json::Value;

use crate::context::Exchange;
use crate::expect::{Kind, fields, fresh_uuid};
use crate::http::Request;
use crate::{Check, Ctx, Needs, Step, skip};

const RECORDER: &str = "Recorder";

fn idle(cx: &mut Ctx) -> Step {
    let (ex, json) = cx.get_json("/v1/recorder/status")?;
    fields(&ex, &json, "Recorder status", &[("recording", Kind::Bool)])?;
    if json["recording"] == true {
        return skip("the Recorder is recording: the kit does not interrupt it");
    }
    Ok(())
}

fn start(cx: &mut Ctx, query: &str) -> Step<Exchange> {
    cx.send(Request::new("POST", &format!("/v1/recorder/start{query}")))
}

/// Starts a recording, runs `body`, then stops it and waits for the session's end.
fn recording(cx: &mut Ctx, body: impl FnOnce(&mut Ctx, &Exchange, &str) -> Step) -> Step {
    idle(cx)?;
    let started = start(cx, "")?;
    let answer = started.ok_json()?;
    let id = answer["id"].as_str().unwrap_or_default().to_string();
    let outcome = body(cx, &started, &id);
    let _ = cx.send(Request::new("POST", "/v1/recorder/stop"));
    let ended = finish(cx, &id);
    outcome?;
    ended.map(drop)
}

/// Polls the session until `completed` or `failed` (30 s at most).
fn finish(cx: &mut Ctx, id: &str) -> Step<(Exchange, Value)> {
    super::poll_until_ended(
        cx,
        &format!("/v1/recorder/session?id={id}"),
        ["recording", "finalizing"],
    )
}

pub fn checks() -> Vec<Check> {
    vec![
        Check::new(
            "recorder.events",
            (
                RECORDER,
                "`GET /v1/recorder/events`: a session's events, each `{type, id, ...}` with the contract's fields, `recorder.started`, `.stopped`, then `.completed` or `.failed`",
            ),
            Needs::AUDIO,
            |cx| {
                idle(cx)?;
                let mut events = cx.follow_events("/v1/recorder/events")?;
                // The stream answers its head at once; give it a moment to be subscribed.
                std::thread::sleep(std::time::Duration::from_millis(300));
                let mut session_id = String::new();
                recording(cx, |_, _, id| {
                    session_id = id.to_string();
                    std::thread::sleep(std::time::Duration::from_secs(3));
                    Ok(())
                })?;
                let ends = ["recorder.completed", "recorder.failed"];
                let seen = events.until(&session_id, &ends, std::time::Duration::from_secs(10));
                crate::events::check_session("recorder", &session_id, seen).or_else(|wrong| {
                    crate::fail(
                        "the session's live events as the contract's third wave defines them",
                        wrong,
                    )
                })
            },
        ),
        Check::new(
            "recorder.status",
            (RECORDER, "`GET /v1/recorder/status` → `{recording:bool}`"),
            Needs::ACCESS,
            |cx| {
                let (ex, json) = cx.get_json("/v1/recorder/status")?;
                fields(&ex, &json, "Recorder status", &[("recording", Kind::Bool)])
            },
        ),
        Check::new(
            "recorder.stop-idle",
            (RECORDER, "`POST /v1/recorder/stop` ... 409 `Not recording`"),
            Needs::ACCESS,
            |cx| {
                idle(cx)?;
                cx.send(Request::new("POST", "/v1/recorder/stop"))?
                    .error_message(409, "conflict", "Not recording")
            },
        ),
        Check::new(
            "recorder.session-unknown",
            (RECORDER, "404 `Recorder session not found`"),
            Needs::ACCESS,
            |cx| {
                cx.get(&format!("/v1/recorder/session?id={}", fresh_uuid()))?
                    .error_message(404, "not_found", "Recorder session not found")
            },
        ),
        Check::new(
            "recorder.session-bad-id",
            (
                RECORDER,
                "`GET /v1/recorder/session?id=`: query id required",
            ),
            Needs::ACCESS,
            |cx| {
                cx.get("/v1/recorder/session?id=not-a-uuid")?
                    .error(400, "bad_request")
                    .map(drop)
            },
        ),
        Check::new(
            "recorder.invalid-mic",
            (
                RECORDER,
                "invalid value 400 `Invalid 'mic' query parameter`",
            ),
            Needs::ACCESS,
            |cx| {
                idle(cx)?;
                start(cx, "?mic=yes")?.error_message(
                    400,
                    "bad_request",
                    "Invalid 'mic' query parameter",
                )
            },
        ),
        Check::new(
            "recorder.invalid-system-audio",
            (
                RECORDER,
                "invalid value 400 (recorder `mic`/`system_audio`: only `true/false/1/0`)",
            ),
            Needs::ACCESS,
            |cx| {
                idle(cx)?;
                start(cx, "?system_audio=on")?.error_message(
                    400,
                    "bad_request",
                    "Invalid 'system_audio' query parameter",
                )
            },
        ),
        Check::new(
            "recorder.no-source",
            (
                RECORDER,
                "no source 400 `At least one audio source must be enabled.`",
            ),
            Needs::ACCESS,
            |cx| {
                idle(cx)?;
                start(cx, "?mic=false&system_audio=0")?.error_message(
                    400,
                    "bad_request",
                    "At least one audio source must be enabled.",
                )
            },
        ),
        Check::new(
            "recorder.start",
            (
                RECORDER,
                "`POST /v1/recorder/start?mic=&system_audio=` → `{id, status:\"recording\"}`",
            ),
            Needs::AUDIO,
            |cx| {
                recording(cx, |cx, started, _| {
                    super::answered_recording(started)?;
                    let (ex, now) = cx.get_json("/v1/recorder/status")?;
                    ex.ensure(
                        now["recording"] == true,
                        "{\"recording\":true} while recording",
                        &now,
                    )
                })
            },
        ),
        Check::new(
            "recorder.start-twice",
            (RECORDER, "409 `Already recording`"),
            Needs::AUDIO,
            |cx| {
                recording(cx, |cx, _, _| {
                    start(cx, "")?.error_message(409, "conflict", "Already recording")
                })
            },
        ),
        Check::new(
            "recorder.stop",
            (
                RECORDER,
                "`POST /v1/recorder/stop` → `{id, status:\"finalizing\"}`",
            ),
            Needs::AUDIO,
            |cx| {
                recording(cx, |cx, _, id| {
                    let ex = cx.send(Request::new("POST", "/v1/recorder/stop"))?;
                    let json = ex.ok_json()?;
                    ex.ensure(
                        json["id"] == id && json["status"] == "finalizing",
                        format!("{{\"id\":\"{id}\",\"status\":\"finalizing\"}}"),
                        &json,
                    )
                })
            },
        ),
        Check::new(
            "recorder.session",
            (
                RECORDER,
                "`GET /v1/recorder/session?id=` → `{id, status, text?, output_file?, error?}`",
            ),
            Needs::AUDIO,
            |cx| {
                recording(cx, |cx, _, id| {
                    cx.send(Request::new("POST", "/v1/recorder/stop"))?;
                    let (ex, json) = finish(cx, id)?;
                    use Kind::*;
                    fields(
                        &ex,
                        &json,
                        "Recorder session",
                        &[
                            ("id", Uuid),
                            ("status", Str),
                            ("text?", Str),
                            ("output_file?", Str),
                            ("error?", Str),
                        ],
                    )?;
                    let failed = json["status"] == "failed";
                    ex.ensure(
                        failed == json.get("error").is_some(),
                        "`error` exactly on failed sessions",
                        &json,
                    )?;
                    // The kit's recordings are ordinary ones: one that fails is the server's fault.
                    ex.ensure(!failed, "a completed session", &json)
                })
            },
        ),
        Check::new(
            "recorder.output-file",
            (
                RECORDER,
                "Output: a WAV file (48 kHz ...) ... written to a temporary name and renamed when complete",
            ),
            Needs::AUDIO,
            |cx| {
                recording(cx, |cx, _, id| {
                    cx.send(Request::new("POST", "/v1/recorder/stop"))?;
                    let (ex, json) = finish(cx, id)?;
                    ex.ensure(json["status"] == "completed", "a completed session", &json)?;
                    let path = json["output_file"].as_str().unwrap_or_default();
                    ex.ensure(path.starts_with('/'), "an absolute `output_file`", &json)?;
                    match hound::WavReader::open(path) {
                        Ok(wav) => ex.ensure(
                            wav.spec().sample_rate == 48_000,
                            "a 48 kHz WAV file",
                            format!("{} Hz", wav.spec().sample_rate),
                        ),
                        Err(e) => {
                            Err(ex.fail(format!("a readable WAV file at {path}"), e.to_string()))
                        }
                    }
                })
            },
        ),
        Check::new(
            "recorder.stop-after-stop",
            (RECORDER, "`POST /v1/recorder/stop` ... 409 `Not recording`"),
            Needs::AUDIO,
            |cx| {
                recording(cx, |cx, _, _| {
                    cx.send(Request::new("POST", "/v1/recorder/stop"))?;
                    let ex = cx.send(Request::new("POST", "/v1/recorder/stop"))?;
                    let message = ex.error(409, "conflict")?;
                    ex.ensure(
                        message == "Not recording" || message == "Recorder is finalizing",
                        "409 `Not recording` (or `Recorder is finalizing`)",
                        format!("{message:?}"),
                    )
                })
            },
        ),
    ]
}
