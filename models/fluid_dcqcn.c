/*
 * fluid_dcqcn.c - DCQCN at flow level (fluid_int.h): each RoCE flow's
 * reaction point, its backlog in the network and the CNPs its queues
 * earn, turned into rate caps for the max-min solver.
 */
#include "fluid_int.h"

#include <string.h>

/* -- DCQCN at flow level ---------------------------------------------------
 *
 * With transport.cc=dcqcn (ECN on, RoCE) every RoCE flow carries the
 * reaction point of transport.c (rs_dcqcn_rp; Zhu et al., SIGCOMM 2015):
 * its current rate Rc, target Rt, alpha and increase counters, run by the
 * same rs_dcqcn_cut and rs_dcqcn_increase: a CNP sets Rt = Rc (when clamping), Rc = Rc (1 - alpha/2), alpha = (1 - g) alpha + g
 * (alpha decays by (1 - g) per alpha period before); every rate_timer_us
 * and every byte_counter bytes sent is an increase event (fast recovery
 * Rc = (Rt + Rc)/2 for F events, then additive, then hyper). The fluid
 * has no packets, so two things stand in for the queue:
 *
 *   Backlog. A flow sends at s = min(Rc, its share of its NIC) and is
 *   delivered at d, its fluid rate. While s > d the difference waits in
 *   the network: backlog b grows at s - d, up to what PFC lets it hold
 *   (pfc.xoff_bytes per switch up to its bottleneck: each ingress pauses
 *   its upstream there) and never beyond the bytes not yet delivered.
 *   While b > 0 the backlog keeps the flow's bottleneck busy, so the flow
 *   is delivered at its max-min share whatever Rc is; at b = 0 its rate is
 *   capped at Rc (rs_mmf_set_flow_cap).
 *
 *   Marking. A switch port's queue is the backlog of the flows it limits;
 *   above ecn.kmin_bytes the flows crossing it get a CNP: the first one
 *   the queueing delay at Kmin plus a round trip (2 x the flow's path
 *   latency) after the queue crossed Kmin, then one per cnp_interval_us
 *   while it stays above (the notification point's limit). At exactly
 *   full load (rates cut to the fair share) the queue neither grows nor
 *   drains, so it stays above Kmin and the next CNP cuts again: the
 *   packet level does the same.
 *
 * Each flow has one pending engine event: the earliest of its next CNP,
 * rate timer, byte-counter event, backlog running out and last byte
 * leaving the sender (dq_schedule); none if it leaves the fluid first.
 * Every change of a flow's own state is such an event, so an event that
 * fires early (a later one replaced it) finds nothing to do. A cap that
 * binds re-solves the flow's component; a change of send rate that binds
 * nothing does not, so the other flows at its port see the queue's new
 * slope only at their next event or solve (a known approximation). Relayed flows (rail-only PXN as one
 * fluid flow) stay max-min. docs/fidelity.md has the figures. */

static void ev_dq(rs_sim *sim, void *obj, uint64_t arg);

int rs_fluid_dq_enter(rs_fluid *fl, uint32_t id)
{
    rs_net *net = fl->net;
    uint32_t old = fl->capdq;
    if (rs_array_reserve32((void **)&fl->dq, &fl->capdq, id + 1, sizeof *fl->dq, 16) != RS_OK)
        return RS_ENOMEM;
    if (fl->capdq > old) /* new ids: generation 0, no event pending */
        memset(fl->dq + old, 0, (size_t)(fl->capdq - old) * sizeof *fl->dq);
    const rs_flow *f = &net->flows[fl->rec[id].flow];
    dq_flow *q = &fl->dq[id];
    uint32_t gen = q->gen + 1; /* a pending event of the id's last flow is stale */
    memset(q, 0, sizeof *q);
    q->gen = gen;
    q->on = f->reliable && f->relay_src == RS_NONE;
    rs_dcqcn_init(net, &q->cc); /* alpha 1: the first CNP halves the rate */
    q->tb = rs_sim_now(net->sim);
    q->last_cnp = q->next_timer = q->cnp_due = q->due = RS_TIME_MAX;
    return RS_OK;
}

/* Undelivered bits x 10^12 of solver flow id at now. */
static unsigned __int128 dq_rem(const rs_fluid *fl, uint32_t id, rs_time now)
{
    const fl_rec *r = &fl->rec[id];
    unsigned __int128 done = (unsigned __int128)r->rate * (now - r->t0);
    return done < r->rem ? r->rem - done : 0;
}

static unsigned __int128 dq_b_at(const rs_fluid *fl, uint32_t id, rs_time now)
{
    const dq_flow *q = &fl->dq[id];
    rs_time dt = now - q->tb;
    if (q->b == 0 && q->s <= q->d)
        return 0; /* the common case: no backlog, none building */
    if (q->s < q->d) {
        unsigned __int128 dec = (unsigned __int128)(q->d - q->s) * dt;
        return q->b > dec ? q->b - dec : 0;
    }
    unsigned __int128 b = q->b + (unsigned __int128)(q->s - q->d) * dt, lim = q->bmax > q->b ? q->bmax : q->b;
    unsigned __int128 rem = dq_rem(fl, id, now);
    if (lim > rem)
        lim = rem;
    return b < lim ? b : lim;
}

/* Round-robin tails (hand_over): a flow leaving early hands the bytes it
 * had left (left) to its group; those of them already sent (in its
 * backlog) join the takers' backlogs, so a taker that had sent all its
 * bytes still has, and is not capped again. */
unsigned __int128 rs_fluid_dq_in_flight(const rs_fluid *fl, uint32_t id, rs_time now, unsigned __int128 left)
{
    if (id >= fl->capdq || !fl->dq[id].on)
        return 0;
    unsigned __int128 b = dq_b_at(fl, id, now);
    return b < left ? b : left;
}

static void dq_advance(rs_fluid *fl, uint32_t id, rs_time now);

/* Before the taker's remaining bytes grow (dq_advance clamps to them). */
void rs_fluid_dq_take_in_flight(rs_fluid *fl, uint32_t id, rs_time now, unsigned __int128 bits)
{
    if (id >= fl->capdq || !fl->dq[id].on)
        return;
    dq_advance(fl, id, now);
    fl->dq[id].b += bits;
}

static void dq_advance(rs_fluid *fl, uint32_t id, rs_time now)
{
    dq_flow *q = &fl->dq[id];
    if (q->cc.limited)
        q->sent += (unsigned __int128)q->s * (now - q->tb);
    q->b = dq_b_at(fl, id, now);
    q->tb = now;
}

/* The queue of switch port l at now (bits x 10^12): the backlog of the
 * flows it limits, of priority class cls only (jobs at several
 * priorities: ECN marks per priority queue) or of all when cls < 0;
 * *slope its rate of change (bit/s). */
static unsigned __int128 dq_queue(const rs_fluid *fl, uint32_t l, rs_time now, int cls, int64_t *slope)
{
    const mmf_link *L = &fl->mmf->links[l];
    unsigned __int128 q = 0;
    *slope = 0;
    for (uint32_t j = 0; j < L->n; j++) {
        uint32_t g = L->fl[j];
        const dq_flow *x = &fl->dq[g];
        if (!x->on || (x->b == 0 && x->s <= x->d) || rs_mmf_bottleneck(fl->mmf, g) != l ||
            (cls >= 0 && fl->mmf->flows[g].cls != cls))
            continue;
        unsigned __int128 b = dq_b_at(fl, g, now);
        q += b;
        if (b > 0 && b >= dq_rem(fl, g, now))
            *slope -= (int64_t)x->d; /* all sent: the backlog only drains */
        else if (x->s > x->d && b < x->bmax)
            *slope += (int64_t)(x->s - x->d);
        else if (x->s < x->d && b > 0)
            *slope -= (int64_t)(x->d - x->s);
    }
    return q;
}

/* Is a switch port on id's path above Kmin now? If not, *cross is when
 * the first growing one will be (RS_TIME_MAX: none grows). */
static int dq_marking(rs_fluid *fl, uint32_t id, rs_time now, rs_time *cross)
{
    const rs_net *net = fl->net;
    const mmf_flow *mf = &fl->mmf->flows[id];
    int cls = fl->mmf->ncls > 1 ? mf->cls : -1; /* several classes: its own queue, not cached */
    *cross = RS_TIME_MAX;
    for (uint32_t k = 0; k < mf->nhops; k++) {
        if (link_port(net, mf->link[k])->kind != RS_PORT_SWITCH)
            continue;
        uint32_t l = mf->link[k], members;
        link_ports(net, &mf->link[k], &members);
        /* A bundle's backlog sits spread over its members' queues: each
         * passes Kmin when the bundle's passes members x Kmin. */
        unsigned __int128 kmin = (unsigned __int128)net->cfg.ecn_kmin_bytes * members * 8u * RS_PS_PER_S;
        int64_t slope;
        unsigned __int128 q;
        if (cls < 0 && fl->qvalid && fl->qstamp[l] == fl->dqstamp) {
            q = fl->qlen[l];
            slope = fl->qslope[l];
        } else {
            q = dq_queue(fl, l, now, cls, &slope);
            if (cls < 0 && fl->qvalid) { /* the queues hold still until qvalid drops: keep it */
                fl->qlen[l] = q;
                fl->qslope[l] = slope;
                fl->qstamp[l] = fl->dqstamp;
            }
        }
        if (q > kmin)
            return 1;
        if (slope > 0) {
            unsigned __int128 d = (kmin - q + (uint64_t)slope - 1) / (uint64_t)slope;
            if (d < *cross - now)
                *cross = now + (rs_time)d;
        }
    }
    return 0;
}

/* Send rate: Rc, or less when the flow shares its NIC (round robin). */
static uint64_t dq_send_rate(const rs_fluid *fl, uint32_t id)
{
    const mmf_flow *mf = &fl->mmf->flows[id];
    uint32_t nf = fl->mmf->links[mf->link[0]].n;
    uint64_t nic = nf == 1 ? fl->mmf->capv[mf->link[0]] : fl->mmf->capv[mf->link[0]] / nf;
    uint64_t rc = (uint64_t)fl->dq[id].cc.rc;
    return rc < nic ? rc : nic;
}

/* PFC's bound on the backlog: each switch up to the bottleneck holds up to
 * xoff (lossless) or its buffer per ingress port before its upstream stops. */
static unsigned __int128 dq_bmax(const rs_fluid *fl, uint32_t id)
{
    const rs_net *net = fl->net;
    const mmf_flow *mf = &fl->mmf->flows[id];
    uint32_t bn = rs_mmf_bottleneck(fl->mmf, id), k = 0;
    while (k < mf->nhops && mf->link[k] != bn)
        k++;
    if (k == mf->nhops)
        k = 0; /* capped: limited at its own NIC */
    uint64_t per = net->cfg.pfc ? net->cfg.pfc_xoff_bytes : net->cfg.buffer_bytes;
    return (unsigned __int128)per * k * 8u * RS_PS_PER_S;
}

/* The solver's cap for id: Rc while no backlog feeds its bottleneck (none
 * while one builds: s > d). */
static void dq_cap_sync(rs_fluid *fl, uint32_t id)
{
    const dq_flow *q = &fl->dq[id];
    int free_ = q->b > 0 || q->s > q->d || q->cc.rc >= fl->net->line_bps;
    uint64_t cap = free_ ? 0 : (uint64_t)q->cc.rc;
    uint64_t old = fl->mmf->fcap[id], rate = fl->rec[id].rate;
    if (cap == old)
        return;
    /* Caps above the flow's rate before and after change no rate. */
    int binding = (old != 0 && rate >= old) || (cap != 0 && rate >= cap);
    rs_mmf_set_flow_cap(fl->mmf, id, cap, binding);
    if (binding)
        rs_fluid_want_solve(fl);
}

/* The wire bits x 10^12 sent at id's next byte-counter event: byte_counter
 * counts payload (transport.c), the fluid wire bytes. 0: none. Kept per
 * byte-counter stage (a 128-bit division per event otherwise). */
static unsigned __int128 dq_byte_goal(rs_fluid *fl, uint32_t id)
{
    dq_flow *q = &fl->dq[id];
    if (q->goal_stage && q->goal_stage == q->cc.b_stage + 1)
        return q->goal;
    uint64_t B = fl->net->cfg.dcqcn.byte_counter, bytes = fl->net->flows[fl->rec[id].flow].bytes;
    unsigned __int128 payload = (unsigned __int128)B * (q->cc.b_stage + 1);
    q->goal = B == 0 || bytes == 0 ? 0 : payload * fl->rec[id].wire / bytes * 8u * RS_PS_PER_S;
    q->goal_stage = q->cc.b_stage + 1;
    return q->goal;
}

static rs_time dq_after(rs_time now, unsigned __int128 bits_e12, uint64_t rate)
{
    if (rate == 0)
        return RS_TIME_MAX;
    unsigned __int128 d = (bits_e12 + rate - 1) / rate;
    return d >= RS_TIME_MAX - now ? RS_TIME_MAX : now + (rs_time)d;
}

/* Pick id's next event (its state advanced to now) and arm it. quiet: no
 * flow in its component has a backlog or builds one, so no queue. */
static void dq_schedule(rs_fluid *fl, uint32_t id, rs_time now, int quiet)
{
    rs_net *net = fl->net;
    dq_flow *q = &fl->dq[id];
    rs_time cross = RS_TIME_MAX, due = RS_TIME_MAX;
    if (!quiet && dq_marking(fl, id, now, &cross)) {
        if (q->cnp_due == RS_TIME_MAX) {
            /* Marks from now: the first CE packet waits out the queue at
             * Kmin, reaches the receiver, and its CNP comes back. */
            rs_time react = port_ser(&net->ports[fl->mmf->flows[id].link[0]], net->cfg.ecn_kmin_bytes) +
                            2 * fl->rec[id].lat;
            q->cnp_due = now + react;
            if (q->last_cnp != RS_TIME_MAX && q->last_cnp + net->cnp_interval > q->cnp_due)
                q->cnp_due = q->last_cnp + net->cnp_interval;
        }
    } else if (cross != RS_TIME_MAX) {
        rs_time react = port_ser(&net->ports[fl->mmf->flows[id].link[0]], net->cfg.ecn_kmin_bytes) +
                        2 * fl->rec[id].lat;
        q->cnp_due = rs_time_add_sat(cross, react);
    } else {
        q->cnp_due = RS_TIME_MAX;
    }
    due = q->cnp_due;
    if (q->cc.limited) {
        if (q->next_timer < due)
            due = q->next_timer;
        unsigned __int128 goal = dq_byte_goal(fl, id);
        if (goal) {
            rs_time t = goal > q->sent ? dq_after(now, goal - q->sent, q->s) : now;
            if (t < due)
                due = t;
        }
    }
    if (q->b > 0 && q->d > q->s && q->b < dq_rem(fl, id, now)) {
        /* (A backlog that is all the flow has left drains to its end.) */
        rs_time t = dq_after(now, q->b, q->d - q->s);
        if (t < due)
            due = t;
    }
    if (due >= fl->rec[id].end)
        due = RS_TIME_MAX; /* it leaves the fluid first: nothing to change */
    if (due >= q->due && q->due != RS_TIME_MAX)
        return; /* the pending event comes first; it looks again then */
    q->gen++;
    q->due = due;
    if (due != RS_TIME_MAX)
        rs_sim_at(net->sim, due, fl->ent, ev_dq, fl, ((uint64_t)q->gen << 32) | id);
}

/* From here until qvalid drops the ports' queues stand still: dq_marking
 * keeps each one it computes (a fresh stamp forgets the last lot's). */
static void dq_stamp(rs_fluid *fl)
{
    if (++fl->dqstamp == 0) {
        memset(fl->qstamp, 0, (size_t)fl->capq * sizeof *fl->qstamp);
        fl->dqstamp = 1;
    }
    fl->qvalid = 1;
}

static void ev_dq(rs_sim *sim, void *obj, uint64_t arg)
{
    rs_fluid *fl = obj;
    uint32_t id = (uint32_t)arg;
    dq_flow *q = &fl->dq[id];
    if (!q->on || q->gen != (uint32_t)(arg >> 32) || !rs_mmf_live(fl->mmf, id))
        return;
    rs_time now = rs_sim_now(sim), cross;
    q->due = RS_TIME_MAX;
    dq_advance(fl, id, now);
    if (q->cnp_due <= now) {
        q->cnp_due = RS_TIME_MAX;
        if (dq_marking(fl, id, now, &cross) &&
            (q->last_cnp == RS_TIME_MAX || now - q->last_cnp >= fl->net->cnp_interval)) {
            rs_dcqcn_cut(fl->net, &q->cc, now);
            q->sent = 0;
            q->next_timer = now + fl->net->rate_timer;
            q->last_cnp = now;
        }
    }
    if (q->cc.limited && q->next_timer <= now) {
        q->next_timer = now + fl->net->rate_timer;
        rs_dcqcn_increase(fl->net, &q->cc, 1);
    }
    unsigned __int128 goal = q->cc.limited ? dq_byte_goal(fl, id) : 0;
    if (goal && q->sent >= goal) {
        rs_dcqcn_increase(fl->net, &q->cc, 0);
    }
    if (!q->cc.limited)
        q->next_timer = RS_TIME_MAX;
    uint64_t s0 = q->s;
    q->s = dq_send_rate(fl, id);
    dq_cap_sync(fl, id);
    dq_schedule(fl, id, now, 0);
    if (q->s != s0 && q->b > 0 && q->s > 0) {
        /* Its backlog's slope changed, so did its bottleneck's queue: the
         * flows crossing that port look at it again (same rates, so no
         * solve; their next CNP may come sooner or later). */
        uint32_t l = rs_mmf_bottleneck(fl->mmf, id);
        const mmf_link *L = &fl->mmf->links[l];
        /* Advancing a flow to now leaves every queue at now as it is, so
         * each port's queue is computed once for the lot (dq_marking). */
        dq_stamp(fl);
        for (uint32_t j = 0; link_port(fl->net, l)->kind == RS_PORT_SWITCH && j < L->n; j++) {
            uint32_t g = L->fl[j];
            if (g != id && g < fl->capdq && fl->dq[g].on) {
                dq_advance(fl, g, now);
                dq_schedule(fl, g, now, 0);
            }
        }
        fl->qvalid = 0;
    }
}

/* After a solve: the touched flows' delivery rates changed at now. */
void rs_fluid_dq_solved(rs_fluid *fl, const uint32_t *t, size_t n, rs_time now)
{
    int busy = 0;
    for (size_t i = 0; i < n; i++) {
        if (t[i] >= fl->capdq || !fl->dq[t[i]].on)
            continue;
        dq_flow *q = &fl->dq[t[i]];
        dq_advance(fl, t[i], now);
        q->d = fl->rec[t[i]].rate;
        q->s = dq_send_rate(fl, t[i]);
        q->bmax = dq_bmax(fl, t[i]);
        busy |= q->b > 0 || q->s > q->d;
    }
    /* Queues of the switch ports these flows cross, once each (none when
     * no flow here has or builds a backlog: the common lone flow). */
    for (size_t i = 0; !busy && i < n; i++)
        if (t[i] < fl->capdq && fl->dq[t[i]].on) {
            dq_cap_sync(fl, t[i]);
            dq_schedule(fl, t[i], now, 1);
        }
    if (!busy)
        return;
    dq_stamp(fl);
    for (size_t i = 0; i < n; i++) {
        if (t[i] >= fl->capdq || !fl->dq[t[i]].on)
            continue;
        const mmf_flow *mf = &fl->mmf->flows[t[i]];
        for (uint32_t k = 0; k < mf->nhops; k++) {
            uint32_t l = mf->link[k];
            if (fl->qstamp[l] != fl->dqstamp && link_port(fl->net, l)->kind == RS_PORT_SWITCH) {
                fl->qlen[l] = dq_queue(fl, l, now, -1, &fl->qslope[l]);
                fl->qstamp[l] = fl->dqstamp;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (t[i] >= fl->capdq || !fl->dq[t[i]].on)
            continue;
        /* A backlog starting lifts the cap (it was above the rate: no
         * re-solve); a rate above Rc with no backlog takes it back (one
         * more solve at this instant). */
        dq_cap_sync(fl, t[i]);
        dq_schedule(fl, t[i], now, 0);
    }
    fl->qvalid = 0; /* events compute the queues afresh */
}

