//! Who may connect to the Wyoming listener: loopback always, and the networks of
//! `--wyoming-allow CIDR[,CIDR]` (IPv4 or IPv6, an IPv4 peer seen as IPv4-mapped IPv6 matched
//! as IPv4).

use std::net::IpAddr;

/// One network: an address and how many of its leading bits count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    address: IpAddr,
    prefix: u8,
}

impl Network {
    /// `ADDR/PREFIX`, or `ADDR` alone for that one address.
    pub fn parse(text: &str) -> Result<Network, String> {
        let text = text.trim();
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let address: IpAddr = address.parse().map_err(|_| {
            format!("'{text}' is not a network: give ADDR/PREFIX, e.g. 192.168.1.0/24")
        })?;
        let most = if address.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => most,
            Some(prefix) => prefix
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= most)
                .ok_or_else(|| format!("'{text}': the prefix must be 0 to {most}"))?,
        };
        Ok(Network { address, prefix })
    }

    pub fn contains(&self, peer: IpAddr) -> bool {
        let peer = match peer {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(peer, IpAddr::V4),
            v4 => v4,
        };
        match (self.address, peer) {
            (IpAddr::V4(net), IpAddr::V4(peer)) => {
                same_leading_bits(&net.octets(), &peer.octets(), self.prefix)
            }
            (IpAddr::V6(net), IpAddr::V6(peer)) => {
                same_leading_bits(&net.octets(), &peer.octets(), self.prefix)
            }
            _ => false,
        }
    }
}

fn same_leading_bits(a: &[u8], b: &[u8], bits: u8) -> bool {
    let whole = usize::from(bits / 8);
    let rest = bits % 8;
    a[..whole] == b[..whole]
        && (rest == 0 || {
            let mask = 0xffu8 << (8 - rest);
            a[whole] & mask == b[whole] & mask
        })
}

/// The networks let in beside loopback.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Allowlist(Vec<Network>);

impl Allowlist {
    /// A comma-separated list of networks (empty: loopback only).
    pub fn parse(text: &str) -> Result<Allowlist, String> {
        text.split(',')
            .map(str::trim)
            .filter(|part| !part.is_empty())
            .map(Network::parse)
            .collect::<Result<Vec<_>, _>>()
            .map(Allowlist)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `peer` may connect: loopback, or inside one of the networks.
    pub fn admits(&self, peer: IpAddr) -> bool {
        let loopback = match peer {
            IpAddr::V6(v6) => v6
                .to_ipv4_mapped()
                .map_or(v6.is_loopback(), |v4| v4.is_loopback()),
            IpAddr::V4(v4) => v4.is_loopback(),
        };
        loopback || self.0.iter().any(|network| network.contains(peer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn networks_admit_their_addresses_and_loopback_is_always_in() {
        let allow = Allowlist::parse("192.168.1.0/24, 10.0.0.7, fd00::/8").unwrap();
        for inside in [
            "192.168.1.1",
            "192.168.1.255",
            "10.0.0.7",
            "fd12::1",
            "::ffff:192.168.1.9",
            "127.0.0.1",
            "127.3.4.5",
            "::1",
        ] {
            assert!(allow.admits(ip(inside)), "{inside}");
        }
        for outside in [
            "192.168.2.1",
            "10.0.0.8",
            "fe80::1",
            "8.8.8.8",
            "::ffff:10.0.0.8",
        ] {
            assert!(!allow.admits(ip(outside)), "{outside}");
        }
        let odd = Allowlist::parse("172.16.0.0/12").unwrap();
        assert!(odd.admits(ip("172.31.255.255")));
        assert!(!odd.admits(ip("172.32.0.0")));
        assert!(
            Allowlist::parse("0.0.0.0/0")
                .unwrap()
                .admits(ip("203.0.113.5"))
        );
        assert!(!Allowlist::default().admits(ip("192.168.1.1")));
    }

    #[test]
    fn bad_networks_are_refused_with_the_form_to_use() {
        for bad in [
            "192.168.1.0/33",
            "fd00::/129",
            "host.local/24",
            "192.168.1.0/x",
        ] {
            assert!(Allowlist::parse(bad).is_err(), "{bad}");
        }
        assert!(Allowlist::parse("").unwrap().is_empty());
    }
}
