/*
 * pool.c - slab allocation for rs_pool. Each slab starts with one pointer
 * (the next slab), padded to the object alignment, followed by per_slab
 * objects.
 */
#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE (Linux) */
#include "pool.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)

void rs_pool_init(rs_pool *p, size_t obj_size, size_t per_slab)
{
    rs_pool_init_aligned(p, obj_size, per_slab, 8);
}

void rs_pool_init_aligned(rs_pool *p, size_t obj_size, size_t per_slab, size_t align)
{
    memset(p, 0, sizeof *p);
    if (obj_size < sizeof(void *))
        obj_size = sizeof(void *);
    RS_ASSERT(align >= 8 && (align & (align - 1)) == 0);
    p->align = align;
    p->obj_size = (obj_size + align - 1) & ~(align - 1);
    p->per_slab = per_slab ? per_slab : (65536 / p->obj_size ? 65536 / p->obj_size : 1);
}

static void free_slabs(rs_pool *p)
{
    void *s = p->slabs;
    while (s) {
        void *next = *(void **)s;
        free(s);
        s = next;
    }
    p->slabs = p->free = NULL;
    p->capacity = 0;
}

void rs_pool_fini(rs_pool *p)
{
    free_slabs(p);
    p->live = 0;
}

void *rs_pool_grow_get(rs_pool *p)
{
    /* The slab link takes the first `align` bytes, so objects stay aligned. */
    size_t bytes = p->align + p->per_slab * p->obj_size;
    char *slab;
    if (bytes >= HUGE_PAGE) {
        /* Big slabs (the packet pool's): 2 MiB pages where the kernel
         * offers them (THP "madvise" or "always"), so the descriptors of a
         * large run do not miss in the TLB on top of the cache. */
        bytes = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
        slab = aligned_alloc(HUGE_PAGE, bytes);
#ifdef MADV_HUGEPAGE
        if (slab)
            madvise(slab, bytes, MADV_HUGEPAGE); /* a hint: failure changes nothing */
#endif
    } else {
        slab = p->align > 8 ? aligned_alloc(p->align, (bytes + p->align - 1) & ~(p->align - 1))
                            : malloc(bytes);
    }
    if (!slab)
        return NULL;
    *(void **)slab = p->slabs;
    p->slabs = slab;
    char *base = slab + p->align;
    /* Thread the new objects onto the free list in address order. */
    for (size_t i = p->per_slab; i-- > 0;) {
        void *o = base + i * p->obj_size;
        *(void **)o = p->free;
        p->free = o;
    }
    p->capacity += p->per_slab;
    return rs_pool_get(p);
}

int rs_pool_trim(rs_pool *p)
{
    if (p->live)
        return 0;
    free_slabs(p);
    return 1;
}

void rs_pool_poison(rs_pool *p, void *o)
{
    memset(o, 0xdd, p->obj_size);
}
