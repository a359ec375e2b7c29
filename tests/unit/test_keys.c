/*
 * test_keys.c - the JSON key-table reader (engine/keys.h) on a small table
 * of its own: what it stores, what it rejects and in which words. The
 * scenario, plan and parts suites test the three real tables.
 */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "cu_main.h"
#include "keys.h"

typedef struct demo {
    uint32_t count;
    uint64_t bytes;
    double rate;
    int mode;
    int on;
    char name[8];
    char gpu[8];
} demo;

static const char *const mode_names[] = { "fast", "all-to-all", NULL };
static const char *const gpu_names[] = { "a100", "h100", NULL };

static const rs_key demo_keys[] = {
    { "preset", RS_KEY_SKIP, 0, 0, 0, 0, 0, 0, false, NULL, NULL },
    RS_KEY_U(demo, "count", count, 1, 100, "a count"),
    RS_KEY_U(demo, "size.bytes", bytes, 0, (uint64_t)1 << 40, "bytes"),
    RS_KEY_D(demo, "size.rate", rate, 0, true, 10, "a rate"),
    RS_KEY_E(demo, "mode", mode, mode_names, "a mode"),
    RS_KEY_B(demo, "opt.on", on, "a switch"),
    RS_KEY_S(demo, "opt.name", name, NULL, "a name"),
    RS_KEY_S(demo, "opt.gpu", gpu, gpu_names, "a GPU"),
};

static int given_count;

static int count_given(const rs_key *k, void *base, void *ctx, const char *path, rs_err *err)
{
    (void)k, (void)base, (void)ctx, (void)path, (void)err;
    given_count++;
    return RS_OK;
}

static const rs_key_table demo_table = {
    .keys = demo_keys, .nkeys = sizeof demo_keys / sizeof demo_keys[0], .noun = "key", .given = count_given,
};

/* Apply the JSON text to *d; the return code, err filled. */
static int apply(demo *d, const char *text, rs_err *err)
{
    json_t *root;
    rs_err_clear(err);
    int rc = rs_keys_parse("d.json", text, strlen(text), &root, err);
    if (rc == RS_OK)
        rc = rs_keys_apply_json(&demo_table, d, NULL, root, "d.json", err);
    json_decref(root);
    return rc;
}

static void expect_bad(const char *text, const char *msg)
{
    demo d = { 0 };
    rs_err err;
    CU_ASSERT_EQUAL(apply(&d, text, &err), RS_EINVAL);
    if (!strstr(err.msg, msg))
        fprintf(stderr, "\n  for %s: '%s' lacks '%s'\n", text, err.msg, msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, msg));
}

static void test_keys_stores_every_type(void)
{
    demo d = { 0 };
    rs_err err;
    given_count = 0;
    CU_ASSERT_EQUAL_FATAL(apply(&d, "{\"count\": 7.0, \"size\": {\"bytes\": 1099511627776, \"rate\": 2.5},"
                                    "\"mode\": \"alltoall\", \"opt\": {\"on\": \"true\", \"name\": \"x\","
                                    "\"gpu\": \"h-100\"}, \"preset\": [1]}", &err), RS_OK);
    CU_ASSERT_EQUAL(d.count, 7);
    CU_ASSERT_EQUAL(d.bytes, (uint64_t)1 << 40);
    CU_ASSERT_DOUBLE_EQUAL(d.rate, 2.5, 0);
    CU_ASSERT_EQUAL(d.mode, 1); /* spelled with other hyphens */
    CU_ASSERT_EQUAL(d.on, 1);
    CU_ASSERT_STRING_EQUAL(d.name, "x");
    CU_ASSERT_STRING_EQUAL(d.gpu, "h100"); /* stored as the table spells it */
    CU_ASSERT_EQUAL(given_count, 7);      /* the skipped key is not given */
}

static void test_keys_rejects_with_one_sentence(void)
{
    expect_bad("{\"count\": 0}", "d.json: count: expected an integer from 1 to 100, got 0");
    expect_bad("{\"count\": 1.5}", "count: expected an integer from 1 to 100, got 1.5");
    expect_bad("{\"size\": {\"rate\": 0}}", "size.rate: expected a number greater than 0 and at most 10, got 0");
    expect_bad("{\"mode\": \"fats\"}", "mode: expected one of \"fast\", \"all-to-all\", got \"fats\" "
                                       "(did you mean \"fast\"?)");
    expect_bad("{\"opt\": {\"on\": 1}}", "opt.on: expected true or false, got 1");
    expect_bad("{\"opt\": {\"name\": \"too long\"}}", "opt.name: expected a string of at most 7 characters");
    expect_bad("{\"opt\": {\"gpu\": \"v100\"}}", "opt.gpu: expected one of \"a100\", \"h100\", got \"v100\"");
    expect_bad("{\"size\": 3}", "d.json: size: expected an object of size.* keys, got a number");
    expect_bad("{\"size.rate\": 1}", "key 'size.rate' must be written nested, as {\"size\": {\"rate\": ...}}");
    expect_bad("{\"cuont\": 1}", "d.json: unknown key 'cuont' (did you mean 'count'?)");
    expect_bad("{\"size\": {\"zzzzzz\": 1}}", "d.json: unknown key 'size.zzzzzz'");
    expect_bad("{\"count\": 1,}", "d.json:1:");
    expect_bad("[1]", "d.json: expected a JSON object at the top level, got an array");
}

static void test_keys_text_values(void)
{
    demo d = { 0 };
    rs_err err;
    CU_ASSERT_EQUAL(rs_keys_apply_text(&demo_table, &d, NULL, "size.bytes", "1e9", &err), RS_OK);
    CU_ASSERT_EQUAL(d.bytes, 1000000000u);
    CU_ASSERT_EQUAL(rs_keys_apply_text(&demo_table, &d, NULL, "opt.on", "false", &err), RS_OK);
    CU_ASSERT_EQUAL(rs_keys_apply_text(&demo_table, &d, NULL, "size.rate", "inf", &err), RS_EINVAL);
    CU_ASSERT_STRING_EQUAL(err.msg, "--set size.rate: expected a number greater than 0 and at most 10, got \"inf\"");
    CU_ASSERT_EQUAL(rs_keys_apply_text(&demo_table, &d, NULL, "size", "1", &err), RS_EINVAL);
    CU_ASSERT_STRING_EQUAL(err.msg, "--set size: 'size' is a group of keys; expected one of them, e.g. 'size.bytes'");
    CU_ASSERT_EQUAL(rs_keys_apply_text(&demo_table, &d, NULL, "preset", "x", &err), RS_EINVAL);
}

static void test_keys_unknown_lists_keys_when_nothing_is_close(void)
{
    rs_key_table t = demo_table;
    t.noun = "part";
    t.unknown_lists_keys = true;
    json_t *root = json_loads("{\"qqqqqqqq\": 1}", 0, NULL);
    demo d = { 0 };
    rs_err err;
    CU_ASSERT_EQUAL(rs_keys_apply_json(&t, &d, NULL, root, "p.json", &err), RS_EINVAL);
    CU_ASSERT_STRING_EQUAL(err.msg, "p.json: unknown part 'qqqqqqqq'; expected one of preset, count, size.bytes, "
                                    "size.rate, mode, opt.on, opt.name, opt.gpu");
    json_decref(root);
}

static void test_keys_writes_json_by_section(void)
{
    demo d = { 3, 4, 0.5, 0, 1, "n", "a100" };
    json_t *j = rs_keys_to_json(&demo_table, &d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    char *text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    CU_ASSERT_STRING_EQUAL(text, "{\"count\":3,\"size\":{\"bytes\":4,\"rate\":0.5},\"mode\":\"fast\","
                                 "\"opt\":{\"on\":true,\"name\":\"n\",\"gpu\":\"a100\"}}");
    free(text);
    json_decref(j);
}

static void test_keys_edit_distance_counts_swaps_once(void)
{
    CU_ASSERT_EQUAL(rs_edit_distance("transciever", "transceiver", 2), 1);
    CU_ASSERT_EQUAL(rs_edit_distance("abc", "xyz", 2), 3); /* cap + 1 */
    char out[8];
    CU_ASSERT_STRING_EQUAL(rs_printable("a\nbcdefghij", out, sizeof out), "a?bcdef");
}

static const rs_cu_test keys_tests[] = {
    RS_CU_TEST(test_keys_stores_every_type),
    RS_CU_TEST(test_keys_rejects_with_one_sentence),
    RS_CU_TEST(test_keys_text_values),
    RS_CU_TEST(test_keys_unknown_lists_keys_when_nothing_is_close),
    RS_CU_TEST(test_keys_writes_json_by_section),
    RS_CU_TEST(test_keys_edit_distance_counts_swaps_once),
};

static void register_suites(void) { RS_CU_SUITE("keys", keys_tests); }

int main(void) { return rs_cu_run(register_suites); }
