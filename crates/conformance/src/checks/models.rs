//! `GET /v1/models`: the envelope, each entry's fields and values, and the selection.

use std::collections::HashSet;

use serde_json::Value;

use super::transcribe_requests::post_form;
use crate::context::Exchange;
use crate::expect::{Kind, fields};
use crate::{Check, Ctx, Needs, Step, skip};

const MODELS: &str = "Status and models";
const THIRD_WAVE: &str = "Additions (third wave)";

fn models(cx: &mut Ctx) -> Step<(Exchange, Vec<Value>)> {
    let (ex, json) = cx.get_json("/v1/models")?;
    let list = json["models"].as_array().cloned();
    let list = list.ok_or_else(|| ex.fail("{\"models\":[...]}", json.to_string()))?;
    Ok((ex, list))
}

pub fn checks() -> Vec<Check> {
    vec![
        Check::new(
            "models.envelope",
            (MODELS, "`GET /v1/models` → `{models:[...]}`"),
            Needs::ACCESS,
            |cx| models(cx).map(drop),
        ),
        Check::new(
            "models.entry-fields",
            (
                MODELS,
                "`{id, engine, name, size_description, language_count, status, selected, downloaded?, loaded?}`",
            ),
            Needs::ACCESS,
            |cx| {
                let (ex, list) = models(cx)?;
                use Kind::*;
                for model in &list {
                    fields(
                        &ex,
                        model,
                        "model entry",
                        &[
                            ("id", Str),
                            ("engine", Str),
                            ("name", Str),
                            ("size_description", Str),
                            ("language_count", Int),
                            ("status", Str),
                            ("selected", Bool),
                            ("downloaded?", Bool),
                            ("loaded?", Bool),
                        ],
                    )?;
                }
                Ok(())
            },
        ),
        Check::new(
            "models.capabilities",
            (
                THIRD_WAVE,
                "`capabilities` object: `{languages: [codes], translate, prompt, word_timestamps, live}`",
            ),
            Needs::ACCESS,
            |cx| {
                let (ex, list) = models(cx)?;
                use Kind::*;
                // Additive: servers from before the third wave have none.
                for capabilities in list.iter().filter_map(|m| m.get("capabilities")) {
                    fields(
                        &ex,
                        capabilities,
                        "capabilities",
                        &[
                            ("languages", Arr),
                            ("translate", Bool),
                            ("prompt", Bool),
                            ("word_timestamps", Bool),
                            ("live", Bool),
                        ],
                    )?;
                    let languages = capabilities["languages"].as_array();
                    ex.ensure(
                        languages.is_some_and(|l| {
                            !l.is_empty()
                                && l.iter().all(|c| c.as_str().is_some_and(|c| !c.is_empty()))
                        }),
                        "languages: a non-empty list of language codes",
                        capabilities,
                    )?;
                }
                Ok(())
            },
        ),
        Check::new(
            "models.capabilities-honoured",
            (
                THIRD_WAVE,
                "A request option the chosen engine cannot honour (`task=translate`, a language outside its list, word timestamps, a prompt where unsupported) is 400 `Engine '<e>' does not support <what>` (translation on `.en`: 400 naming the model)",
            ),
            Needs::ACCESS,
            |cx| {
                let (_, list) = models(cx)?;
                let mut tried = 0;
                for model in list.iter().filter(|m| m["status"] == "ready") {
                    let Some(capabilities) = model.get("capabilities") else {
                        continue;
                    };
                    let (id, engine) = (
                        model["id"].as_str().unwrap_or_default(),
                        model["engine"].as_str().unwrap_or_default(),
                    );
                    for refused in refusals(capabilities) {
                        let mut fields = vec![("engine", engine), ("model", id)];
                        fields.extend(refused.iter().copied());
                        let ex = post_form(cx, &fields)?;
                        let message = ex.error(400, "bad_request")?;
                        let by_engine =
                            message.starts_with(&format!("Engine '{engine}' does not support"));
                        // The earlier rule for translation: 400 naming the model.
                        let by_model =
                            refused[0].0 == "task" && message.contains(&format!("'{id}'"));
                        ex.ensure(
                            by_engine || by_model,
                            format!("400 bad_request `Engine '{engine}' does not support ...`"),
                            format!("message {message:?}"),
                        )?;
                        tried += 1;
                    }
                }
                if tried == 0 {
                    return skip("no ready model lacks a capability");
                }
                Ok(())
            },
        ),
        Check::new(
            "models.status-values",
            (MODELS, "status:\"ready\"|\"not_configured\""),
            Needs::ACCESS,
            |cx| {
                let (ex, list) = models(cx)?;
                for model in &list {
                    ex.ensure(
                        model["status"] == "ready" || model["status"] == "not_configured",
                        "status \"ready\" or \"not_configured\"",
                        model,
                    )?;
                }
                Ok(())
            },
        ),
        Check::new(
            "models.unique-ids",
            (
                MODELS,
                "The list covers every model exposed by the loaded transcription engines",
            ),
            Needs::ACCESS,
            |cx| {
                let (ex, list) = models(cx)?;
                let mut seen = HashSet::new();
                for model in &list {
                    let key = (model["engine"].to_string(), model["id"].to_string());
                    ex.ensure(seen.insert(key), "each (engine, id) once", model)?;
                }
                Ok(())
            },
        ),
        Check::new(
            "models.one-selection",
            (MODELS, "selected: true for the current selection"),
            Needs::ACCESS,
            |cx| {
                let (ex, list) = models(cx)?;
                let selected: Vec<&Value> = list.iter().filter(|m| m["selected"] == true).collect();
                ex.ensure(
                    selected.len() <= 1,
                    "at most one selected model",
                    selected.len(),
                )
            },
        ),
        Check::new(
            "models.not-downloaded-not-ready",
            (
                MODELS,
                "Not configured (weights not downloaded, key missing)",
            ),
            Needs::ACCESS,
            |cx| {
                let (ex, list) = models(cx)?;
                for model in &list {
                    ex.ensure(
                        !(model["downloaded"] == false && model["status"] == "ready"),
                        "a model whose weights are not downloaded is not ready",
                        model,
                    )?;
                }
                Ok(())
            },
        ),
    ]
}

/// A request's options for each capability `capabilities` says the model lacks.
fn refusals(capabilities: &Value) -> Vec<Vec<(&'static str, &'static str)>> {
    let lacks = |what: &str| capabilities[what] == false;
    let mut refusals = Vec::new();
    if lacks("translate") {
        refusals.push(vec![("task", "translate")]);
    }
    if lacks("prompt") {
        refusals.push(vec![("prompt", "Names: Siobhan")]);
    }
    if lacks("word_timestamps") {
        refusals.push(vec![
            ("response_format", "verbose_json"),
            ("timestamp_granularities", "word"),
        ]);
    }
    let knows = |code: &str| {
        capabilities["languages"]
            .as_array()
            .is_some_and(|l| l.iter().any(|c| c == code))
    };
    if let Some(code) = ["de", "fr", "es", "en"].into_iter().find(|c| !knows(c)) {
        refusals.push(vec![("language", code)]);
    }
    refusals
}
