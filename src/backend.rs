//! The operations a proving backend provides; the pipeline
//! ([`crate::groth16`]) is written once on top of them.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};

use crate::error::Result;

/// One circuit's `[a, b, c]` evaluations as the caller passed them
/// (`abc_size` scalars each, Montgomery form).
pub type Abc<'a> = [&'a [Scalar]; 3];

/// What phase 1 (under the memory lock) decided for a call; `S` is the
/// backend's [`Backend::Staged`].
pub enum Admission<S> {
    /// The backend has nothing to stage (the CPU backend).
    NotNeeded,
    /// The first circuits' inputs (at least one, in order) are allocated on
    /// the device and their uploads are issued (maybe still in flight; phase
    /// 2 waits on their events).
    Staged(Vec<S>),
    /// Nothing was allocated; phase 2 allocates and uploads. Says why.
    Fallback(String),
}

/// Which backend computed a call (its reports, logs and the CLI).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    Cpu,
    Gpu,
}

impl BackendKind {
    /// "cpu" or "gpu", as logs and the CLI print it.
    pub fn as_str(self) -> &'static str {
        match self {
            BackendKind::Cpu => "cpu",
            BackendKind::Gpu => "gpu",
        }
    }
}

impl std::fmt::Display for BackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// NTT-based quotient, MSM and batch addition, on one device or the CPU.
///
/// The pipeline calls, per proving call: [`Backend::pin`] (phase 0, no
/// lock, then beside phase 2 for later circuits), [`Backend::prestage`]
/// (phase 1, memory lock), [`Backend::quotient`], [`Backend::prefetch`]
/// and the MSMs, then [`Backend::end_compute`] (phase 2, compute lock), and
/// [`Backend::unpin`] (phase 3, no lock).
pub trait Backend: Sync {
    /// One circuit's a, b, c already on the device, zero-padded to the
    /// domain (made in phase 1, consumed by [`Backend::quotient`]). A backend
    /// that stages nothing uses an uninhabited type.
    type Staged: Send;

    /// Which backend this is (logs, reports, the CLI).
    fn kind(&self) -> BackendKind;

    /// Readies circuit `ci`'s host a/b/c buffers for asynchronous uploads
    /// (the GPU backend: sorts them into page-locked and pageable, the
    /// latter copied through its staging ring, or page-locks them with
    /// `SUPRASEAL_C2_HOST_STAGING=register`): in phase 0 for the first
    /// circuit, then, in a call of several circuits, each circuit while the
    /// one before it computes. May run on any thread. Returns `Some(reason)`
    /// when the circuit can be neither copied through a staging ring nor
    /// wholly page-locked (its uploads then run in phase 2, from pageable
    /// memory; with the GPU backend's ring, never). Default: nothing to do.
    fn pin(&self, _ci: usize, _abc: Abc<'_>) -> Option<String> {
        None
    }

    /// Lets go of circuit `ci`'s page-locked buffers once its quotient is
    /// done (every copy from them complete). May run on any thread.
    /// Default: nothing to do.
    fn unpin_circuit(&self, _ci: usize) {}

    /// Phase 2: stages circuit `ci`'s a, b, c on the device ahead of its
    /// turn, so that the uploads overlap the circuit computing now; `None`
    /// when the backend stages nothing or there is no room (the circuit's
    /// phase 2 then uploads it). Default: `None`.
    fn prefetch(&self, _ci: usize, _abc: Abc<'_>, _n: usize) -> Option<Self::Staged> {
        None
    }

    /// On a thread of its own, for circuit `ci` (`abc`): the part of
    /// staging that runs on CPU threads (the GPU backend's copies through its
    /// page-locked staging ring), which [`Backend::prefetch`] and
    /// [`Backend::prestage`] leave undone so as not to hold up the computing
    /// thread or the memory lock. Circuit 0's runs between the memory lock
    /// and the compute lock, the others' beside the H-MSM of the circuit
    /// before. Returns once the copies are enqueued. Default: nothing to do.
    fn fill(&self, _ci: usize, _abc: Abc<'_>, _staged: &mut Self::Staged) -> Result<()> {
        Ok(())
    }

    /// Phase 0, once per key: page-locks the key's query vectors (h, l, a, b_g1, b_g2) so that
    /// their uploads in phase 2 run at DMA speed. A failure is logged and the
    /// uploads stay pageable. Default: nothing to do.
    fn pin_key(&self, _srs: &crate::srs::Srs) {}

    /// The gate that keeps this device's host-memory registrations out of
    /// phase 1 ([`crate::locks::RegistrationGate`]); the memory lock holds it
    /// for phase 1. Default: none.
    fn registration_gate(&self) -> Option<&crate::locks::RegistrationGate> {
        None
    }

    /// Phase 1: decides from measured free memory how many of the first
    /// circuits' a, b, c (those page-locked so far) fit on the device, and
    /// allocates them and issues their uploads (`Staged` holds them in
    /// circuit order, at least one). Never waits for other streams; any
    /// failure is a fallback.
    fn prestage(&self, _inputs: &[Abc<'_>], _n: usize) -> Admission<Self::Staged> {
        Admission::NotNeeded
    }

    /// Where phase 1's time went, step by step (e.g. "info 0.1 alloc a
    /// 0.0 copy a 0.2 … ms"), for the per-call report. Default: nothing.
    fn stage_detail(&self) -> Option<String> {
        None
    }

    /// End of phase 2: waits for this call's own streams, then returns cached
    /// pool memory to the device (still under the compute lock). Runs on
    /// error paths too.
    fn end_compute(&self) -> Result<()> {
        Ok(())
    }

    /// Phase 3: waits for this call's streams and unpins what [`Backend::pin`] pinned and is still held.
    fn unpin(&self) {}

    /// Free device memory in bytes, where there is a device.
    fn free_memory(&self) -> Option<usize> {
        None
    }

    /// The coefficients of `t = (a·b − c) / z` over a domain of `n` elements
    /// (`n` a power of two ≥ `a.len()`; `a`, `b`, `c` are evaluations on the
    /// n-th roots of unity, zero-padded to `n`): inverse NTT, forward NTT on
    /// the coset g·⟨ω⟩ (g = 7), pointwise `(a·b − c)·(gⁿ − 1)⁻¹`, inverse
    /// coset NTT. Returns `n` coefficients (the last one is zero).
    /// `staged` is this circuit's phase-1 upload of the same `abc`, if any.
    fn quotient(&self, abc: Abc<'_>, n: usize, staged: Option<Self::Staged>) -> Result<Vec<Scalar>>;

    /// H = Σ t_i·bases[i] for the quotient t of [`Backend::quotient`]
    /// (`bases.len() ≤ n` points, the H query), with the time spent in the
    /// quotient and in the MSM. `between` runs once the quotient is done and
    /// before the MSM starts (the pipeline stages the next circuit there, so
    /// that its uploads overlap the MSM, and the inputs' buffers are free).
    /// The default runs the two steps; a device backend overrides it to keep
    /// t on the device between them.
    fn quotient_msm(
        &self,
        abc: Abc<'_>,
        n: usize,
        staged: Option<Self::Staged>,
        bases: &[G1Affine],
        between: &mut dyn FnMut(),
    ) -> Result<(G1Projective, std::time::Duration, std::time::Duration)> {
        let t = std::time::Instant::now();
        let coeffs = self.quotient(abc, n, staged)?;
        let ntt = t.elapsed();
        between();
        let t = std::time::Instant::now();
        let h = self.msm_g1(bases, &coeffs[..bases.len()])?;
        Ok((h, ntt, t.elapsed()))
    }

    /// Σ scalars[i]·bases[i] in G1 (equal lengths; scalars in Montgomery form).
    fn msm_g1(&self, bases: &[G1Affine], scalars: &[Scalar]) -> Result<G1Projective>;

    /// Whether [`Backend::batch_add_g2`] runs on the device, so that the
    /// pipeline calls it in phase 2 (compute lock) instead of on the CPU
    /// thread. Default: no.
    fn g2_batch_on_device(&self) -> bool {
        false
    }

    /// Whether [`Backend::msm_g2`] runs on the device, so that the pipeline
    /// must call it under the compute lock (phase 2) instead of on the CPU
    /// thread. Default: no.
    fn g2_msm_on_device(&self) -> bool {
        false
    }

    /// Where the G2 MSMs of B′ run, for the per-call report: "cpu", "gpu",
    /// or either with " (auto)" when `SUPRASEAL_C2_G2_MSM=auto` chose it.
    fn g2_msm_placement(&self) -> &'static str {
        "cpu"
    }

    /// Σ scalars[i]·bases[i] in G2.
    fn msm_g2(&self, bases: &[G2Affine], scalars: &[Scalar]) -> Result<G2Projective>;

    /// [`Backend::msm_g1`] for each of `scalars` (one vector per circuit of a
    /// call, each `bases.len()` long) over the same bases. A device backend
    /// overrides it to upload the bases once for all circuits. Default: one
    /// MSM per vector.
    fn msm_g1_many(&self, bases: &[G1Affine], scalars: &[&[Scalar]]) -> Result<Vec<G1Projective>> {
        scalars.iter().map(|s| self.msm_g1(bases, s)).collect()
    }

    /// [`Backend::msm_g2`] for each of `scalars`, as [`Backend::msm_g1_many`].
    fn msm_g2_many(&self, bases: &[G2Affine], scalars: &[&[Scalar]]) -> Result<Vec<G2Projective>> {
        scalars.iter().map(|s| self.msm_g2(bases, s)).collect()
    }

    /// Σ of the G1 bases whose bit is set (u64-word bitmap, ≥ bases.len() bits).
    fn batch_add_g1(&self, bases: &[G1Affine], bitmap: &[u64]) -> Result<G1Projective>;

    /// Σ of the G2 bases whose bit is set.
    fn batch_add_g2(&self, bases: &[G2Affine], bitmap: &[u64]) -> Result<G2Projective>;

    /// [`Backend::batch_add_g1`] for each of `bitmaps` (one per circuit of a
    /// call) over the same bases. A device backend overrides it to read each
    /// base once for all circuits. Default: one batch addition per bitmap.
    fn batch_add_g1_many(&self, bases: &[G1Affine], bitmaps: &[&[u64]]) -> Result<Vec<G1Projective>> {
        bitmaps.iter().map(|b| self.batch_add_g1(bases, b)).collect()
    }

    /// [`Backend::batch_add_g2`] for each of `bitmaps`, as [`Backend::batch_add_g1_many`].
    fn batch_add_g2_many(&self, bases: &[G2Affine], bitmaps: &[&[u64]]) -> Result<Vec<G2Projective>> {
        bitmaps.iter().map(|b| self.batch_add_g2(bases, b)).collect()
    }
}
