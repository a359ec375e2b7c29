/*
 * run.c - rs_run (run.h): one scenario end to end. Build the network,
 * resolve its faults, start the workload (synthetic traffic, a collective
 * or a training replay), run to idle, build the summary and write
 * DIR/summary.json, DIR/timeline.msgpack and captures. Everything is
 * checked before any output exists; nothing here prints: errors go to the
 * caller's rs_err, how the run ended to the result.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "collrun.h"
#include "fmt.h"
#include "guard.h"
#include "output.h"
#include "replay.h"
#include "runner.h"
#include "scenario.h"
#include "summary.h"
#include "synth.h"

struct rs_result {
    int status;
    int by_faults;
    char message[1024];
    char warning[160];
    char part_note[200];
    rs_summary_store store; /* everything summary.json holds */
    json_t *summary;        /* written from store.d */
    char *summary_text;
    rs_result_figures fig;
};

/* The headline time of a run: a training iteration, else a collective,
 * else the last activity; *what names it. -1 when absent. The same as
 * rs_run_headline_ps reads from summary.json. */
static double headline_of(const rs_result_data *d, const char **what)
{
    if (d->iteration) {
        *what = "iteration";
        return d->iteration->st.done ? (double)d->iteration->st.time_ps : -1;
    }
    if (d->collective) {
        *what = "collective";
        return d->collective->time_ps;
    }
    *what = "sim_end";
    return (double)d->sim_end_ps;
}

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

void rs_run_opts_default(rs_run_opts *o)
{
    memset(o, 0, sizeof *o);
}

/* The run loop's hook into the caller's progress callback. */
typedef struct progress {
    const rs_run_opts *o;
    rs_sim *sim;
    /* Where the end is known, the share done (rs_replay_progress,
     * rs_collrun_progress); both NULL for synthetic traffic. */
    const rs_replay *replay;
    const rs_collrun *coll;
} progress;

static void on_progress(void *ctx, rs_time now, uint64_t events)
{
    progress *p = ctx;
    if (!p->o->progress)
        return;
    double done = p->replay ? rs_replay_progress(p->replay) : p->coll ? rs_collrun_progress(p->coll) : -1.0;
    if (p->o->progress(p->o->ctx, now, events, done))
        rs_sim_stop(p->sim, RS_EINTR);
}

/* The kinds a scenario's timeline writes. */
static uint32_t tl_mask(const rs_scenario *sc)
{
    return sc->timeline.heavy ? RS_TL_ALL : RS_TL_ALL & ~RS_TL_HEAVY;
}

/* A split run's timeline: process r's part of it, DIR/.timeline.msgpack.partR. */
static void part_path(char *buf, size_t n, const char *outdir, uint32_t r)
{
    snprintf(buf, n, "%s/.timeline.msgpack.part%u", outdir, r);
}

/* A split run: this process's part, which its network writes into. */
static int timeline_part_open(const rs_scenario *sc, rs_net *net, const char *outdir, uint32_t rank,
                              rs_time sample_ps, rs_timeline **out, rs_err *err)
{
    char path[4200];
    part_path(path, sizeof path, outdir, rank);
    int rc = rs_net_timeline_part(net, path, tl_mask(sc), out, err);
    if (rc == RS_OK && (rc = rs_net_timeline_start(net, *out, sample_ps, err)) != RS_OK) {
        rs_timeline_abort(*out);
        *out = NULL;
    }
    return rc;
}

/* Create DIR/timeline.msgpack and make the network, the replay and the
 * collective driver write into it (a split run's network: into *part,
 * opened here for rank 0). On error nothing is left on disk, *out is NULL
 * and err says why. */
static int timeline_open(const rs_scenario *sc, rs_net *net, rs_replay *replay, rs_collrun *coll,
                         const char *outdir, rs_time sample_ps, rs_timeline **part, rs_timeline **out,
                         rs_err *err)
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
    rs_timeline_set_enabled(tl, tl_mask(sc));
    if (part) {
        /* Rank 0's part takes what the collective driver writes (its
         * iterations finish there, rs_collrun_part_finish). */
        if ((rc = timeline_part_open(sc, net, outdir, 0, sample_ps, part, err)) == RS_OK)
            rs_net_faults_timeline_catchup(net); /* as below; rank 0's part has the records */
        if (rc == RS_OK && ((coll && (rc = rs_collrun_set_timeline(coll, *part, err)) != RS_OK) ||
                            (replay && (rc = rs_replay_set_timeline_part(replay, *part, 1, err)) != RS_OK))) {
            rs_net_timeline_stop(net);
            rs_timeline_abort(*part);
            *part = NULL;
        }
        if (rc != RS_OK)
            rs_timeline_abort(tl);
        else
            *out = tl;
        return rc;
    }
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
 * seed, no outputs) and set res's fault-free figures and slowdown. A
 * failed fault-free run is reported, not fatal to the faulted run's
 * summary: its status is then "failed". Returns RS_OK if it ran. */
static int add_fault_free(rs_result *res, const rs_scenario *sc, int force)
{
    rs_scenario b = *sc;
    b.faults.schedule[0] = '\0';
    b.capture.ports[0] = '\0';
    rs_run_opts o;
    rs_run_opts_default(&o);
    o.force = force;
    rs_result *r = NULL;
    rs_err err;
    int rc = rs_run_with(&b, &o, &r, &err);
    const rs_result_data *bd = r ? &r->store.d : NULL;
    rs_result_fault_free *ff = &res->store.ff;
    const char *what0;
    double t = headline_of(&res->store.d, &ff->time_of), t0 = bd ? headline_of(bd, &what0) : -1;
    ff->status = bd ? bd->status : "failed"; /* string literals: they outlive r */
    ff->sim_end_ps = bd ? (double)bd->sim_end_ps : -1;
    ff->time_ps = t0;
    ff->faulted_time_ps = t;
    ff->slowdown = t >= 0 && t0 > 0 ? t / t0 : -1;
    res->store.d.fault_free = ff;
    if (rc == RS_OK && r->status != RS_OK)
        rc = r->status;
    rs_result_destroy(r);
    return rc;
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

/* Everything a run owns; destroyed in this order (the collective driver
 * and the replay after the network: a run that stopped early leaves
 * collectives running; the trace after the replay). */
typedef struct run {
    rs_net *net;
    rs_collrun *coll;
    rs_replay *replay;
    rs_trace *trace;
} run;

static void run_free(run *r)
{
    rs_net_destroy(r->net);
    rs_collrun_destroy(r->coll);
    rs_replay_destroy(r->replay);
    rs_trace_destroy(r->trace);
}

/* A setup error: err's message after the scenario's name (when given and
 * the error is about the scenario), everything freed, the code returned. */
static int setup_failed(run *r, const char *name, int rc, rs_err *err)
{
    if (name && err && err->msg[0]) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        rs_err_set(err, rc, "%s: %s", name, msg);
    }
    run_free(r);
    return rc == RS_ENOMEM ? RS_ENOMEM : rc == RS_EIO ? RS_EIO : RS_EINVAL;
}

static void timelines_abort(rs_net *net, rs_timeline *tl, rs_timeline *tlp)
{
    if (tl || tlp)
        rs_net_timeline_stop(net);
    rs_timeline_abort(tl);
    rs_timeline_abort(tlp);
}

/* Rank 0 of a split run, every part closed (all: by every process):
 * the parts into the timeline, in the serial run's order, then removed;
 * late: with rank 0's part of what it learnt at the end, the last one. */
static int timeline_merge(const rs_run_opts *o, rs_timeline *tl, int late, int all, int partial, rs_err *err)
{
    uint32_t R = o->part->ranks + (late ? 1 : 0);
    char (*paths)[4200] = calloc(R, sizeof *paths);
    const char **names = calloc(R, sizeof *names);
    int rc = paths && names ? RS_OK : rs_err_set(err, RS_ENOMEM, "out of memory merging the timeline");
    for (uint32_t r = 0; rc == RS_OK && r < R; r++) {
        part_path(paths[r], sizeof paths[r], o->outdir, r);
        names[r] = paths[r];
    }
    if (rc == RS_OK && !all)
        rc = rs_err_set(err, RS_EIO, "an MPI rank could not write its part of the timeline");
    if (rc == RS_OK)
        rc = rs_timeline_merge(tl, names, R, err);
    if (rc == RS_OK)
        rc = rs_timeline_close(tl, partial, err);
    else
        rs_timeline_abort(tl);
    for (uint32_t r = 0; paths && r < R; r++)
        unlink(paths[r]);
    free(paths);
    free(names);
    return rc == RS_OK ? RS_OK : RS_EIO;
}

/* A split run of a collective or a replay: rank 0 finishes its iteration
 * from every process's completions (rs_collrun_part_finish,
 * rs_replay_part_finish), before its timeline part closes. */
static int coll_merge(const rs_run_opts *o, rs_collrun *coll, rs_replay *replay, rs_timeline *late)
{
    uint32_t R = o->part->ranks;
    void *mine = NULL, *all = NULL;
    size_t n = 0;
    int rc = coll ? rs_collrun_part_pack(coll, &mine, &n) : rs_replay_part_pack(replay, &mine, &n);
    size_t *len = calloc(R, sizeof *len);
    const void **parts = calloc(R, sizeof *parts);
    if (rc != RS_OK || !len || !parts) {
        free(mine);
        free(len);
        free(parts);
        return RS_ENOMEM; /* the others wait in the gather: MPI aborts them */
    }
    rc = o->part->gather(o->part->ctx, mine, n, &all, len);
    if (rc == RS_OK && o->part->rank == 0) {
        size_t off = 0;
        for (uint32_t i = 0; i < R; i++) {
            parts[i] = (const char *)all + off;
            off += len[i];
        }
        if (late && coll)
            rs_collrun_timeline_move(coll, late);
        /* A part that did not survive the trip is ours to explain: internal. */
        int frc = coll ? rs_collrun_part_finish(coll, parts, len, R)
                       : rs_replay_part_finish(replay, parts, len, R, late);
        if (frc != RS_OK)
            rc = frc == RS_ENOMEM ? RS_ENOMEM : RS_EINTERNAL;
    }
    free(mine);
    free(all);
    free(len);
    free(parts);
    return rc;
}

/* A split run starts only if every process set up its part: one that
 * fails (rank 0's output directory, memory) says so to the others, which
 * would otherwise wait for it in the first window. Returns whether all
 * did; a process that failed passes ok = 0 and returns its own error. */
static int split_agree(const rs_run_opts *o, int split, int ok)
{
    if (!split)
        return ok;
    uint64_t failed = !ok;
    if (o->part->allreduce(o->part->ctx, &failed, 1, 1) != RS_OK)
        return 0;
    return failed == 0;
}

static int split_failed(const rs_run_opts *o, int split, run *r, const char *name, int rc, rs_err *err)
{
    split_agree(o, split, 0);
    return setup_failed(r, name, rc, err);
}

/* Why a run that did not end RS_OK ended so, into res->message. */
static void explain(rs_result *res, const run *r, const rs_net_stats *st, uint32_t iters_done, int rstatus,
                    const rs_err *rerr)
{
    char *m = res->message;
    size_t n = sizeof res->message;
    char now[RS_FMT_LEN];
    rs_fmt_time(now, sizeof now, (double)rs_net_now(r->net));
    if (res->status == RS_EINTR)
        snprintf(m, n, "interrupted at simulated time %s", now);
    else if (res->status == RS_ENOMEM) /* before anything it left waiting looks stuck */
        snprintf(m, n, "run failed: out of memory at simulated time %s (%llu messages sent); expected a "
                       "smaller run, or fidelity=flow", now, (unsigned long long)st->msgs);
    else if (rs_net_fault_errmsg(r->net)[0]) {
        /* The faults name the fault and the GPU pairs; the workload adds
         * the operation: what each blocked rank waits on (a replay), or
         * the collective. */
        char op[640] = "";
        if (r->replay && rstatus != RS_OK)
            snprintf(op, sizeof op, "; %s", rerr->msg);
        else if (r->coll)
            snprintf(op, sizeof op, "; operation: %s (%s) over %u ranks, %llu bytes, iteration %u of %u",
                     rs_coll_op_name(rs_collrun_op(r->coll)), rs_coll_algo_name(rs_collrun_algo(r->coll)),
                     rs_collrun_ranks(r->coll), (unsigned long long)rs_collrun_bytes(r->coll), iters_done + 1,
                     rs_collrun_iters(r->coll));
        snprintf(m, n, "run stopped: %s%s", rs_net_fault_errmsg(r->net), op);
        res->by_faults = 1;
    } else if (r->replay && rstatus != RS_OK)
        snprintf(m, n, "run failed: %s", rerr->msg);
    else if (r->coll && rs_collrun_errmsg(r->coll)[0])
        snprintf(m, n, "run failed: %s", rs_collrun_errmsg(r->coll));
    else if (r->coll && res->status == RS_EINCOMPLETE && st->msgs_done == st->msgs)
        snprintf(m, n, "run ended after %u of %u collective iterations", iters_done, rs_collrun_iters(r->coll));
    else if (res->status == RS_EINCOMPLETE)
        snprintf(m, n, "run ended with %llu of %llu messages undelivered (packets lost without recovery, or no "
                       "route); see summary packets.dropped",
                 (unsigned long long)(st->msgs - st->msgs_done), (unsigned long long)st->msgs);
    else if (!m[0])
        snprintf(m, n, "run failed: %s", rs_strerror(res->status));
}

/* The headline figures, from the summary. */
static void figures(rs_result *res)
{
    const rs_result_data *d = &res->store.d;
    rs_result_figures *f = &res->fig;
    f->sim_end_ps = d->sim_end_ps;
    f->wall_s = d->wall_s;
    f->events = d->events;
    f->packet_hops = d->net.packet_hops;
    f->peak_rss_bytes = d->peak_rss_bytes;
    f->time_ps = headline_of(d, &f->what);
    f->bound_ps = f->exposed_comm_ps = -1;
    if (d->iteration) {
        const rs_replay_stats *st = &d->iteration->st;
        if (st->bound_valid && st->bound_ps > 0)
            f->bound_ps = (double)st->bound_ps;
        if (st->done)
            f->exposed_comm_ps = (double)st->exposed_ps[0];
    } else if (d->collective && d->collective->bound_ps > 0) {
        f->bound_ps = d->collective->bound_ps;
    }
}

int rs_run(const rs_scenario *sc, rs_result **out, rs_err *err)
{
    rs_run_opts o;
    rs_run_opts_default(&o);
    return rs_run_with(sc, &o, out, err);
}

int rs_run_with(const rs_scenario *scp, const rs_run_opts *o, rs_result **out, rs_err *err)
{
    rs_err_clear(err);
    *out = NULL;
    rs_scenario sc = *scp;
    const char *name = o->name, *outdir = o->outdir;
    run r = { NULL, NULL, NULL, NULL };
    int rc;
    if (sc.fidelity == RS_LEVEL_BOTH)
        return rs_err_set(err, RS_EINVAL, "%s%sfidelity: 'both' is two runs (railsim validate); expected packet "
                          "or flow", name ? name : "", name ? ": " : "");
    /* With faults, relays at flow level run as the packet level's chunk
     * pipelines: a failover keeps the chunks that crossed, and the
     * fault-free baseline (add_fault_free, faults sweep) relays the same
     * way, so a slowdown compares one model with itself. */
    if (sc.faults.schedule[0] || sc.faults.mtbf_us > 0)
        sc.net.relay_pipeline = 1;
    /* Where transfers are rates (the flow level) every port a flow crosses
     * is sampled at every tick, over runs of simulated seconds: unless
     * given, every 1 ms there. */
    rs_net_traits nt;
    if (rs_net_config_traits(&sc.net, &nt) == RS_OK && !nt.packets && !sc.timeline.sample_set)
        sc.timeline.sample_us = RS_FLOW_SAMPLE_US;
    /* The sampling interval: 0, or at least a nanosecond (a sampler event
     * every few picoseconds would only burn time). */
    rs_time sample_ps = 0;
    if (sc.timeline.sample_us > 0 &&
        (rs_time_from_us(sc.timeline.sample_us, &sample_ps) != RS_OK || sample_ps < 1000))
        return rs_err_set(err, RS_EINVAL, "%s%stimeline.sample_us: expected 0 (no samples) or at least 0.001 us, "
                          "got %g", name ? name : "", name ? ": " : "", sc.timeline.sample_us);
    rs_guard_est est;
    if ((rc = rs_guard_check(&sc, NULL, o->force, &est, err)) != RS_OK)
        return setup_failed(&r, name, RS_EINVAL, err);
    if ((rc = rs_net_create(&sc.net, &r.net, err)) != RS_OK)
        return setup_failed(&r, name, rc, err);
    /* Faults first: one at time 0 comes before the traffic's first packet. */
    if ((rc = rs_net_faults_start(r.net, &sc.faults, err)) != RS_OK)
        return setup_failed(&r, name, rc, err);
    /* A straggler slows compute, and only a replayed workload computes. */
    for (uint32_t i = 0; !rs_workload_active(&sc.workload) && i < rs_net_fault_count(r.net); i++) {
        rs_net_fault_info fi;
        rs_net_fault_info_get(r.net, i, &fi);
        if (!strcmp(fi.kind, "straggler")) {
            rs_err_set(err, RS_EINVAL, "faults.schedule: straggler %s slows compute, but this scenario has none; "
                       "expected workload.plan or workload.trace", fi.target);
            return setup_failed(&r, name, RS_EINVAL, err);
        }
    }
    /* A workload replaces the synthetic traffic. */
    if (rs_workload_active(&sc.workload)) {
        rc = rs_workload_load(&sc.workload, rs_net_gpus(r.net), &r.trace, err);
        if (rc == RS_OK) {
            rs_replay_opts ro = { .iterations = sc.workload.iterations, .algo = sc.workload.algo, .coll = NULL,
                                  .sync = sc.workload.sync };
            rc = rs_guard_check(&sc, r.trace, o->force, &est, err);
            if (rc == RS_OK)
                rc = rs_replay_create(r.trace, r.net, &ro, &r.replay, err);
        }
    } else if (sc.traffic.kind == RS_SYNTH_COLLECTIVE) {
        rc = rs_collrun_create(&sc.traffic, r.net, &r.coll, err);
    } else {
        rc = rs_synth_start(&sc.traffic, r.net, sc.net.seed, err);
    }
    if (rc != RS_OK)
        return setup_failed(&r, name, rc, err);
    uint32_t ncap = 0;
    char *cap_comment = NULL;
    if (sc.capture.ports[0]) {
        if (!outdir) {
            rs_err_set(err, RS_EINVAL, "capture.ports: '%s' asks for captures; expected an output directory (-o DIR)",
                       sc.capture.ports);
            return setup_failed(&r, NULL, RS_EINVAL, err);
        }
        if (rs_net_capture_start(r.net, NULL, &sc.capture, NULL, &ncap, err) != RS_OK)
            return setup_failed(&r, name, RS_EINVAL, err);
        if (sc.capture.format == RS_CAPTURE_PCAPNG && !(cap_comment = capture_comment(&sc, name))) {
            rs_err_set(err, RS_ENOMEM, "out of memory");
            return setup_failed(&r, NULL, RS_ENOMEM, err);
        }
    }
    /* A partitioned run (o->part): decided alike in every process, from
     * the scenario and whether outputs were asked, not from the rank. */
    char part_why[200] = "";
    int split = 0; /* from rs_net_part_start on: every process agrees before the run */
    if (o->part && o->part->ranks > 1) {
        char cwhy[160];
        if (r.replay && !rs_replay_splits(r.replay, cwhy, sizeof cwhy))
            snprintf(part_why, sizeof part_why, "the workload: %s", cwhy);
        else if (r.coll && !rs_collrun_splits(r.coll, cwhy, sizeof cwhy))
            snprintf(part_why, sizeof part_why, "the collective: %s", cwhy);
        else
            rs_net_part_possible(r.net, part_why, sizeof part_why);
        if (part_why[0] && o->part->rank != 0) {
            free(cap_comment);
            run_free(&r);
            return RS_OK; /* rank 0 runs it alone; *out stays NULL here */
        }
        split = !part_why[0];
        if (split && (rc = rs_net_part_start(r.net, o->part, err)) != RS_OK) {
            free(cap_comment);
            return split_failed(o, split, &r, name, rc, err);
        }
        if (o->part->rank != 0)
            outdir = NULL; /* rank 0 writes; each process adds its ports' captures and its part of the timeline */
    }
    if (rs_guard_disk(&sc, &est, outdir, o->force, err) != RS_OK) {
        free(cap_comment);
        return split_failed(o, split, &r, name, RS_EINVAL, err);
    }
    /* Everything is validated: only now may the output directory appear.
     * An output that cannot be created is the user's environment: bad
     * input, like a bad key. */
    char capdir[4096];
    if (outdir) {
        snprintf(capdir, sizeof capdir, "%s/pcap", outdir);
        rc = rs_output_mkdir(outdir, err);
        if (rc == RS_OK && ncap && (rc = rs_output_mkdir(capdir, err)) == RS_OK)
            rc = rs_net_capture_start(r.net, capdir, &sc.capture, cap_comment, &ncap, err);
        if (rc != RS_OK) {
            free(cap_comment);
            return split_failed(o, split, &r, NULL, RS_EINVAL, err);
        }
    }
    free(cap_comment);
    rs_timeline *tl = NULL, *tlp = NULL; /* the timeline; a split run's part of it */
    int want_tl = o->outdir && sc.timeline.enabled;
    if (outdir && want_tl &&
        (rc = timeline_open(&sc, r.net, r.replay, r.coll, outdir, sample_ps, split ? &tlp : NULL, &tl, err)) != RS_OK)
        return split_failed(o, split, &r, NULL, rc == RS_ENOMEM ? RS_ENOMEM : RS_EINVAL, err);

    rs_result *res = calloc(1, sizeof *res);
    if (!res) {
        timelines_abort(r.net, tl, tlp);
        rs_err_set(err, RS_ENOMEM, "out of memory starting the run");
        return split_failed(o, split, &r, NULL, RS_ENOMEM, err);
    }
    int agreed = split_agree(o, split, 1);
    if (agreed && split && (ncap || want_tl)) {
        /* Rank 0 made the output directory: the others open their ports'
         * capture files (or their part of the pcapng) and their part of
         * the timeline in it. */
        int mine = RS_OK;
        if (o->part->rank != 0 && ncap) {
            char pdir[4096];
            snprintf(pdir, sizeof pdir, "%s/pcap", o->outdir);
            mine = rs_net_capture_start(r.net, pdir, &sc.capture, NULL, &ncap, err);
        }
        if (o->part->rank != 0 && want_tl && mine == RS_OK)
            mine = timeline_part_open(&sc, r.net, o->outdir, o->part->rank, sample_ps, &tlp, err);
        if (o->part->rank != 0 && tlp && r.replay && mine == RS_OK)
            mine = rs_replay_set_timeline_part(r.replay, tlp, 0, err);
        agreed = split_agree(o, split, mine == RS_OK);
    }
    if (!agreed) {
        /* Another process could not start its part; it says why. */
        rs_result_destroy(res);
        timelines_abort(r.net, tl, tlp);
        rs_err_set(err, RS_EIO, "another MPI rank could not start its part of the run");
        return setup_failed(&r, NULL, RS_EIO, err);
    }
    snprintf(res->part_note, sizeof res->part_note, "%s", part_why);
    progress pr = { o, rs_net_sim(r.net), r.replay, r.coll };
    if (!o->part || o->part->rank == 0)
        rs_sim_set_progress(rs_net_sim(r.net), 1u << 16, on_progress, &pr);
    double t0 = wall_now();
    rs_run_info info = { .estimate = &est };
    info.status = rs_net_run(r.net, RS_TIME_MAX);
    info.wall_s = wall_now() - t0;
    /* What rank 0 learns at the end (a split collective's completion) is
     * written into a part of its own, DIR/.timeline.msgpack.partR with R
     * the number of ranks: rank 0's part is in key order already. */
    rs_timeline *tll = NULL;
    if (split && (r.coll || r.replay)) {
        char lpath[4200];
        if (tl)
            part_path(lpath, sizeof lpath, o->outdir, o->part->ranks);
        rs_err lerr;
        int lrc = tl ? rs_net_timeline_part(r.net, lpath, tl_mask(&sc), &tll, &lerr) : RS_OK;
        int mrc = coll_merge(o, r.coll, r.replay, tll);
        if ((mrc != RS_OK || lrc != RS_OK) && info.status == RS_OK)
            info.status = lrc != RS_OK ? RS_EIO : mrc;
    }
    rs_net_stats st;
    rs_net_stats_get(r.net, &st);
    if (info.status == RS_OK && st.msgs_done < st.msgs)
        info.status = RS_EINCOMPLETE;
    uint32_t iters_done = 0;
    rs_err rerr;
    rs_err_clear(&rerr);
    int rstatus = RS_OK;
    if (r.replay) {
        info.replay = r.replay;
        rstatus = rs_replay_finish(r.replay, &rerr);
        if (info.status == RS_OK)
            info.status = rstatus;
    }
    if (r.coll) {
        info.coll = r.coll;
        rs_collrun_times(r.coll, &iters_done);
        if (info.status == RS_OK && rs_collrun_status(r.coll) != RS_OK)
            info.status = rs_collrun_status(r.coll);
        if (info.status == RS_OK && iters_done < rs_collrun_iters(r.coll))
            info.status = RS_EINCOMPLETE;
    }
    rs_err cerr;
    rs_err_clear(&cerr);
    if (ncap && rs_net_capture_finish(r.net, 1, &cerr) != RS_OK) {
        info.status = RS_EIO;
        snprintf(res->message, sizeof res->message, "%s", cerr.msg);
    }
    int code = RS_OK;
    if (tlp) {
        /* A split run: every part closed, then rank 0 merges them. */
        rs_net_timeline_stop(r.net);
        int mine = rs_timeline_close(tlp, 0, err) == RS_OK;
        if (tll && rs_timeline_close(tll, 0, err) != RS_OK)
            mine = 0;
        int all = split_agree(o, split, mine);
        if (tl)
            code = timeline_merge(o, tl, tll != NULL, all, info.status != RS_OK, err);
    } else if (tl) {
        /* A failed run keeps its timeline, marked partial. */
        rs_net_timeline_stop(r.net);
        if (rs_timeline_close(tl, info.status != RS_OK, err) != RS_OK)
            code = RS_EIO;
    }

    if (o->part && o->part->rank != 0 && !part_why[0]) {
        /* Its part is merged into rank 0's network, which reports. */
        rs_result_destroy(res);
        run_free(&r);
        return info.status == RS_OK || info.status == RS_EINCOMPLETE ? RS_OK : info.status;
    }
    res->status = info.status;
    int collected = rs_summary_collect(&sc, r.net, &info, &res->store) == RS_OK;
    if (collected && sc.faults.schedule[0] && sc.faults.baseline && info.status != RS_EINTR &&
        add_fault_free(res, &sc, o->force) != RS_OK)
        snprintf(res->warning, sizeof res->warning,
                 "the fault-free run (faults.baseline) failed; summary fault_free.status says so");
    /* The peak is read once the summary's big part (the ports) exists:
     * what it costs counts, only the final copy of its text does not. */
    if (collected && o->part && o->part->ranks > 1 && !part_why[0]) {
        res->store.d.parallel_valid = 1;
        rs_net_part_stats_get(r.net, &res->store.d.parallel);
    }
    char *ports = collected ? rs_summary_ports_text(&res->store.d) : NULL;
    res->store.d.peak_rss_bytes = peak_rss();
    if (ports)
        res->summary = rs_summary_json(&sc, &res->store.d);
    if (res->summary)
        res->summary_text = rs_summary_text(res->summary, ports);
    free(ports);
    if (!res->summary_text) {
        rs_result_destroy(res);
        rs_err_set(err, RS_ENOMEM, "out of memory building the summary");
        run_free(&r);
        return RS_ENOMEM;
    }
    figures(res);
    if (code == RS_OK && outdir &&
        rs_output_write(outdir, "summary.json", res->summary_text, strlen(res->summary_text), err) != RS_OK)
        code = RS_EIO;
    if (res->status != RS_OK)
        explain(res, &r, &st, iters_done, rstatus, &rerr);
    run_free(&r);
    *out = res;
    return code;
}

void rs_result_destroy(rs_result *r)
{
    if (!r)
        return;
    json_decref(r->summary);
    free(r->summary_text);
    rs_summary_store_free(&r->store);
    free(r);
}

int rs_result_status(const rs_result *r) { return r->status; }
const char *rs_result_message(const rs_result *r) { return r->message; }
const char *rs_result_warning(const rs_result *r) { return r->warning; }
const char *rs_result_parallel_note(const rs_result *r) { return r->part_note; }
int rs_result_stopped_by_faults(const rs_result *r) { return r->by_faults; }
void rs_result_figures_get(const rs_result *r, rs_result_figures *out) { *out = r->fig; }
const char *rs_result_summary_json(const rs_result *r) { return r->summary_text; }
const json_t *rs_result_summary(const rs_result *r) { return r->summary; }
const rs_result_data *rs_result_data_get(const rs_result *r) { return &r->store.d; }
