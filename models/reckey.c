/*
 * reckey.c - where a record goes (partition_int.h, "record keys"): the
 * running event's time and key, the flow starts in it so far and the
 * record's index in it. A split run's parts merge into the serial run's
 * order by these keys; a serial run takes them alike (a pcapng capture
 * orders what it holds back by them).
 */
#include "netint.h"

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
