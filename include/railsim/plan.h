/*
 * plan.h - training plans (docs/plan-format.md): a model shape, its
 * parallelism, the placement of ranks on GPUs and the GPU's compute speed.
 * A plan is a plain value type read from JSON or taken from a built-in
 * preset; gen.h turns it into a trace.
 *
 * Ranks are numbered with TP fastest, then CP, EP, the rest of DP, and PP
 * slowest (Megatron's order). EP is carved out of DP: dp = ep x (dp / ep),
 * and expert parameters are replicated over the dp / ep part only.
 * placement.order maps ranks to GPUs: it lists the dimensions innermost
 * first, and the default "tp,cp,ep,dp,pp" places rank r on GPU r (TP
 * innermost, inside the HB domain).
 */
#ifndef RS_PLAN_H
#define RS_PLAN_H

#include <stdint.h>

#include "base.h"

RS_BEGIN_DECLS

typedef enum { RS_SCHED_1F1B = 0, RS_SCHED_GPIPE = 1 } rs_sched;

typedef struct rs_plan_model {
    uint32_t layers, hidden, ffn, heads, kv_heads; /* kv_heads 0 = heads */
    uint32_t seq_len, vocab;
    uint32_t experts, top_k; /* experts 0 (or top_k 0) = dense */
    uint32_t precision_bytes;
    int gated_mlp; /* SwiGLU-style MLP: 3 FFN matrices instead of 2 */
} rs_plan_model;

typedef struct rs_plan_par {
    uint32_t tp, pp, dp, cp, ep, zero;
    uint32_t micro_batch, global_batch;
    rs_sched schedule;
    int recompute; /* full activation recomputation */
    uint64_t bucket_bytes; /* gradient bucket size (DDP / ZeRO-1/2) */
} rs_plan_par;

#define RS_PLAN_NAME_MAX 64
#define RS_PLAN_ORDER_MAX 64

/* gpu.model: how long compute takes (docs/compute.md). */
typedef enum {
    RS_COMPUTE_SHAPES = 0, /* each kernel from its shape on the GPU (gpu.h) */
    RS_COMPUTE_FLAT = 1    /* every FLOP at peak x efficiency */
} rs_compute_model;

typedef struct rs_plan {
    char name[RS_PLAN_NAME_MAX];
    uint32_t gpus; /* 0 = tp * pp * dp * cp */
    rs_plan_model model;
    rs_plan_par par;
    char order[RS_PLAN_ORDER_MAX]; /* placement.order */
    char gpu_preset[16];           /* "" when peak_flops was given */
    double peak_flops;             /* per GPU, dense (bf16) FLOP/s */
    double mem_bw;                 /* per GPU, HBM bytes/s (optimizer step) */
    double efficiency;             /* gpu.model=flat: fraction of peak compute achieves */
    rs_compute_model compute;      /* gpu.model */
    int gpu_given;                 /* the plan file named its GPU (gpu.preset or gpu.peak_flops) */
    int batch_of_preset;           /* par.global_batch is its preset's (not given): rs_plan_set_gpus may grow it */
} rs_plan;

/* Defaults: a tiny dense model on one H100 (see docs/plan-format.md). */
RS_API void rs_plan_default(rs_plan *p);

/* Built-in plans: llama2-7b, llama2-70b, gpt3-175b, gpt-1t, mixtral-8x7b.
 * RS_EINVAL naming the known presets for another name. */
RS_API int rs_plan_preset(const char *name, rs_plan *out, rs_err *err);
/* NULL-terminated list of preset names. */
RS_API const char *const *rs_plan_preset_names(void);

/* Read a JSON plan file (it may start from a preset with "preset": NAME
 * and override keys) and validate it. On error *out is untouched and err
 * names the file, line:column or key and what was expected. RS_EIO for an
 * unreadable file, RS_EINVAL otherwise. */
RS_API int rs_plan_load(const char *path, rs_plan *out, rs_err *err);

/* A file if `arg` names an existing file, else a preset name. */
RS_API int rs_plan_load_arg(const char *arg, rs_plan *out, rs_err *err);

/* Keep TP, PP, CP and EP, set DP (and gpus) to fill `gpus` GPUs, then
 * validate. A preset's own batch (batch_of_preset) that dp does not
 * divide grows to the next multiple of micro_batch*dp (docs/plan-format.md);
 * a batch the plan file gave stays. RS_EINVAL if gpus is not a multiple
 * of tp*pp*cp (or of tp*pp*cp*ep) or the batch no longer divides. */
RS_API int rs_plan_set_gpus(rs_plan *p, uint32_t gpus, rs_err *err);

/* Check every field and combination; the sentence names the field
 * ("parallelism.tp: 3 does not divide model.heads (32)"), prefixed by
 * `where` (a file name or "preset X") when not NULL. */
RS_API int rs_plan_validate(const rs_plan *p, const char *where, rs_err *err);

/* tp * pp * dp * cp. */
RS_API uint32_t rs_plan_gpus(const rs_plan *p);

/* GPU presets: peak dense bf16 FLOP/s and HBM bandwidth (bytes/s) from
 * the vendors' data sheets. RS_EINVAL for an unknown name. */
RS_API int rs_plan_gpu_peak(const char *preset, double *peak, double *mem_bw);

/* The GPU plan p computes on (gpu.h): its gpu.preset's, or for a custom
 * GPU (gpu.peak_flops) the H100's kernel figures with p's peak and HBM
 * bandwidth. gpu.peak_flops and gpu.memory_bw override a preset's. */
struct rs_gpu;
RS_API void rs_plan_gpu(const rs_plan *p, struct rs_gpu *out);

/* Make p compute on GPU preset `name` (peak, HBM bandwidth) unless its
 * file named a GPU: how a workload takes its system's GPU. RS_EINVAL
 * for an unknown name (p untouched). */
RS_API int rs_plan_default_gpu(rs_plan *p, const char *name);

/* placement.order as a permutation: perm[i] is the dimension at position
 * i, innermost first (0 tp, 1 cp, 2 ep, 3 dp/ep, 4 pp). The plan must be
 * valid. */
RS_API int rs_plan_placement(const rs_plan *p, int perm[5], rs_err *err);

RS_END_DECLS

#endif
