//! Launch choices of the GPU kernels that have them, one value per kernel
//! family chosen by one function: the Pippenger MSM (cuda/msm.cu, driven by
//! `gpu::msm`, with its per-kernel timings) and the NTT passes
//! (cuda/ntt_pass.cuh, driven by `gpu::ntt`). Compiled with or without the
//! kernels so that benchmarks build everywhere.

use std::sync::atomic::{AtomicU8, Ordering};

/// `SUPRASEAL_C2_MSM_SORT_BESIDE` as the last call's settings set it
/// ([`set_sort_beside`]), a [`SortBeside`] as `u8`: one value for the
/// process, so that every sizing of an MSM's buffers (`gpu::msm`,
/// `gpu::stage`) and the MSM itself see the same [`MsmTuning::for_points`].
static SORT_BESIDE: AtomicU8 = AtomicU8::new(SortBeside::Auto as u8);

/// How an MSM sorts its windows (`SUPRASEAL_C2_MSM_SORT_BESIDE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum SortBeside {
    /// [`MsmTuning::for_points`]' choice: as `First` from 2^24 points, else as `Off`.
    Auto,
    /// Each window sorts, then accumulates, on the call's stream.
    Off,
    /// Each window's sort on a second stream beside the accumulation.
    On,
    /// As `On`, the second stream at the device's greatest priority, so
    /// that the sort's blocks take the SMs the accumulation frees before
    /// its own waiting blocks do.
    First,
}

/// Sets [`MsmTuning::for_points`]'s [`MsmTuning::sort`] for the process. A proving call sets it from
/// `SUPRASEAL_C2_MSM_SORT_BESIDE` at its start (`pipeline::start`), where
/// the settings say no call is in flight while they change: every sizing of
/// an MSM's buffers reads it again, so a change during a call can make a
/// call allocate more than its admission counted.
pub fn set_sort_beside(choice: SortBeside) {
    SORT_BESIDE.store(choice as u8, Ordering::Relaxed);
}

/// The process's choice ([`set_sort_beside`]).
fn sort_choice() -> SortBeside {
    match SORT_BESIDE.load(Ordering::Relaxed) {
        v if v == SortBeside::Off as u8 => SortBeside::Off,
        v if v == SortBeside::On as u8 => SortBeside::On,
        v if v == SortBeside::First as u8 => SortBeside::First,
        _ => SortBeside::Auto,
    }
}

/// How one MSM sorts its windows ([`MsmTuning::sort`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowSort {
    /// Each window sorts, then accumulates, on the call's stream.
    InTurn,
    /// Window w + 1 sorts on a second stream while window w accumulates.
    Beside,
    /// As `Beside`, the second stream at the device's greatest priority, so
    /// that the sort's blocks take the SMs the accumulation frees before
    /// its own waiting blocks do.
    BesideFirst,
}

/// The largest points per thread [`MsmTuning::fitted_to_waves`] starts
/// from (it searches K ..= 2K).
const FIT_MOST_POINTS: usize = 1 << 10;

/// Launch choices of one Pippenger MSM (src/gpu/msm.rs + cuda/msm.cu).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsmTuning {
    /// Window width c in bits, 2 ..= 24: signed digits in
    /// [−2^(c−1), 2^(c−1)] over [`MsmTuning::windows`] windows, each with
    /// 2^(c−1) buckets ([`MsmTuning::buckets`] slots, slot 0 unused).
    pub window_bits: u32,
    /// Sorted points one accumulation thread sums (K).
    pub points_per_thread: u32,
    /// Threads per block of the accumulation launch (a multiple of 32, ≤ 256).
    pub block: u32,
    /// Whether window w + 1 sorts on a second stream while window w
    /// accumulates on the call's stream, and at which priority: beside, it
    /// takes two sets of sort buffers used in turn (one more set of the
    /// sort's indices, thread keys, starts, cursors and scan tiles: about
    /// 4 bytes per point). The scatter is bound by its atomics and
    /// scattered 4-byte writes, the accumulation by the multiplier, so the
    /// two can share the SMs. A profiled MSM, and one that shares a bucket
    /// table, runs its windows one after another whatever this says, so
    /// that each kernel kind's time stays its own.
    pub sort: WindowSort,
}

impl MsmTuning {
    /// The defaults for `n` points: wider windows for bigger inputs, K points
    /// per accumulation thread ([`MsmTuning::points_per_thread`]: 32, 128
    /// from 2^26 points on), blocks of 128 for the accumulation (from the
    /// launch-choice sweep on the H200, notes/GPU.md).
    ///
    /// K: each accumulation thread leaves its partial sums to the fix-up,
    /// so a larger K trades fix-up additions for a longer tail of the
    /// accumulation's last wave. At the H-MSM's 2^27 points (c = 20, the
    /// sort beside first, on an H100, `notes/runs/s47/hshape.log`, two
    /// rows each) K = 128 took 918.1 / 920.3 ms against 938.9 / 941.1 at
    /// K = 32 and 926.5 / 928.0 at 64: the fix-up 15 against 42 ms, the
    /// accumulation 679 against 663. At 2^24 and below the fix-up is a few
    /// ms (9–10 of 136 ms on the same H100) and K = 32 stays, unswept at 128.
    /// K = 256 took 884.2 / 884.3 ms against 895.4 / 895.4 at 128 in a later
    /// lease (`notes/runs/s48/hshape.log`); it stays at 128 until the GPU
    /// tests' skewed inputs have run at 256.
    /// 2^26 takes the H-MSM's K with its window (c = 20); that size itself
    /// was not swept at K = 128, nor was G2 (porep-32g's G2 MSMs are under
    /// 2^26 points). A streamed key's chunks into one table take the chunk's
    /// K ([`MsmTuning::for_table`]).
    ///
    /// Windows: below 2^24 points, c = ⌊log2 n⌋ − 1 within 5 ..= 17, which
    /// keeps the bucket counts of the unsigned c − 1 bit windows that the
    /// sweep picked there (2^(c−1), at most 2^16); below 2^22 points at most
    /// c = 16, whose 16 windows are those of c = 17 with half the buckets,
    /// and whose digits never straddle two 32-bit limbs: at 2,118,373 points
    /// (a porep-32g G1 tail) 24.9 ms against 26.7–26.8 for c = 17 in three
    /// H200 sweeps (`notes/runs/s24/70cf2f7-*.log`,
    /// `notes/runs/s28/69f51b4-ntt.log`). From 2^24 points on,
    /// c = 18: 15 windows of 2^17 buckets; from 2^26 on, c = 20: 13 windows
    /// of 2^19. The accumulation grows with points × windows, the sort and
    /// the Σ d·B_d segments partly with buckets × windows. The H200 sweep at
    /// 2^26 (`notes/runs/s21/9e56c02-kernels.log`): c = 18 574 ms
    /// (accumulation 406), c = 19 591, c = 20 546 (accumulation 358, sort
    /// and segments 22 ms more), c = 21 590. At 2^24, c = 18 was ahead in
    /// the sweep before the scan over tiles
    /// (`notes/runs/s20/083a492-kernels.log`), and has not been swept since.
    /// From 2^24 points each window's sort runs beside the accumulation of
    /// the window before it, on a stream of the device's greatest priority
    /// ([`SortBeside::First`]); below, windows sort in turn. Measured on an
    /// H100 at a8083c2 (`notes/runs/s41/`), bases on the device: 2^24
    /// 140.8 ms first against 146.5 in turn, 2^26 498.7 against 503.8, the
    /// H-MSM's 2^27 points 976.9/978.7 against 981.1/1007.3; below 2^24
    /// the gain is 0.3 ms at 2^20 and 2.0 at 2^22, and the second sort set
    /// would also grow the streamed key's chunk MSMs (2^23 points), which a
    /// 16 GiB card runs and which were not timed that way. MSMs that share
    /// one bucket table sort in turn whatever the choice. The process's
    /// choice overrides it ([`set_sort_beside`]).
    pub fn for_points(n: usize) -> Self {
        let lg = usize::BITS - n.max(1).leading_zeros();
        let window_bits = if n >= 1 << 26 {
            20
        } else if n >= 1 << 24 {
            18
        } else if n >= 1 << 22 {
            17
        } else {
            lg.saturating_sub(2).clamp(5, 16)
        };
        let sort = match sort_choice() {
            SortBeside::Off => WindowSort::InTurn,
            SortBeside::On => WindowSort::Beside,
            SortBeside::First => WindowSort::BesideFirst,
            SortBeside::Auto if n >= 1 << 24 => WindowSort::BesideFirst,
            SortBeside::Auto => WindowSort::InTurn,
        };
        let points_per_thread = if n >= 1 << 26 { 128 } else { 32 };
        MsmTuning { window_bits, points_per_thread, block: 128, sort }
    }

    /// The launch choice of one bucket table shared by the chunks of an MSM
    /// over `n` streamed points, `chunk` points a chunk: the windows of all
    /// n points ([`MsmTuning::for_points`]) and the K of `chunk` points. Each
    /// accumulation launch sums one span of the chunks (up to 4 chunks where
    /// they ramp, [`crate::gpu::msm::ramp_spans`]); with the default 768 MiB
    /// chunks every span is under 2^26 points, so K is the spans' own. In
    /// that form (2^23-point chunks at c = 20, on an H100, with the kernels of
    /// `notes/runs/s34/`) K = 64 made the accumulation slower than K = 32 for
    /// a smaller fix-up; chunks of 3 GiB or more (2^25 points, spans up to
    /// ~2^27) keep K = 32 unmeasured.
    pub fn for_table(n: usize, chunk: usize) -> Self {
        MsmTuning { points_per_thread: MsmTuning::for_points(chunk).points_per_thread, ..MsmTuning::for_points(n) }
    }

    /// This tuning with its accumulation threads' points K fitted to whole
    /// waves of a device that keeps `wave` accumulation threads resident
    /// at once (SMs × resident blocks per SM × block; 0: unknown, no fit).
    ///
    /// Each window's accumulation launch runs n/K threads of K points each,
    /// and the window's merge and fix-up wait for its last block. At K = 32
    /// a porep-32g tail of 2,118,373 points is 66,200 threads: on an H100
    /// or H200 at the 3 blocks of 128 per SM that `msm_accumulate_g1`'s 130
    /// registers allow (132 × 3 × 128 = 50,688) one full wave, then a
    /// second under a third full, 16 times per MSM; at 4 blocks (67,584, a
    /// kernel of 128 registers) one wave, where the fit keeps K. Its
    /// accumulation summed 1.88 G points a second (`notes/runs/s41/`,
    /// a8083c2-sortbeside.log: 18.0 ms for 16 windows), the 2^22 and 2^24
    /// MSMs (2.6 and 10.3 waves) 2.35 and 2.44 G/s.
    ///
    /// The fit takes the K in K ..= 2K that minimises ⌈⌈n/k⌉ / wave⌉ · k
    /// (waves × points per thread: the time of threads that each take the
    /// same time per point), the smallest such k on a tie, so K stays
    /// where no larger one saves a point-time: 2,118,373 points get k = 42
    /// at 3 blocks per SM (one wave of 50,438 threads; 42 point-times
    /// against 64), and on an H100 took 23.3 ms against 25.5 (accumulation 16.1 against 18.0;
    /// `notes/runs/s44/tailk.log`); B′'s G2 tail in a porep-32g proof (K =
    /// 46 at 2 blocks of 128 per SM) 50.3–50.7 ms against 61.5–62.1. k never
    /// falls below K, so the buffers that scale with the threads (thread
    /// keys, merge level 0) stay within what [`MsmTuning::for_points`]'
    /// tuning sizes, which admission counts. Only windows sorted in turn
    /// are fitted: beside ([`WindowSort`]), the sort's blocks share the
    /// SMs with the accumulation, and waves no longer end together.
    pub fn fitted_to_waves(self, n: usize, wave: usize) -> Self {
        let k0 = self.points_per_thread as usize;
        // A K past FIT_MOST_POINTS is a tuning of its own, left as given
        // (the search below takes K + 1 steps).
        if wave == 0 || n == 0 || k0 == 0 || k0 > FIT_MOST_POINTS || self.sort != WindowSort::InTurn {
            return self;
        }
        let cost = |k: usize| n.div_ceil(k).div_ceil(wave).saturating_mul(k);
        let best = (k0..=2 * k0).min_by_key(|&k| (cost(k), k)).unwrap_or(k0);
        MsmTuning { points_per_thread: best as u32, ..self }
    }

    /// Whether the windows sort on a second stream ([`MsmTuning::sort`]).
    pub fn sorts_beside(&self) -> bool {
        self.sort != WindowSort::InTurn
    }

    /// Windows of the signed-digit recoding: ⌈256/c⌉, so that c·(W−1) <
    /// 256 ≤ c·W and the top window takes the recoding's carry.
    pub fn windows(&self) -> u32 {
        256u32.div_ceil(self.window_bits)
    }

    /// Bucket slots per window: digits d have |d| ≤ 2^(c−1), bucket |d|;
    /// slot 0 (d = 0) is never filled.
    pub fn buckets(&self) -> u32 {
        (1u32 << (self.window_bits - 1)) + 1
    }

    /// Panics on a choice the kernels cannot run (a programming error).
    pub fn check(&self) {
        assert!((2..=24).contains(&self.window_bits), "msm: window of {} bits", self.window_bits);
        assert!(self.points_per_thread >= 1, "msm: {self:?}");
        assert!(self.block % 32 == 0 && (32..=256).contains(&self.block), "msm: block of {}", self.block);
    }
}

/// Launch choice of the NTT passes (cuda/ntt_pass.cuh, driven by `gpu::ntt`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NttTuning {
    /// log2 of the radix, 1 ..= 3: a pass's k radix-2 stages run in groups
    /// of up to `radix_lg` consecutive stages, each thread taking up to
    /// 2^radix_lg scalars of its block's tile through a group in registers,
    /// with one barrier per group (radix 2: one per stage). A block has one
    /// thread per scalar group of the pass's largest stage group, at most 256.
    pub radix_lg: u32,
}

impl NttTuning {
    /// Every choice the kernels take: radix 2, 4 and 8 (for the tools'
    /// harness and the GPU tests).
    #[cfg_attr(not(feature = "tools"), allow(dead_code))]
    pub const CHOICES: [NttTuning; 3] = [NttTuning { radix_lg: 1 }, NttTuning { radix_lg: 2 }, NttTuning { radix_lg: 3 }];

    /// The choice for a 2^lg_n transform: `radix_lg` where the call's
    /// settings name one (`SUPRASEAL_C2_NTT_RADIX`), else radix 2, which
    /// every measured transform ran (the H200,
    /// `notes/runs/s28/69f51b4-ntt.log`: DIF at 2^27 43.47 ms, sppark 0.1.16
    /// 43.07). Radix 4 and 8 cut the barriers and the trips through shared
    /// memory of a pass of k stages from k to ⌈k/2⌉ and ⌈k/3⌉ (k = 10: 5 and
    /// 4), at the same multiplications; `gpu_bench` times the three side by
    /// side, and that decides this default.
    pub fn for_domain(_lg_n: u32, radix_lg: Option<u32>) -> Self {
        NttTuning { radix_lg: radix_lg.unwrap_or(1) }
    }

    /// Panics on a choice the kernels cannot run (a programming error).
    pub fn check(&self) {
        assert!((1..=3).contains(&self.radix_lg), "ntt: radix 2^{}", self.radix_lg);
    }
}

/// Milliseconds per kernel kind over all windows of one MSM, measured by
/// synchronising the stream after every launch (so their sum exceeds an
/// unprofiled run by the synchronisations).
#[derive(Clone, Copy, Debug, Default)]
pub struct MsmProfile {
    /// Scalars out of Montgomery form and recoded (msm_recode).
    pub convert_ms: f64,
    /// The histograms of every window's digits (one pass).
    pub histogram_ms: f64,
    /// Bucket sort per window: scan, scatter.
    pub sort_ms: f64,
    pub accumulate_ms: f64,
    /// Merge levels of the partial sums and the per-bucket fix-up (and a
    /// shared table's additions of each sort's row, `gpu::msm::SharedTable`).
    pub fixup_ms: f64,
    /// Σ d·B_d by segments.
    pub segments_ms: f64,
    /// Final reduction of every window's segment sums and its download.
    pub reduce_ms: f64,
}

/// Step by step, for MSMs run one after another (a chunked MSM's parts).
impl std::ops::AddAssign for MsmProfile {
    fn add_assign(&mut self, p: MsmProfile) {
        self.convert_ms += p.convert_ms;
        self.histogram_ms += p.histogram_ms;
        self.sort_ms += p.sort_ms;
        self.accumulate_ms += p.accumulate_ms;
        self.fixup_ms += p.fixup_ms;
        self.segments_ms += p.segments_ms;
        self.reduce_ms += p.reduce_ms;
    }
}


#[cfg(test)]
mod tests {
    use super::{MsmTuning, WindowSort};
    use blstrs::Scalar;
    use ff::Field;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    /// msm_windows of cuda/msm.cu, written as there.
    #[allow(clippy::manual_div_ceil)]
    fn kernel_windows(c: u32) -> u32 {
        (256 + c - 1) / c
    }

    /// msm_recode of cuda/msm.cu after `from()`, statement for statement:
    /// t = s + K for the canonical s; also the carry out of limb 7, which
    /// the kernel drops.
    fn recode(s: [u32; 8], c: u32) -> ([u32; 8], u32) {
        let top = c * (kernel_windows(c) - 1);
        let mut v = s;
        let mut carry = 0u32;
        for j in 0..8u32 {
            let (lo, hi) = (32 * j, (32 * j + 32).min(top));
            let mut k = 0u32;
            let mut p = lo + (c - (lo + 1) % c) % c;
            while p < hi {
                k |= 1 << (p - lo);
                p += c;
            }
            let sum = v[j as usize] as u64 + k as u64 + carry as u64;
            v[j as usize] = sum as u32;
            carry = (sum >> 32) as u32;
        }
        (v, carry)
    }

    /// digit_of of cuda/msm.cu.
    fn digit_of(s: &[u32; 8], bit: u32, c: u32) -> u32 {
        let (limb, off) = ((bit >> 5) as usize, bit & 31);
        let mut v = s[limb] as u64;
        if limb + 1 < 8 {
            v |= (s[limb + 1] as u64) << 32;
        }
        (v >> off) as u32 & ((1u32 << c) - 1)
    }

    /// signed_digit of cuda/msm.cu.
    fn signed_digit(t: &[u32; 8], window: u32, c: u32) -> i32 {
        let d = digit_of(t, window * c, c) as i32;
        if window + 1 < kernel_windows(c) {
            d - (1u32 << (c - 1)) as i32
        } else {
            d
        }
    }

    fn to_u64(a: [u32; 8]) -> [u64; 4] {
        std::array::from_fn(|i| a[2 * i] as u64 | (a[2 * i + 1] as u64) << 32)
    }

    fn to_u32(a: [u64; 4]) -> [u32; 8] {
        std::array::from_fn(|i| (a[i / 2] >> (32 * (i % 2))) as u32)
    }

    /// a + b and a − b on 256-bit integers, with the carry / borrow out.
    fn add(a: [u64; 4], b: [u64; 4]) -> ([u64; 4], bool) {
        let mut out = [0u64; 4];
        let mut carry = 0u128;
        for i in 0..4 {
            let s = a[i] as u128 + b[i] as u128 + carry;
            out[i] = s as u64;
            carry = s >> 64;
        }
        (out, carry != 0)
    }

    fn sub(a: [u64; 4], b: [u64; 4]) -> ([u64; 4], bool) {
        let mut out = [0u64; 4];
        let mut borrow = false;
        for i in 0..4 {
            let (d, b1) = a[i].overflowing_sub(b[i]);
            let (d, b2) = d.overflowing_sub(borrow as u64);
            out[i] = d;
            borrow = b1 || b2;
        }
        (out, borrow)
    }

    fn pow2(bit: u32) -> [u64; 4] {
        let mut out = [0u64; 4];
        out[(bit / 64) as usize] = 1 << (bit % 64);
        out
    }

    fn canonical(s: Scalar) -> [u64; 4] {
        let b = s.to_bytes_le();
        std::array::from_fn(|i| u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap()))
    }

    fn scalar(a: [u64; 4]) -> Option<Scalar> {
        let mut b = [0u8; 32];
        for (i, w) in a.iter().enumerate() {
            b[8 * i..8 * i + 8].copy_from_slice(&w.to_le_bytes());
        }
        Option::from(Scalar::from_bytes_le(&b))
    }

    /// acc += v·2^bit on 320-bit integers (bit < 256, v < 2^63).
    fn add_shifted(acc: &mut [u64; 5], v: u64, bit: u32) {
        let first = (bit / 64) as usize;
        let shifted = (v as u128) << (bit % 64);
        let mut carry = 0u128;
        for (l, a) in acc.iter_mut().enumerate().skip(first) {
            let part = match l - first {
                0 => shifted as u64,
                1 => (shifted >> 64) as u64,
                _ => 0,
            };
            let sum = *a as u128 + part as u128 + carry;
            *a = sum as u64;
            carry = sum >> 64;
        }
        assert_eq!(carry, 0, "sum beyond 320 bits");
    }

    /// Recodes `s` (< r) with c-bit windows as the kernels do, and checks
    /// the digits: in range for their bucket table, and Σ d_w·2^(c·w) equal
    /// to s as integers (positive and negative terms summed apart, 320 bits)
    /// and in Fr. Returns the digits.
    fn check_recoding(s: [u64; 4], c: u32) -> Vec<i64> {
        let tuning = MsmTuning { window_bits: c, points_per_thread: 32, block: 128, sort: super::WindowSort::InTurn };
        let windows = tuning.windows();
        assert_eq!(windows, kernel_windows(c), "c = {c}: host and kernel window counts");
        assert!(c * (windows - 1) < 256 && 256 <= c * windows, "c = {c}");
        let (t, carry) = recode(to_u32(s), c);
        assert_eq!(carry, 0, "c = {c}, s = {s:x?}: s + K overflows 256 bits");
        let half = 1i64 << (c - 1);
        let (mut pos, mut neg) = ([0u64; 5], [0u64; 5]);
        let mut in_fr = Scalar::ZERO;
        let step = Scalar::from(2u64).pow_vartime([c as u64]);
        let mut weight = Scalar::ONE;
        let digits: Vec<i64> = (0..windows).map(|w| signed_digit(&t, w, c) as i64).collect();
        for (w, &d) in (0..windows).zip(&digits) {
            if w + 1 < windows {
                assert!((-half..half).contains(&d), "c = {c}, window {w}: digit {d}");
            } else {
                assert!((0..=half).contains(&d), "c = {c}, top window {w}: digit {d}");
            }
            assert!(d.unsigned_abs() < tuning.buckets() as u64, "c = {c}: bucket {} of {}", d.unsigned_abs(), tuning.buckets());
            add_shifted(if d < 0 { &mut neg } else { &mut pos }, d.unsigned_abs(), c * w);
            let term = Scalar::from(d.unsigned_abs()) * weight;
            in_fr += if d < 0 { -term } else { term };
            weight *= step;
        }
        // pos − neg == s, exactly.
        let (mut diff, mut borrow) = ([0u64; 5], false);
        for i in 0..5 {
            let (x, b1) = pos[i].overflowing_sub(neg[i]);
            let (x, b2) = x.overflowing_sub(borrow as u64);
            diff[i] = x;
            borrow = b1 || b2;
        }
        assert!(!borrow && diff[4] == 0 && diff[..4] == s, "c = {c}: Σ d·2^(c·w) = {diff:x?} − borrow {borrow}, s = {s:x?}");
        assert_eq!(Some(in_fr), scalar(s), "c = {c}: Σ d·2^(c·w) in Fr");
        digits
    }

    #[test]
    fn signed_digit_recoding_sums_back_to_the_scalar() {
        let r_minus_1 = canonical(-Scalar::ONE);
        let mut rng = ChaCha20Rng::seed_from_u64(0x5eed_d161);
        let random: Vec<[u64; 4]> = (0..300).map(|_| canonical(Scalar::random(&mut rng))).collect();
        for c in 2..=24u32 {
            let top = c * (MsmTuning { window_bits: c, points_per_thread: 1, block: 32, sort: super::WindowSort::InTurn }.windows() - 1);
            let k = to_u64(recode([0; 8], c).0);
            let max_t = add(r_minus_1, k).0;
            let low = sub(pow2(top), [1, 0, 0, 0]).0;
            let clear_low: [u64; 4] = std::array::from_fn(|i| max_t[i] & !low[i]);
            let set_low = {
                let t: [u64; 4] = std::array::from_fn(|i| max_t[i] | low[i]);
                if sub(max_t, t).1 { sub(t, pow2(top)).0 } else { t }
            };
            let below_r = |s: [u64; 4]| sub(s, r_minus_1).1 || s == r_minus_1;
            let mut edge = vec![
                [0; 4],
                [1, 0, 0, 0],
                r_minus_1,
                sub(r_minus_1, [1, 0, 0, 0]).0,
                // One digit at 2^(c−1), and every unsigned window below the top at 2^(c−1).
                pow2(c - 1),
                k,
                add(k, k).0,
            ];
            // s = t − K for t with every digit below the top at −2^(c−1)
            // (low bits of t clear) or at 2^(c−1) − 1 (set) and the top
            // digit the largest below r; and for t = 2^top and 2^top − 1.
            for (i, t) in [clear_low, set_low, pow2(top), low].into_iter().enumerate() {
                let (s, borrow) = sub(t, k);
                assert!(i >= 2 || (!borrow && below_r(s)), "c = {c}: extreme case {i}");
                if !borrow {
                    edge.push(s);
                }
            }
            let (mut lowest, mut highest, mut highest_top) = (0i64, 0i64, 0i64);
            for s in edge.into_iter().filter(|&s| below_r(s)) {
                let d = check_recoding(s, c);
                let (top_digit, rest) = d.split_last().unwrap();
                lowest = lowest.min(*rest.iter().min().unwrap());
                highest = highest.max(*rest.iter().max().unwrap());
                highest_top = highest_top.max(*top_digit);
            }
            // The extremes were reached: both ends of the signed range, and
            // the largest top digit any s < r has, ⌊(r − 1 + K) / 2^top⌋
            // (top ≥ 256 − c ≥ 232: the top window lies in limb 7).
            let half = 1i64 << (c - 1);
            let top_max = (to_u32(max_t)[7] >> (top - 224)) as i64;
            assert_eq!((lowest, highest, highest_top), (-half, half - 1, top_max), "c = {c}");
            for &s in &random {
                check_recoding(s, c);
            }
        }
    }

    #[test]
    fn default_windows_and_buckets() {
        for lg in 0..=30 {
            let t = MsmTuning::for_points(1 << lg);
            t.check();
            if lg < 22 {
                assert!(t.buckets() <= (1 << 15) + 1, "2^{lg}: {t:?}");
            } else if lg < 24 {
                assert_eq!((t.window_bits, t.windows(), t.buckets()), (17, 16, (1 << 16) + 1), "2^{lg}");
            } else if lg < 26 {
                assert_eq!((t.window_bits, t.windows(), t.buckets()), (18, 15, (1 << 17) + 1), "2^{lg}");
            } else {
                assert_eq!((t.window_bits, t.windows(), t.buckets()), (20, 13, (1 << 19) + 1), "2^{lg}");
            }
        }
        let t = MsmTuning::for_points((1 << 24) - 1);
        assert_eq!((t.window_bits, t.windows(), t.buckets()), (17, 16, (1 << 16) + 1));
        let t = MsmTuning::for_points(2_118_373);
        assert_eq!((t.window_bits, t.windows(), t.buckets()), (16, 16, (1 << 15) + 1));
        // K: 32 below 2^26 points, 128 from there (porep-32g's H: 2^27 − 1
        // points); a shared table takes its chunk's K with the whole MSM's windows.
        for (n, k) in [(2_118_373, 32), ((1 << 26) - 1, 32), (1 << 26, 128), ((1 << 27) - 1, 128), (1 << 30, 128)] {
            assert_eq!(MsmTuning::for_points(n).points_per_thread, k, "{n} points");
        }
        let table = MsmTuning::for_table((1 << 27) - 1, 1 << 23);
        assert_eq!(table, MsmTuning { points_per_thread: 32, ..MsmTuning::for_points((1 << 27) - 1) });
        assert_eq!(MsmTuning::for_table(1 << 27, 1 << 26).points_per_thread, 128);
    }

    /// The fit to whole waves at porep-32g's tails on a device of 132 SMs ×
    /// 3 blocks of 128 (an H100's or H200's G1 accumulation at 129–168
    /// registers), and its
    /// bounds over sizes and devices: k within K ..= 2K, never more waves ×
    /// points than K's, never more threads than K's (the sized buffers).
    #[test]
    fn fitted_to_waves_fills_the_last_wave_within_the_sized_buffers() {
        let wave = 132 * 3 * 128;
        let fit = |n: usize| MsmTuning::for_points(n).fitted_to_waves(n, wave);
        assert_eq!(fit(2_118_373).points_per_thread, 42, "L's tail: 66,200 threads at K = 32, one wave at 42");
        assert_eq!(fit(2_111_605).points_per_thread, 42, "A's tail");
        assert_eq!(fit(1_538_054).points_per_thread, 32, "B's tail: 48,065 threads, one wave already");
        assert_eq!(fit(1 << 20).points_per_thread, 32, "under one wave: nothing to gain within K ..= 2K");
        assert_eq!(fit(1 << 22).points_per_thread, 42, "2.6 waves at K = 32, 2 at 42");
        // Beside, unknown devices and empty MSMs keep the tuning.
        assert_eq!(fit(1 << 24), MsmTuning::for_points(1 << 24));
        assert_eq!(MsmTuning::for_points(2_118_373).fitted_to_waves(2_118_373, 0), MsmTuning::for_points(2_118_373));
        assert_eq!(MsmTuning::for_points(0).fitted_to_waves(0, wave), MsmTuning::for_points(0));
        let none = MsmTuning { points_per_thread: 0, ..MsmTuning::for_points(5) };
        assert_eq!(none.fitted_to_waves(5, wave), none, "K = 0 (a tuning `check` refuses) is left to it");
        let cost = |n: usize, k: u32, wave: usize| n.div_ceil(k as usize).div_ceil(wave) * k as usize;
        for wave in [1, 32, 76 * 4 * 128, 108 * 3 * 128, wave, 132 * 128, 144 * 2 * 256] {
            for n in (0..60).map(|i| 1 + i * 37_123).chain((10..24).map(|lg| 1usize << lg)).chain([(1 << 23) + 1, 2_118_373, 1 << 26, (1 << 27) - 1, (1 << 31) - 1]) {
                for k0 in [1, 16, 32, 63, 64, 128] {
                    let base = MsmTuning { sort: WindowSort::InTurn, points_per_thread: k0, ..MsmTuning::for_points(n) };
                    let t = base.fitted_to_waves(n, wave);
                    t.check();
                    let k = t.points_per_thread;
                    let what = format!("n {n}, wave {wave}, K {k0}: k {k}");
                    assert!((k0..=2 * k0).contains(&k), "{what}");
                    // The least waves × points in the range, and the least k
                    // that has it.
                    for other in k0..=2 * k0 {
                        assert!(cost(n, k, wave) < cost(n, other, wave) || (cost(n, k, wave) == cost(n, other, wave) && k <= other), "{what}, {other} does better");
                    }
                    assert!(n.div_ceil(k as usize) <= n.div_ceil(k0 as usize), "{what}: more threads than sized");
                    assert_eq!(MsmTuning { points_per_thread: k0, ..t }, base, "only K moves");
                }
            }
        }
        // Every k of one wave costs k: the smallest, K itself, stays.
        assert_eq!(MsmTuning::for_points(1000).fitted_to_waves(1000, wave).points_per_thread, 32);
        // A K past the searched bound, a huge n and a wave of one thread: no panic, no overflow.
        let big = MsmTuning { points_per_thread: u32::MAX, ..MsmTuning::for_points(1 << 20) };
        assert_eq!(big.fitted_to_waves(1 << 20, wave), big);
        let _ = MsmTuning::for_points(1 << 20).fitted_to_waves(usize::MAX, 1);
    }

    /// The process's choice as no test changes it (`auto`; this binary's
    /// tests read it concurrently, so none sets it): the sort beside, its
    /// stream first, from 2^24 points, and in turn below, where the streamed
    /// key's chunk MSMs run.
    #[test]
    fn auto_sorts_beside_from_2_pow_24_points() {
        for lg in 0..=30 {
            let want = if lg >= 24 { super::WindowSort::BesideFirst } else { super::WindowSort::InTurn };
            assert_eq!(MsmTuning::for_points(1 << lg).sort, want, "2^{lg}");
        }
        assert!(!MsmTuning::for_points((1 << 24) - 1).sorts_beside());
        // The default chunk: 768 MiB of 96-byte G1 points, 2^23 of them
        // (`gpu::msm::chunk_points`).
        let fit = crate::config::GPU_CHUNK_DEFAULT / 96;
        let chunk = 1usize << (usize::BITS - 1 - fit.leading_zeros());
        assert_eq!(chunk, 1 << 23);
        assert!(!MsmTuning::for_points(chunk).sorts_beside(), "a streamed chunk of {chunk} points");
    }
}
