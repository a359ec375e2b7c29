/*
 * run_jobs.c - a shared cluster (docs/shared-clusters.md): the jobs of a
 * scenario's "jobs" array run at once on one network. Each job is placed,
 * in array order, on GPUs the jobs before it left free; its GPUs are
 * marked as its own on the network (NCCL relays by PXN only through its
 * own job's GPUs, rs_net_set_job); a workload is replayed on them and
 * synthetic traffic is sent between them. After the run each job's
 * figures go into summary.json's "jobs", with its slowdown against the
 * same job run alone on the same GPUs (rs_run_only).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "rng.h"

#include "run_split.h"
#include "synth.h"

typedef struct rs_run_job {
    const rs_scenario_job *cfg; /* in the run's scenario (a scheduler's arrival: its template) */
    char name[RS_JOB_NAME_MAX + 12]; /* cfg's, or "NAME#k" for arrival k of a scheduler */
    uint32_t index;             /* its place in r->jobs: job index + 1 on the network */
    rs_run_ctx *run;
    rs_time arrival_ps;         /* a scheduler's: when it arrived */
    rs_time end_ps;             /* when it completed (a scheduler frees its GPUs then) */
    int ended;
    uint32_t *gpus, n;          /* cluster GPU of job GPU i */
    int started;                /* run (every job, or r->only) */
    rs_time start_ps;           /* jobs[i].start_us */
    rs_trace *trace;            /* a workload's */
    rs_replay *replay;
    rs_synth_job sj;            /* synthetic traffic */
    rs_collrun *coll;           /* traffic.kind=collective */
    uint64_t msgs, arrived, bytes_arrived;
    rs_time last_ps;            /* the last arrival */
} rs_run_job;

/* A scheduler (docs/shared-clusters.md, "Scheduler"): arrivals queue
 * first come first served; the head starts when its placement fits the
 * GPUs the running jobs leave, and every completion tries again. */
typedef struct rs_run_sched {
    uint8_t *taken;     /* per GPU: a running job's */
    uint32_t head;      /* the first arrival not started */
    uint32_t arrived;   /* arrivals so far */
    uint32_t rank0, comm0; /* the next started replay's timeline ids */
    int fail_rc;        /* a job that could not start stopped the run: why (rs_run_jobs_finish) */
    rs_err fail;
} rs_run_sched;

static int sched_timeline(rs_run_ctx *r, rs_run_job *j, rs_err *err);

static void job_done(void *ctx, rs_net *net, uint64_t tag);

static void job_arrived(void *ctx, rs_net *net, uint64_t tag)
{
    rs_run_job *j = ctx;
    j->arrived++;
    j->bytes_arrived += j->cfg->traffic.bytes;
    j->last_ps = rs_net_now(net);
    if (j->arrived == j->msgs)
        job_done(j, net, tag);
}

/* A job's collective completed its last iteration. */
static void job_coll_done(void *ctx, rs_net *net, uint64_t iters)
{
    rs_run_job *j = ctx;
    j->last_ps = rs_net_now(net);
    job_done(j, net, iters);
}

/* Job k's message: err's after "jobs[k] (NAME): ". */
static int job_failed(const rs_run_job *j, uint32_t k, int rc, rs_err *err)
{
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    rs_err_set(err, rc, "jobs[%u] (%s): %s", k, j->name, msg);
    return rc;
}

/* Place job j, the run's k-th (its draws' stream), on the free GPUs
 * (taken), and mark them its own. */
static int job_place(const rs_run_ctx *r, rs_run_job *j, uint32_t k, uint8_t *taken, rs_err *err)
{
    const rs_scenario *sc = &r->sc;
    const rs_workload_config *w = &j->cfg->workload;
    uint32_t N = rs_net_gpus(r->net);
    int rc = rs_placement_size(w->placement, w->gpus, N, &j->n, err);
    if (rc != RS_OK)
        return rc;
    free(j->gpus); /* a scheduler's earlier try */
    if (!(j->gpus = malloc((size_t)j->n * sizeof *j->gpus)))
        return rs_err_set(err, RS_ENOMEM, "out of memory placing the job");
    if (!w->gpus && (!w->placement[0] || rs_placement_is_mode(w->placement))) {
        /* No count (and no list): every GPU the jobs before it left, in order. */
        j->n = 0;
        for (uint32_t g = 0; g < N; g++)
            if (!taken[g])
                j->gpus[j->n++] = g;
        if (j->n == 0)
            return rs_err_set(err, RS_EINVAL, "workload.gpus: no GPU is left free for the job; expected fewer "
                              "GPUs for the jobs before it");
        for (uint32_t i = 0; i < j->n; i++)
            taken[j->gpus[i]] = 1;
        return RS_OK;
    }
    /* The first job draws as a lone job would; the others each from their own stream. */
    rc = rs_placement_gpus_free(w->placement, j->n, N, sc->net.hb_size, w->fragmentation, sc->net.seed + k, taken,
                                j->gpus, err);
    if (rc != RS_OK)
        return rc;
    for (uint32_t i = 0; i < j->n; i++)
        taken[j->gpus[i]] = 1;
    return RS_OK;
}

/* Job k's index on the network (rs_net_set_job). */
static uint32_t job_tag(const rs_run_ctx *r, uint32_t k)
{
    return r->jobs[k].cfg->tag ? r->jobs[k].cfg->tag : k + 1;
}

/* Start job k: its replay or its traffic. */
static int job_start(rs_run_ctx *r, uint32_t k, rs_err *err)
{
    const rs_scenario *sc = &r->sc;
    rs_run_job *j = &r->jobs[k];
    uint32_t tag = job_tag(r, k);
    int rc = rs_net_set_job(r->net, tag, j->gpus, j->n, err);
    if (rc == RS_OK && j->cfg->pxn)
        rc = rs_net_set_job_pxn(r->net, tag, (rs_pxn_mode)(j->cfg->pxn - 1), err);
    if (rc == RS_OK && j->cfg->prio)
        rc = rs_net_set_job_priority(r->net, tag, (uint32_t)(j->cfg->prio - 1), err);
    if (rc == RS_OK && j->cfg->nccl_set) {
        rs_nccl_config nc;
        rs_scenario_job_nccl(j->cfg, &sc->net.nccl, &nc);
        rc = rs_net_set_job_nccl(r->net, tag, &nc, err);
    }
    if (rc != RS_OK)
        return rc;
    rs_time after = 0; /* a scheduler starts it now */
    if (!r->sched && rs_time_from_us(j->cfg->start_us, &after) != RS_OK)
        return rs_err_set(err, RS_EINVAL, "start_us: expected a non-negative time, got %g", j->cfg->start_us);
    j->start_ps = rs_net_now(r->net) + after;
    j->started = 1;
    if (j->cfg->has_traffic && j->cfg->traffic.kind == RS_SYNTH_COLLECTIVE) {
        rs_synth_config tc = j->cfg->traffic;
        tc.sync = sc->workload.sync; /* its iterations follow the scenario's workload.sync, as a lone run's */
        rc = rs_collrun_create_job(&tc, r->net, j->gpus, j->n, j->start_ps, job_coll_done, j, &j->coll, err);
        return rc == RS_OK && r->sched ? sched_timeline(r, j, err) : rc;
    }
    if (j->cfg->has_traffic) {
        j->msgs = rs_synth_messages(&j->cfg->traffic, j->n);
        j->sj = (rs_synth_job){ .cfg = &j->cfg->traffic, .gpus = j->gpus, .n = j->n,
                                .verbs = (uint32_t)rs_scenario_job_verbs(j->cfg), .done = job_arrived, .ctx = j };
        /* Its draws by its tag: a scheduler's arrival alone draws the same. */
        return rs_synth_start_job(&j->sj, r->net, sc->net.seed + tag - 1, j->start_ps, err);
    }
    rs_workload_config w = j->cfg->workload;
    snprintf(w.gpu, sizeof w.gpu, "%s", rs_scenario_gpu_name(sc));
    if ((rc = rs_workload_load(&w, j->n, &j->trace, err)) != RS_OK)
        return rc;
    rs_trace_place(j->trace, j->gpus, j->n);
    rc = rs_run_replay_start(r, &w, j->trace, after, job_done, j, &j->replay, err);
    if (rc == RS_OK && r->sched)
        rc = sched_timeline(r, j, err);
    return rc;
}

/* A started replay writes into the run's timeline from its creation, its
 * ids after those of the replays started before it. */
static int sched_timeline(rs_run_ctx *r, rs_run_job *j, rs_err *err)
{
    rs_run_sched *q = r->sched;
    if (!r->tl)
        return RS_OK;
    if (j->coll) {
        int rc = rs_collrun_set_timeline_job_at(j->coll, r->tl, j->name, q->rank0, q->comm0++,
                                                (uint64_t)j->index << 40, err);
        q->rank0 += rs_collrun_tl_ranks(j->coll);
        return rc;
    }
    int rc = rs_replay_set_timeline_job(j->replay, r->tl, j->name, q->rank0, q->comm0,
                                        (uint64_t)j->index << 40, err);
    q->rank0 += rs_trace_nranks(j->trace);
    q->comm0 += rs_replay_tl_comms(j->replay);
    return rc;
}

/* The run stops with rc; the message is the replay error's (run.c's explain). */
static void sched_fail(rs_run_ctx *r, rs_run_job *j, int rc, const rs_err *e)
{
    if (!r->sched->fail_rc) {
        r->sched->fail_rc = rc;
        rs_err_set(&r->sched->fail, rc, "scheduler: job %s: %s", j->name, e->msg);
    }
    rs_sim_stop(rs_net_sim(r->net), rc);
}

/* Start the queue's head while its placement fits. */
static void sched_try(rs_run_ctx *r)
{
    rs_run_sched *q = r->sched;
    while (q->head < q->arrived) {
        rs_run_job *j = &r->jobs[q->head];
        rs_err e;
        rs_err_clear(&e);
        if (job_place(r, j, q->head, q->taken, &e) != RS_OK)
            return; /* it waits for GPUs (build checked it fits an empty cluster) */
        int rc = job_start(r, q->head, &e);
        if (rc != RS_OK) {
            sched_fail(r, j, rc, &e);
            return;
        }
        q->head++;
    }
}

static void ev_sched_try(void *ctx, rs_net *net, uint64_t arg)
{
    (void)net, (void)arg;
    sched_try(ctx);
}

static void ev_arrive(void *ctx, rs_net *net, uint64_t k)
{
    rs_run_ctx *r = ctx;
    r->jobs[k].arrival_ps = rs_net_now(net);
    r->sched->arrived = (uint32_t)k + 1;
    sched_try(r);
}

/* Job j completed (its replay's last iteration, its traffic's last
 * arrival): a scheduler frees its GPUs and starts what now fits, from an
 * event of its own. */
static void job_done(void *ctx, rs_net *net, uint64_t tag)
{
    (void)tag;
    rs_run_job *j = ctx;
    rs_run_ctx *r = j->run;
    j->end_ps = rs_net_now(net);
    j->ended = 1;
    if (!r->sched)
        return;
    for (uint32_t i = 0; i < j->n; i++)
        r->sched->taken[j->gpus[i]] = 0;
    rs_net_clear_job(net, j->gpus, j->n);
    rs_net_at(net, rs_net_now(net), ev_sched_try, r, 0);
}

/* Under a scheduler: each arrival a seeded draw of the jobs array, at
 * seeded exponential intervals; every template must fit the empty
 * cluster (else it would wait for ever). */
/* A template for the next drawn arrival: uniform, or in proportion to
 * the jobs' weights when any is set. */
static uint32_t sched_draw(const rs_scenario *sc, rs_rng *g)
{
    double total = 0;
    for (uint32_t t = 0; t < sc->njobs; t++)
        total += sc->jobs[t].weight > 0 ? sc->jobs[t].weight : 1;
    int weighted = 0;
    for (uint32_t t = 0; t < sc->njobs; t++)
        weighted |= sc->jobs[t].weight > 0 && sc->jobs[t].weight != 1;
    if (!weighted)
        return (uint32_t)rs_rng_below(g, sc->njobs);
    double u = rs_rng_unit(g) * total;
    for (uint32_t t = 0; t + 1 < sc->njobs; t++) {
        u -= sc->jobs[t].weight > 0 ? sc->jobs[t].weight : 1;
        if (u < 0)
            return t;
    }
    return sc->njobs - 1;
}

static int sched_build(rs_run_ctx *r, rs_err *err)
{
    const rs_scenario *sc = &r->sc;
    uint32_t A = sc->sched.arrivals, N = rs_net_gpus(r->net);
    if (!(r->sched = calloc(1, sizeof *r->sched)) || !(r->sched->taken = calloc(N, 1)))
        return rs_err_set(err, RS_ENOMEM, "out of memory for the scheduler");
    for (uint32_t t = 0; t < sc->njobs; t++) {
        rs_run_job probe = { .cfg = &sc->jobs[t] };
        snprintf(probe.name, sizeof probe.name, "%s", sc->jobs[t].name);
        int rc = job_place(r, &probe, 0, r->sched->taken, err);
        /* A collective's group over its ranks, checked before anything runs. */
        if (rc == RS_OK && probe.cfg->has_traffic && probe.cfg->traffic.kind == RS_SYNTH_COLLECTIVE)
            rc = rs_collrun_job_group(probe.cfg->traffic.group, NULL, probe.n, N, NULL, err);
        free(probe.gpus);
        memset(r->sched->taken, 0, N);
        if (rc != RS_OK)
            return job_failed(&probe, t, rc, err);
    }
    rs_rng g;
    rs_rng_init(&g, sc->sched.seed ? sc->sched.seed : sc->net.seed, 0x7363686564ull, 0); /* "sched" */
    double t_us = 0;
    for (uint32_t k = 0; k < A; k++) {
        rs_run_job *j = &r->jobs[k];
        j->cfg = &sc->jobs[sc->sched.nlist ? sc->sched.list[k].tmpl : sched_draw(sc, &g)];
        snprintf(j->name, sizeof j->name, "%s#%u", j->cfg->name, k);
        if (sc->sched.nlist)
            t_us = sc->sched.list[k].at_us;
        else if (k)
            t_us += -sc->sched.interarrival_us * log(1.0 - rs_rng_unit(&g));
        rs_time at;
        if (rs_time_from_us(t_us, &at) != RS_OK)
            return rs_err_set(err, RS_EINVAL, "scheduler.interarrival_us: arrival %u at %g us is too late to be "
                              "simulated", k, t_us);
        rs_net_at(r->net, at, ev_arrive, r, k);
    }
    /* Even one arrival: its run alone (sched_alone) draws from its own space too. */
    return rs_net_jobs_serials(r->net, err);
}

int rs_run_jobs_build(rs_run_ctx *r, rs_err *err)
{
    uint32_t J = r->sc.sched.arrivals ? r->sc.sched.arrivals : r->sc.njobs, N = rs_net_gpus(r->net);
    r->jobs = calloc(J, sizeof *r->jobs);
    if (!r->jobs)
        return rs_err_set(err, RS_ENOMEM, "out of memory placing the jobs");
    r->nrun_jobs = J;
    for (uint32_t k = 0; k < J; k++) {
        r->jobs[k].index = k + 1;
        r->jobs[k].run = r;
        if (k < r->sc.njobs) {
            r->jobs[k].cfg = &r->sc.jobs[k];
            snprintf(r->jobs[k].name, sizeof r->jobs[k].name, "%s", r->sc.jobs[k].name);
        }
    }
    if (r->sc.sched.arrivals && r->only < 0)
        return sched_build(r, err);
    uint8_t *taken = calloc(N, 1);
    if (!taken)
        return rs_err_set(err, RS_ENOMEM, "out of memory placing the jobs");
    int rc = RS_OK;
    for (uint32_t k = 0; k < J && rc == RS_OK; k++) {
        if ((rc = job_place(r, &r->jobs[k], k, taken, err)) != RS_OK)
            job_failed(&r->jobs[k], k, rc, err);
    }
    free(taken);
    /* Each job draws its flows' serials (so their ECMP paths) from its own
     * space: the same alone as beside the others. */
    if (rc == RS_OK && (J > 1 || r->sc.jobs[0].tag))
        rc = rs_net_jobs_serials(r->net, err);
    for (uint32_t k = 0; k < J && rc == RS_OK; k++)
        if ((r->only < 0 || (uint32_t)r->only == k) && (rc = job_start(r, k, err)) != RS_OK)
            job_failed(&r->jobs[k], k, rc, err);
    /* Which ports each job's data crosses, for the interference table. */
    if (rc == RS_OK && J > 1 && r->only < 0)
        rc = rs_net_jobs_count(r->net, J, err);
    return rc;
}

int rs_run_jobs_timeline(rs_run_ctx *r, rs_timeline *tl, rs_err *err)
{
    uint32_t rank0 = 0, comm0 = 0;
    for (uint32_t k = 0; k < r->nrun_jobs; k++) { /* a scheduler's start later: sched_timeline */
        rs_run_job *j = &r->jobs[k];
        if (j->coll) { /* a collective: one communicator, its iterations' records (and ranks, streamed) */
            int rc = rs_collrun_set_timeline_job_at(j->coll, tl, j->name, rank0, comm0++, (uint64_t)k << 40, err);
            if (rc != RS_OK)
                return rc;
            rank0 += rs_collrun_tl_ranks(j->coll);
            continue;
        }
        if (!j->replay)
            continue;
        int rc = rs_replay_set_timeline_job(j->replay, tl, j->name, rank0, comm0, (uint64_t)k << 40, err);
        if (rc != RS_OK)
            return rc;
        rank0 += rs_trace_nranks(j->trace);
        comm0 += rs_replay_tl_comms(j->replay);
    }
    return RS_OK;
}

void rs_run_jobs_finish(rs_run_ctx *r)
{
    for (uint32_t k = 0; k < r->nrun_jobs; k++)
        if (r->jobs[k].replay && rs_replay_end_time(r->jobs[k].replay) > r->info.jobs_end)
            r->info.jobs_end = rs_replay_end_time(r->jobs[k].replay);
    if (r->sched && r->sched->fail_rc) {
        r->replay_status = r->sched->fail_rc;
        r->replay_err = r->sched->fail;
    } else if (r->sched && r->sched->head < r->nrun_jobs && r->replay_status == RS_OK) {
        r->replay_status = RS_EINCOMPLETE;
        rs_err_set(&r->replay_err, RS_EINCOMPLETE, "scheduler: %u of %u arrivals never started (job %s waited for "
                   "GPUs that no job freed)", r->nrun_jobs - r->sched->head, r->nrun_jobs,
                   r->jobs[r->sched->head].name);
    }
    for (uint32_t k = 0; k < r->nrun_jobs; k++) {
        rs_run_job *j = &r->jobs[k];
        rs_err e;
        rs_err_clear(&e);
        int rc = j->replay ? rs_replay_finish(j->replay, &e) : RS_OK;
        if (j->coll) {
            rs_collrun_finish(j->coll); /* streamed iterations read their replay's end */
            if ((rc = rs_collrun_status(j->coll)) != RS_OK)
                rs_err_set(&e, rc, "%s", rs_collrun_errmsg(j->coll)[0] ? rs_collrun_errmsg(j->coll) : rs_strerror(rc));
        }
        if (rc != RS_OK && r->replay_status == RS_OK) {
            r->replay_status = rc;
            rs_err_set(&r->replay_err, rc, "job %s: %s", j->name, e.msg);
        }
    }
}

/* GPUs as ascending ids and ranges: "0-7,16,18-23". */
/* GPU g's IPv4 address in captures (docs/pcap.md): 10.x.y.z = g. */
static int ip_text(char *buf, size_t n, uint32_t g)
{
    return snprintf(buf, n, "10.%u.%u.%u", g >> 16 & 255u, g >> 8 & 255u, g & 255u);
}

/* The GPUs as ascending ids and ranges ("0-7,16"), or (ip) as a
 * Wireshark display filter on their frames' source address
 * ("ip.src in {10.0.0.0..10.0.0.7, 10.0.0.16}"). Caller: free; NULL on
 * ENOMEM. */
static char *ranges_text(const uint32_t *gpus, uint32_t n, int ip)
{
    uint32_t *s = malloc((size_t)(n ? n : 1) * sizeof *s);
    size_t cap = (size_t)n * 40 + 32, len = 0;
    char *text = malloc(cap);
    if (!s || !text) {
        free(s);
        free(text);
        return NULL;
    }
    memcpy(s, gpus, (size_t)n * sizeof *s);
    qsort(s, n, sizeof *s, rs_cmp_u32);
    text[0] = '\0';
    if (ip)
        len += (size_t)snprintf(text, cap, "ip.src in {");
    for (uint32_t i = 0; i < n;) {
        uint32_t e = i;
        while (e + 1 < n && s[e + 1] == s[e] + 1)
            e++;
        if (ip) {
            char a[24], b[24];
            ip_text(a, sizeof a, s[i]);
            ip_text(b, sizeof b, s[e]);
            len += (size_t)snprintf(text + len, cap - len, e > i ? "%s%s..%s" : "%s%s", i ? ", " : "", a, b);
        } else {
            len += (size_t)snprintf(text + len, cap - len, e > i ? "%s%u-%u" : "%s%u", i ? "," : "", s[i], s[e]);
        }
        i = e + 1;
    }
    if (ip)
        snprintf(text + len, cap - len, "}");
    free(s);
    return text;
}

static json_t *gpu_ranges(const uint32_t *gpus, uint32_t n, int ip)
{
    char *t = ranges_text(gpus, n, ip);
    json_t *out = t ? json_string(t) : NULL;
    free(t);
    return out;
}

char *rs_run_jobs_capture_note(const rs_run_ctx *r)
{
    size_t cap = 64, len = 0;
    char *s = malloc(cap);
    if (s)
        len = (size_t)snprintf(s, cap, "jobs (GPU ids; GPU g is IPv4 10.x.y.z = g):");
    for (uint32_t k = 0; s && k < r->nrun_jobs; k++) {
        const rs_run_job *j = &r->jobs[k];
        char *ids = j->gpus ? ranges_text(j->gpus, j->n, 0) : NULL;
        size_t need = len + strlen(j->name) + (ids ? strlen(ids) : 0) + 48;
        char *t = ids && need > cap ? realloc(s, need) : s;
        if (!ids || !t) {
            free(ids);
            free(s);
            return NULL;
        }
        s = t;
        cap = need > cap ? need : cap;
        len += (size_t)snprintf(s + len, cap - len, "%s %s %s (priority %u)", k ? ";" : "", j->name, ids,
                                j->cfg->prio ? (unsigned)(j->cfg->prio - 1) : r->sc.net.prio);
        free(ids);
    }
    return s;
}

#define I(v) json_integer((json_int_t)(v))

/* A job's time: its mean iteration (a workload), or from its start to
 * its last arrival (traffic); -1 when it did not complete. */
static json_t *job_json(const rs_run_job *j)
{
    json_t *o = json_object();
    const rs_scenario_job *c = j->cfg;
    json_object_set_new(o, "name", json_string(j->name));
    json_object_set_new(o, "kind", json_string(c->has_traffic ? "traffic" : "workload"));
    json_object_set_new(o, "comm", json_string(rs_scenario_job_verbs(c) ? "verbs" : "nccl"));
    json_object_set_new(o, "priority", I(c->prio ? (uint32_t)(c->prio - 1) : j->run->sc.net.prio));
    json_object_set_new(o, "gpus", I(j->n));
    json_object_set_new(o, "placement", json_string(c->workload.placement[0] ? c->workload.placement : "packed"));
    json_object_set_new(o, "gpu_ids", gpu_ranges(j->gpus, j->n, 0));
    json_object_set_new(o, "wireshark_filter", gpu_ranges(j->gpus, j->n, 1));
    json_object_set_new(o, "start_ps", I(j->start_ps));
    if (j->run->sched) { /* a scheduler's arrival: when it came, how long it queued, when it ended */
        json_object_set_new(o, "arrival_ps", I(j->arrival_ps));
        json_object_set_new(o, "wait_ps", j->started ? I(j->start_ps - j->arrival_ps) : json_null());
        json_object_set_new(o, "end_ps", j->ended ? I(j->end_ps) : json_null());
    }
    double t = -1;
    if (j->replay) {
        json_t *it = rs_summary_replay_json(j->replay);
        rs_replay_stats st;
        rs_replay_stats_get(j->replay, &st);
        if (st.done == st.iterations)
            t = (double)st.time_ps;
        json_object_set_new(o, "iteration", it ? it : json_null());
    } else if (j->coll) {
        /* A collective: nccl-tests' figures; its time the mean iteration. */
        json_t *co = rs_summary_collrun_json(j->coll), *tr = json_object();
        json_object_set_new(tr, "kind", json_string("collective"));
        json_object_set_new(o, "traffic", tr);
        json_object_set_new(o, "collective", co ? co : json_null());
        const json_t *tm = json_object_get(co, "time_ps");
        uint32_t done;
        rs_collrun_times(j->coll, &done);
        if (done == rs_collrun_iters(j->coll) && json_is_number(tm))
            t = json_number_value(tm);
    } else if (c->has_traffic) {
        rs_time t0 = j->start_ps;
        rs_time off;
        if (rs_time_from_ns(c->traffic.start_ns, &off) == RS_OK)
            t0 += off;
        json_t *tr = json_object();
        json_object_set_new(tr, "kind", json_string(c->traffic.kind == RS_SYNTH_SINGLE ? "single" :
                                                    c->traffic.kind == RS_SYNTH_PERMUTATION ? "permutation" :
                                                    c->traffic.kind == RS_SYNTH_ALL_TO_ALL ? "all-to-all" :
                                                    "incast"));
        json_object_set_new(tr, "messages", I(j->msgs));
        json_object_set_new(tr, "delivered", I(j->arrived));
        json_object_set_new(tr, "bytes_delivered", I(j->bytes_arrived));
        json_object_set_new(o, "traffic", tr);
        if (j->arrived == j->msgs && j->msgs)
            t = (double)(j->last_ps - t0);
    }
    json_object_set_new(o, "time_ps", t >= 0 ? I(t) : json_null());
    json_object_set_new(o, "alone_time_ps", json_null());
    json_object_set_new(o, "slowdown", json_null());
    return o;
}

json_t *rs_run_jobs_json(const rs_run_ctx *r)
{
    json_t *a = json_array();
    for (uint32_t k = 0; a && k < r->nrun_jobs; k++) {
        json_t *o = job_json(&r->jobs[k]);
        if (!o || json_array_append_new(a, o)) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

int rs_run_jobs_faults(const rs_run_ctx *r, json_t *faults)
{
    size_t n = json_array_size(faults);
    for (uint32_t i = 0; i < n; i++) {
        json_t *hit = json_array();
        for (uint32_t k = 0; hit && k < r->nrun_jobs; k++) {
            uint32_t flows = r->jobs[k].cfg ? rs_net_fault_job_flows(r->net, i, job_tag(r, k)) : 0;
            json_t *o = flows ? json_object() : NULL;
            if (flows && (!o || json_array_append_new(hit, o) ||
                          json_object_set_new(o, "job", json_string(r->jobs[k].name)) ||
                          json_object_set_new(o, "flows_hit", I(flows)))) {
                json_decref(hit);
                return RS_ENOMEM;
            }
        }
        if (!hit || json_object_set_new(json_array_get(faults, i), "jobs_hit", hit))
            return RS_ENOMEM;
    }
    return RS_OK;
}

/* A port's jobs' bytes, for job_links' ordering. */
typedef struct port_load {
    uint64_t total;
    uint32_t port, jobs;
} port_load;

/* Ports shared by more jobs first, then busier, then by id. */
static int cmp_load(const void *a, const void *b)
{
    const port_load *x = a, *y = b;
    if ((x->jobs > 1) != (y->jobs > 1))
        return x->jobs > 1 ? -1 : 1;
    return x->total != y->total ? (x->total < y->total) - (x->total > y->total) : (x->port > y->port) - (x->port < y->port);
}

json_t *rs_run_jobs_links(const rs_run_ctx *r, uint32_t top)
{
    uint32_t J = r->sc.njobs, P = rs_net_port_count(r->net), n = 0;
    json_t *a = json_array();
    if (!a || J < 2 || r->only >= 0 || r->sched)
        return a;
    port_load *pl = malloc((size_t)P * sizeof *pl);
    if (!pl) {
        json_decref(a);
        return NULL;
    }
    for (uint32_t p = 0; p < P; p++) {
        uint64_t t = 0;
        uint32_t jobs = 0;
        for (uint32_t x = 1; x <= J; x++) {
            uint64_t b = rs_net_job_tx_bytes(r->net, p, x);
            t += b;
            jobs += b > 0;
        }
        rs_net_port_info pi;
        /* Ethernet ports: an HB domain's NVLink ports carry its own GPUs' data. */
        if (t && rs_net_port_info_get(r->net, p, &pi) == RS_OK && strncmp(pi.name, "nvs", 3) && !strstr(pi.name, ".hb"))
            pl[n++] = (port_load){ t, p, jobs };
    }
    qsort(pl, n, sizeof *pl, cmp_load);
    double span = (double)rs_net_now(r->net); /* the run's simulated time, ps */
    for (uint32_t i = 0; a && i < n && i < top; i++) {
        rs_net_port_info pi;
        json_t *o = json_object(), *by = json_array(), *util = json_array();
        if (rs_net_port_info_get(r->net, pl[i].port, &pi) != RS_OK || !o || !by || !util ||
            json_array_append_new(a, o)) {
            json_decref(o);
            json_decref(by);
            json_decref(util);
            json_decref(a);
            a = NULL;
            break;
        }
        json_object_set_new(o, "port", json_string(pi.name));
        for (uint32_t x = 1; x <= J; x++) {
            uint64_t b = rs_net_job_tx_bytes(r->net, pl[i].port, x);
            json_array_append_new(by, I(b));
            /* Its share of the port's capacity over the run. */
            json_array_append_new(util, pi.rate_bps && span > 0 ? json_real((double)b * 8e12 / ((double)pi.rate_bps * span))
                                                                 : json_null());
        }
        json_object_set_new(o, "bytes", by);
        json_object_set_new(o, "util", util);
    }
    free(pl);
    return a;
}

json_t *rs_run_jobs_interference(const rs_run_ctx *r)
{
    uint32_t J = r->sc.njobs, P = rs_net_port_count(r->net);
    json_t *a = json_array();
    if (J < 2 || r->only >= 0 || r->sched) /* a scheduler's arrivals: not counted */
        return a;
    for (uint32_t x = 1; a && x <= J; x++)
        for (uint32_t y = x + 1; y <= J; y++) {
            uint64_t ports = 0, gpu_side = 0, bx = 0, by = 0;
            for (uint32_t p = 0; p < P; p++) {
                uint64_t u = rs_net_job_tx_bytes(r->net, p, x), v = rs_net_job_tx_bytes(r->net, p, y);
                if (u && v) {
                    rs_net_port_info pi;
                    ports++;
                    bx += u;
                    by += v;
                    /* A GPU's NIC or HB port, or an NVSwitch port to a GPU:
                     * one job's GPU carried the other's data (forwarding). */
                    gpu_side += rs_net_port_info_get(r->net, p, &pi) == RS_OK &&
                                (!strncmp(pi.name, "gpu", 3) || !strncmp(pi.name, "nvs", 3));
                }
            }
            if (!ports)
                continue;
            json_t *o = json_object(), *names = json_array(), *bytes = json_array();
            json_array_append_new(names, json_string(r->sc.jobs[x - 1].name));
            json_array_append_new(names, json_string(r->sc.jobs[y - 1].name));
            json_array_append_new(bytes, I(bx));
            json_array_append_new(bytes, I(by));
            json_object_set_new(o, "jobs", names);
            json_object_set_new(o, "ports", I(ports));
            json_object_set_new(o, "gpu_side_ports", I(gpu_side));
            json_object_set_new(o, "bytes", bytes);
            if (json_array_append_new(a, o)) {
                json_decref(a);
                return NULL;
            }
        }
    return a;
}

/* Set o's alone time and slowdown from the time alone t0 (-1: unknown). */
static void set_slowdown(json_t *o, double t0)
{
    double t = json_is_number(json_object_get(o, "time_ps")) ? json_number_value(json_object_get(o, "time_ps")) : -1;
    json_object_set_new(o, "alone_time_ps", t0 >= 0 ? I(t0) : json_null());
    json_object_set_new(o, "slowdown", t >= 0 && t0 > 0 ? json_real(t / t0) : json_null());
}

/* A scheduler's arrival k alone: its template on the GPUs it ran on
 * (listed), started at 0, no scheduler. -1 when it did not start, its
 * GPUs do not fit a list, or the run failed. */
static double sched_alone(const rs_run_ctx *r, const rs_run_job *j, const rs_run_opts *o)
{
    json_t *ids = j->started ? gpu_ranges(j->gpus, j->n, 0) : NULL;
    const char *list = json_string_value(ids);
    rs_scenario *b = list ? malloc(sizeof *b) : NULL;
    double t0 = -1;
    if (b && strlen(list) < sizeof b->jobs[0].workload.placement) {
        *b = r->sc;
        b->sched.arrivals = 0;
        b->njobs = 1;
        b->jobs[0] = *j->cfg;
        b->jobs[0].start_us = 0;
        /* The list in the order the job's GPUs had: rank order. */
        size_t len = 0, cap = sizeof b->jobs[0].workload.placement;
        for (uint32_t i = 0; i < j->n && len < cap; i++)
            len += (size_t)snprintf(b->jobs[0].workload.placement + len, cap - len, "%s%u", i ? "," : "", j->gpus[i]);
        b->jobs[0].workload.gpus = j->n;
        b->jobs[0].tag = j->index; /* its serial space as in the scheduler's run */
        snprintf(b->jobs[0].name, sizeof b->jobs[0].name, "%.*s", (int)sizeof b->jobs[0].name - 1, j->name);
        b->capture.ports[0] = '\0';
        b->faults.baseline = 0;
        rs_result *res = NULL;
        rs_err err;
        if (len < cap && rs_run_only(b, o, RS_RUN_ALL_NO_ALONE, &res, &err) == RS_OK && res) {
            const json_t *t = json_object_get(json_array_get(rs_result_jobs(res), 0), "time_ps");
            t0 = json_is_number(t) ? json_number_value(t) : -1;
        }
        rs_result_destroy(res);
    }
    free(b);
    json_decref(ids);
    return t0;
}

/* Job k alone on its GPUs (rs_run_only over it), its time; -1 when the
 * run failed. */
static double job_alone(const rs_run_ctx *r, uint32_t k, const rs_run_opts *o)
{
    if (r->sched)
        return sched_alone(r, &r->jobs[k], o);
    rs_scenario b = r->sc;
    b.capture.ports[0] = '\0';
    b.faults.baseline = 0;
    rs_result *res = NULL;
    rs_err err;
    double t0 = -1;
    if (rs_run_only(&b, o, (int)k, &res, &err) == RS_OK && res) {
        const json_t *t = json_object_get(json_array_get(rs_result_jobs(res), k), "time_ps");
        t0 = json_is_number(t) ? json_number_value(t) : -1;
    }
    rs_result_destroy(res);
    return t0;
}

/* Which process runs job k alone in a spread run. Without a scheduler
 * process 0 runs the shared run, which costs about as much as all the
 * runs alone together: they go round the others. Under a scheduler
 * every process ran the shared run: they go round all. */
static uint32_t alone_rank(const rs_run_ctx *r, uint32_t k, uint32_t ranks)
{
    return r->sched ? k % ranks : 1 + k % (ranks - 1);
}

double *rs_run_jobs_alone(const rs_run_ctx *r, int run, uint32_t *n)
{
    uint32_t N = r->sched ? r->nrun_jobs : r->sc.njobs > 1 ? r->sc.njobs : 0;
    *n = N;
    if (!N)
        return NULL;
    const rs_net_comm *part = r->spread ? r->o->part : NULL;
    uint32_t R = part ? part->ranks : 1, me = part ? part->rank : 0;
    double *t = malloc(N * sizeof *t);
    rs_run_opts o;
    rs_run_opts_default(&o);
    o.force = r->o->force;
    /* The caller's progress, so that an interrupt stops these runs too. */
    o.progress = r->o->progress;
    o.ctx = r->o->ctx;
    for (uint32_t k = 0; t && k < N; k++)
        t[k] = run && (R == 1 || alone_rank(r, k, R) == me) ? job_alone(r, k, &o) : -1;
    if (!part)
        return t;
    /* Every process gets every time: the maximum over the processes of
     * time + 1, 0 from those that did not run it (also when out of
     * memory here: the others still wait for this process's share). */
    uint64_t v[256];
    for (uint32_t k0 = 0; k0 < N; k0 += 256) {
        size_t m = N - k0 < 256 ? N - k0 : 256;
        for (size_t i = 0; i < m; i++)
            v[i] = t && t[k0 + i] >= 0 ? (uint64_t)t[k0 + i] + 1 : 0;
        int rc = part->allreduce(part->ctx, v, m, 1);
        for (size_t i = 0; t && i < m; i++)
            t[k0 + i] = rc == RS_OK && v[i] ? (double)(v[i] - 1) : -1;
    }
    return t;
}

json_t *rs_run_jobs_parallel_json(const rs_run_ctx *r, uint32_t n)
{
    uint32_t R = r->o->part->ranks;
    json_t *o = json_object(), *a = json_array();
    if (!o || !a) {
        json_decref(o);
        json_decref(a);
        return NULL;
    }
    for (uint32_t p = 0; p < R; p++) {
        uint32_t c = 0;
        for (uint32_t k = 0; k < n; k++)
            c += alone_rank(r, k, R) == p;
        json_array_append_new(a, I(c));
    }
    if (json_object_set_new(o, "ranks", I(R)) != 0 || json_object_set_new(o, "alone_runs", a) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

void rs_run_jobs_baselines(const rs_run_ctx *r, json_t *jobs, const double *alone, uint32_t n)
{
    if (!n && r->nrun_jobs == 1) { /* alone already */
        json_t *o = json_array_get(jobs, 0);
        json_t *t = json_object_get(o, "time_ps");
        set_slowdown(o, json_is_number(t) ? json_number_value(t) : -1);
        return;
    }
    for (uint32_t k = 0; k < n; k++)
        set_slowdown(json_array_get(jobs, k), alone ? alone[k] : -1);
}

void rs_run_jobs_free(rs_run_ctx *r)
{
    for (uint32_t k = 0; r->jobs && k < r->nrun_jobs; k++) {
        rs_replay_destroy(r->jobs[k].replay);
        rs_collrun_destroy(r->jobs[k].coll);
        rs_trace_destroy(r->jobs[k].trace);
        free(r->jobs[k].gpus);
    }
    free(r->jobs);
    r->jobs = NULL;
    if (r->sched)
        free(r->sched->taken);
    free(r->sched);
    r->sched = NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

json_t *rs_run_jobs_sched_json(const rs_run_ctx *r, const json_t *jobs)
{
    if (!r->sched)
        return NULL;
    uint32_t A = r->nrun_jobs, done = 0, nsd = 0;
    double wait = 0, *sd = calloc(A ? A : 1, sizeof *sd);
    rs_time first = RS_TIME_MAX, last = 0;
    uint64_t iters = 0;
    for (uint32_t k = 0; sd && k < A; k++) {
        const rs_run_job *j = &r->jobs[k];
        const json_t *o = json_array_get(jobs, k), *v = json_object_get(o, "slowdown");
        if (!j->ended)
            continue;
        done++;
        wait += (double)(j->start_ps - j->arrival_ps);
        first = j->arrival_ps < first ? j->arrival_ps : first;
        last = j->end_ps > last ? j->end_ps : last;
        if (j->replay)
            iters += j->cfg->workload.iterations;
        if (json_is_number(v))
            sd[nsd++] = json_number_value(v);
    }
    json_t *s = sd ? json_object() : NULL;
    if (s) {
        qsort(sd, nsd, sizeof *sd, cmp_double);
        double mean = 0;
        for (uint32_t i = 0; i < nsd; i++)
            mean += sd[i] / nsd;
        rs_time span = done ? last - first : 0;
        json_object_set_new(s, "arrivals", I(A));
        json_object_set_new(s, "completed", I(done));
        json_object_set_new(s, "makespan_ps", done ? I(span) : json_null());
        json_object_set_new(s, "mean_wait_ps", done ? I(wait / done) : json_null());
        json_object_set_new(s, "mean_slowdown", nsd ? json_real(mean) : json_null());
        /* The nearest-rank 95th percentile. */
        json_object_set_new(s, "p95_slowdown", nsd ? json_real(sd[(uint32_t)ceil(0.95 * nsd) - 1]) : json_null());
        json_object_set_new(s, "max_slowdown", nsd ? json_real(sd[nsd - 1]) : json_null());
        json_object_set_new(s, "iterations", I(iters));
        json_object_set_new(s, "iterations_per_s", span > 0 ? json_real((double)iters * 1e12 / (double)span)
                                                            : json_null());
    }
    free(sd);
    return s;
}
