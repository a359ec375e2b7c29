/*
 * hindex.h - the one hash table of railsim: an open-addressing index of
 * uint32 ids. The caller keeps its entries in a dense array (interned
 * strings, callbacks, bundles, ...) and the index maps a key's hash to
 * the id of the entry holding that key: slots hold id + 1, 0 for empty,
 * RS_HINDEX_GONE for a removed one (a tombstone). Linear probing; the
 * table doubles when slots in use (tombstones included) would pass half,
 * rehashing every live id by the caller's hash of its entry. The hash
 * orders nothing that is written: it only finds.
 *
 * Header-only (inline), like array.h: the rs_util target.
 */
#ifndef RS_HINDEX_H
#define RS_HINDEX_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

#define RS_HINDEX_GONE UINT32_MAX

typedef struct rs_hindex {
    uint32_t *slot;  /* [cap]: id + 1, 0 empty, RS_HINDEX_GONE removed */
    uint32_t cap;    /* 0 or a power of two */
    uint32_t used;   /* slots not empty (tombstones included) */
} rs_hindex;

/* Does entry id hold the key the caller looks for? Its hash? */
typedef int (*rs_hindex_eq_fn)(const void *ctx, uint32_t id);
typedef uint64_t (*rs_hindex_hash_fn)(const void *ctx, uint32_t id);

static inline void rs_hindex_init(rs_hindex *x)
{
    x->slot = NULL;
    x->cap = x->used = 0;
}

static inline void rs_hindex_fini(rs_hindex *x)
{
    free(x->slot);
    rs_hindex_init(x);
}

/* The id of the entry with hash h that eq accepts; UINT32_MAX when none. */
static inline uint32_t rs_hindex_find(const rs_hindex *x, uint64_t h, rs_hindex_eq_fn eq, const void *ctx)
{
    if (!x->cap)
        return UINT32_MAX;
    for (uint32_t k = (uint32_t)h & (x->cap - 1); x->slot[k]; k = (k + 1) & (x->cap - 1))
        if (x->slot[k] != RS_HINDEX_GONE && eq(ctx, x->slot[k] - 1))
            return x->slot[k] - 1;
    return UINT32_MAX;
}

/* Slot for a new id of hash h: the first tombstone or the empty slot on h's probe path. */
static inline uint32_t rs_hindex__free_slot(const rs_hindex *x, uint64_t h)
{
    uint32_t k = (uint32_t)h & (x->cap - 1), gone = UINT32_MAX;
    for (; x->slot[k]; k = (k + 1) & (x->cap - 1))
        if (x->slot[k] == RS_HINDEX_GONE && gone == UINT32_MAX)
            gone = k;
    return gone != UINT32_MAX ? gone : k;
}

/* A table of at least `cap` slots holding x's live ids (hash gives each
 * id's hash), tombstones dropped. RS_ENOMEM leaves x as it was. */
static inline int rs_hindex_rehash(rs_hindex *x, uint32_t cap, rs_hindex_hash_fn hash, const void *ctx)
{
    uint32_t live = 0;
    for (uint32_t k = 0; k < x->cap; k++)
        live += x->slot[k] && x->slot[k] != RS_HINDEX_GONE;
    uint32_t c = 64;
    while (c < cap || c < 4 * (live + 1)) {
        if (c > UINT32_MAX / 4)
            return RS_ENOMEM;
        c *= 2;
    }
    rs_hindex n = { (uint32_t *)calloc(c, sizeof(uint32_t)), c, 0 };
    if (!n.slot)
        return RS_ENOMEM;
    for (uint32_t k = 0; k < x->cap; k++)
        if (x->slot[k] && x->slot[k] != RS_HINDEX_GONE) {
            n.slot[rs_hindex__free_slot(&n, hash(ctx, x->slot[k] - 1))] = x->slot[k];
            n.used++;
        }
    free(x->slot);
    *x = n;
    return RS_OK;
}

/* Index id under hash h (an id the table does not hold). RS_ENOMEM. */
static inline int rs_hindex_insert(rs_hindex *x, uint64_t h, uint32_t id, rs_hindex_hash_fn hash, const void *ctx)
{
    if (((uint64_t)x->used + 1) * 2 > x->cap && rs_hindex_rehash(x, x->cap * 2, hash, ctx) != RS_OK)
        return RS_ENOMEM;
    uint32_t k = rs_hindex__free_slot(x, h);
    if (!x->slot[k])
        x->used++;
    x->slot[k] = id + 1;
    return RS_OK;
}

/* Id no longer indexed (its entry's hash is h); a no-op when it is not. */
static inline void rs_hindex_remove(rs_hindex *x, uint64_t h, uint32_t id)
{
    if (!x->cap)
        return;
    for (uint32_t k = (uint32_t)h & (x->cap - 1); x->slot[k]; k = (k + 1) & (x->cap - 1))
        if (x->slot[k] == id + 1) {
            x->slot[k] = RS_HINDEX_GONE;
            return;
        }
}

/* Hashes for keys: FNV-1a over strings, splitmix64's finalizer over
 * 64-bit words. */
static inline uint64_t rs_hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static inline uint64_t rs_hash_u64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

#endif
