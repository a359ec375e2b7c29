/*
 * net.c - the network's public face: creation, messages (with PXN relays),
 * timers, statistics.
 *
 * A message is what the user sent; it is carried by one flow, or, when
 * relayed, by a pipeline of chunk flows: chunk c crosses the source's HB
 * domain to the relay GPU, then the relay's rail to the destination. The
 * HB stage copies chunks into the relay's 8 buffer slots; the rail stage
 * posts chunk c once it has crossed the HB domain and chunk c-1 has left
 * the NIC, as NCCL's PXN proxy does ("relays" below; at flow level on
 * rail-only, one flow over both legs
 * carries the whole pipeline: start_relay_flow). With faults
 * scheduled (faults.reroute_hb: on rail-only
 * always, on the fat tree when the direct path is cut) a
 * message may also end with a third leg: it picks a live rail c, crosses
 * to the GPU on rail c of the source's domain, the rail to the GPU on rail
 * c of the destination's domain, then that domain to the destination
 * (docs/faults-format.md), one chunk at a time.
 * When routes change, a message in flight whose network leg lost its path
 * fails over to such a rail (rs_msg_failover).
 * Completion callbacks run from an event of their own at the
 * completion time, so a callback may send again without re-entering the
 * packet path.
 */
#include "backend.h"
#include "netint.h"
#include "cost.h"
#include "fluid.h"

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
    c->msg_records = 1;
    c->prio = 3;
    c->recovery = RS_RECOVERY_GBN;
    /* Selective repeat: IRN caps what a QP has in flight at the path's
     * bandwidth-delay product; 512 packets of 4 KiB (2 MiB) cover 400 Gb/s
     * over a 42 us round trip, several times a 3-tier fat tree's. A hole
     * counts as lost once 3 later PSNs arrived, TCP's DupThresh (RFC 6675),
     * so that the reordering of adaptive routing is not taken for loss. */
    c->sack_window = 512;
    c->dupthresh = 3;
    c->ecmp = RS_ECMP_FLOW;
    /* Juniper's default DLB policy for AI fabrics (Apstra 6.0: flowlet
     * inactivity interval 256 us, docs/model.md). */
    c->flowlet_gap_us = 256;
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
    rs_dcqcn_profile_set(&c->dcqcn, RS_DCQCN_CONNECTX);
}

void rs_dcqcn_profile_set(rs_dcqcn_config *d, rs_dcqcn_profile p)
{
    memset(d, 0, sizeof *d);
    d->profile = p;
    if (p == RS_DCQCN_PAPER_2015) {
        /* Zhu et al. 2015, sec. 5: g = 1/256, CNP interval N = 50 us,
         * alpha period K = 55 us, rate timer T = 55 us, byte counter B =
         * 10 MB, F = 5; its R_AI of 40 Mb/s at 40 Gb/s scaled with the
         * line rate to 400 Mb/s, R_HAI ten times that, the 100 Mb/s floor
         * of HPCC's ns-3; every CNP clamps Rt to Rc. */
        d->g = 1.0 / 256;
        d->alpha_period_us = 55;
        d->cnp_interval_us = 50;
        d->rate_timer_us = 55;
        d->byte_counter = 10u << 20;
        d->fast_recovery = 5;
        d->rai_mbps = 400;
        d->rhai_mbps = 4000;
        d->min_rate_mbps = 100;
        d->clamp_target = 1;
        return;
    }
    /* NVIDIA firmware defaults (mlxconfig/cc_params of ConnectX-6 Dx,
     * ConnectX-7, BlueField-3; docs/model.md lists the sources):
     * dce_tcp_g = 1019/1024 weights the old alpha, so g = 5/1024;
     * dce_tcp_rtt = 1 us; min_time_between_cnps = 4 us; rpg_time_reset =
     * 300 us; rpg_byte_reset = 32767 B; rpg_threshold = 1; rpg_ai_rate =
     * 5 Mb/s; rpg_hai_rate = 50 Mb/s; rpg_min_rate = 1 Mb/s;
     * clamp_tgt_rate = 0, clamp_tgt_rate_after_time_inc = 1. The rate
     * cut (rpg_gd = 11: alpha/2 of the rate, rpg_min_dec_fac = 50%: at
     * most half) is the paper's. */
    d->g = 5.0 / 1024;
    d->alpha_period_us = 1;
    d->cnp_interval_us = 4;
    d->rate_timer_us = 300;
    d->byte_counter = 32767;
    d->fast_recovery = 1;
    d->rai_mbps = 5;
    d->rhai_mbps = 50;
    d->min_rate_mbps = 1;
    d->clamp_after_timer = 1;
}

rs_xrail rs_net_cross_rail(const rs_net_config *c)
{
    if (c->hb_size < 2)
        return RS_XRAIL_NONE;
    if (c->pxn != RS_PXN_OFF)
        return RS_XRAIL_PXN;
    return c->kind == RS_TOPO_RAIL_ONLY ? RS_XRAIL_REFUSED : RS_XRAIL_DIRECT;
}

const char *rs_xrail_name(rs_xrail x)
{
    static const char *const names[] = { "none", "pxn", "direct", "refused" };
    return (unsigned)x < sizeof names / sizeof names[0] ? names[x] : "?";
}

static void fct_free(struct rs_fct_acc *a);

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

int rs_net_create(const rs_net_config *c, rs_net **out, rs_err *err)
{
    *out = NULL;
    rs_net *net = calloc(1, sizeof *net);
    if (!net)
        return rs_err_set(err, RS_ENOMEM, "out of memory creating the network");
    net->cfg = *c;
    net->msg_times_keep = RS_NET_MSG_TIMES_KEEP;
    net->flow_home = RS_NONE;
    rs_part_init(net);
    /* One line per packet; 2 MiB slabs (huge pages where available). */
    rs_pool_init_aligned(&net->pkts, sizeof(rs_pkt), ((2u << 20) - 64) / sizeof(rs_pkt), 64);
    rs_pool_init(&net->timers, sizeof(timer_rec), 0);
    int rc = RS_ENOMEM;
    net->sim = rs_sim_create();
    if (!net->sim)
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
    free(net->ports);
    free(net->leaf_of_gpu);
    free(net->leaf_index_of_gpu);
    free(net->leaf_port);
    free(net->nh);
    free(net->route);
    free(net->leaf_dist);
    free(net->plane_tiers);
    free(net->flows);
    free(net->cbs);
    free(net->cbh);
    free(net->flow_free.ids);
    free(net->msgs);
    free(net->msg_free.ids);
    free(net->done_times);
    free(net->done_fct);
    fct_free(net->fct);
    rs_pool_fini(&net->pkts);
    rs_pool_fini(&net->timers);
    rs_pool_fini(&net->sacks);
    free(net);
}

rs_sim *rs_net_sim(rs_net *net) { return net->sim; }
rs_time rs_net_now(const rs_net *net) { return rs_sim_now(net->sim); }
uint32_t rs_net_gpus(const rs_net *net) { return net->gpus; }
rs_fidelity rs_net_fidelity(const rs_net *net) { return net->cfg.fidelity; }
int rs_net_streams(const rs_net *net) { return net->be->streams; }

int rs_net_hop_estimate(const rs_net *net, uint32_t a, uint32_t b, uint64_t bytes, rs_time *ser, rs_time *lat)
{
    return rs_fluid_lone_time(net, a, b, bytes, ser, lat);
}

int rs_net_config_traits(const rs_net_config *c, rs_net_traits *out)
{
    const rs_backend *be = rs_backend_select(c->fidelity);
    if (!be)
        return RS_EINVAL;
    out->packets = !be->rates;
    out->streams = be->streams;
    out->whole_relays = be->whole_relays;
    return RS_OK;
}

/* The backend selection: the one place that maps fidelity to a backend. */
const rs_backend *rs_backend_select(rs_fidelity f)
{
    switch (f) {
    case RS_FIDELITY_PACKET: return &rs_backend_packet;
    case RS_FIDELITY_FLOW: return &rs_backend_flow;
    default: return NULL;
    }
}

/* -- records ------------------------------------------------------------- */

/* Memory follows the transfers in flight, not the transfers so far: a
 * message record is reused once its completion callback has run, a
 * transport flow record (flow level) once its message has been told. A
 * gpt3-175b iteration on 16,384 GPUs sends ~10^9 messages; keeping each
 * record (~250 bytes with its flow) made it run out of memory in a minute.
 * The free stacks have the capacity of their arrays, so handing a record
 * back never allocates. Ids stay below the high-water marks nmsgs and
 * nflows; flows keep their creation order in rs_flow.serial, which the
 * entropy and the flow level's tie-breaks use, so reuse changes no result. */

/* A record id from arr (n handed out, room for *cap of elem bytes): a
 * reused one from fr, else the next new one. The free stack is grown to
 * the array's capacity before an id past its room is handed out (if that
 * fails after the array grew, the next call tries again). */
static int slot_take(rs_free_ids *fr, void *arr, size_t *cap, uint32_t *n, size_t elem, uint32_t *id)
{
    if (fr->n) {
        *id = fr->ids[--fr->n];
        return RS_OK;
    }
    if (rs_array_reserve(arr, cap, *n + 1, elem, 1024) != RS_OK)
        return RS_ENOMEM;
    if (fr->cap < *cap) {
        uint32_t *p = realloc(fr->ids, *cap * sizeof *p);
        if (!p)
            return RS_ENOMEM;
        fr->ids = p;
        fr->cap = *cap;
    }
    *id = (*n)++;
    return RS_OK;
}

static void slot_give(rs_free_ids *fr, uint32_t id)
{
    RS_ASSERT(fr->n < fr->cap);
    fr->ids[fr->n++] = id;
}

int rs_flow_slot(rs_net *net, uint32_t *id)
{
    return slot_take(&net->flow_free, &net->flows, &net->capflows, &net->nflows, sizeof *net->flows, id);
}

void rs_flow_release(rs_net *net, uint32_t id)
{
    net->flows[id].freed = 1;
    slot_give(&net->flow_free, id);
}

static int msg_alloc(rs_net *net, uint32_t *m)
{
    return slot_take(&net->msg_free, &net->msgs, &net->capmsgs, &net->nmsgs, sizeof *net->msgs, m);
}

/* A free record reads as finished (fault.c skips finished messages). */
static void msg_release(rs_net *net, uint32_t m)
{
    net->msgs[m].finished = 1;
    net->msgs[m].freed = 1;
    net->msgs[m].done = NULL;
    slot_give(&net->msg_free, m);
}

void rs_net_msg_reuse(rs_net *net, uint32_t m)
{
    if (m < net->nmsgs && !net->msgs[m].freed)
        msg_release(net, m);
}

/* -- completion-time statistics ------------------------------------------ */

/* The first RS_NET_MSG_TIMES_KEEP completion times are kept (exact
 * percentiles), and with msg_records their whole records
 * (rs_net_msg_times). Past that, completion times go into a log-linear
 * histogram: 2^FCT_SUB sub-buckets per power of two, so a percentile is
 * within 2^-FCT_SUB (0.1%) of the exact one; count, sum, min and max stay
 * exact. 56,320 buckets, 440 KiB, allocated only when needed. */
static void fct_free(struct rs_fct_acc *a)
{
    if (a)
        free(a->hist);
    free(a);
}

size_t rs_fct_bucket(rs_time v)
{
    if (v < (1ull << FCT_SUB))
        return (size_t)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v) - FCT_SUB;
    return ((size_t)e << FCT_SUB) + (size_t)(v >> e);
}

/* The middle of bucket b, rounded down. */
static rs_time fct_value(size_t b)
{
    if (b < (2ull << FCT_SUB))
        return b;
    unsigned e = (unsigned)(b >> FCT_SUB) - 1;
    rs_time lo = (rs_time)(b - ((size_t)e << FCT_SUB)) << e;
    return lo + ((1ull << e) - 1) / 2;
}

static int fct_add(rs_net *net, rs_time fct)
{
    struct rs_fct_acc *a = net->fct;
    if (!a && !(a = net->fct = calloc(1, sizeof *a)))
        return RS_ENOMEM;
    if (a->n == 0 || fct < a->min)
        a->min = fct;
    if (fct > a->max)
        a->max = fct;
    a->n++;
    a->sum += fct;
    if (a->hist)
        a->hist[rs_fct_bucket(fct)]++;
    return RS_OK;
}

/* Keep msg's completion; past RS_NET_MSG_TIMES_KEEP, the histogram. */
static int msg_time_keep(rs_net *net, const rs_net_msg_time *t)
{
    int rc = fct_add(net, t->end - t->start);
    if (rc != RS_OK || net->fct->hist)
        return rc;
    if (net->ndone < net->msg_times_keep) {
        if (rs_array_reserve(&net->done_fct, &net->capfct, net->ndone + 1, sizeof *net->done_fct, 1024) != RS_OK)
            return RS_ENOMEM;
        if (net->cfg.msg_records) {
            if (rs_array_reserve(&net->done_times, &net->capdone, net->ndone + 1, sizeof *net->done_times,
                                 1024) != RS_OK)
                return RS_ENOMEM;
            net->done_times[net->ndone] = *t;
        }
        net->done_fct[net->ndone++] = t->end - t->start;
        return RS_OK;
    }
    struct rs_fct_acc *a = net->fct;
    if (!(a->hist = calloc(FCT_BUCKETS, sizeof *a->hist)))
        return RS_ENOMEM;
    for (size_t i = 0; i < net->ndone; i++)
        a->hist[rs_fct_bucket(net->done_fct[i])]++;
    a->hist[rs_fct_bucket(t->end - t->start)]++;
    return RS_OK;
}

/* The k-th smallest (from 0) of v[0..n), by quickselect: in place, no
 * memory (a sort's copy and merge buffer took twice the kept times while
 * the summary was built). Reorders v; the value does not depend on the
 * order v was in. */
static rs_time select_kth(rs_time *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        /* Median of three as the pivot: sorted or equal runs stay linear. */
        size_t mid = lo + (hi - lo) / 2;
        rs_time a = v[lo], b = v[mid], c = v[hi];
        rs_time p = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < p)
                i++;
            while (v[j] > p)
                j--;
            if (i <= j) {
                rs_time t = v[i];
                v[i++] = v[j];
                v[j] = t;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return v[k];
    }
    return v[k];
}

/* Nearest rank: the smallest value with at least q of the samples at or
 * below it. */
static uint64_t rank_of(uint64_t n, double q)
{
    uint64_t r = (uint64_t)(q * (double)n + 0.999999999);
    return r < 1 ? 1 : r > n ? n : r;
}

int rs_net_fct_get(const rs_net *net, rs_net_fct *out)
{
    memset(out, 0, sizeof *out);
    const struct rs_fct_acc *a = net->fct;
    out->exact = 1;
    if (!a || a->n == 0)
        return RS_OK;
    out->n = a->n;
    out->min = a->min;
    out->max = a->max;
    out->mean = (rs_time)((a->sum + a->n / 2) / a->n);
    const double q[2] = { 0.50, 0.99 };
    rs_time *dst[2] = { &out->p50, &out->p99 };
    if (!a->hist) {
        /* The kept times are a multiset for the percentiles alone:
         * selecting reorders them, which nothing else sees. */
        rs_time *v = ((rs_net *)net)->done_fct;
        for (int k = 0; k < 2; k++)
            *dst[k] = select_kth(v, net->ndone, rank_of(net->ndone, q[k]) - 1);
        return RS_OK;
    }
    out->exact = 0;
    for (int k = 0; k < 2; k++) {
        uint64_t r = rank_of(a->n, q[k]), seen = 0;
        for (size_t b = 0; b < FCT_BUCKETS; b++)
            if ((seen += a->hist[b]) >= r) {
                rs_time v = fct_value(b);
                *dst[k] = v < a->min ? a->min : v > a->max ? a->max : v;
                break;
            }
    }
    return RS_OK;
}

/* -- messages ----------------------------------------------------------- */

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

static int msg_finish(rs_net *net, uint32_t m)
{
    rs_msg *msg = &net->msgs[m];
    if (!rs_part_owns_node(net, msg->dst)) {
        msg->finished = 1; /* to itself, sent by the shared driver: its destination's process counts it */
        return RS_OK;
    }
    rs_time now = rs_sim_now(net->sim);
    rs_net_msg_time t = { msg->start, now, msg->src, msg->dst, msg->bytes };
    if (msg_time_keep(net, &t) != RS_OK) {
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

static uint64_t chunk_bytes(const rs_net *net, const rs_msg *msg, uint32_t c)
{
    uint64_t ch = net->cfg.relay_chunk_bytes, off = msg->off + (uint64_t)c * ch;
    return msg->bytes - off < ch ? msg->bytes - off : ch;
}

/* Count `bytes` crossing from GPU a to GPU b, over the HB domain (hb) or
 * the network, into message m's tally (rs_net_send_tallied). Called as
 * each transfer starts, so relays and failovers count where they go. */
static int tally_leg(rs_net *net, uint32_t m, uint32_t a, uint32_t b, uint64_t bytes, int hb)
{
    rs_tally *t = net->msgs[m].tally;
    if (!t)
        return RS_OK;
    if (!rs_part_owns_node(net, net->msgs[m].src))
        return RS_OK; /* counted in the source's process: the tallies add up (rs_coll_part_finish) */
    int rc = rs_tally_add(t, a, hb ? RS_TALLY_HB_TX : RS_TALLY_NIC_TX, bytes);
    return rc == RS_OK ? rs_tally_add(t, b, hb ? RS_TALLY_HB_RX : RS_TALLY_NIC_RX, bytes) : rc;
}

/* How many of the legs before `leg` the relayed message has: where that
 * leg's chunk flows start in the block a partitioned run makes at the
 * send (make_chunk_flows). */
static inline int leg_exists(const rs_msg *msg, unsigned k);
static uint32_t legs_before(const rs_msg *msg, unsigned leg)
{
    uint32_t n = 0;
    for (unsigned k = 0; k < leg; k++)
        n += (uint32_t)leg_exists(msg, k);
    return n;
}

/* A partitioned run makes relayed message m's chunk flows as it is sent,
 * in every process (the send is the shared driver's), so the receiving
 * process has the record the sending one fills: ids in a block from
 * msg->flow_base, serials the message reserved. */
static int make_chunk_flows(rs_net *net, uint32_t m)
{
    const rs_msg *msg = &net->msgs[m];
    uint32_t n = msg->nchunks, base = RS_NONE;
    for (unsigned k = 0; k < 3; k++) {
        msg = &net->msgs[m];
        if (!leg_exists(msg, k))
            continue;
        uint32_t from = k == 0 ? msg->src : k == 1 ? msg->leg_src : msg->leg_dst;
        uint32_t to = k == 0 ? msg->leg_src : k == 1 ? msg->leg_dst : msg->dst;
        for (uint32_t c = 0; c < n; c++) {
            uint32_t f;
            int rc = rs_flow_new_serial(net, from, to, chunk_bytes(net, msg, c), m, c, k != 1,
                                        msg->serial0 + (uint64_t)k * n + c, &f);
            if (rc != RS_OK)
                return rc;
            if (base == RS_NONE)
                base = f;
            if (RS_NEVER(f != base + legs_before(msg, k) * n + c))
                return RS_EINTERNAL; /* a partitioned run hands no record back: ids run on */
            net->flows[f].leg = (uint8_t)k;
        }
    }
    net->msgs[m].flow_base = base;
    net->msgs[m].premade = 1;
    return RS_OK;
}

static int start_flow(rs_net *net, uint32_t src, uint32_t dst, uint64_t bytes,
                      uint32_t m, uint32_t chunk, int via_hb, uint8_t leg)
{
    uint32_t f;
    int rc = tally_leg(net, m, src, dst, bytes, via_hb);
    if (rc != RS_OK)
        return rc;
    const rs_msg *msg = &net->msgs[m];
    if (chunk == RS_NONE && msg->named) {
        rc = rs_flow_new_serial(net, src, dst, bytes, m, chunk, via_hb, msg->serial0, &f);
    } else if (chunk == RS_NONE) {
        rc = rs_flow_new(net, src, dst, bytes, m, chunk, via_hb, &f);
    } else if (msg->premade) {
        f = msg->flow_base + legs_before(msg, leg) * msg->nchunks + chunk; /* made at the send */
        net->flows[f].last_progress = rs_sim_now(net->sim);
        if (RS_UNLIKELY(net->tl != NULL))
            rs_net_tl_wake(net); /* as rs_flow_new does */
    } else {
        rc = rs_flow_new_serial(net, src, dst, bytes, m, chunk, via_hb,
                                msg->serial0 + (uint64_t)leg * msg->nchunks + chunk, &f);
    }
    if (rc != RS_OK)
        return rc;
    net->flows[f].leg = leg;
    if (leg == 1)
        net->msgs[m].flow1 = f;
    return net->be->flow_start(net, f);
}

/* A backend with whole relays (the flow level): relayed (PXN) message m
 * as one transfer from the relay GPU a with the source's HB crossing
 * ahead of it (docs/fidelity.md, "Relays"): the chunk pipeline's stages
 * overlap, so one rate over both
 * legs carries it, and the pipeline's fill goes into the flow's latency.
 * Its frames are its chunks' (each chunk is an RDMA write of its own).
 * ECMP inside a rail hashes it once, not per chunk. To the rest of net.c
 * it is a single-flow message (a failover restarts its rest as a chunk
 * pipeline over a live rail). */
static int start_relay_flow(rs_net *net, uint32_t m)
{
    const rs_msg *msg = &net->msgs[m];
    uint64_t frames = rs_chunked_frames(msg->bytes, net->cfg.relay_chunk_bytes, net->cfg.mtu);
    if (frames > UINT32_MAX / 2)
        return RS_ERANGE;
    uint32_t f;
    int rc = tally_leg(net, m, msg->src, msg->leg_src, msg->bytes, 1);
    if (rc == RS_OK)
        rc = tally_leg(net, m, msg->leg_src, msg->dst, msg->bytes, 0);
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

/* -- relays ---------------------------------------------------------------
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
 * destination HB leg (leg 2, failover only) forwards them one at a time. */

static inline int leg_exists(const rs_msg *msg, unsigned k)
{
    return k == 1 || (k == 0 ? msg->leg_src != msg->src : msg->leg_dst != msg->dst);
}

static void pipe_reset(rs_msg *msg)
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
static void chunk_done(uint32_t *base, uint8_t *ahead, uint32_t c)
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

static int chunk_arrived_early(const rs_msg *msg, uint32_t c)
{
    return c > msg->ready[1] && ((msg->early1 >> (c - msg->ready[1] - 1)) & 1);
}

/* Pipe: start the next chunk on every free leg from k0 to k1 that may
 * take one, in leg order (source HB first). What moves legs 0 and 1 on
 * happens at the source's end (its HB leg's delivery to the relay GPU,
 * a chunk leaving, an ACK); what moves leg 2 at the destination's (a
 * chunk's delivery): each side pushes only its own legs, so a
 * partitioned run's processes each run their side. */
static int pipe_push(rs_net *net, uint32_t m, unsigned k0, unsigned k1)
{
    for (unsigned k = k0; k <= k1; k++) {
        rs_msg *msg = &net->msgs[m]; /* start_flow may not move msgs, but stay safe */
        if (!leg_exists(msg, k) || msg->busy[k] || (msg->failing_over && k != 2))
            continue; /* failing over: only what crossed the network moves on */
        /* Legs 0 and 1 go no further than the relay's free slots. */
        uint32_t c, avail = k == 1 && leg_exists(msg, 0) ? msg->ready[0] : msg->nchunks;
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
        int rc = start_flow(net, from, to, chunk_bytes(net, msg, c), m, c, k != 1, (uint8_t)k);
        if (rc != RS_OK)
            return rc;
        if (k == 1) {
            msg = &net->msgs[m];
            msg->sent1++;
            msg->fly1[c % RS_RELAY_SLOTS] = msg->flow1;
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
    if (f->chunk == RS_NONE) { /* a whole message's flow: tell its sender (rs_net_send_posted) */
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
    int rc = pipe_push(net, net->flows[fid].msg, 0, 1);
    if (rc != RS_OK)
        rs_sim_stop(net->sim, rc);
}

void rs_msg_flow_acked(rs_net *net, uint32_t fid)
{
    rs_msg *msg = relay_chunk(net, fid);
    if (!msg)
        return;
    uint32_t m = net->flows[fid].msg, c = net->flows[fid].chunk;
    msg->fly1[c % RS_RELAY_SLOTS] = RS_NONE; /* the record may go back now */
    chunk_done(&msg->acked1, &msg->acked_early, c);
    int rc = pipe_push(net, m, 0, 1);
    if (rc != RS_OK)
        rs_sim_stop(net->sim, rc);
}

static int failover_step(rs_net *net, uint32_t m);

void rs_msg_flow_done(rs_net *net, uint32_t fid)
{
    const rs_flow *f = &net->flows[fid];
    uint32_t m = f->msg;
    rs_msg *msg = &net->msgs[m];
    int rc;
    if (!msg->pipe) {
        rc = msg_finish(net, m);
    } else {
        unsigned k = f->leg;
        if (k == 1) {
            chunk_done(&msg->ready[1], &msg->early1, f->chunk); /* its sender moved on when it left */
        } else {
            msg->busy[k] = 0;
            msg->ready[k]++;
        }
        unsigned last = leg_exists(msg, 2) ? 2 : 1;
        if (RS_UNLIKELY(msg->failing_over))
            rc = failover_step(net, m);
        else if (k == last && msg->ready[k] == msg->nchunks)
            rc = msg_finish(net, m);
        else
            rc = k == 0 ? pipe_push(net, m, 0, 1) : pipe_push(net, m, 2, 2);
    }
    if (rc != RS_OK)
        rs_sim_stop(net->sim, rc);
}

/* With faults (faults.reroute_hb): the rail c the network leg uses, from
 * a GPU of the source's domain to one of the destination's, both with a
 * live NIC and a path between them. The destination's rail first (plain
 * PXN), then the source's, then the others in order. On the fat tree this
 * is asked only when the direct path is cut (any rail reaches any other
 * there, but the direct path needs no HB crossing). K on the order of 8:
 * cheap, and only per message when faults are scheduled. */
static uint32_t live_rail(const rs_net *net, uint32_t src, uint32_t dst)
{
    uint32_t K = net->hb_size, s0 = src / K * K, d0 = dst / K * K;
    uint32_t first[2] = { dst % K, src % K };
    for (uint32_t i = 0; i < 2 + K; i++) {
        uint32_t c = i < 2 ? first[i] : i - 2;
        if (rs_fault_path_ok(net, s0 + c, d0 + c))
            return c;
    }
    return dst % K; /* none: the partition check reports it */
}

/* -- failover (faults) ---------------------------------------------------
 *
 * When routes change, a message whose network leg has no path moves to a
 * live rail (live_rail) through the HB domains: its network flow is
 * abandoned (the backend's flow_abandon) and what the far end has not accepted is
 * sent again over the new path. A single-flow message restarts at the
 * first byte its destination has not accepted (its in-order PSNs), as a
 * relayed message. A relayed one keeps the chunks that crossed the
 * network: it stops starting chunks (fo), lets its destination HB leg
 * deliver those and a chunk already on its source HB leg arrive, then
 * restarts at the first chunk that had not crossed (its partial bytes at
 * the old relay GPU are thrown away) from the source over the new rail.
 * HB legs never fail, so the drain ends, one chunk's HB time at most. */

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
    uint32_t K = net->hb_size, c = live_rail(net, msg->src, msg->dst);
    return !rs_fault_path_ok(net, msg->src / K * K + c, msg->dst / K * K + c);
}

/* The old pipeline has drained: restart the rest of the message at
 * msg->off over a live rail, or, with none, leave it to the cut-off check
 * (it stays fo, nothing running; the next route change tries again). */
static int failover_restart(rs_net *net, uint32_t m)
{
    rs_msg *msg = &net->msgs[m];
    uint32_t K = net->hb_size, c = live_rail(net, msg->src, msg->dst);
    msg->leg_src = msg->src / K * K + c;
    msg->leg_dst = msg->dst / K * K + c;
    if (!rs_fault_path_ok(net, msg->leg_src, msg->leg_dst)) {
        rs_fault_note_send(net, msg->leg_src, msg->leg_dst);
        return RS_OK;
    }
    uint64_t ch = net->cfg.relay_chunk_bytes, left = msg->bytes - msg->off;
    uint64_t n = left ? (left + ch - 1) / ch : 1; /* an empty message is one empty chunk */
    if (n > UINT32_MAX)
        return RS_ERANGE;
    msg->nchunks = (uint32_t)n;
    msg->serial0 = net->flow_serial;
    net->flow_serial += 3 * n;
    pipe_reset(msg); /* chunks still to be acknowledged from before are no longer its */
    msg->pipe = 1;
    msg->failing_over = 0;
    return pipe_push(net, m, 0, 2);
}

/* A failing-over message's flow finished (or the failover began): keep
 * draining, or restart once nothing of the old pipeline runs. */
static int failover_step(rs_net *net, uint32_t m)
{
    rs_msg *msg = &net->msgs[m];
    int drained = !msg->busy[0] && !msg->busy[2] && (!leg_exists(msg, 2) || msg->ready[2] == msg->ready[1]);
    if (!drained)
        return pipe_push(net, m, 2, 2); /* the destination HB leg only */
    msg->off += (uint64_t)msg->ready[1] * net->cfg.relay_chunk_bytes;
    return failover_restart(net, m);
}

int rs_msg_failover(rs_net *net, uint32_t m, uint32_t fault)
{
    rs_msg *msg = &net->msgs[m];
    uint32_t K = net->hb_size;
    if (K < 2 || net->cfg.transport != RS_TRANSPORT_ROCE || !rs_msg_needs_network(net, m))
        return 0;
    uint32_t c = live_rail(net, msg->src, msg->dst);
    if (!rs_fault_path_ok(net, msg->src / K * K + c, msg->dst / K * K + c))
        return msg->failing_over; /* no rail can carry it: the cut-off check decides */
    int rc = RS_OK;
    if (msg->failing_over) {
        /* Failing over already: restart it if it stalled (no live rail
         * when it drained), else its drain restarts it. */
        if (!msg->busy[0] && !msg->busy[2] && (!leg_exists(msg, 2) || msg->ready[2] == msg->ready[1]))
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
        pipe_reset(msg);
        rc = failover_restart(net, m);
    } else {
        /* Its network-leg chunks not yet delivered are given up: they go
         * again over the new rail. */
        for (uint32_t k = msg->ready[1]; k < msg->sent1; k++) {
            uint32_t f = msg->fly1[k % RS_RELAY_SLOTS];
            if (f == RS_NONE || chunk_arrived_early(msg, k))
                continue;
            msg->fly1[k % RS_RELAY_SLOTS] = RS_NONE;
            rs_fault_note_failover(net, f, m, fault);
            net->be->flow_abandon(net, f);
            msg = &net->msgs[m];
        }
        msg->busy[1] = 0;
        msg->early1 = 0; /* those go again too */
        msg->failing_over = 1;
        rc = failover_step(net, m);
    }
    if (rc != RS_OK)
        rs_sim_stop(net->sim, rc);
    return 1;
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

int rs_net_send(rs_net *net, uint32_t src, uint32_t dst, uint64_t bytes,
                rs_net_done_fn done, void *ctx, uint64_t tag)
{
    return rs_net_send_tallied(net, src, dst, bytes, done, ctx, tag, NULL);
}

int rs_net_send_tallied(rs_net *net, uint32_t src, uint32_t dst, uint64_t bytes,
                        rs_net_done_fn done, void *ctx, uint64_t tag, rs_tally *tally)
{
    return rs_net_send_posted(net, src, dst, bytes, done, NULL, ctx, tag, tally);
}

static int send_msg(rs_net *net, uint32_t src, uint32_t dst, uint64_t bytes, rs_net_done_fn done,
                    rs_net_done_fn left, void *ctx, uint64_t tag, rs_tally *tally, uint64_t serial);

int rs_net_send_posted(rs_net *net, uint32_t src, uint32_t dst, uint64_t bytes, rs_net_done_fn done,
                       rs_net_done_fn left, void *ctx, uint64_t tag, rs_tally *tally)
{
    return send_msg(net, src, dst, bytes, done, left, ctx, tag, tally, UINT64_MAX);
}

int rs_net_send_named(rs_net *net, uint32_t src, uint32_t dst, uint64_t bytes, rs_net_done_fn done,
                      rs_net_done_fn left, void *ctx, uint64_t tag, rs_tally *tally, uint64_t serial)
{
    if (serial == UINT64_MAX)
        return RS_EINVAL;
    return send_msg(net, src, dst, bytes, done, left, ctx, tag, tally, serial);
}

uint64_t rs_net_serials_reserve(rs_net *net, uint64_t n)
{
    uint64_t first = net->flow_serial;
    net->flow_serial += n;
    return first;
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

static int send_msg(rs_net *net, uint32_t src, uint32_t dst, uint64_t bytes, rs_net_done_fn done,
                    rs_net_done_fn left, void *ctx, uint64_t tag, rs_tally *tally, uint64_t serial)
{
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
    msg->tag = tag;
    msg->done = done;
    msg->left = left;
    msg->ctx = ctx;
    msg->tally = tally;

    uint32_t K = net->hb_size;
    if (src == dst)
        return msg_finish(net, m);
    if (K > 1 && src / K == dst / K)
        return send_started(net, m, start_flow(net, src, dst, bytes, m, RS_NONE, 1, 1));
    int rail_only = net->cfg.kind == RS_TOPO_RAIL_ONLY;
    if (src % K != dst % K && rail_only && net->cfg.pxn == RS_PXN_OFF)
        return send_started(net, m, RS_EUNREACH);
    if (RS_UNLIKELY(net->flt != NULL) && K > 1 && rs_fault_reroute_hb(net) &&
        (rail_only || !rs_fault_path_ok(net, src, dst))) {
        /* Around failed NICs and links through the HB domains. */
        uint32_t c = live_rail(net, src, dst);
        msg->leg_src = src / K * K + c;
        msg->leg_dst = dst / K * K + c;
    } else if (src % K != dst % K && net->cfg.pxn != RS_PXN_OFF) {
        /* PXN, NCCL's default on any rail-optimized network
         * (NCCL_P2P_PXN_LEVEL=2): cross the HB domain to the GPU on the
         * destination's rail, then take that rail. */
        msg->leg_src = src / K * K + dst % K;
    }
    if (RS_UNLIKELY(net->flt != NULL))
        rs_fault_note_send(net, msg->leg_src, msg->leg_dst);
    if (msg->leg_src == src && msg->leg_dst == dst) {
        /* Its first frame may leave (and be shipped) as it starts: it is
         * made this process's own first (rs_flow_new_serial). */
        net->flow_home = own ? rs_part_rank(net) : RS_NONE;
        int rc = start_flow(net, src, dst, bytes, m, RS_NONE, 0, 1);
        net->flow_home = RS_NONE;
        if (rc == RS_OK && own)
            net->pt.ops->ship_send(net, m, net->msgs[m].flow1);
        return send_started(net, m, rc);
    }
    if (own)
        return send_started(net, m, RS_EINTERNAL); /* a relay's chunks are not mirrored yet */
    uint64_t ch = net->cfg.relay_chunk_bytes;
    uint64_t n = bytes ? (bytes + ch - 1) / ch : 1;
    if (n > UINT32_MAX)
        return send_started(net, m, RS_ERANGE);
    if (net->be->whole_relays && !net->cfg.relay_pipeline && msg->leg_dst == dst)
        return send_started(net, m, start_relay_flow(net, m));
    msg->nchunks = (uint32_t)n;
    msg->pipe = 1;
    pipe_reset(msg);
    msg->serial0 = net->flow_serial; /* its chunks' serials, whoever makes them when */
    net->flow_serial += 3 * n;
    if (net->pt.ops->premade_relays) {
        int rc = make_chunk_flows(net, m);
        if (rc != RS_OK)
            return send_started(net, m, rc);
    }
    return send_started(net, m, pipe_push(net, m, 0, 1)); /* starts one chunk flow: all or nothing */
}

/* The receiving side of rs_part_ship_send: the message and its flow as
 * the sending process made them, for the frames and the completion this
 * process sees (never sent from here: its source is elsewhere). */
static const struct rs_net_cb *cb_named(rs_net *net, uint32_t i);

uint32_t rs_net_mirror_send(rs_net *net, const rs_part_send *s)
{
    uint32_t m, f;
    /* Its done runs where its destination is: named there (a receiver
     * that joined has its collective), not needed elsewhere. */
    const struct rs_net_cb *cb = NULL;
    if (s->src >= net->gpus || s->dst >= net->gpus || (s->cb != RS_NONE && s->cb >= net->ncbs))
        return RS_NONE;
    if (s->cb != RS_NONE && rs_part_owns_node(net, s->dst) && !(cb = cb_named(net, s->cb)))
        return RS_NONE;
    if (s->cb != RS_NONE && !cb && net->cbs[s->cb].fn)
        cb = &net->cbs[s->cb];
    if (msg_alloc(net, &m) != RS_OK)
        return RS_NONE;
    msg_fill(net, m, s->src, s->dst, s->bytes, s->start, s->serial); /* counted where its source is */
    rs_msg *msg = &net->msgs[m];
    msg->tag = s->tag;
    if (cb) {
        msg->done = cb->fn;
        msg->ctx = cb->ctx;
    }
    net->mirroring = 1;
    int rc = rs_flow_new_serial(net, s->src, s->dst, s->bytes, m, RS_NONE, 0, s->serial, &f);
    net->mirroring = 0;
    if (rc != RS_OK) {
        msg_release(net, m);
        return RS_NONE;
    }
    net->flows[f].leg = 1;
    net->flows[f].home = s->home;
    net->flows[f].home_id = s->home_id;
    msg->flow1 = f;
    return f;
}

/* The callback index (cbs) and its lookup by (fn, ctx), open addressing:
 * slots hold an index, CBH_EMPTY or CBH_GONE (a tombstone). The hash of
 * a pointer pair orders nothing that is written: it only finds. */
#define CBH_EMPTY UINT32_MAX
#define CBH_GONE (UINT32_MAX - 1)

static uint32_t cbh_slot(const rs_net *net, rs_net_timer_fn fn, const void *ctx)
{
    uint64_t h = rs_mix64((uint64_t)(uintptr_t)fn * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)ctx);
    return (uint32_t)h & (net->capcbh - 1);
}

static int cbh_insert(rs_net *net, uint32_t i);

static int cbh_grow(rs_net *net)
{
    uint32_t live = 0;
    for (uint32_t k = 0; k < net->capcbh; k++)
        live += net->cbh[k] < CBH_GONE;
    uint32_t cap = net->capcbh ? net->capcbh : 64;
    while (cap < 4 * (live + 1))
        cap *= 2;
    uint32_t *old = net->cbh, oldcap = net->capcbh;
    if (!(net->cbh = malloc((size_t)cap * sizeof *net->cbh))) {
        net->cbh = old;
        return RS_ENOMEM;
    }
    memset(net->cbh, 0xff, (size_t)cap * sizeof *net->cbh);
    net->capcbh = cap;
    net->ncbh = 0;
    for (uint32_t k = 0; k < oldcap; k++)
        if (old[k] < CBH_GONE)
            cbh_insert(net, old[k]);
    free(old);
    return RS_OK;
}

/* Index i (bound) becomes the one rs_net_cb_find gives for its (fn, ctx):
 * the latest registration wins, as the reverse scan it replaces did. */
static int cbh_insert(rs_net *net, uint32_t i)
{
    if ((net->ncbh + 1) * 2 > net->capcbh && cbh_grow(net) != RS_OK)
        return RS_ENOMEM;
    const struct rs_net_cb *e = &net->cbs[i];
    uint32_t k = cbh_slot(net, e->fn, e->ctx), gone = CBH_EMPTY;
    for (;; k = (k + 1) & (net->capcbh - 1)) {
        uint32_t v = net->cbh[k];
        if (v == CBH_EMPTY)
            break;
        if (v == CBH_GONE) {
            if (gone == CBH_EMPTY)
                gone = k;
        } else if (net->cbs[v].fn == e->fn && net->cbs[v].ctx == e->ctx) {
            net->cbh[k] = i;
            return RS_OK;
        }
    }
    if (gone != CBH_EMPTY)
        k = gone;
    else
        net->ncbh++;
    net->cbh[k] = i;
    return RS_OK;
}

static void cbh_remove(rs_net *net, uint32_t i)
{
    if (!net->capcbh)
        return;
    const struct rs_net_cb *e = &net->cbs[i];
    for (uint32_t k = cbh_slot(net, e->fn, e->ctx); net->cbh[k] != CBH_EMPTY; k = (k + 1) & (net->capcbh - 1))
        if (net->cbh[k] == i) {
            net->cbh[k] = CBH_GONE;
            return;
        }
}

uint32_t rs_net_cb_register(rs_net *net, rs_net_timer_fn fn, void *ctx)
{
    if (rs_array_reserve32((void **)&net->cbs, &net->capcbs, net->ncbs + 1, sizeof *net->cbs, 16) != RS_OK)
        return RS_NONE;
    net->cbs[net->ncbs] = (struct rs_net_cb){ fn, ctx };
    if (cbh_insert(net, net->ncbs) != RS_OK)
        return RS_NONE;
    return net->ncbs++;
}

uint32_t rs_net_cb_reserve(rs_net *net, uint32_t n, rs_net_cb_resolve_fn resolve, void *ctx)
{
    if ((net->cb_resolve && (net->cb_resolve != resolve || net->cb_resolve_ctx != ctx)) ||
        n > UINT32_MAX - 2 - net->ncbs ||
        rs_array_reserve32((void **)&net->cbs, &net->capcbs, net->ncbs + n, sizeof *net->cbs, 16) != RS_OK)
        return RS_NONE;
    net->cb_resolve = resolve;
    net->cb_resolve_ctx = ctx;
    memset(net->cbs + net->ncbs, 0, (size_t)n * sizeof *net->cbs);
    uint32_t first = net->ncbs;
    net->ncbs += n;
    return first;
}

int rs_net_cb_set(rs_net *net, uint32_t i, rs_net_timer_fn fn, void *ctx)
{
    if (i >= net->ncbs)
        return RS_EINVAL;
    if (net->cbs[i].fn)
        cbh_remove(net, i);
    net->cbs[i] = (struct rs_net_cb){ fn, ctx };
    return fn ? cbh_insert(net, i) : RS_OK;
}

uint32_t rs_net_cb_find(const rs_net *net, rs_net_timer_fn fn, const void *ctx)
{
    if (!net->capcbh)
        return RS_NONE;
    for (uint32_t k = cbh_slot(net, fn, ctx); net->cbh[k] != CBH_EMPTY; k = (k + 1) & (net->capcbh - 1)) {
        uint32_t v = net->cbh[k];
        if (v != CBH_GONE && net->cbs[v].fn == fn && net->cbs[v].ctx == ctx)
            return v;
    }
    return RS_NONE;
}

/* Index i as another process named it: bound now if it was reserved and
 * not yet set (its owner made here on first use). */
static const struct rs_net_cb *cb_named(rs_net *net, uint32_t i)
{
    if (i >= net->ncbs)
        return NULL;
    if (!net->cbs[i].fn && net->cb_resolve)
        net->cb_resolve(net->cb_resolve_ctx, net, i);
    return net->cbs[i].fn ? &net->cbs[i] : NULL;
}

int rs_net_send_relayed(const rs_net *net, uint32_t src, uint32_t dst)
{
    uint32_t K = net->hb_size;
    return K > 1 && src < net->gpus && dst < net->gpus && src / K != dst / K && src % K != dst % K &&
           net->cfg.pxn != RS_PXN_OFF;
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
    const struct rs_net_cb *e = cb_named(net, cb);
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

void rs_net_topo_info_get(const rs_net *net, rs_net_topo_info *out)
{
    out->switches = net->nswitches;
    out->switches_physical = net->nswitches;
    if (net->cfg.kind == RS_TOPO_RAIL_ONLY && net->tiers == 1) {
        uint32_t per = rs_cost_rails_per_switch(net->domains, net->cfg.radix, net->hb_size);
        out->switches_physical = (net->hb_size + per - 1) / per;
    }
    out->links = net->cables;
    out->tiers = net->tiers;
    out->planes = net->planes;
    out->hb_domains = net->hb_size > 1 ? net->domains : 0;
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
    *n = net->cfg.msg_records ? net->ndone : 0;
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
    rs_cost_input_default(&in);
    in.gpus = c->gpus;
    in.hb_size = c->hb_size;
    in.radix = c->radix;
    in.nic_gbps = c->nic_gbps;
    in.oversubscription = c->oversubscription;
    in.pack_rails = 0; /* as built */
    rs_bom ft, ro;
    rs_parts parts;
    rs_parts_default(&parts);
    int rc = rs_cost_compute(&in, &parts, c->kind == RS_TOPO_FAT_TREE ? &ft : NULL,
                             c->kind == RS_TOPO_RAIL_ONLY ? &ro : NULL, err);
    if (rc != RS_OK)
        return rc;
    const rs_bom *b = c->kind == RS_TOPO_FAT_TREE ? &ft : &ro;
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
