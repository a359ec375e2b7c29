/*
 * mmf.h - an abstract max-min fair solver: links with capacities, flows
 * that each cross a few links. Rates come from progressive filling
 * (water-filling) and are recomputed incrementally: only the connected
 * components (flows joined by shared links) of links whose flow set
 * changed since the last solve. Exact integer arithmetic (bit/s, floor
 * division), so an incremental solve gives the same rates as a full one.
 * The flow level (fluid.c) solves its network with it; nothing here knows
 * a network. Models-internal.
 */
#ifndef RS_MMF_H
#define RS_MMF_H

#include "base.h"

/* Links a flow may cross: a 3-tier Clos path is 6 (NIC, leaf up, agg up,
 * core down, agg down, leaf down), a 4-tier one 8, and a relayed message
 * adds its two NVLink hops in front: 10. rs_net_create refuses flow level
 * on networks of more tiers (RS_FLUID_MAX_TIERS). */
#define RS_MMF_MAX_HOPS 10
#define RS_FLUID_MAX_TIERS ((RS_MMF_MAX_HOPS - 2) / 2)

typedef struct rs_mmf rs_mmf;

/* Priority classes (802.1p priorities): higher classes are filled first. */
#define RS_MMF_CLASSES 8

/* The solver's state. Only mmf.c writes it; the flow level reads paths,
 * link flow lists and caps through it on its hot paths (a call each would
 * cost more than the reads). */
typedef struct mmf_flow {
    uint32_t link[RS_MMF_MAX_HOPS];
    uint32_t pos[RS_MMF_MAX_HOPS];   /* index in each link's flow list */
    uint32_t mark;                   /* component stamp */
    uint32_t frozen;                 /* fill stamp: frozen in the current fill */
    uint32_t capped;                 /* fill stamp: its cap is in the current fill's heap */
    uint8_t nhops, live;
    uint8_t cls;                     /* priority class (rs_mmf_set_class), 0 until set */
} mmf_flow;

typedef struct mmf_link {
    uint32_t *fl;        /* flows crossing it */
    uint32_t n, cap;
    uint32_t mark;       /* component stamp */
    uint32_t cnt;        /* fill: unfrozen flows */
    uint64_t rem;        /* fill: capacity not yet given out */
    uint8_t dirty;
} mmf_link;

typedef struct heap_ent {
    uint64_t share;
    uint32_t link;
} heap_ent;

struct rs_mmf {
    uint32_t nlinks, caplinks;  /* links; room for that many in every per-link array */
    uint64_t *capv;
    mmf_link *links;
    mmf_flow *flows;
    uint64_t *rate;
    uint32_t *bneck;       /* the link whose saturation froze each flow's rate */
    uint64_t *fcap;        /* per-flow rate cap, bit/s (0: none; rs_mmf_set_flow_cap) */
    uint32_t ncapped;      /* flows with a cap: filling looks at caps only when > 0 */
    uint32_t cls_live[RS_MMF_CLASSES]; /* live flows of each class */
    uint32_t ncls;         /* classes with live flows: filling goes class by class when > 1 */
    uint32_t nflows, capflows;
    uint32_t *free_ids;    /* capacity capflows */
    uint32_t nfree;
    uint32_t *dirty;       /* dirty links, capacity nlinks */
    uint32_t ndirty;
    uint32_t stamp;        /* component marks */
    uint32_t fill;         /* fill marks */
    /* scratch */
    uint32_t *comp_links, *comp_flows, *stack;
    uint32_t ncl, ncf, capcf;   /* comp_links and stack hold nlinks */
    heap_ent *heap;
    uint32_t nheap, capheap;
    uint64_t solves, visited;
};


/* A solver over links 0..nlinks-1 with capacities cap_bps[i] (> 0, copied).
 * RS_ENOMEM; *out owned by the caller: rs_mmf_destroy. */
int rs_mmf_create(uint32_t nlinks, const uint64_t *cap_bps, rs_mmf **out);
void rs_mmf_destroy(rs_mmf *m); /* NULL is a no-op */

/* Add a link of capacity cap_bps (between solves): *id gets nlinks, then
 * nlinks grows by one. RS_ENOMEM. */
int rs_mmf_add_link(rs_mmf *m, uint64_t cap_bps, uint32_t *id);

/* Add a flow over links[0..nhops) (distinct, each < nlinks; copied); *id
 * gets its id (ids of removed flows are reused). Its rate is 0 until the
 * next solve. RS_EINVAL for an empty, too long or repeating path or a link
 * out of range, RS_ENOMEM. */
int rs_mmf_add(rs_mmf *m, const uint32_t *links, uint32_t nhops, uint32_t *id);
/* Remove flow id (live). Its links are re-solved at the next solve. */
void rs_mmf_remove(rs_mmf *m, uint32_t id);

/* Put flow id (live) in priority class cls (< RS_MMF_CLASSES; a new flow
 * is in class 0). Links serve classes strictly: filling gives the highest
 * class its max-min rates first, then the next class what they left, and
 * so on (a class may get 0). One class alone is plain max-min. Its links
 * are re-solved at the next solve. */
void rs_mmf_set_class(rs_mmf *m, uint32_t id, uint8_t cls);

/* Change link l's capacity (a degraded link; 0 for a failed one, whose
 * flows then get rate 0). Its component is re-solved at the next solve. */
void rs_mmf_set_cap(rs_mmf *m, uint32_t l, uint64_t cap_bps);

/* Cap flow id's rate at cap_bps (0: no cap): filling freezes it at the cap
 * if no link it crosses saturates first. With resolve, its component is
 * re-solved at the next solve; without, the caller vouches that the rates
 * stay max-min (the cap was and stays above the flow's rate), so the
 * component need not be re-solved. */
void rs_mmf_set_flow_cap(rs_mmf *m, uint32_t id, uint64_t cap_bps, int resolve);

/* Re-solve the components of every link a flow joined or left since the
 * last solve; other flows keep their rates. RS_OK or RS_ENOMEM (then the
 * dirty set is kept and a later solve retries). */
int rs_mmf_solve(rs_mmf *m);
/* The flows the last rs_mmf_solve recomputed (their rates may or may not
 * have changed); borrowed until the next add, remove or solve. */
static inline const uint32_t *rs_mmf_touched(const rs_mmf *m, size_t *n)
{
    *n = m->ncf;
    return m->comp_flows;
}
/* Flows and links the solves have visited in total (the cost of
 * incrementality, for the bench and docs). */
void rs_mmf_work(const rs_mmf *m, uint64_t *solves, uint64_t *flows_visited);

static inline uint64_t rs_mmf_rate(const rs_mmf *m, uint32_t id) { return id < m->nflows ? m->rate[id] : 0; }
/* The link that limits flow id: the one whose saturation fixed its rate
 * in the last solve that reached it (its first link before any solve). */
static inline uint32_t rs_mmf_bottleneck(const rs_mmf *m, uint32_t id) { return m->bneck[id]; }
/* One past the largest flow id handed out; live flows have ids below. */
static inline uint32_t rs_mmf_id_bound(const rs_mmf *m) { return m->nflows; }
static inline int rs_mmf_live(const rs_mmf *m, uint32_t id) { return id < m->nflows && m->flows[id].live; }

/* Reference: max-min rates of all live flows from scratch, written to
 * rates[id] (an array of rs_mmf_id_bound entries; dead ids get 0). The
 * solver's own rates are untouched. RS_ENOMEM. */
int rs_mmf_solve_full(rs_mmf *m, uint64_t *rates);

#endif
