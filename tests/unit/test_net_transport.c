/*
 * test_net_transport.c - the RoCE transport and lossless Ethernet of the
 * packet-level network (models/): loss recovery by go-back-N and by
 * selective repeat, determinism, PFC, ECN marking and DCQCN.
 */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "cu_main.h"
#include "fixture_net.h"
#include "net.h"
#include "netint.h" /* wire overhead constants (RS_WIRE_*) and ports, to compute expected values */

/* -- loss and recovery -------------------------------------------------- */

static void send_from(void *ctx, rs_net *net, uint64_t src)
{
    (void)ctx;
    CU_ASSERT_EQUAL(rs_fx_send(net, (uint32_t)src, 0, 256u << 10, NULL, NULL, src), RS_OK);
}

static void test_lossy_incast_drops_and_recovers_every_byte_once(void)
{
    rs_net_config c;
    rs_fx_config(&c, 9, 1, 16);
    c.pfc = 0;
    c.buffer_bytes = 64u << 10;
    rs_net *net = rs_fx_net(&c);
    uint64_t bytes = 256u << 10;
    /* Staggered starts: with all senders in lock step, tail drop always
     * admits the same sender first and the others lose whole tails (a
     * phase effect, recovered by timeout, see the next test). */
    for (uint32_t s = 1; s <= 8; s++)
        rs_net_at(net, s * 37000, send_from, NULL, s);
    rs_fx_run_idle(net);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT(st.pkts_dropped > 0);
    CU_ASSERT(st.pkts_retransmitted > 0);
    CU_ASSERT(st.naks > 0);
    CU_ASSERT_EQUAL(st.msgs_done, 8);
    CU_ASSERT_EQUAL(st.goodput_bytes, 8 * bytes);
    CU_ASSERT(st.max_queue_bytes <= c.buffer_bytes);
    rs_net_destroy(net);
}

/* A buffer of one packet and two senders: whole tails get dropped and
 * only the retransmit timer can recover them. */
static void tail_loss_case(rs_recovery_kind rec)
{
    rs_net_config c;
    rs_fx_config(&c, 3, 1, 4);
    c.pfc = 0;
    c.buffer_bytes = 4096 + RS_WIRE_ROCE + RS_WIRE_RETH;
    c.rto_us = 20;
    c.recovery = rec;
    rs_net *net = rs_fx_net(&c);
    rs_fx_send(net, 1, 0, 64u << 10, NULL, NULL, 0);
    rs_fx_send(net, 2, 0, 64u << 10, NULL, NULL, 1);
    rs_fx_run_idle(net);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.msgs_done, 2);
    CU_ASSERT_EQUAL(st.goodput_bytes, 2 * (64u << 10));
    CU_ASSERT(st.pkts_dropped > 0);
    CU_ASSERT(st.timeouts > 0);
    rs_net_destroy(net);
}

static void test_tail_loss_recovers_by_timeout(void) { tail_loss_case(RS_RECOVERY_GBN); }

/* -- selective repeat (transport.recovery=selective) --------------------- */

/* One 4 MiB message over a two-switch path that corrupts 1% of the
 * frames on every link: the losses are scattered, with plenty behind
 * each to SACK it. */
static rs_net_stats lossy_message(rs_recovery_kind rec)
{
    rs_net_config c;
    rs_fx_config(&c, 16, 1, 8);
    c.loss_rate = 0.01;
    c.recovery = rec;
    c.rto_us = 100;
    rs_net *net = rs_fx_net(&c);
    rs_fx_send(net, 0, 15, 4u << 20, NULL, NULL, 0);
    rs_fx_run_idle(net);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    rs_net_destroy(net);
    return st;
}

static void test_selective_recovers_every_byte_resending_only_what_was_lost(void)
{
    rs_net_stats gbn = lossy_message(RS_RECOVERY_GBN), sel = lossy_message(RS_RECOVERY_SELECTIVE);
    for (int k = 0; k < 2; k++) {
        const rs_net_stats *st = k ? &sel : &gbn;
        CU_ASSERT_EQUAL(st->msgs_done, 1);
        CU_ASSERT_EQUAL(st->goodput_bytes, 4u << 20);
        CU_ASSERT(st->pkts_dropped > 0);
        CU_ASSERT(st->pkts_retransmitted > 0);
    }
    /* Go-back-N resends every packet in flight behind a loss (a round
     * trip's worth); selective repeat the lost ones, and when a resend is
     * lost too, once more what is still missing, some of it only late: at
     * most twice what was dropped (ACKs and SACKs among them). */
    CU_ASSERT(sel.pkts_retransmitted <= 2 * sel.pkts_dropped);
    CU_ASSERT(gbn.pkts_retransmitted > 10 * sel.pkts_retransmitted);
    CU_ASSERT(sel.timeouts == 0);          /* re-lost resends found by SACKs, not the timer */
    CU_ASSERT(sel.last_activity < gbn.last_activity);
}

static void test_selective_tail_loss_recovers_by_timeout(void) { tail_loss_case(RS_RECOVERY_SELECTIVE); }

/* Spraying on a lossless fabric reorders but loses nothing: go-back-N
 * resends what only arrived late; selective repeat with a reordering
 * threshold above the spread resends nothing, and SACKs what came early. */
static void test_selective_takes_reordering_for_what_it_is(void)
{
    rs_net_stats st[2];
    for (int k = 0; k < 2; k++) {
        rs_net_config c;
        rs_fx_config(&c, 128, 1, 16);
        c.ecmp = RS_ECMP_PACKET;
        c.recovery = k ? RS_RECOVERY_SELECTIVE : RS_RECOVERY_GBN;
        c.dupthresh = 256;
        rs_net *net = rs_fx_net(&c);
        for (uint32_t i = 0; i < 128; i++)
            rs_fx_send(net, i, (i + 64) % 128, 1u << 20, NULL, NULL, i);
        rs_fx_run_idle(net);
        rs_net_stats_get(net, &st[k]);
        rs_net_destroy(net);
        CU_ASSERT_EQUAL(st[k].msgs_done, 128);
        CU_ASSERT_EQUAL(st[k].goodput_bytes, 128u << 20);
        CU_ASSERT_EQUAL(st[k].pkts_dropped, 0);
    }
    CU_ASSERT(st[0].pkts_retransmitted > 0);
    CU_ASSERT_EQUAL(st[1].pkts_retransmitted, 0);
    CU_ASSERT(st[1].naks > 0); /* one SACK per early packet */
}

/* The sender never has more than sack_window PSNs past the oldest
 * unacknowledged one in flight: a lone 1 MiB message with a 64-packet
 * window over a long path takes at least ceil(256 / 64) round trips. */
static void test_selective_window_caps_what_is_in_flight(void)
{
    rs_net_config c;
    rs_fx_config(&c, 2, 1, 4);
    c.recovery = RS_RECOVERY_SELECTIVE;
    c.sack_window = 64;
    c.link_latency_ns = 20000; /* 80 us round trip: far above 64 packets' 21 us */
    rs_net *net = rs_fx_net(&c);
    rs_fx_send(net, 0, 1, 1u << 20, NULL, NULL, 0);
    rs_fx_run_idle(net);
    rs_time capped = rs_fx_only_fct(net);
    rs_net_destroy(net);
    c.recovery = RS_RECOVERY_GBN;
    net = rs_fx_net(&c);
    rs_fx_send(net, 0, 1, 1u << 20, NULL, NULL, 0);
    rs_fx_run_idle(net);
    rs_time free_run = rs_fx_only_fct(net);
    rs_net_destroy(net);
    /* Four windows: three round trips waiting for ACKs, then the last
     * window's one-way trip. */
    CU_ASSERT(capped >= 3 * (rs_time)80000000 + 40000000);
    CU_ASSERT(free_run < 2 * (rs_time)80000000);
}

static void test_routing_recovery_and_loss_keys_are_checked(void)
{
    rs_net_config c;
    rs_fx_config(&c, 8, 1, 4);
    c.sack_window = 100;
    rs_fx_refused(&c, "transport.sack_window");
    rs_fx_config(&c, 8, 1, 4);
    c.dupthresh = 0;
    rs_fx_refused(&c, "transport.dupthresh");
    rs_fx_config(&c, 8, 1, 4);
    c.flowlet_gap_us = 0;
    rs_fx_refused(&c, "routing.flowlet_gap_us");
    rs_fx_config(&c, 8, 1, 4);
    c.loss_rate = 0.01;
    c.fidelity = RS_FIDELITY_FLOW; /* no loss at flow level: refused, not ignored */
    rs_fx_refused(&c, "topology.loss_rate");
    rs_fx_config(&c, 8, 1, 4);
    c.loss_rate = 0.01;
    c.transport = RS_TRANSPORT_IDEAL; /* nothing would resend what is lost */
    rs_fx_refused(&c, "transport.kind=ideal");
}

static void test_same_seed_same_results(void)
{
    rs_net_stats a, b;
    for (int round = 0; round < 2; round++) {
        rs_net_config c;
        rs_fx_config(&c, 128, 1, 16);
        c.buffer_bytes = 256u << 10;
        c.pfc = 0;
        c.seed = 99;
        rs_net *net = rs_fx_net(&c);
        for (uint32_t i = 0; i < 128; i++)
            rs_fx_send(net, i, (i * 37 + 11) % 128, 300000, NULL, NULL, i);
        rs_fx_run_idle(net);
        rs_net_stats_get(net, round ? &b : &a);
        rs_net_destroy(net);
    }
    CU_ASSERT_EQUAL(memcmp(&a, &b, sizeof a), 0);
    CU_ASSERT(a.pkts_dropped > 0); /* the case is not trivially lossless */
}


/* -- lossless Ethernet and congestion control ---------------------------- */

/* Mean queue of one switch port's RoCE priority, sampled every 1 us from
 * `from` on while messages are outstanding. */
typedef struct queue_sampler {
    uint32_t port;
    rs_time from;
    double sum;
    uint64_t n;
} queue_sampler;

static void sample_queue(void *ctx, rs_net *net, uint64_t arg)
{
    (void)arg;
    queue_sampler *s = ctx;
    if (rs_net_now(net) >= s->from) {
        s->sum += (double)net->ports[s->port].q[net->cfg.prio].bytes;
        s->n++;
    }
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    if (st.msgs_done < st.msgs)
        rs_net_at(net, rs_net_now(net) + 1000000, sample_queue, s, 0);
}

/* 8 -> 1 incast of `bytes` each on one switch; returns the stats and the
 * mean queue toward the receiver after 1 ms. */
static double incast8(rs_net_config *c, uint64_t bytes, rs_net_stats *st)
{
    rs_net *net = rs_fx_net(c);
    for (uint32_t s = 1; s <= 8; s++)
        rs_fx_send(net, s, 0, bytes, NULL, NULL, s);
    queue_sampler qs = { net->leaf_port[0], 1000000000ULL, 0, 0 };
    rs_net_at(net, 0, sample_queue, &qs, 0);
    rs_fx_run_idle(net);
    rs_net_stats_get(net, st);
    rs_net_destroy(net);
    return qs.n ? qs.sum / (double)qs.n : 0;
}

/* An incast whose packets queue at two switches (16 GPUs, radix 8: the
 * spine's port to the leaf, then the leaf's to the GPU): a packet marked
 * CE at the first is counted there only, so the marks never outnumber
 * the data packets, and the ports' marks add up to the total. */
static void test_ecn_marks_count_each_packet_once(void)
{
    rs_net_config c;
    rs_fx_config(&c, 16, 1, 8);
    c.cc = RS_CC_NONE; /* keep the queues up: every packet is marked somewhere */
    rs_net *net = rs_fx_net(&c);
    for (uint32_t s = 4; s < 16; s++)
        rs_fx_send(net, s, 0, 1u << 20, NULL, NULL, s);
    rs_fx_run_idle(net);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT(st.ecn_marked > 0);
    CU_ASSERT(st.ecn_marked <= st.data_pkts);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < rs_net_port_count(net); i++) {
        rs_net_port_info pi;
        rs_net_port_info_get(net, i, &pi);
        sum += pi.ecn_marked;
    }
    CU_ASSERT_EQUAL(sum, st.ecn_marked);
    rs_net_destroy(net);
}

static void test_pfc_incast_is_lossless(void)
{
    rs_net_config c;
    rs_fx_config(&c, 9, 1, 16);
    c.buffer_bytes = 256u << 10; /* smaller than what arrives */
    c.cc = RS_CC_NONE;
    rs_net_stats st;
    incast8(&c, 1u << 20, &st);
    CU_ASSERT_EQUAL(st.pkts_dropped, 0);
    CU_ASSERT_EQUAL(st.pkts_retransmitted, 0);
    CU_ASSERT(st.pfc_pauses_sent > 0);
    CU_ASSERT(st.pfc_paused_ps > 0);
    CU_ASSERT_EQUAL(st.goodput_bytes, 8u << 20);
    CU_ASSERT_EQUAL(st.msgs_done, 8);
    /* Without PFC the same buffer overflows. */
    c.pfc = 0;
    incast8(&c, 1u << 20, &st);
    CU_ASSERT(st.pkts_dropped > 0);
    CU_ASSERT_EQUAL(st.msgs_done, 8);
}

static void test_pfc_pauses_are_sent_by_switches_and_received_upstream(void)
{
    rs_net_config c;
    rs_fx_config(&c, 9, 1, 16);
    c.cc = RS_CC_NONE;
    rs_net *net = rs_fx_net(&c);
    for (uint32_t s = 1; s <= 8; s++)
        rs_fx_send(net, s, 0, 1u << 20, NULL, NULL, s);
    rs_fx_run_idle(net);
    /* Every pause a switch port sent was received by the NIC across the
     * cable; the receiver's own NIC never sent one. */
    uint64_t sent = 0, recv = 0;
    for (uint32_t i = 0; i < rs_net_port_count(net); i++) {
        rs_net_port_info pi;
        rs_net_port_info_get(net, i, &pi);
        const rs_port *p = &net->ports[i];
        if (p->kind == RS_PORT_SWITCH) {
            sent += pi.pfc_sent;
        } else {
            recv += pi.pfc_received;
            CU_ASSERT_EQUAL(pi.pfc_sent, 0);
        }
    }
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT(sent > 0);
    CU_ASSERT_EQUAL(sent, recv);
    CU_ASSERT_EQUAL(sent, st.pfc_pauses_sent + st.pfc_resumes_sent);
    CU_ASSERT(st.max_queue_bytes > c.pfc_xoff_bytes);
    rs_net_destroy(net);
}

static void test_dcqcn_cuts_pfc_pauses(void)
{
    /* The paper's constants: a cut holds for a rate timer, so the 8:1
     * incast settles below PFC's threshold. */
    rs_net_config c;
    rs_fx_config(&c, 9, 1, 16);
    rs_dcqcn_profile_set(&c.dcqcn, RS_DCQCN_PAPER_2015);
    rs_net_stats with, without;
    c.cc = RS_CC_NONE;
    incast8(&c, 16u << 20, &without);
    c.cc = RS_CC_DCQCN;
    incast8(&c, 16u << 20, &with);
    CU_ASSERT(with.cnps_sent > 0);
    CU_ASSERT_EQUAL(with.cnps_sent, with.cnps_received);
    CU_ASSERT_EQUAL(without.cnps_sent, 0);
    CU_ASSERT(with.ecn_marked > 0);
    CU_ASSERT(with.pfc_pauses_sent * 4 < without.pfc_pauses_sent);
    CU_ASSERT_EQUAL(with.pkts_dropped, 0);
}

static void test_dcqcn_holds_queue_in_marking_band(void)
{
    /* NIC-style increase (32 KiB byte counter, F = 1) and fast alpha
     * (g = 1/16, 1 us, CNP every 4 us): the standing queue sits between
     * Kmin and Kmax. Without congestion control PFC holds it far above. */
    rs_net_config c;
    rs_fx_config(&c, 9, 1, 16);
    rs_dcqcn_profile_set(&c.dcqcn, RS_DCQCN_PAPER_2015);
    c.dcqcn.g = 1.0 / 16;
    c.dcqcn.alpha_period_us = 1;
    c.dcqcn.cnp_interval_us = 4;
    c.dcqcn.byte_counter = 32767;
    c.dcqcn.fast_recovery = 1;
    rs_net_stats st;
    double q = incast8(&c, 16u << 20, &st);
    CU_ASSERT(q >= (double)c.ecn_kmin_bytes / 2);
    CU_ASSERT(q <= (double)c.ecn_kmax_bytes);
    /* ... while keeping the bottleneck busy most of the time. */
    double ideal = 8.0 * (16u << 20) * (4096.0 + RS_WIRE_ROCE) / 4096.0 * 20.0;
    CU_ASSERT((double)st.last_activity < ideal * 1.3);
    c.cc = RS_CC_NONE;
    double q_none = incast8(&c, 16u << 20, &st);
    CU_ASSERT(q_none > (double)c.ecn_kmax_bytes);
}

/* The reaction point's law under both profiles, step by step. The paper
 * clamps the target to the current rate at every cut, so a second cut
 * lowers where fast recovery heads; ConnectX clamps only after a timer
 * increase, so a flow cut again while recovering by bytes keeps heading
 * back to the rate it had. */
static void test_dcqcn_target_clamp_by_profile(void)
{
    for (int k = 0; k < 2; k++) {
        rs_net_config c;
        rs_fx_config(&c, 2, 1, 4);
        rs_dcqcn_profile_set(&c.dcqcn, k ? RS_DCQCN_PAPER_2015 : RS_DCQCN_CONNECTX);
        rs_net *net = rs_fx_net(&c);
        rs_dcqcn_rp rp;
        rs_dcqcn_init(net, &rp);
        rs_dcqcn_cut(net, &rp, 0); /* alpha 1: halves, Rt = 400 either way (clamped or line rate) */
        CU_ASSERT(rp.rc > 199e9 && rp.rc < 201e9);
        CU_ASSERT(rp.rt > 399e9);
        rs_dcqcn_increase(net, &rp, 0); /* by bytes: Rc halfway back */
        double before = rp.rc;
        rs_dcqcn_cut(net, &rp, 0);
        if (k) {
            CU_ASSERT(rp.rt > before - 1 && rp.rt < before + 1); /* paper: Rt = Rc at the cut */
        } else {
            CU_ASSERT(rp.rt > 399e9);                          /* ConnectX: Rt kept */
        }
        rs_dcqcn_increase(net, &rp, 1); /* by the timer ... */
        before = rp.rc;
        rs_dcqcn_cut(net, &rp, 0);      /* ... then a cut clamps under both */
        CU_ASSERT(rp.rt > before - 1 && rp.rt < before + 1);
        rs_net_destroy(net);
    }
}

typedef struct rate_probe {
    double a, b;
} rate_probe;

static void probe_rates(void *ctx, rs_net *net, uint64_t arg)
{
    (void)arg;
    rate_probe *r = ctx;
    r->a = net->flows[0].cc.rc;
    r->b = net->flows[1].cc.rc;
}

static void start_second(void *ctx, rs_net *net, uint64_t arg)
{
    (void)ctx;
    (void)arg;
    rs_fx_send(net, 2, 0, 64u << 20, NULL, NULL, 1);
}

static void test_dcqcn_flows_converge_to_fair_share(void)
{
    /* A runs alone at line rate; B joins 500 us later at line rate too.
     * 1.5 ms later DCQCN (the paper's constants) has brought both to about
     * half the link. */
    rs_net_config c;
    rs_fx_config(&c, 3, 1, 16);
    rs_dcqcn_profile_set(&c.dcqcn, RS_DCQCN_PAPER_2015);
    rs_net *net = rs_fx_net(&c);
    rs_fx_send(net, 1, 0, 64u << 20, NULL, NULL, 0);
    rs_net_at(net, 500000000ULL, start_second, NULL, 0);
    rate_probe r = { 0, 0 };
    rs_net_at(net, 2000000000ULL, probe_rates, &r, 0);
    rs_fx_run_idle(net);
    double lo = r.a < r.b ? r.a : r.b, hi = r.a > r.b ? r.a : r.b;
    CU_ASSERT(hi > 0);
    CU_ASSERT(lo / hi > 0.9);
    CU_ASSERT(lo + hi < 1.2 * 400e9);
    CU_ASSERT(lo + hi > 0.8 * 400e9);
    rs_net_destroy(net);
}

static const rs_cu_test transport_tests[] = {
    RS_CU_TEST(test_lossy_incast_drops_and_recovers_every_byte_once),
    RS_CU_TEST(test_tail_loss_recovers_by_timeout),
    RS_CU_TEST(test_same_seed_same_results),
};

static const rs_cu_test recovery_tests[] = {
    RS_CU_TEST(test_selective_recovers_every_byte_resending_only_what_was_lost),
    RS_CU_TEST(test_selective_tail_loss_recovers_by_timeout),
    RS_CU_TEST(test_selective_takes_reordering_for_what_it_is),
    RS_CU_TEST(test_selective_window_caps_what_is_in_flight),
    RS_CU_TEST(test_routing_recovery_and_loss_keys_are_checked),
};

static const rs_cu_test lossless_tests[] = {
    RS_CU_TEST(test_pfc_incast_is_lossless),
    RS_CU_TEST(test_ecn_marks_count_each_packet_once),
    RS_CU_TEST(test_pfc_pauses_are_sent_by_switches_and_received_upstream),
    RS_CU_TEST(test_dcqcn_cuts_pfc_pauses),
    RS_CU_TEST(test_dcqcn_holds_queue_in_marking_band),
    RS_CU_TEST(test_dcqcn_flows_converge_to_fair_share),
    RS_CU_TEST(test_dcqcn_target_clamp_by_profile),
};

static void register_suites(void)
{
    RS_CU_SUITE("transport", transport_tests);
    RS_CU_SUITE("recovery", recovery_tests);
    RS_CU_SUITE("lossless", lossless_tests);
}

int main(void) { return rs_cu_run(register_suites); }
