//! A recording's end: the file finalized (renamed from its `.part`), its live transcription
//! awaited or the finished file transcribed, and the session completed or failed with the reason.

use super::*;

impl Recorder {
    /// Waits for the capture thread, completes the file and takes the text of the live
    /// transcription (or transcribes the file) when enabled.
    pub(super) async fn finalize(
        self: Arc<Self>,
        id: Uuid,
        thread: JoinHandle<CaptureEnd>,
        transcription: Option<LiveTranscription>,
    ) {
        let result = self.finish_recording(thread, transcription).await;
        match &result {
            Ok(Finalized {
                text,
                transcription_error: None,
                ..
            }) => {
                let transcript = text.clone().unwrap_or_default();
                self.events
                    .publish_item("completed", &id, json!({ "transcript": transcript }));
            }
            Ok(Finalized {
                transcription_error: Some(message),
                ..
            }) => {
                let error = json!({"type": "transcription_error", "message": message});
                self.events
                    .publish_item("failed", &id, json!({ "error": error }));
            }
            Err(_) => {}
        }
        if let Err(err) = session::handle(&self, Event::FinalizationEnded(result)).await {
            tracing::error!(%id, "could not record the end of the recording: {err}");
        }
    }

    pub(super) async fn finish_recording(
        &self,
        thread: JoinHandle<CaptureEnd>,
        transcription: Option<LiveTranscription>,
    ) -> Result<Finalized, String> {
        // The live transcription ends with the capture (its audio ends there), or is stopped.
        let stop_live = AbortOnDrop(transcription);
        let ended = session::join(thread)
            .await
            .ok_or("The capture stopped unexpectedly; nothing could be saved.")?;
        let seconds = ended.sink.seconds();
        let output_file = tokio::task::spawn_blocking(move || ended.sink.finish())
            .await
            .map_err(|e| e.to_string())
            .and_then(|r| r.map_err(|e| e.to_string()))
            .map_err(|e| format!("Could not finalize the recording: {e}"))?;
        let mut done = Finalized {
            output_file,
            text: None,
            transcription_error: None,
        };
        let store = self.store.clone();
        let enabled = tokio::task::spawn_blocking(move || {
            store.pref_bool(&preferences::RECORDER_TRANSCRIPTION_ENABLED)
        })
        .await
        .map_or(true, |read| read.unwrap_or(true));
        // Nothing to transcribe in a recording stopped at once (or cut short by a fault).
        if enabled && seconds >= 0.1 && ended.failure.is_none() {
            let transcribed = match stop_live.take() {
                Some(live) => live
                    .await
                    .unwrap_or_else(|e| {
                        Err(TranscribeError::internal("the transcription stopped", e))
                    })
                    .map(|transcript| transcript.text)
                    .map_err(|err| err.public_message()),
                None => transcribe(&self.transcriber, &done.output_file).await,
            };
            match transcribed {
                Ok(text) => done.text = Some(text),
                Err(err) => {
                    done.transcription_error = Some(format!(
                        "The recording was saved, but transcribing it failed: {err}"
                    ))
                }
            }
        }
        Ok(done)
    }
}
