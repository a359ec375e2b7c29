/*
 * partfile.c - keyed part files and their merge (partfile.h).
 */
#include "partfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void le_put(unsigned char *p, uint64_t v)
{
    for (unsigned i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t le_get(const unsigned char *p)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

void rs_part_hdr_put(unsigned char *h, const uint64_t *key, uint64_t len)
{
    for (unsigned i = 0; i < RS_PART_KEY_WORDS; i++)
        le_put(h + 8 * i, key[i]);
    le_put(h + 8 * RS_PART_KEY_WORDS, len);
}

/* One part being merged: its stream and its head record. */
typedef struct part_in {
    FILE *f;
    uint64_t key[RS_PART_KEY_WORDS];
    size_t len;
    unsigned char *rec;
    int live;
} part_in;

/* pi's next record: 1, 0 at a clean end, -1 on a short or bad one. */
static int next(part_in *pi, size_t max_len)
{
    unsigned char h[RS_PART_HDR];
    size_t got = fread(h, 1, sizeof h, pi->f);
    if (got == 0 && feof(pi->f))
        return pi->live = 0;
    if (got != sizeof h)
        return -1;
    for (unsigned i = 0; i < RS_PART_KEY_WORDS; i++)
        pi->key[i] = le_get(h + 8 * i);
    uint64_t len = le_get(h + 8 * RS_PART_KEY_WORDS);
    if (len == 0 || len > max_len || fread(pi->rec, 1, (size_t)len, pi->f) != len)
        return -1;
    pi->len = (size_t)len;
    return pi->live = 1;
}

static int key_less(const uint64_t *a, const uint64_t *b)
{
    for (unsigned i = 0; i < RS_PART_KEY_WORDS; i++)
        if (a[i] != b[i])
            return a[i] < b[i];
    return 0;
}

int rs_part_merge(const char *const *paths, size_t n, size_t max_len, const char *what,
                  int (*emit)(void *ctx, const void *rec, size_t len), void *ctx, rs_err *err)
{
    part_in *in = calloc(n ? n : 1, sizeof *in);
    int rc = in ? RS_OK : rs_err_set(err, RS_ENOMEM, "%s merge: out of memory", what);
    for (size_t i = 0; rc == RS_OK && i < n; i++) {
        if (!(in[i].rec = malloc(max_len ? max_len : 1)))
            rc = rs_err_set(err, RS_ENOMEM, "%s merge: out of memory", what);
        else if (!(in[i].f = fopen(paths[i], "rb")))
            rc = rs_err_set(err, RS_EIO, "cannot read %s part '%s': %s", what, paths[i], strerror(errno));
        else if (next(&in[i], max_len) < 0)
            rc = rs_err_set(err, RS_EIO, "%s part '%s': a record is cut short", what, paths[i]);
    }
    while (rc == RS_OK) {
        size_t best = n;
        for (size_t i = 0; i < n; i++)
            if (in[i].live && (best == n || key_less(in[i].key, in[best].key)))
                best = i;
        if (best == n)
            break;
        if ((rc = emit(ctx, in[best].rec, in[best].len)) == RS_OK && next(&in[best], max_len) < 0)
            rc = rs_err_set(err, RS_EIO, "%s part '%s': a record is cut short", what, paths[best]);
    }
    for (size_t i = 0; in && i < n; i++) {
        if (in[i].f)
            fclose(in[i].f);
        free(in[i].rec);
    }
    free(in);
    return rc;
}
