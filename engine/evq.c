/*
 * evq.c - timing wheel with a sorted front. Invariants (b(t) = t >> SHIFT):
 *  - front[fi..fn): sorted by (t, key), events with b(t) <= cur; late: a
 *    2-ary heap of the events pushed with b(t) <= cur after that sort;
 *    fcap >= n, so a whole bucket always fits into front and scratch;
 *  - wheel slot s: a chunk list of the events pushed with cur < b(t) <
 *    cur + WHEEL and b(t) & WMASK == s (so all of one bucket), bit s of
 *    bits[] set iff the slot is non-empty;
 *  - over: 4-ary heap on (t, key) of the events pushed with b(t) >= cur +
 *    WHEEL; they stay there until cur reaches their bucket (never moved to
 *    the wheel, which would allocate at pop), and b(over min) >= cur;
 *  - top is the least pending t, except while the front and late are both
 *    spent with n > 0 ("unsettled"): then top is RS_TIME_MAX lowered by
 *    the pushes since, and rs_evq_settle (which top_time and pop call)
 *    makes the next non-empty bucket the front. So the refill comes after
 *    the handler of the event that spent the front has pushed what it
 *    schedules: those events go to their wheel buckets, and cur never
 *    jumps ahead of them. A push with b <= cur joins late: still in
 *    order. While unsettled such a push is earlier than every wheel and
 *    overflow event, so the lowered top is then exact.
 * All arrays and the chunk pool grow at push, so pop never allocates.
 */
#include "evq.h"

#include <stdlib.h>
#include <string.h>

#define WMASK (RS_EVQ_WHEEL - 1)
typedef unsigned __int128 u128;

static inline u128 k128(const rs_event *e) { return (u128)e->t << 64 | e->key; }

void rs_evq_init(rs_evq *q)
{
    memset(q, 0, sizeof *q);
    q->top = RS_TIME_MAX;
    rs_pool_init(&q->chunks, sizeof(rs_evq_chunk), 0);
}

void rs_evq_fini(rs_evq *q)
{
    free(q->front);
    free(q->scratch);
    free(q->late.ev);
    free(q->over.ev);
    rs_pool_fini(&q->chunks);
    rs_evq_init(q);
}

/* Room for at least `need` events in v; v is unchanged on failure. */
__attribute__((noinline)) static int vec_grow(rs_evq_vec *v, size_t need)
{
    return need > UINT32_MAX ? RS_ENOMEM : rs_array_reserve32(&v->ev, &v->cap, (uint32_t)need, sizeof *v->ev, 16);
}

/* front and scratch for at least `need` events; fcap grows only when
 * both did (a bigger block with the old fcap is still consistent). */
__attribute__((noinline)) static int front_grow(rs_evq *q, size_t need)
{
    uint32_t fc = q->fcap, sc = q->fcap;
    if (need > UINT32_MAX || rs_array_reserve32(&q->front, &fc, (uint32_t)need, sizeof *q->front, 1024) != RS_OK ||
        rs_array_reserve32(&q->scratch, &sc, (uint32_t)need, sizeof *q->scratch, 1024) != RS_OK)
        return RS_ENOMEM;
    q->fcap = fc; /* the same as sc: both grew by the same rule from the same capacity */
    return RS_OK;
}

static void late_push(rs_evq *q, const rs_event *e)
{
    rs_event *h = q->late.ev;
    u128 k = k128(e);
    size_t i = q->late.n++;
    while (i > 0) {
        size_t p = (i - 1) >> 1;
        if (k >= k128(&h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = *e;
}

static void late_pop(rs_evq *q, rs_event *top)
{
    rs_event *h = q->late.ev;
    *top = h[0];
    size_t n = --q->late.n, i = 0;
    rs_event x = h[n];
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

static void over_push(rs_evq *q, const rs_event *e)
{
    rs_event *h = q->over.ev;
    u128 k = k128(e);
    size_t i = q->over.n++;
    while (i > 0) {
        size_t p = (i - 1) >> 2;
        if (k >= k128(&h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = *e;
}

static void over_pop(rs_evq *q, rs_event *top)
{
    rs_event *h = q->over.ev;
    *top = h[0];
    size_t n = --q->over.n;
    rs_event x = h[n];
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
}

int rs_evq_push(rs_evq *q, const rs_event *ev)
{
    return rs_evq_add(q, ev->t, ev->key, ev->fn, ev->obj, ev->arg);
}

int rs_evq_add(rs_evq *q, rs_time t, uint64_t key, rs_event_fn fn, void *obj, uint64_t arg)
{
    /* The front must be able to take every pending event (advance copies
     * a bucket and the overflow's share into it without growing). */
    if (RS_UNLIKELY(q->n >= q->fcap) && front_grow(q, q->n + 1) != RS_OK)
        return RS_ENOMEM;
    uint64_t b = t >> RS_EVQ_SHIFT;
    if (RS_LIKELY(b > q->cur) && b - q->cur < RS_EVQ_WHEEL) {
        uint32_t s = (uint32_t)(b & WMASK);
        rs_evq_slot *sl = &q->wheel[s];
        rs_evq_chunk *c = sl->tail;
        if (!c || sl->tail_n == RS_EVQ_CHUNK) {
            rs_evq_chunk *nc = rs_pool_get(&q->chunks);
            if (RS_UNLIKELY(!nc))
                return RS_ENOMEM;
            nc->next = NULL;
            if (c)
                c->next = nc;
            else
                sl->head = nc;
            sl->tail = c = nc;
            sl->tail_n = 0;
        }
        /* Field by field: copying a caller's rs_event with wide loads
         * right after it was built with narrow stores stalled on store
         * forwarding (perf: ~60% of push; push fell from 9.5% to 4.5% of
         * cycles, within noise in wall time). */
        rs_event *d = &c->ev[sl->tail_n++];
        d->t = t;
        d->key = key;
        d->fn = fn;
        d->obj = obj;
        d->arg = arg;
        q->bits[s >> 6] |= 1ULL << (s & 63);
    } else if (b <= q->cur) {
        if (RS_UNLIKELY(q->late.n == q->late.cap) && vec_grow(&q->late, (size_t)q->late.n + 1) != RS_OK)
            return RS_ENOMEM;
        __builtin_prefetch(obj);
        rs_event e = { t, key, fn, obj, arg };
        late_push(q, &e);
    } else {
        if (RS_UNLIKELY(q->over.n == q->over.cap) && vec_grow(&q->over, (size_t)q->over.n + 1) != RS_OK)
            return RS_ENOMEM;
        rs_event e = { t, key, fn, obj, arg };
        over_push(q, &e);
    }
    q->n++;
    if (t < q->top)
        q->top = t;
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

/* o = merge of the sorted runs x[0..nx) and y[0..ny). */
static void merge(const rs_event *x, size_t nx, const rs_event *y, size_t ny, rs_event *o)
{
    while (nx > 0 && ny > 0) {
        if (k128(y) < k128(x)) {
            *o++ = *y++;
            ny--;
        } else {
            *o++ = *x++;
            nx--;
        }
    }
    memcpy(o, x, nx * sizeof *x);
    memcpy(o + nx, y, ny * sizeof *y);
}

/* Sort a[0..n) by (t, key), tmp[0..n) as scratch: natural merge sort, one
 * pass per halving of the number of ascending runs. Returns the array
 * (a or tmp) that holds the result. Keys are unique, so stability is moot;
 * runs are non-descending all the same, so that two events of one key (a
 * model's bug, or a hostile frame of another process) still end the sort. */
static rs_event *sort_events(rs_event *a, rs_event *tmp, size_t n)
{
    for (;;) {
        size_t i = 0;
        while (i < n) {
            size_t m = i + 1;
            while (m < n && k128(&a[m - 1]) <= k128(&a[m]))
                m++;
            if (m == n) {
                if (i == 0)
                    return a; /* one run: sorted */
                memcpy(tmp + i, a + i, (n - i) * sizeof *a);
                break;
            }
            size_t e = m + 1;
            while (e < n && k128(&a[e - 1]) <= k128(&a[e]))
                e++;
            merge(a + i, m - i, a + m, e - m, tmp + i);
            i = e;
        }
        rs_event *x = a;
        a = tmp;
        tmp = x;
    }
}

/* Front and late are empty, n > 0: make the next non-empty bucket the
 * front, sorted, and its first event the top. */
__attribute__((noinline)) static void advance(rs_evq *q)
{
    uint64_t wb = wheel_next(q), nb = wb;
    if (q->over.n > 0 && (wb == 0 || q->over.ev[0].t >> RS_EVQ_SHIFT < wb))
        nb = q->over.ev[0].t >> RS_EVQ_SHIFT;
    q->cur = nb;
    rs_event *f = q->front;
    size_t nf = 0;
    if (nb == wb) {
        uint32_t s = (uint32_t)(nb & WMASK);
        rs_evq_slot *sl = &q->wheel[s];
        for (rs_evq_chunk *c = sl->head, *next; c; c = next) {
            uint32_t cn = c == sl->tail ? sl->tail_n : RS_EVQ_CHUNK;
            memcpy(f + nf, c->ev, cn * sizeof *f);
            nf += cn;
            next = c->next;
            rs_pool_put(&q->chunks, c); /* LIFO: the next push reuses this warm chunk */
        }
        sl->head = sl->tail = NULL;
        sl->tail_n = 0;
        q->bits[s >> 6] &= ~(1ULL << (s & 63));
    }
    while (q->over.n > 0 && q->over.ev[0].t >> RS_EVQ_SHIFT == nb)
        over_pop(q, &f[nf++]);
    rs_event *sorted = sort_events(f, q->scratch, nf);
    if (sorted != f) {
        q->scratch = f;
        q->front = sorted;
    }
    for (size_t i = 0; i < nf && i < RS_EVQ_LOOKAHEAD; i++)
        __builtin_prefetch(sorted[i].obj);
    q->fi = 0;
    q->fn = (uint32_t)nf;
    q->top = sorted[0].t;
}

void rs_evq_settle(rs_evq *q)
{
    if (rs_evq_unsettled(q))
        advance(q);
}

void rs_evq_pop(rs_evq *q, rs_event *out)
{
    if (RS_UNLIKELY(rs_evq_unsettled(q)))
        advance(q); /* after a pop that spent the front, or pushes into an empty queue */
    if (RS_UNLIKELY(q->late.n > 0) &&
        (q->fi == q->fn || k128(&q->late.ev[0]) < k128(&q->front[q->fi]))) {
        late_pop(q, out);
    } else {
        uint32_t i = q->fi++;
        *out = q->front[i];
        if (i + RS_EVQ_LOOKAHEAD < q->fn)
            __builtin_prefetch(q->front[i + RS_EVQ_LOOKAHEAD].obj);
    }
    q->n--;
    if (q->fi == q->fn && q->late.n == 0) {
        /* Spent: the next bucket becomes the front when asked for, after
         * this event's handler has run (refilling now made cur jump to the
         * next pending bucket, maybe an RTO timer microseconds ahead, and
         * the handler's pushes before it all went to the late heap: 69% of
         * a sparse replay's time in its pops). */
        q->top = RS_TIME_MAX;
        return;
    }
    rs_time t = q->fi < q->fn ? q->front[q->fi].t : RS_TIME_MAX;
    if (RS_UNLIKELY(q->late.n > 0) && q->late.ev[0].t < t)
        t = q->late.ev[0].t;
    q->top = t;
}
