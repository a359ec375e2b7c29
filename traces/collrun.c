/*
 * collrun.c - the collective driver (see collrun.h). Two ways to run the
 * iterations:
 *  - behind a barrier (workload.sync=collective, and one iteration of a
 *    flat collective under either sync): one collective runs at a time;
 *    its done callback records the iteration's time, frees it and starts
 *    the next one at that same instant, so iterations never overlap and
 *    no time passes between them;
 *  - streamed (workload.sync=rank, several iterations or a hierarchical
 *    collective): each GPU issues iteration i+1 the moment its own part of
 *    iteration i is done, as nccl-tests' loop launches its ops on each
 *    rank's stream with no barrier between them. That is a one-op
 *    training iteration, so the driver hands it to the replay (replay.h):
 *    a trace of the group's ranks, one communicator and one collective,
 *    replayed traffic.iters times; the replay also runs it split over MPI
 *    processes.
 * Either way no host launch overhead is added, which a network model has
 * no business guessing.
 */
#include "collrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "replay_int.h"
#include "versioned.h"

struct rs_collrun {
    rs_net *net;
    rs_comm *comm;
    rs_coll *coll;        /* the running iteration, or the validation probe */
    rs_time *times;       /* [iters]: times of completed iterations */
    unsigned __int128 bound_sum; /* their network-only bounds (rs_coll_bound), summed */
    uint64_t bytes;
    rs_time start;
    uint32_t iters, done;
    int running;          /* r->coll is iteration `done` (not the probe) */
    rs_coll_op op;
    rs_coll_algo algo_req, algo_used;
    rs_nccl_proto proto_used; /* the first iteration's */
    double predicted_us;      /* NCCL's model's time for it */
    int status;
    rs_time t_end;        /* completion of the last completed iteration */
    rs_timeline *tl;      /* borrowed, or NULL */
    uint32_t tl_comm;     /* its communicator's id in tl (0; a job's: rs_collrun_set_timeline_job) */
    uint64_t tl_coll0;    /* its first iteration's coll id in tl */
    rs_net_done_fn done_fn; /* a job's: called once the last iteration completes */
    void *done_ctx;
    char group[64];       /* communicator name for the timeline */
    char errmsg[512];
    /* Streamed iterations (the file's comment): the one-op trace and its
     * replay, else NULL; the late part of a split run's timeline. */
    rs_trace *trace;
    rs_replay *rp;
    rs_timeline *late;
    rs_time stream_bound;  /* the replay's bound per iteration (rs_collrun_finish) */
};

/* ---- traffic.group ----------------------------------------------------- */

/* s for a message: at most ~40 characters, control characters replaced. */
static void quote(char *buf, size_t size, const char *s)
{
    size_t n = 0;
    buf[n++] = '"';
    for (; *s && n + 5 < size && n < 42; s++)
        buf[n++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
    if (*s) {
        memcpy(buf + n, "...", 3);
        n += 3;
    }
    buf[n++] = '"';
    buf[n] = '\0';
}

/* Replace a lower layer's "communicator: " / "collective: " prefix by the
 * scenario key, so the user reads the key they can change. */
static void rekey(rs_err *err, const char *key)
{
    static const char *const prefixes[] = { "communicator: ", "collective: " };
    if (!err)
        return;
    const char *rest = err->msg;
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(rest, prefixes[i], strlen(prefixes[i])) == 0)
            rest += strlen(prefixes[i]);
    char tmp[sizeof err->msg];
    snprintf(tmp, sizeof tmp, "%s", rest);
    rs_err_set(err, err->code, "%s: %.460s", key, tmp);
}

/* Decimal digits [s, *end) as a number; UINT64_MAX when there are none or
 * the value passes UINT32_MAX (no GPU id is that large). */
static uint64_t parse_id(const char *s, const char **end)
{
    uint64_t v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++)
        if (v <= UINT32_MAX)
            v = v * 10 + (uint64_t)(*p - '0');
    *end = p;
    return p == s || v > UINT32_MAX ? UINT64_MAX : v;
}

static int bad_syntax(const char *spec, rs_err *err)
{
    char got[64];
    quote(got, sizeof got, spec);
    return rs_err_set(err, RS_EINVAL,
                      "traffic.group: expected all, rail:R, hb:H or a comma-separated list of GPU "
                      "ids (e.g. 0,8,16,24), got %s", got);
}

int rs_collrun_group_parse(const char *spec, uint32_t gpus, uint32_t hb_size, rs_comm **out,
                           rs_err *err)
{
    *out = NULL;
    if (gpus == 0 || hb_size == 0 || gpus % hb_size != 0)
        return rs_err_set(err, RS_EINVAL, "traffic.group: a network of %u GPUs in HB domains of %u "
                                          "has no groups", gpus, hb_size);
    int rc;
    const char *end;
    if (strcmp(spec, "all") == 0) {
        rc = rs_comm_create_all(gpus, out, err);
    } else if (strncmp(spec, "rail:", 5) == 0) {
        uint64_t r = parse_id(spec + 5, &end);
        if (*end || end == spec + 5)
            return bad_syntax(spec, err);
        if (r >= hb_size)
            return rs_err_set(err, RS_EINVAL,
                              "traffic.group: rail %s does not exist; expected rail:0 to rail:%u",
                              spec + 5, hb_size - 1);
        rc = rs_comm_create_rail(gpus, hb_size, (uint32_t)r, out, err);
    } else if (strncmp(spec, "hb:", 3) == 0) {
        uint64_t d = parse_id(spec + 3, &end);
        if (*end || end == spec + 3)
            return bad_syntax(spec, err);
        if (d >= gpus / hb_size)
            return rs_err_set(err, RS_EINVAL,
                              "traffic.group: HB domain %s does not exist; expected hb:0 to hb:%u",
                              spec + 3, gpus / hb_size - 1);
        rc = rs_comm_create_domain(gpus, hb_size, (uint32_t)d, out, err);
    } else {
        /* Explicit list: n = commas + 1 entries, each a non-empty number. */
        uint32_t n = 1;
        for (const char *p = spec; *p; p++)
            n += *p == ',';
        uint32_t *list = malloc((size_t)n * sizeof *list);
        if (!list)
            return rs_err_set(err, RS_ENOMEM, "out of memory parsing traffic.group");
        const char *p = spec;
        for (uint32_t i = 0; i < n; i++) {
            const char *tok = p;
            uint64_t g = parse_id(p, &end);
            if (end == p || (*end != ',' && *end != '\0')) {
                free(list);
                return bad_syntax(spec, err);
            }
            if (g >= gpus) {
                /* Also ids too long for 32 bits; the text is quoted as given. */
                rc = rs_err_set(err, RS_EINVAL,
                                "traffic.group: rank %u is GPU %.*s, but the network has %u GPUs "
                                "(0 to %u)", i, (int)(end - tok > 20 ? 20 : end - tok), tok, gpus,
                                gpus - 1);
                free(list);
                return rc;
            }
            list[i] = (uint32_t)g;
            p = *end ? end + 1 : end;
        }
        rc = rs_comm_create(list, n, gpus, out, err);
        free(list);
    }
    if (rc == RS_EINVAL)
        rekey(err, "traffic.group");
    return rc;
}

int rs_collrun_job_group(const char *spec, const uint32_t *gpus, uint32_t n, uint32_t net_gpus, rs_comm **out,
                         rs_err *err)
{
    if (out)
        *out = NULL;
    rs_comm *ranks = NULL;
    int rc = n && strncmp(spec, "rail:", 5) && strncmp(spec, "hb:", 3) ? rs_collrun_group_parse(spec, n, 1, &ranks, err)
                                                                       : RS_EINVAL;
    if (rc == RS_EINVAL) {
        char got[64];
        quote(got, sizeof got, spec);
        return rs_err_set(err, RS_EINVAL, "traffic.group: a job's collective runs over the job's own %u GPUs; "
                          "expected all or a list of its distinct ranks 0 to %u, got %s", n, n ? n - 1 : 0, got);
    }
    if (rc != RS_OK || !gpus || !out) {
        rs_comm_destroy(ranks);
        return rc;
    }
    /* Each rank of the spec its GPU. */
    uint32_t k = rs_comm_size(ranks), *list = malloc((size_t)k * sizeof *list);
    if (!list) {
        rs_comm_destroy(ranks);
        return rs_err_set(err, RS_ENOMEM, "out of memory starting the collective");
    }
    for (uint32_t i = 0; i < k; i++)
        list[i] = gpus[rs_comm_gpu(ranks, i)];
    rc = rs_comm_create(list, k, net_gpus, out, err);
    free(list);
    rs_comm_destroy(ranks);
    return rc;
}

/* ---- iterations -------------------------------------------------------- */

static void iter_start(rs_collrun *r);

static void iter_done(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    (void)tag; /* read only by the assertion, which release builds drop */
    rs_collrun *r = ctx;
    RS_ASSERT(tag == r->done && r->done < r->iters);
    rs_time t0 = rs_coll_start_time(r->coll), t1 = rs_coll_end_time(r->coll);
    if (r->tl) {
        rs_timeline_coll_rec rec = { .id = r->tl_coll0 + r->done, .comm = r->tl_comm, .nranks = rs_comm_size(r->comm),
                                     .bytes = r->bytes, .start_ps = t0, .end_ps = t1,
                                     .op = rs_coll_op_name(r->op),
                                     .algo = rs_coll_algo_name(rs_coll_algo_used(r->coll)) };
        rs_timeline_coll(r->tl, &rec);
    }
    r->t_end = t1;
    r->times[r->done++] = t1 - t0;
    r->bound_sum += rs_coll_bound(r->coll);
    rs_coll_destroy(r->coll); /* allowed from inside done */
    r->coll = NULL;
    r->running = 0;
    if (r->done < r->iters)
        iter_start(r);
    else if (r->done_fn)
        r->done_fn(r->done_ctx, net, r->iters);
}

/* The collective of every iteration: traffic.op of traffic.bytes, the
 * algorithm asked for (auto: the rule's), default options. */
static void coll_req(const rs_collrun *r, rs_coll_req *out)
{
    rs_coll_req_init(out, r->op, r->bytes);
    out->algo = r->algo_req;
}

static void iter_start(rs_collrun *r)
{
    rs_err e;
    rs_err_clear(&e);
    rs_coll_req req;
    coll_req(r, &req);
    req.done = iter_done;
    req.ctx = r;
    req.tag = r->done;
    int rc = rs_coll_create(r->net, r->comm, &req, &r->coll, &e);
    if (rc != RS_OK) {
        /* Not caught by the probe: out of memory, a size too large to cut
         * into pieces, or a send the network refused (RS_EUNREACH between
         * rails of a rail-only network with routing.pxn=off). */
        if (rc == RS_ERANGE)
            rekey(&e, "traffic.bytes");
        if (e.msg[0])
            snprintf(r->errmsg, sizeof r->errmsg, "%.500s", e.msg);
        else
            snprintf(r->errmsg, sizeof r->errmsg,
                     "collective %s, iteration %u could not start: %s%s", rs_coll_op_name(r->op),
                     r->done + 1, rs_strerror(rc),
                     rc == RS_EUNREACH ? " (between rails of a rail-only network, routing.pxn "
                                         "must not be off)" : "");
        r->status = rc;
        r->coll = NULL;
        rs_sim_stop(rs_net_sim(r->net), rc);
        return;
    }
    r->running = 1;
    if (r->done == 0) {
        r->algo_used = rs_coll_algo_used(r->coll);
        r->proto_used = rs_coll_proto_used(r->coll);
        r->predicted_us = rs_coll_predicted_us(r->coll);
    }
}

static void ev_first(void *ctx, rs_net *net, uint64_t arg)
{
    (void)net;
    (void)arg;
    iter_start(ctx);
}

/* The zero-byte probe completed (at the time rs_collrun_create ran): start
 * iteration 0 now or at traffic.start_ns (streamed: the replay starts
 * itself). */
static void probe_done(void *ctx, rs_net *net, uint64_t tag)
{
    (void)tag;
    rs_collrun *r = ctx;
    rs_coll_destroy(r->coll);
    r->coll = NULL;
    if (r->rp)
        return;
    if (r->start <= rs_net_now(net))
        iter_start(r);
    else
        rs_net_at(net, r->start, ev_first, r, 0);
}

/* ---- streamed iterations ------------------------------------------------ */

/* Whether c's iterations stream (the file's comment): under workload.sync
 * =rank, with several iterations or a hierarchical collective, of an
 * operation a trace carries (not send/recv, broadcast or reduce, whose
 * iterations keep the barrier). */
static int streams(const rs_collrun *r, const rs_synth_config *c)
{
    if (c->sync != RS_SYNC_RANK || r->op > RS_COLL_ALLTOALL)
        return 0;
    if (c->iters > 1)
        return 1;
    rs_coll_req req;
    coll_req(r, &req);
    rs_coll_algo a;
    return rs_coll_algo_resolve(r->net, r->comm, &req, &a) == RS_OK && a == RS_ALGO_HIERARCHICAL;
}

static void stream_done(void *ctx, rs_net *net, uint64_t tag)
{
    (void)tag;
    rs_collrun *r = ctx;
    r->done_fn(r->done_ctx, net, r->iters);
}

/* The group as a one-op trace (rank i on the group's GPU i, one
 * communicator of them all, data-parallel as nccl-tests' ranks are, one
 * collective of traffic.bytes on a communication stream, labelled with
 * the group), replayed traffic.iters times from `start` with the
 * driver's algorithm. What the first iteration runs (algorithm, protocol,
 * NCCL's prediction) is asked of the collectives layer without making
 * it. */
static int stream_make(rs_collrun *r, rs_time start, rs_err *err)
{
    uint32_t n = rs_comm_size(r->comm);
    const uint32_t *gpu = rs_comm_gpus(r->comm);
    uint32_t *ranks = malloc((size_t)n * sizeof *ranks);
    if (!ranks)
        return rs_err_set(err, RS_ENOMEM, "out of memory starting the collective");
    for (uint32_t i = 0; i < n; i++)
        ranks[i] = i;
    rs_trace *t = NULL;
    uint32_t comm = 0, cls = 0, label = 0;
    int rc = rs_trace_create(n, 1, &t, err);
    if (rc == RS_OK)
        rc = rs_trace_add_comm(t, RS_DIM_DP, ranks, n, &comm, err); /* a trace's communicators serve one */
    free(ranks);
    if (rc == RS_OK)
        rc = rs_trace_add_string(t, r->group, &label, err);
    rs_op op;
    memset(&op, 0, sizeof op);
    op.kind = RS_OP_COLL;
    op.dim = RS_DIM_DP;
    op.coll = (uint8_t)r->op;
    op.stream = 1;
    op.comm = 0; /* the rank's slot 0: the communicator */
    op.label = label;
    op.dep[0] = op.dep[1] = RS_NONE;
    op.bytes = r->bytes;
    if (rc == RS_OK)
        rc = rs_trace_add_class(t, &op, 1, &cls, err);
    for (uint32_t i = 0; rc == RS_OK && i < n; i++)
        rc = rs_trace_set_rank(t, i, gpu[i], cls, &comm, err);
    rs_trace_iter it;
    memset(&it, 0, sizeof it);
    if (rc == RS_OK)
        rc = rs_trace_set_info(t, &it, rs_net_gpus(r->net), "collective", err);
    if (rc == RS_OK)
        rc = rs_trace_finish(t, err);
    rs_coll_req req;
    coll_req(r, &req);
    rs_coll_needs first;
    if (rc == RS_OK && (rc = rs_coll_needs_get(r->net, r->comm, &req, &first, err)) == RS_OK) {
        r->algo_used = first.algo;
        r->proto_used = first.proto;
        r->predicted_us = first.predicted_us;
    }
    rs_replay_opts o;
    rs_replay_opts_default(&o);
    o.iterations = r->iters;
    o.algo = r->algo_req;
    o.sync = RS_SYNC_RANK;
    o.start_ps = start - rs_net_now(r->net);
    if (r->done_fn) { /* a job's: told when every GPU has done every iteration */
        o.done = stream_done;
        o.done_ctx = r;
    }
    if (rc == RS_OK)
        rc = rs_replay_create(t, r->net, &o, &r->rp, err);
    if (rc != RS_OK) {
        rs_trace_destroy(t);
        return rc;
    }
    r->trace = t;
    return RS_OK;
}

/* rs_collrun_create's and rs_collrun_create_job's: the group over the
 * whole network's GPUs, or (gpus) over a job's n GPUs, ranks 0..n-1 of the
 * spec being gpus[0..n-1]; iteration 0 at start + traffic.start_ns. */
static int collrun_make(const rs_synth_config *cfg, rs_net *net, const uint32_t *gpus, uint32_t n, rs_time start0,
                        rs_net_done_fn done, void *done_ctx, rs_collrun **out, rs_err *err)
{
    *out = NULL;
    rs_synth_config own;
    rs_synth_config_default(&own);
    if (rs_versioned_take(&own, sizeof own, cfg, RS_SIZE_V1(rs_synth_config, group)) != RS_OK)
        return rs_err_set(err, RS_EINVAL, "traffic: a configuration of no known size (initialise it with "
                          "rs_synth_config_default)");
    const rs_synth_config *c = &own;
    if (c->kind != RS_SYNTH_COLLECTIVE)
        return rs_err_set(err, RS_EINVAL, "traffic.kind: expected collective for the collective driver");
    if (c->iters == 0)
        return rs_err_set(err, RS_EINVAL, "traffic.iters: expected at least 1 iteration, got 0");
    rs_time start;
    if (rs_time_from_ns(c->start_ns, &start) != RS_OK || start > RS_TIME_MAX - start0)
        return rs_err_set(err, RS_EINVAL, "traffic.start_ns: expected a non-negative time");
    start += start0;
    if (memchr(c->group, '\0', sizeof c->group) == NULL)
        return rs_err_set(err, RS_EINVAL, "traffic.group: not terminated");

    rs_net_topo_info ti;
    rs_net_topo_info_get(net, &ti);
    uint32_t ngpus = rs_net_gpus(net);
    uint32_t hb_size = ti.hb_domains ? ngpus / ti.hb_domains : 1; /* as the collectives do */

    rs_collrun *r = calloc(1, sizeof *r);
    if (!r)
        return rs_err_set(err, RS_ENOMEM, "out of memory starting the collective");
    r->done_fn = done;
    r->done_ctx = done_ctx;
    int rc;
    if (!gpus) {
        rc = rs_collrun_group_parse(c->group, ngpus, hb_size, &r->comm, err);
    } else {
        rc = rs_collrun_job_group(c->group, gpus, n, ngpus, &r->comm, err);
    }
    if (rc != RS_OK)
        goto fail;
    r->times = calloc(c->iters, sizeof *r->times);
    if (!r->times) {
        rc = rs_err_set(err, RS_ENOMEM, "out of memory for %u iteration times", c->iters);
        goto fail;
    }
    r->net = net;
    r->bytes = c->bytes;
    r->start = start;
    r->iters = c->iters;
    r->op = c->op;
    r->algo_req = r->algo_used = c->algo;
    int digit = c->group[0] >= '0' && c->group[0] <= '9';
    snprintf(r->group, sizeof r->group, "%s%.57s", digit ? "group:" : "", c->group);

    /* The collectives layer validates op, algorithm and group as it starts;
     * with zero bytes it sends nothing and completes from an event now. */
    rs_coll_req probe;
    rs_coll_req_init(&probe, r->op, 0);
    probe.algo = r->algo_req;
    probe.done = probe_done;
    probe.ctx = r;
    rc = rs_coll_create(net, r->comm, &probe, &r->coll, err);
    if (rc == RS_EINVAL)
        rekey(err, r->op == RS_COLL_SENDRECV && rs_comm_size(r->comm) < 2 ? "traffic.group"
                                                                           : "traffic.algo");
    if (rc == RS_OK && streams(r, c))
        rc = stream_make(r, start, err);
    if (rc != RS_OK)
        goto fail;
    *out = r;
    return RS_OK;
fail:
    rs_collrun_destroy(r);
    return rc;
}

int rs_collrun_create(const rs_synth_config *c, rs_net *net, rs_collrun **out, rs_err *err)
{
    return collrun_make(c, net, NULL, 0, 0, NULL, NULL, out, err);
}

int rs_collrun_create_job(const rs_synth_config *c, rs_net *net, const uint32_t *gpus, uint32_t n, rs_time start,
                          rs_net_done_fn done, void *ctx, rs_collrun **out, rs_err *err)
{
    *out = NULL;
    if (!gpus || n == 0)
        return rs_err_set(err, RS_EINVAL, "traffic.group: a job's collective needs the job's GPUs");
    return collrun_make(c, net, gpus, n, start, done, ctx, out, err);
}

void rs_collrun_destroy(rs_collrun *r)
{
    if (!r)
        return;
    rs_coll_destroy(r->coll);
    rs_replay_destroy(r->rp);
    rs_trace_destroy(r->trace);
    rs_comm_destroy(r->comm);
    free(r->times);
    free(r);
}

rs_coll_op rs_collrun_op(const rs_collrun *r) { return r->op; }
rs_coll_algo rs_collrun_algo(const rs_collrun *r) { return r->algo_used; }
rs_nccl_proto rs_collrun_proto(const rs_collrun *r) { return r->proto_used; }
double rs_collrun_predicted_us(const rs_collrun *r) { return r->predicted_us; }
uint32_t rs_collrun_ranks(const rs_collrun *r) { return rs_comm_size(r->comm); }
uint64_t rs_collrun_bytes(const rs_collrun *r) { return r->bytes; }
uint32_t rs_collrun_iters(const rs_collrun *r) { return r->iters; }

const rs_time *rs_collrun_times(const rs_collrun *r, uint32_t *n_done)
{
    if (r->rp)
        return rs_replay_iter_times(r->rp, n_done);
    *n_done = r->done;
    return r->times;
}

void rs_collrun_finish(rs_collrun *r)
{
    if (!r->rp)
        return;
    rs_err e;
    rs_err_clear(&e);
    int rc = rs_replay_finish(r->rp, &e);
    /* Iterations left undone are the run's to explain (the messages left
     * undelivered, the faults); an error that stopped it is said here. */
    if (rc != RS_OK && rc != RS_EINCOMPLETE) {
        r->status = rc;
        snprintf(r->errmsg, sizeof r->errmsg, "%.500s", e.msg);
    }
    rs_replay_stats st;
    rs_replay_stats_get(r->rp, &st);
    r->stream_bound = st.bound_valid ? st.bound_ps : 0;
}

int rs_collrun_status(const rs_collrun *r)
{
    if (r->status != RS_OK)
        return r->status;
    return r->coll ? rs_coll_status(r->coll) : RS_OK;
}

const char *rs_collrun_errmsg(const rs_collrun *r)
{
    return r->errmsg;
}

rs_time rs_collrun_end_time(const rs_collrun *r)
{
    if (r->rp) { /* the replay's start (r->start) plus E_i - E_{i-1} over the iterations done */
        uint32_t n;
        const rs_time *t = rs_replay_iter_times(r->rp, &n);
        rs_time end = r->start;
        for (uint32_t i = 0; i < n; i++)
            end += t[i];
        return n ? end : 0;
    }
    return r->t_end;
}

double rs_collrun_progress(const rs_collrun *r)
{
    if (r->rp)
        return rs_replay_progress(r->rp);
    if (r->iters == 0)
        return 1.0;
    double cur = r->running && r->coll ? rs_coll_progress(r->coll) : 0.0;
    return ((double)r->done + cur) / (double)r->iters;
}

rs_time rs_collrun_bound(const rs_collrun *r)
{
    if (r->rp)
        return r->stream_bound;
    return r->done ? (rs_time)((r->bound_sum + r->done / 2) / r->done) : 0;
}

int rs_collrun_splits(const rs_collrun *r, char *why, size_t n)
{
    if (r->rp)
        return rs_replay_splits(r->rp, why, n);
    if (r->iters > 1) {
        if (why)
            snprintf(why, n, "each of traffic.iters=%u iterations starts when the one before has finished on every "
                     "GPU (workload.sync=collective, or traffic.op %s)", r->iters, rs_coll_op_name(r->op));
        return 0;
    }
    rs_coll_req req;
    coll_req(r, &req);
    return rs_coll_splits(r->net, r->comm, &req, why, n);
}

int rs_collrun_part_pack(const rs_collrun *r, void **buf, size_t *len)
{
    if (r->rp)
        return rs_replay_part_pack(r->rp, buf, len);
    if (r->running && r->coll)
        return rs_coll_part_pack(r->coll, buf, len);
    *buf = calloc(1, 1);
    *len = 0;
    return *buf ? RS_OK : RS_ENOMEM;
}

int rs_collrun_part_finish(rs_collrun *r, const void *const *all, const size_t *len, uint32_t n)
{
    if (r->rp)
        return rs_replay_part_finish(r->rp, all, len, n, r->late);
    if (!r->running || !r->coll)
        return RS_OK;
    return rs_coll_part_finish(r->coll, all, len, n); /* iter_done may run */
}

void rs_collrun_timeline_move(rs_collrun *r, rs_timeline *tl)
{
    if (r->rp)
        r->late = tl; /* the replay writes its collectives' records there (rs_replay_part_finish) */
    else
        r->tl = tl;
}

int rs_collrun_set_timeline_part(rs_collrun *r, rs_timeline *tl, rs_err *err)
{
    if (!r || !tl)
        return rs_err_set(err, RS_EINVAL, "timeline: a collective driver and a timeline writer are required");
    return r->rp ? rs_replay_set_timeline_part(r->rp, tl, 0, err) : RS_OK;
}

int rs_collrun_set_timeline(rs_collrun *r, rs_timeline *tl, rs_err *err)
{
    if (!r || !tl)
        return rs_err_set(err, RS_EINVAL, "timeline: a collective driver and a timeline writer are required");
    return rs_collrun_set_timeline_job_at(r, tl, NULL, 0, 0, 0, err);
}

int rs_collrun_set_timeline_job(rs_collrun *r, rs_timeline *tl, const char *job, uint32_t comm, uint64_t coll0,
                                rs_err *err)
{
    if (!job)
        return rs_err_set(err, RS_EINVAL, "timeline: a collective driver, a timeline writer and a job are required");
    return rs_collrun_set_timeline_job_at(r, tl, job, 0, comm, coll0, err);
}

/* Streamed, the replay's records, under the names a collective run gives:
 * its ranks as a replay's, the communicator the group spec. */
int rs_collrun_set_timeline_job_at(rs_collrun *r, rs_timeline *tl, const char *job, uint32_t rank0, uint32_t comm0,
                                   uint64_t coll0, rs_err *err)
{
    if (!r || !tl)
        return rs_err_set(err, RS_EINVAL, "timeline: a collective driver and a timeline writer are required");
    char name[160];
    if (job)
        snprintf(name, sizeof name, "%s (%.80s)", r->group, job);
    else
        snprintf(name, sizeof name, "%s", r->group);
    int rc = RS_OK;
    if (r->rp) {
        rs_replay_tl_ids(r->rp, job ? job : "", rank0, comm0, coll0);
        if ((rc = rs_replay_set_timeline_part(r->rp, tl, 0, err)) == RS_OK)
            rs_replay_tl_rank_names(r->rp, tl);
    } else {
        r->tl = tl;
        r->tl_comm = comm0;
        r->tl_coll0 = coll0;
    }
    if (rc == RS_OK)
        rs_timeline_name(tl, RS_TL_NS_COMM, comm0, name);
    return rc;
}

uint32_t rs_collrun_tl_ranks(const rs_collrun *r) { return r->rp ? rs_comm_size(r->comm) : 0; }
