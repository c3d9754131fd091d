//! Any bytes, decoded as an uploaded audio file: the decoder never panics, aborts or hangs,
//! and what it returns is well-formed.
#![no_main]

use std::io::Write;
use std::os::fd::FromRawFd;

use libfuzzer_sys::fuzz_target;
use verbatim::audio::decode::{MAX_DURATION_SECS, TARGET_SAMPLE_RATE, decode_opened};
use verbatim::cancel::Cancel;

/// The bytes as an anonymous in-memory regular file, as an upload is spooled.
fn memory_file(bytes: &[u8]) -> std::fs::File {
    let fd = unsafe { libc::memfd_create(c"upload".as_ptr(), libc::MFD_CLOEXEC) };
    assert!(fd >= 0, "memfd_create failed");
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    file.write_all(bytes).unwrap();
    file
}

fuzz_target!(|bytes: &[u8]| {
    let file = memory_file(bytes);
    // Decoding reads from the start through its own handle position.
    let file = {
        use std::io::Seek;
        let mut file = file;
        file.rewind().unwrap();
        file
    };
    if let Ok(audio) = decode_opened(file, None, &Cancel::new()) {
        assert!(!audio.samples.is_empty());
        let max = MAX_DURATION_SECS as usize * TARGET_SAMPLE_RATE as usize;
        assert!(audio.samples.len() <= max + TARGET_SAMPLE_RATE as usize);
        assert!(audio.samples.iter().all(|s| s.is_finite()));
    }
});
