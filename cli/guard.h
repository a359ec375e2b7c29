/*
 * guard.h - refuse a run that will not fit in this machine's memory before
 * it starts: an estimate from the scenario (topology from the cost model's
 * closed-form counts, messages from the workload's shape), compared with
 * the physical memory. `railsim run --force` runs anyway.
 */
#ifndef RS_GUARD_H
#define RS_GUARD_H

#include "scenario.h"

/* RS_OK if the run is expected to fit (or force), else RS_ERANGE with err
 * giving the estimate, the machine's memory and a hint. Replays of a
 * training plan are not estimated yet (their message count needs the
 * trace): only their topology counts. */
int rs_guard_check(const rs_scenario *sc, int force, rs_err *err);

#endif
