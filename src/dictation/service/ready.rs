//! Before a dictation captures anything: whether a model can transcribe it, the session's
//! workflow and profile resolved, so that a start is refused at once rather than after the
//! person has spoken.

use super::*;

impl Dictation {
    /// Refuses a start that nobody could transcribe (no model selected, the profile's or the
    /// selected model's weights missing) before anything is captured: the person learns it
    /// before speaking, not after. Answers the planned transcription.
    pub(super) async fn ready_to_transcribe(
        &self,
        id: Uuid,
        setup: &Setup,
    ) -> Result<Planned, DictationError> {
        let options = session_options(setup.workflow.as_ref(), setup.profile.as_ref());
        let named_model = options.model.clone();
        let caller = Caller::Dictation(Dictated {
            id,
            started_at: Utc::now(),
            app_name: setup.context.app_name.clone(),
            app_bundle_id: setup.context.app_id.clone(),
            app_url: setup.context.url.clone(),
        });
        let planned = self.transcriber.plan(options, false, caller).await;
        let err = match planned {
            Ok(planned) => return Ok(planned),
            Err(err) => err,
        };
        let reason = match err {
            TranscribeError::NoEngineSelected => {
                "no model is selected (verbatim models select ID)".to_owned()
            }
            TranscribeError::NotConfigured(_) if named_model.is_some() => format!(
                "the model '{0}' of the profile '{1}' is not downloaded (verbatim models download {0})",
                named_model.unwrap_or_default(),
                setup.profile.as_ref().map_or("", |p| p.name.as_str()),
            ),
            TranscribeError::NotConfigured(_) => {
                let transcriber = self.transcriber.clone();
                let selected = session::blocking("reading the selection stopped", move || {
                    Ok::<_, DictationError>(transcriber.selected()?)
                })
                .await
                .ok()
                .flatten();
                match selected {
                    Some(resolved) => format!(
                        "the model '{0}' is not downloaded (verbatim models download {0})",
                        resolved.offer.spec.id
                    ),
                    None => "the selected model is not downloaded".to_owned(),
                }
            }
            other => match &setup.profile {
                Some(profile) => {
                    format!("the profile '{}': {}", profile.name, other.public_message())
                }
                None => other.public_message(),
            },
        };
        Err(DictationError::NoModelReady(reason))
    }
}
