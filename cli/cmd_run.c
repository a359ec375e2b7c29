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
    int show;   /* print a progress line (stderr is a terminal) */
    rs_sim *sim;
    unsigned calls;
} progress;

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
    if (!p->show || (++p->calls & 63) != 0) /* a line every 2^22 events */
        return;
    double el = wall_now() - p->t0;
    fprintf(stderr, "\r  simulated %.3f us, %llu events, %.2f M events/s   ",
            rs_time_to_us(now), (unsigned long long)events, el > 0 ? (double)events / el / 1e6 : 0.0);
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
    fprintf(f, "  flows      %lld of %lld completed, %lld bytes\n",
            (long long)json_integer_value(json_object_get(fl, "completed")),
            (long long)json_integer_value(json_object_get(fl, "count")),
            (long long)json_integer_value(json_object_get(fl, "bytes")));
    if (json_is_integer(json_object_get(fct, "p50")))
        fprintf(f, "  FCT        min %.3f us, p50 %.3f us, p99 %.3f us, max %.3f us\n",
                (double)json_integer_value(json_object_get(fct, "min")) / 1e6,
                (double)json_integer_value(json_object_get(fct, "p50")) / 1e6,
                (double)json_integer_value(json_object_get(fct, "p99")) / 1e6,
                (double)json_integer_value(json_object_get(fct, "max")) / 1e6);
    const json_t *co = json_object_get(s, "collective");
    if (co) {
        const json_t *t = json_object_get(co, "time_ps");
        fprintf(f, "  collective %s (%s), %lld ranks, %lld bytes, %zu of %lld iteration(s)",
                json_string_value(json_object_get(co, "op")), json_string_value(json_object_get(co, "algo")),
                (long long)json_integer_value(json_object_get(co, "ranks")),
                (long long)json_integer_value(json_object_get(co, "bytes")),
                json_array_size(json_object_get(co, "times_ps")),
                (long long)json_integer_value(json_object_get(co, "iters")));
        if (json_is_integer(t))
            fprintf(f, ": mean %.3f us", (double)json_integer_value(t) / 1e6);
        if (json_is_real(json_object_get(co, "algbw_gbps")))
            fprintf(f, ", algbw %.2f GB/s, busbw %.2f GB/s",
                    json_real_value(json_object_get(co, "algbw_gbps")),
                    json_real_value(json_object_get(co, "busbw_gbps")));
        fputc('\n', f);
        const json_t *b = json_object_get(co, "bound_ps");
        if (json_is_integer(t) && json_integer_value(b) > 0)
            fprintf(f, "  bound      network-only %.3f us; time over bound %.4fx\n",
                    (double)json_integer_value(b) / 1e6,
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
            fprintf(f, ": mean %.3f ms, compute %.3f ms, exposed comm %.3f ms (%.1f %%)", tt / 1e9, c / 1e9,
                    e / 1e9, tt > 0 ? 100.0 * e / tt : 0.0);
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
            json_object_foreach((json_t *)d, k, v)
                fprintf(f, " %s %.3f ms", k, (double)json_integer_value(v) / 1e9);
            fputc('\n', f);
        }
        const json_t *b = json_object_get(it, "bound_ps");
        if (json_is_integer(b))
            fprintf(f, "  bound      network-only %.3f ms per iteration (rank %lld)\n",
                    (double)json_integer_value(b) / 1e9, (long long)json_integer_value(json_object_get(it, "bound_rank")));
    }
    fprintf(f, "  packets    %lld sent, %lld delivered, %lld dropped, %lld retransmitted\n",
            (long long)json_integer_value(json_object_get(pk, "sent")),
            (long long)json_integer_value(json_object_get(pk, "delivered")),
            (long long)json_integer_value(json_object_get(pk, "dropped")),
            (long long)json_integer_value(json_object_get(pk, "retransmitted")));
    const json_t *ff = json_object_get(s, "fault_free");
    if (ff) {
        fprintf(f, "  faults     %zu entries; without them the %s takes ", json_array_size(json_object_get(s, "faults")),
                json_string_value(json_object_get(ff, "time_of")));
        if (json_is_real(json_object_get(ff, "slowdown")))
            fprintf(f, "%.3f us: slowdown %.4fx\n", (double)json_integer_value(json_object_get(ff, "time_ps")) / 1e6,
                    json_real_value(json_object_get(ff, "slowdown")));
        else
            fprintf(f, "- (%s): no slowdown\n", json_string_value(json_object_get(ff, "status")));
    }
    fprintf(f, "  simulated  %.3f us in %.3f s wall, %lld events, %lld packet-hops\n",
            (double)json_integer_value(json_object_get(s, "sim_end_ps")) / 1e6,
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

/* "KEY=VALUE" into buf (n bytes); 0 if it does not fit. */
static int as_set(char *buf, size_t n, const char *key, const char *value)
{
    return (size_t)snprintf(buf, n, "%s=%s", key, value) < n;
}

int rs_cmd_run(int argc, char **argv)
{
    const char *path = NULL, *outdir = NULL, *capture = NULL, *capfmt = NULL;
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
        } else if (!strcmp(a, "--capture-format")) {
            if (i + 1 >= argc) {
                free(sets);
                return rs_cli_bad_input("%s: expected pcap or pcapng after it", a);
            }
            capfmt = argv[++i];
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(a, "--force")) {
            force = 1;
        } else if (a[0] == '-' && a[1] != '\0') {
            free(sets);
            return rs_cli_bad_input("run: unknown option '%s'; expected --set KEY=VALUE, --fault SPEC, --capture PORTS, --capture-format FMT, -o DIR or -q", a);
        } else if (!path) {
            path = a;
        } else {
            free(sets);
            return rs_cli_bad_input("run: unexpected argument '%s'; expected at most one scenario file", a);
        }
    }

    /* --capture P and --capture-format F are --set capture.ports=P and
     * --set capture.format=F, applied last (a wrong format is named by
     * the scenario reader). */
    char capture_set[300], capfmt_set[64];
    if (capture && !as_set(capture_set, sizeof capture_set, "capture.ports", capture)) {
        free(sets);
        return rs_cli_bad_input("--capture: pattern too long ('%.40s...'); expected at most 255 characters", capture);
    }
    if (capfmt && !as_set(capfmt_set, sizeof capfmt_set, "capture.format", capfmt)) {
        free(sets);
        return rs_cli_bad_input("--capture-format: '%.20s...' is not a format; expected pcap or pcapng", capfmt);
    }
    if (capture)
        sets[nsets++] = capture_set;
    if (capfmt)
        sets[nsets++] = capfmt_set;
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

/* The pcapng section comment (docs/pcap.md, "Run metadata"): what made
 * this run, in lines a person reads in Wireshark's capture file
 * properties, then every setting as one line of JSON (the summary's
 * "scenario"). Nothing from the host or the clock, so the same inputs
 * give the same bytes. Caller frees; NULL when out of memory. */
static char *capture_comment(const rs_scenario *sc, const char *path)
{
    json_t *j = rs_scenario_to_json(sc);
    char *settings = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    if (!settings)
        return NULL;
    const char *fmt = "railsim %s run\nscenario: %s\nseed: %llu\nsettings: %s";
    const char *scen = path ? path : "(none: every key at its default)";
    unsigned long long seed = (unsigned long long)sc->net.seed;
    int n = snprintf(NULL, 0, fmt, RS_VERSION, scen, seed, settings);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s)
        snprintf(s, (size_t)n + 1, fmt, RS_VERSION, scen, seed, settings);
    free(settings);
    return s;
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
    char *cap_comment = NULL;
    if (sc.capture.ports[0]) {
        if (!outdir) {
            rs_net_destroy(net);
            rs_collrun_destroy(coll);
            rs_replay_destroy(replay);
            rs_trace_destroy(trace);
            return rs_cli_bad_input("capture.ports: '%s' asks for captures; expected an output directory (-o DIR)",
                             sc.capture.ports);
        }
        if (rs_net_capture_start(net, NULL, &sc.capture, NULL, &ncap, &err) != RS_OK)
            return setup_failed(path, err.msg, net, coll, replay, trace, RS_EXIT_BAD_INPUT);
        if (sc.capture.format == RS_CAPTURE_PCAPNG && !(cap_comment = capture_comment(&sc, path)))
            return setup_failed(NULL, "out of memory", net, coll, replay, trace, RS_EXIT_RUN_FAILED);
    }
    if (rs_guard_disk(&sc, &est, outdir, force, &err) != RS_OK) {
        free(cap_comment);
        return setup_failed(path, err.msg, net, coll, replay, trace, RS_EXIT_BAD_INPUT);
    }
    /* Everything is validated: only now may the output directory appear. */
    char capdir[4096];
    if (outdir) {
        snprintf(capdir, sizeof capdir, "%s/pcap", outdir);
        rc = rs_output_mkdir(outdir, &err);
        if (rc == RS_OK && ncap && (rc = rs_output_mkdir(capdir, &err)) == RS_OK)
            rc = rs_net_capture_start(net, capdir, &sc.capture, cap_comment, &ncap, &err);
        free(cap_comment);
        if (rc != RS_OK)
            return setup_failed(NULL, err.msg, net, coll, replay, trace, RS_EXIT_BAD_INPUT);
    }
    rs_timeline *tl = NULL;
    if (outdir && sc.timeline.enabled &&
        (rc = timeline_open(&sc, net, replay, coll, outdir, sample_ps, &tl, &err)) != RS_OK)
        /* Like an unwritable summary: the user's environment. */
        return setup_failed(NULL, err.msg, net, coll, replay, trace,
                            rc == RS_ENOMEM ? RS_EXIT_RUN_FAILED : RS_EXIT_BAD_INPUT);

    progress pr = { wall_now(), 0, !quiet && isatty(STDERR_FILENO), rs_net_sim(net), 0 };
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
        fprintf(stderr, "railsim: interrupted by %s at simulated time %.3f us%s%s%s\n",
                got_signal == SIGTERM ? "SIGTERM" : "SIGINT", rs_time_to_us(rs_net_now(net)),
                outdir ? "; " : "", outdir ? outdir : "", outdir ? " holds partial results" : "");
        code = 128 + (got_signal ? got_signal : SIGINT);
    } else if (info.status != RS_OK && code == 0) {
        if (info.status == RS_ENOMEM) /* before anything it left waiting looks stuck */
            fprintf(stderr, "railsim: run failed: out of memory at simulated time %.3f us (%llu messages "
                            "sent); expected a smaller run, or fidelity=flow\n",
                    rs_time_to_us(rs_net_now(net)), (unsigned long long)st.msgs);
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

