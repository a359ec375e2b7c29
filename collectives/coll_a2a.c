/*
 * coll_a2a.c - all-to-all (direct and pairwise) and send/recv.
 *
 * Each rank's buffer of `bytes` holds n blocks (near-equal, block j for
 * rank j); all-to-all moves block j of rank i to rank j, i != j, so every
 * rank sends (n-1)/n of its buffer.
 *   direct:   every rank posts all n-1 sends at once, to (i+1), (i+2), ...
 *             in that order (NCCL's grouped send/recv loop); the network
 *             shares each NIC among them.
 *   pairwise: n-1 steps; in step k rank i sends to (i+k) mod n and receives
 *             from (i-k) mod n. A send starts when both ends have reached
 *             step k (the receiver has posted its buffer: rendezvous), and a
 *             rank enters step k+1 when its step-k send and receive are both
 *             done. Each step is a permutation, so no NIC sees an incast.
 * State: O(n) counters; the n(n-1) transfers are inherent.
 * send/recv: one transfer of `bytes` from rank 0 to rank 1.
 */
#include "coll_int.h"

#include <stdlib.h>

struct a2a_rank {
    uint32_t step;   /* pairwise: current step, n when done; direct: next peer offset to send to */
    uint8_t sent;    /* step's send started */
    uint8_t send_done, recv_done;
    uint8_t pad;
};

static uint64_t block(const rs_coll *c, uint32_t j) { return coll_split(c->bytes, c->n, j); }

static void direct_arrived(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    rs_coll *c = ctx;
    uint32_t j = (uint32_t)tag; /* its receiver */
    if (c->joined && !c->joined[j]) {
        c->a2a_held[j]++; /* over an HB link: taken in at j's join (rs_coll_a2a_join) */
        return;
    }
    rs_coll_member_step(c, j);
    rs_coll_advance(c, 1);
}

/* Direct with a window: rank i's next send, to (i + step) mod n. */
static void direct_next(rs_coll *c, uint32_t i);

static void direct_window_arrived(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    rs_coll *c = ctx;
    direct_next(c, (uint32_t)(tag >> 32));
    rs_coll_advance(c, 1); /* last: may finish and free c */
}

static void direct_next(rs_coll *c, uint32_t i)
{
    uint32_t n = c->n, k = c->ar[i].step;
    if (k >= n)
        return;
    c->ar[i].step = k + 1;
    uint32_t j = (uint32_t)(((uint64_t)i + k) % n);
    rs_coll_send(c, i, j, block(c, j), direct_window_arrived, ((uint64_t)i << 32) | j);
}

static void pw_arrived(void *ctx, rs_net *net, uint64_t tag);

/* Start i's send of its current step if its peer is at the same step. */
static void pw_try_send(rs_coll *c, uint32_t i)
{
    a2a_rank *r = &c->ar[i];
    uint32_t n = c->n, k = r->step;
    if (k >= n || r->sent)
        return;
    uint32_t j = (uint32_t)(((uint64_t)i + k) % n);
    if (c->ar[j].step != k)
        return;
    r->sent = 1;
    rs_coll_send(c, i, j, block(c, j), pw_arrived, ((uint64_t)i << 32) | j);
}

static void pw_enter(rs_coll *c, uint32_t i, uint32_t k)
{
    a2a_rank *r = &c->ar[i];
    uint32_t n = c->n;
    r->step = k;
    r->sent = r->send_done = r->recv_done = 0;
    if (k >= n)
        return;
    pw_try_send(c, i);
    pw_try_send(c, (uint32_t)(((uint64_t)i + n - k) % n)); /* the rank sending to i */
}

static void pw_advance(rs_coll *c, uint32_t i)
{
    a2a_rank *r = &c->ar[i];
    if (r->step < c->n && r->send_done && r->recv_done)
        pw_enter(c, i, r->step + 1);
}

static void pw_arrived(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    rs_coll *c = ctx;
    uint32_t i = (uint32_t)(tag >> 32), j = (uint32_t)tag;
    c->ar[i].send_done = 1;
    c->ar[j].recv_done = 1;
    pw_advance(c, i);
    pw_advance(c, j);
    rs_coll_advance(c, 1); /* last: may finish and free c */
}

/* Members joining: i's block to j has left i (a relayed one: the relay's NIC):
 * one of i's sends done. A whole block is one message where NCCL's
 * kernel pushes it through NCCL_STEPS slots, so i counts it done once it
 * is out, not when issued. */
static void direct_left(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    rs_coll_member_step(ctx, (uint32_t)(tag >> 32));
}

/* Members joining: i sends its block to j, j's buffer posted; named
 * by its place (i, offset), alike in every process of a split run. */
static void direct_send(rs_coll *c, uint32_t i, uint32_t j)
{
    uint32_t n = c->n, k = (uint32_t)(((uint64_t)j + n - i) % n);
    uint64_t serial = c->a2a_serial == UINT64_MAX ? UINT64_MAX : c->a2a_serial + (uint64_t)i * (n - 1) + k - 1;
    rs_coll_send_named(c, i, j, block(c, j), direct_arrived, direct_left, ((uint64_t)i << 32) | j, serial);
}

static int posted(const rs_coll *c, uint32_t j, uint32_t i)
{
    uint64_t b = (uint64_t)j * c->n + i;
    return (int)((c->posted[b / 64] >> (b % 64)) & 1);
}

/* j's receive buffer is posted at i (tag j << 32 | i). */
static void direct_post(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    rs_coll *c = ctx;
    uint32_t j = (uint32_t)(tag >> 32), i = (uint32_t)tag;
    uint64_t b = (uint64_t)j * c->n + i;
    c->posted[b / 64] |= 1ULL << (b % 64);
    if (c->joined[i])
        direct_send(c, i, j);
}

/* Member x joins: it posts its receive buffer to every peer across HB
 * domains (each a path latency away, in offset order, as NCCL's grouped
 * receives; its HB peers' slots were free already), takes in the blocks
 * that arrived over HB links before it joined (the collective cannot
 * finish here: x has sent nothing yet) and sends to the peers whose
 * buffers are posted at it, in offset order. */
int rs_coll_a2a_join(rs_coll *c, uint32_t x)
{
    uint32_t n = c->n;
    rs_time now = rs_net_now(c->net);
    for (uint32_t k = 1; k < n; k++) {
        uint32_t i = (uint32_t)(((uint64_t)x + n - k) % n);
        if (!coll_hb_pair(c, x, i))
            rs_net_at_gpu_for(c->net, c->gpu[x], c->gpu[i], now + rs_coll_credit_time(c, x, i), direct_post, c,
                              ((uint64_t)x << 32) | i);
    }
    for (uint32_t h = c->a2a_held[x]; h; h--)
        rs_coll_member_step(c, x);
    if (c->a2a_held[x])
        rs_coll_advance(c, c->a2a_held[x]);
    c->a2a_held[x] = 0;
    for (uint32_t k = 1; k < n && c->status == RS_OK; k++) {
        uint32_t j = (uint32_t)(((uint64_t)x + k) % n);
        if (posted(c, j, x))
            direct_send(c, x, j);
    }
    return c->status;
}

int rs_coll_a2a_start(rs_coll *c, rs_err *err)
{
    uint32_t n = c->n;
    c->pending = (uint64_t)n * (n - 1);
    c->a2a_serial = UINT64_MAX;
    if (c->member_done) {
        /* Members join one by one (rs_coll_a2a_join): a member receives
         * and sends n-1 blocks. At packet level each block's serial (its
         * entropy, its captured QPN) is its place in the collective, from
         * a block taken now, and the two callbacks that cross processes
         * (a block's arrival, a posting) are named: a run split over
         * processes makes them alike. */
        if (!rs_net_streams(c->net)) {
            uint32_t one = 1;
            uint64_t *first = rs_coll_serial_blocks(c, 1, c->pending, &one);
            if (!first)
                return rs_err_set(err, RS_ENOMEM, "out of memory starting an all-to-all over %u ranks", n);
            c->a2a_serial = first[0];
            free(first);
            for (uint32_t i = 0; c->probe && i < n; i++)
                for (uint32_t j = 0; j < n; j++)
                    c->probe->relayed += (uint32_t)(i != j && rs_net_relayed(c->net, c->gpu[i], c->gpu[j]));
            if ((c->split || c->probe) && rs_coll_name_cbs(c, direct_arrived, direct_post) != RS_OK)
                return rs_err_set(err, RS_ENOMEM, "out of memory starting an all-to-all over %u ranks", n);
        }
        if (c->probe)
            return RS_OK;
        c->posted = calloc(((uint64_t)n * n + 63) / 64, sizeof *c->posted);
        c->a2a_held = calloc(n, sizeof *c->a2a_held);
        if (!c->posted || !c->a2a_held)
            return rs_err_set(err, RS_ENOMEM, "out of memory starting an all-to-all over %u ranks", n);
        for (uint32_t x = 0; x < n; x++)
            c->mleft[x] = 2 * (uint64_t)(n - 1);
        for (uint32_t j = 0; j < n; j++) /* HB peers: j's slots at i free from the last collective */
            for (uint32_t i = 0; i < n; i++)
                if (i != j && coll_hb_pair(c, i, j)) {
                    uint64_t b = (uint64_t)j * n + i;
                    c->posted[b / 64] |= 1ULL << (b % 64);
                }
        return RS_OK;
    }
    if (c->algo == RS_ALGO_DIRECT && c->o.a2a_peers && c->o.a2a_peers < n - 1) {
        /* NCCL's grouped send/receive: every receive is posted, and each
         * rank keeps a2a_peers sends in flight, to its peers in offset
         * order (each round of offsets is a permutation); a finished
         * send starts the next. */
        c->ar = calloc(n, sizeof *c->ar);
        if (!c->ar)
            return rs_err_set(err, RS_ENOMEM, "out of memory starting an all-to-all over %u ranks", n);
        for (uint32_t i = 0; i < n; i++)
            c->ar[i].step = 1;
        for (uint32_t w = 0; w < c->o.a2a_peers && c->status == RS_OK; w++)
            for (uint32_t i = 0; i < n && c->status == RS_OK; i++)
                direct_next(c, i);
        return c->status;
    }
    if (c->algo == RS_ALGO_DIRECT) {
        for (uint32_t k = 1; k < n; k++)
            for (uint32_t i = 0; i < n; i++) {
                uint32_t j = (uint32_t)(((uint64_t)i + k) % n);
                if (rs_coll_send(c, i, j, block(c, j), direct_arrived, ((uint64_t)i << 32) | j) != RS_OK)
                    return c->status;
            }
        return RS_OK;
    }
    c->ar = calloc(n, sizeof *c->ar);
    if (!c->ar)
        return rs_err_set(err, RS_ENOMEM, "out of memory starting an all-to-all over %u ranks", n);
    for (uint32_t i = 0; i < n; i++)
        c->ar[i].step = 1;
    for (uint32_t i = 0; i < n && c->status == RS_OK; i++)
        pw_try_send(c, i);
    return c->status;
}

int rs_coll_sendrecv_start(rs_coll *c, rs_err *err)
{
    (void)err;
    c->pending = 1;
    rs_coll_send(c, 0, 1, c->bytes, direct_arrived, 0);
    return c->status;
}
