/*
 * evq.c - timing wheel with a sorted front. Invariants (b(t) = t >> SHIFT):
 *  - front: 2-ary heap on (t, key) of every event with b(t) <= cur;
 *  - wheel slot s: list of the events with cur < b(t) < cur + WHEEL and
 *    b(t) & WMASK == s, bit s of bits[] set iff the list is non-empty;
 *  - over: 4-ary heap on (t, key) of the events with b(t) >= cur + WHEEL;
 *  - cur <= b(last popped t), so every push (t >= last popped) lands in
 *    one of the three without a search, and top == least pending t.
 * The front is refilled only at pop (advance), never at push: advancing
 * early would let cur run past later, smaller pushes and pile them all
 * into the front heap (a first attempt did that; 5,400 of 5,700 pending
 * events sat in the front in the fat-tree run).
 * All arrays grow together at push (grow), so pop never allocates.
 */
#include "evq.h"

#include <stdlib.h>

#define NIL UINT32_MAX
#define WMASK (RS_EVQ_WHEEL - 1)
typedef unsigned __int128 u128;

static inline u128 k128(const rs_evq_entry *e) { return (u128)e->t << 64 | e->key; }

void rs_evq_init(rs_evq *q)
{
    q->top = RS_TIME_MAX;
    q->front = NULL;
    q->n = q->nfront = q->nover = 0;
    q->cur = 0;
    q->over = NULL;
    q->node = NULL;
    q->free_node = NIL;
    q->cap = 0;
    for (size_t i = 0; i < RS_EVQ_WHEEL / 64; i++)
        q->bits[i] = 0;
    for (size_t i = 0; i < RS_EVQ_WHEEL; i++)
        q->head[i] = NIL;
}

void rs_evq_fini(rs_evq *q)
{
    free(q->front);
    free(q->over);
    free(q->node);
    rs_evq_init(q);
}

__attribute__((noinline)) static int grow(rs_evq *q)
{
    size_t cap = q->cap ? (size_t)q->cap * 2 : 1024;
    if (cap >= NIL)
        return RS_ENOMEM;
    rs_evq_node *nd = realloc(q->node, cap * sizeof *nd);
    if (!nd)
        return RS_ENOMEM;
    q->node = nd;
    rs_evq_entry *o = realloc(q->over, cap * sizeof *o);
    if (!o)
        return RS_ENOMEM;
    q->over = o;
    rs_evq_entry *f = realloc(q->front, cap * sizeof *f);
    if (!f)
        return RS_ENOMEM; /* some arrays grew, cap did not: still consistent */
    q->front = f;
    for (size_t i = q->cap; i < cap; i++)
        nd[i].next = i + 1 < cap ? (uint32_t)(i + 1) : NIL;
    q->free_node = q->cap;
    q->cap = (uint32_t)cap;
    return RS_OK;
}

static inline void front_push(rs_evq_entry *h, size_t i, rs_evq_entry e)
{
    u128 k = k128(&e);
    while (i > 0) {
        size_t p = (i - 1) >> 1;
        if (k >= k128(&h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = e;
}

static inline void front_down(rs_evq_entry *h, size_t n, size_t i, rs_evq_entry x)
{
    u128 k = k128(&x);
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && k128(&h[c + 1]) < k128(&h[c]))
            c++;
        if (k128(&h[c]) >= k)
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

static void over_push(rs_evq *q, rs_evq_entry e)
{
    rs_evq_entry *h = q->over;
    u128 k = k128(&e);
    size_t i = q->nover++;
    while (i > 0) {
        size_t p = (i - 1) >> 2;
        if (k >= k128(&h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = e;
}

static rs_evq_entry over_pop(rs_evq *q)
{
    rs_evq_entry *h = q->over;
    rs_evq_entry top = h[0];
    size_t n = --q->nover;
    rs_evq_entry x = h[n];
    u128 k = k128(&x);
    size_t i = 0;
    for (;;) {
        size_t c = 4 * i + 1;
        if (c >= n)
            break;
        size_t m = c;
        for (size_t j = c + 1; j < c + 4 && j < n; j++)
            if (k128(&h[j]) < k128(&h[m]))
                m = j;
        if (k128(&h[m]) >= k)
            break;
        h[i] = h[m];
        i = m;
    }
    h[i] = x;
    return top;
}

static inline void wheel_add(rs_evq *q, uint64_t b, uint32_t i)
{
    uint32_t s = (uint32_t)(b & WMASK);
    q->node[i].next = q->head[s];
    q->head[s] = i;
    q->bits[s >> 6] |= 1ULL << (s & 63);
}

int rs_evq_push(rs_evq *q, const rs_event *ev)
{
    if (RS_UNLIKELY(q->n == q->cap) && grow(q) != RS_OK)
        return RS_ENOMEM;
    uint32_t i = q->free_node;
    rs_evq_node *nd = &q->node[i];
    q->free_node = nd->next;
    nd->ev = *ev;
    RS_ASSERT(ev->t >> RS_EVQ_SHIFT >= q->cur); /* time never goes back */
    uint64_t b = ev->t >> RS_EVQ_SHIFT;
    q->n++;
    if (ev->t < q->top)
        q->top = ev->t;
    if (b <= q->cur) {
        rs_evq_entry e = { ev->t, ev->key, i };
        front_push(q->front, q->nfront++, e);
    } else if (b - q->cur < RS_EVQ_WHEEL) {
        wheel_add(q, b, i);
    } else {
        rs_evq_entry e = { ev->t, ev->key, i };
        over_push(q, e);
    }
    return RS_OK;
}

/* Next non-empty wheel slot strictly after cur, as a bucket number; 0 if
 * the wheel is empty. */
static uint64_t wheel_next(const rs_evq *q)
{
    uint32_t s0 = (uint32_t)((q->cur + 1) & WMASK);
    for (uint32_t d = 0; d < RS_EVQ_WHEEL;) {
        uint32_t s = (s0 + d) & WMASK;
        uint64_t w = q->bits[s >> 6] >> (s & 63);
        if (w) {
            d += (uint32_t)__builtin_ctzll(w);
            return d < RS_EVQ_WHEEL ? q->cur + 1 + d : 0;
        }
        d += 64 - (s & 63);
    }
    return 0;
}

/* Front is empty, n > 0: make the next bucket the front. */
__attribute__((noinline)) static void advance(rs_evq *q)
{
    uint64_t nb = wheel_next(q);
    if (nb == 0)
        nb = q->over[0].t >> RS_EVQ_SHIFT;
    q->cur = nb;
    rs_evq_entry *f = q->front;
    size_t nf = 0;
    uint32_t s = (uint32_t)(nb & WMASK);
    uint32_t i = q->head[s];
    q->head[s] = NIL;
    q->bits[s >> 6] &= ~(1ULL << (s & 63));
    while (i != NIL) {
        const rs_evq_node *nd = &q->node[i];
        f[nf].t = nd->ev.t;
        f[nf].key = nd->ev.key;
        f[nf].node = i;
        nf++;
        i = nd->next;
    }
    /* The horizon moved: bring overflow events now within it. */
    while (q->nover > 0 && (q->over[0].t >> RS_EVQ_SHIFT) - nb < RS_EVQ_WHEEL) {
        rs_evq_entry e = over_pop(q);
        uint64_t b = e.t >> RS_EVQ_SHIFT;
        if (b == nb)
            f[nf++] = e;
        else
            wheel_add(q, b, (uint32_t)e.node);
    }
    for (size_t k = nf / 2; k-- > 0;)
        front_down(f, nf, k, f[k]);
    q->nfront = nf;
}

/* Least t outside the front (front empty): the first non-empty bucket's
 * minimum, else the overflow's. */
__attribute__((noinline)) static rs_time next_top(const rs_evq *q)
{
    uint64_t nb = wheel_next(q);
    if (nb == 0)
        return q->nover ? q->over[0].t : RS_TIME_MAX;
    rs_time m = RS_TIME_MAX;
    for (uint32_t i = q->head[nb & WMASK]; i != NIL; i = q->node[i].next)
        if (q->node[i].ev.t < m)
            m = q->node[i].ev.t;
    return m;
}

void rs_evq_pop(rs_evq *q, rs_event *out)
{
    if (q->nfront == 0)
        advance(q);
    rs_evq_entry *f = q->front;
    uint32_t i = (uint32_t)f[0].node;
    rs_evq_node *nd = &q->node[i];
    *out = nd->ev;
    nd->next = q->free_node;
    q->free_node = i;
    q->n--;
    size_t nf = --q->nfront;
    if (nf > 0) {
        front_down(f, nf, 0, f[nf]);
        q->top = f[0].t;
    } else {
        q->top = next_top(q);
    }
}
