/*
 * replay_split.c - a replay split over processes (replay.h, "partitioned
 * runs"; docs/parallel.md, "Replays"): whether it can be, each process's
 * part packed after the run, and rank 0's merge of every part into the
 * state a serial run would have ended with.
 */
#include "replay_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "pool.h"

int rs_replay_splits(const rs_replay *r, char *why, size_t n)
{
    const char *w = NULL;
    char buf[200];
    if (r->sync != RS_SYNC_RANK)
        w = "its collectives wait for all their members at zero delay across GPUs (workload.sync=rank does not)";
    else if (r->cb_base == RS_NONE)
        w = "the flow level is not split";
    for (uint32_t c = 0; !w && c < r->ncomms; c++) {
        const comm_st *cm = &r->cm[c];
        for (uint32_t j = r->call_base[c]; j < r->call_base[c + 1] && cm->n > 1; j++) {
            const rs_op *o = r->call_op[j];
            if (!o || o->bytes == 0)
                continue;
            rs_coll_req req;
            rs_coll_algo a = RS_ALGO_AUTO;
            rs_replay_coll_req(r, c, o->coll, o->bytes, &req);
            rs_coll_algo_resolve(r->net, cm->comm, &req, &a);
            int windowed = a == RS_ALGO_DIRECT && req.opts && req.opts->a2a_peers && req.opts->a2a_peers < cm->n - 1;
            if ((a != RS_ALGO_RING && a != RS_ALGO_TREE && a != RS_ALGO_HIERARCHICAL && a != RS_ALGO_NVLS &&
                 !(a == RS_ALGO_DIRECT && o->coll == RS_COLL_ALLTOALL)) || windowed) {
                snprintf(buf, sizeof buf, "its %s %s%s on communicator %u is not split yet (only rings, trees, "
                         "hierarchical ones, NVLS and direct all-to-alls without a window)",
                         rs_coll_op_name((rs_coll_op)o->coll), rs_coll_algo_name(a), windowed ? " with a window" : "", c);
                w = buf;
                break;
            }
        }
    }
    if (w && why)
        snprintf(why, n, "%s", w);
    return w == NULL;
}

/* This process's part: a header, its ranks' state, its instances. */
typedef struct part_hdr {
    int32_t status;
    uint32_t nrank, ninst, ranks_done;
    uint64_t nowed;
    rs_time t_last;
    uint64_t ops_done;
    char errmsg[512];
} part_hdr;

typedef struct part_inst {
    uint64_t k;
    rs_time t_first;
    rs_net_rec_key last;
    uint32_t comm, ndone, has_last, nissued, ntally, pad;
} part_inst;

typedef struct part_tally {
    uint32_t gpu, port;
    uint64_t bytes;
} part_tally;

typedef struct buf {
    unsigned char *p;
    size_t n, cap;
    int oom;
} buf;

static void buf_put(buf *b, const void *v, size_t n)
{
    if (b->oom || n == 0)
        return;
    if (rs_array_reserve(&b->p, &b->cap, b->n + n, 1, 4096) != RS_OK) {
        b->oom = 1;
        return;
    }
    memcpy(b->p + b->n, v, n);
    b->n += n;
}

int rs_replay_part_pack(const rs_replay *r, void **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    buf b = { 0 };
    part_hdr h;
    memset(&h, 0, sizeof h);
    h.status = r->status;
    snprintf(h.errmsg, sizeof h.errmsg, "%s", r->errmsg);
    h.t_last = r->t_last;
    h.ops_done = r->ops_done;
    h.ranks_done = r->ranks_done;
    for (uint32_t rank = 0; rank < r->nranks; rank++)
        h.nrank += rs_net_gpu_local(r->net, r->gpu[rank]);
    for (const inst *in = r->live; in; in = in->gnext)
        h.ninst++;
    h.nowed = r->nowed;
    buf_put(&b, &h, sizeof h);
    buf_put(&b, r->owed, r->nowed * sizeof *r->owed);
    buf_put(&b, r->fin, (size_t)r->iterations * sizeof *r->fin);
    buf_put(&b, r->E_local, (size_t)r->iterations * sizeof *r->E_local);
    for (uint32_t rank = 0; rank < r->nranks; rank++)
        if (rs_net_gpu_local(r->net, r->gpu[rank])) {
            buf_put(&b, &rank, sizeof rank);
            buf_put(&b, &r->rk[rank], sizeof r->rk[rank]);
            buf_put(&b, r->state + r->rk[rank].state_off, r->cls[r->rk[rank].cls].nops);
        }
    uint32_t G = rs_net_gpus(r->net);
    for (const inst *in = r->live; in; in = in->gnext) {
        const comm_st *cm = &r->cm[in->comm];
        const rs_tally *t = in->coll ? rs_coll_tally(in->coll) : NULL;
        part_inst pi;
        memset(&pi, 0, sizeof pi);
        pi.k = in->k;
        pi.t_first = in->t_first;
        pi.last = in->last;
        pi.comm = in->comm;
        pi.ndone = in->ndone;
        pi.has_last = in->has_last;
        for (uint32_t p = 0; p < cm->n; p++)
            pi.nissued += in->opidx[p] != RS_NONE;
        for (uint32_t g = 0; t && g < G; g++)
            for (unsigned q = 0; q < RS_TALLY_NPORTS; q++)
                pi.ntally += rs_tally_get(t, g, (rs_tally_port)q) != 0;
        buf_put(&b, &pi, sizeof pi);
        for (uint32_t p = 0; p < cm->n; p++)
            if (in->opidx[p] != RS_NONE) {
                uint32_t e[2] = { p, in->opidx[p] };
                buf_put(&b, e, sizeof e);
            }
        for (uint32_t g = 0; t && g < G; g++)
            for (unsigned q = 0; q < RS_TALLY_NPORTS; q++) {
                part_tally e = { g, q, rs_tally_get(t, g, (rs_tally_port)q) };
                if (e.bytes)
                    buf_put(&b, &e, sizeof e);
            }
    }
    if (b.oom) {
        free(b.p);
        return RS_ENOMEM;
    }
    *out = b.p;
    *len = b.n;
    return RS_OK;
}

/* Reading a part: NULL once it runs out. */
typedef struct rd {
    const unsigned char *p, *end;
} rd;

static int rd_get(rd *d, void *v, size_t n)
{
    if ((size_t)(d->end - d->p) < n)
        return 0;
    memcpy(v, d->p, n);
    d->p += n;
    return 1;
}

static int key_cmp(const void *a, const void *b)
{
    const inst *x = *(inst *const *)a, *y = *(inst *const *)b;
    return rs_net_rec_key_less(&x->last, &y->last) ? -1 : rs_net_rec_key_less(&y->last, &x->last);
}

/* Rank 0's own tallies first: each instance's merged tally starts as
 * what its collective here counted. */
static int merge_own_tallies(rs_replay *r)
{
    for (inst *in = r->live; in; in = in->gnext) {
        const rs_tally *t = in->coll ? rs_coll_tally(in->coll) : NULL;
        if (rs_tally_create(&in->merged) != RS_OK)
            return RS_ENOMEM;
        for (uint32_t g = 0; t && g < rs_net_gpus(r->net); g++)
            for (unsigned q = 0; q < RS_TALLY_NPORTS; q++) {
                uint64_t v = rs_tally_get(t, g, (rs_tally_port)q);
                if (v && rs_tally_add(in->merged, g, (rs_tally_port)q, v) != RS_OK)
                    return RS_ENOMEM;
            }
    }
    return RS_OK;
}

/* A part's header and the arrays after it: its status (the first failure
 * wins), its progress, the bounds it owes to ranks (added to extra), its
 * iteration completions and latest ends. */
static int read_head(rs_replay *r, rd *d, rs_time *extra, part_hdr *h)
{
    if (!rd_get(d, h, sizeof *h))
        return RS_EINVAL;
    if (r->status == RS_OK && h->status != RS_OK) {
        r->status = h->status;
        h->errmsg[sizeof h->errmsg - 1] = '\0';
        snprintf(r->errmsg, sizeof r->errmsg, "%s", h->errmsg);
    }
    if (h->t_last > r->t_last)
        r->t_last = h->t_last;
    r->ops_done += h->ops_done;
    r->ranks_done += h->ranks_done;
    for (uint64_t i = 0; i < h->nowed; i++) {
        owed e;
        if (!rd_get(d, &e, sizeof e) || e.rank >= r->nranks)
            return RS_EINVAL;
        extra[e.rank] = rs_time_add_sat(extra[e.rank], e.b);
    }
    for (uint32_t i = 0; i < r->iterations; i++) {
        uint32_t f;
        if (!rd_get(d, &f, sizeof f))
            return RS_EINVAL;
        r->fin[i] += f;
    }
    for (uint32_t i = 0; i < r->iterations; i++) {
        rs_time e;
        if (!rd_get(d, &e, sizeof e))
            return RS_EINVAL;
        if (e > r->E_local[i])
            r->E_local[i] = e;
    }
    return RS_OK;
}

/* A rank's state from another process indexes only what this replay has:
 * its stream heads and running op among its class's ops, its last
 * dimension among the dimensions, its iteration at most the last. */
static int rank_fits(const rs_replay *r, const rank_st *k)
{
    uint32_t nops = r->cls[k->cls].nops;
    if (k->last_dim >= RS_DIM_COUNT || k->iter > r->iterations || (k->c_op != RS_NONE && k->c_op >= nops))
        return 0;
    for (uint32_t s = 0; s < RS_STREAMS_MAX; s++)
        if (k->head[s] != RS_NONE && k->head[s] >= nops)
            return 0;
    return 1;
}

/* A part's ranks: their state replaces rank 0's (which never ran them). */
static int read_ranks(rs_replay *r, rd *d, uint32_t nrank)
{
    for (uint32_t i = 0; i < nrank; i++) {
        uint32_t rank;
        rank_st k;
        if (!rd_get(d, &rank, sizeof rank) || rank >= r->nranks || !rd_get(d, &k, sizeof k) ||
            k.state_off != r->rk[rank].state_off || k.cls != r->rk[rank].cls || !rank_fits(r, &k) ||
            !rd_get(d, r->state + k.state_off, r->cls[k.cls].nops))
            return RS_EINVAL;
        r->rk[rank] = k;
    }
    return RS_OK;
}

/* One of a part's instances, merged into rank 0's record of it (made
 * when rank 0 has no member of it, for the merge and the diagnosis):
 * its first issue, members done, latest completion, members issued and
 * transfers. */
static int read_inst(rs_replay *r, rd *d)
{
    part_inst pi;
    if (!rd_get(d, &pi, sizeof pi) || pi.comm >= r->ncomms ||
        pi.k >= r->inst_base[pi.comm + 1] - r->inst_base[pi.comm])
        return RS_EINVAL;
    const comm_st *cm = &r->cm[pi.comm];
    inst *in = r->byid[r->inst_base[pi.comm] + pi.k];
    if (!in) {
        uint32_t P = r->call_base[pi.comm + 1] - r->call_base[pi.comm];
        const rs_op *o = r->call_op[r->call_base[pi.comm] + pi.k % P];
        inst *tail = NULL;
        if (!(in = rs_replay_inst_new(r, pi.comm, pi.k, o->coll, o->bytes, &tail)) ||
            rs_tally_create(&in->merged) != RS_OK)
            return RS_ENOMEM;
    }
    if (pi.t_first < in->t_first)
        in->t_first = pi.t_first;
    in->ndone += pi.ndone;
    if (pi.has_last && (!in->has_last || rs_net_rec_key_less(&in->last, &pi.last))) {
        in->last = pi.last;
        in->has_last = 1;
    }
    for (uint32_t e = 0; e < pi.nissued; e++) {
        uint32_t v[2];
        if (!rd_get(d, v, sizeof v) || v[0] >= cm->n || v[1] >= r->cls[r->rk[cm->ranks[v[0]]].cls].nops)
            return RS_EINVAL;
        if (in->opidx[v[0]] == RS_NONE)
            in->opidx[v[0]] = v[1];
    }
    for (uint32_t e = 0; e < pi.ntally; e++) {
        part_tally t;
        if (!rd_get(d, &t, sizeof t) || t.port >= RS_TALLY_NPORTS || t.gpu >= rs_net_gpus(r->net))
            return RS_EINVAL;
        if (rs_tally_add(in->merged, t.gpu, (rs_tally_port)t.port, t.bytes) != RS_OK)
            return RS_ENOMEM;
    }
    return RS_OK;
}

/* Process p's whole part, read to its last byte. */
static int read_part(rs_replay *r, const void *part, size_t len, rs_time *extra)
{
    rd d = { part, (const unsigned char *)part + len };
    part_hdr h;
    int rc;
    if ((rc = read_head(r, &d, extra, &h)) != RS_OK || (rc = read_ranks(r, &d, h.nrank)) != RS_OK)
        return rc;
    for (uint32_t i = 0; i < h.ninst; i++)
        if ((rc = read_inst(r, &d)) != RS_OK)
            return rc;
    return d.p == d.end ? RS_OK : RS_EINVAL;
}

/* Iterations: E_i is the latest of its ranks' completions. */
static void merge_iterations(rs_replay *r)
{
    r->done = 0;
    for (uint32_t i = 0; i < r->iterations && r->fin[i] == r->nranks; i++) {
        r->E[i] = r->E_local[i];
        r->times[i] = r->E[i] - (i ? r->E[i - 1] : r->t0);
        r->done = i + 1;
    }
}

/* Collectives: done where their last member's completion ran, in that
 * order (their coll records into late, each where it would have gone in
 * a serial run); their bounds charged to every member. Those still
 * gathering members wait for them (the diagnosis reads them). */
static int merge_collectives(rs_replay *r, rs_timeline *late)
{
    uint64_t N = r->inst_base[r->ncomms];
    inst **done = calloc(N ? N : 1, sizeof *done);
    if (!done)
        return RS_ENOMEM;
    size_t nd = 0;
    for (uint32_t c = 0; c < r->ncomms; c++)
        r->cm[c].pending = NULL;
    for (uint64_t id = 0; id < N; id++) {
        inst *in = r->byid[id];
        if (!in)
            continue;
        const comm_st *cm = &r->cm[in->comm];
        in->arrived = 0;
        for (uint32_t p = 0; p < cm->n; p++)
            in->arrived += in->opidx[p] != RS_NONE;
        in->next = NULL;
        if (in->arrived < cm->n) {
            in->next = r->cm[in->comm].pending;
            r->cm[in->comm].pending = in;
        }
        if (in->ndone == cm->n && in->has_last)
            done[nd++] = in;
    }
    qsort(done, nd, sizeof *done, key_cmp);
    for (size_t i = 0; i < nd; i++) {
        inst *in = done[i];
        const comm_st *cm = &r->cm[in->comm];
        if (late) {
            rs_net_rec_key_pin(r->net, &in->last);
            rs_replay_tl_coll(r, late, in, in->t_first, in->last.t);
            rs_net_rec_key_pin(r->net, NULL);
        }
        r->ncolls++;
        rs_time b = rs_net_tally_bound(r->net, in->merged);
        for (uint32_t p = 0; p < cm->n; p++)
            rs_replay_add_bound(r, cm->ranks[p], b);
    }
    free(done);
    return RS_OK;
}

int rs_replay_part_finish(rs_replay *r, const void *const *all, const size_t *len, uint32_t n, rs_timeline *late)
{
    if (!r->byid)
        return RS_EINVAL; /* not a split run */
    /* Bounds owed to ranks of other processes, added once every rank's
     * state is in (this process's own first). */
    rs_time *extra = calloc(r->nranks ? r->nranks : 1, sizeof *extra);
    if (!extra)
        return RS_ENOMEM;
    int rc = merge_own_tallies(r);
    for (size_t i = 0; i < r->nowed; i++)
        extra[r->owed[i].rank] = rs_time_add_sat(extra[r->owed[i].rank], r->owed[i].b);
    for (uint32_t p = 1; p < n && rc == RS_OK; p++) /* 0 is this process's */
        rc = read_part(r, all[p], len[p], extra);
    for (uint32_t rank = 0; rank < r->nranks && rc == RS_OK; rank++)
        rs_replay_add_bound(r, rank, extra[rank]);
    free(extra);
    r->ops_total = 0; /* every rank's now, as ops_done */
    for (uint32_t rank = 0; rank < r->nranks; rank++)
        r->ops_total += (uint64_t)r->cls[r->rk[rank].cls].nops * r->iterations;
    if (rc != RS_OK)
        return rc;
    merge_iterations(r);
    return merge_collectives(r, late);
}
