/*
 * cmd_faults.c - `railsim faults sweep`: seeded fault trials on both
 * topologies, tabulated as iteration-time slowdown against the fault-free
 * run (docs/fault-experiments.md, docs/cli.md).
 *
 * For each topology (built as `railsim compare` builds them: the
 * scenario with topology.kind set) it runs the scenario once without
 * faults (the baseline, time T0), then for each COUNT and each trial the
 * scenario with COUNT entries "TIME KIND CLASS [DURATION]". The entries of
 * one trial name the same class, so they fail distinct members (fault.c
 * draws them distinct, with faults.seed = the trial's seed). TIME is
 * --at, or u x T0 with u drawn in [0, 1) from the trial's seed: the same
 * fractions of their own fault-free run on both topologies. Trial seeds
 * derive from the scenario seed, the count and the trial number only.
 *
 * A trial whose faults cut GPUs off (summary faults_stop) is counted as
 * stopped and left out of the slowdown figures, as is one that failed
 * otherwise. Nothing is estimated: every slowdown is a run's headline time
 * (rs_summary_headline) over the baseline's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fmt.h"
#include "jobs.h"
#include "output.h"
#include "rng.h"

#define MAX_COUNTS 32

static const char *const topo_names[2] = { "rail-only", "fat-tree" };

typedef struct sweep_opts {
    const char *path, *outdir, *kind, *cls, *at, *duration;
    uint32_t counts[MAX_COUNTS];
    int ncounts, quiet, topo_mask;
    uint32_t trials;
    unsigned parallel; /* -j N: trials run at once */
} sweep_opts;

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median (mean of the two middle values for an even count), p95 (nearest
 * rank: the ceil(0.95 n)-th smallest) and worst of v[0..n), sorted here. */
static json_t *stats(double *v, size_t n)
{
    json_t *o = json_object();
    if (n == 0) {
        json_object_set_new(o, "median", json_null());
        json_object_set_new(o, "p95", json_null());
        json_object_set_new(o, "worst", json_null());
        return o;
    }
    qsort(v, n, sizeof *v, cmp_dbl);
    double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    size_t r = (size_t)ceil(0.95 * (double)n);
    json_object_set_new(o, "median", json_real(med));
    json_object_set_new(o, "p95", json_real(v[(r ? r : 1) - 1]));
    json_object_set_new(o, "worst", json_real(v[n - 1]));
    return o;
}

static int parse_counts(const char *s, sweep_opts *o)
{
    char buf[256];
    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    o->ncounts = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        unsigned long v = strtoul(t, &end, 10);
        if (end == t || *end || v > 4096 || o->ncounts == MAX_COUNTS || t[0] == '-')
            return -1;
        o->counts[o->ncounts++] = (uint32_t)v;
    }
    return o->ncounts ? 0 : -1;
}

/* The trial's seed: from the scenario seed, the count and the trial only
 * (not the topology), nonzero, below 2^63 (the scenario's seed range). */
static uint64_t trial_seed(uint64_t seed, uint32_t count, uint32_t trial)
{
    rs_rng r;
    rs_rng_init(&r, seed, ((uint64_t)count << 32) | trial, 0x5eeb5eebu);
    return (rs_rng_next(&r) >> 1) | 1;
}

/* One topology's sweep, as its steps read it. */
typedef struct topo_sweep {
    const sweep_opts *o;
    int k;              /* the topology: 0 rail-only, 1 fat tree (topo_names) */
    rs_scenario *sc;    /* what every run starts from: the scenario on topology k, without faults */
    double t0;          /* the fault-free run's headline time */
    rs_job *jobs;       /* the faulted trials, by count then trial */
    size_t njobs, next; /* how many; the next one to read */
    double *sl;         /* a row's slowdowns (room for trials + 1) */
    json_t *rows;       /* the topology's rows in sweep.json */
    FILE *md;           /* sweep.md */
} topo_sweep;

/* The fault-free run of base on ts->k, with what the trials set unset
 * (ts->sc): its headline time into ts->t0, and the topology's object,
 * with ts->rows, appended to arr. An exit code: a run that fails or has
 * no time to compare fails the sweep. */
/* *out: base on topology k with what the trials set unset. */
static int fault_free_scenario(const rs_scenario *base, int k, rs_scenario **out, rs_err *err)
{
    char kind[64];
    snprintf(kind, sizeof kind, "topology.kind=%s", topo_names[k]);
    char *sets[4] = { kind, "faults.schedule=", "faults.baseline=false", "capture.ports=" };
    int rc = rs_scenario_clone(out, base, err);
    return rc == RS_OK ? rs_scenario_set(*out, sets, 4, err) : rc;
}

static int fault_free(topo_sweep *ts, const rs_scenario *base, json_t *arr)
{
    const sweep_opts *o = ts->o;
    rs_err err;
    if (fault_free_scenario(base, ts->k, &ts->sc, &err) != RS_OK) {
        fprintf(stderr, "railsim: %s\n", err.msg);
        return RS_EXIT_RUN_FAILED;
    }
    if (!o->quiet)
        fprintf(stderr, "railsim faults sweep: %s: fault-free run\n", topo_names[ts->k]);
    json_t *bs = NULL;
    /* The fault-free run is modelled as the faulted ones are (flow-level
     * relays as chunk pipelines), so a slowdown compares one model with
     * itself. */
    rs_cli_run how = { .path = o->path, .quiet = 1, .flags = RS_RUN_AS_FAULTED };
    int code = rs_run_execute(ts->sc, &how, &bs);
    const char *what = "sim_end";
    ts->t0 = bs ? rs_cli_headline_ps(bs, &what) : -1;
    json_decref(bs);
    if (code != RS_EXIT_OK || ts->t0 <= 0) {
        fprintf(stderr, "railsim: faults sweep: the fault-free run on %s %s; expected a run that completes\n",
                topo_names[ts->k], code == RS_EXIT_OK ? "has no time to compare" : "failed");
        return code == RS_EXIT_OK ? RS_EXIT_RUN_FAILED : code;
    }
    json_t *tj = json_object();
    ts->rows = json_array();
    json_object_set_new(tj, "topology", json_string(topo_names[ts->k]));
    json_object_set_new(tj, "time_of", json_string(what));
    json_object_set_new(tj, "fault_free_time_ps", json_integer((json_int_t)ts->t0));
    json_object_set_new(tj, "rows", ts->rows);
    json_array_append_new(arr, tj);
    return RS_EXIT_OK;
}

/* Every faulted trial is an independent run: ts->jobs gets one per count
 * and trial, count entries of --kind on --class at --at (else uniform
 * times before the fault-free run's end), with the trial's seed. An exit
 * code. */
static int trials_list(topo_sweep *ts)
{
    const sweep_opts *o = ts->o;
    rs_time at = 0, dur = 0;
    if (o->at)
        rs_fault_parse_time(o->at, &at);
    if (o->duration)
        rs_fault_parse_time(o->duration, &dur);
    rs_net_config nc;
    rs_scenario_net(ts->sc, &nc);
    /* "faults.schedule=" and a schedule as long as the key takes. */
    enum { PFX = 16, CAP = sizeof ((rs_fault_config *)0)->schedule };
    char set[PFX + CAP], seed_set[64];
    char *sets[2] = { set, seed_set };
    int code = RS_EXIT_OK;
    size_t nj = 0;
    for (int c = 0; c < o->ncounts && code == RS_EXIT_OK; c++)
        for (uint32_t t = 0; o->counts[c] && t < o->trials && code == RS_EXIT_OK; t++) {
            uint32_t count = o->counts[c];
            rs_job *j = &ts->jobs[nj++];
            uint64_t seed = trial_seed(nc.seed, count, t);
            rs_rng r;
            rs_rng_init(&r, seed, 0, 0x7133u);
            char *sched = set + PFX;
            size_t len = 0;
            memcpy(set, "faults.schedule=", PFX);
            sched[0] = '\0';
            for (uint32_t i = 0; i < count && len < CAP; i++) {
                rs_time when = o->at ? at : (rs_time)(rs_rng_unit(&r) * ts->t0);
                len += (size_t)snprintf(sched + len, CAP - len, "%s%llups %s %s", i ? ";" : "",
                                        (unsigned long long)when, o->kind, o->cls);
                if (o->duration && len < CAP)
                    len += (size_t)snprintf(sched + len, CAP - len, " %llups", (unsigned long long)dur);
            }
            snprintf(seed_set, sizeof seed_set, "faults.seed=%llu", (unsigned long long)seed);
            rs_err err;
            if (RS_NEVER(len >= CAP) || /* precheck sized the longest schedule */
                rs_scenario_clone(&j->sc, ts->sc, &err) != RS_OK || rs_scenario_set(j->sc, sets, 2, &err) != RS_OK)
                code = RS_EXIT_RUN_FAILED;
            j->quiet = 2;
            if (!o->quiet)
                snprintf(j->progress, sizeof j->progress, "railsim faults sweep: %s: %u fault(s), trial %u of %u",
                         topo_names[ts->k], count, t + 1, o->trials);
        }
    return code;
}

/* A trial's own entries as its summary s resolved them, not their
 * repairs: "targets" and "times_ps" of trial. RS_EXIT_OK, or
 * RS_EXIT_RUN_FAILED out of memory (nothing set). */
static int trial_faults(const sweep_opts *o, const json_t *s, uint32_t count, json_t *trial)
{
    json_t *targets = json_array(), *times = json_array();
    uint8_t *flap_seen = calloc(count, 1);
    if (!flap_seen) {
        json_decref(targets);
        json_decref(times);
        return RS_EXIT_RUN_FAILED;
    }
    const json_t *f;
    size_t i;
    json_array_foreach(json_object_get(s, "faults"), i, f) {
        /* Kind as given without "=VALUE". */
        const char *fk = json_string_value(json_object_get(f, "kind"));
        const char *org = json_string_value(json_object_get(f, "origin"));
        size_t fl = fk ? strlen(fk) : 0;
        /* A flap is listed by its first transition (summary entries of
         * one flap share `entry`, 1..count). */
        json_int_t entry = json_integer_value(json_object_get(f, "entry"));
        int flap_start = org && !strcmp(org, "flap") && fk && !strcmp(fk, "link-down") &&
                         !strncmp(o->kind, "link-flap", 9) && entry >= 1 && entry <= (json_int_t)count &&
                         !flap_seen[entry - 1]++;
        if (!flap_start && (!fk || strncmp(fk, o->kind, fl) || (o->kind[fl] != '\0' && o->kind[fl] != '=')))
            continue;
        json_array_append(targets, json_object_get(f, "target"));
        json_array_append(times, json_object_get(f, "time_ps"));
    }
    free(flap_seen);
    json_object_set_new(trial, "targets", targets);
    json_object_set_new(trial, "times_ps", times);
    return RS_EXIT_OK;
}

/* A row's line: unless quiet on stdout, and in sweep.md. */
static void row_print(const topo_sweep *ts, uint32_t count, uint32_t runs, const json_t *st, uint32_t done,
                      uint32_t stopped, uint32_t failed)
{
    char m[3][24];
    const char *keys[3] = { "median", "p95", "worst" };
    for (int q = 0; q < 3; q++) {
        const json_t *v = json_object_get(st, keys[q]);
        if (json_is_real(v))
            snprintf(m[q], sizeof m[q], "%.4fx", json_real_value(v));
        else
            snprintf(m[q], sizeof m[q], "-");
    }
    char tf[RS_FMT_LEN];
    rs_fmt_time(tf, sizeof tf, ts->t0);
    const char *topo = topo_names[ts->k];
    if (!ts->o->quiet)
        printf("  %-10s %6u %6u %13s %10s %10s %10s %9u %8u %7u\n", topo, count, runs, tf, m[0], m[1], m[2], done,
               stopped, failed);
    fprintf(ts->md, "| %s | %u | %u | %s | %s | %s | %s | %u | %u | %u |\n", topo, count, runs, tf, m[0], m[1],
            m[2], done, stopped, failed);
}

/* The row of `count` faults: each trial's status, seed, faults, time and
 * slowdown, read from the next jobs (count 0: the fault-free run itself);
 * how many completed, stopped or failed; the slowdowns' median, p95 and
 * worst. Appended to ts->rows and printed. An exit code. */
static int count_row(topo_sweep *ts, uint32_t count)
{
    uint32_t runs = count ? ts->o->trials : 1, done = 0, stopped = 0, failed = 0;
    json_t *row = json_object(), *tr = json_array();
    size_t nsl = 0;
    int code = RS_EXIT_OK;
    for (uint32_t t = 0; t < runs && code == RS_EXIT_OK; t++) {
        json_t *trial = json_object();
        if (count == 0) { /* no fault: the fault-free run itself */
            ts->sl[nsl++] = 1.0;
            done++;
            json_object_set_new(trial, "status", json_string("complete"));
            json_object_set_new(trial, "time_ps", json_integer((json_int_t)ts->t0));
            json_object_set_new(trial, "slowdown", json_real(1.0));
            json_array_append_new(tr, trial);
            continue;
        }
        rs_job *j = &ts->jobs[ts->next++];
        json_t *s = j->summary;
        j->summary = NULL;
        int rc = j->code;
        json_t *seed = rs_cli_key(j->sc, "faults.seed");
        json_object_set_new(trial, "seed", json_is_integer(seed) ? json_incref(seed) : json_null());
        json_decref(seed);
        if (trial_faults(ts->o, s, count, trial) != RS_EXIT_OK) {
            json_decref(trial);
            json_decref(s);
            code = RS_EXIT_RUN_FAILED;
            break;
        }
        const char *w;
        double tt = s ? rs_cli_headline_ps(s, &w) : -1;
        if (rc == RS_EXIT_OK && tt >= 0) {
            done++;
            ts->sl[nsl++] = tt / ts->t0;
            json_object_set_new(trial, "status", json_string("complete"));
            json_object_set_new(trial, "time_ps", json_integer((json_int_t)tt));
            json_object_set_new(trial, "slowdown", json_real(tt / ts->t0));
        } else if (rc == RS_EXIT_RUN_FAILED && s && json_object_get(s, "faults_stop")) {
            stopped++;
            json_object_set_new(trial, "status", json_string("stopped"));
            json_object_set(trial, "faults_stop", json_object_get(s, "faults_stop"));
        } else if (rc == RS_EXIT_RUN_FAILED) {
            failed++;
            json_object_set_new(trial, "status", json_string("failed"));
        } else {
            code = rc; /* bad input (a class this topology lacks, too few members) */
        }
        json_decref(s);
        json_array_append_new(tr, trial);
    }
    json_object_set_new(row, "count", json_integer(count));
    json_object_set_new(row, "runs", json_integer(runs));
    json_object_set_new(row, "completed", json_integer(done));
    json_object_set_new(row, "stopped", json_integer(stopped));
    json_object_set_new(row, "failed", json_integer(failed));
    json_t *st = stats(ts->sl, nsl);
    json_object_set_new(row, "slowdown", st);
    json_object_set_new(row, "trials", tr);
    json_array_append_new(ts->rows, row);
    row_print(ts, count, runs, st, done, stopped, failed);
    return code;
}

/* One topology: the baseline, then every count and trial. Appends the
 * topology's object to arr; prints its rows unless quiet. Exit code. */
static int sweep_topology(const sweep_opts *o, const rs_scenario *base, int k, json_t *arr, FILE *md)
{
    topo_sweep *ts = calloc(1, sizeof *ts);
    if (!ts)
        return RS_EXIT_RUN_FAILED;
    ts->o = o;
    ts->k = k;
    ts->md = md;
    int code = fault_free(ts, base, arr);
    if (code != RS_EXIT_OK) {
        rs_scenario_destroy(ts->sc);
        free(ts);
        return code;
    }
    for (int c = 0; c < o->ncounts; c++)
        ts->njobs += o->counts[c] ? o->trials : 0;
    ts->sl = malloc(((size_t)o->trials + 1) * sizeof *ts->sl);
    ts->jobs = ts->njobs ? calloc(ts->njobs, sizeof *ts->jobs) : NULL;
    if (!ts->sl || (ts->njobs && !ts->jobs))
        code = RS_EXIT_RUN_FAILED;
    if (code == RS_EXIT_OK)
        code = trials_list(ts);
    if (code == RS_EXIT_OK)
        code = rs_jobs_run(ts->jobs, ts->njobs, o->parallel, o->path);
    for (int c = 0; c < o->ncounts && code == RS_EXIT_OK; c++)
        code = count_row(ts, o->counts[c]);
    for (size_t i = 0; i < ts->njobs && ts->jobs; i++) {
        json_decref(ts->jobs[i].summary);
        rs_scenario_destroy(ts->jobs[i].sc);
    }
    free(ts->jobs);
    free(ts->sl);
    rs_scenario_destroy(ts->sc);
    free(ts);
    return code;
}

/* Before any run: the fault-free run of every topology swept checked as
 * it will run (RS_RUN_CHECK_ONLY: network, workload, captures), so a bad
 * input is said once, without a topology when every one refuses it
 * alike. Exit code. */
static int fault_free_check(const sweep_opts *o, const rs_scenario *base)
{
    rs_err e[2];
    int rc[2] = { RS_OK, RS_OK };
    for (int k = 0; k < 2; k++) {
        if (!(o->topo_mask & (1 << k)))
            continue;
        rs_scenario *sc = NULL;
        if ((rc[k] = fault_free_scenario(base, k, &sc, &e[k])) == RS_OK) {
            rs_run_opts ro;
            rs_run_opts_default(&ro);
            ro.name = o->path;
            ro.flags = RS_RUN_AS_FAULTED | RS_RUN_CHECK_ONLY;
            rs_result *res = NULL;
            rc[k] = rs_run_with(sc, &ro, &res, &e[k]);
            rs_result_destroy(res);
        }
        rs_scenario_destroy(sc);
    }
    const char *names[2] = { topo_names[0], topo_names[1] };
    return rs_cli_sides_said("faults sweep: ", names, rc, e);
}

/* Before any run: the largest count's schedule must resolve on every
 * topology swept (the class exists there and has enough members). Builds
 * each network once and throws it away. Exit code. */
static int precheck(const sweep_opts *o, const rs_scenario *base)
{
    uint32_t most = 0;
    for (int c = 0; c < o->ncounts; c++)
        most = o->counts[c] > most ? o->counts[c] : most;
    enum { PFX = 16, CAP = sizeof ((rs_fault_config *)0)->schedule };
    char set[PFX + CAP], kind[64];
    char *sched = set + PFX, *sets[2] = { kind, set };
    size_t len = 0;
    memcpy(set, "faults.schedule=", PFX);
    sched[0] = '\0';
    for (uint32_t i = 0; i < most && len < CAP; i++)
        len += (size_t)snprintf(sched + len, CAP - len, "%s0 %s %s%s%s", i ? ";" : "", o->kind, o->cls,
                                o->duration ? " " : "", o->duration ? o->duration : "");
    /* A trial writes its times in ps, up to 20 digits each: the longest
     * schedule it can write must fit too. */
    size_t widest = (size_t)snprintf(NULL, 0, ";%llups %s %s%s", ~0ull, o->kind, o->cls,
                                     o->duration ? " 18446744073709551615ps" : "");
    if (len >= CAP || (size_t)most * widest >= CAP) {
        char n[32];
        snprintf(n, sizeof n, "%u", most);
        return rs_cli_bad_input("faults sweep: --count: %s faults do not fit in one schedule (4095 characters); "
                                "expected fewer", n);
    }
    if (!strncmp(o->kind, "straggler", 9) && (o->kind[9] == '\0' || o->kind[9] == '=') && !rs_scenario_replays(base))
        return rs_cli_bad_input("faults sweep: --kind %s slows compute, but this scenario has none; expected "
                                "workload.plan or workload.trace", o->kind);
    for (int k = 0; k < 2; k++) {
        if (!(o->topo_mask & (1 << k)) || most == 0)
            continue;
        snprintf(kind, sizeof kind, "topology.kind=%s", topo_names[k]);
        rs_scenario *sc = NULL;
        rs_net *net = NULL;
        rs_err err;
        int rc = rs_scenario_clone(&sc, base, &err);
        if (rc == RS_OK && (rc = rs_scenario_set(sc, sets, 2, &err)) == RS_OK)
            rc = rs_scenario_net_create(sc, 0, &net, &err);
        rs_net_destroy(net);
        rs_scenario_destroy(sc);
        if (rc != RS_OK) {
            fprintf(stderr, "railsim: faults sweep: %s, %u x '%s %s': %s\n", topo_names[k], most, o->kind, o->cls,
                    err.msg);
            return rc == RS_ENOMEM ? RS_EXIT_RUN_FAILED : RS_EXIT_BAD_INPUT;
        }
    }
    return RS_EXIT_OK;
}

static int sweep(const sweep_opts *po, const rs_scenario *sc);

static int cmd_sweep(int argc, char **argv)
{
    sweep_opts o;
    memset(&o, 0, sizeof o);
    o.kind = "link-down";
    o.trials = 5;
    o.parallel = 1;
    o.topo_mask = 3;
    parse_counts("0,1,2,4", &o);
    int nsets = 0, code = RS_EXIT_OK;
    char **sets = calloc((size_t)argc + 1, sizeof *sets);
    if (!sets)
        return RS_EXIT_RUN_FAILED;
    for (int i = 0; i < argc && code == RS_EXIT_OK; i++) {
        const char *a = argv[i];
        int val = !strcmp(a, "--set") || !strcmp(a, "-s") || !strcmp(a, "-o") || !strcmp(a, "--kind") ||
                  !strcmp(a, "--class") || !strcmp(a, "--count") || !strcmp(a, "--trials") || !strcmp(a, "--at") ||
                  !strcmp(a, "--duration") || !strcmp(a, "--topology") || !strcmp(a, "-j");
        if (val && i + 1 >= argc) {
            code = rs_cli_bad_input("faults sweep: %s: expected a value after it", a);
            break;
        }
        const char *v = val ? argv[++i] : NULL;
        char *end;
        if (!strcmp(a, "--set") || !strcmp(a, "-s"))
            sets[nsets++] = (char *)v;
        else if (!strcmp(a, "-o"))
            o.outdir = v;
        else if (!strcmp(a, "--kind"))
            o.kind = v;
        else if (!strcmp(a, "--class"))
            o.cls = v;
        else if (!strcmp(a, "--at"))
            o.at = v;
        else if (!strcmp(a, "--duration"))
            o.duration = v;
        else if (!strcmp(a, "-j"))
            code = rs_jobs_parse("faults sweep", v, &o.parallel);
        else if (!strcmp(a, "--count") && parse_counts(v, &o) != 0)
            code = rs_cli_bad_input("faults sweep: --count '%s': expected a comma-separated list of counts from 0 "
                                    "to 4096 (at most 32)", v);
        else if (!strcmp(a, "--trials") && ((o.trials = (uint32_t)strtoul(v, &end, 10)) == 0 || *end || o.trials > 10000 || v[0] == '-'))
            code = rs_cli_bad_input("faults sweep: --trials '%s': expected a number from 1 to 10000", v);
        else if (!strcmp(a, "--topology")) {
            o.topo_mask = !strcmp(v, "rail-only") ? 1 : !strcmp(v, "fat-tree") ? 2 : !strcmp(v, "both") ? 3 : 0;
            if (!o.topo_mask)
                code = rs_cli_bad_input("faults sweep: --topology '%s': expected rail-only, fat-tree or both", v);
        } else if (!strcmp(a, "-q"))
            o.quiet = 1;
        else if (!val && a[0] == '-')
            code = rs_cli_bad_input("faults sweep: unknown option '%s'; expected --kind, --class, --count, --trials, "
                                    "--at, --duration, --topology, -j N, --set KEY=VALUE, -o DIR or -q", a);
        else if (!val && !o.path)
            o.path = a;
        else if (!val)
            code = rs_cli_bad_input("faults sweep: unexpected argument '%s'; expected at most one scenario file", a);
    }
    if (code == RS_EXIT_OK && !o.cls)
        code = rs_cli_bad_input("faults sweep: %sexpected --class CLASS (any-network-link, any-spine-link, "
                                "any-rail-uplink, any-spine, any-rail-switch, any-nic or any-gpu)", "");
    rs_scenario *sc = NULL;
    if (code == RS_EXIT_OK)
        code = rs_cli_load(o.path, sets, nsets, &sc);
    free(sets);
    if (code == RS_EXIT_OK)
        code = sweep(&o, sc);
    rs_scenario_destroy(sc);
    return code;
}

/* The sweep of scenario sc as o asks, its arguments read. An exit code. */
static int sweep(const sweep_opts *po, const rs_scenario *sc)
{
    sweep_opts o = *po;
    int code = RS_EXIT_OK;
    rs_err err;
    if (code == RS_EXIT_OK && strncmp(o.cls, "any-", 4))
        code = rs_cli_bad_input("faults sweep: --class '%s': expected a class (any-network-link, any-spine-link, "
                                "any-rail-uplink, any-spine, any-rail-switch, any-nic or any-gpu)", o.cls);
    json_t *given = rs_cli_key(sc, "faults.schedule");
    if (code == RS_EXIT_OK && json_string_length(given))
        code = rs_cli_bad_input("faults sweep: the scenario has faults.schedule '%.200s'; expected none (the sweep "
                                "makes each trial's schedule)", json_string_value(given));
    json_decref(given);
    /* The entry as a trial writes it, checked once here. */
    char probe[256];
    rs_time tmp;
    if (code == RS_EXIT_OK && ((o.at && rs_fault_parse_time(o.at, &tmp) != RS_OK) ||
                               (o.duration && (rs_fault_parse_time(o.duration, &tmp) != RS_OK || tmp == 0))))
        code = rs_cli_bad_input("faults sweep: --at / --duration '%s': expected a time with a unit (ps, ns, us, ms, "
                                "s), the duration above 0", o.at && rs_fault_parse_time(o.at, &tmp) != RS_OK
                                ? o.at : o.duration);
    if (code == RS_EXIT_OK) {
        snprintf(probe, sizeof probe, "0 %s %s%s%s", o.kind, o.cls, o.duration ? " " : "", o.duration ? o.duration : "");
        if (rs_fault_check(probe, "faults sweep --kind/--class/--duration", &err) != RS_OK) {
            fprintf(stderr, "railsim: %s\n", err.msg);
            code = RS_EXIT_BAD_INPUT;
        }
    }
    if (code == RS_EXIT_OK)
        code = fault_free_check(&o, sc);
    if (code == RS_EXIT_OK)
        code = precheck(&o, sc);
    if (code != RS_EXIT_OK)
        return code;

    char *mdtext = NULL;
    size_t mdlen = 0;
    FILE *md = open_memstream(&mdtext, &mdlen);
    if (!md)
        return RS_EXIT_RUN_FAILED;
    char wl[4096];
    const char *label = o.path ? o.path : rs_cli_workload_name(sc, wl, sizeof wl);
    rs_net_config nc;
    rs_scenario_net(sc, &nc);
    fprintf(md, "# railsim faults sweep\n\n%s: %s on %s%s%s, %s%s; %u trial(s) per count, seed %llu\n\n"
                "| topology | faults | runs | fault-free time | median slowdown | p95 | worst | completed | stopped | "
                "failed |\n|---|---|---|---|---|---|---|---|---|---|\n",
            label, o.kind, o.cls, o.duration ? " for " : "", o.duration ? o.duration : "",
            o.at ? "at " : "at times drawn in the fault-free run", o.at ? o.at : "", o.trials,
            (unsigned long long)nc.seed);
    if (!o.quiet)
        printf("railsim faults sweep: %s: %s on %s%s%s, %u trial(s) per count\n  %-10s %6s %6s %13s %10s %10s %10s %9s "
               "%8s %7s\n", label, o.kind, o.cls, o.duration ? " for " : "", o.duration ? o.duration : "", o.trials, "topology", "faults", "runs", "fault-free", "median", "p95",
               "worst", "completed", "stopped", "failed");
    json_t *root = json_object(), *arr = json_array();
    json_object_set_new(root, "format", json_string("railsim-faults-sweep"));
    json_object_set_new(root, "version", json_integer(1));
    json_object_set_new(root, "scenario", json_string(label));
    json_object_set_new(root, "kind", json_string(o.kind));
    json_object_set_new(root, "class", json_string(o.cls));
    rs_time t;
    json_object_set_new(root, "at_ps", o.at && rs_fault_parse_time(o.at, &t) == RS_OK ? json_integer((json_int_t)t)
                                                                                     : json_null());
    json_object_set_new(root, "duration_ps", o.duration && rs_fault_parse_time(o.duration, &t) == RS_OK
                                                 ? json_integer((json_int_t)t) : json_null());
    json_object_set_new(root, "trials", json_integer(o.trials));
    json_object_set_new(root, "seed", json_integer((json_int_t)nc.seed));
    json_object_set_new(root, "topologies", arr);
    for (int k = 0; k < 2 && code == RS_EXIT_OK; k++)
        if (o.topo_mask & (1 << k))
            code = sweep_topology(&o, sc, k, arr, md);
    fclose(md);
    if (code == RS_EXIT_OK && o.outdir && rs_jobs_root()) { /* under MPI, rank 0 writes the sweep */
        char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        const char *names[2] = { "sweep.json", "sweep.md" }, *datas[2] = { text, mdtext };
        size_t lens[2] = { text ? strlen(text) : 0, mdlen };
        if (!text || !mdtext || rs_output_mkdir(o.outdir, &err) != RS_OK ||
            rs_output_write_set(o.outdir, names, datas, lens, 2, &err) != RS_OK) {
            fprintf(stderr, "railsim: %s\n", text && mdtext ? err.msg : "out of memory writing the sweep");
            code = RS_EXIT_BAD_INPUT;
        }
        free(text);
    }
    free(mdtext);
    json_decref(root);
    return code;
}

int rs_cmd_faults(int argc, char **argv)
{
    if (argc >= 1 && !strcmp(argv[0], "sweep"))
        return cmd_sweep(argc - 1, argv + 1);
    return rs_cli_bad_input("faults: unknown subcommand '%s'; expected sweep", argc >= 1 ? argv[0] : "");
}
