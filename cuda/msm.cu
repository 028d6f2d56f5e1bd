// G1 and G2 multi-scalar multiplication, Pippenger's bucket method with
// signed c-bit digits. msm_recode turns each scalar s (Montgomery form, s < r
// < 2^255) into the integer t = s + K, K = sum_{w<W-1} 2^(c-1) * 2^(c*w),
// with W = ceil(256/c) windows (t < 2^256, no overflow). Window w < W-1 of s
// then has the digit d_w = (bits [c*w, c*w+c) of t) - 2^(c-1), in
// [-2^(c-1), 2^(c-1) - 1]; the top window's digit is bits [c*(W-1), 256) of
// t, unsigned and at most 2^(c-1); s = sum_w d_w * 2^(c*w). A point with
// digit d goes to bucket |d| (1 .. 2^(c-1); d = 0 to none), negated when
// d < 0: 2^(c-1) + 1 bucket slots per window, slot 0 unused.
// The histograms of |digits| of all windows in one pass; then per window
// (driven by src/gpu/msm.rs):
//   exclusive scan of its histogram (bucket starts) -> scatter point
//   indices, with the digit's sign in bit 31, into bucket order (a counting
//   sort; the bucket is kept only where an accumulation thread starts) ->
//   accumulate each bucket's points (balanced: each thread takes K
//   consecutive sorted points and hands runs that cross its range to merge
//   levels and a fix-up pass) into that window's row of an all-windows
//   bucket table.
// Then, once for all windows: sum_d d*B_d by segments of buckets (running
// sums) -> one Jacobian point per window.
// The host combines the windows: sum_w 2^(c*w) * W_w.
// The digit kernels are shared; the point kernels are templates
// instantiated per group (suffix _g1 / _g2).
#include <cstddef>
#include <cstdint>

#include "fr.cuh"
#include "g1.cuh"
#include "g2.cuh"
#include "util.cuh"

#define INVALID 0xffffffffu

// Windows of c bits over the recoded 256-bit scalars (MsmTuning::windows).
__device__ __forceinline__ unsigned msm_windows(unsigned c) { return (256 + c - 1) / c; }

// Bits [bit, bit + c) of the 256-bit little-endian value s (zero above bit 255).
__device__ __forceinline__ uint32_t digit_of(const uint32_t* s, unsigned bit, unsigned c) {
    unsigned limb = bit >> 5, off = bit & 31;
    uint64_t v = s[limb];
    if (limb + 1 < 8) v |= (uint64_t)s[limb + 1] << 32;
    return (uint32_t)(v >> off) & ((1u << c) - 1);
}

// The signed digit of `window` of a recoded scalar t (msm_recode): the field
// less 2^(c-1) below the top window, the field itself in the top window.
__device__ __forceinline__ int32_t signed_digit(const uint32_t* t, unsigned window, unsigned c) {
    int32_t d = (int32_t)digit_of(t, window * c, c);
    return window + 1 < msm_windows(c) ? d - (int32_t)(1u << (c - 1)) : d;
}

// The 8 little-endian 32-bit limbs of recoded scalar i (msm_recode leaves
// the 256-bit value t in an fr_t's storage: 8 limbs, 32 bytes).
__device__ __forceinline__ const uint32_t* recoded_limbs(const fr_t* scalars, size_t i) {
    static_assert(sizeof(fr_t) == 32, "a scalar is 8 limbs of 32 bits");
    return reinterpret_cast<const uint32_t*>(scalars + i);
}

// In place: Montgomery form -> canonical s -> t = s + K, K = sum over
// windows w < W-1 of 2^(c-1) * 2^(c*w), i.e. bit c*w + c - 1 set for each
// (bits below c*(W-1) only). s < 2^255 and K < 2^(c*(W-1)) <= 2^255, so the
// carry out of limb 7 is 0. Limb j of K is built from c: its set bits are
// the positions p in [32j, min(32j + 32, c*(W-1))) with p = c - 1 (mod c).
extern "C" __global__ void msm_recode(fr_t* scalars, size_t n, unsigned c) {
    size_t i = global_tid();
    if (i >= n) return;
    fr_t v = scalars[i];
    v.from();
    const unsigned top = c * (msm_windows(c) - 1);
    uint32_t carry = 0;
#pragma unroll
    for (unsigned j = 0; j < 8; j++) {
        const unsigned lo = 32 * j, hi = min(lo + 32, top);
        uint32_t k = 0;
        for (unsigned p = lo + (c - (lo + 1) % c) % c; p < hi; p += c) k |= 1u << (p - lo);
        uint64_t sum = (uint64_t)v[j] + k + carry;
        v[j] = (uint32_t)sum;
        carry = (uint32_t)(sum >> 32);
    }
    scalars[i] = v;
}

// counts[w * nb + |d|] = points whose digit d in window w is nonzero, by
// magnitude, for every window w in one pass: each scalar is read once (its
// 32-byte sector stays in L1 across the windows), not once per window.
extern "C" __global__ void msm_histogram(const fr_t* scalars, size_t n, unsigned c, uint32_t nb,
                                         uint32_t* counts) {
    size_t i = global_tid();
    if (i >= n) return;
    const unsigned windows = msm_windows(c);
    const uint32_t* t = recoded_limbs(scalars, i);
    for (unsigned w = 0; w < windows; w++) {
        int32_t d = signed_digit(t, w, c);
        if (d) atomicAdd(&counts[(size_t)w * nb + (d < 0 ? -d : d)], 1u);
    }
}

// The bucket scan: exclusive scan of counts[0..nb) into starts[0..nb] and
// cursors[0..nb), starts[nb] = total, and *big = 1 if some bucket holds more
// than big_points points (the merge levels then run, see msm_merge_partials),
// else 0. Three launches, so that 2^23 buckets scan as fast as 2^16: each
// tile of SCAN_TILE counts is scanned by one block (msm_scan_tiles), the
// tiles' totals by one block (msm_scan_totals), and each tile's offset is
// added to its starts (msm_scan_offsets). The first two run in blocks of
// exactly SCAN_THREADS (block_exclusive_scan reads every warp's sum). Blocks
// of 256 threads (~8 K registers) fit an SM beside a full wave of the G1
// accumulation at 3 blocks per SM, where blocks of 1,024 (~32 K) do not. On
// an H100 the sort beside the accumulation still hides 12-18 ms of its ~119
// at 2^27 points, as with blocks of 1,024 beside 4 accumulation blocks, and
// the sort in turn takes the same time with either (notes/GPU.md).
#define SCAN_THREADS 256
#define SCAN_ITEMS 8
#define SCAN_TILE (SCAN_THREADS * SCAN_ITEMS)
static_assert(SCAN_THREADS % 32 == 0 && SCAN_THREADS <= 1024, "block_exclusive_scan: whole warps, at most 32");

// Exclusive scan of one value per thread over a block of SCAN_THREADS;
// *total gets the block's sum. Called once per kernel (its shared memory is
// not reset for a second use).
__device__ __forceinline__ uint32_t block_exclusive_scan(uint32_t v, uint32_t* total) {
    __shared__ uint32_t warp_sums[SCAN_THREADS / 32];
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    uint32_t x = v;
#pragma unroll
    for (unsigned o = 1; o < 32; o <<= 1) {
        uint32_t y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= o) x += y;
    }
    if (lane == 31) warp_sums[warp] = x;
    __syncthreads();
    if (warp == 0) {
        constexpr unsigned warps = SCAN_THREADS / 32;
        uint32_t w = lane < warps ? warp_sums[lane] : 0;
#pragma unroll
        for (unsigned o = 1; o < 32; o <<= 1) {
            uint32_t y = __shfl_up_sync(0xffffffffu, w, o);
            if (lane >= o) w += y;
        }
        if (lane < warps) warp_sums[lane] = w;
    }
    __syncthreads();
    *total = warp_sums[SCAN_THREADS / 32 - 1];
    return x - v + (warp ? warp_sums[warp - 1] : 0);
}

// Block b scans counts [b*SCAN_TILE, (b+1)*SCAN_TILE) ∩ [0, nb) into
// starts (offsets within the tile), its total into tile_sums[b] and its
// largest count into tile_max[b]. Blocks of SCAN_THREADS.
extern "C" __global__ void __launch_bounds__(SCAN_THREADS) msm_scan_tiles(const uint32_t* counts, uint32_t* starts, uint32_t nb, uint32_t* tile_sums,
                                          uint32_t* tile_max) {
    __shared__ uint32_t largest;
    if (threadIdx.x == 0) largest = 0;
    const size_t lo = (size_t)blockIdx.x * SCAN_TILE + (size_t)threadIdx.x * SCAN_ITEMS;
    uint32_t v[SCAN_ITEMS];
    uint32_t s = 0, m = 0;
#pragma unroll
    for (unsigned j = 0; j < SCAN_ITEMS; j++) {
        v[j] = lo + j < nb ? counts[lo + j] : 0;
        s += v[j];
        m = max(m, v[j]);
    }
    __syncthreads();
    atomicMax(&largest, m);
    uint32_t total;
    uint32_t acc = block_exclusive_scan(s, &total);
#pragma unroll
    for (unsigned j = 0; j < SCAN_ITEMS; j++) {
        if (lo + j < nb) starts[lo + j] = acc;
        acc += v[j];
    }
    if (threadIdx.x == 0) {
        tile_sums[blockIdx.x] = total;
        tile_max[blockIdx.x] = largest;
    }
}

// One block of SCAN_THREADS: tile_sums[0..tiles) becomes its exclusive scan
// (each tile's offset), starts[nb] the total, *big whether the largest count
// of any tile exceeds big_points. Thread t takes tiles [t*per, t*per + per).
extern "C" __global__ void __launch_bounds__(SCAN_THREADS) msm_scan_totals(uint32_t* tile_sums, const uint32_t* tile_max, uint32_t tiles,
                                           uint32_t* starts, uint32_t nb, uint32_t big_points, uint32_t* big) {
    __shared__ uint32_t largest;
    if (threadIdx.x == 0) largest = 0;
    const uint32_t per = (tiles + SCAN_THREADS - 1) / SCAN_THREADS;
    const uint32_t lo = threadIdx.x * per, hi = min(lo + per, tiles);
    uint32_t s = 0, m = 0;
    for (uint32_t i = lo; i < hi; i++) {
        s += tile_sums[i];
        m = max(m, tile_max[i]);
    }
    __syncthreads();
    atomicMax(&largest, m);
    uint32_t total;
    uint32_t acc = block_exclusive_scan(s, &total);
    for (uint32_t i = lo; i < hi; i++) {
        uint32_t t = tile_sums[i];
        tile_sums[i] = acc;
        acc += t;
    }
    if (threadIdx.x == 0) {
        starts[nb] = total;
        *big = largest > big_points;
    }
}

// starts[i] += the offset of its tile; cursors[i] = starts[i] (i < nb).
extern "C" __global__ void msm_scan_offsets(uint32_t* starts, uint32_t* cursors, uint32_t nb, const uint32_t* tile_sums) {
    size_t i = global_tid();
    if (i >= nb) return;
    uint32_t s = starts[i] + tile_sums[i / SCAN_TILE];
    starts[i] = s;
    cursors[i] = s;
}

// The counting sort's scatter (after the bucket scan): point i with digit d != 0
// goes to a position pos of bucket |d|, idx[pos] = i | (d < 0) << 31 (n <
// 2^31). The accumulation's thread t starts at position t*K and needs only
// the bucket there: thread_keys[t] = |d| where pos = t*K; it finds the
// buckets after it from the starts, so no key per position is written.
extern "C" __global__ void msm_scatter(const fr_t* scalars, size_t n, unsigned c, unsigned window,
                                       uint32_t* cursors, uint32_t K, uint32_t* idx, uint32_t* thread_keys) {
    size_t i = global_tid();
    if (i >= n) return;
    int32_t d = signed_digit(recoded_limbs(scalars, i), window, c);
    if (!d) return;
    uint32_t mag = d < 0 ? (uint32_t)-d : (uint32_t)d;
    uint32_t pos = atomicAdd(&cursors[mag], 1u);
    idx[pos] = (uint32_t)i | ((uint32_t)(d < 0) << 31);
    if (pos % K == 0) thread_keys[pos / K] = mag;
}

// The bucket holding sorted position p, after bucket cur (which ends at or
// before p): the first j > cur with starts[j + 1] > p (p < total =
// starts[nb], so j < nb); *end = starts[j + 1]. A few steps cover adjacent
// buckets; a binary search bounds a long run of empty buckets (skewed
// scalars leave most buckets of a window empty) to log2(nb) reads.
__device__ __forceinline__ uint32_t next_bucket(const uint32_t* starts, uint32_t nb, uint32_t cur, size_t p,
                                                size_t* end) {
    uint32_t j = cur + 1;
    for (unsigned step = 0; step < 4; step++, j++) {
        *end = starts[j + 1];
        if (*end > p) return j;
    }
    // Bucket j - 1 ends at or before p; the answer lies in [j, nb - 1].
    uint32_t lo = j, hi = nb - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (starts[mid + 1] > p) hi = mid;
        else lo = mid + 1;
    }
    *end = starts[lo + 1];
    return lo;
}

// Thread t sums sorted positions [t*K, t*K+K) run by run: base idx[p] &
// 0x7fffffff, subtracted where bit 31 of idx[p] is set (a negative digit; an
// infinity base is a no-op either way). The bucket at t*K is thread_keys[t]
// (the scatter's); a run ends where the next nonempty bucket starts
// (starts[d + 1]). Its first run goes to heads[t], its last (if different)
// to tails[t]; runs strictly inside are whole buckets and are written
// straight to buckets[] (no other thread sees them). With `keep_one`, the
// loop keeps xyzz_add_affine's record of ZZ = ZZZ = 1, which saves four
// products on each run's second point (see MSM_POINT_KERNELS for which group
// keeps it).
template<bool keep_one, class affine_t, class point_t>
__device__ __forceinline__ void msm_accumulate(const affine_t* bases, const uint32_t* idx, const uint32_t* thread_keys,
                                               const uint32_t* starts, uint32_t nb, uint32_t K, size_t threads,
                                               point_t* buckets, point_t* heads, uint32_t* head_keys,
                                               point_t* tails, uint32_t* tail_keys) {
    // `buckets` is this window's row of the all-windows bucket table.
    size_t t = global_tid();
    if (t >= threads) return;
    uint32_t total = starts[nb];
    size_t lo = t * (size_t)K, hi = min(lo + K, (size_t)total);
    head_keys[t] = INVALID;
    tail_keys[t] = INVALID;
    if (lo >= hi) return;
    point_t acc;
    acc.inf();
    bool one = false;  // acc is ±(a base): ZZ = ZZZ = 1 (xyzz_add_affine)
    uint32_t cur = thread_keys[t];
    size_t end = starts[cur + 1];
    bool first = true;
    for (size_t p = lo; p < hi; p++) {
        if (p >= end) {
            if (first) { heads[t] = acc; head_keys[t] = cur; first = false; }
            else buckets[cur] = acc;
            acc.inf();
            one = false;
            cur = next_bucket(starts, nb, cur, p, &end);
        }
        uint32_t ix = idx[p];
        affine_t b = bases[ix & 0x7fffffffu];
        if (!keep_one) one = false;
        add_affine(acc, b, ix >> 31, one);
    }
    if (first) { heads[t] = acc; head_keys[t] = cur; }
    else { tails[t] = acc; tail_keys[t] = cur; }
}

// The accumulation's partial sums, read in the order heads[0], tails[0],
// heads[1], tails[1], ... (entry i: heads[i/2] if i is even, else tails[i/2];
// INVALID keys skipped), are sorted by bucket, and each bucket's partials
// are contiguous. One merge level: thread u sums entries [u*K, u*K + K) run
// by run, like the accumulation. A run strictly inside its range is all that
// is left of its bucket and is written to buckets[key] (that bucket had no
// direct write: level 0 wrote only buckets without partials); its first and
// last runs become this level's heads_out/tails_out. Each level divides the
// entries by K/2, so a bucket holding most of the points (skewed scalars: many
// equal small values) is summed in log levels, not by one thread. The levels
// run only when the bucket scan found such a bucket (*big); otherwise the fix-up
// walks each bucket's few level-0 partials directly (less depth).
template<class point_t>
__device__ __forceinline__ void msm_merge_partials(const point_t* heads, const uint32_t* head_keys,
                                                   const point_t* tails, const uint32_t* tail_keys,
                                                   size_t entries, uint32_t K, size_t threads, point_t* buckets,
                                                   point_t* heads_out, uint32_t* head_keys_out,
                                                   point_t* tails_out, uint32_t* tail_keys_out, const uint32_t* big) {
    size_t u = global_tid();
    if (!*big || u >= threads) return;
    head_keys_out[u] = INVALID;
    tail_keys_out[u] = INVALID;
    size_t lo = u * (size_t)K, hi = min(lo + K, entries);
    point_t acc;
    acc.inf();
    uint32_t cur = INVALID;
    bool first = true;
    for (size_t i = lo; i < hi; i++) {
        uint32_t k = (i & 1) ? tail_keys[i >> 1] : head_keys[i >> 1];
        if (k == INVALID) continue;
        if (k != cur) {
            if (cur != INVALID) {
                if (first) { heads_out[u] = acc; head_keys_out[u] = cur; first = false; }
                else buckets[cur] = acc;
            }
            acc.inf();
            cur = k;
        }
        point_t p = (i & 1) ? tails[i >> 1] : heads[i >> 1];
        add_xyzz(acc, p);
    }
    if (cur == INVALID) return;
    if (first) { heads_out[u] = acc; head_keys_out[u] = cur; }
    else { tails_out[u] = acc; tail_keys_out[u] = cur; }
}

// buckets[d] += the partials of bucket d; one thread per bucket. With *big,
// from the last merge level's `entries` (few: the host merges until at most
// MERGE_FINAL_ENTRIES are left); otherwise from level 0, where bucket d's
// partials are those of the threads covering its sorted positions
// [starts[d], starts[d+1]) — at most big_points / K + 2 of them.
template<class point_t>
__device__ __forceinline__ void msm_fixup(point_t* buckets, uint32_t nb, const uint32_t* starts, uint32_t K,
                                          const point_t* heads0, const uint32_t* head_keys0,
                                          const point_t* tails0, const uint32_t* tail_keys0,
                                          const point_t* heads, const uint32_t* head_keys, const point_t* tails,
                                          const uint32_t* tail_keys, size_t entries, const uint32_t* big) {
    uint32_t d = (uint32_t)global_tid();
    if (d == 0 || d >= nb) return;
    point_t acc = buckets[d];
    bool touched = false;
    if (*big) {
        for (size_t i = 0; i < entries; i++) {
            uint32_t k = (i & 1) ? tail_keys[i >> 1] : head_keys[i >> 1];
            if (k == INVALID || k < d) continue;
            if (k > d) break;
            point_t p = (i & 1) ? tails[i >> 1] : heads[i >> 1];
            add_xyzz(acc, p);
            touched = true;
        }
    } else {
        uint32_t s = starts[d], e = starts[d + 1];
        if (s == e) return;
        for (uint32_t t = s / K; t <= (e - 1) / K; t++) {
            if (head_keys0[t] == d) { point_t h = heads0[t]; add_xyzz(acc, h); touched = true; }
            if (tail_keys0[t] == d) { point_t h = tails0[t]; add_xyzz(acc, h); touched = true; }
        }
    }
    if (touched) buckets[d] = acc;
}

// Segment s of window w covers digits [1 + s*L, 1 + (s+1)*L) ∩ [1, nb) of
// that window's buckets (row w of the all-windows table, nb points per row):
// out[w*segments + s] = sum over its digits of d * B_d
//                     = running-sum total + (lo - 1) * (sum of its B_d).
// One launch covers every window, so the GPU has windows*segments threads
// (a per-window launch left most SMs idle). Its five additions are
// sppark's xyzz_t::add, which the compiler keeps out of line: written out
// inline (add_xyzz), G1's kernel spills 620 bytes.
template<class point_t>
__device__ __forceinline__ void msm_bucket_segments(const point_t* buckets, uint32_t nb, uint32_t L,
                                                    uint32_t segments, uint32_t windows, point_t* out) {
    size_t t = global_tid();
    if (t >= (size_t)segments * windows) return;
    uint32_t w = (uint32_t)(t / segments), s = (uint32_t)(t % segments);
    const point_t* row = buckets + (size_t)w * nb;
    uint32_t lo = 1 + s * L, hi = min(lo + L, nb);
    point_t run, sum;
    run.inf();
    sum.inf();
    for (uint32_t d = hi; d-- > lo;) {
        point_t b = row[d];
        run.add(b);
        sum.add(run);
    }
    // sum += (lo - 1) * run, by double-and-add from the top set bit.
    uint32_t m = lo - 1;
    point_t mul;
    mul.inf();
    for (int bit = m ? 31 - __clz(m) : -1; bit >= 0; bit--) {
        point_t dbl = mul;
        mul.add(dbl);
        if ((m >> bit) & 1) mul.add(run);
    }
    sum.add(mul);
    out[t] = sum;
}

// dst[i] = src[pos[i]] for i < n, points of `words` u64 words each: the
// bases of a tail MSM gathered from the resident key on the device. One
// thread per word, so a warp copies consecutive words of a point.
extern "C" __global__ void gather_points(const uint64_t* src, const uint32_t* pos, size_t n, unsigned words,
                                         uint64_t* dst) {
    size_t t = global_tid();
    if (t >= n * words) return;
    size_t i = t / words, w = t % words;
    dst[t] = src[(size_t)pos[i] * words + w];
}

// The point kernels per group. KEEP_ONE: whether the accumulation keeps
// the record `one`. G1 does not: without it msm_accumulate_g1 takes 130
// registers (3 blocks of 128 per SM, 4 with it), and on an H100 its
// accumulation took 1.6 % less time at 2^24 points, 2.4 % at 2^26 and 2.3 %
// at the H-MSM's 2^27; a porep-32g tail of 2.1 M points, one wave at 4
// blocks, took 0.3-0.4 ms more (notes/GPU.md).
#define MSM_POINT_KERNELS(G, KEEP_ONE)                                                                            \
    extern "C" __global__ void msm_accumulate_##G(                                                                \
        const G##_affine_t* bases, const uint32_t* idx, const uint32_t* thread_keys, const uint32_t* starts,       \
        uint32_t nb, uint32_t K, size_t threads, G##_xyzz_t* buckets, G##_xyzz_t* heads, uint32_t* head_keys,     \
        G##_xyzz_t* tails, uint32_t* tail_keys) {                                                                 \
        msm_accumulate<KEEP_ONE>(bases, idx, thread_keys, starts, nb, K, threads, buckets, heads, head_keys,       \
                                 tails, tail_keys);                                                               \
    }                                                                                                             \
    extern "C" __global__ void msm_merge_partials_##G(                                                            \
        const G##_xyzz_t* heads, const uint32_t* head_keys, const G##_xyzz_t* tails, const uint32_t* tail_keys,  \
        size_t entries, uint32_t K, size_t threads, G##_xyzz_t* buckets, G##_xyzz_t* heads_out,                   \
        uint32_t* head_keys_out, G##_xyzz_t* tails_out, uint32_t* tail_keys_out, const uint32_t* big) {           \
        msm_merge_partials(heads, head_keys, tails, tail_keys, entries, K, threads, buckets, heads_out,           \
                           head_keys_out, tails_out, tail_keys_out, big);                                         \
    }                                                                                                             \
    extern "C" __global__ void msm_fixup_##G(                                                                     \
        G##_xyzz_t* buckets, uint32_t nb, const uint32_t* starts, uint32_t K, const G##_xyzz_t* heads0,           \
        const uint32_t* head_keys0, const G##_xyzz_t* tails0, const uint32_t* tail_keys0, const G##_xyzz_t* heads, \
        const uint32_t* head_keys, const G##_xyzz_t* tails, const uint32_t* tail_keys, size_t entries,            \
        const uint32_t* big) {                                                                                    \
        msm_fixup(buckets, nb, starts, K, heads0, head_keys0, tails0, tail_keys0, heads, head_keys, tails,        \
                  tail_keys, entries, big);                                                                       \
    }                                                                                                             \
    extern "C" __global__ void msm_bucket_segments_##G(const G##_xyzz_t* buckets, uint32_t nb, uint32_t L,       \
                                                       uint32_t segments, uint32_t windows, G##_xyzz_t* out) {    \
        msm_bucket_segments(buckets, nb, L, segments, windows, out);                                              \
    }

MSM_POINT_KERNELS(g1, false)
MSM_POINT_KERNELS(g2, true)
