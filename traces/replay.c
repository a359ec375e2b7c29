/*
 * replay.c - the replay's engine (replay.h; semantics in docs/replay.md;
 * the state and how the replay's files divide it in replay_int.h): op
 * states, the work list, starting ops, iterations, and the replay's
 * create and destroy.
 */
#include "replay_int.h"
#include "compute.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"
#include "rng.h"
#include "versioned.h"

/* ---- helpers ---------------------------------------------------------------- */

void rs_replay_fail(rs_replay *r, int rc, const char *fmt, ...)
{
    if (r->status != RS_OK)
        return;
    r->status = rc;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->errmsg, sizeof r->errmsg, fmt, ap);
    va_end(ap);
    rs_sim_stop(rs_net_sim(r->net), rc);
}

static void push(rs_replay *r, uint32_t rank, uint32_t op, uint8_t cause)
{
    if (rs_array_reserve(&r->work, &r->capwork, r->nwork + 1, sizeof *r->work, 1024) != RS_OK) {
        rs_replay_fail(r, RS_ENOMEM, "out of memory in the replay's work list");
        return;
    }
    r->work[r->nwork++] = (item){ rank, op, cause };
}

const char *rs_replay_label(const rs_replay *r, const rs_op *o)
{
    return rs_trace_string(r->t, o->label);
}

uint64_t rs_replay_op_k(const rs_replay *r, uint32_t rank, uint32_t j)
{
    const rank_st *k = &r->rk[rank];
    const cls_info *c = &r->cls[k->cls];
    const rs_op *o = &c->ops[j];
    return (uint64_t)k->iter * c->per_iter[o->comm * 3 + (o->kind - RS_OP_COLL)] + c->seq[j];
}

static void comm_change(rs_replay *r, uint32_t rank, int up, const rs_op *o);
static uint32_t ctas_of(const rs_replay *r, const rs_op *o);

/* ---- iterations ------------------------------------------------------------ */

/* Push the head of every stream of rank's fresh iteration. */
static void iteration_begin(rs_replay *r, uint32_t rank, uint8_t cause)
{
    rank_st *k = &r->rk[rank];
    const cls_info *c = &r->cls[k->cls];
    memset(rs_replay_states(r, rank), ST_WAIT, c->nops);
    k->ndone = 0;
    memcpy(k->head, c->first, sizeof k->head);
    for (uint32_t s = 0; s < RS_STREAMS_MAX; s++)
        if (c->first[s] != RS_NONE)
            push(r, rank, c->first[s], cause);
}

/* rank completed its current iteration now; start the next (looping over
 * empty programs, which complete at once). */
static void iteration_end(rs_replay *r, uint32_t rank)
{
    rank_st *k = &r->rk[rank];
    const cls_info *c = &r->cls[k->cls];
    rs_time now = rs_net_now(r->net);
    for (;;) {
        k->end = now;
        r->E_local[k->iter] = now; /* events run in time order */
        if (++r->fin[k->iter] == r->nranks) {
            /* Ranks finish iteration i before i+1, so the last finisher
             * of i+1 comes after the last of i: E_i fill in order. */
            RS_ASSERT(k->iter == r->done);
            r->E[k->iter] = now;
            r->times[k->iter] = now - (k->iter ? r->E[k->iter - 1] : r->t0);
            if (++r->done == r->iterations && r->on_done)
                r->on_done(r->done_ctx, r->net, 0);
        }
        if (++k->iter >= r->iterations) {
            r->ranks_done++;
            return;
        }
        if (c->nops) {
            iteration_begin(r, rank, k->last_dim);
            return;
        }
    }
}

/* The op record of rank's op o, completing now. */
static void tl_op(rs_replay *r, uint32_t rank, const rs_op *o)
{
    rs_timeline_op_rec rec = { .rank = r->tl_rank0 + rank, .comm = RS_TL_NONE,
                               .start_ps = r->op_t0[(size_t)rank * RS_STREAMS_MAX + o->stream],
                               .end_ps = rs_net_now(r->net), .bytes = o->bytes, .label = rs_replay_label(r, o) };
    switch ((rs_op_kind)o->kind) {
    case RS_OP_COMPUTE:
        rec.op = "compute";
        rec.bytes = 0; /* a compute op's bytes are its HBM traffic, not a buffer */
        break;
    case RS_OP_COLL:
        rec.op = rs_coll_op_name((rs_coll_op)o->coll);
        rec.comm = r->tl_comm0 + rs_trace_slot(r->t, rank, o->comm);
        break;
    case RS_OP_SEND:
    case RS_OP_RECV:
        rec.op = o->kind == RS_OP_SEND ? "send" : "recv";
        rec.comm = r->tl_comm0 + r->ncomms + o->dim;
        break;
    }
    rs_timeline_op(r->tl, &rec);
}

void rs_replay_complete(rs_replay *r, uint32_t rank, uint32_t j)
{
    rank_st *k = &r->rk[rank];
    const cls_info *c = &r->cls[k->cls];
    uint8_t *st = rs_replay_states(r, rank);
    const rs_op *o = &c->ops[j];
    RS_ASSERT(st[j] == ST_RUN && k->head[o->stream] == j);
    st[j] = ST_DONE;
    r->t_last = rs_net_now(r->net);
    if (o->kind != RS_OP_COMPUTE)
        comm_change(r, rank, 0, o);
    if (r->tl)
        tl_op(r, rank, o);
    k->ndone++;
    r->ops_done++;
    k->last_dim = o->dim;
    uint32_t nx = c->next[j];
    k->head[o->stream] = nx;
    if (nx != RS_NONE)
        push(r, rank, nx, o->dim);
    for (uint32_t q = c->rdep_off[j]; q < c->rdep_off[j + 1]; q++)
        push(r, rank, c->rdep[q], o->dim);
    if (k->ndone == c->nops)
        iteration_end(r, rank);
}

/* ---- starting ops ---------------------------------------------------------- */

static void ev_compute(void *ctx, rs_net *net, uint64_t arg);

/* ---- the GPU's side: jitter, contention, time by state (docs/compute.md) ---- */

/* Rank's compute op j of iteration `iter`, nominally d ps, with jitter:
 * a log-normal factor of mean 1 and coefficient of variation r->jitter,
 * drawn from (seed, rank, iteration, op) alone. */
static rs_time jittered(const rs_replay *r, uint32_t rank, uint32_t j, uint32_t iter, rs_time d)
{
    if (r->jitter <= 0 || d == 0)
        return d;
    rs_rng g;
    rs_rng_init(&g, r->seed, (uint64_t)rank, 0x6a69747465720000ull ^ ((uint64_t)iter << 24) ^ j);
    double u1 = 1.0 - rs_rng_unit(&g), u2 = rs_rng_unit(&g); /* u1 in (0, 1] */
    double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    double s2 = log1p(r->jitter * r->jitter);
    double v = (double)d * exp(sqrt(s2) * z - s2 / 2);
    return v >= (double)RS_TIME_MAX ? RS_TIME_MAX : (rs_time)llround(v);
}

/* How much longer compute takes beside the communication rank k runs:
 * its compute-bound share at SMs / (SMs - held), held at most half the
 * SMs; its memory-bound share c_mem at R / (R - q), R the GPU's streaming
 * rate and q the HBM bytes/s of the communication (what its ports carry
 * in both directions: read to send, written as received), at most R / 2. */
static double slow_factor(const rs_replay *r, const rank_st *k)
{
    if (!r->has_dev || !k->ncomm)
        return 1.0;
    double f_sm = 1.0, f_mem = 1.0;
    if (k->held) {
        uint32_t held = k->held < r->dev.sms / 2 ? k->held : r->dev.sms / 2;
        f_sm = (double)r->dev.sms / (double)(r->dev.sms - held);
    }
    if (k->c_mem > 0) {
        double R = r->dev.mem_bw * r->dev.mem_eff;
        double q = 2 * ((k->n_hb ? r->hb_Bps : 0) + (k->n_nic ? r->nic_Bps : 0));
        q = q < R / 2 ? q : R / 2;
        f_mem = R > 0 ? R / (R - q) : 1.0;
    }
    return (1 - k->c_mem) * f_sm + k->c_mem * f_mem;
}

/* Whether op o of rank's (communication) stays inside its HB domain: a
 * collective whose members all do, a send or receive whose peer does. */
static int op_in_domain(rs_replay *r, uint32_t rank, const rs_op *o)
{
    uint32_t H = r->hb_size, d = r->gpu[rank] / H;
    if (o->kind != RS_OP_COLL)
        return r->gpu[rs_trace_slot(r->t, rank, o->comm)] / H == d;
    uint32_t c = rs_trace_op_comm(r->t, rank, o);
    if (!r->comm_hb[c]) {
        uint32_t n;
        const uint32_t *m = rs_trace_comm_ranks(r->t, c, &n);
        r->comm_hb[c] = 1;
        for (uint32_t i = 0; i < n; i++)
            if (r->gpu[m[i]] / H != r->gpu[m[0]] / H)
                r->comm_hb[c] = 2;
    }
    return r->comm_hb[c] == 1;
}

/* Account rank k's time with communication running and compute idle up
 * to now: call before either changes. */
static void acct(rank_st *k, rs_time now)
{
    if (k->ncomm && k->c_op == RS_NONE)
        k->comm_only += now - k->acct_t;
    k->acct_t = now;
}

/* Rank's running compute from now at factor f: its end from the work
 * left, under the straggler windows; the event that ends it. */
static void compute_go(rs_replay *r, uint32_t rank, rs_time now, double f)
{
    rank_st *k = &r->rk[rank];
    rs_time w = f == 1.0 ? k->c_left : (rs_time)llround((double)k->c_left * f);
    k->c_t = now;
    k->t_free = rs_compute_end(r->net, r->gpu[rank], now, w); /* its end */
    rs_net_at_gpu(r->net, r->gpu[rank], k->t_free, ev_compute, r, (uint64_t)rank << 32 | k->c_op);
}

/* Rank's communication op o starts (up) or ends: the SMs it holds and
 * the HBM traffic of its ports change, and a compute op running beside it
 * changes pace from now. */
static void comm_change(rs_replay *r, uint32_t rank, int up, const rs_op *o)
{
    rank_st *k = &r->rk[rank];
    rs_time now = rs_net_now(r->net);
    acct(k, now);
    double f0 = slow_factor(r, k);
    uint32_t ctas = ctas_of(r, o);
    k->ncomm += up ? 1 : -1;
    k->held += up ? ctas : -ctas;
    if (r->hb_size) {
        uint32_t *n = op_in_domain(r, rank, o) ? &k->n_hb : &k->n_nic;
        *n += up ? 1 : -1;
    }
    double f1 = slow_factor(r, k);
    if (k->c_op == RS_NONE || f0 == f1)
        return;
    /* The segment since c_t did its share of the work left, in
     * proportion to its time; what it took beyond that work at pace 1
     * is contention. */
    rs_time seg = now - k->c_t, span = k->t_free - k->c_t;
    rs_time done = span ? (rs_time)((unsigned __int128)k->c_left * seg / span) : k->c_left;
    k->c_left -= done < k->c_left ? done : k->c_left;
    k->c_cont += (rs_time)llround((double)seg * (1.0 - 1.0 / f0));
    compute_go(r, rank, now, f1);
}

static uint32_t ctas_of(const rs_replay *r, const rs_op *o)
{
    return o->kind == RS_OP_COLL ? r->coll_ctas : r->p2p_ctas;
}

/* The share of compute op o's nominal time its memory-bound kernels take:
 * its HBM bytes at the GPU's streaming rate, at most all of it. */
static double mem_share(const rs_replay *r, const rs_op *o)
{
    double R = r->dev.mem_bw * r->dev.mem_eff;
    if (!r->hb_size || !o->bytes || !o->duration || !(R > 0))
        return 0;
    double m = (double)o->bytes / R / ((double)o->duration * 1e-12);
    return m < 1 ? m : 1;
}

void rs_replay_add_bound(rs_replay *r, uint32_t rank, rs_time b)
{
    r->rk[rank].bound = rs_time_add_sat(r->rk[rank].bound, b);
}

static void try_start(rs_replay *r, const item *it)
{
    uint32_t rank = it->rank, j = it->op;
    rank_st *k = &r->rk[rank];
    const cls_info *c = &r->cls[k->cls];
    uint8_t *st = rs_replay_states(r, rank);
    const rs_op *o = &c->ops[j];
    if (st[j] != ST_WAIT || k->head[o->stream] != j)
        return;
    if ((o->dep[0] != RS_NONE && st[o->dep[0]] != ST_DONE) || (o->dep[1] != RS_NONE && st[o->dep[1]] != ST_DONE))
        return;
    st[j] = ST_RUN;
    rs_time now = rs_net_now(r->net);
    if (r->op_t0)
        r->op_t0[(size_t)rank * RS_STREAMS_MAX + o->stream] = now;
    switch ((rs_op_kind)o->kind) {
    case RS_OP_COMPUTE: {
        /* The idle gap before this compute is charged to whatever released
         * it last (program.h: compute waits on communication only through
         * deps, and on compute only through its stream). */
        if (now > k->t_free)
            k->idle[it->cause] += now - k->t_free;
        rs_time d = jittered(r, rank, j, k->iter, o->duration);
        k->jit += (int64_t)(d - o->duration);
        if (d == 0) {
            k->t_free = now;
            rs_replay_complete(r, rank, j);
            break;
        }
        /* A straggler fault on this GPU stretches the part of the op
         * inside its window (compute.h); communication beside it slows
         * it while it runs (comm_change). */
        acct(k, now);
        k->c_op = j;
        k->c_start = now;
        k->c_nom = k->c_left = d;
        k->c_cont = 0;
        k->c_mem = mem_share(r, o);
        compute_go(r, rank, now, slow_factor(r, k));
        break;
    }
    case RS_OP_COLL:
        comm_change(r, rank, 1, o);
        rs_replay_coll_arrive(r, rank, j);
        break;
    case RS_OP_SEND:
        comm_change(r, rank, 1, o);
        rs_replay_send_start(r, rank, j);
        break;
    case RS_OP_RECV:
        comm_change(r, rank, 1, o);
        rs_replay_recv_start(r, rank, j);
        break;
    }
}

void rs_replay_drain(rs_replay *r)
{
    if (r->draining)
        return;
    r->draining = 1;
    while (r->wpos < r->nwork && r->status == RS_OK) {
        item it = r->work[r->wpos++];
        try_start(r, &it);
    }
    r->nwork = r->wpos = 0;
    r->draining = 0;
}

/* ---- callbacks -------------------------------------------------------------- */

static void ev_compute(void *ctx, rs_net *net, uint64_t arg)
{
    rs_replay *r = ctx;
    uint32_t rank = (uint32_t)(arg >> 32), j = (uint32_t)arg;
    rank_st *k = &r->rk[rank];
    rs_time now = rs_net_now(net);
    if (k->c_op != j || k->t_free != now)
        return; /* rescheduled by comm_change */
    /* What the op took beyond its nominal time and its contention is the
     * straggler windows'. */
    double f = slow_factor(r, k);
    k->c_cont += (rs_time)llround((double)(now - k->c_t) * (1.0 - 1.0 / f));
    rs_time took = now - k->c_start, nom = k->c_nom + k->c_cont;
    if (took > nom)
        k->stretch += took - nom;
    k->contended += k->c_cont;
    acct(k, now);
    k->c_op = RS_NONE;
    rs_replay_complete(r, rank, j);
    rs_replay_drain(r);
}

static void rank_begin(rs_replay *r, uint32_t rank)
{
    r->rk[rank].t_free = r->t0;
    if (r->cls[r->rk[rank].cls].nops)
        iteration_begin(r, rank, RS_DIM_NONE);
    else
        iteration_end(r, rank);
}

/* workload.sync=rank: a rank starts from its GPU's own event. */
static void ev_rank_start(void *ctx, rs_net *net, uint64_t rank)
{
    (void)net;
    rs_replay *r = ctx;
    rank_begin(r, (uint32_t)rank);
    rs_replay_drain(r);
}

static void ev_start(void *ctx, rs_net *net, uint64_t arg)
{
    (void)arg;
    rs_replay *r = ctx;
    r->t0 = rs_net_now(net);
    if (r->sync == RS_SYNC_COLLECTIVE) {
        for (uint32_t rank = 0; rank < r->nranks; rank++)
            rank_begin(r, rank);
        rs_replay_drain(r);
        return;
    }
    /* Each process starts its own ranks (a split run's are the GPUs of
     * its HB domains: the driver's event runs in every process). */
    r->split = rs_net_part_ranks(net) > 1;
    if (r->split) {
        if (!(r->byid = calloc(r->inst_base[r->ncomms] + 1, sizeof *r->byid))) {
            rs_replay_fail(r, RS_ENOMEM, "out of memory for the replay's %llu collectives",
                           (unsigned long long)r->inst_base[r->ncomms]);
            return;
        }
        r->ops_total = 0;
        for (uint32_t c = 0; c < r->ncomms; c++) {
            comm_st *cm = &r->cm[c];
            cm->nlocal = 0;
            for (uint32_t p = 0; p < cm->n; p++)
                cm->nlocal += rs_net_gpu_local(net, r->gpu[cm->ranks[p]]);
        }
    }
    for (uint32_t rank = 0; rank < r->nranks; rank++)
        if (rs_net_gpu_local(net, r->gpu[rank])) {
            if (r->split)
                r->ops_total += (uint64_t)r->cls[r->rk[rank].cls].nops * r->iterations;
            rs_net_at_gpu(net, r->gpu[rank], r->t0, ev_rank_start, r, rank);
        }
}

int rs_replay_create(const rs_trace *t, rs_net *net, const rs_replay_opts *opts, rs_replay **out, rs_err *err)
{
    *out = NULL;
    rs_replay_opts ro;
    const rs_replay_opts *o = &ro;
    rs_replay_opts_default(&ro);
    if (rs_versioned_take(&ro, sizeof ro, opts, RS_SIZE_V1(rs_replay_opts, sync)) != RS_OK)
        return rs_err_set(err, RS_EINVAL, "replay options: of no known size (initialise them with "
                          "rs_replay_opts_default)");
    if (o->iterations == 0)
        return rs_err_set(err, RS_EINVAL, "workload.iterations: expected at least 1 iteration, got 0");
    if ((unsigned)o->algo >= RS_COLL_NALGOS)
        return rs_err_set(err, RS_EINVAL, "workload.algo: unknown algorithm %d", (int)o->algo);
    if ((unsigned)o->sync > RS_SYNC_RANK)
        return rs_err_set(err, RS_EINVAL, "workload.sync: unknown mode %d", (int)o->sync);
    if (rs_trace_ngpus(t) > rs_net_gpus(net))
        return rs_err_set(err, RS_EINVAL, "trace %s is for %u GPUs, but the network has %u (topology.gpus)",
                          rs_trace_name(t), rs_trace_ngpus(t), rs_net_gpus(net));
    if (o->start_ps > RS_TIME_MAX / 2 - rs_net_now(net))
        return rs_err_set(err, RS_EINVAL, "replay options: a start too late to be simulated");
    rs_replay *r = calloc(1, sizeof *r);
    if (!r)
        return rs_err_set(err, RS_ENOMEM, "out of memory creating the replay");
    int rc = RS_ENOMEM;
    r->t = t;
    r->net = net;
    r->algo = o->algo;
    r->sync = o->sync;
    r->on_done = o->done;
    r->done_ctx = o->done_ctx;
    r->p2p_free = UINT32_MAX;
    rs_coll_opts_default(&r->copts);
    if (o->coll &&
        rs_versioned_take(&r->copts, sizeof r->copts, o->coll, RS_SIZE_V1(rs_coll_opts, a2a_peers)) != RS_OK) {
        rs_err_set(err, RS_EINVAL, "replay options: collective options of no known size (initialise them with "
                   "rs_coll_opts_default)");
        rc = RS_EINVAL;
        goto fail;
    }
    if (!(o->jitter >= 0 && o->jitter <= 1)) {
        rs_err_set(err, RS_EINVAL, "workload.jitter: expected a coefficient of variation from 0 to 1, got %g",
                   o->jitter);
        rc = RS_EINVAL;
        goto fail;
    }
    if (o->gpu) {
        r->dev = *o->gpu;
        r->has_dev = r->dev.sms >= 2;
        r->coll_ctas = o->coll_ctas;
        r->p2p_ctas = o->p2p_ctas;
        if (o->hb_size && (o->hb_Bps > 0 || o->nic_Bps > 0)) {
            r->hb_size = o->hb_size;
            r->hb_Bps = o->hb_Bps;
            r->nic_Bps = o->nic_Bps;
        }
    }
    r->jitter = o->jitter;
    r->seed = o->seed;
    r->iterations = o->iterations;
    r->nranks = rs_trace_nranks(t);
    r->nslots = rs_trace_nslots(t);
    r->ncomms = rs_trace_ncomms(t);
    r->nclasses = rs_trace_nclasses(t);
    size_t RS = (size_t)r->nranks * r->nslots;
    r->cls = calloc(r->nclasses, sizeof *r->cls);
    r->rk = calloc(r->nranks, sizeof *r->rk);
    r->gpu = malloc((size_t)r->nranks * sizeof *r->gpu);
    r->aux = malloc((RS ? RS : 1) * sizeof *r->aux);
    r->ch = calloc(RS ? RS : 1, sizeof *r->ch);
    r->cm = calloc(r->ncomms ? r->ncomms : 1, sizeof *r->cm);
    r->E = calloc(r->iterations, sizeof *r->E);
    r->times = calloc(r->iterations, sizeof *r->times);
    r->fin = calloc(r->iterations, sizeof *r->fin);
    r->E_local = calloc(r->iterations, sizeof *r->E_local);
    r->comm_hb = calloc(r->ncomms ? r->ncomms : 1, 1);
    r->capwork = 1024;
    r->work = malloc(r->capwork * sizeof *r->work);
    if (!r->cls || !r->rk || !r->gpu || !r->aux || !r->ch || !r->cm || !r->E || !r->times || !r->fin || !r->work ||
        !r->E_local || !r->comm_hb) {
        rs_err_set(err, RS_ENOMEM, "out of memory creating the replay of %u ranks", r->nranks);
        goto fail;
    }
    memset(r->aux, 0xff, (RS ? RS : 1) * sizeof *r->aux);
    if ((rc = rs_replay_build(r, err)) != RS_OK)
        goto fail;
    for (uint32_t rank = 0; rank < r->nranks; rank++)
        r->rk[rank].c_op = RS_NONE;
    rs_net_at(net, rs_net_now(net) + o->start_ps, ev_start, r, 0);
    *out = r;
    return RS_OK;
fail:
    rs_replay_destroy(r);
    return rc;
}

void rs_replay_destroy(rs_replay *r)
{
    if (!r)
        return;
    for (inst *in = r->live, *nx; in; in = nx) {
        nx = in->gnext;
        rs_coll_destroy(in->coll);
        rs_tally_destroy(in->merged);
        free(in);
    }
    if (r->cls)
        for (uint32_t c = 0; c < r->nclasses; c++) {
            free(r->cls[c].next);
            free(r->cls[c].rdep_off);
            free(r->cls[c].rdep);
            free(r->cls[c].seq);
            free(r->cls[c].per_iter);
            free(r->cls[c].slot_kind);
        }
    if (r->cm)
        for (uint32_t c = 0; c < r->ncomms; c++)
            rs_comm_destroy(r->cm[c].comm);
    free(r->cls);
    free(r->rk);
    free(r->state);
    free(r->gpu);
    free(r->comm_hb);
    free(r->aux);
    free(r->cm);
    free(r->E);
    free(r->times);
    free(r->fin);
    free(r->E_local);
    free(r->inst_base);
    free(r->call_base);
    free(r->call_op);
    free(r->call_serial);
    free(r->call_cb);
    free(r->byid);
    free(r->work);
    free(r->op_t0);
    rs_replay_p2p_fini(r);
    free(r->owed);
    free(r);
}

