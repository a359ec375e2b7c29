/*
 * fluid_int.h - what the flow level's two files share: its records and
 * state (struct rs_fluid, net->backend_state), a few path helpers, and the
 * calls between the backend (fluid.c) and its DCQCN model
 * (fluid_dcqcn.c). Models-internal.
 */
#ifndef RS_FLUID_INT_H
#define RS_FLUID_INT_H

#include "bundle.h"
#include "fluid.h"
#include "mmf.h"
#include "netint.h"

typedef struct fl_rec {
    unsigned __int128 rem;  /* remaining wire bits x 10^12, as of t0 */
    rs_time t0;
    rs_time since;          /* it entered the fluid: its place in its links' round robin */
    rs_time end;            /* its bytes are through at the current rates (RS_TIME_MAX: rate 0) */
    rs_time finish;         /* it leaves the fluid (heap key): end, or earlier (a round-robin tail) */
    rs_time lat;            /* completion comes this long after finish */
    uint64_t rate;          /* bit/s */
    uint64_t wire;          /* wire bytes */
    uint64_t serial;        /* the transport flow's creation order (tie-breaks) */
    uint32_t flow;          /* transport flow id */
    uint32_t hidx;          /* index in the finish heap, RS_NONE when out */
    uint32_t max_frame;     /* wire bytes of its largest frame */
    uint8_t counted;        /* its frames are in the counters already (a tail resent after a fault) */
} fl_rec;

/* A flow with the link that limits it, its place in that link's round
 * robin (since, serial) and its end time: round-robin tails (solve_now). */
typedef struct fin_ent {
    uint32_t bneck, id;
    uint64_t serial;
    rs_time since, end;
} fin_ent;

/* A transport flow parked off the fluid by a fault: its path crossed a
 * link that failed, or it started with no usable path. */
typedef struct fl_park {
    unsigned __int128 rem;  /* wire bits x 10^12 still to deliver */
    rs_time cut_at;         /* when it stopped */
    rs_time go;             /* when it moves again, once a path is back (RS_TIME_MAX: not yet known) */
    uint64_t rate;          /* its rate then (bit/s): how fast it was pushing into the dead link */
    uint32_t flow;          /* transport flow id */
    uint8_t tail;           /* it had left the fluid: its last frames were lost in flight */
} fl_park;

/* Faults only: a flow between leaving the fluid and completing (its last
 * frames in flight), by transport flow id, so a cable failure on its path
 * can take the completion back. */
typedef struct fl_tail {
    uint32_t link[RS_MMF_MAX_HOPS];
    rs_time done_at;        /* its ev_complete; RS_TIME_MAX: none pending (or taken back) */
    uint64_t rate;          /* its rate when it left (bit/s) */
    uint64_t wire;
    uint32_t max_frame;     /* wire bytes of its largest frame */
    uint8_t nhops;
} fl_tail;

/* A port's wire bytes as the fluid carries them: the sum of its flows'
 * rates, integrated (bits x 10^12) up to t. The timeline's link samples
 * read it (rs_fluid_port_bytes); the summary's port counters are counted
 * per flow when it leaves the fluid. */
typedef struct fl_port {
    unsigned __int128 acc;
    uint64_t sum;           /* bit/s */
    rs_time t;
} fl_port;

/* DCQCN state of one fluid flow (the DCQCN section below). */
typedef struct dq_flow {
    unsigned __int128 b;    /* backlog, bits x 10^12, as of tb */
    unsigned __int128 bmax; /* PFC's bound on it */
    unsigned __int128 sent; /* sent since the last CNP (byte counter), bits x 10^12 */
    rs_dcqcn_rp cc;         /* the reaction point, as transport.c's */
    rs_time tb, last_cnp, next_timer, cnp_due, due;
    uint64_t s, d;          /* send and delivery rates since tb, bit/s */
    unsigned __int128 goal; /* dq_byte_goal, for byte-counter stage goal_stage - 1 */
    uint32_t goal_stage;    /* 0: goal not computed yet */
    uint32_t gen;
    uint8_t on;
    uint8_t ahead;          /* saturated, its engine event later (fluid_dcqcn.c): 1, 2 with rs_fluid.dqa */
} dq_flow;

struct rs_fluid {
    rs_net *net;
    rs_mmf *mmf;
    fl_port *port;          /* [nports] */
    fl_rec *rec;            /* indexed by solver flow id */
    uint32_t caprec;
    uint32_t *of_flow;      /* transport flow id -> solver id (RS_NONE: not in the fluid) */
    uint32_t capof;
    uint32_t *heap;         /* solver ids by (finish, transport flow serial) */
    uint32_t nheap, capheap;
    rs_time armed;          /* earliest pending finish event, RS_TIME_MAX: none */
    fin_ent *batch;         /* the flows of a solve with an end, for round-robin tails */
    uint32_t capbatch;
    uint32_t *ghead;        /* per solver link: its last batch entry (RS_NONE between solves) */
    uint32_t *glist;        /* a solve of n: per batch entry the one before on its bottleneck, then
                               (from n + 1) the bottlenecks used */
    uint32_t capghead, capglist;
    uint32_t ent;
    uint8_t solve_pending;
    /* Faults (fault.c's hooks, rs_fluid_cable_changed ...): transport
     * flows out of the fluid until a path is back, in the order parked. */
    fl_park *park;
    uint32_t npark, cappark;
    rs_time resume_armed;   /* earliest pending ev_resume, RS_TIME_MAX: none */
    uint32_t nmoving;       /* flows in the fluid with a rate above 0 */
    rs_time still_since;    /* nmoving last fell to 0 (the watchdog's "no progress since") */
    uint8_t watch_armed;    /* an ev_watch is pending */
    fl_tail *tail;          /* by transport flow id (faults only) */
    uint32_t captail;
    /* DCQCN (transport.cc=dcqcn with ECN, RoCE): per solver flow id, NULL
     * when off (then the rates are plain max-min). */
    dq_flow *dq;
    uint32_t capdq;
    dq_flow *dqa;           /* per id: where a saturated flow's run ahead stopped */
    uint32_t capdqa;
    uint32_t dq_ahead;      /* own events a saturated flow runs ahead: RS_FLUID_DQ_AHEAD (0: none, for tests) */
    /* Per switch port, while the queues stand still (one dq_solved, one
     * event's rescheduling of a port's flows): its queue and slope, valid
     * where qstamp equals dqstamp (one computation per port per lot). */
    unsigned __int128 *qlen;
    int64_t *qslope;
    uint32_t *qstamp, dqstamp;
    uint8_t qvalid;         /* the queues stand still: the cache may be used (dq_stamp) */
    uint32_t capq;          /* entries of qlen, qslope, qstamp (links, bundles included) */
    /* routing.ecmp=packet or adaptive without faults: paths over bundles
     * of equal-cost ports (bundle.c); NULL until the first such path. */
    rs_bundles *bund;
};

/* The flow level's state: the backend state of net (backend.h); NULL at
 * packet level. */
static inline rs_fluid *fluid_of(const rs_net *net)
{
    return net->backend_state;
}

/* A link's port: itself, or for a bundle its first member (every member
 * of a stage has the same rate and latency in the topologies built). */
static inline const rs_port *link_port(const rs_net *net, uint32_t l)
{
    if (l < net->nports)
        return &net->ports[l];
    uint32_t n;
    return &net->ports[rs_bundle_members(fluid_of(net)->bund, l, &n)[0]];
}

/* The ports a link stands for: itself, or a bundle's members. */
static inline const uint32_t *link_ports(const rs_net *net, const uint32_t *l, uint32_t *n)
{
    if (*l < net->nports) {
        *n = 1;
        return l;
    }
    return rs_bundle_members(fluid_of(net)->bund, *l, n);
}

static inline rs_time port_ser(const rs_port *p, uint64_t bytes)
{
    return p->ps_per_byte ? bytes * p->ps_per_byte : rs_ser_time(bytes, p->rate_bps);
}

/* The time link l takes to carry `bytes`: its port's serialization, or a
 * bundle's, whose members carry frames side by side (packet spraying
 * over parallel links), at their sum of rates. */
static inline rs_time link_frame_ser(const rs_net *net, uint32_t l, uint64_t bytes)
{
    if (l < net->nports)
        return port_ser(&net->ports[l], bytes);
    uint32_t n;
    const uint32_t *m = rs_bundle_members(fluid_of(net)->bund, l, &n);
    return port_ser(&net->ports[m[0]], bytes) / (n ? n : 1);
}

/* link_port's rs_link: what every process knows of it (a split packet run
 * asks paths' latencies of ports it may not own). */
static inline const rs_link *link_info(const rs_net *net, uint32_t l)
{
    if (l < net->nports)
        return &net->links[l];
    uint32_t n;
    return &net->links[rs_bundle_members(fluid_of(net)->bund, l, &n)[0]];
}

static inline rs_time link_ser(const rs_link *p, uint64_t bytes)
{
    return p->ps_per_byte ? bytes * p->ps_per_byte : rs_ser_time(bytes, p->rate_bps);
}

/* What flow f delivers, as the summary counts it: its data frames (a
 * relayed message's HB frames too, hb_frames of them) and its payload per
 * counter (goodput once per leg). count_sent adds it; a tail lost for
 * good takes it back. */
typedef struct fl_delivered {
    uint64_t frames, hb_frames, hb, nic, goodput;
} fl_delivered;

/* fluid.c: the fluid itself. */
/* A solve at this instant, after every callback of it. */
void rs_fluid_want_solve(rs_fluid *fl);
/* Transport flow fid joins the fluid on ports[0..h) with latency lat, wire
 * bytes, largest frame mf and rem (bits x 10^12) still to carry. RS_ENOMEM. */
int rs_fluid_enter(rs_fluid *fl, uint32_t fid, const uint32_t *ports, uint32_t h, rs_time lat, uint64_t wire,
                   uint32_t mf, unsigned __int128 rem);
/* Solver flow id out of the finish heap. */
void rs_fluid_heap_remove(rs_fluid *fl, uint32_t id);
/* A flow started (up) or stopped moving bytes at now: the watchdog's count. */
void rs_fluid_moving(rs_fluid *fl, int up, rs_time now);
/* The watchdog's event armed, when faults.watchdog_us asks for one. */
void rs_fluid_watch(rs_fluid *fl);
/* Solver flow id's rate on its ports goes from `from` to `to` bit/s at now. */
void rs_fluid_port_rates(rs_fluid *fl, uint32_t id, uint64_t from, uint64_t to, rs_time now);
/* Flow f lost for good (unreliable, its path down): counted as dropped. */
void rs_fluid_count_lost(rs_net *net, const rs_flow *f);
fl_delivered rs_fluid_delivered(const rs_net *net, const rs_flow *f);
/* Are ports[0..h) all up? 0 with *dead the first down one (RS_NONE: no route). */
int rs_fluid_path_up(const rs_net *net, const uint32_t *ports, uint32_t h, uint32_t *dead);

/* fluid_path.c: what flow fid crosses (ports[0..*nhops)) and costs: its
 * latency, wire bytes and largest frame. RS_EUNREACH (no route), RS_ERANGE
 * (a path longer than the room). */
int rs_fluid_flow_setup(const rs_net *net, uint32_t fid, uint32_t *ports, uint32_t *nhops, rs_time *lat,
                        uint64_t *wire, uint32_t *max_frame);
void rs_fluid_flow_wire(const rs_flow *f, int hb, uint64_t *wire, uint32_t *max_wire);
rs_time rs_fluid_path_lat(const rs_net *net, const uint32_t *ports, uint32_t h, uint32_t mw);
void rs_fluid_relay_setup(const rs_net *net, const rs_flow *f, const uint32_t *ports, uint32_t h, rs_time *lat,
                          uint64_t *wire, uint32_t *max_frame);

/* fluid_fault.c: park flow fid (out of the fluid) with rem to go, stopped
 * at down port dead (NULL: no route) while at `rate`; an unreliable flow
 * is lost instead. */
int rs_fluid_park(rs_fluid *fl, uint32_t fid, unsigned __int128 rem, uint64_t rate, const rs_port *dead);

/* fluid_dcqcn.c (fl->dq set: transport.cc=dcqcn with ECN, RoCE):
 * solver flow id joins the fluid (RS_ENOMEM); a solve recomputed flows
 * t[0..n); the bits x 10^12 of id still in flight in the network, of the
 * `left` it has not delivered, and taking `bits` of them out (a flow
 * leaving early); id's own DCQCN events before now run (a saturated flow
 * runs ahead of the engine, RS_FLUID_DQ_AHEAD of them at a time). */
#define RS_FLUID_DQ_AHEAD 256
int rs_fluid_dq_enter(rs_fluid *fl, uint32_t id);
void rs_fluid_dq_solved(rs_fluid *fl, const uint32_t *t, size_t n, rs_time now);
unsigned __int128 rs_fluid_dq_in_flight(const rs_fluid *fl, uint32_t id, rs_time now, unsigned __int128 left);
void rs_fluid_dq_settle(rs_fluid *fl, uint32_t id, rs_time now);
void rs_fluid_dq_take_in_flight(rs_fluid *fl, uint32_t id, rs_time now, unsigned __int128 bits);

#endif
