//! The crate's error type: an errno-style code plus a message that says what
//! was wrong and where (function, argument, expected vs got).
//!
//! Codes follow docs/ARCHITECTURE.md §2: `EINVAL` for bad arguments and malformed files,
//! `ENOENT`/`EIO` for params-file access, `ENOMEM` for host memory, `ENODEV`
//! when a GPU was demanded and none is usable, `EBADMSG` when the
//! `SUPRASEAL_C2_VERIFY` self-check rejects a proof. CUDA failures (GPU backend) carry
//! the CUDA error number. The two numberings overlap (`ENOENT` and
//! `CUDA_ERROR_OUT_OF_MEMORY` are both 2, `EINTR` and
//! `CUDA_ERROR_NOT_INITIALIZED` both 3, …), so C callers read the code
//! together with the message; Rust callers ask [`Error::kind`], which knows
//! which numbering a code is in.

use std::fmt;

/// errno values used as error codes (Linux numbering, which is what the
/// reference's callers compare against).
pub mod code {
    pub const ENOENT: i32 = libc::ENOENT;
    pub const EIO: i32 = libc::EIO;
    pub const ENOMEM: i32 = libc::ENOMEM;
    pub const EINVAL: i32 = libc::EINVAL;
    pub const ENODEV: i32 = libc::ENODEV;
    pub const EBUSY: i32 = libc::EBUSY;
    /// Returned when `SUPRASEAL_C2_VERIFY` is on and a proof does not verify.
    pub const EBADMSG: i32 = libc::EBADMSG;
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
    /// Whether `code` is a CUDA error number (else an errno value).
    cuda: bool,
}

/// What kind of failure an [`Error`] is, whichever numbering its code is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// `EINVAL`: a bad argument, a size mismatch, a malformed file or switch.
    InvalidInput,
    /// `ENOENT`: the params file does not exist.
    NotFound,
    /// `EIO` or another errno from reading the params file.
    Io,
    /// `ENOMEM`: host memory could not be reserved.
    OutOfHostMemory,
    /// `ENODEV`: a GPU was demanded and none is usable.
    NoDevice,
    /// `EBUSY`: the device was left to proving calls (the params check).
    Busy,
    /// `EFAULT`: a panic caught at the ABI boundary (a bug in this library).
    Internal,
    /// `EBADMSG`: `SUPRASEAL_C2_VERIFY` is on and a proof did not verify
    /// (a witness that does not satisfy its circuit, or a wrong computation).
    ProofRejected,
    /// `CUDA_ERROR_OUT_OF_MEMORY`: the device (or the pretended card of
    /// `SUPRASEAL_C2_VRAM_LIMIT_MB`, or an injected fault) had no room.
    DeviceOutOfMemory,
    /// Any other CUDA error (the code is its number).
    Device,
}

impl Error {
    /// Builds an error with an explicit code.
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        debug_assert!(code != 0);
        Self { code, message: message.into(), cuda: false }
    }

    /// An error carrying the CUDA error number `code` (a driver result, or
    /// `CUDA_ERROR_OUT_OF_MEMORY` from admission).
    pub fn cuda(code: i32, message: impl Into<String>) -> Self {
        Self { cuda: true, ..Self::new(code, message) }
    }

    /// The same error with another message (the code and its numbering kept).
    pub fn with_message(self, message: impl Into<String>) -> Self {
        Self { message: message.into(), ..self }
    }

    /// Which kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        const CUDA_ERROR_OUT_OF_MEMORY: i32 = 2;
        match (self.cuda, self.code) {
            (true, CUDA_ERROR_OUT_OF_MEMORY) => ErrorKind::DeviceOutOfMemory,
            (true, _) => ErrorKind::Device,
            (false, code::EINVAL) => ErrorKind::InvalidInput,
            (false, code::ENOENT) => ErrorKind::NotFound,
            (false, code::ENOMEM) => ErrorKind::OutOfHostMemory,
            (false, code::ENODEV) => ErrorKind::NoDevice,
            (false, code::EBUSY) => ErrorKind::Busy,
            (false, code::EFAULT) => ErrorKind::Internal,
            (false, code::EBADMSG) => ErrorKind::ProofRejected,
            (false, _) => ErrorKind::Io,
        }
    }

    /// The code by name: `ENOENT`, `errno 123` for an errno without one
    /// here, `CUDA error 700` for a CUDA error number.
    pub fn code_name(&self) -> String {
        if self.cuda {
            return format!("CUDA error {}", self.code);
        }
        errno_name(self.code).map_or_else(|| format!("errno {}", self.code), str::to_string)
    }

    /// `EINVAL`: a bad argument, a size mismatch or a malformed file.
    pub fn invalid(message: impl fmt::Display) -> Self {
        Self::new(code::EINVAL, message.to_string())
    }

    /// `ENODEV`: a GPU was demanded and none is usable.
    pub fn no_device(message: impl fmt::Display) -> Self {
        Self::new(code::ENODEV, message.to_string())
    }

    /// `EBADMSG`: the self-check rejected a proof (`SUPRASEAL_C2_VERIFY`).
    pub fn proof_rejected(message: impl fmt::Display) -> Self {
        Self::new(code::EBADMSG, message.to_string())
    }

    /// `ENOMEM`: host memory could not be reserved.
    pub fn no_memory(message: impl fmt::Display) -> Self {
        Self::new(code::ENOMEM, message.to_string())
    }

    /// Maps an I/O error on `path` to `ENOENT`, `EIO` or the OS errno; the
    /// message names the errno (`No such file or directory (ENOENT)`).
    pub fn io(path: &std::path::Path, what: &str, err: &std::io::Error) -> Self {
        let code = match err.kind() {
            std::io::ErrorKind::NotFound => code::ENOENT,
            _ => err.raw_os_error().unwrap_or(code::EIO),
        };
        let why = match err.raw_os_error() {
            // io::Error's text ends in " (os error N)": the name says more.
            Some(n) => {
                let text = err.to_string();
                let text = text.strip_suffix(&format!(" (os error {n})")).unwrap_or(&text).to_string();
                match errno_name(n) {
                    Some(name) => format!("{text} ({name})"),
                    None => format!("{text} (errno {n})"),
                }
            }
            None => err.to_string(),
        };
        Self::new(code, format!("{}: cannot {what}: {why}", path.display()))
    }
}

/// The symbolic name of an errno value (Linux numbering), for the codes this
/// library returns and the ones file access can give: `ENOENT` for 2. `None`
/// for others (and for CUDA error numbers, which overlap: see the module docs).
pub fn errno_name(code: i32) -> Option<&'static str> {
    Some(match code {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EINTR => "EINTR",
        libc::EIO => "EIO",
        libc::ENXIO => "ENXIO",
        libc::EBADF => "EBADF",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::ENODEV => "ENODEV",
        libc::ENOTDIR => "ENOTDIR",
        libc::EISDIR => "EISDIR",
        libc::EINVAL => "EINVAL",
        libc::ENFILE => "ENFILE",
        libc::EMFILE => "EMFILE",
        libc::EFBIG => "EFBIG",
        libc::ENOSPC => "ENOSPC",
        libc::ESPIPE => "ESPIPE",
        libc::EROFS => "EROFS",
        libc::ENAMETOOLONG => "ENAMETOOLONG",
        libc::ELOOP => "ELOOP",
        libc::EOVERFLOW => "EOVERFLOW",
        libc::ESTALE => "ESTALE",
        libc::EBADMSG => "EBADMSG",
        _ => return None,
    })
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

/// A caught panic's message (`&str` or `String` payloads), else "unknown panic".
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_tells_the_two_numberings_apart() {
        let missing = Error::io(std::path::Path::new("/x"), "open", &std::io::Error::from(std::io::ErrorKind::NotFound));
        let oom = Error::cuda(2, "CUDA error in alloc");
        assert_eq!((missing.code, oom.code), (2, 2), "the collision the kind resolves");
        assert_eq!(missing.kind(), ErrorKind::NotFound);
        assert_eq!(oom.kind(), ErrorKind::DeviceOutOfMemory);
        assert_eq!(Error::cuda(700, "illegal address").kind(), ErrorKind::Device);
        assert_eq!(Error::invalid("x").kind(), ErrorKind::InvalidInput);
        assert_eq!(Error::no_device("x").kind(), ErrorKind::NoDevice);
        assert_eq!(Error::no_memory("x").kind(), ErrorKind::OutOfHostMemory);
        assert_eq!(Error::proof_rejected("x").kind(), ErrorKind::ProofRejected);
        assert_eq!(Error::new(code::EIO, "x").kind(), ErrorKind::Io);
        assert_eq!(oom.clone().with_message("again").kind(), ErrorKind::DeviceOutOfMemory, "a new message keeps the numbering");
        assert_eq!((missing.code_name(), oom.code_name()), ("ENOENT".to_string(), "CUDA error 2".to_string()));
        assert_eq!(Error::new(4095, "x").code_name(), "errno 4095");
        assert_eq!(Error::proof_rejected("x").code_name(), "EBADMSG", "every code the library returns has its name");
    }

    #[test]
    fn io_errors_name_the_errno_once() {
        let e = Error::io(std::path::Path::new("/nowhere/x.params"), "stat params file", &std::io::Error::from_raw_os_error(libc::ENOENT));
        assert_eq!(e.message, "/nowhere/x.params: cannot stat params file: No such file or directory (ENOENT)");
        let e = Error::io(std::path::Path::new("/x"), "open params file", &std::io::Error::from_raw_os_error(libc::EACCES));
        assert!(e.message.ends_with("Permission denied (EACCES)") && e.code == libc::EACCES, "{}", e.message);
        assert!(!e.message.contains("os error"), "{}", e.message);
    }
}
