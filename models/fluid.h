/*
 * fluid.h - the flow-level ("fluid") network: the same topology, routing,
 * ECMP choice, HB domain and PXN relay as the packet level, with every
 * transfer a fluid flow whose rate is max-min fair over link capacities.
 * docs/fidelity.md describes the model, its approximations and how well it
 * agrees with the packet level.
 *
 * Two parts:
 *
 *   rs_mmf     an abstract max-min fair solver: links with capacities, flows
 *              that each cross a few links. Rates come from progressive
 *              filling (water-filling) and are recomputed incrementally:
 *              only the connected components (flows joined by shared links)
 *              of links whose flow set changed since the last solve. Exact
 *              integer arithmetic (bit/s, floor division), so an
 *              incremental solve gives the same rates as a full one.
 *
 *   rs_fluid   the backend behind rs_net when rs_net_config.fidelity is
 *              RS_FIDELITY_FLOW. rs_net (net.c) keeps doing messages, PXN
 *              relay chunks and completion callbacks; each transport flow
 *              it starts (rs_flow_new, so flow ids and UDP entropy are the
 *              packet level's) becomes a fluid flow here instead of packets.
 *              Events happen only when flows start or finish.
 *
 * Models-internal header (like netint.h): collectives and the CLI reach the
 * flow level only through net.h. The test and validation helpers at the end
 * read the state; they never change a result.
 */
#ifndef RS_FLUID_H
#define RS_FLUID_H

#include "base.h"
#include "mmf.h"

typedef struct rs_net rs_net;
struct rs_port;

/* -- the network backend (called by net.c) ------------------------------- */

typedef struct rs_fluid rs_fluid;

/* Attach a flow-level backend to net, whose topology and routing are built
 * and whose entities are all added (the backend adds one more, the last, so
 * its solves run after everything else at one instant). Sets net->backend_state.
 * RS_ENOMEM / RS_ERANGE. Freed by rs_fluid_destroy (rs_net_destroy calls it). */
int rs_fluid_create(rs_net *net);
void rs_fluid_destroy(rs_fluid *fl); /* NULL is a no-op */

/* Carry transport flow f (made by rs_flow_new, not yet started) as a fluid
 * flow from now. When its last byte has arrived the backend calls
 * rs_msg_flow_done(net, f), as the packet level's receiver does. A flow
 * whose route is missing (a failed network) is counted as dropped and never
 * completes, as at packet level. RS_ENOMEM. */
int rs_fluid_flow_start(rs_net *net, uint32_t f);

/* -- faults (docs/fidelity.md, "Faults at flow level") ------------------- */

/* fault.c calls these (through the backend) when net->flt is set.
 *
 * The cable of `port` changed (both ends' up flag and rate are already
 * set): its two links get capacity rate_bps, or 0 when down. A cable that
 * went down parks every fluid flow crossing it (it makes no progress, it
 * is one of the fault's flows_hit); one that came up lets parked flows
 * whose path is usable again resume. RS_ENOMEM. */
int rs_fluid_cable_changed(rs_net *net, uint32_t port);
/* Routes were recomputed (rs_topo_route): every fluid flow whose hashed
 * path changed moves to its new path with the bytes it has left; parked
 * flows with a usable path resume, at once or at their next retransmit
 * timeout (docs/fidelity.md). RS_ENOMEM. */
int rs_fluid_routes_changed(rs_net *net);

/* Failover (net.c rs_msg_failover) at flow level: the data frames of
 * network flow fid the fluid has carried, in order (0 for HB and relay
 * flows); then rs_fluid_flow_abandon takes it out of the fluid, the parked
 * flows and the pending completions, and frees its record. */
uint32_t rs_fluid_flow_delivered(const rs_net *net, uint32_t fid);
void rs_fluid_flow_abandon(rs_net *net, uint32_t fid);
/* Transport flows parked now (tests). */
uint32_t rs_fluid_parked(const rs_net *net);

/* -- inspection (tests, validation) ---------------------------------------- */

/* The egress ports transport flow f crosses (its first is the sender's NIC
 * or HB port, its last the port into the receiving GPU), computed from the
 * routing tables, the switches' ECMP hash salts and the flow's entropy
 * exactly as the packet level forwards a flow-hashed packet. Works in
 * either fidelity. Returns the hop count (<= max), or RS_EUNREACH,
 * RS_EINVAL (no such flow), RS_ERANGE (more than max hops). */
int rs_fluid_flow_path(const rs_net *net, uint32_t f, uint32_t *ports, uint32_t max);

/* Fixed latency and wire bytes of transport flow f alone on its path:
 * propagation and switch latency of every hop, plus the serialisation of
 * its largest (first) frame on every hop after the first (store-and-
 * forward). A lone flow on a path of one rate takes lat + wire * 8 / rate
 * at packet level, exactly (docs/fidelity.md). */
int rs_fluid_flow_cost(const rs_net *net, uint32_t f, rs_time *lat, uint64_t *wire);

/* A lone transfer of `bytes` from GPU a to GPU b, on the path a flow of
 * entropy 0xc000 would take (HB domain, the rail, or PXN's two legs):
 * *ser = its wire bytes' serialisation on its slowest port, *lat = the
 * rest (rs_fluid_flow_cost's latency; a PXN relay adds its HB leg whole).
 * Works in either fidelity, on the present routes, at the present rates
 * or (as_built) at the rates of the run's start (net->links0). RS_EINVAL
 * (a == b or no such GPU), RS_EUNREACH. */
int rs_fluid_lone_time(const rs_net *net, uint32_t a, uint32_t b, uint64_t bytes, int as_built, rs_time *ser,
                       rs_time *lat);

/* Current rate of transport flow f in bit/s of wire bytes: RS_OK and *bps
 * while it is in the fluid, RS_EINVAL otherwise (not started, finished,
 * packet fidelity). */
int rs_fluid_flow_rate(const rs_net *net, uint32_t f, uint64_t *bps);
/* DCQCN state of transport flow f in the fluid (transport.cc=dcqcn):
 * current and target rate (bit/s) and alpha, as of now (a saturated flow
 * running ahead of the engine is brought up to now first, hence the
 * non-const net). RS_EINVAL when f is not in the fluid or carries no
 * DCQCN state (cc=none, ECN off, HB, ideal). */
int rs_fluid_flow_dcqcn(rs_net *net, uint32_t f, double *rc, double *rt, double *alpha);

/* Wire bytes port `port` has carried by `now` (now at or after the last
 * rate change: the simulation's time), integrated from its flows' rates;
 * *bps gets their current sum. */
uint64_t rs_fluid_port_bytes(const rs_net *net, uint32_t port, rs_time now, uint64_t *bps);

/* Compare the incremental rates of every flow now in the fluid with a
 * from-scratch solve: returns the number of flows that differ (0 when they
 * agree), or RS_ENOMEM / RS_EINVAL (packet fidelity). Solves pending at
 * this instant are done first. */
int rs_fluid_check(rs_net *net);

#endif
