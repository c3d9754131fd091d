//! What a person at a terminal should read when the server refuses: the refusal in plain
//! words, without HTTP, and the command that fixes it. Scripts (standard error not a terminal)
//! get the contract's line, `Error: Server returned <status> - <message>`, unchanged.

use std::io::IsTerminal;

use super::{CliError, Client};
use crate::wire::{ModelList, Status, echo};

/// A refusal in plain words, and what to run about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Advice {
    pub sentence: String,
    pub fix: Option<String>,
}

/// What the failed command asked for, as far as advice needs it.
#[derive(Debug, Default, Clone)]
pub struct Asked {
    /// The model named on the command line (`transcribe --model`).
    pub model: Option<String>,
}

/// Writes `err` to standard error: for people when standard error is a terminal, else as the
/// contract says. With `--json`, a server's refusal is also printed to standard output as the
/// Error object.
pub fn report(err: &CliError, json: bool, client: Option<&Client>, asked: &Asked) {
    if let (true, CliError::Server { code, message, .. }) = (json, err) {
        crate::cli::output::print_json(&serde_json::json!({
            "error": { "code": code, "message": message }
        }));
    }
    if !std::io::stderr().is_terminal() {
        eprintln!("Error: {err}");
        return;
    }
    let advice = match err {
        CliError::Server {
            status, message, ..
        } => advise(*status, message, asked, &|| Known::ask(client)),
        _ => None,
    };
    match advice {
        Some(advice) => {
            eprintln!("Error: {}", advice.sentence);
            if let Some(fix) = advice.fix {
                eprintln!("  fix: {fix}");
            }
        }
        None => match err {
            CliError::Server { message, .. } => eprintln!("Error: {message}"),
            other => eprintln!("Error: {other}"),
        },
    }
}

/// What the server says about its models, read only when advice needs it.
#[derive(Debug, Default, Clone)]
pub struct Known {
    /// Installed models' ids.
    pub installed: Vec<String>,
    /// The selected model's id.
    pub selected: Option<String>,
}

impl Known {
    fn ask(client: Option<&Client>) -> Known {
        let Some(client) = client else {
            return Known::default();
        };
        let installed = client
            .get::<ModelList>("/v1/models")
            .map(|list| {
                list.models
                    .into_iter()
                    .filter(|m| m.downloaded.unwrap_or(m.status == "ready"))
                    .map(|m| m.id)
                    .collect()
            })
            .unwrap_or_default();
        let selected = client
            .get::<Status>("/v1/status")
            .ok()
            .and_then(|status| status.model);
        Known {
            installed,
            selected,
        }
    }
}

/// The advice for a refusal (`status`, `message`) of what was `asked`; `known` reads the
/// server's models when the advice names them.
pub fn advise(
    status: u16,
    message: &str,
    asked: &Asked,
    known: &dyn Fn() -> Known,
) -> Option<Advice> {
    let advice = |sentence: String, fix: Option<String>| Some(Advice { sentence, fix });
    match status {
        409 if message.contains("is not configured") => {
            let known = known();
            let model = asked.model.clone().or(known.selected.clone());
            let Some(model) = model else {
                return advice(
                    "The model is not downloaded.".into(),
                    Some(
                        "verbatim models (to see which are), then verbatim models download ID"
                            .into(),
                    ),
                );
            };
            let mut fix = format!(
                "verbatim models download {}, or add --await-download to download it and wait",
                echo(&model)
            );
            if !known.installed.is_empty() {
                fix.push_str(&format!("; downloaded: {}", known.installed.join(", ")));
            }
            advice(
                format!("The model '{}' is not downloaded.", echo(&model)),
                Some(fix),
            )
        }
        503 if message.starts_with("No engine selected") => {
            let known = known();
            let fix = match known.installed.first() {
                Some(first) => format!(
                    "verbatim models select {first} (downloaded: {})",
                    known.installed.join(", ")
                ),
                None => "verbatim models download tiny.en && verbatim models select tiny.en".into(),
            };
            advice("No model is selected.".into(), Some(fix))
        }
        400 if message.starts_with("Unknown model '") => {
            let typed = message
                .trim_start_matches("Unknown model '")
                .trim_end_matches('\'');
            let fix = match crate::engine::catalog::closest_model(typed) {
                Some(meant) => format!("did you mean {meant}? (verbatim models lists them)"),
                None => "verbatim models (lists the models)".into(),
            };
            advice(format!("There is no model '{}'.", echo(typed)), Some(fix))
        }
        409 if message.starts_with("No microphone") => advice(
            "No microphone can be opened.".into(),
            Some("verbatim doctor (it checks the sound server and the devices)".into()),
        ),
        401 => advice(
            "The server refused the API token.".into(),
            Some(
                "pass it with --api-token or VERBATIM_API_TOKEN; `verbatim token show` prints it"
                    .into(),
            ),
        ),
        _ => advice(message.to_owned(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOT_CONFIGURED: &str = "Engine 'whisper' is not configured (missing API key or downloaded weights). Pass ?await_download=1 to wait for the download.";

    fn known(installed: &[&str], selected: Option<&str>) -> impl Fn() -> Known {
        let installed: Vec<String> = installed.iter().map(|s| s.to_string()).collect();
        let selected = selected.map(str::to_owned);
        move || Known {
            installed: installed.clone(),
            selected: selected.clone(),
        }
    }

    #[test]
    fn a_model_not_downloaded_names_the_model_and_the_download_command() {
        let asked = Asked {
            model: Some("base.en".into()),
        };
        let advice = advise(409, NOT_CONFIGURED, &asked, &known(&["tiny.en"], None)).unwrap();
        assert_eq!(advice.sentence, "The model 'base.en' is not downloaded.");
        let fix = advice.fix.unwrap();
        assert!(fix.starts_with("verbatim models download base.en"), "{fix}");
        assert!(fix.contains("--await-download") && fix.contains("downloaded: tiny.en"));
        assert!(!fix.contains("API key") && !fix.contains('?'), "{fix}");
        // Without --model, the selected one.
        let advice = advise(
            409,
            NOT_CONFIGURED,
            &Asked::default(),
            &known(&[], Some("base")),
        );
        assert_eq!(
            advice.unwrap().sentence,
            "The model 'base' is not downloaded."
        );
    }

    #[test]
    fn nothing_selected_names_the_installed_models_or_the_first_download() {
        let message = "No engine selected. Select an engine first.";
        let advice = advise(
            503,
            message,
            &Asked::default(),
            &known(&["tiny.en", "base"], None),
        );
        assert_eq!(
            advice.unwrap().fix.unwrap(),
            "verbatim models select tiny.en (downloaded: tiny.en, base)"
        );
        let advice = advise(503, message, &Asked::default(), &known(&[], None)).unwrap();
        assert_eq!(advice.sentence, "No model is selected.");
        assert!(
            advice
                .fix
                .unwrap()
                .contains("verbatim models download tiny.en")
        );
    }

    #[test]
    fn no_microphone_points_to_doctor_and_other_refusals_keep_their_message() {
        let none = known(&[], None);
        let advice = advise(409, "No microphone available", &Asked::default(), &none).unwrap();
        assert!(advice.fix.unwrap().starts_with("verbatim doctor"));
        let advice = advise(400, "Unknown language code 'xx'", &Asked::default(), &none).unwrap();
        assert_eq!(advice.sentence, "Unknown language code 'xx'");
        assert_eq!(advice.fix, None);
    }

    #[test]
    fn a_mistyped_model_names_the_one_meant() {
        let none = || Known::default();
        let advice = advise(400, "Unknown model 'tiny-en'", &Asked::default(), &none).unwrap();
        assert_eq!(advice.sentence, "There is no model 'tiny-en'.");
        assert_eq!(
            advice.fix.as_deref(),
            Some("did you mean tiny.en? (verbatim models lists them)")
        );
    }
}
