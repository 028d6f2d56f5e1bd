// cuda/fp52.cuh, the FP64 multiplication of BLS12-381's base field, compiled
// for the host with the device's fused multiply-add rounded toward zero
// (std::fma under FE_TOWARDZERO) and checked against big-integer arithmetic:
// for a, b in [0, 2p), fp52_mul(a, b) = r must satisfy r·2^416 ≡ a·b (mod p)
// and r < 2p, and a chain r ← r·b must stay so. The inputs are random ones
// below 2p, the edges 0, 1, p − 1, p, p + 1, 2p − 1 and 2^364·(2p >> 364) − 1
// (every low limb all ones), and pairs found by a search for the largest
// carries out of columns 7 to 10 (up to 21 out of column 8: a carry cut to
// 4 bits passes random inputs). An input below 2^413 beside one below 2p
// (fp_t's value shifted by 32 bits, as an MSM would convert its bases) must
// give the same: 2^413 − 1 and (p − 1)·2^32 beside every edge, and random
// values below p shifted by 32 bits. Built and run by the test `fp52_mul_source_on_the_host` in
// src/gpu/host_checks.rs:
//   c++ -std=c++17 -O2 -frounding-math fp52_host.cpp -o t && ./t count seed
// Prints the products checked; exits 1 at the first mismatch.
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#define __device__
#define __forceinline__ inline

static double __fma_rz(double a, double b, double c) {
    return std::fma(a, b, c);  // main() sets FE_TOWARDZERO
}
static long long __double_as_longlong(double d) {
    long long x;
    std::memcpy(&x, &d, sizeof x);
    return x;
}
static double __longlong_as_double(long long x) {
    double d;
    std::memcpy(&d, &x, sizeof d);
    return d;
}

#include "../fp52.cuh"

// Little-endian 64-bit words.
using Big = std::vector<uint64_t>;

static const Big P = {0xb9feffffffffaaabull, 0x1eabfffeb153ffffull, 0x6730d2a0f6b0f624ull,
                      0x64774b84f38512bfull, 0x4b1ba7b6434bacd7ull, 0x1a0111ea397fe69aull};

static bool bit(const Big& x, size_t i) {
    return i / 64 < x.size() && (x[i / 64] >> (i % 64) & 1);
}
static int cmp(const Big& a, const Big& b) {
    for (size_t i = std::max(a.size(), b.size()); i-- > 0;) {
        uint64_t x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
}
static Big sub(Big a, const Big& b) {  // a ≥ b
    unsigned __int128 borrow = 0;
    for (size_t i = 0; i < a.size(); i++) {
        unsigned __int128 d = (unsigned __int128)a[i] - (i < b.size() ? b[i] : 0) - borrow;
        a[i] = (uint64_t)d;
        borrow = (d >> 64) ? 1 : 0;
    }
    return a;
}
static Big mul(const Big& a, const Big& b) {
    Big r(a.size() + b.size(), 0);
    for (size_t i = 0; i < a.size(); i++) {
        unsigned __int128 carry = 0;
        for (size_t j = 0; j < b.size(); j++) {
            unsigned __int128 t = (unsigned __int128)a[i] * b[j] + r[i + j] + carry;
            r[i + j] = (uint64_t)t;
            carry = t >> 64;
        }
        r[i + b.size()] = (uint64_t)carry;
    }
    return r;
}
// x mod p, by shift and subtract from the top bit down.
static Big mod_p(const Big& x) {
    Big r(P.size() + 1, 0);
    for (size_t i = x.size() * 64; i-- > 0;) {
        for (size_t w = r.size(); w-- > 0;) r[w] = r[w] << 1 | (w ? r[w - 1] >> 63 : 0);
        r[0] |= bit(x, i);
        if (cmp(r, P) >= 0) r = sub(r, P);
    }
    return r;
}
static Big shl(const Big& x, unsigned s) {  // x·2^s
    Big r(x.size() + s / 64 + 1, 0);
    for (size_t i = 0; i < x.size() * 64; i++)
        if (bit(x, i)) r[(i + s) / 64] |= uint64_t(1) << ((i + s) % 64);
    return r;
}

static Big from_hex(const char* h) {
    Big r(7, 0);
    size_t n = strlen(h);
    for (size_t i = 0; i < n; i++) {
        const char c = h[n - 1 - i];
        const uint64_t d = c <= '9' ? c - '0' : c - 'a' + 10;
        r[i / 16] |= d << (4 * (i % 16));
    }
    return r;
}

static fp52_t to52(const Big& x) {
    fp52_t r;
    for (unsigned l = 0; l < FP52_LIMBS; l++) {
        uint64_t v = 0;
        for (unsigned b = 0; b < 52; b++) v |= uint64_t(bit(x, 52 * l + b)) << b;
        r.l[l] = (double)v;
    }
    return r;
}
static bool from52(const fp52_t& x, Big& out) {  // false where a limb is not an integer in [0, 2^52)
    out.assign(7, 0);
    for (unsigned l = 0; l < FP52_LIMBS; l++) {
        double d = x.l[l];
        if (!(d >= 0 && d < 0x1p52 && d == std::floor(d))) return false;
        uint64_t v = (uint64_t)d;
        for (unsigned b = 0; b < 52; b++)
            if (v >> b & 1) out[(52 * l + b) / 64] |= uint64_t(1) << ((52 * l + b) % 64);
    }
    return true;
}

static Big random_below_2p(std::mt19937_64& rng) {
    Big two_p = shl(P, 1);
    for (;;) {
        Big x(6);
        for (auto& w : x) w = rng();
        x[5] &= (uint64_t(1) << 62) - 1;  // 2p < 2^382
        if (cmp(x, two_p) < 0) return x;
    }
}

int main(int argc, char** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s count seed\n", argv[0]);
        return 2;
    }
    if (fesetround(FE_TOWARDZERO) != 0) {
        fprintf(stderr, "cannot round toward zero\n");
        return 2;
    }
    const long count = atol(argv[1]);
    std::mt19937_64 rng(strtoull(argv[2], nullptr, 10));
    const Big one = {1}, two_p = shl(P, 1);
    std::vector<Big> edges = {Big{0}, one, sub(P, one), P, Big(P), sub(two_p, one)};
    edges[4][0] += 1;  // p + 1
    edges.push_back(from_hex("34021fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"));
    // The search's pairs (the largest carry out of column 8 first).
    for (const char* h : {"196cafffffffffffff720681e3df48fffffffff15d96fffffffffffff000000001403fffffffffd653bfffffffffffff",
                          "6264e2721c00984d5fffffffffffff000000006c298e3e8329ed5019ffffffff6447500000000734a7fffffffffffff",
                          "234abffffffffc181138d6b8b5b215fffffffff0076bdf3ed6b392aa5ffffffff35092ffffffff4b60bfd01e0d62b677",
                          "18b4cfffffffffffffffffffff40cbcc8cffb78d6bb6fffffffff3b8c0000000016e18ffffffff8c53dfffffffff8d01",
                          "1012ccd820ae1bc8effffffffffffff0000000066286ffffffff5df4200000000a0c87ffffffff77005ffffffff6beeb",
                          "19168ffffffff0262e0000000009e57fffffffffffff826f4d0e0b317ffffffff69a75fffffffffffff0000000019f70",
                          "11c2effffffff039a6fffffffffffff00000000da5c8ffffffff5f0bbfffffffffffffffffffff076f3fffffffffffff",
                          "2bde1ffffffffa2c200000000014d71ffffffffda12effffffff8a9000000000087fca6b91c95672258ffffffff84f7d",
                          "aa0af7b6ad33d56affffffffffffffffffffff853b6ffffffff96893fffffffffffff0000000000000fffffffffffff",
                          "b444d30ff497b35f0cfafc1336c69b000000003621affffffff4d787ffffffffa1855818a013d1920b0000000000000"})
        edges.push_back(from_hex(h));
    long checked = 0;
    auto check = [&](const Big& a, const Big& b, Big* out) {
        Big r;
        if (!from52(fp52_mul(to52(a), to52(b)), r)) {
            printf("a limb of the product is not an integer in [0, 2^52)\n");
            exit(1);
        }
        if (cmp(r, two_p) >= 0 || cmp(mod_p(shl(r, 416)), mod_p(mul(a, b))) != 0) {
            printf("mismatch at product %ld: a[0] = %016llx, b[0] = %016llx\n", checked, (unsigned long long)a[0],
                   (unsigned long long)b[0]);
            exit(1);
        }
        checked++;
        if (out) *out = r;
    };
    for (const Big& a : edges)
        for (const Big& b : edges) check(a, b, nullptr);
    Big top(7, 0);  // 2^413 − 1, the largest input below 2^413
    for (unsigned i = 0; i < 413; i++) top[i / 64] |= uint64_t(1) << (i % 64);
    Big shifted = shl(sub(P, one), 32);  // (p − 1)·2^32
    shifted.resize(7);
    for (const Big& b : edges) {
        check(top, b, nullptr);
        check(shifted, b, nullptr);
    }
    for (long n = 0; n < count; n++) {
        Big a = random_below_2p(rng), b = random_below_2p(rng);
        check(a, b, nullptr);
        if (n % 64 == 0) {  // a chain, each product fed back in
            Big x = a;
            for (int k = 0; k < 16; k++) check(x, b, &x);
        }
        if (n % 4 == 0) {  // a value below p shifted by 32 bits (below 2^413), beside b
            Big s = shl(mod_p(a), 32);
            s.resize(7);
            check(s, b, nullptr);
        }
    }
    printf("%ld products checked\n", checked);
    return 0;
}
