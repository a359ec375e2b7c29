/*
 * replay_build.c - the tables a replay derives from its trace once, at
 * create (replay_int.h): per class the streams' successors, reverse
 * dependencies and each communication op's index on its slot; per rank its
 * class, GPU and op states; per slot the communicator position or the
 * peer's slot pointing back; per communicator its collectives-layer
 * communicator and HB shape; and, under workload.sync=rank, the names
 * (ids, serials, callback indices) of every collective instance and
 * message, alike in every process.
 */
#include "replay_int.h"

#include "array.h"

#include <stdlib.h>
#include <string.h>

static int cls_build(rs_replay *r, uint32_t ci, rs_err *err)
{
    cls_info *c = &r->cls[ci];
    uint32_t n;
    c->ops = rs_trace_class_program(r->t, ci, &n);
    c->nops = n;
    uint32_t S = r->nslots;
    c->next = malloc(((size_t)n + 1) * sizeof *c->next);
    c->rdep_off = calloc((size_t)n + 2, sizeof *c->rdep_off);
    c->seq = malloc(((size_t)n + 1) * sizeof *c->seq);
    c->per_iter = calloc((size_t)S * 3 + 1, sizeof *c->per_iter);
    c->slot_kind = calloc((size_t)S + 1, 1);
    if (!c->next || !c->rdep_off || !c->seq || !c->per_iter || !c->slot_kind)
        return rs_err_set(err, RS_ENOMEM, "out of memory preparing the replay of class %u (%u ops)", ci, n);
    uint32_t last[RS_STREAMS_MAX];
    for (uint32_t s = 0; s < RS_STREAMS_MAX; s++)
        c->first[s] = last[s] = RS_NONE;
    uint64_t ndeps = 0;
    for (uint32_t i = 0; i < n; i++) {
        const rs_op *o = &c->ops[i];
        c->next[i] = RS_NONE;
        if (last[o->stream] == RS_NONE)
            c->first[o->stream] = i;
        else
            c->next[last[o->stream]] = i;
        last[o->stream] = i;
        for (int d = 0; d < 2; d++)
            if (o->dep[d] != RS_NONE) {
                c->rdep_off[o->dep[d] + 1]++;
                ndeps++;
            }
        c->seq[i] = RS_NONE;
        if (o->kind == RS_OP_COMPUTE) {
            c->compute = rs_time_add_sat(c->compute, o->duration);
        } else {
            c->seq[i] = c->per_iter[o->comm * 3 + (o->kind - RS_OP_COLL)]++;
            c->slot_kind[o->comm] = o->kind == RS_OP_COLL ? SK_COLL : SK_P2P;
        }
    }
    for (uint32_t i = 0; i < n; i++)
        c->rdep_off[i + 1] += c->rdep_off[i];
    c->rdep = malloc((size_t)(ndeps ? ndeps : 1) * sizeof *c->rdep);
    uint32_t *fill = malloc(((size_t)n + 1) * sizeof *fill);
    if (!c->rdep || !fill) {
        free(fill);
        return rs_err_set(err, RS_ENOMEM, "out of memory preparing the replay of class %u (%u ops)", ci, n);
    }
    memcpy(fill, c->rdep_off, (size_t)n * sizeof *fill);
    for (uint32_t i = 0; i < n; i++)
        for (int d = 0; d < 2; d++)
            if (c->ops[i].dep[d] != RS_NONE)
                c->rdep[fill[c->ops[i].dep[d]]++] = i;
    free(fill);
    return RS_OK;
}

/* Communicator GPUs, positions of each member's slots, hier_ok, one_dom. */
static int comms_build(rs_replay *r, uint32_t hb, rs_err *err)
{
    uint32_t gpus = rs_net_gpus(r->net);
    uint32_t ndom = (gpus + hb - 1) / hb;
    uint32_t *cnt = calloc(ndom, sizeof *cnt);
    uint32_t *list = malloc((size_t)r->nranks * sizeof *list);
    int rc = RS_OK;
    if (!cnt || !list) {
        rc = rs_err_set(err, RS_ENOMEM, "out of memory preparing the replay's communicators");
        goto done;
    }
    for (uint32_t c = 0; c < r->ncomms && rc == RS_OK; c++) {
        comm_st *cm = &r->cm[c];
        cm->ranks = rs_trace_comm_ranks(r->t, c, &cm->n);
        cm->nlocal = cm->n;
        for (uint32_t p = 0; p < cm->n; p++) {
            uint32_t m = cm->ranks[p];
            list[p] = r->gpu[m];
            const uint32_t *slots = rs_trace_rank_slots(r->t, m);
            const cls_info *ci = &r->cls[r->rk[m].cls];
            for (uint32_t s = 0; s < r->nslots; s++)
                if (slots[s] == c && ci->slot_kind[s] == SK_COLL)
                    r->aux[(size_t)m * r->nslots + s] = p;
        }
        if ((rc = rs_comm_create(list, cm->n, gpus, &cm->comm, err)) != RS_OK)
            break;
        /* HB-domain shape, as the collectives layer checks it. */
        uint32_t ndomains = 0, kmin = UINT32_MAX, kmax = 0;
        for (uint32_t p = 0; p < cm->n; p++)
            if (cnt[list[p] / hb]++ == 0)
                ndomains++;
        for (uint32_t p = 0; p < cm->n; p++) {
            uint32_t v = cnt[list[p] / hb];
            kmin = v < kmin ? v : kmin;
            kmax = v > kmax ? v : kmax;
        }
        for (uint32_t p = 0; p < cm->n; p++)
            cnt[list[p] / hb] = 0;
        cm->hier_ok = ndomains >= 2 && kmin == kmax;
        cm->one_dom = ndomains == 1 && cm->n >= 2;
    }
done:
    free(cnt);
    free(list);
    return rc;
}

/* workload.sync=rank: every instance named (rs_replay.inst_base, ...): its
 * id, and at packet level its serials and callback indices, reserved now,
 * alike in every process. A communicator's calls per iteration are the
 * most any member issues, and each call's op the first member's that
 * issues it (a member that disagrees fails the run when it issues, or
 * leaves it stuck). */
static int names_build(rs_replay *r, rs_err *err)
{
    uint32_t C = r->ncomms;
    r->inst_base = calloc((size_t)C + 1, sizeof *r->inst_base);
    r->call_base = calloc((size_t)C + 1, sizeof *r->call_base);
    if (!r->inst_base || !r->call_base)
        return rs_err_set(err, RS_ENOMEM, "out of memory naming the replay's collectives");
    /* Calls per iteration: the most any member issues (members that
     * disagree stop the run, or leave it stuck, as they issue). */
    for (uint32_t c = 0; c < C; c++) {
        const comm_st *cm = &r->cm[c];
        uint32_t P = 0;
        for (uint32_t p = 0; p < cm->n; p++) {
            uint32_t m = cm->ranks[p];
            const uint32_t *slots = rs_trace_rank_slots(r->t, m);
            const cls_info *ci = &r->cls[r->rk[m].cls];
            for (uint32_t sl = 0; sl < r->nslots; sl++)
                if (slots[sl] == c && ci->slot_kind[sl] == SK_COLL && ci->per_iter[sl * 3] > P)
                    P = ci->per_iter[sl * 3];
        }
        if ((uint64_t)r->call_base[c] + P > UINT32_MAX / 2)
            return rs_err_set(err, RS_EINVAL, "trace: more than 2^31 collective calls per iteration");
        r->call_base[c + 1] = r->call_base[c] + P;
        r->inst_base[c + 1] = r->inst_base[c] + (uint64_t)P * r->iterations;
    }
    uint32_t calls = r->call_base[C];
    r->call_op = calloc((size_t)calls + 1, sizeof *r->call_op);
    if (!r->call_op)
        return rs_err_set(err, RS_ENOMEM, "out of memory naming the replay's collectives");
    /* Call j's op: the first member's that issues it. */
    for (uint32_t c = 0; c < C; c++)
        for (uint32_t p = 0; p < r->cm[c].n && r->call_base[c + 1] > r->call_base[c]; p++) {
            uint32_t m = r->cm[c].ranks[p];
            const uint32_t *slots = rs_trace_rank_slots(r->t, m);
            const cls_info *ci = &r->cls[r->rk[m].cls];
            for (uint32_t i = 0; i < ci->nops; i++) {
                const rs_op *o = &ci->ops[i];
                if (o->kind == RS_OP_COLL && slots[o->comm] == c && !r->call_op[r->call_base[c] + ci->seq[i]])
                    r->call_op[r->call_base[c] + ci->seq[i]] = o;
            }
        }
    /* A SEND's message is named by its tag (p2p_tag): rank, slot, index. */
    uint64_t nmsg = 0;
    for (uint32_t rank = 0; rank < r->nranks; rank++) {
        const cls_info *ci = &r->cls[r->rk[rank].cls];
        for (uint32_t sl = 0; sl < r->nslots; sl++)
            if (ci->slot_kind[sl] == SK_P2P && (uint64_t)ci->per_iter[sl * 3 + 1] * r->iterations >> P2P_K_BITS)
                return rs_err_set(err, RS_EINVAL, "workload.iterations: %u iterations of rank %u's %u sends to "
                                  "one peer exceed the 2^%d messages a send's name counts", r->iterations, rank,
                                  ci->per_iter[sl * 3 + 1], P2P_K_BITS);
            else if (ci->slot_kind[sl] == SK_P2P)
                nmsg += (uint64_t)ci->per_iter[sl * 3 + 1] * r->iterations;
    }
    r->cb_base = RS_NONE;
    if (rs_net_streams(r->net))
        return RS_OK; /* the flow level is never split and names no serials */
    if (nmsg) {
        if (!(r->p2p_off = calloc((size_t)r->nranks * r->nslots, sizeof *r->p2p_off)) ||
            rs_net_cb_register(r->net, rs_replay_p2p_done, r, &r->p2p_cb) != RS_OK)
            return rs_err_set(err, RS_ENOMEM, "out of memory naming the replay's sends");
        uint64_t off = 0;
        for (uint32_t rank = 0; rank < r->nranks; rank++) {
            const cls_info *ci = &r->cls[r->rk[rank].cls];
            for (uint32_t sl = 0; sl < r->nslots; sl++)
                if (ci->slot_kind[sl] == SK_P2P) {
                    r->p2p_off[(size_t)rank * r->nslots + sl] = off;
                    off += (uint64_t)ci->per_iter[sl * 3 + 1] * r->iterations;
                }
        }
        r->p2p_base = rs_net_serials_reserve(r->net, off);
    }
    r->call_serial = calloc((size_t)calls + 1, sizeof *r->call_serial);
    r->call_cb = calloc((size_t)calls + 1, sizeof *r->call_cb);
    if (!r->call_serial || !r->call_cb)
        return rs_err_set(err, RS_ENOMEM, "out of memory naming the replay's collectives");
    uint64_t off = 0, cbs = 0;
    for (uint32_t c = 0; c < C; c++)
        for (uint32_t j = r->call_base[c]; j < r->call_base[c + 1]; j++) {
            const rs_op *o = r->call_op[j];
            rs_coll_needs need = { .size = sizeof need };
            r->call_serial[j] = off;
            r->call_cb[j] = (uint32_t)cbs;
            if (!o)
                continue;
            rs_err e;
            rs_coll_req req;
            rs_replay_coll_req(r, c, o->coll, o->bytes, &req);
            int rc = rs_coll_needs_get(r->net, r->cm[c].comm, &req, &need, &e);
            if (rc != RS_OK)
                return rs_err_set(err, rc, "communicator %u, call %u (%s of %llu bytes): %.400s", c,
                                  j - r->call_base[c] + 1, rs_coll_op_name((rs_coll_op)o->coll),
                                  (unsigned long long)o->bytes, e.msg);
            off += need.serials;
            if ((cbs += need.cbs) > UINT32_MAX / 4)
                return rs_err_set(err, RS_EINVAL, "trace: its collectives need more than 2^30 callback indices "
                                  "per iteration");
        }
    r->call_cb[calls] = (uint32_t)cbs;
    r->ser_iter = off;
    r->ser_base = rs_net_serials_reserve(r->net, off * r->iterations);
    uint64_t ncb = cbs * r->iterations;
    r->cb_iter = (uint32_t)cbs;
    if (ncb > UINT32_MAX / 2 ||
        rs_net_cb_reserve(r->net, (uint32_t)ncb, rs_replay_inst_resolve, r, &r->cb_base) != RS_OK)
        return rs_err_set(err, RS_ENOMEM, "out of memory naming the replay's %llu collectives",
                          (unsigned long long)r->inst_base[C]);
    return RS_OK;
}

/* A collective call of one communicator, for calls_check: its op and
 * size, and the op that first issues it. */
typedef struct call_key {
    uint64_t bytes;
    uint32_t coll;
    const rs_op *op;
} call_key;

static int call_cmp(const void *x, const void *y)
{
    const call_key *a = x, *b = y;
    if (a->coll != b->coll)
        return a->coll < b->coll ? -1 : 1;
    return (a->bytes > b->bytes) - (a->bytes < b->bytes);
}

/* Every collective call could start: NCCL would run it under the
 * scenario's forced choices (nccl.algo, nccl.protocol, nccl.nvls,
 * workload.algo, system.gpu). A packet-level replay under
 * workload.sync=rank probes each call as it names them (names_build);
 * every other replay is probed here, once per communicator and (op,
 * size), so what NCCL would refuse is bad input before the run at both
 * fidelities and either sync, not a failure in its middle with an
 * incomplete summary. A communicator's calls are read once per class and
 * slot of its members (ranks of one class issue the same). */
static int calls_check(rs_replay *r, rs_err *err)
{
    uint32_t C = r->ncomms, S = r->nslots;
    uint32_t *seen = calloc((size_t)r->nclasses * S + 1, sizeof *seen); /* (class, slot): c + 1 when read for c */
    call_key *k = NULL;
    size_t nk = 0, cap = 0;
    int rc = seen ? RS_OK : RS_ENOMEM;
    for (uint32_t c = 0; rc == RS_OK && c < C; c++) {
        const comm_st *cm = &r->cm[c];
        nk = 0;
        for (uint32_t p = 0; rc == RS_OK && p < cm->n; p++) {
            uint32_t m = cm->ranks[p], cls = r->rk[m].cls;
            const uint32_t *slots = rs_trace_rank_slots(r->t, m);
            const cls_info *ci = &r->cls[cls];
            for (uint32_t sl = 0; rc == RS_OK && sl < S; sl++) {
                if (slots[sl] != c || ci->slot_kind[sl] != SK_COLL || seen[(size_t)cls * S + sl] == c + 1)
                    continue;
                seen[(size_t)cls * S + sl] = c + 1;
                for (uint32_t i = 0; i < ci->nops; i++) {
                    const rs_op *o = &ci->ops[i];
                    if (o->kind != RS_OP_COLL || o->comm != sl)
                        continue;
                    if ((rc = rs_array_reserve(&k, &cap, nk + 1, sizeof *k, 64)) != RS_OK)
                        break;
                    k[nk++] = (call_key){ o->bytes, o->coll, o };
                }
            }
        }
        if (rc != RS_OK)
            break;
        qsort(k, nk, sizeof *k, call_cmp);
        for (size_t i = 0; i < nk; i++) {
            if (i && !call_cmp(&k[i], &k[i - 1]))
                continue;
            rs_coll_needs need = { .size = sizeof need };
            rs_coll_req req;
            rs_err e;
            rs_replay_coll_req(r, c, (uint8_t)k[i].coll, k[i].bytes, &req);
            if ((rc = rs_coll_needs_get(r->net, cm->comm, &req, &need, &e)) != RS_OK) {
                rs_err_set(err, rc, "%scommunicator %u (coll \"%s\", %s of %llu bytes): %.400s",
                           req.algo != RS_ALGO_AUTO ? "workload.algo: " : "", c, rs_replay_label(r, k[i].op),
                           rs_coll_op_name((rs_coll_op)k[i].coll), (unsigned long long)k[i].bytes, e.msg);
                break;
            }
        }
    }
    free(k);
    free(seen);
    return rc == RS_ENOMEM ? rs_err_set(err, rc, "out of memory checking the replay's collectives") : rc;
}

/* Per rank: no two used slots may name the same communicator or peer (the
 * per-slot call counts would then not be per-communicator counts); the
 * peer's slot pointing back for each p2p slot. */
static int slots_build(rs_replay *r, rs_err *err)
{
    uint32_t S = r->nslots;
    for (uint32_t rank = 0; rank < r->nranks; rank++) {
        const uint32_t *slots = rs_trace_rank_slots(r->t, rank);
        const cls_info *ci = &r->cls[r->rk[rank].cls];
        for (uint32_t s = 0; s < S; s++) {
            if (ci->slot_kind[s] == SK_NONE)
                continue;
            for (uint32_t s2 = s + 1; s2 < S; s2++)
                if (ci->slot_kind[s2] == ci->slot_kind[s] && slots[s2] == slots[s])
                    return rs_err_set(err, RS_EINVAL,
                                      "trace: rank %u uses slots %u and %u for the same %s %u; replay "
                                      "matches calls per slot and needs one slot per %s",
                                      rank, s, s2, ci->slot_kind[s] == SK_COLL ? "communicator" : "peer rank",
                                      slots[s], ci->slot_kind[s] == SK_COLL ? "communicator" : "peer");
            if (ci->slot_kind[s] != SK_P2P)
                continue;
            uint32_t peer = slots[s];
            const uint32_t *ps = rs_trace_rank_slots(r->t, peer);
            const cls_info *pc = &r->cls[r->rk[peer].cls];
            for (uint32_t s2 = 0; s2 < S; s2++)
                if (ps[s2] == rank && pc->slot_kind[s2] == SK_P2P) {
                    r->aux[(size_t)rank * S + s] = s2;
                    break;
                }
        }
    }
    return RS_OK;
}


int rs_replay_build(rs_replay *r, rs_err *err)
{
    int rc;
    for (uint32_t c = 0; c < r->nclasses; c++)
        if ((rc = cls_build(r, c, err)) != RS_OK)
            return rc;
    uint64_t off = 0;
    for (uint32_t rank = 0; rank < r->nranks; rank++) {
        rank_st *k = &r->rk[rank];
        k->cls = rs_trace_rank_class(r->t, rank);
        k->state_off = off;
        off += r->cls[k->cls].nops;
        r->gpu[rank] = rs_trace_rank_gpu(r->t, rank);
        for (uint32_t s = 0; s < RS_STREAMS_MAX; s++)
            k->head[s] = RS_NONE;
    }
    r->ops_total = off * r->iterations;
    r->state = malloc(off ? off : 1);
    if (!r->state) {
        return rs_err_set(err, RS_ENOMEM, "out of memory for the replay's %llu op states", (unsigned long long)off);
    }
    if ((rc = slots_build(r, err)) != RS_OK)
        return rc;
    rs_net_topo_info ti;
    rs_net_topo_info_get(r->net, &ti);
    uint32_t hb = r->copts.hb_size ? r->copts.hb_size : ti.hb_domains ? rs_net_gpus(r->net) / ti.hb_domains : 1;
    if ((rc = comms_build(r, hb, err)) != RS_OK)
        return rc;
    if (r->sync == RS_SYNC_RANK && (rc = names_build(r, err)) != RS_OK)
        return rc;
    if ((r->sync != RS_SYNC_RANK || rs_net_streams(r->net)) && (rc = calls_check(r, err)) != RS_OK)
        return rc;
    return RS_OK;
}
