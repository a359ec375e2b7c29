/*
 * test_chakra.c - the Chakra ET importer and exporter (traces/chakra_*.c).
 * Inputs are written byte by byte with a small protobuf wire encoder of
 * the test's own, so the tests do not depend on protobuf-c's encoder.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chakra.h"
#include "coll.h"
#include "cu_main.h"

/* ---- a protobuf writer (wire types 0 varint, 1 fixed64, 2 bytes, 5 fixed32) */

typedef struct wb {
    uint8_t b[4096];
    size_t n;
} wb;

static void w_var(wb *w, uint64_t v)
{
    do {
        uint8_t c = v & 0x7f;
        v >>= 7;
        w->b[w->n++] = c | (v ? 0x80 : 0);
    } while (v);
}

static void w_key(wb *w, unsigned field, unsigned wire) { w_var(w, (uint64_t)field << 3 | wire); }

static void w_bytes(wb *w, unsigned field, const void *p, size_t n)
{
    w_key(w, field, 2);
    w_var(w, n);
    memcpy(w->b + w->n, p, n);
    w->n += n;
}

static void w_str(wb *w, unsigned field, const char *s) { w_bytes(w, field, s, strlen(s)); }

static void w_sub(wb *w, unsigned field, const wb *m) { w_bytes(w, field, m->b, m->n); }

/* AttributeProto value fields */
enum { A_DOUBLE = 3, A_INT32 = 7, A_INT64 = 9, A_UINT32 = 11, A_UINT64 = 13, A_SINT64 = 17, A_FIXED64 = 21,
       A_SFIXED32 = 23, A_STRING = 29 };

static void attr_num(wb *node, const char *name, unsigned kind, int64_t v)
{
    wb a = { .n = 0 };
    w_str(&a, 1, name);
    if (kind == A_SINT64) {
        w_key(&a, kind, 0);
        w_var(&a, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
    } else if (kind == A_FIXED64 || kind == A_DOUBLE) {
        w_key(&a, kind, 1);
        uint64_t x = (uint64_t)v;
        if (kind == A_DOUBLE) {
            double d = (double)v;
            memcpy(&x, &d, 8);
        }
        memcpy(a.b + a.n, &x, 8);
        a.n += 8;
    } else if (kind == A_SFIXED32) {
        w_key(&a, kind, 5);
        int32_t x = (int32_t)v;
        memcpy(a.b + a.n, &x, 4);
        a.n += 4;
    } else {
        w_key(&a, kind, 0);
        w_var(&a, (uint64_t)v);
    }
    w_sub(node, 10, &a);
}

/* Node: id, name, type, data deps (packed), duration */
static void node_begin(wb *n, uint64_t id, const char *name, int type)
{
    n->n = 0;
    w_key(n, 1, 0);
    w_var(n, id);
    w_str(n, 2, name);
    w_key(n, 3, 0);
    w_var(n, (uint64_t)type);
}

static void node_deps(wb *n, unsigned field, const uint64_t *d, size_t k)
{
    wb p = { .n = 0 };
    for (size_t i = 0; i < k; i++)
        w_var(&p, d[i]);
    w_sub(n, field, &p);
}

static void file_put(wb *f, const wb *msg)
{
    w_var(f, msg->n);
    memcpy(f->b + f->n, msg->b, msg->n);
    f->n += msg->n;
}

static void file_begin(wb *f)
{
    wb m = { .n = 0 };
    w_str(&m, 1, "0.0.4");
    f->n = 0;
    file_put(f, &m);
}

enum { COMP = 4, SEND = 5, RECV = 6, COLL = 7, METADATA = 1 };

static int import(wb *files, uint32_t n, rs_trace **t, rs_chakra_stats *st, rs_err *err)
{
    rs_chakra_file f[8];
    static const char *names[8] = { "t.0.et", "t.1.et", "t.2.et", "t.3.et", "t.4.et", "t.5.et", "t.6.et", "t.7.et" };
    for (uint32_t r = 0; r < n; r++)
        f[r] = (rs_chakra_file){ .name = names[r], .rank = r, .buf = files[r].b, .len = files[r].n };
    return rs_chakra_import(f, n, NULL, t, st, err);
}

/* Message id from rank 0 (send) to rank 1 (receive), bytes, tag (< 0: none). */
static void add_pair(wb f[2], uint64_t id, uint64_t bytes, int tag)
{
    wb n;
    node_begin(&n, id, "s", SEND);
    attr_num(&n, "comm_dst", A_UINT64, 1);
    attr_num(&n, "comm_size", A_UINT64, (int64_t)bytes);
    if (tag >= 0)
        attr_num(&n, "comm_tag", A_INT64, tag);
    file_put(&f[0], &n);
    node_begin(&n, id, "r", RECV);
    attr_num(&n, "comm_src", A_UINT64, 0);
    attr_num(&n, "comm_size", A_UINT64, (int64_t)bytes);
    if (tag >= 0)
        attr_num(&n, "comm_tag", A_INT64, tag);
    file_put(&f[1], &n);
}

static void test_chakra_accepts_comm_size_in_every_integer_type(void)
{
    static const unsigned kinds[] = { A_INT32, A_UINT32, A_INT64, A_UINT64, A_SINT64, A_FIXED64, A_SFIXED32, A_DOUBLE };
    wb f[1], n;
    file_begin(&f[0]);
    for (unsigned k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        node_begin(&n, 10 + k, "ar", COLL);
        attr_num(&n, "comm_type", kinds[(k + 1) % 8], 0 /* ALL_REDUCE */);
        attr_num(&n, "comm_size", kinds[k], 1048576 + k);
        file_put(&f[0], &n);
    }
    rs_trace *t = NULL;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(import(f, 1, &t, NULL, &err), RS_OK);
    uint32_t nops;
    const rs_op *ops = rs_trace_program(t, 0, &nops);
    CU_ASSERT_EQUAL_FATAL(nops, 8);
    for (uint32_t i = 0; i < nops; i++) {
        CU_ASSERT_EQUAL(ops[i].kind, RS_OP_COLL);
        CU_ASSERT_EQUAL(ops[i].coll, RS_COLL_ALLREDUCE);
        CU_ASSERT_EQUAL(ops[i].bytes, 1048576 + i);
    }
    rs_trace_destroy(t);
}

static void test_chakra_rejects_negative_size_naming_offset(void)
{
    wb f[1], n;
    file_begin(&f[0]);
    size_t off = f[0].n;
    node_begin(&n, 3, "ar", COLL);
    attr_num(&n, "comm_type", A_INT64, 0);
    attr_num(&n, "comm_size", A_INT64, -5);
    file_put(&f[0], &n);
    rs_trace *t = NULL;
    rs_err err;
    CU_ASSERT_EQUAL(import(f, 1, &t, NULL, &err), RS_EFORMAT);
    CU_ASSERT_PTR_NULL(t);
    char want[64];
    snprintf(want, sizeof want, "t.0.et: rank 0, byte offset %zu: node 3", off);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "comm_size"));
}

/* Rank 1 receives four independent messages, then computes on all four:
 * four deps, two more than an op holds, so one zero-time join takes two. */
static void test_chakra_joins_more_than_two_deps(void)
{
    wb f[2], n;
    file_begin(&f[0]);
    file_begin(&f[1]);
    for (int k = 0; k < 4; k++)
        add_pair(f, (uint64_t)k, 1000, k);
    uint64_t deps[4] = { 0, 1, 2, 3 };
    node_begin(&n, 9, "sum", COMP);
    node_deps(&n, 5, deps, 4);
    w_key(&n, 7, 0);
    w_var(&n, 3); /* duration_micros */
    file_put(&f[1], &n);
    rs_trace *t = NULL;
    rs_chakra_stats st;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(import(f, 2, &t, &st, &err), RS_OK);
    CU_ASSERT_EQUAL(st.joins, 1);
    CU_ASSERT_EQUAL(st.serialized, 0);
    uint32_t nops;
    const rs_op *ops = rs_trace_program(t, 1, &nops);
    CU_ASSERT_EQUAL_FATAL(nops, 6);
    /* four receives, each on its own stream (none waits for another) */
    for (uint32_t i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(ops[i].kind, RS_OP_RECV);
        for (uint32_t j = 0; j < i; j++)
            CU_ASSERT_NOT_EQUAL(ops[i].stream, ops[j].stream);
    }
    /* the join: zero time on the compute stream, two receives */
    CU_ASSERT_EQUAL(ops[4].kind, RS_OP_COMPUTE);
    CU_ASSERT_EQUAL(ops[4].duration, 0);
    CU_ASSERT(ops[4].dep[0] < 4 && ops[4].dep[1] < 4 && ops[4].dep[0] != ops[4].dep[1]);
    /* the compute follows the join on stream 0 and names the other two */
    CU_ASSERT_EQUAL(ops[5].duration, 3000000);
    CU_ASSERT(ops[5].dep[0] < 4 && ops[5].dep[1] < 4);
    uint32_t seen = 1u << ops[4].dep[0] | 1u << ops[4].dep[1] | 1u << ops[5].dep[0] | 1u << ops[5].dep[1];
    CU_ASSERT_EQUAL(seen, 0xf);
    rs_trace_destroy(t);
}

/* A metadata node between a send and a compute passes the dependency on;
 * a dependency stream order already implies is dropped. */
static void test_chakra_contracts_empty_nodes_keeping_deps(void)
{
    wb f[2], n;
    file_begin(&f[0]);
    file_begin(&f[1]);
    add_pair(f, 1, 64, -1);
    uint64_t d1 = 1, d2 = 2, d3[2] = { 1, 3 };
    node_begin(&n, 2, "mark", METADATA);
    node_deps(&n, 4, &d1, 1);
    file_put(&f[0], &n);
    node_begin(&n, 3, "c", COMP);
    node_deps(&n, 4, &d2, 1);
    w_key(&n, 7, 0);
    w_var(&n, 1);
    file_put(&f[0], &n);
    node_begin(&n, 4, "c2", COMP);
    node_deps(&n, 5, d3, 2); /* the send (implied through c) and c (stream order) */
    w_key(&n, 7, 0);
    w_var(&n, 1);
    file_put(&f[0], &n);
    rs_trace *t = NULL;
    rs_chakra_stats st;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(import(f, 2, &t, &st, &err), RS_OK);
    CU_ASSERT_EQUAL(st.contracted, 1);
    uint32_t nops;
    const rs_op *ops = rs_trace_program(t, 0, &nops);
    CU_ASSERT_EQUAL_FATAL(nops, 3);
    CU_ASSERT_EQUAL(ops[0].kind, RS_OP_SEND);
    CU_ASSERT_EQUAL(ops[1].dep[0], 0);
    CU_ASSERT_EQUAL(ops[2].dep[0], RS_NONE);
    rs_trace_destroy(t);
}

static void test_chakra_export_then_import_keeps_programs(void)
{
    /* an AllToAll then a compute on each of two ranks */
    wb f[2], n;
    file_begin(&f[0]);
    file_begin(&f[1]);
    node_begin(&n, 1, "ar", COLL);
    attr_num(&n, "comm_type", A_INT64, 6);
    attr_num(&n, "comm_size", A_UINT64, 4096);
    file_put(&f[0], &n);
    file_put(&f[1], &n);
    uint64_t d = 1;
    node_begin(&n, 2, "c", COMP);
    node_deps(&n, 5, &d, 1);
    w_key(&n, 7, 0);
    w_var(&n, 7);
    file_put(&f[0], &n);
    file_put(&f[1], &n);
    rs_trace *t = NULL, *u = NULL;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(import(f, 2, &t, NULL, &err), RS_OK);
    rs_chakra_file g[2];
    uint8_t *b[2];
    for (uint32_t r = 0; r < 2; r++) {
        size_t len;
        CU_ASSERT_EQUAL_FATAL(rs_chakra_export_rank(t, r, &b[r], &len, &err), RS_OK);
        /* handed over in reverse order: the rank field places them */
        g[1 - r] = (rs_chakra_file){ .name = "x", .rank = r, .buf = b[r], .len = len };
    }
    CU_ASSERT_EQUAL_FATAL(rs_chakra_import(g, 2, NULL, &u, NULL, &err), RS_OK);
    for (uint32_t r = 0; r < 2; r++) {
        uint32_t na, nb;
        const rs_op *a = rs_trace_program(t, r, &na), *c = rs_trace_program(u, r, &nb);
        CU_ASSERT_EQUAL_FATAL(na, nb);
        for (uint32_t i = 0; i < na; i++)
            CU_ASSERT(rs_op_equal(&a[i], &c[i]));
        free(b[r]);
    }
    CU_ASSERT_EQUAL(rs_trace_program(u, 0, &(uint32_t){ 0 })[0].coll, RS_COLL_ALLTOALL);
    rs_trace_destroy(t);
    rs_trace_destroy(u);
}


/* Twenty independent messages each way: fifteen communication streams
 * take the first fifteen, the other five share a stream with an op they do
 * not depend on, counted. */
static void test_chakra_counts_ops_serialized_past_15_chains(void)
{
    wb f[2];
    file_begin(&f[0]);
    file_begin(&f[1]);
    for (int k = 0; k < 20; k++)
        add_pair(f, (uint64_t)k, 100, -1);
    rs_trace *t = NULL;
    rs_chakra_stats st;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(import(f, 2, &t, &st, &err), RS_OK);
    CU_ASSERT_EQUAL(st.serialized, 10);
    uint32_t nops;
    const rs_op *ops = rs_trace_program(t, 0, &nops);
    CU_ASSERT_EQUAL_FATAL(nops, 20);
    for (uint32_t i = 0; i < 15; i++)
        CU_ASSERT_EQUAL(ops[i].stream, i + 1);
    for (uint32_t i = 15; i < 20; i++) {
        CU_ASSERT(ops[i].stream >= 1 && ops[i].stream < RS_STREAMS_MAX);
        CU_ASSERT_EQUAL(ops[i].dep[0], RS_NONE);
    }
    rs_trace_destroy(t);
}

/* Collectives railsim has no algorithm for run as the stand-ins
 * docs/chakra.md gives, counted; a zero-byte barrier moves one byte. */
static void test_chakra_maps_other_collectives_to_stand_ins(void)
{
    static const struct { int ct; int coll; } m[] = { { 1, RS_COLL_REDUCESCATTER }, { 3, RS_COLL_ALLGATHER },
                                                     { 4, RS_COLL_ALLGATHER }, { 5, RS_COLL_ALLGATHER },
                                                     { 8, RS_COLL_REDUCESCATTER }, { 9, RS_COLL_ALLREDUCE } };
    wb f[1], n;
    file_begin(&f[0]);
    for (unsigned k = 0; k < 6; k++) {
        node_begin(&n, k, "c", COLL);
        attr_num(&n, "comm_type", A_UINT32, m[k].ct);
        attr_num(&n, "comm_size", A_UINT64, m[k].ct == 9 ? 0 : 4096);
        file_put(&f[0], &n);
    }
    node_begin(&n, 99, "c", COLL);
    attr_num(&n, "comm_type", A_INT64, 10);
    attr_num(&n, "comm_size", A_UINT64, 1);
    wb bad[1] = { f[0] };
    file_put(&bad[0], &n);
    rs_trace *t = NULL;
    rs_chakra_stats st;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(import(f, 1, &t, &st, &err), RS_OK);
    CU_ASSERT_EQUAL(st.approximated, 5); /* REDUCE_SCATTER_BLOCK is a ReduceScatter */
    uint32_t nops;
    const rs_op *ops = rs_trace_program(t, 0, &nops);
    CU_ASSERT_EQUAL_FATAL(nops, 6);
    for (unsigned k = 0; k < 6; k++)
        CU_ASSERT_EQUAL(ops[k].coll, m[k].coll);
    CU_ASSERT_EQUAL(ops[5].bytes, 1);
    rs_trace_destroy(t);
    CU_ASSERT_EQUAL(import(bad, 1, &t, NULL, &err), RS_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "comm_type 10"));
}

static const rs_cu_test chakra_tests[] = {
    RS_CU_TEST(test_chakra_accepts_comm_size_in_every_integer_type),
    RS_CU_TEST(test_chakra_rejects_negative_size_naming_offset),
    RS_CU_TEST(test_chakra_joins_more_than_two_deps),
    RS_CU_TEST(test_chakra_contracts_empty_nodes_keeping_deps),
    RS_CU_TEST(test_chakra_export_then_import_keeps_programs),
    RS_CU_TEST(test_chakra_counts_ops_serialized_past_15_chains),
    RS_CU_TEST(test_chakra_maps_other_collectives_to_stand_ins),
};

static void register_suites(void) { RS_CU_SUITE("chakra", chakra_tests); }

int main(void) { return rs_cu_run(register_suites); }
