/*
 * test_fluid_fault.c - faults at flow level (models/fluid.c under
 * models/fault.c): reroutes after a link or NIC fails, rates solved again
 * after the routes change, partitions, degraded links, flows lost or
 * waiting for their timeout, and failover that agrees with the packet
 * level.
 */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "cu_main.h"
#include "fault.h"
#include "fixture_net.h"
#include "fluid.h"
#include "net.h"
#include "netint.h" /* flows and ports */

#define G 1000000000ull

/* -- faults at flow level ------------------------------------------------- */

static int faults(rs_net *net, const char *sched, double conv)
{
    rs_fault_config fc;
    rs_fault_config_default(&fc);
    snprintf(fc.schedule, sizeof fc.schedule, "%s", sched);
    fc.convergence_us = conv;
    rs_err err;
    int rc = rs_net_faults_start(net, &fc, &err);
    if (rc != RS_OK)
        fprintf(stderr, "rs_net_faults_start: %s\n", err.msg);
    return rc;
}

static void count_done(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    (void)tag;
    (*(int *)ctx)++;
}

/* The leaf uplink (second hop) transport flow 0 takes: "leaf0.p6". */
static void uplink_of_flow0(rs_net *net, char *name, size_t n, uint32_t *port)
{
    uint32_t ports[RS_MMF_MAX_HOPS];
    CU_ASSERT_EQUAL_FATAL(rs_fluid_flow_path(net, 0, ports, RS_MMF_MAX_HOPS), 4);
    *port = ports[1];
    rs_topo_port_name(net, ports[1], name, n);
}

/* 8 MiB from gpu0 to gpu8 (leaf0 -> leaf2 over a spine) on a 32-GPU fat
 * tree at 400 Gb/s everywhere (20 ps per byte). The spine link it uses
 * fails at 50 us; routes change 5 us later. The flow stops at the cut,
 * resumes one round trip (2 x its path latency) after the routes on
 * another spine, at full rate: it ends exactly 5 us + 2 x lat late. */
static void test_fluid_fault_spine_link_down_reroutes_over_remaining_spines(void)
{
    const uint64_t bytes = 8u << 20;
    rs_net_config c;
    rs_fx_config_at(&c, 32, 1, 8, RS_FIDELITY_FLOW);
    rs_net *net = rs_fx_net(&c);
    int n = 0;
    CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, 0, 8, bytes, count_done, &n, 0), RS_OK);
    rs_time lat, free_fct;
    uint64_t wire;
    CU_ASSERT_EQUAL_FATAL(rs_fluid_flow_cost(net, 0, &lat, &wire), RS_OK);
    free_fct = lat + wire * 20;
    char up[48], sched[96];
    uint32_t dead;
    uplink_of_flow0(net, up, sizeof up, &dead);
    rs_net_destroy(net);

    net = rs_fx_net(&c);
    snprintf(sched, sizeof sched, "50us link-down %s", up);
    CU_ASSERT_EQUAL_FATAL(faults(net, sched, 5), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, 0, 8, bytes, count_done, &n, 0), RS_OK);
    /* Stalled between the cut and the resume. */
    CU_ASSERT_EQUAL(rs_net_run(net, 52000000), RS_OK);
    CU_ASSERT_EQUAL(rs_fluid_parked(net), 1);
    CU_ASSERT_EQUAL(rs_net_run(net, 55000000 + 2 * lat + 1), RS_OK);
    CU_ASSERT_EQUAL(rs_fluid_parked(net), 0);
    uint64_t bps = 0;
    CU_ASSERT_EQUAL(rs_fluid_flow_rate(net, 0, &bps), RS_OK);
    CU_ASSERT_EQUAL(bps, 400 * G);
    uint32_t ports[RS_MMF_MAX_HOPS];
    CU_ASSERT_EQUAL(rs_fluid_flow_path(net, 0, ports, RS_MMF_MAX_HOPS), 4);
    CU_ASSERT_NOT_EQUAL(ports[1], dead);
    CU_ASSERT_EQUAL(rs_fluid_check(net), 0);
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(rs_fx_only_fct(net), free_fct + 5000000 + 2 * lat);
    rs_net_fault_info fi;
    CU_ASSERT_EQUAL(rs_net_fault_info_get(net, 0, &fi), RS_OK);
    CU_ASSERT_EQUAL(fi.flows_hit, 1);
    CU_ASSERT_EQUAL(fi.packets_lost, 0);
    CU_ASSERT_EQUAL(fi.packets_retransmitted, 0);
    CU_ASSERT_EQUAL(fi.routes_recomputed_at, 55000000);
    CU_ASSERT_EQUAL(fi.time_to_recover_ps, free_fct + 5000000 + 2 * lat - 50000000);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.goodput_bytes, bytes);
    rs_net_destroy(net);
}

/* Four flows leave leaf0 for leaf2; two of leaf0's four uplinks fail at
 * once: after the routes change every flow runs over the two left, and the
 * incremental rates equal a full solve; all complete. */
static void test_fluid_fault_rates_resolved_after_reroute(void)
{
    rs_net_config c;
    rs_fx_config_at(&c, 32, 1, 8, RS_FIDELITY_FLOW);
    rs_net *net = rs_fx_net(&c);
    CU_ASSERT_EQUAL_FATAL(faults(net, "20us link-down leaf0.p4; 20us link-down leaf0.p5", 0), RS_OK);
    int n = 0;
    for (uint32_t g = 0; g < 4; g++)
        CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, g, 8 + g, 4u << 20, count_done, &n, 0), RS_OK);
    CU_ASSERT_EQUAL(rs_net_run(net, 40000000), RS_OK);
    CU_ASSERT_EQUAL(rs_fluid_check(net), 0);
    uint64_t sum = 0;
    for (uint32_t f = 0; f < 4; f++) {
        uint32_t ports[RS_MMF_MAX_HOPS];
        uint64_t bps;
        CU_ASSERT_EQUAL_FATAL(rs_fluid_flow_rate(net, f, &bps), RS_OK);
        CU_ASSERT_EQUAL_FATAL(rs_fluid_flow_path(net, f, ports, RS_MMF_MAX_HOPS), 4);
        char name[48];
        rs_topo_port_name(net, ports[1], name, sizeof name);
        CU_ASSERT(strcmp(name, "leaf0.p4") && strcmp(name, "leaf0.p5"));
        sum += bps;
    }
    /* Two uplinks left: at most 800 Gb/s out of leaf0, at least one full. */
    CU_ASSERT(sum <= 800 * G && sum >= 400 * G);
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    CU_ASSERT_EQUAL(n, 4);
    rs_net_destroy(net);
}

/* Rail-only, GPU 8's NIC down from the start: 1 MiB from GPU 0 to GPU 8
 * crosses both HB domains and rail 1 (GPU 1 -> GPU 9), as at packet level. */
static void test_fluid_fault_rail_only_nic_down_goes_through_hb(void)
{
    rs_net_config c;
    rs_fx_config_at(&c, 16, 8, 64, RS_FIDELITY_FLOW);
    c.kind = RS_TOPO_RAIL_ONLY;
    rs_net *net = rs_fx_net(&c);
    CU_ASSERT_EQUAL_FATAL(faults(net, "0 nic-down gpu8", 0), RS_OK);
    int n = 0;
    CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, 0, 8, 1u << 20, count_done, &n, 0), RS_OK);
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    CU_ASSERT_EQUAL(n, 1);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.hb_bytes, 2u << 20);
    CU_ASSERT_EQUAL(st.nic_bytes, 1u << 20);
    CU_ASSERT_EQUAL(rs_fluid_parked(net), 0);
    rs_net_destroy(net);
}

/* Both spines of a 16-GPU fat tree fail mid-message with no repair: the
 * run stops naming the cut-off GPUs; with a repair scheduled 1 s later the
 * watchdog stops it after faults.watchdog_us without progress. */
static void test_fluid_fault_partition_stops_naming_gpus(void)
{
    rs_net_config c;
    rs_fx_config_at(&c, 16, 1, 8, RS_FIDELITY_FLOW);
    rs_net *net = rs_fx_net(&c);
    CU_ASSERT_EQUAL_FATAL(faults(net, "2us switch-down spine0; 2us switch-down spine1", 0), RS_OK);
    int n = 0;
    CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, 0, 15, 1u << 22, count_done, &n, 0), RS_OK);
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_EUNREACH);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(rs_net_fault_errmsg(net), "switch-down spine1"));
    CU_ASSERT_PTR_NOT_NULL(strstr(rs_net_fault_errmsg(net), " 0->15"));
    rs_net_destroy(net);

    net = rs_fx_net(&c);
    CU_ASSERT_EQUAL_FATAL(faults(net, "2us switch-down spine0 1s; 2us switch-down spine1 1s", 0), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, 0, 15, 1u << 22, count_done, &n, 0), RS_OK);
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_EUNREACH);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(rs_net_fault_errmsg(net), "watchdog: no progress for 20000.000 us"));
    CU_ASSERT_PTR_NOT_NULL(strstr(rs_net_fault_errmsg(net), " 0->15"));
    rs_net_destroy(net);
}

/* A lone 2 MiB flow over its NIC (400 Gb/s, 20 ps per byte), the NIC's
 * cable at half rate from 10 us to 20 us: 250,000 bytes go in that window
 * instead of 500,000, so it ends exactly 5 us late. */
static void test_fluid_fault_degrade_halves_rate_for_the_window(void)
{
    rs_time t[2];
    for (int k = 0; k < 2; k++) {
        rs_net_config c;
        rs_fx_config_at(&c, 2, 1, 8, RS_FIDELITY_FLOW);
        rs_net *net = rs_fx_net(&c);
        if (k)
            CU_ASSERT_EQUAL_FATAL(faults(net, "10us link-degrade gpu0.nic 10us", 0), RS_OK);
        CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, 0, 1, 2u << 20, NULL, NULL, 0), RS_OK);
        if (k) {
            uint64_t bps;
            CU_ASSERT_EQUAL(rs_net_run(net, 15000000), RS_OK);
            CU_ASSERT_EQUAL(rs_fluid_flow_rate(net, 0, &bps), RS_OK);
            CU_ASSERT_EQUAL(bps, 200 * G);
            CU_ASSERT_EQUAL(rs_net_run(net, 25000000), RS_OK);
            CU_ASSERT_EQUAL(rs_fluid_flow_rate(net, 0, &bps), RS_OK);
            CU_ASSERT_EQUAL(bps, 400 * G);
        }
        CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
        t[k] = rs_fx_only_fct(net);
        rs_net_destroy(net);
    }
    CU_ASSERT_EQUAL(t[1], t[0] + 5000000);
}

/* The spine link fails while the flow's last frames are in flight (half
 * its latency before it completes): nothing follows them to draw a NAK,
 * so it resends what was in flight (lat / 2 at 400 Gb/s) after a
 * retransmit timeout and completes its latency later, exactly. The packet
 * level also waits for the timeout there. */
static void test_fluid_fault_tail_in_flight_waits_for_the_timeout(void)
{
    rs_time fct[2], rto = 0;
    for (int fid = 0; fid < 2; fid++) {
        rs_net_config c;
        rs_fx_config_at(&c, 32, 1, 8, fid ? RS_FIDELITY_FLOW : RS_FIDELITY_PACKET);
        char up[48], sched[96];
        uint32_t dead;
        rs_time lat;
        uint64_t wire;
        rs_net *net = rs_fx_net(&c);
        CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, 0, 8, 8u << 20, NULL, NULL, 0), RS_OK);
        uplink_of_flow0(net, up, sizeof up, &dead);
        CU_ASSERT_EQUAL_FATAL(rs_fluid_flow_cost(net, 0, &lat, &wire), RS_OK);
        CU_ASSERT_EQUAL_FATAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
        rs_time done = rs_fx_only_fct(net);
        rto = net->rto;
        rs_net_destroy(net);
        /* The flow level's tail: the last lat before it completes; the
         * packet level's last frames leave ~lat before its own end. */
        rs_time cut = done - lat / 2;
        net = rs_fx_net(&c);
        snprintf(sched, sizeof sched, "%llups link-down %s", (unsigned long long)cut, up);
        CU_ASSERT_EQUAL_FATAL(faults(net, sched, 0), RS_OK);
        int n = 0;
        CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, 0, 8, 8u << 20, count_done, &n, 0), RS_OK);
        CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
        CU_ASSERT_EQUAL(n, 1);
        fct[fid] = rs_fx_only_fct(net);
        if (fid) {
            CU_ASSERT_EQUAL(fct[1], cut + rto + lat / 2 + lat);
            rs_net_stats st;
            rs_net_stats_get(net, &st);
            CU_ASSERT_EQUAL(st.goodput_bytes, 8u << 20); /* counted once */
        }
        rs_net_destroy(net);
    }
    CU_ASSERT(fct[0] > rto && fct[1] > rto);
}

/* transport.kind=ideal has no retransmission: a flow cut mid-transfer
 * never completes, at flow level as at packet level; the run goes idle
 * with the message undelivered and the fault's recovery unknown. */
static void test_fluid_fault_unreliable_flow_is_lost(void)
{
    for (int fid = 0; fid < 2; fid++) {
        rs_net_config c;
        rs_fx_config_at(&c, 32, 1, 8, fid ? RS_FIDELITY_FLOW : RS_FIDELITY_PACKET);
        c.transport = RS_TRANSPORT_IDEAL;
        char up[48], sched[96];
        uint32_t dead;
        rs_net *net = rs_fx_net(&c);
        CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, 0, 8, 8u << 20, NULL, NULL, 0), RS_OK);
        uplink_of_flow0(net, up, sizeof up, &dead);
        rs_net_destroy(net);
        net = rs_fx_net(&c);
        snprintf(sched, sizeof sched, "50us link-down %s", up);
        CU_ASSERT_EQUAL_FATAL(faults(net, sched, 0), RS_OK);
        int n = 0;
        CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, 0, 8, 8u << 20, count_done, &n, 0), RS_OK);
        CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
        CU_ASSERT_EQUAL(n, 0);
        rs_net_fault_info fi;
        CU_ASSERT_EQUAL(rs_net_fault_info_get(net, 0, &fi), RS_OK);
        CU_ASSERT_EQUAL(fi.flows_hit, 1);
        CU_ASSERT_EQUAL(fi.time_to_recover_ps, RS_TIME_MAX);
        CU_ASSERT_EQUAL(rs_fluid_parked(net), 0);
        rs_net_destroy(net);
    }
}

/* Packet vs flow with a spine-link failure under one 8 MiB flow: the time
 * the failure adds. Routes after 0 us: the packet level resends what was
 * lost after a NAK, the flow level pays one round trip (measured: +8.44 us
 * packet, +7.50 us flow). Routes after 140 us: the flow had pushed all its
 * bytes into the dead link, both wait for the retransmit timeout
 * (measured: +1007.3 us packet, +1000.0 us flow). Tolerance: the added
 * time within 2 us or 2%, whichever is larger. */
static void test_fluid_fault_agrees_with_packet_level(void)
{
    const double conv[2] = { 0, 140 };
    for (int k = 0; k < 2; k++) {
        rs_time add[2];
        for (int fid = 0; fid < 2; fid++) {
            rs_net_config c;
            rs_fx_config_at(&c, 32, 1, 8, fid ? RS_FIDELITY_FLOW : RS_FIDELITY_PACKET);
            rs_time fct[2];
            char up[48], sched[96];
            for (int f = 0; f < 2; f++) {
                rs_net *net = rs_fx_net(&c);
                CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, 0, 8, 8u << 20, NULL, NULL, 0), RS_OK);
                if (f == 0) {
                    uint32_t dead;
                    uplink_of_flow0(net, up, sizeof up, &dead);
                } else {
                    snprintf(sched, sizeof sched, "50us link-down %s", up);
                    CU_ASSERT_EQUAL_FATAL(faults(net, sched, conv[k]), RS_OK);
                }
                CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
                fct[f] = rs_fx_only_fct(net);
                rs_net_destroy(net);
            }
            add[fid] = fct[1] - fct[0];
        }
        printf("\n  spine link down under 8 MiB, routes after %g us: added packet %.2f us, flow %.2f us\n", conv[k],
               (double)add[0] / 1e6, (double)add[1] / 1e6);
        double d = (double)add[1] - (double)add[0], tol = (double)add[0] * 0.02;
        if (tol < 2e6)
            tol = 2e6;
        CU_ASSERT(d <= tol && -d <= tol);
    }
}

/* One 8 MiB message src -> dst under fault schedule sched on a 32-GPU
 * network (rail-only HB 8 radix 64, or a fat tree HB 1 radix 8): it
 * completes once; its time, and its data frames in *frames. */
static rs_time fault_fct(rs_fidelity fid, rs_topo_kind kind, uint32_t dst, const char *sched, uint64_t *frames)
{
    rs_net_config c;
    if (kind == RS_TOPO_RAIL_ONLY)
        rs_fx_config_at(&c, 32, 8, 64, fid);
    else
        rs_fx_config_at(&c, 32, 1, 8, fid);
    c.kind = kind;
    rs_net *net = rs_fx_net(&c);
    CU_ASSERT_EQUAL_FATAL(faults(net, sched, 0), RS_OK);
    int n = 0;
    CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, 0, dst, 8u << 20, count_done, &n, 0), RS_OK);
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    CU_ASSERT_EQUAL(n, 1);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.msgs, 1);
    CU_ASSERT_EQUAL(st.msgs_done, 1);
    if (fid == RS_FIDELITY_FLOW)
        CU_ASSERT_EQUAL(rs_fluid_parked(net), 0);
    *frames = st.data_pkts;
    rs_time t = rs_fx_only_fct(net);
    rs_net_destroy(net);
    return t;
}

/* Time within 2% of the packet level's, data frames within 2% (the flow
 * level has no retransmissions of its own). */
static void fault_agrees(rs_topo_kind kind, uint32_t dst, const char *sched)
{
    uint64_t fp, ff;
    rs_time p = fault_fct(RS_FIDELITY_PACKET, kind, dst, sched, &fp);
    rs_time f = fault_fct(RS_FIDELITY_FLOW, kind, dst, sched, &ff);
    printf("\n  %s under 8 MiB: packet %.2f us %llu frames, flow %.2f us %llu frames\n", sched, (double)p / 1e6,
           (unsigned long long)fp, (double)f / 1e6, (unsigned long long)ff);
    double d = ((double)f - (double)p) / (double)p, df = ((double)ff - (double)fp) / (double)fp;
    CU_ASSERT(d > -0.02 && d < 0.02);
    CU_ASSERT(df > -0.02 && df < 0.02);
}

/* Failover at flow level: on rail-only, GPU 8's NIC fails under an 8 MiB
 * message 0 -> 8 on rail 0. When routes are recomputed the message moves
 * to another rail through both HB domains, resending from what had
 * arrived; it completes exactly once (the abandoned flow leaves the fluid:
 * it used to complete as well, finishing the message twice), and what the
 * abandoned flow had delivered counts. At 171.215 us its last frames are
 * in flight: what they carried is resent (it used to restart from 0). */
static void test_fluid_fault_failover_completes_once_as_at_packet_level(void)
{
    const char *sched[3] = { "20us nic-down gpu8", "20us nic-down gpu8 100us", "171215ns nic-down gpu8" };
    for (int k = 0; k < 3; k++)
        fault_agrees(RS_TOPO_RAIL_ONLY, 8, sched[k]);
}

/* A cable fails just behind a flow's last frames (they crossed it): at
 * packet level nothing is lost. The flow level used to take the tail back
 * and wait for a retransmit timeout (1178.6 us against 174.9), and to
 * count its frames twice when it moved. */
static void test_fluid_fault_behind_the_last_frame_costs_nothing(void)
{
    fault_agrees(RS_TOPO_FAT_TREE, 8, "173883ns link-down leaf0.p7 1000300ns");
}

static const rs_cu_test fluid_fault_tests[] = {
    RS_CU_TEST(test_fluid_fault_spine_link_down_reroutes_over_remaining_spines),
    RS_CU_TEST(test_fluid_fault_rates_resolved_after_reroute),
    RS_CU_TEST(test_fluid_fault_rail_only_nic_down_goes_through_hb),
    RS_CU_TEST(test_fluid_fault_partition_stops_naming_gpus),
    RS_CU_TEST(test_fluid_fault_degrade_halves_rate_for_the_window),
    RS_CU_TEST(test_fluid_fault_agrees_with_packet_level),
    RS_CU_TEST(test_fluid_fault_unreliable_flow_is_lost),
    RS_CU_TEST(test_fluid_fault_tail_in_flight_waits_for_the_timeout),
    RS_CU_TEST(test_fluid_fault_failover_completes_once_as_at_packet_level),
    RS_CU_TEST(test_fluid_fault_behind_the_last_frame_costs_nothing),
};

static void register_suites(void) { RS_CU_SUITE("fluid_fault", fluid_fault_tests); }

int main(void) { return rs_cu_run(register_suites); }
