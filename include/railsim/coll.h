/*
 * coll.h - collectives: an NCCL-style algorithm turns a collective over a
 * communicator into transfers between GPUs, sent over rs_net as data
 * dependencies allow (docs/collectives.md describes every algorithm).
 *
 * A running collective (rs_coll) owns its dependency state, allocated once
 * at start and sized O(ranks x channels) for ring and tree, O(ranks) for
 * all-to-all; nothing is allocated per transfer. Transfers are plain
 * rs_net_send messages whose completion callbacks advance the state; the
 * network's timers carry reduction delays. Runs are deterministic: every
 * decision depends only on the communicator, the sizes and event order.
 */
#ifndef RS_COLL_H
#define RS_COLL_H

#include "base.h"
#include "comm.h"
#include "net.h"

RS_BEGIN_DECLS

typedef enum {
    RS_COLL_ALLGATHER = 0,
    RS_COLL_REDUCESCATTER,
    RS_COLL_ALLREDUCE,
    RS_COLL_ALLTOALL,
    RS_COLL_SENDRECV,
    RS_COLL_BROADCAST, /* from rank 0 of the communicator (nccl-tests' root 0): NCCL's ring as a chain */
    RS_COLL_REDUCE     /* to rank 0 of the communicator, as a chain */
} rs_coll_op;
#define RS_COLL_NOPS 7

/* How a collective's members start and end (workload.sync, docs/replay.md):
 * a replay's collectives, and the iterations of traffic.kind=collective
 * (collrun.h). */
typedef enum rs_replay_sync {
    RS_SYNC_COLLECTIVE = 0, /* it starts when its last member issues it and ends for all at once */
    RS_SYNC_RANK = 1,       /* each member's part starts when it issues it and ends when its part is done */
} rs_replay_sync;

typedef enum {
    RS_ALGO_AUTO = 0,
    RS_ALGO_RING,         /* AllGather, ReduceScatter, AllReduce; Broadcast and Reduce as a chain */
    RS_ALGO_TREE,         /* AllReduce: NCCL's double binary tree */
    RS_ALGO_DIRECT,       /* all-to-all (every pair at once), send/recv */
    RS_ALGO_PAIRWISE,     /* all-to-all in n-1 exchange steps */
    RS_ALGO_HIERARCHICAL, /* AllGather, ReduceScatter, AllReduce over equal HB domains */
    RS_ALGO_NVLS          /* AllGather, ReduceScatter, AllReduce inside one HB domain, reduced in the
                             NVSwitch (NVLink SHARP; nccl.model=nccl only) */
} rs_coll_algo;
#define RS_COLL_NALGOS 7

/* Tuning knobs (plain value type). rs_coll_opts_default fills:
 *   channels 0     = auto: the GPUs per HB domain of the group when it
 *                    spans several domains (so every rail NIC carries one
 *                    ring's domain crossing, as NCCL picks a multiple of the
 *                    NIC count), else 2 (two rings fill each other's
 *                    latency bubbles); at most RS_COLL_MAX_CHANNELS.
 *   chunk_bytes    = 512 KiB, NCCL's Simple-protocol step (4 MiB buffer / 8
 *                    slots): the unit of pipelining and of one rs_net_send
 *                    (at flow level a long ring sends one stream per rank
 *                    and channel instead, coll_ring.c).
 *   reduce_gbps    = 16000 Gb/s (2 TB/s): a reduction reads two inputs and
 *                    writes one output from HBM (3.35 TB/s on H100) on a few
 *                    SMs; 0 makes reductions free.
 *   hb_size 0      = take the HB domain size from the network.
 *   window         = 8: the receiver's buffer slots per connection, as
 *                    NCCL's NCCL_STEPS; a piece goes only into a free slot
 *                    (docs/collectives.md). 1..64.
 *   a2a_peers      = 0: a direct all-to-all posts every rank's n-1 sends at
 *                    once (NCCL's grouped send/receive). k > 0: each rank
 *                    keeps at most k sends in flight, to its peers in
 *                    offset order, a finished one starting the next (fewer
 *                    concurrent flows at flow level; measured on 128 GPUs
 *                    x 256 MiB: k = 16 is at the NIC bound, k = 8 +1.7%,
 *                    k = 2 +109%). */
typedef struct rs_coll_opts {
    uint32_t size;          /* sizeof(rs_coll_opts) where the caller was compiled (rs_coll_opts_default) */
    uint32_t channels;
    uint64_t chunk_bytes;
    double reduce_gbps;
    uint32_t hb_size;
    uint32_t window;
    uint32_t a2a_peers;
} rs_coll_opts;

#define RS_COLL_MAX_CHANNELS 32u

/* *o (its first `size` bytes) with every option at its default, and its
 * size. */
RS_API void rs_coll_opts_init(rs_coll_opts *o, size_t size);
static inline void rs_coll_opts_default(rs_coll_opts *o)
{
    rs_coll_opts_init(o, sizeof *o);
}

/* What collectives hand the network, counted before a run (the resource
 * guard): transfers, those that cross the network, and their bytes over
 * NICs and inside HB domains. */
typedef struct rs_coll_load {
    double msgs, net_msgs, net_bytes, hb_bytes;
} rs_coll_load;

/* n ranks each send `steps` slices of `slice` bytes, a share hb of them
 * inside an HB domain, each slice as `parts` transfers (0: cut over
 * `channels` and then into rs_coll_opts_default's chunks, as a collective
 * does); `times` times. Point-to-point patterns use it directly. */
RS_API void rs_coll_load_steps(rs_coll_load *l, double times, double n, double steps, double slice, double hb,
                               double parts, double channels);
/* `times` runs of op over n ranks of `bytes` (nccl-tests size), by the
 * schedule this layer runs: ring_hb the share of ring neighbours and
 * a2a_hb of all-to-all peers in one HB domain, per_domain the group's
 * GPUs per domain (the channels: per_domain for a group across domains,
 * else 2), t the network's traits (rs_net_config_traits: long rings as
 * streams, relayed all-to-all blocks as one transfer). */
RS_API void rs_coll_load_add(rs_coll_load *l, double times, rs_coll_op op, double n, double bytes, double ring_hb,
                             double a2a_hb, double per_domain, const rs_net_traits *t);

typedef struct rs_coll rs_coll;
typedef void (*rs_coll_done_fn)(void *ctx, rs_net *net, uint64_t tag);
typedef void (*rs_coll_member_fn)(void *ctx, rs_net *net, uint64_t tag, uint32_t member);

/* What the creator of a collective reserved for it, alike in every
 * process of a split run (docs/parallel.md, "Replays"): such a collective
 * is built by whichever of its members' events comes first in each
 * process, at different times, so what it registers and the serials of
 * its transfers cannot come from creation order. rs_coll_needs_get says
 * how much to reserve. */
typedef struct rs_coll_reservation {
    uint64_t serial0; /* first of the needed serials (rs_net_serials_reserve); UINT64_MAX: taken at creation,
                         in creation order */
    uint32_t cb0;     /* first of the needed callback indices (rs_net_cb_reserve); UINT32_MAX: none (then it
                         cannot run split) */
} rs_coll_reservation;

/* A collective (rs_coll_create and the calls that ask about one before
 * it exists). Initialise with rs_coll_req_init, then set what differs;
 * the library reads the first `size` bytes (docs/library.md, "Versioned
 * structs"). */
typedef struct rs_coll_req {
    uint32_t size;            /* sizeof(rs_coll_req) where the caller was compiled */
    rs_coll_op op;
    /* RS_ALGO_AUTO (default): the auto rule (docs/collectives.md). Tree is
     * AllReduce only, direct/pairwise all-to-all or send/recv only,
     * hierarchical needs a group spanning HB domains with the same number
     * of GPUs in each. */
    rs_coll_algo algo;
    /* The size nccl-tests reports for the op: AllReduce, Broadcast and
     * Reduce the buffer, AllGather the output buffer, ReduceScatter the
     * input buffer, all-to-all the buffer of each rank, send/recv the
     * message (rank 0 -> rank 1 of the communicator). */
    uint64_t bytes;
    const rs_coll_opts *opts; /* NULL (default): rs_coll_opts_default; copied */
    /* NULL (default): every member starts now, as a group. Else members
     * join one by one (rs_coll_join), as NCCL's ranks do: member_done(ctx,
     * net, tag, m) runs once m's part is done, plus NCCL's base latency
     * under nccl.model=nccl (docs/collectives.md, "Members joining"). */
    rs_coll_member_fn member_done;
    /* Runs, from a network event, when every member has finished (a
     * collective with nothing to move, one rank or zero bytes, completes
     * from an event at the current time). NULL: not told. */
    rs_coll_done_fn done;
    void *ctx;                /* done's and member_done's; borrowed until done has run */
    uint64_t tag;
    /* Members joining: what its creator reserved for it (NULL, default:
     * serials and callbacks taken at creation, in creation order). On a
     * network split over processes, a ring, tree, hierarchical or NVLS
     * collective with a reservation runs split: each process runs its
     * GPUs' part, member_done runs for them, done never runs (no process
     * sees every member), and the creator merges after the run
     * (rs_coll_tally). Borrowed during rs_coll_create. */
    const rs_coll_reservation *reserved;
} rs_coll_req;

/* *r for `bytes` of op: algorithm auto, default options, every member at
 * once, no callbacks, no reservation. Inline so that `size` is the
 * caller's. */
static inline void rs_coll_req_init(rs_coll_req *r, rs_coll_op op, uint64_t bytes)
{
    r->size = (uint32_t)sizeof *r;
    r->op = op;
    r->algo = RS_ALGO_AUTO;
    r->bytes = bytes;
    r->opts = NULL;
    r->member_done = NULL;
    r->done = NULL;
    r->ctx = NULL;
    r->tag = 0;
    r->reserved = NULL;
}

/* Create collective *req over communicator c on net, now: with
 * req->member_done NULL every member starts at once; else none has, and
 * rs_coll_join starts each (joining members post their receive buffers,
 * which their senders across HB domains learn a path latency later: a
 * credit, as NCCL's receiver proxy posts its FIFO entries; inside a domain
 * the slots persist from the last collective and a sender may fill them
 * before the member joins). Members joining: ring, tree, direct
 * all-to-all (no window of peers) and hierarchical each member from its
 * join; what waits for every member (NVLS, pairwise all-to-all, a window
 * of peers, broadcast and reduce) starts at the last join and ends for
 * all at once; send/recv is refused, and so is a network split over
 * processes without a reservation or (of those that wait) other than
 * NVLS inside one process.
 *
 * Errors (nothing started, *out NULL): RS_EINVAL with err naming the
 * problem (an algorithm that does not implement op, send/recv on fewer
 * than 2 ranks, GPU ids beyond the network, bad options, a req whose size
 * is below its first version's); RS_ENOMEM; a send refused by the network
 * (RS_EUNREACH on rail-only with PXN off) is returned as is.
 *
 * c and req are only read during the call; net and req->ctx are borrowed
 * until done has run. *out is the caller's: rs_coll_destroy, after done
 * ran (from inside done is fine) or after the network is destroyed, never
 * while it still runs. */
RS_API int rs_coll_create(rs_net *net, const rs_comm *c, const rs_coll_req *req, rs_coll **out, rs_err *err);
RS_API void rs_coll_destroy(rs_coll *coll); /* NULL is a no-op */

/* Start member m (its communicator rank) of a collective whose members
 * join one by one, now: it takes in what arrived and sends what it can;
 * member_done may run from inside this call when what reached m before it
 * joined completes its part (a small one inside an HB domain); done runs
 * after the last member's, always from an event. RS_EINVAL for a
 * collective whose members do not join, a member out of range or joined
 * twice. */
RS_API int rs_coll_join(rs_coll *coll, uint32_t member);

/* What a collective's reservation must hold: serials (at packet level; 0
 * at flow level) and callback indices (2 for a ring or tree, 2 per
 * sub-collective of a hierarchical one, 0 otherwise). */
typedef struct rs_coll_needs {
    uint32_t size; /* sizeof(rs_coll_needs) where the caller was compiled (docs/library.md, "Versioned structs") */
    uint64_t serials;
    uint32_t cbs;
    uint32_t relayed; /* transfers (ring hops, tree edges, hierarchical rail groups, all-to-all blocks) that
                         would go by a PXN relay (rs_net_relayed); a split run ships their chunks (since
                         2026-12-05; before, it could not send them from a member's event) */
    /* What it would run (added after the first version): the algorithm
     * (RS_ALGO_AUTO resolved), the protocol and NCCL's predicted time, as
     * rs_coll_algo_used, rs_coll_proto_used and rs_coll_predicted_us
     * would give for it. */
    rs_coll_algo algo;
    rs_nccl_proto proto;
    double predicted_us;
} rs_coll_needs;
/* What collective *req (members joining) over comm needs reserved,
 * without making it. RS_EINVAL / RS_ENOMEM as rs_coll_create. */
RS_API int rs_coll_needs_fill(rs_net *net, const rs_comm *comm, const rs_coll_req *req, rs_coll_needs *out,
                              size_t size, rs_err *err);
static inline int rs_coll_needs_get(rs_net *net, const rs_comm *comm, const rs_coll_req *req, rs_coll_needs *out,
                                    rs_err *err)
{
    return rs_coll_needs_fill(net, comm, req, out, sizeof *out, err);
}
/* Another process named callback index i of c's reservation before any
 * member here joined the part it belongs to (a hierarchical collective's
 * sub-collective): make that part now, so the index is bound
 * (rs_net_cb_reserve's resolver calls this). RS_EINVAL: not one of c's. */
RS_API int rs_coll_bind(rs_coll *c, uint32_t i);
/* Its transfers' bytes per GPU port so far, this process's sources
 * (rs_net_tally_bound); NULL once finished (the bound is kept). */
RS_API const rs_tally *rs_coll_tally(const rs_coll *coll);

/* The algorithm run (RS_ALGO_AUTO resolved). */
RS_API rs_coll_algo rs_coll_algo_used(const rs_coll *coll);
/* The NCCL protocol run (rs_net_nccl(net)->proto resolved; all-to-all
 * and send/recv: NCCL's point-to-point choice): RS_PROTO_AUTO when the
 * network's nccl.model is ideal (no protocol). */
RS_API rs_nccl_proto rs_coll_proto_used(const rs_coll *coll);
/* What NCCL's cost model (docs/collectives.md, "NCCL's protocols and
 * tuner") predicted for the algorithm and protocol it picked, in us;
 * 0 under nccl.model=ideal and for all-to-all and send/recv (the model
 * has none). */
RS_API double rs_coll_predicted_us(const rs_coll *coll);
RS_API rs_time rs_coll_start_time(const rs_coll *coll);
/* Completion time; RS_TIME_MAX while running. */
RS_API rs_time rs_coll_end_time(const rs_coll *coll);
RS_API int rs_coll_finished(const rs_coll *coll);
/* RS_OK, or the first error a transfer hit while running (the run is also
 * stopped with that code through rs_sim_stop). */
RS_API int rs_coll_status(const rs_coll *coll);
/* The collective's network-only bound in ps, known once it has finished
 * (0 before): rs_net_tally_bound over the payload every transfer it and
 * its sub-collectives issued put on each GPU-side port, as the network
 * carried them (PXN relays through the HB domain, failovers). The
 * largest of the ports' bytes over their payload rates: no schedule of
 * these transfers can finish sooner. 0 for one rank or zero bytes. */
RS_API rs_time rs_coll_bound(const rs_coll *coll);
/* The share of the collective done, 0..1, for a progress line: the
 * completions its algorithm counts (ring and tree steps, all-to-all
 * pairs) done over all it expects; coarse for hierarchical (one per
 * segment). 1 once finished. Not a time estimate: steps differ in size. */
RS_API double rs_coll_progress(const rs_coll *coll);
/* Transfers (rs_net_send calls) issued so far, sub-collectives included. */
RS_API uint64_t rs_coll_transfers(const rs_coll *coll);

/* -- partitioned runs (docs/parallel.md) --------------------------------
 * A collective runs split over the processes of a partitioned network
 * when each of its ranks reads only its own state: a direct all-to-all
 * without a window of peers and a send/recv (every transfer sent as it
 * starts), and the ring (a rank sends into its successor's buffer as the
 * successor's credits tell it, rs_net_at_gpu_for). It starts in every
 * process (from the driver's shared events); each process runs its GPUs'
 * part and sees their completions. None finishes it alone: after the
 * run, rank 0 finishes it from every process's part, at the last
 * completion anywhere, with its records placed there. */

/* The algorithm rs_coll_create would run for *req (RS_ALGO_AUTO: its
 * rule, on net's HB domains) into *out. RS_EINVAL for a req of no known
 * size, RS_ENOMEM. */
RS_API int rs_coll_algo_resolve(const rs_net *net, const rs_comm *comm, const rs_coll_req *req, rs_coll_algo *out);
/* Can collective *req over comm run split on net? 1, or 0 with the reason
 * in why (out of memory among them). */
RS_API int rs_coll_splits(rs_net *net, const rs_comm *comm, const rs_coll_req *req, char *why, size_t n);
/* This process's part of a split collective (the completions it saw,
 * where the latest ran, its sources' bytes on each GPU port), as *len
 * bytes at *buf (malloc'ed; free it). RS_ENOMEM. */
RS_API int rs_coll_part_pack(const rs_coll *coll, void **buf, size_t *len);
/* Rank 0, after the run: every process's part (rs_coll_part_pack, its
 * own among them: all[i], len[i] bytes). When they add up to every
 * completion the collective expects, it finishes as the serial run's did
 * (done runs, its end time is the latest completion, what done writes goes
 * there and its bound counts every process's bytes); else nothing happens
 * (the run ended before it finished). RS_EINVAL for a part that does not
 * read as one. */
RS_API int rs_coll_part_finish(rs_coll *coll, const void *const *all, const size_t *len, uint32_t n);

/* NCCL's cost of one ncclSend of `bytes` from GPU src to dst, under
 * nccl.model=nccl (docs/collectives.md, "Point-to-point"): *wire, the
 * bytes its protocol puts on the wire (LL, x2, up to
 * NCCL_P2P_LL_THRESHOLD; else Simple, as many), and *extra, the latency
 * NCCL adds beyond what the network simulates (the ring's base latency
 * and one ring step over the kind of hop src -> dst is, less the network's
 * own time for a 64-byte message; extra may be NULL, for the bytes alone).
 * Under nccl.model=ideal: bytes and 0. */
RS_API void rs_coll_p2p_cost(rs_net *net, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t *wire,
                             rs_time *extra);

/* The thread blocks (SMs) one of NCCL's kernels holds while it runs on a
 * GPU of net (docs/compute.md, "Contention"): a
 * collective's channels (nccl.channels, else the channels the tuner
 * takes, 16), one block each; a send or receive's channels to a peer
 * over the network (NCCL v2.30.7, src/graph/paths.cc,
 * ncclTopoGetNchannels: at least one per NIC, more to reach the NIC's
 * rate at NCCL_P2P_PER_CHANNEL_NET_BW = 14 GB/s each, rounded up to a
 * power of 2). The same under either nccl.model: whether compute feels
 * them is workload.contention's business. */
RS_API uint32_t rs_coll_nccl_ctas(rs_net *net, uint32_t gpu, int p2p);

/* nccl-tests: algbw = bytes / time; busbw = algbw * factor with factor
 * 2(n-1)/n for AllReduce, (n-1)/n for AllGather, ReduceScatter and
 * all-to-all, 1 for send/recv, Broadcast and Reduce. n = 0 gives 0. */
RS_API double rs_coll_busbw_factor(rs_coll_op op, uint32_t n);

/* Lower-case names ("allreduce", "ring", ...); "?" for a bad value. */
RS_API const char *rs_coll_op_name(rs_coll_op op);
RS_API const char *rs_coll_algo_name(rs_coll_algo algo);
/* "simple", "ll", "ll128"; "-" for RS_PROTO_AUTO (no protocol), "?" for a
 * bad value. */
RS_API const char *rs_coll_proto_name(rs_nccl_proto p);
/* Case-insensitive; also accept "all_reduce"/"all-reduce" spellings and
 * "a2a". RS_EINVAL for an unknown name (*out untouched). */
RS_API int rs_coll_op_parse(const char *s, rs_coll_op *out);
RS_API int rs_coll_algo_parse(const char *s, rs_coll_algo *out);

RS_END_DECLS

#endif
