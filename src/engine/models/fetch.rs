//! Model downloads from a base URL: streamed to a temporary file in the models folder with
//! progress, checked against the published size and SHA-256, then renamed into place. Any
//! failure removes the temporary file, so no partial model is ever installed.
//!
//! The checksum is taken from, in order: the `X-Linked-Etag` header of the first response
//! (Hugging Face publishes the SHA-256 of LFS files there), an `ETag` that is a SHA-256, or a
//! `<file>.sha256` file beside the model.

use std::fs::File;
use std::io::{Read, Write};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::catalog::ModelSpec;
use super::folder::{ModelDir, hex};

#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    #[error("cannot reach {url}: {cause}")]
    Unreachable { url: String, cause: String },
    #[error("{url} answered HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("the download of {file} broke off after {received} bytes: {cause}")]
    Interrupted {
        file: String,
        received: u64,
        cause: String,
    },
    #[error("{file} is {received} bytes, the server announced {expected}")]
    SizeMismatch {
        file: String,
        expected: u64,
        received: u64,
    },
    #[error("{file} does not match its published SHA-256 (expected {expected}, got {actual})")]
    ChecksumMismatch {
        file: String,
        expected: String,
        actual: String,
    },
    #[error("the server publishes no SHA-256 for {file}; an unverified model is not installed")]
    NoChecksum { file: String },
    #[error("cannot write the model into {dir}: {cause}")]
    Io { dir: String, cause: String },
}

/// Downloads `spec` from `base_url` into `models`; `progress(done, total)` is called as bytes arrive.
pub fn download(
    base_url: &str,
    spec: &ModelSpec,
    models: &ModelDir,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(), DownloadError> {
    let file = spec.file_name();
    let url = format!("{}/{file}", base_url.trim_end_matches('/'));
    let agent = ureq::AgentBuilder::new()
        .timeout_connect(Duration::from_secs(15))
        .timeout_read(Duration::from_secs(60))
        .redirects(0)
        .build();
    let (response, linked_sha) = follow_redirects(&agent, &url)?;
    let announced = response
        .header("content-length")
        .and_then(|v| v.parse::<u64>().ok());
    let expected_sha = linked_sha
        .or_else(|| response.header("etag").and_then(sha_in_etag))
        .map(Ok)
        .unwrap_or_else(|| sidecar_sha(&agent, &url, &file))?;

    let io_err = |e: std::io::Error| DownloadError::Io {
        dir: models.path().display().to_string(),
        cause: e.to_string(),
    };
    let temp = models.temp_path(spec).map_err(io_err)?;
    let result = (|| {
        let mut out = File::create(&temp).map_err(io_err)?;
        let mut reader = response.into_reader();
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 256 * 1024];
        let mut received = 0u64;
        let total = announced.unwrap_or(0);
        progress(0, total);
        loop {
            let n = reader
                .read(&mut buf)
                .map_err(|e| DownloadError::Interrupted {
                    file: file.clone(),
                    received,
                    cause: e.to_string(),
                })?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
            out.write_all(&buf[..n]).map_err(io_err)?;
            received += n as u64;
            progress(received, total.max(received));
        }
        if let Some(expected) = announced
            && expected != received
        {
            return Err(DownloadError::SizeMismatch {
                file: file.clone(),
                expected,
                received,
            });
        }
        let actual = hex(&hasher.finalize());
        if actual != expected_sha {
            return Err(DownloadError::ChecksumMismatch {
                file: file.clone(),
                expected: expected_sha.clone(),
                actual,
            });
        }
        out.sync_all().map_err(io_err)?;
        drop(out);
        models.install(spec, &temp, &actual, &url).map_err(io_err)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// GETs `url`, following up to five redirects by hand so the first response's
/// `X-Linked-Etag` is not lost.
fn follow_redirects(
    agent: &ureq::Agent,
    url: &str,
) -> Result<(ureq::Response, Option<String>), DownloadError> {
    let mut current = url.to_string();
    let mut linked = None;
    for _ in 0..6 {
        let response = match agent.get(&current).call() {
            Ok(r) => r,
            Err(ureq::Error::Status(status, _)) => {
                return Err(DownloadError::Status {
                    url: current,
                    status,
                });
            }
            Err(ureq::Error::Transport(t)) => {
                return Err(DownloadError::Unreachable {
                    url: current,
                    cause: t.to_string(),
                });
            }
        };
        if linked.is_none() {
            linked = response.header("x-linked-etag").and_then(sha_in_etag);
        }
        if (300..400).contains(&response.status())
            && let Some(location) = response.header("location")
        {
            current = resolve_location(&current, location);
            continue;
        }
        return Ok((response, linked));
    }
    Err(DownloadError::Unreachable {
        url: url.into(),
        cause: "too many redirects".into(),
    })
}

fn resolve_location(base: &str, location: &str) -> String {
    if location.starts_with("http://") || location.starts_with("https://") {
        return location.into();
    }
    let origin_end = base
        .find("://")
        .and_then(|i| base[i + 3..].find('/').map(|j| i + 3 + j))
        .unwrap_or(base.len());
    format!("{}{}", &base[..origin_end], location)
}

/// A SHA-256 in an ETag value (quoted, possibly weak).
fn sha_in_etag(value: &str) -> Option<String> {
    let trimmed = value.trim().trim_start_matches("W/").trim_matches('"');
    (trimmed.len() == 64 && trimmed.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| trimmed.to_ascii_lowercase())
}

fn sidecar_sha(agent: &ureq::Agent, url: &str, file: &str) -> Result<String, DownloadError> {
    let no_checksum = || DownloadError::NoChecksum { file: file.into() };
    let text = agent
        .get(&format!("{url}.sha256"))
        .call()
        .map_err(|_| no_checksum())?
        .into_string()
        .map_err(|_| no_checksum())?;
    text.split_whitespace()
        .next()
        .and_then(sha_in_etag)
        .ok_or_else(no_checksum)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn relative_redirects_resolve_against_the_origin() {
        assert_eq!(
            resolve_location("http://127.0.0.1:9/a/b.bin", "/cdn/b.bin"),
            "http://127.0.0.1:9/cdn/b.bin"
        );
        assert_eq!(resolve_location("http://x/a", "https://y/b"), "https://y/b");
    }
}
