/*
 * net_timeline.c - the network's timeline records (net.h: rs_net_timeline_start;
 * docs/timeline-format.md says what each record means).
 *
 * Nothing here is on the per-packet path. The packet path calls in only
 * where something rare happens, behind a test of net->tl that is false when
 * no timeline is set: a PFC frame is built (fabric.c pfc_frame), a packet is
 * dropped (rs_fabric_drop), a message completes (msg.c rs_msg_finish), a flow
 * is created or a retransmit timeout restarts one (transport.c, to wake the
 * sampler). Everything that grows with packets (link and queue samples,
 * ECN marks, CNPs) is read off the ports' own counters by one periodic
 * event per network, the sampler, so a hop costs the same with or without
 * a timeline.
 *
 * The sampler runs at every multiple of the interval while the network is
 * busy. Each tick scans the port array and skips a port in one comparison
 * when it sent nothing since the last tick and its queue is empty (the
 * bytes it had serialized at the last tick equal its tx_bytes counter).
 * It stops rescheduling when the network is idle (no packet alive and
 * every message done, or no other event pending), so it never keeps a run
 * alive; rs_net_tl_wake starts it again at the next multiple when traffic
 * can start again. At packet level a tick that finds every port quiet
 * goes on at the first multiple at or after the next event (next_tick):
 * the ticks between would write nothing (a split run decides it with
 * every process's ports and next event at the window's end).
 *
 * The sampler's events are the only change a timeline makes to a run: it
 * runs on an entity of its own, reads and never writes model state, so
 * every other event keeps its time and order and every result is the same
 * (rs_net_timeline_events counts the sampler's events).
 *
 * A run split over processes (docs/parallel.md, "Timeline"): every
 * process writes its own ports' records into a keyed part of the file
 * (tl_key), the sampler's entity is shared, and a tick's decision to go
 * on, which needs the whole network's idleness, is taken at the end of
 * the window that ends right after it (rs_net_tl_window_*).
 *
 * A tick scans every port (a few ns each) and writes what changed; the
 * packet path without a timeline does no more work than before it
 * existed (bench/README.md, "Measured design choices", has the costs).
 */
#include "backend.h"
#include "netint.h"

#include <stdlib.h>
#include <string.h>

/* Per port: what the last tick saw. */
typedef struct port_seen {
    uint64_t ser;    /* bytes serialized by the last tick (see serialized()) */
    uint64_t ecn;    /* p->ecn_marked at the last tick */
    uint64_t cnp;    /* p->cnp_sent at the last tick */
} port_seen;

struct rs_net_tl {
    rs_timeline *tl;       /* borrowed writer */
    rs_time interval;      /* 0: no sampler */
    rs_time t_prev;        /* time the ps[] values were taken */
    rs_time next_tick;     /* the pending tick, RS_TIME_MAX if none */
    uint64_t gen;          /* arg of the pending tick; older ticks are stale */
    uint64_t ecn_seen;     /* net->st.ecn_marked accounted for */
    uint64_t cnp_seen;     /* CNPs accounted for (sum of per-port deltas) */
    port_seen *ps;        /* [nports] */
    uint8_t *named;        /* [nports / 8]: port name record written */
    /* A backend of rates: ports that carried a flow since the last tick (it
     * touches a port when its rate sum rises above 0, a tick again while
     * it stays there), so a tick visits those instead of every port. A
     * gpt3-175b iteration on 16,384 GPUs (~100k ports, 10 us ticks) spent
     * 82% of its time scanning idle ports. */
    uint32_t *touched;     /* [nports], NULL at packet level */
    uint32_t ntouched;
    uint64_t *is_touched;  /* [nports / 64 + 1] bits */
    /* A split run (split_*; docs/parallel.md): a tick's decision to go on
     * waits for the window's end, where every process tells whether its
     * part is idle; a wake from a process's own event waits there too. */
    int split_pending;     /* a tick ran in this window, its decision waits */
    rs_time split_t;       /* that tick's time */
    uint64_t split_a, split_b; /* this process: no packet and its messages done; nothing pending */
    rs_time split_wake;    /* earliest wake from an own event while stopped */
    rs_time quiet_since;   /* the tick that skipped a quiet stretch (next_tick); RS_TIME_MAX: none */
    int split_quiet;       /* a split run: this process's ports were all quiet at the last tick */
    /* What the keyer gives the records being written (tl_key). */
    uint32_t scan_pass, scan_port; /* a scan's pass and port + 1; 0: not scanning */
    int scan_final;        /* the scan of rs_net_timeline_stop, after every event */
};

static void ev_tick(rs_sim *sim, void *obj, uint64_t gen);

static uint64_t carried(const rs_net *net, uint32_t i, rs_time now, uint64_t *bps)
{
    return net->be->port_bytes(net, i, now, bps);
}

/* Name record for a port, once per port per timeline. */
static void name_port(rs_net *net, rs_net_tl *s, uint32_t port)
{
    uint8_t bit = (uint8_t)(1u << (port & 7));
    if (s->named[port >> 3] & bit)
        return;
    s->named[port >> 3] |= bit;
    char name[48];
    rs_topo_port_name(net, port, name, sizeof name);
    rs_timeline_name(s->tl, RS_TL_NS_PORT, port, name);
}

/* The sampler has something to write. */
static int ticking(const rs_net_tl *s)
{
    return s->interval && (rs_timeline_wants(s->tl, RS_TL_SAMPLE) || rs_timeline_wants(s->tl, RS_TL_ECN));
}

/* Nothing in the network can move until someone sends again. */
static int idle(rs_net *net)
{
    return (rs_pool_live(&net->pkts) == 0 && net->st.msgs_done == net->st.msgs) ||
           rs_sim_pending(net->sim) == 0;
}

static int split(const rs_net *net) { return rs_part_ranks(net) > 1; }

/* A split run: what this process knows of idle() (its frames shipped but
 * not yet handed over count as live and pending). */
static void split_snapshot(rs_net *net, rs_net_tl *s, rs_time now)
{
    size_t shipped = rs_part_shipped(net);
    s->split_pending = 1;
    s->split_t = now;
    s->split_a = rs_pool_live(&net->pkts) == 0 && shipped == 0 && net->st.msgs_done == net->msgs_mine;
    s->split_b = rs_sim_pending(net->sim) == 0 && shipped == 0;
}

static void schedule(rs_net *net, rs_net_tl *s, rs_time t)
{
    s->next_tick = t;
    s->gen = ++net->tl_gen;
    rs_sim_at(net->sim, t, net->ent_tl, ev_tick, net, s->gen);
}

void rs_net_tl_touch(rs_net *net, uint32_t port)
{
    rs_net_tl *s = net->tl;
    uint64_t bit = 1ull << (port & 63);
    if (!s->touched || (s->is_touched[port >> 6] & bit))
        return;
    s->is_touched[port >> 6] |= bit;
    s->touched[s->ntouched++] = port;
}

/* The touched ports in port order, and their marks cleared: sorted when
 * few, else read off the bitmap (a word per 64 ports) when that is
 * cheaper than sorting. */
static void touched_in_order(rs_net *net, rs_net_tl *s)
{
    uint32_t n = s->ntouched, words = net->nports / 64 + 1, lg = 1;
    while ((1u << lg) < n)
        lg++;
    if ((uint64_t)n * lg < words) {
        qsort(s->touched, n, sizeof *s->touched, rs_cmp_u32);
        for (uint32_t j = 0; j < n; j++)
            s->is_touched[s->touched[j] >> 6] = 0;
        return;
    }
    uint32_t k = 0;
    for (uint32_t w = 0; w < words && k < n; w++) {
        uint64_t b = s->is_touched[w];
        s->is_touched[w] = 0;
        while (b) {
            s->touched[k++] = w * 64 + (uint32_t)__builtin_ctzll(b);
            b &= b - 1;
        }
    }
}

/* One pass over the ports at `now`: samples (if `samples`) and the ECN
 * marks and CNPs since the last pass. At flow level only the ports that
 * carried a flow since the last pass, in port order (the others carried
 * nothing and have no queue), their bytes integrated from their flows'
 * rates (the backend's port_bytes): utilisation from rates, not lumps of a
 * whole flow when it ends. */
static int scan(rs_net *net, rs_net_tl *s, rs_time now, int samples)
{
    int active = 0; /* a port of this process sent, queued or is sending */
    rs_timeline *tl = s->tl;
    int want_s = samples && rs_timeline_wants(tl, RS_TL_SAMPLE);
    int want_e = rs_timeline_wants(tl, RS_TL_ECN);
    /* Marks are counted on enqueue at the port and in the total together;
     * CNPs per port when transmitted, in the total when queued: look at the
     * ports' counters only while some are unaccounted for. */
    int ecn_new = want_e && net->st.ecn_marked != s->ecn_seen;
    int cnp_new = want_e && net->st.cnps_sent != s->cnp_seen;
    double dt_bits = (double)(now - s->t_prev) / (double)RS_PS_PER_S / 8.0; /* s / 8 */
    uint64_t ecn_sum = 0;
    uint32_t nvisit = net->nports;
    if (s->touched) {
        touched_in_order(net, s);
        nvisit = s->ntouched;
        s->ntouched = 0; /* ports still carrying are touched again below, at k <= j */
    }
    for (uint32_t j = 0; j < nvisit; j++) {
        uint32_t i = s->touched ? s->touched[j] : j;
        if (RS_UNLIKELY(split(net)) && !rs_part_owns_port(net, i))
            continue; /* its process samples it */
        const rs_port *p = &net->ports[i];
        port_seen *ps = &s->ps[i];
        if (!net->be->rates && p->tx_bytes == ps->ser && p->qbytes == 0)
            continue; /* sent nothing since the last tick, nothing queued */
        active = 1;
        s->scan_port = i + 1;
        uint64_t bps, ser = carried(net, i, now, &bps);
        if (bps)
            rs_net_tl_touch(net, i); /* flow level: still carrying at the next tick */
        if (net->be->rates && ser == ps->ser)
            continue;
        if (want_s) {
            double util = 0;
            if (dt_bits > 0 && p->rate_bps)
                util = (double)(ser - ps->ser) / ((double)p->rate_bps * dt_bits);
            if (util > 1)
                util = 1; /* a byte of rounding in serialized() */
            name_port(net, s, i);
            rs_timeline_sample_rec r = { now, i, ser, p->qbytes, util };
            rs_timeline_sample(tl, &r);
        }
        ps->ser = ser;
        if (ecn_new && p->ecn_marked != ps->ecn) {
            uint64_t d = p->ecn_marked - ps->ecn;
            ecn_sum += d;
            ps->ecn = p->ecn_marked;
            name_port(net, s, i);
            rs_timeline_ecn_rec r = { now, i, RS_TL_ECN_MARK, d };
            rs_timeline_ecn(tl, &r);
        }
        if (cnp_new && p->kind == RS_PORT_NIC && p->cnp_sent != ps->cnp) {
            /* (switch ports count the CNPs they forward too) */
            uint64_t d = p->cnp_sent - ps->cnp;
            s->cnp_seen += d;
            ps->cnp = p->cnp_sent;
            name_port(net, s, i);
            rs_timeline_ecn_rec r = { now, i, RS_TL_ECN_CNP, d };
            rs_timeline_ecn(tl, &r);
        }
    }
    if (ecn_new && s->ecn_seen + ecn_sum != net->st.ecn_marked) {
        /* A port marked and dropped everything it marked (a limit below
         * one frame): not worth a test per port above, so look again. */
        s->scan_pass = 1;
        for (uint32_t i = 0; i < net->nports; i++) {
            if (RS_UNLIKELY(split(net)) && !rs_part_owns_port(net, i))
                continue;
            const rs_port *p = &net->ports[i];
            port_seen *ps = &s->ps[i];
            if (p->ecn_marked == ps->ecn)
                continue;
            s->scan_port = i + 1;
            uint64_t d = p->ecn_marked - ps->ecn;
            ps->ecn = p->ecn_marked;
            name_port(net, s, i);
            rs_timeline_ecn_rec r = { now, i, RS_TL_ECN_MARK, d };
            rs_timeline_ecn(tl, &r);
        }
    }
    if (ecn_new)
        s->ecn_seen = net->st.ecn_marked;
    s->t_prev = now;
    s->scan_pass = s->scan_port = 0;
    return active;
}

/* Quiet since the tick at `last`: the first tick at or after t (a later
 * multiple of the interval than `last`), t_prev as the ticks skipped
 * would have left it. */
static rs_time skip_to(rs_net_tl *s, rs_time last, rs_time t)
{
    rs_time up = (t + s->interval - 1) / s->interval * s->interval;
    if (up <= last)
        up = last + s->interval;
    s->t_prev = up - s->interval;
    s->quiet_since = last;
    return up;
}

/* The tick after one at `now` whose scan found every port quiet (active
 * 0: nothing sent since the last tick, nothing queued, no frame on a
 * wire), t the next event. At packet level nothing moves until then, so
 * every tick before it would find the same and write nothing: the next is
 * the first multiple of the interval at or after it (at equal times the
 * sampler runs last), and t_prev is where those ticks would have left it.
 * A retransmit timeout's seconds of silence (docs/systems.md) then cost
 * one tick, not one per interval. At flow level flows move without
 * events: every interval. A split run decides at the window's end, with
 * every process's quiet and next event (rs_net_tl_window_end). */
static rs_time next_tick(rs_net *net, rs_net_tl *s, rs_time now, int active, rs_time t)
{
    rs_time next = now + s->interval;
    s->quiet_since = RS_TIME_MAX;
    if (active || net->be->rates || t == RS_TIME_MAX || t <= next)
        return next;
    return skip_to(s, now, t);
}

static void ev_tick(rs_sim *sim, void *obj, uint64_t gen)
{
    rs_net *net = obj;
    rs_net_tl *s = net->tl;
    net->tl_events++;
    if (!s || gen != s->gen)
        return; /* the timeline was stopped (and maybe started again) */
    s->next_tick = RS_TIME_MAX;
    rs_time now = rs_sim_now(sim);
    int active = scan(net, s, now, 1);
    if (RS_UNLIKELY(split(net))) {
        s->split_quiet = !active;
        split_snapshot(net, s, now); /* decided at the window's end: rs_net_tl_window_end */
    } else if (!idle(net) && ticking(s)) {
        schedule(net, s, next_tick(net, s, now, active, rs_sim_next_time(net->sim)));
    }
}

static void wake_at(rs_net *net, rs_net_tl *s, rs_time now)
{
    rs_time next = (now / s->interval + 1) * s->interval;
    /* Nothing was sent between the last tick and now (the network was
     * idle), so the first interval's utilisation is over a whole one. */
    if (s->t_prev < next - s->interval)
        s->t_prev = next - s->interval;
    schedule(net, s, next);
}

void rs_net_tl_wake(rs_net *net)
{
    rs_net_tl *s = net->tl;
    rs_time now = rs_sim_now(net->sim);
    if (s->quiet_since != RS_TIME_MAX && s->next_tick != RS_TIME_MAX) {
        /* A quiet stretch skipped to its next event, and traffic starts
         * before it (a sender between two rs_net_run calls): the tick the
         * interval would have given, at or after now. */
        rs_time t = s->next_tick, up = skip_to(s, s->quiet_since, now);
        if (up < t)
            schedule(net, s, up);
        else
            s->t_prev = t - s->interval;
        return;
    }
    if (s->next_tick != RS_TIME_MAX || s->split_pending || !ticking(s))
        return;
    if (RS_UNLIKELY(split(net)) && !rs_sim_running_shared(net->sim)) {
        /* One process's event (a retransmission): the others learn of it
         * at the window's end, before the tick it asks for (window_cap). */
        if (now < s->split_wake)
            s->split_wake = now;
        return;
    }
    wake_at(net, s, now);
}

/* -- a split run (split.c's windows) ---------------------------------------- */

rs_time rs_net_tl_window_cap(const rs_net *net, rs_time start)
{
    const rs_net_tl *s = net->tl;
    if (!s || !ticking(s))
        return RS_TIME_MAX;
    if (s->next_tick != RS_TIME_MAX)
        return s->next_tick + 1; /* the tick is its instant's last event: decide right after it */
    return (start / s->interval + 1) * s->interval; /* stopped: no tick a wake asks for is passed */
}

void rs_net_tl_window_vals(const rs_net *net, uint64_t v[RS_NET_TL_NV])
{
    const rs_net_tl *s = net->tl;
    v[0] = !s || !s->split_pending || s->split_a;
    v[1] = !s || !s->split_pending || s->split_b;
    v[2] = s ? s->split_wake : RS_TIME_MAX;
    v[3] = !s || !s->split_pending || s->split_quiet;
}

rs_time rs_net_tl_window_end(rs_net *net, const uint64_t v[RS_NET_TL_NV], rs_time next)
{
    rs_net_tl *s = net->tl;
    if (!s)
        return RS_TIME_MAX;
    if (s->split_pending) {
        s->split_pending = 0;
        /* idle(): no packet anywhere and every message done, or no event
         * anywhere; v[] are the minimums over the processes. The window
         * ended just after the tick, so `next` (any process's next event
         * or frame in flight between them) is what the serial run's
         * rs_sim_next_time is after it, and every port quiet is v[3]. */
        if (!(v[0] || v[1]) && ticking(s))
            schedule(net, s, next_tick(net, s, s->split_t, !v[3], next));
    }
    s->split_wake = RS_TIME_MAX;
    if (v[2] != RS_TIME_MAX && s->next_tick == RS_TIME_MAX && ticking(s))
        wake_at(net, s, v[2]);
    return s->next_tick;
}

/* The keyer of a split run's timeline part (rs_timeline_create_part). */
static void tl_key(void *ctx, uint64_t key[RS_TL_KEY_WORDS])
{
    rs_net *net = ctx;
    const rs_net_tl *s = net->tl;
    rs_time t;
    uint64_t k;
    uint32_t step, idx;
    rs_part_key(net, &t, &k, &step, &idx);
    int scanning = s && s->scan_port;
    key[0] = s && s->scan_final ? rs_sim_now(net->sim) : t;
    key[1] = s && s->scan_final ? UINT64_MAX : k;
    key[2] = scanning ? s->scan_pass : step;
    key[3] = scanning ? s->scan_port : 0;
    key[4] = idx;
}

int rs_net_timeline_part(rs_net *net, const char *path, uint32_t enabled, rs_timeline **out, rs_err *err)
{
    return rs_timeline_create_part(path, enabled, tl_key, net, out, err);
}

void rs_net_tl_pfc(rs_net *net, uint32_t port, uint8_t xoff, uint8_t xon)
{
    rs_net_tl *s = net->tl;
    if (!rs_timeline_wants(s->tl, RS_TL_PFC))
        return;
    name_port(net, s, port);
    rs_time now = rs_sim_now(net->sim);
    if (xoff) {
        rs_timeline_pfc_rec r = { now, port, xoff, 1 };
        rs_timeline_pfc(s->tl, &r);
    }
    if (xon) {
        rs_timeline_pfc_rec r = { now, port, xon, 0 };
        rs_timeline_pfc(s->tl, &r);
    }
}

void rs_net_tl_drop(rs_net *net, uint32_t port, const rs_pkt *pkt, unsigned reason)
{
    static const char *const why[] = { "buffer", "no-route", "link-down", "failover", "loss" };
    rs_net_tl *s = net->tl;
    if (!rs_timeline_wants(s->tl, RS_TL_DROP))
        return;
    name_port(net, s, port);
    rs_timeline_drop_rec r = { rs_sim_now(net->sim), port, 1, pkt->wire,
                               reason < sizeof why / sizeof why[0] ? why[reason] : "other" };
    rs_timeline_drop(s->tl, &r);
}

void rs_net_tl_flow(rs_net *net, const rs_net_msg_time *t)
{
    rs_net_tl *s = net->tl;
    rs_timeline_flow_rec r = { t->src, t->dst, t->bytes, t->start, t->end };
    rs_timeline_flow(s->tl, &r); /* a no-op when flows are off */
}

/* fault.c: a fault applied (kind "link-down", ...) or routes recomputed
 * (kind "routes"). */
void rs_net_tl_fault(rs_net *net, const char *target, const char *kind, const char *detail)
{
    /* A split run applies a fault in every process, from a shared event:
     * rank 0's part has its record. */
    if (RS_UNLIKELY(split(net)) && rs_sim_running_shared(net->sim) && rs_part_rank(net) != 0)
        return;
    rs_timeline_fault_rec r = { rs_sim_now(net->sim), target, kind, detail };
    rs_timeline_fault(net->tl->tl, &r);
}

int rs_net_timeline_start(rs_net *net, rs_timeline *tl, rs_time sample_interval_ps, rs_err *err)
{
    if (!net || !tl)
        return rs_err_set(err, RS_EINVAL, "timeline: a network and a timeline writer are required");
    if (net->tl)
        return rs_err_set(err, RS_EINVAL, "timeline: the network already writes a timeline; stop it first");
    rs_net_tl *s = calloc(1, sizeof *s);
    if (s) {
        s->ps = calloc(net->nports, sizeof *s->ps);
        s->named = calloc((size_t)net->nports / 8 + 1, 1);
    }
    if (!s || !s->ps || !s->named)
        goto nomem;
    if (net->be->rates && (!(s->touched = malloc(((size_t)net->nports + 1) * sizeof *s->touched)) ||
                       !(s->is_touched = calloc((size_t)net->nports / 64 + 1, sizeof *s->is_touched))))
        goto nomem;
    if (!net->ent_tl) {
        /* The sampler's own entity, after every other: at equal times it
         * runs last, and nobody else's event order changes. (Entity 0 is
         * port 0's, so 0 here means "none yet".) */
        uint32_t e;
        int rc = rs_sim_entities_add(net->sim, 1, &e);
        if (rc != RS_OK) {
            free(s->ps);
            free(s->named);
            free(s);
            return rs_err_set(err, rc, "timeline: no entity left for the sampler");
        }
        net->ent_tl = e;
    }
    rs_time now = rs_sim_now(net->sim);
    s->tl = tl;
    s->interval = sample_interval_ps;
    s->t_prev = now;
    s->next_tick = RS_TIME_MAX;
    s->split_wake = RS_TIME_MAX;
    s->quiet_since = RS_TIME_MAX;
    s->ecn_seen = net->st.ecn_marked;
    s->cnp_seen = net->st.cnps_sent;
    net->tl = s;
    for (uint32_t i = 0; i < net->nports; i++) {
        if (!rs_part_owns_port(net, i))
            continue; /* its process samples it */
        const rs_port *p = &net->ports[i];
        uint64_t bps;
        s->ps[i] = (port_seen){ carried(net, i, now, &bps), p->ecn_marked, p->cnp_sent };
        if (bps)
            rs_net_tl_touch(net, i);
    }
    if (!idle(net))
        rs_net_tl_wake(net);
    return RS_OK;
nomem:
    if (s) {
        free(s->ps);
        free(s->named);
        free(s->touched);
        free(s->is_touched);
        free(s);
    }
    return rs_err_set(err, RS_ENOMEM, "timeline: out of memory for %u ports", net->nports);
}

void rs_net_timeline_stop(rs_net *net)
{
    rs_net_tl *s = net ? net->tl : NULL;
    if (!s)
        return;
    /* ECN marks and CNPs since the last tick, so that the records add up
     * to the counters. A pending tick becomes stale (ev_tick). */
    s->scan_final = 1;
    scan(net, s, rs_sim_now(net->sim), 0);
    rs_net_tl_free(net);
}

void rs_net_tl_free(rs_net *net)
{
    rs_net_tl *s = net->tl;
    if (!s)
        return;
    net->tl = NULL;
    free(s->ps);
    free(s->named);
    free(s->touched);
    free(s->is_touched);
    free(s);
}

uint64_t rs_net_timeline_events(const rs_net *net) { return net->tl_events; }
