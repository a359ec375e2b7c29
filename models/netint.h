/*
 * netint.h - the network's private layout (models/ only): the network
 * (struct rs_net) over its fabric (fabric_int.h), flows (flow_int.h) and
 * messages (msg_int.h), the partition's answers and hooks
 * (partition_int.h), and what the timeline, the callbacks' names and
 * fault injection offer the rest of models/. Not for other layers.
 */
#ifndef RS_NETINT_H
#define RS_NETINT_H

#include <stdlib.h>
#include <string.h>

#include "hindex.h"
#include "msg_int.h"
#include "partition.h"
#include "pool.h"

/* A job's own settings (rs_net_set_job_pxn, rs_net_set_job_priority,
 * rs_net_set_job_nccl); 0: the network's. */
struct rs_net_job_cfg {
    uint8_t pxn;          /* routing.pxn + 1 */
    uint8_t prio;         /* transport.priority + 1 */
    uint8_t nccl_on;      /* nccl is the job's */
    rs_nccl_config nccl;
};

struct rs_net {
    rs_sim *sim;
    rs_net_config cfg;
    uint32_t gpus, hb_size, domains;
    uint32_t nic_share, rails; /* topology.gpus_per_nic (at least 1); NICs (rails) per HB domain */
    uint8_t *member;           /* per GPU: the job holding it, 1.. (rs_net_set_job); 0: none; NULL: one job, every GPU */
    uint64_t *job_tx;          /* rs_net_jobs_count: [port * njob_tx + job - 1] data bytes sent; NULL: not counted */
    uint64_t *job_serial;      /* rs_net_jobs_serials: each job's next flow serial ([0]: unused); NULL: one space */
    uint32_t cur_job;          /* the job rs_net_set_job named last: rs_net_serials_reserve's space */
    struct rs_net_job_cfg *job_cfg; /* [job] a job's own settings, from the first one set; NULL: none */
    uint8_t job_classes;       /* a job has its own priority: the flow level fills class by class */
    uint8_t data_prios;        /* bit p: priority p carries RoCE data (transport.priority and the jobs' own) */
    uint32_t njob_tx;

    rs_node *nodes;
    uint32_t nnodes, nswitches, first_switch, first_hb;
    rs_port *ports;          /* a split run: this process's own (ports.c); ask rs_part_owns_port */
    rs_link *links;          /* per port, what every process knows of it (fabric_int.h) */
    uint64_t rate_changes;   /* cables whose rate a degrade or restore changed so far (rs_net_rate_changes) */
    rs_link *links0;         /* the links as the run started, while a degrade or restore is still to come
                              * (fault.c); NULL: links is that (rs_net_hop_as_built) */
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
    uint32_t df_group;       /* topology.kind=dragonfly: switches per group (for names) */
    uint32_t *ugal_load;     /* routing.dragonfly=ugal on a dragonfly: network flows counted on each
                              * source-switch port (ugal.c), else NULL */

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
    uint64_t *relay_serial;  /* [gpus] named relays' chunks from each source GPU so far (rs_relay_serial); NULL: none yet */
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
    uint64_t msgs_relayed;   /* rs_net_msgs_relayed */
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
    rs_hindex cbh;             /* (fn, ctx) -> index, for rs_net_cb_find */
    /* Reserved ranges (rs_net_cb_reserve), one per reserver (a replay per
     * job): each binds its indices named before they were set. */
    struct rs_net_cb_range { uint32_t first, n; rs_net_cb_resolve_fn fn; void *ctx; } *cb_ranges;
    uint32_t ncb_ranges;
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

/* GPUs and their NICs (topology.gpus_per_nic): the GPU whose NIC g
 * sends and receives through (g itself unless it shares one), g's rail,
 * the first GPU of that rail in domain d, and g's ports. A GPU's ports
 * are its NIC (if it has one), then its HB port (if hb_size > 1). */
static inline uint32_t rs_nic_gpu(const rs_net *net, uint32_t g)
{
    return g - g % net->hb_size % net->nic_share;
}
static inline uint32_t rs_gpu_rail(const rs_net *net, uint32_t g)
{
    return g % net->hb_size / net->nic_share;
}
static inline uint32_t rs_rail_gpu(const rs_net *net, uint32_t d, uint32_t rail)
{
    return d * net->hb_size + rail * net->nic_share;
}
/* Several jobs counted (rs_net_jobs_count): port `port` sent `bytes` of
 * job `job`'s data (0: no job's). */
static inline void rs_job_tx_add(rs_net *net, uint32_t port, uint8_t job, uint64_t bytes)
{
    if (job && job <= net->njob_tx)
        net->job_tx[(size_t)port * net->njob_tx + job - 1] += bytes;
}
/* The serial counter of flows from GPU g: its job's own space
 * (rs_net_jobs_serials), else the network's. */
static inline uint64_t *rs_serial_ctr(rs_net *net, uint32_t g)
{
    uint8_t j = net->job_serial && net->member ? net->member[g] : 0;
    return j ? &net->job_serial[j] : &net->flow_serial;
}
/* Whether GPU g is of the same job as GPU a, which a job holds (NCCL
 * relays only through its own job's GPUs). */
static inline int rs_gpu_same_job(const rs_net *net, uint32_t a, uint32_t g)
{
    return !net->member || (net->member[a] && net->member[g] == net->member[a]);
}
/* Whether NCCL's cross-rail message from src whose PXN relay GPU would be
 * `via` goes through an HB domain at all: NCCL relays only through its
 * own job's GPUs; rail-only, with no other way across rails, forwards
 * anyway (at the source's or the destination's domain: rs_msg_send). */
static inline int rs_pxn_relays(const rs_net *net, uint32_t src, uint32_t via)
{
    return rs_gpu_same_job(net, src, via) || net->cfg.kind == RS_TOPO_RAIL_ONLY;
}
/* The GPU of g's domain on rail c that a message leg uses: g itself when
 * g is on that rail, else the GPU with that rail's NIC. */
static inline uint32_t rs_rail_member(const rs_net *net, uint32_t g, uint32_t c)
{
    return rs_gpu_rail(net, g) == c ? g : rs_rail_gpu(net, g / net->hb_size, c);
}
static inline uint32_t rs_gpu_nic_port(const rs_net *net, uint32_t g)
{
    return net->nodes[rs_nic_gpu(net, g)].port_base;
}
static inline uint32_t rs_gpu_hb_port(const rs_net *net, uint32_t g)
{
    return net->nodes[g].port_base + net->nodes[g].nports - 1;
}

/* ugal.c: routing.dragonfly=ugal. Choose new network flow f's path (its
 * via, via_hops, ugal_port) and count it; uncount a flow handed back. */
void rs_ugal_choose(rs_net *net, rs_flow *f);
static inline void rs_ugal_release(rs_net *net, rs_flow *f)
{
    if (f->ugal_port != RS_NONE) {
        net->ugal_load[f->ugal_port]--;
        f->ugal_port = RS_NONE;
    }
}

/* The partition's answers and hooks (partition.h), for the packet path. */
/* NCCL's forwarding (PXN) is in force for cross-rail messages:
 * routing.pxn=on, or auto on a rail-optimized network (a dragonfly has no
 * rails to reach: auto sends from the source's own NIC there). */
static inline int rs_cfg_pxn(const rs_net_config *c)
{
    return c->pxn == RS_PXN_ON || (c->pxn == RS_PXN_AUTO && c->kind != RS_TOPO_DRAGONFLY);
}

/* The same for a message from GPU src: its job's routing.pxn where the
 * job has its own (rs_net_set_job_pxn). */
static inline int rs_src_pxn(const rs_net *net, uint32_t src)
{
    uint8_t j = net->job_cfg && net->member ? net->member[src] : 0;
    if (!j || !net->job_cfg[j].pxn)
        return rs_cfg_pxn(&net->cfg);
    rs_net_config c = { .pxn = (rs_pxn_mode)(net->job_cfg[j].pxn - 1), .kind = net->cfg.kind };
    return rs_cfg_pxn(&c);
}

static inline int rs_part_owns_node(const rs_net *net, uint32_t node)
{
    return !net->pt.node_rank || net->pt.node_rank[node] == net->pt.rank;
}
/* Does this process own port i? Asked before reading the port: another
 * process's port may sit on a page given back (ports.c). */
static inline int rs_part_owns_port(const rs_net *net, uint32_t i)
{
    return !net->pt.port_mine || net->pt.port_mine[i];
}
/* Port i's counters into *c: its own, or on rank 0 after a split run's
 * merge those its process sent. 0 (and zeros) for a port another process
 * owns that no merge brought. */
static inline int rs_net_port_counts(const rs_net *net, uint32_t i, rs_port_count *c)
{
    if (rs_part_owns_port(net, i)) {
        rs_port_count_get(&net->ports[i], c);
        return 1;
    }
    if (net->pt.merged) {
        *c = net->pt.merged[i];
        return 1;
    }
    memset(c, 0, sizeof *c);
    return 0;
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

/* The ports array (ports.c): mapped pages of its own, so that a split run
 * can give back the pages holding only other processes' ports
 * (rs_ports_release; the bytes given back). */
rs_port *rs_ports_alloc(uint32_t n);
void rs_ports_free(rs_port *ports, uint32_t n);
size_t rs_ports_release(rs_net *net, const uint8_t *keep);

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

/* routing.dragonfly=ugal: the port switch n takes for a data frame of flow
 * f that has made `hops` switch hops since its source switch: toward f's
 * intermediate switch until it gets there (minimal routes toward it make
 * exactly via_hops hops), RS_NONE from then on (the minimal route to the
 * destination follows) and for a flow without a detour. */
static inline uint32_t rs_ugal_route(const rs_net *net, const rs_node *n, const rs_flow *f, uint32_t hops)
{
    if (f->via == RS_NONE || hops >= f->via_hops)
        return RS_NONE;
    uint32_t e = net->route[(size_t)n->sw * net->nleaves + net->sw[f->via].leaf_index];
    return e == RS_NONE ? RS_NONE : rs_route_hashed_at(net, n, e, f->src, f->dst, f->entropy);
}

/* net_config.c: the library's version of the caller's configuration *c,
 * keys it lacks at their defaults (versioned.h). RS_EINVAL for a size
 * below the first version's. */
int rs_net_config_take(rs_net_config *out, const rs_net_config *c);

/* callbacks.c: the names of callbacks (rs_net_cb_register): the index
 * registered for (fn, ctx), RS_NONE when none; index i as another process
 * named it (bound now through the resolver when reserved and unset), NULL
 * when unbound. */
uint32_t rs_net_cb_find(const rs_net *net, rs_net_timer_fn fn, const void *ctx);
const struct rs_net_cb *rs_net_cb_named(rs_net *net, uint32_t i);
/* net.c: a timer shipped by another process (split.c), keyed as its giver. */
void rs_net_timer_at_key(rs_net *net, rs_time t, uint64_t key, uint32_t cb, uint64_t arg);

/* net_timeline.c: timeline records; call only when net->tl != NULL. */
typedef struct rs_net_tl rs_net_tl;
void rs_net_tl_wake(rs_net *net);   /* traffic may start: run the sampler */
void rs_net_tl_touch(rs_net *net, uint32_t port); /* flow level: port's counters moved */
void rs_net_tl_pfc(rs_net *net, uint32_t port, uint8_t xoff, uint8_t xon);
void rs_net_tl_drop(rs_net *net, uint32_t port, const rs_pkt *pkt, unsigned reason);
void rs_net_tl_flow(rs_net *net, const rs_net_msg_time *t);
void rs_net_tl_free(rs_net *net);   /* also fine when net->tl is NULL */
/* The timeline's sampler in a split run (net_timeline.c): where a window
 * starting at `start` must end, what this process tells the others at its
 * end (RS_NET_TL_NV values, reduced by minimum), and, given their
 * minimums and the next event of any process (`next`), the sampler's
 * decision and its next tick (RS_TIME_MAX: none). */
#define RS_NET_TL_NV 4
rs_time rs_net_tl_window_cap(const rs_net *net, rs_time start);
void rs_net_tl_window_vals(const rs_net *net, uint64_t v[RS_NET_TL_NV]);
rs_time rs_net_tl_window_end(rs_net *net, const uint64_t v[RS_NET_TL_NV], rs_time next);

/* fault.c; call only when net->flt != NULL, never per packet. */
/* A link-down drop at port p, a no-route drop (p NULL) or a failover drop. */
void rs_fault_note_drop(rs_net *net, const rs_port *p, const rs_pkt *pkt, unsigned reason);
/* Failover by fault entry `fault` abandons flow f of message m: f's
 * faults (and this one) now wait on the message's completion. */
void rs_fault_note_failover(rs_net *net, uint32_t f, uint32_t m, uint32_t fault);
/* Message m, failed over before, completed: its faults may be recovered. */
void rs_fault_note_msg_delivered(rs_net *net, uint32_t m);
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
