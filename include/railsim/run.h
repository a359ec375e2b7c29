/*
 * run.h - a whole run as one library call: a scenario (the same keys as
 * `railsim run`, docs/scenario-format.md) in, a result with everything
 * summary.json holds out, and DIR/summary.json, DIR/timeline.msgpack and
 * captures written when an output directory is given. `railsim run`,
 * `compare`, `validate` and `faults sweep` print what rs_run_with returns.
 *
 *   rs_scenario *sc;
 *   rs_result *res;
 *   char *sets[] = { "topology.gpus=64", "traffic.kind=collective" };
 *   rs_scenario_create(&sc, &err);
 *   rs_scenario_load_string(sc, "{\"topology\": {\"kind\": \"rail-only\"}}", sets, 2, &err);
 *   if (rs_run(sc, &res, &err) == RS_OK)
 *       printf("%s\n", rs_result_summary_json(res));
 *
 * Nothing here prints, and the runner keeps no global state: progress and
 * interruption go through the progress callback of rs_run_opts.
 */
#ifndef RS_RUN_H
#define RS_RUN_H

#include <stdio.h>

#include "base.h"
#include "cost.h"
#include "fault.h"
#include "net.h"
#include "partition.h"
#include "replay.h"

RS_BEGIN_DECLS

/* ---- scenarios ----------------------------------------------------------- */

typedef struct rs_scenario rs_scenario;

/* A scenario with every key at its default; *out the caller's
 * (rs_scenario_destroy). RS_ENOMEM. */
RS_API int rs_scenario_create(rs_scenario **out, rs_err *err);
RS_API void rs_scenario_destroy(rs_scenario *sc); /* NULL is a no-op */

/* Reset *sc to the defaults, then apply the JSON scenario file at path
 * (NULL: none), then each "KEY=VALUE" of sets[0..nsets) in order (a later
 * one wins). RS_EIO when the file cannot be read, RS_EINVAL for anything
 * wrong in it or in a set, with err naming the file and line:column or
 * the key and what was expected; *sc is then unchanged. path and sets are
 * only read during the call. */
RS_API int rs_scenario_load(rs_scenario *sc, const char *path, char *const *sets, int nsets, rs_err *err);
/* The same from JSON text (NUL-terminated; NULL: none), named "scenario"
 * in messages. */
RS_API int rs_scenario_load_string(rs_scenario *sc, const char *json, char *const *sets, int nsets,
                                   rs_err *err);
/* The scenario as JSON text, every key, in the file format (loading it
 * gives back the same scenario), into *out, the caller's to free (free).
 * RS_ENOMEM. */
RS_API int rs_scenario_dump(const rs_scenario *sc, char **out);

/* A copy of *sc into *out, the caller's (rs_scenario_destroy). RS_ENOMEM. */
RS_API int rs_scenario_clone(rs_scenario **out, const rs_scenario *sc, rs_err *err);

/* Each "KEY=VALUE" of sets[0..nsets) applied to *sc as it stands, in
 * order (rs_scenario_load without the reset to the defaults); a change of
 * transport.dcqcn.profile among them starts the DCQCN constants from the
 * new profile, then the sets' own transport.dcqcn.* apply. RS_EINVAL
 * naming the key and what was expected; *sc is then unchanged. */
RS_API int rs_scenario_set(rs_scenario *sc, char *const *sets, int nsets, rs_err *err);

/* Scenario key `key`'s value as JSON text ("64", "\"rail-only\"",
 * "true") into *out, the caller's (free). RS_EINVAL for a key scenarios
 * do not have, RS_ENOMEM; *out is NULL then. */
RS_API int rs_scenario_get(const rs_scenario *sc, const char *key, char **out, rs_err *err);

/* Fault entries (docs/faults-format.md, one each, as `--fault`) checked
 * and appended to faults.schedule. RS_EINVAL naming "--fault" for a bad
 * entry or a schedule that would be full; *sc is then unchanged. */
RS_API int rs_scenario_add_faults(rs_scenario *sc, char *const *faults, int n, rs_err *err);

/* The network configuration *sc describes, into the first `size` bytes
 * of *out (a versioned struct: docs/library.md). */
RS_API void rs_scenario_net_fill(const rs_scenario *sc, rs_net_config *out, size_t size);
static inline void rs_scenario_net(const rs_scenario *sc, rs_net_config *out)
{
    rs_scenario_net_fill(sc, out, sizeof *out);
}

/* 1 when *sc replays a workload (workload.plan or workload.trace, which
 * replace traffic.*), else 0. */
RS_API int rs_scenario_replays(const rs_scenario *sc);
/* 1 when *sc injects faults (faults.schedule, or random failures by
 * faults.mtbf_us), else 0. */
RS_API int rs_scenario_has_faults(const rs_scenario *sc);

/* Every scenario key with its type, default, range and meaning, as
 * `railsim help keys` prints them. */
RS_API void rs_scenario_print_keys(FILE *f);

/* ---- runs ---------------------------------------------------------------- */

/* Called every 2^16 simulated events with the simulated time, the events
 * run so far and the share of the workload done (0..1; -1 where the end is
 * not known: synthetic traffic). Return nonzero to stop the run: it ends
 * with status RS_EINTR, its outputs closed and marked partial. */
typedef int (*rs_run_progress_fn)(void *ctx, rs_time now, uint64_t events, double done);

/* How rs_run_with runs a scenario. Initialise with rs_run_opts_default;
 * the library reads the first `size` bytes (docs/library.md, "Versioned
 * structs"). */
typedef struct rs_run_opts {
    uint32_t size;        /* sizeof(rs_run_opts) where the caller was compiled */
    const char *outdir;   /* summary.json, timeline.msgpack, pcap/ go here; NULL: no files */
    const char *name;     /* what messages call the scenario (its file); NULL: nothing */
    int force;            /* run even when the memory or disk estimate says it will not fit */
    rs_run_progress_fn progress; /* NULL: none */
    void *ctx;            /* progress's */
    /* Split the run over these processes (net.h rs_net_part_start) when
     * it can be (docs/parallel.md, `railsim run --help`): at packet level,
     * timelines and captures included, without faults but link degrades,
     * synthetic traffic, one iteration of a ring, tree, direct all-to-all
     * or send/recv collective, and a replay under workload.sync=rank whose
     * collectives are rings, trees, hierarchical or NVLS (without faults or
     * transfers by PXN relays). Otherwise process 0 runs it alone and
     * rs_result_parallel_note says why. A shared cluster's jobs (a
     * scenario's jobs array) spread instead: process 0 runs the shared
     * run, the jobs' runs alone go round the processes (summary.json's
     * parallel.alone_runs). Every process calls rs_run_with
     * with the same scenario and options; only process 0 gets a result and
     * writes the summary (each process adds its ports' captures and its
     * part of the timeline, which process 0 merges). NULL: a serial run. */
    const rs_net_comm *part;
    unsigned flags;       /* RS_RUN_* below; 0: none */
} rs_run_opts;

/* rs_run_opts.flags. */
enum {
    /* A fault entry whose class this topology lacks (a spine link on
     * rail-only) is listed in the summary's faults_absent, not refused:
     * one schedule for two topologies (railsim compare). */
    RS_RUN_FAULTS_ABSENT_OK = 1u << 0,
    /* Model the run as its faulted runs are modelled though it has no
     * faults (at flow level, relays as chunk pipelines): the fault-free
     * run that faulted runs are measured against (railsim faults sweep). */
    RS_RUN_AS_FAULTED = 1u << 1,
    /* Check only: build the network, resolve the faults and start the
     * workload as the run would (every input checked, RS_EINVAL naming
     * the key as rs_run_with), then free it all: nothing runs, nothing is
     * written, *out stays NULL. What a command of several runs asks
     * before its first (railsim compare), so a bad input is said once. */
    RS_RUN_CHECK_ONLY = 1u << 2,
};

/* *o (its first `size` bytes): no output directory, no name, not forced,
 * no progress, serial; and its size. */
RS_API void rs_run_opts_init(rs_run_opts *o, size_t size);
static inline void rs_run_opts_default(rs_run_opts *o)
{
    rs_run_opts_init(o, sizeof *o);
}

typedef struct rs_result rs_result;

/* Run *sc to the end: build its network, resolve its faults, start its
 * workload (traffic.*, or workload.plan / workload.trace), run until
 * nothing is left to do, and with o->outdir write the outputs (nothing is
 * created before every input is checked). fidelity=both is refused: that
 * is two runs (railsim validate).
 *
 * Returns RS_OK when the run took place, however it ended (the result's
 * status says), with *out the caller's (rs_result_destroy). RS_EINVAL
 * for a scenario that cannot run (err names the key), RS_ENOMEM; nothing
 * is written then and *out is NULL. RS_EIO when the run took place but an
 * output could not be written: err says which, *out still holds the
 * result. */
RS_API int rs_run_with(const rs_scenario *sc, const rs_run_opts *o, rs_result **out, rs_err *err);
/* rs_run_with with rs_run_opts_default: nothing is written. */
RS_API int rs_run(const rs_scenario *sc, rs_result **out, rs_err *err);

/* The network of *sc built and its faults resolved on it (every schedule
 * entry's target found), nothing run: the check of a fault schedule
 * before runs, or a look at the topology (net.h). flags: RS_RUN_* (only
 * RS_RUN_FAULTS_ABSENT_OK matters here). RS_OK with *out the caller's
 * (rs_net_destroy); else err says why and *out is NULL. */
RS_API int rs_scenario_net_create(const rs_scenario *sc, unsigned flags, rs_net **out, rs_err *err);

RS_API void rs_result_destroy(rs_result *r); /* NULL is a no-op */

/* How the run ended: RS_OK (everything delivered, every iteration done),
 * RS_EINCOMPLETE (messages left undelivered, or faults stopped the run),
 * RS_EINTR (the progress callback stopped it), or the error that stopped
 * it (RS_ENOMEM, RS_EIO for a capture that could not be written). */
RS_API int rs_result_status(const rs_result *r);
/* One sentence on why a run that did not end RS_OK ended so ("" for
 * RS_OK), without a trailing newline. */
RS_API const char *rs_result_message(const rs_result *r);
/* 1 when the run's faults stopped it (rs_result_message names the fault
 * and the operation blocked), else 0. */
RS_API int rs_result_stopped_by_faults(const rs_result *r);

/* A problem that did not stop the run ("" when none): the fault-free
 * baseline run (faults.baseline) failed; summary fault_free.status says so. */
RS_API const char *rs_result_warning(const rs_result *r);

/* rs_run_opts.part was given but the run was not split ("" when it was,
 * or when no part was asked): why, one clause ("only a packet-level run is
 * partitioned"). */
RS_API const char *rs_result_parallel_note(const rs_result *r);

/* The headline figures (a versioned struct: docs/library.md). */
typedef struct rs_result_figures {
    uint32_t size;            /* sizeof(rs_result_figures) where the caller was compiled */
    rs_time sim_end_ps;       /* the last activity */
    double wall_s;            /* wall-clock seconds of the run */
    uint64_t events;          /* simulated events */
    uint64_t packet_hops;     /* packets that crossed one link */
    uint64_t peak_rss_bytes;  /* the process's peak resident memory (getrusage), read once the run and its summary are built */
    /* The headline time: one training iteration (mean), else one
     * collective (mean), else sim_end_ps; what = "iteration",
     * "collective" or "sim_end"; time_ps -1 when the run has none (no
     * iteration or collective finished). */
    const char *what;
    double time_ps;
    double bound_ps;          /* the network-only lower bound of that time, -1 when none */
    double exposed_comm_ps;   /* iteration: communication not hidden by compute (mean), else -1 */
    uint64_t msgs_relayed;    /* messages forwarded through an HB domain onto another rail (rs_net_msgs_relayed) */
} rs_result_figures;
/* The figures into *out's first `size` bytes (its size set to it). */
RS_API void rs_result_figures_fill(const rs_result *r, rs_result_figures *out, size_t size);
static inline void rs_result_figures_get(const rs_result *r, rs_result_figures *out)
{
    rs_result_figures_fill(r, out, sizeof *out);
}

/* Everything the run measured, as summary.json holds it
 * (docs/summary-format.md): JSON text owned by the result. */
RS_API const char *rs_result_summary_json(const rs_result *r);
/* The same without its "ports" array (the ports' figures are in
 * rs_result_data_get), as compact JSON text into *out, the caller's
 * (free): what a program that reads the figures back needs, at a size
 * that does not grow with the network. RS_ENOMEM. */
RS_API int rs_result_summary_brief(const rs_result *r, char **out);

/* The headline time of a summary (summary.json's text, with or without
 * its ports): iteration.time_ps, else collective.time_ps, else
 * sim_end_ps, into *time_ps (-1 when the run has none: no iteration
 * finished), and *what "iteration", "collective" or "sim_end". RS_EINVAL
 * for text that is not a JSON object. */
RS_API int rs_summary_headline(const char *summary_json, const char **what, double *time_ps);

/* The same as C values: summary.json is written from this. Every member
 * is summary.json's member of the same name (docs/summary-format.md);
 * -1 stands for its null. Owned by the result. Each struct starts with
 * the library's sizeof of it and only grows at its end: a caller reads a
 * field a later version added only when size reaches past it. */
typedef struct rs_result_collective {
    uint32_t size;
    const char *op, *algo;    /* rs_coll_op_name, rs_coll_algo_name */
    uint32_t ranks, iters;
    uint64_t bytes;
    uint32_t ntimes;          /* iterations completed */
    const rs_time *times_ps;  /* [ntimes] */
    double time_ps, bound_ps; /* mean; network-only bound */
    double algbw_GBps, busbw_GBps;
    const char *protocol;     /* rs_coll_proto_name: "-" under nccl.model=ideal */
    double predicted_us;      /* NCCL's cost model's time for the algorithm and protocol run; 0: ideal */
} rs_result_collective;

typedef struct rs_result_iteration {
    uint32_t size;
    const char *name;         /* the trace's */
    uint32_t ntimes;
    const rs_time *times_ps;  /* [ntimes] */
    int tokens_valid, mfu_valid; /* st.tokens_per_s and st.mfu mean something */
    rs_replay_stats st;       /* replay.h: times, compute, exposed comm, bound, by dimension */
} rs_result_iteration;

typedef struct rs_result_fault_free {
    uint32_t size;
    const char *status;       /* the fault-free run's status, or "failed" */
    double sim_end_ps;
    const char *time_of;      /* "iteration", "collective" or "sim_end" */
    double time_ps, faulted_time_ps, slowdown;
} rs_result_fault_free;

typedef struct rs_result_data {
    uint32_t size;
    const char *status;       /* "complete", "interrupted" or "incomplete" */
    rs_time sim_end_ps;
    rs_topo_kind kind;
    uint32_t gpus;
    rs_net_topo_info topology;
    const rs_result_collective *collective; /* NULL: not a collective run */
    const rs_result_iteration *iteration;   /* NULL: not a replay */
    rs_net_stats net;         /* flows, packets, payload_bytes, pfc, ecn, cnp, max_queue_bytes, packet_hops */
    int fct_valid;            /* some flow completed: fct is set */
    rs_net_fct fct;
    uint32_t nports;          /* ports that queued, dropped, paused or marked anything */
    const rs_net_port_info *ports;
    uint32_t nfaults, nstuck, nabsent;
    const rs_net_fault_info *faults;  /* the schedule as resolved */
    const rs_net_pfc_stuck *stuck;    /* stuck PFC pauses, each charged to faults[stuck[i].fault] */
    const rs_net_fault_info *absent;  /* entries whose class this network lacks */
    const char *faults_stop;  /* "" when the faults did not stop the run */
    uint64_t events;
    int estimate_valid;
    double estimate_messages, estimate_events;
    uint64_t estimate_memory_bytes, estimate_timeline_min_bytes;
    double wall_s;
    uint64_t peak_rss_bytes;
    int parallel_valid;       /* a partitioned run: parallel is set */
    rs_net_part_stats parallel;
    const rs_result_fault_free *fault_free; /* NULL: no fault-free run (faults.baseline) */
    uint64_t msgs_relayed;    /* rs_net_msgs_relayed: messages forwarded through an HB domain onto another
                               * rail (not in summary.json; `railsim run` prints it) */
    const uint64_t *parallel_peak_rss; /* a partitioned run: [parallel.ranks], each process's peak RSS after
                                        * its last exchange (rank 0's: before the summary); NULL otherwise */
} rs_result_data;
RS_API const rs_result_data *rs_result_data_get(const rs_result *r);

/* ---- parts tables --------------------------------------------------------- */

/* Apply the parts table at path (docs/cost.md: a flat JSON object of
 * rs_catalog keys to numbers) to *p; keys it does not name keep their
 * values. RS_OK, or RS_EIO / RS_EINVAL with err one sentence naming the
 * file and the key and what was expected; *p may then be partly applied. */
RS_API int rs_catalog_load(const char *path, rs_catalog *p, rs_err *err);

RS_END_DECLS

#endif
