/*
 * sim.h - the scheduler: current time, entities, the run loop.
 *
 * A simulation is a set of entities (ports, nodes, drivers: the models
 * decide) that affect each other only through scheduled events. Each event
 * names the entity that scheduled it; equal-time events run in (source
 * entity id, per-source sequence) order. That order does not depend on how
 * entities are split across processes, which keeps runs deterministic for
 * a seed and a parallel run (over MPI processes, docs/parallel.md) equal
 * to the serial one.
 *
 * The engine knows nothing of packets: an event is a handler, an object
 * and a 64-bit argument.
 */
#ifndef RS_SIM_H
#define RS_SIM_H

#include "base.h"

RS_BEGIN_DECLS

typedef struct rs_sim rs_sim;

/* An event handler: obj and arg are what the scheduler was given. */
typedef void (*rs_event_fn)(rs_sim *sim, void *obj, uint64_t arg);

/* Entity ids fit in 24 bits; each entity may schedule 2^40 events. */
#define RS_SIM_MAX_ENTITIES (1u << 24)

/* An empty simulation at time 0 with no entities, *out the caller's
 * (rs_sim_destroy). RS_ENOMEM. */
RS_API int rs_sim_create(rs_sim **out);
RS_API void rs_sim_destroy(rs_sim *sim); /* NULL is a no-op */

/* Reserve n new consecutive entity ids; *first gets the first. RS_ERANGE
 * past RS_SIM_MAX_ENTITIES, RS_ENOMEM. */
RS_API int rs_sim_entities_add(rs_sim *sim, uint32_t n, uint32_t *first);
RS_API uint32_t rs_sim_entities(const rs_sim *sim);

static inline rs_time rs_sim_now(const rs_sim *sim);

/* Schedule fn(sim, obj, arg) at time t >= now on behalf of entity src.
 * Never fails visibly: on out-of-memory the simulation records RS_ENOMEM
 * and rs_sim_run returns it at the next step. obj is borrowed. */
RS_API void rs_sim_at(rs_sim *sim, rs_time t, uint32_t src, rs_event_fn fn,
               void *obj, uint64_t arg);

/* Schedule fn(sim, obj, arg) at time t >= now as an event of entity ent
 * whose key does not count: ent's events must never share an instant (a
 * link's arrivals: each frame arrives a serialization time after the one
 * ahead of it). The event's place among equal-time events is then ent's
 * alone, whoever schedules it and whenever, so the sender of a frame and
 * the process of its receiver schedule the same event (a partitioned run,
 * docs/parallel.md). Failure as rs_sim_at. */
RS_API void rs_sim_at_once(rs_sim *sim, rs_time t, uint32_t ent, rs_event_fn fn, void *obj, uint64_t arg);

/* An event of entity ent that another process runs (a partitioned run,
 * docs/parallel.md): its key, ent's next sequence number, counted here as
 * rs_sim_at would count it, so the event keeps the place the serial run
 * gives it; the other process queues it with rs_sim_at_key. */
RS_API uint64_t rs_sim_take_key(rs_sim *sim, uint32_t ent);
/* Queue an event under a key taken elsewhere (rs_sim_take_key), whoever
 * owns its entity. Failure as rs_sim_at. */
RS_API void rs_sim_at_key(rs_sim *sim, rs_time t, uint64_t key, rs_event_fn fn, void *obj, uint64_t arg);

/* Run events in order while the next one is at time <= until (RS_TIME_MAX:
 * until the queue is empty). Returns RS_OK, or the first error recorded by
 * rs_sim_fail / a failed schedule. Time is left at the last event run (or
 * at `until` if that is smaller than the next event and not RS_TIME_MAX). */
RS_API int rs_sim_run(rs_sim *sim, rs_time until);

/* Ask the run loop to return after the current event with this code
 * (RS_OK just stops). The first non-OK code is kept. */
RS_API void rs_sim_stop(rs_sim *sim, int code);

RS_API uint64_t rs_sim_events_run(const rs_sim *sim);
RS_API size_t rs_sim_pending(const rs_sim *sim);

/* -- partitioned runs (docs/parallel.md) ----------------------------------
 *
 * One simulation split over processes: every process builds the same
 * model, and each runs only the events of the entities it owns. own[e]
 * (the caller's, kept until the run ends; NULL: every entity is this
 * process's) says RS_SIM_REMOTE, RS_SIM_MINE or RS_SIM_SHARED for entity
 * e; a shared entity's events run in every process (the workload's
 * driver). An event goes to the queue only where its entity is mine or
 * shared: one that a shared event (or setup, outside a run) schedules for
 * a remote entity is dropped, since that entity's own process schedules
 * it too; one that a mine event schedules for a remote entity is a model
 * effect across processes that is not an exchanged event, and stops the
 * run with RS_EINTERNAL. Exchanged events (a link's arrivals) are pushed
 * by the receiving process with rs_sim_at_once. */
enum { RS_SIM_REMOTE = 0, RS_SIM_MINE = 1, RS_SIM_SHARED = 2 };
RS_API void rs_sim_set_owner(rs_sim *sim, const uint8_t *own);

/* Run the events before time end (t < end), in order; the time stays at
 * the last event run. RS_OK or the first recorded error, as rs_sim_run. */
RS_API int rs_sim_run_before(rs_sim *sim, rs_time end);

/* The running event's place within its instant, under rs_sim_run_before
 * (the same in every process and in the serial run): its key (entity << 40
 * and the entity's sequence number), or, when it was scheduled for this
 * instant by an event that ran in it with a later key, that event's place
 * (it runs right after that one, before everything else queued for the
 * instant). With rs_sim_now it orders what events write (a capture's part
 * files, rs_pcapng_merge; a timeline's parts). */
RS_API uint64_t rs_sim_key(const rs_sim *sim);

/* Whether the running event is a shared entity's (or none runs): what it
 * does, every process does. */
RS_API int rs_sim_running_shared(const rs_sim *sim);

/* Time of the next event (RS_TIME_MAX: none; settles the queue, hence not
 * const); the error recorded so far. */
RS_API rs_time rs_sim_next_time(rs_sim *sim);
RS_API int rs_sim_status(const rs_sim *sim);

/* Move the time forward to t >= now with nothing run (a partitioned run
 * ends at the last event of any process). */
RS_API void rs_sim_advance(rs_sim *sim, rs_time t);

/* Of rs_sim_events_run, the events of shared entities. */
RS_API uint64_t rs_sim_events_shared(const rs_sim *sim);

/* What rs_sim_events_run reports from now on (a partitioned run's total,
 * on the process that merges). */
RS_API void rs_sim_set_events_run(rs_sim *sim, uint64_t events);

/* Optional progress hook, called about every `every` events from inside the
 * run loop (for a progress line; must not schedule). */
typedef void (*rs_sim_progress_fn)(void *ctx, rs_time now, uint64_t events);
RS_API void rs_sim_set_progress(rs_sim *sim, uint64_t every, rs_sim_progress_fn fn, void *ctx);

/* The struct is private; its first member is the current time, and a
 * pointer to a struct may be read as a pointer to its first member (C17
 * 6.7.2.1p15), so the hot accessor stays inline. */
static inline rs_time rs_sim_now(const rs_sim *sim)
{
    return *(const rs_time *)(const void *)sim;
}

RS_END_DECLS

#endif
