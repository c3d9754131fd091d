//! The Recorder as the generic session driver runs it (`session.rs`): its state machine
//! (`machine.rs`) and the effects it asks for.

use super::*;

impl Driven for Recorder {
    const NAME: &'static str = "recorder";
    type State = State;
    type Event = Event;
    type Effect = Effect;
    type Refused = Refused;
    const NOT_RECORDING: Refused = Refused::NotRecording;
    type Captured = CaptureEnd;
    type Session = ActiveRecording;
    type Error = RecorderError;

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
    ) -> Result<(), RecorderError> {
        let (id, end) = match effect {
            Effect::StartCapture { .. } => {
                unreachable!("start opens the devices itself before committing the state")
            }
            Effect::Finalize { id } => {
                let thread = live.stop_capture();
                let transcription = live.session.as_mut().and_then(|s| {
                    s.stopped = Some(Instant::now());
                    s.transcription.take()
                });
                self.events
                    .publish_session("recorder.stopped", &id, json!({}));
                self.store.set_recorder_status(&id, "finalizing")?;
                if let Some(thread) = thread {
                    tokio::spawn(self.clone().finalize(id, thread, transcription));
                }
                return Ok(());
            }
            Effect::Completed {
                id,
                output_file,
                text,
            } => {
                tracing::info!(%id, file = %output_file.display(), "recording completed");
                let stopped = live.session.as_ref().and_then(|s| s.stopped);
                let to_text = stopped.map_or(0, |s| s.elapsed().as_millis() as u64);
                let fields = json!({
                    "text": text.clone().unwrap_or_default(),
                    "output_file": output_file,
                    "stop_to_text_ms": to_text,
                });
                self.events
                    .publish_session("recorder.completed", &id, fields);
                let end = RecorderEnd {
                    status: "completed",
                    output_file: Some(output_file),
                    text,
                    error: None,
                };
                (id, end)
            }
            Effect::Failed {
                id,
                error,
                output_file,
            } => {
                tracing::warn!(%id, "recording failed: {error}");
                live.stop_capture();
                if let Some(running) = live.session.as_mut().and_then(|s| s.transcription.take()) {
                    running.abort();
                }
                self.events
                    .publish_session("recorder.failed", &id, json!({ "error": error }));
                let end = RecorderEnd {
                    status: "failed",
                    output_file,
                    text: None,
                    error: Some(error),
                };
                (id, end)
            }
        };
        self.store.end_recorder_session(&id, &end)?;
        Ok(())
    }
}
