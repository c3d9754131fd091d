//! The Wyoming protocol server (`verbatim serve --wyoming [ADDR:]PORT`): speech to text for
//! Home Assistant's voice pipeline and other voice assistants, on the one transcription queue.
//! Loopback unless an address is given; an address beyond loopback needs an allowlist of
//! networks (the protocol has no authentication): other peers are refused at accept and logged,
//! and the listener is announced over mDNS (`_wyoming._tcp`).

mod allow;
pub mod audio;
mod connection;
pub mod event;
mod info;
pub mod mdns;
mod utterance;

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::Semaphore;

pub use allow::{Allowlist, Network};
pub use connection::{EVENT_TIMEOUT, IDLE_TIMEOUT, LIVE_AFTER};

use crate::app::App;
use event::Event;

/// The `asr` program's name in `info`; a `transcribe` naming it asks for the selected model.
pub const PROGRAM_NAME: &str = "verbatim";

/// Connections served at once; more are told so and closed.
pub const MAX_CONNECTIONS: usize = 32;

/// Where to listen and whom to let in.
#[derive(Debug, Clone, PartialEq)]
pub struct WyomingSetup {
    pub address: SocketAddr,
    pub allow: Allowlist,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SetupError {
    #[error(
        "'{0}' is not a Wyoming address: give PORT or ADDR:PORT (for example 10300 or 0.0.0.0:10300)"
    )]
    Address(String),
    #[error(
        "{0} is beyond loopback and the Wyoming protocol has no authentication: name the networks allowed in with --wyoming-allow CIDR[,CIDR] (for example 192.168.1.0/24)"
    )]
    NeedsAllowlist(IpAddr),
}

impl WyomingSetup {
    /// The setup `address` (`PORT`, `ADDR:PORT` or `[V6]:PORT`) and `allow` give.
    pub fn parse(address: &str, allow: Allowlist) -> Result<WyomingSetup, SetupError> {
        let address = address.trim();
        let address = match address.parse::<u16>() {
            Ok(port) => SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port),
            Err(_) => address
                .parse::<SocketAddr>()
                .map_err(|_| SetupError::Address(address.to_string()))?,
        };
        if !address.ip().is_loopback() && allow.is_empty() {
            return Err(SetupError::NeedsAllowlist(address.ip()));
        }
        Ok(WyomingSetup { address, allow })
    }
}

/// Accepts connections on `listener` until `shutdown` completes: peers the allowlist refuses
/// are closed at once and logged, the rest served (at most [`MAX_CONNECTIONS`] at once).
pub async fn serve(
    listener: TcpListener,
    allow: Allowlist,
    app: Arc<App>,
    shutdown: impl Future<Output = ()>,
) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    // Beyond loopback, Home Assistant finds the listener by its mDNS announcement.
    let _announced = listener
        .local_addr()
        .ok()
        .filter(|bound| !bound.ip().is_loopback())
        .and_then(|bound| match mdns::advertise(bound) {
            Ok(advertisement) => {
                tracing::info!("wyoming: announced over mDNS as {}", mdns::SERVICE_TYPE);
                Some(advertisement)
            }
            Err(err) => {
                tracing::warn!("wyoming: could not announce over mDNS: {err}");
                None
            }
        });
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(err) => {
                    tracing::warn!("wyoming: accept failed: {err}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => return,
        };
        if !allow.admits(peer.ip()) {
            tracing::warn!("wyoming: refused a connection from {peer}: not in --wyoming-allow");
            drop(stream);
            continue;
        }
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            tokio::spawn(refuse_busy(stream));
            continue;
        };
        let app = app.clone();
        tokio::spawn(async move {
            connection::serve(app, stream).await;
            drop(slot);
        });
    }
}

/// Tells a client over the connection limit why it is closed.
async fn refuse_busy(mut stream: tokio::net::TcpStream) {
    let error = Event::new(
        "error",
        serde_json::json!({
            "text": format!("Too many Wyoming connections (at most {MAX_CONNECTIONS}); try again later"),
            "code": "service_unavailable",
        }),
    );
    let _ = tokio::time::timeout(
        connection::WRITE_TIMEOUT,
        event::write_event(&mut stream, &error),
    )
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_default_to_loopback_and_beyond_it_need_an_allowlist() {
        let none = Allowlist::default();
        assert_eq!(
            WyomingSetup::parse("10300", none.clone()).unwrap().address,
            "127.0.0.1:10300".parse().unwrap()
        );
        assert_eq!(
            WyomingSetup::parse("[::1]:10300", none.clone())
                .unwrap()
                .address,
            "[::1]:10300".parse().unwrap()
        );
        assert_eq!(
            WyomingSetup::parse("0.0.0.0:10300", none.clone()),
            Err(SetupError::NeedsAllowlist("0.0.0.0".parse().unwrap()))
        );
        assert!(matches!(
            WyomingSetup::parse("localhost:x", none),
            Err(SetupError::Address(_))
        ));
        let lan = Allowlist::parse("192.168.1.0/24").unwrap();
        assert!(WyomingSetup::parse("0.0.0.0:10300", lan).is_ok());
    }
}
