/*
 * evq.h - the event queue: a 4-ary min-heap of small keys, with the event
 * bodies in a slot array beside it.
 *
 * Events are ordered by (time, key). The scheduler builds key from the
 * source entity id (high bits) and that entity's own sequence counter (low
 * bits), so equal-time events run in an order that depends only on who
 * scheduled them and in what order, not on heap layout or process layout.
 *
 * The heap moves 24-byte entries (time, key, slot) and compares them as one
 * 128-bit integer; the 24-byte bodies (handler, object, argument) stay put
 * in their slot. Four sentinel entries (time = max) always follow the last
 * live entry, so sift-down reads four children without bounds checks.
 * Nothing is allocated per event: both arrays double when full (amortized,
 * rare after warm-up) and are freed only by rs_evq_fini. Measured against
 * the plain 40-byte-entry heap by bench/evq_bench (bench/README.md).
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

typedef struct rs_evq_entry {
    rs_time t;
    uint64_t key;
    uint64_t slot;
} rs_evq_entry;

typedef struct rs_evq_body {
    rs_event_fn fn;
    void *obj;
    uint64_t arg; /* free slots: index of the next free slot */
} rs_evq_body;

typedef struct rs_evq {
    rs_evq_entry *heap; /* n live entries, then 4 sentinels */
    rs_evq_body *body;
    size_t n, cap;      /* cap: live entries that fit (heap has cap + 4) */
    size_t free_slot;   /* head of the free slot list */
} rs_evq;

void rs_evq_init(rs_evq *q);
void rs_evq_fini(rs_evq *q);

/* Insert a copy of *ev. RS_ENOMEM if the arrays could not grow (the queue
 * is unchanged then). */
int rs_evq_push(rs_evq *q, const rs_event *ev);

/* Remove the least event into *out; q must not be empty. */
void rs_evq_pop(rs_evq *q, rs_event *out);

static inline size_t rs_evq_size(const rs_evq *q) { return q->n; }

/* Time of the least event; q must not be empty. */
static inline rs_time rs_evq_top_time(const rs_evq *q) { return q->heap[0].t; }

#endif
