//! The background service: a systemd user unit (`~/.config/systemd/user/verbatim.service`)
//! that runs `verbatim serve` at login, restarts it when it fails and logs to the journal.
//! Installing writes the unit atomically, then reloads, enables and starts it; when the user's
//! service manager cannot be reached the file stays and the commands to run are reported.

pub mod systemctl;
pub mod unit;

use std::io;
use std::path::{Path, PathBuf};

pub use systemctl::{Systemctl, SystemctlError};
pub use unit::UnitSpec;

/// The unit's file name: `verbatim.service`, `verbatim-dev.service` for the development data.
pub fn unit_name(dev: bool) -> &'static str {
    if dev {
        "verbatim-dev.service"
    } else {
        "verbatim.service"
    }
}

/// Where user units live: `$XDG_CONFIG_HOME/systemd/user`, else `~/.config/systemd/user`.
pub fn unit_dir(lookup: impl Fn(&str) -> Option<String>) -> io::Result<PathBuf> {
    let set = |name: &str| lookup(name).filter(|value| !value.is_empty());
    let config = match (set("XDG_CONFIG_HOME"), set("HOME")) {
        (Some(config), _) => PathBuf::from(config),
        (None, Some(home)) => PathBuf::from(home).join(".config"),
        (None, None) => {
            return Err(io::Error::other(
                "cannot find the user's configuration folder: set HOME or XDG_CONFIG_HOME",
            ));
        }
    };
    Ok(config.join("systemd/user"))
}

/// The unit of this process's environment (`dev`: the development one).
pub fn unit_path(dev: bool) -> io::Result<PathBuf> {
    Ok(unit_dir(|name| std::env::var(name).ok())?.join(unit_name(dev)))
}

/// What `install` should do beyond writing the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstallOptions {
    /// Reload the manager and enable the unit (start it at login).
    pub enable: bool,
    /// Start it now too.
    pub start: bool,
}

/// What an install or uninstall did with the service manager.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ManagerSteps {
    /// The `systemctl --user` commands that ran and succeeded.
    pub done: Vec<String>,
    /// Those that did not run or failed: to be run by hand.
    pub left: Vec<String>,
    /// Why the first of `left` failed.
    pub problem: Option<String>,
}

impl ManagerSteps {
    /// Runs each step in order until one fails; the rest are left for the user.
    fn run(systemctl: &Systemctl, steps: &[&[&str]]) -> ManagerSteps {
        let mut outcome = ManagerSteps::default();
        for args in steps {
            let line = Systemctl::command_line(args);
            if outcome.problem.is_some() {
                outcome.left.push(line);
                continue;
            }
            match systemctl.run(args) {
                Ok(_) => outcome.done.push(line),
                Err(err) => {
                    outcome.problem = Some(err.to_string());
                    outcome.left.push(line);
                }
            }
        }
        outcome
    }
}

/// Writes the unit for `spec` at `path` (atomically, folders created), then asks the manager
/// to load it and, as `options` say, to enable and start it. Only a failed write is an error.
pub fn install(
    spec: &UnitSpec,
    path: &Path,
    systemctl: &Systemctl,
    options: InstallOptions,
) -> io::Result<ManagerSteps> {
    let folder = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(folder)?;
    crate::files::write_private_atomically(path, spec.render().as_bytes())?;
    if !options.enable {
        return Ok(ManagerSteps::default());
    }
    let name = file_name(path);
    // `restart` starts the service, or restarts it on the new unit when it was running.
    let (enable, restart) = (["enable", name], ["restart", name]);
    let mut steps: Vec<&[&str]> = vec![&["daemon-reload"], &enable];
    if options.start {
        steps.push(&restart);
    }
    Ok(ManagerSteps::run(systemctl, &steps))
}

/// What an uninstall found and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removal {
    /// False when there was no unit file.
    pub removed: bool,
    pub steps: ManagerSteps,
}

/// Stops and disables the unit, removes its file and reloads the manager. Without a unit file
/// nothing is asked of the manager.
pub fn uninstall(path: &Path, systemctl: &Systemctl) -> io::Result<Removal> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(Removal {
            removed: false,
            steps: ManagerSteps::default(),
        });
    }
    let name = file_name(path);
    let mut steps = ManagerSteps::run(systemctl, &[&["disable", "--now", name]]);
    std::fs::remove_file(path)?;
    let reload = ManagerSteps::run(systemctl, &[&["daemon-reload"]]);
    steps.done.extend(reload.done);
    steps.left.extend(reload.left);
    steps.problem = steps.problem.or(reload.problem);
    Ok(Removal {
        removed: true,
        steps,
    })
}

/// The unit as the manager sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitState {
    pub installed: bool,
    /// `is-enabled`'s word (`enabled`, `disabled`, `not-found`...), or why there is none.
    pub enabled: Result<String, SystemctlError>,
    /// `is-active`'s word (`active`, `inactive`, `failed`...), or why there is none.
    pub active: Result<String, SystemctlError>,
}

/// The unit's state; the manager is asked only when the unit file exists (without it, there is
/// nothing to ask about and its answers are failures that say nothing to a person).
pub fn state(path: &Path, systemctl: &Systemctl) -> UnitState {
    let name = file_name(path);
    let installed = path.is_file();
    let ask = |what| {
        if installed {
            systemctl.query(what, name)
        } else {
            Ok("not installed".to_owned())
        }
    };
    UnitState {
        installed,
        enabled: ask("is-enabled"),
        active: ask("is-active"),
    }
}

fn file_name(path: &Path) -> &str {
    path.file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("verbatim.service")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_go_to_the_xdg_config_folder_else_under_home() {
        let lookup = |config: Option<&'static str>| {
            move |name: &str| match name {
                "XDG_CONFIG_HOME" => config.map(String::from),
                "HOME" => Some("/home/ada".to_string()),
                _ => None,
            }
        };
        assert_eq!(
            unit_dir(lookup(None)).unwrap(),
            Path::new("/home/ada/.config/systemd/user")
        );
        assert_eq!(
            unit_dir(lookup(Some("/cfg"))).unwrap(),
            Path::new("/cfg/systemd/user")
        );
        assert!(unit_dir(|_| None).is_err());
    }

    #[test]
    fn without_a_manager_every_step_is_left_to_run_by_hand() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a/b/verbatim.service");
        let missing = Systemctl {
            program: tmp.path().join("no-systemctl").display().to_string(),
            ..Systemctl::default()
        };
        let spec = UnitSpec {
            executable: "/usr/bin/verbatim".into(),
            dev: false,
            port: None,
            environment: vec![],
            packaged: false,
        };
        let options = InstallOptions {
            enable: true,
            start: true,
        };
        let steps = install(&spec, &path, &missing, options).unwrap();
        assert!(path.is_file());
        assert!(steps.done.is_empty());
        assert_eq!(
            steps.left,
            [
                "systemctl --user daemon-reload",
                "systemctl --user enable verbatim.service",
                "systemctl --user restart verbatim.service",
            ]
        );
        assert_eq!(steps.problem.unwrap(), SystemctlError::NotFound.to_string());
        let removal = uninstall(&path, &missing).unwrap();
        assert!(removal.removed && !path.exists());
        assert!(!uninstall(&path, &missing).unwrap().removed);
    }
}
