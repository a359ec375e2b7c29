/*
 * tlstats.c - timeline statistics for reports (tlstats.h).
 *
 * One pass over the records fills hash-indexed aggregates (op kind,
 * (dimension, op kind), (collective op, algorithm), port) and two flat
 * arrays: op intervals and flow completion times. The per-rank overlap of
 * compute and communication is computed at the end by sorting the
 * intervals by (rank, start) and merging each rank's compute and
 * communication spans separately: exposed = |comm| - |comm n compute|.
 */
#include "tlstats.h"
#include "array.h"

#include "tables.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct interval {
    uint64_t start, end;
    uint32_t rank;
    uint32_t compute; /* 1 compute, 0 communication */
} interval;

typedef struct agg {
    uint32_t a, b;    /* string ids: (op, -) / (dim, op) / (op, algo) */
    uint64_t count, bytes, total, min, max;
} agg;

typedef struct port_agg {
    uint32_t port;
    uint64_t samples, max_queue, max_tx;
    double sum_util, max_util;
} port_agg;

typedef struct builder {
    rs_strtab *strs;
    rs_u64map names;     /* name key -> string id */
    rs_u64map op_idx, dim_idx, coll_idx, port_idx; /* key -> index + 0 */
    agg *ops, *dims, *colls;
    size_t n_ops, n_dims, n_colls, cap_ops, cap_dims, cap_colls;
    port_agg *ports;
    size_t n_ports, cap_ports;
    interval *iv;
    size_t n_iv, cap_iv;
    uint64_t *fct;
    size_t n_fct, cap_fct;
} builder;

/* The public struct plus what it owns. */
typedef struct owner {
    rs_tlstats s;
    rs_strtab *strs;
} owner;

/* The aggregate for (a, b) in index idx over array arr; NULL without memory. */
static agg *agg_get(rs_u64map *idx, agg **arr, size_t *n, size_t *cap, uint32_t a, uint32_t b)
{
    uint64_t key = ((uint64_t)a << 32) | b;
    uint64_t *slot = rs_u64map_upsert(idx, key, UINT64_MAX);
    if (!slot)
        return NULL;
    if (*slot == UINT64_MAX) {
        if (rs_array_reserve(arr, cap, *n + 1, sizeof **arr, 256))
            return NULL;
        agg *g = &(*arr)[*n];
        memset(g, 0, sizeof *g);
        g->a = a;
        g->b = b;
        g->min = UINT64_MAX;
        *slot = (*n)++;
    }
    return &(*arr)[*slot];
}

static void agg_add(agg *g, uint64_t dur, uint64_t bytes)
{
    g->count++;
    g->bytes += bytes;
    g->total += dur;
    if (dur < g->min)
        g->min = dur;
    if (dur > g->max)
        g->max = dur;
}

size_t rs_tlstats_dim_len(const char *s)
{
    size_t n = 0;
    while (s[n] && !strchr("[:./# -_0123456789", s[n]))
        n++;
    return n;
}

static const char *name_of(const builder *b, uint32_t space, uint64_t id)
{
    uint64_t *v = rs_u64map_get(&b->names, rs_an_name_key(space, id));
    return v ? rs_strtab_str(b->strs, (uint32_t)*v) : "";
}

/* String id of the dimension of communicator comm. */
static uint32_t dim_of(builder *b, uint32_t comm)
{
    if (comm == RS_TL_NONE)
        return rs_strtab_intern(b->strs, "-");
    const char *name = name_of(b, 2, comm);
    size_t n = rs_tlstats_dim_len(name);
    if (!name[0])
        return rs_strtab_intern(b->strs, "comm");
    if (n == 0)
        return rs_strtab_intern(b->strs, name);
    char buf[64];
    if (n >= sizeof buf)
        n = sizeof buf - 1;
    memcpy(buf, name, n);
    buf[n] = '\0';
    return rs_strtab_intern(b->strs, buf);
}

static int oom(rs_an_err *err, const char *path)
{
    if (err) {
        err->code = RS_AN_ENOMEM;
        snprintf(err->msg, sizeof err->msg, "%s: out of memory reading the timeline", path);
    }
    return RS_AN_ENOMEM;
}

static int add_record(builder *b, const rs_tlread_rec *r)
{
    switch (r->kind) {
    case RS_TL_NAME: {
        uint32_t sid = rs_strtab_intern(b->strs, r->u.name.name);
        uint64_t *v = rs_u64map_upsert(&b->names, rs_an_name_key(r->u.name.space, r->u.name.id), 0);
        if (sid == UINT32_MAX || !v)
            return -1;
        *v = sid;
        return 0;
    }
    case RS_TL_OP: {
        uint64_t dur = r->u.op.end_ps - r->u.op.start_ps;
        uint32_t op = rs_strtab_intern(b->strs, r->u.op.op);
        uint32_t dim = dim_of(b, r->u.op.comm);
        if (op == UINT32_MAX || dim == UINT32_MAX)
            return -1;
        agg *g = agg_get(&b->op_idx, &b->ops, &b->n_ops, &b->cap_ops, op, 0);
        agg *d = agg_get(&b->dim_idx, &b->dims, &b->n_dims, &b->cap_dims, dim, op);
        if (!g || !d || rs_array_reserve(&b->iv, &b->cap_iv, b->n_iv + 1, sizeof *b->iv, 256))
            return -1;
        agg_add(g, dur, r->u.op.bytes);
        agg_add(d, dur, r->u.op.bytes);
        b->iv[b->n_iv++] = (interval){ r->u.op.start_ps, r->u.op.end_ps, r->u.op.rank,
                                       strcmp(r->u.op.op, "compute") == 0 };
        return 0;
    }
    case RS_TL_COLL: {
        uint32_t op = rs_strtab_intern(b->strs, r->u.coll.op);
        uint32_t algo = rs_strtab_intern(b->strs, r->u.coll.algo);
        if (op == UINT32_MAX || algo == UINT32_MAX)
            return -1;
        agg *g = agg_get(&b->coll_idx, &b->colls, &b->n_colls, &b->cap_colls, op, algo);
        if (!g)
            return -1;
        agg_add(g, r->u.coll.end_ps - r->u.coll.start_ps, r->u.coll.bytes);
        return 0;
    }
    case RS_TL_FLOW:
        if (rs_array_reserve(&b->fct, &b->cap_fct, b->n_fct + 1, sizeof *b->fct, 256))
            return -1;
        b->fct[b->n_fct++] = r->u.flow.end_ps - r->u.flow.start_ps;
        return 0;
    case RS_TL_SAMPLE: {
        uint64_t *slot = rs_u64map_upsert(&b->port_idx, r->u.sample.port, UINT64_MAX);
        if (!slot)
            return -1;
        if (*slot == UINT64_MAX) {
            if (rs_array_reserve(&b->ports, &b->cap_ports, b->n_ports + 1, sizeof *b->ports, 256))
                return -1;
            memset(&b->ports[b->n_ports], 0, sizeof *b->ports);
            b->ports[b->n_ports].port = r->u.sample.port;
            *slot = b->n_ports++;
        }
        port_agg *p = &b->ports[*slot];
        double u = r->u.sample.util;
        p->samples++;
        p->sum_util += u;
        if (u > p->max_util)
            p->max_util = u;
        if (r->u.sample.queue_bytes > p->max_queue)
            p->max_queue = r->u.sample.queue_bytes;
        if (r->u.sample.tx_bytes > p->max_tx)
            p->max_tx = r->u.sample.tx_bytes;
        return 0;
    }
    default:
        return 0;
    }
}

static int cmp_iv(const void *x, const void *y)
{
    const interval *a = x, *b = y;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return (a->end > b->end) - (a->end < b->end);
}

/* Merge the sorted-by-start spans of one kind in iv[0..n) into out; returns
 * the count of disjoint spans. */
static size_t merge(const interval *iv, size_t n, uint32_t compute, uint64_t (*out)[2])
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (iv[i].compute != compute)
            continue;
        if (m && iv[i].start <= out[m - 1][1]) {
            if (iv[i].end > out[m - 1][1])
                out[m - 1][1] = iv[i].end;
        } else {
            out[m][0] = iv[i].start;
            out[m][1] = iv[i].end;
            m++;
        }
    }
    return m;
}

static int rank_stats(builder *b, owner *o)
{
    rs_tlstats *s = &o->s;
    if (b->n_iv) /* qsort's array may not be NULL, even for 0 elements */
        qsort(b->iv, b->n_iv, sizeof *b->iv, cmp_iv);
    size_t nranks = 0, maxgroup = 0;
    for (size_t i = 0, j; i < b->n_iv; i = j) {
        for (j = i; j < b->n_iv && b->iv[j].rank == b->iv[i].rank; j++)
            ;
        nranks++;
        if (j - i > maxgroup)
            maxgroup = j - i;
    }
    s->ranks = calloc(nranks ? nranks : 1, sizeof *s->ranks);
    uint64_t (*cs)[2] = malloc((maxgroup ? maxgroup : 1) * sizeof *cs);
    uint64_t (*ms)[2] = malloc((maxgroup ? maxgroup : 1) * sizeof *ms);
    if (!s->ranks || !cs || !ms) {
        free(cs);
        free(ms);
        return -1;
    }
    s->ops_first_ps = b->n_iv ? UINT64_MAX : 0;
    for (size_t i = 0, j; i < b->n_iv; i = j) {
        for (j = i; j < b->n_iv && b->iv[j].rank == b->iv[i].rank; j++)
            ;
        rs_tlstats_rank *rk = &s->ranks[s->n_ranks++];
        rk->rank = b->iv[i].rank;
        rk->ops = j - i;
        rk->first_ps = b->iv[i].start;
        for (size_t k = i; k < j; k++)
            if (b->iv[k].end > rk->last_ps)
                rk->last_ps = b->iv[k].end;
        size_t nc = merge(b->iv + i, j - i, 1, cs), nm = merge(b->iv + i, j - i, 0, ms);
        uint64_t overlap = 0;
        for (size_t x = 0; x < nc; x++)
            rk->compute_ps += cs[x][1] - cs[x][0];
        for (size_t x = 0; x < nm; x++)
            rk->comm_ps += ms[x][1] - ms[x][0];
        for (size_t x = 0, y = 0; x < nc && y < nm;) {
            uint64_t lo = cs[x][0] > ms[y][0] ? cs[x][0] : ms[y][0];
            uint64_t hi = cs[x][1] < ms[y][1] ? cs[x][1] : ms[y][1];
            if (hi > lo)
                overlap += hi - lo;
            if (cs[x][1] < ms[y][1])
                x++;
            else
                y++;
        }
        rk->exposed_ps = rk->comm_ps - overlap;
        rk->name = name_of(b, 1, rk->rank);
        if (rk->first_ps < s->ops_first_ps)
            s->ops_first_ps = rk->first_ps;
        if (rk->last_ps > s->ops_last_ps)
            s->ops_last_ps = rk->last_ps;
    }
    free(cs);
    free(ms);
    return 0;
}

static int cmp_op(const void *x, const void *y)
{
    const rs_tlstats_op *a = x, *b = y;
    if (a->total_ps != b->total_ps)
        return a->total_ps > b->total_ps ? -1 : 1;
    int c = strcmp(a->dim ? a->dim : "", b->dim ? b->dim : "");
    return c ? c : strcmp(a->op, b->op);
}

static int cmp_coll(const void *x, const void *y)
{
    const rs_tlstats_coll *a = x, *b = y;
    int c = strcmp(a->op, b->op);
    return c ? c : strcmp(a->algo, b->algo);
}

static int cmp_port(const void *x, const void *y)
{
    const rs_tlstats_port *a = x, *b = y;
    if (a->mean_util != b->mean_util)
        return a->mean_util > b->mean_util ? -1 : 1;
    return (a->port > b->port) - (a->port < b->port);
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

static uint64_t nearest_rank(const uint64_t *v, size_t n, unsigned pct)
{
    size_t k = (size_t)(((uint64_t)n * pct + 99) / 100);
    return v[k ? k - 1 : 0];
}

static int finish(builder *b, owner *o)
{
    rs_tlstats *s = &o->s;
    s->by_op = calloc(b->n_ops + 1, sizeof *s->by_op);
    s->by_dim = calloc(b->n_dims + 1, sizeof *s->by_dim);
    s->colls = calloc(b->n_colls + 1, sizeof *s->colls);
    s->ports = calloc(b->n_ports + 1, sizeof *s->ports);
    if (!s->by_op || !s->by_dim || !s->colls || !s->ports)
        return -1;
    for (size_t i = 0; i < b->n_ops; i++, s->n_by_op++)
        s->by_op[i] = (rs_tlstats_op){ rs_strtab_str(b->strs, b->ops[i].a), NULL,
                                       b->ops[i].count, b->ops[i].total, b->ops[i].bytes };
    for (size_t i = 0; i < b->n_dims; i++, s->n_by_dim++)
        s->by_dim[i] = (rs_tlstats_op){ rs_strtab_str(b->strs, b->dims[i].b),
                                        rs_strtab_str(b->strs, b->dims[i].a),
                                        b->dims[i].count, b->dims[i].total, b->dims[i].bytes };
    for (size_t i = 0; i < b->n_colls; i++, s->n_colls++) {
        const agg *g = &b->colls[i];
        s->colls[i] = (rs_tlstats_coll){ rs_strtab_str(b->strs, g->a), rs_strtab_str(b->strs, g->b),
                                         g->count, g->bytes, g->total, g->min, g->max };
    }
    for (size_t i = 0; i < b->n_ports; i++, s->n_ports++) {
        const port_agg *p = &b->ports[i];
        s->ports[i] = (rs_tlstats_port){ p->port, name_of(b, 0, p->port), p->samples,
                                         p->samples ? p->sum_util / (double)p->samples : 0.0,
                                         p->max_util, p->max_queue, p->max_tx };
    }
    qsort(s->by_op, s->n_by_op, sizeof *s->by_op, cmp_op);
    qsort(s->by_dim, s->n_by_dim, sizeof *s->by_dim, cmp_op);
    qsort(s->colls, s->n_colls, sizeof *s->colls, cmp_coll);
    qsort(s->ports, s->n_ports, sizeof *s->ports, cmp_port);

    s->flows = b->n_fct;
    if (b->n_fct) {
        qsort(b->fct, b->n_fct, sizeof *b->fct, cmp_u64);
        double sum = 0;
        for (size_t i = 0; i < b->n_fct; i++)
            sum += (double)b->fct[i];
        s->fct_mean_ps = sum / (double)b->n_fct;
        s->fct_min_ps = b->fct[0];
        s->fct_max_ps = b->fct[b->n_fct - 1];
        s->fct_p50_ps = nearest_rank(b->fct, b->n_fct, 50);
        s->fct_p99_ps = nearest_rank(b->fct, b->n_fct, 99);
    }
    return rank_stats(b, o);
}

static void builder_fini(builder *b)
{
    rs_u64map_fini(&b->names);
    rs_u64map_fini(&b->op_idx);
    rs_u64map_fini(&b->dim_idx);
    rs_u64map_fini(&b->coll_idx);
    rs_u64map_fini(&b->port_idx);
    free(b->ops);
    free(b->dims);
    free(b->colls);
    free(b->ports);
    free(b->iv);
    free(b->fct);
}

int rs_tlstats_compute(const char *path, rs_tlstats **out, rs_an_err *err)
{
    *out = NULL;
    rs_tlread *r = NULL;
    int rc = rs_tlread_open(path, &r, err);
    if (rc != RS_AN_OK)
        return rc;
    owner *o = calloc(1, sizeof *o);
    builder b;
    memset(&b, 0, sizeof b);
    rs_u64map_init(&b.names);
    rs_u64map_init(&b.op_idx);
    rs_u64map_init(&b.dim_idx);
    rs_u64map_init(&b.coll_idx);
    rs_u64map_init(&b.port_idx);
    b.strs = rs_strtab_create();
    if (!o || !b.strs) {
        rc = oom(err, path);
        goto fail;
    }
    o->strs = b.strs;
    rs_tlstats *s = &o->s;
    const rs_tlread_header *h = rs_tlread_header_get(r);
    s->partial = h->partial;
    s->seed = h->seed;
    s->railsim_version = rs_strtab_str(b.strs, rs_strtab_intern(b.strs, h->railsim_version));
    rs_tlread_rec rec;
    while ((rc = rs_tlread_next(r, &rec, err)) == 1) {
        if ((unsigned)rec.kind < 11)
            s->records[rec.kind]++;
        switch (rec.kind) {
        case RS_TL_FLOW:
            s->flow_bytes += rec.u.flow.bytes;
            break;
        case RS_TL_PFC:
            if (rec.u.pfc.pause)
                s->pfc_pauses++;
            else
                s->pfc_resumes++;
            break;
        case RS_TL_ECN:
            if (rec.u.ecn.what == 0)
                s->ecn_marked += rec.u.ecn.count;
            else if (rec.u.ecn.what == 1)
                s->cnp_sent += rec.u.ecn.count;
            break;
        case RS_TL_DROP:
            s->drop_packets += rec.u.drop.packets;
            s->drop_bytes += rec.u.drop.bytes;
            break;
        case RS_TL_FAULT:
            s->faults++;
            break;
        default:
            break;
        }
        if (add_record(&b, &rec) != 0) {
            rc = oom(err, path);
            goto fail;
        }
    }
    if (rc < 0)
        goto fail;
    s->complete = rs_tlread_complete(r);
    s->skipped = rs_tlread_skipped(r);
    if (finish(&b, o) != 0) {
        rc = oom(err, path);
        goto fail;
    }
    builder_fini(&b);
    rs_tlread_close(r);
    *out = s;
    return RS_AN_OK;
fail:
    if (o)
        rs_tlstats_destroy(&o->s);
    else
        rs_strtab_destroy(b.strs);
    builder_fini(&b);
    rs_tlread_close(r);
    return rc;
}

void rs_tlstats_destroy(rs_tlstats *s)
{
    if (!s)
        return;
    owner *o = (owner *)s; /* s is the first member of owner */
    free(s->by_op);
    free(s->by_dim);
    free(s->ranks);
    free(s->colls);
    free(s->ports);
    rs_strtab_destroy(o->strs);
    free(o);
}
