/*
 * cost.c - bill of materials, price and power of the fat tree and the
 * rail-only network (cost.h; the model is docs/cost.md).
 *
 * The counts are the topology builder's (models/topo.c) in closed form:
 * nothing is built, so a 100,000-GPU bill costs microseconds. Both take the
 * shape of a plane of L leaves with `up` uplinks each from rs_clos_shape
 * (clos.h: a folded Clos of as many tiers as L needs, each tier above the
 * leaves grouping R/2 blocks, the top joining up to R with the fewest
 * switches and parallel cables), and the leaves from one rule: the fat
 * tree is one plane whose every rail is cut into ceil(D/dl) leaves (D =
 * N/K GPUs per rail, dl = floor(R*o/(o+1)) GPU ports per leaf), except
 * that a cluster of at most R GPUs is one switch (full bisection needs no
 * more); rail-only is K planes of one rail each, a rail of at most R GPUs
 * being one switch. test_cost checks these against rs_net_create.
 *
 * The one deliberate difference from the simulator: in rail-only, rails of
 * at most R/2 GPUs share switches (floor(R/D) per switch); see cost.h.
 */
#include "cost.h"

#include "clos.h"
#include "net.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* -- parts table -------------------------------------------------------- */

/* Every part once, in the order of rs_catalog, with its default (400 Gb/s
 * figures; sources and estimates in docs/cost.md): the keys, their
 * fields and rs_catalog_default all come from this list. */
#define RS_CATALOG(X)                                                                       \
    X(switch_port_usd, 748.0) /* given by the issue */                                    \
    X(switch_port_w, 15.0)    /* estimate: ~1 kW for a 64 x 400G switch without optics */ \
    X(switch_usd, 0.0)                                                                    \
    X(switch_w, 0.0)                                                                      \
    X(transceiver_usd, 374.0) /* given by the issue */                                    \
    X(transceiver_w, 12.0)    /* 400G QSFP-DD FR4/DR4 datasheet maximum */                \
    X(fiber_usd, 0.0)                                                                     \
    X(dac_usd, 150.0)         /* estimate: passive 400G DAC, a few metres */              \
    X(dac_w, 0.0)             /* passive copper draws nothing itself */                   \
    X(whole_switches, 1.0)
#define PART_NAME(f, d) #f,
#define PART_OFF(f, d) offsetof(rs_catalog, f),
#define PART_DEFAULT(f, d) p->f = d;

static const char *const key_names[] = { RS_CATALOG(PART_NAME) NULL };
static const size_t key_offs[] = { RS_CATALOG(PART_OFF) };
#define NPARTS (sizeof key_offs / sizeof key_offs[0])

void rs_catalog_default(rs_catalog *p)
{
    memset(p, 0, sizeof *p);
    RS_CATALOG(PART_DEFAULT)
}

const char *const *rs_catalog_keys(void)
{
    return key_names;
}

/* Index of key in key_names, or -1. */
static int find_key(const char *key)
{
    for (size_t i = 0; key && i < NPARTS; i++)
        if (strcmp(key_names[i], key) == 0)
            return (int)i;
    return -1;
}

int rs_catalog_set(rs_catalog *p, const char *key, double v, rs_err *err)
{
    int k = find_key(key);
    if (k < 0) {
        char list[256] = "";
        size_t used = 0;
        for (size_t i = 0; i < NPARTS && used < sizeof list; i++) {
            int n = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", key_names[i]);
            if (n < 0)
                break;
            used += (size_t)n;
        }
        return rs_err_set(err, RS_EINVAL, "parts.%s: unknown part; expected one of %s",
                          key ? key : "(null)", list);
    }
    if (!(v >= 0.0 && v <= 1e12)) /* also rejects NaN and infinities */
        return rs_err_set(err, RS_EINVAL, "parts.%s: expected a number from 0 to 1e12, got %g", key, v);
    if (key_offs[k] == offsetof(rs_catalog, whole_switches) && v != 0.0 && v != 1.0)
        return rs_err_set(err, RS_EINVAL, "parts.whole_switches: expected 0 or 1, got %g", v);
    *(double *)((char *)p + key_offs[k]) = v;
    return RS_OK;
}

int rs_catalog_get(const rs_catalog *p, const char *key, double *v)
{
    int k = find_key(key);
    if (k < 0)
        return RS_EINVAL;
    *v = *(const double *)((const char *)p + key_offs[k]);
    return RS_OK;
}

/* -- counting ----------------------------------------------------------- */

void rs_cost_input_default(rs_cost_input *in)
{
    /* The topology keys at the simulator's defaults, from the one place
     * that sets them. */
    rs_net_config c;
    rs_net_config_default(&c);
    rs_cost_input_of(in, &c);
}

void rs_cost_input_of(rs_cost_input *in, const rs_net_config *c)
{
    uint32_t share = c->gpus_per_nic > 1 && c->hb_size % c->gpus_per_nic == 0 ? c->gpus_per_nic : 1;
    memset(in, 0, sizeof *in);
    in->gpus = c->gpus / share;
    in->hb_size = c->hb_size / share;
    in->radix = c->radix;
    in->nic_gbps = c->nic_gbps;
    in->oversubscription = c->oversubscription;
    in->nic_copper = 0;
    in->pack_rails = 1;
}

/* The keys of the simulator's topology check that shape the network
 * (clos.c, shared with topo.c). */
static int check_input(const rs_cost_input *c, rs_err *err)
{
    int rc;
    if ((rc = rs_clos_check_shape(c->gpus, c->hb_size, c->radix, err)) != RS_OK ||
        (rc = rs_clos_check_rate("topology.nic_gbps", c->nic_gbps, err)) != RS_OK)
        return rc;
    return rs_clos_check_oversubscription(c->oversubscription, err);
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

_Static_assert(RS_COST_MAX_TIERS == RS_CLOS_MAX_TIERS, "one tier bound for the cost model and the builder");

static void price(rs_bom *b, const rs_cost_input *in, const rs_catalog *p)
{
    uint64_t N = in->gpus;
    b->switch_ports = b->switches * in->radix;
    b->nic_links = N;
    b->copper_links = in->nic_copper ? N : 0;
    b->optical_links = b->links - b->copper_links;
    b->transceivers = 2 * b->optical_links;

    double ports = (double)(p->whole_switches != 0.0 ? b->switch_ports : b->switch_ports_used);
    b->switch_usd = ports * p->switch_port_usd + (double)b->switches * p->switch_usd;
    b->switch_w = ports * p->switch_port_w + (double)b->switches * p->switch_w;
    b->transceiver_usd = (double)b->transceivers * p->transceiver_usd;
    b->transceiver_w = (double)b->transceivers * p->transceiver_w;
    b->cable_usd = (double)b->optical_links * p->fiber_usd + (double)b->copper_links * p->dac_usd;
    b->cable_w = (double)b->copper_links * p->dac_w;
    b->cost_usd = b->switch_usd + b->transceiver_usd + b->cable_usd;
    b->power_w = b->switch_w + b->transceiver_w + b->cable_w;
}

static void fill_counts(rs_bom *b, const rs_clos *pc, uint32_t planes, uint64_t N)
{
    memset(b, 0, sizeof *b);
    b->tiers = pc->tiers;
    b->planes = planes;
    for (int t = 0; t < RS_COST_MAX_TIERS; t++) {
        b->switches_per_tier[t] = pc->switches[t] * planes;
        b->switches += b->switches_per_tier[t];
    }
    b->switches_logical = b->switches;
    b->links = N + pc->cables * planes;
    b->switch_ports_used = N + 2 * pc->cables * planes;
}

uint32_t rs_cost_rails_per_switch(uint64_t rail_gpus, uint32_t radix, uint32_t rails)
{
    uint64_t per = rail_gpus ? radix / rail_gpus : 1;
    if (per > rails)
        per = rails;
    return per ? (uint32_t)per : 1;
}

int rs_cost_compute(const rs_cost_input *in, const rs_catalog *parts,
                    rs_bom *fat_tree, rs_bom *rail_only, rs_err *err)
{
    int rc = check_input(in, err);
    if (rc != RS_OK)
        return rc;
    uint64_t N = in->gpus, K = in->hb_size, R = in->radix, D = N / K;
    /* Leaf split exactly as topo.c: dl GPU ports, clamped to [1, R-1]. */
    uint64_t dl = (uint64_t)floor((double)R * in->oversubscription / (in->oversubscription + 1.0));
    if (dl < 1)
        dl = 1;
    if (dl >= R)
        dl = R - 1;
    uint64_t up = R - dl;

    rs_clos fat, rail;
    if (fat_tree) {
        uint64_t nl = N <= R ? 1 : K * ceil_div(D, dl);
        if ((rc = rs_clos_shape(nl, (uint32_t)R, (uint32_t)up, " in the fat tree", &fat, err)) != RS_OK)
            return rc;
    }
    if (rail_only) {
        uint64_t nl = D <= R ? 1 : ceil_div(D, dl);
        if ((rc = rs_clos_shape(nl, (uint32_t)R, (uint32_t)up, " in the rail-only network", &rail, err)) != RS_OK)
            return rc;
    }

    if (fat_tree) {
        fill_counts(fat_tree, &fat, 1, N);
        price(fat_tree, in, parts);
    }
    if (rail_only) {
        fill_counts(rail_only, &rail, (uint32_t)K, N);
        rail_only->rails_per_switch = 1;
        /* A rail of D <= R GPUs is one switch; floor(R/D) of them fit in
         * one physical switch, partitioned (one VLAN/VRF per rail) so each
         * rail stays its own network. Cables and cabled ports do not change. */
        if (in->pack_rails && rail.tiers == 1) {
            uint64_t per = rs_cost_rails_per_switch(D, (uint32_t)R, (uint32_t)K);
            rail_only->rails_per_switch = (uint32_t)per;
            rail_only->switches_per_tier[0] = ceil_div(K, per);
            rail_only->switches = rail_only->switches_per_tier[0];
        }
        price(rail_only, in, parts);
    }
    return RS_OK;
}

int rs_cost_dragonfly(const rs_cost_input *in, uint32_t df_hosts, uint32_t df_group, const rs_catalog *parts,
                      rs_bom *out, rs_err *err)
{
    int rc = check_input(in, err);
    if (rc != RS_OK)
        return rc;
    rs_dfly d;
    if ((rc = rs_dfly_shape(in->gpus, in->radix, df_hosts, df_group, 1, &d, err)) != RS_OK)
        return rc;
    memset(out, 0, sizeof *out);
    out->tiers = 1;
    out->planes = 1;
    out->switches = out->switches_logical = out->switches_per_tier[0] = d.switches;
    uint64_t cables = d.local_cables + d.global_cables;
    out->links = in->gpus + cables;
    out->switch_ports_used = in->gpus + 2 * cables;
    price(out, in, parts);
    return RS_OK;
}

double rs_cost_saving_pct(const rs_bom *fat_tree, const rs_bom *rail_only)
{
    if (fat_tree->cost_usd == 0.0)
        return 0.0;
    return (fat_tree->cost_usd - rail_only->cost_usd) / fat_tree->cost_usd * 100.0;
}

double rs_cost_power_saving_pct(const rs_bom *fat_tree, const rs_bom *rail_only)
{
    if (fat_tree->power_w == 0.0)
        return 0.0;
    return (fat_tree->power_w - rail_only->power_w) / fat_tree->power_w * 100.0;
}
