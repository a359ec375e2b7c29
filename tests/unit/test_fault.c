/*
 * test_fault.c - the fault module (models/fault.c): schedule syntax,
 * target resolution, route recomputation, partition stop, conservation,
 * rail-only reroute through the HB domain, failover of messages in flight.
 */
#include "cu_main.h"
#include "fixture_net.h"
#include "compute.h"
#include "fault.h"
#include "net.h"
#include "netint.h"

/* Allocation failures on demand: while calloc_fail_in > 0, the
 * calloc_fail_in-th calloc from now (the library's included) returns NULL.
 * This calloc stands in for the C library's (or the sanitizer's) and
 * hands every other call to it. */
static int calloc_fail_in;
#if defined(__SANITIZE_ADDRESS__)
void *__interceptor_calloc(size_t n, size_t size);
#define REAL_CALLOC __interceptor_calloc
#else
void *__libc_calloc(size_t n, size_t size);
#define REAL_CALLOC __libc_calloc
#endif
void *calloc(size_t n, size_t size)
{
    if (calloc_fail_in > 0 && --calloc_fail_in == 0)
        return NULL;
    return REAL_CALLOC(n, size);
}

static rs_net *mk_pxn(rs_topo_kind kind, uint32_t gpus, uint32_t hb, uint32_t radix, rs_pxn_mode pxn)
{
    rs_net_config c;
    rs_fx_config(&c, gpus, hb, radix);
    c.kind = kind;
    c.pxn = pxn;
    return rs_fx_net(&c);
}

static int start(rs_net *net, const char *sched, double conv, rs_err *err)
{
    rs_fault_config fc;
    rs_fault_config_default(&fc);
    snprintf(fc.schedule, sizeof fc.schedule, "%s", sched);
    fc.convergence_us = conv;
    return rs_net_faults_start(net, &fc, err);
}

static void done_cb(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    (void)tag;
    (*(int *)ctx)++;
}

/* Send one message and run until idle: 1 when it completed and the run
 * ended RS_OK. */
static int send_run(rs_net *net, uint32_t src, uint32_t dst, uint64_t bytes)
{
    int n = 0;
    if (rs_fx_send(net, src, dst, bytes, done_cb, &n, 0) != RS_OK)
        return -1;
    return rs_net_run(net, RS_TIME_MAX) == RS_OK ? n : -1;
}

/* Every packet delivered or dropped, none alive, every byte once; the
 * entries' packets_lost add up to the drops. */
static void check_conserved(rs_net *net, uint64_t goodput)
{
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.pkts_sent, st.pkts_delivered + st.pkts_dropped);
    CU_ASSERT_EQUAL(st.pkts_in_flight, 0);
    CU_ASSERT_EQUAL(st.goodput_bytes, goodput);
    uint64_t lost = 0;
    for (uint32_t i = 0; i < rs_net_fault_count(net); i++) {
        rs_net_fault_info fi;
        rs_net_fault_info_get(net, i, &fi);
        lost += fi.packets_lost;
    }
    CU_ASSERT_EQUAL(lost, st.pkts_dropped);
}

static void test_fault_check_accepts_units_and_durations(void)
{
    rs_err err;
    CU_ASSERT_EQUAL(rs_fault_check("", "x", &err), RS_OK);
    CU_ASSERT_EQUAL(rs_fault_check("0 link-down leaf0.p4; 1.5us nic-down gpu3 2ms ;3s switch-up spine0", "x", &err), RS_OK);
    CU_ASSERT_EQUAL(rs_fault_check("100ps link-degrade=50 leaf0.p4 1ns", "x", &err), RS_OK);
}

static void test_fault_check_rejects_naming_label(void)
{
    rs_err err;
    CU_ASSERT_EQUAL(rs_fault_check("10 link-down leaf0.p4", "--fault", &err), RS_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--fault: entry 1"));
    CU_ASSERT_EQUAL(rs_fault_check("1us link-down", "faults.schedule", &err), RS_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "faults.schedule"));
    CU_ASSERT_EQUAL(rs_fault_check("1us link-degrade leaf0.p4", "k", &err), RS_EINVAL); /* needs a duration */
    CU_ASSERT_EQUAL(rs_fault_check("1us link-up leaf0.p4 5us", "k", &err), RS_EINVAL);
    CU_ASSERT_EQUAL(rs_fault_check("1us nic-down any-spine", "k", &err), RS_EINVAL);
}

static void test_fault_resolves_names_and_repairs_in_time_order(void)
{
    rs_net *net = rs_fx_topo(RS_TOPO_FAT_TREE, 16, 1, 8);
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(start(net, "5us switch-down spine1 10us; 2us nic-down gpu3", 0, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_net_fault_count(net), 3);
    rs_net_fault_info a, b, c;
    rs_net_fault_info_get(net, 0, &a);
    rs_net_fault_info_get(net, 1, &b);
    rs_net_fault_info_get(net, 2, &c);
    CU_ASSERT_STRING_EQUAL(a.target, "gpu3.nic");
    CU_ASSERT_STRING_EQUAL(b.target, "spine1");
    CU_ASSERT_STRING_EQUAL(c.kind, "switch-up");
    CU_ASSERT_EQUAL(c.time_ps, 15000000);
    CU_ASSERT_EQUAL(rs_net_fault_info_get(net, 3, &c), RS_EINVAL);
    rs_net_destroy(net);
}

static void test_fault_unknown_target_names_key(void)
{
    rs_net *net = rs_fx_topo(RS_TOPO_FAT_TREE, 16, 1, 8);
    rs_err err;
    CU_ASSERT_EQUAL(start(net, "1us link-down nvs0.p1", 0, &err), RS_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "faults.schedule: entry 1"));
    CU_ASSERT_EQUAL(rs_net_fault_count(net), 0);
    rs_net_destroy(net);
}

/* A class the topology lacks (rail-only on 32 GPUs of radix 16: one
 * switch per rail, no spine) is an error, unless absent_ok (railsim
 * compare): then its entry is skipped and listed as absent, the other
 * entries resolve as before and the traffic runs as without it. */
static void test_fault_absent_class_is_skipped_only_when_allowed(void)
{
    const char *sched = "3us link-down any-spine-link; 1us nic-down gpu3; 2us switch-down any-spine 5us";
    rs_net *net = rs_fx_topo(RS_TOPO_RAIL_ONLY, 32, 4, 16);
    rs_err err;
    CU_ASSERT_EQUAL(start(net, sched, 0, &err), RS_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "entry 1: class 'any-spine-link' has no member in this topology"));
    CU_ASSERT_EQUAL(rs_net_fault_absent_count(net), 0);
    rs_net_destroy(net);

    net = rs_fx_topo(RS_TOPO_RAIL_ONLY, 32, 4, 16);
    rs_fault_config fc;
    rs_fault_config_default(&fc);
    snprintf(fc.schedule, sizeof fc.schedule, "%s", sched);
    fc.absent_ok = 1;
    CU_ASSERT_EQUAL_FATAL(rs_net_faults_start(net, &fc, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_net_fault_count(net), 1); /* the NIC only */
    rs_net_fault_info fi;
    rs_net_fault_info_get(net, 0, &fi);
    CU_ASSERT_STRING_EQUAL(fi.target, "gpu3.nic");
    CU_ASSERT_EQUAL_FATAL(rs_net_fault_absent_count(net), 2);
    rs_net_fault_absent_get(net, 0, &fi);
    CU_ASSERT_STRING_EQUAL(fi.kind, "link-down");
    CU_ASSERT_STRING_EQUAL(fi.spec, "any-spine-link");
    CU_ASSERT_STRING_EQUAL(fi.origin, "absent");
    CU_ASSERT_EQUAL(fi.entry, 1);
    CU_ASSERT_EQUAL(fi.time_ps, 3000000);
    CU_ASSERT_FALSE(fi.applied);
    rs_net_fault_absent_get(net, 1, &fi);
    CU_ASSERT_STRING_EQUAL(fi.kind, "switch-down");
    CU_ASSERT_STRING_EQUAL(fi.spec, "any-spine");
    CU_ASSERT_EQUAL(fi.entry, 3);
    CU_ASSERT_EQUAL(rs_net_fault_absent_get(net, 2, &fi), RS_EINVAL);
    CU_ASSERT_EQUAL(send_run(net, 0, 9, 1u << 20), 1);
    rs_net_destroy(net);

    /* The fat tree of the same GPUs has spines: nothing is absent there. */
    net = rs_fx_topo(RS_TOPO_FAT_TREE, 32, 4, 16);
    CU_ASSERT_EQUAL_FATAL(rs_net_faults_start(net, &fc, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_net_fault_absent_count(net), 0);
    CU_ASSERT_EQUAL(rs_net_fault_count(net), 4); /* the switch-down has its repair */
    rs_net_destroy(net);

    /* Every entry absent: no fault at all (UBSan once caught the empty
     * schedule being sorted through a NULL array). */
    net = rs_fx_topo(RS_TOPO_RAIL_ONLY, 32, 4, 16);
    snprintf(fc.schedule, sizeof fc.schedule, "3us link-down any-spine-link");
    CU_ASSERT_EQUAL_FATAL(rs_net_faults_start(net, &fc, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_net_fault_count(net), 0);
    CU_ASSERT_EQUAL(rs_net_fault_absent_count(net), 1);
    CU_ASSERT_EQUAL(send_run(net, 0, 9, 1u << 20), 1);
    rs_net_destroy(net);
}

static void test_fault_link_down_removes_path_and_up_restores(void)
{
    rs_net *net = rs_fx_topo(RS_TOPO_FAT_TREE, 16, 1, 8);
    rs_err err;
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 15), 4);
    CU_ASSERT_EQUAL_FATAL(start(net, "0 nic-down gpu15 1us", 0, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 15), -1); /* applied at once: time 0 */
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 15), 4);
    rs_net_destroy(net);
}

static void test_fault_partition_stops_naming_gpus(void)
{
    rs_net *net = rs_fx_topo(RS_TOPO_FAT_TREE, 16, 1, 8);
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(start(net, "2us switch-down spine0; 2us switch-down spine1", 0, &err), RS_OK);
    int n = 0;
    CU_ASSERT_EQUAL(rs_fx_send(net, 0, 15, 1 << 22, done_cb, &n, 0), RS_OK);
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_EUNREACH);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(rs_net_fault_errmsg(net), "switch-down spine1"));
    CU_ASSERT_PTR_NOT_NULL(strstr(rs_net_fault_errmsg(net), " 0->15"));
    rs_net_destroy(net);
}

static void test_fault_link_failure_conserves_packets(void)
{
    rs_net *net = rs_fx_topo(RS_TOPO_FAT_TREE, 16, 1, 8);
    rs_err err;
    /* Every uplink of leaf0 but one fails mid-message, routes 3 us later. */
    CU_ASSERT_EQUAL_FATAL(start(net, "20us link-down leaf0.p4; 20us link-down leaf0.p5", 3, &err), RS_OK);
    int n = 0;
    for (uint32_t g = 0; g < 4; g++)
        CU_ASSERT_EQUAL(rs_fx_send(net, g, 15 - g, 1 << 21, done_cb, &n, 0), RS_OK);
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    CU_ASSERT_EQUAL(n, 4);
    check_conserved(net, 4u << 21);
    for (uint32_t i = 0; i < rs_net_fault_count(net); i++) {
        rs_net_fault_info fi;
        rs_net_fault_info_get(net, i, &fi);
        CU_ASSERT_EQUAL(fi.routes_recomputed_at, 23000000);
    }
    rs_net_destroy(net);
}

static void test_fault_rail_only_nic_down_goes_through_hb(void)
{
    rs_net *net = rs_fx_topo(RS_TOPO_RAIL_ONLY, 16, 8, 64);
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(start(net, "0 nic-down gpu8", 0, &err), RS_OK);
    CU_ASSERT_EQUAL(send_run(net, 0, 8, 1 << 20), 1);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.hb_bytes, 2u << 20); /* 0 -> 1 and 9 -> 8 */
    CU_ASSERT_EQUAL(st.nic_bytes, 1u << 20);
    CU_ASSERT_EQUAL(st.pkts_in_flight, 0);
    rs_net_destroy(net);
}

/* Failover: one message of 8 MiB from src to dst; `sched` fails a NIC on
 * its path mid-transfer for good. Returns the goodput when the fault was
 * applied (what the destination had accepted) through *at_fault. */
static uint64_t restart_off;

static int failover_run(rs_net *net, const char *sched, rs_time t, uint32_t src, uint32_t dst, int *done,
                        uint64_t *at_fault)
{
    rs_err err;
    if (start(net, sched, 0, &err) != RS_OK)
        return -1;
    if (rs_fx_send(net, src, dst, 8u << 20, done_cb, done, 0) != RS_OK)
        return -1;
    int rc = rs_net_run(net, t); /* the fault at t included */
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    *at_fault = st.goodput_bytes;
    restart_off = net->msgs[0].off; /* where the failover restarted it */
    return rc == RS_OK ? rs_net_run(net, RS_TIME_MAX) : rc;
}

/* A failover run's end: every packet delivered or dropped, none alive,
 * the one message completed, no retransmit timeout. Fills *st. */
static void check_done_once(rs_net *net, rs_net_stats *st)
{
    rs_net_stats_get(net, st);
    CU_ASSERT_EQUAL(st->pkts_sent, st->pkts_delivered + st->pkts_dropped);
    CU_ASSERT_EQUAL(st->pkts_in_flight, 0);
    CU_ASSERT_EQUAL(st->msgs_done, 1);
    CU_ASSERT_EQUAL(st->timeouts, 0); /* abandoned flows' timers stopped */
}

/* A single-flow message src -> dst (8 MiB, ~170 us) whose source NIC
 * fails for good at 40 us moves to a rail through the HB domains for the
 * bytes dst had not accepted, over `legs` legs, and completes once: what
 * dst had accepted stays, the rest is accepted once on each leg. */
static void check_failover_single_flow(rs_topo_kind kind, uint32_t radix, uint32_t src, uint32_t dst, unsigned legs)
{
    /* PXN off: a cross-rail message on the fat tree is one flow from the
     * source's own NIC (with PXN it would not use that NIC at all). */
    rs_net *net = mk_pxn(kind, 16, 4, radix, RS_PXN_OFF);
    int n = 0;
    uint64_t g0 = 0;
    char sched[64];
    snprintf(sched, sizeof sched, "40us nic-down gpu%u", src);
    CU_ASSERT_EQUAL_FATAL(failover_run(net, sched, 40000000, src, dst, &n, &g0), RS_OK);
    CU_ASSERT_EQUAL(n, 1); /* completed, its callback once */
    CU_ASSERT(g0 > 0 && g0 < (8u << 20));
    check_conserved(net, g0 + legs * ((8u << 20) - g0));
    rs_net_fault_info fi;
    rs_net_fault_info_get(net, 0, &fi);
    CU_ASSERT_EQUAL(fi.flows_hit, 1);
    CU_ASSERT_EQUAL(rs_net_fault_job_flows(net, 0, 1), 0); /* no jobs set: no job's */
    CU_ASSERT(fi.packets_lost > 0);
    CU_ASSERT(fi.time_to_recover_ps != RS_TIME_MAX); /* recovered when the message completed */
    rs_net_stats st;
    check_done_once(net, &st);
    rs_net_destroy(net);
}

static void test_fault_failover_rail_only_nic_down_in_flight(void)
{
    /* Rail-only, HB domains of 4: 1 -> 5 is one flow on rail 1. Without
     * gpu1's NIC it moves to rail 0: 1 -> 0 over HB, rail 0 to 4, 4 -> 5. */
    check_failover_single_flow(RS_TOPO_RAIL_ONLY, 16, 1, 5, 3);
}

static void test_fault_failover_fat_tree_nic_down_in_flight(void)
{
    /* Fat tree, PXN off: 1 -> 6 is direct, NIC to NIC. Without gpu1's NIC it moves
     * to rail 2, the destination's: 1 -> 2 over HB, NIC 2 to NIC 6. */
    check_failover_single_flow(RS_TOPO_FAT_TREE, 8, 1, 6, 2);
}

static void test_fault_failover_relayed_message_keeps_crossed_chunks(void)
{
    /* Rail-only: 0 -> 5 is relayed (PXN: 0 -> 1 over HB, rail 1 to 5) in
     * 512 KiB chunks. gpu5's NIC fails at 40 us: chunks that crossed rail
     * 1 are kept, the rest go from 0 over rail 0 to 4, then 4 -> 5. The
     * message completes once, every packet accounted for. */
    rs_net *net = rs_fx_topo(RS_TOPO_RAIL_ONLY, 16, 4, 16);
    int n = 0;
    uint64_t g0 = 0;
    CU_ASSERT_EQUAL_FATAL(failover_run(net, "40us nic-down gpu5", 40000000, 0, 5, &n, &g0), RS_OK);
    CU_ASSERT_EQUAL(n, 1);
    rs_net_stats st;
    check_done_once(net, &st);
    /* It restarted at a chunk boundary gpu5 had reached (the cut chunk's
     * part at gpu5 is thrown away, accepted once in g0); from there every
     * byte crosses rail 0 (accepted at gpu4) and gpu4 -> gpu5, once each. */
    CU_ASSERT(restart_off > 0 && restart_off < (8u << 20) && restart_off % (512u << 10) == 0);
    CU_ASSERT_EQUAL(st.goodput_bytes, g0 + 2 * ((8u << 20) - restart_off));
    rs_net_fault_info fi;
    rs_net_fault_info_get(net, 0, &fi);
    CU_ASSERT(fi.flows_hit >= 1 && fi.time_to_recover_ps != RS_TIME_MAX);
    rs_net_destroy(net);
}

static void test_fault_failover_twice(void)
{
    /* 1 -> 5 on rail 1 moves to rail 0 when gpu1's NIC fails (40 us), and
     * again to rail 2 when gpu0's fails (60 us): completes once. */
    rs_net *net = rs_fx_topo(RS_TOPO_RAIL_ONLY, 16, 4, 16);
    int n = 0;
    uint64_t g0 = 0;
    CU_ASSERT_EQUAL_FATAL(failover_run(net, "40us nic-down gpu1; 60us nic-down gpu0", 40000000, 1, 5, &n, &g0),
                          RS_OK);
    CU_ASSERT_EQUAL(n, 1);
    rs_net_stats st;
    check_done_once(net, &st);
    CU_ASSERT_EQUAL(net->msgs[0].leg_src, 2); /* rail 2 at the end */
    uint64_t lost = 0;
    for (uint32_t i = 0; i < 2; i++) {
        rs_net_fault_info fi;
        rs_net_fault_info_get(net, i, &fi);
        CU_ASSERT(fi.flows_hit >= 1 && fi.time_to_recover_ps != RS_TIME_MAX);
        lost += fi.packets_lost;
    }
    CU_ASSERT_EQUAL(lost, st.pkts_dropped);
    rs_net_destroy(net);
}

static void test_fault_no_live_rail_waits_for_the_repair(void)
{
    /* Both NICs of gpu1's domain fail at 40 us for 100 us: 1 -> 5 moves to
     * rail 0 when gpu1's fails, then has no rail left when gpu0's does, but
     * repairs are coming: it waits. gpu1's repair (140 us, applied before
     * gpu0's) gives it rail 1 back: it fails over there, with no timeout. */
    rs_net *net = rs_fx_topo(RS_TOPO_RAIL_ONLY, 8, 2, 16);
    int n = 0;
    uint64_t g0 = 0;
    CU_ASSERT_EQUAL_FATAL(failover_run(net, "40us nic-down gpu1 100us; 40us nic-down gpu0 100us", 40000000, 1, 5,
                                       &n, &g0), RS_OK);
    CU_ASSERT_EQUAL(n, 1);
    rs_net_stats st;
    check_done_once(net, &st);
    CU_ASSERT(net->msgs[0].leg_src == 1 && net->msgs[0].leg_dst == 5);
    size_t nt;
    const rs_net_msg_time *t = rs_net_msg_times(net, &nt);
    CU_ASSERT(nt == 1 && t[0].end > 140000000);
    rs_net_destroy(net);
}

static void test_fault_failover_without_live_rail_stops(void)
{
    /* Both NICs of gpu1's HB domain fail: no rail is left for 1 -> 5. */
    rs_net *net = rs_fx_topo(RS_TOPO_RAIL_ONLY, 8, 2, 16);
    int n = 0;
    uint64_t g0 = 0;
    CU_ASSERT_EQUAL(failover_run(net, "40us nic-down gpu1; 40us nic-down gpu0", 40000000, 1, 5, &n, &g0),
                    RS_EUNREACH);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(rs_net_fault_errmsg(net), "nic-down gpu0.nic"));
    CU_ASSERT_PTR_NOT_NULL(strstr(rs_net_fault_errmsg(net), " 1->5"));
    rs_net_destroy(net);
}

/* The index of the port called name, or UINT32_MAX. */
static uint32_t port_named(const rs_net *net, const char *name)
{
    for (uint32_t i = 0; i < rs_net_port_count(net); i++) {
        rs_net_port_info pi;
        rs_net_port_info_get(net, i, &pi);
        if (!strcmp(pi.name, name))
            return i;
    }
    return UINT32_MAX;
}

static void test_fault_frames_on_the_wire_are_lost(void)
{
    rs_net *net = rs_fx_topo(RS_TOPO_FAT_TREE, 16, 1, 8);
    rs_err err;
    /* Down for 1 ps while gpu0's NIC streams 4 KiB frames (82 ns each)
     * into a 500 ns + 500 ns link: no frame starts in that picosecond,
     * so every drop at gpu0.nic is a frame that was on the wire. */
    CU_ASSERT_EQUAL_FATAL(start(net, "5us nic-down gpu0 1ps", 0, &err), RS_OK);
    CU_ASSERT_EQUAL(send_run(net, 0, 15, 1 << 21), 1);
    rs_net_port_info pi;
    rs_net_port_info_get(net, port_named(net, "gpu0.nic"), &pi);
    /* (1 us + one frame time) / 82 ns: 12 or 13 frames. */
    CU_ASSERT(pi.drops >= 12 && pi.drops <= 13);
    check_conserved(net, 1u << 21);
    rs_net_fault_info down, up;
    rs_net_fault_info_get(net, 0, &down);
    rs_net_fault_info_get(net, 1, &up);
    CU_ASSERT_EQUAL(up.packets_lost, 0); /* charged to the failure, not the repair */
    /* The one flow lost packets to the failure, went back and resent them
     * (every resend is the failure's: no other drop), and was delivered
     * after the failure. */
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(down.flows_hit, 1);
    CU_ASSERT(down.packets_retransmitted >= down.packets_lost);
    CU_ASSERT_EQUAL(down.packets_retransmitted, st.pkts_retransmitted);
    CU_ASSERT(down.time_to_recover_ps > 0 && down.time_to_recover_ps != RS_TIME_MAX);
    const rs_net_msg_time *mt;
    size_t nmt;
    mt = rs_net_msg_times(net, &nmt);
    CU_ASSERT_EQUAL_FATAL(nmt, 1);
    CU_ASSERT_EQUAL(down.time_ps + down.time_to_recover_ps, mt[0].end);
    CU_ASSERT_EQUAL(up.flows_hit, 0);
    CU_ASSERT_EQUAL(up.time_to_recover_ps, RS_TIME_MAX);
    rs_net_destroy(net);
}

/* Queue a frame that came in on in_port at egress port eg, priority q. */
static void hold(rs_net *net, uint32_t eg, uint32_t in_port, unsigned q)
{
    rs_pkt *x = rs_pool_get(&net->pkts);
    memset(x, 0, sizeof *x);
    x->in_port = in_port;
    x->prio = (uint8_t)q;
    net->ports[eg].q[q].head = net->ports[eg].q[q].tail = x;
}

/* A network with a PFC deadlock made by hand (and a fault, so the checks
 * run): leaf1.p6 (toward spine1) is paused for priority 3 by spine1,
 * whose paused-for bytes wait in spine1.p3 (toward leaf1), which leaf1
 * pauses for bytes waiting in leaf1.p6. NULL if it cannot be built. */
static rs_net *pfc_cycle_net(void)
{
    rs_net *net = rs_fx_topo(RS_TOPO_FAT_TREE, 16, 1, 8);
    rs_err err;
    if (!net || start(net, "0 link-down leaf3.p4", 0, &err) != RS_OK)
        goto bad;
    uint32_t a = port_named(net, "leaf1.p6"), b = port_named(net, "spine1.p3");
    if (a == UINT32_MAX || b == UINT32_MAX)
        goto bad;
    rs_port *pa = &net->ports[a], *pb = &net->ports[b];
    unsigned q = 3;
    if (net->nodes[pa->peer_node].kind != RS_NODE_SWITCH || pb->peer_node != pa->node)
        goto bad;
    pa->paused = pb->paused = 1u << q;
    net->ports[pa->peer_port].pause_sent = net->ports[pb->peer_port].pause_sent = 1u << q;
    hold(net, b, pa->peer_port, q);
    hold(net, a, pb->peer_port, q);
    return net;
bad:
    if (net)
        rs_net_destroy(net);
    return NULL;
}

static void test_fault_pfc_cycle_is_reported_and_a_draining_queue_is_not(void)
{
    rs_net *net = pfc_cycle_net();
    CU_ASSERT_PTR_NOT_NULL_FATAL(net);
    rs_port *pa = &net->ports[port_named(net, "leaf1.p6")], *pb = &net->ports[port_named(net, "spine1.p3")];
    unsigned q = 3;
    rs_fault_note_pfc_hold(net, pa->peer_port);
    CU_ASSERT_EQUAL_FATAL(rs_net_fault_pfc_stuck_count(net), 1);
    rs_net_pfc_stuck st;
    rs_net_fault_pfc_stuck_get(net, 0, &st);
    CU_ASSERT_STRING_EQUAL(st.port, "leaf1.p6");
    CU_ASSERT_STRING_EQUAL(st.reason, "cycle");
    CU_ASSERT_EQUAL(st.priority, q);
    CU_ASSERT_EQUAL(st.fault, 0);
    rs_fault_note_pfc_hold(net, pa->peer_port); /* found again: listed once */
    CU_ASSERT_EQUAL(rs_net_fault_pfc_stuck_count(net), 1);
    /* spine1.p3 resumed: its queue drains, so leaf1.p6's pause will end. */
    pb->paused = 0;
    rs_fault_note_pfc_hold(net, pb->peer_port);
    rs_fault_note_pfc_hold(net, pa->peer_port);
    CU_ASSERT_EQUAL(rs_net_fault_pfc_stuck_count(net), 1);
    /* Paused again, and its cable is down: behind a dead link. */
    pb->paused = 1u << q;
    pb->up = 0;
    rs_fault_note_pfc_hold(net, pa->peer_port);
    CU_ASSERT_EQUAL_FATAL(rs_net_fault_pfc_stuck_count(net), 2);
    rs_net_fault_pfc_stuck_get(net, 1, &st);
    CU_ASSERT_STRING_EQUAL(st.reason, "dead-link");
    CU_ASSERT_STRING_EQUAL(st.behind, "spine1.p3");
    pb->up = 1;
    rs_net_destroy(net); /* frees the hand-made frames with the pool */
}

/* The PFC check's first look allocates its per-port search state: when
 * an allocation fails (the 1st, 2nd or 3rd from the check on), the run
 * is stopped and a later check still works (it used to keep half of the
 * state and dereference NULL). */
static void test_fault_pfc_check_survives_allocation_failure(void)
{
    for (int k = 1; k <= 3; k++) {
        rs_net *net = pfc_cycle_net();
        CU_ASSERT_PTR_NOT_NULL_FATAL(net);
        uint32_t pauser = net->ports[port_named(net, "leaf1.p6")].peer_port;
        calloc_fail_in = k;
        rs_fault_note_pfc_hold(net, pauser);
        int failed = calloc_fail_in == 0;
        calloc_fail_in = 0;
        CU_ASSERT(failed || k == 3); /* k = 1, 2: it allocated that many */
        CU_ASSERT_EQUAL(rs_net_fault_pfc_stuck_count(net), k == 3 ? 1 : 0);
        rs_fault_note_pfc_hold(net, pauser);
        CU_ASSERT_EQUAL(rs_net_fault_pfc_stuck_count(net), 1);
        rs_net_destroy(net);
    }
}

static void test_fault_flap_expands_to_its_transitions(void)
{
    rs_net *net = rs_fx_topo(RS_TOPO_FAT_TREE, 16, 1, 8);
    rs_err err;
    /* Down 3 us of every 10 us from 1 us for 25 us: down at 1, 11, 21 us,
     * up 3 us after each. */
    CU_ASSERT_EQUAL_FATAL(start(net, "2us nic-down gpu3 1us; 1us link-flap=10us,0.3 leaf0.p4 25us", 0, &err), RS_OK);
    static const struct { rs_time t; const char *kind, *origin; uint32_t entry; } want[] = {
        { 1000000, "link-down", "flap", 2 },  { 2000000, "nic-down", "schedule", 1 },
        { 3000000, "nic-up", "repair", 1 },   { 4000000, "link-up", "flap", 2 },
        { 11000000, "link-down", "flap", 2 }, { 14000000, "link-up", "flap", 2 },
        { 21000000, "link-down", "flap", 2 }, { 24000000, "link-up", "flap", 2 },
    };
    CU_ASSERT_EQUAL_FATAL(rs_net_fault_count(net), sizeof want / sizeof want[0]);
    for (uint32_t i = 0; i < rs_net_fault_count(net); i++) {
        rs_net_fault_info fi;
        rs_net_fault_info_get(net, i, &fi);
        CU_ASSERT_EQUAL(fi.time_ps, want[i].t);
        CU_ASSERT_STRING_EQUAL(fi.kind, want[i].kind);
        CU_ASSERT_STRING_EQUAL(fi.origin, want[i].origin);
        CU_ASSERT_EQUAL(fi.entry, want[i].entry);
    }
    rs_net_destroy(net);
    rs_err e2;
    CU_ASSERT_EQUAL(rs_fault_check("1us link-flap=10us,0 leaf0.p4 1ms", "k", &e2), RS_EINVAL);
    CU_ASSERT_EQUAL(rs_fault_check("1us link-flap=1ps,0.5 leaf0.p4 1ms", "k", &e2), RS_EINVAL); /* 0.5 ps down */
    CU_ASSERT_EQUAL(rs_fault_check("1us link-flap=2ps,0.5 leaf0.p4 1ns", "k", &e2), RS_OK);
}

/* Random failures of class cls on a 32-GPU fat tree (MTBF 500 us, MTTR
 * mttr_us, horizon 1 ms): the entries. */
static uint32_t draw(const char *cls, uint64_t seed, double mttr_us, rs_net_fault_info *out, uint32_t max)
{
    rs_net_config c;
    rs_fx_config(&c, 32, 1, 8);
    c.seed = seed;
    rs_net *net = rs_fx_net(&c);
    rs_err err;
    rs_fault_config fc;
    rs_fault_config_default(&fc);
    fc.mtbf_us = 500;
    fc.mttr_us = mttr_us;
    fc.horizon_us = 1000;
    snprintf(fc.random_class, sizeof fc.random_class, "%s", cls);
    uint32_t n = 0;
    if (rs_net_faults_start(net, &fc, &err) == RS_OK)
        for (; n < rs_net_fault_count(net) && n < max; n++)
            rs_net_fault_info_get(net, n, &out[n]);
    rs_net_destroy(net);
    return n;
}

static void test_fault_random_failures_are_seeded_and_per_member(void)
{
    enum { MAX = 1024 };
    static rs_net_fault_info a[MAX], b[MAX], c[MAX], sp[MAX];
    uint32_t na = draw("any-network-link", 9, 20, a, MAX), nb = draw("any-network-link", 9, 20, b, MAX);
    uint32_t nc = draw("any-network-link", 10, 20, c, MAX), ns = draw("any-spine-link", 9, 20, sp, MAX);
    /* 64 cables over 1 ms at a 520 us cycle: ~2 failures each, 2 entries per failure. */
    CU_ASSERT(na > 64 && na < MAX);
    CU_ASSERT_EQUAL(na, nb);
    CU_ASSERT_EQUAL(memcmp(a, b, na * sizeof a[0]), 0);
    CU_ASSERT(nc != na || memcmp(a, c, na * sizeof a[0]) != 0);
    uint32_t downs = 0;
    for (uint32_t i = 0; i < na; i++) {
        CU_ASSERT_STRING_EQUAL(a[i].origin, "random");
        CU_ASSERT_EQUAL(a[i].entry, 0);
        CU_ASSERT(i == 0 || a[i - 1].time_ps <= a[i].time_ps);
        if (strcmp(a[i].kind, "link-down"))
            continue;
        downs++;
        CU_ASSERT(a[i].time_ps < 1000000000ull);
        /* The next entry of this cable is its repair. */
        uint32_t j = i + 1;
        while (j < na && strcmp(a[j].target, a[i].target))
            j++;
        CU_ASSERT(j < na && !strcmp(a[j].kind, "link-up"));
    }
    CU_ASSERT_EQUAL(2 * downs, na);
    /* A spine link's failures are the same whichever class drew them: one
     * stream per member. */
    CU_ASSERT(ns > 0);
    for (uint32_t i = 0; i < ns; i++) {
        uint32_t j = 0;
        while (j < na && (a[j].time_ps != sp[i].time_ps || strcmp(a[j].target, sp[i].target) ||
                          strcmp(a[j].kind, sp[i].kind)))
            j++;
        CU_ASSERT(j < na);
    }
}

/* Overlapping faults on one cable (docs/faults-format.md): leaf0 is down
 * for 1 ms; the NICs of gpu0 and gpu1 (on leaf0) fail and are repaired
 * inside that window. Their repairs do not bring the cables back while
 * the switch still holds them; the switch's repair does. */
static const char *const overlap_sched = "0 switch-down leaf0 1ms; 1us nic-down gpu0 1us; 1us nic-down gpu1 1us";

/* Run `sched` on a 16-GPU fat tree to time `at`: gpu0 and gpu1 (on
 * leaf0) must be cut apart then, gpu0's dead NIC charged to the
 * switch-down, and joined again at the end. */
static void check_held_by_switch(const char *sched, rs_time at)
{
    rs_net *net = rs_fx_topo(RS_TOPO_FAT_TREE, 16, 1, 8);
    rs_err err;
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 1), 2);
    CU_ASSERT_EQUAL_FATAL(start(net, sched, 0, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_net_run(net, at), RS_OK);
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 1), -1);
    const rs_port *nic = &net->ports[net->nodes[0].port_base];
    CU_ASSERT_EQUAL(nic->up, 0);
    rs_net_fault_info fi;
    CU_ASSERT_EQUAL(rs_net_fault_info_get(net, nic->down_fault, &fi), RS_OK);
    CU_ASSERT_STRING_EQUAL(fi.kind, "switch-down");
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 1), 2);
    rs_net_destroy(net);
}

static void test_fault_overlapping_downs_hold_the_cable_until_the_last_repair(void)
{
    /* The NIC repairs at 2 us leave leaf0 down. */
    check_held_by_switch(overlap_sched, 3000000);
    /* The other way round, the NIC's fault took the cable down first: once
     * it is repaired the cable stays down until the switch is back, and its
     * drops go to the switch-down. */
    check_held_by_switch("0 nic-down gpu0 10us; 1us switch-down leaf0 20us", 15000000);
}

/* An up written in the schedule cancels one down of its own kind on its
 * target: a link-up does not revive a cable its switch holds down, and
 * two link-downs need two ups. */
static void test_fault_written_up_cancels_one_down_of_its_kind(void)
{
    rs_net *net = rs_fx_topo(RS_TOPO_FAT_TREE, 16, 1, 8);
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(start(net, "0 switch-down leaf0; 1us link-up gpu0.nic; 1us nic-up gpu1; 2us switch-up leaf0",
                                0, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_net_run(net, 1500000), RS_OK);
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 1), -1);
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 1), 2);
    rs_net_destroy(net);

    net = rs_fx_topo(RS_TOPO_FAT_TREE, 16, 1, 8);
    char peer[48];
    rs_topo_port_name(net, net->ports[net->nodes[0].port_base].peer_port, peer, sizeof peer);
    CU_ASSERT_STRING_EQUAL(peer, "leaf0.p0"); /* the other end of gpu0's NIC cable */
    CU_ASSERT_EQUAL_FATAL(start(net, "0 link-down gpu0.nic; 1us link-down leaf0.p0; 2us link-up gpu0.nic; "
                                "3us nic-up gpu0; 4us nic-up gpu0", 0, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_net_run(net, 2500000), RS_OK);
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 1), -1); /* one of two cancelled */
    CU_ASSERT_EQUAL(rs_net_run(net, 3500000), RS_OK);
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 1), 2);  /* a nic-up cancels a link-down of the NIC cable */
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK); /* an up with nothing to cancel changes nothing */
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 1), 2);
    rs_net_destroy(net);
}

static void done_at_cb(void *ctx, rs_net *net, uint64_t tag)
{
    (void)tag;
    *(rs_time *)ctx = rs_net_now(net);
}

/* The repro at both fidelities with a message gpu0 -> gpu1 (both on
 * leaf0) sent at time 0: it cannot move until leaf0 is back at 1 ms, and
 * then it completes (the flow level was told of the repair). */
static void test_fault_overlapping_downs_hold_traffic_at_both_fidelities(void)
{
    for (int fid = 0; fid < 2; fid++) {
        rs_net_config c;
        rs_fx_config_at(&c, 16, 1, 8, fid ? RS_FIDELITY_FLOW : RS_FIDELITY_PACKET);
        rs_net *net = rs_fx_net(&c);
        rs_err err;
        CU_ASSERT_EQUAL_FATAL(start(net, overlap_sched, 0, &err), RS_OK);
        rs_time done = RS_TIME_MAX;
        CU_ASSERT_EQUAL(rs_fx_send(net, 0, 1, 1 << 20, done_at_cb, &done, 0), RS_OK);
        CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
        CU_ASSERT(done > 1000000000ull && done < RS_TIME_MAX);
        rs_net_stats st;
        rs_net_stats_get(net, &st);
        CU_ASSERT_EQUAL(st.goodput_bytes, 1u << 20);
        rs_net_destroy(net);
    }
}

/* Overlapping degrades of one cable: it runs at the lowest rate of those
 * active, its nominal rate when none is. */
static void test_fault_overlapping_degrades_keep_the_lowest_active_rate(void)
{
    static const struct { const char *sched; uint64_t at2, at4, at11; } cases[] = {
        { "0 link-degrade=100 gpu0.nic 10us; 1us link-degrade=200 gpu0.nic 2us", 100, 100, 400 },
        { "0 link-degrade=200 gpu0.nic 10us; 1us link-degrade=100 gpu0.nic 2us", 100, 200, 400 },
        { "0 link-degrade=200 gpu0.nic 3us; 1us link-degrade=100 gpu0.nic 9us", 100, 100, 400 },
    };
    for (unsigned k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        rs_net *net = rs_fx_topo(RS_TOPO_FAT_TREE, 16, 1, 8);
        rs_err err;
        const rs_port *p = &net->ports[net->nodes[0].port_base], *q = &net->ports[p->peer_port];
        CU_ASSERT_EQUAL_FATAL(p->rate_bps, 400000000000ull);
        CU_ASSERT_EQUAL_FATAL(start(net, cases[k].sched, 0, &err), RS_OK);
        CU_ASSERT_EQUAL(rs_net_run(net, 2000000), RS_OK);
        CU_ASSERT_EQUAL(p->rate_bps, cases[k].at2 * 1000000000ull);
        CU_ASSERT_EQUAL(rs_net_run(net, 4000000), RS_OK);
        CU_ASSERT_EQUAL(p->rate_bps, cases[k].at4 * 1000000000ull);
        CU_ASSERT_EQUAL(q->rate_bps, cases[k].at4 * 1000000000ull);
        CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
        CU_ASSERT_EQUAL(p->rate_bps, cases[k].at11 * 1000000000ull);
        CU_ASSERT_EQUAL(q->rate_bps, cases[k].at11 * 1000000000ull);
        rs_net_destroy(net);
    }
}

/* A degrade changes what a lone transfer costs now, not what it cost as
 * the run started (NCCL's view: rs_net_hop_as_built), but for one due at
 * the start; every change of a cable's rate is counted. */
static void test_fault_degrade_leaves_the_as_built_estimate(void)
{
    static const struct { const char *sched; uint64_t built_gbps; } cases[] = {
        { "1us link-degrade=100 gpu0.nic 2us", 400 },
        { "0 link-degrade=200 gpu0.nic 2us; 1us link-degrade=100 gpu0.nic 2us", 200 },
    };
    const uint64_t bytes = 1u << 20;
    for (unsigned k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        rs_net *net = rs_fx_topo(RS_TOPO_FAT_TREE, 16, 1, 8);
        rs_err err;
        rs_time s0, l0, s, l, sb, lb;
        CU_ASSERT_EQUAL_FATAL(rs_net_hop_estimate(net, 0, 5, bytes, &s0, &l0), RS_OK);
        CU_ASSERT_EQUAL_FATAL(start(net, cases[k].sched, 0, &err), RS_OK);
        uint64_t at0 = rs_net_rate_changes(net);
        CU_ASSERT_EQUAL(at0, k); /* the second case's first degrade applies at once */
        CU_ASSERT_EQUAL(rs_net_run(net, 1500000), RS_OK);
        CU_ASSERT_EQUAL(rs_net_rate_changes(net), at0 + 1);
        CU_ASSERT_EQUAL_FATAL(rs_net_hop_estimate(net, 0, 5, bytes, &s, &l), RS_OK);
        CU_ASSERT_EQUAL_FATAL(rs_net_hop_as_built(net, 0, 5, bytes, &sb, &lb), RS_OK);
        CU_ASSERT(s >= 4 * s0 - 4 && s <= 4 * s0 + 4); /* 100 Gb/s on gpu0's NIC */
        CU_ASSERT(sb >= s0 * 400 / cases[k].built_gbps - 4 && sb <= s0 * 400 / cases[k].built_gbps + 4);
        CU_ASSERT_EQUAL(l, l0); /* the NIC is the first hop: no store and forward at its rate */
        CU_ASSERT_EQUAL(lb, l0);
        CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
        CU_ASSERT_EQUAL_FATAL(rs_net_hop_estimate(net, 0, 5, bytes, &s, &l), RS_OK);
        CU_ASSERT_EQUAL(s, s0); /* restored */
        CU_ASSERT_EQUAL(l, l0);
        rs_net_destroy(net);
    }
}

/* n straggler windows of `factor` on gpu1 from 0 for `dur`, all
 * overlapping: a network with that schedule. */
static rs_net *stragglers(unsigned n, const char *factor, const char *dur)
{
    rs_net *net = rs_fx_topo(RS_TOPO_FAT_TREE, 16, 1, 8);
    char sched[1024] = "";
    for (unsigned k = 0; k < n; k++)
        snprintf(sched + strlen(sched), sizeof sched - strlen(sched), "%s0 straggler=%s gpu1 %s", k ? "; " : "",
                 factor, dur);
    rs_err err;
    CU_ASSERT_EQUAL(start(net, sched, 0, &err), RS_OK);
    return net;
}

/* Overlapping stragglers whose product of factors passes 64 (and 128)
 * bits: the exact time where it fits, and work that cannot be done in
 * the windows is done after them. */
static void test_fault_overlapping_stragglers_saturate(void)
{
    rs_time us = 1000000, s = 1000000000000ull;
    /* x1000^5 = 1e15 (1e21 ppm, past 64 bits): 1 ps of work takes 1e15 ps,
     * inside a 10,000 s window. */
    rs_net *net = stragglers(5, "1000", "10000s");
    CU_ASSERT_EQUAL(rs_compute_end(net, 1, 0, 1), 1000000000000000ull);
    CU_ASSERT_EQUAL(rs_compute_end(net, 1, 0, 3), 3000000000000000ull);
    CU_ASSERT_EQUAL(rs_compute_end(net, 0, 0, 3), 3); /* other GPU */
    rs_net_destroy(net);
    /* x512^7 = 2^63 for 1 s: under 1 ps of work done in it, 1 us after. */
    net = stragglers(7, "512", "1s");
    CU_ASSERT_EQUAL(rs_compute_end(net, 1, 0, us), s + us);
    CU_ASSERT_EQUAL(rs_compute_end(net, 1, s / 2, us), s + us);
    rs_net_destroy(net);
    /* x1000^14 = 1e42, past 128 bits: the same. */
    net = stragglers(14, "1000", "1s");
    CU_ASSERT_EQUAL(rs_compute_end(net, 1, 0, us), s + us);
    rs_net_destroy(net);
    /* One that fits, as before: x2 on 10 us of work. */
    net = stragglers(1, "2", "1s");
    CU_ASSERT_EQUAL(rs_compute_end(net, 1, 0, 10 * us), 20 * us);
    rs_net_destroy(net);
}

/* Work that ends past RS_TIME_MAX ends at RS_TIME_MAX (saturated), with
 * the work after the last window or inside one that passes the limit. */
static void test_fault_compute_end_saturates_at_time_max(void)
{
    rs_net *net = stragglers(1, "2", "1s");
    rs_time s = 1000000000000ull;
    CU_ASSERT_EQUAL(rs_compute_end(net, 1, 0, RS_TIME_MAX), RS_TIME_MAX);
    CU_ASSERT_EQUAL(rs_compute_end(net, 1, 2 * s, RS_TIME_MAX - s), RS_TIME_MAX);
    CU_ASSERT_EQUAL(rs_compute_end(net, 1, RS_TIME_MAX - 10, 100), RS_TIME_MAX);
    CU_ASSERT_EQUAL(rs_compute_end(net, 1, RS_TIME_MAX, 1), RS_TIME_MAX);
    CU_ASSERT_EQUAL(rs_compute_end(net, 1, RS_TIME_MAX, 0), RS_TIME_MAX);
    /* Just fits: 1 s of window at x2 does 0.5 s of work, the rest after. */
    CU_ASSERT_EQUAL(rs_compute_end(net, 1, 0, RS_TIME_MAX - s / 2), RS_TIME_MAX);
    CU_ASSERT_EQUAL(rs_compute_end(net, 1, 0, RS_TIME_MAX - s / 2 - 1), RS_TIME_MAX - 1);
    rs_net_destroy(net);
    /* A window of 4e18 ps (near the schedule's RS_TIME_MAX / 2 limit) at
     * x1000: 4e15 ps of work in it, the rest after it passes the limit. */
    net = stragglers(1, "1000", "4000000s");
    CU_ASSERT_EQUAL(rs_compute_end(net, 1, 0, RS_TIME_MAX - 1000000000000000000ull), RS_TIME_MAX);
    CU_ASSERT_EQUAL(rs_compute_end(net, 1, 3000000000000000000ull, RS_TIME_MAX), RS_TIME_MAX);
    CU_ASSERT_EQUAL(rs_compute_end(net, 1, 0, 8000000000000000ull), 4000000000000000000ull + 4000000000000000ull);
    rs_net_destroy(net);
}

/* Repairs drawn with a huge MTTR (faults.mttr_us allows 1e12 us, a
 * 1e18 ps mean; the library takes more) stay at most 2^62 ps and after
 * their failure: a draw above ~9.2e18 ps used to overflow llround. */
static void test_fault_random_repair_times_are_capped(void)
{
    enum { MAX = 1024 };
    static rs_net_fault_info a[MAX];
    static const double mttr[] = { 1e12, 1e13, 1e16 };
    const rs_time cap = 1ull << 62;
    for (unsigned k = 0; k < sizeof mttr / sizeof mttr[0]; k++) {
        uint32_t n = draw("any-network-link", 9, mttr[k], a, MAX), capped = 0, ups = 0;
        CU_ASSERT(n >= 2 && n < MAX);
        for (uint32_t i = 0; i < n; i++) {
            CU_ASSERT(a[i].time_ps <= cap);
            capped += a[i].time_ps == cap;
            if (strcmp(a[i].kind, "link-up"))
                continue;
            ups++;
            uint32_t j = i;
            while (j > 0 && strcmp(a[j - 1].target, a[i].target))
                j--;
            CU_ASSERT(j > 0 && !strcmp(a[j - 1].kind, "link-down") && a[j - 1].time_ps < a[i].time_ps);
        }
        CU_ASSERT_EQUAL(2 * ups, n);
        /* Means of 1e19 ps and more: most repairs are capped. */
        CU_ASSERT(mttr[k] < 1e13 || 2 * capped > ups);
    }
}

static const rs_cu_test fault_tests[] = {
    RS_CU_TEST(test_fault_check_accepts_units_and_durations),
    RS_CU_TEST(test_fault_check_rejects_naming_label),
    RS_CU_TEST(test_fault_resolves_names_and_repairs_in_time_order),
    RS_CU_TEST(test_fault_unknown_target_names_key),
    RS_CU_TEST(test_fault_absent_class_is_skipped_only_when_allowed),
    RS_CU_TEST(test_fault_link_down_removes_path_and_up_restores),
    RS_CU_TEST(test_fault_partition_stops_naming_gpus),
    RS_CU_TEST(test_fault_link_failure_conserves_packets),
    RS_CU_TEST(test_fault_rail_only_nic_down_goes_through_hb),
    RS_CU_TEST(test_fault_failover_rail_only_nic_down_in_flight),
    RS_CU_TEST(test_fault_failover_fat_tree_nic_down_in_flight),
    RS_CU_TEST(test_fault_failover_relayed_message_keeps_crossed_chunks),
    RS_CU_TEST(test_fault_failover_twice),
    RS_CU_TEST(test_fault_no_live_rail_waits_for_the_repair),
    RS_CU_TEST(test_fault_failover_without_live_rail_stops),
    RS_CU_TEST(test_fault_frames_on_the_wire_are_lost),
    RS_CU_TEST(test_fault_pfc_cycle_is_reported_and_a_draining_queue_is_not),
    RS_CU_TEST(test_fault_flap_expands_to_its_transitions),
    RS_CU_TEST(test_fault_random_failures_are_seeded_and_per_member),
    RS_CU_TEST(test_fault_overlapping_downs_hold_the_cable_until_the_last_repair),
    RS_CU_TEST(test_fault_written_up_cancels_one_down_of_its_kind),
    RS_CU_TEST(test_fault_overlapping_downs_hold_traffic_at_both_fidelities),
    RS_CU_TEST(test_fault_overlapping_degrades_keep_the_lowest_active_rate),
    RS_CU_TEST(test_fault_degrade_leaves_the_as_built_estimate),
    RS_CU_TEST(test_fault_overlapping_stragglers_saturate),
    RS_CU_TEST(test_fault_compute_end_saturates_at_time_max),
    RS_CU_TEST(test_fault_pfc_check_survives_allocation_failure),
    RS_CU_TEST(test_fault_random_repair_times_are_capped),
};

static void register_suites(void) { RS_CU_SUITE("fault", fault_tests); }

int main(void) { return rs_cu_run(register_suites); }
