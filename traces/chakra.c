/*
 * chakra.c - Chakra ET import and export (chakra.h, docs/chakra.md). The
 * wire format is protobuf-c's (generated from traces/chakra/et_def.proto);
 * this file only splits the length-delimited stream, as Chakra's protolib
 * does, and maps messages to ops and back.
 *
 * Import, per rank: decode every message; index nodes by id; topological
 * order by Kahn's algorithm taking the earliest node of the file first (so
 * a file written in a valid order keeps it); then one pass in that order
 * builds the program. Each op carries a vector clock over the 16 streams
 * (vc[s] = the last op of stream s known complete before it ends): since a
 * stream runs in order, any set of dependencies reduces to at most one op
 * per stream, a dependency is implied when the clock already covers it,
 * and a contracted node is just the clock of what it waited for. O(nodes x
 * 16) time and memory.
 *
 * Longer than the style's 1,500 lines: import, export and the process-group
 * tables all handle protobuf-c's generated types, and keeping protobuf-c
 * behind one module weighs more here.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "chakra.h"
#include "coll.h"
#include <jansson.h>

#include "et_def.pb-c.h"
#include "plan.h"
#include "pool.h"

typedef ChakraProtoMsg__Node pb_node;
typedef ChakraProtoMsg__AttributeProto pb_attr;
typedef ChakraProtoMsg__GlobalMetadata pb_meta;

#define S RS_STREAMS_MAX
#define MAX_FILE (1ull << 31) /* 2 GiB per rank file */
#define MAX_NODES (1u << 24)

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

/* The i-th value of an integer list attribute; n = its length (-1 if the
 * attribute is not an integer list). */
static long long attr_list_len(const pb_attr *a)
{
    switch (a->value_case) {
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_LIST: return (long long)a->int32_list->n_values;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_LIST: return (long long)a->int64_list->n_values;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT32_LIST: return (long long)a->uint32_list->n_values;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_LIST: return (long long)a->uint64_list->n_values;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT32_LIST: return (long long)a->sint32_list->n_values;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT64_LIST: return (long long)a->sint64_list->n_values;
    default: return -1;
    }
}

static int64_t attr_list_at(const pb_attr *a, size_t i)
{
    switch (a->value_case) {
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_LIST: return a->int32_list->values[i];
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_LIST: return a->int64_list->values[i];
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT32_LIST: return a->uint32_list->values[i];
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_LIST:
        return a->uint64_list->values[i] > INT64_MAX ? -1 : (int64_t)a->uint64_list->values[i];
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT32_LIST: return a->sint32_list->values[i];
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT64_LIST: return a->sint64_list->values[i];
    default: return -1;
    }
}

/* ---- import state --------------------------------------------------------------- */

enum { K_NOOP = 0xff };

typedef struct nd {
    uint64_t id;
    size_t off;          /* byte offset of the node's length prefix */
    pb_node *pb;
    uint8_t kind;        /* rs_op_kind or K_NOOP */
    uint8_t coll, dim;
    int8_t stream;       /* railsim_stream attribute, -1 when absent */
    uint32_t peer;       /* SEND/RECV */
    uint32_t comm;       /* COLL: communicator index */
    uint64_t bytes;
    int64_t tag;
    rs_time dur;
    double flops;
} nd;

typedef struct comm_def {
    uint32_t *ranks, n;
    uint8_t dim;
    char *pg;            /* the pg_name that named it (NULL: the world) */
} comm_def;

typedef struct p2p {     /* one send or receive, for matching */
    uint64_t seq;        /* position in the import: program order per file */
    uint32_t src, dst, file;
    uint8_t send;
    int64_t tag;
    uint64_t bytes, id;
    size_t off;
} p2p;

typedef struct cev {     /* one collective issue, for matching */
    uint32_t comm, seq, rank, file;
    uint8_t coll;
    uint64_t bytes, id;
    size_t off;
} cev;

typedef struct pgdef {
    char *name;
    uint32_t *ranks, n;  /* n == 0: every rank */
} pgdef;

typedef struct pgtab {
    pgdef *v;
    size_t n, cap;
} pgtab;

typedef struct rank_in {
    const rs_chakra_file *f;
    pgtab pgs;           /* process groups this rank's file defines */
    pb_meta *meta;
    nd *nodes;
    uint32_t n;
    rs_op *ops;
    uint32_t nops;
    uint32_t slots[RS_TRACE_MAX_SLOTS], nslots;
    uint8_t slot_coll[RS_TRACE_MAX_SLOTS];
} rank_in;

typedef struct imp {
    const rs_chakra_opts *o;
    rank_in *rk;
    uint32_t nranks;
    comm_def *comms;
    uint32_t ncomms, capcomms;
    pgtab gpgs;          /* from the --comm-groups file */
    uint32_t world[RS_DIM_COUNT]; /* the all-ranks communicator per dim, once made */
    p2p *msgs;
    size_t nmsgs, capmsgs;
    cev *cevs;
    size_t ncevs, capcevs;
    char **strs;         /* labels, interned here until the trace is made */
    uint32_t *shash;     /* open addressing: index + 1, 0 = empty */
    uint32_t nstrs, capstrs, hcap;
    rs_trace *t;
    rs_chakra_stats *st;
    double flops;
    rs_err *err;
} imp;

#define BADAT(ri, off, ...) bad_at(err, (ri)->f->name, (ri)->f->rank, (off), __VA_ARGS__)

static int bad_at(rs_err *err, const char *file, uint32_t rank, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int bad_at(rs_err *err, const char *file, uint32_t rank, size_t off, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return rs_err_set(err, RS_EFORMAT, "%s: rank %u, byte offset %zu: %s", file, rank, off, what);
}

static int oom(rs_err *err)
{
    return rs_err_set(err, RS_ENOMEM, "out of memory importing the Chakra trace");
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

static int node_attrs(imp *im, rank_in *ri, nd *d, rs_err *err);
static int pg_from_meta(imp *im, rank_in *ri, rs_err *err);

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
    int rc = pg_from_meta(im, ri, err);
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
            return oom(err);
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

/* ---- communicators ---------------------------------------------------------------- */

static int comm_intern(imp *im, const uint32_t *ranks, uint32_t n, uint8_t dim, const char *pg, uint32_t *id)
{
    for (uint32_t c = 0; c < im->ncomms; c++) {
        comm_def *cd = &im->comms[c];
        if (cd->n == n && cd->dim == dim && !memcmp(cd->ranks, ranks, n * sizeof *ranks)) {
            *id = c;
            return 0;
        }
    }
    if (rs_array_reserve32(&im->comms, &im->capcomms, im->ncomms + 1, sizeof *im->comms, 16))
        return -1;
    comm_def *cd = &im->comms[im->ncomms];
    cd->ranks = malloc(n * sizeof *ranks);
    cd->pg = pg ? strdup(pg) : NULL;
    if (!cd->ranks || (pg && !cd->pg)) {
        free(cd->ranks);
        free(cd->pg);
        return -1;
    }
    if (n)
        memcpy(cd->ranks, ranks, n * sizeof *ranks);
    cd->n = n;
    cd->dim = dim;
    *id = im->ncomms++;
    return 0;
}

/* ---- process groups ----------------------------------------------------------------- */

/* Add group name with members r[0..n) (n == 0: every rank, PyTorch's
 * convention for the default group) to tab. 0; -1 with why filled for a
 * rank out of range or listed twice; -2 out of memory. */
static int pg_add(pgtab *tab, const char *name, const int64_t *r, size_t n, uint32_t nranks, char *why,
                  size_t whylen)
{
    if (n > nranks) {
        snprintf(why, whylen, "%zu ranks, more than the %u there are", n, nranks);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        int dup = 0;
        for (size_t j = 0; j < i && !dup; j++)
            dup = r[j] == r[i];
        if (r[i] < 0 || r[i] >= nranks || dup) {
            snprintf(why, whylen, "rank %" PRId64 " %s", r[i], dup ? "listed twice" : "out of range");
            return -1;
        }
    }
    if (rs_array_reserve(&tab->v, &tab->cap, tab->n + 1, sizeof *tab->v, 16))
        return -2;
    pgdef *g = &tab->v[tab->n];
    g->name = strdup(name);
    g->ranks = malloc((n ? n : 1) * sizeof *g->ranks);
    if (!g->name || !g->ranks) {
        free(g->name);
        free(g->ranks);
        return -2;
    }
    for (size_t i = 0; i < n; i++)
        g->ranks[i] = (uint32_t)r[i];
    g->n = (uint32_t)n;
    tab->n++;
    return 0;
}

static void pg_free(pgtab *tab)
{
    for (size_t i = 0; i < tab->n; i++) {
        free(tab->v[i].name);
        free(tab->v[i].ranks);
    }
    free(tab->v);
}

/* A JSON list of integers into a malloc'ed array; -1 if it is not one. */
static int json_ranks(const json_t *a, int64_t **out, size_t *n)
{
    if (!json_is_array(a))
        return -1;
    *n = json_array_size(a);
    *out = malloc((*n ? *n : 1) * sizeof **out);
    if (!*out)
        return -2;
    for (size_t i = 0; i < *n; i++) {
        const json_t *v = json_array_get(a, i);
        if (!json_is_integer(v)) {
            free(*out);
            return -1;
        }
        (*out)[i] = json_integer_value(v);
    }
    return 0;
}

/* GlobalMetadata attributes "pg_ranks:NAME" (integer lists): the table
 * railsim's exporter writes. */
static int pg_from_meta(imp *im, rank_in *ri, rs_err *err)
{
    for (size_t k = 0; k < ri->meta->n_attr; k++) {
        const pb_attr *a = ri->meta->attr[k];
        if (!a->name || strncmp(a->name, "pg_ranks:", 9))
            continue;
        long long m = attr_list_len(a);
        if (m < 0)
            return BADAT(ri, 0, "GlobalMetadata attribute \"%s\": expected an integer list of ranks", a->name);
        int64_t *r = malloc(((size_t)m + 1) * sizeof *r);
        if (!r)
            return oom(err);
        for (long long i = 0; i < m; i++)
            r[i] = attr_list_at(a, (size_t)i);
        char why[96];
        int rc = pg_add(&ri->pgs, a->name + 9, r, (size_t)m, im->nranks, why, sizeof why);
        free(r);
        if (rc == -2)
            return oom(err);
        if (rc)
            return BADAT(ri, 0, "GlobalMetadata attribute \"%s\": %s", a->name, why);
    }
    return RS_OK;
}

/* A METADATA_NODE whose inputs.values is PyTorch's process-group record,
 * as ASTRA-sim reads it: ["[{"pg_name": "1", "ranks": [0, 1], ...}, ...]"]
 * (the JSON list inside one string list item; an empty ranks list is every
 * rank). Other metadata is no process-group table and is left alone. */
static int pg_from_node(imp *im, rank_in *ri, const nd *d, rs_err *err)
{
    const char *v = d->pb->inputs ? d->pb->inputs->values : NULL;
    size_t n = v ? strlen(v) : 0;
    if (n < 2)
        return RS_OK;
    json_error_t je;
    json_t *j = n >= 4 && !strncmp(v, "[\"", 2) && !strcmp(v + n - 2, "\"]") ? json_loadb(v + 2, n - 4, 0, &je)
                                                                             : json_loadb(v, n, 0, &je);
    if (!j)
        return RS_OK;
    int rc = RS_OK;
    size_t i;
    json_t *it;
    json_array_foreach(j, i, it) {
        const json_t *name = json_object_get(it, "pg_name"), *ranks = json_object_get(it, "ranks");
        if (!json_is_object(it) || !name)
            continue;
        int64_t *r = NULL;
        size_t m = 0;
        char why[96] = "expected a list of integer ranks";
        int bad = !json_is_string(name) ? -1 : json_ranks(ranks, &r, &m);
        if (bad == 0)
            bad = pg_add(&ri->pgs, json_string_value(name), r, m, im->nranks, why, sizeof why);
        free(r);
        if (bad == -2) {
            rc = oom(err);
            break;
        }
        if (bad) {
            rc = BADAT(ri, d->off, "node %" PRIu64 ": process group record %zu: %s", d->id, i + 1, why);
            break;
        }
    }
    json_decref(j);
    return rc;
}

/* ASTRA-sim's --comm-group-configuration file: {"1": [0, 1, 2, 3], ...}. */
static int pg_from_file(imp *im, const char *path, rs_err *err)
{
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    if (!j)
        return rs_err_set(err, RS_EFORMAT, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    int rc = RS_OK;
    const char *key;
    json_t *v;
    if (!json_is_object(j))
        rc = rs_err_set(err, RS_EFORMAT, "%s: expected an object of process groups: {\"1\": [0, 1], ...}", path);
    json_object_foreach(j, key, v) {
        if (rc)
            break;
        int64_t *r = NULL;
        size_t m = 0;
        char why[96] = "expected a list of integer ranks";
        int bad = json_ranks(v, &r, &m);
        if (bad == 0)
            bad = pg_add(&im->gpgs, key, r, m, im->nranks, why, sizeof why);
        free(r);
        if (bad == -2)
            rc = oom(err);
        else if (bad)
            rc = rs_err_set(err, RS_EFORMAT, "%s: process group \"%s\": %s", path, key, why);
    }
    json_decref(j);
    return rc;
}

/* The members of process group pg for rank ri: its own table (the last
 * definition), then the --comm-groups file; "0" and "world" are every rank
 * when no table names them (ASTRA-sim's default group). *out NULL = every
 * rank; else borrowed. */
static int pg_members(imp *im, rank_in *ri, const nd *d, const char *pg, const uint32_t **out, uint32_t *nout,
                      rs_err *err)
{
    (void)err;
    const pgdef *g = NULL;
    for (size_t i = ri->pgs.n; i-- > 0 && !g;)
        if (!strcmp(ri->pgs.v[i].name, pg))
            g = &ri->pgs.v[i];
    for (size_t i = 0; i < im->gpgs.n && !g; i++)
        if (!strcmp(im->gpgs.v[i].name, pg))
            g = &im->gpgs.v[i];
    *out = NULL;
    *nout = 0;
    if (!g) {
        if (!strcmp(pg, "0") || !strcmp(pg, "world"))
            return RS_OK;
        return BADAT(ri, d->off, "node %" PRIu64 ": process group \"%s\" is in no table (the metadata's "
                     "\"pg_ranks:%s\", a process-group METADATA_NODE before it, or --comm-groups)", d->id, pg, pg);
    }
    if (g->n == 0)
        return RS_OK;
    int self = 0;
    for (uint32_t i = 0; i < g->n; i++)
        self |= g->ranks[i] == ri->f->rank;
    if (!self)
        return BADAT(ri, d->off, "node %" PRIu64 ": process group \"%s\" does not contain rank %u", d->id, pg,
                     ri->f->rank);
    *out = g->ranks;
    *nout = g->n;
    return RS_OK;
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

static int node_attrs(imp *im, rank_in *ri, nd *d, rs_err *err)
{
    pb_node *p = d->pb;
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
    switch (p->type) {
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE:
    case CHAKRA_PROTO_MSG__NODE_TYPE__MEM_LOAD_NODE:
    case CHAKRA_PROTO_MSG__NODE_TYPE__MEM_STORE_NODE: {
        uint64_t ops = 0, bytes = 0;
        if ((rc = need_u64(ri, d, "num_ops", &ops, 0, err)) < 0 ||
            (rc = need_u64(ri, d, "tensor_size", &bytes, 0, err)) < 0)
            return rc;
        d->flops = (double)ops;
        if (d->dur == 0) {
            double ps = (double)ops * 1e12 / (im->o->peak_flops * im->o->efficiency);
            double pm = (double)bytes * 1e12 / im->o->mem_bw;
            if (pm > ps)
                ps = pm;
            d->dur = ps >= (double)(RS_TIME_MAX / 2) ? RS_TIME_MAX / 2 : (rs_time)(ps + 0.5);
        }
        if (d->dur)
            d->kind = RS_OP_COMPUTE;
        break;
    }
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE: {
        uint64_t ct;
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
        const pb_attr *pa = attr_find(p->attr, p->n_attr, "pg_name");
        char pgbuf[32];
        const char *pg = NULL;
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
        if (pg && (rc = pg_members(im, ri, d, pg, &ranks, &nr, err)))
            return rc;
        uint32_t *world = NULL;
        if (!ranks && im->world[d->dim] != RS_NONE) {
            d->comm = im->world[d->dim];
            break;
        }
        if (!ranks) {
            world = malloc((size_t)im->nranks * sizeof *world);
            if (!world)
                return oom(err);
            for (uint32_t r = 0; r < im->nranks; r++)
                world[r] = r;
            ranks = world;
            nr = im->nranks;
            pg = NULL;
        }
        int is_world = world != NULL;
        rc = comm_intern(im, ranks, nr, d->dim, pg, &d->comm);
        free(world);
        if (rc)
            return oom(err);
        if (is_world)
            im->world[d->dim] = d->comm;
        break;
    }
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE:
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE: {
        int send = p->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE;
        uint64_t peer;
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
        d->dim = a ? d->dim : RS_DIM_PP;
        break;
    }
    case CHAKRA_PROTO_MSG__NODE_TYPE__METADATA_NODE:
        if ((rc = pg_from_node(im, ri, d, err)))
            return rc;
        /* fall through */
    default: /* METADATA, STORAGE, BATCH, CHECKPOINT: time only if given */
        if (d->dur)
            d->kind = RS_OP_COMPUTE;
        break;
    }
    if (d->kind == RS_OP_COMPUTE)
        d->dim = RS_DIM_NONE;
    return RS_OK;
}

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
        return bad_at(im->err, ri->f->name, ri->f->rank, d->off,
                      "node %" PRIu64 ": more than %u distinct process groups and peers on one rank", d->id,
                      RS_TRACE_MAX_SLOTS);
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
    return str_intern(im, s, id) ? oom(im->err) : RS_OK;
}

static int build_rank(imp *im, rank_in *ri)
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
                rc = oom(err);
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
            rc = oom(err);
            goto out;
        }
        nvc[i] = b.vc[b.n - 1];
        if (d->kind == RS_OP_COMPUTE)
            im->flops += d->flops;
        /* for matching across ranks */
        if (d->kind == RS_OP_SEND || d->kind == RS_OP_RECV) {
            if (rs_array_reserve(&im->msgs, &im->capmsgs, im->nmsgs + 1, sizeof *im->msgs, 16)) {
                rc = oom(err);
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
                rc = oom(err);
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
        oom(err);
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
            pg_free(&ri->pgs);
        }
    pg_free(&im->gpgs);
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
    free(im->shash);
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
    if (o->comm_groups && (rc = pg_from_file(&im, o->comm_groups, err)))
        goto fail;
    for (uint32_t r = 0; r < n; r++)
        if ((rc = decode_file(&im, &im.rk[r], err)))
            goto fail;
    for (uint32_t r = 0; r < n; r++)
        if ((rc = build_rank(&im, &im.rk[r])))
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
        oom(err);
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
            return oom(err);
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
        oom(err);
    for (size_t i = 0; files && i < pl.n; i++)
        free((void *)files[i].buf);
    free(files);
    for (size_t i = 0; i < pl.n; i++)
        free(pl.p[i]);
    free(pl.p);
    return rc;
}

/* ---- export ------------------------------------------------------------------------------ */

typedef struct obuf {
    uint8_t *p;
    size_t n, cap;
} obuf;

static int put_msg(obuf *o, const ProtobufCMessage *m)
{
    size_t len = protobuf_c_message_get_packed_size(m);
    if (rs_array_reserve(&o->p, &o->cap, o->n + len + 10, 1, 16))
        return -1;
    uint64_t v = len;
    do {
        uint8_t c = v & 0x7f;
        v >>= 7;
        o->p[o->n++] = c | (v ? 0x80 : 0);
    } while (v);
    o->n += protobuf_c_message_pack(m, o->p + o->n);
    return 0;
}

/* Attributes of one node, in caller storage (at most 12). */
typedef struct attrs {
    pb_attr a[12];
    pb_attr *pa[12];
    size_t n;
} attrs;

static pb_attr *attr_add(attrs *as, const char *name)
{
    pb_attr *a = &as->a[as->n];
    chakra_proto_msg__attribute_proto__init(a);
    a->name = (char *)name;
    as->pa[as->n++] = a;
    return a;
}

static void attr_u64(attrs *as, const char *name, uint64_t v)
{
    pb_attr *a = attr_add(as, name);
    a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL;
    a->uint64_val = v;
}

static void attr_i64(attrs *as, const char *name, int64_t v)
{
    pb_attr *a = attr_add(as, name);
    a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
    a->int64_val = v;
}

static void attr_str(attrs *as, const char *name, const char *v)
{
    pb_attr *a = attr_add(as, name);
    a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL;
    a->string_val = (char *)v;
}

int rs_chakra_export_rank(const rs_trace *t, uint32_t rank, uint8_t **buf, size_t *len, rs_err *err)
{
    /* railsim coll -> Chakra CollectiveCommType */
    static const int64_t ctype[RS_COLL_NOPS] = { 2 /* ALL_GATHER */, 7 /* REDUCE_SCATTER */, 0 /* ALL_REDUCE */,
                                                 6 /* ALL_TO_ALL */, 0 };
    static const char *dims[RS_DIM_COUNT] = { "none", "tp", "pp", "dp", "cp", "ep" };
    obuf o = { 0 };
    uint32_t nops, nslots = rs_trace_nslots(t), nranks = rs_trace_nranks(t);
    const rs_op *ops = rs_trace_program(t, rank, &nops);
    const uint32_t *slots = rs_trace_rank_slots(t, rank);
    int rc = RS_ENOMEM;
    /* Metadata: the process groups this rank uses, by communicator id. */
    pb_attr *ma = calloc((size_t)nslots + 3, sizeof *ma);
    pb_attr **mpa = calloc((size_t)nslots + 3, sizeof *mpa);
    ChakraProtoMsg__Int64List *ml = calloc((size_t)nslots + 1, sizeof *ml);
    char (*mnames)[32] = calloc((size_t)nslots + 1, sizeof *mnames);
    int64_t **mvals = calloc((size_t)nslots + 1, sizeof *mvals);
    uint32_t *tagc = calloc((size_t)nranks * 2, sizeof *tagc); /* per peer: sends, receives so far */
    uint8_t *is_coll = calloc((size_t)nslots + 1, 1);
    if (!ma || !mpa || !ml || !mnames || !mvals || !tagc || !is_coll)
        goto out;
    for (uint32_t i = 0; i < nops; i++)
        if (ops[i].kind == RS_OP_COLL)
            is_coll[ops[i].comm] = 1;
    pb_meta meta;
    chakra_proto_msg__global_metadata__init(&meta);
    meta.version = (char *)"0.0.4";
    for (uint32_t s = 0; s < nslots; s++) {
        if (!is_coll[s])
            continue;
        uint32_t m, c = slots[s];
        const uint32_t *mem = rs_trace_comm_ranks(t, c, &m);
        size_t k = meta.n_attr;
        mvals[k] = malloc((size_t)m * sizeof **mvals);
        if (!mvals[k])
            goto out;
        for (uint32_t q = 0; q < m; q++)
            mvals[k][q] = mem[q];
        chakra_proto_msg__int64_list__init(&ml[k]);
        ml[k].n_values = m;
        ml[k].values = mvals[k];
        chakra_proto_msg__attribute_proto__init(&ma[k]);
        snprintf(mnames[k], sizeof mnames[k], "pg_ranks:%u", c + 1);
        ma[k].name = mnames[k];
        ma[k].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_LIST;
        ma[k].int64_list = &ml[k];
        mpa[k] = &ma[k];
        meta.n_attr++;
    }
    /* railsim's own iteration facts (meta_iter reads them back) */
    const rs_trace_iter *it = rs_trace_iteration(t);
    double fl[3] = { it->model_flops, it->peak_flops, it->efficiency };
    uint64_t iv[10] = { it->tokens, it->micro_batches, it->layers, it->tp, it->pp, it->dp, it->cp, it->ep,
                        it->zero, 0 };
    ChakraProtoMsg__DoubleList dl = CHAKRA_PROTO_MSG__DOUBLE_LIST__INIT;
    ChakraProtoMsg__Uint64List ul = CHAKRA_PROTO_MSG__UINT64_LIST__INIT;
    dl.n_values = 3;
    dl.values = fl;
    ul.n_values = 10;
    ul.values = iv;
    pb_attr *x = &ma[meta.n_attr];
    chakra_proto_msg__attribute_proto__init(x);
    x->name = (char *)"railsim_name";
    x->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL;
    x->string_val = (char *)rs_trace_name(t);
    mpa[meta.n_attr++] = x++;
    chakra_proto_msg__attribute_proto__init(x);
    x->name = (char *)"railsim_flops";
    x->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_LIST;
    x->double_list = &dl;
    mpa[meta.n_attr++] = x++;
    chakra_proto_msg__attribute_proto__init(x);
    x->name = (char *)"railsim_iteration";
    x->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_LIST;
    x->uint64_list = &ul;
    mpa[meta.n_attr++] = x;
    meta.attr = mpa;
    if (put_msg(&o, &meta.base))
        goto out;
    uint32_t last[S];
    for (uint32_t s = 0; s < S; s++)
        last[s] = RS_NONE;
    for (uint32_t i = 0; i < nops; i++) {
        const rs_op *op = &ops[i];
        pb_node pn;
        chakra_proto_msg__node__init(&pn);
        attrs as = { .n = 0 };
        char pg[16];
        uint64_t cdep = last[op->stream], ddep[2];
        last[op->stream] = i;
        pn.id = i;
        pn.name = (char *)rs_trace_string(t, op->label);
        /* Stream order is a control dependency, op deps are data deps. */
        pn.n_ctrl_deps = cdep != RS_NONE;
        pn.ctrl_deps = &cdep;
        for (int d = 0; d < 2; d++)
            if (op->dep[d] != RS_NONE)
                ddep[pn.n_data_deps++] = op->dep[d];
        pn.data_deps = ddep;
        attr_add(&as, "is_cpu_op")->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL;
        attr_u64(&as, "railsim_stream", op->stream);
        switch ((rs_op_kind)op->kind) {
        case RS_OP_COMPUTE:
            pn.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE;
            pn.duration_micros = (op->duration + 500000u) / 1000000u;
            attr_u64(&as, "railsim_duration_ps", op->duration);
            break;
        case RS_OP_COLL:
            pn.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE;
            attr_i64(&as, "comm_type", ctype[op->coll < RS_COLL_NOPS ? op->coll : 0]);
            attr_u64(&as, "comm_size", op->bytes);
            /* communicator id + 1: ASTRA-sim reads pg_name "0" as every rank */
            snprintf(pg, sizeof pg, "%u", rs_trace_op_comm(t, rank, op) + 1);
            attr_str(&as, "pg_name", pg);
            attr_str(&as, "railsim_dim", dims[op->dim < RS_DIM_COUNT ? op->dim : 0]);
            break;
        case RS_OP_SEND:
        case RS_OP_RECV: {
            int send = op->kind == RS_OP_SEND;
            uint32_t peer = rs_trace_op_peer(t, rank, op);
            pn.type = send ? CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE : CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE;
            attr_u64(&as, "comm_src", send ? rank : peer);
            attr_u64(&as, "comm_dst", send ? peer : rank);
            attr_u64(&as, "comm_size", op->bytes);
            /* the k-th message between a pair carries tag k at both ends */
            attr_i64(&as, "comm_tag", tagc[(size_t)peer * 2 + !send]++);
            attr_str(&as, "railsim_dim", dims[op->dim < RS_DIM_COUNT ? op->dim : 0]);
            break;
        }
        }
        pn.n_attr = as.n;
        pn.attr = as.pa;
        if (put_msg(&o, &pn.base))
            goto out;
    }
    *buf = o.p;
    *len = o.n;
    o.p = NULL;
    rc = RS_OK;
out:
    if (rc)
        oom(err);
    free(o.p);
    for (uint32_t s = 0; mvals && s < nslots; s++)
        free(mvals[s]);
    free(mvals);
    free(ma);
    free(mpa);
    free(ml);
    free(mnames);
    free(tagc);
    free(is_coll);
    return rc;
}

int rs_chakra_export(const rs_trace *t, const char *dir, const char *name, rs_err *err)
{
    if (mkdir(dir, 0777) && errno != EEXIST)
        return rs_err_set(err, RS_EIO, "%s: cannot create the directory: %s", dir, strerror(errno));
    size_t pl = strlen(dir) + strlen(name) + 32;
    char *path = malloc(pl), *tmp = malloc(pl + 4);
    if (!path || !tmp) {
        free(path);
        free(tmp);
        return oom(err);
    }
    int rc = RS_OK;
    for (uint32_t r = 0; r < rs_trace_nranks(t) && rc == RS_OK; r++) {
        uint8_t *b;
        size_t n;
        if ((rc = rs_chakra_export_rank(t, r, &b, &n, err)))
            break;
        snprintf(path, pl, "%s/%s.%u.et", dir, name, r);
        snprintf(tmp, pl + 4, "%s.tmp", path);
        FILE *f = fopen(tmp, "wb");
        int ok = f && fwrite(b, 1, n, f) == n;
        ok = f && fclose(f) == 0 && ok;
        free(b);
        if (!ok || rename(tmp, path)) {
            rc = rs_err_set(err, RS_EIO, "%s: cannot write: %s", path, strerror(errno));
            remove(tmp);
        }
    }
    /* The process groups again for ASTRA-sim, which reads them from its
     * --comm-group-configuration file, not from the metadata. */
    if (rc == RS_OK) {
        snprintf(path, pl, "%s/%s.comm_groups.json", dir, name);
        snprintf(tmp, pl + 4, "%s.tmp", path);
        FILE *f = fopen(tmp, "w");
        int ok = f != NULL;
        if (f) {
            fputc('{', f);
            for (uint32_t c = 0; c < rs_trace_ncomms(t); c++) {
                uint32_t m;
                const uint32_t *mem = rs_trace_comm_ranks(t, c, &m);
                fprintf(f, "%s\n  \"%u\": [", c ? "," : "", c + 1);
                for (uint32_t q = 0; q < m; q++)
                    fprintf(f, "%s%u", q ? ", " : "", mem[q]);
                fputc(']', f);
            }
            fputs("\n}\n", f);
            ok = !ferror(f);
            ok = fclose(f) == 0 && ok;
        }
        if (!ok || rename(tmp, path)) {
            rc = rs_err_set(err, RS_EIO, "%s: cannot write: %s", path, strerror(errno));
            remove(tmp);
        }
    }
    free(path);
    free(tmp);
    return rc;
}
