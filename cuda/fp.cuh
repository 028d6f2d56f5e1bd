// Fp, the base field of BLS12-381 (sppark's bls12_381::fp_t): the
// coordinates of G1 and the coefficients of Fq2. Elements are in Montgomery
// form with little-endian 32-bit limbs, the layout of blst's blst_fp, so
// buffers move between host and device byte for byte.
#pragma once

#include <ff/bls12-381.hpp>

using fp_t = bls12_381::fp_t;

// a·b − c·d (in Montgomery form, as fp_t's products) with one Montgomery
// reduction for both products: sppark's mont_t::dot_product, whose
// interleaved form it takes for moduli with two or more spare bits in the
// top limb (fp_t's 381 bits leave three), of a, b, −c and d (cneg: p − c,
// 0 at 0), reduced below p. xyzz_add.cuh's Y3 uses it.
__device__ __forceinline__ fp_t mul_sub_mul(const fp_t& a, const fp_t& b, fp_t c, const fp_t& d) {
    c.cneg(true);
    return fp_t::dot_product(a, b, c, d);
}
