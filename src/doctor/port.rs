//! The API port: free, or answered by a Verbatim server (its `GET /v1/status`), or taken by
//! another program (then `serve` cannot start).

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use super::{Context, Finding};
use crate::discovery::{self, ServerLock};

const NAME: &str = "port";
const TIMEOUT: Duration = Duration::from_secs(2);

/// The port `serve` would use (`--port`, else the running server's, else the preference).
pub fn port(context: &Context, preference: u16) -> Finding {
    let live = ServerLock::is_held(&context.data_dir)
        .then(|| discovery::read(&context.data_dir))
        .flatten();
    let port = context
        .port
        .or(live.as_ref().map(|published| published.port))
        .unwrap_or(preference);
    if port == 0 {
        return Finding::ok(
            NAME,
            "0: the server picks a free port at each start (clients read it from the discovery file)",
        );
    }
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    match TcpStream::connect_timeout(&address, TIMEOUT) {
        Ok(stream) => match verbatim_status(stream, port) {
            Some(status) => Finding::ok(
                NAME,
                format!("127.0.0.1:{port} is served by Verbatim (status {status})"),
            ),
            None => Finding::fail(
                NAME,
                format!("127.0.0.1:{port} is taken by another program"),
                format!(
                    "stop that program (`ss -ltnp 'sport = :{port}'` names it) or use another port: \
                     `verbatim config set apiServerPort {}`",
                    port.wrapping_add(1).max(1024)
                ),
            ),
        },
        Err(_) => match TcpListener::bind(address) {
            Ok(_) => Finding::ok(NAME, format!("127.0.0.1:{port} is free")),
            Err(err) => Finding::fail(
                NAME,
                format!("127.0.0.1:{port} cannot be bound: {err}"),
                "use a free port above 1023: `verbatim config set apiServerPort <port>`",
            ),
        },
    }
}

/// The `status` word of a Verbatim `/v1/status` answer on `stream`, if that is what answers.
fn verbatim_status(mut stream: TcpStream, port: u16) -> Option<String> {
    stream.set_read_timeout(Some(TIMEOUT)).ok()?;
    stream.set_write_timeout(Some(TIMEOUT)).ok()?;
    let request =
        format!("GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut answer = Vec::new();
    let _ = stream.take(64 * 1024).read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer);
    let (_, body) = text.split_once("\r\n\r\n")?;
    let status: serde_json::Value = serde_json::from_str(body.trim()).ok()?;
    status.get("api_version")?;
    Some(status.get("status")?.as_str()?.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dictation::desktop::DesktopEnv;
    use crate::discovery::DataDir;
    use crate::doctor::Status;

    fn context(dir: &std::path::Path, port: u16) -> Context {
        Context {
            data_dir: DataDir::at(dir),
            models: crate::engine::models::ModelDir::new(dir.join("models")),
            port: Some(port),
            desktop: DesktopEnv::headless(),
            runtime_dir: None,
            pulse_server: None,
        }
    }

    #[test]
    fn a_free_port_is_ok_and_one_taken_by_another_program_fails() {
        let tmp = tempfile::tempdir().unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        // Another program: accepts, answers something that is not Verbatim.
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut request = [0u8; 1024];
            let _ = stream.read(&mut request);
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi");
        });
        let taken = super::port(&context(tmp.path(), port), 8978);
        server.join().unwrap();
        assert_eq!(taken.status, Status::Fail, "{taken:?}");
        assert!(taken.fix.unwrap().contains("apiServerPort"));
        let free = super::port(&context(tmp.path(), port), 8978);
        assert_eq!(free.status, Status::Ok, "{free:?}");
    }
}
