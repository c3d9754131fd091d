//! The `info` answer to `describe`: one `asr` program, `verbatim`, with every installed model
//! as a model entry (its languages, attribution and version), streaming transcripts offered.

use serde_json::{Value, json};

use crate::engine::ModelOffer;
use crate::engine::registry;

/// The program's and every model's `version`: Verbatim's.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The `info` event's data for the installed models among `offers`.
pub fn info_data(offers: &[ModelOffer]) -> Value {
    let models: Vec<Value> = offers
        .iter()
        .filter(|offer| offer.downloaded)
        .map(|offer| {
            let spec = offer.spec;
            json!({
                "name": spec.id,
                "description": format!("{} ({})", spec.name, spec.size_description),
                "attribution": attribution(spec.engine),
                "installed": true,
                "version": VERSION,
                "languages": spec.languages(),
            })
        })
        .collect();
    json!({
        "asr": [{
            "name": "verbatim",
            "description": "Verbatim: local speech to text",
            "attribution": {"name": "Verbatim", "url": env!("CARGO_PKG_REPOSITORY")},
            "installed": true,
            "version": VERSION,
            "models": models,
            "supports_transcript_streaming": true,
        }],
    })
}

/// Who made the models an engine runs.
fn attribution(engine: &str) -> Value {
    let (name, url) = registry::kind(engine).map_or(("", ""), |kind| kind.credit);
    json!({"name": name, "url": url})
}
