//! The output file while it is written: a temporary file beside the destination, renamed into
//! place once complete and removed if the import fails.

use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};

use super::Ct2Error;

/// A file beside the destination that is removed on drop unless committed.
pub(super) struct TempFile {
    path: PathBuf,
    pub file: Option<File>,
    committed: bool,
}

impl TempFile {
    pub fn create(dest: &Path) -> Result<Self, Ct2Error> {
        let err = |source| Ct2Error::Write {
            path: dest.to_path_buf(),
            source,
        };
        let name = dest.file_name().ok_or_else(|| {
            err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the path has no file name",
            ))
        })?;
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".{}-{stamp}.part", std::process::id()));
        let path = dir.join(tmp_name);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(err)?;
        Ok(Self {
            path,
            file: Some(file),
            committed: false,
        })
    }

    pub fn commit(&mut self, dest: &Path) -> Result<(), Ct2Error> {
        fs::rename(&self.path, dest).map_err(|source| Ct2Error::Write {
            path: dest.to_path_buf(),
            source,
        })?;
        self.committed = true;
        // Make the rename durable; not every platform can open a directory.
        if let Some(dir) = dest.parent().filter(|p| !p.as_os_str().is_empty())
            && let Ok(d) = File::open(dir)
        {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        self.file.take();
        if !self.committed {
            let _ = fs::remove_file(&self.path);
        }
    }
}
