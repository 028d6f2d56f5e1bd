// BLS12-381's base field in eight 52-bit limbs held in doubles, multiplied
// on the FP64 units: the candidate for a field multiplication that the MSM's
// accumulation could run beside the integer units (sppark's fp_t multiplies
// with 32-bit IMADs only, and the FP64 units sit idle). Measured against
// fp_t by gpu_bench's `Fp multiplication` row; nothing else uses it yet.
//
// A limb product a·b (a, b < 2^52) splits into two exact doubles with two
// fused multiply-adds rounded toward zero (the split of Emmart, Zheng and
// Weems, "Faster modular exponentiation using double precision floating
// point arithmetic on the GPU", ARITH 2018):
//   hi = fma_rz(a, b, 2^104)               = 2^104 + floor(ab / 2^52)·2^52
//   lo = fma_rz(a, b, 2^104 + 2^52 − hi)   = 2^52 + (ab mod 2^52)
// Each one's bit pattern, read as an integer, is a fixed bias plus the half
// it carries (HI_BIAS + floor(ab / 2^52), LO_BIAS + ab mod 2^52), and both
// biases have their low 52 bits zero. The columns of the product therefore
// add bit patterns as 64-bit integers (wrapping) and start from minus the
// biases they will receive, which leaves each column's low 52 bits right at
// every step and the column exact once all its halves are in.
//
// Montgomery form with R = 2^416: fp52_mul(a, b) = a·b·2^-416 mod p, for
// a, b < 2p, in [0, 2p) (a·b + m·p < 4p² + 2^416·p, and 4p < 2^416).
// Needs __fma_rz, __double_as_longlong and __longlong_as_double (CUDA's, or
// the host check's, cuda/host/fp52_host.cpp).
#pragma once

#include <cstdint>

#define FP52_LIMBS 8

struct fp52_t {
    double l[FP52_LIMBS];  // value = Σ l[i]·2^(52 i), each l[i] an integer in [0, 2^52)
};

namespace fp52 {

constexpr uint64_t MASK = (uint64_t(1) << 52) - 1;
constexpr uint64_t LO_BIAS = uint64_t(0x433) << 52;  // the bits of 2^52
constexpr uint64_t HI_BIAS = uint64_t(0x467) << 52;  // the bits of 2^104
// -p^-1 mod 2^52
constexpr uint64_t PINV = 0x3fffcfffcfffdull;

// p in 52-bit limbs (l = 0 .. 7), as doubles.
__device__ __forceinline__ double p_limb(unsigned l) {
    return (double)(l == 0   ? 0xeffffffffaaabull
                    : l == 1 ? 0xfeb153ffffb9full
                    : l == 2 ? 0x6b0f6241eabffull
                    : l == 3 ? 0x12bf6730d2a0full
                    : l == 4 ? 0x764774b84f385ull
                    : l == 5 ? 0x1ba7b6434bacdull
                    : l == 6 ? 0x1ea397fe69a4bull
                             : 0x1a011ull);
}

// How many limb pairs (i, j) have i + j = k.
__device__ __forceinline__ constexpr unsigned pairs(int k) {
    return k < 0 || k > 2 * (FP52_LIMBS - 1) ? 0 : (k < FP52_LIMBS ? k + 1 : 2 * FP52_LIMBS - 1 - k);
}

// x (< 2^52) as a double, by its bit pattern: one OR and one FP64 subtraction.
__device__ __forceinline__ double to_double(uint64_t x) {
    return __longlong_as_double((long long)(LO_BIAS | x)) - 0x1p52;
}

// Adds a·b's halves into columns t[k] and t[k + 1].
__device__ __forceinline__ void mul_add(uint64_t* t, unsigned k, double a, double b) {
    const double hi = __fma_rz(a, b, 0x1p104);
    const double lo = __fma_rz(a, b, (0x1p104 + 0x1p52) - hi);
    t[k] += (uint64_t)__double_as_longlong(lo);
    t[k + 1] += (uint64_t)__double_as_longlong(hi);
}

}  // namespace fp52

__device__ __forceinline__ fp52_t fp52_mul(const fp52_t& a, const fp52_t& b) {
    using namespace fp52;
    // Column k gets a low half from each pair (i, j) with i + j = k and a
    // high half from each with i + j = k − 1, once for a·b and once for m·p.
    uint64_t t[2 * FP52_LIMBS];
#pragma unroll
    for (int k = 0; k < 2 * FP52_LIMBS; k++) t[k] = 0 - 2 * (pairs(k) * LO_BIAS + pairs(k - 1) * HI_BIAS);
#pragma unroll
    for (unsigned i = 0; i < FP52_LIMBS; i++)
#pragma unroll
        for (unsigned j = 0; j < FP52_LIMBS; j++) mul_add(t, i + j, a.l[i], b.l[j]);
    // Montgomery reduction, a 52-bit limb at a time: column i's low 52 bits
    // are right (the biases' are zero), so m_i makes them zero; once row i's
    // halves are in, column i is exact and its carry moves up.
#pragma unroll
    for (unsigned i = 0; i < FP52_LIMBS; i++) {
        const double m = to_double((t[i] * PINV) & MASK);
#pragma unroll
        for (unsigned j = 0; j < FP52_LIMBS; j++) mul_add(t, i + j, m, p_limb(j));
        t[i + 1] += t[i] >> 52;
    }
    fp52_t r;
#pragma unroll
    for (unsigned k = FP52_LIMBS; k < 2 * FP52_LIMBS - 1; k++) {
        t[k + 1] += t[k] >> 52;
        r.l[k - FP52_LIMBS] = to_double(t[k] & MASK);
    }
    r.l[FP52_LIMBS - 1] = to_double(t[2 * FP52_LIMBS - 1]);
    return r;
}
