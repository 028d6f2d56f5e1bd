/* The C ABI's ownership rules under a memory checker: every successful and
 * every failing call, repeated, must leave nothing allocated and read no
 * freed memory. ffi-tests/run-valgrind.sh runs it under valgrind memcheck on
 * the CPU backend (SUPRASEAL_C2_BACKEND=cpu) with a small fixture set.
 *
 *   test_leaks FIXTURE_DIR [SCRATCH_DIR]   all checks; exit 0 when they pass
 *   test_leaks --leak-on-purpose           drops one error message unfreed,
 *                                          so the checker must fail (proves
 *                                          the run can detect a leak)
 *
 * Covered: create_SRS/prove/drop cycles (cached and uncached, clone, evict),
 * every EINVAL input class of generate_groth16_proofs_c, every kind of bad
 * params file at create_SRS, and the split form with the caller's buffers
 * wiped and freed between start and finalize. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supraseal_c2.h"

#include "fixture.h"

static int failures, checks;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        checks++;                                                          \
        if (!(cond)) {                                                     \
            fprintf(stderr, "FAIL %s:%d: (%s) ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
            failures++;                                                    \
        }                                                                  \
    } while (0)

static int ok(RustError e, const char *what) {
    CHECK(e.code == 0, "%s: code %d: %s", what, e.code, e.message ? e.message : "(no message)");
    free(e.message);
    return e.code == 0;
}

static int error_cases;

/* Expects `code` with a non-empty message; frees it. */
static void expect(RustError e, int code, const char *what) {
    error_cases++;
    CHECK(e.code == code, "%s: code %d, expected %d (%s)", what, e.code, code, e.message ? e.message : "");
    CHECK(e.message && *e.message, "%s: no message", what);
    free(e.message);
}

static void prove_ok(const fixture_set *f, const SRS *srs, const char *what) {
    groth16_proof *got = malloc(f->n * sizeof *got);
    if (ok(generate_groth16_proofs_c(f->provers, f->n, f->r, f->s, got, srs, NULL, -1), what))
        CHECK(memcmp(got, f->expected, f->n * sizeof *got) == 0, "%s: proofs differ from bellperson's", what);
    free(got);
}

/* create_SRS / prove / drop with a clone and a lock handle. Loading checks
 * every point of the file, the slow part under valgrind, so the program
 * loads the key three times in all: here (cached, shared by the sections
 * below, evicted at the end of split()), the cut at len / 2 in bad_params,
 * and once uncached in split(). */
static void cycles(const fixture_set *f) {
    for (int i = 0; i < 2; i++) {
        SRS a = {NULL};
        if (!ok(create_SRS(&a, f->params_path, true), "create_SRS cached")) continue;
        SRS b = clone_SRS(&a);
        void *mtx = create_gpu_mutex();
        groth16_proof one;
        ok(generate_groth16_proofs_c(f->provers, 1, f->r, f->s, &one, &b, mtx, 0), "prove with a lock handle");
        destroy_gpu_mutex(mtx);
        drop_SRS(&a);
        prove_ok(f, &b, "prove with the clone after the original was dropped");
        drop_SRS(&b);
    }
}

/* Every class of bad input to generate_groth16_proofs_c, each EINVAL. */
static void bad_inputs(const fixture_set *f) {
    SRS srs = {NULL};
    if (!ok(create_SRS(&srs, f->params_path, true), "create_SRS")) return;
    size_t n = f->n;
    groth16_proof *got = malloc(n * sizeof *got);
    const fr_t *r = f->r, *s = f->s;
#define CALL(provers, num, rr, ss, out, key, mtx, gpu) generate_groth16_proofs_c(provers, num, rr, ss, out, key, mtx, gpu)
    expect(CALL(NULL, n, r, s, got, &srs, NULL, -1), EINVAL, "provers NULL");
    expect(CALL(f->provers, 0, r, s, got, &srs, NULL, -1), EINVAL, "num_circuits 0");
    expect(CALL(f->provers, n, NULL, s, got, &srs, NULL, -1), EINVAL, "r_s NULL");
    expect(CALL(f->provers, n, r, NULL, got, &srs, NULL, -1), EINVAL, "s_s NULL");
    expect(CALL(f->provers, n, r, s, NULL, &srs, NULL, -1), EINVAL, "proofs NULL");
    expect(CALL(f->provers, n, r, s, got, NULL, NULL, -1), EINVAL, "srs NULL");
    SRS empty = {NULL};
    expect(CALL(f->provers, n, r, s, got, &empty, NULL, -1), EINVAL, "empty SRS handle");
    expect(CALL(f->provers, n, r, s, got, &srs, NULL, -2), EINVAL, "gpu_index -2");
    uint64_t not_a_handle[16] = {0};
    expect(CALL(f->provers, 1, r, s, got, &srs, not_a_handle, 0), EINVAL, "gpu_mtx not a handle");

    Assignment *p = malloc(n * sizeof *p);
#define EDITED(what, edit)                                        \
    do {                                                          \
        memcpy(p, f->provers, n * sizeof *p);                     \
        edit;                                                     \
        expect(CALL(p, n, r, s, got, &srs, NULL, -1), EINVAL, what); \
    } while (0)
    EDITED("a NULL", p[0].a = NULL);
    EDITED("aux NULL", p[n - 1].aux_assignment_data = NULL);
    EDITED("density NULL", p[0].b_aux_density = NULL);
    EDITED("b misaligned", p[0].b = (const fr_t *)((const char *)p[0].b + 4));
    EDITED("a_aux_bit_len", p[0].a_aux_bit_len -= 1);
    EDITED("b_inp_bit_len", p[0].b_inp_bit_len += 1);
    EDITED("a_aux_popcount", p[0].a_aux_popcount += 1);
    EDITED("b_aux_popcount", p[n - 1].b_aux_popcount -= 1);
    EDITED("abc_size 0", p[0].abc_size = 0);
    EDITED("abc_size beyond the domain", p[0].abc_size = (size_t)1 << 20);
    EDITED("aux size", p[0].aux_assignment_size -= 1);
    EDITED("circuits differ in abc_size", p[n - 1].abc_size -= 1);

    /* a density vector with one bit moved (same popcount, other bits) */
    size_t words = (f->provers[0].a_aux_bit_len + 63) / 64;
    uint64_t *moved = malloc(words * sizeof *moved);
    memcpy(moved, f->provers[0].a_aux_density, words * sizeof *moved);
    size_t len = f->provers[0].a_aux_bit_len, set = len, clear = len;
    for (size_t i = 0; i < len; i++) {
        int bit = (moved[i / 64] >> (i % 64)) & 1;
        if (bit && set == len) set = i;
        if (!bit && clear == len) clear = i;
    }
    if (set < len && clear < len && n > 1) {
        moved[set / 64] ^= (uint64_t)1 << (set % 64);
        moved[clear / 64] ^= (uint64_t)1 << (clear % 64);
        EDITED("density differs", p[1].a_aux_density = moved);
    }
    free(moved);

    /* non-canonical scalars: r itself in aux, all-ones in r_s */
    static const uint64_t R[4] = {0xffffffff00000001ull, 0x53bda402fffe5bfeull, 0x3339d80809a1d805ull,
                                  0x73eda753299d7d48ull};
    size_t aux_len = f->provers[0].aux_assignment_size;
    fr_t *aux = malloc(aux_len * sizeof *aux);
    memcpy(aux, f->provers[0].aux_assignment_data, aux_len * sizeof *aux);
    memcpy(&aux[aux_len / 2], R, sizeof R);
    EDITED("non-canonical aux", p[0].aux_assignment_data = aux);
    free(aux);
    fr_t *bad_r = malloc(n * sizeof *bad_r);
    memcpy(bad_r, r, n * sizeof *bad_r);
    memset(&bad_r[n - 1], 0xFF, sizeof *bad_r);
    expect(CALL(f->provers, n, bad_r, s, got, &srs, NULL, -1), EINVAL, "non-canonical r");
    free(bad_r);

    /* an unknown backend name is EINVAL too; restore the CPU backend */
    setenv("SUPRASEAL_C2_BACKEND", "bogus", 1);
    expect(CALL(f->provers, n, r, s, got, &srs, NULL, -1), EINVAL, "SUPRASEAL_C2_BACKEND=bogus");
    setenv("SUPRASEAL_C2_BACKEND", "cpu", 1);
#undef EDITED
#undef CALL
    free(p);
    prove_ok(f, &srs, "prove after the errors");
    free(got);
    drop_SRS(&srs);
}

static void write_file(const char *path, const void *bytes, size_t len) {
    FILE *out = fopen(path, "wb");
    CHECK(out && fwrite(bytes, 1, len, out) == len, "cannot write %s", path);
    if (out) fclose(out);
}

/* Every kind of bad params file, with and without the cache. */
static void bad_params(const fixture_set *f, const char *scratch) {
    size_t len = 0;
    unsigned char *good = read_file(f->params_path, &len);
    CHECK(good != NULL && len > 2000, "cannot read %s", f->params_path);
    if (!good) return;
    unsigned char *bytes = malloc(len + 16);
    char path[4096];
    SRS srs = {(const void *)&srs}; /* sentinel: must stay untouched */
    snprintf(path, sizeof path, "%s/leaks-%ld.params", scratch, (long)getpid());
    /* Failures early in the file: every one of them with and without the
     * cache. Only the cut at len / 2 decodes many points. */
    write_file(path, good, len / 2); /* h, and part of l, decoded, then freed */
    expect(create_SRS(&srs, path, true), EINVAL, "truncated params (half)");
    for (int cache = 0; cache < 2; cache++) {
        /* cut in the vk, in the ic count and points, in h */
        size_t cuts[] = {1, 100, 500, 864, 866, 1000, 2000};
        for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
            write_file(path, good, cuts[i]);
            expect(create_SRS(&srs, path, cache), EINVAL, "truncated params");
        }
        write_file(path, good, 0);
        expect(create_SRS(&srs, path, cache), EINVAL, "empty params");
        memcpy(bytes, good, len);
        memset(bytes + len, 0, 16);
        write_file(path, bytes, len + 7);
        expect(create_SRS(&srs, path, cache), EINVAL, "trailing bytes");
        memcpy(bytes, good, len);
        memset(bytes + 864, 0xFF, 4); /* the ic count (after the vk): 2^32 - 1 points */
        write_file(path, bytes, len);
        expect(create_SRS(&srs, path, cache), EINVAL, "oversized count");
        memcpy(bytes, good, len);
        size_t h0 = 868 + 96 * ((size_t)bytes[864] << 24 | (size_t)bytes[865] << 16 | (size_t)bytes[866] << 8 | bytes[867]);
        bytes[h0 + 4 + 95] ^= 1; /* last byte of h's first point: off the curve */
        write_file(path, bytes, len);
        expect(create_SRS(&srs, path, cache), EINVAL, "point off the curve");
        memcpy(bytes, good, len);
        bytes[96] |= 0x80; /* compression flag on beta_g1 */
        write_file(path, bytes, len);
        expect(create_SRS(&srs, path, cache), EINVAL, "compression flag");
        expect(create_SRS(&srs, scratch, cache), EINVAL, "a directory");
        snprintf(path, sizeof path, "%s/missing-%ld.params", scratch, (long)getpid());
        expect(create_SRS(&srs, path, cache), ENOENT, "missing file");
        snprintf(path, sizeof path, "%s/leaks-%ld.params", scratch, (long)getpid());
        expect(create_SRS(&srs, NULL, cache), EINVAL, "params_path NULL");
        expect(create_SRS(NULL, f->params_path, cache), EINVAL, "ret NULL");
    }
    CHECK(srs.ptr == (const void *)&srs, "create_SRS wrote *ret on error");
    remove(path);
    free(bytes);
    free(good);
}

/* Split form: the caller's buffers are wiped and freed before finalize. */
static void split(const fixture_set *f) {
    SRS srs = {NULL};
    if (!ok(create_SRS(&srs, f->params_path, true), "create_SRS")) return;
    unsigned char *buf = malloc(f->witness_len);
    Assignment *p = malloc(f->n * sizeof *p);
    fr_t *r = malloc(f->n * sizeof *r), *s = malloc(f->n * sizeof *s);
    memcpy(buf, f->witness_buf, f->witness_len);
    memcpy(r, f->r, f->n * sizeof *r);
    memcpy(s, f->s, f->n * sizeof *s);
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
    void *pending = NULL;
    int started = ok(generate_groth16_proofs_start_c(p, f->n, r, s, &srs, NULL, -1, &pending), "start");
    memset(buf, 0xFF, f->witness_len);
    memset(p, 0xFF, f->n * sizeof *p);
    free(buf);
    free(p);
    free(r);
    free(s);
    evict_SRS(&srs); /* the cache's reference goes... */
    drop_SRS(&srs);  /* ...and ours: the pending proof holds the last one */
    evict_SRS(NULL);
    groth16_proof *got = malloc(f->n * sizeof *got);
    if (started && ok(finalize_groth16_proof_c(pending, got), "finalize"))
        CHECK(memcmp(got, f->expected, f->n * sizeof *got) == 0, "split-form proofs differ from bellperson's");
    expect(finalize_groth16_proof_c(pending, got), EINVAL, "finalize twice");
    expect(finalize_groth16_proof_c(NULL, got), EINVAL, "finalize NULL");
    free(got);

    if (ok(create_SRS(&srs, f->params_path, false), "create_SRS")) {
        pending = NULL;
        if (ok(generate_groth16_proofs_start_c(f->provers, f->n, f->r, f->s, &srs, NULL, -1, &pending), "start"))
            destroy_pending_proof(pending); /* never finalized */
        destroy_pending_proof(pending);      /* stale: ignored */
        destroy_pending_proof(NULL);
        expect(generate_groth16_proofs_start_c(f->provers, f->n, f->r, f->s, &srs, NULL, -1, NULL), EINVAL,
               "start pending_out NULL");
        expect(generate_groth16_proofs_start_c(f->provers, 0, f->r, f->s, &srs, NULL, -1, &pending), EINVAL,
               "start num_circuits 0");
        CHECK(pending == NULL, "*pending_out not reset on error");
        drop_SRS(&srs);
    }
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--leak-on-purpose") == 0) {
        SRS srs = {NULL};
        RustError e = create_SRS(&srs, "/nonexistent/leak-on-purpose.params", false);
        printf("leaking the message of code %d on purpose\n", e.code);
        e.message = NULL; /* the only pointer to it: definitely lost */
        return 0;
    }
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s FIXTURE_DIR [SCRATCH_DIR] | --leak-on-purpose\n", argv[0]);
        return 2;
    }
    const char *scratch = argc == 3 ? argv[2] : ".";
    setenv("SUPRASEAL_C2_BACKEND", "cpu", 0);
    fixture_set *sets = NULL;
    size_t count = 0;
    if (fixtures_load(argv[1], &sets, &count) != 0) return 2;
    const fixture_set *f = &sets[0];
    printf("set %s: %zu circuits, %zu constraints\n", f->name, f->n, f->provers[0].abc_size);
    cycles(f);
    bad_inputs(f);
    bad_params(f, scratch);
    split(f);
    fixtures_free(sets, count);
    printf("test_leaks: %s (%d checks, %d error cases, %d failure(s))\n", failures ? "FAILED" : "passed", checks,
           error_cases, failures);
    return failures ? 1 : 0;
}
