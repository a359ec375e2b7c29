/*
 * runner.h - run one scenario end to end: build the network, start its
 * workload (synthetic traffic, a collective or a training replay), run to
 * idle, print the human summary unless quiet, and write DIR/summary.json
 * (and captures) when outdir is given. Shared by `railsim run` and
 * `railsim compare`.
 */
#ifndef RS_RUNNER_H
#define RS_RUNNER_H

#include <jansson.h>

#include "run.h"
#include "scenario.h"

/* The run's summary (docs/summary-format.md), owned by the result, less
 * its "ports" array (rs_result_data_get has the ports, the summary's text
 * has them as written). */
const json_t *rs_result_summary(const rs_result *r);

/* Returns an exit code (cli.h). path names the scenario file in messages
 * (may be NULL). quiet: 0 print the human summary, 1 not, 2 not and no
 * "run stopped" line when the faults stop the run (the summary's
 * faults_stop holds it). part: the processes to split the run over
 * (under mpirun, `railsim run`), NULL: serial. With summary non-NULL, *summary gets the summary object
 * (caller: json_decref; NULL if none was built). force skips the memory
 * guard (guard.h). */
int rs_run_execute(const rs_scenario *sc, const char *path, const char *outdir, int quiet, int force,
                   const rs_net_comm *part, json_t **summary);

/* --fault SPEC strings: each checked (rs_fault_check, named "--fault")
 * and appended to sc->faults.schedule. RS_EINVAL with err on a bad entry
 * or a full schedule. */
int rs_run_add_faults(rs_scenario *sc, char *const *faults, int n, rs_err *err);

/* Build sc's network as topology `kind` and resolve its faults on it,
 * running nothing: the check before any run of commands that run one
 * scenario on both topologies. RS_OK with *net the caller's
 * (rs_net_destroy); else the error code, err says why, *net is NULL. */
int rs_run_faults_probe(const rs_scenario *sc, rs_topo_kind kind, rs_net **net, rs_err *err);

/* The headline time of a summary in ps: iteration.time_ps, else
 * collective.time_ps, else sim_end_ps; *what is "iteration", "collective"
 * or "sim_end". -1 when the run has none (a workload that did not finish
 * an iteration). */
double rs_run_headline_ps(const json_t *s, const char **what);

/* fidelity=both (and `railsim validate`): run *sc at packet level, then at
 * flow level (fidelity is overridden), print the flow level's relative
 * error against the packet level and the speed-up unless quiet; with
 * outdir, the runs go to outdir/packet/ and outdir/flow/ and the
 * comparison to outdir/validate.json. Returns an exit code (cli.h).
 * Faults apply at both levels. cmd_validate.c. */
int rs_validate_execute(const rs_scenario *sc, const char *path, const char *outdir, int quiet, int force);

#endif
