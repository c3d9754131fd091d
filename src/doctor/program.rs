//! Which `verbatim` runs: the Debian package's (`dpkg-query` lists this program among its
//! files, and gives its version) or a build of its own, and whether a packaged one is also
//! installed.

use std::path::{Path, PathBuf};

use super::Finding;

const NAME: &str = "program";

/// Where the package puts the program.
const PACKAGED_PROGRAM: &str = "/usr/bin/verbatim";

/// How the program this process runs was installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Installed by the Debian package `verbatim` (its version, when dpkg says it).
    Package { version: Option<String> },
    /// A build run from where it is; `packaged` is set when the package is installed too.
    Build { packaged: bool },
}

/// The origin of `program`, given the installed package's file list (None: the package is
/// not installed).
pub fn origin_of(program: &Path, file_list: Option<&str>, version: Option<String>) -> Origin {
    let Some(list) = file_list else {
        return Origin::Build { packaged: false };
    };
    if list.lines().any(|line| Path::new(line) == program) {
        Origin::Package { version }
    } else {
        Origin::Build { packaged: true }
    }
}

/// This process's program and origin, as read from the package manager's records.
pub fn this_program() -> (PathBuf, Origin) {
    let program = std::env::current_exe()
        .and_then(|exe| exe.canonicalize())
        .unwrap_or_else(|_| PathBuf::from("verbatim"));
    // Asked of dpkg-query, never read from dpkg's database files (their layout is dpkg's own).
    let version = dpkg_query(&["-W", "-f=${db:Status-Abbrev} ${Version}", "verbatim"])
        .and_then(|line| line.strip_prefix("ii ").map(|v| v.trim().to_string()));
    let list = version
        .as_ref()
        .and_then(|_| dpkg_query(&["-L", "verbatim"]));
    let origin = origin_of(&program, list.as_deref(), version);
    (program, origin)
}

/// What `dpkg-query ARGS` prints, when it runs and succeeds (not on a system without dpkg).
fn dpkg_query(args: &[&str]) -> Option<String> {
    let output = std::process::Command::new("dpkg-query")
        .args(args)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

pub fn program() -> Finding {
    let (program, origin) = this_program();
    finding(&program, &origin)
}

fn finding(program: &Path, origin: &Origin) -> Finding {
    let build = env!("CARGO_PKG_VERSION");
    match origin {
        Origin::Package { version } => Finding::ok(
            NAME,
            format!(
                "{} from the Debian package verbatim {} (models and data stay in your data \
                 folder; `apt remove verbatim` leaves them)",
                program.display(),
                version.as_deref().unwrap_or(build)
            ),
        ),
        Origin::Build { packaged: false } => Finding::ok(
            NAME,
            format!(
                "{} (version {build}), a build run from where it is, not installed from a package",
                program.display()
            ),
        ),
        Origin::Build { packaged: true } => Finding::warn(
            NAME,
            format!(
                "{} (version {build}) is a build of its own, and the Debian package's \
                 {PACKAGED_PROGRAM} is installed too: the service and the desktop entry run that one",
                program.display()
            ),
            format!("run {PACKAGED_PROGRAM} to use the packaged program, or apt remove verbatim"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::Status;

    #[test]
    fn the_packaged_program_is_told_from_a_build_beside_it() {
        let list = "/.\n/usr\n/usr/bin\n/usr/bin/verbatim\n/usr/share/man/man1/verbatim.1.gz\n";
        let packaged = origin_of(
            Path::new("/usr/bin/verbatim"),
            Some(list),
            Some("0.1.0".into()),
        );
        assert_eq!(
            packaged,
            Origin::Package {
                version: Some("0.1.0".into())
            }
        );
        let found = finding(Path::new("/usr/bin/verbatim"), &packaged);
        assert_eq!(found.status, Status::Ok);
        assert!(
            found.detail.contains("Debian package verbatim 0.1.0"),
            "{found:?}"
        );

        let beside = origin_of(
            Path::new("/home/a/verbatim/target/release/verbatim"),
            Some(list),
            None,
        );
        assert_eq!(beside, Origin::Build { packaged: true });
        assert_eq!(finding(Path::new("/x"), &beside).status, Status::Warn);

        let alone = origin_of(
            Path::new("/home/a/verbatim/target/release/verbatim"),
            None,
            None,
        );
        assert_eq!(alone, Origin::Build { packaged: false });
        let found = finding(Path::new("/x"), &alone);
        assert!(
            found.detail.contains("not installed from a package"),
            "{found:?}"
        );
    }
}
