//! One realtime session without its socket: client events in, what to send out. It holds the
//! session's configuration and audio (resampled and cut into turns off the async runtime),
//! hands each committed turn to the transcription of turns, and keeps the backlog of committed
//! speech waiting for the engine within [`MAX_BACKLOG_SECONDS`]. The API layer reads and writes
//! the WebSocket and renders the outputs that carry a transcription error.

use std::sync::Arc;

use base64::Engine as _;
use serde_json::{Value, json};

use super::MAX_BACKLOG_SECONDS;
use super::config::{SessionConfig, Shape};
use super::events::{self, ClientEvent, Refusal, SERVER_ERROR};
use super::transcribe::{AheadJob, TurnJob, TurnReport, TurnSender, check, check_and_preload};
use super::turns::{Ahead, Heard, TurnError, Turns};
use crate::transcribe::{TranscribeError, Transcriber};
use crate::wire::transcription::TranscribeOptions;

/// Close codes (RFC 6455).
pub const NORMAL: u16 = 1000;
pub const POLICY: u16 = 1008;
pub const INTERNAL: u16 = 1011;

/// Samples per second of the audio turns hold.
const RATE: usize = 16_000;

/// What the session sends, in order.
#[derive(Debug)]
pub enum Output {
    /// A server event, ready to send.
    Event(Value),
    /// `error` for a transcription that cannot run (a configuration the server refuses), for
    /// the client's `event_id`.
    Failed {
        error: TranscribeError,
        event_id: Option<String>,
    },
    /// `conversation.item.input_audio_transcription.failed` for a turn.
    TurnFailed {
        item_id: String,
        error: TranscribeError,
    },
    /// Close the socket with this code and reason; nothing follows.
    Close(u16, String),
}

/// A realtime session's state.
pub struct Session {
    transcriber: Arc<Transcriber>,
    id: String,
    config: SessionConfig,
    /// What each turn is transcribed with, and the model that does it (None: no model can
    /// transcribe with this configuration; turns fail with the reason).
    options: TranscribeOptions,
    model: Option<&'static str>,
    /// Off the async runtime while it hears an append.
    turns: Option<Box<Turns>>,
    /// A byte of a sample split between two appends.
    odd_byte: Option<u8>,
    /// Committed samples not yet transcribed.
    backlog: usize,
    /// Where committed turns go to be transcribed in order, and the turn to hear ahead.
    jobs: TurnSender,
}

impl Session {
    /// A session whose turns go to `jobs`.
    pub fn new(transcriber: Arc<Transcriber>, jobs: TurnSender) -> Session {
        let config = SessionConfig::default();
        let turns = Turns::new(config.rate, config.turn_detection);
        Session {
            transcriber,
            id: format!("sess_{}", uuid::Uuid::new_v4().simple()),
            config,
            options: TranscribeOptions::default(),
            model: None,
            turns: Some(Box::new(turns)),
            odd_byte: None,
            backlog: 0,
            jobs,
        }
    }

    /// What opens the session: `session.created`, then why no model can transcribe, if so.
    pub async fn open(&mut self) -> Vec<Output> {
        let checked = check_and_preload(&self.transcriber, &self.config).await;
        self.model = checked.as_ref().ok().map(|(_, model)| *model);
        let created = self.rendered(Shape::Ga);
        let mut out = vec![Output::Event(events::server(
            "session.created",
            json!({ "session": created }),
        ))];
        match checked {
            Ok((options, _)) => self.options = options,
            Err(error) => out.push(Output::Failed {
                error,
                event_id: None,
            }),
        }
        out
    }

    /// Whether committed speech waits for the engine (an idle session is not closed then).
    pub fn waiting(&self) -> bool {
        self.backlog > 0
    }

    /// A binary message: refused (events are JSON text).
    pub fn binary(&self) -> Vec<Output> {
        let refusal = Refusal::new(
            "invalid_event",
            "send client events as JSON text messages (audio as base64 in input_audio_buffer.append)",
        );
        vec![Output::Event(events::refused(&refusal, None))]
    }

    /// What a turn's transcription reported.
    pub fn report(&mut self, report: TurnReport) -> Vec<Output> {
        match report {
            TurnReport::Done { samples } => {
                self.backlog = self.backlog.saturating_sub(samples);
                Vec::new()
            }
            TurnReport::Failed { item_id, error } => vec![Output::TurnFailed { item_id, error }],
            report => events::report(report)
                .map(Output::Event)
                .into_iter()
                .collect(),
        }
    }

    /// A client's text message.
    pub async fn text(&mut self, text: &str) -> Vec<Output> {
        let (event_id, event) = events::read(text);
        let mut out = Vec::new();
        let acted = match event {
            Ok(event) => self.act(event, event_id.as_deref(), &mut out).await,
            Err(refusal) => Err(refusal),
        };
        if let Err(refusal) = acted {
            out.push(Output::Event(events::refused(
                &refusal,
                event_id.as_deref(),
            )));
            // The session's audio is gone: it cannot go on.
            if refusal.code == SERVER_ERROR {
                out.push(Output::Close(INTERNAL, refusal.message));
            }
        }
        out
    }

    async fn act(
        &mut self,
        event: ClientEvent,
        event_id: Option<&str>,
        out: &mut Vec<Output>,
    ) -> Result<(), Refusal> {
        match event {
            ClientEvent::Update { session, shape } => {
                self.update(&session, shape, event_id, out).await
            }
            ClientEvent::Append { audio } => self.append(audio, out).await,
            ClientEvent::Commit => {
                let (heard, ahead) = self.hear(|turns| turns.commit()).await?;
                self.take(heard.map_err(turn_refusal)?, ahead, out);
                Ok(())
            }
            ClientEvent::Clear => {
                if let Some(turns) = &mut self.turns {
                    turns.clear();
                }
                self.odd_byte = None;
                out.push(Output::Event(events::server(
                    "input_audio_buffer.cleared",
                    json!({}),
                )));
                Ok(())
            }
        }
    }

    /// Applies a session update, all or nothing: the new configuration is checked against the
    /// server (model, language, prompt) before it replaces the old one.
    async fn update(
        &mut self,
        session: &Value,
        shape: Shape,
        event_id: Option<&str>,
        out: &mut Vec<Output>,
    ) -> Result<(), Refusal> {
        let next = self.config.updated(session, shape)?;
        let (options, model) = match check(&self.transcriber, &next).await {
            Ok(checked) => checked,
            Err(error) => {
                out.push(Output::Failed {
                    error,
                    event_id: event_id.map(str::to_string),
                });
                return Ok(());
            }
        };
        let (rate, detection) = (next.rate, next.turn_detection);
        let changed_detection = detection != self.config.turn_detection;
        let (heard, ahead) = self
            .hear(move |turns| {
                let mut heard = turns.set_rate(rate);
                if changed_detection {
                    heard.extend(turns.set_detection(detection));
                }
                heard
            })
            .await?;
        (self.config, self.options, self.model) = (next, options, Some(model));
        let kind = match shape {
            Shape::Ga => "session.updated",
            Shape::Beta => "transcription_session.updated",
        };
        let session = self.rendered(shape);
        out.push(Output::Event(events::server(
            kind,
            json!({ "session": session }),
        )));
        self.take(heard, ahead, out);
        Ok(())
    }

    /// Decodes and hears an append (off the async runtime).
    async fn append(&mut self, audio: String, out: &mut Vec<Output>) -> Result<(), Refusal> {
        let odd = self.odd_byte.take();
        let (heard, ahead) = self
            .hear(move |turns| {
                let mut bytes = base64::engine::general_purpose::STANDARD
                    .decode(audio.trim())
                    .map_err(|e| Refusal {
                        param: Some("audio".into()),
                        ..Refusal::new("invalid_value", format!("audio is not base64 ({e})"))
                    })?;
                if let Some(odd) = odd {
                    bytes.insert(0, odd);
                }
                let odd = (bytes.len() % 2 == 1).then(|| bytes.pop()).flatten();
                let pcm: Vec<i16> = bytes
                    .chunks_exact(2)
                    .map(|b| i16::from_le_bytes([b[0], b[1]]))
                    .collect();
                let heard = turns.append(&pcm).map_err(turn_refusal)?;
                Ok::<_, Refusal>((heard, odd))
            })
            .await?;
        let (heard, odd) = heard?;
        self.odd_byte = odd;
        self.take(heard, ahead, out);
        Ok(())
    }

    /// Runs `work` on the session's audio off the async runtime; also gives what changed in
    /// the turn to hear ahead ([`Turns::ahead`]).
    async fn hear<T: Send + 'static>(
        &mut self,
        work: impl FnOnce(&mut Turns) -> T + Send + 'static,
    ) -> Result<(T, Option<Ahead>), Refusal> {
        let Some(mut turns) = self.turns.take() else {
            return Err(Refusal::new(SERVER_ERROR, "the session's audio was lost"));
        };
        let ahead_by = self.jobs.hear_ahead_by();
        let done = tokio::task::spawn_blocking(move || {
            let out = work(&mut turns);
            turns.hear_ahead_by(ahead_by.as_secs_f64());
            let ahead = turns.ahead();
            (turns, (out, ahead))
        })
        .await;
        match done {
            Ok((turns, out)) => {
                self.turns = Some(turns);
                Ok(out)
            }
            Err(e) => {
                tracing::error!("a realtime session's audio work failed: {e}");
                Err(Refusal::new(SERVER_ERROR, "the session's audio was lost"))
            }
        }
    }

    /// What the audio brought, each committed turn handed to its transcription, then the turn
    /// to hear ahead; a backlog over [`MAX_BACKLOG_SECONDS`] closes the session.
    fn take(&mut self, heard: Vec<Heard>, ahead: Option<Ahead>, out: &mut Vec<Output>) {
        for heard in heard {
            out.push(Output::Event(events::heard(&heard)));
            let Heard::Committed(turn) = heard else {
                continue;
            };
            self.backlog += turn.samples.len();
            if self.backlog > MAX_BACKLOG_SECONDS * RATE {
                let refusal = Refusal::new(
                    "falling_behind",
                    format!(
                        "more than {MAX_BACKLOG_SECONDS} s of committed audio wait for the engine: send audio at real time"
                    ),
                );
                out.push(Output::Event(events::refused(&refusal, None)));
                out.push(Output::Close(POLICY, "falling behind".into()));
                return;
            }
            let job = TurnJob {
                turn,
                options: self.options.clone(),
                save: self.config.save_to_history,
            };
            let _ = self.jobs.committed.send(job);
        }
        let Some(ahead) = ahead else {
            return;
        };
        // What is heard ahead is never saved: a session that saves hears its turns once
        // committed.
        let job = match ahead {
            Ahead::Settling(samples) if !self.config.save_to_history && self.model.is_some() => {
                Some(Arc::new(AheadJob {
                    samples,
                    options: self.options.clone(),
                }))
            }
            _ => None,
        };
        self.jobs.ahead.send_replace(job);
    }

    /// The session object in `shape`, naming the model that transcribes (or the one asked).
    fn rendered(&self, shape: Shape) -> Value {
        let model = self
            .model
            .map(str::to_string)
            .or_else(|| self.config.model.clone())
            .unwrap_or_default();
        self.config.render(&self.id, &model, shape)
    }
}

fn turn_refusal(err: TurnError) -> Refusal {
    let code = match err {
        TurnError::BufferFull => "input_audio_buffer_full",
        TurnError::TooShort | TurnError::NoSpeech => "input_audio_buffer_commit_empty",
    };
    Refusal::new(code, err.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::models::ModelDir;
    use crate::store::Store;
    use crate::transcribe::TranscriberParts;

    /// A session on a transcriber with no engine (every configuration is refused as such).
    fn session() -> (tempfile::TempDir, Session) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("verbatim.sqlite3")).unwrap();
        let transcriber = Transcriber::new(TranscriberParts {
            engines: Vec::new(),
            store: Arc::new(store),
            models: ModelDir::new(dir.path().join("models")),
            slots: 1,
            max_waiting: 0,
        });
        let (jobs, _pending) = super::super::transcribe::turn_channels();
        (dir, Session::new(Arc::new(transcriber), jobs))
    }

    /// The `type` (and for `error`, the code) of each output.
    fn kinds(out: &[Output]) -> Vec<String> {
        out.iter()
            .map(|o| match o {
                Output::Event(e) if e["type"] == "error" => {
                    format!("error:{}", e["error"]["code"].as_str().unwrap())
                }
                Output::Event(e) => e["type"].as_str().unwrap().to_string(),
                Output::Failed { .. } => "failed".into(),
                Output::TurnFailed { .. } => "turn failed".into(),
                Output::Close(code, _) => format!("close:{code}"),
            })
            .collect()
    }

    #[tokio::test]
    async fn client_events_give_their_answers_without_a_socket() {
        let (_dir, mut session) = session();
        let opened = session.open().await;
        assert_eq!(kinds(&opened), ["session.created", "failed"]);
        let Output::Event(created) = &opened[0] else {
            unreachable!()
        };
        assert!(
            created["session"]["id"]
                .as_str()
                .unwrap()
                .starts_with("sess_")
        );
        assert!(matches!(
            &opened[1],
            Output::Failed {
                error: TranscribeError::NoEngineSelected,
                event_id: None
            }
        ));

        assert_eq!(
            kinds(&session.text("not json").await),
            ["error:invalid_json"]
        );
        assert_eq!(kinds(&session.binary()), ["error:invalid_event"]);
        let bad_audio = session
            .text(r#"{"type":"input_audio_buffer.append","audio":"!!!","event_id":"e1"}"#)
            .await;
        assert_eq!(kinds(&bad_audio), ["error:invalid_value"]);
        let Output::Event(error) = &bad_audio[0] else {
            unreachable!()
        };
        assert_eq!(
            (&error["error"]["param"], &error["error"]["event_id"]),
            (&json!("audio"), &json!("e1"))
        );
        // A second of silence: no speech, so nothing to commit.
        let silence = base64::engine::general_purpose::STANDARD.encode(vec![0u8; 48_000]);
        let appended = session
            .text(&json!({"type": "input_audio_buffer.append", "audio": silence}).to_string())
            .await;
        assert_eq!(kinds(&appended), Vec::<String>::new());
        assert_eq!(
            kinds(
                &session
                    .text(r#"{"type":"input_audio_buffer.commit"}"#)
                    .await
            ),
            ["error:input_audio_buffer_commit_empty"]
        );
        assert_eq!(
            kinds(&session.text(r#"{"type":"input_audio_buffer.clear"}"#).await),
            ["input_audio_buffer.cleared"]
        );
        // An update the server cannot serve changes nothing and says why, for its event.
        let update = session
            .text(r#"{"type":"session.update","event_id":"u1","session":{"type":"transcription"}}"#)
            .await;
        assert!(matches!(
            update.as_slice(),
            [Output::Failed { event_id: Some(id), .. }] if id == "u1"
        ));
    }

    #[tokio::test]
    async fn reports_keep_the_backlog_and_a_failed_turn_is_told() {
        let (_dir, mut session) = session();
        session.backlog = 32_000;
        assert!(session.waiting());
        assert!(
            session
                .report(TurnReport::Done { samples: 16_000 })
                .is_empty()
        );
        assert!(session.waiting());
        session.report(TurnReport::Done { samples: 64_000 });
        assert!(!session.waiting(), "the backlog never goes below zero");
        let failed = session.report(TurnReport::Failed {
            item_id: "item_1".into(),
            error: TranscribeError::NoEngineSelected,
        });
        assert!(
            matches!(failed.as_slice(), [Output::TurnFailed { item_id, .. }] if item_id == "item_1")
        );
        let delta = session.report(TurnReport::Delta {
            item_id: "item_2".into(),
            delta: "Hello".into(),
        });
        assert_eq!(
            kinds(&delta),
            ["conversation.item.input_audio_transcription.delta"]
        );
    }
}
