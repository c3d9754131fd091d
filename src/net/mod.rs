//! Outbound HTTP for model downloads, the plugin registry and the chat provider: TLS by rustls, certificates checked
//! against the platform's trust store (on Linux the system bundle under /etc/ssl, or the
//! `SSL_CERT_FILE` / `SSL_CERT_DIR` the environment names instead), proxies chosen per address by
//! the curl conventions ([`proxy`]), redirects followed by hand up to [`MAX_REDIRECTS`] hops so
//! every hop's headers stay visible and each hop gets its own proxy decision.

mod proxy;
mod redirect;

use std::time::Duration;

use ureq::http::{HeaderMap, Response};
use ureq::tls::{RootCerts, TlsConfig, TlsProvider};
use url::Url;

pub use proxy::ProxyEnv;
pub use redirect::{MAX_REDIRECTS, resolve_redirect};

/// Why a request got no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetError {
    #[error(
        "the certificate of {url} is not trusted ({cause}); a proxy or mirror with its own \
         certificate authority needs that CA in the system's trust store, or SSL_CERT_FILE \
         pointing at a PEM bundle that holds it"
    )]
    Certificate { url: String, cause: String },
    #[error("cannot reach {url} through the proxy {proxy}: {cause}")]
    Proxy {
        url: String,
        proxy: String,
        cause: String,
    },
    #[error("cannot reach {url}: {cause}")]
    Unreachable { url: String, cause: String },
    #[error("{url} did not answer in time")]
    TimedOut { url: String },
    #[error("{url} redirected more than {MAX_REDIRECTS} times")]
    TooManyRedirects { url: String },
    #[error("{url} redirected to {location:?}, which is not followed: {cause}")]
    BadRedirect {
        url: String,
        location: String,
        cause: String,
    },
}

/// How long a client waits.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// To open a connection (TCP, then TLS).
    pub connect: Duration,
    /// For each read: a stalled transfer fails after this long without a byte.
    pub read: Duration,
    /// For a whole request, body included; None for transfers of any length.
    pub total: Option<Duration>,
}

/// A GET that was answered (any status), after redirects.
pub struct Fetched {
    pub response: Response<ureq::Body>,
    /// The address that gave the final answer.
    pub url: Url,
    /// The headers of each redirect on the way, first one first.
    pub redirects: Vec<HeaderMap>,
}

/// An HTTP(S) client; cheap to share by reference.
pub struct HttpClient {
    agent: ureq::Agent,
    proxies: ProxyEnv,
}

impl HttpClient {
    /// A client with the proxies of this process's environment.
    pub fn new(timeouts: Timeouts) -> HttpClient {
        HttpClient::with_proxies(timeouts, ProxyEnv::from_env())
    }

    pub fn with_proxies(timeouts: Timeouts, proxies: ProxyEnv) -> HttpClient {
        let tls = TlsConfig::builder()
            .provider(TlsProvider::Rustls)
            .root_certs(RootCerts::PlatformVerifier)
            .build();
        let agent = ureq::Agent::config_builder()
            .tls_config(tls)
            .proxy(None)
            .max_redirects(0)
            .http_status_as_error(false)
            .timeout_connect(Some(timeouts.connect))
            .timeout_per_read(Some(timeouts.read))
            .timeout_global(timeouts.total)
            .user_agent(concat!("verbatim/", env!("CARGO_PKG_VERSION")))
            .build()
            .new_agent();
        HttpClient { agent, proxies }
    }

    /// GETs `url` with `headers` (sent again on every hop), following redirects.
    pub fn get(&self, url: &Url, headers: &[(&str, &str)]) -> Result<Fetched, NetError> {
        let mut current = url.clone();
        let mut redirects = Vec::new();
        loop {
            let response = self.get_once(&current, headers)?;
            let status = response.status().as_u16();
            let location = response
                .headers()
                .get("location")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            let (Some(location), 300..=399) = (location, status) else {
                return Ok(Fetched {
                    response,
                    url: current,
                    redirects,
                });
            };
            if redirects.len() == MAX_REDIRECTS {
                return Err(NetError::TooManyRedirects {
                    url: url.to_string(),
                });
            }
            let next =
                resolve_redirect(&current, &location).map_err(|cause| NetError::BadRedirect {
                    url: current.to_string(),
                    location: location.clone(),
                    cause,
                })?;
            redirects.push(response.headers().clone());
            current = next;
        }
    }

    /// POSTs `body` (JSON) to `url` with `headers`; a redirect is an answer like any other
    /// (a POST is never sent on to another address).
    pub fn post_json(
        &self,
        url: &Url,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<Response<ureq::Body>, NetError> {
        let (proxy, proxy_address) = self.proxy(url)?;
        let request = self
            .agent
            .post(url.as_str())
            .header("content-type", "application/json");
        with_headers(request, headers, proxy)
            .send(body)
            .map_err(|err| classify(url, proxy_address, err))
    }

    /// The proxy for `url` (and its address, for errors), by the environment's rules.
    fn proxy(&self, url: &Url) -> Result<(Option<ureq::Proxy>, Option<String>), NetError> {
        let proxy_address = self.proxies.proxy_for(url);
        let proxy = match &proxy_address {
            Some(address) => Some(ureq::Proxy::new(address).map_err(|err| NetError::Proxy {
                url: url.to_string(),
                proxy: address.clone(),
                cause: format!("it is not a usable proxy address ({err})"),
            })?),
            None => None,
        };
        Ok((proxy, proxy_address))
    }

    fn get_once(
        &self,
        url: &Url,
        headers: &[(&str, &str)],
    ) -> Result<Response<ureq::Body>, NetError> {
        let (proxy, proxy_address) = self.proxy(url)?;
        with_headers(self.agent.get(url.as_str()), headers, proxy)
            .call()
            .map_err(|err| classify(url, proxy_address, err))
    }
}

/// `request` with `headers` (sent as given) through `proxy`.
fn with_headers<B>(
    mut request: ureq::RequestBuilder<B>,
    headers: &[(&str, &str)],
    proxy: Option<ureq::Proxy>,
) -> ureq::RequestBuilder<B> {
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.config().proxy(proxy).build()
}

/// The NetError for a failed exchange with `url`.
fn classify(url: &Url, proxy: Option<String>, err: ureq::Error) -> NetError {
    let url = url.to_string();
    let cause = err.to_string();
    if is_certificate_error(&err) {
        return NetError::Certificate { url, cause };
    }
    if matches!(err, ureq::Error::Timeout(_)) {
        return NetError::TimedOut { url };
    }
    match proxy {
        Some(proxy) => NetError::Proxy { url, proxy, cause },
        None => NetError::Unreachable { url, cause },
    }
}

fn is_certificate_error(err: &ureq::Error) -> bool {
    match err {
        ureq::Error::Rustls(_) | ureq::Error::Tls(_) => true,
        ureq::Error::Io(io) => {
            let text = io.to_string();
            text.contains("certificate") || text.contains("CA certificates")
        }
        _ => false,
    }
}

/// The value of header `name`, if it is text.
pub fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}
