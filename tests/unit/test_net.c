/*
 * test_net.c - the packet-level network (models/): topology counts and
 * paths, exact timing against an independent store-and-forward model,
 * fairness, ECMP behaviour, HB-domain forwarding, loss recovery and
 * packet conservation.
 */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "cu_main.h"
#include "fixture_net.h"
#include "net.h"
#include "netint.h" /* wire overhead constants (RS_WIRE_*) and entities, to compute expected times */
#include "rng.h"

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
    rs_parts parts;
    rs_parts_default(&parts);
    rs_bom fat, rail;
    CU_ASSERT_EQUAL_FATAL(rs_cost_compute(&in, &parts, &fat, &rail, NULL), RS_OK);
    const rs_bom *b = kind == RS_TOPO_FAT_TREE ? &fat : &rail;
    CU_ASSERT_EQUAL(b->tiers, ti.tiers);
    CU_ASSERT_EQUAL(b->switches_logical, ti.switches);
    CU_ASSERT_EQUAL(b->links, ti.links);

    uint32_t np = rs_net_port_count(net);
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
                CU_ASSERT_EQUAL(rs_net_send(net, a, d, 8192, NULL, NULL, 0), RS_OK);
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

/* -- exact timing ------------------------------------------------------- */

/* Independent model of a message crossing `hops` store-and-forward links:
 * packet k of wire size w[k] starts on link i when it has fully arrived
 * and link i has finished packet k-1. Returns the last packet's arrival. */
static rs_time pipeline_time(const uint32_t *w, uint32_t n, const uint64_t *rate,
                             const rs_time *prop, uint32_t hops)
{
    rs_time arr[64], end_prev;
    CU_ASSERT_FATAL(n <= 64);
    for (uint32_t k = 0; k < n; k++)
        arr[k] = 0;
    for (uint32_t i = 0; i < hops; i++) {
        end_prev = 0;
        for (uint32_t k = 0; k < n; k++) {
            rs_time start = arr[k] > end_prev ? arr[k] : end_prev;
            end_prev = start + rs_ser_time(w[k], rate[i]);
            arr[k] = end_prev + prop[i];
        }
    }
    return arr[n - 1];
}

/* Wire sizes of a RoCE WRITE of `bytes` at `mtu`. */
static uint32_t roce_wire(uint64_t bytes, uint32_t mtu, uint32_t *w)
{
    uint32_t n = (uint32_t)((bytes + mtu - 1) / mtu);
    for (uint32_t k = 0; k < n; k++) {
        uint64_t pl = bytes - (uint64_t)k * mtu < mtu ? bytes - (uint64_t)k * mtu : mtu;
        w[k] = (uint32_t)pl + RS_WIRE_ROCE + (k == 0 ? RS_WIRE_RETH : 0);
    }
    return n;
}

static void test_single_packet_one_switch_exact(void)
{
    rs_net_config c;
    rs_fx_config(&c, 2, 1, 4);
    c.transport = RS_TRANSPORT_IDEAL;
    rs_net *net = rs_fx_net(&c);
    CU_ASSERT_EQUAL(rs_net_send(net, 0, 1, 1000, NULL, NULL, 0), RS_OK);
    rs_fx_run_idle(net);
    /* 1000 B + 82 B RoCE/Ethernet overhead + 16 B RETH = 1098 B = 21960 ps
     * at 400 Gb/s, twice; 500 ns per link, 500 ns switch pipeline. */
    CU_ASSERT_EQUAL(rs_fx_only_fct(net), 2 * 21960 + 2 * 500000 + 500000);
    rs_net_destroy(net);
}

static void multihop_case(rs_transport_kind tr, double nic_gbps)
{
    rs_net_config c;
    rs_fx_config(&c, 16, 1, 4); /* k = 4 fat tree: GPU 0 -> 15 crosses 6 links */
    c.transport = tr;
    c.nic_gbps = nic_gbps;
    c.link_latency_ns = 700;
    c.switch_latency_ns = 300;
    rs_net *net = rs_fx_net(&c);
    uint64_t bytes = 10 * 4096 + 100;
    CU_ASSERT_EQUAL(rs_net_send(net, 0, 15, bytes, NULL, NULL, 0), RS_OK);
    rs_fx_run_idle(net);
    uint32_t w[64];
    uint32_t n = roce_wire(bytes, 4096, w);
    uint64_t nic = (uint64_t)(nic_gbps * 1e9), sw = 400000000000ULL;
    const uint64_t rate[6] = { nic, sw, sw, sw, sw, nic };
    const rs_time prop[6] = { 1000000, 1000000, 1000000, 1000000, 1000000, 700000 };
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 15), 6);
    CU_ASSERT_EQUAL(rs_fx_only_fct(net), pipeline_time(w, n, rate, prop, 6));
    rs_net_destroy(net);
}

static void test_multihop_message_exact_ideal(void) { multihop_case(RS_TRANSPORT_IDEAL, 400); }
static void test_multihop_message_exact_roce(void) { multihop_case(RS_TRANSPORT_ROCE, 400); }
static void test_multihop_message_exact_slow_nic(void) { multihop_case(RS_TRANSPORT_ROCE, 100); }

static void test_hb_transfer_exact_with_rounding(void)
{
    rs_net_config c;
    rs_fx_config(&c, 8, 8, 64);
    c.hb_latency_ns = 333.333; /* 333333 ps: 166666 + 166667 */
    rs_net *net = rs_fx_net(&c);
    uint64_t bytes = 100000;
    CU_ASSERT_EQUAL(rs_net_send(net, 2, 5, bytes, NULL, NULL, 0), RS_OK);
    rs_fx_run_idle(net);
    const uint32_t w[2] = { 65536 + RS_WIRE_HB, 34464 + RS_WIRE_HB };
    const uint64_t rate[2] = { 3600000000000ULL, 3600000000000ULL };
    const rs_time prop[2] = { 166666, 166667 };
    CU_ASSERT_EQUAL(rs_fx_only_fct(net), pipeline_time(w, 2, rate, prop, 2));
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.hb_bytes, bytes);
    CU_ASSERT_EQUAL(st.nic_bytes, 0);
    rs_net_destroy(net);
}

/* rs_net_send_posted: `left` runs once, when the NIC starts the
 * message's last frame, before `done`. A message posted from
 * there follows the first back to back: on an idle path it ends exactly
 * its own lone time after the first left. */
struct posted {
    rs_time left[2], done[2];
    int lefts, dones;
};

static void posted_done(void *ctx, rs_net *net, uint64_t tag)
{
    struct posted *p = ctx;
    p->done[tag] = rs_net_now(net);
    p->dones++;
}

static void posted_left(void *ctx, rs_net *net, uint64_t tag)
{
    struct posted *p = ctx;
    p->left[tag] = rs_net_now(net);
    p->lefts++;
    if (tag == 0)
        CU_ASSERT_EQUAL(rs_net_send_posted(net, 0, 1, 10 * 4096 + 100, posted_done, posted_left, p, 1, NULL), RS_OK);
}

static void test_posted_send_leaves_then_the_next_follows_back_to_back(void)
{
    rs_net_config c;
    rs_fx_config(&c, 2, 1, 4);
    c.transport = RS_TRANSPORT_IDEAL;
    rs_net *net = rs_fx_net(&c);
    uint64_t bytes = 10 * 4096 + 100;
    struct posted p = { 0 };
    CU_ASSERT_EQUAL_FATAL(rs_net_send_posted(net, 0, 1, bytes, posted_done, posted_left, &p, 0, NULL), RS_OK);
    rs_fx_run_idle(net);
    uint32_t w[64];
    uint32_t n = roce_wire(bytes, 4096, w);
    rs_time wire = 0;
    for (uint32_t i = 0; i < n; i++)
        wire += rs_ser_time(w[i], 400000000000ULL);
    const uint64_t rate[2] = { 400000000000ULL, 400000000000ULL };
    const rs_time prop[2] = { 1000000, 500000 };
    rs_time alone = pipeline_time(w, n, rate, prop, 2);
    CU_ASSERT_EQUAL(p.lefts, 2);
    CU_ASSERT_EQUAL(p.dones, 2);
    rs_time last = rs_ser_time(w[n - 1], 400000000000ULL);
    CU_ASSERT_EQUAL(p.left[0], wire - last);
    CU_ASSERT(p.left[0] < p.done[0]);
    CU_ASSERT_EQUAL(p.done[0], alone);
    CU_ASSERT_EQUAL(p.left[1], 2 * wire - last);
    CU_ASSERT_EQUAL(p.done[1], wire + alone);
    rs_net_destroy(net);
}

static void test_send_to_self_completes_at_once(void)
{
    rs_net_config c;
    rs_fx_config(&c, 8, 8, 64);
    rs_net *net = rs_fx_net(&c);
    CU_ASSERT_EQUAL(rs_net_send(net, 3, 3, 12345, NULL, NULL, 0), RS_OK);
    CU_ASSERT_EQUAL(rs_net_send(net, 3, 8, 1, NULL, NULL, 0), RS_EINVAL);
    rs_fx_run_idle(net);
    CU_ASSERT_EQUAL(rs_fx_only_fct(net), 0);
    rs_net_destroy(net);
}

/* A timer records when it ran and the entity whose event it was. */
typedef struct timer_seen {
    rs_time at[4];
    uint32_t ent[4], n;
} timer_seen;

static void timer_note(void *ctx, rs_net *net, uint64_t arg)
{
    (void)arg;
    timer_seen *ts = ctx;
    if (ts->n < 4) {
        ts->at[ts->n] = rs_net_now(net);
        ts->ent[ts->n++] = (uint32_t)(rs_sim_key(rs_net_sim(net)) >> 40);
    }
}

/* rs_net_at runs as the driver's event, rs_net_at_gpu as the GPU node's;
 * a GPU out of range stops the run with RS_EINTERNAL. */
static void test_gpu_timer_is_an_event_of_its_node(void)
{
    rs_net_config c;
    rs_fx_config(&c, 8, 8, 64);
    rs_net *net = rs_fx_net(&c);
    timer_seen ts = { 0 };
    rs_net_at(net, 1000, timer_note, &ts, 0);
    rs_net_at_gpu(net, 5, 2000, timer_note, &ts, 0);
    rs_net_at_gpu(net, 0, 3000, timer_note, &ts, 0);
    /* rs_sim_key is the running event's key under rs_sim_run_before, the
     * loop of a partitioned run. */
    CU_ASSERT_EQUAL(rs_sim_run_before(rs_net_sim(net), 4000), RS_OK);
    CU_ASSERT_EQUAL_FATAL(ts.n, 3);
    CU_ASSERT_EQUAL(ts.at[0], 1000);
    CU_ASSERT_EQUAL(ts.at[1], 2000);
    CU_ASSERT_EQUAL(ts.at[2], 3000);
    CU_ASSERT_EQUAL(ts.ent[0], net->ent_driver);
    CU_ASSERT_EQUAL(ts.ent[1], net->nodes[5].entity);
    CU_ASSERT_EQUAL(ts.ent[2], net->nodes[0].entity);
    CU_ASSERT_NOT_EQUAL(ts.ent[1], ts.ent[2]);
    rs_net_destroy(net);

    net = rs_fx_net(&c);
    ts.n = 0;
    rs_net_at_gpu(net, 8, 1000, timer_note, &ts, 0); /* 8 GPUs: 0..7 */
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_EINTERNAL);
    CU_ASSERT_EQUAL(ts.n, 0);
    rs_net_destroy(net);
}

/* -- memory follows what is in flight ---------------------------------- */

/* Each GPU sends `left` messages to the next one, one at a time: a done
 * callback starts the next. */
typedef struct chain {
    uint32_t gpus, left[16];
    uint64_t bytes;
} chain;

static void chain_next(void *ctx, rs_net *net, uint64_t src)
{
    chain *ch = ctx;
    if (ch->left[src]-- > 0)
        CU_ASSERT_EQUAL(rs_net_send(net, (uint32_t)src, (uint32_t)((src + 1) % ch->gpus), ch->bytes, chain_next, ch, src),
                        RS_OK);
}

/* 16 GPUs x 200 messages at packet level: flow records are reused, so
 * the records ever handed out stay near the messages in flight (16), not
 * the 3,200 sent, and every one is back when the run ends. */
static void chain_case(rs_recovery_kind rec, double loss)
{
    rs_net_config c;
    rs_fx_config(&c, 16, 1, 8);
    c.recovery = rec;
    c.loss_rate = loss;
    rs_net *net = rs_fx_net(&c);
    chain ch = { .gpus = 16, .bytes = 20000 };
    for (uint32_t g = 0; g < 16; g++) {
        ch.left[g] = 200;
        chain_next(&ch, net, g);
    }
    rs_fx_run_idle(net);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.msgs, 16 * 200);
    CU_ASSERT_EQUAL(st.msgs_done, st.msgs);
    if (loss > 0)
        CU_ASSERT(st.pkts_retransmitted > 0);
    CU_ASSERT_EQUAL(net->flow_serial, 16 * 200);
    CU_ASSERT(net->nflows <= 4 * 16); /* one in flight per GPU, a few predecessors whose last packets (duplicates, re-ACKs) are still out */
    CU_ASSERT_EQUAL(net->flow_free.n, net->nflows);
    rs_net_destroy(net);
}

static void test_flow_records_follow_in_flight_gbn(void) { chain_case(RS_RECOVERY_GBN, 0); }
static void test_flow_records_follow_in_flight_lossy_gbn(void) { chain_case(RS_RECOVERY_GBN, 0.002); }
static void test_flow_records_follow_in_flight_lossy_selective(void) { chain_case(RS_RECOVERY_SELECTIVE, 0.002); }

/* -- sharing and ECMP --------------------------------------------------- */

static void test_two_flows_share_bottleneck_fairly(void)
{
    rs_net_config c;
    rs_fx_config(&c, 3, 1, 4);
    c.transport = RS_TRANSPORT_IDEAL;
    c.buffer_bytes = 64u << 20;
    rs_net *net = rs_fx_net(&c);
    uint64_t bytes = 4u << 20;
    rs_net_send(net, 1, 0, bytes, NULL, NULL, 0);
    rs_net_send(net, 2, 0, bytes, NULL, NULL, 1);
    rs_fx_run_idle(net);
    size_t n;
    const rs_net_msg_time *t = rs_net_msg_times(net, &n);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    double f0 = (double)(t[0].end - t[0].start), f1 = (double)(t[1].end - t[1].start);
    double fmax = f0 > f1 ? f0 : f1, fmin = f0 < f1 ? f0 : f1;
    /* Both senders interleave at the switch: they finish together. */
    CU_ASSERT(fmin / fmax > 0.99);
    /* And the bottleneck was never idle: 2 * 1024 packets of 4178 B
     * (+16 B RETH each flow) at 20 ps/B, plus two latencies. */
    double busy = (2.0 * 1024 * (4096 + RS_WIRE_ROCE) + 2 * RS_WIRE_RETH) * 20.0;
    CU_ASSERT(fmax >= busy);
    CU_ASSERT(fmax <= busy + 2e6 + 2 * 83880);
    rs_net_destroy(net);
}

static rs_time shifted_permutation_max_fct(rs_ecmp_mode mode, rs_time *single)
{
    rs_net_config c;
    rs_fx_config(&c, 128, 1, 16); /* 16 leaves of 8, 8 spines */
    c.transport = RS_TRANSPORT_IDEAL;
    c.buffer_bytes = 64u << 20;
    c.ecmp = mode;
    c.seed = 7;
    rs_net *net = rs_fx_net(&c);
    uint64_t bytes = 1u << 20;
    for (uint32_t i = 0; i < 128; i++)
        rs_net_send(net, i, (i + 64) % 128, bytes, NULL, NULL, i);
    rs_fx_run_idle(net);
    size_t n;
    const rs_net_msg_time *t = rs_net_msg_times(net, &n);
    CU_ASSERT_EQUAL(n, 128);
    rs_time mx = 0;
    for (size_t i = 0; i < n; i++)
        if (t[i].end - t[i].start > mx)
            mx = t[i].end - t[i].start;
    rs_net_destroy(net);

    rs_fx_config(&c, 128, 1, 16);
    c.transport = RS_TRANSPORT_IDEAL;
    net = rs_fx_net(&c);
    rs_net_send(net, 0, 64, bytes, NULL, NULL, 0);
    rs_fx_run_idle(net);
    *single = rs_fx_only_fct(net);
    rs_net_destroy(net);
    return mx;
}

static void test_spraying_permutation_runs_near_line_rate(void)
{
    rs_time single, mx = shifted_permutation_max_fct(RS_ECMP_PACKET, &single);
    /* Random spraying leaves short-lived imbalance at the spines' down
     * links, so the slowest flow still runs above 80% of line rate. */
    CU_ASSERT(mx <= single * 125 / 100);
}

static void test_flow_hash_permutation_shows_collisions(void)
{
    rs_time single, mx = shifted_permutation_max_fct(RS_ECMP_FLOW, &single);
    /* 128 flows hashed onto 8 spines collide: some link carries two or
     * more flows, so the slowest takes about twice as long. */
    CU_ASSERT(mx >= single * 18 / 10);
}

/* Bytes leaf0 sent up each of its uplinks after one 4 MiB message from
 * GPU 0 to GPU 15 (another leaf of a 16-GPU fat tree of radix 8: four
 * uplinks per leaf); returns how many uplinks carried any. */
static int uplinks_used(rs_ecmp_mode mode, double flowlet_gap_us)
{
    rs_net_config c;
    rs_fx_config(&c, 16, 1, 8);
    c.ecmp = mode;
    c.flowlet_gap_us = flowlet_gap_us;
    c.recovery = RS_RECOVERY_SELECTIVE;
    c.dupthresh = 64; /* spread packets arrive out of order; nothing is lost */
    rs_net *net = rs_fx_net(&c);
    rs_net_send(net, 0, 15, 4u << 20, NULL, NULL, 0);
    rs_fx_run_idle(net);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.msgs_done, 1);
    CU_ASSERT_EQUAL(st.goodput_bytes, 4u << 20);
    CU_ASSERT_EQUAL(st.pkts_retransmitted, 0);
    int used = 0;
    for (uint32_t i = 0; i < rs_net_port_count(net); i++) {
        rs_net_port_info pi;
        CU_ASSERT_EQUAL_FATAL(rs_net_port_info_get(net, i, &pi), RS_OK);
        if (strncmp(pi.name, "leaf0.", 6) == 0 && strncmp(pi.peer, "spine", 5) == 0 && pi.tx_bytes > 100000)
            used++;
    }
    rs_net_destroy(net);
    return used;
}

static void test_flow_hash_keeps_a_message_on_one_uplink(void)
{
    CU_ASSERT_EQUAL(uplinks_used(RS_ECMP_FLOW, 256), 1);
}

static void test_adaptive_spreads_a_message_over_every_uplink(void)
{
    /* All uplinks are idle between packets: ties, broken per packet. */
    CU_ASSERT_EQUAL(uplinks_used(RS_ECMP_ADAPTIVE, 256), 4);
}

static void test_flowlet_sticks_within_the_gap_and_moves_past_it(void)
{
    /* Back-to-back packets 84 ns apart: one flowlet for the whole message
     * with the default 256 us gap; a new flowlet per packet with 10 ns. */
    CU_ASSERT_EQUAL(uplinks_used(RS_ECMP_FLOWLET, 256), 1);
    CU_ASSERT_EQUAL(uplinks_used(RS_ECMP_FLOWLET, 0.01), 4);
}

/* A spine port that is busy gets no new packets while an idle one is
 * free: two messages from leaf 0 to leaf 1 of a 2-spine fat tree take the
 * two uplinks, each its own, and finish as if alone. */
static void test_adaptive_avoids_the_queued_uplink(void)
{
    rs_net_config c;
    rs_fx_config(&c, 8, 1, 4); /* 4 leaves of 2 GPUs, 2 uplinks each */
    c.transport = RS_TRANSPORT_IDEAL;
    c.ecmp = RS_ECMP_ADAPTIVE;
    rs_net *net = rs_fx_net(&c);
    rs_net_send(net, 0, 2, 1u << 20, NULL, NULL, 0);
    rs_net_send(net, 1, 3, 1u << 20, NULL, NULL, 1);
    rs_fx_run_idle(net);
    size_t n;
    const rs_net_msg_time *t = rs_net_msg_times(net, &n);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    rs_time worst = t[0].end - t[0].start > t[1].end - t[1].start ? t[0].end - t[0].start : t[1].end - t[1].start;
    rs_net_destroy(net);
    rs_net_config one = c;
    net = rs_fx_net(&one);
    rs_net_send(net, 0, 2, 1u << 20, NULL, NULL, 0);
    rs_fx_run_idle(net);
    rs_time alone = rs_fx_only_fct(net);
    rs_net_destroy(net);
    /* Per packet, so the two interleave on both uplinks at first: within
     * a few frames of a lone message, far from the 2x of a shared link. */
    CU_ASSERT(worst <= alone + alone / 20);
}

/* -- HB domain and rail-only forwarding --------------------------------- */

static void test_rail_only_cross_rail_crosses_hb_domain(void)
{
    rs_net_config c;
    rs_fx_config(&c, 64, 8, 64);
    c.kind = RS_TOPO_RAIL_ONLY;
    rs_net *net = rs_fx_net(&c);
    uint64_t bytes = 3u << 20;
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 9), -1);
    rs_net_send(net, 0, 9, bytes, NULL, NULL, 0); /* domain 0 rail 0 -> domain 1 rail 1 */
    rs_fx_run_idle(net);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.msgs_done, 1);
    CU_ASSERT_EQUAL(st.hb_bytes, bytes);  /* GPU 0 -> GPU 1 over NVSwitch */
    CU_ASSERT_EQUAL(st.nic_bytes, bytes); /* GPU 1 -> GPU 9 over rail 1 */
    rs_time relayed = rs_fx_only_fct(net);
    rs_net_destroy(net);

    c.kind = RS_TOPO_FAT_TREE;
    c.pxn = RS_PXN_OFF; /* directly from gpu0's NIC across the spine */
    net = rs_fx_net(&c);
    rs_net_send(net, 0, 9, bytes, NULL, NULL, 0);
    rs_fx_run_idle(net);
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.hb_bytes, 0);
    CU_ASSERT_EQUAL(st.nic_bytes, bytes);
    rs_time direct = rs_fx_only_fct(net);
    /* The pipelined relay adds one chunk over NVLink, not a copy of the
     * whole message, and its network leg runs at line rate: chunks go back
     * to back, each posted as the one before leaves the NIC (it used to
     * wait for the one before to arrive: 15% slower on 64 MiB). */
    rs_time chunk_hb = rs_ser_time(c.relay_chunk_bytes, (uint64_t)(c.hb_gbps * 1e9)) + (rs_time)(c.hb_latency_ns * 1000);
    printf("\n  3 MiB 0 -> 9: relayed %.3f us, direct %.3f us, one chunk over NVLink %.3f us\n",
           (double)relayed / 1e6, (double)direct / 1e6, (double)chunk_hb / 1e6);
    CU_ASSERT(relayed > direct);
    CU_ASSERT(relayed < direct + chunk_hb + chunk_hb / 4);
    rs_net_destroy(net);
}

/* A relay's network leg holds at most 8 chunks not yet acknowledged (the
 * relay buffer's slots, NCCL_STEPS): with one-frame chunks it cannot fill
 * the rail (8 frames per round trip), with 512 KiB chunks it runs at line
 * rate. Under bit errors chunks arrive out of order (one overtakes a lost
 * one) and the message still completes once, with every byte delivered,
 * under either recovery. */
static void count_done(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    (void)tag;
    ++*(int *)ctx;
}

static rs_time relay_time(uint64_t chunk, double loss, rs_recovery_kind rec, uint64_t bytes)
{
    rs_net_config c;
    rs_fx_config(&c, 16, 8, 64);
    c.kind = RS_TOPO_RAIL_ONLY;
    c.relay_chunk_bytes = chunk;
    c.loss_rate = loss;
    c.recovery = rec;
    c.seed = 3;
    rs_net *net = rs_fx_net(&c);
    int n = 0;
    CU_ASSERT_EQUAL_FATAL(rs_net_send(net, 0, 9, bytes, count_done, &n, 0), RS_OK);
    rs_fx_run_idle(net);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(st.msgs_done, 1);
    CU_ASSERT(st.goodput_bytes >= bytes); /* the HB leg's and the rail's, resends not counted twice */
    if (loss > 0)
        CU_ASSERT(st.pkts_retransmitted > 0);
    rs_time t = rs_fx_only_fct(net);
    rs_net_destroy(net);
    return t;
}

static void test_relay_slots_bound_the_network_leg(void)
{
    uint64_t bytes = 4u << 20;
    rs_time big = relay_time(512u << 10, 0, RS_RECOVERY_GBN, bytes);
    rs_time small = relay_time(4096, 0, RS_RECOVERY_GBN, bytes);
    rs_time gbn = relay_time(512u << 10, 2e-3, RS_RECOVERY_GBN, bytes);
    rs_time sel = relay_time(512u << 10, 2e-3, RS_RECOVERY_SELECTIVE, bytes);
    printf("\n  4 MiB relayed: 512 KiB chunks %.3f us, 4 KiB chunks %.3f us; 0.2%% loss: go-back-N %.3f us, "
           "selective %.3f us\n", (double)big / 1e6, (double)small / 1e6, (double)gbn / 1e6, (double)sel / 1e6);
    /* Line rate: 4 MiB in 4 KiB frames at 400 Gb/s is 85.6 us of wire. */
    CU_ASSERT(big < 90000000);
    /* 1,024 one-frame chunks, 8 per round trip of more than 2 us. */
    CU_ASSERT(small > 1024 / 8 * 2000000ull);
    CU_ASSERT(gbn > big && sel > big);
}

/* -- tallies ------------------------------------------------------------ */

static void test_tally_sums_per_port_and_grows(void)
{
    rs_tally *t;
    CU_ASSERT_EQUAL_FATAL(rs_tally_create(&t), RS_OK);
    /* 1,000 GPUs, far past the first table: every count survives growth. */
    for (uint32_t g = 0; g < 1000; g++) {
        CU_ASSERT_EQUAL(rs_tally_add(t, g * 7, RS_TALLY_NIC_TX, g), RS_OK);
        CU_ASSERT_EQUAL(rs_tally_add(t, g * 7, RS_TALLY_NIC_TX, 1), RS_OK);
        CU_ASSERT_EQUAL(rs_tally_add(t, g * 7, RS_TALLY_HB_RX, 2 * g), RS_OK);
    }
    CU_ASSERT_EQUAL(rs_tally_gpus(t), 1000);
    CU_ASSERT_EQUAL(rs_tally_get(t, 7 * 123, RS_TALLY_NIC_TX), 124);
    CU_ASSERT_EQUAL(rs_tally_get(t, 7 * 123, RS_TALLY_HB_RX), 246);
    CU_ASSERT_EQUAL(rs_tally_get(t, 7 * 123, RS_TALLY_NIC_RX), 0);
    CU_ASSERT_EQUAL(rs_tally_get(t, 5, RS_TALLY_NIC_TX), 0); /* never counted */
    uint64_t mx[RS_TALLY_NPORTS];
    rs_tally_max(t, mx);
    CU_ASSERT_EQUAL(mx[RS_TALLY_NIC_TX], 1000);
    CU_ASSERT_EQUAL(mx[RS_TALLY_NIC_RX], 0);
    CU_ASSERT_EQUAL(mx[RS_TALLY_HB_TX], 0);
    CU_ASSERT_EQUAL(mx[RS_TALLY_HB_RX], 1998);
    CU_ASSERT_EQUAL(rs_tally_add(t, 1, (rs_tally_port)RS_TALLY_NPORTS, 1), RS_EINVAL);
    CU_ASSERT_EQUAL(rs_tally_reserve(t, 5000), RS_OK); /* a rehash keeps every count */
    CU_ASSERT_EQUAL(rs_tally_gpus(t), 1000);
    CU_ASSERT_EQUAL(rs_tally_get(t, 7 * 999, RS_TALLY_HB_RX), 1998);
    rs_tally_clear(t);
    CU_ASSERT_EQUAL(rs_tally_gpus(t), 0);
    CU_ASSERT_EQUAL(rs_tally_get(t, 7 * 123, RS_TALLY_NIC_TX), 0);
    rs_tally_max(t, mx);
    CU_ASSERT_EQUAL(mx[RS_TALLY_NIC_TX] | mx[RS_TALLY_HB_RX], 0);
    rs_tally_destroy(t);
    rs_tally_destroy(NULL);
}

/* One cross-rail message counted where its bytes go: a PXN relay's HB
 * leg at the source and the relay GPU, its network leg at the relay's
 * and the destination's NICs; without PXN the source's own NIC. At both
 * levels (the flow level carries the relay as one flow). */
static void check_tally_cross_rail(rs_topo_kind kind, rs_pxn_mode pxn, rs_fidelity fid)
{
    rs_net_config c;
    rs_fx_config(&c, 64, 8, 64);
    c.kind = kind;
    c.pxn = pxn;
    c.fidelity = fid;
    rs_net *net = rs_fx_net(&c);
    rs_tally *t;
    CU_ASSERT_EQUAL_FATAL(rs_tally_create(&t), RS_OK);
    uint64_t b = 3u << 20;
    CU_ASSERT_EQUAL(rs_net_send_tallied(net, 0, 9, b, NULL, NULL, 0, t), RS_OK); /* domain 0 rail 0 -> domain 1 rail 1 */
    CU_ASSERT_EQUAL(rs_net_send_tallied(net, 2, 3, b / 2, NULL, NULL, 0, t), RS_OK); /* inside domain 0 */
    rs_fx_run_idle(net);
    int relay = pxn != RS_PXN_OFF;
    CU_ASSERT_EQUAL(rs_tally_get(t, 0, RS_TALLY_HB_TX), relay ? b : 0);
    CU_ASSERT_EQUAL(rs_tally_get(t, 1, RS_TALLY_HB_RX), relay ? b : 0);
    CU_ASSERT_EQUAL(rs_tally_get(t, relay ? 1 : 0, RS_TALLY_NIC_TX), b);
    CU_ASSERT_EQUAL(rs_tally_get(t, relay ? 0 : 1, RS_TALLY_NIC_TX), 0);
    CU_ASSERT_EQUAL(rs_tally_get(t, 9, RS_TALLY_NIC_RX), b);
    CU_ASSERT_EQUAL(rs_tally_get(t, 9, RS_TALLY_HB_RX), 0);
    CU_ASSERT_EQUAL(rs_tally_get(t, 2, RS_TALLY_HB_TX), b / 2);
    CU_ASSERT_EQUAL(rs_tally_get(t, 3, RS_TALLY_HB_RX), b / 2);
    CU_ASSERT_EQUAL(rs_tally_gpus(t), relay ? 5 : 4);
    /* The bound is the NIC's: 768 full frames of 4096 + 82 wire bytes at
     * 20 ps per byte, and no run beats it. */
    rs_time bound = rs_net_tally_bound(net, t);
    CU_ASSERT_EQUAL(bound, 768ull * (4096 + RS_WIRE_ROCE) * 20);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT(st.last_activity >= bound);
    rs_tally_destroy(t);
    rs_net_destroy(net);
}

static void test_tally_counts_relay_legs_where_they_go(void)
{
    check_tally_cross_rail(RS_TOPO_RAIL_ONLY, RS_PXN_AUTO, RS_FIDELITY_PACKET);
    check_tally_cross_rail(RS_TOPO_RAIL_ONLY, RS_PXN_AUTO, RS_FIDELITY_FLOW);
    check_tally_cross_rail(RS_TOPO_FAT_TREE, RS_PXN_AUTO, RS_FIDELITY_PACKET);
    check_tally_cross_rail(RS_TOPO_FAT_TREE, RS_PXN_OFF, RS_FIDELITY_PACKET);
    check_tally_cross_rail(RS_TOPO_FAT_TREE, RS_PXN_OFF, RS_FIDELITY_FLOW);
}

/* The HB port's payload rate: hb_mtu units plus a 16-byte header at
 * hb_gbps, rounded up once over the bytes. */
static void test_tally_bound_of_hb_bytes(void)
{
    rs_net_config c;
    rs_fx_config(&c, 16, 8, 64);
    rs_net *net = rs_fx_net(&c);
    rs_tally *t;
    CU_ASSERT_EQUAL_FATAL(rs_tally_create(&t), RS_OK);
    CU_ASSERT_EQUAL(rs_net_tally_bound(net, t), 0);
    CU_ASSERT_EQUAL(rs_tally_add(t, 4, RS_TALLY_HB_RX, 65536u * 100), RS_OK);
    /* 100 units of 65,552 wire bytes at 3600 Gb/s: 6,555,200 x 8 / 3.6 ps. */
    CU_ASSERT_EQUAL(rs_net_tally_bound(net, t), (6555200ull * 8 * 10 + 35) / 36);
    rs_tally_destroy(t);
    rs_net_destroy(net);
}

/* -- loss and recovery -------------------------------------------------- */

static void send_from(void *ctx, rs_net *net, uint64_t src)
{
    (void)ctx;
    CU_ASSERT_EQUAL(rs_net_send(net, (uint32_t)src, 0, 256u << 10, NULL, NULL, src), RS_OK);
}

static void test_lossy_incast_drops_and_recovers_every_byte_once(void)
{
    rs_net_config c;
    rs_fx_config(&c, 9, 1, 16);
    c.pfc = 0;
    c.buffer_bytes = 64u << 10;
    rs_net *net = rs_fx_net(&c);
    uint64_t bytes = 256u << 10;
    /* Staggered starts: with all senders in lock step, tail drop always
     * admits the same sender first and the others lose whole tails (a
     * phase effect, recovered by timeout, see the next test). */
    for (uint32_t s = 1; s <= 8; s++)
        rs_net_at(net, s * 37000, send_from, NULL, s);
    rs_fx_run_idle(net);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT(st.pkts_dropped > 0);
    CU_ASSERT(st.pkts_retransmitted > 0);
    CU_ASSERT(st.naks > 0);
    CU_ASSERT_EQUAL(st.msgs_done, 8);
    CU_ASSERT_EQUAL(st.goodput_bytes, 8 * bytes);
    CU_ASSERT(st.max_queue_bytes <= c.buffer_bytes);
    rs_net_destroy(net);
}

/* A buffer of one packet and two senders: whole tails get dropped and
 * only the retransmit timer can recover them. */
static void tail_loss_case(rs_recovery_kind rec)
{
    rs_net_config c;
    rs_fx_config(&c, 3, 1, 4);
    c.pfc = 0;
    c.buffer_bytes = 4096 + RS_WIRE_ROCE + RS_WIRE_RETH;
    c.rto_us = 20;
    c.recovery = rec;
    rs_net *net = rs_fx_net(&c);
    rs_net_send(net, 1, 0, 64u << 10, NULL, NULL, 0);
    rs_net_send(net, 2, 0, 64u << 10, NULL, NULL, 1);
    rs_fx_run_idle(net);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.msgs_done, 2);
    CU_ASSERT_EQUAL(st.goodput_bytes, 2 * (64u << 10));
    CU_ASSERT(st.pkts_dropped > 0);
    CU_ASSERT(st.timeouts > 0);
    rs_net_destroy(net);
}

static void test_tail_loss_recovers_by_timeout(void) { tail_loss_case(RS_RECOVERY_GBN); }

/* -- selective repeat (transport.recovery=selective) --------------------- */

/* One 4 MiB message over a two-switch path that corrupts 1% of the
 * frames on every link: the losses are scattered, with plenty behind
 * each to SACK it. */
static rs_net_stats lossy_message(rs_recovery_kind rec)
{
    rs_net_config c;
    rs_fx_config(&c, 16, 1, 8);
    c.loss_rate = 0.01;
    c.recovery = rec;
    c.rto_us = 100;
    rs_net *net = rs_fx_net(&c);
    rs_net_send(net, 0, 15, 4u << 20, NULL, NULL, 0);
    rs_fx_run_idle(net);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    rs_net_destroy(net);
    return st;
}

static void test_selective_recovers_every_byte_resending_only_what_was_lost(void)
{
    rs_net_stats gbn = lossy_message(RS_RECOVERY_GBN), sel = lossy_message(RS_RECOVERY_SELECTIVE);
    for (int k = 0; k < 2; k++) {
        const rs_net_stats *st = k ? &sel : &gbn;
        CU_ASSERT_EQUAL(st->msgs_done, 1);
        CU_ASSERT_EQUAL(st->goodput_bytes, 4u << 20);
        CU_ASSERT(st->pkts_dropped > 0);
        CU_ASSERT(st->pkts_retransmitted > 0);
    }
    /* Go-back-N resends every packet in flight behind a loss (a round
     * trip's worth); selective repeat the lost ones, and when a resend is
     * lost too, once more what is still missing, some of it only late: at
     * most twice what was dropped (ACKs and SACKs among them). */
    CU_ASSERT(sel.pkts_retransmitted <= 2 * sel.pkts_dropped);
    CU_ASSERT(gbn.pkts_retransmitted > 10 * sel.pkts_retransmitted);
    CU_ASSERT(sel.timeouts == 0);          /* re-lost resends found by SACKs, not the timer */
    CU_ASSERT(sel.last_activity < gbn.last_activity);
}

static void test_selective_tail_loss_recovers_by_timeout(void) { tail_loss_case(RS_RECOVERY_SELECTIVE); }

/* Spraying on a lossless fabric reorders but loses nothing: go-back-N
 * resends what only arrived late; selective repeat with a reordering
 * threshold above the spread resends nothing, and SACKs what came early. */
static void test_selective_takes_reordering_for_what_it_is(void)
{
    rs_net_stats st[2];
    for (int k = 0; k < 2; k++) {
        rs_net_config c;
        rs_fx_config(&c, 128, 1, 16);
        c.ecmp = RS_ECMP_PACKET;
        c.recovery = k ? RS_RECOVERY_SELECTIVE : RS_RECOVERY_GBN;
        c.dupthresh = 256;
        rs_net *net = rs_fx_net(&c);
        for (uint32_t i = 0; i < 128; i++)
            rs_net_send(net, i, (i + 64) % 128, 1u << 20, NULL, NULL, i);
        rs_fx_run_idle(net);
        rs_net_stats_get(net, &st[k]);
        rs_net_destroy(net);
        CU_ASSERT_EQUAL(st[k].msgs_done, 128);
        CU_ASSERT_EQUAL(st[k].goodput_bytes, 128u << 20);
        CU_ASSERT_EQUAL(st[k].pkts_dropped, 0);
    }
    CU_ASSERT(st[0].pkts_retransmitted > 0);
    CU_ASSERT_EQUAL(st[1].pkts_retransmitted, 0);
    CU_ASSERT(st[1].naks > 0); /* one SACK per early packet */
}

/* The sender never has more than sack_window PSNs past the oldest
 * unacknowledged one in flight: a lone 1 MiB message with a 64-packet
 * window over a long path takes at least ceil(256 / 64) round trips. */
static void test_selective_window_caps_what_is_in_flight(void)
{
    rs_net_config c;
    rs_fx_config(&c, 2, 1, 4);
    c.recovery = RS_RECOVERY_SELECTIVE;
    c.sack_window = 64;
    c.link_latency_ns = 20000; /* 80 us round trip: far above 64 packets' 21 us */
    rs_net *net = rs_fx_net(&c);
    rs_net_send(net, 0, 1, 1u << 20, NULL, NULL, 0);
    rs_fx_run_idle(net);
    rs_time capped = rs_fx_only_fct(net);
    rs_net_destroy(net);
    c.recovery = RS_RECOVERY_GBN;
    net = rs_fx_net(&c);
    rs_net_send(net, 0, 1, 1u << 20, NULL, NULL, 0);
    rs_fx_run_idle(net);
    rs_time free_run = rs_fx_only_fct(net);
    rs_net_destroy(net);
    /* Four windows: three round trips waiting for ACKs, then the last
     * window's one-way trip. */
    CU_ASSERT(capped >= 3 * (rs_time)80000000 + 40000000);
    CU_ASSERT(free_run < 2 * (rs_time)80000000);
}

static void test_routing_recovery_and_loss_keys_are_checked(void)
{
    rs_net_config c;
    rs_fx_config(&c, 8, 1, 4);
    c.sack_window = 100;
    rs_fx_refused(&c, "transport.sack_window");
    rs_fx_config(&c, 8, 1, 4);
    c.dupthresh = 0;
    rs_fx_refused(&c, "transport.dupthresh");
    rs_fx_config(&c, 8, 1, 4);
    c.flowlet_gap_us = 0;
    rs_fx_refused(&c, "routing.flowlet_gap_us");
    rs_fx_config(&c, 8, 1, 4);
    c.loss_rate = 0.01;
    c.fidelity = RS_FIDELITY_FLOW; /* no loss at flow level: refused, not ignored */
    rs_fx_refused(&c, "topology.loss_rate");
}

static void test_same_seed_same_results(void)
{
    rs_net_stats a, b;
    for (int round = 0; round < 2; round++) {
        rs_net_config c;
        rs_fx_config(&c, 128, 1, 16);
        c.buffer_bytes = 256u << 10;
        c.pfc = 0;
        c.seed = 99;
        rs_net *net = rs_fx_net(&c);
        for (uint32_t i = 0; i < 128; i++)
            rs_net_send(net, i, (i * 37 + 11) % 128, 300000, NULL, NULL, i);
        rs_fx_run_idle(net);
        rs_net_stats_get(net, round ? &b : &a);
        rs_net_destroy(net);
    }
    CU_ASSERT_EQUAL(memcmp(&a, &b, sizeof a), 0);
    CU_ASSERT(a.pkts_dropped > 0); /* the case is not trivially lossless */
}


/* -- lossless Ethernet and congestion control ---------------------------- */

/* Mean queue of one switch port's RoCE priority, sampled every 1 us from
 * `from` on while messages are outstanding. */
typedef struct queue_sampler {
    uint32_t port;
    rs_time from;
    double sum;
    uint64_t n;
} queue_sampler;

static void sample_queue(void *ctx, rs_net *net, uint64_t arg)
{
    (void)arg;
    queue_sampler *s = ctx;
    if (rs_net_now(net) >= s->from) {
        s->sum += (double)net->ports[s->port].q[net->cfg.prio].bytes;
        s->n++;
    }
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    if (st.msgs_done < st.msgs)
        rs_net_at(net, rs_net_now(net) + 1000000, sample_queue, s, 0);
}

/* 8 -> 1 incast of `bytes` each on one switch; returns the stats and the
 * mean queue toward the receiver after 1 ms. */
static double incast8(rs_net_config *c, uint64_t bytes, rs_net_stats *st)
{
    rs_net *net = rs_fx_net(c);
    for (uint32_t s = 1; s <= 8; s++)
        rs_net_send(net, s, 0, bytes, NULL, NULL, s);
    queue_sampler qs = { net->leaf_port[0], 1000000000ULL, 0, 0 };
    rs_net_at(net, 0, sample_queue, &qs, 0);
    rs_fx_run_idle(net);
    rs_net_stats_get(net, st);
    rs_net_destroy(net);
    return qs.n ? qs.sum / (double)qs.n : 0;
}

/* An incast whose packets queue at two switches (16 GPUs, radix 8: the
 * spine's port to the leaf, then the leaf's to the GPU): a packet marked
 * CE at the first is counted there only, so the marks never outnumber
 * the data packets, and the ports' marks add up to the total. */
static void test_ecn_marks_count_each_packet_once(void)
{
    rs_net_config c;
    rs_fx_config(&c, 16, 1, 8);
    c.cc = RS_CC_NONE; /* keep the queues up: every packet is marked somewhere */
    rs_net *net = rs_fx_net(&c);
    for (uint32_t s = 4; s < 16; s++)
        rs_net_send(net, s, 0, 1u << 20, NULL, NULL, s);
    rs_fx_run_idle(net);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT(st.ecn_marked > 0);
    CU_ASSERT(st.ecn_marked <= st.data_pkts);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < rs_net_port_count(net); i++) {
        rs_net_port_info pi;
        rs_net_port_info_get(net, i, &pi);
        sum += pi.ecn_marked;
    }
    CU_ASSERT_EQUAL(sum, st.ecn_marked);
    rs_net_destroy(net);
}

static void test_pfc_incast_is_lossless(void)
{
    rs_net_config c;
    rs_fx_config(&c, 9, 1, 16);
    c.buffer_bytes = 256u << 10; /* smaller than what arrives */
    c.cc = RS_CC_NONE;
    rs_net_stats st;
    incast8(&c, 1u << 20, &st);
    CU_ASSERT_EQUAL(st.pkts_dropped, 0);
    CU_ASSERT_EQUAL(st.pkts_retransmitted, 0);
    CU_ASSERT(st.pfc_pauses_sent > 0);
    CU_ASSERT(st.pfc_paused_ps > 0);
    CU_ASSERT_EQUAL(st.goodput_bytes, 8u << 20);
    CU_ASSERT_EQUAL(st.msgs_done, 8);
    /* Without PFC the same buffer overflows. */
    c.pfc = 0;
    incast8(&c, 1u << 20, &st);
    CU_ASSERT(st.pkts_dropped > 0);
    CU_ASSERT_EQUAL(st.msgs_done, 8);
}

static void test_pfc_pauses_are_sent_by_switches_and_received_upstream(void)
{
    rs_net_config c;
    rs_fx_config(&c, 9, 1, 16);
    c.cc = RS_CC_NONE;
    rs_net *net = rs_fx_net(&c);
    for (uint32_t s = 1; s <= 8; s++)
        rs_net_send(net, s, 0, 1u << 20, NULL, NULL, s);
    rs_fx_run_idle(net);
    /* Every pause a switch port sent was received by the NIC across the
     * cable; the receiver's own NIC never sent one. */
    uint64_t sent = 0, recv = 0;
    for (uint32_t i = 0; i < rs_net_port_count(net); i++) {
        rs_net_port_info pi;
        rs_net_port_info_get(net, i, &pi);
        const rs_port *p = &net->ports[i];
        if (p->kind == RS_PORT_SWITCH) {
            sent += pi.pfc_sent;
        } else {
            recv += pi.pfc_received;
            CU_ASSERT_EQUAL(pi.pfc_sent, 0);
        }
    }
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT(sent > 0);
    CU_ASSERT_EQUAL(sent, recv);
    CU_ASSERT_EQUAL(sent, st.pfc_pauses_sent + st.pfc_resumes_sent);
    CU_ASSERT(st.max_queue_bytes > c.pfc_xoff_bytes);
    rs_net_destroy(net);
}

static void test_dcqcn_cuts_pfc_pauses(void)
{
    /* The paper's constants: a cut holds for a rate timer, so the 8:1
     * incast settles below PFC's threshold. */
    rs_net_config c;
    rs_fx_config(&c, 9, 1, 16);
    rs_dcqcn_profile_set(&c.dcqcn, RS_DCQCN_PAPER_2015);
    rs_net_stats with, without;
    c.cc = RS_CC_NONE;
    incast8(&c, 16u << 20, &without);
    c.cc = RS_CC_DCQCN;
    incast8(&c, 16u << 20, &with);
    CU_ASSERT(with.cnps_sent > 0);
    CU_ASSERT_EQUAL(with.cnps_sent, with.cnps_received);
    CU_ASSERT_EQUAL(without.cnps_sent, 0);
    CU_ASSERT(with.ecn_marked > 0);
    CU_ASSERT(with.pfc_pauses_sent * 4 < without.pfc_pauses_sent);
    CU_ASSERT_EQUAL(with.pkts_dropped, 0);
}

static void test_dcqcn_holds_queue_in_marking_band(void)
{
    /* NIC-style increase (32 KiB byte counter, F = 1) and fast alpha
     * (g = 1/16, 1 us, CNP every 4 us): the standing queue sits between
     * Kmin and Kmax. Without congestion control PFC holds it far above. */
    rs_net_config c;
    rs_fx_config(&c, 9, 1, 16);
    rs_dcqcn_profile_set(&c.dcqcn, RS_DCQCN_PAPER_2015);
    c.dcqcn.g = 1.0 / 16;
    c.dcqcn.alpha_period_us = 1;
    c.dcqcn.cnp_interval_us = 4;
    c.dcqcn.byte_counter = 32767;
    c.dcqcn.fast_recovery = 1;
    rs_net_stats st;
    double q = incast8(&c, 16u << 20, &st);
    CU_ASSERT(q >= (double)c.ecn_kmin_bytes / 2);
    CU_ASSERT(q <= (double)c.ecn_kmax_bytes);
    /* ... while keeping the bottleneck busy most of the time. */
    double ideal = 8.0 * (16u << 20) * (4096.0 + RS_WIRE_ROCE) / 4096.0 * 20.0;
    CU_ASSERT((double)st.last_activity < ideal * 1.3);
    c.cc = RS_CC_NONE;
    double q_none = incast8(&c, 16u << 20, &st);
    CU_ASSERT(q_none > (double)c.ecn_kmax_bytes);
}

/* The reaction point's law under both profiles, step by step. The paper
 * clamps the target to the current rate at every cut, so a second cut
 * lowers where fast recovery heads; ConnectX clamps only after a timer
 * increase, so a flow cut again while recovering by bytes keeps heading
 * back to the rate it had. */
static void test_dcqcn_target_clamp_by_profile(void)
{
    for (int k = 0; k < 2; k++) {
        rs_net_config c;
        rs_fx_config(&c, 2, 1, 4);
        rs_dcqcn_profile_set(&c.dcqcn, k ? RS_DCQCN_PAPER_2015 : RS_DCQCN_CONNECTX);
        rs_net *net = rs_fx_net(&c);
        rs_dcqcn_rp rp;
        rs_dcqcn_init(net, &rp);
        rs_dcqcn_cut(net, &rp, 0); /* alpha 1: halves, Rt = 400 either way (clamped or line rate) */
        CU_ASSERT(rp.rc > 199e9 && rp.rc < 201e9);
        CU_ASSERT(rp.rt > 399e9);
        rs_dcqcn_increase(net, &rp, 0); /* by bytes: Rc halfway back */
        double before = rp.rc;
        rs_dcqcn_cut(net, &rp, 0);
        if (k) {
            CU_ASSERT(rp.rt > before - 1 && rp.rt < before + 1); /* paper: Rt = Rc at the cut */
        } else {
            CU_ASSERT(rp.rt > 399e9);                          /* ConnectX: Rt kept */
        }
        rs_dcqcn_increase(net, &rp, 1); /* by the timer ... */
        before = rp.rc;
        rs_dcqcn_cut(net, &rp, 0);      /* ... then a cut clamps under both */
        CU_ASSERT(rp.rt > before - 1 && rp.rt < before + 1);
        rs_net_destroy(net);
    }
}

typedef struct rate_probe {
    double a, b;
} rate_probe;

static void probe_rates(void *ctx, rs_net *net, uint64_t arg)
{
    (void)arg;
    rate_probe *r = ctx;
    r->a = net->flows[0].cc.rc;
    r->b = net->flows[1].cc.rc;
}

static void start_second(void *ctx, rs_net *net, uint64_t arg)
{
    (void)ctx;
    (void)arg;
    rs_net_send(net, 2, 0, 64u << 20, NULL, NULL, 1);
}

static void test_dcqcn_flows_converge_to_fair_share(void)
{
    /* A runs alone at line rate; B joins 500 us later at line rate too.
     * 1.5 ms later DCQCN (the paper's constants) has brought both to about
     * half the link. */
    rs_net_config c;
    rs_fx_config(&c, 3, 1, 16);
    rs_dcqcn_profile_set(&c.dcqcn, RS_DCQCN_PAPER_2015);
    rs_net *net = rs_fx_net(&c);
    rs_net_send(net, 1, 0, 64u << 20, NULL, NULL, 0);
    rs_net_at(net, 500000000ULL, start_second, NULL, 0);
    rate_probe r = { 0, 0 };
    rs_net_at(net, 2000000000ULL, probe_rates, &r, 0);
    rs_fx_run_idle(net);
    double lo = r.a < r.b ? r.a : r.b, hi = r.a > r.b ? r.a : r.b;
    CU_ASSERT(hi > 0);
    CU_ASSERT(lo / hi > 0.9);
    CU_ASSERT(lo + hi < 1.2 * 400e9);
    CU_ASSERT(lo + hi > 0.8 * 400e9);
    rs_net_destroy(net);
}


/* -- completion-time statistics ------------------------------------------ */

/* 3,000 messages of 1 B to 200 kB between random GPUs of 16, run to idle. */
static void send_random(rs_net *net)
{
    rs_rng r;
    rs_rng_init(&r, 7, 0, 0);
    for (uint32_t i = 0; i < 3000; i++) {
        uint32_t a = (uint32_t)(rs_rng_next(&r) % 16), b = (uint32_t)(rs_rng_next(&r) % 16);
        CU_ASSERT_EQUAL_FATAL(rs_net_send(net, a, b, 1 + rs_rng_next(&r) % 200000, NULL, NULL, i), RS_OK);
    }
    rs_fx_run_idle(net);
}

static void fct_run_records(size_t keep, int records, rs_net_fct *f, rs_net_msg_time *first, size_t *nkept)
{
    rs_net_config c;
    rs_fx_config(&c, 16, 1, 8);
    c.transport = RS_TRANSPORT_IDEAL;
    c.msg_records = records;
    rs_net *net = rs_fx_net(&c);
    net->msg_times_keep = keep;
    send_random(net);
    CU_ASSERT_EQUAL(rs_net_fct_get(net, f), RS_OK);
    const rs_net_msg_time *t = rs_net_msg_times(net, nkept);
    if (*nkept) /* none without records (t is NULL then) */
        memcpy(first, t, (*nkept < 100 ? *nkept : 100) * sizeof *t);
    rs_net_destroy(net);
}

static void fct_run(size_t keep, rs_net_fct *f, rs_net_msg_time *first, size_t *nkept)
{
    fct_run_records(keep, 1, f, first, nkept);
}

static int cmp_ps(const void *a, const void *b)
{
    rs_time x = *(const rs_time *)a, y = *(const rs_time *)b;
    return x < y ? -1 : x > y;
}

/* The exact percentiles are selected in place from the kept completion
 * times: the nearest-rank values of the sorted records, asked for twice
 * (the second selection starts from the first's order). Without records
 * (msg_records 0, the command's setting) rs_net_msg_times is empty and
 * every statistic is the same. */
static void test_fct_percentiles_exact_with_and_without_records(void)
{
    rs_net_fct f1, f2, f0;
    rs_net_msg_time none[100];
    size_t n, n0;
    rs_net_config c;
    rs_fx_config(&c, 16, 1, 8);
    c.transport = RS_TRANSPORT_IDEAL;
    rs_net *net = rs_fx_net(&c);
    send_random(net);
    const rs_net_msg_time *t = rs_net_msg_times(net, &n);
    CU_ASSERT_EQUAL_FATAL(n, 3000);
    rs_time *v = malloc(n * sizeof *v);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    for (size_t i = 0; i < n; i++)
        v[i] = t[i].end - t[i].start;
    qsort(v, n, sizeof *v, cmp_ps);
    CU_ASSERT_EQUAL(rs_net_fct_get(net, &f1), RS_OK);
    CU_ASSERT_EQUAL(rs_net_fct_get(net, &f2), RS_OK);
    CU_ASSERT_EQUAL(f1.exact, 1);
    CU_ASSERT_EQUAL(f1.p50, v[1500 - 1]); /* nearest rank: ceil(0.5 x 3000) */
    CU_ASSERT_EQUAL(f1.p99, v[2970 - 1]);
    CU_ASSERT_EQUAL(f1.min, v[0]);
    CU_ASSERT_EQUAL(f1.max, v[n - 1]);
    CU_ASSERT(v[0] < v[1499] && v[1499] < v[2969]);
    CU_ASSERT_EQUAL(memcmp(&f1, &f2, sizeof f1), 0);
    free(v);
    rs_net_destroy(net);
    fct_run_records(RS_NET_MSG_TIMES_KEEP, 0, &f0, none, &n0);
    CU_ASSERT_EQUAL(n0, 0);
    CU_ASSERT_EQUAL(memcmp(&f0, &f1, sizeof f1), 0);
}

/* Past the kept completion times the summary comes from a histogram: n,
 * min, mean and max stay exact, the percentiles within 0.1%, and the kept
 * times are the first ones. */
static void test_fct_summary_beyond_kept_times(void)
{
    rs_net_fct all, few;
    rs_net_msg_time a[100], b[100];
    size_t na, nb;
    fct_run(RS_NET_MSG_TIMES_KEEP, &all, a, &na);
    fct_run(100, &few, b, &nb);
    CU_ASSERT_EQUAL(na, 3000);
    CU_ASSERT_EQUAL(nb, 100);
    CU_ASSERT_EQUAL(memcmp(a, b, sizeof a), 0);
    CU_ASSERT_EQUAL(all.exact, 1);
    CU_ASSERT_EQUAL(few.exact, 0);
    CU_ASSERT_EQUAL(all.n, 3000);
    CU_ASSERT_EQUAL(few.n, all.n);
    CU_ASSERT_EQUAL(few.min, all.min);
    CU_ASSERT_EQUAL(few.mean, all.mean);
    CU_ASSERT_EQUAL(few.max, all.max);
    CU_ASSERT(all.min < all.p50 && all.p50 < all.p99 && all.p99 < all.max);
    CU_ASSERT(llabs((long long)few.p50 - (long long)all.p50) <= (long long)(all.p50 / 1000));
    CU_ASSERT(llabs((long long)few.p99 - (long long)all.p99) <= (long long)(all.p99 / 1000));
}

/* A message whose flow cannot start (more than 2^31 packets) is not
 * sent at all: no record, no statistics, nothing for a later route change
 * to fail over (it used to be left half-made and crash a failover). */
static void noop_done(void *ctx, rs_net *net, uint64_t tag)
{
    (void)ctx;
    (void)net;
    (void)tag;
}

static void test_send_that_cannot_start_leaves_nothing(void)
{
    rs_net_config c;
    rs_fx_config(&c, 16, 4, 8);
    rs_net *net = rs_fx_net(&c);
    uint64_t huge = (2ull << 30) * 4096 + 1;
    CU_ASSERT_NOT_EQUAL(rs_net_send(net, 1, 5, huge, noop_done, NULL, 1), RS_OK); /* one flow on rail 1 */
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.msgs, 0);
    CU_ASSERT_EQUAL(st.msg_bytes, 0);
    CU_ASSERT_EQUAL(rs_net_send(net, 1, 5, 100000, noop_done, NULL, 2), RS_OK);
    rs_fx_run_idle(net);
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.msgs, 1);
    CU_ASSERT_EQUAL(st.msgs_done, 1);
    rs_net_destroy(net);
}

static void test_callback_indices_found_reserved_and_resolved(void);

static void register_suites(void)
{
    CU_pSuite s = CU_add_suite("topo", NULL, NULL);
    CU_add_test(s, "test_topo_kary_fat_tree_counts", test_topo_kary_fat_tree_counts);
    CU_add_test(s, "test_topo_rail_optimized_fat_tree_counts", test_topo_rail_optimized_fat_tree_counts);
    CU_add_test(s, "test_topo_rail_only_counts", test_topo_rail_only_counts);
    CU_add_test(s, "test_topo_hop_counts_fat_tree", test_topo_hop_counts_fat_tree);
    CU_add_test(s, "test_topo_rail_only_has_no_path_between_rails", test_topo_rail_only_has_no_path_between_rails);
    CU_add_test(s, "test_topo_rejects_bad_config_naming_key", test_topo_rejects_bad_config_naming_key);
    CU_add_test(s, "test_topo_four_tier_fat_tree", test_topo_four_tier_fat_tree);
    CU_add_test(s, "test_topo_four_tier_rail_only", test_topo_four_tier_rail_only);
    s = CU_add_suite("fabric", NULL, NULL);
    CU_add_test(s, "test_single_packet_one_switch_exact", test_single_packet_one_switch_exact);
    CU_add_test(s, "test_multihop_message_exact_ideal", test_multihop_message_exact_ideal);
    CU_add_test(s, "test_multihop_message_exact_roce", test_multihop_message_exact_roce);
    CU_add_test(s, "test_multihop_message_exact_slow_nic", test_multihop_message_exact_slow_nic);
    CU_add_test(s, "test_hb_transfer_exact_with_rounding", test_hb_transfer_exact_with_rounding);
    CU_add_test(s, "test_send_to_self_completes_at_once", test_send_to_self_completes_at_once);
    CU_add_test(s, "test_gpu_timer_is_an_event_of_its_node", test_gpu_timer_is_an_event_of_its_node);
    CU_add_test(s, "test_posted_send_leaves_then_the_next_follows_back_to_back",
                test_posted_send_leaves_then_the_next_follows_back_to_back);
    CU_add_test(s, "test_flow_records_follow_in_flight_gbn", test_flow_records_follow_in_flight_gbn);
    CU_add_test(s, "test_flow_records_follow_in_flight_lossy_gbn", test_flow_records_follow_in_flight_lossy_gbn);
    CU_add_test(s, "test_flow_records_follow_in_flight_lossy_selective", test_flow_records_follow_in_flight_lossy_selective);
    CU_add_test(s, "test_two_flows_share_bottleneck_fairly", test_two_flows_share_bottleneck_fairly);
    CU_add_test(s, "test_spraying_permutation_runs_near_line_rate", test_spraying_permutation_runs_near_line_rate);
    CU_add_test(s, "test_flow_hash_permutation_shows_collisions", test_flow_hash_permutation_shows_collisions);
    CU_add_test(s, "test_rail_only_cross_rail_crosses_hb_domain", test_rail_only_cross_rail_crosses_hb_domain);
    s = CU_add_suite("routing", NULL, NULL);
    CU_add_test(s, "test_flow_hash_keeps_a_message_on_one_uplink", test_flow_hash_keeps_a_message_on_one_uplink);
    CU_add_test(s, "test_adaptive_spreads_a_message_over_every_uplink", test_adaptive_spreads_a_message_over_every_uplink);
    CU_add_test(s, "test_flowlet_sticks_within_the_gap_and_moves_past_it", test_flowlet_sticks_within_the_gap_and_moves_past_it);
    CU_add_test(s, "test_adaptive_avoids_the_queued_uplink", test_adaptive_avoids_the_queued_uplink);
    s = CU_add_suite("transport", NULL, NULL);
    CU_add_test(s, "test_lossy_incast_drops_and_recovers_every_byte_once", test_lossy_incast_drops_and_recovers_every_byte_once);
    CU_add_test(s, "test_tail_loss_recovers_by_timeout", test_tail_loss_recovers_by_timeout);
    CU_add_test(s, "test_same_seed_same_results", test_same_seed_same_results);
    s = CU_add_suite("recovery", NULL, NULL);
    CU_add_test(s, "test_selective_recovers_every_byte_resending_only_what_was_lost", test_selective_recovers_every_byte_resending_only_what_was_lost);
    CU_add_test(s, "test_selective_tail_loss_recovers_by_timeout", test_selective_tail_loss_recovers_by_timeout);
    CU_add_test(s, "test_selective_takes_reordering_for_what_it_is", test_selective_takes_reordering_for_what_it_is);
    CU_add_test(s, "test_selective_window_caps_what_is_in_flight", test_selective_window_caps_what_is_in_flight);
    CU_add_test(s, "test_routing_recovery_and_loss_keys_are_checked", test_routing_recovery_and_loss_keys_are_checked);
    s = CU_add_suite("lossless", NULL, NULL);
    CU_add_test(s, "test_pfc_incast_is_lossless", test_pfc_incast_is_lossless);
    CU_add_test(s, "test_ecn_marks_count_each_packet_once", test_ecn_marks_count_each_packet_once);
    CU_add_test(s, "test_pfc_pauses_are_sent_by_switches_and_received_upstream", test_pfc_pauses_are_sent_by_switches_and_received_upstream);
    CU_add_test(s, "test_dcqcn_cuts_pfc_pauses", test_dcqcn_cuts_pfc_pauses);
    CU_add_test(s, "test_dcqcn_holds_queue_in_marking_band", test_dcqcn_holds_queue_in_marking_band);
    CU_add_test(s, "test_dcqcn_flows_converge_to_fair_share", test_dcqcn_flows_converge_to_fair_share);
    CU_add_test(s, "test_dcqcn_target_clamp_by_profile", test_dcqcn_target_clamp_by_profile);
    s = CU_add_suite("fct", NULL, NULL);
    CU_add_test(s, "test_fct_summary_beyond_kept_times", test_fct_summary_beyond_kept_times);
    CU_add_test(s, "test_fct_percentiles_exact_with_and_without_records", test_fct_percentiles_exact_with_and_without_records);
    CU_add_test(s, "test_send_that_cannot_start_leaves_nothing", test_send_that_cannot_start_leaves_nothing);
    s = CU_add_suite("tally", NULL, NULL);
    CU_add_test(s, "test_tally_sums_per_port_and_grows", test_tally_sums_per_port_and_grows);
    CU_add_test(s, "test_relay_slots_bound_the_network_leg", test_relay_slots_bound_the_network_leg);
    CU_add_test(s, "test_tally_counts_relay_legs_where_they_go", test_tally_counts_relay_legs_where_they_go);
    CU_add_test(s, "test_tally_bound_of_hb_bytes", test_tally_bound_of_hb_bytes);
    s = CU_add_suite("callbacks", NULL, NULL);
    CU_add_test(s, "test_callback_indices_found_reserved_and_resolved", test_callback_indices_found_reserved_and_resolved);
}

/* -- callbacks named by index (rs_net_cb_register, rs_net_cb_reserve) ----- */

typedef struct cb_seen {
    uint64_t arg;
    int calls, resolves;
    uint32_t resolved;
    rs_net *net;
} cb_seen;

static void cb_note(void *ctx, rs_net *net, uint64_t arg)
{
    (void)net;
    cb_seen *s = ctx;
    s->arg = arg;
    s->calls++;
}

static void cb_bind(void *ctx, rs_net *net, uint32_t index)
{
    cb_seen *s = ctx;
    s->resolves++;
    s->resolved = index;
    CU_ASSERT_EQUAL(rs_net_cb_set(net, index, cb_note, s), RS_OK);
}

static void cb_other(void *ctx, rs_net *net, uint32_t index)
{
    (void)ctx;
    (void)net;
    (void)index;
}

static void test_callback_indices_found_reserved_and_resolved(void)
{
    rs_net_config c;
    rs_fx_config(&c, 4, 1, 8);
    rs_net *net = rs_fx_net(&c);
    /* Many registrations: each found by its (fn, ctx), the latest of a pair. */
    static char ctxs[300];
    uint32_t idx[300];
    for (int i = 0; i < 300; i++)
        CU_ASSERT_NOT_EQUAL_FATAL(idx[i] = rs_net_cb_register(net, cb_note, &ctxs[i]), UINT32_MAX);
    for (int i = 0; i < 300; i++)
        CU_ASSERT_EQUAL(rs_net_cb_find(net, cb_note, &ctxs[i]), idx[i]);
    uint32_t again = rs_net_cb_register(net, cb_note, &ctxs[7]);
    CU_ASSERT_EQUAL(rs_net_cb_find(net, cb_note, &ctxs[7]), again);
    CU_ASSERT_EQUAL(rs_net_cb_find(net, cb_note, &c), RS_NONE);
    /* Reserved: unset until bound; one resolver per network. */
    cb_seen seen = { 0 };
    uint32_t base = rs_net_cb_reserve(net, 4, cb_bind, &seen);
    CU_ASSERT_EQUAL_FATAL(base, again + 1);
    CU_ASSERT_EQUAL(rs_net_cb_reserve(net, 2, cb_other, NULL), UINT32_MAX);
    CU_ASSERT_EQUAL(rs_net_cb_reserve(net, 2, cb_bind, &seen), base + 4);
    CU_ASSERT_EQUAL(rs_net_cb_set(net, base + 6, cb_note, &seen), RS_EINVAL);
    CU_ASSERT_EQUAL(rs_net_cb_find(net, cb_note, &seen), RS_NONE);
    /* A timer naming an unset index (as one shipped from another process
     * does) has it bound first, then runs. */
    rs_sim *sim = rs_net_sim(net);
    rs_net_timer_at_key(net, 1000, rs_sim_take_key(sim, net->nodes[1].entity), base + 1, 42);
    CU_ASSERT_EQUAL(seen.resolves, 1);
    CU_ASSERT_EQUAL(seen.resolved, base + 1);
    CU_ASSERT_EQUAL(rs_net_cb_find(net, cb_note, &seen), base + 1);
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    CU_ASSERT_EQUAL(seen.calls, 1);
    CU_ASSERT_EQUAL(seen.arg, 42);
    /* Bound already: no second resolve; unbound: not found. */
    rs_net_timer_at_key(net, 2000, rs_sim_take_key(sim, net->nodes[1].entity), base + 1, 43);
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    CU_ASSERT_EQUAL(seen.resolves, 1);
    CU_ASSERT_EQUAL(seen.arg, 43);
    CU_ASSERT_EQUAL(rs_net_cb_set(net, base + 1, NULL, NULL), RS_OK);
    CU_ASSERT_EQUAL(rs_net_cb_find(net, cb_note, &seen), RS_NONE);
    for (int i = 0; i < 300; i += 37)
        CU_ASSERT_EQUAL(rs_net_cb_find(net, cb_note, &ctxs[i]), i == 7 ? again : idx[i]);
    CU_ASSERT_EQUAL(rs_net_gpu_local(net, 0), 1);
    CU_ASSERT_EQUAL(rs_net_gpu_local(net, 4), 0);
    rs_net_destroy(net);
}

int main(void) { return rs_cu_run(register_suites); }
