//! Installing a Moonshine model: the registry packages that carry its files (and the ONNX
//! Runtime library) are downloaded like whisper weights (resumable, proxies, progress, checked
//! against their pinned SHA-256 and size), then only the pinned members are unpacked, each
//! checked against its own pin, into a staging folder renamed into place: a failed install
//! leaves nothing half-made, and the package archives are deleted once unpacked.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::catalog::{Archive, MoonshineModel, Package, PackedFile, RUNTIME_FOLDER};
use super::{folder, runtime};
use crate::engine::models::fetch::{DownloadError, TIMEOUTS, fetch_verified};
use crate::engine::models::{Expected, ModelDir, hex};
use crate::net::HttpClient;

/// Where `package` is fetched from: its registry's address, or with a `base_url`, the package's
/// file name under it (a mirror, or a local server in tests).
pub fn package_address(package: &Package, base_url: &str) -> String {
    let base = base_url.trim().trim_end_matches('/');
    if base.is_empty() {
        package.url.to_string()
    } else {
        format!("{base}/{}", package_file_name(package))
    }
}

fn package_file_name(package: &Package) -> &'static str {
    package.url.rsplit('/').next().unwrap_or(package.url)
}

/// A folder to fill in the models folder, and the files it needs.
struct Install {
    folder: PathBuf,
    files: Vec<&'static PackedFile>,
}

/// Downloads and installs what `model` still lacks (its files, the ONNX Runtime library);
/// `progress(done, total)` counts the bytes of the packages fetched.
pub fn download(
    models: &ModelDir,
    model: &'static MoonshineModel,
    base_url: &str,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(), DownloadError> {
    download_with(
        &HttpClient::new(TIMEOUTS),
        models,
        model,
        base_url,
        progress,
    )
}

/// [`download`] through `client`.
pub fn download_with(
    client: &HttpClient,
    models: &ModelDir,
    model: &'static MoonshineModel,
    base_url: &str,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(), DownloadError> {
    let mut installs = Vec::new();
    let model_folder = folder(models, model);
    if !model
        .files
        .iter()
        .all(|f| runtime::has_size(&model_folder.join(f.name), f.size))
    {
        installs.push(Install {
            folder: model_folder,
            files: model.files.iter().collect(),
        });
    }
    if !runtime::has_size(&runtime::library_path(models), model.runtime.size) {
        installs.push(Install {
            folder: models.path().join(RUNTIME_FOLDER),
            files: vec![model.runtime],
        });
    }
    let mut packages: Vec<&'static Package> = Vec::new();
    for file in installs.iter().flat_map(|i| &i.files) {
        if !packages.contains(&file.package) {
            packages.push(file.package);
        }
    }
    let io_err = |err: io::Error| DownloadError::Io {
        dir: models.path().display().to_string(),
        cause: err.to_string(),
    };
    fs::create_dir_all(models.path()).map_err(io_err)?;
    let total: u64 = packages.iter().map(|p| p.size).sum();
    let mut done_before = 0;
    let mut archives = BTreeMap::new();
    for package in &packages {
        let name = package_file_name(package);
        let archive = models.path().join(format!(".{name}"));
        fetch_verified(
            client,
            &package_address(package, base_url),
            name,
            &Expected::Pinned {
                sha256: package.sha256.into(),
                size: package.size,
            },
            models,
            &mut |done, _| progress(done_before + done, total),
            |partial, _, _| partial.finish_to(&archive),
        )?;
        done_before += package.size;
        archives.insert(package.url, archive);
    }
    let result = installs
        .iter()
        .try_for_each(|install| unpack(install, &archives, models));
    for archive in archives.values() {
        let _ = fs::remove_file(archive);
    }
    result
}

/// Unpacks the files of `install` from their `archives` into a staging folder, checks each
/// against its pin, and renames the folder into place.
fn unpack(
    install: &Install,
    archives: &BTreeMap<&'static str, PathBuf>,
    models: &ModelDir,
) -> Result<(), DownloadError> {
    let io_err = |err: io::Error| DownloadError::Io {
        dir: models.path().display().to_string(),
        cause: err.to_string(),
    };
    let name = install
        .folder
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let staging = models
        .path()
        .join(format!(".{name}.{}.part", crate::files::random_suffix()));
    fs::create_dir_all(&staging).map_err(io_err)?;
    let unpacked = install.files.iter().try_for_each(|file| {
        let archive = &archives[file.package.url];
        let target = staging.join(file.name);
        let (sha256, size) =
            extract(archive, file.package.archive, file, &target).map_err(|err| {
                DownloadError::Io {
                    dir: staging.display().to_string(),
                    cause: format!(
                        "cannot unpack {} from {}: {err}",
                        file.member,
                        archive.display()
                    ),
                }
            })?;
        if size != file.size {
            return Err(DownloadError::SizeMismatch {
                file: file.name.into(),
                expected: file.size,
                received: size,
            });
        }
        if sha256 != file.sha256 {
            return Err(DownloadError::ChecksumMismatch {
                file: file.name.into(),
                origin: "pinned",
                expected: file.sha256.into(),
                actual: sha256,
            });
        }
        Ok(())
    });
    let placed = unpacked.and_then(|()| place(&staging, &install.folder).map_err(io_err));
    if placed.is_err() {
        let _ = fs::remove_dir_all(&staging);
    }
    placed
}

/// Renames the finished `staging` folder to `target`, replacing what was there.
fn place(staging: &Path, target: &Path) -> io::Result<()> {
    for file in fs::read_dir(staging)? {
        File::open(file?.path())?.sync_all()?;
    }
    if target.exists() {
        let old = staging.with_extension("old");
        fs::rename(target, &old)?;
        fs::remove_dir_all(&old)?;
    }
    fs::rename(staging, target)?;
    if let Some(parent) = target.parent() {
        File::open(parent)?.sync_all()?;
    }
    Ok(())
}

/// Copies the member of `file` out of `archive` into `target`; its SHA-256 and size. At most one
/// byte more than the pinned size is read, whatever the archive claims.
fn extract(
    archive: &Path,
    kind: Archive,
    file: &PackedFile,
    target: &Path,
) -> io::Result<(String, u64)> {
    let not_found = || io::Error::new(io::ErrorKind::NotFound, "no such member in the package");
    let copy = |reader: &mut dyn Read| copy_hashed(&mut reader.take(file.size + 1), target);
    match kind {
        Archive::TarGz => {
            let gz = flate2::read::GzDecoder::new(File::open(archive)?);
            let mut tar = tar::Archive::new(gz);
            for entry in tar.entries()? {
                let mut entry = entry?;
                if entry.path()?.to_str() == Some(file.member) {
                    return copy(&mut entry);
                }
            }
            Err(not_found())
        }
        Archive::Zip => {
            let mut zip = zip::ZipArchive::new(File::open(archive)?).map_err(io::Error::other)?;
            let mut member = match zip.by_name(file.member) {
                Ok(member) => member,
                Err(zip::result::ZipError::FileNotFound) => return Err(not_found()),
                Err(err) => return Err(io::Error::other(err)),
            };
            copy(&mut member)
        }
    }
}

fn copy_hashed(reader: &mut dyn Read, target: &Path) -> io::Result<(String, u64)> {
    let mut out = File::create(target)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut size = 0;
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        out.write_all(&buf[..n])?;
        size += n as u64;
    }
    out.sync_all()?;
    Ok((hex(&hasher.finalize()), size))
}
