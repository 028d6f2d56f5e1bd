//! `SUPRASEAL_C2_VRAM_LIMIT_MB` and (with the `tools` feature)
//! `SUPRASEAL_C2_FAULT_ALLOC`: every device allocation of a call is admitted
//! here first, so that a smaller card or an injected fault fails exactly as
//! an exhausted device would. The shipped library has no fault injection:
//! there the switch is not read (`config`: ignored with one warning).

#[cfg(feature = "tools")]
use std::sync::atomic::{AtomicU64, Ordering};

use super::device::{Gpu, CUDA_ERROR_OUT_OF_MEMORY};
use crate::config::{FaultPhase, Settings};
use crate::error::{Error, Result};

/// Device allocations made so far in phase 1, phase 2 and params loads (process-wide),
/// for `SUPRASEAL_C2_FAULT_ALLOC`.
#[cfg(feature = "tools")]
static ALLOCS: [AtomicU64; 3] = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];

/// Restarts the allocation counts that `SUPRASEAL_C2_FAULT_ALLOC=N@phase`
/// refers to (tests).
#[cfg(feature = "tools")]
pub fn reset_fault_counters() {
    ALLOCS.iter().for_each(|c| c.store(0, Ordering::SeqCst));
}

/// Admission for one device allocation of `bytes` in `phase`: fails with
/// `CUDA_ERROR_OUT_OF_MEMORY` when it is the injected fault, or when a
/// `SUPRASEAL_C2_VRAM_LIMIT_MB` card would be full (not checked for
/// `bytes == 0`, a reused buffer). The message names `what`.
pub fn check_alloc(gpu: &Gpu, settings: &Settings, phase: FaultPhase, bytes: usize, what: &str) -> Result<()> {
    #[cfg(feature = "tools")]
    {
        let count = ALLOCS[phase as usize].fetch_add(1, Ordering::SeqCst) + 1;
        if settings.fault == Some((count, phase)) {
            return Err(Error::cuda(
                CUDA_ERROR_OUT_OF_MEMORY,
                format!("CUDA error in {what}: injected allocation fault (SUPRASEAL_C2_FAULT_ALLOC={count}@{phase:?})"),
            ));
        }
    }
    let _ = phase;
    // `bytes == 0`: a reused buffer, counted for fault injection only.
    if let (Some(limit), true) = (settings.vram_limit, bytes > 0) {
        // What this allocation's pool keeps mapped serves it; the other
        // pools' caches are in use as far as it is concerned.
        let (free, total) = gpu.mem_info()?;
        let cached = if phase == FaultPhase::Phase1 { gpu.memory.stage_cached() } else { gpu.memory.compute_cached() };
        let used = total.saturating_sub(free + cached);
        if used + bytes > limit {
            return Err(Error::cuda(
                CUDA_ERROR_OUT_OF_MEMORY,
                format!(
                    "CUDA error in {what}: {bytes} B requested, {used} B in use, SUPRASEAL_C2_VRAM_LIMIT_MB card of {limit} B would be full"
                ),
            ));
        }
    }
    Ok(())
}

