/*
 * test_plan.c - plans (traces/plan.c) and the generator's FLOP model and
 * program structure (traces/gen.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll.h"
#include "cu_main.h"
#include "gen.h"
#include "gpu.h"
#include "plan.h"
#include "trace.h"

/* Write text to a fresh temporary file; returns its path (static buffer). */
static const char *tmp_json(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/rs_test_plan_XXXXXX");
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    size_t n = strlen(text);
    CU_ASSERT_FATAL(write(fd, text, n) == (ssize_t)n);
    close(fd);
    return path;
}

/* Load text as a plan; expect failure with a message containing `needle`. */
static void expect_bad(const char *text, const char *needle)
{
    const char *path = tmp_json(text);
    rs_plan p;
    rs_err err;
    int rc = rs_plan_load(path, &p, &err);
    CU_ASSERT(rc == RS_EINVAL);
    if (!strstr(err.msg, needle) || !strstr(err.msg, path))
        fprintf(stderr, "\n  message lacks '%s' or the file: %s\n", needle, err.msg);
    CU_ASSERT(strstr(err.msg, needle) != NULL);
    CU_ASSERT(strstr(err.msg, path) != NULL);
    CU_ASSERT(strchr(err.msg, '\n') == NULL);
    unlink(path);
}

static void test_plan_presets_load_and_generate(void)
{
    for (const char *const *n = rs_plan_preset_names(); *n; n++) {
        rs_plan p;
        rs_err err;
        CU_ASSERT_EQUAL_FATAL(rs_plan_preset(*n, &p, &err), RS_OK);
        CU_ASSERT_STRING_EQUAL(p.name, *n);
        rs_trace *t = NULL;
        CU_ASSERT_EQUAL(rs_gen(&p, &t, &err), RS_OK);
        CU_ASSERT_PTR_NOT_NULL(t);
        if (t)
            CU_ASSERT_EQUAL(rs_trace_nranks(t), rs_plan_gpus(&p));
        rs_trace_destroy(t);
    }
    rs_plan p;
    rs_err err;
    CU_ASSERT_EQUAL(rs_plan_preset("gpt-2t", &p, &err), RS_EINVAL);
    CU_ASSERT(strstr(err.msg, "gpt-1t") != NULL); /* lists the known ones */
}

static void test_plan_preset_shapes_are_published(void)
{
    rs_plan p;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_plan_preset("gpt-1t", &p, &err), RS_OK);
    CU_ASSERT_EQUAL(p.model.layers, 128);
    CU_ASSERT_EQUAL(p.model.hidden, 25600);
    CU_ASSERT_EQUAL(p.model.heads, 160);
    CU_ASSERT_EQUAL(p.par.tp, 8);
    CU_ASSERT_EQUAL(p.par.pp, 64);
    CU_ASSERT_EQUAL_FATAL(rs_plan_preset("mixtral-8x7b", &p, &err), RS_OK);
    CU_ASSERT_EQUAL(p.model.experts, 8);
    CU_ASSERT_EQUAL(p.model.top_k, 2);
    CU_ASSERT_EQUAL_FATAL(rs_plan_preset("llama2-70b", &p, &err), RS_OK);
    CU_ASSERT_EQUAL(p.model.kv_heads, 8);
    CU_ASSERT_EQUAL(p.model.ffn, 28672);
}

static void test_plan_gpu_presets_have_datasheet_peaks(void)
{
    double peak, bw;
    CU_ASSERT_EQUAL(rs_plan_gpu_peak("a100", &peak, &bw), RS_OK);
    CU_ASSERT_DOUBLE_EQUAL(peak, 312e12, 1);
    CU_ASSERT_EQUAL(rs_plan_gpu_peak("h100", &peak, &bw), RS_OK);
    CU_ASSERT_DOUBLE_EQUAL(peak, 989e12, 1);
    CU_ASSERT_DOUBLE_EQUAL(bw, 3.35e12, 1);
    /* H200: H100's compute, HBM3e at 4.8 TB/s (NVIDIA H200 datasheet). */
    CU_ASSERT_EQUAL(rs_plan_gpu_peak("h200", &peak, &bw), RS_OK);
    CU_ASSERT_DOUBLE_EQUAL(peak, 989e12, 1);
    CU_ASSERT_DOUBLE_EQUAL(bw, 4.8e12, 1);
    CU_ASSERT_EQUAL(rs_plan_gpu_peak("gh200", &peak, &bw), RS_OK);
    CU_ASSERT_DOUBLE_EQUAL(peak, 989e12, 1);
    CU_ASSERT_EQUAL(rs_plan_gpu_peak("b200", &peak, &bw), RS_OK);
    CU_ASSERT_DOUBLE_EQUAL(peak, 2.25e15, 1);
    CU_ASSERT_EQUAL(rs_plan_gpu_peak("mi250x-gcd", &peak, &bw), RS_OK);
    CU_ASSERT_DOUBLE_EQUAL(peak, 191.5e12, 1);
    CU_ASSERT_EQUAL(rs_plan_gpu_peak("tpu", &peak, &bw), RS_EINVAL);
}

/* The kernel model (gpu.h, docs/compute.md): the measured point comes
 * back, one tile past a full wave doubles a GEMM's time, a thin GEMM is
 * memory-bound, attention and streaming at their measured shares. */
static void test_gpu_kernels_roofline_and_waves(void)
{
    const rs_gpu *g = rs_gpu_find("h100");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_PTR_NULL(rs_gpu_find("tpu"));
    CU_ASSERT_EQUAL(g->sms, 132);
    /* cuBLAS at 8192^3: 797.8 TFLOP/s (docs/compute.md). */
    double n = 8192, t = rs_gpu_gemm_s(g, n, n, n, 2);
    CU_ASSERT_DOUBLE_EQUAL(2 * n * n * n / t, 797.8e12, 1e6);
    /* 11 x 12 = 132 tiles of 256 x 128 fill one wave; 7 x 19 = 133 take
     * two (both compute-bound). */
    double one = rs_gpu_gemm_s(g, 256.0 * 11, 128.0 * 12, 8192, 2), two = rs_gpu_gemm_s(g, 256.0 * 7, 128.0 * 19, 8192, 2);
    CU_ASSERT_DOUBLE_EQUAL(two / one, 2.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(rs_gpu_wave_eff(g, 133), 133.0 / 264, 1e-15);
    /* A matrix-vector product moves its bytes at the streaming rate. */
    double mv = rs_gpu_gemm_s(g, 1, 8192, 8192, 2);
    CU_ASSERT_DOUBLE_EQUAL(mv, rs_gpu_stream_s(g, (8192.0 + 8192.0 * 8192 + 8192) * 2), 1e-18);
    CU_ASSERT_DOUBLE_EQUAL(rs_gpu_stream_s(g, 2.97e12), 1.0, 1e-12); /* STREAM triad 2.97 TB/s */
    CU_ASSERT_DOUBLE_EQUAL(rs_gpu_attn_s(g, 327.9e12, 0), 1.0, 1e-12); /* FlashAttention-2 */
    /* The host's launch is a floor; longer kernels pay nothing more. */
    CU_ASSERT_DOUBLE_EQUAL(rs_gpu_launch_s(g, 0), 1.2e-6, 1e-18);
    CU_ASSERT_DOUBLE_EQUAL(rs_gpu_launch_s(g, 1e-3), 1e-3, 1e-18);
    for (const char *const *nm = rs_gpu_names(); *nm; nm++) {
        const rs_gpu *q = rs_gpu_find(*nm);
        CU_ASSERT_PTR_NOT_NULL_FATAL(q);
        CU_ASSERT(q->gemm_meas > 0.5 && q->gemm_meas < 1);
        CU_ASSERT(q->idle_w < q->comm_w && q->comm_w < q->busy_w);
        double peak, bw;
        CU_ASSERT_EQUAL(rs_plan_gpu_peak(*nm, &peak, &bw), RS_OK);
        CU_ASSERT_DOUBLE_EQUAL(peak, q->peak_flops, 0);
    }
}

/* gpu.model=shapes: slower than the flat model at its efficiency 1, the
 * share of peak the trace records is a layer's under the kernel model
 * (below the GEMM's share: attention and streaming are slower), and a
 * plan that names no GPU takes the system's. */
static void test_gen_shapes_model(void)
{
    rs_plan p;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_plan_preset("llama2-7b", &p, &err), RS_OK);
    CU_ASSERT_EQUAL(p.compute, RS_COMPUTE_SHAPES);
    CU_ASSERT_EQUAL_FATAL(rs_plan_set_gpus(&p, 8, &err), RS_OK);
    rs_trace *t;
    CU_ASSERT_EQUAL_FATAL(rs_gen(&p, &t, &err), RS_OK);
    double e = rs_trace_iteration(t)->efficiency;
    printf("\n  llama2-7b on an H100 from shapes: a layer at %.3f of peak", e);
    CU_ASSERT(e > 0.5 && e < 797.8 / 989);
    rs_trace_destroy(t);
    CU_ASSERT_EQUAL(rs_plan_default_gpu(&p, "a100"), RS_OK);
    CU_ASSERT_STRING_EQUAL(p.gpu_preset, "a100");
    CU_ASSERT_DOUBLE_EQUAL(p.peak_flops, 312e12, 1);
    CU_ASSERT_EQUAL(rs_plan_default_gpu(&p, "v100"), RS_EINVAL);
    CU_ASSERT_STRING_EQUAL(p.gpu_preset, "a100");
    CU_ASSERT_EQUAL_FATAL(rs_gen(&p, &t, &err), RS_OK);
    double ea = rs_trace_iteration(t)->efficiency;
    printf(", on an A100 %.3f\n", ea);
    CU_ASSERT(ea > e); /* FlashAttention-2 reaches more of the A100's peak */
    rs_trace_destroy(t);
    p.gpu_given = 1;
    CU_ASSERT_EQUAL(rs_plan_default_gpu(&p, "b200"), RS_OK);
    CU_ASSERT_STRING_EQUAL(p.gpu_preset, "a100");
}

static void test_plan_validation_names_the_field(void)
{
    expect_bad("{\"preset\":\"llama2-70b\",\"parallelism\":{\"tp\":3}}", "parallelism.tp");
    expect_bad("{\"preset\":\"llama2-70b\",\"parallelism\":{\"pp\":3}}", "parallelism.pp");
    expect_bad("{\"preset\":\"mixtral-8x7b\",\"parallelism\":{\"ep\":16,\"dp\":32}}", "parallelism.ep");
    expect_bad("{\"preset\":\"mixtral-8x7b\",\"parallelism\":{\"ep\":3,\"dp\":33,\"global_batch\":528}}",
               "parallelism.ep");
    expect_bad("{\"preset\":\"llama2-7b\",\"parallelism\":{\"ep\":2}}", "parallelism.ep");
    expect_bad("{\"preset\":\"llama2-7b\",\"parallelism\":{\"global_batch\":1000}}", "parallelism.global_batch");
    expect_bad("{\"preset\":\"llama2-7b\",\"gpus\":100}", "gpus");
    expect_bad("{\"preset\":\"llama2-7b\",\"model\":{\"heads\":30}}", "model.heads");
    expect_bad("{\"model\":{\"layers\":\"many\"}}", "model.layers");
    expect_bad("{\"model\":{\"layers\":0}}", "model.layers");
    expect_bad("{\"parallelism\":{\"zero\":4}}", "parallelism.zero");
    expect_bad("{\"parallelism\":{\"schedule\":\"interleaved\"}}", "parallelism.schedule");
    expect_bad("{\"gpu\":{\"preset\":\"tpu\"}}", "gpu.preset");
    expect_bad("{\"gpu\":{\"efficiency\":1.5}}", "gpu.efficiency");
    expect_bad("{\"model\":{\"layrs\":2}}", "unknown key 'model.layrs'");
    expect_bad("{\"preset\":\"gpt-2t\"}", "preset");
    expect_bad("{\"model\": {\"layers\": 2,}}", ":1:");
    expect_bad("[1]", "expected a JSON object");
    expect_bad("{\"placement\":{\"order\":\"tp,tp\"}}", "placement.order");
    expect_bad("{\"parallelism\":{\"pp\":2},\"placement\":{\"order\":\"tp,dp\"}}", "placement.order");
}

static void test_plan_file_overrides_preset(void)
{
    const char *path = tmp_json("{\"parallelism\":{\"dp\":2,\"global_batch\":4},\"preset\":\"llama2-7b\","
                                "\"gpu\":{\"preset\":\"a100\",\"efficiency\":0.4}}");
    rs_plan p;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_plan_load(path, &p, &err), RS_OK);
    CU_ASSERT_EQUAL(p.model.layers, 32); /* from the preset, although "preset" came later */
    CU_ASSERT_EQUAL(p.par.dp, 2);
    CU_ASSERT_DOUBLE_EQUAL(p.peak_flops, 312e12, 1);
    CU_ASSERT_DOUBLE_EQUAL(p.efficiency, 0.4, 1e-12);
    unlink(path);
}

static void test_plan_set_gpus_keeps_tp_pp_and_fills_dp(void)
{
    rs_plan p;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_plan_preset("gpt-1t", &p, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_plan_set_gpus(&p, 16384, &err), RS_OK);
    CU_ASSERT_EQUAL(p.par.tp, 8);
    CU_ASSERT_EQUAL(p.par.pp, 64);
    CU_ASSERT_EQUAL(p.par.dp, 32);
    CU_ASSERT_EQUAL(rs_plan_gpus(&p), 16384);
    CU_ASSERT_EQUAL(rs_plan_set_gpus(&p, 1000, &err), RS_EINVAL);
    CU_ASSERT(strstr(err.msg, "--gpus") != NULL);
    CU_ASSERT_EQUAL(p.par.dp, 32); /* untouched on failure */
    CU_ASSERT_EQUAL(p.par.global_batch, 3072); /* 96 micro-batches per DP rank: kept */
    /* A count the layout divides but the preset's batch does not: the
     * batch grows to the next multiple of micro_batch x dp (llama2-7b:
     * 1,024 sequences in micro-batches of 2 fill dp 512; at dp 1,024,
     * 2,048); where it divides, it stays. */
    CU_ASSERT_EQUAL_FATAL(rs_plan_preset("llama2-7b", &p, &err), RS_OK);
    rs_plan q = p;
    CU_ASSERT_EQUAL(rs_plan_set_gpus(&q, 512, &err), RS_OK);
    CU_ASSERT_EQUAL(q.par.global_batch, 1024);
    q = p;
    CU_ASSERT_EQUAL(rs_plan_set_gpus(&q, 1024, &err), RS_OK);
    CU_ASSERT_EQUAL(q.par.dp, 1024);
    CU_ASSERT_EQUAL(q.par.global_batch, 2048);
    q = p;
    CU_ASSERT_EQUAL(rs_plan_set_gpus(&q, 1536, &err), RS_OK); /* 1,024 is not a multiple of 2 x 1,536 */
    CU_ASSERT_EQUAL(q.par.global_batch, 3072);
    CU_ASSERT_EQUAL_FATAL(rs_plan_preset("demo-moe", &q, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_plan_set_gpus(&q, 256, &err), RS_OK);
    CU_ASSERT_EQUAL(q.par.dp, 128);
    CU_ASSERT_EQUAL(q.par.global_batch, 128);
    /* A batch the plan file gave stays: the error says which sizes the
     * plan takes. */
    const char *path = tmp_json("{\"preset\": \"llama2-7b\", \"parallelism\": {\"global_batch\": 1024}}");
    CU_ASSERT_EQUAL_FATAL(rs_plan_load(path, &q, &err), RS_OK);
    unlink(path);
    CU_ASSERT_EQUAL(q.batch_of_preset, 0);
    CU_ASSERT_EQUAL(rs_plan_set_gpus(&q, 1024, &err), RS_EINVAL);
    CU_ASSERT(strstr(err.msg, "--gpus 1024: parallelism.global_batch 1024 is 512 micro-batches of 2") != NULL);
    CU_ASSERT(strstr(err.msg, "(at most 512 GPUs)") != NULL);
    CU_ASSERT_EQUAL(q.par.global_batch, 1024); /* untouched on failure */
    /* A file naming the preset without a batch keeps the preset's rule. */
    path = tmp_json("{\"preset\": \"llama2-7b\", \"model\": {\"layers\": 2}}");
    CU_ASSERT_EQUAL_FATAL(rs_plan_load(path, &q, &err), RS_OK);
    unlink(path);
    CU_ASSERT_EQUAL(rs_plan_set_gpus(&q, 1024, &err), RS_OK);
    CU_ASSERT_EQUAL(q.par.global_batch, 2048);
}

/* A compute-only single-GPU plan at exactly 1 FLOP per picosecond and 32
 * bytes of HBM per picosecond: every duration is its FLOP (or parameter)
 * count, so the iteration's compute equals the closed form exactly. */
static void check_closed_form(int recompute)
{
    rs_plan p;
    rs_plan_default(&p);
    p.model = (rs_plan_model){ .layers = 3, .hidden = 64, .ffn = 256, .heads = 4, .kv_heads = 0, .seq_len = 32,
                               .vocab = 100, .precision_bytes = 2 };
    p.par.micro_batch = 2;
    p.par.global_batch = 6; /* 3 micro-batches */
    p.par.recompute = recompute;
    p.peak_flops = 1e12;
    p.efficiency = 1;
    p.compute = RS_COMPUTE_FLAT; /* the FLOP model's closed form */
    p.mem_bw = 32e12;
    rs_trace *t;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_gen(&p, &t, &err), RS_OK);
    const uint64_t h = 64, f = 256, s = 32, V = 100, L = 3, m = 3, tok = 2 * 32;
    uint64_t layer = 2 * tok * h * (3 * h) + 4 * tok * s * h + 2 * tok * h * h + 2 * tok * h * f * 2;
    uint64_t logits = 2 * tok * h * V;
    uint64_t params = L * (4 * h * h + 2 * h * f) + 2 * V * h; /* embedding + output layer */
    uint64_t expect = m * (3 * (L * layer + logits) + (recompute ? L * layer : 0)) + params;
    uint32_t n;
    const rs_op *ops = rs_trace_program(t, 0, &n);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        CU_ASSERT_EQUAL(ops[i].kind, RS_OP_COMPUTE); /* one GPU: nothing to communicate */
        sum += ops[i].duration;
    }
    CU_ASSERT_EQUAL(sum, expect);
    const rs_trace_iter *it = rs_trace_iteration(t);
    CU_ASSERT_DOUBLE_EQUAL(it->model_flops, (double)(3 * m * (L * layer + logits)), 0.5);
    CU_ASSERT_EQUAL(it->tokens, 6 * 32);
    CU_ASSERT_EQUAL(it->micro_batches, 3);
    rs_trace_destroy(t);
}

static void test_gen_compute_only_plan_matches_closed_form(void) { check_closed_form(0); }
static void test_gen_recompute_adds_one_forward(void) { check_closed_form(1); }

/* Count ops of a kind/coll/dim over rank r's program. */
static uint32_t count(const rs_trace *t, uint32_t r, int kind, int coll, int dim)
{
    uint32_t n, k = 0;
    const rs_op *ops = rs_trace_program(t, r, &n);
    for (uint32_t i = 0; i < n; i++)
        if (ops[i].kind == kind && (coll < 0 || ops[i].coll == coll) && (dim < 0 || ops[i].dim == dim))
            k++;
    return k;
}

static void test_gen_communication_per_dimension(void)
{
    rs_plan p;
    rs_err err;
    rs_plan_default(&p);
    p.model.layers = 4;
    p.par.tp = 2;
    p.par.pp = 2;
    p.par.dp = 2;
    p.par.micro_batch = 1;
    p.par.global_batch = 6; /* 3 micro-batches */
    p.par.bucket_bytes = 1; /* one bucket per layer */
    rs_trace *t;
    CU_ASSERT_EQUAL_FATAL(rs_gen(&p, &t, &err), RS_OK);
    /* 2 layers per stage x 3 micro-batches x (2 fwd + 2 bwd) TP AllReduces */
    CU_ASSERT_EQUAL(count(t, 0, RS_OP_COLL, RS_COLL_ALLREDUCE, RS_DIM_TP), 2 * 3 * 4);
    /* one gradient bucket per layer in the last backward */
    CU_ASSERT_EQUAL(count(t, 0, RS_OP_COLL, RS_COLL_ALLREDUCE, RS_DIM_DP), 2);
    /* stage 0 sends activations, receives gradients; stage 1 the reverse */
    CU_ASSERT_EQUAL(count(t, 0, RS_OP_SEND, -1, RS_DIM_PP), 3);
    CU_ASSERT_EQUAL(count(t, 0, RS_OP_RECV, -1, RS_DIM_PP), 3);
    CU_ASSERT_EQUAL(count(t, 4, RS_OP_SEND, -1, RS_DIM_PP), 3);
    /* rank 0 (stage 0) talks to rank 4 (stage 1, same TP and DP position) */
    uint32_t n;
    const rs_op *ops = rs_trace_program(t, 0, &n);
    for (uint32_t i = 0; i < n; i++)
        if (ops[i].kind == RS_OP_SEND)
            CU_ASSERT_EQUAL(rs_trace_op_peer(t, 0, &ops[i]), 4);
    /* the TP communicator of rank 3 is {2, 3}; its DP one {1, 3} */
    ops = rs_trace_program(t, 3, &n);
    for (uint32_t i = 0; i < n; i++) {
        if (ops[i].kind != RS_OP_COLL)
            continue;
        uint32_t k;
        const uint32_t *m = rs_trace_comm_ranks(t, rs_trace_op_comm(t, 3, &ops[i]), &k);
        CU_ASSERT_EQUAL(k, 2);
        if (ops[i].dim == RS_DIM_TP)
            CU_ASSERT(m[0] == 2 && m[1] == 3);
        if (ops[i].dim == RS_DIM_DP)
            CU_ASSERT(m[0] == 1 && m[1] == 3);
    }
    rs_trace_destroy(t);

    /* ZeRO-3: per layer and micro-batch an AllGather forward and backward
     * and a ReduceScatter after backward; MoE: 2 all-to-alls per layer each
     * way; CP: one K/V AllGather forward, one ReduceScatter backward. */
    rs_plan_default(&p);
    p.model.layers = 2;
    p.model.experts = 4;
    p.model.top_k = 2;
    p.par.ep = 2;
    p.par.dp = 4;
    p.par.cp = 2;
    p.par.zero = 3;
    p.par.global_batch = 8; /* 2 micro-batches */
    CU_ASSERT_EQUAL_FATAL(rs_gen(&p, &t, &err), RS_OK);
    CU_ASSERT_EQUAL(count(t, 0, RS_OP_COLL, RS_COLL_ALLTOALL, RS_DIM_EP), 2 * 2 * 4);
    CU_ASSERT_EQUAL(count(t, 0, RS_OP_COLL, RS_COLL_ALLGATHER, RS_DIM_CP), 2 * 2);
    CU_ASSERT_EQUAL(count(t, 0, RS_OP_COLL, RS_COLL_REDUCESCATTER, RS_DIM_CP), 2 * 2);
    /* dense and expert shards: 2 AllGathers x 2 passes, 2 ReduceScatters */
    CU_ASSERT_EQUAL(count(t, 0, RS_OP_COLL, RS_COLL_ALLGATHER, RS_DIM_DP), 2 * 2 * 2 * 2);
    CU_ASSERT_EQUAL(count(t, 0, RS_OP_COLL, RS_COLL_REDUCESCATTER, RS_DIM_DP), 2 * 2 * 2);
    rs_trace_destroy(t);
}

static void test_gen_placement_order_maps_ranks_to_gpus(void)
{
    rs_plan p;
    rs_err err;
    rs_plan_default(&p);
    p.model.layers = 2;
    p.par.tp = 2;
    p.par.dp = 4;
    p.par.global_batch = 4;
    snprintf(p.order, sizeof p.order, "dp,tp");
    rs_trace *t;
    CU_ASSERT_EQUAL_FATAL(rs_gen(&p, &t, &err), RS_OK);
    /* rank = tp + 2 dp; GPU = dp + 4 tp */
    CU_ASSERT_EQUAL(rs_trace_rank_gpu(t, 0), 0);
    CU_ASSERT_EQUAL(rs_trace_rank_gpu(t, 1), 4);
    CU_ASSERT_EQUAL(rs_trace_rank_gpu(t, 2), 1);
    CU_ASSERT_EQUAL(rs_trace_rank_gpu(t, 7), 7);
    rs_trace_destroy(t);
}

static const rs_cu_test plan_tests[] = {
    RS_CU_TEST(test_plan_presets_load_and_generate),
    RS_CU_TEST(test_plan_preset_shapes_are_published),
    RS_CU_TEST(test_plan_gpu_presets_have_datasheet_peaks),
    RS_CU_TEST(test_gpu_kernels_roofline_and_waves),
    RS_CU_TEST(test_plan_validation_names_the_field),
    RS_CU_TEST(test_plan_file_overrides_preset),
    RS_CU_TEST(test_plan_set_gpus_keeps_tp_pp_and_fills_dp),
};

static const rs_cu_test gen_tests[] = {
    RS_CU_TEST(test_gen_compute_only_plan_matches_closed_form),
    RS_CU_TEST(test_gen_recompute_adds_one_forward),
    RS_CU_TEST(test_gen_shapes_model),
    RS_CU_TEST(test_gen_communication_per_dimension),
    RS_CU_TEST(test_gen_placement_order_maps_ranks_to_gpus),
};

static void register_suites(void)
{
    RS_CU_SUITE("plan", plan_tests);
    RS_CU_SUITE("gen", gen_tests);
}

int main(void) { return rs_cu_run(register_suites); }
