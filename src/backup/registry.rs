//! The plugin registry a settings import installs plugins from: `GET {url}/plugins/{id}/{version}`
//! answers the plugin's metadata as JSON, 404 when the registry does not offer it. Fetched over
//! HTTPS like model downloads ([`crate::net`]): platform trust store, proxies, redirects.

use std::io::Read;
use std::time::Duration;

use serde::Deserialize;
use url::Url;

use crate::net::{HttpClient, Timeouts};
use crate::store::Plugin;

/// The registry could not be asked (connection refused, timeout, server error...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryUnreachable(pub String);

/// Where plugin metadata comes from.
pub trait PluginSource: Send + Sync {
    /// The plugin `id` at `version`; None when the registry does not offer it.
    fn fetch(&self, id: &str, version: &str) -> Result<Option<Plugin>, RegistryUnreachable>;
}

/// A registry over HTTP at a base URL (the `pluginRegistryUrl` preference).
pub struct HttpRegistry {
    base: String,
    http: HttpClient,
}

/// The registry's answer for one plugin version.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Metadata {
    id: String,
    version: String,
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    download_url: Option<String>,
    #[serde(default)]
    sha256: Option<String>,
}

/// The most of a registry answer that is read.
const MAX_METADATA_BYTES: u64 = 1024 * 1024;

/// How long registry requests may take (one request: 10 s in all).
const TIMEOUTS: Timeouts = Timeouts {
    connect: Duration::from_secs(5),
    read: Duration::from_secs(10),
    total: Some(Duration::from_secs(10)),
};

impl HttpRegistry {
    /// A registry at `base_url`; None when the URL is empty (no registry configured).
    pub fn new(base_url: &str) -> Option<HttpRegistry> {
        let base = base_url.trim().trim_end_matches('/');
        if base.is_empty() {
            return None;
        }
        Some(HttpRegistry {
            base: base.to_string(),
            http: HttpClient::new(TIMEOUTS),
        })
    }
}

impl PluginSource for HttpRegistry {
    fn fetch(&self, id: &str, version: &str) -> Result<Option<Plugin>, RegistryUnreachable> {
        // Ids and versions were checked when the document was read: no URL syntax in them.
        let address = format!("{}/plugins/{id}/{version}", self.base);
        let url = Url::parse(&address)
            .map_err(|err| RegistryUnreachable(format!("{address} is not a valid URL ({err})")))?;
        let fetched = self
            .http
            .get(&url, &[("Accept", "application/json")])
            .map_err(|err| RegistryUnreachable(err.to_string()))?;
        let status = fetched.response.status().as_u16();
        match status {
            200..=299 => {}
            400..=499 => {
                tracing::info!("plugin {id} {version} is not offered by the registry ({status})");
                return Ok(None);
            }
            _ => {
                return Err(RegistryUnreachable(format!(
                    "{address} answered HTTP {status}"
                )));
            }
        }
        let body = fetched
            .response
            .into_body()
            .into_reader()
            .take(MAX_METADATA_BYTES);
        let metadata: Metadata = match serde_json::from_reader(body) {
            Ok(metadata) => metadata,
            Err(err) => {
                tracing::warn!("the registry's answer for plugin {id} {version} is invalid: {err}");
                return Ok(None);
            }
        };
        if metadata.id != id || metadata.version != version {
            tracing::warn!("the registry answered another plugin for {id} {version}");
            return Ok(None);
        }
        Ok(Some(Plugin {
            id: metadata.id,
            version: metadata.version,
            name: metadata.name,
            description: metadata.description,
            download_url: metadata.download_url,
            sha256: metadata.sha256,
            enabled: true,
        }))
    }
}
