/*
 * test_fluid.c - the flow-level network (models/fluid.c): the max-min fair
 * solver alone (fair shares, the classic multi-path example, incremental
 * equals full), then the backend behind rs_net: a lone flow's exact time,
 * fair shares on a bottleneck, paths equal to the packet level's port by
 * port, incremental rates equal to a full solve during a run, and packet-
 * vs-flow agreement on ring AllReduce, relays and DCQCN. Faults at flow
 * level are in test_fluid_fault.c. Nothing here is timed: the speed-up is
 * measured by the bench (docs/fidelity.md).
 */
#include <CUnit/CUnit.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "comm.h"
#include "cu_main.h"
#include "fixture_coll.h"
#include "fixture_net.h"
#include "fault.h"
#include "fluid.h"
#include "fluid_int.h" /* dq_ahead */
#include "net.h"
#include "netint.h" /* wire overhead constants, flows and ports */
#include "rng.h"

#define G 1000000000ull

/* -- solver ---------------------------------------------------------------- */

static void mmf_add(rs_mmf *m, uint32_t *id, uint32_t n, ...)
{
    uint32_t links[RS_MMF_MAX_HOPS];
    va_list ap;
    va_start(ap, n);
    for (uint32_t i = 0; i < n; i++)
        links[i] = va_arg(ap, uint32_t);
    va_end(ap);
    CU_ASSERT_EQUAL_FATAL(rs_mmf_add(m, links, n, id), RS_OK);
}

static void test_mmf_one_bottleneck_gives_equal_shares(void)
{
    /* n flows share link 0; each also crosses a private, faster link. */
    uint64_t cap[9] = { 400 * G, 800 * G, 800 * G, 800 * G, 800 * G, 800 * G, 800 * G, 800 * G, 800 * G };
    rs_mmf *m;
    CU_ASSERT_EQUAL_FATAL(rs_mmf_create(9, cap, &m), RS_OK);
    uint32_t id[8];
    for (uint32_t n = 1; n <= 8; n++) {
        mmf_add(m, &id[n - 1], 2, 0u, n);
        CU_ASSERT_EQUAL_FATAL(rs_mmf_solve(m), RS_OK);
        for (uint32_t i = 0; i < n; i++)
            CU_ASSERT_EQUAL(rs_mmf_rate(m, id[i]), 400 * G / n);
    }
    /* Leaving gives the share back. */
    for (uint32_t n = 8; n > 1; n--) {
        rs_mmf_remove(m, id[n - 1]);
        CU_ASSERT_EQUAL_FATAL(rs_mmf_solve(m), RS_OK);
        for (uint32_t i = 0; i < n - 1; i++)
            CU_ASSERT_EQUAL(rs_mmf_rate(m, id[i]), 400 * G / (n - 1));
    }
    rs_mmf_destroy(m);
}

/* Bertsekas & Gallager's progressive filling on flows of different paths:
 * links A (12), B (12), C (30) Gb/s; f0, f1 on A, f2 on A and B, f3 on B
 * and C, f4, f5 on C. A saturates first at 4 each (f0..f2), then B gives
 * f3 the 8 left, then C splits its 22 left: 11 each. The max-min fair
 * allocation is unique. */
static rs_mmf *classic_flows(uint32_t f[6])
{
    uint64_t cap[3] = { 12 * G, 12 * G, 30 * G };
    rs_mmf *m;
    CU_ASSERT_EQUAL_FATAL(rs_mmf_create(3, cap, &m), RS_OK);
    mmf_add(m, &f[0], 1, 0u);
    mmf_add(m, &f[1], 1, 0u);
    mmf_add(m, &f[2], 2, 0u, 1u);
    mmf_add(m, &f[3], 2, 1u, 2u);
    mmf_add(m, &f[4], 1, 2u);
    mmf_add(m, &f[5], 1, 2u);
    return m;
}

static void test_mmf_classic_example_is_exact(void)
{
    uint32_t f[6];
    rs_mmf *m = classic_flows(f);
    CU_ASSERT_EQUAL_FATAL(rs_mmf_solve(m), RS_OK);
    const uint64_t want[6] = { 4 * G, 4 * G, 4 * G, 8 * G, 11 * G, 11 * G };
    for (int i = 0; i < 6; i++)
        CU_ASSERT_EQUAL(rs_mmf_rate(m, f[i]), want[i]);
    /* f3 leaves: B has only f2 (bottlenecked at A), C splits 30 in two. */
    rs_mmf_remove(m, f[3]);
    CU_ASSERT_EQUAL_FATAL(rs_mmf_solve(m), RS_OK);
    CU_ASSERT_EQUAL(rs_mmf_rate(m, f[2]), 4 * G);
    CU_ASSERT_EQUAL(rs_mmf_rate(m, f[4]), 15 * G);
    CU_ASSERT_EQUAL(rs_mmf_rate(m, f[5]), 15 * G);
    rs_mmf_destroy(m);
}

/* Strict priority: the same links as above, f3 and f5 in class 5, the
 * rest in class 0. Class 5 is filled first: f3 (B, C) and f5 (C) share C's
 * 30 but f3 takes at most B's 12 and f5 gets the remaining 18. Class 0
 * gets what they left: A 12 for f0..f2 (4 each; f2's B has 0 left, so f2
 * gets 0 and f0, f1 6 each), C 0 left for f4. Back in one class, the
 * classic allocation returns. */
static void test_mmf_classes_are_served_strictly(void)
{
    uint32_t f[6];
    rs_mmf *m = classic_flows(f);
    rs_mmf_set_class(m, f[3], 5);
    rs_mmf_set_class(m, f[5], 5);
    CU_ASSERT_EQUAL_FATAL(rs_mmf_solve(m), RS_OK);
    const uint64_t want[6] = { 6 * G, 6 * G, 0, 12 * G, 0, 18 * G };
    uint64_t full[6];
    CU_ASSERT_EQUAL_FATAL(rs_mmf_solve_full(m, full), RS_OK);
    for (int i = 0; i < 6; i++) {
        CU_ASSERT_EQUAL(rs_mmf_rate(m, f[i]), want[i]);
        CU_ASSERT_EQUAL(full[f[i]], want[i]);
    }
    /* f5 leaves: C's 30 minus f3's 12 goes to f4 in class 0. */
    rs_mmf_remove(m, f[5]);
    CU_ASSERT_EQUAL_FATAL(rs_mmf_solve(m), RS_OK);
    CU_ASSERT_EQUAL(rs_mmf_rate(m, f[3]), 12 * G);
    CU_ASSERT_EQUAL(rs_mmf_rate(m, f[4]), 18 * G);
    CU_ASSERT_EQUAL(rs_mmf_rate(m, f[2]), 0);
    /* f3 back in class 0 with the others: plain max-min again. */
    rs_mmf_set_class(m, f[3], 0);
    CU_ASSERT_EQUAL_FATAL(rs_mmf_solve(m), RS_OK);
    CU_ASSERT_EQUAL(rs_mmf_rate(m, f[2]), 4 * G);
    CU_ASSERT_EQUAL(rs_mmf_rate(m, f[3]), 8 * G);
    CU_ASSERT_EQUAL(rs_mmf_rate(m, f[4]), 22 * G);
    rs_mmf_destroy(m);
}

static void test_mmf_rejects_bad_paths(void)
{
    uint64_t cap[2] = { G, G };
    rs_mmf *m;
    uint32_t id, dup[2] = { 1, 1 }, out[1] = { 2 };
    CU_ASSERT_EQUAL_FATAL(rs_mmf_create(2, cap, &m), RS_OK);
    CU_ASSERT_EQUAL(rs_mmf_add(m, dup, 2, &id), RS_EINVAL);
    CU_ASSERT_EQUAL(rs_mmf_add(m, out, 1, &id), RS_EINVAL);
    CU_ASSERT_EQUAL(rs_mmf_add(m, dup, 0, &id), RS_EINVAL);
    rs_mmf_destroy(m);
}

/* Progressive filling as the definition reads, with none of the
 * solver's machinery (no heap, no components): repeatedly the least of
 * every unfrozen link's share floor(rem / unfrozen flows), keyed (share,
 * link), and every unfrozen capped flow's cap, keyed (cap, links + flow),
 * is taken; a link freezes its unfrozen flows at its share (their
 * bottleneck), a cap its flow (bottleneck: its first link). */
enum { REF_NL = 60, REF_MAXF = 400 };
typedef struct ref_net {
    uint64_t cap[REF_NL];
    uint32_t path[REF_MAXF][RS_MMF_MAX_HOPS], hops[REF_MAXF];
    uint64_t fcap[REF_MAXF];
} ref_net;

static void ref_fill(const ref_net *g, const uint32_t *live, uint32_t nlive, uint64_t *rate, uint32_t *bneck)
{
    uint64_t rem[REF_NL];
    uint32_t cnt[REF_NL] = { 0 };
    uint8_t frozen[REF_MAXF] = { 0 };
    memcpy(rem, g->cap, sizeof rem);
    for (uint32_t i = 0; i < nlive; i++)
        for (uint32_t k = 0; k < g->hops[live[i]]; k++)
            cnt[g->path[live[i]][k]]++;
    for (;;) {
        uint64_t best = UINT64_MAX, key = UINT64_MAX;
        for (uint32_t l = 0; l < REF_NL; l++)
            if (cnt[l] && (rem[l] / cnt[l] < best || (rem[l] / cnt[l] == best && l < key))) {
                best = rem[l] / cnt[l];
                key = l;
            }
        for (uint32_t i = 0; i < nlive; i++) {
            uint32_t f = live[i];
            if (!frozen[f] && g->fcap[f] && (g->fcap[f] < best || (g->fcap[f] == best && REF_NL + f < key))) {
                best = g->fcap[f];
                key = REF_NL + f;
            }
        }
        if (key == UINT64_MAX)
            return;
        for (uint32_t i = 0; i < nlive; i++) {
            uint32_t f = live[i], on = 0;
            if (frozen[f])
                continue;
            if (key >= REF_NL)
                on = f == key - REF_NL;
            for (uint32_t k = 0; !on && k < g->hops[f]; k++)
                on = g->path[f][k] == key;
            if (!on)
                continue;
            frozen[f] = 1;
            rate[f] = best;
            bneck[f] = key >= REF_NL ? g->path[f][0] : (uint32_t)key;
            for (uint32_t k = 0; k < g->hops[f]; k++) {
                rem[g->path[f][k]] -= best;
                cnt[g->path[f][k]]--;
            }
        }
    }
}

/* Random starts and finishes on a random graph with several components
 * (with caps: a random flow's cap set or cleared at 40% of the steps):
 * after every solve, every live flow's rate equals a from-scratch solve
 * and the definition's filling (ref_fill), bit for bit, bottlenecks too, and the solves visited fewer flows than full ones would. */
static void random_events(int caps)
{
    enum { NL = REF_NL, STEPS = 3000, MAXF = REF_MAXF };
    static ref_net g;
    uint64_t *cap = g.cap, *fcap = g.fcap, rrate[MAXF];
    uint32_t rbn[MAXF];
    rs_rng rng;
    rs_rng_init(&rng, 7, 0, 0);
    for (int l = 0; l < NL; l++)
        cap[l] = (1 + rs_rng_below(&rng, 1000)) * 1000000000ull / 7;
    rs_mmf *m;
    CU_ASSERT_EQUAL_FATAL(rs_mmf_create(NL, cap, &m), RS_OK);
    uint32_t live[MAXF], nlive = 0;
    uint64_t *ref = NULL, full_work = 0; /* by flow id: ids stay below MAXF */
    memset(fcap, 0, sizeof g.fcap);
    int bad = 0, bad_ref = 0, at_cap = 0;
    for (int s = 0; s < STEPS; s++) {
        int ops = 1 + (int)rs_rng_below(&rng, 3);
        for (int o = 0; o < ops; o++) {
            if (nlive < MAXF && (nlive == 0 || rs_rng_below(&rng, 100) < 55)) {
                /* Paths stay inside one of 4 link groups now and then, so
                 * there are several components to leave alone. */
                uint32_t links[RS_MMF_MAX_HOPS], h = 1 + rs_rng_below(&rng, 5), n = 0;
                uint32_t grp = rs_rng_below(&rng, 5), lo = grp < 4 ? grp * (NL / 4) : 0;
                uint32_t span = grp < 4 ? NL / 4 : NL;
                while (n < h) {
                    uint32_t l = lo + rs_rng_below(&rng, span), dup = 0;
                    for (uint32_t k = 0; k < n; k++)
                        dup |= links[k] == l;
                    if (!dup)
                        links[n++] = l;
                }
                CU_ASSERT_EQUAL_FATAL(rs_mmf_add(m, links, h, &live[nlive]), RS_OK);
                CU_ASSERT_FATAL(live[nlive] < MAXF);
                fcap[live[nlive]] = 0;
                memcpy(g.path[live[nlive]], links, h * sizeof *links);
                g.hops[live[nlive]] = h;
                nlive++;
            } else if (nlive) {
                uint32_t i = rs_rng_below(&rng, nlive);
                rs_mmf_remove(m, live[i]);
                live[i] = live[--nlive];
            }
        }
        if (caps && nlive && rs_rng_below(&rng, 100) < 40) {
            uint32_t i = rs_rng_below(&rng, nlive);
            uint64_t c = rs_rng_below(&rng, 3) == 0 ? 0 : (1 + rs_rng_below(&rng, 100)) * 1000000000ull;
            rs_mmf_set_flow_cap(m, live[i], c, 1);
            fcap[live[i]] = c;
        }
        CU_ASSERT_EQUAL_FATAL(rs_mmf_solve(m), RS_OK);
        uint32_t nb = rs_mmf_id_bound(m);
        ref = realloc(ref, ((size_t)nb + 1) * sizeof *ref);
        CU_ASSERT_EQUAL_FATAL(rs_mmf_solve_full(m, ref), RS_OK);
        ref_fill(&g, live, nlive, rrate, rbn);
        for (uint32_t i = 0; i < nlive; i++) {
            if (ref[live[i]] != rs_mmf_rate(m, live[i]))
                bad++;
            bad_ref += rrate[live[i]] != rs_mmf_rate(m, live[i]) || rbn[live[i]] != rs_mmf_bottleneck(m, live[i]);
            at_cap += fcap[live[i]] && rs_mmf_rate(m, live[i]) == fcap[live[i]];
        }
        full_work += nlive;
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(bad_ref, 0);
    CU_ASSERT(caps ? at_cap > 1000 : at_cap == 0); /* caps did bind */
    uint64_t solves, visited;
    rs_mmf_work(m, &solves, &visited);
    CU_ASSERT_EQUAL(solves, STEPS);
    CU_ASSERT(visited < full_work);
    free(ref);
    rs_mmf_destroy(m);
}

static void test_mmf_incremental_equals_full_after_random_events(void) { random_events(0); }
static void test_mmf_incremental_equals_full_with_caps(void) { random_events(1); }

/* A capped flow (DCQCN's rate at flow level) takes its cap when that is
 * below its fair share, and the others share what it leaves; a cap above
 * the share changes nothing. */
static void test_mmf_flow_cap_takes_cap_and_leaves_the_rest(void)
{
    uint64_t cap[3] = { 400 * G, 1000 * G, 1000 * G };
    rs_mmf *m;
    CU_ASSERT_EQUAL_FATAL(rs_mmf_create(3, cap, &m), RS_OK);
    uint32_t id[3];
    for (uint32_t i = 0; i < 3; i++)
        mmf_add(m, &id[i], 2, 0u, 1 + i % 2);
    CU_ASSERT_EQUAL_FATAL(rs_mmf_solve(m), RS_OK);
    CU_ASSERT_EQUAL(rs_mmf_rate(m, id[0]), 400 * G / 3);
    rs_mmf_set_flow_cap(m, id[0], 40 * G, 1);
    CU_ASSERT_EQUAL_FATAL(rs_mmf_solve(m), RS_OK);
    CU_ASSERT_EQUAL(rs_mmf_rate(m, id[0]), 40 * G);
    CU_ASSERT_EQUAL(rs_mmf_rate(m, id[1]), 180 * G);
    CU_ASSERT_EQUAL(rs_mmf_rate(m, id[2]), 180 * G);
    CU_ASSERT_EQUAL(rs_mmf_bottleneck(m, id[1]), 0);
    rs_mmf_set_flow_cap(m, id[0], 300 * G, 1);
    CU_ASSERT_EQUAL_FATAL(rs_mmf_solve(m), RS_OK);
    for (uint32_t i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(rs_mmf_rate(m, id[i]), 400 * G / 3);
    /* Alone on its links, a capped flow takes the cap as well. */
    uint32_t lone;
    rs_mmf_set_flow_cap(m, id[0], 0, 1);
    rs_mmf_remove(m, id[1]);
    rs_mmf_remove(m, id[2]);
    rs_mmf_remove(m, id[0]);
    mmf_add(m, &lone, 1, 2u);
    rs_mmf_set_flow_cap(m, lone, 70 * G, 1);
    CU_ASSERT_EQUAL_FATAL(rs_mmf_solve(m), RS_OK);
    CU_ASSERT_EQUAL(rs_mmf_rate(m, lone), 70 * G);
    rs_mmf_destroy(m);
}

/* -- the backend ---------------------------------------------------------- */

/* RoCE wire bytes of a message, framed as transport.c does: payloads padded
 * to 4, 82 bytes of headers and gap, RETH on the first, 84-byte minimum;
 * *max_wire gets the largest frame. */
static uint64_t roce_wire(uint64_t bytes, uint32_t mtu, uint64_t *max_wire)
{
    uint64_t n = bytes ? (bytes + mtu - 1) / mtu : 1, w = 0;
    *max_wire = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t p = i + 1 < n ? mtu : bytes - (n - 1) * mtu;
        uint64_t f = ((p + 3) & ~3ull) + RS_WIRE_ROCE + (i == 0 ? RS_WIRE_RETH : 0);
        if (f < 84)
            f = 84;
        w += f;
        if (f > *max_wire)
            *max_wire = f;
    }
    return w;
}

/* One flow over NIC -> leaf -> GPU at 400 Gb/s (20 ps per byte): the
 * message takes the NIC hop's latency (link + switch), the leaf hop's link
 * latency, its largest frame once more on the second hop (store-and-
 * forward: the small last frame waits behind it), and its wire bytes at
 * line rate -- to the picosecond, and equal to the packet level. */
static void test_fluid_single_flow_time_is_exact(void)
{
    const uint64_t sizes[] = { 0, 1, 100, 4096, 4097, 1u << 20, 3000007 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        rs_time t[2];
        for (int fid = 0; fid < 2; fid++) {
            rs_net_config c;
            rs_fx_config_at(&c, 2, 1, 8, fid ? RS_FIDELITY_FLOW : RS_FIDELITY_PACKET);
            rs_net *net = rs_fx_net(&c);
            CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, 0, 1, sizes[i], NULL, NULL, 0), RS_OK);
            CU_ASSERT_EQUAL_FATAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
            t[fid] = rs_fx_only_fct(net);
            if (fid) {
                uint64_t mw, w = roce_wire(sizes[i], c.mtu, &mw);
                rs_time want = 1000000 + 500000 + mw * 20 + w * 20;
                CU_ASSERT_EQUAL(t[1], want);
                rs_time lat;
                uint64_t wire;
                CU_ASSERT_EQUAL(rs_fluid_flow_cost(net, 0, &lat, &wire), RS_OK);
                CU_ASSERT_EQUAL(wire, w);
                CU_ASSERT_EQUAL(lat, 1500000 + mw * 20);
                rs_net_stats st;
                rs_net_stats_get(net, &st);
                CU_ASSERT_EQUAL(st.msgs_done, 1);
                CU_ASSERT_EQUAL(st.goodput_bytes, sizes[i]);
                CU_ASSERT_EQUAL(st.nic_bytes, sizes[i]);
                CU_ASSERT_EQUAL(st.data_pkts, sizes[i] ? (sizes[i] + c.mtu - 1) / c.mtu : 1);
                CU_ASSERT_EQUAL(st.pkts_in_flight, 0);
            }
            rs_net_destroy(net);
        }
        CU_ASSERT_EQUAL(t[0], t[1]);
    }
}

/* Inside an HB domain: two hops at 3.6 Tb/s, 16-byte unit headers. The
 * packet level rounds each unit's serialisation up to a picosecond, the
 * flow level the whole transfer: they differ by less than a picosecond
 * per unit. */
static void test_fluid_hb_flow_matches_packet_within_rounding(void)
{
    const uint64_t bytes = 10u << 20;
    rs_time t[2];
    for (int fid = 0; fid < 2; fid++) {
        rs_net_config c;
        rs_fx_config_at(&c, 8, 8, 8, fid ? RS_FIDELITY_FLOW : RS_FIDELITY_PACKET);
        rs_net *net = rs_fx_net(&c);
        CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, 1, 6, bytes, NULL, NULL, 0), RS_OK);
        CU_ASSERT_EQUAL_FATAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
        t[fid] = rs_fx_only_fct(net);
        rs_net_destroy(net);
    }
    uint64_t units = bytes / 65536;
    CU_ASSERT(t[0] >= t[1] && t[0] - t[1] <= units);
}

typedef struct rate_probe {
    uint32_t nflows;
    uint64_t rate[16];
    int ok;
} rate_probe;

static void probe_rates(void *ctx, rs_net *net, uint64_t arg)
{
    (void)arg;
    rate_probe *p = ctx;
    p->ok = 1;
    for (uint32_t f = 0; f < p->nflows; f++)
        if (rs_fluid_flow_rate(net, f, &p->rate[f]) != RS_OK)
            p->ok = 0;
}

/* n senders into one GPU on one switch: the leaf's port to the receiver is
 * the bottleneck and each flow gets floor(400 Gb/s / n). Their last bytes
 * leave the fluid together; as at packet level, where the port serves
 * their last frames one after another, they complete one largest frame
 * (4194 wire bytes, 20 ps each) apart, the last one at the fluid time
 * (models/fluid.c, "round-robin tails"). */
static void test_fluid_incast_gets_equal_shares(void)
{
    for (uint32_t n = 2; n <= 7; n++) {
        rs_net_config c;
        rs_fx_config_at(&c, 8, 1, 8, RS_FIDELITY_FLOW);
        rs_net *net = rs_fx_net(&c);
        for (uint32_t s = 1; s <= n; s++)
            CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, s, 0, 1u << 20, NULL, NULL, s), RS_OK);
        rate_probe p = { .nflows = n };
        rs_net_at(net, 1000, probe_rates, &p, 0);
        CU_ASSERT_EQUAL_FATAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
        CU_ASSERT_EQUAL(p.ok, 1);
        for (uint32_t f = 0; f < n; f++)
            CU_ASSERT_EQUAL(p.rate[f], 400 * G / n);
        size_t k;
        const rs_net_msg_time *t = rs_net_msg_times(net, &k);
        CU_ASSERT_EQUAL_FATAL(k, n);
        /* Within a few ps: the hand-over re-divides the leaver's bytes
         * with integer rates (docs/fidelity.md). */
        for (size_t i = 1; i < k; i++) {
            int64_t d = (int64_t)(t[i].end - t[i - 1].end) - 4194 * 20;
            CU_ASSERT(d >= -8 && d <= 8);
        }
        uint64_t mw, w = roce_wire(1u << 20, c.mtu, &mw);
        rs_time body = (rs_time)((w * 8 * 1000000000000ull + 400 * G / n - 1) / (400 * G / n));
        int64_t d = (int64_t)t[k - 1].end - (int64_t)(1500000 + mw * 20 + body);
        CU_ASSERT(d >= -8 && d <= 8);
        rs_net_destroy(net);
    }
}

/* The flow level's path of a flow is the packet level's: on a three-tier
 * fat tree with many equal-cost paths, each message sent alone at packet
 * level (ideal transport: no ACKs) raises the frame counters of exactly
 * the ports rs_fluid_flow_path names, by its packet count. */
static void test_fluid_paths_equal_packet_paths(void)
{
    rs_net_config c;
    rs_fx_config_at(&c, 64, 1, 8, RS_FIDELITY_PACKET);
    c.transport = RS_TRANSPORT_IDEAL;
    rs_net *net = rs_fx_net(&c);
    rs_net_topo_info ti;
    rs_net_topo_info_get(net, &ti);
    CU_ASSERT_EQUAL_FATAL(ti.tiers, 3);
    uint32_t np = rs_net_port_count(net);
    uint64_t *before = calloc(np, sizeof *before);
    rs_rng rng;
    rs_rng_init(&rng, 3, 0, 0);
    int multi = 0;
    for (uint32_t i = 0; i < 200; i++) {
        uint32_t a = rs_rng_below(&rng, 64), b = rs_rng_below(&rng, 63);
        b += b >= a;
        for (uint32_t p = 0; p < np; p++) {
            rs_net_port_info pi;
            rs_net_port_info_get(net, p, &pi);
            before[p] = pi.tx_pkts;
        }
        CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, a, b, 3 * 4096, NULL, NULL, i), RS_OK);
        CU_ASSERT_EQUAL_FATAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
        /* Its record was handed back at the end (packet level reuses
         * them) and still describes it: the last one on the free stack. */
        CU_ASSERT_FATAL(net->flow_free.n > 0);
        uint32_t fid = net->flow_free.ids[net->flow_free.n - 1];
        CU_ASSERT_EQUAL(net->flows[fid].serial, i);
        uint32_t path[RS_MMF_MAX_HOPS];
        int h = rs_fluid_flow_path(net, fid, path, RS_MMF_MAX_HOPS);
        CU_ASSERT_FATAL(h >= 2);
        multi += h == 6;
        uint32_t changed = 0;
        for (uint32_t p = 0; p < np; p++) {
            rs_net_port_info pi;
            rs_net_port_info_get(net, p, &pi);
            if (pi.tx_pkts != before[p]) {
                int on = 0;
                for (int k = 0; k < h; k++)
                    on |= path[k] == p;
                CU_ASSERT(on);
                CU_ASSERT_EQUAL(pi.tx_pkts - before[p], 3);
                changed++;
            }
        }
        CU_ASSERT_EQUAL(changed, (uint32_t)h);
    }
    CU_ASSERT(multi > 50); /* most pairs crossed the core, with ECMP choices */
    free(before);
    rs_net_destroy(net);
}

typedef struct check_ctx {
    int bad, checks;
} check_ctx;

static void check_rates(void *ctx, rs_net *net, uint64_t arg)
{
    (void)arg;
    check_ctx *k = ctx;
    int r = rs_fluid_check(net);
    if (r != 0)
        k->bad++;
    k->checks++;
}

static void send_later(void *ctx, rs_net *net, uint64_t arg)
{
    (void)ctx;
    uint32_t a = (uint32_t)(arg >> 40), b = (uint32_t)(arg >> 20) & 0xfffff;
    uint64_t bytes = (arg & 0xfffff) * 64;
    CU_ASSERT_EQUAL(rs_fx_send(net, a, b, bytes, NULL, NULL, 0), RS_OK);
}

/* Random messages over a rail-only network (network flows and PXN relays
 * through the HB domain) and a 3-tier fat tree: at many instants during
 * the run, the incrementally solved rates of every flow equal a solve
 * from scratch. */
static void test_fluid_incremental_equals_full_during_run(void)
{
    for (int kind = 0; kind < 2; kind++) {
        rs_net_config c;
        rs_fx_config_at(&c, kind ? 32 : 64, kind ? 4 : 1, 8, RS_FIDELITY_FLOW);
        c.kind = kind ? RS_TOPO_RAIL_ONLY : RS_TOPO_FAT_TREE;
        rs_net *net = rs_fx_net(&c);
        rs_rng rng;
        rs_rng_init(&rng, 11, 0, 0);
        uint32_t n = c.gpus;
        for (int i = 0; i < 600; i++) {
            uint64_t a = rs_rng_below(&rng, n), b = rs_rng_below(&rng, n - 1);
            b += b >= a;
            uint64_t units = 1 + rs_rng_below(&rng, 40000);
            rs_time at = rs_rng_below(&rng, 200) * 1000000ull;
            rs_net_at(net, at, send_later, NULL, a << 40 | b << 20 | units);
        }
        check_ctx k = { 0, 0 };
        for (int i = 0; i < 400; i++)
            rs_net_at(net, 500000 + (rs_time)i * 777777, check_rates, &k, 0);
        CU_ASSERT_EQUAL_FATAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
        CU_ASSERT_EQUAL(k.bad, 0);
        CU_ASSERT_EQUAL(k.checks, 400);
        rs_net_stats st;
        rs_net_stats_get(net, &st);
        CU_ASSERT_EQUAL(st.msgs_done, 600);
        rs_net_destroy(net);
    }
}

/* -- packet vs flow ------------------------------------------------------- */

/* Two 1 MiB messages from GPU 0 to GPU 1, the second sent 1 ns before the
 * first one's tenth frame (the first with its RETH, then nine full ones)
 * has left, so both are in the NIC's round robin when it takes the next
 * frame. From then on it serves them a frame each, the first one first,
 * so the first one's last frame leaves a frame time before processor
 * sharing would end it (11 frames before the second's: 10 alone, 1 in
 * the last round), and the second ends when the NIC has carried both.
 * The flow level's round-robin tails give both times (models/fluid.c,
 * solve_now). Ending early only flows with equal ends had the first one
 * a frame (83.6 ns) late, and a ring whose channels drift apart that way
 * 25% slow (test_fluid_ring_of_single_pieces_agrees_with_packet_level). */
static void test_fluid_first_joined_leaves_round_robin_a_frame_early(void)
{
    rs_time end[2][2] = { { 0, 0 }, { 0, 0 } };
    for (int fid = 0; fid < 2; fid++) {
        rs_net_config c;
        rs_fx_config_at(&c, 2, 1, 8, fid ? RS_FIDELITY_FLOW : RS_FIDELITY_PACKET);
        rs_net *net = rs_fx_net(&c);
        CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, 0, 1, 1u << 20, NULL, NULL, 0), RS_OK);
        rs_net_at(net, (4194 + 9 * 4178) * 20 - 1000, send_later, NULL, 0ull << 40 | 1ull << 20 | (1u << 20) / 64);
        CU_ASSERT_EQUAL_FATAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
        size_t k;
        const rs_net_msg_time *t = rs_net_msg_times(net, &k);
        CU_ASSERT_EQUAL_FATAL(k, 2);
        for (size_t i = 0; i < k; i++)
            end[fid][t[i].start != 0] = t[i].end;
        rs_net_destroy(net);
    }
    /* Within a ns: the second joins 1 ns before a frame ends, and the
     * fluid's frame is the largest (RETH), the packet level's a full one. */
    for (int i = 0; i < 2; i++) {
        int64_t d = (int64_t)end[1][i] - (int64_t)end[0][i];
        CU_ASSERT(d >= -1000 && d <= 1000);
    }
    CU_ASSERT_EQUAL(end[0][1] - end[0][0], 11 * 4178 * 20);
}

/* -- multipath: routing.ecmp=packet or adaptive at flow level ----------- */

/* Slowest and fastest message of a shifted permutation (GPU i to i + 64)
 * on 128 GPUs, a 2-tier fat tree of radix 16 (16 leaves of 8, 8 spines). */
static void shifted_permutation(rs_ecmp_mode mode, rs_time *lo, rs_time *hi, rs_net **keep)
{
    rs_net_config c;
    rs_fx_config_at(&c, 128, 1, 16, RS_FIDELITY_FLOW);
    c.ecmp = mode;
    c.cc = RS_CC_NONE;
    rs_net *net = rs_fx_net(&c);
    for (uint32_t i = 0; i < 128; i++)
        CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, i, (i + 64) % 128, 2u << 20, NULL, NULL, i), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    size_t n;
    const rs_net_msg_time *t = rs_net_msg_times(net, &n);
    CU_ASSERT_EQUAL(n, 128);
    *lo = RS_TIME_MAX;
    *hi = 0;
    for (size_t i = 0; i < n; i++) {
        rs_time d = t[i].end - t[i].start;
        *lo = d < *lo ? d : *lo;
        *hi = d > *hi ? d : *hi;
    }
    if (keep)
        *keep = net;
    else
        rs_net_destroy(net);
}

/* Sprayed flows whose bottleneck is a bundle (a leaf's parallel uplinks,
 * oversubscribed 3:1) leave in a round-robin tail one frame apart at the
 * bundle's rate: its members carry frames side by side. The tail once
 * took a bundle's id for a port's (past the ports: a garbage rate, and a
 * division by zero in a sprayed demo-moe replay on an oversubscribed
 * fat tree). */
static void test_fluid_sprayed_tail_at_a_bundle(void)
{
    rs_net_config c;
    rs_fx_config_at(&c, 12, 1, 8, RS_FIDELITY_FLOW);
    c.ecmp = RS_ECMP_PACKET;
    c.oversubscription = 3;
    c.cc = RS_CC_NONE;
    rs_net *net = rs_fx_net(&c);
    for (uint32_t i = 0; i < 6; i++)
        CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, i, i + 6, 1u << 20, NULL, NULL, i), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    size_t n;
    const rs_net_msg_time *t = rs_net_msg_times(net, &n);
    CU_ASSERT_EQUAL_FATAL(n, 6);
    rs_time end[6];
    for (size_t i = 0; i < n; i++) {
        end[i] = t[i].end;
        for (size_t k = i; k > 0 && end[k] < end[k - 1]; k--) {
            rs_time x = end[k];
            end[k] = end[k - 1];
            end[k - 1] = x;
        }
    }
    /* Two 400 Gb/s uplinks: 20 ps a byte each, 10 ps a byte side by side;
     * one frame of 4 KiB of payload and its headers apart. The flows tie
     * between two bundles of the same rate (the source leaf's uplinks and
     * the spines' links down to the other leaf), so they leave in two
     * tails: every gap is 0 or a whole number of that frame time. */
    rs_time gap = 0;
    for (int i = 1; i < 6 && !gap; i++)
        gap = end[i] - end[i - 1];
    printf("\n  6 sprayed flows through 2 uplinks: ends %.3f .. %.3f us, %llu ps apart\n", end[0] / 1e6,
           end[5] / 1e6, (unsigned long long)gap);
    CU_ASSERT(gap >= 4096 * 10 && gap <= 4300 * 10);
    for (int i = 1; i < 6 && gap; i++)
        CU_ASSERT_EQUAL((end[i] - end[i - 1]) % gap, 0);
    CU_ASSERT(end[5] - end[0] <= 5 * gap);
    rs_net_destroy(net);
}

static void test_fluid_adaptive_pools_equal_cost_ports(void)
{
    rs_time lo, hi, flo, fhi;
    rs_net *net;
    shifted_permutation(RS_ECMP_FLOW, &flo, &fhi, NULL);
    shifted_permutation(RS_ECMP_ADAPTIVE, &lo, &hi, &net);
    /* Hashed: 8 flows per leaf onto 8 spines collide, the slowest shares a
     * link. Pooled: every stage has as much capacity as its flows need,
     * so every message runs at line rate, as alone. */
    CU_ASSERT(fhi >= flo * 3 / 2);
    CU_ASSERT_EQUAL(lo, hi);
    CU_ASSERT_EQUAL(hi, flo);
    /* A stage's bytes spread evenly over its members: every leaf uplink
     * carried one eighth of its leaf's 16 MiB of wire bytes (to a byte). */
    uint64_t up[16] = { 0 };
    uint32_t nup[16] = { 0 };
    for (uint32_t i = 0; i < rs_net_port_count(net); i++) {
        rs_net_port_info pi;
        CU_ASSERT_EQUAL_FATAL(rs_net_port_info_get(net, i, &pi), RS_OK);
        unsigned leaf;
        if (sscanf(pi.name, "leaf%u.", &leaf) == 1 && strncmp(pi.peer, "spine", 5) == 0 && leaf < 16) {
            if (nup[leaf] && pi.tx_bytes != up[leaf])
                CU_FAIL("uplinks of one leaf carried different bytes");
            up[leaf] = pi.tx_bytes;
            nup[leaf]++;
        }
    }
    uint64_t wire, mw;
    wire = roce_wire(2u << 20, 4096, &mw);
    for (int l = 0; l < 16; l++) {
        CU_ASSERT_EQUAL(nup[l], 8);
        CU_ASSERT_EQUAL(up[l], wire); /* 8 messages of `wire` bytes over 8 uplinks */
    }
    rs_net_destroy(net);
}

/* Spraying at flow level is the same pooled model, and a relayed (PXN)
 * message's network leg is pooled too. */
static void test_fluid_packet_spraying_pools_too(void)
{
    rs_time lo, hi, lo2, hi2;
    shifted_permutation(RS_ECMP_PACKET, &lo, &hi, NULL);
    shifted_permutation(RS_ECMP_ADAPTIVE, &lo2, &hi2, NULL);
    CU_ASSERT_EQUAL(lo, lo2);
    CU_ASSERT_EQUAL(hi, hi2);
}

static void coll_done(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    (void)tag;
    *(int *)ctx = 1;
}

static rs_time run_coll(rs_net_config *c, rs_coll_op op, rs_coll_algo algo, uint64_t bytes)
{
    rs_net *net = rs_fx_net(c);
    rs_comm *comm;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_comm_create_all(c->gpus, &comm, &err), RS_OK);
    rs_coll *coll;
    int done = 0;
    int rc = rs_fx_coll(net, comm, op, algo, bytes, NULL, NULL, coll_done, &done, 0, NULL, &coll, &err);
    if (rc != RS_OK)
        fprintf(stderr, "rs_coll_create: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    CU_ASSERT_EQUAL_FATAL(done, 1);
    rs_time t = rs_coll_end_time(coll) - rs_coll_start_time(coll);
    rs_coll_destroy(coll);
    rs_comm_destroy(comm);
    rs_net_destroy(net);
    return t;
}

/* Ring AllReduce of `bytes` over `gpus` GPUs in HB domains of 4, on a
 * two-tier fat tree and on rail-only: flow level within 5% of packet level. */
static void ring_agreement(uint32_t gpus, uint64_t bytes, rs_transport_kind tr, const char *what)
{
    for (int kind = 0; kind < 2; kind++) {
        rs_time t[2];
        for (int fid = 0; fid < 2; fid++) {
            rs_net_config c;
            rs_fx_config_at(&c, gpus, 4, 16, fid ? RS_FIDELITY_FLOW : RS_FIDELITY_PACKET);
            c.kind = kind ? RS_TOPO_RAIL_ONLY : RS_TOPO_FAT_TREE;
            c.transport = tr;
            t[fid] = run_coll(&c, RS_COLL_ALLREDUCE, RS_ALGO_RING, bytes);
        }
        double err = ((double)t[1] - (double)t[0]) / (double)t[0];
        fprintf(stderr, "\n  ring allreduce %llu MiB / %u GPUs%s %s: packet %.1f us, flow %.1f us, error %+.2f%%\n",
                (unsigned long long)(bytes >> 20), gpus, what, kind ? "rail-only" : "fat-tree",
                rs_time_to_us(t[0]), rs_time_to_us(t[1]), 100 * err);
        CU_ASSERT(err < 0.05 && err > -0.05);
    }
}

/* Slices of one 512 KiB piece: one message per piece at both levels. */
static void test_fluid_ring_allreduce_agrees_with_packet_level(void)
{
    ring_agreement(32, 64u << 20, RS_TRANSPORT_ROCE, "");
}

/* A ring long enough to run as streams at flow level (30 steps x 4 pieces
 * per slice, coll_ring.c): one transfer per rank and channel, still within
 * 5% of the packet level's pieces. */
static void test_fluid_ring_streams_agree_with_packet_level(void)
{
    ring_agreement(16, 128u << 20, RS_TRANSPORT_IDEAL, " as streams");
}

/* Slices of one 128 KiB piece per channel (8 MiB, 32 GPUs, HB 1): one
 * message per piece, each step's piece waiting for the previous step's.
 * At packet level the two channels drift a frame apart per step (the
 * first-joined piece on a NIC ends a frame early, above) until one's
 * latency overlaps the other's transmission; with the two channels in
 * lockstep the flow level had been 25% slow (docs/fidelity.md). */
static void test_fluid_ring_of_single_pieces_agrees_with_packet_level(void)
{
    rs_time t[2];
    for (int fid = 0; fid < 2; fid++) {
        rs_net_config c;
        rs_fx_config_at(&c, 32, 1, 16, fid ? RS_FIDELITY_FLOW : RS_FIDELITY_PACKET);
        t[fid] = run_coll(&c, RS_COLL_ALLREDUCE, RS_ALGO_RING, 8u << 20);
    }
    double err = ((double)t[1] - (double)t[0]) / (double)t[0];
    fprintf(stderr, "\n  ring allreduce 8 MiB / 32 GPUs, HB 1: packet %.1f us, flow %.1f us, error %+.2f%%\n",
            rs_time_to_us(t[0]), rs_time_to_us(t[1]), 100 * err);
    CU_ASSERT(err < 0.02 && err > -0.02);
}

/* Rings long enough to stream (steps x pieces >= 64) but of one piece per
 * slice (llama2-7b's FSDP rings from 128 GPUs): a piece waits for its
 * predecessor's piece of the step before, so the ring runs at its latency
 * chain, not at its slowest hop's rate. The flow level sends a stream per
 * rank and channel, held to that chain (coll_ring.c stream_pace), and
 * stays within 5% of the packet level's pieces: with HB 1 every hop is
 * the network, with HB 4 three of four are NVLink; on rail-only too. */
static void test_fluid_ring_of_one_piece_per_slice_streams_and_agrees(void)
{
    static const struct { uint32_t gpus, hb; uint64_t bytes; } cases[] = {
        { 64, 1, 16u << 20 }, /* 126 steps of one 128 KiB piece */
        { 64, 4, 8u << 20 },  /* 4 channels, 126 steps of one 32 KiB piece */
        { 128, 8, 32u << 20 }, /* 8 channels, 254 steps of one 32 KiB piece */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int kind = 0; kind < 2; kind++) {
            rs_time t[2];
            uint64_t transfers[2];
            for (int fid = 0; fid < 2; fid++) {
                rs_net_config c;
                rs_fx_config_at(&c, cases[i].gpus, cases[i].hb, 16, fid ? RS_FIDELITY_FLOW : RS_FIDELITY_PACKET);
                c.kind = kind ? RS_TOPO_RAIL_ONLY : RS_TOPO_FAT_TREE;
                rs_net *net = rs_fx_net(&c);
                rs_comm *comm;
                rs_err err;
                CU_ASSERT_EQUAL_FATAL(rs_comm_create_all(c.gpus, &comm, &err), RS_OK);
                rs_coll *coll;
                int done = 0;
                CU_ASSERT_EQUAL_FATAL(rs_fx_coll(net, comm, RS_COLL_ALLREDUCE, RS_ALGO_RING, cases[i].bytes, NULL,
                                                 NULL, coll_done, &done, 0, NULL, &coll, &err), RS_OK);
                CU_ASSERT_EQUAL_FATAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
                CU_ASSERT_EQUAL_FATAL(done, 1);
                t[fid] = rs_coll_end_time(coll) - rs_coll_start_time(coll);
                transfers[fid] = rs_coll_transfers(coll);
                rs_coll_destroy(coll);
                rs_comm_destroy(comm);
                rs_net_destroy(net);
            }
            double err = ((double)t[1] - (double)t[0]) / (double)t[0];
            fprintf(stderr, "\n  ring allreduce %llu MiB / %u GPUs, HB %u, %s: packet %.1f us (%llu pieces), "
                    "flow %.1f us (%llu streams), error %+.2f%%\n",
                    (unsigned long long)(cases[i].bytes >> 20), cases[i].gpus, cases[i].hb,
                    kind ? "rail-only" : "fat-tree", rs_time_to_us(t[0]), (unsigned long long)transfers[0],
                    rs_time_to_us(t[1]), (unsigned long long)transfers[1], 100 * err);
            CU_ASSERT(transfers[1] * 64 <= transfers[0]); /* streams: one per rank and channel */
            CU_ASSERT(err < 0.05 && err > -0.05);
        }
}

/* -- the rail-only paper's bandwidth-only model ------------------------------ */

/* Wang et al., "How to Build Low-cost Networks for Large Language Models
 * (without Sacrificing Performance)", 2023: a collective's time is its
 * bytes over the bandwidth of each stage of the hierarchical collective,
 * no latency, no contention. A ring stage over n ranks moves (n-1)/n of
 * its buffer per rank for ReduceScatter and AllGather, twice that for
 * AllReduce. Bandwidths are the links' payload rates: the HB domain's
 * per-GPU rate less the 16-byte unit header per hb_mtu, the NIC's less 82
 * bytes of RoCE headers per MTU packet. railsim pipelines the stages over
 * nseg segments (coll_hier.c), so the stages form a flow shop with equal
 * segments: sum of one segment's stage times plus (nseg - 1) times the
 * longest. (An AllReduce's two NVLink stages of different segments may
 * overlap and share the NVLink ports; off the critical path while the
 * rail stage is the longest, as in the cases below.) */
static double ring_stage_s(rs_coll_op op, uint32_t n, double bytes, double bps)
{
    double f = (double)(n - 1) / n * (op == RS_COLL_ALLREDUCE ? 2.0 : 1.0);
    return f * bytes * 8.0 / bps;
}

static double paper_hier_s(const rs_net_config *c, rs_coll_op op, uint64_t bytes, uint32_t nseg)
{
    uint32_t K = c->hb_size, N = c->gpus / K;
    double hb = c->hb_gbps * 1e9 * c->hb_mtu / (c->hb_mtu + 16.0);
    double nic = c->nic_gbps * 1e9 * c->mtu / (c->mtu + 82.0);
    double seg = (double)bytes / nseg, t[3];
    uint32_t np;
    if (op == RS_COLL_ALLREDUCE) {
        t[0] = ring_stage_s(RS_COLL_REDUCESCATTER, K, seg, hb);
        t[1] = ring_stage_s(RS_COLL_ALLREDUCE, N, seg / K, nic);
        t[2] = ring_stage_s(RS_COLL_ALLGATHER, K, seg, hb);
        np = 3;
    } else if (op == RS_COLL_REDUCESCATTER) {
        t[0] = ring_stage_s(op, K, seg, hb);
        t[1] = ring_stage_s(op, N, seg / K, nic);
        np = 2;
    } else {
        t[0] = ring_stage_s(op, N, seg / K, nic);
        t[1] = ring_stage_s(op, K, seg, hb);
        np = 2;
    }
    double sum = 0, max = 0;
    for (uint32_t i = 0; i < np; i++) {
        sum += t[i];
        max = t[i] > max ? t[i] : max;
    }
    return sum + (nseg - 1) * max;
}

/* Its regime: large buffers, hierarchical collectives, every cross-domain
 * ring on one rail (rail-only, whole domains). 128 GPUs in 16 domains of
 * 8, 1 GiB (4 segments of 256 MiB), 400 and 200 Gb/s NICs: the flow level
 * is within 2% of the model. */
static void test_fluid_reproduces_rail_only_paper_model(void)
{
    const struct { rs_coll_op op; double nic; } cases[] = {
        { RS_COLL_ALLGATHER, 400 }, { RS_COLL_REDUCESCATTER, 400 }, { RS_COLL_ALLREDUCE, 400 },
        { RS_COLL_ALLREDUCE, 200 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rs_net_config c;
        rs_fx_config_at(&c, 128, 8, 64, RS_FIDELITY_FLOW);
        c.kind = RS_TOPO_RAIL_ONLY;
        c.nic_gbps = c.link_gbps = cases[i].nic;
        uint64_t bytes = 1ull << 30;
        double sim = rs_time_to_us(run_coll(&c, cases[i].op, RS_ALGO_HIERARCHICAL, bytes)) * 1e-6;
        double model = paper_hier_s(&c, cases[i].op, bytes, 4);
        double err = (sim - model) / model;
        fprintf(stderr, "\n  hierarchical %s 1 GiB / 128 GPUs, %.0f Gb/s NICs: model %.1f us, flow %.1f us, %+.2f%%\n",
                rs_coll_op_name(cases[i].op), cases[i].nic, model * 1e6, sim * 1e6, 100 * err);
        CU_ASSERT(err < 0.02 && err > -0.02);
    }
}

/* Same inputs, same outputs: two flow-level runs give identical message
 * times. */
static void test_fluid_is_deterministic(void)
{
    rs_net_msg_time *first = NULL;
    size_t n0 = 0;
    for (int run = 0; run < 2; run++) {
        rs_net_config c;
        rs_fx_config_at(&c, 32, 4, 8, RS_FIDELITY_FLOW);
        c.kind = RS_TOPO_RAIL_ONLY;
        rs_net *net = rs_fx_net(&c);
        rs_comm *comm;
        rs_err err;
        CU_ASSERT_EQUAL_FATAL(rs_comm_create_all(32, &comm, &err), RS_OK);
        rs_coll *coll;
        int done = 0;
        CU_ASSERT_EQUAL_FATAL(rs_fx_coll(net, comm, RS_COLL_ALLTOALL, RS_ALGO_DIRECT, 8u << 20, NULL, NULL,
                                         coll_done, &done, 0, NULL, &coll, &err), RS_OK);
        CU_ASSERT_EQUAL_FATAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
        size_t n;
        const rs_net_msg_time *t = rs_net_msg_times(net, &n);
        if (run == 0) {
            first = malloc(n * sizeof *first);
            memcpy(first, t, n * sizeof *first);
            n0 = n;
        } else {
            CU_ASSERT_EQUAL(n, n0);
            CU_ASSERT(n == n0 && memcmp(first, t, n * sizeof *t) == 0);
        }
        rs_coll_destroy(coll);
        rs_comm_destroy(comm);
        rs_net_destroy(net);
    }
    free(first);
}

static void test_fluid_rejects_unknown_fidelity(void)
{
    rs_net_config c;
    rs_fx_config_at(&c, 8, 1, 8, (rs_fidelity)7);
    rs_fx_refused(&c, "fidelity");
}

static const rs_cu_test mmf_tests[] = {
    RS_CU_TEST(test_mmf_one_bottleneck_gives_equal_shares),
    RS_CU_TEST(test_mmf_classic_example_is_exact),
    RS_CU_TEST(test_mmf_classes_are_served_strictly),
    RS_CU_TEST(test_mmf_rejects_bad_paths),
    RS_CU_TEST(test_mmf_incremental_equals_full_after_random_events),
    RS_CU_TEST(test_mmf_flow_cap_takes_cap_and_leaves_the_rest),
    RS_CU_TEST(test_mmf_incremental_equals_full_with_caps),
};


/* -- record lifecycle -------------------------------------------------------- */

typedef struct chain {
    uint32_t left;   /* messages still to send */
    uint32_t gpus;
    uint64_t x;      /* varies pairs and sizes deterministically */
} chain;

static void chain_next(void *ctx, rs_net *net, uint64_t tag)
{
    (void)tag;
    chain *c = ctx;
    if (c->left == 0)
        return;
    c->left--;
    c->x = c->x * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t a = (uint32_t)(c->x >> 33) % c->gpus, b = (uint32_t)(c->x >> 17) % c->gpus;
    uint64_t bytes = 1 + (c->x >> 40) % (3u << 20);
    CU_ASSERT_EQUAL(rs_fx_send(net, a, b, bytes, chain_next, c, 0), RS_OK);
}

/* Memory follows the transfers in flight: 4 chains of 5,000 messages each
 * (relayed across rails too, on rail-only) leave a handful of message and
 * flow records, and every flow still got its own serial (entropy). */
static void test_fluid_records_follow_transfers_in_flight(void)
{
    for (int kind = 0; kind < 2; kind++) {
        rs_net_config c;
        rs_fx_config_at(&c, 32, 4, 8, RS_FIDELITY_FLOW);
        c.kind = kind ? RS_TOPO_RAIL_ONLY : RS_TOPO_FAT_TREE;
        rs_net *net = rs_fx_net(&c);
        chain ch[4];
        for (int i = 0; i < 4; i++) {
            ch[i] = (chain){ 5000, 32, (uint64_t)i + 1 };
            chain_next(&ch[i], net, 0);
        }
        CU_ASSERT_EQUAL_FATAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
        rs_net_stats st;
        rs_net_stats_get(net, &st);
        CU_ASSERT_EQUAL(st.msgs, 4 * 5001 - 4);
        CU_ASSERT_EQUAL(st.msgs_done, st.msgs);
        CU_ASSERT(net->nmsgs <= 8);
        CU_ASSERT(net->nflows <= 16);
        CU_ASSERT(net->flow_serial >= st.msgs - 4 * 200); /* all but self-sends made flows */
        size_t n;
        rs_net_msg_times(net, &n);
        CU_ASSERT_EQUAL(n, st.msgs);
        rs_net_destroy(net);
    }
}

/* A relayed message (rail-only, GPU 0 -> GPU 9 through GPU 1) at flow
 * level is one fluid flow over both legs; with relay_pipeline it runs as
 * the chunk pipeline instead (one flow per chunk and leg). Alone, the two
 * models must agree: on the time within a picosecond per chunk (each
 * chunk's transfer rounds up on its own) and on every counter. The packet
 * level agrees within 0.5%. */
static void test_fluid_relay_as_one_flow_equals_chunk_pipeline(void)
{
    const uint64_t sizes[] = { 0, 100, 512u << 10, (1u << 20) + 3, 3u << 20 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        rs_time t[3];
        rs_net_stats st[3];
        for (int v = 0; v < 3; v++) { /* one flow, chunk pipeline, packet level */
            rs_net_config c;
            rs_fx_config_at(&c, 16, 8, 64, v == 2 ? RS_FIDELITY_PACKET : RS_FIDELITY_FLOW);
            c.kind = RS_TOPO_RAIL_ONLY;
            c.relay_pipeline = v == 1;
            rs_net *net = rs_fx_net(&c);

            CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, 0, 9, sizes[i], NULL, NULL, 0), RS_OK);
            CU_ASSERT_EQUAL_FATAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
            t[v] = rs_fx_only_fct(net);
            rs_net_stats_get(net, &st[v]);
            rs_net_destroy(net);
        }
        uint64_t chunks = sizes[i] ? (sizes[i] + (512u << 10) - 1) / (512u << 10) : 1;
        printf("\n  relay %llu B: one flow %llu ps, chunk pipeline %llu ps, packet %llu ps\n",
               (unsigned long long)sizes[i], (unsigned long long)t[0], (unsigned long long)t[1],
               (unsigned long long)t[2]);
        CU_ASSERT(t[0] <= t[1] + chunks && t[1] <= t[0] + chunks);
        CU_ASSERT_EQUAL(st[0].hb_bytes, sizes[i]);
        CU_ASSERT_EQUAL(st[0].nic_bytes, sizes[i]);
        CU_ASSERT_EQUAL(st[0].hb_bytes, st[1].hb_bytes);
        CU_ASSERT_EQUAL(st[0].goodput_bytes, st[1].goodput_bytes);
        CU_ASSERT_EQUAL(st[0].data_pkts, st[1].data_pkts);
        CU_ASSERT_EQUAL(st[0].packet_hops, st[1].packet_hops);
        if (sizes[i] >= (512u << 10)) {
            double e = ((double)t[0] - (double)t[2]) / (double)t[2];
            CU_ASSERT(e > -0.005 && e < 0.005);
        }
    }
}

/* -- DCQCN at flow level ------------------------------------------------------ */

typedef struct cc_probe {
    double rc, rt, alpha;
    uint64_t rate;
    int ok;
} cc_probe;

static void probe_cc(void *ctx, rs_net *net, uint64_t f)
{
    cc_probe *p = ctx;
    p->ok = rs_fluid_flow_rate(net, (uint32_t)f, &p->rate) == RS_OK;
    if (rs_fluid_flow_dcqcn(net, (uint32_t)f, &p->rc, &p->rt, &p->alpha) != RS_OK)
        p->rc = p->rt = p->alpha = -1;
}

#define US 1000000ull
#define NEAR(x, want) ((x) > (want) * (1 - 1e-9) && (x) < (want) * (1 + 1e-9))

/* Two 8 MiB flows into one GPU (transport.cc=dcqcn, the paper's constants):
 * the shared port's queue passes Kmin after ~2 us and the first CNP, ~7 us
 * in, halves both (alpha starts at 1): Rc 200 Gb/s, Rt 400. At 200 + 200
 * the port is exactly full, so the queue stays above Kmin and the next
 * CNP, one cnp_interval later (~57 us), halves them again: Rc 100, Rt 200.
 * Their backlog keeps the port busy at 200 each until it runs out
 * (~72 us); then they run at Rc, and the rate timer's fast recovery
 * (55 us after the cut) takes Rc to (Rt + Rc) / 2 = 150, then 175. */
static void test_fluid_dcqcn_cuts_twice_at_full_load_then_recovers_by_timer(void)
{
    rs_net_config c;
    rs_fx_config_at(&c, 8, 1, 8, RS_FIDELITY_FLOW);
    rs_dcqcn_profile_set(&c.dcqcn, RS_DCQCN_PAPER_2015);
    rs_net *net = rs_fx_net(&c);
    CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, 1, 0, 8u << 20, NULL, NULL, 0), RS_OK);
    CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, 2, 0, 8u << 20, NULL, NULL, 1), RS_OK);
    const rs_time at[5] = { 30 * US, 65 * US, 90 * US, 140 * US, 190 * US };
    cc_probe p[5];
    for (int i = 0; i < 5; i++)
        rs_net_at(net, at[i], probe_cc, &p[i], 0);
    CU_ASSERT_EQUAL_FATAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    for (int i = 0; i < 5; i++)
        CU_ASSERT_EQUAL(p[i].ok, 1);
    CU_ASSERT(NEAR(p[0].rc, 200e9) && NEAR(p[0].rt, 400e9) && NEAR(p[0].alpha, 1.0));
    CU_ASSERT_EQUAL(p[0].rate, 200 * G);
    CU_ASSERT(NEAR(p[1].rc, 100e9) && NEAR(p[1].rt, 200e9));
    CU_ASSERT_EQUAL(p[1].rate, 200 * G); /* the backlog, not Rc */
    CU_ASSERT(NEAR(p[2].rc, 100e9));
    CU_ASSERT_EQUAL(p[2].rate, 100 * G);
    CU_ASSERT(NEAR(p[3].rc, 150e9));
    CU_ASSERT_EQUAL(p[3].rate, 150 * G);
    CU_ASSERT(NEAR(p[4].rc, 175e9));
    CU_ASSERT_EQUAL(p[4].rate, 175 * G);
    rs_net_destroy(net);
}

/* Completion time of the (only) message sent by GPU src. */
static rs_time fct_of(rs_net *net, uint32_t src)
{
    size_t n;
    const rs_net_msg_time *t = rs_net_msg_times(net, &n);
    for (size_t i = 0; i < n; i++)
        if (t[i].src == src)
            return t[i].end - t[i].start;
    CU_FAIL("message not found");
    return 0;
}

/* The survivor of a collision keeps its cut rate (the paper's constants):
 * a 1 MiB and an 8 MiB flow into one GPU are cut to 200 Gb/s each; when the short one ends
 * (~44 us) the long one, alone, drains its backlog and then runs at its
 * Rc of 200, not at the line rate max-min would give it, until its rate
 * timer (~62 us) takes it to 300. With transport.cc=none it runs at 400.
 * The packet level agrees on the long flow's time within 3% (max-min
 * alone is ~14% faster). */
static void test_fluid_dcqcn_survivor_keeps_its_cut_rate(void)
{
    rs_time fct[3];
    for (int v = 0; v < 3; v++) {
        rs_net_config c;
        rs_fx_config_at(&c, 8, 1, 8, v == 2 ? RS_FIDELITY_PACKET : RS_FIDELITY_FLOW);
        rs_dcqcn_profile_set(&c.dcqcn, RS_DCQCN_PAPER_2015);
        if (v == 1)
            c.cc = RS_CC_NONE;
        rs_net *net = rs_fx_net(&c);
        CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, 1, 0, 1u << 20, NULL, NULL, 0), RS_OK);
        CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, 2, 0, 8u << 20, NULL, NULL, 1), RS_OK);
        cc_probe p[2];
        if (v < 2) {
            rs_net_at(net, 58 * US, probe_cc, &p[0], 1);
            rs_net_at(net, 70 * US, probe_cc, &p[1], 1);
        }
        CU_ASSERT_EQUAL_FATAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
        fct[v] = fct_of(net, 2);
        if (v == 0) {
            CU_ASSERT(p[0].ok && p[1].ok);
            CU_ASSERT_EQUAL(p[0].rate, 200 * G);
            CU_ASSERT(NEAR(p[0].rc, 200e9));
            CU_ASSERT_EQUAL(p[1].rate, 300 * G);
        } else if (v == 1) {
            CU_ASSERT(p[0].ok);
            CU_ASSERT_EQUAL(p[0].rate, 400 * G);
            CU_ASSERT(p[0].rc < 0); /* no DCQCN state */
        }
        rs_net_destroy(net);
    }
    double err = ((double)fct[0] - (double)fct[2]) / (double)fct[2];
    double mm = ((double)fct[1] - (double)fct[2]) / (double)fct[2];
    printf("\n  survivor 8 MiB: packet %.1f us, flow %.1f us (%+.2f%%), max-min %.1f us (%+.2f%%)\n",
           fct[2] / 1e6, fct[0] / 1e6, 100 * err, fct[1] / 1e6, 100 * mm);
    CU_ASSERT(err > -0.03 && err < 0.03);
}

/* A 4:1 incast of 2, 4, 6 and 8 MiB under the default (ConnectX) DCQCN:
 * the senders' backlogs reach PFC's bound and stay there while their CNPs
 * and byte-counter increases come every few microseconds, so they run
 * ahead of the engine (fluid_dcqcn.c): Rc swings between about 270 and
 * 400 Gb/s above a share of 100 to 200. Every message ends at the
 * picosecond it ends with one engine event per DCQCN event, with and
 * without probes that bring the flows up to arbitrary instants, and the
 * probes read the same rates and DCQCN state; the run takes several times
 * fewer events. */
static void test_fluid_dcqcn_saturated_flows_run_ahead_exactly(void)
{
    enum { PROBES = 12 };
    rs_time fct[4][4];
    uint64_t events[4];
    cc_probe p[4][PROBES];
    for (int v = 0; v < 4; v++) {
        rs_net_config c;
        rs_fx_config_at(&c, 8, 1, 8, RS_FIDELITY_FLOW);
        rs_net *net = rs_fx_net(&c);
        CU_ASSERT_PTR_NOT_NULL_FATAL(fluid_of(net)->dq);
        fluid_of(net)->dq_ahead = v & 1 ? RS_FLUID_DQ_AHEAD : 0;
        for (uint32_t i = 0; i < 4; i++)
            CU_ASSERT_EQUAL_FATAL(rs_fx_send(net, 1 + i, 0, (2u + 2u * i) << 20, NULL, NULL, i), RS_OK);
        for (int i = 0; v >= 2 && i < PROBES; i++)
            rs_net_at(net, (rs_time)(13 + 29 * i) * US + 7 * (rs_time)i, probe_cc, &p[v][i], 3);
        CU_ASSERT_EQUAL_FATAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
        for (uint32_t i = 0; i < 4; i++)
            fct[v][i] = fct_of(net, 1 + i);
        events[v] = rs_sim_events_run(net->sim);
        rs_net_destroy(net);
    }
    printf("\n  incast 4:1: %llu events one per DCQCN event, %llu run ahead (%llu, %llu with probes)\n",
           (unsigned long long)events[0], (unsigned long long)events[1], (unsigned long long)events[2],
           (unsigned long long)events[3]);
    for (int v = 1; v < 4; v++)
        for (int i = 0; i < 4; i++)
            CU_ASSERT_EQUAL(fct[v][i], fct[0][i]);
    for (int i = 0; i < PROBES; i++) {
        CU_ASSERT(p[2][i].ok && p[3][i].ok);
        CU_ASSERT_EQUAL(p[2][i].rate, p[3][i].rate);
        CU_ASSERT(p[2][i].rc == p[3][i].rc && p[2][i].rt == p[3][i].rt && p[2][i].alpha == p[3][i].alpha);
    }
    for (int i = 0; i < PROBES; i++) /* cut again and again, delivered at their share */
        CU_ASSERT(p[2][i].rc > (double)p[2][i].rate && p[2][i].rc < 400e9 && p[2][i].alpha < 1);
    CU_ASSERT(events[1] * 4 < events[0]);
}

static const rs_cu_test fluid_tests[] = {
    RS_CU_TEST(test_fluid_single_flow_time_is_exact),
    RS_CU_TEST(test_fluid_hb_flow_matches_packet_within_rounding),
    RS_CU_TEST(test_fluid_incast_gets_equal_shares),
    RS_CU_TEST(test_fluid_paths_equal_packet_paths),
    RS_CU_TEST(test_fluid_incremental_equals_full_during_run),
    RS_CU_TEST(test_fluid_first_joined_leaves_round_robin_a_frame_early),
    RS_CU_TEST(test_fluid_ring_allreduce_agrees_with_packet_level),
    RS_CU_TEST(test_fluid_ring_of_single_pieces_agrees_with_packet_level),
    RS_CU_TEST(test_fluid_is_deterministic),
    RS_CU_TEST(test_fluid_rejects_unknown_fidelity),
    RS_CU_TEST(test_fluid_records_follow_transfers_in_flight),
    RS_CU_TEST(test_fluid_ring_streams_agree_with_packet_level),
    RS_CU_TEST(test_fluid_ring_of_one_piece_per_slice_streams_and_agrees),
    RS_CU_TEST(test_fluid_reproduces_rail_only_paper_model),
    RS_CU_TEST(test_fluid_relay_as_one_flow_equals_chunk_pipeline),
    RS_CU_TEST(test_fluid_adaptive_pools_equal_cost_ports),
    RS_CU_TEST(test_fluid_sprayed_tail_at_a_bundle),
    RS_CU_TEST(test_fluid_packet_spraying_pools_too),
    RS_CU_TEST(test_fluid_dcqcn_cuts_twice_at_full_load_then_recovers_by_timer),
    RS_CU_TEST(test_fluid_dcqcn_survivor_keeps_its_cut_rate),
    RS_CU_TEST(test_fluid_dcqcn_saturated_flows_run_ahead_exactly),
};

static void register_suites(void)
{
    RS_CU_SUITE("mmf", mmf_tests);
    RS_CU_SUITE("fluid", fluid_tests);
}

int main(void) { return rs_cu_run(register_suites); }
