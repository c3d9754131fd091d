//! What the robustness tests read off a running server, and the generator that drives them.

use std::time::{SystemTime, UNIX_EPOCH};

/// Peak resident memory of process `pid`, in KiB (`VmHWM` in `/proc/<pid>/status`).
pub fn peak_memory_kib(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/<pid>/status")
}

/// CPU time process `pid` has used, in clock ticks (user and system, from `/proc/<pid>/stat`).
pub fn cpu_ticks(pid: i32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// A small xorshift generator.
pub struct Random(pub u64);

impl Random {
    /// Seeded from the clock; the seed is printed so a failing run can be repeated.
    pub fn from_clock() -> Random {
        let seed = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
            | 1;
        println!("seed {seed}");
        Random(seed)
    }

    /// A number in `0..bound` (0 when `bound` is 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound.max(1)
    }
}
