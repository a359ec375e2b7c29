/*
 * coll_int.h - private layout of a running collective, shared by coll.c and
 * the algorithm files (coll_ring.c, coll_tree.c, coll_a2a.c, coll_hier.c).
 * Not for other layers.
 *
 * Every algorithm counts the completions it still expects (`pending`:
 * transfer arrivals and reduction timers); the collective is done when it
 * reaches zero. Transfer tags encode which rank/step/piece arrived, so a
 * completion needs no per-transfer record.
 */
#ifndef RS_COLL_INT_H
#define RS_COLL_INT_H

#include "coll.h"
#include "partition.h"
#include "sim.h"

#define RS_COLL_NONE UINT32_MAX

/* The communicator grouped by HB domain: domains in order of first
 * appearance, ranks of one domain in communicator order. */
typedef struct coll_groups {
    uint32_t ndom;        /* HB domains the group touches */
    uint32_t kmax, kmin;  /* fewest / most ranks in one domain */
    uint32_t *dom_off;    /* ndom+1 offsets into dom_rank */
    uint32_t *dom_rank;   /* ranks grouped by domain */
} coll_groups;

typedef struct ring_rank ring_rank;
typedef struct tree_rank tree_rank;
typedef struct a2a_rank a2a_rank;

struct rs_coll {
    rs_net *net;
    rs_coll_op op;
    rs_coll_algo algo;
    uint64_t bytes;
    rs_coll_opts o;          /* as given, hb_size resolved (channels 0 stays auto) */
    rs_nccl_proto proto;     /* nccl.model=nccl: the protocol run (coll_tune.c); RS_PROTO_AUTO: none */
    double predicted_us;     /* NCCL's cost model's time for algo and proto (0: ideal) */
    rs_time base_lat;        /* added once, after the last completion (NCCL's base latency) */
    double hop_us[2];        /* NCCL's per-step latency over an HB hop [0] and a network hop [1] */
    double nvls_eff;         /* NVLS: the share of an HB port's rate the NVSwitch's reductions keep */
    uint32_t chan;           /* channels resolved */
    uint64_t reduce_bps;     /* 0: free reductions */
    rs_coll_done_fn done;
    void *ctx;
    uint64_t tag;
    rs_time t_start, t_end;
    uint64_t pending;        /* completions still expected */
    uint64_t pending_total;  /* pending as the algorithm's start set it (rs_coll_progress) */
    uint64_t transfers;
    int status;
    int finished;
    int split;               /* the network is partitioned: completions are counted here, finished by rank 0 */
    uint64_t split_done;     /* split: completions this process saw */
    rs_net_rec_key split_last; /* split: where the latest of them ran */
    uint32_t n;
    uint32_t *gpu;           /* rank -> GPU */
    coll_groups g;
    rs_coll *parent;         /* hierarchical: the collective this phase belongs to */
    rs_tally *tally;         /* the root collective's: its transfers' bytes per GPU port, freed at finish */
    rs_time bound;           /* root, once finished: rs_net_tally_bound of the tally */

    /* ring */
    uint32_t nch;            /* channels */
    uint32_t steps;          /* ring steps per rank */
    uint32_t *order;         /* [nch][n]: ring position -> rank */
    ring_rank *rr;           /* [nch][n], indexed by position */
    uint64_t *ch_bytes;      /* [nch] bytes carried by each channel */
    uint32_t *ch_pieces;     /* [nch] pieces per slice */
    uint8_t stream;          /* flow level: one transfer per (channel, position) (coll_ring.c) */
    uint64_t *ch_serial;     /* [nch] packet level: first serial of each channel's pieces, else NULL */
    rs_time stream_hold;     /* streams: no rank's stream completes before this (stream_pace) */
    rs_time stream_pace;     /* streams: that bound from the start (members joining: from the latest join) */

    /* tree */
    uint32_t ntree;          /* tree instances (2 per channel) */
    tree_rank *tr;           /* [ntree][n], indexed by rank */
    uint64_t *tree_bytes;    /* [ntree] */
    uint32_t *tree_pieces;   /* [ntree] */
    uint64_t *tree_serial;   /* [ntree] packet level: first serial of each instance's pieces, else NULL */

    /* all-to-all */
    a2a_rank *ar;            /* [n] pairwise state */

    /* hierarchical */
    uint32_t nseg;           /* pipeline segments */
    uint32_t *seg_phase;     /* [nseg] phase running or next to run */
    uint32_t *seg_left;      /* [nseg] sub-collectives of that phase still running */
    uint32_t phase_done[3];  /* segments that finished each phase */
    uint32_t nkids;
    rs_coll **kids;          /* every sub-collective started, freed at destroy */
    uint32_t nkids_cap;

    /* Members joining one by one (rs_coll_create; docs/collectives.md,
     * "Members joining"); member_done NULL: they all started at once. */
    rs_coll_member_fn member_done;
    /* Members joining a collective whose steps wait for every member
     * (NVLS, pairwise, a chain, a windowed all-to-all): it starts when the
     * last joins, as if all had started at once (member_done NULL), and
     * tells gather_done for each member when it ends. */
    rs_coll_member_fn gather_done;
    uint32_t notified;       /* members joining, base latency: members told so far */
    uint8_t drained;         /* the same: every completion is in, the last member told finishes it */
    uint64_t *mleft;         /* [n] a member's receives and sends still to come */
    uint8_t *joined;         /* [n] */
    uint32_t njoined;        /* members joined so far */
    uint32_t *pos_of;        /* ring: [nch][n] rank -> position; hierarchical: [n] domain x GPUs + local */
    uint64_t *posted;        /* direct all-to-all: bit j x n + i, j's receive buffer posted to i */
    uint32_t *a2a_held;      /* direct all-to-all: [n] blocks arrived over HB links before the member joined */
    uint64_t a2a_serial;     /* direct all-to-all, members joining at packet level: block i -> i + k takes
                                a2a_serial + i (n - 1) + k - 1; UINT64_MAX: each its own as it starts */
    rs_coll **hkid;          /* hierarchical: [nseg][phases][groups], created as members join */
    uint8_t *hdone;          /* hierarchical: [n][nseg][phases] a member's part: idle, joined, done */
    uint32_t hgroups;        /* hierarchical: max(domains, GPUs per domain) */
    uint32_t net_hb;         /* GPUs per HB domain of the network (members joining) */

    /* Named (rs_coll_create with a reservation): serials and callback indices given. */
    uint64_t serial0;        /* UINT64_MAX: reserve at start */
    uint64_t rate_changes;   /* rs_net_rate_changes when the kept credit times were computed (rs_coll_rates_moved) */
    uint32_t cb0;            /* RS_COLL_NONE: register at start (a split collective) */
    rs_coll_needs *probe;    /* rs_coll_needs_get: count serials and callbacks here, reserve and register nothing */
    uint64_t *hk_serial;     /* hierarchical, named or probed: [nseg][phases][groups] each sub-collective's first
                                serial, from serial0 */
    uint32_t *hk_cb;         /* the same for its first callback index, from cb0; RS_COLL_NONE: no such group */
};

/* A sender's credit when members join one by one: its receiver has not
 * posted its buffer yet (rs_coll_join). */
#define RS_COLL_UNPOSTED UINT32_MAX

/* One of member x's completions (a receive arrived, a send issued) when
 * members join one by one (nothing otherwise); its last tells
 * member_done. Call before rs_coll_advance on the same path. */
void rs_coll_member_step(rs_coll *c, uint32_t x);
/* Tell member_done that member x's part is done (counted in notified). */
void rs_coll_member_tell(rs_coll *c, uint32_t x);
/* Members joining: 1 when ranks a and b share an HB domain of the network.
 * Their connection is NCCL's P2P transport, whose buffer slots persist
 * from one collective to the next: a sender may fill them before its
 * receiver joins (the receiver consumes them once it has). Across
 * domains the receiver's proxy posts each buffer when it has the op. */
static inline int coll_hb_pair(const rs_coll *c, uint32_t a, uint32_t b)
{
    return c->gpu[a] / c->net_hb == c->gpu[b] / c->net_hb;
}
/* 1 when member x may send: everyone started at once, or x joined. */
static inline int coll_member_in(const rs_coll *c, uint32_t x) { return !c->joined || c->joined[x]; }

/* Size of part i when `total` is split into `parts` near-equal parts
 * (the first total % parts parts get one byte more). */
static inline uint64_t coll_split(uint64_t total, uint64_t parts, uint64_t i)
{
    return total / parts + (i < total % parts ? 1 : 0);
}

/* Send one transfer from rank a to rank b; on failure records the error,
 * stops the run and returns it. */
int rs_coll_send(rs_coll *c, uint32_t a, uint32_t b, uint64_t bytes, rs_net_done_fn fn, uint64_t tag);
/* The same, telling left(c, net, tag) once it has left rank a
 * (rs_net_msg.left): a connection's sends go one after the other. */
int rs_coll_send_posted(rs_coll *c, uint32_t a, uint32_t b, uint64_t bytes, rs_net_done_fn fn, rs_net_done_fn left,
                        uint64_t tag);
/* The same with its flow's serial given (rs_net_msg.serial); UINT64_MAX:
 * the next in creation order. */
int rs_coll_send_named(rs_coll *c, uint32_t a, uint32_t b, uint64_t bytes, rs_net_done_fn fn, rs_net_done_fn left,
                       uint64_t tag, uint64_t serial);
/* Packet level: flow serials for k blocks of pieces (a ring's channels,
 * a tree's instances), block i per_piece x pieces[i] long, taken from the
 * network now (rs_net_serials_reserve): the first serial of each block
 * (malloc'ed; NULL when out of memory). A piece's serial is then its
 * place in the collective, not the order the ranks send in. */
uint64_t *rs_coll_serial_blocks(rs_coll *c, uint32_t k, uint64_t per_piece, const uint32_t *pieces);
/* A split ring or tree: its two callbacks that cross processes (a
 * transfer's arrival, a credit) named alike in every process: the
 * indices its name gives, else registered now (it starts from a shared
 * event). RS_OK, or RS_ENOMEM. */
int rs_coll_name_cbs(rs_coll *c, rs_net_timer_fn arrived, rs_net_timer_fn credit);
/* Broadcast and Reduce: rooted at rank 0, run as chains (coll_ring.c). */
static inline int coll_rooted(rs_coll_op op) { return op == RS_COLL_BROADCAST || op == RS_COLL_REDUCE; }
/* The nccl.* c runs under: its first rank's job's own, else the network's. */
static inline const rs_nccl_config *rs_coll_nccl(const rs_coll *c)
{
    return rs_net_nccl_of(c->net, c->n ? c->gpu[0] : UINT32_MAX);
}
/* NCCL's base latency (kernel launch and set-up) as the collective's end
 * pays it: once after the last completion, or (members joining) none:
 * each member pays it after its own part (rs_coll_member_step), and the
 * last one told ends the collective. */
static inline rs_time coll_base_lat(const rs_coll *c) { return c->member_done ? 0 : c->base_lat; }
/* A timer that finishes the collective now (ctx: the rs_coll). */
void rs_coll_finish_timer(void *ctx, rs_net *net, uint64_t arg);
/* `k` expected completions happened; finishes the collective at zero. */
void rs_coll_advance(rs_coll *c, uint64_t k);
/* The collective is done at t: its bound from its tally, then its done
 * callback. The last statement of every completion path: done may
 * destroy the collective. */
void rs_coll_finish_at(rs_coll *c, rs_time t);
/* Record a failure seen inside a callback and stop the run. */
void rs_coll_fail(rs_coll *c, int rc);
/* A credit: a receiver tells its sender which of its buffer slots are
 * free, as NCCL's receiver proxy does when it posts a receive (an RDMA
 * write of a 64-byte FIFO entry, struct ncclIbSendFifo in NVIDIA/nccl
 * src/transport/net_ib.cc). The time such a write takes from rank `from`
 * to rank `to` crossing the path alone (rs_net_hop_estimate), at the
 * present rates; 0 where a fault left no path at the start (the credit is
 * then instant). */
#define RS_COLL_CREDIT_BYTES 64u
rs_time rs_coll_credit_time(const rs_coll *c, uint32_t from, uint32_t to);
/* Credit times a collective keeps (rings' and trees') hold while no
 * degrade or restore changed a rate since they were computed: 1 (and c
 * takes note) when one did, and they are to be computed again. So every
 * credit costs what the path costs when it is given, in whichever
 * process gives it (a split run's processes build a collective at
 * different times). */
static inline int rs_coll_rates_moved(rs_coll *c)
{
    uint64_t k = rs_net_rate_changes(c->net);
    if (RS_LIKELY(k == c->rate_changes))
        return 0;
    c->rate_changes = k;
    return 1;
}
/* Reduction time of `bytes` (0 when reductions are free). */
rs_time rs_coll_reduce_time(const rs_coll *c, uint64_t bytes);

/* coll_tune.c: NCCL's cost model (NVIDIA/nccl v2.30.7, src/graph/tuning.cc). */
#define RS_TUNE_CHANNELS 16u /* channels NCCL's per-channel ceilings are taken over, unless nccl.channels */
typedef struct coll_tune {
    rs_coll_algo algo;     /* ring, tree or nvls */
    rs_nccl_proto proto;   /* simple, ll or ll128 */
    double predicted_us;   /* NCCL's latency + bytes / bandwidth for them */
    double base_us;        /* latency once per collective */
    double hop_us[2];      /* latency per step over an HB hop, a network hop */
    double nvls_eff;       /* NCCL's nvlsEfficiency for the GPU */
} coll_tune;
/* Pick c's algorithm (c->algo, or nccl.algo, when not auto) and
 * protocol (nccl.protocol when not auto) by NCCL's model for c's op,
 * size, ranks and HB domains on its network. RS_EINVAL with err when NCCL
 * would not run what is forced. */
int rs_coll_tune(rs_coll *c, coll_tune *out, rs_err *err);
/* All-to-all and send/recv under nccl.model=nccl: NCCL's point-to-point
 * protocol (LL up to NCCL_P2P_LL_THRESHOLD per peer, else Simple) and,
 * as the latency NCCL's model lacks for them, one ring step's over the
 * group's slowest kind of hop plus the ring's base latency, once. */
void rs_coll_tune_p2p(rs_coll *c, coll_tune *out);
/* Bytes on the wire for `bytes` of data under c's protocol: LL's 8-byte
 * lines carry 4, LL128's 128-byte lines 120, Simple all. */
uint64_t rs_coll_wire_bytes(const rs_coll *c, uint64_t bytes);
/* NCCL's per-step latency of a hop from rank a to rank b beyond what the
 * network simulates of it (a 64-byte message's time on the idle path),
 * at least 0; 0 under nccl.model=ideal. */
rs_time rs_coll_hop_extra(const rs_coll *c, uint32_t a, uint32_t b);
/* `us` of NCCL's latency from GPU ga to gb less what the network already
 * takes for a 64-byte message between them (all of it when no path is
 * known, at the rates of the run's start: NCCL's constants, not a
 * degrade's); 0 when us is not a time. rs_coll_hop_extra and
 * rs_coll_p2p_cost. */
rs_time rs_coll_beyond_net(rs_net *net, uint32_t ga, uint32_t gb, double us);
/* GPUs per HB domain of the network. */
uint32_t rs_coll_net_hb(const rs_net *net);

/* Per-algorithm setup: allocate state, set pending, issue first sends
 * (members joining one by one: the per-member counts, no sends). */
int rs_coll_ring_start(rs_coll *c, rs_err *err);
int rs_coll_chain_start(rs_coll *c, rs_err *err);
int rs_coll_tree_start(rs_coll *c, rs_err *err);
int rs_coll_a2a_start(rs_coll *c, rs_err *err);
int rs_coll_sendrecv_start(rs_coll *c, rs_err *err);
int rs_coll_hier_start(rs_coll *c, rs_err *err);
int rs_coll_nvls_start(rs_coll *c, rs_err *err);
void rs_coll_hier_free(rs_coll *c);

/* coll_opts.c: the library's version of the caller's options (NULL: the
 * defaults), options it lacks at their defaults. RS_EINVAL for a size
 * below the first version's. */
int rs_coll_opts_take(rs_coll_opts *out, const rs_coll_opts *o);

/* coll.c: the collective *req (the library's version of it) over
 * gpus[0..n): every member started now, or (req->member_done) none; a
 * sub-collective of parent (NULL: none); with probe, only what its
 * reservation needs is counted into *probe (nothing is reserved,
 * registered or sent). */
int rs_coll_launch(rs_net *net, const uint32_t *gpus, uint32_t n, const rs_coll_req *req, rs_coll *parent,
                   rs_coll_needs *probe, rs_coll **out, rs_err *err);
/* Member x starts its part (the algorithm's own join). */
int rs_coll_ring_join(rs_coll *c, uint32_t x);
int rs_coll_tree_join(rs_coll *c, uint32_t x);
int rs_coll_a2a_join(rs_coll *c, uint32_t x);
int rs_coll_hier_join(rs_coll *c, uint32_t x);
/* A split run: make the sub-collective whose callbacks start at cb0 + off
 * (rs_coll_bind). */
int rs_coll_hier_bind(rs_coll *c, uint32_t off);

#endif
