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
#include <string.h>

#include "pool.h"

/* 4 segments hide most of the shorter phases (NVLink is ~9x faster than a
 * NIC) while each segment stays large enough to keep the rings efficient. */
#define HIER_SEGMENTS 4u
#define HIER_MIN_SEGMENT (4u << 20)

static void kid_done(void *ctx, rs_net *net, uint64_t tag);

static uint32_t phases(const rs_coll *c) { return c->op == RS_COLL_ALLREDUCE ? 3 : 2; }

/* The request of a sub-collective of c: its members join (member), told
 * to c. Sub-collectives inherit the options (channels 0 stays auto, so
 * each phase picks its own) and the resolved HB size. */
static rs_coll_req kid_req(rs_coll *c, rs_coll_op op, rs_coll_algo algo, uint64_t bytes, rs_coll_member_fn member)
{
    rs_coll_req req;
    rs_coll_req_init(&req, op, bytes);
    req.algo = algo;
    req.opts = &c->o;
    req.member_done = member;
    req.ctx = c;
    return req;
}

/* A sub-collective of c over gpus[0..n), reserved as *reserved (NULL:
 * not named). */
static int launch(rs_coll *c, const uint32_t *gpus, uint32_t n, rs_coll_op op, rs_coll_algo algo,
                  uint64_t bytes, rs_coll_member_fn member, rs_coll_done_fn done, uint64_t tag,
                  const rs_coll_reservation *reserved, rs_coll **out, rs_err *err)
{
    if (rs_array_reserve32(&c->kids, &c->nkids_cap, c->nkids + 1, sizeof *c->kids, 16) != RS_OK)
        return rs_err_set(err, RS_ENOMEM, "out of memory starting a hierarchical phase");
    rs_coll *kid;
    rs_coll_req req = kid_req(c, op, algo, bytes, member);
    req.done = done;
    req.tag = tag;
    req.reserved = reserved;
    int rc = rs_coll_launch(c->net, gpus, n, &req, c, NULL, &kid, err);
    if (rc != RS_OK)
        return rc;
    c->kids[c->nkids++] = kid;
    if (out)
        *out = kid;
    return RS_OK;
}

/* Phase ph's sub-collectives: intra-domain (one per domain) or across
 * domains (one per rail group), their op and algorithm. */
static int phase_desc(const rs_coll *c, uint32_t ph, rs_coll_op *op, rs_coll_algo *algo)
{
    *algo = RS_ALGO_RING;
    switch (c->op) {
    case RS_COLL_ALLREDUCE:
        *op = ph == 0 ? RS_COLL_REDUCESCATTER : ph == 1 ? RS_COLL_ALLREDUCE : RS_COLL_ALLGATHER;
        if (ph == 1)
            *algo = RS_ALGO_AUTO;
        return ph != 1;
    case RS_COLL_REDUCESCATTER:
        *op = RS_COLL_REDUCESCATTER;
        return ph == 0;
    default: /* allgather */
        *op = RS_COLL_ALLGATHER;
        return ph == 1;
    }
}

/* Sub-collective g of phase ph of segment s: its GPUs (into buf) and
 * bytes. */
static uint64_t kid_group(const rs_coll *c, uint32_t s, int intra, uint32_t g, uint32_t *buf, uint32_t *n)
{
    const coll_groups *cg = &c->g;
    uint32_t N = cg->ndom, L = cg->kmax;
    uint64_t bytes = coll_split(c->bytes, c->nseg, s);
    if (intra) {
        for (uint32_t l = 0; l < L; l++)
            buf[l] = c->gpu[cg->dom_rank[cg->dom_off[g] + l]];
        *n = L;
        return bytes;
    }
    for (uint32_t d = 0; d < N; d++)
        buf[d] = c->gpu[cg->dom_rank[cg->dom_off[d] + g]];
    *n = N;
    return coll_split(bytes, L, g);
}

/* Launch phase seg_phase[s] of segment s: one sub-collective per domain
 * (intra phases) or per rail group (the cross-domain phase). */
static int phase_start(rs_coll *c, uint32_t s, rs_err *err)
{
    const coll_groups *g = &c->g;
    uint32_t N = g->ndom, L = g->kmax, ph = c->seg_phase[s];
    uint32_t *buf = malloc((size_t)(N > L ? N : L) * sizeof *buf);
    if (!buf)
        return rs_err_set(err, RS_ENOMEM, "out of memory starting a hierarchical phase");
    int rc = RS_OK;
    rs_coll_op op;
    rs_coll_algo algo;
    int intra = phase_desc(c, ph, &op, &algo);
    uint64_t tag = ((uint64_t)s << 8) | ph;
    c->seg_left[s] = intra ? N : L;
    for (uint32_t k = 0; k < c->seg_left[s] && rc == RS_OK; k++) {
        uint32_t n;
        uint64_t bytes = kid_group(c, s, intra, k, buf, &n);
        rc = launch(c, buf, n, op, algo, bytes, NULL, kid_done, tag, NULL, NULL, err);
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

/* -- members joining one by one (rs_coll_create) ----------------------------
 * Member x's part of (segment s, phase p) is its part of that phase's
 * sub-collective for its domain (intra) or its rail group (across), a
 * collective of members joining too: x joins it once its part of (s, p-1)
 * is done (its data) and its part of (s-1, p) is (its links serve one
 * segment at a time), the order the whole-group rule above keeps, per
 * member. A sub-collective is created when its first member joins. x is
 * done when its part of the last segment's last phase is. */

enum { HIER_IDLE = 0, HIER_IN = 1, HIER_DONE = 2 };

static uint8_t *hstate(rs_coll *c, uint32_t x, uint32_t s, uint32_t p)
{
    return &c->hdone[((size_t)x * c->nseg + s) * phases(c) + p];
}

static void hier_member_done(void *ctx, rs_net *net, uint64_t tag, uint32_t member);
static void hier_kid_done(void *ctx, rs_net *net, uint64_t tag);

static int named(const rs_coll *c) { return c->cb0 != RS_COLL_NONE || c->serial0 != UINT64_MAX; }

/* Sub-collective g of (segment s, phase p), made on first use: when its
 * first member here joins, or (a split run) when another process names
 * one of its callbacks first (rs_coll_hier_bind). Named from its parent's
 * name, by its place. */
static int hier_kid(rs_coll *c, uint32_t s, uint32_t p, uint32_t g, rs_err *err)
{
    size_t q = ((size_t)s * phases(c) + p) * c->hgroups + g;
    if (c->hkid[q])
        return RS_OK;
    rs_coll_op op;
    rs_coll_algo algo;
    int intra = phase_desc(c, p, &op, &algo);
    uint32_t *buf = malloc((size_t)c->hgroups * sizeof *buf), n;
    if (!buf)
        return rs_err_set(err, RS_ENOMEM, "out of memory starting a hierarchical phase");
    uint64_t bytes = kid_group(c, s, intra, g, buf, &n);
    rs_coll_reservation name = { UINT64_MAX, RS_COLL_NONE };
    if (c->serial0 != UINT64_MAX)
        name.serial0 = c->serial0 + c->hk_serial[q];
    if (c->cb0 != RS_COLL_NONE && c->hk_cb[q] != RS_COLL_NONE)
        name.cb0 = c->cb0 + c->hk_cb[q];
    int rc = launch(c, buf, n, op, algo, bytes, hier_member_done, hier_kid_done,
                    ((uint64_t)g << 32) | ((uint64_t)s << 8) | p, named(c) ? &name : NULL, &c->hkid[q], err);
    free(buf);
    return rc;
}

/* x joins (s, p) if it may. */
static int hier_try(rs_coll *c, uint32_t x, uint32_t s, uint32_t p, rs_err *err)
{
    uint32_t P = phases(c);
    if (s >= c->nseg || p >= P || *hstate(c, x, s, p) != HIER_IDLE ||
        (p > 0 && *hstate(c, x, s, p - 1) != HIER_DONE) || (s > 0 && *hstate(c, x, s - 1, p) != HIER_DONE))
        return RS_OK;
    rs_coll_op op;
    rs_coll_algo algo;
    int intra = phase_desc(c, p, &op, &algo);
    uint32_t L = c->g.kmax, d = c->pos_of[x] / L, l = c->pos_of[x] % L;
    uint32_t g = intra ? d : l, member = intra ? l : d;
    int rc = hier_kid(c, s, p, g, err);
    if (rc != RS_OK)
        return rc;
    *hstate(c, x, s, p) = HIER_IN;
    return rs_coll_join(c->hkid[((size_t)s * P + p) * c->hgroups + g], member);
}

int rs_coll_hier_bind(rs_coll *c, uint32_t off)
{
    if (!c->hk_cb)
        return RS_EINVAL;
    size_t Q = (size_t)c->nseg * phases(c) * c->hgroups;
    for (size_t q = 0; q < Q; q++)
        if (c->hk_cb[q] != RS_COLL_NONE && off >= c->hk_cb[q] && off - c->hk_cb[q] < 2) {
            uint32_t g = (uint32_t)(q % c->hgroups), sp = (uint32_t)(q / c->hgroups);
            rs_err err;
            int rc = hier_kid(c, sp / phases(c), sp % phases(c), g, &err);
            if (rc != RS_OK)
                rs_coll_fail(c, rc);
            return rc;
        }
    return RS_EINVAL;
}

/* A named (or probed) hierarchical collective: each sub-collective's
 * serials and callback indices, from its parent's, in place order; what
 * they add up to into the probe. Sub-collectives of one phase differ at
 * most in one byte (kid_group), so each size is asked once per run of
 * equal ones. */
static int hier_names(rs_coll *c, rs_err *err)
{
    uint32_t P = phases(c), N = c->g.ndom, L = c->g.kmax;
    size_t Q = (size_t)c->nseg * P * c->hgroups;
    c->hk_serial = malloc((Q ? Q : 1) * sizeof *c->hk_serial);
    c->hk_cb = malloc((Q ? Q : 1) * sizeof *c->hk_cb);
    uint32_t *buf = malloc((size_t)c->hgroups * sizeof *buf);
    int rc = RS_OK;
    if (!c->hk_serial || !c->hk_cb || !buf) {
        free(buf);
        return rs_err_set(err, RS_ENOMEM, "out of memory naming a hierarchical collective");
    }
    rs_coll_needs total = { .size = sizeof total }, last = { .size = sizeof last };
    uint64_t last_bytes = UINT64_MAX;
    uint32_t last_p = UINT32_MAX;
    for (size_t q = 0; q < Q && rc == RS_OK; q++) {
        uint32_t g = (uint32_t)(q % c->hgroups), s = (uint32_t)(q / c->hgroups / P),
                 p = (uint32_t)(q / c->hgroups % P), n;
        rs_coll_op op;
        rs_coll_algo algo;
        int intra = phase_desc(c, p, &op, &algo);
        c->hk_serial[q] = total.serials;
        c->hk_cb[q] = RS_COLL_NONE;
        if (g >= (intra ? N : L))
            continue;
        c->hk_cb[q] = total.cbs;
        uint64_t bytes = kid_group(c, s, intra, g, buf, &n);
        /* A rail group off one rail would cross by PXN relays (its
         * members' order aside: the group's GPUs are in other domains). */
        for (uint32_t i = 1; c->probe && !intra && i < n; i++)
            if (rs_net_relayed(c->net, buf[0], buf[i])) {
                c->probe->relayed++;
                break;
            }
        if (p != last_p || bytes != last_bytes) {
            rs_coll *kid;
            memset(&last, 0, sizeof last);
            rs_coll_req req = kid_req(c, op, algo, bytes, hier_member_done);
            rc = rs_coll_launch(c->net, buf, n, &req, c, &last, &kid, err);
            rs_coll_destroy(kid);
            last_p = p;
            last_bytes = bytes;
        }
        if (last.cbs == 0)
            c->hk_cb[q] = RS_COLL_NONE; /* empty (fewer bytes than pieces): nothing to name, nor to bind */
        total.serials += last.serials;
        total.cbs += last.cbs;
    }
    free(buf);
    if (rc == RS_OK && c->probe) {
        c->probe->serials += total.serials;
        c->probe->cbs += total.cbs;
    }
    return rc;
}

static void hier_member_done(void *ctx, rs_net *net, uint64_t tag, uint32_t member)
{
    (void)net;
    rs_coll *c = ctx;
    uint32_t g = (uint32_t)(tag >> 32), s = (uint32_t)(tag >> 8) & 0xffffff, p = (uint32_t)tag & 0xff;
    rs_coll_op op;
    rs_coll_algo algo;
    int intra = phase_desc(c, p, &op, &algo);
    uint32_t d = intra ? g : member, l = intra ? member : g;
    uint32_t x = c->g.dom_rank[c->g.dom_off[d] + l];
    *hstate(c, x, s, p) = HIER_DONE;
    if (s + 1 == c->nseg && p + 1 == phases(c)) {
        rs_coll_member_step(c, x);
        return;
    }
    rs_err err;
    int rc = hier_try(c, x, s, p + 1, &err);
    if (rc == RS_OK)
        rc = hier_try(c, x, s + 1, p, &err);
    if (rc != RS_OK)
        rs_coll_fail(c, rc);
}

static void hier_kid_done(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    (void)tag;
    rs_coll_advance(ctx, 1); /* last: may finish and free c */
}

int rs_coll_hier_join(rs_coll *c, uint32_t x)
{
    rs_err err;
    int rc = hier_try(c, x, 0, 0, &err);
    if (rc != RS_OK)
        rs_coll_fail(c, rc);
    return rc;
}

static int hier_join_setup(rs_coll *c, rs_err *err)
{
    const coll_groups *g = &c->g;
    uint32_t N = g->ndom, L = g->kmax, P = phases(c);
    c->hgroups = N > L ? N : L;
    c->hkid = calloc((size_t)c->nseg * P * c->hgroups, sizeof *c->hkid);
    c->hdone = calloc((size_t)c->n * c->nseg * P, 1);
    c->pos_of = malloc((size_t)c->n * sizeof *c->pos_of); /* rank -> domain x L + local index */
    if (!c->hkid || !c->hdone || !c->pos_of)
        return rs_err_set(err, RS_ENOMEM, "out of memory starting a hierarchical collective");
    c->pending = 0; /* one per sub-collective */
    for (uint32_t p = 0; p < P; p++) {
        rs_coll_op op;
        rs_coll_algo algo;
        c->pending += (uint64_t)c->nseg * (phase_desc(c, p, &op, &algo) ? N : L);
    }
    for (uint32_t d = 0; d < N; d++)
        for (uint32_t l = 0; l < L; l++)
            c->pos_of[g->dom_rank[g->dom_off[d] + l]] = d * L + l;
    for (uint32_t x = 0; x < c->n; x++)
        c->mleft[x] = 1;
    return named(c) || c->probe ? hier_names(c, err) : RS_OK;
}

int rs_coll_hier_start(rs_coll *c, rs_err *err)
{
    uint64_t segs = c->bytes / HIER_MIN_SEGMENT;
    c->nseg = segs < 1 ? 1 : segs > HIER_SEGMENTS ? HIER_SEGMENTS : (uint32_t)segs;
    c->seg_phase = calloc(c->nseg, sizeof *c->seg_phase);
    c->seg_left = calloc(c->nseg, sizeof *c->seg_left);
    if (!c->seg_phase || !c->seg_left)
        return rs_err_set(err, RS_ENOMEM, "out of memory starting a hierarchical collective");
    if (c->member_done)
        return hier_join_setup(c, err);
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
    free(c->hkid);
    free(c->hdone);
    c->hkid = NULL;
    c->hdone = NULL;
    c->kids = NULL;
    c->nkids = 0;
}
