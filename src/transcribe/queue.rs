//! The bounded queue in front of the engine: a fixed number of slots, a bounded number of
//! requests waiting for one, and 503 past that. A slot is held until the engine call it
//! guards has finished, even when the request that took it is gone.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::TranscribeError;

/// Requests allowed to wait for a slot before new ones get 503.
pub const DEFAULT_QUEUE: usize = 16;

/// Seconds a refused request is told to wait (`Retry-After`).
const RETRY_AFTER_SECS: u32 = 5;

pub struct Queue {
    slots: Arc<Semaphore>,
    waiting: AtomicUsize,
    max_waiting: usize,
}

/// A slot: the engine may run while this is alive.
pub struct Slot(#[allow(dead_code)] OwnedSemaphorePermit);

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
            slots: Arc::new(Semaphore::new(slots.max(1))),
            waiting: AtomicUsize::new(0),
            max_waiting,
        }
    }

    /// A free slot, after waiting in the queue if there is room in it.
    pub async fn acquire(&self) -> Result<Slot, TranscribeError> {
        if let Ok(permit) = self.slots.clone().try_acquire_owned() {
            return Ok(Slot(permit));
        }
        let waiting = Waiting(&self.waiting);
        if self.waiting.fetch_add(1, Ordering::SeqCst) >= self.max_waiting {
            return Err(TranscribeError::Busy {
                retry_after_secs: RETRY_AFTER_SECS,
            });
        }
        let permit = self.slots.clone().acquire_owned().await;
        drop(waiting);
        permit
            .map(Slot)
            .map_err(|e| TranscribeError::internal("transcription queue closed", e))
    }

    /// A free slot for work already admitted (the next chunk of a live transcription): waits
    /// for it however many requests wait.
    pub async fn acquire_admitted(&self) -> Result<Slot, TranscribeError> {
        self.slots
            .clone()
            .acquire_owned()
            .await
            .map(Slot)
            .map_err(|e| TranscribeError::internal("transcription queue closed", e))
    }

    /// A slot if one is free now, for work worth doing only while the engine is idle
    /// (provisional text): it never waits.
    pub fn try_acquire(&self) -> Option<Slot> {
        self.slots.clone().try_acquire_owned().ok().map(Slot)
    }

    /// Requests waiting for a slot now.
    #[cfg(test)]
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }

    /// Slots free now.
    #[cfg(test)]
    pub fn free_slots(&self) -> usize {
        self.slots.available_permits()
    }
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
}
