//! The models folder: installed weights, each with a manifest recording its size and SHA-256.
//! A model counts as downloaded when its file and manifest are present and the sizes agree;
//! files are installed by rename, so a failed download or import never leaves a partial model.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::catalog::ModelSpec;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub id: String,
    pub sha256: String,
    pub size: u64,
    /// Where the weights came from (download URL or imported folder).
    pub source: String,
}

/// The folder holding model files.
#[derive(Debug, Clone)]
pub struct ModelDir {
    dir: PathBuf,
}

impl ModelDir {
    pub fn new(dir: impl Into<PathBuf>) -> ModelDir {
        ModelDir { dir: dir.into() }
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    pub fn weights_path(&self, spec: &ModelSpec) -> PathBuf {
        self.dir.join(spec.file_name())
    }

    fn manifest_path(&self, spec: &ModelSpec) -> PathBuf {
        self.dir.join(format!("ggml-{}.json", spec.id))
    }

    pub fn manifest(&self, spec: &ModelSpec) -> Option<Manifest> {
        let text = fs::read_to_string(self.manifest_path(spec)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Weights and manifest present, sizes in agreement.
    pub fn is_installed(&self, spec: &ModelSpec) -> bool {
        let Some(manifest) = self.manifest(spec) else {
            return false;
        };
        fs::metadata(self.weights_path(spec)).is_ok_and(|m| m.is_file() && m.len() == manifest.size)
    }

    /// A fresh temporary path in the models folder for `spec` (same file system as the target).
    pub fn temp_path(&self, spec: &ModelSpec) -> io::Result<PathBuf> {
        fs::create_dir_all(&self.dir)?;
        let nonce = crate::files::random_suffix();
        Ok(self.dir.join(format!(".{}.{nonce}.part", spec.file_name())))
    }

    /// Moves the finished file `temp` into place and records its manifest.
    pub fn install(
        &self,
        spec: &ModelSpec,
        temp: &Path,
        sha256: &str,
        source: &str,
    ) -> io::Result<()> {
        let size = fs::metadata(temp)?.len();
        fs::File::open(temp)?.sync_all()?;
        // The manifest goes first: until the rename, sizes disagree and the model is not installed.
        let manifest = Manifest {
            id: spec.id.into(),
            sha256: sha256.into(),
            size,
            source: source.into(),
        };
        let json = serde_json::to_vec_pretty(&manifest).map_err(io::Error::other)?;
        crate::files::write_private_atomically(&self.manifest_path(spec), &json)?;
        fs::rename(temp, self.weights_path(spec))?;
        fs::File::open(&self.dir)?.sync_all()
    }

    /// Removes the model; true when something was there.
    pub fn remove(&self, spec: &ModelSpec) -> io::Result<bool> {
        let mut removed = false;
        for path in [self.weights_path(spec), self.manifest_path(spec)] {
            match fs::remove_file(&path) {
                Ok(()) => removed = true,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(removed)
    }
}

/// SHA-256 of a file, hex-encoded.
pub fn sha256_file(path: &Path) -> io::Result<String> {
    let mut file = fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::models::catalog::whisper_model;

    #[test]
    fn a_model_is_installed_only_once_file_and_manifest_agree() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ModelDir::new(tmp.path().join("models"));
        let spec = whisper_model("tiny.en").unwrap();
        assert!(!dir.is_installed(spec));
        let temp = dir.temp_path(spec).unwrap();
        fs::write(&temp, b"weights").unwrap();
        let sha = sha256_file(&temp).unwrap();
        dir.install(spec, &temp, &sha, "test").unwrap();
        assert!(dir.is_installed(spec));
        assert!(!temp.exists());
        assert_eq!(dir.manifest(spec).unwrap().size, 7);
        // A truncated file no longer counts.
        fs::write(dir.weights_path(spec), b"wei").unwrap();
        assert!(!dir.is_installed(spec));
        assert!(dir.remove(spec).unwrap());
        assert!(!dir.remove(spec).unwrap());
    }

    #[test]
    fn sha256_of_a_known_input() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("abc");
        fs::write(&path, b"abc").unwrap();
        assert_eq!(
            sha256_file(&path).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
