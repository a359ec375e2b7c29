/*
 * trace.c - the in-memory trace (trace.h): building, validation, queries.
 * Every array is indexed by a dense uint32 id; programs are held expanded,
 * one array per class. The builders find an equal string or class before
 * adding one; the reader's appends (trace_int.h) do not. rs_trace_finish
 * checks every rule of trace.h once, for a generated trace and a decoded
 * one alike, so that users of a finished trace need not; a finished trace
 * is read-only. Its file format lives in trace_codec.c (the payload) and
 * trace_file.c (the compressed file).
 */
#include "trace.h"

#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "pool.h"
#include "trace_int.h"

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

uint64_t rs_trace_op_hash(const rs_op *o)
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
int rs_trace_string_push(rs_trace *t, const char *s, uint32_t *id, rs_err *err)
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
    return rs_trace_string_push(t, s, id, err);
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

uint64_t rs_trace_program_hash(const rs_op *ops, uint32_t n)
{
    uint64_t h = mix(0, n);
    for (uint32_t i = 0; i < n; i++)
        h = mix(h, rs_trace_op_hash(&ops[i]));
    return h;
}

/* Append a class without looking for an equal one (the reader's path). */
int rs_trace_class_push(rs_trace *t, const rs_op *ops, uint32_t n, uint64_t h, uint32_t *cls, rs_err *err)
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
    uint64_t h = rs_trace_program_hash(ops, n);
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
    return rs_trace_class_push(t, ops, n, h, cls, err);
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
        if (o->stream != RS_STREAM_COMPUTE || o->dim != RS_DIM_NONE || o->coll != 0 || o->comm != RS_NONE)
            return BAD("class %u, op %u: a compute op must be on stream 0 with no dim, coll or slot",
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
                if (sl[s] >= t->ncomms || !bsearch(&sl[s], lo, n, sizeof *lo, rs_cmp_u32)) {
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
