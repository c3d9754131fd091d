//! MP3 files, with or without an ID3v2 tag, decoded as uploads; seeded with the fixtures of that container and mutated in
//! their structure half the time (see `verbatim_fuzz`).
#![no_main]

verbatim_fuzz::container_target!(|b| b.starts_with(b"ID3") || b.first() == Some(&0xFF));
