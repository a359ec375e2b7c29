/*
 * chakra_dag.c - one rank's Chakra DAG into a railsim program (docs/chakra.md,
 * "Streams and dependencies"). Nodes are indexed by id; a topological order
 * by Kahn's algorithm takes the earliest node of the file first (so a file
 * written in a valid order keeps it); then one pass in that order builds
 * the program. Each op carries a vector clock over the 16 streams (vc[s] =
 * the last op of stream s known complete before it ends): since a stream
 * runs in order, any set of dependencies reduces to at most one op per
 * stream, a dependency is implied when the clock already covers it, and a
 * contracted node is just the clock of what it waited for. O(nodes x 16)
 * time and memory.
 *
 * The program, its labels (interned in the import until the trace exists)
 * and its slots go to the import state; so do the rank's sends, receives
 * and collectives, which chakra_import.c matches across ranks.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"

#include "chakra_int.h"

/* ---- one rank's DAG -> program ------------------------------------------------------- */

typedef struct idpos {
    uint64_t id;
    uint32_t i;
} idpos;

static int cmp_idpos(const void *a, const void *b)
{
    const idpos *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id ? 1 : x->i < y->i ? -1 : x->i > y->i;
}

static uint32_t find_id(const idpos *ix, uint32_t n, uint64_t id)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t m = lo + (hi - lo) / 2;
        if (ix[m].id < id)
            lo = m + 1;
        else
            hi = m;
    }
    return lo < n && ix[lo].id == id ? ix[lo].i : RS_NONE;
}

/* min-heap of node indices (file order). */
static void heap_push(uint32_t *h, uint32_t *n, uint32_t v)
{
    uint32_t i = (*n)++;
    while (i && h[(i - 1) / 2] > v) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = v;
}

static uint32_t heap_pop(uint32_t *h, uint32_t *n)
{
    uint32_t top = h[0], v = h[--*n], i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1] < h[c])
            c++;
        if (h[c] >= v)
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n)
        h[i] = v;
    return top;
}

typedef struct vclock {
    uint32_t v[S];
} vclock;

static void vc_merge(vclock *a, const vclock *b)
{
    for (uint32_t s = 0; s < S; s++)
        if (b->v[s] != RS_NONE && (a->v[s] == RS_NONE || b->v[s] > a->v[s]))
            a->v[s] = b->v[s];
}

static int covered(const vclock *k, uint32_t s, uint32_t op)
{
    return k->v[s] != RS_NONE && k->v[s] >= op;
}

typedef struct build {
    rs_op *ops;
    vclock *vc;      /* per op: what is complete when it ends */
    uint32_t n, capops, capvc;
    uint32_t last[S];
} build;

static int emit(build *b, const rs_op *o, const vclock *known)
{
    if (rs_array_reserve32(&b->ops, &b->capops, b->n + 1, sizeof *b->ops, 64) ||
        rs_array_reserve32(&b->vc, &b->capvc, b->n + 1, sizeof *b->vc, 64))
        return -1;
    b->ops[b->n] = *o;
    b->vc[b->n] = *known;
    b->vc[b->n].v[o->stream] = b->n;
    b->last[o->stream] = b->n;
    b->n++;
    return 0;
}

/* The explicit deps op (on stream s) needs beyond what known covers,
 * fewest first-found: latest candidates first, each one's own clock
 * covering earlier ones. Updates known. */
static uint32_t reduce_deps(const build *b, const vclock *need, vclock *known, uint32_t *dep)
{
    uint32_t cand[S], nc = 0, ndep = 0;
    for (uint32_t s = 0; s < S; s++)
        if (need->v[s] != RS_NONE && !covered(known, s, need->v[s]))
            cand[nc++] = need->v[s];
    for (uint32_t i = 1; i < nc; i++) /* descending */
        for (uint32_t j = i; j > 0 && cand[j] > cand[j - 1]; j--) {
            uint32_t x = cand[j];
            cand[j] = cand[j - 1];
            cand[j - 1] = x;
        }
    for (uint32_t i = 0; i < nc; i++) {
        uint32_t c = cand[i];
        if (covered(known, b->ops[c].stream, c))
            continue;
        dep[ndep++] = c;
        vc_merge(known, &b->vc[c]);
    }
    return ndep;
}

static int slot_of(imp *im, rank_in *ri, const nd *d, uint32_t *slot)
{
    uint8_t coll = d->kind == RS_OP_COLL;
    uint32_t v = coll ? d->comm : d->peer;
    for (uint32_t i = 0; i < ri->nslots; i++)
        if (ri->slot_coll[i] == coll && ri->slots[i] == v) {
            *slot = i;
            return RS_OK;
        }
    if (ri->nslots == RS_TRACE_MAX_SLOTS)
        return rs_chakra_bad_at(im->err, ri->f->name, ri->f->rank, d->off,
                                "node %" PRIu64 ": more than %u distinct process groups and peers on one rank",
                                d->id, RS_TRACE_MAX_SLOTS);
    ri->slot_coll[ri->nslots] = coll;
    ri->slots[ri->nslots] = v;
    *slot = ri->nslots++;
    return RS_OK;
}

static uint32_t str_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

/* Intern s in the import's own table (the trace is created only once the
 * slot count is known); *id its index. */
static int str_intern(imp *im, const char *s, uint32_t *id)
{
    if (im->nstrs * 2 >= im->hcap) {
        uint32_t nc = im->hcap ? im->hcap * 2 : 64;
        uint32_t *nh = calloc(nc, sizeof *nh);
        if (!nh)
            return -1;
        for (uint32_t i = 0; i < im->nstrs; i++) {
            uint32_t h = str_hash(im->strs[i]) & (nc - 1);
            while (nh[h])
                h = (h + 1) & (nc - 1);
            nh[h] = i + 1;
        }
        free(im->shash);
        im->shash = nh;
        im->hcap = nc;
    }
    uint32_t h = str_hash(s) & (im->hcap - 1);
    while (im->shash[h]) {
        if (!strcmp(im->strs[im->shash[h] - 1], s)) {
            *id = im->shash[h] - 1;
            return 0;
        }
        h = (h + 1) & (im->hcap - 1);
    }
    if (rs_array_reserve32(&im->strs, &im->capstrs, im->nstrs + 1, sizeof *im->strs, 16))
        return -1;
    if (!(im->strs[im->nstrs] = strdup(s)))
        return -1;
    im->shash[h] = im->nstrs + 1;
    *id = im->nstrs++;
    return 0;
}

/* The node's name as a label: control characters blanked, at most 255
 * bytes, never ending inside a UTF-8 sequence. */
static int label_of(imp *im, const pb_node *p, uint32_t *id)
{
    char s[256];
    size_t n = 0;
    for (const char *c = p->name ? p->name : ""; *c && n < sizeof s - 1; c++)
        s[n++] = (unsigned char)*c < 0x20 || *c == 0x7f ? ' ' : *c;
    if (n == sizeof s - 1) {
        while (n > 0 && ((unsigned char)s[n - 1] & 0xc0) == 0x80)
            n--;
        if (n > 0 && (unsigned char)s[n - 1] >= 0xc0)
            n--;
    }
    s[n] = 0;
    if (n == 0)
        snprintf(s, sizeof s, "%s", "chakra node");
    return str_intern(im, s, id) ? rs_chakra_oom(im->err) : RS_OK;
}

int rs_chakra_build_rank(imp *im, rank_in *ri)
{
    rs_err *err = im->err;
    uint32_t n = ri->n;
    int rc = RS_ENOMEM;
    idpos *ix = malloc(((size_t)n + 1) * sizeof *ix);
    uint32_t *indeg = calloc((size_t)n + 1, sizeof *indeg);
    uint32_t *roff = calloc((size_t)n + 2, sizeof *roff);
    uint32_t *heap = malloc(((size_t)n + 1) * sizeof *heap);
    uint32_t *order = malloc(((size_t)n + 1) * sizeof *order);
    vclock *nvc = malloc(((size_t)n + 1) * sizeof *nvc);
    uint32_t *radj = NULL, *fill = NULL;
    build b = { 0 };
    for (uint32_t s = 0; s < S; s++)
        b.last[s] = RS_NONE;
    if (!ix || !indeg || !roff || !heap || !order || !nvc)
        goto out;
    for (uint32_t i = 0; i < n; i++)
        ix[i] = (idpos){ ri->nodes[i].id, i };
    if (n)
        qsort(ix, n, sizeof *ix, cmp_idpos);
    for (uint32_t i = 1; i < n; i++)
        if (ix[i].id == ix[i - 1].id) {
            rc = BADAT(ri, ri->nodes[ix[i].i].off, "node id %" PRIu64 " used twice (first at byte offset %zu)",
                       ix[i].id, ri->nodes[ix[i - 1].i].off);
            goto out;
        }
    /* Dependencies: resolve, count (a dep listed twice, or as both control
     * and data, counts once per listing; harmless). */
    uint64_t ne = 0;
    for (uint32_t i = 0; i < n; i++) {
        const pb_node *p = ri->nodes[i].pb;
        for (int k = 0; k < 2; k++) {
            size_t m = k ? p->n_data_deps : p->n_ctrl_deps;
            const uint64_t *dl = k ? p->data_deps : p->ctrl_deps;
            for (size_t j = 0; j < m; j++) {
                uint32_t q = find_id(ix, n, dl[j]);
                if (q == RS_NONE) {
                    rc = BADAT(ri, ri->nodes[i].off, "node %" PRIu64 " has a %s dependency on node %" PRIu64
                               ", which is not in the file", ri->nodes[i].id, k ? "data" : "control", dl[j]);
                    goto out;
                }
                if (q == i) {
                    rc = BADAT(ri, ri->nodes[i].off, "node %" PRIu64 " depends on itself (a cycle)",
                               ri->nodes[i].id);
                    goto out;
                }
                roff[q + 1]++;
                indeg[i]++;
                ne++;
            }
        }
    }
    if (ne > UINT32_MAX - 1) {
        rc = BADAT(ri, 0, "more than 2^32 dependencies");
        goto out;
    }
    for (uint32_t i = 0; i < n; i++)
        roff[i + 1] += roff[i];
    radj = malloc((size_t)(ne ? ne : 1) * sizeof *radj);
    fill = malloc(((size_t)n + 1) * sizeof *fill);
    if (!radj || !fill)
        goto out;
    if (n)
        memcpy(fill, roff, (size_t)n * sizeof *fill);
    for (uint32_t i = 0; i < n; i++) {
        const pb_node *p = ri->nodes[i].pb;
        for (size_t j = 0; j < p->n_ctrl_deps; j++)
            radj[fill[find_id(ix, n, p->ctrl_deps[j])]++] = i;
        for (size_t j = 0; j < p->n_data_deps; j++)
            radj[fill[find_id(ix, n, p->data_deps[j])]++] = i;
    }
    /* Kahn, earliest in the file first. */
    uint32_t nh = 0, no = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!indeg[i])
            heap_push(heap, &nh, i);
    while (nh) {
        uint32_t i = heap_pop(heap, &nh);
        order[no++] = i;
        for (uint32_t q = roff[i]; q < roff[i + 1]; q++)
            if (--indeg[radj[q]] == 0)
                heap_push(heap, &nh, radj[q]);
    }
    if (no < n) {
        /* Walk back along unfinished deps until a node repeats: it is on a cycle. */
        uint32_t i = 0;
        while (!indeg[i])
            i++;
        memset(fill, 0, (size_t)n * sizeof *fill);
        for (;;) {
            fill[i] = 1;
            const pb_node *p = ri->nodes[i].pb;
            uint32_t nx = RS_NONE;
            for (size_t j = 0; j < p->n_ctrl_deps + p->n_data_deps && nx == RS_NONE; j++) {
                uint64_t id = j < p->n_ctrl_deps ? p->ctrl_deps[j] : p->data_deps[j - p->n_ctrl_deps];
                uint32_t q = find_id(ix, n, id);
                if (indeg[q])
                    nx = q;
            }
            if (nx == RS_NONE || fill[nx]) {
                i = nx == RS_NONE ? i : nx;
                break;
            }
            i = nx;
        }
        rc = BADAT(ri, ri->nodes[i].off, "node %" PRIu64 " is on a dependency cycle", ri->nodes[i].id);
        goto out;
    }
    /* One pass in that order. */
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = order[k];
        nd *d = &ri->nodes[i];
        const pb_node *p = d->pb;
        vclock need;
        for (uint32_t s = 0; s < S; s++)
            need.v[s] = RS_NONE;
        for (size_t j = 0; j < p->n_ctrl_deps + p->n_data_deps; j++) {
            uint64_t id = j < p->n_ctrl_deps ? p->ctrl_deps[j] : p->data_deps[j - p->n_ctrl_deps];
            vc_merge(&need, &nvc[find_id(ix, n, id)]);
        }
        if (d->kind == K_NOOP) {
            nvc[i] = need;
            if (im->st)
                im->st->contracted++;
            continue;
        }
        rs_op o = { .kind = d->kind, .dim = d->dim, .coll = d->coll, .comm = RS_NONE, .dep = { RS_NONE, RS_NONE },
                    .bytes = d->bytes, .duration = d->kind == RS_OP_COMPUTE ? d->dur : 0 };
        if (d->kind == RS_OP_COMPUTE) {
            o.bytes = 0;
            o.stream = 0;
        } else if (d->stream > 0) {
            o.stream = (uint8_t)d->stream;
        } else {
            /* A stream whose last op this one needs (no new ordering),
             * else an empty one, else the one whose last op is oldest. */
            int pick = -1, empty = -1, oldest = -1;
            for (uint32_t s = 1; s < S; s++) {
                if (b.last[s] == RS_NONE) {
                    if (empty < 0)
                        empty = (int)s;
                } else if (need.v[s] == b.last[s]) {
                    if (pick < 0)
                        pick = (int)s;
                } else if (oldest < 0 || b.last[s] < b.last[oldest]) {
                    oldest = (int)s;
                }
            }
            if (pick < 0)
                pick = empty;
            if (pick < 0) {
                pick = oldest;
                if (im->st)
                    im->st->serialized++;
            }
            o.stream = (uint8_t)pick;
        }
        if ((rc = label_of(im, p, &o.label)))
            goto out;
        if (d->kind != RS_OP_COMPUTE && (rc = slot_of(im, ri, d, &o.comm)))
            goto out;
        vclock known;
        if (b.last[o.stream] != RS_NONE) {
            known = b.vc[b.last[o.stream]];
        } else {
            for (uint32_t s = 0; s < S; s++)
                known.v[s] = RS_NONE;
        }
        uint32_t dep[S];
        vclock scratch = known;
        uint32_t ndep = reduce_deps(&b, &need, &scratch, dep);
        /* More than two: zero-time compute joins on stream 0 take them two
         * at a time, each after the one before by stream order; a compute op
         * then follows the last join on its stream, a communication op names
         * it as a dependency (docs/chakra.md: the cost of this). */
        uint32_t di = 0, joined = RS_NONE;
        while (ndep - di + (o.stream != 0 && joined != RS_NONE) > 2) {
            rs_op j = { .kind = RS_OP_COMPUTE, .stream = 0, .comm = RS_NONE, .label = o.label,
                        .dep = { dep[di], dep[di + 1] } };
            di += 2;
            vclock jk;
            if (b.last[0] != RS_NONE) {
                jk = b.vc[b.last[0]];
            } else {
                for (uint32_t s = 0; s < S; s++)
                    jk.v[s] = RS_NONE;
            }
            vc_merge(&jk, &b.vc[j.dep[0]]);
            vc_merge(&jk, &b.vc[j.dep[1]]);
            if (emit(&b, &j, &jk)) {
                rc = rs_chakra_oom(err);
                goto out;
            }
            joined = b.n - 1;
            if (im->st)
                im->st->joins++;
            if (o.stream == 0)
                known = b.vc[joined];
        }
        uint32_t k2 = 0;
        if (o.stream != 0 && joined != RS_NONE) {
            o.dep[k2++] = joined;
            vc_merge(&known, &b.vc[joined]);
        }
        /* known is now what stream order (and the last join) covers */
        for (uint32_t q = di; q < ndep; q++)
            if (!covered(&known, b.ops[dep[q]].stream, dep[q])) {
                /* the joins left at most two (one beside a join) */
                if (RS_NEVER(k2 >= 2)) {
                    rc = RS_EINTERNAL;
                    goto out;
                }
                o.dep[k2++] = dep[q];
                vc_merge(&known, &b.vc[dep[q]]);
            }
        if (o.dep[0] == RS_NONE && o.dep[1] != RS_NONE) {
            o.dep[0] = o.dep[1];
            o.dep[1] = RS_NONE;
        }
        if (emit(&b, &o, &known)) {
            rc = rs_chakra_oom(err);
            goto out;
        }
        nvc[i] = b.vc[b.n - 1];
        if (d->kind == RS_OP_COMPUTE)
            im->flops += d->flops;
        /* for matching across ranks */
        if (d->kind == RS_OP_SEND || d->kind == RS_OP_RECV) {
            if (rs_array_reserve(&im->msgs, &im->capmsgs, im->nmsgs + 1, sizeof *im->msgs, 16)) {
                rc = rs_chakra_oom(err);
                goto out;
            }
            int send = d->kind == RS_OP_SEND;
            im->msgs[im->nmsgs++] = (p2p){ .src = send ? ri->f->rank : d->peer, .dst = send ? d->peer : ri->f->rank,
                                           .file = (uint32_t)(ri - im->rk), .send = (uint8_t)send, .tag = d->tag,
                                           .bytes = d->bytes, .id = d->id, .off = d->off };
        } else if (d->kind == RS_OP_COLL) {
            if (im->ncevs >= UINT32_MAX) {
                rc = BADAT(ri, d->off, "more than 2^32 collectives in all");
                goto out;
            }
            if (rs_array_reserve(&im->cevs, &im->capcevs, im->ncevs + 1, sizeof *im->cevs, 16)) {
                rc = rs_chakra_oom(err);
                goto out;
            }
            im->cevs[im->ncevs++] = (cev){ .comm = d->comm, .rank = ri->f->rank, .file = (uint32_t)(ri - im->rk),
                                           .coll = d->coll, .bytes = d->bytes, .id = d->id, .off = d->off };
        }
    }
    ri->ops = b.ops;
    ri->nops = b.n;
    b.ops = NULL;
    rc = RS_OK;
out:
    if (rc == RS_ENOMEM && !err->msg[0])
        rs_chakra_oom(err);
    free(b.ops);
    free(b.vc);
    free(ix);
    free(indeg);
    free(roff);
    free(heap);
    free(order);
    free(nvc);
    free(radj);
    free(fill);
    return rc;
}
