//! Launch choices and per-kernel timings of the GPU Pippenger MSM
//! (cuda/msm.cu, driven by `gpu::msm`). Compiled with or without the kernels
//! so that benchmarks build everywhere.

/// Launch choices of one Pippenger MSM (src/gpu/msm.rs + cuda/msm.cu).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsmTuning {
    /// Window width c in bits: ⌈255/c⌉ windows of 2^c − 1 buckets each.
    pub window_bits: u32,
    /// Sorted points one accumulation thread sums (K).
    pub points_per_thread: u32,
    /// Threads per block of the accumulation launch (a multiple of 32, ≤ 256).
    pub block: u32,
}

impl MsmTuning {
    /// The defaults for `n` points: wider windows for bigger inputs (at most
    /// 16 bits below 2^24 points, 17 from 2^24 on: one window fewer), 32
    /// points per accumulation thread, blocks of 128 for the accumulation (3
    /// blocks per SM fit its registers, 1 of 256 did). Chosen from the
    /// launch-choice sweep on the H200 (notes/GPU.md; register-capped
    /// variants of the kernel were no faster and were dropped).
    pub fn for_points(n: usize) -> Self {
        let lg = usize::BITS - n.max(1).leading_zeros();
        let window_bits = if n >= 1 << 24 { 17 } else { lg.saturating_sub(3).clamp(4, 16) };
        MsmTuning { window_bits, points_per_thread: 32, block: 128 }
    }

    /// Panics on a choice the kernels cannot run (a programming error).
    pub fn check(&self) {
        assert!((1..=20).contains(&self.window_bits), "msm: window of {} bits", self.window_bits);
        assert!(self.points_per_thread >= 1, "msm: {self:?}");
        assert!(self.block % 32 == 0 && (32..=256).contains(&self.block), "msm: block of {}", self.block);
    }
}

/// Milliseconds per kernel kind over all windows of one MSM, measured by
/// synchronising the stream after every launch (so their sum exceeds an
/// unprofiled run by the synchronisations).
#[derive(Clone, Copy, Debug, Default)]
pub struct MsmProfile {
    /// Scalars out of Montgomery form.
    pub convert_ms: f64,
    /// Bucket sort: memsets, histogram, scan, scatter.
    pub sort_ms: f64,
    pub accumulate_ms: f64,
    /// Merge levels of the partial sums and the per-bucket fix-up.
    pub fixup_ms: f64,
    /// Σ d·B_d by segments.
    pub segments_ms: f64,
    /// Final reduction of every window's segment sums and its download.
    pub reduce_ms: f64,
}

