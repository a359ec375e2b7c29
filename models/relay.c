/*
 * relay.c - PXN relays (msg_int.h): a message between different rails of
 * different HB domains, or one that failed over to another rail, crosses
 * the source's HB domain to a relay GPU, that GPU's rail, and (failover
 * only) the destination's HB domain.
 *
 * A relayed (PXN) message runs as a pipeline of chunks of
 * transport.relay_chunk_bytes through the relay GPU's buffer of
 * RS_RELAY_SLOTS chunks, as NCCL's proxy does with NCCL_STEPS (8) slots
 * of a 4 MiB buffer (NCCL_BUFFSIZE): the source HB leg (leg 0) copies
 * chunk c into a slot once one is free, one chunk at a time; the network
 * leg (leg 1) posts chunk c once it is in the buffer and chunk c - 1 has
 * left the NIC (its last frame transmitted), so the chunks' RDMA writes
 * go back to back as a QP sends them; a slot frees when its chunk's last
 * ACK comes (the write's completion), in chunk order. Every one of those
 * is known at the sender. The receiver counts the chunks delivered in
 * order (a chunk that overtook a lost one waits in early1), and a
 * destination HB leg (leg 2, failover only) forwards them one at a time.
 *
 * At flow level (a backend with whole relays) one flow over both legs
 * carries the whole pipeline (rs_relay_start_whole).
 */
#include "backend.h"
#include "netint.h"

#include <string.h>

uint64_t rs_relay_serial(const rs_net *net, const rs_msg *msg, unsigned k, uint32_t c)
{
    uint64_t i = msg->serial0 + (uint64_t)k * msg->nchunks + c;
    return msg->gpu_serials ? 1ULL << 63 | (i * net->gpus + msg->src) : i;
}

/* How many of the legs before `leg` the relayed message has: where that
 * leg's chunk flows start in the block a partitioned run makes at the
 * send (rs_relay_premake). */
uint32_t rs_relay_legs_before(const rs_msg *msg, unsigned leg)
{
    uint32_t n = 0;
    for (unsigned k = 0; k < leg; k++)
        n += (uint32_t)rs_relay_leg_exists(msg, k);
    return n;
}

/* A partitioned run makes relayed message m's chunk flows as it is sent,
 * in every process (the send is the shared driver's), so the receiving
 * process has the record the sending one fills: ids in a block from
 * msg->flow_base, serials the message reserved. */
int rs_relay_premake(rs_net *net, uint32_t m)
{
    const rs_msg *msg = &net->msgs[m];
    uint32_t n = msg->nchunks, base = RS_NONE;
    for (unsigned k = 0; k < 3; k++) {
        msg = &net->msgs[m];
        if (!rs_relay_leg_exists(msg, k))
            continue;
        uint32_t from = k == 0 ? msg->src : k == 1 ? msg->leg_src : msg->leg_dst;
        uint32_t to = k == 0 ? msg->leg_src : k == 1 ? msg->leg_dst : msg->dst;
        for (uint32_t c = 0; c < n; c++) {
            uint32_t f;
            int rc = rs_flow_new_serial(net, from, to, rs_msg_chunk_bytes(net, msg, c), m, c, k != 1,
                                        rs_relay_serial(net, msg, k, c), &f);
            if (rc != RS_OK)
                return rc;
            if (base == RS_NONE)
                base = f;
            if (RS_NEVER(f != base + rs_relay_legs_before(msg, k) * n + c))
                return RS_EINTERNAL; /* a partitioned run hands no record back: ids run on */
            net->flows[f].leg = (uint8_t)k;
        }
    }
    net->msgs[m].flow_base = base;
    net->msgs[m].premade = 1;
    return RS_OK;
}

/* A backend with whole relays (the flow level): relayed (PXN) message m
 * as one transfer from the relay GPU a with the source's HB crossing
 * ahead of it (docs/fidelity.md, "Relays"): the chunk pipeline's stages
 * overlap, so one rate over both
 * legs carries it, and the pipeline's fill goes into the flow's latency.
 * Its frames are its chunks' (each chunk is an RDMA write of its own).
 * ECMP inside a rail hashes it once, not per chunk. To the rest of the message code
 * it is a single-flow message (a failover restarts its rest as a chunk
 * pipeline over a live rail). */
int rs_relay_start_whole(rs_net *net, uint32_t m)
{
    const rs_msg *msg = &net->msgs[m];
    uint64_t frames = rs_chunked_frames(msg->bytes, net->cfg.relay_chunk_bytes, net->cfg.mtu);
    if (frames > UINT32_MAX / 2)
        return RS_ERANGE;
    uint32_t f;
    int rc = rs_msg_tally_leg(net, m, msg->src, msg->leg_src, msg->bytes, 1);
    if (rc == RS_OK)
        rc = rs_msg_tally_leg(net, m, msg->leg_src, msg->dst, msg->bytes, 0);
    if (rc != RS_OK)
        return rc;
    rc = rs_flow_new(net, msg->leg_src, msg->dst, msg->bytes, m, RS_NONE, 0, &f);
    if (rc != RS_OK)
        return rc;
    net->flows[f].leg = 1;
    net->flows[f].relay_src = msg->src;
    net->flows[f].npkts = (uint32_t)frames;
    net->msgs[m].flow1 = f;
    return net->be->flow_start(net, f);
}

void rs_relay_reset(rs_msg *msg)
{
    memset(msg->ready, 0, sizeof msg->ready);
    memset(msg->busy, 0, sizeof msg->busy);
    msg->sent1 = msg->acked1 = 0;
    msg->early1 = msg->acked_early = 0;
    for (unsigned i = 0; i < RS_RELAY_SLOTS; i++)
        msg->fly1[i] = RS_NONE;
}

/* Chunk c is done: *base counts the chunks done in order, bit b of
 * *ahead says chunk *base + 1 + b is done too. The network leg has at
 * most RS_RELAY_SLOTS chunks past the oldest unacknowledged one, so they
 * fit the mask. */
void rs_relay_chunk_done(uint32_t *base, uint8_t *ahead, uint32_t c)
{
    if (c < *base)
        return;
    if (c > *base) {
        if (!RS_NEVER(c - *base - 1 >= 8))
            *ahead |= (uint8_t)(1u << (c - *base - 1));
        return;
    }
    unsigned m = *ahead;
    (*base)++;
    while (m & 1) {
        m >>= 1;
        (*base)++;
    }
    *ahead = (uint8_t)(m >> 1);
}

int rs_relay_arrived_early(const rs_msg *msg, uint32_t c)
{
    return c > msg->ready[1] && ((msg->early1 >> (c - msg->ready[1] - 1)) & 1);
}

/* Pipe: start the next chunk on every free leg from k0 to k1 that may
 * take one, in leg order (source HB first). What moves legs 0 and 1 on
 * happens at the source's end (its HB leg's delivery to the relay GPU,
 * a chunk leaving, an ACK); what moves leg 2 at the destination's (a
 * chunk's delivery): each side pushes only its own legs, so a
 * partitioned run's processes each run their side. */
int rs_relay_push(rs_net *net, uint32_t m, unsigned k0, unsigned k1)
{
    for (unsigned k = k0; k <= k1; k++) {
        rs_msg *msg = &net->msgs[m]; /* rs_msg_start_flow may not move msgs, but stay safe */
        if (!rs_relay_leg_exists(msg, k) || msg->busy[k] || (msg->failing_over && k != 2))
            continue; /* failing over: only what crossed the network moves on */
        /* Legs 0 and 1 go no further than the relay's free slots. */
        uint32_t c, avail = k == 1 && rs_relay_leg_exists(msg, 0) ? msg->ready[0] : msg->nchunks;
        if (k < 2 && avail > msg->acked1 + RS_RELAY_SLOTS)
            avail = msg->acked1 + RS_RELAY_SLOTS;
        if (k == 0) {
            c = msg->ready[0];
        } else if (k == 1) {
            c = msg->sent1;
        } else {
            c = msg->ready[2];
            avail = msg->ready[1];
        }
        if (c >= avail)
            continue;
        msg->busy[k] = 1;
        uint32_t from = k == 0 ? msg->src : k == 1 ? msg->leg_src : msg->leg_dst;
        uint32_t to = k == 0 ? msg->leg_src : k == 1 ? msg->leg_dst : msg->dst;
        /* A shipped relay's network-leg chunk is this process's own flow,
         * its first frame possibly shipped as it starts (msg.c). */
        int ship = k == 1 && msg->shipped;
        net->flow_home = ship ? rs_part_rank(net) : RS_NONE;
        int rc = rs_msg_start_flow(net, from, to, rs_msg_chunk_bytes(net, msg, c), m, c, k != 1, (uint8_t)k);
        net->flow_home = RS_NONE;
        if (rc != RS_OK)
            return rc;
        if (k == 1) {
            msg = &net->msgs[m];
            msg->sent1++;
            msg->fly1[c % RS_RELAY_SLOTS] = msg->flow1;
            if (ship) { /* every other process mirrors it (rs_net_mirror_chunk) */
                msg->made1++;
                msg->flows_live++;
                net->pt.ops->ship_send(net, m, msg->flow1);
            }
        }
    }
    return RS_OK;
}

/* Flow fid is network-leg chunk of a relay still running, the one its
 * message expects (not one a failover left behind, not of a finished
 * message or of a later message in the reused record): its message. */
static rs_msg *relay_chunk(rs_net *net, uint32_t fid)
{
    const rs_flow *f = &net->flows[fid];
    if (f->leg != 1 || f->chunk == RS_NONE || f->gone || f->msg >= net->nmsgs)
        return NULL;
    rs_msg *msg = &net->msgs[f->msg];
    if (!msg->pipe || msg->finished || msg->fly1[f->chunk % RS_RELAY_SLOTS] != fid)
        return NULL;
    return msg;
}

void rs_msg_flow_left(rs_net *net, uint32_t fid)
{
    const rs_flow *f = &net->flows[fid];
    if (f->chunk == RS_NONE) { /* a whole message's flow: tell its sender (rs_net_msg.left) */
        rs_msg *pm = f->msg < net->nmsgs ? &net->msgs[f->msg] : NULL;
        if (!pm || pm->finished || pm->pipe || pm->flow1 != fid || !pm->left || pm->left_told || f->gone)
            return;
        pm->left_told = 1;
        pm->left(pm->ctx, net, pm->tag);
        return;
    }
    rs_msg *msg = relay_chunk(net, fid);
    if (!msg || !msg->busy[1] || msg->sent1 != net->flows[fid].chunk + 1)
        return;
    msg->busy[1] = 0;
    uint32_t m = net->flows[fid].msg;
    int last = net->flows[fid].chunk + 1 == msg->nchunks;
    int rc = rs_relay_push(net, m, 0, 1);
    if (rc != RS_OK) {
        rs_sim_stop(net->sim, rc);
        return;
    }
    /* Its last chunk has left the relay GPU's NIC: the message has left
     * its source's side (rs_net_msg.left), as a single flow has when its
     * last frame leaves and a whole relay at flow level when its last
     * byte went into the fluid. Known at the source's end. */
    msg = &net->msgs[m];
    if (last && msg->left && !msg->left_told) {
        msg->left_told = 1;
        msg->left(msg->ctx, net, msg->tag);
    }
}

void rs_msg_flow_acked(rs_net *net, uint32_t fid)
{
    rs_msg *msg = relay_chunk(net, fid);
    if (!msg)
        return;
    uint32_t m = net->flows[fid].msg, c = net->flows[fid].chunk;
    msg->fly1[c % RS_RELAY_SLOTS] = RS_NONE; /* the record may go back now */
    rs_relay_chunk_done(&msg->acked1, &msg->acked_early, c);
    int rc = rs_relay_push(net, m, 0, 1);
    if (rc != RS_OK)
        rs_sim_stop(net->sim, rc);
}
