/*
 * coll_tune.c - NCCL's cost model and tuner (docs/collectives.md, "NCCL's
 * protocols and tuner"), ported from NVIDIA/nccl v2.30.7,
 * src/graph/tuning.cc (ncclTopoTuneModel, ncclTopoGetAlgoTime): for a
 * collective, each algorithm and protocol NCCL would consider gets a
 * latency (a base per launch plus a per-step latency by link type) and a
 * bandwidth (the topology's, refined per protocol, capped per channel),
 * and the smallest latency + bytes / bandwidth wins, as NCCL's tuner
 * picks. railsim then runs the winner on the simulated network with the
 * protocol's costs (coll.c): its bytes on the wire, its per-step latency
 * beyond what the network already simulates, its base latency once.
 *
 * What NCCL reads from its topology search railsim takes from the
 * network: the bandwidth of a GPU's HB (NVLink) port and of its NIC
 * (their payload rates, rs_net_hop_as_built), the HB domains a group
 * spans (NCCL's nodes) and its GPUs per domain (ppn). The channel count
 * is nccl.channels, or RS_TUNE_CHANNELS. Only what railsim simulates is
 * considered: ring, tree (AllReduce) and NVLS (inside one HB domain);
 * NVLS Tree, CollNet and PAT are left out (docs/collectives.md).
 */
#include "coll_int.h"

#include <math.h>

/* NCCL's indices (src/include/device.h): protocols LL, LL128, Simple;
 * algorithms Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT. */
enum { P_LL = 0, P_LL128 = 1, P_SIMPLE = 2, NPROTO = 3 };
enum { A_TREE = 0, A_RING = 1, A_NVLS = 4, NALGO = 7 };
enum { HW_NVLINK = 0, HW_PCI = 1, HW_NET = 2 };

/* The tuner constants of NCCL v2.30.7 (ncclTunerConstantsDefaults), in
 * us and GB/s; rows railsim does not consider are kept for reading them
 * against the source. */
static const double base_lat[NALGO][NPROTO] = {
    { 6.8, 14.0, 8.4 }, { 6.6, 14.0, 8.4 }, /* Tree, Ring */
    { 0, 0, 0 }, { 0, 0, 0 },               /* CollNet Direct, Chain */
    { 0, 0, 0 }, { 0, 0, 0 },               /* NVLS, NVLS Tree */
    { 8.0, 8.0, 8.0 }                       /* PAT */
};
static const double hw_lat[3][NALGO][NPROTO] = {
    /* NVLINK */
    { { 0.6, 1.25, 4.0 }, { 0.6, 1.9, 3.4 }, { 0, 0, 3.7 }, { 0, 0, 2.8 }, { 0, 0, 25 }, { 0, 0, 25 },
      { 0, 0, 4.0 } },
    /* PCI */
    { { 1.0, 1.9, 4.0 }, { 1.0, 2.5, 5.7 }, { 0, 0, 3.7 }, { 0, 0, 2.8 }, { 0, 0, 0 }, { 0, 0, 0 },
      { 0, 0, 4.0 } },
    /* NET */
    { { 5.0, 8.5, 14 }, { 2.7, 4.0, 14.0 }, { 0, 0, 31 }, { 0, 0, 30 }, { 0, 0, 18 }, { 0, 0, 20.9 },
      { 0, 0, 14 } },
};
/* [CPU row: Volta-N1/Intel, Ampere-N1/AMD, Hopper-N1, Blackwell-N1][nodes 1, 2, >2] */
static const double ll_max_bw[4][3] = {
    { 39.0, 39.0, 20.4 }, { 87.7, 22.5, 19.0 }, { 141.0, 45.0, 35.0 }, { 2 * 141.0, 2 * 45.0, 2 * 35.0 }
};
/* [generation: Volta, Ampere, Hopper, Blackwell][nodes 1, 2, >2] */
static const double per_ch_ring_ll128[4][3] = {
    { 20.0, 20.0, 20.0 }, { 20.0, 20.0, 20.0 }, { 36.7, 36.7, 36.7 }, { 40.0, 40.0, 40.0 }
};
static const double per_ch_tree_ll128[4][3] = {
    { 20.0, 20.0, 20.0 }, { 20.0, 20.0, 20.0 }, { 36.7, 36.7, 29.0 }, { 55.6, 31.67, 20.0 }
};
static const double per_ch_tree[4][3] = {
    { 26.5, 18.5, 10.0 }, { 24.0, 23.6, 17.8 }, { 38.7, 41.4, 36.0 }, { 70.0, 42.8, 24.0 }
};
static const double nvls_efficiency[4] = { 0.0, 0.0, 0.85, 0.74 };
/* Point-to-point: LL up to this many bytes per peer and channel, else
 * Simple (NCCL_P2P_LL_THRESHOLD, src/enqueue.cc; one channel for a small
 * send). */
#define P2P_LL_THRESHOLD 16384u
/* treeCorrectionFactor: [protocol][log2(bytes / 64)], 64 B to 256 MB. */
static const double tree_correction[NPROTO][24] = {
    { 1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0 },
    { 1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0 },
    { .9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9 }
};

/* railsim's protocol -> NCCL's index. */
static int nccl_proto(rs_nccl_proto p)
{
    return p == RS_PROTO_LL ? P_LL : p == RS_PROTO_LL128 ? P_LL128 : P_SIMPLE;
}

static int generation(int gpu)
{
    switch (gpu) {
    case RS_GPU_V100: return 0;
    case RS_GPU_A100:
    case RS_GPU_MI250X_GCD: return 1; /* MI250X (2021) against NCCL's Ampere rows: RCCL's tables not ported */
    case RS_GPU_H100:
    case RS_GPU_H200: return 2;
    default: return 3; /* B200, GB200 */
    }
}

/* The host CPU of the DGX built around each GPU: DGX A100 has AMD EPYC
 * (NCCL's AMD rows and 2 us net overhead), DGX H100/H200/B200 Intel
 * Xeon, GB200 Grace (neither: NCCL's first row, 1 us); Frontier's
 * nodes an AMD EPYC 7A53. */
static int cpu_amd(int gpu) { return gpu == RS_GPU_A100 || gpu == RS_GPU_MI250X_GCD; }

static int log2i(uint64_t n) { return n ? 63 - __builtin_clzll(n) : -1; }

/* The payload rate of the slowest port between GPUs a and b, GB/s, as
 * the run started (NCCL tunes on the topology it detected when it created
 * the communicator: a later degrade is not seen); 0 when no path joins
 * them. */
static double port_gbs(const rs_net *net, uint32_t a, uint32_t b)
{
    rs_time ser, lat;
    const uint64_t probe = 1ull << 30;
    if (rs_net_hop_as_built(net, a, b, probe, &ser, &lat) != RS_OK || ser == 0)
        return 0;
    return (double)probe / ((double)ser * 1e-12) / 1e9;
}

/* What the model needs of the collective and its system. */
typedef struct tune_in {
    rs_coll_op op;
    uint64_t bytes;
    uint32_t n, nodes;
    double ppn;
    int gen, gpu;
    double intra, inter; /* GB/s per GPU: HB port, NIC */
    uint32_t nch;
    int nvls;            /* NVLS may run */
} tune_in;

/* The per-step latencies NCCL's model and the simulation share: the
 * ring's net overhead on intra-domain steps across nodes (1 us, 2 us on
 * AMD hosts, 3x for Simple), a network step's latency (the tree's when
 * every domain holds one rank), the row a Broadcast or Reduce step
 * takes (Simple's is the tree's). */
static double net_overhead(const tune_in *in, int p)
{
    return in->nodes > 1 ? (cpu_amd(in->gpu) ? 2.0 : 1.0) * (p == P_SIMPLE ? 3 : 1) : 0;
}
static double net_step(const tune_in *in, int a, int p)
{
    return in->ppn == 1 ? hw_lat[HW_NET][A_TREE][p] : hw_lat[HW_NET][a][p];
}
static int rooted_row(int p) { return p == P_SIMPLE ? A_TREE : A_RING; }

/* NCCL's bandwidth (GB/s, algorithm bandwidth) and latency (us) of
 * algorithm a and protocol p for *in; bw 0: NCCL would not use it. */
static void model(const tune_in *in, int a, int p, double *bw_out, double *lat_out)
{
    *bw_out = 0;
    *lat_out = 0;
    int ar = in->op == RS_COLL_ALLREDUCE;
    int rooted = coll_rooted(in->op); /* NCCL weighs the ring alone */
    if ((a == A_TREE && !ar) || (rooted && a != A_RING))
        return;
    if (a == A_NVLS && (p != P_SIMPLE || !in->nvls || in->nch < 2))
        return;
    uint32_t nodes = in->nodes, n = in->n;
    int i2 = nodes <= 2 ? (int)nodes - 1 : 2;
    int i1 = nodes == 1 ? in->gen : cpu_amd(in->gpu) ? 1 : 0;
    double nsteps = ar ? 2.0 * (n - 1) : rooted ? n : n - 1;
    /* The graph's bandwidth: the HB port inside one domain, else what
     * both the HB ports and the domain's NICs carry (NCCL's search sets
     * bwIntra = bwInter across nodes). */
    double total = nodes == 1 ? in->intra : fmin(in->intra, in->inter * in->ppn);
    double bw = total / in->nch;
    if (a == A_NVLS) {
        double intra = bw * nvls_efficiency[in->gen] * (in->nch - 1) / in->nch;
        intra *= ar ? 2.0 : (in->ppn - 1) / in->ppn;
        bw = intra;
    }
    double bus = in->nch * bw;
    if (a == A_RING && p == P_LL)
        bus = fmin(ll_max_bw[i1][i2], bus * .5);
    if (a == A_RING && p == P_LL128)
        bus = fmin(bus * 0.92, in->nch * per_ch_ring_ll128[in->gen][i2]);
    if (a == A_TREE && ar)
        bus = fmin(bus * .92, in->nch * per_ch_tree[in->gen][i2]);
    if (a == A_TREE && p == P_LL)
        bus = fmin(bus * 1.0 / 3.8, ll_max_bw[i1][i2]);
    if (a == A_TREE && p == P_LL128)
        bus = fmin(bus * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), in->nch * per_ch_tree_ll128[in->gen][i2]);
    if (!(a != A_RING && !ar))
        bus *= a == A_RING || a == A_NVLS ? n / nsteps : .5;
    double lat = base_lat[a][p];
    double intra_lat = hw_lat[HW_NVLINK][a][p];
    double inter_lat = net_step(in, a, p);
    if (a == A_RING && rooted) {
        /* Reduce and Broadcast: a chunk's latency per step (Simple's the
         * tree's), NCCL's branch for channels that differ. */
        int hw = nodes == 1 ? HW_NVLINK : HW_NET;
        lat += nsteps * hw_lat[hw][rooted_row(p)][p];
    } else if (a == A_RING) {
        intra_lat = fmax(intra_lat, net_overhead(in, p));
        double inter_steps = nodes == 1 ? 0 : ar ? 2.0 * (nodes - 1) : nodes - 1;
        lat += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
    } else if (a == A_TREE) {
        lat += 2 * ((in->ppn - 1) * intra_lat + log2i(nodes) * inter_lat);
    } else {
        lat = intra_lat + (nodes > 1 ? inter_lat : 0);
    }
    *bw_out = bus;
    *lat_out = lat;
}

/* ncclTopoGetAlgoTime: one operation. */
static double algo_time(const tune_in *in, int a, int p, double bw, double lat)
{
    int ls = log2i(in->bytes >> 6);
    if (a == A_TREE && in->op == RS_COLL_ALLREDUCE && ls >= 0 && ls < 23)
        bw *= tree_correction[p][ls];
    if (a == A_RING && p == P_SIMPLE && in->nodes > 1 && in->op == RS_COLL_ALLREDUCE &&
        in->bytes / ((uint64_t)in->nch * in->n) >= 64)
        lat *= in->gen >= 1 ? 1.4 : 1.9; /* plateau effect of the ring */
    return lat + (double)in->bytes / (1000.0 * bw);
}

static int algo_index(rs_coll_algo a)
{
    return a == RS_ALGO_TREE ? A_TREE : a == RS_ALGO_NVLS ? A_NVLS : A_RING;
}

int rs_coll_tune(rs_coll *c, coll_tune *out, rs_err *err)
{
    const rs_nccl_config *nc = rs_coll_nccl(c);
    uint32_t ngpus = rs_net_gpus(c->net), hb = c->net_hb ? c->net_hb : c->o.hb_size;
    tune_in in;
    in.op = c->op;
    in.bytes = c->bytes;
    in.n = c->n;
    in.nodes = c->g.ndom;
    in.ppn = (double)c->n / c->g.ndom;
    in.gpu = nc->gpu;
    in.gen = generation(nc->gpu);
    in.nch = nc->channels ? nc->channels : RS_TUNE_CHANNELS;
    uint32_t a = c->gpu[0], dom = a / hb * hb;
    in.intra = hb > 1 ? port_gbs(c->net, a, dom + (a - dom + 1) % hb) : 0;
    /* GPUs sharing a NIC share its bandwidth (NCCL's search divides a
     * NIC's bandwidth among the GPUs whose paths use it). */
    rs_net_topo_info ti;
    rs_net_topo_info_get(c->net, &ti);
    in.inter = ngpus > hb ? port_gbs(c->net, a, (a + hb) % ngpus) * ti.nics / ngpus : 0;
    if (in.intra == 0)
        in.intra = in.inter;
    in.nvls = nc->nvls != RS_NVLS_OFF && in.gen >= 2 && in.nodes == 1 && c->n >= 2;
    if (nc->nvls == RS_NVLS_ON && in.gen < 2)
        return rs_err_set(err, RS_EINVAL, "nccl.nvls: on needs GPUs with NVLink SHARP (system.gpu h100 or later)");

    /* The candidates: the forced algorithm (traffic.algo, workload.algo
     * or nccl.algo) or every one NCCL would weigh; the forced protocol or
     * every one. */
    static const rs_coll_algo nccl_algo[RS_NCCL_NALGOS] = { RS_ALGO_AUTO, RS_ALGO_RING, RS_ALGO_TREE, RS_ALGO_NVLS };
    rs_coll_algo forced = c->algo != RS_ALGO_AUTO ? c->algo : nccl_algo[nc->algo];
    static const rs_coll_algo algos[] = { RS_ALGO_TREE, RS_ALGO_RING, RS_ALGO_NVLS };
    double best = INFINITY;
    out->algo = RS_ALGO_AUTO;
    for (unsigned i = 0; i < sizeof algos / sizeof algos[0]; i++) {
        if (forced != RS_ALGO_AUTO && forced != algos[i])
            continue;
        /* NCCL's order: LL, LL128, Simple (the first minimum wins). */
        static const rs_nccl_proto protos[] = { RS_PROTO_LL, RS_PROTO_LL128, RS_PROTO_SIMPLE };
        for (unsigned j = 0; j < sizeof protos / sizeof protos[0]; j++) {
            rs_nccl_proto p = protos[j];
            if (nc->proto != RS_PROTO_AUTO && nc->proto != (int)p)
                continue;
            double bw, lat;
            int ai = algo_index(algos[i]), pi = nccl_proto(p);
            model(&in, ai, pi, &bw, &lat);
            if (bw <= 0)
                continue;
            double t = algo_time(&in, ai, pi, bw, lat);
            if (t < best) { /* ties: the earlier, as NCCL's loop keeps the first minimum */
                best = t;
                out->algo = algos[i];
                out->proto = p;
            }
        }
    }
    if (out->algo == RS_ALGO_AUTO)
        return rs_err_set(err, RS_EINVAL,
                          "collective: NCCL would not run %s with %s%s%s over %u ranks in %u HB domain%s "
                          "(nccl.algo, nccl.protocol, nccl.nvls, system.gpu)",
                          rs_coll_op_name(c->op), forced ? rs_coll_algo_name(forced) : "any algorithm",
                          nc->proto ? " and protocol " : "", nc->proto ? rs_coll_proto_name(nc->proto) : "", c->n,
                          in.nodes, in.nodes == 1 ? "" : "s");
    out->predicted_us = best;

    /* What the simulation adds: the base latency once, the per-step
     * latency of each kind of hop (coll.c takes off what the network
     * simulates of it). */
    int ai = algo_index(out->algo), pi = nccl_proto(out->proto);
    out->base_us = base_lat[ai][pi];
    if (out->algo == RS_ALGO_NVLS) {
        out->base_us = hw_lat[HW_NVLINK][A_NVLS][pi];
        out->hop_us[0] = out->hop_us[1] = 0;
    } else if (out->algo == RS_ALGO_RING && coll_rooted(c->op)) {
        out->hop_us[0] = hw_lat[HW_NVLINK][rooted_row(pi)][pi];
        out->hop_us[1] = hw_lat[HW_NET][rooted_row(pi)][pi];
    } else if (out->algo == RS_ALGO_RING) {
        out->hop_us[0] = fmax(hw_lat[HW_NVLINK][A_RING][pi], net_overhead(&in, pi));
        out->hop_us[1] = net_step(&in, A_RING, pi);
    } else {
        out->hop_us[0] = hw_lat[HW_NVLINK][A_TREE][pi];
        out->hop_us[1] = hw_lat[HW_NET][A_TREE][pi];
    }
    out->nvls_eff = nvls_efficiency[in.gen];
    return RS_OK;
}

/* NCCL's point-to-point protocol for `peer` bytes to one peer. */
static int p2p_proto(uint64_t peer) { return peer <= P2P_LL_THRESHOLD ? P_LL : P_SIMPLE; }

void rs_coll_tune_p2p(rs_coll *c, coll_tune *out)
{
    const rs_nccl_config *nc = rs_coll_nccl(c);
    uint64_t peer = c->op == RS_COLL_SENDRECV ? c->bytes : c->bytes / c->n;
    int pi = p2p_proto(peer);
    out->algo = RS_ALGO_DIRECT;
    out->proto = pi == P_LL ? RS_PROTO_LL : RS_PROTO_SIMPLE;
    out->predicted_us = 0; /* NCCL's model has no point-to-point entry */
    out->nvls_eff = nvls_efficiency[generation(nc->gpu)];
    /* The ring's base latency and one ring step's (coll.c charges the
     * step over the group's slowest kind of hop, beyond the network's,
     * once: the transfers run at once). */
    out->base_us = base_lat[A_RING][pi];
    out->hop_us[0] = hw_lat[HW_NVLINK][A_RING][pi];
    out->hop_us[1] = hw_lat[HW_NET][A_RING][pi];
}

/* Bytes on the wire for `bytes` of data under protocol p. */
static uint64_t proto_wire(rs_nccl_proto p, uint64_t bytes)
{
    switch (p) {
    case RS_PROTO_LL: /* 8-byte lines of 4 data bytes and a 4-byte flag */
        return bytes * 2;
    case RS_PROTO_LL128: /* 128-byte lines of 120 data bytes and an 8-byte flag */
        return (bytes * 128 + 119) / 120;
    default:
        return bytes;
    }
}

uint64_t rs_coll_wire_bytes(const rs_coll *c, uint64_t bytes) { return proto_wire(c->proto, bytes); }

void rs_coll_p2p_cost(rs_net *net, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t *wire, rs_time *extra)
{
    int nccl = rs_net_nccl_of(net, src)->model == RS_NCCL_NCCL && src != dst;
    int pi = p2p_proto(bytes);
    *wire = nccl ? proto_wire(pi == P_LL ? RS_PROTO_LL : RS_PROTO_SIMPLE, bytes) : bytes;
    if (!extra)
        return;
    uint32_t hb = rs_coll_net_hb(net);
    int hw = src / hb == dst / hb ? HW_NVLINK : HW_NET;
    *extra = nccl ? rs_coll_beyond_net(net, src, dst, base_lat[A_RING][pi] + hw_lat[hw][A_RING][pi]) : 0;
}

uint32_t rs_coll_nccl_ctas(rs_net *net, uint32_t gpu, int p2p)
{
    const rs_nccl_config *nc = rs_net_nccl_of(net, gpu);
    if (!p2p)
        return nc->channels ? nc->channels : RS_TUNE_CHANNELS;
    uint32_t hb = rs_coll_net_hb(net), n = rs_net_gpus(net);
    double gbs = n > hb ? port_gbs(net, 0, hb % n) : 0;
    uint32_t ch = (uint32_t)ceil(gbs / 14.0), p = 1;
    if (ch < 1)
        ch = 1;
    while (p < ch)
        p <<= 1;
    return p;
}
