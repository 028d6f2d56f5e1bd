//! The reference library, loaded at run time for same-run comparisons:
//! `libupstream_ref.so` from `scripts/build-upstream-reference.sh` (the
//! published supraseal-c2 0.1.2 behind `upstream_*` entry points). It is a
//! separate shared object, so its symbols never mix with ours.

use std::ffi::{c_char, c_void, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use anyhow::{bail, Context, Result};
use blstrs::Scalar;

use supraseal_c2::{groth16_proof, CAssignment};

use crate::collector::Witness;

type CreateSrs = unsafe extern "C" fn(*const c_char, bool, *mut *mut c_void, *mut c_char, usize) -> i32;
type DropSrs = unsafe extern "C" fn(*mut c_void);
type Prove = unsafe extern "C" fn(
    *const c_void,
    usize,
    *const Scalar,
    *const Scalar,
    *mut groth16_proof,
    *const c_void,
    *mut c_char,
    usize,
) -> i32;

/// The loaded reference library.
pub struct Upstream {
    create_srs: CreateSrs,
    drop_srs: DropSrs,
    prove: Prove,
    _lib: libloading::Library,
}

/// A params handle of the reference library.
pub struct UpstreamSrs<'a> {
    lib: &'a Upstream,
    ptr: *mut c_void,
}

// SAFETY: the reference's SRS is reference counted and shared by its
// proving threads (its own Rust wrapper marks it Send + Sync).
unsafe impl Send for UpstreamSrs<'_> {}
unsafe impl Sync for UpstreamSrs<'_> {}

fn message(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

impl Upstream {
    /// Loads `path` and its three entry points.
    pub fn load(path: &Path) -> Result<Upstream> {
        // A bare name would go through the dynamic loader's search path,
        // not the current folder.
        let path = if path.components().count() == 1 && path.is_relative() { Path::new(".").join(path) } else { path.to_path_buf() };
        // SAFETY: the library's initialisers are the crate's (static mutex,
        // sppark's GPU table); loading it runs nothing else.
        let lib = unsafe { libloading::Library::new(&path) }.with_context(|| format!("loading the reference library {}", path.display()))?;
        // SAFETY: the symbols have these signatures (bench/upstream/src/lib.rs).
        unsafe {
            let create_srs = *lib.get::<CreateSrs>(b"upstream_create_srs\0")?;
            let drop_srs = *lib.get::<DropSrs>(b"upstream_drop_srs\0")?;
            let prove = *lib.get::<Prove>(b"upstream_prove\0")?;
            Ok(Upstream { create_srs, drop_srs, prove, _lib: lib })
        }
    }

    /// `SRS::try_new(path, false)` of the reference, then the wait for its
    /// points: 0.1.2's `create_SRS` maps the file, allocates its page-locked
    /// buffer and returns while a thread of its own decodes the points into
    /// that buffer (the first proving call blocks until it is done). That
    /// thread's last act is unmapping the file, so the key is usable once
    /// `/proc/self/maps` no longer lists the file.
    pub fn open_and_wait(&self, path: &Path) -> Result<(UpstreamSrs<'_>, UpstreamLoad)> {
        let t = std::time::Instant::now();
        let srs = self.open(path)?;
        let load = wait_decoded(path, t)?;
        Ok((srs, load))
    }

    /// `SRS::try_new(path, false)` of the reference (returns before its
    /// points are decoded: see [`Upstream::open_and_wait`]).
    pub fn open(&self, path: &Path) -> Result<UpstreamSrs<'_>> {
        let c = CString::new(path.as_os_str().as_bytes())?;
        let mut ptr = std::ptr::null_mut();
        let mut err = vec![0u8; 1024];
        // SAFETY: valid C string, writable out pointer and buffer.
        let rc = unsafe { (self.create_srs)(c.as_ptr(), false, &mut ptr, err.as_mut_ptr() as *mut c_char, err.len()) };
        if rc != 0 {
            bail!("upstream create_SRS({}): {}", path.display(), message(&err));
        }
        Ok(UpstreamSrs { lib: self, ptr })
    }
}

/// The reference's load, in seconds from the call.
#[derive(Clone, Copy, Debug)]
pub struct UpstreamLoad {
    /// `create_SRS` returned (file mapped, page-locked buffer allocated).
    pub returned_s: f64,
    /// Its background decode ended (the file unmapped): the key is usable.
    pub usable_s: f64,
    /// The file was seen mapped after `create_SRS` returned. `false`: the
    /// decode had ended already (a small file), or the mapping could not be
    /// recognised, and `usable_s` is only the first look.
    pub seen: bool,
}

impl UpstreamLoad {
    /// How the end of the decode was observed, for the reports.
    pub fn how(&self) -> &'static str {
        if self.seen {
            "its background decode ended (the file unmapped)"
        } else {
            "no mapping of the file seen after create_SRS returned: the decode had ended, or its mapping was not recognised"
        }
    }
}

/// Whether `/proc/self/maps` has a mapping of the file: its `(dev, ino)`,
/// or its resolved path (an overlay file system shows the underlying
/// file's device and inode there, and the overlay's path).
fn mapped(dev: u64, ino: u64, resolved: &str) -> Result<bool> {
    let maps = std::fs::read_to_string("/proc/self/maps").context("reading /proc/self/maps")?;
    // Each line: range perms offset major:minor inode [path]; the kernel
    // prints major and minor as %02x.
    let want_dev = format!("{:02x}:{:02x}", libc::major(dev), libc::minor(dev));
    Ok(maps.lines().any(|l| {
        let mut f = l.split_whitespace().skip(3);
        let same_inode = f.next() == Some(want_dev.as_str()) && f.next().and_then(|i| i.parse::<u64>().ok()) == Some(ino);
        same_inode || l.ends_with(resolved)
    }))
}

/// After the reference's `create_SRS(path)` returned (called at `since`):
/// waits for its background decode (see [`Upstream::open_and_wait`]).
pub fn wait_decoded(path: &Path, since: std::time::Instant) -> Result<UpstreamLoad> {
    let returned_s = since.elapsed().as_secs_f64();
    let seen = wait_unmapped(path)?;
    Ok(UpstreamLoad { returned_s, usable_s: since.elapsed().as_secs_f64(), seen })
}

/// Waits until no mapping of `path` is left in this process (polled every
/// 20 ms: a read of /proc/self/maps costs ~1 ms of CPU, which counts in
/// the reference's CPU time; at most an hour). Returns whether a mapping
/// was seen at all.
fn wait_unmapped(path: &Path) -> Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).with_context(|| format!("stat {}", path.display()))?;
    let resolved = std::fs::canonicalize(path).map(|p| format!(" {}", p.display())).unwrap_or_else(|_| "\0".into());
    let t = std::time::Instant::now();
    let mut seen = false;
    while mapped(m.dev(), m.ino(), &resolved)? {
        seen = true;
        if t.elapsed() > std::time::Duration::from_secs(3600) {
            bail!("upstream still maps {} after an hour: its background decode did not end", path.display());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Ok(seen)
}

impl UpstreamSrs<'_> {
    /// The reference's `generate_groth16_proofs` on `witnesses` with r, s.
    pub fn prove(&self, witnesses: &[&Witness], r: &[Scalar], s: &[Scalar]) -> Result<Vec<groth16_proof>, String> {
        assert!(r.len() == witnesses.len() && s.len() == witnesses.len());
        let provers: Vec<CAssignment> = witnesses.iter().map(|w| w.assignment()).collect();
        let mut proofs = vec![groth16_proof::default(); witnesses.len()];
        let mut err = vec![0u8; 1024];
        // SAFETY: arrays of witnesses.len() elements that outlive the call;
        // the reference's Assignment has our CAssignment's layout.
        let rc = unsafe {
            (self.lib.prove)(
                provers.as_ptr() as *const c_void,
                provers.len(),
                r.as_ptr(),
                s.as_ptr(),
                proofs.as_mut_ptr(),
                self.ptr,
                err.as_mut_ptr() as *mut c_char,
                err.len(),
            )
        };
        if rc != 0 {
            return Err(format!("upstream: {}", message(&err)));
        }
        Ok(proofs)
    }
}

impl Drop for UpstreamSrs<'_> {
    fn drop(&mut self) {
        // SAFETY: a handle from upstream_create_srs, released once.
        unsafe { (self.lib.drop_srs)(self.ptr) }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::io::AsRawFd;
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};

    use super::*;

    /// Maps `len` bytes of `file` read-only, as upstream maps a params file.
    fn map(file: &std::fs::File, len: usize) -> usize {
        // SAFETY: a new read-only private mapping of an open file, unmapped by the test.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_PRIVATE, file.as_raw_fd(), 0) };
        assert_ne!(p, libc::MAP_FAILED);
        p as usize
    }

    #[test]
    fn the_wait_ends_only_after_the_mapping_is_gone() {
        let path = std::env::temp_dir().join(format!("upstream-wait-{}.bin", std::process::id()));
        std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let at = map(&file, 1 << 20);
        let unmapping = AtomicBool::new(false);
        let seen = std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(100));
                unmapping.store(true, SeqCst);
                // SAFETY: the mapping made above, unmapped once.
                unsafe { libc::munmap(at as *mut libc::c_void, 1 << 20) };
            });
            wait_unmapped(&path).unwrap()
        });
        assert!(seen, "the mapping was there when the wait began");
        assert!(unmapping.load(SeqCst), "the wait returned before the file was unmapped");
        // Nothing maps it now: the wait returns at once, saying it saw nothing.
        assert!(!wait_unmapped(&path).unwrap());
        std::fs::remove_file(&path).unwrap();
    }
}
