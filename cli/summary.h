/*
 * summary.h - the run summary (docs/summary-format.md): what a run
 * measured, as a JSON object built from the network's statistics.
 */
#ifndef RS_SUMMARY_H
#define RS_SUMMARY_H

#include <jansson.h>

#include "collrun.h"
#include "guard.h"
#include "net.h"
#include "replay.h"
#include "scenario.h"

typedef struct rs_run_info {
    double wall_s;
    uint64_t peak_rss_bytes;
    int status;            /* RS_OK or why the run stopped */
    const rs_collrun *coll; /* traffic.kind=collective: the driver (borrowed), else NULL */
    const rs_replay *replay; /* workload.*: the replay (borrowed, rs_replay_finish called), else NULL */
    const rs_guard_est *estimate; /* the pre-run estimate (borrowed), or NULL */
} rs_run_info;

/* New JSON object (caller: json_decref), NULL on ENOMEM. It has a
 * "collective" member when info->coll is set, an "iteration" member when
 * info->replay is. */
json_t *rs_summary_build(const rs_scenario *sc, rs_net *net, const rs_run_info *info);

#endif
