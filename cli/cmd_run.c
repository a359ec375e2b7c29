/*
 * cmd_run.c - `railsim run`: build the scenario's network, start its
 * traffic or replay its workload (workload.plan / workload.trace, which
 * replace traffic.*), run to idle, print a human summary and write
 * DIR/summary.json, DIR/timeline.msgpack (timeline.*) and captures.
 * Validates everything before creating any output.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "fmt.h"
#include "guard.h"
#include "runner.h"
#include "collrun.h"
#include "output.h"
#include "replay.h"
#include "scenario.h"
#include "summary.h"
#include "synth.h"

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t peak_rss(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (uint64_t)ru.ru_maxrss * 1024u;
}

typedef struct progress {
    double t0;
    int shown;
    int show;   /* print a progress line (stderr is a terminal, not CI) */
    rs_sim *sim;
    double last; /* wall time of the last line */
    /* Where the end is known, the share done (rs_replay_progress,
     * rs_collrun_progress); both NULL for synthetic traffic. */
    const rs_replay *replay;
    const rs_collrun *coll;
} progress;

/* A progress line only for a person watching: stderr a terminal and not
 * a CI job (CI=true, as GitHub Actions and GitLab set it). */
static int progress_wanted(int quiet)
{
    const char *ci = getenv("CI");
    return !quiet && isatty(STDERR_FILENO) && !(ci && ci[0] && strcmp(ci, "0") && strcmp(ci, "false"));
}

/* SIGINT/SIGTERM: the handler only records the signal; the run loop's
 * progress hook (every 2^16 events) stops the run, which then closes its
 * outputs marked partial and exits 128 + the signal. */
static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
    got_signal = sig;
}

static void show_progress(void *ctx, rs_time now, uint64_t events)
{
    progress *p = ctx;
    if (RS_UNLIKELY(got_signal)) {
        rs_sim_stop(p->sim, RS_EINTR);
        return;
    }
    if (!p->show)
        return;
    double w = wall_now();
    if (w - p->last < 0.5) /* at most two lines a second */
        return;
    p->last = w;
    double frac = p->replay ? rs_replay_progress(p->replay) : p->coll ? rs_collrun_progress(p->coll) : -1.0;
    char line[160];
    /* \033[K clears what a longer previous line left. */
    fprintf(stderr, "\r%s\033[K", rs_fmt_progress(line, sizeof line, (double)now, events, w - p->t0, frac));
    p->shown = 1;
}

/* Create DIR/timeline.msgpack and make the network, the replay and the
 * collective driver write into it. On error nothing is left on disk,
 * *out is NULL and err says why. */
static int timeline_open(const rs_scenario *sc, rs_net *net, rs_replay *replay, rs_collrun *coll,
                         const char *outdir, rs_time sample_ps, rs_timeline **out, rs_err *err)
{
    *out = NULL;
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/timeline.msgpack", outdir) >= sizeof path)
        return rs_err_set(err, RS_EIO, "%.200s...: output directory name too long", outdir);
    json_t *j = rs_scenario_to_json(sc);
    char *text = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    if (!text)
        return rs_err_set(err, RS_ENOMEM, "out of memory writing the timeline header");
    rs_net_topo_info ti;
    rs_net_topo_info_get(net, &ti);
    const rs_timeline_kv topo[] = {
        { "gpus", sc->net.gpus },     { "hb_size", sc->net.hb_size }, { "switches", ti.switches_physical },
        { "switches_logical", ti.switches },
        { "links", ti.links },        { "tiers", ti.tiers },          { "planes", ti.planes },
    };
    /* trace_hash stays "": hashing the trace is not implemented yet. */
    rs_timeline_header h = { .railsim_version = NULL, .seed = sc->net.seed, .scenario_json = text,
                             .topology = topo, .n_topology = sizeof topo / sizeof topo[0],
                             .trace_hash = "" };
    rs_timeline *tl;
    int rc = rs_timeline_create(path, &h, &tl, err);
    free(text);
    if (rc != RS_OK)
        return rc;
    if (!sc->timeline.heavy)
        rs_timeline_set_enabled(tl, RS_TL_ALL & ~RS_TL_HEAVY);
    /* The mask is set first: the network starts its sampler only if the
     * timeline wants samples or ECN records. */
    rc = rs_net_timeline_start(net, tl, sample_ps, err);
    if (rc == RS_OK)
        rs_net_faults_timeline_catchup(net); /* faults due at time 0 applied before the timeline existed */
    if (rc == RS_OK && replay)
        rc = rs_replay_set_timeline(replay, tl, err);
    if (rc == RS_OK && coll)
        rc = rs_collrun_set_timeline(coll, tl, err);
    if (rc != RS_OK) {
        rs_net_timeline_stop(net);
        rs_timeline_abort(tl);
        return rc;
    }
    *out = tl;
    return RS_OK;
}

/* Formatted figures for one printf (fmt.h), in rotating buffers. */
static char *fb(void)
{
    static char bufs[12][RS_FMT_LEN];
    static unsigned k;
    return bufs[k++ % 12];
}
#define TIME(ps) rs_fmt_time(fb(), RS_FMT_LEN, (double)(ps))
#define BYTES(b) rs_fmt_bytes(fb(), RS_FMT_LEN, (double)(b))
#define JI(o, k) json_integer_value(json_object_get((o), (k)))

static void print_human(FILE *f, const json_t *s)
{
    const json_t *fl = json_object_get(s, "flows"), *pk = json_object_get(s, "packets");
    const json_t *fct = json_object_get(fl, "fct_ps"), *topo = json_object_get(s, "topology");
    long long sw = json_integer_value(json_object_get(topo, "switches"));
    long long lsw = json_integer_value(json_object_get(topo, "switches_logical"));
    printf("railsim run: %s, %lld GPUs, %lld switches", json_string_value(json_object_get(topo, "kind")),
           (long long)json_integer_value(json_object_get(topo, "gpus")), sw);
    if (lsw != sw) /* rails sharing switches: the simulator keeps one per rail */
        printf(" (%lld simulated, one per rail)", lsw);
    printf(" in %lld tier(s), %lld links\n", (long long)json_integer_value(json_object_get(topo, "tiers")),
           (long long)json_integer_value(json_object_get(topo, "links")));
    fprintf(f, "  flows      %lld of %lld completed, %s\n", (long long)JI(fl, "completed"), (long long)JI(fl, "count"),
            BYTES(JI(fl, "bytes")));
    if (json_is_integer(json_object_get(fct, "p50")))
        fprintf(f, "  FCT        min %s, p50 %s, p99 %s, max %s\n", TIME(JI(fct, "min")), TIME(JI(fct, "p50")),
                TIME(JI(fct, "p99")), TIME(JI(fct, "max")));
    const json_t *co = json_object_get(s, "collective");
    if (co) {
        const json_t *t = json_object_get(co, "time_ps");
        fprintf(f, "  collective %s (%s), %lld ranks, %s, %zu of %lld iteration(s)",
                json_string_value(json_object_get(co, "op")), json_string_value(json_object_get(co, "algo")),
                (long long)json_integer_value(json_object_get(co, "ranks")), BYTES(JI(co, "bytes")),
                json_array_size(json_object_get(co, "times_ps")),
                (long long)json_integer_value(json_object_get(co, "iters")));
        if (json_is_integer(t))
            fprintf(f, ": mean %s", TIME(json_integer_value(t)));
        if (json_is_real(json_object_get(co, "algbw_GBps")))
            fprintf(f, ", algbw %.2f GB/s, busbw %.2f GB/s",
                    json_real_value(json_object_get(co, "algbw_GBps")),
                    json_real_value(json_object_get(co, "busbw_GBps")));
        fputc('\n', f);
        const json_t *b = json_object_get(co, "bound_ps");
        if (json_is_integer(t) && json_integer_value(b) > 0)
            fprintf(f, "  bound      network-only %s; time over bound %.4fx\n", TIME(json_integer_value(b)),
                    (double)json_integer_value(t) / (double)json_integer_value(b));
    }
    const json_t *it = json_object_get(s, "iteration");
    if (it) {
        const json_t *t = json_object_get(it, "time_ps");
        fprintf(f, "  iteration  %s, %lld ranks, %zu of %lld iteration(s)", json_string_value(json_object_get(it, "name")),
                (long long)json_integer_value(json_object_get(it, "ranks")),
                json_array_size(json_object_get(it, "times_ps")),
                (long long)json_integer_value(json_object_get(it, "iterations")));
        if (json_is_integer(t)) {
            double tt = (double)json_integer_value(t);
            double c = (double)json_integer_value(json_object_get(json_object_get(it, "compute_ps"), "mean"));
            double e = (double)json_integer_value(json_object_get(json_object_get(it, "exposed_comm_ps"), "mean"));
            fprintf(f, ": mean %s, compute %s, exposed comm %s (%.1f %%)", TIME(tt), TIME(c), TIME(e),
                    tt > 0 ? 100.0 * e / tt : 0.0);
            if (json_is_real(json_object_get(it, "tokens_per_s")))
                fprintf(f, ", %.0f tokens/s", json_real_value(json_object_get(it, "tokens_per_s")));
            if (json_is_real(json_object_get(it, "mfu")))
                fprintf(f, ", MFU %.1f %%", 100.0 * json_real_value(json_object_get(it, "mfu")));
        }
        fputc('\n', f);
        const json_t *d = json_object_get(it, "comm_by_dim_ps");
        if (json_is_object(d)) {
            fprintf(f, "  exposed    by dimension:");
            const char *k;
            const json_t *v;
            /* One unit for the line: the exposed communication's. */
            double ref = (double)JI(json_object_get(it, "exposed_comm_ps"), "mean");
            json_object_foreach((json_t *)d, k, v)
                fprintf(f, " %s %s", k, rs_fmt_time_like(fb(), RS_FMT_LEN, (double)json_integer_value(v), ref));
            fputc('\n', f);
        }
        const json_t *b = json_object_get(it, "bound_ps");
        if (json_is_integer(b))
            fprintf(f, "  bound      network-only %s per iteration (rank %lld)\n", TIME(json_integer_value(b)),
                    (long long)json_integer_value(json_object_get(it, "bound_rank")));
    }
    fprintf(f, "  packets    %lld sent, %lld delivered, %lld dropped, %lld retransmitted\n",
            (long long)json_integer_value(json_object_get(pk, "sent")),
            (long long)json_integer_value(json_object_get(pk, "delivered")),
            (long long)json_integer_value(json_object_get(pk, "dropped")),
            (long long)json_integer_value(json_object_get(pk, "retransmitted")));
    /* Congestion control, when there was any (report prints them always). */
    const json_t *pfc = json_object_get(s, "pfc"), *ecn = json_object_get(s, "ecn"), *cnp = json_object_get(s, "cnp");
    if (JI(pfc, "pauses_sent") > 0)
        fprintf(f, "  PFC        %lld pauses, %lld resumes sent, ports paused %s in all\n",
                (long long)JI(pfc, "pauses_sent"), (long long)JI(pfc, "resumes_sent"), TIME(JI(pfc, "paused_ps")));
    if (JI(ecn, "marked") > 0)
        fprintf(f, "  ECN        %lld packets marked\n", (long long)JI(ecn, "marked"));
    if (JI(cnp, "sent") > 0 || JI(cnp, "received") > 0)
        fprintf(f, "  CNP        %lld sent, %lld received\n", (long long)JI(cnp, "sent"), (long long)JI(cnp, "received"));
    const json_t *ff = json_object_get(s, "fault_free");
    if (ff) {
        fprintf(f, "  faults     %zu entries; without them the %s takes ", json_array_size(json_object_get(s, "faults")),
                json_string_value(json_object_get(ff, "time_of")));
        if (json_is_real(json_object_get(ff, "slowdown")))
            fprintf(f, "%s: slowdown %.4fx\n", TIME(JI(ff, "time_ps")), json_real_value(json_object_get(ff, "slowdown")));
        else
            fprintf(f, "- (%s): no slowdown\n", json_string_value(json_object_get(ff, "status")));
    }
    fprintf(f, "  simulated  %s in %.3f s wall, %lld events, %lld packet-hops\n", TIME(JI(s, "sim_end_ps")),
            json_real_value(json_object_get(s, "wall_s")),
            (long long)json_integer_value(json_object_get(s, "events")),
            (long long)json_integer_value(json_object_get(s, "packet_hops")));
}

int rs_run_add_faults(rs_scenario *sc, char *const *faults, int n, rs_err *err)
{
    int rc = RS_OK;
    for (int i = 0; rc == RS_OK && i < n; i++) {
        size_t len = strlen(sc->faults.schedule);
        if ((rc = rs_fault_check(faults[i], "--fault", err)) == RS_OK &&
            len + strlen(faults[i]) + 2 >= sizeof sc->faults.schedule)
            rc = rs_err_set(err, RS_EINVAL, "--fault: the schedule is full; expected at most %zu characters "
                            "in all", sizeof sc->faults.schedule - 1);
        if (rc == RS_OK)
            snprintf(sc->faults.schedule + len, sizeof sc->faults.schedule - len, "%s%s", len ? ";" : "", faults[i]);
    }
    return rc;
}

int rs_run_faults_probe(const rs_scenario *sc, rs_topo_kind kind, rs_net **net, rs_err *err)
{
    rs_net_config c = sc->net;
    c.kind = kind;
    rs_err_clear(err);
    int rc = rs_net_create(&c, net, err);
    if (rc == RS_OK && (rc = rs_net_faults_start(*net, &sc->faults, err)) != RS_OK) {
        rs_net_destroy(*net);
        *net = NULL;
    }
    return rc;
}

/* The headline time of a run (summary): a training iteration, else a
 * collective, else the last activity; *what names it. -1 when absent. */
double rs_run_headline_ps(const json_t *s, const char **what)
{
    const json_t *v;
    if (json_object_get(s, "iteration")) {
        v = json_object_get(json_object_get(s, "iteration"), "time_ps");
        *what = "iteration";
    } else if (json_object_get(s, "collective")) {
        v = json_object_get(json_object_get(s, "collective"), "time_ps");
        *what = "collective";
    } else {
        v = json_object_get(s, "sim_end_ps");
        *what = "sim_end";
    }
    return json_is_integer(v) ? (double)json_integer_value(v) : -1;
}

/* docs/summary-format.md "fault_free": run sc without its faults (same
 * seed, quiet, no outputs) and add the figures and the slowdown to s.
 * Returns an exit code (a failed fault-free run is reported, not fatal to
 * the faulted run's summary: its object then has status "failed"). */
static int add_fault_free(json_t *s, const rs_scenario *sc, const char *path, int force)
{
    rs_scenario b = *sc;
    b.faults.schedule[0] = '\0';
    b.capture.ports[0] = '\0';
    json_t *bs = NULL;
    int code = rs_run_execute(&b, path, NULL, 1, force, &bs);
    json_t *o = json_object();
    const char *what, *what0;
    double t = rs_run_headline_ps(s, &what), t0 = bs ? rs_run_headline_ps(bs, &what0) : -1;
    json_object_set_new(o, "status", bs ? json_copy(json_object_get(bs, "status")) : json_string("failed"));
    json_object_set_new(o, "sim_end_ps", bs ? json_copy(json_object_get(bs, "sim_end_ps")) : json_null());
    json_object_set_new(o, "time_of", json_string(what));
    json_object_set_new(o, "time_ps", t0 >= 0 ? json_integer((json_int_t)t0) : json_null());
    json_object_set_new(o, "faulted_time_ps", t >= 0 ? json_integer((json_int_t)t) : json_null());
    json_object_set_new(o, "slowdown", t >= 0 && t0 > 0 ? json_real(t / t0) : json_null());
    json_object_set_new(s, "fault_free", o);
    json_decref(bs);
    return code;
}

int rs_cmd_run(int argc, char **argv)
{
    const char *path = NULL, *outdir = NULL, *capture = NULL;
    int quiet = 0, force = 0, nsets = 0, nfaults = 0;
    char **sets = calloc(2 * (size_t)argc + 1, sizeof *sets);
    if (!sets)
        return RS_EXIT_RUN_FAILED;
    char **faults = sets + argc; /* --fault strings: the second half */
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--set") || !strcmp(a, "-s")) {
            if (i + 1 >= argc) {
                free(sets);
                return rs_cli_bad_input("%s: expected KEY=VALUE after it", a);
            }
            sets[nsets++] = argv[++i];
        } else if (!strncmp(a, "--set=", 6)) {
            sets[nsets++] = argv[i] + 6;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--out")) {
            if (i + 1 >= argc) {
                free(sets);
                return rs_cli_bad_input("%s: expected an output directory after it", a);
            }
            outdir = argv[++i];
        } else if (!strcmp(a, "--fault")) {
            if (i + 1 >= argc) {
                free(sets);
                return rs_cli_bad_input("%s: expected \"TIME KIND TARGET [DURATION]\" after it", a);
            }
            faults[nfaults++] = argv[++i];
        } else if (!strcmp(a, "--capture")) {
            if (i + 1 >= argc) {
                free(sets);
                return rs_cli_bad_input("%s: expected a port name pattern after it", a);
            }
            capture = argv[++i];
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(a, "--force")) {
            force = 1;
        } else if (a[0] == '-' && a[1] != '\0') {
            free(sets);
            return rs_cli_bad_input("run: unknown option '%s'; expected --set KEY=VALUE, --fault SPEC, --capture PORTS, -o DIR or -q", a);
        } else if (!path) {
            path = a;
        } else {
            free(sets);
            return rs_cli_bad_input("run: unexpected argument '%s'; expected at most one scenario file", a);
        }
    }

    /* --capture P is --set capture.ports=P, applied last. */
    char capture_set[300];
    if (capture) {
        if ((size_t)snprintf(capture_set, sizeof capture_set, "capture.ports=%s", capture) >= sizeof capture_set) {
            free(sets);
            return rs_cli_bad_input("--capture: pattern too long ('%.40s...'); expected at most 255 characters", capture);
        }
        sets[nsets++] = capture_set;
    }
    rs_scenario sc;
    rs_err err;
    rs_err_clear(&err);
    int rc = rs_scenario_load(&sc, path, sets, nsets, &err);
    if (rc == RS_OK)
        rc = rs_run_add_faults(&sc, faults, nfaults, &err);
    free(sets);
    if (rc != RS_OK) {
        fprintf(stderr, "railsim: %s\n", err.msg);
        return RS_EXIT_BAD_INPUT;
    }
    if (sc.net.fidelity == RS_FIDELITY_BOTH)
        return rs_validate_execute(&sc, path, outdir, quiet, force);
    return rs_run_execute(&sc, path, outdir, quiet, force, NULL);
}

/* Setting up a run failed once its network and workload exist: print msg
 * (after the scenario's path when one is given), free them, return code. */
static int setup_failed(const char *path, const char *msg, rs_net *net, rs_collrun *coll, rs_replay *replay,
                        rs_trace *trace, int code)
{
    fprintf(stderr, "railsim: %s%s%s\n", path ? path : "", path ? ": " : "", msg);
    rs_net_destroy(net);
    rs_collrun_destroy(coll);
    rs_replay_destroy(replay);
    rs_trace_destroy(trace);
    return code;
}

int rs_run_execute(const rs_scenario *scp, const char *path, const char *outdir, int quiet,
                   int force, json_t **summary)
{
    rs_scenario sc = *scp;
    rs_err err;
    rs_err_clear(&err);
    int rc;
    if (summary)
        *summary = NULL;
    /* With faults, relays at flow level run as the packet level's chunk
     * pipelines: a failover keeps the chunks that crossed, and the
     * fault-free baseline (add_fault_free, faults sweep) relays the same
     * way, so a slowdown compares one model with itself. */
    if (sc.faults.schedule[0] || sc.faults.mtbf_us > 0)
        sc.net.relay_pipeline = 1;
    /* At flow level every port a flow crosses is sampled at every tick,
     * over runs of simulated seconds: unless given, every 1 ms there. */
    if (!sc.timeline.sample_set && sc.net.fidelity == RS_FIDELITY_FLOW)
        sc.timeline.sample_us = RS_FLOW_SAMPLE_US;
    /* The sampling interval: 0, or at least a nanosecond (a sampler event
     * every few picoseconds would only burn time). */
    rs_time sample_ps = 0;
    if (sc.timeline.sample_us > 0 &&
        (rs_time_from_us(sc.timeline.sample_us, &sample_ps) != RS_OK || sample_ps < 1000)) {
        fprintf(stderr, "railsim: %s%stimeline.sample_us: expected 0 (no samples) or at least 0.001 us, "
                        "got %g\n", path ? path : "", path ? ": " : "", sc.timeline.sample_us);
        return RS_EXIT_BAD_INPUT;
    }
    rs_guard_est est;
    if ((rc = rs_guard_check(&sc, NULL, force, &est, &err)) != RS_OK) {
        fprintf(stderr, "railsim: %s%s%s\n", path ? path : "", path ? ": " : "", err.msg);
        return RS_EXIT_BAD_INPUT;
    }
    rs_net *net = NULL;
    if ((rc = rs_net_create(&sc.net, &net, &err)) != RS_OK) {
        fprintf(stderr, "railsim: %s%s%s\n", path ? path : "", path ? ": " : "", err.msg);
        return rc == RS_ENOMEM ? RS_EXIT_RUN_FAILED : RS_EXIT_BAD_INPUT;
    }
    /* Faults first: one at time 0 comes before the traffic's first packet. */
    if ((rc = rs_net_faults_start(net, &sc.faults, &err)) != RS_OK) {
        fprintf(stderr, "railsim: %s%s%s\n", path ? path : "", path ? ": " : "", err.msg);
        rs_net_destroy(net);
        return rc == RS_ENOMEM ? RS_EXIT_RUN_FAILED : RS_EXIT_BAD_INPUT;
    }
    /* A straggler slows compute, and only a replayed workload computes. */
    for (uint32_t i = 0; !rs_workload_active(&sc.workload) && i < rs_net_fault_count(net); i++) {
        rs_net_fault_info fi;
        rs_net_fault_info_get(net, i, &fi);
        if (!strcmp(fi.kind, "straggler")) {
            fprintf(stderr, "railsim: %s%sfaults.schedule: straggler %s slows compute, but this scenario has "
                            "none; expected workload.plan or workload.trace\n", path ? path : "", path ? ": " : "",
                    fi.target);
            rs_net_destroy(net);
            return RS_EXIT_BAD_INPUT;
        }
    }
    /* The collective driver and the replay must be destroyed after the
     * network (a run that stopped early leaves collectives running), the
     * trace after the replay. A workload replaces the synthetic traffic. */
    rs_collrun *coll = NULL;
    rs_replay *replay = NULL;
    rs_trace *trace = NULL;
    if (rs_workload_active(&sc.workload)) {
        rc = rs_workload_load(&sc.workload, rs_net_gpus(net), &trace, &err);
        if (rc == RS_OK) {
            rs_replay_opts ro = { .iterations = sc.workload.iterations, .algo = sc.workload.algo, .coll = NULL };
            rc = rs_guard_check(&sc, trace, force, &est, &err);
            if (rc == RS_OK)
                rc = rs_replay_create(trace, net, &ro, &replay, &err);
        }
    } else if (sc.traffic.kind == RS_SYNTH_COLLECTIVE) {
        rc = rs_collrun_create(&sc.traffic, net, &coll, &err);
    } else {
        rc = rs_synth_start(&sc.traffic, net, sc.net.seed, &err);
    }
    if (rc != RS_OK) {
        fprintf(stderr, "railsim: %s%s%s\n", path ? path : "", path ? ": " : "", err.msg);
        rs_net_destroy(net);
        rs_trace_destroy(trace);
        return rc == RS_ENOMEM ? RS_EXIT_RUN_FAILED : RS_EXIT_BAD_INPUT;
    }
    uint32_t ncap = 0;
    if (sc.capture.ports[0]) {
        if (!outdir) {
            rs_net_destroy(net);
            rs_collrun_destroy(coll);
            rs_replay_destroy(replay);
            rs_trace_destroy(trace);
            return rs_cli_bad_input("capture.ports: '%s' asks for captures; expected an output directory (-o DIR)",
                             sc.capture.ports);
        }
        if (rs_net_capture_start(net, NULL, &sc.capture, &ncap, &err) != RS_OK)
            return setup_failed(path, err.msg, net, coll, replay, trace, RS_EXIT_BAD_INPUT);
    }
    if (rs_guard_disk(&sc, &est, outdir, force, &err) != RS_OK)
        return setup_failed(path, err.msg, net, coll, replay, trace, RS_EXIT_BAD_INPUT);
    /* Everything is validated: only now may the output directory appear. */
    char capdir[4096];
    if (outdir) {
        snprintf(capdir, sizeof capdir, "%s/pcap", outdir);
        if (rs_output_mkdir(outdir, &err) != RS_OK ||
            (ncap && (rs_output_mkdir(capdir, &err) != RS_OK ||
                      rs_net_capture_start(net, capdir, &sc.capture, &ncap, &err) != RS_OK)))
            return setup_failed(NULL, err.msg, net, coll, replay, trace, RS_EXIT_BAD_INPUT);
    }
    rs_timeline *tl = NULL;
    if (outdir && sc.timeline.enabled &&
        (rc = timeline_open(&sc, net, replay, coll, outdir, sample_ps, &tl, &err)) != RS_OK)
        /* Like an unwritable summary: the user's environment. */
        return setup_failed(NULL, err.msg, net, coll, replay, trace,
                            rc == RS_ENOMEM ? RS_EXIT_RUN_FAILED : RS_EXIT_BAD_INPUT);

    progress pr = { .t0 = wall_now(), .show = progress_wanted(quiet), .sim = rs_net_sim(net), .replay = replay,
                    .coll = coll };
    pr.last = pr.t0;
    rs_sim_set_progress(rs_net_sim(net), 1u << 16, show_progress, &pr);
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    got_signal = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    rs_run_info info = { .estimate = &est };
    info.status = rs_net_run(net, RS_TIME_MAX);
    if (got_signal && info.status == RS_OK)
        info.status = RS_EINTR; /* arrived after the last progress check */
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    info.wall_s = wall_now() - pr.t0;
    if (pr.shown)
        fputc('\n', stderr);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    if (info.status == RS_OK && st.msgs_done < st.msgs)
        info.status = RS_EINCOMPLETE;
    uint32_t iters_done = 0;
    rs_err rerr;
    rs_err_clear(&rerr);
    int rstatus = RS_OK;
    if (replay) {
        info.replay = replay;
        rstatus = rs_replay_finish(replay, &rerr);
        if (info.status == RS_OK)
            info.status = rstatus;
    }
    if (coll) {
        info.coll = coll;
        rs_collrun_times(coll, &iters_done);
        if (info.status == RS_OK && rs_collrun_status(coll) != RS_OK)
            info.status = rs_collrun_status(coll);
        if (info.status == RS_OK && iters_done < rs_collrun_iters(coll))
            info.status = RS_EINCOMPLETE;
    }
    info.peak_rss_bytes = peak_rss();
    if (ncap && rs_net_capture_finish(net, 1, &err) != RS_OK) {
        fprintf(stderr, "railsim: %s\n", err.msg);
        info.status = RS_EIO;
    }
    int code = 0;
    if (tl) {
        /* A failed run keeps its timeline, marked partial. */
        rs_net_timeline_stop(net);
        if (rs_timeline_close(tl, info.status != RS_OK, &err) != RS_OK) {
            fprintf(stderr, "railsim: %s\n", err.msg);
            code = RS_EXIT_BAD_INPUT;
        }
        tl = NULL;
    }

    json_t *s = rs_summary_build(&sc, net, &info);
    if (s && sc.faults.schedule[0] && sc.faults.baseline && info.status != RS_EINTR &&
        add_fault_free(s, &sc, path, force) != RS_EXIT_OK)
        fprintf(stderr, "railsim: the fault-free run (faults.baseline) failed; summary fault_free.status says so\n");
    if (!s) {
        fprintf(stderr, "railsim: out of memory building the summary\n");
        code = RS_EXIT_RUN_FAILED;
    } else {
        if (!quiet)
            print_human(stdout, s);
        if (outdir) {
            char *text = json_dumps(s, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
            if (!text) {
                fprintf(stderr, "railsim: out of memory writing the summary\n");
                code = RS_EXIT_RUN_FAILED;
            } else if (rs_output_write(outdir, "summary.json", text, strlen(text), &err) != RS_OK) {
                /* An output that cannot be written (full disk, read-only
                 * directory) is the user's environment: bad input. */
                fprintf(stderr, "railsim: %s\n", err.msg);
                code = RS_EXIT_BAD_INPUT;
            }
            free(text);
        }
        if (summary)
            *summary = s;
        else
            json_decref(s);
    }
    if (info.status == RS_EINTR && code == 0) {
        fprintf(stderr, "railsim: interrupted by %s at simulated time %s%s%s%s\n",
                got_signal == SIGTERM ? "SIGTERM" : "SIGINT", TIME(rs_net_now(net)),
                outdir ? "; " : "", outdir ? outdir : "", outdir ? " holds partial results" : "");
        code = 128 + (got_signal ? got_signal : SIGINT);
    } else if (info.status != RS_OK && code == 0) {
        if (info.status == RS_ENOMEM) /* before anything it left waiting looks stuck */
            fprintf(stderr, "railsim: run failed: out of memory at simulated time %s (%llu messages "
                            "sent); expected a smaller run, or fidelity=flow\n",
                    TIME(rs_net_now(net)), (unsigned long long)st.msgs);
        else if (rs_net_fault_errmsg(net)[0]) {
            /* The faults name the fault and the GPU pairs; the workload
             * adds the operation: what each blocked rank waits on (a
             * replay), or the collective. */
            char op[640] = "";
            if (replay && rstatus != RS_OK)
                snprintf(op, sizeof op, "; %s", rerr.msg);
            else if (coll)
                snprintf(op, sizeof op, "; operation: %s (%s) over %u ranks, %llu bytes, iteration %u of %u",
                         rs_coll_op_name(rs_collrun_op(coll)), rs_coll_algo_name(rs_collrun_algo(coll)),
                         rs_collrun_ranks(coll), (unsigned long long)rs_collrun_bytes(coll), iters_done + 1,
                         rs_collrun_iters(coll));
            if (quiet < 2)
                fprintf(stderr, "railsim: run stopped: %s%s\n", rs_net_fault_errmsg(net), op);
        }
        else if (replay && rstatus != RS_OK)
            fprintf(stderr, "railsim: run failed: %s\n", rerr.msg);
        else if (coll && rs_collrun_errmsg(coll)[0])
            fprintf(stderr, "railsim: run failed: %s\n", rs_collrun_errmsg(coll));
        else if (coll && info.status == RS_EINCOMPLETE && st.msgs_done == st.msgs)
            fprintf(stderr, "railsim: run ended after %u of %u collective iterations\n", iters_done,
                    rs_collrun_iters(coll));
        else if (info.status == RS_EINCOMPLETE)
            fprintf(stderr, "railsim: run ended with %llu of %llu messages undelivered (packets lost "
                            "without recovery, or no route); see summary packets.dropped\n",
                    (unsigned long long)(st.msgs - st.msgs_done), (unsigned long long)st.msgs);
        else
            fprintf(stderr, "railsim: run failed: %s\n", rs_strerror(info.status));
        code = RS_EXIT_RUN_FAILED;
    }
    rs_net_destroy(net);
    rs_collrun_destroy(coll);
    rs_replay_destroy(replay);
    rs_trace_destroy(trace);
    return code;
}

