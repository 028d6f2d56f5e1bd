//! The canonical-scalar checks that validation leaves to the pipeline
//! ([`crate::assignment::validate_deferring`]): circuits 1.. of an N-circuit
//! call, 16 GiB of scalars each at porep-32g, scanned on a thread of their
//! own beside phases 0–2 instead of before phase 0.
//!
//! No arithmetic reads a circuit before its check passed: phase 2 waits for
//! circuit i's check before its quotient, and for every check before the
//! split-MSM sums and the G2 MSMs. The split-MSM plans (`Plans::prepare`,
//! started at once on the CPU thread) do read every circuit's aux values
//! beforehand, but only to sort them into 0, 1 and other; a failed check
//! throws the plans away.
//! A circuit computes ~2.8 s at porep-32g and a check takes ~0.5 s, so on a
//! well-formed call these waits end at once. The first failure ends the
//! scan; every waiter then gets its `EINVAL`, the message naming the scalar
//! as [`crate::assignment::validate`] would have.

use std::sync::{Condvar, Mutex};

use crate::assignment::Circuit;
use crate::error::{Error, Result};

/// Progress of the checks of one group of circuits (positions in the group).
pub(super) struct Checks {
    state: Mutex<State>,
    changed: Condvar,
}

struct State {
    /// Circuits `0..done` are checked (or needed no check).
    done: usize,
    failed: Option<Error>,
    /// Phase 2 ended (an error): the scan stops at the next circuit.
    cancelled: bool,
}

impl Checks {
    /// The checks of `circuits`, those validation already checked counted
    /// as done up to the first that it left out.
    pub fn new(circuits: &[Circuit<'_>]) -> Self {
        let done = circuits.iter().take_while(|c| c.scalars_checked).count();
        Checks { state: Mutex::new(State { done, failed: None, cancelled: false }), changed: Condvar::new() }
    }

    /// Whether any circuit of `circuits` was left unchecked by validation
    /// (else no thread is needed and every wait returns at once).
    pub fn needed(circuits: &[Circuit<'_>]) -> bool {
        circuits.iter().any(|c| !c.scalars_checked)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic elsewhere cannot leave `State` inconsistent (plain fields).
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Checks `circuits` in order (the check pool's threads for each scan,
    /// [`crate::threads::in_check_pool`]),
    /// publishing progress after each; stops at the first failure or when
    /// cancelled.
    pub fn run(&self, circuits: &[Circuit<'_>]) {
        let from = self.lock().done;
        for (pos, c) in circuits.iter().enumerate().skip(from) {
            if self.lock().cancelled {
                return;
            }
            // A panic must not leave the waiters waiting: it becomes the failure.
            let checked = if c.scalars_checked {
                Ok(())
            } else {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crate::threads::in_check_pool(|| c.check_scalars())))
                    .unwrap_or_else(|_| Err(Error::new(crate::error::code::EFAULT, format!("the scalar check of provers[{}] panicked", c.index))))
            };
            let mut st = self.lock();
            match checked {
                Ok(()) => st.done = pos + 1,
                Err(e) => st.failed = Some(e),
            }
            self.changed.notify_all();
            if st.failed.is_some() {
                return;
            }
        }
    }

    /// Waits until circuits `0..upto` are checked; the first failure's error
    /// if a check failed (whichever circuit it was), or an error if the scan
    /// was stopped before reaching them.
    pub fn wait(&self, upto: usize) -> Result<()> {
        let mut st = self.lock();
        loop {
            if let Some(e) = &st.failed {
                return Err(e.clone());
            }
            if st.done >= upto {
                return Ok(());
            }
            if st.cancelled {
                return Err(Error::new(
                    crate::error::code::EFAULT,
                    format!("the call ended before the scalars of circuit {} were checked", st.done),
                ));
            }
            st = self.changed.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Stops the scan (phase 2 is over) and returns the failure found, if any.
    pub fn finish(&self) -> Option<Error> {
        let mut st = self.lock();
        st.cancelled = true;
        self.changed.notify_all();
        st.failed.clone()
    }
}
