// The device half of the params loader's batched subgroup check
// (src/srs/subgroup.rs has the test and its soundness argument): each
// point's bucket in one group of rounds, from the same ChaCha8 stream as the
// host's (rand_chacha's ChaCha8Rng: 64-bit block counter in words 12-13, the
// stream in words 14-15), so that device and host bucket sums are equal;
// a counting sort of the points by bucket; the bucket sums then come from the
// MSM's accumulation kernels (msm.cu), and chunk tables are added up here.
#include <cstddef>
#include <cstdint>

#include "g1.cuh"
#include "g2.cuh"
#include "util.cuh"

__device__ __forceinline__ uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

__device__ __forceinline__ void chacha_quarter(uint32_t* x, int a, int b, int c, int d) {
    x[a] += x[b]; x[d] = rotl32(x[d] ^ x[a], 16);
    x[c] += x[d]; x[b] = rotl32(x[b] ^ x[c], 12);
    x[a] += x[b]; x[d] = rotl32(x[d] ^ x[a], 8);
    x[c] += x[d]; x[b] = rotl32(x[b] ^ x[c], 7);
}

// out[i - first] = bucket of point i for i in [first, first + n): word i of
// ChaCha8(key, stream) mapped to [0, buckets) by multiply-shift (the high 32
// bits of word * buckets), as the host's bucket_indices. Thread t computes
// the 16 words of block first/16 + t.
extern "C" __global__ void subgroup_bucket_keys(const uint32_t* key, uint64_t stream, size_t first, size_t n,
                                                uint32_t buckets, uint32_t* out) {
    size_t block = first / 16 + global_tid();
    size_t lo = block * 16;
    if (lo >= first + n) return;
    uint32_t s[16], x[16];
    s[0] = 0x61707865u; s[1] = 0x3320646eu; s[2] = 0x79622d32u; s[3] = 0x6b206574u;
    for (int i = 0; i < 8; i++) s[4 + i] = key[i];
    s[12] = (uint32_t)block;
    s[13] = (uint32_t)((uint64_t)block >> 32);
    s[14] = (uint32_t)stream;
    s[15] = (uint32_t)(stream >> 32);
    for (int i = 0; i < 16; i++) x[i] = s[i];
    for (int r = 0; r < 4; r++) {  // 8 rounds: 4 double rounds
        chacha_quarter(x, 0, 4, 8, 12);
        chacha_quarter(x, 1, 5, 9, 13);
        chacha_quarter(x, 2, 6, 10, 14);
        chacha_quarter(x, 3, 7, 11, 15);
        chacha_quarter(x, 0, 5, 10, 15);
        chacha_quarter(x, 1, 6, 11, 12);
        chacha_quarter(x, 2, 7, 8, 13);
        chacha_quarter(x, 3, 4, 9, 14);
    }
    for (int i = 0; i < 16; i++) {
        size_t p = lo + i;
        if (p >= first && p < first + n) out[p - first] = __umulhi(x[i] + s[i], buckets);
    }
}

// counts[d] = points with key d, for d ≥ 1 (bucket 0 enters no round).
extern "C" __global__ void bucket_histogram(const uint32_t* keys, size_t n, uint32_t* counts) {
    size_t i = global_tid();
    if (i >= n) return;
    uint32_t d = keys[i];
    if (d) atomicAdd(&counts[d], 1u);
}

// The counting sort's scatter (after the bucket scan): points of bucket d ≥ 1 go to
// positions [starts[d], starts[d+1]) in any order; thread_keys[t] is the
// bucket at position t*K (see msm_scatter).
extern "C" __global__ void bucket_scatter(const uint32_t* keys, size_t n, uint32_t* cursors, uint32_t K,
                                          uint32_t* idx, uint32_t* thread_keys) {
    size_t i = global_tid();
    if (i >= n) return;
    uint32_t d = keys[i];
    if (!d) return;
    uint32_t pos = atomicAdd(&cursors[d], 1u);
    idx[pos] = (uint32_t)i;
    if (pos % K == 0) thread_keys[pos / K] = d;
}

// total[i] += part[i] for i < n (a chunk's bucket table into the vector's).
template<class point_t>
__device__ __forceinline__ void add_tables(point_t* total, const point_t* part, size_t n) {
    size_t i = global_tid();
    if (i >= n) return;
    point_t a = total[i];
    point_t b = part[i];
    add_xyzz(a, b);
    total[i] = a;
}

extern "C" __global__ void g1_add_tables(g1_xyzz_t* total, const g1_xyzz_t* part, size_t n) { add_tables(total, part, n); }
extern "C" __global__ void g2_add_tables(g2_xyzz_t* total, const g2_xyzz_t* part, size_t n) { add_tables(total, part, n); }
