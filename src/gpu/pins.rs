//! Page-locking of callers' a/b/c buffers, shared by every call of the
//! process: each host range is registered with the driver
//! (`cuMemHostRegister`) once, however many circuits or concurrent calls
//! pass it, and unregistered when the last of them lets go.
//!
//! A range that the driver reports as already registered by someone else
//! (the caller's `cudaHostAlloc` pool, as Curio's cuzk uses, or its own
//! `cuMemHostRegister`) is used as it is: copies from it run at DMA speed and
//! it is never unregistered here. A refused registration (say
//! `RLIMIT_MEMLOCK`) leaves only that range pageable: its copies are
//! synchronous, nothing else changes.
//!
//! [`Registry`] is the bookkeeping, generic over the registration value so
//! that it is tested without a device; [`PinLease`] is one circuit buffer's
//! hold on the process-wide registry of [`HostRegistration`]s.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use super::device::{Gpu, HostRegistration, Registration};

/// How a range stands once acquired.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pinned<E> {
    /// Registered now by this acquisition.
    Registered,
    /// Inside a range this registry already holds (another circuit of the
    /// call, or another call in flight): shared, counted.
    Shared,
    /// Registered outside this registry (the driver said so): used as is.
    Outside,
    /// Overlaps ranges this registry holds without lying inside one: those
    /// are kept alive for the lease, the rest of the range stays pageable.
    Partly,
    /// The driver refused the registration: the range stays pageable.
    Refused(E),
}

impl<E> Pinned<E> {
    /// Whether asynchronous copies from the whole range run from page-locked memory.
    pub fn is_pinned(&self) -> bool {
        matches!(self, Pinned::Registered | Pinned::Shared | Pinned::Outside)
    }
}

/// Why a registration did not happen.
pub enum RegisterError<E> {
    /// The range (or part of it) is already registered outside this registry.
    AlreadyRegistered,
    /// Any other refusal.
    Refused(E),
}

struct Entry<R> {
    end: usize,
    refs: usize,
    /// `None` only while being dropped.
    reg: Option<R>,
}

/// Disjoint registered ranges by start address, with reference counts.
pub struct Registry<R> {
    map: Mutex<BTreeMap<usize, Entry<R>>>,
}

/// The entries one acquisition holds a reference on (by start address).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Lease {
    held: Vec<usize>,
}

impl<R> Default for Registry<R> {
    fn default() -> Self {
        Registry { map: Mutex::new(BTreeMap::new()) }
    }
}

impl<R> Registry<R> {
    /// A registry with nothing registered.
    pub const fn new() -> Self {
        Registry { map: Mutex::new(BTreeMap::new()) }
    }

    /// Acquires `start..start + len` (`len` > 0): a reference on the held
    /// ranges it overlaps, or a new registration made by `register` when it
    /// overlaps none. `register` runs under the registry's lock, so two
    /// callers of one range share one registration.
    pub fn acquire<E>(&self, start: usize, len: usize, register: impl FnOnce() -> Result<R, RegisterError<E>>) -> (Lease, Pinned<E>) {
        let end = start + len;
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        // Entries are disjoint and sorted by start, so their ends are sorted too.
        let overlapping: Vec<usize> = map.range(..end).rev().take_while(|(_, e)| e.end > start).map(|(&s, _)| s).collect();
        if !overlapping.is_empty() {
            let inside = overlapping.len() == 1 && overlapping[0] <= start && map[&overlapping[0]].end >= end;
            for s in &overlapping {
                map.get_mut(s).expect("listed above").refs += 1;
            }
            return (Lease { held: overlapping }, if inside { Pinned::Shared } else { Pinned::Partly });
        }
        match register() {
            Ok(reg) => {
                map.insert(start, Entry { end, refs: 1, reg: Some(reg) });
                (Lease { held: vec![start] }, Pinned::Registered)
            }
            Err(RegisterError::AlreadyRegistered) => (Lease::default(), Pinned::Outside),
            Err(RegisterError::Refused(e)) => (Lease::default(), Pinned::Refused(e)),
        }
    }

    /// Lets go of `lease`; returns the registrations whose last reference it
    /// held, for the caller to drop (unregister) outside the lock.
    pub fn release(&self, lease: Lease) -> Vec<R> {
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = Vec::new();
        for s in lease.held {
            let Some(e) = map.get_mut(&s) else { continue };
            e.refs -= 1;
            if e.refs == 0 {
                if let Some(r) = map.remove(&s).and_then(|mut e| e.reg.take()) {
                    out.push(r);
                }
            }
        }
        out
    }

    /// Number of ranges held.
    #[cfg(any(test, feature = "tools"))]
    pub fn len(&self) -> usize {
        self.map.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether no range is held.
    #[cfg(any(test, feature = "tools"))]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The process's registrations of callers' a/b/c buffers.
static INPUTS: Registry<HostRegistration> = Registry::new();

/// One circuit buffer's hold on a page-locked range; dropping it unregisters
/// the range when no other holder is left. The copies that read the range
/// must be complete by then (the owner synchronises first).
pub struct PinLease {
    lease: Option<Lease>,
    /// How the range stood when acquired.
    pub state: Pinned<cudarc::driver::sys::CUresult>,
}

/// Page-locks `bytes` bytes at `ptr` through the process-wide registry
/// (portable registration, so every device's copies see it page-locked).
///
/// # Safety
/// `ptr..ptr + bytes` is live host memory that outlives the returned lease.
pub unsafe fn pin(gpu: &Arc<Gpu>, ptr: *const c_void, bytes: usize) -> PinLease {
    let (lease, state) = INPUTS.acquire(ptr as usize, bytes.max(1), || {
        // SAFETY: the caller's contract; the registration is dropped when
        // the last lease on it is released, which the caller orders before
        // the memory goes.
        match unsafe { gpu.register_host(ptr, bytes, Registration::Input) } {
            Ok(r) => Ok(r),
            // Already registered by its owner (`CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED`),
            // or from the owner's `cuMemHostAlloc` (which may be refused with
            // another code): used as it is where the driver says both ends
            // of the range are page-locked.
            Err(_) if gpu.is_page_locked(ptr, bytes) => Err(RegisterError::AlreadyRegistered),
            Err(e) => Err(RegisterError::Refused(e)),
        }
    });
    PinLease { lease: Some(lease), state }
}

impl Drop for PinLease {
    fn drop(&mut self) {
        if let Some(lease) = self.lease.take() {
            // Unregistered here, outside the registry's lock.
            drop(INPUTS.release(lease));
        }
    }
}

/// Number of callers' ranges page-locked by this library now (tests).
#[cfg(any(test, feature = "tools"))]
pub fn registered_ranges() -> usize {
    INPUTS.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    type Reg = Registry<&'static str>;

    fn ok<'a>(
        tag: &'static str,
        calls: &'a Cell<usize>,
    ) -> impl FnOnce() -> Result<&'static str, RegisterError<i32>> + 'a {
        move || {
            calls.set(calls.get() + 1);
            Ok(tag)
        }
    }

    #[test]
    fn one_range_passed_twice_is_registered_once_and_released_by_its_last_holder() {
        let reg = Reg::new();
        let calls = Cell::new(0);
        let (a, sa) = reg.acquire(1000, 100, ok("r", &calls));
        let (b, sb) = reg.acquire(1000, 100, ok("r", &calls));
        assert_eq!((sa, sb), (Pinned::Registered, Pinned::Shared));
        assert_eq!(calls.get(), 1, "the second holder shares the registration");
        assert!(reg.release(a).is_empty(), "another holder is left");
        assert_eq!(reg.release(b), vec!["r"], "the last holder unregisters");
        assert!(reg.is_empty());
    }

    #[test]
    fn a_range_inside_a_held_one_shares_it_and_a_partial_overlap_is_not_pinned() {
        let reg = Reg::new();
        let calls = Cell::new(0);
        let (big, _) = reg.acquire(1000, 1000, ok("big", &calls));
        let (inner, s) = reg.acquire(1200, 10, ok("x", &calls));
        assert_eq!(s, Pinned::Shared);
        let (over, s) = reg.acquire(1900, 200, ok("x", &calls));
        assert_eq!(s, Pinned::Partly);
        assert!(!s.is_pinned());
        assert_eq!(calls.get(), 1);
        // Adjacent but not overlapping: a registration of its own.
        let (next, s) = reg.acquire(2000 + 500, 10, ok("next", &calls));
        assert_eq!(s, Pinned::Registered);
        assert!(reg.release(big).is_empty());
        assert!(reg.release(inner).is_empty());
        assert_eq!(reg.release(over), vec!["big"], "the partial overlap kept the range alive");
        assert_eq!(reg.release(next), vec!["next"]);
        assert!(reg.is_empty());
    }

    #[test]
    fn ranges_registered_elsewhere_are_used_as_they_are_and_refusals_stay_local() {
        let reg = Reg::new();
        let (outside, s) = reg.acquire(0, 64, || Err::<&str, _>(RegisterError::<i32>::AlreadyRegistered));
        assert_eq!(s, Pinned::Outside);
        assert!(s.is_pinned());
        let (refused, s) = reg.acquire(100, 64, || Err::<&str, _>(RegisterError::Refused(12)));
        assert_eq!(s, Pinned::Refused(12));
        assert!(!s.is_pinned());
        let calls = Cell::new(0);
        let (fine, s) = reg.acquire(200, 64, ok("fine", &calls));
        assert_eq!(s, Pinned::Registered, "a refusal of one range does not affect the next");
        assert_eq!(reg.len(), 1, "nothing is held for ranges registered elsewhere or refused");
        assert!(reg.release(outside).is_empty() && reg.release(refused).is_empty());
        assert_eq!(reg.release(fine), vec!["fine"]);
    }

    #[test]
    fn concurrent_holders_of_one_range_share_one_registration() {
        let reg = Reg::new();
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let leases: Vec<Lease> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        reg.acquire(4096, 4096, || {
                            calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                            Ok::<_, RegisterError<i32>>("one")
                        })
                        .0
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
        let dropped: Vec<_> = leases.into_iter().flat_map(|l| reg.release(l)).collect();
        assert_eq!(dropped, vec!["one"]);
    }
}
