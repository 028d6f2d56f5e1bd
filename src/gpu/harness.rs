//! Direct access to one GPU for tests and benchmarks ([`GpuBackendHandle`]):
//! single kernels (NTT, MSM) timed or compared with the CPU, outside the
//! proving pipeline.

use blstrs::{G1Affine, Scalar};

#[cfg(supraseal_gpu)]
use super::call::GpuCall;
#[cfg(supraseal_gpu)]
use super::words::{from_limbs, limbs};
#[cfg(supraseal_gpu)]
use super::{device, msm, ntt};
use super::tuning::{MsmProfile, MsmTuning, NttTuning};
use crate::error::Result;

/// What the library holds on a device, read without opening a call (a
/// [`GpuBackendHandle`] is a call in flight: its drop, the last one, would
/// trim the pools).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolState {
    /// Bytes allocated from the library's pools and not freed
    /// ([`super::memory::DeviceMemory::pools_in_use`]): a leak shows here
    /// exactly, unlike free memory, which also moves with the driver's own
    /// lazy reservations (2 MiB at a time).
    pub in_use: usize,
    /// Free device memory (`cuMemGetInfo`), not counting the pools' caches.
    pub free: usize,
    /// Bytes the compute pool keeps mapped for reuse (kept between calls
    /// over a resident key, up to a computing call's peak).
    pub compute_cache: usize,
    /// Bytes the pre-stage pool keeps mapped (0 once the device is idle).
    pub stage_cache: usize,
    /// How many times calls kept the compute pool's cache past their phase
    /// 2 since the process started: over a resident key, and for the calls
    /// in flight (`SUPRASEAL_C2_COMPUTE_CACHE=busy`).
    pub keeps: (u64, u64),
}

/// [`PoolState`] of device `ordinal`; `Err` where there is none.
pub fn pool_state(ordinal: usize) -> std::result::Result<PoolState, String> {
    #[cfg(supraseal_gpu)]
    {
        let gpu = device::device(ordinal).map_err(|e| e.message)?;
        let (free, _) = gpu.mem_info().map_err(|e| e.message)?;
        let m = &gpu.memory;
        Ok(PoolState { in_use: m.pools_in_use(), free, compute_cache: m.compute_cached(), stage_cache: m.stage_cached(), keeps: m.compute_keeps() })
    }
    #[cfg(not(supraseal_gpu))]
    {
        let _ = ordinal;
        Err(super::NO_KERNELS.into())
    }
}

/// Direct access to one GPU for tests and benchmarks, in every build: in a
/// build without kernels (or on a machine without a GPU) `open` says why.
pub struct GpuBackendHandle {
    #[cfg(supraseal_gpu)]
    inner: GpuCall,
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
            let inner = GpuCall::new(ordinal, settings).map_err(|e| e.message)?;
            inner.skip_phase1();
            Ok(GpuBackendHandle { inner })
        }
        #[cfg(not(supraseal_gpu))]
        {
            let _ = (ordinal, settings);
            Err(super::NO_KERNELS.into())
        }
    }

    /// The call (as the pipeline uses it).
    #[cfg(supraseal_gpu)]
    pub fn call(&self) -> &GpuCall {
        &self.inner
    }

    /// The call (as the pipeline uses it); never reached in a build
    /// without kernels, where [`GpuBackendHandle::open`] fails.
    #[cfg(not(supraseal_gpu))]
    pub fn call(&self) -> &crate::cpu::CpuCall {
        match self.never {}
    }

    /// The device's arithmetic on the call's compute stream.
    #[cfg(supraseal_gpu)]
    pub fn compute(&self) -> &super::exec::Exec {
        self.inner.exec()
    }

    /// The arithmetic; never reached in a build without kernels, where
    /// [`GpuBackendHandle::open`] fails.
    #[cfg(not(supraseal_gpu))]
    pub fn compute(&self) -> &crate::cpu::CpuCompute {
        match self.never {}
    }

    /// One NTT of `a` (length a power of two) on the device, with the CPU
    /// backend's conventions (`cpu::ntt`): natural order, inverse scaled by
    /// 1/n, `coset` evaluating on / interpolating from g·⟨ω⟩.
    pub fn ntt(&self, a: &[Scalar], dir: crate::curve::Direction, coset: bool) -> Result<Vec<Scalar>> {
        self.ntt_with(a, dir, coset, false, NttTuning::for_domain(a.len().trailing_zeros(), None))
    }

    /// [`Self::ntt`] by DIT passes (bit reversal first, shift passes
    /// apart) or by `dif` passes, as the quotient runs them
    /// (`gpu::ntt::ntt_dif`: bit-reversed order out, an inverse transform's
    /// 1/n and coset shift fused into its last pass, then a bit reversal on
    /// the device), with the passes' launch choice `tuning`: the same
    /// results.
    pub fn ntt_with(&self, a: &[Scalar], dir: crate::curve::Direction, coset: bool, dif: bool, tuning: NttTuning) -> Result<Vec<Scalar>> {
        #[cfg(supraseal_gpu)]
        {
            use ff::{Field, PrimeField};
            let gpu = self.inner.exec();
            let n = a.len();
            let lg = n.trailing_zeros();
            let g = Scalar::MULTIPLICATIVE_GENERATOR;
            let mut d = gpu.upload(limbs(a), "upload NTT input")?;
            match dir {
                crate::curve::Direction::Forward => {
                    if coset {
                        ntt::mul_powers(gpu, &mut d, g, Scalar::ONE, n)?;
                    }
                    let tw = ntt::Twiddles::new(gpu, lg, false)?;
                    if dif {
                        ntt::ntt_dif(gpu, &mut d, &tw, lg, None, tuning)?;
                        ntt::bit_reverse(gpu, &mut d, lg)?;
                    } else {
                        ntt::ntt(gpu, &mut d, &tw, lg, tuning)?;
                    }
                }
                crate::curve::Direction::Inverse => {
                    let base = if coset { g.invert().unwrap() } else { Scalar::ONE };
                    let n_inv = Scalar::from(n as u64).invert().unwrap();
                    let tw = ntt::Twiddles::new(gpu, lg, true)?;
                    if dif {
                        ntt::ntt_dif_scaled(gpu, &mut d, &tw, lg, base, n_inv, tuning)?;
                        ntt::bit_reverse(gpu, &mut d, lg)?;
                    } else {
                        ntt::ntt(gpu, &mut d, &tw, lg, tuning)?;
                        ntt::mul_powers(gpu, &mut d, base, n_inv, n)?;
                    }
                }
            }
            Ok(from_limbs(&gpu.download(&d, "download NTT output")?))
        }
        #[cfg(not(supraseal_gpu))]
        {
            let _ = (a, dir, coset, dif, tuning);
            match self.never {}
        }
    }

    /// Benchmark of the forward NTT with the data already on the device, as
    /// the pipeline runs it, with the passes' launch choice `tuning`:
    /// uploads `a` (length 2^k) once, then returns (ms to build the twiddle
    /// tables, median ms of `reps` transforms with the bit reversal and DIT
    /// passes, median ms of `reps` with the DIF passes alone, bit-reversed
    /// out), each transform timed from launch to the end of a
    /// synchronisation of this call's stream.
    pub fn ntt_on_device_ms(&self, a: &[Scalar], reps: usize, tuning: NttTuning) -> Result<(f64, f64, f64)> {
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
            let mut median = |f: &mut dyn FnMut(&mut cudarc::driver::CudaSlice<u64>) -> Result<()>| -> Result<f64> {
                let mut times: Vec<f64> = Vec::with_capacity(reps);
                for _ in 0..reps.max(1) {
                    let t = std::time::Instant::now();
                    f(&mut d)?;
                    sync()?;
                    times.push(t.elapsed().as_secs_f64() * 1e3);
                }
                times.sort_by(f64::total_cmp);
                Ok(times[times.len() / 2])
            };
            let dit = median(&mut |d| ntt::ntt(gpu, d, &tw, lg, tuning))?;
            let dif = median(&mut |d| ntt::ntt_dif(gpu, d, &tw, lg, None, tuning))?;
            Ok((tw_ms, dit, dif))
        }
        #[cfg(not(supraseal_gpu))]
        {
            let _ = (a, reps, tuning);
            match self.never {}
        }
    }

    /// A split plan's tail MSMs as phase 2 runs them:
    /// Σ_t scalars[j][t]·bases[positions[t]] for each circuit j. With
    /// `resident`, `bases` is made the device's resident key for this call
    /// (the key there before, if any, is put back after) and the positions
    /// and scalars go ahead; else the bases gathered on the host and the
    /// scalars go ahead (with room for them: the key streamed). Put on the
    /// device ahead from a thread of their own (`msm::put_ahead`), then
    /// `msm::msm_many_at_ahead`. Returns the sums and whether the MSM read
    /// the copies put ahead.
    pub fn tail_msm_ahead<G: crate::backend::Group>(&self, bases: &[G::Affine], positions: &[u32], scalars: &[Vec<Scalar>], resident: bool) -> Result<(Vec<G::Projective>, bool)> {
        #[cfg(supraseal_gpu)]
        {
            use super::resident::copy::ResidentKey;
            use std::sync::{Arc, Mutex};
            /// Puts the device's key and the room for tails ahead back when
            /// the call ends, a panic included (the test key's host vector
            /// is the caller's).
            struct Restore<'a> {
                gpu: &'a super::exec::Exec,
                before: Option<Option<Arc<ResidentKey>>>,
                slot: &'a Mutex<Option<Arc<ResidentKey>>>,
                room: usize,
            }
            impl Drop for Restore<'_> {
                fn drop(&mut self) {
                    let _ = self.gpu.stream.synchronize();
                    self.gpu.set_tails_ahead_room(self.room);
                    if let Some(before) = self.before.take() {
                        *self.slot.lock().unwrap_or_else(|p| p.into_inner()) = before;
                    }
                }
            }
            let gpu = self.inner.exec();
            // No key is admitted or released meanwhile.
            let _admission = gpu.gpu.memory.resident_admission.lock().unwrap_or_else(|p| p.into_inner());
            let slot = &gpu.gpu.memory.resident;
            let mut restore = Restore { gpu, before: None, slot, room: gpu.tails_ahead_room() };
            let gathered: Vec<G::Affine> = if resident {
                let d = gpu.upload(limbs(bases), "upload resident bases")?;
                let key = ResidentKey::of_copies(u64::MAX, gpu.stream.clone(), vec![(bases.as_ptr() as usize, d)]);
                restore.before = Some(slot.lock().unwrap_or_else(|p| p.into_inner()).replace(Arc::new(key)));
                Vec::new()
            } else {
                // `bases` is in no resident key (the caller's vector).
                gpu.set_tails_ahead_room(usize::MAX / 2);
                positions.iter().map(|&q| bases[q as usize]).collect()
            };
            let ahead = std::thread::scope(|s| s.spawn(|| msm::put_ahead::<G>(gpu, bases, positions, &gathered, scalars)).join().unwrap())?;
            let views: Vec<&[Scalar]> = scalars.iter().map(Vec::as_slice).collect();
            let put = ahead.is_some();
            let (sums, read) = msm::msm_many_at_ahead::<G>(gpu, bases, positions, &gathered, &views, ahead)?;
            drop(restore);
            Ok((sums, put && read))
        }
        #[cfg(not(supraseal_gpu))]
        {
            let _ = (bases, positions, scalars, resident);
            match self.never {}
        }
    }

    /// Tail MSMs of this process that read their scalars from copies put
    /// ahead (`gpu::msm::TAILS_READ_AHEAD`).
    pub fn tails_read_ahead() -> usize {
        #[cfg(supraseal_gpu)]
        {
            msm::TAILS_READ_AHEAD.load(std::sync::atomic::Ordering::Relaxed)
        }
        #[cfg(not(supraseal_gpu))]
        {
            0
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

    /// Benchmark of one G1 MSM over bases streamed in chunks of `chunk`
    /// points, kernels only: the bases and scalars uploaded before the
    /// clock starts, then each chunk its own MSM with `tuning` summed on the
    /// host (`table` false, as one MSM per chunk runs), or every chunk added
    /// into one [`msm::SharedTable`] with `tuning` and reduced once (`table`
    /// true, `SUPRASEAL_C2_STREAMED_MSM=table`), timed to the result on the
    /// host. Returns the median ms of `reps` runs, the result of the last,
    /// and one more run's per-kernel profile (summed over the chunks).
    /// Errors: a CUDA error naming the call.
    pub fn msm_g1_chunks_ms(&self, bases: &[G1Affine], scalars: &[Scalar], chunk: usize, tuning: MsmTuning, table: bool, reps: usize) -> Result<(f64, blstrs::G1Projective, MsmProfile)> {
        assert_eq!(bases.len(), scalars.len(), "msm_g1_chunks_ms: bases vs scalars");
        assert!(chunk > 0, "msm_g1_chunks_ms: chunks of 0 points");
        #[cfg(supraseal_gpu)]
        {
            use group::Group;
            let gpu = self.inner.exec();
            let d_bases = gpu.upload(limbs(bases), "upload MSM bases")?;
            let words = <blstrs::G1Affine as super::words::Limbs>::WORDS;
            let run = |mut profile: Option<&mut MsmProfile>| -> Result<(f64, blstrs::G1Projective)> {
                let mut d_scalars = gpu.upload(limbs(scalars), "upload MSM scalars")?;
                gpu.stream.synchronize().map_err(device::cuda_err("synchronize"))?;
                let t = std::time::Instant::now();
                let parts = (0..bases.len()).step_by(chunk).map(|first| (first, chunk.min(bases.len() - first)));
                let sum = if table {
                    let mut shared = msm::SharedTable::new::<msm::G1>(gpu, chunk.min(bases.len()), tuning)?;
                    for (first, len) in parts {
                        let b = d_bases.slice(words * first..words * (first + len));
                        shared.add::<msm::G1>(gpu, &b, len, &mut d_scalars.slice_mut(4 * first..4 * (first + len)), profile.as_deref_mut())?;
                    }
                    shared.finish::<msm::G1>(gpu, profile)?
                } else {
                    let mut sum = blstrs::G1Projective::identity();
                    for (first, len) in parts {
                        let b = d_bases.slice(words * first..words * (first + len));
                        sum += msm::msm_resident::<msm::G1>(gpu, &b, len, &mut d_scalars.slice_mut(4 * first..4 * (first + len)), tuning, profile.as_deref_mut())?;
                    }
                    sum
                };
                Ok((t.elapsed().as_secs_f64() * 1e3, sum))
            };
            let mut last = run(None)?; // warm-up
            let mut times = Vec::with_capacity(reps);
            for _ in 0..reps.max(1) {
                last = run(None)?;
                times.push(last.0);
            }
            times.sort_by(f64::total_cmp);
            let mut profile = MsmProfile::default();
            run(Some(&mut profile))?;
            Ok((times[times.len() / 2], last.1, profile))
        }
        #[cfg(not(supraseal_gpu))]
        {
            let _ = (tuning, table, reps);
            match self.never {}
        }
    }

    /// G1 batch additions of `bitmaps` (one per circuit, at most 16, each
    /// at least `bases.len()` bits) over `bases` uploaded once, in one pass
    /// over the device's copy: the median of `reps` timed runs in ms (the
    /// bitmaps' upload included, the bases' not) and each circuit's sum.
    pub fn batch_add_g1_on_device_ms(&self, bases: &[G1Affine], bitmaps: &[&[u64]], reps: usize) -> Result<(f64, Vec<blstrs::G1Projective>)> {
        #[cfg(supraseal_gpu)]
        {
            let gpu = self.inner.exec();
            let d_bases = gpu.upload(limbs(bases), "upload batch-add bases")?;
            gpu.stream.synchronize().map_err(device::cuda_err("synchronize"))?;
            let run = || super::batch_add::batch_add_on_device::<msm::G1>(gpu, &d_bases.slice(..), bases.len(), bitmaps);
            let mut last = run()?; // warm-up
            let mut times = Vec::with_capacity(reps);
            for _ in 0..reps.max(1) {
                let t = std::time::Instant::now();
                last = run()?;
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
            times.sort_by(f64::total_cmp);
            Ok((times[times.len() / 2], last))
        }
        #[cfg(not(supraseal_gpu))]
        {
            let _ = (bases, bitmaps, reps);
            match self.never {}
        }
    }

    /// Runs `f` with `v` page-locked (`cuMemHostRegister`), as the pipeline
    /// page-locks the key and a/b/c; a failed registration runs `f` anyway
    /// (pageable copies) and says so on stderr.
    pub fn with_pinned<T, R>(&self, v: &[T], f: impl FnOnce() -> R) -> R {
        #[cfg(supraseal_gpu)]
        {
            let ptr = v.as_ptr() as *const std::ffi::c_void;
            // SAFETY: `v` outlives the registration, which ends before this returns.
            let pinned = unsafe { self.inner.exec().gpu.register_host(ptr, std::mem::size_of_val(v), device::Registration::Input) };
            if let Err(r) = &pinned {
                eprintln!("with_pinned: cuMemHostRegister failed ({r:?}); running with pageable memory");
            }
            let out = f();
            drop(pinned);
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

    /// The launch choice the pipeline's MSM launches outside a shared
    /// bucket table take for `n` G1 points on this device
    /// ([`MsmTuning::fitted_to_waves`] of the defaults: fitted where the
    /// windows sort in turn, below 2^24 points under `auto`).
    pub fn msm_g1_tuning(&self, n: usize) -> MsmTuning {
        #[cfg(supraseal_gpu)]
        {
            self.inner.exec().msm_tuning::<msm::G1>(n)
        }
        #[cfg(not(supraseal_gpu))]
        {
            let _ = n;
            match self.never {}
        }
    }

    /// Accumulation threads the device keeps resident at once in blocks of
    /// 128, for G1 and for G2 (`Gpu::resident_threads`: a wave).
    pub fn accumulation_waves(&self) -> [usize; 2] {
        #[cfg(supraseal_gpu)]
        {
            let exec = self.inner.exec();
            [exec.accumulation_wave::<msm::G1>(128), exec.accumulation_wave::<msm::G2>(128)]
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
