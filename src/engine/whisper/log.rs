//! whisper.cpp's log lines into `tracing` (target `whisper_rs`, as whisper-rs's own hook logs
//! them, so the server's log filter treats them alike), except the lines whisper.cpp writes when
//! the engine stops a pass on purpose (before a short tail, or because its request was
//! cancelled: "failed to encode"), which are logged at debug level only. A cancelled request is
//! said once, at info level, by the engine (`cancelled`).

use std::borrow::Cow;
use std::cell::Cell;
use std::ffi::{CStr, c_char, c_void};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use whisper_rs::whisper_rs_sys::{
    self, ggml_log_level, ggml_log_level_GGML_LOG_LEVEL_DEBUG, ggml_log_level_GGML_LOG_LEVEL_ERROR,
    ggml_log_level_GGML_LOG_LEVEL_INFO, ggml_log_level_GGML_LOG_LEVEL_WARN,
};

/// What whisper.cpp logs when the callback before an encoder pass declines it.
const PASS_DECLINED: &str = "encoder_begin_callback returned false";

static INSTALL: Once = Once::new();

thread_local! {
    /// The cancel flag of the pass this thread runs in whisper.cpp now; null when none.
    static PASS_CANCEL: Cell<*const AtomicBool> = const { Cell::new(std::ptr::null()) };
}

/// While alive, whisper.cpp's errors on this thread are its pass's own doing once the flag it
/// was made with is set (see [`watching`]).
pub(super) struct Watching<'a>(std::marker::PhantomData<&'a AtomicBool>);

/// Marks the pass this thread starts as cancelled by `flag`: while the returned guard lives, an
/// error whisper.cpp logs here once `flag` is set is the pass stopping as asked, not a failure.
pub(super) fn watching(flag: &AtomicBool) -> Watching<'_> {
    PASS_CANCEL.with(|cancel| cancel.set(flag));
    Watching(std::marker::PhantomData)
}

impl Drop for Watching<'_> {
    fn drop(&mut self) {
        PASS_CANCEL.with(|cancel| cancel.set(std::ptr::null()));
    }
}

/// Whether this thread's pass has been cancelled.
fn pass_cancelled() -> bool {
    let flag = PASS_CANCEL.with(Cell::get);
    // SAFETY: the pointer is set only while a `Watching` borrowing the flag lives on this
    // thread, and cleared when it is dropped.
    !flag.is_null() && unsafe { &*flag }.load(Ordering::SeqCst)
}

/// ggml's log lines through whisper-rs's hook, whisper.cpp's through [`forward`].
pub(super) fn install() {
    INSTALL.call_once(|| {
        whisper_rs::install_logging_hooks();
        // SAFETY: `forward` is a plain function that lives as long as the process.
        unsafe { whisper_rs_sys::whisper_log_set(Some(forward), std::ptr::null_mut()) };
    });
}

unsafe extern "C" fn forward(level: ggml_log_level, text: *const c_char, _: *mut c_void) {
    if text.is_null() {
        return;
    }
    // SAFETY: whisper.cpp passes a NUL-terminated string that lives during the call.
    let text = unsafe { CStr::from_ptr(text) }.to_string_lossy();
    log_line(level, text);
}

fn log_line(level: ggml_log_level, text: Cow<'_, str>) {
    let text = text.trim();
    if text.is_empty() {
        return;
    }
    #[allow(non_upper_case_globals)]
    match level {
        _ if text.contains(PASS_DECLINED) => tracing::debug!(target: "whisper_rs", "{text}"),
        ggml_log_level_GGML_LOG_LEVEL_ERROR if pass_cancelled() => {
            tracing::debug!(target: "whisper_rs", "{text} (the request was cancelled)")
        }
        ggml_log_level_GGML_LOG_LEVEL_ERROR => tracing::error!(target: "whisper_rs", "{text}"),
        ggml_log_level_GGML_LOG_LEVEL_WARN => tracing::warn!(target: "whisper_rs", "{text}"),
        ggml_log_level_GGML_LOG_LEVEL_INFO => tracing::info!(target: "whisper_rs", "{text}"),
        ggml_log_level_GGML_LOG_LEVEL_DEBUG => tracing::debug!(target: "whisper_rs", "{text}"),
        _ => tracing::trace!(target: "whisper_rs", "{text}"),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// What `log_line` writes for one whisper.cpp line, as the server's log would show it.
    fn logged(level: ggml_log_level, text: &str) -> String {
        let written = Arc::new(Mutex::new(Vec::new()));
        let sink = written.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .without_time()
            .with_writer(move || Sink(sink.clone()))
            .finish();
        tracing::subscriber::with_default(subscriber, || log_line(level, text.into()));
        String::from_utf8(written.lock().unwrap().clone()).unwrap()
    }

    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Sink {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn whisper_cpp_lines_keep_their_level_under_whisper_rs() {
        let error = logged(ggml_log_level_GGML_LOG_LEVEL_ERROR, "failed to encode\n");
        assert_eq!(error, "ERROR whisper_rs: failed to encode\n");
        let warning = logged(ggml_log_level_GGML_LOG_LEVEL_WARN, "no GPU found");
        assert_eq!(warning, " WARN whisper_rs: no GPU found\n");
        let info = logged(ggml_log_level_GGML_LOG_LEVEL_INFO, "loading model");
        assert_eq!(info, " INFO whisper_rs: loading model\n");
        assert_eq!(logged(ggml_log_level_GGML_LOG_LEVEL_INFO, " \n"), "");
    }

    #[test]
    fn a_cancelled_pass_fails_at_debug_level_only() {
        static CANCELLED: AtomicBool = AtomicBool::new(false);
        let watch = watching(&CANCELLED);
        let line = "whisper_full_with_state: failed to encode\n";
        assert!(logged(ggml_log_level_GGML_LOG_LEVEL_ERROR, line).starts_with("ERROR"));
        CANCELLED.store(true, Ordering::SeqCst);
        let cancelled = logged(ggml_log_level_GGML_LOG_LEVEL_ERROR, line);
        assert!(cancelled.starts_with("DEBUG whisper_rs:"), "{cancelled:?}");
        drop(watch);
        assert!(logged(ggml_log_level_GGML_LOG_LEVEL_ERROR, line).starts_with("ERROR"));
    }

    #[test]
    fn a_pass_the_engine_declined_is_logged_at_debug_level_only() {
        let line = format!("whisper_full_with_state: {PASS_DECLINED}, aborting\n");
        let declined = logged(ggml_log_level_GGML_LOG_LEVEL_ERROR, &line);
        assert!(declined.starts_with("DEBUG whisper_rs:"), "{declined:?}");
        assert!(declined.contains(PASS_DECLINED), "{declined:?}");
    }
}
