/*
 * replay_report.c - what a replay tells at its end (replay_int.h): the
 * diagnosis of a replay that made no progress (what each stuck rank waits
 * for), the statistics of docs/replay.md, progress, and the timeline's
 * name, op and coll records.
 */
#include "replay_int.h"
#include "versioned.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends to buf[*n..size) like snprintf, never past the end. */
static void put(char *buf, size_t size, size_t *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t size, size_t *n, const char *fmt, ...)
{
    if (*n >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *n, size - *n, fmt, ap);
    va_end(ap);
    if (w > 0)
        *n += (size_t)w;
    if (*n > size)
        *n = size;
}

static inst *find_pending(const rs_replay *r, uint32_t comm, uint64_t k)
{
    for (inst *in = r->cm[comm].pending; in; in = in->next)
        if (in->k == k)
            return in;
    return NULL;
}

/* What stuck rank waits for: its stream head that is running and blocked
 * by someone else, else its lowest waiting head. */
static void describe_rank(const rs_replay *r, uint32_t rank, char *buf, size_t size, size_t *n)
{
    const rank_st *k = &r->rk[rank];
    const cls_info *c = &r->cls[k->cls];
    const uint8_t *st = r->state + k->state_off;
    uint32_t best = RS_NONE, wait = RS_NONE;
    for (uint32_t s = 0; s < RS_STREAMS_MAX; s++) {
        uint32_t j = k->head[s];
        if (j == RS_NONE)
            continue;
        if (st[j] == ST_RUN && (best == RS_NONE || j < best))
            best = j;
        if (st[j] == ST_WAIT && (wait == RS_NONE || j < wait))
            wait = j;
    }
    uint32_t j = best != RS_NONE ? best : wait;
    if (j == RS_NONE) {
        put(buf, size, n, "rank %u has no op left but did not finish (internal error)", rank);
        return;
    }
    const rs_op *o = &c->ops[j];
    put(buf, size, n, "rank %u is stuck at op %u (%s \"%s\"", rank, j, rs_op_kind_name((rs_op_kind)o->kind),
        rs_replay_label(r, o));
    if (st[j] == ST_WAIT) {
        put(buf, size, n, ") which never became ready (internal error)");
        return;
    }
    switch ((rs_op_kind)o->kind) {
    case RS_OP_COLL: {
        uint32_t comm = rs_trace_slot(r->t, rank, o->comm);
        const comm_st *cm = &r->cm[comm];
        uint64_t kk = rs_replay_op_k(r, rank, j);
        put(buf, size, n, ", %s of %llu bytes on communicator %u, its call %llu there)",
            rs_coll_op_name((rs_coll_op)o->coll), (unsigned long long)o->bytes, comm, (unsigned long long)kk + 1);
        const inst *in = find_pending(r, comm, kk);
        if (!in) {
            put(buf, size, n, ", whose transfers never completed");
            return;
        }
        put(buf, size, n, " waiting for rank%s", cm->n - in->arrived > 1 ? "s" : "");
        uint32_t shown = 0;
        for (uint32_t p = 0; p < cm->n; p++)
            if (in->opidx[p] == RS_NONE && shown++ < 4)
                put(buf, size, n, "%s %u", shown > 1 ? "," : "", cm->ranks[p]);
        if (shown > 4)
            put(buf, size, n, " and %u more", shown - 4);
        put(buf, size, n, " (%u of %u members never issued it)", cm->n - in->arrived, cm->n);
        return;
    }
    case RS_OP_RECV:
        put(buf, size, n, ", %llu bytes) waiting for message %llu from rank %u, which never arrived",
            (unsigned long long)o->bytes, (unsigned long long)rs_replay_op_k(r, rank, j) + 1,
            rs_trace_slot(r->t, rank, o->comm));
        return;
    case RS_OP_SEND:
        put(buf, size, n, ", %llu bytes to rank %u) whose message was never delivered",
            (unsigned long long)o->bytes, rs_trace_slot(r->t, rank, o->comm));
        return;
    case RS_OP_COMPUTE:
        put(buf, size, n, ") which never ended (internal error)");
        return;
    }
}

int rs_replay_finish(rs_replay *r, rs_err *err)
{
    if (!r->finished) {
        r->finished = 1;
        if (r->status == RS_OK && r->ranks_done < r->nranks) {
            r->status = RS_EINCOMPLETE;
            char *b = r->errmsg;
            size_t size = sizeof r->errmsg, n = 0;
            uint32_t first = RS_NONE, stuck = 0;
            for (uint32_t rank = 0; rank < r->nranks; rank++)
                if (r->rk[rank].iter < r->iterations) {
                    stuck++;
                    if (first == RS_NONE)
                        first = rank;
                }
            put(b, size, &n, "replay made no progress after %.3f us: %u of %u ranks never finished "
                "iteration %u of %u: ", rs_time_to_us(rs_net_now(r->net)), stuck, r->nranks,
                r->rk[first].iter + 1, r->iterations);
            uint32_t shown = 0;
            for (uint32_t rank = first; rank < r->nranks && shown < 3; rank++) {
                if (r->rk[rank].iter >= r->iterations)
                    continue;
                if (shown++)
                    put(b, size, &n, "; ");
                describe_rank(r, rank, b, size, &n);
            }
            if (stuck > shown)
                put(b, size, &n, "; and %u more rank%s", stuck - shown, stuck - shown > 1 ? "s" : "");
            if (n >= size - 1)
                memcpy(b + size - 4, "...", 4);
        }
        if (r->status == RS_OK && !r->tail_done) {
            /* The tail: after its last compute a rank waits for its last
             * communication, then for the rest of the job to finish. */
            r->tail_done = 1;
            rs_time E = r->E[r->iterations - 1];
            for (uint32_t rank = 0; rank < r->nranks; rank++) {
                rank_st *k = &r->rk[rank];
                if (k->end > k->t_free)
                    k->idle[k->last_dim] += k->end - k->t_free;
                rs_time from = k->end > k->t_free ? k->end : k->t_free;
                if (E > from)
                    k->idle[RS_DIM_NONE] += E - from;
            }
        }
    }
    if (r->status != RS_OK)
        return rs_err_set(err, r->status, "%s", r->errmsg);
    return RS_OK;
}

static rs_time div_round(unsigned __int128 a, uint64_t b)
{
    return (rs_time)((a + b / 2) / b);
}

static void replay_stats_whole(const rs_replay *r, rs_replay_stats *out)
{
    memset(out, 0, sizeof *out);
    out->iterations = r->iterations;
    out->done = r->done;
    out->ranks = r->nranks;
    uint32_t D = r->done;
    if (D == 0)
        return;
    rs_time span = r->E[D - 1] - r->t0;
    out->time_ps = div_round(span, D);
    unsigned __int128 csum = 0, esum = 0, cont = 0, conly = 0;
    rs_time cmin = RS_TIME_MAX, cmax = 0, emin = RS_TIME_MAX, emax = 0;
    double energy = 0;
    for (uint32_t rank = 0; rank < r->nranks; rank++) {
        const rank_st *k = &r->rk[rank];
        rs_time c = r->cls[k->cls].compute;
        /* Stragglers, contention and jitter: the busy time, not the nominal. */
        if (k->stretch || k->contended)
            c += div_round((unsigned __int128)k->stretch + k->contended, D);
        if (k->jit) {
            int64_t j = k->jit >= 0 ? (int64_t)div_round((uint64_t)k->jit, D) : -(int64_t)div_round((uint64_t)-k->jit, D);
            c = j < 0 && (rs_time)-j > c ? 0 : (rs_time)((int64_t)c + j);
        }
        cont += k->contended;
        conly += k->comm_only;
        if (r->has_dev) {
            /* Board power by state over the iterations: computing (with
             * or without communication beside), communicating only, idle. */
            double T = (double)span, tc = (double)c * D, to = (double)k->comm_only;
            if (tc > T)
                tc = T;
            if (to > T - tc)
                to = T - tc;
            energy += (r->dev.busy_w * tc + r->dev.comm_w * to + r->dev.idle_w * (T - tc - to)) * 1e-12;
        }
        /* exposed = (span - D x compute) / D; every compute op of the first
         * D iterations ended by E_{D-1}, so this is not negative. */
        unsigned __int128 dc = (unsigned __int128)c * D;
        rs_time e = dc < span ? div_round(span - dc, D) : 0;
        csum += c;
        esum += e;
        cmin = c < cmin ? c : cmin;
        cmax = c > cmax ? c : cmax;
        emin = e < emin ? e : emin;
        emax = e > emax ? e : emax;
    }
    out->compute_ps[0] = div_round(csum, r->nranks);
    out->compute_ps[1] = cmin;
    out->compute_ps[2] = cmax;
    out->contention_ps = div_round(cont, (uint64_t)r->nranks * D);
    out->comm_only_ps = div_round(conly, (uint64_t)r->nranks * D);
    out->gpu = r->has_dev ? r->dev.name : NULL;
    if (r->has_dev && span > 0) {
        out->power_valid = 1;
        out->energy_j = energy / D;
        out->power_w = energy / ((double)span * 1e-12 * r->nranks);
    }
    out->exposed_ps[0] = div_round(esum, r->nranks);
    out->exposed_ps[1] = emin;
    out->exposed_ps[2] = emax;
    if (r->tail_done && r->status == RS_OK) {
        out->comm_valid = 1;
        for (int d = 0; d < RS_DIM_COUNT; d++) {
            unsigned __int128 s = 0;
            for (uint32_t rank = 0; rank < r->nranks; rank++)
                s += r->rk[rank].idle[d];
            out->comm_by_dim_ps[d] = div_round(s, (uint64_t)r->nranks * D);
        }
    }
    if (D == r->iterations) {
        out->bound_valid = 1;
        for (uint32_t rank = 0; rank < r->nranks; rank++)
            if (rank == 0 || r->rk[rank].bound > r->rk[out->bound_rank].bound)
                out->bound_rank = rank;
        out->bound_ps = div_round(r->rk[out->bound_rank].bound, D);
    }
    const rs_trace_iter *it = rs_trace_iteration(r->t);
    double secs = (double)span / D * 1e-12;
    if (secs > 0) {
        out->tokens_per_s = (double)it->tokens / secs;
        if (it->peak_flops > 0)
            out->mfu = it->model_flops / (secs * r->nranks * it->peak_flops);
    }
}

void rs_replay_stats_fill(const rs_replay *r, rs_replay_stats *out, size_t size)
{
    rs_replay_stats v;
    memset(&v, 0, sizeof v);
    replay_stats_whole(r, &v);
    rs_versioned_give(out, size, &v, sizeof v);
}

const rs_time *rs_replay_iter_times(const rs_replay *r, uint32_t *n)
{
    *n = r->done;
    return r->times;
}

const rs_trace *rs_replay_trace(const rs_replay *r)
{
    return r->t;
}

double rs_replay_progress(const rs_replay *r)
{
    return r->ops_total ? (double)r->ops_done / (double)r->ops_total : 1.0;
}

rs_time rs_replay_end_time(const rs_replay *r)
{
    return r->t_last > r->t0 ? r->t_last : r->t0;
}

/* ---- timeline ---------------------------------------------------------------- */

int rs_replay_set_timeline_job(rs_replay *r, rs_timeline *tl, const char *job, uint32_t rank0, uint32_t comm0,
                               uint64_t coll0, rs_err *err)
{
    if (!r || !job)
        return rs_err_set(err, RS_EINVAL, "timeline: a replay and a job name are required");
    rs_replay_tl_ids(r, job, rank0, comm0, coll0);
    return rs_replay_set_timeline_part(r, tl, 1, err);
}

void rs_replay_tl_ids(rs_replay *r, const char *job, uint32_t rank0, uint32_t comm0, uint64_t coll0)
{
    snprintf(r->tl_job, sizeof r->tl_job, "%s", job);
    r->tl_rank0 = rank0;
    r->tl_comm0 = comm0;
    r->tl_coll0 = coll0;
}

void rs_replay_tl_rank_names(const rs_replay *r, rs_timeline *tl)
{
    char name[96];
    const char *job = r->tl_job;
    for (uint32_t rank = 0; rank < r->nranks; rank++) {
        snprintf(name, sizeof name, "rank %u (gpu %u%s%s)", rank, r->gpu[rank], job[0] ? ", job " : "", job);
        rs_timeline_name(tl, RS_TL_NS_RANK, r->tl_rank0 + rank, name);
    }
}

uint32_t rs_replay_tl_comms(const rs_replay *r)
{
    return r->ncomms + RS_DIM_COUNT;
}

int rs_replay_set_timeline(rs_replay *r, rs_timeline *tl, rs_err *err)
{
    return rs_replay_set_timeline_part(r, tl, 1, err);
}

int rs_replay_set_timeline_part(rs_replay *r, rs_timeline *tl, int names, rs_err *err)
{
    if (!r || !tl)
        return rs_err_set(err, RS_EINVAL, "timeline: a replay and a timeline writer are required");
    if (r->tl)
        return rs_err_set(err, RS_EINVAL, "timeline: the replay already writes a timeline");
    r->op_t0 = calloc((size_t)r->nranks * RS_STREAMS_MAX + 1, sizeof *r->op_t0);
    if (!r->op_t0)
        return rs_err_set(err, RS_ENOMEM, "timeline: out of memory for the op starts of %u ranks", r->nranks);
    r->tl = tl;
    if (!names)
        return RS_OK;
    char name[96];
    const char *job = r->tl_job;
    rs_replay_tl_rank_names(r, tl);
    /* Communicators by dimension; tlstats derives the dimension from the
     * name up to its first '[' (analysis/tlstats.h). */
    uint32_t nth[RS_DIM_COUNT] = { 0 };
    for (uint32_t c = 0; c < r->ncomms; c++) {
        rs_dim d = rs_trace_comm_dim(r->t, c);
        if ((unsigned)d >= RS_DIM_COUNT)
            d = RS_DIM_NONE;
        snprintf(name, sizeof name, "%s[%u]%s%s%s", d == RS_DIM_NONE ? "comm" : rs_dim_name(d), nth[d]++,
                 job[0] ? " (" : "", job, job[0] ? ")" : "");
        rs_timeline_name(tl, RS_TL_NS_COMM, (uint64_t)r->tl_comm0 + c, name);
    }
    /* Point-to-point ops have no communicator: one per dimension stands in. */
    uint8_t p2p[RS_DIM_COUNT] = { 0 };
    for (uint32_t ci = 0; ci < r->nclasses; ci++)
        for (uint32_t i = 0; i < r->cls[ci].nops; i++) {
            const rs_op *o = &r->cls[ci].ops[i];
            if ((o->kind == RS_OP_SEND || o->kind == RS_OP_RECV) && o->dim < RS_DIM_COUNT)
                p2p[o->dim] = 1;
        }
    for (int d = 0; d < RS_DIM_COUNT; d++)
        if (p2p[d]) {
            snprintf(name, sizeof name, "%s-p2p%s%s%s", d == RS_DIM_NONE ? "comm" : rs_dim_name((rs_dim)d),
                     job[0] ? " (" : "", job, job[0] ? ")" : "");
            rs_timeline_name(tl, RS_TL_NS_COMM, (uint64_t)r->tl_comm0 + r->ncomms + (uint64_t)d, name);
        }
    return RS_OK;
}

