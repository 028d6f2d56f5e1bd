//! Reading a params file into an [`Srs`]: the layout from the section counts
//! (`layout.rs`), a parallel decode straight into the final vectors
//! (`decode.rs`), and the batched subgroup check ([`super::subgroup`]), on
//! the device for long vectors while the next one decodes (`offload.rs`),
//! which also page-locks each vector for the GPU calls that follow.
//!
//! The file is read with `pread` in chunks, not mapped (`source.rs`): a file
//! truncated while it is read gives a short read (an `EIO` error), where a
//! mapping would raise SIGBUS. Each chunk's page-cache pages are dropped once
//! it is decoded (`POSIX_FADV_DONTNEED`), so the load holds one copy of the
//! points (the decoded vectors, the size of the file) plus a few MiB of buffers.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use blstrs::G1Affine;

use super::decode::decode_section;
use super::layout::{check, located, Layout};
use super::offload::{self, CheckDevice, DeviceResult, Vector, DEVICE_MIN};
use super::source::Source;
use super::subgroup::Key;
use super::{decode_g1_on_curve, decode_g2_on_curve, Srs, G1_BYTES, G2_BYTES};
use crate::config::CheckOn;
use crate::cpu::msm;
use crate::error::{code, Error, Result};

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
    /// The five query vectors were page-locked during the load (a GPU
    /// checked them and proving calls use it), so the first GPU call does
    /// not pin them.
    pub pinned: bool,
    /// Seconds spent page-locking, beside the decode (the last vector's
    /// share after it, counted in `check_s` too).
    pub pin_s: f64,
}

/// `e` (about the first point) said as what it means: the file is not a
/// params file at all. The path stays at the start of the message, once.
fn not_a_params_file(path: &Path, e: Error) -> Error {
    let prefix = format!("{}: ", path.display());
    let detail = e.message.strip_prefix(&prefix).unwrap_or(&e.message).to_string();
    let message = format!(
        "{prefix}not a params file (bellperson's Groth16 parameters start with alpha_g1, a 96-byte uncompressed G1 point): {detail}"
    );
    e.with_message(message)
}

/// Loads `src` (named `path` in messages) on the current rayon pool. With a
/// device to check on (`device(check_on, path)`, asked only when a vector is long enough), each large vector's bucket sums are computed there by
/// one thread while the next vector decodes here.
pub(crate) fn load<S: Source>(
    src: &S,
    path: &Path,
    check_on: CheckOn,
    device: &CheckDevice<'_>,
    progress: Option<&(dyn Fn(u64, u64) + Sync)>,
) -> Result<(Srs, LoadReport)> {
    let t0 = Instant::now();
    let io = crate::config::load_io()?;
    let mut lay = Layout { src, path, pos: 0 };
    // The first point tells a params file from any other file (text, an
    // archive, another key format): bellperson's layout starts with it.
    let alpha_g1 = lay.g1("alpha_g1").map_err(|e| not_a_params_file(path, e))?;
    let beta_g1 = lay.g1("beta_g1")?;
    let beta_g2 = lay.g2("beta_g2")?;
    let gamma_g2 = lay.g2("gamma_g2")?;
    let delta_g1 = lay.g1("delta_g1")?;
    let delta_g2 = lay.g2("delta_g2")?;
    // ic is checked like every vector and kept beside the key: only the verifier uses it.
    let ic = lay.section("ic", G1_BYTES)?;
    let g1_sections = [lay.section("h", G1_BYTES)?, lay.section("l", G1_BYTES)?, lay.section("a", G1_BYTES)?, lay.section("b_g1", G1_BYTES)?];
    let b_g2 = lay.section("b_g2", G2_BYTES)?;
    if lay.pos != src.len() {
        return Err(located(path, "end of file", lay.pos, format!("{} unexpected trailing bytes after b_g2", src.len() - lay.pos)));
    }
    if g1_sections[0].count == 0 {
        return Err(located(path, "h", g1_sections[0].count_at, "the h section is empty (no evaluation domain)"));
    }
    // The device only where some vector is long enough to go there, or
    // where it is demanded (`gpu`: ENODEV without one, whatever the file).
    let long = g1_sections.iter().map(|s| s.count).chain([b_g2.count]).any(|c| c >= DEVICE_MIN);
    let device = if long || check_on == CheckOn::Gpu { device(check_on, path)? } else { None };
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
    let ic_points = decode_section(src, path, &ic, G1_BYTES, decode_g1_on_curve, &tick, &io)?;
    let mut g1: Vec<Option<Vec<G1Affine>>> = vec![None, None, None, None];
    let mut g2 = None;
    let mut decode_s = 0.0;
    let words = key.words();
    let on_device: Vec<DeviceResult> = std::thread::scope(|scope| -> Result<Vec<DeviceResult>> {
        let (tx, rx) = std::sync::mpsc::channel::<(u64, Vector)>();
        // No thread (the process is out of them): every vector is checked here.
        let worker = device.as_deref().and_then(|dev| {
            let work = move || offload::bucket_sums(dev, rx, words);
            std::thread::Builder::new().name("srs-check-gpu".into()).spawn_scoped(scope, work).ok()
        });
        // b_g2 first (pread reads in any order): its device time, the
        // longest per byte, then overlaps the G1 decodes.
        let v = decode_section(src, path, &b_g2, G2_BYTES, decode_g2_on_curve, &tick, &io)?;
        match &worker {
            Some(_) if v.len() >= DEVICE_MIN => {
                // A send fails only if the worker is gone (a panic outside
                // the device code), which the join below reports.
                let _ = tx.send((4, Vector::G2(v)));
            }
            _ => g2 = Some(v),
        }
        for (i, s) in g1_sections.iter().enumerate() {
            let v = decode_section(src, path, s, G1_BYTES, decode_g1_on_curve, &tick, &io)?;
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
    let device_s = on_device.iter().fold(0.0, |t, r| t + r.seconds);
    let mut pin_s = on_device.iter().fold(0.0, |t, r| t + r.pin_seconds);
    let device_vectors = on_device.len();
    let sent: Vec<u64> = on_device.iter().map(|r| r.section).collect();
    // Declared after the vectors (`g1`, `g2`): on every return below that
    // refuses the file, dropped (unregistering the memory) before them.
    let mut pins = Vec::new();
    let settled = check::<msm::G1>(path, &ic, &ic_points, G1_BYTES, &key, 5)
        // The vectors back from the device, and which sections it checked.
        .and_then(|()| offload::settle(path, on_device, &g1_sections, &b_g2, &key, &mut g1, &mut g2, &mut pins));
    let (cpu_fallbacks, checked) = match settled {
        Ok(v) => v,
        Err(e) => {
            drop(pins);
            return Err(e);
        }
    };
    // Every vector is back (the decode and `settle` put each one back): said
    // as an error, not a panic, so that `pins` cannot outlive a vector here.
    if g1.iter().any(Option::is_none) || g2.is_none() {
        drop(pins);
        return Err(Error::new(code::EIO, format!("{}: the loader lost a vector between the decode and the check", path.display())));
    }
    let g1: Vec<Vec<G1Affine>> = g1.into_iter().flatten().collect();
    let Some(g2) = g2 else { unreachable!("checked above") };
    // Again after the vectors' new bindings: dropped before them, also when
    // a panic unwinds from here.
    let mut pins = pins;
    let mut rest = Ok(());
    for (i, (s, v)) in g1_sections.iter().zip(&g1).enumerate() {
        if !checked[i] {
            rest = rest.and_then(|()| check::<msm::G1>(path, s, v, G1_BYTES, &key, i as u64));
        }
    }
    if !checked[4] {
        rest = rest.and_then(|()| check::<msm::G2>(path, &b_g2, &g2, G2_BYTES, &key, 4));
    }
    if let Err(e) = rest {
        drop(pins);
        return Err(e);
    }
    let check_s = t1.elapsed().as_secs_f64();
    // The vectors too short for the device, page-locked here once the
    // device pinned every vector sent to it (a refusal there, e.g. calls in
    // flight or RLIMIT_MEMLOCK, would repeat here).
    if let Some(dev) = device.as_deref().filter(|_| !pins.is_empty() && pins.len() == sent.len()) {
        let t = Instant::now();
        for section in (0..5u64).filter(|s| !sent.contains(s)) {
            // SAFETY: the vector's buffer goes into the key as it is (not
            // resized or moved), and `pins` is dropped first.
            let pin = match section {
                4 if !g2.is_empty() => unsafe { offload::pin_points(dev, &g2) },
                i if i < 4 && !g1[i as usize].is_empty() => unsafe { offload::pin_points(dev, &g1[i as usize]) },
                _ => None,
            };
            pins.extend(pin.map(|p| (section, p)));
        }
        pin_s += t.elapsed().as_secs_f64();
    }
    let lens = g1.iter().map(|v| v.len()).chain([g2.len()]);
    if !lens.enumerate().all(|(i, n)| n == 0 || pins.iter().any(|(s, _)| *s == i as u64)) {
        // `host_pin` is filled once: part of the key pinned there would keep
        // the first call from pinning the rest. Released here (before the
        // vectors), so that the first call pins the whole key.
        pins.clear();
    }

    let [h, l, a, b_g1]: [Vec<G1Affine>; 4] = g1.try_into().expect("four G1 sections");
    // After the vectors' last new bindings: dropped before them on unwind.
    let pins = pins;
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
        pinned: !pins.is_empty(),
        pin_s,
    };
    let srs = Srs::from_parts(path.to_path_buf(), alpha_g1, beta_g1, beta_g2, delta_g1, delta_g2, h, l, a, b_g1, g2)
        .with_verifying_key(gamma_g2, ic_points);
    if !pins.is_empty() {
        // The vectors moved into the key without moving their buffers; the
        // key drops its `host_pin` before them.
        let _ = srs.host_pin.set(Box::new(pins));
    }
    Ok((srs, report))
}
