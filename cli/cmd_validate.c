/*
 * cmd_validate.c - `railsim validate`: run one scenario at packet level
 * and at flow level (same scenario, same seed; only `fidelity` differs)
 * and tabulate the flow level's relative error against the packet level,
 * with the speed-up (docs/fidelity.md).
 *
 * Compared: the headline time (iteration.time_ps, else collective.time_ps,
 * else sim_end_ps), named after the collective kind for traffic.kind=
 * collective; the message completion times flows.fct_ps p50, p99 and max
 * when both levels sent the same number of messages (flows.count);
 * for replays the exposed communication and its split by parallelism
 * dimension (iteration.comm_by_dim_ps), which is where a training step's
 * collective kinds show up (tp, pp, dp, cp, ep). Every figure is read from
 * the two runs' summaries; nothing is recomputed here. With -o DIR the runs
 * go to DIR/packet/ and DIR/flow/ and the comparison to DIR/validate.json,
 * whose "packet" and "flow" values are copies of the summaries' values.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fmt.h"
#include "output.h"

#define MAX_METRICS 16

typedef struct metric {
    char key[64];   /* dotted path in summary.json */
    char label[64]; /* what the table calls it */
} metric;

static const json_t *lookup(const json_t *o, const char *path)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    const json_t *v = o;
    for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && v; k = strtok_r(NULL, ".", &save))
        v = json_object_get(v, k);
    return v;
}

static double num(const json_t *o, const char *path)
{
    const json_t *v = lookup(o, path);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Flow against packet, in percent; NaN when either is missing or the
 * packet figure is 0. */
static double err_pct(double packet, double flow)
{
    return packet != 0 && !isnan(packet) && !isnan(flow) ? (flow - packet) / packet * 100.0 : NAN;
}

static void add(metric *m, int *n, const char *key, const char *label)
{
    if (*n >= MAX_METRICS)
        return;
    snprintf(m[*n].key, sizeof m[*n].key, "%s", key);
    snprintf(m[*n].label, sizeof m[*n].label, "%s", label);
    (*n)++;
}

/* The metrics both summaries are compared on; the headline first. */
static int pick_metrics(const json_t *pk, const json_t *fl, metric *m)
{
    int n = 0;
    if (json_is_number(lookup(pk, "iteration.time_ps"))) {
        add(m, &n, "iteration.time_ps", "iteration time");
    } else if (json_is_number(lookup(pk, "collective.time_ps"))) {
        char label[64];
        const char *op = json_string_value(lookup(pk, "collective.op"));
        const char *algo = json_string_value(lookup(pk, "collective.algo"));
        snprintf(label, sizeof label, "%.24s (%.24s) time", op ? op : "collective", algo ? algo : "?");
        add(m, &n, "collective.time_ps", label);
    } else {
        add(m, &n, "sim_end_ps", "completion time");
    }
    /* Message times only when both levels sent the same messages: at flow
     * level a long ring sends one stream per rank and channel instead of
     * its pieces (docs/fidelity.md), and those times are not comparable. */
    if (num(pk, "flows.count") == num(fl, "flows.count")) {
        add(m, &n, "flows.fct_ps.p50", "message time p50");
        add(m, &n, "flows.fct_ps.p99", "message time p99");
        add(m, &n, "flows.fct_ps.max", "message time max");
    }
    if (json_object_get(pk, "iteration")) {
        add(m, &n, "iteration.exposed_comm_ps.mean", "exposed communication");
        static const char *const dims[] = { "tp", "pp", "dp", "cp", "ep", "other" };
        for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
            char key[64], label[64];
            snprintf(key, sizeof key, "iteration.comm_by_dim_ps.%s", dims[i]);
            double a = num(pk, key), b = num(fl, key);
            if ((isnan(a) || a == 0) && (isnan(b) || b == 0))
                continue;
            snprintf(label, sizeof label, "  communication %s", dims[i]);
            add(m, &n, key, label);
        }
    }
    return n;
}

/* ps in the unit that fits ref_ps (fmt.h), "-" when absent. */
static void cell(char *buf, size_t n, double ps, double ref_ps)
{
    rs_fmt_time_like(buf, n, ps, ref_ps);
}

static void table(FILE *f, const char *path, const rs_scenario *sc, const json_t *pk, const json_t *fl,
                  const metric *m, int nm)
{
    rs_net_config c;
    rs_scenario_net(sc, &c);
    fprintf(f, "railsim validate: %s (%u GPUs, %s, seed %llu): flow level against packet level\n",
            path ? path : "built-in defaults", c.gpus, c.kind == RS_TOPO_RAIL_ONLY ? "rail-only" : c.kind == RS_TOPO_DRAGONFLY ? "dragonfly" : "fat tree",
            (unsigned long long)c.seed);
    fprintf(f, "  %-28s %16s %16s %10s\n", "", "packet", "flow", "error");
    for (int i = 0; i < nm; i++) {
        double a = num(pk, m[i].key), b = num(fl, m[i].key), e = err_pct(a, b);
        char ca[RS_FMT_LEN], cb[RS_FMT_LEN], ce[32];
        double ref = isnan(a) ? b : isnan(b) ? a : fabs(a) > fabs(b) ? a : b;
        cell(ca, sizeof ca, a, ref);
        cell(cb, sizeof cb, b, ref);
        if (isnan(e))
            snprintf(ce, sizeof ce, "-");
        else
            snprintf(ce, sizeof ce, "%+.2f %%", e);
        fprintf(f, "  %-28s %16s %16s %10s\n", m[i].label, ca, cb, ce);
    }
    if (num(pk, "flows.count") != num(fl, "flows.count"))
        fprintf(f, "  (message times not compared: %.0f messages at packet level, %.0f transfers at flow level)\n",
                num(pk, "flows.count"), num(fl, "flows.count"));
    double wp = num(pk, "wall_s"), wf = num(fl, "wall_s");
    char su[32];
    if (wf > 0 && !isnan(wp))
        snprintf(su, sizeof su, "%.1fx", wp / wf);
    else
        snprintf(su, sizeof su, "-");
    fprintf(f, "  %-28s %14.3f s %14.3f s %10s\n", "simulation wall time", wp, wf, su);
}

static json_t *copy_or_null(const json_t *s, const char *key)
{
    const json_t *v = lookup(s, key);
    return v ? json_deep_copy(v) : json_null();
}

static json_t *real_or_null(double v)
{
    return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static json_t *result_json(const char *path, const json_t *pk, const json_t *fl, const metric *m, int nm)
{
    json_t *o = json_object(), *arr = json_array();
    if (!o || !arr) {
        json_decref(o);
        json_decref(arr);
        return NULL;
    }
    json_object_set_new(o, "format", json_string("railsim-validate"));
    json_object_set_new(o, "version", json_integer(1));
    json_object_set_new(o, "scenario", path ? json_string(path) : json_null());
    json_object_set_new(o, "headline", json_string(m[0].key));
    for (int i = 0; i < nm; i++) {
        json_t *e = json_object();
        json_object_set_new(e, "metric", json_string(m[i].key));
        json_object_set_new(e, "label", json_string(m[i].label[0] == ' ' ? m[i].label + 2 : m[i].label));
        json_object_set_new(e, "packet", copy_or_null(pk, m[i].key));
        json_object_set_new(e, "flow", copy_or_null(fl, m[i].key));
        json_object_set_new(e, "error_pct", real_or_null(err_pct(num(pk, m[i].key), num(fl, m[i].key))));
        json_array_append_new(arr, e);
    }
    json_object_set_new(o, "metrics", arr);
    json_object_set_new(o, "error_pct", real_or_null(err_pct(num(pk, m[0].key), num(fl, m[0].key))));
    json_t *w = json_object();
    json_object_set_new(w, "packet", copy_or_null(pk, "wall_s"));
    json_object_set_new(w, "flow", copy_or_null(fl, "wall_s"));
    json_object_set_new(o, "wall_s", w);
    double wp = num(pk, "wall_s"), wf = num(fl, "wall_s");
    json_object_set_new(o, "speedup", real_or_null(wf > 0 ? wp / wf : NAN));
    return o;
}

int rs_cmd_validate(int argc, char **argv)
{
    const char *path = NULL, *outdir = NULL;
    int quiet = 0, nsets = 0;
    char **sets = calloc((size_t)argc + 1, sizeof *sets);
    if (!sets)
        return RS_EXIT_RUN_FAILED;
    int code = RS_EXIT_OK;
    for (int i = 0; i < argc && code == RS_EXIT_OK; i++) {
        const char *a = argv[i];
        if ((!strcmp(a, "--set") || !strcmp(a, "-s") || !strcmp(a, "-o")) && i + 1 >= argc)
            code = rs_cli_bad_input("%s: expected a value after it", a);
        else if (!strcmp(a, "--set") || !strcmp(a, "-s"))
            sets[nsets++] = argv[++i];
        else if (!strcmp(a, "-o"))
            outdir = argv[++i];
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet"))
            quiet = 1;
        else if (a[0] == '-')
            code = rs_cli_bad_input("validate: unknown option '%s'; expected --set KEY=VALUE, -o DIR or -q", a);
        else if (!path)
            path = a;
        else
            code = rs_cli_bad_input("validate: unexpected argument '%s'; expected at most one scenario file", a);
    }
    rs_scenario *sc = NULL;
    if (code == RS_EXIT_OK)
        code = rs_cli_load(path, sets, nsets, &sc);
    free(sets);
    if (code == RS_EXIT_OK)
        code = rs_validate_execute(sc, path, outdir, quiet, 0);
    rs_scenario_destroy(sc);
    return code;
}

int rs_validate_execute(const rs_scenario *scp, const char *path, const char *outdir, int quiet, int force)
{
    rs_scenario *sc;
    rs_err err;
    if (rs_scenario_clone(&sc, scp, &err) != RS_OK) {
        fprintf(stderr, "railsim: %s\n", err.msg);
        return RS_EXIT_RUN_FAILED;
    }
    int code = RS_EXIT_OK;
    static const char *const names[2] = { "packet", "flow" };
    json_t *s[2] = { NULL, NULL };
    for (int k = 0; k < 2 && code == RS_EXIT_OK; k++) {
        if ((code = rs_cli_set(sc, k == 0 ? "fidelity=packet" : "fidelity=flow")) != RS_EXIT_OK)
            break;
        char sub[4096];
        if (outdir && (size_t)snprintf(sub, sizeof sub, "%s/%s", outdir, names[k]) >= sizeof sub) {
            code = rs_cli_bad_input("-o %s: directory name too long", outdir);
            break;
        }
        if (!quiet)
            fprintf(stderr, "railsim validate: %s level\n", names[k]);
        rs_cli_run how = { .path = path, .outdir = outdir ? sub : NULL, .quiet = 1, .force = force };
        code = rs_run_execute(sc, &how, &s[k]);
        if (code == RS_EXIT_OK && !s[k])
            code = RS_EXIT_RUN_FAILED;
    }
    if (code == RS_EXIT_OK) {
        metric m[MAX_METRICS];
        int nm = pick_metrics(s[0], s[1], m);
        if (!quiet)
            table(stdout, path, sc, s[0], s[1], m, nm);
        if (outdir) {
            json_t *root = result_json(path, s[0], s[1], m, nm);
            char *text = root ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
            if (!text) {
                fprintf(stderr, "railsim: out of memory writing the validation\n");
                code = RS_EXIT_RUN_FAILED;
            } else if (rs_output_write(outdir, "validate.json", text, strlen(text), &err) != RS_OK) {
                fprintf(stderr, "railsim: %s\n", err.msg);
                code = RS_EXIT_BAD_INPUT;
            }
            free(text);
            json_decref(root);
        }
    }
    json_decref(s[0]);
    json_decref(s[1]);
    rs_scenario_destroy(sc);
    return code;
}
