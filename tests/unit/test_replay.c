/*
 * test_replay.c - trace replay (traces/replay.c): the FLOP model through a
 * whole replay, a DP+TP plan against the bandwidth-only closed form,
 * strong scaling under ZeRO-3, point-to-point matching and its accounting,
 * the no-progress diagnosis on broken traces, iterations, determinism;
 * the collective driver's iterations streamed as a one-op replay.
 *
 * Figures are printed (docs/replay.md quotes them). Network runs use the
 * ideal transport and small models so the suite stays around a second.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "collrun.h"
#include "cu_main.h"
#include "fixture_net.h"
#include "compute.h"
#include "fault.h"
#include "gen.h"
#include "gpu.h"
#include "plan.h"
#include "replay.h"
#include "standin.h"
#include "trace.h"

#define MiB (1ull << 20)

static rs_net *mk_net(uint32_t gpus, uint32_t hb, rs_transport_kind tr)
{
    rs_net_config c;
    rs_net_config_default(&c);
    c.gpus = gpus;
    c.hb_size = hb;
    c.transport = tr;
    return rs_fx_net(&c);
}

typedef struct result {
    int rc;            /* rs_replay_finish */
    rs_err err;
    rs_replay_stats st;
    rs_time times[8];
    uint32_t ntimes;
    double progress0, progress; /* rs_replay_progress before and after the run */
} result;

/* Replay t on a fresh network for `iters` iterations, with the fault
 * schedule `sched` (NULL: none). */
static result replay_with(const rs_trace *t, uint32_t gpus, uint32_t hb, const char *sched, const rs_replay_opts *op)
{
    result res;
    memset(&res, 0, sizeof res);
    rs_net *net = mk_net(gpus, hb, RS_TRANSPORT_IDEAL);
    rs_replay_opts o = *op;
    rs_replay *r = NULL;
    rs_err err;
    int rc;
    if (sched) {
        rs_fault_config fc;
        rs_fault_config_default(&fc);
        snprintf(fc.schedule, sizeof fc.schedule, "%s", sched);
        rc = rs_net_faults_start(net, &fc, &err);
        if (rc != RS_OK)
            fprintf(stderr, "\n  rs_net_faults_start: %s\n", err.msg);
        CU_ASSERT_EQUAL_FATAL(rc, RS_OK);
    }
    rc = rs_replay_create(t, net, &o, &r, &err);
    if (rc != RS_OK)
        fprintf(stderr, "\n  rs_replay_create: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, RS_OK);
    res.progress0 = rs_replay_progress(r);
    rs_net_run(net, RS_TIME_MAX);
    res.progress = rs_replay_progress(r);
    res.rc = rs_replay_finish(r, &res.err);
    rs_replay_stats_get(r, &res.st);
    const rs_time *tt = rs_replay_iter_times(r, &res.ntimes);
    for (uint32_t i = 0; i < res.ntimes && i < 8; i++)
        res.times[i] = tt[i];
    /* The second call gives the same answer. */
    rs_err e2;
    CU_ASSERT_EQUAL(rs_replay_finish(r, &e2), res.rc);
    rs_net_destroy(net);
    rs_replay_destroy(r);
    return res;
}

static result replay_sync(const rs_trace *t, uint32_t gpus, uint32_t hb, uint32_t iters, rs_coll_algo algo,
                          const rs_coll_opts *co, const char *sched, rs_replay_sync sync)
{
    rs_replay_opts o;
    rs_replay_opts_default(&o);
    o.iterations = iters;
    o.algo = algo;
    o.coll = co;
    o.sync = sync;
    return replay_with(t, gpus, hb, sched, &o);
}

static result replay_faults(const rs_trace *t, uint32_t gpus, uint32_t hb, uint32_t iters, rs_coll_algo algo,
                            const rs_coll_opts *co, const char *sched)
{
    return replay_sync(t, gpus, hb, iters, algo, co, sched, RS_SYNC_COLLECTIVE);
}

static result replay(const rs_trace *t, uint32_t gpus, uint32_t hb, uint32_t iters, rs_coll_algo algo,
                     const rs_coll_opts *co)
{
    return replay_faults(t, gpus, hb, iters, algo, co, NULL);
}

static rs_trace *gen_plan(const rs_plan *p)
{
    rs_trace *t = NULL;
    rs_err err;
    int rc = rs_gen(p, &t, &err);
    if (rc != RS_OK)
        fprintf(stderr, "\n  rs_gen: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, RS_OK);
    return t;
}

static rs_time program_compute(const rs_trace *t, uint32_t rank)
{
    uint32_t n;
    const rs_op *ops = rs_trace_program(t, rank, &n);
    rs_time s = 0;
    for (uint32_t i = 0; i < n; i++)
        if (ops[i].kind == RS_OP_COMPUTE)
            s += ops[i].duration;
    return s;
}

/* ---- compute only ------------------------------------------------------------------ */

/* test_plan's closed form: one GPU at exactly 1 FLOP per picosecond and 32
 * bytes of HBM per picosecond, so each duration is its FLOP (or parameter)
 * count; the replayed iteration must equal the sum exactly, every
 * iteration, and MFU = model FLOPs / (time x peak). */
static void test_replay_compute_only_plan_matches_flop_model(void)
{
    rs_plan p;
    rs_plan_default(&p);
    p.model = (rs_plan_model){ .layers = 3, .hidden = 64, .ffn = 256, .heads = 4, .kv_heads = 0, .seq_len = 32,
                               .vocab = 100, .precision_bytes = 2 };
    p.par.micro_batch = 2;
    p.par.global_batch = 6; /* 3 micro-batches */
    p.peak_flops = 1e12;
    p.efficiency = 1;
    p.compute = RS_COMPUTE_FLAT; /* the FLOP model's closed form */
    p.mem_bw = 32e12;
    rs_trace *t = gen_plan(&p);
    const uint64_t h = 64, f = 256, s = 32, V = 100, L = 3, m = 3, tok = 2 * 32;
    uint64_t layer = 2 * tok * h * (3 * h) + 4 * tok * s * h + 2 * tok * h * h + 2 * tok * h * f * 2;
    uint64_t logits = 2 * tok * h * V;
    uint64_t params = L * (4 * h * h + 2 * h * f) + 2 * V * h;
    uint64_t expect = m * 3 * (L * layer + logits) + params;

    result r = replay(t, 2, 1, 3, RS_ALGO_AUTO, NULL);
    CU_ASSERT_EQUAL(r.rc, RS_OK);
    /* The progress line's share: none done before the run, all after. */
    CU_ASSERT_DOUBLE_EQUAL(r.progress0, 0.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(r.progress, 1.0, 0);
    CU_ASSERT_EQUAL(r.st.done, 3);
    CU_ASSERT_EQUAL(r.ntimes, 3);
    for (uint32_t i = 0; i < r.ntimes; i++)
        CU_ASSERT_EQUAL(r.times[i], expect);
    CU_ASSERT_EQUAL(r.st.time_ps, expect);
    CU_ASSERT_EQUAL(r.st.compute_ps[0], expect);
    CU_ASSERT_EQUAL(r.st.exposed_ps[2], 0);
    CU_ASSERT(r.st.comm_valid);
    for (int d = 0; d < RS_DIM_COUNT; d++)
        CU_ASSERT_EQUAL(r.st.comm_by_dim_ps[d], 0);
    double mfu = (double)(3 * m * (L * layer + logits)) / (double)expect;
    CU_ASSERT_DOUBLE_EQUAL(r.st.mfu, mfu, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(r.st.tokens_per_s, 6.0 * 32 / ((double)expect * 1e-12), 1e-6);
    printf("\n  compute-only: %llu ps per iteration (closed form %llu), MFU %.4f\n",
           (unsigned long long)r.st.time_ps, (unsigned long long)expect, r.st.mfu);
    rs_trace_destroy(t);
}

/* ---- DP + TP against the bandwidth-only closed form --------------------------------- */

/* 16 GPUs in 4 HB domains of 4; TP 2 inside a domain, DP 8 (2 DP ranks per
 * domain: hierarchical AllReduce of 4 domains x 2). One micro-batch per
 * rank and one gradient bucket for the whole model (bucket_bytes larger
 * than the gradients), so nothing overlaps compute:
 *
 *   T = C + (4 L - 1) x A / B_hb + T_dp
 *
 *   C     the rank's compute (forward, backward, logits, optimizer: the
 *         generator's FLOP model, summed from the program);
 *   A / B_hb  one TP AllReduce of A = s h 2 bytes over 2 GPUs: a ring
 *         moves 2(n-1)/n A = A per GPU at the NVLink payload rate B_hb =
 *         450 GB/s x 65536/65552 (16 bytes per HB unit). 4 per layer; the
 *         last one of the backward runs concurrently with the gradient
 *         AllReduce (the optimizer waits only for that), so 4L - 1 count;
 *   T_dp  hierarchical AllReduce of G gradient bytes, N = 4 domains x
 *         L' = 2 GPUs, in S = min(4, G / 4 MiB) pipelined segments: the
 *         rail phase (a ring AllReduce of G / L' over N GPUs: 2(N-1)/N
 *         G / L' per NIC at B_nic = 400 Gb/s x 4096/4178) carries every
 *         segment; the first segment's in-domain ReduceScatter and the
 *         last one's AllGather ((L'-1)/L' G / S each at B_hb) stick out:
 *         T_dp = 2 (L'-1)/L' G / S / B_hb + 2(N-1)/N G / L' / B_nic.
 *
 * Reductions are free (reduce_gbps 0): the bound counts bandwidth only.
 * Latencies (0.5 us per NVLink crossing, ~2 us per Ethernet path, paid
 * 2(N-1) times per segment by the rail rings, whose segments run one after
 * the other) are not in the bound: ~40 us here, which is why the gradients
 * are ~100 MB (with 27 MB the DP part came out 10 % above its bound). */
static void test_replay_dp_tp_matches_bandwidth_closed_form(void)
{
    rs_plan p;
    rs_plan_default(&p);
    p.model = (rs_plan_model){ .layers = 2, .hidden = 2048, .ffn = 8192, .heads = 16, .kv_heads = 0,
                               .seq_len = 2048, .vocab = 1024, .precision_bytes = 2 };
    p.par.tp = 2;
    p.par.dp = 8;
    p.par.micro_batch = 1;
    p.par.global_batch = 8;
    p.par.bucket_bytes = 1ull << 40;
    rs_trace *t = gen_plan(&p);
    rs_coll_opts co;
    rs_coll_opts_default(&co);
    co.reduce_gbps = 0;
    result r = replay(t, 16, 4, 1, RS_ALGO_HIERARCHICAL, &co);
    CU_ASSERT_EQUAL_FATAL(r.rc, RS_OK);

    /* The gradient bucket's size, from the program (the one DP op). */
    uint32_t n;
    const rs_op *ops = rs_trace_program(t, 0, &n);
    uint64_t G = 0;
    uint32_t ntp = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (ops[i].kind == RS_OP_COLL && ops[i].dim == RS_DIM_DP)
            G += ops[i].bytes;
        if (ops[i].kind == RS_OP_COLL && ops[i].dim == RS_DIM_TP)
            ntp++;
    }
    CU_ASSERT_EQUAL(ntp, 4 * 2);
    double A = 2048.0 * 2048 * 2;
    double Bhb = 3600e9 / 8 * 65536.0 / 65552.0, Bnic = 400e9 / 8 * 4096.0 / 4178.0;
    double S = G / (4.0 * MiB) >= 4 ? 4 : floor(G / (4.0 * MiB));
    double N = 4, Lp = 2;
    double C = (double)program_compute(t, 0) * 1e-12;
    double tp = (ntp - 1) * A / Bhb;
    double dp = 2 * (Lp - 1) / Lp * G / S / Bhb + 2 * (N - 1) / N * G / Lp / Bnic;
    double bound = C + tp + dp;
    double got = (double)r.st.time_ps * 1e-12;
    printf("\n  DP+TP: %.1f us, closed form %.1f us (compute %.1f + TP %.1f + DP %.1f; G = %.1f MB): ratio %.4f;"
           " exposed %.1f us: tp %.1f dp %.1f other %.1f\n",
           got * 1e6, bound * 1e6, C * 1e6, tp * 1e6, dp * 1e6, G / 1e6, got / bound,
           (double)r.st.exposed_ps[0] / 1e6, (double)r.st.comm_by_dim_ps[RS_DIM_TP] / 1e6,
           (double)r.st.comm_by_dim_ps[RS_DIM_DP] / 1e6, (double)r.st.comm_by_dim_ps[RS_DIM_NONE] / 1e6);
    CU_ASSERT(got >= bound * 0.99);
    CU_ASSERT(got <= bound * 1.03);
    /* Every rank computes the same; what is not compute is TP and DP wait. */
    CU_ASSERT_EQUAL(r.st.compute_ps[1], r.st.compute_ps[2]);
    rs_time by = 0;
    for (int d = 0; d < RS_DIM_COUNT; d++)
        by += r.st.comm_by_dim_ps[d];
    CU_ASSERT(by + 4 >= r.st.exposed_ps[0] && by <= r.st.exposed_ps[0] + 4);
    CU_ASSERT(r.st.comm_by_dim_ps[RS_DIM_DP] > r.st.comm_by_dim_ps[RS_DIM_TP]);
    CU_ASSERT(fabs((double)r.st.comm_by_dim_ps[RS_DIM_TP] * 1e-12 - tp) < 0.05 * tp);
    CU_ASSERT(fabs((double)r.st.comm_by_dim_ps[RS_DIM_DP] * 1e-12 - dp) < 0.05 * dp);
    CU_ASSERT_EQUAL(r.st.comm_by_dim_ps[RS_DIM_PP] + r.st.comm_by_dim_ps[RS_DIM_CP] + r.st.comm_by_dim_ps[RS_DIM_EP], 0);
    rs_trace_destroy(t);
}

/* ---- strong scaling ------------------------------------------------------------------ */

/* The same global batch (8 sequences) on 2 and on 8 GPUs with ZeRO-3: each
 * GPU computes 4x less but still gathers every layer's parameters each
 * pass (the AllGather's output is the whole layer whatever the DP size,
 * and a ring moves (n-1)/n of it per GPU), so the exposed share of the
 * iteration rises and the throughput per GPU falls. */
static void test_replay_strong_scaling_zero3_exposes_more_communication(void)
{
    double share[2], per_gpu[2];
    uint32_t sizes[2] = { 2, 8 };
    for (int i = 0; i < 2; i++) {
        rs_plan p;
        rs_plan_default(&p);
        p.model = (rs_plan_model){ .layers = 4, .hidden = 512, .ffn = 2048, .heads = 8, .kv_heads = 0,
                                   .seq_len = 1024, .vocab = 1024, .precision_bytes = 2 };
        p.par.zero = 3;
        p.par.micro_batch = 1;
        p.par.global_batch = 8;
        rs_err err;
        CU_ASSERT_EQUAL_FATAL(rs_plan_set_gpus(&p, sizes[i], &err), RS_OK);
        rs_trace *t = gen_plan(&p);
        result r = replay(t, 8, 1, 1, RS_ALGO_AUTO, NULL);
        CU_ASSERT_EQUAL_FATAL(r.rc, RS_OK);
        share[i] = (double)r.st.exposed_ps[0] / (double)r.st.time_ps;
        per_gpu[i] = r.st.tokens_per_s / sizes[i];
        printf("\n  ZeRO-3 on %u GPUs: %.1f us, compute %.1f us, exposed %.1f us (%.1f %%, dp %.1f us), "
               "%.0f tokens/s per GPU, MFU %.3f",
               sizes[i], (double)r.st.time_ps / 1e6, (double)r.st.compute_ps[0] / 1e6,
               (double)r.st.exposed_ps[0] / 1e6, 100 * share[i], (double)r.st.comm_by_dim_ps[RS_DIM_DP] / 1e6,
               per_gpu[i], r.st.mfu);
        rs_trace_destroy(t);
    }
    printf("\n");
    CU_ASSERT(share[1] > share[0]);
    CU_ASSERT(per_gpu[1] < per_gpu[0]);
}

/* ---- hand-built traces ----------------------------------------------------------------- */

static rs_op op_compute(uint32_t label, rs_time ps, uint32_t d0)
{
    return (rs_op){ RS_OP_COMPUTE, RS_DIM_NONE, 0, 0, RS_NONE, label, { d0, RS_NONE }, 0, ps };
}

static rs_op op_comm(rs_op_kind k, rs_dim dim, rs_coll_op c, uint8_t stream, uint32_t slot, uint32_t label,
                     uint64_t bytes, uint32_t d0)
{
    return (rs_op){ (uint8_t)k, (uint8_t)dim, k == RS_OP_COLL ? (uint8_t)c : 0, stream, slot, label,
                    { d0, RS_NONE }, bytes, 0 };
}

static uint32_t str(rs_trace *t, const char *s)
{
    uint32_t id;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_trace_add_string(t, s, &id, &err), RS_OK);
    return id;
}

/* A collective that ranks 2 and 3 never call: ranks 0 and 1 stop at it;
 * the diagnosis names them, the op (index, kind, label) and the missing
 * ranks, in one sentence. */
static void test_replay_collective_missing_members_is_diagnosed(void)
{
    rs_trace *t;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_trace_create(4, 1, &t, &err), RS_OK);
    uint32_t lc = str(t, "fwd"), la = str(t, "grad allreduce");
    uint32_t members[4] = { 0, 1, 2, 3 }, comm;
    CU_ASSERT_EQUAL_FATAL(rs_trace_add_comm(t, RS_DIM_DP, members, 4, &comm, &err), RS_OK);
    rs_op a[3] = { op_compute(lc, 1000000, RS_NONE),
                   op_comm(RS_OP_COLL, RS_DIM_DP, RS_COLL_ALLREDUCE, 4, 0, la, MiB, 0),
                   op_compute(lc, 1000000, 1) };
    rs_op b[1] = { op_compute(lc, 1000000, RS_NONE) };
    uint32_t ca, cb;
    CU_ASSERT_EQUAL_FATAL(rs_trace_add_class(t, a, 3, &ca, &err), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_trace_add_class(t, b, 1, &cb, &err), RS_OK);
    for (uint32_t r = 0; r < 4; r++)
        CU_ASSERT_EQUAL_FATAL(rs_trace_set_rank(t, r, r, r < 2 ? ca : cb, &comm, &err), RS_OK);
    rs_trace_iter it = { 0 };
    CU_ASSERT_EQUAL_FATAL(rs_trace_set_info(t, &it, 4, "broken", &err), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_trace_finish(t, &err), RS_OK);

    result r = replay(t, 4, 1, 1, RS_ALGO_AUTO, NULL);
    printf("\n  %s\n", r.err.msg);
    /* Members joining one by one: the same diagnosis after the time (the
     * members that issued it started their parts, moved what they could
     * between themselves, 9.504 us here, and wait). */
    result rk = replay_sync(t, 4, 1, 1, RS_ALGO_AUTO, NULL, NULL, RS_SYNC_RANK);
    CU_ASSERT_EQUAL(rk.rc, RS_EINCOMPLETE);
    printf("  rank sync: %s\n", rk.err.msg);
    const char *da = strstr(r.err.msg, " us: "), *db = strstr(rk.err.msg, " us: ");
    CU_ASSERT_FATAL(da != NULL && db != NULL);
    CU_ASSERT_STRING_EQUAL(db, da);
    CU_ASSERT_EQUAL(r.rc, RS_EINCOMPLETE);
    CU_ASSERT_EQUAL(r.st.done, 0);
    /* Of 8 ops (ranks 0, 1: 3 each; ranks 2, 3: 1 each) 4 completed: the
     * first compute of each rank. Stuck ranks never reach 1. */
    CU_ASSERT_DOUBLE_EQUAL(r.progress, 0.5, 1e-12);
    CU_ASSERT(!r.st.bound_valid); /* no iteration: no bound per iteration */
    CU_ASSERT(strstr(r.err.msg, "2 of 4 ranks") != NULL);
    CU_ASSERT(strstr(r.err.msg, "rank 0 is stuck at op 1 (coll \"grad allreduce\"") != NULL);
    CU_ASSERT(strstr(r.err.msg, "rank 1 is stuck at op 1") != NULL);
    CU_ASSERT(strstr(r.err.msg, "waiting for ranks 2, 3") != NULL);
    CU_ASSERT(strchr(r.err.msg, '\n') == NULL);
    rs_trace_destroy(t);

    /* The communicator's first members are the ones that never issue it:
     * under rank its calls are named from the members that do. */
    CU_ASSERT_EQUAL_FATAL(rs_trace_create(4, 1, &t, &err), RS_OK);
    lc = str(t, "fwd");
    la = str(t, "grad allreduce");
    CU_ASSERT_EQUAL_FATAL(rs_trace_add_comm(t, RS_DIM_DP, members, 4, &comm, &err), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_trace_add_class(t, a, 3, &ca, &err), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_trace_add_class(t, b, 1, &cb, &err), RS_OK);
    for (uint32_t q = 0; q < 4; q++)
        CU_ASSERT_EQUAL_FATAL(rs_trace_set_rank(t, q, q, q < 2 ? cb : ca, &comm, &err), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_trace_set_info(t, &it, 4, "broken", &err), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_trace_finish(t, &err), RS_OK);
    rk = replay_sync(t, 4, 1, 1, RS_ALGO_AUTO, NULL, NULL, RS_SYNC_RANK);
    CU_ASSERT_EQUAL(rk.rc, RS_EINCOMPLETE);
    CU_ASSERT(strstr(rk.err.msg, "rank 2 is stuck at op 1 (coll \"grad allreduce\"") != NULL);
    CU_ASSERT(strstr(rk.err.msg, "waiting for ranks 0, 1") != NULL);
    rs_trace_destroy(t);
}

/* Two ranks that each receive before they send: a cycle across ranks. */
static void test_replay_recv_cycle_is_diagnosed(void)
{
    rs_trace *t;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_trace_create(2, 1, &t, &err), RS_OK);
    uint32_t lr = str(t, "recv first"), ls = str(t, "send second");
    rs_op p[2] = { op_comm(RS_OP_RECV, RS_DIM_PP, 0, 7, 0, lr, 4096, RS_NONE),
                   op_comm(RS_OP_SEND, RS_DIM_PP, 0, 6, 0, ls, 4096, 0) };
    uint32_t cls;
    CU_ASSERT_EQUAL_FATAL(rs_trace_add_class(t, p, 2, &cls, &err), RS_OK);
    uint32_t peer0 = 1, peer1 = 0;
    CU_ASSERT_EQUAL_FATAL(rs_trace_set_rank(t, 0, 0, cls, &peer0, &err), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_trace_set_rank(t, 1, 1, cls, &peer1, &err), RS_OK);
    rs_trace_iter it = { 0 };
    CU_ASSERT_EQUAL_FATAL(rs_trace_set_info(t, &it, 2, "cycle", &err), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_trace_finish(t, &err), RS_OK);
    result r = replay(t, 2, 1, 1, RS_ALGO_AUTO, NULL);
    printf("\n  %s\n", r.err.msg);
    CU_ASSERT_EQUAL(r.rc, RS_EINCOMPLETE);
    CU_ASSERT(strstr(r.err.msg, "rank 0 is stuck at op 0 (recv \"recv first\"") != NULL);
    CU_ASSERT(strstr(r.err.msg, "from rank 1") != NULL);
    CU_ASSERT(strstr(r.err.msg, "rank 1 is stuck at op 0") != NULL);
    rs_trace_destroy(t);
}

/* Rank 0 computes 10 us and sends 1 MiB (then 1000 bytes) to rank 1, which
 * receives the first, computes 10 us, then 30 us, then receives the second
 * (it arrived long before: buffered, the receive completes at once). Rank
 * 1's compute stream idles for rank 0's compute plus the message: charged
 * to pp. Rank 0 idles at the end for rank 1's compute: "other". In the
 * second iteration rank 0 has run ahead (it started when its own sends
 * were delivered), so rank 1 finds its message waiting and the iteration
 * takes exactly rank 1's 40 us of compute. */
static void test_replay_send_recv_pairs_and_charges_pp(void)
{
    rs_trace *t;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_trace_create(2, 1, &t, &err), RS_OK);
    uint32_t l = str(t, "x");
    rs_time us = 1000000;
    rs_op p0[3] = { op_compute(l, 10 * us, RS_NONE), op_comm(RS_OP_SEND, RS_DIM_PP, 0, 6, 0, l, MiB, 0),
                    op_comm(RS_OP_SEND, RS_DIM_PP, 0, 6, 0, l, 1000, 0) };
    rs_op p1[4] = { op_comm(RS_OP_RECV, RS_DIM_PP, 0, 7, 0, l, MiB, RS_NONE), op_compute(l, 10 * us, 0),
                    op_compute(l, 30 * us, RS_NONE), op_comm(RS_OP_RECV, RS_DIM_PP, 0, 7, 0, l, 1000, 2) };
    uint32_t c0, c1, peer0 = 1, peer1 = 0;
    CU_ASSERT_EQUAL_FATAL(rs_trace_add_class(t, p0, 3, &c0, &err), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_trace_add_class(t, p1, 4, &c1, &err), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_trace_set_rank(t, 0, 0, c0, &peer0, &err), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_trace_set_rank(t, 1, 1, c1, &peer1, &err), RS_OK);
    rs_trace_iter it = { .tokens = 100, .model_flops = 0, .peak_flops = 1e15 };
    CU_ASSERT_EQUAL_FATAL(rs_trace_set_info(t, &it, 2, "p2p", &err), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_trace_finish(t, &err), RS_OK);

    result r = replay(t, 2, 1, 2, RS_ALGO_AUTO, NULL);
    CU_ASSERT_EQUAL_FATAL(r.rc, RS_OK);
    CU_ASSERT_EQUAL(r.st.done, 2);
    /* Message time: 1 MiB at the NIC payload rate plus the path's latency. */
    double msg = MiB / (400e9 / 8 * 4096.0 / 4178.0) * 1e12;
    rs_time T = r.times[0];
    printf("\n  p2p: iteration %.3f us (10 + message %.3f + 10 + 30 us), then %.3f us\n", T / 1e6,
           msg / 1e6, r.times[1] / 1e6);
    CU_ASSERT(T > 10 * us + (rs_time)msg + 40 * us);
    CU_ASSERT(T < 10 * us + (rs_time)msg + 40 * us + 5 * us);
    CU_ASSERT_EQUAL(r.times[1], 40 * us);
    /* Rank 1: compute 40 us, idle = waited for the first message. */
    CU_ASSERT_EQUAL(r.st.compute_ps[1], 10 * us);
    CU_ASSERT_EQUAL(r.st.compute_ps[2], 40 * us);
    CU_ASSERT(r.st.comm_valid);
    rs_time by = 0;
    for (int d = 0; d < RS_DIM_COUNT; d++)
        by += r.st.comm_by_dim_ps[d];
    CU_ASSERT(by + 2 >= r.st.exposed_ps[0] && by <= r.st.exposed_ps[0] + 2);
    CU_ASSERT(r.st.comm_by_dim_ps[RS_DIM_PP] > 0);
    CU_ASSERT(r.st.comm_by_dim_ps[RS_DIM_NONE] > 0);
    CU_ASSERT(r.st.mfu == 0); /* no model FLOPs in this trace */
    /* Both ranks take part in both messages: each iteration's bound is
     * their NIC time, 256 full frames of 4178 wire bytes and 1000 bytes
     * at 4178/4096 of 20 ps per byte, rounded up. */
    CU_ASSERT(r.st.bound_valid);
    CU_ASSERT_EQUAL(r.st.bound_ps, 256ull * 4178 * 20 + (1000ull * 4178 * 20 + 4095) / 4096);
    CU_ASSERT_EQUAL(r.st.bound_rank, 0);
    CU_ASSERT(r.st.bound_ps <= r.times[0]);
    rs_trace_destroy(t);
}

/* Members that disagree on a collective's size stop the run naming it. */
static void test_replay_mismatched_collective_is_an_error(void)
{
    rs_trace *t;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_trace_create(2, 1, &t, &err), RS_OK);
    uint32_t l = str(t, "ar");
    uint32_t members[2] = { 0, 1 }, comm;
    CU_ASSERT_EQUAL_FATAL(rs_trace_add_comm(t, RS_DIM_TP, members, 2, &comm, &err), RS_OK);
    rs_op a[1] = { op_comm(RS_OP_COLL, RS_DIM_TP, RS_COLL_ALLREDUCE, 1, 0, l, 1024, RS_NONE) };
    rs_op b[1] = { op_comm(RS_OP_COLL, RS_DIM_TP, RS_COLL_ALLREDUCE, 1, 0, l, 2048, RS_NONE) };
    uint32_t ca, cb;
    CU_ASSERT_EQUAL_FATAL(rs_trace_add_class(t, a, 1, &ca, &err), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_trace_add_class(t, b, 1, &cb, &err), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_trace_set_rank(t, 0, 0, ca, &comm, &err), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_trace_set_rank(t, 1, 1, cb, &comm, &err), RS_OK);
    rs_trace_iter it = { 0 };
    CU_ASSERT_EQUAL_FATAL(rs_trace_set_info(t, &it, 2, "mismatch", &err), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_trace_finish(t, &err), RS_OK);
    result r = replay(t, 2, 1, 1, RS_ALGO_AUTO, NULL);
    CU_ASSERT_EQUAL(r.rc, RS_EINVAL);
    CU_ASSERT(strstr(r.err.msg, "rank 1 op 0") != NULL);
    CU_ASSERT(strstr(r.err.msg, "2048") != NULL && strstr(r.err.msg, "1024") != NULL);
    rs_trace_destroy(t);
}

/* A collective NCCL would not run (NVLS forced over two HB domains by
 * nccl.algo, as NCCL_ALGO=NVLS) is refused when the replay is made, at
 * both fidelities and either sync, naming the communicator and the op:
 * not a failure in the middle of the run. workload.algo=nvls applies
 * where it can (inside one domain) and leaves this one to the tuner. */
static void test_replay_refuses_collective_nccl_would_not_run(void)
{
    rs_trace *t;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_trace_create(4, 1, &t, &err), RS_OK);
    uint32_t l = str(t, "grads");
    uint32_t members[4] = { 0, 1, 2, 3 }, comm;
    CU_ASSERT_EQUAL_FATAL(rs_trace_add_comm(t, RS_DIM_DP, members, 4, &comm, &err), RS_OK);
    rs_op a[2] = { op_comm(RS_OP_COLL, RS_DIM_DP, RS_COLL_ALLREDUCE, 1, 0, l, 1024, RS_NONE),
                   op_comm(RS_OP_COLL, RS_DIM_DP, RS_COLL_ALLREDUCE, 1, 0, l, 1024, RS_NONE) };
    uint32_t ca;
    CU_ASSERT_EQUAL_FATAL(rs_trace_add_class(t, a, 2, &ca, &err), RS_OK);
    for (uint32_t i = 0; i < 4; i++)
        CU_ASSERT_EQUAL_FATAL(rs_trace_set_rank(t, i, i, ca, &comm, &err), RS_OK);
    rs_trace_iter it = { 0 };
    CU_ASSERT_EQUAL_FATAL(rs_trace_set_info(t, &it, 4, "nvls across domains", &err), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_trace_finish(t, &err), RS_OK);
    for (int k = 0; k < 8; k++) {
        int flow = k & 1, rank = k >> 1 & 1, forced = !(k >> 2);
        rs_net_config c;
        rs_net_config_default(&c);
        c.gpus = 4;
        c.hb_size = 2;
        c.fidelity = flow ? RS_FIDELITY_FLOW : RS_FIDELITY_PACKET;
        c.nccl.model = RS_NCCL_NCCL;
        c.nccl.algo = forced ? RS_NCCL_ALGO_NVLS : RS_NCCL_ALGO_AUTO;
        rs_net *net = rs_fx_net(&c);
        rs_replay_opts o;
        rs_replay_opts_default(&o);
        o.algo = forced ? RS_ALGO_AUTO : RS_ALGO_NVLS;
        o.sync = rank ? RS_SYNC_RANK : RS_SYNC_COLLECTIVE;
        rs_replay *r = NULL;
        int rc = rs_replay_create(t, net, &o, &r, &err);
        if (forced) {
            CU_ASSERT_EQUAL(rc, RS_EINVAL);
            CU_ASSERT(r == NULL);
            CU_ASSERT(strstr(err.msg, "communicator 0") != NULL && strstr(err.msg, "allreduce of 1024 bytes") != NULL);
            CU_ASSERT(strstr(err.msg, "NCCL would not run allreduce with nvls") != NULL);
        } else {
            CU_ASSERT_EQUAL(rc, RS_OK);
            rs_net_run(net, RS_TIME_MAX);
            CU_ASSERT_EQUAL(rs_replay_finish(r, &err), RS_OK);
        }
        rs_replay_destroy(r);
        rs_net_destroy(net);
    }
    rs_trace_destroy(t);
}

/* A trace for more GPUs than the network has is refused at create. */
static void test_replay_refuses_trace_larger_than_network(void)
{
    rs_plan p;
    rs_plan_default(&p);
    p.par.dp = 4;
    p.par.global_batch = 4;
    rs_trace *t = gen_plan(&p);
    rs_net *net = mk_net(2, 1, RS_TRANSPORT_IDEAL);
    rs_replay_opts o;
    rs_replay_opts_default(&o);
    o.iterations = 1;
    o.algo = RS_ALGO_AUTO;
    o.coll = NULL;
    rs_replay *r = NULL;
    rs_err err;
    CU_ASSERT_EQUAL(rs_replay_create(t, net, &o, &r, &err), RS_EINVAL);
    CU_ASSERT(r == NULL);
    CU_ASSERT(strstr(err.msg, "4 GPUs") != NULL && strstr(err.msg, "has 2") != NULL);
    o.iterations = 0;
    CU_ASSERT_EQUAL(rs_replay_create(t, net, &o, &r, &err), RS_EINVAL);
    rs_net_destroy(net);
    rs_trace_destroy(t);
}

/* rs_workload_load: a plan's DP fills the network; errors name the key. */
static void test_replay_workload_load_fills_dp_and_names_keys(void)
{
    rs_workload_config c;
    rs_workload_config_default(&c);
    rs_trace *t = NULL;
    rs_err err;
    snprintf(c.plan, sizeof c.plan, "llama2-70b"); /* tp 8, pp 4 */
    CU_ASSERT_EQUAL(rs_workload_load(&c, 64, &t, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_trace_nranks(t), 64);
    CU_ASSERT_EQUAL(rs_trace_iteration(t)->dp, 2);
    /* From shapes on the plan's H100 by default; on the system's GPU when
     * the plan names none; workload.compute=flat at the plan's 0.5. */
    double e_h100 = rs_trace_iteration(t)->efficiency;
    CU_ASSERT(e_h100 > 0.5 && e_h100 < 0.81);
    CU_ASSERT_DOUBLE_EQUAL(rs_trace_iteration(t)->peak_flops, 989e12, 1);
    rs_trace_destroy(t);
    snprintf(c.gpu, sizeof c.gpu, "a100");
    CU_ASSERT_EQUAL_FATAL(rs_workload_load(&c, 64, &t, &err), RS_OK);
    CU_ASSERT_DOUBLE_EQUAL(rs_trace_iteration(t)->peak_flops, 312e12, 1);
    rs_gpu g;
    CU_ASSERT_EQUAL(rs_workload_gpu(&c, &g, &err), RS_OK);
    CU_ASSERT_STRING_EQUAL(g.name, "a100");
    rs_trace_destroy(t);
    c.compute = RS_WCOMPUTE_FLAT;
    CU_ASSERT_EQUAL_FATAL(rs_workload_load(&c, 64, &t, &err), RS_OK);
    CU_ASSERT_DOUBLE_EQUAL(rs_trace_iteration(t)->efficiency, 0.5, 0);
    rs_trace_destroy(t);
    c.compute = RS_WCOMPUTE_PLAN;
    c.gpu[0] = '\0';
    CU_ASSERT_EQUAL(rs_workload_load(&c, 48, &t, &err), RS_EINVAL);
    CU_ASSERT(strncmp(err.msg, "workload.plan: ", 15) == 0 && strstr(err.msg, "48") != NULL);
    snprintf(c.trace, sizeof c.trace, "x.rst");
    CU_ASSERT_EQUAL(rs_workload_load(&c, 64, &t, &err), RS_EINVAL);
    CU_ASSERT(strstr(err.msg, "workload.plan and workload.trace") != NULL);
    c.plan[0] = '\0';
    snprintf(c.trace, sizeof c.trace, "/nonexistent/x.rst");
    CU_ASSERT_EQUAL(rs_workload_load(&c, 64, &t, &err), RS_EIO);
    CU_ASSERT(strncmp(err.msg, "workload.trace: ", 16) == 0);
    CU_ASSERT(t == NULL);
}

/* workload.placement: packed keeps GPU g; spread spaces whole domains;
 * fragmented with no partial domains takes whole ones, with every domain
 * partial none whole; random and fragmented draw from the seed alone;
 * every mode gives distinct GPUs of the cluster; lists are read in rank
 * order and checked; the job's ranks move onto the chosen GPUs. */
static int distinct_below(const uint32_t *g, uint32_t n, uint32_t N)
{
    uint8_t seen[256] = { 0 };
    for (uint32_t i = 0; i < n; i++) {
        if (g[i] >= N || seen[g[i]])
            return 0;
        seen[g[i]] = 1;
    }
    return 1;
}

static void test_replay_placement(void)
{
    uint32_t g[64], h[64];
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_placement_gpus("packed", 16, 64, 8, 0.5, 1, g, &err), RS_OK);
    for (uint32_t i = 0; i < 16; i++)
        CU_ASSERT_EQUAL(g[i], i);
    CU_ASSERT_EQUAL_FATAL(rs_placement_gpus("spread", 16, 64, 8, 0.5, 1, g, &err), RS_OK);
    for (uint32_t i = 0; i < 16; i++)
        CU_ASSERT_EQUAL(g[i], i < 8 ? i : 32 + i - 8);
    for (int s = 0; s < 2; s++) {
        CU_ASSERT_EQUAL_FATAL(rs_placement_gpus("fragmented", 24, 64, 8, s ? 1.0 : 0.0, 7, g, &err), RS_OK);
        CU_ASSERT(distinct_below(g, 24, 64));
        uint32_t per[8] = { 0 }, whole = 0;
        for (uint32_t i = 0; i < 24; i++)
            per[g[i] / 8]++;
        for (uint32_t d = 0; d < 8; d++)
            whole += per[d] == 8;
        CU_ASSERT_EQUAL(whole, s ? 0 : 3);
        for (uint32_t i = 1; i < 24; i++)
            CU_ASSERT(g[i] > g[i - 1]); /* a scheduler's ascending list */
    }
    CU_ASSERT_EQUAL(rs_placement_gpus("fragmented", 60, 64, 8, 1.0, 7, g, &err), RS_EINVAL);
    CU_ASSERT(strstr(err.msg, "workload.fragmentation") != NULL);
    for (int k = 0; k < 2; k++) {
        const char *m = k ? "random" : "fragmented";
        CU_ASSERT_EQUAL_FATAL(rs_placement_gpus(m, 32, 64, 8, 0.5, 3, g, &err), RS_OK);
        CU_ASSERT_EQUAL_FATAL(rs_placement_gpus(m, 32, 64, 8, 0.5, 3, h, &err), RS_OK);
        CU_ASSERT(distinct_below(g, 32, 64));
        CU_ASSERT(memcmp(g, h, 32 * sizeof *g) == 0);
        CU_ASSERT_EQUAL_FATAL(rs_placement_gpus(m, 32, 64, 8, 0.5, 4, h, &err), RS_OK);
        CU_ASSERT(memcmp(g, h, 32 * sizeof *g) != 0);
    }
    uint32_t n;
    CU_ASSERT_EQUAL(rs_placement_size("8-11,0-3", 0, 64, &n, &err), RS_OK);
    CU_ASSERT_EQUAL(n, 8);
    CU_ASSERT_EQUAL_FATAL(rs_placement_gpus("8-11,0-3", 8, 64, 8, 0.5, 1, g, &err), RS_OK);
    CU_ASSERT(g[0] == 8 && g[3] == 11 && g[4] == 0 && g[7] == 3);
    CU_ASSERT_EQUAL(rs_placement_size("0-3", 8, 64, &n, &err), RS_EINVAL);
    CU_ASSERT(strstr(err.msg, "workload.gpus is 8") != NULL);
    CU_ASSERT_EQUAL(rs_placement_size("packed", 0, 64, &n, &err), RS_OK);
    CU_ASSERT_EQUAL(n, 64);
    CU_ASSERT_EQUAL(rs_placement_size("spread", 128, 64, &n, &err), RS_EINVAL);
    CU_ASSERT(strncmp(err.msg, "workload.gpus: ", 15) == 0);
    static const char *const bad[] = { "3-1", "0-64", "0,,1", "x", "1-", NULL };
    for (int i = 0; bad[i]; i++) {
        CU_ASSERT_EQUAL(rs_placement_size(bad[i], 0, 64, &n, &err), RS_EINVAL);
        CU_ASSERT(strncmp(err.msg, "workload.placement: ", 20) == 0);
    }
    CU_ASSERT_EQUAL(rs_placement_gpus("0-3,2", 5, 64, 8, 0.5, 1, g, &err), RS_EINVAL);
    CU_ASSERT(strstr(err.msg, "GPU 2 listed twice") != NULL);
    /* The ranks of a 16-GPU job spread over a 64-GPU cluster. */
    rs_workload_config c;
    rs_workload_config_default(&c);
    snprintf(c.plan, sizeof c.plan, "demo-dense");
    snprintf(c.placement, sizeof c.placement, "spread");
    c.gpus = 16;
    rs_trace *t = NULL;
    CU_ASSERT_EQUAL_FATAL(rs_workload_load(&c, 16, &t, &err), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_workload_place(&c, 64, 8, 1, t, &err), RS_OK);
    for (uint32_t r = 0; r < rs_trace_nranks(t); r++)
        CU_ASSERT_EQUAL(rs_trace_rank_gpu(t, r), r < 8 ? r : 32 + r - 8);
    rs_trace_destroy(t);
}

/* A shared cluster (rs_placement_gpus_free): with nothing taken every
 * mode places as rs_placement_gpus does; with earlier jobs' GPUs taken,
 * packed and spread take whole free domains only, fragmented and random
 * step over taken GPUs, a list naming a taken GPU is refused, and too
 * few free GPUs is one clear error. */
static void test_replay_placement_shared(void)
{
    uint32_t g[64], h[64];
    uint8_t taken[64] = { 0 };
    rs_err err;
    static const char *const modes[] = { "packed", "spread", "fragmented", "random" };
    for (int m = 0; m < 4; m++) {
        CU_ASSERT_EQUAL_FATAL(rs_placement_gpus(modes[m], 24, 64, 8, 0.5, 9, g, &err), RS_OK);
        CU_ASSERT_EQUAL_FATAL(rs_placement_gpus_free(modes[m], 24, 64, 8, 0.5, 9, taken, h, &err), RS_OK);
        CU_ASSERT(memcmp(g, h, 24 * sizeof *g) == 0);
    }
    /* GPUs 0-11 (domain 0 and half of domain 1) and 40 are an earlier job's. */
    for (uint32_t i = 0; i < 12; i++)
        taken[i] = 1;
    taken[40] = 1;
    CU_ASSERT_EQUAL_FATAL(rs_placement_gpus_free("packed", 16, 64, 8, 0.5, 1, taken, g, &err), RS_OK);
    for (uint32_t i = 0; i < 16; i++)
        CU_ASSERT_EQUAL(g[i], 16 + i); /* domains 2 and 3: the first whole free ones */
    CU_ASSERT_EQUAL_FATAL(rs_placement_gpus_free("spread", 16, 64, 8, 0.5, 1, taken, g, &err), RS_OK);
    for (uint32_t i = 0; i < 16; i++)
        CU_ASSERT(!taken[g[i]] && g[i] / 8 != 5);
    CU_ASSERT_EQUAL(rs_placement_gpus_free("packed", 48, 64, 8, 0.5, 1, taken, g, &err), RS_EINVAL);
    CU_ASSERT(strstr(err.msg, "6 whole free HB domains") != NULL && strstr(err.msg, "has 5") != NULL);
    for (int m = 2; m < 4; m++) {
        uint32_t n = m == 2 ? 24 : 48; /* fragmented leaves part of each partial domain */
        CU_ASSERT_EQUAL_FATAL(rs_placement_gpus_free(modes[m], n, 64, 8, 0.5, 3, taken, g, &err), RS_OK);
        CU_ASSERT(distinct_below(g, n, 64));
        for (uint32_t i = 0; i < n; i++)
            CU_ASSERT(!taken[g[i]]);
    }
    CU_ASSERT_EQUAL(rs_placement_gpus_free("random", 52, 64, 8, 0.5, 3, taken, g, &err), RS_EINVAL);
    CU_ASSERT(strstr(err.msg, "the 51 free") != NULL);
    CU_ASSERT_EQUAL(rs_placement_gpus_free("12-15,40", 5, 64, 8, 0.5, 3, taken, g, &err), RS_EINVAL);
    CU_ASSERT(strstr(err.msg, "GPU 40 is an earlier job's") != NULL);
    CU_ASSERT_EQUAL(rs_placement_gpus_free("12-15,41", 5, 64, 8, 0.5, 3, taken, g, &err), RS_OK);
}

/* A small pipeline + TP + DP plan (1F1B, 4 micro-batches) replays to the
 * end, the same way twice, and iterations after the first are no longer
 * than the first (ranks run ahead into the next iteration). */
/* A small pipeline: 4 layers, tp 2, pp 2, dp 2, ZeRO-1, 8 micro-batches
 * of 1 sequence. */
static rs_trace *gen_pipeline(void)
{
    rs_plan p;
    rs_plan_default(&p);
    p.model.layers = 4;
    p.par.tp = 2;
    p.par.pp = 2;
    p.par.dp = 2;
    p.par.zero = 1;
    p.par.micro_batch = 1;
    p.par.global_batch = 8;
    return gen_plan(&p);
}

static void test_replay_pipeline_plan_is_deterministic(void)
{
    rs_trace *t = gen_pipeline();
    result a = replay(t, 8, 4, 3, RS_ALGO_AUTO, NULL);
    result b = replay(t, 8, 4, 3, RS_ALGO_AUTO, NULL);
    CU_ASSERT_EQUAL_FATAL(a.rc, RS_OK);
    CU_ASSERT_EQUAL(a.st.done, 3);
    CU_ASSERT_EQUAL(memcmp(a.times, b.times, sizeof a.times), 0);
    CU_ASSERT_EQUAL(memcmp(a.st.comm_by_dim_ps, b.st.comm_by_dim_ps, sizeof a.st.comm_by_dim_ps), 0);
    CU_ASSERT(a.times[1] <= a.times[0] && a.times[2] <= a.times[0]);
    CU_ASSERT(a.st.comm_by_dim_ps[RS_DIM_PP] > 0);
    CU_ASSERT(a.st.comm_by_dim_ps[RS_DIM_TP] > 0);
    printf("\n  pp2 tp2 dp2: %.3f, %.3f, %.3f us; exposed mean %.3f us (tp %.3f pp %.3f dp %.3f other %.3f)\n",
           a.times[0] / 1e6, a.times[1] / 1e6, a.times[2] / 1e6, a.st.exposed_ps[0] / 1e6,
           a.st.comm_by_dim_ps[RS_DIM_TP] / 1e6, a.st.comm_by_dim_ps[RS_DIM_PP] / 1e6,
           a.st.comm_by_dim_ps[RS_DIM_DP] / 1e6, a.st.comm_by_dim_ps[RS_DIM_NONE] / 1e6);
    rs_trace_destroy(t);
}


/* ---- workload.sync=rank ------------------------------------------------------------ */

/* 4 ranks, one GPU each, compute 100 us + 50 us x rank, an AllReduce of
 * 4 MiB over all four, compute 100 us. Collective sync: the AllReduce
 * starts at 250 us and ends for everyone at once. Rank sync: each rank's
 * part starts at its issue, but an AllReduce needs everyone's data, so no
 * rank gets past the last issue plus a piece's way round; the iteration
 * is the collective one up to the buffers' posting (a few us). The same
 * bytes twice. The pipeline plan of the test above runs its three
 * iterations within 10% of the collective sync. rank is the default. */
static void test_replay_rank_sync_members_start_and_end_on_their_own(void)
{
    rs_trace *t;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_trace_create(4, 1, &t, &err), RS_OK);
    uint32_t lc = str(t, "fwd"), la = str(t, "grad allreduce");
    uint32_t members[4] = { 0, 1, 2, 3 }, comm, cls[4];
    CU_ASSERT_EQUAL_FATAL(rs_trace_add_comm(t, RS_DIM_DP, members, 4, &comm, &err), RS_OK);
    for (uint32_t r = 0; r < 4; r++) {
        rs_op a[3] = { op_compute(lc, (100 + 50 * (rs_time)r) * 1000000, RS_NONE),
                       op_comm(RS_OP_COLL, RS_DIM_DP, RS_COLL_ALLREDUCE, 4, 0, la, 4 * MiB, 0),
                       op_compute(lc, 100000000, 1) };
        CU_ASSERT_EQUAL_FATAL(rs_trace_add_class(t, a, 3, &cls[r], &err), RS_OK);
        CU_ASSERT_EQUAL_FATAL(rs_trace_set_rank(t, r, r, cls[r], &comm, &err), RS_OK);
    }
    rs_trace_iter it = { 0 };
    CU_ASSERT_EQUAL_FATAL(rs_trace_set_info(t, &it, 4, "skew", &err), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_trace_finish(t, &err), RS_OK);
    result c = replay_sync(t, 4, 1, 1, RS_ALGO_RING, NULL, NULL, RS_SYNC_COLLECTIVE);
    result r1 = replay_sync(t, 4, 1, 1, RS_ALGO_RING, NULL, NULL, RS_SYNC_RANK);
    result r2 = replay_sync(t, 4, 1, 1, RS_ALGO_RING, NULL, NULL, RS_SYNC_RANK);
    CU_ASSERT_EQUAL_FATAL(c.rc, RS_OK);
    CU_ASSERT_EQUAL_FATAL(r1.rc, RS_OK);
    CU_ASSERT_EQUAL(r1.st.done, 1);
    CU_ASSERT_EQUAL(memcmp(&r1.st, &r2.st, sizeof r1.st), 0);
    printf("\n  skewed issue: collective sync %.3f us, rank sync %.3f us", c.times[0] / 1e6, r1.times[0] / 1e6);
    CU_ASSERT(r1.times[0] > 350 * (rs_time)1000000);
    CU_ASSERT(r1.times[0] >= c.times[0]);
    CU_ASSERT(r1.times[0] <= c.times[0] + 10 * (rs_time)1000000);
    rs_trace_destroy(t);

    t = gen_pipeline();
    c = replay_sync(t, 8, 4, 3, RS_ALGO_AUTO, NULL, NULL, RS_SYNC_COLLECTIVE);
    r1 = replay_sync(t, 8, 4, 3, RS_ALGO_AUTO, NULL, NULL, RS_SYNC_RANK);
    CU_ASSERT_EQUAL_FATAL(r1.rc, RS_OK);
    CU_ASSERT_EQUAL(r1.st.done, 3);
    printf("; pp2 tp2 dp2: collective %.3f us, rank %.3f us per iteration\n", c.st.time_ps / 1e6,
           r1.st.time_ps / 1e6);
    CU_ASSERT(r1.st.time_ps < c.st.time_ps * 1.1 && r1.st.time_ps > c.st.time_ps * 0.9);

    /* rank is the default, of the replay's options and of the workload keys. */
    rs_replay_opts o;
    rs_replay_opts_default(&o);
    CU_ASSERT_EQUAL(o.sync, RS_SYNC_RANK);
    rs_workload_config w;
    rs_workload_config_default(&w);
    CU_ASSERT_EQUAL(w.sync, RS_SYNC_RANK);
    rs_trace_destroy(t);
}

/* ---- stragglers ------------------------------------------------------------------- */

/* Four ranks, each a compute op of C ps on stream 0 and an AllReduce of
 * 1 MiB on stream 4 that waits for it (ar_dep 0) or starts beside it
 * (RS_NONE). */
static rs_trace *compute_allreduce_trace_hbm(rs_time C, uint64_t hbm, uint32_t ar_dep, const char *name);
static rs_trace *compute_allreduce_trace(rs_time C, uint32_t ar_dep, const char *name)
{
    return compute_allreduce_trace_hbm(C, 0, ar_dep, name);
}

/* The same with `hbm` bytes of the compute op in memory-bound kernels. */
static rs_trace *compute_allreduce_trace_hbm(rs_time C, uint64_t hbm, uint32_t ar_dep, const char *name)
{
    rs_trace *t;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_trace_create(4, 1, &t, &err), RS_OK);
    uint32_t lc = str(t, "fwd"), la = str(t, "grad allreduce");
    uint32_t members[4] = { 0, 1, 2, 3 }, comm, ca;
    CU_ASSERT_EQUAL_FATAL(rs_trace_add_comm(t, RS_DIM_DP, members, 4, &comm, &err), RS_OK);
    rs_op a[2] = { op_compute(lc, C, RS_NONE),
                   op_comm(RS_OP_COLL, RS_DIM_DP, RS_COLL_ALLREDUCE, 4, 0, la, MiB, ar_dep) };
    a[0].bytes = hbm;
    CU_ASSERT_EQUAL_FATAL(rs_trace_add_class(t, a, 2, &ca, &err), RS_OK);
    for (uint32_t r = 0; r < 4; r++)
        CU_ASSERT_EQUAL_FATAL(rs_trace_set_rank(t, r, r, ca, &comm, &err), RS_OK);
    rs_trace_iter it = { 0 };
    CU_ASSERT_EQUAL_FATAL(rs_trace_set_info(t, &it, 4, name, &err), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_trace_finish(t, &err), RS_OK);
    return t;
}

/* 4 ranks, one GPU each: compute 100 us, then an AllReduce of 1 MiB over
 * all four (synchronous: it starts when the last member issues it). A
 * straggler on GPU 2 delays its issue, and everyone waits: the iteration
 * grows by exactly the straggler's extra compute. Window over the whole op
 * at factor 1.5: +50 us. Window [20 us, 70 us) at 1.5: the 50 us of the
 * window do 33.333333 us of work (floor, in ps), so the op ends 50 us -
 * 33.333333 us later than it would. */
static void test_replay_straggler_lengthens_synchronous_iteration(void)
{
    rs_time us = 1000000, C = 100 * us;
    rs_trace *t = compute_allreduce_trace(C, 0, "straggle");

    result r0 = replay(t, 4, 1, 1, RS_ALGO_RING, NULL);
    result r1 = replay_faults(t, 4, 1, 1, RS_ALGO_RING, NULL, "0 straggler=1.5 gpu2 1ms");
    result r2 = replay_faults(t, 4, 1, 1, RS_ALGO_RING, NULL, "20us straggler=1.5 gpu2 50us");
    result r3 = replay_faults(t, 4, 1, 2, RS_ALGO_RING, NULL, "0 straggler gpu0 1s");
    CU_ASSERT_EQUAL_FATAL(r0.rc, RS_OK);
    CU_ASSERT_EQUAL_FATAL(r1.rc, RS_OK);
    CU_ASSERT_EQUAL_FATAL(r2.rc, RS_OK);
    CU_ASSERT_EQUAL_FATAL(r3.rc, RS_OK);
    rs_time extra1 = C / 2;                                        /* (1.5 - 1) x 100 us */
    rs_time extra2 = 50 * us - (rs_time)((unsigned __int128)50 * us * 1000000 / 1500000);
    printf("\n  straggler: %.6f us fault-free; gpu2 x1.5 whole op %.6f us (+%.6f); x1.5 for 20-70 us %.6f us "
           "(+%.6f); gpu0 x2 two iterations %.6f + %.6f us\n", r0.times[0] / 1e6, r1.times[0] / 1e6,
           extra1 / 1e6, r2.times[0] / 1e6, extra2 / 1e6, r3.times[0] / 1e6, r3.times[1] / 1e6);
    CU_ASSERT_EQUAL(r1.times[0], r0.times[0] + extra1);
    CU_ASSERT_EQUAL(r2.times[0], r0.times[0] + extra2);
    /* The network-only bound does not see compute: a ring AllReduce's
     * 2 (n-1)/n MiB per NIC, 384 full frames, with or without the
     * straggler. */
    CU_ASSERT_EQUAL(r0.st.bound_ps, 384ull * 4178 * 20);
    CU_ASSERT_EQUAL(r1.st.bound_ps, r0.st.bound_ps);
    CU_ASSERT_EQUAL(r3.st.bound_ps, r0.st.bound_ps);
    /* Default factor 2, both iterations inside the window. */
    CU_ASSERT_EQUAL(r3.times[0], r0.times[0] + C);
    CU_ASSERT_EQUAL(r3.times[1], r0.times[0] + C);
    /* The straggler's compute stream was busy longer: compute max grows,
     * min stays, and its exposed time does not absorb the stretch. */
    CU_ASSERT_EQUAL(r1.st.compute_ps[1], C);
    CU_ASSERT_EQUAL(r1.st.compute_ps[2], C + extra1);
    CU_ASSERT_EQUAL(r1.st.exposed_ps[1], r0.st.exposed_ps[1]);
    rs_trace_destroy(t);
}

/* Contention (docs/compute.md): with half the SMs held by the AllReduce,
 * the compute beside it runs at half pace while it runs, so it ends A/2
 * late (A: the AllReduce's time, measured alone beside a 1 ps compute);
 * the time added is contention_ps. Power: busy all the time is the busy
 * power; alone, the AllReduce's time is communication only. */
static void test_replay_contention_slows_overlapped_compute(void)
{
    rs_time us = 1000000, C = 100 * us;
    rs_gpu g = *rs_gpu_find("h100");
    rs_replay_opts o;
    rs_replay_opts_default(&o);
    o.algo = RS_ALGO_RING;
    rs_trace *t = compute_allreduce_trace(C, RS_NONE, "overlap"), *t1 = compute_allreduce_trace(1, RS_NONE, "alone");
    result off = replay_with(t, 4, 1, NULL, &o);
    o.gpu = &g;
    o.coll_ctas = g.sms / 2;
    result on = replay_with(t, 4, 1, NULL, &o);
    result alone = replay_with(t1, 4, 1, NULL, &o);
    CU_ASSERT_EQUAL_FATAL(off.rc, RS_OK);
    CU_ASSERT_EQUAL_FATAL(on.rc, RS_OK);
    CU_ASSERT_EQUAL_FATAL(alone.rc, RS_OK);
    rs_time A = alone.times[0];
    printf("\n  contention: compute %.3f us alone, AllReduce %.3f us alone; side by side at half the SMs "
           "%.3f us (+%.3f)\n", C / 1e6, A / 1e6, on.times[0] / 1e6, on.st.contention_ps / 1e6);
    CU_ASSERT(A > 0 && A < C);
    CU_ASSERT_EQUAL(off.times[0], C);
    CU_ASSERT_EQUAL(off.st.contention_ps, 0);
    CU_ASSERT(llabs((long long)on.times[0] - (long long)(C + A / 2)) <= 2);
    CU_ASSERT(llabs((long long)on.st.contention_ps - (long long)(A / 2)) <= 2);
    CU_ASSERT_EQUAL(on.st.compute_ps[0], on.times[0]);
    CU_ASSERT_EQUAL(on.st.comm_only_ps, 0);
    CU_ASSERT_FATAL(on.st.power_valid);
    CU_ASSERT_DOUBLE_EQUAL(on.st.power_w, g.busy_w, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(on.st.energy_j, 4 * g.busy_w * on.times[0] * 1e-12, 1e-15);
    CU_ASSERT_STRING_EQUAL(on.st.gpu, "h100");
    /* Alone: 1 ps of compute, at half pace once the AllReduce starts
     * beside it (2 ps), the rest communication only. */
    CU_ASSERT_EQUAL(alone.st.comm_only_ps, A - 2);
    CU_ASSERT_DOUBLE_EQUAL(alone.st.power_w, (g.busy_w * 2 + g.comm_w * (double)(A - 2)) / (double)A, 1e-9);
    rs_trace_destroy(t);
    rs_trace_destroy(t1);
}

/* HBM contention (docs/compute.md, "Contention"): a compute op whose
 * time is all memory-bound (its bytes at the GPU's streaming rate R fill
 * it) beside an AllReduce across GPUs whose NIC rate is R/4 loses half
 * its HBM bandwidth (R/4 read to send, R/4 written as received), so it
 * runs at half pace while the AllReduce runs, as with half the SMs, and
 * the SMs no longer matter to it; half memory-bound and no SMs held:
 * 1.5 times as long while they overlap; without the rates nothing. */
static void test_replay_hbm_contention_slows_memory_bound_compute(void)
{
    rs_time us = 1000000, C = 100 * us;
    rs_gpu g = *rs_gpu_find("h100");
    double R = g.mem_bw * g.mem_eff, Cs = (double)C * 1e-12;
    rs_replay_opts o;
    rs_replay_opts_default(&o);
    o.algo = RS_ALGO_RING;
    o.gpu = &g;
    rs_trace *t1 = compute_allreduce_trace(1, RS_NONE, "alone");
    result alone = replay_with(t1, 4, 1, NULL, &o);
    CU_ASSERT_EQUAL_FATAL(alone.rc, RS_OK);
    rs_time A = alone.times[0];
    rs_trace *full = compute_allreduce_trace_hbm(C, (uint64_t)(R * Cs), RS_NONE, "memory-bound");
    rs_trace *half = compute_allreduce_trace_hbm(C, (uint64_t)(R * Cs / 2), RS_NONE, "half");
    result none = replay_with(full, 4, 1, NULL, &o);
    o.hb_size = 1;
    o.hb_Bps = 1e12;
    o.nic_Bps = R / 4;
    o.coll_ctas = g.sms / 2;
    result f = replay_with(full, 4, 1, NULL, &o);
    o.coll_ctas = 0;
    result h = replay_with(half, 4, 1, NULL, &o);
    CU_ASSERT_EQUAL_FATAL(none.rc, RS_OK);
    CU_ASSERT_EQUAL_FATAL(f.rc, RS_OK);
    CU_ASSERT_EQUAL_FATAL(h.rc, RS_OK);
    printf("\n  hbm contention: AllReduce %.3f us; memory-bound compute beside it %.3f us (+%.3f), half of it "
           "memory-bound %.3f us (+%.3f)\n", A / 1e6, f.times[0] / 1e6, f.st.contention_ps / 1e6, h.times[0] / 1e6,
           h.st.contention_ps / 1e6);
    CU_ASSERT_EQUAL(none.times[0], C);
    CU_ASSERT_EQUAL(none.st.contention_ps, 0);
    CU_ASSERT(llabs((long long)f.times[0] - (long long)(C + A / 2)) <= 2);
    CU_ASSERT(llabs((long long)f.st.contention_ps - (long long)(A / 2)) <= 2);
    CU_ASSERT(llabs((long long)h.times[0] - (long long)(C + A / 3)) <= 2);
    rs_trace_destroy(t1);
    rs_trace_destroy(full);
    rs_trace_destroy(half);
}

/* Jitter: the same seed draws the same times, another seed others; the
 * iteration stays near the nominal; above 1 is refused. */
static void test_replay_jitter_is_seeded(void)
{
    rs_time us = 1000000, C = 100 * us;
    rs_trace *t = compute_allreduce_trace(C, RS_NONE, "overlap");
    rs_replay_opts o;
    rs_replay_opts_default(&o);
    o.algo = RS_ALGO_RING;
    o.jitter = 0.1;
    o.seed = 1;
    result a = replay_with(t, 4, 1, NULL, &o), b = replay_with(t, 4, 1, NULL, &o);
    o.seed = 2;
    result c = replay_with(t, 4, 1, NULL, &o);
    CU_ASSERT_EQUAL_FATAL(a.rc, RS_OK);
    CU_ASSERT_EQUAL_FATAL(c.rc, RS_OK);
    printf("\n  jitter 0.1: seed 1 %.3f us (compute %.3f-%.3f), again %.3f, seed 2 %.3f us\n", a.times[0] / 1e6,
           a.st.compute_ps[1] / 1e6, a.st.compute_ps[2] / 1e6, b.times[0] / 1e6, c.times[0] / 1e6);
    CU_ASSERT_EQUAL(a.times[0], b.times[0]);
    CU_ASSERT_NOT_EQUAL(a.times[0], c.times[0]);
    CU_ASSERT(a.st.compute_ps[1] < a.st.compute_ps[2]); /* ranks drew differently */
    CU_ASSERT(a.times[0] > C / 2 && a.times[0] < 2 * C);
    rs_net *net = mk_net(4, 1, RS_TRANSPORT_IDEAL);
    rs_replay *r = NULL;
    rs_err err;
    o.jitter = 1.5;
    CU_ASSERT_EQUAL(rs_replay_create(t, net, &o, &r, &err), RS_EINVAL);
    CU_ASSERT_PTR_NULL(r);
    CU_ASSERT(strstr(err.msg, "workload.jitter") != NULL);
    rs_net_destroy(net);
    rs_trace_destroy(t);
}

/* rs_compute_end directly: outside, inside, across and overlapping
 * windows; other GPUs untouched; no schedule = start + duration. */
static void test_replay_compute_end_integrates_straggler_windows(void)
{
    rs_net *net = mk_net(4, 1, RS_TRANSPORT_IDEAL);
    rs_time us = 1000000;
    CU_ASSERT_EQUAL(rs_compute_end(net, 1, 5 * us, 10 * us), 15 * us);
    rs_fault_config fc;
    rs_fault_config_default(&fc);
    snprintf(fc.schedule, sizeof fc.schedule, "10us straggler=2 gpu1 10us; 15us straggler=3 gpu1 10us");
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_net_faults_start(net, &fc, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_compute_end(net, 0, 0, 30 * us), 30 * us);     /* other GPU */
    CU_ASSERT_EQUAL(rs_compute_end(net, 1, 0, 5 * us), 5 * us);       /* before */
    CU_ASSERT_EQUAL(rs_compute_end(net, 1, 30 * us, 5 * us), 35 * us); /* after */
    CU_ASSERT_EQUAL(rs_compute_end(net, 1, 10 * us, 2 * us), 14 * us); /* inside x2 */
    /* From 0, 20 us of work: 0-10 us at x1 does 10 us, 10-15 at x2 2.5 us,
     * 15-20 at x6 (both windows) 0.833333 us, 20-25 at x3 1.666666 us (ps
     * floors): w of work by 25 us, the rest at x1 after it. */
    rs_time w = 10 * us + 25 * us / 10 + 5 * us / 6 + 5 * us / 3;
    CU_ASSERT_EQUAL(rs_compute_end(net, 1, 0, 20 * us), 25 * us + (20 * us - w));
    rs_net_destroy(net);
}

/* -- a split replay's part, pack and merge (docs/parallel.md, "Replays") -- */

/* One layer of DP 8 over 8 GPUs under workload.sync=rank, rings, run as
 * rank 0 of the stand-in communicator (standin.h: rank 1 never runs and
 * ends with an empty end-of-run message), so rank 0's members stall where
 * their rings wait for rank 1's. Rank 0 then packs its part
 * (rs_replay_part_pack; a copy in *own, *nown bytes, when own is not
 * NULL) and merges {its part, p1 of n1 bytes} (p1 NULL: its own part
 * again) with rs_replay_part_finish, whose code is returned; the replay
 * is finished after it, as a run does, whatever the merge said. */
static int merge_with(const void *p1, size_t n1, unsigned char **own, size_t *nown)
{
    rs_plan p;
    rs_plan_default(&p);
    p.model.layers = 1;
    p.par.dp = 8;
    p.par.global_batch = 8;
    rs_trace *t = gen_plan(&p);
    rs_net *net = rs_standin_bare_net();
    CU_ASSERT_PTR_NOT_NULL_FATAL(net);
    rs_err err;
    rs_replay_opts o;
    rs_replay_opts_default(&o);
    o.sync = RS_SYNC_RANK;
    o.algo = RS_ALGO_RING;
    rs_replay *r = NULL;
    CU_ASSERT_EQUAL_FATAL(rs_replay_create(t, net, &o, &r, &err), RS_OK);
    char why[256];
    CU_ASSERT_FATAL(rs_replay_splits(r, why, sizeof why));
    char tail[RS_STANDIN_TAIL];
    rs_standin s = { NULL, 0, tail, rs_standin_empty_tail(tail), 0 };
    CU_ASSERT_EQUAL_FATAL(rs_standin_start(net, &s), RS_OK);
    /* Rank 1's silence is no wire error; the run ends with records of
     * rank 0's still held for it (RS_EINTERNAL from the idle check), the
     * replay's part as it stands then. */
    CU_ASSERT_NOT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_EFORMAT);
    void *mine = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(rs_replay_part_pack(r, &mine, &n), RS_OK);
    const void *all[2] = { mine, p1 ? p1 : mine };
    size_t len[2] = { n, p1 ? n1 : n };
    int rc = rs_replay_part_finish(r, all, len, 2, NULL);
    (void)rs_replay_finish(r, &err); /* diagnoses the stalled ranks from what was merged */
    if (own) {
        *own = mine;
        *nown = n;
    } else {
        free(mine);
    }
    rs_replay_destroy(r);
    rs_net_destroy(net);
    rs_trace_destroy(t);
    return rc;
}

/* Rank 0's own part read as rank 1's is well formed (its ranks' layout
 * is the replay's), so it merges. A part cut short, or running on, is
 * refused (RS_EINVAL). A part with one byte changed is merged or
 * refused, never read past or used to index past what the replay has
 * (the sanitizer build runs this: a rank's last dimension, stream heads
 * and running op, an instance's ops and a transfer's GPU are checked). */
static void test_replay_split_part_reads_back_and_refuses_damage(void)
{
    unsigned char *own = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(merge_with(NULL, 0, &own, &n), RS_OK);
    CU_ASSERT_FATAL(n > 64);
    unsigned char *b = malloc(n + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    size_t cuts[] = { 0, 1, n / 4, n / 2, n - 8, n - 1 };
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
        CU_ASSERT_EQUAL(merge_with(own, cuts[i], NULL, NULL), RS_EINVAL);
    memcpy(b, own, n);
    b[n] = 0;
    CU_ASSERT_EQUAL(merge_with(b, n + 1, NULL, NULL), RS_EINVAL);
    /* Half the bytes, the other half of each next 64 (a rank's record
     * repeats in the part at other offsets: each of its bytes is changed
     * in some rank's): half the runs, which the sanitizer build pays for. */
    uint32_t refused = 0, merged = 0, other = 0;
    for (size_t i = 0; i < n; i++) {
        if ((i + i / 64) % 2)
            continue;
        memcpy(b, own, n);
        b[i] ^= 0xa5;
        int rc = merge_with(b, n, NULL, NULL);
        refused += rc == RS_EINVAL;
        merged += rc == RS_OK;
        other += rc != RS_EINVAL && rc != RS_OK;
    }
    fprintf(stderr, "\n  a %zu-byte part, %u of its bytes changed in turn: %u refused, %u merged\n", n,
            refused + merged + other, refused, merged);
    CU_ASSERT_EQUAL(other, 0);
    CU_ASSERT(refused > 0 && merged > 0);
    free(b);
    free(own);
}

/* ---- the collective driver's iterations (collrun.h) ---------------------- */

typedef struct coll_out {
    rs_time times[4], end, bound;
    uint32_t n;
    rs_coll_algo algo;
    rs_nccl_proto proto;
    double predicted_us, progress;
    int splits;
    char why[200];
    uint32_t done_calls;
    uint64_t done_iters;
} coll_out;

static void coll_job_done(void *ctx, rs_net *net, uint64_t iters)
{
    (void)net;
    coll_out *o = ctx;
    o->done_calls++;
    o->done_iters = iters;
}

/* c run on a 32-GPU fat tree (HB domains of 4, radix 16, RoCE at packet
 * level) under sync, as a lone run or (job) a job on every GPU. */
static coll_out coll_run(const rs_synth_config *c0, rs_replay_sync sync, int job)
{
    coll_out o;
    memset(&o, 0, sizeof o);
    rs_net_config nc;
    rs_fx_config(&nc, 32, 4, 16);
    rs_net *net = rs_fx_net(&nc);
    rs_synth_config c = *c0;
    c.sync = sync;
    uint32_t gpus[32];
    for (uint32_t i = 0; i < 32; i++)
        gpus[i] = i;
    rs_collrun *r = NULL;
    rs_err err;
    int rc = job ? rs_collrun_create_job(&c, net, gpus, 32, 0, coll_job_done, &o, &r, &err)
                 : rs_collrun_create(&c, net, &r, &err);
    if (rc != RS_OK)
        fprintf(stderr, "\n  rs_collrun_create: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, RS_OK);
    o.splits = rs_collrun_splits(r, o.why, sizeof o.why);
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    rs_collrun_finish(r);
    CU_ASSERT_EQUAL(rs_collrun_status(r), RS_OK);
    const rs_time *t = rs_collrun_times(r, &o.n);
    for (uint32_t i = 0; i < o.n && i < 4; i++)
        o.times[i] = t[i];
    o.end = rs_collrun_end_time(r);
    o.bound = rs_collrun_bound(r);
    o.algo = rs_collrun_algo(r);
    o.proto = rs_collrun_proto(r);
    o.predicted_us = rs_collrun_predicted_us(r);
    o.progress = rs_collrun_progress(r);
    rs_net_destroy(net);
    rs_collrun_destroy(r);
    return o;
}

/* Under workload.sync=rank, several iterations (or a hierarchical
 * collective) run as a one-op replay, each GPU issuing the next as its
 * part of the last is done: the times still add up from the start to the
 * last iteration's end, the first iteration's algorithm, protocol and
 * NCCL's prediction and the per-iteration bound are the barrier's, and the
 * run can split (the barrier's iterations cannot). A job's done comes
 * once, with the iterations. */
static void test_collrun_streams_iterations_under_rank_sync(void)
{
    rs_synth_config c;
    rs_synth_config_default(&c);
    CU_ASSERT_EQUAL(c.sync, RS_SYNC_RANK);
    c.kind = RS_SYNTH_COLLECTIVE;
    c.op = RS_COLL_ALLREDUCE;
    c.algo = RS_ALGO_RING;
    c.bytes = 4 * MiB;
    c.iters = 3;
    c.start_ns = 700;
    coll_out s = coll_run(&c, RS_SYNC_RANK, 0), b = coll_run(&c, RS_SYNC_COLLECTIVE, 0);
    printf("\n  ring AllReduce of 4 MiB over 32 GPUs x3: streamed %llu %llu %llu ps, barrier %llu %llu %llu ps\n",
           (unsigned long long)s.times[0], (unsigned long long)s.times[1], (unsigned long long)s.times[2],
           (unsigned long long)b.times[0], (unsigned long long)b.times[1], (unsigned long long)b.times[2]);
    CU_ASSERT(s.n == 3 && b.n == 3);
    CU_ASSERT_EQUAL(s.end, 700000 + s.times[0] + s.times[1] + s.times[2]);
    CU_ASSERT_EQUAL(b.end, 700000 + b.times[0] + b.times[1] + b.times[2]);
    CU_ASSERT(s.algo == RS_ALGO_RING && b.algo == RS_ALGO_RING);
    CU_ASSERT_EQUAL(s.proto, b.proto);
    CU_ASSERT_DOUBLE_EQUAL(s.predicted_us, b.predicted_us, 1e-9);
    CU_ASSERT(s.bound > 0 && (s.bound > b.bound ? s.bound - b.bound : b.bound - s.bound) <= 1);
    CU_ASSERT(s.progress == 1.0 && b.progress == 1.0);
    CU_ASSERT(s.splits);
    CU_ASSERT(!b.splits && strstr(b.why, "traffic.iters=3") != NULL);
    /* A job's: the same times, told once. */
    coll_out j = coll_run(&c, RS_SYNC_RANK, 1);
    CU_ASSERT(j.n == 3 && j.times[2] == s.times[2] && j.done_calls == 1 && j.done_iters == 3);
    /* One iteration of a hierarchical collective streams its phases too. */
    c.algo = RS_ALGO_HIERARCHICAL;
    c.iters = 1;
    s = coll_run(&c, RS_SYNC_RANK, 0);
    b = coll_run(&c, RS_SYNC_COLLECTIVE, 0);
    CU_ASSERT(s.n == 1 && b.n == 1 && s.algo == RS_ALGO_HIERARCHICAL && s.splits);
    CU_ASSERT(!b.splits && strstr(b.why, "hierarchical") != NULL);
    /* Send/recv keeps the barrier: it is no collective a trace carries. */
    c.op = RS_COLL_SENDRECV;
    c.algo = RS_ALGO_AUTO;
    c.iters = 2;
    snprintf(c.group, sizeof c.group, "0,9");
    s = coll_run(&c, RS_SYNC_RANK, 0);
    CU_ASSERT(s.n == 2 && !s.splits && strstr(s.why, "traffic.op sendrecv") != NULL);
}

static const rs_cu_test replay_tests[] = {
    RS_CU_TEST(test_replay_compute_only_plan_matches_flop_model),
    RS_CU_TEST(test_replay_dp_tp_matches_bandwidth_closed_form),
    RS_CU_TEST(test_replay_strong_scaling_zero3_exposes_more_communication),
    RS_CU_TEST(test_replay_collective_missing_members_is_diagnosed),
    RS_CU_TEST(test_replay_recv_cycle_is_diagnosed),
    RS_CU_TEST(test_replay_send_recv_pairs_and_charges_pp),
    RS_CU_TEST(test_replay_mismatched_collective_is_an_error),
    RS_CU_TEST(test_replay_refuses_collective_nccl_would_not_run),
    RS_CU_TEST(test_replay_refuses_trace_larger_than_network),
    RS_CU_TEST(test_replay_workload_load_fills_dp_and_names_keys),
    RS_CU_TEST(test_replay_placement),
    RS_CU_TEST(test_replay_placement_shared),
    RS_CU_TEST(test_replay_pipeline_plan_is_deterministic),
    RS_CU_TEST(test_replay_straggler_lengthens_synchronous_iteration),
    RS_CU_TEST(test_replay_compute_end_integrates_straggler_windows),
    RS_CU_TEST(test_replay_contention_slows_overlapped_compute),
    RS_CU_TEST(test_replay_hbm_contention_slows_memory_bound_compute),
    RS_CU_TEST(test_replay_jitter_is_seeded),
    RS_CU_TEST(test_replay_rank_sync_members_start_and_end_on_their_own),
    RS_CU_TEST(test_replay_split_part_reads_back_and_refuses_damage),
    RS_CU_TEST(test_collrun_streams_iterations_under_rank_sync),
};

static void register_suites(void) { RS_CU_SUITE("replay", replay_tests); }

int main(void) { return rs_cu_run(register_suites); }
