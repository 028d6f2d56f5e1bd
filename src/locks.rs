//! The per-GPU lock handle of docs/ARCHITECTURE.md §5: a memory lock (VRAM allocation and
//! upload issue) and a compute lock (kernel execution).
//!
//! Protocol: a call takes the memory lock, releases it, then takes the compute
//! lock; it never holds both and always goes memory before compute, so two
//! calls can never wait on each other in a cycle. The CPU backend follows the
//! same protocol (its phase 1 has nothing to stage), so the ordering is
//! exercised by CI, which has no GPU.
//!
//! A handle from `create_gpu_mutex` is shared by any number of threads. NULL
//! selects a process-wide default handle per device, created on first use and
//! never freed.

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

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
    /// Takes the memory lock (phase 1).
    pub fn mem(&self) -> MutexGuard<'_, ()> {
        lock(&self.mem)
    }

    /// Takes the compute lock (phase 2).
    pub fn compute(&self) -> MutexGuard<'_, ()> {
        lock(&self.compute)
    }

    /// Takes the memory lock and measures the wait.
    pub fn mem_timed(&self) -> Held<'_> {
        Held::take(&self.mem)
    }

    /// Takes the compute lock and measures the wait.
    pub fn compute_timed(&self) -> Held<'_> {
        Held::take(&self.compute)
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

/// A held lock that knows how long it was waited for and since when it is held.
pub struct Held<'a> {
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

    /// Releases the lock and returns the span it covered.
    pub fn release(self) -> Span {
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
