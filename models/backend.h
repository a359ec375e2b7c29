/*
 * backend.h - the seam between the network's bookkeeping and how a
 * transfer crosses the fabric.
 *
 * msg.c keeps messages, relay.c their relays through the HB domain and
 * failover.c their failover; fault.c applies faults to cables and routes;
 * net_timeline.c samples ports. None of them knows how bytes move: they
 * call the network's backend, one table of operations chosen once by
 * rs_net_create from topology's fidelity (rs_backend_select,
 * net_config.c). Two backends exist:
 *
 *   packet (packet.c over fabric.c and transport.c): every frame, queue,
 *     PFC pause, ECN mark and ACK;
 *   flow (fluid.c): each transfer a fluid flow at its max-min fair share.
 *
 * A third (an analytic model, another team's) is a third table and one
 * more case in rs_backend_select: collectives, traces and the cli see only
 * net.h, whose rs_net_streams tells them what they may rely on.
 *
 * A "transfer" is a transport flow record (rs_flow, flow_int.h) made by
 * rs_flow_new (flows.c); the backend calls rs_msg_flow_done(net, f) when
 * its last byte has arrived.
 */
#ifndef RS_BACKEND_H
#define RS_BACKEND_H

#include "net.h"

struct rs_net;

typedef struct rs_backend {
    const char *name; /* "packet", "flow" */
    /* Refuse a configuration this backend cannot simulate, with err
     * naming the key; net's topology is built. NULL: any. */
    int (*check)(const struct rs_net *net, const rs_net_config *c, rs_err *err);
    /* Attach the backend's state (net->backend_state) once the topology,
     * routes and entities exist; free it (NULL state: a no-op). NULL:
     * nothing to attach. */
    int (*create)(struct rs_net *net, rs_err *err);
    void (*destroy)(struct rs_net *net);
    /* Start transfer f now. RS_ENOMEM. */
    int (*flow_start)(struct rs_net *net, uint32_t f);
    /* Take transfer f out of the fabric before it finished (a failover);
     * the caller frees its record. */
    void (*flow_abandon)(struct rs_net *net, uint32_t f);
    /* Frames of transfer f its receiver has accepted in order. */
    uint64_t (*flow_delivered)(const struct rs_net *net, uint32_t f);
    /* The cable of `port` went down or came up (both ends' up flags set),
     * or changed rate (both ends' rates set). NULL: nothing to do. A
     * nonzero return stops the run with that code. */
    int (*cable_state_changed)(struct rs_net *net, uint32_t port);
    int (*cable_rate_changed)(struct rs_net *net, uint32_t port);
    /* Routes were recomputed (rs_topo_route). NULL: nothing to do. */
    int (*routes_changed)(struct rs_net *net);
    /* Wire bytes port has put on its link by now; *bps its rate now when
     * the backend moves bytes as rates (0 otherwise). */
    uint64_t (*port_bytes)(const struct rs_net *net, uint32_t port, rs_time now, uint64_t *bps);
    /* End-of-run invariants once nothing is left to happen: RS_OK, or
     * RS_EINTERNAL for our own bug. NULL: none. */
    int (*idle_check)(const struct rs_net *net);

    /* A port's bytes grow between events (rates, not frames): the sampler
     * looks at the ports that carried since the last tick, not at counters. */
    unsigned rates : 1;
    /* A relayed message can be one transfer over both legs (unless
     * relay_pipeline asks for the chunk pipeline). */
    unsigned whole_relays : 1;
    /* A steady stream of pieces between two GPUs can be one transfer
     * without changing the result (rs_net_streams). */
    unsigned streams : 1;
} rs_backend;

extern const rs_backend rs_backend_packet; /* packet.c */
extern const rs_backend rs_backend_flow;   /* fluid.c */

/* What fault.c offers a backend without packets or timers (the flow
 * level): transfer fid stopped at dead port `dead` (NULL: no route;
 * charged to the latest fault), one of that fault's flows_hit;
 * faults.watchdog_us in ps (0: off); and the watchdog's stop: nothing
 * moved since `since`. */
struct rs_port;
void rs_fault_note_flow_hit(struct rs_net *net, const struct rs_port *dead, uint32_t fid);
rs_time rs_fault_watchdog_ps(const struct rs_net *net);
void rs_fault_watchdog_stop(struct rs_net *net, rs_time since);

/* The backend simulating fidelity f; NULL for none (fidelity=both). */
const rs_backend *rs_backend_select(rs_fidelity f);

#endif
