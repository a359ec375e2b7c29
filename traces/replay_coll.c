/*
 * replay_coll.c - the replay's collective instances (replay_int.h): the
 * k-th call of every member on a communicator is one instance. Under
 * workload.sync=collective it starts when its last member issues it and
 * completes for every member at once; under workload.sync=rank it is
 * built (under its name) when its first member issues it, each member
 * joins as it issues and completes when its part is done, and the coll
 * record goes after the last member's completion.
 */
#include "replay_int.h"

#include <stdlib.h>
#include <string.h>

static void coll_done(void *ctx, rs_net *net, uint64_t tag);
static void member_done(void *ctx, rs_net *net, uint64_t tag, uint32_t pos);
static int coll_begin(rs_replay *r, inst *in, uint32_t rank, uint32_t j);

static rs_coll_algo pick_algo(const rs_replay *r, uint32_t comm, rs_coll_op op)
{
    int reduce_like = op == RS_COLL_ALLGATHER || op == RS_COLL_REDUCESCATTER || op == RS_COLL_ALLREDUCE;
    switch (r->algo) {
    case RS_ALGO_RING:
        return reduce_like ? RS_ALGO_RING : RS_ALGO_AUTO;
    case RS_ALGO_TREE:
        return op == RS_COLL_ALLREDUCE ? RS_ALGO_TREE : RS_ALGO_AUTO;
    case RS_ALGO_DIRECT:
    case RS_ALGO_PAIRWISE:
        return op == RS_COLL_ALLTOALL ? r->algo : RS_ALGO_AUTO;
    case RS_ALGO_HIERARCHICAL:
        return reduce_like && r->cm[comm].hier_ok ? RS_ALGO_HIERARCHICAL : RS_ALGO_AUTO;
    case RS_ALGO_NVLS:
        return reduce_like && r->cm[comm].one_dom ? RS_ALGO_NVLS : RS_ALGO_AUTO;
    default:
        return RS_ALGO_AUTO;
    }
}

void rs_replay_coll_req(const rs_replay *r, uint32_t comm, uint8_t op, uint64_t bytes, rs_coll_req *out)
{
    rs_coll_req_init(out, (rs_coll_op)op, bytes);
    out->algo = pick_algo(r, comm, (rs_coll_op)op);
    out->opts = &r->copts;
    /* Under workload.sync=rank members join one by one: what resolves the
     * algorithm must know (NCCL's tuner leaves NVLS out for them). */
    if (r->sync == RS_SYNC_RANK)
        out->member_done = member_done;
}

void rs_replay_coll_arrive(rs_replay *r, uint32_t rank, uint32_t j)
{
    const rs_op *o = &r->cls[r->rk[rank].cls].ops[j];
    uint32_t comm = rs_trace_slot(r->t, rank, o->comm);
    uint32_t pos = r->aux[(size_t)rank * r->nslots + o->comm];
    comm_st *cm = &r->cm[comm];
    uint64_t kk = rs_replay_op_k(r, rank, j);
    inst **pp = &cm->pending, *in;
    while ((in = *pp) && in->k != kk)
        pp = &in->next;
    if (!in) {
        if (!(in = rs_replay_inst_new(r, comm, kk, o->coll, o->bytes, pp)))
            return;
        if (r->sync == RS_SYNC_RANK && !coll_begin(r, in, rank, j))
            return;
    } else if (in->op != o->coll || in->bytes != o->bytes) {
        rs_replay_fail(r, RS_EINVAL,
                       "rank %u op %u (coll \"%s\", %s of %llu bytes) is call %llu on communicator %u, but an "
                       "earlier member issued that call as %s of %llu bytes: the members' programs disagree",
                       rank, j, rs_replay_label(r, o), rs_coll_op_name((rs_coll_op)o->coll),
                       (unsigned long long)o->bytes, (unsigned long long)kk + 1, comm,
                       rs_coll_op_name((rs_coll_op)in->op), (unsigned long long)in->bytes);
        return;
    }
    RS_ASSERT(in->opidx[pos] == RS_NONE);
    in->opidx[pos] = j;
    if (r->sync == RS_SYNC_RANK) {
        /* Its part starts now (rs_coll_join); once every member is in
         * (every member here, in a split run), nobody waits for it any
         * more. */
        if (in->t_first == RS_TIME_MAX)
            in->t_first = rs_net_now(r->net);
        if (++in->arrived == cm->nlocal) {
            *pp = in->next;
            in->next = NULL;
        }
        if (!in->coll) /* its creation failed: the run is stopping */
            return;
        int rc = rs_coll_join(in->coll, pos);
        if (rc != RS_OK && r->status == RS_OK) {
            rc = rs_coll_status(in->coll) != RS_OK ? rs_coll_status(in->coll) : rc;
            rs_replay_fail(r, rc, "rank %u op %u (coll \"%s\", %s of %llu bytes on communicator %u) could not join its "
                           "collective: %s", rank, j, rs_replay_label(r, o), rs_coll_op_name((rs_coll_op)in->op),
                           (unsigned long long)in->bytes, comm, rs_strerror(rc));
        }
        return;
    }
    if (++in->arrived < cm->n)
        return;
    *pp = in->next; /* every member is in: start it */
    in->next = NULL;
    rs_err e;
    rs_err_clear(&e);
    rs_coll_req req;
    rs_replay_coll_req(r, comm, in->op, in->bytes, &req);
    req.done = coll_done;
    req.ctx = in;
    int rc = rs_coll_create(r->net, cm->comm, &req, &in->coll, &e);
    if (rc != RS_OK)
        rs_replay_fail(r, rc, "rank %u op %u (coll \"%s\", %s of %llu bytes on communicator %u) could not start: %s",
                       rank, j, rs_replay_label(r, o), rs_coll_op_name((rs_coll_op)in->op),
                       (unsigned long long)in->bytes, comm, e.msg[0] ? e.msg : rs_strerror(rc));
}

inst *rs_replay_inst_new(rs_replay *r, uint32_t comm, uint64_t k, uint8_t op, uint64_t bytes, inst **pp)
{
    const comm_st *cm = &r->cm[comm];
    inst *in = malloc(sizeof *in + (size_t)cm->n * sizeof in->opidx[0]);
    if (!in) {
        rs_replay_fail(r, RS_ENOMEM, "out of memory starting a collective of %u ranks", cm->n);
        return NULL;
    }
    memset(in, 0, sizeof *in);
    memset(in->opidx, 0xff, (size_t)cm->n * sizeof in->opidx[0]);
    in->r = r;
    in->k = k;
    in->comm = comm;
    in->op = op;
    in->bytes = bytes;
    in->t_first = RS_TIME_MAX;
    if (r->byid)
        r->byid[r->inst_base[comm] + k] = in;
    *pp = in;
    in->gnext = r->live;
    if (r->live)
        r->live->gprev = in;
    r->live = in;
    return in;
}

/* workload.sync=rank: the collective is built when its first member
 * issues it (rank's op j; RS_NONE: when another process names it first,
 * rs_replay_inst_resolve), under its name; 0 when it could not be (the run failed). */
static int coll_begin(rs_replay *r, inst *in, uint32_t rank, uint32_t j)
{
    rs_err e;
    rs_err_clear(&e);
    uint32_t P = r->call_base[in->comm + 1] - r->call_base[in->comm];
    rs_coll_reservation name = { UINT64_MAX, RS_NONE };
    if (r->call_serial)
        name.serial0 = r->ser_base + in->k / P * r->ser_iter + r->call_serial[r->call_base[in->comm] + in->k % P];
    if (r->cb_base != RS_NONE)
        name.cb0 = r->cb_base + (uint32_t)(in->k / P) * r->cb_iter + r->call_cb[r->call_base[in->comm] + in->k % P];
    rs_coll_req req;
    rs_replay_coll_req(r, in->comm, in->op, in->bytes, &req);
    req.member_done = member_done;
    req.done = coll_done;
    req.ctx = in;
    req.reserved = &name;
    int rc = rs_coll_create(r->net, r->cm[in->comm].comm, &req, &in->coll, &e);
    if (rc != RS_OK && rank != RS_NONE)
        rs_replay_fail(r, rc, "rank %u op %u (coll \"%s\", %s of %llu bytes on communicator %u) could not start: %s",
                       rank, j, rs_replay_label(r, &r->cls[r->rk[rank].cls].ops[j]),
                       rs_coll_op_name((rs_coll_op)in->op), (unsigned long long)in->bytes, in->comm,
                       e.msg[0] ? e.msg : rs_strerror(rc));
    else if (rc != RS_OK)
        rs_replay_fail(r, rc, "call %llu on communicator %u (%s of %llu bytes) could not start: %s",
                       (unsigned long long)in->k + 1, in->comm, rs_coll_op_name((rs_coll_op)in->op),
                       (unsigned long long)in->bytes, e.msg[0] ? e.msg : rs_strerror(rc));
    return rc == RS_OK;
}

/* The last i < n with a[i] <= v (a non-decreasing, a[0] <= v). */
static uint32_t last_le32(const uint32_t *a, uint32_t n, uint64_t v)
{
    uint32_t lo = 0, hi = n;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (a[mid] <= v)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* A split run: another process named a callback of an instance (or of a
 * part of one) this one has not built: a credit for a member here that
 * has not issued it, or not reached that part, yet. Build it now, as its
 * first member here would (rs_net_cb_reserve). */
void rs_replay_inst_resolve(void *ctx, rs_net *net, uint32_t index)
{
    (void)net;
    rs_replay *r = ctx;
    uint32_t calls = r->call_base[r->ncomms];
    if (index < r->cb_base || !r->cb_iter || !calls || (index - r->cb_base) / r->cb_iter >= r->iterations)
        return;
    uint32_t it = (index - r->cb_base) / r->cb_iter, w = (index - r->cb_base) % r->cb_iter;
    uint32_t j = last_le32(r->call_cb, calls, w); /* a call of no callbacks shares its successor's offset */
    uint32_t comm = last_le32(r->call_base, r->ncomms, j);
    uint32_t P = r->call_base[comm + 1] - r->call_base[comm];
    uint64_t k = (uint64_t)it * P + (j - r->call_base[comm]);
    inst *in = r->byid ? r->byid[r->inst_base[comm] + k] : NULL;
    if (!in) {
        inst **pp = &r->cm[comm].pending;
        while (*pp)
            pp = &(*pp)->next;
        const rs_op *o = r->call_op[j];
        if (!(in = rs_replay_inst_new(r, comm, k, o->coll, o->bytes, pp)) || !coll_begin(r, in, RS_NONE, RS_NONE))
            return;
    }
    if (in->coll)
        rs_coll_bind(in->coll, index);
}

static void unlink_live(rs_replay *r, inst *in)
{
    if (in->gprev)
        in->gprev->gnext = in->gnext;
    else
        r->live = in->gnext;
    if (in->gnext)
        in->gnext->gprev = in->gprev;
}

void rs_replay_tl_coll(rs_replay *r, rs_timeline *tl, const inst *in, rs_time start, rs_time end)
{
    const comm_st *cm = &r->cm[in->comm];
    rs_coll_algo algo = RS_ALGO_AUTO; /* out of memory resolving it: said as is */
    if (in->coll) {
        algo = rs_coll_algo_used(in->coll);
    } else {
        rs_coll_req req;
        rs_replay_coll_req(r, in->comm, in->op, in->bytes, &req);
        rs_coll_algo_resolve(r->net, cm->comm, &req, &algo);
    }
    rs_timeline_coll_rec rec = { .id = r->tl_coll0 + r->ncolls, .comm = r->tl_comm0 + in->comm, .nranks = cm->n, .bytes = in->bytes,
                                 .start_ps = start, .end_ps = end, .op = rs_coll_op_name((rs_coll_op)in->op),
                                 .algo = rs_coll_algo_name(algo) };
    rs_timeline_coll(tl, &rec);
}

static void coll_done(void *ctx, rs_net *net, uint64_t tag)
{
    (void)tag;
    inst *in = ctx;
    rs_replay *r = in->r;
    const comm_st *cm = &r->cm[in->comm];
    if (r->sync == RS_SYNC_COLLECTIVE) { /* under rank: at its last member's completion (member_done) */
        if (r->tl)
            rs_replay_tl_coll(r, r->tl, in, rs_coll_start_time(in->coll), rs_net_now(net));
        r->ncolls++;
    }
    rs_time b = rs_coll_bound(in->coll);
    for (uint32_t p = 0; p < cm->n; p++)
        rs_replay_add_bound(r, cm->ranks[p], b);
    for (uint32_t p = 0; p < cm->n && r->sync == RS_SYNC_COLLECTIVE; p++)
        rs_replay_complete(r, cm->ranks[p], in->opidx[p]);
    unlink_live(r, in);
    rs_coll_destroy(in->coll); /* allowed from inside done */
    free(in);
    rs_replay_drain(r);
}

/* workload.sync=rank: member pos's part of the collective is done. */
static void member_done(void *ctx, rs_net *net, uint64_t tag, uint32_t pos)
{
    (void)net;
    (void)tag;
    inst *in = ctx;
    rs_replay *r = in->r;
    rs_replay_complete(r, r->cm[in->comm].ranks[pos], in->opidx[pos]);
    rs_replay_drain(r);
    /* Its record goes after what this completion wrote: where the last
     * member's completion is, which a split run finds only after it. */
    in->ndone++;
    if (r->split) {
        rs_net_rec_key_take(net, &in->last);
        in->has_last = 1;
    } else if (in->ndone == r->cm[in->comm].n) {
        if (r->tl)
            rs_replay_tl_coll(r, r->tl, in, in->t_first, rs_net_now(net));
        r->ncolls++;
    }
}

