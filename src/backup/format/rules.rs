//! Workflows and profiles in the backup document: the fields every rule has, then each kind's
//! own (a workflow's language mode and hints, a profile's engine and model).

use serde_json::{Map, Value, json};

use super::put_opt;
use crate::backup::reader::{Obj, Problem, Read};
use crate::store::workflows::ActionId;
use crate::store::{LanguageMode, ProfileFields, Rule, WorkflowFields};
use crate::wire::format_uuid;

/// A kind of rule's own fields in the document.
pub trait KindFields: Sized {
    /// Adds this kind's fields to the rule's object.
    fn write(&self, fields: &mut Map<String, Value>);
    /// Reads this kind's fields from the rule's object.
    fn read(o: &Obj) -> Read<Self>;
}

pub fn write_rule<T: KindFields>(rule: &Rule<T>) -> Value {
    let mut map = json!({
        "id": format_uuid(&rule.id),
        "name": rule.name,
        "isEnabled": rule.enabled,
        "priority": rule.priority,
        "bundleIdentifiers": rule.bundle_identifiers,
        "urlPatterns": rule.url_patterns,
    });
    let fields = map.as_object_mut().expect("an object");
    put_opt(fields, "inputLanguage", &rule.input_language);
    put_opt(
        fields,
        "translationTargetLanguage",
        &rule.translation_target_language,
    );
    rule.extra.write(fields);
    map
}

pub fn read_rule<T: KindFields>(o: &Obj) -> Read<Rule<T>> {
    // Fields are checked in this order; the first problem is the one reported.
    Ok(Rule {
        id: o.uuid("id")?,
        name: o.text("name")?,
        enabled: o.bool_or("isEnabled", true)?,
        priority: o.int_or("priority", 0)?,
        bundle_identifiers: o.strings("bundleIdentifiers")?,
        url_patterns: o.strings("urlPatterns")?,
        input_language: o.opt_string("inputLanguage")?,
        extra: T::read(o)?,
        translation_target_language: o.opt_string("translationTargetLanguage")?,
    })
}

impl KindFields for WorkflowFields {
    fn write(&self, fields: &mut Map<String, Value>) {
        fields.insert("languageMode".into(), json!(self.language_mode.as_str()));
        fields.insert("languageHints".into(), json!(self.language_hints));
        if let Some(action) = &self.prompt_action_id {
            fields.insert("promptActionId".into(), json!(format_uuid(&action.0)));
        }
    }

    fn read(o: &Obj) -> Read<Self> {
        Ok(WorkflowFields {
            language_mode: read_language_mode(o)?,
            language_hints: o.strings("languageHints")?,
            prompt_action_id: o.opt_uuid("promptActionId")?.map(ActionId),
        })
    }
}

impl KindFields for ProfileFields {
    fn write(&self, fields: &mut Map<String, Value>) {
        put_opt(fields, "engine", &self.engine);
        put_opt(fields, "model", &self.model);
    }

    fn read(o: &Obj) -> Read<Self> {
        Ok(ProfileFields {
            engine: o.opt_string("engine")?,
            model: o.opt_string("model")?,
        })
    }
}

fn read_language_mode(o: &Obj) -> Read<LanguageMode> {
    match o.opt_string("languageMode") {
        Ok(None) => Ok(LanguageMode::default()),
        Ok(Some(mode)) => mode
            .parse()
            .map_err(|()| expected_one_of(o, "languageMode")),
        Err(_) => Err(expected_one_of(o, "languageMode")),
    }
}

fn expected_one_of(o: &Obj, key: &str) -> Problem {
    let modes: Vec<String> = LanguageMode::ALL
        .iter()
        .map(|m| format!("\"{m}\""))
        .collect();
    o.problem(key, format!("expected one of {}.", modes.join(", ")))
}
