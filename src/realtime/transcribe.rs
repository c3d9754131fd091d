//! Transcribing a realtime session's turns: one at a time, in the order they were committed,
//! each through the one transcription path (the engine queue with everyone else's work, the
//! dictionary and numbers, the history policy of [`Caller::Stream`]). The segments of a turn are
//! reported as deltas as soon as the engine has them, then its whole text. A turn is heard ahead
//! in the pause that may end it, as long before its commit as the last turn took to be heard,
//! so that its text is ready when the pause has lasted long enough to commit it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::watch;

use super::config::SessionConfig;
use super::turns::Turn;
use crate::transcribe::{
    Audio, Caller, Planned, Progress, ProgressSink, TranscribeError, Transcriber,
};
use crate::wire::transcription::TranscribeOptions;

/// A committed turn and how to transcribe it.
pub struct TurnJob {
    pub turn: Turn,
    pub options: TranscribeOptions,
    pub save: bool,
}

/// What the transcription of turns reports, in order.
#[derive(Debug)]
pub enum TurnReport {
    /// Text of the turn, appended to what came before (with the space between).
    Delta { item_id: String, delta: String },
    /// The turn's whole text and its audio length.
    Completed {
        item_id: String,
        transcript: String,
        seconds: f64,
    },
    Failed {
        item_id: String,
        error: TranscribeError,
    },
    /// The turn of this many samples no longer waits (the session's backlog shrinks by it).
    Done { samples: usize },
}

/// A session's configuration checked against the server: the options each turn is
/// transcribed with and the id of the model that transcribes them. `model` names an installed
/// model, or any other name (`whisper-1`, `gpt-4o-transcribe`) means the selected one.
pub async fn check(
    transcriber: &Arc<Transcriber>,
    config: &SessionConfig,
) -> Result<(TranscribeOptions, &'static str), TranscribeError> {
    let (options, planned) = planned(transcriber, config).await?;
    Ok((options, planned.resolved().offer.spec.id))
}

/// [`check`] for a session that opens, its model then loaded in the background. Only the
/// opening loads ahead: a client sending `session.update` after `session.update` with other
/// models names would otherwise load every installed model into memory.
pub async fn check_and_preload(
    transcriber: &Arc<Transcriber>,
    config: &SessionConfig,
) -> Result<(TranscribeOptions, &'static str), TranscribeError> {
    let (options, planned) = planned(transcriber, config).await?;
    planned.preload_model();
    Ok((options, planned.resolved().offer.spec.id))
}

/// The options each turn of a session with `config` is transcribed with, and their plan.
async fn planned(
    transcriber: &Arc<Transcriber>,
    config: &SessionConfig,
) -> Result<(TranscribeOptions, Planned), TranscribeError> {
    let asked = config.model.clone();
    let resolver = transcriber.clone();
    let model = tokio::task::spawn_blocking(move || asked.filter(|m| resolver.installed(m)))
        .await
        .map_err(|e| TranscribeError::internal("checking the model", e))?;
    let options = TranscribeOptions {
        model,
        language: config.language.clone(),
        prompt: config.prompt.clone(),
        ..TranscribeOptions::default()
    };
    let caller = Caller::Stream {
        save: config.save_to_history,
    };
    let planned = transcriber.plan(options.clone(), false, caller).await?;
    Ok((options, planned))
}

/// Where a session's turns go to be transcribed: each committed turn, in order, and the turn
/// that settles unless more speech comes, to hear ahead in its pause (only the latest counts:
/// memory stays at one turn however the client sends audio).
pub struct TurnSender {
    pub committed: UnboundedSender<TurnJob>,
    pub ahead: watch::Sender<Option<Arc<AheadJob>>>,
    /// How long the last turn took to be heard (milliseconds, waiting in line aside).
    last_heard_in: Arc<AtomicU64>,
}

impl TurnSender {
    /// How long before its commit a turn is best heard ahead for its text to be ready then:
    /// what the last turn took to be heard, and a quarter more.
    pub fn hear_ahead_by(&self) -> Duration {
        Duration::from_millis(self.last_heard_in.load(Ordering::Relaxed)).mul_f64(1.25)
    }
}

/// What [`transcribe_turns`] takes from a [`TurnSender`].
pub struct TurnReceiver {
    committed: UnboundedReceiver<TurnJob>,
    ahead: watch::Receiver<Option<Arc<AheadJob>>>,
    last_heard_in: Arc<AtomicU64>,
}

/// A session's [`TurnSender`] and the [`TurnReceiver`] its transcription of turns reads.
pub fn turn_channels() -> (TurnSender, TurnReceiver) {
    let (committed, committed_in) = unbounded_channel();
    let (ahead, ahead_in) = watch::channel(None);
    let last_heard_in = Arc::new(AtomicU64::new(0));
    let sender = TurnSender {
        committed,
        ahead,
        last_heard_in: last_heard_in.clone(),
    };
    let receiver = TurnReceiver {
        committed: committed_in,
        ahead: ahead_in,
        last_heard_in,
    };
    (sender, receiver)
}

/// A turn in the pause that may end it, as its commit would hold it, and the options its
/// commit would be transcribed with (a session that saves to history sends none: what is
/// heard ahead is never saved).
#[derive(Debug)]
pub struct AheadJob {
    pub samples: Vec<f32>,
    pub options: TranscribeOptions,
}

impl AheadJob {
    /// Whether `job` is this turn, committed as it was heard ahead.
    fn is_for(&self, job: &TurnJob) -> bool {
        !job.save && job.options == self.options && job.turn.samples == self.samples
    }
}

/// A turn's text: its deltas as the engine gave them, then the whole.
struct TurnText {
    deltas: Vec<String>,
    transcript: String,
    seconds: f64,
}

/// Transcribes the turns `input` brings, in order, until the session ends; reports go to
/// `reports`. While no committed turn waits, the turn in a pause that may end it is heard
/// ahead (in line with everyone else's work, as a committed turn would be, unless half of the
/// places in line are taken): if the pause ends it, its commit takes what was heard (or waits
/// for the pass under way) instead of going to the engine again. The voice coming back, or
/// another turn settling, stops the pass. How long each turn took to be heard is noted for the
/// session ([`TurnSender::hear_ahead_by`]).
pub async fn transcribe_turns(
    transcriber: Arc<Transcriber>,
    mut input: TurnReceiver,
    reports: UnboundedSender<TurnReport>,
) {
    let mut next: Option<TurnJob> = None;
    let mut wanted: Option<Arc<AheadJob>> = None;
    let mut heard_ahead: Option<(Arc<AheadJob>, TurnText)> = None;
    let mut ahead_open = true;
    loop {
        if let Some(job) = next.take() {
            let ready = heard_ahead
                .take()
                .filter(|(ahead, _)| ahead.is_for(&job))
                .map(|(_, text)| text);
            let took = &input.last_heard_in;
            if !report_turn(&transcriber, job, ready, took, &reports).await {
                return;
            }
            continue;
        }
        if let Some(ahead) = wanted
            .take()
            .filter(|_| transcriber.has_room_for_spare_work())
        {
            let pass = hear_ahead(&transcriber, ahead.clone(), &input.last_heard_in);
            tokio::pin!(pass);
            tokio::select! {
                biased;
                job = input.committed.recv() => {
                    let Some(job) = job else { return };
                    if ahead.is_for(&job) {
                        heard_ahead = pass.await.map(|text| (ahead, text));
                    } else {
                        tracing::debug!("a pass heard ahead stopped: another turn was committed");
                    }
                    next = Some(job);
                }
                changed = input.ahead.changed(), if ahead_open => match changed {
                    Ok(()) => {
                        tracing::debug!("a pass heard ahead stopped: the turn did not settle so");
                        wanted = input.ahead.borrow_and_update().clone();
                    }
                    // The session is gone: what it committed still comes first.
                    Err(_) => {
                        ahead_open = false;
                        heard_ahead = pass.await.map(|text| (ahead, text));
                    }
                },
                text = &mut pass => heard_ahead = text.map(|text| (ahead, text)),
            }
            continue;
        }
        tokio::select! {
            biased;
            job = input.committed.recv() => match job {
                Some(job) => next = Some(job),
                None => return,
            },
            changed = input.ahead.changed(), if ahead_open => match changed {
                Ok(()) => {
                    wanted = input.ahead.borrow_and_update().clone();
                    heard_ahead = None;
                }
                Err(_) => ahead_open = false,
            },
        }
    }
}

/// Reports the committed turn `job`: its text `ready` if it was heard ahead, else as the engine
/// gives it (the time that took noted in `took`). False once nobody listens.
async fn report_turn(
    transcriber: &Arc<Transcriber>,
    job: TurnJob,
    ready: Option<TurnText>,
    took: &AtomicU64,
    reports: &UnboundedSender<TurnReport>,
) -> bool {
    let samples = job.turn.samples.len();
    let item_id = job.turn.item_id.clone();
    let heard = match ready {
        Some(text) => {
            tracing::debug!(item_id, "turn heard ahead in its pause");
            for delta in text.deltas {
                let _ = reports.send(TurnReport::Delta {
                    item_id: item_id.clone(),
                    delta,
                });
            }
            Ok((text.transcript, text.seconds))
        }
        None => {
            let (id, sender) = (item_id.clone(), reports.clone());
            let deltas = move |delta| {
                let _ = sender.send(TurnReport::Delta {
                    item_id: id.clone(),
                    delta,
                });
            };
            let heard = hear(transcriber, job.turn.samples, job.options, job.save, deltas).await;
            note_time(heard, took)
        }
    };
    let report = match heard {
        Ok((transcript, seconds)) => TurnReport::Completed {
            item_id,
            transcript,
            seconds,
        },
        Err(error) => TurnReport::Failed { item_id, error },
    };
    reports.send(report).is_ok() && reports.send(TurnReport::Done { samples }).is_ok()
}

/// What [`hear`] gave, its time noted in `took`.
fn note_time(
    heard: Result<(String, f64, Duration), TranscribeError>,
    took: &AtomicU64,
) -> Result<(String, f64), TranscribeError> {
    heard.map(|(text, seconds, time)| {
        took.store(time.as_millis() as u64, Ordering::Relaxed);
        (text, seconds)
    })
}

/// Hears `ahead` as its commit would be heard (never saved), the time that took noted in
/// `took`. None when it could not be heard (its commit then goes to the engine itself).
async fn hear_ahead(
    transcriber: &Arc<Transcriber>,
    ahead: Arc<AheadJob>,
    took: &AtomicU64,
) -> Option<TurnText> {
    let deltas = Arc::new(Mutex::new(Vec::new()));
    let noted = deltas.clone();
    let note = move |delta| noted.lock().unwrap_or_else(|p| p.into_inner()).push(delta);
    let samples = ahead.samples.clone();
    let heard = hear(transcriber, samples, ahead.options.clone(), false, note).await;
    let heard = note_time(heard, took);
    let deltas = std::mem::take(&mut *deltas.lock().unwrap_or_else(|p| p.into_inner()));
    match heard {
        Ok((transcript, seconds)) => Some(TurnText {
            deltas,
            transcript,
            seconds,
        }),
        Err(err) => {
            tracing::debug!(%err, "a turn could not be heard ahead");
            None
        }
    }
}

/// Transcribes a turn's `samples` through the one transcription path; `on_delta` gets each
/// segment's text as the engine gives it (with the space that joins it to the one before).
/// The whole text, the audio's length and the time it took to be heard (waiting in line aside).
async fn hear(
    transcriber: &Arc<Transcriber>,
    samples: Vec<f32>,
    options: TranscribeOptions,
    save: bool,
    mut on_delta: impl FnMut(String) + Send + 'static,
) -> Result<(String, f64, Duration), TranscribeError> {
    let planned = transcriber
        .plan(options, false, Caller::Stream { save })
        .await?;
    let mut said_anything = false;
    let deltas: ProgressSink = Box::new(move |progress| {
        let Progress::Segments(segments) = progress else {
            return;
        };
        for text in segments
            .iter()
            .map(|s| s.text.trim())
            .filter(|t| !t.is_empty())
        {
            let delta = if said_anything {
                format!(" {text}")
            } else {
                text.to_string()
            };
            said_anything = true;
            on_delta(delta);
        }
    });
    let transcript = planned
        .run_streaming(Audio::Samples(samples), Some(deltas))
        .await?;
    Ok((
        transcript.text.trim().to_string(),
        transcript.duration,
        transcript.stages.busy(),
    ))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::realtime::turns::Turn;
    use crate::transcribe::testing::{Recorder, Slow, transcriber};

    /// A real recording (16 kHz), so that voice detection passes it to the engine.
    fn speech() -> Vec<f32> {
        let path = format!(
            "{}/corpus/clips/real-something.wav",
            env!("CARGO_MANIFEST_DIR")
        );
        hound::WavReader::open(path)
            .unwrap()
            .samples::<i16>()
            .map(|s| f32::from(s.unwrap()) / 32_768.0)
            .collect()
    }

    fn options() -> TranscribeOptions {
        TranscribeOptions {
            model: Some("tiny.en".into()),
            ..TranscribeOptions::default()
        }
    }

    fn ahead(samples: &[f32]) -> Option<Arc<AheadJob>> {
        Some(Arc::new(AheadJob {
            samples: samples.to_vec(),
            options: options(),
        }))
    }

    fn committed(item_id: &str, samples: &[f32], save: bool) -> TurnJob {
        TurnJob {
            turn: Turn {
                item_id: item_id.into(),
                previous_item_id: None,
                samples: samples.to_vec(),
                start_ms: 0,
                end_ms: samples.len() as u64 / 16,
            },
            options: options(),
            save,
        }
    }

    /// The reports of one turn, up to its `Done`: its deltas and its completed text.
    async fn turn_reports(reports: &mut UnboundedReceiver<TurnReport>) -> (Vec<String>, String) {
        let (mut deltas, mut completed) = (Vec::new(), None);
        loop {
            let report = tokio::time::timeout(Duration::from_secs(10), reports.recv())
                .await
                .expect("the turn is reported")
                .expect("the worker goes on");
            match report {
                TurnReport::Delta { delta, .. } => deltas.push(delta),
                TurnReport::Completed { transcript, .. } => completed = Some(transcript),
                TurnReport::Done { .. } => return (deltas, completed.expect("completed")),
                other => panic!("{other:?}"),
            }
        }
    }

    async fn engine_calls_reach(log: &Mutex<Vec<String>>, calls: usize) {
        for _ in 0..500 {
            if log.lock().unwrap().len() >= calls {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the engine was called {} times", log.lock().unwrap().len());
    }

    #[tokio::test]
    async fn a_turn_heard_ahead_in_its_pause_goes_to_the_engine_once() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let engine = Arc::new(Recorder { log: log.clone() });
        let (_dir, transcriber) = transcriber(vec![engine], 4);
        let (sender, receiver) = turn_channels();
        let (reports_to, mut reports) = unbounded_channel();
        let _worker = tokio::spawn(transcribe_turns(transcriber, receiver, reports_to));
        let speech = speech();
        let commit = |id: &str, samples: &[f32], save| {
            sender.committed.send(committed(id, samples, save)).unwrap();
        };

        // The pause lasts: the turn committed as it was heard ahead takes that text.
        sender.ahead.send_replace(ahead(&speech));
        engine_calls_reach(&log, 1).await;
        commit("a", &speech, false);
        sender.ahead.send_replace(None);
        let (deltas, text) = turn_reports(&mut reports).await;
        assert_eq!(
            (deltas, text.as_str()),
            (vec!["call1".to_string()], "call1")
        );

        // The voice came back: the longer turn committed later is heard for itself.
        let half = &speech[..speech.len() / 2];
        sender.ahead.send_replace(ahead(half));
        engine_calls_reach(&log, 2).await;
        sender.ahead.send_replace(None);
        commit("b", &speech, false);
        let (_, text) = turn_reports(&mut reports).await;
        assert_eq!(text, "call3");

        // A turn to be saved never takes text heard ahead (which is never saved).
        sender.ahead.send_replace(ahead(&speech));
        engine_calls_reach(&log, 4).await;
        commit("c", &speech, true);
        let (_, text) = turn_reports(&mut reports).await;
        assert_eq!(text, "call5");
        assert_eq!(log.lock().unwrap().len(), 5);
    }

    #[tokio::test]
    async fn the_time_a_turn_took_to_be_heard_tells_how_long_before_its_commit_to_hear_the_next() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let pause = Duration::from_millis(200);
        let engine = Arc::new(Slow {
            log: log.clone(),
            pause,
            words_from: 0,
        });
        let (_dir, transcriber) = transcriber(vec![engine], 4);
        let (sender, receiver) = turn_channels();
        let (reports_to, mut reports) = unbounded_channel();
        let _worker = tokio::spawn(transcribe_turns(transcriber, receiver, reports_to));
        assert_eq!(sender.hear_ahead_by(), Duration::ZERO);
        sender
            .committed
            .send(committed("a", &speech(), false))
            .unwrap();
        turn_reports(&mut reports).await;
        let ahead_by = sender.hear_ahead_by();
        assert!(ahead_by >= pause.mul_f64(1.25), "{ahead_by:?}");
        assert!(ahead_by < Duration::from_secs(5), "{ahead_by:?}");
    }
}
