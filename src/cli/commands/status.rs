//! `verbatim status`: whether the selected model can transcribe, in words: `Ready - <engine>
//! (<model>)` with whether it is loaded or loads on first use; otherwise which model is
//! selected but not downloaded, or that none is selected, with the command that fixes it.

use super::super::output::print_answer;
use super::super::{CliError, Client, Globals};
use crate::wire::{ModelList, Status};

pub fn run(globals: &Globals) -> Result<(), CliError> {
    let client = Client::from_globals(globals)?;
    let status: Status = client.get("/v1/status")?;
    if globals.json {
        print_answer(true, &status, |_| {});
        return Ok(());
    }
    // The models list says whether the model is loaded and which are downloaded; a server
    // that cannot list them still gets its status printed.
    let models = client.get::<ModelList>("/v1/models").ok();
    println!("{}", describe(&status, models.as_ref()));
    Ok(())
}

/// The status line for people.
pub fn describe(status: &Status, models: Option<&ModelList>) -> String {
    let entry = |id: &str| {
        models.and_then(|list| {
            list.models
                .iter()
                .find(|m| m.id == id && status.engine.as_deref().is_none_or(|e| e == m.engine))
        })
    };
    let downloaded: Vec<&str> = models
        .map(|list| {
            list.models
                .iter()
                .filter(|m| m.downloaded.unwrap_or(m.status == "ready"))
                .map(|m| m.id.as_str())
                .collect()
        })
        .unwrap_or_default();
    match (status.status.as_str(), &status.engine, &status.model) {
        ("ready", Some(engine), Some(model)) => {
            let state = match entry(model).and_then(|m| m.loaded) {
                Some(true) => ", loaded",
                Some(false) => ", selected: loads on first use",
                None => "",
            };
            format!("Ready - {engine} ({model}){state}")
        }
        ("ready", Some(engine), None) => format!("Ready - {engine}"),
        (_, Some(engine), Some(model)) => format!(
            "Selected {engine} ({model}), not downloaded: run `verbatim models download {model}`"
        ),
        _ if downloaded.is_empty() => "No model selected and none downloaded: run `verbatim models download tiny.en && verbatim models select tiny.en`".to_owned(),
        _ => format!(
            "No model selected: run `verbatim models select {}` (downloaded: {})",
            downloaded[0],
            downloaded.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ModelEntry;

    fn status(state: &str, model: Option<&str>) -> Status {
        Status {
            status: state.into(),
            engine: model.map(|_| "whisper".into()),
            model: model.map(str::to_owned),
            api_version: "1.1".into(),
            supports_workflow_dictation: true,
            supports_streaming: true,
            supports_translation: false,
        }
    }

    fn models(entries: &[(&str, bool, bool)]) -> ModelList {
        ModelList {
            models: entries
                .iter()
                .map(|&(id, downloaded, loaded)| ModelEntry {
                    id: id.into(),
                    engine: "whisper".into(),
                    name: id.into(),
                    size_description: "75 MB".into(),
                    language_count: 1,
                    status: if downloaded {
                        "ready"
                    } else {
                        "not_configured"
                    }
                    .into(),
                    selected: false,
                    downloaded: Some(downloaded),
                    loaded: Some(loaded),
                    capabilities: None,
                    unavailable: None,
                })
                .collect(),
        }
    }

    #[test]
    fn a_selected_model_is_loaded_or_loads_on_first_use() {
        let ready = status("ready", Some("tiny.en"));
        let list = models(&[("tiny.en", true, false)]);
        assert_eq!(
            describe(&ready, Some(&list)),
            "Ready - whisper (tiny.en), selected: loads on first use"
        );
        let list = models(&[("tiny.en", true, true)]);
        assert_eq!(
            describe(&ready, Some(&list)),
            "Ready - whisper (tiny.en), loaded"
        );
        assert_eq!(describe(&ready, None), "Ready - whisper (tiny.en)");
    }

    #[test]
    fn a_model_not_downloaded_or_none_selected_says_what_to_run() {
        let list = models(&[("tiny.en", true, false), ("base.en", false, false)]);
        assert_eq!(
            describe(&status("no_model", Some("base.en")), Some(&list)),
            "Selected whisper (base.en), not downloaded: run `verbatim models download base.en`"
        );
        assert_eq!(
            describe(&status("no_model", None), Some(&list)),
            "No model selected: run `verbatim models select tiny.en` (downloaded: tiny.en)"
        );
        let none = models(&[("tiny.en", false, false)]);
        assert!(
            describe(&status("no_model", None), Some(&none))
                .starts_with("No model selected and none downloaded")
        );
    }
}
