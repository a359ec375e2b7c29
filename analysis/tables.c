/*
 * tables.c - string intern table and uint64 map (tables.h).
 *
 * Strings live in chunks that are never moved (so rs_strtab_str pointers
 * stay valid); the table holds pointers to them plus an open-addressing
 * hash index of ids.
 */
#include "tables.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK (64u * 1024u)

typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    char data[];
} chunk;

struct rs_strtab {
    const char **strs;   /* id -> string */
    uint32_t n, cap;
    uint32_t *index;     /* hash slot -> id + 1 (0 = empty) */
    size_t icap;
    chunk *chunks;
};

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static uint64_t hash_u64(uint64_t x)
{
    x ^= x >> 33; /* splitmix64 finalizer */
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

rs_strtab *rs_strtab_create(void)
{
    rs_strtab *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    if (rs_strtab_intern(t, "") != 0) {
        rs_strtab_destroy(t);
        return NULL;
    }
    return t;
}

void rs_strtab_destroy(rs_strtab *t)
{
    if (!t)
        return;
    for (chunk *c = t->chunks, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    free(t->strs);
    free(t->index);
    free(t);
}

static char *store(rs_strtab *t, const char *s, size_t len)
{
    chunk *c = t->chunks;
    if (!c || c->cap - c->used < len + 1) {
        size_t cap = len + 1 > CHUNK ? len + 1 : CHUNK;
        chunk *nc = malloc(sizeof *nc + cap);
        if (!nc)
            return NULL;
        nc->next = t->chunks;
        nc->used = 0;
        nc->cap = cap;
        t->chunks = c = nc;
    }
    char *p = c->data + c->used;
    memcpy(p, s, len + 1);
    c->used += len + 1;
    return p;
}

static int reindex(rs_strtab *t, size_t icap)
{
    uint32_t *idx = calloc(icap, sizeof *idx);
    if (!idx)
        return -1;
    for (uint32_t id = 0; id < t->n; id++) {
        size_t i = hash_str(t->strs[id]) & (icap - 1);
        while (idx[i])
            i = (i + 1) & (icap - 1);
        idx[i] = id + 1;
    }
    free(t->index);
    t->index = idx;
    t->icap = icap;
    return 0;
}

uint32_t rs_strtab_intern(rs_strtab *t, const char *s)
{
    if (!s)
        s = "";
    if (t->icap == 0 && reindex(t, 64) != 0)
        return UINT32_MAX;
    uint64_t h = hash_str(s);
    size_t i = h & (t->icap - 1);
    for (; t->index[i]; i = (i + 1) & (t->icap - 1))
        if (strcmp(t->strs[t->index[i] - 1], s) == 0)
            return t->index[i] - 1;
    if (t->n == UINT32_MAX - 1)
        return UINT32_MAX;
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 64;
        const char **ns = realloc(t->strs, cap * sizeof *ns);
        if (!ns)
            return UINT32_MAX;
        t->strs = ns;
        t->cap = cap;
    }
    char *copy = store(t, s, strlen(s));
    if (!copy)
        return UINT32_MAX;
    uint32_t id = t->n++;
    t->strs[id] = copy;
    if ((size_t)t->n * 2 > t->icap) {
        if (reindex(t, t->icap * 2) != 0) {
            t->n--;
            return UINT32_MAX;
        }
    } else {
        t->index[i] = id + 1;
    }
    return id;
}

const char *rs_strtab_str(const rs_strtab *t, uint32_t id)
{
    return t && id < t->n ? t->strs[id] : "";
}

void rs_u64map_init(rs_u64map *m)
{
    memset(m, 0, sizeof *m);
}

void rs_u64map_fini(rs_u64map *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof *m);
}

static size_t slot_of(const rs_u64map *m, uint64_t key)
{
    size_t i = hash_u64(key) & (m->cap - 1);
    while (m->used[i] && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static int grow(rs_u64map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    rs_u64map n = { calloc(cap, sizeof(uint64_t)), calloc(cap, sizeof(uint64_t)),
                    calloc(cap, 1), cap, 0 };
    if (!n.keys || !n.vals || !n.used) {
        rs_u64map_fini(&n);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i])
            continue;
        size_t j = slot_of(&n, m->keys[i]);
        n.used[j] = 1;
        n.keys[j] = m->keys[i];
        n.vals[j] = m->vals[i];
        n.count++;
    }
    rs_u64map_fini(m);
    *m = n;
    return 0;
}

uint64_t *rs_u64map_upsert(rs_u64map *m, uint64_t key, uint64_t init)
{
    if ((m->count + 1) * 2 > m->cap && grow(m) != 0)
        return NULL;
    size_t i = slot_of(m, key);
    if (!m->used[i]) {
        m->used[i] = 1;
        m->keys[i] = key;
        m->vals[i] = init;
        m->count++;
    }
    return &m->vals[i];
}

uint64_t *rs_u64map_get(const rs_u64map *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    size_t i = slot_of(m, key);
    return m->used[i] ? &m->vals[i] : NULL;
}
