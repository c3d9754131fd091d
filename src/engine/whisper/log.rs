//! whisper.cpp's log lines into `tracing` (target `whisper_rs`, as whisper-rs's own hook logs
//! them, so the server's log filter treats them alike), except the line whisper.cpp writes when
//! the engine stops a pass before a short tail on purpose, which is logged at debug level only.

use std::borrow::Cow;
use std::ffi::{CStr, c_char, c_void};
use std::sync::Once;

use whisper_rs::whisper_rs_sys::{
    self, ggml_log_level, ggml_log_level_GGML_LOG_LEVEL_DEBUG, ggml_log_level_GGML_LOG_LEVEL_ERROR,
    ggml_log_level_GGML_LOG_LEVEL_INFO, ggml_log_level_GGML_LOG_LEVEL_WARN,
};

/// What whisper.cpp logs when the callback before an encoder pass declines it.
const PASS_DECLINED: &str = "encoder_begin_callback returned false";

static INSTALL: Once = Once::new();

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
        ggml_log_level_GGML_LOG_LEVEL_ERROR => tracing::error!(target: "whisper_rs", "{text}"),
        ggml_log_level_GGML_LOG_LEVEL_WARN => tracing::warn!(target: "whisper_rs", "{text}"),
        ggml_log_level_GGML_LOG_LEVEL_INFO => tracing::info!(target: "whisper_rs", "{text}"),
        ggml_log_level_GGML_LOG_LEVEL_DEBUG => tracing::debug!(target: "whisper_rs", "{text}"),
        _ => tracing::trace!(target: "whisper_rs", "{text}"),
    }
}
