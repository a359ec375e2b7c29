/*
 * fault.c - fault injection at run time (fault.h, docs/faults-format.md):
 * apply each entry of the schedule (fault_sched.c builds it) from an
 * event of its own, recompute routes after faults.convergence_us, and
 * stop a run that can no longer finish.
 *
 * Owns net->flt (the resolved entries, the watchdog state, the stop
 * message). Nothing here runs per packet: a failed port keeps its `up`
 * flag at 0 and the packet path's existing test drops what it would send
 * (so frames queued toward a failed link are lost as the port drains
 * them); a switch with a stale route sends into the dead port until the
 * routes are recomputed. Frames already on the wire when a cable fails
 * are lost too: the failure marks the link's last frame (cut_tail) and
 * the arrival path, which tests net->cuts_pending (one hot field, 0
 * except in the ~1.1 us after a cut), drops every frame up to that mark.
 *
 * Overlapping faults: each down entry holds its cable (a switch-down its
 * switch's cables) until an up entry cancels it; a cable is up when
 * nothing holds it, and only a change of that state touches the ports or
 * the flow level. Overlapping degrades: the lowest active rate.
 *
 * Flaps and random failures (faults.mtbf_us) are expanded into plain
 * down/up entries before the run: the event stream is finite (random
 * failures stop at faults.horizon_us) and a run is deterministic.
 *
 * Per entry it counts the drops it caused (link-down drops at the ports
 * it took down, no-route drops while it is the latest), the flows that
 * lost a packet to it (a list per flow, rs_flow.hit), their data
 * retransmissions (charged to a flow's latest fault) and when the last of
 * them was delivered (time to recover). PFC pauses that cannot be
 * released (pfc_wait) are looked for from switches' pause refreshes.
 *
 * Failover: after routes change, every unfinished message whose network
 * leg has no path moves to a live rail through the HB domains
 * (rs_msg_failover, failover.c), faults.reroute_hb permitting.
 *
 * Stopping: after that, every unfinished message whose network leg still
 * has no path (rs_msg_cut) is cut off; if no repair is still
 * scheduled the run stops with RS_EUNREACH and a message naming the GPUs
 * and the fault. The watchdog stops a run in which neither delivered bytes
 * nor completed messages advanced for that long; it looks only when a
 * retransmit timer fires (a stuck reliable flow times out every RTO), so
 * it costs no event and no timer of its own.
 *
 * A cable's change, a degrade and new routes go to the network's backend
 * as well (backend.h). A backend without packets (the flow level) reports
 * the flows it stops (rs_fault_note_flow_hit) and, having no retransmit
 * timers, runs the watchdog from an event of its own
 * (rs_fault_watchdog_stop). docs/fidelity.md, "Faults at flow level".
 */
#include "fault_int.h"

#include "backend.h"
#include "versioned.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>



/* -- applying -------------------------------------------------------------- */

static void ev_fault(rs_sim *sim, void *obj, uint64_t i);
static void ev_converge(rs_sim *sim, void *obj, uint64_t i);

/* Port i's rate, in its rs_link and, where this process owns it, in the
 * port. */
static void set_rate(rs_net *net, uint32_t i, uint64_t bps)
{
    rs_link *l = &net->links[i];
    l->rate_bps = bps;
    l->ps_per_byte = rs_ps_per_byte(bps);
    if (rs_part_owns_port(net, i)) {
        net->ports[i].rate_bps = l->rate_bps;
        net->ports[i].ps_per_byte = l->ps_per_byte;
    }
}

/* The cable of port p failed: whatever is on its wire now is lost. Only
 * the link's last frame is known (fly_tail); arrivals come in order, so
 * every frame up to and including it is lost (rs_fault_arrival_lost).
 * A second failure before they have arrived moves the mark to the newer
 * last frame. */
static void cut_wire(rs_net *net, rs_port *p)
{
    if (!p->fly_tail)
        return;
    if (!p->cut_tail)
        net->cuts_pending++;
    p->cut_tail = p->fly_tail;
}

/* Entry i applies and holds its target: first in the target's list. */
static void hold(struct rs_faults *F, uint32_t *head, uint32_t i)
{
    F->e[i].hold_next = *head;
    F->e[i].holding = 1;
    *head = i;
}

/* Up entry i cancels one holder of its target: its own down entry when
 * that still holds, else the oldest (an up written in the schedule
 * repairs the longest-standing down of its kind). Nothing when none
 * holds: the count never goes below 0. */
static void release(struct rs_faults *F, uint32_t *head, uint32_t i)
{
    uint32_t victim = F->e[i].partner;
    if (victim == RS_NONE || !F->e[victim].holding)
        for (uint32_t h = *head; h != RS_NONE; h = F->e[h].hold_next)
            victim = h;
    if (victim == RS_NONE || !F->e[victim].holding)
        return;
    uint32_t *link = head;
    while (*link != victim)
        link = &F->e[*link].hold_next;
    *link = F->e[victim].hold_next;
    F->e[victim].holding = 0;
}

static uint32_t cable_id(const rs_net *net, uint32_t port)
{
    uint32_t peer = net->links[port].peer_port;
    return port < peer ? port : peer;
}

/* The earliest applied entry still holding the cable of port p down:
 * its own downs or either end's switch-down. RS_NONE: none. */
static uint32_t cable_holder(const rs_net *net, uint32_t port)
{
    const struct rs_faults *F = net->flt;
    const rs_link *p = &net->links[port];
    uint32_t heads[3] = { F->cab_hold[cable_id(net, port)], F->sw_hold[p->node], F->sw_hold[p->peer_node] };
    uint32_t first = RS_NONE;
    for (unsigned k = 0; k < 3; k++)
        for (uint32_t h = heads[k]; h != RS_NONE; h = F->e[h].hold_next)
            if (h < first)
                first = h;
    return first;
}

/* Bring the cable of port `port` to the state its holders give: down
 * while any entry holds it, up when none does. Only a change of state
 * cuts the wire and tells the backend. */
static void set_cable(rs_net *net, uint32_t port)
{
    rs_port *p = &net->ports[port], *q = &net->ports[p->peer_port];
    uint32_t holder = cable_holder(net, port);
    uint8_t up = holder == RS_NONE;
    if (up == p->up) {
        /* Still down: its drops go to an entry that still holds it. */
        if (!up && !net->flt->e[p->down_fault].holding)
            p->down_fault = q->down_fault = holder;
        return;
    }
    if (!up) {
        cut_wire(net, p);
        cut_wire(net, q);
        p->down_fault = q->down_fault = net->flt->cur - 1;
    }
    p->up = q->up = up;
    net->links[port].up = net->links[p->peer_port].up = up;
    /* The backend: queued frames drain into the dead link, or capacities
     * and parked flows. */
    int rc = net->be->cable_state_changed ? net->be->cable_state_changed(net, port) : RS_OK;
    if (rc != RS_OK)
        rs_sim_stop(net->sim, rc);
}

/* The cable of port `port` runs at the lowest rate of the degrades
 * holding it, at its nominal rate when none does. */
static void set_cable_rate(rs_net *net, uint32_t port, uint64_t nominal)
{
    const struct rs_faults *F = net->flt;
    const rs_link *l = &net->links[port]; /* a degrade is every process's event: the port may be another's */
    uint64_t bps = nominal;
    for (uint32_t h = F->deg_hold[cable_id(net, port)]; h != RS_NONE; h = F->e[h].hold_next)
        if (F->e[h].rate_bps < bps)
            bps = F->e[h].rate_bps;
    if (bps == l->rate_bps)
        return;
    net->rate_changes++;
    set_rate(net, port, bps);
    set_rate(net, l->peer_port, bps);
    int rc;
    if (net->be->cable_rate_changed && (rc = net->be->cable_rate_changed(net, port)) != RS_OK)
        rs_sim_stop(net->sim, rc);
}

/* -- PFC pauses that cannot be released ---------------------------------- */

static void routes_changed(rs_net *net, uint32_t i)
{
    struct rs_faults *F = net->flt;
    int rc = rs_topo_route(net);
    if (rc != RS_OK) {
        rs_sim_stop(net->sim, rc);
        return;
    }
    if (net->be->routes_changed && (rc = net->be->routes_changed(net)) != RS_OK) {
        rs_sim_stop(net->sim, rc);
        return;
    }
    F->e[i].routes_at = rs_sim_now(net->sim);
    if (RS_UNLIKELY(net->tl != NULL))
        rs_net_tl_fault(net, F->e[i].target, "routes", "recomputed");
    /* Failover: a message whose network leg lost its path moves to a live
     * rail through the HB domains now, repair scheduled or not (the
     * endpoints cannot know one is coming). O(messages), per route change. */
    if (F->cfg.reroute_hb && net->hb_size > 1)
        for (uint32_t m = 0; m < net->nmsgs; m++)
            if (rs_msg_needs_network(net, m) &&
                (net->msgs[m].failing_over || rs_net_path_links(net, net->msgs[m].leg_src, net->msgs[m].leg_dst) < 0))
                rs_msg_failover(net, m, i);
    rs_fault_check_cut(net, "faults: no path left", 0);
}

static void ev_fault(rs_sim *sim, void *obj, uint64_t i)
{
    rs_net *net = obj;
    struct rs_faults *F = net->flt;
    fentry *e = &F->e[i];
    e->applied = 1;
    F->cur = (uint32_t)i + 1;
    switch (e->kind) {
    case FK_LINK_DOWN:
    case FK_NIC_DOWN:
        hold(F, &F->cab_hold[cable_id(net, e->port)], (uint32_t)i);
        set_cable(net, e->port);
        break;
    case FK_LINK_UP:
    case FK_NIC_UP:
        release(F, &F->cab_hold[cable_id(net, e->port)], (uint32_t)i);
        set_cable(net, e->port);
        break;
    case FK_SWITCH_DOWN:
    case FK_SWITCH_UP: {
        const rs_node *n = &net->nodes[e->node];
        if (e->kind == FK_SWITCH_DOWN)
            hold(F, &F->sw_hold[e->node], (uint32_t)i);
        else
            release(F, &F->sw_hold[e->node], (uint32_t)i);
        for (uint32_t k = 0; k < n->nports; k++)
            set_cable(net, n->port_base + k);
        break;
    }
    case FK_LINK_DEGRADE:
    case FK_LINK_RESTORE:
        if (e->kind == FK_LINK_DEGRADE)
            hold(F, &F->deg_hold[cable_id(net, e->port)], (uint32_t)i);
        else
            release(F, &F->deg_hold[cable_id(net, e->port)], (uint32_t)i);
        set_cable_rate(net, e->port, e->saved_bps);
        break;
    default:
        break;
    }
    if (RS_UNLIKELY(net->tl != NULL))
        rs_net_tl_fault(net, e->target, rs_fault_kind_names[e->kind], e->spec);
    if (e->kind == FK_LINK_DEGRADE || e->kind == FK_LINK_RESTORE || rs_fault_kind_target[e->kind] == TGT_GPU)
        return; /* routes do not change; a straggler acts through the compute model (compute.h) */
    if (F->conv == 0)
        routes_changed(net, (uint32_t)i);
    else
        rs_sim_at(sim, rs_sim_now(sim) + F->conv, F->ent, ev_converge, net, i);
}

static void ev_converge(rs_sim *sim, void *obj, uint64_t i)
{
    (void)sim;
    routes_changed(obj, (uint32_t)i);
}

/* A partitioned run (split.c) applies faults that only change link rates,
 * and stragglers, which change nothing in the network (a replay reads
 * their schedule in its GPU's compute): every process applies them alike
 * from their shared events. Not yet a
 * cable, NIC or switch that fails: the frames on a wire between two
 * processes are lost by a mark the receiving one has not, failover and
 * cutting messages off test completions only their destinations'
 * processes know, and a PFC pause held behind a dead link is found by a
 * wait chain that crosses processes (with degrades alone there is none:
 * both topologies route up and down, so no pause waits in a cycle). Nor
 * bit errors with faults: the watchdog, armed by retransmit timeouts,
 * would read one process's progress. */
int rs_fault_splits(const rs_net *net, char *why, size_t n)
{
    const struct rs_faults *F = net->flt;
    const char *r = NULL;
    for (uint32_t i = 0; F && !r && i < F->n; i++)
        if (F->e[i].kind != FK_LINK_DEGRADE && F->e[i].kind != FK_LINK_RESTORE &&
            rs_fault_kind_target[F->e[i].kind] != TGT_GPU)
            r = "faults that take a link, NIC or switch down are scheduled (only link-degrade and straggler split)";
    if (!r && F && net->loss_below)
        r = "faults are scheduled with bit errors (topology.loss_rate): the watchdog would read one process's "
            "progress";
    if (r && why)
        snprintf(why, n, "%s", r);
    return r == NULL;
}

void rs_fault_free(rs_net *net)
{
    rs_fault_state_free(net->flt);
    net->flt = NULL;
    free(net->links0);
    net->links0 = NULL;
}

int rs_net_faults_start(rs_net *net, const rs_fault_config *cfg, rs_err *err)
{
    if (net->flt)
        return rs_err_set(err, RS_EINVAL, "faults.schedule: faults already started");
    rs_fault_config own;
    int rc0 = rs_fault_config_take(&own, cfg, err);
    if (rc0 != RS_OK)
        return rc0;
    const rs_fault_config *c = &own;
    struct rs_faults *F;
    int rc = rs_fault_schedule_build(net, c, &F, err);
    if (rc != RS_OK || !F)
        return rc;
    if ((rc = rs_sim_entities_add(net->sim, 1, &F->ent)) != RS_OK) {
        rs_fault_state_free(F);
        return rs_err_set(err, rc, "faults.schedule: too many entities");
    }
    net->flt = F;
    rs_time now = rs_sim_now(net->sim);
    /* Entries due now apply at once: an event at the same time would run
     * after the traffic's (equal times run in entity order). */
    int later_rate = 0;
    for (uint32_t i = 0; i < F->n; i++)
        if (F->e[i].t <= now) {
            ev_fault(net->sim, net, i);
        } else {
            rs_sim_at(net->sim, F->e[i].t, F->ent, ev_fault, net, i);
            later_rate |= F->e[i].kind == FK_LINK_DEGRADE || F->e[i].kind == FK_LINK_RESTORE;
        }
    /* The rates as the run starts (degrades due now in force), for what
     * NCCL decided when it created its communicators (rs_net_hop_as_built),
     * while a later degrade or restore will change them. */
    if (later_rate) {
        if (!(net->links0 = malloc((net->nports ? net->nports : 1) * sizeof *net->links0)))
            return rs_err_set(err, RS_ENOMEM, "faults.schedule: out of memory for the links' starting rates");
        memcpy(net->links0, net->links, net->nports * sizeof *net->links0);
    }
    return RS_OK;
}

uint32_t rs_net_fault_count(const rs_net *net) { return net->flt ? net->flt->n : 0; }

static int net_fault_info_whole(const rs_net *net, uint32_t i, rs_net_fault_info *out)
{
    if (i >= rs_net_fault_count(net))
        return RS_EINVAL;
    const fentry *e = &net->flt->e[i];
    memset(out, 0, sizeof *out);
    out->time_ps = e->t;
    snprintf(out->kind, sizeof out->kind, "%s", rs_fault_kind_names[e->kind]);
    snprintf(out->target, sizeof out->target, "%s", e->target);
    snprintf(out->spec, sizeof out->spec, "%s", e->spec);
    snprintf(out->origin, sizeof out->origin, "%s", rs_fault_origin_names[e->origin]);
    out->entry = e->entry;
    out->applied = e->applied;
    out->packets_lost = e->lost;
    out->packets_retransmitted = e->retx;
    out->flows_hit = e->flows_hit;
    out->time_to_recover_ps = e->flows_hit && !e->pending ? e->recovered_at - e->t : RS_TIME_MAX;
    out->routes_recomputed_at = e->routes_at;
    return RS_OK;
}

int rs_net_fault_info_fill(const rs_net *net, uint32_t i, rs_net_fault_info *out, size_t size)
{
    rs_net_fault_info v;
    memset(&v, 0, sizeof v);
    int rc = net_fault_info_whole(net, i, &v);
    if (rc == RS_OK)
        rs_versioned_give(out, size, &v, sizeof v);
    return rc;
}

uint32_t rs_net_fault_job_flows(const rs_net *net, uint32_t i, uint32_t job)
{
    if (i >= rs_net_fault_count(net) || job < 1 || job > RS_NET_JOBS_MAX || !net->flt->e[i].job_flows)
        return 0;
    return net->flt->e[i].job_flows[job];
}

uint32_t rs_net_fault_absent_count(const rs_net *net) { return net->flt ? net->flt->nabsent : 0; }

static int net_fault_absent_whole(const rs_net *net, uint32_t i, rs_net_fault_info *out)
{
    if (i >= rs_net_fault_absent_count(net))
        return RS_EINVAL;
    const struct absent *a = &net->flt->absent[i];
    memset(out, 0, sizeof *out);
    out->time_ps = a->t;
    snprintf(out->kind, sizeof out->kind, "%s", rs_fault_kind_names[a->kind]);
    snprintf(out->spec, sizeof out->spec, "%s", a->spec);
    snprintf(out->origin, sizeof out->origin, "absent");
    out->entry = a->entry;
    out->routes_recomputed_at = out->time_to_recover_ps = RS_TIME_MAX;
    return RS_OK;
}

int rs_net_fault_absent_fill(const rs_net *net, uint32_t i, rs_net_fault_info *out, size_t size)
{
    rs_net_fault_info v;
    memset(&v, 0, sizeof v);
    int rc = net_fault_absent_whole(net, i, &v);
    if (rc == RS_OK)
        rs_versioned_give(out, size, &v, sizeof v);
    return rc;
}

const char *rs_net_fault_errmsg(const rs_net *net) { return net->flt ? net->flt->errmsg : ""; }

void rs_net_faults_timeline_catchup(rs_net *net)
{
    const struct rs_faults *F = net->flt;
    rs_time now = rs_sim_now(net->sim);
    for (uint32_t i = 0; F && net->tl && i < F->n && F->e[i].applied && F->e[i].t <= now; i++) {
        rs_net_tl_fault(net, F->e[i].target, rs_fault_kind_names[F->e[i].kind], F->e[i].spec);
        if (F->e[i].routes_at <= now)
            rs_net_tl_fault(net, F->e[i].target, "routes", "recomputed");
    }
}

uint32_t rs_net_straggler_count(const rs_net *net)
{
    return net->flt ? net->flt->nstrag : 0;
}

static int net_straggler_whole(const rs_net *net, uint32_t i, rs_net_straggler *out)
{
    const struct rs_faults *F = net->flt;
    if (!F || i >= F->nstrag)
        return RS_EINVAL;
    const fentry *e = &F->e[F->strag[i]];
    out->gpu = e->node;
    out->start = e->t;
    out->end = rs_time_add_sat(e->t, e->dur);
    out->factor_ppm = e->factor_ppm;
    return RS_OK;
}

int rs_net_straggler_fill(const rs_net *net, uint32_t i, rs_net_straggler *out, size_t size)
{
    rs_net_straggler v;
    memset(&v, 0, sizeof v);
    int rc = net_straggler_whole(net, i, &v);
    if (rc == RS_OK)
        rs_versioned_give(out, size, &v, sizeof v);
    return rc;
}
