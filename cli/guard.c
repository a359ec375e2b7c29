/*
 * guard.c - the pre-run memory estimate (guard.h). The message counts are
 * what the workloads send: synthetic patterns exactly; a collective about
 * one message per chunk (512 KiB) per rank per step.
 */
#include "guard.h"

#include <unistd.h>

static double messages(const rs_scenario *sc)
{
    if (sc->workload.plan[0] || sc->workload.trace[0])
        return 0; /* not estimated yet (guard.h) */
    double n = sc->net.gpus;
    const rs_synth_config *t = &sc->traffic;
    switch (t->kind) {
    case RS_SYNTH_SINGLE: return 1;
    case RS_SYNTH_PERMUTATION: return n;
    case RS_SYNTH_ALL_TO_ALL: return n * (n - 1);
    case RS_SYNTH_INCAST: return t->fan_in;
    default: {
        /* A collective over at most all GPUs: 2(n-1) steps per rank, each
         * cut into 512 KiB chunks of a 1/n slice, at least one message. */
        double chunks = (double)t->bytes / n / (512.0 * 1024.0);
        double per_rank = 2.0 * (n - 1) * (chunks > 1 ? chunks : 1);
        return n * per_rank * (t->iters ? t->iters : 1);
    }
    }
}

int rs_guard_check(const rs_scenario *sc, int force, rs_err *err)
{
    double m = messages(sc);
    uint64_t need;
    int rc = rs_net_estimate_bytes(&sc->net, m > 1.8e19 ? UINT64_MAX / 1024 : (uint64_t)m, &need, err);
    if (rc != RS_OK)
        return rc;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (force || pages <= 0 || page <= 0)
        return RS_OK;
    double have = (double)pages * (double)page;
    if ((double)need <= 0.8 * have)
        return RS_OK;
    return rs_err_set(err, RS_ERANGE,
                      "this run needs about %.1f GB (%.3g messages on %u GPUs) and the machine has %.1f GB; "
                      "expected a smaller run: try fidelity=flow, fewer GPUs or smaller messages, "
                      "or railsim run --force",
                      (double)need / 1e9, m, sc->net.gpus, have / 1e9);
}
