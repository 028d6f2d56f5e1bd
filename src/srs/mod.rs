//! The params (SRS) file: parsing and point validation (the handle cache and
//! the device that checks are in [`crate::params`]).
//!
//! Format (docs/ARCHITECTURE.md §3; bellperson's `Parameters::write`), all integers
//! big-endian: `alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2`, then
//! six length-prefixed vectors, each a `u32` count followed by the points:
//! `ic`, `h`, `l`, `a`, `b_g1` (G1, 96-byte uncompressed encodings) and `b_g2`
//! (G2, 192-byte uncompressed encodings). `ic` and `gamma_g2` are checked like
//! the others and kept beside the key for `SUPRASEAL_C2_VERIFY` (the
//! verifier needs them, the prover does not; `ic` has one point per input).
//!
//! Every length is checked exactly against the file before anything is
//! allocated, every point is decoded with blst and checked to be on the curve
//! (in parallel, straight into the final vectors), the file must end right
//! after `b_g2`, and every vector is then checked to lie in the prime-order
//! subgroup with a batched test of soundness 2⁻¹²⁸ ([`subgroup`]). The file
//! is read with `pread` and its cached pages dropped behind the reader
//! ([`read`]): the load holds one copy of the points (about the file's size),
//! and a file truncated under it is an error, not a SIGBUS.

use std::path::{Path, PathBuf};

use blst::{blst_p1_affine, blst_p1_deserialize, blst_p2_affine, blst_p2_deserialize, BLST_ERROR};
use blstrs::{G1Affine, G2Affine};

use crate::error::{Error, Result};
use crate::log::{round1, round2};

mod bisect;
pub mod buckets;
mod combine;
mod decode;
mod group;
mod layout;
mod offload;
mod read;
mod source;
pub mod subgroup;
#[cfg(any(test, feature = "tools"))]
mod torsion;
#[cfg(any(test, feature = "tools"))]
mod tiny;
#[cfg(any(test, feature = "tools"))]
pub use tiny::tiny_params;

pub use read::{LoadOptions, LoadReport};
pub use offload::{BucketSums, CheckDevice, Pin};
use subgroup::Subgroup;

/// Bytes of one uncompressed G1 point in the file.
pub const G1_BYTES: usize = 96;
/// Bytes of one uncompressed G2 point in the file.
pub const G2_BYTES: usize = 192;

/// The proving key: the verifying-key points the epilogue needs and the five
/// query vectors, all decoded to affine points in Montgomery form.
pub struct Srs {
    /// Page-locking of the query vectors (h, l, a, b_g1, b_g2) for GPU uploads (docs/ARCHITECTURE.md §3:
    /// points in pinned host memory when a GPU is in use), made once by the
    /// first GPU call (`gpu::stage`). Declared first so that it is dropped,
    /// unregistering the memory, before the vectors are freed.
    #[cfg_attr(not(supraseal_gpu), allow(dead_code))]
    pub(crate) host_pin: std::sync::OnceLock<Box<dyn std::any::Any + Send + Sync>>,
    /// Set by the first GPU call of this key (`gpu::resident::watch`): its
    /// drop releases the key's device copies on every device. Declared
    /// before the vectors: nothing may find a copy by a host address once
    /// the vectors are freed.
    #[cfg_attr(not(supraseal_gpu), allow(dead_code))]
    pub(crate) device_copies: std::sync::OnceLock<Box<dyn std::any::Any + Send + Sync>>,
    /// This key's identity in the process (never reused): a device copy of
    /// its bases (`gpu::resident`) is filed under it and released when the
    /// key is dropped.
    #[cfg_attr(not(supraseal_gpu), allow(dead_code))]
    pub(crate) id: u64,
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
    pub(crate) h: Vec<G1Affine>,
    /// One point per aux variable.
    pub(crate) l: Vec<G1Affine>,
    /// Inputs first (all of them), then aux variables with the A-density bit set.
    pub(crate) a: Vec<G1Affine>,
    /// Inputs with the B-input-density bit, then aux with the B-aux-density bit.
    pub(crate) b_g1: Vec<G1Affine>,
    /// Same selection as `b_g1`, in G2.
    pub(crate) b_g2: Vec<G2Affine>,
    /// The verifying key's γ in G2, which only a verifier uses (`None` for
    /// a key assembled from parts).
    pub(crate) gamma_g2: Option<G2Affine>,
    /// The verifying key's input bases, one per input (the constant one
    /// first); empty for a key assembled from parts.
    pub(crate) ic: Vec<G1Affine>,
    /// The verifying key prepared for pairings, made by the first verified
    /// call of this key (`groth16::verify`).
    pub(crate) prepared_vk: std::sync::OnceLock<Box<dyn std::any::Any + Send + Sync>>,
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
            .field("ic", &self.ic.len())
            .finish()
    }
}

/// Number of loaded keys alive in the process (cache entries and handles
/// share one); for leak checks in tests and diagnostics.
static LIVE_KEYS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How many loaded keys are alive right now.
#[cfg(any(test, feature = "tools"))]
pub fn live_keys() -> usize {
    LIVE_KEYS.load(std::sync::atomic::Ordering::SeqCst)
}

/// The next [`Srs::id`].
static NEXT_KEY_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Drop for Srs {
    fn drop(&mut self) {
        // The device copies go with `device_copies`, before the vectors.
        LIVE_KEYS.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Srs {
    /// The H query: `n − 1` points (read-only: a device copy of the key's
    /// bases is found by their addresses, see `gpu::resident`).
    pub fn h(&self) -> &[G1Affine] {
        &self.h
    }

    /// The L query: one point per aux variable.
    pub fn l(&self) -> &[G1Affine] {
        &self.l
    }

    /// The A query: inputs first, then aux variables with the A-density bit.
    pub fn a(&self) -> &[G1Affine] {
        &self.a
    }

    /// The B query in G1: inputs and aux variables with their B-density bits.
    pub fn b_g1(&self) -> &[G1Affine] {
        &self.b_g1
    }

    /// The B query in G2, the same selection as [`Srs::b_g1`].
    pub fn b_g2(&self) -> &[G2Affine] {
        &self.b_g2
    }

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
        let id = NEXT_KEY_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Srs {
            host_pin: Default::default(),
            device_copies: Default::default(),
            id,
            path,
            resolved: Default::default(),
            alpha_g1,
            beta_g1,
            beta_g2,
            delta_g1,
            delta_g2,
            h,
            l,
            a,
            b_g1,
            b_g2,
            gamma_g2: None,
            ic: Vec::new(),
            prepared_vk: Default::default(),
        }
    }

    /// This key with the verifying key's remaining parts (γ in G2 and the
    /// input bases `ic`, one per input, the constant one first), so that its
    /// proofs can be verified (`SUPRASEAL_C2_VERIFY`).
    pub fn with_verifying_key(mut self, gamma_g2: G2Affine, ic: Vec<G1Affine>) -> Srs {
        self.gamma_g2 = Some(gamma_g2);
        self.ic = ic;
        self
    }

    pub(crate) fn load_file(path: &Path, opts: &LoadOptions<'_>, device: &CheckDevice<'_>) -> Result<(Srs, LoadReport)> {
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
        let src = source::File { file: &file, path, len: meta.len() };
        let check_on = match opts.check_on {
            Some(on) => on,
            None => crate::config::load_check()?,
        };
        let (srs, report) = in_pool(opts.threads, || read::load(&src, path, check_on, device, opts.progress))?;
        // A rewrite in place that kept the size is caught here: the points
        // read may mix two versions of the file. The inode change time
        // catches a rewrite that restored the modification time.
        let after = file.metadata().map_err(|e| Error::io(path, "stat params file", &e))?;
        let stamp = |m: &std::fs::Metadata| {
            use std::os::unix::fs::MetadataExt;
            (m.dev(), m.ino(), m.size(), m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec())
        };
        if stamp(&after) != stamp(&meta) {
            return Err(Error::new(
                crate::error::code::EIO,
                format!("{}: the file changed while it was being loaded (size {} -> {} bytes, or a new modification or inode change time)", path.display(), meta.len(), after.len()),
            ));
        }
        tracing::info!(
            target: "supraseal_c2::srs",
            path = %path.display(),
            bytes = report.bytes,
            points = report.points,
            threads = report.threads,
            decode_s = round2(report.decode_s),
            check_s = round2(report.check_s),
            // The device's fields only where a device checked vectors.
            check_device = report.device.as_deref().unwrap_or("none (CPU)"),
            device_s = report.device.is_some().then(|| round2(report.device_s)),
            cpu_fallbacks = report.device.is_some().then_some(report.cpu_fallbacks),
            pinned = report.device.is_some().then_some(report.pinned),
            pin_s = report.pinned.then(|| round2(report.pin_s)),
            mib_per_s = round1(report.bytes as f64 / (1u64 << 20) as f64 / (report.decode_s + report.check_s).max(1e-9)),
            "params file loaded: read, decoded and subgroup-checked in batches (check_device says where the bucket sums ran)"
        );
        Ok((srs, report))
    }

    /// Parses and validates params-file contents already in memory; `path`
    /// only names the source in messages (and is the key's `path`). This is
    /// [`Srs::load`] minus the file access, so the parser can be fuzzed and
    /// tested without writing files (`fuzz/`, `crate::fuzzing`).
    ///
    /// Errors: `EINVAL`, as [`Srs::load`] for malformed contents.
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<Srs> {
        if bytes.is_empty() {
            return Err(Error::invalid(format!("{}: params file is empty", path.display())));
        }
        read::load(&source::Memory(bytes), path, crate::config::CheckOn::Cpu, &|_, _| Ok(None), None).map(|(srs, _)| srs)
    }
}

/// Runs `f` on a pool of `threads` threads (at most the cores the process
/// may use: the work is CPU-bound), or on the current pool.
fn in_pool<T: Send>(threads: Option<usize>, f: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    match threads.map(|n| n.min(cores)) {
        None => f(),
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("srs-load-{i}"))
            .build()
            .map_err(|e| Error::new(crate::error::code::ENOMEM, format!("cannot start {n} params-load threads: {e}")))?
            .install(f),
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

fn blst_reason(e: BLST_ERROR) -> String {
    match e {
        BLST_ERROR::BLST_BAD_ENCODING => "bad encoding (compression/infinity flag bits or a coordinate not below p)".into(),
        BLST_ERROR::BLST_POINT_NOT_ON_CURVE => "point is not on the curve".into(),
        BLST_ERROR::BLST_POINT_NOT_IN_GROUP => "point is not in the prime-order subgroup".into(),
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

/// Decodes one 96-byte uncompressed G1 point: canonical encoding, on the
/// curve (blst's deserialize); subgroup membership is checked separately.
pub(crate) fn decode_g1_on_curve(bytes: &[u8]) -> std::result::Result<G1Affine, String> {
    check_uncompressed_flag(bytes)?;
    let mut p = blst_p1_affine::default();
    // SAFETY: `bytes` holds exactly G1_BYTES bytes (callers slice it so) and
    // `p` is a valid output location.
    let rc = unsafe { blst_p1_deserialize(&mut p, bytes.as_ptr()) };
    if rc != BLST_ERROR::BLST_SUCCESS {
        return Err(blst_reason(rc));
    }
    // SAFETY: G1Affine is #[repr(transparent)] over blst_p1_affine.
    Ok(unsafe { std::mem::transmute::<blst_p1_affine, G1Affine>(p) })
}

/// Decodes one 192-byte uncompressed G2 point: canonical encoding, on the curve.
pub(crate) fn decode_g2_on_curve(bytes: &[u8]) -> std::result::Result<G2Affine, String> {
    check_uncompressed_flag(bytes)?;
    let mut p = blst_p2_affine::default();
    // SAFETY: `bytes` holds exactly G2_BYTES bytes; `p` is a valid output.
    let rc = unsafe { blst_p2_deserialize(&mut p, bytes.as_ptr()) };
    if rc != BLST_ERROR::BLST_SUCCESS {
        return Err(blst_reason(rc));
    }
    // SAFETY: G2Affine is #[repr(transparent)] over blst_p2_affine.
    Ok(unsafe { std::mem::transmute::<blst_p2_affine, G2Affine>(p) })
}

/// [`decode_g1_on_curve`] plus blst's per-point subgroup check (the single points).
pub(crate) fn decode_g1(bytes: &[u8]) -> std::result::Result<G1Affine, String> {
    let p = decode_g1_on_curve(bytes)?;
    if !<crate::cpu::msm::G1 as Subgroup>::point_in_group(&p) {
        return Err("point is not in the prime-order subgroup".into());
    }
    Ok(p)
}

/// [`decode_g2_on_curve`] plus blst's per-point subgroup check.
pub(crate) fn decode_g2(bytes: &[u8]) -> std::result::Result<G2Affine, String> {
    let p = decode_g2_on_curve(bytes)?;
    if !<crate::cpu::msm::G2 as Subgroup>::point_in_group(&p) {
        return Err("point is not in the prime-order subgroup".into());
    }
    Ok(p)
}
