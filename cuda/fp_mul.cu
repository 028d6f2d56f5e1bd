// The field multiplication alone, for gpu_bench's `Fp multiplication` row
// and its GPU test: sppark's fp_t (32-bit IMADs) and cuda/fp52.cuh's
// multiplication on the FP64 units, each thread running two independent
// chains so that one thread's multiplications overlap.
#include <cstddef>

#include "fp.cuh"
#include "fp52.cuh"
#include "util.cuh"

// x holds (x0, x1, y) per thread, each in Montgomery form (blst_fp's layout):
// `iters` rounds of x0 ← x0·y, x1 ← x1·y, then x0 and x1 written back.
extern "C" __global__ void fp_mul_chains(fp_t* x, unsigned iters, size_t threads) {
    size_t i = global_tid();
    if (i >= threads) return;
    fp_t x0 = x[3 * i], x1 = x[3 * i + 1];
    const fp_t y = x[3 * i + 2];
    for (unsigned k = 0; k < iters; k++) {
        x0 = x0 * y;
        x1 = x1 * y;
    }
    x[3 * i] = x0;
    x[3 * i + 1] = x1;
}

// The same with 52-bit limbs in doubles (fp52_t, values below 2p):
// x0 ← x0·y·2^-416 mod p per round.
extern "C" __global__ void fp52_mul_chains(double* x, unsigned iters, size_t threads) {
    size_t i = global_tid();
    if (i >= threads) return;
    fp52_t* v = (fp52_t*)x;
    fp52_t x0 = v[3 * i], x1 = v[3 * i + 1];
    const fp52_t y = v[3 * i + 2];
    for (unsigned k = 0; k < iters; k++) {
        x0 = fp52_mul(x0, y);
        x1 = fp52_mul(x1, y);
    }
    v[3 * i] = x0;
    v[3 * i + 1] = x1;
}
