//! Rules (workflows): the list under both keys and both routes, each rule's fields, and the
//! toggle (restored by toggling back through the legacy alias).

use serde_json::Value;

use crate::context::Exchange;
use crate::expect::{Kind, fields, fresh_uuid};
use crate::http::Request;
use crate::{Check, Ctx, Needs, Step, skip};

const RULES: &str = "Rules (workflows)";

fn rules(cx: &mut Ctx) -> Step<(Exchange, Vec<Value>)> {
    let (ex, json) = cx.get_json("/v1/rules")?;
    fields(
        &ex,
        &json,
        "rules list",
        &[("rules", Kind::Arr), ("profiles", Kind::Arr)],
    )?;
    let list = json["rules"].as_array().cloned().unwrap_or_default();
    Ok((ex, list))
}

fn some_rules(cx: &mut Ctx) -> Step<(Exchange, Vec<Value>)> {
    let (ex, list) = rules(cx)?;
    if list.is_empty() {
        return skip("no rule on this server");
    }
    Ok((ex, list))
}

fn toggle(cx: &mut Ctx, route: &str, id: &str) -> Step<(Exchange, Value)> {
    let ex = cx.send(Request::new("PUT", &format!("{route}?id={id}")))?;
    let json = ex.ok_json()?;
    use Kind::*;
    fields(
        &ex,
        &json,
        "toggle answer",
        &[
            ("id", Uuid),
            ("name", Str),
            ("rule_name", Str),
            ("profile_name", Str),
            ("is_enabled", Bool),
        ],
    )?;
    Ok((ex, json))
}

pub fn checks() -> Vec<Check> {
    vec![
        Check::new(
            "rules.both-keys",
            (
                RULES,
                "`{rules:[...], profiles:[...]}` (the same list under both keys)",
            ),
            Needs::ACCESS,
            |cx| {
                let (ex, json) = cx.get_json("/v1/rules")?;
                ex.ensure(
                    json["rules"].is_array() && json["rules"] == json["profiles"],
                    "the same list under `rules` and `profiles`",
                    &json,
                )
            },
        ),
        Check::new(
            "rules.profiles-alias",
            (RULES, "`GET /v1/rules` and `GET /v1/profiles`"),
            Needs::ACCESS,
            |cx| {
                let (_, rules) = cx.get_json("/v1/rules")?;
                let (ex, profiles) = cx.get_json("/v1/profiles")?;
                ex.ensure(
                    rules == profiles,
                    "the same answer as GET /v1/rules",
                    &profiles,
                )
            },
        ),
        Check::new(
            "rules.fields",
            (
                RULES,
                "Rule: `{id, name, is_enabled, priority, bundle_identifiers, url_patterns, input_language?, language_mode, language_hints, translation_target_language?}`",
            ),
            Needs::ACCESS,
            |cx| {
                let (ex, list) = some_rules(cx)?;
                use Kind::*;
                for rule in &list {
                    fields(
                        &ex,
                        rule,
                        "rule",
                        &[
                            ("id", Uuid),
                            ("name", Str),
                            ("is_enabled", Bool),
                            ("priority", Int),
                            ("bundle_identifiers", Arr),
                            ("url_patterns", Arr),
                            ("input_language?", Str),
                            ("language_mode", Str),
                            ("language_hints", Arr),
                            ("translation_target_language?", Str),
                        ],
                    )?;
                }
                Ok(())
            },
        ),
        Check::new(
            "rules.language-mode",
            (
                RULES,
                "language_mode:\"inherit\"|\"auto\"|\"exact\"|\"multiple\"",
            ),
            Needs::ACCESS,
            |cx| {
                let (ex, list) = some_rules(cx)?;
                for rule in &list {
                    let mode = rule["language_mode"].as_str().unwrap_or_default();
                    ex.ensure(
                        ["inherit", "auto", "exact", "multiple"].contains(&mode),
                        "inherit, auto, exact or multiple",
                        mode,
                    )?;
                }
                Ok(())
            },
        ),
        Check::new(
            "rules.priority-order",
            (RULES, "ordered by priority"),
            Needs::ACCESS,
            |cx| {
                let (ex, list) = some_rules(cx)?;
                let priorities: Vec<i64> = list
                    .iter()
                    .map(|r| r["priority"].as_i64().unwrap_or_default())
                    .collect();
                ex.ensure(
                    priorities.windows(2).all(|w| w[0] <= w[1]),
                    "priorities in order",
                    format!("{priorities:?}"),
                )
            },
        ),
        Check::new(
            "rules.toggle-unknown",
            (RULES, "404 `Rule not found`"),
            Needs::ACCESS,
            |cx| {
                let path = format!("/v1/rules/toggle?id={}", fresh_uuid());
                cx.send(Request::new("PUT", &path))?.error_message(
                    404,
                    "not_found",
                    "Rule not found",
                )
            },
        ),
        Check::new(
            "rules.toggle-alias-unknown",
            (RULES, "(and the profiles alias)"),
            Needs::ACCESS,
            |cx| {
                let path = format!("/v1/profiles/toggle?id={}", fresh_uuid());
                cx.send(Request::new("PUT", &path))?.error_message(
                    404,
                    "not_found",
                    "Rule not found",
                )
            },
        ),
        Check::new(
            "rules.toggle-bad-id",
            (RULES, "`PUT /v1/rules/toggle?id=`: 400 for an invalid id"),
            Needs::ACCESS,
            |cx| {
                cx.send(Request::new("PUT", "/v1/rules/toggle?id=not-a-uuid"))?
                    .error(400, "bad_request")
                    .map(drop)
            },
        ),
        Check::new(
            "rules.toggle",
            (
                RULES,
                "`PUT /v1/rules/toggle?id=` (and the profiles alias) → `{id, name, rule_name, profile_name, is_enabled}` (new state)",
            ),
            Needs::WRITES,
            |cx| {
                let (_, list) = some_rules(cx)?;
                let rule = &list[0];
                let id = rule["id"].as_str().unwrap_or_default();
                let was = rule["is_enabled"] == true;
                let (ex, first) = toggle(cx, "/v1/rules/toggle", id)?;
                let (ex2, second) = toggle(cx, "/v1/profiles/toggle", id)?;
                ex.ensure(
                    first["is_enabled"] == !was && first["id"] == rule["id"],
                    format!("is_enabled {} (the new state) for {id}", !was),
                    &first,
                )?;
                ex2.ensure(
                    second["is_enabled"] == was,
                    format!("is_enabled {was} again through the alias"),
                    &second,
                )
            },
        ),
        Check::new(
            "rules.toggle-names",
            (RULES, "→ `{id, name, rule_name, profile_name, is_enabled}`"),
            Needs::WRITES,
            |cx| {
                let (_, list) = some_rules(cx)?;
                let id = list[0]["id"].as_str().unwrap_or_default().to_string();
                let (ex, first) = toggle(cx, "/v1/rules/toggle", &id)?;
                toggle(cx, "/v1/rules/toggle", &id)?;
                ex.ensure(
                    first["name"] == list[0]["name"]
                        && first["rule_name"] == first["name"]
                        && first["profile_name"] == first["name"],
                    format!("name, rule_name and profile_name all {}", list[0]["name"]),
                    &first,
                )
            },
        ),
    ]
}
