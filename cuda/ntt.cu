// Fr NTT kernels (radix-2 decimation in time after a bit reversal, several
// stages per pass in shared memory) and the pointwise steps of the quotient
// polynomial (docs/ARCHITECTURE.md §4). The host drives the passes (src/gpu/ntt.rs); every
// kernel works in place on n = 2^lg_n elements.
#include <cstddef>

#include "fr.cuh"
#include "util.cuh"

// Elements held in shared memory by one fr_ntt_pass block.
#define NTT_TILE_LG 10

#include "ntt_pass.cuh"

// consts[0] = base, consts[1] = scale: out[i] = scale * base^i. Used only for
// the small tables of fr_mul_powers_tab and the NTT's twiddles (one exponentiation
// per element is too slow for whole domains).
extern "C" __global__ void fr_powers(fr_t* out, const fr_t* consts, size_t n) {
    size_t i = global_tid();
    if (i >= n) return;
    out[i] = consts[1] * fr_pow(consts[0], i);
}

// data[i] *= scale * base^i (coset shift, with the 1/n of an inverse transform folded in).
extern "C" __global__ void fr_mul_powers_tab(fr_t* data, const fr_t* lo, const fr_t* hi, unsigned lg_lo, size_t n) {
    size_t i = global_tid();
    if (i >= n) return;
    data[i] = data[i] * power_from_tables(lo, hi, lg_lo, i);
}

extern "C" __global__ void fr_bit_reverse(fr_t* data, unsigned lg_n) {
    size_t i = global_tid();
    size_t n = (size_t)1 << lg_n;
    if (i >= n) return;
    size_t j = __brevll((unsigned long long)i) >> (64 - lg_n);
    if (i < j) {
        fr_t t = data[i];
        data[i] = data[j];
        data[j] = t;
    }
}

// The passes per radix (RADIX_LG = 1, 2, 3: fr_ntt_pass, fr_ntt_pass_r4,
// fr_ntt_pass_r8, and the same for DIF), one kernel each (see ntt_pass).
#define NTT_PASS_KERNELS(SUFFIX, RADIX_LG)                                                                        \
    extern "C" __global__ void fr_ntt_pass##SUFFIX(fr_t* data, const fr_t* roots, const fr_t* lo, const fr_t* hi,  \
                                                   unsigned lg_lo, unsigned lg_n, unsigned s0, unsigned k,        \
                                                   unsigned lg_t) {                                                \
        ntt_pass<false, RADIX_LG, fr_t>(data, roots, lo, hi, lg_lo, lg_n, s0, k, lg_t, nullptr, nullptr, 0, false); \
    }                                                                                                              \
    extern "C" __global__ void fr_ntt_pass_dif##SUFFIX(fr_t* data, const fr_t* roots, const fr_t* lo, const fr_t* hi, \
                                                       unsigned lg_lo, unsigned lg_n, unsigned s0, unsigned k,    \
                                                       unsigned lg_t, const fr_t* slo, const fr_t* shi,           \
                                                       unsigned lg_slo, unsigned scale) {                         \
        ntt_pass<true, RADIX_LG, fr_t>(data, roots, lo, hi, lg_lo, lg_n, s0, k, lg_t, slo, shi, lg_slo, scale != 0); \
    }

NTT_PASS_KERNELS(, 1)
NTT_PASS_KERNELS(_r4, 2)
NTT_PASS_KERNELS(_r8, 3)

// a[i] = (a[i]*b[i] - c[i]) * consts[0], with consts[0] = 1/(g^n - 1).
extern "C" __global__ void fr_quotient_pointwise(fr_t* a, const fr_t* b, const fr_t* c,
                                                 const fr_t* consts, size_t n) {
    size_t i = global_tid();
    if (i >= n) return;
    a[i] = (a[i] * b[i] - c[i]) * consts[0];
}
