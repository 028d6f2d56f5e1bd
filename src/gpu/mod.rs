//! The GPU backend: CUDA kernels (cuda/) loaded at run time through cudarc
//! with dynamic loading, so the same library runs on machines without a GPU.
//!
//! Layers (after cudarc's own): [`device`] owns the context, stream and
//! kernel module and converts driver errors; [`ntt`] and [`msm`] drive the
//! kernels; [`stage`] pins and pre-stages a call's inputs (phases 0, 1, 3 of
//! docs/ARCHITECTURE.md §5); [`GpuBackend`] implements the pipeline's [`Backend`]. The NTTs,
//! the G1 MSMs and the batch additions (G1 and G2) run on the device; the G2
//! MSMs of B′ stay on CPU threads, as in the reference, unless
//! `SUPRASEAL_C2_G2_MSM=gpu` moves them to the device.

#[cfg(supraseal_gpu)]
pub mod device;
#[cfg(supraseal_gpu)]
pub mod msm;
#[cfg(supraseal_gpu)]
pub mod ntt;
pub mod resident;
#[cfg(supraseal_gpu)]
pub mod stage;
#[cfg(supraseal_gpu)]
pub mod subgroup;
pub mod tuning;

pub use tuning::{MsmProfile, MsmTuning};

use blstrs::{G1Affine, G2Affine, Scalar};

use crate::error::Result;

/// Types that are plain arrays of u64 limbs (blst layouts).
pub trait Limbs: Copy {
    const WORDS: usize;
}
impl Limbs for Scalar {
    const WORDS: usize = 4;
}
impl Limbs for G1Affine {
    const WORDS: usize = 12;
}
impl Limbs for G2Affine {
    const WORDS: usize = 24;
}

/// Views field elements or affine points as their u64 limbs (for upload).
pub fn limbs<T: Limbs>(v: &[T]) -> &[u64] {
    assert_eq!(std::mem::size_of::<T>(), 8 * T::WORDS);
    // SAFETY: T is repr(transparent) over blst structs made only of u64 limb
    // arrays (size checked above), so its bytes are T::WORDS aligned u64s.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u64, v.len() * T::WORDS) }
}

/// Scalars from limbs (for download).
pub fn from_limbs(words: &[u64]) -> Vec<Scalar> {
    words
        .chunks_exact(4)
        .map(|w| Scalar::from(blst::blst_fr { l: [w[0], w[1], w[2], w[3]] }))
        .collect()
}

/// Whether this build carries GPU kernels.
pub const BUILT_WITH_KERNELS: bool = cfg!(supraseal_gpu);

/// Number of usable CUDA devices (0 without kernels, libcuda or devices).
pub fn device_count() -> usize {
    #[cfg(supraseal_gpu)]
    {
        device::device_count()
    }
    #[cfg(not(supraseal_gpu))]
    {
        0
    }
}

/// A device that computes the bucket sums of the params loader's subgroup
/// check ([`subgroup::bucket_sums`]; the host forms and checks the rounds).
pub trait BucketSums: Send + Sync {
    /// Which device, for logs (e.g. `GPU 0`).
    fn name(&self) -> String;
    /// G1 bucket sums, `groups · buckets` points, group-major.
    fn g1(&self, points: &[G1Affine], key: &[u32; 8], first_stream: u64, groups: usize, buckets: u32) -> Result<Vec<blstrs::G1Projective>>;
    /// G2 bucket sums, as [`BucketSums::g1`].
    fn g2(&self, points: &[G2Affine], key: &[u32; 8], first_stream: u64, groups: usize, buckets: u32) -> Result<Vec<blstrs::G2Projective>>;
}

/// GPU 0 for the params loader's subgroup check: `Ok(None)` when this build
/// has no kernels or no device is usable. Errors: a CUDA error number when
/// the device cannot be opened, `EINVAL` for a malformed switch
/// (`SUPRASEAL_C2_VRAM_LIMIT_MB`, `SUPRASEAL_C2_FAULT_ALLOC`).
pub fn subgroup_device() -> Result<Option<Box<dyn BucketSums>>> {
    #[cfg(supraseal_gpu)]
    {
        subgroup_device_with_chunk(subgroup::MAX_CHUNK)
    }
    #[cfg(not(supraseal_gpu))]
    {
        Ok(None)
    }
}

/// [`subgroup_device`] with vectors sent in chunks of at most `max_chunk`
/// points (tests of the chunking).
#[doc(hidden)]
pub fn subgroup_device_with_chunk(max_chunk: usize) -> Result<Option<Box<dyn BucketSums>>> {
    #[cfg(supraseal_gpu)]
    {
        if device::device_count() == 0 {
            return Ok(None);
        }
        let settings = crate::config::Settings::from_env()?;
        let exec = device::Exec::for_load(device::device(0)?, settings)?;
        Ok(Some(Box::new(LoadDevice { exec, max_chunk })))
    }
    #[cfg(not(supraseal_gpu))]
    {
        let _ = max_chunk;
        Ok(None)
    }
}

/// One stream on GPU 0, for params loads (allocations counted as `N@load`).
#[cfg(supraseal_gpu)]
struct LoadDevice {
    exec: device::Exec,
    max_chunk: usize,
}

#[cfg(supraseal_gpu)]
impl LoadDevice {
    /// Runs one vector's check, unless proving calls are in flight on the
    /// device: the load takes neither lock, so it leaves a busy device to
    /// them (`EBUSY`: the vector is checked on the CPU). Afterwards it waits
    /// for its buffers' frees and, if the device is still idle, returns the
    /// pool's memory to it.
    fn run<T>(&self, f: impl FnOnce(&device::Exec) -> Result<T>) -> Result<T> {
        use std::sync::atomic::Ordering::SeqCst;
        let gpu = &self.exec.gpu;
        if gpu.active.load(SeqCst) != 0 {
            return Err(crate::error::Error::new(
                libc::EBUSY,
                format!("GPU {} has proving calls in flight: the params check leaves it to them", gpu.ordinal),
            ));
        }
        let out = f(&self.exec);
        let _ = self.exec.stream.synchronize();
        if gpu.active.load(SeqCst) == 0 {
            let _ = gpu.trim_pool();
        }
        out
    }
}

#[cfg(supraseal_gpu)]
impl BucketSums for LoadDevice {
    fn name(&self) -> String {
        format!("GPU {}", self.exec.gpu.ordinal)
    }
    fn g1(&self, points: &[G1Affine], key: &[u32; 8], first_stream: u64, groups: usize, buckets: u32) -> Result<Vec<blstrs::G1Projective>> {
        self.run(|exec| subgroup::bucket_sums::<msm::G1>(exec, points, key, first_stream, groups, buckets, self.max_chunk))
    }
    fn g2(&self, points: &[G2Affine], key: &[u32; 8], first_stream: u64, groups: usize, buckets: u32) -> Result<Vec<blstrs::G2Projective>> {
        self.run(|exec| subgroup::bucket_sums::<msm::G2>(exec, points, key, first_stream, groups, buckets, self.max_chunk))
    }
}

/// Restarts the device-allocation counts that `SUPRASEAL_C2_FAULT_ALLOC=N@phase`
/// refers to (tests); a no-op in a build without kernels.
pub fn reset_fault_counters() {
    #[cfg(supraseal_gpu)]
    device::reset_fault_counters();
}

/// The GPU backend for one proving call on one device: the call's compute
/// stream ([`device::Exec`]), its upload stream (phase 1) and what it pinned.
#[cfg(supraseal_gpu)]
pub struct GpuBackend {
    exec: device::Exec,
    upload: std::sync::Arc<cudarc::driver::CudaStream>,
    pins: std::sync::Mutex<Vec<usize>>,
    not_pinned: std::sync::Mutex<Option<String>>,
    /// Phase 1 step by step in ms (see `Backend::stage_detail`).
    stage_detail: std::sync::Mutex<String>,
    /// Counted in `Gpu::awaiting_stage` until phase 1 ends (or the call does).
    awaiting_stage: std::sync::atomic::AtomicBool,
    /// The key's vector lengths (set in phase 0), for phase 1's reserve.
    key_shape: std::sync::Mutex<stage::KeyShape>,
    /// The key's host vectors (set in phase 0), for phase 1's residency.
    key_plan: std::sync::Mutex<resident::KeyPlan>,
}

#[cfg(supraseal_gpu)]
impl GpuBackend {
    /// Opens device `ordinal` with two new streams. Errors: `ENODEV` (no
    /// libcuda or no such device), CUDA error numbers (context, module or
    /// stream creation).
    pub fn new(ordinal: usize, mut settings: crate::config::Settings) -> Result<Self> {
        let gpu = device::device(ordinal)?;
        if settings.g2_msm_auto {
            settings.g2_msm_on_device = crate::config::g2_msm_on_device_auto(
                crate::pipeline::cpu_threads(),
                gpu.multiprocessors(),
                gpu.clock_mhz(),
            );
        }
        let upload = gpu.new_stream()?;
        let exec = device::Exec::new(gpu, settings)?;
        exec.gpu.active.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        exec.gpu.awaiting_stage.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(GpuBackend {
            exec,
            upload,
            pins: Default::default(),
            not_pinned: Default::default(),
            stage_detail: Default::default(),
            awaiting_stage: std::sync::atomic::AtomicBool::new(true),
            key_shape: Default::default(),
            key_plan: Default::default(),
        })
    }

    /// This call no longer waits for phase 1 (idempotent).
    fn stage_done(&self) {
        if self.awaiting_stage.swap(false, std::sync::atomic::Ordering::SeqCst) {
            self.exec.gpu.awaiting_stage.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    /// This call's compute stream on the device.
    pub fn exec(&self) -> &device::Exec {
        &self.exec
    }

    /// The quotient's n coefficients left on the device (4·n u64 words,
    /// Montgomery form): from `staged` when phase 1 uploaded a/b/c, else
    /// uploaded here, under the compute lock (the fallback path).
    fn quotient_on_device(
        &self,
        [a, b, c]: crate::backend::Abc<'_>,
        n: usize,
        staged: Option<crate::backend::Staged>,
    ) -> Result<stage::ScalarBuf> {
        let (da, db, dc) = match staged.map(|s| s.0.downcast::<stage::StagedAbc>()) {
            Some(Ok(s)) => {
                let s = *s;
                (s.a, s.b, s.c)
            }
            _ => {
                let up = |v, what| ntt::upload_padded(&self.exec, v, n, what).map(stage::ScalarBuf::owned);
                (up(a, "upload a")?, up(b, "upload b")?, up(c, "upload c")?)
            }
        };
        ntt::quotient(&self.exec, da, db, dc, n)
    }
}

#[cfg(supraseal_gpu)]
impl Drop for GpuBackend {
    fn drop(&mut self) {
        self.stage_done();
        self.unpin_inputs();
        // The last call in flight returns the idle pre-stage vectors and the
        // pools' caches to the device.
        if self.exec.gpu.active.fetch_sub(1, std::sync::atomic::Ordering::SeqCst) == 1 {
            self.exec.gpu.release_idle_stages();
            let _ = self.upload.synchronize();
            let _ = self.exec.stream.synchronize();
            let _ = self.exec.gpu.trim_pool();
            let _ = self.exec.gpu.trim_stage_pool();
        }
    }
}

#[cfg(supraseal_gpu)]
impl crate::backend::Backend for GpuBackend {
    fn name(&self) -> &'static str {
        "gpu"
    }
    fn stage_detail(&self) -> Option<String> {
        let d = self.stage_detail.lock().unwrap_or_else(|p| p.into_inner());
        (!d.is_empty()).then(|| format!("{d} ms"))
    }
    fn pin_key(&self, srs: &crate::srs::Srs) {
        *self.key_shape.lock().unwrap_or_else(|p| p.into_inner()) = stage::KeyShape::of(srs);
        *self.key_plan.lock().unwrap_or_else(|p| p.into_inner()) = resident::KeyPlan::of(srs);
        stage::pin_key(&self.exec.gpu.ctx, srs);
    }
    fn g2_batch_on_device(&self) -> bool {
        true
    }
    fn pin(&self, inputs: &[crate::backend::Abc<'_>]) -> Option<String> {
        let why = self.pin_inputs(inputs);
        *self.not_pinned.lock().unwrap_or_else(|p| p.into_inner()) = why.clone();
        why
    }
    fn phase1_gate(&self) -> Option<std::sync::RwLockReadGuard<'_, ()>> {
        Some(self.exec.gpu.host_registration.read().unwrap_or_else(|p| p.into_inner()))
    }
    fn prestage(&self, inputs: &[crate::backend::Abc<'_>], n: usize) -> crate::backend::Admission {
        let not_pinned = self.not_pinned.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let admission = self.prestage_inputs(inputs, n, not_pinned.as_deref());
        self.stage_done();
        admission
    }
    fn end_compute(&self) -> Result<()> {
        let gpu = &self.exec.gpu;
        self.exec.stream.synchronize().map_err(device::cuda_err("cuStreamSynchronize (compute)"))?;
        self.upload.synchronize().map_err(device::cuda_err("cuStreamSynchronize (upload)"))?;
        // cudarc records errors of destructors (frees) context-wide; they may
        // belong to another call, so they are logged, not returned here.
        if let Err(e) = gpu.ctx.check_err() {
            tracing::warn!(error = ?e, "a deferred CUDA error was recorded on this device");
        }
        gpu.trim_pool()
    }
    fn unpin(&self) {
        self.unpin_inputs();
    }
    fn free_memory(&self) -> Option<usize> {
        self.exec.mem_info().ok().map(|(free, _)| free)
    }
    fn quotient(&self, abc: crate::backend::Abc<'_>, n: usize, staged: Option<crate::backend::Staged>) -> Result<Vec<Scalar>> {
        let t = self.quotient_on_device(abc, n, staged)?;
        Ok(from_limbs(&self.exec.download(&t, "download H coefficients")?))
    }
    fn quotient_msm(
        &self,
        abc: crate::backend::Abc<'_>,
        n: usize,
        staged: Option<crate::backend::Staged>,
        bases: &[G1Affine],
    ) -> Result<(blstrs::G1Projective, std::time::Duration, std::time::Duration)> {
        let t = std::time::Instant::now();
        let mut coeffs = self.quotient_on_device(abc, n, staged)?;
        // Only this call's stream: the phase times stay per step.
        self.exec.stream.synchronize().map_err(device::cuda_err("synchronize after the quotient"))?;
        let ntt_time = t.elapsed();
        let t = std::time::Instant::now();
        let h = msm::msm_device_scalars::<msm::G1>(&self.exec, bases, &mut coeffs)?;
        drop(coeffs);
        Ok((h, ntt_time, t.elapsed()))
    }
    fn msm_g1(&self, bases: &[G1Affine], scalars: &[Scalar]) -> Result<blstrs::G1Projective> {
        msm::msm::<msm::G1>(&self.exec, bases, scalars)
    }
    fn g2_msm_on_device(&self) -> bool {
        self.exec.settings.g2_msm_on_device
    }
    /// On the CPU (rayon, blst) unless `SUPRASEAL_C2_G2_MSM=gpu`.
    fn msm_g2(&self, bases: &[G2Affine], scalars: &[Scalar]) -> Result<blstrs::G2Projective> {
        if self.g2_msm_on_device() {
            msm::msm::<msm::G2>(&self.exec, bases, scalars)
        } else {
            Ok(crate::cpu::msm::msm::<crate::cpu::msm::G2>(bases, scalars))
        }
    }
    fn batch_add_g1(&self, bases: &[G1Affine], bitmap: &[u64]) -> Result<blstrs::G1Projective> {
        msm::batch_add::<msm::G1>(&self.exec, bases, bitmap)
    }
    fn batch_add_g2(&self, bases: &[G2Affine], bitmap: &[u64]) -> Result<blstrs::G2Projective> {
        msm::batch_add::<msm::G2>(&self.exec, bases, bitmap)
    }
}

/// Opens the GPU backend on `ordinal` for one call, or explains why there is
/// none (`ENODEV`).
pub fn backend(ordinal: usize, settings: crate::config::Settings) -> Result<Box<dyn crate::backend::Backend>> {
    #[cfg(supraseal_gpu)]
    {
        Ok(Box::new(GpuBackend::new(ordinal, settings)?))
    }
    #[cfg(not(supraseal_gpu))]
    {
        let _ = (ordinal, settings);
        Err(crate::error::Error::no_device("this build has no GPU kernels (nvcc was not found at build time)"))
    }
}

/// Direct access to one GPU for tests and benchmarks, in every build: in a
/// build without kernels (or on a machine without a GPU) `open` says why.
pub struct GpuBackendHandle {
    #[cfg(supraseal_gpu)]
    inner: GpuBackend,
    #[cfg(not(supraseal_gpu))]
    never: std::convert::Infallible,
}

impl GpuBackendHandle {
    /// Opens device `ordinal` with the default settings; `Err` carries the
    /// reason there is none.
    pub fn open(ordinal: usize) -> std::result::Result<Self, String> {
        Self::open_with(ordinal, crate::config::Settings::default())
    }

    /// Opens device `ordinal` with `settings` (e.g. `g2_msm_on_device`).
    pub fn open_with(ordinal: usize, settings: crate::config::Settings) -> std::result::Result<Self, String> {
        #[cfg(supraseal_gpu)]
        {
            let inner = GpuBackend::new(ordinal, settings).map_err(|e| e.message)?;
            // Direct use never reaches phase 1: not a call for the pool to grow for.
            inner.stage_done();
            Ok(GpuBackendHandle { inner })
        }
        #[cfg(not(supraseal_gpu))]
        {
            let _ = (ordinal, settings);
            Err("this build has no GPU kernels (nvcc was not found at build time)".into())
        }
    }

    /// The backend (as the pipeline uses it).
    pub fn backend(&self) -> &dyn crate::backend::Backend {
        #[cfg(supraseal_gpu)]
        {
            &self.inner
        }
        #[cfg(not(supraseal_gpu))]
        {
            match self.never {}
        }
    }

    /// One NTT of `a` (length a power of two) on the device, with the CPU
    /// backend's conventions (`cpu::ntt`): natural order, inverse scaled by
    /// 1/n, `coset` evaluating on / interpolating from g·⟨ω⟩.
    pub fn ntt(&self, a: &[Scalar], dir: crate::cpu::ntt::Direction, coset: bool) -> Result<Vec<Scalar>> {
        #[cfg(supraseal_gpu)]
        {
            use ff::{Field, PrimeField};
            let gpu = self.inner.exec();
            let n = a.len();
            let lg = n.trailing_zeros();
            let g = Scalar::MULTIPLICATIVE_GENERATOR;
            let mut d = gpu.upload(limbs(a), "upload NTT input")?;
            match dir {
                crate::cpu::ntt::Direction::Forward => {
                    if coset {
                        ntt::mul_powers(gpu, &mut d, g, Scalar::ONE, n)?;
                    }
                    ntt::ntt(gpu, &mut d, &ntt::Twiddles::new(gpu, lg, false)?, lg)?;
                }
                crate::cpu::ntt::Direction::Inverse => {
                    ntt::ntt(gpu, &mut d, &ntt::Twiddles::new(gpu, lg, true)?, lg)?;
                    let base = if coset { g.invert().unwrap() } else { Scalar::ONE };
                    ntt::mul_powers(gpu, &mut d, base, Scalar::from(n as u64).invert().unwrap(), n)?;
                }
            }
            Ok(from_limbs(&gpu.download(&d, "download NTT output")?))
        }
        #[cfg(not(supraseal_gpu))]
        {
            let _ = (a, dir, coset);
            match self.never {}
        }
    }

    /// Benchmark of the forward NTT with the data already on the device, as
    /// the pipeline runs it: uploads `a` (length 2^k) once, then returns
    /// (ms to build the twiddle tables, median ms of `reps` transforms), each
    /// transform timed from launch to the end of a synchronisation of this
    /// call's stream.
    pub fn ntt_on_device_ms(&self, a: &[Scalar], reps: usize) -> Result<(f64, f64)> {
        #[cfg(supraseal_gpu)]
        {
            let gpu = self.inner.exec();
            let lg = a.len().trailing_zeros();
            let sync = || gpu.stream.synchronize().map_err(device::cuda_err("synchronize"));
            let mut d = gpu.upload(limbs(a), "upload NTT input")?;
            sync()?;
            let t = std::time::Instant::now();
            let tw = ntt::Twiddles::new(gpu, lg, false)?;
            sync()?;
            let tw_ms = t.elapsed().as_secs_f64() * 1e3;
            let mut times: Vec<f64> = Vec::with_capacity(reps);
            for _ in 0..reps.max(1) {
                let t = std::time::Instant::now();
                ntt::ntt(gpu, &mut d, &tw, lg)?;
                sync()?;
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
            times.sort_by(f64::total_cmp);
            Ok((tw_ms, times[times.len() / 2]))
        }
        #[cfg(not(supraseal_gpu))]
        {
            let _ = (a, reps);
            match self.never {}
        }
    }

    /// Benchmark of one G1 MSM with the bases already on the device (as
    /// sppark's harness keeps its points): uploads `bases` once, then per
    /// repetition uploads `scalars` (page-lock them for DMA speed) and runs
    /// the MSM with `tuning`, timed to the result on the host. Returns the
    /// median ms of `reps` runs and the result of the last run, plus one more
    /// run's per-kernel profile (`MsmProfile`: synchronised after each launch).
    /// Errors: a CUDA error naming the call.
    pub fn msm_g1_resident_ms(
        &self,
        bases: &[G1Affine],
        scalars: &[Scalar],
        tuning: MsmTuning,
        reps: usize,
    ) -> Result<(f64, blstrs::G1Projective, MsmProfile)> {
        assert_eq!(bases.len(), scalars.len(), "msm_g1_resident_ms: bases vs scalars");
        #[cfg(supraseal_gpu)]
        {
            let gpu = self.inner.exec();
            let d_bases = gpu.upload(limbs(bases), "upload MSM bases")?;
            gpu.stream.synchronize().map_err(device::cuda_err("synchronize"))?;
            let run = |profile: Option<&mut MsmProfile>| -> Result<blstrs::G1Projective> {
                let mut d_scalars = gpu.upload(limbs(scalars), "upload MSM scalars")?;
                msm::msm_resident::<msm::G1>(gpu, &d_bases.slice(..), bases.len(), &mut d_scalars.slice_mut(..), tuning, profile)
            };
            let mut times = Vec::with_capacity(reps);
            let mut last = run(None)?; // warm-up
            for _ in 0..reps.max(1) {
                let t = std::time::Instant::now();
                last = run(None)?;
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
            times.sort_by(f64::total_cmp);
            let mut profile = MsmProfile::default();
            run(Some(&mut profile))?;
            Ok((times[times.len() / 2], last, profile))
        }
        #[cfg(not(supraseal_gpu))]
        {
            let _ = (tuning, reps);
            match self.never {}
        }
    }

    /// Runs `f` with `v` page-locked (`cuMemHostRegister`), as the pipeline
    /// page-locks the key and a/b/c; a failed registration runs `f` anyway
    /// (pageable copies) and says so on stderr.
    pub fn with_pinned<T, R>(&self, v: &[T], f: impl FnOnce() -> R) -> R {
        #[cfg(supraseal_gpu)]
        {
            let _ = self.inner.exec().gpu.ctx.bind_to_thread();
            let ptr = v.as_ptr() as *mut std::ffi::c_void;
            // SAFETY: `v` outlives the registration, which ends before this returns.
            let r = unsafe { cudarc::driver::sys::cuMemHostRegister_v2(ptr, std::mem::size_of_val(v), 0) };
            let ok = r == cudarc::driver::sys::cudaError_enum::CUDA_SUCCESS;
            if !ok {
                eprintln!("with_pinned: cuMemHostRegister failed ({r:?}); running with pageable memory");
            }
            let out = f();
            if ok {
                // SAFETY: registered above.
                unsafe { cudarc::driver::sys::cuMemHostUnregister(ptr) };
            }
            out
        }
        #[cfg(not(supraseal_gpu))]
        {
            let _ = (v, f);
            match self.never {}
        }
    }

    /// Device memory in use (total − free) in bytes, by every process.
    pub fn used_bytes(&self) -> Result<usize> {
        #[cfg(supraseal_gpu)]
        {
            let (free, total) = self.inner.exec().mem_info()?;
            Ok(total - free)
        }
        #[cfg(not(supraseal_gpu))]
        {
            match self.never {}
        }
    }

    /// Free device memory in bytes.
    pub fn free_bytes(&self) -> Result<usize> {
        #[cfg(supraseal_gpu)]
        {
            Ok(self.inner.exec().mem_info()?.0)
        }
        #[cfg(not(supraseal_gpu))]
        {
            match self.never {}
        }
    }
}
