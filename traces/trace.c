/*
 * trace.c - the in-memory trace (builder, validation, queries) and its
 * compressed file format (docs/trace-format.md). The only user of zlib.
 *
 * Layout: every array is indexed by a dense uint32 id. Programs are held
 * expanded, one array per class; the file stores them with repeated runs
 * folded into loops (found here by the writer, so any producer gets them)
 * and dependencies as distances, so that a repeated layer or micro-batch
 * is a byte-identical record sequence. The reader trusts nothing: every
 * count is bounded by the bytes left and by the RS_TRACE_MAX_* limits
 * before anything is allocated, and the decoded trace goes through the
 * same rs_trace_finish checks as a freshly generated one.
 */
#include "trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "coll.h"
#include "pool.h"

/* Reader limits: a file may not make us allocate more than these. */
#define MAX_COMMS (1u << 24)
#define MAX_MEMBERS (1u << 28)
#define MAX_STRINGS (1u << 20)
#define MAX_STRLEN 255u
#define MAX_OPS_TOTAL (1u << 24) /* expanded ops over all classes: 640 MiB */
#define MAX_PAYLOAD (1ull << 30)
#define MAX_LOOP_DEPTH 8

struct rs_trace {
    uint32_t nranks, nslots, ngpus;
    int finished;
    uint32_t *rank_gpu, *rank_class, *slots; /* nranks, nranks, nranks x nslots */

    uint32_t ncomms;
    size_t off_cap, dim_cap;
    uint64_t *comm_off; /* ncomms + 1 */
    uint8_t *comm_dim;
    uint32_t *members;
    uint64_t nmembers;
    size_t members_cap;
    uint32_t *stamp; /* nranks: duplicate check in add_comm */

    uint32_t nclasses;
    size_t cap_ops, cap_nops, cap_nranks, cap_hash;
    rs_op **class_ops;
    uint32_t *class_nops, *class_nranks;
    uint64_t *class_hash;
    uint64_t total_ops;

    uint32_t nstrings;
    size_t str_cap;
    char **strs;

    rs_trace_iter iter;
    uint32_t name_id;
};

/* ---- names ------------------------------------------------------------- */

const char *rs_op_kind_name(rs_op_kind k)
{
    static const char *const n[] = { "compute", "coll", "send", "recv" };
    return (unsigned)k < RS_OP_NKINDS ? n[k] : "?";
}

const char *rs_dim_name(rs_dim d)
{
    static const char *const n[] = { "none", "tp", "pp", "dp", "cp", "ep" };
    return (unsigned)d < RS_DIM_COUNT ? n[d] : "?";
}

int rs_op_equal(const rs_op *a, const rs_op *b)
{
    return a->kind == b->kind && a->dim == b->dim && a->coll == b->coll && a->stream == b->stream &&
           a->comm == b->comm && a->label == b->label && a->dep[0] == b->dep[0] &&
           a->dep[1] == b->dep[1] && a->bytes == b->bytes && a->duration == b->duration;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t op_hash(const rs_op *o)
{
    uint64_t h = (uint64_t)o->kind | (uint64_t)o->dim << 8 | (uint64_t)o->coll << 16 |
                 (uint64_t)o->stream << 24 | (uint64_t)o->comm << 32;
    h = mix(h, (uint64_t)o->label | (uint64_t)o->dep[0] << 32);
    h = mix(h, o->dep[1]);
    h = mix(h, o->bytes);
    return mix(h, o->duration);
}

/* ---- building ------------------------------------------------------------ */

int rs_trace_create(uint32_t nranks, uint32_t nslots, rs_trace **out, rs_err *err)
{
    *out = NULL;
    if (nranks == 0 || nranks > RS_TRACE_MAX_RANKS)
        return rs_err_set(err, RS_EINVAL, "trace: expected 1 to %u ranks, got %u", RS_TRACE_MAX_RANKS, nranks);
    if (nslots > RS_TRACE_MAX_SLOTS)
        return rs_err_set(err, RS_EINVAL, "trace: expected at most %u slots per rank, got %u",
                          RS_TRACE_MAX_SLOTS, nslots);
    rs_trace *t = calloc(1, sizeof *t);
    if (!t)
        goto fail;
    t->nranks = nranks;
    t->nslots = nslots;
    t->ngpus = nranks;
    t->name_id = RS_NONE;
    t->rank_gpu = malloc((size_t)nranks * sizeof *t->rank_gpu);
    t->rank_class = malloc((size_t)nranks * sizeof *t->rank_class);
    t->slots = malloc((size_t)nranks * (nslots ? nslots : 1) * sizeof *t->slots);
    t->comm_off = calloc(1, sizeof *t->comm_off);
    t->off_cap = 1;
    if (!t->rank_gpu || !t->rank_class || !t->slots || !t->comm_off)
        goto fail;
    memset(t->rank_gpu, 0xff, (size_t)nranks * sizeof *t->rank_gpu);
    memset(t->rank_class, 0xff, (size_t)nranks * sizeof *t->rank_class);
    memset(t->slots, 0xff, (size_t)nranks * (nslots ? nslots : 1) * sizeof *t->slots);
    *out = t;
    return RS_OK;
fail:
    rs_trace_destroy(t);
    return rs_err_set(err, RS_ENOMEM, "trace: out of memory for %u ranks", nranks);
}

void rs_trace_destroy(rs_trace *t)
{
    if (!t)
        return;
    free(t->rank_gpu);
    free(t->rank_class);
    free(t->slots);
    free(t->comm_off);
    free(t->comm_dim);
    free(t->members);
    free(t->stamp);
    for (uint32_t i = 0; i < t->nclasses; i++)
        free(t->class_ops[i]);
    free(t->class_ops);
    free(t->class_nops);
    free(t->class_nranks);
    free(t->class_hash);
    for (uint32_t i = 0; i < t->nstrings; i++)
        free(t->strs[i]);
    free(t->strs);
    free(t);
}

static int not_building(const rs_trace *t, const char *what, rs_err *err)
{
    if (t->finished)
        return rs_err_set(err, RS_EINVAL, "trace: %s after rs_trace_finish", what);
    return RS_OK;
}

/* Append s without looking for an equal string (the reader's path: a file
 * with many strings must not cost quadratic time). */
static int string_push(rs_trace *t, const char *s, uint32_t *id, rs_err *err)
{
    size_t n = strlen(s);
    if (n > MAX_STRLEN)
        return rs_err_set(err, RS_EINVAL, "trace: string of %zu bytes, expected at most %u", n, MAX_STRLEN);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return rs_err_set(err, RS_EINVAL, "trace: string with a control character at byte %zu", i);
    if (t->nstrings >= MAX_STRINGS)
        return rs_err_set(err, RS_EINVAL, "trace: more than %u strings", MAX_STRINGS);
    if (rs_array_reserve(&t->strs, &t->str_cap, (size_t)t->nstrings + 1, sizeof *t->strs, 16))
        return rs_err_set(err, RS_ENOMEM, "trace: out of memory for strings");
    char *c = malloc(n + 1);
    if (!c)
        return rs_err_set(err, RS_ENOMEM, "trace: out of memory for strings");
    memcpy(c, s, n + 1);
    t->strs[t->nstrings] = c;
    *id = t->nstrings++;
    return RS_OK;
}

/* O(strings) per call: fine for the few dozen labels a generator uses. */
int rs_trace_add_string(rs_trace *t, const char *s, uint32_t *id, rs_err *err)
{
    if (not_building(t, "add_string", err))
        return RS_EINVAL;
    for (uint32_t i = 0; i < t->nstrings; i++)
        if (strcmp(t->strs[i], s) == 0) {
            *id = i;
            return RS_OK;
        }
    return string_push(t, s, id, err);
}

int rs_trace_add_comm(rs_trace *t, rs_dim dim, const uint32_t *ranks, uint32_t n, uint32_t *id,
                      rs_err *err)
{
    if (not_building(t, "add_comm", err))
        return RS_EINVAL;
    uint32_t c = t->ncomms;
    if ((unsigned)dim >= RS_DIM_COUNT || dim == RS_DIM_NONE)
        return rs_err_set(err, RS_EINVAL, "communicator %u: dimension %d, expected tp, pp, dp, cp or ep", c, (int)dim);
    if (n == 0 || n > t->nranks)
        return rs_err_set(err, RS_EINVAL, "communicator %u: %u ranks, expected 1 to %u", c, n, t->nranks);
    if (c >= MAX_COMMS || t->nmembers + n > MAX_MEMBERS)
        return rs_err_set(err, RS_EINVAL, "communicator %u: too many communicators or members", c);
    if (!t->stamp) {
        t->stamp = calloc(t->nranks, sizeof *t->stamp);
        if (!t->stamp)
            return rs_err_set(err, RS_ENOMEM, "trace: out of memory for communicators");
    }
    for (uint32_t i = 0; i < n; i++) {
        if (ranks[i] >= t->nranks)
            return rs_err_set(err, RS_EINVAL, "communicator %u: member %u is rank %u, expected a rank below %u",
                              c, i, ranks[i], t->nranks);
        if (t->stamp[ranks[i]] == c + 1)
            return rs_err_set(err, RS_EINVAL, "communicator %u: rank %u listed twice", c, ranks[i]);
        t->stamp[ranks[i]] = c + 1;
    }
    if (rs_array_reserve(&t->comm_dim, &t->dim_cap, (size_t)c + 1, sizeof *t->comm_dim, 16) ||
        rs_array_reserve(&t->comm_off, &t->off_cap, (size_t)c + 2, sizeof *t->comm_off, 16) ||
        rs_array_reserve(&t->members, &t->members_cap, (size_t)t->nmembers + n, sizeof *t->members, 16))
        return rs_err_set(err, RS_ENOMEM, "trace: out of memory for communicators");
    memcpy(t->members + t->nmembers, ranks, (size_t)n * sizeof *ranks);
    t->nmembers += n;
    t->comm_dim[c] = (uint8_t)dim;
    t->comm_off[c + 1] = t->nmembers;
    t->ncomms++;
    *id = c;
    return RS_OK;
}

static uint64_t program_hash(const rs_op *ops, uint32_t n)
{
    uint64_t h = mix(0, n);
    for (uint32_t i = 0; i < n; i++)
        h = mix(h, op_hash(&ops[i]));
    return h;
}

/* Append a class without looking for an equal one (the reader's path). */
static int class_push(rs_trace *t, const rs_op *ops, uint32_t n, uint64_t h, uint32_t *cls, rs_err *err)
{
    if (t->total_ops + n > MAX_OPS_TOTAL)
        return rs_err_set(err, RS_EINVAL, "trace: more than %u ops over all classes", MAX_OPS_TOTAL);
    uint32_t c = t->nclasses;
    if (rs_array_reserve(&t->class_ops, &t->cap_ops, (size_t)c + 1, sizeof *t->class_ops, 16) ||
        rs_array_reserve(&t->class_nops, &t->cap_nops, (size_t)c + 1, sizeof *t->class_nops, 16) ||
        rs_array_reserve(&t->class_nranks, &t->cap_nranks, (size_t)c + 1, sizeof *t->class_nranks, 16) ||
        rs_array_reserve(&t->class_hash, &t->cap_hash, (size_t)c + 1, sizeof *t->class_hash, 16))
        return rs_err_set(err, RS_ENOMEM, "trace: out of memory for classes");
    rs_op *copy = malloc((size_t)(n ? n : 1) * sizeof *copy);
    if (!copy)
        return rs_err_set(err, RS_ENOMEM, "trace: out of memory for a program of %u ops", n);
    if (n)
        memcpy(copy, ops, (size_t)n * sizeof *ops);
    t->class_ops[c] = copy;
    t->class_nops[c] = n;
    t->class_nranks[c] = 0;
    t->class_hash[c] = h;
    t->total_ops += n;
    t->nclasses++;
    *cls = c;
    return RS_OK;
}

/* O(classes) hash comparisons per call: fine for the <= pp classes of a
 * generated trace. */
int rs_trace_add_class(rs_trace *t, const rs_op *ops, uint32_t n, uint32_t *cls, rs_err *err)
{
    if (not_building(t, "add_class", err))
        return RS_EINVAL;
    uint64_t h = program_hash(ops, n);
    for (uint32_t c = 0; c < t->nclasses; c++) {
        if (t->class_hash[c] != h || t->class_nops[c] != n)
            continue;
        uint32_t i = 0;
        while (i < n && rs_op_equal(&t->class_ops[c][i], &ops[i]))
            i++;
        if (i == n) {
            *cls = c;
            return RS_OK;
        }
    }
    return class_push(t, ops, n, h, cls, err);
}

int rs_trace_set_rank(rs_trace *t, uint32_t rank, uint32_t gpu, uint32_t cls, const uint32_t *slots,
                      rs_err *err)
{
    if (not_building(t, "set_rank", err))
        return RS_EINVAL;
    if (rank >= t->nranks)
        return rs_err_set(err, RS_EINVAL, "trace: rank %u, expected below %u", rank, t->nranks);
    if (cls >= t->nclasses)
        return rs_err_set(err, RS_EINVAL, "rank %u: class %u, expected below %u", rank, cls, t->nclasses);
    t->rank_gpu[rank] = gpu;
    t->rank_class[rank] = cls;
    if (t->nslots)
        memcpy(t->slots + (size_t)rank * t->nslots, slots, (size_t)t->nslots * sizeof *slots);
    return RS_OK;
}

int rs_trace_set_info(rs_trace *t, const rs_trace_iter *it, uint32_t ngpus, const char *name, rs_err *err)
{
    if (not_building(t, "set_info", err))
        return RS_EINVAL;
    if (ngpus == 0 || ngpus > RS_TRACE_MAX_RANKS)
        return rs_err_set(err, RS_EINVAL, "trace: %u GPUs, expected 1 to %u", ngpus, RS_TRACE_MAX_RANKS);
    t->iter = *it;
    t->ngpus = ngpus;
    if (name) {
        int rc = rs_trace_add_string(t, name, &t->name_id, err);
        if (rc)
            return rc;
    }
    return RS_OK;
}

/* ---- validation ------------------------------------------------------------ */

enum { USE_NONE = 0, USE_COMM = 1, USE_PEER = 2 };

static int check_op(const rs_trace *t, uint32_t c, uint32_t i, const rs_op *o, uint8_t *use, rs_err *err)
{
#define BAD(...) rs_err_set(err, RS_EINVAL, __VA_ARGS__)
    if (o->kind >= RS_OP_NKINDS)
        return BAD("class %u, op %u: kind %u, expected 0 to 3", c, i, o->kind);
    if (o->label >= t->nstrings)
        return BAD("class %u, op %u: label %u, expected a string id below %u", c, i, o->label, t->nstrings);
    for (int k = 0; k < 2; k++)
        if (o->dep[k] != RS_NONE && o->dep[k] >= i)
            return BAD("class %u, op %u: dep[%d] is %u, expected an earlier op (below %u) or none",
                       c, i, k, o->dep[k], i);
    if (o->dep[0] == RS_NONE && o->dep[1] != RS_NONE)
        return BAD("class %u, op %u: dep[1] set while dep[0] is none", c, i);
    if (o->stream >= RS_STREAMS_MAX)
        return BAD("class %u, op %u: stream %u, expected below %u", c, i, o->stream, RS_STREAMS_MAX);
    if (o->kind == RS_OP_COMPUTE) {
        if (o->stream != RS_STREAM_COMPUTE || o->dim != RS_DIM_NONE || o->coll != 0 || o->comm != RS_NONE ||
            o->bytes != 0)
            return BAD("class %u, op %u: a compute op must be on stream 0 with no dim, coll, slot or bytes",
                       c, i);
        return RS_OK;
    }
    if (o->stream == RS_STREAM_COMPUTE)
        return BAD("class %u, op %u: a %s op on stream 0, expected a communication stream", c, i,
                   rs_op_kind_name(o->kind));
    if (o->dim == RS_DIM_NONE || o->dim >= RS_DIM_COUNT)
        return BAD("class %u, op %u: dim %u, expected tp, pp, dp, cp or ep", c, i, o->dim);
    if (o->duration != 0)
        return BAD("class %u, op %u: a %s op with a duration", c, i, rs_op_kind_name(o->kind));
    if (o->comm >= t->nslots)
        return BAD("class %u, op %u: slot %u, expected below %u", c, i, o->comm, t->nslots);
    uint8_t u = o->kind == RS_OP_COLL ? USE_COMM : USE_PEER;
    if (use[o->comm] != USE_NONE && use[o->comm] != u)
        return BAD("class %u, op %u: slot %u used for both collectives and send/recv", c, i, o->comm);
    use[o->comm] = u;
    if (o->kind == RS_OP_COLL) {
        if (o->coll >= RS_COLL_SENDRECV)
            return BAD("class %u, op %u: collective %u, expected allgather, reducescatter, allreduce or alltoall",
                       c, i, o->coll);
    } else if (o->coll != 0) {
        return BAD("class %u, op %u: a %s op with a collective kind", c, i, rs_op_kind_name(o->kind));
    }
    return RS_OK;
#undef BAD
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int rs_trace_finish(rs_trace *t, rs_err *err)
{
    if (t->finished)
        return RS_OK;
    int rc = RS_OK;
    uint8_t *use = calloc((size_t)t->nclasses * (t->nslots ? t->nslots : 1), 1);
    uint8_t *gpu_seen = calloc(t->ngpus, 1);
    uint64_t *rc_off = calloc((size_t)t->nranks + 1, sizeof *rc_off);
    uint32_t *rc_comm = malloc((size_t)(t->nmembers ? t->nmembers : 1) * sizeof *rc_comm);
    if (!use || !gpu_seen || !rc_off || !rc_comm) {
        rc = rs_err_set(err, RS_ENOMEM, "trace: out of memory while checking");
        goto done;
    }
    for (uint32_t c = 0; c < t->nclasses; c++) {
        t->class_nranks[c] = 0;
        for (uint32_t i = 0; i < t->class_nops[c]; i++)
            if ((rc = check_op(t, c, i, &t->class_ops[c][i], use + (size_t)c * t->nslots, err)))
                goto done;
    }
    if (t->name_id != RS_NONE && t->name_id >= t->nstrings) {
        rc = rs_err_set(err, RS_EINVAL, "trace: name is string %u, expected below %u", t->name_id, t->nstrings);
        goto done;
    }
    /* rank -> sorted list of the communicators that contain it (CSR). */
    for (uint64_t m = 0; m < t->nmembers; m++)
        rc_off[t->members[m] + 1]++;
    for (uint32_t r = 0; r < t->nranks; r++)
        rc_off[r + 1] += rc_off[r];
    {
        uint64_t *fill = calloc(t->nranks ? t->nranks : 1, sizeof *fill);
        if (!fill) {
            rc = rs_err_set(err, RS_ENOMEM, "trace: out of memory while checking");
            goto done;
        }
        for (uint32_t c = 0; c < t->ncomms; c++)
            for (uint64_t m = t->comm_off[c]; m < t->comm_off[c + 1]; m++) {
                uint32_t r = t->members[m];
                rc_comm[rc_off[r] + fill[r]++] = c; /* ascending c: sorted */
            }
        free(fill);
    }
    for (uint32_t r = 0; r < t->nranks; r++) {
        uint32_t c = t->rank_class[r], g = t->rank_gpu[r];
        if (c == RS_NONE) {
            rc = rs_err_set(err, RS_EINVAL, "rank %u: no class (program) assigned", r);
            goto done;
        }
        if (g >= t->ngpus) {
            rc = rs_err_set(err, RS_EINVAL, "rank %u: GPU %u, expected a GPU below %u", r, g, t->ngpus);
            goto done;
        }
        if (gpu_seen[g]) {
            rc = rs_err_set(err, RS_EINVAL, "rank %u: GPU %u already holds another rank", r, g);
            goto done;
        }
        gpu_seen[g] = 1;
        t->class_nranks[c]++;
        const uint8_t *u = use + (size_t)c * t->nslots;
        const uint32_t *sl = t->slots + (size_t)r * t->nslots;
        for (uint32_t s = 0; s < t->nslots; s++) {
            if (u[s] == USE_COMM) {
                const uint32_t *lo = rc_comm + rc_off[r];
                size_t n = (size_t)(rc_off[r + 1] - rc_off[r]);
                if (sl[s] >= t->ncomms || !bsearch(&sl[s], lo, n, sizeof *lo, cmp_u32)) {
                    rc = rs_err_set(err, RS_EINVAL,
                                    "rank %u: slot %u holds communicator %u, expected one of the %zu "
                                    "communicators that contain the rank", r, s, sl[s], n);
                    goto done;
                }
            } else if (u[s] == USE_PEER) {
                if (sl[s] >= t->nranks || sl[s] == r) {
                    rc = rs_err_set(err, RS_EINVAL, "rank %u: slot %u holds peer %u, expected another rank below %u",
                                    r, s, sl[s], t->nranks);
                    goto done;
                }
            }
        }
    }
    t->finished = 1;
    free(t->stamp);
    t->stamp = NULL;
done:
    free(use);
    free(gpu_seen);
    free(rc_off);
    free(rc_comm);
    return rc;
}

/* ---- queries ---------------------------------------------------------------- */

uint32_t rs_trace_nranks(const rs_trace *t) { return t->nranks; }
uint32_t rs_trace_ngpus(const rs_trace *t) { return t->ngpus; }
uint32_t rs_trace_nclasses(const rs_trace *t) { return t->nclasses; }
uint32_t rs_trace_ncomms(const rs_trace *t) { return t->ncomms; }
uint32_t rs_trace_nslots(const rs_trace *t) { return t->nslots; }
uint32_t rs_trace_nstrings(const rs_trace *t) { return t->nstrings; }
const rs_trace_iter *rs_trace_iteration(const rs_trace *t) { return &t->iter; }

const char *rs_trace_name(const rs_trace *t)
{
    return t->name_id < t->nstrings ? t->strs[t->name_id] : "";
}

uint32_t rs_trace_rank_gpu(const rs_trace *t, uint32_t rank)
{
    RS_ASSERT(rank < t->nranks);
    return t->rank_gpu[rank];
}

uint32_t rs_trace_rank_class(const rs_trace *t, uint32_t rank)
{
    RS_ASSERT(rank < t->nranks);
    return t->rank_class[rank];
}

const uint32_t *rs_trace_rank_slots(const rs_trace *t, uint32_t rank)
{
    RS_ASSERT(rank < t->nranks);
    return t->slots + (size_t)rank * t->nslots;
}

const rs_op *rs_trace_class_program(const rs_trace *t, uint32_t cls, uint32_t *nops)
{
    RS_ASSERT(cls < t->nclasses);
    *nops = t->class_nops[cls];
    return t->class_ops[cls];
}

const rs_op *rs_trace_program(const rs_trace *t, uint32_t rank, uint32_t *nops)
{
    return rs_trace_class_program(t, rs_trace_rank_class(t, rank), nops);
}

uint32_t rs_trace_class_ranks(const rs_trace *t, uint32_t cls)
{
    RS_ASSERT(cls < t->nclasses);
    return t->class_nranks[cls];
}

uint32_t rs_trace_slot(const rs_trace *t, uint32_t rank, uint32_t slot)
{
    RS_ASSERT(rank < t->nranks && slot < t->nslots);
    return t->slots[(size_t)rank * t->nslots + slot];
}

uint32_t rs_trace_op_comm(const rs_trace *t, uint32_t rank, const rs_op *op)
{
    RS_ASSERT(op->kind == RS_OP_COLL);
    return rs_trace_slot(t, rank, op->comm);
}

uint32_t rs_trace_op_peer(const rs_trace *t, uint32_t rank, const rs_op *op)
{
    RS_ASSERT(op->kind == RS_OP_SEND || op->kind == RS_OP_RECV);
    return rs_trace_slot(t, rank, op->comm);
}

const uint32_t *rs_trace_comm_ranks(const rs_trace *t, uint32_t comm, uint32_t *n)
{
    RS_ASSERT(comm < t->ncomms);
    *n = (uint32_t)(t->comm_off[comm + 1] - t->comm_off[comm]);
    return t->members + t->comm_off[comm];
}

rs_dim rs_trace_comm_dim(const rs_trace *t, uint32_t comm)
{
    RS_ASSERT(comm < t->ncomms);
    return (rs_dim)t->comm_dim[comm];
}

const char *rs_trace_string(const rs_trace *t, uint32_t id)
{
    return id < t->nstrings ? t->strs[id] : "?";
}

/* ---- byte buffers and varints ------------------------------------------------ */

typedef struct obuf {
    uint8_t *p;
    uint64_t n;
    size_t cap;
    int oom;
} obuf;

static void put_bytes(obuf *b, const void *d, size_t n)
{
    if (b->oom)
        return;
    if (rs_array_reserve(&b->p, &b->cap, (size_t)b->n + n, 1, 16)) {
        b->oom = 1;
        return;
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void put_u64(obuf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        uint8_t c = v & 0x7f;
        v >>= 7;
        tmp[n++] = c | (v ? 0x80 : 0);
    } while (v);
    put_bytes(b, tmp, n);
}

static uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

static void put_f64(obuf *b, double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    put_u64(b, u);
}

/* A read cursor; the first failure sticks and names what was being read. */
typedef struct ibuf {
    const uint8_t *p, *end;
    const char *what; /* set on failure */
} ibuf;

static uint64_t get_u64(ibuf *b, const char *what)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (b->what)
            return 0;
        if (b->p >= b->end) {
            b->what = what;
            return 0;
        }
        uint8_t c = *b->p++;
        if (shift == 63 && c > 1) {
            b->what = what;
            return 0;
        }
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            return v;
    }
    b->what = what;
    return 0;
}

/* A value that must lie in [lo, hi]. */
static uint64_t get_range(ibuf *b, uint64_t lo, uint64_t hi, const char *what)
{
    uint64_t v = get_u64(b, what);
    if (!b->what && (v < lo || v > hi))
        b->what = what;
    return v;
}

/* A zigzag difference of at most 2^40 either way (ids are below 2^32), so
 * adding it to an id cannot overflow. */
static int64_t get_delta(ibuf *b, const char *what)
{
    int64_t d = unzigzag(get_u64(b, what));
    if (!b->what && (d > (1ll << 40) || d < -(1ll << 40)))
        b->what = what;
    return b->what ? 0 : d;
}

static double get_f64(ibuf *b, const char *what)
{
    uint64_t u = get_u64(b, what);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* ---- program encoding: loops over relative records ------------------------------ */

/* Records are rs_op with deps as distances (0 = none) so that repeated
 * sequences compare equal. */
typedef struct enc {
    const rs_op *rel;
    const uint64_t *h;   /* hash per record */
    const uint32_t *next;/* next index with the same hash, or UINT32_MAX */
    uint32_t n;
} enc;

#define MAX_PERIOD 4096u

static int range_eq(const enc *e, uint32_t a, uint32_t b, uint32_t len)
{
    for (uint32_t i = 0; i < len; i++)
        if (e->h[a + i] != e->h[b + i] || !rs_op_equal(&e->rel[a + i], &e->rel[b + i]))
            return 0;
    return 1;
}

static void put_record(obuf *b, const rs_op *o)
{
    put_u64(b, o->kind); /* tags 0..3: an op of that kind; 4: a loop */
    put_u64(b, o->stream);
    put_u64(b, o->dim);
    put_u64(b, o->coll);
    put_u64(b, o->comm == RS_NONE ? 0 : (uint64_t)o->comm + 1);
    put_u64(b, o->label);
    put_u64(b, o->dep[0]);
    put_u64(b, o->dep[1]);
    put_u64(b, o->bytes);
    put_u64(b, o->duration);
}

#define TAG_LOOP 4u

static void encode_range(const enc *e, uint32_t a, uint32_t b, int depth, obuf *out)
{
    uint32_t i = a;
    while (i < b) {
        uint32_t best_p = 0, best_k = 1;
        uint64_t best_gain = 0;
        if (depth < MAX_LOOP_DEPTH) {
            for (uint32_t j = e->next[i]; j != UINT32_MAX && j < b; j = e->next[j]) {
                uint32_t p = j - i;
                if (p > MAX_PERIOD || (uint64_t)i + 2ull * p > b)
                    break;
                /* a multiple of the best period repeats no more of it */
                if ((best_p && p % best_p == 0) || !range_eq(e, i, j, p))
                    continue;
                uint32_t k = 2;
                while ((uint64_t)i + (uint64_t)(k + 1) * p <= b && range_eq(e, i, i + k * p, p))
                    k++;
                uint64_t gain = (uint64_t)(k - 1) * p;
                if (gain > best_gain) {
                    best_gain = gain;
                    best_p = p;
                    best_k = k;
                }
            }
        }
        if (best_p == 0) {
            put_record(out, &e->rel[i]);
            i++;
            continue;
        }
        obuf body = { 0 };
        encode_range(e, i, i + best_p, depth + 1, &body);
        put_u64(out, TAG_LOOP);
        put_u64(out, best_k);
        put_u64(out, body.n);
        put_bytes(out, body.p, (size_t)body.n);
        if (body.oom)
            out->oom = 1;
        free(body.p);
        i += best_k * best_p;
    }
}

static int encode_program(const rs_op *ops, uint32_t n, obuf *out)
{
    rs_op *rel = malloc((size_t)(n ? n : 1) * sizeof *rel);
    uint64_t *h = malloc((size_t)(n ? n : 1) * sizeof *h);
    uint32_t *next = malloc((size_t)(n ? n : 1) * sizeof *next);
    /* open-addressing table: hash -> last index seen, for the next[] chains */
    uint32_t tsize = 1;
    while (tsize < 2 * (n ? n : 1))
        tsize <<= 1;
    uint32_t *tab = malloc((size_t)tsize * sizeof *tab);
    int rc = RS_OK;
    if (!rel || !h || !next || !tab) {
        rc = RS_ENOMEM;
        goto done;
    }
    for (uint32_t i = 0; i < n; i++) {
        rel[i] = ops[i];
        for (int k = 0; k < 2; k++)
            rel[i].dep[k] = ops[i].dep[k] == RS_NONE ? 0 : i - ops[i].dep[k];
        h[i] = op_hash(&rel[i]);
        next[i] = UINT32_MAX;
    }
    memset(tab, 0xff, (size_t)tsize * sizeof *tab);
    for (uint32_t i = n; i-- > 0;) {
        uint32_t s = (uint32_t)(h[i] >> 7) & (tsize - 1);
        while (tab[s] != UINT32_MAX && h[tab[s]] != h[i])
            s = (s + 1) & (tsize - 1);
        next[i] = tab[s];
        tab[s] = i;
    }
    encode_range(&(enc){ rel, h, next, n }, 0, n, 0, out);
done:
    free(rel);
    free(h);
    free(next);
    free(tab);
    return rc;
}

/* Decode items in [b->p, end) into rel[*n ..], at most cap records. */
static void decode_items(ibuf *b, const uint8_t *end, rs_op *rel, uint32_t *n, uint32_t cap, int depth)
{
    ibuf in = { b->p, end, NULL };
    while (!in.what && in.p < in.end) {
        uint64_t tag = get_range(&in, 0, TAG_LOOP, "an op kind (0-3) or a loop (4)");
        if (in.what)
            break;
        if (tag == TAG_LOOP) {
            uint64_t count = get_range(&in, 2, UINT32_MAX, "a loop count of at least 2");
            uint64_t len = get_u64(&in, "a loop body length");
            if (in.what)
                break;
            if (len == 0 || len > (uint64_t)(in.end - in.p)) {
                in.what = "a loop body within the program";
                break;
            }
            if (depth >= MAX_LOOP_DEPTH) {
                in.what = "loops nested at most 8 deep";
                break;
            }
            uint32_t start = *n;
            ibuf sub = { in.p, in.p + len, NULL };
            decode_items(&sub, in.p + len, rel, n, cap, depth + 1);
            if (sub.what) {
                in.what = sub.what;
                break;
            }
            in.p += len;
            uint32_t blen = *n - start;
            if (blen == 0) {
                in.what = "a non-empty loop body";
                break;
            }
            if ((count - 1) * (uint64_t)blen > (uint64_t)(cap - *n)) {
                in.what = "no more ops than the class declares";
                break;
            }
            for (uint64_t k = 1; k < count; k++) {
                memcpy(rel + *n, rel + start, (size_t)blen * sizeof *rel);
                *n += blen;
            }
            continue;
        }
        rs_op o;
        memset(&o, 0, sizeof o);
        o.kind = (uint8_t)tag;
        o.stream = (uint8_t)get_range(&in, 0, RS_STREAMS_MAX - 1, "a stream below 16");
        o.dim = (uint8_t)get_range(&in, 0, RS_DIM_COUNT - 1, "a dimension (0-5)");
        o.coll = (uint8_t)get_range(&in, 0, RS_COLL_NOPS - 1, "a collective kind (0-4)");
        uint64_t slot = get_range(&in, 0, RS_TRACE_MAX_SLOTS, "a slot");
        o.comm = slot ? (uint32_t)(slot - 1) : RS_NONE;
        o.label = (uint32_t)get_range(&in, 0, UINT32_MAX - 1, "a label");
        o.dep[0] = (uint32_t)get_range(&in, 0, UINT32_MAX - 1, "a dependency distance");
        o.dep[1] = (uint32_t)get_range(&in, 0, UINT32_MAX - 1, "a dependency distance");
        o.bytes = get_u64(&in, "a byte count");
        o.duration = get_u64(&in, "a duration");
        if (in.what)
            break;
        if (*n >= cap) {
            in.what = "no more ops than the class declares";
            break;
        }
        rel[(*n)++] = o;
    }
    if (in.what)
        b->what = in.what;
}

/* ---- payload ------------------------------------------------------------------ */

#define MAGIC "RSTRACE"  /* 8 bytes with the NUL */
#define VERSION 1u
#define HEADER_BYTES 44u

int rs_trace_payload_encode(const rs_trace *t, uint8_t **buf, size_t *len, rs_err *err)
{
    *buf = NULL;
    *len = 0;
    if (!t->finished)
        return rs_err_set(err, RS_EINVAL, "trace: encode before rs_trace_finish");
    obuf b = { 0 };
    const rs_trace_iter *it = &t->iter;
    put_u64(&b, t->nranks);
    put_u64(&b, t->ngpus);
    put_u64(&b, t->nslots);
    put_u64(&b, t->nstrings);
    put_u64(&b, t->ncomms);
    put_u64(&b, t->nclasses);
    put_u64(&b, t->name_id == RS_NONE ? 0 : (uint64_t)t->name_id + 1);
    put_u64(&b, it->tokens);
    put_f64(&b, it->model_flops);
    put_f64(&b, it->peak_flops);
    put_f64(&b, it->efficiency);
    put_u64(&b, it->micro_batches);
    put_u64(&b, it->layers);
    put_u64(&b, it->tp);
    put_u64(&b, it->pp);
    put_u64(&b, it->dp);
    put_u64(&b, it->cp);
    put_u64(&b, it->ep);
    put_u64(&b, it->zero);
    for (uint32_t i = 0; i < t->nstrings; i++) {
        size_t n = strlen(t->strs[i]);
        put_u64(&b, n);
        put_bytes(&b, t->strs[i], n);
    }
    int64_t prev_first = 0;
    for (uint32_t c = 0; c < t->ncomms; c++) {
        uint64_t o = t->comm_off[c], n = t->comm_off[c + 1] - o;
        put_u64(&b, t->comm_dim[c]);
        put_u64(&b, n);
        int64_t prev = prev_first;
        for (uint64_t m = 0; m < n; m++) {
            int64_t v = t->members[o + m];
            put_u64(&b, zigzag(v - prev));
            if (m == 0)
                prev_first = v;
            prev = v;
        }
    }
    for (uint32_t c = 0; c < t->nclasses; c++) {
        obuf code = { 0 };
        if (encode_program(t->class_ops[c], t->class_nops[c], &code) || code.oom) {
            free(code.p);
            free(b.p);
            return rs_err_set(err, RS_ENOMEM, "trace: out of memory while encoding");
        }
        put_u64(&b, t->class_nops[c]);
        put_u64(&b, code.n);
        put_bytes(&b, code.p, (size_t)code.n);
        free(code.p);
    }
    /* Ranks column by column: runs of equal deltas compress to nothing. */
    int64_t prev = -1;
    for (uint32_t r = 0; r < t->nranks; r++) {
        put_u64(&b, zigzag((int64_t)t->rank_gpu[r] - prev - 1));
        prev = t->rank_gpu[r];
    }
    for (uint32_t r = 0; r < t->nranks; r++)
        put_u64(&b, t->rank_class[r]);
    for (uint32_t s = 0; s < t->nslots; s++) {
        prev = 0;
        for (uint32_t r = 0; r < t->nranks; r++) {
            uint32_t v = t->slots[(size_t)r * t->nslots + s];
            int64_t w = v == RS_NONE ? 0 : (int64_t)v + 1;
            put_u64(&b, zigzag(w - prev));
            prev = w;
        }
    }
    if (b.oom) {
        free(b.p);
        return rs_err_set(err, RS_ENOMEM, "trace: out of memory while encoding");
    }
    *buf = b.p;
    *len = (size_t)b.n;
    return RS_OK;
}

static int corrupt(rs_err *err, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int corrupt(rs_err *err, const char *name, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return rs_err_set(err, RS_EFORMAT, "%s: corrupt trace file: %s", name, what);
}

int rs_trace_payload_decode(const uint8_t *buf, size_t len, const char *name, rs_trace **out, rs_err *err)
{
    *out = NULL;
    ibuf b = { buf, buf + len, NULL };
    uint32_t nranks = (uint32_t)get_range(&b, 1, RS_TRACE_MAX_RANKS, "a rank count from 1 to 2^24");
    uint32_t ngpus = (uint32_t)get_range(&b, 1, RS_TRACE_MAX_RANKS, "a GPU count from 1 to 2^24");
    uint32_t nslots = (uint32_t)get_range(&b, 0, RS_TRACE_MAX_SLOTS, "a slot count of at most 64");
    uint32_t nstrings = (uint32_t)get_range(&b, 0, MAX_STRINGS, "a string count of at most 2^20");
    uint32_t ncomms = (uint32_t)get_range(&b, 0, MAX_COMMS, "a communicator count of at most 2^24");
    uint32_t nclasses = (uint32_t)get_range(&b, 1, RS_TRACE_MAX_RANKS, "a class count from 1 to 2^24");
    uint64_t name1 = get_u64(&b, "the name's string id");
    rs_trace_iter it;
    memset(&it, 0, sizeof it);
    it.tokens = get_u64(&b, "the tokens per iteration");
    it.model_flops = get_f64(&b, "the model FLOPs");
    it.peak_flops = get_f64(&b, "the peak FLOP/s");
    it.efficiency = get_f64(&b, "the efficiency");
    uint32_t *f32[] = { &it.micro_batches, &it.layers, &it.tp, &it.pp, &it.dp, &it.cp, &it.ep, &it.zero };
    for (size_t i = 0; i < sizeof f32 / sizeof f32[0]; i++)
        *f32[i] = (uint32_t)get_range(&b, 0, UINT32_MAX, "an iteration field below 2^32");
    if (b.what)
        return corrupt(err, name, "the header section ends early or is out of range: expected %s", b.what);
    /* Every element below takes at least one byte: counts beyond the bytes
     * left are lies, and are refused before anything is allocated. */
    uint64_t left = (uint64_t)(b.end - b.p);
    if (nstrings > left || ncomms > left || nclasses > left || nranks > left || nclasses > nranks)
        return corrupt(err, name, "%u ranks, %u classes, %u communicators and %u strings do not fit in %llu bytes",
                       nranks, nclasses, ncomms, nstrings, (unsigned long long)left);
    if (!(it.model_flops >= 0) || !(it.peak_flops >= 0) || !(it.efficiency >= 0))
        return corrupt(err, name, "expected non-negative FLOP figures");

    rs_trace *t = NULL;
    rs_op *rel = NULL;
    uint32_t *tmp = NULL;
    rs_err e2;
    int rc = rs_trace_create(nranks, nslots, &t, &e2);
    if (rc)
        return rs_err_set(err, rc, "%s: %s", name, e2.msg);
    for (uint32_t i = 0; i < nstrings; i++) {
        uint64_t n = get_range(&b, 0, MAX_STRLEN, "a string length of at most 255");
        if (b.what || n > (uint64_t)(b.end - b.p)) {
            rc = corrupt(err, name, "string %u: expected %s", i, b.what ? b.what : "its bytes within the file");
            goto fail;
        }
        char s[MAX_STRLEN + 1];
        memcpy(s, b.p, (size_t)n);
        s[n] = '\0';
        b.p += n;
        uint32_t id;
        if (strlen(s) != n || (rc = string_push(t, s, &id, &e2))) {
            if (rc == RS_ENOMEM)
                goto oom;
            rc = corrupt(err, name, "string %u: expected text without control characters", i);
            goto fail;
        }
    }
    tmp = malloc((size_t)nranks * sizeof *tmp);
    if (!tmp)
        goto oom;
    int64_t prev_first = 0;
    for (uint32_t c = 0; c < ncomms; c++) {
        uint32_t dim = (uint32_t)get_range(&b, 1, RS_DIM_COUNT - 1, "a dimension (1-5)");
        uint32_t n = (uint32_t)get_range(&b, 1, nranks, "a member count from 1 to the rank count");
        if (b.what || n > (uint64_t)(b.end - b.p)) {
            rc = corrupt(err, name, "communicator %u: expected %s", c, b.what ? b.what : "its members within the file");
            goto fail;
        }
        int64_t prev = prev_first;
        for (uint32_t m = 0; m < n; m++) {
            int64_t v = prev + get_delta(&b, "a member");
            if (v < 0 || v >= nranks) {
                if (!b.what)
                    b.what = "a member rank below the rank count";
                break;
            }
            tmp[m] = (uint32_t)v;
            if (m == 0)
                prev_first = v;
            prev = v;
        }
        if (b.what) {
            rc = corrupt(err, name, "communicator %u: expected %s", c, b.what);
            goto fail;
        }
        uint32_t id;
        if ((rc = rs_trace_add_comm(t, (rs_dim)dim, tmp, n, &id, &e2))) {
            rc = rc == RS_ENOMEM ? RS_ENOMEM : corrupt(err, name, "%s", e2.msg);
            if (rc == RS_ENOMEM)
                goto oom;
            goto fail;
        }
    }
    uint64_t total = 0;
    for (uint32_t c = 0; c < nclasses; c++) {
        uint32_t nops = (uint32_t)get_range(&b, 0, MAX_OPS_TOTAL, "an op count of at most 2^24");
        uint64_t clen = get_u64(&b, "a program length");
        if (!b.what && clen > (uint64_t)(b.end - b.p))
            b.what = "the program within the file";
        if (!b.what && total + nops > MAX_OPS_TOTAL)
            b.what = "at most 2^24 ops over all classes";
        if (b.what) {
            rc = corrupt(err, name, "class %u: expected %s", c, b.what);
            goto fail;
        }
        total += nops;
        rel = malloc((size_t)(nops ? nops : 1) * sizeof *rel);
        if (!rel)
            goto oom;
        uint32_t n = 0;
        ibuf pb = { b.p, b.p + clen, NULL };
        decode_items(&pb, b.p + clen, rel, &n, nops, 0);
        if (!pb.what && n != nops)
            pb.what = "as many ops as the class declares";
        for (uint32_t i = 0; !pb.what && i < n; i++)
            for (int k = 0; k < 2; k++) {
                uint32_t d = rel[i].dep[k];
                if (d > i)
                    pb.what = "dependencies on earlier ops only";
                rel[i].dep[k] = d == 0 ? RS_NONE : i - d;
            }
        if (pb.what) {
            rc = corrupt(err, name, "class %u program: expected %s", c, pb.what);
            goto fail;
        }
        b.p += clen;
        uint32_t id;
        if ((rc = class_push(t, rel, n, program_hash(rel, n), &id, &e2))) {
            if (rc == RS_ENOMEM)
                goto oom;
            rc = corrupt(err, name, "%s", e2.msg);
            goto fail;
        }
        free(rel);
        rel = NULL;
    }
    int64_t prev = -1;
    for (uint32_t r = 0; r < nranks && !b.what; r++) {
        int64_t g = prev + 1 + get_delta(&b, "a GPU id");
        if (g < 0 || g >= ngpus)
            b.what = "a GPU id below the GPU count";
        t->rank_gpu[r] = (uint32_t)g;
        prev = g;
    }
    for (uint32_t r = 0; r < nranks && !b.what; r++)
        t->rank_class[r] = (uint32_t)get_range(&b, 0, nclasses - 1, "a class below the class count");
    for (uint32_t s = 0; s < nslots && !b.what; s++) {
        int64_t p = 0;
        for (uint32_t r = 0; r < nranks && !b.what; r++) {
            int64_t w = p + get_delta(&b, "a slot value");
            if (w < 0 || w > (int64_t)UINT32_MAX)
                b.what = "a slot value below 2^32";
            t->slots[(size_t)r * nslots + s] = w == 0 ? RS_NONE : (uint32_t)(w - 1);
            p = w;
        }
    }
    if (b.what) {
        rc = corrupt(err, name, "rank table: expected %s", b.what);
        goto fail;
    }
    if (b.p != b.end) {
        rc = corrupt(err, name, "%zu bytes after the rank table, expected none", (size_t)(b.end - b.p));
        goto fail;
    }
    if (name1 > nstrings) {
        rc = corrupt(err, name, "the name is string %llu, expected one below %u", (unsigned long long)name1 - 1,
                     nstrings);
        goto fail;
    }
    t->iter = it;
    t->ngpus = ngpus;
    t->name_id = name1 ? (uint32_t)(name1 - 1) : RS_NONE;
    if ((rc = rs_trace_finish(t, &e2))) {
        if (rc == RS_ENOMEM)
            goto oom;
        rc = corrupt(err, name, "%s", e2.msg);
        goto fail;
    }
    free(tmp);
    *out = t;
    return RS_OK;
oom:
    rc = rs_err_set(err, RS_ENOMEM, "%s: out of memory while reading the trace", name);
fail:
    free(rel);
    free(tmp);
    rs_trace_destroy(t);
    return rc;
}

/* ---- file ---------------------------------------------------------------------- */

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static uint64_t expanded_bytes(const rs_trace *t)
{
    uint64_t n = 0;
    for (uint32_t r = 0; r < t->nranks; r++)
        n += t->class_nops[t->rank_class[r]];
    return n * sizeof(rs_op);
}

/* Header (44 bytes, little-endian):
 *   0  magic "RSTRACE\0"     8  version (u32)     12 flags (u32, 0)
 *   16 payload bytes (u64)   24 zlib bytes (u64)  32 CRC-32 of the payload
 *   36 CRC-32 of the zlib stream (zlib itself ignores the padding bits of
 *      its last byte, so a flip there would pass without it)
 *   40 CRC-32 of bytes 0..39
 * then the zlib stream of the payload. */
int rs_trace_encode(const rs_trace *t, uint8_t **buf, size_t *len, rs_trace_file_stats *st, rs_err *err)
{
    *buf = NULL;
    *len = 0;
    uint8_t *pl;
    size_t pn;
    int rc = rs_trace_payload_encode(t, &pl, &pn, err);
    if (rc)
        return rc;
    uLongf zn = compressBound((uLong)pn);
    uint8_t *f = malloc(HEADER_BYTES + (size_t)zn);
    if (!f) {
        free(pl);
        return rs_err_set(err, RS_ENOMEM, "trace: out of memory while compressing");
    }
    if (compress2(f + HEADER_BYTES, &zn, pl, (uLong)pn, 9) != Z_OK) {
        free(pl);
        free(f);
        return rs_err_set(err, RS_ENOMEM, "trace: zlib could not compress the payload");
    }
    memcpy(f, MAGIC, 8);
    put_le(f + 8, VERSION, 4);
    put_le(f + 12, 0, 4);
    put_le(f + 16, pn, 8);
    put_le(f + 24, zn, 8);
    put_le(f + 32, crc32(0L, pl, (uInt)pn), 4);
    put_le(f + 36, crc32(0L, f + HEADER_BYTES, (uInt)zn), 4);
    put_le(f + 40, crc32(0L, f, 40), 4);
    free(pl);
    *buf = f;
    *len = HEADER_BYTES + (size_t)zn;
    if (st) {
        st->file_bytes = *len;
        st->payload_bytes = pn;
        st->expanded_bytes = expanded_bytes(t);
    }
    return RS_OK;
}

int rs_trace_decode(const uint8_t *buf, size_t len, const char *name, rs_trace **out, rs_trace_file_stats *st,
                    rs_err *err)
{
    *out = NULL;
    if (len < 8 || memcmp(buf, MAGIC, 8) != 0)
        return rs_err_set(err, RS_EFORMAT, "%s: not a railsim trace file: expected the magic \"RSTRACE\"", name);
    if (len < HEADER_BYTES)
        return rs_err_set(err, RS_EFORMAT, "%s: truncated trace file: %zu bytes, expected a %u-byte header",
                          name, len, HEADER_BYTES);
    if (get_le(buf + 40, 4) != crc32(0L, buf, 40))
        return rs_err_set(err, RS_EFORMAT, "%s: corrupt trace file: the header checksum does not match", name);
    uint64_t version = get_le(buf + 8, 4);
    if (version != VERSION)
        return rs_err_set(err, RS_EFORMAT, "%s: trace format version %llu, expected version %u", name,
                          (unsigned long long)version, VERSION);
    if (get_le(buf + 12, 4) != 0)
        return rs_err_set(err, RS_EFORMAT, "%s: corrupt trace file: header flags set, expected 0", name);
    uint64_t pn = get_le(buf + 16, 8), zn = get_le(buf + 24, 8);
    if (zn != len - HEADER_BYTES)
        return rs_err_set(err, RS_EFORMAT, "%s: truncated or padded trace file: %zu bytes, expected %llu",
                          name, len, (unsigned long long)(zn + HEADER_BYTES));
    if (pn > MAX_PAYLOAD || pn == 0)
        return rs_err_set(err, RS_EFORMAT, "%s: corrupt trace file: payload of %llu bytes, expected 1 to 2^30",
                          name, (unsigned long long)pn);
    if (get_le(buf + 36, 4) != crc32(0L, buf + HEADER_BYTES, (uInt)zn))
        return rs_err_set(err, RS_EFORMAT, "%s: corrupt trace file: the compressed payload's checksum does not "
                          "match", name);
    uint8_t *pl = malloc((size_t)pn);
    if (!pl)
        return rs_err_set(err, RS_ENOMEM, "%s: out of memory for a %llu-byte payload", name, (unsigned long long)pn);
    uLongf got = (uLongf)pn;
    int zrc = uncompress(pl, &got, buf + HEADER_BYTES, (uLong)zn);
    if (zrc != Z_OK || got != pn || get_le(buf + 32, 4) != crc32(0L, pl, (uInt)pn)) {
        free(pl);
        if (zrc == Z_MEM_ERROR)
            return rs_err_set(err, RS_ENOMEM, "%s: out of memory while decompressing", name);
        return rs_err_set(err, RS_EFORMAT, "%s: corrupt trace file: the compressed payload does not decompress "
                          "to %llu bytes with a matching checksum", name, (unsigned long long)pn);
    }
    int rc = rs_trace_payload_decode(pl, (size_t)pn, name, out, err);
    free(pl);
    if (!rc && st) {
        st->file_bytes = len;
        st->payload_bytes = pn;
        st->expanded_bytes = expanded_bytes(*out);
    }
    return rc;
}

int rs_trace_write(const rs_trace *t, const char *path, rs_trace_file_stats *st, rs_err *err)
{
    uint8_t *buf;
    size_t len;
    int rc = rs_trace_encode(t, &buf, &len, st, err);
    if (rc)
        return rc;
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp) {
        free(buf);
        return rs_err_set(err, RS_EIO, "%s: path too long", path);
    }
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        int e = errno;
        free(buf);
        return rs_err_set(err, RS_EIO, "%s: cannot write trace file: %s", path, strerror(e));
    }
    int ok = fwrite(buf, 1, len, f) == len;
    ok = (fclose(f) == 0) && ok;
    free(buf);
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        return rs_err_set(err, RS_EIO, "%s: cannot write trace file: %s", path, strerror(e));
    }
    return RS_OK;
}

int rs_trace_read(const char *path, rs_trace **out, rs_trace_file_stats *st, rs_err *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return rs_err_set(err, RS_EIO, "%s: cannot open trace file: %s", path, strerror(errno));
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    int rc = RS_OK;
    for (;;) {
        /* A full buffer doubles (from 64 KiB); one that would pass a whole
         * file's largest size means the file is not a trace. */
        if (len == cap && 2 * cap > MAX_PAYLOAD + HEADER_BYTES + 1) {
            rc = rs_err_set(err, RS_EFORMAT, "%s: trace file larger than 1 GiB, expected a railsim trace", path);
            break;
        }
        if (rs_array_reserve(&buf, &cap, len + 1, 1, 65536)) {
            rc = rs_err_set(err, RS_ENOMEM, "%s: out of memory while reading", path);
            break;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f))
                rc = rs_err_set(err, RS_EIO, "%s: cannot read trace file: %s", path, strerror(errno));
            break;
        }
    }
    fclose(f);
    if (!rc)
        rc = rs_trace_decode(buf, len, path, out, st, err);
    free(buf);
    return rc;
}
