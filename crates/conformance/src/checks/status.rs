//! `GET /v1/status`: public, its fields and their values, and agreement with `/v1/models`.

use crate::expect::{Kind, fields};
use crate::http::Request;
use crate::{Check, Needs};

const STATUS: &str = "Status and models";

pub fn checks() -> Vec<Check> {
    vec![
        Check::new(
            "status.fields",
            (
                STATUS,
                "`{status, engine?, model?, supports_workflow_dictation, supports_streaming, supports_translation}`",
            ),
            Needs::NOTHING,
            |cx| {
                let ex = cx.send_anonymous(Request::new("GET", "/v1/status"))?;
                let json = ex.ok_json()?;
                use Kind::*;
                fields(
                    &ex,
                    &json,
                    "status",
                    &[
                        ("status", Str),
                        ("engine?", Str),
                        ("model?", Str),
                        ("supports_workflow_dictation", Bool),
                        ("supports_streaming", Bool),
                        ("supports_translation", Bool),
                    ],
                )
            },
        ),
        Check::new(
            "status.api-version",
            (STATUS, "api_version:\"1.1\""),
            Needs::NOTHING,
            |cx| {
                let ex = cx.send_anonymous(Request::new("GET", "/v1/status"))?;
                let json = ex.ok_json()?;
                ex.ensure(
                    json["api_version"] == "1.1",
                    "api_version \"1.1\"",
                    &json["api_version"],
                )
            },
        ),
        Check::new(
            "status.value",
            (STATUS, "status:\"ready\"|\"no_model\""),
            Needs::NOTHING,
            |cx| {
                let ex = cx.send_anonymous(Request::new("GET", "/v1/status"))?;
                let json = ex.ok_json()?;
                ex.ensure(
                    json["status"] == "ready" || json["status"] == "no_model",
                    "status \"ready\" or \"no_model\"",
                    &json["status"],
                )
            },
        ),
        Check::new(
            "status.workflow-dictation",
            (STATUS, "supports_workflow_dictation:true"),
            Needs::NOTHING,
            |cx| {
                let ex = cx.send_anonymous(Request::new("GET", "/v1/status"))?;
                let json = ex.ok_json()?;
                ex.ensure(
                    json["supports_workflow_dictation"] == true,
                    "supports_workflow_dictation true",
                    &json["supports_workflow_dictation"],
                )
            },
        ),
        Check::new(
            "status.ready-has-model",
            (STATUS, "`ready` when the selected model can transcribe"),
            Needs::NOTHING,
            |cx| {
                let ex = cx.send_anonymous(Request::new("GET", "/v1/status"))?;
                let json = ex.ok_json()?;
                let ready = json["status"] == "ready";
                ex.ensure(
                    !ready || (json["engine"].is_string() && json["model"].is_string()),
                    "a ready status names its engine and model",
                    &json,
                )
            },
        ),
        Check::new(
            "status.agrees-with-models",
            (STATUS, "`ready` when the selected model can transcribe"),
            Needs::ACCESS,
            |cx| {
                let status = cx.status()?;
                let (ex, models) = cx.get_json("/v1/models")?;
                let selected = models["models"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|m| m["engine"] == status["engine"] && m["id"] == status["model"]);
                match selected {
                None if status.get("model").is_some() => Err(ex.fail(format!("/v1/models lists the status's model {}", status["model"]), "not listed")),
                None => Ok(()),
                Some(model) => ex.ensure(
                    model["selected"] == true && (model["status"] == "ready") == (status["status"] == "ready"),
                    format!("model {} selected, its status ready exactly when the server's status is ({})", status["model"], status["status"]),
                    model,
                ),
            }
            },
        ),
    ]
}
