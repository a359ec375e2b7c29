/*
 * tally.c - per-GPU port byte counts (tally.h). Linear probing over a
 * power-of-two table of slots; key 0 marks an empty slot, so a slot stores
 * gpu + 1. Growth rehashes into a table twice the size when a new GPU
 * would make it more than half full.
 */
#include "tally.h"

#include <stdlib.h>
#include <string.h>

typedef struct slot {
    uint32_t key; /* gpu + 1; 0 = empty */
    uint64_t v[RS_TALLY_NPORTS];
} slot;

struct rs_tally {
    slot *s;
    uint32_t cap; /* power of two, or 0 before the first add */
    uint32_t n;   /* used slots */
    /* Largest count per port kind so far: counts only grow until a clear,
     * so the maximum follows the adds and reading it is O(1) (a scan of
     * the table at each collective's end was 1.2% of a 16,384-GPU run). */
    uint64_t max[RS_TALLY_NPORTS];
};

/* 8 slots hold a point-to-point message's GPUs (source, PXN relay or a
 * detour's two, destination) without growing. */
#define TALLY_MIN_CAP 8u

int rs_tally_create(rs_tally **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? RS_OK : RS_ENOMEM;
}

void rs_tally_destroy(rs_tally *t)
{
    if (!t)
        return;
    free(t->s);
    free(t);
}

void rs_tally_clear(rs_tally *t)
{
    if (t->s)
        memset(t->s, 0, (size_t)t->cap * sizeof *t->s);
    t->n = 0;
    memset(t->max, 0, sizeof t->max);
}

/* Fibonacci hashing: consecutive GPU ids (a rail's, a domain's) spread. */
static uint32_t home(uint32_t key, uint32_t cap)
{
    return (uint32_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

static slot *find(slot *s, uint32_t cap, uint32_t key)
{
    uint32_t i = home(key, cap);
    while (s[i].key && s[i].key != key)
        i = (i + 1) & (cap - 1);
    return &s[i];
}

/* Rehash into a table of cap slots (a power of two, > 2 x used). */
static int rehash(rs_tally *t, uint32_t cap)
{
    slot *s = calloc(cap, sizeof *s);
    if (!s)
        return RS_ENOMEM;
    for (uint32_t i = 0; i < t->cap; i++)
        if (t->s[i].key)
            *find(s, cap, t->s[i].key) = t->s[i];
    free(t->s);
    t->s = s;
    t->cap = cap;
    return RS_OK;
}

static int grow(rs_tally *t)
{
    uint32_t cap = t->cap ? t->cap * 2 : TALLY_MIN_CAP;
    return cap < t->cap ? RS_ENOMEM : rehash(t, cap); /* 2^31 GPUs: beyond any network */
}

int rs_tally_reserve(rs_tally *t, uint32_t gpus)
{
    uint32_t cap = TALLY_MIN_CAP;
    while (cap / 2 < gpus && cap < (1u << 31))
        cap *= 2;
    return cap > t->cap ? rehash(t, cap) : RS_OK;
}

int rs_tally_add(rs_tally *t, uint32_t gpu, rs_tally_port port, uint64_t bytes)
{
    if ((unsigned)port >= RS_TALLY_NPORTS || gpu == UINT32_MAX)
        return RS_EINVAL;
    uint32_t key = gpu + 1;
    slot *e = t->cap ? find(t->s, t->cap, key) : NULL;
    if (!e || !e->key) {
        if (2 * (t->n + 1) > t->cap) {
            if (grow(t) != RS_OK)
                return RS_ENOMEM;
            e = find(t->s, t->cap, key);
        }
        e->key = key;
        t->n++;
    }
    e->v[port] += bytes;
    if (e->v[port] > t->max[port])
        t->max[port] = e->v[port];
    return RS_OK;
}

uint64_t rs_tally_get(const rs_tally *t, uint32_t gpu, rs_tally_port port)
{
    if (!t->cap || (unsigned)port >= RS_TALLY_NPORTS || gpu == UINT32_MAX)
        return 0;
    const slot *e = find(t->s, t->cap, gpu + 1);
    return e->key ? e->v[port] : 0;
}

uint32_t rs_tally_gpus(const rs_tally *t)
{
    return t->n;
}

void rs_tally_max(const rs_tally *t, uint64_t out[RS_TALLY_NPORTS])
{
    memcpy(out, t->max, sizeof t->max);
}
