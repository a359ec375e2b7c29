/*
 * gen.c - plan -> trace. One program per pipeline stage, built by walking
 * the stage's schedule (1F1B or GPipe) and, for every micro-batch pass,
 * the stage's layers: compute ops on stream 0 and the communication each
 * parallelism dimension issues on its own stream, tied together by
 * dependencies (program.h). Ranks get their stage's program and a slot
 * table naming their TP, CP, EP, DP and expert-DP communicators and their
 * pipeline neighbours.
 *
 * The generator only ever appends ops; an op's deps are earlier ops by
 * construction. Labels name roles ("fwd attn"), never layer or micro-batch
 * numbers, so that the file format can fold the repetition into loops.
 */
#include "gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "coll.h"
#include "gpu.h"

/* Adam with mixed precision touches ~32 bytes of HBM per parameter per step
 * (fp32 master weight, two moments and gradient read, three written, and
 * the bf16 copy): the step is memory-bound, so it is timed at HBM speed. */
#define OPT_BYTES_PER_PARAM 32.0

/* ---- the FLOP model --------------------------------------------------------- */

/* Forward FLOPs of one layer for `q` query tokens attending over `s` keys,
 * matrices split over `div` GPUs (Narayanan et al. 2021, appendix: 2 FLOPs
 * per multiply-add; attention without causal savings as Megatron counts
 * it). Router FLOPs are not split (every TP rank runs it). */
static void block_flops(const rs_plan *p, double q, double s, double div, rs_gen_flops *f)
{
    const rs_plan_model *m = &p->model;
    double h = m->hidden, fdim = m->ffn;
    double kv = m->kv_heads ? m->kv_heads : m->heads;
    double hkv = kv * (h / m->heads);
    double mats = m->gated_mlp ? 3 : 2;
    f->qkv = 2 * q * h * (h + 2 * hkv) / div;
    f->attn_core = 4 * q * s * h / div;
    f->attn_out = 2 * q * h * h / div;
    if (m->experts) {
        f->mlp = 0;
        f->router = 2 * q * h * m->experts;
        f->experts = 2 * q * m->top_k * h * fdim * mats / div;
    } else {
        f->mlp = 2 * q * h * fdim * mats / div;
        f->router = f->experts = 0;
    }
    f->logits = 2 * q * h * m->vocab / div;
}

void rs_gen_flops_of(const rs_plan *p, rs_gen_flops *f)
{
    const rs_plan_model *m = &p->model;
    const rs_plan_par *q = &p->par;
    memset(f, 0, sizeof *f);
    double tok = (double)q->micro_batch * m->seq_len / q->cp;
    block_flops(p, tok, m->seq_len, q->tp, f);
    double h = m->hidden, kv = m->kv_heads ? m->kv_heads : m->heads;
    double hkv = kv * (h / m->heads), mats = m->gated_mlp ? 3 : 2;
    f->layer_params_dense = (h * (h + 2 * hkv) + h * h) / q->tp;
    if (m->experts) {
        f->layer_params_dense += h * m->experts; /* router, replicated */
        f->layer_params_expert = (double)(m->experts / q->ep) * mats * h * m->ffn / q->tp;
    } else {
        f->layer_params_dense += mats * h * m->ffn / q->tp;
    }
    f->embed_params = (double)m->vocab * h / q->tp;
    f->ps_per_flop = 1e12 / (p->peak_flops * p->efficiency);
}

double rs_gen_model_flops(const rs_plan *p)
{
    const rs_plan_model *m = &p->model;
    rs_gen_flops f;
    double seqs = p->par.micro_batch;
    block_flops(p, seqs * m->seq_len, m->seq_len, 1, &f);
    double layer = f.qkv + f.attn_core + f.attn_out + f.mlp + f.router + f.experts;
    double fwd = m->layers * layer + f.logits;
    return 3 * fwd * ((double)p->par.global_batch / p->par.micro_batch);
}

/* ---- the program builder ------------------------------------------------------ */

enum {
    L_FWD_ATTN, L_FWD_QKV, L_FWD_CORE, L_FWD_MLP, L_FWD_ROUTER, L_FWD_EXPERTS, L_FWD_LOGITS,
    L_RC_ATTN, L_RC_QKV, L_RC_CORE, L_RC_MLP, L_RC_ROUTER, L_RC_EXPERTS,
    L_BWD_ATTN, L_BWD_QKV, L_BWD_CORE, L_BWD_MLP, L_BWD_ROUTER, L_BWD_EXPERTS, L_BWD_LOGITS,
    L_OPTIMIZER,
    L_TP_AR, L_CP_AG, L_CP_RS, L_EP_DISPATCH, L_EP_COMBINE,
    L_DP_AR, L_DP_RS, L_EDP_AR, L_EDP_RS, L_DP_AG, L_EDP_AG,
    L_Z3_AG, L_Z3_AG_EXPERT, L_Z3_RS, L_Z3_RS_EXPERT,
    L_PP_SEND_ACT, L_PP_RECV_ACT, L_PP_SEND_GRAD, L_PP_RECV_GRAD,
    NLABELS
};
static const char *const label_text[NLABELS] = {
    "fwd attn", "fwd qkv", "fwd attn core", "fwd mlp", "fwd router", "fwd experts", "fwd logits+loss",
    "recompute attn", "recompute qkv", "recompute attn core", "recompute mlp", "recompute router",
    "recompute experts",
    "bwd attn", "bwd qkv", "bwd attn core", "bwd mlp", "bwd router", "bwd experts", "bwd logits+loss",
    "optimizer step",
    "tp allreduce", "cp kv allgather", "cp dkv reducescatter", "ep dispatch", "ep combine",
    "dp grad bucket allreduce", "dp grad bucket reducescatter", "expert-dp grad bucket allreduce",
    "expert-dp grad bucket reducescatter", "dp param bucket allgather", "expert-dp param bucket allgather",
    "zero3 param allgather", "zero3 expert param allgather", "zero3 grad reducescatter",
    "zero3 expert grad reducescatter",
    "pp send activation", "pp recv activation", "pp send gradient", "pp recv gradient",
};

/* The parts of a layer a compute op is made of: their FLOPs in the flat
 * model, their kernels in the shapes model. */
enum { K_QKV, K_CORE, K_OUT, K_MLP, K_ROUTER, K_EXPERTS, K_LOGITS, NPARTS };
#define PART(k) (1u << (k))

typedef struct gen {
    const rs_plan *p;
    rs_trace *t;
    rs_err *err;
    int rc;
    uint32_t label[NLABELS];
    rs_gen_flops f;
    rs_time kt[2][NPARTS]; /* gpu.model=shapes: part_ps's times */
    uint64_t kb[2][NPARTS]; /* gpu.model=shapes: their streaming kernels' HBM bytes (part_bytes) */
    const rs_gpu *G;       /* gpu.model=shapes: the GPU */
    rs_gpu own;            /* a custom GPU (gpu.peak_flops without gpu.preset) */

    rs_op *ops;
    uint32_t n, cap;

    /* the stage being built */
    uint32_t stage, P, L, m;
    int first, last;
    int has_tp, has_cp, has_ep, has_dp, has_edp;
    uint64_t act_bytes, kv_bytes, a2a_bytes;
    double unit_dense[2], unit_expert[2]; /* [0] inner layer, [1] with embedding/output (bytes) */
    uint32_t lastc; /* last compute op */
    uint32_t in;    /* the op the next compute must wait for (input ready), or RS_NONE */
    uint32_t *ag;   /* zero3: per local layer, the op whose completion means its params are gathered */
    /* buckets (zero 0-2), last micro-batch's backward */
    double acc_dense, acc_expert;
    uint64_t *bucket;  /* emitted bucket sizes: dense, expert pairs */
    uint32_t nbucket, bucket_cap;
} gen;

static uint32_t lbl(gen *g, int id)
{
    if (g->label[id] == RS_NONE && !g->rc)
        g->rc = rs_trace_add_string(g->t, label_text[id], &g->label[id], g->err);
    return g->label[id];
}

static uint32_t emit(gen *g, rs_op o)
{
    if (g->rc)
        return RS_NONE;
    if (g->n == g->cap && g->cap >= (1u << 24)) {
        g->rc = rs_err_set(g->err, RS_EINVAL, "plan %s: a pipeline stage needs more than 16777216 ops "
                           "(fewer micro-batches or layers per stage, please)", g->p->name);
        return RS_NONE;
    }
    if (rs_array_reserve32(&g->ops, &g->cap, g->n + 1, sizeof *g->ops, 1024) != RS_OK) {
        g->rc = rs_err_set(g->err, RS_ENOMEM, "plan %s: out of memory while generating", g->p->name);
        return RS_NONE;
    }
    /* Compact the deps: dep[0] first, no duplicates. */
    if (o.dep[0] == RS_NONE || o.dep[0] == o.dep[1]) {
        o.dep[0] = o.dep[1];
        o.dep[1] = RS_NONE;
    }
    g->ops[g->n] = o;
    return g->n++;
}


/* The shapes model (gpu.model=shapes, docs/compute.md): one pass of a
 * part on one micro-batch, as the kernels a Megatron-style layer runs,
 * each timed by the GPU (gpu.h) and charged its launch; kt[0] forward,
 * kt[1] backward (each GEMM's two GEMMs for the input and the weight
 * gradient, attention's backward kernel, streaming kernels twice their
 * bytes). Seconds. */
typedef struct shapes {
    const rs_gpu *G;
    double b;     /* bytes per element */
    double s[2];  /* seconds accumulating, per pass */
    double mb[2]; /* the streaming kernels' HBM bytes, per pass */
} shapes;

static void k_gemm(shapes *x, double m, double n, double k)
{
    x->s[0] += rs_gpu_launch_s(x->G, rs_gpu_gemm_s(x->G, m, n, k, x->b));
    x->s[1] += rs_gpu_launch_s(x->G, rs_gpu_gemm_s(x->G, m, k, n, x->b)) +
               rs_gpu_launch_s(x->G, rs_gpu_gemm_s(x->G, k, n, m, x->b));
}

/* A streaming kernel touching `elems` elements (reads and writes). */
static void k_stream(shapes *x, double elems)
{
    x->s[0] += rs_gpu_launch_s(x->G, rs_gpu_stream_s(x->G, elems * x->b));
    x->s[1] += rs_gpu_launch_s(x->G, rs_gpu_stream_s(x->G, 2 * elems * x->b));
    x->mb[0] += elems * x->b;
    x->mb[1] += 2 * elems * x->b;
}

/* Causal flash attention: half the score and context FLOPs Megatron
 * counts are computed; the backward kernel does 2.5 times the forward's
 * (FlashAttention-2's count: five matrix products against two). */
static void k_attn(shapes *x, double counted_flops)
{
    double f = counted_flops / 2;
    x->s[0] += rs_gpu_launch_s(x->G, rs_gpu_attn_s(x->G, f, 0));
    x->s[1] += rs_gpu_launch_s(x->G, rs_gpu_attn_s(x->G, 2.5 * f, 1));
}

static void shapes_times(const rs_plan *p, const rs_gpu *G, const rs_gen_flops *f, rs_time kt[2][NPARTS],
                         uint64_t kb[2][NPARTS])
{
    const rs_plan_model *m = &p->model;
    const rs_plan_par *q = &p->par;
    double T = (double)q->micro_batch * m->seq_len / q->cp, t = q->tp;
    double h = m->hidden, ffn = m->ffn;
    double kv = m->kv_heads ? m->kv_heads : m->heads, hkv = kv * (h / m->heads);
    for (int part = 0; part < NPARTS; part++) {
        shapes x = { G, m->precision_bytes, { 0, 0 }, { 0, 0 } };
        switch (part) {
        case K_QKV: /* norm, QKV projection, rotary embedding of q and k */
            k_stream(&x, 2 * T * h);
            k_gemm(&x, T, (h + 2 * hkv) / t, h);
            k_stream(&x, 2 * T * (h + hkv) / t);
            break;
        case K_CORE:
            k_attn(&x, f->attn_core);
            break;
        case K_OUT: /* output projection, residual add */
            k_gemm(&x, T, h, h / t);
            k_stream(&x, 3 * T * h);
            break;
        case K_MLP: /* norm, up (and gate) projection, activation, down projection, residual add */
            if (m->experts)
                break;
            k_stream(&x, 2 * T * h);
            k_gemm(&x, T, (m->gated_mlp ? 2 : 1) * ffn / t, h);
            k_stream(&x, (m->gated_mlp ? 3 : 2) * T * ffn / t);
            k_gemm(&x, T, h, ffn / t);
            k_stream(&x, 3 * T * h);
            break;
        case K_ROUTER: /* norm, router projection, softmax and top-k */
            if (!m->experts)
                break;
            k_stream(&x, 2 * T * h);
            k_gemm(&x, T, m->experts, h);
            k_stream(&x, 2 * T * m->experts);
            break;
        case K_EXPERTS: { /* each local expert's GEMMs on its share of the routed tokens, the combine */
            if (!m->experts)
                break;
            double local = (double)m->experts / q->ep, Te = T * m->top_k / local;
            for (double e = 0; e < local; e++) {
                k_gemm(&x, Te, (m->gated_mlp ? 2 : 1) * ffn / t, h);
                k_stream(&x, (m->gated_mlp ? 3 : 2) * Te * ffn / t);
                k_gemm(&x, Te, h, ffn / t);
            }
            k_stream(&x, (m->top_k + 2) * T * h);
            break;
        }
        case K_LOGITS: /* final norm, output projection, softmax cross-entropy */
            k_stream(&x, 2 * T * h);
            k_gemm(&x, T, m->vocab / t, h);
            k_stream(&x, 3 * T * m->vocab / t);
            break;
        }
        for (int pass = 0; pass < 2; pass++) {
            kt[pass][part] = (rs_time)llround(x.s[pass] * 1e12);
            kb[pass][part] = (uint64_t)llround(x.mb[pass]);
        }
    }
}

/* gpu.model=shapes: the share of peak a layer's forward and backward
 * reach, for the trace's iteration record. */
static double shapes_efficiency(const rs_plan *p, const gen *g)
{
    const rs_gen_flops *f = &g->f;
    double flops = 3 * (f->qkv + f->attn_core + f->attn_out + f->mlp + f->router + f->experts);
    rs_time t = 0;
    for (int k = K_QKV; k <= K_EXPERTS; k++)
        t += g->kt[0][k] + g->kt[1][k];
    double e = t ? flops / (p->peak_flops * (double)t * 1e-12) : 0;
    return e > 0 && e <= 1 ? e : 1;
}

/* The time of the parts in `mask`, forward (bwd 0) or backward. */
static rs_time part_ps(const gen *g, unsigned mask, int bwd)
{
    if (g->p->compute == RS_COMPUTE_FLAT) {
        const rs_gen_flops *f = &g->f;
        const double fl[NPARTS] = { f->qkv, f->attn_core, f->attn_out, f->mlp, f->router, f->experts, f->logits };
        double sum = 0;
        for (int k = 0; k < NPARTS; k++)
            if (mask & PART(k))
                sum += fl[k];
        return (rs_time)llround((bwd ? 2 * sum : sum) * g->f.ps_per_flop);
    }
    rs_time t = 0;
    for (int k = 0; k < NPARTS; k++)
        if (mask & PART(k))
            t += g->kt[bwd][k];
    return t;
}

/* The HBM bytes of the streaming kernels of the parts in `mask` (0 under
 * gpu.model=flat): a compute op's bytes (program.h). */
static uint64_t part_bytes(const gen *g, unsigned mask, int bwd)
{
    uint64_t b = 0;
    if (g->p->compute != RS_COMPUTE_FLAT)
        for (int k = 0; k < NPARTS; k++)
            if (mask & PART(k))
                b += g->kb[bwd][k];
    return b;
}

/* A compute op of `ps`, `hbm` bytes of it in memory-bound kernels. */
static uint32_t compute(gen *g, int label, rs_time ps, uint64_t hbm, uint32_t d0, uint32_t d1)
{
    rs_op o = { RS_OP_COMPUTE, RS_DIM_NONE, 0, RS_STREAM_COMPUTE, RS_NONE, lbl(g, label), { d0, d1 }, hbm, ps };
    g->lastc = emit(g, o);
    g->in = RS_NONE;
    return g->lastc;
}

/* A compute op of the parts in `mask`, forward (bwd 0) or backward. */
static uint32_t compute_parts(gen *g, int label, unsigned mask, int bwd, uint32_t d0, uint32_t d1)
{
    return compute(g, label, part_ps(g, mask, bwd), part_bytes(g, mask, bwd), d0, d1);
}

static uint32_t coll(gen *g, int label, uint8_t stream, rs_dim dim, rs_coll_op c, uint32_t slot, uint64_t bytes,
                     uint32_t d0, uint32_t d1)
{
    rs_op o = { RS_OP_COLL, (uint8_t)dim, (uint8_t)c, stream, slot, lbl(g, label), { d0, d1 }, bytes, 0 };
    return emit(g, o);
}

static uint32_t p2p(gen *g, rs_op_kind k, int label, uint8_t stream, uint32_t slot, uint64_t bytes, uint32_t d0)
{
    rs_op o = { (uint8_t)k, RS_DIM_PP, 0, stream, slot, lbl(g, label), { d0, RS_NONE }, bytes, 0 };
    return emit(g, o);
}

/* The op whose completion makes the current activation available. */
static uint32_t out_dep(const gen *g)
{
    return g->in != RS_NONE ? g->in : g->lastc;
}

static void tp_allreduce(gen *g)
{
    if (g->has_tp)
        g->in = coll(g, L_TP_AR, RS_STREAM_TP, RS_DIM_TP, RS_COLL_ALLREDUCE, RS_GEN_SLOT_TP, g->act_bytes,
                     out_dep(g), RS_NONE);
}

static uint64_t to_bytes(double params, const rs_plan *p)
{
    return (uint64_t)llround(params * p->model.precision_bytes);
}

/* Bytes of local layer u's parameters (dense or expert); the first stage's
 * first layer carries the embedding, the last stage's last layer the
 * output layer. */
static double unit_params(const gen *g, uint32_t u, int expert)
{
    if (expert)
        return g->f.layer_params_expert;
    double v = g->f.layer_params_dense;
    if (g->first && u == 0)
        v += g->f.embed_params;
    if (g->last && u == g->L - 1)
        v += g->f.embed_params;
    return v;
}

/* ZeRO-3: gather layer u's parameters (dense over DP, experts over EDP or
 * DP); returns the op whose completion means both are in. */
static uint32_t z3_gather(gen *g, uint32_t u, uint32_t dep)
{
    const rs_plan *p = g->p;
    uint32_t r = RS_NONE;
    double dense = unit_params(g, u, 0), expert = unit_params(g, u, 1);
    if (!g->has_edp) {
        dense += expert;
        expert = 0;
    }
    if (g->has_dp && dense > 0)
        r = coll(g, L_Z3_AG, RS_STREAM_DP_GATHER, RS_DIM_DP, RS_COLL_ALLGATHER, RS_GEN_SLOT_DP,
                 to_bytes(dense, p), dep, RS_NONE);
    if (g->has_edp && expert > 0)
        r = coll(g, L_Z3_AG_EXPERT, RS_STREAM_DP_GATHER, RS_DIM_DP, RS_COLL_ALLGATHER, RS_GEN_SLOT_EDP,
                 to_bytes(expert, p), dep, RS_NONE);
    return r;
}

/* ZeRO-3's ReduceScatters go on the stream of its AllGathers, in issue
 * order: PyTorch's ProcessGroupNCCL launches every collective of a
 * process group on one NCCL stream per device, FSDP gathers and reduces
 * over the same group, and NCCL does not run two collectives of one
 * communicator at once (NVIDIA/nccl#1262); docs/plan-format.md. */
static void z3_reduce(gen *g, uint32_t u)
{
    const rs_plan *p = g->p;
    double dense = unit_params(g, u, 0), expert = unit_params(g, u, 1);
    if (!g->has_edp) {
        dense += expert;
        expert = 0;
    }
    if (g->has_dp && dense > 0)
        coll(g, L_Z3_RS, RS_STREAM_DP_GATHER, RS_DIM_DP, RS_COLL_REDUCESCATTER, RS_GEN_SLOT_DP,
             to_bytes(dense, p), g->lastc, RS_NONE);
    if (g->has_edp && expert > 0)
        coll(g, L_Z3_RS_EXPERT, RS_STREAM_DP_GATHER, RS_DIM_DP, RS_COLL_REDUCESCATTER, RS_GEN_SLOT_EDP,
             to_bytes(expert, p), g->lastc, RS_NONE);
}

/* ZeRO-3 prefetch: at visiting position v of order[] (L units), make sure
 * unit order[v] is being gathered and start gathering order[v+1] once the
 * compute before order[v] is done (one layer ahead, as FSDP does). */
static void z3_visit(gen *g, const uint32_t *order, uint32_t v, uint32_t before)
{
    if (g->p->par.zero != 3)
        return;
    if (v == 0)
        g->ag[order[0]] = z3_gather(g, order[0], RS_NONE);
    if (v + 1 < g->L)
        g->ag[order[v + 1]] = z3_gather(g, order[v + 1], v == 0 ? RS_NONE : before);
}

static uint32_t ag_of(const gen *g, uint32_t u)
{
    return g->p->par.zero == 3 ? g->ag[u] : RS_NONE;
}

/* Forward of one layer (or its recomputation, rc = 1). `extra` is an
 * additional dependency of the layer's first compute op. */
static void fwd_layer(gen *g, int rc, uint32_t extra)
{
    if (g->has_cp) {
        compute_parts(g, rc ? L_RC_QKV : L_FWD_QKV, PART(K_QKV), 0, g->in, extra);
        g->in = coll(g, L_CP_AG, RS_STREAM_CP, RS_DIM_CP, RS_COLL_ALLGATHER, RS_GEN_SLOT_CP, g->kv_bytes,
                     g->lastc, RS_NONE);
        compute_parts(g, rc ? L_RC_CORE : L_FWD_CORE, PART(K_CORE) | PART(K_OUT), 0, g->in, RS_NONE);
    } else {
        compute_parts(g, rc ? L_RC_ATTN : L_FWD_ATTN, PART(K_QKV) | PART(K_CORE) | PART(K_OUT), 0, g->in, extra);
    }
    tp_allreduce(g);
    if (g->p->model.experts) {
        compute_parts(g, rc ? L_RC_ROUTER : L_FWD_ROUTER, PART(K_ROUTER), 0, g->in, RS_NONE);
        if (g->has_ep)
            g->in = coll(g, L_EP_DISPATCH, RS_STREAM_EP, RS_DIM_EP, RS_COLL_ALLTOALL, RS_GEN_SLOT_EP,
                         g->a2a_bytes, g->lastc, RS_NONE);
        compute_parts(g, rc ? L_RC_EXPERTS : L_FWD_EXPERTS, PART(K_EXPERTS), 0, g->in, RS_NONE);
        if (g->has_ep)
            g->in = coll(g, L_EP_COMBINE, RS_STREAM_EP, RS_DIM_EP, RS_COLL_ALLTOALL, RS_GEN_SLOT_EP,
                         g->a2a_bytes, g->lastc, RS_NONE);
    } else {
        compute_parts(g, rc ? L_RC_MLP : L_FWD_MLP, PART(K_MLP), 0, g->in, RS_NONE);
    }
    tp_allreduce(g);
}

/* Backward of one layer; `grad` is the incoming gradient's op (or none),
 * `params` the ZeRO-3 gather it needs. */
static void bwd_layer(gen *g, uint32_t grad, uint32_t params)
{
    uint32_t gin = grad != RS_NONE ? grad : g->in; /* the gradient flowing in */
    if (g->p->par.recompute) {
        /* Recomputation starts from the stored layer input; the backward
         * then waits for it (stream order) and for the incoming gradient. */
        g->in = RS_NONE;
        fwd_layer(g, 1, params);
        params = RS_NONE;
    }
    g->in = gin;
    if (g->p->model.experts) {
        if (g->has_ep)
            g->in = coll(g, L_EP_COMBINE, RS_STREAM_EP, RS_DIM_EP, RS_COLL_ALLTOALL, RS_GEN_SLOT_EP,
                         g->a2a_bytes, out_dep(g), RS_NONE);
        compute_parts(g, L_BWD_EXPERTS, PART(K_EXPERTS), 1, g->in, params);
        if (g->has_ep)
            g->in = coll(g, L_EP_DISPATCH, RS_STREAM_EP, RS_DIM_EP, RS_COLL_ALLTOALL, RS_GEN_SLOT_EP,
                         g->a2a_bytes, g->lastc, RS_NONE);
        compute_parts(g, L_BWD_ROUTER, PART(K_ROUTER), 1, g->in, RS_NONE);
    } else {
        compute_parts(g, L_BWD_MLP, PART(K_MLP), 1, g->in, params);
    }
    tp_allreduce(g);
    if (g->has_cp) {
        compute_parts(g, L_BWD_CORE, PART(K_CORE) | PART(K_OUT), 1, g->in, RS_NONE);
        g->in = coll(g, L_CP_RS, RS_STREAM_CP, RS_DIM_CP, RS_COLL_REDUCESCATTER, RS_GEN_SLOT_CP, g->kv_bytes,
                     g->lastc, RS_NONE);
        compute_parts(g, L_BWD_QKV, PART(K_QKV), 1, g->in, RS_NONE);
    } else {
        compute_parts(g, L_BWD_ATTN, PART(K_QKV) | PART(K_CORE) | PART(K_OUT), 1, g->in, RS_NONE);
    }
    tp_allreduce(g);
}

/* ---- gradient buckets (ZeRO 0-2) ------------------------------------------------ */

static void bucket_flush(gen *g, int force)
{
    const rs_plan *p = g->p;
    int zero = p->par.zero;
    uint64_t dense = 0, expert = 0;
    if (g->acc_dense > 0 && (force || g->acc_dense * p->model.precision_bytes >= (double)p->par.bucket_bytes)) {
        dense = to_bytes(g->acc_dense, p);
        g->acc_dense = 0;
    }
    if (g->acc_expert > 0 && (force || g->acc_expert * p->model.precision_bytes >= (double)p->par.bucket_bytes)) {
        expert = to_bytes(g->acc_expert, p);
        g->acc_expert = 0;
    }
    if (!dense && !expert)
        return;
    if (dense && g->has_dp)
        coll(g, zero ? L_DP_RS : L_DP_AR, RS_STREAM_DP_REDUCE, RS_DIM_DP,
             zero ? RS_COLL_REDUCESCATTER : RS_COLL_ALLREDUCE, RS_GEN_SLOT_DP, dense, g->lastc, RS_NONE);
    if (expert && g->has_edp)
        coll(g, zero ? L_EDP_RS : L_EDP_AR, RS_STREAM_DP_REDUCE, RS_DIM_DP,
             zero ? RS_COLL_REDUCESCATTER : RS_COLL_ALLREDUCE, RS_GEN_SLOT_EDP, expert, g->lastc, RS_NONE);
    /* A bucket is a pair: dense and expert bytes. */
    if (rs_array_reserve32(&g->bucket, &g->bucket_cap, g->nbucket + 1, 2 * sizeof *g->bucket, 64) != RS_OK) {
        g->rc = rs_err_set(g->err, RS_ENOMEM, "plan %s: out of memory while generating", p->name);
        return;
    }
    g->bucket[2 * g->nbucket] = g->has_dp ? dense : 0;
    g->bucket[2 * g->nbucket + 1] = g->has_edp ? expert : 0;
    g->nbucket++;
}

static void bucket_add(gen *g, uint32_t u)
{
    double d = unit_params(g, u, 0), e = unit_params(g, u, 1);
    if (!g->has_edp) {
        d += e;
        e = 0;
    }
    g->acc_dense += d;
    g->acc_expert += e;
    bucket_flush(g, 0);
}

/* ---- passes and schedules ---------------------------------------------------------- */

static void fwd_pass(gen *g, uint32_t *order)
{
    g->in = RS_NONE;
    if (!g->first)
        g->in = p2p(g, RS_OP_RECV, L_PP_RECV_ACT, RS_STREAM_PP_RECV_PREV, RS_GEN_SLOT_PP_PREV, g->act_bytes,
                    RS_NONE);
    for (uint32_t u = 0; u < g->L; u++)
        order[u] = u;
    for (uint32_t v = 0; v < g->L; v++) {
        uint32_t before = g->lastc;
        z3_visit(g, order, v, before);
        fwd_layer(g, 0, ag_of(g, v));
    }
    if (g->last)
        compute_parts(g, L_FWD_LOGITS, PART(K_LOGITS), 0, g->in, RS_NONE);
    else
        p2p(g, RS_OP_SEND, L_PP_SEND_ACT, RS_STREAM_PP_SEND_NEXT, RS_GEN_SLOT_PP_NEXT, g->act_bytes, out_dep(g));
    g->in = RS_NONE;
}

static void bwd_pass(gen *g, uint32_t *order, int last_mb)
{
    const rs_plan *p = g->p;
    int buckets = last_mb && p->par.zero < 3;
    uint32_t grad = RS_NONE;
    g->in = RS_NONE;
    if (!g->last)
        grad = p2p(g, RS_OP_RECV, L_PP_RECV_GRAD, RS_STREAM_PP_RECV_NEXT, RS_GEN_SLOT_PP_NEXT, g->act_bytes,
                   RS_NONE);
    for (uint32_t v = 0; v < g->L; v++)
        order[v] = g->L - 1 - v;
    for (uint32_t v = 0; v < g->L; v++) {
        uint32_t u = order[v];
        uint32_t before = g->lastc;
        z3_visit(g, order, v, before);
        uint32_t params = ag_of(g, u);
        if (v == 0 && g->last) {
            compute_parts(g, L_BWD_LOGITS, PART(K_LOGITS), 1, params, RS_NONE);
            params = RS_NONE;
        }
        bwd_layer(g, grad, params);
        grad = RS_NONE;
        if (p->par.zero == 3)
            z3_reduce(g, u);
        else if (buckets)
            bucket_add(g, u);
    }
    if (!g->first)
        p2p(g, RS_OP_SEND, L_PP_SEND_GRAD, RS_STREAM_PP_SEND_PREV, RS_GEN_SLOT_PP_PREV, g->act_bytes, out_dep(g));
    if (buckets)
        bucket_flush(g, 1);
    g->in = RS_NONE;
}

/* After the last backward: the optimizer step, and for ZeRO-1/2 the
 * AllGather of the updated parameter shards, bucket by bucket. */
static void step(gen *g)
{
    const rs_plan *p = g->p;
    /* The last gradient reduction: the last DP-reduce-stream op or (ZeRO-3)
     * ReduceScatter. */
    uint32_t last_red = RS_NONE;
    for (uint32_t i = g->n; i-- > 0;)
        if (g->ops[i].kind == RS_OP_COLL &&
            (g->ops[i].stream == RS_STREAM_DP_REDUCE || g->ops[i].coll == RS_COLL_REDUCESCATTER)) {
            last_red = i;
            break;
        }
    double dense = 0, expert = 0;
    for (uint32_t u = 0; u < g->L; u++) {
        dense += unit_params(g, u, 0);
        expert += unit_params(g, u, 1);
    }
    double shard_d = p->par.zero ? (double)p->par.dp * p->par.cp : 1;
    double shard_e = p->par.zero ? (double)(p->par.dp / p->par.ep) * p->par.cp : 1;
    double params = dense / shard_d + expert / shard_e;
    rs_time ps = p->compute == RS_COMPUTE_FLAT
                     ? (rs_time)llround(params * OPT_BYTES_PER_PARAM / p->mem_bw * 1e12)
                     : (rs_time)llround(rs_gpu_launch_s(g->G, rs_gpu_stream_s(g->G, params * OPT_BYTES_PER_PARAM)) *
                                        1e12);
    uint32_t opt = compute(g, L_OPTIMIZER, ps, (uint64_t)llround(params * OPT_BYTES_PER_PARAM), last_red, RS_NONE);
    if (p->par.zero == 1 || p->par.zero == 2) {
        for (uint32_t b = 0; b < g->nbucket; b++) {
            if (g->bucket[2 * b])
                coll(g, L_DP_AG, RS_STREAM_DP_GATHER, RS_DIM_DP, RS_COLL_ALLGATHER, RS_GEN_SLOT_DP,
                     g->bucket[2 * b], opt, RS_NONE);
            if (g->bucket[2 * b + 1])
                coll(g, L_EDP_AG, RS_STREAM_DP_GATHER, RS_DIM_DP, RS_COLL_ALLGATHER, RS_GEN_SLOT_EDP,
                     g->bucket[2 * b + 1], opt, RS_NONE);
        }
    }
}

static void build_stage(gen *g, uint32_t s, uint32_t *order)
{
    const rs_plan *p = g->p;
    g->n = 0;
    g->stage = s;
    g->first = s == 0;
    g->last = s == g->P - 1;
    g->lastc = g->in = RS_NONE;
    g->acc_dense = g->acc_expert = 0;
    g->nbucket = 0;
    uint32_t m = g->m;
    if (p->par.schedule == RS_SCHED_GPIPE) {
        for (uint32_t i = 0; i < m; i++)
            fwd_pass(g, order);
        for (uint32_t i = 0; i < m; i++)
            bwd_pass(g, order, i == m - 1);
    } else {
        /* 1F1B (Narayanan et al. 2021, PipeDream-Flush): warm-up forwards,
         * then one forward + one backward, then the remaining backwards. */
        uint32_t w = g->P - 1 - s;
        if (w > m)
            w = m;
        for (uint32_t i = 0; i < w; i++)
            fwd_pass(g, order);
        for (uint32_t i = 0; i < m - w; i++) {
            fwd_pass(g, order);
            bwd_pass(g, order, i == m - 1);
        }
        for (uint32_t i = m - w; i < m; i++)
            bwd_pass(g, order, i == m - 1);
    }
    step(g);
}

/* ---- ranks and communicators ---------------------------------------------------------- */

/* Coordinates: 0 tp, 1 cp, 2 ep, 3 dp/ep, 4 pp; rank = sum c[i] * stride[i]. */
typedef struct layout {
    uint32_t size[5], stride[5], gstride[5];
} layout;

static void coords(const layout *l, uint32_t r, uint32_t c[5])
{
    for (int i = 0; i < 5; i++)
        c[i] = r / l->stride[i] % l->size[i];
}

/* Create one communicator per group of the dimensions in mask (bit i =
 * coordinate i) when the groups have more than one rank; leader[r] gets
 * the communicator id of the group whose lowest rank is r. Returns 0 when
 * the groups are single ranks (no communicator). */
static int make_comms(gen *g, const layout *l, unsigned mask, rs_dim dim, uint32_t nranks, uint32_t *leader,
                      uint32_t *tmp)
{
    uint32_t gsize = 1;
    for (int i = 0; i < 5; i++)
        if (mask & (1u << i))
            gsize *= l->size[i];
    if (gsize <= 1 || g->rc)
        return 0;
    for (uint32_t r = 0; r < nranks && !g->rc; r++) {
        uint32_t c[5];
        coords(l, r, c);
        int is_leader = 1;
        for (int i = 0; i < 5; i++)
            if ((mask & (1u << i)) && c[i])
                is_leader = 0;
        if (!is_leader)
            continue;
        /* members: the masked coordinates counted up, lowest dimension fastest */
        for (uint32_t k = 0; k < gsize; k++) {
            uint32_t rest = k, rank = r;
            for (int i = 0; i < 5; i++)
                if (mask & (1u << i)) {
                    rank += rest % l->size[i] * l->stride[i];
                    rest /= l->size[i];
                }
            tmp[k] = rank;
        }
        g->rc = rs_trace_add_comm(g->t, dim, tmp, gsize, &leader[r], g->err);
    }
    return 1;
}

static uint32_t group_leader(const layout *l, unsigned mask, uint32_t r)
{
    uint32_t c[5];
    coords(l, r, c);
    for (int i = 0; i < 5; i++)
        if (mask & (1u << i))
            r -= c[i] * l->stride[i];
    return r;
}

int rs_gen(const rs_plan *p, rs_trace **out, rs_err *err)
{
    *out = NULL;
    int rc = rs_plan_validate(p, NULL, err);
    if (rc)
        return rc;
    const rs_plan_par *q = &p->par;
    uint32_t nranks = rs_plan_gpus(p);
    gen g;
    memset(&g, 0, sizeof g);
    g.p = p;
    g.err = err;
    memset(g.label, 0xff, sizeof g.label);
    rs_gen_flops_of(p, &g.f);
    if (p->compute == RS_COMPUTE_SHAPES) {
        rs_plan_gpu(p, &g.own);
        g.G = &g.own;
        shapes_times(p, g.G, &g.f, g.kt, g.kb);
    }
    g.P = q->pp;
    g.L = p->model.layers / q->pp;
    g.m = q->global_batch / (q->micro_batch * q->dp);
    g.has_tp = q->tp > 1;
    g.has_cp = q->cp > 1;
    g.has_ep = q->ep > 1;
    g.has_dp = (uint64_t)q->dp * q->cp > 1;
    g.has_edp = p->model.experts && q->ep > 1 && (q->dp / q->ep) * q->cp > 1;
    uint64_t tok = (uint64_t)q->micro_batch * p->model.seq_len / q->cp;
    uint32_t kv = p->model.kv_heads ? p->model.kv_heads : p->model.heads;
    uint64_t hkv = (uint64_t)kv * (p->model.hidden / p->model.heads);
    g.act_bytes = tok * p->model.hidden * p->model.precision_bytes;
    /* K and V of this rank's tokens, this TP rank's heads (at least one
     * head when kv_heads < tp: GQA heads are replicated then); the
     * AllGather's output holds every CP rank's share. */
    uint64_t kv_tp = hkv / q->tp ? hkv / q->tp : p->model.hidden / p->model.heads;
    g.kv_bytes = (uint64_t)q->cp * tok * 2 * kv_tp * p->model.precision_bytes;
    g.a2a_bytes = tok * p->model.top_k * p->model.hidden * p->model.precision_bytes;

    layout l;
    l.size[0] = q->tp;
    l.size[1] = q->cp;
    l.size[2] = q->ep;
    l.size[3] = q->dp / q->ep;
    l.size[4] = q->pp;
    l.stride[0] = 1;
    for (int i = 1; i < 5; i++)
        l.stride[i] = l.stride[i - 1] * l.size[i - 1];
    int perm[5];
    if ((rc = rs_plan_placement(p, perm, err)))
        return rc;
    uint32_t s = 1;
    for (int i = 0; i < 5; i++) {
        l.gstride[perm[i]] = s;
        s *= l.size[perm[i]];
    }

    uint32_t *order = malloc((size_t)g.L * sizeof *order);
    g.ag = malloc((size_t)g.L * sizeof *g.ag);
    uint32_t *stage_class = malloc((size_t)g.P * sizeof *stage_class);
    uint32_t *lead[5] = { NULL };
    uint32_t *tmp = malloc((size_t)nranks * sizeof *tmp);
    for (int i = 0; i < 5; i++)
        lead[i] = malloc((size_t)nranks * sizeof *lead[i]);
    if (!order || !g.ag || !stage_class || !tmp || !lead[0] || !lead[1] || !lead[2] || !lead[3] || !lead[4]) {
        rc = rs_err_set(err, RS_ENOMEM, "plan %s: out of memory while generating", p->name);
        goto done;
    }
    if ((rc = rs_trace_create(nranks, RS_GEN_NSLOTS, &g.t, err)))
        goto done;

    for (uint32_t st = 0; st < g.P && !g.rc; st++) {
        build_stage(&g, st, order);
        if (!g.rc)
            g.rc = rs_trace_add_class(g.t, g.ops, g.n, &stage_class[st], err);
    }
    /* Communicator families; masks over coordinates (tp, cp, ep, dp/ep, pp). */
    static const unsigned masks[5] = { 1u << 0, 1u << 1, 1u << 2, (1u << 1) | (1u << 2) | (1u << 3),
                                       (1u << 1) | (1u << 3) };
    static const rs_dim dims[5] = { RS_DIM_TP, RS_DIM_CP, RS_DIM_EP, RS_DIM_DP, RS_DIM_DP };
    int present[5];
    for (int f = 0; f < 5; f++)
        present[f] = (f != 2 || g.has_ep) && (f != 4 || g.has_edp) &&
                     make_comms(&g, &l, masks[f], dims[f], nranks, lead[f], tmp);
    for (uint32_t r = 0; r < nranks && !g.rc; r++) {
        uint32_t c[5], slots[RS_GEN_NSLOTS], gpu = 0;
        coords(&l, r, c);
        for (int i = 0; i < 5; i++)
            gpu += c[i] * l.gstride[i];
        for (int f = 0; f < 5; f++)
            slots[f] = present[f] ? lead[f][group_leader(&l, masks[f], r)] : RS_NONE;
        slots[RS_GEN_SLOT_PP_PREV] = c[4] > 0 ? r - l.stride[4] : RS_NONE;
        slots[RS_GEN_SLOT_PP_NEXT] = c[4] + 1 < l.size[4] ? r + l.stride[4] : RS_NONE;
        g.rc = rs_trace_set_rank(g.t, r, gpu, stage_class[c[4]], slots, err);
    }
    if ((rc = g.rc))
        goto done;
    rs_trace_iter it = {
        .tokens = (uint64_t)q->global_batch * p->model.seq_len,
        .model_flops = rs_gen_model_flops(p),
        .peak_flops = p->peak_flops,
        .efficiency = p->compute == RS_COMPUTE_FLAT ? p->efficiency : shapes_efficiency(p, &g),
        .micro_batches = g.m,
        .layers = p->model.layers,
        .tp = q->tp, .pp = q->pp, .dp = q->dp, .cp = q->cp, .ep = q->ep, .zero = q->zero,
    };
    if ((rc = rs_trace_set_info(g.t, &it, nranks, p->name, err)))
        goto done;
    if ((rc = rs_trace_finish(g.t, err)))
        goto done;
    *out = g.t;
    g.t = NULL;
done:
    rs_trace_destroy(g.t);
    free(g.ops);
    free(g.ag);
    free(g.bucket);
    free(order);
    free(stage_class);
    free(tmp);
    for (int i = 0; i < 5; i++)
        free(lead[i]);
    return rc;
}
