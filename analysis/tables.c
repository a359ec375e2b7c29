/*
 * tables.c - string intern table and uint64 map (tables.h).
 *
 * Strings live in chunks that are never moved (so rs_strtab_str pointers
 * stay valid); the table holds pointers to them plus the hash index of
 * their ids (hindex.h). The map keeps keys and values in insertion order,
 * indexed the same way.
 */
#include "tables.h"
#include "array.h"

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
    rs_hindex idx;       /* a string's hash -> its id */
    chunk *chunks;
};

static uint64_t str_hash_of(const void *ctx, uint32_t id)
{
    return rs_hash_str(((const rs_strtab *)ctx)->strs[id]);
}

/* The lookup's key and the table, for the index's equality test. */
typedef struct str_key {
    const rs_strtab *t;
    const char *s;
} str_key;

static int str_eq(const void *ctx, uint32_t id)
{
    const str_key *k = ctx;
    return strcmp(k->t->strs[id], k->s) == 0;
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
    rs_hindex_fini(&t->idx);
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

uint32_t rs_strtab_intern(rs_strtab *t, const char *s)
{
    if (!s)
        s = "";
    uint64_t h = rs_hash_str(s);
    str_key k = { t, s };
    uint32_t id = rs_hindex_find(&t->idx, h, str_eq, &k);
    if (id != UINT32_MAX)
        return id;
    if (t->n == UINT32_MAX - 1 || rs_array_reserve32(&t->strs, &t->cap, t->n + 1, sizeof *t->strs, 64) != RS_OK)
        return UINT32_MAX;
    char *copy = store(t, s, strlen(s));
    if (!copy)
        return UINT32_MAX;
    t->strs[t->n] = copy;
    if (rs_hindex_insert(&t->idx, h, t->n, str_hash_of, t) != RS_OK)
        return UINT32_MAX;
    return t->n++;
}

const char *rs_strtab_str(const rs_strtab *t, uint32_t id)
{
    return t && id < t->n ? t->strs[id] : "";
}

void rs_u64map_init(rs_u64map *m)
{
    memset(m, 0, sizeof *m);
    rs_hindex_init(&m->idx);
}

void rs_u64map_fini(rs_u64map *m)
{
    free(m->keys);
    free(m->vals);
    rs_hindex_fini(&m->idx);
    rs_u64map_init(m);
}

static uint64_t key_hash_of(const void *ctx, uint32_t i)
{
    return rs_hash_u64(((const rs_u64map *)ctx)->keys[i]);
}

typedef struct u64_key {
    const rs_u64map *m;
    uint64_t key;
} u64_key;

static int key_eq(const void *ctx, uint32_t i)
{
    const u64_key *k = ctx;
    return k->m->keys[i] == k->key;
}

uint64_t *rs_u64map_upsert(rs_u64map *m, uint64_t key, uint64_t init)
{
    uint64_t h = rs_hash_u64(key);
    u64_key k = { m, key };
    uint32_t i = rs_hindex_find(&m->idx, h, key_eq, &k);
    if (i != UINT32_MAX)
        return &m->vals[i];
    size_t kc = m->cap, vc = m->cap;
    if (m->count >= UINT32_MAX - 1 || rs_array_reserve(&m->keys, &kc, m->count + 1, sizeof *m->keys, 64) != RS_OK ||
        rs_array_reserve(&m->vals, &vc, m->count + 1, sizeof *m->vals, 64) != RS_OK)
        return NULL;
    m->cap = kc;
    m->keys[m->count] = key;
    m->vals[m->count] = init;
    if (rs_hindex_insert(&m->idx, h, (uint32_t)m->count, key_hash_of, m) != RS_OK)
        return NULL;
    return &m->vals[m->count++];
}

uint64_t *rs_u64map_get(const rs_u64map *m, uint64_t key)
{
    u64_key k = { m, key };
    uint32_t i = rs_hindex_find(&m->idx, rs_hash_u64(key), key_eq, &k);
    return i == UINT32_MAX ? NULL : &m->vals[i];
}
