/*
 * replay_p2p.c - the replay's point-to-point ops (replay_int.h): the k-th
 * SEND a -> b pairs with the k-th RECV at b from a. A message that arrives
 * before its RECV is posted waits in its channel (rank, slot); a RECV
 * posted first waits for its message. Each send counts its transfers in a
 * tally, for its network-only bound, charged to both ends. Under
 * workload.sync=rank a SEND completes when its message has left its GPU
 * and is named by a tag (p2p_tag) every process reads alike.
 */
#include "replay_int.h"

#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "pool.h"

static void msg_done(void *ctx, rs_net *net, uint64_t tag);
static void p2p_left(void *ctx, rs_net *net, uint64_t tag);

static void chan_arrived_push(rs_replay *r, chan *c, uint64_t k)
{
    if (rs_array_reserve32(&c->arrived, &c->carr, c->narr + 1, sizeof *c->arrived, 4) != RS_OK) {
        rs_replay_fail(r, RS_ENOMEM, "out of memory buffering a message");
        return;
    }
    c->arrived[c->narr++] = k;
}

void rs_replay_recv_start(rs_replay *r, uint32_t rank, uint32_t j)
{
    const rs_op *o = &r->cls[r->rk[rank].cls].ops[j];
    chan *c = &r->ch[(size_t)rank * r->nslots + o->comm];
    uint64_t kk = rs_replay_op_k(r, rank, j);
    for (uint32_t i = 0; i < c->narr; i++)
        if (c->arrived[i] == kk) {
            c->arrived[i] = c->arrived[--c->narr];
            rs_replay_complete(r, rank, j);
            return;
        }
    if (rs_array_reserve32(&c->wait, &c->cwait, c->nwait + 1, sizeof *c->wait, 4) != RS_OK) {
        rs_replay_fail(r, RS_ENOMEM, "out of memory posting a receive");
        return;
    }
    c->wait[c->nwait++] = (recv_wait){ kk, j };
}

/* An empty tally: a finished send's, or a new one; NULL (the run
 * failed) when out of memory. */
static rs_tally *tally_get(rs_replay *r)
{
    rs_tally *t = NULL;
    if (r->ntally_free)
        t = r->tally_free[--r->ntally_free];
    else if (rs_tally_create(&t) != RS_OK)
        rs_replay_fail(r, RS_ENOMEM, "out of memory for a send tally");
    return t;
}

/* A send's tally has done: its bound, and the tally back for the next
 * send (destroyed if the free list cannot grow). */
static rs_time tally_put(rs_replay *r, rs_tally *t)
{
    rs_time b = rs_net_tally_bound(r->net, t);
    rs_tally_clear(t);
    if (rs_array_reserve(&r->tally_free, &r->captally_free, r->ntally_free + 1, sizeof *r->tally_free, 64) == RS_OK)
        r->tally_free[r->ntally_free++] = t;
    else
        rs_tally_destroy(t);
    return b;
}

/* A tally for rank's SEND on `stream` (tally_get); send_done_tally
 * gives it back. */
static rs_tally *send_tally(rs_replay *r, uint32_t rank, uint32_t stream)
{
    if (!r->send_tally && !(r->send_tally = calloc((size_t)r->nranks * RS_STREAMS_MAX, sizeof *r->send_tally))) {
        rs_replay_fail(r, RS_ENOMEM, "out of memory for the send tallies of %u ranks", r->nranks);
        return NULL;
    }
    rs_tally **t = &r->send_tally[(size_t)rank * RS_STREAMS_MAX + stream];
    RS_ASSERT(*t == NULL);
    return *t = tally_get(r);
}

/* rank's SEND on `stream` has arrived: its bound; its tally back. */
static rs_time send_done_tally(rs_replay *r, uint32_t rank, uint32_t stream)
{
    rs_tally **t = &r->send_tally[(size_t)rank * RS_STREAMS_MAX + stream];
    rs_time b = tally_put(r, *t);
    *t = NULL;
    return b;
}

/* workload.sync=rank: a SEND in flight, from its start to its message's
 * arrival (its op may have completed before, when the message left; a
 * split run frees it then). Found by its message's tag, which names the
 * message for every process: sender rank, its slot, the message index. */
struct p2p_rec {
    rs_tally *tally;
    uint64_t tag;
    uint32_t rank, op, next; /* next: the free list, or the next of its rank's sends in flight */
};

static uint64_t p2p_tag(uint32_t rank, uint32_t slot, uint64_t k)
{
    return (uint64_t)rank << 40 | (uint64_t)slot << P2P_K_BITS | k;
}
static uint32_t p2p_tag_rank(uint64_t tag) { return (uint32_t)(tag >> 40); }
static uint32_t p2p_tag_slot(uint64_t tag) { return (uint32_t)(tag >> P2P_K_BITS) & 63; }
static uint64_t p2p_tag_k(uint64_t tag) { return tag & ((1ULL << P2P_K_BITS) - 1); }

/* Rank's send in flight with this tag (its index), unlinked from the
 * rank's list when unlink; UINT32_MAX when none. */
static uint32_t p2p_find(rs_replay *r, uint64_t tag, int unlink)
{
    uint32_t *pp = &r->p2p_head[p2p_tag_rank(tag)];
    while (*pp != UINT32_MAX && r->p2p[*pp].tag != tag)
        pp = &r->p2p[*pp].next;
    uint32_t i = *pp;
    if (i != UINT32_MAX && unlink)
        *pp = r->p2p[i].next;
    return i;
}

/* Record i back on the free list, its tally back (its bound). */
static rs_time p2p_put(rs_replay *r, uint32_t i)
{
    rs_time b = tally_put(r, r->p2p[i].tally);
    r->p2p[i].tally = NULL;
    r->p2p[i].next = r->p2p_free;
    r->p2p_free = i;
    return b;
}

/* A fresh record for rank's SEND j; UINT32_MAX (the run failed) when
 * out of memory. */
static uint32_t p2p_get(rs_replay *r, uint32_t rank, uint32_t j)
{
    if (!r->p2p_head) {
        if (!(r->p2p_head = malloc((size_t)r->nranks * sizeof *r->p2p_head))) {
            rs_replay_fail(r, RS_ENOMEM, "out of memory for the sends in flight");
            return UINT32_MAX;
        }
        memset(r->p2p_head, 0xff, (size_t)r->nranks * sizeof *r->p2p_head);
    }
    if (r->p2p_free == UINT32_MAX) {
        size_t old = r->capp2p; /* records are named by 32-bit indices */
        if (old >= UINT32_MAX / 2 || rs_array_reserve(&r->p2p, &r->capp2p, old + 1, sizeof *r->p2p, 64) != RS_OK) {
            rs_replay_fail(r, RS_ENOMEM, "out of memory for the sends in flight");
            return UINT32_MAX;
        }
        for (size_t i = old; i < r->capp2p; i++)
            r->p2p[i] = (p2p_rec){ .tally = NULL, .next = i + 1 < r->capp2p ? (uint32_t)(i + 1) : UINT32_MAX };
        r->p2p_free = (uint32_t)old;
    }
    rs_tally *t = tally_get(r);
    if (!t)
        return UINT32_MAX;
    uint32_t i = r->p2p_free;
    p2p_rec *p = &r->p2p[i];
    r->p2p_free = p->next;
    const rs_op *o = &r->cls[r->rk[rank].cls].ops[j];
    *p = (p2p_rec){ .tally = t, .tag = p2p_tag(rank, o->comm, rs_replay_op_k(r, rank, j)), .rank = rank, .op = j,
                    .next = r->p2p_head[rank] };
    r->p2p_head[rank] = i;
    return i;
}

/* A split run: bound b of a message of rank's to peer, charged to peer,
 * whose process may be another (rank 0 adds it after the run). */
static void add_bound_peer(rs_replay *r, uint32_t peer, rs_time b)
{
    if (rs_net_gpu_local(r->net, r->gpu[peer])) {
        r->rk[peer].bound = rs_time_add_sat(r->rk[peer].bound, b);
        return;
    }
    if (rs_array_reserve(&r->owed, &r->capowed, r->nowed + 1, sizeof *r->owed, 64) != RS_OK) {
        rs_replay_fail(r, RS_ENOMEM, "out of memory for the bounds of remote ranks");
        return;
    }
    r->owed[r->nowed++] = (owed){ b, peer, 0 };
}

/* Rank's SEND j goes onto the network now, as many bytes as its
 * protocol puts on the wire. */
static void send_go(void *ctx, rs_net *net, uint64_t arg)
{
    rs_replay *r = ctx;
    uint32_t rank = (uint32_t)(arg >> 32), j = (uint32_t)arg;
    const rs_op *o = &r->cls[r->rk[rank].cls].ops[j];
    uint32_t peer = rs_trace_slot(r->t, rank, o->comm);
    rs_net_msg m;
    rs_net_msg_init(&m);
    m.src = r->gpu[rank];
    m.dst = r->gpu[peer];
    rs_coll_p2p_cost(net, m.src, m.dst, o->bytes, &m.bytes, NULL);
    m.ctx = r;
    if (r->sync == RS_SYNC_RANK) {
        uint32_t i = p2p_get(r, rank, j);
        if (i == UINT32_MAX)
            return;
        m.done = rs_replay_p2p_done;
        m.left = p2p_left;
        m.tag = r->p2p[i].tag;
        m.tally = r->p2p[i].tally;
        /* At packet level its serial is its name: (rank, slot, message). */
        if (r->p2p_off)
            m.serial = r->p2p_base + r->p2p_off[(size_t)rank * r->nslots + o->comm] + p2p_tag_k(m.tag);
    } else {
        if (!(m.tally = send_tally(r, rank, o->stream)))
            return;
        m.done = msg_done;
        m.tag = (uint64_t)rank << 32 | j;
    }
    int rc = rs_net_send(r->net, &m);
    if (rc != RS_OK)
        rs_replay_fail(r, rc, "rank %u op %u (send \"%s\", %llu bytes to rank %u, GPU %u -> %u) could not start: %s%s",
                       rank, j, rs_replay_label(r, o), (unsigned long long)o->bytes, peer, r->gpu[rank], r->gpu[peer],
                       rs_strerror(rc), rc == RS_EUNREACH ? " (between rails of a rail-only network, routing.pxn "
                                                  "must not be off)" : "");
}

/* Under nccl.model=nccl a send waits NCCL's point-to-point latency beyond
 * the network's (rs_coll_p2p_cost) before its bytes go: its kernel's and
 * proxy's share, charged where the send starts, as a collective's base
 * latency is charged once per operation. */
void rs_replay_send_start(rs_replay *r, uint32_t rank, uint32_t j)
{
    const rs_op *o = &r->cls[r->rk[rank].cls].ops[j];
    uint32_t src = r->gpu[rank], dst = r->gpu[rs_trace_slot(r->t, rank, o->comm)];
    uint64_t wire, arg = (uint64_t)rank << 32 | j;
    rs_time extra;
    rs_coll_p2p_cost(r->net, src, dst, o->bytes, &wire, &extra);
    if (extra)
        rs_net_at_gpu(r->net, src, rs_net_now(r->net) + extra, send_go, r, arg);
    else
        send_go(r, r->net, arg);
}

/* Message kk from peer's slot `back` has arrived at `peer`: its RECV
 * completes if posted, else the message waits for it. */
static void deliver(rs_replay *r, uint32_t peer, uint32_t back, uint64_t kk)
{
    if (back == RS_NONE)
        return;
    chan *c = &r->ch[(size_t)peer * r->nslots + back];
    uint32_t i;
    for (i = 0; i < c->nwait && c->wait[i].k != kk; i++)
        ;
    if (i < c->nwait) {
        uint32_t op = c->wait[i].op;
        c->wait[i] = c->wait[--c->nwait];
        rs_replay_complete(r, peer, op);
    } else {
        chan_arrived_push(r, c, kk);
    }
}

static void msg_done(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    rs_replay *r = ctx;
    uint32_t rank = (uint32_t)(tag >> 32), j = (uint32_t)tag;
    const rs_op *o = &r->cls[r->rk[rank].cls].ops[j];
    uint32_t peer = rs_trace_slot(r->t, rank, o->comm);
    uint32_t back = r->aux[(size_t)rank * r->nslots + o->comm];
    uint64_t kk = rs_replay_op_k(r, rank, j); /* before rs_replay_complete() may end the iteration */
    rs_time b = send_done_tally(r, rank, o->stream);
    rs_replay_add_bound(r, rank, b);
    rs_replay_add_bound(r, peer, b);
    rs_replay_complete(r, rank, j);
    deliver(r, peer, back, kk);
    rs_replay_drain(r);
}

/* workload.sync=rank: a SEND's message has left its GPU: the op is done
 * (the rank's stream goes on, as NCCL's send returns once its data is
 * handed over, not when it has landed). */
static void p2p_left(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    rs_replay *r = ctx;
    uint32_t i = p2p_find(r, tag, r->split);
    if (i == UINT32_MAX) {
        rs_replay_fail(r, RS_EINTERNAL, "a send's message left, but no send of rank %u is in flight with it",
                       p2p_tag_rank(tag));
        return;
    }
    uint32_t rank = r->p2p[i].rank, op = r->p2p[i].op;
    if (r->split) {
        /* Its arrival may be another process's: the bound now (its
         * transfers all started: a split run has no failover), the record
         * free. */
        rs_time b = p2p_put(r, i);
        rs_replay_add_bound(r, rank, b);
        add_bound_peer(r, rs_trace_slot(r->t, rank, r->cls[r->rk[rank].cls].ops[op].comm), b);
    }
    rs_replay_complete(r, rank, op);
    rs_replay_drain(r);
}

/* workload.sync=rank: the message has arrived (in its receiver's process):
 * its receiver's RECV may complete; in a serial run the bound is charged
 * and the record is free. */
void rs_replay_p2p_done(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    rs_replay *r = ctx;
    uint32_t rank = p2p_tag_rank(tag), slot = p2p_tag_slot(tag);
    uint32_t peer = rs_trace_slot(r->t, rank, slot);
    uint32_t back = r->aux[(size_t)rank * r->nslots + slot];
    if (!r->split) {
        uint32_t i = p2p_find(r, tag, 1);
        if (i == UINT32_MAX) {
            rs_replay_fail(r, RS_EINTERNAL, "a message of rank %u arrived, but none of its sends is in flight with it",
                           rank);
            return;
        }
        rs_time b = p2p_put(r, i);
        rs_replay_add_bound(r, rank, b);
        rs_replay_add_bound(r, peer, b);
    }
    deliver(r, peer, back, p2p_tag_k(tag));
    rs_replay_drain(r);
}

void rs_replay_p2p_fini(rs_replay *r)
{
    if (r->ch)
        for (size_t i = 0; i < (size_t)r->nranks * r->nslots; i++) {
            free(r->ch[i].arrived);
            free(r->ch[i].wait);
        }
    free(r->ch);
    if (r->send_tally)
        for (size_t i = 0; i < (size_t)r->nranks * RS_STREAMS_MAX; i++)
            rs_tally_destroy(r->send_tally[i]);
    free(r->send_tally);
    for (size_t i = 0; i < r->ntally_free; i++)
        rs_tally_destroy(r->tally_free[i]);
    free(r->tally_free);
    for (size_t i = 0; i < r->capp2p; i++)
        if (r->p2p[i].tally)
            rs_tally_destroy(r->p2p[i].tally);
    free(r->p2p);
    free(r->p2p_head);
    free(r->p2p_off);
}
