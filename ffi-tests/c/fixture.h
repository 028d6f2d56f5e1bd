/* Reader for the fixtures written by `supraseal-c2 fixture --out DIR`
 * (layout: ffi-tests/FIXTURES.md). Uses only the public header's types. */
#ifndef SUPRASEAL_C2_TEST_FIXTURE_H
#define SUPRASEAL_C2_TEST_FIXTURE_H

#include <stddef.h>

#include "supraseal_c2.h"

typedef struct fixture_set {
    char name[64];
    char params_path[4096];  /* absolute or relative to the cwd: DIR/<params file> */
    size_t n;                /* circuits */
    void *witness_buf;       /* the whole .witness file; provers point into it */
    size_t witness_len;
    Assignment *provers;     /* n */
    fr_t *r, *s;             /* n each */
    groth16_proof *expected; /* n */
} fixture_set;

/* Reads DIR/fixtures.txt and every set it lists. Returns 0, or -1 after
 * printing why to stderr. Free with fixtures_free. */
int fixtures_load(const char *dir, fixture_set **sets, size_t *count);
void fixtures_free(fixture_set *sets, size_t count);

/* malloc'ed contents of a file (its size in *len); NULL on error (printed). */
void *read_file(const char *path, size_t *len);

#endif
