/*
 * tables.h - the two small tables the analysis readers share: a string
 * intern table (each distinct string stored once, named by a dense
 * uint32_t id) and a map from 64-bit keys to 64-bit values (names of
 * ranks, ports and communicators by id; per-port aggregates).
 *
 * Both grow by doubling and never shrink; memory is proportional to the
 * distinct strings and keys, not to the records read. Lookups are O(1)
 * expected (open addressing, linear probing). Iteration order of the map
 * is its slot order, which depends on the keys only (no addresses, no
 * randomness), so output built from it is deterministic; callers that
 * print sort anyway.
 */
#ifndef RS_TABLES_H
#define RS_TABLES_H

#include <stddef.h>
#include <stdint.h>

#include "hindex.h"

/* ---- string intern table ---------------------------------------------- */

typedef struct rs_strtab rs_strtab;

/* A new empty table (string id 0 is always ""), or NULL without memory.
 * Free with rs_strtab_destroy. */
rs_strtab *rs_strtab_create(void);
void rs_strtab_destroy(rs_strtab *t); /* NULL is a no-op */

/* The id of s (NULL counts as ""), adding a copy if new. Returns
 * UINT32_MAX without memory. */
uint32_t rs_strtab_intern(rs_strtab *t, const char *s);

/* The string of id; owned by t, valid until rs_strtab_destroy (not moved
 * by later interning). An unknown id gives "". */
const char *rs_strtab_str(const rs_strtab *t, uint32_t id);

/* ---- uint64 -> uint64 map --------------------------------------------- */

typedef struct rs_u64map {
    uint64_t *keys, *vals; /* [count], in insertion order */
    size_t cap, count;
    rs_hindex idx;         /* key's hash -> its entry */
} rs_u64map;

/* Caller-owned storage: init to empty, fini frees. */
void rs_u64map_init(rs_u64map *m);
void rs_u64map_fini(rs_u64map *m);

/* Pointer to the value of key, inserting it with value `init` if absent;
 * NULL without memory. The pointer is valid until the next insertion. */
uint64_t *rs_u64map_upsert(rs_u64map *m, uint64_t key, uint64_t init);

/* Pointer to the value of key, or NULL if absent. */
uint64_t *rs_u64map_get(const rs_u64map *m, uint64_t key);

/* Key for (name space, id) in a name map: the space in the top 8 bits. */
static inline uint64_t rs_an_name_key(uint32_t space, uint64_t id)
{
    return ((uint64_t)(space & 0xffu) << 56) | (id & 0x00ffffffffffffffULL);
}

#endif
