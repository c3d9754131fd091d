//! Cancellation across threads: the async side of a request holds a [`CancelOnDrop`] guard,
//! and work running on a blocking thread checks the [`Cancel`] token between steps, so work
//! stops soon after the client leaves.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A token that blocking work polls; cloning shares it.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// A token that is not cancelled yet.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Asks the work to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// The flag itself, for a C callback that polls it; it lives as long as this token.
    pub fn flag(&self) -> &AtomicBool {
        &self.0
    }

    /// A guard that cancels this token when it is dropped, as a request's future is when
    /// its client disconnects (cancelling work that has already finished is harmless).
    pub fn cancel_on_drop(&self) -> CancelOnDrop {
        CancelOnDrop(self.clone())
    }
}

/// Cancels its token when dropped.
#[derive(Debug)]
pub struct CancelOnDrop(Cancel);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guard_cancels_every_clone_when_dropped() {
        let token = Cancel::new();
        let shared = token.clone();
        let guard = token.cancel_on_drop();
        assert!(!shared.is_cancelled());
        drop(guard);
        assert!(shared.is_cancelled());
    }
}
