// acc += ±p for an XYZZ accumulator acc (x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2;
// ZZ = ZZZ = 0 is infinity) and an affine point p (all-zero coordinates are
// infinity), on a short Weierstrass curve with a = 0 (BLS12-381's G1 and
// G2), over any field type F with +, -, *, *=, -=, sqr(), cneg(bool),
// is_zero(), is_zero(other) (both zero), zero() and F::one().
//
// Formulas: the mixed addition madd-2008-s (8M + 2S) and, where the two
// points are equal, the doubling of the affine point mdbl-2008-s-1 (2M +
// 3S), from the Explicit-Formulas Database
// (hyperelliptic.org/EFD/g1p/auto-shortw-xyzz.html). Where the caller
// knows that acc is itself ±(an affine point), with ZZ = ZZZ = 1 (`one`:
// the addition after acc was set from infinity), madd-2008-s's four
// products by ZZ1 and ZZZ1 are products by one and are skipped (4M + 2S):
// an accumulation thread's second point of each run.
//
// Both groups' kernels use it in place of sppark's xyzz_t::add(affine):
// - G1: Y3 = R·(Q − X3) − Y1·PPP is one sum of two products, which
//   mul_sub_mul over fp_t (fp.cuh) computes with one Montgomery reduction
//   (sppark's mont_t::dot_product) where sppark's member takes two: 36
//   rows of 12 limb products for Y3 instead of 48, so ~5 % fewer of the
//   addition's 32-bit multiply-adds, which bound the accumulation.
// - G2: mul_sub_mul over fq2_t (fq2.cuh) takes three such Fp sums of two
//   products where two Karatsuba products take six multiplications. And
//   over fq2_t the compiler keeps sppark's member out of line, called
//   with the accumulator and the point in local memory (ptxas: a 640-byte
//   stack frame in msm_accumulate_g2, 1,232 bytes in g2_batch_add; ~1.1 KB
//   of local loads and stores per addition). Written out inline the
//   accumulator stays in registers, less a few spilled words.
// cuda/host/xyzz_add_host.cpp checks this source on the host over a small
// prime field (the generic mul_sub_mul); the GPU tests check the fp_t and
// fq2_t ones.
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
// its own type (fp.cuh for fp_t, fq2.cuh for fq2_t: non-templates, which
// overload resolution prefers over this template at an exact match).
template<class F>
__device__ __forceinline__ F mul_sub_mul(const F& a, const F& b, const F& c, const F& d) {
    return a * b - c * d;
}

// dbl-2008-s-1's doubling of (X1, Y1, ZZ1, ZZZ1) with a = 0, but for the
// last two products: X3, Y3, and V and W, with ZZ3 = V * ZZ1 and ZZZ3 = W *
// ZZZ1 for the caller to form (or V and W themselves where ZZ1 = ZZZ1 = 1).
// The outputs are written after every input is read.
template<class F>
__device__ __forceinline__ void xyzz_dbl(const F& X1, const F& Y1, F& X3, F& Y3, F& V, F& W) {
    F U = Y1 + Y1;     // U = 2 Y1
    F V_ = U;
    V_.sqr();          // V = U^2
    F W_ = U * V_;     // W = U * V
    F S = X1 * V_;     // S = X1 * V
    F M = X1;
    M.sqr();
    M = M + M + M;     // M = 3 X1^2
    F X = M;
    X.sqr();
    X -= S;
    X -= S;            // X3 = M^2 - 2S
    S -= X;
    F Y = mul_sub_mul(M, S, W_, Y1);  // Y3 = M * (S - X3) - W * Y1
    X3 = X;
    Y3 = Y;
    V = V_;
    W = W_;
}

// `one` is the caller's record of whether a's ZZ and ZZZ are both one:
// read, and set for the next call (true only where a was just set from
// infinity to ±p; an infinity p leaves a and `one` as they are). A caller
// that keeps no record passes a flag set to false before each call.
template<class F>
__device__ __forceinline__ void xyzz_add_affine(xyzz_raw_t<F>& a, const affine_raw_t<F>& p, bool neg, bool& one) {
    if (p.X.is_zero(p.Y)) return;
    if (a.ZZZ.is_zero(a.ZZ)) {
        a.X = p.X;
        a.Y = p.Y;
        a.Y.cneg(neg);
        a.ZZ = F::one();
        a.ZZZ = F::one();
        one = true;
        return;
    }
    // A branch, not a select: every thread's first run starts at its first
    // point, so the lanes of a warp skip the products at the same step; a
    // lane whose later run starts mid-range skips them alone and saves
    // nothing, as its warp computes them for the other lanes.
    F R = p.Y;
    if (!one) R *= a.ZZZ;  // S2 = ±y2 * ZZZ1
    R.cneg(neg);
    R -= a.Y;           // R = S2 - Y1
    F P = p.X;
    if (!one) P *= a.ZZ;   // U2 = x2 * ZZ1
    P -= a.X;           // P = U2 - X1
    const bool was_one = one;
    one = false;
    if (!P.is_zero()) {
        F PP = P;
        PP.sqr();          // PP = P^2
        F PPP = P * PP;    // PPP = P * PP
        if (was_one) {
            a.ZZ = PP;     // ZZ3 = ZZ1 * PP with ZZ1 = 1
            a.ZZZ = PPP;   // ZZZ3 = ZZZ1 * PPP with ZZZ1 = 1
        } else {
            a.ZZ *= PP;    // ZZ3 = ZZ1 * PP
            a.ZZZ *= PPP;  // ZZZ3 = ZZZ1 * PPP
        }
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
        // acc = ±p: 2·(x2, y) with y = ±y2, ZZ1 = ZZZ1 = 1.
        F Y = p.Y;
        Y.cneg(neg);
        xyzz_dbl(p.X, Y, a.X, a.Y, a.ZZ, a.ZZZ);
    } else {
        // acc = -(±p): the sum is infinity.
        a.ZZ.zero();
        a.ZZZ.zero();
    }
}

// a += b for XYZZ accumulators a and b (ZZ = ZZZ = 0 is infinity), over the
// field types of xyzz_add_affine. Formulas: add-2008-s (12M + 2S) and,
// where the two points are equal, dbl-2008-s-1 (a = 0), from the same
// database; the same operations as sppark's xyzz_t::add(xyzz_t), except
// that Y3 in both branches is one mul_sub_mul (over fp_t, one Montgomery
// reduction for its two products), and inline. G1's merge levels, fix-up,
// table additions and batch-addition reductions take it (g1.cuh); G2's
// kernels keep sppark's member, as written out inline they spill
// kilobytes (g2.cuh).
template<class F>
__device__ __forceinline__ void xyzz_add(xyzz_raw_t<F>& a, const xyzz_raw_t<F>& b) {
    if (b.ZZZ.is_zero(b.ZZ)) return;
    if (a.ZZZ.is_zero(a.ZZ)) {
        a = b;
        return;
    }
    F U = a.X * b.ZZ;   // U1 = X1 * ZZ2
    F S = a.Y * b.ZZZ;  // S1 = Y1 * ZZZ2
    F P = b.X * a.ZZ;   // U2 = X2 * ZZ1
    F R = b.Y * a.ZZZ;  // S2 = Y2 * ZZZ1
    P -= U;             // P = U2 - U1
    R -= S;             // R = S2 - S1
    if (!P.is_zero()) {
        F PP = P;
        PP.sqr();          // PP = P^2
        F PPP = P * PP;    // PPP = P * PP
        a.ZZ *= PP;
        a.ZZ *= b.ZZ;      // ZZ3 = ZZ1 * ZZ2 * PP
        a.ZZZ *= PPP;
        a.ZZZ *= b.ZZZ;    // ZZZ3 = ZZZ1 * ZZZ2 * PPP
        F Q = U * PP;      // Q = U1 * PP
        F X3 = R;
        X3.sqr();
        X3 -= PPP;
        X3 -= Q;
        X3 -= Q;           // X3 = R^2 - PPP - 2Q
        Q -= X3;
        a.Y = mul_sub_mul(R, Q, S, PPP);  // Y3 = R * (Q - X3) - S1 * PPP
        a.X = X3;
    } else if (R.is_zero()) {
        // a = b: 2a.
        F X3, Y3, V, W;
        xyzz_dbl(a.X, a.Y, X3, Y3, V, W);
        a.X = X3;
        a.Y = Y3;
        a.ZZ *= V;         // ZZ3 = V * ZZ1
        a.ZZZ *= W;        // ZZZ3 = W * ZZZ1
    } else {
        // a = -b: the sum is infinity.
        a.ZZ.zero();
        a.ZZZ.zero();
    }
}

// xyzz_add_affine on sppark's xyzz_t and its affine_t, whose coordinates are
// private: they are copied into the raw types and back by memcpy, which the
// compiler turns into register moves once inlined.
template<class F, class Xyzz, class Affine>
__device__ __forceinline__ void xyzz_add_affine_to(Xyzz& acc, const Affine& p, bool neg, bool& one) {
    static_assert(sizeof(xyzz_raw_t<F>) == sizeof(Xyzz) && sizeof(affine_raw_t<F>) == sizeof(Affine), "layouts");
    xyzz_raw_t<F> a;
    affine_raw_t<F> q;
    memcpy(&a, &acc, sizeof a);
    memcpy(&q, &p, sizeof q);
    xyzz_add_affine(a, q, neg, one);
    memcpy(&acc, &a, sizeof a);
}

// xyzz_add on sppark's xyzz_t, copied as xyzz_add_affine_to copies.
template<class F, class Xyzz>
__device__ __forceinline__ void xyzz_add_to(Xyzz& acc, const Xyzz& p) {
    static_assert(sizeof(xyzz_raw_t<F>) == sizeof(Xyzz), "layouts");
    xyzz_raw_t<F> a, b;
    memcpy(&a, &acc, sizeof a);
    memcpy(&b, &p, sizeof b);
    xyzz_add(a, b);
    memcpy(&acc, &a, sizeof a);
}
