/*
 * fluid_fault.c - faults at flow level (fluid_int.h; docs/fidelity.md,
 * "Faults at flow level"): a flow whose path goes down leaves the fluid
 * and is parked with what it had left to carry, charged to the fault;
 * parked flows retry when cables come back or routes change; a failover
 * takes a flow out for good (rs_fluid_flow_abandon), and what each flow
 * delivered in order is counted in frames, as the packet level's PSNs.
 */
#include "fluid_int.h"

#include "backend.h"

#include <stdlib.h>
#include <string.h>

static void ev_resume(rs_sim *sim, void *obj, uint64_t arg);

/* Park transport flow fid (not in the fluid) with rem to go; it was
 * pushing at `rate` when it stopped. `dead`: the down port its path
 * crossed (NULL: no route), whose fault it is charged to. An unreliable
 * flow is lost instead. */
int rs_fluid_park(rs_fluid *fl, uint32_t fid, unsigned __int128 rem, uint64_t rate, const rs_port *dead)
{
    rs_net *net = fl->net;
    if (!net->flows[fid].reliable) {
        /* transport.kind=ideal: no retransmission, what was lost stays
         * lost and the message never completes, as at packet level. */
        rs_fault_note_flow_hit(net, dead, fid);
        rs_fluid_count_lost(net, &net->flows[fid]);
        net->st.last_activity = rs_sim_now(net->sim);
        return RS_OK;
    }
    if (rs_array_reserve32((void **)&fl->park, &fl->cappark, fl->npark + 1, sizeof *fl->park, 16) != RS_OK)
        return RS_ENOMEM;
    fl->park[fl->npark++] = (fl_park){ rem, rs_sim_now(net->sim), RS_TIME_MAX, rate, fid, 0 };
    rs_fault_note_flow_hit(net, dead, fid);
    rs_fluid_watch(fl);
    return RS_OK;
}

/* Park flow fid, just taken out of the fluid as *r: a resent tail (its
 * frames counted already) parks as a tail again, so it is neither counted
 * twice nor resumed as if it had bytes left to send. */
static int repark(rs_fluid *fl, uint32_t fid, const fl_rec *r, uint64_t rate, const rs_port *dead)
{
    uint32_t n = fl->npark;
    int rc = rs_fluid_park(fl, fid, r->rem, rate, dead);
    if (rc == RS_OK && fl->npark > n && r->counted)
        fl->park[fl->npark - 1].tail = 1;
    return rc;
}

static void leave(rs_fluid *fl, uint32_t id, fl_rec *out)
{
    rs_time now = rs_sim_now(fl->net->sim);
    fl_rec r = fl->rec[id];
    unsigned __int128 done = (unsigned __int128)r.rate * (now - r.t0);
    r.rem = done < r.rem ? r.rem - done : 0;
    r.t0 = now;
    if (r.rate > 0)
        rs_fluid_moving(fl, 0, now);
    rs_fluid_port_rates(fl, id, r.rate, 0, now);
    rs_fluid_heap_remove(fl, id);
    rs_mmf_remove(fl->mmf, id);
    fl->of_flow[r.flow] = RS_NONE;
    rs_fluid_want_solve(fl);
    *out = r;
}

/* When parked flow p moves again, given a path of latency lat is back
 * now. A flow that was still sending when the path came back pays one
 * round trip: its first frame on the new path arrives out of order, the
 * receiver's NAK comes back and the sender goes back (go-back-N) to the
 * first lost frame. One that had pushed all its bytes into the dead link
 * meanwhile has nothing left to trigger a NAK: it resumes at its next
 * retransmit timeout, transport.rto_us after the cut or a multiple of it
 * (docs/fidelity.md, "Faults at flow level"). */
static rs_time resume_at(const rs_fluid *fl, const fl_park *p, rs_time now, rs_time lat)
{
    rs_time rto = fl->net->rto, dt = now - p->cut_at;
    if (rto == 0 || (!p->tail && p->rem > (unsigned __int128)p->rate * dt))
        return rs_time_add_sat(now, 2 * lat);
    rs_time k = dt / rto + (dt % rto != 0 || dt == 0);
    return k > (RS_TIME_MAX - p->cut_at) / rto ? RS_TIME_MAX : p->cut_at + k * rto;
}

/* Parked flows whose path is back (routes recomputed, a cable up, a
 * retransmit timeout due) go back into the fluid, in the order parked. */
static int retry_parked(rs_fluid *fl)
{
    rs_net *net = fl->net;
    rs_time now = rs_sim_now(net->sim), next = RS_TIME_MAX;
    uint32_t k = 0;
    int rc = RS_OK;
    for (uint32_t i = 0; i < fl->npark; i++) {
        fl_park p = fl->park[i];
        uint32_t ports[RS_MMF_MAX_HOPS], h, mf, dead;
        rs_time lat;
        uint64_t wire;
        int ok = rc == RS_OK && rs_fluid_flow_setup(net, p.flow, ports, &h, &lat, &wire, &mf) == RS_OK &&
                 rs_fluid_path_up(net, ports, h, &dead);
        if (!ok)
            p.go = RS_TIME_MAX; /* lost again: decided afresh when a path is back */
        else if (p.go == RS_TIME_MAX)
            p.go = resume_at(fl, &p, now, lat);
        rs_time at = p.go;
        if (ok && at <= now) {
            rc = rs_fluid_enter(fl, p.flow, ports, h, lat, wire, mf, p.rem);
            if (rc == RS_OK) {
                fl->rec[fl->of_flow[p.flow]].counted = p.tail;
                continue;
            }
        }
        if (at < next)
            next = at;
        fl->park[k++] = p;
    }
    fl->npark = k;
    if (next != RS_TIME_MAX && (fl->resume_armed <= now || next < fl->resume_armed)) {
        fl->resume_armed = next;
        rs_sim_at(net->sim, next, fl->ent, ev_resume, fl, 0);
    }
    rs_fluid_watch(fl);
    return rc;
}

static void ev_resume(rs_sim *sim, void *obj, uint64_t arg)
{
    (void)arg;
    rs_fluid *fl = obj;
    if (fl->resume_armed <= rs_sim_now(sim))
        fl->resume_armed = RS_TIME_MAX;
    int rc = retry_parked(fl);
    if (rc != RS_OK)
        rs_sim_stop(sim, rc);
}

int rs_fluid_cable_changed(rs_net *net, uint32_t port)
{
    rs_fluid *fl = fluid_of(net);
    const rs_port *p = &net->ports[port];
    const rs_port *q = &net->ports[p->peer_port];
    rs_mmf_set_cap(fl->mmf, port, p->up ? p->rate_bps : 0);
    rs_mmf_set_cap(fl->mmf, p->peer_port, q->up ? q->rate_bps : 0);
    rs_fluid_want_solve(fl);
    if (p->up)
        return retry_parked(fl);
    /* Flows crossing the cable stop where they are: their frames are lost
     * from now until a path is back. Ascending transport flow id (the
     * link's list order depends on past removals). */
    for (uint32_t fid = 0; fid < fl->capof && fid < net->nflows; fid++) {
        uint32_t id = fl->of_flow[fid];
        if (id == RS_NONE)
            continue;
        const mmf_flow *mf = &fl->mmf->flows[id];
        int hit = 0;
        for (uint32_t k = 0; k < mf->nhops; k++)
            hit |= mf->link[k] == port || mf->link[k] == p->peer_port;
        if (!hit)
            continue;
        fl_rec r;
        uint64_t rate = fl->rec[id].rate;
        leave(fl, id, &r);
        int rc = repark(fl, fid, &r, rate, p);
        if (rc != RS_OK)
            return rc;
    }
    /* Flows whose last frames are in flight on it lose them: nothing comes
     * after them to draw a NAK, so they are resent (go-back-N from the
     * last acknowledged frame: about what is in flight, rate x the latency
     * left) after a retransmit timeout. */
    rs_time now = rs_sim_now(net->sim);
    for (uint32_t fid = 0; fid < fl->captail; fid++) {
        fl_tail *t = &fl->tail[fid];
        if (t->done_at == RS_TIME_MAX || t->done_at <= now)
            continue;
        /* Hit if its last frame has not yet crossed the cable: it left the
         * source lat before done_at and crosses hop k a prefix's latency
         * later. */
        int hit = 0;
        rs_time left = t->done_at - rs_fluid_path_lat(net, t->link, t->nhops, t->max_frame);
        for (uint32_t k = 0; k < t->nhops; k++)
            if (t->link[k] == port || t->link[k] == p->peer_port)
                hit |= now < left + rs_fluid_path_lat(net, t->link, k + 1, t->max_frame);
        if (!hit)
            continue;
        unsigned __int128 rem = (unsigned __int128)t->rate * (t->done_at - now),
                          all = (unsigned __int128)t->wire * 8u * RS_PS_PER_S;
        t->done_at = RS_TIME_MAX;
        const rs_flow *f = &net->flows[fid];
        if (!f->reliable) {
            /* Lost for good: take back what count_sent counted as delivered. */
            rs_fault_note_flow_hit(net, p, fid);
            fl_delivered d = rs_fluid_delivered(net, f);
            net->st.pkts_delivered -= d.frames;
            net->st.pkts_dropped += d.frames;
            net->st.goodput_bytes -= d.goodput;
            net->st.hb_bytes -= d.hb;
            net->st.nic_bytes -= d.nic;
            continue;
        }
        int rc = rs_fluid_park(fl, fid, rem < all ? rem : all, t->rate, p);
        if (rc != RS_OK)
            return rc;
        fl->park[fl->npark - 1].tail = 1;
    }
    return RS_OK;
}

/* Wire bytes of flow fid the fluid has carried by now, all of them but
 * what is still to send or lost: in the fluid, its progress; parked, all
 * but what it had left (or, a tail taken back, what was in flight); its
 * last frames in flight, all but them (its rate x the latency left). */
static uint64_t carried_wire(const rs_fluid *fl, uint32_t fid, uint64_t wire)
{
    rs_time now = rs_sim_now(fl->net->sim);
    unsigned __int128 all = (unsigned __int128)wire * 8u * RS_PS_PER_S, rem = all;
    uint32_t id = fid < fl->capof ? fl->of_flow[fid] : RS_NONE;
    if (id != RS_NONE) {
        const fl_rec *r = &fl->rec[id];
        unsigned __int128 done = (unsigned __int128)r->rate * (now - r->t0);
        rem = done < r->rem ? r->rem - done : 0;
    } else if (fid < fl->captail && fl->tail[fid].done_at != RS_TIME_MAX && fl->tail[fid].done_at > now) {
        rem = (unsigned __int128)fl->tail[fid].rate * (fl->tail[fid].done_at - now);
    } else {
        for (uint32_t i = 0; i < fl->npark; i++)
            if (fl->park[i].flow == fid)
                rem = fl->park[i].rem;
    }
    return (uint64_t)((all - (rem < all ? rem : all)) / (8u * (unsigned __int128)RS_PS_PER_S));
}

uint32_t rs_fluid_flow_delivered(const rs_net *net, uint32_t fid)
{
    const rs_flow *f = &net->flows[fid];
    if (f->port >= net->nports || net->ports[f->port].kind == RS_PORT_GPU_HB)
        return 0;
    uint64_t wire;
    uint32_t first;
    rs_fluid_flow_wire(f, 0, &wire, &first);
    if (f->relay_src != RS_NONE) {
        /* Its chunks' frames (each chunk its own message: its frames are
         * counted as if in one, RETHs aside). */
        uint32_t ports[RS_MMF_MAX_HOPS];
        rs_time lat;
        int h = rs_fluid_flow_path(net, fid, ports, RS_MMF_MAX_HOPS);
        if (h < 3)
            return 0;
        rs_fluid_relay_setup(net, f, ports, (uint32_t)h, &lat, &wire, &first);
    }
    uint64_t done = carried_wire(fluid_of(net), fid, wire), full = ((f->mtu + 3ull) & ~3ull) + RS_WIRE_ROCE;
    if (done < first)
        return 0;
    uint64_t n = 1 + (done - first) / full;
    return n < f->npkts ? (uint32_t)n : f->npkts - 1; /* the last goes again: it had not arrived */
}

/* The counters of the first `frames` data frames of flow f, abandoned by
 * a failover before count_sent counted it, over its path links[0..h):
 * what the packet level counts for the frames that had arrived. */
static void count_partial(rs_net *net, const rs_flow *f, const uint32_t *link, uint32_t h, uint32_t frames)
{
    uint64_t payload = (uint64_t)frames * f->mtu, full = ((f->mtu + 3ull) & ~3ull) + RS_WIRE_ROCE;
    if (payload > f->bytes)
        payload = f->bytes;
    for (uint32_t k = 0; k < h; k++) {
        net->ports[link[k]].tx_pkts += frames;
        net->ports[link[k]].tx_bytes += frames * full;
        net->st.packet_hops += frames;
    }
    net->st.pkts_sent += frames;
    net->st.data_pkts += frames;
    net->st.pkts_delivered += frames;
    net->st.goodput_bytes += payload;
    net->st.nic_bytes += payload;
}

void rs_fluid_flow_abandon(rs_net *net, uint32_t fid)
{
    rs_fluid *fl = fluid_of(net);
    const rs_flow *f = &net->flows[fid];
    uint32_t id = fid < fl->capof ? fl->of_flow[fid] : RS_NONE;
    /* Counted already when it left the fluid (its last frames in flight,
     * or resent after being taken back); else what had arrived counts. */
    int counted = id != RS_NONE ? fl->rec[id].counted : 1;
    for (uint32_t i = 0; i < fl->npark; i++)
        if (fl->park[i].flow == fid)
            counted = fl->park[i].tail;
    if (!counted && net->ports[f->port].kind != RS_PORT_GPU_HB) {
        uint32_t frames = rs_fluid_flow_delivered(net, fid), ports[RS_MMF_MAX_HOPS];
        int h = id != RS_NONE ? (int)fl->mmf->flows[id].nhops : rs_fluid_flow_path(net, fid, ports, RS_MMF_MAX_HOPS);
        count_partial(net, f, id != RS_NONE ? fl->mmf->flows[id].link : ports, h > 0 ? (uint32_t)h : 0, frames);
    }
    if (id != RS_NONE) {
        fl_rec r;
        leave(fl, id, &r);
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < fl->npark; i++)
        if (fl->park[i].flow != fid)
            fl->park[k++] = fl->park[i];
    fl->npark = k;
    if (fid < fl->captail)
        fl->tail[fid].done_at = RS_TIME_MAX; /* its pending completion does nothing */
    rs_fluid_watch(fl);
    rs_flow_release(net, fid);
}

int rs_fluid_routes_changed(rs_net *net)
{
    rs_fluid *fl = fluid_of(net);
    /* Flows whose hashed path moved follow the new tables, as the packet
     * level's next frame would; the bytes they carried stay delivered. */
    for (uint32_t fid = 0; fid < fl->capof && fid < net->nflows; fid++) {
        uint32_t id = fl->of_flow[fid];
        if (id == RS_NONE)
            continue;
        uint32_t ports[RS_MMF_MAX_HOPS], h, mf, dead = RS_NONE;
        rs_time lat;
        uint64_t wire;
        int rc = rs_fluid_flow_setup(net, fid, ports, &h, &lat, &wire, &mf);
        const mmf_flow *m = &fl->mmf->flows[id];
        if (rc == RS_OK && h == m->nhops && !memcmp(ports, m->link, h * sizeof *ports))
            continue;
        fl_rec r;
        uint64_t rate = fl->rec[id].rate;
        leave(fl, id, &r);
        if (rc == RS_OK && rs_fluid_path_up(net, ports, h, &dead)) {
            rc = rs_fluid_enter(fl, fid, ports, h, lat, r.wire, r.max_frame, r.rem);
            if (rc == RS_OK)
                fl->rec[fl->of_flow[fid]].counted = r.counted; /* a resent tail stays counted */
        } else {
            rc = repark(fl, fid, &r, rate, dead == RS_NONE ? NULL : &net->ports[dead]);
        }
        if (rc != RS_OK)
            return rc;
    }
    return retry_parked(fl);
}

uint32_t rs_fluid_parked(const rs_net *net) { return fluid_of(net) ? fluid_of(net)->npark : 0; }
