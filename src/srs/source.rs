//! Where a load's bytes come from: the params file, read with `pread` (and
//! per-thread `O_DIRECT` readers where the file system takes them) with its
//! cached pages dropped behind the decode, or contents already in memory.

use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;

use crate::error::{code, Error, Result};

/// Where the bytes come from: a file, or memory (fuzzing, tests).
pub(crate) trait Source: Sync {
    fn len(&self) -> u64;
    /// Fills `buf` from byte `offset`; a short read is an error.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<()>;
    /// The bytes at `offset..offset + len` are decoded and not needed again.
    fn release(&self, _offset: u64, _len: usize) {}
    /// A reader of its own for one reader thread, for reads of at most
    /// `max_read` bytes (`None`: the thread reads through [`Source::read_at`]).
    fn reader(&self, _max_read: usize) -> Option<OwnReader<'_>> {
        None
    }
}

/// A reader thread's own `O_DIRECT` descriptor of the params file: reads
/// bypass the page cache (no copy into it, nothing to drop behind the
/// cursor), through a page-aligned buffer.
pub(crate) struct OwnReader<'a> {
    file: std::fs::File,
    path: &'a Path,
    len: u64,
    direct: Aligned,
}

/// A page-aligned buffer for `O_DIRECT` reads.
struct Aligned {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

// SAFETY: the buffer is owned by one reader and only moves with it.
unsafe impl Send for Aligned {}

const DIRECT_ALIGN: usize = 4096;

impl Aligned {
    fn new(len: usize) -> Option<Self> {
        let layout = std::alloc::Layout::from_size_align(len.max(1).next_multiple_of(DIRECT_ALIGN), DIRECT_ALIGN).ok()?;
        // SAFETY: non-zero size.
        let ptr = unsafe { std::alloc::alloc(layout) };
        (!ptr.is_null()).then_some(Aligned { ptr, layout })
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) };
    }
}

fn short_read(path: &Path, end: u64, len: u64) -> Error {
    Error::new(
        code::EIO,
        format!(
            "{}: the file ended before byte {end} while it was being read ({len} bytes when the load began): it was truncated or replaced during the load",
            path.display(),
        ),
    )
}

impl OwnReader<'_> {
    pub(super) fn read_at(&mut self, buf: &mut [u8], offset: u64) -> Result<()> {
        let end = offset + buf.len() as u64;
        let al = &self.direct;
        let first = offset / DIRECT_ALIGN as u64 * DIRECT_ALIGN as u64;
        let span = (end - first) as usize;
        let want = span.next_multiple_of(DIRECT_ALIGN);
        assert!(want <= al.layout.size(), "direct read of {want} B into {} B", al.layout.size());
        // SAFETY: the buffer holds `layout.size()` ≥ want bytes, owned here.
        let aligned = unsafe { std::slice::from_raw_parts_mut(al.ptr, want) };
        let mut got = 0;
        while got < span {
            match self.file.read_at(&mut aligned[got..], first + got as u64) {
                Ok(0) => return Err(short_read(self.path, end, self.len)),
                Ok(k) => got += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io(self.path, "read params file (O_DIRECT)", &e)),
            }
        }
        let skip = (offset - first) as usize;
        buf.copy_from_slice(&aligned[skip..skip + buf.len()]);
        Ok(())
    }
}

/// An open params file.
pub(crate) struct File<'a> {
    pub file: &'a std::fs::File,
    pub path: &'a Path,
    pub len: u64,
}

impl Source for File<'_> {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        self.file.read_exact_at(buf, offset).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                short_read(self.path, offset + buf.len() as u64, self.len)
            } else {
                Error::io(self.path, "read params file", &e)
            }
        })
    }

    /// The same open file again (`/proc/self/fd`, so a file renamed or
    /// replaced since the open is not picked up), with `O_DIRECT`; `None`
    /// where the file system refuses it (tmpfs, some FUSE), and the reader
    /// then uses the shared descriptor.
    fn reader(&self, max_read: usize) -> Option<OwnReader<'_>> {
        use std::os::unix::fs::OpenOptionsExt;
        let file =
            std::fs::OpenOptions::new().read(true).custom_flags(libc::O_DIRECT).open(format!("/proc/self/fd/{}", self.file.as_raw_fd())).ok()?;
        let direct = Aligned::new(max_read + 2 * DIRECT_ALIGN)?;
        Some(OwnReader { file, path: self.path, len: self.len, direct })
    }

    fn release(&self, offset: u64, len: usize) {
        // Advice only: a failure leaves the pages to the kernel's reclaim.
        // SAFETY: plain syscall on an open descriptor.
        unsafe { libc::posix_fadvise(self.file.as_raw_fd(), offset as libc::off_t, len as libc::off_t, libc::POSIX_FADV_DONTNEED) };
    }
}

/// Contents already in memory.
pub(crate) struct Memory<'a>(pub &'a [u8]);

impl Source for Memory<'_> {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }

    fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        let at = offset as usize;
        buf.copy_from_slice(&self.0[at..at + buf.len()]);
        Ok(())
    }
}
