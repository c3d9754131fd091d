//! The dictation as the generic session driver runs it (`session.rs`): its state machine
//! (`machine.rs`) and the effects it asks for.

use super::*;

impl Driven for Dictation {
    const NAME: &'static str = "dictation";
    type State = State;
    type Event = Event;
    type Effect = Effect;
    type Refused = Refused;
    const NOT_RECORDING: Refused = Refused::NotRecording;
    type Captured = Vec<f32>;
    type Session = ActiveDictation;
    type Error = DictationError;

    fn driver(&self) -> &Driver<Self> {
        &self.driver
    }

    fn apply(state: &State, event: Event, now: f64) -> Result<(State, Vec<Effect>), Refused> {
        apply(state, event, now)
    }

    fn recording(state: &State) -> Option<Uuid> {
        match state {
            State::Recording { id, .. } => Some(*id),
            _ => None,
        }
    }

    fn carry_out(
        self: &Arc<Self>,
        live: &mut Live<Self>,
        effect: Effect,
    ) -> Result<(), DictationError> {
        match effect {
            Effect::StartCapture { .. } => {
                unreachable!("start opens the microphone itself before committing the state")
            }
            Effect::Transcribe { id } => {
                let thread = live.stop_capture();
                if let Some(session) = &live.session {
                    lock(&session.clock).stopped = Some(Instant::now());
                }
                self.publish("dictation.stopped", &id, json!({}));
                self.store.set_dictation_status(&id, "processing", None)?;
                if let (Some(thread), Some(session)) = (thread, live.session.clone()) {
                    tokio::spawn(self.clone().process(id, thread, session));
                }
            }
            // The transcript was written with the session's details by `process`.
            Effect::SaveHistory { id, .. } => {
                self.store.set_dictation_status(&id, "inserting", None)?;
            }
            Effect::Insert { id, text } => {
                let inserted_live = live
                    .session
                    .as_ref()
                    .and_then(|s| lock(&s.live_insertion).take());
                tokio::spawn(self.clone().insert(id, text, inserted_live));
            }
            Effect::Completed { id } => {
                tracing::info!(%id, "dictation completed");
                self.store.set_dictation_status(&id, "completed", None)?;
                let clock = live.session.as_ref().map(|s| s.clock.clone());
                let clock = clock.as_ref().map(|c| lock(c));
                let stopped = clock.as_ref().and_then(|c| c.stopped);
                let (to_text, text) = clock
                    .as_ref()
                    .and_then(|c| c.text_ready.clone())
                    .unwrap_or_default();
                let to_insert = stopped.map_or(Duration::ZERO, |s| s.elapsed());
                let mut fields = json!({
                    "text": text,
                    "stop_to_text_ms": to_text.as_millis() as u64,
                    "stop_to_insert_ms": to_insert.as_millis() as u64,
                });
                // Under a prompt action: the time in its chat call, and why it gave no text.
                if let Some(action) = clock.as_ref().and_then(|c| c.action.as_ref()) {
                    fields["action_ms"] = json!((action.seconds * 1000.0).round() as u64);
                    fields["transcribed_text"] = json!(action.transcribed_text);
                    if let Some(error) = &action.error {
                        fields["prompt_action_error"] = json!(error);
                    }
                }
                self.publish("dictation.completed", &id, fields);
            }
            Effect::Failed { id, error } => {
                tracing::warn!(%id, "dictation failed: {error}");
                live.stop_capture();
                // What was heard so far is not kept: the session failed before it was stopped.
                if let Some(session) = &live.session
                    && let Some(transcription) = lock(&session.transcription).take()
                {
                    transcription.abort();
                }
                self.publish("dictation.failed", &id, json!({"error": error}));
                self.store
                    .set_dictation_status(&id, "failed", Some(&error))?;
            }
        }
        Ok(())
    }
}
