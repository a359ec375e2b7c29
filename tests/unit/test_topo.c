/*
 * test_topo.c - the topologies the packet-level network builds (models/):
 * switch, link and tier counts of the fat tree and rail-only, against
 * closed forms and the cost model, hop counts and reachability, port names
 * past three tiers, and the configurations rs_net_create refuses.
 */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "cu_main.h"
#include "fixture_net.h"
#include "net.h"

/* -- topology ----------------------------------------------------------- */

/* A network of the given kind and size; *ti gets its topology facts. */
static rs_net *mk_topo(rs_topo_kind kind, uint32_t gpus, uint32_t hb, uint32_t radix, rs_net_topo_info *ti)
{
    rs_net *net = rs_fx_topo(kind, gpus, hb, radix);
    rs_net_topo_info_get(net, ti);
    return net;
}

static void check_topo(rs_topo_kind kind, uint32_t gpus, uint32_t hb, uint32_t radix,
                       uint32_t switches, uint32_t links, uint32_t tiers)
{
    rs_net_topo_info ti;
    rs_net *net = mk_topo(kind, gpus, hb, radix, &ti);
    CU_ASSERT_EQUAL(ti.switches, switches);
    CU_ASSERT_EQUAL(ti.links, links);
    CU_ASSERT_EQUAL(ti.tiers, tiers);
    rs_net_destroy(net);
}

static void test_topo_kary_fat_tree_counts(void)
{
    /* k = 16: k^3/4 hosts, 5k^2/4 switches, 3 * k^3/4 links. */
    check_topo(RS_TOPO_FAT_TREE, 1024, 1, 16, 320, 3072, 3);
    /* k = 4, 16 hosts: 20 switches, 48 links. */
    check_topo(RS_TOPO_FAT_TREE, 16, 1, 4, 20, 48, 3);
    /* Fits in one switch. */
    check_topo(RS_TOPO_FAT_TREE, 16, 1, 16, 1, 16, 1);
}

static void test_topo_rail_optimized_fat_tree_counts(void)
{
    /* 64 GPUs fit in one 64-port switch: full bisection with one tier. */
    check_topo(RS_TOPO_FAT_TREE, 64, 8, 64, 1, 64, 1);
    /* 128 GPUs, 8 rails of 16: one 32-down leaf per rail (8 leaves), each
     * with 32 uplinks; 8*32 uplinks need 4 spines (8 parallel links each). */
    check_topo(RS_TOPO_FAT_TREE, 128, 8, 64, 12, 128 + 256, 2);
    /* 1024 GPUs, radix 32: 64 rail-pure leaves of 16, 4 pods of 16 leaves
     * with 16 aggregation switches each, 16 core groups of 2. */
    check_topo(RS_TOPO_FAT_TREE, 1024, 8, 32, 160, 3072, 3);
}

static void test_topo_rail_only_counts(void)
{
    /* Each rail of 8 GPUs is one switch; no spine at all. */
    check_topo(RS_TOPO_RAIL_ONLY, 64, 8, 64, 8, 64, 1);
    /* Rails of 128 GPUs at radix 32: 8 leaves + 4 spines per rail. */
    check_topo(RS_TOPO_RAIL_ONLY, 1024, 8, 32, 96, 1024 + 8 * 8 * 16, 2);
}

static void test_topo_hop_counts_fat_tree(void)
{
    rs_net_config c;
    rs_fx_config(&c, 1024, 1, 16);
    rs_net *net = rs_fx_net(&c);
    CU_ASSERT_EQUAL(rs_net_path_links(net, 5, 5), 0);
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 7), 2);   /* same leaf */
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 8), 4);   /* same pod */
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 64), 6);  /* across the core */
    CU_ASSERT_EQUAL(rs_net_path_links(net, 1023, 0), 6);
    rs_net_destroy(net);
}

static void test_topo_rail_only_has_no_path_between_rails(void)
{
    rs_net_config c;
    rs_fx_config(&c, 1024, 8, 32);
    c.kind = RS_TOPO_RAIL_ONLY;
    rs_net *net = rs_fx_net(&c);
    for (uint32_t a = 0; a < 1024; a += 37)
        for (uint32_t b = 0; b < 1024; b += 41) {
            int l = rs_net_path_links(net, a, b);
            if (a == b) {
                CU_ASSERT_EQUAL(l, 0);
            } else if (a % 8 != b % 8) {
                CU_ASSERT_EQUAL(l, -1);
            } else {
                CU_ASSERT(l == 2 || l == 4);
            }
        }
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 8), 2);       /* same leaf of rail 0 */
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 16 * 8), 4);  /* next leaf of rail 0 */
    rs_net_destroy(net);
    /* The rail-optimized fat tree joins every pair. */
    c.kind = RS_TOPO_FAT_TREE;
    net = rs_fx_net(&c);
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 1), 4); /* rails 0 and 1 share pod 0 */
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 1023), 6);
    rs_net_destroy(net);
}

/* Every port's name (calloc'd, the caller frees), asserting that no two
 * are the same. */
static char (*port_names(rs_net *net, uint32_t *n))[48]
{
    uint32_t np = *n = rs_net_port_count(net);
    char (*nm)[48] = calloc(np, sizeof *nm);
    CU_ASSERT_PTR_NOT_NULL_FATAL(nm);
    for (uint32_t i = 0; i < np; i++) {
        rs_net_port_info pi;
        rs_net_port_info_get(net, i, &pi);
        memcpy(nm[i], pi.name, sizeof nm[i]);
    }
    uint32_t dup = 0;
    for (uint32_t i = 0; i < np; i++)
        for (uint32_t j = i + 1; j < np; j++)
            dup += strcmp(nm[i], nm[j]) == 0;
    CU_ASSERT_EQUAL(dup, 0);
    return nm;
}

/* Deeper than three tiers: the k-ary recursion (each tier multiplies the
 * reach by R/2). Checks the counts against the cost model (which counts
 * the same shape in closed form), that every port name is unique (names
 * work for any tier count), the hop counts of each tier, and that every
 * GPU reaches every GPU, by path and by a packet-level message. */
static void check_deep(rs_topo_kind kind, uint32_t gpus, uint32_t hb, uint32_t radix, uint32_t tiers,
                       uint32_t switches, const char *const *names)
{
    rs_net_topo_info ti;
    rs_net *net = mk_topo(kind, gpus, hb, radix, &ti);
    CU_ASSERT_EQUAL(ti.tiers, tiers);
    CU_ASSERT_EQUAL(ti.switches, switches);
    rs_cost_input in;
    rs_cost_input_default(&in);
    in.gpus = gpus;
    in.hb_size = hb;
    in.radix = radix;
    in.pack_rails = 0;
    rs_catalog parts;
    rs_catalog_default(&parts);
    rs_bom fat, rail;
    CU_ASSERT_EQUAL_FATAL(rs_cost_compute(&in, &parts, &fat, &rail, NULL), RS_OK);
    const rs_bom *b = kind == RS_TOPO_FAT_TREE ? &fat : &rail;
    CU_ASSERT_EQUAL(b->tiers, ti.tiers);
    CU_ASSERT_EQUAL(b->switches_logical, ti.switches);
    CU_ASSERT_EQUAL(b->links, ti.links);

    uint32_t np;
    char (*nm)[48] = port_names(net, &np);
    for (const char *const *w = names; *w; w++) {
        uint32_t found = 0;
        for (uint32_t i = 0; i < np; i++)
            found += strcmp(nm[i], *w) == 0;
        if (found != 1)
            fprintf(stderr, "\nport %s: found %u times\n", *w, found);
        CU_ASSERT_EQUAL(found, 1);
    }
    free(nm);

    /* Same rail everywhere on rail-only; across rails it relays. */
    int longest = 0;
    for (uint32_t a = 0; a < gpus; a++)
        for (uint32_t d = 0; d < gpus; d++) {
            int l = rs_net_path_links(net, a, d);
            if (kind == RS_TOPO_RAIL_ONLY && a % hb != d % hb) {
                CU_ASSERT_EQUAL(l, -1);
            } else {
                CU_ASSERT(a == d ? l == 0 : l >= 2 && l <= 2 * (int)tiers);
            }
            if (l > longest)
                longest = l;
        }
    CU_ASSERT_EQUAL(longest, 2 * (int)tiers); /* up to the top and down */
    for (uint32_t a = 0; a < gpus; a++)
        for (uint32_t d = 0; d < gpus; d++)
            if (a != d)
                CU_ASSERT_EQUAL(rs_fx_send(net, a, d, 8192, NULL, NULL, 0), RS_OK);
    rs_fx_run_idle(net);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.msgs_done, (uint64_t)gpus * (gpus - 1));
    rs_net_destroy(net);
}

static void test_topo_four_tier_fat_tree(void)
{
    /* k = 4, 4 tiers: 2 (k/2)^4 = 32 hosts; N/(k/2) = 16 switches in each
     * of the three lower tiers and N/k = 8 at the top, 4N links. */
    static const char *const ft[] = { "leaf15.p3", "agg2-15.p3", "agg3-15.p3", "core7.p3", NULL };
    check_topo(RS_TOPO_FAT_TREE, 32, 1, 4, 56, 128, 4);
    check_deep(RS_TOPO_FAT_TREE, 32, 1, 4, 4, 56, ft);
    rs_net_config c;
    rs_fx_config(&c, 32, 1, 4);
    rs_net *net = rs_fx_net(&c);
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 1), 2);  /* same leaf */
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 2), 4);  /* same pod */
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 4), 6);  /* same tier-3 block */
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 8), 8);  /* across the top */
    CU_ASSERT_EQUAL(rs_net_path_links(net, 31, 0), 8);
    rs_net_destroy(net);
    /* Rail-optimized, 8 rails of 64 at R = 8: 128 rail-pure leaves of 4
     * (4 tiers reach 8 * 4 * 4), each rail in rail-only 16 leaves (3). */
    static const char *const none[] = { NULL };
    rs_net_topo_info ti;
    net = mk_topo(RS_TOPO_FAT_TREE, 512, 8, 8, &ti);
    CU_ASSERT_EQUAL(ti.tiers, 4);
    CU_ASSERT_EQUAL(ti.switches, 128 * 3 + 64); /* N/4 per tier below the top, N/8 at it */
    CU_ASSERT_EQUAL(ti.links, 4 * 512);
    rs_net_destroy(net);
    /* Partial tiers: 24 hosts in 12 leaves, 6 pods, 3 tier-3 blocks of 4
     * switches; at the top, each of the 4 positions has a group of
     * divisor(2, ceil(3 * 2 / 4)) = 2. Then 5 tiers for 64 hosts. */
    check_deep(RS_TOPO_FAT_TREE, 24, 1, 4, 4, 12 + 12 + 12 + 8, none);
    check_deep(RS_TOPO_FAT_TREE, 64, 1, 4, 5, 4 * 32 + 16, none);
}

static void test_topo_four_tier_rail_only(void)
{
    /* 2 rails of 32 GPUs at R = 4: each rail is a 4-tier k = 4 fat tree. */
    static const char *const ro[] = { "rail0-leaf15.p3", "rail1-agg2-15.p3", "rail1-agg3-0.p0",
                                      "rail1-core7.p3", NULL };
    check_deep(RS_TOPO_RAIL_ONLY, 64, 2, 4, 4, 2 * 56, ro);
}

/* Packet-level messages of 8 KiB from every sa-th GPU of n to every
 * sd-th: every one delivered. */
static void all_delivered(rs_net *net, uint32_t n, uint32_t sa, uint32_t sd)
{
    for (uint32_t a = 0; a < n; a += sa)
        for (uint32_t d = 0; d < n; d += sd)
            if (a != d)
                CU_ASSERT_EQUAL(rs_fx_send(net, a, d, 8192, NULL, NULL, 0), RS_OK);
    rs_fx_run_idle(net);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.msgs_done, st.msgs);
}

/* A dragonfly (clos.h, rs_dfly): 256 GPUs at radix 16 are the balanced
 * dragonfly p = 4, a = 8, h = 5: 64 switches in 8 groups, 28 cables inside
 * each group, 5 between every two; the cost model counts the same; port
 * names are unique; every pair is at most local, global, local (5 links
 * with the NIC cables) apart by minimal routes; every GPU reaches every
 * GPU by a packet-level message; too many groups for the radix, or no
 * port left for global links, are refused naming the key. */
static void test_topo_dragonfly(void)
{
    rs_net_config c;
    rs_fx_config(&c, 256, 8, 16);
    c.kind = RS_TOPO_DRAGONFLY;
    rs_net *net = rs_fx_net(&c);
    rs_net_topo_info ti;
    rs_net_topo_info_get(net, &ti);
    CU_ASSERT_EQUAL(ti.switches, 64);
    CU_ASSERT_EQUAL(ti.tiers, 1);
    CU_ASSERT_EQUAL(ti.links, 256 + 8 * 28 + 28 * 5);
    rs_cost_input in;
    rs_cost_input_default(&in);
    in.gpus = 256;
    in.hb_size = 8;
    in.radix = 16;
    rs_catalog parts;
    rs_catalog_default(&parts);
    rs_bom b;
    CU_ASSERT_EQUAL_FATAL(rs_cost_dragonfly(&in, 0, 0, &parts, &b, NULL), RS_OK);
    CU_ASSERT_EQUAL(b.switches, ti.switches);
    CU_ASSERT_EQUAL(b.links, ti.links);
    CU_ASSERT_EQUAL(b.tiers, 1);
    CU_ASSERT_EQUAL(b.transceivers, 2 * b.links);
    uint32_t np;
    free(port_names(net, &np));
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 1), 2);   /* one switch (4 NICs) */
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 4), 3);   /* the next switch of the group */
    int longest = 0;
    for (uint32_t a = 0; a < 256; a++)
        for (uint32_t d = 0; d < 256; d++) {
            int l = rs_net_path_links(net, a, d);
            CU_ASSERT(a == d ? l == 0 : l >= 2 && l <= 5);
            longest = l > longest ? l : longest;
        }
    CU_ASSERT_EQUAL(longest, 5);
    all_delivered(net, 256, 3, 5);
    CU_ASSERT_EQUAL(rs_net_msgs_relayed(net), 0); /* routing.pxn=auto does not relay on a dragonfly */
    rs_net_destroy(net);
    /* Radix 8, p 2, a 4, h 3: 13 groups at most (104 GPUs); 112 need 14. */
    rs_fx_config(&c, 112, 8, 8);
    c.kind = RS_TOPO_DRAGONFLY;
    rs_fx_refused(&c, "topology.gpus");
    rs_fx_config(&c, 64, 8, 8);
    c.kind = RS_TOPO_DRAGONFLY;
    c.df_group = 7; /* 2 NIC ports + 6 local links: no global link, and 64 GPUs need 5 groups */
    rs_fx_refused(&c, "topology.df_group: 7 switches per group leave no global link");
    c.df_group = 8; /* 2 NIC ports + 7 local links: more than 8 ports */
    rs_fx_refused(&c, "topology.df_hosts and topology.df_group");
}

static void note_done(void *ctx, rs_net *net, uint64_t tag)
{
    (void)tag;
    *(rs_time *)ctx = rs_net_now(net);
}

/* topology.gpus_per_nic: 2 GPUs per NIC halve the NIC cables and rails;
 * a GPU without a NIC sends and receives through its partner's, so the
 * two share its rate at both fidelities; a rail-only network has one
 * plane per NIC of a domain. */
static void test_topo_shared_nics(void)
{
    rs_net_config c;
    rs_fx_config(&c, 64, 8, 16);
    c.gpus_per_nic = 2;
    for (int kind = 0; kind < 3; kind++) {
        c.kind = kind == 0 ? RS_TOPO_FAT_TREE : kind == 1 ? RS_TOPO_RAIL_ONLY : RS_TOPO_DRAGONFLY;
        rs_net *net = rs_fx_net(&c);
        rs_net_topo_info ti;
        rs_net_topo_info_get(net, &ti);
        CU_ASSERT_EQUAL(ti.nics, 32);
        if (kind == 1)
            CU_ASSERT_EQUAL(ti.planes, 4);
        uint32_t np;
        char (*names)[48] = port_names(net, &np);
        uint32_t nic_ports = 0;
        for (uint32_t i = 0; i < np; i++)
            nic_ports += strstr(names[i], ".nic") != NULL;
        CU_ASSERT_EQUAL(nic_ports, 32);
        free(names);
        /* GPU 1 shares GPU 0's NIC: its path to GPU 9 (GPU 8's NIC, the
         * same rail) is GPU 0's. */
        CU_ASSERT_EQUAL(rs_net_path_links(net, 1, 9), rs_net_path_links(net, 0, 8));
        rs_net_destroy(net);
    }
    /* Both GPUs of a NIC send 8 MiB to the next domain at once: they
     * share one 400 Gb/s NIC, so the pair takes twice as long as one. */
    rs_time one[2], two[2];
    for (int f = 0; f < 2; f++)
        for (uint32_t s = 1; s <= 2; s++) {
            rs_fx_config(&c, 16, 8, 16);
            c.gpus_per_nic = s;
            c.fidelity = f ? RS_FIDELITY_FLOW : RS_FIDELITY_PACKET;
            rs_net *net = rs_fx_net(&c);
            rs_time *end = s == 1 ? &one[f] : &two[f]; /* the later of the two completions */
            CU_ASSERT_EQUAL(rs_fx_send(net, 0, 8, 8 << 20, note_done, end, 0), RS_OK);
            CU_ASSERT_EQUAL(rs_fx_send(net, 1, 9, 8 << 20, note_done, end, 0), RS_OK);
            rs_fx_run_idle(net);
            rs_net_stats st;
            rs_net_stats_get(net, &st);
            CU_ASSERT_EQUAL(st.msgs_done, 2);
            CU_ASSERT_EQUAL(rs_net_msgs_relayed(net), 0); /* same rail: no PXN */
            rs_net_destroy(net);
        }
    for (int f = 0; f < 2; f++) {
        CU_ASSERT(two[f] > one[f] * 19 / 10);
        CU_ASSERT(two[f] < one[f] * 21 / 10);
    }
    rs_fx_config(&c, 64, 8, 16);
    c.gpus_per_nic = 3;
    rs_fx_refused(&c, "topology.gpus_per_nic: expected a divisor of topology.hb_size (8), got 3");
}

/* topology.df_attach=spread: 64 GPUs in domains of 8, 2 per NIC, radix
 * 16 (p 4, a 8): a domain's 4 NICs sit on 4 switches, blocks of 4
 * domains share those 4, so GPU 0 reaches its domain's next NIC (GPU 2)
 * through the group's cable and the next domain's same NIC (GPU 8) on its
 * own switch, the reverse of packed; the fifth domain starts the next
 * block. Same switches and cables, so the same bill; a block that does
 * not divide the group is refused naming the key. */
static void test_topo_dragonfly_spread(void)
{
    rs_net_config c;
    uint32_t switches[2], links[2];
    for (int sp = 0; sp < 2; sp++) {
        rs_fx_config(&c, 64, 8, 16);
        c.kind = RS_TOPO_DRAGONFLY;
        c.gpus_per_nic = 2;
        c.df_attach = sp ? RS_DFLY_SPREAD : RS_DFLY_PACKED;
        rs_net *net = rs_fx_net(&c);
        rs_net_topo_info ti;
        rs_net_topo_info_get(net, &ti);
        switches[sp] = (uint32_t)ti.switches;
        links[sp] = (uint32_t)ti.links;
        CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 2), sp ? 3 : 2);
        CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 8), sp ? 2 : 3);
        CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 24), sp ? 2 : 3);
        CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 32), 3);
        all_delivered(net, 64, 5, 7);
        rs_net_destroy(net);
    }
    CU_ASSERT_EQUAL(switches[0], switches[1]);
    CU_ASSERT_EQUAL(links[0], links[1]);
    rs_cost_input in;
    rs_cost_input_of(&in, &c);
    rs_catalog parts;
    rs_catalog_default(&parts);
    rs_bom b;
    CU_ASSERT_EQUAL_FATAL(rs_cost_dragonfly(&in, 0, 0, &parts, &b, NULL), RS_OK);
    CU_ASSERT_EQUAL(b.switches, switches[1]);
    CU_ASSERT_EQUAL(b.links, links[1]);
    c.df_group = 6; /* blocks of 4 switches in groups of 6 */
    rs_fx_refused(&c, "topology.df_attach: spread puts an HB domain's 4 NICs on as many switches of one group");
    c.df_group = 0;
    c.df_attach = (rs_dfly_attach)5;
    rs_fx_refused(&c, "topology.df_attach: expected packed or spread");
}

/* routing.dragonfly=ugal: four GPUs of one switch each send 8 MiB to the
 * next switch's four. Minimal routes share the one cable between the two
 * switches; UGAL sends the first two flows there and the next two through
 * other switches of the group (two local hops), so the four finish in
 * about half the time, at both fidelities, on the same paths. */
static void test_topo_dragonfly_ugal(void)
{
    rs_time end[2][2]; /* [ugal][fidelity] */
    for (int u = 0; u < 2; u++)
        for (int fi = 0; fi < 2; fi++) {
            rs_net_config c;
            rs_fx_config(&c, 32, 1, 16); /* p 4, a 8: one group of 8 switches */
            c.kind = RS_TOPO_DRAGONFLY;
            c.dfly_routing = u ? RS_DFLY_UGAL : RS_DFLY_MINIMAL;
            c.fidelity = fi ? RS_FIDELITY_FLOW : RS_FIDELITY_PACKET;
            rs_net *net = rs_fx_net(&c);
            end[u][fi] = 0;
            for (uint32_t g = 0; g < 4; g++)
                CU_ASSERT_EQUAL(rs_fx_send(net, g, g + 4, 8 << 20, note_done, &end[u][fi], 0), RS_OK);
            rs_fx_run_idle(net);
            rs_net_stats st;
            rs_net_stats_get(net, &st);
            CU_ASSERT_EQUAL(st.msgs_done, 4);
            rs_net_destroy(net);
        }
    for (int fi = 0; fi < 2; fi++) {
        CU_ASSERT(end[1][fi] < end[0][fi] * 6 / 10);
        CU_ASSERT(end[1][fi] > end[0][fi] * 4 / 10);
    }
    CU_ASSERT(end[1][1] < end[1][0] * 11 / 10 && end[1][0] < end[1][1] * 11 / 10);
    rs_net_config c;
    rs_fx_config(&c, 32, 1, 16);
    c.kind = RS_TOPO_DRAGONFLY;
    c.dfly_routing = (rs_dfly_routing)7;
    rs_fx_refused(&c, "routing.dragonfly: expected ugal or minimal");
}

static void test_topo_rejects_bad_config_naming_key(void)
{
    rs_net_config c;
    rs_fx_config(&c, 10, 8, 64);
    rs_fx_refused(&c, "topology.gpus");
    /* Tiers are unbounded, so only 2-port switches (a tier of them adds
     * no reach) cannot join the leaves: 8 GPUs need 8 leaves of one. */
    rs_fx_config(&c, 8, 1, 2);
    rs_fx_refused(&c, "topology.radix");
    rs_fx_config(&c, 8, 1, 8);
    c.link_gbps = 0;
    rs_fx_refused(&c, "topology.link_gbps");
    rs_fx_config(&c, 8, 1, 8);
    c.buffer_bytes = 100;
    rs_fx_refused(&c, "topology.buffer_bytes");
    rs_fx_config(&c, 8, 1, 8);
    c.mtu = 1001; /* not an InfiniBand MTU: no RoCE NIC sends such frames */
    rs_fx_refused(&c, "topology.mtu: expected an InfiniBand MTU");
}

static const rs_cu_test topo_tests[] = {
    RS_CU_TEST(test_topo_kary_fat_tree_counts),
    RS_CU_TEST(test_topo_rail_optimized_fat_tree_counts),
    RS_CU_TEST(test_topo_rail_only_counts),
    RS_CU_TEST(test_topo_hop_counts_fat_tree),
    RS_CU_TEST(test_topo_rail_only_has_no_path_between_rails),
    RS_CU_TEST(test_topo_rejects_bad_config_naming_key),
    RS_CU_TEST(test_topo_four_tier_fat_tree),
    RS_CU_TEST(test_topo_four_tier_rail_only),
    RS_CU_TEST(test_topo_dragonfly),
    RS_CU_TEST(test_topo_shared_nics),
    RS_CU_TEST(test_topo_dragonfly_ugal),
    RS_CU_TEST(test_topo_dragonfly_spread),
};

static void register_suites(void)
{
    RS_CU_SUITE("topo", topo_tests);
}

int main(void) { return rs_cu_run(register_suites); }
