/*
 * fixture_net.h - the small networks the unit suites build, shared by
 * every suite that drives an rs_net (linked into them as the rs_fx_net
 * library, tests/CMakeLists.txt).
 *
 * The helpers assert with CUnit, so they are called from inside a test;
 * a fatal assertion ends the running test, as one written in the test
 * would. Each network returned is the caller's (rs_net_destroy).
 */
#ifndef RS_FIXTURE_NET_H
#define RS_FIXTURE_NET_H

#include "net.h"

/* rs_net_config_default, then the shape: gpus, HB domain size, switch
 * radix (the topology stays the default, a fat tree). */
void rs_fx_config(rs_net_config *c, uint32_t gpus, uint32_t hb, uint32_t radix);

/* rs_fx_config at the given fidelity (packet or flow level). */
void rs_fx_config_at(rs_net_config *c, uint32_t gpus, uint32_t hb, uint32_t radix, rs_fidelity fid);

/* The network of c. If rs_net_create refuses c, prints its message and
 * fails the running test fatally. */
rs_net *rs_fx_net(const rs_net_config *c);

/* The network of the default configuration of the given kind and shape,
 * as rs_fx_net. */
rs_net *rs_fx_topo(rs_topo_kind kind, uint32_t gpus, uint32_t hb, uint32_t radix);

/* Asserts that rs_net_create refuses c with RS_EINVAL, builds nothing,
 * and names `what` (a key, or words of the message). */
void rs_fx_refused(const rs_net_config *c, const char *what);

/* Runs net to idle and checks conservation: every packet forwarded,
 * delivered or dropped, nothing left in flight. */
void rs_fx_run_idle(rs_net *net);

/* The completion time (end - start) of the one message net has recorded;
 * fails the running test fatally if it recorded another number. */
rs_time rs_fx_only_fct(rs_net *net);

/* rs_net_send of `bytes` from GPU src to dst, done(ctx, net, tag) when
 * it has arrived (done NULL: not told). */
int rs_fx_send(rs_net *net, uint32_t src, uint32_t dst, uint64_t bytes, rs_net_done_fn done, void *ctx,
               uint64_t tag);
/* The same with every field of rs_net_msg: left, a tally, a serial
 * (RS_NET_SERIAL_NEXT: the next). */
int rs_fx_send_full(rs_net *net, uint32_t src, uint32_t dst, uint64_t bytes, rs_net_done_fn done,
                    rs_net_done_fn left, void *ctx, uint64_t tag, rs_tally *tally, uint64_t serial);

#endif
