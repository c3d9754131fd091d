//! `verbatim service install [--no-enable] [--no-start] | uninstall | status | unit`: the systemd user
//! unit that keeps `verbatim serve` running in the background (see [`crate::service`]).
//!
//! Writing the unit is the part that must succeed (exit 1 otherwise). When the user's service
//! manager cannot be reached (no systemd, no user bus) the file stays and the `systemctl`
//! commands still to run are printed on standard error; the exit code stays 0.

use serde_json::json;

use super::super::output::print_json;
use super::super::{CliError, Client, Globals};
use crate::service::{self, InstallOptions, ManagerSteps, Systemctl, UnitSpec};
use crate::wire::Status;

#[derive(Debug, clap::Subcommand)]
pub enum ServiceCommand {
    /// Write the unit that runs `verbatim serve` at login, then enable and start it.
    Install {
        /// Only write the unit file: do not reload, enable or start it.
        #[arg(long)]
        no_enable: bool,
        /// Enable the unit (start at next login) without starting it now.
        #[arg(long, conflicts_with = "no_enable")]
        no_start: bool,
    },
    /// Stop and disable the service and remove its unit file.
    Uninstall,
    /// Show whether the unit is installed, enabled and running, and what the server answers.
    Status,
    /// Print the unit `install` would write, or with `--packaged` the one a package installs
    /// for every user (no session variables).
    Unit {
        /// The program the unit runs (default: this one).
        #[arg(long, value_name = "PATH")]
        executable: Option<std::path::PathBuf>,
        /// The unit of a package, for `/usr/lib/systemd/user/`.
        #[arg(long)]
        packaged: bool,
    },
}

pub fn run(globals: &Globals, command: ServiceCommand) -> Result<(), CliError> {
    let path = service::unit_path(globals.dev).map_err(CliError::local)?;
    let systemctl = Systemctl::default();
    match command {
        ServiceCommand::Install {
            no_enable,
            no_start,
        } => {
            let spec = session_unit(globals, this_program()?);
            let options = InstallOptions {
                enable: !no_enable,
                start: !no_enable && !no_start,
            };
            let steps = service::install(&spec, &path, &systemctl, options).map_err(|e| {
                CliError::Local(format!("cannot write the unit {}: {e}", path.display()))
            })?;
            let enabled = options.enable && steps.left.is_empty();
            if globals.json {
                print_json(&json!({
                    "path": path,
                    "enabled": enabled,
                    "started": enabled && options.start,
                    "left": steps.left,
                    "problem": steps.problem,
                }));
            } else {
                let what = match (enabled, options.start) {
                    (false, _) => "",
                    (true, true) => "; enabled and started",
                    (true, false) => "; enabled (starts at next login)",
                };
                println!("Installed {}{what}", path.display());
            }
            explain_steps_left(&steps);
        }
        ServiceCommand::Uninstall => {
            let removal = service::uninstall(&path, &systemctl).map_err(|e| {
                CliError::Local(format!("cannot remove the unit {}: {e}", path.display()))
            })?;
            if globals.json {
                print_json(&json!({
                    "path": path,
                    "removed": removal.removed,
                    "left": removal.steps.left,
                    "problem": removal.steps.problem,
                }));
            } else if removal.removed {
                println!("Removed {}", path.display());
            } else {
                println!("No service installed ({} does not exist)", path.display());
            }
            explain_steps_left(&removal.steps);
        }
        ServiceCommand::Status => status(globals, &path, &systemctl),
        ServiceCommand::Unit {
            executable,
            packaged,
        } => {
            let executable = match executable {
                Some(path) => path,
                None => this_program()?,
            };
            let spec = if packaged {
                UnitSpec::packaged(executable)
            } else {
                session_unit(globals, executable)
            };
            print!("{}", spec.render());
        }
    }
    Ok(())
}

/// This program's absolute path.
fn this_program() -> Result<std::path::PathBuf, CliError> {
    std::env::current_exe()
        .and_then(|exe| exe.canonicalize())
        .map_err(|e| CliError::Local(format!("cannot find this program's path: {e}")))
}

/// The unit of one user's session: `executable` with the global options and this session's
/// variables.
fn session_unit(globals: &Globals, executable: std::path::PathBuf) -> UnitSpec {
    UnitSpec {
        executable,
        dev: globals.dev,
        port: globals.port,
        environment: UnitSpec::environment_from(|name| std::env::var(name).ok()),
        packaged: false,
    }
}

/// The manager's answers for the unit, and the server's `/v1/status`.
fn status(globals: &Globals, path: &std::path::Path, systemctl: &Systemctl) {
    let state = service::state(path, systemctl);
    let word = |answer: &Result<String, service::SystemctlError>| match answer {
        Ok(word) => word.clone(),
        Err(err) => format!("unknown ({err})"),
    };
    let server = Client::from_globals(globals).map(|client| {
        let answer = client.get::<Status>("/v1/status");
        (client.base_url().to_string(), answer)
    });
    if globals.json {
        let (url, answer) = match &server {
            Ok((url, Ok(status))) => (Some(url.clone()), json!(status)),
            Ok((url, Err(err))) => (Some(url.clone()), json!({ "error": err.to_string() })),
            Err(err) => (None, json!({ "error": err.to_string() })),
        };
        print_json(&json!({
            "path": path,
            "installed": state.installed,
            "enabled": word(&state.enabled),
            "active": word(&state.active),
            "server": { "url": url, "status": answer },
        }));
        return;
    }
    if state.installed {
        println!("Unit: {} (installed)", path.display());
        println!("Enabled: {}", word(&state.enabled));
        println!("Active: {}", word(&state.active));
    } else {
        println!(
            "Unit: not installed ({}); `verbatim service install` installs and starts it",
            path.display()
        );
    }
    match server {
        Ok((url, Ok(status))) => {
            let what = match (&status.engine, &status.model) {
                (Some(engine), Some(model)) => format!("{} - {engine} ({model})", status.status),
                (Some(engine), None) => format!("{} - {engine}", status.status),
                _ => status.status.clone(),
            };
            println!("Server: {what} at {url}");
        }
        Ok((url, Err(err))) => println!("Server: not answering at {url} ({err})"),
        Err(err) => println!("Server: unknown ({err})"),
    }
}

/// On standard error: why the service manager could not finish, and what to run instead.
fn explain_steps_left(steps: &ManagerSteps) {
    if steps.left.is_empty() {
        return;
    }
    eprintln!(
        "Could not reach the user's service manager: {}",
        steps.problem.as_deref().unwrap_or("no reason given")
    );
    eprintln!("Run these commands in your desktop session:");
    for line in &steps.left {
        eprintln!("  {line}");
    }
}
