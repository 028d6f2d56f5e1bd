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
// The G2 kernels use it in place of sppark's xyzz_t::add(affine): over
// fq2_t the compiler keeps that member out of line, called with the
// accumulator and the point in local memory (ptxas: a 640-byte stack frame
// in msm_accumulate_g2, 1,232 bytes in g2_batch_add; ~1.1 KB of local
// loads and stores per addition). Written out inline the accumulator stays
// in registers, less a few spilled words. G1 keeps sppark's member, which
// the compiler inlines over fp_t with no spills. cuda/host/xyzz_add_host.cpp
// checks this source on the host over a small prime field.
#pragma once

// The coordinates of sppark's xyzz_t<F> and Affine_t<F>, in their member
// order: sppark keeps them private, so a point's bytes are copied into
// these (g1.cuh and g2.cuh check the sizes).
template<class F> struct xyzz_raw_t {
    F X, Y, ZZZ, ZZ;
};

template<class F> struct affine_raw_t {
    F X, Y;
};

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
        Q *= R;            // R * (Q - X3)
        a.Y *= PPP;
        a.Y = Q - a.Y;     // Y3 = R * (Q - X3) - Y1 * PPP
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
        S *= M;            // M * (S - X3)
        a.Y = S - W * Y;   // Y3 = M * (S - X3) - W * y
        a.X = X3;
        a.ZZ = V;          // ZZ3 = V
        a.ZZZ = W;         // ZZZ3 = W
    } else {
        // acc = -(±p): the sum is infinity.
        a.ZZ.zero();
        a.ZZZ.zero();
    }
}
