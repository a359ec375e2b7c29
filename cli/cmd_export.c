/*
 * cmd_export.c - `railsim export perfetto|csv TIMELINE [-o OUT]`: turn a
 * timeline into Chrome trace-event JSON or CSV files (analysis/export.h).
 *
 * Without -o the output goes next to the timeline: trace.json or csv/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>

#include "cli.h"
#include "export.h"

/* dirname(path) + "/" + name into buf. */
static const char *beside(const char *path, const char *name, char *buf, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(buf, size, "%s", name);
    else
        snprintf(buf, size, "%.*s/%s", (int)(slash - path), path, name);
    return buf;
}

int rs_cmd_export(int argc, char **argv)
{
    if (argc < 1)
        return rs_cli_bad_input("%s", "export: expected a format (perfetto or csv) and a timeline file");
    const char *fmt = argv[0];
    int perfetto = !strcmp(fmt, "perfetto") || !strcmp(fmt, "chrome");
    if (!perfetto && strcmp(fmt, "csv"))
        return rs_cli_bad_input("export: unknown format '%s'; expected perfetto or csv", fmt);
    const char *in = NULL, *out = NULL;
    rs_perfetto_opts po;
    rs_perfetto_opts_default(&po);
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-o") || !strcmp(a, "--out")) {
            if (i + 1 >= argc)
                return rs_cli_bad_input("export: %s: expected an output path after it", a);
            out = argv[++i];
        } else if (!strcmp(a, "--links") && perfetto) {
            char *end;
            const char *v = i + 1 < argc ? argv[++i] : "";
            unsigned long n = strtoul(v, &end, 10);
            if (!*v || *end || *v == '-' || n > 100000)
                return rs_cli_bad_input("export: --links: expected a number of links from 0 to 100000, got '%s'", v);
            po.links = (uint32_t)n;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (a[0] == '-' && a[1] != '\0') {
            return rs_cli_bad_input(perfetto ? "export perfetto: unknown option '%s'; expected -o FILE, --links N or -q"
                                             : "export csv: unknown option '%s'; expected -o DIR or -q", a);
        } else if (!in) {
            in = a;
        } else {
            return rs_cli_bad_input("export: unexpected argument '%s'; expected one timeline file", a);
        }
    }
    if (!in)
        return rs_cli_bad_input("export %s: expected a timeline file (e.g. DIR/timeline.msgpack)", fmt);
    char def[4096];
    if (!out)
        out = beside(in, perfetto ? "trace.json" : "csv", def, sizeof def);
    rs_an_err err = { 0, "" };
    rs_export_counts cnt;
    int rc = perfetto ? rs_export_perfetto(in, out, &po, &cnt, &err) : rs_export_csv(in, out, &cnt, &err);
    if (rc != RS_AN_OK) {
        fprintf(stderr, "railsim: %s\n", err.msg);
        return rc == RS_AN_ENOMEM ? RS_EXIT_RUN_FAILED : RS_EXIT_BAD_INPUT; /* unwritable output: 2, as for run */
    }
    if (!quiet && perfetto)
        printf("railsim export: %s: %" PRIu64 " op spans, %" PRIu64 " collective spans, %" PRIu64
               " counter events, %" PRIu64 " instant events; open it in ui.perfetto.dev or chrome://tracing\n",
               out, cnt.ops, cnt.colls, cnt.counters, cnt.instants);
    else if (!quiet)
        printf("railsim export: %s/: %" PRIu64 " ops, %" PRIu64 " colls, %" PRIu64 " flows, %" PRIu64
               " samples, %" PRIu64 " pfc, %" PRIu64 " ecn, %" PRIu64 " drops, %" PRIu64 " faults, %" PRIu64
               " names\n", out, cnt.rows[2], cnt.rows[3], cnt.rows[4], cnt.rows[5], cnt.rows[6], cnt.rows[7],
               cnt.rows[8], cnt.rows[9], cnt.rows[1]);
    return 0;
}
