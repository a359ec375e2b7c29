/*
 * coll_step.c - what every algorithm (coll_ring.c, coll_tree.c,
 * coll_a2a.c, coll_hier.c) does with its collective's steps (coll_int.h):
 * send a transfer (counted, named, failing the collective when the
 * network refuses it), account completions until the collective is done
 * (a split run's process counts its part; rank 0 finishes it after the
 * run), time credits and reductions, take serials and callback names,
 * and tell a member (workload.sync=rank) that its part is done.
 */
#include "coll_int.h"

#include <stdlib.h>

void rs_coll_fail(rs_coll *c, int rc)
{
    if (c->status == RS_OK)
        c->status = rc;
    rs_sim_stop(rs_net_sim(c->net), rc);
}

int rs_coll_send(rs_coll *c, uint32_t a, uint32_t b, uint64_t bytes, rs_net_done_fn fn, uint64_t tag)
{
    return rs_coll_send_posted(c, a, b, bytes, fn, NULL, tag);
}

int rs_coll_send_posted(rs_coll *c, uint32_t a, uint32_t b, uint64_t bytes, rs_net_done_fn fn, rs_net_done_fn left,
                        uint64_t tag)
{
    return rs_coll_send_named(c, a, b, bytes, fn, left, tag, UINT64_MAX);
}

int rs_coll_send_named(rs_coll *c, uint32_t a, uint32_t b, uint64_t bytes, rs_net_done_fn fn, rs_net_done_fn left,
                       uint64_t tag, uint64_t serial)
{
    const rs_coll *root = c;
    while (root->parent)
        root = root->parent;
    rs_net_msg m;
    rs_net_msg_init(&m);
    m.src = c->gpu[a];
    m.dst = c->gpu[b];
    m.bytes = rs_coll_wire_bytes(c, bytes);
    m.done = fn;
    m.left = left;
    m.ctx = c;
    m.tag = tag;
    m.tally = root->tally; /* the whole collective's, sub-collectives included */
    m.serial = serial;
    int rc = rs_net_send(c->net, &m);
    if (rc != RS_OK) {
        rs_coll_fail(c, rc);
        return rc;
    }
    c->transfers++;
    return RS_OK;
}

/* Every member of a collective that waited for all of them is done. */
static void gather_tell(void *ctx, rs_net *net, uint64_t arg)
{
    (void)net;
    (void)arg;
    rs_coll *c = ctx;
    for (uint32_t x = 0; x < c->n; x++)
        c->gather_done(c->ctx, c->net, c->tag, x);
}

void rs_coll_finish_at(rs_coll *c, rs_time t)
{
    c->finished = 1;
    c->t_end = t;
    if (c->tally) { /* every transfer has arrived: the counts are final */
        c->bound = rs_net_tally_bound(c->net, c->tally);
        rs_tally_destroy(c->tally);
        c->tally = NULL;
    }
    /* Members that joined a collective which waited for all of them end
     * with it, in member order. */
    if (c->gather_done)
        gather_tell(c, c->net, 0);
    if (c->done)
        c->done(c->ctx, c->net, c->tag);
}

void rs_coll_finish_timer(void *ctx, rs_net *net, uint64_t arg)
{
    (void)arg;
    rs_coll_finish_at(ctx, rs_net_now(net));
}

void rs_coll_advance(rs_coll *c, uint64_t k)
{
    RS_ASSERT(c->pending >= k);
    c->pending -= k;
    if (RS_UNLIKELY(c->split)) {
        /* A split run: this process sees its GPUs' completions only;
         * rank 0 finishes the collective after the run
         * (rs_coll_part_finish), its records placed here if this is the
         * last. One that waited for its members joining, all here (NVLS),
         * tells them as the serial run's end does. */
        c->split_done += k;
        rs_net_rec_key_take(c->net, &c->split_last);
        if (c->gather_done && c->split_done == c->pending_total) {
            if (c->base_lat)
                rs_net_at_gpu(c->net, c->gpu[0], rs_net_now(c->net) + c->base_lat, gather_tell, c, 0);
            else
                gather_tell(c, c->net, 0);
        }
        return;
    }
    if (c->pending == 0 && !c->finished) {
        /* Members joining pay NCCL's base latency after their own parts
         * (rs_coll_member_step): the last of them to be told finishes
         * the collective, without an event of its own. */
        if (c->member_done && c->base_lat && c->notified < c->n) {
            c->drained = 1;
            return;
        }
        /* NCCL's base latency (kernel launch and set-up) once, at the end:
         * the collective is done that much later. */
        if (coll_base_lat(c))
            rs_net_at(c->net, rs_net_now(c->net) + coll_base_lat(c), rs_coll_finish_timer, c, 0);
        else
            rs_coll_finish_at(c, rs_net_now(c->net));
    }
}

rs_time rs_coll_hop_extra(const rs_coll *c, uint32_t a, uint32_t b)
{
    if (c->proto == RS_PROTO_AUTO)
        return 0;
    double us = c->hop_us[c->gpu[a] / c->o.hb_size == c->gpu[b] / c->o.hb_size ? 0 : 1];
    return rs_coll_beyond_net(c->net, c->gpu[a], c->gpu[b], us);
}

rs_time rs_coll_beyond_net(rs_net *net, uint32_t ga, uint32_t gb, double us)
{
    rs_time want, ser = 0, lat = 0;
    if (rs_time_from_us(us, &want) != RS_OK)
        return 0;
    if (rs_net_hop_as_built(net, ga, gb, RS_COLL_CREDIT_BYTES, &ser, &lat) != RS_OK)
        return want;
    return want > ser + lat ? want - (ser + lat) : 0;
}

rs_time rs_coll_credit_time(const rs_coll *c, uint32_t from, uint32_t to)
{
    rs_time ser, lat;
    if (rs_net_hop_estimate(c->net, c->gpu[from], c->gpu[to], RS_COLL_CREDIT_BYTES, &ser, &lat) != RS_OK)
        return 0;
    return ser + lat;
}

rs_time rs_coll_reduce_time(const rs_coll *c, uint64_t bytes)
{
    return c->reduce_bps ? rs_ser_time(bytes, c->reduce_bps) : 0;
}

uint64_t *rs_coll_serial_blocks(rs_coll *c, uint32_t k, uint64_t per_piece, const uint32_t *pieces)
{
    uint64_t *first = malloc((size_t)k * sizeof *first), total = 0;
    if (!first)
        return NULL;
    for (uint32_t i = 0; i < k; i++) {
        first[i] = total;
        total += per_piece * pieces[i];
    }
    uint64_t base;
    if (c->probe) {
        c->probe->serials += total;
        base = 0;
    } else {
        base = c->serial0 != UINT64_MAX ? c->serial0 : rs_net_serials_reserve(c->net, total);
    }
    for (uint32_t i = 0; i < k; i++)
        first[i] += base;
    return first;
}

int rs_coll_name_cbs(rs_coll *c, rs_net_timer_fn arrived, rs_net_timer_fn credit)
{
    if (c->probe) {
        c->probe->cbs += 2;
        return RS_OK;
    }
    if (c->cb0 != RS_COLL_NONE)
        return rs_net_cb_set(c->net, c->cb0, arrived, c) == RS_OK && rs_net_cb_set(c->net, c->cb0 + 1, credit, c) == RS_OK
                   ? RS_OK
                   : RS_ENOMEM;
    uint32_t i;
    int rc = rs_net_cb_register(c->net, arrived, c, &i);
    return rc == RS_OK ? rs_net_cb_register(c->net, credit, c, &i) : rc;
}

void rs_coll_member_tell(rs_coll *c, uint32_t x)
{
    c->notified++;
    c->member_done(c->ctx, c->net, c->tag, x);
}

/* Member x's part, base latency after its last completion. */
static void member_late(void *ctx, rs_net *net, uint64_t x)
{
    rs_coll *c = ctx;
    rs_coll_member_tell(c, (uint32_t)x);
    if (c->drained && c->notified == c->n)
        rs_coll_finish_at(c, rs_net_now(net)); /* last: may free c */
}

void rs_coll_member_step(rs_coll *c, uint32_t x)
{
    if (!c->mleft)
        return;
    RS_ASSERT(c->mleft[x] > 0);
    if (--c->mleft[x] != 0)
        return;
    /* NCCL's base latency, as the collective's own end pays it
     * (rs_coll_advance): this member's call returns that much later. */
    if (c->base_lat)
        rs_net_at_gpu(c->net, c->gpu[x], rs_net_now(c->net) + c->base_lat, member_late, c, x);
    else
        rs_coll_member_tell(c, x);
}
