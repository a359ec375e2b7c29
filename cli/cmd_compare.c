/*
 * cmd_compare.c - `railsim compare`: the same workload, seed and trace on
 * a rail-only network (or, with --against dragonfly, a dragonfly) and on a
 * rail-optimized fat tree built from the same GPUs, NICs and switches; a
 * side-by-side table of what the spine buys
 * (iteration time, exposed communication, MFU, bytes through the HB
 * domain, congestion signals) and what it costs (switches, links,
 * transceivers, price and power from the cost model).
 *
 * Every figure comes from the two runs' summaries and from models/cost;
 * nothing is estimated here, the network-only bound included (each run's
 * own, from the bytes its transfers put on each GPU port). Below the
 * table, the settings that decide the verdict besides the topology, read
 * from the scenario. With no scenario the built-in one runs two
 * training plans on 128 GPUs (16 HB domains of 8, radix 64): demo-dense
 * (TP inside the HB domain, DP across: rail-aligned) and demo-moe
 * (expert-parallel all-to-all across rails and HB domains). Sweeps
 * (--sweep, repeatable) multiply the cases by their cartesian product.
 * Every case is loaded and checked, its faults resolved on both
 * topologies, before the first run.
 *
 * Faults (faults.* keys, --fault) apply to both runs; a class target
 * ("any-network-link") is drawn per topology with the seed, and a class
 * one topology lacks ("any-spine-link" on a rail-only network without a
 * spine) applies to the other and is reported absent on it. Each side then
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
#include "fmt.h"
#include "output.h"
#include "jobs.h"

#define MAX_CASES 64

typedef struct run_pair {
    char label[640]; /* workload path (up to 255), the sweeps' KEY=VALUEs */
    int dfly;     /* side 0 is a dragonfly (--against dragonfly), else rail-only */
    json_t *s[2]; /* [0] rail-only or dragonfly, [1] fat tree */
    json_t *settings; /* what decides the verdict (settings_json) */
    int stopped[2]; /* the faults stopped that run (summary faults_stop) */
    rs_bom bom[2];
    rs_scenario *sc;
} run_pair;

/* Side k of a case: its topology.kind, its name in tables, its key in
 * compare.json. */
static const char *side_kind(const run_pair *p, int k) { return k ? "fat-tree" : p->dfly ? "dragonfly" : "rail-only"; }
static const char *side_name(const run_pair *p, int k) { return k ? "fat tree" : p->dfly ? "dragonfly" : "rail-only"; }
static const char *side_key(const run_pair *p, int k) { return k ? "fat_tree" : p->dfly ? "dragonfly" : "rail_only"; }

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
    double t = rs_cli_headline_ps(s, &what);
    return t >= 0 ? t : NAN;
}

/* "link-down leaf0.p4 @150us, ..." (applied entries only), "none"; then
 * the entries whose class this topology lacks: "; absent: link-down
 * any-spine-link @150us (no member here)". */
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
        len = (size_t)snprintf(buf, n, "none");
    json_array_foreach(json_object_get(s, "faults_absent"), i, f) {
        if (len >= n)
            break;
        len += (size_t)snprintf(buf + len, n - len, "%s%s %s @%gus%s", i ? ", " : "; absent: ",
                                json_string_value(json_object_get(f, "kind")),
                                json_string_value(json_object_get(f, "spec")),
                                (double)json_integer_value(json_object_get(f, "time_ps")) / 1e6,
                                i + 1 == json_array_size(json_object_get(s, "faults_absent")) ? " (no member here)" : "");
    }
}

/* Side k of case p checked as its run will check it (RS_RUN_CHECK_ONLY:
 * network, faults, workload, captures), nothing run or written. */
static int side_check(const run_pair *p, int k, const char *path, const char *outdir, rs_err *err)
{
    rs_scenario *sc = NULL;
    char kind[64], *set = kind;
    snprintf(kind, sizeof kind, "topology.kind=%s", side_kind(p, k));
    int rc = rs_scenario_clone(&sc, p->sc, err);
    if (rc == RS_OK && (rc = rs_scenario_set(sc, &set, 1, err)) == RS_OK) {
        rs_run_opts o;
        rs_run_opts_default(&o);
        o.name = path;
        o.outdir = outdir;
        o.flags = RS_RUN_FAULTS_ABSENT_OK | RS_RUN_CHECK_ONLY;
        rs_result *res = NULL;
        rc = rs_run_with(sc, &o, &res, err);
        rs_result_destroy(res);
    }
    rs_scenario_destroy(sc);
    return rc;
}

/* Before any run, a case on both topologies checked as its runs will be,
 * so that a bad input is said once before anything runs, not by each of
 * its runs (every case has two, a sweep many): without a side when both
 * refuse it alike, else with the side that does. An exit code. */
static int case_check(const run_pair *p, const char *path, const char *outdir)
{
    rs_err e[2];
    int rc[2];
    for (int k = 0; k < 2; k++)
        rc[k] = side_check(p, k, path, outdir, &e[k]);
    const char *names[2] = { side_kind(p, 0), side_kind(p, 1) };
    return rs_cli_sides_said("", names, rc, e);
}

/* Before any run, for a case with faults: they resolve on both topologies
 * (names exist, classes have enough members), building each network once
 * and throwing it away, as `faults sweep` checks. An entry whose class
 * one topology lacks is left to the other (absent_ok: reported absent
 * there); one both lack is refused. An exit code. */
static int faults_precheck(const run_pair *p)
{
    uint32_t *absent = NULL, nabsent = 0;
    int code = RS_EXIT_OK;
    for (int k = 0; k < 2 && code == RS_EXIT_OK; k++) {
        rs_net *net = NULL;
        rs_scenario *sc = NULL;
        rs_err err;
        char kind[64], *set = kind;
        snprintf(kind, sizeof kind, "topology.kind=%s", side_kind(p, k));
        int rc = rs_scenario_clone(&sc, p->sc, &err);
        if (rc == RS_OK && (rc = rs_scenario_set(sc, &set, 1, &err)) == RS_OK)
            rc = rs_scenario_net_create(sc, RS_RUN_FAULTS_ABSENT_OK, &net, &err);
        rs_scenario_destroy(sc);
        if (rc != RS_OK) {
            fprintf(stderr, "railsim: %s: %s\n", side_kind(p, k), err.msg);
            code = rc == RS_ENOMEM ? RS_EXIT_RUN_FAILED : RS_EXIT_BAD_INPUT;
        }
        uint32_t na = rc == RS_OK ? rs_net_fault_absent_count(net) : 0;
        if (k == 0 && na && !(absent = malloc(na * sizeof *absent)))
            code = RS_EXIT_RUN_FAILED;
        for (uint32_t i = 0; i < na && code == RS_EXIT_OK; i++) {
            rs_net_fault_info fi;
            rs_net_fault_absent_get(net, i, &fi);
            if (k == 0) {
                absent[nabsent++] = fi.entry;
                continue;
            }
            for (uint32_t j = 0; j < nabsent && code == RS_EXIT_OK; j++)
                if (absent[j] == fi.entry) {
                    char what[160];
                    snprintf(what, sizeof what, "entry %u: class '%s'", fi.entry, fi.spec);
                    code = rs_cli_bad_input("faults.schedule: %s has no member on either topology; expected a "
                                            "class one of them has", what);
                }
        }
        rs_net_destroy(net);
    }
    free(absent);
    return code;
}

/* 1 when the case's scenario lists faults (faults.schedule). */
static int has_schedule(const rs_scenario *sc)
{
    json_t *v = rs_cli_key(sc, "faults.schedule");
    int has = json_string_length(v) > 0;
    json_decref(v);
    return has;
}

/* The network-only bound of a run (docs/summary-format.md): the
 * iteration's or the collective's; NaN for other traffic. */
static double bound_ps(const json_t *s)
{
    double b = num(s, "iteration.bound_ps");
    return isnan(b) ? num(s, "collective.bound_ps") : b;
}

/* ---- settings ----------------------------------------------------------
 *
 * The keys that decide the verdict besides the topology, one line each
 * below the table and one object each in compare.json's "settings"
 * (docs/cli.md). They are read from the scenario as the runs read it
 * (rs_scenario_to_json), by key name: a key the schema gains
 * (routing.flowlet_gap_us, transport.recovery) shows up without a
 * change here. */

enum { ST_SYSTEM, ST_FORWARDING, ST_ROUTING, ST_TRANSPORT, ST_RECOVERY, ST_CC, ST_FIDELITY, ST_COUNT };

/* A scenario key a line shows when the scenario has it; a key that only
 * matters in one mode (the flowlet gap) only when if_key has if_value. */
typedef struct setting_key {
    const char *key, *if_key, *if_value;
} setting_key;

#define SETTING_KEYS 3

static const struct setting {
    const char *name;   /* line label */
    const char *member; /* compare.json settings member */
    setting_key keys[SETTING_KEYS];
} settings[ST_COUNT] = {
    /* the system, and how collectives are costed on it (docs/systems.md) */
    { "system", "system", { { .key = "system.preset" }, { .key = "system.gpu" }, { .key = "nccl.model" } } },
    { "forwarding", "forwarding", { { .key = "routing.pxn" } } },
    { "routing", "routing", { { .key = "routing.ecmp" }, { "routing.flowlet_gap_us", "routing.ecmp", "flowlet" } } },
    { "transport", "transport", { { .key = "transport.kind" } } },
    { "recovery", "recovery",
      { { .key = "transport.recovery" },
        { "transport.sack_window", "transport.recovery", "selective" },
        { "transport.dupthresh", "transport.recovery", "selective" } } },
    { "congestion control", "congestion_control",
      { { .key = "transport.cc" }, { "transport.dcqcn.profile", "transport.cc", "dcqcn" } } },
    { "fidelity", "fidelity", { { .key = "fidelity" } } },
};

/* A dotted scenario key's value in rs_scenario_to_json's nesting (the
 * section is everything before the last dot); NULL when absent. */
static const json_t *key_value(const json_t *sc, const char *key)
{
    const char *dot = strrchr(key, '.');
    if (!dot)
        return json_object_get(sc, key);
    char section[64];
    snprintf(section, sizeof section, "%.*s", (int)(dot - key), key);
    return json_object_get(json_object_get(sc, section), dot + 1);
}

/* The settings object of compare.json for case p's scenario (both
 * topologies). */
static json_t *settings_json(const run_pair *p)
{
    const rs_scenario *sc = p->sc;
    /* DCQCN's constants are judged against the profile the scenario
     * names, so "at the profile's values" reads as such. */
    json_t *o = json_object(), *j = rs_cli_scenario_json(sc), *dj = NULL;
    const char *profile = json_string_value(key_value(j, "transport.dcqcn.profile"));
    rs_scenario *def = NULL;
    char set[96], *one = set;
    rs_err err;
    snprintf(set, sizeof set, "transport.dcqcn.profile=%s", profile ? profile : "");
    if (rs_scenario_create(&def, &err) == RS_OK && rs_scenario_load(def, NULL, &one, 1, &err) == RS_OK)
        dj = rs_cli_scenario_json(def);
    rs_scenario_destroy(def);
    if (!o || !j || !dj) {
        json_decref(o);
        json_decref(j);
        json_decref(dj);
        return NULL;
    }
    json_t *m[ST_COUNT];
    for (int i = 0; i < ST_COUNT; i++) {
        m[i] = json_object();
        for (int k = 0; k < SETTING_KEYS && settings[i].keys[k].key; k++) {
            const setting_key *sk = &settings[i].keys[k];
            const json_t *v = key_value(j, sk->key), *w = sk->if_key ? key_value(j, sk->if_key) : NULL;
            if (v && (!sk->if_key || (json_is_string(w) && !strcmp(json_string_value(w), sk->if_value))))
                json_object_set_new(m[i], sk->key, json_deep_copy(v));
        }
        json_object_set_new(o, settings[i].member, m[i]);
    }
    for (int k = 0; k < 2; k++) {
        rs_net_config c;
        rs_scenario_net(sc, &c);
        c.kind = k ? RS_TOPO_FAT_TREE : p->dfly ? RS_TOPO_DRAGONFLY : RS_TOPO_RAIL_ONLY;
        json_object_set_new(m[ST_FORWARDING], side_key(p, k),
                            json_string(rs_xrail_name(rs_net_cross_rail(&c))));
    }
    /* DCQCN's constants: every transport.dcqcn.* key that differs from
     * its profile's value, in schema order. */
    json_t *changed = json_object();
    const char *leaf;
    json_t *v;
    json_object_foreach(json_object_get(j, "transport.dcqcn"), leaf, v) {
        char key[96];
        snprintf(key, sizeof key, "transport.dcqcn.%s", leaf);
        if (!json_equal(v, key_value(dj, key)))
            json_object_set_new(changed, key, json_deep_copy(v));
    }
    json_object_set_new(m[ST_CC], "dcqcn_defaults", json_boolean(json_object_size(changed) == 0));
    json_object_set_new(m[ST_CC], "dcqcn_changed", changed);
    json_decref(j);
    json_decref(dj);
    return o;
}

/* "key=value, ..." of o's members named in keys[0..n) (all, when keys is
 * NULL), appended at buf + len; returns the new length. */
static size_t keys_text(char *buf, size_t size, size_t len, const json_t *o, const setting_key *keys, int n)
{
    const char *k;
    json_t *v;
    int first = 1;
    json_object_foreach((json_t *)o, k, v) {
        int listed = !keys;
        for (int i = 0; i < n && keys && keys[i].key && !listed; i++)
            listed = !strcmp(keys[i].key, k);
        if (!listed || len >= size)
            continue;
        char val[64];
        if (json_is_string(v))
            snprintf(val, sizeof val, "%s", json_string_value(v));
        else if (json_is_integer(v))
            snprintf(val, sizeof val, "%lld", (long long)json_integer_value(v));
        else if (json_is_boolean(v))
            snprintf(val, sizeof val, "%s", json_is_true(v) ? "true" : "false");
        else
            snprintf(val, sizeof val, "%g", json_number_value(v));
        len += (size_t)snprintf(buf + len, size - len, "%s%s=%s", first ? "" : ", ", k, val);
        first = 0;
    }
    return len < size ? len : size - 1;
}

static const char *xrail_text(const char *name)
{
    return !strcmp(name, "pxn")       ? "cross-rail messages relay through the source's HB domain to the "
                                        "destination's rail (PXN)"
           : !strcmp(name, "direct")  ? "cross-rail messages leave from the source's own NIC across the spine"
           : !strcmp(name, "refused") ? "cross-rail messages are refused (no path between rails)"
                                      : "no message crosses rails (topology.hb_size=1)";
}

static void settings_print(FILE *f, int md, const run_pair *p)
{
    const json_t *st = p->settings;
    fprintf(f, md ? "Settings (both topologies):\n\n" : "  settings (both topologies)\n");
    const char *tk = json_string_value(json_object_get(json_object_get(st, "transport"), "transport.kind"));
    for (int i = 0; i < ST_COUNT; i++) {
        const json_t *o = json_object_get(st, settings[i].member);
        char line[768];
        size_t n = 0;
        line[0] = '\0';
        if (i == ST_RECOVERY && tk && !strcmp(tk, "ideal")) {
            n = (size_t)snprintf(line, sizeof line, "none (transport.kind=ideal recovers no loss)");
        } else {
            n = keys_text(line, sizeof line, 0, o, settings[i].keys, SETTING_KEYS);
        }
        if (i == ST_FORWARDING) {
            const char *ro = json_string_value(json_object_get(o, side_key(p, 0)));
            const char *ft = json_string_value(json_object_get(o, side_key(p, 1)));
            if (!strcmp(ro, ft))
                snprintf(line + n, sizeof line - n, ": %s, on both topologies", xrail_text(ro));
            else
                snprintf(line + n, sizeof line - n, ": %s: %s; fat tree: %s", side_name(p, 0), xrail_text(ro),
                         xrail_text(ft));
        } else if (i == ST_CC) {
            const json_t *ch = json_object_get(o, "dcqcn_changed");
            const char *cc = json_string_value(json_object_get(o, "transport.cc"));
            if (cc && strcmp(cc, "dcqcn") && json_object_size(ch) == 0) {
                ; /* no DCQCN, none of its constants touched */
            } else if (json_object_size(ch) == 0) {
                snprintf(line + n, sizeof line - n, ", its constants as the profile has them");
            } else {
                n += (size_t)snprintf(line + n, sizeof line - n, ", DCQCN constants changed%s: ",
                                      cc && strcmp(cc, "dcqcn") ? " (unused)" : "");
                if (n < sizeof line)
                    keys_text(line, sizeof line, n, ch, NULL, 0);
            }
        }
        if (md)
            fprintf(f, "- %s: %s\n", settings[i].name, line);
        else
            fprintf(f, "    %-20s %s\n", settings[i].name, line);
    }
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

/* What a row holds, printed in fmt.h's units (docs/cli.md, "Units"). */
typedef enum { Q_TIME, Q_BYTES, Q_USD, Q_POWER } quantity;

/* The cells of a row, in the unit that fits the larger of the two. */
static void cells(char *a, char *b, size_t n, quantity q, double ro, double ft)
{
    double ref = isnan(ro) ? ft : isnan(ft) ? ro : fabs(ro) > fabs(ft) ? ro : ft;
    for (int k = 0; k < 2; k++) {
        char *c = k ? b : a;
        double v = k ? ft : ro;
        switch (q) {
        case Q_TIME: rs_fmt_time_like(c, n, v, ref); break;
        case Q_BYTES: rs_fmt_bytes_like(c, n, v, ref); break;
        case Q_USD: rs_fmt_usd(c, n, v); break;
        case Q_POWER: rs_fmt_power_like(c, n, v, ref); break;
        }
    }
}

static void print_row(FILE *f, int md, const char *name, const char *a, const char *b, double ro, double ft,
                      int show_diff)
{
    char d[32];
    if (show_diff && !isnan(pct(ro, ft)))
        snprintf(d, sizeof d, "%+.2f %%", pct(ro, ft));
    else
        snprintf(d, sizeof d, "%s", "");
    if (md)
        fprintf(f, "| %s | %s | %s | %s |\n", name, a, b, d);
    else
        fprintf(f, "  %-28s %16s %16s %14s\n", name, a, b, d);
}

static void row(FILE *f, int md, const char *name, double ro, double ft, double scale, const char *unit,
                int prec, int show_diff)
{
    char a[RS_FMT_LEN], b[RS_FMT_LEN];
    fmt(a, sizeof a, ro, scale, unit, prec);
    fmt(b, sizeof b, ft, scale, unit, prec);
    print_row(f, md, name, a, b, ro, ft, show_diff);
}

static void row_q(FILE *f, int md, const char *name, double ro, double ft, quantity q, int show_diff)
{
    char a[RS_FMT_LEN], b[RS_FMT_LEN];
    cells(a, b, sizeof a, q, ro, ft);
    print_row(f, md, name, a, b, ro, ft, show_diff);
}

static void table(FILE *f, int md, const run_pair *p)
{
    rs_net_config nc;
    rs_scenario_net(p->sc, &nc);
    const rs_net_config *c = &nc;
    const json_t *ro = p->s[0], *ft = p->s[1];
    if (md)
        fprintf(f, "## %s\n\n%u GPUs, HB domains of %u, radix %u, %g Gb/s NICs, seed %llu\n\n"
                   "| | %s | fat tree | %s vs fat tree |\n|---|---|---|---|\n",
                p->label, c->gpus, c->hb_size, c->radix, c->nic_gbps, (unsigned long long)c->seed, side_name(p, 0),
                side_name(p, 0));
    else
        fprintf(f, "railsim compare: %s (%u GPUs, HB domains of %u, radix %u, %g Gb/s NICs)\n"
                   "  %-28s %16s %16s %14s\n",
                p->label, c->gpus, c->hb_size, c->radix, c->nic_gbps, "", side_name(p, 0), "fat tree", "difference");
    int iter = json_object_get(ro, "iteration") != NULL;
    if (has_schedule(p->sc)) {
        char fr[2][512];
        for (int k = 0; k < 2; k++) {
            int n = p->stopped[k] ? snprintf(fr[k], sizeof fr[k], "STOPPED, cut off after: ") : 0;
            faults_text(p->s[k], fr[k] + n, sizeof fr[k] - (size_t)n);
        }
        if (md)
            fprintf(f, "| faults applied | %s | %s | |\n", fr[0], fr[1]);
        else
            fprintf(f, "  %-28s %s | %s\n", "faults applied", fr[0], fr[1]);
        row_q(f, md, "fault-free time", num(ro, "fault_free.time_ps"), num(ft, "fault_free.time_ps"), Q_TIME, 1);
        row(f, md, "slowdown vs fault-free", num(ro, "fault_free.slowdown"), num(ft, "fault_free.slowdown"), 1, "x", 4,
            0);
    }
    row_q(f, md, iter ? "iteration time" : json_object_get(ro, "collective") ? "collective time" : "completion time",
        run_time_ps(ro), run_time_ps(ft), Q_TIME, 1);
    /* What the network could do at best with the same transfers
     * (docs/summary-format.md, "Network-only bound"). */
    double bd[2] = { bound_ps(ro), bound_ps(ft) };
    if (!isnan(bd[0]) || !isnan(bd[1]))
        row_q(f, md, iter ? "network bound per iteration" : "network bound", bd[0], bd[1], Q_TIME, 1);
    if (!iter && (!isnan(bd[0]) || !isnan(bd[1])))
        row(f, md, "  time over bound", bd[0] > 0 ? run_time_ps(ro) / bd[0] : NAN,
            bd[1] > 0 ? run_time_ps(ft) / bd[1] : NAN, 1, "x", 4, 0);
    if (iter) {
        row_q(f, md, "exposed communication", num(ro, "iteration.exposed_comm_ps.mean"),
            num(ft, "iteration.exposed_comm_ps.mean"), Q_TIME, 1);
        /* "other" too (idle no communication explains), so the rows add
         * up to the exposed communication above (to rounding). */
        static const char *const dims[] = { "tp", "pp", "dp", "cp", "ep", "other" };
        for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
            char key[64], name[48];
            snprintf(key, sizeof key, "iteration.comm_by_dim_ps.%s", dims[i]);
            double a = num(ro, key), b = num(ft, key);
            if ((isnan(a) || a == 0) && (isnan(b) || b == 0))
                continue;
            snprintf(name, sizeof name, "  exposed %s", dims[i]);
            row_q(f, md, name, a, b, Q_TIME, 1);
        }
        row(f, md, "MFU", num(ro, "iteration.mfu"), num(ft, "iteration.mfu"), 0.01, " %", 1, 0);
        row(f, md, "tokens/s", num(ro, "iteration.tokens_per_s"), num(ft, "iteration.tokens_per_s"), 1e3,
            " k", 1, 1);
        /* The GPUs' side (docs/compute.md). */
        row(f, md, "GPU power per GPU", num(ro, "iteration.gpu.power_w"), num(ft, "iteration.gpu.power_w"), 1, " W",
            0, 1);
        row(f, md, "GPU energy per token", num(ro, "iteration.gpu.energy_j_per_token"),
            num(ft, "iteration.gpu.energy_j_per_token"), 1e-3, " mJ", 2, 1);
    }
    if (json_object_get(ro, "collective"))
        row(f, md, "busbw", num(ro, "collective.busbw_GBps"), num(ft, "collective.busbw_GBps"), 1, " GB/s", 2, 1);
    /* A shared cluster (docs/shared-clusters.md): each job's time and
     * its slowdown beside the others, and what the cluster delivers: the
     * workloads' iterations per second, summed. */
    const json_t *jobs[2] = { json_object_get(ro, "jobs"), json_object_get(ft, "jobs") };
    double tput[2] = { 0, 0 };
    for (size_t k = 0; k < json_array_size(jobs[0]); k++) {
        const json_t *ja = json_array_get(jobs[0], k), *jb = json_array_get(jobs[1], k);
        char name[64];
        snprintf(name, sizeof name, "job %s", json_string_value(json_object_get(ja, "name")));
        row_q(f, md, name, num(ja, "time_ps"), num(jb, "time_ps"), Q_TIME, 1);
        row(f, md, "  slowdown beside the others", num(ja, "slowdown"), num(jb, "slowdown"), 1, "x", 4, 0);
        if (json_object_get(ja, "iteration")) { /* a workload's iterations; traffic has none */
            tput[0] += 1e12 / num(ja, "time_ps");
            tput[1] += 1e12 / num(jb, "time_ps");
        }
    }
    if (tput[0] > 0 || tput[1] > 0) {
        row(f, md, "jobs' iterations per second", tput[0], tput[1], 1, "", 2, 1);
        row_q(f, md, "network cost per iteration/s", p->bom[0].cost_usd / tput[0], p->bom[1].cost_usd / tput[1],
              Q_USD, 1);
    }
    row_q(f, md, "bytes through HB domains", num(ro, "payload_bytes.hb"), num(ft, "payload_bytes.hb"), Q_BYTES, 1);
    row_q(f, md, "bytes through NICs", num(ro, "payload_bytes.nic"), num(ft, "payload_bytes.nic"), Q_BYTES, 1);
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
    row_q(f, md, "network cost", r->cost_usd, t->cost_usd, Q_USD, 1);
    row_q(f, md, "network power", r->power_w, t->power_w, Q_POWER, 1);
    row(f, md, "simulation wall time", num(ro, "wall_s"), num(ft, "wall_s"), 1, " s", 2, 0);
    if (md)
        fputc('\n', f);
    settings_print(f, md, p);
    fputc('\n', f);
}

static json_t *pair_json(const run_pair *p)
{
    json_t *o = json_object();
    json_object_set_new(o, "label", json_string(p->label));
    json_object_set(o, "settings", p->settings);
    for (int k = 0; k < 2; k++) {
        json_t *side = json_object();
        const json_t *s = p->s[k];
        json_object_set_new(side, "time_ps", isnan(run_time_ps(s)) ? json_null() : json_real(run_time_ps(s)));
        json_object_set_new(side, "bound_ps", isnan(bound_ps(s)) ? json_null() : json_integer((json_int_t)bound_ps(s)));
        json_object_set(side, "iteration", json_object_get(s, "iteration") ? json_object_get(s, "iteration") : json_null());
        json_object_set(side, "collective", json_object_get(s, "collective") ? json_object_get(s, "collective") : json_null());
        if (json_object_get(s, "jobs"))
            json_object_set(side, "jobs", json_object_get(s, "jobs"));
        json_object_set(side, "payload_bytes", json_object_get(s, "payload_bytes"));
        json_object_set(side, "pfc", json_object_get(s, "pfc"));
        json_object_set(side, "cnp", json_object_get(s, "cnp"));
        json_object_set(side, "topology", json_object_get(s, "topology"));
        if (has_schedule(p->sc)) {
            json_object_set(side, "faults", json_object_get(s, "faults") ? json_object_get(s, "faults") : json_null());
            json_object_set_new(side, "faults_absent", json_object_get(s, "faults_absent")
                                                           ? json_incref(json_object_get(s, "faults_absent"))
                                                           : json_array());
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
        json_object_set_new(o, side_key(p, k), side);
    }
    json_t *d = json_object();
    double tp = pct(run_time_ps(p->s[0]), run_time_ps(p->s[1]));
    json_object_set_new(d, "time_pct", isnan(tp) ? json_null() : json_real(tp));
    json_object_set_new(d, "cost_saving_pct", json_real(rs_cost_saving_pct(&p->bom[1], &p->bom[0])));
    json_object_set_new(d, "power_saving_pct", json_real(rs_cost_power_saving_pct(&p->bom[1], &p->bom[0])));
    char dk[32];
    snprintf(dk, sizeof dk, "%s_vs_fat_tree", side_key(p, 0));
    json_object_set_new(o, dk, d);
    return o;
}

/* --sweep KEY=V1,V2,...: one key and its values, cut in place in spec. */
#define MAX_SWEEPS 8
#define MAX_SWEEP_VALUES 32

typedef struct sweep {
    char *key;
    char *vals[MAX_SWEEP_VALUES];
    int n;
} sweep;

static int parse_sweep(char *spec, sweep *sw)
{
    char *eq = strchr(spec, '=');
    if (!eq || eq == spec || !eq[1])
        return -1;
    *eq = '\0';
    sw->key = spec;
    sw->n = 0;
    for (char *save = NULL, *v = strtok_r(eq + 1, ",", &save); v; v = strtok_r(NULL, ",", &save)) {
        if (sw->n >= MAX_SWEEP_VALUES)
            return -1;
        sw->vals[sw->n++] = v;
    }
    return sw->n ? 0 : -1;
}

/* The sweeps as given, checked: each KEY=V1,V2,... (at most 32 values),
 * no key twice, not topology.kind, at most 64 cases in all (nwork
 * workloads times the product of the value counts). *nprod gets that
 * product. An exit code. */
static int sweeps_check(char **specs, int nspecs, sweep *sw, int nwork, int *nprod)
{
    *nprod = 1;
    for (int i = 0; i < nspecs; i++) {
        char text[128];
        snprintf(text, sizeof text, "%.100s", specs[i]);
        if (parse_sweep(specs[i], &sw[i]) != 0)
            return rs_cli_bad_input("--sweep: '%s' is not KEY=V1,V2,... (at most 32 values)", text);
        /* compare runs every case on both topologies: sweeping the kind
         * would run the same pair twice and label one of them wrong. */
        if (!strcmp(sw[i].key, "topology.kind"))
            return rs_cli_bad_input("--sweep %s: compare runs every case on both topologies; expected another key",
                                    sw[i].key);
        /* Each value on its own, so a bad one is named as the sweep's
         * (scenario.c names it as a --set). */
        for (int v = 0; v < sw[i].n; v++) {
            char set[256];
            char *one = set;
            rs_scenario *tmp = NULL;
            rs_err err;
            snprintf(set, sizeof set, "%.127s=%.127s", sw[i].key, sw[i].vals[v]);
            int rc = rs_scenario_create(&tmp, &err);
            if (rc == RS_OK)
                rc = rs_scenario_load(tmp, NULL, &one, 1, &err);
            rs_scenario_destroy(tmp);
            if (rc != RS_OK) {
                fprintf(stderr, "railsim: %s%s\n", strncmp(err.msg, "--set ", 6) ? "" : "--sweep ",
                        err.msg + (strncmp(err.msg, "--set ", 6) ? 0 : 6));
                return RS_EXIT_BAD_INPUT;
            }
        }
        for (int j = 0; j < i; j++)
            if (!strcmp(sw[i].key, sw[j].key))
                return rs_cli_bad_input("--sweep %s: the key is swept twice; expected each key in one --sweep with "
                                        "all its values", sw[i].key);
        *nprod *= sw[i].n; /* at most 32^8: no overflow before the check */
        if ((long long)*nprod * nwork > MAX_CASES) {
            char n[16];
            snprintf(n, sizeof n, "%d", MAX_CASES);
            return rs_cli_bad_input("--sweep: the sweeps' cartesian product has more than %s cases; expected fewer "
                                    "values or keys", n);
        }
    }
    return RS_EXIT_OK;
}

/* One compare command: its arguments, then its cases. */
typedef struct compare {
    const char *path, *outdir;
    char **sets;       /* --set values, with room after them for a case's own */
    char **faults;     /* --fault strings */
    char *specs[MAX_SWEEPS]; /* --sweep values */
    int dfly;                /* --against dragonfly */
    int nsets, nfaults, nspecs, quiet;
    unsigned parallel;
    sweep sw[MAX_SWEEPS];
    int nwork, nsweep, ncases; /* workloads (2 built-in, else 1) x sweep cases */
    run_pair *cases;
    char (*sweep_sets)[256]; /* a case's KEY=VALUE of each sweep */
} compare;

/* argv into c (its sets and faults arrays already allocated). An exit code. */
static int parse_args(compare *c, int argc, char **argv)
{
    int code = RS_EXIT_OK;
    for (int i = 0; i < argc && code == RS_EXIT_OK; i++) {
        const char *a = argv[i];
        if ((!strcmp(a, "--set") || !strcmp(a, "-s") || !strcmp(a, "-o") || !strcmp(a, "--sweep") ||
             !strcmp(a, "--fault") || !strcmp(a, "-j") || !strcmp(a, "--against")) && i + 1 >= argc)
            code = rs_cli_bad_input("%s: expected a value after it", a);
        else if (!strcmp(a, "--against") && (!strcmp(argv[i + 1], "rail-only") || !strcmp(argv[i + 1], "dragonfly")))
            c->dfly = !strcmp(argv[++i], "dragonfly");
        else if (!strcmp(a, "--against"))
            code = rs_cli_bad_input("--against: expected rail-only or dragonfly (set against the fat tree), got '%s'",
                                    argv[++i]);
        else if (!strcmp(a, "-j"))
            code = rs_jobs_parse("compare", argv[++i], &c->parallel);
        else if (!strcmp(a, "--fault"))
            c->faults[c->nfaults++] = argv[++i];
        else if (!strcmp(a, "--set") || !strcmp(a, "-s"))
            c->sets[c->nsets++] = argv[++i];
        else if (!strcmp(a, "-o"))
            c->outdir = argv[++i];
        else if (!strcmp(a, "--sweep") && c->nspecs == MAX_SWEEPS)
            code = rs_cli_bad_input("--sweep %s: more than 8 swept keys; expected at most 8", argv[++i]);
        else if (!strcmp(a, "--sweep"))
            c->specs[c->nspecs++] = argv[++i];
        else if (!strcmp(a, "-q"))
            c->quiet = 1;
        else if (a[0] == '-')
            code = rs_cli_bad_input("compare: unknown option '%s'; expected --set KEY=VALUE, --fault SPEC, --sweep "
                                    "KEY=V1,V2,..., --against rail-only|dragonfly, -j N, -o DIR or -q", a);
        else if (!c->path)
            c->path = a;
        else
            code = rs_cli_bad_input("compare: unexpected argument '%s'; expected at most one scenario file", a);
    }
    return code;
}

/* Load and check case v of workload w into p: the built-in workload w (or
 * the scenario as given), value (v / stride) % n of each sweep (the last
 * key varies fastest), the --fault entries; its label, the settings that
 * decide its verdict and both topologies' bill of materials. An exit
 * code; err's message is printed here. */
static int case_load(compare *c, int w, int v, run_pair *p)
{
    /* 128 GPUs, radix 64: the fat tree needs a spine tier, while each
     * 16-GPU rail fits in (a quarter of) one switch. */
    static const char *const builtin[] = { "workload.plan=demo-dense", "workload.plan=demo-moe" };
    static char builtin_gpus[] = "topology.gpus=128";
    rs_err err;
    char **sets = c->sets;
    int n = c->nsets;
    if (c->nwork == 2) {
        sets[n++] = builtin_gpus;
        sets[n++] = (char *)builtin[w];
    }
    int stride = c->nsweep;
    for (int k = 0; k < c->nspecs; k++) {
        stride /= c->sw[k].n;
        snprintf(c->sweep_sets[k], 256, "%.127s=%.127s", c->sw[k].key, c->sw[k].vals[v / stride % c->sw[k].n]);
        sets[n++] = c->sweep_sets[k];
    }
    p->dfly = c->dfly;
    int rc = rs_scenario_create(&p->sc, &err);
    if (rc == RS_OK && (rc = rs_scenario_load(p->sc, c->path, sets, n, &err)) == RS_OK)
        rc = rs_scenario_add_faults(p->sc, c->faults, c->nfaults, &err);
    if (rc != RS_OK) {
        fprintf(stderr, "railsim: %s\n", err.msg);
        return rc == RS_ENOMEM ? RS_EXIT_RUN_FAILED : RS_EXIT_BAD_INPUT;
    }
    /* One network level per case: fidelity=both is railsim validate's
     * comparison of the levels, not a network. */
    if (rs_cli_key_is(p->sc, "fidelity", "both"))
        return rs_cli_bad_input("fidelity: compare runs one level per case; expected packet or flow, got %s "
                                "(railsim validate compares the levels)", "both");
    char wl[256];
    rs_cli_workload_name(p->sc, wl, sizeof wl);
    /* Truncation only shortens a label (never more than 640 bytes). */
    size_t nl = (size_t)snprintf(p->label, sizeof p->label, "%.255s", wl);
    for (int k = 0; k < c->nspecs && nl < sizeof p->label; k++)
        nl += (size_t)snprintf(p->label + nl, sizeof p->label - nl, ", %s", c->sweep_sets[k]);
    if (!(p->settings = settings_json(p))) {
        fprintf(stderr, "railsim: out of memory describing the settings\n");
        return RS_EXIT_RUN_FAILED;
    }
    rs_net_config nc;
    rs_scenario_net(p->sc, &nc);
    rs_cost_input in;
    rs_cost_input_of(&in, &nc);
    rs_catalog parts;
    rs_catalog_default(&parts);
    if (rs_cost_compute(&in, &parts, &p->bom[1], p->dfly ? NULL : &p->bom[0], &err) != RS_OK ||
        (p->dfly && rs_cost_dragonfly(&in, nc.df_hosts, nc.df_group, &parts, &p->bom[0], &err) != RS_OK)) {
        fprintf(stderr, "railsim: %s\n", err.msg);
        return RS_EXIT_BAD_INPUT;
    }
    return RS_EXIT_OK;
}

/* Every case on both topologies: independent runs, -j N at a time; their
 * summaries into the cases, in order, as one after another: the first
 * failure is the answer. An exit code. */
static int cases_run(compare *c)
{
    int ncases = c->ncases, code = RS_EXIT_OK;
    const char *outdir = c->outdir;
    rs_job *jobs = calloc(2 * (size_t)ncases, sizeof *jobs);
    char (*subs)[4096] = jobs ? calloc(2 * (size_t)ncases, sizeof *subs) : NULL;
    if (!subs) {
        fprintf(stderr, "railsim: out of memory listing the runs\n");
        free(jobs);
        return RS_EXIT_RUN_FAILED;
    }
    for (int i = 0; i < ncases; i++)
        for (int k = 0; k < 2; k++) {
            rs_job *j = &jobs[2 * i + k];
            char kind[64], *set = kind;
            rs_err err;
            const run_pair *p = &c->cases[i];
            snprintf(kind, sizeof kind, "topology.kind=%s", side_kind(p, k));
            if (rs_scenario_clone(&j->sc, c->cases[i].sc, &err) != RS_OK ||
                rs_scenario_set(j->sc, &set, 1, &err) != RS_OK) {
                fprintf(stderr, "railsim: %s\n", err.msg);
                code = RS_EXIT_RUN_FAILED;
            }
            /* One schedule for two topologies: a class one of them lacks
             * applies to the other (faults_precheck). */
            j->flags = RS_RUN_FAULTS_ABSENT_OK;
            if (ncases == 1)
                snprintf(subs[2 * i + k], sizeof subs[0], "%s/%s", outdir ? outdir : "", side_kind(p, k));
            else
                snprintf(subs[2 * i + k], sizeof subs[0], "%s/case%d/%s", outdir ? outdir : "", i, side_kind(p, k));
            j->outdir = outdir ? subs[2 * i + k] : NULL;
            j->quiet = 1;
            if (!c->quiet)
                snprintf(j->progress, sizeof j->progress, "railsim compare: %s on %s", p->label, side_kind(p, k));
        }
    if (code == RS_EXIT_OK)
        code = rs_jobs_run(jobs, 2 * (size_t)ncases, c->parallel, c->path);
    for (int i = 0; i < ncases && code == RS_EXIT_OK; i++) {
        run_pair *p = &c->cases[i];
        for (int k = 0; k < 2 && code == RS_EXIT_OK; k++) {
            rs_job *j = &jobs[2 * i + k];
            p->s[k] = j->summary;
            j->summary = NULL;
            code = j->code;
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
    for (size_t i = 0; i < 2 * (size_t)ncases; i++) {
        json_decref(jobs[i].summary);
        rs_scenario_destroy(jobs[i].sc);
    }
    free(jobs);
    free(subs);
    return code;
}

/* DIR/compare.json and DIR/compare.md, every case. An exit code. */
static int outputs_write(const compare *c)
{
    json_t *root = json_object(), *arr = json_array();
    json_object_set_new(root, "format", json_string("railsim-compare"));
    json_object_set_new(root, "version", json_integer(1));
    for (int i = 0; i < c->ncases; i++)
        json_array_append_new(arr, pair_json(&c->cases[i]));
    json_object_set_new(root, "cases", arr);
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    char *md = NULL;
    size_t mdlen = 0;
    FILE *mf = open_memstream(&md, &mdlen);
    if (mf) {
        fprintf(mf, "# railsim compare\n\n%s vs rail-optimized fat tree; same seed, same workload.\n\n",
                c->dfly ? "dragonfly" : "rail-only");
        for (int i = 0; i < c->ncases; i++)
            table(mf, 1, &c->cases[i]);
        fclose(mf);
    }
    const char *names[2] = { "compare.json", "compare.md" }, *datas[2] = { text, md };
    size_t lens[2] = { text ? strlen(text) : 0, mdlen };
    rs_err err;
    int code = RS_EXIT_OK;
    if (!text || !md || rs_output_write_set(c->outdir, names, datas, lens, 2, &err) != RS_OK) {
        fprintf(stderr, "railsim: %s\n", text && md ? err.msg : "out of memory writing the comparison");
        code = RS_EXIT_BAD_INPUT;
    }
    free(text);
    free(md);
    json_decref(root);
    return code;
}

/* Load and check every case, its faults resolved on both topologies,
 * then make the output directory: all before running any. An exit code. */
static int cases_load(compare *c)
{
    int code = RS_EXIT_OK;
    for (int w = 0; w < c->nwork && code == RS_EXIT_OK; w++)
        for (int v = 0; v < c->nsweep && code == RS_EXIT_OK; v++)
            code = case_load(c, w, v, &c->cases[w * c->nsweep + v]);
    for (int i = 0; i < c->ncases && code == RS_EXIT_OK; i++)
        code = case_check(&c->cases[i], c->path, c->outdir);
    for (int i = 0; i < c->ncases && code == RS_EXIT_OK; i++)
        if (rs_scenario_has_faults(c->cases[i].sc))
            code = faults_precheck(&c->cases[i]);
    rs_err err;
    if (code == RS_EXIT_OK && c->outdir && rs_output_mkdir(c->outdir, &err) != RS_OK) {
        fprintf(stderr, "railsim: %s\n", err.msg);
        code = RS_EXIT_BAD_INPUT;
    }
    return code;
}

int rs_cmd_compare(int argc, char **argv)
{
    compare c = { .parallel = 1 };
    c.sets = calloc(2 * (size_t)argc + 4, sizeof *c.sets);
    if (!c.sets)
        return RS_EXIT_RUN_FAILED;
    c.faults = c.sets + argc + 4;
    int code = parse_args(&c, argc, argv);
    /* Cases: the built-in workloads, or the scenario as given; times the
     * cartesian product of the sweeps' values. */
    c.nwork = c.path || c.nsets ? 1 : 2;
    c.nsweep = 1;
    if (code == RS_EXIT_OK)
        code = sweeps_check(c.specs, c.nspecs, c.sw, c.nwork, &c.nsweep);
    if (code != RS_EXIT_OK) {
        free(c.sets);
        return code;
    }
    c.ncases = c.nwork * c.nsweep;
    c.cases = calloc((size_t)c.ncases, sizeof *c.cases);
    c.sweep_sets = calloc((size_t)c.nspecs + 1, 256);
    if (!c.cases || !c.sweep_sets) {
        free(c.sets);
        free(c.cases);
        free(c.sweep_sets);
        return RS_EXIT_RUN_FAILED;
    }
    code = cases_load(&c);
    if (code == RS_EXIT_OK)
        code = cases_run(&c);
    if (code == RS_EXIT_OK && !c.quiet)
        for (int i = 0; i < c.ncases; i++)
            table(stdout, 0, &c.cases[i]);
    if (code == RS_EXIT_OK && c.outdir && rs_jobs_root()) /* under MPI, rank 0 writes the comparison */
        code = outputs_write(&c);
    /* Plots, from compare.json and the run directories: DIR/plots/compare.png
     * (the two topologies side by side) and each run's own (iteration
     * breakdown, link utilisation, FCT and collective CDFs) next to its
     * summary and timeline; plots.py skips a side its faults stopped. */
    if (code == RS_EXIT_OK && c.outdir && rs_jobs_root())
        code = rs_cli_plot(c.outdir, c.quiet);
    for (int i = 0; i < c.ncases; i++) {
        json_decref(c.cases[i].s[0]);
        json_decref(c.cases[i].s[1]);
        json_decref(c.cases[i].settings);
        rs_scenario_destroy(c.cases[i].sc);
    }
    free(c.cases);
    free(c.sweep_sets);
    free(c.sets);
    return code;
}
