//! AIFF and AIFF-C files, decoded as uploads; seeded with the fixtures of that container and mutated in
//! their structure half the time (see `verbatim_fuzz`).
#![no_main]

verbatim_fuzz::container_target!(|b| b.starts_with(b"FORM"));
