/*
 * jobs.h - a batch of independent runs (rs_run_execute), one after another
 * or up to N at once in child processes (`-j N` of `railsim compare` and
 * `railsim faults sweep`). Each run is as it would be alone (same
 * scenario, seed, outputs); the caller reads the results in job order, so
 * whatever it writes from them is the same bytes at any N.
 */
#ifndef RS_JOBS_H
#define RS_JOBS_H

#include <jansson.h>

#include "net.h"
#include "run.h"

typedef struct rs_job {
    rs_scenario *sc;      /* the run, the caller's */
    const char *outdir;   /* rs_run_execute's outdir (NULL: none), the caller's */
    int quiet;            /* rs_run_execute's quiet */
    unsigned flags;       /* rs_run_opts.flags (RS_RUN_*) */
    char progress[768];   /* printed to stderr as the run starts ("": nothing) */
    int code;             /* out: its exit code (cli.h) */
    json_t *summary;      /* out: its summary, or NULL (the caller's: json_decref) */
} rs_job;

/* Runs jobs[0..n) with at most `parallel` at a time (<= 1: in this
 * process, in order). path names the scenario file in messages. A child
 * that dies by a signal, or a result that cannot be passed back, gives
 * that job RS_EXIT_RUN_FAILED and a line on stderr naming it; the other
 * jobs still run. Returns RS_EXIT_OK, or RS_EXIT_RUN_FAILED when no child
 * process or result file could be made (then nothing ran). */
int rs_jobs_run(rs_job *jobs, size_t n, unsigned parallel, const char *path);

/* MPI. Started by mpirun (OpenMPI's or a PMI launcher's environment) in
 * a build with MPI, railsim is one of several ranks: rs_jobs_run spreads
 * the jobs over them (rank r runs jobs r, r + ranks, ..., each rank up to
 * `parallel` at once), then every rank gets every result, so each goes on
 * through the same command; only rank 0 speaks (stdout, stderr) and
 * writes the command's own files (rs_jobs_root), while every rank writes
 * its jobs' run directories. Without a launcher, or in a build without
 * MPI, there is one rank and nothing changes.
 * rs_jobs_init: first thing in main (RS_EXIT_RUN_FAILED: MPI would not
 * start, said on stderr); rs_jobs_finish: before exit. */
int rs_jobs_init(int *argc, char ***argv);
void rs_jobs_finish(void);
int rs_jobs_root(void);       /* 1 on rank 0 and without MPI */
unsigned rs_jobs_ranks(void); /* 1 without MPI */

/* Under mpirun with more than one rank, MPI_COMM_WORLD as the network's
 * collectives for a partitioned run (net.h rs_net_comm); else NULL. */
const rs_net_comm *rs_jobs_comm(void);

/* "-j N" / "--jobs N": N from 1 to 256, else RS_EXIT_BAD_INPUT with one
 * line on stderr naming the command. */
int rs_jobs_parse(const char *cmd, const char *v, unsigned *out);

#endif
