/*
 * coll_nvls.c - NVLink SHARP (NCCL's NVLS algorithm) inside one HB domain:
 * the NVSwitch reduces and multicasts, so a GPU's NVLink ports carry less
 * than a ring's steps would.
 *
 * NCCL's NVLS kernels use the NVSwitch's multimem instructions: for
 * AllReduce, GPU j reads its 1/n share of the buffer reduced over every
 * GPU (multimem.ld_reduce: each GPU's port sends its copy of every share,
 * S bytes, and receives the reduced share, S/n) and writes it back to
 * every GPU (multimem.st: S/n out, each GPU receiving every share, S).
 * Each port so carries S (n+1)/n each way, where a ring carries
 * 2 S (n-1)/n: busbw 2(n-1)/(n+1) of the port's rate instead of 1 (1.56
 * for 8 GPUs). ReduceScatter is the first half (S out, S/n in), AllGather
 * the second (S/n out, S in): S on the busier direction of each port.
 *
 * railsim has no multicast or in-switch reduction, so it puts that load
 * on the ports: every GPU sends each of its n-1 peers an equal share of
 * it, which loads every port in both directions as the busier of NVLS's
 * two does, scaled by 1 / nvls_eff (NCCL's nvlsEfficiency: 0.85 on
 * Hopper, 0.74 on Blackwell; 1 under nccl.model=ideal) for the rate the
 * switch's reductions keep. The bytes the network reports for an NVLS
 * collective are these port loads, not user data (docs/collectives.md,
 * "NVLS"). Its latency is NCCL's (25 us on NVLink), added once at the
 * end (coll_tune.c).
 */
#include "coll_int.h"

#include <math.h>

static void nvls_arrived(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    (void)tag;
    rs_coll_advance(ctx, 1); /* last: may finish and free c */
}

int rs_coll_nvls_start(rs_coll *c, rs_err *err)
{
    (void)err;
    uint32_t n = c->n;
    double s = (double)c->bytes, load;
    switch (c->op) {
    case RS_COLL_ALLREDUCE:
        load = s * (n + 1) / n;
        break;
    default: /* ReduceScatter: S out; AllGather: S in */
        load = s;
        break;
    }
    uint64_t per = (uint64_t)ceil(load / (n - 1) / c->nvls_eff);
    c->pending = (uint64_t)n * (n - 1);
    if (c->probe) { /* named (members joining): a serial per transfer, no callbacks */
        c->probe->serials += c->pending;
        return RS_OK;
    }
    /* Named: transfer (i, k) takes serial0 + i (n - 1) + k - 1, alike in
     * every process; else each its own as it starts. */
    for (uint32_t i = 0; i < n && c->status == RS_OK; i++)
        for (uint32_t k = 1; k < n && c->status == RS_OK; k++)
            rs_coll_send_named(c, i, (i + k) % n, per, nvls_arrived, NULL, (uint64_t)i * n + k,
                               c->serial0 == UINT64_MAX ? UINT64_MAX : c->serial0 + (uint64_t)i * (n - 1) + k - 1);
    return c->status;
}
