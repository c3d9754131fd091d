//! Where a redirect leads: the `Location` value resolved against the address that answered it
//! (RFC 3986 reference resolution, by `url::Url::join`), limited to HTTP and HTTPS and never
//! from HTTPS down to plain HTTP.

use url::Url;

/// The most redirects one request follows.
pub const MAX_REDIRECTS: usize = 10;

/// The address `location` points to from `current`; Err says why it is not followed.
pub fn resolve_redirect(current: &Url, location: &str) -> Result<Url, String> {
    let mut next = current
        .join(location.trim())
        .map_err(|err| format!("it is not a valid address ({err})"))?;
    next.set_fragment(None);
    match next.scheme() {
        "http" | "https" => {}
        other => return Err(format!("{other}: addresses are not followed")),
    }
    if current.scheme() == "https" && next.scheme() == "http" {
        return Err("a redirect from HTTPS to plain HTTP is refused".into());
    }
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(base: &str, location: &str) -> Result<String, String> {
        resolve_redirect(&Url::parse(base).unwrap(), location).map(String::from)
    }

    #[test]
    fn every_form_of_location_resolves_like_a_browser() {
        let base = "https://models.test:8443/repo/resolve/main/ggml-tiny.bin?download=1";
        let cases = [
            ("https://cdn.test/x.bin", "https://cdn.test/x.bin"),
            ("//cdn.test/blobs/1", "https://cdn.test/blobs/1"),
            ("/abs/x.bin", "https://models.test:8443/abs/x.bin"),
            ("x.bin", "https://models.test:8443/repo/resolve/main/x.bin"),
            ("../x.bin", "https://models.test:8443/repo/resolve/x.bin"),
            ("../../../../x", "https://models.test:8443/x"),
            (
                "./sub/x",
                "https://models.test:8443/repo/resolve/main/sub/x",
            ),
            (
                "?part=2",
                "https://models.test:8443/repo/resolve/main/ggml-tiny.bin?part=2",
            ),
            ("  /spaced  ", "https://models.test:8443/spaced"),
            ("/x#frag", "https://models.test:8443/x"),
            ("/with%20space", "https://models.test:8443/with%20space"),
        ];
        for (location, expected) in cases {
            assert_eq!(
                resolve(base, location).as_deref(),
                Ok(expected),
                "{location}"
            );
        }
        assert_eq!(
            resolve("http://a.test/x", "https://b.test/y").as_deref(),
            Ok("https://b.test/y"),
            "an upgrade is followed"
        );
    }

    #[test]
    fn downgrades_and_other_schemes_are_refused() {
        let err = resolve("https://a.test/x", "http://a.test/x").unwrap_err();
        assert!(err.contains("HTTPS to plain HTTP"), "{err}");
        assert!(resolve("https://a.test/x", "file:///etc/passwd").is_err());
        assert!(resolve("http://a.test/x", "ftp://a.test/x").is_err());
        assert!(resolve("http://a.test/x", "http://[::1").is_err());
    }
}
