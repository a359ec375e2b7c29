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

#include "scenario.h"

typedef struct rs_job {
    rs_scenario sc;       /* the run, the caller's copy */
    const char *outdir;   /* rs_run_execute's outdir (NULL: none), the caller's */
    int quiet;            /* rs_run_execute's quiet */
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

/* "-j N" / "--jobs N": N from 1 to 256, else RS_EXIT_BAD_INPUT with one
 * line on stderr naming the command. */
int rs_jobs_parse(const char *cmd, const char *v, unsigned *out);

#endif
