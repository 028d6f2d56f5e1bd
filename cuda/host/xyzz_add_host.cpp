// cuda/xyzz_add.cuh, the G1 and G2 kernels' mixed addition, compiled for the host
// and run on the curve y^2 = x^3 + 4 over the prime field of p = 2^31 - 1
// (a = 0, as on BLS12-381). Each step adds a point to an XYZZ accumulator,
// or subtracts it, and compares the accumulator, made affine, with
// textbook affine addition. The points are random ones, the accumulator's
// own point (the doubling branch), its negation (the sum is infinity),
// infinity on either side, and the points (0, ±2) (x = 0, not infinity);
// each branch must be taken many times, with and without subtraction. The
// accumulator must also keep ZZ^3 = ZZZ^2. The field arithmetic of fp_t
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
    // negation (infinity), p at infinity, acc at infinity.
    long taken[5][2] = {};
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
        affine_raw_t<F> q{p.x, p.y};
        xyzz_add_affine(acc, q, subtract);
        want = add(want, subtract ? neg(p) : p);
        Pt got = affine_of(acc);
        bool same = got.inf == want.inf && (got.inf || (got.x == want.x && got.y == want.y));
        F zz3 = acc.ZZ * acc.ZZ * acc.ZZ, zzz2 = acc.ZZZ * acc.ZZZ;
        if (!same || !(zz3 == zzz2)) {
            printf("step %ld (branch %d, subtract %d): got %s(%llu, %llu), want %s(%llu, %llu), ZZ^3 %s ZZZ^2\n", i,
                   branch, (int)subtract, got.inf ? "infinity " : "", (unsigned long long)got.x.v,
                   (unsigned long long)got.y.v, want.inf ? "infinity " : "", (unsigned long long)want.x.v,
                   (unsigned long long)want.y.v, zz3 == zzz2 ? "=" : "!=");
            return 1;
        }
    }
    const char* names[5] = {"add", "double", "cancel", "p infinity", "acc infinity"};
    for (int b = 0; b < 5; b++) printf("%s: %ld, %ld subtracted\n", names[b], taken[b][0], taken[b][1]);
    printf("%ld steps: equal\n", steps);
    return 0;
}
