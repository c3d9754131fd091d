//! Serves a router on an already-bound listener until a shutdown future completes.
//!
//! HTTP/1.1 through hyper. No client can hold a connection for as long as it likes: a request
//! head (the first, or the next on a keep-alive connection) must arrive within
//! [`HEADER_READ_TIMEOUT`], a body at a minimum rate (`api::limits`), and a response that the
//! client stops reading ends after [`WRITE_STALL_TIMEOUT`]. At most [`MAX_CONNECTIONS`] are
//! served at once, fewer where the open file limit is low (see `descriptors` and `slots`). On shutdown, in-flight requests get a grace period. A request
//! head hyper cannot read is answered with the Error object too (see `head_errors`).

pub mod descriptors;
mod head_errors;
mod slots;
mod stall;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::watch;

pub use descriptors::MAX_CONNECTIONS;
pub use stall::WRITE_STALL_TIMEOUT;

use crate::app::App;
use crate::discovery::{self, DataDir, Discovery, ServerLock};

/// A connection must deliver a complete request head within this time: the first one, and on a
/// kept-alive connection the next one (hyper starts the timer again once a response is sent).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long in-flight requests may run on after shutdown is asked for.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Serves `router` on `listener` until `shutdown` completes, then drains connections.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .keep_alive(true);
    // Each connection holds a receiver: `true` asks it to finish its request and close; the
    // sender's `closed` completes once every connection has.
    let (draining, drain) = watch::channel(false);
    let slots = slots::Slots::new(descriptors::current_connection_cap());
    tokio::pin!(shutdown);
    loop {
        let (stream, _peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(err) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    tracing::warn!("accept failed: {err}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // The next connections wait in the listen backlog until this one has a slot.
        let slot = tokio::select! {
            slot = slots.acquire() => slot,
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let guarded = stall::StallGuard::new(stream, WRITE_STALL_TIMEOUT);
        let io = TokioIo::new(head_errors::HeadErrors::new(guarded));
        let connection = http
            .serve_connection(io, slot.service(router.clone()))
            .with_upgrades();
        tokio::spawn(slot.serve(until_drained(connection, drain.clone())));
    }
    drop(listener);
    drop(drain);
    let _ = draining.send(true);
    if tokio::time::timeout(SHUTDOWN_GRACE, draining.closed())
        .await
        .is_err()
    {
        tracing::warn!("some requests were still running after {SHUTDOWN_GRACE:?}; closing them");
    }
    Ok(())
}

/// Drives `connection` to its end; once `drain` turns true, it finishes the request under way
/// and closes. A connection upgraded to a WebSocket ends here at the upgrade: the session goes
/// on by itself.
async fn until_drained<I, S, B>(
    connection: hyper::server::conn::http1::UpgradeableConnection<I, S>,
    mut drain: watch::Receiver<bool>,
) -> Result<(), hyper::Error>
where
    S: hyper::service::HttpService<hyper::body::Incoming, ResBody = B>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    B: hyper::body::Body + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        ended = connection.as_mut() => return ended,
        _ = drain.wait_for(|draining| *draining) => {}
    }
    connection.as_mut().graceful_shutdown();
    connection.await
}

/// Everything `verbatim serve` needs once the app is built.
pub struct ServeSetup {
    pub app: Arc<App>,
    pub data_dir: DataDir,
    pub port: u16,
    /// The Wyoming listener beside the API, if asked for.
    pub wyoming: Option<crate::wyoming::WyomingSetup>,
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Lock(#[from] discovery::LockError),
    #[error(
        "cannot listen on 127.0.0.1:{port}: {source}. Choose another port with --port N or `verbatim config set apiServerPort N`."
    )]
    Bind { port: u16, source: std::io::Error },
    #[error(
        "cannot listen for Wyoming on {address}: {source}. Choose another with --wyoming ADDR:PORT or `verbatim config set wyomingAddress ADDR:PORT`."
    )]
    WyomingBind {
        address: std::net::SocketAddr,
        source: std::io::Error,
    },
    #[error("cannot write the discovery file {path}: {source}")]
    Discovery {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

/// Runs the API server: lock, bind 127.0.0.1, publish discovery, serve until `shutdown`,
/// then remove the discovery file. `announce` receives the bound port (for the log line).
pub async fn run(
    setup: ServeSetup,
    shutdown: impl Future<Output = ()>,
    announce: impl FnOnce(u16),
) -> Result<(), StartError> {
    let ServeSetup {
        app,
        data_dir,
        port,
        wyoming,
    } = setup;
    let _lock = ServerLock::acquire(&data_dir)?;
    let limit = descriptors::raise_open_file_limit();
    let cap = descriptors::connection_cap(limit);
    if cap < MAX_CONNECTIONS {
        tracing::warn!(
            "the open file limit is {}: at most {cap} connections are served at once (raise it to {} for {MAX_CONNECTIONS})",
            limit.unwrap_or_default(),
            descriptors::FULL_CAP_LIMIT
        );
    }
    if let Some(stale) = discovery::read(&data_dir) {
        tracing::info!(
            "replacing a stale discovery file left by pid {} (port {})",
            stale.pid,
            stale.port
        );
    }
    let listener = TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|source| StartError::Bind { port, source })?;
    let port = listener
        .local_addr()
        .map_err(|source| StartError::Bind { port, source })?
        .port();
    // Wyoming's listener is bound before anything is announced, so that a port taken fails the
    // start; it stops accepting when the API server stops.
    let (wyoming_stop, wyoming_stopped) = watch::channel(false);
    if let Some(wyoming) = wyoming {
        let address = wyoming.address;
        let listener = TcpListener::bind(address)
            .await
            .map_err(|source| StartError::WyomingBind { address, source })?;
        let bound = listener.local_addr().unwrap_or(address);
        tracing::info!("Wyoming speech to text listening on tcp://{bound}");
        let mut stopped = wyoming_stopped.clone();
        tokio::spawn(crate::wyoming::serve(
            listener,
            wyoming.allow,
            app.clone(),
            async move {
                let _ = stopped.wait_for(|stop| *stop).await;
            },
        ));
    }
    let pid = std::process::id();
    discovery::publish(
        &data_dir,
        &Discovery {
            port,
            token: app.token()?,
            version: 1,
            pid,
        },
    )
    .map_err(|source| StartError::Discovery {
        path: data_dir.discovery_path(),
        source,
    })?;
    announce(port);
    let result = serve(listener, crate::api::router(app, port), shutdown).await;
    let _ = wyoming_stop.send(true);
    drop(wyoming_stopped);
    discovery::unpublish(&data_dir, pid);
    result.map_err(|source| StartError::Bind { port, source })
}

/// Installs SIGINT and SIGTERM handlers now (call inside the runtime, before the server is
/// announced) and returns a future that completes when either arrives.
pub fn termination_signal() -> std::io::Result<impl Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => tracing::info!("SIGTERM received, stopping"),
            _ = int.recv() => tracing::info!("SIGINT received, stopping"),
        }
    })
}
