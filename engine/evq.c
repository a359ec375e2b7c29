/*
 * evq.c - 4-ary heap. Invariant: for every i > 0, heap[(i-1)/4] <= heap[i]
 * in (t, key) order, and heap[n..n+3] are sentinels greater than any
 * event. Sift loops move a hole instead of swapping and carry no rare
 * cases; growth lives in its own non-inlined function.
 */
#include "evq.h"

#include <stdlib.h>

typedef unsigned __int128 u128;

static inline u128 k128(const rs_evq_entry *e)
{
    return (u128)e->t << 64 | e->key;
}

static const rs_evq_entry SENTINEL = { RS_TIME_MAX, UINT64_MAX, 0 };

void rs_evq_init(rs_evq *q)
{
    q->heap = NULL;
    q->body = NULL;
    q->n = q->cap = 0;
    q->free_slot = 0;
}

void rs_evq_fini(rs_evq *q)
{
    free(q->heap);
    free(q->body);
    rs_evq_init(q);
}

__attribute__((noinline)) static int grow(rs_evq *q)
{
    size_t cap = q->cap ? q->cap * 2 : 1024;
    rs_evq_entry *h = realloc(q->heap, (cap + 4) * sizeof *h);
    if (!h)
        return RS_ENOMEM;
    q->heap = h;
    rs_evq_body *b = realloc(q->body, cap * sizeof *b);
    if (!b)
        return RS_ENOMEM; /* heap grew, body did not: still consistent */
    q->body = b;
    for (size_t i = q->cap; i < cap; i++)
        b[i].arg = i + 1; /* thread the new slots onto the free list */
    q->free_slot = q->cap;
    for (size_t i = q->n; i < cap + 4; i++)
        h[i] = SENTINEL;
    q->cap = cap;
    return RS_OK;
}

int rs_evq_push(rs_evq *q, const rs_event *ev)
{
    if (RS_UNLIKELY(q->n == q->cap) && grow(q) != RS_OK)
        return RS_ENOMEM;
    size_t slot = q->free_slot;
    rs_evq_body *b = &q->body[slot];
    q->free_slot = b->arg;
    b->fn = ev->fn;
    b->obj = ev->obj;
    b->arg = ev->arg;

    rs_evq_entry e = { ev->t, ev->key, slot };
    u128 k = k128(&e);
    rs_evq_entry *h = q->heap;
    size_t i = q->n++;
    while (i > 0) {
        size_t p = (i - 1) >> 2;
        if (k >= k128(&h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = e;
    return RS_OK;
}

void rs_evq_pop(rs_evq *q, rs_event *out)
{
    rs_evq_entry *h = q->heap;
    size_t slot = h[0].slot;
    rs_evq_body *b = &q->body[slot];
    out->t = h[0].t;
    out->key = h[0].key;
    out->fn = b->fn;
    out->obj = b->obj;
    out->arg = b->arg;
    b->arg = q->free_slot;
    q->free_slot = slot;

    size_t n = --q->n;
    rs_evq_entry last = h[n];
    h[n] = SENTINEL;
    if (n == 0)
        return;
    u128 lk = k128(&last);
    size_t i = 0;
    for (;;) {
        size_t c = 4 * i + 1;
        if (c >= n)
            break;
        /* Children c..c+3 exist or are sentinels (c < n <= cap). */
        size_t m01 = k128(&h[c + 1]) < k128(&h[c]) ? c + 1 : c;
        size_t m23 = k128(&h[c + 3]) < k128(&h[c + 2]) ? c + 3 : c + 2;
        size_t m = k128(&h[m23]) < k128(&h[m01]) ? m23 : m01;
        if (k128(&h[m]) >= lk)
            break;
        h[i] = h[m];
        i = m;
    }
    h[i] = last;
}
