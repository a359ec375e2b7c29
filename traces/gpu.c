/*
 * gpu.c - GPU presets and kernel times (gpu.h). Every figure's source is
 * in docs/compute.md, "Where each figure comes from"; the comments here
 * only name it.
 */
#include "gpu.h"

#include <math.h>
#include <string.h>

/* Tiles: cuBLAS's large BF16 GEMMs on Ampere and Hopper run 256 x 128
 * output tiles, one thread block per SM (NVIDIA's Matrix Multiplication
 * Background User's Guide takes that tile for its wave-quantization
 * example); the same tile is assumed on the others.
 *
 * COMM_W: no measurement of a GPU running only NCCL's kernels was found;
 * railsim assumes the idle power plus the share of the busy power's
 * excess that NCCL's 16 thread blocks are of the SMs (docs/compute.md). */
#define COMM_W(idle, busy, sms) ((idle) + ((busy) - (idle)) * 16.0 / (sms))
#define GPU(nm, peak, bw, nsm, gm, gmn, attn, mem, tdp, idle)                                                     \
    { .name = nm, .peak_flops = peak, .mem_bw = bw, .sms = nsm, .tile_m = 256, .tile_n = 128, .gemm_meas = gm,   \
      .gemm_meas_n = gmn, .attn_fwd_eff = attn, .attn_bwd_eff = attn, .mem_eff = mem, .gap_us = 0,            \
      .host_us = 1.2, .tdp_w = tdp, .busy_w = tdp, .comm_w = COMM_W(idle, tdp, nsm), .idle_w = idle }

/* GEMM: a measured square GEMM of size gmn, or (gmn 0) the best shape of
 * a sweep, taken as a full wave. Attention: FlashAttention-2 as PyTorch
 * ships it, forward and backward together (Azure's measurements), on
 * both passes. Streaming: the STREAM triad's share of HBM bandwidth. */
static const rs_gpu gpus[] = {
    GPU("a100", 312e12, 2039e9, 108, 253.7 / 312, 8192, 179.5 / 312, 1.70 / 2.039, 400, 60),
    GPU("h100", 989e12, 3350e9, 132, 797.8 / 989, 8192, 327.9 / 989, 2.97 / 3.35, 700, 70),
    GPU("h200", 989e12, 4800e9, 132, 797.8 / 989, 8192, 329.3 / 989, 4.15 / 4.8, 700, 78),
    GPU("gh200", 989e12, 4000e9, 132, 828.6 / 989, 0, 327.9 / 989, 0.86, 700, 70),
    GPU("b200", 2.25e15, 8000e9, 148, 1745.0 / 2250, 0, 373.9 / 2250, 0.86, 1000, 165),
    GPU("gb200", 2.5e15, 8000e9, 148, 1822.0 / 2500, 0, 373.9 / 2500, 0.86, 1200, 165),
    GPU("mi250x-gcd", 191.5e12, 1638.4e9, 110, 147.0 / 191.5, 0, 179.5 / 312, 0.86, 250, 25),
};
#define NGPUS (sizeof gpus / sizeof gpus[0])

const char *const rs_gpu_preset_names[] = { "a100", "h100", "h200", "gh200", "b200", "gb200", "mi250x-gcd", NULL };
_Static_assert(sizeof rs_gpu_preset_names / sizeof rs_gpu_preset_names[0] == NGPUS + 1, "one name per GPU");

const rs_gpu *rs_gpu_find(const char *name)
{
    for (size_t i = 0; i < NGPUS; i++)
        if (strcmp(gpus[i].name, name) == 0)
            return &gpus[i];
    return NULL;
}

const char *const *rs_gpu_names(void)
{
    return rs_gpu_preset_names;
}

double rs_gpu_wave_eff(const rs_gpu *g, double tiles)
{
    if (!(tiles >= 1))
        tiles = 1;
    double waves = ceil(tiles / g->sms);
    return tiles / (waves * g->sms);
}

static double tiles_of(const rs_gpu *g, double m, double n)
{
    return ceil(m / g->tile_m) * ceil(n / g->tile_n);
}

double rs_gpu_gemm_s(const rs_gpu *g, double m, double n, double k, double bytes)
{
    if (!(m > 0 && n > 0 && k > 0))
        return 0;
    double meas_n = g->gemm_meas_n;
    double per_wave = meas_n > 0 ? g->gemm_meas / rs_gpu_wave_eff(g, tiles_of(g, meas_n, meas_n)) : g->gemm_meas;
    if (per_wave > 1)
        per_wave = 1;
    double flops_s = 2 * m * n * k / (g->peak_flops * per_wave * rs_gpu_wave_eff(g, tiles_of(g, m, n)));
    double mem_s = rs_gpu_stream_s(g, (m * k + k * n + m * n) * bytes);
    return flops_s > mem_s ? flops_s : mem_s;
}

double rs_gpu_attn_s(const rs_gpu *g, double flops, int bwd)
{
    return flops / (g->peak_flops * (bwd ? g->attn_bwd_eff : g->attn_fwd_eff));
}

double rs_gpu_stream_s(const rs_gpu *g, double bytes)
{
    return bytes / (g->mem_bw * g->mem_eff);
}

double rs_gpu_launch_s(const rs_gpu *g, double kernel_s)
{
    double t = kernel_s + g->gap_us * 1e-6;
    double host = g->host_us * 1e-6;
    return t > host ? t : host;
}
