//! The real binary fetching over TLS from a local server whose certificate authority was made
//! for the test: `verbatim models download` and `POST /v1/transcribe?await_download=1` with the
//! CA given by `SSL_CERT_FILE` (resuming after a cut), a clear certificate error without it, a
//! tampered file refused against the catalog's pin, `HTTPS_PROXY`, and the plugin registry.
//!
//! Served weights are not the published ones, so tests pin them with `VERBATIM_TEST_PINS`, which
//! only debug builds read; under `cargo test --release` those tests say so and return.

use crate::common;
use crate::net;

use std::path::Path;
use std::process::{Command, Output};

use common::{SpawnedServer, http_json, sample_backup, test_models, verbatim};
use net::{ConnectProxy, FileServer, Route, TestCa, sha256_hex, weights};
use serde_json::{Value, json};

/// Variables of the test's own environment that must not leak into the binary.
const NETWORK_VARS: [&str; 12] = [
    "http_proxy",
    "HTTP_PROXY",
    "https_proxy",
    "HTTPS_PROXY",
    "all_proxy",
    "ALL_PROXY",
    "no_proxy",
    "NO_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "VERBATIM_TEST_PINS",
    "VERBATIM_MODELS_DIR",
];

fn cli(home: &Path) -> Command {
    let mut command = verbatim(home);
    for var in NETWORK_VARS {
        command.env_remove(var);
    }
    command
}

fn run(command: &mut Command) -> Output {
    command.output().unwrap()
}

fn set_base_url(home: &Path, base: &str) {
    let out = run(cli(home).args(["config", "set", "modelDownloadBaseUrl", base]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn pin_of(id: &str, body: &[u8]) -> String {
    format!("{id}={}:{}", sha256_hex(body), body.len())
}

/// The test pins only reach debug builds.
fn pins_are_read() -> bool {
    if !cfg!(debug_assertions) {
        common::note_skip("VERBATIM_TEST_PINS is read by debug builds only");
    }
    cfg!(debug_assertions)
}

/// The names in `home/models`, hidden part files included.
fn model_files(home: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(home.join("models"))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn the_cli_downloads_over_https_with_the_ca_of_ssl_cert_file_and_resumes_after_a_cut() {
    if !pins_are_read() {
        return;
    }
    let ca = TestCa::new();
    let body = weights(4_000_000, 20);
    let route = Route::file(body.clone()).cut_first_at(1_500_000);
    let server = FileServer::start(
        vec![("/repo/ggml-tiny.en.bin", route)],
        Some(ca.server.clone()),
    );
    let home = tempfile::tempdir().unwrap();
    let ca_file = ca.write_pem(home.path());
    set_base_url(home.path(), &format!("{}/repo", server.base()));

    let out = run(cli(home.path())
        .args(["--json", "models", "download", "tiny.en"])
        .env("SSL_CERT_FILE", &ca_file)
        .env("VERBATIM_TEST_PINS", pin_of("tiny.en", &body)));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    let installed = answer["path"].as_str().unwrap();
    // A first model is selected at once.
    assert_eq!(answer["selected"], true, "{answer}");
    assert_eq!(std::fs::read(installed).unwrap(), body);
    assert_eq!(model_files(home.path()), ["tiny.en"]);
    assert!(
        installed.ends_with("/models/tiny.en/ggml-tiny.en.bin"),
        "{installed}"
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(
        seen[1].headers.get("range").map(String::as_str),
        Some("bytes=1500000-"),
        "the second request continued the cut transfer"
    );
}

#[test]
fn without_the_ca_the_certificate_is_refused_and_a_tampered_file_fails_its_pin() {
    let ca = TestCa::new();
    let tampered = weights(300_000, 21);
    let server = FileServer::start(
        vec![("/ggml-tiny.en.bin", Route::file(tampered.clone()))],
        Some(ca.server.clone()),
    );
    let home = tempfile::tempdir().unwrap();
    set_base_url(home.path(), &server.base());

    // The system's trust store does not know the test's CA.
    let out = run(cli(home.path()).args(["models", "download", "tiny.en"]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("is not trusted"), "{stderr}");
    assert!(
        stderr.contains("SSL_CERT_FILE"),
        "says how to add a CA: {stderr}"
    );
    assert!(
        server.seen().is_empty(),
        "no request went over the untrusted connection"
    );

    // Trusted, but the bytes are not the ones the catalog pins for tiny.en.
    let ca_file = ca.write_pem(home.path());
    let out = run(cli(home.path())
        .args(["models", "download", "tiny.en"])
        .env("SSL_CERT_FILE", &ca_file));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    let pinned = "921e4cf8686fdd993dcd081a5da5b6c365bfde1162e72b08d75ac75289920b1f";
    assert!(
        stderr.contains("is 300000 bytes, 77704715 were expected")
            || stderr.contains(&format!("expected {pinned}, got {}", sha256_hex(&tampered))),
        "{stderr}"
    );
    assert!(
        model_files(home.path()).is_empty(),
        "{:?}",
        model_files(home.path())
    );
}

#[test]
fn a_tampered_file_of_the_pinned_size_names_both_digests() {
    if !pins_are_read() {
        return;
    }
    let ca = TestCa::new();
    let genuine = weights(500_000, 22);
    let tampered = weights(500_000, 23);
    let server = FileServer::start(
        vec![("/ggml-tiny.en.bin", Route::file(tampered.clone()))],
        Some(ca.server.clone()),
    );
    let home = tempfile::tempdir().unwrap();
    let ca_file = ca.write_pem(home.path());
    set_base_url(home.path(), &server.base());
    let out = run(cli(home.path())
        .args(["models", "download", "tiny.en"])
        .env("SSL_CERT_FILE", &ca_file)
        .env("VERBATIM_TEST_PINS", pin_of("tiny.en", &genuine)));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    let expected = format!(
        "does not match its pinned SHA-256 (expected {}, got {})",
        sha256_hex(&genuine),
        sha256_hex(&tampered)
    );
    assert!(stderr.contains(&expected), "{stderr}");
    assert!(
        model_files(home.path()).is_empty(),
        "{:?}",
        model_files(home.path())
    );
}

#[test]
fn the_cli_goes_through_the_https_proxy_of_the_environment() {
    if !pins_are_read() {
        return;
    }
    let ca = TestCa::new();
    let body = weights(600_000, 24);
    let server = FileServer::start(
        vec![("/ggml-base.en.bin", Route::file(body.clone()))],
        Some(ca.server.clone()),
    );
    let proxy = ConnectProxy::start();
    let home = tempfile::tempdir().unwrap();
    let ca_file = ca.write_pem(home.path());
    set_base_url(home.path(), &server.base());
    let out = run(cli(home.path())
        .args(["models", "download", "base.en"])
        .env("SSL_CERT_FILE", &ca_file)
        .env("HTTPS_PROXY", proxy.url())
        .env("NO_PROXY", "example.com")
        .env("VERBATIM_TEST_PINS", pin_of("base.en", &body)));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(proxy.tunnels(), [format!("127.0.0.1:{}", server.port)]);
    assert_eq!(model_files(home.path()), ["base.en"]);
}

/// A second of silence as a 16 kHz WAV.
fn silence_wav() -> Vec<u8> {
    let mut cursor = std::io::Cursor::new(Vec::new());
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 16_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut writer = hound::WavWriter::new(&mut cursor, spec).unwrap();
    for _ in 0..16_000 {
        writer.write_sample(0i16).unwrap();
    }
    writer.finalize().unwrap();
    cursor.into_inner()
}

#[test]
fn await_download_fetches_the_model_over_https_resuming_after_a_cut() {
    if !pins_are_read() {
        return;
    }
    // Real weights when the test models are installed (then the request transcribes), else
    // stand-in bytes: the download is checked either way.
    let real = test_models();
    let body = match &real {
        Some(models) => {
            let spec = verbatim::engine::models::whisper_model("tiny.en").unwrap();
            std::fs::read(models.weights_path(spec)).unwrap()
        }
        None => weights(3_000_000, 25),
    };
    let ca = TestCa::new();
    let cut = body.len() / 3;
    let route = Route::file(body.clone()).cut_first_at(cut);
    let server = FileServer::start(vec![("/ggml-tiny.en.bin", route)], Some(ca.server.clone()));
    let home = tempfile::tempdir().unwrap();
    let ca_file = ca.write_pem(home.path());
    set_base_url(home.path(), &server.base());
    // Not installed yet: it cannot be selected, so the request names it.
    let out = run(cli(home.path()).args(["models", "select", "tiny.en"]));
    assert!(!out.status.success());
    let pins = pin_of("tiny.en", &body);
    let env: [(&str, &Path); 2] = [
        ("SSL_CERT_FILE", ca_file.as_path()),
        ("VERBATIM_TEST_PINS", Path::new(&pins)),
    ];
    let spawned = SpawnedServer::start_with_env(home.path(), &[], &env);
    let port = spawned.discovery.port;
    let wav = silence_wav();
    let mut request = format!(
        "POST /v1/transcribe?await_download=1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\
         Content-Type: audio/wav\r\nX-Model: tiny.en\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        wav.len()
    )
    .into_bytes();
    request.extend_from_slice(&wav);
    let (status, _, text) = raw_http_bytes(port, &request);
    let installed = home.path().join("models/tiny.en/ggml-tiny.en.bin");
    assert_eq!(std::fs::read(&installed).unwrap(), body, "{status} {text}");
    let seen = server.seen();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[1].headers.get("range"), Some(&format!("bytes={cut}-")));
    if real.is_some() {
        assert_eq!(status, 200, "{text}");
    } else {
        // Stand-in bytes are no model: the download succeeded, loading them cannot.
        assert_ne!(status, 200, "{text}");
        assert!(
            !text.contains("download"),
            "the failure is not the download's: {text}"
        );
    }
}

/// `raw_http` for a body that is not text.
fn raw_http_bytes(port: u16, request: &[u8]) -> (u16, String, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(120)))
        .unwrap();
    stream.write_all(request).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    common::parse_response(&answer)
}

#[test]
fn the_plugin_registry_is_reached_over_https_with_the_ca_of_ssl_cert_file() {
    let ca = TestCa::new();
    let metadata = json!({
        "id": "punctuation", "version": "1.2.0", "name": "Punctuation",
        "downloadUrl": "https://plugins.test/punctuation.zip", "sha256": "0".repeat(64)
    });
    let registry = FileServer::start(
        vec![(
            "/plugins/punctuation/1.2.0",
            Route::file(metadata.to_string().into_bytes()),
        )],
        Some(ca.server.clone()),
    );
    let import = |trusted: bool| {
        let home = tempfile::tempdir().unwrap();
        let ca_file = ca.write_pem(home.path());
        let out =
            run(cli(home.path()).args(["config", "set", "pluginRegistryUrl", &registry.base()]));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let env: Vec<(&str, &Path)> = if trusted {
            vec![("SSL_CERT_FILE", ca_file.as_path())]
        } else {
            vec![]
        };
        let server = SpawnedServer::start_with_env(home.path(), &[], &env);
        let (status, summary) = http_json(
            server.discovery.port,
            "POST",
            "/v1/settings/import",
            Some(&sample_backup(1)),
        );
        assert_eq!(status, 200, "{summary}");
        summary
    };
    let trusted = import(true);
    assert_eq!(trusted["pluginsInstalled"], 1, "{trusted}");
    assert_eq!(trusted["pluginsRegistryFetchFailed"], false, "{trusted}");
    let untrusted = import(false);
    assert_eq!(untrusted["pluginsInstalled"], 0, "{untrusted}");
    assert_eq!(untrusted["pluginsRegistryFetchFailed"], true, "{untrusted}");
}
