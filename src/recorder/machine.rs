//! The Recorder's state machine as a pure function: `apply(state, event, now)` returns the next
//! state and the effects the service must carry out, or why it refuses the event.
//!
//! (none) --start--> recording --stop / device lost--> finalizing --finalized--> (none)
//! A session ends `completed` (output file, optional text) or `failed` (error); a device lost
//! mid-session keeps what was captured and ends the session `failed` with the reason.

use std::path::PathBuf;

use uuid::Uuid;

/// Which sources a session captures (resolved from the query and the preferences).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sources {
    pub mic: bool,
    pub system_audio: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum State {
    Idle,
    Recording {
        id: Uuid,
        sources: Sources,
        started_at: f64,
    },
    Finalizing {
        id: Uuid,
        /// Set when the session ends because a device was lost.
        failure: Option<String>,
    },
}

/// What finalization produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Finalized {
    pub output_file: PathBuf,
    /// Transcript, when transcription is enabled and the text is not empty.
    pub text: Option<String>,
    /// Transcription was enabled but failed: the session fails, keeping the file.
    pub transcription_error: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Start { id: Uuid, sources: Sources },
    Stop,
    DeviceLost { reason: String },
    FinalizationEnded(Result<Finalized, String>),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Open the sources and stream them to the session's file.
    StartCapture { id: Uuid, sources: Sources },
    /// Close the sources and finish the file (mix, header, rename, optional transcription).
    Finalize { id: Uuid },
    Completed {
        id: Uuid,
        output_file: PathBuf,
        text: Option<String>,
    },
    Failed {
        id: Uuid,
        error: String,
        /// The file holding what was captured, when there is one.
        output_file: Option<PathBuf>,
    },
}

/// Why the machine refuses an event; the message is what a client is told.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("At least one audio source must be enabled.")]
    NoSource,
    #[error("Already recording")]
    AlreadyRecording,
    #[error("Recorder is finalizing")]
    Finalizing,
    #[error("Not recording")]
    NotRecording,
    /// An event the service should never send in this state (a bug, not a user error).
    #[error("unexpected recorder event {event} while {state}")]
    Unexpected {
        event: &'static str,
        state: &'static str,
    },
}

impl State {
    pub fn name(&self) -> &'static str {
        match self {
            State::Idle => "idle",
            State::Recording { .. } => "recording",
            State::Finalizing { .. } => "finalizing",
        }
    }

    pub fn is_recording(&self) -> bool {
        matches!(self, State::Recording { .. })
    }
}

impl Event {
    fn name(&self) -> &'static str {
        match self {
            Event::Start { .. } => "start",
            Event::Stop => "stop",
            Event::DeviceLost { .. } => "device lost",
            Event::FinalizationEnded(_) => "finalization ended",
        }
    }
}

/// The next state and effects for `event` in `state` at time `now` (seconds).
pub fn apply(state: &State, event: Event, now: f64) -> Result<(State, Vec<Effect>), Refused> {
    let unexpected = |event: &Event| Refused::Unexpected {
        event: event.name(),
        state: state.name(),
    };
    // An invalid request is refused whatever the state (400 before 409).
    if let Event::Start { sources, .. } = &event
        && !sources.mic
        && !sources.system_audio
    {
        return Err(Refused::NoSource);
    }
    match (state, event) {
        (State::Idle, Event::Start { id, sources }) => Ok((
            State::Recording {
                id,
                sources,
                started_at: now,
            },
            vec![Effect::StartCapture { id, sources }],
        )),
        (State::Recording { .. }, Event::Start { .. }) => Err(Refused::AlreadyRecording),
        (State::Finalizing { .. }, Event::Start { .. }) => Err(Refused::Finalizing),
        (State::Recording { id, .. }, Event::Stop) => Ok((
            State::Finalizing {
                id: *id,
                failure: None,
            },
            vec![Effect::Finalize { id: *id }],
        )),
        (State::Idle | State::Finalizing { .. }, Event::Stop) => Err(Refused::NotRecording),
        (State::Recording { id, .. }, Event::DeviceLost { reason }) => Ok((
            State::Finalizing {
                id: *id,
                failure: Some(reason),
            },
            vec![Effect::Finalize { id: *id }],
        )),
        (State::Finalizing { id, failure }, Event::FinalizationEnded(result)) => {
            let effect = match (failure, result) {
                (
                    None,
                    Ok(Finalized {
                        output_file,
                        transcription_error: Some(error),
                        ..
                    }),
                ) => Effect::Failed {
                    id: *id,
                    error,
                    output_file: Some(output_file),
                },
                (None, Ok(done)) => Effect::Completed {
                    id: *id,
                    output_file: done.output_file,
                    text: done.text.filter(|t| !t.trim().is_empty()),
                },
                (Some(reason), Ok(done)) => Effect::Failed {
                    id: *id,
                    error: reason.clone(),
                    output_file: Some(done.output_file),
                },
                (_, Err(error)) => Effect::Failed {
                    id: *id,
                    error,
                    output_file: None,
                },
            };
            Ok((State::Idle, vec![effect]))
        }
        (_, event) => Err(unexpected(&event)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// The reference model: per-session status as the API reports it, and the active session.
    #[derive(Debug, Default)]
    struct Model {
        active: Option<(Uuid, bool)>, // (id, finalizing)
        pending_failure: Option<String>,
        sessions: HashMap<Uuid, &'static str>,
    }

    #[derive(Debug, Clone)]
    enum Op {
        Start(bool, bool),
        Stop,
        Lose,
        Finish(bool),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (any::<bool>(), any::<bool>()).prop_map(|(m, s)| Op::Start(m, s)),
            Just(Op::Stop),
            Just(Op::Lose),
            any::<bool>().prop_map(Op::Finish),
        ]
    }

    proptest! {
        /// Every sequence of API calls, device faults and finalizations agrees with the model:
        /// the answers, the single active session, and every started session ending
        /// `completed` or `failed` once finalization has run.
        #[test]
        fn the_machine_agrees_with_the_reference_model(ops in proptest::collection::vec(op(), 1..60)) {
            let mut state = State::Idle;
            let mut model = Model::default();
            for (step, op) in ops.into_iter().enumerate() {
                let now = step as f64;
                let (event, expected): (Event, Result<(), Refused>) = match op {
                    Op::Start(mic, system_audio) => {
                        let id = Uuid::new_v4();
                        let expected = match model.active {
                            _ if !mic && !system_audio => Err(Refused::NoSource),
                            Some((_, false)) => Err(Refused::AlreadyRecording),
                            Some((_, true)) => Err(Refused::Finalizing),
                            None => Ok(()),
                        };
                        if expected.is_ok() {
                            model.active = Some((id, false));
                            model.sessions.insert(id, "recording");
                        }
                        (Event::Start { id, sources: Sources { mic, system_audio } }, expected)
                    }
                    Op::Stop => {
                        let expected = match model.active {
                            Some((id, false)) => {
                                model.active = Some((id, true));
                                model.sessions.insert(id, "finalizing");
                                Ok(())
                            }
                            _ => Err(Refused::NotRecording),
                        };
                        (Event::Stop, expected)
                    }
                    Op::Lose => {
                        let expected = match model.active {
                            Some((id, false)) => {
                                model.active = Some((id, true));
                                model.pending_failure = Some("microphone disconnected".into());
                                model.sessions.insert(id, "finalizing");
                                Ok(())
                            }
                            _ => Err(Refused::Unexpected { event: "device lost", state: state.name() }),
                        };
                        (Event::DeviceLost { reason: "microphone disconnected".into() }, expected)
                    }
                    Op::Finish(ok) => {
                        let expected = match model.active {
                            Some((id, true)) => {
                                let lost = model.pending_failure.take().is_some();
                                let failed = !ok || lost;
                                model.sessions.insert(id, if failed { "failed" } else { "completed" });
                                model.active = None;
                                Ok(())
                            }
                            _ => Err(Refused::Unexpected { event: "finalization ended", state: state.name() }),
                        };
                        let result = if ok {
                            Ok(Finalized { output_file: "/r.wav".into(), text: Some("hi".into()), transcription_error: None })
                        } else {
                            Err("disk full".into())
                        };
                        (Event::FinalizationEnded(result), expected)
                    }
                };
                match (apply(&state, event, now), expected) {
                    (Ok((next, effects)), Ok(())) => {
                        for effect in &effects {
                            if let Effect::Completed { id, .. } = effect {
                                prop_assert_eq!(model.sessions[id], "completed");
                            }
                            if let Effect::Failed { id, .. } = effect {
                                prop_assert_eq!(model.sessions[id], "failed");
                            }
                        }
                        state = next;
                    }
                    (Err(got), Err(want)) => prop_assert_eq!(got, want),
                    (got, want) => prop_assert!(false, "got {:?}, model expected {:?}", got, want),
                }
                // Exactly one session is active at a time, and the states agree.
                let active = model.sessions.values().filter(|s| **s == "recording" || **s == "finalizing").count();
                prop_assert!(active <= 1);
                prop_assert_eq!(state.is_recording(), matches!(model.active, Some((_, false))));
            }
        }
    }

    #[test]
    fn a_lost_device_keeps_the_capture_and_fails_the_session_with_the_reason() {
        let id = Uuid::new_v4();
        let sources = Sources {
            mic: true,
            system_audio: false,
        };
        let (s, _) = apply(&State::Idle, Event::Start { id, sources }, 0.0).unwrap();
        let (s, effects) = apply(
            &s,
            Event::DeviceLost {
                reason: "USB microphone unplugged".into(),
            },
            3.0,
        )
        .unwrap();
        assert_eq!(effects, vec![Effect::Finalize { id }]);
        let done = Finalized {
            output_file: "/rec/a.wav".into(),
            text: None,
            transcription_error: None,
        };
        let (s, effects) = apply(&s, Event::FinalizationEnded(Ok(done)), 3.5).unwrap();
        assert_eq!(s, State::Idle);
        assert_eq!(
            effects,
            vec![Effect::Failed {
                id,
                error: "USB microphone unplugged".into(),
                output_file: Some("/rec/a.wav".into())
            }]
        );
    }

    #[test]
    fn empty_text_is_omitted_from_a_completed_session() {
        let id = Uuid::new_v4();
        let s = State::Finalizing { id, failure: None };
        let done = Finalized {
            output_file: "/rec/b.wav".into(),
            text: Some("  ".into()),
            transcription_error: None,
        };
        let (_, effects) = apply(&s, Event::FinalizationEnded(Ok(done)), 1.0).unwrap();
        assert_eq!(
            effects,
            vec![Effect::Completed {
                id,
                output_file: "/rec/b.wav".into(),
                text: None
            }]
        );
    }

    #[test]
    fn a_failed_transcription_fails_the_session_but_keeps_the_file() {
        let id = Uuid::new_v4();
        let s = State::Finalizing { id, failure: None };
        let done = Finalized {
            output_file: "/rec/c.wav".into(),
            text: None,
            transcription_error: Some("no model".into()),
        };
        let (s, effects) = apply(&s, Event::FinalizationEnded(Ok(done)), 1.0).unwrap();
        assert_eq!(s, State::Idle);
        assert_eq!(
            effects,
            vec![Effect::Failed {
                id,
                error: "no model".into(),
                output_file: Some("/rec/c.wav".into())
            }]
        );
    }
}
