/*
 * gen.h - the trace generator: a validated plan (plan.h) becomes a trace
 * (trace.h) of per-rank programs (program.h) for one training iteration.
 * docs/plan-format.md describes the FLOP model, the communication each
 * parallelism dimension issues, and the dependencies that let it overlap.
 *
 * Ranks whose programs are equal share one class: with the slot tables,
 * every rank of a pipeline stage runs the same program, so a trace has at
 * most pp classes (fewer with GPipe, whose middle stages are identical).
 */
#ifndef RS_GEN_H
#define RS_GEN_H

#include "plan.h"
#include "trace.h"

RS_BEGIN_DECLS

/* Slot numbering of generated traces (rs_trace_nslots = RS_GEN_NSLOTS). */
enum {
    RS_GEN_SLOT_TP = 0,   /* TP communicator */
    RS_GEN_SLOT_CP,       /* CP communicator */
    RS_GEN_SLOT_EP,       /* EP communicator (MoE all-to-all) */
    RS_GEN_SLOT_DP,       /* gradient communicator of dense parameters: DP x CP */
    RS_GEN_SLOT_EDP,      /* gradient communicator of expert parameters: DP/EP x CP */
    RS_GEN_SLOT_PP_PREV,  /* previous pipeline stage's rank (peer) */
    RS_GEN_SLOT_PP_NEXT,  /* next pipeline stage's rank (peer) */
    RS_GEN_NSLOTS
};

/* The FLOP model, per GPU, for one micro-batch (see docs/plan-format.md):
 * forward FLOPs of one transformer layer's blocks and of the logits, and
 * the optimizer step's time. Exposed for tests and reports. */
typedef struct rs_gen_flops {
    double qkv, attn_core, attn_out; /* attention: projections, scores+context, output */
    double mlp;                      /* dense MLP (0 for MoE) */
    double router, experts;          /* MoE (0 for dense) */
    double logits;                   /* last stage: output layer + loss */
    double layer_params_dense;       /* parameters of one layer on one GPU */
    double layer_params_expert;
    double embed_params;             /* embedding (first stage) = output layer (last) */
    double ps_per_flop;              /* 1e12 / (peak x efficiency) */
} rs_gen_flops;

RS_API void rs_gen_flops_of(const rs_plan *p, rs_gen_flops *f);

/* Model FLOPs of one iteration (forward + backward = 3 x forward, no
 * recomputation, all GPUs): the MFU numerator. */
RS_API double rs_gen_model_flops(const rs_plan *p);

/* Generate the trace of plan p (validated here too). *out is finished and
 * owned by the caller (rs_trace_destroy). RS_EINVAL with err naming the
 * plan field, RS_ENOMEM. */
RS_API int rs_gen(const rs_plan *p, rs_trace **out, rs_err *err);

RS_END_DECLS

#endif
