//! Verbatim's integration tests, one module per area, in one test binary (the library and
//! whisper.cpp are linked once). They drive the real binary, the real router, the real engines
//! and devices, or sim mode; `common` holds what they share, `net` the local stand-ins for the
//! network of model downloads. Run one area with `cargo test --test suite <module>::`.

mod common;
mod net;

mod audio_decode;
mod audio_decode_fuzz;
mod audio_formats;
mod backup_api;
mod backup_crash;
mod body_limit_memory;
mod browser_recordings;
mod chunk_workers;
mod cli;
mod cli_desktop;
mod cli_help;
mod cli_hotkeys;
mod cli_personal;
mod cli_sessions;
mod cli_transcribe;
mod conformance;
mod conformance_faults;
mod corpus_drift;
mod crash_consistency;
mod dictation_sim;
mod dictionary_api;
mod discovery;
mod downloads;
mod downloads_tls;
mod early_stop;
mod error_snapshots;
mod history_api;
mod hotkeys;
mod http_error_snapshots;
mod http_fuzz;
mod http_layer;
mod http_security;
mod insertion;
mod loop_guard;
mod moonshine;
mod multilingual;
mod openai_api;
mod ort_format;
mod package;
mod real_capture;
mod real_sessions;
mod realtime;
mod recorder_sim;
mod request_log;
mod rules_api;
mod said_before;
mod server_robustness;
mod session_errors;
mod session_properties;
mod sim_mode;
mod slow_clients;
mod store_contention;
mod streaming;
mod transcribe;
mod transcribe_events;
mod upload_memory;
mod voice_activity;
mod web_page;
mod word_timing;
mod wyoming;
