/*
 * evq.h - the event queue: a timing wheel of 2 ns buckets in front of a
 * heap, with the current bucket in a small (time, key) heap.
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
 * bucket t >> RS_EVQ_SHIFT. The current bucket's events sit in the "front"
 * heap on (t, key); the next RS_EVQ_WHEEL - 1 buckets are unsorted lists
 * threaded through the event pool (push is O(1), each event is moved once,
 * into the front, when its bucket comes up); events beyond the wheel's
 * 2.1 us horizon wait in an overflow heap and join the wheel as it turns.
 * Sized for the packet model: 82 ns (4 KiB at 400 Gb/s) and 1.08 us (plus
 * a 1 us link) steps; ~9 events per bucket in the 1,024-host fat tree.
 * Much sparser or far-future events degrade to the overflow heap, i.e. to
 * the 4-ary heap this replaced. Measured in bench/README.md: 40 ns vs
 * 72 ns per hold operation at 10k pending, 92 vs 137 at 100k.
 *
 * Nothing is allocated per event: the pool and both heaps double together
 * at push when full (amortized, rare after warm-up), so pop never fails;
 * everything is freed by rs_evq_fini.
 */
#ifndef RS_EVQ_H
#define RS_EVQ_H

#include "base.h"

typedef struct rs_sim rs_sim;

/* An event handler: obj and arg are what the scheduler was given. */
typedef void (*rs_event_fn)(rs_sim *sim, void *obj, uint64_t arg);

typedef struct rs_event {
    rs_time t;
    uint64_t key;
    rs_event_fn fn;
    void *obj;
    uint64_t arg;
} rs_event;

/* Bucket width 2^11 ps = 2.048 ns and 1,024 buckets (2.1 us horizon):
 * ~9 events per activated bucket in the fat-tree run (measured); the
 * horizon covers the 1.08 us hop. Other widths not yet measured. */
#define RS_EVQ_SHIFT 11
#define RS_EVQ_WHEEL 1024

/* A pooled event; next links wheel lists and the free list. */
typedef struct rs_evq_node {
    rs_event ev;
    uint32_t next;
} rs_evq_node;

/* A heap entry: the ordering key inline, the body in node[node]. */
typedef struct rs_evq_entry {
    rs_time t;
    uint64_t key;
    uint64_t node;
} rs_evq_entry;

typedef struct rs_evq {
    rs_time top;          /* least pending t; RS_TIME_MAX when empty */
    rs_evq_entry *front;  /* heap: events of buckets <= cur */
    size_t n;             /* pending events (front + wheel + over) */
    size_t nfront, nover;
    uint64_t cur;         /* bucket number the front holds */
    rs_evq_entry *over;   /* 4-ary heap: buckets >= cur + RS_EVQ_WHEEL */
    rs_evq_node *node;    /* cap nodes; free ones chained from free_node */
    uint32_t free_node, cap;
    uint64_t bits[RS_EVQ_WHEEL / 64]; /* non-empty wheel slots */
    uint32_t head[RS_EVQ_WHEEL];      /* wheel slot lists (UINT32_MAX: empty) */
} rs_evq;

void rs_evq_init(rs_evq *q);
void rs_evq_fini(rs_evq *q);

/* Insert a copy of *ev; ev->t must be >= the t of the last popped event.
 * RS_ENOMEM if the arrays could not grow (the queue is unchanged then). */
int rs_evq_push(rs_evq *q, const rs_event *ev);

/* Remove the least event into *out; q must not be empty. Never allocates. */
void rs_evq_pop(rs_evq *q, rs_event *out);

static inline size_t rs_evq_size(const rs_evq *q) { return q->n; }

/* Time of the least event; RS_TIME_MAX if q is empty. */
static inline rs_time rs_evq_top_time(const rs_evq *q) { return q->top; }

#endif
