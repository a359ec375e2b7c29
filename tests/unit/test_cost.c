/*
 * test_cost.c - the cost model (models/cost.c): hand-computed Clos counts,
 * equality with the topology rs_net_create builds, the one deliberate
 * difference (rail packing in rail-only), pricing, the parts table and
 * input errors.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <string.h>

#include "cost.h"
#include "cu_main.h"
#include "fixture_net.h"
#include "net.h"

static void input(rs_cost_input *in, uint32_t gpus, uint32_t hb, uint32_t radix)
{
    rs_cost_input_default(in);
    in->gpus = gpus;
    in->hb_size = hb;
    in->radix = radix;
}

static void compute(const rs_cost_input *in, const rs_catalog *parts, rs_bom *fat, rs_bom *rail)
{
    rs_err err;
    int rc = rs_cost_compute(in, parts, fat, rail, &err);
    if (rc != RS_OK)
        fprintf(stderr, "rs_cost_compute: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, RS_OK);
}

static void compute_default(uint32_t gpus, uint32_t hb, uint32_t radix, rs_bom *fat, rs_bom *rail)
{
    rs_cost_input in;
    rs_catalog p;
    input(&in, gpus, hb, radix);
    rs_catalog_default(&p);
    compute(&in, &p, fat, rail);
}

#define CU_ASSERT_NEAR(a, b) CU_ASSERT_DOUBLE_EQUAL((a), (b), 1e-6 * (fabs((double)(b)) + 1.0))

/* -- counts by hand ----------------------------------------------------- */

static void test_cost_kary_fat_tree_k16(void)
{
    /* K = 1: the classic k-ary fat tree, k = 16: k^3/4 = 1,024 hosts,
     * k^2/2 edge + k^2/2 aggregation + k^2/4 core = 320 switches,
     * 3 * 1,024 links, every link optical: 6,144 transceivers. */
    rs_bom f, r;
    compute_default(1024, 1, 16, &f, &r);
    CU_ASSERT_EQUAL(f.tiers, 3);
    CU_ASSERT_EQUAL(f.planes, 1);
    CU_ASSERT_EQUAL(f.switches, 320);
    CU_ASSERT_EQUAL(f.switches_per_tier[0], 128);
    CU_ASSERT_EQUAL(f.switches_per_tier[1], 128);
    CU_ASSERT_EQUAL(f.switches_per_tier[2], 64);
    CU_ASSERT_EQUAL(f.links, 3072);
    CU_ASSERT_EQUAL(f.nic_links, 1024);
    CU_ASSERT_EQUAL(f.optical_links, 3072);
    CU_ASSERT_EQUAL(f.transceivers, 6144);
    CU_ASSERT_EQUAL(f.switch_ports, 320 * 16);
    CU_ASSERT_EQUAL(f.switch_ports_used, 5120); /* a full fat tree uses every port */
    CU_ASSERT_NEAR(f.switch_usd, 5120 * 748.0);
    CU_ASSERT_NEAR(f.transceiver_usd, 6144 * 374.0);
    CU_ASSERT_NEAR(f.cost_usd, 5120 * 748.0 + 6144 * 374.0); /* $6,127,616 */
    CU_ASSERT_NEAR(f.power_w, 5120 * 15.0 + 6144 * 12.0);    /* 150,528 W */
    /* One rail: rail-only is the same network. */
    CU_ASSERT_EQUAL(r.switches, 320);
    CU_ASSERT_EQUAL(r.links, 3072);
    CU_ASSERT_NEAR(rs_cost_saving_pct(&f, &r), 0.0);
}

static void test_cost_64_gpus_k8_r64(void)
{
    /* Fat tree: all 64 GPUs fit in one 64-port switch, which is full
     * bisection by itself: one tier, no spine, 64 links. */
    rs_bom f, r;
    compute_default(64, 8, 64, &f, &r);
    CU_ASSERT_EQUAL(f.tiers, 1);
    CU_ASSERT_EQUAL(f.switches_per_tier[0], 1);
    CU_ASSERT_EQUAL(f.switches_per_tier[1], 0);
    CU_ASSERT_EQUAL(f.switches, 1);
    CU_ASSERT_EQUAL(f.links, 64);
    CU_ASSERT_EQUAL(f.transceivers, 128);
    CU_ASSERT_EQUAL(f.switch_ports, 64);
    CU_ASSERT_EQUAL(f.switch_ports_used, 64);
    CU_ASSERT_NEAR(f.cost_usd, 64 * 748.0 + 128 * 374.0);
    /* Rail-only: 8 rails of 8 GPUs, one switch each as simulated; 8 rails
     * x 8 ports fill one 64-port switch, so one physical switch. */
    CU_ASSERT_EQUAL(r.tiers, 1);
    CU_ASSERT_EQUAL(r.planes, 8);
    CU_ASSERT_EQUAL(r.switches_logical, 8);
    CU_ASSERT_EQUAL(r.switches, 1);
    CU_ASSERT_EQUAL(r.rails_per_switch, 8);
    CU_ASSERT_EQUAL(r.switches_per_tier[0], 1);
    CU_ASSERT_EQUAL(r.links, 64);
    CU_ASSERT_EQUAL(r.transceivers, 128);
    CU_ASSERT_EQUAL(r.switch_ports, 64);
    CU_ASSERT_EQUAL(r.switch_ports_used, 64);
    CU_ASSERT_NEAR(r.cost_usd, 64 * 748.0 + 128 * 374.0); /* $95,744 */
    CU_ASSERT_NEAR(rs_cost_saving_pct(&f, &r), 0.0); /* both one 64-port switch */
}

static void test_cost_1024_gpus_k8_r32(void)
{
    /* Fat tree: rails of 128 GPUs cut into 8 leaves of 16: 64 leaves > 32,
     * so 3 tiers: 4 pods of 16 leaves, 16 aggregation switches per pod,
     * 16 core groups of ceil(4 * 16 / 32) = 2. Links 1,024 + 64 * 16 +
     * 4 * 16 * 16. Rail-only: per rail 8 leaves + 4 spines, 2 tiers. */
    rs_bom f, r;
    compute_default(1024, 8, 32, &f, &r);
    CU_ASSERT_EQUAL(f.tiers, 3);
    CU_ASSERT_EQUAL(f.switches_per_tier[0], 64);
    CU_ASSERT_EQUAL(f.switches_per_tier[1], 64);
    CU_ASSERT_EQUAL(f.switches_per_tier[2], 32);
    CU_ASSERT_EQUAL(f.switches, 160);
    CU_ASSERT_EQUAL(f.links, 3072);
    CU_ASSERT_EQUAL(f.transceivers, 6144);
    CU_ASSERT_EQUAL(r.tiers, 2);
    CU_ASSERT_EQUAL(r.switches_per_tier[0], 64);
    CU_ASSERT_EQUAL(r.switches_per_tier[1], 32);
    CU_ASSERT_EQUAL(r.switches, 96);
    CU_ASSERT_EQUAL(r.switches_logical, 96);
    CU_ASSERT_EQUAL(r.rails_per_switch, 1);
    CU_ASSERT_EQUAL(r.links, 1024 + 8 * 8 * 16);
    CU_ASSERT_EQUAL(r.transceivers, 2 * 2048);
}

static void test_cost_16384_gpus_k8_r64(void)
{
    /* Fat tree: 8 rails x 64 leaves of 32 = 512 leaves > 64: 16 pods of
     * 32, 32 aggregation per pod (512), 32 core groups of 8 (256).
     * Rail-only: per rail 64 leaves + 32 spines (one cable each way). */
    rs_bom f, r;
    compute_default(16384, 8, 64, &f, &r);
    CU_ASSERT_EQUAL(f.tiers, 3);
    CU_ASSERT_EQUAL(f.switches_per_tier[0], 512);
    CU_ASSERT_EQUAL(f.switches_per_tier[1], 512);
    CU_ASSERT_EQUAL(f.switches_per_tier[2], 256);
    CU_ASSERT_EQUAL(f.switches, 1280);
    CU_ASSERT_EQUAL(f.links, 3 * 16384);
    CU_ASSERT_EQUAL(f.transceivers, 6 * 16384);
    CU_ASSERT_EQUAL(r.tiers, 2);
    CU_ASSERT_EQUAL(r.switches_per_tier[0], 512);
    CU_ASSERT_EQUAL(r.switches_per_tier[1], 256);
    CU_ASSERT_EQUAL(r.switches, 768);
    CU_ASSERT_EQUAL(r.links, 2 * 16384);
    CU_ASSERT_EQUAL(r.transceivers, 4 * 16384);
    /* Whole switches at $748 * 64 ports: fat 1280 switches, rail 768. */
    CU_ASSERT_NEAR(f.cost_usd, 1280 * 64 * 748.0 + 6 * 16384 * 374.0);
    CU_ASSERT_NEAR(r.cost_usd, 768 * 64 * 748.0 + 4 * 16384 * 374.0);
    double fat = 1280 * 64 * 748.0 + 6 * 16384 * 374.0, rail = 768 * 64 * 748.0 + 4 * 16384 * 374.0;
    CU_ASSERT_NEAR(rs_cost_saving_pct(&f, &r), (fat - rail) / fat * 100.0);
}

static void test_cost_non_full_tiers(void)
{
    /* 600 GPUs, K = 8, R = 32: rails of 75 = 4 leaves of 16 + one of 11.
     * Fat tree: 40 leaves > 32: pods of 16 -> 3 pods (the last one 8
     * leaves), 3 * 16 aggregation, core groups of divisor(16, ceil(48/32)
     * = 2) = 2 -> 32 core. Cables 600 + 40 * 16 + 3 * 16 * 16. Rail-only:
     * 5 leaves, divisor(16, ceil(80/32) = 3) = 4 spines of 4 parallel
     * cables per leaf; per rail 9 switches and 75 + 80 cables. */
    rs_bom f, r;
    compute_default(600, 8, 32, &f, &r);
    CU_ASSERT_EQUAL(f.switches_per_tier[0], 40);
    CU_ASSERT_EQUAL(f.switches_per_tier[1], 48);
    CU_ASSERT_EQUAL(f.switches_per_tier[2], 32);
    CU_ASSERT_EQUAL(f.switches, 120);
    CU_ASSERT_EQUAL(f.links, 2008);
    CU_ASSERT_EQUAL(f.switch_ports_used, 600 + 2 * 1408);
    CU_ASSERT(f.switch_ports_used < f.switch_ports); /* partial pod, short leaves */
    CU_ASSERT_EQUAL(r.switches_per_tier[0], 40);
    CU_ASSERT_EQUAL(r.switches_per_tier[1], 32);
    CU_ASSERT_EQUAL(r.switches, 72);
    CU_ASSERT_EQUAL(r.links, 8 * 155);
    /* 96 GPUs, K = 8, R = 16: rails of 12 (<= 16: one switch each in
     * rail-only, too big to share one); fat tree 2 leaves per rail (8 + 4
     * GPUs), 16 leaves, 8 spines of one cable from every leaf. */
    compute_default(96, 8, 16, &f, &r);
    CU_ASSERT_EQUAL(f.switches, 24);
    CU_ASSERT_EQUAL(f.links, 96 + 16 * 8);
    CU_ASSERT_EQUAL(r.switches, 8);
    CU_ASSERT_EQUAL(r.rails_per_switch, 1);
    CU_ASSERT_EQUAL(r.links, 96);
}

static void test_cost_oversubscription_shrinks_uplinks(void)
{
    /* o = 3 at R = 64: 48 GPU ports and 16 uplinks per leaf. 4,096 GPUs,
     * K = 8: rails of 512 -> 11 leaves (10 x 48 + 32); fat tree 88 leaves
     * > 64: pods of 32 -> 3 pods, 3 * 16 aggregation, core groups of
     * divisor(32, ceil(96/64) = 2) = 2 -> 32 core. */
    rs_cost_input in;
    rs_catalog p;
    rs_bom f, r;
    input(&in, 4096, 8, 64);
    in.oversubscription = 3.0;
    rs_catalog_default(&p);
    compute(&in, &p, &f, &r);
    CU_ASSERT_EQUAL(f.switches_per_tier[0], 88);
    CU_ASSERT_EQUAL(f.switches_per_tier[1], 48);
    CU_ASSERT_EQUAL(f.switches_per_tier[2], 32);
    CU_ASSERT_EQUAL(f.links, 4096 + 88 * 16 + 3 * 16 * 32);
    /* Rail-only: 11 leaves, divisor(16, ceil(176/64) = 3) = 4 spines. */
    CU_ASSERT_EQUAL(r.switches, 8 * (11 + 4));
    CU_ASSERT_EQUAL(r.links, 4096 + 8 * 11 * 16);
}

/* -- the rail-only paper's cost table ----------------------------------- */

/* Wang, Ghobadi, Shakeri, Zhang, Hasani, "Rail-only: A Low-Cost
 * High-Performance Network for Training LLMs with Trillion Parameters"
 * (arXiv 2307.12169; v1 "How to Build Low-cost Networks for Large Language
 * Models (without Sacrificing Performance)"), Table 2: switches and
 * transceivers of the rail-optimized fat tree and of rail-only. The paper
 * counts full-bisection k-ary fat trees (rail-only: one per rail) and two
 * transceivers per cable, the NIC's cable included: a fat tree of T tiers
 * has (T - 1) N / (R/2) + N / R switches and 2 T N transceivers. Only the
 * fat tree of the 32,768-GPU, HB 256, radix 32 row (7,168 switches,
 * 262,144 transceivers) could be checked against a quote of the paper; the
 * other rows are that construction's counts (docs/cost.md, "The rail-only
 * paper's Table 2", says which is which). */
typedef struct paper_row {
    uint32_t gpus, hb, radix;
    uint32_t ft_tiers, ro_tiers;
    uint64_t ft_switches, ft_transceivers, ro_switches, ro_transceivers;
} paper_row;

static const paper_row table2[] = {
    { 16384, 8, 64, 3, 2, 1280, 98304, 768, 65536 },
    { 32768, 8, 128, 3, 2, 1280, 196608, 768, 131072 },
    { 65536, 8, 128, 3, 2, 2560, 393216, 1536, 262144 },
    { 32768, 256, 32, 4, 2, 7168, 262144, 3072, 131072 },
    { 65536, 256, 32, 4, 2, 14336, 524288, 6144, 262144 },
    { 32768, 256, 64, 3, 2, 2560, 196608, 1536, 131072 },
    { 32768, 256, 128, 3, 1, 1280, 196608, 256, 65536 },
};

/* The paper's construction for n hosts at radix R: the fewest tiers T with
 * 2 (R/2)^T >= n (one switch when n <= R), (T - 1) n / (R/2) + n / R
 * switches (rounded up to one), 2 T n transceivers. */
static void kary(uint64_t n, uint64_t R, uint32_t *tiers, uint64_t *sw, uint64_t *tx)
{
    uint64_t reach = R;
    uint32_t T = 1;
    while (reach < n) {
        reach = T == 1 ? R * R / 2 : reach * (R / 2);
        T++;
    }
    *tiers = T;
    *sw = (T - 1) * n / (R / 2) + (n + R - 1) / R;
    *tx = 2 * T * n;
}

static void test_cost_matches_rail_only_paper_table2(void)
{
    for (size_t i = 0; i < sizeof table2 / sizeof table2[0]; i++) {
        const paper_row *t = &table2[i];
        rs_bom f, r;
        compute_default(t->gpus, t->hb, t->radix, &f, &r);
        if (f.switches != t->ft_switches || r.switches != t->ro_switches)
            fprintf(stderr, "\nTable 2 row %u GPUs, HB %u, radix %u: fat tree %llu, rail-only %llu switches\n",
                    t->gpus, t->hb, t->radix, (unsigned long long)f.switches, (unsigned long long)r.switches);
        CU_ASSERT_EQUAL(f.tiers, t->ft_tiers);
        CU_ASSERT_EQUAL(f.switches, t->ft_switches);
        CU_ASSERT_EQUAL(f.transceivers, t->ft_transceivers);
        CU_ASSERT_EQUAL(r.tiers, t->ro_tiers);
        CU_ASSERT_EQUAL(r.switches, t->ro_switches);
        CU_ASSERT_EQUAL(r.switches_logical, t->ro_switches); /* no rail shares a switch here */
        CU_ASSERT_EQUAL(r.transceivers, t->ro_transceivers);
        /* The rows are the paper's construction: the fat tree over all
         * GPUs, rail-only one per rail of gpus / hb. */
        uint32_t T;
        uint64_t sw, tx;
        kary(t->gpus, t->radix, &T, &sw, &tx);
        CU_ASSERT_EQUAL(T, t->ft_tiers);
        CU_ASSERT_EQUAL(sw, t->ft_switches);
        CU_ASSERT_EQUAL(tx, t->ft_transceivers);
        kary(t->gpus / t->hb, t->radix, &T, &sw, &tx);
        CU_ASSERT_EQUAL(T, t->ro_tiers);
        CU_ASSERT_EQUAL(sw * t->hb, t->ro_switches);
        CU_ASSERT_EQUAL(tx * t->hb, t->ro_transceivers);
    }
}

/* -- equality with the simulator's topology ----------------------------- */

typedef struct sim_case {
    uint32_t gpus, hb, radix;
    double o;
} sim_case;

static void check_against_sim(const sim_case *sc, int pack)
{
    rs_cost_input in;
    rs_catalog p;
    rs_bom bom[2];
    input(&in, sc->gpus, sc->hb, sc->radix);
    in.oversubscription = sc->o;
    in.pack_rails = pack;
    rs_catalog_default(&p);
    compute(&in, &p, &bom[0], &bom[1]);
    for (int kind = 0; kind < 2; kind++) {
        rs_net_config c;
        rs_fx_config(&c, sc->gpus, sc->hb, sc->radix);
        c.kind = kind ? RS_TOPO_RAIL_ONLY : RS_TOPO_FAT_TREE;
        c.oversubscription = sc->o;
        rs_net *net = rs_fx_net(&c);
        rs_net_topo_info ti;
        rs_net_topo_info_get(net, &ti);
        const rs_bom *b = &bom[kind];
        if (b->switches_logical != ti.switches || b->links != ti.links || b->tiers != ti.tiers ||
            b->planes != ti.planes)
            fprintf(stderr, "\n%s N=%u K=%u R=%u o=%g: cost %llu switches %llu links %u tiers, "
                    "simulator %u %u %u\n", kind ? "rail-only" : "fat-tree", sc->gpus, sc->hb,
                    sc->radix, sc->o, (unsigned long long)b->switches_logical,
                    (unsigned long long)b->links, b->tiers, ti.switches, ti.links, ti.tiers);
        CU_ASSERT_EQUAL(b->switches_logical, ti.switches);
        CU_ASSERT_EQUAL(b->links, ti.links);
        CU_ASSERT_EQUAL(b->tiers, ti.tiers);
        CU_ASSERT_EQUAL(b->planes, ti.planes);
        /* Without packing (and always for the fat tree) physical = simulated. */
        if (!pack || kind == 0)
            CU_ASSERT_EQUAL(b->switches, ti.switches);
        /* The network reports the physical count the cost model gives with
         * packing (the default), which railsim run prints. */
        if (pack)
            CU_ASSERT_EQUAL(b->switches, ti.switches_physical);
        if (kind == 0)
            CU_ASSERT_EQUAL(ti.switches_physical, ti.switches);
        /* Cabled switch ports: every switch-side port the simulator made. */
        uint64_t sw_ports = 0;
        for (uint32_t i = 0; i < rs_net_port_count(net); i++) {
            rs_net_port_info pi;
            CU_ASSERT_EQUAL_FATAL(rs_net_port_info_get(net, i, &pi), RS_OK);
            if (strncmp(pi.name, "gpu", 3) != 0 && strncmp(pi.name, "nvs", 3) != 0)
                sw_ports++;
        }
        CU_ASSERT_EQUAL(b->switch_ports_used, sw_ports);
        rs_net_destroy(net);
    }
}

static const sim_case sim_cases[] = {
    { 64, 8, 64, 1 },      /* rail-only rails packed 8 per switch */
    { 256, 8, 64, 1 },     /* packed 2 per switch */
    { 512, 8, 64, 1 },     /* rails of exactly R: one per switch */
    { 1024, 8, 64, 1 },
    { 1024, 8, 32, 1 },
    { 1024, 1, 16, 1 },    /* k-ary fat tree, k = 16 */
    { 16, 1, 4, 1 },       /* k = 4 */
    { 16, 1, 16, 1 },      /* one switch */
    { 8, 8, 64, 1 },       /* one HB domain */
    { 600, 8, 32, 1 },     /* partial leaves and pods */
    { 96, 8, 16, 1 },
    { 4096, 8, 64, 3 },    /* oversubscribed leaves */
    { 2048, 8, 32, 2 },
    { 288, 72, 64, 1 },    /* NVL72 domains: 72 rails of 4 */
    { 16384, 8, 64, 1 },
    { 32, 1, 4, 1 },       /* four tiers: k = 4, 2 (k/2)^4 hosts */
    { 24, 1, 4, 1 },       /* four tiers, partial blocks and top */
    { 64, 1, 4, 1 },       /* five tiers */
    { 512, 8, 8, 1 },      /* fat tree four tiers, rail-only three */
    { 64, 2, 4, 1 },       /* rail-only rails of four tiers */
    { 300, 1, 8, 3 },      /* four tiers over oversubscribed leaves (2 uplinks) */
};

static void test_cost_counts_equal_simulated_topology(void)
{
    for (size_t i = 0; i < sizeof sim_cases / sizeof sim_cases[0]; i++) {
        check_against_sim(&sim_cases[i], 1);
        check_against_sim(&sim_cases[i], 0);
    }
}

/* -- the deliberate difference: rail packing ---------------------------- */

static void test_cost_rail_only_packs_small_rails(void)
{
    rs_cost_input in;
    rs_catalog p;
    rs_bom f, r;
    rs_catalog_default(&p);
    /* 256 GPUs, K = 8, R = 64: rails of 32, two per switch: 4 physical
     * switches for the simulator's 8; cables and cabled ports unchanged;
     * installed ports (and so price) halve. */
    input(&in, 256, 8, 64);
    compute(&in, &p, &f, &r);
    CU_ASSERT_EQUAL(r.rails_per_switch, 2);
    CU_ASSERT_EQUAL(r.switches, 4);
    CU_ASSERT_EQUAL(r.switches_logical, 8);
    CU_ASSERT_EQUAL(r.links, 256);
    CU_ASSERT_EQUAL(r.switch_ports_used, 256);
    CU_ASSERT_EQUAL(r.switch_ports, 4 * 64);
    CU_ASSERT_NEAR(r.switch_usd, 256 * 748.0);
    in.pack_rails = 0;
    compute(&in, &p, &f, &r);
    CU_ASSERT_EQUAL(r.rails_per_switch, 1);
    CU_ASSERT_EQUAL(r.switches, 8);
    CU_ASSERT_EQUAL(r.switch_ports, 8 * 64);
    CU_ASSERT_NEAR(r.switch_usd, 512 * 748.0);
    /* Per-port accounting (whole_switches = 0) prices cabled ports only,
     * so packing changes the switch count but not the price. */
    CU_ASSERT_EQUAL(rs_catalog_set(&p, "whole_switches", 0, NULL), RS_OK);
    compute(&in, &p, &f, &r);
    CU_ASSERT_NEAR(r.switch_usd, 256 * 748.0);
    in.pack_rails = 1;
    compute(&in, &p, &f, &r);
    CU_ASSERT_NEAR(r.switch_usd, 256 * 748.0);

    /* Rails of exactly R GPUs, or of R/2 + 1, cannot share a switch. */
    rs_catalog_default(&p);
    input(&in, 512, 8, 64);
    compute(&in, &p, &f, &r);
    CU_ASSERT_EQUAL(r.rails_per_switch, 1);
    CU_ASSERT_EQUAL(r.switches, 8);
    input(&in, 8 * 33, 8, 64);
    compute(&in, &p, &f, &r);
    CU_ASSERT_EQUAL(r.switches, 8);
    /* Tiny rails: all 8 rails of 2 GPUs in one switch (not 32 "rails"). */
    input(&in, 16, 8, 64);
    compute(&in, &p, &f, &r);
    CU_ASSERT_EQUAL(r.rails_per_switch, 8);
    CU_ASSERT_EQUAL(r.switches, 1);
    /* 72 rails of 4 GPUs (NVL72): 16 per 64-port switch -> 5 switches. */
    input(&in, 288, 72, 64);
    compute(&in, &p, &f, &r);
    CU_ASSERT_EQUAL(r.rails_per_switch, 16);
    CU_ASSERT_EQUAL(r.switches, 5);
    CU_ASSERT_EQUAL(r.switches_logical, 72);
    /* Rails that need their own Clos are never packed. */
    input(&in, 1024, 8, 64);
    compute(&in, &p, &f, &r);
    CU_ASSERT_EQUAL(r.rails_per_switch, 1);
    CU_ASSERT_EQUAL(r.switches, r.switches_logical);
    /* The fat tree is never packed. */
    CU_ASSERT_EQUAL(f.rails_per_switch, 0);
    CU_ASSERT_EQUAL(f.switches, f.switches_logical);
}

/* -- pricing ------------------------------------------------------------ */

static void test_cost_nic_copper_drops_nic_transceivers(void)
{
    /* 128 GPUs, K = 8, R = 64. Fat tree: 8 rail leaves of 16 GPUs with 32
     * uplinks each, 4 spines (8 parallel cables per leaf): 128 NIC cables,
     * 256 switch cables. Rail-only: rails of 16 packed 4 per switch. */
    rs_cost_input in;
    rs_catalog p;
    rs_bom f, r;
    rs_catalog_default(&p);
    input(&in, 128, 8, 64);
    in.nic_copper = 1;
    compute(&in, &p, &f, &r);
    CU_ASSERT_EQUAL(f.links, 384);
    CU_ASSERT_EQUAL(f.copper_links, 128);
    CU_ASSERT_EQUAL(f.optical_links, 256);
    CU_ASSERT_EQUAL(f.transceivers, 512);
    CU_ASSERT_NEAR(f.cable_usd, 128 * 150.0);
    CU_ASSERT_NEAR(f.cost_usd, 12 * 64 * 748.0 + 512 * 374.0 + 128 * 150.0);
    CU_ASSERT_EQUAL(r.switches, 2);
    CU_ASSERT_EQUAL(r.transceivers, 0);
    CU_ASSERT_EQUAL(r.copper_links, 128);
    CU_ASSERT_NEAR(r.cost_usd, 2 * 64 * 748.0 + 128 * 150.0);
    CU_ASSERT_NEAR(r.power_w, 2 * 64 * 15.0);
}

static void test_cost_every_part_is_priced(void)
{
    /* One unit of each price and power on a known bill: 128 GPUs, K = 8,
     * R = 64, fat tree: 12 switches, 768 ports (640 cabled), 384 optical
     * cables, 768 transceivers. */
    rs_cost_input in;
    rs_catalog p;
    rs_bom f;
    input(&in, 128, 8, 64);
    const struct { const char *key; double usd, w; } want[] = {
        { "switch_port_usd", 768, 0 }, { "switch_port_w", 0, 768 },
        { "switch_usd", 12, 0 },       { "switch_w", 0, 12 },
        { "transceiver_usd", 768, 0 }, { "transceiver_w", 0, 768 },
        { "fiber_usd", 384, 0 },       { "dac_usd", 0, 0 }, { "dac_w", 0, 0 },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        memset(&p, 0, sizeof p);
        p.whole_switches = 1;
        CU_ASSERT_EQUAL(rs_catalog_set(&p, want[i].key, 1.0, NULL), RS_OK);
        compute(&in, &p, &f, NULL);
        CU_ASSERT_NEAR(f.cost_usd, want[i].usd);
        CU_ASSERT_NEAR(f.power_w, want[i].w);
    }
    memset(&p, 0, sizeof p);
    p.switch_port_usd = 1;
    p.switch_port_w = 1; /* whole_switches = 0: cabled ports only */
    compute(&in, &p, &f, NULL);
    CU_ASSERT_NEAR(f.cost_usd, 640);
    CU_ASSERT_NEAR(f.power_w, 640);
    CU_ASSERT_NEAR(f.cost_usd, f.switch_usd + f.transceiver_usd + f.cable_usd);
}

static void test_cost_saving_pct_formula(void)
{
    rs_bom f, r;
    memset(&f, 0, sizeof f);
    memset(&r, 0, sizeof r);
    f.cost_usd = 200;
    r.cost_usd = 150;
    f.power_w = 10;
    r.power_w = 12;
    CU_ASSERT_NEAR(rs_cost_saving_pct(&f, &r), 25.0);
    CU_ASSERT_NEAR(rs_cost_power_saving_pct(&f, &r), -20.0);
    f.cost_usd = 0;
    CU_ASSERT_NEAR(rs_cost_saving_pct(&f, &r), 0.0);
}

/* The numbers of docs/cost.md's worked example. */
static void test_cost_worked_example_1024_gpus(void)
{
    rs_bom f, r;
    /* R = 64: rails of 128 need their own 2-tier Clos (4 leaves + 2
     * spines); the fat tree is 32 leaves + 16 spines: the same bill. */
    compute_default(1024, 8, 64, &f, &r);
    CU_ASSERT_EQUAL(f.switches, 48);
    CU_ASSERT_EQUAL(f.links, 2048);
    CU_ASSERT_NEAR(f.cost_usd, 3829760.0);
    CU_ASSERT_NEAR(f.power_w, 95232.0);
    CU_ASSERT_EQUAL(r.switches, 48);
    CU_ASSERT_EQUAL(r.links, 2048);
    CU_ASSERT_NEAR(rs_cost_saving_pct(&f, &r), 0.0);
    /* R = 128: a rail of 128 is one switch; the fat tree keeps a spine. */
    compute_default(1024, 8, 128, &f, &r);
    CU_ASSERT_EQUAL(f.switches, 24);
    CU_ASSERT_EQUAL(f.switches_per_tier[1], 8);
    CU_ASSERT_EQUAL(f.links, 2048);
    CU_ASSERT_EQUAL(f.transceivers, 4096);
    CU_ASSERT_NEAR(f.cost_usd, 24 * 128 * 748.0 + 4096 * 374.0); /* $3,829,760 */
    CU_ASSERT_NEAR(f.power_w, 24 * 128 * 15.0 + 4096 * 12.0);    /* 95,232 W */
    CU_ASSERT_EQUAL(r.switches, 8);
    CU_ASSERT_EQUAL(r.links, 1024);
    CU_ASSERT_EQUAL(r.transceivers, 2048);
    CU_ASSERT_NEAR(r.cost_usd, 8 * 128 * 748.0 + 2048 * 374.0);  /* $1,531,904 */
    CU_ASSERT_NEAR(r.power_w, 8 * 128 * 15.0 + 2048 * 12.0);     /* 39,936 W */
    CU_ASSERT_NEAR(rs_cost_saving_pct(&f, &r), 60.0);
}

/* -- parts table -------------------------------------------------------- */

static void test_parts_defaults_and_keys(void)
{
    rs_catalog p;
    rs_catalog_default(&p);
    CU_ASSERT_NEAR(p.switch_port_usd, 748.0);
    CU_ASSERT_NEAR(p.transceiver_usd, 374.0);
    CU_ASSERT_NEAR(p.switch_port_w, 15.0);
    CU_ASSERT_NEAR(p.transceiver_w, 12.0);
    CU_ASSERT_NEAR(p.whole_switches, 1.0);
    const char *const *keys = rs_catalog_keys();
    size_t n = 0;
    for (; keys[n]; n++) {
        double v = -1;
        CU_ASSERT_EQUAL(rs_catalog_get(&p, keys[n], &v), RS_OK);
        CU_ASSERT(v >= 0.0);
        /* Each key reaches its own field. */
        rs_catalog q = p;
        int flag = strcmp(keys[n], "whole_switches") == 0; /* 0 or 1 only */
        CU_ASSERT_EQUAL(rs_catalog_set(&q, keys[n], 12345.0, NULL), flag ? RS_EINVAL : RS_OK);
        if (!flag) {
            CU_ASSERT_EQUAL(rs_catalog_get(&q, keys[n], &v), RS_OK);
            CU_ASSERT_NEAR(v, 12345.0);
            CU_ASSERT_EQUAL(memcmp(&q, &p, sizeof p) != 0, 1);
        }
    }
    CU_ASSERT_EQUAL(n, sizeof(rs_catalog) / sizeof(double));
}

static void test_parts_set_rejects_bad_keys_and_values(void)
{
    rs_catalog p, before;
    rs_catalog_default(&p);
    before = p;
    rs_err err;
    CU_ASSERT_EQUAL(rs_catalog_set(&p, "switch_price", 1.0, &err), RS_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "parts.switch_price"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "switch_port_usd")); /* lists the known keys */
    CU_ASSERT_EQUAL(rs_catalog_set(&p, "transceiver_usd", -1.0, &err), RS_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "parts.transceiver_usd"));
    CU_ASSERT_EQUAL(rs_catalog_set(&p, "transceiver_w", NAN, &err), RS_EINVAL);
    CU_ASSERT_EQUAL(rs_catalog_set(&p, "transceiver_w", INFINITY, &err), RS_EINVAL);
    CU_ASSERT_EQUAL(rs_catalog_set(&p, "whole_switches", 0.5, &err), RS_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "parts.whole_switches"));
    CU_ASSERT_EQUAL(rs_catalog_set(&p, NULL, 1.0, NULL), RS_EINVAL);
    CU_ASSERT_EQUAL(memcmp(&p, &before, sizeof p), 0);
    double v;
    CU_ASSERT_EQUAL(rs_catalog_get(&p, "nope", &v), RS_EINVAL);
    CU_ASSERT_EQUAL(rs_catalog_set(&p, "switch_port_usd", 0.0, &err), RS_OK);
    CU_ASSERT_NEAR(p.switch_port_usd, 0.0);
}

/* -- input errors ------------------------------------------------------- */

static void expect_error(const rs_cost_input *in, const char *key)
{
    rs_catalog p;
    rs_catalog_default(&p);
    rs_bom f, r;
    memset(&f, 0xab, sizeof f);
    rs_bom untouched = f;
    rs_err err;
    rs_err_clear(&err);
    CU_ASSERT_EQUAL(rs_cost_compute(in, &p, &f, &r, &err), RS_EINVAL);
    if (!strstr(err.msg, key))
        fprintf(stderr, "\nexpected %s in: %s\n", key, err.msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, key));
    CU_ASSERT_EQUAL(memcmp(&f, &untouched, sizeof f), 0);
}

static void test_cost_rejects_bad_input_naming_key(void)
{
    rs_cost_input in;
    input(&in, 0, 8, 64);
    expect_error(&in, "topology.gpus");
    input(&in, 100, 8, 64);
    expect_error(&in, "topology.gpus");
    input(&in, 64, 0, 64);
    expect_error(&in, "topology.gpus");
    input(&in, 65536 * 2, 65536, 64);
    expect_error(&in, "topology.hb_size");
    input(&in, 64, 8, 63);
    expect_error(&in, "topology.radix");
    input(&in, 64, 8, 0);
    expect_error(&in, "topology.radix");
    input(&in, 64, 8, 65538);
    expect_error(&in, "topology.radix");
    input(&in, 64, 8, 64);
    in.nic_gbps = 0;
    expect_error(&in, "topology.nic_gbps");
    in.nic_gbps = NAN;
    expect_error(&in, "topology.nic_gbps");
    input(&in, 64, 8, 64);
    in.oversubscription = 0.5;
    expect_error(&in, "topology.oversubscription");
    in.oversubscription = 65;
    expect_error(&in, "topology.oversubscription");
}

static void test_cost_rejects_radix_too_small_like_simulator(void)
{
    /* Tiers are unbounded (each adds R/2 of reach), so the one radix that
     * cannot join more leaves is 2: a tier of 2-port switches joins at
     * most 2. 8 GPUs in leaves of one at R = 2: both the cost model and
     * the simulator refuse, naming topology.radix. (Before tiers were
     * unbounded this test used 16,384 GPUs at R = 16, refused in three
     * tiers; that is a four-tier network now.) */
    rs_cost_input in;
    input(&in, 8, 1, 2);
    expect_error(&in, "topology.radix");
    rs_net_config c;
    rs_fx_config(&c, 8, 1, 2);
    c.kind = RS_TOPO_RAIL_ONLY;
    rs_fx_refused(&c, "topology.radix");
    /* 4 GPUs in 2 domains at R = 2: each rail of 2 is one switch, the fat
     * tree needs 4 leaves of one. Asking for rail-only alone succeeds. */
    rs_catalog p;
    rs_catalog_default(&p);
    rs_bom r;
    input(&in, 4, 2, 2);
    expect_error(&in, "fat tree");
    CU_ASSERT_EQUAL(rs_cost_compute(&in, &p, NULL, &r, NULL), RS_OK);
    CU_ASSERT_EQUAL(r.tiers, 1);
    CU_ASSERT_EQUAL(r.switches_logical, 2);
    /* What used to be refused is counted: rails of 2,048 are 256 leaves
     * of 8, four tiers (up to 16 * 8 * 8 = 1,024 leaves); the fat tree's
     * 2,048 leaves need five (up to 8,192). */
    input(&in, 16384, 8, 16);
    rs_bom f;
    compute(&in, &p, &f, &r);
    CU_ASSERT_EQUAL(f.tiers, 5);
    CU_ASSERT_EQUAL(r.tiers, 4);
}

static const rs_cu_test cost_tests[] = {
    RS_CU_TEST(test_cost_kary_fat_tree_k16),
    RS_CU_TEST(test_cost_64_gpus_k8_r64),
    RS_CU_TEST(test_cost_1024_gpus_k8_r32),
    RS_CU_TEST(test_cost_16384_gpus_k8_r64),
    RS_CU_TEST(test_cost_non_full_tiers),
    RS_CU_TEST(test_cost_oversubscription_shrinks_uplinks),
    RS_CU_TEST(test_cost_matches_rail_only_paper_table2),
    RS_CU_TEST(test_cost_counts_equal_simulated_topology),
    RS_CU_TEST(test_cost_rail_only_packs_small_rails),
    RS_CU_TEST(test_cost_nic_copper_drops_nic_transceivers),
    RS_CU_TEST(test_cost_every_part_is_priced),
    RS_CU_TEST(test_cost_saving_pct_formula),
    RS_CU_TEST(test_cost_worked_example_1024_gpus),
    RS_CU_TEST(test_parts_defaults_and_keys),
    RS_CU_TEST(test_parts_set_rejects_bad_keys_and_values),
    RS_CU_TEST(test_cost_rejects_bad_input_naming_key),
    RS_CU_TEST(test_cost_rejects_radix_too_small_like_simulator),
};

static void register_suites(void) { RS_CU_SUITE("cost", cost_tests); }

int main(void) { return rs_cu_run(register_suites); }
