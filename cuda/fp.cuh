// Fp, the base field of BLS12-381 (sppark's bls12_381::fp_t): the
// coordinates of G1 and the coefficients of Fq2. Elements are in Montgomery
// form with little-endian 32-bit limbs, the layout of blst's blst_fp, so
// buffers move between host and device byte for byte.
#pragma once

#include <ff/bls12-381.hpp>

using fp_t = bls12_381::fp_t;
