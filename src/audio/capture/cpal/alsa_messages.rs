//! alsa-lib's own error messages, printed to standard error while devices are probed ("ALSA
//! lib confmisc.c:855:(parse_card) cannot find card '0'" on a machine without a sound card),
//! go to the log at debug level instead (`alsa_messages.c` installs the handler).

use std::ffi::{CStr, c_char, c_int};
use std::sync::Once;

unsafe extern "C" {
    fn verbatim_route_alsa_messages();
}

/// Sends alsa-lib's messages to the log from now on, for the whole process.
pub fn route_to_log() {
    static ONCE: Once = Once::new();
    // SAFETY: installs a process-wide handler; the function takes no arguments.
    ONCE.call_once(|| unsafe { verbatim_route_alsa_messages() });
}

/// Called by the C handler with the formatted message.
#[unsafe(no_mangle)]
extern "C" fn verbatim_alsa_message(
    file: *const c_char,
    line: c_int,
    function: *const c_char,
    err: c_int,
    message: *const c_char,
) {
    let text = |p: *const c_char| {
        if p.is_null() {
            String::new()
        } else {
            // SAFETY: alsa-lib passes NUL-terminated strings that live for the call.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    tracing::debug!(
        "alsa-lib {}:{line} ({}): {}{}",
        text(file),
        text(function),
        text(message),
        if err != 0 {
            format!(" (error {err})")
        } else {
            String::new()
        }
    );
}
