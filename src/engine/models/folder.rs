//! The models folder: one folder per model (`<id>/`). A whisper model's folder holds its weights
//! (`ggml-<id>.bin`) and a manifest recording their size and SHA-256 (`manifest.json`). A model
//! counts as downloaded when its file and manifest are present and the sizes agree; files are
//! installed by rename, so a failed download or import never leaves a partial model. Folders of
//! earlier versions, with every model's files side by side, are moved into this layout
//! ([`ModelDir::adopt_flat_files`]).

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

    /// The model's own folder.
    pub fn model_folder(&self, spec: &ModelSpec) -> PathBuf {
        self.dir.join(spec.id)
    }

    pub fn weights_path(&self, spec: &ModelSpec) -> PathBuf {
        self.model_folder(spec).join(spec.file_name())
    }

    fn manifest_path(&self, spec: &ModelSpec) -> PathBuf {
        self.model_folder(spec).join(MANIFEST)
    }

    /// Moves whisper models installed by earlier versions (`ggml-<id>.bin` and `ggml-<id>.json`
    /// side by side in the models folder) into their own folders; answers how many files moved.
    /// Each file moves by one rename and only where its new place is free, so an interrupted
    /// move finishes on the next call and two processes moving at once do no harm.
    pub fn adopt_flat_files(&self) -> io::Result<usize> {
        let mut moved = 0;
        for spec in super::WHISPER_MODELS {
            let flat = [
                (self.dir.join(spec.file_name()), self.weights_path(spec)),
                (
                    self.dir.join(format!("ggml-{}.json", spec.id)),
                    self.manifest_path(spec),
                ),
            ];
            for (from, to) in flat {
                if !from.is_file() || to.exists() {
                    continue;
                }
                fs::create_dir_all(self.model_folder(spec))?;
                match fs::rename(&from, &to) {
                    Ok(()) => moved += 1,
                    // Another process moved it first.
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e),
                }
            }
        }
        if moved > 0 {
            fs::File::open(&self.dir)?.sync_all()?;
        }
        Ok(moved)
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
        let folder = self.model_folder(spec);
        fs::create_dir_all(&folder)?;
        crate::files::write_private_atomically(&self.manifest_path(spec), &json)?;
        fs::rename(temp, self.weights_path(spec))?;
        fs::File::open(&folder)?.sync_all()?;
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
        // The folder goes too once empty (a download in progress keeps its part file elsewhere).
        let _ = fs::remove_dir(self.model_folder(spec));
        Ok(removed)
    }
}

/// A whisper model's manifest, in its folder.
const MANIFEST: &str = "manifest.json";

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
        assert!(!dir.model_folder(spec).exists());
    }

    #[test]
    fn models_of_the_flat_layout_move_into_their_folders() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ModelDir::new(tmp.path());
        let spec = whisper_model("tiny.en").unwrap();
        let manifest = Manifest {
            id: spec.id.into(),
            sha256: "0".repeat(64),
            size: 7,
            source: "test".into(),
        };
        fs::write(tmp.path().join("ggml-tiny.en.bin"), b"weights").unwrap();
        fs::write(
            tmp.path().join("ggml-tiny.en.json"),
            serde_json::to_vec(&manifest).unwrap(),
        )
        .unwrap();
        // A move cut short: the base model's weights moved, its manifest not yet.
        let base = whisper_model("base").unwrap();
        fs::create_dir_all(dir.model_folder(base)).unwrap();
        fs::write(dir.weights_path(base), b"weights").unwrap();
        let base_manifest = Manifest {
            id: base.id.into(),
            ..manifest.clone()
        };
        fs::write(
            tmp.path().join("ggml-base.json"),
            serde_json::to_vec(&base_manifest).unwrap(),
        )
        .unwrap();
        assert!(!dir.is_installed(spec) && !dir.is_installed(base));

        assert_eq!(dir.adopt_flat_files().unwrap(), 3);
        assert!(dir.is_installed(spec) && dir.is_installed(base));
        assert_eq!(
            dir.weights_path(spec),
            tmp.path().join("tiny.en").join("ggml-tiny.en.bin")
        );
        assert!(!tmp.path().join("ggml-tiny.en.bin").exists());
        assert_eq!(dir.manifest(spec), Some(manifest));
        assert_eq!(dir.adopt_flat_files().unwrap(), 0, "nothing left to move");
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
