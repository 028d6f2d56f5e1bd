// cuda/ntt_pass.cuh, the source of the NTT pass kernels (fr_ntt_pass,
// fr_ntt_pass_dif and their radix-4 and radix-8 kernels, the radix taken
// from each pass's arguments), compiled for the host and run over the prime field of
// p = 998244353 (2^23 divides p - 1). Each block's threads run as fibers
// (ucontext) in the block size src/gpu/ntt.rs launches with, switched at
// every __syncthreads, in an order that changes from barrier to barrier
// (forward, reverse, shuffled), so a missing barrier shows as a wrong
// result; a barrier some threads of a block skip is reported. Shared memory
// past what src/gpu/ntt.rs asks for must stay untouched. It checks the
// kernels' indexing, stage order, twiddle factoring, barriers and fused
// scaling against a textbook transform; the field arithmetic of fr_t is the
// GPU tests' to check. Built and run by the test
// `ntt_pass_source_on_the_host` in src/gpu/ntt.rs:
//   c++ -std=c++17 -O2 -DNTT_TILE_LG=10 -DNTT_THREADS=256 ntt_pass_host.cpp -o t && ./t lg_n s0,k,lg_t,radix_lg,threads ...
// (the passes as src/gpu/ntt.rs's ntt_passes makes them, with the stages per
// barrier and the block size its pass_config launches with). Prints one line
// per check; exits 1 at the first mismatch.
#include <ucontext.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#define __device__
#define __forceinline__ inline
#define __shared__
#define __align__(n)

struct Dim3 {
    unsigned x;
};
static Dim3 blockIdx, threadIdx, blockDim;

// The block's threads as fibers: each runs until its next barrier (or its
// end), then the scheduler runs the next one.
static ucontext_t scheduler;
static std::vector<ucontext_t> fibers;
static std::vector<std::vector<char>> stacks;
static std::vector<bool> finished;
static void __syncthreads() { swapcontext(&fibers[threadIdx.x], &scheduler); }
static unsigned long long __brevll(unsigned long long x) {
    unsigned long long r = 0;
    for (int i = 0; i < 64; i++) r |= ((x >> i) & 1ull) << (63 - i);
    return r;
}
static int __clz(unsigned x) { return x ? __builtin_clz(x) : 32; }

struct F {
    static constexpr uint64_t P = 998244353;
    uint64_t v;
    F() : v(0) {}
    explicit F(uint64_t x) : v(x % P) {}
    F operator+(F o) const { return F((v + o.v) % P); }
    F operator-(F o) const { return F((v + P - o.v) % P); }
    F operator*(F o) const { return F(v * o.v % P); }
    bool operator!=(F o) const { return v != o.v; }
};

static F pow(F b, uint64_t e) {
    F r(1);
    for (; e; e >>= 1, b = b * b)
        if (e & 1) r = r * b;
    return r;
}
static F inv(F x) { return pow(x, F::P - 2); }
// 3 generates the multiplicative group; a root of order 2^lg.
static F root(unsigned lg) { return pow(F(3), (F::P - 1) >> lg); }

// Shared memory of one block, as the kernels' launches size it at most.
alignas(16) unsigned char sh_raw[sizeof(F) * ((2u << NTT_TILE_LG) + NTT_TILE_LG * 4)];
const unsigned char CANARY = 0xa5;

#include "../ntt_pass.cuh"

struct Pass {
    unsigned s0, k, lg_t, radix_lg, threads;
};

// scale * base^i for i < len, as two tables (src/gpu/ntt.rs's PowerTables).
struct Tables {
    std::vector<F> lo, hi;
    unsigned lg_lo;
    Tables(F base, F scale, size_t len) {
        unsigned lg = 0;
        while ((size_t(1) << lg) < len) lg++;
        lg_lo = lg < 10 ? lg : 10;
        for (size_t j = 0; j < (size_t(1) << lg_lo); j++) lo.push_back(scale * pow(base, j));
        for (size_t k = 0; k < (len + (size_t(1) << lg_lo) - 1) >> lg_lo; k++) hi.push_back(pow(base, k << lg_lo));
    }
};

// The twiddles of a 2^lg_n transform of root w (src/gpu/ntt.rs's Twiddles).
struct Twiddles {
    std::vector<F> roots;
    Tables t;
    Twiddles(F w, F w_tile, unsigned lg_n) : t(w, F(1), lg_n ? (size_t(1) << lg_n) / 2 : 1) {
        for (size_t i = 0; i < (size_t(1) << (NTT_TILE_LG - 1)); i++) roots.push_back(pow(w_tile, i));
    }
};

// One launch's arguments, for the fibers' entry point.
struct Launch {
    bool dif;
    F* data;
    const Twiddles* tw;
    unsigned lg_n;
    Pass p;
    const Tables* scale;
};
static Launch current;

// One pass of radix 2^R over the launch's arguments.
template <unsigned R>
static void run_pass(const Launch& l) {
    const Twiddles& tw = *l.tw;
    const Tables& s = l.scale ? *l.scale : tw.t;
    if (l.dif)
        ntt_pass<true, R, F>(l.data, tw.roots.data(), tw.t.lo.data(), tw.t.hi.data(), tw.t.lg_lo, l.lg_n, l.p.s0, l.p.k,
                             l.p.lg_t, s.lo.data(), s.hi.data(), s.lg_lo, l.scale != nullptr);
    else
        ntt_pass<false, R, F>(l.data, tw.roots.data(), tw.t.lo.data(), tw.t.hi.data(), tw.t.lg_lo, l.lg_n, l.p.s0, l.p.k,
                              l.p.lg_t, nullptr, nullptr, 0, false);
}

static void thread_main() {
    const Launch& l = current;
    // The kernel of the pass's radix (cuda/ntt.cu: one per radix).
    switch (l.p.radix_lg) {
    case 1: run_pass<1>(l); break;
    case 2: run_pass<2>(l); break;
    case 3: run_pass<3>(l); break;
    }
    finished[threadIdx.x] = true;
    swapcontext(&fibers[threadIdx.x], &scheduler);
}

// Thread t of the block, ready to start (apart from `launch`: getcontext
// returns twice, like setjmp, which its locals should not live across).
static void make_fiber(unsigned t) {
    getcontext(&fibers[t]);
    fibers[t].uc_stack.ss_sp = stacks[t].data();
    fibers[t].uc_stack.ss_size = stacks[t].size();
    fibers[t].uc_link = nullptr;
    makecontext(&fibers[t], thread_main, 0);
}

// One launch: every block of the pass in turn, in the block size
// src/gpu/ntt.rs's pass_config gives (the pass's `threads`), and the shared
// memory it sizes (ntt_shared_bytes: the tile, and after the first pass the twiddles
// and column factors).
static void launch(bool dif, std::vector<F>& d, const Twiddles& tw, unsigned lg_n, Pass p, const Tables* scale) {
    static std::mt19937 rng(31);
    const unsigned tile = 1u << (p.k + p.lg_t), cols = 1u << p.lg_t;
    const unsigned threads = p.threads;
    if (threads == 0 || threads > NTT_THREADS || threads > tile) {
        printf("2^%u pass s0=%u: a block of %u threads for a tile of %u\n", lg_n, p.s0, threads, tile);
        exit(1);
    }
    const size_t shared = sizeof(F) * (p.s0 == 0 ? tile : tile + (tile - cols) + p.k * cols);
    current = Launch{dif, d.data(), &tw, lg_n, p, scale};
    blockDim.x = threads;
    fibers.assign(threads, ucontext_t{});
    stacks.resize(threads, std::vector<char>(64 << 10));
    std::vector<unsigned> order(threads);
    const size_t blocks = d.size() >> (p.k + p.lg_t);
    for (size_t b = 0; b < blocks; b++) {
        blockIdx.x = (unsigned)b;
        memset(sh_raw, CANARY, sizeof sh_raw);
        finished.assign(threads, false);
        for (unsigned t = 0; t < threads; t++) make_fiber(t);
        for (unsigned round = 0;; round++) {
            for (unsigned t = 0; t < threads; t++) order[t] = round % 3 == 1 ? threads - 1 - t : t;
            if (round % 3 == 2) std::shuffle(order.begin(), order.end(), rng);
            for (unsigned t : order) {
                threadIdx.x = t;
                swapcontext(&scheduler, &fibers[t]);
            }
            size_t done = std::count(finished.begin(), finished.end(), true);
            if (done == threads) break;
            if (done != 0) {
                printf("2^%u pass s0=%u: a barrier that %zu of %u threads skip\n", lg_n, p.s0, done, threads);
                exit(1);
            }
        }
        for (size_t i = shared; i < sizeof sh_raw; i++) {
            if (sh_raw[i] != CANARY) {
                printf("2^%u pass s0=%u: shared memory written at byte %zu, past the %zu launched\n", lg_n, p.s0, i, shared);
                exit(1);
            }
        }
    }
}

static void bit_reverse(std::vector<F>& d, unsigned lg_n) {
    for (size_t i = 0; i < d.size(); i++) {
        size_t j = __brevll(i) >> (64 - lg_n);
        if (i < j) std::swap(d[i], d[j]);
    }
}

// The textbook iterative transform: Σ_j x_j w^(ij), natural order in and out.
static std::vector<F> reference(std::vector<F> x, F w, unsigned lg_n) {
    bit_reverse(x, lg_n);
    for (unsigned s = 1; s <= lg_n; s++) {
        size_t len = size_t(1) << s;
        F wl = pow(w, x.size() / len);
        for (size_t i = 0; i < x.size(); i += len) {
            F t(1);
            for (size_t j = 0; j < len / 2; j++, t = t * wl) {
                F u = x[i + j], v = x[i + j + len / 2] * t;
                x[i + j] = u + v;
                x[i + j + len / 2] = u - v;
            }
        }
    }
    return x;
}

static void expect(const std::vector<F>& got, const std::vector<F>& want, const char* what, unsigned lg_n) {
    for (size_t i = 0; i < want.size(); i++) {
        if (got[i] != want[i]) {
            printf("2^%u %s: differs at %zu (%llu, want %llu)\n", lg_n, what, i, (unsigned long long)got[i].v,
                   (unsigned long long)want[i].v);
            exit(1);
        }
    }
    printf("2^%u %s: equal\n", lg_n, what);
}

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s lg_n s0,k,lg_t,radix_lg,threads ...\n", argv[0]);
        return 2;
    }
    unsigned lg_n = (unsigned)atoi(argv[1]);
    std::vector<Pass> passes;
    for (int a = 2; a < argc; a++) {
        Pass p;
        if (sscanf(argv[a], "%u,%u,%u,%u,%u", &p.s0, &p.k, &p.lg_t, &p.radix_lg, &p.threads) != 5) return 2;
        if (p.radix_lg < 1 || p.radix_lg > 3) return 2;
        passes.push_back(p);
    }
    size_t n = size_t(1) << lg_n;
    std::vector<F> x(n);
    uint64_t state = 0x9e3779b97f4a7c15ull;
    for (auto& e : x) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        e = F(state >> 33);
    }
    F w = root(lg_n), w_inv = inv(w), g(7), n_inv = inv(F(n));
    Twiddles fwd(w, root(NTT_TILE_LG), lg_n), back(w_inv, inv(root(NTT_TILE_LG)), lg_n);
    std::vector<F> want = reference(x, w, lg_n);

    // fr_ntt_pass: a bit reversal, then the passes in order.
    std::vector<F> d = x;
    bit_reverse(d, lg_n);
    for (Pass p : passes) launch(false, d, fwd, lg_n, p, nullptr);
    expect(d, want, "DIT forward", lg_n);

    // fr_ntt_pass_dif: the passes in reverse, bit-reversed order out.
    d = x;
    for (size_t i = passes.size(); i-- > 0;) launch(true, d, fwd, lg_n, passes[i], nullptr);
    bit_reverse(d, lg_n);
    expect(d, want, "DIF forward", lg_n);

    // The quotient's inverse: DIF with w^-1, the last pass's write scaled by
    // (1/n)·g^i at bit-reverse(p): the coefficients, shifted to the coset.
    Tables coset(g, n_inv, n);
    std::vector<F> shifted = reference(x, w_inv, lg_n);
    for (size_t i = 0; i < n; i++) shifted[i] = shifted[i] * n_inv * pow(g, i);
    d = x;
    for (size_t i = passes.size(); i-- > 0;) launch(true, d, back, lg_n, passes[i], passes[i].s0 == 0 ? &coset : nullptr);
    std::vector<F> kept = d;
    bit_reverse(kept, lg_n);
    expect(kept, shifted, "DIF inverse, coset shift in the last write", lg_n);

    // Then fr_ntt_pass from that bit-reversed order, no bit reversal: the
    // evaluations on the coset g·<w>.
    for (Pass p : passes) launch(false, d, fwd, lg_n, p, nullptr);
    expect(d, reference(shifted, w, lg_n), "DIT forward from bit-reversed order", lg_n);
    return 0;
}
