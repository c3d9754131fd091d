//! The desktop-facing commands end to end against the real binary: `completions`, `man`,
//! `service` (in a temporary HOME, with a fake `systemctl` that records its arguments) and
//! `doctor` (on this machine, and on data folders made to fail).

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use assert_cmd::prelude::*;
use common::SpawnedServer;
use predicates::prelude::*;

/// `verbatim` with its own data folder, HOME and nothing of the caller's session.
fn verbatim(home: &Path) -> Command {
    let mut command = common::verbatim(&home.join("data"));
    command
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("VERBATIM_MODELS_DIR")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY");
    command
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

fn run(command: &mut Command) -> Output {
    command.output().unwrap()
}

#[test]
fn completions_for_each_shell_name_the_commands() {
    let home = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish"] {
        let mut words = predicate::str::contains("transcribe")
            .and(predicate::str::contains("doctor"))
            .boxed();
        for word in ["service", "--format", "verbose_json"] {
            words = words.and(predicate::str::contains(word)).boxed();
        }
        verbatim(home.path())
            .args(["completions", shell])
            .assert()
            .success()
            .stderr("")
            .stdout(words);
    }
    verbatim(home.path())
        .args(["completions", "tcsh"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("invalid value 'tcsh'"));
}

#[test]
fn the_man_page_renders_and_one_page_per_command_can_be_written() {
    let home = tempfile::tempdir().unwrap();
    verbatim(home.path())
        .arg("man")
        .assert()
        .success()
        .stderr("")
        .stdout(
            predicate::str::is_match(r"(?m)^\.TH VERBATIM 1 ")
                .unwrap()
                .and(predicate::str::contains("transcribe"))
                .and(predicate::str::contains("doctor")),
        );

    let dir = home.path().join("man1");
    let out = run(verbatim(home.path()).args(["man", "--out"]).arg(&dir));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed: Vec<PathBuf> = text(&out.stdout).lines().map(PathBuf::from).collect();
    assert_eq!(listed[0], dir.join("verbatim.1"));
    for name in [
        "verbatim-transcribe.1",
        "verbatim-service-install.1",
        "verbatim-doctor.1",
    ] {
        let path = dir.join(name);
        assert!(listed.contains(&path), "{name} not listed");
        assert!(std::fs::read_to_string(&path).unwrap().starts_with(".ie"));
    }
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), listed.len());
}

/// A folder holding a `systemctl` that appends its arguments to `log` and answers the
/// `is-enabled`/`is-active` queries; with `failing`, it fails as it does without a user bus.
fn fake_systemctl(dir: &Path, log: &Path, failing: bool) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let body = if failing {
        "echo 'Failed to connect to bus: No medium found' >&2\nexit 1\n".to_string()
    } else {
        "case \"$2\" in\n  is-enabled) echo enabled ;;\n  is-active) echo active ;;\nesac\n"
            .to_string()
    };
    let script = format!("#!/bin/sh\necho \"$*\" >> '{}'\n{body}", log.display());
    let path = bin.join("systemctl");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let system_path = std::env::var("PATH").unwrap_or_default();
    PathBuf::from(format!("{}:{system_path}", bin.display()))
}

fn logged(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn service_install_status_and_uninstall_round_trip() {
    let home = tempfile::tempdir().unwrap();
    let log = home.path().join("systemctl.log");
    let path = fake_systemctl(home.path(), &log, false);
    let unit = home.path().join(".config/systemd/user/verbatim.service");
    let service = |args: &[&str]| {
        run(verbatim(home.path())
            .env("PATH", &path)
            .env("DISPLAY", ":42")
            .arg("service")
            .args(args))
    };

    let out = service(&["install"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("Installed {}; enabled and started\n", unit.display())
    );
    let content = std::fs::read_to_string(&unit).unwrap();
    let exe = common::binary().canonicalize().unwrap();
    let expected = [
        format!("ExecStart={} serve", exe.display()),
        "Environment=DISPLAY=:42".into(),
        format!(
            "Environment=VERBATIM_HOME={}",
            home.path().join("data").display()
        ),
        "Restart=on-failure".into(),
        "StandardOutput=journal".into(),
        "WantedBy=default.target".into(),
    ];
    for line in &expected {
        assert!(
            content.lines().any(|l| l == line),
            "{line} missing:\n{content}"
        );
    }
    assert_eq!(
        logged(&log),
        [
            "--user daemon-reload",
            "--user enable verbatim.service",
            "--user restart verbatim.service",
        ]
    );

    let out = service(&["status"]);
    let status = text(&out.stdout);
    assert!(out.status.success());
    assert!(status.contains(&format!("Unit: {} (installed)", unit.display())));
    assert!(
        status.contains("Enabled: enabled\nActive: active\n"),
        "{status}"
    );
    assert!(status.contains("Server: not answering"), "{status}");

    std::fs::remove_file(&log).unwrap();
    let out = service(&["uninstall"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("Removed {}\n", unit.display()));
    assert!(!unit.exists());
    assert_eq!(
        logged(&log),
        [
            "--user disable --now verbatim.service",
            "--user daemon-reload"
        ]
    );
    // Nothing left to remove: the manager is not asked.
    std::fs::remove_file(&log).unwrap();
    let out = service(&["uninstall"]);
    assert!(out.status.success());
    assert!(text(&out.stdout).starts_with("No service installed"));
    assert!(logged(&log).is_empty());
    // Nor about a unit that is not there: status says how to install it.
    let out = service(&["status"]);
    let status = text(&out.stdout);
    assert!(
        status.starts_with("Unit: not installed (")
            && status.contains("`verbatim service install`"),
        "{status}"
    );
    assert!(!status.contains("systemctl"), "{status}");
    let out = service(&["--json", "status"]);
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["installed"], false);
    assert_eq!(answer["enabled"], "not installed");
    assert!(logged(&log).is_empty(), "{:?}", logged(&log));
}

#[test]
fn without_a_user_bus_the_unit_is_written_and_the_commands_to_run_are_printed() {
    let home = tempfile::tempdir().unwrap();
    let log = home.path().join("systemctl.log");
    let path = fake_systemctl(home.path(), &log, true);
    let out = run(verbatim(home.path())
        .env("PATH", &path)
        .args(["--dev", "--json", "service", "install"]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let unit = home
        .path()
        .join(".config/systemd/user/verbatim-dev.service");
    assert!(unit.is_file());
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["enabled"], false);
    assert_eq!(answer["path"], unit.display().to_string());
    let left = [
        "systemctl --user daemon-reload",
        "systemctl --user enable verbatim-dev.service",
        "systemctl --user restart verbatim-dev.service",
    ];
    assert_eq!(answer["left"], serde_json::json!(left));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("Failed to connect to bus"), "{stderr}");
    for line in left {
        assert!(stderr.contains(&format!("  {line}\n")), "{stderr}");
    }
    let content = std::fs::read_to_string(&unit).unwrap();
    assert!(content.contains(" --dev serve\n"), "{content}");
    // --no-enable: only the file, the manager is not asked.
    std::fs::remove_file(&log).unwrap();
    let out =
        run(verbatim(home.path())
            .env("PATH", &path)
            .args(["service", "install", "--no-enable"]));
    assert!(out.status.success());
    assert_eq!(text(&out.stderr), "");
    assert!(logged(&log).is_empty());
}

#[test]
fn a_unit_that_cannot_be_written_is_an_error() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join(".config"), b"not a folder").unwrap();
    let out = run(verbatim(home.path()).args(["service", "install", "--no-enable"]));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("cannot write the unit"),
        "{}",
        text(&out.stderr)
    );
}

/// systemd's own checker accepts the unit: no parse warnings, the program exists. Skipped where
/// systemd-analyze is missing or cannot run here (no manager in some containers).
#[test]
fn systemd_analyze_verifies_the_written_unit() {
    let home = tempfile::tempdir().unwrap();
    let out = run(verbatim(home.path())
        .env("DISPLAY", ":0")
        .env("XAUTHORITY", "/tmp/with space/.Xauthority")
        .args(["service", "install", "--no-enable"]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let unit = home.path().join(".config/systemd/user/verbatim.service");
    let verify = |unit: &Path| {
        Command::new("systemd-analyze")
            .arg("verify")
            .arg(unit)
            .output()
    };
    let out = match verify(&unit) {
        Ok(out) => out,
        Err(err) => {
            common::note_skip(&format!("systemd-analyze cannot run ({err})"));
            return;
        }
    };
    let complaints = format!("{}{}", text(&out.stdout), text(&out.stderr));
    if complaints.contains("Failed to initialize manager") || complaints.contains("bus") {
        common::note_skip(&format!("systemd-analyze cannot verify here: {complaints}"));
        return;
    }
    assert!(out.status.success(), "{complaints}");
    assert_eq!(complaints.trim(), "", "systemd-analyze complained");
    // The checker is not blind: a unit with an unknown setting is reported.
    let broken = home.path().join("broken.service");
    let content = std::fs::read_to_string(&unit).unwrap();
    std::fs::write(
        &broken,
        content.replace("Restart=on-failure", "Restart=sometimes"),
    )
    .unwrap();
    let out = verify(&broken).unwrap();
    assert!(text(&out.stderr).contains("sometimes"));
}

/// The names of every check, in order.
const CHECKS: [&str; 14] = [
    "program",
    "data folder",
    "discovery file",
    "port",
    "wyoming",
    "prompt actions",
    "open files",
    "model",
    "sound server",
    "microphone",
    "system audio",
    "display",
    "text insertion",
    "hotkeys",
];

fn doctor_json(command: &mut Command) -> (Option<i32>, serde_json::Value) {
    let out = run(command.args(["doctor", "--json"]));
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&out.stdout)));
    (out.status.code(), report)
}

fn check<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no {name} check in {report}"))
}

#[test]
fn doctor_reports_every_check_and_its_exit_code_follows_the_failures() {
    let home = tempfile::tempdir().unwrap();
    let out = run(verbatim(home.path()).arg("doctor"));
    let printed = text(&out.stdout);
    for name in CHECKS {
        assert!(
            printed
                .lines()
                .any(|l| l.get(6..).is_some_and(|rest| rest.starts_with(name))),
            "{name} not printed:\n{printed}"
        );
    }
    // No model selected and no display here: not ready, each failure with its fix.
    assert_eq!(out.status.code(), Some(1), "{printed}");
    assert!(printed.contains("FAIL  model"), "{printed}");
    assert!(printed.contains("fix: verbatim models download tiny.en"));
    assert!(printed.contains("Not ready for dictation"));
    // The suite's build is run from where it is, not installed from the package.
    assert!(
        printed.contains("not installed from a package"),
        "{printed}"
    );
    assert!(text(&out.stderr).contains("dictation is not ready"));

    let (code, report) = doctor_json(&mut verbatim(home.path()));
    let checks = report["checks"].as_array().unwrap();
    let names: Vec<&str> = checks.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, CHECKS);
    for check in checks {
        let status = check["status"].as_str().unwrap();
        assert!(["ok", "warn", "fail"].contains(&status), "{check}");
        assert!(!check["detail"].as_str().unwrap().is_empty());
        assert_eq!(check["fix"].is_string(), status != "ok", "{check}");
    }
    let failed = checks.iter().any(|c| c["status"] == "fail");
    assert_eq!(report["ready"], !failed);
    assert_eq!(code, Some(if failed { 1 } else { 0 }));
}

/// A hard open file limit of 256 leaves the server fewer connections: doctor says how many and
/// how to raise the limit. A soft limit of 256 under a hard one of 4096 is fine (it is raised).
#[test]
fn doctor_warns_of_a_low_open_file_limit_with_the_cap_it_leaves() {
    let home = tempfile::tempdir().unwrap();
    let (_, report) = doctor_json(&mut common::with_file_limit(
        verbatim(home.path()),
        256,
        256,
    ));
    let found = check(&report, "open files");
    assert_eq!(found["status"], "warn", "{found}");
    assert!(
        found["detail"]
            .as_str()
            .unwrap()
            .contains("at most 96 connections"),
        "{found}"
    );
    assert!(
        found["fix"].as_str().unwrap().contains("ulimit -n"),
        "{found}"
    );

    let (_, report) = doctor_json(&mut common::with_file_limit(
        verbatim(home.path()),
        256,
        4096,
    ));
    assert_eq!(check(&report, "open files")["status"], "ok");
}

#[test]
fn doctor_fails_on_a_data_folder_it_cannot_use_and_says_how_to_fix_it() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("data");
    std::fs::write(&file, b"").unwrap();
    let (code, report) = doctor_json(&mut verbatim(home.path()));
    assert_eq!(code, Some(1));
    let folder = check(&report, "data folder");
    assert_eq!(folder["status"], "fail");
    assert!(
        folder["detail"]
            .as_str()
            .unwrap()
            .contains("is not a folder")
    );
    assert!(folder["fix"].as_str().unwrap().contains("VERBATIM_HOME"));
}

#[test]
fn doctor_sees_a_running_server_and_a_stale_discovery_file() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("data");
    let mut server = SpawnedServer::start(&data, &["--sim"]);
    let (_, report) = doctor_json(&mut verbatim(home.path()));
    let port = server.discovery.port;
    let discovery = check(&report, "discovery file");
    assert_eq!(discovery["status"], "ok");
    assert!(
        discovery["detail"]
            .as_str()
            .unwrap()
            .contains(&format!("port {port}"))
    );
    let port_check = check(&report, "port");
    assert_eq!(port_check["status"], "ok", "{port_check}");
    assert!(
        port_check["detail"]
            .as_str()
            .unwrap()
            .contains("served by Verbatim")
    );
    // Killed without cleaning up: the file stays, the lock goes.
    server.signal(libc::SIGKILL);
    server.wait_exit();
    let (_, report) = doctor_json(&mut verbatim(home.path()));
    let stale = check(&report, "discovery file");
    assert_eq!(stale["status"], "warn");
    assert!(stale["detail"].as_str().unwrap().contains("stale"));
    // Something else on the port a server would take: fail, with another port to use.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = listener.local_addr().unwrap().port().to_string();
    let answer = std::thread::spawn(move || {
        use std::io::{Read, Write};
        let (mut stream, _) = listener.accept().unwrap();
        let _ = stream.read(&mut [0u8; 1024]);
        let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
    });
    let (code, report) = doctor_json(verbatim(home.path()).args(["--port", &taken]));
    answer.join().unwrap();
    assert_eq!(code, Some(1));
    let port_check = check(&report, "port");
    assert_eq!(port_check["status"], "fail", "{port_check}");
    assert!(
        port_check["fix"]
            .as_str()
            .unwrap()
            .contains("apiServerPort")
    );
}

/// Everything dictation needs present (an X11 display with xclip, the test sound server, an
/// installed model): exit code 0. Skipped without the test sound server, Xvfb or a model.
#[test]
fn doctor_exits_zero_when_everything_for_dictation_is_there() {
    let Some(models) = common::test_models() else {
        return;
    };
    let Some(_pulse) = common::pulse::pulse() else {
        return;
    };
    let Some(x) = common::xvfb::Xvfb::start() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let with_session = |command: &mut Command| {
        command
            .env("VERBATIM_MODELS_DIR", models.path())
            .env("DISPLAY", &x.display);
    };
    let mut select = verbatim(home.path());
    with_session(&mut select);
    assert!(
        run(select.args(["models", "select", "tiny.en"]))
            .status
            .success()
    );
    let mut doctor = verbatim(home.path());
    with_session(&mut doctor);
    let (code, report) = doctor_json(&mut doctor);
    assert_eq!(code, Some(0), "{report:#}");
    assert_eq!(report["ready"], true);
    for name in [
        "model",
        "microphone",
        "display",
        "text insertion",
        "hotkeys",
    ] {
        assert_eq!(check(&report, name)["status"], "ok", "{report:#}");
    }
}

/// On a terminal (a pseudo-terminal from `script`), `transcribe` draws its bar and the segment
/// lines on standard error while standard output, redirected to a file, gets the text alone.
/// Skipped where `script` (util-linux) is missing.
#[test]
fn on_a_terminal_progress_goes_to_stderr_and_stdout_keeps_the_result() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("data");
    let _server = SpawnedServer::start(&data, &["--sim"]);
    let clip = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/clips/en-weather.wav");
    let result = home.path().join("result.txt");
    let line = format!(
        "'{}' transcribe '{}' > '{}'",
        common::binary().display(),
        clip.display(),
        result.display()
    );
    let terminal = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env("VERBATIM_HOME", &data)
        .env("TERM", "xterm")
        .env_remove("VERBATIM_API_TOKEN")
        .output();
    let terminal = match terminal {
        Ok(out) => out,
        Err(err) => {
            common::skip(&format!("`script` cannot run ({err})"));
            return;
        }
    };
    assert!(terminal.status.success(), "{}", text(&terminal.stderr));
    let expected = common::recorded_text("en-weather");
    assert_eq!(
        std::fs::read_to_string(&result).unwrap(),
        format!("{expected}\n")
    );
    let drawn = String::from_utf8_lossy(&terminal.stdout);
    assert!(drawn.contains("Transcribing ["), "no bar: {drawn:?}");
    assert!(
        drawn.contains(&format!("[00:00:00.000] {expected}")),
        "{drawn:?}"
    );
}
