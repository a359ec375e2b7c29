/*
 * packet.c - the packet-level backend (backend.h): transfers are the RC
 * transport's flows (transport.c) sending frames through the fabric's
 * queues (fabric.c). Every operation here is what the packet level already
 * does on its own; this file only names them for the seam.
 */
#include "backend.h"
#include "netint.h"

static int packet_flow_start(rs_net *net, uint32_t f)
{
    /* A partitioned run: every process creates the flow, its source's sends
     * (and every process counts the start, for the capture's order). */
    rs_part_flow_started(net);
    if (!rs_part_owns_node(net, net->flows[f].src))
        return RS_OK;
    rs_flow_activate(net, f);
    return RS_OK;
}

static uint64_t packet_flow_delivered(const rs_net *net, uint32_t f)
{
    return net->flows[f].rcv_nxt;
}

/* Queued frames drain into a dead link (dropped, counted); on repair,
 * whatever waits starts moving. */
static int packet_cable_state_changed(rs_net *net, uint32_t port)
{
    rs_port *p = &net->ports[port];
    rs_port_kick(net, p);
    rs_port_kick(net, &net->ports[p->peer_port]);
    return RS_OK;
}

/* Wire bytes the port had put on its link by `now`: every frame started
 * (tx_bytes counts a frame when it starts) less what is still to serialize
 * of the frame on the wire. So the difference between two ticks over the
 * line rate is exactly the fraction of time the port was sending. */
static uint64_t packet_port_bytes(const rs_net *net, uint32_t port, rs_time now, uint64_t *bps)
{
    const rs_port *p = &net->ports[port];
    *bps = 0;
    if (p->busy_until <= now)
        return p->tx_bytes;
    unsigned __int128 rem = (unsigned __int128)(p->busy_until - now) * p->rate_bps / (8u * RS_PS_PER_S);
    return p->tx_bytes - (uint64_t)rem;
}

/* Every packet was delivered or dropped, and none, nor any timer record,
 * is still alive; with every message done, every flow record is back
 * (transport.c flow_settle). A violation is our bug; the run reports it
 * as RS_EINTERNAL instead of a result that looks fine. */
static int packet_idle_check(const rs_net *net)
{
    if (RS_NEVER(rs_pool_live(&net->pkts) != 0) || RS_NEVER(rs_pool_live(&net->timers) != 0) ||
        RS_NEVER(net->st.pkts_sent != net->st.pkts_delivered + net->st.pkts_dropped) ||
        RS_NEVER(net->st.msgs_done == net->st.msgs && net->flow_free.n != net->nflows))
        return RS_EINTERNAL;
    return RS_OK;
}

const rs_backend rs_backend_packet = {
    .name = "packet",
    .flow_start = packet_flow_start,
    .flow_abandon = rs_flow_abandon,
    .flow_delivered = packet_flow_delivered,
    .cable_state_changed = packet_cable_state_changed,
    .port_bytes = packet_port_bytes,
    .idle_check = packet_idle_check,
};
