/*
 * fixture_net.c - the small networks the unit suites build (fixture_net.h).
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#include "fixture_net.h"

void rs_fx_config(rs_net_config *c, uint32_t gpus, uint32_t hb, uint32_t radix)
{
    rs_net_config_default(c);
    c->gpus = gpus;
    c->hb_size = hb;
    c->radix = radix;
}

void rs_fx_config_at(rs_net_config *c, uint32_t gpus, uint32_t hb, uint32_t radix, rs_fidelity fid)
{
    rs_fx_config(c, gpus, hb, radix);
    c->fidelity = fid;
}

rs_net *rs_fx_net(const rs_net_config *c)
{
    rs_net *net = NULL;
    rs_err err;
    int rc = rs_net_create(c, &net, &err);
    if (rc != RS_OK)
        fprintf(stderr, "rs_net_create: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, RS_OK);
    return net;
}

rs_net *rs_fx_topo(rs_topo_kind kind, uint32_t gpus, uint32_t hb, uint32_t radix)
{
    rs_net_config c;
    rs_fx_config(&c, gpus, hb, radix);
    c.kind = kind;
    return rs_fx_net(&c);
}

void rs_fx_refused(const rs_net_config *c, const char *what)
{
    rs_net *net = NULL;
    rs_err err;
    CU_ASSERT_EQUAL(rs_net_create(c, &net, &err), RS_EINVAL);
    CU_ASSERT_PTR_NULL(net);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, what));
    rs_net_destroy(net); /* NULL unless the assertions above failed */
}

void rs_fx_run_idle(rs_net *net)
{
    CU_ASSERT_EQUAL_FATAL(rs_net_run(net, RS_TIME_MAX), RS_OK);
    rs_net_stats st;
    rs_net_stats_get(net, &st);
    CU_ASSERT_EQUAL(st.pkts_in_flight, 0);
    CU_ASSERT_EQUAL(st.pkts_sent, st.pkts_delivered + st.pkts_dropped);
}

rs_time rs_fx_only_fct(rs_net *net)
{
    size_t n;
    const rs_net_msg_time *t = rs_net_msg_times(net, &n);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    return t[0].end - t[0].start;
}

int rs_fx_send_full(rs_net *net, uint32_t src, uint32_t dst, uint64_t bytes, rs_net_done_fn done,
                    rs_net_done_fn left, void *ctx, uint64_t tag, rs_tally *tally, uint64_t serial)
{
    rs_net_msg m;
    rs_net_msg_init(&m);
    m.src = src;
    m.dst = dst;
    m.bytes = bytes;
    m.done = done;
    m.left = left;
    m.ctx = ctx;
    m.tag = tag;
    m.tally = tally;
    m.serial = serial;
    return rs_net_send(net, &m);
}

int rs_fx_send(rs_net *net, uint32_t src, uint32_t dst, uint64_t bytes, rs_net_done_fn done, void *ctx,
               uint64_t tag)
{
    return rs_fx_send_full(net, src, dst, bytes, done, NULL, ctx, tag, NULL, RS_NET_SERIAL_NEXT);
}
