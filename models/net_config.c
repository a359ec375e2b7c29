/*
 * net_config.c - the network's configuration (net.h): every key's
 * default, with its source, the DCQCN profiles, the rule for messages
 * that cross rails, and the traits of the backend a fidelity selects.
 * Nothing here needs a built network.
 */
#include "backend.h"
#include "netint.h"
#include "versioned.h"

#include <string.h>

static void defaults(rs_net_config *c)
{
    memset(c, 0, sizeof *c);
    c->size = (uint32_t)sizeof *c;
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
    c->gpus_per_nic = 1;
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
    /* Bandwidth-perfect collectives unless asked (nccl.model) or a system
     * preset sets the NCCL model (docs/collectives.md). */
    c->nccl.model = RS_NCCL_IDEAL;
    c->nccl.proto = RS_PROTO_AUTO;
    c->nccl.algo = RS_NCCL_ALGO_AUTO;
    c->nccl.nvls = RS_NVLS_AUTO;
    c->nccl.channels = 0;
    c->nccl.gpu = RS_GPU_H100;
}

void rs_net_config_init(rs_net_config *c, size_t size)
{
    rs_net_config d;
    defaults(&d);
    rs_versioned_give(c, size, &d, sizeof d);
}

int rs_net_config_take(rs_net_config *out, const rs_net_config *c)
{
    defaults(out);
    return rs_versioned_take(out, sizeof *out, c, RS_SIZE_V1(rs_net_config, fidelity));
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
    if (rs_cfg_pxn(c))
        return RS_XRAIL_PXN;
    return c->kind == RS_TOPO_RAIL_ONLY ? RS_XRAIL_REFUSED : RS_XRAIL_DIRECT;
}

const char *rs_xrail_name(rs_xrail x)
{
    static const char *const names[] = { "none", "pxn", "direct", "refused" };
    return (unsigned)x < sizeof names / sizeof names[0] ? names[x] : "?";
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
