//! ONNX Runtime, opened at run time from the models folder (`onnxruntime-1.31.1/`), once per
//! process: ort allows one environment, and a library once loaded stays. Until the library is
//! installed every Moonshine request says so; after installing it, the next request opens it.
//! The pinned library is an x86-64 glibc build: elsewhere Moonshine is unavailable, with the
//! reason ([`host_problem`]), and nothing is downloaded or opened.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use ort::environment::Environment;

use super::catalog::{RUNTIME, RUNTIME_FOLDER};
use crate::engine::EngineError;
use crate::engine::models::ModelDir;

static ENVIRONMENT: OnceLock<Environment> = OnceLock::new();
/// Held while the library is being opened, so two requests never race to open it.
static OPENING: Mutex<()> = Mutex::new(());

/// The platform of the pinned library (the wheel's tag `manylinux_2_28_x86_64`).
const RUNTIME_ARCH: &str = "x86_64";
const RUNTIME_GLIBC: (u32, u32) = (2, 28);

/// Why the pinned library cannot load on this machine (another processor, another C library
/// or an older glibc); None where it can.
pub fn host_problem() -> Option<String> {
    problem_on(std::env::consts::ARCH, glibc_version())
}

/// [`host_problem`] for a processor `arch` and a glibc version (None: another C library).
pub fn problem_on(arch: &str, glibc: Option<(u32, u32)>) -> Option<String> {
    let pinned = "the ONNX Runtime build Verbatim pins (onnxruntime 1.31.1, manylinux_2_28_x86_64)";
    let (major, minor) = RUNTIME_GLIBC;
    if arch != RUNTIME_ARCH {
        return Some(format!(
            "{pinned} runs on x86-64 Linux only, and this machine is {arch}"
        ));
    }
    match glibc {
        None => Some(format!(
            "{pinned} needs the GNU C library {major}.{minor} or newer, and this program runs on another C library"
        )),
        Some(found) if found < RUNTIME_GLIBC => Some(format!(
            "{pinned} needs the GNU C library {major}.{minor} or newer, and this machine has {}.{}",
            found.0, found.1
        )),
        Some(_) => None,
    }
}

/// The running GNU C library's version; None under another C library.
fn glibc_version() -> Option<(u32, u32)> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: gnu_get_libc_version returns a static, NUL-terminated string.
        let version = unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) };
        let mut parts = version.to_str().ok()?.split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        Some((major, minor))
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    None
}

/// Where the library lives in `models`.
pub fn library_path(models: &ModelDir) -> PathBuf {
    models.path().join(RUNTIME_FOLDER).join(RUNTIME.name)
}

/// The library is in place with its pinned size.
pub fn is_installed(models: &ModelDir) -> bool {
    has_size(&library_path(models), RUNTIME.size)
}

pub fn has_size(path: &Path, size: u64) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == size)
}

/// The process's ONNX Runtime environment, opening the library on first use.
pub fn environment(models: &ModelDir) -> Result<&'static Environment, EngineError> {
    if let Some(environment) = ENVIRONMENT.get() {
        return Ok(environment);
    }
    let _opening = OPENING.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(environment) = ENVIRONMENT.get() {
        return Ok(environment);
    }
    if let Some(problem) = host_problem() {
        return Err(EngineError::Unsupported(format!(
            "Moonshine cannot run here: {problem}."
        )));
    }
    let path = library_path(models);
    if !is_installed(models) {
        return Err(EngineError::NotInstalled {
            model: format!("ONNX Runtime ({RUNTIME_FOLDER})"),
            path,
        });
    }
    let load = |cause: String| EngineError::Load {
        path: path.clone(),
        cause,
    };
    let builder = ort::init_from(&path).map_err(|err| load(err.to_string()))?;
    let environment = builder
        .with_name("verbatim")
        .build()
        .map_err(|err| load(err.to_string()))?;
    tracing::info!("opened ONNX Runtime from {}", path.display());
    Ok(ENVIRONMENT.get_or_init(|| environment))
}

#[cfg(test)]
mod host_tests {
    use super::*;

    #[test]
    fn another_processor_another_c_library_or_an_old_glibc_is_told_why() {
        assert_eq!(problem_on("x86_64", Some((2, 36))), None);
        assert_eq!(problem_on("x86_64", Some((2, 28))), None);
        let arm = problem_on("aarch64", Some((2, 36))).unwrap();
        assert!(
            arm.contains("x86-64 Linux only") && arm.contains("aarch64"),
            "{arm}"
        );
        let musl = problem_on("x86_64", None).unwrap();
        assert!(musl.contains("another C library"), "{musl}");
        let old = problem_on("x86_64", Some((2, 27))).unwrap();
        assert!(old.contains("has 2.27"), "{old}");
    }

    #[test]
    fn this_machine_runs_the_pinned_library() {
        if cfg!(all(target_arch = "x86_64", target_env = "gnu")) {
            assert_eq!(host_problem(), None);
        }
    }
}
