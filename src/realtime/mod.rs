//! Realtime transcription sessions (OpenAI's Realtime API, transcription intent): a client
//! streams PCM16 audio, turns are cut by voice activity detection or by the client's commits,
//! and each turn is transcribed in order. The WebSocket itself is the API layer's
//! (`api::realtime`); this module holds the session without its socket (`session`), its
//! events' JSON, its configuration, its audio and the transcription of its turns.

pub mod config;
pub mod detection;
pub mod events;
pub mod session;
pub mod transcribe;
pub mod turns;

use std::time::Duration;

/// Sessions served at once; one more is told so (an `error` event) and closed.
pub const MAX_SESSIONS: usize = 32;
/// The largest WebSocket message a client may send (1 MiB: about 16 s of 24 kHz PCM16 in
/// base64).
pub const MAX_MESSAGE_BYTES: usize = 1 << 20;
/// Committed audio that may wait for the engine (2 minutes); a client that sends speech faster
/// than it is transcribed for longer is told and cut.
pub const MAX_BACKLOG_SECONDS: usize = 120;
/// A session whose client sends nothing for this long, with nothing waiting, is closed.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// After the server's close frame, what the client still sends is read and dropped for at most
/// this long, until its own close frame: a socket dropped with unread data is reset, and the
/// client would lose the error event and the close frame sent before it.
pub const CLOSE_DRAIN: Duration = Duration::from_secs(2);
