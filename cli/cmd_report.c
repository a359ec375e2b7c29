/*
 * cmd_report.c - `railsim report DIR [--plots]` and `railsim plot DIR`.
 *
 * DIR is a run directory (railsim run -o) or a compare directory (railsim
 * compare -o, with compare.json). report prints analysis/report for a run
 * directory, and the comparison's tables (its compare.md) for a compare
 * directory; plot runs analysis/plots.py under /usr/bin/python3
 * (matplotlib and msgpack from Debian's python3-matplotlib and
 * python3-msgpack; the python3 first on PATH may be another interpreter
 * without them) to write the PNGs in DIR/plots/ (and, for a compare
 * directory, in each run's).
 *
 * RAILSIM_PYTHON and RAILSIM_PLOTS_PY override the interpreter and the
 * script. Without them the script is, the first that exists: the
 * installed one next to this binary (RS_PLOTS_PY_REL from the binary's
 * directory: ../share/railsim/plots.py), the source tree's (RS_PLOTS_PY),
 * the installed one at the configured prefix (RS_PLOTS_PY_INSTALLED).
 */
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "report.h"

#ifndef RS_PLOTS_PY
#define RS_PLOTS_PY "analysis/plots.py"
#endif
#ifndef RS_PLOTS_PY_REL
#define RS_PLOTS_PY_REL "../share/railsim/plots.py"
#endif
#ifndef RS_PLOTS_PY_INSTALLED
#define RS_PLOTS_PY_INSTALLED "/usr/local/share/railsim/plots.py"
#endif

extern char **environ;

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* A compare directory: compare.json and no summary.json of its own. */
static int is_compare_dir(const char *dir)
{
    char p[PATH_MAX];
    if (snprintf(p, sizeof p, "%s/summary.json", dir) >= (int)sizeof p || is_file(p))
        return 0;
    return snprintf(p, sizeof p, "%s/compare.json", dir) < (int)sizeof p && is_file(p);
}

/* The plotting script when RAILSIM_PLOTS_PY is not set: into buf (size
 * PATH_MAX), or the last candidate when none exists (the caller reports
 * it). */
static const char *find_plots_py(char *buf)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            if (snprintf(buf, PATH_MAX, "%s/%s", exe, RS_PLOTS_PY_REL) < PATH_MAX && is_file(buf))
                return buf;
        }
    }
    if (is_file(RS_PLOTS_PY))
        return RS_PLOTS_PY;
    return RS_PLOTS_PY_INSTALLED;
}

int rs_cli_plot(const char *dir, int quiet)
{
    const char *py = getenv("RAILSIM_PYTHON");
    const char *script = getenv("RAILSIM_PLOTS_PY");
    char found[PATH_MAX];
    if (!py || !*py)
        py = "/usr/bin/python3";
    if (!script || !*script)
        script = find_plots_py(found);
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
    /* What we printed so far goes out before the script's lines do. */
    fflush(stdout);
    fflush(stderr);
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

/* report on a compare directory: the tables railsim compare printed, as
 * it wrote them to compare.md. An exit code. */
static int print_compare(const char *dir)
{
    char p[PATH_MAX];
    if (snprintf(p, sizeof p, "%s/compare.md", dir) >= (int)sizeof p)
        return rs_cli_bad_input("report: %s: path too long", dir);
    FILE *f = fopen(p, "rb");
    if (!f) {
        fprintf(stderr, "railsim: report: %s: cannot open: %s; expected the tables railsim compare -o DIR writes "
                "next to compare.json\n", p, strerror(errno));
        return RS_EXIT_BAD_INPUT;
    }
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        if (fwrite(buf, 1, n, stdout) != n)
            break;
    int bad = ferror(f);
    fclose(f);
    if (bad)
        return rs_cli_bad_input("report: %s: read error", p);
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : RS_EXIT_RUN_FAILED;
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
    if (is_compare_dir(dir)) {
        int rc = print_compare(dir);
        return rc == 0 && plots ? rs_cli_plot(dir, 0) : rc;
    }
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
        return rs_cli_bad_input("%s", "plot: expected a run or compare directory (railsim plot DIR)");
    if (!is_dir(dir))
        return rs_cli_bad_input("plot: %s: not a directory; expected a run directory written by railsim run -o DIR",
                                dir);
    return rs_cli_plot(dir, 0);
}
