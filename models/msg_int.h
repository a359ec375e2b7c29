/*
 * msg_int.h - messages (models/ only): what the user sent (rs_msg), its
 * record and completion (msg.c), its PXN relay pipeline (relay.c), its
 * failover to another rail (failover.c), and the statistics of message
 * completion times (fct.c).
 */
#ifndef RS_MSG_INT_H
#define RS_MSG_INT_H

#include "flow_int.h"
#include "partition_int.h"

/* A message crosses up to three legs: the source's HB domain to a GPU on
 * rail c (leg 0), the network to the GPU of rail c in the destination's
 * domain (leg 1), that domain to the destination (leg 2). Without faults
 * c is the destination's rail (PXN: no leg 2); a relayed message (pipe)
 * runs its legs as a pipeline of chunks through the relay's buffer of
 * RS_RELAY_SLOTS chunks (relay.c): the HB legs one chunk at a
 * time, the network leg back to back, each chunk posted once the one
 * before has left the NIC. */
#define RS_RELAY_SLOTS 8u
typedef struct rs_msg {
    uint64_t bytes;
    uint64_t tag;
    rs_net_done_fn done;
    rs_net_done_fn left;     /* rs_net_msg.left: told once it has left its source, or NULL */
    void *ctx;
    rs_tally *tally;         /* counts its legs' bytes per GPU port (rs_net_msg.tally), or NULL */
    rs_time start;
    uint64_t off;            /* bytes delivered before the pipeline (a failover's restart point) */
    uint64_t serial0;        /* pipe: flow serials reserved for its chunks: leg k chunk c is serial0 + k * nchunks + c */
    uint32_t flow_base;      /* pipe, premade: its chunk flows, made at the send (make_chunk_flows) */
    uint32_t src, dst;
    uint32_t leg_src, leg_dst; /* network leg: from GPU leg_src to leg_dst (src, dst unless relayed) */
    uint32_t flow1;          /* the flow of its network leg started last, RS_NONE: none */
    uint32_t hit;            /* faults: hits of the flows a failover abandoned (fault.c), RS_NONE: none */
    uint32_t nchunks;        /* pipe: chunks */
    uint32_t ready[3];       /* pipe: chunks that finished each leg, in order (leg 1: delivered) */
    uint32_t sent1;          /* pipe: chunks started on the network leg (sender side) */
    uint32_t acked1;         /* pipe: network-leg chunks acknowledged, in order: their relay slots are free */
    uint32_t fly1[RS_RELAY_SLOTS]; /* pipe: the flow of network-leg chunk c at [c % slots] until its last ACK */
    uint8_t early1;          /* pipe: bit b: network-leg chunk ready[1] + 1 + b delivered ahead of order */
    uint8_t acked_early;     /* pipe: bit b: chunk acked1 + 1 + b acknowledged ahead of order */
    uint8_t busy[3];         /* pipe: a chunk is on the leg (leg 1: still leaving the NIC) */
    uint8_t pipe;            /* relayed: legs 0 and/or 2 exist */
    uint8_t finished;        /* completed (msg_finish ran) */
    uint8_t left_told;       /* `left` ran */
    uint8_t failing_over;    /* the old pipeline drains, then restarts at off */
    uint8_t named;           /* its flow's serial is serial0, given at the send (rs_net_msg.serial) */
    uint8_t freed;           /* handed back (msg_release) */
    uint8_t premade;         /* pipe: its chunk flows were made at the send (the partition's premade_relays) */
    uint8_t gpu_serials;     /* pipe: serial0 counts its source GPU's chunks (rs_relay_serial) */
    uint8_t shipped;         /* pipe, a split run: its network-leg chunks are shipped (or mirrored) one by one */
    uint32_t made1;          /* shipped: network-leg chunk flows made here */
    uint32_t flows_live;     /* shipped: of them, not yet handed back (rs_net_relay_flow_gone) */
} rs_msg;

/* Completion-time statistics (fct.c; a split run merges them, split.c). */
#define FCT_SUB 10
#define FCT_BUCKETS ((size_t)(65 - FCT_SUB) << FCT_SUB)

struct rs_fct_acc {
    uint64_t n;
    unsigned __int128 sum;
    rs_time min, max;
    uint64_t *hist;          /* NULL until the kept list is full */
    /* A split run's rank 0: the median and 99th percentile of every
     * process's kept times, selected together (split.c); its own kept
     * times are then only its own. */
    int pooled;
    rs_time p50, p99;
};
/* The histogram bucket of completion time v. */
size_t rs_fct_bucket(rs_time v);
/* Nearest rank (from 1) of quantile q in n samples: the smallest rank
 * with at least q of them at or below it. */
uint64_t rs_fct_rank(uint64_t n, double q);
/* The histogram of every completion so far, made from the kept times if
 * there is none yet (which then go: nothing reads them after). RS_ENOMEM. */
int rs_fct_histogram(rs_net *net);
/* Keep message completion *t: its time, its record (msg_records), past
 * RS_NET_MSG_TIMES_KEEP the histogram. RS_ENOMEM. */
int rs_fct_keep(rs_net *net, const rs_net_msg_time *t);
void rs_fct_free(rs_net *net);

/* Frames of `bytes` sent as messages of at most `chunk` bytes (a relay's
 * chunks), each cut into frames of at most `mtu`; an empty message is one
 * frame. */
static inline uint64_t rs_chunked_frames(uint64_t bytes, uint64_t chunk, uint64_t mtu)
{
    uint64_t full = bytes / chunk, last = bytes % chunk;
    uint64_t n = full * ((chunk + mtu - 1) / mtu) + (last + mtu - 1) / mtu;
    return n ? n : 1;
}

/* msg.c */
/* Send *m, starting now (rs_net_send: m is the library's version). */
int rs_msg_send(rs_net *net, const rs_net_msg *m);
/* Message m's last byte has arrived (or it went to itself): its
 * completion is kept and its callbacks run from an event of their own. */
int rs_msg_finish(rs_net *net, uint32_t m);
/* Bytes of relay chunk c of msg (the last one may be short). */
uint64_t rs_msg_chunk_bytes(const rs_net *net, const rs_msg *msg, uint32_t c);
/* Count `bytes` crossing from GPU a to GPU b, over the HB domain (hb) or
 * the network, into message m's tally; RS_ENOMEM. */
int rs_msg_tally_leg(rs_net *net, uint32_t m, uint32_t a, uint32_t b, uint64_t bytes, int hb);
/* Start a flow of message m (chunk RS_NONE: the whole message) on `leg`. */
int rs_msg_start_flow(rs_net *net, uint32_t src, uint32_t dst, uint64_t bytes, uint32_t m, uint32_t chunk,
                      int via_hb, uint8_t leg);
/* The receiving side of a shipped send (split.c): the message and its
 * flow as the sending process made them. The mirror's flow id, or RS_NONE. */
uint32_t rs_net_mirror_send(rs_net *net, const rs_part_send *s);
/* Hand message record m back (split.c: a mirror's, once its home let go). */
void rs_net_msg_reuse(rs_net *net, uint32_t m);
/* The receiving side of a shipped relay chunk (split.c): chunk s->chunk's
 * flow of the relayed message *m here (RS_NONE: chunk 0, which makes the
 * message, *m set). The mirror's flow id, or RS_NONE when the record
 * cannot be one. */
uint32_t rs_net_mirror_chunk(rs_net *net, const rs_part_send *s, uint32_t *m);
/* A shipped relay chunk's flow of message m was handed back here (split.c;
 * not the destination's process, whose completion hands the message
 * back): the message goes back with its last. */
void rs_net_relay_flow_gone(rs_net *net, uint32_t m);

/* relay.c */
/* Does relayed message msg have leg k (the network leg always)? */
static inline int rs_relay_leg_exists(const rs_msg *msg, unsigned k)
{
    return k == 1 || (k == 0 ? msg->leg_src != msg->src : msg->leg_dst != msg->dst);
}
/* The serial of relayed message msg's leg-k chunk c. A named message's
 * (rs_net_msg.serial given: a member's send, a replay's) count its source
 * GPU's chunks, in a space of their own (the top bit set), so a split
 * run's processes, each making only its own GPUs' sends, give them the
 * serial run's; others take a block of the network's counter at the send. */
uint64_t rs_relay_serial(const rs_net *net, const rs_msg *msg, unsigned k, uint32_t c);
/* How many of the legs before `leg` the relayed message has: where that
 * leg's chunk flows start in the block made at the send. */
uint32_t rs_relay_legs_before(const rs_msg *msg, unsigned leg);
/* The partition makes relayed message m's chunk flows as it is sent
 * (premade_relays): ids in a block from msg->flow_base. */
int rs_relay_premake(rs_net *net, uint32_t m);
/* A backend with whole relays: relayed message m as one flow over both legs. */
int rs_relay_start_whole(rs_net *net, uint32_t m);
/* The pipeline's state back to no chunk started. */
void rs_relay_reset(rs_msg *msg);
/* Chunk c done: *base counts the chunks done in order, bit b of *ahead
 * says chunk *base + 1 + b is done too. */
void rs_relay_chunk_done(uint32_t *base, uint8_t *ahead, uint32_t c);
/* Has network-leg chunk c of msg arrived ahead of order? */
int rs_relay_arrived_early(const rs_msg *msg, uint32_t c);
/* Start the next chunk on every free leg from k0 to k1 that may take one. */
int rs_relay_push(rs_net *net, uint32_t m, unsigned k0, unsigned k1);

/* failover.c */
/* The live rail a message from src to dst detours by (faults.reroute_hb). */
uint32_t rs_failover_rail(const rs_net *net, uint32_t src, uint32_t dst);
/* A failing-over message's flow finished (or the failover began): keep
 * draining, or restart once nothing of the old pipeline runs. */
int rs_failover_step(rs_net *net, uint32_t m);
/* Faults: move unfinished message m, whose network leg has no path, to a
 * live rail through the HB domains (docs/faults-format.md, failover),
 * charging it to fault entry `fault`. 1 when failed over (or already
 * failing over), 0 when it cannot be (no live rail, ideal transport, no
 * network leg left). */
int rs_msg_failover(rs_net *net, uint32_t m, uint32_t fault);
/* Is message m waiting on its network leg (unfinished, with one, not all
 * of its chunks across)? */
int rs_msg_needs_network(const rs_net *net, uint32_t m);
/* Is message m cut off: waiting on its network leg, and no path joins its
 * ends (failing over: no live rail)? */
int rs_msg_cut(const rs_net *net, uint32_t m);

/* Message-level progress, told by the backends (msg.c, relay.c). */
void rs_msg_flow_done(rs_net *net, uint32_t f);
/* The sender's side of a relay's network-leg chunk (flow f): its last
 * frame has left the NIC (the next chunk may go), and its last ACK has
 * come (its relay slot is free). flow_left also tells a posted message's
 * sender (rs_net_msg.left) that its flow has left. No-ops for any
 * other flow. */
void rs_msg_flow_left(rs_net *net, uint32_t f);
void rs_msg_flow_acked(rs_net *net, uint32_t f);

#endif
