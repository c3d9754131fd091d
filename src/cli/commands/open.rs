//! `verbatim open [--print-url] [--start]`: a one-time sign-in link to the running server's
//! page, opened in the default browser (or printed). The code is written into the local data
//! folder, where the server reads it; it works once, within two minutes. With `--start` (the
//! desktop entry's), a server that does not answer is started first: the user's service when
//! the service manager knows it, else `verbatim serve` in the background.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::api::security::unix_now;
use crate::discovery::generate_token;
use crate::wire::Status;

use super::super::client::Client;
use super::super::{CliError, Globals};
use super::local_store::open_store;

#[derive(Debug, clap::Args)]
pub struct OpenArgs {
    /// Print the link instead of opening a browser.
    #[arg(long)]
    pub print_url: bool,
    /// Start the server first when none answers: the systemd user service `verbatim` when it
    /// is installed, else `verbatim serve` in the background (its log in the data folder's
    /// `serve.log`).
    #[arg(long)]
    pub start: bool,
}

/// How long a server that was just started may take to answer.
const START_WAIT: Duration = Duration::from_secs(20);

pub fn run(globals: &Globals, args: OpenArgs) -> Result<(), CliError> {
    let mut client = Client::from_globals(globals)?;
    // The server must be up: the link is useless otherwise.
    match client.get::<Status>("/v1/status") {
        Ok(_) => {}
        Err(CliError::CannotConnect(_)) if args.start => client = start_server(globals)?,
        Err(err) => return Err(err),
    }
    let code = generate_token();
    open_store(globals)?
        .add_sign_in_code(&code, unix_now())
        .map_err(CliError::local)?;
    let url = format!("{}/login?code={code}", client.base_url());
    if globals.json {
        println!("{}", serde_json::json!({ "url": url }));
    }
    if args.print_url {
        if !globals.json {
            println!("{url}");
        }
        return Ok(());
    }
    match open_in_browser(&url) {
        Ok(()) => {
            if !globals.json {
                println!(
                    "Opened Verbatim's page in the browser (the link works once, within 2 minutes)."
                );
            }
            Ok(())
        }
        Err(why) => Err(CliError::Local(format!(
            "could not open a browser ({why}); open this link yourself within 2 minutes: {url}"
        ))),
    }
}

/// Starts a server (the user service, else `verbatim serve` in the background) and waits for
/// it to answer; the client then calls it with the token it published.
fn start_server(globals: &Globals) -> Result<Client, CliError> {
    let service = !globals.dev
        && globals.port.is_none()
        && Command::new("systemctl")
            .args(["--user", "start", "verbatim.service"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
    if !service {
        spawn_server(globals)?;
    }
    let deadline = Instant::now() + START_WAIT;
    loop {
        let client = Client::from_globals(globals)?;
        match client.get::<Status>("/v1/status") {
            Ok(_) => return Ok(client),
            Err(CliError::CannotConnect(why)) if Instant::now() >= deadline => {
                let log = if service {
                    "journalctl --user -u verbatim".to_string()
                } else {
                    server_log(globals)?.display().to_string()
                };
                return Err(CliError::CannotConnect(format!(
                    "the server was started but does not answer after {} s ({why}); see {log}",
                    START_WAIT.as_secs()
                )));
            }
            Err(CliError::CannotConnect(_)) => std::thread::sleep(Duration::from_millis(200)),
            Err(err) => return Err(err),
        }
    }
}

/// `verbatim [--dev] [--port N] serve` in a process group of its own (it outlives this one),
/// its output appended to the data folder's `serve.log`.
fn spawn_server(globals: &Globals) -> Result<(), CliError> {
    use std::os::unix::process::CommandExt;
    let program = std::env::current_exe()
        .map_err(|e| CliError::Local(format!("cannot find this program's path: {e}")))?;
    let log_path = server_log(globals)?;
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .map_err(|e| CliError::Local(format!("cannot write {}: {e}", log_path.display())))?;
    let mut command = Command::new(program);
    if globals.dev {
        command.arg("--dev");
    }
    if let Some(port) = globals.port {
        command.args(["--port", &port.to_string()]);
    }
    command
        .arg("serve")
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(CliError::local)?)
        .stderr(log)
        .process_group(0)
        .spawn()
        .map_err(|e| CliError::Local(format!("cannot start `verbatim serve`: {e}")))?;
    Ok(())
}

/// Where a server `open --start` launched writes its log.
fn server_log(globals: &Globals) -> Result<std::path::PathBuf, CliError> {
    let data = crate::discovery::DataDir::resolve(globals.dev).map_err(CliError::local)?;
    std::fs::create_dir_all(data.root()).map_err(CliError::local)?;
    Ok(data.root().join("serve.log"))
}

/// Hands `url` to the desktop's default browser (`xdg-open`).
fn open_in_browser(url: &str) -> Result<(), String> {
    let display = ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()));
    if !display {
        return Err("no display: DISPLAY and WAYLAND_DISPLAY are unset".into());
    }
    let status = Command::new("xdg-open")
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("xdg-open: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("xdg-open exited with {status}"))
    }
}
