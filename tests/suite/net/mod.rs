//! Local stand-ins for the network a model download crosses: a certificate authority made for
//! the test (rcgen), a file server over plain HTTP or TLS (rustls) that honours `Range` and
//! `If-Range`, redirects and can cut a transfer halfway, and a CONNECT proxy that records the
//! tunnels it opened. Threads and std sockets only, bounded: every server stops with its value.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use rustls::ServerConfig;
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use sha2::{Digest, Sha256};

/// The SHA-256 of `bytes`, hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Weights-like bytes: `len` bytes of a pattern, different for each `seed`.
pub fn weights(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| ((i * 31 + i / 251) as u8).wrapping_add(seed))
        .collect()
}

/// A certificate authority made for one test, and a server certificate it signed for
/// 127.0.0.1 and localhost.
pub struct TestCa {
    pub ca_pem: String,
    pub server: Arc<ServerConfig>,
}

impl TestCa {
    pub fn new() -> TestCa {
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(DnType::CommonName, "Verbatim test CA");
        ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate().unwrap()).unwrap();

        let mut leaf =
            CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()]).unwrap();
        leaf.distinguished_name
            .push(DnType::CommonName, "127.0.0.1");
        leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let leaf_key = KeyPair::generate().unwrap();
        let leaf_cert = leaf.signed_by(&leaf_key, &ca).unwrap();

        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let server = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![leaf_cert.der().clone(), ca.der().clone()],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der())),
            )
            .unwrap();
        TestCa {
            ca_pem: ca.pem(),
            server: Arc::new(server),
        }
    }

    /// Writes the CA certificate as a PEM bundle into `dir`, for `SSL_CERT_FILE`.
    pub fn write_pem(&self, dir: &Path) -> PathBuf {
        let path = dir.join("test-ca.pem");
        std::fs::write(&path, &self.ca_pem).unwrap();
        path
    }
}

/// What the file server answers on a path.
#[derive(Clone)]
pub enum Route {
    /// A file, with an ETag; ranges honoured while `If-Range` names that ETag.
    File {
        body: Arc<Vec<u8>>,
        etag: String,
        /// Extra headers on every answer (e.g. `X-Linked-Etag`).
        headers: Vec<(String, String)>,
        /// The first answer stops after this many body bytes and the connection drops.
        cut_first_at: Option<usize>,
    },
    /// A redirect to this `Location`.
    Redirect(String),
}

impl Route {
    pub fn file(body: Vec<u8>) -> Route {
        let etag = format!("\"{}\"", &sha256_hex(&body)[..16]);
        Route::File {
            body: Arc::new(body),
            etag,
            headers: Vec::new(),
            cut_first_at: None,
        }
    }

    pub fn cut_first_at(self, at: usize) -> Route {
        match self {
            Route::File {
                body,
                etag,
                headers,
                ..
            } => Route::File {
                body,
                etag,
                headers,
                cut_first_at: Some(at),
            },
            other => other,
        }
    }

    pub fn header(self, name: &str, value: &str) -> Route {
        match self {
            Route::File {
                body,
                etag,
                mut headers,
                cut_first_at,
            } => {
                headers.push((name.into(), value.into()));
                Route::File {
                    body,
                    etag,
                    headers,
                    cut_first_at,
                }
            }
            other => other,
        }
    }
}

/// One request the file server received.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    pub headers: HashMap<String, String>,
}

/// A file server on 127.0.0.1, plain or TLS; stops when dropped.
pub struct FileServer {
    pub port: u16,
    tls: bool,
    routes: Arc<Mutex<HashMap<String, Route>>>,
    seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
}

impl FileServer {
    pub fn start(routes: Vec<(&str, Route)>, tls: Option<Arc<ServerConfig>>) -> FileServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let routes: Arc<Mutex<HashMap<String, Route>>> = Arc::new(Mutex::new(
            routes
                .into_iter()
                .map(|(path, route)| (path.to_string(), route))
                .collect(),
        ));
        let cut_done = Arc::new(Mutex::new(std::collections::HashSet::<String>::new()));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let server = FileServer {
            port,
            tls: tls.is_some(),
            routes: routes.clone(),
            seen: seen.clone(),
            stop: stop.clone(),
        };
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let (routes, cut_done, seen, tls) =
                    (routes.clone(), cut_done.clone(), seen.clone(), tls.clone());
                std::thread::spawn(move || {
                    let _ = stream.set_read_timeout(Some(Duration::from_secs(20)));
                    let _ = match tls {
                        Some(config) => {
                            let connection = rustls::ServerConnection::new(config).unwrap();
                            let tls_stream = rustls::StreamOwned::new(connection, stream);
                            serve(tls_stream, &routes, &cut_done, &seen)
                        }
                        None => serve(stream, &routes, &cut_done, &seen),
                    };
                });
            }
        });
        server
    }

    /// `http(s)://127.0.0.1:<port>`.
    pub fn base(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}", self.port)
    }

    /// Adds (or replaces) what `path` answers.
    pub fn route(&self, path: &str, route: Route) {
        self.routes.lock().unwrap().insert(path.to_string(), route);
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for FileServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Reads a request head: the request line and the headers (names lowercased).
fn read_head(reader: &mut impl BufRead) -> io::Result<(String, HashMap<String, String>)> {
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let target = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    let mut headers = HashMap::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_string());
        }
    }
    Ok((target, headers))
}

fn serve<S: Read + Write>(
    stream: S,
    routes: &Mutex<HashMap<String, Route>>,
    cut_done: &Mutex<std::collections::HashSet<String>>,
    seen: &Mutex<Vec<Seen>>,
) -> io::Result<()> {
    let mut reader = BufReader::new(stream);
    let (path, headers) = read_head(&mut reader)?;
    seen.lock().unwrap().push(Seen {
        path: path.clone(),
        headers: headers.clone(),
    });
    let mut stream = reader.into_inner();
    let route = routes.lock().unwrap().get(&path).cloned();
    let Some(route) = route else {
        stream.write_all(
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        )?;
        return stream.flush();
    };
    match &route {
        Route::Redirect(location) => {
            let head = format!(
                "HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            stream.write_all(head.as_bytes())?;
            stream.flush()
        }
        Route::File {
            body,
            etag,
            headers: extra,
            cut_first_at,
        } => {
            let start = headers
                .get("range")
                .and_then(|r| r.strip_prefix("bytes="))
                .and_then(|r| r.strip_suffix('-'))
                .and_then(|r| r.parse::<usize>().ok())
                .filter(|_| headers.get("if-range").is_none_or(|v| v == etag))
                .filter(|start| *start < body.len());
            let mut head = match start {
                Some(start) => format!(
                    "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {start}-{}/{}\r\nContent-Length: {}\r\n",
                    body.len() - 1,
                    body.len(),
                    body.len() - start
                ),
                None => format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n", body.len()),
            };
            head.push_str(&format!(
                "ETag: {etag}\r\nAccept-Ranges: bytes\r\nConnection: close\r\n"
            ));
            for (name, value) in extra {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            stream.write_all(head.as_bytes())?;
            let part = &body[start.unwrap_or(0)..];
            let cut = cut_first_at.filter(|_| cut_done.lock().unwrap().insert(path.clone()));
            match cut {
                Some(at) => {
                    stream.write_all(&part[..at.min(part.len())])?;
                    stream.flush()?;
                    // Dropped without a TLS close_notify or the rest: the transfer is cut.
                    Ok(())
                }
                None => {
                    stream.write_all(part)?;
                    stream.flush()
                }
            }
        }
    }
}

/// An HTTP CONNECT proxy on 127.0.0.1 that records the `host:port` of every tunnel.
pub struct ConnectProxy {
    pub port: u16,
    tunnels: Arc<Mutex<Vec<String>>>,
}

impl ConnectProxy {
    pub fn start() -> ConnectProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let tunnels = Arc::new(Mutex::new(Vec::new()));
        let recorded = tunnels.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(client) = stream else { continue };
                let recorded = recorded.clone();
                std::thread::spawn(move || {
                    let _ = tunnel(client, &recorded);
                });
            }
        });
        ConnectProxy { port, tunnels }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn tunnels(&self) -> Vec<String> {
        self.tunnels.lock().unwrap().clone()
    }
}

fn tunnel(client: TcpStream, recorded: &Mutex<Vec<String>>) -> io::Result<()> {
    client.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(client.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header.trim().is_empty() {
            break;
        }
    }
    let mut client = client;
    if method != "CONNECT" {
        client.write_all(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")?;
        return Ok(());
    }
    recorded.lock().unwrap().push(target.to_string());
    let upstream = TcpStream::connect(target)?;
    client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")?;
    let (mut up_read, mut up_write) = (upstream.try_clone()?, upstream);
    let mut client_write = client.try_clone()?;
    let upward = std::thread::spawn(move || {
        let _ = io::copy(&mut reader, &mut up_write);
        let _ = up_write.shutdown(Shutdown::Write);
    });
    let _ = io::copy(&mut up_read, &mut client_write);
    let _ = client_write.shutdown(Shutdown::Both);
    let _ = upward.join();
    Ok(())
}
