/*
 * net_basic.c - embed railsim's network in a program: build a 32-GPU
 * rail-only network of 8-GPU HB domains, send one message across the
 * network and one inside an HB domain, run to idle, and read the
 * statistics and the busiest port.
 *
 *   cc net_basic.c $(pkg-config --cflags --libs railsim) -o net_basic
 *   ./net_basic
 */
#include <inttypes.h>
#include <stdio.h>

#include <railsim/railsim.h>

static void done(void *ctx, rs_net *net, uint64_t tag)
{
    (void)ctx;
    printf("message %" PRIu64 " arrived at %.3f us\n", tag, rs_time_to_us(rs_net_now(net)));
}

int main(void)
{
    rs_net_config c;
    rs_net_config_default(&c);
    c.kind = RS_TOPO_RAIL_ONLY;
    c.gpus = 32;
    c.hb_size = 8;

    rs_err err;
    rs_err_clear(&err);
    rs_net *net;
    if (rs_net_create(&c, &net, &err) != RS_OK) {
        fprintf(stderr, "net_basic: %s\n", err.msg);
        return 1;
    }
    /* GPU 0 to GPU 8: the same rail (0) in the next HB domain, over the
     * rail's switch. GPU 0 to GPU 3: over NVLink inside domain 0. */
    rs_net_msg m;
    rs_net_msg_init(&m);
    m.src = 0;
    m.dst = 8;
    m.bytes = 1 << 20;
    m.done = done;
    m.tag = 1;
    int sent = rs_net_send(net, &m);
    m.dst = 3;
    m.tag = 2;
    if (sent != RS_OK || rs_net_send(net, &m) != RS_OK) {
        fprintf(stderr, "net_basic: send failed\n");
        rs_net_destroy(net);
        return 1;
    }
    int rc = rs_net_run(net, RS_TIME_MAX);
    if (rc != RS_OK) {
        fprintf(stderr, "net_basic: run failed: %s\n", rs_strerror(rc));
        rs_net_destroy(net);
        return 1;
    }

    rs_net_stats st;
    rs_net_stats_get(net, &st);
    printf("%" PRIu64 " of %" PRIu64 " messages done, %" PRIu64 " packets sent, %" PRIu64 " dropped\n",
           st.msgs_done, st.msgs, st.pkts_sent, st.pkts_dropped);

    uint32_t busiest = 0;
    uint64_t most = 0;
    for (uint32_t p = 0; p < rs_net_port_count(net); p++) {
        rs_net_port_info pi;
        if (rs_net_port_info_get(net, p, &pi) == RS_OK && pi.tx_bytes > most) {
            most = pi.tx_bytes;
            busiest = p;
        }
    }
    rs_net_port_info pi;
    rs_net_port_info_get(net, busiest, &pi);
    printf("busiest port %s: %" PRIu64 " bytes in %" PRIu64 " frames\n", pi.name, pi.tx_bytes, pi.tx_pkts);
    rs_net_destroy(net);
    return st.msgs_done == st.msgs ? 0 : 1;
}
