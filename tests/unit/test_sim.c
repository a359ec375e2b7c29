/*
 * test_sim.c - CUnit suites for the engine's event queue and scheduler:
 * "evq" (evq.h) and "sim" (sim.h). A standalone executable, test_sim;
 * exits with the number of failed tests.
 *
 * The evq suite uses only the public API of evq.h (init, fini, push, pop,
 * size, top_time) and checks it against a reference built in the test, so
 * it stays valid when the heap's internals change. Random inputs come from
 * rs_rng with fixed seeds, so every run tests the same cases.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "cu_main.h"
#include "evq.h"
#include "rng.h"
#include "sim.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- evq -------------------------------------------------------------- */

/* Two distinct handlers, so a test can tell whether fn came back intact;
 * never called. */
static void evq_fn_a(rs_sim *sim, void *obj, uint64_t arg) { (void)sim, (void)obj, (void)arg; }
static void evq_fn_b(rs_sim *sim, void *obj, uint64_t arg) { (void)sim, (void)obj, (void)arg; }

static int key_less(rs_time ta, uint64_t ka, rs_time tb, uint64_t kb)
{
    return ta < tb || (ta == tb && ka < kb);
}

/* Event i of a test: time t, key, fn by parity, obj = &objs[i], arg = i. */
static rs_event evq_make(rs_time t, uint64_t key, uint64_t i, char *objs)
{
    rs_event ev = { .t = t, .key = key, .fn = (i & 1) ? evq_fn_b : evq_fn_a,
                    .obj = objs + i, .arg = i };
    return ev;
}

static void test_evq_random_pushes_pop_in_time_key_order_once_each(void)
{
    enum { N = 5000 }; /* past several doublings of the arrays */
    static rs_time t[N];
    static uint64_t key[N];
    static char objs[N], seen[N];
    rs_rng r;
    rs_rng_init(&r, 1, 2, 3);
    rs_evq q;
    rs_evq_init(&q);
    CU_ASSERT_EQUAL(rs_evq_size(&q), 0);
    rs_time min_t = RS_TIME_MAX;
    for (uint64_t i = 0; i < N; i++) {
        t[i] = rs_rng_below(&r, 40); /* about 125 events per time */
        key[i] = rs_mix64(i);         /* a bijection: keys are distinct */
        rs_event ev = evq_make(t[i], key[i], i, objs);
        CU_ASSERT_EQUAL_FATAL(rs_evq_push(&q, &ev), RS_OK);
        CU_ASSERT_EQUAL(rs_evq_size(&q), i + 1);
        if (t[i] < min_t)
            min_t = t[i];
        CU_ASSERT_EQUAL(rs_evq_top_time(&q), min_t);
    }
    memset(seen, 0, sizeof seen);
    rs_time last_t = 0;
    uint64_t last_key = 0;
    for (size_t n = N; n > 0; n--) {
        rs_time top = rs_evq_top_time(&q);
        rs_event ev;
        rs_evq_pop(&q, &ev);
        CU_ASSERT_EQUAL(rs_evq_size(&q), n - 1);
        CU_ASSERT_EQUAL(ev.t, top);
        if (n < N)
            CU_ASSERT(key_less(last_t, last_key, ev.t, ev.key));
        last_t = ev.t;
        last_key = ev.key;
        CU_ASSERT_FATAL(ev.arg < N);
        uint64_t i = ev.arg;
        CU_ASSERT_EQUAL(seen[i], 0);
        seen[i] = 1;
        CU_ASSERT_EQUAL(ev.t, t[i]);
        CU_ASSERT_EQUAL(ev.key, key[i]);
        CU_ASSERT_PTR_EQUAL(ev.obj, objs + i);
        CU_ASSERT((ev.fn == evq_fn_b) == ((i & 1) != 0));
        CU_ASSERT(ev.fn == evq_fn_a || ev.fn == evq_fn_b);
    }
    rs_evq_fini(&q);
}

/* Reference: pending events kept sorted in descending (t, key), so the
 * least is at the end. O(n) insert, fine for a few thousand. */
typedef struct ref_ev {
    rs_time t;
    uint64_t key, i;
} ref_ev;

static void ref_insert(ref_ev *a, size_t *n, ref_ev e)
{
    size_t lo = 0, hi = *n; /* first position whose element is less than e */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (key_less(a[mid].t, a[mid].key, e.t, e.key))
            hi = mid;
        else
            lo = mid + 1;
    }
    memmove(a + lo + 1, a + lo, (*n - lo) * sizeof *a);
    a[lo] = e;
    (*n)++;
}

static void test_evq_interleaved_monotone_matches_sorted_reference(void)
{
    enum { OPS = 40000, MAXN = OPS };
    static ref_ev ref[MAXN];
    static char objs[OPS];
    size_t nref = 0;
    uint64_t pushed = 0, popped = 0;
    rs_time now = 0;
    rs_rng r;
    rs_rng_init(&r, 7, 0, 1);
    rs_evq q;
    rs_evq_init(&q);
    for (int op = 0; op < OPS || nref > 0; op++) {
        /* Grow to a few thousand, shrink, grow again, then drain, so slots
         * are recycled across array growth. */
        uint32_t push_pct = op >= OPS ? 0 : (op / 5000) % 2 == 0 ? 70 : 35;
        if (nref == 0 || rs_rng_below(&r, 100) < push_pct) {
            /* Like a scheduler: never before the last popped time; often
             * exactly at it. */
            rs_time t = now + (rs_rng_below(&r, 4) == 0 ? 0 : rs_rng_below(&r, 50));
            uint64_t key = rs_mix64(pushed ^ 0xabcdef);
            rs_event ev = evq_make(t, key, pushed, objs);
            CU_ASSERT_EQUAL_FATAL(rs_evq_push(&q, &ev), RS_OK);
            ref_insert(ref, &nref, (ref_ev){ t, key, pushed });
            pushed++;
        } else {
            const ref_ev *want = &ref[nref - 1];
            CU_ASSERT_EQUAL_FATAL(rs_evq_top_time(&q), want->t);
            rs_event ev;
            rs_evq_pop(&q, &ev);
            CU_ASSERT_EQUAL_FATAL(ev.t, want->t);
            CU_ASSERT_EQUAL_FATAL(ev.key, want->key);
            CU_ASSERT_EQUAL_FATAL(ev.arg, want->i);
            CU_ASSERT_PTR_EQUAL(ev.obj, objs + want->i);
            CU_ASSERT((ev.fn == evq_fn_b) == ((want->i & 1) != 0));
            CU_ASSERT(ev.t >= now);
            now = ev.t;
            nref--;
            popped++;
        }
        CU_ASSERT_EQUAL_FATAL(rs_evq_size(&q), nref);
    }
    CU_ASSERT_EQUAL(pushed, popped);
    CU_ASSERT(pushed > 15000); /* the mix really exercised the queue */
    rs_evq_fini(&q);
}

static void test_evq_size_and_top_time_track_contents(void)
{
    char objs[4];
    rs_evq q;
    rs_evq_init(&q);
    CU_ASSERT_EQUAL(rs_evq_size(&q), 0);
    rs_event e30 = evq_make(30, 1, 0, objs), e10 = evq_make(10, 5, 1, objs);
    rs_event e10b = evq_make(10, 2, 2, objs), e20 = evq_make(20, 0, 3, objs);
    CU_ASSERT_EQUAL(rs_evq_push(&q, &e30), RS_OK);
    CU_ASSERT_EQUAL(rs_evq_size(&q), 1);
    CU_ASSERT_EQUAL(rs_evq_top_time(&q), 30);
    CU_ASSERT_EQUAL(rs_evq_push(&q, &e10), RS_OK);
    CU_ASSERT_EQUAL(rs_evq_top_time(&q), 10);
    CU_ASSERT_EQUAL(rs_evq_push(&q, &e10b), RS_OK);
    CU_ASSERT_EQUAL(rs_evq_push(&q, &e20), RS_OK);
    CU_ASSERT_EQUAL(rs_evq_size(&q), 4);
    CU_ASSERT_EQUAL(rs_evq_top_time(&q), 10);

    static const uint64_t want_arg[] = { 2, 1, 3, 0 }; /* (10,2) (10,5) (20,0) (30,1) */
    static const rs_time want_next[] = { 10, 20, 30 };
    for (size_t k = 0; k < 4; k++) {
        rs_event ev;
        rs_evq_pop(&q, &ev);
        CU_ASSERT_EQUAL(ev.arg, want_arg[k]);
        CU_ASSERT_EQUAL(rs_evq_size(&q), 3 - k);
        if (k < 3)
            CU_ASSERT_EQUAL(rs_evq_top_time(&q), want_next[k]);
    }
    /* Extreme times and keys are ordinary events, not sentinels. */
    rs_event emax = evq_make(RS_TIME_MAX, UINT64_MAX, 0, objs);
    rs_event ezero = evq_make(0, 0, 1, objs);
    CU_ASSERT_EQUAL(rs_evq_push(&q, &emax), RS_OK);
    CU_ASSERT_EQUAL(rs_evq_push(&q, &ezero), RS_OK);
    CU_ASSERT_EQUAL(rs_evq_size(&q), 2);
    CU_ASSERT_EQUAL(rs_evq_top_time(&q), 0);
    rs_event ev;
    rs_evq_pop(&q, &ev);
    CU_ASSERT_EQUAL(ev.arg, 1);
    CU_ASSERT_EQUAL(rs_evq_top_time(&q), RS_TIME_MAX);
    rs_evq_pop(&q, &ev);
    CU_ASSERT_EQUAL(ev.arg, 0);
    CU_ASSERT_EQUAL(ev.t, RS_TIME_MAX);
    CU_ASSERT_EQUAL(ev.key, UINT64_MAX);
    CU_ASSERT_PTR_EQUAL(ev.fn, evq_fn_a);
    CU_ASSERT_EQUAL(rs_evq_size(&q), 0);
    rs_evq_fini(&q);
}

/* A pop that spends the front does not move on to the next pending
 * bucket (a timer far ahead) before the handler's pushes are in: an event
 * pushed then, before that timer, goes to its wheel bucket, not to the
 * late heap. */
static void test_evq_refill_waits_for_the_handlers_pushes(void)
{
    char objs[3];
    rs_evq q;
    rs_evq_init(&q);
    rs_event now = evq_make(0, 0, 0, objs), rto = evq_make(1000000000, 1, 1, objs);
    CU_ASSERT_EQUAL(rs_evq_push(&q, &now), RS_OK);
    CU_ASSERT_EQUAL(rs_evq_push(&q, &rto), RS_OK); /* 1 ms ahead: beyond the wheel */
    rs_event ev;
    rs_evq_pop(&q, &ev);
    CU_ASSERT_EQUAL(ev.arg, 0);
    for (uint64_t i = 0; i < 3; i++) { /* what the handler schedules */
        rs_event next = evq_make(100000 + i * 82000, 2 + i, 2, objs);
        CU_ASSERT_EQUAL(rs_evq_push(&q, &next), RS_OK);
    }
    CU_ASSERT_EQUAL(q.late.n, 0);
    CU_ASSERT_EQUAL(rs_evq_top_time(&q), 100000);
    for (uint64_t i = 0; i < 3; i++) {
        rs_evq_pop(&q, &ev);
        CU_ASSERT_EQUAL(ev.t, 100000 + i * 82000);
        CU_ASSERT_EQUAL(q.late.n, 0);
    }
    CU_ASSERT_EQUAL(rs_evq_top_time(&q), 1000000000);
    rs_evq_pop(&q, &ev);
    CU_ASSERT_EQUAL(ev.arg, 1);
    CU_ASSERT_EQUAL(rs_evq_size(&q), 0);
    CU_ASSERT_EQUAL(rs_evq_top_time(&q), RS_TIME_MAX);
    rs_evq_fini(&q);
}

static void test_evq_fini_leaves_empty_reusable_queue(void)
{
    char objs[3000];
    rs_evq q;
    rs_evq_init(&q);
    for (uint64_t i = 0; i < 3000; i++) {
        rs_event ev = evq_make(3000 - i, 0, i, objs);
        CU_ASSERT_EQUAL_FATAL(rs_evq_push(&q, &ev), RS_OK);
    }
    rs_evq_fini(&q); /* with events still queued: frees them all */
    CU_ASSERT_EQUAL(rs_evq_size(&q), 0);
    rs_event ev = evq_make(5, 0, 7, objs), out;
    CU_ASSERT_EQUAL(rs_evq_push(&q, &ev), RS_OK);
    CU_ASSERT_EQUAL(rs_evq_top_time(&q), 5);
    rs_evq_pop(&q, &out);
    CU_ASSERT_EQUAL(out.arg, 7);
    rs_evq_fini(&q);
    rs_evq_fini(&q); /* twice is harmless */
}

/* ---- sim -------------------------------------------------------------- */

/* What handlers record: the arg and the time of each event run. Handlers
 * get the log as obj. */
typedef struct run_log {
    size_t n;
    uint64_t arg[64];
    rs_time t[64];
    /* for handlers that act */
    uint32_t src;
    int stop_code;
    int reschedule_left;
} run_log;

static void log_fn(rs_sim *sim, void *obj, uint64_t arg)
{
    run_log *log = obj;
    if (log->n < ARRAY_LEN(log->arg)) {
        log->arg[log->n] = arg;
        log->t[log->n] = rs_sim_now(sim);
    }
    log->n++;
}

static rs_sim *sim_with_entities(uint32_t n)
{
    rs_sim *sim = NULL;
    CU_ASSERT_EQUAL_FATAL(rs_sim_create(&sim), RS_OK);
    uint32_t first = 99;
    CU_ASSERT_EQUAL_FATAL(rs_sim_entities_add(sim, n, &first), RS_OK);
    CU_ASSERT_EQUAL_FATAL(first, 0);
    return sim;
}

static void test_sim_equal_times_run_by_source_entity_then_sequence(void)
{
    rs_sim *sim = sim_with_entities(8);
    run_log log = { 0 };
    /* Scheduling order across entities is 5, 2, 5, 7, 2, 0; the run order
     * must be by entity, and by scheduling order within one entity. */
    rs_sim_at(sim, 100, 5, log_fn, &log, 50);
    rs_sim_at(sim, 100, 2, log_fn, &log, 20);
    rs_sim_at(sim, 100, 5, log_fn, &log, 51);
    rs_sim_at(sim, 100, 7, log_fn, &log, 70);
    rs_sim_at(sim, 100, 2, log_fn, &log, 21);
    rs_sim_at(sim, 100, 0, log_fn, &log, 0);
    rs_sim_at(sim, 40, 7, log_fn, &log, 1); /* earlier time, scheduled last */
    CU_ASSERT_EQUAL(rs_sim_pending(sim), 7);
    CU_ASSERT_EQUAL(rs_sim_run(sim, RS_TIME_MAX), RS_OK);
    static const uint64_t want[] = { 1, 0, 20, 21, 50, 51, 70 };
    CU_ASSERT_EQUAL_FATAL(log.n, ARRAY_LEN(want));
    for (size_t i = 0; i < ARRAY_LEN(want); i++)
        CU_ASSERT_EQUAL(log.arg[i], want[i]);
    CU_ASSERT_EQUAL(log.t[0], 40);
    CU_ASSERT_EQUAL(log.t[1], 100);
    CU_ASSERT_EQUAL(rs_sim_now(sim), 100);
    CU_ASSERT_EQUAL(rs_sim_pending(sim), 0);
    rs_sim_destroy(sim);
}

/* Counts per entity the events run so far, to check per-source order. */
typedef struct order_check {
    uint32_t next_seq[300];
    uint32_t last_src;
    size_t runs;
    int bad;
} order_check;

/* arg = src << 32 | per-source index */
static void order_fn(rs_sim *sim, void *obj, uint64_t arg)
{
    (void)sim;
    order_check *c = obj;
    uint32_t src = (uint32_t)(arg >> 32), idx = (uint32_t)arg;
    if (c->runs > 0 && src < c->last_src)
        c->bad = 1;
    if (idx != c->next_seq[src])
        c->bad = 1;
    c->next_seq[src] = idx + 1;
    c->last_src = src;
    c->runs++;
}

static void test_sim_equal_time_order_independent_of_schedule_interleaving(void)
{
    /* 300 entities (past the first growth of the sequence table), 6000
     * events at one time, scheduled from randomly interleaved entities. */
    for (uint64_t seed = 1; seed <= 3; seed++) {
        rs_sim *sim = sim_with_entities(300);
        static order_check c;
        memset(&c, 0, sizeof c);
        uint32_t count[300] = { 0 };
        rs_rng r;
        rs_rng_init(&r, seed, 0, 0);
        for (int k = 0; k < 6000; k++) {
            uint32_t src = rs_rng_below(&r, 300);
            rs_sim_at(sim, 1000, src, order_fn, &c, (uint64_t)src << 32 | count[src]++);
        }
        CU_ASSERT_EQUAL(rs_sim_run(sim, RS_TIME_MAX), RS_OK);
        CU_ASSERT_EQUAL(c.runs, 6000);
        CU_ASSERT_EQUAL(c.bad, 0);
        for (uint32_t s = 0; s < 300; s++)
            CU_ASSERT_EQUAL(c.next_seq[s], count[s]);
        rs_sim_destroy(sim);
    }
}

static void test_sim_run_until_stops_there_and_leaves_later_events(void)
{
    rs_sim *sim = sim_with_entities(1);
    run_log log = { 0 };
    CU_ASSERT_EQUAL(rs_sim_now(sim), 0);
    rs_sim_at(sim, 10, 0, log_fn, &log, 10);
    rs_sim_at(sim, 20, 0, log_fn, &log, 20);
    rs_sim_at(sim, 30, 0, log_fn, &log, 30);

    CU_ASSERT_EQUAL(rs_sim_run(sim, 25), RS_OK);
    CU_ASSERT_EQUAL(log.n, 2);
    CU_ASSERT_EQUAL(rs_sim_now(sim), 25);
    CU_ASSERT_EQUAL(rs_sim_pending(sim), 1);

    /* An event exactly at `until` runs. */
    CU_ASSERT_EQUAL(rs_sim_run(sim, 30), RS_OK);
    CU_ASSERT_EQUAL(log.n, 3);
    CU_ASSERT_EQUAL(log.arg[2], 30);
    CU_ASSERT_EQUAL(rs_sim_now(sim), 30);
    CU_ASSERT_EQUAL(rs_sim_pending(sim), 0);

    /* Nothing to run: time still advances to until; RS_TIME_MAX leaves it. */
    CU_ASSERT_EQUAL(rs_sim_run(sim, 50), RS_OK);
    CU_ASSERT_EQUAL(rs_sim_now(sim), 50);
    CU_ASSERT_EQUAL(rs_sim_run(sim, RS_TIME_MAX), RS_OK);
    CU_ASSERT_EQUAL(rs_sim_now(sim), 50);

    /* until before the first pending event: nothing runs. */
    rs_sim_at(sim, 100, 0, log_fn, &log, 100);
    CU_ASSERT_EQUAL(rs_sim_run(sim, 99), RS_OK);
    CU_ASSERT_EQUAL(log.n, 3);
    CU_ASSERT_EQUAL(rs_sim_now(sim), 99);
    CU_ASSERT_EQUAL(rs_sim_run(sim, RS_TIME_MAX), RS_OK);
    CU_ASSERT_EQUAL(log.n, 4);
    CU_ASSERT_EQUAL(rs_sim_now(sim), 100);
    rs_sim_destroy(sim);
}

static void stop_fn(rs_sim *sim, void *obj, uint64_t arg)
{
    run_log *log = obj;
    log_fn(sim, obj, arg);
    rs_sim_stop(sim, log->stop_code);
}

static void test_sim_stop_makes_run_return_code(void)
{
    rs_sim *sim = sim_with_entities(1);
    run_log log = { .stop_code = RS_EINCOMPLETE };
    rs_sim_at(sim, 10, 0, log_fn, &log, 1);
    rs_sim_at(sim, 20, 0, stop_fn, &log, 2);
    rs_sim_at(sim, 20, 0, log_fn, &log, 3);
    rs_sim_at(sim, 30, 0, log_fn, &log, 4);
    CU_ASSERT_EQUAL(rs_sim_run(sim, 1000), RS_EINCOMPLETE);
    CU_ASSERT_EQUAL(log.n, 2); /* returns right after the stopping event */
    CU_ASSERT_EQUAL(rs_sim_now(sim), 20); /* at that event, not at until */
    CU_ASSERT_EQUAL(rs_sim_pending(sim), 2);
    CU_ASSERT_EQUAL(rs_sim_events_run(sim), 2);
    rs_sim_destroy(sim);
}

static void test_sim_stop_ok_pauses_and_run_resumes(void)
{
    rs_sim *sim = sim_with_entities(1);
    run_log log = { .stop_code = RS_OK };
    rs_sim_at(sim, 10, 0, stop_fn, &log, 1);
    rs_sim_at(sim, 20, 0, log_fn, &log, 2);
    CU_ASSERT_EQUAL(rs_sim_run(sim, RS_TIME_MAX), RS_OK);
    CU_ASSERT_EQUAL(log.n, 1);
    CU_ASSERT_EQUAL(rs_sim_pending(sim), 1);
    CU_ASSERT_EQUAL(rs_sim_run(sim, RS_TIME_MAX), RS_OK);
    CU_ASSERT_EQUAL(log.n, 2);
    CU_ASSERT_EQUAL(rs_sim_now(sim), 20);
    rs_sim_destroy(sim);
}

static void stop_twice_fn(rs_sim *sim, void *obj, uint64_t arg)
{
    (void)obj, (void)arg;
    rs_sim_stop(sim, RS_OK);
    rs_sim_stop(sim, RS_EIO);
    rs_sim_stop(sim, RS_EINVAL);
}

static void test_sim_stop_keeps_first_error_code(void)
{
    rs_sim *sim = sim_with_entities(1);
    rs_sim_at(sim, 5, 0, stop_twice_fn, NULL, 0);
    CU_ASSERT_EQUAL(rs_sim_run(sim, RS_TIME_MAX), RS_EIO);
    rs_sim_destroy(sim);
}

/* Reschedules itself at now, from entity log->src, reschedule_left times. */
static void again_fn(rs_sim *sim, void *obj, uint64_t arg)
{
    run_log *log = obj;
    log_fn(sim, obj, arg);
    if (log->reschedule_left-- > 0)
        rs_sim_at(sim, rs_sim_now(sim), log->src, again_fn, log, arg + 1);
}

/* Schedules, at now, one event from entity 3 and one from entity 0. */
static void fanout_fn(rs_sim *sim, void *obj, uint64_t arg)
{
    log_fn(sim, obj, arg);
    rs_sim_at(sim, rs_sim_now(sim), 3, log_fn, obj, 300);
    rs_sim_at(sim, rs_sim_now(sim), 0, log_fn, obj, 0);
}

static void test_sim_events_scheduled_at_now_run_in_same_run(void)
{
    rs_sim *sim = sim_with_entities(4);
    run_log log = { .src = 1, .reschedule_left = 4 };
    rs_sim_at(sim, 10, 1, again_fn, &log, 0);
    /* until == the event time: the chain at t = 10 still runs to its end. */
    CU_ASSERT_EQUAL(rs_sim_run(sim, 10), RS_OK);
    CU_ASSERT_EQUAL_FATAL(log.n, 5);
    for (size_t i = 0; i < 5; i++) {
        CU_ASSERT_EQUAL(log.arg[i], i);
        CU_ASSERT_EQUAL(log.t[i], 10);
    }
    CU_ASSERT_EQUAL(rs_sim_pending(sim), 0);
    CU_ASSERT_EQUAL(rs_sim_now(sim), 10);

    /* Events scheduled at now from a handler join the events already
     * pending at now, in (entity, sequence) order. */
    run_log log2 = { 0 };
    rs_sim_at(sim, 20, 2, fanout_fn, &log2, 200);
    rs_sim_at(sim, 20, 3, log_fn, &log2, 301); /* before the handler's 300 */
    CU_ASSERT_EQUAL(rs_sim_run(sim, 20), RS_OK);
    static const uint64_t want[] = { 200, 0, 301, 300 };
    CU_ASSERT_EQUAL_FATAL(log2.n, ARRAY_LEN(want));
    for (size_t i = 0; i < ARRAY_LEN(want); i++)
        CU_ASSERT_EQUAL(log2.arg[i], want[i]);
    rs_sim_destroy(sim);
}

static void test_sim_events_run_counts_across_runs(void)
{
    rs_sim *sim = sim_with_entities(2);
    run_log log = { 0 };
    CU_ASSERT_EQUAL(rs_sim_events_run(sim), 0);
    for (uint64_t i = 0; i < 10; i++)
        rs_sim_at(sim, i * 10, (uint32_t)(i % 2), log_fn, &log, i);
    CU_ASSERT_EQUAL(rs_sim_run(sim, 45), RS_OK);
    CU_ASSERT_EQUAL(rs_sim_events_run(sim), 5);
    CU_ASSERT_EQUAL(rs_sim_pending(sim), 5);
    CU_ASSERT_EQUAL(rs_sim_run(sim, RS_TIME_MAX), RS_OK);
    CU_ASSERT_EQUAL(rs_sim_events_run(sim), 10);
    CU_ASSERT_EQUAL(log.n, 10);
    rs_sim_destroy(sim);
}

typedef struct progress_log {
    size_t calls;
    uint64_t events[8];
    rs_time now[8];
} progress_log;

static void progress_fn(void *ctx, rs_time now, uint64_t events)
{
    progress_log *p = ctx;
    if (p->calls < ARRAY_LEN(p->events)) {
        p->events[p->calls] = events;
        p->now[p->calls] = now;
    }
    p->calls++;
}

static void test_sim_progress_called_every_n_events(void)
{
    rs_sim *sim = sim_with_entities(1);
    run_log log = { 0 };
    progress_log p = { 0 };
    rs_sim_set_progress(sim, 3, progress_fn, &p);
    for (uint64_t i = 1; i <= 10; i++)
        rs_sim_at(sim, i * 100, 0, log_fn, &log, i);
    CU_ASSERT_EQUAL(rs_sim_run(sim, RS_TIME_MAX), RS_OK);
    CU_ASSERT_EQUAL_FATAL(p.calls, 3);
    for (size_t k = 0; k < 3; k++) {
        CU_ASSERT_EQUAL(p.events[k], 3 * (k + 1));
        CU_ASSERT_EQUAL(p.now[k], 300 * (k + 1));
    }
    rs_sim_destroy(sim);
}

/* rs_sim_at_once: the event's place among equal times is its entity's,
 * however many events that entity scheduled before. */
static void test_sim_at_once_orders_by_entity_alone(void)
{
    rs_sim *sim = sim_with_entities(4);
    run_log log = { 0 };
    rs_sim_at(sim, 100, 2, log_fn, &log, 20);
    rs_sim_at(sim, 100, 2, log_fn, &log, 21);
    rs_sim_at_once(sim, 100, 3, log_fn, &log, 30);
    rs_sim_at_once(sim, 100, 1, log_fn, &log, 10);
    rs_sim_at(sim, 100, 0, log_fn, &log, 0);
    CU_ASSERT_EQUAL(rs_sim_run(sim, RS_TIME_MAX), RS_OK);
    static const uint64_t want[] = { 0, 10, 20, 21, 30 };
    CU_ASSERT_EQUAL_FATAL(log.n, ARRAY_LEN(want));
    for (size_t i = 0; i < ARRAY_LEN(want); i++)
        CU_ASSERT_EQUAL(log.arg[i], want[i]);
    rs_sim_destroy(sim);
}

/* A handler of entity 1 that schedules for entity 2 (remote in the test). */
static void cross_fn(rs_sim *sim, void *obj, uint64_t arg)
{
    (void)arg;
    rs_sim_at(sim, rs_sim_now(sim) + 5, 2, log_fn, obj, 99);
}

/* Partitioned: events of remote entities are dropped when a shared event
 * or setup schedules them, refused (RS_EINTERNAL) from a mine event;
 * rs_sim_run_before runs strictly before its end and leaves the time at
 * the last event; shared events are counted. */
static void test_sim_owner_drops_remote_and_refuses_cross_effects(void)
{
    rs_sim *sim = sim_with_entities(3);
    const uint8_t own[3] = { RS_SIM_SHARED, RS_SIM_MINE, RS_SIM_REMOTE };
    rs_sim_set_owner(sim, own);
    run_log log = { 0 };
    rs_sim_at(sim, 10, 2, log_fn, &log, 2);   /* setup, remote: dropped */
    rs_sim_at_once(sim, 10, 2, log_fn, &log, 3);
    rs_sim_at(sim, 10, 0, log_fn, &log, 0);   /* shared */
    rs_sim_at(sim, 20, 1, log_fn, &log, 1);   /* mine */
    rs_sim_at(sim, 30, 1, cross_fn, &log, 0); /* mine, schedules for remote 2 */
    CU_ASSERT_EQUAL(rs_sim_pending(sim), 3);
    CU_ASSERT_EQUAL(rs_sim_next_time(sim), 10);
    CU_ASSERT_EQUAL(rs_sim_run_before(sim, 20), RS_OK);
    CU_ASSERT_EQUAL(log.n, 1);
    CU_ASSERT_EQUAL(rs_sim_now(sim), 10);
    CU_ASSERT_EQUAL(rs_sim_next_time(sim), 20);
    CU_ASSERT_EQUAL(rs_sim_events_shared(sim), 1);
    CU_ASSERT_EQUAL(rs_sim_run_before(sim, 30), RS_OK);
    CU_ASSERT_EQUAL(log.n, 2);
    CU_ASSERT_EQUAL(rs_sim_now(sim), 20);
    CU_ASSERT_EQUAL(rs_sim_run_before(sim, RS_TIME_MAX), RS_EINTERNAL);
    CU_ASSERT_EQUAL(log.n, 2);
    CU_ASSERT_EQUAL(rs_sim_events_run(sim), 3);
    CU_ASSERT_EQUAL(rs_sim_next_time(sim), RS_TIME_MAX);
    rs_sim_advance(sim, 500);
    CU_ASSERT_EQUAL(rs_sim_now(sim), 500);
    rs_sim_set_events_run(sim, 7);
    CU_ASSERT_EQUAL(rs_sim_events_run(sim), 7);
    rs_sim_destroy(sim);
}

/* What a handler sees of its own event: its key (entity << 40 and the
 * entity's sequence number; an rs_sim_at_once's without one) and whether
 * its entity is shared. */
typedef struct key_log {
    uint64_t key[4];
    int shared[4];
    unsigned n;
} key_log;

static void key_fn(rs_sim *sim, void *obj, uint64_t arg)
{
    (void)arg;
    key_log *k = obj;
    if (k->n < 4) {
        k->key[k->n] = rs_sim_key(sim);
        k->shared[k->n] = rs_sim_running_shared(sim);
    }
    k->n++;
}

static void test_sim_key_and_shared_of_the_running_event(void)
{
    rs_sim *sim = sim_with_entities(3);
    const uint8_t own[3] = { RS_SIM_SHARED, RS_SIM_MINE, RS_SIM_MINE };
    rs_sim_set_owner(sim, own);
    key_log k = { 0 };
    rs_sim_at(sim, 10, 1, key_fn, &k, 0);
    rs_sim_at(sim, 10, 1, key_fn, &k, 0);
    rs_sim_at(sim, 10, 0, key_fn, &k, 0);
    rs_sim_at_once(sim, 5, 2, key_fn, &k, 0);
    CU_ASSERT(rs_sim_running_shared(sim)); /* outside a run: setup, as every process does it */
    CU_ASSERT_EQUAL(rs_sim_run_before(sim, RS_TIME_MAX), RS_OK);
    CU_ASSERT_EQUAL_FATAL(k.n, 4);
    CU_ASSERT_EQUAL(k.key[0], 2ULL << 40);       /* at_once: no sequence */
    CU_ASSERT_EQUAL(k.key[1], 0ULL << 40);       /* entity 0 first at t = 10 */
    CU_ASSERT_EQUAL(k.key[2], (1ULL << 40) | 0); /* then entity 1, in its order */
    CU_ASSERT_EQUAL(k.key[3], (1ULL << 40) | 1);
    CU_ASSERT(!k.shared[0] && k.shared[1] && !k.shared[2] && !k.shared[3]);
    CU_ASSERT(rs_sim_running_shared(sim));
    rs_sim_destroy(sim);
}

/* A child scheduled for the running instant by a parent with a later
 * key runs right after the parent, before the rest of the instant: it
 * takes the parent's place (a process of a split run orders what it writes
 * by that place, and the serial run writes it there). */
static void key_child_fn(rs_sim *sim, void *obj, uint64_t arg)
{
    key_fn(sim, obj, arg);
    if (arg)
        rs_sim_at(sim, rs_sim_now(sim), 0, key_fn, obj, 0); /* entity 0: a key below the parent's */
}

static void test_sim_key_of_a_same_instant_child_is_its_parents(void)
{
    rs_sim *sim = sim_with_entities(3);
    const uint8_t own[3] = { RS_SIM_MINE, RS_SIM_MINE, RS_SIM_MINE };
    rs_sim_set_owner(sim, own);
    key_log k = { 0 };
    rs_sim_at(sim, 10, 1, key_child_fn, &k, 1); /* parent, key (1, 0) */
    rs_sim_at(sim, 10, 2, key_fn, &k, 0);       /* after it in the instant, key (2, 0) */
    rs_sim_at(sim, 20, 0, key_fn, &k, 0);       /* a later instant: its own key, (0, 0) */
    CU_ASSERT_EQUAL(rs_sim_run_before(sim, RS_TIME_MAX), RS_OK);
    CU_ASSERT_EQUAL_FATAL(k.n, 4);
    CU_ASSERT_EQUAL(k.key[0], 1ULL << 40);
    CU_ASSERT_EQUAL(k.key[1], 1ULL << 40); /* the child, key (0, 1), ran in its parent's place */
    CU_ASSERT_EQUAL(k.key[2], 2ULL << 40);
    CU_ASSERT_EQUAL(k.key[3], 0ULL << 40);
    rs_sim_destroy(sim);
}

static void test_sim_entities_add_gives_consecutive_ids(void)
{
    rs_sim *sim = NULL;
    CU_ASSERT_EQUAL_FATAL(rs_sim_create(&sim), RS_OK);
    uint32_t first = 99;
    CU_ASSERT_EQUAL(rs_sim_entities(sim), 0);
    CU_ASSERT_EQUAL(rs_sim_entities_add(sim, 3, &first), RS_OK);
    CU_ASSERT_EQUAL(first, 0);
    CU_ASSERT_EQUAL(rs_sim_entities_add(sim, 5, &first), RS_OK);
    CU_ASSERT_EQUAL(first, 3);
    CU_ASSERT_EQUAL(rs_sim_entities_add(sim, 0, &first), RS_OK);
    CU_ASSERT_EQUAL(first, 8);
    CU_ASSERT_EQUAL(rs_sim_entities_add(sim, 1000, &first), RS_OK); /* grows */
    CU_ASSERT_EQUAL(first, 8);
    CU_ASSERT_EQUAL(rs_sim_entities_add(sim, 1, &first), RS_OK);
    CU_ASSERT_EQUAL(first, 1008);
    CU_ASSERT_EQUAL(rs_sim_entities(sim), 1009);

    /* Past the limit: RS_ERANGE, nothing reserved. */
    first = 99;
    CU_ASSERT_EQUAL(rs_sim_entities_add(sim, RS_SIM_MAX_ENTITIES, &first), RS_ERANGE);
    CU_ASSERT_EQUAL(rs_sim_entities_add(sim, UINT32_MAX, &first), RS_ERANGE);
    CU_ASSERT_EQUAL(rs_sim_entities_add(sim, RS_SIM_MAX_ENTITIES - 1008, &first), RS_ERANGE);
    CU_ASSERT_EQUAL(first, 99);
    CU_ASSERT_EQUAL(rs_sim_entities(sim), 1009);

    /* The newest entity can schedule. */
    run_log log = { 0 };
    rs_sim_at(sim, 1, 1008, log_fn, &log, 7);
    CU_ASSERT_EQUAL(rs_sim_run(sim, RS_TIME_MAX), RS_OK);
    CU_ASSERT_EQUAL(log.n, 1);
    rs_sim_destroy(sim);
    rs_sim_destroy(NULL); /* no-op */
}
/* ---- registration ----------------------------------------------------- */

static const rs_cu_test evq_tests[] = {
    RS_CU_TEST(test_evq_random_pushes_pop_in_time_key_order_once_each),
    RS_CU_TEST(test_evq_interleaved_monotone_matches_sorted_reference),
    RS_CU_TEST(test_evq_size_and_top_time_track_contents),
    RS_CU_TEST(test_evq_refill_waits_for_the_handlers_pushes),
    RS_CU_TEST(test_evq_fini_leaves_empty_reusable_queue),
};

static const rs_cu_test sim_tests[] = {
    RS_CU_TEST(test_sim_equal_times_run_by_source_entity_then_sequence),
    RS_CU_TEST(test_sim_equal_time_order_independent_of_schedule_interleaving),
    RS_CU_TEST(test_sim_run_until_stops_there_and_leaves_later_events),
    RS_CU_TEST(test_sim_stop_makes_run_return_code),
    RS_CU_TEST(test_sim_stop_ok_pauses_and_run_resumes),
    RS_CU_TEST(test_sim_stop_keeps_first_error_code),
    RS_CU_TEST(test_sim_events_scheduled_at_now_run_in_same_run),
    RS_CU_TEST(test_sim_events_run_counts_across_runs),
    RS_CU_TEST(test_sim_progress_called_every_n_events),
    RS_CU_TEST(test_sim_at_once_orders_by_entity_alone),
    RS_CU_TEST(test_sim_owner_drops_remote_and_refuses_cross_effects),
    RS_CU_TEST(test_sim_key_and_shared_of_the_running_event),
    RS_CU_TEST(test_sim_key_of_a_same_instant_child_is_its_parents),
    RS_CU_TEST(test_sim_entities_add_gives_consecutive_ids),
};
static void register_suites(void)
{
    RS_CU_SUITE("evq", evq_tests);
    RS_CU_SUITE("sim", sim_tests);
}

int main(void)
{
    return rs_cu_run(register_suites);
}
