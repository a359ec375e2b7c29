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

/* ---- the rank's graph: ids, edges, order ------------------------------------------------- */

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

/* The rank's DAG over node indices (file order), built by the passes below. */
typedef struct dag {
    uint32_t n;
    idpos *ix;          /* (id, index) by id: find_id */
    uint32_t *indeg;    /* per node: dependencies not yet ordered */
    uint32_t *roff;     /* n + 1: node i's dependents are radj[roff[i] .. roff[i + 1]) */
    uint32_t *radj;
    uint32_t *heap;     /* Kahn's ready nodes */
    uint32_t *fill;     /* scratch: CSR fill positions, then nodes seen on a cycle walk */
    uint32_t *order;    /* the topological order */
    vclock *nvc;        /* per node: what is complete when it ends (contracted: what it waited for) */
    uint64_t ne;        /* dependencies, counted once per listing */
} dag;

/* Node p's j-th dependency: the control ones, then the data ones. */
static size_t ndeps(const pb_node *p)
{
    return p->n_ctrl_deps + p->n_data_deps;
}

static uint64_t dep_id(const pb_node *p, size_t j)
{
    return j < p->n_ctrl_deps ? p->ctrl_deps[j] : p->data_deps[j - p->n_ctrl_deps];
}

/* 0 and the per-node arrays, or -1; radj and fill come once ne is known. */
static int dag_alloc(dag *g)
{
    size_t n = g->n;
    g->ix = malloc((n + 1) * sizeof *g->ix);
    g->indeg = calloc(n + 1, sizeof *g->indeg);
    g->roff = calloc(n + 2, sizeof *g->roff);
    g->heap = malloc((n + 1) * sizeof *g->heap);
    g->order = malloc((n + 1) * sizeof *g->order);
    g->nvc = malloc((n + 1) * sizeof *g->nvc);
    return g->ix && g->indeg && g->roff && g->heap && g->order && g->nvc ? 0 : -1;
}

static void dag_free(dag *g)
{
    free(g->ix);
    free(g->indeg);
    free(g->roff);
    free(g->radj);
    free(g->heap);
    free(g->fill);
    free(g->order);
    free(g->nvc);
}

/* Pass 1: the nodes sorted by id, so that a dependency resolves by binary
 * search; an id used twice is refused, naming both offsets. */
static int index_ids(const rank_in *ri, dag *g, rs_err *err)
{
    for (uint32_t i = 0; i < g->n; i++)
        g->ix[i] = (idpos){ ri->nodes[i].id, i };
    if (g->n)
        qsort(g->ix, g->n, sizeof *g->ix, cmp_idpos);
    for (uint32_t i = 1; i < g->n; i++)
        if (g->ix[i].id == g->ix[i - 1].id)
            return BADAT(ri, ri->nodes[g->ix[i].i].off, "node id %" PRIu64 " used twice (first at byte offset %zu)",
                         g->ix[i].id, ri->nodes[g->ix[i - 1].i].off);
    return RS_OK;
}

/* Pass 2: resolve and count the dependencies: in-degrees, and each node's
 * dependents in roff[i + 1] (a dep listed twice, or as both control and
 * data, counts once per listing; harmless). An unknown id or a node that
 * depends on itself is refused. */
static int count_deps(const rank_in *ri, dag *g, rs_err *err)
{
    for (uint32_t i = 0; i < g->n; i++) {
        const pb_node *p = ri->nodes[i].pb;
        for (size_t j = 0; j < ndeps(p); j++) {
            uint32_t q = find_id(g->ix, g->n, dep_id(p, j));
            if (q == RS_NONE)
                return BADAT(ri, ri->nodes[i].off, "node %" PRIu64 " has a %s dependency on node %" PRIu64
                             ", which is not in the file", ri->nodes[i].id, j < p->n_ctrl_deps ? "control" : "data",
                             dep_id(p, j));
            if (q == i)
                return BADAT(ri, ri->nodes[i].off, "node %" PRIu64 " depends on itself (a cycle)", ri->nodes[i].id);
            g->roff[q + 1]++;
            g->indeg[i]++;
            g->ne++;
        }
    }
    if (g->ne > UINT32_MAX - 1)
        return BADAT(ri, 0, "more than 2^32 dependencies");
    return RS_OK;
}

/* Pass 3: the reverse edges as CSR (roff, radj), in file order. */
static int link_deps(const rank_in *ri, dag *g)
{
    for (uint32_t i = 0; i < g->n; i++)
        g->roff[i + 1] += g->roff[i];
    g->radj = malloc((size_t)(g->ne ? g->ne : 1) * sizeof *g->radj);
    g->fill = malloc(((size_t)g->n + 1) * sizeof *g->fill);
    if (!g->radj || !g->fill)
        return RS_ENOMEM;
    if (g->n)
        memcpy(g->fill, g->roff, (size_t)g->n * sizeof *g->fill);
    for (uint32_t i = 0; i < g->n; i++) {
        const pb_node *p = ri->nodes[i].pb;
        for (size_t j = 0; j < ndeps(p); j++)
            g->radj[g->fill[find_id(g->ix, g->n, dep_id(p, j))]++] = i;
    }
    return RS_OK;
}

/* A node on a dependency cycle, given that Kahn's order stopped short:
 * walk back along unfinished deps until a node repeats. */
static uint32_t cycle_node(const rank_in *ri, dag *g)
{
    uint32_t *seen = g->fill, i = 0;
    while (!g->indeg[i])
        i++;
    memset(seen, 0, (size_t)g->n * sizeof *seen);
    for (;;) {
        seen[i] = 1;
        const pb_node *p = ri->nodes[i].pb;
        uint32_t nx = RS_NONE;
        for (size_t j = 0; j < ndeps(p) && nx == RS_NONE; j++) {
            uint32_t q = find_id(g->ix, g->n, dep_id(p, j));
            if (g->indeg[q])
                nx = q;
        }
        if (nx == RS_NONE || seen[nx])
            return nx == RS_NONE ? i : nx;
        i = nx;
    }
}

/* Pass 4: the topological order by Kahn's algorithm, earliest in the file
 * first; a cycle is refused, naming a node on it. */
static int topo_order(const rank_in *ri, dag *g, rs_err *err)
{
    uint32_t nh = 0, no = 0;
    for (uint32_t i = 0; i < g->n; i++)
        if (!g->indeg[i])
            heap_push(g->heap, &nh, i);
    while (nh) {
        uint32_t i = heap_pop(g->heap, &nh);
        g->order[no++] = i;
        for (uint32_t q = g->roff[i]; q < g->roff[i + 1]; q++)
            if (--g->indeg[g->radj[q]] == 0)
                heap_push(g->heap, &nh, g->radj[q]);
    }
    if (no < g->n) {
        uint32_t i = cycle_node(ri, g);
        return BADAT(ri, ri->nodes[i].off, "node %" PRIu64 " is on a dependency cycle", ri->nodes[i].id);
    }
    return RS_OK;
}

/* ---- the program: vector clocks, streams, dependencies ----------------------------------- */

static void vc_none(vclock *k)
{
    for (uint32_t s = 0; s < S; s++)
        k->v[s] = RS_NONE;
}

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

static uint64_t str_hash_of(const void *im, uint32_t i)
{
    return rs_hash_str(((const imp *)im)->strs[i]);
}

typedef struct str_key {
    const imp *im;
    const char *s;
} str_key;

static int str_eq(const void *key, uint32_t i)
{
    const str_key *k = key;
    return !strcmp(k->im->strs[i], k->s);
}

/* Intern s in the import's own table (the trace is created only once the
 * slot count is known); *id its index. */
static int str_intern(imp *im, const char *s, uint32_t *id)
{
    uint64_t h = rs_hash_str(s);
    str_key k = { im, s };
    if ((*id = rs_hindex_find(&im->sidx, h, str_eq, &k)) != UINT32_MAX)
        return 0;
    if (rs_array_reserve32(&im->strs, &im->capstrs, im->nstrs + 1, sizeof *im->strs, 16))
        return -1;
    if (!(im->strs[im->nstrs] = strdup(s)))
        return -1;
    if (rs_hindex_insert(&im->sidx, h, im->nstrs, str_hash_of, im) != RS_OK) {
        free(im->strs[im->nstrs]);
        return -1;
    }
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

/* What stream s's order alone makes known before its next op: its last
 * op's clock, or nothing. */
static void stream_clock(const build *b, uint32_t s, vclock *k)
{
    if (b->last[s] != RS_NONE)
        *k = b->vc[b->last[s]];
    else
        vc_none(k);
}

/* A communication op's stream when the node names none: a stream whose
 * last op this one needs (no new ordering), else an empty one, else the
 * one whose last op is oldest (an ordering the DAG did not ask for,
 * counted as serialized). */
static uint8_t pick_stream(imp *im, const build *b, const vclock *need)
{
    int pick = -1, empty = -1, oldest = -1;
    for (uint32_t s = 1; s < S; s++) {
        if (b->last[s] == RS_NONE) {
            if (empty < 0)
                empty = (int)s;
        } else if (need->v[s] == b->last[s]) {
            if (pick < 0)
                pick = (int)s;
        } else if (oldest < 0 || b->last[s] < b->last[oldest]) {
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
    return (uint8_t)pick;
}

/* The explicit dependencies an op still needs (reduce_deps' list) and how
 * far the joins have taken them. */
typedef struct pending {
    uint32_t dep[S];
    uint32_t n;         /* dep[0 .. n) */
    uint32_t next;      /* the first one no join has taken */
    uint32_t joined;    /* the last join emitted for the op, RS_NONE: none */
} pending;

/* More than two: zero-time compute joins on stream 0 take them two at a
 * time, each after the one before by stream order; a compute op then
 * follows the last join on its stream, a communication op names it as a
 * dependency (docs/chakra.md: the cost of this). */
static int join_deps(imp *im, build *b, const rs_op *o, pending *pd, vclock *known)
{
    while (pd->n - pd->next + (o->stream != 0 && pd->joined != RS_NONE) > 2) {
        rs_op j = { .kind = RS_OP_COMPUTE, .stream = 0, .comm = RS_NONE, .label = o->label,
                    .dep = { pd->dep[pd->next], pd->dep[pd->next + 1] } };
        pd->next += 2;
        vclock jk;
        stream_clock(b, 0, &jk);
        vc_merge(&jk, &b->vc[j.dep[0]]);
        vc_merge(&jk, &b->vc[j.dep[1]]);
        if (emit(b, &j, &jk))
            return rs_chakra_oom(im->err);
        pd->joined = b->n - 1;
        if (im->st)
            im->st->joins++;
        if (o->stream == 0)
            *known = b->vc[pd->joined];
    }
    return RS_OK;
}

/* The op's own (at most two) dependencies: the last join, then what the
 * joins left that known (stream order and the join) does not cover. */
static int attach_deps(const build *b, rs_op *o, const pending *pd, vclock *known)
{
    uint32_t k = 0;
    if (o->stream != 0 && pd->joined != RS_NONE) {
        o->dep[k++] = pd->joined;
        vc_merge(known, &b->vc[pd->joined]);
    }
    for (uint32_t q = pd->next; q < pd->n; q++)
        if (!covered(known, b->ops[pd->dep[q]].stream, pd->dep[q])) {
            /* the joins left at most two (one beside a join) */
            if (RS_NEVER(k >= 2))
                return RS_EINTERNAL;
            o->dep[k++] = pd->dep[q];
            vc_merge(known, &b->vc[pd->dep[q]]);
        }
    if (o->dep[0] == RS_NONE && o->dep[1] != RS_NONE) {
        o->dep[0] = o->dep[1];
        o->dep[1] = RS_NONE;
    }
    return RS_OK;
}

/* A send, receive or collective, kept for matching across ranks. */
static int record_comm(imp *im, const rank_in *ri, const nd *d)
{
    rs_err *err = im->err;
    uint32_t file = (uint32_t)(ri - im->rk);
    if (d->kind == RS_OP_SEND || d->kind == RS_OP_RECV) {
        if (rs_array_reserve(&im->msgs, &im->capmsgs, im->nmsgs + 1, sizeof *im->msgs, 16))
            return rs_chakra_oom(err);
        int send = d->kind == RS_OP_SEND;
        im->msgs[im->nmsgs++] = (p2p){ .src = send ? ri->f->rank : d->peer, .dst = send ? d->peer : ri->f->rank,
                                       .file = file, .send = (uint8_t)send, .tag = d->tag, .bytes = d->bytes,
                                       .id = d->id, .off = d->off };
    } else if (d->kind == RS_OP_COLL) {
        if (im->ncevs >= UINT32_MAX)
            return BADAT(ri, d->off, "more than 2^32 collectives in all");
        if (rs_array_reserve(&im->cevs, &im->capcevs, im->ncevs + 1, sizeof *im->cevs, 16))
            return rs_chakra_oom(err);
        im->cevs[im->ncevs++] = (cev){ .comm = d->comm, .rank = ri->f->rank, .file = file, .coll = d->coll,
                                       .bytes = d->bytes, .id = d->id, .off = d->off };
    }
    return RS_OK;
}

/* Pass 5, one node in topological order: a contracted node passes on the
 * clock of what it waited for; any other becomes an op (and the joins it
 * needs) at the end of the program. */
static int place_node(imp *im, rank_in *ri, build *b, dag *g, uint32_t i)
{
    const nd *d = &ri->nodes[i];
    const pb_node *p = d->pb;
    int rc;
    vclock need;
    vc_none(&need);
    for (size_t j = 0; j < ndeps(p); j++)
        vc_merge(&need, &g->nvc[find_id(g->ix, g->n, dep_id(p, j))]);
    if (d->kind == K_NOOP) {
        g->nvc[i] = need;
        if (im->st)
            im->st->contracted++;
        return RS_OK;
    }
    rs_op o = { .kind = d->kind, .dim = d->dim, .coll = d->coll, .comm = RS_NONE, .dep = { RS_NONE, RS_NONE },
                .bytes = d->bytes, .duration = d->kind == RS_OP_COMPUTE ? d->dur : 0 };
    if (d->kind == RS_OP_COMPUTE) {
        o.stream = 0; /* bytes: its HBM bytes (comp_attrs) */
    } else {
        o.stream = d->stream > 0 ? (uint8_t)d->stream : pick_stream(im, b, &need);
    }
    if ((rc = label_of(im, p, &o.label)))
        return rc;
    if (d->kind != RS_OP_COMPUTE && (rc = slot_of(im, ri, d, &o.comm)))
        return rc;
    vclock known;
    stream_clock(b, o.stream, &known);
    pending pd = { .joined = RS_NONE };
    vclock scratch = known;
    pd.n = reduce_deps(b, &need, &scratch, pd.dep);
    if ((rc = join_deps(im, b, &o, &pd, &known)) || (rc = attach_deps(b, &o, &pd, &known)))
        return rc;
    if (emit(b, &o, &known))
        return rs_chakra_oom(im->err);
    g->nvc[i] = b->vc[b->n - 1];
    if (d->kind == RS_OP_COMPUTE)
        im->flops += d->flops;
    return record_comm(im, ri, d);
}

int rs_chakra_build_rank(imp *im, rank_in *ri)
{
    rs_err *err = im->err;
    dag g = { .n = ri->n };
    build b = { 0 };
    for (uint32_t s = 0; s < S; s++)
        b.last[s] = RS_NONE;
    int rc = RS_ENOMEM;
    if (dag_alloc(&g))
        goto out;
    if ((rc = index_ids(ri, &g, err)) || (rc = count_deps(ri, &g, err)) || (rc = link_deps(ri, &g)) ||
        (rc = topo_order(ri, &g, err)))
        goto out;
    for (uint32_t k = 0; k < g.n; k++)
        if ((rc = place_node(im, ri, &b, &g, g.order[k])))
            goto out;
    ri->ops = b.ops;
    ri->nops = b.n;
    b.ops = NULL;
    rc = RS_OK;
out:
    if (rc == RS_ENOMEM && !err->msg[0])
        rs_chakra_oom(err);
    free(b.ops);
    free(b.vc);
    dag_free(&g);
    return rc;
}
