/*
 * bad_trace.c - writes a deliberately broken trace for tests/e2e/replay.sh:
 * 4 ranks on GPUs 0-3 sharing one DP communicator; ranks 0 and 1 compute,
 * call an AllReduce on it ("grad allreduce", 1 MiB) and compute again;
 * ranks 2 and 3 only compute. The file is valid (the format does not check
 * that members issue matching collectives); replaying it cannot finish.
 * With "sync" every rank runs the first program (compute 1 us, the
 * AllReduce, compute 1 us): a valid synchronous iteration, for the
 * straggler test of tests/e2e/fault_exp.sh.
 *
 * usage: bad_trace FILE [sync]
 */
#include <string.h>
#include <stdio.h>

#include "coll.h"
#include "trace.h"

int main(int argc, char **argv)
{
    if (argc != 2 && (argc != 3 || strcmp(argv[2], "sync"))) {
        fprintf(stderr, "usage: bad_trace FILE [sync]\n");
        return 2;
    }
    int sync = argc == 3;
    rs_trace *t = NULL;
    rs_err err;
    uint32_t lc = 0, la = 0, comm = 0, ca = 0, cb = 0, members[4] = { 0, 1, 2, 3 };
    int rc = rs_trace_create(4, 1, &t, &err);
    if (!rc)
        rc = rs_trace_add_string(t, "fwd", &lc, &err);
    if (!rc)
        rc = rs_trace_add_string(t, "grad allreduce", &la, &err);
    if (!rc)
        rc = rs_trace_add_comm(t, RS_DIM_DP, members, 4, &comm, &err);
    rs_op a[3] = {
        { RS_OP_COMPUTE, RS_DIM_NONE, 0, 0, RS_NONE, lc, { RS_NONE, RS_NONE }, 0, 1000000 },
        { RS_OP_COLL, RS_DIM_DP, RS_COLL_ALLREDUCE, 4, 0, la, { 0, RS_NONE }, 1u << 20, 0 },
        { RS_OP_COMPUTE, RS_DIM_NONE, 0, 0, RS_NONE, lc, { 1, RS_NONE }, 0, 1000000 },
    };
    if (!rc)
        rc = rs_trace_add_class(t, a, 3, &ca, &err);
    if (!rc)
        rc = rs_trace_add_class(t, a, 1, &cb, &err); /* the first compute only */
    for (uint32_t r = 0; r < 4 && !rc; r++)
        rc = rs_trace_set_rank(t, r, r, r < 2 || sync ? ca : cb, &comm, &err);
    rs_trace_iter it = { .tokens = 4096, .model_flops = 4e9, .peak_flops = 1e15, .efficiency = 1 };
    if (!rc)
        rc = rs_trace_set_info(t, &it, 4, sync ? "sync" : "broken", &err);
    if (!rc)
        rc = rs_trace_finish(t, &err);
    if (!rc)
        rc = rs_trace_write(t, argv[1], NULL, &err);
    if (rc)
        fprintf(stderr, "bad_trace: %s\n", err.msg);
    rs_trace_destroy(t);
    return rc ? 1 : 0;
}
