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
// pass with s0 = 0 (col = 0) reads roots directly. Dynamic shared memory:
// ntt_shared_bytes(s0, k, lg_t) in src/gpu/ntt.rs.
//
// With `scale` (DIF only), the element written at position p is multiplied
// by slo/shi's power at bit-reverse(p) (power_from_tables): the coset shift of
// the coefficient that position holds, fused into the write.
template <bool DIF, class F>
__device__ __forceinline__ void ntt_pass(F* data, const F* roots, const F* lo, const F* hi, unsigned lg_lo,
                                         unsigned lg_n, unsigned s0, unsigned k, unsigned lg_t,
                                         const F* slo, const F* shi, unsigned lg_slo, bool scale) {
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
    for (unsigned i = 0; i < k; i++) {
        const unsigned r = DIF ? k - 1 - i : i;
        for (unsigned q = threadIdx.x; q < tile / 2; q += blockDim.x) {
            unsigned t = q & (cols - 1);
            unsigned row = q >> lg_t;
            unsigned low = row & ((1u << r) - 1);
            unsigned row0 = ((row >> r) << (r + 1)) | low;
            unsigned e0 = (row0 << lg_t) | t;
            unsigned e1 = e0 + (1u << (r + lg_t));
            F w = s0 == 0 ? roots[low << (NTT_TILE_LG - 1 - r)] : tws[((((1u << r) - 1) + low) << lg_t) | t];
            F u = sh[e0];
            if (DIF) {
                F v = sh[e1];
                sh[e0] = u + v;
                sh[e1] = (u - v) * w;
            } else {
                F v = sh[e1] * w;
                sh[e0] = u + v;
                sh[e1] = u - v;
            }
        }
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

