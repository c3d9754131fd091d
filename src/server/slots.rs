//! The connection cap: at most so many connections are served at once (the number comes from
//! the open file limit: see `descriptors`).
//!
//! A connection that arrives when every slot is taken makes room by closing the connection that
//! has waited longest between requests (polled at least once, and idle for at least
//! [`IDLE_BEFORE_CLOSING`]): an idle keep-alive connection, or one whose request head has not
//! arrived. Those hold no work, and the client of an idle keep-alive connection reconnects.
//! When every connection is inside a request, the one whose request body has sent nothing for
//! longest (at least [`STALLED_BEFORE_CLOSING`]) is closed instead: a client that sends a head
//! and then stalls holds no work of the server's either, and 300 of them must not keep
//! `/v1/status` waiting. A body that keeps arriving, a request whose body is complete (the
//! server is working on it) and a response being sent are never closed to make room. When no
//! connection can be closed, the newcomer waits, and the ones behind it stay in the kernel's
//! listen backlog, until a request ends; a client that trickles cannot hold a request for long
//! (request heads, bodies and response writes all have deadlines).

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{Request, Response};
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tower::ServiceExt;

/// How long a connection must have been idle before it is closed to make room: a client that
/// has just connected, or just been answered, has this long to send its request.
const IDLE_BEFORE_CLOSING: Duration = Duration::from_millis(250);

/// How long a request body must have sent nothing before its connection may be closed to make
/// room (only ever when every slot is taken): far longer than the pauses of a client that is
/// sending, even one streaming from a microphone (a block every few tens of milliseconds).
pub const STALLED_BEFORE_CLOSING: Duration = Duration::from_millis(500);

/// How often a newcomer waiting for a slot looks again for an idle connection to close.
const RETRY: Duration = Duration::from_millis(100);

/// The slots of one server.
pub struct Slots {
    permits: Arc<Semaphore>,
    live: Mutex<HashMap<u64, Arc<Activity>>>,
    next_id: AtomicU64,
}

/// What a slot's connection is doing.
struct Activity {
    /// Polled once: a request head that was already waiting has been read by then.
    started: AtomicBool,
    /// Requests being answered, from the head until the response is sent (HTTP/1: 0 or 1).
    in_flight: AtomicUsize,
    /// When the connection last became idle: accepted, or its last response sent.
    idle_since: Mutex<Instant>,
    /// While a request body is still to come: when it last brought bytes (or its head came).
    body_waiting_since: Mutex<Option<Instant>>,
    /// Asked to close and not yet answered; cleared when the request was busy by then.
    asked_to_close: AtomicBool,
    close: Notify,
}

impl Slots {
    pub fn new(max: usize) -> Arc<Slots> {
        Arc::new(Slots {
            permits: Arc::new(Semaphore::new(max)),
            live: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
        })
    }

    /// A slot for a connection just accepted: a free one, or one made by closing the connection
    /// idle the longest; waits while every connection is inside a request.
    pub async fn acquire(self: &Arc<Self>) -> Slot {
        loop {
            if let Ok(permit) = self.permits.clone().try_acquire_owned() {
                return self.register(permit);
            }
            self.close_longest_idle();
            if let Ok(Ok(permit)) =
                tokio::time::timeout(RETRY, self.permits.clone().acquire_owned()).await
            {
                return self.register(permit);
            }
        }
    }

    /// How many connections hold a slot.
    #[cfg(test)]
    fn live(&self) -> usize {
        self.live.lock().expect("slots lock").len()
    }

    fn register(self: &Arc<Self>, permit: OwnedSemaphorePermit) -> Slot {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let activity = Arc::new(Activity {
            started: AtomicBool::new(false),
            in_flight: AtomicUsize::new(0),
            idle_since: Mutex::new(Instant::now()),
            body_waiting_since: Mutex::new(None),
            asked_to_close: AtomicBool::new(false),
            close: Notify::new(),
        });
        self.live
            .lock()
            .expect("slots lock")
            .insert(id, activity.clone());
        Slot {
            slots: self.clone(),
            id,
            activity,
            _permit: permit,
        }
    }

    /// Asks the connection idle longest to close; failing that, the one whose request body has
    /// stalled longest.
    fn close_longest_idle(&self) {
        let live = self.live.lock().expect("slots lock");
        let open = || {
            live.values()
                .filter(|a| a.started.load(Ordering::SeqCst))
                .filter(|a| !a.asked_to_close.load(Ordering::SeqCst))
        };
        let idlest = open()
            .filter_map(|a| a.idle_for().map(|since| (since, a)))
            .filter(|(since, _)| since.elapsed() >= IDLE_BEFORE_CLOSING)
            .min_by_key(|(since, _)| *since);
        let stalled = || {
            open()
                .filter_map(|a| a.stalled_since().map(|since| (since, a)))
                .filter(|(since, _)| since.elapsed() >= STALLED_BEFORE_CLOSING)
                .min_by_key(|(since, _)| *since)
        };
        if let Some((_, activity)) = idlest.or_else(stalled) {
            activity.asked_to_close.store(true, Ordering::SeqCst);
            activity.close.notify_one();
        }
    }
}

impl Activity {
    /// Since when the connection has been idle between requests; None inside a request.
    fn idle_for(&self) -> Option<Instant> {
        (self.in_flight.load(Ordering::SeqCst) == 0)
            .then(|| *self.idle_since.lock().expect("idle lock"))
    }

    /// Since when its request body has sent nothing; None outside a request or once the body
    /// is complete.
    fn stalled_since(&self) -> Option<Instant> {
        if self.in_flight.load(Ordering::SeqCst) == 0 {
            return None;
        }
        *self.body_waiting_since.lock().expect("body lock")
    }

    /// Whether the connection may be closed now: idle, or its body stalled past the grace.
    fn closable(&self) -> bool {
        self.in_flight.load(Ordering::SeqCst) == 0
            || self
                .stalled_since()
                .is_some_and(|since| since.elapsed() >= STALLED_BEFORE_CLOSING)
    }

    /// Records how the request body stands: `Some(now)` when bytes came (or the head, for a
    /// body still to come), None once it is complete or gone.
    fn body_waiting(&self, since: Option<Instant>) {
        *self.body_waiting_since.lock().expect("body lock") = since;
    }
}

/// One connection's place among those the cap allows; freed when dropped.
pub struct Slot {
    slots: Arc<Slots>,
    id: u64,
    activity: Arc<Activity>,
    _permit: OwnedSemaphorePermit,
}

impl Slot {
    /// The service for this slot's connection: `router`, with the connection marked busy while
    /// it answers a request.
    pub fn service(&self, router: Router) -> Tracked {
        Tracked {
            router,
            activity: self.activity.clone(),
        }
    }

    /// Drives `connection` (served by [`Slot::service`]) until it ends, or until it is closed
    /// to make room; the slot is freed then.
    pub async fn serve<E: std::fmt::Display>(
        self,
        connection: impl Future<Output = Result<(), E>>,
    ) {
        let mut connection = std::pin::pin!(connection);
        // The first poll reads a request head that is already waiting, and so marks the
        // connection busy, before it can count as idle.
        let first = std::future::poll_fn(|cx| Poll::Ready(connection.as_mut().poll(cx))).await;
        let ended = match first {
            Poll::Ready(ended) => ended,
            Poll::Pending => {
                self.activity.started.store(true, Ordering::SeqCst);
                tokio::select! {
                    ended = connection => ended,
                    () = self.closing() => {
                        tracing::debug!("closed an idle or stalled connection to make room");
                        return;
                    }
                }
            }
        };
        if let Err(err) = ended {
            tracing::debug!("connection ended: {err}");
        }
    }

    /// Completes when the connection is to be closed to make room: asked to, and idle or
    /// stalled. Polled by the task that drives the connection, so no request can begin while
    /// it checks.
    async fn closing(&self) {
        loop {
            self.activity.close.notified().await;
            if self.activity.closable() {
                return;
            }
            self.activity.asked_to_close.store(false, Ordering::SeqCst);
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.slots.live.lock().expect("slots lock").remove(&self.id);
    }
}

/// Marks its connection busy until dropped (with the response body, once it is sent).
struct Busy(Arc<Activity>);

impl Busy {
    fn begin(activity: &Arc<Activity>) -> Busy {
        activity.in_flight.fetch_add(1, Ordering::SeqCst);
        Busy(activity.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            *self.0.idle_since.lock().expect("idle lock") = Instant::now();
        }
    }
}

/// The router as hyper calls it for one connection (see [`Slot::service`]).
#[derive(Clone)]
pub struct Tracked {
    router: Router,
    activity: Arc<Activity>,
}

impl hyper::service::Service<Request<Incoming>> for Tracked {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        let busy = Busy::begin(&self.activity);
        let request = request.map(|body| WatchedBody::new(body, self.activity.clone()));
        let answer = self.router.clone().oneshot(request);
        Box::pin(async move {
            let response = answer.await?;
            Ok(response.map(|body| Body::new(BusyBody { body, _busy: busy })))
        })
    }
}

/// A request body that records on its connection when it last brought bytes, until it is
/// complete (see [`Activity::stalled_since`]).
struct WatchedBody {
    body: Incoming,
    activity: Arc<Activity>,
}

impl WatchedBody {
    fn new(body: Incoming, activity: Arc<Activity>) -> WatchedBody {
        let to_come = !http_body::Body::is_end_stream(&body);
        activity.body_waiting(to_come.then(Instant::now));
        WatchedBody { body, activity }
    }
}

impl Drop for WatchedBody {
    fn drop(&mut self) {
        self.activity.body_waiting(None);
    }
}

impl http_body::Body for WatchedBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(_))) if !http_body::Body::is_end_stream(&self.body) => {
                self.activity.body_waiting(Some(Instant::now()));
            }
            Poll::Ready(_) => self.activity.body_waiting(None),
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        http_body::Body::is_end_stream(&self.body)
    }

    fn size_hint(&self) -> SizeHint {
        http_body::Body::size_hint(&self.body)
    }
}

/// A response body that keeps its connection marked busy until it has been sent.
struct BusyBody {
    body: Body,
    _busy: Busy,
}

impl http_body::Body for BusyBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn started(slots: &Arc<Slots>) -> Slot {
        let slot = slots.acquire().await;
        slot.activity.started.store(true, Ordering::SeqCst);
        slot
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_house_closes_the_longest_idle_connection_and_never_a_busy_one() {
        let slots = Slots::new(3);
        let oldest_busy = started(&slots).await;
        let _busy = Busy::begin(&oldest_busy.activity);
        tokio::time::advance(Duration::from_secs(1)).await;
        let idle = started(&slots).await;
        tokio::time::advance(Duration::from_secs(1)).await;
        let newer_idle = started(&slots).await;
        assert_eq!(slots.live(), 3);

        let newcomer = tokio::spawn({
            let slots = slots.clone();
            async move { slots.acquire().await }
        });
        // The idle connection longest without a request is asked to close; it closes.
        tokio::time::timeout(Duration::from_secs(5), idle.closing())
            .await
            .expect("asked to close");
        drop(idle);
        let newcomer = newcomer.await.unwrap();
        assert_eq!(slots.live(), 3);
        newcomer.activity.started.store(true, Ordering::SeqCst);

        // A connection that became busy after being asked stays; the next idle one goes.
        let waiting = tokio::spawn({
            let slots = slots.clone();
            async move { slots.acquire().await }
        });
        tokio::task::yield_now().await;
        let _newer_busy = Busy::begin(&newer_idle.activity);
        let asked = tokio::time::timeout(Duration::from_secs(3), newer_idle.closing()).await;
        assert!(
            asked.is_err(),
            "a busy connection is never closed to make room"
        );
        tokio::time::timeout(Duration::from_secs(5), newcomer.closing())
            .await
            .expect("the other idle connection is asked next");
        drop(newcomer);
        waiting.await.unwrap();
        drop(oldest_busy);
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_not_yet_polled_is_never_closed_to_make_room() {
        let slots = Slots::new(1);
        let fresh = slots.acquire().await;
        let newcomer = tokio::spawn({
            let slots = slots.clone();
            async move { slots.acquire().await }
        });
        let asked = tokio::time::timeout(Duration::from_secs(5), fresh.closing()).await;
        assert!(asked.is_err(), "its request head may be waiting unread");
        fresh.activity.started.store(true, Ordering::SeqCst);
        tokio::time::timeout(Duration::from_secs(5), fresh.closing())
            .await
            .expect("idle once polled");
        drop(fresh);
        newcomer.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn inside_requests_only_a_body_stalled_past_the_grace_is_closed_to_make_room() {
        let slots = Slots::new(3);
        let in_request = |slot: &Slot, body_to_come: bool| {
            let busy = Busy::begin(&slot.activity);
            slot.activity.body_waiting(body_to_come.then(Instant::now));
            busy
        };
        let stalled = started(&slots).await;
        let _stalled_busy = in_request(&stalled, true);
        let sending = started(&slots).await;
        let _sending_busy = in_request(&sending, true);
        let working = started(&slots).await;
        let _working_busy = in_request(&working, false);
        // The sending body brings bytes every 100 ms.
        let feeder = tokio::spawn({
            let activity = sending.activity.clone();
            async move {
                loop {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    activity.body_waiting(Some(Instant::now()));
                }
            }
        });
        let newcomer = tokio::spawn({
            let slots = slots.clone();
            async move { slots.acquire().await }
        });
        let early = tokio::time::timeout(
            STALLED_BEFORE_CLOSING - Duration::from_millis(150),
            stalled.closing(),
        )
        .await;
        assert!(early.is_err(), "closed within the grace");
        tokio::time::timeout(Duration::from_secs(1), stalled.closing())
            .await
            .expect("the stalled body's connection is asked to close past the grace");
        drop(stalled);
        let _newcomer = newcomer.await.unwrap();

        // Neither a body that keeps coming nor a request the server works on is ever closed.
        let waiting = tokio::spawn({
            let slots = slots.clone();
            async move { slots.acquire().await }
        });
        for slot in [&sending, &working] {
            let asked = tokio::time::timeout(Duration::from_secs(5), slot.closing()).await;
            assert!(asked.is_err(), "a busy connection was closed");
        }
        assert!(!waiting.is_finished());
        feeder.abort();
        waiting.abort();
    }
}
