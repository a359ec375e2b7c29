/*
 * coll_hier.c - hierarchical AllReduce, AllGather and ReduceScatter over a
 * group that spans N HB domains with L GPUs in each.
 *
 * Local index l of a rank is its position among the group's ranks of its
 * domain (communicator order); the "rail group" l holds local index l of
 * every domain. With full domains or a rail-consistent layout those GPUs
 * sit on one rail, so the cross-domain phase never needs a spine.
 *   AllReduce:     ReduceScatter inside each domain (ring over NVSwitch),
 *                  AllReduce of the 1/L shard across domains per rail
 *                  group (auto: tree when small, else ring), AllGather
 *                  inside each domain.
 *   ReduceScatter: ReduceScatter inside each domain, then ReduceScatter of
 *                  the shard across domains per rail group.
 *   AllGather:     AllGather across domains per rail group (each rank's
 *                  1/n block), then AllGather inside each domain.
 *
 * Pipelining: the buffer is cut into up to HIER_SEGMENTS segments, each
 * running the phases in order as sub-collectives. Segment s starts phase p
 * when it finished phase p-1 (its data dependency: a rail group needs one
 * shard from every domain, so at sub-collective granularity the phase is a
 * barrier) and segment s-1 finished phase p (each phase's links serve one
 * segment at a time). So NVLink phases of one segment overlap the rail
 * phase of another, as NCCL overlaps its intra- and inter-node stages.
 */
#include "coll_int.h"

#include <stdlib.h>

/* 4 segments hide most of the shorter phases (NVLink is ~9x faster than a
 * NIC) while each segment stays large enough to keep the rings efficient. */
#define HIER_SEGMENTS 4u
#define HIER_MIN_SEGMENT (4u << 20)

static void kid_done(void *ctx, rs_net *net, uint64_t tag);

static uint32_t phases(const rs_coll *c) { return c->op == RS_COLL_ALLREDUCE ? 3 : 2; }

static int launch(rs_coll *c, const uint32_t *gpus, uint32_t n, rs_coll_op op, rs_coll_algo algo,
                  uint64_t bytes, uint64_t tag, rs_err *err)
{
    if (c->nkids == c->nkids_cap) {
        uint32_t cap = c->nkids_cap ? 2 * c->nkids_cap : 16;
        rs_coll **k = realloc(c->kids, (size_t)cap * sizeof *k);
        if (!k)
            return rs_err_set(err, RS_ENOMEM, "out of memory starting a hierarchical phase");
        c->kids = k;
        c->nkids_cap = cap;
    }
    rs_coll *kid;
    /* Sub-collectives inherit the options (channels 0 stays auto, so
     * each phase picks its own) and the resolved HB size. */
    int rc = rs_coll_launch(c->net, gpus, n, op, algo, bytes, &c->o, kid_done, c, tag, c, &kid, err);
    if (rc != RS_OK)
        return rc;
    c->kids[c->nkids++] = kid;
    return RS_OK;
}

/* Launch phase seg_phase[s] of segment s: one sub-collective per domain
 * (intra phases) or per rail group (the cross-domain phase). */
static int phase_start(rs_coll *c, uint32_t s, rs_err *err)
{
    const coll_groups *g = &c->g;
    uint32_t N = g->ndom, L = g->kmax, ph = c->seg_phase[s];
    uint64_t bytes = coll_split(c->bytes, c->nseg, s);
    uint32_t *buf = malloc((size_t)(N > L ? N : L) * sizeof *buf);
    if (!buf)
        return rs_err_set(err, RS_ENOMEM, "out of memory starting a hierarchical phase");
    int intra, rc = RS_OK;
    rs_coll_op op;
    rs_coll_algo algo = RS_ALGO_RING;
    switch (c->op) {
    case RS_COLL_ALLREDUCE:
        intra = ph != 1;
        op = ph == 0 ? RS_COLL_REDUCESCATTER : ph == 1 ? RS_COLL_ALLREDUCE : RS_COLL_ALLGATHER;
        if (ph == 1)
            algo = RS_ALGO_AUTO;
        break;
    case RS_COLL_REDUCESCATTER:
        intra = ph == 0;
        op = RS_COLL_REDUCESCATTER;
        break;
    default: /* allgather */
        intra = ph == 1;
        op = RS_COLL_ALLGATHER;
        break;
    }
    uint64_t tag = ((uint64_t)s << 8) | ph;
    c->seg_left[s] = intra ? N : L;
    if (intra) {
        for (uint32_t d = 0; d < N && rc == RS_OK; d++) {
            for (uint32_t l = 0; l < L; l++)
                buf[l] = c->gpu[g->dom_rank[g->dom_off[d] + l]];
            rc = launch(c, buf, L, op, algo, bytes, tag, err);
        }
    } else {
        for (uint32_t l = 0; l < L && rc == RS_OK; l++) {
            for (uint32_t d = 0; d < N; d++)
                buf[d] = c->gpu[g->dom_rank[g->dom_off[d] + l]];
            rc = launch(c, buf, N, op, algo, coll_split(bytes, L, l), tag, err);
        }
    }
    free(buf);
    return rc;
}

/* Start segment s's next phase if its order allows; 1 if it started. */
static int try_phase(rs_coll *c, uint32_t s, int *rc, rs_err *err)
{
    if (s >= c->nseg)
        return 0;
    uint32_t ph = c->seg_phase[s];
    if (ph >= phases(c) || c->seg_left[s] || c->phase_done[ph] < s)
        return 0;
    *rc = phase_start(c, s, err);
    return 1;
}

static void kid_done(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    rs_coll *c = ctx;
    uint32_t s = (uint32_t)(tag >> 8), ph = (uint32_t)(tag & 0xff);
    if (--c->seg_left[s] > 0)
        return;
    c->phase_done[ph]++;
    c->seg_phase[s]++;
    rs_err err;
    int rc = RS_OK;
    try_phase(c, s, &rc, &err);
    if (rc == RS_OK && s + 1 < c->nseg)
        try_phase(c, s + 1, &rc, &err);
    if (rc != RS_OK) {
        rs_coll_fail(c, rc);
        return;
    }
    if (c->seg_phase[s] == phases(c))
        rs_coll_advance(c, 1); /* last: may finish and free c */
}

int rs_coll_hier_start(rs_coll *c, rs_err *err)
{
    uint64_t segs = c->bytes / HIER_MIN_SEGMENT;
    c->nseg = segs < 1 ? 1 : segs > HIER_SEGMENTS ? HIER_SEGMENTS : (uint32_t)segs;
    c->seg_phase = calloc(c->nseg, sizeof *c->seg_phase);
    c->seg_left = calloc(c->nseg, sizeof *c->seg_left);
    if (!c->seg_phase || !c->seg_left)
        return rs_err_set(err, RS_ENOMEM, "out of memory starting a hierarchical collective");
    c->pending = c->nseg; /* one per segment, released after its last phase */
    int rc = RS_OK;
    try_phase(c, 0, &rc, err);
    return rc;
}

void rs_coll_hier_free(rs_coll *c)
{
    for (uint32_t i = 0; i < c->nkids; i++)
        rs_coll_destroy(c->kids[i]);
    free(c->kids);
    free(c->seg_phase);
    free(c->seg_left);
    c->kids = NULL;
    c->nkids = 0;
}
