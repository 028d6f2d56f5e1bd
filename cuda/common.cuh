// Shared definitions for the kernels: BLS12-381 field and G1 types from the
// sppark crate's headers, Fq2 and G2 types built on them, and small helpers.
// All field elements are in Montgomery form with little-endian limbs, the
// host's (blst's) layout, so buffers move between host and device byte for
// byte.
#pragma once

#include <cstddef>
#include <cstdint>

#include <ff/bls12-381.hpp>
#include <ec/xyzz_t.hpp>

using fr_t = bls12_381::fr_t;
using fp_t = bls12_381::fp_t;
// G1 accumulator (X, Y, ZZ, ZZZ) and affine point (X, Y), infinity = all zero.
using g1_xyzz_t = xyzz_t<fp_t>;
using g1_affine_t = g1_xyzz_t::affine_t;

// A Jacobian point as blst stores it (x, y, z: blst_p1 over fp_t, blst_p2
// over fq2_t), for results sent to the host.
template<class F> struct jacobian_out_t {
    F x, y, z;
};
using g1_jacobian_t = jacobian_out_t<fp_t>;

__device__ __forceinline__ size_t global_tid() {
    return (size_t)blockIdx.x * blockDim.x + threadIdx.x;
}

// x^e for a 64-bit exponent, square-and-multiply.
__device__ __forceinline__ fr_t fr_pow(fr_t x, uint64_t e) {
    fr_t acc = fr_t::one();
    while (e) {
        if (e & 1) acc *= x;
        x.sqr();
        e >>= 1;
    }
    return acc;
}

// The coordinates of an xyzz_t<F> in its member order; sppark keeps them
// private and offers no device-side conversion, so the object is read through
// this mirror (same members, same order, checked by the static_asserts).
template<class F> struct xyzz_raw_t {
    F X, Y, ZZZ, ZZ;
};
static_assert(sizeof(xyzz_raw_t<fp_t>) == sizeof(g1_xyzz_t), "G1 xyzz layout");

// xyzz -> Jacobian without inversion: x = X/ZZ = (X*ZZ)/ZZ^2 and
// y = Y/ZZZ = (Y*ZZZ)/ZZ^3 since ZZ^3 = ZZZ^2; infinity (ZZ = 0) maps to z = 0,
// which blst reads as the point at infinity.
template<class F, class H, const H* a4>
__device__ __forceinline__ jacobian_out_t<F> to_jacobian(const xyzz_t<F, H, a4>& p) {
    const xyzz_raw_t<F>& r = reinterpret_cast<const xyzz_raw_t<F>&>(p);
    jacobian_out_t<F> out;
    out.x = r.X * r.ZZ;
    out.y = r.Y * r.ZZZ;
    out.z = r.ZZ;
    return out;
}

// Fq2 = Fp[u]/(u^2 + 1), the field of G2's coordinates, with one thread
// holding both coefficients (c0 + c1*u, each an fp_t in Montgomery form: the
// layout of blst's blst_fp2). sppark's own fp2_t spreads one element over two
// lanes of a warp, which does not fit kernels where every thread owns its
// points; this type gives sppark's xyzz_t/Affine_t templates the operations
// they use on a field (add, sub, mul, square, conditional negate/select,
// zero tests).
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

// G2 accumulator and affine point (blst_p2_affine layout: x.c0, x.c1, y.c0, y.c1).
using g2_xyzz_t = xyzz_t<fq2_t>;
using g2_affine_t = g2_xyzz_t::affine_t;
using g2_jacobian_t = jacobian_out_t<fq2_t>;
static_assert(sizeof(g2_affine_t) == 192, "G2 affine layout");
static_assert(sizeof(xyzz_raw_t<fq2_t>) == sizeof(g2_xyzz_t), "G2 xyzz layout");
static_assert(sizeof(g2_jacobian_t) == 288, "G2 Jacobian layout");

// Reduction block size of the reduce_groups kernels (shared memory: 128
// points, 48 KiB for G2 — the static shared-memory limit, asserted here).
#define REDUCE_THREADS 128
static_assert(REDUCE_THREADS * sizeof(g2_xyzz_t) <= 48 * 1024, "reduce_groups shared memory");
