//! Free space on the file system of the models folder, checked before a download starts so a
//! full disk is reported up front rather than gigabytes into the transfer.

use std::io;
use std::path::Path;

/// Bytes an unprivileged process may still write on the file system holding `dir`.
#[cfg(unix)]
pub fn free_bytes(dir: &Path) -> io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: statvfs only writes the struct it is given; the path is a valid C string.
    let mut stats: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(path.as_ptr(), &mut stats) } != 0 {
        return Err(io::Error::last_os_error());
    }
    #[allow(clippy::unnecessary_cast)] // the field widths differ between platforms
    Ok((stats.f_bavail as u64).saturating_mul(stats.f_frsize as u64))
}

#[cfg(not(unix))]
pub fn free_bytes(_dir: &Path) -> io::Result<u64> {
    Ok(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_has_some_free_space_and_a_missing_one_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(free_bytes(tmp.path()).unwrap() > 0);
        assert!(free_bytes(&tmp.path().join("missing")).is_err());
    }
}
