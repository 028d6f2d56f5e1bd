//! What one proving call did ([`CallReport`]): logged through `tracing` per
//! call, and kept in memory for benchmarks and tests when recording is on.

use std::sync::Mutex;
use std::thread::ThreadId;
use std::time::Duration;

use crate::groth16::PhaseTimes;
use crate::locks::{LockMode, Span};
use crate::log::round1;

/// What one proving call did: the phase-1 decision, both lock spans, free
/// device memory around it and the time of each part. One per call, logged
/// through `tracing` and kept for benchmarks and tests ([`record_reports`]).
#[derive(Clone, Debug)]
pub struct CallReport {
    /// "cpu" or "gpu".
    pub backend: crate::backend::BackendKind,
    /// Device ordinal (also the default lock handle's index).
    pub device: usize,
    /// Circuits in the call.
    pub circuits: usize,
    /// Domain size n (elements).
    pub domain: usize,
    /// `SUPRASEAL_C2_LOCKS` in effect.
    pub lock_mode: LockMode,
    /// `Some(true)` pre-staged (whole circuits), `Some(false)` fallback
    /// (circuit 0 wholly or partly uploaded in phase 2), `None` nothing to
    /// stage (CPU).
    pub prestaged: Option<bool>,
    /// On the fallback path, how many of circuit 0's a, b, c phase 1 staged
    /// all the same (1 or 2, `SUPRASEAL_C2_PRESTAGE=on`; `None`: none).
    pub prestaged_part: Option<usize>,
    /// Of circuit 0's a, b, c that phase 1 did not stage, how many the call
    /// staged while it waited for a busy compute lock
    /// (`SUPRASEAL_C2_PRESTAGE_RETRY`; `None`: none).
    pub restaged: Option<usize>,
    /// The memory-lock holds of those admissions (between `mem` and
    /// `compute`; two-lock mode only).
    pub restage_mem: Vec<Span>,
    /// Why the call fell back (or why pinning failed), if it did.
    pub reason: Option<String>,
    /// Free device memory in bytes: before the call asks for the memory lock
    /// (so, in single-lock mode, possibly seconds before its phase 1) and
    /// after phase 2.
    pub free_before: Option<usize>,
    pub free_after: Option<usize>,
    /// The memory-lock hold (two-lock mode only).
    pub mem: Option<Span>,
    /// The compute-lock hold (in single-lock mode it covers phase 1 too).
    pub compute: Option<Span>,
    /// Validation (phase 0).
    pub validate: Duration,
    /// The other parts.
    pub times: PhaseTimes,
    /// The calling thread.
    pub thread: ThreadId,
    /// The error the call returned, if any.
    pub error: Option<String>,
    /// Phase 1 step by step ([`Backend::stage_detail`]), where measured.
    pub stage_detail: Option<String>,
    /// Where the G2 MSMs of B′ ran: "cpu" or "gpu" (`SUPRASEAL_C2_G2_MSM`,
    /// or its `auto` choice).
    pub g2_msm: &'static str,
    /// Whether the batch additions ran beside the last circuit's H-MSM, on
    /// a second stream (`SUPRASEAL_C2_BATCH_ADD_BESIDE`).
    pub batch_add_beside: bool,
}

impl CallReport {
    /// One INFO line. Fields that do not apply to the call are left out (an
    /// `Option` field that is `None` is not recorded): the GPU, free VRAM and
    /// pre-stage on the CPU backend, the memory lock in single-lock mode, the
    /// reason, the stage detail and the error when there is none.
    pub(crate) fn log(&self) {
        let ms = |d: Duration| round1(d.as_secs_f64() * 1e3);
        let t = &self.times;
        let gpu = self.backend == crate::backend::BackendKind::Gpu;
        // A phase the backend does not have (the CPU pins and stages nothing).
        let gpu_ms = |d: Duration| gpu.then(|| ms(d));
        tracing::info!(
            backend = self.backend.as_str(),
            gpu = gpu.then_some(self.device),
            circuits = self.circuits,
            domain = self.domain,
            locks = ?self.lock_mode,
            prestage = self.prestaged.map(|ok| match (ok, self.prestaged_part) {
                (true, _) => "ok",
                (false, None) => "fallback",
                (false, Some(_)) => "part",
            }),
            restaged = self.restaged,
            reason = self.reason.as_deref(),
            free_before = self.free_before,
            free_after = self.free_after,
            mem_wait_ms = self.mem.map(|s| ms(s.wait())),
            mem_hold_ms = self.mem.map(|s| ms(s.hold())),
            compute_wait_ms = self.compute.map(|s| ms(s.wait())),
            compute_hold_ms = self.compute.map(|s| ms(s.hold())),
            validate_ms = ms(self.validate),
            pin_ms = gpu_ms(t.pin),
            stage_ms = gpu_ms(t.stage),
            prep_ms = ms(t.prep),
            ntt_ms = ms(t.ntt),
            h_msm_ms = ms(t.h_msm),
            batch_add_ms = ms(t.batch_add),
            tails_ms = ms(t.tails),
            g2_ms = ms(t.g2),
            join_ms = ms(t.join),
            unpin_ms = gpu_ms(t.unpin),
            stage_detail = self.stage_detail.as_deref(),
            g2_msm = self.g2_msm,
            batch_add_beside = self.batch_add_beside,
            error = self.error.as_deref(),
            "proving call"
        );
    }
}

/// Kept reports, when recording is on.
static REPORTS: Mutex<Option<Vec<CallReport>>> = Mutex::new(None);

/// Starts (`true`) or stops (`false`) keeping a [`CallReport`] per call in
/// memory (benchmarks and tests; off by default). Stopping drops the kept ones.
pub fn record_reports(on: bool) {
    *REPORTS.lock().unwrap_or_else(|p| p.into_inner()) = on.then(Vec::new);
}

/// Takes the reports kept since the last call (empty when recording is off).
pub fn take_reports() -> Vec<CallReport> {
    REPORTS.lock().unwrap_or_else(|p| p.into_inner()).as_mut().map(std::mem::take).unwrap_or_default()
}

pub(crate) fn record(report: CallReport) {
    if let Some(v) = REPORTS.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
        v.push(report);
    }
}

