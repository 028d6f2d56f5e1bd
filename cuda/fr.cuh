// Fr, the scalar field of BLS12-381 (sppark's bls12_381::fr_t), and the
// scalar helpers the kernels use on it. Elements are in Montgomery form with
// little-endian 32-bit limbs, the host's (blst's) layout, so buffers move
// between host and device byte for byte.
#pragma once

#include <cstdint>

#include <ff/bls12-381.hpp>

using fr_t = bls12_381::fr_t;

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
