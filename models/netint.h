/*
 * netint.h - the network's private data layout, shared by the models'
 * .c files (topology, fabric, transport, net). Not for other layers.
 *
 * Everything is a dense array indexed by uint32_t ids: nodes (GPUs first,
 * so node id == GPU id for GPUs, then Ethernet switches, then one NVSwitch
 * per HB domain), ports (each the egress side of one directed link; a cable
 * is two ports pointing at each other), flows (one transport stream, a QP)
 * and messages (what the user sent). Packets are pooled descriptors.
 */
#ifndef RS_NETINT_H
#define RS_NETINT_H

#include <stdlib.h>

#include "net.h"
#include "partition_int.h"
#include "partition.h"
#include "pcap.h"
#include "pool.h"
#include "rng.h"

#define RS_NPRIO 8
#define RS_NONE UINT32_MAX
#define RS_ROUTE_DIRECT 0x80000000u
/* Port array size past which fabric.c prefetches for the event after the
 * next one: below it the ports stay in a 1 MiB L2 and the look-ahead is
 * pure overhead (measured: bench/README.md). */
#define RS_NET_LOOKAHEAD_BYTES (1u << 20)

/* Bytes around a RoCEv2 payload on the wire (all counted in serialization):
 * Ethernet header 14 + IPv4 20 + UDP 8 + IB BTH 12, ICRC 4, FCS 4, plus the
 * 8-byte preamble/SFD and 12-byte inter-frame gap. RETH (16) rides on the
 * first packet of an RDMA WRITE; AETH (4) on ACK/NAK. An HB transfer unit
 * carries a 16-byte header (NVLink flit overhead is below our resolution). */
enum {
    RS_WIRE_ROCE = 14 + 20 + 8 + 12 + 4 + 4 + 8 + 12,
    RS_WIRE_RETH = 16,
    RS_WIRE_AETH = 4,
    RS_WIRE_SACK = 4,  /* SACK extension after the AETH of a selective NAK: reserved byte, PSN */
    RS_WIRE_HB = 16,
    RS_ETH_MIN_FRAME = 64 /* minimum frame (FCS included), before preamble/IFG */
};

enum rs_pkt_type {
    RS_PKT_DATA = 0, /* RDMA WRITE First/Middle/Last/Only */
    RS_PKT_ACK = 1,  /* RC Acknowledge, AETH syndrome ACK */
    RS_PKT_NAK = 2,  /* RC Acknowledge, AETH syndrome NAK (PSN sequence error) */
    RS_PKT_CNP = 3,  /* RoCEv2 congestion notification (BTH opcode 0x81) */
    RS_PKT_PFC = 4   /* 802.1Qbb PFC frame: hop by hop, never forwarded */
};

/* CNPs travel at their own priority, as NICs send them (DSCP 48). */
#define RS_CNP_PRIO 6
/* PFC pause frames: 64-byte MAC control frame plus preamble and gap. */
#define RS_WIRE_PFC (64 + 20)
/* A pause with quanta 0xFFFF: 65535 x 512 bit times. */
#define RS_PFC_QUANTA_MAX 0xFFFFu

enum rs_pkt_flags {
    RS_PF_FIRST = 1,  /* first packet of the message: RDMA WRITE First/Only, RETH */
    RS_PF_LAST = 2,   /* last packet: WRITE Last/Only (AckReq set too) */
    RS_PF_RETX = 4,   /* sent before: a retransmission */
    RS_PF_ECT = 8,    /* ECN-capable transport: IP ECN = ECT(0) */
    RS_PF_CE = 16,    /* congestion experienced: marked by a switch */
    RS_PF_ACKREQ = 32, /* BTH AckReq: the responder acknowledges now */
    RS_PF_SACK = 64,   /* NAK: carries railsim's SACK extension (sack.c, docs/pcap.md) */
    RS_PF_LOST = 128   /* topology.loss_rate: corrupted on this link, dropped on arrival
                        * (never on PFC frames, whose flags are the class-enable vector) */
};

/* One cache line (the pool aligns objects of 33-64 bytes to 64): a hop
 * reads and writes only this line of the packet. Fields are ordered by
 * size. */
typedef struct rs_pkt {
    struct rs_pkt *next;  /* egress queue or in-flight list link */
    rs_time t_next;       /* in flight: arrival time of the packet behind it on the link */
    uint32_t flow;        /* flow index */
    uint32_t psn;         /* data: PSN; ACK/NAK: the PSN acknowledged / expected */
    uint32_t src;         /* source GPU (hashed by ECMP) */
    uint32_t dst;         /* destination GPU (what switches route on) */
    union {
        uint32_t payload; /* data: payload bytes (control frames: 0) */
        uint32_t sack;    /* NAK with RS_PF_SACK: the out-of-order PSN that arrived */
    };
    uint32_t wire;        /* bytes serialized on the wire */
    uint32_t link;        /* in flight: the port whose link carries it */
    uint32_t to_port;     /* in flight: the receiver's port on that cable */
    uint32_t to_node;     /* in flight: the receiving node */
    uint32_t in_port;     /* queued at a switch: the port it came in on (PFC accounting) */
    uint16_t entropy;     /* UDP source port: the ECMP entropy */
    uint8_t type, prio, flags, hops;
    uint8_t own;          /* a split run: its flow was made by a process's own event (rs_flow.home) */
} rs_pkt;
_Static_assert(sizeof(rs_pkt) == 64, "rs_pkt is one cache line");

enum rs_node_kind { RS_NODE_GPU = 0, RS_NODE_SWITCH = 1, RS_NODE_HB = 2 };

typedef struct rs_node {
    uint32_t port_base;   /* first port id; ports are contiguous */
    uint32_t nports;
    uint32_t entity;      /* engine entity id */
    uint32_t sw;          /* switch index (switches), else RS_NONE */
    uint8_t kind;
    uint8_t tier;         /* switches: 1 leaf, 2, 3 */
    uint16_t plane;       /* switches: rail plane (rail-only) or 0 */
    uint32_t ordinal;     /* index among switches of its plane and tier, for naming */
    uint32_t leaf_index;  /* leaf switches: index among leaves, else RS_NONE */
} rs_node;

enum rs_port_kind { RS_PORT_NIC = 0, RS_PORT_GPU_HB = 1, RS_PORT_SWITCH = 2, RS_PORT_HB = 3 };

/* One priority's egress queue and its buffer accounting: 32 bytes, so a
 * packet's hop touches half a line of per-priority state per port. */
typedef struct rs_portq {
    rs_pkt *head, *tail;
    uint64_t bytes;            /* queued bytes of this priority (ECN) */
    uint64_t ing_bytes;        /* switch ports: bytes that came in here at this priority, still buffered */
} rs_portq;

/* A port, laid out by how often each field is touched: line 0 is read on
 * every transmission and enqueue, line 1 holds the per-packet counters and
 * the fields a packet's ingress port needs (PFC), then one rs_portq per
 * priority, then what pauses and the end-of-run statistics need. A hop
 * used to touch 6 lines of the egress port and 3 of the ingress port; now
 * 3 and 2. With the one-line packet and arrival events that carry the
 * packet (fabric.c) it halves the hop's data misses (bench/README.md,
 * "Measured design choices"). */
typedef struct rs_port {
    /* line 0: transmit and enqueue */
    rs_time busy_until;        /* the current transmission ends */
    rs_pkt *fly_tail;          /* last frame on the link (arrival order); NULL: link empty */
    uint64_t qbytes;           /* bytes queued (not counting the frame on the wire) */
    uint64_t limit;            /* tail-drop limit on qbytes */
    uint64_t ps_per_byte;      /* serialization per byte when exact, else 0 */
    rs_time prop;              /* propagation + the receiver's pipeline latency */
    uint32_t act_head;         /* GPU ports: flows with packets to send (round robin) */
    uint32_t peer_port;        /* the reverse direction's port (at peer_node) */
    uint8_t qmask;             /* bit p set: queue p non-empty */
    uint8_t tx_sched;          /* a tx-done event is pending */
    uint8_t up;
    uint8_t kind;
    uint8_t paused;            /* bit p: priority p paused by the peer's PFC */
    uint8_t pfc_xoff, pfc_xon; /* PFC frame to send: classes to pause / resume */
    uint8_t cut;               /* partitioned run: its link ends in another process (part.c) */
    /* line 1: counters touched per packet, ingress-side PFC state */
    uint64_t tx_pkts, tx_bytes, max_qbytes, max_ing_bytes;
    rs_pcap *cap;              /* capture file, or NULL (almost always) */
    uint64_t rate_bps;
    uint32_t node, peer_node;
    uint32_t act_tail;
    uint8_t pause_sent;        /* bit p: we paused the peer for priority p (XOFF out) */
    uint8_t pfc_refresh_sched; /* an XOFF refresh event is pending */
    uint8_t pfc_expire_sched;  /* a pause-expiry event is pending */
    /* lines 2-5 */
    rs_portq q[RS_NPRIO];
    /* cold: pauses and counters */
    rs_time pause_until[RS_NPRIO];
    rs_time paused_since[RS_NPRIO];
    uint64_t drops, pfc_sent, pfc_received, paused_ps, ecn_marked, cnp_sent;
    /* Faults (fault.c): the last frame that was on the wire when the cable
     * last failed; it and every frame ahead of it on the link are lost
     * when they arrive. NULL: none pending. */
    struct rs_pkt *cut_tail;
    uint32_t down_fault;       /* the fault entry that last took the cable down: its link-down drops */
} __attribute__((aligned(64))) rs_port;
_Static_assert(sizeof(rs_portq) == 32 && offsetof(rs_port, q) == 128, "rs_port line layout");

/* DCQCN reaction point (Zhu et al., SIGCOMM 2015), the sender's rate
 * state: the packet level keeps one per flow (transport.c), the flow level
 * one per flow (the flow backend); both run the law with rs_dcqcn_cut and
 * rs_dcqcn_increase. */
typedef struct rs_dcqcn_rp {
    double rc, rt, alpha;      /* current and target rate (bit/s), alpha */
    rs_time alpha_at;          /* alpha is current as of this time */
    uint32_t t_stage, b_stage; /* rate-increase events from the timer / byte counter */
    uint8_t limited;           /* rate below line rate, timers running */
    uint8_t timer_inc;         /* the last increase event was the timer's */
} rs_dcqcn_rp;

typedef struct rs_flow {
    uint64_t bytes;
    uint32_t src, dst;       /* GPUs */
    uint32_t port;           /* egress port at the source */
    uint32_t npkts, mtu;
    uint32_t snd_nxt;        /* next PSN to send */
    uint32_t snd_una;        /* oldest unacknowledged PSN */
    uint32_t max_sent;       /* one past the highest PSN ever sent */
    uint32_t rcv_nxt;        /* receiver: next expected PSN (ideal: packets received) */
    uint32_t since_ack;      /* receiver: in-order packets since the last ACK */
    uint32_t next_active;    /* link in the port's round-robin list */
    uint32_t msg;            /* owning message */
    uint32_t chunk;          /* relay chunk index, or RS_NONE */
    uint32_t hit;            /* faults: the faults that dropped its packets (fault.c's list), RS_NONE: none */
    uint32_t hit_last;       /* faults: the latest of them (its retransmissions are charged to it) */
    uint32_t relay_src;      /* flow level: a whole relayed message as one flow from this GPU across
                              * its HB domain to src, then the network (net.c); RS_NONE: a plain flow */
    uint64_t serial;         /* creation order (= id unless records are reused): entropy, tie-breaks, QPN */
    uint32_t pkts_live;      /* packet level: its packets (data and control) not yet delivered or dropped */
    /* transport.recovery=selective (sack.c). The bitmaps exist only while
     * the flow has something out of order: NULL until then. */
    uint64_t *sack;          /* receiver's out-of-order bitmap, then the sender's SACK scoreboard */
    uint32_t rtx_nxt;        /* sender: lowest PSN that may still need resending */
    uint32_t lost_end;       /* sender: unacknowledged PSNs below this are lost */
    uint32_t rtx_mark;       /* sender: snd_nxt at the current resend pass's first resend, RS_NONE: no pass */
    rs_time last_progress;   /* sender: last ACK advance or go-back */
    uint16_t entropy;
    uint8_t reliable;        /* RoCE RC (ACK/NAK/GBN/RTO) vs ideal */
    uint8_t active;          /* in its port's round-robin list */
    uint8_t nak_pending;     /* receiver: a NAK for rcv_nxt is outstanding */
    uint8_t timer;           /* sender: an RTO event is pending */
    uint8_t tx_done, rx_done;
    uint8_t sleeping;        /* paced out of the round robin until next_tx */
    uint8_t cc_timer;        /* a DCQCN timer event is pending */
    uint8_t leg;             /* relayed message: 0 source HB, 1 network, 2 destination HB */
    uint8_t gone;            /* abandoned by a failover (net.c): its packets are discarded */
    uint8_t freed;           /* handed back (rs_flow_release): its pending timers are stale */
    rs_dcqcn_rp cc;          /* DCQCN reaction point (sender) */
    uint64_t cc_bytes;       /* bytes sent since the last byte-counter event */
    rs_time next_tx;         /* pacing: earliest start of the next packet */
    rs_time next_rate;       /* DCQCN: next rate-increase timer event */
    rs_time last_cnp;        /* notification point (receiver): last CNP sent */
    /* A partitioned run: a flow made by one process's own event (not the
     * shared driver's) has its id there (home, home_id); the others hold a
     * mirror under ids of their own (part.c). RS_NONE: made everywhere
     * under the same id. */
    uint32_t home, home_id;
    /* A partitioned run: its packets made and freed in this process; at its
     * home the others' reported sums, in a mirror what it reported so far
     * (part.c: a flow made by a process's own event is reused everywhere
     * once every packet it ever had is gone). */
    uint32_t pmade, pfreed, rmade, rfreed;
    uint8_t part_mark;       /* on this process's list to report (mirror) or to check (home) */
} rs_flow;

/* A message crosses up to three legs: the source's HB domain to a GPU on
 * rail c (leg 0), the network to the GPU of rail c in the destination's
 * domain (leg 1), that domain to the destination (leg 2). Without faults
 * c is the destination's rail (PXN: no leg 2); a relayed message (pipe)
 * runs its legs as a pipeline of chunks through the relay's buffer of
 * RS_RELAY_SLOTS chunks (net.c, "Relays"): the HB legs one chunk at a
 * time, the network leg back to back, each chunk posted once the one
 * before has left the NIC. */
#define RS_RELAY_SLOTS 8u
typedef struct rs_msg {
    uint64_t bytes;
    uint64_t tag;
    rs_net_done_fn done;
    rs_net_done_fn left;     /* rs_net_send_posted: told once it has left its source, or NULL */
    void *ctx;
    rs_tally *tally;         /* counts its legs' bytes per GPU port (rs_net_send_tallied), or NULL */
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
    uint8_t named;           /* its flow's serial is serial0, given at the send (rs_net_send_named) */
    uint8_t freed;           /* handed back (msg_release) */
    uint8_t premade;         /* pipe: its chunk flows were made at the send (the partition's premade_relays) */
} rs_msg;

/* Ids of records handed back for reuse (net.c rs_slot_take / give): a
 * stack whose room `cap` is kept at least the record array's capacity,
 * so giving an id back never allocates. */
typedef struct rs_free_ids {
    uint32_t *ids;
    size_t n, cap;
} rs_free_ids;

/* The ECMP hash a switch computes over what it sees of a packet: the
 * addresses (GPU ids), the UDP source port (the flow's entropy) and its
 * own salt. The one definition for the packet level (fabric.c) and the
 * flow level (the flow backend), which must pick the same paths. */
static inline uint64_t rs_ecmp_hash(uint64_t salt, uint32_t src, uint32_t dst, uint16_t entropy)
{
    return rs_mix64(salt ^ ((uint64_t)src << 32 | dst) ^ ((uint64_t)entropy << 48));
}

/* Which of cnt next hops hash h picks: its high 32 bits scaled to cnt. */
static inline uint32_t rs_ecmp_index(uint64_t h, uint32_t cnt)
{
    return (uint32_t)(((h >> 32) * cnt) >> 32);
}

/* routing.ecmp=flowlet: one switch's flowlet table, RS_FLOWLET_SLOTS
 * entries indexed by the low bits of the ECMP hash, each the last packet's
 * time and the next hop chosen for it, tagged with the next-hop set (a
 * slot another set's flow took over starts a new flowlet). Real DLB tables
 * are per ECMP group (Juniper: 256 flowsets per group by default); one
 * shared table per switch with tags collides the same way at this size. */
#define RS_FLOWLET_SLOTS 4096u
typedef struct rs_flowlet {
    rs_time last;            /* last packet of the flowlet; 0: slot never used */
    uint32_t set;            /* next-hop set (offset in net->nh) */
    uint32_t pick;           /* index in that set */
} rs_flowlet;

/* Per-switch forwarding state: next-hop sets toward each leaf switch. */
typedef struct rs_switch {
    uint32_t node;
    uint32_t leaf_index;     /* index among leaves, or RS_NONE */
    uint32_t *nh_off;        /* per leaf: offset into net->nh, RS_NONE if unreachable */
    uint64_t hash_salt;      /* per-switch ECMP hash seed */
    rs_rng rng;              /* per-packet spraying */
    rs_rng ecn_rng;          /* ECN marking draws */
    rs_flowlet *flowlet;     /* routing.ecmp=flowlet: RS_FLOWLET_SLOTS entries, else NULL */
} rs_switch;

struct rs_net {
    rs_sim *sim;
    rs_net_config cfg;
    uint32_t gpus, hb_size, domains;

    rs_node *nodes;
    uint32_t nnodes, nswitches, first_switch, first_hb;
    rs_port *ports;
    uint32_t nports;
    rs_switch *sw;
    uint32_t nleaves;
    uint32_t *leaf_of_gpu;   /* switch index of the leaf each GPU's NIC hangs off */
    uint32_t *leaf_index_of_gpu; /* that leaf's leaf index (saves a load per switch hop) */
    uint32_t *leaf_port;     /* the leaf's port toward that GPU */
    uint32_t *nh;            /* next-hop sets: [count, port, port, ...] */
    uint32_t *route;         /* [switch * nleaves + leaf]: RS_ROUTE_DIRECT | port when the
                              * set has one port, else its offset in nh; RS_NONE: unreachable.
                              * One flat table and no nh load on single next hops. */
    size_t nh_len;
    uint8_t *leaf_dist;      /* [leaf][switch] hops between switches, 255 = none */
    uint32_t tiers, planes, cables;
    uint8_t *plane_tiers;    /* tiers of each plane, for names */

    const struct rs_backend *be; /* how transfers cross the fabric (backend.h) */
    void *backend_state;         /* the backend's own, when it keeps any (the flow level's) */
    rs_pool pkts;
    rs_pool timers;          /* rs_net_at records */
    rs_pool sacks;           /* selective recovery: 2 x sack_window bits per flow out of order */
    rs_flow *flows;
    uint32_t nflows;         /* records handed out (high-water mark when reused) */
    size_t capflows;
    rs_free_ids flow_free;   /* finished flow records to reuse */
    uint64_t flow_serial;    /* flows created so far */
    rs_msg *msgs;
    uint32_t nmsgs;          /* records handed out (high-water mark); free ones have finished = 1 */
    size_t capmsgs;
    rs_free_ids msg_free;    /* finished message records to reuse */
    rs_net_msg_time *done_times; /* the first msg_times_keep completions (cfg.msg_records) */
    rs_time *done_fct;       /* their completion times, in no order (rs_net_fct_get selects in place) */
    size_t capfct;
    size_t msg_times_keep;   /* RS_NET_MSG_TIMES_KEEP (tests lower it) */
    size_t ndone, capdone;
    struct rs_fct_acc *fct;  /* completion-time statistics (net.c) */

    uint32_t ent_driver;     /* entity for timers scheduled through the API */
    uint32_t ent_port0;      /* entity of port 0; port i is entity ent_port0 + i */
    uint32_t ent_link0;      /* arrivals on port i's link are events of entity ent_link0 + i
                              * (rs_sim_at_once: the receiver's, in a partitioned run) */
    int lookahead;           /* prefetch for the event after next (fabric.c): only
                              * when the ports outgrow a 1 MiB L2 (RS_NET_LOOKAHEAD_BYTES) */
    rs_time rto;
    rs_time flowlet_gap;     /* routing.flowlet_gap_us */
    uint64_t loss_below;     /* topology.loss_rate as a threshold on a 64-bit hash; 0: no loss */
    rs_time cnp_interval, alpha_period, rate_timer;
    double line_bps;         /* NIC line rate, bit/s (DCQCN's maximum) */
    uint64_t ps_per_byte_nic;
    uint32_t cuts_pending;   /* ports with a cut_tail: arrivals check their link (fault.c) */
    uint32_t cap_in;         /* pcapng capture: arrivals at captured ports are written too */
    rs_net_stats st;         /* counters; derived fields filled by rs_net_stats_get */
    rs_time cap_start, cap_end; /* capture window */
    int cap_err;             /* first capture write error */
    rs_pcap *cap_ng;         /* the pcapng file every captured port shares, or NULL */
    uint32_t *cap_if;        /* pcapng: interface id per port (RS_NONE: not captured) */
    struct rs_capwait *cap_wait; /* pcapng: records held back to keep time order (capture.c) */
    /* A split run's pcapng (capture.c): every process writes a part, rank 0
     * merges them into cap_whole; the event its records are keyed in. */
    uint32_t cap_whole_ranks;  /* processes writing parts; 0: not split */
    rs_pcap *cap_whole;
    char *cap_dir;
    int mirroring;             /* making a mirror of another process's send (rs_net_mirror_send) */
    uint32_t flow_home;        /* the home of flows made now (rs_flow.home): RS_NONE but in an own send */
    /* Callbacks named by index between processes (rs_net_cb_register). */
    struct rs_net_cb { rs_net_timer_fn fn; void *ctx; } *cbs;
    uint32_t ncbs, capcbs;
    uint32_t *cbh;             /* open-addressed (fn, ctx) -> index, for rs_net_cb_find */
    uint32_t capcbh, ncbh;     /* slots (a power of two, or 0); slots not empty, tombstones included */
    rs_net_cb_resolve_fn cb_resolve; /* binds a reserved index named before it was set (rs_net_cb_reserve) */
    void *cb_resolve_ctx;
    uint64_t msgs_mine;        /* messages to GPUs of this process (their completions are counted here) */
    /* Timeline (net_timeline.c): NULL unless rs_net_timeline_start; tested only
     * off the per-hop path (PFC frames, drops, flow starts, completions). */
    struct rs_net_tl *tl;
    uint64_t tl_gen;         /* sampler ticks scheduled (tells stale ones apart) */
    uint64_t tl_events;      /* sampler events run */
    uint32_t ent_tl;         /* the sampler's entity, 0 until the first start */
    struct rs_faults *flt;   /* fault.c: NULL unless rs_net_faults_start scheduled faults */
    rs_partition pt;         /* how the run is split over processes (partition.h) */
};

/* The partition's answers and hooks (partition.h), for the packet path. */
static inline int rs_part_owns_node(const rs_net *net, uint32_t node)
{
    return !net->pt.node_rank || net->pt.node_rank[node] == net->pt.rank;
}
static inline uint32_t rs_part_rank(const rs_net *net) { return net->pt.rank; }
static inline uint32_t rs_part_ranks(const rs_net *net) { return net->pt.ranks; }
static inline void rs_part_ship(rs_net *net, rs_pkt *pkt, rs_time t) { net->pt.ops->ship(net, pkt, t); }
static inline void rs_part_packet(rs_net *net, uint32_t f, rs_pkt *pkt)
{
    if (RS_UNLIKELY(net->pt.ops->packet != NULL))
        net->pt.ops->packet(net, f, pkt);
}
/* Packet pkt (returned to its pool, not yet reused) of flow f freed. */
static inline void rs_part_packet_freed(rs_net *net, uint32_t f, const rs_pkt *pkt)
{
    if (RS_UNLIKELY(net->pt.ops->packet != NULL) && pkt->own)
        net->pt.ops->packet(net, f, NULL);
}
static inline void rs_part_flow_started(rs_net *net)
{
    if (RS_UNLIKELY(net->pt.ops->flow_started != NULL))
        net->pt.ops->flow_started(net);
}
static inline int rs_part_flow_settle(rs_net *net, struct rs_flow *f, uint32_t fid)
{
    return RS_UNLIKELY(net->pt.ops->flow_settle != NULL) && net->pt.ops->flow_settle(net, f, fid);
}
static inline size_t rs_part_shipped(const rs_net *net)
{
    return net->pt.ops->shipped ? net->pt.ops->shipped(net) : 0;
}

/* net.c: the receiving side of a shipped send and timer (split.c). The
 * mirror's flow id, or RS_NONE. */
uint32_t rs_net_mirror_send(rs_net *net, const rs_part_send *s);
void rs_net_timer_at_key(rs_net *net, rs_time t, uint64_t key, uint32_t cb, uint64_t arg);
uint32_t rs_net_cb_find(const rs_net *net, rs_net_timer_fn fn, const void *ctx);
void rs_net_msg_reuse(rs_net *net, uint32_t m); /* hand message record m back (part.c) */
/* The timeline's sampler in a split run (net_timeline.c): where a window
 * starting at `start` must end, what this process tells the others at its
 * end (3 values, reduced by minimum), and, given their minimums, the
 * sampler's decision and its next tick (RS_TIME_MAX: none). */
rs_time rs_net_tl_window_cap(const rs_net *net, rs_time start);
void rs_net_tl_window_vals(const rs_net *net, uint64_t v[3]);
rs_time rs_net_tl_window_end(rs_net *net, const uint64_t v[3]);
/* Schedule pkt's arrival at t on its link (pkt->link) as the sender
 * would have (fabric.c). */
void rs_fabric_arrival(rs_net *net, rs_pkt *pkt, rs_time t);

/* Completion-time statistics (net.c "completion-time statistics"; the
 * partitioned run merges them, part.c). */
#define FCT_SUB 10
#define FCT_BUCKETS ((size_t)(65 - FCT_SUB) << FCT_SUB)

struct rs_fct_acc {
    uint64_t n;
    unsigned __int128 sum;
    rs_time min, max;
    uint64_t *hist;          /* NULL until the kept list is full */
};


size_t rs_fct_bucket(rs_time v);

static inline uint32_t rs_port_entity(const rs_net *net, uint32_t port)
{
    return net->ent_port0 + port;
}

static inline uint32_t rs_link_entity(const rs_net *net, uint32_t port)
{
    return net->ent_link0 + port;
}

/* Where Ethernet switch n sends a packet for GPU dst: RS_ROUTE_DIRECT |
 * port when there is one way (down to dst's own leaf port, or a single
 * next hop; RS_NONE: no route), else the offset in net->nh of the
 * equal-cost set (set[0] ports, then the ports). The one route lookup of
 * the packet level (fabric.c: forwarding and its prefetch) and the flow
 * level (a flow's path). */
static inline uint32_t rs_route_entry(const rs_net *net, const rs_node *n, uint32_t dst)
{
    uint32_t li = net->leaf_index_of_gpu[dst];
    if (li == n->leaf_index)
        return net->leaf_port[dst] | RS_ROUTE_DIRECT;
    return net->route[(size_t)n->sw * net->nleaves + li];
}

/* The port of a direct entry (RS_NONE stays RS_NONE). */
static inline uint32_t rs_route_direct(uint32_t e)
{
    return e == RS_NONE ? RS_NONE : e & ~RS_ROUTE_DIRECT;
}

/* The egress port switch n picks for a packet of (src, dst, entropy)
 * under flow ECMP, given its route entry e: the direct port, or the set
 * member the switch's hash of the packet picks. routing.ecmp=flow at packet level, every flow at
 * flow level, and the packet level's ACKs, NAKs and CNPs under adaptive
 * and flowlet routing. */
static inline uint32_t rs_route_hashed_at(const rs_net *net, const rs_node *n, uint32_t e, uint32_t src,
                                          uint32_t dst, uint16_t entropy)
{
    if (e & RS_ROUTE_DIRECT)
        return rs_route_direct(e);
    const uint32_t *set = &net->nh[e];
    uint32_t pick = set[0] > 1 ? rs_ecmp_index(rs_ecmp_hash(net->sw[n->sw].hash_salt, src, dst, entropy), set[0]) : 0;
    return set[1 + pick];
}

/* The same from the lookup: e = rs_route_entry(net, n, dst). */
static inline uint32_t rs_route_hashed(const rs_net *net, const rs_node *n, uint32_t src, uint32_t dst,
                                       uint16_t entropy)
{
    return rs_route_hashed_at(net, n, rs_route_entry(net, n, dst), src, dst, entropy);
}

/* Frames of `bytes` sent as messages of at most `chunk` bytes (a relay's
 * chunks), each cut into frames of at most `mtu`; an empty message is one
 * frame. */
static inline uint64_t rs_chunked_frames(uint64_t bytes, uint64_t chunk, uint64_t mtu)
{
    uint64_t full = bytes / chunk, last = bytes % chunk;
    uint64_t n = full * ((chunk + mtu - 1) / mtu) + (last + mtu - 1) / mtu;
    return n ? n : 1;
}

/* topo.c */
int rs_topo_build(rs_net *net, rs_err *err);
int rs_topo_route(rs_net *net);
void rs_topo_port_name(const rs_net *net, uint32_t port, char *buf, size_t n);

/* fabric.c: ports and switches */
void rs_fabric_enqueue(rs_net *net, rs_port *p, rs_pkt *pkt);
void rs_port_kick(rs_net *net, rs_port *p);
/* Why a packet was dropped (the timeline's drop reasons). */
enum rs_drop_reason {
    RS_DROP_BUFFER = 0, RS_DROP_NO_ROUTE = 1, RS_DROP_LINK_DOWN = 2, RS_DROP_FAILOVER = 3,
    RS_DROP_LOSS = 4 /* topology.loss_rate: corrupted on the wire, dropped by the receiver */
};
/* Drop pkt at egress port p, or NULL for a switch without a route (the
 * timeline then names the port it came in on, pkt->to_port). */
void rs_fabric_drop(rs_net *net, rs_port *p, rs_pkt *pkt, unsigned reason);

/* fabric.c: PFC */
void rs_pfc_receive(rs_net *net, rs_port *p, const rs_pkt *pkt);
void rs_fabric_settle(rs_net *net);

/* capture.c */
void rs_capture_frame(rs_net *net, const rs_port *p, const rs_pkt *pkt, rs_time t);
/* pcapng: pkt's arrival event at net->ports[pkt->to_port] runs at now;
 * if that port is captured, records the frame there as inbound, stamped
 * when its last bit came in. */
void rs_capture_arrival(rs_net *net, const rs_pkt *pkt, rs_time now);
/* A split run: the part file closed once the last window ran. */
void rs_capture_part_close(rs_net *net);

/* transport.c: NIC side */
rs_pkt *rs_nic_pull(rs_net *net, rs_port *p);
void rs_nic_receive(rs_net *net, uint32_t gpu, rs_pkt *pkt);
/* A data or control packet leaves the network (delivered or dropped): back
 * to the pool, and its flow's record too once nothing else refers to it.
 * PFC frames (no flow) go straight back to the pool. */
void rs_pkt_free(rs_net *net, rs_pkt *pkt);
void rs_flow_activate(rs_net *net, uint32_t f);
int rs_flow_new(rs_net *net, uint32_t src, uint32_t dst, uint64_t bytes,
                uint32_t msg, uint32_t chunk, int via_hb, uint32_t *out);
/* The same with the serial given: a relay's chunk flows take serials its
 * message reserved (rs_msg.serial0), so they are the same whichever
 * process creates them, and when. */
int rs_flow_new_serial(rs_net *net, uint32_t src, uint32_t dst, uint64_t bytes,
                       uint32_t msg, uint32_t chunk, int via_hb, uint64_t serial, uint32_t *out);
/* Failover: flow f stops for good. It leaves its port's round robin and
 * sends nothing more; its timers find it done; its packets still in the
 * network are dropped (RS_DROP_FAILOVER) when they reach either end. The
 * record stays valid (pending timers and packets name it). */
void rs_flow_abandon(rs_net *net, uint32_t f);
/* DCQCN reaction point: a new flow's state (line rate, alpha 1); a CNP
 * (alpha decays by (1 - g) per alpha period since rp->alpha_at while
 * limited, then Rt = Rc (when the configuration clamps), Rc = Rc (1 - alpha/2) not below the floor,
 * alpha = (1 - g) alpha + g, stages restart, limited); one rate-increase
 * event (fast recovery, additive or hyper by the stages; back at line
 * rate it is no longer limited), by the timer or the byte counter (its
 * stage counts it). The caller keeps the timers. */
void rs_dcqcn_init(const rs_net *net, rs_dcqcn_rp *rp);
void rs_dcqcn_cut(const rs_net *net, rs_dcqcn_rp *rp, rs_time now);
void rs_dcqcn_increase(const rs_net *net, rs_dcqcn_rp *rp, int by_timer);

/* transport.c: queue a control frame (ACK, NAK, CNP) of flow fid from
 * its receiver back to its sender; flags RS_PF_SACK with sack = the PSN
 * selectively acknowledged. */
void rs_nic_send_ctrl(rs_net *net, uint32_t fid, uint8_t type, uint32_t psn, uint8_t flags, uint32_t sack);
/* transport.c, the receiver: flow fid has every byte (its message hears
 * of it); a duplicate arrived (re-ACK when an ACK is due). Both recoveries
 * share them. */
void rs_nic_rx_complete(rs_net *net, rs_flow *f, uint32_t fid);
void rs_nic_rx_duplicate(rs_net *net, rs_flow *f, uint32_t fid, const rs_pkt *pkt);

/* sack.c: selective repeat (transport.recovery=selective). */
/* Receiver: data packet pkt of reliable flow f (not the expected PSN's
 * in-order fast path of go-back-N). 1 when it belongs to a flow a
 * failover abandoned (the caller drops it). */
int rs_sack_data(rs_net *net, rs_flow *f, uint32_t fid, const rs_pkt *pkt);
/* Sender: an ACK or NAK (with or without SACK) of f. */
void rs_sack_ack(rs_net *net, rs_flow *f, uint32_t fid, const rs_pkt *pkt);
/* Sender: the PSN to send next (a lost one first, then new data within the
 * window), or RS_NONE; rs_sack_sent records that psn went out. */
uint32_t rs_sack_next(rs_flow *f, uint32_t window);
void rs_sack_sent(rs_flow *f, uint32_t psn);
/* Sender: a retransmit timeout: every unacknowledged PSN is lost. */
void rs_sack_timeout(rs_flow *f);
/* Both ends are done with f (or it was abandoned): its bitmaps go back. */
void rs_sack_release(rs_net *net, rs_flow *f);

/* net_timeline.c: timeline records; call only when net->tl != NULL. */
typedef struct rs_net_tl rs_net_tl;
void rs_net_tl_wake(rs_net *net);   /* traffic may start: run the sampler */
void rs_net_tl_touch(rs_net *net, uint32_t port); /* flow level: port's counters moved */
void rs_net_tl_pfc(rs_net *net, uint32_t port, uint8_t xoff, uint8_t xon);
void rs_net_tl_drop(rs_net *net, uint32_t port, const rs_pkt *pkt, unsigned reason);
void rs_net_tl_flow(rs_net *net, const rs_net_msg_time *t);
void rs_net_tl_free(rs_net *net);   /* also fine when net->tl is NULL */

/* net.c: message-level progress */
void rs_msg_flow_done(rs_net *net, uint32_t f);
/* The sender's side of a relay's network-leg chunk (flow f): its last
 * frame has left the NIC (the next chunk may go), and its last ACK has
 * come (its relay slot is free). flow_left also tells a posted message's
 * sender (rs_net_send_posted) that its flow has left. No-ops for any
 * other flow. */
void rs_msg_flow_left(rs_net *net, uint32_t f);
void rs_msg_flow_acked(rs_net *net, uint32_t f);
/* net.c: transport flow records. rs_flow_slot gives a record to fill (a
 * reused one when any was handed back); rs_flow_release hands one back once
 * nothing refers to it: at flow level once its message has been told, at
 * packet level once it is done both ways and no packet or timer of it is
 * left (transport.c flow_settle). */
int rs_flow_slot(rs_net *net, uint32_t *id);
void rs_flow_release(rs_net *net, uint32_t id);
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

/* fault.c; call only when net->flt != NULL, never per packet. */
/* A link-down drop at port p, a no-route drop (p NULL) or a failover drop. */
void rs_fault_note_drop(rs_net *net, const rs_port *p, const rs_pkt *pkt, unsigned reason);
/* Failover by fault entry `fault` abandons flow f of message m: f's
 * faults (and this one) now wait on the message's completion. */
void rs_fault_note_failover(rs_net *net, uint32_t f, uint32_t m, uint32_t fault);
/* Message m, failed over before, completed: its faults may be recovered. */
void rs_fault_note_msg_delivered(rs_net *net, uint32_t m);
/* A frame arrives while net->cuts_pending: 1 if it was on the wire when
 * its cable failed (then it has been dropped, reason link-down). */
int rs_fault_arrival_lost(rs_net *net, rs_pkt *pkt);
void rs_fault_note_timeout(rs_net *net);    /* a retransmit timeout: the watchdog looks */
/* Flow f (hit by a fault: f->hit != RS_NONE) retransmits a data packet,
 * or has delivered all its bytes. */
void rs_fault_note_retx(rs_net *net, const rs_flow *f);
void rs_fault_note_delivered(rs_net *net, const rs_flow *f);
/* A message's network leg goes from GPU a to GPU b: stop now if no path
 * joins them and no repair is scheduled. */
void rs_fault_note_send(rs_net *net, uint32_t a, uint32_t b);
/* Port pid (a switch port) refreshes its PFC pause of the peer. */
void rs_fault_note_pfc_hold(rs_net *net, uint32_t pid);
int rs_fault_reroute_hb(const rs_net *net); /* faults.reroute_hb */
/* Can a partitioned run apply this schedule? 1, or 0 with the reason. */
int rs_fault_splits(const rs_net *net, char *why, size_t n);
void rs_fault_free(rs_net *net);            /* also fine when net->flt is NULL */
/* Is the network leg between the NICs of GPUs a and b usable now? */
int rs_fault_path_ok(const rs_net *net, uint32_t a, uint32_t b);

/* net_timeline.c: a fault or route-change record. */
void rs_net_tl_fault(rs_net *net, const char *target, const char *kind, const char *detail);

#endif
