/*
 * failover.c - messages around failed links and NICs (msg_int.h; the
 * rules: docs/faults-format.md, "Failover").
 *
 * When routes change, a message whose network leg has no path moves to a
 * live rail (rs_failover_rail) through the HB domains: its network flow is
 * abandoned (the backend's flow_abandon) and what the far end has not accepted is
 * sent again over the new path. A single-flow message restarts at the
 * first byte its destination has not accepted (its in-order PSNs), as a
 * relayed message. A relayed one keeps the chunks that crossed the
 * network: it stops starting chunks (fo), lets its destination HB leg
 * deliver those and a chunk already on its source HB leg arrive, then
 * restarts at the first chunk that had not crossed (its partial bytes at
 * the old relay GPU are thrown away) from the source over the new rail.
 * HB legs never fail, so the drain ends, one chunk's HB time at most.
 */
#include "backend.h"
#include "netint.h"


/* With faults (faults.reroute_hb): the rail c the network leg uses, from
 * the source's domain to the destination's (rs_rail_member), both ends
 * with a live NIC and a path between them. The destination's rail first (plain
 * PXN), then the source's, then the others in order. On the fat tree this
 * is asked only when the direct path is cut (any rail reaches any other
 * there, but the direct path needs no HB crossing). K on the order of 8:
 * cheap, and only per message when faults are scheduled. */
uint32_t rs_failover_rail(const rs_net *net, uint32_t src, uint32_t dst)
{
    uint32_t first[2] = { rs_gpu_rail(net, dst), rs_gpu_rail(net, src) };
    for (uint32_t i = 0; i < 2 + net->rails; i++) {
        uint32_t c = i < 2 ? first[i] : i - 2;
        if (rs_fault_path_ok(net, rs_rail_member(net, src, c), rs_rail_member(net, dst, c)))
            return c;
    }
    return first[0]; /* none: the partition check reports it */
}

int rs_msg_needs_network(const rs_net *net, uint32_t m)
{
    const rs_msg *msg = &net->msgs[m];
    if (msg->finished || msg->src == msg->dst || (net->hb_size > 1 && msg->src / net->hb_size == msg->dst / net->hb_size))
        return 0;
    return !msg->pipe || msg->failing_over || msg->ready[1] < msg->nchunks;
}

int rs_msg_cut(const rs_net *net, uint32_t m)
{
    const rs_msg *msg = &net->msgs[m];
    if (!rs_msg_needs_network(net, m))
        return 0;
    if (!msg->failing_over)
        return !rs_fault_path_ok(net, msg->leg_src, msg->leg_dst);
    uint32_t c = rs_failover_rail(net, msg->src, msg->dst);
    return !rs_fault_path_ok(net, rs_rail_member(net, msg->src, c), rs_rail_member(net, msg->dst, c));
}

/* The old pipeline has drained: restart the rest of the message at
 * msg->off over a live rail, or, with none, leave it to the cut-off check
 * (it stays fo, nothing running; the next route change tries again). */
static int failover_restart(rs_net *net, uint32_t m)
{
    rs_msg *msg = &net->msgs[m];
    uint32_t c = rs_failover_rail(net, msg->src, msg->dst);
    msg->leg_src = rs_rail_member(net, msg->src, c);
    msg->leg_dst = rs_rail_member(net, msg->dst, c);
    if (!rs_fault_path_ok(net, msg->leg_src, msg->leg_dst)) {
        rs_fault_note_send(net, msg->leg_src, msg->leg_dst);
        return RS_OK;
    }
    uint64_t ch = net->cfg.relay_chunk_bytes, left = msg->bytes - msg->off;
    uint64_t n = left ? (left + ch - 1) / ch : 1; /* an empty message is one empty chunk */
    if (n > UINT32_MAX)
        return RS_ERANGE;
    msg->nchunks = (uint32_t)n;
    uint64_t *ctr = rs_serial_ctr(net, msg->src);
    msg->serial0 = *ctr;
    msg->gpu_serials = 0; /* a restart takes a block of the counter, as an unnamed relay */
    *ctr += 3 * n;
    rs_relay_reset(msg); /* chunks still to be acknowledged from before are no longer its */
    msg->pipe = 1;
    msg->failing_over = 0;
    return rs_relay_push(net, m, 0, 2);
}

/* A failing-over message's flow finished (or the failover began): keep
 * draining, or restart once nothing of the old pipeline runs. */
int rs_failover_step(rs_net *net, uint32_t m)
{
    rs_msg *msg = &net->msgs[m];
    int drained = !msg->busy[0] && !msg->busy[2] && (!rs_relay_leg_exists(msg, 2) || msg->ready[2] == msg->ready[1]);
    if (!drained)
        return rs_relay_push(net, m, 2, 2); /* the destination HB leg only */
    msg->off += (uint64_t)msg->ready[1] * net->cfg.relay_chunk_bytes;
    return failover_restart(net, m);
}

int rs_msg_failover(rs_net *net, uint32_t m, uint32_t fault)
{
    rs_msg *msg = &net->msgs[m];
    uint32_t K = net->hb_size;
    if (K < 2 || net->cfg.transport != RS_TRANSPORT_ROCE || !rs_msg_needs_network(net, m))
        return 0;
    uint32_t c = rs_failover_rail(net, msg->src, msg->dst);
    if (!rs_fault_path_ok(net, rs_rail_member(net, msg->src, c), rs_rail_member(net, msg->dst, c)))
        return msg->failing_over; /* no rail can carry it: the cut-off check decides */
    int rc = RS_OK;
    if (msg->failing_over) {
        /* Failing over already: restart it if it stalled (no live rail
         * when it drained), else its drain restarts it. */
        if (!msg->busy[0] && !msg->busy[2] && (!rs_relay_leg_exists(msg, 2) || msg->ready[2] == msg->ready[1]))
            rc = failover_restart(net, m);
    } else if (!msg->pipe) {
        /* One flow: keep what the destination accepted in order. */
        uint32_t f = msg->flow1;
        if (RS_NEVER(f >= net->nflows))
            return 0; /* a message always has its flow (rs_net_send undoes one that could not start) */
        const rs_flow *fl = &net->flows[f];
        msg->off = net->be->flow_delivered(net, f) * fl->mtu;
        if (fl->relay_src != RS_NONE) /* a relay (flow level): the chunks that crossed, as a pipeline keeps */
            msg->off -= msg->off % net->cfg.relay_chunk_bytes;
        rs_fault_note_failover(net, f, m, fault);
        net->be->flow_abandon(net, f);
        msg->pipe = 1;
        msg->failing_over = 1;
        rs_relay_reset(msg);
        rc = failover_restart(net, m);
    } else {
        /* Its network-leg chunks not yet delivered are given up: they go
         * again over the new rail. */
        for (uint32_t k = msg->ready[1]; k < msg->sent1; k++) {
            uint32_t f = msg->fly1[k % RS_RELAY_SLOTS];
            if (f == RS_NONE || rs_relay_arrived_early(msg, k))
                continue;
            msg->fly1[k % RS_RELAY_SLOTS] = RS_NONE;
            rs_fault_note_failover(net, f, m, fault);
            net->be->flow_abandon(net, f);
            msg = &net->msgs[m];
        }
        msg->busy[1] = 0;
        msg->early1 = 0; /* those go again too */
        msg->failing_over = 1;
        rc = rs_failover_step(net, m);
    }
    if (rc != RS_OK)
        rs_sim_stop(net->sim, rc);
    return 1;
}
