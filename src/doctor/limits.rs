//! The open file limit: the server raises its soft limit to the hard one and serves as many
//! connections at once as that leaves room for (see `server::descriptors`).

use super::Finding;
use crate::server::descriptors::{FULL_CAP_LIMIT, MAX_CONNECTIONS, connection_cap};

const NAME: &str = "open files";

/// The check for an open file limit of (soft, hard), None where it cannot be read.
pub fn open_files(limit: Option<(u64, u64)>) -> Finding {
    let Some((soft, hard)) = limit else {
        return Finding::warn(
            NAME,
            "the open file limit cannot be read",
            "check `ulimit -n` in the shell that starts the server",
        );
    };
    // The server raises the soft limit to the hard one at start.
    let cap = connection_cap(Some(hard));
    if cap >= MAX_CONNECTIONS {
        return Finding::ok(
            NAME,
            format!(
                "limit {soft} (raised to {hard} at start): up to {MAX_CONNECTIONS} connections at once"
            ),
        );
    }
    Finding::warn(
        NAME,
        format!(
            "the hard limit on open files is {hard}: the server serves at most {cap} connections at once instead of {MAX_CONNECTIONS}"
        ),
        format!(
            "raise the limit to at least {FULL_CAP_LIMIT}: `ulimit -n {FULL_CAP_LIMIT}` (as root, or raise `nofile` in /etc/security/limits.conf) before `verbatim serve`, or `LimitNOFILE={FULL_CAP_LIMIT}` in a systemd unit"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::Status;

    #[test]
    fn a_hard_limit_with_room_for_every_connection_is_ok() {
        let check = open_files(Some((1024, 524_288)));
        assert_eq!(check.status, Status::Ok);
        assert!(
            check.detail.contains("raised to 524288"),
            "{}",
            check.detail
        );
    }

    #[test]
    fn a_low_hard_limit_warns_with_the_cap_it_leaves_and_how_to_raise_it() {
        let check = open_files(Some((256, 256)));
        assert_eq!(check.status, Status::Warn);
        assert!(
            check.detail.contains("at most 96 connections"),
            "{}",
            check.detail
        );
        assert!(check.fix.unwrap().contains("ulimit -n 576"));
    }

    #[test]
    fn a_limit_that_cannot_be_read_warns() {
        assert_eq!(open_files(None).status, Status::Warn);
    }
}
