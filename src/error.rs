//! The crate's error type: an errno-style code plus a message that says what
//! was wrong and where (function, argument, expected vs got).
//!
//! Codes follow docs/ARCHITECTURE.md §2: `EINVAL` for bad arguments and malformed files,
//! `ENOENT`/`EIO` for params-file access, `ENOMEM` for host memory, `ENODEV`
//! when a GPU was demanded and none is usable. CUDA failures (GPU backend) carry
//! the CUDA error number.

use std::fmt;

/// errno values used as error codes (Linux numbering, which is what the
/// reference's callers compare against).
pub mod code {
    pub const ENOENT: i32 = libc::ENOENT;
    pub const EIO: i32 = libc::EIO;
    pub const ENOMEM: i32 = libc::ENOMEM;
    pub const EINVAL: i32 = libc::EINVAL;
    pub const ENODEV: i32 = libc::ENODEV;
    /// Returned when a Rust panic was caught at the ABI boundary; it is a bug.
    pub const EFAULT: i32 = libc::EFAULT;
}

/// An error with a numeric code (errno or CUDA error number) and a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (code {code})")]
pub struct Error {
    /// errno value (see [`code`]) or a CUDA error number; never 0.
    pub code: i32,
    /// Human-readable description naming the argument and expected vs actual value.
    pub message: String,
}

impl Error {
    /// Builds an error with an explicit code.
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        debug_assert!(code != 0);
        Self { code, message: message.into() }
    }

    /// `EINVAL`: a bad argument, a size mismatch or a malformed file.
    pub fn invalid(message: impl fmt::Display) -> Self {
        Self::new(code::EINVAL, message.to_string())
    }

    /// `ENODEV`: a GPU was demanded and none is usable.
    pub fn no_device(message: impl fmt::Display) -> Self {
        Self::new(code::ENODEV, message.to_string())
    }

    /// `ENOMEM`: host memory could not be reserved.
    pub fn no_memory(message: impl fmt::Display) -> Self {
        Self::new(code::ENOMEM, message.to_string())
    }

    /// Maps an I/O error on `path` to `ENOENT`, `EIO` or the OS errno.
    pub fn io(path: &std::path::Path, what: &str, err: &std::io::Error) -> Self {
        let code = match err.kind() {
            std::io::ErrorKind::NotFound => code::ENOENT,
            _ => err.raw_os_error().unwrap_or(code::EIO),
        };
        Self::new(code, format!("{}: cannot {what}: {err}", path.display()))
    }
}

/// An empty vector with room for `n` elements, or `ENOMEM` naming `what`
/// when the reservation fails. Every vector whose length comes from a
/// caller goes through here: `Vec::with_capacity` aborts the process when
/// the allocation fails.
pub fn try_vec<T>(n: usize, what: impl fmt::Display) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        Error::no_memory(format!(
            "{what}: cannot reserve {n} elements of {} bytes in host memory",
            std::mem::size_of::<T>()
        ))
    })?;
    Ok(v)
}

/// Shorthand for results carrying [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
