/*
 * net.c - the network's public face: creation, messages (with PXN relay on
 * rail-only), timers, statistics.
 *
 * A message is what the user sent; it is carried by one flow, or, when
 * relayed, by a pipeline of chunk flows: chunk c crosses the source's HB
 * domain to the relay GPU, then the relay's rail to the destination. The
 * HB stage sends chunks back to back; the rail stage sends chunk c once it
 * has crossed the HB domain and chunk c-1 has left the rail, as NCCL's PXN
 * proxy does. Completion callbacks run from an event of their own at the
 * completion time, so a callback may send again without re-entering the
 * packet path.
 */
#include "fluid.h"
#include "netint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void rs_net_config_default(rs_net_config *c)
{
    memset(c, 0, sizeof *c);
    c->seed = 1;
    c->kind = RS_TOPO_FAT_TREE;
    c->gpus = 64;
    c->hb_size = 8;
    c->radix = 64;
    c->nic_gbps = 400;
    c->link_gbps = 400;
    c->hb_gbps = 3600; /* 450 GB/s per GPU per direction (H100 NVLink 4) */
    c->oversubscription = 1;
    c->link_latency_ns = 500;
    c->switch_latency_ns = 500;
    c->hb_latency_ns = 500;
    c->mtu = 4096;
    c->hb_mtu = 65536;
    c->buffer_bytes = 2u << 20;
    c->transport = RS_TRANSPORT_ROCE;
    c->ack_every = 16;
    /* Lossless fabrics rarely time out; 1 ms is short next to NCCL's
     * default IB timeout (4.096 us * 2^18) but keeps lossy runs moving. */
    c->rto_us = 1000;
    c->relay_chunk_bytes = 512u << 10;
    c->prio = 3;
    c->ecmp = RS_ECMP_FLOW;
    c->pxn = RS_PXN_AUTO;
    /* Lossless by default, as RoCE fabrics are run. XOFF leaves room for
     * what is in flight on a 500 ns link plus a switch (about 100 KB at
     * 400 Gb/s in both directions) below a 2 MiB port. */
    c->pfc = 1;
    c->pfc_xoff_bytes = 256u << 10;
    c->pfc_xon_bytes = 192u << 10;
    /* ECN thresholds as commonly run for DCQCN at 100-400 Gb/s (e.g. the
     * HPCC paper's DCQCN baseline: Kmin 100 KB, Kmax 400 KB, Pmax 0.2). */
    c->ecn = 1;
    c->ecn_kmin_bytes = 100u * 1024;
    c->ecn_kmax_bytes = 400u * 1024;
    c->ecn_pmax = 0.2;
    c->cc = RS_CC_DCQCN;
    /* DCQCN from the paper (Zhu et al. 2015, sec. 5): g = 1/256, CNP
     * interval N = 50 us, alpha period K = 55 us, rate timer T = 55 us,
     * byte counter B = 10 MB, F = 5; its R_AI of 40 Mb/s at 40 Gb/s is
     * scaled with the line rate to 400 Mb/s at 400 Gb/s, R_HAI ten times
     * that, and the floor is the 100 Mb/s common in simulators (HPCC's
     * ns-3). NIC vendors ship other values (e.g. a 4 us CNP interval, a
     * 300 us timer, a 32 KB byte counter, F = 1); with them an 8:1 incast
     * at 400 Gb/s halves the rate every 4 us down to the floor, so they are
     * not the default here (docs/model.md shows both). */
    c->dcqcn.g = 1.0 / 256;
    c->dcqcn.alpha_period_us = 55;
    c->dcqcn.cnp_interval_us = 50;
    c->dcqcn.rate_timer_us = 55;
    c->dcqcn.byte_counter = 10u << 20;
    c->dcqcn.fast_recovery = 5;
    c->dcqcn.rai_mbps = 400;
    c->dcqcn.rhai_mbps = 4000;
    c->dcqcn.min_rate_mbps = 100;
}

typedef struct timer_rec {
    rs_net_timer_fn fn;
    void *ctx;
    uint64_t arg;
} timer_rec;

int rs_net_create(const rs_net_config *c, rs_net **out, rs_err *err)
{
    *out = NULL;
    rs_net *net = calloc(1, sizeof *net);
    if (!net)
        return rs_err_set(err, RS_ENOMEM, "out of memory creating the network");
    net->cfg = *c;
    /* One line per packet; 2 MiB slabs (huge pages where available). */
    rs_pool_init_aligned(&net->pkts, sizeof(rs_pkt), ((2u << 20) - 64) / sizeof(rs_pkt), 64);
    rs_pool_init(&net->timers, sizeof(timer_rec), 0);
    int rc = RS_ENOMEM;
    net->sim = rs_sim_create();
    if (!net->sim)
        goto fail;
    if ((rc = rs_topo_build(net, err)) != RS_OK) {
        if (rc == RS_ENOMEM)
            rs_err_set(err, rc, "out of memory building the topology");
        goto fail;
    }
    uint32_t first;
    if ((rc = rs_sim_entities_add(net->sim, net->nports + net->nnodes + 1, &first)) != RS_OK) {
        rs_err_set(err, rc, "topology.gpus: the network has too many ports and nodes to simulate");
        goto fail;
    }
    net->ent_port0 = first;
    net->lookahead = (uint64_t)net->nports * sizeof(rs_port) > RS_NET_LOOKAHEAD_BYTES;
    for (uint32_t i = 0; i < net->nnodes; i++)
        net->nodes[i].entity = first + net->nports + i;
    net->ent_driver = first + net->nports + net->nnodes;
    rs_time_from_us(c->rto_us, &net->rto);
    rs_time_from_us(c->dcqcn.cnp_interval_us, &net->cnp_interval);
    rs_time_from_us(c->dcqcn.alpha_period_us, &net->alpha_period);
    rs_time_from_us(c->dcqcn.rate_timer_us, &net->rate_timer);
    net->line_bps = (double)(uint64_t)llround(c->nic_gbps * 1e9);
    /* Flow level (fluid.c): the same topology and routes, flows instead of packets. */
    if (c->fidelity != RS_FIDELITY_PACKET && c->fidelity != RS_FIDELITY_FLOW) {
        rc = rs_err_set(err, RS_EINVAL, "fidelity: expected packet or flow");
        goto fail;
    }
    if (c->fidelity == RS_FIDELITY_FLOW && (rc = rs_fluid_create(net)) != RS_OK) {
        rs_err_set(err, rc, "fidelity: out of memory creating the flow-level network");
        goto fail;
    }
    *out = net;
    return RS_OK;
fail:
    rs_net_destroy(net);
    return rc;
}

void rs_net_destroy(rs_net *net)
{
    if (!net)
        return;
    rs_net_capture_finish(net, 0, NULL);
    rs_nettl_free(net);
    rs_fluid_destroy(net->fluid);
    rs_sim_destroy(net->sim);
    for (uint32_t s = 0; s < net->nswitches && net->sw; s++)
        free(net->sw[s].nh_off);
    free(net->sw);
    free(net->nodes);
    free(net->ports);
    free(net->leaf_of_gpu);
    free(net->leaf_index_of_gpu);
    free(net->leaf_port);
    free(net->nh);
    free(net->route);
    free(net->leaf_dist);
    free(net->plane_tiers);
    free(net->flows);
    free(net->msgs);
    free(net->done_times);
    rs_pool_fini(&net->pkts);
    rs_pool_fini(&net->timers);
    free(net);
}

rs_sim *rs_net_sim(rs_net *net) { return net->sim; }
uint32_t rs_net_gpus(const rs_net *net) { return net->gpus; }

/* -- messages ----------------------------------------------------------- */

static void ev_msg_done(rs_sim *sim, void *obj, uint64_t m)
{
    (void)sim;
    rs_net *net = obj;
    rs_msg *msg = &net->msgs[m];
    rs_net_done_fn done = msg->done;
    void *ctx = msg->ctx;
    uint64_t tag = msg->tag;
    if (done)
        done(ctx, net, tag); /* may send: msg may move */
}

static int msg_finish(rs_net *net, uint32_t m)
{
    rs_msg *msg = &net->msgs[m];
    if (net->ndone == net->capdone) {
        size_t cap = net->capdone ? net->capdone * 2 : 1024;
        rs_net_msg_time *t = realloc(net->done_times, cap * sizeof *t);
        if (!t) {
            rs_sim_stop(net->sim, RS_ENOMEM);
            return RS_ENOMEM;
        }
        net->done_times = t;
        net->capdone = cap;
    }
    rs_time now = rs_sim_now(net->sim);
    net->done_times[net->ndone++] = (rs_net_msg_time){ msg->start, now, msg->src, msg->dst, msg->bytes };
    if (RS_UNLIKELY(net->tl != NULL))
        rs_nettl_flow(net, &net->done_times[net->ndone - 1]);
    net->st.msgs_done++;
    net->st.last_activity = now;
    rs_sim_at(net->sim, now, net->nodes[msg->dst].entity, ev_msg_done, net, m);
    return RS_OK;
}

static uint64_t chunk_bytes(const rs_net *net, const rs_msg *msg, uint32_t c)
{
    uint64_t ch = net->cfg.relay_chunk_bytes, off = (uint64_t)c * ch;
    return msg->bytes - off < ch ? msg->bytes - off : ch;
}

static int start_flow(rs_net *net, uint32_t src, uint32_t dst, uint64_t bytes,
                      uint32_t m, uint32_t chunk, int via_hb)
{
    uint32_t f;
    int rc = rs_flow_new(net, src, dst, bytes, m, chunk, via_hb, &f);
    if (rc != RS_OK)
        return rc;
    if (net->fluid)
        return rs_fluid_flow_start(net, f);
    rs_flow_activate(net, f);
    return RS_OK;
}

/* Relay: start the next rail chunk if it is ready and the rail is free. */
static int relay_push(rs_net *net, uint32_t m)
{
    rs_msg *msg = &net->msgs[m];
    if (msg->net_busy || msg->net_next >= msg->hb_ready)
        return RS_OK;
    uint32_t c = msg->net_next++;
    msg->net_busy = 1;
    return start_flow(net, msg->relay, msg->dst, chunk_bytes(net, msg, c), m, c, 0);
}

void rs_msg_flow_done(rs_net *net, uint32_t fid)
{
    const rs_flow *f = &net->flows[fid];
    uint32_t m = f->msg;
    rs_msg *msg = &net->msgs[m];
    int rc = RS_OK;
    if (msg->relay == RS_NONE) {
        rc = msg_finish(net, m);
    } else if (net->ports[f->port].kind == RS_PORT_GPU_HB) {
        msg->hb_ready++;
        if (msg->hb_next < msg->nchunks) {
            uint32_t c = msg->hb_next++;
            rc = start_flow(net, msg->src, msg->relay, chunk_bytes(net, msg, c), m, c, 1);
        }
        if (rc == RS_OK)
            rc = relay_push(net, m);
    } else {
        msg = &net->msgs[m];
        msg->net_busy = 0;
        if (++msg->chunks_done == msg->nchunks)
            rc = msg_finish(net, m);
        else
            rc = relay_push(net, m);
    }
    if (rc != RS_OK)
        rs_sim_stop(net->sim, rc);
}

int rs_net_send(rs_net *net, uint32_t src, uint32_t dst, uint64_t bytes,
                rs_net_done_fn done, void *ctx, uint64_t tag)
{
    if (src >= net->gpus || dst >= net->gpus)
        return RS_EINVAL;
    if (net->nmsgs == net->capmsgs) {
        uint32_t cap = net->capmsgs ? net->capmsgs * 2 : 1024;
        rs_msg *mm = realloc(net->msgs, (size_t)cap * sizeof *mm);
        if (!mm)
            return RS_ENOMEM;
        net->msgs = mm;
        net->capmsgs = cap;
    }
    uint32_t m = net->nmsgs++;
    rs_msg *msg = &net->msgs[m];
    memset(msg, 0, sizeof *msg);
    msg->bytes = bytes;
    msg->tag = tag;
    msg->done = done;
    msg->ctx = ctx;
    msg->start = rs_sim_now(net->sim);
    msg->src = src;
    msg->dst = dst;
    msg->relay = RS_NONE;
    net->st.msgs++;
    net->st.msg_bytes += bytes;

    uint32_t K = net->K;
    if (src == dst)
        return msg_finish(net, m);
    if (K > 1 && src / K == dst / K)
        return start_flow(net, src, dst, bytes, m, RS_NONE, 1);
    int rail_only = net->cfg.kind == RS_TOPO_RAIL_ONLY;
    if (src % K != dst % K && rail_only && net->cfg.pxn == RS_PXN_OFF) {
        net->nmsgs--;
        net->st.msgs--;
        net->st.msg_bytes -= bytes;
        return RS_EUNREACH;
    }
    if (src % K != dst % K && (net->cfg.pxn == RS_PXN_ON || (rail_only && net->cfg.pxn == RS_PXN_AUTO))) {
        /* PXN: cross the HB domain to the GPU on the destination's rail. */
        msg->relay = src / K * K + dst % K;
        uint64_t ch = net->cfg.relay_chunk_bytes;
        uint64_t n = bytes ? (bytes + ch - 1) / ch : 1;
        if (n > UINT32_MAX)
            return RS_ERANGE;
        msg->nchunks = (uint32_t)n;
        msg->hb_next = 1;
        return start_flow(net, src, msg->relay, chunk_bytes(net, msg, 0), m, 0, 1);
    }
    return start_flow(net, src, dst, bytes, m, RS_NONE, 0);
}

/* -- timers and running ------------------------------------------------- */

static void ev_timer(rs_sim *sim, void *obj, uint64_t arg)
{
    (void)sim;
    rs_net *net = obj;
    timer_rec *t = (timer_rec *)(uintptr_t)arg;
    timer_rec copy = *t;
    rs_pool_put(&net->timers, t);
    copy.fn(copy.ctx, net, copy.arg);
}

void rs_net_at(rs_net *net, rs_time t, rs_net_timer_fn fn, void *ctx, uint64_t arg)
{
    timer_rec *rec = rs_pool_get(&net->timers);
    if (!rec) {
        rs_sim_stop(net->sim, RS_ENOMEM);
        return;
    }
    *rec = (timer_rec){ fn, ctx, arg };
    rs_sim_at(net->sim, t, net->ent_driver, ev_timer, net, (uint64_t)(uintptr_t)rec);
}

int rs_net_run(rs_net *net, rs_time until)
{
    int rc = rs_sim_run(net->sim, until);
    rs_fabric_settle(net);
    return rc;
}

/* -- facts and statistics ----------------------------------------------- */

void rs_net_topo_info_get(const rs_net *net, rs_net_topo_info *out)
{
    out->switches = net->nswitches;
    out->links = net->cables;
    out->tiers = net->tiers;
    out->planes = net->planes;
    out->hb_domains = net->K > 1 ? net->domains : 0;
}

void rs_net_stats_get(const rs_net *net, rs_net_stats *out)
{
    *out = net->st;
    out->max_queue_bytes = 0;
    for (uint32_t i = 0; i < net->nports; i++)
        if (net->ports[i].kind == RS_PORT_SWITCH && net->ports[i].max_qbytes > out->max_queue_bytes)
            out->max_queue_bytes = net->ports[i].max_qbytes;
    out->pkts_in_flight = rs_pool_live(&net->pkts);
}

const rs_net_msg_time *rs_net_msg_times(const rs_net *net, size_t *n)
{
    *n = net->ndone;
    return net->done_times;
}

uint32_t rs_net_port_count(const rs_net *net) { return net->nports; }

int rs_net_port_info_get(const rs_net *net, uint32_t port, rs_net_port_info *out)
{
    if (port >= net->nports)
        return RS_EINVAL;
    const rs_port *p = &net->ports[port];
    rs_topo_port_name(net, port, out->name, sizeof out->name);
    rs_topo_port_name(net, p->peer_port, out->peer, sizeof out->peer);
    out->tx_pkts = p->tx_pkts;
    out->tx_bytes = p->tx_bytes;
    out->drops = p->drops;
    out->max_queue_bytes = p->max_qbytes;
    out->max_ingress_bytes = p->max_ing_bytes;
    out->pfc_sent = p->pfc_sent;
    out->pfc_received = p->pfc_received;
    out->paused_ps = p->paused_ps;
    out->ecn_marked = p->ecn_marked;
    out->cnp_sent = p->cnp_sent;
    return RS_OK;
}
