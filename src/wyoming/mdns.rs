//! The Wyoming listener announced over mDNS as `_wyoming._tcp` when it is bound beyond loopback,
//! so that Home Assistant discovers it: on the bound address's interface, or on every interface
//! with its addresses kept up to date when bound to all of them. The announcement lasts as long
//! as the value; dropping it says goodbye.

use std::net::SocketAddr;

use mdns_sd::{IfKind, ServiceDaemon, ServiceInfo};

/// The service type Home Assistant's Wyoming integration browses for.
pub const SERVICE_TYPE: &str = "_wyoming._tcp.local.";

/// A running announcement.
pub struct Advertisement {
    daemon: ServiceDaemon,
    fullname: String,
}

/// Announces the listener bound at `bound` (beyond loopback), as `verbatim-<host>`.
pub fn advertise(bound: SocketAddr) -> Result<Advertisement, String> {
    let daemon = ServiceDaemon::new().map_err(|e| e.to_string())?;
    let host = host_name();
    let instance = format!("verbatim-{host}");
    let host_name = format!("{host}.local.");
    let info = if bound.ip().is_unspecified() {
        ServiceInfo::new(
            SERVICE_TYPE,
            &instance,
            &host_name,
            "",
            bound.port(),
            None::<std::collections::HashMap<String, String>>,
        )
        .map(ServiceInfo::enable_addr_auto)
    } else {
        daemon
            .disable_interface(IfKind::All)
            .and_then(|()| daemon.enable_interface(IfKind::Addr(bound.ip())))
            .map_err(|e| e.to_string())?;
        ServiceInfo::new(
            SERVICE_TYPE,
            &instance,
            &host_name,
            bound.ip(),
            bound.port(),
            None::<std::collections::HashMap<String, String>>,
        )
    }
    .map_err(|e| e.to_string())?;
    let fullname = info.get_fullname().to_string();
    daemon.register(info).map_err(|e| e.to_string())?;
    Ok(Advertisement { daemon, fullname })
}

impl Drop for Advertisement {
    fn drop(&mut self) {
        let _ = self.daemon.unregister(&self.fullname);
        let _ = self.daemon.shutdown();
    }
}

/// This machine's name, letters, digits and hyphens only (an mDNS host label).
fn host_name() -> String {
    let raw = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let label: String = raw
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if label.is_empty() {
        "verbatim".into()
    } else {
        label
    }
}
