/*
 * fuzz_plan.c - the plan reader (traces/plan.c) on hostile JSON, and the
 * generator on every small plan it accepts.
 */
#include "fuzz_util.h"
#include "gen.h"
#include "plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    rs_plan p;
    rs_err err;
    if (rs_plan_load(path, &p, &err) != RS_OK)
        return 0;
    /* keep generation small: the generator's cost grows with these */
    uint64_t mbs = p.par.global_batch / ((uint64_t)p.par.micro_batch * p.par.dp);
    if (rs_plan_gpus(&p) > 64 || p.model.layers > 64 || mbs > 64)
        return 0;
    rs_trace *t = NULL;
    if (rs_gen(&p, &t, &err) == RS_OK)
        rs_trace_destroy(t);
    return 0;
}
