//! The bounded queue in front of the engine: a fixed number of slots, a bounded number of
//! requests waiting for one, and 503 past that. A slot is held until the engine call it
//! guards has finished, even when the request that took it is gone.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::oneshot;

use super::TranscribeError;

/// Requests allowed to wait for a slot before new ones get 503.
pub const DEFAULT_QUEUE: usize = 16;

/// Seconds a refused request is told to wait (`Retry-After`).
const RETRY_AFTER_SECS: u32 = 5;

/// The engine's slots and who waits for them. Someone waiting on live text (a dictation's or a
/// recording's next chunk) goes ahead of every upload in line, and an upload that holds a slot
/// lets such a chunk go between two of its own chunks ([`Queue::urgent_waiting`]).
pub struct Queue {
    turns: Arc<Mutex<Turns>>,
    waiting: AtomicUsize,
    max_waiting: usize,
}

/// Free slots and the waiters, first come first served within each line.
struct Turns {
    free: usize,
    urgent: VecDeque<oneshot::Sender<Slot>>,
    ordinary: VecDeque<oneshot::Sender<Slot>>,
}

/// A slot: the engine may run while this is alive. Dropped, it goes to the next waiter (urgent
/// ones first).
pub struct Slot(Option<Arc<Mutex<Turns>>>);

impl Drop for Slot {
    fn drop(&mut self) {
        let Some(turns) = self.0.take() else {
            return;
        };
        loop {
            let mut state = lock(&turns);
            let Some(next) = state
                .urgent
                .pop_front()
                .or_else(|| state.ordinary.pop_front())
            else {
                state.free += 1;
                return;
            };
            drop(state);
            match next.send(Slot(Some(turns.clone()))) {
                Ok(()) => return,
                // That waiter left: the slot goes to the next one.
                Err(mut unclaimed) => unclaimed.0 = None,
            }
        }
    }
}

/// Counts a waiting request; gives its place back however the wait ends (slot, or the
/// request dropped while waiting).
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Queue {
    /// `slots`: engine calls at once; `max_waiting`: requests queued behind them.
    pub fn new(slots: usize, max_waiting: usize) -> Queue {
        Queue {
            turns: Arc::new(Mutex::new(Turns {
                free: slots.max(1),
                urgent: VecDeque::new(),
                ordinary: VecDeque::new(),
            })),
            waiting: AtomicUsize::new(0),
            max_waiting,
        }
    }

    /// A free slot, after waiting in the queue if there is room in it.
    pub async fn acquire(&self) -> Result<Slot, TranscribeError> {
        if let Some(slot) = self.try_acquire() {
            return Ok(slot);
        }
        let waiting = Waiting(&self.waiting);
        if self.waiting.fetch_add(1, Ordering::SeqCst) >= self.max_waiting {
            return Err(TranscribeError::Busy {
                retry_after_secs: RETRY_AFTER_SECS,
            });
        }
        let slot = self.take(false).await;
        drop(waiting);
        slot
    }

    /// A slot for work already admitted that someone waits on now (the next chunk of a live
    /// transcription, or an upload taking the engine back after letting one go): ahead of
    /// every request in the queue, however many wait.
    pub async fn acquire_admitted(&self) -> Result<Slot, TranscribeError> {
        self.take(true).await
    }

    /// A slot if one is free now, for work worth doing only while the engine is idle
    /// (provisional text): it never waits.
    pub fn try_acquire(&self) -> Option<Slot> {
        let mut turns = lock(&self.turns);
        (turns.free > 0).then(|| {
            turns.free -= 1;
            Slot(Some(self.turns.clone()))
        })
    }

    /// Whether admitted work waits for a slot: an upload holding one lets it go first.
    pub fn urgent_waiting(&self) -> bool {
        lock(&self.turns).urgent.iter().any(|w| !w.is_closed())
    }

    async fn take(&self, urgent: bool) -> Result<Slot, TranscribeError> {
        let turn = {
            let mut turns = lock(&self.turns);
            if turns.free > 0 {
                turns.free -= 1;
                return Ok(Slot(Some(self.turns.clone())));
            }
            let (sender, turn) = oneshot::channel();
            if urgent {
                turns.urgent.push_back(sender);
            } else {
                turns.ordinary.push_back(sender);
            }
            turn
        };
        turn.await
            .map_err(|e| TranscribeError::internal("transcription queue closed", e))
    }

    /// Requests waiting for a slot now.
    #[cfg(test)]
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }

    /// Slots free now.
    #[cfg(test)]
    pub fn free_slots(&self) -> usize {
        lock(&self.turns).free
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn past_the_queue_requests_are_refused_with_a_retry_delay() {
        let queue = Arc::new(Queue::new(1, 1));
        let running = queue.acquire().await.ok().unwrap();
        let waiter = tokio::spawn({
            let queue = queue.clone();
            async move { queue.acquire().await.map(drop) }
        });
        while queue.waiting() == 0 {
            tokio::task::yield_now().await;
        }
        let refused = queue.acquire().await.err().unwrap();
        assert!(matches!(
            refused,
            TranscribeError::Busy {
                retry_after_secs: 5
            }
        ));
        drop(running);
        assert!(waiter.await.unwrap().is_ok());
        assert_eq!((queue.waiting(), queue.free_slots()), (0, 1));
    }

    #[tokio::test]
    async fn a_request_that_leaves_the_queue_gives_its_place_back() {
        let queue = Arc::new(Queue::new(1, 2));
        let running = queue.acquire().await.ok().unwrap();
        for _ in 0..10 {
            let waiter = tokio::spawn({
                let queue = queue.clone();
                async move { queue.acquire().await.map(drop) }
            });
            while queue.waiting() == 0 {
                tokio::task::yield_now().await;
            }
            waiter.abort();
            let _ = waiter.await;
            assert_eq!(queue.waiting(), 0);
        }
        drop(running);
        assert!(queue.acquire().await.is_ok());
    }

    #[tokio::test]
    async fn admitted_work_goes_ahead_of_the_requests_in_line() {
        let queue = Arc::new(Queue::new(1, 4));
        let running = queue.acquire().await.ok().unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let wait = |name: &'static str, urgent: bool| {
            let (queue, order) = (queue.clone(), order.clone());
            tokio::spawn(async move {
                let slot = if urgent {
                    queue.acquire_admitted().await
                } else {
                    queue.acquire().await
                };
                order.lock().unwrap().push(name);
                drop(slot);
            })
        };
        let first = wait("upload 1", false);
        while queue.waiting() == 0 {
            tokio::task::yield_now().await;
        }
        let second = wait("upload 2", false);
        while queue.waiting() < 2 {
            tokio::task::yield_now().await;
        }
        assert!(!queue.urgent_waiting());
        let chunk = wait("live chunk", true);
        while !queue.urgent_waiting() {
            tokio::task::yield_now().await;
        }
        assert!(queue.try_acquire().is_none(), "no slot is free");
        drop(running);
        for task in [first, second, chunk] {
            task.await.unwrap();
        }
        assert_eq!(
            *order.lock().unwrap(),
            ["live chunk", "upload 1", "upload 2"]
        );
        assert_eq!(queue.free_slots(), 1);
    }

    #[tokio::test]
    async fn a_slot_passes_over_waiters_that_left() {
        let queue = Arc::new(Queue::new(1, 4));
        let running = queue.acquire().await.ok().unwrap();
        let gone = tokio::spawn({
            let queue = queue.clone();
            async move { queue.acquire_admitted().await.map(drop) }
        });
        while !queue.urgent_waiting() {
            tokio::task::yield_now().await;
        }
        gone.abort();
        let _ = gone.await;
        assert!(!queue.urgent_waiting(), "a waiter that left is not waiting");
        drop(running);
        assert_eq!(queue.free_slots(), 1);
        assert!(queue.try_acquire().is_some());
    }
}
