//! Writing files on the host through semihosting (QEMU with
//! `-semihosting-config enable=on,target=native`: relative to QEMU's working directory).

use core::fmt;

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

/// A host file open for writing, with a small buffer: text can be written to it line by line
/// ([`fmt::Write`]) at the cost of one semihosting call per buffer.
pub struct HostFile {
    fd: usize,
    buf: [u8; 4096],
    len: usize,
    error: Option<HostFileError>,
}

impl HostFile {
    /// Creates (or truncates) the host file `name` (NUL-terminated, e.g. `"flash.img\0"`).
    ///
    /// # Errors
    /// As [`HostFileError`] says.
    pub fn create(name: &str) -> Result<Self, HostFileError> {
        let bytes = name.as_bytes();
        if bytes.last() != Some(&0) {
            return Err(HostFileError::NotNulTerminated);
        }
        // SAFETY: the argument block is (pointer to a NUL-terminated name, mode, length of the
        // name without the NUL), as SYS_OPEN requires; the name outlives the call.
        let fd = unsafe {
            syscall!(
                OPEN,
                bytes.as_ptr(),
                nr::open::W_TRUNC_BINARY,
                bytes.len() - 1
            )
        };
        if (fd as isize) < 0 {
            return Err(HostFileError::Open);
        }
        Ok(Self {
            fd,
            buf: [0; 4096],
            len: 0,
            error: None,
        })
    }

    /// Writes `data` (through the buffer).
    pub fn write(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            if self.len == self.buf.len() {
                self.flush();
            }
            let take = data.len().min(self.buf.len() - self.len);
            if let (Some(dst), Some(src)) = (
                self.buf.get_mut(self.len..self.len + take),
                data.get(..take),
            ) {
                dst.copy_from_slice(src);
            }
            self.len += take;
            data = data.get(take..).unwrap_or_default();
        }
    }

    /// Hands the buffered bytes to the host.
    fn flush(&mut self) {
        let mut rest = self.buf.get(..self.len).unwrap_or_default();
        while !rest.is_empty() {
            // SAFETY: (handle, pointer, length) of a live buffer, as SYS_WRITE requires. It
            // returns the number of bytes *not* written.
            let left = unsafe { syscall!(WRITE, self.fd, rest.as_ptr(), rest.len()) };
            if left >= rest.len() {
                self.error.get_or_insert(HostFileError::Write);
                break;
            }
            rest = rest.get(rest.len() - left..).unwrap_or_default();
        }
        self.len = 0;
    }

    /// Writes what is buffered and closes the file.
    ///
    /// # Errors
    /// [`HostFileError::Write`] if the host did not take every byte written.
    pub fn close(mut self) -> Result<(), HostFileError> {
        self.flush();
        // SAFETY: closes the handle opened by `create`; the argument block is the handle.
        unsafe { syscall!(CLOSE, self.fd) };
        self.error.map_or(Ok(()), Err)
    }
}

impl fmt::Write for HostFile {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.write(s.as_bytes());
        Ok(())
    }
}

/// Creates (or truncates) the host file `name` (NUL-terminated) and writes `data` to it.
///
/// # Errors
/// As [`HostFileError`] says.
pub fn write_file(name: &str, data: &[u8]) -> Result<(), HostFileError> {
    let mut file = HostFile::create(name)?;
    file.write(data);
    file.close()
}
