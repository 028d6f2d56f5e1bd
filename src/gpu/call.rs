//! One proving call on one GPU ([`GpuCall`]): the owner of the call's
//! device state from pin to unpin — its compute stream and arithmetic
//! ([`Exec`], the GPU's [`Compute`]), its upload stream, its circuits'
//! pins, what it knows of its key and the record of its phase 1 — behind
//! the pipeline's [`Backend`] steps. Phases 0, 1 and 3 are in
//! [`super::stage`], phase 2's kernels in [`super::ntt`], [`super::msm`]
//! and [`super::batch_add`].

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use blstrs::{G1Affine, G1Projective, Scalar};
use cudarc::driver::CudaStream;

use super::device::{self, cuda_err};
use super::exec::Exec;
use super::resident::KeyPlan;
use super::scalar_buf::ScalarBuf;
use super::stage::{CircuitPins, KeyShape, StagedAbc};
use super::words::from_limbs;
use super::{batch_add, msm, ntt};
use crate::backend::{Abc, Admission, Backend, BackendKind, Clock, Compute, Group, Place, Placement, Step};
use crate::config::Settings;
use crate::curve::GroupName;
use crate::error::Result;
use crate::locks::{ComputeGuard, RegistrationGate, StageLock};

/// One proving call on one device, from pin to unpin.
pub struct GpuCall {
    pub(super) exec: Exec,
    /// The call's upload stream (phase 1's copies, and staging ahead in phase 2).
    pub(super) upload: Arc<CudaStream>,
    /// By circuit index: `None` until pinned, and again once unpinned
    /// (written by phase 0 and the pinning thread, read by phases 1 and 2).
    pub(super) pins: Mutex<Vec<Option<CircuitPins>>>,
    /// Phase 1 step by step in ms (see [`Backend::stage_detail`]); circuit
    /// 0's ring copy, on a thread of its own, adds to it.
    pub(super) detail: Mutex<String>,
    /// Counted in `Gpu::awaiting_stage` until phase 1 ends (or the call does).
    pub(super) awaiting: AtomicBool,
    /// The key's vector lengths (phase 1's reserve) and host vectors (its
    /// residency), set in phase 0.
    pub(super) key: OnceLock<(KeyShape, KeyPlan)>,
    /// The last quotient's b buffer (4·n words), kept from its pointwise
    /// step until staging ahead reuses it for the next circuit's a, or the
    /// H-MSM starts without it ([`GpuCall::stage_part`]).
    pub(super) spare: Mutex<Option<ScalarBuf>>,
    /// Device bytes the last H-MSM may take while batch additions run
    /// beside it ([`Backend::beside_h_msm`]), as the byte rule counted
    /// them: its chunked bytes where the key streamed at the decision (even
    /// over a key that became resident since), or
    /// [`super::stage::beside_resident_h_msm_cap`] over a resident one;
    /// `usize::MAX` while none run beside.
    h_msm_beside: AtomicUsize,
    /// Device bytes the next H-MSM may take at most, where staging ahead
    /// left it no more ([`GpuCall::prefetch_inputs`]: the next circuit's
    /// vectors before a ramp's larger chunks); `usize::MAX` where it set no
    /// bound. Each H step clears it before staging ahead runs.
    pub(super) h_msm_cap: AtomicUsize,
    /// The call's domain size n, set in phase 1.
    pub(super) domain: OnceLock<usize>,
    /// Phase 1 pre-staged this call's first inputs: the card admits a
    /// pre-stage beside a computing call's peak.
    prestaged: AtomicBool,
    /// The address of the `GpuLocks` this call runs under, once named
    /// ([`Backend::under_locks`]); 0 before.
    locks: AtomicUsize,
    clock: Clock,
}

impl GpuCall {
    /// Opens device `ordinal` with two new streams (compute and upload),
    /// resolving `SUPRASEAL_C2_G2_MSM=auto` from this host and device.
    /// Errors: `ENODEV` (no libcuda or no such device), CUDA error numbers
    /// (context, module or stream creation).
    pub fn new(ordinal: usize, mut settings: Settings) -> Result<Self> {
        let gpu = device::device(ordinal)?;
        if settings.g2_msm_auto {
            settings.g2_msm_on_device = crate::config::g2_msm_on_device_auto(
                crate::threads::cpu_threads(),
                gpu.multiprocessors(),
                gpu.clock_mhz(),
            );
        }
        let exec = Exec::new(gpu.clone(), settings)?;
        let upload = gpu.new_stream()?;
        // Counted as a call in flight and awaiting phase 1 only once both
        // streams exist: from here on, `Drop` undoes the counts.
        gpu.awaiting_stage.fetch_add(1, Ordering::SeqCst);
        gpu.active.fetch_add(1, Ordering::SeqCst);
        Ok(GpuCall {
            exec,
            upload,
            pins: Default::default(),
            detail: Default::default(),
            awaiting: AtomicBool::new(true),
            key: OnceLock::new(),
            spare: Mutex::new(None),
            h_msm_beside: AtomicUsize::new(usize::MAX),
            h_msm_cap: AtomicUsize::new(usize::MAX),
            domain: OnceLock::new(),
            prestaged: AtomicBool::new(false),
            locks: AtomicUsize::new(0),
            clock: Clock::default(),
        })
    }

    /// This call's compute stream on the device.
    #[cfg(any(test, feature = "tools"))]
    pub fn exec(&self) -> &Exec {
        &self.exec
    }

    /// Marks this call as one that never reaches phase 1 (direct use by
    /// tests and benchmarks): not a call for the pre-stage pool to grow for.
    #[cfg(any(test, feature = "tools"))]
    pub(crate) fn skip_phase1(&self) {
        self.done();
    }

    /// Whether every call in flight on the device runs under this call's
    /// locks, so that a phase 2 running now ends before this call's starts
    /// (callers may pass different lock handles for one device, whose phase
    /// 2s then overlap).
    pub(super) fn one_phase2_at_a_time(&self) -> bool {
        let id = self.locks.load(Ordering::SeqCst);
        let gpu = &self.exec.gpu;
        let locks = gpu.call_locks.lock().unwrap_or_else(|p| p.into_inner());
        sole_locks(id, &locks, gpu.active.load(Ordering::SeqCst))
    }

    /// Frees the last quotient's b buffer if staging ahead did not take it.
    fn drop_spare(&self) {
        drop(self.spare.lock().unwrap_or_else(|p| p.into_inner()).take());
    }

    /// The quotient's n coefficients left on the device (4·n u64 words,
    /// Montgomery form). a, b, c come from `staged` as far as phase 1 or
    /// staging ahead put them there; the rest are uploaded here, under the
    /// compute lock (the fallback path), each on the upload stream while the
    /// transforms of the vectors before it run.
    fn quotient_on_device(&self, abc: Abc<'_>, n: usize, staged: Option<StagedAbc>) -> Result<ScalarBuf> {
        let mut parts: [Option<ScalarBuf>; 3] = Default::default();
        if let Some(mut s) = staged {
            // Left unfilled only when no filler ran ahead of this turn.
            self.fill_ring(&abc, &mut s)?;
            // Diagnostics only (a host wait the kernels would make on the
            // device anyway): how much of the staged upload is still
            // running when the quotient starts.
            if tracing::enabled!(target: "supraseal_c2::gpu::stage", tracing::Level::DEBUG) {
                let t = Instant::now();
                let _ = self.upload.synchronize();
                tracing::debug!(target: "supraseal_c2::gpu::stage", wait_ms = crate::log::round1(t.elapsed().as_secs_f64() * 1e3), staged = s.staged(), "staged vectors: upload still running at the quotient");
            }
            parts = s.v;
        }
        let missing = parts.iter().filter(|p| p.is_none()).count();
        if missing > 0 && self.unmapped_short_of(missing * n * std::mem::size_of::<Scalar>()) {
            // The vectors uploaded here come from the compute pool, whose
            // free memory the last H-MSM's buffers have split: the pool
            // would map new memory beside it (+1.9 GiB at porep-32g as a
            // 16 GiB card). Returned to the device first (the stream is
            // idle after the H-MSM's download; the staged vectors stay
            // allocated), the uploads map exactly what they take. Only
            // where memory is short: mapping costs ~50 ms per circuit.
            let trimmed = self.exec.stream.synchronize().map_err(cuda_err("synchronize before the in-turn uploads")).and_then(|()| self.exec.gpu.memory.trim_pool());
            if let Err(e) = trimmed {
                tracing::warn!(error = %e.message, "compute pool not trimmed before the in-turn uploads");
            }
        }
        let (t, mut uploaded) = (Instant::now(), 0);
        let what = ["upload a", "upload b", "upload c"];
        let input = |k: usize| match parts[k].take() {
            Some(d) => Ok(d),
            None => {
                uploaded += 1;
                self.upload_padded(abc[k], n, what[k])
            }
        };
        let q = ntt::quotient(&self.exec, n, input, |b| *self.spare.lock().unwrap_or_else(|p| p.into_inner()) = Some(b))?;
        if uploaded > 0 {
            tracing::debug!(uploaded, enqueue_ms = crate::log::round1(t.elapsed().as_secs_f64() * 1e3), "a, b, c: vectors uploaded inside the compute lock");
        }
        Ok(q)
    }

    /// Whether the compute pool keeps its free memory mapped past this call
    /// (else it is trimmed at the end of phase 2, and when the device goes
    /// idle), so that the next call's phase 2 reuses the cache instead of
    /// mapping its buffers anew (at porep-32g on the H200, ~10 ms of
    /// allocations in the next hold over a resident key, and ~8 ms of trim
    /// in this one; over a streamed key on an H100, 69–694 ms of
    /// allocations per pre-staged one-circuit porep-32g call). Kept:
    /// - over this call's resident key: a card with room for the key beside
    ///   a computing call's peak and a pre-stage;
    /// - with `SUPRASEAL_C2_COMPUTE_CACHE=busy`, over a streamed key, at the
    ///   end of phase 2 (not `idle`) while another call is in flight on the
    ///   device, where this call's inputs were pre-staged (the card admits a
    ///   pre-stage beside a computing call's peak); the device's last call
    ///   trims it (`idle`), as other GPU work (PoSt) may need the memory.
    ///
    /// Only while the cache is at most a computing call's peak of this
    /// call's shape as the pool maps it ([`keep_rule`]), and no call of
    /// another shape was admitted counting it since the last trim: admission
    /// counts no more of it than the peak, and only for calls of the cache's
    /// shape ([`super::memory::DeviceMemory::room`]),
    /// so pre-stages and resident uploads see the memory they would see
    /// after a trim.
    fn keeps_compute_cache(&self, idle: bool) -> bool {
        let memory = &self.exec.gpu.memory;
        // A call that never reached phase 1 (direct use by tests, a call
        // that failed before it) leaves the pool as the last call left it,
        // but for a cache kept for the calls in flight once none is left.
        let Some(&n) = self.domain.get() else { return memory.compute_cache_kept() && !(idle && memory.compute_cache_busy()) };
        let key = self.key_shape();
        let call = KeepInputs {
            cached: memory.compute_cached(),
            peak: super::stage::compute_peak_bytes(n, &key, &self.exec.settings),
            key_on_device: self.key_on_device(),
            busy_setting: self.exec.settings.compute_cache_busy,
            idle,
            prestaged: self.prestaged.load(Ordering::SeqCst),
            active: self.exec.gpu.active.load(Ordering::SeqCst),
        };
        // The owner shape is checked last, under its lock, where the keep is recorded.
        keep_rule(call).is_some_and(|busy| memory.keep_compute_cache(n, key, busy))
    }

    /// Whether the device's unmapped memory, as admission sees it (a
    /// `SUPRASEAL_C2_VRAM_LIMIT_MB` card included), holds less than `bytes`
    /// beside the margin; `true` where it cannot be read.
    fn unmapped_short_of(&self, bytes: usize) -> bool {
        let settings = &self.exec.settings;
        self.exec.mem_info().map_or(true, |(free, total)| settings.effective_free(free, total) < bytes.saturating_add(settings.vram_margin))
    }
}

/// [`GpuCall::one_phase2_at_a_time`] from the figures: the call's locks
/// `id` (0: not named), the locks named by the calls in flight, and how many
/// calls are in flight (a call that named none makes the answer `false`).
fn sole_locks(id: usize, named: &[usize], active: usize) -> bool {
    id != 0 && named.len() == active && named.iter().all(|&l| l == id)
}

/// What [`keep_rule`] decides on for one call at the end of its phase 2
/// (`idle`: at its drop, as the device's last call).
#[derive(Clone, Copy, Debug)]
struct KeepInputs {
    /// The compute pool's cache and a computing call's peak of the call's
    /// shape, in bytes.
    cached: usize,
    peak: usize,
    key_on_device: bool,
    /// `SUPRASEAL_C2_COMPUTE_CACHE=busy`.
    busy_setting: bool,
    idle: bool,
    prestaged: bool,
    /// Calls in flight on the device, this one included.
    active: usize,
}

/// The compute pool maps device memory in blocks of this many bytes: a
/// call's phase 2 holds at least its peak rounded up to it, however small
/// the peak (on an H100 with CUDA 13.0, MiMC calls of 2^11 constraints,
/// peak 2.0 MB, left 32 MiB cached after 152–158 allocations).
const COMPUTE_POOL_GRANULE: usize = 32 << 20;

/// The rule of [`GpuCall::keeps_compute_cache`] before the owner shape:
/// `None` to trim, `Some(false)` to keep over the resident key,
/// `Some(true)` to keep for the calls in flight (`busy`). The cache is kept
/// only up to the peak as the pool maps it ([`COMPUTE_POOL_GRANULE`]);
/// admission counts any of it above the peak as used
/// ([`super::memory::DeviceMemory::room`]).
fn keep_rule(c: KeepInputs) -> Option<bool> {
    if c.cached > c.peak.next_multiple_of(COMPUTE_POOL_GRANULE) {
        None
    } else if c.key_on_device {
        Some(false)
    } else if c.busy_setting && !c.idle && c.prestaged && c.active > 1 {
        Some(true)
    } else {
        None
    }
}

impl Drop for GpuCall {
    fn drop(&mut self) {
        self.drop_spare();
        self.done();
        self.unpin_all();
        // The last call in flight returns the idle pre-stage vectors and the
        // pools' caches to the device.
        let gpu = &self.exec.gpu;
        let id = self.locks.load(Ordering::SeqCst);
        if id != 0 {
            let mut locks = gpu.call_locks.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(i) = locks.iter().position(|&l| l == id) {
                locks.swap_remove(i);
            }
        }
        if gpu.active.fetch_sub(1, Ordering::SeqCst) == 1 {
            gpu.memory.release_idle_stages(&gpu.active);
            let _ = self.upload.synchronize();
            let _ = self.exec.stream.synchronize();
            if !self.keeps_compute_cache(true) {
                tracing::debug!(target: "supraseal_c2::gpu::stage", cached = gpu.memory.compute_cached(), "the device's last call trims the compute pool");
                let _ = gpu.memory.trim_pool();
            }
            let _ = gpu.memory.trim_stage_pool();
        }
    }
}

/// The GPU's arithmetic, on a call's compute stream. The G2 MSMs run on the
/// CPU (rayon, blst) unless `SUPRASEAL_C2_G2_MSM` places them on the device.
impl Compute for Exec {
    type Ahead = msm::AheadScalars;

    fn quotient(&self, [a, b, c]: Abc<'_>, n: usize) -> Result<Vec<Scalar>> {
        let inputs = [(a, "upload a"), (b, "upload b"), (c, "upload c")];
        let t = ntt::quotient(self, n, |k| ntt::upload_padded(self, inputs[k].0, n, inputs[k].1).map(ScalarBuf::owned), drop)?;
        Ok(from_limbs(&self.download(&t, "download H coefficients")?))
    }
    fn msm<G: Group>(&self, bases: &[G::Affine], scalars: &[Scalar]) -> Result<G::Projective> {
        if G::NAME == GroupName::G2 && !self.settings.g2_msm_on_device {
            return Ok(crate::cpu::msm::msm::<G>(bases, scalars));
        }
        msm::msm::<G>(self, bases, scalars)
    }
    fn msm_many<G: Group>(&self, bases: &[G::Affine], scalars: &[&[Scalar]]) -> Result<Vec<G::Projective>> {
        if G::NAME == GroupName::G2 && !self.settings.g2_msm_on_device {
            return Ok(scalars.iter().map(|s| crate::cpu::msm::msm::<G>(bases, s)).collect());
        }
        msm::msm_many::<G>(self, bases, scalars)
    }
    fn msm_many_at<G: Group>(&self, bases: &[G::Affine], positions: &[u32], gathered: &[G::Affine], scalars: &[&[Scalar]]) -> Result<Vec<G::Projective>> {
        if G::NAME == GroupName::G2 && !self.settings.g2_msm_on_device {
            let gathered = crate::backend::gathered_or_now(bases, positions, gathered);
            return Ok(scalars.iter().map(|s| crate::cpu::msm::msm::<G>(&gathered, s)).collect());
        }
        msm::msm_many_at::<G>(self, bases, positions, gathered, scalars)
    }
    fn put_ahead<G: Group>(&self, bases: &[G::Affine], positions: &[u32], gathered: &[G::Affine], scalars: &[Vec<Scalar>]) -> Result<Option<msm::AheadScalars>> {
        if G::NAME == GroupName::G2 && !self.settings.g2_msm_on_device {
            return Ok(None);
        }
        msm::put_ahead::<G>(self, bases, positions, gathered, scalars)
    }
    fn msm_many_at_ahead<G: Group>(
        &self,
        bases: &[G::Affine],
        positions: &[u32],
        gathered: &[G::Affine],
        scalars: &[&[Scalar]],
        ahead: Option<msm::AheadScalars>,
    ) -> Result<Vec<G::Projective>> {
        if G::NAME == GroupName::G2 && !self.settings.g2_msm_on_device {
            return self.msm_many_at::<G>(bases, positions, gathered, scalars);
        }
        let made = ahead.is_some();
        let (sums, read) = msm::msm_many_at_ahead::<G>(self, bases, positions, gathered, scalars, ahead)?;
        if made && !read {
            tracing::debug!(group = ?G::NAME, points = positions.len(), "tail scalars put ahead but uploaded again (the key's copy went, or another shape)");
        }
        Ok(sums)
    }
    fn batch_add<G: Group>(&self, bases: &[G::Affine], bitmap: &[u64]) -> Result<G::Projective> {
        batch_add::batch_add::<G>(self, bases, bitmap)
    }
    fn batch_add_many<G: Group>(&self, bases: &[G::Affine], bitmaps: &[&[u64]]) -> Result<Vec<G::Projective>> {
        batch_add::batch_add_many::<G>(self, bases, bitmaps)
    }
}

impl Backend for GpuCall {
    type Staged = StagedAbc;
    type Compute = Exec;

    /// Records the locks for [`GpuCall::one_phase2_at_a_time`] (the first
    /// named count).
    fn under_locks(&self, locks: &crate::locks::GpuLocks) {
        let id = locks as *const crate::locks::GpuLocks as usize;
        if self.locks.compare_exchange(0, id, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
            self.exec.gpu.call_locks.lock().unwrap_or_else(|p| p.into_inner()).push(id);
        }
    }

    fn compute(&self) -> &Exec {
        &self.exec
    }
    fn clock(&self) -> &Clock {
        &self.clock
    }
    fn kind(&self) -> BackendKind {
        BackendKind::Gpu
    }
    fn placement(&self) -> Placement {
        let s = &self.exec.settings;
        Placement {
            g2_batch_add: Place::Device,
            g2_msm: if s.g2_msm_on_device { Place::Device } else { Place::Host },
            g2_msm_auto: s.g2_msm_auto,
        }
    }
    fn stage_detail(&self) -> Option<String> {
        self.detail()
    }
    fn tail_bases_on_host(&self) -> bool {
        !self.key_on_device()
    }
    fn pin_key(&self, srs: &crate::srs::Srs) {
        self.set_key(srs);
    }
    fn pin(&self, ci: usize, abc: Abc<'_>) -> Option<String> {
        GpuCall::pin(self, ci, &abc)
    }
    fn unpin_circuit(&self, ci: usize) {
        self.unpin_circuit_pins(ci);
    }
    fn registration_gate(&self) -> Option<&RegistrationGate> {
        Some(&self.exec.gpu.host_registration)
    }
    fn prestage(&self, _lock: StageLock<'_>, inputs: &[Abc<'_>], n: usize) -> Admission<StagedAbc> {
        let admission = self.prestage_inputs(inputs, n);
        // Whole circuits only: the compute cache's `busy` rule reads this as
        // "the card admits a pre-stage beside a computing call's peak".
        if matches!(admission, Admission::Staged(_)) {
            self.prestaged.store(true, Ordering::SeqCst);
        }
        admission
    }
    fn restage(&self, _lock: StageLock<'_>, abc: Abc<'_>, n: usize, staged: &mut Option<StagedAbc>) -> Option<crate::backend::Restaged> {
        self.restage_first(&abc, n, staged)
    }
    fn memory_events(&self) -> crate::backend::MemoryEvents {
        let gpu = &self.exec.gpu;
        // Ends first (end_compute bumps them last): an end is never seen
        // without its event.
        let phase2_ends = gpu.phase2_ends.load(Ordering::SeqCst);
        crate::backend::MemoryEvents { any: gpu.memory_events.load(Ordering::SeqCst), phase2_ends }
    }
    fn fill(&self, ci: usize, abc: Abc<'_>, staged: &mut StagedAbc) -> Result<()> {
        let t = Instant::now();
        let bytes = self.fill_ring(&abc, staged)?;
        // Circuit 0's copy belongs to the call's staging (it starts once the
        // memory lock is released): it goes into the phase-1 detail.
        if ci == 0 && bytes > 0 {
            self.step("then circuit 0's ring copy outside the lock", t);
        }
        Ok(())
    }
    fn prefetch(&self, _lock: &ComputeGuard<'_>, ci: usize, abc: Abc<'_>, n: usize) -> Option<StagedAbc> {
        self.prefetch_inputs(ci, &abc, n)
    }
    fn quotient_msm(
        &self,
        _lock: &ComputeGuard<'_>,
        abc: Abc<'_>,
        n: usize,
        staged: Option<StagedAbc>,
        bases: &[G1Affine],
        between: &mut dyn FnMut(),
    ) -> Result<G1Projective> {
        let t = Instant::now();
        let mut coeffs = self.quotient_on_device(abc, n, staged)?;
        // Only this call's stream: the step times stay per step, and every
        // copy from the circuit's host buffers is complete after it.
        self.exec.stream.synchronize().map_err(cuda_err("synchronize after the quotient"))?;
        self.clock.add(Step::Ntt, t.elapsed());
        let room = match self.exec.settings.tails_ahead {
            Some(bytes) => bytes,
            None => super::stage::tails_ahead_room(n, &self.key_shape(), &self.exec.settings),
        };
        self.exec.set_tails_ahead_room(room);
        self.h_msm_cap.store(usize::MAX, Ordering::SeqCst);
        between();
        // Not reused by staging ahead: freed before the H-MSM allocates.
        self.drop_spare();
        // The quotient's c and b are given back (freed, or idle pre-stage
        // vectors): a call waiting for this lock may stage now.
        self.exec.gpu.memory_events.fetch_add(1, Ordering::SeqCst);
        let chunk = self.exec.settings.gpu_chunk;
        let budget = msm::h_msm_budget(bases.len(), chunk).min(self.h_msm_beside.load(Ordering::SeqCst)).min(self.h_msm_cap.load(Ordering::SeqCst));
        self.clock.time(Step::HMsm, || msm::msm_device_scalars::<crate::curve::G1>(&self.exec, bases, &mut coeffs, budget))
    }
    /// A second stream where the H-MSM's step and the batch additions fit
    /// together within the call's peak: over a streamed key with the H-MSM
    /// in chunks ([`super::stage::beside_h_msm_bytes`]), over a resident
    /// one (`on` only) with the H-MSM in one piece
    /// ([`super::stage::beside_resident_h_msm_cap`]). Never under fault
    /// injection, whose count of allocations must not depend on two
    /// threads' order.
    fn beside_h_msm(&self, _lock: &ComputeGuard<'_>, n: usize, circuits: usize, mode: crate::config::Beside) -> Option<Exec> {
        use crate::config::Beside;
        let s = &self.exec.settings;
        let resident = self.key_on_device();
        if mode == Beside::Off || (resident && mode != Beside::On) || s.fault.is_some() {
            return None;
        }
        let key = self.key_shape();
        let cap = if resident {
            let Some(cap) = super::stage::beside_resident_h_msm_cap(n, &key, s, circuits) else {
                tracing::debug!("batch additions after the H-MSM: beside it the resident key's H-MSM would not keep its one piece within the call's peak");
                return None;
            };
            cap
        } else {
            let (together, peak) = super::stage::beside_h_msm_bytes(n, &key, s, circuits);
            if together > peak {
                tracing::debug!(together, peak, "batch additions after the H-MSM: beside it they would exceed the call's peak");
                return None;
            }
            msm::msm_chunked_bytes::<msm::G1>(key.h, s.gpu_chunk)
        };
        let side = Exec::new(self.exec.gpu.clone(), *s).map_err(|e| tracing::debug!(error = %e.message, "no second stream: the batch additions run after the H-MSM")).ok()?;
        self.h_msm_beside.store(cap, Ordering::SeqCst);
        Some(side)
    }
    fn end_beside(&self, side: Exec) {
        self.h_msm_beside.store(usize::MAX, Ordering::SeqCst);
        // Its work ended with downloads, unless it failed part-way: then
        // kernels and frees may still be queued.
        if let Err(e) = side.stream.synchronize() {
            tracing::warn!(error = ?e, "the batch additions' stream failed to synchronise");
        }
        let (allocations, alloc_time) = side.allocations();
        tracing::debug!(
            target: "supraseal_c2::gpu::stage",
            allocations,
            alloc_ms = crate::log::round1(alloc_time.as_secs_f64() * 1e3),
            "compute-pool allocations of the batch additions beside the H-MSM"
        );
    }
    fn end_compute(&self, _lock: &ComputeGuard<'_>) -> Result<()> {
        let gpu = &self.exec.gpu;
        // A quotient that failed after its pointwise step leaves its b here:
        // freed before the trim below.
        self.drop_spare();
        self.exec.stream.synchronize().map_err(cuda_err("cuStreamSynchronize (compute)"))?;
        self.upload.synchronize().map_err(cuda_err("cuStreamSynchronize (upload)"))?;
        // cudarc records errors of destructors (frees) context-wide; they may
        // belong to another call, so they are logged, not returned here.
        if let Err(e) = gpu.ctx.check_err() {
            tracing::warn!(error = ?e, "a deferred CUDA error was recorded on this device");
        }
        let t = Instant::now();
        // What the keep rule compares, for the log line below: the cache now
        // and a computing call's peak of this shape.
        let cached = gpu.memory.compute_cached();
        let peak = self.domain.get().map_or(0, |&n| super::stage::compute_peak_bytes(n, &self.key_shape(), &self.exec.settings));
        // Direct use by tests and benchmarks (no phase 1) trims what it grew.
        let keep = self.domain.get().is_some() && self.keeps_compute_cache(false);
        let trimmed = if keep { Ok(()) } else { gpu.memory.trim_pool() };
        let (allocations, alloc_time) = self.exec.allocations();
        tracing::debug!(
            target: "supraseal_c2::gpu::stage",
            allocations,
            alloc_ms = crate::log::round1(alloc_time.as_secs_f64() * 1e3),
            trim_ms = crate::log::round1(t.elapsed().as_secs_f64() * 1e3),
            cache_kept = keep,
            cached,
            peak,
            key_on_device = self.key_on_device(),
            "compute-pool allocations of the call (host time, mapping included where the pool grew), then the trim"
        );
        // The event first: a reader that sees the end sees its event.
        gpu.memory_events.fetch_add(1, Ordering::SeqCst);
        gpu.phase2_ends.fetch_add(1, Ordering::SeqCst);
        trimmed
    }
    fn unpin(&self) {
        self.unpin_all();
    }
    fn free_memory(&self) -> Option<usize> {
        self.exec.mem_info().ok().map(|(free, _)| free)
    }
}

#[cfg(test)]
mod tests {
    use super::{keep_rule, sole_locks, KeepInputs, COMPUTE_POOL_GRANULE};

    #[test]
    fn phase_2s_run_one_at_a_time_only_where_every_call_shares_the_locks() {
        assert!(sole_locks(7, &[7, 7, 7], 3));
        assert!(sole_locks(7, &[7], 1), "alone");
        // Another handle on the device: its phase 2 does not wait for ours.
        assert!(!sole_locks(7, &[7, 9, 7], 3));
        // A call in flight that named no locks (created, not yet named).
        assert!(!sole_locks(7, &[7, 7], 3));
        // This call named none.
        assert!(!sole_locks(0, &[], 1));
    }

    #[test]
    fn the_cache_stays_over_a_resident_key_or_for_calls_in_flight() {
        let busy = KeepInputs { cached: 10, peak: 10, key_on_device: false, busy_setting: true, idle: false, prestaged: true, active: 2 };
        assert_eq!(keep_rule(busy), Some(true), "kept for the call in flight");
        // Over a streamed key, each condition of `busy` alone trims.
        for (c, why) in [
            (KeepInputs { busy_setting: false, ..busy }, "COMPUTE_CACHE=resident"),
            (KeepInputs { idle: true, ..busy }, "the device's last call"),
            (KeepInputs { prestaged: false, ..busy }, "a call on the fallback path"),
            (KeepInputs { active: 1, ..busy }, "no other call in flight"),
            (KeepInputs { cached: COMPUTE_POOL_GRANULE + 1, ..busy }, "a cache over a computing call's peak, as the pool maps it"),
        ] {
            assert_eq!(keep_rule(c), None, "{why}");
        }
        // Over a resident key: kept whatever the setting, idle or not, up to the peak.
        let resident = KeepInputs { key_on_device: true, busy_setting: false, idle: true, prestaged: false, active: 1, ..busy };
        assert_eq!(keep_rule(resident), Some(false));
        assert_eq!(keep_rule(KeepInputs { busy_setting: true, idle: false, active: 3, ..resident }), Some(false), "resident, not busy");
        assert_eq!(keep_rule(KeepInputs { cached: COMPUTE_POOL_GRANULE + 1, ..resident }), None);
        // A small call's peak rounds up to the pool's block; a large one's too.
        assert_eq!(keep_rule(KeepInputs { cached: COMPUTE_POOL_GRANULE, peak: 2_026_476, ..resident }), Some(false), "MiMC 2^11 on an H100");
        let big = 5 * COMPUTE_POOL_GRANULE + 7;
        assert_eq!(keep_rule(KeepInputs { cached: 6 * COMPUTE_POOL_GRANULE, peak: big, ..resident }), Some(false));
        assert_eq!(keep_rule(KeepInputs { cached: 6 * COMPUTE_POOL_GRANULE + 1, peak: big, ..resident }), None);
    }
}
