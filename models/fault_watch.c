/*
 * fault_watch.c - what faults do to a run, watched (fault.h,
 * docs/faults-format.md): per fault entry, the drops it caused, the flows
 * that lost a packet to it, their retransmissions and when the last of
 * them was delivered (time to recover); PFC pauses that can no longer be
 * released (a dead link or a cycle of pauses); the cut-off check (a
 * message whose network leg has no path and no repair coming stops the
 * run with RS_EUNREACH) and the watchdog (neither delivered bytes nor
 * completed messages advanced for faults.watchdog_us).
 *
 * The packet path and the flow level tell it what happened
 * (rs_fault_note_*); fault.c applies the schedule and asks it to check
 * after routes change. Nothing here runs per packet but the notes of
 * drops and retransmissions of flows a fault hit.
 */
#include "fault_int.h"

#include "backend.h"
#include "versioned.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A PFC pause that cannot be released (docs/faults-format.md): port
 * `port` paused for priority `prio`, waiting on `behind` (the dead, paused
 * port at the end of its chain, or a port of the cycle it is in). */
enum { W_PROGRESS, W_DEAD, W_CYCLE, W_VISITING };
static const char *const wait_names[] = { "", "dead-link", "cycle" };
struct stuck {
    rs_time at;
    uint32_t fault;         /* the entry it is charged to */
    uint32_t port, behind;
    uint8_t prio, reason;
};
#define MAX_STUCK 256u
/* A wait chain longer than this is taken to progress (it is not followed:
 * Clos paths are a handful of hops). */
#define MAX_WAIT_DEPTH 64

/* An up entry is still to come. Entries apply in index order (F->cur is
 * one past the last applied), so that is the last up entry's index being
 * at least F->cur: O(1), since it runs at every route change and a flap
 * or random failures can make tens of thousands of those. */
static int repair_pending(const struct rs_faults *F)
{
    return F->last_up > F->cur;
}

static int describe_fault(const struct rs_faults *F, uint32_t i, char *buf, size_t n)
{
    const fentry *e = &F->e[i];
    int drawn = !strncmp(e->spec, "any-", 4);
    return snprintf(buf, n, "fault %u (%s %s%s%s at %.3f us)", i + 1, rs_fault_kind_names[e->kind], e->target,
                    drawn ? " drawn from " : "", drawn ? e->spec : "", (double)e->t / 1e6);
}

/* Can port p's priority q drain? W_PROGRESS: it is not paused, or its
 * pause will be lifted by an XON (its pauser is below XOFF again) or by
 * the pauser's queues draining (at least one egress queue that holds
 * bytes of the pausing ingress port can make progress: it is not paused,
 * so it sends, or drops into a dead link). W_DEAD: p is paused and its
 * cable is down, or everything it waits on ends in such a port: no resume
 * can cross a dead cable, the pause holds until its quanta run out, and
 * behind it the pauser keeps refreshing. W_CYCLE: the waits form a loop
 * (a PFC deadlock): never released. *culprit gets the port at the end.
 * O(the pausers' queued packets along the chain); runs only from PFC
 * refresh events and stops of fault runs. */
static unsigned pfc_wait(rs_net *net, uint32_t pid, unsigned q, int depth, uint32_t *culprit)
{
    struct rs_faults *F = net->flt;
    /* A split run: another process's port is its process's to judge; the
     * chain is followed as far as this process's ports go. */
    if (!rs_part_owns_port(net, pid))
        return W_PROGRESS;
    rs_port *p = &net->ports[pid];
    if (!(p->paused & (1u << q)) || depth > MAX_WAIT_DEPTH)
        return W_PROGRESS;
    if (F->seen[pid] == F->gen) {
        if (F->verdict[pid] == W_VISITING) {
            *culprit = pid;
            return W_CYCLE;
        }
        return F->verdict[pid];
    }
    F->seen[pid] = F->gen;
    F->verdict[pid] = W_VISITING;
    unsigned v;
    /* The pauser: the switch's ingress from p (NULL: another process's). */
    const rs_port *in = rs_part_owns_port(net, p->peer_port) ? &net->ports[p->peer_port] : NULL;
    if (!p->up) {
        *culprit = pid;
        v = W_DEAD;
    } else if (!in || !(in->pause_sent & (1u << q)) || net->nodes[p->peer_node].kind != RS_NODE_SWITCH) {
        v = W_PROGRESS; /* a resume is on its way */
    } else {
        /* Stuck only if every egress queue holding the pauser's bytes is. */
        const rs_node *sw = &net->nodes[p->peer_node];
        unsigned held = 0, drains = 0;
        v = W_DEAD;
        for (uint32_t k = 0; k < sw->nports && !drains; k++) {
            uint32_t eid = sw->port_base + k;
            const rs_pkt *x = net->ports[eid].q[q].head;
            while (x && x->in_port != p->peer_port)
                x = x->next;
            if (!x)
                continue;
            held = 1;
            unsigned w = pfc_wait(net, eid, q, depth + 1, culprit);
            if (w == W_PROGRESS)
                drains = 1;
            else if (w == W_CYCLE)
                v = W_CYCLE;
        }
        if (drains || !held)
            v = W_PROGRESS;
    }
    /* PROGRESS and DEAD do not depend on the ports being visited above
     * this one: keep them for the rest of the search; a CYCLE verdict may
     * (the loop may close through an ancestor that drains another way),
     * so it is computed again if asked again. */
    if (v == W_CYCLE)
        F->seen[pid] = 0;
    F->verdict[pid] = (uint8_t)v;
    return v;
}

/* Check the pause port pid (paused for priority q) is under: record it
 * when it cannot be released. Returns the verdict. */
static unsigned pfc_check(rs_net *net, uint32_t pid, unsigned q)
{
    struct rs_faults *F = net->flt;
    if (!F->seen) {
        /* One block for both: a failure leaves neither set. */
        uint32_t *seen = calloc(net->nports, sizeof *F->seen + sizeof *F->verdict);
        if (!seen) {
            rs_sim_stop(net->sim, RS_ENOMEM);
            return W_PROGRESS;
        }
        F->seen = seen;
        F->verdict = (uint8_t *)(seen + net->nports);
    }
    if (++F->gen == 0) {
        memset(F->seen, 0, net->nports * sizeof *F->seen);
        F->gen = 1;
    }
    uint32_t culprit = pid;
    unsigned v = pfc_wait(net, pid, q, 0, &culprit);
    if (v == W_PROGRESS)
        return v;
    /* Charged to the fault that took the dead port down, or for a cycle
     * to the latest fault (the routes it led to). */
    uint32_t fault = v == W_DEAD && !net->ports[culprit].up ? net->ports[culprit].down_fault : F->cur - 1;
    for (uint32_t i = 0; i < F->nstuck; i++) {
        const struct stuck *x = &F->stuck[i];
        if (x->port == pid && x->prio == q && x->reason == v && x->fault == fault)
            return v;
    }
    if (F->nstuck >= MAX_STUCK)
        return v;
    if (!F->stuck && !(F->stuck = calloc(MAX_STUCK, sizeof *F->stuck))) {
        rs_sim_stop(net->sim, RS_ENOMEM);
        return v;
    }
    F->stuck[F->nstuck++] = (struct stuck){ rs_sim_now(net->sim), fault, pid, culprit, (uint8_t)q, (uint8_t)v };
    return v;
}

/* Port pid (a switch's ingress side) is refreshing its pause of the peer:
 * is that pause one that cannot be released? */
void rs_fault_note_pfc_hold(rs_net *net, uint32_t pid)
{
    const rs_port *in = &net->ports[pid];
    for (unsigned q = 0; q < RS_NPRIO; q++)
        if (in->pause_sent & (1u << q))
            pfc_check(net, in->peer_port, q);
}

/* Every paused port, when the run stops: append the stuck ones to the
 * stop message. */
static void pfc_stop_report(rs_net *net)
{
    struct rs_faults *F = net->flt;
    size_t cap = sizeof F->errmsg, len = strlen(F->errmsg);
    uint32_t shown = 0, total = 0;
    for (uint32_t i = 0; i < net->nports; i++) {
        for (unsigned q = 0; q < RS_NPRIO && net->ports[i].paused; q++) {
            if (!(net->ports[i].paused & (1u << q)) || pfc_check(net, i, q) == W_PROGRESS)
                continue;
            total++;
            const struct stuck *x = NULL;
            for (uint32_t k = 0; k < F->nstuck; k++)
                if (F->stuck[k].port == i && F->stuck[k].prio == q)
                    x = &F->stuck[k];
            if (!x || shown >= 8 || len + 1 >= cap)
                continue;
            char a[48], b[48];
            rs_topo_port_name(net, x->port, a, sizeof a);
            rs_topo_port_name(net, x->behind, b, sizeof b);
            len += (size_t)snprintf(F->errmsg + len, cap - len, "%s %s priority %u (%s %s)",
                                    shown ? "," : "; PFC pauses that cannot be released:", a, q,
                                    x->reason == W_DEAD ? "behind dead link at" : "in a cycle through", b);
            shown++;
        }
    }
    if (total > shown && len + 1 < cap)
        snprintf(F->errmsg + len, cap - len, " and %u more", total - shown);
}

/* List unfinished messages whose network leg has no path; stop if any.
 * `why` prefixes the message. Returns 1 when it stopped the run. */
int rs_fault_check_cut(rs_net *net, const char *why, int force)
{
    struct rs_faults *F = net->flt;
    if (!force && repair_pending(F))
        return 0; /* a scheduled repair may reconnect them: the watchdog decides */
    size_t len = 0, cap = sizeof F->errmsg;
    uint32_t cut = 0, nshown = 0, shown[16][4]; /* distinct (src, dst, a, b) listed */
    for (uint32_t m = 0; m < net->nmsgs; m++) {
        const rs_msg *msg = &net->msgs[m];
        if (!rs_msg_needs_network(net, m))
            continue;
        if (!force && !rs_msg_cut(net, m))
            continue;
        int seen = 0;
        for (uint32_t k = 0; k < nshown && !seen; k++)
            seen = shown[k][0] == msg->src && shown[k][1] == msg->dst && shown[k][2] == msg->leg_src &&
                   shown[k][3] == msg->leg_dst;
        if (cut == 0) {
            len = (size_t)snprintf(F->errmsg, cap, "%s", why);
            if (F->cur > 0 && len < cap) {
                len += (size_t)snprintf(F->errmsg + len, cap - len, " after ");
                if (len < cap)
                    len += (size_t)describe_fault(F, F->cur - 1, F->errmsg + len, cap - len);
            }
            if (len < cap)
                len += (size_t)snprintf(F->errmsg + len, cap - len, ": undeliverable messages (source GPU->destination GPU):");
        }
        if (!seen && nshown < 16 && len < cap) {
            shown[nshown][0] = msg->src;
            shown[nshown][1] = msg->dst;
            shown[nshown][2] = msg->leg_src;
            shown[nshown][3] = msg->leg_dst;
            nshown++;
            if (msg->leg_src != msg->src || msg->leg_dst != msg->dst)
                len += (size_t)snprintf(F->errmsg + len, cap - len, " %u->%u (via %u->%u)", msg->src, msg->dst,
                                        msg->leg_src, msg->leg_dst);
            else
                len += (size_t)snprintf(F->errmsg + len, cap - len, " %u->%u", msg->src, msg->dst);
        }
        cut++;
    }
    if (cut == 0)
        return 0;
    if (cut > nshown && len < cap)
        snprintf(F->errmsg + len, cap - len, " (%u message(s) in all)", cut);
    pfc_stop_report(net);
    rs_sim_stop(net->sim, RS_EUNREACH);
    return 1;
}

/* Called on every retransmit timeout (never per packet). A stuck run is
 * one whose reliable flows keep timing out: checking here costs no event
 * of its own and leaves no timer running after the traffic ends. */
void rs_fault_note_timeout(rs_net *net)
{
    struct rs_faults *F = net->flt;
    rs_time now = rs_sim_now(net->sim);
    if (net->st.goodput_bytes != F->wd_goodput || net->st.msgs_done != F->wd_done || !F->wd_armed) {
        F->wd_goodput = net->st.goodput_bytes;
        F->wd_done = net->st.msgs_done;
        F->wd_since = now;
        F->wd_armed = 1;
        return;
    }
    if (F->wd == 0 || now - F->wd_since < F->wd)
        return;
    rs_fault_watchdog_stop(net, F->wd_since);
}

rs_time rs_fault_watchdog_ps(const rs_net *net) { return net->flt->wd; }

void rs_fault_watchdog_stop(rs_net *net, rs_time since)
{
    char why[160];
    snprintf(why, sizeof why, "faults: watchdog: no progress for %.3f us with %llu message(s) undelivered",
             (double)(rs_sim_now(net->sim) - since) / 1e6, (unsigned long long)(net->st.msgs - net->st.msgs_done));
    rs_fault_check_cut(net, why, 1);
}

void rs_fault_note_send(rs_net *net, uint32_t a, uint32_t b)
{
    if (rs_net_path_links(net, a, b) < 0)
        rs_fault_check_cut(net, "faults: no path left", 0); /* O(messages), once: it stops the run */
}

/* Remember that fault i hit flow f (once per flow and fault), for its
 * retransmissions and its recovery time. */
static void note_hit(rs_net *net, rs_flow *f, uint32_t i)
{
    struct rs_faults *F = net->flt;
    fentry *e = &F->e[i];
    f->hit_last = i;
    for (uint32_t h = f->hit; h != RS_NONE; h = F->hits[h].next)
        if (F->hits[h].fault == i)
            return;
    if (rs_array_reserve(&F->hits, &F->caphits, F->nhits + 1, sizeof *F->hits, 1024) != RS_OK) {
        rs_sim_stop(net->sim, RS_ENOMEM);
        return;
    }
    F->hits[F->nhits] = (struct hit){ i, f->hit };
    f->hit = (uint32_t)F->nhits++;
    e->flows_hit++;
    if (f->job) {
        if (!e->job_flows && !(e->job_flows = calloc(RS_NET_JOBS_MAX + 1, sizeof *e->job_flows))) {
            rs_sim_stop(net->sim, RS_ENOMEM);
            return;
        }
        e->job_flows[f->job]++;
    }
    if (!f->rx_done)
        e->pending++;
    else if (e->recovered_at < e->t)
        e->recovered_at = e->t; /* delivered already (an ACK was lost): nothing to wait for */
}

/* A link-down drop is the fault's that took its port down (the frames on
 * the wire it cut included, even after a repair applied); a no-route drop
 * is the latest fault's (the routes it led to). A failover drop is the
 * fault's whose route change abandoned the flow (kept in its hit_last,
 * which nothing changes after). */
void rs_fault_note_drop(rs_net *net, const rs_port *p, const rs_pkt *pkt, unsigned reason)
{
    struct rs_faults *F = net->flt;
    const rs_flow *gone = pkt->flow < net->nflows && net->flows[pkt->flow].gone ? &net->flows[pkt->flow] : NULL;
    uint32_t i = reason == RS_DROP_FAILOVER ? (gone ? gone->hit_last : RS_NONE) : p ? p->down_fault : F->cur - 1;
    if (i >= F->n)
        return;
    F->e[i].lost++;
    if (pkt->flow < net->nflows && !gone)
        note_hit(net, &net->flows[pkt->flow], i);
}

/* A backend without packets: the flow stopped (parked); no packet is lost. */
void rs_fault_note_flow_hit(rs_net *net, const rs_port *dead, uint32_t fid)
{
    uint32_t i = dead ? dead->down_fault : net->flt->cur - 1;
    if (i < net->flt->n)
        note_hit(net, &net->flows[fid], i);
}

void rs_fault_note_failover(rs_net *net, uint32_t fid, uint32_t m, uint32_t fault)
{
    struct rs_faults *F = net->flt;
    rs_flow *f = &net->flows[fid];
    note_hit(net, f, fault); /* before it is abandoned: the fault waits for the message */
    f->hit_last = fault;
    if (f->hit == RS_NONE)
        return;
    uint32_t tail = f->hit;
    while (F->hits[tail].next != RS_NONE)
        tail = F->hits[tail].next;
    F->hits[tail].next = net->msgs[m].hit;
    net->msgs[m].hit = f->hit;
    f->hit = RS_NONE;
}

void rs_fault_note_retx(rs_net *net, const rs_flow *f)
{
    net->flt->e[f->hit_last].retx++;
}

/* The flows or messages of hit list `head` delivered everything. */
static void deliver_hits(rs_net *net, uint32_t head)
{
    struct rs_faults *F = net->flt;
    rs_time now = rs_sim_now(net->sim);
    for (uint32_t h = head; h != RS_NONE; h = F->hits[h].next) {
        fentry *e = &F->e[F->hits[h].fault];
        e->pending--;
        if (e->recovered_at < now)
            e->recovered_at = now;
        if (e->pending == 0 && RS_UNLIKELY(net->tl != NULL)) {
            /* Its last hit flow is delivered: time_ps + time_to_recover_ps. */
            char d[24];
            snprintf(d, sizeof d, "fault %u", F->hits[h].fault + 1);
            rs_net_tl_fault(net, e->target, "recovered", d);
        }
    }
}

void rs_fault_note_delivered(rs_net *net, const rs_flow *f) { deliver_hits(net, f->hit); }

void rs_fault_note_msg_delivered(rs_net *net, uint32_t m) { deliver_hits(net, net->msgs[m].hit); }

int rs_fault_reroute_hb(const rs_net *net) { return net->flt->cfg.reroute_hb; }

int rs_fault_path_ok(const rs_net *net, uint32_t a, uint32_t b) { return rs_net_path_links(net, a, b) >= 0; }

uint32_t rs_net_fault_pfc_stuck_count(const rs_net *net) { return net->flt ? net->flt->nstuck : 0; }

static int net_fault_pfc_stuck_whole(const rs_net *net, uint32_t i, rs_net_pfc_stuck *out)
{
    if (i >= rs_net_fault_pfc_stuck_count(net))
        return RS_EINVAL;
    const struct stuck *x = &net->flt->stuck[i];
    memset(out, 0, sizeof *out);
    out->detected_ps = x->at;
    out->fault = x->fault;
    out->priority = x->prio;
    rs_topo_port_name(net, x->port, out->port, sizeof out->port);
    rs_topo_port_name(net, x->behind, out->behind, sizeof out->behind);
    snprintf(out->reason, sizeof out->reason, "%s", wait_names[x->reason]);
    return RS_OK;
}

int rs_net_fault_pfc_stuck_fill(const rs_net *net, uint32_t i, rs_net_pfc_stuck *out, size_t size)
{
    rs_net_pfc_stuck v;
    memset(&v, 0, sizeof v);
    int rc = net_fault_pfc_stuck_whole(net, i, &v);
    if (rc == RS_OK)
        rs_versioned_give(out, size, &v, sizeof v);
    return rc;
}
