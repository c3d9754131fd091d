//! The systemd user unit that runs `verbatim serve`: its text, with the values systemd would
//! otherwise read as specifiers (`%`), variables (`$`) or word breaks escaped.

use std::path::PathBuf;

/// The session variables a unit carries over from the shell that installs it: the display
/// (X11, Wayland), the sound server and the session bus, the session's locale (live text's
/// first guess at the language spoken) and where Verbatim keeps its data.
pub const PASSED_VARIABLES: &[&str] = &[
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "XDG_RUNTIME_DIR",
    "XDG_SESSION_TYPE",
    "PULSE_SERVER",
    "DBUS_SESSION_BUS_ADDRESS",
    "LANG",
    "LC_MESSAGES",
    "LC_ALL",
    "VERBATIM_HOME",
    "VERBATIM_MODELS_DIR",
    "XDG_DATA_HOME",
];

/// What a unit runs and with which environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitSpec {
    /// The `verbatim` executable (absolute).
    pub executable: PathBuf,
    /// `serve --dev`: the development data folder.
    pub dev: bool,
    /// `serve --port N`; None: the preference.
    pub port: Option<u16>,
    /// `NAME=value` pairs, in order.
    pub environment: Vec<(String, String)>,
    /// The unit a package installs for every user (`/usr/lib/systemd/user/`), which runs with
    /// the user manager's environment; false: one `verbatim service install` writes for one
    /// user, with that session's variables.
    pub packaged: bool,
}

impl UnitSpec {
    /// The unit a package installs: `executable serve`, with the user manager's environment
    /// (desktop sessions import their display and sound server variables into it).
    pub fn packaged(executable: impl Into<PathBuf>) -> UnitSpec {
        UnitSpec {
            executable: executable.into(),
            dev: false,
            port: None,
            environment: Vec::new(),
            packaged: true,
        }
    }

    /// The values [`PASSED_VARIABLES`] have in `lookup` (empty ones left out).
    pub fn environment_from(lookup: impl Fn(&str) -> Option<String>) -> Vec<(String, String)> {
        PASSED_VARIABLES
            .iter()
            .filter_map(|name| {
                let value = lookup(name).filter(|value| !value.is_empty())?;
                Some((name.to_string(), value))
            })
            .collect()
    }

    /// The unit file's text.
    pub fn render(&self) -> String {
        let mut command = vec![quote_word(&self.executable.to_string_lossy(), true)];
        if self.dev {
            command.push("--dev".into());
        }
        if let Some(port) = self.port {
            command.push(format!("--port {port}"));
        }
        command.push("serve".into());
        let environment: String = self
            .environment
            .iter()
            .map(|(name, value)| {
                format!(
                    "Environment={}\n",
                    quote_word(&format!("{name}={value}"), false)
                )
            })
            .collect();
        let header = if self.packaged {
            "\
# Installed by the verbatim package for every user: `systemctl --user enable --now verbatim`
# starts it now and at each login. It runs with the user manager's environment, which desktop
# sessions fill (display, sound server); `verbatim service install` writes a unit of your own,
# with your session's variables, that takes its place.
"
        } else {
            "\
# Written by `verbatim service install`; `verbatim service uninstall` removes it.
# The Environment= lines are the session's at install time: run the install again after
# the display or sound server changes.
"
        };
        format!(
            "\
{header}[Unit]
Description=Verbatim speech-to-text server{dev}
After=graphical-session.target pipewire-pulse.service pulseaudio.service
StartLimitIntervalSec=60
StartLimitBurst=5

[Service]
Type=simple
ExecStart={command}
{environment}Restart=on-failure
RestartSec=3
StandardOutput=journal
StandardError=journal
SyslogIdentifier=verbatim

[Install]
WantedBy=default.target
",
            dev = if self.dev { " (development data)" } else { "" },
            command = command.join(" "),
        )
    }
}

/// One word of a unit setting: quoted when it holds a space, quote or backslash, `%` (a
/// specifier) doubled, and in a command line (`in_command`) `$` (a variable) doubled too.
fn quote_word(word: &str, in_command: bool) -> String {
    let mut escaped = word.replace('%', "%%");
    if in_command {
        escaped = escaped.replace('$', "$$");
    }
    let needs_quotes = escaped
        .chars()
        .any(|c| c.is_whitespace() || matches!(c, '"' | '\'' | '\\' | ';'));
    if !needs_quotes {
        return escaped;
    }
    let inner = escaped.replace('\\', "\\\\").replace('"', "\\\"");
    format!("\"{inner}\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> UnitSpec {
        UnitSpec {
            executable: "/opt/verbatim/bin/verbatim".into(),
            dev: false,
            port: None,
            environment: vec![("DISPLAY".into(), ":0".into())],
            packaged: false,
        }
    }

    #[test]
    fn the_packaged_unit_runs_the_installed_program_with_the_managers_environment() {
        let text = UnitSpec::packaged("/usr/bin/verbatim").render();
        assert!(
            text.lines()
                .any(|l| l == "ExecStart=/usr/bin/verbatim serve"),
            "{text}"
        );
        assert!(!text.contains("Environment="), "{text}");
        assert!(
            text.contains("systemctl --user enable --now verbatim"),
            "{text}"
        );
        assert!(!text.contains("Written by"), "{text}");
    }

    #[test]
    fn the_unit_runs_serve_restarts_on_failure_and_logs_to_the_journal() {
        let text = spec().render();
        for line in [
            "ExecStart=/opt/verbatim/bin/verbatim serve",
            "Environment=DISPLAY=:0",
            "Restart=on-failure",
            "StandardOutput=journal",
            "StandardError=journal",
            "WantedBy=default.target",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing:\n{text}");
        }
    }

    #[test]
    fn dev_and_port_go_before_serve() {
        let text = UnitSpec {
            dev: true,
            port: Some(9000),
            ..spec()
        }
        .render();
        assert!(text.contains("ExecStart=/opt/verbatim/bin/verbatim --dev --port 9000 serve\n"));
    }

    #[test]
    fn spaces_quotes_percents_and_dollars_are_escaped() {
        assert_eq!(quote_word("/a b/verbatim", true), "\"/a b/verbatim\"");
        assert_eq!(quote_word("X=100%", false), "X=100%%");
        assert_eq!(quote_word("/$HOME/x", true), "/$$HOME/x");
        assert_eq!(quote_word("X=$HOME", false), "X=$HOME");
        assert_eq!(quote_word("say \"hi\"\\", false), "\"say \\\"hi\\\"\\\\\"");
    }

    #[test]
    fn only_set_non_empty_variables_are_carried_over() {
        let environment = UnitSpec::environment_from(|name| match name {
            "DISPLAY" => Some(":1".into()),
            "WAYLAND_DISPLAY" => Some(String::new()),
            "LANG" => Some("de_DE.UTF-8".into()),
            "UNRELATED" => Some("x".into()),
            _ => None,
        });
        let pair = |n: &str, v: &str| (n.to_string(), v.to_string());
        assert_eq!(
            environment,
            vec![pair("DISPLAY", ":1"), pair("LANG", "de_DE.UTF-8")]
        );
    }
}
