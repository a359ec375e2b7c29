/*
 * pool.h - fixed-size object pool: slabs carved into a free list.
 *
 * For objects created and freed on the run loop's hot path (packet
 * descriptors). rs_pool_get is a pointer pop in the common case; a new slab
 * is allocated only when the free list is empty, and slabs are returned
 * only by rs_pool_fini. The pool counts live objects so that tests and
 * end-of-run checks can assert that everything came back. Debug builds
 * poison freed objects (0xdd) to catch use after free. Slabs of 2 MiB or
 * more are 2 MiB-aligned and advised for transparent huge pages (Linux;
 * a hint only).
 */
#ifndef RS_POOL_H
#define RS_POOL_H

#include "array.h" /* rs_array_reserve: growable arrays, the one growth rule */
#include "base.h"

RS_BEGIN_DECLS

typedef struct rs_pool {
    void *free;       /* singly linked through the first word of each object */
    void *slabs;      /* singly linked list of slabs, for fini */
    size_t obj_size;  /* >= sizeof(void *), rounded to align */
    size_t align;     /* object alignment: 8, or what rs_pool_init_aligned asked */
    size_t per_slab;
    uint64_t live;    /* objects handed out and not yet returned */
    uint64_t capacity;
} rs_pool;

/* obj_size: bytes per object; per_slab: objects per allocation (0: a
 * default sized for about 64 KiB slabs). */
void rs_pool_init(rs_pool *p, size_t obj_size, size_t per_slab);

/* The same with objects aligned to `align` (a power of two >= 8) and their
 * size rounded up to it: a 64-byte object aligned to 64 never straddles
 * two cache lines (packet descriptors: a hop touches one line of its
 * packet). */
void rs_pool_init_aligned(rs_pool *p, size_t obj_size, size_t per_slab, size_t align);
void rs_pool_fini(rs_pool *p); /* frees every slab, live objects too */

void *rs_pool_grow_get(rs_pool *p); /* slow path: NULL on ENOMEM */

/* An object of obj_size bytes, contents undefined. NULL on ENOMEM. */
static inline void *rs_pool_get(rs_pool *p)
{
    void *o = p->free;
    if (RS_UNLIKELY(!o))
        return rs_pool_grow_get(p);
    p->free = *(void **)o;
    p->live++;
    return o;
}

void rs_pool_poison(rs_pool *p, void *o);

/* Return an object obtained from rs_pool_get on this pool. */
static inline void rs_pool_put(rs_pool *p, void *o)
{
    RS_ASSERT(p->live > 0);
#ifndef NDEBUG
    rs_pool_poison(p, o);
#endif
    *(void **)o = p->free;
    p->free = o;
    p->live--;
}

static inline uint64_t rs_pool_live(const rs_pool *p) { return p->live; }

/* With no object live, give every slab back (the pool grows again when
 * asked): a run that went idle returns its packets' memory before the
 * end-of-run work. Returns 1 if it did, 0 with objects still live. */
int rs_pool_trim(rs_pool *p);

RS_END_DECLS

#endif
