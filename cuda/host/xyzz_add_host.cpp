// cuda/xyzz_add.cuh, the G1 and G2 kernels' additions, compiled for the host
// and run on the curve y^2 = x^3 + 4 over the prime field of p = 2^31 - 1
// (a = 0, as on BLS12-381). Each step adds a point to an XYZZ accumulator,
// or subtracts it, and compares the accumulator, made affine, with
// textbook affine addition. The points are random ones, the accumulator's
// own point (the doubling branch), its negation (the sum is infinity),
// infinity on either side, and the points (0, ±2) (x = 0, not infinity);
// each branch must be taken many times, with and without subtraction, and
// with and without the record `one` (ZZ = ZZZ = 1, set where acc was just
// set from infinity; kept across the steps as the kernels keep it). The
// accumulator must also keep ZZ^3 = ZZZ^2, and ZZ = ZZZ = 1 where `one`
// says so. Then xyzz_add, the addition of two accumulators, against the
// same affine addition, each branch many times. The field arithmetic of fp_t
// (mul_sub_mul's shared reduction included) and fq2_t is the GPU tests' to
// check. Built and run by the test
// `xyzz_add_source_on_the_host` in src/gpu/host_checks.rs:
//   c++ -std=c++17 -O2 xyzz_add_host.cpp -o t && ./t steps seed
// Prints the branch counts; exits 1 at the first mismatch.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>

#define __device__
#define __forceinline__ inline

struct F {
    static constexpr uint64_t P = (1ull << 31) - 1;
    uint64_t v;
    F() : v(0) {}
    explicit F(uint64_t x) : v(x % P) {}
    static F one() { return F(1); }
    F operator+(const F& o) const { return F(v + o.v); }
    F operator-(const F& o) const { return F(v + P - o.v); }
    F operator*(const F& o) const { return F(v * o.v); }
    F& operator*=(const F& o) { return *this = *this * o; }
    F& operator-=(const F& o) { return *this = *this - o; }
    F& sqr() { return *this = *this * *this; }
    F& cneg(bool neg) {
        if (neg) *this = F(0) - *this;
        return *this;
    }
    bool is_zero() const { return v == 0; }
    bool is_zero(const F& o) const { return v == 0 && o.v == 0; }
    void zero() { v = 0; }
    bool operator==(const F& o) const { return v == o.v; }
};

#include "../xyzz_add.cuh"

static F pow(F b, uint64_t e) {
    F r = F::one();
    for (; e; e >>= 1, b = b * b)
        if (e & 1) r = r * b;
    return r;
}
static F inv(F a) { return pow(a, F::P - 2); }

// An affine point; inf marks infinity (its coordinates are then zero, as the
// kernels encode it).
struct Pt {
    F x, y;
    bool inf;
};

static Pt neg(const Pt& a) { return a.inf ? a : Pt{a.x, F(0) - a.y, false}; }

// Textbook affine addition on y^2 = x^3 + 4.
static Pt add(const Pt& a, const Pt& b) {
    if (a.inf) return b;
    if (b.inf) return a;
    F l;
    if (a.x == b.x) {
        if (!(a.y == b.y) || a.y.is_zero()) return Pt{F(0), F(0), true};
        l = F(3) * a.x * a.x * inv(a.y + a.y);
    } else {
        l = (b.y - a.y) * inv(b.x - a.x);
    }
    F x = l * l - a.x - b.x;
    return Pt{x, l * (a.x - x) - a.y, false};
}

static Pt random_point(std::mt19937_64& rng) {
    for (;;) {
        F x(rng());
        F rhs = x * x * x + F(4);
        if (rhs.is_zero()) continue;
        // p = 3 (mod 4): a square's root is rhs^((p + 1) / 4).
        F y = pow(rhs, (F::P + 1) / 4);
        if (!(y * y == rhs)) continue;
        return Pt{x, (rng() & 1) ? F(0) - y : y, false};
    }
}

static Pt affine_of(const xyzz_raw_t<F>& a) {
    if (a.ZZ.is_zero() && a.ZZZ.is_zero()) return Pt{F(0), F(0), true};
    return Pt{a.X * inv(a.ZZ), a.Y * inv(a.ZZZ), false};
}

int main(int argc, char** argv) {
    long steps = argc > 1 ? atol(argv[1]) : 100000;
    std::mt19937_64 rng(argc > 2 ? strtoull(argv[2], nullptr, 10) : 1);
    // Branch counts, [neg]: random point, acc's own point (doubling), its
    // negation (infinity), p at infinity, acc at infinity; and of the first
    // three, those taken with `one` set.
    long taken[5][2] = {}, taken_one[3] = {};
    bool one = false;
    xyzz_raw_t<F> acc;
    acc.ZZ.zero();
    acc.ZZZ.zero();
    Pt want{F(0), F(0), true};
    for (long i = 0; i < steps; i++) {
        bool subtract = rng() & 1;
        unsigned kind = rng() % 8;
        Pt p;
        int branch;
        if (want.inf) {
            p = random_point(rng);
            branch = 4;
        } else if (kind == 0) {
            p = subtract ? neg(want) : want;  // acc + p = 2·acc
            branch = 1;
        } else if (kind == 1) {
            p = subtract ? want : neg(want);  // acc + p = infinity
            branch = 2;
        } else if (kind == 2) {
            p = Pt{F(0), F(0), true};
            branch = 3;
        } else if (kind == 3) {
            // x = 0 with y = ±2: on the curve, and not the all-zero infinity.
            p = Pt{F(0), (rng() & 1) ? F(0) - F(2) : F(2), false};
            branch = 0;
        } else {
            p = random_point(rng);
            branch = 0;
        }
        taken[branch][subtract]++;
        if (one && branch < 3) taken_one[branch]++;
        affine_raw_t<F> q{p.x, p.y};
        xyzz_add_affine(acc, q, subtract, one);
        want = add(want, subtract ? neg(p) : p);
        Pt got = affine_of(acc);
        bool same = got.inf == want.inf && (got.inf || (got.x == want.x && got.y == want.y));
        F zz3 = acc.ZZ * acc.ZZ * acc.ZZ, zzz2 = acc.ZZZ * acc.ZZZ;
        bool one_right = !one || (acc.ZZ == F::one() && acc.ZZZ == F::one());
        if (!same || !(zz3 == zzz2) || !one_right) {
            printf("step %ld (branch %d, subtract %d): got %s(%llu, %llu), want %s(%llu, %llu), ZZ^3 %s ZZZ^2, one %d%s\n", i,
                   branch, (int)subtract, got.inf ? "infinity " : "", (unsigned long long)got.x.v,
                   (unsigned long long)got.y.v, want.inf ? "infinity " : "", (unsigned long long)want.x.v,
                   (unsigned long long)want.y.v, zz3 == zzz2 ? "=" : "!=", (int)one, one_right ? "" : " but ZZ, ZZZ not 1");
            return 1;
        }
    }
    const char* names[5] = {"add", "double", "cancel", "p infinity", "acc infinity"};
    for (int b = 0; b < 5; b++) printf("%s: %ld, %ld subtracted\n", names[b], taken[b][0], taken[b][1]);
    for (int b = 0; b < 3; b++) printf("%s with one: %ld\n", names[b], taken_one[b]);
    printf("%ld steps: equal\n", steps);
    // xyzz_add: two accumulators, each an affine point in XYZZ form with its
    // own random scale (X = x·l^2, Y = y·l^3, ZZ = l^2, ZZZ = l^3), so that
    // equal points arrive in different coordinates. Branches: distinct
    // points, equal points (doubling), opposite points (infinity), b at
    // infinity, a at infinity.
    long taken2[5] = {};
    for (long i = 0; i < steps; i++) {
        unsigned kind = rng() % 8;
        Pt pa = random_point(rng), pb;
        int branch;
        if (kind == 0) pb = pa, branch = 1;
        else if (kind == 1) pb = neg(pa), branch = 2;
        else if (kind == 2) pb = Pt{F(0), F(0), true}, branch = 3;
        else if (kind == 3) pb = pa, pa = Pt{F(0), F(0), true}, branch = 4;
        else pb = random_point(rng), branch = 0;
        auto xyzz_of = [&](const Pt& q) {
            xyzz_raw_t<F> r;
            if (q.inf) {
                r.X = F(rng());
                r.Y = F(rng());
                r.ZZ.zero();
                r.ZZZ.zero();
                return r;
            }
            F l(1 + rng() % (F::P - 1));
            r.ZZ = l * l;
            r.ZZZ = r.ZZ * l;
            r.X = q.x * r.ZZ;
            r.Y = q.y * r.ZZZ;
            return r;
        };
        xyzz_raw_t<F> a = xyzz_of(pa), b = xyzz_of(pb);
        taken2[branch]++;
        xyzz_add(a, b);
        Pt want2 = add(pa, pb), got = affine_of(a);
        bool same = got.inf == want2.inf && (got.inf || (got.x == want2.x && got.y == want2.y));
        if (!same || !(a.ZZ * a.ZZ * a.ZZ == a.ZZZ * a.ZZZ)) {
            printf("xyzz_add step %ld (branch %d): got %s(%llu, %llu), want %s(%llu, %llu)\n", i, branch,
                   got.inf ? "infinity " : "", (unsigned long long)got.x.v, (unsigned long long)got.y.v,
                   want2.inf ? "infinity " : "", (unsigned long long)want2.x.v, (unsigned long long)want2.y.v);
            return 1;
        }
    }
    const char* names2[5] = {"add", "double", "cancel", "b infinity", "a infinity"};
    for (int b = 0; b < 5; b++) printf("xyzz %s: %ld\n", names2[b], taken2[b]);
    printf("%ld xyzz steps: equal\n", steps);
    return 0;
}
