//! The open file limit and the connection cap it allows. Every connection holds a socket, and
//! a request may hold a spooled body and the file its audio is decoded from; the server's own
//! files (database and its journal, lock, log, listener, model files, sound devices) need room
//! too. At start the soft limit is raised to the hard limit; the cap is then what fits in that
//! limit after [`RESERVED_DESCRIPTORS`], at [`DESCRIPTORS_PER_CONNECTION`] each, never more than
//! [`MAX_CONNECTIONS`] nor fewer than [`MIN_CONNECTIONS`].

/// The most connections served at once, whatever the limit.
pub const MAX_CONNECTIONS: usize = 256;

/// The fewest connections served at once, however low the limit.
pub const MIN_CONNECTIONS: usize = 8;

/// Descriptors left for the server's own files. An idle server holds about 15; loading a
/// model, opening sound devices and database work under load take more.
pub const RESERVED_DESCRIPTORS: u64 = 64;

/// Descriptors counted for each connection: its socket, and a spooled body or an audio file.
pub const DESCRIPTORS_PER_CONNECTION: u64 = 2;

/// Below this open file limit the connection cap is lower than [`MAX_CONNECTIONS`].
pub const FULL_CAP_LIMIT: u64 =
    RESERVED_DESCRIPTORS + DESCRIPTORS_PER_CONNECTION * MAX_CONNECTIONS as u64;

/// The open file limit: (soft, hard); None where it cannot be read.
pub fn open_file_limit() -> Option<(u64, u64)> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes into `limit`, which lives for the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        let err = std::io::Error::last_os_error();
        tracing::debug!("cannot read the open file limit: {err}");
        return None;
    }
    Some((limit.rlim_cur, limit.rlim_max))
}

/// Raises the soft limit on open files to the hard limit (the usual soft limit is 1024);
/// returns the soft limit in force afterwards.
pub fn raise_open_file_limit() -> Option<u64> {
    let (soft, hard) = open_file_limit()?;
    if soft >= hard {
        return Some(soft);
    }
    let raised = libc::rlimit {
        rlim_cur: hard,
        rlim_max: hard,
    };
    // SAFETY: setrlimit only reads `raised`, which lives for the call.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
        tracing::debug!("open file limit raised from {soft} to {hard}");
        Some(hard)
    } else {
        let err = std::io::Error::last_os_error();
        tracing::debug!("open file limit stays {soft}: {err}");
        Some(soft)
    }
}

/// The connection cap for an open file limit of `limit` (None: unknown, the full cap).
pub fn connection_cap(limit: Option<u64>) -> usize {
    let Some(limit) = limit else {
        return MAX_CONNECTIONS;
    };
    let room = limit.saturating_sub(RESERVED_DESCRIPTORS) / DESCRIPTORS_PER_CONNECTION;
    usize::try_from(room)
        .unwrap_or(usize::MAX)
        .clamp(MIN_CONNECTIONS, MAX_CONNECTIONS)
}

/// The connection cap under the limit this process has now.
pub fn current_connection_cap() -> usize {
    connection_cap(open_file_limit().map(|(soft, _)| soft))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_leaves_the_reserve_and_two_descriptors_per_connection() {
        assert_eq!(connection_cap(Some(256)), 96);
        assert_eq!(connection_cap(Some(512)), 224);
        assert_eq!(connection_cap(Some(FULL_CAP_LIMIT)), MAX_CONNECTIONS);
        assert_eq!(
            connection_cap(Some(FULL_CAP_LIMIT - 2)),
            MAX_CONNECTIONS - 1
        );
        assert_eq!(connection_cap(Some(1024)), MAX_CONNECTIONS);
        assert_eq!(connection_cap(Some(u64::MAX)), MAX_CONNECTIONS);
        assert_eq!(connection_cap(None), MAX_CONNECTIONS);
    }

    #[test]
    fn a_tiny_limit_still_serves_a_few_connections() {
        assert_eq!(connection_cap(Some(0)), MIN_CONNECTIONS);
        assert_eq!(connection_cap(Some(64)), MIN_CONNECTIONS);
        assert_eq!(connection_cap(Some(90)), 13);
    }
}
