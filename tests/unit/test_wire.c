/*
 * test_wire.c - the wire format between a split run's processes (wire.h,
 * split_wire.h; docs/parallel.md, "Wire format"), without MPI: the header
 * check alone, then whole split runs on a stand-in communicator
 * (standin.h) whose other rank sends what each test writes. A message
 * that is not railsim's, of another version, cut short, of counts that
 * do not add up, or carrying a record this process cannot hold stops the
 * run with RS_EFORMAT and one sentence naming what; one that is well
 * formed goes through.
 */
#define _DEFAULT_SOURCE /* mincore */
#include "cu_main.h"
#include "standin.h"

#include <sys/mman.h>
#include <unistd.h>

/* The sentence why names needle (NULL: nothing to name). */
static void expect_msg(const char *why, const char *needle)
{
    if (needle && !strstr(why, needle)) {
        fprintf(stderr, "\n  '%s' lacks '%s'\n", why, needle);
        CU_FAIL("message");
    }
}

/* -- the header alone ---------------------------------------------------- */

static void expect_read(const void *b, size_t n, rs_wire_kind kind, uint32_t from, int rc, const char *needle)
{
    rs_wire w;
    char why[256] = "";
    CU_ASSERT_EQUAL(rs_wire_read(b, n, kind, from, 2, &w, why, sizeof why), rc);
    expect_msg(why, needle);
}

static void test_header_is_checked(void)
{
    char b[64];
    memset(b, 0, sizeof b);
    rs_wire w = rs_wire_make(RS_WIRE_WINDOW, 1, 40);
    memcpy(b, &w, sizeof w);
    expect_read(b, sizeof w + 40, RS_WIRE_WINDOW, UINT32_MAX, RS_OK, NULL);
    expect_read(b, 10, RS_WIRE_WINDOW, UINT32_MAX, RS_EFORMAT, "a window message: 10 bytes, expected at least the 24");
    expect_read(NULL, 0, RS_WIRE_TAIL, 1, RS_EFORMAT, "an end-of-run message from rank 1: 0 bytes");
    expect_read(b, sizeof w + 39, RS_WIRE_WINDOW, UINT32_MAX, RS_EFORMAT, "its header announces 40 bytes, 39 came");
    expect_read(b, sizeof w + 40, RS_WIRE_TAIL, 1, RS_EFORMAT, "an end-of-run message from rank 1: its header says a "
                                                                "window message");
    expect_read(b, sizeof w + 40, RS_WIRE_WINDOW, 0, RS_EFORMAT, "its header says rank 1, expected the sender's");
    w.from = 2;
    memcpy(b, &w, sizeof w);
    expect_read(b, sizeof w + 40, RS_WIRE_WINDOW, UINT32_MAX, RS_EFORMAT, "says rank 2, expected a rank of the run");
    w = rs_wire_make(RS_WIRE_WINDOW, 1, 40);
    w.version = 3; /* before the end-of-run message stopped carrying completion times (2026-12-05) */
    memcpy(b, &w, sizeof w);
    expect_read(b, sizeof w + 40, RS_WIRE_WINDOW, UINT32_MAX, RS_EFORMAT, "wire format version 3, expected 4");
    w.version = RS_WIRE_VERSION;
    w.magic = 0x12345678u;
    memcpy(b, &w, sizeof w);
    expect_read(b, sizeof w + 40, RS_WIRE_WINDOW, UINT32_MAX, RS_EFORMAT,
                "magic number 0x12345678, expected 0x57505352 (not railsim's wire format)");
}

/* -- whole runs on the stand-in ------------------------------------------ */

/* Run the stand-in's network with rank 1 sending win (n bytes) in the
 * first window and tail at the end (NULL: an empty well-formed one);
 * expect RS_EFORMAT naming `needle`, or (needle NULL) no complaint. */
static void expect_run(const void *win, size_t n, const void *tail, size_t ntail, const char *needle)
{
    char et[RS_STANDIN_TAIL];
    rs_standin s = { win, n, tail, ntail, 0 };
    if (!tail) {
        s.tail = et;
        s.ntail = rs_standin_empty_tail(et);
    }
    rs_net *net = rs_standin_net(&s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(net);
    int rc = rs_net_run(net, RS_TIME_MAX);
    const char *why = rs_net_part_errmsg(net);
    if (needle) {
        CU_ASSERT_EQUAL(rc, RS_EFORMAT);
        expect_msg(why, needle);
    } else {
        CU_ASSERT_NOT_EQUAL(rc, RS_EFORMAT);
        CU_ASSERT_STRING_EQUAL(why, "");
    }
    CU_ASSERT(s.exchanges >= 1);
    rs_net_destroy(net);
}

/* A window message of rank 1: its header, then nf frames as filled by
 * the caller (frames[0..nf)), into b. */
static size_t window(char *b, const part_frame *frames, uint32_t nf)
{
    part_hdr h;
    memset(&h, 0, sizeof h);
    size_t n = PART_HDR_ROOM + nf * sizeof(part_frame);
    h.w = rs_wire_make(RS_WIRE_WINDOW, 1, n - sizeof h.w);
    h.nf = nf;
    memset(b, 0, PART_HDR_ROOM);
    memcpy(b, &h, sizeof h);
    if (nf)
        memcpy(b + PART_HDR_ROOM, frames, nf * sizeof(part_frame));
    return n;
}

/* A data frame of flow 4 (GPU 4 to GPU 0, made alike in both ranks: no
 * home) arriving at rank 0 over the first cable from rank 1, at 1 ms. */
static part_frame data_frame(const rs_net *net)
{
    part_frame f;
    memset(&f, 0, sizeof f);
    uint32_t L = rs_standin_cut_port(net, 0);
    f.t = 1000000000;
    f.pkt.link = L;
    f.pkt.to_port = L == RS_NONE ? 0 : net->ports[L].peer_port;
    f.pkt.to_node = L == RS_NONE ? 0 : net->ports[L].peer_node;
    f.pkt.type = RS_PKT_DATA;
    f.pkt.prio = 3;
    f.pkt.src = 4;
    f.pkt.dst = 0;
    f.pkt.payload = 1024;
    f.pkt.wire = 1106;
    f.pkt.in_port = RS_NONE;
    frame_home_put(&f.pkt, RS_NONE, 4);
    return f;
}

static void test_window_garbage_is_refused(void)
{
    expect_run("not a message", 13, NULL, 0, "a window message: 13 bytes, expected at least the 24 of its header");
    char b[512];
    rs_wire w = rs_wire_make(RS_WIRE_WINDOW, 1, 0);
    w.magic = 0xdeadbeefu;
    memcpy(b, &w, sizeof w);
    expect_run(b, sizeof w, NULL, 0, "magic number 0xdeadbeef");
    w = rs_wire_make(RS_WIRE_WINDOW, 1, 100);
    w.version = 7;
    memcpy(b, &w, sizeof w);
    expect_run(b, sizeof w + 100, NULL, 0, "wire format version 7, expected 4");
    w = rs_wire_make(RS_WIRE_WINDOW, 1, 100);
    memcpy(b, &w, sizeof w);
    expect_run(b, sizeof w + 50, NULL, 0, "its header announces 100 bytes, 50 came");
    /* Counts that announce a frame the message does not hold. */
    size_t n = window(b, NULL, 0);
    part_hdr h;
    memcpy(&h, b, sizeof h);
    h.nf = 1;
    memcpy(b, &h, sizeof h);
    expect_run(b, n, NULL, 0, "a window message from rank 1: 48 bytes after its header, its counts make 120");
    /* A window message that claims to come from rank 0 itself. */
    h.nf = 0;
    h.w.from = 0;
    memcpy(b, &h, sizeof h);
    expect_run(b, n, NULL, 0, "a window message from rank 0: its header names this rank as the sender");
}

static void test_window_records_are_checked(void)
{
    rs_standin probe = { 0 };
    rs_net *net = rs_standin_net(&probe);
    CU_ASSERT_PTR_NOT_NULL_FATAL(net);
    part_frame good = data_frame(net);
    rs_net_destroy(net);
    CU_ASSERT_NOT_EQUAL_FATAL(good.pkt.link, RS_NONE);
    char b[512];
    /* A well-formed frame of a flow both ranks hold goes through. */
    expect_run(b, window(b, &good, 1), NULL, 0, NULL);
    part_frame f = good;
    f.pkt.link = 100000;
    expect_run(b, window(b, &f, 1), NULL, 0, "a frame on port 100000, not a link into this rank");
    f = good;
    f.pkt.to_node = good.pkt.to_node + 1;
    expect_run(b, window(b, &f, 1), NULL, 0, "not a link into this rank");
    f = good;
    f.pkt.prio = 9;
    expect_run(b, window(b, &f, 1), NULL, 0, "a frame of type 0, priority 9");
    f = good;
    f.pkt.payload = 5000; /* more payload than wire */
    expect_run(b, window(b, &f, 1), NULL, 0, "a frame of type 0, priority 3, 5000 bytes of payload in 1106");
    f = good; /* a NAK's payload field holds its SACK PSN: not a size */
    f.pkt.type = RS_PKT_NAK;
    f.pkt.src = 0;
    f.pkt.dst = 4;
    f.pkt.psn = 2;
    f.pkt.sack = 9;
    f.pkt.wire = 4;
    expect_run(b, window(b, &f, 1), NULL, 0, NULL);
    f = good;
    f.pkt.type = 17;
    expect_run(b, window(b, &f, 1), NULL, 0, "a frame of type 17");
    f = good;
    frame_home_put(&f.pkt, RS_NONE, 4000);
    expect_run(b, window(b, &f, 1), NULL, 0, "a frame of flow 4000 of rank 4294967295, PSN 0");
    f = good;
    f.pkt.psn = 1u << 30;
    expect_run(b, window(b, &f, 1), NULL, 0, "PSN 1073741824");
    f = good;
    frame_home_put(&f.pkt, 1, 3); /* rank 1 never sent a mirror of its flow 3 */
    expect_run(b, window(b, &f, 1), NULL, 0, "a frame of flow 3 of rank 1");
    frame_home_put(&f.pkt, 5, 3); /* a rank that does not exist */
    expect_run(b, window(b, &f, 1), NULL, 0, "a frame of flow 3 of rank 5");
    /* A report for a flow this rank does not hold. */
    part_hdr h;
    memset(&h, 0, sizeof h);
    part_rep rp = { 70000, 1, 1, 0 };
    h.w = rs_wire_make(RS_WIRE_WINDOW, 1, PART_HDR_ROOM - sizeof h.w + sizeof rp);
    h.nr = 1;
    memset(b, 0, PART_HDR_ROOM);
    memcpy(b, &h, sizeof h);
    memcpy(b + PART_HDR_ROOM, &rp, sizeof rp);
    expect_run(b, PART_HDR_ROOM + sizeof rp, NULL, 0, "a report for flow 70000, not one of this rank's");
    /* A timer of a callback never registered. */
    part_timer tm = { 2000000000, 1, 0, 12345, 0 };
    h.nr = 0;
    h.ne = 1;
    h.w.len = PART_HDR_ROOM - sizeof h.w + sizeof tm;
    memcpy(b, &h, sizeof h);
    memcpy(b + PART_HDR_ROOM, &tm, sizeof tm);
    expect_run(b, PART_HDR_ROOM + sizeof tm, NULL, 0, "a timer of callback 12345");
    /* A flow to reuse that was never mirrored here. */
    uint32_t id = 9;
    h.ne = 0;
    h.nd = 1;
    h.w.len = PART_HDR_ROOM - sizeof h.w + sizeof id;
    memcpy(b, &h, sizeof h);
    memcpy(b + PART_HDR_ROOM, &id, sizeof id);
    expect_run(b, PART_HDR_ROOM + sizeof id, NULL, 0, "flow 9 to reuse has no mirror here");
    /* A relay's network-leg chunk (docs/parallel.md, "PXN relays"): one
     * whose message never came (its chunk 0), and a chunk 0 on a network
     * without HB domains (no relay), cannot be mirrored. */
    rs_part_send sr;
    memset(&sr, 0, sizeof sr);
    sr.bytes = 1u << 20;
    sr.home = 1;
    sr.home_id = 3;
    sr.src = 4;
    sr.dst = 0;
    sr.cb = RS_NONE;
    sr.nchunks = 2;
    sr.chunk = 1;
    sr.leg_src = 4;
    h.nd = 0;
    h.ns = 1;
    h.w.len = PART_HDR_ROOM - sizeof h.w + sizeof sr;
    memcpy(b, &h, sizeof h);
    memcpy(b + PART_HDR_ROOM, &sr, sizeof sr);
    expect_run(b, PART_HDR_ROOM + sizeof sr, NULL, 0,
               "chunk 1 of 2 of its message 0 from GPU 4 to 0 of 1048576 bytes, which cannot be mirrored");
    sr.chunk = 0;
    memcpy(b + PART_HDR_ROOM, &sr, sizeof sr);
    expect_run(b, PART_HDR_ROOM + sizeof sr, NULL, 0, "chunk 0 of 2 of its message 0");
}

static void test_tail_is_checked(void)
{
    expect_run(NULL, 0, "short", 5, "an end-of-run message from rank 1: 5 bytes, expected at least the 24");
    char b[sizeof(rs_wire) + sizeof(part_tail) + sizeof(uint64_t) + sizeof(rs_port_count) + 64];
    size_t n = rs_standin_empty_tail(b);
    /* Its header from another rank than the one it came from. */
    rs_wire w;
    memcpy(&w, b, sizeof w);
    w.from = 0;
    memcpy(b, &w, sizeof w);
    expect_run(NULL, 0, b, n, "its header says rank 0, expected the sender's");
    /* A port that is rank 0's, with the bytes for it. */
    n = rs_standin_empty_tail(b);
    part_tail t;
    memcpy(&t, b + sizeof w, sizeof t);
    t.nports = 1;
    memcpy(b + sizeof w, &t, sizeof t);
    uint64_t id = 0; /* GPU 0's NIC: rank 0's */
    memcpy(b + n, &id, sizeof id);
    memset(b + n + sizeof id, 0, sizeof(rs_port_count));
    n += sizeof id + sizeof(rs_port_count);
    w = rs_wire_make(RS_WIRE_TAIL, 1, n - sizeof w);
    memcpy(b, &w, sizeof w);
    expect_run(NULL, 0, b, n, "it names a port that is not its own");
    /* Counts that announce more than came: a histogram, 16 bytes of it. */
    t.nports = 0;
    t.fct_hist = 1;
    memcpy(b + sizeof w, &t, sizeof t);
    n = sizeof w + sizeof t + 2 * sizeof(uint64_t);
    w = rs_wire_make(RS_WIRE_TAIL, 1, n - sizeof w);
    memcpy(b, &w, sizeof w);
    expect_run(NULL, 0, b, n, "its counts do not add up to its length");
    /* Completions it did not count when the percentiles were selected
     * together (rank 1 of the stand-in counts none). */
    t.fct_hist = 0;
    t.fct_n = 5;
    memcpy(b + sizeof w, &t, sizeof t);
    n = sizeof w + sizeof t;
    w = rs_wire_make(RS_WIRE_TAIL, 1, n - sizeof w);
    memcpy(b, &w, sizeof w);
    expect_run(NULL, 0, b, n, "its completions are not what it counted before");
}

/* Messages inside rank 0's leaves of the stand-in's network (GPUs 0 and
 * 1, 2 and 3 share a leaf), of sizes that make distinct completion
 * times, run serially or split on s with the kept list cut to `keep`:
 * the completion statistics rank 0 reports. */
static int leaf_fct(rs_standin *s, size_t keep, rs_net_fct *f)
{
    rs_net *net = rs_standin_bare_net();
    if (!net)
        return RS_ENOMEM;
    net->msg_times_keep = keep;
    int rc = RS_OK;
    for (uint32_t k = 0; rc == RS_OK && k < 24; k++) {
        rs_net_msg m;
        rs_net_msg_init(&m);
        m.src = k % 4;
        m.dst = m.src ^ 1;
        m.bytes = 4096 * (1 + (k * 7) % 13);
        rc = rs_net_send(net, &m);
    }
    if (rc == RS_OK && s)
        rc = rs_standin_start(net, s);
    if (rc == RS_OK)
        rc = rs_net_run(net, RS_TIME_MAX);
    if (rc == RS_OK)
        rc = rs_net_fct_get(net, f);
    rs_net_destroy(net);
    return rc;
}

/* A split run's completion percentiles are selected together (every
 * process's count at or below a probe, bisected: docs/parallel.md,
 * "Merge"), or come from every process's histogram past the kept list:
 * either way what the serial run reports. */
static void test_split_completions_pool_as_serial(void)
{
    static const size_t keeps[] = { RS_NET_MSG_TIMES_KEEP, 24, 5 };
    for (unsigned i = 0; i < sizeof keeps / sizeof keeps[0]; i++) {
        rs_net_fct serial, split;
        char tail[RS_STANDIN_TAIL];
        size_t n = rs_standin_empty_tail(tail);
        rs_standin s = { NULL, 0, tail, n, 0 };
        CU_ASSERT_EQUAL_FATAL(leaf_fct(NULL, keeps[i], &serial), RS_OK);
        CU_ASSERT_EQUAL_FATAL(leaf_fct(&s, keeps[i], &split), RS_OK);
        CU_ASSERT_EQUAL(serial.n, 24);
        CU_ASSERT_EQUAL(serial.exact, keeps[i] >= 24);
        CU_ASSERT(serial.p50 < serial.p99);
        CU_ASSERT_EQUAL(split.n, serial.n);
        CU_ASSERT_EQUAL(split.exact, serial.exact);
        CU_ASSERT_EQUAL(split.min, serial.min);
        CU_ASSERT_EQUAL(split.max, serial.max);
        CU_ASSERT_EQUAL(split.mean, serial.mean);
        CU_ASSERT_EQUAL(split.p50, serial.p50);
        CU_ASSERT_EQUAL(split.p99, serial.p99);
    }
}

/* A split run's memory (docs/parallel.md, "Memory"): rank 0 gives back
 * the pages of the ports array that hold only rank 1's ports, keeps its
 * own ports whole, and after the merge reports rank 1's ports from the
 * counters rank 1 sent. */
static void test_split_run_keeps_only_its_ports(void)
{
    /* Rank 1's end-of-run message: one of its ports, with counters. */
    rs_standin probe = { 0 };
    rs_net *net = rs_standin_net(&probe);
    CU_ASSERT_PTR_NOT_NULL_FATAL(net);
    uint32_t theirs = rs_standin_cut_port(net, 0);
    CU_ASSERT_NOT_EQUAL_FATAL(theirs, RS_NONE);
    rs_net_destroy(net);
    char b[sizeof(rs_wire) + sizeof(part_tail) + sizeof(uint64_t) + sizeof(rs_port_count)];
    part_tail t;
    memset(&t, 0, sizeof t);
    t.nports = 1;
    rs_port_count c;
    memset(&c, 0, sizeof c);
    c.tx_pkts = 77;
    c.tx_bytes = 77 * 1106;
    c.max_qbytes = 4212;
    uint64_t id = theirs;
    rs_wire w = rs_wire_make(RS_WIRE_TAIL, 1, sizeof b - sizeof w);
    memcpy(b, &w, sizeof w);
    memcpy(b + sizeof w, &t, sizeof t);
    memcpy(b + sizeof w + sizeof t, &id, sizeof id);
    memcpy(b + sizeof w + sizeof t + sizeof id, &c, sizeof c);

    rs_standin s = { NULL, 0, b, sizeof b, 0 };
    net = rs_standin_net(&s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(net);
    /* (Rank 1 delivered nothing it was sent, so the counts do not close:
     * RS_EINTERNAL; the message itself was taken.) */
    CU_ASSERT_NOT_EQUAL(rs_net_run(net, RS_TIME_MAX), RS_EFORMAT);
    CU_ASSERT_STRING_EQUAL(rs_net_part_errmsg(net), "");
    /* Every page that holds none of rank 0's ports is not resident; its
     * own ports read as the network built them. */
    size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = (size_t)net->nports * sizeof(rs_port);
    size_t pages = (bytes + page - 1) / page, given = 0;
    unsigned char *res = malloc(pages);
    CU_ASSERT_PTR_NOT_NULL_FATAL(res);
    CU_ASSERT_EQUAL_FATAL(mincore(net->ports, pages * page, res), 0);
    for (size_t k = 0; k < pages; k++) {
        int mine = 0;
        for (size_t i = k * page / sizeof(rs_port); i <= ((k + 1) * page - 1) / sizeof(rs_port) && i < net->nports; i++)
            mine |= rs_part_owns_port(net, (uint32_t)i);
        if (!mine) {
            CU_ASSERT_EQUAL(res[k] & 1, 0);
            given++;
        }
    }
    free(res);
    CU_ASSERT(given > 0); /* the stand-in's network is large enough to have such a page */
    for (uint32_t i = 0; i < net->nports; i++)
        if (rs_part_owns_port(net, i)) {
            CU_ASSERT_EQUAL(net->ports[i].peer_port, net->links[i].peer_port);
            CU_ASSERT_EQUAL(net->ports[i].rate_bps, net->links[i].rate_bps);
        }
    /* Rank 1's port: its counters as it sent them. */
    rs_net_port_info pi;
    CU_ASSERT_EQUAL(rs_net_port_info_get(net, theirs, &pi), RS_OK);
    CU_ASSERT_EQUAL(pi.tx_pkts, 77);
    CU_ASSERT_EQUAL(pi.tx_bytes, 77 * 1106);
    CU_ASSERT_EQUAL(pi.max_queue_bytes, 4212);
    CU_ASSERT_EQUAL(pi.rate_bps, net->links[theirs].rate_bps);
    rs_net_destroy(net);
}

static const rs_cu_test wire_tests[] = {
    RS_CU_TEST(test_header_is_checked),
    RS_CU_TEST(test_window_garbage_is_refused),
    RS_CU_TEST(test_window_records_are_checked),
    RS_CU_TEST(test_tail_is_checked),
    RS_CU_TEST(test_split_run_keeps_only_its_ports),
    RS_CU_TEST(test_split_completions_pool_as_serial),
};

static void register_suites(void) { RS_CU_SUITE("wire", wire_tests); }

int main(void) { return rs_cu_run(register_suites); }
