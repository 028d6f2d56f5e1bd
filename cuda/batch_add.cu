// Batch addition (docs/ARCHITECTURE.md §4 split MSM) in G1 and G2: the sum of the bases
// whose bit is set in a bitmap, for every circuit of a call in one pass over the
// bases. Each thread sums a contiguous chunk for one circuit with mixed
// additions, into a partial sum that stays on the device across the chunks
// of bases; reduce_groups then folds the partial sums in groups. The
// kernels are written once over the point types and instantiated per group.
#include <cstddef>
#include <cstdint>

#include "g1.cuh"
#include "g2.cuh"
#include "jacobian.cuh"
#include "util.cuh"

// Reduction block size of the reduce_groups kernels (REDUCE_THREADS in
// src/gpu/msm.rs; shared memory: 128 points, 48 KiB for G2 — the static
// shared-memory limit, asserted here).
#define REDUCE_THREADS 128
static_assert(REDUCE_THREADS * sizeof(g2_xyzz_t) <= 48 * 1024, "reduce_groups shared memory");

// Batch addition of `circuits` bitmaps over one chunk of bases in one pass.
// Thread g sums chunk t = g / circuits for circuit k = g % circuits, so the
// `circuits` threads of one chunk sit side by side in a warp and read the
// chunk's bases, each at its own circuit's set bits, from the same few
// cache lines: the bases are read from device memory once per pass, not
// once per circuit. Circuit k's bitmap starts at bitmaps + k * words; the
// chunk's first point is bit 0 of word first_word (a chunk starts on a word).
// partials[k * slots + t] = sum of bases[i], i in chunk t, bit i set for k
// (slots ≥ ceil(n / chunk): the reduction sums each circuit's slots in
// equal groups). With `add`, the sum is added to what the slot holds (the
// previous chunks of bases: the partial sums stay on the device until the
// last chunk, then one reduction); without, the slot is overwritten, with
// the identity for chunks t past the bases. With `keep_one`, the loop keeps
// xyzz_add_affine's record of ZZ = ZZZ = 1, which saves four products on
// one addition of a chunk's ~256 (see the kernels for which group keeps it).
template<bool keep_one, class affine_t, class point_t>
__device__ __forceinline__ void batch_add(const affine_t* bases, const uint64_t* bitmaps, size_t words,
                                          size_t first_word, size_t n, size_t chunk, size_t circuits,
                                          size_t slots, unsigned add, point_t* partials) {
    size_t g = global_tid();
    size_t t = g / circuits, k = g % circuits;
    if (t >= slots || (add && t * chunk >= n)) return;
    const uint64_t* bitmap = bitmaps + k * words + first_word;
    // The chunk's words [w, end) (chunk is a multiple of 64; the last word
    // is masked at n). One addition per iteration, for the next set bit of
    // this lane's circuit: the lanes of a warp add together, and the warp
    // runs as many iterations as its densest lane has set bits, not one per
    // base (a bit test per base left the lanes whose bit is clear idle
    // while the others added).
    size_t lo = t * chunk, hi = min(lo + chunk, n);
    size_t w = lo >> 6, end = lo < n ? (hi + 63) >> 6 : w;
    // The previous chunks' sum, where there is one, is where this sum
    // starts: the loop's additions are then the kernel's only ones (no
    // addition of two accumulators after it, which the compiler keeps out
    // of line over fq2_t, with the accumulator in local memory throughout).
    point_t acc;
    if (add) acc = partials[k * slots + t];
    else acc.inf();
    bool one = false;  // acc is ±(a base): ZZ = ZZZ = 1 (xyzz_add_affine)
    uint64_t m = 0;
    for (;;) {
        while (m == 0 && w < end) {
            m = bitmap[w];
            if (w + 1 == end && (hi & 63)) m &= (1ull << (hi & 63)) - 1;
            w++;
        }
        if (m == 0) break;
        size_t i = ((w - 1) << 6) + (__ffsll((long long)m) - 1);
        m &= m - 1;
        affine_t p = bases[i];
        if (!keep_one) one = false;
        add_affine(acc, p, false, one);
    }
    partials[k * slots + t] = acc;
}

// out[g] = sum of in[g*per_group .. (g+1)*per_group), as a Jacobian point.
// One block of REDUCE_THREADS threads per group.
template<class point_t, class jacobian_t>
__device__ __forceinline__ void reduce_groups(const point_t* in, size_t per_group, jacobian_t* out) {
    // Raw storage: the point type has a constructor, which __shared__ arrays may not run.
    __shared__ __align__(16) unsigned char sh_raw[REDUCE_THREADS * sizeof(point_t)];
    point_t* sh = reinterpret_cast<point_t*>(sh_raw);
    const point_t* base = in + (size_t)blockIdx.x * per_group;
    point_t acc;
    acc.inf();
    for (size_t k = threadIdx.x; k < per_group; k += blockDim.x) {
        point_t p = base[k];
        add_xyzz(acc, p);
    }
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            point_t a = sh[threadIdx.x];
            point_t b = sh[threadIdx.x + s];
            add_xyzz(a, b);
            sh[threadIdx.x] = a;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = to_jacobian(sh[0]);
}

extern "C" __global__ void g1_batch_add(const g1_affine_t* bases, const uint64_t* bitmaps, size_t words,
                                        size_t first_word, size_t n, size_t chunk, size_t circuits, size_t slots,
                                        unsigned add, g1_xyzz_t* partials) {
    // No record of ZZ = ZZZ = 1: its branch takes this kernel from 128
    // registers to 130, one block of 128 fewer per SM.
    batch_add<false>(bases, bitmaps, words, first_word, n, chunk, circuits, slots, add, partials);
}
extern "C" __global__ void g2_batch_add(const g2_affine_t* bases, const uint64_t* bitmaps, size_t words,
                                        size_t first_word, size_t n, size_t chunk, size_t circuits, size_t slots,
                                        unsigned add, g2_xyzz_t* partials) {
    // The record kept: ptxas then spills 104 bytes here where it spills
    // 288 without.
    batch_add<true>(bases, bitmaps, words, first_word, n, chunk, circuits, slots, add, partials);
}
extern "C" __global__ void g1_reduce_groups(const g1_xyzz_t* input, size_t per_group, g1_jacobian_t* out) {
    reduce_groups(input, per_group, out);
}
extern "C" __global__ void g2_reduce_groups(const g2_xyzz_t* input, size_t per_group, g2_jacobian_t* out) {
    reduce_groups(input, per_group, out);
}
