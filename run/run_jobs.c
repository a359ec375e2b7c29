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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_split.h"
#include "synth.h"

typedef struct rs_run_job {
    const rs_scenario_job *cfg; /* in the run's scenario */
    uint32_t *gpus, n;          /* cluster GPU of job GPU i */
    int started;                /* run (every job, or r->only) */
    rs_time start_ps;           /* jobs[i].start_us */
    rs_trace *trace;            /* a workload's */
    rs_replay *replay;
    rs_synth_job sj;            /* synthetic traffic */
    uint64_t msgs, arrived, bytes_arrived;
    rs_time last_ps;            /* the last arrival */
} rs_run_job;

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The messages a synthetic pattern sends over n GPUs. */
static uint64_t pattern_msgs(const rs_synth_config *c, uint32_t n)
{
    switch (c->kind) {
    case RS_SYNTH_SINGLE:
        return 1;
    case RS_SYNTH_PERMUTATION:
        return n;
    case RS_SYNTH_ALL_TO_ALL:
        return (uint64_t)n * (n - 1);
    case RS_SYNTH_INCAST:
        return c->fan_in;
    default:
        return 0;
    }
}

static void job_arrived(void *ctx, rs_net *net, uint64_t tag)
{
    (void)tag;
    rs_run_job *j = ctx;
    j->arrived++;
    j->bytes_arrived += j->cfg->traffic.bytes;
    j->last_ps = rs_net_now(net);
}

/* Job k's message: err's after "jobs[k] (NAME): ". */
static int job_failed(const rs_run_job *j, uint32_t k, int rc, rs_err *err)
{
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    rs_err_set(err, rc, "jobs[%u] (%s): %s", k, j->cfg->name, msg);
    return rc;
}

/* Place job k on the free GPUs (taken), mark them its own. */
static int job_place(rs_run_ctx *r, uint32_t k, uint8_t *taken, rs_err *err)
{
    const rs_scenario *sc = &r->sc;
    rs_run_job *j = &r->jobs[k];
    const rs_workload_config *w = &j->cfg->workload;
    uint32_t N = rs_net_gpus(r->net);
    int rc = rs_placement_size(w->placement, w->gpus, N, &j->n, err);
    if (rc != RS_OK)
        return rc;
    if (!(j->gpus = malloc((size_t)j->n * sizeof *j->gpus)))
        return rs_err_set(err, RS_ENOMEM, "out of memory placing the job");
    const char *p = w->placement;
    if (!w->gpus && (!p[0] || !strcmp(p, "packed") || !strcmp(p, "spread") || !strcmp(p, "fragmented") ||
                     !strcmp(p, "random"))) {
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

/* Start job k: its replay or its traffic. */
static int job_start(rs_run_ctx *r, uint32_t k, rs_err *err)
{
    const rs_scenario *sc = &r->sc;
    rs_run_job *j = &r->jobs[k];
    int rc = rs_net_set_job(r->net, k + 1, j->gpus, j->n, err);
    if (rc == RS_OK && j->cfg->pxn)
        rc = rs_net_set_job_pxn(r->net, k + 1, (rs_pxn_mode)(j->cfg->pxn - 1), err);
    if (rc != RS_OK)
        return rc;
    if (rs_time_from_us(j->cfg->start_us, &j->start_ps) != RS_OK)
        return rs_err_set(err, RS_EINVAL, "start_us: expected a non-negative time, got %g", j->cfg->start_us);
    j->started = 1;
    if (j->cfg->has_traffic) {
        j->msgs = pattern_msgs(&j->cfg->traffic, j->n);
        j->sj = (rs_synth_job){ .cfg = &j->cfg->traffic, .gpus = j->gpus, .n = j->n,
                                .verbs = (uint32_t)rs_scenario_job_verbs(j->cfg), .done = job_arrived, .ctx = j };
        return rs_synth_start_job(&j->sj, r->net, sc->net.seed + k, j->start_ps, err);
    }
    rs_workload_config w = j->cfg->workload;
    snprintf(w.gpu, sizeof w.gpu, "%s", rs_scenario_gpu_name(sc));
    if ((rc = rs_workload_load(&w, j->n, &j->trace, err)) != RS_OK)
        return rc;
    rs_trace_place(j->trace, j->gpus, j->n);
    return rs_run_replay_start(r, &w, j->trace, j->start_ps, &j->replay, err);
}

int rs_run_jobs_build(rs_run_ctx *r, rs_err *err)
{
    uint32_t J = r->sc.njobs, N = rs_net_gpus(r->net);
    uint8_t *taken = calloc(N, 1);
    r->jobs = calloc(J, sizeof *r->jobs);
    if (!taken || !r->jobs) {
        free(taken);
        return rs_err_set(err, RS_ENOMEM, "out of memory placing the jobs");
    }
    int rc = RS_OK;
    for (uint32_t k = 0; k < J && rc == RS_OK; k++) {
        r->jobs[k].cfg = &r->sc.jobs[k];
        if ((rc = job_place(r, k, taken, err)) != RS_OK)
            job_failed(&r->jobs[k], k, rc, err);
    }
    free(taken);
    /* Each job draws its flows' serials (so their ECMP paths) from its own
     * space: the same alone as beside the others. */
    if (rc == RS_OK && J > 1)
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
    for (uint32_t k = 0; k < r->sc.njobs; k++) {
        rs_run_job *j = &r->jobs[k];
        if (!j->replay)
            continue;
        int rc = rs_replay_set_timeline_job(j->replay, tl, j->cfg->name, rank0, comm0, (uint64_t)k << 40, err);
        if (rc != RS_OK)
            return rc;
        rank0 += rs_trace_nranks(j->trace);
        comm0 += rs_replay_tl_comms(j->replay);
    }
    return RS_OK;
}

void rs_run_jobs_finish(rs_run_ctx *r)
{
    for (uint32_t k = 0; k < r->sc.njobs; k++) {
        rs_run_job *j = &r->jobs[k];
        rs_err e;
        rs_err_clear(&e);
        int rc = j->replay ? rs_replay_finish(j->replay, &e) : RS_OK;
        if (rc != RS_OK && r->replay_status == RS_OK) {
            r->replay_status = rc;
            rs_err_set(&r->replay_err, rc, "job %s: %s", j->cfg->name, e.msg);
        }
    }
}

/* GPUs as ascending ids and ranges: "0-7,16,18-23". */
static json_t *gpu_ranges(const uint32_t *gpus, uint32_t n)
{
    uint32_t *s = malloc((size_t)(n ? n : 1) * sizeof *s);
    size_t cap = (size_t)n * 24 + 1;
    char *text = malloc(cap);
    json_t *out = NULL;
    if (s && text) {
        memcpy(s, gpus, (size_t)n * sizeof *s);
        qsort(s, n, sizeof *s, cmp_u32);
        size_t len = 0;
        text[0] = '\0';
        for (uint32_t i = 0; i < n;) {
            uint32_t e = i;
            while (e + 1 < n && s[e + 1] == s[e] + 1)
                e++;
            len += (size_t)snprintf(text + len, cap - len, e > i ? "%s%u-%u" : "%s%u", len ? "," : "", s[i], s[e]);
            i = e + 1;
        }
        out = json_string(text);
    }
    free(s);
    free(text);
    return out;
}

#define I(v) json_integer((json_int_t)(v))

/* A job's time: its mean iteration (a workload), or from its start to
 * its last arrival (traffic); -1 when it did not complete. */
static json_t *job_json(const rs_run_job *j)
{
    json_t *o = json_object();
    const rs_scenario_job *c = j->cfg;
    json_object_set_new(o, "name", json_string(c->name));
    json_object_set_new(o, "kind", json_string(c->has_traffic ? "traffic" : "workload"));
    json_object_set_new(o, "comm", json_string(rs_scenario_job_verbs(c) ? "verbs" : "nccl"));
    json_object_set_new(o, "gpus", I(j->n));
    json_object_set_new(o, "placement", json_string(c->workload.placement[0] ? c->workload.placement : "packed"));
    json_object_set_new(o, "gpu_ids", gpu_ranges(j->gpus, j->n));
    json_object_set_new(o, "start_ps", I(j->start_ps));
    double t = -1;
    if (j->replay) {
        json_t *it = rs_summary_replay_json(j->replay);
        rs_replay_stats st;
        rs_replay_stats_get(j->replay, &st);
        if (st.done == st.iterations)
            t = (double)st.time_ps;
        json_object_set_new(o, "iteration", it ? it : json_null());
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
    for (uint32_t k = 0; a && k < r->sc.njobs; k++) {
        json_t *o = job_json(&r->jobs[k]);
        if (!o || json_array_append_new(a, o)) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

json_t *rs_run_jobs_interference(const rs_run_ctx *r)
{
    uint32_t J = r->sc.njobs, P = rs_net_port_count(r->net);
    json_t *a = json_array();
    if (J < 2 || r->only >= 0)
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

void rs_run_jobs_baselines(const rs_run_ctx *r, json_t *jobs)
{
    uint32_t J = r->sc.njobs;
    if (J == 1) { /* alone already */
        json_t *o = json_array_get(jobs, 0);
        json_t *t = json_object_get(o, "time_ps");
        set_slowdown(o, json_is_number(t) ? json_number_value(t) : -1);
        return;
    }
    rs_scenario b = r->sc;
    b.capture.ports[0] = '\0';
    b.faults.baseline = 0;
    rs_run_opts o;
    rs_run_opts_default(&o);
    o.force = r->o->force;
    /* The caller's progress, so that an interrupt stops these runs too. */
    o.progress = r->o->progress;
    o.ctx = r->o->ctx;
    for (uint32_t k = 0; k < J; k++) {
        rs_result *res = NULL;
        rs_err err;
        double t0 = -1;
        if (rs_run_only(&b, &o, (int)k, &res, &err) == RS_OK && res) {
            const json_t *t = json_object_get(json_array_get(rs_result_jobs(res), k), "time_ps");
            t0 = json_is_number(t) ? json_number_value(t) : -1;
        }
        rs_result_destroy(res);
        set_slowdown(json_array_get(jobs, k), t0);
    }
}

void rs_run_jobs_free(rs_run_ctx *r)
{
    for (uint32_t k = 0; r->jobs && k < r->sc.njobs; k++) {
        rs_replay_destroy(r->jobs[k].replay);
        rs_trace_destroy(r->jobs[k].trace);
        free(r->jobs[k].gpus);
    }
    free(r->jobs);
    r->jobs = NULL;
}
