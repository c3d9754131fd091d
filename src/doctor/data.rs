//! The data folder (owner-only, writable, owned by this user) and the discovery file (live,
//! stale or absent; owner-only).

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use super::Finding;
use crate::discovery::{self, DataDir, ServerLock};

const FOLDER: &str = "data folder";
const DISCOVERY: &str = "discovery file";

pub fn data_folder(dir: &DataDir, settings_unreadable: Option<&str>) -> Finding {
    let root = dir.root();
    let shown = root.display();
    let meta = match std::fs::metadata(root) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return not_created_yet(root),
        Err(err) => {
            return Finding::fail(
                FOLDER,
                format!("{shown} cannot be read: {err}"),
                format!("check the permissions of its parent folders (ls -ld {shown})"),
            );
        }
    };
    if !meta.is_dir() {
        return Finding::fail(
            FOLDER,
            format!("{shown} is not a folder"),
            format!("move {shown} out of the way, or point VERBATIM_HOME at a folder of your own"),
        );
    }
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Finding::fail(
            FOLDER,
            format!(
                "{shown} belongs to user id {}, not to you ({me})",
                meta.uid()
            ),
            format!("sudo chown -R \"$USER\" {shown}"),
        );
    }
    if !writable(root) {
        return Finding::fail(
            FOLDER,
            format!("{shown} is not writable (mode {:o})", meta.mode() & 0o777),
            format!("chmod 700 {shown}"),
        );
    }
    if let Some(reason) = settings_unreadable {
        return Finding::fail(
            FOLDER,
            format!("the settings database cannot be read: {reason}"),
            format!(
                "check {} (a settings backup can be restored with `verbatim import`)",
                dir.database_path().display()
            ),
        );
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Finding::warn(
            FOLDER,
            format!("{shown} can be read by other users (mode {mode:o})"),
            format!("chmod 700 {shown} (verbatim serve also does this when it starts)"),
        );
    }
    Finding::ok(FOLDER, format!("{shown} (yours, owner-only, writable)"))
}

/// A folder that does not exist yet is fine when its nearest existing parent lets us create it.
fn not_created_yet(root: &Path) -> Finding {
    let shown = root.display();
    let parent = root.ancestors().skip(1).find(|p| p.exists());
    match parent {
        Some(parent) if parent.is_dir() && writable(parent) => Finding::ok(
            FOLDER,
            format!("{shown} does not exist yet; `verbatim serve` creates it (owner-only)"),
        ),
        Some(parent) => Finding::fail(
            FOLDER,
            format!(
                "{shown} does not exist and cannot be created in {}",
                parent.display()
            ),
            "point VERBATIM_HOME at a folder you can write to".to_string(),
        ),
        None => Finding::fail(
            FOLDER,
            format!("{shown} has no existing parent folder"),
            "point VERBATIM_HOME at a folder you can write to".to_string(),
        ),
    }
}

/// Whether this process may create files in `dir`.
fn writable(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a NUL-terminated path that lives across the call.
    unsafe { libc::access(path.as_ptr(), libc::W_OK | libc::X_OK) == 0 }
}

pub fn discovery_file(dir: &DataDir) -> Finding {
    let path = dir.discovery_path();
    let shown = path.display();
    let running = ServerLock::is_held(dir);
    let Ok(meta) = std::fs::symlink_metadata(&path) else {
        return Finding::ok(
            DISCOVERY,
            if running {
                "none yet: a server is starting".to_string()
            } else {
                "none: no server is running (clients then call port 8978 or --port)".to_string()
            },
        );
    };
    let Some(published) = discovery::read(dir).filter(|_| meta.is_file()) else {
        return Finding::warn(
            DISCOVERY,
            format!("{shown} is not a readable discovery file"),
            format!("rm {shown} (the server writes a new one when it starts)"),
        );
    };
    if !running {
        return Finding::warn(
            DISCOVERY,
            format!(
                "{shown} is stale: left by a server that stopped without cleaning up (pid {}, port {})",
                published.pid, published.port
            ),
            "nothing is needed: the next `verbatim serve` replaces it (or delete the file)",
        );
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode != 0o600 {
        return Finding::warn(
            DISCOVERY,
            format!("{shown} holds the API token but has mode {mode:o}"),
            format!("chmod 600 {shown}"),
        );
    }
    Finding::ok(
        DISCOVERY,
        format!(
            "a server is running (pid {}, port {})",
            published.pid, published.port
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::Discovery;
    use crate::doctor::Status;

    #[test]
    fn a_file_where_the_folder_should_be_fails_with_a_fix() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("data");
        std::fs::write(&file, b"").unwrap();
        let check = data_folder(&DataDir::at(&file), None);
        assert_eq!(check.status, Status::Fail);
        assert!(check.fix.unwrap().contains("VERBATIM_HOME"));
    }

    #[test]
    fn an_open_folder_is_a_warning_and_a_private_one_is_ok() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::at(tmp.path().join("data"));
        assert_eq!(
            data_folder(&dir, None).status,
            Status::Ok,
            "not created yet"
        );
        std::fs::create_dir(dir.root()).unwrap();
        std::fs::set_permissions(dir.root(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let open = data_folder(&dir, None);
        assert_eq!(open.status, Status::Warn);
        assert!(open.fix.unwrap().starts_with("chmod 700"));
        dir.ensure().unwrap();
        assert_eq!(data_folder(&dir, None).status, Status::Ok);
    }

    #[test]
    fn a_discovery_file_without_a_live_server_is_stale() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::at(tmp.path());
        assert_eq!(discovery_file(&dir).status, Status::Ok);
        let published = Discovery {
            port: 4242,
            token: "t".into(),
            version: 1,
            pid: 1,
        };
        discovery::publish(&dir, &published).unwrap();
        let stale = discovery_file(&dir);
        assert_eq!(stale.status, Status::Warn);
        assert!(stale.detail.contains("stale"), "{}", stale.detail);
        let _lock = ServerLock::acquire(&dir).unwrap();
        let live = discovery_file(&dir);
        assert_eq!(live.status, Status::Ok);
        assert!(live.detail.contains("port 4242"));
    }
}
