/* The supraseal-c2 C ABI used from C, as an existing caller does: only
 * supraseal_c2.h, the shared library linked through the CMake package.
 *
 *   test_abi TEST FIXTURE_DIR     TEST: proofs | split | srs | errors | library
 *
 * FIXTURE_DIR is the output of `supraseal-c2 fixture --out DIR` (layout in
 * ffi-tests/FIXTURES.md and fixture.c). Expected proofs there come from
 * bellperson's prover; here they must come out of the library byte for byte.
 * Exit status 0 when every check passed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Expects success; prints and frees the message otherwise. */
static int ok(RustError e, const char *what) {
    if (e.code == 0) {
        free(e.message); /* NULL on success, but free(NULL) is fine either way */
        return 1;
    }
    fprintf(stderr, "FAIL %s: code %d: %s\n", what, e.code, e.message ? e.message : "(no message)");
    free(e.message);
    failures++;
    return 0;
}

/* Expects error `code` with a message containing `needle`; frees it. */
static void expect_error(RustError e, int code, const char *needle, const char *what) {
    const char *m = e.message ? e.message : "";
    printf("  %s -> code %d: %s\n", what, e.code, m);
    CHECK(e.code == code, "%s: code %d, expected %d", what, e.code, code);
    CHECK(e.message != NULL && *m != '\0', "%s: no message", what);
    if (needle) CHECK(strstr(m, needle) != NULL, "%s: message does not mention \"%s\"", what, needle);
    free(e.message);
}

static void check_proofs(const groth16_proof *got, const groth16_proof *want, size_t n, const char *what) {
    for (size_t i = 0; i < n; i++)
        CHECK(memcmp(&got[i], &want[i], sizeof(groth16_proof)) == 0, "%s: proof %zu differs from bellperson's", what,
              i);
}

static groth16_proof *proof_buffer(size_t n) {
    groth16_proof *p = malloc(n * sizeof *p);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    memset(p, 0xA5, n * sizeof *p);
    return p;
}

static int untouched(const groth16_proof *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n * sizeof *p; i++)
        if (b[i] != 0xA5) return 0;
    return 1;
}

/* One call for all circuits, then one call per circuit with an explicit
 * lock handle; both must give bellperson's bytes. Swapped r and s must not. */
static void test_proofs(fixture_set *sets, size_t count) {
    for (size_t k = 0; k < count; k++) {
        fixture_set *f = &sets[k];
        printf("set %s: %zu circuit(s), %zu constraints, %zu aux\n", f->name, f->n, f->provers[0].abc_size,
               f->provers[0].aux_assignment_size);
        SRS srs = {NULL};
        if (!ok(create_SRS(&srs, f->params_path, false), "create_SRS")) continue;
        CHECK(srs.ptr != NULL, "create_SRS gave an empty handle");

        groth16_proof *got = proof_buffer(f->n);
        if (ok(generate_groth16_proofs_c(f->provers, f->n, f->r, f->s, got, &srs, NULL, -1), "prove all"))
            check_proofs(got, f->expected, f->n, "one call");

        void *mtx = create_gpu_mutex();
        CHECK(mtx != NULL, "create_gpu_mutex returned NULL");
        for (size_t i = 0; i < f->n; i++) {
            groth16_proof one;
            memset(&one, 0, sizeof one);
            if (ok(generate_groth16_proofs_c(&f->provers[i], 1, &f->r[i], &f->s[i], &one, &srs, mtx, 0), "prove one"))
                check_proofs(&one, &f->expected[i], 1, "per-circuit call with a lock handle");
        }
        destroy_gpu_mutex(mtx);
        destroy_gpu_mutex(NULL);

        groth16_proof swapped;
        if (ok(generate_groth16_proofs_c(f->provers, 1, f->s, f->r, &swapped, &srs, NULL, -1), "prove swapped"))
            CHECK(memcmp(&swapped, &f->expected[0], sizeof swapped) != 0, "swapping r and s changed nothing");
        free(got);
        drop_SRS(&srs);
        CHECK(srs.ptr == NULL, "drop_SRS did not empty the handle");
    }
}

/* A deep copy of the set's witness buffer with the Assignments re-pointed. */
static Assignment *copy_provers(const fixture_set *f, unsigned char **buf_out) {
    unsigned char *buf = malloc(f->witness_len);
    Assignment *p = malloc(f->n * sizeof *p);
    if (!buf || !p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    memcpy(buf, f->witness_buf, f->witness_len);
    const unsigned char *base = f->witness_buf;
#define REBASE(field) p[i].field = (void *)(buf + ((const unsigned char *)f->provers[i].field - base))
    for (size_t i = 0; i < f->n; i++) {
        p[i] = f->provers[i];
        REBASE(a_aux_density);
        REBASE(b_inp_density);
        REBASE(b_aux_density);
        REBASE(a);
        REBASE(b);
        REBASE(c);
        REBASE(inp_assignment_data);
        REBASE(aux_assignment_data);
    }
#undef REBASE
    *buf_out = buf;
    return p;
}

static void test_split(fixture_set *f) {
    SRS srs = {NULL};
    if (!ok(create_SRS(&srs, f->params_path, true), "create_SRS")) return;

    /* start from copies that are wiped and freed before finalize: the
     * pending handle must own what it needs, including the SRS reference. */
    unsigned char *buf;
    Assignment *provers = copy_provers(f, &buf);
    fr_t *r = malloc(f->n * sizeof *r), *s = malloc(f->n * sizeof *s);
    if (!r || !s) exit(2);
    memcpy(r, f->r, f->n * sizeof *r);
    memcpy(s, f->s, f->n * sizeof *s);
    void *pending = NULL;
    int started = ok(generate_groth16_proofs_start_c(provers, f->n, r, s, &srs, NULL, -1, &pending), "start");
    CHECK(!started || pending != NULL, "start succeeded with a NULL handle");
    memset(buf, 0xFF, f->witness_len);
    memset(provers, 0xFF, f->n * sizeof *provers);
    memset(r, 0xFF, f->n * sizeof *r);
    memset(s, 0xFF, f->n * sizeof *s);
    free(buf);
    free(provers);
    free(r);
    free(s);
    drop_SRS(&srs);

    groth16_proof *got = proof_buffer(f->n);
    if (started) {
        if (ok(finalize_groth16_proof_c(pending, got), "finalize")) check_proofs(got, f->expected, f->n, "split form");
        /* finalize freed the handle: a second finalize is refused. */
        memset(got, 0xA5, f->n * sizeof *got);
        expect_error(finalize_groth16_proof_c(pending, got), EINVAL, NULL, "finalize twice");
        CHECK(untouched(got, f->n), "a refused finalize wrote proofs");
    }
    expect_error(finalize_groth16_proof_c(NULL, got), EINVAL, NULL, "finalize(NULL)");

    /* start, then destroy without finalize (twice over, to catch leaks of state). */
    if (ok(create_SRS(&srs, f->params_path, true), "create_SRS again")) {
        for (int i = 0; i < 2; i++) {
            pending = NULL;
            if (ok(generate_groth16_proofs_start_c(f->provers, f->n, f->r, f->s, &srs, NULL, -1, &pending), "start"))
                destroy_pending_proof(pending);
        }
        destroy_pending_proof(NULL);
        expect_error(generate_groth16_proofs_start_c(f->provers, f->n, f->r, f->s, &srs, NULL, -1, NULL), EINVAL,
                     "pending_out", "start with pending_out = NULL");
        pending = (void *)&srs; /* any non-NULL value: must be reset to NULL on error */
        expect_error(generate_groth16_proofs_start_c(NULL, f->n, f->r, f->s, &srs, NULL, -1, &pending), EINVAL, NULL,
                     "start with provers = NULL");
        CHECK(pending == NULL, "*pending_out not reset to NULL on error");
        /* the one-shot call still agrees after all that */
        if (ok(generate_groth16_proofs_c(f->provers, f->n, f->r, f->s, got, &srs, NULL, -1), "prove"))
            check_proofs(got, f->expected, f->n, "one-shot after split");
        drop_SRS(&srs);
    }
    free(got);
}

static void test_srs(fixture_set *f) {
    SRS a = {NULL}, b = {NULL}, d = {NULL}, e = {NULL};
    if (!ok(create_SRS(&a, f->params_path, true), "create_SRS a") ||
        !ok(create_SRS(&b, f->params_path, true), "create_SRS b"))
        return;
    CHECK(a.ptr != NULL && a.ptr == b.ptr, "two cached loads of one path give different keys");
    SRS c = clone_SRS(&a);
    CHECK(c.ptr == a.ptr, "clone_SRS gave another key");
    drop_SRS(&a);
    CHECK(a.ptr == NULL, "drop_SRS did not empty the handle");
    drop_SRS(&a); /* no-op on an emptied handle */
    drop_SRS(NULL);
    drop_SRS(&b);

    groth16_proof *got = proof_buffer(f->n);
    if (ok(generate_groth16_proofs_c(f->provers, f->n, f->r, f->s, got, &c, NULL, -1), "prove with the clone"))
        check_proofs(got, f->expected, f->n, "clone after the original was dropped");

    /* evicted: the next cached load is a fresh key (c keeps the old one alive) */
    evict_SRS(&c);
    evict_SRS(NULL);
    if (ok(create_SRS(&d, f->params_path, true), "create_SRS after evict")) {
        CHECK(d.ptr != NULL && d.ptr != c.ptr, "evict_SRS did not drop the cache entry");
        memset(got, 0xA5, f->n * sizeof *got);
        if (ok(generate_groth16_proofs_c(f->provers, f->n, f->r, f->s, got, &d, NULL, -1), "prove with reloaded"))
            check_proofs(got, f->expected, f->n, "reloaded key");
    }
    if (ok(create_SRS(&e, f->params_path, false), "create_SRS uncached"))
        CHECK(e.ptr != NULL && e.ptr != d.ptr, "cache = false returned the cached key");

    SRS empty = clone_SRS(NULL);
    CHECK(empty.ptr == NULL, "clone_SRS(NULL) is not empty");
    SRS empty2 = clone_SRS(&empty);
    CHECK(empty2.ptr == NULL, "clone of an empty handle is not empty");
    drop_SRS(&empty);
    drop_SRS(&c);
    drop_SRS(&d);
    drop_SRS(&e);
    evict_SRS(&d); /* emptied handle: no-op */
    free(got);
}

static void test_errors(fixture_set *f, const char *dir) {
    SRS srs = {NULL};
    if (!ok(create_SRS(&srs, f->params_path, true), "create_SRS")) return;
    groth16_proof *got = proof_buffer(f->n);

    expect_error(generate_groth16_proofs_c(NULL, f->n, f->r, f->s, got, &srs, NULL, -1), EINVAL, "provers",
                 "provers = NULL");
    expect_error(generate_groth16_proofs_c(f->provers, f->n, f->r, f->s, got, NULL, NULL, -1), EINVAL, NULL,
                 "srs = NULL");

    Assignment bad = f->provers[0];
    bad.a_aux_popcount += 1;
    expect_error(generate_groth16_proofs_c(&bad, 1, f->r, f->s, got, &srs, NULL, -1), EINVAL, "popcount",
                 "a_aux_popcount off by one");
    bad = f->provers[0];
    bad.aux_assignment_size -= 1; /* no longer a_aux_bit_len, nor the params' aux count */
    expect_error(generate_groth16_proofs_c(&bad, 1, f->r, f->s, got, &srs, NULL, -1), EINVAL, "aux",
                 "aux_assignment_size off by one");
    CHECK(untouched(got, f->n), "a failed call wrote proofs");

    char path[4096];
    snprintf(path, sizeof path, "%s/does-not-exist-%ld.params", dir, (long)getpid());
    SRS missing = {(const void *)&srs}; /* sentinel: must be left untouched */
    expect_error(create_SRS(&missing, path, true), ENOENT, path, "missing params file");
    CHECK(missing.ptr == (const void *)&srs, "create_SRS wrote *ret on error");
    expect_error(create_SRS(&missing, NULL, true), EINVAL, NULL, "params_path = NULL");
    expect_error(create_SRS(NULL, f->params_path, true), EINVAL, NULL, "ret = NULL");

    /* a truncated copy of the params file is rejected at load time */
    size_t len = 0;
    unsigned char *params = read_file(f->params_path, &len);
    snprintf(path, sizeof path, "truncated-%ld.params", (long)getpid());
    FILE *out = params ? fopen(path, "wb") : NULL;
    CHECK(out != NULL, "cannot write %s", path);
    if (out) {
        size_t half = len / 2;
        CHECK(fwrite(params, 1, half, out) == half, "short write");
        fclose(out);
        expect_error(create_SRS(&missing, path, false), EINVAL, path, "truncated params file");
        remove(path);
    }
    free(params);

    /* still usable after all the errors */
    if (ok(generate_groth16_proofs_c(f->provers, f->n, f->r, f->s, got, &srs, NULL, -1), "prove"))
        check_proofs(got, f->expected, f->n, "after errors");
    free(got);
    drop_SRS(&srs);
}

/* Which library the loader picked for the SONAME the executable records
 * (SUPRASEAL_C2_SONAME, e.g. libsupraseal_c2.so.0): the first LD_LIBRARY_PATH
 * entry that has that name, else the installed one this binary was linked
 * with (its run path). Proves that swapping the library needs no relink. */
static void test_library(void) {
    Dl_info info;
    void *sym = dlsym(RTLD_DEFAULT, "generate_groth16_proofs_c");
    CHECK(sym != NULL, "dlsym: %s", dlerror());
    if (!sym || !dladdr(sym, &info) || !info.dli_fname) {
        CHECK(0, "dladdr failed");
        return;
    }
    char loaded[PATH_MAX], want[PATH_MAX] = "";
    CHECK(realpath(info.dli_fname, loaded) != NULL, "realpath(%s)", info.dli_fname);
    printf("loaded library: %s\n", loaded);

    const char *lp = getenv("LD_LIBRARY_PATH");
    char *paths = lp ? strdup(lp) : NULL;
    for (char *save = NULL, *d = paths ? strtok_r(paths, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save)) {
        char cand[PATH_MAX];
        snprintf(cand, sizeof cand, "%s/%s", d, SUPRASEAL_C2_SONAME);
        if (access(cand, F_OK) == 0 && realpath(cand, want)) break;
    }
    free(paths);
    if (!*want && !realpath(SUPRASEAL_C2_INSTALLED_LIB, want)) snprintf(want, sizeof want, "%s", SUPRASEAL_C2_INSTALLED_LIB);
    printf("expected library: %s\n", want);
    CHECK(strcmp(loaded, want) == 0, "loaded %s, expected %s", loaded, want);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s proofs|split|srs|errors|library FIXTURE_DIR\n", argv[0]);
        return 2;
    }
    const char *test = argv[1], *dir = argv[2];
    /* The library's layout contract (docs/ARCHITECTURE.md §2), as the header declares it. */
    CHECK(sizeof(fr_t) == 32 && sizeof(groth16_proof) == 384 && sizeof(Assignment) == 136 &&
              sizeof(RustError) == 16 && sizeof(SRS) == 8,
          "header struct sizes");
    if (strcmp(test, "library") == 0) {
        test_library();
    } else {
        fixture_set *sets = NULL;
        size_t count = 0;
        if (fixtures_load(dir, &sets, &count) != 0) return 2;
        if (strcmp(test, "proofs") == 0)
            test_proofs(sets, count);
        else if (strcmp(test, "split") == 0)
            test_split(&sets[0]);
        else if (strcmp(test, "srs") == 0)
            test_srs(&sets[0]);
        else if (strcmp(test, "errors") == 0)
            test_errors(&sets[0], dir);
        else {
            fprintf(stderr, "unknown test %s\n", test);
            failures++;
        }
        fixtures_free(sets, count);
    }
    printf("%s: %s (%d failure(s))\n", test, failures ? "FAILED" : "passed", failures);
    return failures ? 1 : 0;
}
