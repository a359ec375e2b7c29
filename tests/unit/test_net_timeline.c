/*
 * test_net_timeline.c - the network's timeline records (models/net_timeline.c): written
 * with the engine's writer, read back with the analysis reader, checked
 * against the network's own counters. PFC records count as the ports'
 * pfc_sent, drop records add up to pkts_dropped, flow records are
 * rs_net_msg_times, ECN records add up to the marks and CNPs, the
 * bottleneck's samples show it busy, masks switch kinds off, and a run
 * gives the same results with and without a timeline.
 *
 * Files go to a fresh mkdtemp directory removed at the end.
 */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cu_main.h"
#include "fixture_net.h"
#include "net.h"
#include "netint.h" /* leaf_port, to find the incast's bottleneck */
#include "timeline.h"
#include "timeline_read.h"

/* -- files ---------------------------------------------------------------- */

static char dir[64];

static const char *tpath(const char *name)
{
    static char buf[160];
    if (!dir[0]) {
        strcpy(dir, "/tmp/rs_net_tl_XXXXXX");
        if (!mkdtemp(dir))
            dir[0] = 0;
    }
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    return buf;
}

static void remove_dir(void)
{
    if (!dir[0])
        return;
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

/* -- what a timeline holds, read back ------------------------------------ */

typedef struct tl_read {
    uint64_t count[16];            /* records per kind */
    uint32_t nports;
    char (*port_name)[48];         /* [nports]: name record of each port, "" if none */
    int unnamed_use;               /* a record used a port before naming it */
    rs_tlread_rec *pfc, *drop, *flow, *sample, *ecn;
    size_t npfc, ndrop, nflow, nsample, necn;
} tl_read;

static void push(rs_tlread_rec **a, size_t *n, const rs_tlread_rec *x)
{
    *a = realloc(*a, (*n + 1) * sizeof **a);
    (*a)[(*n)++] = *x;
}

static void use_port(tl_read *t, uint32_t port)
{
    if (port >= t->nports || !t->port_name[port][0])
        t->unnamed_use = 1;
}

static void read_tl(const char *path, uint32_t nports, tl_read *t)
{
    memset(t, 0, sizeof *t);
    t->nports = nports;
    t->port_name = calloc(nports, sizeof *t->port_name);
    rs_tlread *r = NULL;
    rs_an_err err = { 0 };
    int rc = rs_tlread_open(path, &r, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, RS_AN_OK);
    rs_tlread_rec x;
    while ((rc = rs_tlread_next(r, &x, &err)) == 1) {
        t->count[x.kind & 15]++;
        switch (x.kind) {
        case RS_TL_NAME:
            if (x.u.name.space == RS_TL_NS_PORT && x.u.name.id < nports) {
                CU_ASSERT_EQUAL(t->port_name[x.u.name.id][0], 0); /* once per port */
                snprintf(t->port_name[x.u.name.id], 48, "%s", x.u.name.name);
            }
            break;
        case RS_TL_PFC:
            use_port(t, x.u.pfc.port);
            push(&t->pfc, &t->npfc, &x);
            break;
        case RS_TL_DROP:
            use_port(t, x.u.drop.port);
            x.u.drop.reason = NULL; /* owned by the reader */
            push(&t->drop, &t->ndrop, &x);
            break;
        case RS_TL_FLOW:
            push(&t->flow, &t->nflow, &x);
            break;
        case RS_TL_SAMPLE:
            use_port(t, x.u.sample.port);
            push(&t->sample, &t->nsample, &x);
            break;
        case RS_TL_ECN:
            use_port(t, x.u.ecn.port);
            push(&t->ecn, &t->necn, &x);
            break;
        default:
            break;
        }
    }
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(rs_tlread_complete(r));
    rs_tlread_close(r);
}

static void free_tl(tl_read *t)
{
    free(t->port_name);
    free(t->pfc);
    free(t->drop);
    free(t->flow);
    free(t->sample);
    free(t->ecn);
}

/* -- networks ------------------------------------------------------------- */

static rs_timeline *open_tl(const char *name, uint32_t mask)
{
    rs_timeline_header h = { 0 };
    rs_timeline *tl = NULL;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_timeline_create(tpath(name), &h, &tl, &err), RS_OK);
    rs_timeline_set_enabled(tl, mask);
    return tl;
}

static void close_tl(rs_net *net, rs_timeline *tl)
{
    rs_err err;
    rs_net_timeline_stop(net);
    CU_ASSERT_EQUAL(rs_timeline_close(tl, 0, &err), RS_OK);
}

static void send_from(void *ctx, rs_net *net, uint64_t src)
{
    uint64_t bytes = *(const uint64_t *)ctx;
    CU_ASSERT_EQUAL(rs_fx_send(net, (uint32_t)src, 0, bytes, NULL, NULL, src), RS_OK);
}

typedef enum { INCAST_PFC, INCAST_DCQCN, INCAST_LOSSY } incast_kind;

/* 8 -> 1 incast on one switch (9 GPUs, radix 16), run to idle, with a
 * timeline at `name` (NULL: none) of the kinds in mask, sampled every
 * interval_ps. Returns the network (to be destroyed by the caller). */
static uint64_t incast_bytes = 1u << 20;
static rs_fidelity incast_fidelity = RS_FIDELITY_PACKET;
static rs_net *incast(incast_kind kind, const char *name, uint32_t mask, rs_time interval_ps)
{
    rs_net_config c;
    rs_fx_config(&c, 9, 1, 16);
    c.fidelity = incast_fidelity;
    if (kind == INCAST_PFC) {
        c.cc = RS_CC_NONE;
        c.buffer_bytes = 256u << 10;
    } else if (kind == INCAST_LOSSY) {
        c.pfc = 0;
        c.buffer_bytes = 64u << 10;
        c.ecn = 0;
    }
    rs_net *net = rs_fx_net(&c);
    rs_timeline *tl = name ? open_tl(name, mask) : NULL;
    if (tl) {
        rs_err err;
        CU_ASSERT_EQUAL_FATAL(rs_net_timeline_start(net, tl, interval_ps, &err), RS_OK);
    }
    for (uint32_t s = 1; s <= 8; s++) {
        if (kind == INCAST_LOSSY) /* staggered, as in test_net's lossy incast */
            rs_net_at(net, s * 37000, send_from, &incast_bytes, s);
        else
            rs_fx_send(net, s, 0, incast_bytes, NULL, NULL, s);
    }
    CU_ASSERT_EQUAL_FATAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    if (tl)
        close_tl(net, tl);
    return net;
}

/* -- tests ---------------------------------------------------------------- */

static void test_pfc_records_count_as_ports_pfc_sent(void)
{
    rs_net *net = incast(INCAST_PFC, "pfc.tl", RS_TL_ALL, 1000000);
    tl_read t;
    read_tl(tpath("pfc.tl"), rs_net_port_count(net), &t);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT(st.pfc_pauses_sent > 0);
    CU_ASSERT_EQUAL(t.npfc, st.pfc_pauses_sent + st.pfc_resumes_sent);
    uint64_t pauses = 0, last = 0;
    for (size_t i = 0; i < t.npfc; i++) {
        pauses += t.pfc[i].u.pfc.pause;
        CU_ASSERT_EQUAL(t.pfc[i].u.pfc.prio_mask, 1u << net->cfg.prio);
        CU_ASSERT(t.pfc[i].u.pfc.time_ps >= last); /* written as they happen */
        last = t.pfc[i].u.pfc.time_ps;
    }
    CU_ASSERT_EQUAL(pauses, st.pfc_pauses_sent);
    for (uint32_t p = 0; p < rs_net_port_count(net); p++) {
        rs_net_port_info pi;
        rs_net_port_info_get(net, p, &pi);
        uint64_t n = 0;
        for (size_t i = 0; i < t.npfc; i++)
            n += t.pfc[i].u.pfc.port == p;
        CU_ASSERT_EQUAL(n, pi.pfc_sent);
        if (n)
            CU_ASSERT_STRING_EQUAL(t.port_name[p], pi.name);
    }
    CU_ASSERT_FALSE(t.unnamed_use);
    free_tl(&t);
    rs_net_destroy(net);
}

static void test_flow_records_are_msg_times(void)
{
    rs_net *net = incast(INCAST_PFC, "flow.tl", RS_TL_ALL, 1000000);
    tl_read t;
    read_tl(tpath("flow.tl"), rs_net_port_count(net), &t);
    size_t n;
    const rs_net_msg_time *mt = rs_net_msg_times(net, &n);
    CU_ASSERT_EQUAL_FATAL(t.nflow, n);
    CU_ASSERT_EQUAL(n, 8);
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT_EQUAL(t.flow[i].u.flow.src, mt[i].src);
        CU_ASSERT_EQUAL(t.flow[i].u.flow.dst, mt[i].dst);
        CU_ASSERT_EQUAL(t.flow[i].u.flow.bytes, mt[i].bytes);
        CU_ASSERT_EQUAL(t.flow[i].u.flow.start_ps, mt[i].start);
        CU_ASSERT_EQUAL(t.flow[i].u.flow.end_ps, mt[i].end);
    }
    free_tl(&t);
    rs_net_destroy(net);
}

static void test_bottleneck_samples_show_it_busy(void)
{
    const rs_time us = 1000000;
    rs_net *net = incast(INCAST_PFC, "sample.tl", RS_TL_ALL, us);
    tl_read t;
    read_tl(tpath("sample.tl"), rs_net_port_count(net), &t);
    uint32_t bn = net->leaf_port[0]; /* the leaf's port toward the receiver */
    rs_net_port_info pi;
    rs_net_port_info_get(net, bn, &pi);
    CU_ASSERT_STRING_EQUAL(t.port_name[bn], pi.name);
    /* The bottleneck's samples: every tick (a multiple of 1 us) from the
     * first data to the end, busy throughout. */
    double sum = 0;
    size_t nb = 0, first = SIZE_MAX, lastb = 0;
    uint64_t prev_tx = 0, maxq = 0;
    for (size_t i = 0; i < t.nsample; i++) {
        const rs_tlread_rec *x = &t.sample[i];
        CU_ASSERT_EQUAL(x->u.sample.time_ps % us, 0);
        CU_ASSERT(x->u.sample.util >= 0 && x->u.sample.util <= 1);
        if (x->u.sample.port != bn)
            continue;
        CU_ASSERT(x->u.sample.tx_bytes >= prev_tx);
        CU_ASSERT(x->u.sample.tx_bytes <= pi.tx_bytes);
        prev_tx = x->u.sample.tx_bytes;
        if (x->u.sample.queue_bytes > maxq)
            maxq = x->u.sample.queue_bytes;
        if (first == SIZE_MAX)
            first = i;
        lastb = i;
    }
    CU_ASSERT_FATAL(first != SIZE_MAX);
    CU_ASSERT_EQUAL(prev_tx, pi.tx_bytes); /* the last sample saw it all */
    CU_ASSERT(maxq > 0);
    /* Mean utilisation over the busy period, the first and last (partial)
     * intervals left out. */
    for (size_t i = first; i <= lastb; i++) {
        const rs_tlread_rec *x = &t.sample[i];
        if (x->u.sample.port != bn || i == first || i == lastb)
            continue;
        sum += x->u.sample.util;
        nb++;
    }
    CU_ASSERT(nb > 100); /* 8 MiB at 400 Gb/s: ~170 us */
    double mean = nb ? sum / (double)nb : 0;
    CU_ASSERT(mean > 0.97);
    CU_ASSERT(mean <= 1.0);
    /* The utilisations add up to the bytes: sum(util) x line rate x 1 us
     * equals what the port sent, up to the two partial intervals. */
    double bytes_per_us = 400e9 / 8 * 1e-6;
    CU_ASSERT(sum * bytes_per_us <= (double)pi.tx_bytes);
    CU_ASSERT(sum * bytes_per_us >= (double)pi.tx_bytes - 2 * bytes_per_us);
    CU_ASSERT_FALSE(t.unnamed_use);
    free_tl(&t);
    rs_net_destroy(net);
}

/* At flow level the samples come from the rates: the incast's 8 flows
 * share the receiver's port at 50 Gb/s each, so every whole interval of
 * the bottleneck is busy to within a byte of rounding, and its last
 * sample has all it carried (its flows' wire bytes, up to a byte per flow).
 * The senders' NIC ports carry 50 Gb/s: utilisation 1/8. */
static void test_flow_level_samples_come_from_rates(void)
{
    const rs_time us = 1000000;
    incast_fidelity = RS_FIDELITY_FLOW;
    rs_net *net = incast(INCAST_PFC, "fsample.tl", RS_TL_ALL, us);
    incast_fidelity = RS_FIDELITY_PACKET;
    tl_read t;
    read_tl(tpath("fsample.tl"), rs_net_port_count(net), &t);
    const uint32_t port[2] = { net->leaf_port[0], net->nodes[1].port_base }; /* bottleneck, a sender's NIC */
    const double util[2] = { 1.0, 0.125 };
    for (int k = 0; k < 2; k++) {
        rs_net_port_info pi;
        rs_net_port_info_get(net, port[k], &pi);
        size_t n = 0, first = SIZE_MAX, last = 0;
        uint64_t prev_tx = 0;
        for (size_t i = 0; i < t.nsample; i++) {
            const rs_tlread_rec *x = &t.sample[i];
            CU_ASSERT(x->u.sample.util >= 0 && x->u.sample.util <= 1);
            CU_ASSERT_EQUAL(x->u.sample.queue_bytes, 0);
            if (x->u.sample.port != port[k])
                continue;
            CU_ASSERT(x->u.sample.tx_bytes >= prev_tx);
            prev_tx = x->u.sample.tx_bytes;
            if (first == SIZE_MAX)
                first = i;
            last = i;
        }
        CU_ASSERT_FATAL(first != SIZE_MAX);
        /* All it carried, less or more the frames round-robin tails hand
         * between the group's flows (fluid.c): at most 7 of 4194 bytes. */
        CU_ASSERT(prev_tx + 7 * 4194 >= pi.tx_bytes && prev_tx <= pi.tx_bytes + 7 * 4194);
        if (k == 0)
            CU_ASSERT(prev_tx + 8 >= pi.tx_bytes && prev_tx <= pi.tx_bytes + 8);
        /* Whole intervals (the first and last are partial): the rate, to a
         * byte of rounding (2e-5 of 50 KB). */
        for (size_t i = first + 1; i < last; i++) {
            const rs_tlread_rec *x = &t.sample[i];
            if (x->u.sample.port != port[k])
                continue;
            CU_ASSERT(x->u.sample.util > util[k] - 1e-4 && x->u.sample.util < util[k] + 1e-4);
            n++;
        }
        CU_ASSERT(n > 100); /* 8 MiB at 400 Gb/s: ~170 us */
    }
    CU_ASSERT_FALSE(t.unnamed_use);
    free_tl(&t);
    rs_net_destroy(net);
}

static void test_drop_records_add_up_to_pkts_dropped(void)
{
    rs_net *net = incast(INCAST_LOSSY, "drop.tl", RS_TL_ALL, 1000000);
    tl_read t;
    read_tl(tpath("drop.tl"), rs_net_port_count(net), &t);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT(st.pkts_dropped > 0);
    uint64_t pkts = 0;
    for (size_t i = 0; i < t.ndrop; i++) {
        pkts += t.drop[i].u.drop.packets;
        CU_ASSERT(t.drop[i].u.drop.bytes > 0);
    }
    CU_ASSERT_EQUAL(pkts, st.pkts_dropped);
    for (uint32_t p = 0; p < rs_net_port_count(net); p++) {
        rs_net_port_info pi;
        rs_net_port_info_get(net, p, &pi);
        uint64_t n = 0;
        for (size_t i = 0; i < t.ndrop; i++)
            if (t.drop[i].u.drop.port == p)
                n += t.drop[i].u.drop.packets;
        CU_ASSERT_EQUAL(n, pi.drops);
    }
    CU_ASSERT_EQUAL(t.npfc, 0);
    CU_ASSERT_FALSE(t.unnamed_use);
    free_tl(&t);
    rs_net_destroy(net);
}

static void test_drop_reason_is_buffer_for_tail_drop(void)
{
    rs_net *net = incast(INCAST_LOSSY, "reason.tl", RS_TL_MASK(RS_TL_DROP), 0);
    rs_tlread *r = NULL;
    rs_an_err err = { 0 };
    CU_ASSERT_EQUAL_FATAL(rs_tlread_open(tpath("reason.tl"), &r, &err), RS_AN_OK);
    rs_tlread_rec x;
    uint64_t n = 0;
    while (rs_tlread_next(r, &x, &err) == 1)
        if (x.kind == RS_TL_DROP) {
            CU_ASSERT_STRING_EQUAL(x.u.drop.reason, "buffer");
            n++;
        }
    CU_ASSERT(n > 0);
    rs_tlread_close(r);
    rs_net_destroy(net);
}

static void test_ecn_records_add_up_to_marks_and_cnps(void)
{
    rs_net *net = incast(INCAST_DCQCN, "ecn.tl", RS_TL_ALL, 1000000);
    tl_read t;
    read_tl(tpath("ecn.tl"), rs_net_port_count(net), &t);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT(st.ecn_marked > 0);
    CU_ASSERT(st.cnps_sent > 0);
    uint64_t marks = 0, cnps = 0;
    for (size_t i = 0; i < t.necn; i++) {
        CU_ASSERT(t.ecn[i].u.ecn.count > 0);
        if (t.ecn[i].u.ecn.what == RS_TL_ECN_MARK)
            marks += t.ecn[i].u.ecn.count;
        else if (t.ecn[i].u.ecn.what == RS_TL_ECN_CNP)
            cnps += t.ecn[i].u.ecn.count;
    }
    CU_ASSERT_EQUAL(marks, st.ecn_marked);
    CU_ASSERT_EQUAL(cnps, st.cnps_sent);
    for (uint32_t p = 0; p < rs_net_port_count(net); p++) {
        rs_net_port_info pi;
        rs_net_port_info_get(net, p, &pi);
        uint64_t m = 0, c = 0;
        for (size_t i = 0; i < t.necn; i++)
            if (t.ecn[i].u.ecn.port == p) {
                m += t.ecn[i].u.ecn.what == RS_TL_ECN_MARK ? t.ecn[i].u.ecn.count : 0;
                c += t.ecn[i].u.ecn.what == RS_TL_ECN_CNP ? t.ecn[i].u.ecn.count : 0;
            }
        CU_ASSERT_EQUAL(m, pi.ecn_marked);
        /* CNPs where they are sent: NIC ports (switches count the ones
         * they forward in cnp_sent too). */
        CU_ASSERT_EQUAL(c, net->ports[p].kind == RS_PORT_NIC ? pi.cnp_sent : 0);
    }
    CU_ASSERT_FALSE(t.unnamed_use);
    free_tl(&t);
    rs_net_destroy(net);
}

static void test_masks_turn_kinds_off(void)
{
    /* Only PFC: nothing else is written, and with neither samples nor
     * ECN wanted there is no sampler at all. */
    rs_net *net = incast(INCAST_DCQCN, "mask.tl", RS_TL_MASK(RS_TL_PFC), 1000000);
    tl_read t;
    read_tl(tpath("mask.tl"), rs_net_port_count(net), &t);
    CU_ASSERT(t.npfc > 0);
    CU_ASSERT_EQUAL(t.nflow + t.nsample + t.necn + t.ndrop, 0);
    CU_ASSERT_EQUAL(rs_net_timeline_events(net), 0);
    free_tl(&t);
    rs_net_destroy(net);

    /* Everything but the heavy kinds (what railsim writes by default). */
    net = incast(INCAST_LOSSY, "light.tl", RS_TL_ALL & ~RS_TL_HEAVY, 1000000);
    read_tl(tpath("light.tl"), rs_net_port_count(net), &t);
    CU_ASSERT(t.ndrop > 0);
    CU_ASSERT_EQUAL(t.nflow + t.nsample + t.necn + t.npfc, 0);
    CU_ASSERT_EQUAL(rs_net_timeline_events(net), 0);
    free_tl(&t);
    rs_net_destroy(net);

    /* Samples but no ECN records, and the reverse. */
    net = incast(INCAST_DCQCN, "samples-only.tl", RS_TL_MASK(RS_TL_SAMPLE), 1000000);
    read_tl(tpath("samples-only.tl"), rs_net_port_count(net), &t);
    CU_ASSERT(t.nsample > 0);
    CU_ASSERT_EQUAL(t.necn + t.npfc + t.nflow, 0);
    free_tl(&t);
    rs_net_destroy(net);
    net = incast(INCAST_DCQCN, "ecn-only.tl", RS_TL_MASK(RS_TL_ECN), 1000000);
    read_tl(tpath("ecn-only.tl"), rs_net_port_count(net), &t);
    CU_ASSERT(t.necn > 0);
    CU_ASSERT_EQUAL(t.nsample + t.npfc + t.nflow, 0);
    free_tl(&t);
    rs_net_destroy(net);
}

/* Everything a run reports, to compare two runs. */
typedef struct run_result {
    rs_net_stats st;
    rs_net_port_info *ports;
    rs_net_msg_time *msgs;
    size_t nmsgs;
    uint32_t nports;
    uint64_t model_events;
    rs_time end;
} run_result;

static void result_of(rs_net *net, run_result *r)
{
    rs_net_stats_get(net, &r->st);
    r->nports = rs_net_port_count(net);
    r->ports = calloc(r->nports, sizeof *r->ports);
    for (uint32_t p = 0; p < r->nports; p++)
        rs_net_port_info_get(net, p, &r->ports[p]);
    const rs_net_msg_time *mt = rs_net_msg_times(net, &r->nmsgs);
    r->msgs = malloc((r->nmsgs + 1) * sizeof *r->msgs);
    memcpy(r->msgs, mt, r->nmsgs * sizeof *mt);
    r->model_events = rs_sim_events_run(rs_net_sim(net)) - rs_net_timeline_events(net);
    r->end = r->st.last_activity;
}

static void same_results(const run_result *a, const run_result *b)
{
    CU_ASSERT_EQUAL(memcmp(&a->st, &b->st, sizeof a->st), 0);
    CU_ASSERT_EQUAL_FATAL(a->nports, b->nports);
    CU_ASSERT_EQUAL(memcmp(a->ports, b->ports, a->nports * sizeof *a->ports), 0);
    CU_ASSERT_EQUAL_FATAL(a->nmsgs, b->nmsgs);
    CU_ASSERT_EQUAL(memcmp(a->msgs, b->msgs, a->nmsgs * sizeof *a->msgs), 0);
    CU_ASSERT_EQUAL(a->model_events, b->model_events);
}

static void test_results_identical_with_and_without_timeline(void)
{
    static const incast_kind kinds[] = { INCAST_PFC, INCAST_DCQCN, INCAST_LOSSY };
    for (size_t k = 0; k < 3; k++) {
        run_result a, b, c;
        memset(&a, 0, sizeof a);
        rs_net *net = incast(kinds[k], NULL, 0, 0);
        result_of(net, &a);
        rs_net_destroy(net);
        net = incast(kinds[k], "same.tl", RS_TL_ALL, 1000000);
        result_of(net, &b);
        CU_ASSERT(rs_net_timeline_events(net) > 0);
        rs_net_destroy(net);
        net = incast(kinds[k], "same2.tl", RS_TL_ALL, 333333); /* ticks off any grid of the model */
        result_of(net, &c);
        rs_net_destroy(net);
        same_results(&a, &b);
        same_results(&a, &c);
        free(a.ports), free(a.msgs), free(b.ports), free(b.msgs), free(c.ports), free(c.msgs);
    }
}

/* The sampler stops when the network goes idle and starts again with the
 * next send; it never keeps the run alive. */
static void test_sampler_sleeps_while_idle(void)
{
    const rs_time us = 1000000;
    rs_net_config c;
    rs_fx_config(&c, 9, 1, 16);
    rs_net *net = rs_fx_net(&c);
    rs_timeline *tl = open_tl("idle.tl", RS_TL_ALL);
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_net_timeline_start(net, tl, us, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_net_timeline_start(net, tl, us, &err), RS_EINVAL); /* only one */
    static uint64_t bytes = 1u << 20;
    rs_fx_send(net, 1, 0, bytes, NULL, NULL, 1);
    rs_net_at(net, 5000 * us, send_from, &bytes, 2); /* 5 ms later */
    CU_ASSERT_EQUAL_FATAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    size_t n;
    const rs_net_msg_time *mt = rs_net_msg_times(net, &n);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    /* Each 1 MiB transfer takes ~22 us: a few dozen ticks in all, not
     * 5,000 (the run itself goes on to the senders' last retransmit
     * timer check, as without a timeline). */
    CU_ASSERT(rs_net_timeline_events(net) < 80);
    close_tl(net, tl);

    tl_read t;
    read_tl(tpath("idle.tl"), rs_net_port_count(net), &t);
    size_t before = 0, after = 0, gap = 0;
    for (size_t i = 0; i < t.nsample; i++) {
        rs_time ts = t.sample[i].u.sample.time_ps;
        if (ts <= mt[0].end + 2 * us)
            before++;
        else if (ts >= mt[1].start && ts <= mt[1].end + 2 * us)
            after++;
        else
            gap++;
    }
    CU_ASSERT(before > 0);
    CU_ASSERT(after > 0);
    CU_ASSERT_EQUAL(gap, 0);
    /* After the gap, the first interval's utilisation is over one tick:
     * the receiver's port's utilisations add up to what it sent. */
    uint32_t bn = net->leaf_port[0];
    rs_net_port_info pi;
    rs_net_port_info_get(net, bn, &pi);
    double sum = 0, bytes_per_us = 400e9 / 8 * 1e-6;
    for (size_t i = 0; i < t.nsample; i++)
        if (t.sample[i].u.sample.port == bn)
            sum += t.sample[i].u.sample.util;
    CU_ASSERT(sum * bytes_per_us > (double)pi.tx_bytes * 0.999);
    CU_ASSERT(sum * bytes_per_us < (double)pi.tx_bytes * 1.001);
    free_tl(&t);
    rs_net_destroy(net);
}

/* Sum of a port's sampled utilisations, as bytes (400 Gb/s, ticks of 1 us). */
static double util_bytes(const tl_read *t, uint32_t port)
{
    double sum = 0;
    for (size_t i = 0; i < t->nsample; i++)
        if (t->sample[i].u.sample.port == port)
            sum += t->sample[i].u.sample.util;
    return sum * 400e9 / 8 * 1e-6;
}

/* A lossy incast whose senders wait out a 100 ms retransmit timeout, and
 * a send from outside the run in the middle of the wait: the sampler skips
 * the quiet stretches (a few hundred ticks, not 100,000 a microsecond
 * apart), still samples on its 1 us grid, resumes at the first tick at or
 * after the outside send, and its utilisations still add up to what the
 * ports sent. */
static void test_sampler_skips_a_timeout_wait(void)
{
    const rs_time us = 1000000;
    rs_net_config c;
    rs_fx_config(&c, 9, 1, 16);
    c.pfc = 0;
    c.buffer_bytes = 64u << 10;
    c.ecn = 0;
    c.rto_us = 100000;
    rs_net *net = rs_fx_net(&c);
    rs_timeline *tl = open_tl("quiet.tl", RS_TL_ALL);
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_net_timeline_start(net, tl, us, &err), RS_OK);
    for (uint32_t s = 1; s <= 8; s++)
        rs_net_at(net, s * 37000, send_from, &incast_bytes, s);
    const rs_time mid = 50000 * us + 123457; /* off the grid */
    CU_ASSERT_EQUAL_FATAL(rs_net_run(net, mid), RS_OK);
    static uint64_t bytes = 1u << 20;
    CU_ASSERT_EQUAL(rs_fx_send(net, 1, 2, bytes, NULL, NULL, 99), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT(st.timeouts > 0);
    CU_ASSERT(st.msgs_done == st.msgs);
    CU_ASSERT(rs_net_now(net) > 100000 * us);
    CU_ASSERT(rs_net_timeline_events(net) < 5000);
    close_tl(net, tl);

    tl_read t;
    read_tl(tpath("quiet.tl"), rs_net_port_count(net), &t);
    uint32_t nic1 = rs_net_port_count(net), bn = net->leaf_port[0];
    rs_time first = RS_TIME_MAX;
    size_t off_grid = 0;
    for (size_t i = 0; i < t.nsample; i++) {
        rs_time ts = t.sample[i].u.sample.time_ps;
        off_grid += ts % us != 0;
        if (ts > mid && ts < 100000 * us && net->ports[t.sample[i].u.sample.port].kind == RS_PORT_NIC &&
            ts < first) {
            first = ts;
            nic1 = t.sample[i].u.sample.port;
        }
    }
    CU_ASSERT_EQUAL(off_grid, 0);
    CU_ASSERT_EQUAL(first, (mid / us + 1) * us); /* the outside send's first tick */
    rs_net_port_info pi;
    rs_net_port_info_get(net, bn, &pi);
    CU_ASSERT(util_bytes(&t, bn) > (double)pi.tx_bytes * 0.999);
    CU_ASSERT(util_bytes(&t, bn) < (double)pi.tx_bytes * 1.001);
    rs_net_port_info_get(net, nic1, &pi);
    CU_ASSERT(util_bytes(&t, nic1) > (double)pi.tx_bytes * 0.999);
    CU_ASSERT(util_bytes(&t, nic1) < (double)pi.tx_bytes * 1.001);
    free_tl(&t);
    rs_net_destroy(net);
}

/* A message that can never complete (ideal transport, a lost packet)
 * leaves only the sampler: it stops, and the run ends. */
static void test_sampler_does_not_keep_a_stuck_run_alive(void)
{
    rs_net_config c;
    rs_fx_config(&c, 9, 1, 16);
    c.transport = RS_TRANSPORT_IDEAL;
    c.pfc = 0;
    c.buffer_bytes = 64u << 10;
    rs_net *net = rs_fx_net(&c);
    rs_timeline *tl = open_tl("stuck.tl", RS_TL_ALL);
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_net_timeline_start(net, tl, 1000000, &err), RS_OK);
    for (uint32_t s = 1; s <= 8; s++)
        rs_fx_send(net, s, 0, 1u << 20, NULL, NULL, s);
    CU_ASSERT_EQUAL_FATAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT(st.pkts_dropped > 0);
    CU_ASSERT(st.msgs_done < st.msgs);
    CU_ASSERT(rs_net_now(net) < st.last_activity + 2000000);
    close_tl(net, tl);
    rs_net_destroy(net);
}

/* Stopping mid-run: later events write nothing, and a timeline can be
 * started again on the same network. */
static void test_stop_and_restart(void)
{
    rs_net_config c;
    rs_fx_config(&c, 9, 1, 16);
    c.cc = RS_CC_NONE;
    rs_net *net = rs_fx_net(&c);
    rs_timeline *tl = open_tl("part1.tl", RS_TL_ALL);
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_net_timeline_start(net, tl, 1000000, &err), RS_OK);
    for (uint32_t s = 1; s <= 8; s++)
        rs_fx_send(net, s, 0, 1u << 20, NULL, NULL, s);
    CU_ASSERT_EQUAL_FATAL(rs_net_run(net, 50000000), RS_OK); /* 50 us */
    close_tl(net, tl);
    tl = open_tl("part2.tl", RS_TL_ALL);
    CU_ASSERT_EQUAL_FATAL(rs_net_timeline_start(net, tl, 1000000, &err), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    close_tl(net, tl);

    tl_read a, b;
    read_tl(tpath("part1.tl"), rs_net_port_count(net), &a);
    read_tl(tpath("part2.tl"), rs_net_port_count(net), &b);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(a.npfc + b.npfc, st.pfc_pauses_sent + st.pfc_resumes_sent);
    CU_ASSERT_EQUAL(a.nflow + b.nflow, 8);
    for (size_t i = 0; i < a.nsample; i++)
        CU_ASSERT(a.sample[i].u.sample.time_ps <= 50000000);
    for (size_t i = 0; i < b.nsample; i++)
        CU_ASSERT(b.sample[i].u.sample.time_ps > 50000000);
    CU_ASSERT(b.nsample > 0);
    CU_ASSERT_FALSE(a.unnamed_use);
    CU_ASSERT_FALSE(b.unnamed_use); /* names written again in the new file */
    free_tl(&a);
    free_tl(&b);
    rs_net_destroy(net);
}

static const rs_cu_test net_timeline_tests[] = {
    RS_CU_TEST(test_pfc_records_count_as_ports_pfc_sent),
    RS_CU_TEST(test_flow_records_are_msg_times),
    RS_CU_TEST(test_bottleneck_samples_show_it_busy),
    RS_CU_TEST(test_flow_level_samples_come_from_rates),
    RS_CU_TEST(test_drop_records_add_up_to_pkts_dropped),
    RS_CU_TEST(test_drop_reason_is_buffer_for_tail_drop),
    RS_CU_TEST(test_ecn_records_add_up_to_marks_and_cnps),
    RS_CU_TEST(test_masks_turn_kinds_off),
    RS_CU_TEST(test_results_identical_with_and_without_timeline),
    RS_CU_TEST(test_sampler_sleeps_while_idle),
    RS_CU_TEST(test_sampler_skips_a_timeout_wait),
    RS_CU_TEST(test_sampler_does_not_keep_a_stuck_run_alive),
    RS_CU_TEST(test_stop_and_restart),
};

static void register_suites(void) { RS_CU_SUITE("net_timeline", net_timeline_tests); }

int main(void)
{
    int rc = rs_cu_run(register_suites);
    remove_dir();
    return rc;
}
