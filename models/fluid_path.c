/*
 * fluid_path.c - what a flow at flow level crosses and costs (fluid_int.h):
 * its path (the packet level's hashed route, or every equal-cost path at
 * once as bundles under per-packet routing), its wire bytes and largest
 * frame, its latency (propagation, pipelines, store-and-forward of its
 * largest frame; a PXN relay's HB leg ahead of the chunks: rs_fluid_relay_setup),
 * and a lone message's time on an idle network (rs_fluid_lone_time, which
 * collectives pace their streams by).
 */
#include "fluid_int.h"

#include <string.h>

/* Per-packet routing at flow level: every equal-cost path at once, as
 * bundles (bundle.c), in runs without faults (with faults, flows keep
 * their hashed path: docs/fidelity.md). */
static inline int multipath(const rs_net *net)
{
    return (net->cfg.ecmp == RS_ECMP_PACKET || net->cfg.ecmp == RS_ECMP_ADAPTIVE) && net->flt == NULL;
}

/* The solver's links for the bundles the last path made: bundle b is link
 * nports + b, of its members' summed capacity; the DCQCN queue cache grows
 * with them. */
static int add_bundle_links(rs_fluid *fl, uint32_t created)
{
    const rs_net *net = fl->net;
    uint32_t nb = rs_bundles_count(fl->bund);
    for (uint32_t b = nb - created; b < nb; b++) {
        uint32_t n, id;
        const uint32_t *mem = rs_bundle_members(fl->bund, net->nports + b, &n);
        uint64_t cap = 0;
        for (uint32_t i = 0; i < n; i++)
            cap += net->ports[mem[i]].rate_bps;
        int rc = rs_mmf_add_link(fl->mmf, cap, &id);
        if (rc != RS_OK)
            return rc;
        if (RS_NEVER(id != net->nports + b))
            return RS_EINTERNAL;
    }
    if (fl->qlen && net->nports + nb + 1 > fl->capq) {
        /* Three arrays of one capacity: each grows by the same rule from
         * it; one that fails leaves the others larger, which is harmless. */
        uint32_t need = net->nports + nb + 1, c1 = fl->capq, c2 = fl->capq, c3 = fl->capq;
        if (rs_array_reserve32(&fl->qlen, &c1, need, sizeof *fl->qlen, 0) != RS_OK ||
            rs_array_reserve32(&fl->qslope, &c2, need, sizeof *fl->qslope, 0) != RS_OK ||
            rs_array_reserve32(&fl->qstamp, &c3, need, sizeof *fl->qstamp, 0) != RS_OK)
            return RS_ENOMEM;
        memset(fl->qstamp + fl->capq, 0, (size_t)(c3 - fl->capq) * sizeof *fl->qstamp);
        fl->capq = c1;
    }
    return RS_OK;
}

/* Flow fid's links under multipath: a relayed message's HB crossing, its
 * NIC port, then the stages from its leaf (an HB-only flow: its hashed
 * path, which has no choices). */
static int multipath_links(const rs_net *net, uint32_t fid, uint32_t *links, uint32_t max)
{
    rs_fluid *fl = fluid_of(net);
    const rs_flow *f = &net->flows[fid];
    int h = rs_fluid_flow_path(net, fid, links, max);
    if (h < 0 || net->ports[f->port].kind == RS_PORT_GPU_HB)
        return h;
    uint32_t nic = 0;
    while (nic < (uint32_t)h && links[nic] != f->port)
        nic++;
    if (RS_NEVER(nic == (uint32_t)h))
        return RS_EINTERNAL;
    if (!fl->bund && rs_bundles_create(net, &fl->bund) != RS_OK)
        return RS_ENOMEM;
    uint32_t n, created;
    int rc = rs_bundles_path(fl->bund, net, net->ports[f->port].peer_node, f->dst, links + nic + 1,
                             max - nic - 1, &n, &created);
    if (rc == RS_OK && created)
        rc = add_bundle_links(fl, created);
    return rc == RS_OK ? (int)(nic + 1 + n) : rc;
}

static int walk_path(const rs_net *net, const rs_flow *f, uint32_t *ports, uint32_t max)
{
    const rs_link *p = &net->links[f->port];
    if (max < 1)
        return RS_ERANGE;
    uint32_t n = 0;
    if (f->relay_src != RS_NONE) {
        /* A whole relayed message: the source's HB crossing to f->src first. */
        const rs_link *hb = &net->links[rs_gpu_hb_port(net, f->relay_src)];
        if (max < 3)
            return RS_ERANGE;
        ports[n++] = (uint32_t)(hb - net->links);
        ports[n++] = net->nodes[hb->peer_node].port_base + f->src % net->hb_size;
    }
    ports[n++] = f->port;
    if (p->kind == RS_PORT_GPU_HB) {
        /* NVSwitch port k faces local GPU k. */
        if (max < 2)
            return RS_ERANGE;
        ports[1] = net->nodes[p->peer_node].port_base + f->dst % net->hb_size;
        return 2;
    }
    uint32_t node = p->peer_node;
    for (uint32_t hops = 0; net->nodes[node].kind == RS_NODE_SWITCH; hops++) {
        /* The flow level keeps the hashed path under routing.ecmp=packet
         * (the packet level sprays; docs/fidelity.md); a UGAL detour as
         * the packet level takes it (ugal.c). */
        uint32_t out = f->via != RS_NONE ? rs_ugal_route(net, &net->nodes[node], f, hops) : RS_NONE;
        if (out == RS_NONE)
            out = rs_route_hashed(net, &net->nodes[node], f->src, f->dst, f->entropy);
        if (out == RS_NONE)
            return RS_EUNREACH;
        if (n == max)
            return RS_ERANGE;
        ports[n++] = out;
        node = net->links[out].peer_node;
    }
    return node == rs_nic_gpu(net, f->dst) ? (int)n : RS_EUNREACH;
}

int rs_fluid_flow_path(const rs_net *net, uint32_t fid, uint32_t *ports, uint32_t max)
{
    return fid < net->nflows ? walk_path(net, &net->flows[fid], ports, max) : RS_EINVAL;
}

/* Wire bytes of the whole flow and of its largest frame, as transport.c
 * frames it: RoCE payloads padded to 4 bytes, 82 bytes of headers and
 * gap, RETH on the first packet, 84-byte minimum frames; HB units carry 16
 * bytes of header. The first frame is the largest (full payload, RETH). */
void rs_fluid_flow_wire(const rs_flow *f, int hb, uint64_t *wire, uint32_t *max_wire)
{
    uint64_t n = f->npkts, mtu = f->mtu, last = f->bytes - (n - 1) * mtu;
    if (hb) {
        *wire = f->bytes + n * RS_WIRE_HB;
        *max_wire = (uint32_t)(n > 1 ? mtu : last) + RS_WIRE_HB;
        return;
    }
    uint64_t full = ((mtu + 3) & ~3ull) + RS_WIRE_ROCE;
    uint64_t lw = ((last + 3) & ~3ull) + RS_WIRE_ROCE + (n == 1 ? RS_WIRE_RETH : 0);
    if (lw < RS_ETH_MIN_FRAME + 20)
        lw = RS_ETH_MIN_FRAME + 20;
    *wire = (n - 1) * full + (n > 1 ? RS_WIRE_RETH : 0) + lw;
    *max_wire = (uint32_t)(n > 1 ? full + RS_WIRE_RETH : lw);
}

/* Latency of a transfer whose largest frame is mw wire bytes over ports
 * ports[0..h): every hop's propagation and, after the first, one frame's
 * serialisation (store and forward). */
static rs_time path_lat(const rs_net *net, const rs_link *links, const uint32_t *ports, uint32_t h, uint32_t mw)
{
    rs_time t = 0;
    for (uint32_t i = 0; i < h; i++) {
        const rs_link *p = links ? &links[ports[i]] : link_info(net, ports[i]);
        t += p->prop;
        if (i > 0)
            t += link_ser(p, mw);
    }
    return t;
}

rs_time rs_fluid_path_lat(const rs_net *net, const uint32_t *ports, uint32_t h, uint32_t mw)
{
    return path_lat(net, NULL, ports, h, mw);
}

/* Wire bytes and latency of a whole relayed message (flow f, path ports
 * [HB egress, NVSwitch port, network ...]), as the packet level's chunk
 * pipeline takes it: chunk 0 crosses the HB domain alone, then the network
 * carries the chunks back to back, each its own RDMA write (the next is
 * posted once the previous one has left the NIC), and the last one's
 * latency ends it. HB chunks run ahead at NVLink rate, so after the first
 * they never hold the network leg back. The fluid carries the network's
 * wire bytes at one rate over both legs; the rest is latency. */
void rs_fluid_relay_setup(const rs_net *net, const rs_flow *f, const uint32_t *ports, uint32_t h, rs_time *lat,
                          uint64_t *wire, uint32_t *max_frame)
{
    uint64_t ch = net->cfg.relay_chunk_bytes, nfull = f->bytes / ch, last = f->bytes % ch;
    rs_flow c = *f; /* one chunk, as transport.c frames it */
    uint64_t w_full = 0, w_last = 0, w_hb;
    uint32_t mw_full = 0, mw_last = 0, mw_hb;
    c.mtu = net->cfg.mtu;
    if (nfull) {
        c.bytes = ch;
        c.npkts = (uint32_t)((ch + c.mtu - 1) / c.mtu);
        rs_fluid_flow_wire(&c, 0, &w_full, &mw_full);
    }
    if (last || !nfull) {
        c.bytes = last;
        c.npkts = last ? (uint32_t)((last + c.mtu - 1) / c.mtu) : 1;
        rs_fluid_flow_wire(&c, 0, &w_last, &mw_last);
    }
    /* Chunk 0 over the HB domain: its latency and its time at the HB line rate. */
    c.bytes = nfull ? ch : last;
    c.mtu = net->cfg.hb_mtu;
    c.npkts = c.bytes ? (uint32_t)((c.bytes + c.mtu - 1) / c.mtu) : 1;
    rs_fluid_flow_wire(&c, 1, &w_hb, &mw_hb);
    const rs_port *h0 = &net->ports[ports[0]], *h1 = &net->ports[ports[1]];
    uint64_t hb_bps = h0->rate_bps < h1->rate_bps ? h0->rate_bps : h1->rate_bps;
    rs_time t = rs_fluid_path_lat(net, ports, 2, mw_hb) + rs_ser_time(w_hb, hb_bps);
    /* The last chunk's latency, or, when it is a short one, the full chunk
     * ahead of it arriving later still (the message is delivered in order). */
    rs_time net_lat = rs_fluid_path_lat(net, ports + 2, h - 2, last || !nfull ? mw_last : mw_full);
    if (nfull && last) {
        rs_time ahead = rs_fluid_path_lat(net, ports + 2, h - 2, mw_full);
        rs_time behind = rs_ser_time(w_last, net->ports[ports[2]].rate_bps);
        if (ahead > behind && ahead - behind > net_lat)
            net_lat = ahead - behind;
    }
    t += net_lat;
    *wire = nfull * w_full + w_last;
    *lat = t;
    *max_frame = mw_full > mw_last ? mw_full : mw_last;
}

int rs_fluid_flow_setup(const rs_net *net, uint32_t fid, uint32_t *ports, uint32_t *nhops, rs_time *lat,
                        uint64_t *wire, uint32_t *max_frame)
{
    int h = multipath(net) && net->flows[fid].via == RS_NONE ? multipath_links(net, fid, ports, RS_MMF_MAX_HOPS)
                           : rs_fluid_flow_path(net, fid, ports, RS_MMF_MAX_HOPS);
    if (h < 0)
        return h;
    const rs_flow *f = &net->flows[fid];
    *nhops = (uint32_t)h;
    if (f->relay_src != RS_NONE) {
        rs_fluid_relay_setup(net, f, ports, (uint32_t)h, lat, wire, max_frame);
        return RS_OK;
    }
    rs_fluid_flow_wire(f, net->ports[ports[0]].kind == RS_PORT_GPU_HB, wire, max_frame);
    *lat = rs_fluid_path_lat(net, ports, (uint32_t)h, *max_frame);
    return RS_OK;
}

int rs_fluid_flow_cost(const rs_net *net, uint32_t f, rs_time *lat, uint64_t *wire)
{
    uint32_t ports[RS_MMF_MAX_HOPS], h, mf;
    return rs_fluid_flow_setup(net, f, ports, &h, lat, wire, &mf);
}

/* One leg of rs_fluid_lone_time: a flow from a (its NIC, or its HB port
 * when b shares its domain) to b, as transport.c would frame it, at the
 * rates and latencies of `links` (the present ones, or the start's). */
static int lone_leg(const rs_net *net, const rs_link *links, uint32_t a, uint32_t b, uint64_t bytes, rs_time *ser,
                    rs_time *lat)
{
    int hb = a / net->hb_size == b / net->hb_size;
    rs_flow f;
    memset(&f, 0, sizeof f);
    f.src = a;
    f.dst = b;
    f.bytes = bytes;
    f.port = hb ? rs_gpu_hb_port(net, a) : rs_gpu_nic_port(net, a);
    f.mtu = hb ? net->cfg.hb_mtu : net->cfg.mtu;
    f.npkts = bytes ? (uint32_t)((bytes + f.mtu - 1) / f.mtu) : 1;
    f.relay_src = f.via = f.ugal_port = RS_NONE;
    f.entropy = 0xc000;
    uint32_t ports[RS_MMF_MAX_HOPS];
    int h = walk_path(net, &f, ports, RS_MMF_MAX_HOPS);
    if (h < 0)
        return h;
    uint64_t wire;
    uint32_t mw;
    rs_fluid_flow_wire(&f, hb, &wire, &mw);
    *lat = path_lat(net, links, ports, (uint32_t)h, mw);
    *ser = 0;
    for (int i = 0; i < h; i++) {
        rs_time t = link_ser(&links[ports[i]], wire);
        if (t > *ser)
            *ser = t;
    }
    return RS_OK;
}

int rs_fluid_lone_time(const rs_net *net, uint32_t a, uint32_t b, uint64_t bytes, int as_built, rs_time *ser,
                       rs_time *lat)
{
    if (a >= net->gpus || b >= net->gpus || a == b)
        return RS_EINVAL;
    const rs_link *links = as_built && net->links0 ? net->links0 : net->links;
    uint32_t K = net->hb_size;
    if (a / K == b / K || rs_gpu_rail(net, a) == rs_gpu_rail(net, b) || rs_net_cross_rail(&net->cfg) != RS_XRAIL_PXN)
        return lone_leg(net, links, a, b, bytes, ser, lat);
    /* PXN: the HB domain to the GPU on b's rail, then that rail; counted
     * as the whole message over each leg in turn. */
    uint32_t via = rs_rail_member(net, a, rs_gpu_rail(net, b));
    rs_time s0, l0;
    int rc = lone_leg(net, links, a, via, bytes, &s0, &l0);
    if (rc == RS_OK)
        rc = lone_leg(net, links, via, b, bytes, ser, lat);
    if (rc == RS_OK)
        *lat += l0 + s0;
    return rc;
}
