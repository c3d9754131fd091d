//! Ctrl-C for a command that has something to save first: SIGINT is blocked in the process and
//! waited for on a thread of its own, which runs the command's last words and exits 130 (as a
//! shell reports a command stopped by SIGINT). Blocking the signal, rather than catching it in a
//! handler, lets that code take locks and print as any code does.

/// The exit status of a command stopped by Ctrl-C.
pub const INTERRUPTED: i32 = 130;

/// From now on, Ctrl-C (SIGINT) runs `last_words` and then exits with [`INTERRUPTED`]. Call it
/// before the command starts any thread: threads inherit the blocked signal.
pub fn on_interrupt(last_words: impl FnOnce() + Send + 'static) {
    // SAFETY: the set is initialised by sigemptyset before use, and pthread_sigmask and
    // sigwait only read it (and write `signal`).
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return;
        }
        std::thread::spawn(move || {
            let mut signal = 0;
            if libc::sigwait(&set, &mut signal) == 0 {
                last_words();
                std::process::exit(INTERRUPTED);
            }
        });
    }
}
