//! The bounded queue in front of the engine: a fixed number of slots, a bounded number of
//! requests waiting for one, and 503 past that. A slot is held until the engine call it
//! guards has finished, even when the request that took it is gone. Short clips waiting
//! together share a slot: each heard on its share of the engine's threads
//! ([`Queue::acquire_share`]), which hears more of them in the same time than one after the
//! other on every thread.

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

/// Free slots, the slots shared out, and the waiters, first come first served within each
/// line.
struct Turns {
    free: usize,
    shared: Vec<SharedSlot>,
    next_share: u64,
    urgent: VecDeque<Waiter>,
    ordinary: VecDeque<Waiter>,
}

/// A slot whose engine calls run side by side, each on `1 / at_once` of the threads.
struct SharedSlot {
    id: u64,
    holders: usize,
    at_once: usize,
}

/// Someone in line: what they wait for, and where their slot goes.
struct Waiter {
    wants: Wants,
    reply: oneshot::Sender<Slot>,
}

#[derive(Clone, Copy)]
enum Wants {
    /// The engine to themselves, for as many calls as the work needs.
    Whole,
    /// A short clip's few seconds of decoding, which may run beside `at_once - 1` others.
    Share { at_once: usize },
}

/// A slot: the engine may run while this is alive. Dropped, it goes to the next waiter (urgent
/// ones first).
pub struct Slot {
    turns: Option<Arc<Mutex<Turns>>>,
    /// The shared slot this is a share of, and how many calls it runs side by side.
    share: Option<(u64, usize)>,
}

impl Slot {
    /// Engine calls this slot's call may run beside: its call takes that share of the threads.
    pub fn calls_at_once(&self) -> usize {
        self.share.map_or(1, |(_, at_once)| at_once)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let Some(turns) = self.turns.take() else {
            return;
        };
        let granted = {
            let mut state = lock(&turns);
            state.release(self.share);
            state.hand_out(&turns)
        };
        // Outside the lock: a slot a waiter no longer takes is dropped, and hands itself on.
        for (reply, slot) in granted {
            let _ = reply.send(slot);
        }
    }
}

impl Turns {
    /// Gives back a whole slot or one share of a shared slot (the slot once its last share).
    fn release(&mut self, share: Option<(u64, usize)>) {
        let Some((id, _)) = share else {
            self.free += 1;
            return;
        };
        if let Some(at) = self.shared.iter().position(|s| s.id == id) {
            self.shared[at].holders -= 1;
            if self.shared[at].holders == 0 {
                self.shared.swap_remove(at);
                self.free += 1;
            }
        }
    }

    /// Slots for the waiters at the head of the lines (urgent first), as far as they go: a
    /// waiter never passes the one before it, so a whole slot awaited is not kept busy by
    /// shares that keep coming.
    fn hand_out(&mut self, turns: &Arc<Mutex<Turns>>) -> Vec<(oneshot::Sender<Slot>, Slot)> {
        let mut granted = Vec::new();
        loop {
            let urgent = self.urgent.front().is_some();
            let Some(head) = self.urgent.front().or(self.ordinary.front()) else {
                break;
            };
            let Some(share) = self.place_for(head.wants, 1) else {
                break;
            };
            let line = if urgent {
                &mut self.urgent
            } else {
                &mut self.ordinary
            };
            if let Some(waiter) = line.pop_front() {
                let slot = Slot {
                    turns: Some(turns.clone()),
                    share,
                };
                granted.push((waiter.reply, slot));
            }
        }
        granted
    }

    /// Takes a place for what `wants` asks, if there is one now: `Some(None)` a whole slot,
    /// `Some(Some(share))` a share of a shared slot; None to wait. A share opens a slot for
    /// sharing only when another share waits behind the one asking (`behind` counts the asker
    /// itself when it is in line): alone, its call takes every thread.
    fn place_for(&mut self, wants: Wants, behind: usize) -> Option<Option<(u64, usize)>> {
        match wants {
            Wants::Whole if self.free == 0 => None,
            Wants::Whole => {
                self.free -= 1;
                Some(None)
            }
            Wants::Share { at_once } => {
                if let Some(slot) = self
                    .shared
                    .iter_mut()
                    .find(|s| s.at_once == at_once && s.holders < at_once)
                {
                    slot.holders += 1;
                    return Some(Some((slot.id, at_once)));
                }
                if self.free == 0 {
                    return None;
                }
                self.free -= 1;
                if self.shares_waiting() <= behind {
                    return Some(None);
                }
                let id = self.next_share;
                self.next_share += 1;
                self.shared.push(SharedSlot {
                    id,
                    holders: 1,
                    at_once,
                });
                Some(Some((id, at_once)))
            }
        }
    }

    /// Waiters in line for a share who are still there.
    fn shares_waiting(&self) -> usize {
        self.urgent
            .iter()
            .chain(&self.ordinary)
            .filter(|w| matches!(w.wants, Wants::Share { .. }) && !w.reply.is_closed())
            .count()
    }

    fn nobody_waits(&self) -> bool {
        self.urgent.is_empty() && self.ordinary.is_empty()
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
                shared: Vec::new(),
                next_share: 0,
                urgent: VecDeque::new(),
                ordinary: VecDeque::new(),
            })),
            waiting: AtomicUsize::new(0),
            max_waiting,
        }
    }

    /// A free slot, after waiting in the queue if there is room in it.
    pub async fn acquire(&self) -> Result<Slot, TranscribeError> {
        self.acquire_in_line(Wants::Whole).await
    }

    /// A place for one short clip (at most one window's length), after waiting in the queue if there
    /// is room in it. When other such clips wait too, up to `at_once` of them share a slot, each
    /// call on its share of the threads ([`Slot::calls_at_once`]); alone, the clip has the slot
    /// and every thread to itself.
    pub async fn acquire_share(&self, at_once: usize) -> Result<Slot, TranscribeError> {
        let wants = if at_once > 1 {
            Wants::Share { at_once }
        } else {
            Wants::Whole
        };
        self.acquire_in_line(wants).await
    }

    async fn acquire_in_line(&self, wants: Wants) -> Result<Slot, TranscribeError> {
        if let Some(slot) = self.take_now(wants) {
            return Ok(slot);
        }
        let waiting = Waiting(&self.waiting);
        if self.waiting.fetch_add(1, Ordering::SeqCst) >= self.max_waiting {
            return Err(TranscribeError::Busy {
                retry_after_secs: RETRY_AFTER_SECS,
            });
        }
        let slot = self.take(wants, false).await;
        drop(waiting);
        slot
    }

    /// A slot for work already admitted that someone waits on now (the next chunk of a live
    /// transcription, or an upload taking the engine back after letting one go): ahead of
    /// every request in the queue, however many wait.
    pub async fn acquire_admitted(&self) -> Result<Slot, TranscribeError> {
        self.take(Wants::Whole, true).await
    }

    /// A slot if one is free now, for work worth doing only while the engine is idle
    /// (provisional text): it never waits.
    pub fn try_acquire(&self) -> Option<Slot> {
        self.take_now(Wants::Whole)
    }

    /// Whether admitted work waits for a slot: an upload holding one lets it go first.
    pub fn urgent_waiting(&self) -> bool {
        lock(&self.turns)
            .urgent
            .iter()
            .any(|w| !w.reply.is_closed())
    }

    /// A place now, when nobody waits (else the asker goes in line behind them).
    fn take_now(&self, wants: Wants) -> Option<Slot> {
        let mut turns = lock(&self.turns);
        if !turns.nobody_waits() {
            return None;
        }
        let share = turns.place_for(wants, 0)?;
        Some(Slot {
            turns: Some(self.turns.clone()),
            share,
        })
    }

    async fn take(&self, wants: Wants, urgent: bool) -> Result<Slot, TranscribeError> {
        let turn = {
            let mut turns = lock(&self.turns);
            if turns.nobody_waits()
                && let Some(share) = turns.place_for(wants, 0)
            {
                return Ok(Slot {
                    turns: Some(self.turns.clone()),
                    share,
                });
            }
            let (reply, turn) = oneshot::channel();
            let waiter = Waiter { wants, reply };
            if urgent {
                turns.urgent.push_back(waiter);
            } else {
                turns.ordinary.push_back(waiter);
            }
            turn
        };
        turn.await
            .map_err(|e| TranscribeError::internal("transcription queue closed", e))
    }

    /// Whether work that only saves time later (a realtime turn heard ahead of its commit) may
    /// go in line: fewer than half of the places in line are taken, so such work does not take
    /// the places that requests someone waits on need.
    pub fn has_room_for_spare_work(&self) -> bool {
        self.waiting.load(Ordering::SeqCst) < self.max_waiting / 2
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
    async fn spare_work_leaves_half_of_the_places_in_line_to_others() {
        let queue = Arc::new(Queue::new(1, 4));
        let running = queue.acquire().await.ok().unwrap();
        let mut waiters = Vec::new();
        for waiting in 1..=2 {
            assert!(queue.has_room_for_spare_work(), "{} waiting", waiting - 1);
            waiters.push(tokio::spawn({
                let queue = queue.clone();
                async move { queue.acquire().await.map(drop) }
            }));
            while queue.waiting() < waiting {
                tokio::task::yield_now().await;
            }
        }
        assert!(!queue.has_room_for_spare_work(), "2 of 4 places taken");
        drop(running);
        for waiter in waiters {
            assert!(waiter.await.unwrap().is_ok());
        }
        assert!(queue.has_room_for_spare_work());
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

    /// A task waiting for a share of a slot (`at_once` calls), or for a whole one (None).
    fn waiter(
        queue: &Arc<Queue>,
        at_once: Option<usize>,
    ) -> tokio::task::JoinHandle<Result<Slot, TranscribeError>> {
        let queue = queue.clone();
        tokio::spawn(async move {
            match at_once {
                Some(at_once) => queue.acquire_share(at_once).await,
                None => queue.acquire().await,
            }
        })
    }

    async fn until_waiting(queue: &Queue, count: usize) {
        while queue.waiting() < count {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn short_clips_waiting_together_share_a_slot_and_a_whole_one_waits_for_both() {
        let queue = Arc::new(Queue::new(1, 8));
        let running = queue.acquire().await.ok().unwrap();
        let first = waiter(&queue, Some(2));
        until_waiting(&queue, 1).await;
        let second = waiter(&queue, Some(2));
        until_waiting(&queue, 2).await;
        let whole = waiter(&queue, None);
        until_waiting(&queue, 3).await;
        drop(running);
        let first = first.await.unwrap().ok().unwrap();
        let second = second.await.unwrap().ok().unwrap();
        assert_eq!((first.calls_at_once(), second.calls_at_once()), (2, 2));
        assert_eq!(queue.free_slots(), 0);
        drop(first);
        tokio::task::yield_now().await;
        assert!(!whole.is_finished(), "one share still runs");
        drop(second);
        let whole = whole.await.unwrap().ok().unwrap();
        assert_eq!(whole.calls_at_once(), 1);
        drop(whole);
        assert_eq!((queue.free_slots(), queue.waiting()), (1, 0));
    }

    #[tokio::test]
    async fn a_short_clip_alone_has_the_slot_to_itself() {
        let queue = Arc::new(Queue::new(1, 8));
        let alone = queue.acquire_share(2).await.ok().unwrap();
        assert_eq!(alone.calls_at_once(), 1);
        assert_eq!(queue.free_slots(), 0);
        // The slot is not shared out after the fact: the next clip waits for it.
        let next = waiter(&queue, Some(2));
        until_waiting(&queue, 1).await;
        drop(alone);
        assert_eq!(next.await.unwrap().ok().unwrap().calls_at_once(), 1);
        // An engine that hears one call at a time never shares.
        let one = queue.acquire_share(1).await.ok().unwrap();
        let other = waiter(&queue, Some(1));
        let third = waiter(&queue, Some(1));
        until_waiting(&queue, 2).await;
        drop(one);
        let other = other.await.unwrap().ok().unwrap();
        assert_eq!(other.calls_at_once(), 1);
        assert!(!third.is_finished());
    }

    #[tokio::test]
    async fn shares_never_pass_a_whole_slot_waiting_before_them() {
        let queue = Arc::new(Queue::new(1, 8));
        let running = queue.acquire().await.ok().unwrap();
        let first = waiter(&queue, Some(2));
        until_waiting(&queue, 1).await;
        let whole = waiter(&queue, None);
        until_waiting(&queue, 2).await;
        let later = waiter(&queue, Some(2));
        until_waiting(&queue, 3).await;
        drop(running);
        // Another share waits, so the first opens its slot for sharing; the later one may not
        // join it ahead of the whole slot awaited before it.
        let first = first.await.unwrap().ok().unwrap();
        assert_eq!(first.calls_at_once(), 2);
        tokio::task::yield_now().await;
        assert!(!whole.is_finished() && !later.is_finished());
        drop(first);
        let whole = whole.await.unwrap().ok().unwrap();
        tokio::task::yield_now().await;
        assert!(!later.is_finished());
        drop(whole);
        let later = later.await.unwrap().ok().unwrap();
        assert_eq!((later.calls_at_once(), queue.free_slots()), (1, 0));
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
