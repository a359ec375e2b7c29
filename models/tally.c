/*
 * tally.c - per-GPU port byte counts (tally.h): one entry per GPU counted,
 * in the order first counted, found by the hash index (hindex.h) under a
 * Fibonacci hash of the GPU id.
 */
#include "tally.h"
#include "array.h"
#include "hindex.h"

#include <stdlib.h>
#include <string.h>

typedef struct entry {
    uint32_t gpu;
    uint64_t v[RS_TALLY_NPORTS];
} entry;

struct rs_tally {
    entry *e;     /* [n] the GPUs counted, in the order first counted */
    uint32_t n, cap;
    rs_hindex idx; /* a GPU's hash -> its entry */
    /* Largest count per port kind so far: counts only grow until a clear,
     * so the maximum follows the adds and reading it is O(1) (a scan of
     * the table at each collective's end was 1.2% of a 16,384-GPU run). */
    uint64_t max[RS_TALLY_NPORTS];
};

/* 8 entries (an index of 16 slots) hold a point-to-point message's GPUs
 * (source, PXN relay or a detour's two, destination) without growing. */
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
    free(t->e);
    rs_hindex_fini(&t->idx);
    free(t);
}

void rs_tally_clear(rs_tally *t)
{
    if (t->idx.slot)
        memset(t->idx.slot, 0, (size_t)t->idx.cap * sizeof *t->idx.slot);
    t->idx.used = 0;
    t->n = 0;
    memset(t->max, 0, sizeof t->max);
}

/* Fibonacci hashing: consecutive GPU ids (a rail's, a domain's) spread. */
static inline uint64_t gpu_hash(uint32_t gpu)
{
    return ((uint64_t)(gpu + 1) * 0x9E3779B97F4A7C15ull) >> 32;
}

static uint64_t hash_of(const void *t, uint32_t i)
{
    return gpu_hash(((const rs_tally *)t)->e[i].gpu);
}

typedef struct gpu_key {
    const rs_tally *t;
    uint32_t gpu;
} gpu_key;

static inline int gpu_eq(const void *key, uint32_t i)
{
    const gpu_key *k = key;
    return k->t->e[i].gpu == k->gpu;
}

int rs_tally_reserve(rs_tally *t, uint32_t gpus)
{
    uint32_t cap = TALLY_MIN_CAP;
    while (cap < gpus && cap < (1u << 30))
        cap *= 2;
    if (rs_array_reserve32(&t->e, &t->cap, cap, sizeof *t->e, TALLY_MIN_CAP) != RS_OK)
        return RS_ENOMEM;
    return 2 * cap > t->idx.cap ? rs_hindex_rehash(&t->idx, 2 * cap, hash_of, t) : RS_OK;
}

int rs_tally_add(rs_tally *t, uint32_t gpu, rs_tally_port port, uint64_t bytes)
{
    if ((unsigned)port >= RS_TALLY_NPORTS || gpu == UINT32_MAX)
        return RS_EINVAL;
    uint64_t h = gpu_hash(gpu);
    gpu_key k = { t, gpu };
    uint32_t i = rs_hindex_find(&t->idx, h, gpu_eq, &k);
    if (i == UINT32_MAX) {
        if (rs_array_reserve32(&t->e, &t->cap, t->n + 1, sizeof *t->e, TALLY_MIN_CAP) != RS_OK ||
            rs_hindex_insert(&t->idx, h, t->n, hash_of, t) != RS_OK)
            return RS_ENOMEM;
        i = t->n++;
        memset(&t->e[i], 0, sizeof t->e[i]);
        t->e[i].gpu = gpu;
    }
    entry *e = &t->e[i];
    e->v[port] += bytes;
    if (e->v[port] > t->max[port])
        t->max[port] = e->v[port];
    return RS_OK;
}

uint64_t rs_tally_get(const rs_tally *t, uint32_t gpu, rs_tally_port port)
{
    if ((unsigned)port >= RS_TALLY_NPORTS || gpu == UINT32_MAX)
        return 0;
    gpu_key k = { t, gpu };
    uint32_t i = rs_hindex_find(&t->idx, gpu_hash(gpu), gpu_eq, &k);
    return i == UINT32_MAX ? 0 : t->e[i].v[port];
}

uint32_t rs_tally_gpus(const rs_tally *t)
{
    return t->n;
}

void rs_tally_max(const rs_tally *t, uint64_t out[RS_TALLY_NPORTS])
{
    memcpy(out, t->max, sizeof t->max);
}
