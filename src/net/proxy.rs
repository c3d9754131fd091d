//! Which proxy a request goes through, by the conventions of curl: `https_proxy` for HTTPS
//! addresses, `http_proxy` for plain HTTP ones, `all_proxy` for both when those are unset (each
//! lowercase first, then uppercase), and `no_proxy` naming the hosts reached directly.
//!
//! A `no_proxy` entry matches its host and every subdomain (`example.com` and `.example.com`
//! both cover `cdn.example.com`); `*` alone turns proxies off; IP addresses match exactly or by
//! CIDR range (`10.0.0.0/8`). Entries are separated by commas or spaces, compared without case.

use std::net::IpAddr;

use url::{Host, Url};

/// The proxy settings of an environment.
#[derive(Debug, Clone, Default)]
pub struct ProxyEnv {
    http: Option<String>,
    https: Option<String>,
    all: Option<String>,
    no_proxy: NoProxy,
}

impl ProxyEnv {
    /// The settings of this process's environment.
    pub fn from_env() -> ProxyEnv {
        ProxyEnv::from_lookup(|name| std::env::var(name).ok())
    }

    /// The settings read through `lookup` (a variable's value by name), so that tests need not
    /// change the process environment.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> ProxyEnv {
        let first = |names: &[&str]| {
            names
                .iter()
                .filter_map(|name| lookup(name))
                .map(|value| value.trim().to_string())
                .find(|value| !value.is_empty())
        };
        ProxyEnv {
            http: first(&["http_proxy", "HTTP_PROXY"]),
            https: first(&["https_proxy", "HTTPS_PROXY"]),
            all: first(&["all_proxy", "ALL_PROXY"]),
            no_proxy: NoProxy::parse(&first(&["no_proxy", "NO_PROXY"]).unwrap_or_default()),
        }
    }

    /// No proxy at all.
    pub fn none() -> ProxyEnv {
        ProxyEnv::default()
    }

    /// The proxy address for a request to `url`, None to connect directly. A proxy given
    /// without a scheme (`proxy.corp:3128`) is an HTTP proxy, as curl reads it.
    pub fn proxy_for(&self, url: &Url) -> Option<String> {
        let chosen = match url.scheme() {
            "https" => self.https.as_ref(),
            "http" => self.http.as_ref(),
            _ => None,
        }
        .or(self.all.as_ref())?;
        if url.host().is_some_and(|host| self.no_proxy.matches(&host)) {
            return None;
        }
        Some(if chosen.contains("://") {
            chosen.clone()
        } else {
            format!("http://{chosen}")
        })
    }
}

/// The hosts that are reached without a proxy.
#[derive(Debug, Clone, Default)]
struct NoProxy {
    everything: bool,
    domains: Vec<String>,
    networks: Vec<(IpAddr, u8)>,
}

impl NoProxy {
    fn parse(list: &str) -> NoProxy {
        let mut parsed = NoProxy::default();
        for entry in list.split([',', ' ', '\t']).map(str::trim) {
            if entry.is_empty() {
                continue;
            }
            if entry == "*" {
                parsed.everything = true;
            } else if let Some(network) = parse_network(entry) {
                parsed.networks.push(network);
            } else {
                let domain = entry
                    .trim_start_matches("*.")
                    .trim_start_matches('.')
                    .trim_end_matches('.')
                    .to_ascii_lowercase();
                if !domain.is_empty() {
                    parsed.domains.push(domain);
                }
            }
        }
        parsed
    }

    fn matches(&self, host: &Host<&str>) -> bool {
        if self.everything {
            return true;
        }
        match host {
            Host::Domain(name) => {
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                self.domains.iter().any(|domain| {
                    name == *domain
                        || name
                            .strip_suffix(domain.as_str())
                            .is_some_and(|rest| rest.ends_with('.'))
                })
            }
            Host::Ipv4(ip) => self.covers(IpAddr::V4(*ip)),
            Host::Ipv6(ip) => self.covers(IpAddr::V6(*ip)),
        }
    }

    fn covers(&self, ip: IpAddr) -> bool {
        self.networks
            .iter()
            .any(|(network, prefix)| in_network(ip, *network, *prefix))
    }
}

/// `10.0.0.1`, `::1`, `[::1]`, `192.168.0.0/16` or `fd00::/8` as an address and prefix length.
fn parse_network(entry: &str) -> Option<(IpAddr, u8)> {
    let (address, prefix) = match entry.split_once('/') {
        Some((address, prefix)) => (address, Some(prefix.parse::<u8>().ok()?)),
        None => (entry, None),
    };
    let address = address.trim_start_matches('[').trim_end_matches(']');
    let ip: IpAddr = address.parse().ok()?;
    let full = if ip.is_ipv4() { 32 } else { 128 };
    let prefix = prefix.unwrap_or(full);
    (prefix <= full).then_some((ip, prefix))
}

fn in_network(ip: IpAddr, network: IpAddr, prefix: u8) -> bool {
    let (ip, network, width) = match (ip, network) {
        (IpAddr::V4(a), IpAddr::V4(b)) => (u32::from(a) as u128, u32::from(b) as u128, 32),
        (IpAddr::V6(a), IpAddr::V6(b)) => (u128::from(a), u128::from(b), 128),
        _ => return false,
    };
    let shift = width - u32::from(prefix);
    shift >= width || (ip >> shift) == (network >> shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> ProxyEnv {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ProxyEnv::from_lookup(move |name| {
            pairs
                .iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.clone())
        })
    }

    fn proxy(env: &ProxyEnv, url: &str) -> Option<String> {
        env.proxy_for(&Url::parse(url).unwrap())
    }

    #[test]
    fn the_proxy_follows_the_scheme_lowercase_first_then_all_proxy() {
        let e = env(&[
            ("HTTPS_PROXY", "http://upper:1"),
            ("https_proxy", "http://lower:2"),
            ("HTTP_PROXY", "plain:3"),
        ]);
        assert_eq!(proxy(&e, "https://h/x").as_deref(), Some("http://lower:2"));
        assert_eq!(proxy(&e, "http://h/x").as_deref(), Some("http://plain:3"));
        let e = env(&[("ALL_PROXY", "socks5://s:1080"), ("https_proxy", " ")]);
        assert_eq!(
            proxy(&e, "https://h/x").as_deref(),
            Some("socks5://s:1080"),
            "an empty variable counts as unset"
        );
        assert_eq!(proxy(&env(&[]), "https://h/x"), None);
        assert_eq!(proxy(&env(&[("http_proxy", "p:1")]), "https://h/x"), None);
    }

    #[test]
    fn no_proxy_matches_hosts_and_their_subdomains() {
        let e = env(&[
            ("https_proxy", "p:1"),
            ("NO_PROXY", "example.com, .internal,*.corp.test  Mirror.LAN"),
        ]);
        for direct in [
            "https://example.com/a",
            "https://cdn.example.com/a",
            "https://a.b.internal/x",
            "https://internal/x",
            "https://x.corp.test/",
            "https://mirror.lan./m",
        ] {
            assert_eq!(proxy(&e, direct), None, "{direct}");
        }
        for proxied in [
            "https://notexample.com/a",
            "https://example.com.evil/a",
            "https://lan/x",
        ] {
            assert!(proxy(&e, proxied).is_some(), "{proxied}");
        }
        let lower_first = env(&[("https_proxy", "p:1"), ("no_proxy", "a"), ("NO_PROXY", "b")]);
        assert_eq!(proxy(&lower_first, "https://a/"), None);
        assert!(proxy(&lower_first, "https://b/").is_some());
        assert_eq!(
            proxy(
                &env(&[("all_proxy", "p:1"), ("no_proxy", "*")]),
                "https://x/"
            ),
            None
        );
    }

    #[test]
    fn no_proxy_matches_addresses_exactly_or_by_range() {
        let e = env(&[
            ("all_proxy", "p:1"),
            ("no_proxy", "127.0.0.1,10.0.0.0/8,[::1],fd00::/8"),
        ]);
        for direct in [
            "http://127.0.0.1:8080/",
            "http://10.200.3.4/",
            "http://[::1]:9/",
            "http://[fd12::1]/",
        ] {
            assert_eq!(proxy(&e, direct), None, "{direct}");
        }
        for proxied in ["http://127.0.0.2/", "http://11.0.0.1/", "http://[fe80::1]/"] {
            assert!(proxy(&e, proxied).is_some(), "{proxied}");
        }
    }
}
