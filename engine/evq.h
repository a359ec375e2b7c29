/*
 * evq.h - the event queue: a timing wheel of 2 ns buckets in front of a
 * heap, with the current bucket sorted by (time, key).
 *
 * Events are ordered by (time, key). The scheduler builds key from the
 * source entity id (high bits) and that entity's own sequence counter (low
 * bits), so equal-time events run in an order that depends only on who
 * scheduled them and in what order, not on queue layout or process layout.
 * The pop order is exactly that of a heap on (time, key): bench/evq_bench
 * checks it against a reference heap on a workload full of equal times.
 *
 * Time is monotone: every push has t >= the t of the last popped event
 * (rs_sim_at guarantees it). That allows a wheel: an event at t goes to
 * bucket t >> RS_EVQ_SHIFT. The next RS_EVQ_WHEEL - 1 buckets are unsorted
 * runs of whole events in pooled chunks (push is an append). When a bucket
 * comes up its chunks are copied in one sequential pass into the "front"
 * and sorted there by a natural merge sort: a bucket is mostly a few
 * already sorted runs (events pushed in key order by events that ran in
 * order), so the sort takes ~3 passes where popping a heap of the bucket
 * took ~log2(n) sift levels per event (bench run: 0.516 s -> 0.463 s best
 * of 7, -10%). Pop then takes the front in order
 * and prefetches the obj of the event RS_EVQ_LOOKAHEAD places on, so the
 * handler's object (a packet, a port) is in cache when that event runs;
 * handlers that want this pass the object they work on as obj (bench
 * run: 0.693 s without any obj prefetch, 0.590 s with, best of 7). Events
 * pushed into the current bucket after its sort (rare) go to a small
 * "late" heap that pop merges with the front. A pop that spends the
 * front leaves the next bucket for the next top or pop, after the event's
 * handler has pushed its own events into their buckets: refilling at
 * once moved the current bucket to the next one pending, maybe an RTO
 * timer microseconds ahead, and everything pushed before it went to the
 * late heap (a llama2-7b iteration on 64 GPUs at packet level spent 69%
 * of its time in pops; 285.7 s -> 117.5 s, the same bytes out). Events
 * beyond the wheel's 2.1 us horizon wait in an overflow heap and join the
 * front when their bucket comes up. Sized for the packet model: 82 ns
 * (4 KiB at 400 Gb/s) and 1.08 us (plus a 1 us link) steps. Much sparser
 * or far-future events degrade to the overflow heap, i.e. to a 4-ary
 * heap. Measured in bench/README.md.
 *
 * Nothing is allocated per event: arrays double at push when full
 * (amortized, rare after warm-up; the front always has room for every
 * pending event), chunks come from a pool that grows at push, so pop
 * never fails; everything is freed by rs_evq_fini.
 */
#ifndef RS_EVQ_H
#define RS_EVQ_H

#include "base.h"
#include "pool.h"
#include "sim.h"

RS_BEGIN_DECLS

typedef struct rs_event {
    rs_time t;
    uint64_t key;
    rs_event_fn fn;
    void *obj;
    uint64_t arg;
} rs_event;

/* Bucket width 2^11 ps = 2.048 ns and 1,024 buckets (2.1 us horizon): the
 * horizon covers the 1.08 us hop. In the synchronized fat-tree run a
 * bucket holds ~39 events on average (up to ~2,000: 1,024 NICs send in
 * lockstep), in ~5 ascending runs (measured). Other widths not measured
 * since the front became sorted. */
#define RS_EVQ_SHIFT 11
#define RS_EVQ_WHEEL 1024
/* Pop prefetches the obj of the event this many places ahead: 4, 6 and 8
 * measured the same on the bench run, 3 slightly slower. */
#define RS_EVQ_LOOKAHEAD 4

/* A growable array of whole events: a 2-ary or a 4-ary heap. */
typedef struct rs_evq_vec {
    rs_event *ev;
    uint32_t n, cap;
} rs_evq_vec;

/* Wheel slots hold their events in chunks from a shared pool: a slot's
 * storage returns to the pool when its bucket comes up, so a burst (1,024
 * NICs starting at one instant) does not leave every slot holding an
 * array sized for it (per-slot arrays did: 49 MB RSS instead of 17). The
 * list-through-the-event-pool wheel before it walked each bucket twice
 * (next_top, then advance), a dependent miss per event: 4.2M of the run's
 * 28M cachegrind misses; bench run 0.688 s -> 0.613 s best of 5 with the
 * obj prefetch. */
#define RS_EVQ_CHUNK 15
typedef struct rs_evq_chunk {
    struct rs_evq_chunk *next;
    rs_event ev[RS_EVQ_CHUNK];
} rs_evq_chunk;

/* Every chunk but the tail is full; the tail's fill count lives here, in
 * the slot array that stays in cache, not in the chunk (reading it there
 * was a cache miss on most pushes). */
typedef struct rs_evq_slot {
    rs_evq_chunk *head, *tail;
    uint32_t tail_n;
} rs_evq_slot;

typedef struct rs_evq {
    rs_time top;          /* least pending t (once settled); RS_TIME_MAX when empty */
    size_t n;             /* pending events (front + late + wheel + over) */
    uint64_t cur;         /* bucket number the front holds */
    rs_event *front;      /* front[fi..fn): the current bucket, sorted */
    rs_event *scratch;    /* merge buffer; front and scratch hold fcap >= n */
    uint32_t fi, fn, fcap;
    rs_evq_vec late;      /* 2-ary heap: pushed at b <= cur after the sort */
    rs_evq_vec over;      /* 4-ary heap: pushed at b >= cur + RS_EVQ_WHEEL */
    rs_pool chunks;       /* rs_evq_chunk */
    uint64_t bits[RS_EVQ_WHEEL / 64]; /* non-empty wheel slots */
    rs_evq_slot wheel[RS_EVQ_WHEEL];  /* slot b & (WHEEL - 1): bucket b events */
} rs_evq;

void rs_evq_init(rs_evq *q);
void rs_evq_fini(rs_evq *q);

/* Insert a copy of *ev; ev->t must be >= the t of the last popped event.
 * RS_ENOMEM if the arrays could not grow (the queue is unchanged then). */
int rs_evq_push(rs_evq *q, const rs_event *ev);

/* rs_evq_push with the event's fields as arguments, which the scheduler
 * uses: they arrive in registers and are stored once, where the event
 * goes. */
int rs_evq_add(rs_evq *q, rs_time t, uint64_t key, rs_event_fn fn, void *obj, uint64_t arg);

/* Remove the least event into *out; q must not be empty. Never allocates. */
void rs_evq_pop(rs_evq *q, rs_event *out);

static inline size_t rs_evq_size(const rs_evq *q) { return q->n; }

/* The event k places after the next one to pop (k = 0: the next), when it
 * is in the sorted front; NULL otherwise. A hint for prefetching only: a
 * later push may still come before it. */
static inline const rs_event *rs_evq_peek(const rs_evq *q, uint32_t k)
{
    return q->fn - q->fi > k ? &q->front[q->fi + k] : NULL;
}

/* Events pending, but a pop spent the front and late: the next bucket
 * is not the front yet, and top is not the least time. */
static inline int rs_evq_unsettled(const rs_evq *q) { return q->fi == q->fn && q->late.n == 0 && q->n > 0; }

/* If unsettled, make the next non-empty bucket the front (rs_evq_top_time
 * and rs_evq_pop do it when needed). */
void rs_evq_settle(rs_evq *q);

/* Time of the least event; RS_TIME_MAX if q is empty. Settles q first. */
static inline rs_time rs_evq_top_time(rs_evq *q)
{
    if (RS_UNLIKELY(rs_evq_unsettled(q)))
        rs_evq_settle(q);
    return q->top;
}

/* The event k places after the next one to run (k = 0: the next), when
 * the queue knows it without work; NULL otherwise. For prefetch hints: a
 * handler may look ahead and start loading what a coming event will touch
 * (its obj is already being prefetched by the queue). It may be wrong (a
 * later push can run first) and must never change what a handler does. */
const rs_event *rs_sim_peek(const rs_sim *sim, uint32_t k);

RS_END_DECLS

#endif
