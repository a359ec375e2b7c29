/*
 * dcqcn.c - the DCQCN reaction point's rate rules (Zhu et al., SIGCOMM
 * 2015; the constants' sources: net_config.c, docs/model.md "DCQCN"): a
 * CNP cuts the rate by alpha / 2 and raises alpha; the rate timer and
 * byte counter recover it in fast recovery, additive and hyper increase
 * stages. Pure arithmetic on one rs_dcqcn_rp, shared by the packet level
 * (transport.c, per QP) and the flow level (fluid_dcqcn.c, per flow).
 */
#include "netint.h"

#include <math.h>
#include <string.h>

void rs_dcqcn_init(const rs_net *net, rs_dcqcn_rp *rp)
{
    memset(rp, 0, sizeof *rp);
    rp->rc = rp->rt = net->line_bps;
    rp->alpha = 1.0;
}

void rs_dcqcn_increase(const rs_net *net, rs_dcqcn_rp *rp, int by_timer)
{
    const rs_dcqcn_config *d = &net->cfg.dcqcn;
    if (by_timer)
        rp->t_stage++;
    else
        rp->b_stage++;
    rp->timer_inc = by_timer != 0;
    uint32_t hi = rp->t_stage > rp->b_stage ? rp->t_stage : rp->b_stage;
    uint32_t lo = rp->t_stage < rp->b_stage ? rp->t_stage : rp->b_stage;
    if (hi < d->fast_recovery)
        ; /* fast recovery: Rt stays */
    else if (lo >= d->fast_recovery)
        rp->rt += (double)(lo - d->fast_recovery + 1) * d->rhai_mbps * 1e6; /* hyper increase */
    else
        rp->rt += d->rai_mbps * 1e6; /* additive increase */
    if (rp->rt > net->line_bps)
        rp->rt = net->line_bps;
    rp->rc = (rp->rt + rp->rc) / 2;
    if (rp->rc >= net->line_bps - 1.0) {
        /* Back at line rate: stop pacing and the timers until the next CNP. */
        rp->rc = rp->rt = net->line_bps;
        rp->limited = 0;
    }
}

void rs_dcqcn_cut(const rs_net *net, rs_dcqcn_rp *rp, rs_time now)
{
    const rs_dcqcn_config *d = &net->cfg.dcqcn;
    double floor = d->min_rate_mbps * 1e6;
    if (rp->limited) {
        /* Alpha decays by (1 - g) for every whole alpha period since it
         * was last updated, computed when needed instead of by a timer per
         * period (NICs update every microsecond: an event per flow per us). */
        uint64_t periods = (now - rp->alpha_at) / net->alpha_period;
        if (periods) {
            rp->alpha *= pow(1.0 - d->g, (double)periods);
            rp->alpha_at += periods * net->alpha_period;
        }
    }
    /* The paper sets the target to the current rate at every cut; NVIDIA's
     * firmware only when the last increase was the timer's, so a flow cut
     * again while still recovering by bytes keeps climbing back to the
     * rate it had (clamp_tgt_rate = 0, clamp_tgt_rate_after_time_inc = 1). */
    if (d->clamp_target || (d->clamp_after_timer && rp->timer_inc))
        rp->rt = rp->rc;
    rp->rc *= 1.0 - rp->alpha / 2;
    if (rp->rc < floor)
        rp->rc = floor;
    rp->alpha = (1.0 - d->g) * rp->alpha + d->g;
    rp->alpha_at = now;
    rp->t_stage = rp->b_stage = 0;
    rp->limited = 1;
}
