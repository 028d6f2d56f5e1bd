//! The lock protocol of docs/ARCHITECTURE.md §5, as types: a per-GPU memory
//! lock (VRAM admission and upload issue) and compute lock (kernels), the
//! mode that says which of them a call takes, and the gate that keeps
//! host-memory registrations out of phase 1.
//!
//! Protocol: a call takes the memory lock, releases it, then takes the
//! compute lock; it never holds both and always goes memory before compute,
//! so two calls can never wait on each other in a cycle. The types enforce
//! it: the only way from a [`MemoryGuard`] to a [`ComputeGuard`] is
//! [`MemoryGuard::into_compute`] (or [`MemoryGuard::into_compute_after`], or
//! [`MemoryGuard::into_compute_restaging`], whose looks take the memory lock
//! again only inside [`Relock::with`], with neither lock held), which
//! releases the memory lock (and the registration gate) before it asks for
//! the compute lock. The CPU backend
//! follows the same protocol (its phase 1 has nothing to stage), so the
//! ordering is exercised by CI, which has no GPU.
//!
//! A handle from `create_gpu_mutex` is shared by any number of threads. NULL
//! selects a process-wide default handle per device, created on first use and
//! never freed.

use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

/// How the locks are taken (`SUPRASEAL_C2_LOCKS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockMode {
    /// Memory lock for phase 1, then compute lock for phase 2 (the design).
    Two,
    /// The compute lock around phases 1 and 2 (the single-lock design, for comparison).
    Single,
}

/// The two mutexes guarding one GPU (or the CPU backend's compute).
#[derive(Debug, Default)]
pub struct GpuLocks {
    mem: Mutex<()>,
    compute: Mutex<()>,
}

/// What a lock handle from `create_gpu_mutex` names (through its id in
/// [`crate::abi::handles`]), and what a NULL `gpu_mtx` selects per device.
#[derive(Debug, Default)]
pub struct LockHandle {
    pub locks: GpuLocks,
}

impl LockHandle {
    /// A fresh handle (both locks free).
    pub fn new() -> Self {
        LockHandle::default()
    }
}

fn lock(m: &Mutex<()>) -> MutexGuard<'_, ()> {
    // A panic while holding the lock poisons it; the guarded state is `()`, so
    // recovering is always safe.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl GpuLocks {
    /// Phase 1 in two-lock mode: waits for `gate` (host registrations in
    /// flight on this device, if the backend has any), then takes the memory
    /// lock. The gate is held with the lock and released with it.
    pub fn memory<'a>(&'a self, gate: Option<&'a RegistrationGate>) -> MemoryGuard<'a> {
        let admission = gate.map(RegistrationGate::admission);
        MemoryGuard { held: Held::take(&self.mem), locks: self, gate, _admission: admission }
    }

    /// Phases 1 and 2 in single-lock mode: the compute lock only.
    pub fn compute_only(&self) -> ComputeGuard<'_> {
        ComputeGuard(Held::take(&self.compute))
    }

    /// Whether the memory lock is free right now (tests and diagnostics).
    pub fn mem_is_free(&self) -> bool {
        self.mem.try_lock().is_ok()
    }

    /// Whether the compute lock is free right now (tests and diagnostics).
    pub fn compute_is_free(&self) -> bool {
        self.compute.try_lock().is_ok()
    }
}

/// The memory lock, held (phase 1). Consumed by [`MemoryGuard::into_compute`].
pub struct MemoryGuard<'a> {
    held: Held<'a>,
    locks: &'a GpuLocks,
    gate: Option<&'a RegistrationGate>,
    _admission: Option<RwLockReadGuard<'a, ()>>,
}

/// The memory lock of a call between its two locks, to be taken again
/// while it waits for a busy compute lock
/// ([`MemoryGuard::into_compute_restaging`]).
pub struct Relock<'a> {
    locks: &'a GpuLocks,
    gate: Option<&'a RegistrationGate>,
}

impl Relock<'_> {
    /// Runs `f` under the memory lock and the registration gate, taken
    /// again for it and released before this returns; returns what `f`
    /// returned and the hold's span.
    pub fn with<R>(&self, f: impl FnOnce(StageLock<'_>) -> R) -> (R, Span) {
        let guard = self.locks.memory(self.gate);
        let r = f(guard.stage_lock());
        (r, guard.release())
    }
}

/// How often a call that waits for a busy compute lock while it may still
/// stage more ([`MemoryGuard::into_compute_restaging`]) looks again: short
/// beside a porep-32g hold (~1.5 s), and each look is an atomic read unless
/// the device's memory changed.
pub const RESTAGE_POLL: Duration = Duration::from_millis(2);

impl<'a> MemoryGuard<'a> {
    /// Ends phase 1: releases the memory lock and the registration gate, then
    /// waits for the compute lock of the same GPU. Returns the memory lock's
    /// span and the compute guard.
    pub fn into_compute(self) -> (Span, ComputeGuard<'a>) {
        self.into_compute_after(|| {})
    }

    /// [`MemoryGuard::into_compute`], with `ready` (the wait for work the
    /// call needs done before it computes, such as its first circuit's host
    /// copies) run between the two locks when the compute lock is free at
    /// that moment, else once it is got: a free lock is not held idle while
    /// the call waits for its own host work (another call may take it
    /// meanwhile), and a busy one is waited for beside that work.
    pub fn into_compute_after(self, ready: impl FnOnce()) -> (Span, ComputeGuard<'a>) {
        let compute = &self.locks.compute;
        self.into_compute_ordered(|| compute.try_lock().is_ok(), ready)
    }

    /// [`MemoryGuard::into_compute_after`] for a call whose phase 1 staged
    /// less than it needs: where the compute lock is busy, `ready` runs at
    /// once, then the call looks: `restage` runs with a [`Relock`], through
    /// which it may take the memory lock (and the registration gate) again
    /// for another admission and its allocations (host copies after it),
    /// and says whether to look again; between looks ([`RESTAGE_POLL`]) the
    /// call takes the compute lock if it is free. Once `restage` returns
    /// false, the call waits for the compute lock as any other. Neither lock
    /// is held while `restage` runs, and a memory guard cannot leave
    /// [`Relock::with`], so the protocol's order holds: memory, then compute,
    /// never both.
    pub fn into_compute_restaging(self, ready: impl FnOnce(), mut restage: impl FnMut(&Relock<'a>) -> bool) -> (Span, ComputeGuard<'a>) {
        let relock = Relock { locks: self.locks, gate: self.gate };
        let compute = &self.locks.compute;
        let span = self.release();
        if let Ok(guard) = compute.try_lock() {
            // Free: as into_compute_after, the call's own host work first,
            // the lock not held idle meanwhile.
            drop(guard);
            ready();
            return (span, ComputeGuard(Held::take(compute)));
        }
        let requested = Instant::now();
        ready();
        let guard = loop {
            match compute.try_lock() {
                Ok(g) => break g,
                Err(std::sync::TryLockError::Poisoned(p)) => break p.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) if restage(&relock) => std::thread::sleep(RESTAGE_POLL),
                Err(std::sync::TryLockError::WouldBlock) => break lock(compute),
            }
        };
        let acquired = Instant::now();
        (span, ComputeGuard(Held { _guard: guard, waited: acquired - requested, acquired }))
    }

    /// Ends a hold: releases the memory lock and the gate, and returns the
    /// span (phase 1's before the compute lock is asked for, or a look's in
    /// [`Relock::with`]).
    fn release(self) -> Span {
        let MemoryGuard { held, _admission, .. } = self;
        let span = held.release();
        drop(_admission);
        span
    }

    /// Releases the memory lock and the gate, then runs `ready` before
    /// taking the compute lock if `first()` says so, else after.
    fn into_compute_ordered(self, first: impl FnOnce() -> bool, ready: impl FnOnce()) -> (Span, ComputeGuard<'a>) {
        let compute = &self.locks.compute;
        let span = self.release();
        if first() {
            ready();
            (span, ComputeGuard(Held::take(compute)))
        } else {
            let guard = ComputeGuard(Held::take(compute));
            ready();
            (span, guard)
        }
    }
}

/// The compute lock, held (phase 2, or phases 1 and 2 in single-lock mode).
pub struct ComputeGuard<'a>(Held<'a>);

impl ComputeGuard<'_> {
    /// Releases the compute lock and returns the span it covered.
    pub fn release(self) -> Span {
        self.0.release()
    }
}

/// Evidence that the caller holds the lock a call stages under (admits and
/// allocates device memory, issues uploads): the memory lock in two-lock
/// mode ([`MemoryGuard::stage_lock`]), the compute lock in single-lock mode
/// ([`ComputeGuard::stage_lock`]). Borrowed from the held guard, so that a
/// staging step cannot run without one.
#[derive(Clone, Copy)]
pub struct StageLock<'g>(std::marker::PhantomData<&'g ()>);

impl MemoryGuard<'_> {
    /// Phase 1 under this guard.
    pub fn stage_lock(&self) -> StageLock<'_> {
        StageLock(std::marker::PhantomData)
    }
}

impl ComputeGuard<'_> {
    /// Phase 1 under this guard (single-lock mode: the compute lock is the
    /// only lock).
    pub fn stage_lock(&self) -> StageLock<'_> {
        StageLock(std::marker::PhantomData)
    }
}

/// Keeps host-memory registrations (`cuMemHostRegister`/`Unregister`, which
/// wait for the device and stall allocations behind them) out of phase 1: a
/// registration holds [`RegistrationGate::register`]; phase 1 holds the
/// gate's shared side for the memory lock's hold ([`GpuLocks::memory`]).
#[derive(Debug, Default)]
pub struct RegistrationGate(RwLock<()>);

impl RegistrationGate {
    /// Held around one registration or unregistration.
    pub fn register(&self) -> RwLockWriteGuard<'_, ()> {
        self.0.write().unwrap_or_else(|p| p.into_inner())
    }

    fn admission(&self) -> RwLockReadGuard<'_, ()> {
        self.0.read().unwrap_or_else(|p| p.into_inner())
    }
}

/// A held lock that knows how long it was waited for and since when it is held.
struct Held<'a> {
    _guard: MutexGuard<'a, ()>,
    waited: Duration,
    acquired: Instant,
}

/// One completed hold of a lock: when it was asked for, got and given back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// When the lock was requested.
    pub requested: Instant,
    /// When it was acquired (`requested` + wait).
    pub acquired: Instant,
    /// When it was released.
    pub released: Instant,
}

impl Span {
    /// Time spent waiting for the lock.
    pub fn wait(&self) -> Duration {
        self.acquired - self.requested
    }
    /// Time the lock was held.
    pub fn hold(&self) -> Duration {
        self.released - self.acquired
    }
}

impl<'a> Held<'a> {
    fn take(m: &'a Mutex<()>) -> Self {
        let requested = Instant::now();
        let guard = lock(m);
        let acquired = Instant::now();
        Held { _guard: guard, waited: acquired - requested, acquired }
    }

    fn release(self) -> Span {
        let released = Instant::now();
        let span = Span { requested: self.acquired - self.waited, acquired: self.acquired, released };
        drop(self);
        span
    }
}

static DEFAULTS: Mutex<Vec<&'static LockHandle>> = Mutex::new(Vec::new());

/// The process-wide default handle of `device` (what a NULL `gpu_mtx` means).
pub fn default_handle(device: usize) -> &'static LockHandle {
    let mut v = DEFAULTS.lock().unwrap_or_else(|p| p.into_inner());
    while v.len() <= device {
        v.push(Box::leak(Box::new(LockHandle::new())));
    }
    v[device]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_memory_lock_is_free_before_the_compute_lock_is_asked_for() {
        let locks = GpuLocks::default();
        let gate = RegistrationGate::default();
        let mem = locks.memory(Some(&gate));
        assert!(!locks.mem_is_free() && locks.compute_is_free());
        assert!(gate.0.try_write().is_err(), "a registration waits while phase 1 runs");
        let (_, compute) = mem.into_compute();
        assert!(locks.mem_is_free() && !locks.compute_is_free(), "never both");
        assert!(gate.0.try_write().is_ok(), "the gate opens with the memory lock");
        compute.release();
        assert!(locks.compute_is_free());
    }

    #[test]
    fn work_before_computing_runs_outside_a_free_compute_lock_and_inside_a_busy_one() {
        let locks = GpuLocks::default();
        // Free: the work runs with neither lock held, then the lock is taken.
        let mut seen = None;
        let (_, compute) = locks.memory(None).into_compute_after(|| seen = Some((locks.mem_is_free(), locks.compute_is_free())));
        assert_eq!(seen, Some((true, true)), "neither lock held during the work");
        assert!(!locks.compute_is_free());
        drop(compute);
        // Busy (decided so here: which branch a real call takes depends on
        // the other calls): the lock is taken first, and the work runs with
        // it held.
        let mut seen = None;
        let (_, compute) = locks.memory(None).into_compute_ordered(|| false, || seen = Some((locks.mem_is_free(), locks.compute_is_free())));
        assert_eq!(seen, Some((true, false)), "the memory lock released, the compute lock held during the work");
        drop(compute);
        assert!(locks.mem_is_free() && locks.compute_is_free());
    }

    /// While another call computes, a call that may stage more polls: it
    /// holds neither lock between looks, takes the memory lock (and the
    /// gate) again only through `restage`, never beside the compute lock;
    /// once `restage` says there is nothing more, it waits for the compute
    /// lock as any other, and its wait counts from the first look.
    #[test]
    fn a_waiting_call_restages_under_the_memory_lock_only() {
        let locks = GpuLocks::default();
        let gate = RegistrationGate::default();
        let (_, computing) = locks.memory(None).into_compute();
        let t0 = Instant::now();
        std::thread::scope(|scope| {
            let (locks, gate) = (&locks, &gate);
            let waiter = scope.spawn(move || {
                let mut looks = Vec::new();
                let (mem_span, compute) = locks.memory(Some(gate)).into_compute_restaging(
                    || assert!(locks.mem_is_free() && gate.0.try_write().is_ok(), "ready runs with neither the lock nor the gate held"),
                    |relock| {
                        assert!(locks.mem_is_free(), "no memory lock held between looks");
                        relock.with(|_| looks.push((locks.mem_is_free(), gate.0.try_write().is_err(), locks.compute_is_free())));
                        assert!(locks.mem_is_free(), "released by with");
                        // Three looks, then nothing more to stage.
                        looks.len() < 3
                    },
                );
                (mem_span, compute.release(), looks)
            });
            std::thread::sleep(Duration::from_millis(100));
            drop(computing);
            let (mem_span, compute_span, looks) = waiter.join().unwrap();
            assert_eq!(looks, vec![(false, true, false); 3], "each look under the memory lock and the gate, the compute lock busy");
            assert!(mem_span.released <= compute_span.requested, "memory, then compute");
            assert!(compute_span.acquired >= t0 + Duration::from_millis(100) && compute_span.wait() >= Duration::from_millis(90), "{compute_span:?}");
        });
        assert!(locks.mem_is_free() && locks.compute_is_free());
        // A free compute lock: no look at all.
        let (_, compute) = locks.memory(None).into_compute_restaging(|| {}, |_| panic!("looked while the compute lock was free"));
        drop(compute);
    }

    #[test]
    fn a_second_call_stages_while_the_first_computes() {
        let locks = GpuLocks::default();
        let (_, first) = locks.memory(None).into_compute();
        let second = locks.memory(None);
        assert!(!locks.mem_is_free() && !locks.compute_is_free(), "one call per lock");
        drop(first);
        let (_, second) = second.into_compute();
        drop(second);
        assert!(locks.mem_is_free() && locks.compute_is_free());
    }
}
