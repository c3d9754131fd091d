//! The Debian package `scripts/package` builds (here from the suite's own build of the program,
//! compressed with gzip to keep the suite quick): its files and control fields, the unit and
//! the desktop entry, lintian; and, where root is available (CI runs as root), an install used
//! by an ordinary user with no checkout, then `apt remove` and `apt purge` leaving nothing in
//! `/usr` and the user's data alone.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::common;

/// The package, built once for every test of this file; None (with a note) where the Debian
/// tools to build it are missing.
fn package() -> Option<&'static Path> {
    static PACKAGE: OnceLock<Option<PathBuf>> = OnceLock::new();
    PACKAGE
        .get_or_init(|| {
            if !has_program("dpkg-shlibdeps") || !has_program("dpkg-deb") {
                common::skip("dpkg-dev is not installed (scripts/test installs it)");
                return None;
            }
            // Kept for the whole run: both tests read it.
            let out = tempfile::tempdir().unwrap().keep();
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/package");
            let built = Command::new(script)
                .args(["--binary"])
                .arg(common::binary())
                .arg("--out")
                .arg(&out)
                .args(["--compression", "gzip"])
                .output()
                .unwrap();
            assert!(built.status.success(), "{}", text(&built.stderr));
            let path = PathBuf::from(text(&built.stdout).trim());
            assert!(path.is_file(), "scripts/package printed {path:?}");
            Some(path)
        })
        .as_deref()
}

fn has_program(name: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn run(command: &mut Command) -> Output {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{command:?}: {}{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    output
}

/// Every file (not folder) the package installs, as absolute paths.
fn package_files(package: &Path) -> Vec<String> {
    let listing = run(Command::new("dpkg-deb").arg("-c").arg(package));
    text(&listing.stdout)
        .lines()
        .filter(|line| !line.starts_with('d'))
        .filter_map(|line| line.split_whitespace().last())
        .map(|path| path.trim_start_matches('.').to_string())
        .collect()
}

fn field(package: &Path, name: &str) -> String {
    text(&run(Command::new("dpkg-deb").arg("-f").arg(package).arg(name)).stdout)
        .trim()
        .to_string()
}

#[test]
fn the_package_holds_the_program_man_pages_completions_unit_and_desktop_entry() {
    let Some(package) = package() else { return };
    let files = package_files(package);
    for expected in [
        "/usr/bin/verbatim",
        "/usr/share/man/man1/verbatim.1.gz",
        "/usr/share/man/man1/verbatim-transcribe.1.gz",
        "/usr/share/man/man1/verbatim-models-download.1.gz",
        "/usr/share/bash-completion/completions/verbatim",
        "/usr/share/zsh/vendor-completions/_verbatim",
        "/usr/share/fish/vendor_completions.d/verbatim.fish",
        "/usr/lib/systemd/user/verbatim.service",
        "/usr/share/applications/verbatim.desktop",
        "/usr/share/icons/hicolor/scalable/apps/verbatim.svg",
        "/usr/share/doc/verbatim/copyright",
        "/usr/share/doc/verbatim/changelog.gz",
        "/usr/share/doc/verbatim/README.md.gz",
    ] {
        assert!(
            files.iter().any(|f| f == expected),
            "{expected} missing: {files:#?}"
        );
    }
    // A man page for every command and subcommand the program has.
    let pages = tempfile::tempdir().unwrap();
    run(Command::new(common::binary())
        .args(["man", "--out"])
        .arg(pages.path()));
    for page in std::fs::read_dir(pages.path()).unwrap() {
        let name = page.unwrap().file_name().into_string().unwrap();
        let packaged = format!("/usr/share/man/man1/{name}.gz");
        assert!(files.contains(&packaged), "{packaged} missing");
    }
    // Only program files: no model, no ONNX Runtime, nothing outside /usr.
    for file in &files {
        assert!(file.starts_with("/usr/"), "{file} is outside /usr");
        for forbidden in [".bin", ".onnx", ".ort", "onnxruntime", "ggml"] {
            assert!(!file.contains(forbidden), "{file} should be a download");
        }
    }

    assert_eq!(field(package, "Package"), "verbatim");
    assert_eq!(field(package, "Version"), env!("CARGO_PKG_VERSION"));
    let arch = run(Command::new("dpkg").arg("--print-architecture"));
    assert_eq!(field(package, "Architecture"), text(&arch.stdout).trim());
    let depends = field(package, "Depends");
    for library in ["libc6", "libasound2", "libopus0", "libstdc++6"] {
        assert!(depends.contains(library), "Depends: {depends}");
    }

    let root = tempfile::tempdir().unwrap();
    run(Command::new("dpkg-deb")
        .arg("-x")
        .arg(package)
        .arg(root.path()));
    let unit =
        std::fs::read_to_string(root.path().join("usr/lib/systemd/user/verbatim.service")).unwrap();
    assert!(
        unit.lines()
            .any(|l| l == "ExecStart=/usr/bin/verbatim serve"),
        "{unit}"
    );
    assert!(!unit.contains("Environment="), "{unit}");
    let desktop = root.path().join("usr/share/applications/verbatim.desktop");
    let entry = std::fs::read_to_string(&desktop).unwrap();
    assert!(entry.lines().any(|l| l == "Name=Verbatim"), "{entry}");
    assert!(
        entry.lines().any(|l| l == "Exec=verbatim open --start"),
        "{entry}"
    );
    assert!(entry.lines().any(|l| l == "Icon=verbatim"), "{entry}");
    if has_program("desktop-file-validate") {
        run(Command::new("desktop-file-validate").arg(&desktop));
    } else {
        common::skip("desktop-file-validate is not installed (scripts/test installs it)");
    }
    if has_program("systemd-analyze") {
        // Checks the unit's syntax only: the program path is the installed one.
        let verified = Command::new("systemd-analyze")
            .args(["verify", "--man=no"])
            .arg(root.path().join("usr/lib/systemd/user/verbatim.service"))
            .output()
            .unwrap();
        let complaints = text(&verified.stderr);
        assert!(
            !complaints.contains("Unknown key") && !complaints.contains("Invalid"),
            "{complaints}"
        );
    }
    if has_program("lintian") {
        let lintian = Command::new("lintian")
            .args(["--fail-on", "error,warning"])
            .arg(package)
            .output()
            .unwrap();
        let report = format!("{}{}", text(&lintian.stdout), text(&lintian.stderr));
        assert!(lintian.status.success(), "lintian: {report}");
        assert!(
            !report
                .lines()
                .any(|l| l.starts_with("E:") || l.starts_with("W:")),
            "{report}"
        );
    } else {
        common::skip("lintian is not installed (scripts/test installs it)");
    }
}

/// The installed package and a throw-away user, removed again whatever the test's outcome.
struct Installed {
    user: String,
    home: tempfile::TempDir,
}

impl Installed {
    fn new(package: &Path) -> Installed {
        apt(&["install", "-y", "--no-install-recommends"], Some(package));
        let home = tempfile::Builder::new()
            .prefix("verbatim-user")
            .tempdir()
            .unwrap();
        let user = format!("vbpkg{}", std::process::id());
        let installed = Installed { user, home };
        std::fs::set_permissions(
            installed.home.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        run(Command::new("useradd")
            .args(["--no-create-home", "--shell", "/bin/sh", "--home-dir"])
            .arg(installed.home.path())
            .arg(&installed.user));
        run(Command::new("chown")
            .arg(&installed.user)
            .arg(installed.home.path()));
        installed
    }

    /// `verbatim ARGS` as the user, in its home (no checkout anywhere near), with a bare
    /// environment and the installed program from the PATH.
    fn verbatim(&self) -> Command {
        let mut command = Command::new("runuser");
        command
            .args(["-u", &self.user, "--", "env", "-i"])
            .arg(format!("HOME={}", self.home.path().display()))
            .args(["PATH=/usr/bin:/bin", "LANG=C.UTF-8", "verbatim"])
            .current_dir(self.home.path());
        command
    }

    /// Gives the user the file at `source`, in its home.
    fn give(&self, source: &Path, name: &str) -> PathBuf {
        let target = self.home.path().join(name);
        std::fs::copy(source, &target).unwrap();
        run(Command::new("chown").arg(&self.user).arg(&target));
        target
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        let _ = Command::new("pkill").args(["-u", &self.user]).status();
        let _ = Command::new("userdel").arg(&self.user).status();
        let _ = Command::new("apt-get")
            .args(["purge", "-y", "verbatim"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .output();
    }
}

fn apt(args: &[&str], package: Option<&Path>) {
    let mut command = Command::new("apt-get");
    command.args(args).env("DEBIAN_FRONTEND", "noninteractive");
    if let Some(package) = package {
        command.arg(package);
    }
    run(&mut command);
}

/// A user with no checkout installs the package and reads doctor, serves (told which command
/// gets a model), imports a model, transcribes a real recording and gets the page's link; `apt remove` and then `apt purge` leave none of the package's
/// files and the user's data as it was.
#[test]
fn installed_from_the_package_a_user_serves_transcribes_and_removal_leaves_nothing() {
    let Some(models) = common::test_models() else {
        return;
    };
    if unsafe { libc::geteuid() } != 0 {
        common::note_skip("installing a package needs root (CI runs as root)");
        return;
    }
    if !has_program("apt-get") || !has_program("runuser") || !has_program("useradd") {
        common::note_skip("apt-get, runuser and useradd are needed to install as another user");
        return;
    }
    let installed_already = Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", "verbatim"])
        .output()
        .is_ok_and(|o| text(&o.stdout).contains("install ok installed"));
    if installed_already {
        common::note_skip(
            "a verbatim package is installed here already: the test would replace it",
        );
        return;
    }
    let Some(package) = package() else { return };
    let files = package_files(package);
    let user = Installed::new(package);

    let doctor = user.verbatim().arg("doctor").output().unwrap();
    let report = text(&doctor.stdout);
    assert!(
        report.contains("/usr/bin/verbatim from the Debian package verbatim"),
        "{report}{}",
        text(&doctor.stderr)
    );

    // A first run: no model yet, and the server says which command gets one.
    let port = common::closed_port();
    let log = user.home.path().join("serve.log");
    let mut server = user
        .verbatim()
        .args(["--port", &port.to_string(), "serve", "--no-hotkeys"])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "the installed server did not answer: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let said = std::fs::read_to_string(&log).unwrap();
    assert!(
        said.lines().any(|l| l.contains("no model is installed yet")
            && l.contains("verbatim models download tiny.en")),
        "{said}"
    );

    let weights = user.give(&common::weights(&models, "tiny.en"), "ggml-tiny.en.bin");
    run(user.verbatim().args(["models", "import"]).arg(&weights));
    let clip = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/clips/real-goforward.wav");
    let clip = user.give(&clip, "goforward.wav");
    let heard = run(user
        .verbatim()
        .args(["--port", &port.to_string(), "transcribe"])
        .arg(&clip));
    let heard = text(&heard.stdout).to_lowercase();
    assert!(
        heard.contains("forward") && heard.contains("meters"),
        "{heard}"
    );
    let link = run(user
        .verbatim()
        .args(["--port", &port.to_string(), "open", "--print-url"]));
    let link = text(&link.stdout);
    assert!(
        link.starts_with(&format!("http://127.0.0.1:{port}/login?code=")),
        "{link}"
    );
    if has_program("man") {
        let page = run(Command::new("man").args(["-w", "verbatim-transcribe"]));
        assert_eq!(
            text(&page.stdout).trim(),
            "/usr/share/man/man1/verbatim-transcribe.1.gz"
        );
    }
    let _ = Command::new("pkill").args(["-u", &user.user]).status();
    let _ = server.wait();

    let data = user.home.path().join(".local/share/verbatim");
    let user_files = |dir: &Path| -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    found.push(path);
                }
            }
        }
        found.sort();
        found
    };
    let before = user_files(&data);
    assert!(
        before.iter().any(|f| f.ends_with("ggml-tiny.en.bin")),
        "{before:#?}"
    );

    for removal in ["remove", "purge"] {
        if removal == "purge" {
            apt(&["install", "-y", "--no-install-recommends"], Some(package));
            assert!(Path::new("/usr/bin/verbatim").exists());
        }
        apt(&[removal, "-y", "verbatim"], None);
        let left: Vec<&String> = files.iter().filter(|f| Path::new(f).exists()).collect();
        assert!(left.is_empty(), "apt {removal} left {left:#?}");
        assert_eq!(
            user_files(&data),
            before,
            "apt {removal} touched the user's data"
        );
    }
}
