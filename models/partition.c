/*
 * partition.c - the trivial partition of a serial run (partition.h): this
 * process owns every node, no link is cut, and rs_net_run runs the engine
 * to the end; and the records' keys, which a serial run takes as a split
 * one does.
 */
#include "backend.h"
#include "netint.h"

#include <string.h>

/* End-of-run invariants, checked whenever a run has gone idle (nothing
 * left to happen): the backend's (every packet delivered or dropped, no
 * record alive). A violation is our bug: the run reports RS_EINTERNAL
 * instead of a result that looks fine. */
static int serial_run(rs_net *net, rs_time until)
{
    int rc = rs_sim_run(net->sim, until);
    rs_fabric_settle(net);
    if (rc == RS_OK && net->be->idle_check && rs_sim_pending(net->sim) == 0)
        rc = net->be->idle_check(net);
    return rc;
}

const rs_part_ops rs_part_serial = { .run = serial_run };

void rs_part_init(rs_net *net)
{
    memset(&net->pt, 0, sizeof net->pt);
    net->pt.ops = &rs_part_serial;
    net->pt.ranks = 1;
}

/* -- record keys --------------------------------------------------------- */

static void key_sync(rs_net *net)
{
    rs_partition *pt = &net->pt;
    if (pt->ev_pinned)
        return;
    rs_time now = rs_sim_now(net->sim);
    uint64_t k = rs_sim_key(net->sim);
    if (now != pt->ev_t || k != pt->ev_key) {
        pt->ev_t = now;
        pt->ev_key = k;
        pt->ev_step = pt->ev_idx = 0;
    }
}

void rs_part_key(rs_net *net, rs_time *t, uint64_t *key, uint32_t *step, uint32_t *idx)
{
    key_sync(net);
    *t = net->pt.ev_t;
    *key = net->pt.ev_key;
    *step = net->pt.ev_step;
    *idx = net->pt.ev_idx++;
}

void rs_part_flow_step(rs_net *net)
{
    key_sync(net);
    net->pt.ev_step++;
}

void rs_net_rec_key_take(rs_net *net, rs_net_rec_key *out)
{
    rs_part_key(net, &out->t, &out->key, &out->step, &out->idx);
}

void rs_net_rec_key_pin(rs_net *net, const rs_net_rec_key *k)
{
    rs_partition *pt = &net->pt;
    pt->ev_pinned = k != NULL;
    if (k) {
        pt->ev_t = k->t;
        pt->ev_key = k->key;
        pt->ev_step = k->step;
        pt->ev_idx = k->idx;
    } else {
        pt->ev_t = RS_TIME_MAX; /* the next record takes the running event's place again */
    }
}

int rs_net_rec_key_less(const rs_net_rec_key *a, const rs_net_rec_key *b)
{
    if (a->t != b->t)
        return a->t < b->t;
    if (a->key != b->key)
        return a->key < b->key;
    if (a->step != b->step)
        return a->step < b->step;
    return a->idx < b->idx;
}

/* -- what the layers above ask ------------------------------------------- */

uint32_t rs_net_part_ranks(const rs_net *net) { return net->pt.ranks; }

int rs_net_gpu_local(const rs_net *net, uint32_t gpu)
{
    return gpu < net->gpus && rs_part_owns_node(net, gpu);
}
