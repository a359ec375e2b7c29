/*
 * test_nccl.c - NCCL's protocols and tuner (nccl.model=nccl,
 * collectives/coll_tune.c) and NVLS (collectives/coll_nvls.c): the
 * tuner's choices and predicted latencies against NCCL 2.30.7's formulas
 * worked by hand, the protocols' bytes on the wire, NVLS's port loads,
 * point-to-point, Broadcast and Reduce as chains, and that
 * nccl.model=ideal leaves collectives as they were.
 *
 * The systems are the DGX H100 preset's (docs/systems.md): HB domains of
 * 8 at NCCL's 18 x 20.6 GB/s, 400 Gb/s NICs, flow level.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <string.h>

#include "coll.h"
#include "cu_main.h"
#include "fixture_coll.h"
#include "fixture_net.h"
#include "partition.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

static void h100(rs_net_config *c, uint32_t gpus, int model)
{
    rs_fx_config_at(c, gpus, 8, 64, RS_FIDELITY_FLOW);
    c->hb_gbps = 18 * 20.6 * 8;
    c->nccl.model = model;
    c->nccl.gpu = RS_GPU_H100;
}

typedef struct res {
    double us;
    rs_coll_algo algo;
    rs_nccl_proto proto;
    double predicted_us;
    uint64_t hb_bytes, nic_bytes;
} res;

static void done_fn(void *ctx, rs_net *net, uint64_t tag)
{
    (void)ctx, (void)net, (void)tag;
}

static res run(const rs_net_config *nc, rs_coll_op op, rs_coll_algo algo, uint64_t bytes)
{
    res r;
    memset(&r, 0, sizeof r);
    rs_net *net = rs_fx_net(nc);
    rs_comm *comm = NULL;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_comm_create_all(nc->gpus, &comm, &err), RS_OK);
    rs_coll *coll = NULL;
    int rc = rs_fx_coll(net, comm, op, algo, bytes, NULL, NULL, done_fn, NULL, 0, NULL, &coll, &err);
    if (rc != RS_OK)
        fprintf(stderr, "rs_coll_create: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, RS_OK);
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    CU_ASSERT(rs_coll_finished(coll));
    r.us = rs_time_to_us(rs_coll_end_time(coll) - rs_coll_start_time(coll));
    r.algo = rs_coll_algo_used(coll);
    r.proto = rs_coll_proto_used(coll);
    r.predicted_us = rs_coll_predicted_us(coll);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    r.hb_bytes = st.hb_bytes;
    r.nic_bytes = st.nic_bytes;
    rs_coll_destroy(coll);
    rs_comm_destroy(comm);
    rs_net_destroy(net);
    return r;
}

static double busbw(rs_coll_op op, uint32_t n, uint64_t bytes, double us)
{
    return (double)bytes / (us * 1e-6) / 1e9 * rs_coll_busbw_factor(op, n);
}

/* 8 bytes over 16 GPUs (2 domains, 8 per domain): NCCL's tree with LL,
 * 6.8 + 2 x ((8 - 1) x 0.6 + log2(2) x 5.0) = 25.2 us (tuning.cc:
 * baseLatencies Tree LL, hwLatencies NVLINK and NET Tree LL); the ring's
 * LL is 6.6 + 28 x max(0.6, 1.0) + 2 x 2.7 = 40.0. The simulated time is
 * the model's latency where it adds per hop (the network's own latency
 * being below NCCL's per-hop figure on every hop). */
static void test_small_allreduce_is_tree_ll_at_ncclss_latency(void)
{
    rs_net_config c;
    h100(&c, 16, RS_NCCL_NCCL);
    res r = run(&c, RS_COLL_ALLREDUCE, RS_ALGO_AUTO, 8);
    printf("\n  8 B AllReduce, 16 GPUs: %s/%s, predicted %.2f us, simulated %.2f us\n", rs_coll_algo_name(r.algo),
           rs_coll_proto_name(r.proto), r.predicted_us, r.us);
    CU_ASSERT_EQUAL(r.algo, RS_ALGO_TREE);
    CU_ASSERT_EQUAL(r.proto, RS_PROTO_LL);
    CU_ASSERT_DOUBLE_EQUAL(r.predicted_us, 25.2, 0.01);
    CU_ASSERT(fabs(r.us - 25.2) / 25.2 < 0.05);
    /* The same collective, ideal: the wire alone, several times less. */
    h100(&c, 16, RS_NCCL_IDEAL);
    res i = run(&c, RS_COLL_ALLREDUCE, RS_ALGO_AUTO, 8);
    CU_ASSERT_EQUAL(i.proto, RS_PROTO_AUTO);
    CU_ASSERT_EQUAL(i.predicted_us, 0);
    CU_ASSERT(i.us < r.us / 2);
}

/* One domain, 1 GiB: NVLS where the GPUs have it (NCCL enables it on
 * Hopper), at 2(n-1)/(n+1) of the port's rate times nvlsEfficiency 0.85;
 * nccl.nvls=off gives the ring at the port's rate. */
static void test_one_domain_large_allreduce_nvls_then_ring(void)
{
    rs_net_config c;
    h100(&c, 8, RS_NCCL_NCCL);
    res r = run(&c, RS_COLL_ALLREDUCE, RS_ALGO_AUTO, GiB);
    double port = 18 * 20.6 * 65536.0 / (65536 + 16); /* GB/s: hb_mtu framing */
    double nvls = busbw(RS_COLL_ALLREDUCE, 8, GiB, r.us);
    printf("\n  1 GiB AllReduce, 8 GPUs: %s/%s busbw %.1f GB/s (port %.1f)\n", rs_coll_algo_name(r.algo),
           rs_coll_proto_name(r.proto), nvls, port);
    CU_ASSERT_EQUAL(r.algo, RS_ALGO_NVLS);
    CU_ASSERT_EQUAL(r.proto, RS_PROTO_SIMPLE);
    CU_ASSERT(fabs(nvls - port * 0.85 * 14 / 9) / nvls < 0.01);
    c.nccl.nvls = RS_NVLS_OFF;
    r = run(&c, RS_COLL_ALLREDUCE, RS_ALGO_AUTO, GiB);
    double ring = busbw(RS_COLL_ALLREDUCE, 8, GiB, r.us);
    printf("  nvls off: %s/%s busbw %.1f GB/s\n", rs_coll_algo_name(r.algo), rs_coll_proto_name(r.proto), ring);
    CU_ASSERT_EQUAL(r.algo, RS_ALGO_RING);
    CU_ASSERT_EQUAL(r.proto, RS_PROTO_SIMPLE);
    CU_ASSERT(ring < port && ring > port * 0.98);
    /* A100 has no NVLink SHARP: nvls=on is refused, auto is the ring. */
    c.nccl.gpu = RS_GPU_A100;
    c.nccl.nvls = RS_NVLS_AUTO;
    CU_ASSERT_EQUAL(run(&c, RS_COLL_ALLREDUCE, RS_ALGO_AUTO, GiB).algo, RS_ALGO_RING);
}

/* LL puts 2 bytes on the wire per byte of data, LL128 128 per 120:
 * a forced protocol's ring over two domains carries that much more, and
 * at 1 GiB, where bandwidth decides, takes about that much longer. (At
 * 64 MiB LL128 beats Simple: its per-step latency over the network is
 * 4.0 us against 14, as NCCL's tuner knows.) */
static void test_protocols_put_their_lines_on_the_wire(void)
{
    rs_net_config c;
    h100(&c, 16, RS_NCCL_NCCL);
    c.nccl.nvls = RS_NVLS_OFF;
    uint64_t bytes = GiB;
    c.nccl.proto = RS_PROTO_SIMPLE;
    res s = run(&c, RS_COLL_ALLGATHER, RS_ALGO_RING, bytes);
    c.nccl.proto = RS_PROTO_LL;
    res ll = run(&c, RS_COLL_ALLGATHER, RS_ALGO_RING, bytes);
    c.nccl.proto = RS_PROTO_LL128;
    res l128 = run(&c, RS_COLL_ALLGATHER, RS_ALGO_RING, bytes);
    printf("\n  1 GiB AllGather ring, 16 GPUs: simple %.1f us, ll %.1f us, ll128 %.1f us\n", s.us, ll.us, l128.us);
    CU_ASSERT_EQUAL(ll.nic_bytes, 2 * s.nic_bytes);
    CU_ASSERT(fabs((double)l128.nic_bytes / (double)s.nic_bytes - 128.0 / 120.0) < 1e-4);
    CU_ASSERT(ll.us > 1.8 * s.us);
    CU_ASSERT(l128.us > s.us);
}

/* What NCCL would not run is refused with the keys to change. */
static void test_forced_choices_ncclss_rules(void)
{
    rs_net_config c;
    h100(&c, 16, RS_NCCL_NCCL);
    rs_net *net = rs_fx_net(&c);
    rs_comm *all = NULL;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_comm_create_all(16, &all, &err), RS_OK);
    rs_coll *coll = NULL;
    /* NVLS across domains (NVLS Tree is not simulated). */
    CU_ASSERT_EQUAL(rs_fx_coll(net, all, RS_COLL_ALLREDUCE, RS_ALGO_NVLS, MiB, NULL, NULL, done_fn, NULL, 0, NULL,
                               &coll, &err), RS_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "one HB domain"));
    /* Tree is AllReduce only. */
    CU_ASSERT_EQUAL(rs_fx_coll(net, all, RS_COLL_ALLGATHER, RS_ALGO_TREE, MiB, NULL, NULL, done_fn, NULL, 0, NULL,
                               &coll, &err), RS_EINVAL);
    CU_ASSERT_PTR_NULL(coll);
    rs_comm_destroy(all);
    rs_net_destroy(net);
    /* nccl.nvls=on on GPUs without NVLink SHARP. */
    h100(&c, 8, RS_NCCL_NCCL);
    c.nccl.gpu = RS_GPU_A100;
    c.nccl.nvls = RS_NVLS_ON;
    net = rs_fx_net(&c);
    CU_ASSERT_EQUAL_FATAL(rs_comm_create_all(8, &all, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_fx_coll(net, all, RS_COLL_ALLREDUCE, RS_ALGO_AUTO, MiB, NULL, NULL, done_fn, NULL, 0, NULL,
                               &coll, &err), RS_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "nccl.nvls"));
    /* nvls forced on them: NCCL would not run it, and the keys are named. */
    c.nccl.nvls = RS_NVLS_AUTO;
    rs_net_destroy(net);
    net = rs_fx_net(&c);
    CU_ASSERT_EQUAL(rs_fx_coll(net, all, RS_COLL_ALLREDUCE, RS_ALGO_NVLS, MiB, NULL, NULL, done_fn, NULL, 0, NULL,
                               &coll, &err), RS_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "system.gpu"));
    rs_comm_destroy(all);
    rs_net_destroy(net);
}

/* The tuner's crossover points over sizes on 16 GPUs follow NCCL's
 * model: tree with LL for small buffers, LL128 in the middle, the ring
 * with Simple at 1 GiB; each choice's predicted time is the least. */
static void test_tuner_moves_from_tree_ll_to_ring_simple(void)
{
    rs_net_config c;
    h100(&c, 16, RS_NCCL_NCCL);
    static const struct {
        uint64_t bytes;
        rs_coll_algo algo;
        rs_nccl_proto proto;
    } want[] = {
        { 8, RS_ALGO_TREE, RS_PROTO_LL },
        { 256 << 10, RS_ALGO_TREE, RS_PROTO_LL128 },
        { GiB, RS_ALGO_RING, RS_PROTO_SIMPLE },
    };
    for (unsigned i = 0; i < sizeof want / sizeof want[0]; i++) {
        rs_net *net = rs_fx_net(&c);
        rs_comm *all = NULL;
        rs_err err;
        CU_ASSERT_EQUAL_FATAL(rs_comm_create_all(16, &all, &err), RS_OK);
        rs_coll_algo a = rs_fx_coll_algo(net, all, RS_COLL_ALLREDUCE, RS_ALGO_AUTO, want[i].bytes, NULL);
        CU_ASSERT_EQUAL(a, want[i].algo);
        rs_coll *coll = NULL;
        CU_ASSERT_EQUAL_FATAL(rs_fx_coll(net, all, RS_COLL_ALLREDUCE, RS_ALGO_AUTO, want[i].bytes, NULL, NULL,
                                         done_fn, NULL, 0, NULL, &coll, &err), RS_OK);
        CU_ASSERT_EQUAL(rs_coll_algo_used(coll), want[i].algo);
        CU_ASSERT_EQUAL(rs_coll_proto_used(coll), want[i].proto);
        rs_coll_destroy(coll);
        rs_comm_destroy(all);
        rs_net_destroy(net);
    }
}

/* Point-to-point takes NCCL's protocol choice (LL up to 16 KiB per
 * peer, src/enqueue.cc) and one ring step's latency plus the ring's base
 * (railsim's reading: NCCL's model has no p2p entry): a small send/recv
 * across domains costs 6.6 + 2.7 us, the wire's part of it included. */
static void test_point_to_point_protocol_and_latency(void)
{
    rs_net_config c;
    h100(&c, 16, RS_NCCL_NCCL);
    rs_net *net = rs_fx_net(&c);
    uint32_t pair[] = { 0, 8 };
    rs_comm *comm = NULL;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_comm_create(pair, 2, 16, &comm, &err), RS_OK);
    double us[2];
    for (int model = 0; model < 2; model++) {
        c.nccl.model = model ? RS_NCCL_NCCL : RS_NCCL_IDEAL;
        rs_net_destroy(net);
        net = rs_fx_net(&c);
        rs_coll *coll = NULL;
        CU_ASSERT_EQUAL_FATAL(rs_fx_coll(net, comm, RS_COLL_SENDRECV, RS_ALGO_AUTO, 8, NULL, NULL, done_fn, NULL, 0,
                                         NULL, &coll, &err), RS_OK);
        CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
        us[model] = rs_time_to_us(rs_coll_end_time(coll) - rs_coll_start_time(coll));
        CU_ASSERT_EQUAL(rs_coll_proto_used(coll), model ? RS_PROTO_LL : RS_PROTO_AUTO);
        CU_ASSERT_EQUAL(rs_coll_predicted_us(coll), 0);
        rs_coll_destroy(coll);
    }
    printf("\n  8 B send/recv across domains: ideal %.2f us, nccl %.2f us\n", us[0], us[1]);
    /* 6.6 + 2.7 us in all: the step's 2.7 includes the network's part. */
    CU_ASSERT(fabs(us[1] - 9.3) < 0.05);
    rs_comm_destroy(comm);
    rs_net_destroy(net);
    /* A large all-to-all: Simple. */
    h100(&c, 16, RS_NCCL_NCCL);
    res r = run(&c, RS_COLL_ALLTOALL, RS_ALGO_AUTO, 64 * MiB);
    CU_ASSERT_EQUAL(r.algo, RS_ALGO_DIRECT);
    CU_ASSERT_EQUAL(r.proto, RS_PROTO_SIMPLE);
}

/* One send's cost, as a replay's SEND takes it (rs_coll_p2p_cost): LL's
 * bytes up to 16 KiB, Simple's above; the ring's base latency and one
 * step, the network's own share taken off, so that across domains an 8 B
 * send ends at the 9.3 us of the send/recv above; nothing under
 * nccl.model=ideal. */
static void test_send_cost_for_replays(void)
{
    rs_net_config c;
    h100(&c, 16, RS_NCCL_NCCL);
    rs_net *net = rs_fx_net(&c);
    uint64_t wire;
    rs_time x8, x32k, in_dom, lat, ser;
    rs_coll_p2p_cost(net, 0, 8, 8, &wire, &x8);
    CU_ASSERT_EQUAL(wire, 16);
    CU_ASSERT_EQUAL_FATAL(rs_net_hop_estimate(net, 0, 8, 64, &ser, &lat), RS_OK);
    CU_ASSERT(fabs(rs_time_to_us(x8 + ser + lat) - 9.3) < 0.005);
    rs_coll_p2p_cost(net, 0, 8, 16384, &wire, &x8);
    CU_ASSERT_EQUAL(wire, 32768); /* LL up to NCCL_P2P_LL_THRESHOLD */
    rs_coll_p2p_cost(net, 0, 8, 32768, &wire, &x32k);
    CU_ASSERT_EQUAL(wire, 32768); /* Simple */
    CU_ASSERT(x32k > x8);         /* Simple's latencies are the larger */
    rs_coll_p2p_cost(net, 0, 1, 8, &wire, &in_dom);
    CU_ASSERT(in_dom > 0);
    CU_ASSERT(in_dom < x8); /* an NVLink step is shorter than a network step */
    rs_net_destroy(net);
    c.nccl.model = RS_NCCL_IDEAL;
    net = rs_fx_net(&c);
    rs_coll_p2p_cost(net, 0, 8, 8, &wire, &x8);
    CU_ASSERT_EQUAL(wire, 8);
    CU_ASSERT_EQUAL(x8, 0);
    rs_net_destroy(net);
}

/* Broadcast and Reduce run NCCL's ring as a chain from or to rank 0: in
 * one HB domain the root's port carries the buffer once, so a large
 * Broadcast takes bytes over that port's rate plus the chain's fill
 * (n-1 pieces); every hop carries
 * the buffer (n-1 times in all). Members joining one by one wait for
 * each other (test_coll); a tree is refused. */
typedef struct members {
    rs_coll *coll;
    rs_time done_at[8];
    uint32_t ndone;
} members;

static void member_cb(void *ctx, rs_net *net, uint64_t tag, uint32_t m)
{
    (void)tag;
    members *mb = ctx;
    if (mb && m < 8) {
        mb->done_at[m] = rs_net_now(net);
        mb->ndone++;
    }
}

static void join_at(void *ctx, rs_net *net, uint64_t m)
{
    (void)net;
    members *mb = ctx;
    CU_ASSERT_EQUAL(rs_coll_join(mb->coll, (uint32_t)m), RS_OK);
}

static void test_broadcast_and_reduce_chain(void)
{
    rs_net_config c;
    h100(&c, 8, RS_NCCL_IDEAL);
    uint64_t bytes = 64 * MiB;
    res b = run(&c, RS_COLL_BROADCAST, RS_ALGO_AUTO, bytes);
    res r = run(&c, RS_COLL_REDUCE, RS_ALGO_AUTO, bytes);
    double port = 18 * 20.6 * 1e9 * 65536.0 / (65536 + 16); /* bytes/s */
    double ideal = (double)bytes / port * 1e6;
    printf("\n  64 MiB broadcast over 8 GPUs: %.1f us, reduce %.1f us (root's port: %.1f us)\n", b.us, r.us, ideal);
    CU_ASSERT_EQUAL(b.algo, RS_ALGO_RING);
    CU_ASSERT_EQUAL(r.algo, RS_ALGO_RING);
    /* Plus the chain's fill: 7 hops of a 512 KiB piece at half the port
     * (two channels share it), 19.8 us. */
    double fill = 7 * (512.0 * 1024) / (port / 2) * 1e6;
    CU_ASSERT(b.us >= ideal && b.us < (ideal + fill) * 1.01);
    CU_ASSERT(r.us >= b.us);
    CU_ASSERT_EQUAL(b.hb_bytes, 7 * bytes);
    CU_ASSERT_EQUAL(r.hb_bytes, 7 * bytes);
    rs_net *net = rs_fx_net(&c);
    rs_comm *all = NULL;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_comm_create_all(8, &all, &err), RS_OK);
    rs_coll *coll = NULL;
    CU_ASSERT_EQUAL(rs_fx_coll(net, all, RS_COLL_REDUCE, RS_ALGO_TREE, MiB, NULL, member_cb, done_fn, NULL, 0,
                               NULL, &coll, &err), RS_EINVAL);
    CU_ASSERT_EQUAL(rs_fx_coll(net, all, RS_COLL_REDUCE, RS_ALGO_TREE, MiB, NULL, NULL, done_fn, NULL, 0, NULL, &coll,
                               &err), RS_EINVAL);
    rs_comm_destroy(all);
    rs_net_destroy(net);
}

/* Members joining one by one (workload.sync=rank) under NCCL's model: in
 * one DGX H100 domain the tuner picks what it picks for members starting
 * at once (NVLS for 64 MiB AllReduce, which waits for every member), and
 * each member pays NCCL's base latency after its own part as the
 * collective's end does: joined together at 0, every member ends when the
 * all-at-once collective does, for NVLS and for a forced ring (whose
 * slots inside the domain need no posting). Named, NVLS takes its
 * transfers' serials from its block. */
static void test_members_joining_pay_the_base_latency(void)
{
    rs_net_config c;
    h100(&c, 8, RS_NCCL_NCCL);
    const rs_coll_algo algos[2] = { RS_ALGO_AUTO, RS_ALGO_RING };
    for (int a = 0; a < 2; a++) {
        res all = run(&c, RS_COLL_ALLREDUCE, algos[a], 64 * MiB);
        rs_net *net = rs_fx_net(&c);
        rs_comm *comm = NULL;
        rs_err err;
        CU_ASSERT_EQUAL_FATAL(rs_comm_create_all(8, &comm, &err), RS_OK);
        members mb;
        memset(&mb, 0, sizeof mb);
        CU_ASSERT_EQUAL_FATAL(rs_fx_coll(net, comm, RS_COLL_ALLREDUCE, algos[a], 64 * MiB, NULL, member_cb, done_fn,
                                         &mb, 0, NULL, &mb.coll, &err), RS_OK);
        for (uint32_t m = 0; m < 8; m++)
            rs_net_at(net, 0, join_at, &mb, m);
        CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
        CU_ASSERT(rs_coll_finished(mb.coll));
        CU_ASSERT_EQUAL(rs_coll_algo_used(mb.coll), all.algo);
        CU_ASSERT_EQUAL(all.algo, a == 0 ? RS_ALGO_NVLS : RS_ALGO_RING);
        rs_time end = rs_coll_end_time(mb.coll), last = 0;
        printf("\n    64 MiB AllReduce %s joined at 0: %.3f us (all at once %.3f us)",
               rs_coll_algo_name(all.algo), rs_time_to_us(end), all.us);
        CU_ASSERT_DOUBLE_EQUAL(rs_time_to_us(end), all.us, 1e-6);
        CU_ASSERT_EQUAL(mb.ndone, 8);
        for (uint32_t m = 0; m < 8; m++)
            last = mb.done_at[m] > last ? mb.done_at[m] : last;
        CU_ASSERT_EQUAL(last, end);
        rs_coll_destroy(mb.coll);
        rs_comm_destroy(comm);
        rs_net_destroy(net);
    }
    /* Named (a replay's reservation, alike in every process of a split
     * run): NVLS takes one serial per transfer from its block, 8 x 7, and
     * reserves none of its own. */
    rs_net *net = rs_fx_net(&c);
    rs_comm *comm = NULL;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_comm_create_all(8, &comm, &err), RS_OK);
    rs_coll_needs sz;
    CU_ASSERT_EQUAL_FATAL(rs_fx_coll_needs(net, comm, RS_COLL_ALLREDUCE, RS_ALGO_AUTO, 64 * MiB, NULL, &sz, &err),
                          RS_OK);
    CU_ASSERT_EQUAL(sz.serials, 56);
    CU_ASSERT_EQUAL(sz.cbs, 0);
    members mb;
    memset(&mb, 0, sizeof mb);
    rs_coll_reservation name = { rs_net_serials_reserve(net, sz.serials), UINT32_MAX };
    uint64_t before = rs_net_serials_reserve(net, 0);
    CU_ASSERT_EQUAL_FATAL(rs_fx_coll(net, comm, RS_COLL_ALLREDUCE, RS_ALGO_AUTO, 64 * MiB, NULL, member_cb, done_fn,
                                     &mb, 0, &name, &mb.coll, &err), RS_OK);
    for (uint32_t m = 0; m < 8; m++)
        rs_net_at(net, 0, join_at, &mb, m);
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    CU_ASSERT_EQUAL(rs_coll_algo_used(mb.coll), RS_ALGO_NVLS);
    CU_ASSERT_EQUAL(mb.ndone, 8);
    CU_ASSERT_EQUAL(rs_net_serials_reserve(net, 0), before);
    rs_coll_destroy(mb.coll);
    rs_comm_destroy(comm);
    rs_net_destroy(net);
}

static const rs_cu_test nccl_tests[] = {
    RS_CU_TEST(test_small_allreduce_is_tree_ll_at_ncclss_latency),
    RS_CU_TEST(test_one_domain_large_allreduce_nvls_then_ring),
    RS_CU_TEST(test_protocols_put_their_lines_on_the_wire),
    RS_CU_TEST(test_forced_choices_ncclss_rules),
    RS_CU_TEST(test_tuner_moves_from_tree_ll_to_ring_simple),
    RS_CU_TEST(test_point_to_point_protocol_and_latency),
    RS_CU_TEST(test_send_cost_for_replays),
    RS_CU_TEST(test_broadcast_and_reduce_chain),
    RS_CU_TEST(test_members_joining_pay_the_base_latency),
};

static void register_suites(void) { RS_CU_SUITE("nccl", nccl_tests); }

int main(void) { return rs_cu_run(register_suites); }
