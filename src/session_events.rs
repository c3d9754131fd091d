//! Live events of dictation and Recorder sessions for any number of listeners.
//! Each listener has its own bounded queue, so publishing never waits for anyone and a slow
//! listener never slows capture or transcription: when its queue is full, its oldest tentative
//! event gives way; a listener whose queue holds only events that must not be lost (committed
//! text, the end of a session) is let go (its stream ends) rather than silently miss one.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use serde_json::{Value, json};
use tokio::sync::Notify;
use uuid::Uuid;

use crate::transcribe::Progress;
use crate::wire::format_uuid;

/// Events a listener may fall behind by before it loses tentative ones.
pub const LISTENER_QUEUE: usize = 256;

/// One event: a JSON object with its `type` and the session's `id`.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionEvent {
    pub data: Value,
    /// Replaced by the next tentative event or by committed text: may be dropped for a slow
    /// listener.
    pub tentative: bool,
}

impl SessionEvent {
    /// An event that must reach every listener.
    pub fn kept(data: Value) -> SessionEvent {
        SessionEvent {
            data,
            tentative: false,
        }
    }

    /// An event the next tentative one or committed text replaces: a slow listener may miss it.
    pub fn tentative(data: Value) -> SessionEvent {
        SessionEvent {
            data,
            tentative: true,
        }
    }

    /// The event's `type`.
    pub fn kind(&self) -> &str {
        self.data["type"].as_str().unwrap_or("message")
    }
}

/// Where a session's events are published.
#[derive(Default)]
pub struct EventHub {
    listeners: Mutex<Vec<Weak<Queue>>>,
}

#[derive(Default)]
struct Queue {
    state: Mutex<QueueState>,
    ready: Notify,
}

#[derive(Default)]
struct QueueState {
    events: VecDeque<SessionEvent>,
    /// Let go: fell too far behind on events that must not be lost.
    dropped: bool,
}

/// One listener's events, in order.
pub struct Subscription {
    queue: Arc<Queue>,
}

impl EventHub {
    /// Hands `event` to every listener.
    pub fn publish(&self, event: SessionEvent) {
        let mut listeners = lock(&self.listeners);
        listeners.retain(|listener| {
            let Some(queue) = listener.upgrade() else {
                return false;
            };
            let mut state = lock(&queue.state);
            if state.events.len() >= LISTENER_QUEUE {
                match state.events.iter().position(|e| e.tentative) {
                    Some(oldest) => {
                        state.events.remove(oldest);
                    }
                    None => state.dropped = true,
                }
            }
            let keep = !state.dropped;
            if keep {
                state.events.push_back(event.clone());
            }
            drop(state);
            queue.ready.notify_one();
            keep
        });
    }

    /// Publishes the event `kind` of session `id` with `fields` (an object).
    pub fn publish_session(&self, kind: &str, id: &Uuid, fields: Value) {
        self.publish(SessionEvent::kept(session_event(kind, id, fields)));
    }

    /// Publishes OpenAI Realtime's `conversation.item.input_audio_transcription.<what>` for
    /// the session `id` (the session is the conversation item).
    pub fn publish_item(&self, what: &str, id: &Uuid, fields: Value) {
        let mut item = json!({"item_id": format_uuid(id), "content_index": 0});
        if let (Some(item), Value::Object(fields)) = (item.as_object_mut(), fields) {
            item.extend(fields);
        }
        let kind = format!("conversation.item.input_audio_transcription.{what}");
        self.publish_session(&kind, id, item);
    }

    /// Publishes what the live transcription of session `id` reports: speech starting and
    /// stopping, each chunk committed and its text, and provisional text as `<service>.tentative`
    /// (which a slow listener may miss).
    pub fn publish_progress(&self, service: &str, id: &Uuid, progress: Progress<'_>) {
        let item_id = format_uuid(id);
        let ms = |seconds: f64| (seconds * 1000.0).round() as u64;
        match progress {
            Progress::Segments(timed) => {
                let delta: Vec<&str> = timed
                    .iter()
                    .map(|t| t.text.trim())
                    .filter(|t| !t.is_empty())
                    .collect();
                if !delta.is_empty() {
                    self.publish_item("delta", id, json!({"delta": delta.join(" ")}));
                }
            }
            Progress::SpeechStarted { at } => {
                let fields = json!({"audio_start_ms": ms(at), "item_id": item_id});
                self.publish_session("input_audio_buffer.speech_started", id, fields);
            }
            Progress::Committed { end, goes_on, .. } => {
                if !goes_on {
                    let fields = json!({"audio_end_ms": ms(end), "item_id": item_id});
                    self.publish_session("input_audio_buffer.speech_stopped", id, fields);
                }
                let fields = json!({"item_id": item_id, "previous_item_id": null});
                self.publish_session("input_audio_buffer.committed", id, fields);
            }
            Progress::Tentative(text) => {
                let kind = format!("{service}.tentative");
                let data = session_event(&kind, id, json!({ "text": text }));
                self.publish(SessionEvent::tentative(data));
            }
        }
    }

    /// A new listener, from the next event on.
    pub fn subscribe(&self) -> Subscription {
        let queue = Arc::new(Queue::default());
        lock(&self.listeners).push(Arc::downgrade(&queue));
        Subscription { queue }
    }

    /// Listeners now.
    pub fn listeners(&self) -> usize {
        lock(&self.listeners)
            .iter()
            .filter(|l| l.strong_count() > 0)
            .count()
    }
}

impl Subscription {
    /// The next event; None once the listener was let go for falling behind.
    pub async fn next(&mut self) -> Option<SessionEvent> {
        loop {
            let notified = self.queue.ready.notified();
            {
                let mut state = lock(&self.queue.state);
                if let Some(event) = state.events.pop_front() {
                    return Some(event);
                }
                if state.dropped {
                    return None;
                }
            }
            notified.await;
        }
    }
}

/// The data of the event `kind` of session `id`: `type`, `id` and `fields` (an object).
fn session_event(kind: &str, id: &Uuid, fields: Value) -> Value {
    let mut data = json!({"type": kind, "id": format_uuid(id)});
    if let (Some(data), Value::Object(fields)) = (data.as_object_mut(), fields) {
        data.extend(fields);
    }
    data
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn event(n: usize, tentative: bool) -> SessionEvent {
        SessionEvent {
            data: json!({"type": "test", "n": n}),
            tentative,
        }
    }

    #[tokio::test]
    async fn every_listener_gets_every_event_in_order() {
        let hub = EventHub::default();
        let (mut a, mut b) = (hub.subscribe(), hub.subscribe());
        for n in 0..3 {
            hub.publish(event(n, false));
        }
        for listener in [&mut a, &mut b] {
            for n in 0..3 {
                assert_eq!(listener.next().await.unwrap().data["n"], n);
            }
        }
    }

    #[tokio::test]
    async fn a_slow_listener_loses_tentative_events_first_and_never_a_kept_one() {
        let hub = EventHub::default();
        let mut slow = hub.subscribe();
        hub.publish(event(0, true));
        for n in 1..LISTENER_QUEUE + 10 {
            hub.publish(event(n, n % 2 == 0));
        }
        let mut kept = Vec::new();
        while kept.len() < LISTENER_QUEUE {
            let got = slow.next().await.unwrap();
            kept.push(got.data["n"].as_u64().unwrap() as usize);
        }
        let odd: Vec<usize> = (1..LISTENER_QUEUE + 10).filter(|n| n % 2 == 1).collect();
        assert!(
            odd.iter().all(|n| kept.contains(n)),
            "a kept event was lost"
        );
        assert!(!kept.contains(&0), "the oldest tentative one gave way");
        assert!(kept.windows(2).all(|w| w[0] < w[1]), "in order");
    }

    #[tokio::test]
    async fn a_listener_full_of_kept_events_is_let_go_and_others_go_on() {
        let hub = EventHub::default();
        let mut slow = hub.subscribe();
        let mut fast = hub.subscribe();
        for n in 0..=LISTENER_QUEUE {
            hub.publish(event(n, false));
            assert_eq!(fast.next().await.unwrap().data["n"], n);
        }
        assert_eq!(hub.listeners(), 1);
        for n in 0..LISTENER_QUEUE {
            assert_eq!(slow.next().await.unwrap().data["n"], n);
        }
        assert!(slow.next().await.is_none(), "its stream ends");
    }

    #[tokio::test]
    async fn a_listener_that_leaves_is_forgotten() {
        let hub = EventHub::default();
        let gone = hub.subscribe();
        drop(gone);
        hub.publish(event(0, false));
        assert_eq!(hub.listeners(), 0);
        assert!(lock(&hub.listeners).is_empty());
    }
}
