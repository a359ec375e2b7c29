/*
 * ugal.c - routing.dragonfly=ugal (docs/model.md, "Dragonfly"): each
 * network flow on a dragonfly takes its minimal path or a Valiant detour
 * through an intermediate switch, as its source switch judges them when
 * it starts (UGAL-L: Kim, Dally, Scott and Abts, ISCA 2008, sec. 4.2).
 *
 * The candidate detour is one intermediate switch drawn from the seed and
 * the flow's serial: another switch of the group for a pair inside one
 * group (two local hops in place of the one direct cable), a switch of a
 * third group for a pair across groups (any other switch when there are
 * only two). The source switch weighs each path's first port by the flows
 * counted on it (net->ugal_load: network flows started there and not yet
 * handed back) times the path's switch hops, and takes the detour when
 * (n_min + 1) H_min > (n_detour + 1) H_detour: an idle network routes
 * minimally, and the flows of a collective that start together spread
 * over the detours once the direct cable has its share. The count is
 * the same at both fidelities, so both take the same paths; the packet
 * level then forwards a detoured flow's data frames toward the
 * intermediate switch for its first hops (rs_ugal_route), its ACKs, NAKs
 * and CNPs minimally, and the flow level follows the same path.
 *
 * What it leaves out: UGAL-G's global queue view and per-packet
 * re-decisions (Slingshot adapts per packet), so a flow keeps its choice
 * until it ends.
 */
#include "netint.h"

/* Switch hops from switch a to switch b (every dragonfly switch is a leaf). */
static uint32_t hops_between(const rs_net *net, uint32_t a, uint32_t b)
{
    return net->leaf_dist[(size_t)net->sw[b].leaf_index * net->nswitches + a];
}

/* Member k of first .. first+n-1 without x and y (both among them,
 * x != y): k < n - 2. */
static uint32_t skip_two(uint32_t first, uint32_t k, uint32_t x, uint32_t y)
{
    uint32_t lo = x < y ? x : y, hi = x < y ? y : x, i = first + k;
    i += i >= lo;
    i += i >= hi;
    return i;
}

/* The intermediate switch for a flow from switch s to switch d, from the
 * draw r; RS_NONE when the dragonfly has no third switch to use. */
static uint32_t candidate(const rs_net *net, uint32_t s, uint32_t d, uint64_t r)
{
    uint32_t S = net->nswitches, a = net->df_group, G = S / a, gs = s / a, gd = d / a;
    if (gs == gd) /* another switch of the group */
        return a < 3 ? RS_NONE : skip_two(gs * a, (uint32_t)(r % (a - 2)), s, d);
    if (G >= 3) /* a switch of a third group */
        return skip_two(0, (uint32_t)(r % (G - 2)), gs, gd) * a + (uint32_t)((r >> 32) % a);
    return S < 3 ? RS_NONE : skip_two(0, (uint32_t)(r % (S - 2)), s, d);
}

void rs_ugal_choose(rs_net *net, rs_flow *f)
{
    uint32_t s = net->leaf_of_gpu[f->src], d = net->leaf_of_gpu[f->dst];
    if (s == d)
        return;
    const rs_node *n = &net->nodes[net->sw[s].node];
    uint32_t pmin = rs_route_hashed(net, n, f->src, f->dst, f->entropy);
    uint32_t hmin = hops_between(net, s, d);
    if (pmin == RS_NONE || hmin == 0 || hmin == 255)
        return; /* no minimal path: the transport's cut-off rules apply */
    uint32_t via = candidate(net, s, d, rs_mix64(net->cfg.seed ^ rs_mix64(0x5547414cULL + f->serial)));
    uint32_t pnm = RS_NONE, h1 = 255, h2 = 255;
    if (via != RS_NONE) {
        h1 = hops_between(net, s, via);
        h2 = hops_between(net, via, d);
        uint32_t e = net->route[(size_t)s * net->nleaves + net->sw[via].leaf_index];
        if (e != RS_NONE && h1 != 255 && h2 != 255)
            pnm = rs_route_hashed_at(net, n, e, f->src, f->dst, f->entropy);
    }
    uint64_t cmin = ((uint64_t)net->ugal_load[pmin] + 1) * hmin;
    if (pnm != RS_NONE && cmin > ((uint64_t)net->ugal_load[pnm] + 1) * (h1 + h2)) {
        f->via = via;
        f->via_hops = (uint8_t)h1;
        f->ugal_port = pnm;
    } else {
        f->ugal_port = pmin;
    }
    net->ugal_load[f->ugal_port]++;
}
