// The NTT pass of cuda/ntt.cu over any field type F (fr_t there; a small
// prime field in cuda/host/ntt_pass_host.cpp, which runs this source on the
// host, each block's threads as fibers): F needs +, -, * and a default
// constructor. The includer defines NTT_TILE_LG.
#pragma once

#include <cstddef>

#ifndef NTT_TILE_LG
#error "NTT_TILE_LG must be defined before ntt_pass.cuh"
#endif

// Powers from two tables, one multiplication per element:
// scale * base^i = lo[i mod 2^lg_lo] * hi[i >> lg_lo], with
// lo[j] = scale * base^j and hi[k] = base^(k * 2^lg_lo).
template <class F>
__device__ __forceinline__ F power_from_tables(const F* lo, const F* hi, unsigned lg_lo, size_t i) {
    return lo[i & (((size_t)1 << lg_lo) - 1)] * hi[i >> lg_lo];
}

// The twiddle of stage s0 + r for a pair at row offset `low` (< 2^r) of
// column t of the block (see ntt_pass): from roots in the first pass
// (s0 = 0, one column), else from the block's table in shared memory.
template <class F>
__device__ __forceinline__ F ntt_twiddle(const F* tws, const F* roots, unsigned s0, unsigned r, unsigned low,
                                         unsigned t, unsigned lg_t) {
    return s0 == 0 ? roots[low << (NTT_TILE_LG - 1 - r)] : tws[((((1u << r) - 1) + low) << lg_t) | t];
}

// M consecutive stages r .. r+M-1 of a block's tile in registers: each
// thread takes 2^M scalars of one column whose rows differ only in bits
// r .. r+M-1 (a radix-2^M butterfly group) and runs the M stages' radix-2
// butterflies on them, DIT upward and DIF downward, so the block meets one
// barrier per M stages and each scalar goes through shared memory once per
// M stages. Stage r + j pairs local indices l and l + 2^j; its twiddle's
// row offset is low + (l mod 2^j)·2^r, shared by the 2^(M-1-j) pairs with
// the same l mod 2^j (loaded once).
template <bool DIF, unsigned M, class F>
__device__ __forceinline__ void ntt_group(F* sh, const F* tws, const F* roots, unsigned s0, unsigned r,
                                          unsigned tile, unsigned lg_t) {
    const unsigned cols = 1u << lg_t;
    for (unsigned q = threadIdx.x; q < (tile >> M); q += blockDim.x) {
        const unsigned t = q & (cols - 1);
        const unsigned row = q >> lg_t;
        const unsigned low = row & ((1u << r) - 1);
        const unsigned e0 = ((((row >> r) << (r + M)) | low) << lg_t) | t;
        F x[1u << M];
#pragma unroll
        for (unsigned l = 0; l < (1u << M); l++) x[l] = sh[e0 + (l << (r + lg_t))];
#pragma unroll
        for (unsigned i = 0; i < M; i++) {
            const unsigned j = DIF ? M - 1 - i : i;
#pragma unroll
            for (unsigned m = 0; m < (1u << j); m++) {
                const F w = ntt_twiddle(tws, roots, s0, r + j, low + (m << r), t, lg_t);
#pragma unroll
                for (unsigned h = 0; h < (1u << (M - 1 - j)); h++) {
                    const unsigned l0 = (h << (j + 1)) | m, l1 = l0 | (1u << j);
                    F u = x[l0];
                    if (DIF) {
                        F v = x[l1];
                        x[l0] = u + v;
                        x[l1] = (u - v) * w;
                    } else {
                        F v = x[l1] * w;
                        x[l0] = u + v;
                        x[l1] = u - v;
                    }
                }
            }
        }
#pragma unroll
        for (unsigned l = 0; l < (1u << M); l++) sh[e0 + (l << (r + lg_t))] = x[l];
    }
}

// k consecutive radix-2 stages s0 .. s0+k-1 in shared memory, so a 2^24
// transform reads and writes the data 3 times instead of 24. The bits of an
// element's index are [0, s0) column, [s0, s0+k) row and [s0+k, lg_n) group;
// a stage s0+r pairs rows that differ in bit r. A block takes all 2^k rows of
// one group for 2^lg_t adjacent columns (global accesses come in runs of
// 2^lg_t elements), 2^(k+lg_t) <= 2^NTT_TILE_LG elements.
//
// DIT (decimation in time, fr_ntt_pass): after a bit reversal, stages in
// increasing order, butterfly (u + w*v, u - w*v); natural order out.
// DIF (decimation in frequency, fr_ntt_pass_dif): natural order in, stages
// in decreasing order, butterfly (u + v, (u - v)*w); bit-reversed order out.
// Both use the same twiddle for a pair of stage s = s0 + r at row offset
// `low` (< 2^r) of column `col`: w^(j * 2^(lg_n-1-s)) with j = low * 2^s0 + col,
// which factors into roots[low * 2^(NTT_TILE_LG-1-r)] (roots[i] =
// w_(2^NTT_TILE_LG)^i, a root of order 2^(r+1)) times w^(col * 2^(lg_n-1-s))
// (from the power tables lo/hi, one multiplication). No twiddle table of the
// domain's size is held: a block with s0 > 0 first builds its (2^k - 1) *
// 2^lg_t twiddles in shared memory (the column factors, then one
// multiplication each: about 2/k of the butterflies' multiplications); the
// pass with s0 = 0 (col = 0) reads roots directly. The stages run in groups
// of up to RADIX_LG stages, as even as k divides, each group in registers
// (ntt_group); src/gpu/ntt.rs launches one thread per scalar group of the
// largest groups, at most NTT_THREADS, and a thread takes several scalar
// groups in turn where a stage group is smaller or the cap binds (radix 2:
// 512 butterflies on 256 threads). Each radix is a kernel of its own,
// so that radix 2 keeps its few registers (and its occupancy) beside radix
// 8's 2^3 scalars per thread. Dynamic shared memory:
// ntt_shared_bytes(s0, k, lg_t) in src/gpu/ntt.rs.
//
// With `scale` (DIF only), the element written at position p is multiplied
// by slo/shi's power at bit-reverse(p) (power_from_tables): the coset shift of
// the coefficient that position holds, fused into the write.
template <bool DIF, unsigned RADIX_LG, class F>
__device__ __forceinline__ void ntt_pass(F* data, const F* roots, const F* lo, const F* hi, unsigned lg_lo,
                                         unsigned lg_n, unsigned s0, unsigned k, unsigned lg_t,
                                         const F* slo, const F* shi, unsigned lg_slo, bool scale) {
    static_assert(RADIX_LG >= 1 && RADIX_LG <= 3, "stage groups of 1 to 3 stages");
    // Raw storage: the element type has a constructor, which __shared__ arrays may not run.
    extern __shared__ __align__(16) unsigned char sh_raw[];
    F* sh = reinterpret_cast<F*>(sh_raw);
    const unsigned tile = 1u << (k + lg_t);
    const unsigned cols = 1u << lg_t;
    // Stage r's twiddles at (2^r - 1) * cols + low * cols + t, then k * cols column factors.
    F* tws = sh + tile;
    F* colf = tws + (tile - cols);
    const size_t col_blocks = ((size_t)1 << s0) >> lg_t;
    const size_t col0 = (blockIdx.x % col_blocks) << lg_t;
    const size_t base = ((size_t)(blockIdx.x / col_blocks) << (s0 + k)) + col0;
    for (unsigned e = threadIdx.x; e < tile; e += blockDim.x)
        sh[e] = data[base + ((size_t)(e >> lg_t) << s0) + (e & (cols - 1))];
    if (s0 > 0) {
        const size_t lo_mask = ((size_t)1 << lg_lo) - 1;
        for (unsigned e = threadIdx.x; e < k * cols; e += blockDim.x) {
            unsigned r = e >> lg_t, t = e & (cols - 1);
            size_t x = (col0 + t) << (lg_n - 1 - (s0 + r));
            colf[e] = lo[x & lo_mask] * hi[x >> lg_lo];
        }
        __syncthreads();
        for (unsigned e = threadIdx.x; e < tile - cols; e += blockDim.x) {
            unsigned m = (e >> lg_t) + 1;  // 2^r + low
            unsigned r = 31 - __clz(m);
            unsigned low = m - (1u << r);
            tws[e] = roots[low << (NTT_TILE_LG - 1 - r)] * colf[(r << lg_t) | (e & (cols - 1))];
        }
    }
    __syncthreads();
    // The k stages in groups of up to RADIX_LG stages, as even as they
    // divide (sizes m <= RADIX_LG), one barrier after each (ntt_group).
    const unsigned groups = (k + RADIX_LG - 1) / RADIX_LG;
    for (unsigned g = 0, done = 0; g < groups; g++) {
        const unsigned m = k / groups + (g < k % groups);
        // DIT runs the stages upward from 0, DIF downward from k - 1.
        const unsigned r = DIF ? k - done - m : done;
        if constexpr (RADIX_LG >= 3) {
            if (m == 3) ntt_group<DIF, 3>(sh, tws, roots, s0, r, tile, lg_t);
        }
        if constexpr (RADIX_LG >= 2) {
            if (m == 2) ntt_group<DIF, 2>(sh, tws, roots, s0, r, tile, lg_t);
        }
        if (m == 1) ntt_group<DIF, 1>(sh, tws, roots, s0, r, tile, lg_t);
        done += m;
        __syncthreads();
    }
    for (unsigned e = threadIdx.x; e < tile; e += blockDim.x) {
        size_t p = base + ((size_t)(e >> lg_t) << s0) + (e & (cols - 1));
        if (DIF && scale) {
            size_t j = __brevll((unsigned long long)p) >> (64 - lg_n);
            data[p] = sh[e] * power_from_tables(slo, shi, lg_slo, j);
        } else {
            data[p] = sh[e];
        }
    }
}

