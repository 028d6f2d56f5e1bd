// Results for the host: the Jacobian point type in blst's layout and the
// conversion to it from sppark's xyzz_t accumulators, for G1 and G2 alike.
#pragma once

#include <ec/xyzz_t.hpp>

#include "xyzz_add.cuh"

// A Jacobian point as blst stores it (x, y, z: blst_p1 over fp_t, blst_p2
// over fq2_t), for results sent to the host.
template<class F> struct jacobian_out_t {
    F x, y, z;
};

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
