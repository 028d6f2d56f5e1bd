// Shared definitions for the kernels: BLS12-381 field and G1 types from the
// sppark crate's headers, and small helpers. All field elements are in
// Montgomery form with little-endian limbs, the host's (blst's) layout, so
// buffers move between host and device byte for byte.
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

// A Jacobian G1 point as blst stores it (x, y, z), for results sent to the host.
struct g1_jacobian_t {
    fp_t x, y, z;
};

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

// The coordinates of a g1_xyzz_t in its member order; sppark keeps them
// private and offers no device-side conversion, so the object is read through
// this mirror (same members, same order, checked by the static_assert).
struct g1_xyzz_raw_t {
    fp_t X, Y, ZZZ, ZZ;
};
static_assert(sizeof(g1_xyzz_raw_t) == sizeof(g1_xyzz_t), "xyzz layout");

// xyzz -> Jacobian without inversion: x = X/ZZ = (X*ZZ)/ZZ^2 and
// y = Y/ZZZ = (Y*ZZZ)/ZZ^3 since ZZ^3 = ZZZ^2; infinity (ZZ = 0) maps to z = 0,
// which blst reads as the point at infinity.
__device__ __forceinline__ g1_jacobian_t to_jacobian(const g1_xyzz_t& p) {
    const g1_xyzz_raw_t& r = reinterpret_cast<const g1_xyzz_raw_t&>(p);
    g1_jacobian_t out;
    out.x = r.X * r.ZZ;
    out.y = r.Y * r.ZZZ;
    out.z = r.ZZ;
    return out;
}

// Reduction block size used by g1_reduce_groups (shared memory: 128 points).
#define REDUCE_THREADS 128
