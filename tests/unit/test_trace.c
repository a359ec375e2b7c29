/*
 * test_trace.c - the in-memory trace and its file format (traces/trace.c,
 * trace_codec.c, trace_file.c): round trips, rank classes, and a reader
 * that rejects every truncation and corruption without crashing (run
 * under ASan in CI).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cu_main.h"
#include "gen.h"
#include "plan.h"
#include "trace.h"

static rs_trace *gen_plan(const rs_plan *p)
{
    rs_trace *t = NULL;
    rs_err err;
    int rc = rs_gen(p, &t, &err);
    if (rc)
        fprintf(stderr, "\n  rs_gen: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, RS_OK);
    return t;
}

static rs_trace *gen_preset(const char *name, uint32_t gpus)
{
    rs_plan p;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_plan_preset(name, &p, &err), RS_OK);
    if (gpus)
        CU_ASSERT_EQUAL_FATAL(rs_plan_set_gpus(&p, gpus, &err), RS_OK);
    return gen_plan(&p);
}

/* A small plan exercising every op kind: TP, PP, DP with ZeRO-1, 2 stages. */
static rs_trace *gen_small(void)
{
    rs_plan p;
    rs_plan_default(&p);
    p.model.layers = 4;
    p.par.tp = 2;
    p.par.pp = 2;
    p.par.dp = 2;
    p.par.zero = 1;
    p.par.global_batch = 4;
    return gen_plan(&p);
}

/* Everything observable through the API is equal. */
static void assert_same(const rs_trace *a, const rs_trace *b)
{
    CU_ASSERT_EQUAL_FATAL(rs_trace_nranks(a), rs_trace_nranks(b));
    CU_ASSERT_EQUAL(rs_trace_ngpus(a), rs_trace_ngpus(b));
    CU_ASSERT_EQUAL_FATAL(rs_trace_nclasses(a), rs_trace_nclasses(b));
    CU_ASSERT_EQUAL_FATAL(rs_trace_ncomms(a), rs_trace_ncomms(b));
    CU_ASSERT_EQUAL_FATAL(rs_trace_nslots(a), rs_trace_nslots(b));
    CU_ASSERT_EQUAL_FATAL(rs_trace_nstrings(a), rs_trace_nstrings(b));
    CU_ASSERT_STRING_EQUAL(rs_trace_name(a), rs_trace_name(b));
    CU_ASSERT(memcmp(rs_trace_iteration(a), rs_trace_iteration(b), sizeof(rs_trace_iter)) == 0);
    for (uint32_t i = 0; i < rs_trace_nstrings(a); i++)
        CU_ASSERT_STRING_EQUAL(rs_trace_string(a, i), rs_trace_string(b, i));
    for (uint32_t c = 0; c < rs_trace_ncomms(a); c++) {
        uint32_t na, nb;
        const uint32_t *ma = rs_trace_comm_ranks(a, c, &na), *mb = rs_trace_comm_ranks(b, c, &nb);
        CU_ASSERT_EQUAL_FATAL(na, nb);
        CU_ASSERT(memcmp(ma, mb, na * sizeof *ma) == 0);
        CU_ASSERT_EQUAL(rs_trace_comm_dim(a, c), rs_trace_comm_dim(b, c));
    }
    uint32_t ns = rs_trace_nslots(a);
    for (uint32_t r = 0; r < rs_trace_nranks(a); r++) {
        CU_ASSERT_EQUAL(rs_trace_rank_gpu(a, r), rs_trace_rank_gpu(b, r));
        CU_ASSERT_EQUAL(rs_trace_rank_class(a, r), rs_trace_rank_class(b, r));
        CU_ASSERT(memcmp(rs_trace_rank_slots(a, r), rs_trace_rank_slots(b, r), ns * sizeof(uint32_t)) == 0);
    }
    for (uint32_t c = 0; c < rs_trace_nclasses(a); c++) {
        uint32_t na, nb;
        const rs_op *oa = rs_trace_class_program(a, c, &na), *ob = rs_trace_class_program(b, c, &nb);
        CU_ASSERT_EQUAL_FATAL(na, nb);
        uint32_t bad = 0;
        for (uint32_t i = 0; i < na; i++)
            bad += !rs_op_equal(&oa[i], &ob[i]);
        CU_ASSERT_EQUAL(bad, 0);
        CU_ASSERT_EQUAL(rs_trace_class_ranks(a, c), rs_trace_class_ranks(b, c));
    }
}

static void round_trip(rs_trace *t)
{
    uint8_t *buf;
    size_t len;
    rs_err err;
    rs_trace_file_stats st;
    CU_ASSERT_EQUAL_FATAL(rs_trace_encode(t, &buf, &len, &st, &err), RS_OK);
    CU_ASSERT_EQUAL(st.file_bytes, len);
    rs_trace *u = NULL;
    int rc = rs_trace_decode(buf, len, "mem", &u, NULL, &err);
    if (rc)
        fprintf(stderr, "\n  decode: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, RS_OK);
    assert_same(t, u);
    rs_trace_destroy(u);
    free(buf);
}

static void test_trace_round_trip_keeps_every_op(void)
{
    const char *presets[] = { "llama2-7b", "llama2-70b", "gpt3-175b", "gpt-13b", "mixtral-8x7b" };
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
        rs_trace *t = gen_preset(presets[i], 0);
        round_trip(t);
        rs_trace_destroy(t);
    }
    rs_trace *t = gen_small();
    round_trip(t);
    rs_trace_destroy(t);
    /* CP + ZeRO-3 + recompute + GPipe + a placement order */
    rs_plan p;
    rs_plan_default(&p);
    p.model.layers = 4;
    p.par.tp = 2;
    p.par.cp = 2;
    p.par.pp = 2;
    p.par.dp = 2;
    p.par.zero = 3;
    p.par.recompute = 1;
    p.par.schedule = RS_SCHED_GPIPE;
    p.par.global_batch = 6;
    snprintf(p.order, sizeof p.order, "tp,dp,cp,pp");
    t = gen_plan(&p);
    round_trip(t);
    rs_trace_destroy(t);
}

static void test_trace_file_round_trip_and_atomic_write(void)
{
    rs_trace *t = gen_small();
    char path[64];
    snprintf(path, sizeof path, "/tmp/rs_test_trace_XXXXXX");
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    rs_err err;
    rs_trace_file_stats ws, rs;
    CU_ASSERT_EQUAL_FATAL(rs_trace_write(t, path, &ws, &err), RS_OK);
    char tmp[80];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    CU_ASSERT(access(tmp, F_OK) != 0); /* renamed away */
    rs_trace *u = NULL;
    CU_ASSERT_EQUAL_FATAL(rs_trace_read(path, &u, &rs, &err), RS_OK);
    assert_same(t, u);
    CU_ASSERT_EQUAL(ws.file_bytes, rs.file_bytes);
    CU_ASSERT_EQUAL(ws.payload_bytes, rs.payload_bytes);
    CU_ASSERT_EQUAL(ws.expanded_bytes, rs.expanded_bytes);
    rs_trace_destroy(u);
    unlink(path);
    CU_ASSERT_EQUAL(rs_trace_read(path, &u, NULL, &err), RS_EIO);
    CU_ASSERT(strstr(err.msg, path) != NULL);
    rs_trace_destroy(t);
}

static void test_trace_rejects_every_truncation(void)
{
    rs_trace *t = gen_small();
    uint8_t *buf;
    size_t len;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_trace_encode(t, &buf, &len, NULL, &err), RS_OK);
    uint32_t accepted = 0;
    for (size_t n = 0; n < len; n++) {
        uint8_t *cut = malloc(n ? n : 1); /* exact size: ASan sees any overread */
        memcpy(cut, buf, n);
        rs_trace *u = NULL;
        int rc = rs_trace_decode(cut, n, "cut.rst", &u, NULL, &err);
        accepted += rc != RS_EFORMAT;
        CU_ASSERT(u == NULL);
        if (rc == RS_EFORMAT)
            CU_ASSERT(strstr(err.msg, "cut.rst") != NULL);
        free(cut);
    }
    CU_ASSERT_EQUAL(accepted, 0);
    /* the payload parser alone, behind zlib and the CRCs */
    uint8_t *pl;
    size_t pn;
    CU_ASSERT_EQUAL_FATAL(rs_trace_payload_encode(t, &pl, &pn, &err), RS_OK);
    accepted = 0;
    for (size_t n = 0; n < pn; n++) {
        uint8_t *cut = malloc(n ? n : 1);
        memcpy(cut, pl, n);
        rs_trace *u = NULL;
        int rc = rs_trace_payload_decode(cut, n, "cut", &u, &err);
        accepted += rc != RS_EFORMAT;
        rs_trace_destroy(u);
        free(cut);
    }
    CU_ASSERT_EQUAL(accepted, 0);
    free(pl);
    free(buf);
    rs_trace_destroy(t);
}

static void test_trace_rejects_flipped_bytes(void)
{
    rs_trace *t = gen_small();
    uint8_t *buf;
    size_t len;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_trace_encode(t, &buf, &len, NULL, &err), RS_OK);
    uint32_t accepted = 0;
    static const uint8_t masks[] = { 0x01, 0x80, 0xff };
    for (size_t i = 0; i < len; i++)
        for (size_t k = 0; k < sizeof masks; k++) {
            uint8_t *c = malloc(len);
            memcpy(c, buf, len);
            c[i] ^= masks[k];
            rs_trace *u = NULL;
            accepted += rs_trace_decode(c, len, "flip.rst", &u, NULL, &err) != RS_EFORMAT;
            rs_trace_destroy(u);
            free(c);
        }
    CU_ASSERT_EQUAL(accepted, 0);
    /* Behind the checksums, a flipped payload byte may still decode to a
     * valid trace (a different duration); it must never crash or produce
     * a trace that breaks the checks. */
    uint8_t *pl;
    size_t pn;
    CU_ASSERT_EQUAL_FATAL(rs_trace_payload_encode(t, &pl, &pn, &err), RS_OK);
    for (size_t i = 0; i < pn; i++)
        for (size_t k = 0; k < sizeof masks; k++) {
            uint8_t *c = malloc(pn);
            memcpy(c, pl, pn);
            c[i] ^= masks[k];
            rs_trace *u = NULL;
            int rc = rs_trace_payload_decode(c, pn, "flip", &u, &err);
            CU_ASSERT(rc == RS_OK || rc == RS_EFORMAT);
            if (rc == RS_OK) {
                /* walk it the way replay would */
                for (uint32_t r = 0; r < rs_trace_nranks(u); r++) {
                    uint32_t n;
                    const rs_op *ops = rs_trace_program(u, r, &n);
                    for (uint32_t j = 0; j < n; j++) {
                        CU_ASSERT(ops[j].dep[0] == RS_NONE || ops[j].dep[0] < j);
                        if (ops[j].kind == RS_OP_COLL) {
                            uint32_t m;
                            CU_ASSERT(rs_trace_op_comm(u, r, &ops[j]) < rs_trace_ncomms(u));
                            rs_trace_comm_ranks(u, rs_trace_op_comm(u, r, &ops[j]), &m);
                        } else if (ops[j].kind != RS_OP_COMPUTE) {
                            CU_ASSERT(rs_trace_op_peer(u, r, &ops[j]) < rs_trace_nranks(u));
                        }
                    }
                }
            }
            rs_trace_destroy(u);
            free(c);
        }
    free(pl);
    free(buf);
    rs_trace_destroy(t);
}

/* CRC-32 (IEEE), bitwise: the test does not link zlib. */
static uint32_t crc32_ieee(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
    }
    return ~c;
}

static void test_trace_names_wrong_magic_and_version(void)
{
    rs_trace *t = gen_small();
    uint8_t *buf;
    size_t len;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_trace_encode(t, &buf, &len, NULL, &err), RS_OK);
    rs_trace *u = NULL;
    buf[0] = 'X';
    CU_ASSERT_EQUAL(rs_trace_decode(buf, len, "m.rst", &u, NULL, &err), RS_EFORMAT);
    CU_ASSERT(strstr(err.msg, "m.rst") && strstr(err.msg, "magic"));
    buf[0] = 'R';
    buf[8] = 2; /* version 2, with a correct header checksum */
    uint32_t crc = crc32_ieee(buf, 40);
    for (int i = 0; i < 4; i++)
        buf[40 + i] = (uint8_t)(crc >> (8 * i));
    CU_ASSERT_EQUAL(rs_trace_decode(buf, len, "v.rst", &u, NULL, &err), RS_EFORMAT);
    CU_ASSERT(strstr(err.msg, "v.rst") && strstr(err.msg, "version 2") && strstr(err.msg, "expected version 1"));
    CU_ASSERT_PTR_NULL(u);
    free(buf);
    rs_trace_destroy(t);
}

static void test_trace_rank_classes_deduplicate(void)
{
    rs_plan p;
    rs_plan_default(&p);
    p.model.layers = 4;
    p.par.pp = 4;
    p.par.dp = 8;
    p.par.tp = 2;
    p.par.global_batch = 32;
    /* 1F1B: each stage has its own warm-up, so its own program */
    rs_trace *t = gen_plan(&p);
    CU_ASSERT_EQUAL(rs_trace_nclasses(t), 4);
    CU_ASSERT_EQUAL(rs_trace_class_ranks(t, 0), 16);
    rs_trace_destroy(t);
    /* GPipe: the two middle stages run identical programs */
    p.par.schedule = RS_SCHED_GPIPE;
    t = gen_plan(&p);
    CU_ASSERT_EQUAL(rs_trace_nclasses(t), 3);
    CU_ASSERT_EQUAL(rs_trace_rank_class(t, 16), rs_trace_rank_class(t, 32));
    rs_trace_destroy(t);
    /* no pipeline: everybody shares one program */
    p.par.pp = 1;
    p.par.dp = 32;
    t = gen_plan(&p);
    CU_ASSERT_EQUAL(rs_trace_nclasses(t), 1);
    rs_trace_destroy(t);
}

static void test_trace_builder_rejects_bad_programs(void)
{
    rs_trace *t;
    rs_err err;
    uint32_t lbl, cls, comm;
    CU_ASSERT_EQUAL_FATAL(rs_trace_create(2, 1, &t, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_trace_add_string(t, "x", &lbl, &err), RS_OK);
    rs_op ops[2] = {
        { RS_OP_COMPUTE, RS_DIM_NONE, 0, 0, RS_NONE, lbl, { RS_NONE, RS_NONE }, 0, 5 },
        { RS_OP_COLL, RS_DIM_DP, 2, 1, 0, lbl, { 1, RS_NONE }, 8, 0 }, /* depends on itself */
    };
    CU_ASSERT_EQUAL(rs_trace_add_class(t, ops, 2, &cls, &err), RS_OK);
    uint32_t again;
    CU_ASSERT_EQUAL(rs_trace_add_class(t, ops, 2, &again, &err), RS_OK);
    CU_ASSERT_EQUAL(again, cls); /* identical programs share a class */
    uint32_t one = 1;
    CU_ASSERT_EQUAL(rs_trace_add_comm(t, RS_DIM_DP, &one, 1, &comm, &err), RS_OK);
    uint32_t slot = comm;
    CU_ASSERT_EQUAL(rs_trace_set_rank(t, 0, 0, cls, &slot, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_trace_set_rank(t, 1, 1, cls, &slot, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_trace_finish(t, &err), RS_EINVAL);
    CU_ASSERT(strstr(err.msg, "op 1") && strstr(err.msg, "dep"));
    rs_trace_destroy(t);

    /* a rank whose slot names a communicator it is not in */
    CU_ASSERT_EQUAL_FATAL(rs_trace_create(2, 1, &t, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_trace_add_string(t, "x", &lbl, &err), RS_OK);
    ops[1].dep[0] = 0;
    CU_ASSERT_EQUAL(rs_trace_add_class(t, ops, 2, &cls, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_trace_add_comm(t, RS_DIM_DP, &one, 1, &comm, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_trace_set_rank(t, 0, 0, cls, &slot, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_trace_set_rank(t, 1, 1, cls, &slot, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_trace_finish(t, &err), RS_EINVAL);
    CU_ASSERT(strstr(err.msg, "rank 0") && strstr(err.msg, "communicator"));
    rs_trace_destroy(t);
}

/* The acceptance figure: gpt-1t on 16,384 GPUs well under 1 MB. */
static void test_trace_trillion_parameters_on_16k_gpus_fit_in_a_megabyte(void)
{
    rs_trace *t = gen_preset("gpt-1t", 16384);
    uint8_t *buf;
    size_t len;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_trace_encode(t, &buf, &len, NULL, &err), RS_OK);
    CU_ASSERT(len < 100 * 1000);
    rs_trace *u = NULL;
    CU_ASSERT_EQUAL_FATAL(rs_trace_decode(buf, len, "g1t", &u, NULL, &err), RS_OK);
    assert_same(t, u);
    rs_trace_destroy(u);
    free(buf);
    rs_trace_destroy(t);
}

static const rs_cu_test trace_tests[] = {
    RS_CU_TEST(test_trace_round_trip_keeps_every_op),
    RS_CU_TEST(test_trace_file_round_trip_and_atomic_write),
    RS_CU_TEST(test_trace_rejects_every_truncation),
    RS_CU_TEST(test_trace_rejects_flipped_bytes),
    RS_CU_TEST(test_trace_names_wrong_magic_and_version),
    RS_CU_TEST(test_trace_rank_classes_deduplicate),
    RS_CU_TEST(test_trace_builder_rejects_bad_programs),
    RS_CU_TEST(test_trace_trillion_parameters_on_16k_gpus_fit_in_a_megabyte),
};

static void register_suites(void) { RS_CU_SUITE("trace", trace_tests); }

int main(void) { return rs_cu_run(register_suites); }
