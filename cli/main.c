/*
 * main.c - the railsim command: dispatches to the subcommands (cmd_*.c).
 * Exit codes: 0 success, 1 the run failed, 2 bad input. Only cli/ decides
 * exit codes; the layers below return errors with a message.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "help.h"
#include "jobs.h"

static int dispatch(int argc, char **argv);

int main(int argc, char **argv)
{
    int code = rs_jobs_init(&argc, &argv);
    if (code != RS_EXIT_OK)
        return code;
    /* Under mpirun, compare and faults sweep spread their runs over the
     * ranks (jobs.h); every other command runs once, on rank 0. */
    const char *cmd = argc > 1 ? argv[1] : "";
    /* run: every rank, to split the run over them (cmd_run.c). */
    int spread = !strcmp(cmd, "compare") || !strcmp(cmd, "faults") || !strcmp(cmd, "run");
    if (rs_jobs_ranks() > 1 && rs_jobs_root() && !strcmp(cmd, "validate"))
        fprintf(stderr, "railsim: %s: runs on MPI rank 0 alone; its runs are not split over ranks "
                        "(docs/parallel.md)\n", cmd);
    if (spread || rs_jobs_root())
        code = dispatch(argc, argv);
    rs_jobs_finish();
    return code;
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        rs_help_usage(stderr);
        return RS_EXIT_BAD_INPUT;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("railsim %s\n", RS_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        const char *what = argc > 2 ? argv[2] : NULL;
        if (what && (!strcmp(what, "--help") || !strcmp(what, "-h")))
            what = "help";
        if (!what) {
            rs_help_usage(stdout);
        } else if (!strcmp(what, "keys")) {
            rs_scenario_print_keys(stdout);
        } else if (!strcmp(what, "--man")) {
            rs_help_man(stdout);
        } else if (!strcmp(what, "--completion")) {
            if (rs_help_completion(stdout) != 0)
                return RS_EXIT_RUN_FAILED;
        } else if (rs_help_command(stdout, what) != 0) {
            return rs_cli_bad_input("help: no command '%s'; expected run, compare, faults, validate, cost, trace, "
                                    "report, plot, export, help, keys, --man or --completion", what);
        }
        return 0;
    }
    /* `railsim CMD ... --help` anywhere after the command: its help, before
     * the command reads any argument (trace info --help opens no file). */
    if (rs_help_wanted(argc - 2, argv + 2) && rs_help_command(stdout, cmd) == 0)
        return 0;
    if (!strcmp(cmd, "run"))
        return rs_cmd_run(argc - 2, argv + 2);
    if (!strcmp(cmd, "compare"))
        return rs_cmd_compare(argc - 2, argv + 2);
    if (!strcmp(cmd, "nccl-tests"))
        return rs_cmd_nccl_tests(argc - 2, argv + 2);
    if (!strcmp(cmd, "validate"))
        return rs_cmd_validate(argc - 2, argv + 2);
    if (!strcmp(cmd, "trace"))
        return rs_cmd_trace(argc - 2, argv + 2);
    if (!strcmp(cmd, "cost"))
        return rs_cmd_cost(argc - 2, argv + 2);
    if (!strcmp(cmd, "report"))
        return rs_cmd_report(argc - 2, argv + 2);
    if (!strcmp(cmd, "plot"))
        return rs_cmd_plot(argc - 2, argv + 2);
    if (!strcmp(cmd, "export"))
        return rs_cmd_export(argc - 2, argv + 2);
    if (!strcmp(cmd, "faults"))
        return rs_cmd_faults(argc - 2, argv + 2);
    fprintf(stderr, "railsim: unknown command '%s'; expected run, compare, validate, trace, cost, report, plot, export, faults, help or --version\n", cmd);
    return RS_EXIT_BAD_INPUT;
}
