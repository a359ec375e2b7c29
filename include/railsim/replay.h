/*
 * replay.h - trace replay: every rank of a trace (trace.h) runs its program
 * (program.h) on its GPU of a network (net.h); compute ops occupy the GPU's
 * compute stream for their duration, collectives run through the
 * collectives layer (coll.h) and point-to-point messages through
 * rs_net_send, as their streams and dependencies allow. docs/replay.md
 * gives the semantics and the definitions of every output.
 *
 * Decisions the contract left open (docs/replay.md, "Semantics"):
 *   - Iterations: each rank starts iteration i+1 the moment its own ops of
 *     iteration i have all completed (after its optimizer step and any
 *     parameter gathering), as a training loop does; there is no global
 *     barrier, so ranks that finish early run ahead until the next
 *     collective or receive makes them wait.
 *   - Iteration time i = E_i - E_{i-1}, where E_i is the instant the last
 *     rank completed iteration i and E_{-1} the replay's start: the time
 *     the job as a whole takes per iteration (the times add up to the run).
 *   - Collectives match by per-communicator program order: a rank's k-th
 *     COLL op on a communicator (counting over iterations, in program
 *     order) is the same collective as every other member's k-th. It starts
 *     when the last member issues it and completes for all members at once.
 *   - SEND/RECV match the same way per directed pair: the k-th SEND a -> b
 *     (program order) pairs with the k-th RECV at b from a.
 *
 * An rs_replay owns its per-rank and per-communicator state, allocated at
 * create (O(ranks x ops + communicator members)); a running collective
 * allocates one small record; nothing is allocated per message.
 */
#ifndef RS_REPLAY_H
#define RS_REPLAY_H

#include "base.h"
#include "coll.h"
#include "gpu.h"
#include "net.h"
#include "program.h"
#include "trace.h"

RS_BEGIN_DECLS

/* ---- the workload keys (scenario workload.*) ------------------------------- */

#define RS_WORKLOAD_PATH_MAX 1024

/* rs_replay_sync (workload.sync) is in coll.h: the collective driver
 * (collrun.h) reads it too. */

/* Every field is a scenario key (docs/scenario-format.md). Versioned: start
 * from rs_workload_config_default (docs/library.md, "Versioned structs"). */
/* workload.contention: whether NCCL's kernels take SMs from the compute
 * they overlap (docs/compute.md). auto: under nccl.model=nccl. */
typedef enum { RS_CONTENTION_AUTO = 0, RS_CONTENTION_ON = 1, RS_CONTENTION_OFF = 2 } rs_contention;

/* workload.compute: the compute model of a plan's ops (docs/compute.md):
 * the plan's own gpu.model, or shapes or flat whatever the plan says. */
typedef enum { RS_WCOMPUTE_PLAN = 0, RS_WCOMPUTE_SHAPES = 1, RS_WCOMPUTE_FLAT = 2 } rs_workload_compute;

typedef struct rs_workload_config {
    uint32_t size; /* sizeof(rs_workload_config) where the caller was compiled (docs/library.md, "Versioned structs") */
    char plan[RS_WORKLOAD_PATH_MAX];  /* workload.plan: plan file or preset; "" = none */
    char trace[RS_WORKLOAD_PATH_MAX]; /* workload.trace: trace file; "" = none */
    uint32_t iterations;              /* workload.iterations, >= 1 */
    rs_coll_algo algo;                /* workload.algo: RS_ALGO_AUTO or an override */
    rs_replay_sync sync;              /* workload.sync */
    /* The GPUs' side (docs/compute.md): */
    char gpu[16];                     /* the system's GPU (system.gpu), which a plan that names none computes on;
                                         "" = the plan's own */
    double jitter;                    /* workload.jitter: each compute op's coefficient of variation */
    rs_contention contention;         /* workload.contention */
    rs_workload_compute compute;      /* workload.compute: the plan's gpu.model, or one for every plan */
    /* Where the job runs (docs/replay.md, "Placement"; added after the
     * first version: a caller that predates them gets packed on the whole
     * cluster): */
    uint32_t gpus;                    /* workload.gpus: the job's GPUs; 0 = topology.gpus (or the list's) */
    char placement[RS_WORKLOAD_PATH_MAX]; /* workload.placement: packed, spread, fragmented, random or a list */
    double fragmentation;             /* workload.fragmentation: share of partly free HB domains (fragmented) */
} rs_workload_config;

/* No workload, 1 iteration, algorithm auto, workload.sync=rank. */
RS_API void rs_workload_config_init(rs_workload_config *c, size_t size);
static inline void rs_workload_config_default(rs_workload_config *c)
{
    rs_workload_config_init(c, sizeof *c);
}

/* 1 when workload.plan or workload.trace is set. */
RS_API int rs_workload_active(const rs_workload_config *c);

/* The trace the workload names, for a network of `gpus` GPUs: workload.plan
 * is loaded (file or preset), its DP set to fill `gpus` GPUs (trace gen
 * --gpus semantics: TP, PP, CP and EP kept) and generated in memory;
 * workload.trace is read from its file. *out is the caller's
 * (rs_trace_destroy).
 *
 * Errors, *out NULL, err one sentence starting with the key: RS_EINVAL
 * (both keys set, neither set, a bad plan, a plan that does not fit `gpus`,
 * a trace needing more GPUs than `gpus`), RS_EIO / RS_EFORMAT from the
 * trace reader, RS_ENOMEM. */
RS_API int rs_workload_load(const rs_workload_config *c, uint32_t gpus, rs_trace **out, rs_err *err);

/* workload.placement (docs/replay.md, "Placement"). rs_placement_size:
 * the job's GPU count *n for the spec, workload.gpus (`gpus`, 0: all)
 * and a cluster of N GPUs (a list gives its own). rs_placement_gpus: the
 * cluster GPUs out[0..n) the job's GPUs 0 .. n-1 take, in HB domains of
 * H, `share` the fragmented share, draws from seed. rs_workload_place:
 * moves the ranks of t (a trace of the job's GPUs) onto them; packed
 * leaves t as it is. RS_EINVAL with err naming the key (a bad spec, more
 * GPUs than the cluster has, a list with repeats or of the wrong size, a
 * fragmented cluster with too few free GPUs); RS_ENOMEM. */
RS_API int rs_placement_size(const char *spec, uint32_t gpus, uint32_t N, uint32_t *n, rs_err *err);
RS_API int rs_placement_gpus(const char *spec, uint32_t n, uint32_t N, uint32_t H, double share, uint64_t seed,
                             uint32_t *out, rs_err *err);
RS_API int rs_workload_place(const rs_workload_config *c, uint32_t N, uint32_t H, uint64_t seed, rs_trace *t,
                             rs_err *err);
/* 1 when spec names a placement mode (packed, spread, fragmented,
 * random), 0 for anything else (a list, or "": packed). */
RS_API int rs_placement_is_mode(const char *spec);
/* Move the ranks of t, a trace of the job's n GPUs: the one on job GPU g
 * to cluster GPU to[g]. */
RS_API void rs_trace_place(rs_trace *t, const uint32_t *to, uint32_t n);
/* rs_placement_gpus on a shared cluster (docs/shared-clusters.md): only
 * GPUs whose taken[g] is 0 (earlier jobs' are not); packed and spread
 * take whole free domains, fragmented and random step over taken GPUs, a
 * list must name free ones. taken NULL: rs_placement_gpus. */
RS_API int rs_placement_gpus_free(const char *spec, uint32_t n, uint32_t N, uint32_t H, double share, uint64_t seed,
                                  const uint8_t *taken, uint32_t *out, rs_err *err);

/* The GPU the workload computes on (gpu.h): its plan's (the system's
 * GPU c->gpu when the plan names none) or, for a trace, c->gpu's.
 * RS_EINVAL when there is none (no workload, or a GPU railsim has no
 * preset for), with err. */
RS_API int rs_workload_gpu(const rs_workload_config *c, rs_gpu *out, rs_err *err);

/* ---- replay ----------------------------------------------------------------- */

/* How a trace is replayed. Initialise with rs_replay_opts_default; the
 * library reads the first `size` bytes (docs/library.md, "Versioned
 * structs"). */
typedef struct rs_replay_opts {
    uint32_t size;       /* sizeof(rs_replay_opts) where the caller was compiled */
    uint32_t iterations; /* >= 1 */
    /* RS_ALGO_AUTO: the collectives layer picks per collective. Otherwise
     * used for every collective it applies to (ring: AllGather,
     * ReduceScatter, AllReduce; tree: AllReduce; direct, pairwise:
     * all-to-all; hierarchical: AllGather, ReduceScatter, AllReduce over a
     * communicator spanning several HB domains with equal GPUs in each),
     * auto for the others. */
    rs_coll_algo algo;
    const rs_coll_opts *coll; /* NULL: rs_coll_opts_default; copied */
    /* RS_SYNC_RANK: members join one by one (rs_coll_create); what
     * waits for every member (NVLS, pairwise, a chain, a window of
     * all-to-all peers) starts when its last member issues it. */
    rs_replay_sync sync;
    /* The GPUs' side of a replay (docs/compute.md); all off when zero:
     * gpu: the GPU the ranks run on, for their power (NULL: no power
     * figures); coll_ctas, p2p_ctas: the SMs one running collective or
     * point-to-point op of a rank holds (NCCL's channels, one thread
     * block each), taken from compute that overlaps it, which runs at
     * SMs / (SMs - held) of its time (held at most half the GPU's SMs;
     * needs gpu); jitter: the coefficient of variation of each compute
     * op's time (a log-normal factor of mean 1, drawn from seed, rank,
     * iteration and op, so a split run draws the same). */
    const rs_gpu *gpu;
    uint32_t coll_ctas, p2p_ctas;
    double jitter;
    uint64_t seed;
    /* NCCL's HBM traffic beside compute (docs/compute.md, "Contention";
     * added after the first version, off when zero; needs gpu): a rank's
     * communication inside its HB domain of hb_size GPUs streams at
     * hb_Bps per direction, across it at nic_Bps (the GPU's share of its
     * NIC), and reads what it sends and writes what it receives, so the
     * memory-bound share of a compute op beside it (the op's bytes at the
     * GPU's streaming rate R) runs at R / (R - q), q the HBM bytes/s the
     * communication takes, at most R / 2. */
    uint32_t hb_size;
    double hb_Bps, nic_Bps;
    /* When the first iteration starts, after the current time (a job of a
     * shared cluster that arrives later, docs/shared-clusters.md). */
    rs_time start_ps;
    /* Told done(done_ctx, net, 0) the moment every rank has completed
     * every iteration (a scheduler frees the job's GPUs); NULL: not told. */
    rs_net_done_fn done;
    void *done_ctx;
} rs_replay_opts;

/* 1 iteration, algorithm auto, the collectives' default options,
 * workload.sync=rank; inline so that `size` is the caller's. */
static inline void rs_replay_opts_default(rs_replay_opts *o)
{
    o->size = (uint32_t)sizeof *o;
    o->iterations = 1;
    o->algo = RS_ALGO_AUTO;
    o->coll = NULL;
    o->sync = RS_SYNC_RANK;
    o->gpu = NULL;
    o->coll_ctas = o->p2p_ctas = 0;
    o->jitter = 0;
    o->seed = 0;
    o->hb_size = 0;
    o->hb_Bps = o->nic_Bps = 0;
    o->start_ps = 0;
    o->done = NULL;
    o->done_ctx = NULL;
}

typedef struct rs_replay rs_replay;

/* Prepare the replay of finished trace t on net, starting now (the first
 * iteration starts from an event at the current time, so call this before
 * rs_net_run). Rank r runs on GPU rs_trace_rank_gpu(t, r).
 *
 * Errors, nothing scheduled, *out NULL: RS_EINVAL with err naming the
 * problem (trace needs more GPUs than the network has, iterations 0, a
 * rank holding one communicator or peer in two slots it uses: matching
 * would be ambiguous), RS_ENOMEM.
 *
 * t and net are borrowed: t must outlive the handle, net must outlive the
 * run. *out is the caller's: rs_replay_destroy after rs_net_destroy(net)
 * (a run that stopped early leaves collectives running), or after a
 * complete run. */
RS_API int rs_replay_create(const rs_trace *t, rs_net *net, const rs_replay_opts *o, rs_replay **out,
                     rs_err *err);
RS_API void rs_replay_destroy(rs_replay *r); /* NULL is a no-op */

/* After rs_net_run returned: RS_OK when every rank completed every
 * iteration. Otherwise the replay's status: an error that stopped the run
 * (a collective or send the network refused, RS_ENOMEM, members of a
 * collective disagreeing on its operation or size: RS_EINVAL), or
 * RS_EINCOMPLETE when the event queue emptied with ops left (a collective
 * some members never issue, a receive without its send, ranks waiting on
 * each other). err gets one sentence naming up to three ranks, the op each
 * is stuck at (index, kind, label) and what it waits for. May be called
 * more than once; the same answer each time. */
RS_API int rs_replay_finish(rs_replay *r, rs_err *err);

/* Results. Times are picoseconds; "per iteration" values are means over the
 * completed iterations (docs/replay.md defines each). Valid after
 * rs_replay_finish; with done == 0 every time and rate below is 0. */
typedef struct rs_replay_stats {
    uint32_t size; /* sizeof(rs_replay_stats) where the caller was compiled (docs/library.md, "Versioned structs") */
    uint32_t iterations;      /* asked for */
    uint32_t done;            /* completed by every rank */
    uint32_t ranks;
    rs_time time_ps;          /* mean iteration time */
    /* Across ranks, of the per-iteration value: [0] mean, [1] min, [2] max. */
    rs_time compute_ps[3];    /* compute-stream busy time */
    rs_time exposed_ps[3];    /* time_ps - compute: the compute stream idle */
    /* Exposed communication by the dimension the compute stream waited
     * for, mean over ranks per iteration; [RS_DIM_NONE] is idle time no
     * communication explains (ranks done early waiting for the job's end).
     * Sums to exposed_ps[0] up to rounding. Valid only when the run
     * completed (comm_valid). */
    rs_time comm_by_dim_ps[RS_DIM_COUNT];
    int comm_valid;
    /* Network-only bound per iteration (docs/summary-format.md,
     * "iteration.bound_ps"): per rank, the sum of the bounds
     * (rs_coll_bound; a send's the same from its own transfers) of every
     * collective and point-to-point message it took part in, over all
     * iterations; the largest over ranks, divided by the iterations.
     * Valid (bound_valid) once every iteration completed. */
    rs_time bound_ps;
    uint32_t bound_rank;      /* the rank it is of (the lowest of equals) */
    int bound_valid;
    double tokens_per_s;      /* tokens per iteration / time; 0 when the trace has none */
    double mfu;               /* model FLOPs / (time x ranks x peak); 0 when unknown */
    /* The GPUs' side (docs/compute.md), means over ranks per iteration:
     * compute slowed by NCCL's thread blocks beside it; time with
     * communication running and compute not; and with the replay's
     * rs_replay_opts.gpu, power and energy. */
    rs_time contention_ps;    /* compute time added by contention */
    rs_time comm_only_ps;     /* communication running, compute stream idle */
    const char *gpu;          /* the GPU's preset name, NULL without one (borrowed) */
    int power_valid;
    double power_w;           /* mean board power per GPU over the iterations */
    double energy_j;          /* all GPUs, per iteration */
} rs_replay_stats;
RS_API void rs_replay_stats_fill(const rs_replay *r, rs_replay_stats *out, size_t size);
static inline void rs_replay_stats_get(const rs_replay *r, rs_replay_stats *out)
{
    rs_replay_stats_fill(r, out, sizeof *out);
}

/* Iteration times (E_i - E_{i-1}), *n = completed iterations; borrowed
 * until rs_replay_destroy. */
RS_API const rs_time *rs_replay_iter_times(const rs_replay *r, uint32_t *n);

RS_API const rs_trace *rs_replay_trace(const rs_replay *r);

/* The time the last op of any rank completed (for a complete run, the
 * instant the last rank finished its last iteration); the replay's start
 * before any op completed. Valid at any time. */
RS_API rs_time rs_replay_end_time(const rs_replay *r);
/* The share of the replay done, 0..1: ops completed over every rank's
 * ops of every iteration. For a progress line (ops differ in length, so
 * not a time estimate); valid at any time. */
RS_API double rs_replay_progress(const rs_replay *r);

/* From now on write the replay into tl (borrowed: it must stay open while
 * the network runs; the caller closes it after rs_net_run):
 *   - name records, written here, once: every rank (RS_TL_NS_RANK, "rank
 *     R (gpu G)"), every communicator (RS_TL_NS_COMM, id = the trace's
 *     communicator id, named by its dimension and its index among that
 *     dimension's communicators: "tp[0]", "dp[3]"; "comm[i]" without a
 *     dimension), and one pseudo-communicator per dimension that carries
 *     point-to-point ops (id rs_trace_ncomms + dimension, "pp-p2p");
 *   - an op record per op when it completes: rank, from the moment the op
 *     started (compute: began running; collective: this rank issued it;
 *     send and recv: posted) to its completion (a recv whose message had
 *     already arrived completes at once); op "compute", the
 *     collective's name ("allreduce", ...), "send" or "recv"; bytes; the
 *     communicator (nil for compute; the dimension's pseudo-communicator
 *     for send/recv); the op's label from the trace's string table;
 *   - a coll record per collective when it completes: instance id (in
 *     completion order), op, algorithm used, communicator, members, bytes,
 *     from its start (the last member issued it) to its completion.
 * Call before rs_net_run. Memory: one start time per rank and stream.
 * Write errors stay in tl (its close reports them). RS_EINVAL (NULL, or a
 * timeline already set), RS_ENOMEM. */
RS_API int rs_replay_set_timeline(rs_replay *r, rs_timeline *tl, rs_err *err);
/* The same for one job of several on the network (docs/shared-clusters.md):
 * its ranks' ids start at rank0, its communicators' (and pseudo-
 * communicators') at comm0, its collectives' at coll0, and every name
 * says the job ("rank 3 (gpu 17, job dense)", "tp[0] (dense)").
 * rs_replay_tl_comms: the communicator ids it takes (comm0 + that is the
 * next job's). */
RS_API int rs_replay_set_timeline_job(rs_replay *r, rs_timeline *tl, const char *job, uint32_t rank0,
                                      uint32_t comm0, uint64_t coll0, rs_err *err);
RS_API uint32_t rs_replay_tl_comms(const rs_replay *r);

/* ---- partitioned runs (docs/parallel.md, "Replays") -------------------------
 * Under workload.sync=rank each rank runs where its GPU is: its ops start
 * from its GPU's events, a collective is built in each process by its
 * first member there (or by the first event another process sends it),
 * under a name reserved at create, and its members there finish their
 * parts; none finishes it alone. After the run every process sends rank 0
 * its part (rs_replay_part_pack), and rank 0 merges them
 * (rs_replay_part_finish) before rs_replay_finish: iteration ends, each
 * rank's state and accounting, and every collective's end and bound. */

/* Can this replay run split on its network? 1, or 0 with the reason (one
 * clause: "its alltoall direct on communicator 8 is not split yet ...")
 * in why: workload.sync=rank at packet level, collectives run as rings, trees,
 * hierarchical ones or NVLS (as the algorithm rule picks them), no send by
 * a PXN relay (rs_net_relayed). */
RS_API int rs_replay_splits(const rs_replay *r, char *why, size_t n);
/* This process's part, *len bytes at *buf (malloc'ed). RS_ENOMEM. */
RS_API int rs_replay_part_pack(const rs_replay *r, void **buf, size_t *len);
/* Rank 0, after the run: every process's part (all[0] its own, unread),
 * merged into this replay; the collectives' records written into late
 * (NULL: none), each placed where its last member's completion ran.
 * RS_EINVAL for a part that does not read as one, RS_ENOMEM. */
RS_API int rs_replay_part_finish(rs_replay *r, const void *const *all, const size_t *len, uint32_t n,
                                 rs_timeline *late);
/* rs_replay_set_timeline for a process's part of a split run's timeline:
 * the name records only with names (rank 0's part). */
RS_API int rs_replay_set_timeline_part(rs_replay *r, rs_timeline *tl, int names, rs_err *err);

RS_END_DECLS

#endif
