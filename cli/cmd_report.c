/*
 * cmd_report.c - `railsim report DIR [--plots]` and `railsim plot DIR`.
 *
 * report prints analysis/report for a run directory; plot runs
 * analysis/plots.py under /usr/bin/python3 (matplotlib and msgpack from
 * Debian's python3-matplotlib and python3-msgpack; the python3 first on
 * PATH may be another interpreter without them) to write the PNGs in DIR/plots/.
 * RAILSIM_PYTHON and RAILSIM_PLOTS_PY override the interpreter and the
 * script (the default script is the source tree's, RS_PLOTS_PY).
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cli.h"
#include "report.h"

#ifndef RS_PLOTS_PY
#define RS_PLOTS_PY "analysis/plots.py"
#endif

extern char **environ;

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int rs_cli_plot(const char *dir, int quiet)
{
    const char *py = getenv("RAILSIM_PYTHON");
    const char *script = getenv("RAILSIM_PLOTS_PY");
    if (!py || !*py)
        py = "/usr/bin/python3";
    if (!script || !*script)
        script = RS_PLOTS_PY;
    struct stat st;
    if (stat(script, &st) != 0) {
        fprintf(stderr, "railsim: plot: %s: cannot find the plotting script: %s; set RAILSIM_PLOTS_PY\n", script,
                strerror(errno));
        return RS_EXIT_RUN_FAILED;
    }
    char *const loud[] = { (char *)py, (char *)script, (char *)dir, NULL };
    char *const hushed[] = { (char *)py, (char *)script, "-q", (char *)dir, NULL };
    char *const *args = quiet ? hushed : loud;
    pid_t pid;
    int rc = posix_spawn(&pid, py, NULL, NULL, args, environ);
    if (rc != 0) {
        fprintf(stderr, "railsim: plot: cannot run %s: %s; expected Python 3 with python3-matplotlib and "
                "python3-msgpack (scripts/install-deps)\n", py, strerror(rc));
        return RS_EXIT_RUN_FAILED;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            fprintf(stderr, "railsim: plot: waiting for %s: %s\n", py, strerror(errno));
            return RS_EXIT_RUN_FAILED;
        }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    /* plots.py exits 2 for bad input and has said why on stderr. */
    if (WIFEXITED(status) && WEXITSTATUS(status) == RS_EXIT_BAD_INPUT)
        return RS_EXIT_BAD_INPUT;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 1)
        fprintf(stderr, "railsim: plot: %s %s failed (%s %d)\n", py, script,
                WIFEXITED(status) ? "exit status" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    return RS_EXIT_RUN_FAILED;
}

int rs_cmd_report(int argc, char **argv)
{
    const char *dir = NULL;
    int plots = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--plots"))
            plots = 1;
        else if (a[0] == '-' && a[1] != '\0')
            return rs_cli_bad_input("report: unknown option '%s'; expected DIR [--plots]", a);
        else if (!dir)
            dir = a;
        else
            return rs_cli_bad_input("report: unexpected argument '%s'; expected one run directory", a);
    }
    if (!dir)
        return rs_cli_bad_input("%s", "report: expected a run directory (railsim report DIR), "
                                      "as written by railsim run -o DIR");
    if (!is_dir(dir))
        return rs_cli_bad_input("report: %s: not a directory; expected a run directory written by railsim run -o DIR",
                                dir);
    rs_an_err err = { 0, "" };
    int rc = rs_report_print(dir, stdout, &err);
    if (rc != RS_AN_OK) {
        fprintf(stderr, "railsim: %s\n", err.msg);
        return rc == RS_AN_ENOMEM ? RS_EXIT_RUN_FAILED : RS_EXIT_BAD_INPUT;
    }
    if (fflush(stdout) != 0)
        return RS_EXIT_RUN_FAILED;
    return plots ? rs_cli_plot(dir, 0) : 0;
}

int rs_cmd_plot(int argc, char **argv)
{
    const char *dir = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && a[1] != '\0')
            return rs_cli_bad_input("plot: unknown option '%s'; expected a run directory", a);
        else if (!dir)
            dir = a;
        else
            return rs_cli_bad_input("plot: unexpected argument '%s'; expected one run directory", a);
    }
    if (!dir)
        return rs_cli_bad_input("%s", "plot: expected a run directory (railsim plot DIR)");
    if (!is_dir(dir))
        return rs_cli_bad_input("plot: %s: not a directory; expected a run directory written by railsim run -o DIR",
                                dir);
    return rs_cli_plot(dir, 0);
}
