/*
 * test_scenario.c - CUnit suite "scenario": the scenario reader (run/scenario.c).
 * Pins defaults, nested-file and --set application, every rejection path
 * with its return code and the words of its message, and the JSON round
 * trip (test_scenario_api.c tests the public scenario API). A standalone
 * executable, test_scenario; exits with the number of failed tests.
 *
 * Expected values come from rs_net_config_default / rs_synth_config_default
 * at run time or from the values a test writes itself, never from copies of
 * the defaults, so the suite does not break when a default changes.
 */
#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scenario.h"

/* ---- helpers ----------------------------------------------------------- */

/* Write text to a new file under /tmp; path receives its name. */
static void write_temp(char path[64], const char *text)
{
    strcpy(path, "/tmp/rs_scenario_XXXXXX");
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    size_t n = strlen(text);
    CU_ASSERT_FATAL(write(fd, text, n) == (ssize_t)n);
    CU_ASSERT_FATAL(close(fd) == 0);
}

/* Load the JSON text as a file, with optional --set strings. */
static int load_text(rs_scenario *sc, const char *text, char *const *sets, int nsets, rs_err *err)
{
    char path[64];
    write_temp(path, text);
    int rc = rs_scenario_load(sc, path, sets, nsets, err);
    unlink(path);
    return rc;
}

/* Message checks that say which substring was missing when they fail. */
#define ASSERT_MSG_HAS(err, s)                                              \
    do {                                                                    \
        if (!strstr((err).msg, (s)))                                        \
            fprintf(stderr, "\n  message [%s] lacks [%s]\n", (err).msg, (s)); \
        CU_ASSERT_PTR_NOT_NULL(strstr((err).msg, (s)));                     \
    } while (0)

#define ASSERT_MSG_LACKS(err, s) CU_ASSERT_PTR_NULL(strstr((err).msg, (s)))

/* One sentence: no newline, not empty. */
#define ASSERT_ONE_LINE(err)                                                \
    do {                                                                    \
        CU_ASSERT((err).msg[0] != '\0');                                    \
        CU_ASSERT_PTR_NULL(strchr((err).msg, '\n'));                        \
    } while (0)

static void defaults(rs_scenario *sc)
{
    rs_scenario_default(sc);
}

/* Two scenarios are equal when their JSON forms are (ignores padding). */
static int scenarios_equal(const rs_scenario *a, const rs_scenario *b)
{
    json_t *ja = rs_scenario_to_json(a), *jb = rs_scenario_to_json(b);
    int eq = ja && jb && json_equal(ja, jb);
    json_decref(ja);
    json_decref(jb);
    return eq;
}

/* A file that sets one key, for rejection tests. */
static int load_one(const char *json, rs_err *err)
{
    rs_scenario sc;
    return load_text(&sc, json, NULL, 0, err);
}

static int set_one(const char *set, rs_scenario *sc, rs_err *err)
{
    char *sets[] = { (char *)set };
    return rs_scenario_load(sc, NULL, sets, 1, err);
}

/* ---- jobs (docs/shared-clusters.md) ------------------------------------- */

/* A jobs array: each job's workload and traffic read with the scenario's
 * keys over their defaults, gpus and placement lifted into its workload,
 * comm settled (traffic: verbs, a workload: nccl); the dump loads back
 * to the same scenario; bad jobs are refused naming jobs[i] and the key. */
static void test_scenario_jobs(void)
{
    static rs_scenario sc, back;
    rs_err err;
    const char *text = "{\"topology\": {\"gpus\": 128},\n \"jobs\": ["
                       "{\"name\": \"dense\", \"gpus\": 64, \"placement\": \"fragmented\", "
                       "\"workload\": {\"plan\": \"demo-dense\", \"iterations\": 2}},"
                       "{\"name\": \"bulk\", \"gpus\": 16, \"start_us\": 5, \"routing\": {\"pxn\": \"off\"}, "
                       "\"transport\": {\"priority\": 0}, \"traffic\": {\"kind\": \"incast\", \"fan_in\": 4}}]}";
    CU_ASSERT_EQUAL_FATAL(load_text(&sc, text, NULL, 0, &err), RS_OK);
    CU_ASSERT_EQUAL(sc.njobs, 2);
    CU_ASSERT_STRING_EQUAL(sc.jobs[0].name, "dense");
    CU_ASSERT_STRING_EQUAL(sc.jobs[0].workload.plan, "demo-dense");
    CU_ASSERT_STRING_EQUAL(sc.jobs[0].workload.placement, "fragmented");
    CU_ASSERT_EQUAL(sc.jobs[0].workload.gpus, 64);
    CU_ASSERT_EQUAL(sc.jobs[0].workload.iterations, 2);
    CU_ASSERT(!sc.jobs[0].has_traffic && !rs_scenario_job_verbs(&sc.jobs[0]));
    CU_ASSERT(sc.jobs[1].has_traffic && rs_scenario_job_verbs(&sc.jobs[1]));
    CU_ASSERT_EQUAL(sc.jobs[1].traffic.kind, RS_SYNTH_INCAST);
    CU_ASSERT_EQUAL(sc.jobs[1].traffic.fan_in, 4);
    CU_ASSERT_EQUAL(sc.jobs[1].start_us, 5.0);
    CU_ASSERT_EQUAL(sc.jobs[0].pxn, 0); /* the cluster's */
    CU_ASSERT_EQUAL(sc.jobs[1].pxn, RS_PXN_OFF + 1);
    CU_ASSERT_EQUAL(sc.jobs[0].prio, 0); /* the cluster's transport.priority */
    CU_ASSERT_EQUAL(sc.jobs[1].prio, 0 + 1);
    char *dump = NULL;
    CU_ASSERT_EQUAL_FATAL(rs_scenario_dump(&sc, &dump), RS_OK);
    CU_ASSERT_EQUAL(load_text(&back, dump, NULL, 0, &err), RS_OK);
    CU_ASSERT(scenarios_equal(&sc, &back));
    CU_ASSERT_EQUAL(back.njobs, 2);
    CU_ASSERT_EQUAL(back.jobs[1].pxn, RS_PXN_OFF + 1);
    CU_ASSERT_EQUAL(back.jobs[1].prio, 1);
    free(dump);
    /* A scheduler loads and dumps back. */
    const char *sched = "{\"jobs\": [{\"traffic\": {}}], \"scheduler\": {\"arrivals\": 50, "
                        "\"interarrival_us\": 2500.5, \"seed\": 9}}";
    CU_ASSERT_EQUAL_FATAL(load_text(&sc, sched, NULL, 0, &err), RS_OK);
    CU_ASSERT(sc.sched.arrivals == 50 && sc.sched.interarrival_us == 2500.5 && sc.sched.seed == 9);
    CU_ASSERT_EQUAL_FATAL(rs_scenario_dump(&sc, &dump), RS_OK);
    CU_ASSERT_EQUAL(load_text(&back, dump, NULL, 0, &err), RS_OK);
    CU_ASSERT(scenarios_equal(&sc, &back) && back.sched.arrivals == 50);
    free(dump);
    /* An arrival list, and weights for drawn arrivals, load and dump back. */
    const char *list = "{\"jobs\": [{\"name\": \"a\", \"traffic\": {}}, {\"name\": \"b\", \"traffic\": {}}], "
                       "\"scheduler\": {\"list\": [{\"job\": \"b\", \"at_us\": 0}, {\"job\": \"a\", \"at_us\": 7.5}]}}";
    CU_ASSERT_EQUAL_FATAL(load_text(&sc, list, NULL, 0, &err), RS_OK);
    CU_ASSERT(sc.sched.nlist == 2 && sc.sched.arrivals == 2 && sc.sched.list[0].tmpl == 1 &&
              sc.sched.list[1].tmpl == 0 && sc.sched.list[1].at_us == 7.5);
    CU_ASSERT_EQUAL_FATAL(rs_scenario_dump(&sc, &dump), RS_OK);
    CU_ASSERT_EQUAL(load_text(&back, dump, NULL, 0, &err), RS_OK);
    CU_ASSERT(scenarios_equal(&sc, &back) && back.sched.nlist == 2 && back.sched.list[0].tmpl == 1);
    free(dump);
    /* A job's own nccl keys: only those given, over the cluster's. */
    const char *nc = "{\"nccl\": {\"model\": \"nccl\", \"channels\": 8}, \"jobs\": [{\"nccl\": {\"protocol\": \"ll\", "
                     "\"channels\": 4}, \"traffic\": {}}, {\"traffic\": {}}]}";
    CU_ASSERT_EQUAL_FATAL(load_text(&sc, nc, NULL, 0, &err), RS_OK);
    CU_ASSERT_EQUAL(sc.jobs[0].nccl_set, 2 | 16);
    CU_ASSERT_EQUAL(sc.jobs[1].nccl_set, 0);
    rs_nccl_config eff;
    rs_scenario_job_nccl(&sc.jobs[0], &sc.net.nccl, &eff);
    CU_ASSERT(eff.model == RS_NCCL_NCCL && eff.proto == RS_PROTO_LL && eff.channels == 4 &&
              eff.algo == sc.net.nccl.algo);
    CU_ASSERT_EQUAL_FATAL(rs_scenario_dump(&sc, &dump), RS_OK);
    CU_ASSERT_EQUAL(load_text(&back, dump, NULL, 0, &err), RS_OK);
    CU_ASSERT(scenarios_equal(&sc, &back) && back.jobs[0].nccl_set == (2 | 16) && back.jobs[0].nccl.proto == RS_PROTO_LL);
    free(dump);
    const char *weighted = "{\"jobs\": [{\"weight\": 3, \"traffic\": {}}, {\"traffic\": {}}], "
                           "\"scheduler\": {\"arrivals\": 4, \"interarrival_us\": 10}}";
    CU_ASSERT_EQUAL_FATAL(load_text(&sc, weighted, NULL, 0, &err), RS_OK);
    CU_ASSERT(sc.jobs[0].weight == 3 && sc.jobs[1].weight == 0);
    CU_ASSERT_EQUAL_FATAL(rs_scenario_dump(&sc, &dump), RS_OK);
    CU_ASSERT_EQUAL(load_text(&back, dump, NULL, 0, &err), RS_OK);
    CU_ASSERT(scenarios_equal(&sc, &back) && back.jobs[0].weight == 3);
    free(dump);
    /* Without jobs the dump has no "jobs": single-job outputs are unchanged. */
    defaults(&back);
    json_t *j = rs_scenario_to_json(&back);
    CU_ASSERT_PTR_NULL(json_object_get(j, "jobs"));
    json_decref(j);
    static const struct { const char *json, *says; } bad[] = {
        { "{\"jobs\": []}", "jobs: expected an array of 1 to" },
        { "{\"jobs\": {}}", "jobs: expected an array" },
        { "{\"jobs\": [3]}", "jobs[0]: expected an object" },
        { "{\"jobs\": [{\"name\": \"a\"}]}", "got neither" },
        { "{\"jobs\": [{\"workload\": {\"plan\": \"demo-dense\"}, \"traffic\": {}}]}", "not both" },
        { "{\"jobs\": [{\"gpu\": 8, \"traffic\": {}}]}", "jobs[0]: unknown key 'gpu'" },
        { "{\"jobs\": [{\"traffic\": {\"kind\": \"permutatio\"}}]}", "jobs[0]: " },
        { "{\"jobs\": [{\"comm\": \"verbs\", \"traffic\": {\"kind\": \"collective\"}}]}",
          "comm: a collective is NCCL's" },
        { "{\"jobs\": [{\"gpus\": 8, \"workload\": {\"gpus\": 8, \"plan\": \"demo-dense\"}}]}",
          "given twice" },
        { "{\"jobs\": [{\"name\": \"a b\", \"traffic\": {}}]}", "jobs[0]: name" },
        { "{\"jobs\": [{\"name\": \"a\", \"traffic\": {}}, {\"name\": \"a\", \"traffic\": {}}]}",
          "jobs[1]: name: 'a' is also jobs[0]'s" },
        { "{\"jobs\": [{\"comm\": \"verbs\", \"workload\": {\"plan\": \"demo-dense\"}}]}", "comm: a workload" },
        { "{\"jobs\": [{\"comm\": \"rdma\", \"traffic\": {}}]}", "comm: expected auto, nccl or verbs" },
        { "{\"jobs\": [{\"start_us\": -1, \"traffic\": {}}]}", "start_us" },
        { "{\"jobs\": [{\"routing\": {\"ecmp\": \"packet\"}, \"traffic\": {}}]}",
          "routing.ecmp: the cluster's, not a job's" },
        { "{\"jobs\": [{\"routing\": {\"pxn\": \"sometimes\"}, \"traffic\": {}}]}", "routing.pxn" },
        { "{\"jobs\": [{\"transport\": {\"cc\": \"none\"}, \"traffic\": {}}]}",
          "transport.cc: the cluster's, not a job's; expected only transport.priority" },
        { "{\"jobs\": [{\"transport\": 5, \"traffic\": {}}]}", "transport: expected an object" },
        { "{\"jobs\": [{\"nccl\": 3, \"traffic\": {}}]}", "jobs[0]: nccl: expected an object" },
        { "{\"jobs\": [{\"nccl\": {\"protocol\": \"ll64\"}, \"traffic\": {}}]}", "nccl.protocol" },
        { "{\"jobs\": [{\"transport\": {\"priority\": 8}, \"traffic\": {}}]}", "transport.priority" },
        { "{\"workload\": {\"plan\": \"demo-dense\"}, \"jobs\": [{\"traffic\": {}}]}",
          "expected workload.plan and workload.trace unset" },
        { "{\"jobs\": [{\"traffic\": {}}], \"scheduler\": {\"arrivals\": 0, \"interarrival_us\": 5}}",
          "scheduler.arrivals: expected an integer from 1 to 254" },
        { "{\"jobs\": [{\"traffic\": {}}], \"scheduler\": {\"arrivals\": 3}}",
          "scheduler: expected arrivals and interarrival_us" },
        { "{\"jobs\": [{\"traffic\": {}}], \"scheduler\": {\"list\": []}}",
          "scheduler.list: expected an array of 1 to 254 arrivals" },
        { "{\"jobs\": [{\"traffic\": {}}], \"scheduler\": {\"list\": [{\"job\": \"job0\"}]}}",
          "scheduler.list[0]: expected {\"job\": a job's name" },
        { "{\"jobs\": [{\"traffic\": {}}], \"scheduler\": {\"list\": [{\"job\": \"x\", \"at_us\": 0}]}}",
          "scheduler.list[0].job: 'x' is no job of the jobs array" },
        { "{\"jobs\": [{\"traffic\": {}}], \"scheduler\": {\"list\": [{\"job\": \"job0\", \"at_us\": 5}, "
          "{\"job\": \"job0\", \"at_us\": 4}]}}", "scheduler.list[1].at_us: 4 is before the arrival above it" },
        { "{\"jobs\": [{\"traffic\": {}}], \"scheduler\": {\"list\": [{\"job\": \"job0\", \"at_us\": 0}], "
          "\"arrivals\": 3}}", "a list gives the arrivals" },
        { "{\"jobs\": [{\"weight\": 2, \"traffic\": {}}]}", "jobs[0] (job0): weight: only a scheduler's drawn" },
        { "{\"jobs\": [{\"weight\": 0, \"traffic\": {}}]}", "jobs[0]: weight: expected a share" },
        { "{\"jobs\": [{\"traffic\": {}}], \"scheduler\": {\"arrivals\": 3, \"interarrival_us\": -1}}",
          "scheduler.interarrival_us" },
        { "{\"jobs\": [{\"traffic\": {}}], \"scheduler\": {\"arrivals\": 3, \"interarrival_us\": 1, \"fifo\": 1}}",
          "scheduler.fifo: unknown key" },
        { "{\"scheduler\": {\"arrivals\": 3, \"interarrival_us\": 1}}", "expected a jobs array" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_EQUAL(load_one(bad[i].json, &err), RS_EINVAL);
        ASSERT_MSG_HAS(err, bad[i].says);
        ASSERT_ONE_LINE(err);
    }
}

/* ---- defaults and applying values ------------------------------------- */

/* system.preset applies before every other key, wherever it stands in
 * the file or the --set list, so the keys given override it; a preset
 * set later by rs_scenario_set starts again from it. */
static void test_scenario_preset_applies_first(void)
{
    rs_scenario sc;
    rs_err err;
    const char *text = "{\"topology\": {\"hb_size\": 4}, \"system\": {\"preset\": \"dgx-h100\"}}";
    char *sets[] = { "topology.nic_gbps=200", "system.preset=dgx-a100" };
    CU_ASSERT_EQUAL_FATAL(load_text(&sc, text, NULL, 0, &err), RS_OK);
    CU_ASSERT_EQUAL(sc.preset, RS_PRESET_DGX_H100);
    CU_ASSERT_EQUAL(sc.net.hb_size, 4); /* given: kept */
    CU_ASSERT_DOUBLE_EQUAL(sc.net.hb_gbps, 18 * 20.6 * 8, 1e-9);
    CU_ASSERT_EQUAL(sc.net.nccl.model, RS_NCCL_NCCL);
    CU_ASSERT_EQUAL(sc.net.nccl.gpu, RS_GPU_H100);
    CU_ASSERT_DOUBLE_EQUAL(sc.net.rto_us, 4.096 * 1048576, 1e-6);
    CU_ASSERT_EQUAL_FATAL(load_text(&sc, text, sets, 2, &err), RS_OK);
    CU_ASSERT_EQUAL(sc.preset, RS_PRESET_DGX_A100); /* the last preset wins ... */
    CU_ASSERT_DOUBLE_EQUAL(sc.net.nic_gbps, 200, 0);
    CU_ASSERT_DOUBLE_EQUAL(sc.net.hb_gbps, 12 * 20.0 * 8, 1e-9);
    CU_ASSERT_EQUAL(sc.net.hb_size, 4); /* ... and the file's key still overrides it */
    CU_ASSERT_EQUAL(sc.net.radix, 40);
    char *later[] = { "topology.radix=32", "system.preset=dgx-b200" };
    CU_ASSERT_EQUAL_FATAL(rs_scenario_set(&sc, later, 2, &err), RS_OK);
    CU_ASSERT_EQUAL(sc.net.nccl.gpu, RS_GPU_B200);
    CU_ASSERT_EQUAL(sc.net.radix, 32);
    CU_ASSERT_DOUBLE_EQUAL(sc.net.nic_gbps, 400, 0);
    rs_scenario def;
    defaults(&def);
    CU_ASSERT_EQUAL(def.preset, RS_PRESET_DGX_H100); /* the default system (docs/systems.md) */
    CU_ASSERT_EQUAL(def.net.nccl.model, RS_NCCL_NCCL);
    char *none[] = { "system.preset=none" };
    CU_ASSERT_EQUAL_FATAL(rs_scenario_set(&def, none, 1, &err), RS_OK);
    CU_ASSERT_EQUAL(def.net.nccl.model, RS_NCCL_IDEAL); /* railsim's generic network */
    CU_ASSERT_DOUBLE_EQUAL(def.net.hb_gbps, 3600, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(def.net.rto_us, 1000, 1e-9);
    /* Frontier: a dragonfly with shared NICs; a later preset takes all of
     * it back (nothing of the dragonfly stays on a DGX). */
    char *fr[] = { "system.preset=frontier" }, *back[] = { "system.preset=dgx-h100" };
    CU_ASSERT_EQUAL_FATAL(rs_scenario_set(&def, fr, 1, &err), RS_OK);
    CU_ASSERT_EQUAL(def.net.kind, RS_TOPO_DRAGONFLY);
    CU_ASSERT_EQUAL(def.net.gpus_per_nic, 2);
    CU_ASSERT_EQUAL(def.net.df_hosts, 16);
    CU_ASSERT_EQUAL(def.net.df_group, 32);
    CU_ASSERT_EQUAL(def.net.df_attach, RS_DFLY_SPREAD);
    CU_ASSERT_EQUAL(def.net.nccl.gpu, RS_GPU_MI250X_GCD);
    CU_ASSERT_DOUBLE_EQUAL(def.net.nic_gbps, 200, 0);
    CU_ASSERT_EQUAL_FATAL(rs_scenario_set(&def, back, 1, &err), RS_OK);
    CU_ASSERT_EQUAL(def.net.kind, RS_TOPO_FAT_TREE);
    CU_ASSERT_EQUAL(def.net.gpus_per_nic, 1);
    CU_ASSERT_EQUAL(def.net.df_hosts, 0);
    CU_ASSERT_EQUAL(def.net.df_attach, RS_DFLY_PACKED);
}


static void test_scenario_defaults_when_no_file(void)
{
    rs_scenario sc, want;
    rs_err err;
    memset(&sc, 0xa5, sizeof sc);
    CU_ASSERT_EQUAL(rs_scenario_load(&sc, NULL, NULL, 0, &err), RS_OK);
    defaults(&want);
    CU_ASSERT(scenarios_equal(&sc, &want));
    CU_ASSERT_EQUAL(sc.net.gpus, want.net.gpus);
    CU_ASSERT_EQUAL(sc.net.seed, want.net.seed);
    CU_ASSERT_EQUAL(sc.traffic.kind, want.traffic.kind);
}

/* The defaults live in the models; they must pass the reader's own checks,
 * or `railsim run` would print a scenario it cannot read back. */
static void test_scenario_defaults_are_within_ranges(void)
{
    rs_scenario sc, back;
    rs_err err;
    defaults(&sc);
    json_t *j = rs_scenario_to_json(&sc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    char *text = json_dumps(j, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    int rc = load_text(&back, text, NULL, 0, &err);
    if (rc != RS_OK)
        fprintf(stderr, "\n  default rejected: %s\n", err.msg);
    CU_ASSERT_EQUAL(rc, RS_OK);
    free(text);
    json_decref(j);
}

static void test_scenario_empty_object_keeps_defaults(void)
{
    rs_scenario sc, want;
    rs_err err;
    CU_ASSERT_EQUAL(load_text(&sc, "{\"topology\": {}}", NULL, 0, &err), RS_OK);
    defaults(&want);
    CU_ASSERT(scenarios_equal(&sc, &want));
}

static void test_scenario_applies_nested_file(void)
{
    rs_scenario sc, want;
    rs_err err;
    const char *text =
        "{\n"
        "  \"seed\": 42,\n"
        "  \"topology\": {\"kind\": \"rail-only\", \"gpus\": 128, \"hb_size\": 8,\n"
        "               \"nic_gbps\": 200, \"link_latency_ns\": 12.5,\n"
        "               \"buffer_bytes\": 1099511627776},\n"
        "  \"transport\": {\"kind\": \"ideal\", \"rto_us\": 0.5, \"priority\": 7},\n"
        "  \"routing\": {\"ecmp\": \"packet\"},\n"
        "  \"traffic\": {\"kind\": \"incast\", \"bytes\": 0, \"dst\": 3, \"fan_in\": 5,\n"
        "              \"start_ns\": 1000}\n"
        "}\n";
    CU_ASSERT_EQUAL_FATAL(load_text(&sc, text, NULL, 0, &err), RS_OK);
    defaults(&want);
    CU_ASSERT_EQUAL(sc.net.seed, 42);
    CU_ASSERT_EQUAL(sc.net.kind, RS_TOPO_RAIL_ONLY);
    CU_ASSERT_EQUAL(sc.net.gpus, 128);
    CU_ASSERT_EQUAL(sc.net.hb_size, 8);
    CU_ASSERT_DOUBLE_EQUAL(sc.net.nic_gbps, 200.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(sc.net.link_latency_ns, 12.5, 0.0);
    CU_ASSERT_EQUAL(sc.net.buffer_bytes, (uint64_t)1 << 40);
    CU_ASSERT_EQUAL(sc.net.transport, RS_TRANSPORT_IDEAL);
    CU_ASSERT_DOUBLE_EQUAL(sc.net.rto_us, 0.5, 0.0);
    CU_ASSERT_EQUAL(sc.net.prio, 7);
    CU_ASSERT_EQUAL(sc.net.ecmp, RS_ECMP_PACKET);
    CU_ASSERT_EQUAL(sc.traffic.kind, RS_SYNTH_INCAST);
    CU_ASSERT_EQUAL(sc.traffic.bytes, 0);
    CU_ASSERT_EQUAL(sc.traffic.dst, 3);
    CU_ASSERT_EQUAL(sc.traffic.fan_in, 5);
    CU_ASSERT_DOUBLE_EQUAL(sc.traffic.start_ns, 1000.0, 0.0);
    /* Untouched keys keep their defaults. */
    CU_ASSERT_EQUAL(sc.net.radix, want.net.radix);
    CU_ASSERT_EQUAL(sc.net.mtu, want.net.mtu);
    CU_ASSERT_EQUAL(sc.traffic.src, want.traffic.src);
}

static void test_scenario_accepts_whole_real_for_integer(void)
{
    rs_scenario sc;
    rs_err err;
    CU_ASSERT_EQUAL(load_text(&sc, "{\"topology\": {\"gpus\": 64.0, \"mtu\": 4.096e3}}", NULL, 0, &err),
                    RS_OK);
    CU_ASSERT_EQUAL(sc.net.gpus, 64);
    CU_ASSERT_EQUAL(sc.net.mtu, 4096);
}

static void test_scenario_set_overrides_file(void)
{
    rs_scenario sc;
    rs_err err;
    char *sets[] = { "topology.gpus=256", "traffic.kind=all-to-all", "topology.gpus=512" };
    CU_ASSERT_EQUAL_FATAL(load_text(&sc, "{\"topology\": {\"gpus\": 64, \"radix\": 32}}", sets, 3, &err),
                          RS_OK);
    CU_ASSERT_EQUAL(sc.net.gpus, 512); /* the last --set wins */
    CU_ASSERT_EQUAL(sc.net.radix, 32); /* the file still applies */
    CU_ASSERT_EQUAL(sc.traffic.kind, RS_SYNTH_ALL_TO_ALL);
}

static void test_scenario_set_parses_each_type(void)
{
    rs_scenario sc;
    rs_err err;
    char *sets[] = { "seed=9223372036854775807", "topology.hb_gbps=3.6e3", "transport.kind=ideal",
                     "traffic.bytes=1e9", "topology.oversubscription=2.5", "routing.ecmp=packet" };
    CU_ASSERT_EQUAL_FATAL(rs_scenario_load(&sc, NULL, sets, 6, &err), RS_OK);
    CU_ASSERT_EQUAL(sc.net.seed, (uint64_t)INT64_MAX);
    CU_ASSERT_DOUBLE_EQUAL(sc.net.hb_gbps, 3600.0, 0.0);
    CU_ASSERT_EQUAL(sc.net.transport, RS_TRANSPORT_IDEAL);
    CU_ASSERT_EQUAL(sc.traffic.bytes, 1000000000u);
    CU_ASSERT_DOUBLE_EQUAL(sc.net.oversubscription, 2.5, 0.0);
    CU_ASSERT_EQUAL(sc.net.ecmp, RS_ECMP_PACKET);
}

static void test_scenario_accepts_range_bounds(void)
{
    rs_scenario sc;
    rs_err err;
    char *sets[] = { "topology.gpus=1", "topology.gpus=1048576", "transport.priority=0",
                     "transport.priority=7", "topology.mtu=256", "topology.mtu=4096",
                     "topology.nic_gbps=1000000", "topology.link_latency_ns=0",
                     "topology.oversubscription=64", "traffic.bytes=1125899906842624" };
    CU_ASSERT_EQUAL(rs_scenario_load(&sc, NULL, sets, 10, &err), RS_OK);
    CU_ASSERT_EQUAL(sc.traffic.bytes, (uint64_t)1 << 50);
}

/* ---- rejections: file ------------------------------------------------- */

static void test_scenario_rejects_unknown_key_with_suggestion(void)
{
    char path[64];
    rs_scenario sc;
    rs_err err;
    write_temp(path, "{\"topology\": {\"radx\": 8}}");
    CU_ASSERT_EQUAL(rs_scenario_load(&sc, path, NULL, 0, &err), RS_EINVAL);
    unlink(path);
    ASSERT_MSG_HAS(err, path);
    ASSERT_MSG_HAS(err, "unknown key 'topology.radx' (did you mean 'topology.radix'?)");
    ASSERT_ONE_LINE(err);
    CU_ASSERT_EQUAL(err.code, RS_EINVAL);
}

static void test_scenario_suggests_key_from_its_section(void)
{
    rs_err err;
    CU_ASSERT_EQUAL(load_one("{\"gpus\": 8}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "unknown key 'gpus' (did you mean 'topology.gpus'?)");
    CU_ASSERT_EQUAL(load_one("{\"transport\": {\"mtu\": 1024}}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "unknown key 'transport.mtu' (did you mean 'topology.mtu'?)");
    CU_ASSERT_EQUAL(load_one("{\"topolgy\": {}}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "unknown key 'topolgy' (did you mean 'topology'?)");
    CU_ASSERT_EQUAL(load_one("{\"topology\": {\"hb\": 8}}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "(did you mean 'topology.hb_size'?)");
    CU_ASSERT_EQUAL(load_one("{\"trafic\": {\"bytes\": 8}}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "(did you mean 'traffic'?)");
}

static void test_scenario_rejects_unknown_key_without_close_match(void)
{
    rs_err err;
    CU_ASSERT_EQUAL(load_one("{\"topology\": {\"gpus\": 8}, \"zzzzzz\": 1}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "unknown key 'zzzzzz'");
    ASSERT_MSG_LACKS(err, "did you mean");
    /* Control characters in a key do not break the one-line message. */
    CU_ASSERT_EQUAL(load_one("{\"a\\nb\": 1}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "unknown key 'a?b'");
    ASSERT_ONE_LINE(err);
}

static void test_scenario_rejects_wrong_type(void)
{
    char path[64];
    rs_scenario sc;
    rs_err err;
    write_temp(path, "{\"topology\": {\"gpus\": \"sixty-four\"}}");
    CU_ASSERT_EQUAL(rs_scenario_load(&sc, path, NULL, 0, &err), RS_EINVAL);
    unlink(path);
    char want[160];
    snprintf(want, sizeof want,
             "%s: topology.gpus: expected an integer from 1 to 1048576, got \"sixty-four\"", path);
    CU_ASSERT_STRING_EQUAL(err.msg, want);

    CU_ASSERT_EQUAL(load_one("{\"topology\": {\"nic_gbps\": true}}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "topology.nic_gbps: expected a number greater than 0 and at most 1000000, got true");
    CU_ASSERT_EQUAL(load_one("{\"seed\": null}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "seed: expected an integer from 0 to 9223372036854775807, got null");
    CU_ASSERT_EQUAL(load_one("{\"topology\": {\"kind\": 1}}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "topology.kind: expected one of \"fat-tree\", \"rail-only\", \"dragonfly\", got 1");
    CU_ASSERT_EQUAL(load_one("{\"topology\": {\"gpus\": [64]}}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "got an array");
}

static void test_scenario_rejects_negative_or_fractional_integer(void)
{
    rs_err err;
    CU_ASSERT_EQUAL(load_one("{\"topology\": {\"gpus\": -64}}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "topology.gpus: expected an integer from 1 to 1048576, got -64");
    CU_ASSERT_EQUAL(load_one("{\"topology\": {\"gpus\": 1.5}}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "got 1.5");
    CU_ASSERT_EQUAL(load_one("{\"traffic\": {\"bytes\": -1.0}}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "traffic.bytes: expected an integer from 0 to 1125899906842624");
}

static void test_scenario_rejects_out_of_range(void)
{
    rs_err err;
    CU_ASSERT_EQUAL(load_one("{\"topology\": {\"gpus\": 0}}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "topology.gpus: expected an integer from 1 to 1048576, got 0");
    CU_ASSERT_EQUAL(load_one("{\"topology\": {\"gpus\": 1048577}}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "got 1048577");
    CU_ASSERT_EQUAL(load_one("{\"transport\": {\"priority\": 8}}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "transport.priority: expected an integer from 0 to 7, got 8");
    CU_ASSERT_EQUAL(load_one("{\"topology\": {\"nic_gbps\": 0}}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "topology.nic_gbps: expected a number greater than 0 and at most 1000000, got 0");
    CU_ASSERT_EQUAL(load_one("{\"topology\": {\"oversubscription\": 0.5}}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "topology.oversubscription: expected a number from 1 to 64, got 0.5");
    CU_ASSERT_EQUAL(load_one("{\"topology\": {\"mtu\": 4097}}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "topology.mtu: expected an integer from 256 to 4096, got 4097");
    CU_ASSERT_EQUAL(load_one("{\"topology\": {\"hb_latency_ns\": -1}}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "topology.hb_latency_ns: expected a number from 0 to 1000000000, got -1");
    /* A 32-bit field must not wrap: 2^32 + 64 is not 64. */
    CU_ASSERT_EQUAL(load_one("{\"topology\": {\"gpus\": 4294967360}}", &err), RS_EINVAL);
    ASSERT_ONE_LINE(err);
}

static void test_scenario_rejects_bad_enum(void)
{
    rs_err err;
    CU_ASSERT_EQUAL(load_one("{\"topology\": {\"kind\": \"clos\"}}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "topology.kind: expected one of \"fat-tree\", \"rail-only\", \"dragonfly\", got \"clos\"");
    CU_ASSERT_EQUAL(load_one("{\"traffic\": {\"kind\": \"Incast\"}}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "\"single\", \"permutation\", \"all-to-all\", \"incast\", \"collective\", got \"Incast\"");
    ASSERT_MSG_HAS(err, "(did you mean \"incast\"?)");
}

/* traffic.kind and traffic.op take all-to-all spelled either way (and any
 * enum its value with other hyphens); a near miss names the value meant;
 * a section name three letters off is suggested. */
static void test_scenario_enum_spellings_and_suggestions(void)
{
    rs_scenario sc;
    rs_err err;
    char *a[] = { "traffic.kind=alltoall", "traffic.op=all-to-all", "transport.recovery=go_back_n" };
    CU_ASSERT_EQUAL_FATAL(rs_scenario_load(&sc, NULL, a, 3, &err), RS_OK);
    CU_ASSERT_EQUAL(sc.traffic.kind, RS_SYNTH_ALL_TO_ALL);
    CU_ASSERT_EQUAL(sc.traffic.op, RS_COLL_ALLTOALL);
    CU_ASSERT_EQUAL(sc.net.recovery, RS_RECOVERY_GBN);
    CU_ASSERT_EQUAL(set_one("routing.ecmp=adaptiv", &sc, &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "got \"adaptiv\" (did you mean \"adaptive\"?)");
    CU_ASSERT_EQUAL(set_one("routing.ecmp=zigzag", &sc, &err), RS_EINVAL);
    CU_ASSERT_PTR_NULL(strstr(err.msg, "did you mean"));
    CU_ASSERT_EQUAL(load_one("{\"topologies\": {\"gpus\": 16}}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "unknown key 'topologies' (did you mean 'topology'?)");
}

static void test_scenario_reports_syntax_error_line(void)
{
    char path[64];
    rs_scenario sc;
    rs_err err;
    /* The trailing comma leaves '}' at line 3, column 27. */
    write_temp(path, "{\n  \"seed\": 1,\n  \"topology\": {\"gpus\": 64,}\n}\n");
    CU_ASSERT_EQUAL(rs_scenario_load(&sc, path, NULL, 0, &err), RS_EINVAL);
    unlink(path);
    char want[96];
    snprintf(want, sizeof want, "%s:3:27: JSON syntax error", path);
    ASSERT_MSG_HAS(err, want);
    ASSERT_MSG_HAS(err, "line 3, column 27");
    ASSERT_MSG_HAS(err, "string or '}' expected"); /* jansson's own words */
    ASSERT_ONE_LINE(err);
}

static void test_scenario_rejects_duplicate_key(void)
{
    rs_err err;
    CU_ASSERT_EQUAL(load_one("{\n\"seed\": 1,\n\"seed\": 2\n}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "line 3");
    ASSERT_MSG_HAS(err, "duplicate object key");
}

static void test_scenario_rejects_non_object_top_level(void)
{
    rs_err err;
    CU_ASSERT_EQUAL(load_one("[{\"seed\": 1}]", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "expected a JSON object at the top level, got an array");
    CU_ASSERT_EQUAL(load_one("", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "JSON syntax error");
}

static void test_scenario_rejects_section_that_is_not_object(void)
{
    rs_err err;
    CU_ASSERT_EQUAL(load_one("{\"topology\": 64}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "topology: expected an object of topology.* keys, got a number");
}

static void test_scenario_rejects_dotted_key_in_file(void)
{
    rs_err err;
    CU_ASSERT_EQUAL(load_one("{\"topology.gpus\": 64}", &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "key 'topology.gpus' must be written nested, as {\"topology\": {\"gpus\": ...}}");
}

static void test_scenario_missing_file_is_io_error(void)
{
    rs_scenario sc;
    rs_err err;
    CU_ASSERT_EQUAL(rs_scenario_load(&sc, "/tmp/rs_scenario_no_such_file.json", NULL, 0, &err), RS_EIO);
    ASSERT_MSG_HAS(err, "/tmp/rs_scenario_no_such_file.json: cannot open scenario file");
    CU_ASSERT_EQUAL(rs_scenario_load(&sc, "/tmp", NULL, 0, &err), RS_EIO);
    ASSERT_MSG_HAS(err, "/tmp: cannot read scenario file");
}

/* ---- rejections: --set ------------------------------------------------ */

static void test_scenario_set_rejects_missing_equals(void)
{
    rs_scenario sc;
    rs_err err;
    CU_ASSERT_EQUAL(set_one("topology.gpus", &sc, &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "--set: expected KEY=VALUE");
    ASSERT_MSG_HAS(err, "\"topology.gpus\"");
    CU_ASSERT_EQUAL(set_one("=64", &sc, &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "expected KEY=VALUE");
}

static void test_scenario_set_rejects_bad_values(void)
{
    rs_scenario sc;
    rs_err err;
    CU_ASSERT_EQUAL(set_one("topology.gpus=sixty-four", &sc, &err), RS_EINVAL);
    CU_ASSERT_STRING_EQUAL(err.msg,
                           "--set topology.gpus: expected an integer from 1 to 1048576, got \"sixty-four\"");
    static const char *const bad[] = {
        "topology.gpus=", "topology.gpus=-1", "topology.gpus=64x", "topology.gpus= 64",
        "topology.gpus=0x40", "topology.gpus=1.5", "traffic.bytes=99999999999999999999999",
        "topology.nic_gbps=", "topology.nic_gbps=inf", "topology.nic_gbps=nan",
        "topology.nic_gbps=0x1p4", "topology.nic_gbps=-5", "topology.nic_gbps=1e7",
        "topology.kind=Fat-Tree", "transport.priority=8",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rs_err_clear(&err);
        int rc = set_one(bad[i], &sc, &err);
        if (rc != RS_EINVAL)
            fprintf(stderr, "\n  --set %s was accepted\n", bad[i]);
        CU_ASSERT_EQUAL(rc, RS_EINVAL);
        char want[64];
        snprintf(want, sizeof want, "--set %.*s: expected ", (int)(strchr(bad[i], '=') - bad[i]), bad[i]);
        ASSERT_MSG_HAS(err, want);
        ASSERT_ONE_LINE(err);
    }
}

static void test_scenario_set_rejects_unknown_key_with_suggestion(void)
{
    rs_scenario sc;
    rs_err err;
    CU_ASSERT_EQUAL(set_one("topology.radx=8", &sc, &err), RS_EINVAL);
    CU_ASSERT_STRING_EQUAL(err.msg, "--set topology.radx: unknown key (did you mean 'topology.radix'?)");
    CU_ASSERT_EQUAL(set_one("topology=8", &sc, &err), RS_EINVAL);
    ASSERT_MSG_HAS(err, "--set topology: 'topology' is a group of keys");
}

static void test_scenario_error_leaves_scenario_unchanged(void)
{
    rs_scenario sc, before;
    rs_err err;
    memset(&sc, 0x5a, sizeof sc);
    before = sc;
    char *sets[] = { "topology.gpus=8", "topology.gpus=0" };
    CU_ASSERT_EQUAL(rs_scenario_load(&sc, NULL, sets, 2, &err), RS_EINVAL);
    CU_ASSERT_EQUAL(memcmp(&sc, &before, sizeof sc), 0);
    CU_ASSERT_EQUAL(rs_scenario_load(NULL, NULL, NULL, 0, &err), RS_EINVAL);
    CU_ASSERT_EQUAL(rs_scenario_load(&sc, NULL, NULL, 0, NULL), RS_OK); /* err may be NULL */
}

/* ---- output ------------------------------------------------------------ */

static void test_scenario_to_json_round_trips(void)
{
    rs_scenario sc, back;
    rs_err err;
    char *sets[] = { "seed=9223372036854775807", "topology.kind=rail-only", "topology.nic_gbps=0.1",
                     "topology.hb_latency_ns=333.33333333333331", "transport.rto_us=1e-3",
                     "traffic.kind=single", "traffic.start_ns=123456.789", "traffic.bytes=1125899906842624" };
    CU_ASSERT_EQUAL_FATAL(rs_scenario_load(&sc, NULL, sets, 8, &err), RS_OK);
    json_t *j = rs_scenario_to_json(&sc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    char *text = json_dumps(j, JSON_INDENT(2));
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_EQUAL_FATAL(load_text(&back, text, NULL, 0, &err), RS_OK);
    /* Field by field: doubles must come back bit-identical. */
    CU_ASSERT_EQUAL(back.net.seed, sc.net.seed);
    CU_ASSERT_EQUAL(back.net.kind, RS_TOPO_RAIL_ONLY);
    CU_ASSERT(back.net.nic_gbps == sc.net.nic_gbps);
    CU_ASSERT(back.net.hb_latency_ns == sc.net.hb_latency_ns);
    CU_ASSERT(back.net.rto_us == sc.net.rto_us);
    CU_ASSERT(back.traffic.start_ns == sc.traffic.start_ns);
    CU_ASSERT_EQUAL(back.traffic.bytes, sc.traffic.bytes);
    CU_ASSERT(scenarios_equal(&back, &sc));
    json_t *j2 = rs_scenario_to_json(&back);
    char *text2 = json_dumps(j2, JSON_INDENT(2));
    CU_ASSERT_STRING_EQUAL(text, text2); /* byte-identical output */
    free(text2);
    json_decref(j2);
    free(text);
    json_decref(j);
}

static void test_scenario_to_json_keeps_schema_order(void)
{
    rs_scenario sc;
    rs_err err;
    CU_ASSERT_EQUAL_FATAL(rs_scenario_load(&sc, NULL, NULL, 0, &err), RS_OK);
    json_t *j = rs_scenario_to_json(&sc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    char *text = json_dumps(j, JSON_COMPACT);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    /* Sections in order, each key inside its section. */
    const char *order[] = { "\"seed\":", "\"topology\":{\"kind\":", "\"gpus\":", "\"buffer_bytes\":",
                            "\"transport\":{\"kind\":", "\"priority\":", "\"routing\":{\"ecmp\":",
                            "\"traffic\":{\"kind\":", "\"start_ns\":" };
    const char *at = text;
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        const char *p = strstr(at, order[i]);
        if (!p)
            fprintf(stderr, "\n  %s missing or out of order in %s\n", order[i], text);
        CU_ASSERT_PTR_NOT_NULL(p);
        if (p)
            at = p;
    }
    CU_ASSERT_EQUAL(strncmp(text, "{\"seed\":", 8), 0);
    free(text);
    json_decref(j);
}

static void test_scenario_print_keys_lists_every_key(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    rs_scenario_print_keys(f);
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);

    /* Every key of the JSON form starts a line of the help. */
    rs_scenario sc;
    defaults(&sc);
    json_t *j = rs_scenario_to_json(&sc);
    const char *name;
    json_t *v;
    size_t nkeys = 0;
    json_object_foreach(j, name, v) {
        const char *sub;
        json_t *leaf;
        char line[96];
        if (!json_is_object(v)) {
            snprintf(line, sizeof line, "\n%s ", name);
            CU_ASSERT_PTR_NOT_NULL(strstr(buf, line));
            nkeys++;
            continue;
        }
        json_object_foreach(v, sub, leaf) {
            snprintf(line, sizeof line, "\n%s.%s ", name, sub);
            if (!strstr(buf, line))
                fprintf(stderr, "\n  help lacks %s.%s\n", name, sub);
            CU_ASSERT_PTR_NOT_NULL(strstr(buf, line));
            nkeys++;
        }
    }
    CU_ASSERT(nkeys >= 28); /* every key, counted from the JSON echo */
    /* Header plus one line per key. */
    size_t lines = 0;
    for (const char *p = buf; *p; p++)
        lines += *p == '\n';
    CU_ASSERT_EQUAL(lines, nkeys + 1);
    /* The default comes from the model, and enums list their names. */
    char want[64];
    snprintf(want, sizeof want, "%u", sc.net.gpus);
    const char *gpus_line = strstr(buf, "\ntopology.gpus ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(gpus_line);
    CU_ASSERT_PTR_NOT_NULL(strstr(gpus_line, want));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "fat-tree|rail-only"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "single|permutation|all-to-all|incast"));
    json_decref(j);
    free(buf);
}

/* ---- registration ------------------------------------------------------ */

#define TEST(fn) { #fn, fn }

static const struct {
    const char *name;
    CU_TestFunc fn;
} scenario_tests[] = {
    TEST(test_scenario_defaults_when_no_file),
    TEST(test_scenario_jobs),
    TEST(test_scenario_defaults_are_within_ranges),
    TEST(test_scenario_empty_object_keeps_defaults),
    TEST(test_scenario_applies_nested_file),
    TEST(test_scenario_preset_applies_first),
    TEST(test_scenario_accepts_whole_real_for_integer),
    TEST(test_scenario_set_overrides_file),
    TEST(test_scenario_set_parses_each_type),
    TEST(test_scenario_accepts_range_bounds),
    TEST(test_scenario_rejects_unknown_key_with_suggestion),
    TEST(test_scenario_suggests_key_from_its_section),
    TEST(test_scenario_rejects_unknown_key_without_close_match),
    TEST(test_scenario_rejects_wrong_type),
    TEST(test_scenario_rejects_negative_or_fractional_integer),
    TEST(test_scenario_rejects_out_of_range),
    TEST(test_scenario_rejects_bad_enum),
    TEST(test_scenario_enum_spellings_and_suggestions),
    TEST(test_scenario_reports_syntax_error_line),
    TEST(test_scenario_rejects_duplicate_key),
    TEST(test_scenario_rejects_non_object_top_level),
    TEST(test_scenario_rejects_section_that_is_not_object),
    TEST(test_scenario_rejects_dotted_key_in_file),
    TEST(test_scenario_missing_file_is_io_error),
    TEST(test_scenario_set_rejects_missing_equals),
    TEST(test_scenario_set_rejects_bad_values),
    TEST(test_scenario_set_rejects_unknown_key_with_suggestion),
    TEST(test_scenario_error_leaves_scenario_unchanged),
    TEST(test_scenario_to_json_round_trips),
    TEST(test_scenario_to_json_keeps_schema_order),
    TEST(test_scenario_print_keys_lists_every_key),
};

/* Add the "scenario" suite to the current CUnit registry. */
static int register_scenario_suite(void)
{
    CU_pSuite s = CU_add_suite("scenario", NULL, NULL);
    if (!s)
        return -1;
    for (size_t i = 0; i < sizeof scenario_tests / sizeof scenario_tests[0]; i++)
        if (!CU_add_test(s, scenario_tests[i].name, scenario_tests[i].fn))
            return -1;
    return 0;
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    if (register_scenario_suite() != 0) {
        fprintf(stderr, "test_scenario: %s\n", CU_get_error_msg());
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
