/* Reader for `supraseal-c2 fixture` output. Layout (all little-endian u64;
 * fr_t = 4 limbs, Montgomery form; every field 8-byte aligned):
 *
 *   fixtures.txt   lines "<set> <params file> <circuits>"
 *   <set>.witness  "SC2WIT01", u64 count, then per circuit
 *                  9 x u64 (a_aux_bit_len, a_aux_popcount, b_inp_bit_len,
 *                  b_inp_popcount, b_aux_bit_len, b_aux_popcount, abc_size,
 *                  inp_size, aux_size), the three density bit vectors
 *                  (ceil(bit_len/64) words each), a, b, c (abc_size fr_t
 *                  each), inp (inp_size fr_t), aux (aux_size fr_t)
 *   <set>.r/.s     count x fr_t
 *   <set>.proofs   count x 384-byte groth16_proof
 *
 * The file is read whole into one malloc'ed (16-byte aligned) buffer and the
 * Assignment pointers point into it: this is little-endian x86-64, where the
 * file bytes are the in-memory layout. */
#include "fixture.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return NULL;
    }
    void *buf = NULL;
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "%s: cannot get the size\n", path);
        goto done;
    }
    buf = malloc(size ? (size_t)size : 1);
    if (!buf) {
        fprintf(stderr, "%s: out of memory\n", path);
        goto done;
    }
    if (fread(buf, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "%s: short read\n", path);
        free(buf);
        buf = NULL;
        goto done;
    }
    *len = (size_t)size;
done:
    fclose(f);
    return buf;
}

/* A cursor over the witness buffer: every take is bounds-checked. */
typedef struct {
    const unsigned char *p;
    size_t left;
    int bad;
} cursor;

static const void *take(cursor *c, size_t count, size_t size) {
    if (c->bad || (size && count > c->left / size)) {
        c->bad = 1;
        return NULL;
    }
    const void *at = c->p;
    c->p += count * size;
    c->left -= count * size;
    return at;
}

static uint64_t take_u64(cursor *c) {
    const void *at = take(c, 1, 8);
    uint64_t v = 0;
    if (at) memcpy(&v, at, 8);
    return v;
}

static int parse_witness(const char *path, void *buf, size_t len, size_t n, Assignment *out) {
    cursor c = {buf, len, 0};
    const void *magic = take(&c, 8, 1);
    if (!magic || memcmp(magic, "SC2WIT01", 8) != 0) {
        fprintf(stderr, "%s: not a witness file (magic)\n", path);
        return -1;
    }
    uint64_t count = take_u64(&c);
    if (count != n) {
        fprintf(stderr, "%s: %llu circuits, fixtures.txt says %zu\n", path, (unsigned long long)count, n);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t h[9];
        for (int j = 0; j < 9; j++) h[j] = take_u64(&c);
        Assignment *a = &out[i];
        a->a_aux_bit_len = h[0];
        a->a_aux_popcount = h[1];
        a->b_inp_bit_len = h[2];
        a->b_inp_popcount = h[3];
        a->b_aux_bit_len = h[4];
        a->b_aux_popcount = h[5];
        a->abc_size = h[6];
        a->inp_assignment_size = h[7];
        a->aux_assignment_size = h[8];
        a->a_aux_density = take(&c, (h[0] + 63) / 64, 8);
        a->b_inp_density = take(&c, (h[2] + 63) / 64, 8);
        a->b_aux_density = take(&c, (h[4] + 63) / 64, 8);
        a->a = take(&c, h[6], sizeof(fr_t));
        a->b = take(&c, h[6], sizeof(fr_t));
        a->c = take(&c, h[6], sizeof(fr_t));
        a->inp_assignment_data = take(&c, h[7], sizeof(fr_t));
        a->aux_assignment_data = take(&c, h[8], sizeof(fr_t));
        if (c.bad) {
            fprintf(stderr, "%s: truncated in circuit %zu\n", path, i);
            return -1;
        }
    }
    if (c.left != 0) {
        fprintf(stderr, "%s: %zu trailing bytes\n", path, c.left);
        return -1;
    }
    return 0;
}

/* Reads DIR/<set><ext>, which must hold exactly n * size bytes. */
static void *read_array(const char *dir, const char *set, const char *ext, size_t n, size_t size) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s%s", dir, set, ext) >= (int)sizeof path) {
        fprintf(stderr, "path too long: %s/%s%s\n", dir, set, ext);
        return NULL;
    }
    size_t len = 0;
    void *buf = read_file(path, &len);
    if (buf && len != n * size) {
        fprintf(stderr, "%s: %zu bytes, expected %zu x %zu\n", path, len, n, size);
        free(buf);
        return NULL;
    }
    return buf;
}

static int load_set(const char *dir, fixture_set *s) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s.witness", dir, s->name) >= (int)sizeof path) return -1;
    s->witness_buf = read_file(path, &s->witness_len);
    s->provers = calloc(s->n, sizeof(Assignment));
    if (!s->witness_buf || !s->provers) return -1;
    if (parse_witness(path, s->witness_buf, s->witness_len, s->n, s->provers) != 0) return -1;
    s->r = read_array(dir, s->name, ".r", s->n, sizeof(fr_t));
    s->s = read_array(dir, s->name, ".s", s->n, sizeof(fr_t));
    s->expected = read_array(dir, s->name, ".proofs", s->n, sizeof(groth16_proof));
    return s->r && s->s && s->expected ? 0 : -1;
}

int fixtures_load(const char *dir, fixture_set **sets, size_t *count) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s/fixtures.txt", dir) >= (int)sizeof path) return -1;
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return -1;
    }
    fixture_set *v = NULL;
    size_t k = 0;
    int rc = 0;
    for (;;) {
        char name[64], params[1024];
        size_t n;
        int got = fscanf(f, "%63s %1023s %zu", name, params, &n);
        if (got == EOF) break;
        fixture_set *grown = got == 3 && n > 0 ? realloc(v, (k + 1) * sizeof *v) : NULL;
        if (!grown) {
            fprintf(stderr, "%s: bad line %zu\n", path, k + 1);
            rc = -1;
            break;
        }
        v = grown;
        fixture_set *s = &v[k++];
        memset(s, 0, sizeof *s);
        strcpy(s->name, name);
        s->n = n;
        if (snprintf(s->params_path, sizeof s->params_path, "%s/%s", dir, params) >= (int)sizeof s->params_path ||
            load_set(dir, s) != 0) {
            fprintf(stderr, "%s: cannot load set %s\n", path, name);
            rc = -1;
            break;
        }
    }
    fclose(f);
    if (rc == 0 && k == 0) {
        fprintf(stderr, "%s: no sets\n", path);
        rc = -1;
    }
    if (rc != 0) {
        fixtures_free(v, k);
        return -1;
    }
    *sets = v;
    *count = k;
    return 0;
}

void fixtures_free(fixture_set *sets, size_t count) {
    for (size_t i = 0; i < count; i++) {
        free(sets[i].witness_buf);
        free(sets[i].provers);
        free(sets[i].r);
        free(sets[i].s);
        free(sets[i].expected);
    }
    free(sets);
}
