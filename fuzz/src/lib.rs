//! What the decoding fuzz targets share: the bytes as a spooled upload, the checks on what
//! decoding returns, and the structure-aware mutator of `tests/suite/common/mutate.rs`.
//!
//! Each container has its own target (`decode_wav`, `decode_caf`, …) so that the time spent on
//! it and the coverage it reached are its own; `scripts/fuzz` seeds each one with the fixtures
//! of its container.

use std::io::{Seek, Write};
use std::os::fd::FromRawFd;

use verbatim::audio::decode::{DecodeError, MAX_DURATION_SECS, TARGET_SAMPLE_RATE, decode_opened};
use verbatim::cancel::Cancel;

#[path = "../../tests/suite/common/mutate.rs"]
#[allow(dead_code)]
pub mod mutate;

/// The bytes as an anonymous in-memory regular file, as an upload is spooled.
pub fn memory_file(bytes: &[u8]) -> std::fs::File {
    // SAFETY: memfd_create takes a C string and flags, and returns a new descriptor or -1.
    let fd = unsafe { libc::memfd_create(c"upload".as_ptr(), libc::MFD_CLOEXEC) };
    assert!(fd >= 0, "memfd_create failed");
    // SAFETY: `fd` was just created and is owned by nothing else.
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    file.write_all(bytes).unwrap();
    file.rewind().unwrap();
    file
}

/// Decodes `bytes` as an upload: it never aborts or hangs; an I/O error (which the server
/// answers with 500) never comes from the content; a success is well-formed audio.
///
/// A panic inside the decoding libraries is caught by the decoder and reported as a corrupt
/// file, as the server does; libFuzzer's panic hook, which aborts on any panic, caught or not,
/// is replaced by a silent one for that. A broken rule here aborts, which libFuzzer records.
pub fn decode_checked(bytes: &[u8]) {
    static QUIET_PANICS: std::sync::Once = std::sync::Once::new();
    QUIET_PANICS.call_once(|| std::panic::set_hook(Box::new(|_| {})));
    let broken = match decode_opened(memory_file(bytes), None, &Cancel::new()) {
        Ok(audio) => {
            let max = MAX_DURATION_SECS as usize * TARGET_SAMPLE_RATE as usize;
            if audio.samples.is_empty() {
                Some("a success with no samples".to_owned())
            } else if audio.samples.len() > max + TARGET_SAMPLE_RATE as usize {
                Some(format!("{} samples, over the limit", audio.samples.len()))
            } else if !audio.samples.iter().all(|s| s.is_finite()) {
                Some("a sample that is not finite".to_owned())
            } else {
                None
            }
        }
        Err(DecodeError::Io(e)) => Some(format!("an I/O error from the file's content: {e}")),
        Err(_) => None,
    };
    if let Some(rule) = broken {
        eprintln!("decode_checked: {rule}");
        std::process::abort();
    }
}

/// One mutation of the `size` bytes in `data` (room for `max_size`): every other time a
/// structural one (a length field, a duplicated or dropped chunk, …), else libFuzzer's own.
pub fn mutate_input(data: &mut [u8], size: usize, max_size: usize, seed: u32) -> usize {
    if seed % 2 == 0 {
        let mut bytes = data[..size].to_vec();
        if mutate::mutate(&mut bytes, u64::from(seed), max_size) && bytes.len() <= max_size {
            data[..bytes.len()].copy_from_slice(&bytes);
            return bytes.len();
        }
    }
    libfuzzer_sys::fuzzer_mutate(data, size, max_size)
}

/// A target for one container: inputs whose first bytes are not that container's are
/// skipped at once (the other targets cover them), the rest decoded and checked.
#[macro_export]
macro_rules! container_target {
    ($starts:expr) => {
        libfuzzer_sys::fuzz_target!(|bytes: &[u8]| {
            let starts: fn(&[u8]) -> bool = $starts;
            if starts(bytes) {
                verbatim_fuzz::decode_checked(bytes);
            }
        });
        libfuzzer_sys::fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
            verbatim_fuzz::mutate_input(data, size, max_size, seed)
        });
    };
}

/// Whether `bytes` start like an MP4 file (a box type at 4..8).
pub fn is_mp4(bytes: &[u8]) -> bool {
    bytes.get(4..8).is_some_and(|kind| kind == b"ftyp" || kind == b"moov" || kind == b"mdat")
}

/// Whether `bytes` start like an EBML (Matroska or WebM) file.
pub fn is_ebml(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1A, 0x45, 0xDF, 0xA3])
}
