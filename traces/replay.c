/*
 * replay.c - trace replay (see replay.h; semantics in docs/replay.md).
 *
 * State: per rank class, tables derived once from its program (next op of
 * each stream, reverse dependencies, each communication op's index among
 * the program's ops of its kind on its slot); per rank, one state byte per
 * op, the head op of each stream and the accounting; per communicator, the
 * collectives still gathering members; per rank and peer slot, the
 * messages that arrived before their receive and the receives waiting for
 * their message.
 *
 * Progress is event driven: an op's completion pushes the ops it may
 * unblock (its stream successor and its dependents) on a work list, and
 * the list is drained at the end of every callback; an op starts when it
 * is its stream's head, its deps are done and it has not started. Nothing
 * ever polls, so a replay that cannot progress simply runs out of events;
 * rs_replay_finish then explains what each stuck rank waits for.
 *
 * Invariants: a rank runs one iteration at a time (its state bytes belong
 * to the current iteration); op states only go WAIT -> RUN -> DONE within
 * an iteration; the ops of one stream complete in program order.
 */
#include "replay.h"
#include "compute.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "gen.h"
#include "plan.h"
#include "pool.h"

enum { ST_WAIT = 0, ST_RUN = 1, ST_DONE = 2 };
enum { SK_NONE = 0, SK_COLL = 1, SK_P2P = 2 };

/* ---- the workload keys ----------------------------------------------------- */

void rs_workload_config_default(rs_workload_config *c)
{
    memset(c, 0, sizeof *c);
    c->iterations = 1;
    c->algo = RS_ALGO_AUTO;
}

int rs_workload_active(const rs_workload_config *c)
{
    return c->plan[0] != '\0' || c->trace[0] != '\0';
}

int rs_workload_load(const rs_workload_config *c, uint32_t gpus, rs_trace **out, rs_err *err)
{
    *out = NULL;
    rs_err e;
    rs_err_clear(&e);
    int rc;
    if (c->plan[0] && c->trace[0])
        return rs_err_set(err, RS_EINVAL,
                          "workload.plan and workload.trace: expected one of them, got both (\"%.100s\" "
                          "and \"%.100s\")", c->plan, c->trace);
    if (c->plan[0]) {
        rs_plan p;
        if ((rc = rs_plan_load_arg(c->plan, &p, &e)) != RS_OK)
            return rs_err_set(err, rc, "workload.plan: %.480s", e.msg);
        /* trace gen --gpus semantics: keep TP, PP, CP and EP, fill DP. */
        uint64_t unit = (uint64_t)p.par.tp * p.par.pp * p.par.cp * p.par.ep;
        if (gpus % unit)
            return rs_err_set(err, RS_EINVAL,
                              "workload.plan: plan %s needs a multiple of tp x pp x cp x ep = %u x %u x "
                              "%u x %u = %llu GPUs, but topology.gpus is %u", p.name, p.par.tp, p.par.pp,
                              p.par.cp, p.par.ep, (unsigned long long)unit, gpus);
        if ((rc = rs_plan_set_gpus(&p, gpus, &e)) != RS_OK)
            return rs_err_set(err, rc, "workload.plan: %.480s", e.msg);
        if ((rc = rs_gen(&p, out, &e)) != RS_OK)
            return rs_err_set(err, rc, "workload.plan: %.480s", e.msg);
        return RS_OK;
    }
    if (c->trace[0]) {
        if ((rc = rs_trace_read(c->trace, out, NULL, &e)) != RS_OK)
            return rs_err_set(err, rc, "workload.trace: %.480s", e.msg);
        if (rs_trace_ngpus(*out) > gpus) {
            rc = rs_err_set(err, RS_EINVAL,
                            "workload.trace: %.300s is a trace for %u GPUs, but the network has %u "
                            "(topology.gpus)", c->trace, rs_trace_ngpus(*out), gpus);
            rs_trace_destroy(*out);
            *out = NULL;
            return rc;
        }
        return RS_OK;
    }
    return rs_err_set(err, RS_EINVAL, "workload: expected workload.plan or workload.trace");
}

/* ---- state ------------------------------------------------------------------ */

/* Derived from one class's program. */
typedef struct cls_info {
    const rs_op *ops;
    uint32_t *next;     /* [nops] next op of the same stream, RS_NONE at the end */
    uint32_t *rdep_off; /* [nops + 1] */
    uint32_t *rdep;     /* ops that name op i in dep[] */
    uint32_t *seq;      /* [nops] COLL/SEND/RECV: index among the program's ops of that kind on that slot */
    uint32_t *per_iter; /* [nslots * 3] COLL, SEND, RECV ops per slot and iteration */
    uint8_t *slot_kind; /* [nslots] SK_* */
    rs_time compute;    /* sum of compute durations: stream 0 busy time per iteration */
    uint32_t nops;
    uint32_t first[RS_STREAMS_MAX];
} cls_info;

typedef struct rank_st {
    uint32_t head[RS_STREAMS_MAX]; /* current op of each stream, RS_NONE when done */
    uint64_t idle[RS_DIM_COUNT];   /* compute stream idle, by the dimension it waited for */
    rs_time t_free;                /* compute stream free since */
    rs_time end;                   /* completion of the rank's last finished iteration */
    rs_time stretch;               /* compute time added by straggler faults, all iterations */
    rs_time bound;                 /* network-only bounds of its collectives and messages, all iterations */
    uint64_t state_off;            /* its op states in rs_replay.state */
    uint32_t cls, ndone, iter;
    uint8_t last_dim;              /* dim of the op that completed last */
} rank_st;

/* One collective instance: the k-th collective on a communicator. */
typedef struct inst {
    struct inst *next;          /* the communicator's instances still gathering members */
    struct inst *gprev, *gnext; /* every live instance (for destroy) */
    struct rs_replay *r;
    rs_coll *coll;              /* once started */
    uint64_t k, bytes;
    uint32_t comm, arrived;
    uint8_t op;
    /* workload.sync=rank: */
    uint8_t has_last;           /* a split run: last is set */
    uint32_t ndone;             /* members whose part is done (a split run: this process's) */
    rs_time t_first;            /* the first member's issue (a split run: this process's first), RS_TIME_MAX */
    rs_net_rec_key last;        /* a split run: where this process's latest member completion ran */
    rs_tally *merged;           /* a split run's rank 0, after it: every process's transfers */
    uint32_t opidx[];           /* per member position: its op, RS_NONE until issued */
} inst;

typedef struct comm_st {
    rs_comm *comm;
    inst *pending;
    const uint32_t *ranks; /* borrowed from the trace */
    uint32_t n;
    uint32_t nlocal;       /* members whose GPU this process runs (n but in a split run) */
    uint8_t hier_ok;       /* spans >= 2 HB domains with equal GPUs in each */
} comm_st;

typedef struct recv_wait {
    uint64_t k;
    uint32_t op;
} recv_wait;

/* The incoming side of rank <- peer (per rank and p2p slot). */
typedef struct chan {
    uint64_t *arrived;  /* message indices delivered before their RECV was issued */
    recv_wait *wait;    /* RECVs issued whose message has not arrived */
    uint32_t narr, carr, nwait, cwait;
} chan;

typedef struct p2p_rec p2p_rec;

/* A bound owed to a rank of another process (add_bound_peer). */
typedef struct owed {
    rs_time b;
    uint32_t rank, pad;
} owed;

typedef struct item {
    uint32_t rank, op;
    uint8_t cause; /* dim of the op whose completion pushed it */
} item;

struct rs_replay {
    const rs_trace *t;
    rs_net *net;
    rs_coll_opts copts;
    rs_coll_algo algo;
    rs_replay_sync sync;
    uint32_t nranks, nslots, ncomms, nclasses, iterations;
    cls_info *cls;
    rank_st *rk;
    uint8_t *state;
    uint32_t *gpu;   /* [nranks] */
    uint32_t *aux;   /* [nranks * nslots] COLL slot: position in the communicator;
                        p2p slot: the peer's slot pointing back (RS_NONE if none) */
    chan *ch;        /* [nranks * nslots] */
    comm_st *cm;
    inst *live;
    item *work;
    size_t nwork, capwork, wpos;
    int draining;
    rs_time t0;
    rs_time *E;      /* [iterations]: instant the last rank completed iteration i */
    rs_time *times;  /* [iterations]: E_i - E_{i-1} */
    uint32_t *fin;   /* [iterations]: ranks that completed iteration i */
    uint32_t done, ranks_done;
    int status, finished, tail_done;
    rs_time t_last;  /* latest op completion */
    rs_timeline *tl; /* borrowed, or NULL */
    rs_time *op_t0;  /* [nranks * RS_STREAMS_MAX] with tl: start of each stream's running op */
    rs_tally **send_tally; /* [nranks * RS_STREAMS_MAX] once a rank sends: its running SEND's
                            * transfers (a stream runs one op at a time), NULL when none runs */
    rs_tally **tally_free; /* tallies of finished SENDs, for the next ones: memory follows
                            * the sends in flight (one per rank and stream kept 22 MB at
                            * 16,384 GPUs) */
    size_t ntally_free, captally_free;
    p2p_rec *p2p;          /* workload.sync=rank: SENDs in flight (p2p_get) */
    size_t capp2p;
    uint32_t p2p_free;     /* first free record, UINT32_MAX when none */
    uint32_t *p2p_head;    /* [nranks] each rank's first send in flight */
    uint64_t *p2p_off;     /* packet level: [nranks * nslots] first serial of a SEND slot's messages, from p2p_base */
    uint64_t p2p_base;
    uint32_t p2p_cb;       /* p2p_done's callback index (rs_net_cb_register) */
    owed *owed;            /* a split run: bounds of this process's sends owed to other processes' ranks */
    size_t nowed, capowed;
    uint64_t ncolls; /* collectives completed (coll record ids) */
    /* workload.sync=rank: every collective instance named, alike in every
     * process (docs/parallel.md, "Replays"): instance id inst_base[c] + k
     * for call k on communicator c; at packet level its transfers'
     * serials from a block reserved at create, its callbacks from indices
     * reserved there (from cb_base, cb_iter per iteration, call_cb within). */
    uint64_t *inst_base;  /* [ncomms + 1] */
    uint32_t *call_base;  /* [ncomms + 1] first of each communicator's calls per iteration in call_op */
    const rs_op **call_op; /* [calls per iteration] the op of call j on communicator c (its first member's) */
    uint64_t *call_serial; /* packet level: [calls] serial offset of each call in an iteration's block */
    uint32_t *call_cb;    /* packet level: [calls + 1] callback offset of each call in an iteration's block */
    uint8_t *call_relayed; /* packet level: [calls] 1 when one of its transfers goes by a PXN relay */
    uint64_t ser_base, ser_iter; /* packet level: the block's first serial; serials per iteration */
    uint32_t cb_base, cb_iter; /* packet level: the callbacks' first index; indices per iteration; RS_NONE at
                                  flow level */
    inst **byid;          /* a split run: [instances] the ones this process built */
    int split;            /* the run is partitioned: this process runs its GPUs' ranks */
    rs_time *E_local;     /* [iterations] the latest completion of iteration i by one of this process's ranks */
    uint64_t ops_done, ops_total; /* ops completed over all ranks and iterations; of all */
    char errmsg[512];
};

/* ---- helpers ---------------------------------------------------------------- */

static void fail(rs_replay *r, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(rs_replay *r, int rc, const char *fmt, ...)
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
    if (r->nwork == r->capwork) {
        size_t c = r->capwork * 2;
        item *w = realloc(r->work, c * sizeof *w);
        if (!w) {
            fail(r, RS_ENOMEM, "out of memory in the replay's work list");
            return;
        }
        r->work = w;
        r->capwork = c;
    }
    r->work[r->nwork++] = (item){ rank, op, cause };
}

static uint8_t *states(rs_replay *r, uint32_t rank)
{
    return r->state + r->rk[rank].state_off;
}

/* The op's label ("tp allreduce"), for messages. */
static const char *label(const rs_replay *r, const rs_op *o)
{
    return rs_trace_string(r->t, o->label);
}

/* Index of this op's message or collective over the whole replay. */
static uint64_t op_k(const rs_replay *r, uint32_t rank, uint32_t j)
{
    const rank_st *k = &r->rk[rank];
    const cls_info *c = &r->cls[k->cls];
    const rs_op *o = &c->ops[j];
    return (uint64_t)k->iter * c->per_iter[o->comm * 3 + (o->kind - RS_OP_COLL)] + c->seq[j];
}

/* ---- iterations ------------------------------------------------------------ */

/* Push the head of every stream of rank's fresh iteration. */
static void iteration_begin(rs_replay *r, uint32_t rank, uint8_t cause)
{
    rank_st *k = &r->rk[rank];
    const cls_info *c = &r->cls[k->cls];
    memset(states(r, rank), ST_WAIT, c->nops);
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
            r->done++;
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
    rs_timeline_op_rec rec = { .rank = rank, .comm = RS_TL_NONE,
                               .start_ps = r->op_t0[(size_t)rank * RS_STREAMS_MAX + o->stream],
                               .end_ps = rs_net_now(r->net), .bytes = o->bytes, .label = label(r, o) };
    switch ((rs_op_kind)o->kind) {
    case RS_OP_COMPUTE:
        rec.op = "compute";
        break;
    case RS_OP_COLL:
        rec.op = rs_coll_op_name((rs_coll_op)o->coll);
        rec.comm = rs_trace_slot(r->t, rank, o->comm);
        break;
    case RS_OP_SEND:
    case RS_OP_RECV:
        rec.op = o->kind == RS_OP_SEND ? "send" : "recv";
        rec.comm = r->ncomms + o->dim;
        break;
    }
    rs_timeline_op(r->tl, &rec);
}

static void complete(rs_replay *r, uint32_t rank, uint32_t j)
{
    rank_st *k = &r->rk[rank];
    const cls_info *c = &r->cls[k->cls];
    uint8_t *st = states(r, rank);
    const rs_op *o = &c->ops[j];
    RS_ASSERT(st[j] == ST_RUN && k->head[o->stream] == j);
    st[j] = ST_DONE;
    r->t_last = rs_net_now(r->net);
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
static void msg_done(void *ctx, rs_net *net, uint64_t tag);
static void p2p_left(void *ctx, rs_net *net, uint64_t tag);
static void p2p_done(void *ctx, rs_net *net, uint64_t tag);
static void coll_done(void *ctx, rs_net *net, uint64_t tag);
static void member_done(void *ctx, rs_net *net, uint64_t tag, uint32_t pos);
static void drain(rs_replay *r);
static int coll_begin(rs_replay *r, inst *in, uint32_t rank, uint32_t j);
static inst *inst_new(rs_replay *r, uint32_t comm, uint64_t k, uint8_t op, uint64_t bytes, inst **pp);
static void inst_resolve(void *ctx, rs_net *net, uint32_t index);

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
    default:
        return RS_ALGO_AUTO;
    }
}

static void coll_arrive(rs_replay *r, uint32_t rank, uint32_t j)
{
    const rs_op *o = &r->cls[r->rk[rank].cls].ops[j];
    uint32_t comm = rs_trace_slot(r->t, rank, o->comm);
    uint32_t pos = r->aux[(size_t)rank * r->nslots + o->comm];
    comm_st *cm = &r->cm[comm];
    uint64_t kk = op_k(r, rank, j);
    inst **pp = &cm->pending, *in;
    while ((in = *pp) && in->k != kk)
        pp = &in->next;
    if (!in) {
        if (!(in = inst_new(r, comm, kk, o->coll, o->bytes, pp)))
            return;
        if (r->sync == RS_SYNC_RANK && !coll_begin(r, in, rank, j))
            return;
    } else if (in->op != o->coll || in->bytes != o->bytes) {
        fail(r, RS_EINVAL,
             "rank %u op %u (coll \"%s\", %s of %llu bytes) is call %llu on communicator %u, but an "
             "earlier member issued that call as %s of %llu bytes: the members' programs disagree",
             rank, j, label(r, o), rs_coll_op_name((rs_coll_op)o->coll), (unsigned long long)o->bytes,
             (unsigned long long)kk + 1, comm, rs_coll_op_name((rs_coll_op)in->op),
             (unsigned long long)in->bytes);
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
        if (rs_coll_join(in->coll, pos) != RS_OK && r->status == RS_OK)
            fail(r, rs_coll_status(in->coll) != RS_OK ? rs_coll_status(in->coll) : RS_EINTERNAL,
                 "rank %u op %u (coll \"%s\") could not join its collective", rank, j, label(r, o));
        return;
    }
    if (++in->arrived < cm->n)
        return;
    *pp = in->next; /* every member is in: start it */
    in->next = NULL;
    rs_err e;
    rs_err_clear(&e);
    int rc = rs_coll_start(r->net, cm->comm, (rs_coll_op)in->op, pick_algo(r, comm, (rs_coll_op)in->op),
                           in->bytes, &r->copts, coll_done, in, 0, &in->coll, &e);
    if (rc != RS_OK)
        fail(r, rc, "rank %u op %u (coll \"%s\", %s of %llu bytes on communicator %u) could not start: %s",
             rank, j, label(r, o), rs_coll_op_name((rs_coll_op)in->op), (unsigned long long)in->bytes, comm,
             e.msg[0] ? e.msg : rs_strerror(rc));
}

/* A fresh instance of call k on communicator comm, linked at *pp (the
 * tail of its pending list: instances stay in issue order) and among the
 * live ones; NULL (the run failed) when out of memory. */
static inst *inst_new(rs_replay *r, uint32_t comm, uint64_t k, uint8_t op, uint64_t bytes, inst **pp)
{
    const comm_st *cm = &r->cm[comm];
    inst *in = malloc(sizeof *in + (size_t)cm->n * sizeof in->opidx[0]);
    if (!in) {
        fail(r, RS_ENOMEM, "out of memory starting a collective of %u ranks", cm->n);
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
 * inst_resolve), under its name; 0 when it could not be (the run failed). */
static int coll_begin(rs_replay *r, inst *in, uint32_t rank, uint32_t j)
{
    rs_err e;
    rs_err_clear(&e);
    uint32_t P = r->call_base[in->comm + 1] - r->call_base[in->comm];
    rs_coll_name name = { UINT64_MAX, RS_NONE };
    if (r->call_serial)
        name.serial0 = r->ser_base + in->k / P * r->ser_iter + r->call_serial[r->call_base[in->comm] + in->k % P];
    if (r->cb_base != RS_NONE)
        name.cb0 = r->cb_base + (uint32_t)(in->k / P) * r->cb_iter + r->call_cb[r->call_base[in->comm] + in->k % P];
    int rc = rs_coll_create_named(r->net, r->cm[in->comm].comm, (rs_coll_op)in->op,
                                  pick_algo(r, in->comm, (rs_coll_op)in->op), in->bytes, &r->copts, member_done,
                                  coll_done, in, 0, &name, &in->coll, &e);
    if (rc != RS_OK && rank != RS_NONE)
        fail(r, rc, "rank %u op %u (coll \"%s\", %s of %llu bytes on communicator %u) could not start: %s", rank, j,
             label(r, &r->cls[r->rk[rank].cls].ops[j]), rs_coll_op_name((rs_coll_op)in->op),
             (unsigned long long)in->bytes, in->comm, e.msg[0] ? e.msg : rs_strerror(rc));
    else if (rc != RS_OK)
        fail(r, rc, "call %llu on communicator %u (%s of %llu bytes) could not start: %s",
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
static void inst_resolve(void *ctx, rs_net *net, uint32_t index)
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
        if (!(in = inst_new(r, comm, k, o->coll, o->bytes, pp)) || !coll_begin(r, in, RS_NONE, RS_NONE))
            return;
    }
    if (in->coll)
        rs_coll_name_bind(in->coll, index);
}

static void chan_arrived_push(rs_replay *r, chan *c, uint64_t k)
{
    if (c->narr == c->carr) {
        uint32_t n = c->carr ? 2 * c->carr : 4;
        uint64_t *a = realloc(c->arrived, (size_t)n * sizeof *a);
        if (!a) {
            fail(r, RS_ENOMEM, "out of memory buffering a message");
            return;
        }
        c->arrived = a;
        c->carr = n;
    }
    c->arrived[c->narr++] = k;
}

static void recv_start(rs_replay *r, uint32_t rank, uint32_t j)
{
    const rs_op *o = &r->cls[r->rk[rank].cls].ops[j];
    chan *c = &r->ch[(size_t)rank * r->nslots + o->comm];
    uint64_t kk = op_k(r, rank, j);
    for (uint32_t i = 0; i < c->narr; i++)
        if (c->arrived[i] == kk) {
            c->arrived[i] = c->arrived[--c->narr];
            complete(r, rank, j);
            return;
        }
    if (c->nwait == c->cwait) {
        uint32_t n = c->cwait ? 2 * c->cwait : 4;
        recv_wait *w = realloc(c->wait, (size_t)n * sizeof *w);
        if (!w) {
            fail(r, RS_ENOMEM, "out of memory posting a receive");
            return;
        }
        c->wait = w;
        c->cwait = n;
    }
    c->wait[c->nwait++] = (recv_wait){ kk, j };
}

/* An empty tally: a finished send's, or a new one; NULL (the run
 * failed) when out of memory. */
static rs_tally *tally_get(rs_replay *r)
{
    rs_tally *t = NULL;
    if (r->ntally_free)
        t = r->tally_free[--r->ntally_free];
    else if (rs_tally_create(&t) != RS_OK)
        fail(r, RS_ENOMEM, "out of memory for a send tally");
    return t;
}

/* A send's tally has done: its bound, and the tally back for the next
 * send (destroyed if the free list cannot grow). */
static rs_time tally_put(rs_replay *r, rs_tally *t)
{
    rs_time b = rs_net_tally_bound(r->net, t);
    rs_tally_clear(t);
    if (r->ntally_free == r->captally_free) {
        size_t c = r->captally_free ? 2 * r->captally_free : 64;
        rs_tally **f = realloc(r->tally_free, c * sizeof *f);
        if (f) {
            r->tally_free = f;
            r->captally_free = c;
        }
    }
    if (r->ntally_free < r->captally_free)
        r->tally_free[r->ntally_free++] = t;
    else
        rs_tally_destroy(t);
    return b;
}

/* A tally for rank's SEND on `stream` (tally_get); send_done_tally
 * gives it back. */
static rs_tally *send_tally(rs_replay *r, uint32_t rank, uint32_t stream)
{
    if (!r->send_tally && !(r->send_tally = calloc((size_t)r->nranks * RS_STREAMS_MAX, sizeof *r->send_tally))) {
        fail(r, RS_ENOMEM, "out of memory for the send tallies of %u ranks", r->nranks);
        return NULL;
    }
    rs_tally **t = &r->send_tally[(size_t)rank * RS_STREAMS_MAX + stream];
    RS_ASSERT(*t == NULL);
    return *t = tally_get(r);
}

/* rank's SEND on `stream` has arrived: its bound; its tally back. */
static rs_time send_done_tally(rs_replay *r, uint32_t rank, uint32_t stream)
{
    rs_tally **t = &r->send_tally[(size_t)rank * RS_STREAMS_MAX + stream];
    rs_time b = tally_put(r, *t);
    *t = NULL;
    return b;
}

/* workload.sync=rank: a SEND in flight, from its start to its message's
 * arrival (its op may have completed before, when the message left; a
 * split run frees it then). Found by its message's tag, which names the
 * message for every process: sender rank, its slot, the message index. */
struct p2p_rec {
    rs_tally *tally;
    uint64_t tag;
    uint32_t rank, op, next; /* next: the free list, or the next of its rank's sends in flight */
};

#define P2P_K_BITS 34
static uint64_t p2p_tag(uint32_t rank, uint32_t slot, uint64_t k)
{
    return (uint64_t)rank << 40 | (uint64_t)slot << P2P_K_BITS | k;
}
static uint32_t p2p_tag_rank(uint64_t tag) { return (uint32_t)(tag >> 40); }
static uint32_t p2p_tag_slot(uint64_t tag) { return (uint32_t)(tag >> P2P_K_BITS) & 63; }
static uint64_t p2p_tag_k(uint64_t tag) { return tag & ((1ULL << P2P_K_BITS) - 1); }

/* Rank's send in flight with this tag (its index), unlinked from the
 * rank's list when unlink; UINT32_MAX when none. */
static uint32_t p2p_find(rs_replay *r, uint64_t tag, int unlink)
{
    uint32_t *pp = &r->p2p_head[p2p_tag_rank(tag)];
    while (*pp != UINT32_MAX && r->p2p[*pp].tag != tag)
        pp = &r->p2p[*pp].next;
    uint32_t i = *pp;
    if (i != UINT32_MAX && unlink)
        *pp = r->p2p[i].next;
    return i;
}

/* Record i back on the free list, its tally back (its bound). */
static rs_time p2p_put(rs_replay *r, uint32_t i)
{
    rs_time b = tally_put(r, r->p2p[i].tally);
    r->p2p[i].tally = NULL;
    r->p2p[i].next = r->p2p_free;
    r->p2p_free = i;
    return b;
}

/* A fresh record for rank's SEND j; UINT32_MAX (the run failed) when
 * out of memory. */
static uint32_t p2p_get(rs_replay *r, uint32_t rank, uint32_t j)
{
    if (!r->p2p_head) {
        if (!(r->p2p_head = malloc((size_t)r->nranks * sizeof *r->p2p_head))) {
            fail(r, RS_ENOMEM, "out of memory for the sends in flight");
            return UINT32_MAX;
        }
        memset(r->p2p_head, 0xff, (size_t)r->nranks * sizeof *r->p2p_head);
    }
    if (r->p2p_free == UINT32_MAX) {
        size_t c = r->capp2p ? 2 * r->capp2p : 64;
        p2p_rec *a = c <= UINT32_MAX - 1 ? realloc(r->p2p, c * sizeof *a) : NULL;
        if (!a) {
            fail(r, RS_ENOMEM, "out of memory for the sends in flight");
            return UINT32_MAX;
        }
        for (size_t i = r->capp2p; i < c; i++)
            a[i] = (p2p_rec){ .tally = NULL, .next = i + 1 < c ? (uint32_t)(i + 1) : UINT32_MAX };
        r->p2p = a;
        r->p2p_free = (uint32_t)r->capp2p;
        r->capp2p = c;
    }
    rs_tally *t = tally_get(r);
    if (!t)
        return UINT32_MAX;
    uint32_t i = r->p2p_free;
    p2p_rec *p = &r->p2p[i];
    r->p2p_free = p->next;
    const rs_op *o = &r->cls[r->rk[rank].cls].ops[j];
    *p = (p2p_rec){ .tally = t, .tag = p2p_tag(rank, o->comm, op_k(r, rank, j)), .rank = rank, .op = j,
                    .next = r->p2p_head[rank] };
    r->p2p_head[rank] = i;
    return i;
}

/* A split run: bound b of a message of rank's to peer, charged to peer,
 * whose process may be another (rank 0 adds it after the run). */
static void add_bound_peer(rs_replay *r, uint32_t peer, rs_time b)
{
    if (rs_net_gpu_local(r->net, r->gpu[peer])) {
        r->rk[peer].bound = rs_time_add_sat(r->rk[peer].bound, b);
        return;
    }
    if (rs_array_reserve(&r->owed, &r->capowed, r->nowed + 1, sizeof *r->owed, 64) != RS_OK) {
        fail(r, RS_ENOMEM, "out of memory for the bounds of remote ranks");
        return;
    }
    r->owed[r->nowed++] = (owed){ b, peer, 0 };
}

/* A collective or message with network-only bound b completed: charge it
 * to a rank that took part. */
static void add_bound(rs_replay *r, uint32_t rank, rs_time b)
{
    r->rk[rank].bound = rs_time_add_sat(r->rk[rank].bound, b);
}

static void try_start(rs_replay *r, const item *it)
{
    uint32_t rank = it->rank, j = it->op;
    rank_st *k = &r->rk[rank];
    const cls_info *c = &r->cls[k->cls];
    uint8_t *st = states(r, rank);
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
        /* A straggler fault on this GPU stretches the part of the op
         * inside its window (compute.h). */
        rs_time end = rs_compute_end(r->net, r->gpu[rank], now, o->duration);
        if (end - now > o->duration)
            k->stretch += end - now - o->duration;
        k->t_free = end;
        if (o->duration == 0)
            complete(r, rank, j);
        else
            rs_net_at_gpu(r->net, r->gpu[rank], end, ev_compute, r, (uint64_t)rank << 32 | j);
        break;
    }
    case RS_OP_COLL:
        coll_arrive(r, rank, j);
        break;
    case RS_OP_SEND: {
        uint32_t peer = rs_trace_slot(r->t, rank, o->comm);
        int rc;
        if (r->sync == RS_SYNC_RANK) {
            uint32_t i = p2p_get(r, rank, j);
            if (i == UINT32_MAX)
                break;
            /* At packet level its serial is its name: (rank, slot, message). */
            uint64_t tag = r->p2p[i].tag;
            rc = r->p2p_off ? rs_net_send_named(r->net, r->gpu[rank], r->gpu[peer], o->bytes, p2p_done, p2p_left, r,
                                                tag, r->p2p[i].tally,
                                                r->p2p_base + r->p2p_off[(size_t)rank * r->nslots + o->comm] +
                                                    p2p_tag_k(tag))
                            : rs_net_send_posted(r->net, r->gpu[rank], r->gpu[peer], o->bytes, p2p_done, p2p_left, r,
                                                 r->p2p[i].tag, r->p2p[i].tally);
        } else {
            rs_tally *t = send_tally(r, rank, o->stream);
            if (!t)
                break;
            rc = rs_net_send_tallied(r->net, r->gpu[rank], r->gpu[peer], o->bytes, msg_done, r,
                                     (uint64_t)rank << 32 | j, t);
        }
        if (rc != RS_OK)
            fail(r, rc, "rank %u op %u (send \"%s\", %llu bytes to rank %u, GPU %u -> %u) could not start: %s%s",
                 rank, j, label(r, o), (unsigned long long)o->bytes, peer, r->gpu[rank], r->gpu[peer],
                 rs_strerror(rc), rc == RS_EUNREACH ? " (between rails of a rail-only network, routing.pxn "
                                                      "must not be off)" : "");
        break;
    }
    case RS_OP_RECV:
        recv_start(r, rank, j);
        break;
    }
}

/* Run the work list to empty; re-entrant calls (a callback fired from
 * inside a start) only append. */
static void drain(rs_replay *r)
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
    (void)net;
    rs_replay *r = ctx;
    complete(r, (uint32_t)(arg >> 32), (uint32_t)arg);
    drain(r);
}

/* Message kk from peer's slot `back` has arrived at `peer`: its RECV
 * completes if posted, else the message waits for it. */
static void deliver(rs_replay *r, uint32_t peer, uint32_t back, uint64_t kk)
{
    if (back == RS_NONE)
        return;
    chan *c = &r->ch[(size_t)peer * r->nslots + back];
    uint32_t i;
    for (i = 0; i < c->nwait && c->wait[i].k != kk; i++)
        ;
    if (i < c->nwait) {
        uint32_t op = c->wait[i].op;
        c->wait[i] = c->wait[--c->nwait];
        complete(r, peer, op);
    } else {
        chan_arrived_push(r, c, kk);
    }
}

static void msg_done(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    rs_replay *r = ctx;
    uint32_t rank = (uint32_t)(tag >> 32), j = (uint32_t)tag;
    const rs_op *o = &r->cls[r->rk[rank].cls].ops[j];
    uint32_t peer = rs_trace_slot(r->t, rank, o->comm);
    uint32_t back = r->aux[(size_t)rank * r->nslots + o->comm];
    uint64_t kk = op_k(r, rank, j); /* before complete() may end the iteration */
    rs_time b = send_done_tally(r, rank, o->stream);
    add_bound(r, rank, b);
    add_bound(r, peer, b);
    complete(r, rank, j);
    deliver(r, peer, back, kk);
    drain(r);
}

/* workload.sync=rank: a SEND's message has left its GPU: the op is done
 * (the rank's stream goes on, as NCCL's send returns once its data is
 * handed over, not when it has landed). */
static void p2p_left(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    rs_replay *r = ctx;
    uint32_t i = p2p_find(r, tag, r->split);
    if (i == UINT32_MAX) {
        fail(r, RS_EINTERNAL, "a send's message left, but no send of rank %u is in flight with it",
             p2p_tag_rank(tag));
        return;
    }
    uint32_t rank = r->p2p[i].rank, op = r->p2p[i].op;
    if (r->split) {
        /* Its arrival may be another process's: the bound now (its
         * transfers all started: a split run has no failover), the record
         * free. */
        rs_time b = p2p_put(r, i);
        add_bound(r, rank, b);
        add_bound_peer(r, rs_trace_slot(r->t, rank, r->cls[r->rk[rank].cls].ops[op].comm), b);
    }
    complete(r, rank, op);
    drain(r);
}

/* workload.sync=rank: the message has arrived (in its receiver's process):
 * its receiver's RECV may complete; in a serial run the bound is charged
 * and the record is free. */
static void p2p_done(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    rs_replay *r = ctx;
    uint32_t rank = p2p_tag_rank(tag), slot = p2p_tag_slot(tag);
    uint32_t peer = rs_trace_slot(r->t, rank, slot);
    uint32_t back = r->aux[(size_t)rank * r->nslots + slot];
    if (!r->split) {
        uint32_t i = p2p_find(r, tag, 1);
        if (i == UINT32_MAX) {
            fail(r, RS_EINTERNAL, "a message of rank %u arrived, but none of its sends is in flight with it", rank);
            return;
        }
        rs_time b = p2p_put(r, i);
        add_bound(r, rank, b);
        add_bound(r, peer, b);
    }
    deliver(r, peer, back, p2p_tag_k(tag));
    drain(r);
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

/* The coll record of instance in, done now (rs_timeline_coll). */
static void tl_coll(rs_replay *r, rs_timeline *tl, const inst *in, rs_time start, rs_time end)
{
    const comm_st *cm = &r->cm[in->comm];
    rs_coll_algo algo = in->coll ? rs_coll_algo_used(in->coll)
                                 : rs_coll_algo_resolve(r->net, cm->comm, (rs_coll_op)in->op,
                                                        pick_algo(r, in->comm, (rs_coll_op)in->op), in->bytes,
                                                        &r->copts);
    rs_timeline_coll_rec rec = { .id = r->ncolls, .comm = in->comm, .nranks = cm->n, .bytes = in->bytes,
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
            tl_coll(r, r->tl, in, rs_coll_start_time(in->coll), rs_net_now(net));
        r->ncolls++;
    }
    rs_time b = rs_coll_bound(in->coll);
    for (uint32_t p = 0; p < cm->n; p++)
        add_bound(r, cm->ranks[p], b);
    for (uint32_t p = 0; p < cm->n && r->sync == RS_SYNC_COLLECTIVE; p++)
        complete(r, cm->ranks[p], in->opidx[p]);
    unlink_live(r, in);
    rs_coll_destroy(in->coll); /* allowed from inside done */
    free(in);
    drain(r);
}

/* workload.sync=rank: member pos's part of the collective is done. */
static void member_done(void *ctx, rs_net *net, uint64_t tag, uint32_t pos)
{
    (void)net;
    (void)tag;
    inst *in = ctx;
    rs_replay *r = in->r;
    complete(r, r->cm[in->comm].ranks[pos], in->opidx[pos]);
    drain(r);
    /* Its record goes after what this completion wrote: where the last
     * member's completion is, which a split run finds only after it. */
    in->ndone++;
    if (r->split) {
        rs_net_rec_key_take(net, &in->last);
        in->has_last = 1;
    } else if (in->ndone == r->cm[in->comm].n) {
        if (r->tl)
            tl_coll(r, r->tl, in, in->t_first, rs_net_now(net));
        r->ncolls++;
    }
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
    drain(r);
}

static void ev_start(void *ctx, rs_net *net, uint64_t arg)
{
    (void)arg;
    rs_replay *r = ctx;
    r->t0 = rs_net_now(net);
    if (r->sync == RS_SYNC_COLLECTIVE) {
        for (uint32_t rank = 0; rank < r->nranks; rank++)
            rank_begin(r, rank);
        drain(r);
        return;
    }
    /* Each process starts its own ranks (a split run's are the GPUs of
     * its HB domains: the driver's event runs in every process). */
    r->split = rs_net_part_ranks(net) > 1;
    if (r->split) {
        if (!(r->byid = calloc(r->inst_base[r->ncomms] + 1, sizeof *r->byid))) {
            fail(r, RS_ENOMEM, "out of memory for the replay's %llu collectives",
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

/* ---- create / destroy ------------------------------------------------------- */

static int cls_build(rs_replay *r, uint32_t ci, rs_err *err)
{
    cls_info *c = &r->cls[ci];
    uint32_t n;
    c->ops = rs_trace_class_program(r->t, ci, &n);
    c->nops = n;
    uint32_t S = r->nslots;
    c->next = malloc(((size_t)n + 1) * sizeof *c->next);
    c->rdep_off = calloc((size_t)n + 2, sizeof *c->rdep_off);
    c->seq = malloc(((size_t)n + 1) * sizeof *c->seq);
    c->per_iter = calloc((size_t)S * 3 + 1, sizeof *c->per_iter);
    c->slot_kind = calloc((size_t)S + 1, 1);
    if (!c->next || !c->rdep_off || !c->seq || !c->per_iter || !c->slot_kind)
        return rs_err_set(err, RS_ENOMEM, "out of memory preparing the replay of class %u (%u ops)", ci, n);
    uint32_t last[RS_STREAMS_MAX];
    for (uint32_t s = 0; s < RS_STREAMS_MAX; s++)
        c->first[s] = last[s] = RS_NONE;
    uint64_t ndeps = 0;
    for (uint32_t i = 0; i < n; i++) {
        const rs_op *o = &c->ops[i];
        c->next[i] = RS_NONE;
        if (last[o->stream] == RS_NONE)
            c->first[o->stream] = i;
        else
            c->next[last[o->stream]] = i;
        last[o->stream] = i;
        for (int d = 0; d < 2; d++)
            if (o->dep[d] != RS_NONE) {
                c->rdep_off[o->dep[d] + 1]++;
                ndeps++;
            }
        c->seq[i] = RS_NONE;
        if (o->kind == RS_OP_COMPUTE) {
            c->compute = rs_time_add_sat(c->compute, o->duration);
        } else {
            c->seq[i] = c->per_iter[o->comm * 3 + (o->kind - RS_OP_COLL)]++;
            c->slot_kind[o->comm] = o->kind == RS_OP_COLL ? SK_COLL : SK_P2P;
        }
    }
    for (uint32_t i = 0; i < n; i++)
        c->rdep_off[i + 1] += c->rdep_off[i];
    c->rdep = malloc((size_t)(ndeps ? ndeps : 1) * sizeof *c->rdep);
    uint32_t *fill = malloc(((size_t)n + 1) * sizeof *fill);
    if (!c->rdep || !fill) {
        free(fill);
        return rs_err_set(err, RS_ENOMEM, "out of memory preparing the replay of class %u (%u ops)", ci, n);
    }
    memcpy(fill, c->rdep_off, (size_t)n * sizeof *fill);
    for (uint32_t i = 0; i < n; i++)
        for (int d = 0; d < 2; d++)
            if (c->ops[i].dep[d] != RS_NONE)
                c->rdep[fill[c->ops[i].dep[d]]++] = i;
    free(fill);
    return RS_OK;
}

/* Communicator GPUs, positions of each member's slots, hier_ok. */
static int comms_build(rs_replay *r, uint32_t hb, rs_err *err)
{
    uint32_t gpus = rs_net_gpus(r->net);
    uint32_t ndom = (gpus + hb - 1) / hb;
    uint32_t *cnt = calloc(ndom, sizeof *cnt);
    uint32_t *list = malloc((size_t)r->nranks * sizeof *list);
    int rc = RS_OK;
    if (!cnt || !list) {
        rc = rs_err_set(err, RS_ENOMEM, "out of memory preparing the replay's communicators");
        goto done;
    }
    for (uint32_t c = 0; c < r->ncomms && rc == RS_OK; c++) {
        comm_st *cm = &r->cm[c];
        cm->ranks = rs_trace_comm_ranks(r->t, c, &cm->n);
        cm->nlocal = cm->n;
        for (uint32_t p = 0; p < cm->n; p++) {
            uint32_t m = cm->ranks[p];
            list[p] = r->gpu[m];
            const uint32_t *slots = rs_trace_rank_slots(r->t, m);
            const cls_info *ci = &r->cls[r->rk[m].cls];
            for (uint32_t s = 0; s < r->nslots; s++)
                if (slots[s] == c && ci->slot_kind[s] == SK_COLL)
                    r->aux[(size_t)m * r->nslots + s] = p;
        }
        if ((rc = rs_comm_create(list, cm->n, gpus, &cm->comm, err)) != RS_OK)
            break;
        /* HB-domain shape, as the collectives layer checks it. */
        uint32_t ndomains = 0, kmin = UINT32_MAX, kmax = 0;
        for (uint32_t p = 0; p < cm->n; p++)
            if (cnt[list[p] / hb]++ == 0)
                ndomains++;
        for (uint32_t p = 0; p < cm->n; p++) {
            uint32_t v = cnt[list[p] / hb];
            kmin = v < kmin ? v : kmin;
            kmax = v > kmax ? v : kmax;
        }
        for (uint32_t p = 0; p < cm->n; p++)
            cnt[list[p] / hb] = 0;
        cm->hier_ok = ndomains >= 2 && kmin == kmax;
    }
done:
    free(cnt);
    free(list);
    return rc;
}

/* workload.sync=rank: every instance named (rs_replay.inst_base, ...): its
 * id, and at packet level its serials and callback indices, reserved now,
 * alike in every process. A communicator's calls per iteration and their
 * ops are its first member's (a member that disagrees fails the run when
 * it issues). */
static int names_build(rs_replay *r, rs_err *err)
{
    uint32_t C = r->ncomms;
    r->inst_base = calloc((size_t)C + 1, sizeof *r->inst_base);
    r->call_base = calloc((size_t)C + 1, sizeof *r->call_base);
    if (!r->inst_base || !r->call_base)
        return rs_err_set(err, RS_ENOMEM, "out of memory naming the replay's collectives");
    /* Calls per iteration: the most any member issues (members that
     * disagree stop the run, or leave it stuck, as they issue). */
    for (uint32_t c = 0; c < C; c++) {
        const comm_st *cm = &r->cm[c];
        uint32_t P = 0;
        for (uint32_t p = 0; p < cm->n; p++) {
            uint32_t m = cm->ranks[p];
            const uint32_t *slots = rs_trace_rank_slots(r->t, m);
            const cls_info *ci = &r->cls[r->rk[m].cls];
            for (uint32_t sl = 0; sl < r->nslots; sl++)
                if (slots[sl] == c && ci->slot_kind[sl] == SK_COLL && ci->per_iter[sl * 3] > P)
                    P = ci->per_iter[sl * 3];
        }
        if ((uint64_t)r->call_base[c] + P > UINT32_MAX / 2)
            return rs_err_set(err, RS_EINVAL, "trace: more than 2^31 collective calls per iteration");
        r->call_base[c + 1] = r->call_base[c] + P;
        r->inst_base[c + 1] = r->inst_base[c] + (uint64_t)P * r->iterations;
    }
    uint32_t calls = r->call_base[C];
    r->call_op = calloc((size_t)calls + 1, sizeof *r->call_op);
    if (!r->call_op)
        return rs_err_set(err, RS_ENOMEM, "out of memory naming the replay's collectives");
    /* Call j's op: the first member's that issues it. */
    for (uint32_t c = 0; c < C; c++)
        for (uint32_t p = 0; p < r->cm[c].n && r->call_base[c + 1] > r->call_base[c]; p++) {
            uint32_t m = r->cm[c].ranks[p];
            const uint32_t *slots = rs_trace_rank_slots(r->t, m);
            const cls_info *ci = &r->cls[r->rk[m].cls];
            for (uint32_t i = 0; i < ci->nops; i++) {
                const rs_op *o = &ci->ops[i];
                if (o->kind == RS_OP_COLL && slots[o->comm] == c && !r->call_op[r->call_base[c] + ci->seq[i]])
                    r->call_op[r->call_base[c] + ci->seq[i]] = o;
            }
        }
    /* A SEND's message is named by its tag (p2p_tag): rank, slot, index. */
    uint64_t nmsg = 0;
    for (uint32_t rank = 0; rank < r->nranks; rank++) {
        const cls_info *ci = &r->cls[r->rk[rank].cls];
        for (uint32_t sl = 0; sl < r->nslots; sl++)
            if (ci->slot_kind[sl] == SK_P2P && (uint64_t)ci->per_iter[sl * 3 + 1] * r->iterations >> P2P_K_BITS)
                return rs_err_set(err, RS_EINVAL, "workload.iterations: %u iterations of rank %u's %u sends to "
                                  "one peer exceed the 2^%d messages a send's name counts", r->iterations, rank,
                                  ci->per_iter[sl * 3 + 1], P2P_K_BITS);
            else if (ci->slot_kind[sl] == SK_P2P)
                nmsg += (uint64_t)ci->per_iter[sl * 3 + 1] * r->iterations;
    }
    r->cb_base = RS_NONE;
    if (rs_net_streams(r->net))
        return RS_OK; /* the flow level is never split and names no serials */
    if (nmsg) {
        if (!(r->p2p_off = calloc((size_t)r->nranks * r->nslots, sizeof *r->p2p_off)) ||
            (r->p2p_cb = rs_net_cb_register(r->net, p2p_done, r)) == RS_NONE)
            return rs_err_set(err, RS_ENOMEM, "out of memory naming the replay's sends");
        uint64_t off = 0;
        for (uint32_t rank = 0; rank < r->nranks; rank++) {
            const cls_info *ci = &r->cls[r->rk[rank].cls];
            for (uint32_t sl = 0; sl < r->nslots; sl++)
                if (ci->slot_kind[sl] == SK_P2P) {
                    r->p2p_off[(size_t)rank * r->nslots + sl] = off;
                    off += (uint64_t)ci->per_iter[sl * 3 + 1] * r->iterations;
                }
        }
        r->p2p_base = rs_net_serials_reserve(r->net, off);
    }
    r->call_serial = calloc((size_t)calls + 1, sizeof *r->call_serial);
    r->call_cb = calloc((size_t)calls + 1, sizeof *r->call_cb);
    r->call_relayed = calloc((size_t)calls + 1, 1);
    if (!r->call_serial || !r->call_cb || !r->call_relayed)
        return rs_err_set(err, RS_ENOMEM, "out of memory naming the replay's collectives");
    uint64_t off = 0, cbs = 0;
    for (uint32_t c = 0; c < C; c++)
        for (uint32_t j = r->call_base[c]; j < r->call_base[c + 1]; j++) {
            const rs_op *o = r->call_op[j];
            rs_coll_size need = { 0, 0, 0 };
            r->call_serial[j] = off;
            r->call_cb[j] = (uint32_t)cbs;
            if (!o)
                continue;
            rs_err e;
            int rc = rs_coll_name_size(r->net, r->cm[c].comm, (rs_coll_op)o->coll,
                                       pick_algo(r, c, (rs_coll_op)o->coll), o->bytes, &r->copts, &need, &e);
            if (rc != RS_OK)
                return rs_err_set(err, rc, "communicator %u, call %u (%s of %llu bytes): %.400s", c,
                                  j - r->call_base[c] + 1, rs_coll_op_name((rs_coll_op)o->coll),
                                  (unsigned long long)o->bytes, e.msg);
            off += need.serials;
            r->call_relayed[j] = need.relayed != 0;
            if ((cbs += need.cbs) > UINT32_MAX / 4)
                return rs_err_set(err, RS_EINVAL, "trace: its collectives need more than 2^30 callback indices "
                                  "per iteration");
        }
    r->call_cb[calls] = (uint32_t)cbs;
    r->ser_iter = off;
    r->ser_base = rs_net_serials_reserve(r->net, off * r->iterations);
    uint64_t ncb = cbs * r->iterations;
    r->cb_iter = (uint32_t)cbs;
    if (ncb > UINT32_MAX / 2 || (r->cb_base = rs_net_cb_reserve(r->net, (uint32_t)ncb, inst_resolve, r)) == RS_NONE)
        return rs_err_set(err, RS_ENOMEM, "out of memory naming the replay's %llu collectives",
                          (unsigned long long)r->inst_base[C]);
    return RS_OK;
}

/* Per rank: no two used slots may name the same communicator or peer (the
 * per-slot call counts would then not be per-communicator counts); the
 * peer's slot pointing back for each p2p slot. */
static int slots_build(rs_replay *r, rs_err *err)
{
    uint32_t S = r->nslots;
    for (uint32_t rank = 0; rank < r->nranks; rank++) {
        const uint32_t *slots = rs_trace_rank_slots(r->t, rank);
        const cls_info *ci = &r->cls[r->rk[rank].cls];
        for (uint32_t s = 0; s < S; s++) {
            if (ci->slot_kind[s] == SK_NONE)
                continue;
            for (uint32_t s2 = s + 1; s2 < S; s2++)
                if (ci->slot_kind[s2] == ci->slot_kind[s] && slots[s2] == slots[s])
                    return rs_err_set(err, RS_EINVAL,
                                      "trace: rank %u uses slots %u and %u for the same %s %u; replay "
                                      "matches calls per slot and needs one slot per %s",
                                      rank, s, s2, ci->slot_kind[s] == SK_COLL ? "communicator" : "peer rank",
                                      slots[s], ci->slot_kind[s] == SK_COLL ? "communicator" : "peer");
            if (ci->slot_kind[s] != SK_P2P)
                continue;
            uint32_t peer = slots[s];
            const uint32_t *ps = rs_trace_rank_slots(r->t, peer);
            const cls_info *pc = &r->cls[r->rk[peer].cls];
            for (uint32_t s2 = 0; s2 < S; s2++)
                if (ps[s2] == rank && pc->slot_kind[s2] == SK_P2P) {
                    r->aux[(size_t)rank * S + s] = s2;
                    break;
                }
        }
    }
    return RS_OK;
}

int rs_replay_create(const rs_trace *t, rs_net *net, const rs_replay_opts *o, rs_replay **out, rs_err *err)
{
    *out = NULL;
    if (!o || o->iterations == 0)
        return rs_err_set(err, RS_EINVAL, "workload.iterations: expected at least 1 iteration, got 0");
    if ((unsigned)o->algo >= RS_COLL_NALGOS)
        return rs_err_set(err, RS_EINVAL, "workload.algo: unknown algorithm %d", (int)o->algo);
    if ((unsigned)o->sync > RS_SYNC_RANK)
        return rs_err_set(err, RS_EINVAL, "workload.sync: unknown mode %d", (int)o->sync);
    if (o->sync == RS_SYNC_RANK && o->algo == RS_ALGO_PAIRWISE)
        return rs_err_set(err, RS_EINVAL, "workload.sync=rank: a pairwise all-to-all (workload.algo=pairwise) "
                          "waits for both ends at each step and is not implemented with members joining one by "
                          "one; expected workload.algo auto, ring, tree, direct or hierarchical, or workload.sync="
                          "collective");
    if (o->sync == RS_SYNC_RANK && o->coll && o->coll->a2a_peers)
        return rs_err_set(err, RS_EINVAL, "workload.sync=rank: a direct all-to-all with a window of peers "
                          "(a2a_peers %u) is not implemented with members joining one by one; expected 0",
                          o->coll->a2a_peers);
    uint32_t gpus = rs_net_gpus(net);
    if (rs_trace_ngpus(t) > gpus)
        return rs_err_set(err, RS_EINVAL, "trace %s is for %u GPUs, but the network has %u (topology.gpus)",
                          rs_trace_name(t), rs_trace_ngpus(t), gpus);
    rs_replay *r = calloc(1, sizeof *r);
    if (!r)
        return rs_err_set(err, RS_ENOMEM, "out of memory creating the replay");
    int rc = RS_ENOMEM;
    r->t = t;
    r->net = net;
    r->algo = o->algo;
    r->sync = o->sync;
    r->p2p_free = UINT32_MAX;
    if (o->coll)
        r->copts = *o->coll;
    else
        rs_coll_opts_default(&r->copts);
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
    r->capwork = 1024;
    r->work = malloc(r->capwork * sizeof *r->work);
    if (!r->cls || !r->rk || !r->gpu || !r->aux || !r->ch || !r->cm || !r->E || !r->times || !r->fin || !r->work ||
        !r->E_local) {
        rs_err_set(err, RS_ENOMEM, "out of memory creating the replay of %u ranks", r->nranks);
        goto fail;
    }
    memset(r->aux, 0xff, (RS ? RS : 1) * sizeof *r->aux);
    for (uint32_t c = 0; c < r->nclasses; c++)
        if ((rc = cls_build(r, c, err)) != RS_OK)
            goto fail;
    uint64_t off = 0;
    for (uint32_t rank = 0; rank < r->nranks; rank++) {
        rank_st *k = &r->rk[rank];
        k->cls = rs_trace_rank_class(t, rank);
        k->state_off = off;
        off += r->cls[k->cls].nops;
        r->gpu[rank] = rs_trace_rank_gpu(t, rank);
        for (uint32_t s = 0; s < RS_STREAMS_MAX; s++)
            k->head[s] = RS_NONE;
    }
    r->ops_total = off * r->iterations;
    r->state = malloc(off ? off : 1);
    if (!r->state) {
        rc = rs_err_set(err, RS_ENOMEM, "out of memory for the replay's %llu op states", (unsigned long long)off);
        goto fail;
    }
    if ((rc = slots_build(r, err)) != RS_OK)
        goto fail;
    rs_net_topo_info ti;
    rs_net_topo_info_get(net, &ti);
    uint32_t hb = r->copts.hb_size ? r->copts.hb_size : ti.hb_domains ? gpus / ti.hb_domains : 1;
    if ((rc = comms_build(r, hb, err)) != RS_OK)
        goto fail;
    if (r->sync == RS_SYNC_RANK && (rc = names_build(r, err)) != RS_OK)
        goto fail;
    rs_net_at(net, rs_net_now(net), ev_start, r, 0);
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
    if (r->ch)
        for (size_t i = 0; i < (size_t)r->nranks * r->nslots; i++) {
            free(r->ch[i].arrived);
            free(r->ch[i].wait);
        }
    free(r->cls);
    free(r->rk);
    free(r->state);
    free(r->gpu);
    free(r->aux);
    free(r->ch);
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
    free(r->call_relayed);
    free(r->byid);
    free(r->work);
    free(r->op_t0);
    if (r->send_tally)
        for (size_t i = 0; i < (size_t)r->nranks * RS_STREAMS_MAX; i++)
            rs_tally_destroy(r->send_tally[i]);
    free(r->send_tally);
    for (size_t i = 0; i < r->ntally_free; i++)
        rs_tally_destroy(r->tally_free[i]);
    free(r->tally_free);
    for (size_t i = 0; i < r->capp2p; i++)
        if (r->p2p[i].tally)
            rs_tally_destroy(r->p2p[i].tally);
    free(r->p2p);
    free(r->p2p_head);
    free(r->p2p_off);
    free(r->owed);
    free(r);
}

/* ---- the end ---------------------------------------------------------------- */

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
        label(r, o));
    if (st[j] == ST_WAIT) {
        put(buf, size, n, ") which never became ready (internal error)");
        return;
    }
    switch ((rs_op_kind)o->kind) {
    case RS_OP_COLL: {
        uint32_t comm = rs_trace_slot(r->t, rank, o->comm);
        const comm_st *cm = &r->cm[comm];
        uint64_t kk = op_k(r, rank, j);
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
            (unsigned long long)o->bytes, (unsigned long long)op_k(r, rank, j) + 1,
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

void rs_replay_stats_get(const rs_replay *r, rs_replay_stats *out)
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
    unsigned __int128 csum = 0, esum = 0;
    rs_time cmin = RS_TIME_MAX, cmax = 0, emin = RS_TIME_MAX, emax = 0;
    for (uint32_t rank = 0; rank < r->nranks; rank++) {
        rs_time c = r->cls[r->rk[rank].cls].compute;
        if (r->rk[rank].stretch) /* stragglers: the busy time, not the nominal */
            c += div_round(r->rk[rank].stretch, D);
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
    char name[64];
    for (uint32_t rank = 0; rank < r->nranks; rank++) {
        snprintf(name, sizeof name, "rank %u (gpu %u)", rank, r->gpu[rank]);
        rs_timeline_name(tl, RS_TL_NS_RANK, rank, name);
    }
    /* Communicators by dimension; tlstats derives the dimension from the
     * name up to its first '[' (analysis/tlstats.h). */
    uint32_t nth[RS_DIM_COUNT] = { 0 };
    for (uint32_t c = 0; c < r->ncomms; c++) {
        rs_dim d = rs_trace_comm_dim(r->t, c);
        if ((unsigned)d >= RS_DIM_COUNT)
            d = RS_DIM_NONE;
        snprintf(name, sizeof name, "%s[%u]", d == RS_DIM_NONE ? "comm" : rs_dim_name(d), nth[d]++);
        rs_timeline_name(tl, RS_TL_NS_COMM, c, name);
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
            snprintf(name, sizeof name, "%s-p2p", d == RS_DIM_NONE ? "comm" : rs_dim_name((rs_dim)d));
            rs_timeline_name(tl, RS_TL_NS_COMM, (uint64_t)r->ncomms + (uint64_t)d, name);
        }
    return RS_OK;
}

/* ---- split runs ---------------------------------------------------------------- */

int rs_replay_splits(const rs_replay *r, char *why, size_t n)
{
    const char *w = NULL;
    char buf[200];
    if (r->sync != RS_SYNC_RANK)
        w = "its collectives wait for all their members at zero delay across GPUs (workload.sync=rank does not)";
    else if (r->cb_base == RS_NONE)
        w = "the flow level is not split";
    else if (rs_net_fault_count(r->net))
        w = "faults are scheduled (a collective's credit times are taken from the ports' rates when it is built, "
            "at different times in different processes)";
    for (uint32_t rank = 0; !w && rank < r->nranks; rank++) {
        const cls_info *ci = &r->cls[r->rk[rank].cls];
        for (uint32_t i = 0; i < ci->nops; i++) {
            const rs_op *o = &ci->ops[i];
            uint32_t peer = o->kind == RS_OP_SEND ? rs_trace_slot(r->t, rank, o->comm) : RS_NONE;
            if (peer != RS_NONE && rs_net_send_relayed(r->net, r->gpu[rank], r->gpu[peer])) {
                snprintf(buf, sizeof buf, "rank %u's sends to rank %u cross rails by PXN relays, which are not split "
                         "from a rank's own events yet", rank, peer);
                w = buf;
                break;
            }
        }
    }
    for (uint32_t c = 0; !w && c < r->ncomms; c++) {
        const comm_st *cm = &r->cm[c];
        for (uint32_t j = r->call_base[c]; j < r->call_base[c + 1] && cm->n > 1; j++) {
            const rs_op *o = r->call_op[j];
            if (!o || o->bytes == 0)
                continue;
            rs_coll_algo a = rs_coll_algo_resolve(r->net, cm->comm, (rs_coll_op)o->coll,
                                                  pick_algo(r, c, (rs_coll_op)o->coll), o->bytes, &r->copts);
            if (a != RS_ALGO_RING && a != RS_ALGO_TREE && a != RS_ALGO_HIERARCHICAL) {
                snprintf(buf, sizeof buf, "its %s %s on communicator %u is not split yet (only rings, trees and "
                         "hierarchical ones)",
                         rs_coll_op_name((rs_coll_op)o->coll), rs_coll_algo_name(a), c);
                w = buf;
                break;
            }
            if (r->call_relayed[j]) {
                snprintf(buf, sizeof buf, "its %s %s on communicator %u crosses rails by PXN relays, which are not "
                         "split from a rank's own events yet", rs_coll_op_name((rs_coll_op)o->coll),
                         rs_coll_algo_name(a), c);
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

int rs_replay_part_finish(rs_replay *r, const void *const *all, const size_t *len, uint32_t n, rs_timeline *late)
{
    if (!r->byid)
        return RS_EINVAL; /* not a split run */
    uint64_t N = r->inst_base[r->ncomms];
    inst **byid = r->byid, **done = calloc(N ? N : 1, sizeof *done);
    if (!done)
        return RS_ENOMEM;
    int rc = RS_OK;
    /* This process's own tallies first (their coll keeps them). */
    for (inst *in = r->live; in && rc == RS_OK; in = in->gnext) {
        const rs_tally *t = in->coll ? rs_coll_tally(in->coll) : NULL;
        if (rs_tally_create(&in->merged) != RS_OK) {
            rc = RS_ENOMEM;
            break;
        }
        for (uint32_t g = 0; t && g < rs_tally_gpus(t) && rc == RS_OK; g++)
            for (unsigned q = 0; q < RS_TALLY_NPORTS; q++) {
                uint64_t v = rs_tally_get(t, g, (rs_tally_port)q);
                if (v && rs_tally_add(in->merged, g, (rs_tally_port)q, v) != RS_OK)
                    rc = RS_ENOMEM;
            }
    }
    /* Bounds owed to ranks of other processes, added once every rank's
     * state is in (this process's own first). */
    rs_time *extra = calloc(r->nranks ? r->nranks : 1, sizeof *extra);
    if (!extra) {
        free(done);
        return RS_ENOMEM;
    }
    for (size_t i = 0; i < r->nowed; i++)
        extra[r->owed[i].rank] = rs_time_add_sat(extra[r->owed[i].rank], r->owed[i].b);
    for (uint32_t p = 1; p < n && rc == RS_OK; p++) { /* 0 is this process's */
        rd d = { all[p], (const unsigned char *)all[p] + len[p] };
        part_hdr h;
        if (!rd_get(&d, &h, sizeof h)) {
            rc = RS_EINVAL;
            break;
        }
        if (r->status == RS_OK && h.status != RS_OK) {
            r->status = h.status;
            h.errmsg[sizeof h.errmsg - 1] = '\0';
            snprintf(r->errmsg, sizeof r->errmsg, "%s", h.errmsg);
        }
        if (h.t_last > r->t_last)
            r->t_last = h.t_last;
        r->ops_done += h.ops_done;
        r->ranks_done += h.ranks_done;
        for (uint64_t i = 0; i < h.nowed && rc == RS_OK; i++) {
            owed e;
            if (!rd_get(&d, &e, sizeof e) || e.rank >= r->nranks)
                rc = RS_EINVAL;
            else
                extra[e.rank] = rs_time_add_sat(extra[e.rank], e.b);
        }
        for (uint32_t i = 0; i < r->iterations && rc == RS_OK; i++) {
            uint32_t f;
            if (!rd_get(&d, &f, sizeof f))
                rc = RS_EINVAL;
            else
                r->fin[i] += f;
        }
        for (uint32_t i = 0; i < r->iterations && rc == RS_OK; i++) {
            rs_time e;
            if (!rd_get(&d, &e, sizeof e))
                rc = RS_EINVAL;
            else if (e > r->E_local[i])
                r->E_local[i] = e;
        }
        for (uint32_t i = 0; i < h.nrank && rc == RS_OK; i++) {
            uint32_t rank;
            rank_st k;
            if (!rd_get(&d, &rank, sizeof rank) || rank >= r->nranks || !rd_get(&d, &k, sizeof k) ||
                k.state_off != r->rk[rank].state_off || k.cls != r->rk[rank].cls ||
                !rd_get(&d, r->state + k.state_off, r->cls[k.cls].nops)) {
                rc = RS_EINVAL;
                break;
            }
            r->rk[rank] = k;
        }
        for (uint32_t i = 0; i < h.ninst && rc == RS_OK; i++) {
            part_inst pi;
            if (!rd_get(&d, &pi, sizeof pi) || pi.comm >= r->ncomms ||
                pi.k >= r->inst_base[pi.comm + 1] - r->inst_base[pi.comm]) {
                rc = RS_EINVAL;
                break;
            }
            const comm_st *cm = &r->cm[pi.comm];
            uint64_t id = r->inst_base[pi.comm] + pi.k;
            inst *in = byid[id];
            if (!in) {
                /* Rank 0 has no member of it: a record of its own, for the merge and the diagnosis. */
                uint32_t P = r->call_base[pi.comm + 1] - r->call_base[pi.comm];
                const rs_op *o = r->call_op[r->call_base[pi.comm] + pi.k % P];
                inst *tail = NULL;
                if (!(in = inst_new(r, pi.comm, pi.k, o->coll, o->bytes, &tail)) ||
                    rs_tally_create(&in->merged) != RS_OK) {
                    rc = RS_ENOMEM;
                    break;
                }
            }
            if (pi.t_first < in->t_first)
                in->t_first = pi.t_first;
            in->ndone += pi.ndone;
            if (pi.has_last && (!in->has_last || rs_net_rec_key_less(&in->last, &pi.last))) {
                in->last = pi.last;
                in->has_last = 1;
            }
            for (uint32_t e = 0; e < pi.nissued && rc == RS_OK; e++) {
                uint32_t v[2];
                if (!rd_get(&d, v, sizeof v) || v[0] >= cm->n)
                    rc = RS_EINVAL;
                else if (in->opidx[v[0]] == RS_NONE)
                    in->opidx[v[0]] = v[1];
            }
            for (uint32_t e = 0; e < pi.ntally && rc == RS_OK; e++) {
                part_tally t;
                if (!rd_get(&d, &t, sizeof t) || t.port >= RS_TALLY_NPORTS)
                    rc = RS_EINVAL;
                else if (rs_tally_add(in->merged, t.gpu, (rs_tally_port)t.port, t.bytes) != RS_OK)
                    rc = RS_ENOMEM;
            }
        }
        if (rc == RS_OK && d.p != d.end)
            rc = RS_EINVAL;
    }
    for (uint32_t rank = 0; rank < r->nranks && rc == RS_OK; rank++)
        add_bound(r, rank, extra[rank]);
    free(extra);
    r->ops_total = 0; /* every rank's now, as ops_done */
    for (uint32_t rank = 0; rank < r->nranks; rank++)
        r->ops_total += (uint64_t)r->cls[r->rk[rank].cls].nops * r->iterations;
    if (rc == RS_OK) {
        /* Iterations: E_i is the latest of its ranks' completions. */
        r->done = 0;
        for (uint32_t i = 0; i < r->iterations && r->fin[i] == r->nranks; i++) {
            r->E[i] = r->E_local[i];
            r->times[i] = r->E[i] - (i ? r->E[i - 1] : r->t0);
            r->done = i + 1;
        }
        /* Collectives: done where their last member's completion ran, in
         * that order; their bounds charged to every member. Those still
         * gathering members wait for them (the diagnosis reads them). */
        size_t nd = 0;
        for (uint32_t c = 0; c < r->ncomms; c++)
            r->cm[c].pending = NULL;
        for (uint64_t id = 0; id < N; id++) {
            inst *in = byid[id];
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
                tl_coll(r, late, in, in->t_first, in->last.t);
                rs_net_rec_key_pin(r->net, NULL);
            }
            r->ncolls++;
            rs_time b = rs_net_tally_bound(r->net, in->merged);
            for (uint32_t p = 0; p < cm->n; p++)
                add_bound(r, cm->ranks[p], b);
        }
    }
    free(done);
    return rc;
}
