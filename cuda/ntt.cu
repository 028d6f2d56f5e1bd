// Fr NTT kernels (radix-2, decimation in time after a bit-reversal) and the
// pointwise steps of the quotient polynomial (DESIGN §4). The host drives the
// stages (src/gpu/ntt.rs); every kernel works in place on n = 2^lg_n elements.
#include "common.cuh"

// consts[0] = base, consts[1] = scale: out[i] = scale * base^i.
extern "C" __global__ void fr_powers(fr_t* out, const fr_t* consts, size_t n) {
    size_t i = global_tid();
    if (i >= n) return;
    out[i] = consts[1] * fr_pow(consts[0], i);
}

// data[i] *= scale * base^i (coset shift, with the 1/n of an inverse transform folded in).
extern "C" __global__ void fr_mul_powers(fr_t* data, const fr_t* consts, size_t n) {
    size_t i = global_tid();
    if (i >= n) return;
    data[i] = data[i] * (consts[1] * fr_pow(consts[0], i));
}

// data[i] *= consts[0]
extern "C" __global__ void fr_scale(fr_t* data, const fr_t* consts, size_t n) {
    size_t i = global_tid();
    if (i >= n) return;
    data[i] = data[i] * consts[0];
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

// One butterfly stage with half-size 2^stage; tw[k] = w^k for k < n/2.
extern "C" __global__ void fr_ntt_stage(fr_t* data, const fr_t* tw, unsigned lg_n, unsigned stage) {
    size_t t = global_tid();
    if (t >= ((size_t)1 << (lg_n - 1))) return;
    size_t half = (size_t)1 << stage;
    size_t j = t & (half - 1);
    size_t i0 = ((t >> stage) << (stage + 1)) + j;
    size_t i1 = i0 + half;
    fr_t w = tw[j << (lg_n - 1 - stage)];
    fr_t u = data[i0];
    fr_t v = data[i1] * w;
    data[i0] = u + v;
    data[i1] = u - v;
}

// a[i] = (a[i]*b[i] - c[i]) * consts[0], with consts[0] = 1/(g^n - 1).
extern "C" __global__ void fr_quotient_pointwise(fr_t* a, const fr_t* b, const fr_t* c,
                                                 const fr_t* consts, size_t n) {
    size_t i = global_tid();
    if (i >= n) return;
    a[i] = (a[i] * b[i] - c[i]) * consts[0];
}

// In place, Montgomery form -> canonical integer (for MSM digit extraction).
extern "C" __global__ void fr_from_montgomery(fr_t* data, size_t n) {
    size_t i = global_tid();
    if (i >= n) return;
    fr_t v = data[i];
    v.from();
    data[i] = v;
}
