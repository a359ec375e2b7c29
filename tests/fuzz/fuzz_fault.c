/*
 * fuzz_fault.c - fault descriptions (models/fault.c) on hostile text: the
 * syntax check, then, for a schedule it accepts, target resolution on a
 * small network of either kind and a short run with traffic, so applying
 * faults, repairs, route recomputation and the cut-off and watchdog stops
 * run too. The first byte picks the topology (fat tree, rail-only or
 * dragonfly), the fidelity (packet or
 * flow) and whether absent classes are skipped (compare); the rest is the
 * schedule. Every failure must come with a
 * message; a run ends by its time limit, completion or a fault stop,
 * never a crash, and no message completes twice (failover once left a
 * fluid flow behind that did).
 */
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "net.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void done_cb(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    uint8_t *done = ctx;
    if (done[tag]++)
        abort(); /* completed twice */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    rs_fault_config fc;
    rs_fault_config_default(&fc);
    size_t n = size - 1 < sizeof fc.schedule - 1 ? size - 1 : sizeof fc.schedule - 1;
    memcpy(fc.schedule, data + 1, n);
    fc.schedule[n] = '\0';
    fc.convergence_us = data[0] & 0x10 ? 5 : 0;
    fc.watchdog_us = 2000;
    fc.reroute_hb = !(data[0] & 0x20);
    fc.absent_ok = !!(data[0] & 0x8); /* railsim compare: a class this topology lacks is skipped */

    rs_err err;
    rs_err_clear(&err);
    if (rs_fault_check(fc.schedule, "--fault", &err) != RS_OK) {
        if (err.msg[0] == '\0')
            abort(); /* every failure must say why */
        return 0;
    }
    rs_net_config c;
    rs_net_config_default(&c);
    /* Rail-only needs rails: with HB domains of 1 the odd kind is a
     * dragonfly instead (radix 8: 2 NICs per switch, groups of 4, 3 global
     * links each, 2 groups). */
    c.kind = !(data[0] & 1) ? RS_TOPO_FAT_TREE : data[0] & 2 ? RS_TOPO_RAIL_ONLY : RS_TOPO_DRAGONFLY;
    c.gpus = 16;
    c.hb_size = data[0] & 2 ? 4 : 1;
    c.radix = c.kind == RS_TOPO_DRAGONFLY ? 8 : 4;
    c.seed = data[0] >> 6;
    c.fidelity = data[0] & 4 ? RS_FIDELITY_FLOW : RS_FIDELITY_PACKET;
    rs_net *net = NULL;
    if (rs_net_create(&c, &net, &err) != RS_OK)
        abort(); /* a fixed, valid configuration */
    rs_err_clear(&err);
    if (rs_net_faults_start(net, &fc, &err) != RS_OK) {
        if (err.msg[0] == '\0')
            abort();
        rs_net_destroy(net);
        return 0;
    }
    for (uint32_t i = 0; i < rs_net_fault_absent_count(net); i++) {
        rs_net_fault_info fi;
        if (!fc.absent_ok || rs_net_fault_absent_get(net, i, &fi) != RS_OK || !fi.spec[0])
            abort(); /* only skipped when allowed, and each one named */
    }
    /* A schedule may expand (flaps, random failures) to 200,000 entries,
     * each a route recomputation: valid, bounded, but seconds under the
     * fuzzer's instrumentation. Expansion is checked; running stays for
     * the smaller ones. */
    if (rs_net_fault_count(net) > 2000) {
        rs_net_destroy(net);
        return 0;
    }
    /* Even GPUs send along their rail (one flow), odd ones across rails
     * (relayed with HB domains of 4). At flow level, messages of several
     * relay chunks: as cheap to run, and longer in flight for faults. */
    uint8_t done[16] = { 0 };
    uint64_t bytes = c.fidelity == RS_FIDELITY_FLOW ? 2u << 20 : 64u << 10;
    rs_net_msg m;
    rs_net_msg_init(&m);
    m.bytes = bytes;
    m.done = done_cb;
    m.ctx = done;
    for (uint32_t g = 0; g < c.gpus; g++) {
        m.src = g;
        m.dst = (g + 4 + (g & 1)) % c.gpus;
        m.tag = g;
        if (rs_net_send(net, &m) != RS_OK)
            abort();
    }
    int rc = rs_net_run(net, 3 * RS_PS_PER_MS);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    if (st.msgs_done > st.msgs)
        abort();
    if (rc == RS_EUNREACH && rs_net_fault_errmsg(net)[0] == '\0')
        abort(); /* a fault stop names its cause */
    uint32_t nf = rs_net_fault_count(net);
    for (uint32_t i = 0; i < nf; i++) {
        rs_net_fault_info fi;
        if (rs_net_fault_info_get(net, i, &fi) != RS_OK)
            abort();
    }
    rs_net_destroy(net);
    return 0;
}
