/*
 * run_split.h - one run's context, and the run split over MPI processes
 * (rs_run_opts.part). Private to run.c and run_split.c.
 *
 * rs_run_with (run.c) fills one rs_run_ctx and hands it to each step of
 * the run instead of its options and pieces one by one. run_split.c holds
 * everything about a split run (docs/parallel.md): deciding alike in
 * every process whether it splits, starting this process's part, the
 * agreement before the run, each process's part of the timeline and its
 * merge on process 0, and process 0 finishing a split collective or
 * replay from every process's completions. Nothing here prints.
 */
#ifndef RS_RUN_SPLIT_H
#define RS_RUN_SPLIT_H

#include "collrun.h"
#include "guard.h"
#include "replay.h"
#include "run.h"
#include "scenario.h"
#include "summary.h"

/* One run, from rs_run_with's start to its result. */
typedef struct rs_run_ctx {
    const rs_run_opts *o; /* the caller's, read only */
    rs_scenario sc;       /* the scenario as run (relay pipeline and sampling settled) */
    const char *outdir;   /* where this process writes: o->outdir, NULL on a split run's processes but 0 */
    rs_time sample_ps;    /* the timeline's sampling interval; 0: none */
    rs_guard_est est;     /* the resource guard's estimate */
    /* What the run owns, freed by run_free in this order (the collective
     * driver and the replay after the network: a run that stopped early
     * leaves collectives running; the trace after the replay). */
    rs_net *net;
    rs_collrun *coll;
    rs_replay *replay;
    rs_trace *trace;
    char *cap_comment;    /* the pcapng section comment; NULL: none */
    /* A shared cluster's jobs (run_jobs.c), sc.njobs of them; only: the
     * one job run (alone on its GPUs, for its slowdown), or all
     * (RS_RUN_ALL, RS_RUN_ALL_NO_ALONE: below). */
    struct rs_run_job *jobs;
    uint32_t nrun_jobs;   /* entries of jobs: sc.njobs, or sc.sched.arrivals under a scheduler */
    struct rs_run_sched *sched; /* a scheduler's state (run_jobs.c), NULL: none */
    int only;
    uint32_t ncap;        /* ports captured */
    int want_tl;          /* o->outdir and timeline.enabled: a timeline is written */
    rs_timeline *tl;      /* DIR/timeline.msgpack (process 0) */
    rs_timeline *tlp;     /* a split run: this process's part of it */
    rs_timeline *tll;     /* a split run: process 0's part of what it learns at the end */
    /* o->part: */
    int split;            /* the run is split (from rs_net_part_start on: every process agrees) */
    /* A shared cluster over o->part (rs_split_begin): process 0 runs the
     * shared run; the jobs' runs alone (their slowdowns' baselines) go
     * round the processes (rs_run_jobs_alone). Under a scheduler every
     * process runs the shared run too: each arrival's baseline needs the
     * GPUs it got. */
    int spread;
    char part_why[200];   /* why a run over o->part is not split; "" when it is, or serial */
    char part_err[256];   /* what was wrong with a collective's or replay's part another process sent */
    /* The run and how it ended (run.c). */
    rs_result *res;       /* what rs_run_with hands out */
    rs_run_info info;     /* the run's status, wall time and workload, for the summary */
    rs_net_stats st;      /* the network's counters at the end */
    uint32_t iters_done;  /* a collective's iterations completed */
    int replay_status;    /* rs_replay_finish's code, and its message: */
    rs_err replay_err;
    uint64_t *rss;        /* a split run: each process's peak RSS after its last exchange (rs_split_rss) */
    int rss_ok;           /* rss was filled */
} rs_run_ctx;

/* run.c: start the replay of trace t (workload w) on r's network at
 * start after now, with the scenario's GPU side (docs/compute.md) and
 * the resource guard's check. */
int rs_run_replay_start(rs_run_ctx *r, const rs_workload_config *w, const rs_trace *t, rs_time start,
                        rs_net_done_fn done, void *done_ctx, rs_replay **out, rs_err *err);

/* run_jobs.c: a shared cluster (docs/shared-clusters.md). build: place
 * every job on the GPUs the ones before it left free, and start each
 * (r->only's alone); RS_EINVAL with err naming the job. timeline: the
 * jobs' replays write into tl. finish: after the run, each replay's
 * status (the first failure is r->replay_status and r->replay_err) and
 * their last op (r->info.jobs_end).
 * json: summary.json's "jobs" (NULL on ENOMEM). free: after the network. */
int rs_run_jobs_build(rs_run_ctx *r, rs_err *err);
int rs_run_jobs_timeline(rs_run_ctx *r, rs_timeline *tl, rs_err *err);
void rs_run_jobs_finish(rs_run_ctx *r);
json_t *rs_run_jobs_json(const rs_run_ctx *r);
/* summary.json's "interference": each pair of jobs whose data crossed
 * the same ports (rs_net_jobs_count); [] with fewer than 2 jobs run;
 * NULL on ENOMEM. */
json_t *rs_run_jobs_interference(const rs_run_ctx *r);
/* Into each entry of summary.json's "faults" (rs_net_fault_info order),
 * "jobs_hit": the jobs whose flows it hit, and how many of each's.
 * RS_ENOMEM. */
int rs_run_jobs_faults(const rs_run_ctx *r, json_t *faults);
/* summary.json's "job_links": the `top` Ethernet ports that sent the most of the
 * jobs' data bytes (those of two jobs or more first), each with its bytes and its share of the port's
 * capacity over the run per job (job order); [] with fewer than 2 jobs
 * or under a scheduler; NULL on ENOMEM. */
#define RS_JOB_LINKS_TOP 32
json_t *rs_run_jobs_links(const rs_run_ctx *r, uint32_t top);
/* For a capture's comment: each job's name, GPUs and priority on one
 * line ("jobs (...): dense 0-7,16 (priority 3); moe 8-15 (priority 5)").
 * Caller: free; NULL on ENOMEM. */
char *rs_run_jobs_capture_note(const rs_run_ctx *r);
/* summary.json's "scheduler" from its jobs (with their slowdowns), NULL
 * without a scheduler or on ENOMEM. */
json_t *rs_run_jobs_sched_json(const rs_run_ctx *r, const json_t *jobs);
/* The jobs' times alone on their GPUs (a scheduler's arrivals': alone
 * on the GPUs each got), the baselines of their slowdowns: one rs_run_only
 * per job, *n of them (0: none to run, a lone job is its own baseline).
 * Spread over o->part (r->spread), each process runs its share (the
 * others than process 0 in turn, all in turn under a scheduler), and
 * every process gets all of them; every
 * process must call it exactly once after the run. run = 0 (an
 * interrupted run): this process runs none of its share. Malloc'ed, -1
 * for a run that failed or was not run; NULL when *n is 0 or on ENOMEM. */
double *rs_run_jobs_alone(const rs_run_ctx *r, int run, uint32_t *n);
/* Each job's alone time and slowdown into jobs, from alone (n of them;
 * none with a lone job: its own time). */
void rs_run_jobs_baselines(const rs_run_ctx *r, json_t *jobs, const double *alone, uint32_t n);
/* summary.json's "parallel" of a spread run: the ranks, and how many runs
 * alone each ran. NULL on ENOMEM. */
json_t *rs_run_jobs_parallel_json(const rs_run_ctx *r, uint32_t n);
void rs_run_jobs_free(rs_run_ctx *r);
/* run.c: rs_run_with with only job `only` run, or all of them with their
 * slowdowns (RS_RUN_ALL) or without (RS_RUN_ALL_NO_ALONE). */
#define RS_RUN_ALL (-1)
#define RS_RUN_ALL_NO_ALONE (-2)
int rs_run_only(const rs_scenario *sc, const rs_run_opts *opts, int only, rs_result **out, rs_err *err);
/* run.c: the result's "jobs" (borrowed), NULL when none. */
const json_t *rs_result_jobs(const rs_result *res);

/* The kinds a scenario's timeline writes. */
static inline uint32_t rs_run_tl_mask(const rs_scenario *sc)
{
    return sc->timeline.heavy ? RS_TL_ALL : RS_TL_ALL & ~RS_TL_HEAVY;
}

/* This process's rank in a split or spread run; 0 in any other. */
static inline uint32_t rs_split_rank(const rs_run_ctx *r)
{
    return r->split || r->spread ? r->o->part->rank : 0;
}

/* With r->o->part over more than one process: decide, alike in every
 * process (from the scenario and whether outputs were asked, not from the
 * rank), whether the run splits, and start this process's part if so
 * (r->split; on processes but 0, r->outdir becomes NULL: process 0 writes
 * the outputs, each process adds its ports' captures and its part of the
 * timeline). A shared cluster's jobs with runs alone to share set
 * r->spread instead (r->outdir NULL on the processes but 0). When it
 * does not split, r->part_why says why, and *idle is 1
 * on the processes but 0: process 0 runs it alone. RS_OK, or the error of
 * rs_net_part_start (r->split is then 1: the caller says so to the others,
 * rs_split_agree). */
int rs_split_begin(rs_run_ctx *r, int *idle, rs_err *err);

/* A split run starts only if every process set up its part: one that
 * fails (process 0's output directory, memory) says so to the others,
 * which would otherwise wait for it in the first window. Returns whether
 * all did; a process that failed passes ok = 0. Neither split nor
 * spread: ok. */
int rs_split_agree(const rs_run_ctx *r, int ok);

/* Open this process's part of the timeline, DIR/.timeline.msgpack.partR
 * for rank R, into which its network writes. On error nothing is left
 * open and *out is NULL. */
int rs_split_part_open(rs_run_ctx *r, uint32_t rank, rs_timeline **out, rs_err *err);

/* Once process 0 made the output directory, the other processes open
 * their ports' capture files (or their part of the pcapng) and their
 * part of the timeline in it, and every process agrees that all did.
 * Returns whether all did (1 when not split); err says why this one did
 * not. */
int rs_split_parts_start(rs_run_ctx *r, rs_err *err);

/* After the run of a split collective or replay: process 0 finishes its
 * iterations from every process's completions, writing what it learns
 * into a late part of the timeline (r->tll). RS_OK (also when there is
 * nothing to gather), RS_EIO when the late part could not be opened, or
 * the gather's error. */
int rs_split_gather(rs_run_ctx *r);

/* Close this process's parts of the timeline; when every process closed
 * its own, process 0 merges them into r->tl in the serial run's order and
 * closes it (marked partial if partial). RS_OK, or RS_EIO with err. */
int rs_split_timeline_close(rs_run_ctx *r, int partial, rs_err *err);

/* A split run's figures into s->d (summary "parallel"), each process's
 * peak RSS kept in s. */
void rs_split_stats(const rs_run_ctx *r, rs_summary_store *s);

/* Every process of a split run, after its last exchange: each process's
 * peak RSS into r->rss (one all-reduce; r->rss_ok says it came). */
void rs_split_rss(rs_run_ctx *r);

/* This process's peak resident memory in bytes (getrusage). */
uint64_t rs_run_peak_rss(void);

#endif
