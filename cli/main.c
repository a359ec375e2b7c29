/*
 * main.c - the railsim command: dispatches to the subcommands (cmd_*.c).
 * Exit codes: 0 success, 1 the run failed, 2 bad input. Only cli/ decides
 * exit codes; the layers below return errors with a message.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "scenario.h"

static void usage(FILE *f)
{
    fputs("usage: railsim COMMAND [ARGS]\n"
          "\n"
          "commands:\n"
          "  run [SCENARIO.json] [--set KEY=VALUE]... [--fault SPEC]... [--capture PORTS] [-o DIR] [-q] [--force]\n"
          "        simulate a scenario; print a summary; with -o write DIR/summary.json\n"
          "        (and DIR/pcap/PORT.pcap for the captured ports)\n"
          "  compare [SCENARIO.json] [--set KEY=VALUE]... [--fault SPEC]... [--sweep KEY=V1,V2,...]... [-o DIR] [-q]\n"
          "        the same workload on rail-only and on the fat tree, side by side with\n"
          "        the cost of each; with no scenario, a built-in dense and MoE job\n"
          "  faults sweep [SCENARIO.json] --class CLASS [--kind KIND] [--count N1,N2,...] [--trials N]\n"
          "       [--at TIME] [--duration D] [--topology rail-only|fat-tree|both] [--set KEY=VALUE]... [-o DIR] [-q]\n"
          "        seeded fault trials on both topologies: iteration slowdown (median, p95,\n"
          "        worst) per number of faults; with -o DIR/sweep.json and DIR/sweep.md\n"
          "  validate [SCENARIO.json] [--set KEY=VALUE]... [-o DIR] [-q]\n"
          "        run at packet and at flow level; relative error of flow level, speed-up;\n"
          "        with -o DIR/packet/, DIR/flow/ and DIR/validate.json\n"
          "  cost [--gpus N --hb K --radix R] [--nic-gbps G] [--oversubscription O]\n"
          "       [--parts PARTS.json] [--json]\n"
          "        bill of materials, cost and power of rail-only vs the fat tree\n"
          "  report DIR [--plots]\n"
          "        summarize a run directory (summary.json, timeline.msgpack)\n"
          "  plot DIR      write DIR/plots/*.png (needs python3-matplotlib)\n"
          "  export perfetto TIMELINE [-o trace.json] [--links N]\n"
          "  export csv TIMELINE [-o DIR]\n"
          "        Chrome/Perfetto trace JSON, or one CSV per record kind\n"
          "  trace gen PLAN.json|PRESET [--gpus N] -o FILE | trace info FILE | trace dump FILE [--rank R]\n"
          "        training plan -> compressed collective trace; describe or print a trace\n"
          "  help [keys]   this text, or every scenario key with its default\n"
          "  --version     print the version\n"
          "\n"
          "See docs/cli.md and docs/scenario-format.md.\n", f);
}

int rs_cli_bad_input(const char *fmt, const char *a)
{
    fprintf(stderr, "railsim: ");
    fprintf(stderr, fmt, a);
    fputc('\n', stderr);
    return RS_EXIT_BAD_INPUT;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return RS_EXIT_BAD_INPUT;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("railsim %s\n", RS_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        if (argc > 2 && !strcmp(argv[2], "keys"))
            rs_scenario_print_keys(stdout);
        else
            usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "run"))
        return rs_cmd_run(argc - 2, argv + 2);
    if (!strcmp(cmd, "compare"))
        return rs_cmd_compare(argc - 2, argv + 2);
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
