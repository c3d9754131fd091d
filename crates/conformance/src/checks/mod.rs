//! The checks, one module per area (`transcribe_results` holds the transcription successes,
//! `corrections` the dictionary's corrections).

mod auth;
mod backup;
mod corrections;
mod dictation;
mod dictionary;
mod discovery;
mod errors;
mod history;
mod limits;
mod models;
mod openai;
mod realtime;
mod recorder;
mod rules;
mod security;
mod status;
mod transcribe;
mod transcribe_requests;
mod transcribe_results;
mod wire;
mod wyoming;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::context::Exchange;
use super::expect::{Kind, fields, marker};
use super::http::Request;
use super::{Check, Ctx, Step};

/// A dictation or Recorder start's answer: `{id, status:"recording"}`.
fn answered_recording(started: &Exchange) -> Step {
    let answer = started.json()?;
    fields(
        started,
        &answer,
        "start answer",
        &[("id", Kind::Uuid), ("status", Kind::Str)],
    )?;
    started.ensure(
        answer["status"] == "recording",
        "status \"recording\"",
        &answer,
    )
}

/// Deletes an entry that does not exist (`{key: "kit<marker>"}`) from the dictionary list at
/// `path`, whose count is `count`: the answer must be `{deleted:false, count}`, with a 200.
fn delete_absent(cx: &mut Ctx, path: &str, key: &str, count: &Value) -> Step {
    let ex =
        cx.send(Request::new("DELETE", path).json(&json!({ key: format!("kit{}", marker()) })))?;
    let json = ex.ok_json()?;
    ex.ensure(
        json == json!({"deleted": false, "count": count}),
        format!("{{\"deleted\":false,\"count\":{count}}}"),
        &json,
    )
}

/// Polls a dictation or Recorder session at `path` until its status is `completed` or `failed`
/// (30 s at most); any status but those and `live` fails the check.
fn poll_until_ended(cx: &mut Ctx, path: &str, live: [&str; 2]) -> Step<(Exchange, Value)> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (ex, json) = cx.get_json(path)?;
        let state = json["status"].as_str().unwrap_or_default();
        if state == "completed" || state == "failed" {
            return Ok((ex, json));
        }
        ex.ensure(
            live.contains(&state),
            format!("status {}, {}, completed or failed", live[0], live[1]),
            &json,
        )?;
        if Instant::now() > deadline {
            return Err(ex.fail("the session ends within 30 s", json.to_string()));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Every check, area by area in [`super::Area`]'s order.
pub fn all() -> Vec<Check> {
    let mut checks = Vec::new();
    for area in [
        wire::checks,
        errors::checks,
        status::checks,
        models::checks,
        auth::checks,
        security::checks,
        limits::checks,
        transcribe::checks,
        openai::checks,
        realtime::checks,
        history::checks,
        dictionary::checks,
        rules::checks,
        backup::checks,
        dictation::checks,
        recorder::checks,
        discovery::checks,
        wyoming::checks,
    ] {
        checks.extend(area());
    }
    checks
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    #[test]
    fn ids_are_unique_and_areas_in_order() {
        let checks = super::all();
        let mut seen = HashSet::new();
        for check in &checks {
            assert!(seen.insert(check.id), "{} twice", check.id);
        }
        assert!(checks.windows(2).all(|w| w[0].area <= w[1].area));
        assert!(checks.len() >= 120, "{} checks", checks.len());
    }

    #[test]
    fn the_guide_counts_them_right() {
        let guide = include_str!("../../../../docs/conformance.md");
        let said = format!("`contract.md`: {} checks,", super::all().len());
        assert!(
            guide.contains(&said),
            "docs/conformance.md should say {said}"
        );
    }
}
