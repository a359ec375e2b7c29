/*
 * tl_fixture.c - writes a timeline of a small synthetic training step
 * through the real writer (include/railsim/timeline.h), for the analysis tests
 * (tests/e2e/analysis.sh) while railsim run does not write timelines yet.
 *
 * 16 ranks in 2 HB domains of 8; communicators tp[0], tp[1] (one per
 * domain) and dp[0]..dp[7] (rank i with rank i+8). Three iterations of:
 * compute fwd 100 us, a TP allreduce of 10 us, compute bwd 200 us, and a DP
 * allreduce that starts halfway through bwd and ends 20 us after it (so it
 * overlaps compute without nesting: Perfetto must split it onto a second
 * track). Each collective also writes a coll record and two flows per
 * rank. Twelve ports are sampled every 10 us; a few PFC pauses, ECN marks,
 * CNPs, two drops and a link fault (down and up) complete every kind.
 *
 * Usage: tl_fixture OUT.msgpack [--partial]   Exit 0, 1 on a write error,
 * 2 on bad usage. The output is deterministic.
 */
#include "timeline.h"

#include <stdio.h>
#include <string.h>

#define RANKS 16
#define HB 8
#define ITERS 3
#define US 1000000ULL /* ps */
#define PORTS 12

static const char scenario[] =
    "{\"seed\": 7, \"topology\": {\"kind\": \"rail-only\", \"gpus\": 16, \"hb_size\": 8, \"radix\": 64}}";

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "--partial"))) {
        fprintf(stderr, "usage: tl_fixture OUT.msgpack [--partial]\n");
        return 2;
    }
    static const rs_timeline_kv topo[] = { { "gpus", RANKS }, { "hb_size", HB }, { "switches", 8 },
                                           { "links", 16 } };
    rs_timeline_header h = { "0.1.0", 7, scenario, topo, 4, "" };
    rs_timeline *tl = NULL;
    rs_err err = { 0 };
    if (rs_timeline_create(argv[1], &h, &tl, &err) != RS_OK) {
        fprintf(stderr, "tl_fixture: %s\n", err.msg);
        return 1;
    }
    char name[64];
    for (uint32_t r = 0; r < RANKS; r++) {
        snprintf(name, sizeof name, "gpu%u", r);
        rs_timeline_name(tl, RS_TL_NS_RANK, r, name);
    }
    for (uint32_t d = 0; d < RANKS / HB; d++) {
        snprintf(name, sizeof name, "tp[%u]", d);
        rs_timeline_name(tl, RS_TL_NS_COMM, d, name);
    }
    for (uint32_t i = 0; i < HB; i++) {
        snprintf(name, sizeof name, "dp[%u]", i);
        rs_timeline_name(tl, RS_TL_NS_COMM, 2 + i, name);
    }
    for (uint32_t p = 0; p < PORTS; p++) {
        if (p < 8)
            snprintf(name, sizeof name, "gpu%u.nic", p);
        else
            snprintf(name, sizeof name, "rail%u.sw0.p%u", p - 8, p);
        rs_timeline_name(tl, RS_TL_NS_PORT, p, name);
    }

    uint64_t coll_id = 0;
    rs_time t0 = 0;
    for (int it = 0; it < ITERS; it++) {
        rs_time fwd_end = t0 + 100 * US, tp_end = fwd_end + 10 * US, bwd_end = tp_end + 200 * US;
        rs_time dp_start = tp_end + 100 * US, dp_end = bwd_end + 20 * US;
        char label[64];
        for (uint32_t r = 0; r < RANKS; r++) {
            /* A small per-rank skew so ranks differ. */
            rs_time skew = (rs_time)r * 1000 + 1;
            snprintf(label, sizeof label, "iter %d fwd", it);
            rs_timeline_op_rec fwd = { r, RS_TL_NONE, t0 + skew, fwd_end, 0, "compute", label };
            rs_timeline_op_rec tp = { r, r / HB, fwd_end, tp_end + skew, 8u << 20, "allreduce", "tp, \"sync\"" };
            snprintf(label, sizeof label, "iter %d bwd", it);
            rs_timeline_op_rec bwd = { r, RS_TL_NONE, tp_end + skew, bwd_end, 0, "compute", label };
            rs_timeline_op_rec dp = { r, 2 + r % HB, dp_start, dp_end + skew, 64u << 20, "allreduce", "grads" };
            rs_timeline_op(tl, &fwd);
            rs_timeline_op(tl, &tp);
            rs_timeline_op(tl, &bwd);
            rs_timeline_op(tl, &dp);
            for (int k = 0; k < 2; k++) {
                rs_timeline_flow_rec fl = { r, (r + 1 + (uint32_t)k) % RANKS, 1u << 20,
                                            dp_start + (rs_time)k * 5 * US,
                                            dp_start + (rs_time)(k + 1) * 5 * US + skew * 37 };
                rs_timeline_flow(tl, &fl);
            }
        }
        for (uint32_t d = 0; d < RANKS / HB; d++) {
            rs_timeline_coll_rec c = { coll_id++, d, HB, 8u << 20, fwd_end, tp_end + (HB - 1) * 1000 + 1,
                                       "allreduce", "ring" };
            rs_timeline_coll(tl, &c);
        }
        for (uint32_t i = 0; i < HB; i++) {
            rs_timeline_coll_rec c = { coll_id++, 2 + i, RANKS / HB, 64u << 20, dp_start,
                                       dp_end + (i + HB) * 1000 + 1, "allreduce", i % 2 ? "tree" : "ring" };
            rs_timeline_coll(tl, &c);
        }
        t0 = dp_end + 50 * US;
    }
    /* Samples every 10 us; port p carries p/PORTS of line rate in the
     * DP windows, a little otherwise; queues grow on the rail ports. */
    uint64_t tx[PORTS] = { 0 };
    for (rs_time t = 10 * US; t <= t0; t += 10 * US) {
        for (uint32_t p = 0; p < PORTS; p++) {
            double util = ((t / (10 * US)) % 35 >= 21) ? (double)(p + 1) / PORTS : 0.01 * (p + 1);
            tx[p] += (uint64_t)(util * 500000.0); /* 400 Gb/s for 10 us = 500,000 bytes */
            rs_timeline_sample_rec s = { t, p, tx[p], p >= 8 ? (uint64_t)(util * 300000) : 0, util };
            rs_timeline_sample(tl, &s);
        }
    }
    for (int k = 0; k < 3; k++) {
        rs_timeline_pfc_rec on = { (rs_time)(330 + k * 5) * US, 8 + (uint32_t)k, 1u << 3, 1 };
        rs_timeline_pfc_rec off = { (rs_time)(332 + k * 5) * US, 8 + (uint32_t)k, 1u << 3, 0 };
        rs_timeline_pfc(tl, &on);
        rs_timeline_pfc(tl, &off);
        rs_timeline_ecn_rec m = { (rs_time)(331 + k) * US, 9, RS_TL_ECN_MARK, 4 };
        rs_timeline_ecn_rec c = { (rs_time)(331 + k) * US + 500, 1, RS_TL_ECN_CNP, 1 };
        rs_timeline_ecn(tl, &m);
        rs_timeline_ecn(tl, &c);
    }
    rs_timeline_drop_rec d1 = { 400 * US, 10, 1, 4158, "buffer" };
    rs_timeline_drop_rec d2 = { 700 * US, 11, 3, 12474, "link-down" };
    rs_timeline_drop(tl, &d1);
    rs_timeline_fault_rec fd = { 699 * US, "link rail3.sw0.p11", "down", "fixture" };
    rs_timeline_fault_rec fu = { 750 * US, "link rail3.sw0.p11", "up", "" };
    rs_timeline_fault(tl, &fd);
    rs_timeline_drop(tl, &d2);
    rs_timeline_fault(tl, &fu);
    if (rs_timeline_close(tl, argc == 3, &err) != RS_OK) {
        fprintf(stderr, "tl_fixture: %s\n", err.msg);
        return 1;
    }
    return 0;
}
