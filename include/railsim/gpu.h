/*
 * gpu.h - the GPUs railsim knows and how long their kernels take
 * (docs/compute.md): each preset's data-sheet figures (peak dense BF16
 * FLOP/s, HBM bandwidth, SMs, board power) and the measured figures its
 * kernels reach (a large GEMM's share of peak, a fused attention
 * kernel's, a streaming kernel's share of HBM bandwidth), every one with
 * its source in docs/compute.md.
 *
 * A kernel's time is a roofline: its FLOPs at the rate the GPU reaches
 * for its shape, or its HBM bytes at the streaming rate, whichever is
 * longer. A GEMM's rate is the per-wave efficiency times its wave
 * quantization: C = M x N is cut into tiles, one thread block each, and
 * the tiles run in waves of one per SM, the last wave partly empty
 * (NVIDIA's "Matrix Multiplication Background User's Guide"). Every
 * kernel also pays the gap between two kernels of one stream, and no
 * kernel issues faster than the host launches it.
 */
#ifndef RS_GPU_H
#define RS_GPU_H

#include <stdint.h>

#include "base.h"

RS_BEGIN_DECLS

typedef struct rs_gpu {
    const char *name;     /* "h100" */
    double peak_flops;    /* dense BF16 tensor FLOP/s (data sheet) */
    double mem_bw;        /* HBM bytes/s (data sheet) */
    uint32_t sms;         /* SMs (CUs on AMD) */
    uint32_t tile_m, tile_n; /* the output tile of one thread block of a large GEMM */
    double gemm_meas;     /* a measured square GEMM's share of peak ... */
    double gemm_meas_n;   /* ... of this size (M = N = K): a full wave reaches gemm_meas over
                             that GEMM's wave quantization */
    double attn_fwd_eff, attn_bwd_eff; /* a fused (flash) attention kernel's share of peak, measured */
    double mem_eff;       /* a streaming kernel's share of HBM bandwidth, measured */
    double gap_us;        /* between two back-to-back kernels of one stream */
    double host_us;       /* host time to launch one op (a floor on each kernel) */
    double tdp_w;         /* board power limit */
    double busy_w;        /* board power while it computes (training kernels) */
    double comm_w;        /* while only communication kernels run */
    double idle_w;        /* idle */
} rs_gpu;

/* The preset named `name` ("a100", "h100", "h200", "gh200", "b200",
 * "gb200", "mi250x-gcd"), NULL if none. */
RS_API const rs_gpu *rs_gpu_find(const char *name);

/* NULL-terminated list of the preset names (the array, for tables that
 * need it at compile time, and a call). */
RS_API extern const char *const rs_gpu_preset_names[];
RS_API const char *const *rs_gpu_names(void);

/* Seconds, kernels only (no gap, no launch floor):
 * a GEMM C[m x n] = A[m x k] B[k x n] of `bytes`-byte elements;
 * a fused attention kernel doing `flops` (bwd 0 forward, 1 backward);
 * a streaming kernel moving `bytes` through HBM. */
RS_API double rs_gpu_gemm_s(const rs_gpu *g, double m, double n, double k, double bytes);
RS_API double rs_gpu_attn_s(const rs_gpu *g, double flops, int bwd);
RS_API double rs_gpu_stream_s(const rs_gpu *g, double bytes);

/* Seconds one kernel of `kernel_s` occupies its stream: its time plus
 * the gap between kernels, at least the host's launch time. */
RS_API double rs_gpu_launch_s(const rs_gpu *g, double kernel_s);

/* The share of a large GEMM's peak a wave reaches with `tiles` thread
 * blocks: tiles / (waves x SMs). */
RS_API double rs_gpu_wave_eff(const rs_gpu *g, double tiles);

RS_END_DECLS

#endif
