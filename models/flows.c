/*
 * flows.c - records: transfer records (rs_flow, netint.h), what carries a
 * message, or one leg or chunk of it, across the fabric, whichever
 * backend moves it; and the free stacks by which they and message records
 * are reused.
 *
 * Memory follows the transfers in flight, not the transfers so far: a
 * message record is reused once its completion callback has run, a
 * transport flow record once its message has been told. A gpt3-175b
 * iteration on 16,384 GPUs sends ~10^9 messages; keeping each record
 * (~250 bytes with its flow) made it run out of memory in a minute. The
 * free stacks have the capacity of their arrays, so handing a record back
 * never allocates. Ids stay below the high-water marks nmsgs and nflows;
 * flows keep their creation order in rs_flow.serial, which the entropy and
 * the flow level's tie-breaks use, so reuse changes no result.
 */
#include "netint.h"

#include <string.h>

#include "pool.h"

/* A record id from arr (n handed out, room for *cap of elem bytes): a
 * reused one from fr, else the next new one. The free stack is grown to
 * the array's capacity before an id past its room is handed out (if that
 * fails after the array grew, the next call tries again). */
int rs_slot_take(rs_free_ids *fr, void *arr, size_t *cap, uint32_t *n, size_t elem, uint32_t *id)
{
    if (fr->n) {
        *id = fr->ids[--fr->n];
        return RS_OK;
    }
    if (rs_array_reserve(arr, cap, *n + 1, elem, 1024) != RS_OK)
        return RS_ENOMEM;
    if (rs_array_reserve(&fr->ids, &fr->cap, *cap, sizeof *fr->ids, 1024) != RS_OK)
        return RS_ENOMEM;
    *id = (*n)++;
    return RS_OK;
}

void rs_slot_give(rs_free_ids *fr, uint32_t id)
{
    RS_ASSERT(fr->n < fr->cap);
    fr->ids[fr->n++] = id;
}

int rs_flow_new(rs_net *net, uint32_t src, uint32_t dst, uint64_t bytes,
                uint32_t msg, uint32_t chunk, int via_hb, uint32_t *out)
{
    uint64_t *ctr = rs_serial_ctr(net, msg < net->nmsgs ? net->msgs[msg].src : src);
    int rc = rs_flow_new_serial(net, src, dst, bytes, msg, chunk, via_hb, *ctr, out);
    if (rc == RS_OK)
        ++*ctr;
    return rc;
}

int rs_flow_new_serial(rs_net *net, uint32_t src, uint32_t dst, uint64_t bytes,
                       uint32_t msg, uint32_t chunk, int via_hb, uint64_t serial, uint32_t *out)
{
    uint32_t id;
    if (rs_flow_slot(net, &id) != RS_OK)
        return RS_ENOMEM;
    rs_flow *f = &net->flows[id];
    memset(f, 0, sizeof *f);
    f->serial = serial;
    f->bytes = bytes;
    f->src = src;
    f->dst = dst;
    f->port = via_hb ? rs_gpu_hb_port(net, src) : rs_gpu_nic_port(net, src);
    f->mtu = via_hb ? net->cfg.hb_mtu : net->cfg.mtu;
    uint64_t n = bytes ? (bytes + f->mtu - 1) / f->mtu : 1;
    if (n > UINT32_MAX / 2) {
        rs_flow_release(net, id);
        return RS_ERANGE;
    }
    f->npkts = (uint32_t)n;
    f->msg = msg;
    f->chunk = chunk;
    f->prio = (uint8_t)net->cfg.prio;
    if (RS_UNLIKELY(net->member != NULL) && msg < net->nmsgs) {
        uint8_t j = net->member[net->msgs[msg].src];
        f->job = j;
        if (net->job_cfg && j && net->job_cfg[j].prio)
            f->prio = (uint8_t)(net->job_cfg[j].prio - 1);
    }
    f->hit = f->hit_last = f->relay_src = f->rtx_mark = RS_NONE;
    f->via = f->ugal_port = RS_NONE;
    f->home = net->flow_home; /* a partitioned run: this process's own send (msg.c), else RS_NONE */
    f->home_id = id;
    f->next_active = RS_NONE;
    f->reliable = !via_hb && net->cfg.transport == RS_TRANSPORT_ROCE;
    rs_dcqcn_init(net, &f->cc);
    f->last_cnp = RS_TIME_MAX;
    f->last_progress = rs_sim_now(net->sim);
    /* RoCEv2 puts flow entropy in the UDP source port (49152-65535). */
    f->entropy = (uint16_t)(0xc000 | (rs_mix64(net->cfg.seed ^ (f->serial << 20) ^ src) & 0x3fff));
    if (RS_UNLIKELY(net->ugal_load != NULL) && !via_hb)
        rs_ugal_choose(net, f);
    if (RS_UNLIKELY(net->tl != NULL) && !net->mirroring)
        rs_net_tl_wake(net); /* traffic starts: the timeline's sampler runs (a mirror's sender woke it) */
    *out = id;
    return RS_OK;
}

int rs_flow_slot(rs_net *net, uint32_t *id)
{
    return rs_slot_take(&net->flow_free, &net->flows, &net->capflows, &net->nflows, sizeof *net->flows, id);
}

void rs_flow_release(rs_net *net, uint32_t id)
{
    if (RS_UNLIKELY(net->ugal_load != NULL))
        rs_ugal_release(net, &net->flows[id]);
    net->flows[id].freed = 1;
    rs_slot_give(&net->flow_free, id);
}
