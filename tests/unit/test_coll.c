/*
 * test_coll.c - communicators and collective algorithms (collectives/):
 * ring times against the bandwidth bound, tree vs ring for small messages,
 * all-to-all byte accounting and PXN crossings, hierarchical AllReduce on
 * rail-only vs fat tree, the auto rule, errors, determinism.
 *
 * Figures are printed (docs/collectives.md quotes them). Large cases use
 * the ideal transport, where the property does not depend on RoCE.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <string.h>

#include "coll.h"
#include "cu_main.h"
#include "fixture_coll.h"
#include "fixture_net.h"
#include "fault.h"
#include "partition.h"

#define MiB (1ull << 20)
#define KiB (1ull << 10)

/* NIC payload bandwidth in bytes/s: line rate x 4096 / (4096 + 82). */
static double nic_payload_Bps(double gbps) { return gbps * 1e9 / 8 * 4096.0 / (4096.0 + 82.0); }

static void cfg(rs_net_config *c, rs_topo_kind kind, uint32_t gpus, uint32_t hb, uint32_t radix,
                rs_transport_kind tr)
{
    rs_fx_config(c, gpus, hb, radix);
    c->kind = kind;
    c->transport = tr;
}

typedef struct run_result {
    double us;            /* collective time */
    rs_time time_ps, bound_ps; /* the same, and the collective's network-only bound */
    rs_coll_algo algo;
    rs_net_stats st;
    uint64_t transfers;
    int finished, done_calls;
} run_result;

static void count_done(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    CU_ASSERT_EQUAL(tag, 77);
    ((run_result *)ctx)->done_calls++;
}

/* Run one collective on a fresh network; comm built by the caller. */
static run_result run_coll(const rs_net_config *nc, const rs_comm *comm, rs_coll_op op,
                           rs_coll_algo algo, uint64_t bytes, const rs_coll_opts *o)
{
    run_result r;
    memset(&r, 0, sizeof r);
    rs_net *net = rs_fx_net(nc);
    rs_coll *coll = NULL;
    rs_err err;
    int rc = rs_fx_coll(net, comm, op, algo, bytes, o, NULL, count_done, &r, 77, NULL, &coll, &err);
    if (rc != RS_OK)
        fprintf(stderr, "rs_coll_create: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, RS_OK);
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    r.finished = rs_coll_finished(coll);
    CU_ASSERT(r.finished);
    CU_ASSERT_EQUAL(r.done_calls, 1);
    CU_ASSERT_EQUAL(rs_coll_status(coll), RS_OK);
    r.time_ps = rs_coll_end_time(coll) - rs_coll_start_time(coll);
    r.us = rs_time_to_us(r.time_ps);
    r.bound_ps = rs_coll_bound(coll);
    CU_ASSERT(r.bound_ps <= r.time_ps); /* no run beats its bound */
    CU_ASSERT(r.bound_ps > 0 || bytes == 0 || rs_comm_size(comm) < 2); /* sub-collectives count into their root */
    r.algo = rs_coll_algo_used(coll);
    r.transfers = rs_coll_transfers(coll);
    rs_net_stats_get(net, &r.st);
    CU_ASSERT_EQUAL(r.st.pkts_in_flight, 0);
    CU_ASSERT_EQUAL(r.st.msgs, r.st.msgs_done);
    rs_coll_destroy(coll);
    rs_net_destroy(net);
    return r;
}

static rs_comm *comm_rail(uint32_t gpus, uint32_t hb, uint32_t rail)
{
    rs_comm *c = NULL;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_comm_create_rail(gpus, hb, rail, &c, &err), RS_OK);
    return c;
}

static rs_comm *comm_all(uint32_t gpus)
{
    rs_comm *c = NULL;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_comm_create_all(gpus, &c, &err), RS_OK);
    return c;
}

/* -- communicators ------------------------------------------------------ */

static void test_comm_constructors_list_expected_gpus(void)
{
    rs_comm *c;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_comm_create_rail(64, 8, 3, &c, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_comm_size(c), 8);
    for (uint32_t r = 0; r < 8; r++)
        CU_ASSERT_EQUAL(rs_comm_gpu(c, r), 3 + 8 * r);
    rs_comm_destroy(c);
    CU_ASSERT_EQUAL_FATAL(rs_comm_create_domain(64, 8, 2, &c, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_comm_size(c), 8);
    CU_ASSERT_EQUAL(rs_comm_gpu(c, 0), 16);
    CU_ASSERT_EQUAL(rs_comm_gpu(c, 7), 23);
    rs_comm_destroy(c);
    CU_ASSERT_EQUAL_FATAL(rs_comm_create_strided(64, 5, 4, 3, &c, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_comm_gpus(c)[2], 13);
    rs_comm_destroy(c);
    const uint32_t list[3] = { 9, 2, 40 };
    CU_ASSERT_EQUAL_FATAL(rs_comm_create(list, 3, 64, &c, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_comm_gpu(c, 0), 9);
    CU_ASSERT_EQUAL(rs_comm_gpu(c, 2), 40);
    rs_comm_destroy(c);
    rs_comm_destroy(NULL);
}

static void test_comm_rejects_bad_groups_with_message(void)
{
    rs_comm *c = (rs_comm *)1;
    rs_err err;
    const uint32_t dup[3] = { 1, 2, 1 };
    CU_ASSERT_EQUAL(rs_comm_create(dup, 3, 64, &c, &err), RS_EINVAL);
    CU_ASSERT_PTR_NULL(c);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "twice"));
    const uint32_t big[1] = { 64 };
    CU_ASSERT_EQUAL(rs_comm_create(big, 1, 64, &c, &err), RS_EINVAL);
    CU_ASSERT_EQUAL(rs_comm_create(big, 0, 64, &c, &err), RS_EINVAL);
    CU_ASSERT_EQUAL(rs_comm_create_rail(64, 8, 8, &c, &err), RS_EINVAL);
    CU_ASSERT_EQUAL(rs_comm_create_rail(60, 8, 0, &c, &err), RS_EINVAL);
    CU_ASSERT_EQUAL(rs_comm_create_domain(64, 8, 8, &c, &err), RS_EINVAL);
    CU_ASSERT_EQUAL(rs_comm_create_strided(64, 60, 4, 2, &c, &err), RS_EINVAL);
    CU_ASSERT_EQUAL(rs_comm_create_strided(64, 0, 0, 2, &c, &err), RS_EINVAL);
}

/* -- names and factors -------------------------------------------------- */

static void test_names_parse_round_trip(void)
{
    for (int i = 0; i < RS_COLL_NOPS; i++) {
        rs_coll_op op;
        CU_ASSERT_EQUAL(rs_coll_op_parse(rs_coll_op_name((rs_coll_op)i), &op), RS_OK);
        CU_ASSERT_EQUAL(op, (rs_coll_op)i);
    }
    for (int i = 0; i < RS_COLL_NALGOS; i++) {
        rs_coll_algo a;
        CU_ASSERT_EQUAL(rs_coll_algo_parse(rs_coll_algo_name((rs_coll_algo)i), &a), RS_OK);
        CU_ASSERT_EQUAL(a, (rs_coll_algo)i);
    }
    rs_coll_op op;
    CU_ASSERT_EQUAL(rs_coll_op_parse("All_Reduce", &op), RS_OK);
    CU_ASSERT_EQUAL(op, RS_COLL_ALLREDUCE);
    CU_ASSERT_EQUAL(rs_coll_op_parse("Broad_Cast", &op), RS_OK);
    CU_ASSERT_EQUAL(op, RS_COLL_BROADCAST);
    CU_ASSERT_EQUAL(rs_coll_op_parse("gather", &op), RS_EINVAL);
    CU_ASSERT_STRING_EQUAL(rs_coll_algo_name(RS_ALGO_HIERARCHICAL), "hierarchical");
}

static void test_busbw_factors_match_nccl_tests(void)
{
    CU_ASSERT_DOUBLE_EQUAL(rs_coll_busbw_factor(RS_COLL_ALLREDUCE, 8), 1.75, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(rs_coll_busbw_factor(RS_COLL_ALLGATHER, 8), 0.875, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(rs_coll_busbw_factor(RS_COLL_REDUCESCATTER, 4), 0.75, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(rs_coll_busbw_factor(RS_COLL_ALLTOALL, 2), 0.5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(rs_coll_busbw_factor(RS_COLL_SENDRECV, 2), 1.0, 1e-12);
}

/* -- ring: bandwidth bound ---------------------------------------------- */

/* 8 GPUs on rail 0 of a 64-GPU rail-only net: a ring of 8 NICs on one
 * switch. Returns time / bound. */
static double ring_on_rail(rs_coll_op op, rs_transport_kind tr, uint64_t bytes, double *busbw_frac)
{
    rs_net_config nc;
    cfg(&nc, RS_TOPO_RAIL_ONLY, 64, 8, 64, tr);
    rs_comm *comm = comm_rail(64, 8, 0);
    run_result r = run_coll(&nc, comm, op, RS_ALGO_RING, bytes, NULL);
    rs_comm_destroy(comm);
    CU_ASSERT_EQUAL(r.algo, RS_ALGO_RING);
    double n = 8, B = nic_payload_Bps(400);
    double f = rs_coll_busbw_factor(op, 8);
    double bound_us = f * (double)bytes / B * 1e6;
    double busbw = (double)bytes / (r.us * 1e-6) * f;
    *busbw_frac = busbw / B;
    /* The collective's own bound, from the bytes its transfers put on
     * each NIC, is the closed form's. */
    CU_ASSERT(fabs(rs_time_to_us(r.bound_ps) / bound_us - 1) < 1e-6);
    printf("\n    ring %s %s %llu MiB on 8 GPUs of one rail: %.1f us, bound %.1f us (x%.4f), "
           "busbw %.2f GB/s = %.1f%% of payload line rate",
           rs_coll_op_name(op), tr == RS_TRANSPORT_IDEAL ? "ideal" : "roce",
           (unsigned long long)(bytes / MiB), r.us, bound_us, r.us / bound_us, busbw / 1e9,
           100 * *busbw_frac);
    (void)n;
    return r.us / bound_us;
}

/* rs_coll_progress, the progress line's share: 0 at the start, then never
 * decreasing, strictly between 0 and 1 while the ring runs, 1 at the end. */
static void test_coll_progress_rises_to_one(void)
{
    rs_net_config nc;
    cfg(&nc, RS_TOPO_RAIL_ONLY, 64, 8, 64, RS_TRANSPORT_IDEAL);
    rs_net *net = rs_fx_net(&nc);
    rs_comm *comm = comm_rail(64, 8, 0);
    rs_coll *coll = NULL;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_fx_coll(net, comm, RS_COLL_ALLREDUCE, RS_ALGO_RING, 8 * MiB, NULL, NULL, NULL, NULL, 0,
                                     NULL, &coll, &err), RS_OK);
    CU_ASSERT_DOUBLE_EQUAL(rs_coll_progress(coll), 0.0, 0);
    double last = 0;
    int between = 0, steps = 0;
    for (rs_time t = 10000000; !rs_coll_finished(coll) && steps < 100000; t += 10000000, steps++) {
        CU_ASSERT_EQUAL(rs_net_run(net, t), RS_OK);
        double p = rs_coll_progress(coll);
        CU_ASSERT(p >= last && p <= 1.0);
        between += p > 0 && p < 1;
        last = p;
    }
    CU_ASSERT(rs_coll_finished(coll));
    CU_ASSERT(between >= 3); /* ~300 us at 10 us a step */
    CU_ASSERT_DOUBLE_EQUAL(rs_coll_progress(coll), 1.0, 0);
    rs_coll_destroy(coll);
    rs_comm_destroy(comm);
    rs_net_destroy(net);
}

static void test_ring_allgather_one_rail_reaches_bandwidth_bound(void)
{
    double bw, x = ring_on_rail(RS_COLL_ALLGATHER, RS_TRANSPORT_IDEAL, 64 * MiB, &bw);
    CU_ASSERT(x >= 1.0 && x <= 1.03);
    CU_ASSERT(bw >= 0.97);
}

static void test_ring_reducescatter_one_rail_reaches_bandwidth_bound(void)
{
    double bw, x = ring_on_rail(RS_COLL_REDUCESCATTER, RS_TRANSPORT_IDEAL, 64 * MiB, &bw);
    CU_ASSERT(x >= 1.0 && x <= 1.03);
    CU_ASSERT(bw >= 0.97);
}

static void test_ring_allreduce_one_rail_reaches_bandwidth_bound(void)
{
    double bw, x = ring_on_rail(RS_COLL_ALLREDUCE, RS_TRANSPORT_IDEAL, 64 * MiB, &bw);
    CU_ASSERT(x >= 1.0 && x <= 1.03);
    CU_ASSERT(bw >= 0.97);
}

static void test_ring_allreduce_roce_reaches_bandwidth_bound(void)
{
    double bw, x = ring_on_rail(RS_COLL_ALLREDUCE, RS_TRANSPORT_ROCE, 64 * MiB, &bw);
    CU_ASSERT(x >= 1.0 && x <= 1.04);
    CU_ASSERT(bw >= 0.96);
}

/* -- tree vs ring ------------------------------------------------------- */

static void test_small_allreduce_tree_beats_ring_on_many_nodes(void)
{
    rs_net_config nc;
    cfg(&nc, RS_TOPO_FAT_TREE, 32, 1, 8, RS_TRANSPORT_ROCE); /* 32 nodes, 3 tiers */
    rs_comm *comm = comm_all(32);
    run_result ring = run_coll(&nc, comm, RS_COLL_ALLREDUCE, RS_ALGO_RING, 8 * KiB, NULL);
    run_result tree = run_coll(&nc, comm, RS_COLL_ALLREDUCE, RS_ALGO_TREE, 8 * KiB, NULL);
    run_result aut = run_coll(&nc, comm, RS_COLL_ALLREDUCE, RS_ALGO_AUTO, 8 * KiB, NULL);
    rs_comm_destroy(comm);
    printf("\n    8 KiB AllReduce over 32 nodes: ring %.1f us, tree %.1f us", ring.us, tree.us);
    CU_ASSERT(tree.us * 2 < ring.us);
    CU_ASSERT_EQUAL(aut.algo, RS_ALGO_TREE);
    CU_ASSERT_DOUBLE_EQUAL(aut.us, tree.us, 1e-9);
}

static void test_large_tree_allreduce_runs_near_bandwidth(void)
{
    /* The double binary tree moves each byte about once up and once down
     * per rank, so a large AllReduce on it runs at about D/B. */
    rs_net_config nc;
    cfg(&nc, RS_TOPO_FAT_TREE, 16, 1, 16, RS_TRANSPORT_IDEAL);
    rs_comm *comm = comm_all(16);
    uint64_t D = 32 * MiB;
    run_result tree = run_coll(&nc, comm, RS_COLL_ALLREDUCE, RS_ALGO_TREE, D, NULL);
    rs_comm_destroy(comm);
    /* An inner node of one tree receives D/2 from two children and sends
     * D/2 to each of them, a leaf of the other sends and receives D/2: 2D
     * per NIC and direction, like the ring's 2(n-1)/n D. */
    double bound = 2.0 * (double)D / nic_payload_Bps(400) * 1e6;
    printf("\n    32 MiB tree AllReduce over 16 nodes: %.1f us (2D/B = %.1f us, x%.3f)", tree.us,
           bound, tree.us / bound);
    CU_ASSERT(tree.us >= bound * 0.99);
    CU_ASSERT(tree.us <= bound * 1.25);
}

/* -- all-to-all --------------------------------------------------------- */

static void a2a_bytes_case(rs_topo_kind kind, rs_coll_algo algo, rs_pxn_mode pxn)
{
    rs_net_config nc;
    cfg(&nc, kind, 32, 8, 64, RS_TRANSPORT_IDEAL);
    nc.pxn = pxn;
    rs_comm *comm = comm_all(32);
    uint64_t D = 1 * MiB + 5; /* blocks of unequal size */
    run_result r = run_coll(&nc, comm, RS_COLL_ALLTOALL, algo, D, NULL);
    rs_comm_destroy(comm);
    uint32_t n = 32;
    uint64_t moved = 0, intra = 0, inter = 0, cross_rail = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++) {
            if (i == j)
                continue;
            uint64_t b = D / n + (j < D % n);
            moved += b;
            if (i / 8 == j / 8)
                intra += b;
            else {
                inter += b;
                if (i % 8 != j % 8)
                    cross_rail += b;
            }
        }
    CU_ASSERT_EQUAL(r.transfers, (uint64_t)n * (n - 1));
    CU_ASSERT_EQUAL(r.st.msg_bytes, moved);
    /* Every rank sends (n-1)/n of its buffer. */
    CU_ASSERT_EQUAL(moved, (uint64_t)n * D - D);
    CU_ASSERT_EQUAL(r.st.nic_bytes, inter);
    if (pxn == RS_PXN_OFF) { /* the fat tree sends cross-rail bytes from the source's NIC */
        CU_ASSERT_EQUAL(r.st.hb_bytes, intra);
    } else { /* every cross-rail byte crosses its HB domain exactly once (PXN) */
        CU_ASSERT_EQUAL(r.st.hb_bytes, intra + cross_rail);
    }
}

static void test_alltoall_direct_moves_n_minus_1_over_n_per_rank(void)
{
    a2a_bytes_case(RS_TOPO_FAT_TREE, RS_ALGO_DIRECT, RS_PXN_OFF);
}

/* NCCL's default (PXN) on the fat tree too: cross-rail bytes cross the
 * source's HB domain once, then the destination's rail. */
static void test_alltoall_fat_tree_pxn_by_default_cross_rail_bytes_cross_hb_once(void)
{
    a2a_bytes_case(RS_TOPO_FAT_TREE, RS_ALGO_DIRECT, RS_PXN_AUTO);
    a2a_bytes_case(RS_TOPO_FAT_TREE, RS_ALGO_PAIRWISE, RS_PXN_AUTO);
}

static void test_alltoall_pairwise_moves_n_minus_1_over_n_per_rank(void)
{
    a2a_bytes_case(RS_TOPO_FAT_TREE, RS_ALGO_PAIRWISE, RS_PXN_OFF);
}

static void test_alltoall_rail_only_cross_rail_bytes_cross_hb_once(void)
{
    a2a_bytes_case(RS_TOPO_RAIL_ONLY, RS_ALGO_DIRECT, RS_PXN_AUTO);
    a2a_bytes_case(RS_TOPO_RAIL_ONLY, RS_ALGO_PAIRWISE, RS_PXN_AUTO);
}

/* auto is NCCL's grouped send/receive (direct) for every size, and a
 * window of in-flight peers moves the same bytes, one message per pair,
 * a little later than all at once (a bounded window drains unevenly). */
static void test_alltoall_auto_is_direct_and_peer_window_moves_same_bytes(void)
{
    rs_net_config nc;
    cfg(&nc, RS_TOPO_FAT_TREE, 32, 8, 64, RS_TRANSPORT_IDEAL);
    rs_comm *comm = comm_all(32);
    run_result all = run_coll(&nc, comm, RS_COLL_ALLTOALL, RS_ALGO_AUTO, 4 * MiB, NULL);
    CU_ASSERT_EQUAL(all.algo, RS_ALGO_DIRECT);
    rs_coll_opts o;
    rs_coll_opts_default(&o);
    o.a2a_peers = 3;
    run_result win = run_coll(&nc, comm, RS_COLL_ALLTOALL, RS_ALGO_DIRECT, 4 * MiB, &o);
    rs_comm_destroy(comm);
    CU_ASSERT_EQUAL(win.transfers, 32u * 31);
    CU_ASSERT_EQUAL(win.st.msg_bytes, all.st.msg_bytes);
    CU_ASSERT_EQUAL(win.st.nic_bytes, all.st.nic_bytes);
    CU_ASSERT_EQUAL(win.st.hb_bytes, all.st.hb_bytes);
    CU_ASSERT(win.us >= all.us);
}

static void test_alltoall_128_gpus_rail_only_within_modest_margin(void)
{
    double t[2];
    uint64_t hb[2];
    for (int k = 0; k < 2; k++) {
        rs_net_config nc;
        cfg(&nc, k ? RS_TOPO_RAIL_ONLY : RS_TOPO_FAT_TREE, 128, 8, 64, RS_TRANSPORT_IDEAL);
        nc.pxn = k ? RS_PXN_AUTO : RS_PXN_OFF; /* direct from the source's NIC vs relayed */
        rs_comm *comm = comm_all(128);
        run_result r = run_coll(&nc, comm, RS_COLL_ALLTOALL, RS_ALGO_DIRECT, 16 * MiB, NULL);
        rs_comm_destroy(comm);
        t[k] = r.us;
        hb[k] = r.st.hb_bytes;
    }
    printf("\n    direct all-to-all 16 MiB/rank over 16 HB domains x 8: fat tree %.1f us, "
           "rail-only %.1f us (%+.2f%%); NVLink bytes %.0f MiB vs %.0f MiB",
           t[0], t[1], 100 * (t[1] / t[0] - 1), hb[0] / (double)MiB, hb[1] / (double)MiB);
    /* The NIC bytes are the same on both; rail-only adds one NVLink hop
     * (9x the NIC rate) per cross-rail byte but saves the spine's two
     * switch hops, so the times stay within a few percent either way. */
    CU_ASSERT(fabs(t[1] / t[0] - 1) < 0.05);
    CU_ASSERT(hb[1] > 8 * hb[0]);
}

/* The bench's 128-GPU all-to-all shape (16 HB domains of 8, radix 64,
 * RoCE), 16 MiB per rank: its bound is the NIC's. Each NIC carries the
 * 120/128 of a buffer that leaves its HB domain (PXN: a domain's
 * cross-rail bytes leave through the NIC on the destination's rail; or
 * from the source's own NIC without PXN), 15 MiB = 3,840 full frames of
 * 4,096 + 82 bytes at 20 ps per byte: 320.8704 us, on both topologies. */
static void test_alltoall_128_bound_is_nic_bytes_over_payload_rate(void)
{
    const rs_time hand = 3840ull * 4178 * 20;
    static const struct { rs_topo_kind kind; rs_pxn_mode pxn; } cases[] = {
        { RS_TOPO_RAIL_ONLY, RS_PXN_AUTO }, { RS_TOPO_FAT_TREE, RS_PXN_AUTO }, { RS_TOPO_FAT_TREE, RS_PXN_OFF },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        rs_net_config nc;
        cfg(&nc, cases[k].kind, 128, 8, 64, RS_TRANSPORT_ROCE);
        nc.pxn = cases[k].pxn;
        rs_comm *comm = comm_all(128);
        run_result r = run_coll(&nc, comm, RS_COLL_ALLTOALL, RS_ALGO_AUTO, 16 * MiB, NULL);
        rs_comm_destroy(comm);
        printf("\n    all-to-all 16 MiB/rank, 128 GPUs, %s, pxn %s: %.1f us, bound %.4f us (x%.4f)",
               cases[k].kind == RS_TOPO_RAIL_ONLY ? "rail-only" : "fat tree", cases[k].pxn == RS_PXN_OFF ? "off" : "auto",
               r.us, rs_time_to_us(r.bound_ps), (double)r.time_ps / (double)r.bound_ps);
        CU_ASSERT_EQUAL(r.bound_ps, hand);
        CU_ASSERT(r.time_ps >= r.bound_ps);
    }
}

/* -- hierarchical ------------------------------------------------------- */

static double hier_time(rs_topo_kind kind, rs_comm *comm, uint64_t bytes, rs_coll_algo algo,
                        rs_coll_algo *used)
{
    rs_net_config nc;
    cfg(&nc, kind, 64, 8, 64, RS_TRANSPORT_ROCE);
    run_result r = run_coll(&nc, comm, RS_COLL_ALLREDUCE, algo, bytes, NULL);
    *used = r.algo;
    return r.us;
}

static void test_hierarchical_allreduce_same_on_rail_only_and_fat_tree(void)
{
    rs_comm *comm = comm_all(64); /* 8 full HB domains */
    rs_coll_algo a0, a1;
    double ft = hier_time(RS_TOPO_FAT_TREE, comm, 32 * MiB, RS_ALGO_HIERARCHICAL, &a0);
    double ro = hier_time(RS_TOPO_RAIL_ONLY, comm, 32 * MiB, RS_ALGO_HIERARCHICAL, &a1);
    CU_ASSERT_EQUAL(a0, RS_ALGO_HIERARCHICAL);
    CU_ASSERT_EQUAL(a1, RS_ALGO_HIERARCHICAL);
    printf("\n    hierarchical AllReduce 32 MiB over 8 domains x 8: fat tree %.1f us, "
           "rail-only %.1f us", ft, ro);
    CU_ASSERT(fabs(ro / ft - 1) < 0.01);
    /* The flat ring crosses every domain on one rail too. */
    double rft = hier_time(RS_TOPO_FAT_TREE, comm, 32 * MiB, RS_ALGO_RING, &a0);
    double rro = hier_time(RS_TOPO_RAIL_ONLY, comm, 32 * MiB, RS_ALGO_RING, &a1);
    printf("\n    flat ring AllReduce 32 MiB over 8 domains x 8: fat tree %.1f us, rail-only %.1f us",
           rft, rro);
    CU_ASSERT(fabs(rro / rft - 1) < 0.01);
    rs_comm_destroy(comm);
    /* A DP group of one GPU per domain (one rail) is also unaffected. */
    comm = comm_rail(64, 8, 5);
    ft = hier_time(RS_TOPO_FAT_TREE, comm, 32 * MiB, RS_ALGO_AUTO, &a0);
    ro = hier_time(RS_TOPO_RAIL_ONLY, comm, 32 * MiB, RS_ALGO_AUTO, &a1);
    rs_comm_destroy(comm);
    printf("\n    DP AllReduce 32 MiB over one rail (8 GPUs, %s): fat tree %.1f us, rail-only %.1f us",
           rs_coll_algo_name(a1), ft, ro);
    CU_ASSERT(fabs(ro / ft - 1) < 0.01);
}

/* A ring of one piece per slice is bound by latency: a rank's piece k
 * waits for piece k-m of its predecessor and for a free slot at its
 * successor, whose credit comes back a path latency after the piece
 * arrived. With NCCL's 8 slots the slots do not bind, so a fat tree whose
 * rings cross a spine twice per domain boundary (HB 4, radix 16) is about
 * as fast as rail-only; with 2 they bind on the longer path and the fat
 * tree takes about twice as long. */
static double slot_ring_us(rs_topo_kind kind, uint32_t window)
{
    rs_net_config nc;
    cfg(&nc, kind, 64, 4, 16, RS_TRANSPORT_ROCE);
    rs_coll_opts o;
    rs_coll_opts_default(&o);
    o.window = window;
    rs_comm *comm = comm_all(64);
    run_result r = run_coll(&nc, comm, RS_COLL_ALLREDUCE, RS_ALGO_RING, 8 * MiB, &o);
    rs_comm_destroy(comm);
    return r.us;
}

static void test_latency_bound_ring_is_not_paced_by_nccl_slots(void)
{
    rs_coll_opts d;
    rs_coll_opts_default(&d);
    CU_ASSERT_EQUAL(d.window, 8);
    double ft = slot_ring_us(RS_TOPO_FAT_TREE, 8), ro = slot_ring_us(RS_TOPO_RAIL_ONLY, 8);
    double ft2 = slot_ring_us(RS_TOPO_FAT_TREE, 2), ro2 = slot_ring_us(RS_TOPO_RAIL_ONLY, 2);
    printf("\n    ring AllReduce 8 MiB over 64 GPUs (HB 4, one 32 KiB piece per slice): 8 slots fat tree %.1f us, "
           "rail-only %.1f us; 2 slots %.1f us, %.1f us", ft, ro, ft2, ro2);
    CU_ASSERT(ft < 1.10 * ro);
    CU_ASSERT(ft2 > 1.5 * ft);
}

static void test_hierarchical_allgather_and_reducescatter_complete_near_bound(void)
{
    rs_net_config nc;
    cfg(&nc, RS_TOPO_RAIL_ONLY, 64, 8, 64, RS_TRANSPORT_IDEAL);
    rs_comm *comm = comm_all(64);
    uint64_t D = 64 * MiB;
    run_result ag = run_coll(&nc, comm, RS_COLL_ALLGATHER, RS_ALGO_HIERARCHICAL, D, NULL);
    run_result rs = run_coll(&nc, comm, RS_COLL_REDUCESCATTER, RS_ALGO_HIERARCHICAL, D, NULL);
    rs_comm_destroy(comm);
    /* The inter-domain phase moves (N-1)/N x D/L per NIC; with 4
     * pipeline segments one segment's NVLink phase (7/8 x D/4 at 450 GB/s
     * x 65536/65552) is exposed. */
    double inter = 7.0 / 8 * (double)D / 8 / nic_payload_Bps(400) * 1e6;
    double hbseg = 7.0 / 8 * (double)D / 4 / (450e9 * 65536 / 65552) * 1e6;
    double bound = inter + hbseg;
    printf("\n    hierarchical 64 MiB over 8x8: AllGather %.1f us, ReduceScatter %.1f us, "
           "bound %.1f us (rail phase %.1f + one NVLink segment %.1f)", ag.us, rs.us, bound,
           inter, hbseg);
    CU_ASSERT(ag.us >= bound && ag.us < bound * 1.25); /* segment rings pay latency */
    CU_ASSERT(rs.us >= bound && rs.us < bound * 1.25);
    /* No byte crosses rails: the group's network traffic stays on rails. */
    CU_ASSERT_EQUAL(ag.st.nic_bytes, 8ull * 8 * 7 * (D / 64));
}

/* -- auto, errors, edge cases ------------------------------------------- */

static rs_coll_algo auto_of(rs_net *net, const rs_comm *comm, rs_coll_op op, uint64_t bytes)
{
    rs_coll *coll = NULL;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_fx_coll(net, comm, op, RS_ALGO_AUTO, bytes, NULL, NULL, NULL, NULL, 0, NULL, &coll,
                                     &err), RS_OK);
    rs_coll_algo a = rs_coll_algo_used(coll);
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    CU_ASSERT(rs_coll_finished(coll));
    rs_coll_destroy(coll);
    return a;
}

static void test_auto_rule_picks_documented_algorithms(void)
{
    rs_net_config nc;
    cfg(&nc, RS_TOPO_RAIL_ONLY, 64, 8, 64, RS_TRANSPORT_IDEAL);
    rs_net *net = rs_fx_net(&nc);
    rs_comm *all = comm_all(64), *rail = comm_rail(64, 8, 1), *dom = NULL;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_comm_create_domain(64, 8, 1, &dom, &err), RS_OK);
    CU_ASSERT_EQUAL(auto_of(net, all, RS_COLL_ALLREDUCE, 4 * MiB), RS_ALGO_HIERARCHICAL);
    CU_ASSERT_EQUAL(auto_of(net, all, RS_COLL_ALLREDUCE, 64 * KiB), RS_ALGO_TREE);
    CU_ASSERT_EQUAL(auto_of(net, all, RS_COLL_ALLGATHER, 4 * MiB), RS_ALGO_HIERARCHICAL);
    CU_ASSERT_EQUAL(auto_of(net, rail, RS_COLL_ALLREDUCE, 4 * MiB), RS_ALGO_RING);
    CU_ASSERT_EQUAL(auto_of(net, rail, RS_COLL_ALLREDUCE, 16 * KiB), RS_ALGO_TREE);
    CU_ASSERT_EQUAL(auto_of(net, dom, RS_COLL_ALLREDUCE, 4 * KiB), RS_ALGO_RING);
    CU_ASSERT_EQUAL(auto_of(net, dom, RS_COLL_REDUCESCATTER, 4 * MiB), RS_ALGO_RING);
    CU_ASSERT_EQUAL(auto_of(net, all, RS_COLL_ALLTOALL, 64 * MiB), RS_ALGO_DIRECT); /* NCCL: one group of sends and receives */
    CU_ASSERT_EQUAL(auto_of(net, all, RS_COLL_ALLTOALL, 64 * KiB), RS_ALGO_DIRECT);
    CU_ASSERT_EQUAL(auto_of(net, dom, RS_COLL_ALLTOALL, 64 * MiB), RS_ALGO_DIRECT);
    CU_ASSERT_EQUAL(auto_of(net, rail, RS_COLL_SENDRECV, 1 * MiB), RS_ALGO_DIRECT);
    rs_comm_destroy(all);
    rs_comm_destroy(rail);
    rs_comm_destroy(dom);
    rs_net_destroy(net);
}

static void test_start_rejects_algorithm_that_does_not_fit(void)
{
    rs_net_config nc;
    cfg(&nc, RS_TOPO_FAT_TREE, 64, 8, 64, RS_TRANSPORT_IDEAL);
    rs_net *net = rs_fx_net(&nc);
    rs_comm *all = comm_all(64), *dom = NULL, *one = NULL;
    rs_err err;
    rs_coll *coll = (rs_coll *)1;
    CU_ASSERT_EQUAL_FATAL(rs_comm_create_domain(64, 8, 0, &dom, &err), RS_OK);
    const uint32_t g[1] = { 3 };
    CU_ASSERT_EQUAL_FATAL(rs_comm_create(g, 1, 64, &one, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_fx_coll(net, all, RS_COLL_ALLGATHER, RS_ALGO_TREE, MiB, NULL, NULL, NULL, NULL, 0, NULL,
                               &coll, &err), RS_EINVAL);
    CU_ASSERT_PTR_NULL(coll);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "tree"));
    CU_ASSERT_EQUAL(rs_fx_coll(net, dom, RS_COLL_ALLREDUCE, RS_ALGO_HIERARCHICAL, MiB, NULL, NULL, NULL, NULL, 0,
                               NULL, &coll, &err), RS_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "HB domains"));
    CU_ASSERT_EQUAL(rs_fx_coll(net, all, RS_COLL_ALLTOALL, RS_ALGO_RING, MiB, NULL, NULL, NULL, NULL, 0, NULL, &coll,
                               &err), RS_EINVAL);
    CU_ASSERT_EQUAL(rs_fx_coll(net, one, RS_COLL_SENDRECV, RS_ALGO_AUTO, MiB, NULL, NULL, NULL, NULL, 0, NULL, &coll,
                               &err), RS_EINVAL);
    rs_coll_opts o;
    rs_coll_opts_default(&o);
    o.chunk_bytes = 0;
    CU_ASSERT_EQUAL(rs_fx_coll(net, all, RS_COLL_ALLREDUCE, RS_ALGO_RING, MiB, &o, NULL, NULL, NULL, 0, NULL, &coll,
                               &err), RS_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "chunk_bytes"));
    /* Nothing was started. */
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.msgs, 0);
    rs_comm_destroy(all);
    rs_comm_destroy(dom);
    rs_comm_destroy(one);
    rs_net_destroy(net);
}

static void test_empty_or_single_rank_collective_completes_at_once(void)
{
    rs_net_config nc;
    cfg(&nc, RS_TOPO_FAT_TREE, 64, 8, 64, RS_TRANSPORT_IDEAL);
    rs_comm *all = comm_all(64), *one = NULL;
    rs_err err;
    const uint32_t g[1] = { 3 };
    CU_ASSERT_EQUAL_FATAL(rs_comm_create(g, 1, 64, &one, &err), RS_OK);
    run_result a = run_coll(&nc, all, RS_COLL_ALLREDUCE, RS_ALGO_RING, 0, NULL);
    run_result b = run_coll(&nc, one, RS_COLL_ALLGATHER, RS_ALGO_AUTO, MiB, NULL);
    CU_ASSERT_EQUAL(a.us, 0);
    CU_ASSERT_EQUAL(b.us, 0);
    CU_ASSERT_EQUAL(a.transfers + b.transfers, 0);
    rs_comm_destroy(all);
    rs_comm_destroy(one);
}

static void test_sendrecv_is_one_message_rank0_to_rank1(void)
{
    rs_net_config nc;
    cfg(&nc, RS_TOPO_RAIL_ONLY, 64, 8, 64, RS_TRANSPORT_IDEAL);
    const uint32_t g[2] = { 8, 16 };
    rs_comm *c = NULL;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_comm_create(g, 2, 64, &c, &err), RS_OK);
    run_result r = run_coll(&nc, c, RS_COLL_SENDRECV, RS_ALGO_AUTO, 4 * MiB, NULL);
    rs_comm_destroy(c);
    CU_ASSERT_EQUAL(r.transfers, 1);
    CU_ASSERT_EQUAL(r.st.nic_bytes, 4 * MiB);
    double bound = 4.0 * MiB / nic_payload_Bps(400) * 1e6;
    CU_ASSERT(r.us >= bound && r.us < bound * 1.02);
}

static void test_ring_scales_to_1024_ranks(void)
{
    /* 1024 GPUs in HB domains of 8 on a two-tier rail-only net: the ring
     * crosses each domain once, state stays O(channels x n). */
    rs_net_config nc;
    cfg(&nc, RS_TOPO_RAIL_ONLY, 1024, 8, 64, RS_TRANSPORT_IDEAL);
    rs_comm *comm = comm_all(1024);
    run_result r = run_coll(&nc, comm, RS_COLL_ALLGATHER, RS_ALGO_RING, 8 * MiB, NULL);
    rs_comm_destroy(comm);
    printf("\n    ring AllGather 8 MiB over 1024 GPUs: %.1f us, %llu transfers", r.us,
           (unsigned long long)r.transfers);
    CU_ASSERT_EQUAL(r.transfers, 1023ull * 1024 * 2); /* 2 channels of 4 KiB slices */
    /* Every ring crosses every domain boundary on one rail: no relaying. */
    CU_ASSERT_EQUAL(r.st.hb_bytes + r.st.nic_bytes, r.st.msg_bytes);
}

/* -- determinism -------------------------------------------------------- */

static void test_same_inputs_same_results(void)
{
    run_result a[2];
    for (int k = 0; k < 2; k++) {
        rs_net_config nc;
        cfg(&nc, RS_TOPO_FAT_TREE, 64, 8, 16, RS_TRANSPORT_ROCE);
        nc.buffer_bytes = 256 * KiB; /* some loss, so the transport works */
        rs_comm *comm = comm_all(64);
        a[k] = run_coll(&nc, comm, RS_COLL_ALLTOALL, RS_ALGO_DIRECT, 2 * MiB, NULL);
        rs_comm_destroy(comm);
    }
    CU_ASSERT_EQUAL(a[0].us, a[1].us);
    CU_ASSERT_EQUAL(memcmp(&a[0].st, &a[1].st, sizeof a[0].st), 0);
    printf("\n    direct all-to-all 2 MiB x 64 on a 3-tier RoCE fat tree: %.1f us, %llu drops",
           a[0].us, (unsigned long long)a[0].st.pkts_dropped);
}

static const rs_cu_test comm_tests[] = {
    RS_CU_TEST(test_comm_constructors_list_expected_gpus),
    RS_CU_TEST(test_coll_progress_rises_to_one),
    RS_CU_TEST(test_comm_rejects_bad_groups_with_message),
};

/* A link failure holds one ring piece back (its tail was in flight: a
 * retransmit timeout) while the pieces after it take the new routes: the
 * sender must not run more than the receiver's 64-piece window ahead
 * (this aborted on an invariant at both fidelities before). 1 MiB over
 * 128 ranks is one piece per step, 254 steps. */
static void test_ring_survives_a_piece_held_back_by_a_fault(void)
{
    for (int fid = 0; fid < 2; fid++) {
        rs_net_config nc;
        cfg(&nc, RS_TOPO_FAT_TREE, 128, 1, 16, RS_TRANSPORT_ROCE);
        nc.fidelity = fid ? RS_FIDELITY_FLOW : RS_FIDELITY_PACKET;
        rs_net *net = rs_fx_net(&nc);
        rs_fault_config fc;
        rs_fault_config_default(&fc);
        /* A link that carries a piece's tail at 5 us: which one follows
         * the pieces' ECMP entropy (at packet level their serials, named
         * by the ring's block). */
        snprintf(fc.schedule, sizeof fc.schedule, "5us link-down leaf0.p%d", fid ? 9 : 8);
        rs_err err;
        CU_ASSERT_EQUAL_FATAL(rs_net_faults_start(net, &fc, &err), RS_OK);
        rs_comm *comm;
        CU_ASSERT_EQUAL_FATAL(rs_comm_create_all(128, &comm, &err), RS_OK);
        run_result r;
        memset(&r, 0, sizeof r);
        rs_coll *coll = NULL;
        CU_ASSERT_EQUAL_FATAL(rs_fx_coll(net, comm, RS_COLL_ALLREDUCE, RS_ALGO_RING, MiB, NULL, NULL, count_done, &r,
                                         77, NULL, &coll, &err), RS_OK);
        CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
        CU_ASSERT(rs_coll_finished(coll));
        CU_ASSERT_EQUAL(r.done_calls, 1);
        /* The held-back piece waited for a retransmit timeout (1 ms). */
        CU_ASSERT(rs_coll_end_time(coll) - rs_coll_start_time(coll) > 1000000000);
        rs_coll_destroy(coll);
        rs_comm_destroy(comm);
        rs_net_destroy(net);
    }
}

/* What a run split over processes can run (rs_coll_splits): a ring, a
 * tree, a direct all-to-all without a window of peers and a send/recv;
 * auto as rs_coll_create resolves it; the refusals name the op and the
 * algorithm. */
static void test_splits_names_what_a_split_run_can_run(void)
{
    rs_net_config nc;
    cfg(&nc, RS_TOPO_FAT_TREE, 32, 4, 16, RS_TRANSPORT_ROCE);
    rs_net *net = rs_fx_net(&nc);
    rs_comm *comm;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_comm_create_all(32, &comm, &err), RS_OK);
    char why[160];
    CU_ASSERT(rs_fx_coll_splits(net, comm, RS_COLL_ALLREDUCE, RS_ALGO_RING, 8 * MiB, NULL, why, sizeof why));
    CU_ASSERT(rs_fx_coll_splits(net, comm, RS_COLL_ALLGATHER, RS_ALGO_RING, 8 * MiB, NULL, why, sizeof why));
    CU_ASSERT(rs_fx_coll_splits(net, comm, RS_COLL_ALLREDUCE, RS_ALGO_TREE, MiB, NULL, why, sizeof why));
    CU_ASSERT(rs_fx_coll_splits(net, comm, RS_COLL_ALLTOALL, RS_ALGO_DIRECT, MiB, NULL, why, sizeof why));
    CU_ASSERT(rs_fx_coll_splits(net, comm, RS_COLL_SENDRECV, RS_ALGO_AUTO, MiB, NULL, why, sizeof why));
    CU_ASSERT(!rs_fx_coll_splits(net, comm, RS_COLL_ALLREDUCE, RS_ALGO_HIERARCHICAL, MiB, NULL, why, sizeof why));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "allreduce hierarchical"));
    CU_ASSERT(!rs_fx_coll_splits(net, comm, RS_COLL_ALLTOALL, RS_ALGO_PAIRWISE, MiB, NULL, why, sizeof why));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "alltoall pairwise"));
    rs_coll_opts o;
    rs_coll_opts_default(&o);
    o.a2a_peers = 2;
    CU_ASSERT(!rs_fx_coll_splits(net, comm, RS_COLL_ALLTOALL, RS_ALGO_DIRECT, MiB, &o, why, sizeof why));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "window of peers"));
    /* auto, resolved as rs_coll_create resolves it: 64 KiB over 32 ranks in
     * 8 domains is a tree (splits), 1 MiB hierarchical (does not), 64 MiB a
     * ring (splits). */
    const uint64_t sizes[3] = { 64 * 1024, MiB, 64 * MiB };
    for (int i = 0; i < 3; i++) {
        rs_coll *c = NULL;
        CU_ASSERT_EQUAL_FATAL(rs_fx_coll(net, comm, RS_COLL_ALLREDUCE, RS_ALGO_AUTO, sizes[i], NULL, NULL, NULL,
                                         NULL, 0, NULL, &c, &err), RS_OK);
        rs_coll_algo a = rs_coll_algo_used(c);
        int splits = rs_fx_coll_splits(net, comm, RS_COLL_ALLREDUCE, RS_ALGO_AUTO, sizes[i], NULL, why, sizeof why);
        CU_ASSERT_EQUAL(splits, a == RS_ALGO_RING || a == RS_ALGO_TREE);
        CU_ASSERT_EQUAL(a, i == 0 ? RS_ALGO_TREE : i == 1 ? RS_ALGO_HIERARCHICAL : RS_ALGO_RING);
        CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
        rs_coll_destroy(c);
    }
    rs_comm_destroy(comm);
    rs_net_destroy(net);
}


/* -- members joining one by one (rs_coll_create, rs_coll_join) ----------- */

typedef struct join_run {
    rs_coll *coll;
    rs_time done_at[64]; /* per member; RS_TIME_MAX until done */
    uint32_t members_done, done_calls, n;
    rs_time last_member; /* when the last member_done ran */
    int order_ok;        /* done never ran before a member's done */
} join_run;

static void join_member_done(void *ctx, rs_net *net, uint64_t tag, uint32_t m)
{
    join_run *j = ctx;
    CU_ASSERT_EQUAL(tag, 78);
    CU_ASSERT_FATAL(m < j->n);
    CU_ASSERT_EQUAL(j->done_at[m], RS_TIME_MAX); /* once per member */
    j->done_at[m] = rs_net_now(net);
    j->members_done++;
    j->last_member = rs_net_now(net);
}

static void join_done(void *ctx, rs_net *net, uint64_t tag)
{
    join_run *j = ctx;
    CU_ASSERT_EQUAL(tag, 78);
    j->done_calls++;
    j->order_ok = j->members_done == j->n && rs_net_now(net) == j->last_member;
}

static void join_timer(void *ctx, rs_net *net, uint64_t m)
{
    (void)net;
    join_run *j = ctx;
    CU_ASSERT_EQUAL(rs_coll_join(j->coll, (uint32_t)m), RS_OK);
}

/* One collective whose member m joins at join_ps[m] (NULL: all at 0);
 * the members' done times into *j. Returns the collective's end. */
static rs_time run_join_opts(const rs_net_config *nc, const rs_comm *comm, rs_coll_op op, rs_coll_algo algo,
                             uint64_t bytes, const rs_coll_opts *o, const rs_time *join_ps, join_run *j,
                             rs_coll_algo *used);
static rs_time run_join(const rs_net_config *nc, const rs_comm *comm, rs_coll_op op, rs_coll_algo algo,
                        uint64_t bytes, const rs_time *join_ps, join_run *j, rs_coll_algo *used)
{
    return run_join_opts(nc, comm, op, algo, bytes, NULL, join_ps, j, used);
}

static rs_time run_join_opts(const rs_net_config *nc, const rs_comm *comm, rs_coll_op op, rs_coll_algo algo,
                             uint64_t bytes, const rs_coll_opts *o, const rs_time *join_ps, join_run *j,
                             rs_coll_algo *used)
{
    memset(j, 0, sizeof *j);
    j->n = rs_comm_size(comm);
    CU_ASSERT_FATAL(j->n <= 64);
    for (uint32_t m = 0; m < 64; m++)
        j->done_at[m] = RS_TIME_MAX;
    rs_net *net = rs_fx_net(nc);
    rs_err err;
    int rc = rs_fx_coll(net, comm, op, algo, bytes, o, join_member_done, join_done, j, 78, NULL, &j->coll, &err);
    if (rc != RS_OK)
        fprintf(stderr, "rs_coll_create: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, RS_OK);
    for (uint32_t m = 0; m < j->n; m++)
        rs_net_at(net, join_ps ? join_ps[m] : 0, join_timer, j, m);
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    CU_ASSERT(rs_coll_finished(j->coll));
    CU_ASSERT_EQUAL(j->done_calls, 1);
    CU_ASSERT(j->order_ok);
    CU_ASSERT_EQUAL(rs_coll_status(j->coll), RS_OK);
    CU_ASSERT_EQUAL(rs_coll_join(j->coll, 0), RS_EINVAL); /* joined already */
    rs_time end = rs_coll_end_time(j->coll);
    *used = rs_coll_algo_used(j->coll);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.msgs, st.msgs_done);
    rs_coll_destroy(j->coll);
    rs_net_destroy(net);
    return end;
}

/* Every algorithm members can join: joined together at 0 they take what
 * rs_coll_create (every member at once) takes plus the first buffers' posting across HB domains
 * (a few path latencies; the hierarchical's per phase; nothing inside
 * one domain, whose slots are free from the last collective), every
 * member ends, the last one when the collective does. With member 0
 * joining 200 us late, an AllReduce or AllGather ends for nobody before
 * it joined, and then within the all-together time; in the all-to-all
 * the others' blocks to each other go meanwhile, so members end apart. */
static void test_members_joining_one_by_one(void)
{
    rs_net_config nc;
    cfg(&nc, RS_TOPO_FAT_TREE, 32, 4, 8, RS_TRANSPORT_IDEAL);
    rs_comm *all = comm_all(32), *rail = comm_rail(32, 4, 1), *dom = NULL;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_comm_create_domain(32, 4, 2, &dom, &err), RS_OK);
    const struct {
        const rs_comm *comm;
        rs_coll_op op;
        rs_coll_algo algo;
        uint64_t bytes;
        double slack_us;
    } cs[] = {
        { rail, RS_COLL_ALLREDUCE, RS_ALGO_RING, 8 * MiB, 5 },
        { dom, RS_COLL_ALLREDUCE, RS_ALGO_RING, 1 * MiB, 0.5 },
        { all, RS_COLL_ALLGATHER, RS_ALGO_RING, 8 * MiB, 5 },
        { all, RS_COLL_ALLREDUCE, RS_ALGO_TREE, 2 * MiB, 20 },
        { all, RS_COLL_ALLTOALL, RS_ALGO_DIRECT, 4 * MiB, 5 },
        { all, RS_COLL_ALLREDUCE, RS_ALGO_HIERARCHICAL, 16 * MiB, 40 },
        { all, RS_COLL_REDUCESCATTER, RS_ALGO_HIERARCHICAL, 16 * MiB, 40 },
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        run_result base = run_coll(&nc, cs[i].comm, cs[i].op, cs[i].algo, cs[i].bytes, NULL);
        join_run j;
        rs_coll_algo used;
        rs_time end = run_join(&nc, cs[i].comm, cs[i].op, cs[i].algo, cs[i].bytes, NULL, &j, &used);
        printf("\n    join %s %s: together %.3f us (start %.3f us)", rs_coll_op_name(cs[i].op),
               rs_coll_algo_name(used), rs_time_to_us(end), base.us);
        CU_ASSERT_EQUAL(used, cs[i].algo);
        CU_ASSERT(end >= base.time_ps);
        CU_ASSERT(rs_time_to_us(end) <= base.us + cs[i].slack_us);
        if (cs[i].comm == dom) /* inside one domain nothing waits for a posting */
            CU_ASSERT_EQUAL(end, base.time_ps);
        rs_time last = 0;
        for (uint32_t m = 0; m < j.n; m++) {
            CU_ASSERT(j.done_at[m] <= end);
            if (j.done_at[m] != RS_TIME_MAX && j.done_at[m] > last)
                last = j.done_at[m];
        }
        CU_ASSERT_EQUAL(last, end);

        rs_time late[64] = { 0 };
        late[0] = 200 * RS_PS_PER_US;
        rs_time end2 = run_join(&nc, cs[i].comm, cs[i].op, cs[i].algo, cs[i].bytes, late, &j, &used);
        rs_time first = RS_TIME_MAX;
        for (uint32_t m = 0; m < j.n; m++)
            if (j.done_at[m] < first)
                first = j.done_at[m];
        printf(", member 0 at 200 us: members end %.3f..%.3f us", rs_time_to_us(first), rs_time_to_us(end2));
        CU_ASSERT(first > late[0]);
        CU_ASSERT(end2 <= late[0] + end + (rs_time)(cs[i].slack_us * RS_PS_PER_US));
        if (cs[i].op == RS_COLL_ALLTOALL)
            CU_ASSERT(end2 - first > RS_PS_PER_US);
    }
    rs_comm_destroy(all);
    rs_comm_destroy(rail);
    rs_comm_destroy(dom);
}


/* At flow level a long ring runs as streams (coll_ring.c); joined one by
 * one it ends where the packet level's pieces do: 64 MiB ring AllReduce
 * over a rail of 8 (RoCE), member 3 joining 100 us late (less than a
 * stream takes) and 5 ms late (more): the collective within 5%, and no
 * member ends before the packet level's first one (the streams go once
 * every member is in; 5% slack), none before the late one joined. */
static void test_members_joining_flow_streams_agree_with_packets(void)
{
    rs_net_config nc;
    rs_comm *rail = comm_rail(32, 4, 0);
    const rs_time lates[2] = { 100 * RS_PS_PER_US, 5000 * RS_PS_PER_US };
    for (int i = 0; i < 2; i++) {
        cfg(&nc, RS_TOPO_FAT_TREE, 32, 4, 8, RS_TRANSPORT_ROCE);
        rs_time late[64] = { 0 };
        late[3] = lates[i];
        join_run j;
        rs_coll_algo used;
        rs_time first[2];
        rs_time end[2];
        for (int f = 0; f < 2; f++) {
            nc.fidelity = f ? RS_FIDELITY_FLOW : RS_FIDELITY_PACKET;
            end[f] = run_join(&nc, rail, RS_COLL_ALLREDUCE, RS_ALGO_RING, 64 * MiB, late, &j, &used);
            first[f] = RS_TIME_MAX;
            for (uint32_t m = 0; m < j.n; m++)
                if (j.done_at[m] < first[f])
                    first[f] = j.done_at[m];
        }
        printf("\n    64 MiB ring AllReduce, member 3 %.0f us late: members end %.3f..%.3f us (packet), "
               "%.3f..%.3f us (flow)", rs_time_to_us(late[3]), rs_time_to_us(first[0]), rs_time_to_us(end[0]),
               rs_time_to_us(first[1]), rs_time_to_us(end[1]));
        CU_ASSERT(first[0] > late[3] && first[1] > late[3]);
        CU_ASSERT_DOUBLE_EQUAL((double)end[1] / (double)end[0], 1.0, 0.05);
        CU_ASSERT((double)(first[1] - late[3]) >= 0.95 * (double)(first[0] - late[3]));
    }
    rs_comm_destroy(rail);
}

/* A collective whose steps wait for every member (pairwise, a windowed
 * all-to-all, a broadcast or reduce chain) joined one by one starts when
 * the last member joins and runs from there exactly as if every member
 * had started then: member 3 joining 50 us late, the others at 0, every
 * member ends at the collective's end, 50 us plus the all-at-once time.
 * A reservation without members joining, and a join of a collective whose
 * members all started at once, are refused. */
static void test_members_joining_what_waits_for_everyone(void)
{
    rs_net_config nc;
    cfg(&nc, RS_TOPO_FAT_TREE, 16, 4, 8, RS_TRANSPORT_IDEAL);
    rs_comm *all = comm_all(16);
    rs_coll_opts win;
    rs_coll_opts_default(&win);
    win.a2a_peers = 2;
    const struct {
        rs_coll_op op;
        rs_coll_algo algo;
        const rs_coll_opts *o;
    } cs[] = {
        { RS_COLL_ALLTOALL, RS_ALGO_PAIRWISE, NULL },
        { RS_COLL_ALLTOALL, RS_ALGO_DIRECT, &win },
        { RS_COLL_BROADCAST, RS_ALGO_RING, NULL },
        { RS_COLL_REDUCE, RS_ALGO_RING, NULL },
    };
    rs_time late[64] = { 0 };
    late[3] = 50 * RS_PS_PER_US;
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        run_result base = run_coll(&nc, all, cs[i].op, cs[i].algo, MiB, cs[i].o);
        join_run j;
        rs_coll_algo used;
        rs_time end = run_join_opts(&nc, all, cs[i].op, cs[i].algo, MiB, cs[i].o, late, &j, &used);
        printf("\n    %s %s, member 3 at 50 us: ends %.3f us (all at once %.3f us)", rs_coll_op_name(cs[i].op),
               rs_coll_algo_name(used), rs_time_to_us(end), base.us);
        CU_ASSERT_EQUAL(used, cs[i].algo);
        CU_ASSERT_EQUAL(end, late[3] + base.time_ps);
        CU_ASSERT_EQUAL(j.members_done, 16);
        for (uint32_t m = 0; m < j.n; m++)
            CU_ASSERT_EQUAL(j.done_at[m], end);
    }
    rs_net *net = rs_fx_net(&nc);
    rs_coll *c = NULL;
    rs_err err;
    rs_coll_reservation res = { UINT64_MAX, UINT32_MAX };
    CU_ASSERT_EQUAL(rs_fx_coll(net, all, RS_COLL_ALLREDUCE, RS_ALGO_RING, MiB, NULL, NULL, join_done, NULL, 0, &res,
                               &c, &err), RS_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "member_done"));
    CU_ASSERT_EQUAL_FATAL(rs_fx_coll(net, all, RS_COLL_ALLREDUCE, RS_ALGO_RING, MiB, NULL, NULL, NULL, NULL, 0, NULL,
                                     &c, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_coll_join(c, 0), RS_EINVAL);
    rs_fx_run_idle(net);
    CU_ASSERT(rs_coll_finished(c));
    rs_coll_destroy(c);
    rs_comm_destroy(all);
    rs_net_destroy(net);
}

/* A collective with a reservation takes its transfers' serials
 * from the block its name gives, as many as rs_coll_needs_get says and as
 * an unnamed one reserves at creation; it reserves none itself, and runs
 * as the unnamed one does (serials move only entropy: same bytes, every
 * member done). rs_coll_algo_resolve is the rule rs_coll_create applies. */
static void test_named_collective_takes_the_serials_it_is_given(void)
{
    rs_net_config nc;
    cfg(&nc, RS_TOPO_FAT_TREE, 16, 4, 8, RS_TRANSPORT_ROCE);
    rs_comm *all = comm_all(16);
    rs_err err;
    const rs_coll_algo algos[] = { RS_ALGO_RING, RS_ALGO_TREE, RS_ALGO_HIERARCHICAL };
    for (int a = 0; a < 3; a++) {
        rs_net *net = rs_fx_net(&nc);
        rs_coll_needs sz;
        CU_ASSERT_EQUAL_FATAL(rs_fx_coll_needs(net, all, RS_COLL_ALLREDUCE, algos[a], 4 * MiB, NULL, &sz, &err),
                              RS_OK);
        uint64_t need = sz.serials;
        CU_ASSERT(need > 16);
        /* 2 callbacks a ring or tree; a hierarchical one's sub-collectives
         * (4 MiB: one segment; 4 domains of 4: 4 + 4 + 4 of them) 2 each. */
        CU_ASSERT_EQUAL(sz.cbs, a < 2 ? 2u : 24u);
        uint64_t before = rs_net_serials_reserve(net, 0);
        if (a < 2) { /* a hierarchical one reserves its sub-collectives' as they are made */
            rs_coll *c = NULL;
            CU_ASSERT_EQUAL_FATAL(rs_fx_coll(net, all, RS_COLL_ALLREDUCE, algos[a], 4 * MiB, NULL, join_member_done,
                                             join_done, NULL, 0, NULL, &c, &err), RS_OK);
            CU_ASSERT_EQUAL(rs_net_serials_reserve(net, 0) - before, need);
            rs_coll_destroy(c);
        }
        join_run j;
        memset(&j, 0, sizeof j);
        j.n = 16;
        for (uint32_t m = 0; m < 64; m++)
            j.done_at[m] = RS_TIME_MAX;
        rs_coll_reservation name = { rs_net_serials_reserve(net, need), UINT32_MAX };
        before = rs_net_serials_reserve(net, 0);
        CU_ASSERT_EQUAL_FATAL(rs_fx_coll(net, all, RS_COLL_ALLREDUCE, algos[a], 4 * MiB, NULL, join_member_done,
                                         join_done, &j, 78, &name, &j.coll, &err), RS_OK);
        CU_ASSERT_EQUAL(rs_net_serials_reserve(net, 0), before);
        for (uint32_t m = 0; m < 16; m++)
            rs_net_at(net, 0, join_timer, &j, m);
        CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
        CU_ASSERT_EQUAL(rs_net_serials_reserve(net, 0), before); /* sub-collectives named from the block too */
        CU_ASSERT_EQUAL(j.members_done, 16);
        CU_ASSERT_EQUAL(j.done_calls, 1);
        CU_ASSERT(rs_coll_bound(j.coll) > 0);
        CU_ASSERT_PTR_NULL(rs_coll_tally(j.coll)); /* finished: the bound is kept */
        CU_ASSERT_EQUAL(rs_coll_algo_used(j.coll), algos[a]);
        rs_coll_destroy(j.coll);
        rs_net_destroy(net);
    }
    /* A direct all-to-all: a serial per block, n (n - 1), taken by its
     * place (i, offset); its two callbacks (a block's arrival, a
     * posting); and, on the fat tree with PXN, the blocks that would go
     * by a relay counted (16 x 15 pairs less 16 x 3 in an HB domain and
     * 16 x 3 on the same rail), which a split replay refuses. Without
     * PXN nothing is relayed, and the named run reserves nothing more. */
    for (int pxn = 0; pxn < 2; pxn++) {
        rs_net_config ac = nc;
        ac.pxn = pxn ? RS_PXN_AUTO : RS_PXN_OFF;
        rs_net *net = rs_fx_net(&ac);
        rs_coll_needs sz;
        CU_ASSERT_EQUAL_FATAL(rs_fx_coll_needs(net, all, RS_COLL_ALLTOALL, RS_ALGO_DIRECT, 4 * MiB, NULL, &sz, &err),
                              RS_OK);
        CU_ASSERT_EQUAL(sz.serials, 240u);
        CU_ASSERT_EQUAL(sz.cbs, 2u);
        CU_ASSERT_EQUAL(sz.relayed, pxn ? 144u : 0u);
        if (pxn) {
            rs_net_destroy(net);
            continue;
        }
        join_run j;
        memset(&j, 0, sizeof j);
        j.n = 16;
        for (uint32_t m = 0; m < 64; m++)
            j.done_at[m] = RS_TIME_MAX;
        rs_coll_reservation name = { rs_net_serials_reserve(net, sz.serials), UINT32_MAX };
        uint64_t before = rs_net_serials_reserve(net, 0);
        CU_ASSERT_EQUAL_FATAL(rs_fx_coll(net, all, RS_COLL_ALLTOALL, RS_ALGO_DIRECT, 4 * MiB, NULL, join_member_done,
                                         join_done, &j, 78, &name, &j.coll, &err), RS_OK);
        for (uint32_t m = 0; m < 16; m++)
            rs_net_at(net, 0, join_timer, &j, m);
        CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
        CU_ASSERT_EQUAL(rs_net_serials_reserve(net, 0), before);
        CU_ASSERT_EQUAL(j.members_done, 16);
        CU_ASSERT_EQUAL(j.done_calls, 1);
        rs_coll_destroy(j.coll);
        rs_net_destroy(net);
    }
    rs_net *net = rs_fx_net(&nc);
    CU_ASSERT_EQUAL(rs_fx_coll_algo(net, all, RS_COLL_ALLGATHER, RS_ALGO_AUTO, 64 * MiB, NULL), RS_ALGO_RING);
    CU_ASSERT_EQUAL(rs_fx_coll_algo(net, all, RS_COLL_ALLREDUCE, RS_ALGO_AUTO, 4096, NULL), RS_ALGO_TREE);
    CU_ASSERT_EQUAL(rs_fx_coll_algo(net, all, RS_COLL_ALLTOALL, RS_ALGO_PAIRWISE, MiB, NULL), RS_ALGO_PAIRWISE);
    rs_net_destroy(net);
    rs_comm_destroy(all);
}

static const rs_cu_test coll_tests[] = {
    RS_CU_TEST(test_names_parse_round_trip),
    RS_CU_TEST(test_busbw_factors_match_nccl_tests),
    RS_CU_TEST(test_ring_allgather_one_rail_reaches_bandwidth_bound),
    RS_CU_TEST(test_ring_reducescatter_one_rail_reaches_bandwidth_bound),
    RS_CU_TEST(test_ring_allreduce_one_rail_reaches_bandwidth_bound),
    RS_CU_TEST(test_ring_allreduce_roce_reaches_bandwidth_bound),
    RS_CU_TEST(test_small_allreduce_tree_beats_ring_on_many_nodes),
    RS_CU_TEST(test_large_tree_allreduce_runs_near_bandwidth),
    RS_CU_TEST(test_alltoall_direct_moves_n_minus_1_over_n_per_rank),
    RS_CU_TEST(test_alltoall_fat_tree_pxn_by_default_cross_rail_bytes_cross_hb_once),
    RS_CU_TEST(test_alltoall_pairwise_moves_n_minus_1_over_n_per_rank),
    RS_CU_TEST(test_alltoall_rail_only_cross_rail_bytes_cross_hb_once),
    RS_CU_TEST(test_alltoall_auto_is_direct_and_peer_window_moves_same_bytes),
    RS_CU_TEST(test_alltoall_128_gpus_rail_only_within_modest_margin),
    RS_CU_TEST(test_alltoall_128_bound_is_nic_bytes_over_payload_rate),
    RS_CU_TEST(test_hierarchical_allreduce_same_on_rail_only_and_fat_tree),
    RS_CU_TEST(test_hierarchical_allgather_and_reducescatter_complete_near_bound),
    RS_CU_TEST(test_latency_bound_ring_is_not_paced_by_nccl_slots),
    RS_CU_TEST(test_auto_rule_picks_documented_algorithms),
    RS_CU_TEST(test_start_rejects_algorithm_that_does_not_fit),
    RS_CU_TEST(test_empty_or_single_rank_collective_completes_at_once),
    RS_CU_TEST(test_sendrecv_is_one_message_rank0_to_rank1),
    RS_CU_TEST(test_ring_scales_to_1024_ranks),
    RS_CU_TEST(test_same_inputs_same_results),
    RS_CU_TEST(test_ring_survives_a_piece_held_back_by_a_fault),
    RS_CU_TEST(test_splits_names_what_a_split_run_can_run),
    RS_CU_TEST(test_members_joining_one_by_one),
    RS_CU_TEST(test_members_joining_flow_streams_agree_with_packets),
    RS_CU_TEST(test_members_joining_what_waits_for_everyone),
    RS_CU_TEST(test_named_collective_takes_the_serials_it_is_given),
};

static void register_suites(void)
{
    RS_CU_SUITE("comm", comm_tests);
    RS_CU_SUITE("coll", coll_tests);
}

int main(void) { return rs_cu_run(register_suites); }
