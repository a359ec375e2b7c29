/*
 * run.c - rs_run (run.h): one scenario end to end. Build the network,
 * resolve its faults, start the workload (synthetic traffic, a collective
 * or a training replay), run to idle, build the summary and write
 * DIR/summary.json, DIR/timeline.msgpack and captures. Everything is
 * checked before any output exists; nothing here prints: errors go to the
 * caller's rs_err, how the run ended to the result. A run split over MPI
 * processes (rs_run_opts.part) is run_split.c's; each step of a run takes
 * the run's context (run_split.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "fmt.h"
#include "output.h"
#include "run_split.h"
#include "gpu.h"
#include "versioned.h"
#include "synth.h"

struct rs_result {
    int status;
    int by_faults;
    char message[1024];
    char warning[160];
    json_t *jobs;           /* a shared cluster's jobs (summary.json "jobs"), NULL: none */
    char part_note[200];
    rs_summary_store store; /* everything summary.json holds */
    json_t *summary;        /* written from store.d */
    char *summary_text;
    rs_result_figures fig;
};

/* The headline time of a run: a training iteration, else a collective,
 * else the last activity; *what names it. -1 when absent. The same as
 * rs_summary_headline reads from summary.json. */
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

uint64_t rs_run_peak_rss(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (uint64_t)ru.ru_maxrss * 1024u;
}

void rs_run_opts_init(rs_run_opts *o, size_t size)
{
    rs_run_opts d;
    memset(&d, 0, sizeof d);
    rs_versioned_give(o, size, &d, sizeof d);
}

/* The run loop's hook into the caller's progress callback (ctx: the
 * run): where the end is known, the share done (rs_replay_progress,
 * rs_collrun_progress); -1 for synthetic traffic. */
static void on_progress(void *ctx, rs_time now, uint64_t events)
{
    rs_run_ctx *r = ctx;
    if (!r->o->progress)
        return;
    double done = r->replay ? rs_replay_progress(r->replay) : r->coll ? rs_collrun_progress(r->coll) : -1.0;
    if (r->o->progress(r->o->ctx, now, events, done))
        rs_sim_stop(rs_net_sim(r->net), RS_EINTR);
}

/* Create DIR/timeline.msgpack (r->tl) and make the network, the replay and
 * the collective driver write into it (a split run's network: into r->tlp,
 * opened here for rank 0). On error nothing is left on disk, r->tl and
 * r->tlp are NULL and err says why. */
static int timeline_open(rs_run_ctx *r, rs_err *err)
{
    const rs_scenario *sc = &r->sc;
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/timeline.msgpack", r->outdir) >= sizeof path)
        return rs_err_set(err, RS_EIO, "%.200s...: output directory name too long", r->outdir);
    json_t *j = rs_scenario_to_json(sc);
    char *text = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    if (!text)
        return rs_err_set(err, RS_ENOMEM, "out of memory writing the timeline header");
    rs_net_topo_info ti;
    rs_net_topo_info_get(r->net, &ti);
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
    rs_timeline_set_enabled(tl, rs_run_tl_mask(sc));
    if (r->split) {
        /* Rank 0's part takes what the collective driver writes (its
         * iterations finish there, rs_collrun_part_finish). */
        if ((rc = rs_split_part_open(r, 0, &r->tlp, err)) == RS_OK)
            rs_net_faults_timeline_catchup(r->net); /* as below; rank 0's part has the records */
        if (rc == RS_OK && ((r->coll && (rc = rs_collrun_set_timeline(r->coll, r->tlp, err)) != RS_OK) ||
                            (r->replay && (rc = rs_replay_set_timeline_part(r->replay, r->tlp, 1, err)) != RS_OK))) {
            rs_net_timeline_stop(r->net);
            rs_timeline_abort(r->tlp);
            r->tlp = NULL;
        }
        if (rc != RS_OK)
            rs_timeline_abort(tl);
        else
            r->tl = tl;
        return rc;
    }
    /* The mask is set first: the network starts its sampler only if the
     * timeline wants samples or ECN records. */
    rc = rs_net_timeline_start(r->net, tl, r->sample_ps, err);
    if (rc == RS_OK)
        rs_net_faults_timeline_catchup(r->net); /* faults due at time 0 applied before the timeline existed */
    if (rc == RS_OK && r->replay)
        rc = rs_replay_set_timeline(r->replay, tl, err);
    if (rc == RS_OK && r->jobs)
        rc = rs_run_jobs_timeline(r, tl, err);
    if (rc == RS_OK && r->coll)
        rc = rs_collrun_set_timeline(r->coll, tl, err);
    if (rc != RS_OK) {
        rs_net_timeline_stop(r->net);
        rs_timeline_abort(tl);
        return rc;
    }
    r->tl = tl;
    return RS_OK;
}

int rs_scenario_add_faults(rs_scenario *sc, char *const *faults, int n, rs_err *err)
{
    rs_err_clear(err);
    char *sched = sc->faults.schedule;
    size_t len0 = strlen(sched), cap = sizeof sc->faults.schedule;
    int rc = RS_OK;
    for (int i = 0; rc == RS_OK && i < n; i++) {
        size_t len = strlen(sched);
        if (strchr(faults[i], ';') || strspn(faults[i], " \t") == strlen(faults[i]))
            rc = rs_err_set(err, RS_EINVAL, "--fault: expected one entry TIME KIND TARGET [DURATION] "
                            "(docs/faults-format.md), got '%.80s'", faults[i]);
        else if ((rc = rs_fault_check(faults[i], "--fault", err)) == RS_OK && len + strlen(faults[i]) + 2 >= cap)
            rc = rs_err_set(err, RS_EINVAL, "--fault: the schedule is full; expected at most %zu characters "
                            "in all", cap - 1);
        if (rc == RS_OK)
            snprintf(sched + len, cap - len, "%s%s", len ? ";" : "", faults[i]);
    }
    if (rc != RS_OK)
        sched[len0] = '\0'; /* unchanged */
    return rc;
}

int rs_scenario_net_create(const rs_scenario *sc, unsigned flags, rs_net **net, rs_err *err)
{
    rs_err_clear(err);
    *net = NULL;
    rs_fault_config fc = sc->faults;
    fc.absent_ok = fc.absent_ok || (flags & RS_RUN_FAULTS_ABSENT_OK);
    int rc = rs_net_create(&sc->net, net, err);
    if (rc == RS_OK && (rc = rs_net_faults_start(*net, &fc, err)) != RS_OK) {
        rs_net_destroy(*net);
        *net = NULL;
    }
    return rc;
}

int rs_summary_headline(const char *summary_json, const char **what, double *time_ps)
{
    json_t *s = summary_json ? json_loads(summary_json, 0, NULL) : NULL;
    *what = "sim_end";
    *time_ps = -1;
    if (!json_is_object(s)) {
        json_decref(s);
        return RS_EINVAL;
    }
    const json_t *v;
    if (json_object_get(s, "iteration")) {
        v = json_object_get(json_object_get(s, "iteration"), "time_ps");
        *what = "iteration";
    } else if (json_object_get(s, "collective")) {
        v = json_object_get(json_object_get(s, "collective"), "time_ps");
        *what = "collective";
    } else {
        v = json_object_get(s, "sim_end_ps");
    }
    *time_ps = json_is_integer(v) ? (double)json_integer_value(v) : -1;
    json_decref(s);
    return RS_OK;
}

/* docs/summary-format.md "fault_free": run r's scenario without its
 * faults (same seed, no outputs) and set r->res's fault-free figures and
 * slowdown. A failed fault-free run is reported, not fatal to the faulted
 * run's summary: its status is then "failed". Returns RS_OK if it ran. */
static int add_fault_free(rs_run_ctx *r)
{
    rs_result *res = r->res;
    rs_scenario b = r->sc;
    b.faults.schedule[0] = '\0';
    b.capture.ports[0] = '\0';
    rs_run_opts o;
    rs_run_opts_default(&o);
    o.force = r->o->force;
    rs_result *fr = NULL;
    rs_err err;
    /* All its jobs, without their slowdowns' baselines. */
    int rc = rs_run_only(&b, &o, RS_RUN_ALL_NO_ALONE, &fr, &err);
    const rs_result_data *bd = fr ? &fr->store.d : NULL;
    rs_result_fault_free *ff = &res->store.ff;
    const char *what0;
    double t = headline_of(&res->store.d, &ff->time_of), t0 = bd ? headline_of(bd, &what0) : -1;
    ff->status = bd ? bd->status : "failed"; /* string literals: they outlive fr */
    ff->sim_end_ps = bd ? (double)bd->sim_end_ps : -1;
    ff->time_ps = t0;
    ff->faulted_time_ps = t;
    ff->slowdown = t >= 0 && t0 > 0 ? t / t0 : -1;
    res->store.d.fault_free = ff;
    if (rc == RS_OK && fr->status != RS_OK)
        rc = fr->status;
    rs_result_destroy(fr);
    return rc;
}

/* The pcapng section comment (docs/pcap.md, "Run metadata"): what made
 * this run, in lines a person reads in Wireshark's capture file
 * properties, then every setting as one line of JSON (the summary's
 * "scenario"). Nothing from the host or the clock, so the same inputs
 * give the same bytes. Caller frees; NULL when out of memory. */
static char *capture_comment(const rs_run_ctx *r, const char *path)
{
    const rs_scenario *sc = &r->sc;
    json_t *j = rs_scenario_to_json(sc);
    char *settings = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    /* Jobs placed at the start (not a scheduler's arrivals): whose GPUs. */
    char *jobs = r->jobs && !r->sched ? rs_run_jobs_capture_note(r) : NULL;
    if (!settings || (r->jobs && !r->sched && !jobs)) {
        free(settings);
        free(jobs);
        return NULL;
    }
    const char *fmt = "railsim %s run\nscenario: %s\nseed: %llu\nsettings: %s%s%s";
    const char *scen = path ? path : "(none: every key at its default)";
    unsigned long long seed = (unsigned long long)sc->net.seed;
    int n = snprintf(NULL, 0, fmt, RS_VERSION, scen, seed, settings, jobs ? "\n" : "", jobs ? jobs : "");
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s)
        snprintf(s, (size_t)n + 1, fmt, RS_VERSION, scen, seed, settings, jobs ? "\n" : "", jobs ? jobs : "");
    free(settings);
    free(jobs);
    return s;
}

/* What the run owns, in the order run_split.h gives. */
static void run_free(rs_run_ctx *r)
{
    free(r->rss);
    r->rss = NULL;
    rs_net_destroy(r->net);
    rs_collrun_destroy(r->coll);
    rs_replay_destroy(r->replay);
    rs_trace_destroy(r->trace);
    rs_run_jobs_free(r);
    free(r->cap_comment);
}

/* A job on part of the cluster: its ranks' GPUs are the ones NCCL may
 * relay through (rs_net_set_members). */
static int job_members(rs_net *net, const rs_trace *t, rs_err *err)
{
    uint32_t n = rs_trace_nranks(t);
    uint32_t *g = malloc((size_t)n * sizeof *g);
    if (!g)
        return rs_err_set(err, RS_ENOMEM, "out of memory marking the job's GPUs");
    for (uint32_t r = 0; r < n; r++)
        g[r] = rs_trace_rank_gpu(t, r);
    int rc = rs_net_set_members(net, g, n, err);
    free(g);
    return rc;
}

/* A setup error: err's message after the scenario's name (when given and
 * the error is about the scenario), everything freed, the code returned. */
static int setup_failed(rs_run_ctx *r, const char *name, int rc, rs_err *err)
{
    if (name && err && err->msg[0]) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        rs_err_set(err, rc, "%s: %s", name, msg);
    }
    run_free(r);
    return rc == RS_ENOMEM ? RS_ENOMEM : rc == RS_EIO ? RS_EIO : RS_EINVAL;
}

/* setup_failed once the run may be split: the other processes are told
 * first (rs_split_agree), or they would wait in the first window. */
static int split_failed(rs_run_ctx *r, const char *name, int rc, rs_err *err)
{
    rs_split_agree(r, 0);
    return setup_failed(r, name, rc, err);
}

static void timelines_abort(rs_run_ctx *r)
{
    if (r->tl || r->tlp)
        rs_net_timeline_stop(r->net);
    rs_timeline_abort(r->tl);
    rs_timeline_abort(r->tlp);
}

/* Why a run that did not end RS_OK ended so, into its result's message. */
static void explain(const rs_run_ctx *r)
{
    rs_result *res = r->res;
    const rs_net_stats *st = &r->st;
    uint32_t iters_done = r->iters_done;
    char *m = res->message;
    size_t n = sizeof res->message;
    char now[RS_FMT_LEN];
    rs_fmt_time(now, sizeof now, (double)rs_net_now(r->net));
    if (res->status == RS_EINTR)
        snprintf(m, n, "interrupted at simulated time %s", now);
    else if (res->status == RS_ENOMEM) /* before anything it left waiting looks stuck */
        snprintf(m, n, "run failed: out of memory at simulated time %s (%llu messages sent); expected a "
                       "smaller run, or fidelity=flow", now, (unsigned long long)st->msgs);
    else if (r->part_err[0] || rs_net_part_errmsg(r->net)[0]) /* docs/parallel.md, "Wire format" */
        snprintf(m, n, "run failed: %s (every MPI rank must run the same railsim on the same inputs)",
                 r->part_err[0] ? r->part_err : rs_net_part_errmsg(r->net));
    else if (rs_net_fault_errmsg(r->net)[0]) {
        /* The faults name the fault and the GPU pairs; the workload adds
         * the operation: what each blocked rank waits on (a replay), or
         * the collective. */
        char op[640] = "";
        if (r->replay_status != RS_OK)
            snprintf(op, sizeof op, "; %s", r->replay_err.msg);
        else if (r->coll)
            snprintf(op, sizeof op, "; operation: %s (%s) over %u ranks, %llu bytes, iteration %u of %u",
                     rs_coll_op_name(rs_collrun_op(r->coll)), rs_coll_algo_name(rs_collrun_algo(r->coll)),
                     rs_collrun_ranks(r->coll), (unsigned long long)rs_collrun_bytes(r->coll), iters_done + 1,
                     rs_collrun_iters(r->coll));
        snprintf(m, n, "run stopped: %s%s", rs_net_fault_errmsg(r->net), op);
        res->by_faults = 1;
    } else if (r->replay_status != RS_OK)
        snprintf(m, n, "run failed: %s", r->replay_err.msg);
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
    f->msgs_relayed = d->msgs_relayed;
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

/* Settle what the scenario leaves to the run: relays as chunk pipelines
 * under faults, the flow level's sampling interval, and r->sample_ps.
 * RS_EINVAL with err (named after the scenario) for fidelity=both or an
 * interval out of range; nothing is owned yet. */
static int run_settle(rs_run_ctx *r, rs_err *err)
{
    rs_scenario *sc = &r->sc;
    const char *name = r->o->name;
    if (sc->fidelity == RS_LEVEL_BOTH)
        return rs_err_set(err, RS_EINVAL, "%s%sfidelity: 'both' is two runs (railsim validate); expected packet "
                          "or flow", name ? name : "", name ? ": " : "");
    /* With faults, relays at flow level run as the packet level's chunk
     * pipelines: a failover keeps the chunks that crossed, and the
     * fault-free baseline (add_fault_free, faults sweep) relays the same
     * way, so a slowdown compares one model with itself. */
    if (rs_scenario_has_faults(sc) || (r->o->flags & RS_RUN_AS_FAULTED))
        sc->net.relay_pipeline = 1;
    if (r->o->flags & RS_RUN_FAULTS_ABSENT_OK)
        sc->faults.absent_ok = 1;
    /* Where transfers are rates (the flow level) every port a flow crosses
     * is sampled at every tick, over runs of simulated seconds: unless
     * given, every 1 ms there. */
    rs_net_traits nt;
    if (rs_net_config_traits(&sc->net, &nt) == RS_OK && !nt.packets && !sc->timeline.sample_set)
        sc->timeline.sample_us = RS_FLOW_SAMPLE_US;
    /* The sampling interval: 0, or at least a nanosecond (a sampler event
     * every few picoseconds would only burn time). */
    if (sc->timeline.sample_us > 0 &&
        (rs_time_from_us(sc->timeline.sample_us, &r->sample_ps) != RS_OK || r->sample_ps < 1000))
        return rs_err_set(err, RS_EINVAL, "%s%stimeline.sample_us: expected 0 (no samples) or at least 0.001 us, "
                          "got %g", name ? name : "", name ? ": " : "", sc->timeline.sample_us);
    return RS_OK;
}

int rs_run_replay_start(rs_run_ctx *r, const rs_workload_config *w, const rs_trace *t, rs_time start,
                        rs_net_done_fn done, void *done_ctx, rs_replay **out, rs_err *err)
{
    const rs_scenario *sc = &r->sc;
    rs_replay_opts ro;
    rs_replay_opts_default(&ro);
    ro.iterations = w->iterations;
    ro.algo = w->algo;
    ro.sync = w->sync;
    ro.jitter = w->jitter;
    ro.seed = sc->net.seed;
    ro.start_ps = start;
    ro.done = done;
    ro.done_ctx = done_ctx;
    /* The GPU the ranks compute on, for power and contention
     * (docs/compute.md); none for a GPU without a preset. */
    rs_err ge;
    rs_gpu dev; /* the replay copies it */
    uint32_t g0 = rs_trace_rank_gpu(t, 0); /* its GPUs' job's nccl.* (a shared cluster's job) */
    if (rs_workload_gpu(w, &dev, &ge) == RS_OK) {
        ro.gpu = &dev;
        if (w->contention == RS_CONTENTION_ON ||
            (w->contention == RS_CONTENTION_AUTO && rs_net_nccl_of(r->net, g0)->model == RS_NCCL_NCCL)) {
            ro.coll_ctas = rs_coll_nccl_ctas(r->net, g0, 0);
            ro.p2p_ctas = rs_coll_nccl_ctas(r->net, g0, 1);
            /* NCCL's HBM traffic: the GPU's line rates (docs/compute.md). */
            ro.hb_size = sc->net.hb_size;
            ro.hb_Bps = sc->net.hb_gbps * 1e9 / 8;
            ro.nic_Bps = sc->net.nic_gbps * 1e9 / 8 / (sc->net.gpus_per_nic > 1 ? sc->net.gpus_per_nic : 1);
        }
    }
    int rc = rs_guard_check(sc, t, r->o->force, &r->est, err);
    return rc == RS_OK ? rs_replay_create(t, r->net, &ro, out, err) : rc;
}

/* Build the network, resolve its faults, start the workload and check
 * the captures asked. On error everything is freed (setup_failed). */
static int run_build(rs_run_ctx *r, rs_err *err)
{
    rs_scenario *sc = &r->sc;
    const char *name = r->o->name;
    int rc;
    if ((rc = rs_guard_check(sc, NULL, r->o->force, &r->est, err)) != RS_OK)
        return setup_failed(r, name, RS_EINVAL, err);
    if ((rc = rs_net_create(&sc->net, &r->net, err)) != RS_OK)
        return setup_failed(r, name, rc, err);
    /* Faults first: one at time 0 comes before the traffic's first packet. */
    if ((rc = rs_net_faults_start(r->net, &sc->faults, err)) != RS_OK)
        return setup_failed(r, name, rc, err);
    /* A straggler slows compute, and only a replayed workload computes. */
    int computes = rs_workload_active(&sc->workload);
    for (uint32_t k = 0; k < sc->njobs; k++)
        computes |= !sc->jobs[k].has_traffic;
    for (uint32_t i = 0; !computes && i < rs_net_fault_count(r->net); i++) {
        rs_net_fault_info fi;
        rs_net_fault_info_get(r->net, i, &fi);
        if (!strcmp(fi.kind, "straggler")) {
            rs_err_set(err, RS_EINVAL, "faults.schedule: straggler %s slows compute, but this scenario has none; "
                       "expected workload.plan or workload.trace", fi.target);
            return setup_failed(r, name, RS_EINVAL, err);
        }
    }
    /* A workload replaces the synthetic traffic. */
    if (sc->njobs) {
        rc = rs_run_jobs_build(r, err);
    } else if (rs_workload_active(&sc->workload)) {
        rs_workload_config w = sc->workload;
        snprintf(w.gpu, sizeof w.gpu, "%s", rs_scenario_gpu_name(sc));
        /* The job's GPUs (workload.gpus, workload.placement): its trace
         * is made for that many, then its ranks move onto them. */
        uint32_t N = rs_net_gpus(r->net), n;
        rc = rs_placement_size(w.placement, w.gpus, N, &n, err);
        if (rc == RS_OK)
            rc = rs_workload_load(&w, n, &r->trace, err);
        if (rc == RS_OK)
            rc = rs_workload_place(&w, N, sc->net.hb_size, sc->net.seed, r->trace, err);
        if (rc == RS_OK && n < N)
            rc = job_members(r->net, r->trace, err);
        if (rc == RS_OK)
            rc = rs_run_replay_start(r, &w, r->trace, 0, NULL, NULL, &r->replay, err);
    } else if (sc->traffic.kind == RS_SYNTH_COLLECTIVE) {
        rs_synth_config tc = sc->traffic;
        tc.sync = sc->workload.sync; /* how its iterations follow each other (collrun.h) */
        rc = rs_collrun_create(&tc, r->net, &r->coll, err);
    } else {
        rc = rs_synth_start(&sc->traffic, r->net, sc->net.seed, err);
    }
    if (rc != RS_OK)
        return setup_failed(r, name, rc, err);
    if (!sc->capture.ports[0])
        return RS_OK;
    if (!r->o->outdir) {
        rs_err_set(err, RS_EINVAL, "capture.ports: '%s' asks for captures; expected an output directory (-o DIR)",
                   sc->capture.ports);
        return setup_failed(r, NULL, RS_EINVAL, err);
    }
    if (rs_net_capture_start(r->net, NULL, &sc->capture, NULL, &r->ncap, err) != RS_OK)
        return setup_failed(r, name, RS_EINVAL, err);
    if (sc->capture.format == RS_CAPTURE_PCAPNG && !(r->cap_comment = capture_comment(r, name))) {
        rs_err_set(err, RS_ENOMEM, "out of memory");
        return setup_failed(r, NULL, RS_ENOMEM, err);
    }
    return RS_OK;
}

/* Everything is validated: only now may the output directory appear, with
 * the captures and the timeline. An output that cannot be created is the
 * user's environment: bad input, like a bad key. On error everything is
 * freed and the other processes of a split run are told. */
static int outputs_open(rs_run_ctx *r, rs_err *err)
{
    const rs_scenario *sc = &r->sc;
    if (rs_guard_disk(sc, &r->est, r->outdir, r->o->force, err) != RS_OK)
        return split_failed(r, r->o->name, RS_EINVAL, err);
    int rc = RS_OK;
    if (r->outdir) {
        char capdir[4096];
        snprintf(capdir, sizeof capdir, "%s/pcap", r->outdir);
        rc = rs_output_mkdir(r->outdir, err);
        if (rc == RS_OK && r->ncap && (rc = rs_output_mkdir(capdir, err)) == RS_OK)
            rc = rs_net_capture_start(r->net, capdir, &sc->capture, r->cap_comment, &r->ncap, err);
        if (rc != RS_OK)
            return split_failed(r, NULL, RS_EINVAL, err);
    }
    free(r->cap_comment);
    r->cap_comment = NULL;
    r->want_tl = r->o->outdir && sc->timeline.enabled;
    if (r->outdir && r->want_tl && (rc = timeline_open(r, err)) != RS_OK)
        return split_failed(r, NULL, rc == RS_ENOMEM ? RS_ENOMEM : RS_EINVAL, err);
    return RS_OK;
}

/* Run to idle, with the caller's progress on rank 0, then gather a split
 * collective's or replay's completions: r->info's status and wall time. */
static void run_loop(rs_run_ctx *r)
{
    if (rs_split_rank(r) == 0)
        rs_sim_set_progress(rs_net_sim(r->net), 1u << 16, on_progress, r);
    double t0 = wall_now();
    r->info.status = rs_net_run(r->net, RS_TIME_MAX);
    r->info.wall_s = wall_now() - t0;
    int gathered = rs_split_gather(r);
    if (r->info.status == RS_OK)
        r->info.status = gathered;
}

/* After the run: its status from what was left undelivered, the replay
 * and the collective driver; the captures and the timeline closed (a
 * failed run keeps its timeline, marked partial). Returns RS_OK, or
 * RS_EIO with err when the timeline could not be written; a capture that
 * could not be is the run's status, with the result's message. */
static int run_close(rs_run_ctx *r, rs_err *err)
{
    rs_run_info *info = &r->info;
    rs_net_stats_get(r->net, &r->st);
    if (info->status == RS_OK && r->st.msgs_done < r->st.msgs)
        info->status = RS_EINCOMPLETE;
    rs_err_clear(&r->replay_err);
    r->replay_status = RS_OK;
    if (r->replay) {
        info->replay = r->replay;
        r->replay_status = rs_replay_finish(r->replay, &r->replay_err);
        if (info->status == RS_OK)
            info->status = r->replay_status;
    }
    if (r->jobs) {
        rs_run_jobs_finish(r);
        if (info->status == RS_OK)
            info->status = r->replay_status;
    }
    if (r->coll) {
        info->coll = r->coll;
        rs_collrun_finish(r->coll);
        rs_collrun_times(r->coll, &r->iters_done);
        if (info->status == RS_OK && rs_collrun_status(r->coll) != RS_OK)
            info->status = rs_collrun_status(r->coll);
        if (info->status == RS_OK && r->iters_done < rs_collrun_iters(r->coll))
            info->status = RS_EINCOMPLETE;
    }
    rs_err cerr;
    rs_err_clear(&cerr);
    if (r->ncap && rs_net_capture_finish(r->net, 1, &cerr) != RS_OK) {
        info->status = RS_EIO;
        snprintf(r->res->message, sizeof r->res->message, "%s", cerr.msg);
    }
    int rc = RS_OK;
    if (r->tlp) { /* a split run: every part closed, then rank 0 merges them */
        rc = rs_split_timeline_close(r, info->status != RS_OK, err);
    } else if (r->tl) {
        rs_net_timeline_stop(r->net);
        rc = rs_timeline_close(r->tl, info->status != RS_OK, err) != RS_OK ? RS_EIO : RS_OK;
    }
    rs_split_rss(r); /* every process of a split run, after its last exchange */
    return rc;
}

/* The result: the summary (with the fault-free run and a split run's
 * figures), the headline figures and DIR/summary.json; r freed. Returns
 * code, RS_EIO with err when summary.json could not be written, or
 * RS_ENOMEM with *out NULL. */
static int result_build(rs_run_ctx *r, int code, rs_result **out, rs_err *err)
{
    rs_result *res = r->res;
    res->status = r->info.status;
    int collected = rs_summary_collect(&r->sc, r->net, &r->info, &res->store) == RS_OK;
    if (collected && r->sc.faults.schedule[0] && r->sc.faults.baseline && r->info.status != RS_EINTR &&
        add_fault_free(r) != RS_OK)
        snprintf(res->warning, sizeof res->warning,
                 "the fault-free run (faults.baseline) failed; summary fault_free.status says so");
    /* The peak is read once the summary's big part (the ports) exists:
     * what it costs counts, only the final copy of its text does not. */
    if (collected)
        rs_split_stats(r, &res->store);
    char *ports = collected ? rs_summary_ports_text(&res->store.d) : NULL;
    res->store.d.peak_rss_bytes = rs_run_peak_rss();
    /* A shared cluster's jobs, each against itself alone on its GPUs:
     * those runs first, whatever else fails (in a spread run the other
     * processes wait for this one's share). */
    uint32_t nalone = 0;
    double *alone = r->jobs && r->only == RS_RUN_ALL ? rs_run_jobs_alone(r, r->info.status != RS_EINTR, &nalone)
                                                     : NULL;
    if (ports)
        res->summary = rs_summary_json(&r->sc, &res->store.d);
    if (res->summary && r->jobs && (res->jobs = rs_run_jobs_json(r)) != NULL) {
        if (r->only == RS_RUN_ALL && r->info.status != RS_EINTR)
            rs_run_jobs_baselines(r, res->jobs, alone, nalone);
        if (json_object_set(res->summary, "jobs", res->jobs) != 0 ||
            (r->spread && json_object_set_new(res->summary, "parallel", rs_run_jobs_parallel_json(r, nalone)) != 0) ||
            json_object_set_new(res->summary, "interference", rs_run_jobs_interference(r)) != 0 ||
            json_object_set_new(res->summary, "job_links", rs_run_jobs_links(r, RS_JOB_LINKS_TOP)) != 0 ||
            rs_run_jobs_faults(r, json_object_get(res->summary, "faults")) != RS_OK ||
            (r->sched && json_object_set_new(res->summary, "scheduler", rs_run_jobs_sched_json(r, res->jobs)) != 0)) {
            json_decref(res->summary);
            res->summary = NULL;
        }
    } else if (res->summary && r->jobs) {
        json_decref(res->summary);
        res->summary = NULL;
    }
    free(alone);
    if (res->summary)
        res->summary_text = rs_summary_text(res->summary, ports); /* takes ports */
    else
        free(ports);
    if (!res->summary_text) {
        rs_result_destroy(res);
        rs_err_set(err, RS_ENOMEM, "out of memory building the summary");
        run_free(r);
        return RS_ENOMEM;
    }
    figures(res);
    if (code == RS_OK && r->outdir &&
        rs_output_write(r->outdir, "summary.json", res->summary_text, strlen(res->summary_text), err) != RS_OK)
        code = RS_EIO;
    if (res->status != RS_OK)
        explain(r);
    run_free(r);
    *out = res;
    return code;
}

int rs_run_with(const rs_scenario *sc, const rs_run_opts *opts, rs_result **out, rs_err *err)
{
    return rs_run_only(sc, opts, RS_RUN_ALL, out, err);
}

int rs_run_only(const rs_scenario *sc, const rs_run_opts *opts, int only, rs_result **out, rs_err *err)
{
    rs_err_clear(err);
    *out = NULL;
    rs_run_opts o;
    rs_run_opts_default(&o);
    if (rs_versioned_take(&o, sizeof o, opts, RS_SIZE_V1(rs_run_opts, part)) != RS_OK)
        return rs_err_set(err, RS_EINVAL, "run options: of no known size (initialise them with rs_run_opts_default)");
    rs_run_ctx r = { .o = &o, .sc = *sc, .outdir = only < 0 ? o.outdir : NULL, .only = only };
    int rc, idle;
    if ((rc = run_settle(&r, err)) != RS_OK || (rc = run_build(&r, err)) != RS_OK)
        return rc;
    if (o.flags & RS_RUN_CHECK_ONLY) {
        run_free(&r);
        return RS_OK;
    }
    /* A run over o->part: split, or run by rank 0 alone (the others idle). */
    if ((rc = rs_split_begin(&r, &idle, err)) != RS_OK)
        return split_failed(&r, o.name, rc, err);
    if (idle) {
        run_free(&r);
        return RS_OK; /* rank 0 runs it alone; *out stays NULL here */
    }
    if ((rc = outputs_open(&r, err)) != RS_OK)
        return rc;
    if (!(r.res = calloc(1, sizeof *r.res))) {
        timelines_abort(&r);
        rs_err_set(err, RS_ENOMEM, "out of memory starting the run");
        return split_failed(&r, NULL, RS_ENOMEM, err);
    }
    if (!rs_split_parts_start(&r, err)) {
        /* Another process could not start its part; it says why. */
        rs_result_destroy(r.res);
        timelines_abort(&r);
        rs_err_set(err, RS_EIO, "another MPI rank could not start its part of the run");
        return setup_failed(&r, NULL, RS_EIO, err);
    }
    snprintf(r.res->part_note, sizeof r.res->part_note, "%s", r.part_why);
    r.info.estimate = &r.est;
    int code = RS_OK;
    uint32_t me = rs_split_rank(&r);
    /* A spread run's other processes run the shared run only under a
     * scheduler (its arrivals' GPUs), then their share of the runs alone. */
    if (me == 0 || r.split || r.sched) {
        run_loop(&r);
        code = run_close(&r, err);
    }
    if (me != 0) {
        /* Its part is merged into rank 0's network, which reports; or its
         * runs alone are in rank 0's result. */
        uint32_t n;
        if (r.spread)
            free(rs_run_jobs_alone(&r, r.info.status != RS_EINTR, &n));
        rs_result_destroy(r.res);
        run_free(&r);
        return r.info.status == RS_OK || r.info.status == RS_EINCOMPLETE ? RS_OK : r.info.status;
    }
    return result_build(&r, code, out, err);
}

void rs_result_destroy(rs_result *r)
{
    if (!r)
        return;
    json_decref(r->summary);
    json_decref(r->jobs);
    free(r->summary_text);
    rs_summary_store_free(&r->store);
    free(r);
}

int rs_result_status(const rs_result *r) { return r->status; }
const char *rs_result_message(const rs_result *r) { return r->message; }
const char *rs_result_warning(const rs_result *r) { return r->warning; }
const char *rs_result_parallel_note(const rs_result *r) { return r->part_note; }
int rs_result_stopped_by_faults(const rs_result *r) { return r->by_faults; }
void rs_result_figures_fill(const rs_result *r, rs_result_figures *out, size_t size)
{
    rs_versioned_give(out, size, &r->fig, sizeof r->fig);
}
const char *rs_result_summary_json(const rs_result *r) { return r->summary_text; }
int rs_result_summary_brief(const rs_result *r, char **out)
{
    *out = json_dumps(r->summary, JSON_COMPACT | JSON_PRESERVE_ORDER);
    return *out ? RS_OK : RS_ENOMEM;
}
const rs_result_data *rs_result_data_get(const rs_result *r) { return &r->store.d; }
const json_t *rs_result_jobs(const rs_result *res) { return res->jobs; }
