//! The Wyoming listener the `wyomingAddress` preference asks for: off, served by this
//! server (it answers `describe`), free for the next start, or taken by another program.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use super::Finding;
use crate::wyoming::{Allowlist, SetupError, WyomingSetup};

const NAME: &str = "wyoming";
const TIMEOUT: Duration = Duration::from_secs(2);

/// The finding for the preference's value `address` (`--wyoming` at `serve` is not seen here).
pub fn wyoming(address: &str) -> Finding {
    if address.trim().is_empty() {
        return Finding::ok(
            NAME,
            "off (for Home Assistant: `verbatim config set wyomingAddress 10300`, or `serve --wyoming 10300`)",
        );
    }
    // Any allowlist passes here: whether one is given is `serve`'s flag, checked at start.
    let open = Allowlist::parse("0.0.0.0/0").unwrap_or_default();
    let setup = match WyomingSetup::parse(address, open) {
        Ok(setup) => setup,
        Err(err @ SetupError::Address(_)) | Err(err @ SetupError::NeedsAllowlist(_)) => {
            return Finding::fail(
                NAME,
                err.to_string(),
                "`verbatim config set wyomingAddress 10300` (loopback) or ADDR:PORT",
            );
        }
    };
    let address = probe_address(setup.address);
    let beyond = !setup.address.ip().is_loopback();
    let allow_note = if beyond {
        " (beyond loopback: `serve` needs --wyoming-allow CIDR)"
    } else {
        ""
    };
    match TcpStream::connect_timeout(&address, TIMEOUT) {
        Ok(stream) => match models_described(stream) {
            Some(models) => Finding::ok(
                NAME,
                format!(
                    "tcp://{} is served by Verbatim: {models} model(s) offered{allow_note}",
                    setup.address
                ),
            ),
            None => Finding::fail(
                NAME,
                format!("tcp://{} is taken by another program", setup.address),
                "stop that program or choose another port: `verbatim config set wyomingAddress PORT`",
            ),
        },
        Err(_) => match TcpListener::bind(setup.address) {
            Ok(_) => Finding::ok(
                NAME,
                format!(
                    "tcp://{} is free: the next `verbatim serve` listens there{allow_note}",
                    setup.address
                ),
            ),
            Err(err) => Finding::fail(
                NAME,
                format!("tcp://{} cannot be bound: {err}", setup.address),
                "choose another: `verbatim config set wyomingAddress PORT`",
            ),
        },
    }
}

/// Where to knock for a listener on `bound`: a wildcard address is reached on loopback.
fn probe_address(bound: SocketAddr) -> SocketAddr {
    if bound.ip().is_unspecified() {
        let loopback = if bound.is_ipv4() {
            std::net::Ipv4Addr::LOCALHOST.into()
        } else {
            std::net::Ipv6Addr::LOCALHOST.into()
        };
        SocketAddr::new(loopback, bound.port())
    } else {
        bound
    }
}

/// How many models a Wyoming server on `stream` describes, if it is Verbatim's.
fn models_described(mut stream: TcpStream) -> Option<usize> {
    stream.set_read_timeout(Some(TIMEOUT)).ok()?;
    stream.set_write_timeout(Some(TIMEOUT)).ok()?;
    stream.write_all(b"{\"type\": \"describe\"}\n").ok()?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let header: serde_json::Value = serde_json::from_str(&line).ok()?;
    if header["type"] != "info" {
        return None;
    }
    let length = header["data_length"].as_u64()? as usize;
    if length > crate::wyoming::event::MAX_DATA_BYTES * 16 {
        return None;
    }
    let mut data = vec![0; length];
    std::io::Read::read_exact(&mut reader, &mut data).ok()?;
    let data: serde_json::Value = serde_json::from_slice(&data).ok()?;
    let program = data["asr"].as_array()?.first()?;
    (program["name"] == crate::wyoming::PROGRAM_NAME)
        .then(|| program["models"].as_array().map_or(0, Vec::len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::Status;

    #[test]
    fn off_bad_free_and_taken_addresses_read_as_such() {
        assert_eq!(wyoming("").status, Status::Ok);
        assert!(wyoming("").detail.starts_with("off"));
        let bad = wyoming("host:port");
        assert_eq!(bad.status, Status::Fail, "{bad:?}");
        let free = {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let finding = wyoming(&free.to_string());
        assert_eq!(finding.status, Status::Ok, "{finding:?}");
        assert!(finding.detail.contains("is free"), "{finding:?}");
        // Something that is not Verbatim's Wyoming server: a listener that closes at once.
        let other = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = other.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for stream in other.incoming() {
                drop(stream);
            }
        });
        let finding = wyoming(&format!("127.0.0.1:{port}"));
        assert_eq!(finding.status, Status::Fail, "{finding:?}");
        assert!(finding.detail.contains("another program"), "{finding:?}");
    }
}
