//! `verbatim open [--print-url]`: a one-time sign-in link to the running server's page,
//! opened in the default browser (or printed). The code is written into the local data folder,
//! where the server reads it; it works once, within two minutes.

use std::process::{Command, Stdio};

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
}

pub fn run(globals: &Globals, args: OpenArgs) -> Result<(), CliError> {
    let client = Client::from_globals(globals)?;
    // The server must be up: the link is useless otherwise.
    let _: Status = client.get("/v1/status")?;
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
