/*
 * test_net.c - the packet-level network (models/): exact timing against an
 * independent store-and-forward model, flow records that follow what is
 * in flight, fairness, ECMP behaviour, HB-domain forwarding and PXN
 * relays, tallies, completion-time statistics and callbacks named by
 * index. Topologies are in test_topo.c, the transport and lossless
 * Ethernet in test_net_transport.c.
 */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "cu_main.h"
#include "fixture_net.h"
#include "net.h"
#include "netint.h" /* wire overhead constants (RS_WIRE_*) and entities, to compute expected times */
#include "rng.h"

/* -- exact timing ------------------------------------------------------- */

/* Independent model of a message crossing `hops` store-and-forward links:
 * packet k of wire size w[k] starts on link i when it has fully arrived
 * and link i has finished packet k-1. Returns the last packet's arrival. */
static rs_time pipeline_time(const uint32_t *w, uint32_t n, const uint64_t *rate,
                             const rs_time *prop, uint32_t hops)
{
    rs_time arr[64], end_prev;
    CU_ASSERT_FATAL(n <= 64);
    for (uint32_t k = 0; k < n; k++)
        arr[k] = 0;
    for (uint32_t i = 0; i < hops; i++) {
        end_prev = 0;
        for (uint32_t k = 0; k < n; k++) {
            rs_time start = arr[k] > end_prev ? arr[k] : end_prev;
            end_prev = start + rs_ser_time(w[k], rate[i]);
            arr[k] = end_prev + prop[i];
        }
    }
    return arr[n - 1];
}

/* Wire sizes of a RoCE WRITE of `bytes` at `mtu`. */
static uint32_t roce_wire(uint64_t bytes, uint32_t mtu, uint32_t *w)
{
    uint32_t n = (uint32_t)((bytes + mtu - 1) / mtu);
    for (uint32_t k = 0; k < n; k++) {
        uint64_t pl = bytes - (uint64_t)k * mtu < mtu ? bytes - (uint64_t)k * mtu : mtu;
        w[k] = (uint32_t)pl + RS_WIRE_ROCE + (k == 0 ? RS_WIRE_RETH : 0);
    }
    return n;
}

static void test_single_packet_one_switch_exact(void)
{
    rs_net_config c;
    rs_fx_config(&c, 2, 1, 4);
    c.transport = RS_TRANSPORT_IDEAL;
    rs_net *net = rs_fx_net(&c);
    CU_ASSERT_EQUAL(rs_fx_send(net, 0, 1, 1000, NULL, NULL, 0), RS_OK);
    rs_fx_run_idle(net);
    /* 1000 B + 82 B RoCE/Ethernet overhead + 16 B RETH = 1098 B = 21960 ps
     * at 400 Gb/s, twice; 500 ns per link, 500 ns switch pipeline. */
    CU_ASSERT_EQUAL(rs_fx_only_fct(net), 2 * 21960 + 2 * 500000 + 500000);
    rs_net_destroy(net);
}

static void multihop_case(rs_transport_kind tr, double nic_gbps)
{
    rs_net_config c;
    rs_fx_config(&c, 16, 1, 4); /* k = 4 fat tree: GPU 0 -> 15 crosses 6 links */
    c.transport = tr;
    c.nic_gbps = nic_gbps;
    c.link_latency_ns = 700;
    c.switch_latency_ns = 300;
    rs_net *net = rs_fx_net(&c);
    uint64_t bytes = 10 * 4096 + 100;
    CU_ASSERT_EQUAL(rs_fx_send(net, 0, 15, bytes, NULL, NULL, 0), RS_OK);
    rs_fx_run_idle(net);
    uint32_t w[64];
    uint32_t n = roce_wire(bytes, 4096, w);
    uint64_t nic = (uint64_t)(nic_gbps * 1e9), sw = 400000000000ULL;
    const uint64_t rate[6] = { nic, sw, sw, sw, sw, nic };
    const rs_time prop[6] = { 1000000, 1000000, 1000000, 1000000, 1000000, 700000 };
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 15), 6);
    CU_ASSERT_EQUAL(rs_fx_only_fct(net), pipeline_time(w, n, rate, prop, 6));
    rs_net_destroy(net);
}

static void test_multihop_message_exact_ideal(void) { multihop_case(RS_TRANSPORT_IDEAL, 400); }
static void test_multihop_message_exact_roce(void) { multihop_case(RS_TRANSPORT_ROCE, 400); }
static void test_multihop_message_exact_slow_nic(void) { multihop_case(RS_TRANSPORT_ROCE, 100); }

static void test_hb_transfer_exact_with_rounding(void)
{
    rs_net_config c;
    rs_fx_config(&c, 8, 8, 64);
    c.hb_latency_ns = 333.333; /* 333333 ps: 166666 + 166667 */
    rs_net *net = rs_fx_net(&c);
    uint64_t bytes = 100000;
    CU_ASSERT_EQUAL(rs_fx_send(net, 2, 5, bytes, NULL, NULL, 0), RS_OK);
    rs_fx_run_idle(net);
    const uint32_t w[2] = { 65536 + RS_WIRE_HB, 34464 + RS_WIRE_HB };
    const uint64_t rate[2] = { 3600000000000ULL, 3600000000000ULL };
    const rs_time prop[2] = { 166666, 166667 };
    CU_ASSERT_EQUAL(rs_fx_only_fct(net), pipeline_time(w, 2, rate, prop, 2));
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.hb_bytes, bytes);
    CU_ASSERT_EQUAL(st.nic_bytes, 0);
    rs_net_destroy(net);
}

/* rs_net_msg.left: `left` runs once, when the NIC starts the
 * message's last frame, before `done`. A message posted from
 * there follows the first back to back: on an idle path it ends exactly
 * its own lone time after the first left. */
struct posted {
    rs_time left[2], done[2];
    int lefts, dones;
};

static void posted_done(void *ctx, rs_net *net, uint64_t tag)
{
    struct posted *p = ctx;
    p->done[tag] = rs_net_now(net);
    p->dones++;
}

static void posted_left(void *ctx, rs_net *net, uint64_t tag)
{
    struct posted *p = ctx;
    p->left[tag] = rs_net_now(net);
    p->lefts++;
    if (tag == 0)
        CU_ASSERT_EQUAL(rs_fx_send_full(net, 0, 1, 10 * 4096 + 100, posted_done, posted_left, p, 1, NULL,
                                        RS_NET_SERIAL_NEXT), RS_OK);
}

static void test_posted_send_leaves_then_the_next_follows_back_to_back(void)
{
    rs_net_config c;
    rs_fx_config(&c, 2, 1, 4);
    c.transport = RS_TRANSPORT_IDEAL;
    rs_net *net = rs_fx_net(&c);
    uint64_t bytes = 10 * 4096 + 100;
    struct posted p = { 0 };
    CU_ASSERT_EQUAL_FATAL(rs_fx_send_full(net, 0, 1, bytes, posted_done, posted_left, &p, 0, NULL,
                                          RS_NET_SERIAL_NEXT), RS_OK);
    rs_fx_run_idle(net);
    uint32_t w[64];
    uint32_t n = roce_wire(bytes, 4096, w);
    rs_time wire = 0;
    for (uint32_t i = 0; i < n; i++)
        wire += rs_ser_time(w[i], 400000000000ULL);
    const uint64_t rate[2] = { 400000000000ULL, 400000000000ULL };
    const rs_time prop[2] = { 1000000, 500000 };
    rs_time alone = pipeline_time(w, n, rate, prop, 2);
    CU_ASSERT_EQUAL(p.lefts, 2);
    CU_ASSERT_EQUAL(p.dones, 2);
    rs_time last = rs_ser_time(w[n - 1], 400000000000ULL);
    CU_ASSERT_EQUAL(p.left[0], wire - last);
    CU_ASSERT(p.left[0] < p.done[0]);
    CU_ASSERT_EQUAL(p.done[0], alone);
    CU_ASSERT_EQUAL(p.left[1], 2 * wire - last);
    CU_ASSERT_EQUAL(p.done[1], wire + alone);
    rs_net_destroy(net);
}

static void test_send_to_self_completes_at_once(void)
{
    rs_net_config c;
    rs_fx_config(&c, 8, 8, 64);
    rs_net *net = rs_fx_net(&c);
    CU_ASSERT_EQUAL(rs_fx_send(net, 3, 3, 12345, NULL, NULL, 0), RS_OK);
    CU_ASSERT_EQUAL(rs_fx_send(net, 3, 8, 1, NULL, NULL, 0), RS_EINVAL);
    rs_fx_run_idle(net);
    CU_ASSERT_EQUAL(rs_fx_only_fct(net), 0);
    rs_net_destroy(net);
}

/* A timer records when it ran and the entity whose event it was. */
typedef struct timer_seen {
    rs_time at[4];
    uint32_t ent[4], n;
} timer_seen;

static void timer_note(void *ctx, rs_net *net, uint64_t arg)
{
    (void)arg;
    timer_seen *ts = ctx;
    if (ts->n < 4) {
        ts->at[ts->n] = rs_net_now(net);
        ts->ent[ts->n++] = (uint32_t)(rs_sim_key(rs_net_sim(net)) >> 40);
    }
}

/* rs_net_at runs as the driver's event, rs_net_at_gpu as the GPU node's;
 * a GPU out of range stops the run with RS_EINTERNAL. */
static void test_gpu_timer_is_an_event_of_its_node(void)
{
    rs_net_config c;
    rs_fx_config(&c, 8, 8, 64);
    rs_net *net = rs_fx_net(&c);
    timer_seen ts = { 0 };
    rs_net_at(net, 1000, timer_note, &ts, 0);
    rs_net_at_gpu(net, 5, 2000, timer_note, &ts, 0);
    rs_net_at_gpu(net, 0, 3000, timer_note, &ts, 0);
    /* rs_sim_key is the running event's key under rs_sim_run_before, the
     * loop of a partitioned run. */
    CU_ASSERT_EQUAL(rs_sim_run_before(rs_net_sim(net), 4000), RS_OK);
    CU_ASSERT_EQUAL_FATAL(ts.n, 3);
    CU_ASSERT_EQUAL(ts.at[0], 1000);
    CU_ASSERT_EQUAL(ts.at[1], 2000);
    CU_ASSERT_EQUAL(ts.at[2], 3000);
    CU_ASSERT_EQUAL(ts.ent[0], net->ent_driver);
    CU_ASSERT_EQUAL(ts.ent[1], net->nodes[5].entity);
    CU_ASSERT_EQUAL(ts.ent[2], net->nodes[0].entity);
    CU_ASSERT_NOT_EQUAL(ts.ent[1], ts.ent[2]);
    rs_net_destroy(net);

    net = rs_fx_net(&c);
    ts.n = 0;
    rs_net_at_gpu(net, 8, 1000, timer_note, &ts, 0); /* 8 GPUs: 0..7 */
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_EINTERNAL);
    CU_ASSERT_EQUAL(ts.n, 0);
    rs_net_destroy(net);
}

/* -- memory follows what is in flight ---------------------------------- */

/* Each GPU sends `left` messages to the next one, one at a time: a done
 * callback starts the next. */
typedef struct chain {
    uint32_t gpus, left[16];
    uint64_t bytes;
} chain;

static void chain_next(void *ctx, rs_net *net, uint64_t src)
{
    chain *ch = ctx;
    if (ch->left[src]-- > 0)
        CU_ASSERT_EQUAL(rs_fx_send(net, (uint32_t)src, (uint32_t)((src + 1) % ch->gpus), ch->bytes, chain_next, ch,
                                   src),
                        RS_OK);
}

/* 16 GPUs x 200 messages at packet level: flow records are reused, so
 * the records ever handed out stay near the messages in flight (16), not
 * the 3,200 sent, and every one is back when the run ends. */
static void chain_case(rs_recovery_kind rec, double loss)
{
    rs_net_config c;
    rs_fx_config(&c, 16, 1, 8);
    c.recovery = rec;
    c.loss_rate = loss;
    rs_net *net = rs_fx_net(&c);
    chain ch = { .gpus = 16, .bytes = 20000 };
    for (uint32_t g = 0; g < 16; g++) {
        ch.left[g] = 200;
        chain_next(&ch, net, g);
    }
    rs_fx_run_idle(net);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.msgs, 16 * 200);
    CU_ASSERT_EQUAL(st.msgs_done, st.msgs);
    if (loss > 0)
        CU_ASSERT(st.pkts_retransmitted > 0);
    CU_ASSERT_EQUAL(net->flow_serial, 16 * 200);
    CU_ASSERT(net->nflows <= 4 * 16); /* one in flight per GPU, a few predecessors whose last packets (duplicates, re-ACKs) are still out */
    CU_ASSERT_EQUAL(net->flow_free.n, net->nflows);
    rs_net_destroy(net);
}

static void test_flow_records_follow_in_flight_gbn(void) { chain_case(RS_RECOVERY_GBN, 0); }
static void test_flow_records_follow_in_flight_lossy_gbn(void) { chain_case(RS_RECOVERY_GBN, 0.002); }
static void test_flow_records_follow_in_flight_lossy_selective(void) { chain_case(RS_RECOVERY_SELECTIVE, 0.002); }

/* -- sharing and ECMP --------------------------------------------------- */

static void test_two_flows_share_bottleneck_fairly(void)
{
    rs_net_config c;
    rs_fx_config(&c, 3, 1, 4);
    c.transport = RS_TRANSPORT_IDEAL;
    c.buffer_bytes = 64u << 20;
    rs_net *net = rs_fx_net(&c);
    uint64_t bytes = 4u << 20;
    rs_fx_send(net, 1, 0, bytes, NULL, NULL, 0);
    rs_fx_send(net, 2, 0, bytes, NULL, NULL, 1);
    rs_fx_run_idle(net);
    size_t n;
    const rs_net_msg_time *t = rs_net_msg_times(net, &n);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    double f0 = (double)(t[0].end - t[0].start), f1 = (double)(t[1].end - t[1].start);
    double fmax = f0 > f1 ? f0 : f1, fmin = f0 < f1 ? f0 : f1;
    /* Both senders interleave at the switch: they finish together. */
    CU_ASSERT(fmin / fmax > 0.99);
    /* And the bottleneck was never idle: 2 * 1024 packets of 4178 B
     * (+16 B RETH each flow) at 20 ps/B, plus two latencies. */
    double busy = (2.0 * 1024 * (4096 + RS_WIRE_ROCE) + 2 * RS_WIRE_RETH) * 20.0;
    CU_ASSERT(fmax >= busy);
    CU_ASSERT(fmax <= busy + 2e6 + 2 * 83880);
    rs_net_destroy(net);
}

/* Two jobs through one switch port, job 1 at priority 5 above job 2 at
 * the network's 3 (strict priority): job 1's message leaves as if alone,
 * job 2's waits for it, at both fidelities; with PFC on, both
 * priorities are lossless (nothing dropped in a small buffer) and the
 * high one is still first. */
static void check_job_priority(rs_fidelity fid, int pfc)
{
    rs_net_config c;
    rs_fx_config(&c, 3, 1, 4);
    c.fidelity = fid;
    c.pfc = pfc;
    if (!pfc) {
        c.transport = RS_TRANSPORT_IDEAL;
        c.buffer_bytes = 64u << 20;
    }
    rs_net *net = rs_fx_net(&c);
    rs_err err;
    const uint32_t a[] = { 1 }, b[] = { 2 };
    CU_ASSERT_EQUAL_FATAL(rs_net_set_job(net, 1, a, 1, &err), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_net_set_job(net, 2, b, 1, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_net_set_job_priority(net, 1, 8, &err), RS_EINVAL);
    CU_ASSERT_EQUAL_FATAL(rs_net_set_job_priority(net, 1, 5, &err), RS_OK);
    uint64_t bytes = 4u << 20;
    rs_fx_send(net, 2, 0, bytes, NULL, NULL, 1);
    rs_fx_send(net, 1, 0, bytes, NULL, NULL, 0);
    rs_fx_run_idle(net);
    size_t n;
    const rs_net_msg_time *t = rs_net_msg_times(net, &n);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    rs_time hi = 0, lo = 0;
    for (size_t i = 0; i < n; i++)
        *(t[i].src == 1 ? &hi : &lo) = t[i].end - t[i].start;
    /* One message's frames at 20 ps/B, plus latencies: the high one is
     * within 3% of that, the low one takes about both. */
    double one = 1024.0 * (4096 + RS_WIRE_ROCE) * 20.0;
    CU_ASSERT((double)hi < one * 1.03 + 2e6);
    CU_ASSERT((double)lo > 1.9 * one);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.pkts_dropped, 0);
    rs_net_destroy(net);
}

static void test_job_priority_is_served_first(void)
{
    check_job_priority(RS_FIDELITY_PACKET, 0);
    check_job_priority(RS_FIDELITY_PACKET, 1);
    check_job_priority(RS_FIDELITY_FLOW, 0);
}

static rs_time shifted_permutation_max_fct(rs_ecmp_mode mode, rs_time *single)
{
    rs_net_config c;
    rs_fx_config(&c, 128, 1, 16); /* 16 leaves of 8, 8 spines */
    c.transport = RS_TRANSPORT_IDEAL;
    c.buffer_bytes = 64u << 20;
    c.ecmp = mode;
    c.seed = 7;
    rs_net *net = rs_fx_net(&c);
    uint64_t bytes = 1u << 20;
    for (uint32_t i = 0; i < 128; i++)
        rs_fx_send(net, i, (i + 64) % 128, bytes, NULL, NULL, i);
    rs_fx_run_idle(net);
    size_t n;
    const rs_net_msg_time *t = rs_net_msg_times(net, &n);
    CU_ASSERT_EQUAL(n, 128);
    rs_time mx = 0;
    for (size_t i = 0; i < n; i++)
        if (t[i].end - t[i].start > mx)
            mx = t[i].end - t[i].start;
    rs_net_destroy(net);

    rs_fx_config(&c, 128, 1, 16);
    c.transport = RS_TRANSPORT_IDEAL;
    net = rs_fx_net(&c);
    rs_fx_send(net, 0, 64, bytes, NULL, NULL, 0);
    rs_fx_run_idle(net);
    *single = rs_fx_only_fct(net);
    rs_net_destroy(net);
    return mx;
}

static void test_spraying_permutation_runs_near_line_rate(void)
{
    rs_time single, mx = shifted_permutation_max_fct(RS_ECMP_PACKET, &single);
    /* Random spraying leaves short-lived imbalance at the spines' down
     * links, so the slowest flow still runs above 80% of line rate. */
    CU_ASSERT(mx <= single * 125 / 100);
}

static void test_flow_hash_permutation_shows_collisions(void)
{
    rs_time single, mx = shifted_permutation_max_fct(RS_ECMP_FLOW, &single);
    /* 128 flows hashed onto 8 spines collide: some link carries two or
     * more flows, so the slowest takes about twice as long. */
    CU_ASSERT(mx >= single * 18 / 10);
}

/* Bytes leaf0 sent up each of its uplinks after one 4 MiB message from
 * GPU 0 to GPU 15 (another leaf of a 16-GPU fat tree of radix 8: four
 * uplinks per leaf); returns how many uplinks carried any. */
static int uplinks_used(rs_ecmp_mode mode, double flowlet_gap_us)
{
    rs_net_config c;
    rs_fx_config(&c, 16, 1, 8);
    c.ecmp = mode;
    c.flowlet_gap_us = flowlet_gap_us;
    c.recovery = RS_RECOVERY_SELECTIVE;
    c.dupthresh = 64; /* spread packets arrive out of order; nothing is lost */
    rs_net *net = rs_fx_net(&c);
    rs_fx_send(net, 0, 15, 4u << 20, NULL, NULL, 0);
    rs_fx_run_idle(net);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.msgs_done, 1);
    CU_ASSERT_EQUAL(st.goodput_bytes, 4u << 20);
    CU_ASSERT_EQUAL(st.pkts_retransmitted, 0);
    int used = 0;
    for (uint32_t i = 0; i < rs_net_port_count(net); i++) {
        rs_net_port_info pi;
        CU_ASSERT_EQUAL_FATAL(rs_net_port_info_get(net, i, &pi), RS_OK);
        if (strncmp(pi.name, "leaf0.", 6) == 0 && strncmp(pi.peer, "spine", 5) == 0 && pi.tx_bytes > 100000)
            used++;
    }
    rs_net_destroy(net);
    return used;
}

static void test_flow_hash_keeps_a_message_on_one_uplink(void)
{
    CU_ASSERT_EQUAL(uplinks_used(RS_ECMP_FLOW, 256), 1);
}

static void test_adaptive_spreads_a_message_over_every_uplink(void)
{
    /* All uplinks are idle between packets: ties, broken per packet. */
    CU_ASSERT_EQUAL(uplinks_used(RS_ECMP_ADAPTIVE, 256), 4);
}

static void test_flowlet_sticks_within_the_gap_and_moves_past_it(void)
{
    /* Back-to-back packets 84 ns apart: one flowlet for the whole message
     * with the default 256 us gap; a new flowlet per packet with 10 ns. */
    CU_ASSERT_EQUAL(uplinks_used(RS_ECMP_FLOWLET, 256), 1);
    CU_ASSERT_EQUAL(uplinks_used(RS_ECMP_FLOWLET, 0.01), 4);
}

/* A spine port that is busy gets no new packets while an idle one is
 * free: two messages from leaf 0 to leaf 1 of a 2-spine fat tree take the
 * two uplinks, each its own, and finish as if alone. */
static void test_adaptive_avoids_the_queued_uplink(void)
{
    rs_net_config c;
    rs_fx_config(&c, 8, 1, 4); /* 4 leaves of 2 GPUs, 2 uplinks each */
    c.transport = RS_TRANSPORT_IDEAL;
    c.ecmp = RS_ECMP_ADAPTIVE;
    rs_net *net = rs_fx_net(&c);
    rs_fx_send(net, 0, 2, 1u << 20, NULL, NULL, 0);
    rs_fx_send(net, 1, 3, 1u << 20, NULL, NULL, 1);
    rs_fx_run_idle(net);
    size_t n;
    const rs_net_msg_time *t = rs_net_msg_times(net, &n);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    rs_time worst = t[0].end - t[0].start > t[1].end - t[1].start ? t[0].end - t[0].start : t[1].end - t[1].start;
    rs_net_destroy(net);
    rs_net_config one = c;
    net = rs_fx_net(&one);
    rs_fx_send(net, 0, 2, 1u << 20, NULL, NULL, 0);
    rs_fx_run_idle(net);
    rs_time alone = rs_fx_only_fct(net);
    rs_net_destroy(net);
    /* Per packet, so the two interleave on both uplinks at first: within
     * a few frames of a lone message, far from the 2x of a shared link. */
    CU_ASSERT(worst <= alone + alone / 20);
}

/* -- HB domain and rail-only forwarding --------------------------------- */

static void test_rail_only_cross_rail_crosses_hb_domain(void)
{
    rs_net_config c;
    rs_fx_config(&c, 64, 8, 64);
    c.kind = RS_TOPO_RAIL_ONLY;
    rs_net *net = rs_fx_net(&c);
    uint64_t bytes = 3u << 20;
    CU_ASSERT_EQUAL(rs_net_path_links(net, 0, 9), -1);
    rs_fx_send(net, 0, 9, bytes, NULL, NULL, 0); /* domain 0 rail 0 -> domain 1 rail 1 */
    rs_fx_run_idle(net);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.msgs_done, 1);
    CU_ASSERT_EQUAL(st.hb_bytes, bytes);  /* GPU 0 -> GPU 1 over NVSwitch */
    CU_ASSERT_EQUAL(st.nic_bytes, bytes); /* GPU 1 -> GPU 9 over rail 1 */
    rs_time relayed = rs_fx_only_fct(net);
    rs_net_destroy(net);

    c.kind = RS_TOPO_FAT_TREE;
    c.pxn = RS_PXN_OFF; /* directly from gpu0's NIC across the spine */
    net = rs_fx_net(&c);
    rs_fx_send(net, 0, 9, bytes, NULL, NULL, 0);
    rs_fx_run_idle(net);
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.hb_bytes, 0);
    CU_ASSERT_EQUAL(st.nic_bytes, bytes);
    rs_time direct = rs_fx_only_fct(net);
    /* The pipelined relay adds one chunk over NVLink, not a copy of the
     * whole message, and its network leg runs at line rate: chunks go back
     * to back, each posted as the one before leaves the NIC (it used to
     * wait for the one before to arrive: 15% slower on 64 MiB). */
    rs_time chunk_hb = rs_ser_time(c.relay_chunk_bytes, (uint64_t)(c.hb_gbps * 1e9)) + (rs_time)(c.hb_latency_ns * 1000);
    printf("\n  3 MiB 0 -> 9: relayed %.3f us, direct %.3f us, one chunk over NVLink %.3f us\n",
           (double)relayed / 1e6, (double)direct / 1e6, (double)chunk_hb / 1e6);
    CU_ASSERT(relayed > direct);
    CU_ASSERT(relayed < direct + chunk_hb + chunk_hb / 4);
    rs_net_destroy(net);
}

/* A relay's network leg holds at most 8 chunks not yet acknowledged (the
 * relay buffer's slots, NCCL_STEPS): with one-frame chunks it cannot fill
 * the rail (8 frames per round trip), with 512 KiB chunks it runs at line
 * rate. Under bit errors chunks arrive out of order (one overtakes a lost
 * one) and the message still completes once, with every byte delivered,
 * under either recovery. */
static void count_done(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    (void)tag;
    ++*(int *)ctx;
}

static rs_time relay_time(uint64_t chunk, double loss, rs_recovery_kind rec, uint64_t bytes)
{
    rs_net_config c;
    rs_fx_config(&c, 16, 8, 64);
    c.kind = RS_TOPO_RAIL_ONLY;
    c.relay_chunk_bytes = chunk;
    c.loss_rate = loss;
    c.recovery = rec;
    c.seed = 3;
    rs_net *net = rs_fx_net(&c);
    int n = 0;
    CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, 0, 9, bytes, count_done, &n, 0), RS_OK);
    rs_fx_run_idle(net);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(st.msgs_done, 1);
    CU_ASSERT(st.goodput_bytes >= bytes); /* the HB leg's and the rail's, resends not counted twice */
    if (loss > 0)
        CU_ASSERT(st.pkts_retransmitted > 0);
    rs_time t = rs_fx_only_fct(net);
    rs_net_destroy(net);
    return t;
}

static void test_relay_slots_bound_the_network_leg(void)
{
    uint64_t bytes = 4u << 20;
    rs_time big = relay_time(512u << 10, 0, RS_RECOVERY_GBN, bytes);
    rs_time small = relay_time(4096, 0, RS_RECOVERY_GBN, bytes);
    rs_time gbn = relay_time(512u << 10, 2e-3, RS_RECOVERY_GBN, bytes);
    rs_time sel = relay_time(512u << 10, 2e-3, RS_RECOVERY_SELECTIVE, bytes);
    printf("\n  4 MiB relayed: 512 KiB chunks %.3f us, 4 KiB chunks %.3f us; 0.2%% loss: go-back-N %.3f us, "
           "selective %.3f us\n", (double)big / 1e6, (double)small / 1e6, (double)gbn / 1e6, (double)sel / 1e6);
    /* Line rate: 4 MiB in 4 KiB frames at 400 Gb/s is 85.6 us of wire. */
    CU_ASSERT(big < 90000000);
    /* 1,024 one-frame chunks, 8 per round trip of more than 2 us. */
    CU_ASSERT(small > 1024 / 8 * 2000000ull);
    CU_ASSERT(gbn > big && sel > big);
}

/* A relayed (PXN) message has left its source's side when its last
 * chunk's last frame leaves the relay GPU's NIC, as a single flow has
 * when its own last frame leaves: `left` runs once, after the whole
 * message went through the NIC at line rate and about one path latency
 * before `done` (it used to run at the completion, at the destination),
 * at packet level; at flow level when its last byte went into the fluid. */
static void test_relayed_message_leaves_at_the_relays_nic(void)
{
    for (int fid = 0; fid < 2; fid++) {
        rs_net_config c;
        rs_fx_config(&c, 16, 8, 64);
        c.kind = RS_TOPO_RAIL_ONLY;
        c.fidelity = fid ? RS_FIDELITY_FLOW : RS_FIDELITY_PACKET;
        rs_net *net = rs_fx_net(&c);
        uint64_t bytes = 3u << 20; /* 6 chunks of 512 KiB */
        struct posted p = { 0 };
        CU_ASSERT_EQUAL_FATAL(rs_fx_send_full(net, 0, 9, bytes, posted_done, posted_left, &p, 1, NULL,
                                              RS_NET_SERIAL_NEXT), RS_OK);
        rs_fx_run_idle(net);
        CU_ASSERT_EQUAL(p.lefts, 1);
        CU_ASSERT_EQUAL(p.dones, 1);
        rs_time line = rs_ser_time(bytes, 400000000000ULL);
        printf("\n  3 MiB relayed 0 -> 9 (%s): left %.3f us, done %.3f us, line %.3f us", fid ? "flow" : "packet",
               rs_time_to_us(p.left[1]), rs_time_to_us(p.done[1]), rs_time_to_us(line));
        CU_ASSERT(p.left[1] > line);
        CU_ASSERT(p.left[1] < p.done[1]);
        CU_ASSERT(p.done[1] - p.left[1] < 4 * RS_PS_PER_US); /* flow level: the fill is in its latency */
        rs_net_destroy(net);
    }
}

/* -- tallies ------------------------------------------------------------ */

static void test_tally_sums_per_port_and_grows(void)
{
    rs_tally *t;
    CU_ASSERT_EQUAL_FATAL(rs_tally_create(&t), RS_OK);
    /* 1,000 GPUs, far past the first table: every count survives growth. */
    for (uint32_t g = 0; g < 1000; g++) {
        CU_ASSERT_EQUAL(rs_tally_add(t, g * 7, RS_TALLY_NIC_TX, g), RS_OK);
        CU_ASSERT_EQUAL(rs_tally_add(t, g * 7, RS_TALLY_NIC_TX, 1), RS_OK);
        CU_ASSERT_EQUAL(rs_tally_add(t, g * 7, RS_TALLY_HB_RX, 2 * g), RS_OK);
    }
    CU_ASSERT_EQUAL(rs_tally_gpus(t), 1000);
    CU_ASSERT_EQUAL(rs_tally_get(t, 7 * 123, RS_TALLY_NIC_TX), 124);
    CU_ASSERT_EQUAL(rs_tally_get(t, 7 * 123, RS_TALLY_HB_RX), 246);
    CU_ASSERT_EQUAL(rs_tally_get(t, 7 * 123, RS_TALLY_NIC_RX), 0);
    CU_ASSERT_EQUAL(rs_tally_get(t, 5, RS_TALLY_NIC_TX), 0); /* never counted */
    uint64_t mx[RS_TALLY_NPORTS];
    rs_tally_max(t, mx);
    CU_ASSERT_EQUAL(mx[RS_TALLY_NIC_TX], 1000);
    CU_ASSERT_EQUAL(mx[RS_TALLY_NIC_RX], 0);
    CU_ASSERT_EQUAL(mx[RS_TALLY_HB_TX], 0);
    CU_ASSERT_EQUAL(mx[RS_TALLY_HB_RX], 1998);
    CU_ASSERT_EQUAL(rs_tally_add(t, 1, (rs_tally_port)RS_TALLY_NPORTS, 1), RS_EINVAL);
    CU_ASSERT_EQUAL(rs_tally_reserve(t, 5000), RS_OK); /* a rehash keeps every count */
    CU_ASSERT_EQUAL(rs_tally_gpus(t), 1000);
    CU_ASSERT_EQUAL(rs_tally_get(t, 7 * 999, RS_TALLY_HB_RX), 1998);
    rs_tally_clear(t);
    CU_ASSERT_EQUAL(rs_tally_gpus(t), 0);
    CU_ASSERT_EQUAL(rs_tally_get(t, 7 * 123, RS_TALLY_NIC_TX), 0);
    rs_tally_max(t, mx);
    CU_ASSERT_EQUAL(mx[RS_TALLY_NIC_TX] | mx[RS_TALLY_HB_RX], 0);
    rs_tally_destroy(t);
    rs_tally_destroy(NULL);
}

/* One cross-rail message counted where its bytes go: a PXN relay's HB
 * leg at the source and the relay GPU, its network leg at the relay's
 * and the destination's NICs; without PXN the source's own NIC. At both
 * levels (the flow level carries the relay as one flow). */
static void check_tally_cross_rail(rs_topo_kind kind, rs_pxn_mode pxn, rs_fidelity fid)
{
    rs_net_config c;
    rs_fx_config(&c, 64, 8, 64);
    c.kind = kind;
    c.pxn = pxn;
    c.fidelity = fid;
    rs_net *net = rs_fx_net(&c);
    rs_tally *t;
    CU_ASSERT_EQUAL_FATAL(rs_tally_create(&t), RS_OK);
    uint64_t b = 3u << 20;
    CU_ASSERT_EQUAL(rs_fx_send_full(net, 0, 9, b, NULL, NULL, NULL, 0, t, RS_NET_SERIAL_NEXT),
                                    RS_OK); /* domain 0 rail 0 -> domain 1 rail 1 */
    CU_ASSERT_EQUAL(rs_fx_send_full(net, 2, 3, b / 2, NULL, NULL, NULL, 0, t, RS_NET_SERIAL_NEXT),
                                    RS_OK); /* inside domain 0 */
    rs_fx_run_idle(net);
    int relay = pxn != RS_PXN_OFF;
    CU_ASSERT_EQUAL(rs_tally_get(t, 0, RS_TALLY_HB_TX), relay ? b : 0);
    CU_ASSERT_EQUAL(rs_tally_get(t, 1, RS_TALLY_HB_RX), relay ? b : 0);
    CU_ASSERT_EQUAL(rs_tally_get(t, relay ? 1 : 0, RS_TALLY_NIC_TX), b);
    CU_ASSERT_EQUAL(rs_tally_get(t, relay ? 0 : 1, RS_TALLY_NIC_TX), 0);
    CU_ASSERT_EQUAL(rs_tally_get(t, 9, RS_TALLY_NIC_RX), b);
    CU_ASSERT_EQUAL(rs_tally_get(t, 9, RS_TALLY_HB_RX), 0);
    CU_ASSERT_EQUAL(rs_tally_get(t, 2, RS_TALLY_HB_TX), b / 2);
    CU_ASSERT_EQUAL(rs_tally_get(t, 3, RS_TALLY_HB_RX), b / 2);
    CU_ASSERT_EQUAL(rs_tally_gpus(t), relay ? 5 : 4);
    /* The bound is the NIC's: 768 full frames of 4096 + 82 wire bytes at
     * 20 ps per byte, and no run beats it. */
    rs_time bound = rs_net_tally_bound(net, t);
    CU_ASSERT_EQUAL(bound, 768ull * (4096 + RS_WIRE_ROCE) * 20);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT(st.last_activity >= bound);
    rs_tally_destroy(t);
    rs_net_destroy(net);
}

static void test_tally_counts_relay_legs_where_they_go(void)
{
    check_tally_cross_rail(RS_TOPO_RAIL_ONLY, RS_PXN_AUTO, RS_FIDELITY_PACKET);
    check_tally_cross_rail(RS_TOPO_RAIL_ONLY, RS_PXN_AUTO, RS_FIDELITY_FLOW);
    check_tally_cross_rail(RS_TOPO_FAT_TREE, RS_PXN_AUTO, RS_FIDELITY_PACKET);
    check_tally_cross_rail(RS_TOPO_FAT_TREE, RS_PXN_OFF, RS_FIDELITY_PACKET);
    check_tally_cross_rail(RS_TOPO_FAT_TREE, RS_PXN_OFF, RS_FIDELITY_FLOW);
}

/* The HB port's payload rate: hb_mtu units plus a 16-byte header at
 * hb_gbps, rounded up once over the bytes. */
static void test_tally_bound_of_hb_bytes(void)
{
    rs_net_config c;
    rs_fx_config(&c, 16, 8, 64);
    rs_net *net = rs_fx_net(&c);
    rs_tally *t;
    CU_ASSERT_EQUAL_FATAL(rs_tally_create(&t), RS_OK);
    CU_ASSERT_EQUAL(rs_net_tally_bound(net, t), 0);
    CU_ASSERT_EQUAL(rs_tally_add(t, 4, RS_TALLY_HB_RX, 65536u * 100), RS_OK);
    /* 100 units of 65,552 wire bytes at 3600 Gb/s: 6,555,200 x 8 / 3.6 ps. */
    CU_ASSERT_EQUAL(rs_net_tally_bound(net, t), (6555200ull * 8 * 10 + 35) / 36);
    rs_tally_destroy(t);
    rs_net_destroy(net);
}



/* -- completion-time statistics ------------------------------------------ */

/* 3,000 messages of 1 B to 200 kB between random GPUs of 16, run to idle. */
static void send_random(rs_net *net)
{
    rs_rng r;
    rs_rng_init(&r, 7, 0, 0);
    for (uint32_t i = 0; i < 3000; i++) {
        uint32_t a = (uint32_t)(rs_rng_next(&r) % 16), b = (uint32_t)(rs_rng_next(&r) % 16);
        CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, a, b, 1 + rs_rng_next(&r) % 200000, NULL, NULL, i), RS_OK);
    }
    rs_fx_run_idle(net);
}

static void fct_run_records(size_t keep, int records, rs_net_fct *f, rs_net_msg_time *first, size_t *nkept)
{
    rs_net_config c;
    rs_fx_config(&c, 16, 1, 8);
    c.transport = RS_TRANSPORT_IDEAL;
    c.msg_records = records;
    rs_net *net = rs_fx_net(&c);
    net->msg_times_keep = keep;
    send_random(net);
    CU_ASSERT_EQUAL(rs_net_fct_get(net, f), RS_OK);
    const rs_net_msg_time *t = rs_net_msg_times(net, nkept);
    if (*nkept) /* none without records (t is NULL then) */
        memcpy(first, t, (*nkept < 100 ? *nkept : 100) * sizeof *t);
    rs_net_destroy(net);
}

static void fct_run(size_t keep, rs_net_fct *f, rs_net_msg_time *first, size_t *nkept)
{
    fct_run_records(keep, 1, f, first, nkept);
}

static int cmp_ps(const void *a, const void *b)
{
    rs_time x = *(const rs_time *)a, y = *(const rs_time *)b;
    return x < y ? -1 : x > y;
}

/* The exact percentiles are selected in place from the kept completion
 * times: the nearest-rank values of the sorted records, asked for twice
 * (the second selection starts from the first's order). Without records
 * (msg_records 0, the command's setting) rs_net_msg_times is empty and
 * every statistic is the same. */
static void test_fct_percentiles_exact_with_and_without_records(void)
{
    rs_net_fct f1, f2, f0;
    rs_net_msg_time none[100];
    size_t n, n0;
    rs_net_config c;
    rs_fx_config(&c, 16, 1, 8);
    c.transport = RS_TRANSPORT_IDEAL;
    rs_net *net = rs_fx_net(&c);
    send_random(net);
    const rs_net_msg_time *t = rs_net_msg_times(net, &n);
    CU_ASSERT_EQUAL_FATAL(n, 3000);
    rs_time *v = malloc(n * sizeof *v);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    for (size_t i = 0; i < n; i++)
        v[i] = t[i].end - t[i].start;
    qsort(v, n, sizeof *v, cmp_ps);
    CU_ASSERT_EQUAL(rs_net_fct_get(net, &f1), RS_OK);
    CU_ASSERT_EQUAL(rs_net_fct_get(net, &f2), RS_OK);
    CU_ASSERT_EQUAL(f1.exact, 1);
    CU_ASSERT_EQUAL(f1.p50, v[1500 - 1]); /* nearest rank: ceil(0.5 x 3000) */
    CU_ASSERT_EQUAL(f1.p99, v[2970 - 1]);
    CU_ASSERT_EQUAL(f1.min, v[0]);
    CU_ASSERT_EQUAL(f1.max, v[n - 1]);
    CU_ASSERT(v[0] < v[1499] && v[1499] < v[2969]);
    CU_ASSERT_EQUAL(memcmp(&f1, &f2, sizeof f1), 0);
    free(v);
    rs_net_destroy(net);
    fct_run_records(RS_NET_MSG_TIMES_KEEP, 0, &f0, none, &n0);
    CU_ASSERT_EQUAL(n0, 0);
    CU_ASSERT_EQUAL(memcmp(&f0, &f1, sizeof f1), 0);
}

/* Past the kept completion times the summary comes from a histogram: n,
 * min, mean and max stay exact, the percentiles within 0.1%, and the kept
 * times are the first ones. */
static void test_fct_summary_beyond_kept_times(void)
{
    rs_net_fct all, few;
    rs_net_msg_time a[100], b[100];
    size_t na, nb;
    fct_run(RS_NET_MSG_TIMES_KEEP, &all, a, &na);
    fct_run(100, &few, b, &nb);
    CU_ASSERT_EQUAL(na, 3000);
    CU_ASSERT_EQUAL(nb, 100);
    CU_ASSERT_EQUAL(memcmp(a, b, sizeof a), 0);
    CU_ASSERT_EQUAL(all.exact, 1);
    CU_ASSERT_EQUAL(few.exact, 0);
    CU_ASSERT_EQUAL(all.n, 3000);
    CU_ASSERT_EQUAL(few.n, all.n);
    CU_ASSERT_EQUAL(few.min, all.min);
    CU_ASSERT_EQUAL(few.mean, all.mean);
    CU_ASSERT_EQUAL(few.max, all.max);
    CU_ASSERT(all.min < all.p50 && all.p50 < all.p99 && all.p99 < all.max);
    CU_ASSERT(llabs((long long)few.p50 - (long long)all.p50) <= (long long)(all.p50 / 1000));
    CU_ASSERT(llabs((long long)few.p99 - (long long)all.p99) <= (long long)(all.p99 / 1000));
}

/* A message whose flow cannot start (more than 2^31 packets) is not
 * sent at all: no record, no statistics, nothing for a later route change
 * to fail over (it used to be left half-made and crash a failover). */
static void noop_done(void *ctx, rs_net *net, uint64_t tag)
{
    (void)ctx;
    (void)net;
    (void)tag;
}

static void test_send_that_cannot_start_leaves_nothing(void)
{
    rs_net_config c;
    rs_fx_config(&c, 16, 4, 8);
    rs_net *net = rs_fx_net(&c);
    uint64_t huge = (2ull << 30) * 4096 + 1;
    CU_ASSERT_NOT_EQUAL(rs_fx_send(net, 1, 5, huge, noop_done, NULL, 1), RS_OK); /* one flow on rail 1 */
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.msgs, 0);
    CU_ASSERT_EQUAL(st.msg_bytes, 0);
    CU_ASSERT_EQUAL(rs_fx_send(net, 1, 5, 100000, noop_done, NULL, 2), RS_OK);
    rs_fx_run_idle(net);
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.msgs, 1);
    CU_ASSERT_EQUAL(st.msgs_done, 1);
    rs_net_destroy(net);
}

/* -- callbacks named by index (rs_net_cb_register, rs_net_cb_reserve) ----- */

typedef struct cb_seen {
    uint64_t arg;
    int calls, resolves;
    uint32_t resolved;
    rs_net *net;
} cb_seen;

static void cb_note(void *ctx, rs_net *net, uint64_t arg)
{
    (void)net;
    cb_seen *s = ctx;
    s->arg = arg;
    s->calls++;
}

static void cb_bind(void *ctx, rs_net *net, uint32_t index)
{
    cb_seen *s = ctx;
    s->resolves++;
    s->resolved = index;
    CU_ASSERT_EQUAL(rs_net_cb_set(net, index, cb_note, s), RS_OK);
}

/* Several jobs on one network: a GPU is one job's; counting and serial
 * spaces start once, before any flow; a job's reserved serials come from
 * its own space; each job's data bytes are counted on the ports it
 * crosses (every hop carries at least its payload). */
static uint64_t job_bytes(const rs_net *net, uint32_t job)
{
    uint64_t b = 0;
    for (uint32_t p = 0; p < rs_net_port_count(net); p++)
        b += rs_net_job_tx_bytes(net, p, job);
    return b;
}

static void test_jobs_marked_counted_and_serialled_apart(void)
{
    rs_net_config c;
    rs_fx_config(&c, 16, 8, 8);
    rs_net *net = rs_fx_net(&c);
    rs_err err;
    const uint32_t a[] = { 0, 1, 8 }, b[] = { 2, 3, 9 }, clash[] = { 4, 8 };
    CU_ASSERT_EQUAL(rs_net_jobs_count(net, 2, &err), RS_EINVAL); /* no job yet */
    CU_ASSERT_EQUAL(rs_net_jobs_serials(net, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_net_jobs_serials(net, &err), RS_EINVAL);
    CU_ASSERT_EQUAL_FATAL(rs_net_set_job(net, 1, a, 3, &err), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_net_set_job(net, 2, b, 3, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_net_set_job(net, 3, clash, 2, &err), RS_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "GPU 8 is job 1's"));
    CU_ASSERT_EQUAL(rs_net_set_job(net, 0, clash, 1, &err), RS_EINVAL);
    CU_ASSERT_EQUAL_FATAL(rs_net_jobs_count(net, 2, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_net_jobs_count(net, 2, &err), RS_EINVAL);
    /* Job 2's reservation comes from its own space (set_job named it last). */
    CU_ASSERT_EQUAL(rs_net_serials_reserve(net, 5), (uint64_t)2 << RS_NET_JOB_SERIAL_SHIFT);
    rs_net_msg m;
    rs_net_msg_init(&m);
    m.src = 1, m.dst = 8, m.bytes = 40000; /* job 1, across the network */
    CU_ASSERT_EQUAL_FATAL(rs_net_send(net, &m), RS_OK);
    rs_net_msg_init(&m);
    m.src = 2, m.dst = 9, m.bytes = 20000; /* job 2 */
    CU_ASSERT_EQUAL_FATAL(rs_net_send(net, &m), RS_OK);
    rs_fx_run_idle(net);
    uint64_t b1 = job_bytes(net, 1), b2 = job_bytes(net, 2);
    CU_ASSERT(b1 >= 3 * 40000 && b1 < 4 * 40000 * 11 / 10);
    CU_ASSERT(b2 >= 3 * 20000 && b2 < 4 * 20000 * 11 / 10);
    CU_ASSERT_EQUAL(rs_net_job_tx_bytes(net, 0, 3), 0);
    CU_ASSERT_EQUAL(rs_net_job_tx_bytes(net, rs_net_port_count(net), 1), 0);
    rs_net_destroy(net);
}

static void test_callback_indices_found_reserved_and_resolved(void)
{
    rs_net_config c;
    rs_fx_config(&c, 4, 1, 8);
    rs_net *net = rs_fx_net(&c);
    /* Many registrations: each found by its (fn, ctx), the latest of a pair. */
    static char ctxs[300];
    uint32_t idx[300];
    for (int i = 0; i < 300; i++)
        CU_ASSERT_EQUAL_FATAL(rs_net_cb_register(net, cb_note, &ctxs[i], &idx[i]), RS_OK);
    for (int i = 0; i < 300; i++)
        CU_ASSERT_EQUAL(rs_net_cb_find(net, cb_note, &ctxs[i]), idx[i]);
    uint32_t again, base, next;
    CU_ASSERT_EQUAL_FATAL(rs_net_cb_register(net, cb_note, &ctxs[7], &again), RS_OK);
    CU_ASSERT_EQUAL(rs_net_cb_find(net, cb_note, &ctxs[7]), again);
    CU_ASSERT_EQUAL(rs_net_cb_find(net, cb_note, &c), RS_NONE);
    /* Reserved: unset until bound; each reservation with its own
     * resolver (a replay per job), none without one. */
    cb_seen seen = { 0 }, seen2 = { 0 };
    CU_ASSERT_EQUAL_FATAL(rs_net_cb_reserve(net, 4, cb_bind, &seen, &base), RS_OK);
    CU_ASSERT_EQUAL_FATAL(base, again + 1);
    CU_ASSERT_EQUAL(rs_net_cb_reserve(net, 2, NULL, NULL, &next), RS_EINVAL);
    CU_ASSERT_EQUAL(rs_net_cb_reserve(net, 2, cb_bind, &seen2, &next), RS_OK);
    CU_ASSERT_EQUAL(next, base + 4);
    CU_ASSERT_EQUAL(rs_net_cb_set(net, base + 6, cb_note, &seen), RS_EINVAL);
    CU_ASSERT_EQUAL(rs_net_cb_find(net, cb_note, &seen), RS_NONE);
    /* A timer naming an unset index (as one shipped from another process
     * does) has it bound first, then runs. */
    rs_sim *sim = rs_net_sim(net);
    rs_net_timer_at_key(net, 1000, rs_sim_take_key(sim, net->nodes[1].entity), base + 1, 42);
    CU_ASSERT_EQUAL(seen.resolves, 1);
    CU_ASSERT_EQUAL(seen.resolved, base + 1);
    CU_ASSERT_EQUAL(rs_net_cb_find(net, cb_note, &seen), base + 1);
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    CU_ASSERT_EQUAL(seen.calls, 1);
    CU_ASSERT_EQUAL(seen.arg, 42);
    /* Bound already: no second resolve; unbound: not found. */
    rs_net_timer_at_key(net, 2000, rs_sim_take_key(sim, net->nodes[1].entity), base + 1, 43);
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    CU_ASSERT_EQUAL(seen.resolves, 1);
    CU_ASSERT_EQUAL(seen.arg, 43);
    CU_ASSERT_EQUAL(rs_net_cb_set(net, base + 1, NULL, NULL), RS_OK);
    CU_ASSERT_EQUAL(rs_net_cb_find(net, cb_note, &seen), RS_NONE);
    /* An index of the second reservation is bound by its own resolver. */
    rs_net_timer_at_key(net, 3000, rs_sim_take_key(sim, net->nodes[1].entity), next + 1, 44);
    CU_ASSERT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    CU_ASSERT_EQUAL(seen.resolves, 1);
    CU_ASSERT_EQUAL(seen2.resolves, 1);
    CU_ASSERT_EQUAL(seen2.resolved, next + 1);
    CU_ASSERT_EQUAL(seen2.arg, 44);
    for (int i = 0; i < 300; i += 37)
        CU_ASSERT_EQUAL(rs_net_cb_find(net, cb_note, &ctxs[i]), i == 7 ? again : idx[i]);
    CU_ASSERT_EQUAL(rs_net_gpu_local(net, 0), 1);
    CU_ASSERT_EQUAL(rs_net_gpu_local(net, 4), 0);
    rs_net_destroy(net);
}

static const rs_cu_test fabric_tests[] = {
    RS_CU_TEST(test_single_packet_one_switch_exact),
    RS_CU_TEST(test_multihop_message_exact_ideal),
    RS_CU_TEST(test_multihop_message_exact_roce),
    RS_CU_TEST(test_multihop_message_exact_slow_nic),
    RS_CU_TEST(test_hb_transfer_exact_with_rounding),
    RS_CU_TEST(test_send_to_self_completes_at_once),
    RS_CU_TEST(test_gpu_timer_is_an_event_of_its_node),
    RS_CU_TEST(test_posted_send_leaves_then_the_next_follows_back_to_back),
    RS_CU_TEST(test_flow_records_follow_in_flight_gbn),
    RS_CU_TEST(test_flow_records_follow_in_flight_lossy_gbn),
    RS_CU_TEST(test_flow_records_follow_in_flight_lossy_selective),
    RS_CU_TEST(test_two_flows_share_bottleneck_fairly),
    RS_CU_TEST(test_job_priority_is_served_first),
    RS_CU_TEST(test_spraying_permutation_runs_near_line_rate),
    RS_CU_TEST(test_flow_hash_permutation_shows_collisions),
    RS_CU_TEST(test_rail_only_cross_rail_crosses_hb_domain),
};

static const rs_cu_test routing_tests[] = {
    RS_CU_TEST(test_flow_hash_keeps_a_message_on_one_uplink),
    RS_CU_TEST(test_adaptive_spreads_a_message_over_every_uplink),
    RS_CU_TEST(test_flowlet_sticks_within_the_gap_and_moves_past_it),
    RS_CU_TEST(test_adaptive_avoids_the_queued_uplink),
};

static const rs_cu_test fct_tests[] = {
    RS_CU_TEST(test_fct_summary_beyond_kept_times),
    RS_CU_TEST(test_fct_percentiles_exact_with_and_without_records),
    RS_CU_TEST(test_send_that_cannot_start_leaves_nothing),
};

static const rs_cu_test tally_tests[] = {
    RS_CU_TEST(test_tally_sums_per_port_and_grows),
    RS_CU_TEST(test_relay_slots_bound_the_network_leg),
    RS_CU_TEST(test_relayed_message_leaves_at_the_relays_nic),
    RS_CU_TEST(test_tally_counts_relay_legs_where_they_go),
    RS_CU_TEST(test_tally_bound_of_hb_bytes),
};

static const rs_cu_test callbacks_tests[] = {
    RS_CU_TEST(test_callback_indices_found_reserved_and_resolved),
    RS_CU_TEST(test_jobs_marked_counted_and_serialled_apart),
};

static void register_suites(void)
{
    RS_CU_SUITE("fabric", fabric_tests);
    RS_CU_SUITE("routing", routing_tests);
    RS_CU_SUITE("fct", fct_tests);
    RS_CU_SUITE("tally", tally_tests);
    RS_CU_SUITE("callbacks", callbacks_tests);
}

int main(void) { return rs_cu_run(register_suites); }
