/*
 * fabric_int.h - the fabric's private layout (models/ only): frames,
 * nodes, ports and their queues, switches and their forwarding state,
 * and the calls of fabric.c (ports, switches, PFC), capture.c and topo.c.
 * netint.h gathers it with flows (flow_int.h) and messages (msg_int.h)
 * into the network.
 *
 * Everything is a dense array indexed by uint32_t ids: nodes (GPUs first,
 * so node id == GPU id for GPUs, then Ethernet switches, then one NVSwitch
 * per HB domain) and ports (each the egress side of one directed link; a
 * cable is two ports pointing at each other). Packets are pooled
 * descriptors.
 */
#ifndef RS_FABRIC_INT_H
#define RS_FABRIC_INT_H

#include <stddef.h>

#include "net.h"
#include "pcap.h"
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
    uint8_t cut;               /* partitioned run: its link ends in another process (split.c) */
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

/* What every process knows of a port: its cable's ends, its kind, rate and
 * latency, and whether it is up; copies of its rs_port's, written where
 * those are (topo.c, fault.c). The ports themselves are their owner's in
 * a split run (the others' pages are given back, ports.c): whatever looks
 * at ports it may not own (a path's latency, a route's usable links, a
 * captured frame's sender) reads these. 40 bytes a port. */
typedef struct rs_link {
    rs_time prop;              /* rs_port.prop */
    uint64_t rate_bps, ps_per_byte;
    uint32_t node, peer_node, peer_port;
    uint8_t kind, up;
} rs_link;

/* A port's end-of-run counters, as a split run's processes send them to
 * rank 0 (split.c): what the summary and rs_net_port_info read of a port
 * rank 0 does not own. 80 bytes. */
typedef struct rs_port_count {
    uint64_t tx_pkts, tx_bytes, max_qbytes, max_ing_bytes, drops;
    uint64_t pfc_sent, pfc_received, paused_ps, ecn_marked, cnp_sent;
} rs_port_count;

static inline void rs_port_count_get(const rs_port *p, rs_port_count *c)
{
    *c = (rs_port_count){ p->tx_pkts,  p->tx_bytes,     p->max_qbytes, p->max_ing_bytes, p->drops,
                          p->pfc_sent, p->pfc_received, p->paused_ps,  p->ecn_marked,    p->cnp_sent };
}

/* Serialisation per byte at rate_bps when it is a whole number of
 * picoseconds, else 0 (rs_ser_time then). */
static inline uint64_t rs_ps_per_byte(uint64_t rate_bps)
{
    return (8 * RS_PS_PER_S) % rate_bps == 0 ? 8 * RS_PS_PER_S / rate_bps : 0;
}

/* Port i's rs_link brought to its rs_port (a process that owns it). */
static inline void rs_link_sync(rs_link *l, const rs_port *p)
{
    l->prop = p->prop;
    l->rate_bps = p->rate_bps;
    l->ps_per_byte = p->ps_per_byte;
    l->node = p->node;
    l->peer_node = p->peer_node;
    l->peer_port = p->peer_port;
    l->kind = p->kind;
    l->up = p->up;
}

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

/* topo.c */
int rs_topo_build(rs_net *net, rs_err *err);
/* nccl.* in range (topo.c; the network's and a job's own): RS_EINVAL naming the key. */
int rs_nccl_config_check(const rs_nccl_config *nc, rs_err *err);
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

/* Schedule pkt's arrival at t on its link (pkt->link) as the sender
 * would have (fabric.c). */
void rs_fabric_arrival(rs_net *net, rs_pkt *pkt, rs_time t);

#endif
