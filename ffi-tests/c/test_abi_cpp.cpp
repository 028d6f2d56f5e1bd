// supraseal_c2.h from C++: the declarations link with C linkage, the layouts
// match docs/ARCHITECTURE.md §2, and a call returns the documented error.
//
//   test_abi_cpp FIXTURE_DIR
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "supraseal_c2.h"

static_assert(sizeof(fr_t) == 32, "fr_t");
static_assert(sizeof(groth16_proof) == 384, "groth16_proof");
static_assert(offsetof(groth16_proof, b) == 96 && offsetof(groth16_proof, c) == 288, "groth16_proof fields");
static_assert(sizeof(Assignment) == 136, "Assignment");
static_assert(offsetof(Assignment, aux_assignment_size) == 128, "Assignment fields");
static_assert(sizeof(RustError) == 16 && offsetof(RustError, message) == 8, "RustError");
static_assert(sizeof(SRS) == 8, "SRS");

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s FIXTURE_DIR\n", argv[0]);
        return 2;
    }
    int failures = 0;
    const std::string missing = std::string(argv[1]) + "/no-such-file.params";
    SRS srs{nullptr};
    RustError e = create_SRS(&srs, missing.c_str(), false);
    std::printf("create_SRS(missing) -> %d: %s\n", e.code, e.message ? e.message : "(null)");
    if (e.code != ENOENT || !e.message || !std::strstr(e.message, missing.c_str())) failures++;
    std::free(e.message);
    if (srs.ptr != nullptr) failures++;

    SRS empty = clone_SRS(nullptr);
    if (empty.ptr != nullptr) failures++;
    drop_SRS(&empty);
    void* mtx = create_gpu_mutex();
    if (!mtx) failures++;
    destroy_gpu_mutex(mtx);
    std::printf("cpp_header: %s\n", failures ? "FAILED" : "passed");
    return failures ? 1 : 0;
}
