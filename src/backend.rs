//! What a proving backend provides, in two parts: [`Compute`], the
//! arithmetic (the quotient's NTTs, MSM and batch addition, generic over the
//! group), and [`Backend`], one proving call on it: the steps of
//! docs/ARCHITECTURE.md §5 from pin to unpin, each taking the lock guard it
//! runs under ([`crate::locks`]), the call's [`Placement`] and its [`Clock`].
//! The pipeline ([`crate::groth16`], [`crate::pipeline`]) is written once on
//! top of them.

use std::time::Instant;

use blstrs::{G1Affine, G1Projective, Scalar};

use crate::error::Result;
pub use crate::groth16::clock::{Clock, Step};
use crate::locks::{ComputeGuard, StageLock};

/// One circuit's `[a, b, c]` evaluations as the caller passed them
/// (`abc_size` scalars each, Montgomery form).
pub type Abc<'a> = [&'a [Scalar]; 3];

/// What [`Backend::restage`] did to circuit 0's a, b, c.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Restaged {
    /// Vectors staged now.
    pub added: usize,
    /// Vectors staged after it (3: the circuit is whole).
    pub staged: usize,
}

/// [`Backend::memory_events`]: every event that gives device memory back
/// (a call's quotient consumed its inputs, or its phase 2 ended), and the
/// phase-2 ends alone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryEvents {
    /// Every event on the device, phase-2 ends included.
    pub any: u64,
    /// The ends of phase 2s on the device, under any lock handle.
    pub phase2_ends: u64,
}

/// What phase 1 (under the memory lock) decided for a call; `S` is the
/// backend's [`Backend::Staged`].
pub enum Admission<S> {
    /// The backend has nothing to stage (the CPU backend).
    NotNeeded,
    /// The first circuits' inputs (at least one, in order) are allocated on
    /// the device and their uploads are issued (maybe still in flight; phase
    /// 2 waits on their events).
    Staged(Vec<S>),
    /// No whole circuit fits: circuit 0's first `vectors` (1 or 2) of a, b,
    /// c are allocated and their uploads issued, as `Staged`; phase 2
    /// uploads the rest of it and every later circuit. Says why the whole
    /// circuit did not fit.
    Part { staged: S, vectors: usize, why: String },
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

/// A group both backends compute in: G1 or G2 ([`crate::curve`]'s markers),
/// with the CPU's blst routines ([`crate::cpu::msm::Curve`]) and, in a build
/// with kernels, the GPU's (`gpu::group::DeviceGroup`).
#[cfg(supraseal_gpu)]
pub trait Group: crate::cpu::msm::Curve + crate::gpu::group::DeviceGroup {}
#[cfg(supraseal_gpu)]
impl<G: crate::cpu::msm::Curve + crate::gpu::group::DeviceGroup> Group for G {}
/// A group both backends compute in: G1 or G2 ([`crate::curve`]'s markers),
/// with the CPU's blst routines ([`crate::cpu::msm::Curve`]).
#[cfg(not(supraseal_gpu))]
pub trait Group: crate::cpu::msm::Curve {}
#[cfg(not(supraseal_gpu))]
impl<G: crate::cpu::msm::Curve> Group for G {}

/// The arithmetic of a backend, on one device or the CPU's cores. Vectors
/// are in Montgomery form; bases are affine points as the SRS stores them.
pub trait Compute: Sync {
    /// A tail's scalars put where its MSM reads them, ahead of it
    /// ([`Compute::put_ahead`]).
    type Ahead: Send;

    /// The coefficients of `t = (a·b − c) / z` over a domain of `n` elements
    /// (`n` a power of two ≥ `a.len()`; `a`, `b`, `c` are evaluations on the
    /// n-th roots of unity, zero-padded to `n`): inverse NTT, forward NTT on
    /// the coset g·⟨ω⟩ (g = 7), pointwise `(a·b − c)·(gⁿ − 1)⁻¹`, inverse
    /// coset NTT. Returns `n` coefficients (the last one is zero).
    fn quotient(&self, abc: Abc<'_>, n: usize) -> Result<Vec<Scalar>>;

    /// Σ scalars[i]·bases[i] in `G` (equal lengths).
    fn msm<G: Group>(&self, bases: &[G::Affine], scalars: &[Scalar]) -> Result<G::Projective>;

    /// [`Compute::msm`] for each of `scalars` (one vector per circuit of a
    /// call, each `bases.len()` long) over the same bases. A device backend
    /// overrides it to upload the bases once for all circuits. Default: one
    /// MSM per vector.
    fn msm_many<G: Group>(&self, bases: &[G::Affine], scalars: &[&[Scalar]]) -> Result<Vec<G::Projective>> {
        scalars.iter().map(|s| self.msm::<G>(bases, s)).collect()
    }

    /// [`Compute::msm_many`] over the bases at `positions` of `bases` (a
    /// split plan's tail), each of `scalars` `positions.len()` long.
    /// `gathered` is `bases[positions[t]]` for every t, gathered on the host
    /// beforehand, or empty ([`Backend::tail_bases_on_host`]: not needed),
    /// in which case they are gathered here if they are needed after all. A
    /// device backend holding `bases` gathers the tail's bases there.
    /// Default: [`Compute::msm_many`] over the gathered bases.
    fn msm_many_at<G: Group>(&self, bases: &[G::Affine], positions: &[u32], gathered: &[G::Affine], scalars: &[&[Scalar]]) -> Result<Vec<G::Projective>> {
        self.msm_many::<G>(&gathered_or_now(bases, positions, gathered), scalars)
    }

    /// Starts putting a tail (its `positions` in `bases`, or its `gathered`
    /// bases as [`Compute::msm_many_at`] takes them) and each circuit's
    /// `scalars` where a later [`Compute::msm_many_at_ahead`] over `bases`
    /// reads them, beside the work the backend runs now (called from a
    /// thread other than the one computing). `None` where that MSM reads
    /// them from the host: the default, and a device without room for them.
    fn put_ahead<G: Group>(&self, bases: &[G::Affine], positions: &[u32], gathered: &[G::Affine], scalars: &[Vec<Scalar>]) -> Result<Option<Self::Ahead>> {
        let _ = (bases, positions, gathered, scalars);
        Ok(None)
    }

    /// [`Compute::msm_many_at`], reading the tail and the scalars from
    /// `ahead` where [`Compute::put_ahead`] put them (the same positions,
    /// gathered bases and scalars). Default: from the host.
    fn msm_many_at_ahead<G: Group>(
        &self,
        bases: &[G::Affine],
        positions: &[u32],
        gathered: &[G::Affine],
        scalars: &[&[Scalar]],
        ahead: Option<Self::Ahead>,
    ) -> Result<Vec<G::Projective>> {
        drop(ahead);
        self.msm_many_at::<G>(bases, positions, gathered, scalars)
    }

    /// Σ of the bases whose bit is set (u64-word bitmap, ≥ bases.len() bits).
    fn batch_add<G: Group>(&self, bases: &[G::Affine], bitmap: &[u64]) -> Result<G::Projective>;

    /// [`Compute::batch_add`] for each of `bitmaps` (one per circuit of a
    /// call) over the same bases. A device backend overrides it to read each
    /// base once for all circuits. Default: one batch addition per bitmap.
    fn batch_add_many<G: Group>(&self, bases: &[G::Affine], bitmaps: &[&[u64]]) -> Result<Vec<G::Projective>> {
        bitmaps.iter().map(|b| self.batch_add::<G>(bases, b)).collect()
    }
}

/// `gathered` where it holds the bases at `positions` (it was gathered
/// beforehand), else `bases[positions[t]]` for every t, gathered now.
pub fn gathered_or_now<'a, A: Copy + Send + Sync>(bases: &[A], positions: &[u32], gathered: &'a [A]) -> std::borrow::Cow<'a, [A]> {
    use rayon::prelude::*;
    if gathered.len() == positions.len() {
        std::borrow::Cow::Borrowed(gathered)
    } else {
        assert!(gathered.is_empty(), "msm_many_at: {} gathered bases for {} positions", gathered.len(), positions.len());
        std::borrow::Cow::Owned(positions.par_iter().map(|&q| bases[q as usize]).collect())
    }
}

/// Where a step runs: on the host's cores or on the call's device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Host,
    Device,
}

/// Where a call places the parts of B′ in G2 (docs/ARCHITECTURE.md §4): on
/// the device in phase 2, under the compute lock, or on the CPU thread
/// beside it. Resolved once, when the call's backend is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The batch addition over the B-aux bases of 1 scalars.
    pub g2_batch_add: Place,
    /// The B-input MSM and the aux tail MSM (`SUPRASEAL_C2_G2_MSM`).
    pub g2_msm: Place,
    /// `SUPRASEAL_C2_G2_MSM=auto` chose `g2_msm` from this host and device.
    pub g2_msm_auto: bool,
}

impl Placement {
    /// Everything on the host (the CPU backend).
    pub const HOST: Placement = Placement { g2_batch_add: Place::Host, g2_msm: Place::Host, g2_msm_auto: false };

    /// Where the G2 MSMs run, for the per-call report: "cpu" or "gpu", with
    /// " (auto)" when `SUPRASEAL_C2_G2_MSM=auto` chose it.
    pub fn g2_msm_label(self) -> &'static str {
        match (self.g2_msm, self.g2_msm_auto) {
            (Place::Device, true) => "gpu (auto)",
            (Place::Host, true) => "cpu (auto)",
            (Place::Device, false) => "gpu",
            (Place::Host, false) => "cpu",
        }
    }
}

/// One proving call on a backend, from pin to unpin: the steps of
/// docs/ARCHITECTURE.md §5 that the pipeline runs in order, each under the
/// lock whose guard it takes, with the arithmetic in [`Backend::compute`]
/// and the step times in [`Backend::clock`].
///
/// Per call: [`Backend::pin`] (phase 0, no lock, then beside phase 2 for
/// later circuits), [`Backend::prestage`] (phase 1, memory lock), then under
/// the compute lock [`Backend::quotient_msm`] per circuit (with
/// [`Backend::prefetch`] of the next one), the MSMs and batch additions, and
/// [`Backend::end_compute`]; [`Backend::unpin`] (phase 3, no lock).
pub trait Backend: Sync {
    /// One circuit's a, b, c already on the device, zero-padded to the
    /// domain (made in phase 1, consumed by [`Backend::quotient_msm`]). A backend
    /// that stages nothing uses an uninhabited type.
    type Staged: Send;

    /// The call's arithmetic.
    type Compute: Compute;

    /// The arithmetic this call runs its steps with.
    fn compute(&self) -> &Self::Compute;

    /// The call's step times, added to by whichever thread runs a step.
    fn clock(&self) -> &Clock;

    /// Which backend this is (logs, reports, the CLI).
    fn kind(&self) -> BackendKind;

    /// Where this call runs the parts of B′ in G2. Default: on the host.
    fn placement(&self) -> Placement {
        Placement::HOST
    }

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

    /// Before phase 0: the locks this call runs under (a device backend
    /// tells from them whether another call's phase 2 may overlap its own).
    /// Default: nothing to do.
    fn under_locks(&self, _locks: &crate::locks::GpuLocks) {}

    /// Phase 0, once per key: page-locks the key's query vectors (h, l, a, b_g1, b_g2) so that
    /// their uploads in phase 2 run at DMA speed. A failure is logged and the
    /// uploads stay pageable. Default: nothing to do.
    fn pin_key(&self, _srs: &crate::srs::Srs) {}

    /// Whether the split plans' tail MSMs in G1 read bases gathered on the
    /// host (in phase 0, beside the device's work; about 0.55 GB at
    /// porep-32g). A device backend that holds the call's key gathers them
    /// there instead; should its copy go before phase 2, the tail MSMs
    /// gather on the host then ([`Compute::msm_many_at`]). The G2 tails
    /// are gathered on the host where the G2 MSMs run there
    /// ([`Backend::placement`]) or this says so. Called after
    /// [`Backend::pin_key`]. Default: true.
    fn tail_bases_on_host(&self) -> bool {
        true
    }

    /// The gate that keeps this device's host-memory registrations out of
    /// phase 1 ([`crate::locks::RegistrationGate`]); the memory lock holds it
    /// for phase 1. Default: none.
    fn registration_gate(&self) -> Option<&crate::locks::RegistrationGate> {
        None
    }

    /// Phase 1 (`lock`: the memory lock, or the compute lock in single-lock
    /// mode): decides from measured free memory how many of the first
    /// circuits' a, b, c (those sorted or page-locked so far) fit on the
    /// device, and allocates them and issues their uploads (`Staged` holds
    /// them in circuit order, at least one; `Part` one or two vectors of
    /// circuit 0 where no whole circuit fits). Never waits for other
    /// streams; any failure is a fallback.
    fn prestage(&self, _lock: StageLock<'_>, _inputs: &[Abc<'_>], _n: usize) -> Admission<Self::Staged> {
        Admission::NotNeeded
    }

    /// While a busy compute lock is waited for (`lock`: the memory lock,
    /// taken again), after phase 1 staged less than circuit 0's a, b, c
    /// (`staged`: what it staged, `None` after a fallback): stages more of
    /// them where the room allows now, allocating them and issuing any
    /// direct upload (copies through a staging ring are left to
    /// [`Backend::fill`], which the caller runs once the memory lock is
    /// released). Returns what it added now (none where nothing fits now)
    /// and how many of a, b, c are staged after it, or `None` where trying
    /// again cannot add any (circuit 0 is whole, the switches say no, fault
    /// injection is on, its host buffers are not stageable, an allocation
    /// failed). Default: `None`.
    fn restage(&self, _lock: StageLock<'_>, _abc: Abc<'_>, _n: usize, _staged: &mut Option<Self::Staged>) -> Option<Restaged> {
        None
    }

    /// Counts that move whenever this backend's device gives memory back
    /// that an admission could use: a call waiting for a busy compute lock
    /// admits again only after they moved ([`Backend::restage`]). Default:
    /// zeros (nothing moves).
    fn memory_events(&self) -> MemoryEvents {
        MemoryEvents::default()
    }

    /// Where phase 1's time went, step by step (e.g. "info 0.1 alloc a
    /// 0.0 copy a 0.2 … ms"), for the per-call report. Default: nothing.
    fn stage_detail(&self) -> Option<String> {
        None
    }

    /// On a thread of its own, no lock held, for circuit `ci` (`abc`): the
    /// part of staging that runs on CPU threads (the GPU backend's copies
    /// through its page-locked staging ring), which [`Backend::prefetch`]
    /// and [`Backend::prestage`] leave undone so as not to hold up the
    /// computing thread or the memory lock. Circuit 0's runs once the memory
    /// lock is released (beside the wait for a busy compute lock, or before a
    /// free one is taken), the others' beside the H-MSM of the circuit before. Returns once the copies are enqueued. Default:
    /// nothing to do.
    fn fill(&self, _ci: usize, _abc: Abc<'_>, _staged: &mut Self::Staged) -> Result<()> {
        Ok(())
    }

    /// Phase 2: stages circuit `ci`'s a, b, c on the device ahead of its
    /// turn, so that the uploads overlap the circuit computing now; `None`
    /// when the backend stages nothing or there is no room (the circuit's
    /// phase 2 then uploads it). Default: `None`.
    fn prefetch(&self, _lock: &ComputeGuard<'_>, _ci: usize, _abc: Abc<'_>, _n: usize) -> Option<Self::Staged> {
        None
    }

    /// Phase 2: H = Σ t_i·bases[i] for the quotient t of
    /// [`Compute::quotient`] over `abc` (`staged`: this circuit's phase-1
    /// upload of the same `abc`, if any; `bases.len() ≤ n` points, the H
    /// query), adding the quotient's and the MSM's times to
    /// [`Step::Ntt`] and [`Step::HMsm`]. `between` runs once the quotient is
    /// done and before the MSM starts (the pipeline stages the next circuit
    /// there, so that its uploads overlap the MSM, and the inputs' buffers
    /// are free). The default runs the two steps of [`Backend::compute`]; a
    /// device backend overrides it to keep t on the device between them.
    fn quotient_msm(
        &self,
        _lock: &ComputeGuard<'_>,
        abc: Abc<'_>,
        n: usize,
        _staged: Option<Self::Staged>,
        bases: &[G1Affine],
        between: &mut dyn FnMut(),
    ) -> Result<G1Projective> {
        let t = Instant::now();
        let coeffs = self.compute().quotient(abc, n)?;
        self.clock().add(Step::Ntt, t.elapsed());
        between();
        let t = Instant::now();
        let h = self.compute().msm::<crate::curve::G1>(bases, &coeffs[..bases.len()]);
        self.clock().add(Step::HMsm, t.elapsed());
        h
    }

    /// Phase 2, once the last circuit's quotient is done and before its
    /// H-MSM (a domain of `n`; `circuits` in the call): a second stream of
    /// this call's arithmetic, on which the pipeline runs the batch
    /// additions of every circuit beside that H-MSM, or `None`, where they
    /// run after it on [`Backend::compute`]. `mode` is
    /// `SUPRASEAL_C2_BATCH_ADD_BESIDE`. What this returns goes back
    /// through [`Backend::end_beside`]. Default: `None`.
    fn beside_h_msm(&self, _lock: &ComputeGuard<'_>, _n: usize, _circuits: usize, _mode: crate::config::Beside) -> Option<Self::Compute> {
        None
    }

    /// The stream of [`Backend::beside_h_msm`] once the pipeline is done with
    /// it (its work returned, or failed): waits for it. Default: dropped.
    fn end_beside(&self, _beside: Self::Compute) {}

    /// End of phase 2: waits for this call's own streams, then returns cached
    /// pool memory to the device (still under the compute lock), unless the
    /// next call can reuse it (the GPU keeps it over a resident key). Runs
    /// on error paths too.
    fn end_compute(&self, _lock: &ComputeGuard<'_>) -> Result<()> {
        Ok(())
    }

    /// Phase 3: waits for this call's streams and unpins what [`Backend::pin`] pinned and is still held.
    fn unpin(&self) {}

    /// Free device memory in bytes, where there is a device.
    fn free_memory(&self) -> Option<usize> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tail's bases: those gathered beforehand as they are, else
    /// gathered at the positions (repeated and unsorted ones included).
    #[test]
    fn gathered_or_now_takes_the_gathered_bases_or_gathers_them() {
        let bases: Vec<u64> = (100..200).collect();
        let positions = [7u32, 3, 99, 3, 0];
        let want = vec![107u64, 103, 199, 103, 100];
        assert!(matches!(gathered_or_now(&bases, &positions, &want), std::borrow::Cow::Borrowed(g) if g == want.as_slice()));
        assert_eq!(gathered_or_now(&bases, &positions, &[]).as_ref(), want.as_slice());
        assert!(gathered_or_now(&bases, &[], &[]).is_empty());
    }

    /// The CPU backend's tail MSMs over bases gathered now equal those over
    /// bases gathered beforehand.
    #[test]
    fn cpu_tail_msms_gather_their_bases_where_none_were_gathered() {
        use blstrs::{G1Affine, G1Projective};
        use group::{Curve, Group as _};
        let bases: Vec<G1Affine> = (1..=40u64).map(|i| (G1Projective::generator() * Scalar::from(i * 7919)).to_affine()).collect();
        let positions = [5u32, 39, 0, 17, 17];
        let gathered: Vec<G1Affine> = positions.iter().map(|&q| bases[q as usize]).collect();
        let scalars: Vec<Vec<Scalar>> = (0..2u64).map(|c| (0..5u64).map(|t| Scalar::from(1000 * c + t * t + 3)).collect()).collect();
        let views: Vec<&[Scalar]> = scalars.iter().map(Vec::as_slice).collect();
        let cpu = crate::cpu::CpuCompute;
        let want = cpu.msm_many::<crate::curve::G1>(&gathered, &views).unwrap();
        assert_eq!(cpu.msm_many_at::<crate::curve::G1>(&bases, &positions, &gathered, &views).unwrap(), want);
        assert_eq!(cpu.msm_many_at::<crate::curve::G1>(&bases, &positions, &[], &views).unwrap(), want);
        let direct: G1Projective = positions.iter().zip(&scalars[1]).map(|(&q, s)| G1Projective::from(bases[q as usize]) * s).sum();
        assert_eq!(want[1], direct);
    }
}
