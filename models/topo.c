/*
 * topo.c - topology builders and routing tables.
 *
 * Builders turn (GPUs, HB size K, radix R, rates, latencies) into nodes and
 * cables. Both designs are built from one routine that makes a folded Clos
 * over a list of leaf switches ("plane"):
 *
 *   fat-tree   one plane over all GPUs. Leaves are rail-pure (rail-optimized):
 *              leaf j of rail r holds GPU r of up to `dl` consecutive HB
 *              domains; tiers above join all rails with full bisection
 *              (or the leaf's oversubscription).
 *   rail-only  one plane per rail r holding GPU r of every domain; a rail
 *              that fits in one switch is one switch, else its own Clos.
 *
 * A plane of L leaves is a folded Clos of as many tiers as it needs
 * (clos.h): L = 1 is one switch; L <= R is two tiers (leaf, spine); L <=
 * R*R/2 is three (leaf, aggregation in pods of R/2 leaves, core); every
 * further tier multiplies the reach by R/2 (the k-ary fat-tree recursion).
 * Where the top tier is not full, fewer top switches are used with
 * parallel cables so that every switch below keeps all its uplinks (full
 * bisection at the fewest switches). A leaf has dl = floor(R*o/(o+1)) GPU
 * ports and R - dl uplinks for oversubscription o.
 *
 * Routing is computed from the built graph, never per topology: a BFS from
 * every leaf over the switch-to-switch links that are up gives hop
 * distances; a switch's next hops toward a leaf are all its up ports whose
 * neighbour is one hop closer (every equal-cost path). A switch stores one
 * next-hop set per leaf (deduplicated); the leaf itself forwards to the
 * GPU's port directly. Recomputing after a failure is another rs_topo_route.
 */
#include "clos.h"
#include "netint.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum cable_kind { CABLE_NIC, CABLE_SW, CABLE_HB };

typedef struct cable {
    uint32_t a, b;
    uint8_t kind;
} cable;

typedef struct builder {
    rs_net *net;
    cable *cables;
    size_t ncables, capcables;
    uint32_t capnodes;
    uint32_t ord[RS_CLOS_MAX_TIERS + 1]; /* next switch ordinal per tier of the plane being built */
} builder;

static int add_node(builder *b, uint8_t kind, uint8_t tier, uint16_t plane, uint32_t *id)
{
    rs_net *net = b->net;
    if (rs_array_reserve32(&net->nodes, &b->capnodes, net->nnodes + 1, sizeof *net->nodes, 1024) != RS_OK)
        return RS_ENOMEM;
    rs_node *n = &net->nodes[net->nnodes];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->tier = tier;
    n->plane = plane;
    n->sw = RS_NONE;
    n->leaf_index = RS_NONE;
    if (kind == RS_NODE_SWITCH)
        n->ordinal = b->ord[tier]++;
    *id = net->nnodes++;
    return RS_OK;
}

static int add_cable(builder *b, uint32_t x, uint32_t y, uint8_t kind)
{
    if (rs_array_reserve(&b->cables, &b->capcables, b->ncables + 1, sizeof *b->cables, 4096) != RS_OK)
        return RS_ENOMEM;
    b->cables[b->ncables++] = (cable){ x, y, kind };
    return RS_OK;
}

#define TRY(x) do { int rc_ = (x); if (rc_ != RS_OK) return rc_; } while (0)

/* Build one plane: nl leaves, leaf i holding gpus[start[i] .. start[i+1]),
 * each leaf with `up` uplinks when nl > 1, as rs_clos_shape says (clos.h).
 * Nodes are laid out tier by tier and, inside a tier, block by block;
 * cables tier by tier, child by child: for two and three tiers the same
 * order (and so the same port numbers) as before tiers were unbounded.
 * Returns the plane's tier count. */
static int build_plane(builder *b, uint16_t plane, const uint32_t *gpus,
                       const uint32_t *start, uint32_t nl, uint32_t up,
                       uint32_t *tiers, rs_err *err)
{
    rs_clos sh;
    TRY(rs_clos_shape(nl, b->net->cfg.radix, up, NULL, &sh, err));
    memset(b->ord, 0, sizeof b->ord); /* ordinals count per plane and tier */
    uint32_t first = b->net->nnodes; /* first switch of the current tier */
    for (uint32_t i = 0; i < nl; i++) {
        uint32_t leaf;
        TRY(add_node(b, RS_NODE_SWITCH, 1, plane, &leaf));
        for (uint32_t k = start[i]; k < start[i + 1]; k++)
            TRY(add_cable(b, gpus[k], leaf, CABLE_NIC));
    }
    for (uint32_t t = 0; t + 1 < sh.tiers; t++) {
        uint32_t above = b->net->nnodes;
        if (sh.switches[t + 1] > UINT32_MAX - above)
            return RS_ENOMEM; /* node ids are 32-bit */
        for (uint64_t s = 0; s < sh.switches[t + 1]; s++) {
            uint32_t id;
            TRY(add_node(b, RS_NODE_SWITCH, (uint8_t)(t + 2), plane, &id));
        }
        /* Switch p of child block c joins switches p*fan .. p*fan+fan-1 of
         * its parent block c / children, par cables to each. */
        uint64_t w = sh.width[t], wa = sh.width[t + 1], fan = sh.fan[t];
        for (uint64_t c = 0; c < sh.blocks[t]; c++)
            for (uint64_t p = 0; p < w; p++)
                for (uint64_t q = 0; q < fan; q++)
                    for (uint64_t k = 0; k < sh.par[t]; k++)
                        TRY(add_cable(b, first + (uint32_t)(c * w + p),
                                      above + (uint32_t)(c / sh.children[t] * wa + p * fan + q), CABLE_SW));
        first = above;
    }
    *tiers = sh.tiers;
    return RS_OK;
}

/* A dragonfly (clos.h, rs_dfly): its switches, every one a leaf of
 * plane 0; NIC cables, the all-to-all cables of each group, then the
 * global cables pair of groups by pair. */
static int build_dragonfly(builder *b, const rs_dfly *d, uint32_t N, uint32_t share)
{
    uint32_t first = b->net->nnodes, a = d->a, G = d->groups;
    memset(b->ord, 0, sizeof b->ord);
    for (uint64_t s = 0; s < d->switches; s++) {
        uint32_t id;
        TRY(add_node(b, RS_NODE_SWITCH, 1, 0, &id));
    }
    for (uint32_t g = 0; g < N; g += share) /* GPU g's NIC is NIC g / share */
        TRY(add_cable(b, g, first + rs_dfly_switch_of(d, g / share), CABLE_NIC));
    for (uint32_t grp = 0; grp < G; grp++)
        for (uint32_t s = 0; s < a; s++)
            for (uint32_t t = s + 1; t < a; t++)
                TRY(add_cable(b, first + grp * a + s, first + grp * a + t, CABLE_SW));
    for (uint32_t i = 0; i < G; i++)
        for (uint32_t j = i + 1; j < G; j++)
            for (uint32_t m = 0; m < d->per_pair; m++) {
                uint32_t pi = m * (G - 1) + (j - i) - 1, pj = m * (G - 1) + (G - (j - i)) - 1;
                TRY(add_cable(b, first + i * a + pi / d->h, first + j * a + pj / d->h, CABLE_SW));
            }
    return RS_OK;
}

static int check_config(const rs_net_config *c, rs_err *err)
{
    int rc;
    if ((rc = rs_clos_check_shape(c->gpus, c->hb_size, c->radix, err)) != RS_OK ||
        (rc = rs_clos_check_rate("topology.nic_gbps", c->nic_gbps, err)) != RS_OK ||
        (rc = rs_clos_check_rate("topology.link_gbps", c->link_gbps, err)) != RS_OK ||
        (rc = rs_clos_check_rate("topology.hb_gbps", c->hb_gbps, err)) != RS_OK ||
        (rc = rs_clos_check_oversubscription(c->oversubscription, err)) != RS_OK)
        return rc;
    if ((unsigned)c->dfly_routing > RS_DFLY_MINIMAL)
        return rs_err_set(err, RS_EINVAL, "routing.dragonfly: expected ugal or minimal");
    if ((unsigned)c->df_attach > RS_DFLY_SPREAD)
        return rs_err_set(err, RS_EINVAL, "topology.df_attach: expected packed or spread");
    if (c->gpus_per_nic > 1 && c->hb_size % c->gpus_per_nic)
        return rs_err_set(err, RS_EINVAL, "topology.gpus_per_nic: expected a divisor of topology.hb_size (%u), got %u",
                          c->hb_size, c->gpus_per_nic);
    /* RoCE carries the InfiniBand path MTUs only (IBA vol. 1, 9.7.1.1:
     * 256 to 4096 bytes); a NIC never sends a 1001- or 9216-byte payload. */
    if (c->mtu < 256 || c->mtu > 4096 || (c->mtu & (c->mtu - 1)))
        return rs_err_set(err, RS_EINVAL, "topology.mtu: expected an InfiniBand MTU (256, 512, 1024, 2048 or "
                          "4096 bytes), got %u", c->mtu);
    if (c->hb_mtu < 1)
        return rs_err_set(err, RS_EINVAL, "topology.hb_mtu: expected a positive transfer size");
    if (c->buffer_bytes < (uint64_t)c->mtu + RS_WIRE_ROCE + RS_WIRE_RETH)
        return rs_err_set(err, RS_EINVAL,
                          "topology.buffer_bytes: %llu bytes cannot hold one %u-byte packet; expected at least %u",
                          (unsigned long long)c->buffer_bytes, c->mtu, c->mtu + RS_WIRE_ROCE + RS_WIRE_RETH);
    if (c->ack_every == 0)
        return rs_err_set(err, RS_EINVAL, "transport.ack_every: expected at least 1");
    if (c->relay_chunk_bytes == 0)
        return rs_err_set(err, RS_EINVAL, "transport.relay_chunk_bytes: expected at least 1 byte");
    if (c->prio >= RS_NPRIO)
        return rs_err_set(err, RS_EINVAL, "transport.priority: expected a priority from 0 to 7");
    if (c->pfc && c->pfc_xon_bytes > c->pfc_xoff_bytes)
        return rs_err_set(err, RS_EINVAL, "pfc.xon_bytes: expected at most pfc.xoff_bytes (%llu)",
                          (unsigned long long)c->pfc_xoff_bytes);
    if (c->ecn && c->ecn_kmin_bytes >= c->ecn_kmax_bytes)
        return rs_err_set(err, RS_EINVAL, "ecn.kmin_bytes: expected less than ecn.kmax_bytes (%llu)",
                          (unsigned long long)c->ecn_kmax_bytes);
    if (!(c->ecn_pmax >= 0.0 && c->ecn_pmax <= 1.0))
        return rs_err_set(err, RS_EINVAL, "ecn.pmax: expected a probability from 0 to 1");
    const rs_dcqcn_config *d = &c->dcqcn;
    if (!(d->g > 0.0 && d->g <= 1.0))
        return rs_err_set(err, RS_EINVAL, "transport.dcqcn.g: expected a gain above 0 and at most 1");
    if (!(d->min_rate_mbps > 0.0 && d->min_rate_mbps <= c->nic_gbps * 1e3))
        return rs_err_set(err, RS_EINVAL, "transport.dcqcn.min_rate_mbps: expected above 0 and at most "
                          "the NIC rate (%g Mb/s)", c->nic_gbps * 1e3);
    if (d->byte_counter == 0 || d->fast_recovery == 0)
        return rs_err_set(err, RS_EINVAL, "transport.dcqcn.byte_counter and fast_recovery: expected at least 1");
    rs_time t;
    if (rs_time_from_us(d->alpha_period_us, &t) || t == 0 || rs_time_from_us(d->rate_timer_us, &t) || t == 0 ||
        rs_time_from_us(d->cnp_interval_us, &t))
        return rs_err_set(err, RS_EINVAL, "transport.dcqcn periods: expected positive times in microseconds");
    if (rs_time_from_ns(c->link_latency_ns, &t) || rs_time_from_ns(c->switch_latency_ns, &t) ||
        rs_time_from_ns(c->hb_latency_ns, &t) || rs_time_from_us(c->rto_us, &t) || t == 0)
        return rs_err_set(err, RS_EINVAL, "topology latencies and transport.rto_us: expected non-negative times "
                          "(rto_us above 0) below 10^8 seconds");
    return rs_nccl_config_check(&c->nccl, err);
}

int rs_nccl_config_check(const rs_nccl_config *nc, rs_err *err)
{
    if ((unsigned)nc->model > RS_NCCL_NCCL || (unsigned)nc->proto >= RS_NCCL_NPROTOS ||
        (unsigned)nc->algo >= RS_NCCL_NALGOS || (unsigned)nc->nvls > RS_NVLS_OFF || (unsigned)nc->gpu > RS_GPU_MI250X_GCD)
        return rs_err_set(err, RS_EINVAL, "nccl.*: expected nccl.model, nccl.protocol, nccl.algo, nccl.nvls and "
                          "system.gpu among their names (railsim help keys)");
    if (nc->channels > 32)
        return rs_err_set(err, RS_EINVAL, "nccl.channels: expected at most 32 (0: railsim's rule)");
    return RS_OK;
}

static void init_port(rs_net *net, rs_port *p, uint32_t node, uint32_t peer, uint32_t peer_port,
                      uint8_t kind, double gbps, rs_time prop)
{
    memset(p, 0, sizeof *p);
    p->node = node;
    p->peer_node = peer;
    p->peer_port = peer_port;
    p->kind = kind;
    p->up = 1;
    p->rate_bps = (uint64_t)llround(gbps * 1e9);
    p->ps_per_byte = rs_ps_per_byte(p->rate_bps);
    p->prop = prop;
    p->limit = kind == RS_PORT_SWITCH ? net->cfg.buffer_bytes : UINT64_MAX;
    p->act_head = p->act_tail = RS_NONE;
}

int rs_topo_build(rs_net *net, rs_err *err)
{
    const rs_net_config *c = &net->cfg;
    TRY(check_config(c, err));
    uint32_t N = c->gpus, K = c->hb_size, R = c->radix, D = N / K;
    net->gpus = N;
    net->hb_size = K;
    net->domains = D;
    net->nic_share = c->gpus_per_nic > 1 ? c->gpus_per_nic : 1;
    net->rails = K / net->nic_share;
    net->planes = c->kind == RS_TOPO_RAIL_ONLY ? net->rails : 1;

    builder b = { .net = net };
    int rc = RS_ENOMEM;
    uint32_t *gpus = malloc((size_t)N * sizeof *gpus);
    uint32_t *start = malloc(((size_t)N + 1) * sizeof *start);
    net->plane_tiers = calloc(net->planes, 1);
    if (!gpus || !start || !net->plane_tiers)
        goto out;
    for (uint32_t g = 0, id; g < N; g++) /* node id == GPU id */
        if ((rc = add_node(&b, RS_NODE_GPU, 0, 0, &id)) != RS_OK)
            goto out;

    uint32_t dl = (uint32_t)floor(R * c->oversubscription / (c->oversubscription + 1.0));
    if (dl < 1)
        dl = 1;
    if (dl >= R)
        dl = R - 1;
    uint32_t up = R - dl;
    net->tiers = 0;
    if (c->kind == RS_TOPO_DRAGONFLY) {
        rs_dfly d;
        if ((rc = rs_dfly_shape(N / net->nic_share, R, c->df_hosts, c->df_group,
                                 c->df_attach == RS_DFLY_SPREAD ? c->hb_size / net->nic_share : 1, &d, err)) != RS_OK ||
            (rc = build_dragonfly(&b, &d, N, net->nic_share)) != RS_OK)
            goto out;
        net->plane_tiers[0] = 1;
        net->tiers = 1;
        net->df_group = d.a;
    }
    /* Each plane lists its rails' NICs rail by rail (a NIC by the GPU
     * that has it) and cuts them into leaves of at most dl. A plane that
     * fits in one switch is that switch: for the fat tree, a cluster of
     * at most R NICs needs no spine for full bisection (the fewest tiers
     * that fit). */
    uint32_t rails_per_plane = c->kind == RS_TOPO_RAIL_ONLY ? 1 : net->rails;
    for (uint32_t plane = 0; c->kind != RS_TOPO_DRAGONFLY && plane < net->planes; plane++) {
        uint32_t n = 0, nl = 0;
        int single = rails_per_plane * D <= R;
        for (uint32_t ri = 0; ri < rails_per_plane; ri++) {
            uint32_t rail = c->kind == RS_TOPO_RAIL_ONLY ? plane : ri;
            for (uint32_t d = 0; d < D; d++) {
                if (single ? n == 0 : d % dl == 0)
                    start[nl++] = n;
                gpus[n++] = rs_rail_gpu(net, d, rail);
            }
        }
        start[nl] = n;
        uint32_t t = 0;
        if ((rc = build_plane(&b, (uint16_t)plane, gpus, start, nl, up, &t, err)) != RS_OK)
            goto out;
        net->plane_tiers[plane] = (uint8_t)t;
        if (t > net->tiers)
            net->tiers = t;
    }
    net->first_hb = net->nnodes;
    net->first_switch = N;
    net->nswitches = net->first_hb - N;
    net->cables = (uint32_t)b.ncables;
    if (K > 1)
        for (uint32_t d = 0; d < D; d++) {
            uint32_t hb;
            if ((rc = add_node(&b, RS_NODE_HB, 0, 0, &hb)) != RS_OK)
                goto out;
            for (uint32_t k = 0; k < K; k++)
                if ((rc = add_cable(&b, d * K + k, hb, CABLE_HB)) != RS_OK)
                    goto out;
        }

    /* Ports: count per node, lay out contiguously, then fill cable by cable
     * (so a GPU's NIC port comes before its HB port, and NVSwitch port k
     * faces local GPU k). */
    rc = RS_ENOMEM;
    uint32_t *fill = calloc(net->nnodes, sizeof *fill);
    if (!fill)
        goto out;
    for (size_t i = 0; i < b.ncables; i++) {
        net->nodes[b.cables[i].a].nports++;
        net->nodes[b.cables[i].b].nports++;
    }
    uint32_t np = 0;
    for (uint32_t i = 0; i < net->nnodes; i++) {
        net->nodes[i].port_base = np;
        np += net->nodes[i].nports;
    }
    net->nports = np;
    /* Page-aligned (so 64-byte aligned: rs_port is laid out by cache
     * line), and in pages of its own that a split run gives back
     * (rs_ports_release). */
    net->ports = rs_ports_alloc(np);
    if (!net->ports) {
        free(fill);
        goto out;
    }
    rs_time eth_prop, sw_lat, hb_lat;
    rs_time_from_ns(c->link_latency_ns, &eth_prop);
    rs_time_from_ns(c->switch_latency_ns, &sw_lat);
    rs_time_from_ns(c->hb_latency_ns, &hb_lat);
    for (size_t i = 0; i < b.ncables; i++) {
        const cable *cb = &b.cables[i];
        uint32_t pa = net->nodes[cb->a].port_base + fill[cb->a]++;
        uint32_t pb = net->nodes[cb->b].port_base + fill[cb->b]++;
        switch (cb->kind) {
        case CABLE_NIC: /* a = GPU, b = leaf */
            init_port(net, &net->ports[pa], cb->a, cb->b, pb, RS_PORT_NIC, c->nic_gbps, eth_prop + sw_lat);
            init_port(net, &net->ports[pb], cb->b, cb->a, pa, RS_PORT_SWITCH, c->nic_gbps, eth_prop);
            break;
        case CABLE_SW:
            init_port(net, &net->ports[pa], cb->a, cb->b, pb, RS_PORT_SWITCH, c->link_gbps, eth_prop + sw_lat);
            init_port(net, &net->ports[pb], cb->b, cb->a, pa, RS_PORT_SWITCH, c->link_gbps, eth_prop + sw_lat);
            break;
        default: /* CABLE_HB: a = GPU, b = NVSwitch; the latency splits over the two hops */
            init_port(net, &net->ports[pa], cb->a, cb->b, pb, RS_PORT_GPU_HB, c->hb_gbps, hb_lat / 2);
            init_port(net, &net->ports[pb], cb->b, cb->a, pa, RS_PORT_HB, c->hb_gbps, hb_lat - hb_lat / 2);
            break;
        }
    }
    free(fill);
    if (!(net->links = malloc(((size_t)np ? np : 1) * sizeof *net->links)))
        goto out;
    for (uint32_t i = 0; i < np; i++)
        rs_link_sync(&net->links[i], &net->ports[i]);

    /* Switch records and the GPU -> leaf map. */
    net->sw = calloc(net->nswitches ? net->nswitches : 1, sizeof *net->sw);
    net->leaf_of_gpu = malloc((size_t)N * sizeof *net->leaf_of_gpu);
    net->leaf_index_of_gpu = malloc((size_t)N * sizeof *net->leaf_index_of_gpu);
    net->leaf_port = malloc((size_t)N * sizeof *net->leaf_port);
    if (!net->sw || !net->leaf_of_gpu || !net->leaf_index_of_gpu || !net->leaf_port)
        goto out;
    net->nleaves = 0;
    for (uint32_t s = 0; s < net->nswitches; s++) {
        rs_switch *sw = &net->sw[s];
        sw->node = net->first_switch + s;
        net->nodes[sw->node].sw = s;
        sw->leaf_index = net->nodes[sw->node].tier == 1 ? net->nleaves++ : RS_NONE;
        net->nodes[sw->node].leaf_index = sw->leaf_index;
        sw->hash_salt = rs_mix64(c->seed ^ rs_mix64(0x45434d50ULL + s));
        rs_rng_init(&sw->rng, c->seed, sw->node, 1 /* spraying */);
        rs_rng_init(&sw->ecn_rng, c->seed, sw->node, 2 /* ECN marking */);
    }
    for (uint32_t g = 0; g < N; g++) {
        const rs_port *p = &net->ports[rs_gpu_nic_port(net, g)];
        net->leaf_of_gpu[g] = net->nodes[p->peer_node].sw;
        net->leaf_index_of_gpu[g] = net->sw[net->leaf_of_gpu[g]].leaf_index;
        net->leaf_port[g] = p->peer_port;
    }
    rc = rs_topo_route(net);
out:
    free(gpus);
    free(start);
    free(b.cables);
    return rc;
}

/* -- routing ------------------------------------------------------------ */

#define DIST_NONE 255

/* Routes are every process's (a split run's too): they read the links,
 * never the ports, which are their owners'. */
static inline int port_usable(const rs_net *net, const rs_link *p)
{
    return p->up && net->links[p->peer_port].up;
}

int rs_topo_route(rs_net *net)
{
    uint32_t S = net->nswitches, L = net->nleaves;
    free(net->leaf_dist);
    free(net->nh);
    net->nh = NULL;
    net->nh_len = 0;
    net->leaf_dist = malloc((size_t)L * S + 1);
    uint32_t *queue = malloc(((size_t)S + 1) * sizeof *queue);
    uint32_t *leaf_sw = malloc(((size_t)L + 1) * sizeof *leaf_sw);
    int rc = RS_ENOMEM;
    if (!net->leaf_dist || !queue || !leaf_sw)
        goto out;
    for (uint32_t s = 0; s < S; s++)
        if (net->sw[s].leaf_index != RS_NONE)
            leaf_sw[net->sw[s].leaf_index] = s;

    /* BFS from every leaf over usable switch-switch links. O(L * (S + E)). */
    for (uint32_t l = 0; l < L; l++) {
        uint8_t *dist = net->leaf_dist + (size_t)l * S;
        memset(dist, DIST_NONE, S);
        uint32_t qh = 0, qt = 0;
        dist[leaf_sw[l]] = 0;
        queue[qt++] = leaf_sw[l];
        while (qh < qt) {
            uint32_t s = queue[qh++];
            const rs_node *n = &net->nodes[net->sw[s].node];
            for (uint32_t i = 0; i < n->nports; i++) {
                const rs_link *p = &net->links[n->port_base + i];
                const rs_node *peer = &net->nodes[p->peer_node];
                if (peer->kind != RS_NODE_SWITCH || !port_usable(net, p))
                    continue;
                if (dist[peer->sw] == DIST_NONE && dist[s] + 1 < DIST_NONE) {
                    dist[peer->sw] = (uint8_t)(dist[s] + 1);
                    queue[qt++] = peer->sw;
                }
            }
        }
    }

    /* Next-hop sets, deduplicated per switch by content. */
    size_t cap = 4096;
    net->nh = malloc(cap * sizeof *net->nh);
    uint64_t *seen_hash = NULL;
    uint32_t *seen_off = NULL;
    uint32_t maxdeg = 0;
    for (uint32_t s = 0; s < S; s++)
        if (net->nodes[net->sw[s].node].nports > maxdeg)
            maxdeg = net->nodes[net->sw[s].node].nports;
    seen_hash = malloc(((size_t)maxdeg + 2) * sizeof *seen_hash);
    seen_off = malloc(((size_t)maxdeg + 2) * sizeof *seen_off);
    if (!net->nh || !seen_hash || !seen_off)
        goto out2;
    for (uint32_t s = 0; s < S; s++) {
        rs_switch *sw = &net->sw[s];
        const rs_node *n = &net->nodes[sw->node];
        free(sw->nh_off);
        sw->nh_off = malloc(((size_t)L + 1) * sizeof *sw->nh_off);
        if (!sw->nh_off)
            goto out2;
        uint32_t nseen = 0;
        for (uint32_t l = 0; l < L; l++) {
            const uint8_t *dist = net->leaf_dist + (size_t)l * S;
            sw->nh_off[l] = RS_NONE;
            if (dist[s] == DIST_NONE || dist[s] == 0)
                continue;
            if (net->nh_len + n->nports + 1 >= RS_ROUTE_DIRECT)
                goto out2; /* route entries keep offsets below 2^31 */
            if (rs_array_reserve(&net->nh, &cap, net->nh_len + n->nports + 1, sizeof *net->nh, 4096) != RS_OK)
                goto out2;
            uint32_t off = (uint32_t)net->nh_len, cnt = 0;
            uint64_t h = 0;
            for (uint32_t i = 0; i < n->nports; i++) {
                uint32_t pid = n->port_base + i;
                const rs_link *p = &net->links[pid];
                const rs_node *peer = &net->nodes[p->peer_node];
                if (peer->kind == RS_NODE_SWITCH && port_usable(net, p) &&
                    dist[peer->sw] + 1 == dist[s]) {
                    net->nh[off + 1 + cnt++] = pid;
                    h = rs_mix64(h ^ pid);
                }
            }
            if (cnt == 0)
                continue;
            net->nh[off] = cnt;
            uint32_t found = RS_NONE;
            for (uint32_t k = 0; k < nseen && found == RS_NONE; k++)
                if (seen_hash[k] == h && net->nh[seen_off[k]] == cnt &&
                    memcmp(&net->nh[seen_off[k] + 1], &net->nh[off + 1], cnt * sizeof(uint32_t)) == 0)
                    found = seen_off[k];
            if (found != RS_NONE) {
                sw->nh_off[l] = found;
            } else {
                sw->nh_off[l] = off;
                net->nh_len += cnt + 1;
                if (nseen < maxdeg + 2) {
                    seen_hash[nseen] = h;
                    seen_off[nseen++] = off;
                }
            }
        }
    }
    free(net->route);
    net->route = malloc(((size_t)S * L + 1) * sizeof *net->route);
    if (!net->route)
        goto out2;
    for (uint32_t s = 0; s < S; s++)
        for (uint32_t l = 0; l < L; l++) {
            uint32_t off = net->sw[s].nh_off[l];
            uint32_t *e = &net->route[(size_t)s * L + l];
            if (off != RS_NONE && net->nh[off] == 1 && net->nh[off + 1] < RS_ROUTE_DIRECT)
                *e = RS_ROUTE_DIRECT | net->nh[off + 1];
            else
                *e = off; /* below 2^31: checked above */
        }
    rc = RS_OK;
out2:
    free(seen_hash);
    free(seen_off);
out:
    free(queue);
    free(leaf_sw);
    return rc;
}

int rs_net_path_links(const rs_net *net, uint32_t a, uint32_t b)
{
    if (a >= net->gpus || b >= net->gpus)
        return -1;
    if (a == b)
        return 0;
    const rs_link *pa = &net->links[rs_gpu_nic_port(net, a)];
    const rs_link *pb = &net->links[rs_gpu_nic_port(net, b)];
    if (!port_usable(net, pa) || !port_usable(net, pb))
        return -1;
    uint32_t la = net->leaf_of_gpu[a], lb = net->leaf_of_gpu[b];
    uint8_t d = net->leaf_dist[(size_t)net->sw[lb].leaf_index * net->nswitches + la];
    return d == DIST_NONE ? -1 : d + 2;
}

/* -- names ----------------------------------------------------------------- */

static void node_name(const rs_net *net, uint32_t id, char *buf, size_t n)
{
    const rs_node *nd = &net->nodes[id];
    if (nd->kind == RS_NODE_GPU) {
        snprintf(buf, n, "gpu%u", id);
    } else if (nd->kind == RS_NODE_HB) {
        snprintf(buf, n, "nvs%u", id - net->first_hb);
    } else {
        /* Two tiers: leaf, spine; three: leaf, agg, core; more: leaf,
         * agg2-, agg3-, ..., core (the tier in the name, then a dash so
         * that the ordinal stays apart: "agg3-12"). */
        uint32_t T = net->plane_tiers[nd->plane];
        char t[16];
        if (nd->tier == 1)
            snprintf(t, sizeof t, "leaf");
        else if (nd->tier == T)
            snprintf(t, sizeof t, "%s", T == 2 ? "spine" : "core");
        else if (T == 3)
            snprintf(t, sizeof t, "agg");
        else
            snprintf(t, sizeof t, "agg%u-", (unsigned)nd->tier);
        if (net->cfg.kind == RS_TOPO_DRAGONFLY)
            snprintf(buf, n, "g%u-sw%u", nd->ordinal / net->df_group, nd->ordinal % net->df_group);
        else if (net->cfg.kind == RS_TOPO_RAIL_ONLY)
            snprintf(buf, n, "rail%u-%s%u", nd->plane, t, nd->ordinal);
        else
            snprintf(buf, n, "%s%u", t, nd->ordinal);
    }
}

void rs_topo_port_name(const rs_net *net, uint32_t port, char *buf, size_t n)
{
    const rs_link *p = &net->links[port];
    char node[32];
    node_name(net, p->node, node, sizeof node);
    if (p->kind == RS_PORT_NIC)
        snprintf(buf, n, "%s.nic", node);
    else if (p->kind == RS_PORT_GPU_HB)
        snprintf(buf, n, "%s.hb", node);
    else
        snprintf(buf, n, "%s.p%u", node, port - net->nodes[p->node].port_base);
}
