//! Reading a params file into an [`Srs`]: the layout from the section counts,
//! a parallel decode straight into the final vectors, and the batched
//! subgroup check ([`super::subgroup`]).
//!
//! The file is read with `pread` in chunks, not mapped: a file truncated
//! while it is read gives a short read (an `EIO` error), where a mapping
//! would raise SIGBUS. Each chunk's page-cache pages are dropped once it is
//! decoded (`POSIX_FADV_DONTNEED`), so the load holds one copy of the points
//! (the decoded vectors, the size of the file) plus a few MiB of buffers.

use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};
use rayon::prelude::*;

use super::subgroup::{self, Key, Subgroup};
use crate::config::CheckOn;
use crate::gpu::BucketSums;
use super::{decode_g1, decode_g2, decode_g1_on_curve, decode_g2_on_curve, Srs, G1_BYTES, G2_BYTES};
use crate::cpu::msm;
use crate::error::{code, try_vec, Error, Result};

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
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> Result<()> {
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

/// How to load: threads, where to check, and a progress callback.
#[derive(Default)]
pub struct LoadOptions<'a> {
    /// Threads that decode and check (`None`: rayon's global pool, or
    /// `SUPRASEAL_C2_LOAD_THREADS` where the ABI loads).
    pub threads: Option<usize>,
    /// Where the subgroup check runs (`None`: `SUPRASEAL_C2_LOAD_CHECK`, auto by default).
    pub check_on: Option<CheckOn>,
    /// Called with (bytes decoded so far, file size) as chunks complete.
    pub progress: Option<&'a (dyn Fn(u64, u64) + Sync)>,
}

/// What a load measured.
#[derive(Clone, Debug, Default)]
pub struct LoadReport {
    /// File size in bytes.
    pub bytes: u64,
    /// Points decoded and checked (the six single points and ic included).
    pub points: u64,
    /// Threads used.
    pub threads: usize,
    /// Seconds reading and decoding (canonical encoding, on the curve).
    pub decode_s: f64,
    /// Seconds of subgroup check after the decode ended (the part not
    /// overlapped with it).
    pub check_s: f64,
    /// The device that was given vectors to check (`None`: all on the CPU).
    pub device: Option<String>,
    /// Seconds the device spent on bucket sums, overlapped with the decode
    /// except for the last vector's share, which also counts in `check_s`.
    pub device_s: f64,
    /// Vectors checked on the CPU because the device could not check them.
    pub cpu_fallbacks: usize,
}

/// One length-prefixed vector of the file.
struct Section {
    name: &'static str,
    /// Offset of its u32 count.
    count_at: u64,
    /// Offset of its first point.
    start: u64,
    count: usize,
}

fn located(path: &Path, section: &str, offset: u64, what: impl std::fmt::Display) -> Error {
    Error::invalid(format!("{}: section {section} at byte offset {offset}: {what}", path.display()))
}

/// Reads the single points and the section counts; checks every length
/// against the file before anything is allocated.
struct Layout<'a, S: Source> {
    src: &'a S,
    path: &'a Path,
    pos: u64,
}

impl<S: Source> Layout<'_, S> {
    fn take(&mut self, section: &str, len: usize) -> Result<Vec<u8>> {
        let left = self.src.len() - self.pos;
        if len as u64 > left {
            return Err(located(self.path, section, self.pos, format!("file truncated: needs {len} bytes, only {left} left")));
        }
        let mut buf = vec![0u8; len];
        self.src.read_at(&mut buf, self.pos)?;
        self.pos += len as u64;
        Ok(buf)
    }

    fn g1(&mut self, section: &str) -> Result<G1Affine> {
        let at = self.pos;
        let b = self.take(section, G1_BYTES)?;
        decode_g1(&b).map_err(|why| located(self.path, section, at, why))
    }

    fn g2(&mut self, section: &str) -> Result<G2Affine> {
        let at = self.pos;
        let b = self.take(section, G2_BYTES)?;
        decode_g2(&b).map_err(|why| located(self.path, section, at, why))
    }

    fn section(&mut self, name: &'static str, point_bytes: usize) -> Result<Section> {
        let count_at = self.pos;
        let raw = self.take(name, 4)?;
        let count = u32::from_be_bytes(raw.try_into().expect("4 bytes")) as usize;
        let need = (count * point_bytes) as u64; // at most 2^32 * 192: no overflow
        let left = self.src.len() - self.pos;
        if need > left {
            return Err(located(self.path, name, count_at, format!("count {count} needs {need} bytes of points, only {left} left in the file")));
        }
        let start = self.pos;
        self.pos += need;
        Ok(Section { name, count_at, start, count })
    }
}

/// Vectors at least this long go to the device when one checks (shorter
/// ones cost more to ship than to check here).
const DEVICE_MIN: usize = 1 << 16;
/// Ternary digits per group on the device: 3⁸ buckets, 11 groups.
const DEVICE_DIGITS: u32 = 8;

/// A decoded vector on its way through the device check, and back.
enum Vector {
    G1(Vec<G1Affine>),
    G2(Vec<G2Affine>),
}

/// The device's bucket sums of one vector.
enum Sums {
    G1(Vec<G1Projective>),
    G2(Vec<G2Projective>),
}

/// What the device did with one vector: (section number, the vector, its
/// bucket sums or the error, seconds).
type DeviceResult = (u64, Vector, Result<Sums>, f64);

/// The device to check on, if any, for `on`. Errors: with `Gpu`, `ENODEV`
/// when no GPU is usable and the device's error when it cannot be opened.
fn checker(on: CheckOn, path: &Path) -> Result<Option<Box<dyn BucketSums>>> {
    match on {
        CheckOn::Cpu => Ok(None),
        CheckOn::Gpu => crate::gpu::subgroup_device()?.map(Some).ok_or_else(|| {
            Error::no_device(format!(
                "{}: the subgroup check was asked to run on the GPU (SUPRASEAL_C2_LOAD_CHECK=gpu or --check-on gpu) but no GPU is usable{}",
                path.display(),
                if crate::gpu::BUILT_WITH_KERNELS { "" } else { " (this build has no GPU kernels)" }
            ))
        }),
        CheckOn::Auto => crate::gpu::subgroup_device().or_else(|e| {
            tracing::warn!(target: "supraseal_c2::srs", error = %e.message, "GPU not usable for the params check: checking on the CPU");
            Ok(None)
        }),
    }
}

/// Loads `src` (named `path` in messages) on the current rayon pool. With a
/// device to check on, each large vector's bucket sums are computed there by
/// one thread while the next vector decodes here.
pub(crate) fn load<S: Source>(src: &S, path: &Path, check_on: CheckOn, progress: Option<&(dyn Fn(u64, u64) + Sync)>) -> Result<(Srs, LoadReport)> {
    let t0 = Instant::now();
    let mut lay = Layout { src, path, pos: 0 };
    let alpha_g1 = lay.g1("alpha_g1")?;
    let beta_g1 = lay.g1("beta_g1")?;
    let beta_g2 = lay.g2("beta_g2")?;
    let _gamma_g2 = lay.g2("gamma_g2")?;
    let delta_g1 = lay.g1("delta_g1")?;
    let delta_g2 = lay.g2("delta_g2")?;
    // ic is checked like every vector and then dropped: only the verifier uses it.
    let ic = lay.section("ic", G1_BYTES)?;
    let g1_sections = [lay.section("h", G1_BYTES)?, lay.section("l", G1_BYTES)?, lay.section("a", G1_BYTES)?, lay.section("b_g1", G1_BYTES)?];
    let b_g2 = lay.section("b_g2", G2_BYTES)?;
    if lay.pos != src.len() {
        return Err(located(path, "end of file", lay.pos, format!("{} unexpected trailing bytes after b_g2", src.len() - lay.pos)));
    }
    if g1_sections[0].count == 0 {
        return Err(located(path, "h", g1_sections[0].count_at, "the h section is empty (no evaluation domain)"));
    }
    // The device only where some vector is long enough to go there.
    let long = g1_sections.iter().map(|s| s.count).chain([b_g2.count]).any(|c| c >= DEVICE_MIN);
    let device = if long { checker(check_on, path)? } else { None };
    // Secret, and drawn per load: a file cannot be made against the digits.
    let key = Key::from_os().map_err(|e| Error::new(code::EIO, format!("{}: getrandom for the subgroup check failed: {e}", path.display())))?;

    let vectors = (ic.count + g1_sections.iter().map(|s| s.count).sum::<usize>()) as u64 * G1_BYTES as u64 + b_g2.count as u64 * G2_BYTES as u64;
    let done = AtomicU64::new(lay.pos - vectors);
    let tick = |n: usize| {
        let d = done.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
        if let Some(p) = progress {
            p(d, src.len());
        }
    };
    let ic_points = decode_section(src, path, &ic, G1_BYTES, decode_g1_on_curve, &tick)?;
    let mut g1: Vec<Option<Vec<G1Affine>>> = vec![None, None, None, None];
    let mut g2 = None;
    let mut decode_s = 0.0;
    let words = key.words();
    let on_device: Vec<DeviceResult> = std::thread::scope(|scope| -> Result<Vec<DeviceResult>> {
        let (tx, rx) = std::sync::mpsc::channel::<(u64, Vector)>();
        // No thread (the process is out of them): every vector is checked here.
        let worker = device.as_deref().and_then(|dev| {
            let work = move || {
                let groups = subgroup::groups_for(DEVICE_DIGITS);
                let buckets = 3u32.pow(DEVICE_DIGITS);
                rx.into_iter()
                    .map(|(section, v)| {
                        let t = Instant::now();
                        let first = subgroup::stream_of(section, 0);
                        // A panic in the device code is an error for this
                        // vector, which then comes back and is checked here.
                        let sums = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match &v {
                            Vector::G1(p) => dev.g1(p, &words, first, groups, buckets).map(Sums::G1),
                            Vector::G2(p) => dev.g2(p, &words, first, groups, buckets).map(Sums::G2),
                        }))
                        .unwrap_or_else(|_| Err(Error::new(code::EIO, "the device subgroup check panicked".to_string())));
                        (section, v, sums, t.elapsed().as_secs_f64())
                    })
                    .collect::<Vec<DeviceResult>>()
            };
            std::thread::Builder::new().name("srs-check-gpu".into()).spawn_scoped(scope, work).ok()
        });
        // b_g2 first (pread reads in any order): its device time, the
        // longest per byte, then overlaps the G1 decodes.
        let v = decode_section(src, path, &b_g2, G2_BYTES, decode_g2_on_curve, &tick)?;
        match &worker {
            Some(_) if v.len() >= DEVICE_MIN => {
                // A send fails only if the worker is gone (a panic outside
                // the device code), which the join below reports.
                let _ = tx.send((4, Vector::G2(v)));
            }
            _ => g2 = Some(v),
        }
        for (i, s) in g1_sections.iter().enumerate() {
            let v = decode_section(src, path, s, G1_BYTES, decode_g1_on_curve, &tick)?;
            match &worker {
                Some(_) if v.len() >= DEVICE_MIN => {
                    let _ = tx.send((i as u64, Vector::G1(v)));
                }
                _ => g1[i] = Some(v),
            }
        }
        decode_s = t0.elapsed().as_secs_f64();
        drop(tx);
        match worker {
            None => Ok(Vec::new()),
            Some(w) => w.join().map_err(|_| Error::new(code::EIO, format!("{}: the device subgroup-check thread panicked", path.display()))),
        }
    })?;

    // From the end of the decode: the device's wait for its last vector counts here.
    let t1 = t0 + std::time::Duration::from_secs_f64(decode_s);
    check::<msm::G1>(path, &ic, &ic_points, G1_BYTES, &key, 5)?;
    drop(ic_points);
    let device_s = on_device.iter().fold(0.0, |t, r| t + r.3);
    let device_vectors = on_device.len();
    let mut cpu_fallbacks = 0;
    // Sections the device checked (and passed, or failed and were checked again here).
    let mut checked = [false; 5];
    for (section, v, sums, _) in on_device {
        let (ran, passed) = match sums {
            Ok(Sums::G1(s)) => (true, subgroup::all_in_group::<msm::G1>(&subgroup::combinations_from_sums::<msm::G1>(&s, DEVICE_DIGITS))),
            Ok(Sums::G2(s)) => (true, subgroup::all_in_group::<msm::G2>(&subgroup::combinations_from_sums::<msm::G2>(&s, DEVICE_DIGITS))),
            Err(e) => {
                tracing::warn!(target: "supraseal_c2::srs", section, error = %e.message, "device subgroup check failed to run: checking this vector on the CPU");
                cpu_fallbacks += 1;
                (false, false)
            }
        };
        // A vector the device did not pass is checked here, which names its
        // bad point; the host's verdict is the one that counts.
        let recheck = |ok: Result<()>| {
            if ok.is_ok() && ran {
                tracing::error!(target: "supraseal_c2::srs", section, "the device's subgroup check failed a vector that the CPU check passes: keeping the CPU's verdict");
            }
            ok
        };
        match v {
            Vector::G1(p) => {
                if !passed {
                    recheck(check::<msm::G1>(path, &g1_sections[section as usize], &p, G1_BYTES, &key, section))?;
                }
                g1[section as usize] = Some(p);
            }
            Vector::G2(p) => {
                if !passed {
                    recheck(check::<msm::G2>(path, &b_g2, &p, G2_BYTES, &key, section))?;
                }
                g2 = Some(p);
            }
        }
        checked[section as usize] = true;
    }
    let g1: Vec<Vec<G1Affine>> = g1.into_iter().map(|v| v.expect("every G1 vector decoded and back")).collect();
    let g2 = g2.expect("b_g2 decoded and back");
    for (i, (s, v)) in g1_sections.iter().zip(&g1).enumerate() {
        if !checked[i] {
            check::<msm::G1>(path, s, v, G1_BYTES, &key, i as u64)?;
        }
    }
    if !checked[4] {
        check::<msm::G2>(path, &b_g2, &g2, G2_BYTES, &key, 4)?;
    }
    let check_s = t1.elapsed().as_secs_f64();

    let [h, l, a, b_g1]: [Vec<G1Affine>; 4] = g1.try_into().expect("four G1 sections");
    let points = 6 + ic.count as u64 + (h.len() + l.len() + a.len() + b_g1.len() + g2.len()) as u64;
    let report = LoadReport {
        bytes: src.len(),
        points,
        threads: rayon::current_num_threads(),
        decode_s,
        check_s,
        device: device.as_ref().filter(|_| device_vectors > 0).map(|d| d.name()),
        device_s,
        cpu_fallbacks,
    };
    let srs = Srs::from_parts(path.to_path_buf(), alpha_g1, beta_g1, beta_g2, delta_g1, delta_g2, h, l, a, b_g1, g2);
    Ok((srs, report))
}

/// Reads and decodes one vector in parallel chunks, straight into its final
/// allocation. The error names the first bad point of a chunk that failed.
///
/// Reads run ahead of the decode on their own threads (`readers`, mostly
/// asleep in `pread`), so the disk sees many requests at once while the
/// decode threads stay busy: a thread that reads and then decodes leaves
/// the disk idle half of the time. Without reader threads (none could be
/// started) each decode thread reads its own chunks.
fn decode_section<S: Source, T: Send>(
    src: &S,
    path: &Path,
    s: &Section,
    point_bytes: usize,
    decode: fn(&[u8]) -> std::result::Result<T, String>,
    tick: &(dyn Fn(usize) + Sync),
) -> Result<Vec<T>> {
    let mut out: Vec<T> = try_vec(s.count, format_args!("{}: section {}", path.display(), s.name))?;
    let chunk = chunk_points(point_bytes);
    let decode_chunk = |c: usize, slots: &mut [std::mem::MaybeUninit<T>], buf: &[u8]| -> Result<()> {
        let first = c * chunk;
        for (i, (slot, bytes)) in slots.iter_mut().zip(buf.chunks_exact(point_bytes)).enumerate() {
            let p = decode(bytes).map_err(|why| {
                let k = first + i;
                located(path, s.name, s.start + (k * point_bytes) as u64, format!("point {k}: {why}"))
            })?;
            slot.write(p);
        }
        src.release(s.start + (first * point_bytes) as u64, buf.len());
        tick(buf.len());
        Ok(())
    };
    let spare = &mut out.spare_capacity_mut()[..s.count];
    let n = s.count.div_ceil(chunk);
    // One chunk has nothing to overlap with.
    let readers = if n < 2 { 0 } else { READERS.min(n) };
    if readers == 0 || !read_ahead(src, s, point_bytes, chunk, readers, spare, &decode_chunk)? {
        spare.par_chunks_mut(chunk).enumerate().try_for_each(|(c, slots)| {
            let mut buf = vec![0u8; slots.len() * point_bytes];
            src.read_at(&mut buf, s.start + (c * chunk * point_bytes) as u64)?;
            decode_chunk(c, slots, &buf)
        })?;
    }
    // SAFETY: every one of the first `count` slots was written above (the
    // chunks cover them all, and any failure returned early).
    unsafe { out.set_len(s.count) };
    Ok(out)
}

/// Bytes per read: 1.5 MiB (larger reads measured slower on the H200 host).
const READ_BYTES: usize = 1536 << 10;

/// Points per read.
fn chunk_points(point_bytes: usize) -> usize {
    (READ_BYTES / point_bytes).max(1)
}

/// Reader threads: they sleep in `pread`, so they are not counted in the
/// load's thread cap (16 and 32 measured alike, 64 slower).
const READERS: usize = 16;

/// Decodes chunk c's bytes into its slots.
type DecodeChunk<'a, T> = dyn Fn(usize, &mut [std::mem::MaybeUninit<T>], &[u8]) -> Result<()> + Sync + 'a;

/// The read-ahead pipeline: `readers` threads take chunk numbers in file
/// order, read each into a free buffer and pass it on; the decode threads
/// (the current rayon pool) take filled buffers in any order and return
/// them. Buffers number readers + decode threads, which bounds the memory
/// in flight. Returns `false`, having read nothing, if no reader thread
/// could be started.
fn read_ahead<S: Source, T: Send>(
    src: &S,
    s: &Section,
    point_bytes: usize,
    chunk: usize,
    readers: usize,
    spare: &mut [std::mem::MaybeUninit<T>],
    decode_chunk: &DecodeChunk<'_, T>,
) -> Result<bool> {
    use std::sync::atomic::{AtomicBool, AtomicUsize};
    use std::sync::{mpsc, Mutex};
    let slots: Vec<Mutex<Option<&mut [std::mem::MaybeUninit<T>]>>> = spare.chunks_mut(chunk).map(|c| Mutex::new(Some(c))).collect();
    let n = slots.len();
    let decoders = rayon::current_num_threads().min(n);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (free_tx, free_rx) = mpsc::channel::<Vec<u8>>();
    let (full_tx, full_rx) = mpsc::channel::<(usize, Result<Vec<u8>>)>();
    for _ in 0..readers + decoders {
        free_tx.send(Vec::with_capacity(chunk * point_bytes)).expect("receiver alive");
    }
    let (free_rx, full_rx) = (Mutex::new(free_rx), Mutex::new(full_rx));
    std::thread::scope(|scope| {
        let mut started = 0;
        for r in 0..readers {
            let full_tx = full_tx.clone();
            let (next, stop, free_rx) = (&next, &stop, &free_rx);
            // O_DIRECT where the file system takes it (a 2^24 file on the
            // H200 host: decode 3.6 s, against 4.9 s through the page cache).
            let mut own = src.reader(chunk * point_bytes);
            let read = move || loop {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let c = next.fetch_add(1, Ordering::Relaxed);
                if c >= n {
                    return;
                }
                // Every sender gone: the decoders have stopped.
                let Ok(mut buf) = free_rx.lock().expect("free buffers").recv() else { return };
                let first = c * chunk;
                buf.resize((chunk.min(s.count - first)) * point_bytes, 0);
                let at = s.start + (first * point_bytes) as u64;
                let got = match own.as_mut() {
                    Some(r) => r.read_at(&mut buf, at),
                    None => src.read_at(&mut buf, at),
                }
                .map(|()| buf);
                if full_tx.send((c, got)).is_err() {
                    return;
                }
            };
            if std::thread::Builder::new().name(format!("srs-read-{r}")).spawn_scoped(scope, read).is_ok() {
                started += 1;
            }
        }
        drop(full_tx);
        if started == 0 {
            return Ok(false);
        }
        let result = (0..decoders).into_par_iter().try_for_each(|_| {
            let free_tx = free_tx.clone();
            loop {
                let got = full_rx.lock().expect("filled buffers").recv();
                let Ok((c, got)) = got else { return Ok(()) };
                let slots = slots[c].lock().expect("chunk slots").take().expect("each chunk is read once");
                // The first error stops the readers; the other decoders
                // drain what is in flight.
                match got.and_then(|buf| decode_chunk(c, slots, &buf).map(|()| buf)) {
                    Ok(buf) => {
                        let _ = free_tx.send(buf);
                    }
                    Err(e) => {
                        stop.store(true, Ordering::Relaxed);
                        return Err(e);
                    }
                }
            }
        });
        // Wakes any reader waiting for a buffer; the scope then joins them.
        drop(free_tx);
        result.map(|()| true)
    })
}

fn check<C: Subgroup>(path: &Path, s: &Section, points: &[C::Affine], point_bytes: usize, key: &Key, section: u64) -> Result<()> {
    subgroup::check::<C>(points, key, section).map_err(|k| {
        located(path, s.name, s.start + (k * point_bytes) as u64, format!("point {k}: point is not in the prime-order subgroup"))
    })
}
