//! What a downloaded model must match. A catalog model is checked against the SHA-256 and size
//! pinned in the catalog, whatever the server says. Only a model without a pin falls back to a
//! digest its server publishes: the `X-Linked-Etag` of a redirect or of the answer (Hugging Face
//! publishes the SHA-256 of LFS files there), an `ETag` that is a SHA-256, or a `<file>.sha256`
//! file beside it.

use url::Url;

use super::catalog::ModelSpec;
use crate::net::{Fetched, HttpClient, header};

/// The digest a download is verified against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expected {
    /// Known before asking: a catalog pin.
    Pinned { sha256: String, size: u64 },
    /// Whatever the server publishes beside the file (models outside the catalog).
    Published,
}

impl Expected {
    /// The expectation for `spec`: its pin, or the server's digest when it has none.
    pub fn for_model(spec: &ModelSpec) -> Expected {
        if let Some(pinned) = test_pin(spec.id) {
            return pinned;
        }
        match spec.pin() {
            Some(pin) => Expected::Pinned {
                sha256: pin.sha256.to_string(),
                size: pin.size,
            },
            None => Expected::Published,
        }
    }

    /// How the digest is named in errors.
    pub fn origin(&self) -> &'static str {
        match self {
            Expected::Pinned { .. } => "pinned",
            Expected::Published => "published",
        }
    }
}

/// The variable that stands in for catalog pins, in debug builds only (see [`test_pin`]).
pub const TEST_PINS_VAR: &str = "VERBATIM_TEST_PINS";

/// Debug builds only: `VERBATIM_TEST_PINS=<id>=<sha256>:<bytes>[,...]` replaces the pins of the
/// models it names, so end-to-end tests can serve their own weights to the real binary. Release
/// builds never read it.
#[cfg(debug_assertions)]
fn test_pin(id: &str) -> Option<Expected> {
    let list = std::env::var(TEST_PINS_VAR).ok()?;
    let pinned = list.split(',').find_map(|entry| {
        let (entry_id, rest) = entry.trim().split_once('=')?;
        let (sha256, size) = rest.split_once(':')?;
        if entry_id != id {
            return None;
        }
        Some(Expected::Pinned {
            sha256: sha256.to_ascii_lowercase(),
            size: size.parse().ok()?,
        })
    })?;
    tracing::warn!("{TEST_PINS_VAR} replaces the catalog's pin of {id} (debug build)");
    Some(pinned)
}

#[cfg(not(debug_assertions))]
fn test_pin(_id: &str) -> Option<Expected> {
    None
}

/// The SHA-256 the server publishes for the file `fetched` answered with, None if it publishes
/// none. `url` is the address the file was asked for (its sidecar is `<url>.sha256`).
pub fn published_sha256(client: &HttpClient, fetched: &Fetched, url: &Url) -> Option<String> {
    let headers = fetched
        .redirects
        .iter()
        .chain(std::iter::once(fetched.response.headers()));
    let linked = headers
        .clone()
        .find_map(|h| header(h, "x-linked-etag").and_then(sha_in_etag));
    linked
        .or_else(|| header(fetched.response.headers(), "etag").and_then(sha_in_etag))
        .or_else(|| sidecar_sha256(client, url))
}

fn sidecar_sha256(client: &HttpClient, url: &Url) -> Option<String> {
    let sidecar = Url::parse(&format!("{url}.sha256")).ok()?;
    let fetched = client.get(&sidecar, &[]).ok()?;
    if fetched.response.status().as_u16() != 200 {
        return None;
    }
    let mut body = fetched.response.into_body();
    let text = body.with_config().limit(4096).read_to_string().ok()?;
    text.split_whitespace().next().and_then(sha_in_etag)
}

/// A SHA-256 in an ETag value (quoted, possibly weak).
pub fn sha_in_etag(value: &str) -> Option<String> {
    let trimmed = value.trim().trim_start_matches("W/").trim_matches('"');
    (trimmed.len() == 64 && trimmed.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| trimmed.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::models::catalog::whisper_model;

    #[test]
    fn etags_holding_a_sha256_are_recognised() {
        let sha = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(sha_in_etag(&format!("\"{sha}\"")).as_deref(), Some(sha));
        assert_eq!(
            sha_in_etag(&format!("W/\"{}\"", sha.to_uppercase())).as_deref(),
            Some(sha)
        );
        assert_eq!(sha_in_etag("\"abc\""), None);
    }

    #[test]
    fn catalog_models_are_checked_against_their_pin() {
        let spec = whisper_model("base.en").unwrap();
        assert_eq!(
            Expected::for_model(spec),
            Expected::Pinned {
                sha256: "a03779c86df3323075f5e796cb2ce5029f00ec8869eee3fdfb897afe36c6d002".into(),
                size: 147_964_211
            }
        );
        let unpinned = ModelSpec {
            id: "custom-finetune",
            name: "Custom",
            size_description: "1 MB",
            ..spec.clone()
        };
        assert_eq!(Expected::for_model(&unpinned), Expected::Published);
    }
}
