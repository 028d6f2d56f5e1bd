// G1 batch addition (DESIGN §4 split MSM): the sum of the bases whose bit is
// set in a bitmap. Each thread sums a contiguous chunk with mixed additions;
// g1_reduce_groups then folds the per-thread partial sums.
#include "common.cuh"

// partials[t] = sum of bases[i] for i in thread t's chunk with bit i set.
extern "C" __global__ void g1_batch_add(const g1_affine_t* bases, const uint64_t* bitmap,
                                        size_t n, size_t chunk, g1_xyzz_t* partials) {
    size_t t = global_tid();
    size_t lo = t * chunk;
    g1_xyzz_t acc;
    acc.inf();
    for (size_t i = lo; i < lo + chunk && i < n; i++) {
        if ((bitmap[i >> 6] >> (i & 63)) & 1) {
            g1_affine_t p = bases[i];
            acc.add(p);
        }
    }
    partials[t] = acc;
}

// out[g] = sum of in[g*per_group .. (g+1)*per_group), as a Jacobian point.
// One block of REDUCE_THREADS threads per group.
extern "C" __global__ void g1_reduce_groups(const g1_xyzz_t* in, size_t per_group, g1_jacobian_t* out) {
    // Raw storage: the point type has a constructor, which __shared__ arrays may not run.
    __shared__ __align__(16) unsigned char sh_raw[REDUCE_THREADS * sizeof(g1_xyzz_t)];
    g1_xyzz_t* sh = reinterpret_cast<g1_xyzz_t*>(sh_raw);
    const g1_xyzz_t* base = in + (size_t)blockIdx.x * per_group;
    g1_xyzz_t acc;
    acc.inf();
    for (size_t k = threadIdx.x; k < per_group; k += blockDim.x) {
        g1_xyzz_t p = base[k];
        acc.add(p);
    }
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            g1_xyzz_t a = sh[threadIdx.x];
            g1_xyzz_t b = sh[threadIdx.x + s];
            a.add(b);
            sh[threadIdx.x] = a;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = to_jacobian(sh[0]);
}
