//! Inserting a dictation as it is transcribed (`dictationLiveInsertion`): each committed piece
//! goes, in order, to the inserter on a thread of its own, so a slow insertion tool never holds
//! up the transcription; nothing inserted is ever taken back. The first failure stops the
//! insertions and becomes the session's insertion error.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;

use super::insert::Inserter;

/// The pieces of one dictation on their way to the inserter.
#[derive(Debug)]
pub struct LiveInsertion {
    pieces: Sender<String>,
    thread: JoinHandle<Result<String, String>>,
}

impl LiveInsertion {
    /// Starts inserting with `inserter`.
    pub fn start(inserter: Arc<dyn Inserter>) -> std::io::Result<LiveInsertion> {
        let (pieces, received) = channel();
        let thread = std::thread::Builder::new()
            .name("live-insertion".into())
            .spawn(move || insert_each(inserter.as_ref(), received))?;
        Ok(LiveInsertion { pieces, thread })
    }

    /// Where the pieces go, in order.
    pub fn pieces(&self) -> PieceSender {
        PieceSender {
            pieces: self.pieces.clone(),
            first: true,
        }
    }

    /// Waits until every piece sent is inserted (every [`PieceSender`] must be gone); answers
    /// the text inserted, or the first failure. Blocks.
    pub fn finish(self) -> Result<String, String> {
        drop(self.pieces);
        self.thread
            .join()
            .unwrap_or_else(|_| Err("The text insertion stopped unexpectedly".into()))
    }
}

/// Sends a dictation's committed pieces, a space before each after the first.
pub struct PieceSender {
    pieces: Sender<String>,
    first: bool,
}

impl PieceSender {
    pub fn send(&mut self, piece: &str) {
        let piece = piece.trim();
        if piece.is_empty() {
            return;
        }
        let separator = if self.first { "" } else { " " };
        self.first = false;
        // The insertion thread is gone only after a failure, which it reports itself.
        let _ = self.pieces.send(format!("{separator}{piece}"));
    }
}

fn insert_each(inserter: &dyn Inserter, pieces: Receiver<String>) -> Result<String, String> {
    let mut inserted = String::new();
    for piece in pieces {
        inserter.insert(&piece).map_err(|e| e.to_string())?;
        inserted.push_str(&piece);
    }
    Ok(inserted)
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::super::insert::InsertError;
    use super::*;

    /// Notes every insertion; fails the one whose text is `fail_on`.
    struct Noting {
        seen: Mutex<Vec<String>>,
        fail_on: &'static str,
    }

    impl Inserter for Noting {
        fn name(&self) -> &'static str {
            "noting"
        }
        fn insert(&self, text: &str) -> Result<(), InsertError> {
            if text.trim() == self.fail_on {
                return Err(InsertError::NoDisplay);
            }
            self.seen.lock().unwrap().push(text.to_owned());
            Ok(())
        }
    }

    fn noting(fail_on: &'static str) -> Arc<Noting> {
        Arc::new(Noting {
            seen: Mutex::default(),
            fail_on,
        })
    }

    #[test]
    fn pieces_are_inserted_in_order_each_after_a_space() {
        let inserter = noting("");
        let insertion = LiveInsertion::start(inserter.clone()).unwrap();
        let mut pieces = insertion.pieces();
        for piece in ["The company was founded.", "  ", "Go somewhere. ", "Done."] {
            pieces.send(piece);
        }
        drop(pieces);
        assert_eq!(
            insertion.finish().unwrap(),
            "The company was founded. Go somewhere. Done."
        );
        assert_eq!(
            *inserter.seen.lock().unwrap(),
            ["The company was founded.", " Go somewhere.", " Done."]
        );
    }

    #[test]
    fn the_first_failure_stops_the_insertions_and_is_the_answer() {
        let inserter = noting("broken");
        let insertion = LiveInsertion::start(inserter.clone()).unwrap();
        let mut pieces = insertion.pieces();
        for piece in ["one", "broken", "three"] {
            pieces.send(piece);
        }
        drop(pieces);
        let failed = insertion.finish().unwrap_err();
        assert!(failed.contains("display"), "{failed}");
        assert_eq!(*inserter.seen.lock().unwrap(), ["one"]);
    }
}
