// G2 of BLS12-381 over Fq2: the accumulator (sppark's xyzz_t over fq2_t),
// the affine point (blst_p2_affine's layout: x.c0, x.c1, y.c0, y.c1;
// infinity = all zero) and the Jacobian result (blst_p2's layout).
#pragma once

#include <ec/xyzz_t.hpp>

#include "fq2.cuh"
#include "jacobian.cuh"

using g2_xyzz_t = xyzz_t<fq2_t>;
using g2_affine_t = g2_xyzz_t::affine_t;
using g2_jacobian_t = jacobian_out_t<fq2_t>;
static_assert(sizeof(g2_affine_t) == 192, "G2 affine layout");
static_assert(sizeof(xyzz_raw_t<fq2_t>) == sizeof(g2_xyzz_t), "G2 xyzz layout");
static_assert(sizeof(g2_jacobian_t) == 288, "G2 Jacobian layout");
static_assert(sizeof(affine_raw_t<fq2_t>) == sizeof(g2_affine_t), "G2 affine layout");

// acc += p, or acc -= p where neg is set, written out inline
// (xyzz_add.cuh; `one`: xyzz_add_affine's record of ZZ = ZZZ = 1).
__device__ __forceinline__ void add_affine(g2_xyzz_t& acc, const g2_affine_t& p, bool neg, bool& one) {
    xyzz_add_affine_to<fq2_t>(acc, p, neg, one);
}

// acc += p for two accumulators: sppark's xyzz_t::add, which the compiler
// keeps out of line over fq2_t. Written out inline (xyzz_add.cuh's
// xyzz_add), the kernels that call it spill kilobytes (msm_fixup_g2 5,438
// bytes of spill stores, the bucket segments 8,224).
__device__ __forceinline__ void add_xyzz(g2_xyzz_t& acc, const g2_xyzz_t& p) {
    acc.add(p);
}
