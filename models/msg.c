/*
 * msg.c - messages (msg_int.h): what the user sent, from its record to
 * its completion. A message is carried by one flow, or, when relayed, by
 * a pipeline of chunk flows (relay.c); with faults it may fail over to
 * another rail (failover.c). Its completion callback runs from an event
 * of its own at the completion time, so a callback may send again without
 * re-entering the packet path. A split run's partition may ask for a
 * send to be shipped, and mirrors another process's (rs_net_mirror_send).
 */
#include "backend.h"
#include "netint.h"

#include <string.h>


static int msg_alloc(rs_net *net, uint32_t *m)
{
    return rs_slot_take(&net->msg_free, &net->msgs, &net->capmsgs, &net->nmsgs, sizeof *net->msgs, m);
}

/* A free record reads as finished (fault.c skips finished messages). */
static void msg_release(rs_net *net, uint32_t m)
{
    net->msgs[m].finished = 1;
    net->msgs[m].freed = 1;
    net->msgs[m].done = NULL;
    rs_slot_give(&net->msg_free, m);
}

void rs_net_msg_reuse(rs_net *net, uint32_t m)
{
    if (m < net->nmsgs && !net->msgs[m].freed)
        msg_release(net, m);
}

static void ev_msg_done(rs_sim *sim, void *obj, uint64_t m)
{
    (void)sim;
    rs_net *net = obj;
    rs_msg *msg = &net->msgs[m];
    rs_net_done_fn done = msg->done, left = msg->left_told ? NULL : msg->left;
    void *ctx = msg->ctx;
    uint64_t tag = msg->tag;
    msg_release(net, (uint32_t)m);
    if (left)
        left(ctx, net, tag); /* a chunk pipeline's, or one that failed over: it left as a whole */
    if (done)
        done(ctx, net, tag); /* may send: msg may move */
}

int rs_msg_finish(rs_net *net, uint32_t m)
{
    rs_msg *msg = &net->msgs[m];
    if (!rs_part_owns_node(net, msg->dst)) {
        msg->finished = 1; /* to itself, sent by the shared driver: its destination's process counts it */
        return RS_OK;
    }
    rs_time now = rs_sim_now(net->sim);
    rs_net_msg_time t = { msg->start, now, msg->src, msg->dst, msg->bytes };
    if (rs_fct_keep(net, &t) != RS_OK) {
        rs_sim_stop(net->sim, RS_ENOMEM);
        return RS_ENOMEM;
    }
    msg->finished = 1;
    if (RS_UNLIKELY(net->tl != NULL))
        rs_net_tl_flow(net, &t);
    net->st.msgs_done++;
    net->st.last_activity = now;
    if (RS_UNLIKELY(msg->hit != RS_NONE))
        rs_fault_note_msg_delivered(net, m); /* a failover moved faults' recovery here */
    rs_sim_at(net->sim, now, net->nodes[msg->dst].entity, ev_msg_done, net, m);
    return RS_OK;
}

uint64_t rs_msg_chunk_bytes(const rs_net *net, const rs_msg *msg, uint32_t c)
{
    uint64_t ch = net->cfg.relay_chunk_bytes, off = msg->off + (uint64_t)c * ch;
    return msg->bytes - off < ch ? msg->bytes - off : ch;
}

/* Count `bytes` crossing from GPU a to GPU b, over the HB domain (hb) or
 * the network, into message m's tally (rs_net_msg.tally). Called as
 * each transfer starts, so relays and failovers count where they go;
 * network bytes count at the NIC, keyed by the GPU that has it (shared
 * NICs: topology.gpus_per_nic). */
int rs_msg_tally_leg(rs_net *net, uint32_t m, uint32_t a, uint32_t b, uint64_t bytes, int hb)
{
    rs_tally *t = net->msgs[m].tally;
    if (!t)
        return RS_OK;
    if (!rs_part_owns_node(net, net->msgs[m].src))
        return RS_OK; /* counted in the source's process: the tallies add up (rs_coll_part_finish) */
    if (!hb) {
        a = rs_nic_gpu(net, a);
        b = rs_nic_gpu(net, b);
    }
    int rc = rs_tally_add(t, a, hb ? RS_TALLY_HB_TX : RS_TALLY_NIC_TX, bytes);
    return rc == RS_OK ? rs_tally_add(t, b, hb ? RS_TALLY_HB_RX : RS_TALLY_NIC_RX, bytes) : rc;
}

int rs_msg_start_flow(rs_net *net, uint32_t src, uint32_t dst, uint64_t bytes,
                      uint32_t m, uint32_t chunk, int via_hb, uint8_t leg)
{
    uint32_t f;
    int rc = rs_msg_tally_leg(net, m, src, dst, bytes, via_hb);
    if (rc != RS_OK)
        return rc;
    const rs_msg *msg = &net->msgs[m];
    if (chunk == RS_NONE && msg->named) {
        rc = rs_flow_new_serial(net, src, dst, bytes, m, chunk, via_hb, msg->serial0, &f);
    } else if (chunk == RS_NONE) {
        rc = rs_flow_new(net, src, dst, bytes, m, chunk, via_hb, &f);
    } else if (msg->premade) {
        f = msg->flow_base + rs_relay_legs_before(msg, leg) * msg->nchunks + chunk; /* made at the send */
        net->flows[f].last_progress = rs_sim_now(net->sim);
        if (RS_UNLIKELY(net->tl != NULL))
            rs_net_tl_wake(net); /* as rs_flow_new does */
    } else {
        rc = rs_flow_new_serial(net, src, dst, bytes, m, chunk, via_hb, rs_relay_serial(net, msg, leg, chunk), &f);
    }
    if (rc != RS_OK)
        return rc;
    net->flows[f].leg = leg;
    if (leg == 1)
        net->msgs[m].flow1 = f;
    return net->be->flow_start(net, f);
}

void rs_msg_flow_done(rs_net *net, uint32_t fid)
{
    const rs_flow *f = &net->flows[fid];
    uint32_t m = f->msg;
    rs_msg *msg = &net->msgs[m];
    int rc;
    if (!msg->pipe) {
        rc = rs_msg_finish(net, m);
    } else {
        unsigned k = f->leg;
        if (k == 1) {
            rs_relay_chunk_done(&msg->ready[1], &msg->early1, f->chunk); /* its sender moved on when it left */
        } else {
            msg->busy[k] = 0;
            msg->ready[k]++;
        }
        unsigned last = rs_relay_leg_exists(msg, 2) ? 2 : 1;
        if (RS_UNLIKELY(msg->failing_over))
            rc = rs_failover_step(net, m);
        else if (k == last && msg->ready[k] == msg->nchunks)
            rc = rs_msg_finish(net, m);
        else
            rc = k == 0 ? rs_relay_push(net, m, 0, 1) : rs_relay_push(net, m, 2, 2);
    }
    if (rc != RS_OK)
        rs_sim_stop(net->sim, rc);
}

/* Messages are counted in their source's process (all of them in a
 * serial run): a partitioned run's counts add up. */
static int msg_counted(const rs_net *net, uint32_t src)
{
    return rs_part_owns_node(net, src);
}

/* rc of starting message m's first flow: on failure nothing of m is in
 * the network, so the record goes back and the message was never sent
 * (no phantom left for the fault code or the statistics). */
static int send_started(rs_net *net, uint32_t m, int rc)
{
    if (rc != RS_OK) {
        if (msg_counted(net, net->msgs[m].src)) {
            net->st.msgs--;
            net->st.msg_bytes -= net->msgs[m].bytes;
        }
        msg_release(net, m);
    }
    return rc;
}

/* Message m from GPU src to dst, started at `start`, its flow's serial
 * given (UINT64_MAX: the next in creation order), counted; no callbacks
 * and no tag yet. */
static void msg_fill(rs_net *net, uint32_t m, uint32_t src, uint32_t dst, uint64_t bytes, rs_time start,
                     uint64_t serial)
{
    rs_msg *msg = &net->msgs[m];
    memset(msg, 0, sizeof *msg);
    msg->bytes = bytes;
    msg->start = start;
    msg->src = msg->leg_src = src;
    msg->dst = msg->leg_dst = dst;
    msg->flow1 = msg->hit = RS_NONE;
    if (serial != UINT64_MAX) {
        msg->named = 1;
        msg->serial0 = serial;
    }
    if (msg_counted(net, src)) {
        net->st.msgs++;
        net->st.msg_bytes += bytes;
    }
    if (rs_part_owns_node(net, dst))
        net->msgs_mine++;
}

int rs_msg_send(rs_net *net, const rs_net_msg *req)
{
    uint32_t src = req->src, dst = req->dst;
    uint64_t bytes = req->bytes, serial = req->serial;
    if (src >= net->gpus || dst >= net->gpus)
        return RS_EINVAL;
    int own = 0; /* a split run: made by this process's own event, its frames crossing processes */
    if (RS_UNLIKELY(net->pt.ops->send_check != NULL)) {
        int rc = net->pt.ops->send_check(net, serial != UINT64_MAX, src, dst, &own);
        if (rc != RS_OK)
            return rc;
    }
    uint32_t m;
    if (msg_alloc(net, &m) != RS_OK)
        return RS_ENOMEM;
    msg_fill(net, m, src, dst, bytes, rs_sim_now(net->sim), serial);
    rs_msg *msg = &net->msgs[m];
    msg->tag = req->tag;
    msg->done = req->done;
    msg->left = req->left;
    msg->ctx = req->ctx;
    msg->tally = req->tally;

    uint32_t K = net->hb_size;
    if (src == dst)
        return rs_msg_finish(net, m);
    if (K > 1 && src / K == dst / K)
        return send_started(net, m, rs_msg_start_flow(net, src, dst, bytes, m, RS_NONE, 1, 1));
    int rail_only = net->cfg.kind == RS_TOPO_RAIL_ONLY, xrail = rs_gpu_rail(net, src) != rs_gpu_rail(net, dst);
    /* Across rails NCCL relays by PXN unless routing.pxn=off; raw verbs
     * (perftest) leave from the source's NIC and are forwarded only where
     * no network path joins the rails: on rail-only. */
    int relay = xrail && (req->verbs ? rail_only : rs_src_pxn(net, src));
    if (xrail && rail_only && !relay)
        return send_started(net, m, RS_EUNREACH);
    if (RS_UNLIKELY(net->flt != NULL) && K > 1 && rs_fault_reroute_hb(net) &&
        (rail_only || !rs_fault_path_ok(net, src, dst))) {
        /* Around failed NICs and links through the HB domains. */
        uint32_t c = rs_failover_rail(net, src, dst);
        msg->leg_src = rs_rail_member(net, src, c);
        msg->leg_dst = rs_rail_member(net, dst, c);
    } else if (relay) {
        /* PXN, NCCL's default on any rail-optimized network
         * (NCCL_P2P_PXN_LEVEL=2): cross the HB domain to the GPU on the
         * destination's rail, then take that rail. NCCL relays only
         * through a GPU of its own job: where the job does not hold that
         * GPU, a fat tree sends from the source's NIC over the spine, and
         * rail-only, which must forward, takes the destination domain's
         * GPU on the source's rail if the job holds it, else the source
         * side's anyway (rs_net_set_job). */
        uint32_t via = rs_rail_member(net, src, rs_gpu_rail(net, dst));
        uint32_t far = rs_rail_member(net, dst, rs_gpu_rail(net, src));
        if (rs_pxn_relays(net, src, via)) {
            if (rs_gpu_same_job(net, src, via) || !rs_gpu_same_job(net, dst, far))
                msg->leg_src = via;
            else
                msg->leg_dst = far;
        }
    }
    if (RS_UNLIKELY(net->flt != NULL))
        rs_fault_note_send(net, msg->leg_src, msg->leg_dst);
    net->msgs_relayed += xrail && (msg->leg_src != src || msg->leg_dst != dst) && msg_counted(net, src);
    if (msg->leg_src == src && msg->leg_dst == dst) {
        /* Its first frame may leave (and be shipped) as it starts: it is
         * made this process's own first (rs_flow_new_serial). */
        net->flow_home = own ? rs_part_rank(net) : RS_NONE;
        int rc = rs_msg_start_flow(net, src, dst, bytes, m, RS_NONE, 0, 1);
        net->flow_home = RS_NONE;
        if (rc == RS_OK && own)
            net->pt.ops->ship_send(net, m, net->msgs[m].flow1);
        return send_started(net, m, rc);
    }
    if (own && msg->leg_dst != dst)
        return send_started(net, m, RS_EINTERNAL); /* a relay into the destination's domain is not shipped yet */
    uint64_t ch = net->cfg.relay_chunk_bytes;
    uint64_t n = bytes ? (bytes + ch - 1) / ch : 1;
    if (n > UINT32_MAX)
        return send_started(net, m, RS_ERANGE);
    if (net->be->whole_relays && !net->cfg.relay_pipeline && msg->leg_dst == dst)
        return send_started(net, m, rs_relay_start_whole(net, m));
    msg->nchunks = (uint32_t)n;
    msg->pipe = 1;
    rs_relay_reset(msg);
    if (msg->named) { /* its chunks' serials by its source GPU (rs_relay_serial) */
        if (!net->relay_serial && !(net->relay_serial = calloc(net->gpus, sizeof *net->relay_serial)))
            return send_started(net, m, RS_ENOMEM);
        msg->gpu_serials = 1;
        msg->serial0 = net->relay_serial[src];
        net->relay_serial[src] += 3 * n;
    } else {
        uint64_t *ctr = rs_serial_ctr(net, src);
        msg->serial0 = *ctr; /* its chunks' serials, whoever makes them when */
        *ctr += 3 * n;
    }
    /* Made by this process's own event, its network leg crossing
     * processes: each chunk is shipped as it starts (relay.c). */
    msg->shipped = (uint8_t)own;
    if (net->pt.ops->premade_relays && !own) {
        int rc = rs_relay_premake(net, m);
        if (rc != RS_OK)
            return send_started(net, m, rc);
    }
    return send_started(net, m, rs_relay_push(net, m, 0, 1)); /* starts one chunk flow: all or nothing */
}

/* A shipped send's message here, its flow's serial given (UINT64_MAX: a
 * relay's, whose chunks have serials of their own): its record, counted
 * where its source is, its tag and its done callback, which runs where
 * its destination is: named there (a receiver that joined has its
 * collective), not needed elsewhere. RS_NONE: s names a GPU or callback
 * this process has not, or out of memory. */
static uint32_t mirror_msg(rs_net *net, const rs_part_send *s, uint64_t serial)
{
    const struct rs_net_cb *cb = NULL;
    uint32_t m;
    if (s->src >= net->gpus || s->dst >= net->gpus || (s->cb != RS_NONE && s->cb >= net->ncbs))
        return RS_NONE;
    if (s->cb != RS_NONE && rs_part_owns_node(net, s->dst) && !(cb = rs_net_cb_named(net, s->cb)))
        return RS_NONE;
    if (s->cb != RS_NONE && !cb && net->cbs[s->cb].fn)
        cb = &net->cbs[s->cb];
    if (msg_alloc(net, &m) != RS_OK)
        return RS_NONE;
    msg_fill(net, m, s->src, s->dst, s->bytes, s->start, serial);
    rs_msg *msg = &net->msgs[m];
    msg->tag = s->tag;
    if (cb) {
        msg->done = cb->fn;
        msg->ctx = cb->ctx;
    }
    return m;
}

/* Message m's network-leg flow from GPU `from` as its home made it
 * (chunk RS_NONE: the whole message), never started here; RS_NONE when
 * out of memory. */
static uint32_t mirror_flow(rs_net *net, const rs_part_send *s, uint32_t m, uint32_t from, uint64_t bytes,
                            uint32_t chunk)
{
    uint32_t f;
    net->mirroring = 1;
    int rc = rs_flow_new_serial(net, from, s->dst, bytes, m, chunk, 0, s->serial, &f);
    net->mirroring = 0;
    if (rc != RS_OK)
        return RS_NONE;
    net->flows[f].leg = 1;
    net->flows[f].home = s->home;
    net->flows[f].home_id = s->home_id;
    return f;
}

/* The receiving side of rs_part_ship_send: the message and its flow as
 * the sending process made them, for the frames and the completion this
 * process sees (never sent from here: its source is elsewhere). */
uint32_t rs_net_mirror_send(rs_net *net, const rs_part_send *s)
{
    uint32_t m = mirror_msg(net, s, s->serial), f;
    if (m == RS_NONE)
        return RS_NONE;
    if ((f = mirror_flow(net, s, m, s->src, s->bytes, RS_NONE)) == RS_NONE) {
        msg_release(net, m);
        return RS_NONE;
    }
    net->msgs[m].flow1 = f;
    return f;
}

uint32_t rs_net_mirror_chunk(rs_net *net, const rs_part_send *s, uint32_t *mp)
{
    uint64_t ch = net->cfg.relay_chunk_bytes, n = s->bytes ? (s->bytes + ch - 1) / ch : 1;
    uint32_t K = net->hb_size, m = *mp, f;
    /* A relay as rs_msg_send makes one: from the source's HB domain, over
     * the destination's rail, into the destination itself. */
    if (s->src >= net->gpus || s->dst >= net->gpus || s->leg_src >= net->gpus || K < 2 || s->leg_src == s->src ||
        s->leg_src / K != s->src / K || s->src / K == s->dst / K || rs_gpu_rail(net, s->leg_src) != rs_gpu_rail(net, s->dst) ||
        n != s->nchunks || s->chunk >= s->nchunks)
        return RS_NONE;
    int made = m == RS_NONE;
    if (made) {
        if (s->chunk != 0 || (m = mirror_msg(net, s, UINT64_MAX)) == RS_NONE)
            return RS_NONE;
        rs_msg *msg = &net->msgs[m];
        msg->leg_src = s->leg_src;
        msg->nchunks = s->nchunks;
        msg->pipe = 1;
        msg->shipped = 1;
        rs_relay_reset(msg);
    } else {
        const rs_msg *msg = m < net->nmsgs ? &net->msgs[m] : NULL;
        if (!msg || msg->freed || !msg->shipped || msg->made1 != s->chunk || msg->nchunks != s->nchunks ||
            msg->src != s->src || msg->dst != s->dst || msg->bytes != s->bytes)
            return RS_NONE;
    }
    rs_msg *msg = &net->msgs[m];
    if ((f = mirror_flow(net, s, m, msg->leg_src, rs_msg_chunk_bytes(net, msg, s->chunk), s->chunk)) == RS_NONE) {
        if (made)
            msg_release(net, m);
        return RS_NONE;
    }
    msg = &net->msgs[m];
    msg->made1++;
    msg->flows_live++;
    *mp = m;
    return f;
}

void rs_net_relay_flow_gone(rs_net *net, uint32_t m)
{
    rs_msg *msg = m < net->nmsgs ? &net->msgs[m] : NULL;
    if (!msg || msg->freed || !msg->shipped || RS_NEVER(msg->flows_live == 0))
        return;
    if (--msg->flows_live == 0 && msg->made1 == msg->nchunks)
        msg_release(net, m);
}
