//! The Groth16 prover pipeline of docs/ARCHITECTURE.md §4, written once over
//! a backend's [`Compute`].
//!
//! Per call: the split-MSM [`Plans`] for L, A-aux and B-aux are prepared once
//! for all circuits ([`split`]); then per circuit the quotient and H
//! ([`crate::backend::Backend::quotient_msm`]); then for all circuits at once
//! the G1 sums L, A′, B′ ([`g1_sums`]: one batch-addition pass over each base
//! vector, then the tails) and B′ in G2 (its batch addition and its MSMs,
//! [`g2_parts`]) produce the [`Intermediates`], and the [`epilogue`] turns
//! them into a proof with that circuit's r and s. [`crate::pipeline`] decides
//! which thread and which lock each piece runs under.

pub mod clock;
pub mod epilogue;
pub mod split;

use std::sync::Arc;

use blstrs::{G1Projective, G2Projective, Scalar};
use rayon::prelude::*;

use crate::assignment::Batch;
use crate::backend::{Compute, Group, Place, Placement, Step};
use crate::curve::{G1, G2};
use crate::error::Result;
use crate::srs::Srs;
pub use clock::{Clock, PhaseTimes};
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

/// Borrowed views of per-circuit vectors, as the `_many` backend calls take them.
fn slices<T>(v: &[Vec<T>]) -> Vec<&[T]> {
    v.iter().map(Vec::as_slice).collect()
}

/// The plan for one aux MSM in group `G`, with its tail bases gathered
/// on the host once for all circuits where the backend does not gather them
/// itself (a key not on the device; else empty: [`Compute::msm_many_at`]),
/// for the tail MSMs to upload, or to put on the device ahead
/// ([`Compute::put_ahead`]). B′ has two (G1 and G2) over one plan,
/// shared.
struct AuxMsm<'a, G: Group> {
    bases: &'a [G::Affine],
    plan: Arc<MsmPlan>,
    tail_bases: Vec<G::Affine>,
}

impl<'a, G: Group> AuxMsm<'a, G> {
    fn new(bases: &'a [G::Affine], plan: Arc<MsmPlan>, gather: bool) -> Self {
        let tail_bases = match &*plan {
            MsmPlan::Split { tail, .. } if gather => tail.par_iter().map(|&q| bases[q as usize]).collect(),
            _ => Vec::new(),
        };
        AuxMsm { bases, plan, tail_bases }
    }

    /// The batch-addition parts of every circuit's sum (the bases of its 1
    /// scalars), all circuits in one [`Compute::batch_add_many`] (a device
    /// backend reads each base once for all of them); identities when the
    /// plan is not split.
    fn batch_parts<C: Compute>(&self, compute: &C, circuits: usize) -> Result<Vec<G::Projective>> {
        match &*self.plan {
            MsmPlan::Split { ones, .. } => {
                let t = std::time::Instant::now();
                let sums = compute.batch_add_many::<G>(self.bases, &slices(ones));
                tracing::debug!(group = ?G::NAME, points = self.bases.len(), circuits, ms = crate::log::round1(t.elapsed().as_secs_f64() * 1e3), "batch additions");
                sums
            }
            MsmPlan::Plain { .. } => Ok(vec![<G::Projective as group::Group>::identity(); circuits]),
        }
    }

    /// The MSM parts of every circuit's sum (`aux`: the circuits' aux
    /// vectors): the tails, or every base when the plan is not split; all
    /// circuits in one [`Compute::msm_many_at_ahead`] or [`Compute::msm_many`] (a
    /// device backend puts the bases on the device once for all of them, the
    /// tail's gathered from the resident key where it is). `tails`: the
    /// tail's scalars of every circuit, gathered beforehand
    /// ([`MsmPlan::tail_scalars_all`]); `None` reads them from the witnesses
    /// now. `ahead`: those scalars where [`AuxMsm::put_ahead`] put them.
    fn msm_parts<C: Compute>(&self, compute: &C, aux: &[&[Scalar]], tails: Option<&Gathered>, ahead: Option<C::Ahead>) -> Result<Vec<G::Projective>> {
        match &*self.plan {
            plan @ MsmPlan::Split { tail, .. } => {
                let t = std::time::Instant::now();
                let now;
                let gathered = match tails {
                    Some(g) => g,
                    None => {
                        now = Gathered::of(plan, aux);
                        &now
                    }
                };
                let msm = std::time::Instant::now();
                let ahead_made = ahead.is_some();
                let sums = compute.msm_many_at_ahead::<G>(self.bases, tail, &self.tail_bases, &slices(&gathered.tails), ahead);
                tracing::debug!(
                    group = ?G::NAME,
                    points = tail.len(),
                    circuits = aux.len(),
                    gather_ms = crate::log::round1(gathered.took.as_secs_f64() * 1e3),
                    beside = tails.is_some(),
                    ahead = ahead_made,
                    msm_ms = crate::log::round1(msm.elapsed().as_secs_f64() * 1e3),
                    total_ms = crate::log::round1(t.elapsed().as_secs_f64() * 1e3),
                    "tail MSMs: scalars gathered on the host (beside the device's work, or in turn) and put on the device ahead (or not), then the MSMs"
                );
                sums
            }
            MsmPlan::Plain { scalars } => compute.msm_many::<G>(self.bases, &slices(scalars)),
        }
    }

    /// [`Compute::put_ahead`] of the tail's `gathered` scalars (a split
    /// plan's; `None` for a plain one). A failure is logged and leaves the
    /// upload to the MSM.
    fn put_ahead<C: Compute>(&self, compute: &C, gathered: &Gathered) -> Option<C::Ahead> {
        let MsmPlan::Split { tail, .. } = &*self.plan else {
            return None;
        };
        let t = std::time::Instant::now();
        match compute.put_ahead::<G>(self.bases, tail, &self.tail_bases, &gathered.tails) {
            Ok(ahead) => {
                if ahead.is_some() {
                    tracing::debug!(group = ?G::NAME, points = tail.len(), ms = crate::log::round1(t.elapsed().as_secs_f64() * 1e3), "tail scalars put on the device ahead of their MSM");
                }
                ahead
            }
            Err(e) => {
                tracing::debug!(group = ?G::NAME, error = %e, "tail scalars not put ahead: the MSM uploads them");
                None
            }
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

/// Whether the split plans gather their tails' bases on the host, in G1 and
/// in G2 ([`Plans::prepare`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TailBases {
    pub g1: bool,
    pub g2: bool,
}

impl TailBases {
    /// What `backend` reads on the host: G1's where it says so
    /// ([`crate::backend::Backend::tail_bases_on_host`]), G2's also where
    /// its G2 MSMs run on the host.
    pub fn of<B: crate::backend::Backend + ?Sized>(backend: &B) -> TailBases {
        let g1 = backend.tail_bases_on_host();
        TailBases { g1, g2: g1 || backend.placement().g2_msm == Place::Host }
    }
}

/// The split-MSM plans of one call: made once for all its circuits on the
/// CPU thread (phase 0), read by the G1 sums (phase 2) and the G2 parts.
pub struct Plans<'a> {
    l: AuxMsm<'a, G1>,
    a: AuxMsm<'a, G1>,
    b1: AuxMsm<'a, G1>,
    b2: AuxMsm<'a, G2>,
    /// B-input scalars of each circuit (inputs whose B-density bit is set).
    b_inp: Vec<Vec<Scalar>>,
    /// Each circuit's aux vector, which the tails' scalars are read from.
    aux: Vec<&'a [Scalar]>,
}

impl<'a> Plans<'a> {
    /// Prepares the L, A-aux and B-aux plans in parallel (rayon; the split
    /// taken `split`), with the tails' bases gathered on the host where the
    /// tail MSMs read them there (`tail_bases`: in G1 and in G2,
    /// [`TailBases::of`]).
    pub fn prepare(srs: &'a Srs, batch: &Batch<'a>, tail_bases: TailBases, split: split::SplitWhen) -> Plans<'a> {
        let num_inputs = batch.num_inputs();
        let aux: Vec<&[Scalar]> = batch.circuits.iter().map(|c| c.aux).collect();
        let (l_plan, (a_plan, b_plan)) = rayon::join(
            || split::prepare_when(Query::Full { vars: batch.num_aux() }, &aux, split),
            || {
                rayon::join(
                    || split::prepare_when(Query::Dense(batch.a_aux), &aux, split),
                    || split::prepare_when(Query::Dense(batch.b_aux), &aux, split),
                )
            },
        );
        let b_inp_points = batch.b_inp.popcount;
        let b_plan = Arc::new(b_plan);
        let plans = Plans {
            l: AuxMsm::new(&srs.l[..], Arc::new(l_plan), tail_bases.g1),
            a: AuxMsm::new(&srs.a[num_inputs..], Arc::new(a_plan), tail_bases.g1),
            b1: AuxMsm::new(&srs.b_g1[b_inp_points..], b_plan.clone(), tail_bases.g1),
            b2: AuxMsm::new(&srs.b_g2[b_inp_points..], b_plan, tail_bases.g2),
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
    /// The parts `placement` leaves to the CPU thread; `None` when it runs
    /// both on the device.
    pub fn on_host(placement: Placement) -> Option<G2Parts> {
        match (placement.g2_batch_add, placement.g2_msm) {
            (Place::Host, Place::Host) => Some(G2Parts::Both),
            (Place::Host, Place::Device) => Some(G2Parts::BatchAddition),
            (Place::Device, Place::Host) => Some(G2Parts::Msms),
            (Place::Device, Place::Device) => None,
        }
    }

    fn batch_addition(self) -> bool {
        matches!(self, G2Parts::BatchAddition | G2Parts::Both)
    }

    fn msms(self) -> bool {
        matches!(self, G2Parts::Msms | G2Parts::Both)
    }
}

/// G1 input MSMs (over the public inputs' bases: 328 per porep-32g
/// partition) of at most this many points run on a host thread of their own
/// beside the batch additions and tails, whatever the backend
/// ([`g1_sums`]): on a device each is a Pippenger's fixed cost (dozens of
/// windows of launches and a download, ~8 ms on the H200) inside the compute
/// lock, ~17 ms per partition at both call shapes (`notes/runs/s21/`).
/// Single-threaded blst takes ~6 ms for 512 G1 points, ~12 ms at this bound.
const INPUT_MSM_ON_HOST: usize = 1 << 10;

/// B′'s G2 input MSMs of at most this many points (1 in the 2 KiB PoRep's
/// partition, `notes/VALUE_MIX.md`) run on a host thread of their own
/// beside B′'s G2 tail MSM (and on the CPU backend its batch addition),
/// whatever the backend ([`g2_parts`]): on a device they sat in a gap of 3–4.5 ms before that
/// tail inside the compute lock (H100, `notes/runs/s43/`). A G2 point costs
/// blst ~3× a G1 point (1,024 points: ~32 ms against ~12, single-threaded),
/// and the circuits' MSMs run one after another, so the bound is a quarter
/// of G1's.
const G2_INPUT_MSM_ON_HOST: usize = INPUT_MSM_ON_HOST / 4;

/// Σ scalars·bases for each of `scalars`, on this thread (blst, no rayon).
fn msms_here<C: crate::cpu::msm::Curve>(bases: &[C::Affine], scalars: &[&[Scalar]]) -> Vec<C::Projective> {
    scalars.iter().map(|s| crate::cpu::msm::msm_here::<C>(bases, s)).collect()
}

/// `f` (input MSMs through [`msms_here`]) on a plain scoped thread of its
/// own with a `stack` of that many bytes: blst's Pippenger keeps its tables
/// on the stack (~80 KB at 31 G1 points; G2's points are twice G1's), which
/// is not left to RUST_MIN_STACK. `None` where no thread can be made.
fn inputs_beside<'scope, T: Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    stack: usize,
    f: impl FnOnce() -> T + Send + 'scope,
) -> Option<std::thread::ScopedJoinHandle<'scope, T>> {
    std::thread::Builder::new().name("supraseal-c2-inputs".into()).stack_size(stack).spawn_scoped(scope, f).ok()
}

/// What scoped thread `h` returned; its panic is resumed here, with its
/// own message (the scope would report only that a thread panicked).
fn joined<T>(h: std::thread::ScopedJoinHandle<'_, T>) -> T {
    h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// B′ in G2 of every circuit, or the chosen `parts` of it ([`G2Parts`]),
/// the small input MSMs on a host thread beside the rest
/// ([`G2_INPUT_MSM_ON_HOST`]). `b_tails`: B′'s tail scalars where [`g1_sums`]
/// gathered them already (and `b_ahead`: where it put them on the device
/// for the G2 MSM); `None` reads them from the witnesses.
pub fn g2_parts<C: Compute>(
    compute: &C,
    srs: &Srs,
    plans: &Plans<'_>,
    parts: G2Parts,
    b_tails: Option<&Gathered>,
    b_ahead: Option<C::Ahead>,
) -> Result<Vec<G2Projective>> {
    let circuits = plans.b_inp.len();
    let b_inp_points = plans.b_inp.first().map_or(0, |v| v.len());
    let (inp_bases, inp_scalars) = (&srs.b_g2[..b_inp_points], slices(&plans.b_inp));
    std::thread::scope(|scope| {
        // The input MSMs beside the tail (and the batch addition, where
        // asked for), where they are small ([`G2_INPUT_MSM_ON_HOST`]; else,
        // or where no thread can be made, through `compute` in turn).
        let mut input_msms = (parts.msms() && (1..=G2_INPUT_MSM_ON_HOST).contains(&b_inp_points))
            .then(|| inputs_beside(scope, 4 << 20, || msms_here::<G2>(inp_bases, &inp_scalars)))
            .flatten();
        let sums = (|| -> Result<Vec<G2Projective>> {
            let mut sums = if parts.batch_addition() {
                plans.b2.batch_parts(compute, circuits)?
            } else {
                vec![<G2Projective as group::Group>::identity(); circuits]
            };
            if parts.msms() {
                let tails = plans.b2.msm_parts(compute, &plans.aux, b_tails, b_ahead)?;
                let inputs = match input_msms.take() {
                    Some(h) => joined(h),
                    None => compute.msm_many::<G2>(inp_bases, &inp_scalars)?,
                };
                for ((sum, i), t) in sums.iter_mut().zip(inputs).zip(tails) {
                    *sum += i + t;
                }
            }
            Ok(sums)
        })();
        // The input MSMs' thread where an earlier error left it unjoined:
        // a panic there is resumed with its own message.
        if let Some(h) = input_msms {
            joined(h);
        }
        sums
    })
}

/// The batch-addition parts of every circuit's L, A′ and B′ in G1 and
/// L's tail scalars ([`G1Batched`]), and of B′ in G2 where they were asked
/// for: identities for a plan that is not split.
pub struct BatchParts {
    pub g1: G1Batched,
    pub b_g2: Option<Vec<G2Projective>>,
}

/// The batch-addition parts of L, A′ and B′ in G1, each with one point per circuit.
pub type G1Batch = (Vec<G1Projective>, Vec<G1Projective>, Vec<G1Projective>);

/// What [`g1_sums`] takes where the batch additions ran before it (beside
/// the last H-MSM): their parts, and L's tail scalars, gathered beside them
/// so that the first tail MSM does not wait for its gather (which the
/// batch additions would otherwise have hidden).
pub struct G1Batched {
    pub parts: G1Batch,
    pub l_tail: Arc<Gathered>,
}

/// [`BatchParts`] of `plans` on `compute`, B′ in G2's where `g2` is set:
/// one [`Compute::batch_add_many`] over each base vector for all circuits,
/// with L's tail scalars gathered beside them on a thread of their own (on
/// this one where none can be made). The pipeline runs it beside the last
/// circuit's H-MSM where the backend gives it a second stream
/// ([`crate::backend::Backend::beside_h_msm`]).
pub fn batch_parts<C: Compute>(compute: &C, plans: &Plans<'_>, g2: bool) -> Result<BatchParts> {
    let gather = || Arc::new(Gathered::of(&plans.l.plan, &plans.aux));
    std::thread::scope(|scope| {
        let l_tail = std::thread::Builder::new().name("supraseal-c2-tails".into()).spawn_scoped(scope, gather).ok();
        let parts = g1_batch(compute, plans)?;
        let b_g2 = if g2 { Some(plans.b2.batch_parts(compute, plans.aux.len())?) } else { None };
        let l_tail = match l_tail {
            Some(h) => joined(h),
            None => gather(),
        };
        Ok(BatchParts { g1: G1Batched { parts, l_tail }, b_g2 })
    })
}

/// The G1 batch additions' parts ([`G1Batch`]) of `plans` on `compute`.
fn g1_batch<C: Compute>(compute: &C, plans: &Plans<'_>) -> Result<G1Batch> {
    let circuits = plans.aux.len();
    Ok((plans.l.batch_parts(compute, circuits)?, plans.a.batch_parts(compute, circuits)?, plans.b1.batch_parts(compute, circuits)?))
}

/// One plan's tail scalars of every circuit ([`MsmPlan::tail_scalars_all`];
/// empty vectors for a plain plan), and how long their gather took.
pub struct Gathered {
    tails: Vec<Vec<Scalar>>,
    took: std::time::Duration,
}

impl Gathered {
    fn of(plan: &MsmPlan, aux: &[&[Scalar]]) -> Gathered {
        let t = std::time::Instant::now();
        let tails = plan.tail_scalars_all(aux);
        Gathered { tails, took: t.elapsed() }
    }
}

/// (L, A′, B′ in G1) of one circuit.
pub type G1Parts = (G1Projective, G1Projective, G1Projective);

/// What [`g1_sums`] returns: (L, A′, B′ in G1) of every circuit, and B′'s
/// tail scalars, which B′ in G2 shares ([`g2_parts`]: its plan is B′'s),
/// with their copy put on the device for the G2 MSM where it runs there;
/// and L's and A′'s tail scalars, spent, for the caller to free once the
/// device no longer waits on this thread ([`Spent`]).
pub struct G1Sums<A> {
    pub sums: Vec<G1Parts>,
    pub b_tails: Arc<Gathered>,
    pub b_g2_ahead: Option<A>,
    pub spent: Vec<Arc<Gathered>>,
}

/// Host memory a call is done with inside the compute lock: the split
/// plans and the tails' gathered scalars, tens of MB each at porep-32g
/// (per circuit 68 MB for L's and for A′'s tail and 49 MB for B′'s; 83 MB
/// of plans for a one-circuit call). Freeing such a buffer
/// returns its pages to the OS (~2–5 ms per 64 MB), time in which the
/// thread that holds the lock launches nothing; the pipeline keeps them
/// here and drops them after the release.
#[derive(Default)]
pub struct Spent<'p> {
    pub plans: Option<Arc<Plans<'p>>>,
    pub tails: Vec<Arc<Gathered>>,
}

/// What [`g1_sums`] computes under its threads: the sums, B′'s tail
/// scalars and the spent ones ([`G1Sums`]).
type Sums = (Vec<G1Parts>, Arc<Gathered>, Vec<Arc<Gathered>>);

/// One plan's tail scalars as the gather thread of [`g1_sums`] hands them
/// over: on the host, and put ahead on the device for the G1 MSM.
struct Tail<A> {
    gathered: Arc<Gathered>,
    ahead: Option<A>,
}

/// (L, A′, B′ in G1) of every circuit: the batch additions of all
/// circuits first, one pass over each base vector
/// ([`Compute::batch_add_many`]; `batched`: their parts, with L's tail
/// scalars, where they ran already, beside the last H-MSM), the input MSMs
/// beside them on a thread
/// of their own ([`INPUT_MSM_ON_HOST`]), then each plan's tails. The
/// tails' scalars are read from the witnesses on the host (random reads
/// over each circuit's aux vector): a thread of its own
/// gathers L's, A′'s, then B′'s while the device runs the batch additions
/// and the tail MSMs before them, and puts each on the device ahead of its
/// MSM ([`Compute::put_ahead`]), so that their uploads run beside that
/// work instead of between the MSMs; once B′'s are handed over, it puts
/// them ahead again for the G2 MSM (beside B′'s G1 MSM). The handover is a
/// rendezvous, so at most two sets of scalars are ahead on the device at
/// once (the one in its MSM and the next). While it puts a tail ahead and
/// waits to hand it over, it gathers the next one on the host (on a thread
/// of its own), so that only a set's copy runs during the MSM before it:
/// at most three plans' tails are on the host at once (on the H200, a
/// gather took 7–10 ms and a set's copy 26–30 ms beside a G1 tail MSM of
/// 21–29 ms, at porep-32g with one circuit). Adds to `clock`'s
/// [`Step::BatchAdd`] and [`Step::Tails`] (the latter includes any wait for
/// a gather, for its upload ahead, or for the input MSMs' thread).
pub fn g1_sums<C: Compute>(compute: &C, clock: &Clock, srs: &Srs, batch: &Batch<'_>, plans: &Plans<'_>, batched: Option<G1Batched>) -> Result<G1Sums<C::Ahead>> {
    let circuits = batch.circuits.len();
    let num_inputs = batch.num_inputs();
    let b_inp_points = batch.b_inp.popcount;
    let (a_inp_bases, b_inp_bases) = (&srs.a[..num_inputs], &srs.b_g1[..b_inp_points]);
    let inputs: Vec<&[Scalar]> = batch.circuits.iter().map(|c| c.inp).collect();
    let b_inp_scalars = slices(&plans.b_inp);
    let (batched, mut l_tail) = match batched {
        Some(G1Batched { parts, l_tail }) => (Some(parts), Some(l_tail)),
        None => (None, None),
    };
    std::thread::scope(|scope| {
        // The input MSMs beside the batch additions, where they are small
        // (else, or where no thread can be made, through `compute` in turn).
        let mut input_msms = (num_inputs.max(b_inp_points) <= INPUT_MSM_ON_HOST)
            .then(|| inputs_beside(scope, 2 << 20, || (msms_here::<G1>(a_inp_bases, &inputs), msms_here::<G1>(b_inp_bases, &b_inp_scalars))))
            .flatten();
        let (tx, rx) = std::sync::mpsc::sync_channel::<Tail<C::Ahead>>(0);
        // B′'s scalars put ahead for the G2 MSM: sent once, never waited on
        // (read after the thread is joined).
        let (g2_tx, g2_rx) = std::sync::mpsc::sync_channel::<C::Ahead>(1);
        let order = [&plans.l, &plans.a, &plans.b1];
        let feeder = std::thread::Builder::new()
            .name("supraseal-c2-tails".into())
            .spawn_scoped(scope, move || {
                let gather = |msm: &AuxMsm<'_, G1>| Arc::new(Gathered::of(&msm.plan, &plans.aux));
                let mut gathered = l_tail.take().unwrap_or_else(|| gather(&plans.l));
                for (i, msm) in order.into_iter().enumerate() {
                    // The next tail's gather runs beside this one's copy to
                    // the device and its wait for its turn; where no thread
                    // can be made, after them.
                    let (sent, next) = std::thread::scope(|s| {
                        let early = order.get(i + 1).and_then(|&m| std::thread::Builder::new().name("supraseal-c2-gather".into()).spawn_scoped(s, move || gather(m)).ok());
                        let ahead = msm.put_ahead(compute, &gathered);
                        let sent = tx.send(Tail { gathered: gathered.clone(), ahead }).is_ok();
                        (sent, early.map(joined))
                    });
                    // A failed step on the device drops the receiver: stop.
                    if !sent {
                        return;
                    }
                    if std::ptr::eq(msm, &plans.b1) {
                        if let Some(g2) = plans.b2.put_ahead(compute, &gathered) {
                            let _ = g2_tx.try_send(g2);
                        }
                    }
                    if let Some(&m) = order.get(i + 1) {
                        gathered = next.unwrap_or_else(|| gather(m));
                    }
                }
            })
            // Where no thread can be made, each tail is gathered in its turn.
            .ok();
        let mut turn = 0;
        let mut next = || -> Result<Tail<C::Ahead>> {
            turn += 1;
            if feeder.is_some() {
                rx.recv().map_err(|_| crate::error::Error::new(crate::error::code::EFAULT, "g1_sums: the tail-gather thread ended early"))
            } else {
                Ok(Tail { gathered: Arc::new(Gathered::of(&order[turn - 1].plan, &plans.aux)), ahead: None })
            }
        };
        let mut spent = Vec::with_capacity(2);
        let sums = (|| -> Result<Sums> {
            let (l, a, b1) = match batched {
                Some(parts) => parts,
                None => clock.time(Step::BatchAdd, || g1_batch(compute, plans))?,
            };
            // Each base vector goes up once for all circuits (tails, and input MSMs through `compute`).
            let (a_inp, b_inp, lt, at, (bt, b)) = clock.time(Step::Tails, || -> Result<_> {
                let (a_inp, b_inp) = match input_msms.take() {
                    Some(h) => joined(h),
                    None => (compute.msm_many::<G1>(a_inp_bases, &inputs)?, compute.msm_many::<G1>(b_inp_bases, &b_inp_scalars)?),
                };
                // Each tail's scalars on the device go before the next
                // handover; on the host they are kept ([`Spent`]).
                let lt = {
                    let t = next()?;
                    let sums = plans.l.msm_parts(compute, &plans.aux, Some(&*t.gathered), t.ahead)?;
                    spent.push(t.gathered);
                    sums
                };
                let at = {
                    let t = next()?;
                    let sums = plans.a.msm_parts(compute, &plans.aux, Some(&*t.gathered), t.ahead)?;
                    spent.push(t.gathered);
                    sums
                };
                let b = next()?;
                Ok((a_inp, b_inp, lt, at, (plans.b1.msm_parts(compute, &plans.aux, Some(&*b.gathered), b.ahead)?, b.gathered)))
            })?;
            let sums = (0..circuits).map(|ci| (l[ci] + lt[ci], a[ci] + a_inp[ci] + at[ci], b1[ci] + b_inp[ci] + bt[ci])).collect();
            Ok((sums, b, spent))
        })();
        // The feeder stops once the receiver is gone; a panic there, or in
        // the input MSMs' thread not joined above (an earlier error), is
        // resumed here with its own message (the scope would report only
        // that a scoped thread panicked).
        drop(rx);
        if let Some(h) = feeder {
            joined(h);
        }
        if let Some(h) = input_msms {
            joined(h);
        }
        let b_g2_ahead = g2_rx.try_recv().ok();
        sums.map(|(sums, b_tails, spent)| G1Sums { sums, b_tails, b_g2_ahead, spent })
    })
}
