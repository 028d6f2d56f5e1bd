//! Phases 0–3 of docs/ARCHITECTURE.md §5 for one validated group of
//! circuits on one backend and one GPU's locks.

use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use blstrs::G2Projective;
use group::Group;

use crate::threads::in_cpu_pool;
use super::checks::Checks;
use super::report::CallReport;
use crate::assignment::Batch;
use crate::backend::{Abc, Admission, Backend, Place, Restaged, Step};
use crate::config::Settings;
use crate::error::{Error, Result};
use crate::groth16::split::SplitWhen;
use crate::groth16::{self, Intermediates, PhaseTimes, Plans};
use crate::locks::{ComputeGuard, GpuLocks, LockMode, StageLock};
use crate::log::round1;
use crate::srs::Srs;

/// Phases 0–3 of docs/ARCHITECTURE.md §5 for a validated batch on `backend`, with `locks`.
///
/// Phase 0 (no lock): sort (or pin) the first circuit's a/b/c
/// ([`Backend::pin`]); start the CPU thread (split-MSM plans, then the G2
/// MSMs of B′), the pinning thread (the other circuits, two ahead of the
/// one computing, each let go of once its quotient is done) and, where validation left them, the scalar checks of
/// circuits 1.. (`super::checks`; phase 2 and the G2 MSMs wait for them). Phase 1 (memory lock): pre-stage the first circuits
/// that fit, or decide fallback. Phase 2 (compute lock): quotient and H-MSM
/// per circuit, the next circuit staged ahead where there is room (its host
/// copies on a thread of their own, [`Backend::fill`]); then
/// (once the plans are ready) the G1 batch additions of all circuits in one
/// pass per base vector, the tails, and the G2 batch addition (and the G2
/// MSMs, with `SUPRASEAL_C2_G2_MSM=gpu`); `end_compute`. Then (no lock)
/// the threads are joined, and phase 3 unpins what is left. The memory lock is released before the compute
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
        backend: backend.kind(),
        device: 0,
        circuits: inputs.len(),
        domain: n,
        lock_mode: settings.locks,
        prestaged: None,
        prestaged_part: None,
        restaged: None,
        restage_mem: Vec::new(),
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
        g2_msm: backend.placement().g2_msm_label(),
        batch_add_beside: false,
    };
    let clock = backend.clock();
    backend.under_locks(locks);

    // Phase 0: the first circuit's pins (the others are pinned one ahead
    // of the circuit computing, by the pinning thread below).
    report.reason = clock.time(Step::Pin, || {
        backend.pin_key(srs);
        backend.pin(0, inputs[0])
    });
    let (tx, rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel::<usize>();
    let inputs_ref = &inputs;
    let checks = Checks::new(&batch.circuits);
    let checks = &checks;
    let (g1, cpu, pinner) = std::thread::scope(|scope| {
        if Checks::needed(&batch.circuits) {
            scope.spawn(move || checks.run(&batch.circuits));
        }
        let cpu = scope.spawn(move || {
            // Timed inside the pool: a wait for one of its workers (another
            // call's work) is not preparation.
            let tail_bases = groth16::TailBases::of(backend);
            let split = if settings.split_always { SplitWhen::Always } else { SplitWhen::TailAtMostHalf };
            let plans = in_cpu_pool(|| clock.time(Step::Prep, || Arc::new(Plans::prepare(srs, batch, tail_bases, split))));
            let _ = tx.send(plans.clone());
            // B′ in G2 (docs/ARCHITECTURE.md §4: the G2 MSMs on CPU threads, beside the
            // GPU), less the parts the backend runs on the device in phase 2.
            let t = Instant::now();
            let g2 = groth16::G2Parts::on_host(backend.placement()).map(|parts| {
                // Waited for here, outside the CPU pool: where the check
                // pool cannot be built the checks run in the CPU pool, and a
                // worker blocked on them would keep them from running once
                // every worker is (two calls at once on a two-thread pool
                // hung so).
                checks.wait(batch.circuits.len())?;
                // Curio's fork calls the host's set_membw_throttle(1) here,
                // its split-MSM preparation done, and (0) once its CPU G2 MSM
                // ends (`curio-fork`; nothing otherwise).
                let _throttle = crate::curio::cpu_g2_work();
                in_cpu_pool(|| groth16::g2_parts(backend.compute(), srs, &plans, parts, None, None))
            });
            clock.add(Step::G2, t.elapsed());
            g2
        });
        let pinner = scope.spawn(move || pin_ahead(backend, inputs_ref, done_rx));
        let g1 = locked_phases(backend, srs, batch, locks, settings, inputs_ref, rx, done_tx, checks, &mut report);
        // A scalar rejected by the checks is the call's error, whatever phase
        // 2 made of it.
        let g1 = match checks.finish() {
            Some(e) => Err(e),
            None => g1,
        };
        let joined = clock.time(Step::Join, || (cpu.join(), pinner.join()));
        (g1, joined.0, joined.1)
    });
    if let Err(panic) = pinner {
        std::panic::resume_unwind(panic);
    }

    // Phase 3.
    clock.time(Step::Unpin, || backend.unpin());
    let g2 = match cpu {
        Ok(r) => r,
        Err(panic) => std::panic::resume_unwind(panic),
    };
    report.times = clock.times();
    let result = g1.and_then(|mut sums| {
        // B′ in G2: the part phase 2 made plus the CPU thread's.
        if let Some(g2_cpu) = g2.transpose()? {
            sums.iter_mut().zip(g2_cpu).for_each(|(m, b)| m.b_g2 += b);
        }
        Ok(sums)
    });
    if let Err(e) = &result {
        report.error = Some(e.to_string());
    }
    (result, report)
}

/// How many circuits past the one computing are kept page-locked: two, so
/// that the next one is pinned (a porep-32g circuit takes ~0.6 s) before
/// this one's quotient ends, when its uploads start.
const PIN_AHEAD: usize = 2;

/// The pinning thread of a call: pins circuits 1.. one after another, at
/// most [`PIN_AHEAD`] past the circuit computing, and lets go of each circuit
/// as phase 2 reports its quotient done (`done` carries its index). Ends
/// when phase 2 hangs up; the time spent pinning and unpinning goes to
/// [`Step::Pin`].
fn pin_ahead<B: Backend + ?Sized>(backend: &B, inputs: &[Abc<'_>], done: mpsc::Receiver<usize>) {
    let (mut next, mut computing) = (1, 0);
    loop {
        while next < inputs.len() && next <= computing + PIN_AHEAD {
            let t = Instant::now();
            if let Some(why) = backend.pin(next, inputs[next]) {
                tracing::debug!(circuit = next, why, "circuit not wholly page-locked: it uploads from pageable memory");
            }
            tracing::debug!(circuit = next, ms = round1(t.elapsed().as_secs_f64() * 1e3), "circuit pinned");
            backend.clock().add(Step::Pin, t.elapsed());
            next += 1;
        }
        match done.recv() {
            Ok(ci) => {
                let t = Instant::now();
                backend.unpin_circuit(ci);
                tracing::debug!(circuit = ci, ms = round1(t.elapsed().as_secs_f64() * 1e3), "circuit unpinned");
                backend.clock().add(Step::Pin, t.elapsed());
                computing = ci + 1;
            }
            Err(_) => return,
        }
    }
}

/// A staged circuit on its way to the device: the thread making its host
/// copies ([`Backend::fill`]).
type Filling<'scope, S> = std::thread::ScopedJoinHandle<'scope, (S, Result<()>)>;

/// Starts [`Backend::fill`] of circuit `ci` on a thread of `scope`, in the
/// caller's tracing context. Where no thread can be started, `staged` is
/// dropped (its device buffers freed) and the circuit uploads in its turn.
fn spawn_fill<'scope, 'env, B: Backend + ?Sized>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    backend: &'env B,
    ci: usize,
    abc: Abc<'env>,
    mut staged: B::Staged,
) -> Option<Filling<'scope, B::Staged>> {
    let fill = move || {
        let r = backend.fill(ci, abc, &mut staged);
        (staged, r)
    };
    match spawn_traced(scope, "supraseal-c2-fill", fill) {
        Ok(t) => Some(t),
        Err(e) => {
            tracing::debug!(circuit = ci, error = %e, "no thread for the host copies: the circuit uploads in its turn");
            None
        }
    }
}

/// Starts `f` on a thread of `scope` named `name`, in the caller's tracing
/// context (its span and subscriber).
fn spawn_traced<'scope, 'env, T: Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    name: &str,
    f: impl FnOnce() -> T + Send + 'scope,
) -> std::io::Result<std::thread::ScopedJoinHandle<'scope, T>> {
    let (span, dispatch) = (tracing::Span::current(), tracing::dispatcher::get_default(|d| d.clone()));
    std::thread::Builder::new().name(name.into()).spawn_scoped(scope, move || tracing::dispatcher::with_default(&dispatch, || span.in_scope(f)))
}

/// The second stream of [`Backend::beside_h_msm`], handed back
/// ([`Backend::end_beside`]: it waits for the stream) when dropped, also
/// while a panic unwinds, before the compute lock is released.
struct SideStream<'b, B: Backend + ?Sized>(&'b B, Option<B::Compute>);

impl<B: Backend + ?Sized> Drop for SideStream<'_, B> {
    fn drop(&mut self) {
        if let Some(side) = self.1.take() {
            self.0.end_beside(side);
        }
    }
}

/// The staged circuit once its fill ended; `None` (its buffers freed, the
/// circuit uploads in its turn, on the fallback path) when the fill failed.
fn finish_fill<S>(filling: Filling<'_, S>, ci: usize) -> Option<S> {
    match filling.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)) {
        (s, Ok(())) => Some(s),
        (_, Err(e)) => {
            tracing::debug!(circuit = ci, error = %e, "host copies through the staging ring failed: the circuit uploads in its turn");
            None
        }
    }
}

/// Whether a call waiting for a busy compute lock looks again after a look
/// whose admission gave `done` ([`Backend::restage`], its copies made), with
/// `last` set where a phase 2 has ended on the device since the call's
/// phase-1 room: not once circuit 0's `vectors` (a, b, c) are all staged or
/// nothing more can be, nor after a look past a phase-2 end (the memory that
/// phase 2 held is back; a looking call wins only the hand-offs no blocked
/// call takes).
fn look_again(done: Option<Restaged>, last: bool, vectors: usize) -> bool {
    match done {
        None => false,
        Some(r) => r.staged < vectors && !last,
    }
}

/// [`Checks::wait`] from phase 2, logging a wait that was not instant (the
/// checks are meant to run ahead of the circuit computing).
fn wait_for_checks(checks: &Checks, upto: usize) -> Result<()> {
    let t = Instant::now();
    let r = checks.wait(upto);
    let waited = t.elapsed();
    if waited > Duration::from_millis(1) {
        tracing::debug!(circuits = upto, wait_ms = round1(waited.as_secs_f64() * 1e3), "phase 2 waited for scalar checks");
    }
    r
}

/// Phases 1 and 2: the lock holds of one call. Circuit by circuit, the
/// quotient and H-MSM, with the next circuit staged ahead where the backend
/// can (`prefetch`) and each circuit's pins let go of once its quotient is
/// done (`done`); then, the plans ready, the batch additions of all circuits
/// (one pass over each base vector) and the tails.
///
/// Returns each circuit's sums with only the part of B′ in G2 made under the
/// compute lock (the batch addition, plus the MSMs when they run on the
/// device); the CPU thread's part is added in phase 3.
#[allow(clippy::too_many_arguments)]
fn locked_phases<B: Backend + ?Sized>(
    backend: &B,
    srs: &Srs,
    batch: &Batch<'_>,
    locks: &GpuLocks,
    settings: Settings,
    inputs: &[Abc<'_>],
    plans: mpsc::Receiver<Arc<Plans<'_>>>,
    done: mpsc::Sender<usize>,
    checks: &Checks,
    report: &mut CallReport,
) -> Result<Vec<Intermediates>> {
    let n = srs.domain_size();
    // Read for the report before any lock: a driver query can wait behind
    // other threads' driver calls (~0.1 s seen on the H200 at 2^24), and the
    // memory lock is for admission and allocation only.
    report.free_before = backend.free_memory();
    let clock = backend.clock();
    let stage = |lock: StageLock<'_>, report: &mut CallReport| {
        let admission = clock.time(Step::Stage, || backend.prestage(lock, inputs, n));
        report.stage_detail = backend.stage_detail();
        admission
    };
    let by_circuit = |admission: Admission<B::Staged>, report: &mut CallReport| -> Vec<Option<B::Staged>> {
        match admission {
            Admission::NotNeeded => inputs.iter().map(|_| None).collect(),
            Admission::Staged(v) => {
                report.prestaged = Some(true);
                let mut v: Vec<_> = v.into_iter().map(Some).collect();
                v.resize_with(inputs.len(), || None);
                v
            }
            Admission::Part { staged, vectors, why } => {
                report.prestaged = Some(false);
                report.prestaged_part = Some(vectors);
                report.reason = Some(format!("{vectors} of circuit 0's a, b, c pre-staged, the rest uploaded in phase 2: {why}"));
                let mut v = vec![Some(staged)];
                v.resize_with(inputs.len(), || None);
                v
            }
            Admission::Fallback(why) => {
                report.prestaged = Some(false);
                report.reason = Some(why);
                inputs.iter().map(|_| None).collect()
            }
        }
    };
    let (mut staged, compute) = match settings.locks {
        LockMode::Two => {
            let mem = locks.memory(backend.registration_gate());
            // Read under the memory lock, before phase 1's room: an event
            // during phase 1 is not missed, and one while the call waited
            // for the lock is already in the room.
            let start = backend.memory_events();
            let admission = stage(mem.stage_lock(), report);
            let mut staged = by_circuit(admission, report);
            // Circuit 0 short (a fallback, or part of it): while the compute
            // lock is busy, the call admits again after memory events.
            let short = report.prestaged == Some(false) && settings.prestage && settings.prestage_retry;
            let mut seen = start;
            let mut restaged = 0;
            let mut relocks = Vec::new();
            // Circuit 0's host copies (the GPU backend's staging ring) run on
            // a thread of their own, outside the memory lock: beside the wait
            // for a busy compute lock, or before a free one is taken.
            let (span, compute) = std::thread::scope(|scope| {
                let filling = staged[0].take().and_then(|s| spawn_fill(scope, backend, 0, inputs[0], s));
                let first = std::cell::RefCell::new(&mut staged[0]);
                let ready = || {
                    if let Some(f) = filling {
                        **first.borrow_mut() = finish_fill(f, 0);
                    }
                };
                if !short {
                    return mem.into_compute_after(ready);
                }
                // A look after each memory event since phase 1's room. Once
                // a phase 2 has ended since then (its memory is back), one
                // look, then the call blocks on the lock: a looking call
                // wins only the hand-offs that no blocked call takes. The
                // ends are the device's (a call under another lock handle
                // ends its looking too).
                mem.into_compute_restaging(ready, |relock| {
                    let now = backend.memory_events();
                    if seen == now {
                        return true;
                    }
                    seen = now;
                    let last = now.phase2_ends != start.phase2_ends;
                    let mut first = first.borrow_mut();
                    let (done, span) = relock.with(|lock| backend.restage(lock, inputs[0], n, &mut **first));
                    relocks.push(span);
                    if let Some(Restaged { added: added @ 1.., .. }) = done {
                        // The copies through the ring, outside both locks.
                        if let Some(s) = first.as_mut() {
                            if let Err(e) = backend.fill(0, inputs[0], s) {
                                tracing::debug!(error = %e, "host copies of circuit 0 staged while waiting failed: it uploads in its turn");
                                **first = None;
                                return false;
                            }
                        }
                        restaged += added;
                    }
                    look_again(done, last, inputs[0].len())
                })
            });
            if restaged > 0 {
                report.restaged = Some(restaged);
            }
            report.restage_mem = relocks;
            report.mem = Some(span);
            report.stage_detail = backend.stage_detail();
            (staged, compute)
        }
        LockMode::Single => {
            let compute = locks.compute_only();
            let admission = stage(compute.stage_lock(), report);
            (by_circuit(admission, report), compute)
        }
    };
    let mut spent = groth16::Spent::default();
    let result = phase2(backend, &compute, srs, batch, inputs, &mut staged, plans, done, checks, settings.batch_add_beside, &mut report.batch_add_beside, &mut spent);
    // Staged inputs of circuits not reached (an error) are dropped (freed, or
    // handed back to the idle pre-stage list) before the trim.
    drop(staged);
    let end = backend.end_compute(&compute);
    report.free_after = backend.free_memory();
    report.compute = Some(compute.release());
    // The plans and the tails' scalars: freed once the next call may compute.
    drop(spent);
    let out = result?;
    end?;
    Ok(out)
}

/// Phase 2 under `compute`: circuit by circuit the quotient and H-MSM (the
/// next circuit staged ahead beside it), then the G1 sums and the parts of
/// B′ in G2 placed on the device. The batch additions of every circuit run
/// beside the last circuit's H-MSM, on a second stream, where the backend
/// gives one ([`Backend::beside_h_msm`], `beside`): a thread of their own
/// waits there for the split-MSM plans if need be, so the H-MSM never does;
/// else after the H-MSMs. `ran_beside` is set where they ran beside.
#[allow(clippy::too_many_arguments)]
fn phase2<'p, B: Backend + ?Sized>(
    backend: &B,
    compute: &ComputeGuard<'_>,
    srs: &Srs,
    batch: &Batch<'_>,
    inputs: &[Abc<'_>],
    staged: &mut [Option<B::Staged>],
    plans: mpsc::Receiver<Arc<Plans<'p>>>,
    done: mpsc::Sender<usize>,
    checks: &Checks,
    beside: crate::config::Beside,
    ran_beside: &mut bool,
    spent: &mut groth16::Spent<'p>,
) -> Result<Vec<Intermediates>> {
    let n = srs.domain_size();
    let clock = backend.clock();
    let mut hs = Vec::with_capacity(inputs.len());
    // Received by the batch additions' thread where it runs (it hands them
    // on: `early_plans`), else below.
    let plans = std::sync::Mutex::new(plans);
    let mut early_plans: Option<Arc<Plans<'p>>> = None;
    let mut batched: Option<groth16::BatchParts> = None;
    let g2_batch_on_device = backend.placement().g2_batch_add == Place::Device;
    for (ci, abc) in inputs.iter().enumerate() {
        let mine = staged[ci].take();
        wait_for_checks(checks, ci + 1)?;
        let (ntt0, msm0) = (clock.get(Step::Ntt), clock.get(Step::HMsm));
        let side = SideStream(backend, if ci + 1 == inputs.len() { backend.beside_h_msm(compute, n, inputs.len(), beside) } else { None });
        let h = std::thread::scope(|scope| {
            let mut filling = None;
            let mut batching = None;
            let mut next = staged.get_mut(ci + 1);
            // Once this circuit's quotient is done (its inputs' device
            // buffers free, every copy from its host buffers complete),
            // the next circuit is staged beside its H-MSM: allocated
            // here, its copies through the staging ring made on a thread
            // of their own (`fill`) so that the H-MSM's launches do not
            // wait for them, and the pinning thread lets go of this
            // circuit and sorts the one after.
            let done = &done;
            let mut after_quotient = || {
                if let Some(slot) = next.as_deref_mut() {
                    if slot.is_none() {
                        *slot = backend.prefetch(compute, ci + 1, inputs[ci + 1], n);
                    }
                    if let Some(s) = slot.take() {
                        filling = spawn_fill(scope, backend, ci + 1, inputs[ci + 1], s);
                    }
                }
                // The last circuit: its H-MSM is bound by the device's
                // arithmetic, the batch additions over a streamed key by the
                // PCIe link; on two streams they overlap.
                if let Some(side) = side.1.as_ref() {
                    let plans = &plans;
                    let run = move || {
                        let t = Instant::now();
                        let p = plans.lock().unwrap_or_else(|p| p.into_inner()).recv().ok();
                        let plans_at = Instant::now();
                        let parts = p.as_ref().map(|p| groth16::batch_parts(side, p, g2_batch_on_device));
                        (p, parts, plans_at, plans_at - t, t.elapsed())
                    };
                    match spawn_traced(scope, "supraseal-c2-batch-add", run) {
                        Ok(t) => batching = Some(t),
                        Err(e) => tracing::debug!(error = %e, "no thread for the batch additions: they run after the H-MSM"),
                    }
                }
                let _ = done.send(ci);
            };
            let h = backend.quotient_msm(compute, *abc, n, mine, &srs.h, &mut after_quotient);
            if let Some(f) = filling {
                staged[ci + 1] = finish_fill(f, ci + 1);
            }
            if let Some(run) = batching {
                // What the batch additions add to the hold: their time past
                // the H-MSM's end, less any wait for the plans past it
                // (which the hold would have had anyway).
                let t = Instant::now();
                let (p, parts, plans_at, plans_wait, side_time) = run.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                let waited = t.elapsed();
                clock.add(Step::BatchAdd, waited.saturating_sub(plans_at.saturating_duration_since(t)));
                tracing::debug!(
                    side_ms = round1(side_time.as_secs_f64() * 1e3),
                    waited_ms = round1(waited.as_secs_f64() * 1e3),
                    plans_wait_ms = round1(plans_wait.as_secs_f64() * 1e3),
                    ok = matches!(parts, Some(Ok(_))),
                    "batch additions beside the last H-MSM (on a stream of their own, after any wait for the plans there), and the wait for them after it"
                );
                early_plans = p;
                match parts {
                    Some(Ok(parts)) => {
                        *ran_beside = true;
                        batched = Some(parts);
                    }
                    // An allocation the second stream could not make, say:
                    // the call's stream runs them again after the H-MSM
                    // (an error that persists fails them there).
                    Some(Err(e)) => tracing::warn!(error = %e, "the batch additions beside the last H-MSM failed: they run again after it"),
                    // The plans' thread failed: the error is returned below.
                    None => {}
                }
            }
            h
        });
        drop(side);
        hs.push(h?);
        tracing::debug!(
            circuit = ci,
            ntt_ms = round1((clock.get(Step::Ntt) - ntt0).as_secs_f64() * 1e3),
            h_msm_ms = round1((clock.get(Step::HMsm) - msm0).as_secs_f64() * 1e3),
            "quotient and H-MSM"
        );
    }
    drop(done);
    wait_for_checks(checks, inputs.len())?;
    let plans = match early_plans {
        Some(p) => p,
        None => {
            let t = Instant::now();
            let p = plans.into_inner().unwrap_or_else(|p| p.into_inner()).recv().map_err(|_| Error::new(crate::error::code::EFAULT, "split-MSM preparation thread failed"))?;
            tracing::debug!(wait_ms = round1(t.elapsed().as_secs_f64() * 1e3), "waited for the split-MSM plans");
            p
        }
    };
    let (g1_batched, g2_batched) = match batched {
        Some(groth16::BatchParts { g1, b_g2 }) => (Some(g1), b_g2),
        None => (None, None),
    };
    // From here on the plans, and the tails' scalars once spent, are freed
    // by the caller after the compute lock ([`groth16::Spent`]).
    spent.plans = Some(plans.clone());
    let groth16::G1Sums { sums, b_tails, b_g2_ahead, spent: tails } = groth16::g1_sums(backend.compute(), clock, srs, batch, &plans, g1_batched)?;
    spent.tails.extend(tails);
    let mut out: Vec<Intermediates> =
        hs.into_iter().zip(sums).map(|(h, (l, a, b_g1))| Intermediates { h, l, a, b_g1, b_g2: G2Projective::identity() }).collect();
    let placement = backend.placement();
    // B's tail scalars (and their copy on the device) serve the G2 tail MSM
    // where it runs here; else the CPU thread gathers its own, and the copy
    // goes now (the host's scalars with the spent ones).
    spent.tails.push(b_tails.clone());
    let (b_tails, b_ahead) = match placement.g2_msm {
        Place::Device => (Some(b_tails), b_g2_ahead),
        Place::Host => {
            drop(b_g2_ahead);
            (None, None)
        }
    };
    if placement.g2_batch_add == Place::Device {
        let sums = match g2_batched {
            Some(sums) => sums,
            None => clock.time(Step::BatchAdd, || groth16::g2_parts(backend.compute(), srs, &plans, groth16::G2Parts::BatchAddition, None, None))?,
        };
        out.iter_mut().zip(sums).for_each(|(o, b)| o.b_g2 += b);
    }
    if placement.g2_msm == Place::Device {
        let sums = clock.time(Step::Tails, || groth16::g2_parts(backend.compute(), srs, &plans, groth16::G2Parts::Msms, b_tails.as_deref(), b_ahead))?;
        out.iter_mut().zip(sums).for_each(|(o, m)| o.b_g2 += m);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{look_again, Restaged};

    /// A waiting call looks on while circuit 0 is short and no phase 2 has
    /// ended since its admission; it stops once a, b, c are staged, once
    /// nothing more can be, and after its first look past a phase-2 end,
    /// whatever that look staged.
    #[test]
    fn a_waiting_call_looks_on_only_while_short_and_before_a_phase_2_ends() {
        let r = |added, staged| Some(Restaged { added, staged });
        assert!(look_again(r(0, 0), false, 3), "nothing fits yet");
        assert!(look_again(r(2, 2), false, 3), "part of it");
        assert!(look_again(r(0, 2), false, 3));
        assert!(!look_again(r(1, 3), false, 3), "whole");
        assert!(!look_again(r(3, 3), false, 3), "whole at once");
        assert!(!look_again(None, false, 3), "nothing more can be staged");
        assert!(!look_again(r(0, 0), true, 3), "past a phase-2 end with nothing staged");
        assert!(!look_again(r(2, 2), true, 3), "past a phase-2 end, still short");
        assert!(!look_again(None, true, 3));
    }
}
