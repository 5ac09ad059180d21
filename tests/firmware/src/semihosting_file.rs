//! Writing a file on the host through semihosting (QEMU with
//! `-semihosting-config enable=on,target=native`: relative to QEMU's working directory).

use cortex_m_semihosting::{nr, syscall};

/// Why writing the file failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostFileError {
    /// The name does not end with a NUL byte.
    NotNulTerminated,
    /// The host could not open the file.
    Open,
    /// The host did not take every byte.
    Write,
}

/// Creates (or truncates) the host file `name` (NUL-terminated, e.g. `"flash.img\0"`) and writes
/// `data` to it.
///
/// # Errors
/// As [`HostFileError`] says.
pub fn write_file(name: &str, data: &[u8]) -> Result<(), HostFileError> {
    let bytes = name.as_bytes();
    if bytes.last() != Some(&0) {
        return Err(HostFileError::NotNulTerminated);
    }
    // SAFETY: the argument block is (pointer to a NUL-terminated name, mode, length of the name
    // without the NUL), as SYS_OPEN requires; the name outlives the call.
    let fd = unsafe {
        syscall!(
            OPEN,
            bytes.as_ptr(),
            nr::open::W_TRUNC_BINARY,
            bytes.len() - 1
        )
    } as isize;
    if fd < 0 {
        return Err(HostFileError::Open);
    }
    let mut result = Ok(());
    let mut rest = data;
    while !rest.is_empty() {
        // SAFETY: (handle, pointer, length) of a live buffer, as SYS_WRITE requires. It returns
        // the number of bytes *not* written.
        let left = unsafe { syscall!(WRITE, fd, rest.as_ptr(), rest.len()) };
        if left >= rest.len() {
            result = Err(HostFileError::Write);
            break;
        }
        rest = rest.get(rest.len() - left..).unwrap_or_default();
    }
    // SAFETY: closes the handle opened above; the argument block is the handle.
    unsafe { syscall!(CLOSE, fd) };
    result
}
