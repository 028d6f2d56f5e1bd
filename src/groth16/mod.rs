//! The Groth16 prover pipeline of docs/ARCHITECTURE.md §4, written once over a [`Backend`].
//!
//! Per call: the split-MSM [`Plans`] for L, A-aux and B-aux are prepared once
//! for all circuits ([`split`]); then per circuit the quotient and H
//! ([`h_sum`]); then for all circuits at once the G1 sums L, A′, B′
//! ([`g1_sums`]: one batch-addition pass over each base vector, then the
//! tails) and B′ in G2 (its batch addition and its MSMs, [`g2_parts`])
//! produce the [`Intermediates`], and
//! the [`epilogue`] turns
//! them into a proof with that circuit's r and s. [`crate::pipeline`] decides
//! which thread and which lock each piece runs under.

pub mod epilogue;
pub mod split;

use std::sync::Arc;
use std::time::{Duration, Instant};

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use rayon::prelude::*;

use crate::assignment::Batch;
use crate::backend::{Abc, Backend};
use crate::error::Result;
use crate::srs::Srs;
use split::{MsmPlan, Query};

/// The five sums a proof is assembled from (docs/ARCHITECTURE.md §4 steps 1–4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Intermediates {
    /// H = Σ t_i·h_i.
    pub h: G1Projective,
    /// L = Σ aux_j·l_j.
    pub l: G1Projective,
    /// A′ = Σ inputs + Σ A-dense aux, over the `a` bases.
    pub a: G1Projective,
    /// B′ in G1.
    pub b_g1: G1Projective,
    /// B′ in G2.
    pub b_g2: G2Projective,
}

/// Wall time of each part of one call, summed over its circuits.
#[derive(Clone, Copy, Debug, Default)]
pub struct PhaseTimes {
    /// Page-locking and letting go of the host a/b/c buffers: the first
    /// circuit in phase 0, the others on the pinning thread beside phase 2.
    pub pin: Duration,
    /// Phase 1 (or the start of phase 2 in single-lock mode): the pre-stage
    /// decision, allocation and upload issue.
    pub stage: Duration,
    /// Split-MSM preparation (bitmaps and tails), on the CPU thread.
    pub prep: Duration,
    /// NTTs and the pointwise step (H polynomial), uploads of the fallback path included.
    pub ntt: Duration,
    /// The MSM over the h bases.
    pub h_msm: Duration,
    /// Batch additions in phase 2 (G1: L, A′, B′ split paths; G2: B′ where the
    /// backend runs it on the device).
    pub batch_add: Duration,
    /// G1 tail MSMs, plain MSMs and input MSMs (L, A′, B′), and the G2 MSMs
    /// of B′ when they run on the device (`SUPRASEAL_C2_G2_MSM=gpu`).
    pub tails: Duration,
    /// The parts of B′ in G2 on the CPU thread: the G2 MSMs (input MSM and
    /// tail; zero time when they run on the device), and the batch addition
    /// where the backend has no device (the CPU backend).
    pub g2: Duration,
    /// After phase 2: waiting for the CPU thread (plans, G2 MSMs on the CPU)
    /// and the pinning thread to end.
    pub join: Duration,
    /// Phase 3: waiting for the streams and unpinning.
    pub unpin: Duration,
}

/// Borrowed views of per-circuit vectors, as the `_many` backend calls take them.
fn slices<T>(v: &[Vec<T>]) -> Vec<&[T]> {
    v.iter().map(Vec::as_slice).collect()
}

/// The plan for one aux MSM with its tail bases gathered once for all
/// circuits. B′ has two (G1 and G2) over one plan, shared.
struct AuxMsm<'a, A> {
    bases: &'a [A],
    plan: Arc<MsmPlan>,
    tail_bases: Vec<A>,
}

impl<'a, A: Copy + Send + Sync> AuxMsm<'a, A> {
    fn new(bases: &'a [A], plan: Arc<MsmPlan>) -> Self {
        let tail_bases = match &*plan {
            MsmPlan::Split { tail, .. } => tail.par_iter().map(|&q| bases[q as usize]).collect(),
            MsmPlan::Plain { .. } => Vec::new(),
        };
        AuxMsm { bases, plan, tail_bases }
    }

    /// The batch-addition parts of every circuit's sum (the bases of its 1
    /// scalars), all circuits in one call of `many` (a device backend reads
    /// each base once for all of them); identities when the plan is not split.
    fn batch_parts<P: group::Group>(&self, circuits: usize, many: impl Fn(&[A], &[&[u64]]) -> Result<Vec<P>>) -> Result<Vec<P>> {
        match &*self.plan {
            MsmPlan::Split { ones, .. } => many(self.bases, &slices(ones)),
            MsmPlan::Plain { .. } => Ok(vec![P::identity(); circuits]),
        }
    }

    /// The MSM parts of every circuit's sum (`aux`: the circuits' aux
    /// vectors): the tails, their scalars read from the witnesses now, or
    /// every base when the plan is not split; all circuits in one call of
    /// `many` (a device backend uploads the bases once for all of them).
    fn msm_parts<P>(&self, aux: &[&[Scalar]], many: impl Fn(&[A], &[&[Scalar]]) -> Result<Vec<P>>) -> Result<Vec<P>> {
        match &*self.plan {
            plan @ MsmPlan::Split { .. } => {
                // Plain threads, not rayon: this runs under the compute lock.
                let tails: Vec<Vec<Scalar>> = crate::threads::on_plain_threads(aux, |a| plan.tail_scalars(a));
                many(&self.tail_bases, &slices(&tails))
            }
            MsmPlan::Plain { scalars } => many(self.bases, &slices(scalars)),
        }
    }

    /// Host bytes of the plan (bitmaps, tail indices or gathered scalars)
    /// and of its tail bases.
    fn host_bytes(&self) -> usize {
        let plan = match &*self.plan {
            MsmPlan::Split { ones, tail, tail_vars } => 8 * ones.iter().map(Vec::len).sum::<usize>() + 4 * (tail.len() + tail_vars.len()),
            MsmPlan::Plain { scalars } => scalars.iter().map(|s| std::mem::size_of_val(s.as_slice())).sum(),
        };
        plan + self.tail_bases_bytes()
    }

    fn tail_bases_bytes(&self) -> usize {
        std::mem::size_of_val(self.tail_bases.as_slice())
    }

    /// Whether the split (batch addition + tail) path was taken.
    fn is_split(&self) -> bool {
        matches!(*self.plan, MsmPlan::Split { .. })
    }
}

/// The split-MSM plans of one call: made once for all its circuits on the
/// CPU thread (phase 0), read by the G1 sums (phase 2) and the G2 parts.
pub struct Plans<'a> {
    l: AuxMsm<'a, G1Affine>,
    a: AuxMsm<'a, G1Affine>,
    b1: AuxMsm<'a, G1Affine>,
    b2: AuxMsm<'a, G2Affine>,
    /// B-input scalars of each circuit (inputs whose B-density bit is set).
    b_inp: Vec<Vec<Scalar>>,
    /// Each circuit's aux vector, which the tails' scalars are read from.
    aux: Vec<&'a [Scalar]>,
}

impl<'a> Plans<'a> {
    /// Prepares the L, A-aux and B-aux plans in parallel (rayon).
    pub fn prepare(srs: &'a Srs, batch: &Batch<'a>) -> Plans<'a> {
        let num_inputs = batch.num_inputs();
        let aux: Vec<&[Scalar]> = batch.circuits.iter().map(|c| c.aux).collect();
        let (l_plan, (a_plan, b_plan)) = rayon::join(
            || split::prepare(Query::Full { vars: batch.num_aux() }, &aux),
            || {
                rayon::join(
                    || split::prepare(Query::Dense(batch.a_aux), &aux),
                    || split::prepare(Query::Dense(batch.b_aux), &aux),
                )
            },
        );
        let b_inp_points = batch.b_inp.popcount;
        let b_plan = Arc::new(b_plan);
        let plans = Plans {
            l: AuxMsm::new(&srs.l[..], Arc::new(l_plan)),
            a: AuxMsm::new(&srs.a[num_inputs..], Arc::new(a_plan)),
            b1: AuxMsm::new(&srs.b_g1[b_inp_points..], b_plan.clone()),
            b2: AuxMsm::new(&srs.b_g2[b_inp_points..], b_plan),
            b_inp: batch
                .circuits
                .iter()
                .map(|c| (0..num_inputs).filter(|&i| batch.b_inp.get(i)).map(|i| c.inp[i]).collect())
                .collect(),
            aux,
        };
        tracing::debug!(
            l_split = plans.l.is_split(),
            a_split = plans.a.is_split(),
            b_split = plans.b1.is_split(),
            host_bytes = plans.l.host_bytes() + plans.a.host_bytes() + plans.b1.host_bytes() + plans.b2.tail_bases_bytes(),
            "split-MSM plans"
        );
        plans
    }
}

/// The parts of B′ in G2: the batch addition over the B-aux bases of 1
/// scalars (split plan only), and the MSMs (the B-input MSM plus the aux
/// tail MSM, or the whole aux MSM when the plan is not split). Both parts
/// together are B′ in G2. The pipeline runs each part on the CPU thread
/// (docs/ARCHITECTURE.md §4: the G2 MSMs beside the GPU) or in phase 2, as
/// the backend places it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum G2Parts {
    BatchAddition,
    Msms,
    Both,
}

impl G2Parts {
    /// The parts `backend` leaves to the CPU thread; `None` when it runs
    /// both on the device.
    pub fn on_host<B: Backend + ?Sized>(backend: &B) -> Option<G2Parts> {
        match (backend.g2_batch_on_device(), backend.g2_msm_on_device()) {
            (false, false) => Some(G2Parts::Both),
            (false, true) => Some(G2Parts::BatchAddition),
            (true, false) => Some(G2Parts::Msms),
            (true, true) => None,
        }
    }

    fn batch_addition(self) -> bool {
        matches!(self, G2Parts::BatchAddition | G2Parts::Both)
    }

    fn msms(self) -> bool {
        matches!(self, G2Parts::Msms | G2Parts::Both)
    }
}

/// B′ in G2 of every circuit, or the chosen `parts` of it ([`G2Parts`]).
pub fn g2_parts<B: Backend + ?Sized>(backend: &B, srs: &Srs, plans: &Plans<'_>, parts: G2Parts) -> Result<Vec<G2Projective>> {
    let circuits = plans.b_inp.len();
    let b_inp_points = plans.b_inp.first().map_or(0, |v| v.len());
    let mut sums = if parts.batch_addition() {
        plans.b2.batch_parts(circuits, |x: &[G2Affine], m: &[&[u64]]| backend.batch_add_g2_many(x, m))?
    } else {
        vec![<G2Projective as group::Group>::identity(); circuits]
    };
    if parts.msms() {
        let many = |x: &[G2Affine], s: &[&[Scalar]]| backend.msm_g2_many(x, s);
        let inputs = many(&srs.b_g2[..b_inp_points], &slices(&plans.b_inp))?;
        let tails = plans.b2.msm_parts(&plans.aux, many)?;
        for ((sum, i), t) in sums.iter_mut().zip(inputs).zip(tails) {
            *sum += i + t;
        }
    }
    Ok(sums)
}

/// H = Σ t_i·h_i of one circuit: the quotient (from `staged` when phase 1
/// or an earlier circuit uploaded it) and the H-MSM, with `between` run
/// between them ([`Backend::quotient_msm`]). Adds to `times.ntt` and `times.h_msm`.
pub fn h_sum<B: Backend + ?Sized>(
    backend: &B,
    srs: &Srs,
    abc: Abc<'_>,
    staged: Option<B::Staged>,
    times: &mut PhaseTimes,
    between: &mut dyn FnMut(),
) -> Result<G1Projective> {
    let (h, ntt, msm) = backend.quotient_msm(abc, srs.domain_size(), staged, &srs.h, between)?;
    times.ntt += ntt;
    times.h_msm += msm;
    Ok(h)
}

/// (L, A′, B′ in G1) of every circuit: the batch additions of all
/// circuits first, one pass over each base vector ([`Backend::batch_add_g1_many`]),
/// then each circuit's tails and input MSMs. Adds to `times.batch_add` and
/// `times.tails`.
pub fn g1_sums<B: Backend + ?Sized>(
    backend: &B,
    srs: &Srs,
    batch: &Batch<'_>,
    plans: &Plans<'_>,
    times: &mut PhaseTimes,
) -> Result<Vec<(G1Projective, G1Projective, G1Projective)>> {
    let circuits = batch.circuits.len();
    let num_inputs = batch.num_inputs();
    let b_inp_points = batch.b_inp.popcount;
    let t = Instant::now();
    let many = |x: &[G1Affine], m: &[&[u64]]| backend.batch_add_g1_many(x, m);
    let (l, a, b1) = (plans.l.batch_parts(circuits, many)?, plans.a.batch_parts(circuits, many)?, plans.b1.batch_parts(circuits, many)?);
    times.batch_add += t.elapsed();
    let t = Instant::now();
    // Each base vector goes up once for all circuits (tails and input MSMs).
    let many = |x: &[G1Affine], s: &[&[Scalar]]| backend.msm_g1_many(x, s);
    let a_inp = many(&srs.a[..num_inputs], &batch.circuits.iter().map(|c| c.inp).collect::<Vec<_>>())?;
    let b_inp = many(&srs.b_g1[..b_inp_points], &slices(&plans.b_inp))?;
    let (lt, at, bt) = (plans.l.msm_parts(&plans.aux, many)?, plans.a.msm_parts(&plans.aux, many)?, plans.b1.msm_parts(&plans.aux, many)?);
    times.tails += t.elapsed();
    Ok((0..circuits).map(|ci| (l[ci] + lt[ci], a[ci] + a_inp[ci] + at[ci], b1[ci] + b_inp[ci] + bt[ci])).collect())
}
