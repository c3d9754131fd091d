//! Any bytes, decoded as an uploaded audio file: the decoder never panics, aborts or hangs,
//! never reports the content as an I/O error, and what it returns is well-formed. The
//! `decode_<container>` targets start from one container's fixtures each.
#![no_main]

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| verbatim_fuzz::decode_checked(bytes));
