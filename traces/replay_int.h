/*
 * replay_int.h - the replay's private state and the calls its files make
 * of each other (replay.h is the contract; docs/replay.md the semantics).
 *
 * The replay is one object spread over six files, one concern each:
 *   workload.c       the workload.* keys: a plan or trace file to a trace
 *   replay.c         the engine: op states, the work list, starting ops,
 *                    iterations, create and destroy
 *   replay_build.c   tables derived once at create: per class, per
 *                    communicator, per slot, and (workload.sync=rank) the
 *                    names of every collective and message
 *   replay_coll.c    collective instances: matching members' calls,
 *                    starting or creating the collective, its completion
 *   replay_p2p.c     point-to-point: sends, receives, their matching and
 *                    tallies, the bounds they charge
 *   replay_report.c  the end: stuck-rank diagnosis, statistics, timeline
 *   replay_split.c   a run split over processes: eligibility, pack, merge
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
#ifndef RS_REPLAY_INT_H
#define RS_REPLAY_INT_H

#include "replay.h"
#include "partition.h"
#include "gpu.h"

enum { ST_WAIT = 0, ST_RUN = 1, ST_DONE = 2 };    /* an op's state in its iteration */
enum { SK_NONE = 0, SK_COLL = 1, SK_P2P = 2 };    /* what a program uses a slot for */

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
    /* The GPU's side (docs/compute.md): the compute op running (c_op,
     * RS_NONE when none) in its current segment since c_t, ending at
     * t_free with c_left ps of its nominal work left at c_t; the
     * communication ops running (ncomm). Totals over all iterations:
     * compute time added by contention; communication running with
     * compute idle; jitter. */
    uint32_t c_op, ncomm, held;    /* held: SMs its running communication holds */
    uint32_t n_hb, n_nic;          /* its running communication inside its HB domain, across it */
    double c_mem;                  /* the running compute op's memory-bound share of its time */
    rs_time c_t, c_left;
    rs_time c_start, c_nom, c_cont; /* the op's start, nominal time (jitter included), contention so far */
    rs_time acct_t;                /* comm_only accounted up to here */
    rs_time contended, comm_only;
    int64_t jit;                   /* compute time jitter added (may be negative) */
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
    uint8_t one_dom;       /* inside one HB domain (NVLS applies) */
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
    rs_gpu dev;                   /* rs_replay_opts.gpu, copied (has_dev) */
    int has_dev;
    uint32_t coll_ctas, p2p_ctas; /* rs_replay_opts (0 without a GPU) */
    uint32_t hb_size;             /* rs_replay_opts: NCCL's HBM traffic (0: none) */
    double hb_Bps, nic_Bps;
    uint8_t *comm_hb;             /* [ncomms] 0 not yet known, 1 inside one HB domain, 2 across */
    double jitter;
    uint64_t seed;
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
    /* One job of several on the network (rs_replay_set_timeline_job): its
     * ranks', communicators' and collectives' ids start here in the
     * timeline, and its names say the job; 0 and "" otherwise. */
    uint32_t tl_rank0, tl_comm0;
    rs_net_done_fn on_done;  /* rs_replay_opts.done: every rank completed every iteration */
    void *done_ctx;
    uint64_t tl_coll0;
    char tl_job[40];
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
    uint64_t ser_base, ser_iter; /* packet level: the block's first serial; serials per iteration */
    uint32_t cb_base, cb_iter; /* packet level: the callbacks' first index; indices per iteration; RS_NONE at
                                  flow level */
    inst **byid;          /* a split run: [instances] the ones this process built */
    int split;            /* the run is partitioned: this process runs its GPUs' ranks */
    rs_time *E_local;     /* [iterations] the latest completion of iteration i by one of this process's ranks */
    uint64_t ops_done, ops_total; /* ops completed over all ranks and iterations; of all */
    char errmsg[512];
};

/* ---- engine (replay.c) -------------------------------------------------------- */

/* Stop the run with rc and a message (printf), unless it already failed:
 * the first failure is the one reported. */
void rs_replay_fail(rs_replay *r, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Rank's op states for its current iteration. */
static inline uint8_t *rs_replay_states(rs_replay *r, uint32_t rank)
{
    return r->state + r->rk[rank].state_off;
}

/* The op's label ("tp allreduce"), for messages. */
const char *rs_replay_label(const rs_replay *r, const rs_op *o);

/* Index of rank's op j's message or collective over the whole replay. */
uint64_t rs_replay_op_k(const rs_replay *r, uint32_t rank, uint32_t j);

/* Rank's running op j completed now: its successors on the work list,
 * the iteration's end when it was the last. */
void rs_replay_complete(rs_replay *r, uint32_t rank, uint32_t j);

/* Start what the work list holds, until it is empty; every callback ends
 * with it. Re-entrant calls (a callback fired from inside a start) only
 * append. */
void rs_replay_drain(rs_replay *r);

/* A collective or message with network-only bound b completed: charge it
 * to a rank that took part. */
void rs_replay_add_bound(rs_replay *r, uint32_t rank, rs_time b);

/* ---- tables (replay_build.c) --------------------------------------------------- */

/* Everything derived from the trace at create, once r's arrays are
 * allocated: class tables, ranks' classes and state offsets, slots,
 * communicators, and under workload.sync=rank the names. RS_EINVAL (a
 * trace the replay cannot match) or RS_ENOMEM, with err. */
int rs_replay_build(rs_replay *r, rs_err *err);

/* ---- collectives (replay_coll.c) ------------------------------------------------ */

/* The collective the replay runs for `bytes` of op on communicator comm:
 * the algorithm workload.algo asks for where it applies (else auto), the
 * replay's options; no callbacks but member_done under workload.sync=rank
 * (so that resolving its algorithm knows its members join one by one). */
void rs_replay_coll_req(const rs_replay *r, uint32_t comm, uint8_t op, uint64_t bytes, rs_coll_req *out);

/* Rank issues its COLL op j. */
void rs_replay_coll_arrive(rs_replay *r, uint32_t rank, uint32_t j);

/* A fresh instance of call k on communicator comm, linked at *pp (the
 * tail of its pending list: instances stay in issue order) and among the
 * live ones; NULL (the run failed) when out of memory. */
inst *rs_replay_inst_new(rs_replay *r, uint32_t comm, uint64_t k, uint8_t op, uint64_t bytes, inst **pp);

/* A split run's resolver of callback indices reserved for instances
 * (rs_net_cb_reserve): builds the instance another process named first. */
void rs_replay_inst_resolve(void *ctx, rs_net *net, uint32_t index);

/* The coll record of instance in, from start to end (rs_timeline_coll). */
void rs_replay_tl_coll(rs_replay *r, rs_timeline *tl, const inst *in, rs_time start, rs_time end);
/* The ids a job's replay writes under (rs_replay_set_timeline_job) without
 * writing anything: the collective driver names its ranks and
 * communicator itself (collrun.c). */
void rs_replay_tl_ids(rs_replay *r, const char *job, uint32_t rank0, uint32_t comm0, uint64_t coll0);
/* The name records of its ranks ("rank 3 (gpu 17, job dense)"), under
 * those ids. */
void rs_replay_tl_rank_names(const rs_replay *r, rs_timeline *tl);

/* ---- point-to-point (replay_p2p.c) ---------------------------------------------- */

/* A SEND's message is named by a tag: sender rank, its slot, the
 * message's index among the slot's messages (this many bits). */
#define P2P_K_BITS 34

/* Rank starts its SEND op j, or posts its RECV op j. */
void rs_replay_send_start(rs_replay *r, uint32_t rank, uint32_t j);
void rs_replay_recv_start(rs_replay *r, uint32_t rank, uint32_t j);

/* workload.sync=rank: a message arrived (the callback named at packet
 * level by its index, rs_net_cb_register). */
void rs_replay_p2p_done(void *ctx, rs_net *net, uint64_t tag);

/* Free the point-to-point state (channels, tallies, sends in flight). */
void rs_replay_p2p_fini(rs_replay *r);

#endif
