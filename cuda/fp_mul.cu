// The field multiplication alone, for gpu_bench's `Fp multiplication` rows
// and their GPU test: sppark's fp_t (32-bit IMADs) and cuda/fp52.cuh's
// multiplication on the FP64 units. Each thread runs two independent chains
// so that its own multiplications overlap.
#include <cstddef>

#include "fp.cuh"
#include "fp52.cuh"
#include "util.cuh"

// Thread i's triple (x0, x1, y) of v: `iters` rounds of x0 ← x0·y,
// x1 ← x1·y, then x0 and x1 written back.
template <class F, class Mul>
__device__ __forceinline__ void mul_chains(F* v, size_t i, unsigned iters, Mul mul) {
    F x0 = v[3 * i], x1 = v[3 * i + 1];
    const F y = v[3 * i + 2];
    for (unsigned k = 0; k < iters; k++) {
        x0 = mul(x0, y);
        x1 = mul(x1, y);
    }
    v[3 * i] = x0;
    v[3 * i + 1] = x1;
}

__device__ __forceinline__ fp_t fp_mul(const fp_t& a, const fp_t& b) {
    return a * b;
}

// x: triples in Montgomery form (blst_fp's layout).
extern "C" __global__ void fp_mul_chains(fp_t* x, unsigned iters, size_t threads) {
    size_t i = global_tid();
    if (i < threads) mul_chains(x, i, iters, fp_mul);
}

// x: triples of fp52_t (values below 2p); a round is x0 ← x0·y·2^-416 mod p.
extern "C" __global__ void fp52_mul_chains(double* x, unsigned iters, size_t threads) {
    size_t i = global_tid();
    if (i < threads) mul_chains((fp52_t*)x, i, iters, fp52_mul);
}

// Both at once, to see whether the two kinds share an SM without slowing
// each other (fp_t's IMADs and fp52's FMAs run on different units): warp w
// runs fp52_mul_chains' rounds on x52 where w mod 8 < share52, else
// fp_mul_chains' on x; each thread's triple in the other buffer is left
// as it is.
extern "C" __global__ void fp_mixed_mul_chains(fp_t* x, double* x52, unsigned iters, unsigned share52, size_t threads) {
    size_t i = global_tid();
    if (i >= threads) return;
    if ((i / 32) % 8 < share52) mul_chains((fp52_t*)x52, i, iters, fp52_mul);
    else mul_chains(x, i, iters, fp_mul);
}
