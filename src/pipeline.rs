//! One proving call from the ABI's point of view: validate, then the phases
//! of docs/ARCHITECTURE.md §5 ([`prove`]): 0 pin and start the CPU thread, 1 pre-stage
//! under the memory lock, 2 kernels under the compute lock, 3 unpin and join;
//! then the epilogue.
//!
//! [`start`] does everything up to the epilogue and returns a [`Pending`] that
//! owns what the epilogue needs (the key, r, s and the intermediate sums), so
//! the split form never reads the caller's buffers after start returns.

use std::ffi::{c_int, c_void};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use blstrs::{G1Projective, G2Projective, Scalar};
use group::Group;

use crate::abi::exports::srs_arc;
use crate::abi::types::{fr_t, groth16_proof, CAssignment, SRS};
use crate::assignment::Batch;
use crate::backend::{self, Abc, Admission, Backend, Staged};
use crate::config::{LockMode, Settings};
use crate::error::{Error, Result};
use crate::groth16::{self, epilogue, Intermediates, PhaseTimes, Plans};
use crate::locks::{self, GpuLocks, LockHandle, Span};
use crate::log::round1;
use crate::srs::Srs;

/// A proof whose device/CPU work is done and whose epilogue is pending.
pub struct Pending {
    srs: Arc<Srs>,
    r_s: Vec<Scalar>,
    s_s: Vec<Scalar>,
    sums: Vec<Intermediates>,
}

impl Pending {
    /// Number of circuits (and proofs to write).
    pub fn len(&self) -> usize {
        self.sums.len()
    }

    /// Whether the pending proof holds no circuit (never true for a started call).
    pub fn is_empty(&self) -> bool {
        self.sums.is_empty()
    }

    /// Runs the epilogue and writes `self.len()` proofs.
    ///
    /// # Safety
    /// `proofs` must be valid for `self.len()` writes.
    pub unsafe fn finish(self, proofs: *mut groth16_proof) -> Result<()> {
        let t = Instant::now();
        for (i, m) in self.sums.iter().enumerate() {
            let p = epilogue::proof(&self.srs, m, self.r_s[i], self.s_s[i]);
            // SAFETY: i < len, within the caller's array by contract.
            unsafe { proofs.add(i).write(p) };
        }
        tracing::info!(circuits = self.len(), epilogue_ms = round1(t.elapsed().as_secs_f64() * 1e3), "epilogue done");
        Ok(())
    }
}

/// Copies `n` scalars of r or s.
unsafe fn copy_scalars(ptr: *const fr_t, n: usize, name: &str) -> Result<Vec<Scalar>> {
    if ptr.is_null() {
        return Err(Error::invalid(format!("{name} is NULL but num_circuits is {n}")));
    }
    if !(ptr as usize).is_multiple_of(std::mem::align_of::<fr_t>()) {
        return Err(Error::invalid(format!("{name} = {ptr:p} is not aligned to 8 bytes")));
    }
    let mut v = crate::error::try_vec(n, format_args!("{name} (num_circuits = {n})"))?;
    // SAFETY: caller contract: `n` readable elements; Scalar shares fr_t's layout.
    v.extend_from_slice(unsafe { std::slice::from_raw_parts(ptr as *const Scalar, n) });
    Ok(v)
}

/// Validates the call, runs the phases of docs/ARCHITECTURE.md §5 and returns the sums.
///
/// # Safety
/// The ABI contract of `generate_groth16_proofs_c` (docs/ARCHITECTURE.md §2).
pub unsafe fn start(
    provers: *const CAssignment,
    num_circuits: usize,
    r_s: *const fr_t,
    s_s: *const fr_t,
    srs: *const SRS,
    gpu_mtx: *mut c_void,
    gpu_index: c_int,
) -> Result<Pending> {
    crate::log::init_from_env();
    let t0 = Instant::now();
    // Our own reference, held for the pending handle's lifetime.
    // SAFETY: forwarded contract.
    let key_arc = unsafe { srs_arc(srs) }?;
    let key: &Srs = &key_arc;
    // SAFETY: forwarded contract.
    let batch = unsafe { crate::assignment::validate(provers, num_circuits, key) }?;
    let r = unsafe { copy_scalars(r_s, num_circuits, "r_s") }?;
    let s = unsafe { copy_scalars(s_s, num_circuits, "s_s") }?;
    crate::assignment::check_canonical(&r, || "r_s".into())?;
    crate::assignment::check_canonical(&s, || "s_s".into())?;
    if gpu_index < -1 {
        return Err(Error::invalid(format!("gpu_index is {gpu_index} but must be -1 (any) or a device index ≥ 0")));
    }
    let device = gpu_index.max(0) as usize;
    let settings = Settings::from_env()?;
    let backend = backend::select(device, settings)?;
    // The CPU backend is one device: every gpu_index shares its default
    // handle (and no handle table grows with a large index).
    let device = if backend.name() == "gpu" { device } else { 0 };
    // A caller's handle is held for the whole call, so a concurrent
    // destroy_gpu_mutex cannot free the locks under it.
    let caller_handle;
    let handle: &LockHandle = if gpu_mtx.is_null() {
        locks::default_handle(device)
    } else {
        caller_handle = crate::abi::handles::lock(gpu_mtx)?;
        &caller_handle
    };
    let validated = t0.elapsed();

    // gpu_index = -1 with the default handles: spread the circuits over the GPUs.
    let gpus = if backend.name() == "gpu" { crate::gpu::device_count() } else { 1 };
    let devices = spread_devices(gpu_index, num_circuits, !gpu_mtx.is_null(), gpus);
    if devices.len() > 1 {
        // This backend never reaches phase 1: it must not count as a call the
        // pre-stage pool grows for while the per-device calls run.
        drop(backend);
        let sums = prove_spread(key, &batch, &devices, settings, validated)?;
        return Ok(Pending { srs: key_arc, r_s: r, s_s: s, sums });
    }

    let (result, mut report) = prove(backend.as_ref(), key, &batch, &handle.locks, settings);
    report.device = device;
    report.validate = validated;
    report.log();
    record(report);
    Ok(Pending { srs: key_arc, r_s: r, s_s: s, sums: result? })
}

/// The devices a call runs on: `gpu_index` ≥ 0 → that one; −1 → the first
/// `min(gpus, num_circuits)` devices, unless the caller passed a lock handle
/// (a handle guards one GPU, so the call stays on device 0).
pub fn spread_devices(gpu_index: c_int, num_circuits: usize, handle_given: bool, gpus: usize) -> Vec<usize> {
    if gpu_index >= 0 || handle_given {
        return vec![gpu_index.max(0) as usize];
    }
    (0..gpus.min(num_circuits).max(1)).collect()
}

/// Splits `0..n` into `k` contiguous ranges whose lengths differ by at most one.
pub fn split_ranges(n: usize, k: usize) -> Vec<std::ops::Range<usize>> {
    let k = k.clamp(1, n.max(1));
    (0..k).map(|i| (i * n / k)..((i + 1) * n / k)).collect()
}

/// Proves contiguous groups of circuits on several GPUs at once, each group
/// through [`prove`] with that device's backend and default lock handle.
/// Returns the sums in circuit order; the first error (in device order) wins.
fn prove_spread(
    key: &Srs,
    batch: &Batch<'_>,
    devices: &[usize],
    settings: Settings,
    validated: Duration,
) -> Result<Vec<Intermediates>> {
    let ranges = split_ranges(batch.circuits.len(), devices.len());
    let results: Vec<Result<Vec<Intermediates>>> = std::thread::scope(|scope| {
        let tasks: Vec<_> = devices
            .iter()
            .zip(ranges)
            .map(|(&device, range)| {
                let part = Batch { circuits: batch.circuits[range].to_vec(), ..*batch };
                scope.spawn(move || {
                    let backend = backend::select(device, settings)?;
                    let (result, mut report) = prove(backend.as_ref(), key, &part, &locks::default_handle(device).locks, settings);
                    report.device = device;
                    report.validate = validated;
                    report.log();
                    record(report);
                    result
                })
            })
            .collect();
        tasks.into_iter().map(|t| t.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    });
    let mut sums = Vec::with_capacity(batch.circuits.len());
    for r in results {
        sums.extend(r?);
    }
    Ok(sums)
}

/// What one proving call did: the phase-1 decision, both lock spans, free
/// device memory around it and the time of each part. One per call, logged
/// through `tracing` and kept for benchmarks and tests ([`record_reports`]).
#[derive(Clone, Debug)]
pub struct CallReport {
    /// "cpu" or "gpu".
    pub backend: &'static str,
    /// Device ordinal (also the default lock handle's index).
    pub device: usize,
    /// Circuits in the call.
    pub circuits: usize,
    /// Domain size n (elements).
    pub domain: usize,
    /// `SUPRASEAL_C2_LOCKS` in effect.
    pub lock_mode: LockMode,
    /// `Some(true)` pre-staged, `Some(false)` fallback, `None` nothing to stage (CPU).
    pub prestaged: Option<bool>,
    /// Why the call fell back (or why pinning failed), if it did.
    pub reason: Option<String>,
    /// Free device memory in bytes: before the call asks for the memory lock
    /// (so, in single-lock mode, possibly seconds before its phase 1) and
    /// after phase 2.
    pub free_before: Option<usize>,
    pub free_after: Option<usize>,
    /// The memory-lock hold (two-lock mode only).
    pub mem: Option<Span>,
    /// The compute-lock hold (in single-lock mode it covers phase 1 too).
    pub compute: Option<Span>,
    /// Validation (phase 0).
    pub validate: Duration,
    /// The other parts.
    pub times: PhaseTimes,
    /// The calling thread.
    pub thread: ThreadId,
    /// The error the call returned, if any.
    pub error: Option<String>,
    /// Phase 1 step by step ([`Backend::stage_detail`]), where measured.
    pub stage_detail: Option<String>,
    /// Where the G2 MSMs of B′ ran: "cpu" or "gpu" (`SUPRASEAL_C2_G2_MSM`,
    /// or its `auto` choice).
    pub g2_msm: &'static str,
}

impl CallReport {
    fn log(&self) {
        let ms = |d: Duration| round1(d.as_secs_f64() * 1e3);
        let t = &self.times;
        tracing::info!(
            backend = self.backend,
            gpu = self.device,
            circuits = self.circuits,
            domain = self.domain,
            locks = ?self.lock_mode,
            prestage = match self.prestaged { Some(true) => "ok", Some(false) => "fallback", None => "n/a" },
            reason = self.reason.as_deref().unwrap_or(""),
            free_before = self.free_before.unwrap_or(0),
            free_after = self.free_after.unwrap_or(0),
            mem_wait_ms = self.mem.map_or(0.0, |s| ms(s.wait())),
            mem_hold_ms = self.mem.map_or(0.0, |s| ms(s.hold())),
            compute_wait_ms = self.compute.map_or(0.0, |s| ms(s.wait())),
            compute_hold_ms = self.compute.map_or(0.0, |s| ms(s.hold())),
            validate_ms = ms(self.validate),
            pin_ms = ms(t.pin),
            stage_ms = ms(t.stage),
            prep_ms = ms(t.prep),
            ntt_ms = ms(t.ntt),
            h_msm_ms = ms(t.h_msm),
            batch_add_ms = ms(t.batch_add),
            tails_ms = ms(t.tails),
            g2_ms = ms(t.g2),
            unpin_ms = ms(t.unpin),
            stage_detail = self.stage_detail.as_deref().unwrap_or(""),
            g2_msm = self.g2_msm,
            error = self.error.as_deref().unwrap_or(""),
            "proving call"
        );
    }
}

/// Kept reports, when recording is on.
static REPORTS: Mutex<Option<Vec<CallReport>>> = Mutex::new(None);

/// Starts (`true`) or stops (`false`) keeping a [`CallReport`] per call in
/// memory (benchmarks and tests; off by default). Stopping drops the kept ones.
pub fn record_reports(on: bool) {
    *REPORTS.lock().unwrap_or_else(|p| p.into_inner()) = on.then(Vec::new);
}

/// Takes the reports kept since the last call (empty when recording is off).
pub fn take_reports() -> Vec<CallReport> {
    REPORTS.lock().unwrap_or_else(|p| p.into_inner()).as_mut().map(std::mem::take).unwrap_or_default()
}

fn record(report: CallReport) {
    if let Some(v) = REPORTS.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
        v.push(report);
    }
}

/// Phases 0–3 of docs/ARCHITECTURE.md §5 for a validated batch on `backend`, with `locks`.
///
/// Phase 0 (no lock): pin a/b/c; start the CPU thread (split-MSM plans, then
/// the G2 MSMs of B′). Phase 1 (memory lock): pre-stage or decide fallback.
/// Phase 2 (compute lock): quotient and H-MSM per circuit, then (once the
/// plans are ready) the G1 batch additions and tails and the G2 batch
/// addition (and the G2 MSMs, with `SUPRASEAL_C2_G2_MSM=gpu`); `end_compute`. Phase 3 (no lock):
/// unpin, join the CPU thread. The memory lock is released before the compute
/// lock is requested, so no call ever holds both.
pub fn prove<B: Backend + ?Sized>(
    backend: &B,
    srs: &Srs,
    batch: &Batch<'_>,
    locks: &GpuLocks,
    settings: Settings,
) -> (Result<Vec<Intermediates>>, CallReport) {
    let n = srs.domain_size();
    let inputs: Vec<Abc<'_>> = batch.circuits.iter().map(|c| [c.a, c.b, c.c]).collect();
    let mut report = CallReport {
        backend: backend.name(),
        device: 0,
        circuits: inputs.len(),
        domain: n,
        lock_mode: settings.locks,
        prestaged: None,
        reason: None,
        free_before: None,
        free_after: None,
        mem: None,
        compute: None,
        validate: Duration::ZERO,
        times: PhaseTimes::default(),
        thread: std::thread::current().id(),
        error: None,
        stage_detail: None,
        g2_msm: match (backend.g2_msm_on_device(), settings.g2_msm_auto && backend.name() == "gpu") {
            (true, true) => "gpu (auto)",
            (false, true) => "cpu (auto)",
            (true, false) => "gpu",
            (false, false) => "cpu",
        },
    };

    // Phase 0.
    let t = Instant::now();
    backend.pin_key(srs);
    report.reason = backend.pin(&inputs);
    report.times.pin = t.elapsed();
    let (tx, rx) = mpsc::channel();
    let (g1, cpu) = std::thread::scope(|scope| {
        let cpu = scope.spawn(move || {
            in_cpu_pool(|| {
                let t = Instant::now();
                let plans = Arc::new(Plans::prepare(srs, batch));
                let prep = t.elapsed();
                let _ = tx.send(plans.clone());
                // B′ in G2 (docs/ARCHITECTURE.md §4: the G2 MSMs on CPU threads, beside the
                // GPU), less the parts the backend runs on the device in phase 2.
                let t = Instant::now();
                let (batch_here, msms_here) = (!backend.g2_batch_on_device(), !backend.g2_msm_on_device());
                let g2 = (batch_here || msms_here).then(|| groth16::g2_parts(backend, srs, &plans, batch_here, msms_here));
                (g2, prep, t.elapsed())
            })
        });
        let g1 = locked_phases(backend, srs, batch, locks, settings, &inputs, rx, &mut report);
        (g1, cpu.join())
    });

    // Phase 3.
    let t = Instant::now();
    backend.unpin();
    report.times.unpin = t.elapsed();
    let (g2, prep, g2_time) = match cpu {
        Ok(r) => r,
        Err(panic) => std::panic::resume_unwind(panic),
    };
    report.times.prep = prep;
    report.times.g2 = g2_time;
    let result = g1.and_then(|sums| {
        let g2_cpu = g2.transpose()?;
        Ok(sums
            .into_iter()
            .enumerate()
            .map(|(ci, (h, l, a, b_g1, b_g2))| {
                let b_g2 = b_g2 + g2_cpu.as_ref().map_or(G2Projective::identity(), |m| m[ci]);
                Intermediates { h, l, a, b_g1, b_g2 }
            })
            .collect())
    });
    if let Err(e) = &result {
        report.error = Some(e.to_string());
    }
    (result, report)
}

/// Runs `f` (the CPU thread's split-MSM plans and G2 MSMs) on the library's
/// own rayon pool, so that it makes progress when the caller is itself a
/// worker of the global pool: phase 2 waits for the plans while holding the
/// compute lock, and if the plans' parallel work were queued on the global
/// pool, a caller occupying its only (or every) worker would wait forever.
fn cpu_pool() -> &'static Option<rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| rayon::ThreadPoolBuilder::new().thread_name(|i| format!("supraseal-c2-cpu-{i}")).build().ok())
}

/// Threads of the pool that runs the CPU side of a call (the split-MSM
/// plans and, on the CPU, the G2 MSMs).
pub fn cpu_threads() -> usize {
    cpu_pool().as_ref().map_or(1, |p| p.current_num_threads())
}

fn in_cpu_pool<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    match cpu_pool() {
        Some(p) => p.install(f),
        // Could not start threads: run here (a caller inside a saturated
        // global pool may then wait, as before this pool existed).
        None => f(),
    }
}

/// What phase 2 computes per circuit: H, L, A′, B′ in G1, and the part of B′
/// in G2 made under the compute lock (the batch addition, plus the MSMs when
/// they run on the device).
type DeviceSums = (G1Projective, G1Projective, G1Projective, G1Projective, G2Projective);

/// Phases 1 and 2: the lock holds of one call.
#[allow(clippy::too_many_arguments)]
fn locked_phases<B: Backend + ?Sized>(
    backend: &B,
    srs: &Srs,
    batch: &Batch<'_>,
    locks: &GpuLocks,
    settings: Settings,
    inputs: &[Abc<'_>],
    plans: mpsc::Receiver<Arc<Plans<'_>>>,
    report: &mut CallReport,
) -> Result<Vec<DeviceSums>> {
    let n = srs.domain_size();
    // Read for the report before any lock: a driver query can wait behind
    // other threads' driver calls (~0.1 s seen on the H200 at 2^24), and the
    // memory lock is for admission and allocation only.
    report.free_before = backend.free_memory();
    let stage = |report: &mut CallReport| {
        let t = Instant::now();
        let admission = backend.prestage(inputs, n);
        report.times.stage = t.elapsed();
        report.stage_detail = backend.stage_detail();
        admission
    };
    let (admission, compute) = match settings.locks {
        LockMode::Two => {
            let gate = backend.phase1_gate();
            let mem = locks.mem_timed();
            let admission = stage(report);
            report.mem = Some(mem.release());
            drop(gate);
            (admission, locks.compute_timed())
        }
        LockMode::Single => {
            let compute = locks.compute_timed();
            (stage(report), compute)
        }
    };
    let mut staged: Vec<Option<Staged>> = match admission {
        Admission::NotNeeded => inputs.iter().map(|_| None).collect(),
        Admission::Staged(v) => {
            report.prestaged = Some(true);
            v.into_iter().map(Some).collect()
        }
        Admission::Fallback(why) => {
            report.prestaged = Some(false);
            report.reason = Some(why);
            inputs.iter().map(|_| None).collect()
        }
    };
    let mut times = report.times;
    let result = (|| {
        let mut plans_ready: Option<Arc<Plans<'_>>> = None;
        let mut out = Vec::with_capacity(inputs.len());
        for (ci, abc) in inputs.iter().enumerate() {
            let h = groth16::h_sum(backend, srs, *abc, staged[ci].take(), &mut times)?;
            if plans_ready.is_none() {
                let t = Instant::now();
                let p = plans.recv().map_err(|_| Error::new(crate::error::code::EFAULT, "split-MSM preparation thread failed"))?;
                plans_ready = Some(p);
                tracing::debug!(wait_ms = round1(t.elapsed().as_secs_f64() * 1e3), "waited for the split-MSM plans");
            }
            let plans = plans_ready.as_deref().expect("set above");
            let (l, a, b1) = groth16::g1_sums(backend, srs, batch, plans, ci, &mut times)?;
            out.push((h, l, a, b1, G2Projective::identity()));
        }
        // The G2 parts of B′ that the backend runs on the device (the plans
        // arrived in the loop; validation rejects batches without circuits).
        let Some(plans) = plans_ready.as_deref() else {
            return Ok(out);
        };
        if backend.g2_batch_on_device() {
            let t = Instant::now();
            let sums = groth16::g2_parts(backend, srs, plans, true, false)?;
            times.batch_add += t.elapsed();
            out.iter_mut().zip(sums).for_each(|(o, b)| o.4 += b);
        }
        if backend.g2_msm_on_device() {
            let t = Instant::now();
            let sums = groth16::g2_parts(backend, srs, plans, false, true)?;
            times.tails += t.elapsed();
            out.iter_mut().zip(sums).for_each(|(o, m)| o.4 += m);
        }
        Ok(out)
    })();
    // Staged inputs of circuits not reached (an error) are dropped (freed, or
    // handed back to the idle pre-stage list) before the trim.
    drop(staged);
    let end = backend.end_compute();
    report.free_after = backend.free_memory();
    report.compute = Some(compute.release());
    report.times = times;
    let out = result?;
    end?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_index_and_handles_decide_the_devices() {
        assert_eq!(spread_devices(2, 10, false, 4), vec![2]);
        assert_eq!(spread_devices(0, 10, false, 4), vec![0]);
        assert_eq!(spread_devices(-1, 10, false, 4), vec![0, 1, 2, 3]);
        assert_eq!(spread_devices(-1, 3, false, 8), vec![0, 1, 2]);
        assert_eq!(spread_devices(-1, 10, true, 4), vec![0], "a handle guards one GPU");
        assert_eq!(spread_devices(-1, 10, false, 1), vec![0]);
        assert_eq!(spread_devices(-1, 10, false, 0), vec![0], "no GPU: the CPU backend, one group");
    }

    #[test]
    fn ranges_cover_every_circuit_once_in_order_and_balanced() {
        for n in 1..40 {
            for k in 1..10 {
                let r = split_ranges(n, k);
                assert_eq!(r.len(), k.min(n));
                assert_eq!(r.first().unwrap().start, 0);
                assert_eq!(r.last().unwrap().end, n);
                for w in r.windows(2) {
                    assert_eq!(w[0].end, w[1].start);
                }
                let (lo, hi) = (r.iter().map(|x| x.len()).min().unwrap(), r.iter().map(|x| x.len()).max().unwrap());
                assert!(lo >= 1 && hi - lo <= 1, "n {n} k {k}: {r:?}");
            }
        }
    }
}
