//! Verbatim: a local speech-to-text service with a versioned HTTP API (`/v1/`) and the `verbatim` CLI.
//!
//! Crate map:
pub mod api; // axum router: one module per resource, the Error object, security middleware
pub mod app; // App: the assembled store, data folder and settings the routes share
pub mod audio; // decoding uploads to 16 kHz mono, resampling
pub mod backup; // settings backups: the document, its validation, export and the merging import
pub mod cancel; // a token blocking work polls, cancelled when a request's future is dropped
pub mod chat; // prompt actions run through an OpenAI-compatible chat provider
pub mod cli; // clap commands, the typed HTTP client, printers and exit codes
/// The conformance kit: the contract's checks run over HTTP against any server (its own crate,
/// which depends on nothing of the server).
pub use verbatim_conformance as conformance;
pub mod dictation; // system-wide dictation: state machine and the service driving it
pub mod discovery; // data folder, discovery file, server lock and API token
pub mod doctor; // `verbatim doctor`: what dictation needs on this machine, each problem with its fix
pub mod engine; // Engine port and adapters, model catalog, models folder, CTranslate2 import
pub mod files; // owner-only folders and atomic private writes
pub mod hotkeys; // global hotkeys: shortcut syntax, slots, X11 grabs and the Wayland portal
pub mod net; // outbound HTTPS: platform trust store, proxies from the environment, redirects
pub mod realtime; // realtime transcription sessions: configuration, turns of streamed audio, their text
pub mod recorder; // the Recorder: state machine and the service driving it
pub mod server; // accept loop on a bound listener: header timeout, graceful shutdown
pub mod service; // the systemd user unit that runs `verbatim serve` in the background
pub mod session; // the session driver dictation and the Recorder share: machine, lock, capture thread
pub mod session_events; // live events of sessions for any number of listeners, bounded per listener
pub mod store; // SQLite: migrations, durable writes, preferences, history, dictionary, workflows
pub mod transcribe; // the transcription path and its text post-processing
pub mod wire; // JSON shapes shared by the server and the client
pub mod wyoming; // the Wyoming protocol server for voice assistants (Home Assistant)
