//! The session driver dictation and the Recorder share: the pure state machine behind one lock,
//! each event applied and its effects carried out under that lock (on a blocking thread: the
//! effects write to the store), and the capture thread a session runs with its stop flag,
//! posting its events back onto the runtime.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use chrono::Utc;
use uuid::Uuid;

/// A service driven by a pure state machine `apply(state, event, now)`: what the driver needs
/// to know of it.
pub trait Driven: Send + Sync + Sized + 'static {
    /// Names the capture threads and the log lines (`dictation`, `recorder`).
    const NAME: &'static str;
    type State: Send;
    type Event: Send + 'static;
    type Effect;
    /// Why the machine refuses an event.
    type Refused;
    /// The machine's refusal of a stop while no session records.
    const NOT_RECORDING: Self::Refused;
    /// What the capture thread hands over when it ends.
    type Captured: Send + 'static;
    /// What the service keeps about the session in progress.
    type Session: Send;
    type Error: From<Self::Refused> + From<Internal> + fmt::Display + Send + 'static;

    fn driver(&self) -> &Driver<Self>;

    /// The machine's transition function.
    fn apply(
        state: &Self::State,
        event: Self::Event,
        now: f64,
    ) -> Result<Transition<Self::State, Self::Effect>, Self::Refused>;

    /// The session recording in `state`, if any.
    fn recording(state: &Self::State) -> Option<Uuid>;

    /// Carries out one effect of an applied event, under the lock.
    fn carry_out(
        self: &Arc<Self>,
        live: &mut Live<Self>,
        effect: Self::Effect,
    ) -> Result<(), Self::Error>;
}

/// The next state and the effects to carry out.
pub type Transition<State, Effect> = (State, Vec<Effect>);

/// A failure inside the server: a short cause that is safe to show, and the detail for the log.
#[derive(Debug, thiserror::Error)]
#[error("{cause}: {detail}")]
pub struct Internal {
    pub cause: &'static str,
    pub detail: String,
}

impl Internal {
    pub fn new(cause: &'static str, detail: impl fmt::Display) -> Internal {
        Internal {
            cause,
            detail: detail.to_string(),
        }
    }
}

/// The state of one service's sessions, behind the lock every event goes through.
pub struct Driver<S: Driven> {
    live: Arc<tokio::sync::Mutex<Live<S>>>,
}

impl<S: Driven> Driver<S> {
    /// A driver in the machine's `idle` state.
    pub fn new(idle: S::State) -> Driver<S> {
        Driver {
            live: Arc::new(tokio::sync::Mutex::new(Live {
                state: idle,
                session: None,
                capture: None,
            })),
        }
    }

    pub async fn lock(&self) -> tokio::sync::MutexGuard<'_, Live<S>> {
        self.live.lock().await
    }

    /// The lock, as a guard a blocking thread can carry.
    async fn lock_owned(&self) -> tokio::sync::OwnedMutexGuard<Live<S>> {
        self.live.clone().lock_owned().await
    }
}

/// The machine's state and what runs for the current session.
pub struct Live<S: Driven> {
    pub state: S::State,
    /// The last session started (still there once it ended: check the state).
    pub session: Option<S::Session>,
    capture: Option<Capture<S::Captured>>,
}

impl<S: Driven> Live<S> {
    /// The state `event` leads to, if the machine allows it. Its effects are not carried out:
    /// a start opens its devices itself and then [`begin`](Live::begin)s.
    pub fn check(&self, event: S::Event) -> Result<S::State, S::Refused> {
        S::apply(&self.state, event, now()).map(|(next, _)| next)
    }

    /// Commits a started session: its state, its running capture and what the service keeps.
    pub fn begin(&mut self, next: S::State, capture: Capture<S::Captured>, session: S::Session) {
        self.state = next;
        self.capture = Some(capture);
        self.session = Some(session);
    }

    /// Tells the capture thread to stop, and hands over the thread to wait for.
    pub fn stop_capture(&mut self) -> Option<JoinHandle<S::Captured>> {
        let capture = self.capture.take()?;
        capture.stop.store(true, Ordering::Release);
        Some(capture.thread)
    }
}

/// A capture thread and the flag that tells it to stop.
pub struct Capture<T> {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<T>,
}

impl<T: Send + 'static> Capture<T> {
    /// Starts `run` on a thread named `name`; it reads until the flag it gets is set.
    pub fn spawn(
        name: String,
        run: impl FnOnce(&AtomicBool) -> T + Send + 'static,
    ) -> Result<Capture<T>, Internal> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name(name)
            .spawn(move || run(&flag))
            .map_err(|e| Internal::new("could not start the capture thread", e))?;
        Ok(Capture { stop, thread })
    }
}

/// Seconds since the epoch, the machines' clock.
pub fn now() -> f64 {
    Utc::now().timestamp_millis() as f64 / 1000.0
}

/// Applies `event` and carries out its effects, under the lock the caller holds.
pub fn dispatch<S: Driven>(
    service: &Arc<S>,
    live: &mut Live<S>,
    event: S::Event,
) -> Result<(), S::Error> {
    let (next, effects) = S::apply(&live.state, event, now())?;
    live.state = next;
    for effect in effects {
        service.carry_out(live, effect)?;
    }
    Ok(())
}

/// Applies an event from the capture thread or a background step.
pub async fn handle<S: Driven>(service: &Arc<S>, event: S::Event) -> Result<(), S::Error> {
    let mut live = service.driver().lock_owned().await;
    let service = service.clone();
    blocking(STEP_STOPPED, move || dispatch(&service, &mut live, event)).await
}

/// Applies `stop` to the recording session and answers its id.
pub async fn stop<S: Driven>(service: &Arc<S>, stop: S::Event) -> Result<Uuid, S::Error> {
    let mut live = service.driver().lock_owned().await;
    let Some(id) = S::recording(&live.state) else {
        return Err(S::NOT_RECORDING.into());
    };
    let service = service.clone();
    blocking(STEP_STOPPED, move || dispatch(&service, &mut live, stop)).await?;
    Ok(id)
}

/// The cause of a failure when the thread carrying out an event's effects stopped.
const STEP_STOPPED: &str = "recording the session's new state stopped";

/// What a capture thread calls to post an event back onto the runtime it was started from.
pub fn poster<S: Driven>(service: &Arc<S>) -> impl Fn(S::Event) + Send + 'static {
    let runtime = tokio::runtime::Handle::current();
    let service = service.clone();
    move |event| {
        let service = service.clone();
        runtime.spawn(async move {
            if let Err(err) = handle(&service, event).await {
                tracing::error!("{}: {err}", S::NAME);
            }
        });
    }
}

/// Runs a blocking step (opening devices, SQLite) off the async workers.
pub async fn blocking<T, E>(
    cause: &'static str,
    work: impl FnOnce() -> Result<T, E> + Send + 'static,
) -> Result<T, E>
where
    T: Send + 'static,
    E: From<Internal> + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| E::from(Internal::new(cause, e)))?
}

/// Waits for a capture thread off the async workers; None when it panicked.
pub async fn join<T: Send + 'static>(thread: JoinHandle<T>) -> Option<T> {
    tokio::task::spawn_blocking(move || thread.join())
        .await
        .ok()
        .and_then(Result::ok)
}
