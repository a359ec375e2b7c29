/*
 * fabric.c - ports, links and switches: the packet path.
 *
 * A port is the egress side of one directed link. It transmits one frame at
 * a time, strict priority over its 8 queues (GPU ports pull data from their
 * flows when the queues are empty). A frame that starts at t is on the
 * wire for ser = wire bytes * 8 / rate and reaches the far end complete at
 * t + ser + prop (prop includes the receiving switch's pipeline latency:
 * store-and-forward plus a fixed latency, with nothing to model in
 * between). Frames in flight on a link are kept in arrival order and only
 * the head has an event; a busy port has at most one tx-done event. So a
 * packet costs one event per hop, plus one per hop where it queued.
 *
 * Every packet ends in exactly one of: forwarded, delivered, dropped.
 */
#include "netint.h"

static void ev_arrive(rs_sim *sim, void *obj, uint64_t port);
static void ev_txdone(rs_sim *sim, void *obj, uint64_t port);

static inline rs_time ser_time(const rs_port *p, uint32_t bytes)
{
    return p->ps_per_byte ? (rs_time)bytes * p->ps_per_byte : rs_ser_time(bytes, p->rate_bps);
}

void rs_fabric_drop(rs_net *net, rs_port *p, rs_pkt *pkt)
{
    if (p)
        p->drops++;
    net->st.pkts_dropped++;
    rs_pool_put(&net->pkts, pkt);
}

static inline rs_pkt *dequeue(rs_port *p)
{
    unsigned q = 31u - (unsigned)__builtin_clz(p->qmask); /* highest priority first */
    rs_pkt *pkt = p->qh[q];
    p->qh[q] = pkt->next;
    if (!pkt->next) {
        p->qt[q] = NULL;
        p->qmask &= (uint8_t)~(1u << q);
    }
    p->qbytes -= pkt->wire;
    return pkt;
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
        rs_sim_at(net->sim, p->busy_until, p->entity, ev_txdone, net, (uint64_t)(p - net->ports));
        return;
    }
    rs_pkt *pkt;
    if (p->qmask)
        pkt = dequeue(p);
    else if (p->act_head != RS_NONE)
        pkt = rs_nic_pull(net, p);
    else
        return;
    if (!pkt)
        return;

    rs_time ser = ser_time(p, pkt->wire);
    p->busy_until = now + ser;
    p->tx_pkts++;
    p->tx_bytes += pkt->wire;
    if (RS_UNLIKELY(!p->up)) {
        rs_fabric_drop(net, p, pkt); /* the frame goes out onto a dead link */
    } else {
        pkt->t_arr = now + ser + p->prop;
        pkt->link = (uint32_t)(p - net->ports);
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
    if (p->qmask || p->act_head != RS_NONE) {
        p->tx_sched = 1;
        rs_sim_at(net->sim, p->busy_until, p->entity, ev_txdone, net, (uint64_t)(p - net->ports));
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
    if (RS_UNLIKELY(p->qbytes + pkt->wire > p->limit)) {
        rs_fabric_drop(net, p, pkt); /* tail drop */
        return;
    }
    unsigned q = pkt->prio;
    pkt->next = NULL;
    if (p->qt[q])
        p->qt[q]->next = pkt;
    else
        p->qh[q] = pkt;
    p->qt[q] = pkt;
    p->qmask |= (uint8_t)(1u << q);
    p->qbytes += pkt->wire;
    if (p->qbytes > p->max_qbytes)
        p->max_qbytes = p->qbytes;
    rs_port_kick(net, p);
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
    const rs_node *n = &net->nodes[link->peer_node];
    switch (n->kind) {
    case RS_NODE_SWITCH: {
        uint32_t out = switch_route(net, n, pkt);
        if (RS_UNLIKELY(out == RS_NONE)) {
            rs_fabric_drop(net, NULL, pkt); /* no route to the destination */
            return;
        }
        rs_fabric_enqueue(net, &net->ports[out], pkt);
        return;
    }
    case RS_NODE_HB:
        rs_fabric_enqueue(net, &net->ports[n->port_base + pkt->dst % net->K], pkt);
        return;
    default:
        rs_nic_receive(net, link->peer_node, pkt);
        return;
    }
}
