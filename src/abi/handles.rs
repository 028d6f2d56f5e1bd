//! The opaque handle values the ABI hands out for lock handles
//! (`create_gpu_mutex`) and pending split-form proofs
//! (`generate_groth16_proofs_start_c`).
//!
//! A handle is an id, not an address: bits 48–63 hold a tag naming its kind,
//! bits 0–47 a counter that only grows, so a value is never handed out twice
//! in one process. The library never dereferences a handle; it looks the id
//! up in its registry. Hence every misuse is detected and answered with
//! `EINVAL` (or ignored with a log line, for the `void` functions): a stale
//! handle (finalized, destroyed), a double destroy, a value that was never
//! returned (a foreign heap or stack object, `(void*)0x10`), and a handle of
//! the other kind. A stale handle can never reach another job's data, which
//! an address can once the allocator reuses it.
//!
//! The tag makes each value a non-canonical x86-64 address, so a caller that
//! dereferences one by mistake faults at once instead of reading memory.
//! Ids are not secrets: a value a caller forges that equals a live handle is
//! that handle (as a forged pointer would be).

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};
use crate::locks::LockHandle;
use crate::pipeline::Pending;

/// The kinds of handle, each with its own tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Lock,
    Pending,
}

impl Kind {
    const fn tag(self) -> u64 {
        match self {
            Kind::Lock => 0x5C2A,
            Kind::Pending => 0x5C2B,
        }
    }

    const fn noun(self) -> &'static str {
        match self {
            Kind::Lock => "lock handle",
            Kind::Pending => "pending proof",
        }
    }

    const fn source(self) -> &'static str {
        match self {
            Kind::Lock => "create_gpu_mutex",
            Kind::Pending => "generate_groth16_proofs_start_c",
        }
    }

    const fn ended(self) -> &'static str {
        match self {
            Kind::Lock => "destroyed",
            Kind::Pending => "finalized or destroyed",
        }
    }

    fn of(value: u64) -> Option<Kind> {
        [Kind::Lock, Kind::Pending].into_iter().find(|k| value >> 48 == k.tag())
    }
}

const COUNTER_BITS: u32 = 48;
const COUNTER_MASK: u64 = (1 << COUNTER_BITS) - 1;

/// The live handles of one kind.
struct Registry<T> {
    kind: Kind,
    inner: Mutex<Table<T>>,
}

struct Table<T> {
    /// The counter of the next id; ids below it were handed out.
    next: u64,
    live: Option<HashMap<u64, T>>,
}

impl<T> Registry<T> {
    const fn new(kind: Kind) -> Self {
        Registry { kind, inner: Mutex::new(Table { next: 1, live: None }) }
    }

    fn table(&self) -> std::sync::MutexGuard<'_, Table<T>> {
        // The table is consistent after every statement; a panic elsewhere
        // while it is held leaves nothing half-done.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records `value` under a fresh id and returns the handle.
    fn insert(&self, value: T) -> Result<*mut c_void> {
        let mut t = self.table();
        if t.next > COUNTER_MASK {
            return Err(Error::new(
                crate::error::code::ENOMEM,
                format!("{}: the process has used all 2^48 {} ids", self.kind.source(), self.kind.noun()),
            ));
        }
        let id = self.kind.tag() << COUNTER_BITS | t.next;
        let map = t.live.get_or_insert_with(HashMap::new);
        map.try_reserve(1).map_err(|_| Error::new(crate::error::code::ENOMEM, "handle table: out of host memory"))?;
        map.insert(id, value);
        t.next += 1;
        Ok(id as usize as *mut c_void)
    }

    /// Why `handle` is not live (NULL, stale, another kind, never issued).
    fn why_not(&self, t: &Table<T>, name: &str, handle: *mut c_void) -> Error {
        let (k, v) = (self.kind, handle as usize as u64);
        if handle.is_null() {
            return Error::invalid(format!("{name} is NULL, not a live {}", k.noun()));
        }
        let why = match Kind::of(v) {
            Some(other) if other == k && (1..t.next).contains(&(v & COUNTER_MASK)) => {
                format!("it is stale (already {})", k.ended())
            }
            Some(other) if other != k => format!("it is a {} from {}", other.noun(), other.source()),
            _ => format!("it was never returned by {}", k.source()),
        };
        Error::invalid(format!("{name} = {handle:p} is not a live {}: {why}", k.noun()))
    }

    /// Removes and returns the value behind a live handle.
    fn take(&self, name: &str, handle: *mut c_void) -> Result<T> {
        let mut t = self.table();
        let found = t.live.as_mut().and_then(|m| m.remove(&(handle as usize as u64)));
        found.ok_or_else(|| self.why_not(&t, name, handle))
    }

    /// Runs `f` on the value behind a live handle.
    fn with<R>(&self, name: &str, handle: *mut c_void, f: impl FnOnce(&T) -> R) -> Result<R> {
        let t = self.table();
        match t.live.as_ref().and_then(|m| m.get(&(handle as usize as u64))) {
            Some(v) => Ok(f(v)),
            None => Err(self.why_not(&t, name, handle)),
        }
    }
}

static LOCKS: Registry<Arc<LockHandle>> = Registry::new(Kind::Lock);
static PENDING: Registry<Pending> = Registry::new(Kind::Pending);

/// A new lock handle (both locks free).
pub fn new_lock() -> Result<*mut c_void> {
    LOCKS.insert(Arc::new(LockHandle::new()))
}

/// The lock handle behind `handle`. A call keeps the `Arc` for its duration,
/// so a `destroy_gpu_mutex` during the call only ends the handle's
/// registration; the locks live until the last call using them returns.
pub fn lock(handle: *mut c_void) -> Result<Arc<LockHandle>> {
    LOCKS.with("gpu_mtx", handle, Arc::clone)
}

/// Ends a lock handle. `Err` (with the reason) when it is not live.
pub fn destroy_lock(handle: *mut c_void) -> Result<()> {
    LOCKS.take("handle", handle).map(drop)
}

/// Records a started split-form proof and returns its handle.
pub fn register_pending(p: Pending) -> Result<*mut c_void> {
    PENDING.insert(p)
}

/// Takes the pending proof behind a live handle (finalize and destroy).
pub fn take_pending(handle: *mut c_void) -> Result<Pending> {
    PENDING.take("pending", handle)
}

/// The circuit count of a live pending proof (the Rust API checks the length
/// of the caller's `proofs` slice against it).
pub fn pending_circuits(handle: *mut c_void) -> Result<usize> {
    PENDING.with("pending", handle, Pending::len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_destroyed_lock_handle_is_stale_and_its_id_is_not_reused() {
        let a = new_lock().unwrap();
        destroy_lock(a).unwrap();
        let b = new_lock().unwrap();
        assert_ne!(a, b, "ids only grow");
        let e = destroy_lock(a).unwrap_err();
        assert!(e.message.contains("is stale"), "{}", e.message);
        assert!(lock(b).is_ok(), "the new handle is untouched");
        destroy_lock(b).unwrap();
    }

    #[test]
    fn foreign_values_and_the_other_kind_are_named_in_the_error() {
        let l = new_lock().unwrap();
        let e = take_pending(l).err().unwrap();
        assert!(e.message.contains("is a lock handle"), "{}", e.message);
        let never = (Kind::Lock.tag() << COUNTER_BITS) as usize as *mut c_void;
        assert!(lock(never).unwrap_err().message.contains("was never returned"), "counter 0 is never issued");
        let e = lock(0x10 as *mut c_void).unwrap_err();
        assert!(e.message.contains("was never returned"), "{}", e.message);
        let mut on_stack = 0u64;
        let e = lock(&mut on_stack as *mut u64 as *mut c_void).unwrap_err();
        assert!(e.message.contains("was never returned"), "{}", e.message);
        assert!(lock(std::ptr::null_mut()).unwrap_err().message.contains("is NULL"));
        destroy_lock(l).unwrap();
    }

    #[test]
    fn handle_values_are_non_canonical_addresses() {
        let l = new_lock().unwrap() as usize as u64;
        // x86-64 and aarch64 user addresses have the top 16 bits clear.
        assert_ne!(l >> 48, 0);
        assert_ne!(l >> 48, 0xFFFF);
        destroy_lock(l as usize as *mut c_void).unwrap();
    }
}
