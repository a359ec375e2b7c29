/*
 * guard.h - the pre-run estimate, and the guard that refuses a run that
 * will not fit in this machine's memory before it starts: memory from the
 * topology (the cost model's closed-form counts) and the workload's
 * transfers, events from the bytes and transfers the workload moves,
 * compared with the physical memory. `railsim run --force` runs anyway.
 */
#ifndef RS_GUARD_H
#define RS_GUARD_H

#include "scenario.h"
#include "trace.h"

/* What a run is expected to need (summary.json `estimate`). */
typedef struct rs_guard_est {
    double messages;       /* transfers handed to the network */
    double events;         /* engine events, order of magnitude */
    uint64_t memory_bytes; /* peak memory of the run */
    uint64_t timeline_min_bytes; /* link samples at timeline.sample_us at least (0: none), written or not */
} rs_guard_est;

/* Estimate the run of *sc. trace: the replayed workload (loaded), or NULL
 * for synthetic traffic and collectives (a workload's transfers are then
 * not counted: call again once its trace is loaded). RS_OK or RS_EINVAL /
 * RS_ENOMEM with err. */
int rs_guard_estimate(const rs_scenario *sc, const rs_trace *trace, rs_guard_est *e, rs_err *err);

/* rs_guard_estimate, then RS_OK if the run is expected to fit (or force),
 * else RS_ERANGE with err giving the estimate, the machine's memory and a
 * hint. */
int rs_guard_check(const rs_scenario *sc, const rs_trace *trace, int force, rs_guard_est *e, rs_err *err);

/* When *sc writes a timeline with samples to outdir: RS_OK if its link
 * samples (at least e->timeline_min_bytes) fit in the free space of
 * outdir's file system (or of its parent, before it exists), or force;
 * else RS_ERANGE with err giving the figures and a hint. */
int rs_guard_disk(const rs_scenario *sc, const rs_guard_est *e, const char *outdir, int force, rs_err *err);

#endif
