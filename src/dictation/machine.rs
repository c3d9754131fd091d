//! Dictation's state machine as a pure function: `apply(state, event, now)` returns the next
//! state and the effects the service carries out, or why it refuses the event.
//!
//! idle --start--> recording --stop / max length--> processing --text--> inserting --> idle
//! Empty text (silence) completes without inserting; a failure at any step ends the session
//! `failed` and leaves the machine in `error` until the next start. The transcript is saved to
//! history before insertion, so a failed insertion loses nothing.

use uuid::Uuid;

#[derive(Debug, Clone, PartialEq)]
pub enum State {
    Idle,
    Recording {
        id: Uuid,
        started_at: f64,
    },
    Processing {
        id: Uuid,
    },
    Inserting {
        id: Uuid,
    },
    /// The last session failed; behaves as idle for a new start.
    Error {
        id: Uuid,
        message: String,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Start {
        id: Uuid,
    },
    Stop,
    /// The maximum dictation length passed: stops like `Stop`.
    MaxLengthReached,
    CaptureFailed {
        reason: String,
    },
    Transcribed(Result<String, String>),
    Inserted(Result<(), String>),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    StartCapture {
        id: Uuid,
    },
    /// Stop the microphone and transcribe what was captured.
    Transcribe {
        id: Uuid,
    },
    /// Write the finished transcript to history (the session id is the entry id).
    SaveHistory {
        id: Uuid,
        text: String,
    },
    Insert {
        id: Uuid,
        text: String,
    },
    Completed {
        id: Uuid,
    },
    Failed {
        id: Uuid,
        error: String,
    },
}

/// Why the machine refuses an event; the message is what a client is told.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("Dictation is not idle")]
    NotIdle,
    #[error("Not recording")]
    NotRecording,
    /// An event the service should never send in this state (a bug, not a user error).
    #[error("unexpected dictation event {event} while {state}")]
    Unexpected {
        event: &'static str,
        state: &'static str,
    },
}

impl State {
    /// The `state` field of `GET /v1/dictation/status`.
    pub fn name(&self) -> &'static str {
        match self {
            State::Idle => "idle",
            State::Recording { .. } => "recording",
            State::Processing { .. } => "processing",
            State::Inserting { .. } => "inserting",
            State::Error { .. } => "error",
        }
    }

    /// The session in progress, if any.
    pub fn active(&self) -> Option<Uuid> {
        match self {
            State::Recording { id, .. } | State::Processing { id } | State::Inserting { id } => {
                Some(*id)
            }
            State::Idle | State::Error { .. } => None,
        }
    }
}

impl Event {
    fn name(&self) -> &'static str {
        match self {
            Event::Start { .. } => "start",
            Event::Stop => "stop",
            Event::MaxLengthReached => "max length reached",
            Event::CaptureFailed { .. } => "capture failed",
            Event::Transcribed(_) => "transcribed",
            Event::Inserted(_) => "inserted",
        }
    }
}

fn failed(id: Uuid, error: String) -> (State, Vec<Effect>) {
    (
        State::Error {
            id,
            message: error.clone(),
        },
        vec![Effect::Failed { id, error }],
    )
}

/// The next state and effects for `event` in `state` at time `now` (seconds).
pub fn apply(state: &State, event: Event, now: f64) -> Result<(State, Vec<Effect>), Refused> {
    let unexpected = |event: &Event| Refused::Unexpected {
        event: event.name(),
        state: state.name(),
    };
    match (state, event) {
        (State::Idle | State::Error { .. }, Event::Start { id }) => Ok((
            State::Recording {
                id,
                started_at: now,
            },
            vec![Effect::StartCapture { id }],
        )),
        (_, Event::Start { .. }) => Err(Refused::NotIdle),
        (State::Recording { id, .. }, Event::Stop | Event::MaxLengthReached) => Ok((
            State::Processing { id: *id },
            vec![Effect::Transcribe { id: *id }],
        )),
        (_, Event::Stop) => Err(Refused::NotRecording),
        (State::Recording { id, .. }, Event::CaptureFailed { reason }) => Ok(failed(*id, reason)),
        (State::Processing { id }, Event::Transcribed(Ok(text))) if text.trim().is_empty() => Ok((
            State::Idle,
            vec![
                Effect::SaveHistory {
                    id: *id,
                    text: String::new(),
                },
                Effect::Completed { id: *id },
            ],
        )),
        (State::Processing { id }, Event::Transcribed(Ok(text))) => Ok((
            State::Inserting { id: *id },
            vec![
                Effect::SaveHistory {
                    id: *id,
                    text: text.clone(),
                },
                Effect::Insert { id: *id, text },
            ],
        )),
        (State::Processing { id }, Event::Transcribed(Err(error))) => Ok(failed(*id, error)),
        (State::Inserting { id }, Event::Inserted(Ok(()))) => {
            Ok((State::Idle, vec![Effect::Completed { id: *id }]))
        }
        (State::Inserting { id }, Event::Inserted(Err(error))) => Ok(failed(*id, error)),
        (_, event) => Err(unexpected(&event)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[derive(Debug, Clone)]
    enum Op {
        Start,
        Stop,
        MaxLength,
        CaptureFails,
        Transcribed(Option<bool>), // None: failure; Some(empty?)
        Inserted(bool),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            Just(Op::Start),
            Just(Op::Stop),
            Just(Op::MaxLength),
            Just(Op::CaptureFails),
            proptest::option::of(any::<bool>()).prop_map(Op::Transcribed),
            any::<bool>().prop_map(Op::Inserted),
        ]
    }

    /// The reference model: each session's polled status, and the phase of the active one.
    #[derive(Debug, Default)]
    struct Model {
        active: Option<(Uuid, &'static str)>,
        sessions: HashMap<Uuid, &'static str>,
        history: Vec<Uuid>,
    }

    proptest! {
        #[test]
        fn the_machine_agrees_with_the_reference_model(ops in proptest::collection::vec(op(), 1..80)) {
            let mut state = State::Idle;
            let mut m = Model::default();
            for (step, op) in ops.into_iter().enumerate() {
                let phase = m.active.map(|(_, p)| p);
                let (event, allowed, next): (Event, bool, Option<&'static str>) = match op {
                    Op::Start => (Event::Start { id: Uuid::new_v4() }, phase.is_none(), Some("recording")),
                    Op::Stop => (Event::Stop, phase == Some("recording"), Some("processing")),
                    Op::MaxLength => (Event::MaxLengthReached, phase == Some("recording"), Some("processing")),
                    Op::CaptureFails => (Event::CaptureFailed { reason: "lost".into() }, phase == Some("recording"), Some("failed")),
                    Op::Transcribed(None) => (Event::Transcribed(Err("engine".into())), phase == Some("processing"), Some("failed")),
                    Op::Transcribed(Some(empty)) => (
                        Event::Transcribed(Ok(if empty { String::new() } else { "hello".into() })),
                        phase == Some("processing"),
                        Some(if empty { "completed" } else { "inserting" }),
                    ),
                    Op::Inserted(ok) => (
                        Event::Inserted(if ok { Ok(()) } else { Err("no xdotool".into()) }),
                        phase == Some("inserting"),
                        Some(if ok { "completed" } else { "failed" }),
                    ),
                };
                let started = if let Event::Start { id } = &event { Some(*id) } else { None };
                let result = apply(&state, event, step as f64);
                prop_assert_eq!(result.is_ok(), allowed, "{:?} in {:?}", result, state);
                let Ok((new_state, effects)) = result else { continue };
                let id = started.or(m.active.map(|(id, _)| id)).unwrap();
                let status = next.unwrap();
                if matches!(status, "completed" | "failed") {
                    m.active = None;
                } else {
                    m.active = Some((id, status));
                }
                // The polled status lists "inserting" as "processing".
                m.sessions.insert(id, if status == "inserting" { "processing" } else { status });
                for effect in &effects {
                    match effect {
                        Effect::SaveHistory { id, .. } => m.history.push(*id),
                        Effect::Completed { id } => prop_assert_eq!(m.sessions[id], "completed"),
                        Effect::Failed { id, .. } => prop_assert_eq!(m.sessions[id], "failed"),
                        _ => {}
                    }
                }
                // History holds every session whose text was produced, before any insertion.
                if status == "inserting" || (status == "completed" && matches!(op, Op::Transcribed(_))) {
                    prop_assert_eq!(m.history.last(), Some(&id));
                }
                state = new_state;
                prop_assert_eq!(state.active(), m.active.map(|(id, _)| id));
                let live = m.sessions.values().filter(|s| matches!(**s, "recording" | "processing")).count();
                prop_assert!(live <= 1, "exactly one session at a time");
            }
        }
    }

    #[test]
    fn silence_completes_without_inserting() {
        let id = Uuid::new_v4();
        let (s, _) = apply(&State::Idle, Event::Start { id }, 0.0).unwrap();
        let (s, _) = apply(&s, Event::Stop, 2.0).unwrap();
        let (s, effects) = apply(&s, Event::Transcribed(Ok("  ".into())), 3.0).unwrap();
        assert_eq!(s, State::Idle);
        assert_eq!(
            effects,
            vec![
                Effect::SaveHistory {
                    id,
                    text: String::new()
                },
                Effect::Completed { id }
            ]
        );
    }

    #[test]
    fn a_failed_insertion_keeps_the_text_in_history_and_reports_error_state() {
        let id = Uuid::new_v4();
        let s = State::Processing { id };
        let (s, effects) = apply(&s, Event::Transcribed(Ok("hello".into())), 1.0).unwrap();
        assert_eq!(
            effects[0],
            Effect::SaveHistory {
                id,
                text: "hello".into()
            }
        );
        let (s, effects) = apply(&s, Event::Inserted(Err("install xdotool".into())), 1.5).unwrap();
        assert_eq!(s.name(), "error");
        assert_eq!(
            effects,
            vec![Effect::Failed {
                id,
                error: "install xdotool".into()
            }]
        );
        // A new session may start from the error state.
        assert!(apply(&s, Event::Start { id: Uuid::new_v4() }, 2.0).is_ok());
        assert_eq!(
            apply(&State::Idle, Event::Stop, 0.0),
            Err(Refused::NotRecording)
        );
    }
}
