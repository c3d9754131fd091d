//! Owner-only files and folders: private folders (0700), atomic private writes (0600, fsync,
//! rename) and random suffixes for temporary names.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Creates `dir` and its missing parents; folders it creates are owner-only (0700).
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Creates `dir` like [`create_private_dir`], then makes it owner-only (0700) even if it
/// already existed with other permissions.
pub fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    create_private_dir(dir)?;
    let meta = fs::metadata(dir)?;
    if meta.permissions().mode() & 0o777 != 0o700 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Writes `bytes` to `path` through an owner-only temporary file in the same folder.
/// A symlink planted at `path` is replaced, never written through.
pub fn write_private_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let folder = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = folder.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        random_suffix()
    ));
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)?;
        File::open(folder)?.sync_all()
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Twelve random hex digits for temporary file names.
pub fn random_suffix() -> String {
    let mut bytes = [0u8; 6];
    getrandom::fill(&mut bytes).expect("the operating system's random source failed");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn private_folders_are_owner_only() {
        let tmp = tempfile::tempdir().unwrap();
        let created = tmp.path().join("a/b");
        create_private_dir(&created).unwrap();
        assert_eq!(mode(&created), 0o700);
        let open = tmp.path().join("open");
        fs::create_dir(&open).unwrap();
        fs::set_permissions(&open, fs::Permissions::from_mode(0o755)).unwrap();
        ensure_private_dir(&open).unwrap();
        assert_eq!(mode(&open), 0o700);
    }

    #[test]
    fn atomic_writes_replace_the_file_and_leave_no_temporary() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("doc.json");
        fs::write(&path, b"old").unwrap();
        write_private_atomically(&path, b"new").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(mode(&path), 0o600);
        assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 1);
        let suffix = random_suffix();
        assert_eq!(suffix.len(), 12);
        assert!(suffix.bytes().all(|b| b.is_ascii_hexdigit()));
    }
}
