//! Model downloads from a base URL (`<base>/ggml-<id>.bin`) into the models folder: over HTTPS
//! with the platform's trust store and the environment's proxies ([`crate::net`]), streamed into
//! the model's part file with progress, resumed with a `Range` request when the connection
//! breaks (within one call, and by the next call), checked against the expected size and
//! SHA-256 ([`Expected`]), then renamed into place. A file that fails its check is deleted:
//! nothing unverified is ever installed.

use std::io::Read;
use std::time::Duration;

use sha2::Digest;
use url::Url;

use super::catalog::ModelSpec;
use super::expected::{Expected, published_sha256};
use super::folder::{ModelDir, hex};
use super::partial::{Origin, Partial};
use super::space::free_bytes;
use crate::net::{HttpClient, NetError, Timeouts, header};

/// A stalled transfer fails after a minute without a byte; a slow one may take any time.
pub const TIMEOUTS: Timeouts = Timeouts {
    connect: Duration::from_secs(15),
    read: Duration::from_secs(60),
    total: None,
};

/// Connections one call opens for a file at most, each resuming where the last broke off.
const ATTEMPTS: u32 = 5;

#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    #[error("the model address {url} is not a valid URL ({cause})")]
    BadUrl { url: String, cause: String },
    #[error(transparent)]
    Network(#[from] NetError),
    #[error("{url} answered HTTP {status}")]
    Status { url: String, status: u16 },
    #[error(
        "the download of {file} broke off after {received} bytes: {cause} (run it again to resume)"
    )]
    Interrupted {
        file: String,
        received: u64,
        cause: String,
    },
    #[error("{file} is {received} bytes, {expected} were expected; nothing was installed")]
    SizeMismatch {
        file: String,
        expected: u64,
        received: u64,
    },
    #[error(
        "{file} does not match its {origin} SHA-256 (expected {expected}, got {actual}); \
         nothing was installed"
    )]
    ChecksumMismatch {
        file: String,
        origin: &'static str,
        expected: String,
        actual: String,
    },
    #[error("the server publishes no SHA-256 for {file}; an unverified model is not installed")]
    NoChecksum { file: String },
    #[error("not enough free space in {dir} for {file}: {needed} bytes needed, {free} bytes free")]
    NoSpace {
        dir: String,
        file: String,
        needed: u64,
        free: u64,
    },
    #[error("another download of {file} is already running")]
    Busy { file: String },
    #[error("cannot write the model into {dir}: {cause}")]
    Io { dir: String, cause: String },
    #[error("this build of Verbatim has no {0} engine to run the model")]
    NotInBuild(&'static str),
    #[error("{model} cannot run on this machine: {why}; nothing was downloaded")]
    Unavailable { model: &'static str, why: String },
}

/// Downloads `spec` from `base_url` into `models`, checked against its catalog pin;
/// `progress(done, total)` is called as bytes arrive.
pub fn download(
    base_url: &str,
    spec: &ModelSpec,
    models: &ModelDir,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(), DownloadError> {
    let client = HttpClient::new(TIMEOUTS);
    download_verified(
        &client,
        base_url,
        spec,
        &Expected::for_model(spec),
        models,
        progress,
    )
}

/// What became of one attempt that did not finish.
enum Next {
    /// Try again: the part file moved on (or was reset) and may be resumed.
    Retry,
    /// Stop; the part file stays for a later resume.
    Keep,
    /// Stop and delete the part file: its bytes are wrong.
    Discard,
}

/// Downloads `spec` through `client`, checked against `expected`.
pub fn download_verified(
    client: &HttpClient,
    base_url: &str,
    spec: &ModelSpec,
    expected: &Expected,
    models: &ModelDir,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(), DownloadError> {
    let file = spec.file_name();
    let address = format!("{}/{file}", base_url.trim().trim_end_matches('/'));
    fetch_verified(
        client,
        &address,
        &file,
        expected,
        models,
        progress,
        |partial, sha256, url| partial.install(models, spec, sha256, url),
    )
}

/// Downloads `address` as `file` (its part file in the models folder) through `client`,
/// checked against `expected`, then hands the verified part file to `finish` with its SHA-256
/// and address.
pub fn fetch_verified(
    client: &HttpClient,
    address: &str,
    file: &str,
    expected: &Expected,
    models: &ModelDir,
    progress: &mut dyn FnMut(u64, u64),
    finish: impl FnOnce(Partial, &str, &str) -> std::io::Result<()>,
) -> Result<(), DownloadError> {
    let file = file.to_string();
    let url = Url::parse(address).map_err(|err| DownloadError::BadUrl {
        url: address.to_string(),
        cause: err.to_string(),
    })?;
    let io_err = |err: std::io::Error| DownloadError::Io {
        dir: models.path().display().to_string(),
        cause: err.to_string(),
    };
    let mut partial = Partial::open(models, &file)
        .map_err(io_err)?
        .ok_or_else(|| DownloadError::Busy { file: file.clone() })?;
    if let Expected::Pinned { sha256, size } = expected {
        if partial.len() > *size || partial.origin().is_some_and(|o| o.sha256 != *sha256) {
            partial.restart().map_err(io_err)?;
        }
        if let Err(err) = ensure_room(models, &file, size - partial.len()) {
            partial.discard_if_empty();
            return Err(err);
        }
    }
    let mut attempt = 1;
    loop {
        let mut transfer = Transfer {
            client,
            url: &url,
            file: &file,
            expected,
            models,
            partial: &mut partial,
        };
        match transfer.run(progress) {
            Ok(sha256) => return finish(partial, &sha256, url.as_str()).map_err(io_err),
            Err((err, Next::Retry)) if attempt < ATTEMPTS => {
                tracing::info!("{err}; resuming (attempt {})", attempt + 1);
                std::thread::sleep(Duration::from_millis(200 * u64::from(attempt)));
                attempt += 1;
            }
            Err((err, Next::Discard)) => {
                partial.discard();
                return Err(err);
            }
            Err((err, _)) => {
                partial.discard_if_empty();
                return Err(err);
            }
        }
    }
}

/// Fails unless `needed` more bytes fit into the models folder.
fn ensure_room(models: &ModelDir, file: &str, needed: u64) -> Result<(), DownloadError> {
    let free = free_bytes(models.path()).map_err(|err| DownloadError::Io {
        dir: models.path().display().to_string(),
        cause: err.to_string(),
    })?;
    if free < needed {
        return Err(DownloadError::NoSpace {
            dir: models.path().display().to_string(),
            file: file.into(),
            needed,
            free,
        });
    }
    Ok(())
}

/// One connection's worth of a download.
struct Transfer<'a> {
    client: &'a HttpClient,
    url: &'a Url,
    file: &'a str,
    expected: &'a Expected,
    models: &'a ModelDir,
    partial: &'a mut Partial,
}

type Failure = (DownloadError, Next);

impl Transfer<'_> {
    fn io(&self, err: std::io::Error) -> Failure {
        let dir = self.models.path().display().to_string();
        let cause = err.to_string();
        (DownloadError::Io { dir, cause }, Next::Keep)
    }

    /// Asks for the rest of the file and appends it; the SHA-256 of the whole file when done.
    fn run(&mut self, progress: &mut dyn FnMut(u64, u64)) -> Result<String, Failure> {
        let validator = self.partial.origin().and_then(|o| o.validator.clone());
        if !self.partial.is_empty() && validator.is_none() {
            self.partial.restart().map_err(|e| self.io(e))?;
        }
        let offset = self.partial.len();
        let range = format!("bytes={offset}-");
        let headers: Vec<(&str, &str)> = match (&validator, offset) {
            (Some(validator), 1..) => vec![("Range", &range), ("If-Range", validator)],
            _ => Vec::new(),
        };
        let fetched = self
            .client
            .get(self.url, &headers)
            .map_err(|err| (err.into(), Next::Keep))?;
        let status = fetched.response.status().as_u16();
        let answer_headers = fetched.response.headers().clone();
        let total = match status {
            206 => match content_range(&answer_headers) {
                Some((start, total)) if start == offset => total,
                _ => return self.reset("an unexpected range"),
            },
            200 => {
                if offset > 0 {
                    // The file changed, or the server ignores ranges: start over.
                    self.partial.restart().map_err(|e| self.io(e))?;
                }
                header(&answer_headers, "content-length").and_then(|v| v.parse().ok())
            }
            416 => return self.reset("HTTP 416"),
            _ => {
                let next = if status >= 500 {
                    Next::Keep
                } else {
                    Next::Discard
                };
                let url = fetched.url.to_string();
                return Err((DownloadError::Status { url, status }, next));
            }
        };
        let (expected_sha, total) = match self.expected {
            Expected::Pinned { sha256, size } => {
                if let Some(announced) = total.filter(|announced| announced != size) {
                    let file = self.file.to_string();
                    let err = DownloadError::SizeMismatch {
                        file,
                        expected: *size,
                        received: announced,
                    };
                    return Err((err, Next::Discard));
                }
                (sha256.clone(), Some(*size))
            }
            Expected::Published => {
                let file = self.file.to_string();
                let sha = published_sha256(self.client, &fetched, self.url)
                    .ok_or((DownloadError::NoChecksum { file }, Next::Discard))?;
                if let Some(total) = total {
                    ensure_room(
                        self.models,
                        self.file,
                        total.saturating_sub(self.partial.len()),
                    )
                    .map_err(|err| (err, Next::Keep))?;
                }
                (sha, total)
            }
        };
        if self
            .partial
            .origin()
            .is_some_and(|o| o.sha256 != expected_sha)
        {
            return self.reset("a file with another digest");
        }
        let validator = header(&answer_headers, "etag")
            .filter(|etag| !etag.starts_with("W/"))
            .or_else(|| header(&answer_headers, "last-modified"))
            .map(str::to_string);
        let origin = Origin {
            url: self.url.to_string(),
            validator,
            sha256: expected_sha.clone(),
        };
        self.partial.set_origin(origin).map_err(|e| self.io(e))?;
        let mut hasher = self.partial.hash_so_far().map_err(|e| self.io(e))?;
        let mut reader = fetched.response.into_body().into_reader();
        let mut buf = vec![0u8; 256 * 1024];
        let started_at = self.partial.len();
        let shown_total = |done: u64| total.unwrap_or(0).max(done);
        progress(started_at, shown_total(started_at));
        loop {
            let n = match reader.read(&mut buf) {
                Ok(n) => n,
                Err(err) => return Err(self.broke_off(started_at, err.to_string())),
            };
            if n == 0 {
                break;
            }
            let done = self.partial.len() + n as u64;
            if let Some(total) = total.filter(|total| done > *total) {
                let file = self.file.to_string();
                let err = DownloadError::SizeMismatch {
                    file,
                    expected: total,
                    received: done,
                };
                return Err((err, Next::Discard));
            }
            hasher.update(&buf[..n]);
            self.partial.append(&buf[..n]).map_err(|e| self.io(e))?;
            progress(done, shown_total(done));
        }
        if let Some(total) = total.filter(|total| self.partial.len() < *total) {
            let cause = format!(
                "the connection closed {} bytes early",
                total - self.partial.len()
            );
            return Err(self.broke_off(started_at, cause));
        }
        let actual = hex(&hasher.finalize());
        if actual != expected_sha {
            let err = DownloadError::ChecksumMismatch {
                file: self.file.to_string(),
                origin: self.expected.origin(),
                expected: expected_sha,
                actual,
            };
            return Err((err, Next::Discard));
        }
        Ok(actual)
    }

    /// The transfer stopped early: kept for a resume, retried at once if it moved on.
    fn broke_off(&self, started_at: u64, cause: String) -> Failure {
        let _ = self.partial.sync();
        let received = self.partial.len();
        let err = DownloadError::Interrupted {
            file: self.file.to_string(),
            received,
            cause,
        };
        (
            err,
            if received > started_at {
                Next::Retry
            } else {
                Next::Keep
            },
        )
    }

    /// The part file cannot be continued (`why`): empty it and try again from the start.
    fn reset(&mut self, why: &str) -> Result<String, Failure> {
        self.partial.restart().map_err(|e| self.io(e))?;
        let err = DownloadError::Interrupted {
            file: self.file.to_string(),
            received: 0,
            cause: format!("the server answered the resume with {why}"),
        };
        Err((err, Next::Retry))
    }
}

/// `(first byte, total length)` of a `Content-Range: bytes 100-199/200` header.
fn content_range(headers: &ureq::http::HeaderMap) -> Option<(u64, Option<u64>)> {
    let value = header(headers, "content-range")?.trim();
    let (range, total) = value.strip_prefix("bytes ")?.split_once('/')?;
    let (first, _last) = range.split_once('-')?;
    Some((first.trim().parse().ok()?, total.trim().parse().ok()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_ranges_are_read() {
        let mut headers = ureq::http::HeaderMap::new();
        headers.insert("content-range", "bytes 100-199/200".parse().unwrap());
        assert_eq!(content_range(&headers), Some((100, Some(200))));
        headers.insert("content-range", "bytes 5-9/*".parse().unwrap());
        assert_eq!(content_range(&headers), Some((5, None)));
        headers.insert("content-range", "bytes */200".parse().unwrap());
        assert_eq!(content_range(&headers), None);
    }
}
