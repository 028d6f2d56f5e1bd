/* A consumer of the installed package (scripts/install.sh), linked either
 * way: ffi-tests/run-install.sh builds it against the shared library and
 * against the static one, through pkg-config and through CMake.
 *
 *   app shared|static [FIXTURE_DIR]
 *
 * Checks that the ABI functions come from where the link put them (the
 * installed libsupraseal_c2.so.<N> for `shared`, the executable itself for
 * `static`), that an error crosses the ABI as an errno code with a message
 * naming the path, and, with FIXTURE_DIR (`supraseal-c2 fixture --out`), that
 * the first fixture set's proofs come out byte for byte as bellperson's.
 * Exit status 0 when every check passed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supraseal_c2.h"

#include "fixture.h"

static int failures;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "FAIL %s:%d: (%s) ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
            failures++;                                                    \
        }                                                                  \
    } while (0)

/* The file the loader took create_SRS from. */
static void check_origin(const char *mode) {
    Dl_info info;
    char from[PATH_MAX] = "", self[PATH_MAX] = "";
    if (!dladdr((void *)&create_SRS, &info) || !info.dli_fname || !realpath(info.dli_fname, from)) {
        CHECK(0, "dladdr(create_SRS) failed");
        return;
    }
    CHECK(realpath("/proc/self/exe", self) != NULL, "realpath(/proc/self/exe)");
    printf("%s: create_SRS comes from %s\n", mode, from);
    if (strcmp(mode, "static") == 0) {
        CHECK(strcmp(from, self) == 0, "static link: create_SRS is in %s, not in the executable %s", from, self);
    } else {
        const char *base = strrchr(from, '/');
        base = base ? base + 1 : from;
        CHECK(strncmp(base, "libsupraseal_c2.so.", strlen("libsupraseal_c2.so.")) == 0,
              "shared link: create_SRS is in %s, not in the installed libsupraseal_c2.so.<version>", from);
    }
}

static void check_error(void) {
    const char *missing = "/nonexistent/supraseal-c2-install-test.params";
    SRS srs = {NULL};
    RustError e = create_SRS(&srs, missing, false);
    printf("create_SRS(missing) -> code %d: %s\n", e.code, e.message ? e.message : "(null)");
    CHECK(e.code == ENOENT, "create_SRS on a missing file: code %d, expected ENOENT (%d)", e.code, ENOENT);
    CHECK(e.message != NULL && strstr(e.message, missing) != NULL, "the message does not name %s", missing);
    CHECK(srs.ptr == NULL, "create_SRS failed but filled the handle");
    free(e.message);
}

static void check_proofs(const char *dir) {
    fixture_set *sets = NULL;
    size_t count = 0;
    if (fixtures_load(dir, &sets, &count) != 0 || count == 0) {
        CHECK(0, "no fixtures in %s", dir);
        return;
    }
    fixture_set *f = &sets[0];
    SRS srs = {NULL};
    RustError e = create_SRS(&srs, f->params_path, false);
    CHECK(e.code == 0, "create_SRS(%s): code %d: %s", f->params_path, e.code, e.message ? e.message : "");
    free(e.message);
    if (e.code == 0) {
        groth16_proof *got = calloc(f->n, sizeof *got);
        e = generate_groth16_proofs_c(f->provers, f->n, f->r, f->s, got, &srs, NULL, -1);
        CHECK(e.code == 0, "generate_groth16_proofs_c: code %d: %s", e.code, e.message ? e.message : "");
        free(e.message);
        if (e.code == 0) {
            for (size_t i = 0; i < f->n; i++)
                CHECK(memcmp(&got[i], &f->expected[i], sizeof *got) == 0, "set %s: proof %zu differs from bellperson's",
                      f->name, i);
            printf("set %s: %zu proofs equal bellperson's\n", f->name, f->n);
        }
        free(got);
        drop_SRS(&srs);
    }
    fixtures_free(sets, count);
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3 || (strcmp(argv[1], "shared") != 0 && strcmp(argv[1], "static") != 0)) {
        fprintf(stderr, "usage: %s shared|static [FIXTURE_DIR]\n", argv[0]);
        return 2;
    }
    check_origin(argv[1]);
    check_error();
    if (argc == 3) check_proofs(argv[2]);
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("%s: all checks passed\n", argv[1]);
    return 0;
}
