/*
 * split.c - one packet-level run split over processes: the partition
 * (partition.h) rs_net_part_start installs (include/railsim/partition.h;
 * the design and its measurements: docs/parallel.md).
 *
 * Every process holds the whole network, built from the same scenario, and
 * starts the same traffic: the workload's driver is shared, so its events
 * run everywhere and every process creates the same messages and flows
 * under the same ids. Each process owns the nodes of a block of HB domains
 * and the switches placed with them, the ports of its nodes (their
 * transmissions, queues, PFC and the NIC's transport) and the arrivals on
 * links into its nodes (the link entities, rs_link_entity). The engine
 * queues only the events of what a process owns (rs_sim_set_owner), and a
 * flow starts sending only in its source GPU's process (packet.c).
 *
 * A frame on a cut link, one whose ends are in different processes, is
 * the one effect between processes: at transmission the sender knows its
 * arrival time and ships a copy of the frame; the receiver pushes its
 * arrival as the event the serial run has, an rs_sim_at_once of the link's
 * entity. Links inside a process keep their in-flight chain (fabric.c).
 * Equal-time events run in (time, entity, sequence) order everywhere and
 * every entity's sequence is counted in its own process, so each process
 * runs its events exactly as the serial run does.
 *
 * Windows: with T the earliest next event of any process and L the
 * smallest propagation (plus the far switch's pipeline) of a cut link,
 * every event before T + L can run: a frame sent at t >= T arrives at
 * t + serialization + L or later. Each window is an all-reduce (T, and
 * whether a process failed) and an exchange of the shipped frames.
 *
 * At the end every process sends rank 0 its counters, its ports'
 * counters and its completion times, and rank 0's network reports what
 * the serial run's does: counters added (the ones every process counts
 * alike, messages sent, taken once), the others' ports' counters kept
 * beside its own ports (rs_partition.merged), completion times pooled.
 *
 * Memory: each process keeps its own ports. The pages of the ports array
 * that hold only other processes' ports are given back when the run
 * starts (ports.c), and whatever looks at a port it may not own reads its
 * rs_link (what every process knows of it) or asks rs_part_owns_port.
 */
#include "netint.h"
#include "split_wire.h"
#include "versioned.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef struct rs_split {
    rs_net_comm comm;
    uint32_t *node_rank;     /* per node: its process */
    uint8_t *own;            /* per entity: RS_SIM_REMOTE / MINE / SHARED (rs_sim_set_owner) */
    uint8_t *port_mine;      /* per port: this process's (rs_partition.port_mine) */
    rs_port_count *merged;   /* rank 0: the others' ports' counters (rs_partition.merged) */
    rs_time lookahead;
    rs_time ship_min;        /* the earliest arrival or timer shipped in this window */
    rs_time win_end;         /* the running window's end */
    /* What to ship, per destination process: sends to mirror, timers,
     * frames (received in that order). */
    struct part_out {
        struct part_frame *v;
        size_t n, cap;
        rs_part_send *s;
        size_t ns, caps;
        struct part_timer *e;
        size_t ne, cape;
    } *out;
    /* Per process: the mirrors here of the flows it made (home id -> id),
     * and of its relayed messages whose chunks are still coming (mmir:
     * home message id -> id, from chunk 0 to the last). */
    struct part_mir {
        uint32_t *id;
        uint32_t n, cap;
    } *mir, *mmir;
    /* Flows of other homes whose counts changed here (to report), own flows
     * to check for reuse; the reports and reuse notices to send. */
    struct part_ids {
        uint32_t *v;
        size_t n, cap;
    } touched;
    struct part_rep_out {
        struct part_rep *v;
        size_t n, cap;
    } *rep;
    struct part_ids *dead; /* per process: own flows it may reuse now */
    rs_net_part_stats st;
    int own_ids;             /* this process made records of its own (or mirrors): ids differ between processes */
    char why[256];           /* what was wrong with a message another process sent; "": nothing */
    /* Every process's completions (fct_together): how many each had, and
     * their median and 99th percentile while they fit the kept list. */
    uint64_t *fct_count;
    uint64_t fct_total;
    rs_time fct_p50, fct_p99;
    int fct_hist;            /* fct_check found more completions than the kept list: histograms only */
    rs_time *arr_next;       /* per port: a frame over its link must arrive at or after this (the last + 1) */
} rs_split;

static const rs_part_ops split_ops;
static void split_state_free(rs_split *P);
static void flow_touched(rs_net *net, uint32_t f);

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int rs_net_part_possible(const rs_net *net, char *why, size_t n)
{
    const char *r = NULL;
    if (net->cfg.fidelity != RS_FIDELITY_PACKET)
        r = "only a packet-level run is partitioned";
    else if (net->flt && !rs_fault_splits(net, why, n))
        return 0;
    else if (net->tl)
        r = "a whole-run timeline is written (a partitioned run writes its part: rs_net_timeline_part)";
    else if (net->ugal_load)
        r = "routing.dragonfly=ugal counts every flow at its source switch (routing.dragonfly=minimal splits)";
    else if (net->hb_size > 1 && rs_cfg_pxn(&net->cfg) && net->cfg.transport == RS_TRANSPORT_IDEAL)
        r = "PXN relays without ACKs (transport.kind=ideal) free their buffer slots at the destination";
    if (r && why)
        snprintf(why, n, "%s", r);
    return r == NULL;
}

/* The process of each node: GPUs and NVSwitches by HB domain in blocks;
 * then switches tier by tier, each where most of its neighbours of lower
 * tiers are, so a fat tree's pods stay whole; among ties (cores, whose
 * neighbours are spread evenly) the process with the fewest switch ports. */
static int place(rs_net *net, uint32_t ranks, uint32_t *node_rank)
{
    uint32_t K = net->hb_size ? net->hb_size : 1, top = 0;
    uint32_t *count = calloc(2 * (size_t)ranks, sizeof *count), *load = count ? count + ranks : NULL;
    if (!count)
        return RS_ENOMEM;
    for (uint32_t i = 0; i < net->nnodes; i++) {
        const rs_node *nd = &net->nodes[i];
        if (nd->kind == RS_NODE_GPU)
            node_rank[i] = (uint32_t)((uint64_t)(i / K) * ranks / net->domains);
        else if (nd->kind == RS_NODE_HB)
            node_rank[i] = (uint32_t)((uint64_t)(i - net->first_hb) * ranks / net->domains);
        else if (nd->tier > top)
            top = nd->tier;
    }
    for (uint32_t tier = 1; tier <= top; tier++)
        for (uint32_t i = 0; i < net->nnodes; i++) {
            const rs_node *nd = &net->nodes[i];
            if (nd->kind != RS_NODE_SWITCH || nd->tier != tier)
                continue;
            uint32_t best_n = 0, ties = 0;
            memset(count, 0, ranks * sizeof *count);
            for (uint32_t k = 0; k < nd->nports; k++) {
                uint32_t peer = net->ports[nd->port_base + k].peer_node;
                if (net->nodes[peer].kind == RS_NODE_SWITCH && net->nodes[peer].tier >= tier)
                    continue;
                if (++count[node_rank[peer]] > best_n)
                    best_n = count[node_rank[peer]];
            }
            for (uint32_t r = 0; r < ranks; r++)
                ties += best_n && count[r] == best_n;
            /* Of the processes tied for most (all of them, when none has a
             * neighbour placed), the one with the fewest switch ports so far:
             * a round robin over the ties would follow the switch order
             * (a fat tree lists one pod half's leaves at even places). */
            uint32_t pick = RS_NONE;
            for (uint32_t r = 0; r < ranks; r++)
                if ((!ties || count[r] == best_n) && (pick == RS_NONE || load[r] < load[pick]))
                    pick = r;
            node_rank[i] = pick;
            load[pick] += nd->nports;
        }
    free(count);
    return RS_OK;
}

int rs_net_part_start(rs_net *net, const rs_net_comm *comm, rs_err *err)
{
    char why[160];
    if (!rs_net_part_possible(net, why, sizeof why))
        return rs_err_set(err, RS_EINVAL, "a partitioned run: %s", why);
    if (net->pt.state || comm->ranks == 0 || comm->rank >= comm->ranks)
        return rs_err_set(err, RS_EINVAL, "a partitioned run: expected one start and a rank below the ranks");
    /* The timeline's sampler is an entity every process shares; it gets
     * the id the serial run gives it when its timeline starts. */
    if (!net->ent_tl && rs_sim_entities_add(net->sim, 1, &net->ent_tl) != RS_OK)
        return rs_err_set(err, RS_ERANGE, "a partitioned run: no entity left for the timeline's sampler");
    rs_split *P = calloc(1, sizeof *P);
    uint32_t nent = rs_sim_entities(net->sim);
    if (!P || !(P->node_rank = malloc(net->nnodes * sizeof *P->node_rank)) || !(P->own = malloc(nent)) ||
        !(P->out = calloc(comm->ranks, sizeof *P->out)) || !(P->mir = calloc(comm->ranks, sizeof *P->mir)) ||
        !(P->mmir = calloc(comm->ranks, sizeof *P->mmir)) ||
        !(P->rep = calloc(comm->ranks, sizeof *P->rep)) || !(P->dead = calloc(comm->ranks, sizeof *P->dead))) {
        split_state_free(P);
        return rs_err_set(err, RS_ENOMEM, "out of memory partitioning the run");
    }
    P->comm = *comm;
    if (place(net, comm->ranks, P->node_rank) != RS_OK) {
        split_state_free(P);
        return rs_err_set(err, RS_ENOMEM, "out of memory partitioning the run");
    }
    memset(P->own, RS_SIM_SHARED, nent);
    uint8_t me = (uint8_t)RS_SIM_MINE, other = (uint8_t)RS_SIM_REMOTE;
    for (uint32_t i = 0; i < net->nnodes; i++)
        P->own[net->nodes[i].entity] = P->node_rank[i] == comm->rank ? me : other;
    P->lookahead = RS_TIME_MAX;
    for (uint32_t i = 0; i < net->nports; i++) {
        rs_port *p = &net->ports[i];
        uint32_t from = P->node_rank[p->node], to = P->node_rank[p->peer_node];
        P->own[rs_port_entity(net, i)] = from == comm->rank ? me : other;
        P->own[rs_link_entity(net, i)] = to == comm->rank ? me : other;
        p->cut = from != to;
        if (p->cut) {
            P->st.cut_links++;
            if (p->prop < P->lookahead)
                P->lookahead = p->prop;
        }
    }
    if (P->lookahead == 0) {
        split_state_free(P);
        for (uint32_t i = 0; i < net->nports; i++)
            net->ports[i].cut = 0;
        return rs_err_set(err, RS_EINVAL, "a partitioned run: a link between processes has no latency; expected "
                          "topology.link_latency_ns above 0");
    }
    if (!(P->port_mine = malloc(net->nports ? net->nports : 1)) ||
        !(P->fct_count = calloc(comm->ranks, sizeof *P->fct_count))) {
        split_state_free(P);
        return rs_err_set(err, RS_ENOMEM, "out of memory partitioning the run");
    }
    for (uint32_t i = 0; i < net->nports; i++)
        P->port_mine[i] = P->node_rank[net->ports[i].node] == comm->rank;
    P->st.ranks = comm->ranks;
    P->st.lookahead_ps = P->lookahead == RS_TIME_MAX ? 0 : P->lookahead;
    net->pt.ops = &split_ops;
    net->pt.state = P;
    net->pt.node_rank = P->node_rank;
    net->pt.port_mine = P->port_mine;
    net->pt.rank = comm->rank;
    net->pt.ranks = comm->ranks;
    rs_sim_set_owner(net->sim, P->own);
    return RS_OK;
}

static void split_free(rs_net *net)
{
    split_state_free(net->pt.state);
    net->pt.state = NULL;
    net->pt.node_rank = NULL;
    net->pt.port_mine = NULL;
    net->pt.merged = NULL;
}

static void split_state_free(rs_split *P)
{
    if (!P)
        return;
    for (uint32_t r = 0; P->out && r < P->comm.ranks; r++) {
        free(P->out[r].v);
        free(P->out[r].s);
        free(P->out[r].e);
    }
    for (uint32_t r = 0; P->mir && r < P->comm.ranks; r++)
        free(P->mir[r].id);
    for (uint32_t r = 0; P->mmir && r < P->comm.ranks; r++)
        free(P->mmir[r].id);
    for (uint32_t r = 0; P->rep && r < P->comm.ranks; r++)
        free(P->rep[r].v);
    for (uint32_t r = 0; P->dead && r < P->comm.ranks; r++)
        free(P->dead[r].v);
    free(P->touched.v);
    free(P->arr_next);
    free(P->fct_count);
    free(P->out);
    free(P->mir);
    free(P->mmir);
    free(P->rep);
    free(P->dead);
    free(P->node_rank);
    free(P->own);
    free(P->port_mine);
    free(P->merged);
    free(P);
}

static void split_ship(rs_net *net, rs_pkt *pkt, rs_time t)
{
    rs_split *P = net->pt.state;
    struct part_out *o = &P->out[P->node_rank[pkt->to_node]];
    /* v[0] is kept for the window's header (exchange: a window of frames
     * alone goes as it is). */
    if (rs_array_reserve(&o->v, &o->cap, o->n + 2, sizeof *o->v, 256) != RS_OK) {
        rs_sim_stop(net->sim, RS_ENOMEM);
    } else {
        part_frame *f = &o->v[1 + o->n++];
        f->t = t;
        if (t < P->ship_min)
            P->ship_min = t;
        /* Only a flow with a home is looked at: the shared driver's have
         * the same id everywhere (and their records stay). */
        rs_flow *fl = pkt->own ? &net->flows[pkt->flow] : NULL;
        f->pkt = *pkt;
        frame_home_put(&f->pkt, fl ? fl->home : RS_NONE, fl ? fl->home_id : pkt->flow);
        if (fl) {
            fl->pkts_live--; /* it lives in the receiver's process now */
            flow_touched(net, pkt->flow);
        }
        P->st.frames_sent++;
    }
    rs_pool_put(&net->pkts, pkt); /* the receiver's process has it now */
}

static void split_ship_send(rs_net *net, uint32_t m, uint32_t f)
{
    rs_split *P = net->pt.state;
    const rs_msg *msg = &net->msgs[m];
    rs_part_send rec = { .start = msg->start, .bytes = msg->bytes, .tag = msg->tag, .serial = net->flows[f].serial,
                         .home = P->comm.rank, .home_id = f, .src = msg->src, .dst = msg->dst, .cb = RS_NONE };
    if (msg->pipe) { /* a relay's network-leg chunk, as it starts */
        rec.nchunks = msg->nchunks;
        rec.chunk = net->flows[f].chunk;
        rec.home_msg = m;
        rec.leg_src = msg->leg_src;
    }
    if (msg->done && (rec.cb = rs_net_cb_find(net, msg->done, msg->ctx)) == RS_NONE) {
        rs_sim_stop(net->sim, RS_EINTERNAL); /* its done callback has no name the others know */
        return;
    }
    /* Every other process: the receiver's completes it, the ones between
     * (a spine's) see its frames. */
    for (uint32_t r = 0; r < P->comm.ranks; r++) {
        struct part_out *o = &P->out[r];
        if (r == P->comm.rank)
            continue;
        if (rs_array_reserve(&o->s, &o->caps, o->ns + 1, sizeof *o->s, 64) != RS_OK) {
            rs_sim_stop(net->sim, RS_ENOMEM);
            return;
        }
        o->s[o->ns++] = rec;
    }
}

static void split_ship_timer(rs_net *net, uint32_t node, rs_time t, uint64_t key, uint32_t cb, uint64_t arg)
{
    rs_split *P = net->pt.state;
    struct part_out *o = &P->out[P->node_rank[node]];
    if (t < P->win_end) {
        rs_sim_stop(net->sim, RS_EINTERNAL); /* within the window: the other process may be past it */
        return;
    }
    if (rs_array_reserve(&o->e, &o->cape, o->ne + 1, sizeof *o->e, 64) != RS_OK) {
        rs_sim_stop(net->sim, RS_ENOMEM);
        return;
    }
    o->e[o->ne++] = (part_timer){ t, key, arg, cb, 0 };
    if (t < P->ship_min)
        P->ship_min = t;
}

static int ids_push(struct part_ids *l, uint32_t id)
{
    if (rs_array_reserve(&l->v, &l->cap, l->n + 1, sizeof *l->v, 256) != RS_OK)
        return RS_ENOMEM;
    l->v[l->n++] = id;
    return RS_OK;
}

/* Reuse of the records of a flow made by a process's own event. Its
 * packets are made and freed in several processes, so no one of them can
 * tell alone when the last is gone, as a serial run's pkts_live does.
 * Every process counts what it makes and frees of the flow; a mirror
 * reports its counts to the flow's home after each window in which it
 * made a packet (always) or freed one and holds none (else later: a
 * report of frees may lag, one of makes never does). The home adds them
 * to its own: once it is done sending (every byte acknowledged), holds
 * no packet and the frees reach the makes, no packet of the flow is left
 * anywhere (the reported frees are at most the true ones, the makes
 * exact) and none will be made (a receiver answers only packets, and the
 * sender is done). Then the home reuses its records and tells every
 * process to reuse its mirror, in the next window's exchange, ahead of
 * any send that reuses the id. A flow is on the touched list (part_mark)
 * from a change until it has nothing left to report or check. */
static void flow_touched(rs_net *net, uint32_t f)
{
    rs_split *P = net->pt.state;
    rs_flow *fl = &net->flows[f];
    if (!P || fl->part_mark)
        return;
    fl->part_mark = 1;
    if (ids_push(&P->touched, f) != RS_OK)
        rs_sim_stop(net->sim, RS_ENOMEM);
}

/* The touched list's flows of one kind (own: this process is their home,
 * else mirrors), each handed to one(), which says whether it stays; stale
 * entries (reused since, mirror_reuse) go, the other kind stays. */
static int touched_walk(rs_net *net, int own, int (*one)(rs_net *net, rs_flow *f, uint32_t id, int *keep))
{
    rs_split *P = net->pt.state;
    size_t n = 0;
    int rc = RS_OK;
    for (size_t i = 0; i < P->touched.n; i++) {
        uint32_t id = P->touched.v[i];
        rs_flow *f = &net->flows[id];
        if (f->freed || !f->part_mark)
            continue;
        int keep = 1;
        if (rc == RS_OK && (f->home == P->comm.rank) == own)
            rc = one(net, f, id, &keep);
        if (keep)
            P->touched.v[n++] = id;
    }
    P->touched.n = n;
    return rc;
}

static void split_packet(rs_net *net, uint32_t f, rs_pkt *pkt)
{
    rs_flow *fl = &net->flows[f];
    if (pkt)
        pkt->own = fl->home != RS_NONE;
    if (fl->home == RS_NONE)
        return; /* the same everywhere: nothing to count */
    if (pkt)
        fl->pmade++;
    else
        fl->pfreed++;
    flow_touched(net, f);
}

/* After a window's run, a mirror's report to its home. */
static int report_one(rs_net *net, rs_flow *f, uint32_t id, int *keep)
{
    (void)id;
    uint32_t made = f->pmade - f->rmade, freed = f->pfreed - f->rfreed;
    if (made || (freed && f->pkts_live == 0)) {
        struct part_rep_out *o = &((rs_split *)net->pt.state)->rep[f->home];
        if (rs_array_reserve(&o->v, &o->cap, o->n + 1, sizeof *o->v, 256) != RS_OK)
            return RS_ENOMEM;
        o->v[o->n++] = (part_rep){ f->home_id, made, freed, 0 };
        f->rmade = f->pmade;
        f->rfreed = f->pfreed;
    }
    *keep = !(f->pkts_live == 0 && f->rfreed == f->pfreed);
    if (!*keep)
        f->part_mark = 0; /* all told: its next packet puts it back */
    return RS_OK;
}

/* Flow id's records handed back here: the flow, and its message unless
 * this is its destination's process, whose completion handed it back. */
static void records_reuse(rs_net *net, rs_flow *f, uint32_t id)
{
    if (!rs_part_owns_node(net, f->dst)) {
        if (f->chunk != RS_NONE)
            rs_net_relay_flow_gone(net, f->msg); /* a relay's: the message goes with its last chunk */
        else
            rs_net_msg_reuse(net, f->msg);
    }
    rs_sack_release(net, f);
    rs_flow_release(net, id);
}

/* After the exchange, an own flow: reused here if its last packet is gone
 * everywhere, and every other process is told. */
static int reuse_one(rs_net *net, rs_flow *f, uint32_t id, int *keep)
{
    rs_split *P = net->pt.state;
    *keep = 0;
    f->part_mark = 0; /* not gone yet: its next change or report puts it back */
    int sent = f->tx_done || (!f->reliable && f->max_sent >= f->npkts);
    if (!sent || f->active || f->pkts_live != 0 || f->pmade + f->rmade != f->pfreed + f->rfreed)
        return RS_OK;
    for (uint32_t r = 0; r < P->comm.ranks; r++)
        if (r != P->comm.rank && ids_push(&P->dead[r], id) != RS_OK)
            return RS_ENOMEM;
    records_reuse(net, f, id);
    return RS_OK;
}

/* Process `home` reused its flow home_id: so does the mirror here. */
static int mirror_reuse(rs_net *net, uint32_t home, uint32_t home_id)
{
    rs_split *P = net->pt.state;
    struct part_mir *mr = &P->mir[home];
    uint32_t id = home_id < mr->n ? mr->id[home_id] : RS_NONE;
    if (id == RS_NONE)
        return RS_EINTERNAL;
    mr->id[home_id] = RS_NONE;
    rs_flow *f = &net->flows[id];
    if (f->pkts_live != 0)
        return RS_EINTERNAL;
    f->part_mark = 0; /* an entry left on the touched list is skipped */
    records_reuse(net, f, id);
    return RS_OK;
}

/* Flow ids a process may name in a message: a mirror table of that many
 * ids is 256 MiB; a process holding more flows at once would need tens
 * of GiB for them. */
#define PART_FLOW_IDS (1u << 26)

/* In table mr (of a process `home`): its id `id` (below PART_FLOW_IDS)
 * is `local` here. */
static int mir_put(struct part_mir *mr, uint32_t id, uint32_t local)
{
    if (id >= mr->n) {
        if (rs_array_reserve32((void **)&mr->id, &mr->cap, id + 1, sizeof *mr->id, 1024) != RS_OK)
            return RS_ENOMEM;
        for (uint32_t i = mr->n; i <= id; i++)
            mr->id[i] = RS_NONE;
        mr->n = id + 1;
    }
    mr->id[id] = local;
    return RS_OK;
}

/* A mirror made here of process `home`'s flow `id`. */
static int mir_set(rs_split *P, uint32_t home, uint32_t id, uint32_t local)
{
    return mir_put(&P->mir[home], id, local);
}

/* A relayed message's network-leg chunk shipped by process `from`: its
 * flow here, under the message chunk 0 made (msg.c rs_net_mirror_chunk).
 * Chunks come in order, each in the window its home started it. */
static int bad_msg(rs_split *P, uint32_t from, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int mirror_chunk(rs_net *net, rs_split *P, uint32_t from, const rs_part_send *sr)
{
    struct part_mir *mm = &P->mmir[from];
    uint32_t m = sr->home_msg < mm->n ? mm->id[sr->home_msg] : RS_NONE;
    uint32_t f = sr->home_msg < PART_FLOW_IDS && (sr->chunk == 0) == (m == RS_NONE) ? rs_net_mirror_chunk(net, sr, &m)
                                                                                 : RS_NONE;
    if (f == RS_NONE)
        return bad_msg(P, from, "chunk %u of %u of its message %u from GPU %u to %u of %llu bytes, which cannot be "
                       "mirrored", sr->chunk, sr->nchunks, sr->home_msg, sr->src, sr->dst,
                       (unsigned long long)sr->bytes);
    int rc = mir_put(mm, sr->home_msg, sr->chunk + 1 == sr->nchunks ? RS_NONE : m);
    return rc == RS_OK ? mir_set(P, sr->home, sr->home_id, f) : rc;
}

/* The id here of a shipped frame's flow (RS_NONE: none). */
static uint32_t frame_flow(const rs_split *P, uint32_t home, uint32_t fid)
{
    if (home == RS_NONE || home == P->comm.rank)
        return fid;
    if (home >= P->comm.ranks)
        return RS_NONE;
    const struct part_mir *mr = &P->mir[home];
    return fid < mr->n ? mr->id[fid] : RS_NONE;
}

/* What was wrong with a message from process `from`, into P->why (the
 * first only); RS_EFORMAT. */
static int bad_msg(rs_split *P, uint32_t from, const char *fmt, ...)
{
    if (P->why[0])
        return RS_EFORMAT;
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(P->why, sizeof P->why, "a window message from rank %u: %s", from, what);
    return RS_EFORMAT;
}

/* A window message's header at b (avail bytes left of what came), checked:
 * its wire header, and exactly the bytes its counts announce. */
static int window_hdr(rs_split *P, const char *b, size_t avail, part_hdr *h)
{
    if (rs_wire_read(b, avail, RS_WIRE_WINDOW, UINT32_MAX, P->comm.ranks, &h->w, P->why, sizeof P->why) != RS_OK)
        return RS_EFORMAT;
    if (avail < sizeof *h)
        return bad_msg(P, h->w.from, "%zu bytes, expected at least %zu", avail, sizeof *h);
    memcpy(h, b, sizeof *h);
    uint64_t want = PART_HDR_ROOM - sizeof h->w + (uint64_t)h->nd * sizeof(uint32_t) +
                    (uint64_t)h->ns * sizeof(rs_part_send) + (uint64_t)h->ne * sizeof(part_timer) +
                    (uint64_t)h->nf * sizeof(part_frame) + (uint64_t)h->nr * sizeof(part_rep);
    if (h->w.from == P->comm.rank)
        return bad_msg(P, h->w.from, "its header names this rank as the sender");
    if (h->w.len != want)
        return bad_msg(P, h->w.from, "%llu bytes after its header, its counts make %llu", (unsigned long long)h->w.len,
                       (unsigned long long)want);
    return RS_OK;
}

/* A shipped frame, checked before it arrives here: on a cut link into a
 * node of this process, not before now, of a kind and priority that
 * exist, between GPUs that exist, of a flow this process holds (its id
 * here into pkt->flow). */
static int frame_check(rs_net *net, rs_split *P, uint32_t from, rs_time t, uint32_t home, uint32_t fid, rs_pkt *pkt)
{
    /* Checked from the receiving end: the sender's port is another
     * process's, whose page this one gave back. */
    uint32_t L = pkt->link, v = pkt->to_node, to = pkt->to_port;
    const rs_node *nd = v < net->nnodes && rs_part_owns_node(net, v) ? &net->nodes[v] : NULL;
    if (!nd || to < nd->port_base || to - nd->port_base >= nd->nports || !net->ports[to].cut ||
        net->ports[to].peer_port != L)
        return bad_msg(P, from, "a frame on port %u, not a link into this rank", L);
    if (t < rs_sim_now(net->sim) || t >= RS_TIME_MAX)
        return bad_msg(P, from, "a frame arriving at %llu ps, before this window", (unsigned long long)t);
    /* A link's frames arrive one after the other (rs_sim_at_once: never
     * two at one instant). */
    if (!P->arr_next && !(P->arr_next = calloc(net->nports, sizeof *P->arr_next)))
        return RS_ENOMEM;
    if (t < P->arr_next[L])
        return bad_msg(P, from, "a frame arriving at %llu ps over port %u, not after the one before it",
                       (unsigned long long)t, L);
    /* (A NAK's payload field holds its SACK PSN.) */
    if (pkt->type > RS_PKT_PFC || pkt->prio >= RS_NPRIO || (pkt->type == RS_PKT_DATA && pkt->payload > pkt->wire))
        return bad_msg(P, from, "a frame of type %u, priority %u, %u bytes of payload in %u", pkt->type, pkt->prio,
                       pkt->payload, pkt->wire);
    if (pkt->type == RS_PKT_PFC) { /* hop by hop: no flow */
        if (home != RS_NONE)
            return bad_msg(P, from, "a PFC frame of flow %u of rank %u", fid, home);
        pkt->flow = RS_NONE;
        P->arr_next[L] = t + 1;
        return RS_OK;
    }
    pkt->flow = frame_flow(P, home, fid);
    const rs_flow *f = pkt->flow < net->nflows ? &net->flows[pkt->flow] : NULL;
    if (!f || f->freed || pkt->src >= net->gpus || pkt->dst >= net->gpus ||
        pkt->psn > f->npkts + (pkt->type == RS_PKT_DATA ? 0 : 1) || (pkt->type == RS_PKT_DATA && pkt->psn == f->npkts))
        return bad_msg(P, from, "a frame of flow %u of rank %u, PSN %u, from GPU %u to %u, not a flow here", fid,
                       home, pkt->psn, pkt->src, pkt->dst);
    P->arr_next[L] = t + 1;
    return RS_OK;
}

/* n bytes of v at b (v may be NULL when n is 0); the end. */
static char *put_bytes(char *b, const void *v, size_t n)
{
    if (n)
        memcpy(b, v, n);
    return b + n;
}

/* Ship this window's frames, schedule the ones shipped here, and agree
 * on the next window: v[0] is this process's earliest next event or
 * shipped frame, v[1] 1 while it has not failed, v[2..) what the
 * timeline's sampler asks (rs_net_tl_window_vals); all come back as the
 * minimum over the processes. */
enum { NV = 2 + RS_NET_TL_NV };
static int exchange(rs_net *net, uint64_t v[NV])
{
    rs_split *P = net->pt.state;
    uint32_t R = P->comm.ranks;
    void **send = calloc(R, sizeof *send);
    size_t *len = calloc(R, sizeof *len);
    char *own = calloc(R, 1); /* send[r] was allocated here */
    int rc = send && len && own ? RS_OK : RS_ENOMEM;
    for (uint32_t r = 0; rc == RS_OK && r < R; r++) {
        struct part_out *o = &P->out[r];
        struct part_rep_out *rp = &P->rep[r];
        struct part_ids *dd = &P->dead[r];
        if (o->n + o->ns + o->ne + rp->n + dd->n == 0)
            continue; /* nothing: no message to this process */
        size_t n = PART_HDR_ROOM + dd->n * sizeof *dd->v + o->ns * sizeof *o->s + o->ne * sizeof *o->e +
                   o->n * sizeof *o->v + rp->n * sizeof *rp->v;
        part_hdr h = { rs_wire_make(RS_WIRE_WINDOW, P->comm.rank, n - sizeof h.w), (uint32_t)dd->n, (uint32_t)o->ns,
                       (uint32_t)o->ne, (uint32_t)o->n, (uint32_t)rp->n };
        if (o->ns + o->ne + rp->n + dd->n == 0) {
            /* Frames alone, the common window: sent from where they are,
             * the header in the room kept ahead of them. */
            memset(&o->v[0], 0, sizeof o->v[0]);
            memcpy(&o->v[0], &h, sizeof h);
            send[r] = o->v;
            len[r] = n;
            o->n = 0;
            continue;
        }
        char *b = send[r] = malloc(n);
        if (!b) {
            rc = RS_ENOMEM;
            break;
        }
        own[r] = 1;
        memset(b, 0, PART_HDR_ROOM);
        memcpy(b, &h, sizeof h);
        b += PART_HDR_ROOM;
        b = put_bytes(b, dd->v, dd->n * sizeof *dd->v);
        b = put_bytes(b, o->s, o->ns * sizeof *o->s);
        b = put_bytes(b, o->e, o->ne * sizeof *o->e);
        b = put_bytes(b, o->n ? o->v + 1 : NULL, o->n * sizeof *o->v);
        put_bytes(b, rp->v, rp->n * sizeof *rp->v);
        len[r] = n;
        o->n = o->ns = o->ne = 0;
        rp->n = dd->n = 0;
    }
    void *recv = NULL;
    size_t rlen = 0;
    if (rc == RS_OK)
        rc = P->comm.exchange(P->comm.ctx, send, len, v, NV, &recv, &rlen);
    for (uint32_t r = 0; send && own && r < R; r++)
        if (own[r])
            free(send[r]);
    free(send);
    free(len);
    free(own);
    /* Each sender's part, in process order: the flows it reused (their
     * mirrors go before a send reuses the id), its sends' mirrors (the
     * frames may be theirs), its timers, its frames, then its mirrors'
     * reports (reuse_one looks at their flows after the round). */
    const char *b = recv, *end = recv ? b + rlen : NULL;
    while (rc == RS_OK && b && b < end) {
        part_hdr h;
        if ((rc = window_hdr(P, b, (size_t)(end - b), &h)) != RS_OK)
            break;
        const char *next = b + sizeof h.w + h.w.len;
        b += PART_HDR_ROOM;
        uint32_t from = h.w.from;
        for (uint64_t i = 0; rc == RS_OK && i < h.nd; i++, b += sizeof(uint32_t)) {
            uint32_t id;
            memcpy(&id, b, sizeof id);
            if (mirror_reuse(net, from, id) != RS_OK)
                rc = bad_msg(P, from, "flow %u to reuse has no mirror here", id);
        }
        for (uint64_t i = 0; rc == RS_OK && i < h.ns; i++, b += sizeof(rs_part_send)) {
            rs_part_send sr;
            memcpy(&sr, b, sizeof sr);
            if (sr.home != from || sr.home_id >= PART_FLOW_IDS) {
                rc = bad_msg(P, from, "a send of rank %u's flow %u", sr.home, sr.home_id);
                break;
            }
            P->own_ids = 1;
            if (sr.nchunks) {
                rc = mirror_chunk(net, P, from, &sr);
                continue;
            }
            uint32_t f = rs_net_mirror_send(net, &sr);
            rc = f == RS_NONE ? bad_msg(P, from, "a send from GPU %u to %u of %llu bytes that cannot be mirrored",
                                        sr.src, sr.dst, (unsigned long long)sr.bytes)
                              : mir_set(P, sr.home, sr.home_id, f);
        }
        for (uint64_t i = 0; rc == RS_OK && i < h.ne; i++, b += sizeof(part_timer)) {
            part_timer e;
            memcpy(&e, b, sizeof e);
            if (e.t < rs_sim_now(net->sim) || !rs_net_cb_named(net, e.cb)) {
                rc = bad_msg(P, from, "a timer of callback %u at %llu ps", e.cb, (unsigned long long)e.t);
                break;
            }
            rs_net_timer_at_key(net, e.t, e.key, e.cb, e.arg);
        }
        for (uint64_t i = 0; rc == RS_OK && i < h.nf; i++, b += sizeof(part_frame)) {
            rs_time t;
            rs_pkt *pkt = rs_pool_get(&net->pkts);
            if (!pkt) {
                rc = RS_ENOMEM;
                break;
            }
            memcpy(&t, b + offsetof(part_frame, t), sizeof t);
            memcpy(pkt, b + offsetof(part_frame, pkt), sizeof *pkt);
            uint32_t home, fid;
            frame_home_get(pkt, &home, &fid);
            pkt->next = NULL;
            if ((rc = frame_check(net, P, from, t, home, fid, pkt)) != RS_OK) {
                rs_pool_put(&net->pkts, pkt);
                break;
            }
            if (home != RS_NONE) {
                net->flows[pkt->flow].pkts_live++; /* it lives here now */
                flow_touched(net, pkt->flow);
            }
            rs_fabric_arrival(net, pkt, t);
        }
        for (uint64_t i = 0; rc == RS_OK && i < h.nr; i++, b += sizeof(part_rep)) {
            part_rep rp;
            memcpy(&rp, b, sizeof rp);
            rs_flow *fl = rp.home_id < net->nflows ? &net->flows[rp.home_id] : NULL;
            if (!fl || fl->freed || fl->home != P->comm.rank) {
                rc = bad_msg(P, from, "a report for flow %u, not one of this rank's", rp.home_id);
                break;
            }
            fl->rmade += rp.made;
            fl->rfreed += rp.freed;
            flow_touched(net, rp.home_id);
        }
        b = next;
    }
    free(recv);
    if (rc == RS_OK)
        rc = touched_walk(net, 1, reuse_one);
    return rc;
}

/* -- the merge on rank 0 ---------------------------------------------------- */

static char *tail_pack(rs_net *net, int status, size_t *len)
{
    rs_split *P = net->pt.state;
    part_tail h;
    memset(&h, 0, sizeof h);
    h.st = net->st;
    h.events = rs_sim_events_run(net->sim);
    h.events_shared = rs_sim_events_shared(net->sim);
    h.frames_sent = P->st.frames_sent;
    h.status = status;
    /* Rank 0's own ports and histogram stay where they are: its message
     * to itself carries their counts alone (fct_n). No process sends its
     * completion times: their percentiles were selected together
     * (fct_together), or they are in the histogram. */
    int ship = P->comm.rank != 0;
    for (uint32_t i = 0; ship && i < net->nports; i++)
        h.nports += P->port_mine[i];
    const struct rs_fct_acc *a = net->fct;
    if (a) {
        h.fct_n = a->n;
        h.fct_min = a->min;
        h.fct_max = a->max;
        h.fct_sum = a->sum;
        h.fct_hist = ship && a->hist != NULL && a->n > 0;
    }
    h.msgs_relayed = net->msgs_relayed;
    size_t n = sizeof(rs_wire) + sizeof h + h.nports * (sizeof(uint64_t) + sizeof(rs_port_count)) +
               (h.fct_hist ? FCT_BUCKETS * sizeof(uint64_t) : 0);
    char *b = malloc(n), *w = b;
    if (!b)
        return NULL;
    rs_wire wh = rs_wire_make(RS_WIRE_TAIL, P->comm.rank, n - sizeof wh);
    memcpy(w, &wh, sizeof wh);
    w += sizeof wh;
    memcpy(w, &h, sizeof h);
    w += sizeof h;
    for (uint32_t i = 0; h.nports && i < net->nports; i++) {
        if (!P->port_mine[i])
            continue;
        uint64_t id = i;
        rs_port_count c;
        rs_port_count_get(&net->ports[i], &c);
        memcpy(w, &id, sizeof id);
        memcpy(w + sizeof id, &c, sizeof c);
        w += sizeof id + sizeof c;
    }
    if (h.fct_hist)
        memcpy(w, a->hist, FCT_BUCKETS * sizeof(uint64_t));
    *len = n;
    return b;
}

static void stats_add(rs_net_stats *to, const rs_net_stats *s)
{
    /* Messages are counted where their source is. */
    to->msgs += s->msgs;
    to->msg_bytes += s->msg_bytes;
    to->msgs_done += s->msgs_done;
    to->pkts_sent += s->pkts_sent;
    to->pkts_delivered += s->pkts_delivered;
    to->pkts_dropped += s->pkts_dropped;
    to->pkts_retransmitted += s->pkts_retransmitted;
    to->data_pkts += s->data_pkts;
    to->ctrl_pkts += s->ctrl_pkts;
    to->timeouts += s->timeouts;
    to->naks += s->naks;
    to->packet_hops += s->packet_hops;
    to->hb_bytes += s->hb_bytes;
    to->nic_bytes += s->nic_bytes;
    to->pfc_pauses_sent += s->pfc_pauses_sent;
    to->pfc_resumes_sent += s->pfc_resumes_sent;
    to->pfc_paused_ps += s->pfc_paused_ps;
    to->ecn_marked += s->ecn_marked;
    to->cnps_sent += s->cnps_sent;
    to->cnps_received += s->cnps_received;
    to->goodput_bytes += s->goodput_bytes;
    if (s->last_activity > to->last_activity)
        to->last_activity = s->last_activity;
}

/* After windows 1, 2, 4, ..., FCT_CHECK and then every FCT_CHECK
 * windows the ranks add up their completions: once there
 * are more than the serial run keeps, its percentiles come from the
 * histogram, so each rank makes its own and lets its kept times go. A
 * rank then holds about its share of the kept list until then, not a
 * whole one of its own (32 MiB). Collective (the window count is every
 * rank's). */
#define FCT_CHECK 1024u

/* Every process's completions so far into P->fct_count, their sum into
 * P->fct_total: one all-reduce (each process's count in its own slot,
 * zeros elsewhere; the maxima are every count). Collective. */
static int fct_counts(rs_net *net)
{
    rs_split *P = net->pt.state;
    const rs_net_comm *c = &P->comm;
    memset(P->fct_count, 0, c->ranks * sizeof *P->fct_count);
    P->fct_count[c->rank] = net->fct ? net->fct->n : 0;
    int rc = c->allreduce(c->ctx, P->fct_count, c->ranks, 1);
    P->fct_total = 0;
    for (uint32_t r = 0; rc == RS_OK && r < c->ranks; r++)
        P->fct_total += P->fct_count[r];
    return rc;
}

static int fct_check(rs_net *net)
{
    rs_split *P = net->pt.state;
    if (P->fct_hist)
        return RS_OK;
    int rc = fct_counts(net);
    if (rc != RS_OK || P->fct_total <= net->msg_times_keep)
        return rc;
    P->fct_hist = 1;
    if (!net->fct && !(net->fct = calloc(1, sizeof *net->fct)))
        return RS_ENOMEM; /* none here yet: the next goes into the histogram */
    return rs_fct_histogram(net);
}

static int time_cmp(const void *x, const void *y)
{
    rs_time a = *(const rs_time *)x, b = *(const rs_time *)y;
    return (a > b) - (a < b);
}

/* The median and 99th percentile of every process's completion times,
 * found together without moving them: each process sorts its own, and a
 * bisection over the times, one all-reduce a step (each process's count
 * at or below the probe in its own slot, the maximum is every count),
 * narrows both to the smallest time with at least their nearest rank of
 * all the times at or below it: what the serial run selects from the
 * same multiset. Past the kept list (more completions in all than a
 * serial run keeps) the histogram holds them instead: each process makes
 * its own, and rank 0 adds the others' (fct_pool). Before, every process
 * sent rank 0 its kept times, up to 32 MiB, and a copy of them in its
 * message: a 256-GPU llama2-7b replay split at -np 2 took 105 MiB per
 * rank against 44.5 serially (docs/parallel.md, "Memory"). Collective. */
static int fct_together(rs_net *net)
{
    rs_split *P = net->pt.state;
    const rs_net_comm *c = &P->comm;
    uint32_t R = c->ranks, me = c->rank;
    struct rs_fct_acc *a = net->fct;
    uint64_t *v = calloc(2 * (size_t)R, sizeof *v);
    if (!v)
        return RS_ENOMEM;
    /* How many each has; then the earliest and (as its complement) the
     * latest of them all. */
    int rc = fct_counts(net);
    v[0] = a && a->n ? a->min : RS_TIME_MAX;
    v[1] = a && a->n ? RS_TIME_MAX - a->max : RS_TIME_MAX;
    if (rc == RS_OK)
        rc = c->allreduce(c->ctx, v, 2, 0);
    rs_time lo[2] = { v[0], v[0] }, hi[2] = { RS_TIME_MAX - v[1], RS_TIME_MAX - v[1] };
    uint64_t N = P->fct_total;
    if (rc != RS_OK || N == 0 || N > net->msg_times_keep) {
        free(v);
        return rc == RS_OK && N > net->msg_times_keep ? rs_fct_histogram(net) : rc;
    }
    /* Every process holds all its times here (its own count is at most
     * the whole's, which fits the kept list). */
    size_t n = a ? net->ndone : 0;
    rs_time *t = net->done_fct;
    if (n)
        qsort(t, n, sizeof *t, time_cmp);
    const uint64_t k[2] = { rs_fct_rank(N, 0.50), rs_fct_rank(N, 0.99) };
    while (rc == RS_OK && (lo[0] < hi[0] || lo[1] < hi[1])) {
        rs_time mid[2];
        memset(v, 0, 2 * (size_t)R * sizeof *v);
        for (int q = 0; q < 2; q++) {
            mid[q] = lo[q] + (hi[q] - lo[q]) / 2;
            size_t l = 0, h = n; /* how many of its own are at most mid */
            while (l < h) {
                size_t m = l + (h - l) / 2;
                if (t[m] <= mid[q])
                    l = m + 1;
                else
                    h = m;
            }
            v[(size_t)q * R + me] = l;
        }
        if ((rc = c->allreduce(c->ctx, v, 2 * (size_t)R, 1)) != RS_OK)
            break;
        for (int q = 0; q < 2; q++) {
            uint64_t at = 0;
            for (uint32_t r = 0; r < R; r++)
                at += v[(size_t)q * R + r];
            if (lo[q] >= hi[q])
                continue;
            if (at >= k[q])
                hi[q] = mid[q];
            else
                lo[q] = mid[q] + 1;
        }
    }
    P->fct_p50 = lo[0];
    P->fct_p99 = lo[1];
    free(v);
    return rc;
}

/* Pool every process's completion statistics into rank 0's, as the
 * serial run would hold them: count, sum, extremes, and the percentiles
 * fct_together selected, or the histogram of all of them. Each process's
 * count is the one it gave fct_together. */
static int fct_pool(rs_net *net, const part_tail *const *t, const uint64_t *const *hist, uint32_t R)
{
    rs_split *P = net->pt.state;
    if (P->fct_total == 0)
        return RS_OK;
    struct rs_fct_acc *a = net->fct;
    if (!a && !(a = net->fct = calloc(1, sizeof *a)))
        return RS_ENOMEM;
    int histo = P->fct_total > net->msg_times_keep;
    if (histo && !a->hist && !(a->hist = calloc(FCT_BUCKETS, sizeof *a->hist)))
        return RS_ENOMEM; /* rank 0 completed none itself */
    for (uint32_t r = 1; r < R; r++) {
        const part_tail *h = t[r];
        if (h->fct_n == 0)
            continue;
        if (a->n == 0 || h->fct_min < a->min)
            a->min = h->fct_min;
        if (h->fct_max > a->max)
            a->max = h->fct_max;
        a->n += h->fct_n;
        a->sum += h->fct_sum;
        if (histo)
            for (size_t b = 0; b < FCT_BUCKETS; b++)
                a->hist[b] += hist[r][b];
    }
    if (!histo) {
        a->pooled = 1;
        a->p50 = P->fct_p50;
        a->p99 = P->fct_p99;
    }
    return RS_OK;
}

/* The node of port i, from the nodes' port ranges (rank 0 reads no
 * other process's port: their pages were given back). */
static uint32_t port_node(const rs_net *net, uint32_t i)
{
    uint32_t lo = 0, hi = net->nnodes; /* the last node whose first port is at most i */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (net->nodes[mid].port_base <= i)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Process r's end-of-run message at b (n bytes), checked before a byte
 * of it is used: its wire header, exactly the bytes its counts announce
 * (a multiple of 8: the next one's times stay aligned), and ports that
 * exist and are r's. Its counts into *h. */
static int tail_check(const rs_net *net, rs_split *P, const char *b, size_t n, uint32_t r, part_tail *h)
{
    rs_wire w;
    if (rs_wire_read(b, n, RS_WIRE_TAIL, r, P->comm.ranks, &w, P->why, sizeof P->why) != RS_OK)
        return RS_EFORMAT;
    const char *what = NULL;
    if (w.len != n - sizeof w || w.len < sizeof *h || n % 8)
        what = "its length is not what its header says";
    if (!what) {
        memcpy(h, b + sizeof w, sizeof *h);
        size_t per = sizeof(uint64_t) + sizeof(rs_port_count), rest = (size_t)w.len - sizeof *h;
        size_t hist = h->fct_hist ? FCT_BUCKETS * sizeof(uint64_t) : 0;
        if (h->nports > net->nports || rest != h->nports * per + hist || h->fct_hist > 1)
            what = "its counts do not add up to its length";
        else if (h->fct_n != P->fct_count[r] ||
                 (r && h->fct_hist != (h->fct_n && P->fct_total > net->msg_times_keep)))
            what = "its completions are not what it counted before";
        for (uint64_t k = 0; !what && k < h->nports; k++) {
            uint64_t id;
            memcpy(&id, b + sizeof w + sizeof *h + k * per, sizeof id);
            if (id >= net->nports || P->node_rank[port_node(net, (uint32_t)id)] != r)
                what = "it names a port that is not its own";
        }
    }
    if (what)
        snprintf(P->why, sizeof P->why, "an end-of-run message from rank %u: %zu bytes; %s", r, n, what);
    return what ? RS_EFORMAT : RS_OK;
}

static int merge(rs_net *net, char *all, const size_t *len, int *status)
{
    rs_split *P = net->pt.state;
    uint32_t R = P->comm.ranks;
    part_tail *hd = calloc(R, sizeof *hd); /* copied out: the buffer keeps no alignment for it */
    const part_tail **t = calloc(R, sizeof *t);
    const uint64_t **hist = calloc(R, sizeof *hist);
    int rc = hd && t && hist ? RS_OK : RS_ENOMEM;
    uint64_t events = 0;
    P->st.frames_all = 0;
    /* The others' ports' counters, beside this process's ports (whose
     * pages for theirs stay given back): pages of it are touched only for
     * the ports that come. */
    if (rc == RS_OK && !P->merged && !(P->merged = calloc(net->nports ? net->nports : 1, sizeof *P->merged)))
        rc = RS_ENOMEM;
    size_t off = 0;
    for (uint32_t r = 0; rc == RS_OK && r < R; off += len[r], r++) {
        const char *b = all + off;
        if ((rc = tail_check(net, P, b, len[r], r, &hd[r])) != RS_OK)
            break;
        b += sizeof(rs_wire);
        const part_tail *h = t[r] = &hd[r];
        if (*status == RS_OK)
            *status = h->status;
        events += h->events - (r ? h->events_shared : 0);
        P->st.frames_all += h->frames_sent;
        b += sizeof *h;
        for (uint64_t k = 0; k < h->nports; k++, b += sizeof(uint64_t) + sizeof(rs_port_count)) {
            uint64_t id;
            memcpy(&id, b, sizeof id);
            memcpy(&P->merged[id], b + sizeof id, sizeof *P->merged);
        }
        hist[r] = h->fct_hist ? (const uint64_t *)(const void *)b : NULL;
        if (r) {
            stats_add(&net->st, &h->st);
            net->msgs_relayed += h->msgs_relayed;
        }
    }
    if (rc == RS_OK)
        rc = fct_pool(net, t, hist, R);
    if (rc == RS_OK)
        net->pt.merged = P->merged;
    if (rc == RS_OK)
        rs_sim_set_events_run(net->sim, events);
    free(hd);
    free(t);
    free(hist);
    return rc;
}

/* rs_net_run of a partitioned network: the windows, then the merge. */
static int split_run(rs_net *net, rs_time until)
{
    if (until != RS_TIME_MAX)
        return RS_EINVAL;
    rs_split *P = net->pt.state;
    rs_sim *sim = net->sim;
    const rs_net_comm *c = &P->comm;
    /* The pages of ports that are only other processes' go back: from
     * here on no process touches another's ports (rank 0 reports theirs
     * from the counters they send at the end; docs/parallel.md,
     * "Memory"). The setup before (the timeline's and the captures' port
     * lists) read every port. */
    rs_ports_release(net, P->port_mine);
    int rc = RS_OK;
    /* The first window's start; then each exchange brings the next. */
    uint64_t v[NV] = { rs_sim_next_time(sim), rs_sim_status(sim) == RS_OK };
    double w0 = wall();
    rc = c->allreduce(c->ctx, v, 2, 0);
    P->st.sync_s += wall() - w0;
    while (rc == RS_OK && v[1] && v[0] != RS_TIME_MAX) {
        rs_time end = v[0] > RS_TIME_MAX - P->lookahead ? RS_TIME_MAX : v[0] + P->lookahead;
        rs_time cap = rs_net_tl_window_cap(net, v[0]); /* a timeline's sampler decides at window ends */
        if (cap < end)
            end = cap;
        P->ship_min = RS_TIME_MAX;
        P->win_end = end;
        rs_sim_run_before(sim, end);
        P->st.windows++;
        rs_time next = rs_sim_next_time(sim);
        v[0] = next < P->ship_min ? next : P->ship_min;
        v[1] = rs_sim_status(sim) == RS_OK;
        rs_net_tl_window_vals(net, v + 2);
        if ((rc = touched_walk(net, 0, report_one)) != RS_OK)
            break;
        w0 = wall();
        rc = exchange(net, v);
        uint64_t w = P->st.windows;
        if (rc == RS_OK && (w % FCT_CHECK == 0 || (w < FCT_CHECK && (w & (w - 1)) == 0)))
            rc = fct_check(net);
        P->st.sync_s += wall() - w0;
        rs_time tick = rc == RS_OK ? rs_net_tl_window_end(net, v + 2, v[0]) : RS_TIME_MAX;
        if (tick < v[0])
            v[0] = tick;
    }
    P->st.events_mine = rs_sim_events_run(sim);
    /* Every process ends at the last event of any of them. */
    uint64_t last[1] = { rs_sim_now(sim) };
    if (rc == RS_OK && (rc = c->allreduce(c->ctx, last, 1, 1)) == RS_OK)
        rs_sim_advance(sim, last[0]);
    rs_fabric_settle(net);
    /* Before the gather (rank 0 merges the parts after it, and its
     * counters become every process's): the timeline's last scan, of this
     * process's counters, and the capture's part closed. */
    rs_net_timeline_stop(net);
    rs_capture_part_close(net);
    if (rc != RS_OK)
        return rc;
    /* Idle: every frame this process received was delivered or dropped. */
    int status = rs_sim_status(sim);
    if (status == RS_OK && (rs_pool_live(&net->pkts) != 0 || rs_pool_live(&net->timers) != 0))
        status = RS_EINTERNAL;
    rs_pool_trim(&net->pkts); /* before the merge's buffers (docs/parallel.md, "Memory") */
    if ((rc = fct_together(net)) != RS_OK)
        return rc; /* the others wait in its all-reduce: MPI aborts them */
    size_t n = 0;
    char *mine = tail_pack(net, status, &n);
    if (!mine)
        return RS_ENOMEM; /* the others wait in the gather: MPI aborts them */
    void *all = NULL;
    size_t *len = calloc(c->ranks, sizeof *len);
    if (!len) {
        free(mine);
        return RS_ENOMEM;
    }
    rc = c->gather(c->ctx, mine, n, &all, len);
    free(mine);
    int merged = RS_OK;
    if (rc == RS_OK && c->rank == 0)
        rc = merge(net, all, len, &merged);
    free(all);
    free(len);
    if (rc != RS_OK)
        return rc;
    if (c->rank != 0)
        return status;
    if (merged == RS_OK && net->st.pkts_sent != net->st.pkts_delivered + net->st.pkts_dropped)
        merged = RS_EINTERNAL;
    return merged;
}

static size_t split_shipped(const rs_net *net)
{
    const rs_split *P = net->pt.state;
    size_t n = 0;
    for (uint32_t r = 0; r < P->comm.ranks; r++)
        n += P->out[r].n + P->out[r].ns + P->out[r].ne;
    return n; /* reports and reuse notices are bookkeeping: they keep nothing alive */
}

static void net_part_stats_whole(const rs_net *net, rs_net_part_stats *out)
{
    if (net->pt.ops == &split_ops)
        *out = ((const rs_split *)net->pt.state)->st;
    else
        memset(out, 0, sizeof *out);
}

void rs_net_part_stats_fill(const rs_net *net, rs_net_part_stats *out, size_t size)
{
    rs_net_part_stats v;
    memset(&v, 0, sizeof v);
    net_part_stats_whole(net, &v);
    rs_versioned_give(out, size, &v, sizeof v);
}

/* A send from GPU src to dst (msg.c rs_msg_send). A send from the shared
 * driver, made everywhere under the same ids, must come before any
 * process made records of its own: after that ids differ between
 * processes. A send from a process's own event must be named (its serial
 * would otherwise be the creation order of every process's sends); it is
 * shipped to the others when it leaves the HB domain. */
static int split_send_check(rs_net *net, int named, uint32_t src, uint32_t dst, int *own)
{
    rs_split *P = net->pt.state;
    *own = 0;
    if (rs_sim_running_shared(net->sim))
        return P->own_ids ? RS_EINTERNAL : RS_OK;
    if (!named)
        return RS_EINTERNAL;
    P->own_ids = 1;
    *own = !(net->hb_size > 1 && src / net->hb_size == dst / net->hb_size);
    return RS_OK;
}

/* A flow whose packets cross processes is reused when its home finds
 * them all gone (reuse_one); one inside an HB domain, which one process
 * holds, as in a serial run. */
static int split_flow_settle(rs_net *net, rs_flow *f, uint32_t fid)
{
    if (net->hb_size > 1 && f->src / net->hb_size == f->dst / net->hb_size)
        return 0;
    if (f->home != RS_NONE)
        flow_touched(net, fid); /* its home looks again after the window */
    return 1;
}

static const char *split_errmsg(const rs_net *net)
{
    const rs_split *P = net->pt.state;
    return P ? P->why : "";
}

static const rs_part_ops split_ops = {
    .run = split_run,
    .free = split_free,
    .ship = split_ship,
    .packet = split_packet,
    .flow_started = rs_part_flow_step,
    .flow_settle = split_flow_settle,
    .send_check = split_send_check,
    .ship_send = split_ship_send,
    .ship_timer = split_ship_timer,
    .shipped = split_shipped,
    .errmsg = split_errmsg,
    .premade_relays = 1,
};
