// acc += ±p for an XYZZ accumulator acc (x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2;
// ZZ = ZZZ = 0 is infinity) and an affine point p (all-zero coordinates are
// infinity), on a short Weierstrass curve with a = 0 (BLS12-381's G1 and
// G2), over any field type F with +, -, *, *=, -=, sqr(), cneg(bool),
// is_zero(), is_zero(other) (both zero), zero() and F::one().
//
// Formulas: the mixed addition madd-2008-s (8M + 2S) and, where the two
// points are equal, the doubling of the affine point mdbl-2008-s-1 (2M +
// 3S), from the Explicit-Formulas Database
// (hyperelliptic.org/EFD/g1p/auto-shortw-xyzz.html).
//
// Both groups' kernels use it in place of sppark's xyzz_t::add(affine):
// - G1: Y3 = R·(Q − X3) − Y1·PPP is one sum of two products, which
//   mul_sub_mul over fp_t (fp.cuh) computes with one Montgomery reduction
//   (sppark's mont_t::dot_product) where sppark's member takes two: 36
//   rows of 12 limb products for Y3 instead of 48, so ~5 % fewer of the
//   addition's 32-bit multiply-adds, which bound the accumulation.
// - G2: over fq2_t the compiler keeps sppark's member out of line, called
//   with the accumulator and the point in local memory (ptxas: a 640-byte
//   stack frame in msm_accumulate_g2, 1,232 bytes in g2_batch_add; ~1.1 KB
//   of local loads and stores per addition). Written out inline the
//   accumulator stays in registers, less a few spilled words.
// cuda/host/xyzz_add_host.cpp checks this source on the host over a small
// prime field (the generic mul_sub_mul); the GPU tests check the fp_t one.
#pragma once

#include <cstring>

// The coordinates of sppark's xyzz_t<F> and Affine_t<F>, in their member
// order: sppark keeps them private, so a point's bytes are copied into
// these (g1.cuh and g2.cuh check the sizes).
template<class F> struct xyzz_raw_t {
    F X, Y, ZZZ, ZZ;
};

template<class F> struct affine_raw_t {
    F X, Y;
};

// a·b − c·d. The generic form takes two products; a field type with a
// product that shares one reduction between two products overloads it for
// its own type (fp.cuh, for fp_t: a non-template, which overload
// resolution prefers over this template at an exact match).
template<class F>
__device__ __forceinline__ F mul_sub_mul(const F& a, const F& b, const F& c, const F& d) {
    return a * b - c * d;
}

template<class F>
__device__ __forceinline__ void xyzz_add_affine(xyzz_raw_t<F>& a, const affine_raw_t<F>& p, bool neg) {
    if (p.X.is_zero(p.Y)) return;
    if (a.ZZZ.is_zero(a.ZZ)) {
        a.X = p.X;
        a.Y = p.Y;
        a.Y.cneg(neg);
        a.ZZ = F::one();
        a.ZZZ = F::one();
        return;
    }
    F R = p.Y * a.ZZZ;  // S2 = ±y2 * ZZZ1
    R.cneg(neg);
    R -= a.Y;           // R = S2 - Y1
    F P = p.X * a.ZZ;   // U2 = x2 * ZZ1
    P -= a.X;           // P = U2 - X1
    if (!P.is_zero()) {
        F PP = P;
        PP.sqr();          // PP = P^2
        F PPP = P * PP;    // PPP = P * PP
        a.ZZ *= PP;        // ZZ3 = ZZ1 * PP
        a.ZZZ *= PPP;      // ZZZ3 = ZZZ1 * PPP
        F Q = a.X * PP;    // Q = X1 * PP
        F X3 = R;
        X3.sqr();
        X3 -= PPP;
        X3 -= Q;
        X3 -= Q;           // X3 = R^2 - PPP - 2Q
        Q -= X3;
        a.Y = mul_sub_mul(R, Q, a.Y, PPP);  // Y3 = R * (Q - X3) - Y1 * PPP
        a.X = X3;
    } else if (R.is_zero()) {
        // acc = ±p: 2·(x2, y) with y = ±y2.
        F Y = p.Y;
        Y.cneg(neg);
        F U = Y + Y;       // U = 2y
        F V = U;
        V.sqr();           // V = U^2
        F W = U * V;       // W = U * V
        F S = p.X * V;     // S = x2 * V
        F M = p.X;
        M.sqr();
        M = M + M + M;     // M = 3 x2^2
        F X3 = M;
        X3.sqr();
        X3 -= S;
        X3 -= S;           // X3 = M^2 - 2S
        S -= X3;
        a.Y = mul_sub_mul(M, S, W, Y);  // Y3 = M * (S - X3) - W * y
        a.X = X3;
        a.ZZ = V;          // ZZ3 = V
        a.ZZZ = W;         // ZZZ3 = W
    } else {
        // acc = -(±p): the sum is infinity.
        a.ZZ.zero();
        a.ZZZ.zero();
    }
}

// xyzz_add_affine on sppark's xyzz_t and its affine_t, whose coordinates are
// private: they are copied into the raw types and back by memcpy, which the
// compiler turns into register moves once inlined.
template<class F, class Xyzz, class Affine>
__device__ __forceinline__ void xyzz_add_affine_to(Xyzz& acc, const Affine& p, bool neg) {
    static_assert(sizeof(xyzz_raw_t<F>) == sizeof(Xyzz) && sizeof(affine_raw_t<F>) == sizeof(Affine), "layouts");
    xyzz_raw_t<F> a;
    affine_raw_t<F> q;
    memcpy(&a, &acc, sizeof a);
    memcpy(&q, &p, sizeof q);
    xyzz_add_affine(a, q, neg);
    memcpy(&acc, &a, sizeof a);
}
