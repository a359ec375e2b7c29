/*
 * workload.c - the workload.* keys (replay.h): a workload names a plan
 * (file or preset), generated for the network's GPUs, or a trace file;
 * rs_workload_load turns it into the trace a replay runs.
 */
#include "replay.h"

#include <stdio.h>
#include <string.h>

#include "gen.h"
#include "gpu.h"
#include "plan.h"
#include "versioned.h"

static void workload_defaults(rs_workload_config *c)
{
    memset(c, 0, sizeof *c);
    c->iterations = 1;
    c->algo = RS_ALGO_AUTO;
    c->sync = RS_SYNC_RANK;
    snprintf(c->placement, sizeof c->placement, "packed");
    c->fragmentation = 0.5;
}

void rs_workload_config_init(rs_workload_config *c, size_t size)
{
    rs_workload_config d;
    workload_defaults(&d);
    d.size = (uint32_t)sizeof d;
    rs_versioned_give(c, size, &d, sizeof d);
}

int rs_workload_active(const rs_workload_config *c)
{
    /* plan and trace are first-version fields: read in place. */
    return c && c->size >= RS_SIZE_V1(rs_workload_config, sync) && (c->plan[0] != '\0' || c->trace[0] != '\0');
}

/* The plan c->plan names, computing on the system's GPU c->gpu unless it
 * names its own (a GPU without a preset keeps the plan's), under
 * workload.compute. RS_EINVAL or RS_EIO with err starting with the key. */
static int plan_of(const rs_workload_config *c, rs_plan *p, rs_err *err)
{
    rs_err e;
    int rc = rs_plan_load_arg(c->plan, p, &e);
    if (rc != RS_OK)
        return rs_err_set(err, rc, "workload.plan: %.480s", e.msg);
    if (c->gpu[0])
        (void)rs_plan_default_gpu(p, c->gpu);
    if (c->compute != RS_WCOMPUTE_PLAN)
        p->compute = c->compute == RS_WCOMPUTE_FLAT ? RS_COMPUTE_FLAT : RS_COMPUTE_SHAPES;
    return RS_OK;
}

/* The key that set the job's GPU count (workload.placement's list gives
 * one when workload.gpus does not). */
static const char *gpus_key(const rs_workload_config *c)
{
    if (c->gpus)
        return "workload.gpus";
    return c->placement[0] >= '0' && c->placement[0] <= '9' ? "the GPU count workload.placement lists" : "topology.gpus";
}

int rs_workload_load(const rs_workload_config *cfg, uint32_t gpus, rs_trace **out, rs_err *err)
{
    *out = NULL;
    rs_workload_config own;
    rs_workload_config_default(&own);
    if (rs_versioned_take(&own, sizeof own, cfg, RS_SIZE_V1(rs_workload_config, sync)) != RS_OK)
        return rs_err_set(err, RS_EINVAL, "workload: a configuration of no known size (initialise it with "
                          "rs_workload_config_default)");
    const rs_workload_config *c = &own;
    rs_err e;
    rs_err_clear(&e);
    int rc;
    if (c->plan[0] && c->trace[0])
        return rs_err_set(err, RS_EINVAL,
                          "workload.plan and workload.trace: expected one of them, got both (\"%.100s\" "
                          "and \"%.100s\")", c->plan, c->trace);
    if (c->plan[0]) {
        rs_plan p;
        if ((rc = plan_of(c, &p, err)) != RS_OK)
            return rc;
        /* trace gen --gpus semantics: keep TP, PP, CP and EP, fill DP. */
        uint64_t unit = (uint64_t)p.par.tp * p.par.pp * p.par.cp * p.par.ep;
        if (gpus % unit)
            return rs_err_set(err, RS_EINVAL,
                              "workload.plan: plan %s needs a multiple of tp x pp x cp x ep = %u x %u x "
                              "%u x %u = %llu GPUs, but %s is %u", p.name, p.par.tp, p.par.pp,
                              p.par.cp, p.par.ep, (unsigned long long)unit, gpus_key(c), gpus);
        if ((rc = rs_plan_set_gpus(&p, gpus, &e)) != RS_OK)
            return rs_err_set(err, rc, "workload.plan: %.480s", e.msg);
        if ((rc = rs_gen(&p, out, &e)) != RS_OK)
            return rs_err_set(err, rc, "workload.plan: %.480s", e.msg);
        return RS_OK;
    }
    if (c->trace[0]) {
        if ((rc = rs_trace_read(c->trace, out, NULL, &e)) != RS_OK)
            return rs_err_set(err, rc, "workload.trace: %.480s", e.msg);
        if (rs_trace_ngpus(*out) > gpus) {
            rc = rs_err_set(err, RS_EINVAL,
                            "workload.trace: %.300s is a trace for %u GPUs, but the %s has %u "
                            "(%s)", c->trace, rs_trace_ngpus(*out), strcmp(gpus_key(c), "topology.gpus") ? "job" :
                            "network", gpus, gpus_key(c));
            rs_trace_destroy(*out);
            *out = NULL;
            return rc;
        }
        return RS_OK;
    }
    return rs_err_set(err, RS_EINVAL, "workload: expected workload.plan or workload.trace");
}

int rs_workload_gpu(const rs_workload_config *cfg, rs_gpu *out, rs_err *err)
{
    rs_workload_config own;
    rs_workload_config_default(&own);
    if (rs_versioned_take(&own, sizeof own, cfg, RS_SIZE_V1(rs_workload_config, sync)) != RS_OK)
        return rs_err_set(err, RS_EINVAL, "workload: a configuration of no known size");
    if (own.plan[0]) {
        rs_plan p;
        int rc = plan_of(&own, &p, err);
        if (rc != RS_OK)
            return rc;
        rs_plan_gpu(&p, out);
        return RS_OK;
    }
    const rs_gpu *g = own.gpu[0] ? rs_gpu_find(own.gpu) : NULL;
    if (!g)
        return rs_err_set(err, RS_EINVAL, "workload: no GPU preset for system.gpu \"%s\"", own.gpu);
    *out = *g;
    return RS_OK;
}
