/*
 * plan.c - the plan reader, presets and validation. One schema table `keys`
 * lists every plan key; loading walks it with the key-table reader
 * (engine/keys.h) that scenarios and parts tables use too.
 *
 * Loading fills a copy and validates it before touching the caller's plan.
 * A file may name a preset ("preset": "llama2-70b") as its starting point;
 * the preset is applied first, wherever the key appears in the file.
 */
#include "plan.h"

#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpu.h"
#include "keys.h"

/* ---- GPUs ------------------------------------------------------------------ */

/* The GPU presets and their figures live in gpu.c (sources in
 * docs/compute.md); the plan key gpu.preset takes one of their names. */

int rs_plan_gpu_peak(const char *preset, double *peak, double *mem_bw)
{
    const rs_gpu *g = rs_gpu_find(preset);
    if (!g)
        return RS_EINVAL;
    *peak = g->peak_flops;
    *mem_bw = g->mem_bw;
    return RS_OK;
}

void rs_plan_gpu(const rs_plan *p, rs_gpu *out)
{
    const rs_gpu *g = p->gpu_preset[0] ? rs_gpu_find(p->gpu_preset) : NULL;
    *out = *(g ? g : rs_gpu_find("h100"));
    out->peak_flops = p->peak_flops;
    out->mem_bw = p->mem_bw;
}

int rs_plan_default_gpu(rs_plan *p, const char *name)
{
    const rs_gpu *g = rs_gpu_find(name);
    if (!g)
        return RS_EINVAL;
    if (p->gpu_given)
        return RS_OK;
    snprintf(p->gpu_preset, sizeof p->gpu_preset, "%s", g->name);
    p->peak_flops = g->peak_flops;
    p->mem_bw = g->mem_bw;
    return RS_OK;
}

/* ---- defaults and presets ------------------------------------------------------ */

void rs_plan_default(rs_plan *p)
{
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "custom");
    p->model = (rs_plan_model){ .layers = 2, .hidden = 1024, .ffn = 4096, .heads = 16, .kv_heads = 0,
                                .seq_len = 1024, .vocab = 32000, .experts = 0, .top_k = 0,
                                .precision_bytes = 2, .gated_mlp = 0 };
    p->par = (rs_plan_par){ .tp = 1, .pp = 1, .dp = 1, .cp = 1, .ep = 1, .zero = 0, .micro_batch = 1,
                            .global_batch = 1, .schedule = RS_SCHED_1F1B, .recompute = 0,
                            .bucket_bytes = 25ull << 20 /* PyTorch DDP's bucket_cap_mb */ };
    snprintf(p->order, sizeof p->order, "tp,cp,ep,dp,pp");
    snprintf(p->gpu_preset, sizeof p->gpu_preset, "h100");
    p->peak_flops = 989e12;
    p->mem_bw = 3350e9;
    p->efficiency = 0.5;
}

/* Published shapes:
 *  llama2-7b/70b: Touvron et al. 2023, "Llama 2", Table 1 and the released
 *    configs (SwiGLU, ffn 11008 / 28672, GQA with 8 KV heads for 70B, 4k
 *    context, 32k vocabulary, 4M-token batches);
 *  gpt3-175b: Brown et al. 2020, Table 2.1 (96 layers, d 12288, 96 heads,
 *    2048 context), parallelised as in Narayanan et al. 2021, Table 1
 *    (TP 8, PP 8, batch 1536 on 1536 GPUs);
 *  gpt-13b: GPT-3 13B (Brown et al. 2020, Table 2.1: 40 layers, 40 heads of
 *    128, 2048 context, batch 1M tokens) with Megatron-LM's hidden 5120
 *    (40 x 128; Table 2.1 lists 5140), the case Wormhole (NSDI'26) and
 *    SimAI (NSDI'25) simulate on 128 GPUs: TP 8 in the HB domain, DP across;
 *  gpt-1t: Narayanan et al. 2021 (Megatron-LM, SC'21), Table 1: 128 layers,
 *    hidden 25600, 160 heads, TP 8, PP 64, batch 3072 on 3072 GPUs;
 *  mixtral-8x7b: Jiang et al. 2024, Table 1 (32 layers, d 4096, ffn 14336,
 *    32 heads, 8 KV heads, 8 experts, top-2). Parallelism chosen here. */
static void preset_llama2_7b(rs_plan *p)
{
    p->model = (rs_plan_model){ 32, 4096, 11008, 32, 32, 4096, 32000, 0, 0, 2, 1 };
    p->par.dp = 64;
    p->par.zero = 3; /* FSDP full sharding, as Meta trains it */
    p->par.micro_batch = 2;
    p->par.global_batch = 1024;
}

static void preset_llama2_70b(rs_plan *p)
{
    p->model = (rs_plan_model){ 80, 8192, 28672, 64, 8, 4096, 32000, 0, 0, 2, 1 };
    p->par.tp = 8;
    p->par.pp = 4;
    p->par.dp = 16;
    p->par.zero = 1;
    p->par.global_batch = 1024;
}

static void preset_gpt3_175b(rs_plan *p)
{
    p->model = (rs_plan_model){ 96, 12288, 49152, 96, 96, 2048, 50257, 0, 0, 2, 0 };
    p->par.tp = 8;
    p->par.pp = 8;
    p->par.dp = 24;
    p->par.global_batch = 1536;
}

static void preset_gpt_13b(rs_plan *p)
{
    p->model = (rs_plan_model){ 40, 5120, 20480, 40, 40, 2048, 50257, 0, 0, 2, 0 };
    p->par.tp = 8;
    p->par.dp = 16;
    p->par.global_batch = 512;
}

static void preset_gpt_1t(rs_plan *p)
{
    p->model = (rs_plan_model){ 128, 25600, 102400, 160, 160, 2048, 51200, 0, 0, 2, 0 };
    p->par.tp = 8;
    p->par.pp = 64;
    p->par.dp = 6;
    p->par.global_batch = 3072;
    p->par.recompute = 1;
}

static void preset_mixtral(rs_plan *p)
{
    p->model = (rs_plan_model){ 32, 4096, 14336, 32, 8, 4096, 32000, 8, 2, 2, 1 };
    p->par.tp = 2;
    p->par.ep = 8;
    p->par.dp = 32;
    p->par.zero = 1;
    p->par.global_batch = 512;
}

/* Small plans for `railsim compare`'s built-in scenario (64 GPUs in 8 HB
 * domains): four Llama-sized blocks (d 4096, 32 heads, 2k context), so a
 * packet-level iteration takes seconds. demo-dense keeps TP inside the HB
 * domain and DP across it (all network traffic stays on one rail);
 * demo-moe is Mixtral-shaped (8 experts, top-2) with EP 8 over pairs of
 * TP-2 groups, so its all-to-all crosses rails and HB domains. */
static void preset_demo_dense(rs_plan *p)
{
    p->model = (rs_plan_model){ 4, 4096, 16384, 32, 32, 2048, 32000, 0, 0, 2, 0 };
    p->par.tp = 8;
    p->par.dp = 8;
    p->par.global_batch = 16;
}

static void preset_demo_moe(rs_plan *p)
{
    p->model = (rs_plan_model){ 4, 4096, 14336, 32, 8, 2048, 32000, 8, 2, 2, 1 };
    p->par.tp = 2;
    p->par.ep = 8;
    p->par.dp = 32;
    p->par.global_batch = 64;
}

static const struct preset {
    const char *name;
    void (*fill)(rs_plan *p);
} presets[] = {
    { "llama2-7b", preset_llama2_7b },
    { "llama2-70b", preset_llama2_70b },
    { "gpt3-175b", preset_gpt3_175b },
    { "gpt-13b", preset_gpt_13b },
    { "gpt-1t", preset_gpt_1t },
    { "mixtral-8x7b", preset_mixtral },
    { "demo-dense", preset_demo_dense },
    { "demo-moe", preset_demo_moe },
};
#define NPRESETS (sizeof presets / sizeof presets[0])

const char *const *rs_plan_preset_names(void)
{
    static const char *const names[NPRESETS + 1] = { "llama2-7b", "llama2-70b", "gpt3-175b", "gpt-13b", "gpt-1t",
                                                     "mixtral-8x7b", "demo-dense", "demo-moe", NULL };
    return names;
}

static int fill_preset(const char *name, rs_plan *p)
{
    for (size_t i = 0; i < NPRESETS; i++)
        if (strcmp(presets[i].name, name) == 0) {
            rs_plan_default(p);
            snprintf(p->name, sizeof p->name, "%s", name);
            presets[i].fill(p);
            p->batch_of_preset = 1;
            return RS_OK;
        }
    return RS_EINVAL;
}

static void preset_list(char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < NPRESETS && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "", presets[i].name);
}

int rs_plan_preset(const char *name, rs_plan *out, rs_err *err)
{
    rs_plan p;
    if (fill_preset(name, &p)) {
        char list[160];
        preset_list(list, sizeof list);
        return rs_err_set(err, RS_EINVAL, "unknown plan preset '%.60s': expected one of %s", name, list);
    }
    char where[96];
    snprintf(where, sizeof where, "preset %s", name);
    int rc = rs_plan_validate(&p, where, err);
    if (rc)
        return rc;
    *out = p;
    return RS_OK;
}

/* ---- validation ------------------------------------------------------------------ */

uint32_t rs_plan_gpus(const rs_plan *p)
{
    uint64_t n = (uint64_t)p->par.tp * p->par.pp * p->par.dp * p->par.cp;
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* Placement dimension names in default order, and their sizes. */
static const char *const dim_names[5] = { "tp", "cp", "ep", "dp", "pp" };

static void dim_sizes(const rs_plan *p, uint32_t sz[5])
{
    sz[0] = p->par.tp;
    sz[1] = p->par.cp;
    sz[2] = p->par.ep;
    sz[3] = p->par.ep ? p->par.dp / p->par.ep : 0;
    sz[4] = p->par.pp;
}

/* Parse placement.order into perm[0..n) (indices into dim_names, innermost
 * first); dimensions of size 1 may be omitted and are appended. */
static int parse_order(const rs_plan *p, int perm[5], const char *where, rs_err *err)
{
    uint32_t sz[5];
    dim_sizes(p, sz);
    bool seen[5] = { false };
    int n = 0;
    const char *s = p->order;
    while (*s) {
        size_t len = strcspn(s, ",");
        int d = -1;
        for (int i = 0; i < 5; i++)
            if (len == 2 && strncmp(s, dim_names[i], 2) == 0)
                d = i;
        if (d < 0)
            return rs_keys_fail(err, where, "placement.order", "unknown dimension '%.*s'; expected a comma-separated "
                                "list of tp, cp, ep, dp, pp, innermost first", (int)(len > 20 ? 20 : len), s);
        if (seen[d])
            return rs_keys_fail(err, where, "placement.order", "'%s' listed twice; expected each dimension once",
                                dim_names[d]);
        seen[d] = true;
        perm[n++] = d;
        s += len;
        if (*s == ',') {
            s++;
            if (!*s)
                return rs_keys_fail(err, where, "placement.order", "ends with a comma; expected a dimension after it");
        }
    }
    for (int i = 0; i < 5; i++) {
        if (seen[i])
            continue;
        if (sz[i] > 1)
            return rs_keys_fail(err, where, "placement.order", "omits '%s' although its size is %u; expected every "
                                "dimension larger than 1", dim_names[i], sz[i]);
        perm[n++] = i;
    }
    return RS_OK;
}

int rs_plan_placement(const rs_plan *p, int perm[5], rs_err *err)
{
    return parse_order(p, perm, NULL, err);
}

int rs_plan_validate(const rs_plan *p, const char *where, rs_err *err)
{
    const rs_plan_model *m = &p->model;
    const rs_plan_par *q = &p->par;
    struct { const char *key; uint32_t v; } pos[] = {
        { "model.layers", m->layers }, { "model.hidden", m->hidden }, { "model.ffn", m->ffn },
        { "model.heads", m->heads }, { "model.seq_len", m->seq_len }, { "model.vocab", m->vocab },
        { "model.precision_bytes", m->precision_bytes }, { "parallelism.tp", q->tp },
        { "parallelism.pp", q->pp }, { "parallelism.dp", q->dp }, { "parallelism.cp", q->cp },
        { "parallelism.ep", q->ep }, { "parallelism.micro_batch", q->micro_batch },
        { "parallelism.global_batch", q->global_batch },
    };
    for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++)
        if (pos[i].v == 0)
            return rs_keys_fail(err, where, pos[i].key, "expected a positive integer, got 0");
    if (m->hidden % m->heads)
        return rs_keys_fail(err, where, "model.heads", "%u does not divide model.hidden (%u)", m->heads, m->hidden);
    uint32_t kv = m->kv_heads ? m->kv_heads : m->heads;
    if (kv > m->heads || m->heads % kv)
        return rs_keys_fail(err, where, "model.kv_heads", "%u does not divide model.heads (%u)", kv, m->heads);
    if (m->precision_bytes > 8)
        return rs_keys_fail(err, where, "model.precision_bytes", "expected 1 to 8 bytes, got %u", m->precision_bytes);
    if (m->top_k > 0 && m->experts == 0)
        return rs_keys_fail(err, where, "model.top_k", "%u needs an MoE model (model.experts above 0)", m->top_k);
    if (m->experts > 0 && (m->top_k == 0 || m->top_k > m->experts))
        return rs_keys_fail(err, where, "model.top_k", "expected 1 to model.experts (%u) for an MoE model, got %u",
                            m->experts, m->top_k);
    if (q->zero > 3)
        return rs_keys_fail(err, where, "parallelism.zero", "expected 0, 1, 2 or 3, got %u", q->zero);
    uint64_t n = (uint64_t)q->tp * q->pp * q->dp * q->cp;
    if (n > (1u << 24))
        return rs_keys_fail(err, where, "parallelism", "tp x pp x dp x cp = %llu GPUs, expected at most 16777216",
                            (unsigned long long)n);
    if (p->gpus && n != p->gpus)
        return rs_keys_fail(err, where, "gpus", "%u, but parallelism.tp x pp x dp x cp = %u x %u x %u x %u = %llu",
                            p->gpus, q->tp, q->pp, q->dp, q->cp, (unsigned long long)n);
    if (m->heads % q->tp)
        return rs_keys_fail(err, where, "parallelism.tp", "%u does not divide model.heads (%u)", q->tp, m->heads);
    if (m->ffn % q->tp)
        return rs_keys_fail(err, where, "parallelism.tp", "%u does not divide model.ffn (%u)", q->tp, m->ffn);
    if (m->layers % q->pp)
        return rs_keys_fail(err, where, "parallelism.pp", "%u does not divide model.layers (%u)", q->pp, m->layers);
    if (m->seq_len % q->cp)
        return rs_keys_fail(err, where, "parallelism.cp", "%u does not divide model.seq_len (%u)", q->cp, m->seq_len);
    if (q->ep > 1 && m->experts == 0)
        return rs_keys_fail(err, where, "parallelism.ep", "%u needs an MoE model (model.experts above 0)", q->ep);
    if (m->experts && m->experts % q->ep)
        return rs_keys_fail(err, where, "parallelism.ep", "%u does not divide model.experts (%u)", q->ep, m->experts);
    if (q->dp % q->ep)
        return rs_keys_fail(err, where, "parallelism.ep", "%u does not divide parallelism.dp (%u); expert parallelism "
                            "is carved out of data parallelism", q->ep, q->dp);
    uint64_t per = (uint64_t)q->micro_batch * q->dp;
    if (q->global_batch % per)
        return rs_keys_fail(err, where, "parallelism.global_batch", "%u is not a multiple of micro_batch x dp "
                            "(%u x %u = %llu)", q->global_batch, q->micro_batch, q->dp, (unsigned long long)per);
    if (q->global_batch / per > (1u << 20))
        return rs_keys_fail(err, where, "parallelism.global_batch", "gives %llu micro-batches per pipeline, expected "
                            "at most 1048576", (unsigned long long)(q->global_batch / per));
    if ((uint64_t)q->micro_batch * m->seq_len > (1ull << 32))
        return rs_keys_fail(err, where, "parallelism.micro_batch", "%u sequences of %u tokens, expected at most 2^32 "
                            "tokens per micro-batch", q->micro_batch, m->seq_len);
    if (q->bucket_bytes == 0)
        return rs_keys_fail(err, where, "parallelism.bucket_bytes", "expected a positive size, got 0");
    if (!(p->peak_flops > 0) || !isfinite(p->peak_flops))
        return rs_keys_fail(err, where, "gpu.peak_flops", "expected a positive FLOP/s figure");
    if (!(p->mem_bw > 0) || !isfinite(p->mem_bw))
        return rs_keys_fail(err, where, "gpu.memory_bw", "expected a positive bytes/s figure");
    if (!(p->efficiency > 0 && p->efficiency <= 1))
        return rs_keys_fail(err, where, "gpu.efficiency", "expected a fraction above 0 and at most 1, got %g",
                            p->efficiency);
    int perm[5];
    return parse_order(p, perm, where, err);
}

int rs_plan_set_gpus(rs_plan *p, uint32_t ngpus, rs_err *err)
{
    uint64_t fixed = (uint64_t)p->par.tp * p->par.pp * p->par.cp;
    uint64_t unit = fixed * p->par.ep;
    if (ngpus == 0 || ngpus % unit)
        return rs_err_set(err, RS_EINVAL, "--gpus: %u is not a multiple of tp x pp x cp x ep "
                          "(%u x %u x %u x %u = %llu), which --gpus keeps", ngpus, p->par.tp, p->par.pp,
                          p->par.cp, p->par.ep, (unsigned long long)unit);
    rs_plan q = *p;
    q.par.dp = (uint32_t)(ngpus / fixed);
    q.gpus = ngpus;
    uint32_t mb = q.par.micro_batch ? q.par.micro_batch : 1;
    uint64_t per = (uint64_t)mb * q.par.dp;
    if (q.batch_of_preset && q.par.global_batch % per) {
        /* A preset's batch: the next multiple of a micro-batch per DP rank. */
        uint64_t b = (q.par.global_batch / per + 1) * per;
        if (b > UINT32_MAX)
            return rs_err_set(err, RS_EINVAL, "--gpus %u: the preset's parallelism.global_batch %u would grow "
                              "to %llu, a multiple of micro_batch x dp = %u x %u; expected at most 2^32 - 1",
                              ngpus, q.par.global_batch, (unsigned long long)b, mb, q.par.dp);
        q.par.global_batch = (uint32_t)b;
    }
    if (q.par.global_batch % mb == 0 && (q.par.global_batch / mb) % q.par.dp) {
        /* Which sizes the batch takes: dp must divide its micro-batches
         * (and be a multiple of ep). */
        uint32_t n = q.par.global_batch / mb, most = 0;
        for (uint32_t d = q.par.ep; d <= n; d += q.par.ep)
            if (n % d == 0)
                most = d;
        return rs_err_set(err, RS_EINVAL, "--gpus %u: parallelism.global_batch %u is %u micro-batches of %u, "
                          "which dp = %u does not divide; this plan takes --gpus = %llu x dp for dp a multiple of "
                          "ep (%u) dividing %u (at most %llu GPUs), or a larger parallelism.global_batch",
                          ngpus, q.par.global_batch, n, mb, q.par.dp, (unsigned long long)fixed, q.par.ep, n,
                          (unsigned long long)fixed * most);
    }
    char where[96];
    snprintf(where, sizeof where, "--gpus %u", ngpus);
    int rc = rs_plan_validate(&q, where, err);
    if (rc)
        return rc;
    *p = q;
    return RS_OK;
}

/* ---- the schema ------------------------------------------------------------------ */

static const char *const sched_names[] = { "1f1b", "gpipe", NULL }; /* rs_sched order */
static const char *const compute_names[] = { "shapes", "flat", NULL }; /* rs_compute_model order */
_Static_assert(sizeof(rs_sched) == sizeof(int), "enum size");
_Static_assert(sizeof(((rs_plan *)0)->model.gated_mlp) == sizeof(int), "bool as int");
_Static_assert(sizeof(((rs_plan *)0)->par.recompute) == sizeof(int), "bool as int");

#define U(k, f, lo, hi) RS_KEY_U(rs_plan, k, f, lo, hi, NULL)
#define D(k, f, lo, hi) RS_KEY_D(rs_plan, k, f, lo, true, hi, NULL) /* (lo, hi] */
#define B(k, f) RS_KEY_B(rs_plan, k, f, NULL)
#define S(k, f, names) RS_KEY_S(rs_plan, k, f, names, NULL)

/* "preset" is applied first, wherever it appears (rs_plan_load). */
#define BIG (1u << 24)
static const rs_key keys[] = {
    { "preset", RS_KEY_SKIP, 0, 0, 0, 0, 0, 0, false, NULL, NULL },
    S("name", name, NULL),
    U("gpus", gpus, 1, BIG),
    U("model.layers", model.layers, 1, 65536),
    U("model.hidden", model.hidden, 1, 1u << 20),
    U("model.ffn", model.ffn, 1, 1u << 24),
    U("model.heads", model.heads, 1, 65536),
    U("model.kv_heads", model.kv_heads, 0, 65536),
    U("model.seq_len", model.seq_len, 1, 1u << 24),
    U("model.vocab", model.vocab, 1, 1u << 24),
    U("model.experts", model.experts, 0, 65536),
    U("model.top_k", model.top_k, 0, 65536),
    U("model.precision_bytes", model.precision_bytes, 1, 8),
    B("model.gated_mlp", model.gated_mlp),
    U("parallelism.tp", par.tp, 1, BIG),
    U("parallelism.pp", par.pp, 1, BIG),
    U("parallelism.dp", par.dp, 1, BIG),
    U("parallelism.cp", par.cp, 1, BIG),
    U("parallelism.ep", par.ep, 1, BIG),
    U("parallelism.zero", par.zero, 0, 3),
    U("parallelism.micro_batch", par.micro_batch, 1, BIG),
    U("parallelism.global_batch", par.global_batch, 1, 1u << 30),
    RS_KEY_E(rs_plan, "parallelism.schedule", par.schedule, sched_names, NULL),
    B("parallelism.recompute", par.recompute),
    U("parallelism.bucket_bytes", par.bucket_bytes, 1, 1ull << 40),
    S("placement.order", order, NULL),
    S("gpu.preset", gpu_preset, rs_gpu_preset_names),
    RS_KEY_E(rs_plan, "gpu.model", compute, compute_names, NULL),
    D("gpu.peak_flops", peak_flops, 0, 1e18),
    D("gpu.memory_bw", mem_bw, 0, 1e16),
    D("gpu.efficiency", efficiency, 0, 1),
};
#define NKEYS (sizeof keys / sizeof keys[0])

/* Which of the keys that depend on each other a file gave. */
typedef struct given_keys {
    bool gpu_preset, peak, bw, batch;
} given_keys;

static int given(const rs_key *k, void *base, void *ctx, const char *path, rs_err *err)
{
    (void)base, (void)path, (void)err;
    given_keys *g = ctx;
    if (k->off == offsetof(rs_plan, gpu_preset))
        g->gpu_preset = true;
    if (k->off == offsetof(rs_plan, peak_flops))
        g->peak = true;
    if (k->off == offsetof(rs_plan, mem_bw))
        g->bw = true;
    if (k->off == offsetof(rs_plan, par.global_batch))
        g->batch = true;
    return RS_OK;
}

static const rs_key_table table = {
    .keys = keys, .nkeys = NKEYS, .noun = "key", .given = given,
    .unknown_expected = "expected name, preset, gpus or a key of model, parallelism, placement or gpu "
                        "(docs/plan-format.md)",
};

int rs_plan_load(const char *path, rs_plan *out, rs_err *err)
{
    rs_err_clear(err);
    json_t *root;
    int rc = rs_keys_load_file(path, "plan file", &root, err);
    if (rc)
        return rc;
    rs_plan p;
    rs_plan_default(&p);
    given_keys g = { false, false, false, false };
    const json_t *pre = json_object_get(root, "preset");
    if (pre) {
        char got[80], list[160];
        if (!json_is_string(pre) || fill_preset(json_string_value(pre), &p)) {
            rs_keys_describe(got, sizeof got, pre);
            preset_list(list, sizeof list);
            rc = rs_err_set(err, RS_EINVAL, "%s: preset: expected one of %s, got %s", path, list, got);
            goto done;
        }
    } else {
        /* Without a preset the name defaults to the file's base name. */
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        size_t n = strcspn(base, ".");
        snprintf(p.name, sizeof p.name, "%.*s", (int)(n < sizeof p.name ? n : sizeof p.name - 1), base);
    }
    if ((rc = rs_keys_apply_json(&table, &p, &g, root, path, err)))
        goto done;
    /* A GPU preset gives the figures the file did not. */
    double peak, bw;
    if (g.gpu_preset && rs_plan_gpu_peak(p.gpu_preset, &peak, &bw) == RS_OK) {
        if (!g.peak)
            p.peak_flops = peak;
        if (!g.bw)
            p.mem_bw = bw;
    }
    if (g.peak && !g.gpu_preset)
        p.gpu_preset[0] = '\0';
    p.gpu_given = g.gpu_preset || g.peak;
    if (g.batch)
        p.batch_of_preset = 0;
    if ((rc = rs_plan_validate(&p, path, err)))
        goto done;
    *out = p;
done:
    json_decref(root);
    return rc;
}

int rs_plan_load_arg(const char *arg, rs_plan *out, rs_err *err)
{
    struct stat st;
    if (stat(arg, &st) == 0 || strchr(arg, '/') || strstr(arg, ".json"))
        return rs_plan_load(arg, out, err);
    rs_plan p;
    if (fill_preset(arg, &p) == RS_OK)
        return rs_plan_preset(arg, out, err);
    char list[160];
    preset_list(list, sizeof list);
    return rs_err_set(err, RS_EINVAL, "%.80s: no such plan file or preset; expected a plan JSON file or one of %s",
                      arg, list);
}
