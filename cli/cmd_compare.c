/*
 * cmd_compare.c - `railsim compare`: the same workload, seed and trace on
 * a rail-only network and on a rail-optimized fat tree built from the same
 * GPUs, NICs and switches; a side-by-side table of what the spine buys
 * (iteration time, exposed communication, MFU, bytes through the HB
 * domain, congestion signals) and what it costs (switches, links,
 * transceivers, price and power from the cost model).
 *
 * Every figure comes from the two runs' summaries and from models/cost;
 * nothing is estimated here. With no scenario the built-in one runs two
 * training plans on 128 GPUs (16 HB domains of 8, radix 64): demo-dense
 * (TP inside the HB domain, DP across: rail-aligned) and demo-moe
 * (expert-parallel all-to-all across rails and HB domains).
 *
 * Faults (faults.* keys, --fault) apply to both runs; a class target
 * ("any-spine-link") is drawn per topology with the seed. Each side then
 * reports the faults as resolved, its slowdown against its own fault-free
 * run (summary fault_free) and whether the faults stopped it (a cut-off:
 * reported for that side, not an error of compare).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cost.h"
#include "output.h"
#include "runner.h"
#include "scenario.h"

#define MAX_CASES 64

typedef struct run_pair {
    char label[640]; /* workload path (up to 255), sweep key and value */
    json_t *s[2]; /* [0] rail-only, [1] fat tree */
    int stopped[2]; /* the faults stopped that run (summary faults_stop) */
    rs_bom bom[2];
    rs_scenario sc;
} run_pair;

static const char *const kinds[2] = { "rail-only", "fat-tree" };

static double num(const json_t *o, const char *path)
{
    /* "a.b.c" lookup; NaN when absent or null. */
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    const json_t *v = o;
    for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && v; k = strtok_r(NULL, ".", &save))
        v = json_object_get(v, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The headline time of a run: a training iteration, else a collective,
 * else the last network activity. */
static double run_time_ps(const json_t *s)
{
    const char *what;
    double t = rs_run_headline_ps(s, &what);
    return t >= 0 ? t : NAN;
}

/* "link-down leaf0.p4 @150us, ..." (applied entries only), "none". */
static void faults_text(const json_t *s, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    const json_t *f;
    size_t i;
    json_array_foreach(json_object_get(s, "faults"), i, f) {
        if (len >= n || !json_is_true(json_object_get(f, "applied")))
            continue;
        len += (size_t)snprintf(buf + len, n - len, "%s%s %s @%gus", len ? ", " : "",
                                json_string_value(json_object_get(f, "kind")),
                                json_string_value(json_object_get(f, "target")),
                                (double)json_integer_value(json_object_get(f, "time_ps")) / 1e6);
    }
    if (!buf[0])
        snprintf(buf, n, "none");
}

static double pct(double a, double b) /* a relative to b */
{
    return b != 0 && !isnan(a) && !isnan(b) ? (a - b) / b * 100.0 : NAN;
}

static void fmt(char *buf, size_t n, double v, double scale, const char *unit, int prec)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.*f%s", prec, v / scale, unit);
}

static void row(FILE *f, int md, const char *name, double ro, double ft, double scale, const char *unit,
                int prec, int show_diff)
{
    char a[32], b[32], d[32];
    fmt(a, sizeof a, ro, scale, unit, prec);
    fmt(b, sizeof b, ft, scale, unit, prec);
    if (show_diff && !isnan(pct(ro, ft)))
        snprintf(d, sizeof d, "%+.2f %%", pct(ro, ft));
    else
        snprintf(d, sizeof d, "%s", "");
    if (md)
        fprintf(f, "| %s | %s | %s | %s |\n", name, a, b, d);
    else
        fprintf(f, "  %-28s %16s %16s %14s\n", name, a, b, d);
}

static void table(FILE *f, int md, const run_pair *p)
{
    const rs_net_config *c = &p->sc.net;
    const json_t *ro = p->s[0], *ft = p->s[1];
    if (md)
        fprintf(f, "## %s\n\n%u GPUs, HB domains of %u, radix %u, %g Gb/s NICs, seed %llu\n\n"
                   "| | rail-only | fat tree | rail-only vs fat tree |\n|---|---|---|---|\n",
                p->label, c->gpus, c->hb_size, c->radix, c->nic_gbps, (unsigned long long)c->seed);
    else
        fprintf(f, "railsim compare: %s (%u GPUs, HB domains of %u, radix %u, %g Gb/s NICs)\n"
                   "  %-28s %16s %16s %14s\n",
                p->label, c->gpus, c->hb_size, c->radix, c->nic_gbps, "", "rail-only", "fat tree", "difference");
    int iter = json_object_get(ro, "iteration") != NULL;
    if (p->sc.faults.schedule[0]) {
        char fr[2][512];
        for (int k = 0; k < 2; k++) {
            int n = p->stopped[k] ? snprintf(fr[k], sizeof fr[k], "STOPPED, cut off after: ") : 0;
            faults_text(p->s[k], fr[k] + n, sizeof fr[k] - (size_t)n);
        }
        if (md)
            fprintf(f, "| faults applied | %s | %s | |\n", fr[0], fr[1]);
        else
            fprintf(f, "  %-28s %s | %s\n", "faults applied", fr[0], fr[1]);
        row(f, md, "fault-free time", num(ro, "fault_free.time_ps"), num(ft, "fault_free.time_ps"), 1e9, " ms", 3, 1);
        row(f, md, "slowdown vs fault-free", num(ro, "fault_free.slowdown"), num(ft, "fault_free.slowdown"), 1, "x", 4,
            0);
    }
    row(f, md, iter ? "iteration time" : json_object_get(ro, "collective") ? "collective time" : "completion time",
        run_time_ps(ro), run_time_ps(ft), 1e9, " ms", 3, 1);
    if (iter) {
        row(f, md, "exposed communication", num(ro, "iteration.exposed_comm_ps.mean"),
            num(ft, "iteration.exposed_comm_ps.mean"), 1e9, " ms", 3, 1);
        static const char *const dims[] = { "tp", "pp", "dp", "cp", "ep" };
        for (size_t i = 0; i < 5; i++) {
            char key[64], name[48];
            snprintf(key, sizeof key, "iteration.comm_by_dim_ps.%s", dims[i]);
            double a = num(ro, key), b = num(ft, key);
            if ((isnan(a) || a == 0) && (isnan(b) || b == 0))
                continue;
            snprintf(name, sizeof name, "  exposed %s", dims[i]);
            row(f, md, name, a, b, 1e9, " ms", 3, 1);
        }
        row(f, md, "MFU", num(ro, "iteration.mfu"), num(ft, "iteration.mfu"), 0.01, " %", 1, 0);
        row(f, md, "tokens/s", num(ro, "iteration.tokens_per_s"), num(ft, "iteration.tokens_per_s"), 1e3,
            " k", 1, 1);
    }
    if (json_object_get(ro, "collective"))
        row(f, md, "busbw", num(ro, "collective.busbw_gbps"), num(ft, "collective.busbw_gbps"), 1, " GB/s", 2, 1);
    row(f, md, "bytes through HB domains", num(ro, "payload_bytes.hb"), num(ft, "payload_bytes.hb"), 1e9, " GB", 2, 1);
    row(f, md, "bytes through NICs", num(ro, "payload_bytes.nic"), num(ft, "payload_bytes.nic"), 1e9, " GB", 2, 1);
    row(f, md, "PFC pauses sent", num(ro, "pfc.pauses_sent"), num(ft, "pfc.pauses_sent"), 1, "", 0, 0);
    row(f, md, "CNPs sent", num(ro, "cnp.sent"), num(ft, "cnp.sent"), 1, "", 0, 0);
    row(f, md, "packets dropped", num(ro, "packets.dropped"), num(ft, "packets.dropped"), 1, "", 0, 0);
    const rs_bom *r = &p->bom[0], *t = &p->bom[1];
    row(f, md, "switch tiers", r->tiers, t->tiers, 1, "", 0, 0);
    row(f, md, "switches", (double)r->switches, (double)t->switches, 1, "", 0, 1);
    /* Physical switches above (as railsim cost and run count them); small
     * rails share one, while the simulator keeps one per rail. */
    if (r->switches != r->switches_logical || t->switches != t->switches_logical)
        row(f, md, "  simulated, per rail", (double)r->switches_logical, (double)t->switches_logical, 1, "", 0,
            0);
    row(f, md, "links", (double)r->links, (double)t->links, 1, "", 0, 1);
    row(f, md, "transceivers", (double)r->transceivers, (double)t->transceivers, 1, "", 0, 1);
    row(f, md, "network cost", r->cost_usd, t->cost_usd, 1e3, " k$", 1, 1);
    row(f, md, "network power", r->power_w, t->power_w, 1e3, " kW", 2, 1);
    row(f, md, "simulation wall time", num(ro, "wall_s"), num(ft, "wall_s"), 1, " s", 2, 0);
    fputc('\n', f);
}

static json_t *pair_json(const run_pair *p)
{
    json_t *o = json_object();
    json_object_set_new(o, "label", json_string(p->label));
    for (int k = 0; k < 2; k++) {
        json_t *side = json_object();
        const json_t *s = p->s[k];
        json_object_set_new(side, "time_ps", isnan(run_time_ps(s)) ? json_null() : json_real(run_time_ps(s)));
        json_object_set(side, "iteration", json_object_get(s, "iteration") ? json_object_get(s, "iteration") : json_null());
        json_object_set(side, "collective", json_object_get(s, "collective") ? json_object_get(s, "collective") : json_null());
        json_object_set(side, "payload_bytes", json_object_get(s, "payload_bytes"));
        json_object_set(side, "pfc", json_object_get(s, "pfc"));
        json_object_set(side, "cnp", json_object_get(s, "cnp"));
        json_object_set(side, "topology", json_object_get(s, "topology"));
        if (p->sc.faults.schedule[0]) {
            json_object_set(side, "faults", json_object_get(s, "faults"));
            json_object_set(side, "fault_free", json_object_get(s, "fault_free") ? json_object_get(s, "fault_free")
                                                                                  : json_null());
            json_object_set_new(side, "stopped", json_boolean(p->stopped[k]));
            json_object_set(side, "faults_stop", json_object_get(s, "faults_stop") ? json_object_get(s, "faults_stop")
                                                                                    : json_null());
        }
        const rs_bom *b = &p->bom[k];
        json_t *cost = json_object();
        json_object_set_new(cost, "tiers", json_integer(b->tiers));
        json_object_set_new(cost, "switches", json_integer((json_int_t)b->switches));
        json_object_set_new(cost, "switches_logical", json_integer((json_int_t)b->switches_logical));
        json_object_set_new(cost, "switch_ports", json_integer((json_int_t)b->switch_ports));
        json_object_set_new(cost, "links", json_integer((json_int_t)b->links));
        json_object_set_new(cost, "transceivers", json_integer((json_int_t)b->transceivers));
        json_object_set_new(cost, "cost_usd", json_real(b->cost_usd));
        json_object_set_new(cost, "power_w", json_real(b->power_w));
        json_object_set_new(side, "cost", cost);
        json_object_set_new(o, k == 0 ? "rail_only" : "fat_tree", side);
    }
    json_t *d = json_object();
    double tp = pct(run_time_ps(p->s[0]), run_time_ps(p->s[1]));
    json_object_set_new(d, "time_pct", isnan(tp) ? json_null() : json_real(tp));
    json_object_set_new(d, "cost_saving_pct", json_real(rs_cost_saving_pct(&p->bom[1], &p->bom[0])));
    json_object_set_new(d, "power_saving_pct", json_real(rs_cost_power_saving_pct(&p->bom[1], &p->bom[0])));
    json_object_set_new(o, "rail_only_vs_fat_tree", d);
    return o;
}

static int parse_sweep(char *spec, char **key, char **vals, int *nvals)
{
    char *eq = strchr(spec, '=');
    if (!eq || eq == spec || !eq[1])
        return -1;
    *eq = '\0';
    *key = spec;
    *nvals = 0;
    for (char *save = NULL, *v = strtok_r(eq + 1, ",", &save); v; v = strtok_r(NULL, ",", &save)) {
        if (*nvals >= MAX_CASES / 2)
            return -1;
        vals[(*nvals)++] = v;
    }
    return *nvals ? 0 : -1;
}

int rs_cmd_compare(int argc, char **argv)
{
    const char *path = NULL, *outdir = NULL;
    char *sweep = NULL;
    int quiet = 0, nsets = 0, nfaults = 0;
    char **sets = calloc(2 * (size_t)argc + 4, sizeof *sets);
    if (!sets)
        return RS_EXIT_RUN_FAILED;
    char **faults = sets + argc + 4; /* --fault strings */
    int code = RS_EXIT_OK;
    for (int i = 0; i < argc && code == RS_EXIT_OK; i++) {
        const char *a = argv[i];
        if ((!strcmp(a, "--set") || !strcmp(a, "-s") || !strcmp(a, "-o") || !strcmp(a, "--sweep") ||
             !strcmp(a, "--fault")) && i + 1 >= argc)
            code = rs_cli_bad_input("%s: expected a value after it", a);
        else if (!strcmp(a, "--fault"))
            faults[nfaults++] = argv[++i];
        else if (!strcmp(a, "--set") || !strcmp(a, "-s"))
            sets[nsets++] = argv[++i];
        else if (!strcmp(a, "-o"))
            outdir = argv[++i];
        else if (!strcmp(a, "--sweep"))
            sweep = argv[++i];
        else if (!strcmp(a, "-q"))
            quiet = 1;
        else if (a[0] == '-')
            code = rs_cli_bad_input("compare: unknown option '%s'; expected --set KEY=VALUE, --fault SPEC, --sweep "
                                    "KEY=V1,V2,..., -o DIR or -q", a);
        else if (!path)
            path = a;
        else
            code = rs_cli_bad_input("compare: unexpected argument '%s'; expected at most one scenario file", a);
    }
    char *key = NULL, *vals[MAX_CASES];
    int nvals = 0;
    if (code == RS_EXIT_OK && sweep && parse_sweep(sweep, &key, vals, &nvals) != 0)
        code = rs_cli_bad_input("--sweep: '%s' is not KEY=V1,V2,... (at most 32 values)", sweep);
    if (code != RS_EXIT_OK) {
        free(sets);
        return code;
    }

    /* Cases: the built-in workloads, or the scenario as given; times the
     * sweep's values. */
    /* 128 GPUs, radix 64: the fat tree needs a spine tier, while each
     * 16-GPU rail fits in (a quarter of) one switch. */
    static const char *const builtin[] = { "workload.plan=demo-dense", "workload.plan=demo-moe" };
    static char builtin_gpus[] = "topology.gpus=128";
    int nwork = path || nsets ? 1 : 2;
    int nsweep = sweep ? nvals : 1;
    int ncases = nwork * nsweep;
    run_pair *cases = calloc((size_t)ncases, sizeof *cases);
    char (*sweep_sets)[256] = calloc((size_t)nsweep, 256);
    if (!cases || !sweep_sets) {
        free(sets);
        free(cases);
        free(sweep_sets);
        return RS_EXIT_RUN_FAILED;
    }
    rs_err err;
    /* Load and validate every case before running any. */
    for (int w = 0; w < nwork && code == RS_EXIT_OK; w++)
        for (int v = 0; v < nsweep && code == RS_EXIT_OK; v++) {
            run_pair *p = &cases[w * nsweep + v];
            int n = nsets;
            if (nwork == 2) {
                sets[n++] = builtin_gpus;
                sets[n++] = (char *)builtin[w];
            }
            if (sweep) {
                snprintf(sweep_sets[v], 256, "%s=%s", key, vals[v]);
                sets[n++] = sweep_sets[v];
            }
            if (rs_scenario_load(&p->sc, path, sets, n, &err) != RS_OK ||
                rs_run_add_faults(&p->sc, faults, nfaults, &err) != RS_OK) {
                fprintf(stderr, "railsim: %s\n", err.msg);
                code = RS_EXIT_BAD_INPUT;
                break;
            }
            const char *wl = p->sc.workload.plan[0] ? p->sc.workload.plan
                             : p->sc.workload.trace[0] ? p->sc.workload.trace : "traffic";
            /* Truncation only shortens a label (never more than 640 bytes). */
            int nl;
            if (sweep)
                nl = snprintf(p->label, sizeof p->label, "%.255s, %.127s=%.127s", wl, key, vals[v]);
            else
                nl = snprintf(p->label, sizeof p->label, "%.255s", wl);
            (void)nl;
            rs_cost_input in;
            rs_cost_input_default(&in);
            in.gpus = p->sc.net.gpus;
            in.hb_size = p->sc.net.hb_size;
            in.radix = p->sc.net.radix;
            in.nic_gbps = p->sc.net.nic_gbps;
            in.oversubscription = p->sc.net.oversubscription;
            rs_parts parts;
            rs_parts_default(&parts);
            if (rs_cost_compute(&in, &parts, &p->bom[1], &p->bom[0], &err) != RS_OK) {
                fprintf(stderr, "railsim: %s\n", err.msg);
                code = RS_EXIT_BAD_INPUT;
            }
        }
    if (code == RS_EXIT_OK && outdir && rs_output_mkdir(outdir, &err) != RS_OK) {
        fprintf(stderr, "railsim: %s\n", err.msg);
        code = RS_EXIT_BAD_INPUT;
    }
    for (int i = 0; i < ncases && code == RS_EXIT_OK; i++) {
        run_pair *p = &cases[i];
        for (int k = 0; k < 2 && code == RS_EXIT_OK; k++) {
            p->sc.net.kind = k == 0 ? RS_TOPO_RAIL_ONLY : RS_TOPO_FAT_TREE;
            char sub[4096];
            if (ncases == 1)
                snprintf(sub, sizeof sub, "%s/%s", outdir ? outdir : "", kinds[k]);
            else
                snprintf(sub, sizeof sub, "%s/case%d/%s", outdir ? outdir : "", i, kinds[k]);
            if (!quiet)
                fprintf(stderr, "railsim compare: %s on %s\n", p->label, kinds[k]);
            code = rs_run_execute(&p->sc, path, outdir ? sub : NULL, 1, 0, &p->s[k]);
            /* Faults that cut GPUs off stop that run (exit 1, faults_stop
             * in its summary): a result of the comparison, not a failure. */
            if (code == RS_EXIT_RUN_FAILED && p->s[k] && json_object_get(p->s[k], "faults_stop")) {
                p->stopped[k] = 1;
                code = RS_EXIT_OK;
            }
            if (code == RS_EXIT_OK && !p->s[k])
                code = RS_EXIT_RUN_FAILED;
        }
    }
    /* Plots of each run (iteration breakdown, link utilisation, FCT and
     * collective CDFs) next to its summary and timeline. */
    for (int i = 0; i < ncases && code == RS_EXIT_OK && outdir; i++)
        for (int k = 0; k < 2 && code == RS_EXIT_OK; k++) {
            char sub[4096];
            if (ncases == 1)
                snprintf(sub, sizeof sub, "%s/%s", outdir, kinds[k]);
            else
                snprintf(sub, sizeof sub, "%s/case%d/%s", outdir, i, kinds[k]);
            if (!cases[i].stopped[k])
                code = rs_cli_plot(sub, quiet);
        }
    if (code == RS_EXIT_OK) {
        if (!quiet)
            for (int i = 0; i < ncases; i++)
                table(stdout, 0, &cases[i]);
        if (outdir) {
            json_t *root = json_object(), *arr = json_array();
            json_object_set_new(root, "format", json_string("railsim-compare"));
            json_object_set_new(root, "version", json_integer(1));
            for (int i = 0; i < ncases; i++)
                json_array_append_new(arr, pair_json(&cases[i]));
            json_object_set_new(root, "cases", arr);
            char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
            char *md = NULL;
            size_t mdlen = 0;
            FILE *mf = open_memstream(&md, &mdlen);
            if (mf) {
                fprintf(mf, "# railsim compare\n\nrail-only vs rail-optimized fat tree; same seed, same workload.\n\n");
                for (int i = 0; i < ncases; i++)
                    table(mf, 1, &cases[i]);
                fclose(mf);
            }
            const char *names[2] = { "compare.json", "compare.md" }, *datas[2] = { text, md };
            size_t lens[2] = { text ? strlen(text) : 0, mdlen };
            if (!text || !md || rs_output_write_set(outdir, names, datas, lens, 2, &err) != RS_OK) {
                fprintf(stderr, "railsim: %s\n", text && md ? err.msg : "out of memory writing the comparison");
                code = RS_EXIT_BAD_INPUT;
            }
            free(text);
            free(md);
            json_decref(root);
        }
    }
    for (int i = 0; i < ncases; i++) {
        json_decref(cases[i].s[0]);
        json_decref(cases[i].s[1]);
    }
    free(cases);
    free(sweep_sets);
    free(sets);
    return code;
}
