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
    int status;            /* RS_OK or why the run stopped */
    const rs_collrun *coll; /* traffic.kind=collective: the driver (borrowed), else NULL */
    const rs_replay *replay; /* workload.*: the replay (borrowed, rs_replay_finish called), else NULL */
    const rs_guard_est *estimate; /* the pre-run estimate (borrowed), or NULL */
    rs_time jobs_end;        /* a shared cluster's jobs: the last op any of their replays completed */
} rs_run_info;

/* A run's figures (run.h's rs_result_data) and the storage they point
 * into. */
typedef struct rs_summary_store {
    rs_result_data d;
    rs_result_collective coll;
    rs_result_iteration it;
    rs_result_fault_free ff;
    rs_net_port_info *ports;
    rs_net_fault_info *faults, *absent;
    rs_net_pfc_stuck *stuck;
    rs_time *coll_times, *it_times;
    char *name, *faults_stop;
    uint64_t *rss;            /* d.parallel_peak_rss */
} rs_summary_store;

/* Collect everything summary.json holds from the network and the
 * workload (info), which may then be destroyed. d.collective is set when
 * info->coll is, d.iteration when info->replay is; d.fault_free is left
 * for the caller. RS_OK, or RS_ENOMEM with nothing kept.
 * rs_summary_store_free frees it. */
int rs_summary_collect(const rs_scenario *sc, rs_net *net, const rs_run_info *info, rs_summary_store *s);
void rs_summary_store_free(rs_summary_store *s);

/* summary.json (docs/summary-format.md) from d: a new JSON object (caller:
 * json_decref), NULL on ENOMEM. Its "ports" is a placeholder that
 * rs_summary_text replaces. */
json_t *rs_summary_json(const rs_scenario *sc, const rs_result_data *d);
/* The ports array's text, indented for summary.json (caller: free), built a
 * port at a time: NULL on ENOMEM. */
char *rs_summary_ports_text(const rs_result_data *d);
/* summary.json's text: summary (from rs_summary_json) pretty-printed with
 * ports_text in place of its placeholder, which leaves summary (the
 * object then has no "ports"). ports_text is taken (the text is built in
 * its buffer): the caller no longer frees it. Caller: free the result;
 * NULL on ENOMEM. */
char *rs_summary_text(json_t *summary, char *ports_text);
/* A replay's figures as summary.json's "iteration" object (a shared
 * cluster's job, run_jobs.c); NULL on ENOMEM. */
json_t *rs_summary_replay_json(const rs_replay *r);
/* A collective driver's figures as summary.json's "collective" object
 * (a job's traffic.kind=collective); NULL on ENOMEM. */
json_t *rs_summary_collrun_json(const rs_collrun *r);

#endif
