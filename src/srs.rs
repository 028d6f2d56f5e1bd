//! The params (SRS) file: parsing, point validation and the handle cache.
//!
//! Format (DESIGN §3; bellperson's `Parameters::write`), all integers
//! big-endian: `alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2`, then
//! six length-prefixed vectors, each a `u32` count followed by the points:
//! `ic`, `h`, `l`, `a`, `b_g1` (G1, 96-byte uncompressed encodings) and `b_g2`
//! (G2, 192-byte uncompressed encodings). `ic` is only length-checked (the
//! verifier needs it, the prover does not).
//!
//! Every length is checked exactly against the file before anything is
//! allocated, every point is decoded with blst and checked to be on the curve
//! and in the prime-order subgroup (in parallel with rayon), and the file must
//! end right after `b_g2`. The file is read through `mmap`, so loading never
//! holds more than the decoded points (about half the file size) in RAM.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use blst::{
    blst_p1_affine, blst_p1_affine_in_g1, blst_p1_deserialize, blst_p2_affine,
    blst_p2_affine_in_g2, blst_p2_deserialize, BLST_ERROR,
};
use blstrs::{G1Affine, G2Affine};
use rayon::prelude::*;

use crate::error::{Error, Result};

/// Bytes of one uncompressed G1 point in the file.
pub const G1_BYTES: usize = 96;
/// Bytes of one uncompressed G2 point in the file.
pub const G2_BYTES: usize = 192;

/// The proving key: the verifying-key points the epilogue needs and the five
/// query vectors, all decoded to affine points in Montgomery form.
pub struct Srs {
    /// Page-locking of the query vectors (h, l, a, b_g1, b_g2) for GPU uploads (DESIGN §3:
    /// points in pinned host memory when a GPU is in use), made once by the
    /// first GPU call (`gpu::stage`). Declared first so that it is dropped,
    /// unregistering the memory, before the vectors are freed.
    #[cfg_attr(not(supraseal_gpu), allow(dead_code))]
    pub(crate) host_pin: std::sync::OnceLock<Box<dyn std::any::Any + Send + Sync>>,
    /// The file this key was read from (as given to [`Srs::load`]).
    pub path: PathBuf,
    /// That file's resolved path when it was opened (what `evict_SRS`
    /// removes from the cache, whatever a `chdir` or a symlink did since).
    pub(crate) resolved: std::sync::OnceLock<PathBuf>,
    pub alpha_g1: G1Affine,
    pub beta_g1: G1Affine,
    pub beta_g2: G2Affine,
    pub delta_g1: G1Affine,
    pub delta_g2: G2Affine,
    /// `n - 1` points for the quotient polynomial H (n = domain size).
    pub h: Vec<G1Affine>,
    /// One point per aux variable.
    pub l: Vec<G1Affine>,
    /// Inputs first (all of them), then aux variables with the A-density bit set.
    pub a: Vec<G1Affine>,
    /// Inputs with the B-input-density bit, then aux with the B-aux-density bit.
    pub b_g1: Vec<G1Affine>,
    /// Same selection as `b_g1`, in G2.
    pub b_g2: Vec<G2Affine>,
}

impl std::fmt::Debug for Srs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Srs")
            .field("path", &self.path)
            .field("h", &self.h.len())
            .field("l", &self.l.len())
            .field("a", &self.a.len())
            .field("b_g1", &self.b_g1.len())
            .field("b_g2", &self.b_g2.len())
            .finish()
    }
}

/// Number of loaded keys alive in the process (cache entries and handles
/// share one); for leak checks in tests and diagnostics.
static LIVE_KEYS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How many loaded keys are alive right now.
pub fn live_keys() -> usize {
    LIVE_KEYS.load(std::sync::atomic::Ordering::SeqCst)
}

impl Drop for Srs {
    fn drop(&mut self) {
        LIVE_KEYS.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Srs {
    /// log2 of the evaluation domain: `k = ceil(log2(h.len() + 1))`.
    pub fn lg_domain_size(&self) -> u32 {
        (self.h.len() + 1).next_power_of_two().trailing_zeros()
    }

    /// Domain size `n = 2^k` (element count).
    pub fn domain_size(&self) -> usize {
        1usize << self.lg_domain_size()
    }

    /// A key assembled in memory from its parts, for shapes no params file
    /// exists for (the benchmark's synthetic 2^24 key). The points are taken
    /// as given: nothing is checked, and proofs made with a key whose parts
    /// do not come from one trusted setup do not verify. Vector lengths as in
    /// the fields' docs (h: n − 1 points; l: one per aux variable; a, b_g1,
    /// b_g2: selected by the densities the witnesses will carry).
    #[allow(clippy::too_many_arguments)]
    pub fn from_parts(
        path: PathBuf,
        alpha_g1: G1Affine,
        beta_g1: G1Affine,
        beta_g2: G2Affine,
        delta_g1: G1Affine,
        delta_g2: G2Affine,
        h: Vec<G1Affine>,
        l: Vec<G1Affine>,
        a: Vec<G1Affine>,
        b_g1: Vec<G1Affine>,
        b_g2: Vec<G2Affine>,
    ) -> Srs {
        LIVE_KEYS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Srs { host_pin: Default::default(), path, resolved: Default::default(), alpha_g1, beta_g1, beta_g2, delta_g1, delta_g2, h, l, a, b_g1, b_g2 }
    }

    /// Reads and validates a params file.
    ///
    /// Errors: `ENOENT` (missing), the OS errno or `EIO` (unreadable, a
    /// directory), `EINVAL` (any malformed section or point; the message names
    /// the file, the section and the byte offset).
    pub fn load(path: &Path) -> Result<Srs> {
        use std::os::unix::fs::OpenOptionsExt;
        // The kind first, from the path: sockets and some devices fail in
        // open() with errno values that say nothing about params files.
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path, "stat params file", &e))?;
        if !meta.is_file() {
            return Err(not_regular(path, &meta));
        }
        // O_NONBLOCK: a FIFO swapped in after the check above still returns
        // at once (and is refused below) instead of blocking in open(); it
        // changes nothing for a regular file.
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| Error::io(path, "open params file", &e))?;
        let meta = file.metadata().map_err(|e| Error::io(path, "stat params file", &e))?;
        if !meta.is_file() {
            return Err(not_regular(path, &meta));
        }
        if meta.len() == 0 {
            // Files under /proc and /sys report size 0 yet have contents.
            let mut probe = [0u8; 1];
            let what = match std::io::Read::read(&mut &file, &mut probe) {
                Ok(0) => "params file is empty (0 bytes)".to_string(),
                Ok(_) => "reports a size of 0 bytes but has contents: a special file whose size is unknown (such as under /proc or /sys), not a params file".to_string(),
                Err(e) => format!("reports a size of 0 bytes and cannot be read ({e}): a special file, not a params file"),
            };
            return Err(Error::invalid(format!("{}: {what}", path.display())));
        }
        // SAFETY: the file is opened read-only and the map lives only for this
        // function; a concurrent truncation by another process would be a
        // caller error (SIGBUS), as for every mmap-based params reader.
        // A file that cannot be mapped (a /sys attribute, a FUSE file) is an
        // I/O error for this ABI: EIO, with the system's reason in the text
        // (its errno could read as ENODEV, "no GPU").
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| {
            Error::new(crate::error::code::EIO, format!("{}: cannot mmap params file ({e}): not a params file on a regular file system", path.display()))
        })?;
        Srs::parse(path, &map)
    }

    /// Parses and validates params-file contents already in memory; `path`
    /// only names the source in messages (and is the key's `path`). This is
    /// [`Srs::load`] minus the file access, so the parser can be fuzzed and
    /// tested without writing files (`fuzz/`, [`crate::fuzzing`]).
    ///
    /// Errors: `EINVAL`, as [`Srs::load`] for malformed contents.
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<Srs> {
        if bytes.is_empty() {
            return Err(Error::invalid(format!("{}: params file is empty", path.display())));
        }
        Parser { path, bytes, pos: 0 }.parse()
    }
}

fn not_regular(path: &Path, meta: &std::fs::Metadata) -> Error {
    Error::invalid(format!("{}: not a regular file (it is {}); a params file is required", path.display(), file_kind(meta)))
}

/// What a non-regular file is, for the message that refuses it.
fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else {
        "not a regular file"
    }
}

/// A cursor over the mapped file that produces located errors.
struct Parser<'a> {
    path: &'a Path,
    bytes: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn parse(mut self) -> Result<Srs> {
        let alpha_g1 = self.g1_point("alpha_g1")?;
        let beta_g1 = self.g1_point("beta_g1")?;
        let beta_g2 = self.g2_point("beta_g2")?;
        let _gamma_g2 = self.g2_point("gamma_g2")?;
        let delta_g1 = self.g1_point("delta_g1")?;
        let delta_g2 = self.g2_point("delta_g2")?;
        // ic is length-checked and skipped: only the verifier uses it.
        self.section("ic", G1_BYTES)?;
        let h = self.g1_vector("h")?;
        let l = self.g1_vector("l")?;
        let a = self.g1_vector("a")?;
        let b_g1 = self.g1_vector("b_g1")?;
        let b_g2 = self.g2_vector("b_g2")?;
        if self.pos != self.bytes.len() {
            return Err(self.err(
                "end of file",
                self.pos,
                format!("{} unexpected trailing bytes after b_g2", self.bytes.len() - self.pos),
            ));
        }
        if h.is_empty() {
            return Err(self.err("h", 0, "the h section is empty (no evaluation domain)".into()));
        }
        LIVE_KEYS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(Srs { host_pin: Default::default(), path: self.path.to_path_buf(), resolved: Default::default(), alpha_g1, beta_g1, beta_g2, delta_g1, delta_g2, h, l, a, b_g1, b_g2 })
    }

    fn err(&self, section: &str, offset: usize, what: String) -> Error {
        Error::invalid(format!("{}: section {section} at byte offset {offset}: {what}", self.path.display()))
    }

    /// Takes `len` bytes or reports truncation inside `section`.
    fn take(&mut self, section: &str, len: usize) -> Result<&[u8]> {
        let left = self.bytes.len() - self.pos;
        if len > left {
            return Err(self.err(
                section,
                self.pos,
                format!("file truncated: needs {len} bytes, only {left} left"),
            ));
        }
        let out = &self.bytes[self.pos..self.pos + len];
        self.pos += len;
        Ok(out)
    }

    /// Reads a `u32` count and returns the section's point bytes, checked
    /// against the file length before any allocation.
    fn section(&mut self, section: &str, point_bytes: usize) -> Result<Section<'_>> {
        let count_at = self.pos;
        let raw = self.take(section, 4)?;
        let count = u32::from_be_bytes(raw.try_into().expect("4 bytes")) as usize;
        let need = count * point_bytes; // at most 2^32 * 192, no overflow on 64-bit
        let left = self.bytes.len() - self.pos;
        if need > left {
            return Err(self.err(
                section,
                count_at,
                format!("count {count} needs {need} bytes of points, only {left} left in the file"),
            ));
        }
        let start = self.pos;
        self.pos += need;
        Ok(Section { bytes: &self.bytes[start..start + need], start })
    }

    fn g1_point(&mut self, section: &str) -> Result<G1Affine> {
        let at = self.pos;
        let bytes = self.take(section, G1_BYTES)?;
        decode_g1(bytes).map_err(|why| self.err(section, at, why))
    }

    fn g2_point(&mut self, section: &str) -> Result<G2Affine> {
        let at = self.pos;
        let bytes = self.take(section, G2_BYTES)?;
        decode_g2(bytes).map_err(|why| self.err(section, at, why))
    }

    fn g1_vector(&mut self, section: &str) -> Result<Vec<G1Affine>> {
        let s = self.section(section, G1_BYTES)?;
        let (bytes, start) = (s.bytes, s.start);
        let out: std::result::Result<Vec<_>, (usize, String)> = bytes
            .par_chunks_exact(G1_BYTES)
            .enumerate()
            .map(|(i, p)| decode_g1(p).map_err(|why| (i, why)))
            .collect();
        out.map_err(|(i, why)| self.err(section, start + i * G1_BYTES, format!("point {i}: {why}")))
    }

    fn g2_vector(&mut self, section: &str) -> Result<Vec<G2Affine>> {
        let s = self.section(section, G2_BYTES)?;
        let (bytes, start) = (s.bytes, s.start);
        let out: std::result::Result<Vec<_>, (usize, String)> = bytes
            .par_chunks_exact(G2_BYTES)
            .enumerate()
            .map(|(i, p)| decode_g2(p).map_err(|why| (i, why)))
            .collect();
        out.map_err(|(i, why)| self.err(section, start + i * G2_BYTES, format!("point {i}: {why}")))
    }
}

/// The point bytes of one vector section and their offset in the file.
struct Section<'a> {
    bytes: &'a [u8],
    start: usize,
}

fn blst_reason(e: BLST_ERROR) -> String {
    match e {
        BLST_ERROR::BLST_BAD_ENCODING => "bad encoding (compression/infinity flag bits or a coordinate not below p)".into(),
        BLST_ERROR::BLST_POINT_NOT_ON_CURVE => "point is not on the curve".into(),
        other => format!("cannot decode point ({other:?})"),
    }
}

/// blst reads an encoding with the compression flag (top bit) as compressed,
/// which would silently accept half a point: the file holds only uncompressed ones.
fn check_uncompressed_flag(bytes: &[u8]) -> std::result::Result<(), String> {
    if bytes[0] & 0x80 != 0 {
        return Err("bad encoding: compression flag set in an uncompressed point".into());
    }
    Ok(())
}

/// Decodes one 96-byte uncompressed G1 point and checks curve and subgroup.
pub(crate) fn decode_g1(bytes: &[u8]) -> std::result::Result<G1Affine, String> {
    check_uncompressed_flag(bytes)?;
    let mut p = blst_p1_affine::default();
    // SAFETY: `bytes` holds exactly G1_BYTES bytes (callers slice it so) and
    // `p` is a valid output location.
    let rc = unsafe { blst_p1_deserialize(&mut p, bytes.as_ptr()) };
    if rc != BLST_ERROR::BLST_SUCCESS {
        return Err(blst_reason(rc));
    }
    // SAFETY: `p` is an initialised affine point.
    if !unsafe { blst_p1_affine_in_g1(&p) } {
        return Err("point is not in the prime-order subgroup".into());
    }
    // SAFETY: G1Affine is #[repr(transparent)] over blst_p1_affine.
    Ok(unsafe { std::mem::transmute::<blst_p1_affine, G1Affine>(p) })
}

/// Decodes one 192-byte uncompressed G2 point and checks curve and subgroup.
pub(crate) fn decode_g2(bytes: &[u8]) -> std::result::Result<G2Affine, String> {
    check_uncompressed_flag(bytes)?;
    let mut p = blst_p2_affine::default();
    // SAFETY: `bytes` holds exactly G2_BYTES bytes; `p` is a valid output.
    let rc = unsafe { blst_p2_deserialize(&mut p, bytes.as_ptr()) };
    if rc != BLST_ERROR::BLST_SUCCESS {
        return Err(blst_reason(rc));
    }
    // SAFETY: `p` is an initialised affine point.
    if !unsafe { blst_p2_affine_in_g2(&p) } {
        return Err("point is not in the prime-order subgroup".into());
    }
    // SAFETY: G2Affine is #[repr(transparent)] over blst_p2_affine.
    Ok(unsafe { std::mem::transmute::<blst_p2_affine, G2Affine>(p) })
}

/// How many loaded keys the cache keeps (the reference keeps 4).
pub const CACHE_CAPACITY: usize = 4;

/// What a cached key was loaded from: the resolved path and the file's
/// identity, so a file replaced or rewritten in place is loaded again.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct FileKey {
    path: PathBuf,
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
    /// The inode change time: a rewrite that restores the mtime (`touch -r`,
    /// `cp -p`) still changes it.
    ctime_ns: i128,
}

impl FileKey {
    /// `None` when the file cannot be stat'ed (the load reports why).
    fn of(path: &Path) -> Option<FileKey> {
        use std::os::unix::fs::MetadataExt;
        let resolved = std::fs::canonicalize(path).ok()?;
        let m = std::fs::metadata(&resolved).ok()?;
        Some(FileKey {
            path: resolved,
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime_ns: m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128,
            ctime_ns: m.ctime() as i128 * 1_000_000_000 + m.ctime_nsec() as i128,
        })
    }
}

/// Most recently used first.
static CACHE: Mutex<Vec<(FileKey, Arc<Srs>)>> = Mutex::new(Vec::new());

/// A load in progress: every caller that asks for the same file meanwhile
/// waits for it instead of loading the file again.
type InFlight = Arc<std::sync::OnceLock<Result<Arc<Srs>>>>;
static LOADING: Mutex<Vec<(FileKey, InFlight)>> = Mutex::new(Vec::new());

/// Returns the key for `path`: from the LRU cache when `cache` is true (loading
/// and inserting it on a miss), freshly loaded otherwise. Entries are keyed by
/// the resolved path and the file's identity (device, inode, size,
/// modification time): a file replaced or rewritten after it was cached is
/// loaded again. Two threads that ask for an uncached file at once share one
/// load. Errors as [`Srs::load`].
pub fn open(path: &Path, cache: bool) -> Result<Arc<Srs>> {
    // Uncached, or a file that cannot be stat'ed (the load says why).
    let Some(key) = cache.then(|| FileKey::of(path)).flatten() else {
        let srs = Srs::load(path)?;
        if let Ok(resolved) = std::fs::canonicalize(path) {
            let _ = srs.resolved.set(resolved);
        }
        return Ok(Arc::new(srs));
    };
    // The cache is looked up under the in-flight lock: a loader publishes its
    // key in the cache before it drops its in-flight entry, so a caller never
    // misses both and loads the file a second time.
    let flight: InFlight = {
        let mut loading = LOADING.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(hit) = lookup(&key) {
            return Ok(hit);
        }
        match loading.iter().find(|(k, _)| *k == key) {
            Some((_, f)) => f.clone(),
            None => {
                let f: InFlight = Default::default();
                loading.push((key.clone(), f.clone()));
                f
            }
        }
    };
    // Load outside both locks: a 47 GB file takes minutes and other paths
    // must stay usable meanwhile.
    let result = flight.get_or_init(|| {
        let loaded = Srs::load(path).map(|srs| {
            let _ = srs.resolved.set(key.path.clone());
            Arc::new(srs)
        });
        if let Ok(srs) = &loaded {
            let mut entries = CACHE.lock().unwrap_or_else(|p| p.into_inner());
            entries.retain(|(k, _)| k.path != key.path);
            entries.insert(0, (key.clone(), srs.clone()));
            entries.truncate(CACHE_CAPACITY);
        }
        LOADING.lock().unwrap_or_else(|p| p.into_inner()).retain(|(k, f)| !(k == &key && Arc::ptr_eq(f, &flight)));
        loaded
    });
    result.clone()
}

fn lookup(key: &FileKey) -> Option<Arc<Srs>> {
    let mut entries = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    let i = entries.iter().position(|(k, _)| k == key)?;
    let hit = entries.remove(i);
    let srs = hit.1.clone();
    entries.insert(0, hit);
    Some(srs)
}

/// Drops the cache entry for the file `srs` was loaded from (the reference's
/// behaviour: any handle of that file evicts it, cached or not), found by
/// the path resolved when it was opened, so a `chdir` or a retargeted symlink
/// since then does not matter; and the entry holding `srs` itself, if any.
/// Handles already given out stay valid (they are reference counted).
pub fn evict(srs: &Srs) {
    let mut entries = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    let resolved = srs.resolved.get();
    entries.retain(|(k, s)| !(std::ptr::eq(Arc::as_ptr(s), srs) || Some(&k.path) == resolved));
}

/// Number of entries currently cached (for tests and diagnostics).
pub fn cached_entries() -> usize {
    CACHE.lock().unwrap_or_else(|p| p.into_inner()).len()
}
