// G1 of BLS12-381 over Fp: the accumulator (sppark's xyzz_t: X, Y, ZZZ, ZZ),
// the affine point (X, Y; infinity = all zero, blst_p1_affine's layout) and
// the Jacobian result (blst_p1's layout).
#pragma once

#include <ec/xyzz_t.hpp>

#include "fp.cuh"
#include "jacobian.cuh"

using g1_xyzz_t = xyzz_t<fp_t>;
using g1_affine_t = g1_xyzz_t::affine_t;
using g1_jacobian_t = jacobian_out_t<fp_t>;
static_assert(sizeof(xyzz_raw_t<fp_t>) == sizeof(g1_xyzz_t), "G1 xyzz layout");
static_assert(sizeof(affine_raw_t<fp_t>) == sizeof(g1_affine_t), "G1 affine layout");

// acc += p, or acc -= p where neg is set: xyzz_add.cuh's mixed addition,
// whose Y3 takes one Montgomery reduction for its two products (`one`:
// xyzz_add_affine's record of ZZ = ZZZ = 1).
__device__ __forceinline__ void add_affine(g1_xyzz_t& acc, const g1_affine_t& p, bool neg, bool& one) {
    xyzz_add_affine_to<fp_t>(acc, p, neg, one);
}

// acc += p for two accumulators: xyzz_add.cuh's xyzz_add, in place of
// sppark's xyzz_t::add.
__device__ __forceinline__ void add_xyzz(g1_xyzz_t& acc, const g1_xyzz_t& p) {
    xyzz_add_to<fp_t>(acc, p);
}
