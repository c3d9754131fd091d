//! Dictionary terms: merge, trim, de-duplication, re-casing, replace, clamping (corrections
//! are in `corrections`). Writes use fresh marked terms and delete them again; `replace:true`
//! puts the previous list back.

use serde_json::{Value, json};

use crate::context::Exchange;
use crate::expect::{Kind, fields, marker};
use crate::http::Request;
use crate::{Check, Ctx, Needs, Step, skip};

const DICTIONARY: &str = "Dictionary";
const TERMS: &str = "/v1/dictionary/terms";

fn terms_fields(ex: &Exchange, json: &Value) -> Step {
    fields(
        ex,
        json,
        "terms",
        &[
            ("terms", Kind::Arr),
            ("term_entries", Kind::Arr),
            ("count", Kind::Int),
        ],
    )?;
    for entry in json["term_entries"].as_array().into_iter().flatten() {
        fields(
            ex,
            entry,
            "term entry",
            &[("term", Kind::Str), ("ctc_min_similarity?", Kind::Num)],
        )?;
    }
    Ok(())
}

fn terms(cx: &mut Ctx) -> Step<(Exchange, Value)> {
    let (ex, json) = cx.get_json(TERMS)?;
    terms_fields(&ex, &json)?;
    Ok((ex, json))
}

fn list(json: &Value, key: &str) -> Vec<String> {
    json[key]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t.as_str().map(str::to_string))
        .collect()
}

fn put_terms(cx: &mut Ctx, body: Value) -> Step<(Exchange, Value)> {
    let ex = cx.send(Request::new("PUT", TERMS).json(&body))?;
    let json = ex.ok_json()?;
    terms_fields(&ex, &json)?;
    Ok((ex, json))
}

/// Runs `body` with a fresh marker, then deletes every term containing it.
fn with_marked_terms(cx: &mut Ctx, body: impl FnOnce(&mut Ctx, &str) -> Step) -> Step {
    let mark = marker();
    let outcome = body(cx, &mark);
    let (_, now) = terms(cx)?;
    for term in list(&now, "terms")
        .into_iter()
        .filter(|t| t.to_lowercase().contains(&mark))
    {
        cx.send(Request::new("DELETE", TERMS).json(&json!({"term": term})))?
            .ok_json()?;
    }
    outcome
}

fn marked(json: &Value, mark: &str) -> Vec<String> {
    list(json, "terms")
        .into_iter()
        .filter(|t| t.to_lowercase().contains(mark))
        .collect()
}

pub fn checks() -> Vec<Check> {
    let mut checks = vec![
        Check::new(
            "dictionary.terms-fields",
            (
                DICTIONARY,
                "`{terms:[string], term_entries:[{term, ctc_min_similarity?}], count}`",
            ),
            Needs::ACCESS,
            |cx| {
                let (ex, json) = terms(cx)?;
                let names: Vec<String> = json["term_entries"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|e| e["term"].as_str().map(str::to_string))
                    .collect();
                ex.ensure(
                    names == list(&json, "terms") && json["count"] == names.len(),
                    "terms, term_entries and count describe the same list",
                    &json,
                )
            },
        ),
        Check::new(
            "dictionary.terms-sorted",
            (DICTIONARY, "(enabled terms, sorted case-insensitively)"),
            Needs::ACCESS,
            |cx| {
                let (ex, json) = terms(cx)?;
                let terms = list(&json, "terms");
                if terms.len() < 2 {
                    return skip("fewer than two terms on this server");
                }
                let lower: Vec<String> = terms.iter().map(|t| t.to_lowercase()).collect();
                ex.ensure(
                    lower.windows(2).all(|w| w[0] <= w[1]),
                    "terms sorted case-insensitively",
                    format!("{terms:?}"),
                )
            },
        ),
        Check::new(
            "dictionary.put-neither",
            (
                DICTIONARY,
                "`PUT {terms|term_entries, replace?}`: both or neither → 400",
            ),
            Needs::ACCESS,
            |cx| {
                cx.send(Request::new("PUT", TERMS).json(&json!({"replace": false})))?
                    .error(400, "bad_request")
                    .map(drop)
            },
        ),
        Check::new(
            "dictionary.put-both",
            (
                DICTIONARY,
                "`PUT {terms|term_entries, replace?}`: both or neither → 400",
            ),
            Needs::ACCESS,
            |cx| {
                let body = json!({"terms": [format!("kit{}", marker())], "term_entries": [{"term": format!("kit{}", marker())}]});
                cx.send(Request::new("PUT", TERMS).json(&body))?
                    .error(400, "bad_request")
                    .map(drop)
            },
        ),
        Check::new(
            "dictionary.delete-absent-term",
            (
                DICTIONARY,
                "`DELETE {term}` → `{deleted:bool, count}` (200 even when absent)",
            ),
            Needs::ACCESS,
            |cx| {
                let (_, before) = terms(cx)?;
                super::delete_absent(cx, TERMS, "term", &before["count"])
            },
        ),
        Check::new(
            "dictionary.merge-trims-dedupes",
            (
                DICTIONARY,
                "terms trimmed, empties dropped, duplicates removed case- and accent-insensitively (first wins)",
            ),
            Needs::WRITES,
            |cx| {
                with_marked_terms(cx, |cx, m| {
                    let (ex, json) = put_terms(
                        cx,
                        json!({"terms": [format!("  Kit{m} "), "", format!("kit{m}"), format!("KÏT{m}")]}),
                    )?;
                    ex.ensure(
                        marked(&json, m) == [format!("Kit{m}")],
                        format!("only \"Kit{m}\""),
                        format!("{:?}", marked(&json, m)),
                    )
                })
            },
        ),
        Check::new(
            "dictionary.merge-keeps-others",
            (
                DICTIONARY,
                "`replace:true` drops terms not listed [merging keeps them]",
            ),
            Needs::WRITES,
            |cx| {
                let (_, before) = terms(cx)?;
                with_marked_terms(cx, |cx, m| {
                    let (ex, json) = put_terms(cx, json!({"terms": [format!("kit{m}")]}))?;
                    let kept = list(&before, "terms")
                        .iter()
                        .all(|t| list(&json, "terms").contains(t));
                    ex.ensure(
                        kept && json["count"] == before["count"].as_u64().unwrap_or(0) + 1,
                        "the earlier terms kept, count one more",
                        &json,
                    )
                })
            },
        ),
        Check::new(
            "dictionary.merge-recases",
            (DICTIONARY, "merging re-cases a matching term"),
            Needs::WRITES,
            |cx| {
                with_marked_terms(cx, |cx, m| {
                    put_terms(cx, json!({"terms": [format!("kitbeta{m}")]}))?;
                    let (ex, json) = put_terms(cx, json!({"terms": [format!("KitBeta{m}")]}))?;
                    ex.ensure(
                        marked(&json, m) == [format!("KitBeta{m}")],
                        format!("only \"KitBeta{m}\""),
                        format!("{:?}", marked(&json, m)),
                    )
                })
            },
        ),
        Check::new(
            "dictionary.ctc-clamped",
            (DICTIONARY, "`ctc_min_similarity` clamped to 0..1"),
            Needs::WRITES,
            |cx| {
                with_marked_terms(cx, |cx, m| {
                    let (ex, json) = put_terms(
                        cx,
                        json!({"term_entries": [{"term": format!("kita{m}"), "ctc_min_similarity": 1.7}, {"term": format!("kitb{m}"), "ctc_min_similarity": -0.5}]}),
                    )?;
                    let values: Vec<Value> = json["term_entries"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|e| e["term"].as_str().is_some_and(|t| t.contains(m)))
                        .map(|e| e["ctc_min_similarity"].clone())
                        .collect();
                    let as_f64: Vec<Option<f64>> = values.iter().map(Value::as_f64).collect();
                    ex.ensure(
                        as_f64 == [Some(1.0), Some(0.0)],
                        "ctc_min_similarity 1 and 0",
                        format!("{values:?}"),
                    )
                })
            },
        ),
        Check::new(
            "dictionary.sorted-after-merge",
            (DICTIONARY, "(enabled terms, sorted case-insensitively)"),
            Needs::WRITES,
            |cx| {
                with_marked_terms(cx, |cx, m| {
                    let (ex, json) = put_terms(
                        cx,
                        json!({"terms": [format!("kitb{m}"), format!("KITA{m}"), format!("kitc{m}")]}),
                    )?;
                    ex.ensure(
                        marked(&json, m)
                            == [format!("KITA{m}"), format!("kitb{m}"), format!("kitc{m}")],
                        "KITA, kitb, kitc in that order",
                        format!("{:?}", marked(&json, m)),
                    )
                })
            },
        ),
        Check::new(
            "dictionary.replace",
            (DICTIONARY, "`replace:true` drops terms not listed"),
            Needs::WRITES,
            |cx| {
                let (_, export) = cx.get_json("/v1/settings/export")?;
                let disabled = export["dictionaryEntries"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|e| e["type"] == "term" && e["isEnabled"] == false);
                if disabled {
                    return skip(
                        "the server has disabled terms, which restoring the list would not bring back",
                    );
                }
                let (_, before) = terms(cx)?;
                let mark = marker();
                let replaced = put_terms(
                    cx,
                    json!({"terms": [format!("kit{mark}")], "replace": true}),
                );
                let restored = put_terms(
                    cx,
                    json!({"term_entries": before["term_entries"], "replace": true}),
                );
                let (ex, json) = replaced?;
                let (rex, back) = restored?;
                ex.ensure(
                    list(&json, "terms") == [format!("kit{mark}")],
                    format!("only \"kit{mark}\""),
                    &json,
                )?;
                rex.ensure(
                    back["term_entries"] == before["term_entries"],
                    "the earlier list back",
                    &back,
                )
            },
        ),
        Check::new(
            "dictionary.delete-term",
            (DICTIONARY, "`DELETE {term}` → `{deleted:bool, count}`"),
            Needs::WRITES,
            |cx| {
                with_marked_terms(cx, |cx, m| {
                    let (_, added) = put_terms(cx, json!({"terms": [format!("kit{m}")]}))?;
                    let ex = cx.send(
                        Request::new("DELETE", TERMS).json(&json!({"term": format!("kit{m}")})),
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
    ];
    checks.extend(super::corrections::checks());
    checks
}
