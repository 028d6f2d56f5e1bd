// Same-run reference timings of the `sppark` crate's kernels (issue 3), to put
// beside examples/gpu_bench.rs on the same GPU in the same run:
//   - G1 MSM, Pippenger (sppark's msm_t): points resident on the device
//     (uploaded once by the constructor, as sppark's published reference numbers),
//     scalars from page-locked host memory, result to the host;
//   - Fr NTT, forward, natural order in and out (NTT::Base_dev_ptr): data
//     already on the device, timed to the end of a stream synchronisation.
// Built on the development machine by scripts/build-sppark-bench.sh against the
// sppark crate's headers and the blst crate's libblst.a (nothing is copied
// into this repository); run on the GPU machine: `sppark_bench [max_msm_log]
// [max_ntt_log]`. Prints a markdown table like gpu_bench's.
#include <cuda.h>
#include <ff/bls12-381.hpp>
#include <ec/jacobian_t.hpp>
#include <ec/xyzz_t.hpp>

typedef jacobian_t<fp_t> point_t;
typedef xyzz_t<fp_t> bucket_t;
typedef bucket_t::affine_t affine_t;
typedef fr_t scalar_t;

#include <msm/pippenger.cuh>
#include <ntt/ntt.cuh>

#ifndef __CUDA_ARCH__
// blst's C API for the host-side points (blst.h itself clashes with the
// vect.h that sppark's host field types include, so the four functions used
// are declared here with blst's layouts: Jacobian and affine, 6 × 64-bit limbs
// per coordinate, Montgomery form).
extern "C" {
struct blst_p1 { uint64_t x[6], y[6], z[6]; };
struct blst_p1_affine { uint64_t x[6], y[6]; };
const blst_p1* blst_p1_generator();
void blst_p1_add_or_double(blst_p1* out, const blst_p1* a, const blst_p1* b);
void blst_p1s_to_affine(blst_p1_affine* dst, const blst_p1* const points[], size_t npoints);
}

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

static double now_ms() {
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

// A row's wall-clock window and the process's peak resident memory over it,
// on stderr in the form scripts/gpu-samples.py cuts nvidia-smi's samples by,
// as examples/gpu_bench.rs prints them: row_start resets the peak (Linux
// clear_refs 5), row_end prints the line.
static unsigned long long epoch_ms() {
    return (unsigned long long)std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

static unsigned long long row_start() {
    if (FILE* f = fopen("/proc/self/clear_refs", "w")) {
        fputs("5", f);
        fclose(f);
    }
    return epoch_ms();
}

static void row_end(const char* mode, int lg, unsigned long long t0) {
    unsigned long long kib = 0;
    if (FILE* f = fopen("/proc/self/status", "r")) {
        char line[256];
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "VmHWM: %llu kB", &kib) == 1) break;
        fclose(f);
    }
    fprintf(stderr, "ROW lib=sppark mode=%s 2^%d W=1 t0_ms=%llu t1_ms=%llu peak_rss_bytes=%llu\n", mode, lg, t0,
            epoch_ms(), kib * 1024);
}

template <class F> static double median_ms(int reps, F f) {
    std::vector<double> t;
    for (int i = 0; i < reps; i++) {
        double t0 = now_ms();
        f();
        t.push_back(now_ms() - t0);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// 2^16 distinct points k·G (k = 1, 2, ...), repeated to n: the MSM's work
// does not depend on the points' values, and distinct points for all n
// would cost minutes of host time at 2^26.
static std::vector<blst_p1_affine> bases(size_t n) {
    const size_t distinct = std::min<size_t>(n, 1 << 16);
    std::vector<blst_p1> proj(distinct);
    blst_p1 acc = *blst_p1_generator();
    for (size_t i = 0; i < distinct; i++) {
        proj[i] = acc;
        blst_p1_add_or_double(&acc, &acc, blst_p1_generator());
    }
    std::vector<blst_p1_affine> out(n);
    const blst_p1* ptrs[2] = {proj.data(), nullptr};
    blst_p1s_to_affine(out.data(), ptrs, distinct);
    for (size_t i = distinct; i < n; i++) out[i] = out[i % distinct];
    return out;
}

// Uniform 255-bit integers below 2^254 < r (canonical form, mont = false).
static std::vector<scalar_t> scalars(size_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<scalar_t> out(n);
    for (auto& s : out) {
        uint64_t* w = reinterpret_cast<uint64_t*>(&s);
        for (int j = 0; j < 4; j++) w[j] = rng();
        w[3] &= 0x3fffffffffffffffULL;
    }
    return out;
}

int main(int argc, char** argv) {
    int max_msm = argc > 1 ? atoi(argv[1]) : 26;
    int max_ntt = argc > 2 ? atoi(argv[2]) : 27;
    if (ngpus() == 0) {
        printf("skipped: no CUDA device\n");
        return 0;
    }
    static_assert(sizeof(affine_t) == sizeof(blst_p1_affine), "affine layout");
    printf("| op | size | sppark ms (median) | how |\n|---|---|---|---|\n");
    fflush(stdout);
    for (int lg = 20; lg <= max_msm; lg += 2) {
        size_t n = (size_t)1 << lg;
        auto b = bases(n);
        auto s = scalars(n, lg);
        unsigned long long t0 = row_start();
        cudaHostRegister(s.data(), n * sizeof(scalar_t), cudaHostRegisterDefault);
        {
            msm_t<bucket_t, point_t, affine_t, scalar_t> msm{reinterpret_cast<const affine_t*>(b.data()), n};
            point_t out;
            RustError e = msm.invoke(out, (const affine_t*)nullptr, n, (const scalar_t*)s.data(), false);  // warm-up
            if (e.code) {
                printf("MSM 2^%d failed: code %d\n", lg, e.code);
                return 1;
            }
            double ms = median_ms(5, [&] { msm.invoke(out, (const affine_t*)nullptr, n, (const scalar_t*)s.data(), false); });
            printf("| G1 MSM | 2^%d | %.1f | points on the device, page-locked host scalars (5 runs) |\n", lg, ms);
            fflush(stdout);
        }
        cudaHostUnregister(s.data());
        row_end("G1 MSM", lg, t0);
    }
    const gpu_t& gpu = select_gpu();
    for (int lg = 20; lg <= max_ntt; lg++) {
        size_t n = (size_t)1 << lg;
        auto host = scalars(n, 100 + lg);
        dev_ptr_t<fr_t> d{n, gpu};
        gpu.HtoD(&d[0], host.data(), n);
        gpu.sync();
        auto once = [&] {
            NTT::Base_dev_ptr(gpu[0], &d[0], lg, NTT::InputOutputOrder::NN, NTT::Direction::forward,
                              NTT::Type::standard);
            gpu[0].sync();
        };
        once();  // warm-up (twiddle tables are sppark's constants)
        double ms = median_ms(5, once);
        printf("| Fr NTT forward | 2^%d | %.2f | data on the device (5 runs) |\n", lg, ms);
        fflush(stdout);
    }
    return 0;
}
#endif
