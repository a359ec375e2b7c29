/*
 * fluid.c - the flow-level backend (backend.h): carries rs_net's
 * transport flows as fluid flows (rs_fluid) at the max-min fair rates of
 * the solver (mmf.c).
 *
 * Backend. A transport flow of W wire bytes (the packet level's exact
 * frame bytes: headers, RETH, padding, minimum frames) crosses the egress
 * ports of its packet-level path; each port is a link of its line rate.
 * The flow holds its links from its start until its W bytes have flowed at
 * its (changing) rate, then leaves them and completes `lat` later: the
 * propagation and pipeline latency of every hop plus the serialisation of
 * its largest (first) frame on every hop after the first. On a path of
 * equal rates that is exactly when a lone flow's last packet arrives at
 * packet level: store-and-forward frames are a flow shop with equal times
 * per stage, whose makespan is sum(frames) + (hops - 1) * max(frame). Remaining work is kept as
 * bits x 10^12 in 128 bits, so progress (rate x dt) and the finish time
 * (ceil(rem / rate)) are integer and a lone flow finishes at
 * lat + rs_ser_time(W, rate) to the picosecond.
 *
 * Relays. On rail-only without faults, a relayed message (PXN: across the
 * source's HB domain to the GPU on the destination's rail, then that rail)
 * is one flow over both legs' ports (relay.c, rs_relay_start_whole) instead of
 * the packet level's chunk pipeline: the network leg carries the chunks
 * back to back, each posted as the previous one left the NIC, while the
 * HB leg runs ahead at NVLink rate. So the flow's wire bytes are the
 * chunks' network frames, and its latency is chunk 0's HB crossing plus
 * the last chunk's network latency (fluid_path.c, rs_fluid_relay_setup). Alone it completes when
 * the chunk pipeline at flow level does, within a picosecond per chunk;
 * sharing a link, it is one flow where the pipeline's chunks are flows
 * of their own. A quarter of
 * the events of the pipeline (docs/fidelity.md). A failover restarts
 * what it had not carried as a chunk pipeline over a live rail (failover.c);
 * rs_net_config.relay_pipeline keeps the pipeline (tests compare).
 *
 * A flow that shares its bottleneck leaves the fluid early by one largest
 * frame per flow that joined the link after it, as the packet level's
 * round robin sends their frames after its last one (solve_now,
 * "round-robin tails").
 *
 * DCQCN (transport.cc=dcqcn, ECN on, RoCE): each network flow follows the
 * reaction point's law of transport.c; its rate is capped at DCQCN's Rc
 * unless a backlog it built in the network keeps its bottleneck busy, and
 * CNPs come while a switch port's backlog is above Kmin (the DCQCN
 * section below). Otherwise the rates are plain max-min.
 *
 * Events: one per flow start batch (a solve), one per finish batch, one per
 * completion (and with DCQCN one per flow's next CNP, rate-timer or
 * backlog event). Starts and finishes at one instant are solved once: the
 * backend's entity is the last one, and the engine runs equal-time events
 * in entity order, so its solve event runs after every callback of that
 * instant (which may start more flows). The finish times sit in a binary
 * heap ordered by (time, transport flow serial); one engine event waits for
 * its minimum (later ones may be stale and then do nothing).
 */
#include "fluid_int.h"

#include "backend.h"
#include "pool.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void ev_finish(rs_sim *sim, void *obj, uint64_t arg);
static void ev_solve(rs_sim *sim, void *obj, uint64_t arg);
static void ev_complete(rs_sim *sim, void *obj, uint64_t arg);
static void ev_flow_left(rs_sim *sim, void *obj, uint64_t fid);
static void ev_watch(rs_sim *sim, void *obj, uint64_t arg);

int rs_fluid_create(rs_net *net)
{
    rs_fluid *fl = calloc(1, sizeof *fl);
    uint64_t *cap = malloc(((size_t)net->nports + 1) * sizeof *cap);
    int rc = RS_ENOMEM;
    if (!fl || !cap)
        goto fail;
    fl->net = net;
    if (!(fl->port = calloc((size_t)net->nports + 1, sizeof *fl->port)))
        goto fail;
    fl->armed = RS_TIME_MAX;
    fl->resume_armed = RS_TIME_MAX;
    for (uint32_t i = 0; i < net->nports; i++)
        cap[i] = net->ports[i].rate_bps;
    if ((rc = rs_mmf_create(net->nports, cap, &fl->mmf)) != RS_OK)
        goto fail;
    if ((rc = rs_sim_entities_add(net->sim, 1, &fl->ent)) != RS_OK)
        goto fail;
    if (net->cfg.cc == RS_CC_DCQCN && net->cfg.ecn && net->cfg.transport == RS_TRANSPORT_ROCE) {
        fl->qlen = malloc(((size_t)net->nports + 1) * sizeof *fl->qlen);
        fl->qslope = malloc(((size_t)net->nports + 1) * sizeof *fl->qslope);
        fl->qstamp = calloc((size_t)net->nports + 1, sizeof *fl->qstamp);
        fl->capq = net->nports + 1;
        if (!fl->qlen || !fl->qslope || !fl->qstamp ||
            !(fl->dq = calloc(16, sizeof *fl->dq))) {
            rc = RS_ENOMEM;
            goto fail;
        }
        fl->capdq = 16;
        fl->dq_ahead = RS_FLUID_DQ_AHEAD;
    }
    free(cap);
    net->backend_state = fl;
    return RS_OK;
fail:
    free(cap);
    rs_fluid_destroy(fl);
    return rc;
}

void rs_fluid_destroy(rs_fluid *fl)
{
    if (!fl)
        return;
    rs_mmf_destroy(fl->mmf);
    rs_bundles_destroy(fl->bund);
    free(fl->port);
    free(fl->dq);
    free(fl->dqa);
    free(fl->qlen);
    free(fl->qslope);
    free(fl->qstamp);
    free(fl->rec);
    free(fl->of_flow);
    free(fl->heap);
    free(fl->batch);
    free(fl->ghead);
    free(fl->glist);
    free(fl->park);
    free(fl->tail);
    free(fl);
}






/* -- finish heap (solver ids, by finish time then transport flow serial) -- */

static inline int fless(const rs_fluid *fl, uint32_t a, uint32_t b)
{
    const fl_rec *x = &fl->rec[a], *y = &fl->rec[b];
    return x->finish < y->finish || (x->finish == y->finish && x->serial < y->serial);
}

static void fh_set(rs_fluid *fl, uint32_t i, uint32_t id)
{
    fl->heap[i] = id;
    fl->rec[id].hidx = i;
}

static void fh_up(rs_fluid *fl, uint32_t i)
{
    uint32_t id = fl->heap[i];
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (!fless(fl, id, fl->heap[p]))
            break;
        fh_set(fl, i, fl->heap[p]);
        i = p;
    }
    fh_set(fl, i, id);
}

static void fh_down(rs_fluid *fl, uint32_t i)
{
    uint32_t id = fl->heap[i], n = fl->nheap;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && fless(fl, fl->heap[c + 1], fl->heap[c]))
            c++;
        if (!fless(fl, fl->heap[c], id))
            break;
        fh_set(fl, i, fl->heap[c]);
        i = c;
    }
    fh_set(fl, i, id);
}

void rs_fluid_heap_remove(rs_fluid *fl, uint32_t id)
{
    uint32_t i = fl->rec[id].hidx, last = fl->heap[--fl->nheap];
    fl->rec[id].hidx = RS_NONE;
    if (i == fl->nheap)
        return;
    fh_set(fl, i, last);
    fh_up(fl, i);
    fh_down(fl, fl->rec[last].hidx);
}

/* One engine event at the earliest finish (earlier pending ones stay and
 * find nothing due). */
static void arm(rs_fluid *fl)
{
    if (!fl->nheap)
        return;
    rs_time t = fl->rec[fl->heap[0]].finish;
    if (t == RS_TIME_MAX || t >= fl->armed)
        return;
    fl->armed = t;
    rs_sim_at(fl->net->sim, t, fl->ent, ev_finish, fl, 0);
}

void rs_fluid_want_solve(rs_fluid *fl)
{
    if (fl->solve_pending)
        return;
    fl->solve_pending = 1;
    rs_sim_at(fl->net->sim, rs_sim_now(fl->net->sim), fl->ent, ev_solve, fl, 0);
}

/* Put transport flow fid into the fluid on path ports[0..h) with `rem`
 * wire bits x 10^12 to go; a solve follows at this instant. */
int rs_fluid_enter(rs_fluid *fl, uint32_t fid, const uint32_t *ports, uint32_t h, rs_time lat, uint64_t wire,
                   uint32_t mf, unsigned __int128 rem)
{
    rs_net *net = fl->net;
    uint32_t id;
    int rc = rs_mmf_add(fl->mmf, ports, h, &id);
    if (rc != RS_OK)
        return rc;
    if (RS_UNLIKELY(net->job_classes))
        rs_mmf_set_class(fl->mmf, id, net->flows[fid].prio); /* jobs' traffic classes: strict priority */
    if (rs_array_reserve32((void **)&fl->rec, &fl->caprec, id + 1, sizeof *fl->rec, 16) != RS_OK ||
        rs_array_reserve32((void **)&fl->heap, &fl->capheap, fl->nheap + 1, sizeof *fl->heap, 16) != RS_OK) {
        rs_mmf_remove(fl->mmf, id);
        return RS_ENOMEM;
    }
    fl_rec *r = &fl->rec[id];
    r->rem = rem;
    r->t0 = r->since = rs_sim_now(net->sim);
    r->finish = r->end = RS_TIME_MAX;
    r->lat = lat;
    r->max_frame = mf;
    r->rate = 0;
    r->wire = wire;
    r->serial = net->flows[fid].serial;
    r->flow = fid;
    r->counted = 0;
    fl->of_flow[fid] = id;
    fh_set(fl, fl->nheap++, id);
    fh_up(fl, fl->nheap - 1);
    rs_fluid_want_solve(fl);
    return RS_UNLIKELY(fl->dq != NULL) ? rs_fluid_dq_enter(fl, id) : RS_OK;
}

/* Flow f never completes (no route, or cut with an unreliable transport):
 * its data frames count as sent and dropped. */
void rs_fluid_count_lost(rs_net *net, const rs_flow *f)
{
    net->st.pkts_sent += f->npkts;
    net->st.data_pkts += f->npkts;
    net->st.pkts_dropped += f->npkts;
}

int rs_fluid_path_up(const rs_net *net, const uint32_t *ports, uint32_t h, uint32_t *dead)
{
    for (uint32_t i = 0; i < h; i++)
        if (!net->ports[ports[i]].up) {
            *dead = ports[i];
            return 0;
        }
    return 1;
}


int rs_fluid_flow_start(rs_net *net, uint32_t fid)
{
    rs_fluid *fl = fluid_of(net);
    uint32_t ports[RS_MMF_MAX_HOPS], h, mf, dead = RS_NONE;
    rs_time lat;
    uint64_t wire;
    rs_flow *f = &net->flows[fid];
    if (rs_array_reserve32((void **)&fl->of_flow, &fl->capof, fid + 1, sizeof *fl->of_flow, 16) != RS_OK)
        return RS_ENOMEM;
    fl->of_flow[fid] = RS_NONE;
    int rc = rs_fluid_flow_setup(net, fid, ports, &h, &lat, &wire, &mf);
    if (RS_UNLIKELY(net->flt != NULL) &&
        (rc == RS_EUNREACH || (rc == RS_OK && !rs_fluid_path_up(net, ports, h, &dead)))) {
        /* Into a dead link (routes not yet recomputed) or no route: its
         * frames would be lost at packet level; it waits for a path. */
        if (rc == RS_EUNREACH)
            rs_fluid_flow_wire(f, net->ports[f->port].kind == RS_PORT_GPU_HB, &wire, &mf);
        return rs_fluid_park(fl, fid, (unsigned __int128)wire * 8u * RS_PS_PER_S, net->ports[f->port].rate_bps,
                    dead == RS_NONE ? NULL : &net->ports[dead]);
    }
    if (rc == RS_EUNREACH) {
        rs_fluid_count_lost(net, f); /* the packet level drops these at the switch with no route */
        return RS_OK;
    }
    if (rc != RS_OK)
        return rc;
    return rs_fluid_enter(fl, fid, ports, h, lat, wire, mf, (unsigned __int128)wire * 8u * RS_PS_PER_S);
}

/* Round-robin order on one bottleneck: joined first, then serial (a
 * total order: serials are unique). */
static inline int fin_before(const fin_ent *x, const fin_ent *y)
{
    if (x->since != y->since)
        return x->since < y->since;
    return x->serial < y->serial;
}

/* a[0..n) sorted by fin_before, tmp holding n more: runs of 8 by
 * insertion, then merged bottom-up. Returns a or tmp, whichever holds
 * the result. (qsort's callback and generic copies were 40% of a
 * 128-GPU all-to-all at flow level.) */
static fin_ent *fin_sort(fin_ent *a, fin_ent *tmp, uint32_t n)
{
    enum { RUN = 8 };
    for (uint32_t lo = 0; lo < n; lo += RUN) {
        uint32_t hi = n - lo > RUN ? lo + RUN : n;
        for (uint32_t i = lo + 1; i < hi; i++) {
            fin_ent e = a[i];
            uint32_t j = i;
            for (; j > lo && fin_before(&e, &a[j - 1]); j--)
                a[j] = a[j - 1];
            a[j] = e;
        }
    }
    fin_ent *src = a, *dst = tmp;
    for (uint32_t w = RUN; w < n; w = n - w > w ? 2 * w : n) {
        for (uint32_t lo = 0; lo < n; lo += n - lo > 2 * w ? 2 * w : n - lo) {
            uint32_t mid = n - lo > w ? lo + w : n, hi = n - lo > 2 * w ? lo + 2 * w : n;
            uint32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = fin_before(&src[j], &src[i]) ? src[j++] : src[i++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        fin_ent *t = src;
        src = dst;
        dst = t;
    }
    return src;
}

static void set_finish(rs_fluid *fl, fl_rec *r, rs_time fin)
{
    rs_time old = r->finish;
    r->finish = fin;
    if (fin < old)
        fh_up(fl, r->hidx);
    else if (fin > old)
        fh_down(fl, r->hidx);
}

/* A flow's rate went from 0 to above 0 (up = 1) or back. */
/* Flow id's rate goes from `from` to `to` at now: its ports' integrals
 * move on to now and their rate sums change. A port that starts carrying
 * is touched for the timeline's sampler (net_timeline.c keeps it touched while
 * its sum is above 0). */
void rs_fluid_port_rates(rs_fluid *fl, uint32_t id, uint64_t from, uint64_t to, rs_time now)
{
    if (from == to)
        return;
    const mmf_flow *mf = &fl->mmf->flows[id];
    for (uint32_t k = 0; k < mf->nhops; k++) {
        /* A bundle's rate spreads evenly over its members (the first ones
         * take the remainder). */
        uint32_t n;
        const uint32_t *pl = link_ports(fl->net, &mf->link[k], &n);
        for (uint32_t i = 0; i < n; i++) {
            fl_port *p = &fl->port[pl[i]];
            uint64_t f_i = from / n + (i < from % n), t_i = to / n + (i < to % n);
            p->acc += (unsigned __int128)p->sum * (now - p->t);
            p->t = now;
            p->sum = p->sum - f_i + t_i;
            if (RS_UNLIKELY(fl->net->tl != NULL) && p->sum)
                rs_net_tl_touch(fl->net, pl[i]);
        }
    }
}

uint64_t rs_fluid_port_bytes(const rs_net *net, uint32_t port, rs_time now, uint64_t *bps)
{
    const fl_port *p = &fluid_of(net)->port[port];
    *bps = p->sum;
    unsigned __int128 a = p->acc + (unsigned __int128)p->sum * (now - p->t);
    /* a / (8 x 10^12) = (a / 2^15) / 5^12: in 64 bits below 2^79 (400 Gb/s
     * for 1.5 s), which spares a 128-bit division per sample. */
    if ((a >> 79) == 0)
        return (uint64_t)(a >> 15) / 244140625u;
    return (uint64_t)(a / (8u * (unsigned __int128)RS_PS_PER_S));
}

void rs_fluid_moving(rs_fluid *fl, int up, rs_time now)
{
    if (up) {
        fl->nmoving++;
    } else if (--fl->nmoving == 0) {
        fl->still_since = now;
    }
}

/* The fault watchdog at flow level: no retransmit timer fires here, so
 * when every flow still to deliver is stalled (parked, or at rate 0) an
 * event looks again faults.watchdog_us after the last one moved. */
void rs_fluid_watch(rs_fluid *fl)
{
    rs_net *net = fl->net;
    rs_time wd = rs_fault_watchdog_ps(net);
    if (fl->watch_armed || wd == 0 || fl->nmoving > 0 || fl->nheap + fl->npark == 0)
        return;
    rs_time now = rs_sim_now(net->sim), since = fl->still_since > now ? now : fl->still_since;
    fl->watch_armed = 1;
    rs_sim_at(net->sim, rs_time_add_sat(since, wd) > now ? rs_time_add_sat(since, wd) : now, fl->ent, ev_watch,
              fl, 0);
}

static void ev_watch(rs_sim *sim, void *obj, uint64_t arg)
{
    (void)arg;
    rs_fluid *fl = obj;
    rs_time now = rs_sim_now(sim);
    fl->watch_armed = 0;
    if (fl->nmoving > 0 || fl->nheap + fl->npark == 0)
        return;
    if (now - fl->still_since < rs_fault_watchdog_ps(fl->net)) {
        rs_fluid_watch(fl); /* something moved since it was armed */
        return;
    }
    rs_fault_watchdog_stop(fl->net, fl->still_since);
}

/* The round-robin groups' lists for a solve of n flows: a head per
 * solver link (RS_NONE between solves); glist's halves, a next per entry
 * and the links used. */
static int groups_reserve(rs_fluid *fl, uint32_t n)
{
    uint32_t links = fl->mmf->nlinks, old = fl->capghead;
    if (rs_array_reserve32((void **)&fl->ghead, &fl->capghead, links, sizeof *fl->ghead, 64) != RS_OK)
        return RS_ENOMEM;
    for (uint32_t i = old; i < fl->capghead; i++)
        fl->ghead[i] = RS_NONE;
    return rs_array_reserve32((void **)&fl->glist, &fl->capglist, 2 * (n + 1), sizeof *fl->glist, 64);
}

/* Solve the components touched since the last solve and move their flows'
 * end and finish times.
 *
 * Round-robin tails. k flows limited by one link are, at packet level,
 * served round robin (NIC, HB port) or first come first served (switch
 * port) one frame at a time, in the order they joined: a flow's last
 * frame is followed, in its round, by one frame of each flow that joined
 * after it, so it is through that many frame times before processor
 * sharing would end it. The fluid leaves such a flow the frames of the
 * flows after it (in (since, serial) order on its bottleneck) early and
 * hands the bytes it had left to them (hand_over): the link carries the
 * same bytes and the last of them ends at the same time.
 *
 * k flows that would end together then complete one frame apart instead
 * of at once; without that the link stayed idle for their whole latency
 * before a closed-loop sender (a collective's window) sent again, which
 * made a 128-GPU ring AllReduce 7% slower than packet level. And two flows
 * that started apart keep drifting apart: the one that joined first ends
 * a frame earlier than under processor sharing, so when each flow's
 * successor waits for it (a ring's channels, one piece per step) the gap
 * grows by a frame per step, as at packet level, until one's latency
 * overlaps the other's transmission. Ending only equal ends early kept the
 * two channels of an 8 MiB ring AllReduce over 32 GPUs one frame apart at
 * every step, each waiting out the latency: +25% (docs/fidelity.md).
 *
 * Known limit: a flow that joins mid-frame waits at packet level for the
 * rest of the frame on the wire (frames are not pre-empted); the fluid
 * gives it its share at once, so the earlier flow can end up to one frame
 * later than at packet level. Exact when the later one joins as a frame
 * ends, as a ring's two channels do (each piece goes on the arrival of
 * the last, plus the same reduction time: a whole number of frames
 * apart). */
static int solve_now(rs_fluid *fl)
{
    rs_time now = rs_sim_now(fl->net->sim);
    fl->solve_pending = 0;
    int rc = rs_mmf_solve(fl->mmf);
    if (rc != RS_OK)
        return rc;
    size_t n;
    const uint32_t *t = rs_mmf_touched(fl->mmf, &n);
    /* The batch's thirds: its entries, a group of them, fin_sort's
     * scratch. */
    if (rs_array_reserve32((void **)&fl->batch, &fl->capbatch, 3 * ((uint32_t)n + 1), sizeof *fl->batch, 16) !=
            RS_OK ||
        groups_reserve(fl, (uint32_t)n) != RS_OK)
        return RS_ENOMEM;
    uint32_t ng = 0;
    for (size_t i = 0; i < n; i++) {
        fl_rec *r = &fl->rec[t[i]];
        uint64_t rate = rs_mmf_rate(fl->mmf, t[i]);
        unsigned __int128 done = (unsigned __int128)r->rate * (now - r->t0);
        r->rem = done < r->rem ? r->rem - done : 0;
        r->t0 = now;
        if ((r->rate > 0) != (rate > 0))
            rs_fluid_moving(fl, rate > 0, now);
        rs_fluid_port_rates(fl, t[i], r->rate, rate, now);
        r->rate = rate;
        rs_time end = RS_TIME_MAX;
        if (rate) {
            unsigned __int128 d = (r->rem + rate - 1) / rate;
            end = d >= RS_TIME_MAX - now ? RS_TIME_MAX : now + (rs_time)d;
        }
        r->end = end;
        if (end != RS_TIME_MAX && n > 1)
            fl->batch[ng++] = (fin_ent){ rs_mmf_bottleneck(fl->mmf, t[i]), t[i], r->serial, r->since, end };
        else
            set_finish(fl, r, end);
    }
    /* Bottleneck by bottleneck: the entries grouped through a list per
     * link (sorting the whole batch by bottleneck first was most of a
     * solve), each group in its round robin's order, (since, serial). */
    uint32_t ngroups = 0, *gnext = fl->glist, *gused = fl->glist + n + 1;
    for (uint32_t i = 0; i < ng; i++) {
        uint32_t bl = fl->batch[i].bneck;
        if (fl->ghead[bl] == RS_NONE)
            gused[ngroups++] = bl;
        gnext[i] = fl->ghead[bl];
        fl->ghead[bl] = i;
    }
    fin_ent *grp = fl->batch + n + 1, *tmp = grp + n + 1;
    for (uint32_t k = 0; k < ngroups; k++) {
        uint32_t bl = gused[k], g = 0;
        for (uint32_t i = fl->ghead[bl]; i != RS_NONE; i = gnext[i])
            grp[g++] = fl->batch[i];
        fl->ghead[bl] = RS_NONE;
        const fin_ent *b = g > 1 ? fin_sort(grp, tmp, g) : grp;
        /* From the back of the round robin: `early` is the frames of the
         * flows after this one. */
        rs_time early = 0;
        for (uint32_t i = g; i-- > 0;) {
            const fin_ent *e = &b[i];
            fl_rec *r = &fl->rec[e->id];
            set_finish(fl, r, e->end - now > early ? e->end - early : now);
            early += link_frame_ser(fl->net, e->bneck, r->max_frame); /* a bundle is no port */
        }
    }
    if (RS_UNLIKELY(fl->dq != NULL))
        rs_fluid_dq_solved(fl, t, n, now);
    arm(fl);
    if (RS_UNLIKELY(fl->net->flt != NULL))
        rs_fluid_watch(fl);
    return RS_OK;
}

static void ev_solve(rs_sim *sim, void *obj, uint64_t arg)
{
    (void)arg;
    rs_fluid *fl = obj;
    int rc = solve_now(fl);
    if (rc != RS_OK)
        rs_sim_stop(sim, rc);
}

/* Flow id leaves the fluid before its end (a round-robin tail, solve_now):
 * the bytes it had left go, in equal parts, to the flows after it in its
 * bottleneck's round robin (same bottleneck, later (since, serial)) still
 * in the fluid. */
static void hand_over(rs_fluid *fl, uint32_t id, rs_time now)
{
    fl_rec *r = &fl->rec[id];
    unsigned __int128 done = (unsigned __int128)r->rate * (now - r->t0);
    unsigned __int128 left = done < r->rem ? r->rem - done : 0;
    if (left == 0)
        return;
    uint32_t b = rs_mmf_bottleneck(fl->mmf, id), m = 0;
    const mmf_link *L = &fl->mmf->links[b];
    unsigned __int128 sent = RS_UNLIKELY(fl->dq != NULL) ? rs_fluid_dq_in_flight(fl, id, now, left) : 0;
    for (int pass = 0; pass < 2; pass++) {
        uint32_t k = 0;
        for (uint32_t j = 0; j < L->n; j++) {
            uint32_t g = L->fl[j];
            fl_rec *q = &fl->rec[g];
            if (g == id || q->hidx == RS_NONE || rs_mmf_bottleneck(fl->mmf, g) != b ||
                q->since < r->since || (q->since == r->since && q->serial < r->serial))
                continue;
            if (pass == 0) {
                m++;
                continue;
            }
            if (RS_UNLIKELY(sent > 0))
                rs_fluid_dq_take_in_flight(fl, g, now, sent / m + (k == 0 ? sent % m : 0));
            unsigned __int128 dq = (unsigned __int128)q->rate * (now - q->t0);
            q->rem = (dq < q->rem ? q->rem - dq : 0) + left / m + (k++ == 0 ? left % m : 0);
            q->t0 = now;
        }
        if (m == 0)
            return;
    }
}

/* Faults: remember the path of flow r, leaving the fluid now, until it
 * completes. */
static int keep_tail(rs_fluid *fl, const fl_rec *r, const mmf_flow *mf, rs_time now)
{
    uint32_t old = fl->captail;
    if (rs_array_reserve32((void **)&fl->tail, &fl->captail, r->flow + 1, sizeof *fl->tail, 16) != RS_OK)
        return RS_ENOMEM;
    for (uint32_t i = old; i < fl->captail; i++)
        fl->tail[i].done_at = RS_TIME_MAX;
    fl_tail *t = &fl->tail[r->flow];
    memcpy(t->link, mf->link, sizeof t->link);
    t->nhops = mf->nhops;
    t->done_at = now + r->lat;
    t->rate = r->rate;
    t->wire = r->wire;
    t->max_frame = r->max_frame;
    return RS_OK;
}

fl_delivered rs_fluid_delivered(const rs_net *net, const rs_flow *f)
{
    fl_delivered d = { f->npkts, 0, 0, 0, f->bytes };
    if (f->relay_src != RS_NONE) {
        d.hb_frames = rs_chunked_frames(f->bytes, net->cfg.relay_chunk_bytes, net->cfg.hb_mtu);
        d.frames += d.hb_frames;
        d.hb = f->bytes;
        d.goodput += f->bytes;
    }
    if (net->ports[f->port].kind == RS_PORT_GPU_HB)
        d.hb += f->bytes;
    else
        d.nic += f->bytes;
    return d;
}

/* Estimated packet counters of flow f leaving the fluid over links
 * [0..h) with `wire` bytes: the data frames the packet level would send
 * (no ACKs, CNPs or PFC frames), on every hop; a relayed message's two HB
 * hops carry its HB chunks' frames, as its legs would. */
static void count_sent(rs_net *net, const rs_flow *f, const uint32_t *link, uint32_t h, uint64_t wire)
{
    fl_delivered d = rs_fluid_delivered(net, f);
    uint32_t hb_hops = f->relay_src != RS_NONE ? 2 : 0;
    for (uint32_t k = 0; k < h; k++) {
        int hb = k < hb_hops;
        uint64_t pk = hb ? d.hb_frames : f->npkts, by = hb ? f->bytes + d.hb_frames * RS_WIRE_HB : wire;
        /* A bundle's frames spread evenly over its members, as sprayed or
         * adaptively routed packets do. */
        uint32_t n;
        const uint32_t *pl = link_ports(net, &link[k], &n);
        for (uint32_t i = 0; i < n; i++) {
            net->ports[pl[i]].tx_pkts += pk / n + (i < pk % n);
            net->ports[pl[i]].tx_bytes += by / n + (i < by % n);
            if (RS_UNLIKELY(net->job_tx != NULL))
                rs_job_tx_add(net, pl[i], f->job, by / n + (i < by % n));
        }
        net->st.packet_hops += pk;
    }
    net->st.pkts_sent += d.frames;
    net->st.data_pkts += d.frames;
    net->st.pkts_delivered += d.frames;
    net->st.goodput_bytes += d.goodput;
    net->st.hb_bytes += d.hb;
    net->st.nic_bytes += d.nic;
}

/* Flows leaving the fluid now: they free their links (a solve follows at
 * this instant) and complete their latency later. */
static void ev_finish(rs_sim *sim, void *obj, uint64_t arg)
{
    (void)arg;
    rs_fluid *fl = obj;
    rs_net *net = fl->net;
    rs_time now = rs_sim_now(sim);
    if (fl->armed <= now)
        fl->armed = RS_TIME_MAX;
    int any = 0;
    while (fl->nheap && fl->rec[fl->heap[0]].finish <= now) {
        uint32_t id = fl->heap[0];
        fl_rec *r = &fl->rec[id];
        rs_fluid_heap_remove(fl, id);
        if (r->end > now)
            hand_over(fl, id, now);
        const rs_flow *f = &net->flows[r->flow];
        /* Estimated packet counters: the data frames the packet level would
         * send (no ACKs, CNPs or PFC frames), on every hop. */
        const mmf_flow *mf = &fl->mmf->flows[id];
        uint32_t h = mf->nhops;
        if (RS_UNLIKELY(net->flt != NULL) && keep_tail(fl, r, mf, now) != RS_OK) {
            rs_sim_stop(sim, RS_ENOMEM);
            return;
        }
        if (!r->counted)
            count_sent(net, f, mf->link, h, r->wire);
        fl->of_flow[r->flow] = RS_NONE;
        if (r->rate > 0)
            rs_fluid_moving(fl, 0, now);
        rs_fluid_port_rates(fl, id, r->rate, 0, now);
        rs_sim_at(sim, now + r->lat, fl->ent, ev_complete, net, r->flow);
        if (f->chunk != RS_NONE ? f->leg == 1 : net->msgs[f->msg].left != NULL)
            rs_sim_at(sim, now, fl->ent, ev_flow_left, net, r->flow); /* a relay's next chunk or message may go */
        rs_mmf_remove(fl->mmf, id);
        any = 1;
    }
    if (any)
        rs_fluid_want_solve(fl);
    arm(fl);
}

static void ev_flow_left(rs_sim *sim, void *obj, uint64_t fid)
{
    (void)sim;
    rs_msg_flow_left(obj, (uint32_t)fid);
}

static void ev_complete(rs_sim *sim, void *obj, uint64_t fid)
{
    rs_net *net = obj;
    rs_flow *f = &net->flows[fid];
    if (RS_UNLIKELY(net->flt != NULL)) {
        fl_tail *t = &fluid_of(net)->tail[fid];
        if (t->done_at != rs_sim_now(sim))
            return; /* taken back by a cable failure (rs_fluid_cable_changed) */
        t->done_at = RS_TIME_MAX;
    }
    f->snd_nxt = f->snd_una = f->rcv_nxt = f->max_sent = f->npkts;
    f->tx_done = f->rx_done = 1;
    net->st.last_activity = rs_sim_now(sim);
    if (RS_UNLIKELY(net->flt != NULL) && f->hit != RS_NONE)
        rs_fault_note_delivered(net, f); /* recovery time of the faults that hit it */
    rs_msg_flow_done(net, (uint32_t)fid);
    rs_msg_flow_acked(net, (uint32_t)fid); /* no ACKs at flow level: a relay slot frees on delivery */
    rs_flow_release(net, (uint32_t)fid); /* nothing refers to it any more */
}



/* Take solver flow id out of the fluid; *out gets its record with the
 * progress made until now. */
/* -- inspection -- */

int rs_fluid_flow_rate(const rs_net *net, uint32_t f, uint64_t *bps)
{
    const rs_fluid *fl = fluid_of(net);
    if (!fl || f >= fl->capof || f >= net->nflows || fl->of_flow[f] == RS_NONE)
        return RS_EINVAL;
    *bps = fl->rec[fl->of_flow[f]].rate;
    return RS_OK;
}

int rs_fluid_flow_dcqcn(rs_net *net, uint32_t f, double *rc, double *rt, double *alpha)
{
    rs_fluid *fl = fluid_of(net);
    if (!fl || !fl->dq || f >= fl->capof || f >= net->nflows || fl->of_flow[f] == RS_NONE)
        return RS_EINVAL;
    const dq_flow *q = &fl->dq[fl->of_flow[f]];
    if (!q->on)
        return RS_EINVAL;
    rs_fluid_dq_settle(fl, fl->of_flow[f], rs_sim_now(net->sim)); /* its events so far */
    *rc = q->cc.rc;
    *rt = q->cc.rt;
    *alpha = q->cc.alpha;
    return RS_OK;
}

int rs_fluid_check(rs_net *net)
{
    rs_fluid *fl = fluid_of(net);
    if (!fl)
        return RS_EINVAL;
    if (fl->solve_pending) {
        int rc = solve_now(fl);
        if (rc != RS_OK)
            return rc;
    }
    uint32_t n = rs_mmf_id_bound(fl->mmf);
    uint64_t *ref = malloc(((size_t)n + 1) * sizeof *ref);
    if (!ref)
        return RS_ENOMEM;
    int rc = rs_mmf_solve_full(fl->mmf, ref);
    int bad = 0;
    for (uint32_t i = 0; rc == RS_OK && i < n; i++)
        if (rs_mmf_live(fl->mmf, i) && (ref[i] != rs_mmf_rate(fl->mmf, i) || ref[i] != fl->rec[i].rate))
            bad++;
    free(ref);
    return rc != RS_OK ? rc : bad;
}


/* -- the backend (backend.h) ----------------------------------------------- */

static int flow_check(const rs_net *net, const rs_net_config *c, rs_err *err)
{
    if (c->loss_rate > 0.0)
        return rs_err_set(err, RS_EINVAL, "topology.loss_rate: random loss is not modelled at flow level; "
                          "expected 0 with fidelity=flow");
    if (net->tiers > RS_FLUID_MAX_TIERS)
        return rs_err_set(err, RS_EINVAL,
                          "fidelity: the flow level follows paths of at most %d links, and this %u-tier network's "
                          "are up to %u with a relay; expected fidelity=packet, or a larger topology.radix or "
                          "fewer GPUs for at most %d tiers", RS_MMF_MAX_HOPS, net->tiers, 2 * net->tiers + 2,
                          RS_FLUID_MAX_TIERS);
    return RS_OK;
}

static int flow_create(rs_net *net, rs_err *err)
{
    int rc = rs_fluid_create(net);
    if (rc != RS_OK)
        rs_err_set(err, rc, "fidelity: out of memory creating the flow-level network");
    return rc;
}

static void flow_destroy(rs_net *net)
{
    rs_fluid_destroy(fluid_of(net));
    net->backend_state = NULL;
}

static void flow_abandon(rs_net *net, uint32_t fid)
{
    rs_flow *f = &net->flows[fid];
    f->gone = f->tx_done = f->rx_done = 1; /* as at packet level; then its record is freed */
    rs_fluid_flow_abandon(net, fid);
}

static uint64_t flow_delivered(const rs_net *net, uint32_t fid)
{
    return rs_fluid_flow_delivered(net, fid);
}

const rs_backend rs_backend_flow = {
    .name = "flow",
    .check = flow_check,
    .create = flow_create,
    .destroy = flow_destroy,
    .flow_start = rs_fluid_flow_start,
    .flow_abandon = flow_abandon,
    .flow_delivered = flow_delivered,
    .cable_state_changed = rs_fluid_cable_changed,
    .cable_rate_changed = rs_fluid_cable_changed,
    .routes_changed = rs_fluid_routes_changed,
    .port_bytes = rs_fluid_port_bytes,
    .rates = 1,
    .whole_relays = 1,
    .streams = 1,
};
