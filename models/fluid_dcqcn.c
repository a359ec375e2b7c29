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
 * leaving the sender (dq_schedule); none if it leaves the fluid first; a
 * saturated flow's is later (below). Every change of a flow's own state
 * is such an event, so an event that fires early (a later one replaced
 * it) finds nothing to do. A cap that binds re-solves the flow's
 * component; a change of send rate that binds nothing does not, so the
 * other flows at its port see the queue's new slope only at their next
 * event or solve (a known approximation). Relayed flows (rail-only PXN as
 * one fluid flow) stay max-min. docs/fidelity.md has the figures. */

static void ev_dq(rs_sim *sim, void *obj, uint64_t arg);

int rs_fluid_dq_enter(rs_fluid *fl, uint32_t id)
{
    rs_net *net = fl->net;
    uint32_t old = fl->capdq;
    if (rs_array_reserve32((void **)&fl->dq, &fl->capdq, id + 1, sizeof *fl->dq, 16) != RS_OK)
        return RS_ENOMEM;
    if (fl->capdq > old) /* new ids: generation 0, no event pending */
        memset(fl->dq + old, 0, (size_t)(fl->capdq - old) * sizeof *fl->dq);
    if (rs_array_reserve32((void **)&fl->dqa, &fl->capdqa, id + 1, sizeof *fl->dqa, 16) != RS_OK)
        return RS_ENOMEM;
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

static void dq_settle(rs_fluid *fl, uint32_t id, rs_time now, int arm);

static void dq_advance(rs_fluid *fl, uint32_t id, rs_time now)
{
    dq_flow *q = &fl->dq[id];
    if (q->ahead)
        dq_settle(fl, id, now, 1);
    if (q->cc.limited)
        q->sent += (unsigned __int128)q->s * (now - q->tb);
    q->b = dq_b_at(fl, id, now);
    q->tb = now;
}

/* What id's backlog b (at now) adds to its bottleneck queue's slope
 * (bit/s) while it sends at s. */
static int64_t dq_slope(const rs_fluid *fl, uint32_t id, uint64_t s, unsigned __int128 b, rs_time now)
{
    const dq_flow *x = &fl->dq[id];
    if (b > 0 && b >= dq_rem(fl, id, now))
        return -(int64_t)x->d; /* all sent: the backlog only drains */
    if (s > x->d && b < x->bmax)
        return (int64_t)(s - x->d);
    if (s < x->d && b > 0)
        return -(int64_t)(x->d - s);
    return 0;
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
        *slope += dq_slope(fl, g, x->s, b, now);
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

/* Send rate of id in state q: Rc, or less when the flow shares its NIC
 * (round robin). */
static uint64_t dq_send_rate(const rs_fluid *fl, uint32_t id, const dq_flow *q)
{
    const mmf_flow *mf = &fl->mmf->flows[id];
    uint32_t nf = fl->mmf->links[mf->link[0]].n;
    uint64_t nic = nf == 1 ? fl->mmf->capv[mf->link[0]] : fl->mmf->capv[mf->link[0]] / nf;
    uint64_t rc = (uint64_t)q->cc.rc;
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
static unsigned __int128 dq_byte_goal(const rs_fluid *fl, uint32_t id, dq_flow *q)
{
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

enum { DQ_LOOK, DQ_QUIET, DQ_MARKED };

/* id's next event in state q at now, its CNP's due time set on the way:
 * the earliest of its CNP, rate timer, byte-counter event and backlog
 * running out; RS_TIME_MAX if it leaves the fluid first. how: DQ_LOOK,
 * look at the queues on its path; DQ_QUIET, no flow in its component has
 * or builds a backlog, so no queue; DQ_MARKED, a port on its path is known
 * to be above Kmin. */
static rs_time dq_next(rs_fluid *fl, uint32_t id, dq_flow *q, rs_time now, int how)
{
    rs_net *net = fl->net;
    rs_time cross = RS_TIME_MAX, due;
    if (how == DQ_MARKED || (how == DQ_LOOK && dq_marking(fl, id, now, &cross))) {
        if (q->cnp_due == RS_TIME_MAX) {
            /* Marks from now: the first CE packet waits out the queue at
             * Kmin, reaches the receiver, and its CNP comes back. */
            rs_time react = port_ser(link_port(net, fl->mmf->flows[id].link[0]), net->cfg.ecn_kmin_bytes) +
                            2 * fl->rec[id].lat;
            q->cnp_due = now + react;
            if (q->last_cnp != RS_TIME_MAX && q->last_cnp + net->cnp_interval > q->cnp_due)
                q->cnp_due = q->last_cnp + net->cnp_interval;
        }
    } else if (cross != RS_TIME_MAX) {
        rs_time react = port_ser(link_port(net, fl->mmf->flows[id].link[0]), net->cfg.ecn_kmin_bytes) +
                        2 * fl->rec[id].lat;
        q->cnp_due = rs_time_add_sat(cross, react);
    } else {
        q->cnp_due = RS_TIME_MAX;
    }
    due = q->cnp_due;
    if (q->cc.limited) {
        if (q->next_timer < due)
            due = q->next_timer;
        unsigned __int128 goal = dq_byte_goal(fl, id, q);
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
    return due >= fl->rec[id].end ? RS_TIME_MAX : due; /* leaving first: nothing to change */
}

/* id's own event at now in state q (advanced to now): its CNP if one is
 * due and a port on its path still marks (known to when marked), the rate
 * timer, the byte counter; then its send rate. */
static void dq_fire(rs_fluid *fl, uint32_t id, dq_flow *q, rs_time now, int marked)
{
    const rs_net *net = fl->net;
    rs_time cross;
    if (q->cnp_due <= now) {
        q->cnp_due = RS_TIME_MAX;
        if ((marked || dq_marking(fl, id, now, &cross)) &&
            (q->last_cnp == RS_TIME_MAX || now - q->last_cnp >= net->cnp_interval)) {
            rs_dcqcn_cut(net, &q->cc, now);
            q->sent = 0;
            q->next_timer = now + net->rate_timer;
            q->last_cnp = now;
        }
    }
    if (q->cc.limited && q->next_timer <= now) {
        q->next_timer = now + net->rate_timer;
        rs_dcqcn_increase(net, &q->cc, 1);
    }
    unsigned __int128 goal = q->cc.limited ? dq_byte_goal(fl, id, q) : 0;
    if (goal && q->sent >= goal)
        rs_dcqcn_increase(net, &q->cc, 0);
    if (!q->cc.limited)
        q->next_timer = RS_TIME_MAX;
    q->s = dq_send_rate(fl, id, q);
}

/* -- Saturated flows run ahead ----------------------------------------------
 *
 * A flow whose backlog is at PFC's bound (b >= bmax) while it sends faster
 * than it is delivered (s > d) is saturated: its backlog cannot grow, so
 * it adds nothing to its bottleneck queue's slope; that backlog alone
 * holds the bottleneck (a switch port) above Kmin, so every CNP due finds
 * the port marking; and it is delivered at its max-min share whatever Rc
 * does. Its own CNPs and increases then change nothing another flow or the
 * solver sees, until one brings s down to d or below, or until fill, when
 * the backlog is all it has left. In gpt3-175b's TP rings across HB
 * domains of 4, 145 M of 150 M DCQCN events were such events.
 *
 * So a saturated flow's engine event is its first own event that others
 * may see (or its dq_ahead-th, RS_FLUID_DQ_AHEAD), found by running its
 * events ahead on a copy of its state (dq_ahead, kept in fl->dqa); those
 * before are worked out only when something looks at the flow
 * (dq_advance: a solve, a hand-over, another flow's event at its port),
 * by the same arithmetic as the events themselves, in the same order, or
 * taken from the copy when the engine event comes first (dq_settle).
 * Nothing else changes: outputs are those of one engine event per own
 * event, to the picosecond (test_fluid). */

/* Is id (state q, at now) saturated? *fill: when the backlog becomes all
 * it has left. */
static int dq_saturated(rs_fluid *fl, uint32_t id, const dq_flow *q, rs_time now, rs_time *fill)
{
    const fl_rec *r = &fl->rec[id];
    if (!q->on || q->bmax == 0 || q->b < q->bmax || q->s <= q->d || q->d == 0 || r->rem <= q->b)
        return 0;
    uint32_t l = rs_mmf_bottleneck(fl->mmf, id), members;
    if (l == RS_NONE || link_port(fl->net, l)->kind != RS_PORT_SWITCH)
        return 0;
    link_ports(fl->net, &l, &members);
    if (q->b <= (unsigned __int128)fl->net->cfg.ecn_kmin_bytes * members * 8u * RS_PS_PER_S)
        return 0;
    unsigned __int128 t = (r->rem - q->b) / q->d; /* rem(t) = b */
    *fill = t >= RS_TIME_MAX - r->t0 ? RS_TIME_MAX : r->t0 + (rs_time)t;
    return *fill > now;
}

/* Saturated id's own event at `at` on q, as ev_dq runs it (its backlog
 * holds, its port is known to mark). */
static void dq_own(rs_fluid *fl, uint32_t id, dq_flow *q, rs_time at)
{
    if (q->cc.limited)
        q->sent += (unsigned __int128)q->s * (at - q->tb);
    q->tb = at;
    dq_fire(fl, id, q, at, 1);
}

/* Run saturated id's own events on q that come before until. */
static void dq_run(rs_fluid *fl, uint32_t id, dq_flow *q, rs_time until)
{
    while (q->due < until) {
        rs_time at = q->due;
        dq_own(fl, id, q, at);
        q->due = dq_next(fl, id, q, at, DQ_MARKED);
    }
}

/* When id's engine event should be, its next own event being q->due (its
 * state at now): q->due itself, or for a saturated flow the first of its
 * own events that others may see (q->ahead set). */
static rs_time dq_ahead(rs_fluid *fl, uint32_t id, rs_time now)
{
    dq_flow *q = &fl->dq[id];
    rs_time fill, at = q->due;
    if (at == RS_TIME_MAX || !dq_saturated(fl, id, q, now, &fill))
        return at;
    dq_flow *c = &fl->dqa[id];
    *c = *q;
    int kept = 1;
    for (uint32_t n = 0; n < fl->dq_ahead && at < fill; n++) {
        dq_own(fl, id, c, at);
        if (c->s <= c->d) {
            kept = 0; /* this one changes its slope: the engine runs it */
            break;
        }
        at = c->due = dq_next(fl, id, c, at, DQ_MARKED);
        if (at == RS_TIME_MAX)
            break;
    }
    /* Kept: c is the flow as its engine event at `at` will find it. */
    q->ahead = at == q->due ? 0 : kept && at != RS_TIME_MAX ? 2 : 1;
    return at;
}

/* id, running ahead, brought up to now: its own events before now run;
 * arm: put its engine event back at its next one. */
static void dq_settle(rs_fluid *fl, uint32_t id, rs_time now, int arm)
{
    dq_flow *q = &fl->dq[id];
    if (q->ahead == 2 && fl->dqa[id].due == now) { /* as run ahead */
        uint32_t gen = q->gen;
        *q = fl->dqa[id];
        q->gen = gen;
    } else {
        dq_run(fl, id, q, now);
    }
    q->ahead = 0;
    if (arm) {
        q->gen++;
        if (q->due != RS_TIME_MAX)
            rs_sim_at(fl->net->sim, q->due, fl->ent, ev_dq, fl, ((uint64_t)q->gen << 32) | id);
    }
}

void rs_fluid_dq_settle(rs_fluid *fl, uint32_t id, rs_time now)
{
    if (id < fl->capdq && fl->dq[id].ahead)
        dq_settle(fl, id, now, 1);
}

/* Find id's next event (its state advanced to now) and arm it, unless its
 * pending one comes first (it looks again then). */
static void dq_schedule(rs_fluid *fl, uint32_t id, rs_time now, int how)
{
    dq_flow *q = &fl->dq[id];
    rs_time due = dq_next(fl, id, q, now, how);
    if (due >= q->due && q->due != RS_TIME_MAX)
        return;
    q->due = due;
    rs_time at = dq_ahead(fl, id, now);
    q->gen++;
    if (at != RS_TIME_MAX)
        rs_sim_at(fl->net->sim, at, fl->ent, ev_dq, fl, ((uint64_t)q->gen << 32) | id);
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
    rs_time now = rs_sim_now(sim);
    if (q->ahead)
        dq_settle(fl, id, now, 0);
    q->due = RS_TIME_MAX;
    dq_advance(fl, id, now);
    uint64_t s0 = q->s;
    dq_fire(fl, id, q, now, 0);
    dq_cap_sync(fl, id);
    dq_schedule(fl, id, now, DQ_LOOK);
    if (q->s != s0 && q->b > 0 && q->s > 0 && dq_slope(fl, id, s0, q->b, now) != dq_slope(fl, id, q->s, q->b, now)) {
        /* Its backlog's slope changed, so did its bottleneck's queue: the
         * flows crossing that port look at it again (same rates, so no
         * solve; their next CNP may come sooner or later). A backlog at
         * PFC's bound has no slope, whatever s above d. */
        uint32_t l = rs_mmf_bottleneck(fl->mmf, id);
        const mmf_link *L = &fl->mmf->links[l];
        /* Advancing a flow to now leaves every queue at now as it is, so
         * each port's queue is computed once for the lot (dq_marking). */
        dq_stamp(fl);
        for (uint32_t j = 0; link_port(fl->net, l)->kind == RS_PORT_SWITCH && j < L->n; j++) {
            uint32_t g = L->fl[j];
            if (g != id && g < fl->capdq && fl->dq[g].on) {
                dq_advance(fl, g, now);
                dq_schedule(fl, g, now, DQ_LOOK);
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
        q->s = dq_send_rate(fl, t[i], q);
        q->bmax = dq_bmax(fl, t[i]);
        busy |= q->b > 0 || q->s > q->d;
    }
    /* Queues of the switch ports these flows cross, once each (none when
     * no flow here has or builds a backlog: the common lone flow). */
    for (size_t i = 0; !busy && i < n; i++)
        if (t[i] < fl->capdq && fl->dq[t[i]].on) {
            dq_cap_sync(fl, t[i]);
            dq_schedule(fl, t[i], now, DQ_QUIET);
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
        dq_schedule(fl, t[i], now, DQ_LOOK);
    }
    fl->qvalid = 0; /* events compute the queues afresh */
}

