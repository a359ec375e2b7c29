/*
 * sim.c - the run loop. Owns the event queue and the per-entity sequence
 * counters. Invariant: time never goes backwards; an event is never
 * scheduled before now (checked: a model bug, not user input).
 */
#include "sim.h"
#include "evq.h"

#include <stdbool.h>
#include <stdlib.h>

struct rs_sim {
    rs_time now; /* first: read through rs_sim_now's inline view */
    rs_evq q;
    uint64_t *seq;
    uint32_t nent, capent;
    int status;
    int stop;
    uint64_t events;
    const uint8_t *own;   /* partitioned run: per entity RS_SIM_REMOTE/MINE/SHARED, else NULL */
    uint8_t cur_own;      /* the running event's entity's (RS_SIM_SHARED outside a run) */
    uint64_t cur_key;     /* the running event's place in its instant (rs_sim_run_before only) */
    rs_time key_t;        /* the instant of cur_key */
    uint64_t events_shared;
    uint64_t progress_every;
    rs_sim_progress_fn progress_fn;
    void *progress_ctx;
};

int rs_sim_create(rs_sim **out)
{
    rs_sim *sim = *out = calloc(1, sizeof *sim);
    if (!sim)
        return RS_ENOMEM;
    rs_evq_init(&sim->q);
    sim->cur_own = RS_SIM_SHARED;
    return RS_OK;
}

void rs_sim_destroy(rs_sim *sim)
{
    if (!sim)
        return;
    rs_evq_fini(&sim->q);
    free(sim->seq);
    free(sim);
}

int rs_sim_entities_add(rs_sim *sim, uint32_t n, uint32_t *first)
{
    if (n > RS_SIM_MAX_ENTITIES - sim->nent)
        return RS_ERANGE;
    uint32_t need = sim->nent + n;
    if (rs_array_reserve32(&sim->seq, &sim->capent, need, sizeof *sim->seq, 64) != RS_OK)
        return RS_ENOMEM;
    for (uint32_t i = sim->nent; i < need; i++)
        sim->seq[i] = 0;
    *first = sim->nent;
    sim->nent = need;
    return RS_OK;
}

uint32_t rs_sim_entities(const rs_sim *sim) { return sim->nent; }

/* Partitioned: may an event of entity e be queued here? A remote one is
 * dropped (scheduled from a shared event or setup) or a model bug (from
 * one of mine: it would need an exchange), which stops the run. */
static __attribute__((noinline)) bool remote_event(rs_sim *sim, uint32_t e)
{
    if (sim->own[e] != RS_SIM_REMOTE)
        return false;
    if (sim->cur_own == RS_SIM_MINE)
        rs_sim_stop(sim, RS_EINTERNAL);
    return true;
}

static inline void push(rs_sim *sim, rs_time t, uint64_t key, rs_event_fn fn, void *obj, uint64_t arg)
{
    if (RS_UNLIKELY(rs_evq_add(&sim->q, t, key, fn, obj, arg) != RS_OK))
        rs_sim_stop(sim, RS_ENOMEM);
}

void rs_sim_at(rs_sim *sim, rs_time t, uint32_t src, rs_event_fn fn,
               void *obj, uint64_t arg)
{
    RS_ASSERT(t >= sim->now);
    RS_ASSERT(src < sim->nent);
    if (RS_UNLIKELY(sim->own != NULL) && remote_event(sim, src)) {
        sim->seq[src]++; /* as the owner's count goes */
        return;
    }
    RS_ASSERT(sim->seq[src] < (1ULL << 40)); /* else it would spill into the entity bits */
    push(sim, t, ((uint64_t)src << 40) | sim->seq[src]++, fn, obj, arg);
}

void rs_sim_at_once(rs_sim *sim, rs_time t, uint32_t ent, rs_event_fn fn, void *obj, uint64_t arg)
{
    RS_ASSERT(t >= sim->now);
    RS_ASSERT(ent < sim->nent);
    if (RS_UNLIKELY(sim->own != NULL) && remote_event(sim, ent))
        return;
    push(sim, t, (uint64_t)ent << 40, fn, obj, arg);
}

uint64_t rs_sim_take_key(rs_sim *sim, uint32_t ent)
{
    RS_ASSERT(ent < sim->nent && sim->seq[ent] < (1ULL << 40));
    return ((uint64_t)ent << 40) | sim->seq[ent]++;
}

void rs_sim_at_key(rs_sim *sim, rs_time t, uint64_t key, rs_event_fn fn, void *obj, uint64_t arg)
{
    RS_ASSERT(t >= sim->now);
    push(sim, t, key, fn, obj, arg);
}

void rs_sim_stop(rs_sim *sim, int code)
{
    sim->stop = 1;
    if (sim->status == RS_OK)
        sim->status = code;
}

int rs_sim_run(rs_sim *sim, rs_time until)
{
    rs_event ev;
    uint64_t next_progress = sim->progress_fn ? sim->events + sim->progress_every : UINT64_MAX;
    sim->stop = 0;
    while (!sim->stop && sim->q.n > 0 && rs_evq_top_time(&sim->q) <= until) {
        rs_evq_pop(&sim->q, &ev);
        RS_ASSERT(ev.t >= sim->now);
        sim->now = ev.t;
        ev.fn(sim, ev.obj, ev.arg);
        if (RS_UNLIKELY(++sim->events >= next_progress)) {
            sim->progress_fn(sim->progress_ctx, sim->now, sim->events);
            next_progress = sim->events + sim->progress_every;
        }
    }
    if (!sim->stop && until != RS_TIME_MAX && until > sim->now)
        sim->now = until;
    return sim->status;
}

void rs_sim_set_owner(rs_sim *sim, const uint8_t *own) { sim->own = own; }

int rs_sim_run_before(rs_sim *sim, rs_time end)
{
    rs_event ev;
    uint64_t next_progress = sim->progress_fn ? sim->events + sim->progress_every : UINT64_MAX;
    sim->stop = 0;
    while (!sim->stop && sim->q.n > 0 && rs_evq_top_time(&sim->q) < end) {
        rs_evq_pop(&sim->q, &ev);
        RS_ASSERT(ev.t >= sim->now);
        sim->now = ev.t;
        sim->cur_own = sim->own ? sim->own[ev.key >> 40] : RS_SIM_MINE;
        /* An event scheduled for this instant by one that ran in it with a
         * later key runs right after that one, before everything else
         * queued here: it takes that one's place (rs_sim_key). */
        if (ev.t != sim->key_t || ev.key > sim->cur_key) {
            sim->cur_key = ev.key;
            sim->key_t = ev.t;
        }
        sim->events_shared += sim->cur_own == RS_SIM_SHARED;
        ev.fn(sim, ev.obj, ev.arg);
        if (RS_UNLIKELY(++sim->events >= next_progress)) {
            sim->progress_fn(sim->progress_ctx, sim->now, sim->events);
            next_progress = sim->events + sim->progress_every;
        }
    }
    sim->cur_own = RS_SIM_SHARED;
    return sim->status;
}

uint64_t rs_sim_key(const rs_sim *sim) { return sim->cur_key; }
int rs_sim_running_shared(const rs_sim *sim) { return sim->cur_own == RS_SIM_SHARED; }
rs_time rs_sim_next_time(rs_sim *sim) { return sim->q.n ? rs_evq_top_time(&sim->q) : RS_TIME_MAX; }
int rs_sim_status(const rs_sim *sim) { return sim->status; }
uint64_t rs_sim_events_shared(const rs_sim *sim) { return sim->events_shared; }
void rs_sim_set_events_run(rs_sim *sim, uint64_t events) { sim->events = events; }

void rs_sim_advance(rs_sim *sim, rs_time t)
{
    if (t > sim->now)
        sim->now = t;
}

const rs_event *rs_sim_peek(const rs_sim *sim, uint32_t k) { return rs_evq_peek(&sim->q, k); }

uint64_t rs_sim_events_run(const rs_sim *sim) { return sim->events; }
size_t rs_sim_pending(const rs_sim *sim) { return sim->q.n; }

void rs_sim_set_progress(rs_sim *sim, uint64_t every, rs_sim_progress_fn fn, void *ctx)
{
    sim->progress_every = every ? every : 1;
    sim->progress_fn = fn;
    sim->progress_ctx = ctx;
}
