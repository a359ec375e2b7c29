/*
 * transport.c - the NIC: flows (one per transport stream, like an RC QP)
 * and the RoCEv2 reliable-connection behaviour, or the ideal transport.
 *
 * Sender: a message of B bytes is ceil(B / mtu) packets with PSNs 0..n-1
 * (RDMA WRITE First/Middle/Last, or Only). A GPU port pulls one packet at a
 * time from its active flows in round robin, so flows share the NIC fairly
 * and nothing waits in a NIC queue but ACKs. RoCE (IB spec vol. 1, 9.7):
 *   - the receiver accepts only the expected PSN; it ACKs every ack_every
 *     in-order packets and the last one (AckReq), coalescing the rest;
 *   - a PSN beyond the expected one is dropped and answered with one NAK
 *     (PSN sequence error, AETH syndrome 0x60) carrying the expected PSN,
 *     and no more NAKs until that PSN arrives;
 *   - a duplicate is dropped and counted toward the next ACK;
 *   - the sender goes back to the NAK'd PSN (go-back-N), and on a
 *     retransmit timeout with no progress goes back to the oldest
 *     unacknowledged PSN.
 * With transport.recovery=selective the receiver places out-of-order PSNs
 * and the sender resends only what is missing (sack.c).
 * Ideal: the same packets, no ACKs; the receiver counts packets (order is
 * irrelevant) and completes when all have arrived. A lost packet means
 * the message never completes, which the run reports.
 *
 * HB-domain transfers are ideal flows over the GPU's HB port in hb_mtu
 * units: NVLink is lossless and credit-flow-controlled.
 *
 * DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA
 * Deployments", SIGCOMM 2015), per flow:
 *   - notification point (receiver): a CE-marked data packet triggers a
 *     CNP to the sender, at most one per flow per cnp_interval;
 *   - reaction point (sender): on a CNP, Rt = Rc, Rc = Rc (1 - alpha/2),
 *     alpha = (1 - g) alpha + g, and the increase stages restart; alpha
 *     decays as (1 - g) alpha every alpha period after that; every
 *     rate-timer period (T) and every byte_counter bytes sent (B) is an
 *     increase event: fast recovery (Rc = (Rt + Rc) / 2) for the first F
 *     events of both kinds, then additive (Rt += R_AI) while one counter
 *     is past F, hyper (Rt += i R_HAI) when both are; Rc = (Rt + Rc) / 2
 *     after each. Back at line rate the timers stop.
 *   - Rc paces the flow: after a packet of w wire bytes the next may start
 *     w * 8 / Rc later; a paced flow leaves the port's round robin and an
 *     event puts it back when it may send again.
 */
#include "netint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void ev_rto(rs_sim *sim, void *obj, uint64_t arg);
static void rto_next(rs_net *net, const rs_flow *f, uint64_t arg);
static void ev_wake(rs_sim *sim, void *obj, uint64_t arg);
static void ev_dcqcn(rs_sim *sim, void *obj, uint64_t arg);

static inline uint32_t hdr_bytes(const rs_port *p, uint8_t type, uint8_t flags)
{
    if (p->kind == RS_PORT_GPU_HB)
        return RS_WIRE_HB;
    uint32_t h = RS_WIRE_ROCE;
    if (type == RS_PKT_CNP)
        h += 16; /* CNP: BTH followed by 16 reserved bytes (RoCEv2 annex A17.9.3) */
    else if (type != RS_PKT_DATA)
        h += RS_WIRE_AETH + (flags & RS_PF_SACK ? RS_WIRE_SACK : 0);
    else if (flags & RS_PF_FIRST)
        h += RS_WIRE_RETH;
    return h;
}

/* Bytes on the wire for a frame, padded to Ethernet's 64-byte minimum.
 * The BTH pad count rounds a RoCE payload up to a multiple of 4. Must
 * agree with rs_frame_wire_bytes (models/pcap.c; checked when capturing). */
static inline uint32_t wire_bytes(const rs_port *p, uint32_t payload, uint8_t type, uint8_t flags)
{
    if (p->kind != RS_PORT_GPU_HB)
        payload += (4 - (payload & 3)) & 3;
    uint32_t w = payload + hdr_bytes(p, type, flags);
    if (p->kind != RS_PORT_GPU_HB && w < RS_ETH_MIN_FRAME + 20)
        w = RS_ETH_MIN_FRAME + 20;
    return w;
}

static inline int selective(const rs_net *net, const rs_flow *f)
{
    return f->reliable && net->cfg.recovery == RS_RECOVERY_SELECTIVE;
}

/* Has flow f a packet to send now (ignoring pacing)? */
static inline int has_data(const rs_net *net, rs_flow *f)
{
    return selective(net, f) ? rs_sack_next(f, net->cfg.sack_window) != RS_NONE : f->snd_nxt < f->npkts;
}

/* Append flow fid to its port's round robin (no transmission started). */
static int act_append(rs_net *net, rs_port *p, uint32_t fid)
{
    rs_flow *f = &net->flows[fid];
    if (f->active || !has_data(net, f))
        return 0;
    f->active = 1;
    f->next_active = RS_NONE;
    if (p->act_tail != RS_NONE)
        net->flows[p->act_tail].next_active = fid;
    else
        p->act_head = fid;
    p->act_tail = fid;
    return 1;
}

void rs_flow_activate(rs_net *net, uint32_t fid)
{
    if (net->flows[fid].sleeping)
        return; /* its wake-up event will put it back */
    rs_port *p = &net->ports[net->flows[fid].port];
    if (act_append(net, p, fid))
        rs_port_kick(net, p);
}

/* A packet of flow f (the flow counts it until it is delivered or dropped). */
static inline rs_pkt *pkt_new(rs_net *net, rs_flow *f)
{
    rs_pkt *pkt = rs_pool_get(&net->pkts);
    if (RS_UNLIKELY(!pkt)) {
        rs_sim_stop(net->sim, RS_ENOMEM);
        return NULL;
    }
    f->pkts_live++;
    rs_part_packet(net, (uint32_t)(f - net->flows), pkt);
    return pkt;
}

/* Memory follows what is in flight: flow fid's record goes back for reuse
 * once it is done both ways and nothing refers to it any more: no packet
 * of it in the network, not in its port's round robin. Every place that
 * clears one of those asks here. Its message may already have been reused
 * (the message never looks at it again once told). Ids are reused, so
 * whatever must not depend on reuse uses f->serial (entropy, captured
 * QPNs). */
static void flow_settle(rs_net *net, rs_flow *f, uint32_t fid)
{
    /* A split run may decide when the record goes back itself (its
     * packets live in several processes). */
    if (rs_part_flow_settle(net, f, fid))
        return;
    if (f->pkts_live || !f->tx_done || !f->rx_done || f->active)
        return;
    rs_sack_release(net, f);
    rs_flow_release(net, fid);
}

/* A flow's timer events (RTO, DCQCN rate increase, pacing wake-up) do not
 * hold its record: a finished flow's RTO would otherwise keep it for a
 * whole timeout (1 ms, hundreds of later messages). The event names the
 * record and the low 32 bits of the flow's serial; one that finds the
 * record handed back, or holding a later flow, is stale and does what it
 * did for a finished flow: nothing. (2^32 flows would have to start within
 * one pending timer for a serial to come round.) */
static inline uint64_t timer_arg(const rs_flow *f, uint32_t fid)
{
    return (uint64_t)(uint32_t)f->serial << 32 | fid;
}

static inline rs_flow *timer_flow(rs_net *net, uint64_t arg, uint32_t *fid)
{
    *fid = (uint32_t)arg;
    rs_flow *f = &net->flows[*fid];
    return f->freed || (uint32_t)f->serial != (uint32_t)(arg >> 32) ? NULL : f;
}

void rs_pkt_free(rs_net *net, rs_pkt *pkt)
{
    uint32_t fid = pkt->flow;
    rs_pool_put(&net->pkts, pkt);
    if (fid == RS_NONE)
        return;
    rs_flow *f = &net->flows[fid];
    rs_part_packet_freed(net, fid, pkt);
    if (--f->pkts_live == 0)
        flow_settle(net, f, fid);
}

/* -- DCQCN reaction point ------------------------------------------------- */

static void dcqcn_arm(rs_net *net, rs_flow *f, uint32_t fid)
{
    if (f->cc_timer)
        return;
    f->cc_timer = 1;
    rs_sim_at(net->sim, f->next_rate, net->nodes[f->src].entity, ev_dcqcn, net, timer_arg(f, fid));
}

static void dcqcn_cnp(rs_net *net, rs_flow *f, uint32_t fid)
{
    rs_time now = rs_sim_now(net->sim);
    rs_dcqcn_cut(net, &f->cc, now);
    f->cc_bytes = 0;
    f->next_rate = now + net->rate_timer;
    dcqcn_arm(net, f, fid);
}

static void ev_dcqcn(rs_sim *sim, void *obj, uint64_t arg)
{
    rs_net *net = obj;
    uint32_t fid;
    rs_flow *f = timer_flow(net, arg, &fid);
    if (!f)
        return;
    rs_time now = rs_sim_now(sim);
    f->cc_timer = 0;
    if (f->tx_done || !f->cc.limited)
        return;
    if (now >= f->next_rate) {
        f->next_rate = now + net->rate_timer;
        rs_dcqcn_increase(net, &f->cc, 1);
    }
    if (f->cc.limited)
        dcqcn_arm(net, f, fid);
}

/* A relay chunk's or a posted message's last frame left the NIC just now
 * (an event of its own: what the sender does next must not run inside
 * the port's dequeue). */
static void ev_flow_left(rs_sim *sim, void *obj, uint64_t arg)
{
    (void)sim;
    rs_net *net = obj;
    uint32_t fid;
    if (timer_flow(net, arg, &fid))
        rs_msg_flow_left(net, fid);
}

static void ev_wake(rs_sim *sim, void *obj, uint64_t arg)
{
    (void)sim;
    rs_net *net = obj;
    uint32_t fid;
    rs_flow *f = timer_flow(net, arg, &fid);
    if (!f)
        return;
    f->sleeping = 0;
    rs_flow_activate(net, fid);
}

/* Take flow f, the head of port p's round robin, out of it. */
static void act_pop(rs_port *p, rs_flow *f)
{
    p->act_head = f->next_active;
    if (p->act_head == RS_NONE)
        p->act_tail = RS_NONE;
    f->next_active = RS_NONE;
    f->active = 0;
}

/* Jobs at several priorities (rs_net_set_job_priority) and one of them
 * paused at port p: flows of paused priorities go to the back of the
 * round robin until the head may send. 0 when none may. */
static int act_skip_paused(rs_net *net, rs_port *p)
{
    uint32_t first = p->act_head;
    for (;;) {
        uint32_t fid = p->act_head;
        rs_flow *f = &net->flows[fid];
        if (!(p->paused >> f->prio & 1u))
            return 1;
        if (f->next_active == RS_NONE)
            return 0;
        p->act_head = f->next_active;
        net->flows[p->act_tail].next_active = fid;
        p->act_tail = fid;
        f->next_active = RS_NONE;
        if (p->act_head == first)
            return 0;
    }
}

/* Next data packet from the head flow of port p's round robin. */
rs_pkt *rs_nic_pull(rs_net *net, rs_port *p)
{
    if (RS_UNLIKELY(p->paused & net->data_prios) && !act_skip_paused(net, p))
        return NULL;
    uint32_t fid = p->act_head;
    rs_flow *f = &net->flows[fid];
    uint32_t psn;
    if (selective(net, f)) {
        /* Its last ACK may have come while it waited its turn. */
        while ((psn = rs_sack_next(f, net->cfg.sack_window)) == RS_NONE) {
            act_pop(p, f);
            flow_settle(net, f, fid);
            if ((fid = p->act_head) == RS_NONE)
                return NULL;
            if (RS_UNLIKELY(p->paused & net->data_prios) && !act_skip_paused(net, p))
                return NULL;
            fid = p->act_head;
            f = &net->flows[fid];
            if (!selective(net, f)) {
                psn = f->snd_nxt;
                break;
            }
        }
    } else {
        psn = f->snd_nxt;
    }
    rs_pkt *pkt = pkt_new(net, f);
    if (!pkt)
        return NULL;
    if (selective(net, f))
        rs_sack_sent(f, psn);
    else
        f->snd_nxt++;
    uint64_t off = (uint64_t)psn * f->mtu;
    uint32_t payload = (uint32_t)(f->bytes - off < f->mtu ? f->bytes - off : f->mtu);
    uint8_t flags = (psn == 0 ? RS_PF_FIRST : 0) | (psn + 1 == f->npkts ? RS_PF_LAST | RS_PF_ACKREQ : 0);
    /* Ask for an ACK when none has come for a quarter of the timeout, so
     * a slow (paced) flow is not mistaken for a lost one. */
    if (f->reliable && rs_sim_now(net->sim) - f->last_progress >= net->rto / 4)
        flags |= RS_PF_ACKREQ;
    if (psn < f->max_sent) {
        flags |= RS_PF_RETX;
        net->st.pkts_retransmitted++;
        if (RS_UNLIKELY(net->flt != NULL) && f->hit != RS_NONE)
            rs_fault_note_retx(net, f); /* charged to the fault that cost the packet */
    } else {
        f->max_sent = psn + 1;
        if (f->max_sent == f->npkts && (f->chunk != RS_NONE ? f->leg == 1 : net->msgs[f->msg].left != NULL))
            rs_sim_at(net->sim, rs_sim_now(net->sim), net->nodes[f->src].entity, ev_flow_left, net,
                      timer_arg(f, fid)); /* a relay's next chunk, or the sender's next message, may follow it */
    }
    pkt->flow = fid;
    pkt->psn = psn;
    pkt->src = f->src;
    pkt->dst = f->dst;
    pkt->payload = payload;
    pkt->type = RS_PKT_DATA;
    pkt->flags = flags;
    pkt->wire = wire_bytes(p, payload, RS_PKT_DATA, flags);
    pkt->prio = f->prio;
    pkt->entropy = f->entropy;
    pkt->hops = 0;
    pkt->in_port = RS_NONE;
    net->st.pkts_sent++;
    net->st.data_pkts++;
    if (p->kind == RS_PORT_GPU_HB) {
        net->st.hb_bytes += payload;
    } else {
        net->st.nic_bytes += payload;
        if (net->cfg.ecn)
            pkt->flags |= RS_PF_ECT;
    }

    /* Rotate: the flow goes to the back, or leaves when it has sent all. */
    act_pop(p, f);
    if (f->cc.rc < net->line_bps) {
        /* Paced by DCQCN: the next packet may start w * 8 / Rc later. */
        rs_time now = rs_sim_now(net->sim);
        rs_time base = f->next_tx > now ? f->next_tx : now;
        f->next_tx = base + rs_ser_time(pkt->wire, (uint64_t)f->cc.rc);
        if (f->cc.limited && (f->cc_bytes += payload) >= net->cfg.dcqcn.byte_counter) {
            f->cc_bytes -= net->cfg.dcqcn.byte_counter;
            rs_dcqcn_increase(net, &f->cc, 0);
        }
        if (f->next_tx > now && has_data(net, f)) {
            f->sleeping = 1;
            rs_sim_at(net->sim, f->next_tx, net->nodes[f->src].entity, ev_wake, net, timer_arg(f, fid));
        } else {
            act_append(net, p, fid);
        }
    } else {
        act_append(net, p, fid); /* back of the line if it has more to send */
    }

    if (f->reliable && !f->timer) {
        f->timer = 1;
        f->last_progress = rs_sim_now(net->sim);
        f->rto_due = f->last_progress + net->rto;
        rto_next(net, f, timer_arg(f, fid));
    }
    return pkt;
}

/* Queue an ACK, NAK or CNP from the receiver (flow's dst) back to the
 * sender, ahead of nothing: it waits in the NIC port's priority queue. */
void rs_nic_send_ctrl(rs_net *net, uint32_t fid, uint8_t type, uint32_t psn, uint8_t flags, uint32_t sack)
{
    rs_flow *f = &net->flows[fid];
    rs_pkt *pkt = pkt_new(net, f);
    if (!pkt)
        return;
    rs_port *p = &net->ports[rs_gpu_nic_port(net, f->dst)];
    pkt->flow = fid;
    pkt->psn = psn;
    pkt->src = f->dst;
    pkt->dst = f->src;
    pkt->type = type;
    pkt->flags = flags;
    pkt->wire = wire_bytes(p, 0, type, flags);
    pkt->sack = flags & RS_PF_SACK ? sack : 0; /* else payload 0 */
    pkt->prio = type == RS_PKT_CNP ? RS_CNP_PRIO : f->prio;
    pkt->entropy = f->entropy;
    pkt->hops = 0;
    pkt->in_port = RS_NONE;
    net->st.pkts_sent++;
    net->st.ctrl_pkts++;
    if (type == RS_PKT_NAK)
        net->st.naks++;
    else if (type == RS_PKT_CNP)
        net->st.cnps_sent++;
    rs_fabric_enqueue(net, p, pkt);
}

void rs_nic_rx_complete(rs_net *net, rs_flow *f, uint32_t fid)
{
    f->rx_done = 1;
    if (RS_UNLIKELY(net->flt != NULL) && f->hit != RS_NONE)
        rs_fault_note_delivered(net, f); /* recovery time of the faults that hit it */
    rs_msg_flow_done(net, fid);
}

void rs_nic_rx_duplicate(rs_net *net, rs_flow *f, uint32_t fid, const rs_pkt *pkt)
{
    /* Re-acknowledge so a sender whose ACK was lost moves on. */
    if (++f->since_ack >= net->cfg.ack_every || (pkt->flags & RS_PF_ACKREQ)) {
        f->since_ack = 0;
        rs_nic_send_ctrl(net, fid, RS_PKT_ACK, f->rcv_nxt - 1, 0, 0);
    }
}

/* Returns 1 when the packet belongs to a flow a failover abandoned (the
 * caller drops it). Such a flow's rcv_nxt is RS_NONE, so its packets take
 * the duplicate branch: the test costs nothing on the in-order path. */
static int receive_data(rs_net *net, rs_flow *f, uint32_t fid, const rs_pkt *pkt)
{
    if (!f->reliable) {
        net->st.goodput_bytes += pkt->payload;
        if (++f->rcv_nxt == f->npkts) {
            f->tx_done = 1;
            rs_nic_rx_complete(net, f, fid);
            if (RS_UNLIKELY(net->flows[fid].chunk != RS_NONE))
                rs_msg_flow_acked(net, fid); /* no ACKs: done is done both ways */
        }
        return 0;
    }
    if ((pkt->flags & RS_PF_CE) && net->cfg.cc == RS_CC_DCQCN) {
        /* Notification point: one CNP per flow per interval (none for a
         * flow a failover abandoned). */
        rs_time now = rs_sim_now(net->sim);
        if (!f->gone && (f->last_cnp == RS_TIME_MAX || now - f->last_cnp >= net->cnp_interval)) {
            f->last_cnp = now;
            rs_nic_send_ctrl(net, fid, RS_PKT_CNP, 0, 0, 0);
        }
    }
    if (net->cfg.recovery == RS_RECOVERY_SELECTIVE)
        return rs_sack_data(net, f, fid, pkt);
    if (pkt->psn == f->rcv_nxt) {
        f->rcv_nxt++;
        net->st.goodput_bytes += pkt->payload;
        f->nak_pending = 0;
        if (++f->since_ack >= net->cfg.ack_every || (pkt->flags & RS_PF_ACKREQ)) {
            f->since_ack = 0;
            rs_nic_send_ctrl(net, fid, RS_PKT_ACK, pkt->psn, 0, 0);
        }
        if (f->rcv_nxt == f->npkts && !f->rx_done)
            rs_nic_rx_complete(net, f, fid);
    } else if (pkt->psn > f->rcv_nxt) {
        if (!f->nak_pending) {
            f->nak_pending = 1;
            rs_nic_send_ctrl(net, fid, RS_PKT_NAK, f->rcv_nxt, 0, 0);
        }
    } else {
        if (RS_UNLIKELY(f->gone))
            return 1;
        rs_nic_rx_duplicate(net, f, fid, pkt);
    }
    return 0;
}

/* Returns 1 for an ACK/NAK of an abandoned flow (the caller drops it). */
static int receive_ack(rs_net *net, rs_flow *f, uint32_t fid, const rs_pkt *pkt)
{
    if (f->tx_done)
        return f->gone;
    if (net->cfg.recovery == RS_RECOVERY_SELECTIVE) {
        rs_sack_ack(net, f, fid, pkt);
        return 0;
    }
    /* ACK psn: everything up to psn arrived. NAK psn: everything before it. */
    uint32_t una = pkt->type == RS_PKT_ACK ? pkt->psn + 1 : pkt->psn;
    if (una > f->snd_una) {
        f->snd_una = una;
        f->last_progress = rs_sim_now(net->sim);
    }
    if (f->snd_una >= f->npkts) {
        f->tx_done = 1;
        if (RS_UNLIKELY(f->chunk != RS_NONE))
            rs_msg_flow_acked(net, fid); /* a relay slot is free */
        return 0;
    }
    if (pkt->type == RS_PKT_NAK && f->snd_nxt > pkt->psn) {
        f->snd_nxt = pkt->psn; /* go back N */
        f->last_progress = rs_sim_now(net->sim);
        rs_flow_activate(net, fid);
    } else if (f->snd_nxt < f->snd_una) {
        f->snd_nxt = f->snd_una;
    }
    return 0;
}

/* A packet of an abandoned flow reached an end: not delivered after all,
 * dropped (reason failover) at the receiving NIC. Off the hot path. */
static void __attribute__((noinline)) failover_discard(rs_net *net, rs_pkt *pkt)
{
    net->st.pkts_delivered--;
    if (pkt->type == RS_PKT_CNP)
        net->st.cnps_received--;
    rs_fabric_drop(net, NULL, pkt, RS_DROP_FAILOVER); /* the timeline names pkt->to_port, this NIC */
}

void rs_nic_receive(rs_net *net, uint32_t gpu, rs_pkt *pkt)
{
    (void)gpu;
    rs_flow *f = &net->flows[pkt->flow];
    int gone;
    net->st.pkts_delivered++;
    if (pkt->type == RS_PKT_DATA) {
        gone = receive_data(net, f, pkt->flow, pkt);
    } else if (pkt->type == RS_PKT_CNP) {
        net->st.cnps_received++;
        if (!f->tx_done)
            dcqcn_cnp(net, f, pkt->flow);
        gone = f->gone;
    } else {
        gone = receive_ack(net, f, pkt->flow, pkt);
    }
    if (RS_UNLIKELY(gone)) {
        failover_discard(net, pkt);
        return;
    }
    rs_pkt_free(net, pkt);
}

void rs_flow_abandon(rs_net *net, uint32_t fid)
{
    rs_flow *f = &net->flows[fid];
    if (f->active) {
        /* Out of its port's round robin (a singly linked list: walk it). */
        rs_port *p = &net->ports[f->port];
        uint32_t prev = RS_NONE;
        for (uint32_t x = p->act_head; x != RS_NONE; prev = x, x = net->flows[x].next_active) {
            if (x != fid)
                continue;
            if (prev == RS_NONE)
                p->act_head = f->next_active;
            else
                net->flows[prev].next_active = f->next_active;
            if (p->act_tail == fid)
                p->act_tail = prev;
            break;
        }
        f->active = 0;
        f->next_active = RS_NONE;
    }
    f->gone = 1;
    rs_sack_release(net, f);
    /* Done both ways: the RTO and DCQCN timers stop at their next firing,
     * a pending wake-up finds nothing to send, the receiver takes every
     * data packet for a duplicate (rcv_nxt past any PSN). */
    f->tx_done = f->rx_done = 1;
    f->snd_nxt = f->snd_una = f->npkts;
    f->rcv_nxt = RS_NONE;
    f->cc.limited = 0;
    flow_settle(net, f, fid); /* the caller reads f no more */
}

/* The retransmit timer of a flow looks at it at rto_due: the last time
 * it looked (or the flow's first send) plus the timeout; then it times the
 * flow out if nothing was acknowledged for a whole timeout, and looks
 * again a timeout after the last progress. Its event goes at most
 * RTO_STEP ahead, and one that comes before rto_due only goes on: a
 * finished flow's timer then leaves the queue within RTO_STEP. At the
 * whole timeout, 4.29 s under NCCL's defaults (NCCL_IB_TIMEOUT 20), every
 * flow that finished in the run held one pending event to its end: 40
 * bytes each, most of a 32-layer Llama-2-7B replay's memory on 256 GPUs
 * (bench/README.md). An extra event changes the order of no other: equal
 * times run in (entity, sequence) order, and the entity's other events
 * keep theirs. */
#define RTO_STEP RS_PS_PER_MS

static void rto_next(rs_net *net, const rs_flow *f, uint64_t arg)
{
    rs_time now = rs_sim_now(net->sim);
    rs_time t = f->rto_due - now > RTO_STEP ? now + RTO_STEP : f->rto_due;
    rs_sim_at(net->sim, t, net->nodes[f->src].entity, ev_rto, net, arg);
}

static void ev_rto(rs_sim *sim, void *obj, uint64_t arg)
{
    rs_net *net = obj;
    uint32_t fid;
    rs_flow *f = timer_flow(net, arg, &fid);
    if (!f)
        return;
    rs_time now = rs_sim_now(sim);
    if (f->tx_done) {
        f->timer = 0;
        return;
    }
    if (now < f->rto_due) {
        rto_next(net, f, arg);
        return;
    }
    if (RS_UNLIKELY(net->flt != NULL) && f->rx_done && !rs_fault_path_ok(net, f->src, f->dst)) {
        /* Its receiver has every byte, but no path is left for the last
         * ACK: the sender gives up, as a QP does once its retries run out,
         * instead of resending into a dead link for ever. */
        f->timer = 0;
        rs_flow_abandon(net, fid); /* may hand f back */
        return;
    }
    if (now >= f->last_progress + net->rto) {
        /* Timeout: nothing acknowledged for a whole RTO. */
        net->st.timeouts++;
        if (selective(net, f))
            rs_sack_timeout(f);
        else
            f->snd_nxt = f->snd_una;
        f->last_progress = now;
        if (RS_UNLIKELY(net->tl != NULL))
            rs_net_tl_wake(net); /* the network may have been idle */
        if (RS_UNLIKELY(net->flt != NULL))
            rs_fault_note_timeout(net); /* the fault watchdog */
        rs_flow_activate(net, fid);
    }
    f->rto_due = f->last_progress + net->rto;
    rto_next(net, f, arg);
}
