/*
 * pool.c - slab allocation for rs_pool. Each slab starts with one pointer
 * (the next slab) followed by per_slab objects.
 */
#include "pool.h"

#include <stdlib.h>
#include <string.h>

void rs_pool_init(rs_pool *p, size_t obj_size, size_t per_slab)
{
    memset(p, 0, sizeof *p);
    if (obj_size < sizeof(void *))
        obj_size = sizeof(void *);
    p->obj_size = (obj_size + 7) & ~(size_t)7;
    p->per_slab = per_slab ? per_slab : (65536 / p->obj_size ? 65536 / p->obj_size : 1);
}

void rs_pool_fini(rs_pool *p)
{
    void *s = p->slabs;
    while (s) {
        void *next = *(void **)s;
        free(s);
        s = next;
    }
    p->slabs = p->free = NULL;
    p->live = p->capacity = 0;
}

void *rs_pool_grow_get(rs_pool *p)
{
    char *slab = malloc(sizeof(void *) + p->per_slab * p->obj_size);
    if (!slab)
        return NULL;
    *(void **)slab = p->slabs;
    p->slabs = slab;
    char *base = slab + sizeof(void *);
    /* Thread the new objects onto the free list in address order. */
    for (size_t i = p->per_slab; i-- > 0;) {
        void *o = base + i * p->obj_size;
        *(void **)o = p->free;
        p->free = o;
    }
    p->capacity += p->per_slab;
    return rs_pool_get(p);
}

void rs_pool_poison(rs_pool *p, void *o)
{
    memset(o, 0xdd, p->obj_size);
}
