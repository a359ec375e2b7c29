/*
 * fabric.c - ports, links and switches: the packet path, with lossless
 * Ethernet (PFC) and ECN marking.
 *
 * A port is the egress side of one directed link. It transmits one frame at
 * a time: a pending PFC frame first (MAC control frames are not subject to
 * pause), then strict priority over its 8 queues skipping paused
 * priorities; GPU ports pull data from their flows when no queued frame is
 * eligible. A frame that starts at t is on the wire for ser = wire bytes *
 * 8 / rate and reaches the far end complete at t + ser + prop (prop
 * includes the receiving switch's pipeline latency: store-and-forward plus
 * a fixed latency, with nothing to model in between). Frames in flight on a
 * link are kept in arrival order and only the head has an event; a busy
 * port has at most one tx-done event. So a packet costs one event per hop,
 * plus one per hop where it queued.
 *
 * PFC (IEEE 802.1Qbb): a switch counts, per ingress port and priority, the
 * bytes that came in on that port and still sit in its egress queues. Past
 * pfc.xoff_bytes it sends a pause frame (quanta 0xFFFF) back up that link
 * and refreshes it at half its duration while still congested; at or below
 * pfc.xon_bytes it sends quanta 0 (resume). A paused egress priority stops
 * after the frame on the wire and resumes on XON or when the quanta expire.
 * Lossless traffic is never tail-dropped; max_ing_bytes shows the headroom
 * that was needed. NICs honour pause frames but never send them.
 *
 * ECN: on enqueue of an ECN-capable packet, a switch marks CE with
 * probability 0 below ecn.kmin_bytes of its priority's queue, rising
 * linearly to ecn.pmax at ecn.kmax_bytes, and 1 above (RED as DCQCN uses it).
 *
 * Every packet ends in exactly one of: forwarded, delivered, dropped.
 */
#include "netint.h"
#include "evq.h" /* rs_sim_peek: prefetch for the event after next */

static void ev_arrive(rs_sim *sim, void *obj, uint64_t arg);
static void ev_txdone(rs_sim *sim, void *obj, uint64_t arg);
static void ev_pfc_refresh(rs_sim *sim, void *obj, uint64_t port);
static void ev_pfc_expire(rs_sim *sim, void *obj, uint64_t port);
static inline void prefetch_ahead(rs_net *net);

static inline rs_time ser_time(const rs_port *p, uint32_t bytes)
{
    return p->ps_per_byte ? (rs_time)bytes * p->ps_per_byte : rs_ser_time(bytes, p->rate_bps);
}

static inline uint32_t port_id(const rs_net *net, const rs_port *p)
{
    return (uint32_t)(p - net->ports);
}

void rs_fabric_drop(rs_net *net, rs_port *p, rs_pkt *pkt, unsigned reason)
{
    if (p)
        p->drops++;
    if (pkt->type != RS_PKT_PFC) {
        net->st.pkts_dropped++;
        if (RS_UNLIKELY(net->flt != NULL) && reason != RS_DROP_BUFFER && reason != RS_DROP_LOSS)
            rs_fault_note_drop(net, p, pkt, reason);
        if (RS_UNLIKELY(net->tl != NULL))
            rs_net_tl_drop(net, p ? port_id(net, p) : pkt->to_port, pkt, reason);
    }
    rs_pkt_free(net, pkt);
}

/* With PFC on, every priority that carries RoCE data is lossless
 * (transport.priority, and a job's own: rs_net_set_job_priority). */
static inline int lossless(const rs_net *net, unsigned prio)
{
    return net->cfg.pfc && (net->data_prios >> prio & 1u);
}

/* -- PFC ------------------------------------------------------------------ */

/* Duration of a pause of `quanta` at port p's rate: quanta * 512 bit times. */
static inline rs_time pause_time(const rs_port *p, uint32_t quanta)
{
    return rs_ser_time((uint64_t)quanta * 64, p->rate_bps);
}

/* Ask port p (a switch port, facing the upstream sender) to pause or
 * resume the peer for priority q. */
static void pfc_request(rs_net *net, rs_port *p, unsigned q, int xoff)
{
    uint8_t bit = (uint8_t)(1u << q);
    if (xoff) {
        p->pause_sent |= bit;
        p->pfc_xoff |= bit;
        p->pfc_xon &= (uint8_t)~bit;
        if (!p->pfc_refresh_sched) {
            p->pfc_refresh_sched = 1;
            rs_sim_at(net->sim, rs_sim_now(net->sim) + pause_time(p, RS_PFC_QUANTA_MAX) / 2,
                      rs_port_entity(net, port_id(net, p)), ev_pfc_refresh, net, port_id(net, p));
        }
    } else {
        p->pause_sent &= (uint8_t)~bit;
        p->pfc_xon |= bit;
        p->pfc_xoff &= (uint8_t)~bit;
    }
    rs_port_kick(net, p);
}

/* Still congested half-way through a pause: send it again. */
static void ev_pfc_refresh(rs_sim *sim, void *obj, uint64_t port)
{
    rs_net *net = obj;
    rs_port *p = &net->ports[port];
    p->pfc_refresh_sched = 0;
    if (!p->pause_sent)
        return;
    if (RS_UNLIKELY(net->flt != NULL))
        rs_fault_note_pfc_hold(net, (uint32_t)port); /* a pause that cannot be released? */
    p->pfc_xoff |= p->pause_sent;
    p->pfc_refresh_sched = 1;
    rs_sim_at(sim, rs_sim_now(sim) + pause_time(p, RS_PFC_QUANTA_MAX) / 2,
              rs_port_entity(net, (uint32_t)port), ev_pfc_refresh, net, port);
    rs_port_kick(net, p);
}

static void unpause(rs_net *net, rs_port *p, unsigned q)
{
    uint8_t bit = (uint8_t)(1u << q);
    if (!(p->paused & bit))
        return;
    p->paused &= (uint8_t)~bit;
    rs_time d = rs_sim_now(net->sim) - p->paused_since[q];
    p->paused_ps += d;
    net->st.pfc_paused_ps += d;
}

static void ev_pfc_expire(rs_sim *sim, void *obj, uint64_t port)
{
    rs_net *net = obj;
    rs_port *p = &net->ports[port];
    rs_time now = rs_sim_now(sim), next = RS_TIME_MAX;
    p->pfc_expire_sched = 0;
    for (unsigned q = 0; q < RS_NPRIO; q++) {
        if (!(p->paused & (1u << q)))
            continue;
        if (p->pause_until[q] <= now)
            unpause(net, p, q);
        else if (p->pause_until[q] < next)
            next = p->pause_until[q];
    }
    if (next != RS_TIME_MAX) {
        p->pfc_expire_sched = 1;
        rs_sim_at(sim, next, rs_port_entity(net, (uint32_t)port), ev_pfc_expire, net, port);
    }
    rs_port_kick(net, p);
}

/* A PFC frame arrived for egress port p (the receiver's port back toward
 * the frame's sender): class-enable vector in flags, paused classes in psn
 * (quanta 0xFFFF), the other enabled classes resume (quanta 0). */
void rs_pfc_receive(rs_net *net, rs_port *p, const rs_pkt *pkt)
{
    rs_time now = rs_sim_now(net->sim);
    p->pfc_received++;
    for (unsigned q = 0; q < RS_NPRIO; q++) {
        uint8_t bit = (uint8_t)(1u << q);
        if (!(pkt->flags & bit))
            continue;
        if (pkt->psn & bit) {
            if (!(p->paused & bit)) {
                p->paused |= bit;
                p->paused_since[q] = now;
            }
            p->pause_until[q] = now + pause_time(p, RS_PFC_QUANTA_MAX);
            if (!p->pfc_expire_sched) {
                p->pfc_expire_sched = 1;
                rs_sim_at(net->sim, p->pause_until[q], rs_port_entity(net, port_id(net, p)),
                          ev_pfc_expire, net, port_id(net, p));
            }
        } else {
            unpause(net, p, q);
        }
    }
    rs_port_kick(net, p);
}

static rs_pkt *pfc_frame(rs_net *net, rs_port *p)
{
    rs_pkt *pkt = rs_pool_get(&net->pkts);
    if (RS_UNLIKELY(!pkt)) {
        rs_sim_stop(net->sim, RS_ENOMEM);
        return NULL;
    }
    pkt->type = RS_PKT_PFC;
    pkt->own = 0;
    pkt->flags = p->pfc_xoff | p->pfc_xon; /* class-enable vector */
    pkt->psn = p->pfc_xoff;                /* classes paused (quanta 0xFFFF) */
    pkt->wire = RS_WIRE_PFC;
    pkt->payload = 0;
    pkt->prio = 7;
    pkt->flow = RS_NONE;
    pkt->src = pkt->dst = RS_NONE;
    pkt->entropy = 0;
    pkt->hops = 0;
    pkt->in_port = RS_NONE;
    pkt->next = NULL;
    if (RS_UNLIKELY(net->tl != NULL))
        rs_net_tl_pfc(net, port_id(net, p), p->pfc_xoff, p->pfc_xon);
    if (p->pfc_xoff)
        net->st.pfc_pauses_sent++;
    else
        net->st.pfc_resumes_sent++;
    p->pfc_sent++;
    p->pfc_xoff = p->pfc_xon = 0;
    return pkt;
}

/* -- queues --------------------------------------------------------------- */

static inline rs_pkt *dequeue(rs_net *net, rs_port *p, uint8_t eligible)
{
    unsigned q = 31u - (unsigned)__builtin_clz(eligible); /* highest priority first */
    rs_portq *pq = &p->q[q];
    rs_pkt *pkt = pq->head;
    pq->head = pkt->next;
    if (!pkt->next) {
        pq->tail = NULL;
        p->qmask &= (uint8_t)~(1u << q);
    } else {
        /* The new head leaves at the next tx-done, one frame time later
         * (prefetch_ahead fetches it again just before). */
        __builtin_prefetch(pkt->next);
    }
    p->qbytes -= pkt->wire;
    pq->bytes -= pkt->wire;
    if (pkt->in_port != RS_NONE) {
        /* Leaves the switch's buffer: release its ingress accounting. */
        rs_port *in = &net->ports[pkt->in_port];
        in->q[q].ing_bytes -= pkt->wire;
        if ((in->pause_sent & (1u << q)) && in->q[q].ing_bytes <= net->cfg.pfc_xon_bytes)
            pfc_request(net, in, q, 0);
    }
    return pkt;
}

/* data_prios: the priorities RoCE data goes at (a NIC's flows may send
 * while one of them is not paused). */
static inline int has_work(const rs_port *p, uint8_t data_prios)
{
    return (p->qmask & ~p->paused) || (p->pfc_xoff | p->pfc_xon) ||
           (p->act_head != RS_NONE && (data_prios & ~p->paused));
}

/* Start transmitting if the port is free and has something to send. A
 * port has at most one tx-done event pending; while it is, that event will
 * look at the queues, so nothing else starts a transmission (two starts at
 * one instant would otherwise schedule two tx-done events, and they would
 * multiply). */
void rs_port_kick(rs_net *net, rs_port *p)
{
    if (p->tx_sched)
        return;
    rs_time now = rs_sim_now(net->sim);
    uint32_t id = port_id(net, p);
    if (p->busy_until > now) {
        p->tx_sched = 1;
        rs_sim_at(net->sim, p->busy_until, rs_port_entity(net, id), ev_txdone, p, (uintptr_t)net);
        return;
    }
    uint8_t data_prios = net->data_prios;
    uint8_t eligible = p->qmask & ~p->paused;
    rs_pkt *pkt;
    if (RS_UNLIKELY(p->pfc_xoff | p->pfc_xon))
        pkt = pfc_frame(net, p);
    else if (eligible)
        pkt = dequeue(net, p, eligible);
    else if (p->act_head != RS_NONE && (data_prios & ~p->paused))
        pkt = rs_nic_pull(net, p);
    else
        return;
    if (!pkt)
        return;

    rs_time ser = ser_time(p, pkt->wire);
    p->busy_until = now + ser;
    p->tx_pkts++;
    p->tx_bytes += pkt->wire;
    if (RS_UNLIKELY(net->job_tx != NULL) && pkt->type == RS_PKT_DATA)
        rs_job_tx_add(net, (uint32_t)(p - net->ports), net->flows[pkt->flow].job, pkt->wire);
    if (RS_UNLIKELY(pkt->type == RS_PKT_CNP))
        p->cnp_sent++;
    if (RS_UNLIKELY(p->cap != NULL) && now >= net->cap_start && now < net->cap_end)
        rs_capture_frame(net, p, pkt, now);
    if (RS_UNLIKELY(!p->up)) {
        rs_fabric_drop(net, p, pkt, RS_DROP_LINK_DOWN); /* the frame goes out onto a dead link */
    } else {
        /* The arrival time rides on the packet ahead (whose line this
         * write touches anyway), so that packet's arrival schedules this
         * one without touching this one's descriptor, and the arrival
         * event carries the packet itself as obj, which the queue
         * prefetches, instead of the port (the link's port is no longer
         * read per arrival). ev_arrive's cycles were mostly misses on
         * pkt->next and then next->t_arr; this and the packet/port layout
         * in netint.h halved them (bench/README.md, "Measured design
         * choices"). */
        rs_time t_arr = now + ser + p->prop;
        if (RS_UNLIKELY(net->loss_below) && pkt->type != RS_PKT_PFC && p->kind != RS_PORT_GPU_HB &&
            p->kind != RS_PORT_HB && rs_mix64(net->cfg.seed ^ ((uint64_t)id << 40) ^ p->tx_pkts) < net->loss_below)
            pkt->flags |= RS_PF_LOST; /* a bit error: the receiver's FCS check drops it */
        pkt->link = id;
        pkt->to_port = p->peer_port;
        pkt->to_node = p->peer_node;
        pkt->next = NULL;
        net->st.packet_hops++;
        if (RS_UNLIKELY(p->cut)) {
            rs_part_ship(net, pkt, t_arr); /* the receiver is another process's (split.c) */
        } else {
            if (p->fly_tail) {
                p->fly_tail->next = pkt;
                p->fly_tail->t_next = t_arr;
            } else {
                rs_sim_at_once(net->sim, t_arr, rs_link_entity(net, id), ev_arrive, pkt, (uintptr_t)net);
            }
            p->fly_tail = pkt;
        }
    }
    if (has_work(p, data_prios)) {
        p->tx_sched = 1;
        rs_sim_at(net->sim, p->busy_until, rs_port_entity(net, id), ev_txdone, p, (uintptr_t)net);
    }
}

/* obj is the port (prefetched by the engine), arg the network. */
static void ev_txdone(rs_sim *sim, void *obj, uint64_t arg)
{
    (void)sim;
    rs_net *net = (rs_net *)(uintptr_t)arg;
    rs_port *p = obj;
    prefetch_ahead(net);
    p->tx_sched = 0;
    rs_port_kick(net, p);
}

void rs_fabric_enqueue(rs_net *net, rs_port *p, rs_pkt *pkt)
{
    unsigned q = pkt->prio;
    rs_portq *pq = &p->q[q];
    if (RS_UNLIKELY(p->qbytes + pkt->wire > p->limit) && !lossless(net, q)) {
        /* Lossless bytes live in PFC's ingress budget (and headroom), not
         * in the lossy share: only lossy bytes count toward tail drop. */
        uint64_t lossy = p->qbytes;
        for (uint8_t m = net->cfg.pfc ? net->data_prios : 0; m; m &= (uint8_t)(m - 1))
            lossy -= p->q[__builtin_ctz(m)].bytes;
        if (lossy + pkt->wire > p->limit) {
            rs_fabric_drop(net, p, pkt, RS_DROP_BUFFER); /* tail drop */
            return;
        }
    }
    pkt->next = NULL;
    if (pq->tail)
        pq->tail->next = pkt;
    else
        pq->head = pkt;
    pq->tail = pkt;
    p->qmask |= (uint8_t)(1u << q);
    p->qbytes += pkt->wire;
    pq->bytes += pkt->wire;
    if (p->qbytes > p->max_qbytes)
        p->max_qbytes = p->qbytes;
    rs_port_kick(net, p);
}

/* ECN marking decision for a packet joining queue bytes `qb`. */
static inline int ecn_mark(rs_net *net, rs_switch *sw, uint64_t qb)
{
    const rs_net_config *c = &net->cfg;
    if (qb <= c->ecn_kmin_bytes)
        return 0;
    if (qb > c->ecn_kmax_bytes)
        return 1;
    double pr = c->ecn_pmax * (double)(qb - c->ecn_kmin_bytes) /
                (double)(c->ecn_kmax_bytes - c->ecn_kmin_bytes);
    return rs_rng_unit(&sw->ecn_rng) < pr;
}

/* Adaptive choice among the cnt ports of set (routing.ecmp adaptive and
 * flowlet): a live port with the fewest queued bytes; among equals, the
 * one hash h picks (h covers the packet's PSN, so on an idle fabric a
 * flow's packets spread as spraying spreads them; htsim breaks such ties
 * at random). A switch sees its own link go down at once, so a dead port
 * is skipped before the routes reconverge (all dead: the hash's, which
 * drops). O(cnt) per packet; cnt is at most the radix. */
static uint32_t least_loaded(const rs_net *net, const uint32_t *set, uint32_t cnt, uint64_t h)
{
    uint64_t best_q = UINT64_MAX;
    uint32_t ties = 0, pick = rs_ecmp_index(h, cnt);
    for (uint32_t i = 0; i < cnt; i++) {
        const rs_port *p = &net->ports[set[1 + i]];
        if (!p->up || p->qbytes > best_q)
            continue;
        if (p->qbytes < best_q) {
            best_q = p->qbytes;
            ties = 0;
        }
        /* Reservoir choice among the ties, one hash draw per tie: tie t
         * replaces the pick with probability 1/t. */
        h = rs_mix64(h + i);
        if (rs_ecmp_index(h, ++ties) == 0)
            pick = i;
    }
    return pick;
}

/* Flowlet switching (Kandula et al., FLARE; DLB flowlet mode): a packet
 * that follows its flow's previous one at this switch within the gap keeps
 * that one's port; otherwise it starts a flowlet on the least-loaded port. */
static uint32_t flowlet_pick(rs_net *net, rs_switch *sw, uint32_t e, uint32_t cnt, uint64_t h, uint32_t psn)
{
    rs_time now = rs_sim_now(net->sim);
    rs_flowlet *fl = &sw->flowlet[h & (RS_FLOWLET_SLOTS - 1)];
    if (fl->last && fl->set == e && now - fl->last <= net->flowlet_gap && fl->pick < cnt &&
        net->ports[net->nh[e + 1 + fl->pick]].up) {
        fl->last = now;
        return fl->pick;
    }
    fl->set = e;
    fl->pick = least_loaded(net, &net->nh[e], cnt, h ^ psn); /* ties: per flowlet */
    fl->last = now ? now : 1; /* 0 marks an unused slot */
    return fl->pick;
}

/* Pick the egress port of Ethernet switch n for pkt. One flat table with
 * single next hops inline (rs_route_entry): one dependent load fewer than
 * per-switch offset arrays (leaf -> switch -> nh_off -> nh), and none into
 * nh going down the tree. */
static inline uint32_t switch_route(rs_net *net, const rs_node *n, const rs_pkt *pkt)
{
    /* Adaptive, flowlet: data frames only. ACKs, NAKs and CNPs keep their
     * flow's hashed path, as htsim does for small packets: they add
     * nothing to a port's load worth balancing, and stay in order. */
    rs_ecmp_mode mode = net->cfg.ecmp;
    if (RS_UNLIKELY(net->ugal_load != NULL) && pkt->type == RS_PKT_DATA) {
        /* A Valiant detour's first part (ugal.c); hops counts the arrival at the source switch. */
        uint32_t out = rs_ugal_route(net, n, &net->flows[pkt->flow], pkt->hops - 1u);
        if (out != RS_NONE)
            return out;
    }
    if (mode == RS_ECMP_FLOW || (mode != RS_ECMP_PACKET && pkt->type != RS_PKT_DATA))
        return rs_route_hashed(net, n, pkt->src, pkt->dst, pkt->entropy);
    uint32_t e = rs_route_entry(net, n, pkt->dst);
    if (e & RS_ROUTE_DIRECT)
        return rs_route_direct(e);
    const uint32_t *set = &net->nh[e];
    uint32_t cnt = set[0], pick;
    rs_switch *sw = &net->sw[n->sw];
    if (cnt == 1) {
        pick = 0;
    } else if (mode == RS_ECMP_PACKET) {
        pick = rs_rng_below(&sw->rng, cnt);
    } else {
        uint64_t h = rs_ecmp_hash(sw->hash_salt, pkt->src, pkt->dst, pkt->entropy);
        if (mode == RS_ECMP_ADAPTIVE)
            pick = least_loaded(net, set, cnt, h ^ pkt->psn);
        else
            pick = flowlet_pick(net, sw, e, cnt, h, pkt->psn);
    }
    return set[1 + pick];
}

/* Start loading what the event after the next one will touch beyond its
 * obj (which the queue prefetches): for an arrival at a switch, the
 * ingress port's PFC lines and the egress port's three lines; for a
 * tx-done, the head packet it will send. Reads only; the route is
 * recomputed for real when the packet arrives (and not guessed when it
 * would draw a random number). It pays on large networks whose state
 * leaves the cache and costs on small ones that fit in L2, hence
 * net->lookahead (bench/README.md, "Measured design choices"). */
static inline void prefetch_ahead(rs_net *net)
{
    if (!net->lookahead)
        return;
    const rs_event *e = rs_sim_peek(net->sim, 1);
    if (!e)
        return;
    if (e->fn == ev_arrive) {
        const rs_pkt *pkt = e->obj;
        const rs_node *n = &net->nodes[pkt->to_node];
        if (n->kind != RS_NODE_SWITCH || pkt->type == RS_PKT_PFC)
            return;
        const rs_port *in = &net->ports[pkt->to_port];
        __builtin_prefetch(&in->max_ing_bytes);
        __builtin_prefetch(&in->q[pkt->prio]);
        uint32_t r = rs_route_entry(net, n, pkt->dst);
        if (r == RS_NONE || (!(r & RS_ROUTE_DIRECT) && net->cfg.ecmp != RS_ECMP_FLOW))
            return;
        uint32_t out = rs_route_hashed_at(net, n, r, pkt->src, pkt->dst, pkt->entropy);
        const rs_port *p = &net->ports[out];
        __builtin_prefetch(p);
        __builtin_prefetch(&p->tx_pkts);
        __builtin_prefetch(&p->q[pkt->prio]);
    } else if (e->fn == ev_txdone) {
        const rs_port *p = e->obj;
        uint8_t eligible = p->qmask & ~p->paused;
        if (eligible)
            __builtin_prefetch(p->q[31u - (unsigned)__builtin_clz(eligible)].head);
    }
}

static void switch_receive(rs_net *net, const rs_node *n, rs_pkt *pkt)
{
    uint32_t out = switch_route(net, n, pkt);
    if (RS_UNLIKELY(out == RS_NONE)) {
        rs_fabric_drop(net, NULL, pkt, RS_DROP_NO_ROUTE); /* no route to the destination */
        return;
    }
    rs_port *p = &net->ports[out];
    unsigned q = pkt->prio;
    /* Start the egress port's three lines loading together (the ECN test
     * below reads the queue line, enqueue and kick the other two), as the
     * ingress prefetch in ev_arrive and the head prefetch in dequeue do. */
    __builtin_prefetch(p);
    __builtin_prefetch(&p->tx_pkts);
    /* The draw happens for every ECN-capable packet, so a switch's stream
     * does not depend on marks made upstream; a packet marked CE already
     * is counted only where it was first marked (RFC 3168: CE stays CE). */
    if ((pkt->flags & RS_PF_ECT) && net->cfg.ecn && ecn_mark(net, &net->sw[n->sw], p->q[q].bytes) &&
        !(pkt->flags & RS_PF_CE)) {
        pkt->flags |= RS_PF_CE;
        p->ecn_marked++;
        net->st.ecn_marked++;
    }
    if (lossless(net, q)) {
        rs_port *in = &net->ports[pkt->to_port];
        pkt->in_port = pkt->to_port;
        uint64_t ib = in->q[q].ing_bytes += pkt->wire;
        if (ib > in->max_ing_bytes)
            in->max_ing_bytes = ib;
        if (ib > net->cfg.pfc_xoff_bytes && !(in->pause_sent & (1u << q)))
            pfc_request(net, in, q, 1);
    } else {
        pkt->in_port = RS_NONE;
    }
    rs_fabric_enqueue(net, p, pkt);
}

/* A frame arrives while net->cuts_pending: 1 if it was on the wire when
 * its cable failed (fault.c marks the link's last frame then, cut_tail:
 * arrivals come in order, so every frame up to it is lost), and then it
 * has been dropped, reason link-down. */
static int arrival_lost(rs_net *net, rs_pkt *pkt)
{
    rs_port *p = &net->ports[pkt->link];
    if (!p->cut_tail)
        return 0;
    if (p->cut_tail == pkt) {
        p->cut_tail = NULL;
        net->cuts_pending--;
    }
    rs_fabric_drop(net, p, pkt, RS_DROP_LINK_DOWN);
    return 1;
}

/* The head frame of a link arrives. obj is the packet (the engine
 * prefetches it), arg the network; the link's port is read only when the
 * link empties. */
static void ev_arrive(rs_sim *sim, void *obj, uint64_t arg)
{
    rs_net *net = (rs_net *)(uintptr_t)arg;
    rs_pkt *pkt = obj;
    prefetch_ahead(net);
    rs_pkt *nx = pkt->next;
    if (nx)
        rs_sim_at_once(sim, pkt->t_next, rs_link_entity(net, pkt->link), ev_arrive, nx, arg);
    else if (RS_LIKELY(rs_part_owns_port(net, pkt->link))) /* a cut link's sender is another process */
        net->ports[pkt->link].fly_tail = NULL;

    pkt->hops++;
    net->st.last_activity = rs_sim_now(sim);
    /* A cable failed while frames were on it (fault.c): those are lost.
     * One test of a hot net field per arrival; the link is looked at only
     * until the last of them has arrived. */
    if (RS_UNLIKELY(net->cuts_pending) && arrival_lost(net, pkt))
        return;
    /* pcapng captures record what a port receives too; a frame with a bit
     * error fails the receiver's FCS check and is never seen. One test of
     * a net field next to cuts_pending. */
    if (RS_UNLIKELY(net->cap_in) && !(pkt->flags & RS_PF_LOST))
        rs_capture_arrival(net, pkt, rs_sim_now(sim));
    if (RS_UNLIKELY(pkt->type == RS_PKT_PFC)) {
        rs_pfc_receive(net, &net->ports[pkt->to_port], pkt); /* the receiver's port on this cable */
        rs_pool_put(&net->pkts, pkt);
        return;
    }
    if (RS_UNLIKELY(pkt->flags & RS_PF_LOST)) {
        /* The receiver's FCS check: an error counted at its port, as a NIC's
         * or switch's rx CRC-error counter (and in its own process, split). */
        rs_fabric_drop(net, &net->ports[pkt->to_port], pkt, RS_DROP_LOSS);
        return;
    }
    const rs_node *n = &net->nodes[pkt->to_node];
    switch (n->kind) {
    case RS_NODE_SWITCH: {
        /* The ingress port's PFC accounting lines, loading while the
         * route is looked up. */
        const rs_port *in = &net->ports[pkt->to_port];
        __builtin_prefetch(&in->max_ing_bytes);
        __builtin_prefetch(&in->q[pkt->prio]);
        switch_receive(net, n, pkt);
        return;
    }
    case RS_NODE_HB:
        pkt->in_port = RS_NONE;
        rs_fabric_enqueue(net, &net->ports[n->port_base + pkt->dst % net->hb_size], pkt);
        return;
    default:
        rs_nic_receive(net, pkt->to_node, pkt);
        return;
    }
}

void rs_fabric_arrival(rs_net *net, rs_pkt *pkt, rs_time t)
{
    pkt->next = NULL;
    rs_sim_at_once(net->sim, t, rs_link_entity(net, pkt->link), ev_arrive, pkt, (uintptr_t)net);
}

/* Close the books on pauses still in force (for statistics at the end). */
void rs_fabric_settle(rs_net *net)
{
    for (uint32_t i = 0; i < net->nports; i++) {
        if (!rs_part_owns_port(net, i))
            continue; /* a split run: its process closes its books */
        for (unsigned q = 0; q < RS_NPRIO; q++)
            if (net->ports[i].paused & (1u << q)) {
                rs_time d = rs_sim_now(net->sim) - net->ports[i].paused_since[q];
                net->ports[i].paused_ps += d;
                net->st.pfc_paused_ps += d;
                net->ports[i].paused_since[q] = rs_sim_now(net->sim);
            }
    }
}
