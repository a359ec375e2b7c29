/*
 * net.c - the network's public face (net.h): creation and destruction,
 * sending (the rules of which path a message takes are msg.c's, relays
 * relay.c's, failover failover.c's), timers, running (the partition's
 * loop) and the statistics and facts read after a run.
 *
 * A message between different rails of different HB domains crosses the
 * source's HB domain to the GPU on the destination's rail first, as
 * NCCL's PXN does; with faults scheduled (faults.reroute_hb) a message
 * may detour by another live rail (docs/faults-format.md). Completion
 * callbacks run from an event of their own at the completion time, so a
 * callback may send again without re-entering the packet path.
 */#include "backend.h"
#include "netint.h"
#include "versioned.h"
#include "cost.h"
#include "fluid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct timer_rec {
    rs_net_timer_fn fn;
    void *ctx;
    uint64_t arg;
} timer_rec;

/* The routing, recovery and loss keys (the topology's are topo.c's). */
static int check_routing(const rs_net_config *c, rs_time *flowlet_gap, uint64_t *loss_below, rs_err *err)
{
    if (!(c->loss_rate >= 0.0 && c->loss_rate <= 0.5))
        return rs_err_set(err, RS_EINVAL, "topology.loss_rate: expected a probability from 0 to 0.5");
    if (c->loss_rate > 0 && c->transport == RS_TRANSPORT_IDEAL)
        return rs_err_set(err, RS_EINVAL, "topology.loss_rate: expected 0 with transport.kind=ideal, which sends "
                          "no ACKs and never resends a lost frame (the run could not finish)");
    /* A frame is lost when a hash of (seed, port, frame count) falls below
     * rate x 2^64 (0.5 x 2^64 still fits). */
    *loss_below = (uint64_t)ldexp(c->loss_rate, 64);
    if ((unsigned)c->ecmp > RS_ECMP_FLOWLET)
        return rs_err_set(err, RS_EINVAL, "routing.ecmp: expected flow, packet, adaptive or flowlet");
    if (rs_time_from_us(c->flowlet_gap_us, flowlet_gap) != RS_OK || *flowlet_gap == 0)
        return rs_err_set(err, RS_EINVAL, "routing.flowlet_gap_us: expected a positive time below 10^8 seconds");
    if ((unsigned)c->recovery > RS_RECOVERY_SELECTIVE)
        return rs_err_set(err, RS_EINVAL, "transport.recovery: expected go-back-n or selective");
    if (c->sack_window < 64 || c->sack_window > 65536 || (c->sack_window & (c->sack_window - 1)))
        return rs_err_set(err, RS_EINVAL, "transport.sack_window: expected a power of 2 from 64 to 65536 packets, got %u",
                          c->sack_window);
    if (c->dupthresh < 1 || c->dupthresh >= c->sack_window)
        return rs_err_set(err, RS_EINVAL, "transport.dupthresh: expected 1 to transport.sack_window - 1 (%u), got %u",
                          c->sack_window - 1, c->dupthresh);
    return RS_OK;
}

int rs_net_create(const rs_net_config *config, rs_net **out, rs_err *err)
{
    *out = NULL;
    rs_net_config cfg;
    if (rs_net_config_take(&cfg, config) != RS_OK)
        return rs_err_set(err, RS_EINVAL, "network configuration: of no known size (initialise it with "
                          "rs_net_config_default)");
    rs_net *net = calloc(1, sizeof *net);
    if (!net)
        return rs_err_set(err, RS_ENOMEM, "out of memory creating the network");
    net->cfg = cfg;
    net->data_prios = (uint8_t)(1u << (cfg.prio & 7u));
    const rs_net_config *c = &net->cfg;
    net->msg_times_keep = RS_NET_MSG_TIMES_KEEP;
    net->flow_home = RS_NONE;
    rs_part_init(net);
    /* One line per packet; 2 MiB slabs (huge pages where available). */
    rs_pool_init_aligned(&net->pkts, sizeof(rs_pkt), ((2u << 20) - 64) / sizeof(rs_pkt), 64);
    rs_pool_init(&net->timers, sizeof(timer_rec), 0);
    int rc = RS_ENOMEM;
    if (rs_sim_create(&net->sim) != RS_OK)
        goto fail;
    if ((rc = check_routing(c, &net->flowlet_gap, &net->loss_below, err)) != RS_OK)
        goto fail;
    rs_pool_init(&net->sacks, c->sack_window / 4, 0);
    if ((rc = rs_topo_build(net, err)) != RS_OK) {
        if (rc == RS_ENOMEM)
            rs_err_set(err, rc, "out of memory building the topology");
        goto fail;
    }
    uint32_t first;
    if ((rc = rs_sim_entities_add(net->sim, 2 * net->nports + net->nnodes + 1, &first)) != RS_OK) {
        rs_err_set(err, rc, "topology.gpus: the network has too many ports and nodes to simulate");
        goto fail;
    }
    if (c->kind == RS_TOPO_DRAGONFLY && c->dfly_routing == RS_DFLY_UGAL &&
        !(net->ugal_load = calloc(net->nports, sizeof *net->ugal_load))) {
        rc = rs_err_set(err, RS_ENOMEM, "out of memory for the dragonfly's UGAL counts");
        goto fail;
    }
    if (c->ecmp == RS_ECMP_FLOWLET)
        for (uint32_t i = 0; i < net->nswitches; i++)
            if (!(net->sw[i].flowlet = calloc(RS_FLOWLET_SLOTS, sizeof(rs_flowlet)))) {
                rc = rs_err_set(err, RS_ENOMEM, "out of memory for the switches' flowlet tables");
                goto fail;
            }
    net->ent_port0 = first;
    net->lookahead = (uint64_t)net->nports * sizeof(rs_port) > RS_NET_LOOKAHEAD_BYTES;
    for (uint32_t i = 0; i < net->nnodes; i++)
        net->nodes[i].entity = first + net->nports + i;
    net->ent_driver = first + net->nports + net->nnodes;
    net->ent_link0 = net->ent_driver + 1;
    rs_time_from_us(c->rto_us, &net->rto);
    rs_time_from_us(c->dcqcn.cnp_interval_us, &net->cnp_interval);
    rs_time_from_us(c->dcqcn.alpha_period_us, &net->alpha_period);
    rs_time_from_us(c->dcqcn.rate_timer_us, &net->rate_timer);
    net->line_bps = (double)(uint64_t)llround(c->nic_gbps * 1e9);
    /* The backend: the same topology and routes, and frames or flows
     * crossing them. */
    if (!(net->be = rs_backend_select(c->fidelity))) {
        rc = rs_err_set(err, RS_EINVAL, "fidelity: expected packet or flow");
        goto fail;
    }
    if ((net->be->check && (rc = net->be->check(net, c, err)) != RS_OK) ||
        (net->be->create && (rc = net->be->create(net, err)) != RS_OK))
        goto fail;
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
    rs_net_tl_free(net);
    rs_fault_free(net);
    if (net->be && net->be->destroy)
        net->be->destroy(net);
    rs_sim_destroy(net->sim);
    if (net->pt.ops && net->pt.ops->free)
        net->pt.ops->free(net);
    for (uint32_t s = 0; s < net->nswitches && net->sw; s++) {
        free(net->sw[s].nh_off);
        free(net->sw[s].flowlet);
    }
    free(net->sw);
    free(net->nodes);
    rs_ports_free(net->ports, net->nports);
    free(net->links);
    free(net->leaf_of_gpu);
    free(net->member);
    free(net->job_tx);
    free(net->job_serial);
    free(net->relay_serial);
    free(net->job_cfg);
    free(net->leaf_index_of_gpu);
    free(net->leaf_port);
    free(net->ugal_load);
    free(net->nh);
    free(net->route);
    free(net->leaf_dist);
    free(net->plane_tiers);
    free(net->flows);
    free(net->cbs);
    free(net->cb_ranges);
    rs_hindex_fini(&net->cbh);
    free(net->flow_free.ids);
    free(net->msgs);
    free(net->msg_free.ids);
    free(net->done_times);
    free(net->done_fct);
    rs_fct_free(net);
    rs_pool_fini(&net->pkts);
    rs_pool_fini(&net->timers);
    rs_pool_fini(&net->sacks);
    free(net);
}

rs_sim *rs_net_sim(rs_net *net) { return net->sim; }
const rs_nccl_config *rs_net_nccl(const rs_net *net) { return &net->cfg.nccl; }

const rs_nccl_config *rs_net_nccl_of(const rs_net *net, uint32_t gpu)
{
    uint8_t j = net->job_cfg && net->member && gpu < net->gpus ? net->member[gpu] : 0;
    return j && net->job_cfg[j].nccl_on ? &net->job_cfg[j].nccl : &net->cfg.nccl;
}
rs_time rs_net_now(const rs_net *net) { return rs_sim_now(net->sim); }
uint32_t rs_net_gpus(const rs_net *net) { return net->gpus; }
rs_fidelity rs_net_fidelity(const rs_net *net) { return net->cfg.fidelity; }
int rs_net_streams(const rs_net *net) { return net->be->streams; }

int rs_net_hop_estimate(const rs_net *net, uint32_t a, uint32_t b, uint64_t bytes, rs_time *ser, rs_time *lat)
{
    return rs_fluid_lone_time(net, a, b, bytes, 0, ser, lat);
}

int rs_net_hop_as_built(const rs_net *net, uint32_t a, uint32_t b, uint64_t bytes, rs_time *ser, rs_time *lat)
{
    return rs_fluid_lone_time(net, a, b, bytes, 1, ser, lat);
}

uint64_t rs_net_rate_changes(const rs_net *net)
{
    return net->rate_changes;
}

/* -- sending ------------------------------------------------------------ */

int rs_net_send(rs_net *net, const rs_net_msg *req)
{
    rs_net_msg m;
    rs_net_msg_init(&m);
    if (rs_versioned_take(&m, sizeof m, req, RS_SIZE_V1(rs_net_msg, serial)) != RS_OK)
        return RS_EINVAL;
    return rs_msg_send(net, &m);
}

uint64_t rs_net_serials_reserve(rs_net *net, uint64_t n)
{
    uint64_t *ctr = net->job_serial && net->cur_job ? &net->job_serial[net->cur_job] : &net->flow_serial;
    uint64_t first = *ctr;
    *ctr += n;
    return first;
}

uint64_t rs_net_msgs_relayed(const rs_net *net)
{
    return net->msgs_relayed;
}

int rs_net_relayed(const rs_net *net, uint32_t src, uint32_t dst)
{
    uint32_t K = net->hb_size;
    return K > 1 && src < net->gpus && dst < net->gpus && src / K != dst / K &&
           rs_gpu_rail(net, src) != rs_gpu_rail(net, dst) && rs_src_pxn(net, src) &&
           rs_pxn_relays(net, src, rs_rail_member(net, src, rs_gpu_rail(net, dst)));
}

int rs_net_set_job(rs_net *net, uint32_t job, const uint32_t *gpus, uint32_t n, rs_err *err)
{
    if (job < 1 || job > RS_NET_JOBS_MAX)
        return rs_err_set(err, RS_EINVAL, "job %u, expected 1 to %u", job, RS_NET_JOBS_MAX);
    for (uint32_t i = 0; i < n; i++)
        if (gpus[i] >= net->gpus)
            return rs_err_set(err, RS_EINVAL, "GPU %u of the job, expected below %u", gpus[i], net->gpus);
        else if (net->member && net->member[gpus[i]] && net->member[gpus[i]] != job)
            return rs_err_set(err, RS_EINVAL, "GPU %u is job %u's, expected a free GPU", gpus[i],
                              net->member[gpus[i]]);
    if (!net->member && !(net->member = calloc(net->gpus, 1)))
        return rs_err_set(err, RS_ENOMEM, "out of memory marking the job's GPUs");
    for (uint32_t i = 0; i < n; i++)
        net->member[gpus[i]] = (uint8_t)job;
    net->cur_job = job;
    return RS_OK;
}

/* The jobs' own settings, made on the first one set. */
static int job_cfgs(rs_net *net, rs_err *err)
{
    if (!net->job_cfg && !(net->job_cfg = calloc(RS_NET_JOBS_MAX + 1, sizeof *net->job_cfg)))
        return rs_err_set(err, RS_ENOMEM, "out of memory for the jobs' own settings");
    return RS_OK;
}

int rs_net_set_job_pxn(rs_net *net, uint32_t job, rs_pxn_mode pxn, rs_err *err)
{
    if (job < 1 || job > RS_NET_JOBS_MAX || (unsigned)pxn > RS_PXN_OFF)
        return rs_err_set(err, RS_EINVAL, "job %u's routing.pxn %d: expected a job 1 to %u and auto, on or off", job,
                          (int)pxn, RS_NET_JOBS_MAX);
    if (job_cfgs(net, err) != RS_OK)
        return RS_ENOMEM;
    net->job_cfg[job].pxn = (uint8_t)(pxn + 1);
    return RS_OK;
}

int rs_net_set_job_priority(rs_net *net, uint32_t job, uint32_t prio, rs_err *err)
{
    if (job < 1 || job > RS_NET_JOBS_MAX || prio >= RS_NPRIO)
        return rs_err_set(err, RS_EINVAL, "job %u's transport.priority %u: expected a job 1 to %u and a priority "
                          "0 to 7", job, prio, RS_NET_JOBS_MAX);
    if (job_cfgs(net, err) != RS_OK)
        return RS_ENOMEM;
    net->job_cfg[job].prio = (uint8_t)(prio + 1);
    net->job_classes = 1;
    net->data_prios |= (uint8_t)(1u << prio);
    return RS_OK;
}

int rs_net_set_job_nccl(rs_net *net, uint32_t job, const rs_nccl_config *nc, rs_err *err)
{
    if (job < 1 || job > RS_NET_JOBS_MAX)
        return rs_err_set(err, RS_EINVAL, "job %u's nccl.*: expected a job 1 to %u", job, RS_NET_JOBS_MAX);
    /* Checked as the network's own (the GPU is the cluster's). */
    rs_nccl_config own = *nc;
    own.gpu = net->cfg.nccl.gpu;
    int rc = rs_nccl_config_check(&own, err);
    if (rc != RS_OK)
        return rc;
    if (job_cfgs(net, err) != RS_OK)
        return RS_ENOMEM;
    net->job_cfg[job].nccl = own;
    net->job_cfg[job].nccl_on = 1;
    return RS_OK;
}

int rs_net_jobs_serials(rs_net *net, rs_err *err)
{
    if (net->job_serial || net->flow_serial)
        return rs_err_set(err, RS_EINVAL, "per-job flow serials: expected before any flow, once");
    if (!(net->job_serial = calloc(RS_NET_JOBS_MAX + 1, sizeof *net->job_serial)))
        return rs_err_set(err, RS_ENOMEM, "out of memory for the jobs' flow serials");
    for (uint32_t j = 1; j <= RS_NET_JOBS_MAX; j++)
        net->job_serial[j] = (uint64_t)j << RS_NET_JOB_SERIAL_SHIFT;
    return RS_OK;
}

int rs_net_jobs_count(rs_net *net, uint32_t njobs, rs_err *err)
{
    if (njobs < 1 || njobs > RS_NET_JOBS_MAX || !net->member || net->job_tx)
        return rs_err_set(err, RS_EINVAL, "counting %u jobs: expected 1 to %u jobs set (rs_net_set_job), once",
                          njobs, RS_NET_JOBS_MAX);
    if (!(net->job_tx = calloc((size_t)net->nports * njobs, sizeof *net->job_tx)))
        return rs_err_set(err, RS_ENOMEM, "out of memory counting the jobs' bytes per port");
    net->njob_tx = njobs;
    return RS_OK;
}

uint64_t rs_net_job_tx_bytes(const rs_net *net, uint32_t port, uint32_t job)
{
    return net->job_tx && port < net->nports && job >= 1 && job <= net->njob_tx
               ? net->job_tx[(size_t)port * net->njob_tx + job - 1]
               : 0;
}

void rs_net_clear_job(rs_net *net, const uint32_t *gpus, uint32_t n)
{
    for (uint32_t i = 0; net->member && i < n; i++)
        if (gpus[i] < net->gpus)
            net->member[gpus[i]] = 0;
}

int rs_net_set_members(rs_net *net, const uint32_t *gpus, uint32_t n, rs_err *err)
{
    if (net->member)
        memset(net->member, 0, net->gpus);
    return rs_net_set_job(net, 1, gpus, n, err);
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

static void timer_at(rs_net *net, uint32_t ent, rs_time t, rs_net_timer_fn fn, void *ctx, uint64_t arg)
{
    timer_rec *rec = rs_pool_get(&net->timers);
    if (!rec) {
        rs_sim_stop(net->sim, RS_ENOMEM);
        return;
    }
    *rec = (timer_rec){ fn, ctx, arg };
    rs_sim_at(net->sim, t, ent, ev_timer, net, (uint64_t)(uintptr_t)rec);
}

void rs_net_at(rs_net *net, rs_time t, rs_net_timer_fn fn, void *ctx, uint64_t arg)
{
    timer_at(net, net->ent_driver, t, fn, ctx, arg);
}

void rs_net_at_gpu(rs_net *net, uint32_t gpu, rs_time t, rs_net_timer_fn fn, void *ctx, uint64_t arg)
{
    if (gpu >= net->gpus) {
        rs_sim_stop(net->sim, RS_EINTERNAL);
        return;
    }
    timer_at(net, net->nodes[gpu].entity, t, fn, ctx, arg);
}

void rs_net_at_gpu_for(rs_net *net, uint32_t giver, uint32_t target, rs_time t, rs_net_timer_fn fn, void *ctx,
                       uint64_t arg)
{
    if (giver >= net->gpus || target >= net->gpus) {
        rs_sim_stop(net->sim, RS_EINTERNAL);
        return;
    }
    if (rs_part_owns_node(net, target)) {
        timer_at(net, net->nodes[giver].entity, t, fn, ctx, arg);
        return;
    }
    uint32_t cb = rs_net_cb_find(net, fn, ctx);
    if (cb == RS_NONE || !rs_part_owns_node(net, giver)) {
        rs_sim_stop(net->sim, RS_EINTERNAL); /* not named alike in every process, or not this one's to give */
        return;
    }
    net->pt.ops->ship_timer(net, target, t, rs_sim_take_key(net->sim, net->nodes[giver].entity), cb, arg);
}

void rs_net_timer_at_key(rs_net *net, rs_time t, uint64_t key, uint32_t cb, uint64_t arg)
{
    const struct rs_net_cb *e = rs_net_cb_named(net, cb);
    timer_rec *rec = e ? rs_pool_get(&net->timers) : NULL;
    if (!rec) {
        rs_sim_stop(net->sim, e ? RS_ENOMEM : RS_EINTERNAL);
        return;
    }
    *rec = (timer_rec){ e->fn, e->ctx, arg };
    rs_sim_at_key(net->sim, t, key, ev_timer, net, (uint64_t)(uintptr_t)rec);
}

int rs_net_run(rs_net *net, rs_time until)
{
    return net->pt.ops->run(net, until);
}

/* -- facts and statistics ----------------------------------------------- */

/* bytes over a port of line rate gbps whose full frames carry `payload`
 * bytes in payload + `overhead` on the wire, rounded up: bytes x (payload
 * + overhead) / payload wire bytes at the line rate. */
static rs_time payload_time(uint64_t bytes, double gbps, uint64_t payload, uint64_t overhead)
{
    uint64_t bps = (uint64_t)llround(gbps * 1e9);
    if (bytes == 0 || bps == 0 || payload == 0)
        return 0;
    unsigned __int128 num = (unsigned __int128)bytes * (payload + overhead) * 8u * RS_PS_PER_S;
    unsigned __int128 den = (unsigned __int128)payload * bps;
    unsigned __int128 q = (num + den - 1) / den;
    return q > RS_TIME_MAX ? RS_TIME_MAX : (rs_time)q;
}

rs_time rs_net_tally_bound(const rs_net *net, const rs_tally *t)
{
    uint64_t mx[RS_TALLY_NPORTS];
    rs_tally_max(t, mx);
    const rs_net_config *c = &net->cfg;
    uint64_t nic = mx[RS_TALLY_NIC_TX] > mx[RS_TALLY_NIC_RX] ? mx[RS_TALLY_NIC_TX] : mx[RS_TALLY_NIC_RX];
    uint64_t hb = mx[RS_TALLY_HB_TX] > mx[RS_TALLY_HB_RX] ? mx[RS_TALLY_HB_TX] : mx[RS_TALLY_HB_RX];
    rs_time a = payload_time(nic, c->nic_gbps, c->mtu, RS_WIRE_ROCE);
    rs_time b = payload_time(hb, c->hb_gbps, c->hb_mtu, RS_WIRE_HB);
    return a > b ? a : b;
}

static void net_topo_info_whole(const rs_net *net, rs_net_topo_info *out)
{
    out->switches = net->nswitches;
    out->switches_physical = net->nswitches;
    if (net->cfg.kind == RS_TOPO_RAIL_ONLY && net->tiers == 1) {
        uint32_t per = rs_cost_rails_per_switch(net->domains, net->cfg.radix, net->rails);
        out->switches_physical = (net->rails + per - 1) / per;
    }
    out->links = net->cables;
    out->tiers = net->tiers;
    out->planes = net->planes;
    out->hb_domains = net->hb_size > 1 ? net->domains : 0;
    out->nics = net->gpus / net->nic_share;
}

void rs_net_topo_info_fill(const rs_net *net, rs_net_topo_info *out, size_t size)
{
    rs_net_topo_info v;
    memset(&v, 0, sizeof v);
    net_topo_info_whole(net, &v);
    rs_versioned_give(out, size, &v, sizeof v);
}

static void net_stats_whole(const rs_net *net, rs_net_stats *out)
{
    *out = net->st;
    out->max_queue_bytes = 0;
    for (uint32_t i = 0; i < net->nports; i++) {
        rs_port_count c;
        if (net->links[i].kind == RS_PORT_SWITCH && rs_net_port_counts(net, i, &c) &&
            c.max_qbytes > out->max_queue_bytes)
            out->max_queue_bytes = c.max_qbytes;
    }
    out->pkts_in_flight = rs_pool_live(&net->pkts);
}

void rs_net_stats_fill(const rs_net *net, rs_net_stats *out, size_t size)
{
    rs_net_stats v;
    memset(&v, 0, sizeof v);
    net_stats_whole(net, &v);
    rs_versioned_give(out, size, &v, sizeof v);
}

uint32_t rs_net_port_count(const rs_net *net) { return net->nports; }

static int net_port_info_whole(const rs_net *net, uint32_t port, rs_net_port_info *out)
{
    if (port >= net->nports)
        return RS_EINVAL;
    const rs_link *l = &net->links[port];
    rs_topo_port_name(net, port, out->name, sizeof out->name);
    rs_topo_port_name(net, l->peer_port, out->peer, sizeof out->peer);
    rs_port_count c;
    rs_net_port_counts(net, port, &c);
    out->tx_pkts = c.tx_pkts;
    out->tx_bytes = c.tx_bytes;
    out->drops = c.drops;
    out->max_queue_bytes = c.max_qbytes;
    out->max_ingress_bytes = c.max_ing_bytes;
    out->pfc_sent = c.pfc_sent;
    out->pfc_received = c.pfc_received;
    out->paused_ps = c.paused_ps;
    out->ecn_marked = c.ecn_marked;
    out->cnp_sent = c.cnp_sent;
    out->rate_bps = l->rate_bps;
    return RS_OK;
}

int rs_net_port_info_fill(const rs_net *net, uint32_t port, rs_net_port_info *out, size_t size)
{
    rs_net_port_info v;
    memset(&v, 0, sizeof v);
    int rc = net_port_info_whole(net, port, &v);
    if (rc == RS_OK)
        rs_versioned_give(out, size, &v, sizeof v);
    return rc;
}

/* Records that grow with the messages sent: at most RS_NET_MSG_TIMES_KEEP
 * completion times (with msg_records their whole records), and a message
 * and a transport flow record for each message in flight (reused after). */
static double per_msg_records(const rs_net_config *c, uint64_t messages, uint64_t at_once)
{
    double m = (double)messages, kept = m < (double)RS_NET_MSG_TIMES_KEEP ? m : (double)RS_NET_MSG_TIMES_KEEP;
    double each = (double)sizeof(rs_time) + (c->msg_records ? (double)sizeof(rs_net_msg_time) : 0);
    return kept * each + (double)at_once * (double)(sizeof(rs_msg) + sizeof(rs_flow));
}

int rs_net_estimate_bytes(const rs_net_config *c, uint64_t messages, uint64_t at_once, uint64_t *bytes, rs_err *err)
{
    rs_cost_input in;
    rs_cost_input_of(&in, c);
    in.pack_rails = 0; /* as built */
    rs_bom ft, ro;
    rs_catalog parts;
    rs_catalog_default(&parts);
    int rc = c->kind == RS_TOPO_DRAGONFLY
                 ? rs_cost_dragonfly(&in, c->df_hosts, c->df_group, &parts, &ft, err)
                 : rs_cost_compute(&in, &parts, c->kind == RS_TOPO_FAT_TREE ? &ft : NULL,
                                   c->kind == RS_TOPO_RAIL_ONLY ? &ro : NULL, err);
    if (rc != RS_OK)
        return rc;
    const rs_bom *b = c->kind == RS_TOPO_RAIL_ONLY ? &ro : &ft;
    uint64_t hb_ports = c->hb_size > 1 ? 2ull * c->gpus : 0;
    uint64_t ports = 2 * b->links + hb_ports;
    uint64_t nodes = c->gpus + b->switches_logical + (c->hb_size > 1 ? c->gpus / c->hb_size : 0);
    uint64_t leaves = b->switches_per_tier[0];
    /* Route tables: a next-hop offset and a hop distance per (switch,
     * leaf), plus the sets themselves (a few per switch). */
    double total = (double)nodes * sizeof(rs_node) + (double)ports * sizeof(rs_port) +
                   (double)b->switches_logical * (double)leaves * 5.0 + (double)b->switches_logical * 1024.0 +
                   per_msg_records(c, messages, at_once) +
                   (double)(16u << 20); /* pools, queues and the program itself */
    *bytes = total > 1.8e19 ? UINT64_MAX : (uint64_t)total;
    return RS_OK;
}
