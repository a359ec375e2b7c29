/*
 * chakra_import.c - Chakra ET import (chakra.h, docs/chakra.md): finds and
 * reads the rank files, decodes them, gives each node its meaning, has
 * chakra_dag.c turn every rank's DAG into a program, checks that sends
 * pair with receives and collectives match across ranks, and builds the
 * trace. The wire format is protobuf-c's (generated from
 * traces/chakra/et_def.proto); this file only splits the length-delimited
 * stream, as Chakra's protolib does, and maps messages to ops.
 *
 * Owns the import state (imp, chakra_int.h) for one call: decoded
 * messages, interned labels, process groups and communicators are all
 * freed before rs_chakra_import returns; only the trace survives. Nothing
 * in a file is trusted: a file is at most 2 GiB and 2^24 nodes, and the
 * refusal of what a file holds names the file, the rank and the byte
 * offset of the message.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "coll.h"
#include "plan.h"
#include "pool.h"

#include "chakra_int.h"

void rs_chakra_opts_default(rs_chakra_opts *o)
{
    o->peak_flops = 989e12;
    o->mem_bw = 3.35e12;
    o->efficiency = 0.5;
    o->comm_groups = NULL;
    (void)rs_plan_gpu_peak("h100", &o->peak_flops, &o->mem_bw);
}

/* ---- attributes: any integer type a producer chose ---------------------------- */

static const pb_attr *attr_find(pb_attr *const *a, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (a[i]->name && strcmp(a[i]->name, name) == 0)
            return a[i];
    return NULL;
}

/* The attribute as a signed 128-bit-safe pair: *neg and magnitude. 0 if it
 * holds an integer (any width, signedness or encoding; a bool; a double
 * with an integral value), -1 otherwise. */
static int attr_int(const pb_attr *a, int *neg, uint64_t *mag)
{
    int64_t s;
    *neg = 0;
    switch (a->value_case) {
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL: s = a->int32_val; goto sgn;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL: s = a->int64_val; goto sgn;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT32_VAL: s = a->sint32_val; goto sgn;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT64_VAL: s = a->sint64_val; goto sgn;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SFIXED32_VAL: s = a->sfixed32_val; goto sgn;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SFIXED64_VAL: s = a->sfixed64_val; goto sgn;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT32_VAL: *mag = a->uint32_val; return 0;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL: *mag = a->uint64_val; return 0;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FIXED32_VAL: *mag = a->fixed32_val; return 0;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FIXED64_VAL: *mag = a->fixed64_val; return 0;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL: *mag = a->bool_val ? 1 : 0; return 0;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL:
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FLOAT_VAL: {
        double d = a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL ? a->double_val
                                                                                         : (double)a->float_val;
        /* integral and exact: |d| below 2^53, where the cast is defined */
        if (!(d > -9007199254740992.0 && d < 9007199254740992.0) || d != (double)(int64_t)d)
            return -1;
        *neg = d < 0;
        *mag = (uint64_t)(d < 0 ? -d : d);
        return 0;
    }
    default:
        return -1;
    }
sgn:
    *neg = s < 0;
    *mag = s < 0 ? (uint64_t)0 - (uint64_t)s : (uint64_t)s;
    return 0;
}

/* ---- errors ------------------------------------------------------------------------ */

int rs_chakra_bad_at(rs_err *err, const char *file, uint32_t rank, size_t off, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return rs_err_set(err, RS_EFORMAT, "%s: rank %u, byte offset %zu: %s", file, rank, off, what);
}

int rs_chakra_oom(rs_err *err)
{
    return rs_err_set(err, RS_ENOMEM, "out of memory importing the Chakra trace");
}

/* ---- one node's meaning ------------------------------------------------------------ */

static int need_u64(rank_in *ri, const nd *d, const char *name, uint64_t *v, int required, rs_err *err)
{
    const pb_attr *a = attr_find(d->pb->attr, d->pb->n_attr, name);
    int neg;
    if (!a) {
        if (required)
            return BADAT(ri, d->off, "node %" PRIu64 " (%s): no \"%s\" attribute", d->id,
                         d->pb->name ? d->pb->name : "", name);
        *v = 0;
        return 1;
    }
    if (attr_int(a, &neg, v) || neg)
        return BADAT(ri, d->off, "node %" PRIu64 ": attribute \"%s\" is not a non-negative integer", d->id, name);
    return RS_OK;
}

static int dim_of(const char *s)
{
    static const char *names[] = { "none", "tp", "pp", "dp", "cp", "ep" };
    for (int i = 1; i < RS_DIM_COUNT; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

/* What every node carries: id, type (counted), duration (duration_micros,
 * or railsim's exact railsim_duration_ps), railsim_dim (*dim_given: it was
 * there) and railsim_stream. */
static int node_common(imp *im, rank_in *ri, nd *d, int *dim_given, rs_err *err)
{
    const pb_node *p = d->pb;
    int rc;
    uint64_t v;
    d->id = p->id;
    d->kind = K_NOOP;
    d->peer = RS_NONE;
    d->stream = -1;
    if ((unsigned)p->type >= RS_CHAKRA_NTYPES || p->type == CHAKRA_PROTO_MSG__NODE_TYPE__INVALID_NODE)
        return BADAT(ri, d->off, "node %" PRIu64 ": node type %d, expected 1 (METADATA_NODE) to 10 "
                     "(CHECKPOINT_NODE)", d->id, (int)p->type);
    if (im->st)
        im->st->by_type[p->type]++;
    /* Time of a node that takes GPU time: its duration, else the roofline. */
    if (p->duration_micros > (uint64_t)(RS_TIME_MAX / 2) / 1000000u)
        return BADAT(ri, d->off, "node %" PRIu64 ": duration_micros %" PRIu64 " is too long", d->id,
                     p->duration_micros);
    d->dur = (rs_time)p->duration_micros * 1000000u;
    if ((rc = need_u64(ri, d, "railsim_duration_ps", &v, 0, err)) < 0)
        return rc;
    if (rc == 0)
        d->dur = v > RS_TIME_MAX / 2 ? RS_TIME_MAX / 2 : v;
    const pb_attr *a = attr_find(p->attr, p->n_attr, "railsim_dim");
    d->dim = RS_DIM_DP;
    *dim_given = a != NULL;
    if (a) {
        int k = a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL ? dim_of(a->string_val) : -1;
        if (k < 0)
            return BADAT(ri, d->off, "node %" PRIu64 ": railsim_dim is not one of tp, pp, dp, cp, ep", d->id);
        d->dim = (uint8_t)k;
    }
    if ((rc = need_u64(ri, d, "railsim_stream", &v, 0, err)) < 0)
        return rc;
    if (rc == 0 && v < S)
        d->stream = (int8_t)v;
    return RS_OK;
}

/* COMP, MEM_LOAD, MEM_STORE: a compute op if it takes time, its own or
 * the roofline of num_ops FLOPs and tensor_size bytes; its HBM bytes
 * (docs/compute.md, "Contention") railsim's railsim_hbm_bytes, else
 * tensor_size where the roofline found it memory-bound. */
static int comp_attrs(imp *im, rank_in *ri, nd *d, rs_err *err)
{
    uint64_t ops = 0, bytes = 0, hbm = 0;
    int rc, given = 1;
    if ((rc = need_u64(ri, d, "num_ops", &ops, 0, err)) < 0 ||
        (rc = need_u64(ri, d, "tensor_size", &bytes, 0, err)) < 0 ||
        (given = need_u64(ri, d, "railsim_hbm_bytes", &hbm, 0, err)) < 0)
        return given < 0 ? given : rc;
    d->flops = (double)ops;
    d->bytes = hbm;
    if (d->dur == 0) {
        double ps = (double)ops * 1e12 / (im->o->peak_flops * im->o->efficiency);
        double pm = (double)bytes * 1e12 / im->o->mem_bw;
        if (pm > ps) {
            ps = pm;
            if (given != 0)
                d->bytes = bytes;
        }
        d->dur = ps >= (double)(RS_TIME_MAX / 2) ? RS_TIME_MAX / 2 : (rs_time)(ps + 0.5);
    }
    if (d->dur)
        d->kind = RS_OP_COMPUTE;
    return RS_OK;
}

/* A collective's communicator: its process group's members (pg_name, a
 * string or an integer), or every rank when it names none; the world
 * communicator of each dimension is made once. */
static int coll_comm(imp *im, rank_in *ri, nd *d, rs_err *err)
{
    const pb_node *p = d->pb;
    const pb_attr *pa = attr_find(p->attr, p->n_attr, "pg_name");
    char pgbuf[32];
    const char *pg = NULL;
    int rc;
    if (pa && pa->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL) {
        pg = pa->string_val;
    } else if (pa) {
        int neg;
        uint64_t m;
        if (attr_int(pa, &neg, &m) || neg)
            return BADAT(ri, d->off, "node %" PRIu64 ": pg_name is neither a string nor an integer", d->id);
        snprintf(pgbuf, sizeof pgbuf, "%" PRIu64, m);
        pg = pgbuf;
    }
    if (pg && !*pg)
        pg = NULL;
    const uint32_t *ranks = NULL;
    uint32_t nr = 0;
    if (pg && (rc = rs_chakra_pg_members(im, ri, d, pg, &ranks, &nr, err)))
        return rc;
    uint32_t *world = NULL;
    if (!ranks && im->world[d->dim] != RS_NONE) {
        d->comm = im->world[d->dim];
        return RS_OK;
    }
    if (!ranks) {
        world = malloc((size_t)im->nranks * sizeof *world);
        if (!world)
            return rs_chakra_oom(err);
        for (uint32_t r = 0; r < im->nranks; r++)
            world[r] = r;
        ranks = world;
        nr = im->nranks;
        pg = NULL;
    }
    int is_world = world != NULL;
    rc = rs_chakra_comm_intern(im, ranks, nr, d->dim, pg, &d->comm);
    free(world);
    if (rc)
        return rs_chakra_oom(err);
    if (is_world)
        im->world[d->dim] = d->comm;
    return RS_OK;
}

/* COMM_COLL: comm_type mapped to a railsim collective, comm_size bytes,
 * and its communicator. */
static int coll_attrs(imp *im, rank_in *ri, nd *d, rs_err *err)
{
    uint64_t ct;
    int rc;
    if ((rc = need_u64(ri, d, "comm_type", &ct, 1, err)) ||
        (rc = need_u64(ri, d, "comm_size", &d->bytes, 1, err)))
        return rc;
    /* Chakra CollectiveCommType -> railsim collectives; the ones
     * railsim has no algorithm for move the same bytes per link as
     * the stand-in (docs/chakra.md). */
    static const int8_t map[10] = { RS_COLL_ALLREDUCE, RS_COLL_REDUCESCATTER, RS_COLL_ALLGATHER,
                                    RS_COLL_ALLGATHER, RS_COLL_ALLGATHER, RS_COLL_ALLGATHER,
                                    RS_COLL_ALLTOALL, RS_COLL_REDUCESCATTER, RS_COLL_REDUCESCATTER,
                                    RS_COLL_ALLREDUCE };
    if (ct > 9)
        return BADAT(ri, d->off, "node %" PRIu64 ": comm_type %" PRIu64 ", expected 0 (ALL_REDUCE) to 9 "
                     "(BARRIER)", d->id, ct);
    d->coll = (uint8_t)map[ct];
    if (ct == 1 || ct == 3 || ct == 4 || ct == 5 || ct == 9) {
        if (im->st)
            im->st->approximated++;
        if (ct == 9 && d->bytes == 0)
            d->bytes = 1; /* a barrier: the smallest AllReduce */
    }
    d->kind = RS_OP_COLL;
    return coll_comm(im, ri, d, err);
}

/* COMM_SEND, COMM_RECV: the peer, comm_size bytes, comm_tag; on PP unless
 * railsim_dim said otherwise. */
static int p2p_attrs(imp *im, rank_in *ri, nd *d, int dim_given, rs_err *err)
{
    const pb_node *p = d->pb;
    int send = p->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE;
    uint64_t peer;
    int rc;
    /* ASTRA-sim's reading: a send goes to comm_dst, a receive comes
     * from comm_src. */
    if ((rc = need_u64(ri, d, send ? "comm_dst" : "comm_src", &peer, 1, err)) ||
        (rc = need_u64(ri, d, "comm_size", &d->bytes, 1, err)))
        return rc;
    if (peer >= im->nranks || peer == ri->f->rank)
        return BADAT(ri, d->off, "node %" PRIu64 ": %s %" PRIu64 ", expected another rank below %u", d->id,
                     send ? "comm_dst" : "comm_src", peer, im->nranks);
    d->peer = (uint32_t)peer;
    const pb_attr *ta = attr_find(p->attr, p->n_attr, "comm_tag");
    if (ta) {
        int neg;
        uint64_t m;
        if (attr_int(ta, &neg, &m) || m > INT64_MAX)
            return BADAT(ri, d->off, "node %" PRIu64 ": comm_tag is not an integer", d->id);
        d->tag = neg ? -(int64_t)m : (int64_t)m;
    }
    d->kind = send ? RS_OP_SEND : RS_OP_RECV;
    d->dim = dim_given ? d->dim : RS_DIM_PP;
    return RS_OK;
}

/* Node d's meaning (nd's fields) from its type and attributes. */
static int node_attrs(imp *im, rank_in *ri, nd *d, rs_err *err)
{
    int dim_given, rc;
    if ((rc = node_common(im, ri, d, &dim_given, err)))
        return rc;
    switch (d->pb->type) {
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE:
    case CHAKRA_PROTO_MSG__NODE_TYPE__MEM_LOAD_NODE:
    case CHAKRA_PROTO_MSG__NODE_TYPE__MEM_STORE_NODE:
        rc = comp_attrs(im, ri, d, err);
        break;
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE:
        rc = coll_attrs(im, ri, d, err);
        break;
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE:
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE:
        rc = p2p_attrs(im, ri, d, dim_given, err);
        break;
    case CHAKRA_PROTO_MSG__NODE_TYPE__METADATA_NODE:
        if ((rc = rs_chakra_pg_from_node(im, ri, d, err)))
            return rc;
        /* fall through */
    default: /* METADATA, STORAGE, BATCH, CHECKPOINT: time only if given */
        if (d->dur)
            d->kind = RS_OP_COMPUTE;
        break;
    }
    if (rc)
        return rc;
    if (d->kind == RS_OP_COMPUTE)
        d->dim = RS_DIM_NONE;
    return RS_OK;
}

/* ---- decoding one file -------------------------------------------------------------- */

/* The varint length before a message at *pos; 0 and *len set, or -1. */
static int frame(const uint8_t *b, size_t n, size_t *pos, size_t *len)
{
    uint64_t v = 0;
    for (int sh = 0; sh < 64; sh += 7) {
        if (*pos >= n)
            return -1;
        uint8_t c = b[(*pos)++];
        v |= (uint64_t)(c & 0x7f) << sh;
        if (!(c & 0x80)) {
            if (v > n - *pos)
                return -1;
            *len = (size_t)v;
            return 0;
        }
    }
    return -1;
}

static int decode_file(imp *im, rank_in *ri, rs_err *err)
{
    const uint8_t *b = ri->f->buf;
    size_t n = ri->f->len, pos = 0, len;
    if (n > MAX_FILE)
        return BADAT(ri, 0, "file of %zu bytes, expected at most 2 GiB", n);
    if (n == 0)
        return BADAT(ri, 0, "empty file, expected a GlobalMetadata message then nodes");
    if (frame(b, n, &pos, &len))
        return BADAT(ri, 0, "truncated length prefix of the GlobalMetadata message (not a Chakra ET file?)");
    ri->meta = chakra_proto_msg__global_metadata__unpack(NULL, len, b + pos);
    if (!ri->meta)
        return BADAT(ri, 0, "%zu bytes that are not a Chakra GlobalMetadata message (not a Chakra ET file?)", len);
    pos += len;
    int rc = rs_chakra_pg_from_meta(im, ri, err);
    if (rc)
        return rc;
    size_t cap = 0;
    while (pos < n) {
        size_t off = pos;
        if (frame(b, n, &pos, &len))
            return BADAT(ri, off, "truncated message: its length prefix runs past the end of the file (%zu bytes)", n);
        if (ri->n >= MAX_NODES)
            return BADAT(ri, off, "more than %u nodes", MAX_NODES);
        if (rs_array_reserve(&ri->nodes, &cap, (size_t)ri->n + 1, sizeof *ri->nodes, 16))
            return rs_chakra_oom(err);
        nd *d = &ri->nodes[ri->n];
        memset(d, 0, sizeof *d);
        d->off = off;
        d->pb = chakra_proto_msg__node__unpack(NULL, len, b + pos);
        if (!d->pb)
            return BADAT(ri, off, "%zu bytes that are not a Chakra Node message", len);
        ri->n++;
        pos += len;
        if ((rc = node_attrs(im, ri, d, err)))
            return rc;
    }
    return RS_OK;
}

/* ---- across ranks: messages pair up, collectives match ----------------------------------- */

static int cmp_p2p(const void *a, const void *b)
{
    const p2p *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    if (x->send != y->send)
        return x->send > y->send ? -1 : 1; /* sends first */
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_cev(const void *a, const void *b)
{
    const cev *x = a, *y = b;
    if (x->comm != y->comm)
        return x->comm < y->comm ? -1 : 1;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* (comm, rank, append position): each rank's issues on a communicator in order */
static int cmp_cev_issue(const void *a, const void *b)
{
    const cev *x = a, *y = b;
    if (x->comm != y->comm)
        return x->comm < y->comm ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static const char *coll_name(uint8_t c)
{
    return rs_coll_op_name((rs_coll_op)c);
}

static int match_all(imp *im)
{
    rs_err *err = im->err;
    /* Messages and collectives were appended rank by rank in program order,
     * and each (src, dst, direction) or (comm, rank) sequence comes from one
     * file: sorting by the append position keeps program order within it.
     * O(n log n) in all. */
    for (size_t i = 0; i < im->nmsgs; i++)
        im->msgs[i].seq = i;
    if (im->nmsgs) /* qsort wants an array, even of none */
        qsort(im->msgs, im->nmsgs, sizeof *im->msgs, cmp_p2p);
    size_t i = 0;
    while (i < im->nmsgs) {
        size_t a = i, ns = 0, nr;
        while (i < im->nmsgs && im->msgs[i].src == im->msgs[a].src && im->msgs[i].dst == im->msgs[a].dst &&
               im->msgs[i].send)
            i++, ns++;
        size_t r0 = i;
        while (i < im->nmsgs && im->msgs[i].src == im->msgs[a].src && im->msgs[i].dst == im->msgs[a].dst)
            i++;
        nr = i - r0;
        for (size_t k = 0; k < ns || k < nr; k++) {
            const p2p *s = k < ns ? &im->msgs[a + k] : NULL, *r = k < nr ? &im->msgs[r0 + k] : NULL;
            if (!r || !s) {
                const p2p *x = s ? s : r;
                const rank_in *ri = &im->rk[x->file];
                return BADAT(ri, x->off, "node %" PRIu64 ": %s #%zu %s rank %u has no matching %s in rank %u's file "
                             "(%zu sends, %zu receives)", x->id, s ? "send" : "receive", k + 1, s ? "to" : "from",
                             s ? x->dst : x->src, s ? "receive" : "send", s ? x->dst : x->src, ns, nr);
            }
            if (s->tag != r->tag || s->bytes != r->bytes) {
                const rank_in *ri = &im->rk[r->file];
                return BADAT(ri, r->off, "node %" PRIu64 ": receive #%zu from rank %u (tag %" PRId64 ", %" PRIu64
                             " bytes) does not match that rank's send #%zu to it (node %" PRIu64 ", tag %" PRId64
                             ", %" PRIu64 " bytes); railsim pairs messages in order", r->id, k + 1, r->src, r->tag,
                             r->bytes, k + 1, s->id, s->tag, s->bytes);
            }
        }
    }
    for (size_t q = 0; q < im->ncevs; q++)
        im->cevs[q].seq = (uint32_t)q; /* append position first, then per (comm, rank) */
    if (im->ncevs)
        qsort(im->cevs, im->ncevs, sizeof *im->cevs, cmp_cev_issue);
    for (size_t q = 0; q < im->ncevs; q++)
        im->cevs[q].seq = q && im->cevs[q - 1].comm == im->cevs[q].comm && im->cevs[q - 1].rank == im->cevs[q].rank
                              ? im->cevs[q - 1].seq + 1 : 0;
    if (im->ncevs)
        qsort(im->cevs, im->ncevs, sizeof *im->cevs, cmp_cev);
    i = 0;
    while (i < im->ncevs) {
        size_t a = i;
        while (i < im->ncevs && im->cevs[i].comm == im->cevs[a].comm && im->cevs[i].seq == im->cevs[a].seq)
            i++;
        const comm_def *cd = &im->comms[im->cevs[a].comm];
        const cev *x = &im->cevs[a];
        if (i - a != cd->n) {
            /* the first member that lacks it */
            uint32_t miss = 0;
            for (uint32_t m = 0; m < cd->n; m++) {
                int found = 0;
                for (size_t k = a; k < i && !found; k++)
                    found = im->cevs[k].rank == cd->ranks[m];
                if (!found) {
                    miss = cd->ranks[m];
                    break;
                }
            }
            const rank_in *ri = &im->rk[x->file];
            return BADAT(ri, x->off, "node %" PRIu64 ": collective #%u on process group %s%s%s (%u ranks) is not "
                         "issued by rank %u", x->id, x->seq + 1, cd->pg ? "\"" : "", cd->pg ? cd->pg : "world",
                         cd->pg ? "\"" : "", cd->n, miss);
        }
        for (size_t k = a + 1; k < i; k++) {
            const cev *y = &im->cevs[k];
            if (y->coll != x->coll || y->bytes != x->bytes) {
                const rank_in *ri = &im->rk[y->file];
                return BADAT(ri, y->off, "node %" PRIu64 ": collective #%u on its process group is %s of %" PRIu64
                             " bytes but rank %u's is %s of %" PRIu64 " bytes", y->id, y->seq + 1, coll_name(y->coll),
                             y->bytes, x->rank, coll_name(x->coll), x->bytes);
            }
        }
    }
    return RS_OK;
}

/* ---- the whole import ------------------------------------------------------------------ */

static void imp_free(imp *im)
{
    if (im->rk)
        for (uint32_t r = 0; r < im->nranks; r++) {
            rank_in *ri = &im->rk[r];
            for (uint32_t i = 0; i < ri->n; i++)
                chakra_proto_msg__node__free_unpacked(ri->nodes[i].pb, NULL);
            free(ri->nodes);
            free(ri->ops);
            if (ri->meta)
                chakra_proto_msg__global_metadata__free_unpacked(ri->meta, NULL);
            rs_chakra_pg_free(&ri->pgs);
        }
    rs_chakra_pg_free(&im->gpgs);
    free(im->rk);
    for (uint32_t c = 0; c < im->ncomms; c++) {
        free(im->comms[c].ranks);
        free(im->comms[c].pg);
    }
    free(im->comms);
    free(im->msgs);
    free(im->cevs);
    for (uint32_t i = 0; i < im->nstrs; i++)
        free(im->strs[i]);
    free(im->strs);
    rs_hindex_fini(&im->sidx);
}

/* A railsim export's iteration facts (GlobalMetadata "railsim_*"
 * attributes), so that MFU survives a round trip; absent in other
 * producers' files, where the defaults stand. */
static void meta_iter(const pb_meta *m, rs_trace_iter *it, char *name, size_t cap)
{
    const pb_attr *a = attr_find(m->attr, m->n_attr, "railsim_name");
    if (a && a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL && *a->string_val) {
        size_t n = 0;
        for (const char *c = a->string_val; *c && n + 1 < cap; c++)
            name[n++] = (unsigned char)*c < 0x20 || *c == 0x7f ? ' ' : *c;
        name[n] = 0;
    }
    a = attr_find(m->attr, m->n_attr, "railsim_flops");
    if (a && a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_LIST && a->double_list->n_values == 3) {
        const double *v = a->double_list->values;
        if (v[0] >= 0 && v[0] < 1e30)
            it->model_flops = v[0];
        if (v[1] > 0 && v[1] < 1e30)
            it->peak_flops = v[1];
        if (v[2] > 0 && v[2] <= 1)
            it->efficiency = v[2];
    }
    a = attr_find(m->attr, m->n_attr, "railsim_iteration");
    if (a && a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_LIST && a->uint64_list->n_values == 10) {
        const uint64_t *v = a->uint64_list->values;
        uint32_t *f[8] = { &it->micro_batches, &it->layers, &it->tp, &it->pp, &it->dp, &it->cp, &it->ep, &it->zero };
        it->tokens = v[0];
        for (int i = 0; i < 8; i++)
            *f[i] = v[i + 1] > UINT32_MAX ? 0 : (uint32_t)v[i + 1];
    }
}

int rs_chakra_import(const rs_chakra_file *files, uint32_t n, const rs_chakra_opts *o, rs_trace **out,
                     rs_chakra_stats *st, rs_err *err)
{
    *out = NULL;
    rs_err local;
    if (!err)
        err = &local;
    rs_err_clear(err);
    rs_chakra_opts def;
    if (!o) {
        rs_chakra_opts_default(&def);
        o = &def;
    }
    if (st)
        memset(st, 0, sizeof *st);
    if (n == 0)
        return rs_err_set(err, RS_EINVAL, "chakra: no ET files given");
    if (n > 65536)
        return rs_err_set(err, RS_EINVAL, "chakra: %u ranks, expected at most 65536", n);
    imp im = { .o = o, .nranks = n, .st = st, .err = err };
    for (int k = 0; k < RS_DIM_COUNT; k++)
        im.world[k] = RS_NONE;
    int rc = RS_ENOMEM;
    im.rk = calloc(n, sizeof *im.rk);
    if (!im.rk)
        goto fail;
    for (uint32_t i = 0; i < n; i++) {
        if (files[i].rank >= n) {
            rc = rs_err_set(err, RS_EINVAL, "%s: rank %u, but %u files were given: expected ranks 0 to %u, "
                            "so a rank below it is missing", files[i].name, files[i].rank, n, n - 1);
            goto fail;
        }
        if (im.rk[files[i].rank].f) {
            rc = rs_err_set(err, RS_EINVAL, "%s: rank %u already given by %s", files[i].name, files[i].rank,
                            im.rk[files[i].rank].f->name);
            goto fail;
        }
        im.rk[files[i].rank].f = &files[i];
    }
    if (o->comm_groups && (rc = rs_chakra_pg_from_file(&im, o->comm_groups, err)))
        goto fail;
    for (uint32_t r = 0; r < n; r++)
        if ((rc = decode_file(&im, &im.rk[r], err)))
            goto fail;
    for (uint32_t r = 0; r < n; r++)
        if ((rc = rs_chakra_build_rank(&im, &im.rk[r])))
            goto fail;
    if ((rc = match_all(&im)))
        goto fail;
    uint32_t nslots = 0;
    for (uint32_t r = 0; r < n; r++)
        nslots = im.rk[r].nslots > nslots ? im.rk[r].nslots : nslots;
    if ((rc = rs_trace_create(n, nslots, &im.t, err)))
        goto fail;
    for (uint32_t i = 0; i < im.nstrs; i++) {
        uint32_t id;
        if ((rc = rs_trace_add_string(im.t, im.strs[i], &id, err)))
            goto fail;
        if (RS_NEVER(id != i)) {
            rc = RS_EINTERNAL;
            goto fail;
        }
    }
    for (uint32_t c = 0; c < im.ncomms; c++) {
        uint32_t id;
        if ((rc = rs_trace_add_comm(im.t, (rs_dim)im.comms[c].dim, im.comms[c].ranks, im.comms[c].n, &id, err)))
            goto fail;
    }
    for (uint32_t r = 0; r < n; r++) {
        rank_in *ri = &im.rk[r];
        uint32_t cls, slots[RS_TRACE_MAX_SLOTS];
        for (uint32_t s = 0; s < nslots; s++)
            slots[s] = s < ri->nslots ? ri->slots[s] : RS_NONE;
        if ((rc = rs_trace_add_class(im.t, ri->ops, ri->nops, &cls, err)) ||
            (rc = rs_trace_set_rank(im.t, r, r, cls, slots, err)))
            goto fail;
        if (st) {
            st->nodes += ri->n;
            st->ops += ri->nops;
        }
    }
    rs_trace_iter it = { .peak_flops = o->peak_flops, .efficiency = o->efficiency, .model_flops = im.flops };
    char tname[64] = "chakra";
    meta_iter(im.rk[0].meta, &it, tname, sizeof tname);
    if ((rc = rs_trace_set_info(im.t, &it, n, tname, err)) || (rc = rs_trace_finish(im.t, err)))
        goto fail;
    if (st)
        st->nranks = n;
    *out = im.t;
    im.t = NULL;
    imp_free(&im);
    return RS_OK;
fail:
    if (rc == RS_ENOMEM && !strstr(err->msg, "memory"))
        rs_chakra_oom(err);
    rs_trace_destroy(im.t);
    imp_free(&im);
    return rc;
}

/* ---- paths ------------------------------------------------------------------------------ */

/* "<name>.<rank>.et" -> rank; -1 if the name is not of that form. */
static long rank_of_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (n < 4 || strcmp(base + n - 3, ".et"))
        return -1;
    size_t e = n - 3, s = e;
    while (s > 0 && base[s - 1] >= '0' && base[s - 1] <= '9')
        s--;
    if (s == e || s == 0 || base[s - 1] != '.' || e - s > 7)
        return -1;
    return strtol(base + s, NULL, 10);
}

typedef struct pathlist {
    char **p;
    size_t n, cap;
} pathlist;

static int pl_add(pathlist *pl, const char *a, const char *b)
{
    if (rs_array_reserve(&pl->p, &pl->cap, pl->n + 1, sizeof *pl->p, 16))
        return -1;
    size_t la = strlen(a), lb = b ? strlen(b) : 0;
    char *s = malloc(la + lb + 2);
    if (!s)
        return -1;
    memcpy(s, a, la);
    if (b) {
        s[la] = '/';
        memcpy(s + la + 1, b, lb + 1);
    } else {
        s[la] = 0;
    }
    pl->p[pl->n++] = s;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int read_whole(const char *path, uint8_t **buf, size_t *len, rs_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return rs_err_set(err, RS_EIO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 0, n = 0;
    uint8_t *b = NULL;
    for (;;) {
        if (rs_array_reserve(&b, &cap, n + 65536, 1, 65536)) {
            fclose(f);
            free(b);
            return rs_chakra_oom(err);
        }
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
        if (n > MAX_FILE) {
            fclose(f);
            free(b);
            return rs_err_set(err, RS_EFORMAT, "%s: larger than 2 GiB", path);
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(b);
        return rs_err_set(err, RS_EIO, "%s: read error", path);
    }
    *buf = b;
    *len = n;
    return RS_OK;
}

int rs_chakra_import_paths(const char *const *paths, uint32_t npaths, const rs_chakra_opts *o, rs_trace **out,
                           rs_chakra_stats *st, rs_err *err)
{
    pathlist pl = { 0 };
    rs_chakra_file *files = NULL;
    int rc = RS_ENOMEM;
    *out = NULL;
    rs_err local;
    if (!err)
        err = &local;
    rs_err_clear(err);
    for (uint32_t i = 0; i < npaths; i++) {
        struct stat sb;
        if (stat(paths[i], &sb)) {
            rc = rs_err_set(err, RS_EIO, "%s: %s", paths[i], strerror(errno));
            goto out;
        }
        if (S_ISDIR(sb.st_mode)) {
            DIR *dd = opendir(paths[i]);
            if (!dd) {
                rc = rs_err_set(err, RS_EIO, "%s: cannot open the directory: %s", paths[i], strerror(errno));
                goto out;
            }
            size_t before = pl.n;
            struct dirent *de;
            while ((de = readdir(dd)))
                if (rank_of_name(de->d_name) >= 0 && pl_add(&pl, paths[i], de->d_name)) {
                    closedir(dd);
                    goto out;
                }
            closedir(dd);
            if (pl.n == before) {
                rc = rs_err_set(err, RS_EINVAL, "%s: no Chakra ET files (NAME.RANK.et) in the directory", paths[i]);
                goto out;
            }
        } else {
            if (rank_of_name(paths[i]) < 0) {
                rc = rs_err_set(err, RS_EINVAL, "%s: expected a Chakra ET file named NAME.RANK.et, or a directory",
                                paths[i]);
                goto out;
            }
            if (pl_add(&pl, paths[i], NULL))
                goto out;
        }
    }
    if (pl.n) /* readdir order is the file system's */
        qsort(pl.p, pl.n, sizeof *pl.p, cmp_str);
    if (pl.n > 65536) {
        rc = rs_err_set(err, RS_EINVAL, "chakra: %zu ET files, expected at most 65536", pl.n);
        goto out;
    }
    files = calloc(pl.n + 1, sizeof *files);
    if (!files)
        goto out;
    /* A missing rank is named before any file is read. */
    {
        uint8_t *seen = calloc(pl.n + 1, 1);
        if (!seen)
            goto out;
        for (size_t i = 0; i < pl.n; i++) {
            long r = rank_of_name(pl.p[i]);
            if (r >= 0 && (size_t)r < pl.n)
                seen[r] = 1;
        }
        for (size_t r = 0; r < pl.n; r++)
            if (!seen[r]) {
                long hi = 0;
                for (size_t i = 0; i < pl.n; i++)
                    if (rank_of_name(pl.p[i]) > hi)
                        hi = rank_of_name(pl.p[i]);
                free(seen);
                rc = rs_err_set(err, RS_EINVAL, "%s: rank %zu is missing (%zu ET files, the highest rank %ld; "
                                "expected one NAME.RANK.et for every rank from 0)", npaths == 1 ? paths[0] : "chakra",
                                r, pl.n, hi);
                goto out;
            }
        free(seen);
    }
    for (size_t i = 0; i < pl.n; i++) {
        uint8_t *b = NULL;
        size_t len = 0;
        if ((rc = read_whole(pl.p[i], &b, &len, err)))
            goto out;
        files[i] = (rs_chakra_file){ .name = pl.p[i], .rank = (uint32_t)rank_of_name(pl.p[i]), .buf = b, .len = len };
    }
    rc = rs_chakra_import(files, (uint32_t)pl.n, o, out, st, err);
out:
    if (rc == RS_ENOMEM && !strstr(err->msg, "memory"))
        rs_chakra_oom(err);
    for (size_t i = 0; files && i < pl.n; i++)
        free((void *)files[i].buf);
    free(files);
    for (size_t i = 0; i < pl.n; i++)
        free(pl.p[i]);
    free(pl.p);
    return rc;
}
