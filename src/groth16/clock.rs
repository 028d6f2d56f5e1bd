//! The step times of one proving call: [`PhaseTimes`] (what the per-call
//! report shows) and the [`Clock`] a call adds them to, from whichever
//! thread runs a step (the computing thread, the CPU thread, the pinning
//! thread).

use std::sync::Mutex;
use std::time::{Duration, Instant};

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
    /// G1 tail MSMs and plain MSMs (L, A′, B′), the G1 input MSMs (the wait
    /// for their thread beside the batch additions, or the MSMs where they
    /// run in turn), and the G2 MSMs of B′ when they run on the device
    /// (`SUPRASEAL_C2_G2_MSM=gpu`).
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

/// One step of a call, as [`PhaseTimes`] counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Pin,
    Stage,
    Prep,
    Ntt,
    HMsm,
    BatchAdd,
    Tails,
    G2,
    Join,
    Unpin,
}

impl PhaseTimes {
    fn slot(&mut self, step: Step) -> &mut Duration {
        match step {
            Step::Pin => &mut self.pin,
            Step::Stage => &mut self.stage,
            Step::Prep => &mut self.prep,
            Step::Ntt => &mut self.ntt,
            Step::HMsm => &mut self.h_msm,
            Step::BatchAdd => &mut self.batch_add,
            Step::Tails => &mut self.tails,
            Step::G2 => &mut self.g2,
            Step::Join => &mut self.join,
            Step::Unpin => &mut self.unpin,
        }
    }
}

/// The step times of one call, added to from any of its threads.
#[derive(Debug, Default)]
pub struct Clock(Mutex<PhaseTimes>);

impl Clock {
    /// Adds `d` to `step`'s time.
    pub fn add(&self, step: Step, d: Duration) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()).slot(step) += d;
    }

    /// Runs `f`, adding its wall time to `step`.
    pub fn time<T>(&self, step: Step, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let out = f();
        self.add(step, t.elapsed());
        out
    }

    /// `step`'s time so far.
    pub fn get(&self, step: Step) -> Duration {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()).slot(step)
    }

    /// Every step's time so far.
    pub fn times(&self) -> PhaseTimes {
        *self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clock_adds_each_step_apart() {
        let c = Clock::default();
        c.add(Step::Ntt, Duration::from_millis(3));
        c.add(Step::Ntt, Duration::from_millis(4));
        c.add(Step::Tails, Duration::from_millis(5));
        let got = c.time(Step::Pin, || 7);
        assert_eq!(got, 7);
        let t = c.times();
        assert_eq!((t.ntt, t.tails, t.h_msm), (Duration::from_millis(7), Duration::from_millis(5), Duration::ZERO));
        assert_eq!(c.get(Step::Ntt), Duration::from_millis(7));
    }
}
