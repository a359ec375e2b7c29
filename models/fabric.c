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

static void ev_arrive(rs_sim *sim, void *obj, uint64_t port);
static void ev_txdone(rs_sim *sim, void *obj, uint64_t port);
static void ev_pfc_refresh(rs_sim *sim, void *obj, uint64_t port);
static void ev_pfc_expire(rs_sim *sim, void *obj, uint64_t port);

static inline rs_time ser_time(const rs_port *p, uint32_t bytes)
{
    return p->ps_per_byte ? (rs_time)bytes * p->ps_per_byte : rs_ser_time(bytes, p->rate_bps);
}

static inline uint32_t port_id(const rs_net *net, const rs_port *p)
{
    return (uint32_t)(p - net->ports);
}

void rs_fabric_drop(rs_net *net, rs_port *p, rs_pkt *pkt)
{
    if (p)
        p->drops++;
    if (pkt->type != RS_PKT_PFC)
        net->st.pkts_dropped++;
    rs_pool_put(&net->pkts, pkt);
}

static inline int lossless(const rs_net *net, unsigned prio)
{
    return net->cfg.pfc && prio == net->cfg.prio;
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
                      p->entity, ev_pfc_refresh, net, port_id(net, p));
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
    p->pfc_xoff |= p->pause_sent;
    p->pfc_refresh_sched = 1;
    rs_sim_at(sim, rs_sim_now(sim) + pause_time(p, RS_PFC_QUANTA_MAX) / 2, p->entity,
              ev_pfc_refresh, net, port);
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
        rs_sim_at(sim, next, p->entity, ev_pfc_expire, net, port);
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
                rs_sim_at(net->sim, p->pause_until[q], p->entity, ev_pfc_expire, net, port_id(net, p));
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
    rs_pkt *pkt = p->qh[q];
    p->qh[q] = pkt->next;
    if (!pkt->next) {
        p->qt[q] = NULL;
        p->qmask &= (uint8_t)~(1u << q);
    }
    p->qbytes -= pkt->wire;
    p->pq_bytes[q] -= pkt->wire;
    if (pkt->in_port != RS_NONE) {
        /* Leaves the switch's buffer: release its ingress accounting. */
        rs_port *in = &net->ports[pkt->in_port];
        in->ing_bytes[q] -= pkt->wire;
        if ((in->pause_sent & (1u << q)) && in->ing_bytes[q] <= net->cfg.pfc_xon_bytes)
            pfc_request(net, in, q, 0);
    }
    return pkt;
}

static inline int has_work(const rs_port *p, uint8_t data_bit)
{
    return (p->qmask & ~p->paused) || (p->pfc_xoff | p->pfc_xon) ||
           (p->act_head != RS_NONE && !(p->paused & data_bit));
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
    if (p->busy_until > now) {
        p->tx_sched = 1;
        rs_sim_at(net->sim, p->busy_until, p->entity, ev_txdone, net, port_id(net, p));
        return;
    }
    uint8_t data_bit = (uint8_t)(1u << net->cfg.prio);
    uint8_t eligible = p->qmask & ~p->paused;
    rs_pkt *pkt;
    if (RS_UNLIKELY(p->pfc_xoff | p->pfc_xon))
        pkt = pfc_frame(net, p);
    else if (eligible)
        pkt = dequeue(net, p, eligible);
    else if (p->act_head != RS_NONE && !(p->paused & data_bit))
        pkt = rs_nic_pull(net, p);
    else
        return;
    if (!pkt)
        return;

    rs_time ser = ser_time(p, pkt->wire);
    p->busy_until = now + ser;
    p->tx_pkts++;
    p->tx_bytes += pkt->wire;
    if (RS_UNLIKELY(pkt->type == RS_PKT_CNP))
        p->cnp_sent++;
    if (RS_UNLIKELY(p->cap != NULL) && now >= net->cap_start && now < net->cap_end)
        rs_capture_frame(net, p, pkt, now);
    if (RS_UNLIKELY(!p->up)) {
        rs_fabric_drop(net, p, pkt); /* the frame goes out onto a dead link */
    } else {
        pkt->t_arr = now + ser + p->prop;
        pkt->link = port_id(net, p);
        pkt->next = NULL;
        net->st.packet_hops++;
        if (p->fly_tail) {
            p->fly_tail->next = pkt;
        } else {
            p->fly_head = pkt;
            rs_sim_at(net->sim, pkt->t_arr, p->entity, ev_arrive, net, pkt->link);
        }
        p->fly_tail = pkt;
    }
    if (has_work(p, data_bit)) {
        p->tx_sched = 1;
        rs_sim_at(net->sim, p->busy_until, p->entity, ev_txdone, net, port_id(net, p));
    }
}

static void ev_txdone(rs_sim *sim, void *obj, uint64_t port)
{
    (void)sim;
    rs_net *net = obj;
    rs_port *p = &net->ports[port];
    p->tx_sched = 0;
    rs_port_kick(net, p);
}

void rs_fabric_enqueue(rs_net *net, rs_port *p, rs_pkt *pkt)
{
    unsigned q = pkt->prio;
    if (RS_UNLIKELY(p->qbytes + pkt->wire > p->limit) && !lossless(net, q)) {
        /* Lossless bytes live in PFC's ingress budget (and headroom), not
         * in the lossy share: only lossy bytes count toward tail drop. */
        uint64_t lossy = p->qbytes - (net->cfg.pfc ? p->pq_bytes[net->cfg.prio] : 0);
        if (lossy + pkt->wire > p->limit) {
            rs_fabric_drop(net, p, pkt); /* tail drop */
            return;
        }
    }
    pkt->next = NULL;
    if (p->qt[q])
        p->qt[q]->next = pkt;
    else
        p->qh[q] = pkt;
    p->qt[q] = pkt;
    p->qmask |= (uint8_t)(1u << q);
    p->qbytes += pkt->wire;
    p->pq_bytes[q] += pkt->wire;
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

/* Pick the egress port of Ethernet switch `node` for pkt. */
static inline uint32_t switch_route(rs_net *net, const rs_node *n, const rs_pkt *pkt)
{
    rs_switch *sw = &net->sw[n->sw];
    uint32_t leaf = net->leaf_of_gpu[pkt->dst];
    if (leaf == n->sw)
        return net->leaf_port[pkt->dst];
    uint32_t off = sw->nh_off[net->sw[leaf].leaf_index];
    if (RS_UNLIKELY(off == RS_NONE))
        return RS_NONE;
    const uint32_t *set = &net->nh[off];
    uint32_t cnt = set[0], pick;
    if (cnt == 1) {
        pick = 0;
    } else if (net->cfg.ecmp == RS_ECMP_FLOW) {
        /* The 5-tuple hash a switch computes: addresses (GPU ids), the UDP
         * source port (entropy) and a per-switch salt. */
        uint64_t h = rs_mix64(sw->hash_salt ^ ((uint64_t)pkt->src << 32 | pkt->dst) ^
                              ((uint64_t)pkt->entropy << 48));
        pick = (uint32_t)(((h >> 32) * cnt) >> 32);
    } else {
        pick = rs_rng_below(&sw->rng, cnt);
    }
    return set[1 + pick];
}

static void switch_receive(rs_net *net, const rs_node *n, rs_port *in, rs_pkt *pkt)
{
    uint32_t out = switch_route(net, n, pkt);
    if (RS_UNLIKELY(out == RS_NONE)) {
        rs_fabric_drop(net, NULL, pkt); /* no route to the destination */
        return;
    }
    rs_port *p = &net->ports[out];
    unsigned q = pkt->prio;
    if ((pkt->flags & RS_PF_ECT) && net->cfg.ecn && ecn_mark(net, &net->sw[n->sw], p->pq_bytes[q])) {
        pkt->flags |= RS_PF_CE;
        p->ecn_marked++;
        net->st.ecn_marked++;
    }
    if (lossless(net, q)) {
        pkt->in_port = port_id(net, in);
        in->ing_bytes[q] += pkt->wire;
        if (in->ing_bytes[q] > in->max_ing_bytes)
            in->max_ing_bytes = in->ing_bytes[q];
        if (in->ing_bytes[q] > net->cfg.pfc_xoff_bytes && !(in->pause_sent & (1u << q)))
            pfc_request(net, in, q, 1);
    } else {
        pkt->in_port = RS_NONE;
    }
    rs_fabric_enqueue(net, p, pkt);
}

static void ev_arrive(rs_sim *sim, void *obj, uint64_t port)
{
    rs_net *net = obj;
    rs_port *link = &net->ports[port];
    rs_pkt *pkt = link->fly_head;
    link->fly_head = pkt->next;
    if (link->fly_head)
        rs_sim_at(sim, link->fly_head->t_arr, link->entity, ev_arrive, net, port);
    else
        link->fly_tail = NULL;

    pkt->hops++;
    net->st.last_activity = rs_sim_now(sim);
    rs_port *back = &net->ports[link->peer_port]; /* the receiver's port on this cable */
    if (RS_UNLIKELY(pkt->type == RS_PKT_PFC)) {
        rs_pfc_receive(net, back, pkt);
        rs_pool_put(&net->pkts, pkt);
        return;
    }
    const rs_node *n = &net->nodes[link->peer_node];
    switch (n->kind) {
    case RS_NODE_SWITCH:
        switch_receive(net, n, back, pkt);
        return;
    case RS_NODE_HB:
        pkt->in_port = RS_NONE;
        rs_fabric_enqueue(net, &net->ports[n->port_base + pkt->dst % net->K], pkt);
        return;
    default:
        rs_nic_receive(net, link->peer_node, pkt);
        return;
    }
}

/* Close the books on pauses still in force (for statistics at the end). */
void rs_fabric_settle(rs_net *net)
{
    for (uint32_t i = 0; i < net->nports; i++)
        for (unsigned q = 0; q < RS_NPRIO; q++)
            if (net->ports[i].paused & (1u << q)) {
                rs_time d = rs_sim_now(net->sim) - net->ports[i].paused_since[q];
                net->ports[i].paused_ps += d;
                net->st.pfc_paused_ps += d;
                net->ports[i].paused_since[q] = rs_sim_now(net->sim);
            }
}
