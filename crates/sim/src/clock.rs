//! Time for the simulated devices: the real clock, or a virtual clock that moves only when told
//! to, behind one small trait.

use std::fmt::Debug;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// A monotonic clock measured from its own origin.
pub trait Clock: Send + Sync + Debug {
    /// Time elapsed since the origin.
    fn now(&self) -> Duration;

    /// Blocks until `now() >= deadline`. On a virtual clock this waits for another thread to
    /// advance it.
    fn sleep_until(&self, deadline: Duration);

    /// Blocks for `duration` of this clock's time.
    fn sleep(&self, duration: Duration) {
        self.sleep_until(self.now() + duration);
    }
}

/// Wall-clock time from the moment it was created.
#[derive(Debug, Clone, Copy)]
pub struct RealClock {
    origin: Instant,
}

impl RealClock {
    /// A clock whose origin is now.
    pub fn new() -> Self {
        RealClock {
            origin: Instant::now(),
        }
    }
}

impl Default for RealClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for RealClock {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }

    fn sleep_until(&self, deadline: Duration) {
        let now = self.now();
        if deadline > now {
            std::thread::sleep(deadline - now);
        }
    }
}

/// Time that stands still until [`VirtualClock::advance`] moves it; starts at zero.
#[derive(Debug, Default)]
pub struct VirtualClock {
    state: Mutex<VirtualState>,
    moved: Condvar,
}

#[derive(Debug, Default)]
struct VirtualState {
    now: Duration,
    sleepers: usize,
}

impl VirtualClock {
    /// A clock at time zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves time forward by `by` and wakes every sleeper whose deadline has come.
    pub fn advance(&self, by: Duration) {
        let mut state = self.lock();
        state.now += by;
        self.moved.notify_all();
    }

    /// Moves time forward to `to`; does nothing when `to` is not in the future.
    pub fn advance_to(&self, to: Duration) {
        let mut state = self.lock();
        if to > state.now {
            state.now = to;
            self.moved.notify_all();
        }
    }

    /// Threads blocked in [`Clock::sleep_until`] right now: a test can wait for a device loop to
    /// park before it advances time.
    pub fn sleepers(&self) -> usize {
        self.lock().sleepers
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VirtualState> {
        // The state stays consistent even if a holder panicked: every update is one assignment.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Duration {
        self.lock().now
    }

    fn sleep_until(&self, deadline: Duration) {
        let mut state = self.lock();
        state.sleepers += 1;
        while state.now < deadline {
            state = self.moved.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        state.sleepers -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn virtual_time_moves_only_when_advanced() {
        let clock = VirtualClock::new();
        assert_eq!(clock.now(), Duration::ZERO);
        clock.advance(Duration::from_millis(250));
        clock.advance_to(Duration::from_millis(100));
        assert_eq!(clock.now(), Duration::from_millis(250));
        clock.advance_to(Duration::from_secs(2));
        assert_eq!(clock.now(), Duration::from_secs(2));
    }

    #[test]
    fn a_virtual_sleeper_wakes_when_its_deadline_is_reached() {
        let clock = Arc::new(VirtualClock::new());
        let sleeper = {
            let clock = Arc::clone(&clock);
            std::thread::spawn(move || {
                clock.sleep(Duration::from_secs(5));
                clock.now()
            })
        };
        while clock.sleepers() == 0 {
            std::thread::yield_now();
        }
        clock.advance(Duration::from_secs(3));
        assert_eq!(clock.sleepers(), 1, "3 s is not enough");
        clock.advance(Duration::from_secs(3));
        assert_eq!(sleeper.join().unwrap(), Duration::from_secs(6));
        assert_eq!(clock.sleepers(), 0);
    }

    #[test]
    fn real_clock_sleeps() {
        let clock = RealClock::new();
        clock.sleep(Duration::from_millis(5));
        assert!(clock.now() >= Duration::from_millis(5));
    }
}
