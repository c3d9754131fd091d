//! Dictionary corrections: the list, upsert by case-insensitive `original`, delete. Writes use
//! a fresh marked original and delete it again.

use serde_json::{Value, json};

use crate::context::Exchange;
use crate::expect::{Kind, fields, marker};
use crate::http::Request;
use crate::{Check, Ctx, Needs, Step};

const DICTIONARY: &str = "Dictionary";
const CORRECTIONS: &str = "/v1/dictionary/corrections";

fn corrections(cx: &mut Ctx) -> Step<(Exchange, Value)> {
    let (ex, json) = cx.get_json(CORRECTIONS)?;
    corrections_fields(&ex, &json)?;
    Ok((ex, json))
}

fn corrections_fields(ex: &Exchange, json: &Value) -> Step {
    fields(
        ex,
        json,
        "corrections",
        &[("corrections", Kind::Arr), ("count", Kind::Int)],
    )?;
    for c in json["corrections"].as_array().into_iter().flatten() {
        fields(
            ex,
            c,
            "correction",
            &[
                ("original", Kind::Str),
                ("replacement", Kind::Str),
                ("caseSensitive", Kind::Bool),
            ],
        )?;
    }
    let len = json["corrections"].as_array().map_or(0, Vec::len);
    ex.ensure(json["count"] == len, format!("count {len}"), &json["count"])
}

/// Runs `body` with a fresh original, then deletes that correction.
fn with_marked_correction(cx: &mut Ctx, body: impl FnOnce(&mut Ctx, &str) -> Step) -> Step {
    let original = format!("kit{}", marker());
    let outcome = body(cx, &original);
    cx.send(Request::new("DELETE", CORRECTIONS).json(&json!({"original": original})))?
        .ok_json()?;
    outcome
}

fn put_correction(cx: &mut Ctx, body: Value) -> Step<(Exchange, Value)> {
    let ex = cx.send(Request::new("PUT", CORRECTIONS).json(&body))?;
    let json = ex.ok_json()?;
    corrections_fields(&ex, &json)?;
    Ok((ex, json))
}

pub fn checks() -> Vec<Check> {
    vec![
        Check::new(
            "dictionary.corrections-fields",
            (
                DICTIONARY,
                "`{corrections:[{original, replacement, caseSensitive}], count}`",
            ),
            Needs::ACCESS,
            |cx| corrections(cx).map(drop),
        ),
        Check::new(
            "dictionary.correction-empty-original",
            (DICTIONARY, "empty `original` 400"),
            Needs::ACCESS,
            |cx| {
                cx.send(
                    Request::new("PUT", CORRECTIONS)
                        .json(&json!({"original": "", "replacement": "x"})),
                )?
                .error(400, "bad_request")
                .map(drop)
            },
        ),
        Check::new(
            "dictionary.delete-absent-correction",
            (DICTIONARY, "`DELETE {original}` → `{deleted:bool, count}`"),
            Needs::ACCESS,
            |cx| {
                let (_, before) = corrections(cx)?;
                super::delete_absent(cx, CORRECTIONS, "original", &before["count"])
            },
        ),
        Check::new(
            "dictionary.correction-upsert",
            (
                DICTIONARY,
                "`PUT {original, replacement, caseSensitive?}` upserts by case-insensitive `original` and returns the full list",
            ),
            Needs::WRITES,
            |cx| {
                let (_, before) = corrections(cx)?;
                with_marked_correction(cx, |cx, original| {
                    put_correction(cx, json!({"original": original, "replacement": "first"}))?;
                    let (ex, json) = put_correction(
                        cx,
                        json!({"original": original.to_uppercase(), "replacement": "second", "caseSensitive": true}),
                    )?;
                    let mine: Vec<&Value> = json["corrections"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|c| {
                            c["original"]
                                .as_str()
                                .is_some_and(|o| o.eq_ignore_ascii_case(original))
                        })
                        .collect();
                    ex.ensure(
                        mine.len() == 1
                            && mine[0]["replacement"] == "second"
                            && mine[0]["caseSensitive"] == true,
                        "one correction, updated to \"second\"",
                        format!("{mine:?}"),
                    )?;
                    ex.ensure(
                        json["count"] == before["count"].as_u64().unwrap_or(0) + 1,
                        "the full list, one longer than before",
                        &json,
                    )
                })
            },
        ),
        Check::new(
            "dictionary.correction-default-case",
            (
                DICTIONARY,
                "`caseSensitive:false` matches any case [the default]",
            ),
            Needs::WRITES,
            |cx| {
                with_marked_correction(cx, |cx, original| {
                    let (ex, json) =
                        put_correction(cx, json!({"original": original, "replacement": "x"}))?;
                    let mine = json["corrections"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .find(|c| c["original"] == original)
                        .cloned()
                        .unwrap_or_default();
                    ex.ensure(
                        mine["caseSensitive"] == false,
                        "caseSensitive false when not given",
                        &mine,
                    )
                })
            },
        ),
        Check::new(
            "dictionary.correction-delete",
            (DICTIONARY, "`DELETE {original}` → `{deleted:bool, count}`"),
            Needs::WRITES,
            |cx| {
                with_marked_correction(cx, |cx, original| {
                    let (_, added) =
                        put_correction(cx, json!({"original": original, "replacement": "x"}))?;
                    let ex = cx.send(
                        Request::new("DELETE", CORRECTIONS).json(&json!({"original": original})),
                    )?;
                    let json = ex.ok_json()?;
                    let count = added["count"].as_u64().unwrap_or(1) - 1;
                    ex.ensure(
                        json == json!({"deleted": true, "count": count}),
                        format!("{{\"deleted\":true,\"count\":{count}}}"),
                        &json,
                    )
                })
            },
        ),
    ]
}
