/*
 * cli.h - what the railsim subcommands share: the exit codes and the
 * one-sentence error printer. Each subcommand lives in its own cmd_*.c and
 * is dispatched by main.c.
 */
#ifndef RS_CLI_H
#define RS_CLI_H

#include <jansson.h>

#include "run.h"

enum { RS_EXIT_OK = 0, RS_EXIT_RUN_FAILED = 1, RS_EXIT_BAD_INPUT = 2 };

/* Print "railsim: " + fmt (with one %s argument a) to stderr; returns
 * RS_EXIT_BAD_INPUT. */
int rs_cli_bad_input(const char *fmt, const char *a);
/* A check of one setup on two topologies (names[k], rc[k], e[k]; a side
 * not checked has RS_OK): say its refusal once after `prefix` (e.g.
 * "faults sweep: "), without a side when both refuse it alike. An exit
 * code. */
int rs_cli_sides_said(const char *prefix, const char *const names[2], const int rc[2], const rs_err e[2]);

/* The scenario file at path (NULL: none) with sets applied over the
 * defaults (rs_scenario_load) into *out, the caller's: an exit code, the
 * error's sentence on stderr (*out NULL then). */
int rs_cli_load(const char *path, char *const *sets, int nsets, rs_scenario **out);

/* Scenario key `key`'s value (rs_scenario_get) as a JSON value, the
 * caller's (json_decref); NULL for a key scenarios do not have. */
json_t *rs_cli_key(const rs_scenario *sc, const char *key);
/* Every key of *sc (rs_scenario_dump) as a JSON object, the caller's
 * (json_decref); NULL out of memory. */
json_t *rs_cli_scenario_json(const rs_scenario *sc);
/* 1 when string key `key` of *sc is `value`, else 0. */
int rs_cli_key_is(const rs_scenario *sc, const char *key, const char *value);
/* Apply one "KEY=VALUE" the command itself chose (the topology of one
 * side of a comparison, the level of one side of a validation): RS_OK or
 * the exit code, err's sentence on stderr. */
int rs_cli_set(rs_scenario *sc, const char *set);

/* A summary's headline time in ps and what it is (rs_summary_headline):
 * -1 when the run has none. */
double rs_cli_headline_ps(const json_t *summary, const char **what);
/* What *sc runs, for labels: workload.plan, else workload.trace, else
 * "traffic"; into buf (n bytes, truncated), returned. */
const char *rs_cli_workload_name(const rs_scenario *sc, char *buf, size_t n);

/* How rs_run_execute runs a scenario and what it prints. */
typedef struct rs_cli_run {
    const char *path;   /* the scenario file, in messages (NULL: built-in defaults) */
    const char *outdir; /* summary.json and the rest go here (NULL: nothing is written) */
    int quiet;          /* 0 print the human summary, 1 not, 2 not and no "run stopped" line when the
                         * faults stop the run (the summary's faults_stop holds it) */
    int force;          /* skip the memory guard */
    unsigned flags;     /* rs_run_opts.flags (RS_RUN_*) */
    const rs_net_comm *part; /* split the run over these processes (`railsim run` under mpirun); NULL: serial */
} rs_cli_run;

/* rs_run_with, printed (execute.c): the progress line, SIGINT and SIGTERM
 * stopping the run, the human summary unless quiet, and what went wrong
 * on stderr. Returns an exit code. With summary non-NULL, *summary gets
 * the summary without its "ports" (rs_result_summary_brief; caller:
 * json_decref; NULL if none was built). */
int rs_run_execute(const rs_scenario *sc, const rs_cli_run *how, json_t **summary);

/* fidelity=both (and `railsim validate`): run *sc at packet level, then at
 * flow level (fidelity is overridden), print the flow level's relative
 * error against the packet level and the speed-up unless quiet; with
 * outdir, the runs go to outdir/packet/ and outdir/flow/ and the
 * comparison to outdir/validate.json. Returns an exit code. Faults apply
 * at both levels. cmd_validate.c. */
int rs_validate_execute(const rs_scenario *sc, const char *path, const char *outdir, int quiet, int force);

/* Subcommands: argv[0] is the first argument after the command name. */
int rs_cmd_run(int argc, char **argv);
int rs_cmd_compare(int argc, char **argv);
int rs_cmd_validate(int argc, char **argv); /* cmd_validate.c */
int rs_cmd_trace(int argc, char **argv);   /* cmd_trace.c */
int rs_cmd_cost(int argc, char **argv);    /* cmd_cost.c */
int rs_cmd_report(int argc, char **argv);  /* cmd_report.c */
int rs_cmd_plot(int argc, char **argv);    /* cmd_report.c */
int rs_cmd_export(int argc, char **argv);  /* cmd_export.c */
int rs_cmd_faults(int argc, char **argv);  /* cmd_faults.c: faults sweep */
int rs_cmd_nccl_tests(int argc, char **argv); /* cmd_nccl_tests.c */

/* Write the PNGs of DIR/plots/ with analysis/plots.py under /usr/bin/python3,
 * listing them on stdout unless quiet; returns an exit code (cmd_report.c). */
int rs_cli_plot(const char *dir, int quiet);

#endif
