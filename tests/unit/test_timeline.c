/*
 * test_timeline.c - the timeline writer (engine/timeline) and its reader
 * (analysis/timeline_read): every record kind round trips field by field,
 * disabled kinds are absent, partial and aborted runs are marked or leave
 * nothing, damaged or foreign files give a clear error instead of a crash,
 * and neither side allocates per record.
 *
 * Files go to a fresh mkdtemp directory removed at the end.
 */
#define _DEFAULT_SOURCE /* mkdtemp, mallinfo2 */
#include "cu_main.h"
#include "timeline.h"
#include "timeline_read.h"

#include <dirent.h>
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static const char *tpath(const char *name)
{
    static char buf[4][256];
    static int k;
    if (!dir[0]) {
        strcpy(dir, "/tmp/rs_tl_XXXXXX");
        if (!mkdtemp(dir))
            abort();
    }
    k = (k + 1) % 4;
    /* The test's names are short; a longer one would be a test bug. */
    int n = snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof buf[k])
        abort();
    return buf[k];
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static long file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

static unsigned char *slurp(const char *p, size_t *n)
{
    FILE *f = fopen(p, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(sz > 0 ? (size_t)sz : 1);
    *n = fread(b, 1, (size_t)sz, f);
    fclose(f);
    return b;
}

static void spit(const char *p, const void *b, size_t n)
{
    unlink(p); /* a fresh file: ext4 flushes a truncated-and-rewritten one */
    FILE *f = fopen(p, "wb");
    CU_ASSERT_FATAL(f != NULL);
    CU_ASSERT(fwrite(b, 1, n, f) == n);
    fclose(f);
}

static const rs_timeline_kv topo[] = {{"gpus", 64}, {"hb_size", 8}, {"switches", 12},
                                      {"links", UINT64_MAX}};

static rs_timeline_header header(const char *scenario)
{
    rs_timeline_header h = {
        .railsim_version = "0.1.0-test",
        .seed = 0x123456789abcdef0ULL,
        .scenario_json = scenario,
        .topology = topo,
        .n_topology = sizeof topo / sizeof topo[0],
        .trace_hash = "sha256:abcd",
    };
    return h;
}

static rs_timeline *open_writer(const char *path, const char *scenario)
{
    rs_timeline_header h = header(scenario);
    rs_timeline *tl = NULL;
    rs_err err = {0};
    int rc = rs_timeline_create(path, &h, &tl, &err);
    CU_ASSERT_EQUAL(rc, RS_OK);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    return tl;
}

/* One record of every kind with values at the edges of their ranges. */
static const rs_timeline_op_rec op1 = {.rank = 7, .comm = 3, .start_ps = 1000, .end_ps = 250000,
                                       .bytes = 1ull << 33, .op = "allreduce", .label = "layer 3 bwd"};
static const rs_timeline_op_rec op2 = {.rank = UINT32_MAX, .comm = RS_TL_NONE, .start_ps = 0,
                                       .end_ps = UINT64_MAX, .bytes = 0, .op = "compute",
                                       .label = NULL};
static const rs_timeline_coll_rec coll1 = {.id = 42, .comm = 3, .nranks = 16, .bytes = 1 << 20,
                                           .start_ps = 5, .end_ps = 9, .op = "allgather",
                                           .algo = "ring"};
static const rs_timeline_flow_rec flow1 = {.src = 1, .dst = 9, .bytes = 4096, .start_ps = 10,
                                           .end_ps = 20};
static const rs_timeline_sample_rec sample1 = {.time_ps = 1000000, .port = 12, .tx_bytes = 123456789,
                                               .queue_bytes = 65536, .util = 0.8125};
static const rs_timeline_pfc_rec pfc1 = {.time_ps = 77, .port = 4, .prio_mask = 0x88, .pause = 1};
static const rs_timeline_pfc_rec pfc2 = {.time_ps = 78, .port = 4, .prio_mask = 0xff, .pause = 0};
static const rs_timeline_ecn_rec ecn1 = {.time_ps = 99, .port = 5, .what = RS_TL_ECN_CNP, .count = 3};
static const rs_timeline_drop_rec drop1 = {.time_ps = 101, .port = 6, .packets = 2, .bytes = 8400,
                                           .reason = "link-down"};
static const rs_timeline_fault_rec fault1 = {.time_ps = 5000, .target = "link rail2:p7",
                                             .kind = "down", .detail = "mtbf draw"};

/* Write names and every kind once; returns records attempted per kind. */
static void write_all_kinds(rs_timeline *tl)
{
    CU_ASSERT_EQUAL(rs_timeline_name(tl, RS_TL_NS_PORT, 12, "rail0.sw0.p12"), RS_OK);
    CU_ASSERT_EQUAL(rs_timeline_name(tl, RS_TL_NS_RANK, 7, ""), RS_OK);
    CU_ASSERT_EQUAL(rs_timeline_op(tl, &op1), RS_OK);
    CU_ASSERT_EQUAL(rs_timeline_op(tl, &op2), RS_OK);
    CU_ASSERT_EQUAL(rs_timeline_coll(tl, &coll1), RS_OK);
    CU_ASSERT_EQUAL(rs_timeline_flow(tl, &flow1), RS_OK);
    CU_ASSERT_EQUAL(rs_timeline_sample(tl, &sample1), RS_OK);
    CU_ASSERT_EQUAL(rs_timeline_pfc(tl, &pfc1), RS_OK);
    CU_ASSERT_EQUAL(rs_timeline_pfc(tl, &pfc2), RS_OK);
    CU_ASSERT_EQUAL(rs_timeline_ecn(tl, &ecn1), RS_OK);
    CU_ASSERT_EQUAL(rs_timeline_drop(tl, &drop1), RS_OK);
    CU_ASSERT_EQUAL(rs_timeline_fault(tl, &fault1), RS_OK);
}

static void check_header(const rs_tlread_header *h, const char *scenario, int partial)
{
    CU_ASSERT_EQUAL(h->version, 1);
    CU_ASSERT_EQUAL(h->version_minor, RS_TIMELINE_VERSION_MINOR);
    CU_ASSERT_EQUAL(h->partial, partial);
    CU_ASSERT_EQUAL(h->seed, 0x123456789abcdef0ULL);
    CU_ASSERT_STRING_EQUAL(h->railsim_version, "0.1.0-test");
    CU_ASSERT_STRING_EQUAL(h->scenario_json, scenario);
    CU_ASSERT_STRING_EQUAL(h->trace_hash, "sha256:abcd");
    CU_ASSERT_EQUAL_FATAL(h->n_topology, sizeof topo / sizeof topo[0]);
    for (size_t i = 0; i < h->n_topology; i++) {
        CU_ASSERT_STRING_EQUAL(h->topology[i].name, topo[i].name);
        CU_ASSERT_EQUAL(h->topology[i].value, topo[i].value);
    }
}

/* Read the next record, which must be of kind k. */
static int next_is(rs_tlread *r, rs_tlread_rec *rec, rs_tlread_kind k)
{
    rs_an_err err = {0};
    int rc = rs_tlread_next(r, rec, &err);
    CU_ASSERT_EQUAL(rc, 1);
    if (rc != 1) {
        fprintf(stderr, "%s\n", err.msg);
        return 0;
    }
    CU_ASSERT_EQUAL(rec->kind, k);
    return rec->kind == k;
}

static void check_op(const rs_tlread_rec *x, const rs_timeline_op_rec *w)
{
    CU_ASSERT_EQUAL(x->u.op.rank, w->rank);
    CU_ASSERT_EQUAL(x->u.op.comm, w->comm);
    CU_ASSERT_EQUAL(x->u.op.start_ps, w->start_ps);
    CU_ASSERT_EQUAL(x->u.op.end_ps, w->end_ps);
    CU_ASSERT_EQUAL(x->u.op.bytes, w->bytes);
    CU_ASSERT_STRING_EQUAL(x->u.op.op, w->op ? w->op : "");
    CU_ASSERT_STRING_EQUAL(x->u.op.label, w->label ? w->label : "");
}

static void check_pfc(const rs_tlread_rec *x, const rs_timeline_pfc_rec *w)
{
    CU_ASSERT_EQUAL(x->u.pfc.time_ps, w->time_ps);
    CU_ASSERT_EQUAL(x->u.pfc.port, w->port);
    CU_ASSERT_EQUAL(x->u.pfc.prio_mask, w->prio_mask);
    CU_ASSERT_EQUAL(x->u.pfc.pause, w->pause);
}

/* The kinds are the file format's numbers (docs/timeline-format.md):
 * they never change. */
static void test_timeline_kind_numbers_agree(void)
{
    CU_ASSERT_EQUAL(RS_TL_NAME, 1);
    CU_ASSERT_EQUAL(RS_TL_OP, 2);
    CU_ASSERT_EQUAL(RS_TL_COLL, 3);
    CU_ASSERT_EQUAL(RS_TL_FLOW, 4);
    CU_ASSERT_EQUAL(RS_TL_SAMPLE, 5);
    CU_ASSERT_EQUAL(RS_TL_PFC, 6);
    CU_ASSERT_EQUAL(RS_TL_ECN, 7);
    CU_ASSERT_EQUAL(RS_TL_DROP, 8);
    CU_ASSERT_EQUAL(RS_TL_FAULT, 9);
    CU_ASSERT_EQUAL(RS_TL_END, 10);
    CU_ASSERT_EQUAL(RS_TL_NONE, UINT32_MAX);
    CU_ASSERT_EQUAL(RS_OK, RS_AN_OK);
    CU_ASSERT_EQUAL(RS_EIO, RS_AN_EIO);
    CU_ASSERT_EQUAL(RS_EFORMAT, RS_AN_EFORMAT);
}

static void test_timeline_round_trips_every_kind(void)
{
    const char *path = tpath("all.tl");
    const char *scen = "{\"gpus\": 64, \"topology\": \"rail-only\"}";
    rs_timeline *tl = open_writer(path, scen);
    CU_ASSERT_FATAL(tl != NULL);
    CU_ASSERT(exists(tpath("all.tl.tmp")));
    CU_ASSERT(!exists(path));
    write_all_kinds(tl);
    CU_ASSERT_EQUAL(rs_timeline_records(tl), 12);
    rs_err werr = {0};
    CU_ASSERT_EQUAL_FATAL(rs_timeline_close(tl, 0, &werr), RS_OK);
    CU_ASSERT(exists(path));
    CU_ASSERT(!exists(tpath("all.tl.tmp")));

    size_t n = 0;
    unsigned char *bytes = slurp(path, &n);
    CU_ASSERT_FATAL(bytes && n > RS_TIMELINE_PARTIAL_OFFSET);
    CU_ASSERT_EQUAL(bytes[RS_TIMELINE_PARTIAL_OFFSET], 0xc2); /* patched to false */
    free(bytes);

    rs_tlread *r = NULL;
    rs_an_err err = {0};
    CU_ASSERT_EQUAL_FATAL(rs_tlread_open(path, &r, &err), RS_AN_OK);
    check_header(rs_tlread_header_get(r), scen, 0);

    rs_tlread_rec x;
    if (next_is(r, &x, RS_TL_NAME)) {
        CU_ASSERT_EQUAL(x.index, 0);
        CU_ASSERT_EQUAL(x.u.name.space, RS_TL_NS_PORT);
        CU_ASSERT_EQUAL(x.u.name.id, 12);
        CU_ASSERT_STRING_EQUAL(x.u.name.name, "rail0.sw0.p12");
    }
    if (next_is(r, &x, RS_TL_NAME)) {
        CU_ASSERT_EQUAL(x.u.name.space, RS_TL_NS_RANK);
        CU_ASSERT_EQUAL(x.u.name.id, 7);
        CU_ASSERT_STRING_EQUAL(x.u.name.name, "");
    }
    if (next_is(r, &x, RS_TL_OP))
        check_op(&x, &op1);
    if (next_is(r, &x, RS_TL_OP))
        check_op(&x, &op2);
    if (next_is(r, &x, RS_TL_COLL)) {
        CU_ASSERT_EQUAL(x.u.coll.id, coll1.id);
        CU_ASSERT_EQUAL(x.u.coll.comm, coll1.comm);
        CU_ASSERT_EQUAL(x.u.coll.nranks, coll1.nranks);
        CU_ASSERT_EQUAL(x.u.coll.bytes, coll1.bytes);
        CU_ASSERT_EQUAL(x.u.coll.start_ps, coll1.start_ps);
        CU_ASSERT_EQUAL(x.u.coll.end_ps, coll1.end_ps);
        CU_ASSERT_STRING_EQUAL(x.u.coll.op, coll1.op);
        CU_ASSERT_STRING_EQUAL(x.u.coll.algo, coll1.algo);
    }
    if (next_is(r, &x, RS_TL_FLOW)) {
        CU_ASSERT_EQUAL(x.u.flow.src, flow1.src);
        CU_ASSERT_EQUAL(x.u.flow.dst, flow1.dst);
        CU_ASSERT_EQUAL(x.u.flow.bytes, flow1.bytes);
        CU_ASSERT_EQUAL(x.u.flow.start_ps, flow1.start_ps);
        CU_ASSERT_EQUAL(x.u.flow.end_ps, flow1.end_ps);
    }
    if (next_is(r, &x, RS_TL_SAMPLE)) {
        CU_ASSERT_EQUAL(x.u.sample.time_ps, sample1.time_ps);
        CU_ASSERT_EQUAL(x.u.sample.port, sample1.port);
        CU_ASSERT_EQUAL(x.u.sample.tx_bytes, sample1.tx_bytes);
        CU_ASSERT_EQUAL(x.u.sample.queue_bytes, sample1.queue_bytes);
        CU_ASSERT_EQUAL(x.u.sample.util, sample1.util); /* float64: exact */
    }
    if (next_is(r, &x, RS_TL_PFC))
        check_pfc(&x, &pfc1);
    if (next_is(r, &x, RS_TL_PFC))
        check_pfc(&x, &pfc2);
    if (next_is(r, &x, RS_TL_ECN)) {
        CU_ASSERT_EQUAL(x.u.ecn.time_ps, ecn1.time_ps);
        CU_ASSERT_EQUAL(x.u.ecn.port, ecn1.port);
        CU_ASSERT_EQUAL(x.u.ecn.what, ecn1.what);
        CU_ASSERT_EQUAL(x.u.ecn.count, ecn1.count);
    }
    if (next_is(r, &x, RS_TL_DROP)) {
        CU_ASSERT_EQUAL(x.u.drop.time_ps, drop1.time_ps);
        CU_ASSERT_EQUAL(x.u.drop.port, drop1.port);
        CU_ASSERT_EQUAL(x.u.drop.packets, drop1.packets);
        CU_ASSERT_EQUAL(x.u.drop.bytes, drop1.bytes);
        CU_ASSERT_STRING_EQUAL(x.u.drop.reason, drop1.reason);
    }
    if (next_is(r, &x, RS_TL_FAULT)) {
        CU_ASSERT_EQUAL(x.index, 11);
        CU_ASSERT_EQUAL(x.u.fault.time_ps, fault1.time_ps);
        CU_ASSERT_STRING_EQUAL(x.u.fault.target, fault1.target);
        CU_ASSERT_STRING_EQUAL(x.u.fault.kind, fault1.kind);
        CU_ASSERT_STRING_EQUAL(x.u.fault.detail, fault1.detail);
    }
    CU_ASSERT_EQUAL(rs_tlread_next(r, &x, &err), 0);
    CU_ASSERT_EQUAL(rs_tlread_next(r, &x, &err), 0); /* stays at the end */
    CU_ASSERT_EQUAL(rs_tlread_complete(r), 1);
    CU_ASSERT_EQUAL(rs_tlread_skipped(r), 0);
    rs_tlread_close(r);
}

static void test_timeline_large_scenario_round_trips(void)
{
    /* Larger than the writer's buffer and the reader's first buffer. */
    size_t n = 3 * RS_TIMELINE_BUFSZ + 17;
    char *scen = malloc(n + 1);
    CU_ASSERT_FATAL(scen != NULL);
    for (size_t i = 0; i < n; i++)
        scen[i] = (char)('a' + i % 26);
    scen[n] = '\0';
    const char *path = tpath("big.tl");
    rs_timeline *tl = open_writer(path, scen);
    CU_ASSERT_FATAL(tl != NULL);
    CU_ASSERT_EQUAL(rs_timeline_op(tl, &op1), RS_OK);
    CU_ASSERT_EQUAL(rs_timeline_close(tl, 0, NULL), RS_OK);

    rs_tlread *r = NULL;
    rs_an_err err = {0};
    CU_ASSERT_EQUAL_FATAL(rs_tlread_open(path, &r, &err), RS_AN_OK);
    check_header(rs_tlread_header_get(r), scen, 0);
    rs_tlread_rec x;
    if (next_is(r, &x, RS_TL_OP))
        check_op(&x, &op1);
    CU_ASSERT_EQUAL(rs_tlread_next(r, &x, &err), 0);
    rs_tlread_close(r);
    free(scen);
}

/* Count the records of each kind in path; returns the final next() code. */
static int count_kinds(const char *path, uint64_t count[16], rs_an_err *err)
{
    memset(count, 0, 16 * sizeof count[0]);
    rs_tlread *r = NULL;
    int rc = rs_tlread_open(path, &r, err);
    if (rc)
        return rc;
    rs_tlread_rec x;
    while ((rc = rs_tlread_next(r, &x, err)) == 1)
        count[x.kind & 15]++;
    rs_tlread_close(r);
    return rc;
}

static void test_timeline_disabled_kinds_are_not_written(void)
{
    const char *path = tpath("light.tl");
    rs_timeline *tl = open_writer(path, "{}");
    CU_ASSERT_FATAL(tl != NULL);
    rs_timeline_set_enabled(tl, RS_TL_ALL & ~RS_TL_HEAVY);
    CU_ASSERT_EQUAL(rs_timeline_enabled(tl), RS_TL_ALL & ~RS_TL_HEAVY);
    CU_ASSERT(!rs_timeline_wants(tl, RS_TL_FLOW));
    CU_ASSERT(!rs_timeline_wants(tl, RS_TL_SAMPLE));
    CU_ASSERT(rs_timeline_wants(tl, RS_TL_OP));
    CU_ASSERT(rs_timeline_wants(tl, RS_TL_NAME));
    write_all_kinds(tl);
    /* 2 names, 2 ops, coll, drop, fault; not flow, sample, 2 pfc, ecn. */
    CU_ASSERT_EQUAL(rs_timeline_records(tl), 7);
    rs_timeline_set_enabled(tl, RS_TL_MASK(RS_TL_FLOW)); /* only flows now */
    CU_ASSERT_EQUAL(rs_timeline_op(tl, &op1), RS_OK);
    CU_ASSERT_EQUAL(rs_timeline_flow(tl, &flow1), RS_OK);
    CU_ASSERT_EQUAL(rs_timeline_close(tl, 0, NULL), RS_OK);

    uint64_t c[16];
    rs_an_err err = {0};
    CU_ASSERT_EQUAL(count_kinds(path, c, &err), 0);
    CU_ASSERT_EQUAL(c[RS_TL_NAME], 2);
    CU_ASSERT_EQUAL(c[RS_TL_OP], 2);
    CU_ASSERT_EQUAL(c[RS_TL_COLL], 1);
    CU_ASSERT_EQUAL(c[RS_TL_DROP], 1);
    CU_ASSERT_EQUAL(c[RS_TL_FAULT], 1);
    CU_ASSERT_EQUAL(c[RS_TL_FLOW], 1);
    CU_ASSERT_EQUAL(c[RS_TL_SAMPLE], 0);
    CU_ASSERT_EQUAL(c[RS_TL_PFC], 0);
    CU_ASSERT_EQUAL(c[RS_TL_ECN], 0);
}

static void test_timeline_partial_close_is_marked_and_readable(void)
{
    const char *path = tpath("partial.tl");
    rs_timeline *tl = open_writer(path, "{}");
    CU_ASSERT_FATAL(tl != NULL);
    write_all_kinds(tl);
    CU_ASSERT_EQUAL(rs_timeline_close(tl, 1, NULL), RS_OK);
    CU_ASSERT(exists(path));
    CU_ASSERT(!exists(tpath("partial.tl.tmp")));

    size_t n = 0;
    unsigned char *bytes = slurp(path, &n);
    CU_ASSERT_FATAL(bytes && n > RS_TIMELINE_PARTIAL_OFFSET);
    CU_ASSERT_EQUAL(bytes[RS_TIMELINE_PARTIAL_OFFSET], 0xc3); /* still true */
    free(bytes);

    rs_tlread *r = NULL;
    rs_an_err err = {0};
    CU_ASSERT_EQUAL_FATAL(rs_tlread_open(path, &r, &err), RS_AN_OK);
    check_header(rs_tlread_header_get(r), "{}", 1);
    rs_tlread_rec x;
    int k = 0, rc;
    while ((rc = rs_tlread_next(r, &x, &err)) == 1)
        k++;
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(k, 12);
    CU_ASSERT_EQUAL(rs_tlread_complete(r), 0);
    rs_tlread_close(r);
}

static void test_timeline_abort_leaves_nothing_and_keeps_old_file(void)
{
    const char *path = tpath("abort.tl");
    spit(path, "old", 3);
    rs_timeline *tl = open_writer(path, "{}");
    CU_ASSERT_FATAL(tl != NULL);
    write_all_kinds(tl);
    rs_timeline_abort(tl);
    rs_timeline_abort(NULL);
    CU_ASSERT(!exists(tpath("abort.tl.tmp")));
    CU_ASSERT_EQUAL(file_size(path), 3);
    unlink(path);
}

/* A writer killed mid-run leaves PATH.tmp without an end record: the
 * reader yields what is whole, then says the file is truncated. */
static void test_timeline_unfinished_tmp_reads_as_truncated(void)
{
    const char *path = tpath("killed.tl");
    rs_timeline *tl = open_writer(path, "{}");
    CU_ASSERT_FATAL(tl != NULL);
    for (int i = 0; i < 20000; i++) /* > one buffer, so some reached the file */
        rs_timeline_op(tl, &op1);
    /* Copy the .tmp as it is now, as if the process had died here. */
    size_t n = 0;
    unsigned char *bytes = slurp(tpath("killed.tl.tmp"), &n);
    CU_ASSERT_FATAL(bytes != NULL);
    CU_ASSERT(n >= RS_TIMELINE_BUFSZ);
    spit(tpath("killed.copy"), bytes, n);
    free(bytes);
    rs_timeline_abort(tl);

    rs_tlread *r = NULL;
    rs_an_err err = {0};
    CU_ASSERT_EQUAL_FATAL(rs_tlread_open(tpath("killed.copy"), &r, &err), RS_AN_OK);
    CU_ASSERT_EQUAL(rs_tlread_header_get(r)->partial, 1);
    rs_tlread_rec x;
    int k = 0, rc;
    while ((rc = rs_tlread_next(r, &x, &err)) == 1)
        k++;
    CU_ASSERT(k > 1000);
    CU_ASSERT_EQUAL(rc, RS_AN_EFORMAT);
    CU_ASSERT(strstr(err.msg, "killed.copy") != NULL);
    CU_ASSERT(strstr(err.msg, "truncated") != NULL);
    /* Sticky: the same error again. */
    rs_an_err err2 = {0};
    CU_ASSERT_EQUAL(rs_tlread_next(r, &x, &err2), RS_AN_EFORMAT);
    CU_ASSERT_STRING_EQUAL(err.msg, err2.msg);
    rs_tlread_close(r);
}

/* Read a whole file; returns 0 if it was well formed, else the error. */
static int read_all(const char *path, rs_an_err *err)
{
    uint64_t c[16];
    return count_kinds(path, c, err);
}

static void test_timeline_every_truncation_is_a_clear_error(void)
{
    const char *path = tpath("cut.tl");
    rs_timeline *tl = open_writer(path, "{\"x\":1}");
    CU_ASSERT_FATAL(tl != NULL);
    write_all_kinds(tl);
    CU_ASSERT_EQUAL(rs_timeline_close(tl, 0, NULL), RS_OK);
    size_t n = 0;
    unsigned char *bytes = slurp(path, &n);
    CU_ASSERT_FATAL(bytes != NULL);

    const char *cut = tpath("cut.part");
    for (size_t len = 0; len < n; len++) {
        spit(cut, bytes, len);
        rs_an_err err = {0};
        int rc = read_all(cut, &err);
        CU_ASSERT_EQUAL(rc, RS_AN_EFORMAT);
        CU_ASSERT(strstr(err.msg, "cut.part") != NULL);
        if (len > 0 && len < 200)
            CU_ASSERT(strstr(err.msg, "truncated") != NULL || strstr(err.msg, "end record") != NULL);
    }
    /* One byte too many. */
    unsigned char *more = malloc(n + 1);
    memcpy(more, bytes, n);
    more[n] = 0x00;
    spit(cut, more, n + 1);
    rs_an_err err = {0};
    CU_ASSERT_EQUAL(read_all(cut, &err), RS_AN_EFORMAT);
    CU_ASSERT(strstr(err.msg, "after the end record") != NULL);
    free(more);

    spit(cut, bytes, 0);
    CU_ASSERT_EQUAL(read_all(cut, &err), RS_AN_EFORMAT);
    CU_ASSERT(strstr(err.msg, "is empty") != NULL);
    free(bytes);
}

static void test_timeline_corrupted_bytes_never_crash(void)
{
    const char *path = tpath("bad.tl");
    rs_timeline *tl = open_writer(path, "{}");
    CU_ASSERT_FATAL(tl != NULL);
    write_all_kinds(tl);
    CU_ASSERT_EQUAL(rs_timeline_close(tl, 0, NULL), RS_OK);
    size_t n = 0;
    unsigned char *bytes = slurp(path, &n);
    CU_ASSERT_FATAL(bytes != NULL);

    /* Every position, several poison values: 0xc1 is reserved, 0xdd/0xdf
     * claim 4-billion-element containers, 0xdb a 4 GB string, 0xa5 turns
     * an integer into a string. Each read must end in 0 or a message. */
    static const unsigned char poison[] = {0x00, 0xc1, 0xdd, 0xdf, 0xdb, 0xa5, 0xff, 0xc3};
    const char *bad = tpath("bad.one");
    int errors = 0, runs = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t p = 0; p < sizeof poison; p++) {
            if (bytes[i] == poison[p])
                continue;
            unsigned char keep = bytes[i];
            bytes[i] = poison[p];
            spit(bad, bytes, n);
            bytes[i] = keep;
            rs_an_err err = {0};
            int rc = read_all(bad, &err);
            runs++;
            if (rc) {
                errors++;
                CU_ASSERT(rc == RS_AN_EFORMAT);
                CU_ASSERT(strstr(err.msg, "bad.one") != NULL);
                CU_ASSERT(strlen(err.msg) > 20);
            }
        }
    }
    CU_ASSERT(errors > runs / 3); /* the rest hit string contents */
    free(bytes);

    /* One precise case: the op record's rank (index 2) made a string. */
    rs_timeline *t2 = open_writer(path, "{}");
    CU_ASSERT_FATAL(t2 != NULL);
    rs_timeline_name(t2, RS_TL_NS_PORT, 1, "a");
    rs_timeline_name(t2, RS_TL_NS_PORT, 2, "b");
    rs_timeline_op(t2, &(rs_timeline_op_rec){.rank = 5, .op = "x", .label = "y", .comm = 1});
    CU_ASSERT_EQUAL(rs_timeline_close(t2, 0, NULL), RS_OK);
    bytes = slurp(path, &n);
    /* The op record: 0x98 0x02 0x05 ... find it from the end. */
    size_t at = 0;
    for (size_t i = n; i-- > 2;)
        if (bytes[i - 2] == 0x98 && bytes[i - 1] == 0x02 && bytes[i] == 0x05) {
            at = i;
            break;
        }
    CU_ASSERT_FATAL(at != 0);
    bytes[at] = 0xc0; /* nil */
    spit(bad, bytes, n);
    rs_an_err err = {0};
    CU_ASSERT_EQUAL(read_all(bad, &err), RS_AN_EFORMAT);
    CU_ASSERT(strstr(err.msg, "record 2 (op") != NULL);
    CU_ASSERT(strstr(err.msg, "\"rank\" should be an unsigned 32-bit integer, found nil") != NULL);
    free(bytes);
}

static void expect_rejected(const void *b, size_t n, const char *what)
{
    const char *p = tpath("foreign.bin");
    spit(p, b, n);
    rs_tlread *r = NULL;
    rs_an_err err = {0};
    CU_ASSERT_EQUAL(rs_tlread_open(p, &r, &err), RS_AN_EFORMAT);
    CU_ASSERT(r == NULL);
    CU_ASSERT(strstr(err.msg, "foreign.bin") != NULL);
    CU_ASSERT(strstr(err.msg, what) != NULL);
    if (!strstr(err.msg, what))
        fprintf(stderr, "got: %s\n", err.msg);
}

static void test_timeline_rejects_foreign_files(void)
{
    /* {"a": 1} */
    expect_rejected("\x81\xa1" "a\x01", 4, "not a railsim timeline");
    /* [1, 2, 3] */
    expect_rejected("\x93\x01\x02\x03", 4, "should start with a msgpack map, found an array");
    /* Text: 'h' is a msgpack positive fixint. */
    expect_rejected("hello\n", 6, "found an unsigned integer");
    /* {"format": "other"} */
    expect_rejected("\x81\xa6" "format\xa5" "other", 14, "not a railsim timeline");
    /* {"format": "railsim-timeline", "version": 2} */
    expect_rejected("\x82\xa6" "format\xb0" "railsim-timeline\xa7" "version\x02", 34,
                    "version 2 is not supported");
    /* Right format and version, missing every other key. */
    expect_rejected("\x82\xa6" "format\xb0" "railsim-timeline\xa7" "version\x01", 34,
                    "has no \"partial\" key");

    rs_tlread *r = NULL;
    rs_an_err err = {0};
    CU_ASSERT_EQUAL(rs_tlread_open(tpath("does-not-exist"), &r, &err), RS_AN_EIO);
    CU_ASSERT(strstr(err.msg, "does-not-exist") != NULL);
}

/* A newer minor version may add kinds and trailing fields: skipped and
 * ignored, not fatal. The file is built by hand from a writer's header. */
static void test_timeline_skips_unknown_kinds_and_extra_fields(void)
{
    const char *path = tpath("newer.tl");
    rs_timeline *tl = open_writer(path, "{}");
    CU_ASSERT_FATAL(tl != NULL);
    CU_ASSERT_EQUAL(rs_timeline_close(tl, 0, NULL), RS_OK);
    size_t n = 0;
    unsigned char *hdr = slurp(path, &n);
    CU_ASSERT_FATAL(hdr && n > 4);
    n -= 4; /* drop the end record [10, true, 0] */
    CU_ASSERT_EQUAL(hdr[n], 0x93);
    static const unsigned char tail[] = {
        0x93, 99, 0xa1, 'x', 0x01,                     /* [99, "x", 1] */
        0x95, 0x01, 0x00, 0x07, 0xa2, 'p', '7', 0x2a,  /* [1, 0, 7, "p7", 42] */
        0x93, 0x0a, 0xc3, 0x02,                        /* [10, true, 2] */
    };
    unsigned char *file = malloc(n + sizeof tail);
    memcpy(file, hdr, n);
    memcpy(file + n, tail, sizeof tail);
    spit(path, file, n + sizeof tail);
    free(file);
    free(hdr);

    rs_tlread *r = NULL;
    rs_an_err err = {0};
    CU_ASSERT_EQUAL_FATAL(rs_tlread_open(path, &r, &err), RS_AN_OK);
    rs_tlread_rec x;
    if (next_is(r, &x, RS_TL_NAME)) {
        CU_ASSERT_EQUAL(x.index, 1);
        CU_ASSERT_EQUAL(x.u.name.id, 7);
        CU_ASSERT_STRING_EQUAL(x.u.name.name, "p7");
    }
    CU_ASSERT_EQUAL(rs_tlread_next(r, &x, &err), 0);
    CU_ASSERT_EQUAL(rs_tlread_skipped(r), 1);
    rs_tlread_close(r);
}

static void test_timeline_same_input_same_bytes(void)
{
    const char *a = tpath("det.a"), *b = tpath("det.b");
    for (int k = 0; k < 2; k++) {
        rs_timeline *tl = open_writer(k ? b : a, "{\"seed\":1}");
        CU_ASSERT_FATAL(tl != NULL);
        write_all_kinds(tl);
        CU_ASSERT_EQUAL(rs_timeline_close(tl, 0, NULL), RS_OK);
    }
    size_t na = 0, nb = 0;
    unsigned char *x = slurp(a, &na), *y = slurp(b, &nb);
    CU_ASSERT_FATAL(x && y);
    CU_ASSERT_EQUAL(na, nb);
    CU_ASSERT(na == nb && memcmp(x, y, na) == 0);
    free(x);
    free(y);
}

/* Record i of write_all_kinds. */
static void write_kind(rs_timeline *tl, unsigned i)
{
    switch (i) {
    case 0: CU_ASSERT_EQUAL(rs_timeline_name(tl, RS_TL_NS_PORT, 12, "rail0.sw0.p12"), RS_OK); break;
    case 1: CU_ASSERT_EQUAL(rs_timeline_name(tl, RS_TL_NS_RANK, 7, ""), RS_OK); break;
    case 2: CU_ASSERT_EQUAL(rs_timeline_op(tl, &op1), RS_OK); break;
    case 3: CU_ASSERT_EQUAL(rs_timeline_op(tl, &op2), RS_OK); break;
    case 4: CU_ASSERT_EQUAL(rs_timeline_coll(tl, &coll1), RS_OK); break;
    case 5: CU_ASSERT_EQUAL(rs_timeline_flow(tl, &flow1), RS_OK); break;
    case 6: CU_ASSERT_EQUAL(rs_timeline_sample(tl, &sample1), RS_OK); break;
    case 7: CU_ASSERT_EQUAL(rs_timeline_pfc(tl, &pfc1), RS_OK); break;
    case 8: CU_ASSERT_EQUAL(rs_timeline_pfc(tl, &pfc2), RS_OK); break;
    case 9: CU_ASSERT_EQUAL(rs_timeline_ecn(tl, &ecn1), RS_OK); break;
    case 10: CU_ASSERT_EQUAL(rs_timeline_drop(tl, &drop1), RS_OK); break;
    default: CU_ASSERT_EQUAL(rs_timeline_fault(tl, &fault1), RS_OK); break;
    }
}

/* The keyer of the parts below: record i's key is (i / 4, 0, 0, i % 4, 0),
 * so the key's later words order records too. */
static void test_key(void *ctx, uint64_t key[RS_TL_KEY_WORDS])
{
    unsigned i = *(const unsigned *)ctx;
    memset(key, 0, RS_TL_KEY_WORDS * sizeof *key);
    key[0] = i / 4;
    key[3] = i % 4;
}

/* Every kind spread over three parts out of order: merged by key, the
 * file is the one written in order, END's count included; a part cut
 * short is an error naming it; a part takes no END and has no header. */
static void test_timeline_parts_merge_in_key_order(void)
{
    const char *ref = tpath("merge.ref");
    rs_timeline *tl = open_writer(ref, "{}");
    CU_ASSERT_FATAL(tl != NULL);
    write_all_kinds(tl);
    CU_ASSERT_EQUAL(rs_timeline_close(tl, 0, NULL), RS_OK);
    static const unsigned part_of[12] = { 2, 0, 1, 1, 0, 2, 2, 0, 1, 0, 2, 1 };
    char names[3][256];
    const char *pn[3];
    rs_timeline *part[3];
    unsigned cur = 0;
    for (unsigned r = 0; r < 3; r++) {
        snprintf(names[r], sizeof names[r], "%s", tpath(r == 0 ? "merge.p0" : r == 1 ? "merge.p1" : "merge.p2"));
        pn[r] = names[r];
        CU_ASSERT_FATAL(rs_timeline_create_part(pn[r], RS_TL_ALL, test_key, &cur, &part[r], NULL) == RS_OK);
    }
    for (cur = 0; cur < 12; cur++)
        write_kind(part[part_of[cur]], cur);
    for (unsigned r = 0; r < 3; r++)
        CU_ASSERT_EQUAL(rs_timeline_close(part[r], 0, NULL), RS_OK);
    const char *out = tpath("merge.out");
    tl = open_writer(out, "{}");
    CU_ASSERT_FATAL(tl != NULL);
    CU_ASSERT_EQUAL(rs_timeline_merge(tl, pn, 3, NULL), RS_OK);
    CU_ASSERT_EQUAL(rs_timeline_records(tl), 12);
    CU_ASSERT_EQUAL(rs_timeline_close(tl, 0, NULL), RS_OK);
    size_t na = 0, nb = 0;
    unsigned char *x = slurp(ref, &na), *y = slurp(out, &nb);
    CU_ASSERT_FATAL(x && y);
    CU_ASSERT(na == nb && memcmp(x, y, na) == 0);
    free(x);
    free(y);
    /* A part is not a whole file: no merging into it. */
    rs_timeline *p = NULL;
    CU_ASSERT_FATAL(rs_timeline_create_part(tpath("merge.p3"), RS_TL_ALL, test_key, &cur, &p, NULL) == RS_OK);
    CU_ASSERT_EQUAL(rs_timeline_merge(p, pn, 3, NULL), RS_EINVAL);
    rs_timeline_abort(p);
    CU_ASSERT(!exists(tpath("merge.p3.tmp")));
    /* Cut short: named. */
    CU_ASSERT_EQUAL(truncate(pn[1], file_size(pn[1]) - 3), 0);
    rs_err err = {0};
    tl = open_writer(out, "{}");
    CU_ASSERT_FATAL(tl != NULL);
    CU_ASSERT_EQUAL(rs_timeline_merge(tl, pn, 3, &err), RS_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, pn[1]));
    rs_timeline_abort(tl);
    for (unsigned r = 0; r < 3; r++)
        unlink(pn[r]);
    unlink(ref);
    unlink(out);
}

static long rss_pages(void)
{
    long size = 0, rss = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &rss) != 2)
            rss = 0;
        fclose(f);
    }
    return rss;
}

/* 10^6 records: the writer allocates nothing after create and RSS does not
 * grow with the record count; the reader reads them back in flat memory. */
static void test_timeline_memory_is_bounded(void)
{
    const uint64_t N = 1000000;
    const char *path = tpath("million.tl");
    rs_timeline *tl = open_writer(path, "{}");
    CU_ASSERT_FATAL(tl != NULL);
    rs_timeline_op_rec op = op1;
    for (uint64_t i = 0; i < 1000; i++)
        rs_timeline_op(tl, &op);
    /* rss_pages first: its fopen leaves glibc state on the heap once. */
    long rss0 = rss_pages();
    struct mallinfo2 m0 = mallinfo2();
    for (uint64_t i = 1000; i < N; i++) {
        op.start_ps = i * 1000;
        op.end_ps = i * 1000 + 500;
        op.rank = (uint32_t)(i % 4096);
        if (rs_timeline_op(tl, &op) != RS_OK) {
            CU_FAIL("write failed");
            break;
        }
    }
    struct mallinfo2 m1 = mallinfo2();
    long rss1 = rss_pages();
    CU_ASSERT_EQUAL(m1.uordblks, m0.uordblks); /* not one byte allocated */
    CU_ASSERT(rss1 - rss0 < 256); /* < 1 MiB of 4 KiB pages */
    CU_ASSERT_EQUAL(rs_timeline_records(tl), N);
    CU_ASSERT_EQUAL(rs_timeline_close(tl, 0, NULL), RS_OK);
    CU_ASSERT(file_size(path) > (long)(N * 20));

    rs_tlread *r = NULL;
    rs_an_err err = {0};
    CU_ASSERT_EQUAL_FATAL(rs_tlread_open(path, &r, &err), RS_AN_OK);
    rs_tlread_rec x;
    uint64_t k = 0;
    int rc;
    size_t heap_at_1000 = 0;
    long rss_at_1000 = 0;
    while ((rc = rs_tlread_next(r, &x, &err)) == 1) {
        if (++k == 1000) {
            rss_at_1000 = rss_pages();
            heap_at_1000 = mallinfo2().uordblks;
        }
        if (k == N / 2) {
            CU_ASSERT_EQUAL(x.u.op.start_ps, (N / 2 - 1) * 1000);
        }
    }
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(k, N);
    CU_ASSERT_EQUAL(mallinfo2().uordblks, heap_at_1000);
    CU_ASSERT(rss_pages() - rss_at_1000 < 256);
    rs_tlread_close(r);
    unlink(path);
}

static void test_timeline_write_error_is_sticky_and_reported(void)
{
    /* Cannot create: the directory does not exist. */
    rs_timeline_header h = header("{}");
    rs_timeline *tl = NULL;
    rs_err err = {0};
    CU_ASSERT_EQUAL(rs_timeline_create(tpath("no/such/dir.tl"), &h, &tl, &err), RS_EIO);
    CU_ASSERT(tl == NULL);
    CU_ASSERT(strstr(err.msg, "no/such/dir.tl.tmp") != NULL);

    /* Fail mid-run: a file size limit makes write() fail with EFBIG. */
    struct rlimit old, lim;
    CU_ASSERT_FATAL(getrlimit(RLIMIT_FSIZE, &old) == 0);
    void (*oldsig)(int) = signal(SIGXFSZ, SIG_IGN);
    lim = old;
    lim.rlim_cur = 200 * 1024;
    CU_ASSERT_FATAL(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    const char *path = tpath("full.tl");
    tl = open_writer(path, "{}");
    int first_fail = -1;
    for (int i = 0; tl && i < 100000; i++) {
        if (rs_timeline_op(tl, &op1) != RS_OK) {
            first_fail = i;
            break;
        }
    }
    CU_ASSERT(first_fail > 0);
    CU_ASSERT_EQUAL(rs_timeline_op(tl, &op1), RS_EIO); /* sticky */
    CU_ASSERT_EQUAL(rs_timeline_name(tl, 0, 0, "x"), RS_EIO);
    CU_ASSERT(!rs_timeline_wants(tl, RS_TL_OP));
    rs_err cerr = {0};
    CU_ASSERT_EQUAL(rs_timeline_close(tl, 0, &cerr), RS_EIO);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, oldsig);
    CU_ASSERT_EQUAL(cerr.code, RS_EIO);
    CU_ASSERT(strstr(cerr.msg, "full.tl.tmp") != NULL);
    CU_ASSERT(!exists(path));
    CU_ASSERT(!exists(tpath("full.tl.tmp")));
}

static void remove_dir(void)
{
    if (!dir[0])
        return;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlink(tpath(e->d_name));
    if (d)
        closedir(d);
    rmdir(dir);
}

static const rs_cu_test timeline_tests[] = {
    RS_CU_TEST(test_timeline_kind_numbers_agree),
    RS_CU_TEST(test_timeline_round_trips_every_kind),
    RS_CU_TEST(test_timeline_large_scenario_round_trips),
    RS_CU_TEST(test_timeline_disabled_kinds_are_not_written),
    RS_CU_TEST(test_timeline_partial_close_is_marked_and_readable),
    RS_CU_TEST(test_timeline_abort_leaves_nothing_and_keeps_old_file),
    RS_CU_TEST(test_timeline_unfinished_tmp_reads_as_truncated),
    RS_CU_TEST(test_timeline_every_truncation_is_a_clear_error),
    RS_CU_TEST(test_timeline_corrupted_bytes_never_crash),
    RS_CU_TEST(test_timeline_rejects_foreign_files),
    RS_CU_TEST(test_timeline_skips_unknown_kinds_and_extra_fields),
    RS_CU_TEST(test_timeline_same_input_same_bytes),
    RS_CU_TEST(test_timeline_parts_merge_in_key_order),
    RS_CU_TEST(test_timeline_memory_is_bounded),
    RS_CU_TEST(test_timeline_write_error_is_sticky_and_reported),
};

static void register_suites(void) { RS_CU_SUITE("timeline", timeline_tests); }

int main(void)
{
    int rc = rs_cu_run(register_suites);
    remove_dir();
    return rc;
}
