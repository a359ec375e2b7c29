/*
 * net.h - railsim's network: build it from a configuration, send messages
 * between GPUs with a completion callback, schedule callbacks, run.
 *
 * This is the interface collectives and replay use, and the one another
 * simulator can embed. A network owns its simulation clock (rs_sim), its
 * topology (GPUs with NICs, rail/spine switches, NVSwitch HB domains) and
 * everything in flight.
 *
 * GPUs are numbered 0..gpus-1. GPU g sits in HB domain g / hb_size at local
 * rank (and rail) g % hb_size. A message between two GPUs of one HB domain
 * crosses the NVSwitch; otherwise it crosses the Ethernet fabric from the
 * source's NIC. A message between different rails of different domains
 * is forwarded as NCCL's PXN does by default, on both topologies: first
 * over the source's HB domain to the GPU on the destination's rail, then
 * over that rail, pipelined in chunks of transport.relay_chunk_bytes
 * (routing.pxn=off sends it from the source's own NIC on the fat tree).
 */
#ifndef RS_NET_H
#define RS_NET_H

#include "base.h"
#include "sim.h"
#include "tally.h"
#include "timeline.h"

RS_BEGIN_DECLS

typedef enum { RS_TOPO_FAT_TREE = 0, RS_TOPO_RAIL_ONLY = 1, RS_TOPO_DRAGONFLY = 2 } rs_topo_kind;
typedef enum { RS_TRANSPORT_ROCE = 0, RS_TRANSPORT_IDEAL = 1 } rs_transport_kind;
/* How a switch picks among equal-cost next hops (docs/model.md,
 * "Forwarding"): flow = hash of the 5-tuple (one path per message);
 * packet = uniform draw per packet (spraying); adaptive = per packet, the
 * port with the fewest queued bytes, ties by the flow hash (Spectrum-X,
 * Slingshot, htsim's adaptive modes); flowlet = the same choice once per
 * flowlet, kept while the flow's packets come within routing.flowlet_gap_us
 * of each other (Broadcom/Juniper DLB flowlet mode). */
typedef enum { RS_ECMP_FLOW = 0, RS_ECMP_PACKET = 1, RS_ECMP_ADAPTIVE = 2, RS_ECMP_FLOWLET = 3 } rs_ecmp_mode;
/* Rail-aware forwarding (NCCL's PXN) of messages between different rails
 * of different HB domains: first over the source's HB domain to the GPU on
 * the destination's rail, then over that rail. auto = NCCL's default
 * (NCCL_P2P_PXN_LEVEL=2, NCCL_PXN_DISABLE=0) on both topologies; on = the
 * same; off = NCCL_PXN_DISABLE=1: the fat tree sends from the source's own
 * NIC across the spine, rail-only cannot carry such messages. */
typedef enum { RS_PXN_AUTO = 0, RS_PXN_ON = 1, RS_PXN_OFF = 2 } rs_pxn_mode;

/* routing.dragonfly (docs/model.md, "Dragonfly"): ugal = each network
 * flow takes the minimal path or a Valiant detour through a random
 * intermediate switch, whichever its source switch sees as less loaded
 * (UGAL-L, Kim et al. ISCA 2008; Slingshot routes adaptively by
 * default); minimal = the minimal paths only. */
typedef enum { RS_DFLY_UGAL = 0, RS_DFLY_MINIMAL = 1 } rs_dfly_routing;
/* topology.df_attach: where an HB domain's NICs meet a dragonfly's switches. */
typedef enum { RS_DFLY_PACKED = 0, RS_DFLY_SPREAD = 1 } rs_dfly_attach;

typedef enum { RS_CC_DCQCN = 0, RS_CC_NONE = 1 } rs_cc_kind;

/* Loss recovery of the RoCE transport (docs/model.md, "Transport"):
 * go-back-n = the RC responder takes only the expected PSN and NAKs a gap,
 * the requester resends everything from it (IB spec; NICs without
 * out-of-order placement); selective = the responder places out-of-order
 * PSNs into a bitmap window and answers each with a NAK carrying the PSN
 * that arrived (a SACK), the requester resends only what is missing (IRN,
 * Mittal et al. SIGCOMM 2018; NICs with out-of-order placement). */
typedef enum { RS_RECOVERY_GBN = 0, RS_RECOVERY_SELECTIVE = 1 } rs_recovery_kind;

/* How the network is simulated (docs/fidelity.md). packet: every frame,
 * queue, PFC pause, ECN mark and ACK. flow: the same topology, routes
 * (same ECMP hash per flow), HB domain and PXN relay, but each transfer is
 * a flow at its max-min fair share of the links it crosses, plus a
 * fixed per-flow latency; events only at flow starts and finishes, so far
 * faster. The interface behaves the same; in flow mode the packet
 * counters of rs_net_stats and rs_net_port_info are estimates (the data
 * frames the packet level would send, counted when a flow's last byte has
 * left the network; no ACK, CNP or PFC frames, no queues, drops or marks). */
typedef enum {
    RS_FIDELITY_PACKET = 0,
    RS_FIDELITY_FLOW = 1
} rs_fidelity;

/* Where the DCQCN constants come from (docs/model.md, "DCQCN"):
 * connectx = what NVIDIA ConnectX-6 Dx/ConnectX-7/BlueField-3 firmware
 * ships with (the default); paper-2015 = Zhu et al.'s constants, R_AI
 * scaled to 400 Gb/s as railsim used them before. */
/* The collective library the GPUs run (NCCL), which the network carries
 * for the collectives above it and does not read itself: how every
 * collective on the network is costed and which algorithm and protocol
 * it takes (docs/collectives.md, "NCCL's protocols and tuner"). Scenario
 * keys nccl.* and system.gpu. Plain value type, nested in rs_net_config
 * (frozen there: new settings go at the end of rs_net_config). */
typedef enum {
    RS_NCCL_IDEAL = 0, /* nccl.model=ideal: bandwidth-perfect steps, no protocol or software cost */
    RS_NCCL_NCCL = 1   /* nccl.model=nccl: NCCL's protocols, latencies and tuner */
} rs_nccl_model;
typedef enum { RS_PROTO_AUTO = 0, RS_PROTO_SIMPLE, RS_PROTO_LL, RS_PROTO_LL128 } rs_nccl_proto;
#define RS_NCCL_NPROTOS 4
typedef enum { RS_NVLS_AUTO = 0, RS_NVLS_ON, RS_NVLS_OFF } rs_nvls_mode;
/* nccl.algo: the algorithms NCCL_ALGO may name that railsim runs. */
typedef enum { RS_NCCL_ALGO_AUTO = 0, RS_NCCL_ALGO_RING, RS_NCCL_ALGO_TREE, RS_NCCL_ALGO_NVLS } rs_nccl_algo;
#define RS_NCCL_NALGOS 4
/* GPUs whose generation sets NCCL's constants (src/graph/tuning.cc is
 * indexed by Volta, Ampere, Hopper, Blackwell). An MI250X GCD (AMD,
 * RCCL) takes NCCL's Ampere rows and its AMD host's (docs/systems.md,
 * "frontier"): RCCL's own tuning is not ported. */
typedef enum {
    RS_GPU_V100 = 0, RS_GPU_A100, RS_GPU_H100, RS_GPU_H200, RS_GPU_B200, RS_GPU_GB200, RS_GPU_MI250X_GCD
} rs_gpu_model;
typedef struct rs_nccl_config {
    int model;         /* rs_nccl_model: nccl.model */
    int proto;         /* rs_nccl_proto: nccl.protocol (NCCL_PROTO); auto: NCCL's tuner picks */
    int algo;          /* rs_nccl_algo: nccl.algo (NCCL_ALGO) */
    int nvls;          /* rs_nvls_mode: nccl.nvls (NCCL_NVLS_ENABLE); auto: on where the GPUs have NVLink SHARP */
    uint32_t channels; /* nccl.channels (NCCL_MIN/MAX_NCHANNELS); 0: railsim's rule (coll.h) */
    int gpu;           /* rs_gpu_model: system.gpu */
} rs_nccl_config;

typedef enum { RS_DCQCN_CONNECTX = 0, RS_DCQCN_PAPER_2015 = 1 } rs_dcqcn_profile;

/* DCQCN (Zhu et al., SIGCOMM 2015) parameters; defaults in
 * rs_net_config_default, documented in docs/scenario-format.md. Frozen:
 * part of rs_net_config's first version (docs/library.md, "Versioned
 * structs"), so a new DCQCN key goes at the end of rs_net_config. */
typedef struct rs_dcqcn_config {
    rs_dcqcn_profile profile; /* the constants below start from this profile */
    double g;                 /* alpha gain */
    double alpha_period_us;   /* K: alpha decays when no CNP came for this long */
    double cnp_interval_us;   /* notification point: at most one CNP per QP per interval */
    double rate_timer_us;     /* T: rate-increase timer */
    uint64_t byte_counter;    /* B: rate-increase byte counter */
    uint32_t fast_recovery;   /* F: increase events of fast recovery */
    double rai_mbps;          /* additive increase step */
    double rhai_mbps;         /* hyper increase step */
    double min_rate_mbps;     /* floor of the current rate */
    int clamp_target;         /* a CNP sets Rt = Rc (the paper; NVIDIA clamp_tgt_rate) */
    int clamp_after_timer;    /* ... or only when the last increase was the timer's
                               * (NVIDIA clamp_tgt_rate_after_time_inc) */
} rs_dcqcn_config;

/* Every constant of *d from profile p (d->profile = p). */
RS_API void rs_dcqcn_profile_set(rs_dcqcn_config *d, rs_dcqcn_profile p);

/* Every field but size is a scenario key (docs/scenario-format.md names
 * them); the defaults come from rs_net_config_default. A plain value type
 * that grows with new keys: it starts with its size, and the library
 * reads only that many bytes (docs/library.md, "Versioned structs"). */
typedef struct rs_net_config {
    uint32_t size;               /* sizeof(rs_net_config) where the caller was compiled */
    uint64_t seed;
    rs_topo_kind kind;           /* topology.kind */
    uint32_t gpus;               /* topology.gpus */
    uint32_t hb_size;            /* topology.hb_size: GPUs per HB domain (= rails) */
    uint32_t radix;              /* topology.radix: ports per Ethernet switch */
    double nic_gbps;             /* topology.nic_gbps: GPU NIC <-> leaf links */
    double link_gbps;            /* topology.link_gbps: switch <-> switch links */
    double hb_gbps;              /* topology.hb_gbps: per GPU per direction in the HB domain */
    double oversubscription;     /* topology.oversubscription: leaf down:up ratio (1 = full bisection) */
    double link_latency_ns;      /* topology.link_latency_ns: propagation per Ethernet link */
    double switch_latency_ns;    /* topology.switch_latency_ns: pipeline latency per switch */
    double hb_latency_ns;        /* topology.hb_latency_ns: GPU -> NVSwitch -> GPU, each way half */
    uint32_t mtu;                /* topology.mtu: RoCE payload bytes per packet */
    uint32_t hb_mtu;             /* topology.hb_mtu: bytes per HB transfer unit */
    uint64_t buffer_bytes;       /* topology.buffer_bytes: per switch egress port */
    double loss_rate;            /* topology.loss_rate: chance that a frame on an Ethernet link is corrupted */
    rs_transport_kind transport; /* transport.kind */
    uint32_t ack_every;          /* transport.ack_every: coalesce one ACK per N packets */
    double rto_us;               /* transport.rto_us: retransmit timeout */
    uint64_t relay_chunk_bytes;  /* transport.relay_chunk_bytes: PXN pipeline chunk */
    int relay_pipeline;          /* flow level: relays as their chunk pipeline, not one flow (railsim
                                  * sets it for runs with faults and their baselines; default 0) */
    int msg_records;             /* 1 (default): rs_net_msg_times keeps the first RS_NET_MSG_TIMES_KEEP
                                  * messages' records (40 bytes each with their time); 0: only their
                                  * completion times (8 bytes each), for rs_net_fct_get (the command) */
    uint32_t prio;               /* transport.priority: 802.1p priority of RoCE traffic */
    rs_recovery_kind recovery;   /* transport.recovery */
    uint32_t sack_window;        /* transport.sack_window: selective: PSNs in flight per QP (a power of 2) */
    uint32_t dupthresh;          /* transport.dupthresh: selective: a hole is lost once this many later PSNs arrived */
    rs_ecmp_mode ecmp;           /* routing.ecmp */
    double flowlet_gap_us;       /* routing.flowlet_gap_us: idle gap that starts a new flowlet */
    rs_pxn_mode pxn;             /* routing.pxn */

    /* Lossless Ethernet (IEEE 802.1Qbb): the RoCE priority is lossless. */
    int pfc;                     /* pfc.enabled */
    uint64_t pfc_xoff_bytes;     /* pfc.xoff_bytes: per ingress port and priority */
    uint64_t pfc_xon_bytes;      /* pfc.xon_bytes */
    /* RED-style ECN marking at switch egress, per priority. */
    int ecn;                     /* ecn.enabled */
    uint64_t ecn_kmin_bytes;     /* ecn.kmin_bytes */
    uint64_t ecn_kmax_bytes;     /* ecn.kmax_bytes */
    double ecn_pmax;             /* ecn.pmax */
    /* Congestion control at the NIC. */
    rs_cc_kind cc;               /* transport.cc */
    rs_dcqcn_config dcqcn;       /* transport.dcqcn.* */
    rs_fidelity fidelity;        /* fidelity: packet (default) or flow */
    rs_nccl_config nccl;         /* nccl.*, system.gpu: what the GPUs' collective library does (added after
                                    the first version: a caller that predates it gets its defaults) */
    /* topology.kind=dragonfly (docs/model.md, "Dragonfly"): NIC ports per
     * switch (p) and switches per group (a), 0 = the balanced dragonfly of
     * the radix R: p = R/4, a = 2p; each switch has R - p - (a - 1) global
     * links. */
    uint32_t df_hosts;           /* topology.df_hosts */
    uint32_t df_group;           /* topology.df_group */
    /* topology.gpus_per_nic (s, dividing hb_size; 0 counts as 1): the
     * GPUs of an HB domain share its NICs in groups of s, local GPUs
     * k*s .. k*s+s-1 the NIC of GPU k*s (Frontier: 2 GCDs of an MI250X
     * per Slingshot NIC). The domain has hb_size / s NICs, so as many
     * rails; GPU g is on rail (g mod hb_size) / s. */
    uint32_t gpus_per_nic;
    rs_dfly_routing dfly_routing; /* routing.dragonfly */
    /* topology.df_attach: packed (default) puts NIC n on switch n / p, so
     * a domain's NICs share a switch; spread gives each of a domain's k
     * NICs its own switch, as HPE Cray EX cabinets do (a chassis's 16
     * nodes, 4 NICs each, on its 4 switches): blocks of k switches, NIC r
     * of the block's p domains on its switch r. */
    rs_dfly_attach df_attach;
} rs_net_config;

/* *c (its first `size` bytes) with every key at its default, and its size. */
RS_API void rs_net_config_init(rs_net_config *c, size_t size);
/* rs_net_config_init with the caller's size: every key at its default. */
static inline void rs_net_config_default(rs_net_config *c)
{
    rs_net_config_init(c, sizeof *c);
}

/* How a message between different rails of different HB domains travels
 * on a network of configuration *c (routing.pxn resolved for c->kind), by
 * the rule rs_net_send applies; with faults a detour through another live
 * rail is still an HB relay. */
typedef enum {
    RS_XRAIL_NONE = 0, /* topology.hb_size 1: one rail, nothing crosses rails */
    RS_XRAIL_PXN,      /* over the source's HB domain to the GPU on the destination's rail, then that rail */
    RS_XRAIL_DIRECT,   /* from the source's own NIC across the spine (fat tree, routing.pxn=off) */
    RS_XRAIL_REFUSED   /* rail-only, routing.pxn=off: no path (rs_net_send: RS_EUNREACH) */
} rs_xrail;
RS_API rs_xrail rs_net_cross_rail(const rs_net_config *c);
/* "pxn", "direct", "refused", "none"; "?" for a bad value. */
RS_API const char *rs_xrail_name(rs_xrail x);

typedef struct rs_net rs_net;

/* Memory a network of configuration *c would take to build, plus `messages`
 * messages over a run of which `at_once` are in the network together (a
 * message and its transport flow record live while it is in flight, then
 * are reused; only the first RS_NET_MSG_TIMES_KEEP completion times are
 * kept), in bytes, from the same closed-form counts as the cost model; no
 * network is built. For refusing runs that cannot fit before they start.
 * RS_EINVAL with err naming the key for a configuration rs_net_create
 * would refuse. */
RS_API int rs_net_estimate_bytes(const rs_net_config *c, uint64_t messages, uint64_t at_once, uint64_t *bytes,
                                 rs_err *err);

/* Build the network described by *c (copied). On bad configuration returns
 * RS_EINVAL / RS_ERANGE with err naming the scenario key; RS_ENOMEM.
 * *out is owned by the caller: rs_net_destroy. */
RS_API int rs_net_create(const rs_net_config *c, rs_net **out, rs_err *err);
RS_API void rs_net_destroy(rs_net *net); /* NULL is a no-op */

RS_API rs_sim *rs_net_sim(rs_net *net);
/* The collective library's settings the network was configured with
 * (rs_net_config.nccl), for the collectives that run on it. */
RS_API const rs_nccl_config *rs_net_nccl(const rs_net *net);
/* The nccl.* of the collectives and sends of GPU gpu: its job's own
 * (rs_net_set_job_nccl), else the network's. */
RS_API const rs_nccl_config *rs_net_nccl_of(const rs_net *net, uint32_t gpu);
/* How the network is simulated (the configuration's fidelity). */
RS_API rs_fidelity rs_net_fidelity(const rs_net *net);
/* 1 when the network carries a steady stream of pieces between two GPUs
 * as one transfer at no cost in accuracy (the flow level): a collective
 * may then send a long pipeline of pieces as one stream per rank and
 * channel; 0 when every piece is a transfer of its own (packet level). */
RS_API int rs_net_streams(const rs_net *net);
/* How long a lone message of `bytes` from GPU a to GPU b takes on an idle
 * network, on the present routes and at the ports' present rates: *ser = its wire bytes' serialisation on the
 * slowest port of its path, *lat = the rest (propagation, switch
 * pipelines, store-and-forward of its largest frame; a PXN relay's HB leg
 * whole). For a collective deciding how to pace a stream of pieces
 * (coll_ring.c). RS_EINVAL (a == b, no such GPU), RS_EUNREACH. */
RS_API int rs_net_hop_estimate(const rs_net *net, uint32_t a, uint32_t b, uint64_t bytes, rs_time *ser,
                               rs_time *lat);
/* rs_net_hop_estimate at the rates the links had when the run started,
 * link degrades scheduled after it left out: what NCCL's topology
 * detection saw when it created its communicators, so what its tuner and
 * per-hop latencies rest on. Every process of a split run gets the same
 * answer whenever it asks (a collective is built at different times in
 * different processes). */
RS_API int rs_net_hop_as_built(const rs_net *net, uint32_t a, uint32_t b, uint64_t bytes, rs_time *ser,
                               rs_time *lat);
/* How many times a degrade or restore has changed a cable's rate so far:
 * a collective that keeps times computed from the present rates (a
 * credit's way back) computes them again when this moved. */
RS_API uint64_t rs_net_rate_changes(const rs_net *net);

/* What a network of configuration c will be like to the layers above,
 * before it is built (estimates, the resource guard): the backend's
 * traits, whichever backend fidelity picks. */
typedef struct rs_net_traits {
    int packets;      /* frames are simulated: events grow with the bytes (packet level), else with the transfers */
    int streams;      /* rs_net_streams */
    int whole_relays; /* a relayed (PXN) message can be one transfer over both legs, not a pipeline of
                         chunks (relay_pipeline asks for the pipeline all the same) */
} rs_net_traits;
/* RS_EINVAL for a fidelity no backend simulates. */
RS_API int rs_net_config_traits(const rs_net_config *c, rs_net_traits *out);
/* The network's simulated time now, in ps. */
RS_API rs_time rs_net_now(const rs_net *net);
RS_API uint32_t rs_net_gpus(const rs_net *net);

/* Called when a message has fully arrived at its destination GPU. */
typedef void (*rs_net_done_fn)(void *ctx, rs_net *net, uint64_t tag);
/* Called at a scheduled time. */
typedef void (*rs_net_timer_fn)(void *ctx, rs_net *net, uint64_t arg);

/* A message to send (rs_net_send). Initialise one with rs_net_msg_init,
 * then set what differs from its defaults: the library reads the first
 * `size` bytes, so a caller compiled against this header keeps working
 * when a later library adds fields (they take their defaults). */
typedef struct rs_net_msg {
    uint32_t size;       /* sizeof(rs_net_msg) where the caller was compiled (rs_net_msg_init) */
    uint32_t src, dst;   /* GPUs: from src's NIC or HB port to dst */
    uint64_t bytes;      /* payload; 0 allowed: one empty packet */
    /* Runs when the last byte has arrived at dst: from a network event of
     * its own, so it may send again. NULL: not told. */
    rs_net_done_fn done;
    /* Runs once the message has left its source, before done: when the
     * source's port (NIC, or HB port inside a domain) starts its last
     * frame for the first time at packet level, when its last byte has
     * gone into the fluid at flow level; a relayed (PXN) or failed-over
     * message (a chunk pipeline) when its last chunk's last frame leaves
     * the NIC it crosses the network from (a failover that drains
     * without a chunk left to send: when it completes). A sender that posts its
     * next message from `left` sends back to back, as a QP runs its work
     * requests in order. NULL: not told. */
    rs_net_done_fn left;
    void *ctx;           /* done's and left's first argument; borrowed until done runs */
    uint64_t tag;        /* done's and left's last argument */
    /* The payload is counted into *tally (tally.h) on every GPU-side port
     * it crosses, as its transfers start: the network leg on the sending
     * GPU's NIC_TX and the receiving GPU's NIC_RX (for a PXN relay, the
     * relay GPU's), each HB crossing on HB_TX and HB_RX (a relay's source
     * leg, a failover's detour, a message inside one HB domain). A
     * failover's restart counts the bytes it sends again; retransmissions
     * are not counted (the same payload). Borrowed until done runs. NULL:
     * not counted. */
    rs_tally *tally;
    /* The serial of its flow (its entropy, its captured QPN): a collective
     * names its transfers from a block it reserved (partition.h,
     * rs_net_serials_reserve), so the serial does not depend on the order
     * in which transfers are made, which a run split over processes cannot
     * know. RS_NET_SERIAL_NEXT: the next in creation order. */
    uint64_t serial;
    /* 1: raw RDMA, as perftest's ib_write_bw sends: from the source's own
     * NIC to the destination's, forwarded through an HB domain only where
     * no network path joins the two (rail-only, different rails), whatever
     * routing.pxn says. 0 (rs_net_msg_init): NCCL's forwarding, PXN unless
     * routing.pxn=off. */
    uint32_t verbs;
} rs_net_msg;

#define RS_NET_SERIAL_NEXT UINT64_MAX

/* *m with its size, no callbacks, no tally, the next serial; src, dst and
 * bytes 0. Inline so that `size` is the caller's. */
static inline void rs_net_msg_init(rs_net_msg *m)
{
    m->size = (uint32_t)sizeof *m;
    m->src = m->dst = 0;
    m->bytes = 0;
    m->done = m->left = NULL;
    m->ctx = NULL;
    m->tag = 0;
    m->tally = NULL;
    m->serial = RS_NET_SERIAL_NEXT;
    m->verbs = 0;
}

/* Send *m, starting now (m is only read during the call). A message
 * between different rails of different HB domains goes by a PXN relay
 * unless routing.pxn=off (see the top of this file); src == dst completes
 * at once (after no network time). RS_EINVAL for a GPU out of range or a
 * size smaller than the first version of rs_net_msg, RS_EUNREACH between
 * rails of a rail-only network with routing.pxn=off, RS_ENOMEM. */
RS_API int rs_net_send(rs_net *net, const rs_net_msg *m);

/* The network-only lower bound of the transfers counted in t, in ps: the
 * largest over GPU-side ports of its bytes over the port's payload rate,
 * rounded up. Payload rates are the nominal line rates times the payload
 * share of a full frame: topology.nic_gbps x mtu / (mtu + 82) for NIC
 * ports (82 bytes of Ethernet, IPv4, UDP, BTH, ICRC, FCS, preamble and
 * gap around a RoCEv2 payload: 400 Gb/s and 4096 bytes give 392.15
 * Gb/s), topology.hb_gbps x hb_mtu / (hb_mtu + 16) for HB ports. Link
 * degradations are not taken into account. */
RS_API rs_time rs_net_tally_bound(const rs_net *net, const rs_tally *t);

/* Run fn(ctx, net, arg) at absolute time t >= now, as an event of the
 * workload's driver (shared by every process of a partitioned run). */
RS_API void rs_net_at(rs_net *net, rs_time t, rs_net_timer_fn fn, void *ctx, uint64_t arg);

/* The same as an event of GPU `gpu`'s node: what that GPU does by itself
 * (a reduction that ends, a credit it gives, a compute that ends). Its
 * place among equal-time events is then the GPU's own, which a run split
 * over processes can give it where the GPU is (docs/parallel.md). A GPU
 * out of range stops the run with RS_EINTERNAL. */
RS_API void rs_net_at_gpu(rs_net *net, uint32_t gpu, rs_time t, rs_net_timer_fn fn, void *ctx, uint64_t arg);
/* The same keyed by GPU `giver` (the one whose event schedules it: its
 * place among equal-time events is the giver's), run where GPU `target`
 * is: a credit a receiver gives its sender. In a partitioned run a
 * target in another process gets it there, the callback named by
 * rs_net_cb_register (registered alike in every process) and t at least a
 * lookahead ahead (a path latency between the two); else the run stops
 * with RS_EINTERNAL. */
RS_API void rs_net_at_gpu_for(rs_net *net, uint32_t giver, uint32_t target, rs_time t, rs_net_timer_fn fn,
                              void *ctx, uint64_t arg);
/* 1 when a message from GPU src to dst goes by a PXN relay (through src's
 * HB domain onto dst's rail: different domains and rails, routing.pxn
 * not off, and on a fat tree a relay GPU the job holds; on rail-only
 * also the destination domain's forwarding, rs_net_set_members), which
 * fault rerouting aside is decided by the GPUs alone. */
RS_API int rs_net_relayed(const rs_net *net, uint32_t src, uint32_t dst);
/* The GPUs the job holds (n of them): NCCL relays by PXN only through
 * its own GPUs, so where the relay GPU is not the job's a fat tree sends
 * from the source's NIC, and rail-only forwards through the destination
 * domain's GPU on the source's rail (the job's, else the source side's
 * anyway). Until called every GPU is the job's. RS_EINVAL for a GPU
 * outside the network, RS_ENOMEM; the list is copied. */
RS_API int rs_net_set_members(rs_net *net, const uint32_t *gpus, uint32_t n, rs_err *err);
/* Several jobs on one network (docs/shared-clusters.md): the GPUs of job
 * `job` (1 .. RS_NET_JOBS_MAX), added to those set before; a message
 * relays by PXN only through a GPU of its source's job. RS_EINVAL for a
 * GPU outside the network or already another job's, RS_ENOMEM. */
#define RS_NET_JOBS_MAX 255u
RS_API int rs_net_set_job(rs_net *net, uint32_t job, const uint32_t *gpus, uint32_t n, rs_err *err);
/* The GPUs are no job's any more (a job that ended: a scheduler gives
 * them to the next); GPUs out of range are ignored. */
RS_API void rs_net_clear_job(rs_net *net, const uint32_t *gpus, uint32_t n);
/* From now on count, per port and job 1 .. njobs, the data bytes (wire
 * bytes of data frames, at flow level the frames the fluid estimates)
 * each port sends for messages whose source GPU is the job's; a relay's
 * legs count for its message's job. rs_net_job_tx_bytes reads them (0
 * when not counted). RS_EINVAL before any rs_net_set_job or called
 * twice, RS_ENOMEM. */
RS_API int rs_net_jobs_count(rs_net *net, uint32_t njobs, rs_err *err);
/* Give each job its own space of flow serials (entropy, ECMP hashes,
 * QPNs), job j's from j << RS_NET_JOB_SERIAL_SHIFT: serials reserved
 * (rs_net_serials_reserve) after rs_net_set_job(j) and flows sent from
 * job j's GPUs then draw from it, so a job's flows take the same paths
 * with other jobs beside it as alone. Call before any flow exists.
 * RS_EINVAL (called twice, or late), RS_ENOMEM. */
#define RS_NET_JOB_SERIAL_SHIFT 40
/* Job `job`'s own routing.pxn: its messages relay by PXN or not as pxn
 * says, whatever the network's routing.pxn. RS_EINVAL, RS_ENOMEM. */
RS_API int rs_net_set_job_pxn(rs_net *net, uint32_t job, rs_pxn_mode pxn, rs_err *err);
/* Job `job`'s own traffic class: the data, ACKs and NAKs of messages from
 * its GPUs go at 802.1p priority prio (0-7; its own switch queues, PFC
 * and ECN state per priority), whatever transport.priority says; CNPs
 * keep theirs. With PFC on, every priority that carries RoCE data is
 * lossless. Switches serve priorities strictly, highest first; a NIC
 * serves its flows round-robin, skipping those of a paused priority.
 * Flows created before the call keep their priority. RS_EINVAL,
 * RS_ENOMEM. */
RS_API int rs_net_set_job_priority(rs_net *net, uint32_t job, uint32_t prio, rs_err *err);
/* Job `job`'s own nccl.* (model, protocol, algo, nvls, channels; the GPU
 * stays the network's system.gpu): collectives whose first rank is the
 * job's, and its GPUs' sends, follow it (rs_net_nccl_of). Copied;
 * checked as the network's; RS_EINVAL, RS_ENOMEM. */
RS_API int rs_net_set_job_nccl(rs_net *net, uint32_t job, const rs_nccl_config *nc, rs_err *err);
RS_API int rs_net_jobs_serials(rs_net *net, rs_err *err);
RS_API uint64_t rs_net_job_tx_bytes(const rs_net *net, uint32_t port, uint32_t job);
/* Messages sent so far between different rails that left through an HB
 * domain at their start: PXN, a verbs message on rail-only, or one that
 * faults already rerouted through the HB domains when it was sent. A
 * failover of a message in flight is not counted. */
RS_API uint64_t rs_net_msgs_relayed(const rs_net *net);
/* Run until time `until` (RS_TIME_MAX: until nothing is left to do).
 * RS_OK, or RS_ENOMEM / RS_EINTERNAL from the run. */
RS_API int rs_net_run(rs_net *net, rs_time until);

/* Topology facts. */
typedef struct rs_net_topo_info {
    uint32_t size; /* sizeof(rs_net_topo_info) where the caller was compiled (docs/library.md, "Versioned structs") */
    uint32_t switches;   /* Ethernet switches as built and simulated (rail-only: every
                            rail its own, even a rail of a few GPUs) */
    uint32_t switches_physical; /* switches to buy: rail-only rails of one switch that fit
                            several to a switch share one (rs_cost_rails_per_switch,
                            docs/cost.md "Rail packing"); else = switches. What
                            railsim run, compare and cost report as "switches" */
    uint32_t links;      /* Ethernet cables (each two directed links), NIC cables included */
    uint32_t tiers;      /* Ethernet switch tiers (max over planes) */
    uint32_t planes;     /* 1 for fat-tree, the rails for rail-only */
    uint32_t hb_domains;
    uint32_t nics;       /* GPU NICs: gpus / topology.gpus_per_nic (added after the first version) */
} rs_net_topo_info;
RS_API void rs_net_topo_info_fill(const rs_net *net, rs_net_topo_info *out, size_t size);
static inline void rs_net_topo_info_get(const rs_net *net, rs_net_topo_info *out)
{
    rs_net_topo_info_fill(net, out, sizeof *out);
}

/* Number of Ethernet links on the shortest network path from the NIC of
 * GPU a to the NIC of GPU b, or -1 if no network path joins them (e.g.
 * different rails on rail-only). Same GPU: 0. */
RS_API int rs_net_path_links(const rs_net *net, uint32_t a, uint32_t b);

/* Totals since creation. */
typedef struct rs_net_stats {
    uint32_t size; /* sizeof(rs_net_stats) where the caller was compiled (docs/library.md, "Versioned structs") */
    uint64_t msgs, msgs_done, msg_bytes;
    uint64_t pkts_sent;        /* packets put on a first link by an endpoint, ACK/NAK included */
    uint64_t pkts_delivered;   /* packets that reached their destination endpoint */
    uint64_t pkts_dropped;     /* packets dropped anywhere */
    uint64_t pkts_retransmitted; /* data packets sent again */
    uint64_t data_pkts, ctrl_pkts; /* of pkts_sent: data, ACK/NAK */
    uint64_t timeouts, naks;
    uint64_t packet_hops;      /* packets that crossed one link, all kinds */
    uint64_t hb_bytes;         /* payload bytes that crossed an HB domain */
    uint64_t nic_bytes;        /* payload bytes that left a NIC onto the fabric */
    uint64_t max_queue_bytes;  /* deepest switch egress queue seen */
    uint64_t pkts_in_flight;   /* packets alive now (0 after a clean run) */
    uint64_t pfc_pauses_sent;  /* PFC frames that paused a priority (XOFF) */
    uint64_t pfc_resumes_sent; /* PFC frames that resumed one (XON) */
    uint64_t pfc_paused_ps;    /* sum over ports of the time a priority was paused */
    uint64_t ecn_marked;       /* packets marked CE by switches */
    uint64_t cnps_sent;        /* CNPs sent by receivers (DCQCN notification points) */
    uint64_t cnps_received;    /* CNPs that reached a sender */
    uint64_t goodput_bytes;    /* payload accepted in order at the receiving end of each
                                  transfer, each byte once (a relayed byte counts at the
                                  relay GPU and at the destination) */
    rs_time last_activity;     /* last packet arrival or message completion */
} rs_net_stats;
RS_API void rs_net_stats_fill(const rs_net *net, rs_net_stats *out, size_t size);
static inline void rs_net_stats_get(const rs_net *net, rs_net_stats *out)
{
    rs_net_stats_fill(net, out, sizeof *out);
}

/* Ports. Every directed link has an egress port at its sender, named
 * (docs/model.md): "gpu12.nic", "gpu12.hb" (a GPU's NIC and NVLink ports),
 * "leaf3.p5", "spine0.p17", "agg7.p2", "core1.p0" (fat tree; a plane of two
 * tiers has leaves and spines, of three leaves, aggregation and core, of
 * more leaves, "agg2-N", "agg3-N", ... and core: "agg3-12.p4"),
 * "rail2-leaf0.p4" (rail-only: the plane of rail 2), "nvs1.p3" (the
 * NVSwitch of HB domain 1, port facing its local GPU 3). */
typedef struct rs_net_port_info {
    uint32_t size; /* sizeof(rs_net_port_info) where the caller was compiled (docs/library.md, "Versioned structs") */
    char name[48];
    char peer[48];              /* the port at the other end of the cable */
    uint64_t tx_pkts, tx_bytes;  /* frames and wire bytes sent */
    uint64_t drops;              /* frames dropped at this port */
    uint64_t max_queue_bytes;    /* deepest egress queue */
    uint64_t max_ingress_bytes;  /* most bytes buffered from this port's peer (PFC accounting) */
    uint64_t pfc_sent, pfc_received; /* PFC frames sent to / received from the peer */
    uint64_t paused_ps;          /* time some priority of this port was paused */
    uint64_t ecn_marked;         /* packets marked CE joining this port's queues */
    uint64_t cnp_sent;           /* CNPs this port transmitted */
    uint64_t rate_bps;           /* its line rate now (a degrade lowers it while it lasts) */
} rs_net_port_info;
RS_API uint32_t rs_net_port_count(const rs_net *net);
/* RS_EINVAL if port >= rs_net_port_count. */
RS_API int rs_net_port_info_fill(const rs_net *net, uint32_t port, rs_net_port_info *out, size_t size);
static inline int rs_net_port_info_get(const rs_net *net, uint32_t port, rs_net_port_info *out)
{
    return rs_net_port_info_fill(net, port, out, sizeof *out);
}

/* Packet capture (docs/pcap.md). Capture only reads: it never changes a
 * result.
 *   pcap (default): a captured port writes every frame it transmits to
 *     DIR/<port name>.pcap, timestamped when the frame's first bit leaves
 *     the port.
 *   pcapng: one file, DIR/capture.pcapng, with one interface per captured
 *     port; on it, the frames the port transmits (outbound, first bit
 *     leaving) and the frames that arrive at it over its cable (inbound,
 *     when their last bit has arrived; frames lost on the cable are not
 *     there). */
typedef enum {
    RS_CAPTURE_PCAP = 0,
    RS_CAPTURE_PCAPNG = 1
} rs_capture_format;

typedef struct rs_capture_config {
    uint32_t size; /* sizeof(rs_capture_config) where the caller was compiled (docs/library.md, "Versioned structs") */
    char ports[256];   /* capture.ports: comma-separated glob patterns over port names; "" = off */
    double start_ns;   /* capture.start_ns: first frame time captured */
    double end_ns;     /* capture.end_ns: frames from this time on are not */
    uint32_t snaplen;  /* capture.snaplen: bytes kept per frame, 0 = whole frames */
    rs_capture_format format; /* capture.format */
} rs_capture_config;
RS_API void rs_capture_config_init(rs_capture_config *c, size_t size);
static inline void rs_capture_config_default(rs_capture_config *c)
{
    rs_capture_config_init(c, sizeof *c);
}

/* Start capturing every port whose name matches c->ports into directory
 * dir (which must exist); *nports gets how many. dir NULL only checks the
 * configuration and counts the ports, opening nothing. comment (pcapng
 * only; NULL for none) goes in the section header as run metadata, copied.
 * RS_EINVAL with err naming capture.ports when no port matches, RS_EIO
 * when a file cannot be opened. The capture files stay open until
 * rs_net_capture_finish. */
RS_API int rs_net_capture_start(rs_net *net, const char *dir, const rs_capture_config *c,
                         const char *comment, uint32_t *nports, rs_err *err);
/* Close every capture file: keep = 1 renames them into place, 0 deletes
 * them (a failed run). RS_EIO if a write failed at any time. */
RS_API int rs_net_capture_finish(rs_net *net, int keep, rs_err *err);

/* Timeline (docs/timeline-format.md: each record's section says when the
 * network writes it and what exactly its fields mean). From now on the
 * network writes into tl (borrowed: the caller creates it, calls
 * rs_net_timeline_stop, then closes it):
 *   - pfc: one record per PFC frame a port starts sending (pause or
 *     resume; refreshes of a pause too), so they count as the ports'
 *     pfc_sent;
 *   - drop: one record per dropped packet (PFC frames aside), reason
 *     "buffer", "no-route" or "link-down", so they add up to pkts_dropped;
 *   - flow: one record per completed message, as rs_net_msg_times;
 *   - sample, every multiple of sample_interval_ps while the network is
 *     busy, for each port that sent or had a queue in the interval;
 *   - ecn, at the same ticks: marks and CNPs per port since the last tick;
 *   - name records for the ports those mention, each once.
 * The kinds tl does not want (rs_timeline_wants) are not built. Samples
 * and ECN records come from one periodic event per network, not from the
 * packet path; it runs only while traffic is in flight, and only if tl
 * wants samples or ECN records when the sampler starts (so set the mask
 * first). sample_interval_ps 0: no sampler (no sample or ecn records).
 * Writing a timeline changes no result: the sampler only reads, on an
 * entity of its own; its events are counted by rs_net_timeline_events
 * (rs_sim_events_run less that is the same with or without a timeline).
 * Write errors stay in tl (its close reports them). RS_EINVAL (NULL, or a
 * timeline already set), RS_ENOMEM. */
RS_API int rs_net_timeline_start(rs_net *net, rs_timeline *tl, rs_time sample_interval_ps, rs_err *err);
/* Stop writing: the ECN marks and CNPs since the last tick are written
 * (so every record kind adds up to the counters at this point), then tl
 * is no longer used. No-op without a timeline. */
RS_API void rs_net_timeline_stop(rs_net *net);

/* Events the timeline's sampler has run (they are in rs_sim_events_run). */
RS_API uint64_t rs_net_timeline_events(const rs_net *net);

/* Completion times of finished messages, in completion order:
 * n entries of (start, end). Only the first RS_NET_MSG_TIMES_KEEP
 * completions are kept (so memory does not grow with a long run's
 * messages); rs_net_fct_get summarises all of them. None (n = 0) when the
 * configuration's msg_records is 0. On rank 0 of a split run, rank 0's
 * own (rs_net_fct_get pools every rank's). Borrowed; valid until the next
 * send. */
#define RS_NET_MSG_TIMES_KEEP ((size_t)1 << 22)
typedef struct rs_net_msg_time {
    rs_time start, end;
    uint32_t src, dst;
    uint64_t bytes;
} rs_net_msg_time;
RS_API const rs_net_msg_time *rs_net_msg_times(const rs_net *net, size_t *n);

/* Completion-time (end - start) statistics over every finished message.
 * n, min, max and mean (rounded to nearest) are exact. p50 and p99 are
 * nearest-rank percentiles: exact (exact = 1) while at most
 * RS_NET_MSG_TIMES_KEEP messages have finished, else from a log-linear
 * histogram, within 0.1% of the exact value (exact = 0). All zero when
 * nothing finished. RS_OK or RS_ENOMEM. */
typedef struct rs_net_fct {
    uint32_t size; /* sizeof(rs_net_fct) where the caller was compiled (docs/library.md, "Versioned structs") */
    uint64_t n;
    rs_time min, mean, p50, p99, max;
    int exact;
} rs_net_fct;
RS_API int rs_net_fct_fill(const rs_net *net, rs_net_fct *out, size_t size);
static inline int rs_net_fct_get(const rs_net *net, rs_net_fct *out)
{
    return rs_net_fct_fill(net, out, sizeof *out);
}

RS_END_DECLS

#endif
