/*
 * test_summary.c - summary.json's text (run/summary.c): the ports array,
 * built a port at a time, comes out byte for byte as jansson dumps the
 * whole tree, for no port, one and several.
 */
#include "cu_main.h"

#include <jansson.h>

#include "summary.h"

static void fill_port(rs_net_port_info *pi, uint32_t i)
{
    memset(pi, 0, sizeof *pi);
    snprintf(pi->name, sizeof pi->name, "leaf%u.p%u", i / 4, i % 4);
    snprintf(pi->peer, sizeof pi->peer, "gpu%u.nic \"q\"\n", i); /* escapes stay escaped */
    pi->tx_pkts = 1000 + i;
    pi->tx_bytes = 4096ull * (i + 1);
    pi->max_queue_bytes = i * 7;
    pi->drops = i % 2;
    pi->paused_ps = 123456789ull * i;
}

/* The summary of nports ports, as written, and the same re-dumped from
 * its own parse: equal when the spliced ports are formatted as jansson
 * would have formatted them. */
static void check_ports(uint32_t nports)
{
    rs_scenario sc;
    rs_scenario_default(&sc);
    rs_net_port_info ports[3];
    for (uint32_t i = 0; i < nports; i++)
        fill_port(&ports[i], i);
    rs_result_data d;
    memset(&d, 0, sizeof d);
    d.status = "ok";
    d.ports = ports;
    d.nports = nports;
    char *pt = rs_summary_ports_text(&d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pt);
    json_t *tree = rs_summary_json(&sc, &d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tree);
    char *text = rs_summary_text(tree, pt);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NULL(json_object_get(tree, "ports")); /* the placeholder is gone from the tree */

    json_error_t je;
    json_t *back = json_loads(text, 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    const json_t *a = json_object_get(back, "ports");
    CU_ASSERT_TRUE(json_is_array(a));
    CU_ASSERT_EQUAL(json_array_size(a), nports);
    for (uint32_t i = 0; i < nports && i < json_array_size(a); i++) {
        const json_t *o = json_array_get(a, i);
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "name")), ports[i].name);
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "peer")), ports[i].peer);
        CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "tx_bytes")), (json_int_t)ports[i].tx_bytes);
        CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "paused_ps")), (json_int_t)ports[i].paused_ps);
    }
    /* The key after ports is still there, in its place. */
    CU_ASSERT_PTR_NOT_NULL(json_object_get(back, "packet_hops"));
    char *again = json_dumps(back, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    CU_ASSERT_PTR_NOT_NULL_FATAL(again);
    CU_ASSERT_STRING_EQUAL(again, text);
    free(again);
    json_decref(back);
    free(text); /* pt's buffer: rs_summary_text took it */
    json_decref(tree);
}

static void test_summary_no_ports(void) { check_ports(0); }
static void test_summary_one_port(void) { check_ports(1); }
static void test_summary_three_ports(void) { check_ports(3); }

static const rs_cu_test summary_tests[] = {
    RS_CU_TEST(test_summary_no_ports),
    RS_CU_TEST(test_summary_one_port),
    RS_CU_TEST(test_summary_three_ports),
};

static void register_suites(void) { RS_CU_SUITE("summary", summary_tests); }

int main(void) { return rs_cu_run(register_suites); }
