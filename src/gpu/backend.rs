//! The GPU backend of one proving call ([`GpuBackend`]): the call's compute
//! stream ([`Exec`]) and its phase 0/1/3 state ([`Stager`]), behind the
//! pipeline's [`Backend`] operations.

use std::sync::atomic::Ordering;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};

use super::device::{self, cuda_err};
use super::exec::Exec;
use super::scalar_buf::ScalarBuf;
use super::stage::{StagedAbc, Stager};
use super::words::from_limbs;
use super::{batch_add, msm, ntt};
use crate::backend::{Abc, Admission, Backend};
use crate::config::Settings;
use crate::error::Result;
use crate::locks::RegistrationGate;

/// The GPU backend for one proving call on one device.
pub struct GpuBackend {
    exec: Exec,
    stager: Stager,
}

impl GpuBackend {
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
        // Counted as a call in flight (and awaiting phase 1) only once both
        // streams exist: from here on, `Drop` undoes the counts.
        let exec = Exec::new(gpu.clone(), settings)?;
        let stager = Stager::new(&gpu)?;
        gpu.active.fetch_add(1, Ordering::SeqCst);
        Ok(GpuBackend { exec, stager })
    }

    /// This call's compute stream on the device.
    #[cfg(any(test, feature = "tools"))]
    pub fn exec(&self) -> &Exec {
        &self.exec
    }

    /// Marks this backend as one that never reaches phase 1 (direct use by
    /// tests and benchmarks): not a call for the pre-stage pool to grow for.
    #[cfg(any(test, feature = "tools"))]
    pub(crate) fn skip_phase1(&self) {
        self.stager.done(&self.exec.gpu);
    }

    /// The quotient's n coefficients left on the device (4·n u64 words,
    /// Montgomery form): from `staged` when phase 1 uploaded a/b/c, else
    /// uploaded here, under the compute lock (the fallback path).
    fn quotient_on_device(&self, [a, b, c]: Abc<'_>, n: usize, staged: Option<StagedAbc>) -> Result<ScalarBuf> {
        let (da, db, dc) = match staged {
            Some(mut s) => {
                // Left unfilled only when no filler ran ahead of this turn.
                self.stager.fill(&self.exec, &[a, b, c], &mut s)?;
                // Diagnostics only (a host wait the kernels would make on the
                // device anyway): how much of the staged upload is still
                // running when the quotient starts.
                if tracing::enabled!(target: "supraseal_c2::gpu::stage", tracing::Level::DEBUG) {
                    let t = std::time::Instant::now();
                    let _ = self.stager.upload().synchronize();
                    tracing::debug!(target: "supraseal_c2::gpu::stage", wait_ms = crate::log::round1(t.elapsed().as_secs_f64() * 1e3), "staged a, b, c: upload still running at the quotient");
                }
                (s.a, s.b, s.c)
            }
            None => {
                let t = std::time::Instant::now();
                let up = |v, what| self.stager.upload_padded(&self.exec, v, n, what);
                let abc = (up(a, "upload a")?, up(b, "upload b")?, up(c, "upload c")?);
                tracing::debug!(enqueue_ms = crate::log::round1(t.elapsed().as_secs_f64() * 1e3), "a, b, c upload inside the compute lock");
                abc
            }
        };
        ntt::quotient(&self.exec, da, db, dc, n)
    }
}

impl Drop for GpuBackend {
    fn drop(&mut self) {
        let gpu = &self.exec.gpu;
        self.stager.done(gpu);
        self.stager.unpin(&self.exec);
        // The last call in flight returns the idle pre-stage vectors and the
        // pools' caches to the device.
        if gpu.active.fetch_sub(1, Ordering::SeqCst) == 1 {
            gpu.release_idle_stages();
            let _ = self.stager.upload().synchronize();
            let _ = self.exec.stream.synchronize();
            let _ = gpu.trim_pool();
            let _ = gpu.trim_stage_pool();
        }
    }
}

impl Backend for GpuBackend {
    type Staged = StagedAbc;

    fn kind(&self) -> crate::backend::BackendKind {
        crate::backend::BackendKind::Gpu
    }
    fn stage_detail(&self) -> Option<String> {
        self.stager.detail()
    }
    fn pin_key(&self, srs: &crate::srs::Srs) {
        self.stager.set_key(&self.exec.gpu, srs);
    }
    fn g2_batch_on_device(&self) -> bool {
        true
    }
    fn pin(&self, ci: usize, abc: Abc<'_>) -> Option<String> {
        self.stager.pin(&self.exec, ci, &abc)
    }
    fn unpin_circuit(&self, ci: usize) {
        self.stager.unpin_circuit(ci);
    }
    fn prefetch(&self, ci: usize, abc: Abc<'_>, n: usize) -> Option<StagedAbc> {
        self.stager.prefetch(&self.exec, ci, &abc, n)
    }
    fn fill(&self, ci: usize, abc: Abc<'_>, staged: &mut StagedAbc) -> Result<()> {
        let t = std::time::Instant::now();
        let bytes = self.stager.fill(&self.exec, &abc, staged)?;
        // Circuit 0's copy belongs to the call's staging (it runs between
        // the memory lock and the compute lock): it goes into the phase-1 detail.
        if ci == 0 && bytes > 0 {
            self.stager.step("then circuit 0's ring copy outside the lock", t);
        }
        Ok(())
    }
    fn registration_gate(&self) -> Option<&RegistrationGate> {
        Some(&self.exec.gpu.host_registration)
    }
    fn prestage(&self, inputs: &[Abc<'_>], n: usize) -> Admission<StagedAbc> {
        self.stager.prestage(&self.exec, inputs, n)
    }
    fn end_compute(&self) -> Result<()> {
        let gpu = &self.exec.gpu;
        self.exec.stream.synchronize().map_err(cuda_err("cuStreamSynchronize (compute)"))?;
        self.stager.upload().synchronize().map_err(cuda_err("cuStreamSynchronize (upload)"))?;
        // cudarc records errors of destructors (frees) context-wide; they may
        // belong to another call, so they are logged, not returned here.
        if let Err(e) = gpu.ctx.check_err() {
            tracing::warn!(error = ?e, "a deferred CUDA error was recorded on this device");
        }
        gpu.trim_pool()
    }
    fn unpin(&self) {
        self.stager.unpin(&self.exec);
    }
    fn free_memory(&self) -> Option<usize> {
        self.exec.mem_info().ok().map(|(free, _)| free)
    }
    fn quotient(&self, abc: Abc<'_>, n: usize, staged: Option<StagedAbc>) -> Result<Vec<Scalar>> {
        let t = self.quotient_on_device(abc, n, staged)?;
        Ok(from_limbs(&self.exec.download(&t, "download H coefficients")?))
    }
    fn quotient_msm(
        &self,
        abc: Abc<'_>,
        n: usize,
        staged: Option<StagedAbc>,
        bases: &[G1Affine],
        between: &mut dyn FnMut(),
    ) -> Result<(G1Projective, std::time::Duration, std::time::Duration)> {
        let t = std::time::Instant::now();
        let mut coeffs = self.quotient_on_device(abc, n, staged)?;
        // Only this call's stream: the phase times stay per step, and every
        // copy from the circuit's host buffers is complete after it.
        self.exec.stream.synchronize().map_err(cuda_err("synchronize after the quotient"))?;
        let ntt_time = t.elapsed();
        between();
        let t = std::time::Instant::now();
        let h = msm::msm_device_scalars::<msm::G1>(&self.exec, bases, &mut coeffs)?;
        drop(coeffs);
        Ok((h, ntt_time, t.elapsed()))
    }
    fn msm_g1(&self, bases: &[G1Affine], scalars: &[Scalar]) -> Result<G1Projective> {
        msm::msm::<msm::G1>(&self.exec, bases, scalars)
    }
    fn g2_msm_on_device(&self) -> bool {
        self.exec.settings.g2_msm_on_device
    }
    fn g2_msm_placement(&self) -> &'static str {
        match (self.exec.settings.g2_msm_on_device, self.exec.settings.g2_msm_auto) {
            (true, true) => "gpu (auto)",
            (false, true) => "cpu (auto)",
            (true, false) => "gpu",
            (false, false) => "cpu",
        }
    }
    /// On the CPU (rayon, blst) unless `SUPRASEAL_C2_G2_MSM=gpu`.
    fn msm_g2(&self, bases: &[G2Affine], scalars: &[Scalar]) -> Result<G2Projective> {
        if self.g2_msm_on_device() {
            msm::msm::<msm::G2>(&self.exec, bases, scalars)
        } else {
            Ok(crate::cpu::msm::msm::<crate::curve::G2>(bases, scalars))
        }
    }
    fn msm_g1_many(&self, bases: &[G1Affine], scalars: &[&[Scalar]]) -> Result<Vec<G1Projective>> {
        msm::msm_many::<msm::G1>(&self.exec, bases, scalars)
    }
    fn msm_g2_many(&self, bases: &[G2Affine], scalars: &[&[Scalar]]) -> Result<Vec<G2Projective>> {
        if self.g2_msm_on_device() {
            msm::msm_many::<msm::G2>(&self.exec, bases, scalars)
        } else {
            scalars.iter().map(|s| self.msm_g2(bases, s)).collect()
        }
    }
    fn batch_add_g1(&self, bases: &[G1Affine], bitmap: &[u64]) -> Result<G1Projective> {
        batch_add::batch_add::<msm::G1>(&self.exec, bases, bitmap)
    }
    fn batch_add_g2(&self, bases: &[G2Affine], bitmap: &[u64]) -> Result<G2Projective> {
        batch_add::batch_add::<msm::G2>(&self.exec, bases, bitmap)
    }
    fn batch_add_g1_many(&self, bases: &[G1Affine], bitmaps: &[&[u64]]) -> Result<Vec<G1Projective>> {
        batch_add::batch_add_many::<msm::G1>(&self.exec, bases, bitmaps)
    }
    fn batch_add_g2_many(&self, bases: &[G2Affine], bitmaps: &[&[u64]]) -> Result<Vec<G2Projective>> {
        batch_add::batch_add_many::<msm::G2>(&self.exec, bases, bitmaps)
    }
}
