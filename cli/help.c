/*
 * help.c - every subcommand's help text, once: `railsim CMD --help`,
 * `railsim help CMD`, the general usage, the man page (`railsim help
 * --man`) and the bash completion script (`railsim help --completion`)
 * are all printed from the table below, so they cannot drift apart.
 * docs/cli.md is the long form.
 */
#include "help.h"

#include <string.h>

#include "cli.h"

typedef struct cmd_help {
    const char *name;     /* "run", "trace", ... */
    const char *synopsis; /* one or more lines, each a full command line */
    const char *summary;  /* one line */
    const char *options;  /* "  OPTION\tMEANING\n" lines */
    const char *example;  /* one or more command lines */
} cmd_help;

static const cmd_help cmds[] = {
    { "run",
      "railsim run [SCENARIO.json] [--set KEY=VALUE]... [--fault SPEC]... [--capture PORTS] [--capture-format pcap|pcapng] [-o DIR] [-q] [--force]",
      "simulate a scenario and print a summary; with -o, DIR/summary.json and DIR/timeline.msgpack",
      "  SCENARIO.json\ta scenario file (docs/scenario-format.md); without one every key has its default\n"
      "  --set KEY=VALUE, -s\tset one scenario key (repeatable, the last wins); `railsim help keys` lists them\n"
      "  --fault SPEC\ta fault \"TIME KIND TARGET [DURATION]\" added to faults.schedule (repeatable)\n"
      "  --capture PORTS\tcapture.ports: port-name globs whose frames go to DIR/pcap/PORT.pcap\n"
      "  --capture-format FMT\tcapture.format: pcap (default: PORT.pcap, what each port sends) or pcapng "
      "(DIR/pcap/capture.pcapng: an interface per port, both directions)\n"
      "  -o DIR, --out DIR\twrite DIR/summary.json, DIR/timeline.msgpack and any captures\n"
      "  -q, --quiet\tno summary on stdout\n"
      "  --force\trun even when the resource guard expects the run not to fit in memory or on disk\n"
      "  (mpirun -np N)\tat packet level, synthetic traffic and one iteration of a ring, tree, direct "
      "all-to-all or send/recv collective (without faults but link degrades), and a replay under "
      "workload.sync=rank (the default) whose collectives are rings, trees, hierarchical, NVLS or direct "
      "all-to-alls (PXN relays included; without faults but stragglers and link degrades), are split over "
      "the ranks; a shared cluster's jobs run alone (their slowdowns' baselines) on the ranks while rank 0 "
      "runs the cluster; the summary, timeline and captures are the serial run's (docs/parallel.md)\n",
      "railsim run --set topology.gpus=128 --set traffic.kind=collective --set traffic.op=allreduce -o out/ar\n"
      "railsim run --set workload.plan=llama2-7b --set topology.gpus=64 --set fidelity=flow -o out/llama\n"
      "mpirun -np 2 railsim run bench/scenarios/fat-tree-1024-permutation.json -o out/p\n" },
    { "compare",
      "railsim compare [SCENARIO.json] [--set KEY=VALUE]... [--fault SPEC]... [--sweep KEY=V1,V2,...]... "
      "[--against rail-only|dragonfly] [-j N] [-o DIR] [-q]",
      "the same workload on rail-only and on the fat tree, side by side, with the network bound, the settings "
      "that decide the verdict and the cost of each",
      "  SCENARIO.json\tthe scenario; with no scenario and no --set, a built-in dense and MoE job on 128 GPUs\n"
      "  --set KEY=VALUE, -s\tset one scenario key on both sides (repeatable)\n"
      "  --fault SPEC\ta fault entry applied to both topologies (a class one lacks is reported absent there)\n"
      "  --sweep KEY=V1,V2,...\trepeat for each value; several sweeps run their cartesian product (at most 64 cases)\n"
      "  --against KIND\twhat runs against the fat tree: rail-only (default) or dragonfly\n"
      "  -j N\tup to N runs at once, each in its own process (default 1; outputs as with 1)\n"
      "  -o DIR\tboth run directories, DIR/compare.json and DIR/compare.md\n"
      "  -q\tno table on stdout\n",
      "railsim compare -o out/compare\n"
      "railsim compare --set workload.plan=demo-moe --sweep topology.hb_size=4,8 --sweep topology.nic_gbps=200,400\n"
      "railsim compare --against dragonfly --set workload.plan=llama2-7b --set topology.gpus=512 --set fidelity=flow\n" },
    { "faults",
      "railsim faults sweep [SCENARIO.json] --class CLASS [--kind KIND] [--count N1,N2,...] [--trials N] [--at TIME] "
      "[--duration D] [--topology rail-only|fat-tree|both] [--set KEY=VALUE]... [-j N] [-o DIR] [-q]",
      "seeded fault trials on both topologies: iteration slowdown against the fault-free run per number of faults",
      "  --class CLASS\trequired: any-network-link, any-spine-link, any-rail-uplink, any-spine, any-rail-switch, "
      "any-nic or any-gpu\n"
      "  --kind KIND\tthe fault kind (default link-down; switch-down, nic-down, link-degrade=GBPS, straggler=FACTOR, ...)\n"
      "  --count N1,N2,...\tfaults per trial (default 0,1,2,4)\n"
      "  --trials N\ttrials per count (default 5)\n"
      "  --at TIME\tevery fault at TIME instead of drawn times\n"
      "  --duration D\teach fault is repaired D later\n"
      "  --topology T\trail-only, fat-tree or both (default)\n"
      "  --set KEY=VALUE, -s\tset one scenario key\n"
      "  -j N\tup to N trials at once, each in its own process (default 1; outputs as with 1)\n"
      "  -o DIR\tDIR/sweep.json and DIR/sweep.md\n"
      "  -q\tno table, no progress lines\n",
      "railsim faults sweep --set topology.gpus=32 --set topology.hb_size=4 --set topology.radix=16 "
      "--set traffic.kind=collective --class any-network-link --count 0,1,2 --trials 5\n" },
    { "nccl-tests",
      "railsim nccl-tests OP [SCENARIO.json] [-b MIN] [-e MAX] [-f FACTOR | -i STEP] [-n ITERS] [-w WARMUP] "
      "[--gpus N] [--set KEY=VALUE]... [-o DIR] [--json] [-q]",
      "nccl-tests on the simulated cluster: OP (all_reduce, all_gather, reduce_scatter, alltoall, broadcast, reduce, "
      "sendrecv) over every GPU at each size, printed as nccl-tests prints it (size, count, time, algbw, busbw, avg bus bandwidth)",
      "  OP	nccl-tests' binary without _perf: all_reduce, all_gather, reduce_scatter, alltoall, broadcast, reduce "
      "(root 0) or sendrecv (2 GPUs)\n"
      "  -b SIZE, -e SIZE	the smallest and largest size, bytes with K, M or G (default 32M each, as nccl-tests)\n"
      "  -f FACTOR	multiply the size by FACTOR from one row to the next (default 1: add -i)\n"
      "  -i STEP	add STEP bytes from one row to the next when -f is 1 (default 1M)\n"
      "  -n ITERS, -w WARMUP	timed and warm-up iterations per size, back to back (default 20 and 1, as nccl-tests)\n"
      "  --gpus N, -g N	topology.gpus: the collective spans every GPU\n"
      "  --set KEY=VALUE, -s	set one scenario key (fidelity=flow runs large sizes fast)\n"
      "  -o DIR	DIR/nccl-tests.json and DIR/nccl-tests.txt\n"
      "  --json	the results as one JSON document on stdout instead of the table\n"
      "  -q	nothing on stdout\n",
      "railsim nccl-tests all_reduce -b 8 -e 1G -f 4 --gpus 16 --set fidelity=flow\n"
      "railsim nccl-tests all_gather -b 1M -e 64M -f 2 --gpus 8 -n 2 -w 0\n" },
    { "validate",
      "railsim validate [SCENARIO.json] [--set KEY=VALUE]... [-o DIR] [-q]",
      "run the scenario at packet and at flow level; the flow level's relative error and speed-up",
      "  SCENARIO.json, --set KEY=VALUE\tthe scenario, as for run\n"
      "  -o DIR\tDIR/packet/, DIR/flow/ and DIR/validate.json\n"
      "  -q\tno table on stdout\n",
      "railsim validate bench/scenarios/alltoall-128-fat-tree.json -o out/val\n" },
    { "cost",
      "railsim cost [--gpus N] [--hb K] [--radix R] [--nic-gbps G] [--oversubscription O] [--parts PARTS.json] "
      "[--nic-copper] [--no-rail-packing] [--gpus-per-nic S] [--dragonfly] [--df-hosts P] [--df-group A] [--json]",
      "bill of materials, cost and power of the rail-only network and of the fat tree (docs/cost.md)",
      "  --gpus N\tGPUs (default 64), a multiple of --hb\n"
      "  --hb K\tGPUs per HB domain, = rails (default 8)\n"
      "  --radix R\tports per switch, even (default 64)\n"
      "  --nic-gbps G\tthe link speed the prices refer to (default 400)\n"
      "  --oversubscription O\tleaf down:up ratio (default 1)\n"
      "  --parts PARTS.json\toverride prices and power per part\n"
      "  --nic-copper\tNIC cables are copper DACs\n"
      "  --no-rail-packing\tone switch per rail even when rails fit one switch\n"
      "  --gpus-per-nic S\tGPUs sharing one NIC: the fabric of gpus / S NICs\n"
      "  --dragonfly\talso a dragonfly of the same NICs and radix\n"
      "  --df-hosts P\tdragonfly NIC ports per switch (implies --dragonfly)\n"
      "  --df-group A\tdragonfly switches per group (implies --dragonfly)\n"
      "  --json\tthe bill as JSON\n",
      "railsim cost --gpus 32768 --hb 256 --radix 32\n" },
    { "trace",
      "railsim trace gen PLAN.json|PRESET [--gpus N] -o FILE\n"
      "railsim trace info FILE\n"
      "railsim trace dump FILE [--rank R]\n"
      "railsim trace import chakra DIR|NAME.RANK.et... -o FILE [--gpu PRESET] [--efficiency E] [--comm-groups FILE] [-q]\n"
      "railsim trace export chakra TRACE|PLAN|PRESET -o DIR [--name NAME] [--gpus N]",
      "training plan -> compressed collective trace; describe or print a trace; Chakra ET in and out",
      "  gen PLAN|PRESET\ta plan file or preset (llama2-7b, llama2-70b, gpt3-175b, gpt-13b, gpt-1t, mixtral-8x7b, demo-dense, "
      "demo-moe)\n"
      "  --gpus N\tkeep TP, PP, CP and EP; DP fills N GPUs\n"
      "  -o FILE\tthe trace to write\n"
      "  info FILE\tranks, classes, ops, bytes per kind and dimension, compression\n"
      "  dump FILE [--rank R]\tthe programs as text (one rank's with --rank)\n"
      "  import chakra DIR|FILE...\tChakra execution traces, one NAME.RANK.et per rank, to a trace (docs/chakra.md)\n"
      "  --gpu PRESET\timport: the GPU that times nodes given as FLOPs and bytes (default h100)\n"
      "  --efficiency E\timport: the fraction of peak FLOP/s those nodes reach (default 0.5)\n"
      "  --comm-groups FILE\timport: process groups by pg_name, as ASTRA-sim's JSON {\"1\": [0, 1], ...}\n"
      "  export chakra TRACE|PLAN\ta trace, plan file or preset as Chakra ET files, one per rank, in -o DIR\n"
      "  --name NAME\texport: the files' prefix, NAME.RANK.et (default: the input's base name)\n",
      "mkdir -p out && railsim trace gen gpt-1t --gpus 16384 -o out/gpt1t.rst && railsim trace info out/gpt1t.rst\n"
      "railsim trace import chakra et/ -o out/job.rst && railsim trace info out/job.rst\n"
      "railsim trace export chakra llama2-7b -o out/et-llama\n" },
    { "report",
      "railsim report DIR [--plots]",
      "summarize a run directory: summary.json and, when present, timeline.msgpack; or print a compare "
      "directory's tables",
      "  DIR\ta run directory (railsim run -o DIR) or a compare directory (railsim compare -o DIR)\n"
      "  --plots\talso write DIR/plots/*.png\n",
      "railsim report out/ar --plots\n" },
    { "plot",
      "railsim plot DIR",
      "write DIR/plots/*.png (iteration breakdown, link utilisation, FCT and collective CDFs; for a compare "
      "directory, compare.png with both topologies side by side, then each run's)",
      "  DIR\ta run or compare directory; needs /usr/bin/python3 with python3-matplotlib\n",
      "railsim plot out/ar\n" },
    { "export",
      "railsim export perfetto TIMELINE [-o FILE] [--links N]\n"
      "railsim export csv TIMELINE [-o DIR]",
      "a timeline as Chrome/Perfetto trace JSON, or one CSV per record kind (docs/analysis.md)",
      "  perfetto TIMELINE\ttrace.json next to the timeline, or -o FILE\n"
      "  --links N\tcounters for the N busiest links (default 8)\n"
      "  csv TIMELINE\tone CSV per record kind in csv/ next to the timeline, or -o DIR\n"
      "  -q\tno listing of the files written\n",
      "railsim export perfetto out/ar/timeline.msgpack -o ar.json\n" },
    { "help",
      "railsim help [CMD | keys | --man | --completion]",
      "this text, one command's help, every scenario key, the man page or the bash completion script",
      "  CMD\tone command's help, as `railsim CMD --help`\n"
      "  keys\tevery scenario key with its type, default, allowed values and meaning\n"
      "  --man\tthe railsim(1) man page (roff)\n"
      "  --completion\ta bash completion script for the commands and scenario keys\n",
      "railsim help run\nrailsim help --man > railsim.1\n" },
};
#define NCMDS (sizeof cmds / sizeof cmds[0])

static const cmd_help *find(const char *name)
{
    for (size_t i = 0; i < NCMDS; i++)
        if (!strcmp(cmds[i].name, name))
            return &cmds[i];
    return NULL;
}

/* One option line "  OPT\tMEANING" as "  OPT    MEANING" in a column. */
static void print_options(FILE *f, const char *opts)
{
    for (const char *p = opts; *p;) {
        const char *nl = strchr(p, '\n'), *tab = strchr(p, '\t');
        if (!nl)
            nl = p + strlen(p);
        if (tab && tab < nl) {
            int w = (int)(tab - p);
            fprintf(f, "%.*s%*s%.*s\n", w, p, w < 26 ? 26 - w : 1, "", (int)(nl - tab - 1), tab + 1);
        } else {
            fprintf(f, "%.*s\n", (int)(nl - p), p);
        }
        p = *nl ? nl + 1 : nl;
    }
}

static void print_indented(FILE *f, const char *text, const char *indent)
{
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        if (!nl)
            nl = p + strlen(p);
        fprintf(f, "%s%.*s\n", indent, (int)(nl - p), p);
        p = *nl ? nl + 1 : nl;
    }
}

void rs_help_usage(FILE *f)
{
    fputs("usage: railsim COMMAND [ARGS]   (railsim COMMAND --help for one command)\n\ncommands:\n", f);
    for (size_t i = 0; i < NCMDS; i++) {
        print_indented(f, cmds[i].synopsis, "  ");
        fprintf(f, "        %s\n", cmds[i].summary);
    }
    fputs("  --version     print the version\n\nSee docs/cli.md and docs/scenario-format.md.\n", f);
}

int rs_help_command(FILE *f, const char *name)
{
    const cmd_help *c = find(name);
    if (!c)
        return -1;
    fputs("usage: ", f);
    for (const char *p = c->synopsis; *p;) {
        const char *nl = strchr(p, '\n');
        if (!nl)
            nl = p + strlen(p);
        fprintf(f, "%s%.*s\n", p == c->synopsis ? "" : "       ", (int)(nl - p), p);
        p = *nl ? nl + 1 : nl;
    }
    fprintf(f, "\n%s.\n\noptions:\n", c->summary);
    print_options(f, c->options);
    fputs("\nexample:\n", f);
    print_indented(f, c->example, "  ");
    fputs("\nSee docs/cli.md.\n", f);
    return 0;
}

/* roff text: backslashes and leading dots or quotes escaped. */
static void roff(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\')
            fputs("\\e", f);
        else if (s[i] == '-')
            fputs("\\-", f);
        else if ((s[i] == '.' || s[i] == '\'') && (i == 0 || s[i - 1] == '\n'))
            fprintf(f, "\\&%c", s[i]);
        else
            fputc(s[i], f);
    }
}

void rs_help_man(FILE *f)
{
    fprintf(f, ".TH RAILSIM 1 \"\" \"railsim %s\" \"User Commands\"\n", RS_VERSION);
    fputs(".SH NAME\nrailsim \\- network simulator for the networks that train large language models\n"
          ".SH SYNOPSIS\n.B railsim\n.I COMMAND\n[\\fIARGS\\fR]\n"
          ".SH DESCRIPTION\nrailsim replays collective traffic of training jobs packet by packet or flow by flow "
          "over a rail-only network and a rail-optimized fat tree, and compares iteration time, exposed "
          "communication, cost and behaviour under faults. The files it reads and writes are described in "
          "docs/ of its source tree.\n.SH COMMANDS\n", f);
    for (size_t i = 0; i < NCMDS; i++) {
        const cmd_help *c = &cmds[i];
        fputs(".SS ", f);
        roff(f, c->name, strlen(c->name));
        fputs("\n", f);
        for (const char *p = c->synopsis; *p;) {
            const char *nl = strchr(p, '\n');
            if (!nl)
                nl = p + strlen(p);
            fputs(".B ", f);
            roff(f, p, (size_t)(nl - p));
            fputs("\n.br\n", f);
            p = *nl ? nl + 1 : nl;
        }
        roff(f, c->summary, strlen(c->summary));
        fputs(".\n", f);
        for (const char *p = c->options; *p;) {
            const char *nl = strchr(p, '\n'), *tab = strchr(p, '\t');
            if (!nl)
                nl = p + strlen(p);
            const char *o = p;
            while (*o == ' ')
                o++;
            fputs(".TP\n.B ", f);
            if (tab && tab < nl) {
                roff(f, o, (size_t)(tab - o));
                fputs("\n", f);
                roff(f, tab + 1, (size_t)(nl - tab - 1));
            } else {
                roff(f, o, (size_t)(nl - o));
            }
            fputs("\n", f);
            p = *nl ? nl + 1 : nl;
        }
        fputs(".PP\nExample:\n.nf\n", f);
        roff(f, c->example, strlen(c->example));
        fputs(".fi\n", f);
    }
    fputs(".SH EXIT STATUS\n0 success, 1 the run failed, 2 bad input (one sentence on stderr naming the file and "
          "key).\n.SH SEE ALSO\nrailsim help keys (every scenario key); docs/cli.md, docs/scenario-format.md.\n", f);
}

/* The dotted scenario keys under object o (prefix "" at the top). */
static void print_keys(FILE *f, const json_t *o, const char *prefix)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        char dotted[256];
        snprintf(dotted, sizeof dotted, "%s%s%s", prefix, *prefix ? "." : "", k);
        if (json_is_object(v))
            print_keys(f, v, dotted);
        else
            fprintf(f, " %s=", dotted);
    }
}

int rs_help_completion(FILE *f)
{
    rs_scenario *sc = NULL;
    rs_err err;
    json_t *j = rs_scenario_create(&sc, &err) == RS_OK ? rs_cli_scenario_json(sc) : NULL;
    rs_scenario_destroy(sc);
    if (!j)
        return -1;
    fputs("# bash completion for railsim (railsim help --completion > /etc/bash_completion.d/railsim)\n"
          "_railsim() {\n"
          "    local cur prev cmds keys\n"
          "    cur=${COMP_WORDS[COMP_CWORD]}\n"
          "    prev=${COMP_WORDS[COMP_CWORD-1]}\n"
          "    cmds=\"", f);
    for (size_t i = 0; i < NCMDS; i++)
        fprintf(f, "%s%s", i ? " " : "", cmds[i].name);
    fputs("\"\n    keys=\"", f);
    print_keys(f, j, "");
    json_decref(j);
    fputs("\"\n"
          "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
          "        COMPREPLY=($(compgen -W \"$cmds --version\" -- \"$cur\"))\n"
          "    elif [ \"$prev\" = --set ] || [ \"$prev\" = -s ] || [ \"$prev\" = --sweep ]; then\n"
          "        compopt -o nospace 2>/dev/null\n"
          "        COMPREPLY=($(compgen -W \"$keys\" -- \"$cur\"))\n"
          "    else\n"
          "        case ${COMP_WORDS[1]} in\n"
          "            trace) [ \"$COMP_CWORD\" -eq 2 ] && COMPREPLY=($(compgen -W \"gen info dump import export\" -- \"$cur\")) "
          "|| COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
          "            export) [ \"$COMP_CWORD\" -eq 2 ] && COMPREPLY=($(compgen -W \"perfetto csv\" -- \"$cur\")) "
          "|| COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
          "            faults) [ \"$COMP_CWORD\" -eq 2 ] && COMPREPLY=($(compgen -W \"sweep\" -- \"$cur\")) "
          "|| COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
          "            help) COMPREPLY=($(compgen -W \"$cmds keys --man --completion\" -- \"$cur\")) ;;\n"
          "            *) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
          "        esac\n"
          "    fi\n"
          "}\n"
          "complete -F _railsim railsim\n", f);
    return 0;
}

int rs_help_wanted(int argc, char **argv)
{
    /* Options whose next argument is their value ("--set x=--help" asks
     * for no help). */
    static const char *const takes_value[] = {
        "--set", "-s", "--fault", "--sweep", "-o", "--out", "--capture", "--capture-format", "--class", "--kind", "--count",
        "--trials", "--at", "--duration", "--topology", "-j", "--gpus", "--hb", "--radix", "--nic-gbps",
        "--oversubscription", "--parts", "--rank", "--links", NULL,
    };
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return 1;
        for (const char *const *t = takes_value; *t; t++)
            if (!strcmp(argv[i], *t)) {
                i++;
                break;
            }
    }
    return 0;
}
