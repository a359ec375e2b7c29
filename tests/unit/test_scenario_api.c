/*
 * test_scenario_api.c - CUnit suite "scenario_api": the public scenario
 * API of run.h as a program outside the library sees it (run.h alone, no
 * library header): rs_scenario_set, _get, _clone, _add_faults, _net,
 * _net_create, _has_faults, _replays, the run flags, the brief summary
 * and rs_summary_headline. A standalone executable, test_scenario_api;
 * exits with the number of failed tests.
 */
#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

/* err's message contains s; err is one sentence. */
#define ASSERT_MSG_HAS(err, s)                                              \
    do {                                                                    \
        if (!strstr((err).msg, (s)))                                        \
            fprintf(stderr, "\n  message [%s] lacks [%s]\n", (err).msg, (s)); \
        CU_ASSERT_PTR_NOT_NULL(strstr((err).msg, (s)));                     \
    } while (0)

#define ASSERT_ONE_LINE(err)                                                \
    do {                                                                    \
        CU_ASSERT((err).msg[0] != '\0');                                    \
        CU_ASSERT_PTR_NULL(strchr((err).msg, '\n'));                        \
    } while (0)

/* ---- the public scenario API (run.h): keys, clone, faults, net ------------ */

#define NSETS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* A scenario from the public API: the defaults, then the sets. */
static rs_scenario *scen_new(char *const *sets, int nsets)
{
    rs_scenario *sc = NULL;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_scenario_create(&sc, &err), RS_OK);
    int rc = rs_scenario_load_string(sc, NULL, sets, nsets, &err);
    if (rc != RS_OK)
        fprintf(stderr, "\n  scenario rejected: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, RS_OK);
    return sc;
}

static char *dump_of(const rs_scenario *sc)
{
    char *text = NULL;
    CU_ASSERT_EQUAL_FATAL(rs_scenario_dump(sc, &text), RS_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    return text;
}

/* rs_scenario_get of key is exactly want. */
#define ASSERT_GET(sc, key, want)                                                  \
    do {                                                                           \
        char *got_ = NULL;                                                         \
        rs_err gerr_;                                                              \
        int grc_ = rs_scenario_get((sc), (key), &got_, &gerr_);                    \
        CU_ASSERT_EQUAL(grc_, RS_OK);                                              \
        CU_ASSERT_PTR_NOT_NULL(got_);                                              \
        if (!got_ || strcmp(got_, (want)) != 0)                                    \
            fprintf(stderr, "\n  get %s: [%s], expected [%s] (%s)\n", (key),       \
                    got_ ? got_ : "(null)", (want), grc_ ? gerr_.msg : "");        \
        CU_ASSERT(got_ && strcmp(got_, (want)) == 0);                              \
        free(got_);                                                                \
    } while (0)

/* rs_scenario_set over a loaded scenario applies its keys and keeps every
 * other key: the same as loading all the sets at once. */
static void test_scenario_set_applies_over_existing(void)
{
    char *base[] = { "topology.kind=rail-only", "topology.gpus=64", "traffic.kind=incast", "seed=11" };
    rs_scenario *sc = scen_new(base, NSETS(base));
    rs_err err;
    char *more[] = { "traffic.bytes=4096", "topology.gpus=128", "pfc.enabled=false" };
    CU_ASSERT_EQUAL_FATAL(rs_scenario_set(sc, more, NSETS(more), &err), RS_OK);
    ASSERT_GET(sc, "topology.gpus", "128");
    ASSERT_GET(sc, "traffic.bytes", "4096");
    ASSERT_GET(sc, "pfc.enabled", "false");
    /* Not reset to the defaults. */
    ASSERT_GET(sc, "topology.kind", "\"rail-only\"");
    ASSERT_GET(sc, "traffic.kind", "\"incast\"");
    ASSERT_GET(sc, "seed", "11");
    char *all[] = { "topology.kind=rail-only", "topology.gpus=64", "traffic.kind=incast", "seed=11",
                    "traffic.bytes=4096", "topology.gpus=128", "pfc.enabled=false" };
    rs_scenario *want = scen_new(all, NSETS(all));
    char *a = dump_of(sc), *b = dump_of(want);
    CU_ASSERT_STRING_EQUAL(a, b);
    free(a);
    free(b);
    /* fidelity set by key moves the network's level with it. */
    char *flow[] = { "fidelity=flow" };
    CU_ASSERT_EQUAL(rs_scenario_set(sc, flow, 1, &err), RS_OK);
    rs_net_config c;
    rs_scenario_net(sc, &c);
    CU_ASSERT_EQUAL(c.fidelity, RS_FIDELITY_FLOW);
    /* No sets: nothing changes. */
    a = dump_of(sc);
    CU_ASSERT_EQUAL(rs_scenario_set(sc, NULL, 0, &err), RS_OK);
    b = dump_of(sc);
    CU_ASSERT_STRING_EQUAL(a, b);
    free(a);
    free(b);
    rs_scenario_destroy(want);
    rs_scenario_destroy(sc);
}

/* A bad key or value anywhere among the sets: RS_EINVAL naming the key,
 * and the scenario byte for byte as before (the good sets before it
 * not applied either). */
static void test_scenario_set_error_leaves_scenario_unchanged(void)
{
    char *base[] = { "topology.gpus=64", "traffic.bytes=1000" };
    rs_scenario *sc = scen_new(base, NSETS(base));
    char *before = dump_of(sc);
    static const struct {
        const char *good, *bad, *names;
    } cases[] = {
        { "topology.gpus=32", "topology.radx=8", "topology.radx" },
        { "traffic.bytes=7", "topology.gpus=0", "topology.gpus" },
        { "seed=3", "topology.kind=clos", "topology.kind" },
        { "topology.gpus=32", "pfc.enabled=maybe", "pfc.enabled" },
        { "traffic.bytes=7", "topology.gpus", "topology.gpus" }, /* no '=' */
        { "topology.gpus=32", "topology=8", "topology" },
        { "seed=3", "faults.schedule=soon link-down nowhere", "faults.schedule" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rs_err err;
        char *sets[] = { (char *)cases[i].good, (char *)cases[i].bad };
        int rc = rs_scenario_set(sc, sets, 2, &err);
        if (rc != RS_EINVAL)
            fprintf(stderr, "\n  set %s: got %d\n", cases[i].bad, rc);
        CU_ASSERT_EQUAL(rc, RS_EINVAL);
        CU_ASSERT_EQUAL(err.code, RS_EINVAL);
        ASSERT_MSG_HAS(err, cases[i].names);
        ASSERT_ONE_LINE(err);
        char *after = dump_of(sc);
        if (strcmp(before, after) != 0)
            fprintf(stderr, "\n  set %s changed the scenario\n", cases[i].bad);
        CU_ASSERT_STRING_EQUAL(before, after);
        free(after);
    }
    /* A NULL set is refused the same way. */
    rs_err err;
    char *nul[] = { "seed=3", NULL };
    CU_ASSERT_EQUAL(rs_scenario_set(sc, nul, 2, &err), RS_EINVAL);
    char *after = dump_of(sc);
    CU_ASSERT_STRING_EQUAL(before, after);
    free(after);
    free(before);
    rs_scenario_destroy(sc);
}

/* transport.dcqcn.profile through rs_scenario_set starts the constants
 * from that profile, as rs_scenario_load does; a constant given in the
 * same call wins over the profile, wherever it stands among the sets. */
static void test_scenario_set_dcqcn_profile_as_load(void)
{
    rs_scenario *def = scen_new(NULL, 0);
    char *g_connectx = NULL, *g_paper = NULL;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_scenario_get(def, "transport.dcqcn.g", &g_connectx, &err), RS_OK);

    char *prof[] = { "transport.dcqcn.profile=paper-2015" };
    rs_scenario *sc = scen_new(NULL, 0);
    CU_ASSERT_EQUAL_FATAL(rs_scenario_set(sc, prof, 1, &err), RS_OK);
    rs_scenario *want = scen_new(prof, 1);
    char *a = dump_of(sc), *b = dump_of(want);
    CU_ASSERT_STRING_EQUAL(a, b);
    free(a);
    free(b);
    CU_ASSERT_EQUAL_FATAL(rs_scenario_get(sc, "transport.dcqcn.g", &g_paper, &err), RS_OK);
    CU_ASSERT(strcmp(g_connectx, g_paper) != 0); /* the profile did change the constants */
    ASSERT_GET(sc, "transport.dcqcn.profile", "\"paper-2015\"");

    /* An explicit constant, before or after the profile, wins over it. */
    char *before_p[] = { "transport.dcqcn.fast_recovery=7", "transport.dcqcn.profile=paper-2015" };
    char *after_p[] = { "transport.dcqcn.profile=paper-2015", "transport.dcqcn.fast_recovery=7" };
    char *const *orders[] = { before_p, after_p };
    for (int k = 0; k < 2; k++) {
        rs_scenario *s2 = scen_new(NULL, 0);
        CU_ASSERT_EQUAL_FATAL(rs_scenario_set(s2, orders[k], 2, &err), RS_OK);
        ASSERT_GET(s2, "transport.dcqcn.fast_recovery", "7");
        ASSERT_GET(s2, "transport.dcqcn.profile", "\"paper-2015\"");
        ASSERT_GET(s2, "transport.dcqcn.g", g_paper); /* the rest from the profile */
        rs_scenario *w2 = scen_new(orders[k], 2);
        a = dump_of(s2);
        b = dump_of(w2);
        CU_ASSERT_STRING_EQUAL(a, b);
        free(a);
        free(b);
        rs_scenario_destroy(w2);
        rs_scenario_destroy(s2);
    }

    /* Back to connectx from a scenario loaded with paper-2015: the
     * connectx constants again, as the defaults. */
    char *back[] = { "transport.dcqcn.profile=connectx" };
    CU_ASSERT_EQUAL(rs_scenario_set(sc, back, 1, &err), RS_OK);
    a = dump_of(sc);
    b = dump_of(def);
    CU_ASSERT_STRING_EQUAL(a, b);
    free(a);
    free(b);
    free(g_connectx);
    free(g_paper);
    rs_scenario_destroy(want);
    rs_scenario_destroy(sc);
    rs_scenario_destroy(def);
}

static void test_scenario_get_returns_json_values(void)
{
    char *sets[] = { "topology.gpus=64", "topology.kind=rail-only", "pfc.enabled=false", "ecn.enabled=true",
                     "fidelity=flow", "topology.nic_gbps=200", "transport.dcqcn.g=0.25",
                     "capture.ports=gpu0.nic" };
    rs_scenario *sc = scen_new(sets, NSETS(sets));
    ASSERT_GET(sc, "topology.gpus", "64");
    ASSERT_GET(sc, "topology.kind", "\"rail-only\"");
    ASSERT_GET(sc, "pfc.enabled", "false");
    ASSERT_GET(sc, "ecn.enabled", "true");
    ASSERT_GET(sc, "fidelity", "\"flow\"");
    ASSERT_GET(sc, "capture.ports", "\"gpu0.nic\"");
    /* Reals as JSON numbers: parse them back. */
    rs_err err;
    char *got = NULL;
    CU_ASSERT_EQUAL_FATAL(rs_scenario_get(sc, "topology.nic_gbps", &got, &err), RS_OK);
    CU_ASSERT_DOUBLE_EQUAL(strtod(got, NULL), 200.0, 0.0);
    free(got);
    CU_ASSERT_EQUAL_FATAL(rs_scenario_get(sc, "transport.dcqcn.g", &got, &err), RS_OK);
    CU_ASSERT_DOUBLE_EQUAL(strtod(got, NULL), 0.25, 0.0);
    free(got);
    /* The seed from its top-level key, matching a fresh default's. */
    rs_scenario *def = scen_new(NULL, 0);
    rs_net_config c;
    rs_scenario_net(def, &c);
    char want[32];
    snprintf(want, sizeof want, "%llu", (unsigned long long)c.seed);
    ASSERT_GET(def, "seed", want);
    ASSERT_GET(def, "fidelity", "\"packet\"");
    rs_scenario_destroy(def);

    /* Unknown keys and section names: RS_EINVAL, *out NULL, the key named. */
    static const char *const bad[] = { "topology.radx", "topology", "transport.dcqcn", "nosuchkey",
                                       "topology.gpus.x", "", "nosection.gpus" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *out = (char *)"sentinel";
        rs_err_clear(&err);
        int rc = rs_scenario_get(sc, bad[i], &out, &err);
        if (rc != RS_EINVAL)
            fprintf(stderr, "\n  get [%s] gave %d\n", bad[i], rc);
        CU_ASSERT_EQUAL(rc, RS_EINVAL);
        CU_ASSERT_PTR_NULL(out);
        if (bad[i][0])
            ASSERT_MSG_HAS(err, bad[i]);
        ASSERT_ONE_LINE(err);
    }
    rs_scenario_destroy(sc);
}

/* Every key of the dump reads back through rs_scenario_get as the dump
 * writes it. */
static void test_scenario_get_every_key_matches_dump(void)
{
    char *sets[] = { "topology.kind=rail-only", "traffic.kind=collective", "workload.plan=demo-dense" };
    rs_scenario *sc = scen_new(sets, NSETS(sets));
    char *text = dump_of(sc);
    json_t *j = json_loads(text, 0, NULL);
    free(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    size_t n = 0;
    const char *name, *sub;
    json_t *v, *leaf;
    json_object_foreach(j, name, v) {
        if (!json_is_object(v)) {
            char *want = json_dumps(v, JSON_ENCODE_ANY);
            ASSERT_GET(sc, name, want);
            free(want);
            n++;
            continue;
        }
        json_object_foreach(v, sub, leaf) {
            char key[128];
            snprintf(key, sizeof key, "%s.%s", name, sub);
            char *want = json_dumps(leaf, JSON_ENCODE_ANY);
            ASSERT_GET(sc, key, want);
            free(want);
            n++;
        }
    }
    CU_ASSERT(n >= 28);
    json_decref(j);
    rs_scenario_destroy(sc);
}

static void test_scenario_clone_is_independent(void)
{
    char *sets[] = { "topology.gpus=32", "topology.kind=rail-only", "faults.schedule=5us link-down gpu0.nic" };
    rs_scenario *sc = scen_new(sets, NSETS(sets));
    rs_scenario *cl = NULL;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_scenario_clone(&cl, sc, &err), RS_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cl);
    CU_ASSERT_PTR_NOT_EQUAL(cl, sc);
    char *orig = dump_of(sc), *copy = dump_of(cl);
    CU_ASSERT_STRING_EQUAL(orig, copy);
    free(copy);
    /* Changing the clone leaves the original alone, strings included. */
    char *more[] = { "topology.gpus=128", "topology.kind=fat-tree" };
    CU_ASSERT_EQUAL(rs_scenario_set(cl, more, 2, &err), RS_OK);
    char *f[] = { "7us link-down gpu1.nic" };
    CU_ASSERT_EQUAL(rs_scenario_add_faults(cl, f, 1, &err), RS_OK);
    ASSERT_GET(cl, "topology.gpus", "128");
    ASSERT_GET(cl, "faults.schedule", "\"5us link-down gpu0.nic;7us link-down gpu1.nic\"");
    char *now = dump_of(sc);
    CU_ASSERT_STRING_EQUAL(orig, now);
    ASSERT_GET(sc, "topology.gpus", "32");
    ASSERT_GET(sc, "faults.schedule", "\"5us link-down gpu0.nic\"");
    free(now);
    /* And the other way round. */
    char *more2[] = { "seed=99" };
    CU_ASSERT_EQUAL(rs_scenario_set(sc, more2, 1, &err), RS_OK);
    ASSERT_GET(sc, "seed", "99");
    ASSERT_GET(cl, "topology.kind", "\"fat-tree\"");
    char *cseed = NULL;
    CU_ASSERT_EQUAL(rs_scenario_get(cl, "seed", &cseed, &err), RS_OK);
    CU_ASSERT(cseed && strcmp(cseed, "99") != 0);
    free(cseed);
    free(orig);
    rs_scenario_destroy(cl);
    rs_scenario_destroy(sc);
}

static void test_scenario_add_faults_appends_or_leaves_unchanged(void)
{
    rs_scenario *sc = scen_new(NULL, 0);
    rs_err err;
    ASSERT_GET(sc, "faults.schedule", "\"\"");
    char *one[] = { "5us link-down any-spine-link" };
    CU_ASSERT_EQUAL(rs_scenario_add_faults(sc, one, 1, &err), RS_OK);
    ASSERT_GET(sc, "faults.schedule", "\"5us link-down any-spine-link\"");
    char *two[] = { "10us nic-down gpu3", "20us link-down gpu0.nic 5us" };
    CU_ASSERT_EQUAL(rs_scenario_add_faults(sc, two, 2, &err), RS_OK);
    const char *want = "\"5us link-down any-spine-link;10us nic-down gpu3;20us link-down gpu0.nic 5us\"";
    ASSERT_GET(sc, "faults.schedule", want);
    /* n = 0 adds nothing. */
    CU_ASSERT_EQUAL(rs_scenario_add_faults(sc, NULL, 0, &err), RS_OK);
    ASSERT_GET(sc, "faults.schedule", want);

    /* A bad entry after good ones: none of them appended. */
    char *before = dump_of(sc);
    static const char *const bad[] = { "bogus", "5us explode gpu0", "-1us link-down gpu0.nic", "5us link-down", "",
                                       "  ", "5us link-down gpu0.nic;6us link-up gpu0.nic" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *f[] = { "30us link-down gpu1.nic", (char *)bad[i] };
        rs_err_clear(&err);
        int rc = rs_scenario_add_faults(sc, f, 2, &err);
        if (rc != RS_EINVAL)
            fprintf(stderr, "\n  --fault [%s] gave %d\n", bad[i], rc);
        CU_ASSERT_EQUAL(rc, RS_EINVAL);
        ASSERT_MSG_HAS(err, "--fault");
        ASSERT_GET(sc, "faults.schedule", want);
        char *after = dump_of(sc);
        CU_ASSERT_STRING_EQUAL(before, after);
        free(after);
    }
    free(before);

    /* A schedule that would be full: refused whole, nothing appended. */
    rs_scenario *full = scen_new(NULL, 0);
    char *entry[1] = { "100us link-down gpu0.nic 1us" };
    int added = 0, rc;
    while ((rc = rs_scenario_add_faults(full, entry, 1, &err)) == RS_OK && added < 10000)
        added++;
    CU_ASSERT_EQUAL(rc, RS_EINVAL);
    CU_ASSERT(added > 10);
    ASSERT_MSG_HAS(err, "--fault");
    ASSERT_MSG_HAS(err, "full");
    char *sched = NULL;
    CU_ASSERT_EQUAL_FATAL(rs_scenario_get(full, "faults.schedule", &sched, &err), RS_OK);
    /* Exactly `added` entries, none cut short. */
    size_t count = 0;
    for (const char *p = sched; (p = strstr(p, "100us link-down gpu0.nic 1us")); p++)
        count++;
    CU_ASSERT_EQUAL(count, (size_t)added);
    CU_ASSERT_EQUAL(sched[strlen(sched) - 2], 's'); /* ends "...1us\"" */
    free(sched);
    /* The schedule that was built still loads as a key. */
    char *d = dump_of(full);
    rs_scenario *back = NULL;
    CU_ASSERT_EQUAL_FATAL(rs_scenario_create(&back, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_scenario_load_string(back, d, NULL, 0, &err), RS_OK);
    free(d);
    rs_scenario_destroy(back);
    rs_scenario_destroy(full);
    rs_scenario_destroy(sc);
}

static void test_scenario_net_fills_config(void)
{
    char *sets[] = { "topology.kind=rail-only", "topology.gpus=96", "topology.hb_size=4", "seed=1234",
                     "topology.mtu=1024" };
    rs_scenario *sc = scen_new(sets, NSETS(sets));
    rs_net_config c;
    memset(&c, 0xee, sizeof c);
    rs_scenario_net(sc, &c);
    CU_ASSERT_EQUAL(c.size, sizeof c);
    CU_ASSERT_EQUAL(c.kind, RS_TOPO_RAIL_ONLY);
    CU_ASSERT_EQUAL(c.gpus, 96);
    CU_ASSERT_EQUAL(c.hb_size, 4);
    CU_ASSERT_EQUAL(c.seed, 1234);
    CU_ASSERT_EQUAL(c.mtu, 1024);
    /* Untouched keys are the model's defaults. */
    rs_net_config d;
    rs_net_config_default(&d);
    CU_ASSERT_EQUAL(c.radix, d.radix);
    CU_ASSERT(c.nic_gbps == d.nic_gbps);

    /* A caller compiled with a smaller struct: only its bytes written. */
    size_t n = offsetof(rs_net_config, gpus) + sizeof c.gpus;
    unsigned char buf[sizeof(rs_net_config) + 32];
    memset(buf, 0xee, sizeof buf);
    rs_scenario_net_fill(sc, (rs_net_config *)buf, n);
    rs_net_config part;
    memcpy(&part, buf, sizeof part);
    CU_ASSERT_EQUAL(part.size, n);
    CU_ASSERT_EQUAL(part.seed, 1234);
    CU_ASSERT_EQUAL(part.kind, RS_TOPO_RAIL_ONLY);
    CU_ASSERT_EQUAL(part.gpus, 96);
    size_t untouched = 0;
    for (size_t i = n; i < sizeof buf; i++)
        untouched += buf[i] == 0xee;
    CU_ASSERT_EQUAL(untouched, sizeof buf - n);
    /* A larger one: the library's bytes, the rest left alone. */
    memset(buf, 0xee, sizeof buf);
    rs_scenario_net_fill(sc, (rs_net_config *)buf, sizeof buf);
    memcpy(&part, buf, sizeof part);
    CU_ASSERT_EQUAL(part.size, sizeof buf);
    CU_ASSERT_EQUAL(part.gpus, 96);
    CU_ASSERT_EQUAL(part.hb_size, 4);
    untouched = 0;
    for (size_t i = sizeof(rs_net_config); i < sizeof buf; i++)
        untouched += buf[i] == 0xee;
    CU_ASSERT_EQUAL(untouched, sizeof buf - sizeof(rs_net_config));
    rs_scenario_destroy(sc);
}

static void test_scenario_has_faults_and_replays(void)
{
    rs_scenario *sc = scen_new(NULL, 0);
    rs_err err;
    CU_ASSERT_EQUAL(rs_scenario_has_faults(sc), 0);
    CU_ASSERT_EQUAL(rs_scenario_replays(sc), 0);

    char *sched[] = { "faults.schedule=5us link-down gpu0.nic" };
    CU_ASSERT_EQUAL_FATAL(rs_scenario_set(sc, sched, 1, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_scenario_has_faults(sc), 1);
    char *clear[] = { "faults.schedule=" };
    CU_ASSERT_EQUAL_FATAL(rs_scenario_set(sc, clear, 1, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_scenario_has_faults(sc), 0);

    char *mtbf[] = { "faults.mtbf_us=100", "faults.horizon_us=1000" };
    CU_ASSERT_EQUAL_FATAL(rs_scenario_set(sc, mtbf, 2, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_scenario_has_faults(sc), 1);
    char *nombtf[] = { "faults.mtbf_us=0" };
    CU_ASSERT_EQUAL_FATAL(rs_scenario_set(sc, nombtf, 1, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_scenario_has_faults(sc), 0);

    char *f[] = { "1us link-down gpu0.nic" };
    CU_ASSERT_EQUAL_FATAL(rs_scenario_add_faults(sc, f, 1, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_scenario_has_faults(sc), 1);
    /* Other faults.* keys alone are not faults. */
    char *other[] = { "faults.schedule=", "faults.baseline=true", "faults.convergence_us=5" };
    CU_ASSERT_EQUAL_FATAL(rs_scenario_set(sc, other, NSETS(other), &err), RS_OK);
    CU_ASSERT_EQUAL(rs_scenario_has_faults(sc), 0);

    char *plan[] = { "workload.plan=demo-dense" };
    CU_ASSERT_EQUAL_FATAL(rs_scenario_set(sc, plan, 1, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_scenario_replays(sc), 1);
    CU_ASSERT_EQUAL(rs_scenario_has_faults(sc), 0);
    char *noplan[] = { "workload.plan=" };
    CU_ASSERT_EQUAL_FATAL(rs_scenario_set(sc, noplan, 1, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_scenario_replays(sc), 0);
    char *trace[] = { "workload.trace=/nonexistent/trace.json" }; /* not read until the run */
    CU_ASSERT_EQUAL_FATAL(rs_scenario_set(sc, trace, 1, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_scenario_replays(sc), 1);
    /* Collective traffic is not a replay. */
    char *coll[] = { "workload.trace=", "traffic.kind=collective" };
    CU_ASSERT_EQUAL_FATAL(rs_scenario_set(sc, coll, 2, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_scenario_replays(sc), 0);
    rs_scenario_destroy(sc);
}

/* A class the topology has no member of: refused, or with
 * RS_RUN_FAULTS_ABSENT_OK listed as absent. */
static void test_scenario_net_create_absent_ok(void)
{
    char *sets[] = { "topology.kind=rail-only", "topology.gpus=16",
                     "faults.schedule=5us link-down any-spine-link" };
    rs_scenario *sc = scen_new(sets, NSETS(sets));
    rs_net *net = (rs_net *)&net; /* not NULL: must be cleared */
    rs_err err;
    CU_ASSERT_EQUAL(rs_scenario_net_create(sc, 0, &net, &err), RS_EINVAL);
    CU_ASSERT_PTR_NULL(net);
    ASSERT_MSG_HAS(err, "any-spine-link");
    ASSERT_ONE_LINE(err);

    CU_ASSERT_EQUAL_FATAL(rs_scenario_net_create(sc, RS_RUN_FAULTS_ABSENT_OK, &net, &err), RS_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(net);
    CU_ASSERT_EQUAL(rs_net_gpus(net), 16);
    CU_ASSERT_EQUAL(rs_net_fault_absent_count(net), 1);
    CU_ASSERT_EQUAL(rs_net_fault_count(net), 0);
    rs_net_fault_info fi;
    CU_ASSERT_EQUAL(rs_net_fault_absent_get(net, 0, &fi), RS_OK);
    CU_ASSERT_STRING_EQUAL(fi.spec, "any-spine-link");
    CU_ASSERT_EQUAL(rs_net_fault_absent_get(net, 1, &fi), RS_EINVAL);
    rs_net_destroy(net);
    /* The flag does not stick to the scenario. */
    net = NULL;
    CU_ASSERT_EQUAL(rs_scenario_net_create(sc, 0, &net, &err), RS_EINVAL);
    CU_ASSERT_PTR_NULL(net);

    /* A fat tree of several leaves has spine links: resolved, nothing
     * absent, with or without the flag. */
    char *ft[] = { "topology.kind=fat-tree", "topology.radix=8" };
    CU_ASSERT_EQUAL_FATAL(rs_scenario_set(sc, ft, 2, &err), RS_OK);
    for (unsigned flags = 0; flags <= RS_RUN_FAULTS_ABSENT_OK; flags += RS_RUN_FAULTS_ABSENT_OK) {
        int rc = rs_scenario_net_create(sc, flags, &net, &err);
        if (rc != RS_OK)
            fprintf(stderr, "\n  fat tree refused: %s\n", err.msg);
        CU_ASSERT_EQUAL_FATAL(rc, RS_OK);
        CU_ASSERT_EQUAL(rs_net_fault_absent_count(net), 0);
        CU_ASSERT(rs_net_fault_count(net) >= 1);
        rs_net_destroy(net);
    }

    /* A network that cannot be built: RS_EINVAL, *out NULL. */
    char *bad[] = { "topology.gpus=12", "topology.hb_size=8", "faults.schedule=" };
    CU_ASSERT_EQUAL_FATAL(rs_scenario_set(sc, bad, NSETS(bad), &err), RS_OK);
    net = (rs_net *)&net;
    CU_ASSERT_EQUAL(rs_scenario_net_create(sc, 0, &net, &err), RS_EINVAL);
    CU_ASSERT_PTR_NULL(net);
    ASSERT_MSG_HAS(err, "topology.");
    /* A name the network lacks is refused even with the flag. */
    char *name[] = { "topology.gpus=16", "faults.schedule=5us link-down gpu99.nic" };
    CU_ASSERT_EQUAL_FATAL(rs_scenario_set(sc, name, NSETS(name), &err), RS_OK);
    CU_ASSERT_EQUAL(rs_scenario_net_create(sc, RS_RUN_FAULTS_ABSENT_OK, &net, &err), RS_EINVAL);
    CU_ASSERT_PTR_NULL(net);
    ASSERT_MSG_HAS(err, "gpu99");
    rs_scenario_destroy(sc);
}

/* ---- runs: flags, brief summary, headline ------------------------------ */

static void test_summary_headline_reads_text(void)
{
    const char *what = NULL;
    double t = 0;
    CU_ASSERT_EQUAL(rs_summary_headline("{\"iteration\": {\"time_ps\": 5}, \"collective\": {\"time_ps\": 7}, "
                                        "\"sim_end_ps\": 9}", &what, &t), RS_OK);
    CU_ASSERT_STRING_EQUAL(what, "iteration");
    CU_ASSERT_DOUBLE_EQUAL(t, 5.0, 0.0);
    CU_ASSERT_EQUAL(rs_summary_headline("{\"collective\": {\"time_ps\": 7}, \"sim_end_ps\": 9}", &what, &t), RS_OK);
    CU_ASSERT_STRING_EQUAL(what, "collective");
    CU_ASSERT_DOUBLE_EQUAL(t, 7.0, 0.0);
    CU_ASSERT_EQUAL(rs_summary_headline("{\"sim_end_ps\": 123456789012, \"ports\": []}", &what, &t), RS_OK);
    CU_ASSERT_STRING_EQUAL(what, "sim_end");
    CU_ASSERT_DOUBLE_EQUAL(t, 123456789012.0, 0.0);
    /* None finished: -1, still named. */
    CU_ASSERT_EQUAL(rs_summary_headline("{\"iteration\": {\"time_ps\": null}, \"sim_end_ps\": 9}", &what, &t),
                    RS_OK);
    CU_ASSERT_STRING_EQUAL(what, "iteration");
    CU_ASSERT_DOUBLE_EQUAL(t, -1.0, 0.0);
    CU_ASSERT_EQUAL(rs_summary_headline("{\"collective\": {\"time_ps\": null}, \"sim_end_ps\": 9}", &what, &t),
                    RS_OK);
    CU_ASSERT_STRING_EQUAL(what, "collective");
    CU_ASSERT_DOUBLE_EQUAL(t, -1.0, 0.0);
    CU_ASSERT_EQUAL(rs_summary_headline("{}", &what, &t), RS_OK);
    CU_ASSERT_STRING_EQUAL(what, "sim_end");
    CU_ASSERT_DOUBLE_EQUAL(t, -1.0, 0.0);
    /* Not a JSON object. */
    static const char *const bad[] = { "[1, 2]", "5", "\"text\"", "not json", "", "{\"a\": ", "null" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        what = NULL;
        t = 0;
        CU_ASSERT_EQUAL(rs_summary_headline(bad[i], &what, &t), RS_EINVAL);
    }
    CU_ASSERT_EQUAL(rs_summary_headline(NULL, &what, &t), RS_EINVAL);
}

/* One tiny run: its brief summary is the full one without "ports", and
 * the headline read back from either is the result's figures. */
static void check_brief_and_headline(char *const *sets, int nsets, const char *want_what)
{
    rs_scenario *sc = scen_new(sets, nsets);
    rs_result *res = NULL;
    rs_err err;
    int rc = rs_run(sc, &res, &err);
    if (rc != RS_OK)
        fprintf(stderr, "\n  run failed: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, RS_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(res);
    CU_ASSERT_EQUAL(rs_result_status(res), RS_OK);

    const char *full_text = rs_result_summary_json(res);
    CU_ASSERT_PTR_NOT_NULL_FATAL(full_text);
    char *brief_text = NULL;
    CU_ASSERT_EQUAL_FATAL(rs_result_summary_brief(res, &brief_text), RS_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(brief_text);
    CU_ASSERT_PTR_NULL(strchr(brief_text, '\n')); /* compact */

    json_error_t je;
    json_t *full = json_loads(full_text, 0, &je);
    json_t *brief = json_loads(brief_text, 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(full);
    CU_ASSERT_PTR_NOT_NULL_FATAL(brief);
    CU_ASSERT(json_is_object(brief));
    CU_ASSERT_PTR_NOT_NULL(json_object_get(full, "ports"));
    CU_ASSERT(json_is_array(json_object_get(full, "ports")));
    CU_ASSERT_PTR_NULL(json_object_get(brief, "ports"));
    /* Everything else is the same. */
    CU_ASSERT_EQUAL(json_object_size(brief) + 1, json_object_size(full));
    json_object_del(full, "ports");
    CU_ASSERT(json_equal(full, brief));
    CU_ASSERT(strlen(brief_text) <= strlen(full_text));

    rs_result_figures fig;
    rs_result_figures_get(res, &fig);
    CU_ASSERT_STRING_EQUAL(fig.what, want_what);
    CU_ASSERT(fig.time_ps > 0);
    const char *what = NULL;
    double t = 0;
    CU_ASSERT_EQUAL(rs_summary_headline(brief_text, &what, &t), RS_OK);
    CU_ASSERT_STRING_EQUAL(what, fig.what);
    CU_ASSERT_DOUBLE_EQUAL(t, fig.time_ps, 0.0);
    CU_ASSERT_EQUAL(rs_summary_headline(full_text, &what, &t), RS_OK);
    CU_ASSERT_STRING_EQUAL(what, fig.what);
    CU_ASSERT_DOUBLE_EQUAL(t, fig.time_ps, 0.0);
    if (!strcmp(want_what, "sim_end"))
        CU_ASSERT_DOUBLE_EQUAL(t, (double)fig.sim_end_ps, 0.0);
    json_decref(full);
    json_decref(brief);
    free(brief_text);
    rs_result_destroy(res);
    rs_scenario_destroy(sc);
}

static void test_result_summary_brief_and_headline(void)
{
    char *perm[] = { "topology.gpus=16", "traffic.kind=permutation", "traffic.bytes=8192" };
    check_brief_and_headline(perm, NSETS(perm), "sim_end");
    char *coll[] = { "topology.gpus=16", "traffic.kind=collective", "traffic.op=allreduce",
                     "traffic.bytes=65536", "traffic.iters=2" };
    check_brief_and_headline(coll, NSETS(coll), "collective");
}

/* rs_run_opts.flags: RS_RUN_FAULTS_ABSENT_OK runs what rs_run refuses,
 * listing the entry as absent; RS_RUN_AS_FAULTED models a fault-free run
 * as the faulted runs are (its time is that of a run whose faults are all
 * absent). */
static void test_run_flags(void)
{
    char *sets[] = { "topology.kind=rail-only", "topology.gpus=16", "fidelity=flow",
                     "traffic.kind=permutation", "traffic.bytes=1048576",
                     "faults.schedule=1us link-down any-spine-link" };
    rs_scenario *sc = scen_new(sets, NSETS(sets));
    char *before = dump_of(sc);
    rs_result *res = (rs_result *)&res;
    rs_err err;
    CU_ASSERT_EQUAL(rs_run(sc, &res, &err), RS_EINVAL);
    CU_ASSERT_PTR_NULL(res);
    ASSERT_MSG_HAS(err, "any-spine-link");

    rs_run_opts o;
    rs_run_opts_default(&o);
    CU_ASSERT_EQUAL(o.flags, 0);
    o.flags = RS_RUN_FAULTS_ABSENT_OK;
    int rc = rs_run_with(sc, &o, &res, &err);
    if (rc != RS_OK)
        fprintf(stderr, "\n  run failed: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, RS_OK);
    CU_ASSERT_EQUAL(rs_result_status(res), RS_OK);
    const rs_result_data *d = rs_result_data_get(res);
    CU_ASSERT_EQUAL(d->nabsent, 1);
    CU_ASSERT_EQUAL(d->nfaults, 0);
    if (d->nabsent == 1)
        CU_ASSERT_STRING_EQUAL(d->absent[0].spec, "any-spine-link");
    json_t *s = json_loads(rs_result_summary_json(res), 0, NULL);
    CU_ASSERT(json_array_size(json_object_get(s, "faults_absent")) == 1);
    json_decref(s);
    rs_result_figures fa;
    rs_result_figures_get(res, &fa);
    rs_result_destroy(res);
    /* The scenario is the caller's: not changed by the run. */
    char *after = dump_of(sc);
    CU_ASSERT_STRING_EQUAL(before, after);
    free(after);
    free(before);

    /* Without the faults, as faulted: the same time as with them absent. */
    char *nofault[] = { "faults.schedule=" };
    CU_ASSERT_EQUAL_FATAL(rs_scenario_set(sc, nofault, 1, &err), RS_OK);
    rs_run_opts_default(&o);
    o.flags = RS_RUN_AS_FAULTED;
    CU_ASSERT_EQUAL_FATAL(rs_run_with(sc, &o, &res, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_result_status(res), RS_OK);
    rs_result_figures ff;
    rs_result_figures_get(res, &ff);
    CU_ASSERT_EQUAL(rs_result_data_get(res)->nabsent, 0);
    rs_result_destroy(res);
    CU_ASSERT_STRING_EQUAL(ff.what, fa.what);
    CU_ASSERT_DOUBLE_EQUAL(ff.time_ps, fa.time_ps, 0.0);
    CU_ASSERT_EQUAL(ff.sim_end_ps, fa.sim_end_ps);
    /* And the flag is what made it so: plain, the cross-rail (PXN)
     * relays of this permutation are single flows, and take other time. */
    CU_ASSERT_EQUAL_FATAL(rs_run(sc, &res, &err), RS_OK);
    rs_result_figures fp;
    rs_result_figures_get(res, &fp);
    rs_result_destroy(res);
    CU_ASSERT_STRING_EQUAL(fp.what, ff.what);
    CU_ASSERT(fp.time_ps > 0 && fp.time_ps != ff.time_ps);
    rs_scenario_destroy(sc);
}

/* ---- registration ------------------------------------------------------ */

#define TEST(fn) { #fn, fn }

static const struct {
    const char *name;
    CU_TestFunc fn;
} api_tests[] = {
    TEST(test_scenario_set_applies_over_existing),
    TEST(test_scenario_set_error_leaves_scenario_unchanged),
    TEST(test_scenario_set_dcqcn_profile_as_load),
    TEST(test_scenario_get_returns_json_values),
    TEST(test_scenario_get_every_key_matches_dump),
    TEST(test_scenario_clone_is_independent),
    TEST(test_scenario_add_faults_appends_or_leaves_unchanged),
    TEST(test_scenario_net_fills_config),
    TEST(test_scenario_has_faults_and_replays),
    TEST(test_scenario_net_create_absent_ok),
    TEST(test_summary_headline_reads_text),
    TEST(test_result_summary_brief_and_headline),
    TEST(test_run_flags),
};

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("scenario_api", NULL, NULL);
    int bad = !s;
    for (size_t i = 0; !bad && i < sizeof api_tests / sizeof api_tests[0]; i++)
        bad = !CU_add_test(s, api_tests[i].name, api_tests[i].fn);
    if (bad) {
        fprintf(stderr, "test_scenario_api: %s\n", CU_get_error_msg());
        CU_cleanup_registry();
        return 1;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    /* CU_basic_run_tests returns 0 even when tests fail. */
    int failed = (int)CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return failed;
}
