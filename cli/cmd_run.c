/*
 * cmd_run.c - `railsim run`: build the scenario's network, start its
 * traffic or replay its workload (workload.plan / workload.trace, which
 * replace traffic.*), run to idle, print a human summary and write
 * DIR/summary.json, DIR/timeline.msgpack (timeline.*) and captures: the
 * printer over rs_run_with (librailsim, run.h), which validates everything before
 * creating any output (execute.c runs it and prints).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jobs.h"

/* "KEY=VALUE" into buf (n bytes); 0 if it does not fit. */
static int as_set(char *buf, size_t n, const char *key, const char *value)
{
    return (size_t)snprintf(buf, n, "%s=%s", key, value) < n;
}

int rs_cmd_run(int argc, char **argv)
{
    const char *path = NULL, *outdir = NULL, *capture = NULL, *capfmt = NULL;
    int quiet = 0, force = 0, nsets = 0, nfaults = 0;
    char **sets = calloc(2 * (size_t)argc + 1, sizeof *sets);
    if (!sets)
        return RS_EXIT_RUN_FAILED;
    char **faults = sets + argc; /* --fault strings: the second half */
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--set") || !strcmp(a, "-s")) {
            if (i + 1 >= argc) {
                free(sets);
                return rs_cli_bad_input("%s: expected KEY=VALUE after it", a);
            }
            sets[nsets++] = argv[++i];
        } else if (!strncmp(a, "--set=", 6)) {
            sets[nsets++] = argv[i] + 6;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--out")) {
            if (i + 1 >= argc) {
                free(sets);
                return rs_cli_bad_input("%s: expected an output directory after it", a);
            }
            outdir = argv[++i];
        } else if (!strcmp(a, "--fault")) {
            if (i + 1 >= argc) {
                free(sets);
                return rs_cli_bad_input("%s: expected \"TIME KIND TARGET [DURATION]\" after it", a);
            }
            faults[nfaults++] = argv[++i];
        } else if (!strcmp(a, "--capture")) {
            if (i + 1 >= argc) {
                free(sets);
                return rs_cli_bad_input("%s: expected a port name pattern after it", a);
            }
            capture = argv[++i];
        } else if (!strcmp(a, "--capture-format")) {
            if (i + 1 >= argc) {
                free(sets);
                return rs_cli_bad_input("%s: expected pcap or pcapng after it", a);
            }
            capfmt = argv[++i];
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(a, "--force")) {
            force = 1;
        } else if (a[0] == '-' && a[1] != '\0') {
            free(sets);
            return rs_cli_bad_input("run: unknown option '%s'; expected --set KEY=VALUE, --fault SPEC, --capture PORTS, --capture-format FMT, -o DIR or -q", a);
        } else if (!path) {
            path = a;
        } else {
            free(sets);
            return rs_cli_bad_input("run: unexpected argument '%s'; expected at most one scenario file", a);
        }
    }

    /* --capture P and --capture-format F are --set capture.ports=P and
     * --set capture.format=F, applied last (a wrong format is named by
     * the scenario reader). */
    char capture_set[300], capfmt_set[64];
    if (capture && !as_set(capture_set, sizeof capture_set, "capture.ports", capture)) {
        free(sets);
        return rs_cli_bad_input("--capture: pattern too long ('%.40s...'); expected at most 255 characters", capture);
    }
    if (capfmt && !as_set(capfmt_set, sizeof capfmt_set, "capture.format", capfmt)) {
        free(sets);
        return rs_cli_bad_input("--capture-format: '%.20s...' is not a format; expected pcap or pcapng", capfmt);
    }
    if (capture)
        sets[nsets++] = capture_set;
    if (capfmt)
        sets[nsets++] = capfmt_set;
    rs_scenario *sc = NULL;
    rs_err err;
    rs_err_clear(&err);
    int rc = rs_scenario_create(&sc, &err);
    if (rc == RS_OK)
        rc = rs_scenario_load(sc, path, sets, nsets, &err);
    if (rc == RS_OK)
        rc = rs_scenario_add_faults(sc, faults, nfaults, &err);
    free(sets);
    if (rc != RS_OK) {
        if (rs_jobs_root()) /* under mpirun every rank read the same input: rank 0 says it */
            fprintf(stderr, "railsim: %s\n", err.msg);
        rs_scenario_destroy(sc);
        return rc == RS_ENOMEM ? RS_EXIT_RUN_FAILED : RS_EXIT_BAD_INPUT;
    }
    int code;
    if (rs_cli_key_is(sc, "fidelity", "both")) {
        code = rs_jobs_root() ? rs_validate_execute(sc, path, outdir, quiet, force) : RS_EXIT_OK;
    } else {
        /* Under mpirun every rank comes here: the run is split over them
         * when it can be, else rank 0 runs it alone (docs/parallel.md). */
        rs_cli_run how = { .path = path, .outdir = outdir, .quiet = quiet, .force = force, .part = rs_jobs_comm() };
        code = rs_run_execute(sc, &how, NULL);
    }
    rs_scenario_destroy(sc);
    return code;
}
