// Fq2 = Fp[u]/(u^2 + 1), the field of G2's coordinates, with one thread
// holding both coefficients (c0 + c1*u, each an fp_t in Montgomery form: the
// layout of blst's blst_fp2). sppark's own fp2_t spreads one element over two
// lanes of a warp, which does not fit kernels where every thread owns its
// points; this type gives sppark's xyzz_t/Affine_t templates the operations
// they use on a field (add, sub, mul, square, conditional negate/select,
// zero tests).
#pragma once

#include "fp.cuh"

struct fq2_t {
    fp_t c0, c1;

    static const unsigned degree = 2;
    using mem_t = fq2_t;

    fq2_t() = default;
    __device__ __forceinline__ fq2_t(const fp_t& a, const fp_t& b) : c0(a), c1(b) {}

    // 1, or 0 when or_zero is set.
    static __device__ __forceinline__ fq2_t one(int or_zero = 0) {
        return fq2_t(fp_t::one(or_zero), fp_t::one(1));
    }
    __device__ __forceinline__ void zero() { c0.zero(); c1.zero(); }
    __device__ __forceinline__ bool is_zero() const { return c0.is_zero(c1); }
    // Whether this and b are both zero (sppark's two-operand form).
    __device__ __forceinline__ bool is_zero(const fq2_t& b) const {
        return (int)c0.is_zero(c1) & (int)b.c0.is_zero(b.c1);
    }
    __device__ __forceinline__ fq2_t& cneg(bool neg) {
        c0.cneg(neg);
        c1.cneg(neg);
        return *this;
    }
    static __device__ __forceinline__ fq2_t csel(const fq2_t& a, const fq2_t& b, int sel_a) {
        return fq2_t(fp_t::csel(a.c0, b.c0, sel_a), fp_t::csel(a.c1, b.c1, sel_a));
    }

    friend __device__ __forceinline__ fq2_t operator+(const fq2_t& a, const fq2_t& b) {
        return fq2_t(a.c0 + b.c0, a.c1 + b.c1);
    }
    friend __device__ __forceinline__ fq2_t operator-(const fq2_t& a, const fq2_t& b) {
        return fq2_t(a.c0 - b.c0, a.c1 - b.c1);
    }
    // Karatsuba: (a0 + a1 u)(b0 + b1 u) = (a0 b0 - a1 b1) + ((a0 + a1)(b0 + b1) - a0 b0 - a1 b1) u.
    friend __device__ __forceinline__ fq2_t operator*(const fq2_t& a, const fq2_t& b) {
        fp_t t0 = a.c0 * b.c0;
        fp_t t1 = a.c1 * b.c1;
        fp_t t2 = (a.c0 + a.c1) * (b.c0 + b.c1);
        return fq2_t(t0 - t1, t2 - t0 - t1);
    }
    // (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u.
    __device__ __forceinline__ fq2_t& sqr() {
        fp_t m = c0 * c1;
        c0 = (c0 + c1) * (c0 - c1);
        c1 = m + m;
        return *this;
    }
    // sppark's templates write squaring as x^2; no other power is used.
    friend __device__ __forceinline__ fq2_t operator^(fq2_t a, int p) {
        if (p != 2) __trap();
        return a.sqr();
    }
    __device__ __forceinline__ fq2_t& operator+=(const fq2_t& b) { return *this = *this + b; }
    __device__ __forceinline__ fq2_t& operator-=(const fq2_t& b) { return *this = *this - b; }
    __device__ __forceinline__ fq2_t& operator*=(const fq2_t& b) { return *this = *this * b; }
};

// a·b − c·d over Fq2 (xyzz_add.cuh's Y3) as three Fp sums of two products,
// each with one Montgomery reduction (fp.cuh's mul_sub_mul), where two
// Karatsuba products take six Fp multiplications: 108 rows of 12 limb
// products instead of 144. With t0 = a0 b0 − c0 d0, t1 = a1 b1 − c1 d1 and
// t2 = (a0 + a1)(b0 + b1) − (c0 + c1)(d0 + d1), the real part is t0 − t1
// and the u part t2 − t0 − t1 = a0 b1 + a1 b0 − c0 d1 − c1 d0. fp_t's sums
// are reduced below p, as the shared reduction needs of its inputs. The
// sums are made fp_t before t2's call: sppark's + returns its base type
// (fp_mont), for which xyzz_add.cuh's generic template, two reductions,
// would be the exact match.
__device__ __forceinline__ fq2_t mul_sub_mul(const fq2_t& a, const fq2_t& b, const fq2_t& c, const fq2_t& d) {
    fp_t t0 = mul_sub_mul(a.c0, b.c0, c.c0, d.c0);
    fp_t t1 = mul_sub_mul(a.c1, b.c1, c.c1, d.c1);
    const fp_t a01 = a.c0 + a.c1, b01 = b.c0 + b.c1, c01 = c.c0 + c.c1, d01 = d.c0 + d.c1;
    fp_t t2 = mul_sub_mul(a01, b01, c01, d01);
    return fq2_t(t0 - t1, t2 - t0 - t1);
}
