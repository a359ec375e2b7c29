/*
 * trace_codec.c - the trace payload (docs/trace-format.md): the
 * uncompressed bytes rs_trace_payload_encode writes and
 * rs_trace_payload_decode reads (varints, and the strings' bytes).
 * Programs are stored with repeated runs folded into loops (found here by
 * the writer, so any producer gets them) and dependencies as distances,
 * so that a repeated layer or micro-batch is a byte-identical record
 * sequence. The reader trusts nothing: every count is bounded by the
 * bytes left and by the limits of trace_int.h before anything is
 * allocated, and the decoded trace goes through the same rs_trace_finish
 * checks as a freshly generated one. Nothing is kept between calls.
 */
#include "trace.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "hindex.h"
#include "pool.h"
#include "trace_int.h"

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

/* The index's key of op i is its hash (h[i]) shifted; ops match by hash. */
static uint64_t op_hash_of(const void *h, uint32_t i)
{
    return ((const uint64_t *)h)[i] >> 7;
}

typedef struct op_key {
    const uint64_t *h; /* every op's hash */
    uint64_t want;     /* the one looked for */
} op_key;

static int op_hash_eq(const void *key, uint32_t i)
{
    const op_key *k = key;
    return k->h[i] == k->want;
}

static int encode_program(const rs_op *ops, uint32_t n, obuf *out)
{
    rs_op *rel = malloc((size_t)(n ? n : 1) * sizeof *rel);
    uint64_t *h = malloc((size_t)(n ? n : 1) * sizeof *h);
    uint32_t *next = malloc((size_t)(n ? n : 1) * sizeof *next);
    /* The hash index (hindex.h): an op's hash -> the latest op seen with
     * it, for the next[] chains. */
    rs_hindex tab;
    rs_hindex_init(&tab);
    int rc = RS_OK;
    if (!rel || !h || !next || rs_hindex_rehash(&tab, 2 * (n ? n : 1), op_hash_of, h) != RS_OK) {
        rc = RS_ENOMEM;
        goto done;
    }
    for (uint32_t i = 0; i < n; i++) {
        rel[i] = ops[i];
        for (int k = 0; k < 2; k++)
            rel[i].dep[k] = ops[i].dep[k] == RS_NONE ? 0 : i - ops[i].dep[k];
        h[i] = rs_trace_op_hash(&rel[i]);
        next[i] = UINT32_MAX;
    }
    for (uint32_t i = n; i-- > 0 && rc == RS_OK;) {
        /* next[i]: the next op after i with the same hash (UINT32_MAX: none). */
        uint64_t key = h[i] >> 7;
        op_key k = { h, h[i] };
        next[i] = rs_hindex_find(&tab, key, op_hash_eq, &k);
        if (next[i] != UINT32_MAX)
            rs_hindex_remove(&tab, key, next[i]);
        rc = rs_hindex_insert(&tab, key, i, op_hash_of, h);
    }
    if (rc != RS_OK)
        goto done;
    encode_range(&(enc){ rel, h, next, n }, 0, n, 0, out);
done:
    free(rel);
    free(h);
    free(next);
    rs_hindex_fini(&tab);
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
        o.coll = (uint8_t)get_range(&in, 0, RS_COLL_SENDRECV, "a collective kind (0-4)"); /* no rooted ops in traces */
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

static int read_oom(rs_err *err, const char *name)
{
    return rs_err_set(err, RS_ENOMEM, "%s: out of memory while reading the trace", name);
}

/* The payload's header section: counts, the name and the iteration facts. */
typedef struct phdr {
    uint32_t nranks, ngpus, nslots, nstrings, ncomms, nclasses;
    uint64_t name1;      /* the name's string id + 1, 0: none */
    rs_trace_iter it;
} phdr;

/* The header section, each count in its range and all of them within the
 * bytes that follow. */
static int decode_header(ibuf *b, phdr *h, const char *name, rs_err *err)
{
    h->nranks = (uint32_t)get_range(b, 1, RS_TRACE_MAX_RANKS, "a rank count from 1 to 2^24");
    h->ngpus = (uint32_t)get_range(b, 1, RS_TRACE_MAX_RANKS, "a GPU count from 1 to 2^24");
    h->nslots = (uint32_t)get_range(b, 0, RS_TRACE_MAX_SLOTS, "a slot count of at most 64");
    h->nstrings = (uint32_t)get_range(b, 0, MAX_STRINGS, "a string count of at most 2^20");
    h->ncomms = (uint32_t)get_range(b, 0, MAX_COMMS, "a communicator count of at most 2^24");
    h->nclasses = (uint32_t)get_range(b, 1, RS_TRACE_MAX_RANKS, "a class count from 1 to 2^24");
    h->name1 = get_u64(b, "the name's string id");
    rs_trace_iter *it = &h->it;
    memset(it, 0, sizeof *it);
    it->tokens = get_u64(b, "the tokens per iteration");
    it->model_flops = get_f64(b, "the model FLOPs");
    it->peak_flops = get_f64(b, "the peak FLOP/s");
    it->efficiency = get_f64(b, "the efficiency");
    uint32_t *f32[] = { &it->micro_batches, &it->layers, &it->tp, &it->pp, &it->dp, &it->cp, &it->ep, &it->zero };
    for (size_t i = 0; i < sizeof f32 / sizeof f32[0]; i++)
        *f32[i] = (uint32_t)get_range(b, 0, UINT32_MAX, "an iteration field below 2^32");
    if (b->what)
        return corrupt(err, name, "the header section ends early or is out of range: expected %s", b->what);
    /* Every element below takes at least one byte: counts beyond the bytes
     * left are lies, and are refused before anything is allocated. */
    uint64_t left = (uint64_t)(b->end - b->p);
    if (h->nstrings > left || h->ncomms > left || h->nclasses > left || h->nranks > left || h->nclasses > h->nranks)
        return corrupt(err, name, "%u ranks, %u classes, %u communicators and %u strings do not fit in %llu bytes",
                       h->nranks, h->nclasses, h->ncomms, h->nstrings, (unsigned long long)left);
    if (!(it->model_flops >= 0) || !(it->peak_flops >= 0) || !(it->efficiency >= 0))
        return corrupt(err, name, "expected non-negative FLOP figures");
    return RS_OK;
}

/* The string table: a length, then that many bytes, each. */
static int decode_strings(ibuf *b, rs_trace *t, uint32_t nstrings, const char *name, rs_err *err)
{
    for (uint32_t i = 0; i < nstrings; i++) {
        uint64_t n = get_range(b, 0, MAX_STRLEN, "a string length of at most 255");
        if (b->what || n > (uint64_t)(b->end - b->p))
            return corrupt(err, name, "string %u: expected %s", i, b->what ? b->what : "its bytes within the file");
        char s[MAX_STRLEN + 1];
        memcpy(s, b->p, (size_t)n);
        s[n] = '\0';
        b->p += n;
        uint32_t id;
        rs_err e2;
        int rc = RS_OK;
        if (strlen(s) != n || (rc = rs_trace_string_push(t, s, &id, &e2))) {
            if (rc == RS_ENOMEM)
                return read_oom(err, name);
            return corrupt(err, name, "string %u: expected text without control characters", i);
        }
    }
    return RS_OK;
}

/* Communicator c: its dimension, its member count, its members as
 * differences, the first from the previous communicator's first
 * (*prev_first, updated). tmp holds a rank count of members. */
static int decode_comm(ibuf *b, rs_trace *t, uint32_t c, uint32_t *tmp, int64_t *prev_first, const char *name,
                       rs_err *err)
{
    uint32_t nranks = t->nranks;
    uint32_t dim = (uint32_t)get_range(b, 1, RS_DIM_COUNT - 1, "a dimension (1-5)");
    uint32_t n = (uint32_t)get_range(b, 1, nranks, "a member count from 1 to the rank count");
    if (b->what || n > (uint64_t)(b->end - b->p))
        return corrupt(err, name, "communicator %u: expected %s", c, b->what ? b->what : "its members within the file");
    int64_t prev = *prev_first;
    for (uint32_t m = 0; m < n; m++) {
        int64_t v = prev + get_delta(b, "a member");
        if (v < 0 || v >= nranks) {
            if (!b->what)
                b->what = "a member rank below the rank count";
            break;
        }
        tmp[m] = (uint32_t)v;
        if (m == 0)
            *prev_first = v;
        prev = v;
    }
    if (b->what)
        return corrupt(err, name, "communicator %u: expected %s", c, b->what);
    uint32_t id;
    rs_err e2;
    int rc = rs_trace_add_comm(t, (rs_dim)dim, tmp, n, &id, &e2);
    if (rc == RS_ENOMEM)
        return read_oom(err, name);
    return rc ? corrupt(err, name, "%s", e2.msg) : RS_OK;
}

static int decode_comms(ibuf *b, rs_trace *t, uint32_t ncomms, const char *name, rs_err *err)
{
    uint32_t *tmp = malloc((size_t)t->nranks * sizeof *tmp);
    if (!tmp)
        return read_oom(err, name);
    int64_t prev_first = 0;
    int rc = RS_OK;
    for (uint32_t c = 0; c < ncomms && rc == RS_OK; c++)
        rc = decode_comm(b, t, c, tmp, &prev_first, name, err);
    free(tmp);
    return rc;
}

/* Class c: its op count, its program's length, the program (loops
 * expanded, dependency distances back to indices); *total counts the ops
 * of the classes so far. */
static int decode_class(ibuf *b, rs_trace *t, uint32_t c, uint64_t *total, const char *name, rs_err *err)
{
    uint32_t nops = (uint32_t)get_range(b, 0, MAX_OPS_TOTAL, "an op count of at most 2^24");
    uint64_t clen = get_u64(b, "a program length");
    if (!b->what && clen > (uint64_t)(b->end - b->p))
        b->what = "the program within the file";
    if (!b->what && *total + nops > MAX_OPS_TOTAL)
        b->what = "at most 2^24 ops over all classes";
    if (b->what)
        return corrupt(err, name, "class %u: expected %s", c, b->what);
    *total += nops;
    rs_op *rel = malloc((size_t)(nops ? nops : 1) * sizeof *rel);
    if (!rel)
        return read_oom(err, name);
    uint32_t n = 0;
    ibuf pb = { b->p, b->p + clen, NULL };
    decode_items(&pb, b->p + clen, rel, &n, nops, 0);
    if (!pb.what && n != nops)
        pb.what = "as many ops as the class declares";
    for (uint32_t i = 0; !pb.what && i < n; i++)
        for (int k = 0; k < 2; k++) {
            uint32_t d = rel[i].dep[k];
            if (d > i)
                pb.what = "dependencies on earlier ops only";
            rel[i].dep[k] = d == 0 ? RS_NONE : i - d;
        }
    int rc;
    if (pb.what) {
        rc = corrupt(err, name, "class %u program: expected %s", c, pb.what);
    } else {
        b->p += clen;
        uint32_t id;
        rs_err e2;
        rc = rs_trace_class_push(t, rel, n, rs_trace_program_hash(rel, n), &id, &e2);
        if (rc == RS_ENOMEM)
            rc = read_oom(err, name);
        else if (rc)
            rc = corrupt(err, name, "%s", e2.msg);
    }
    free(rel);
    return rc;
}

/* The rank table, column by column: GPUs as differences from the previous
 * rank's plus one, classes, then each slot as differences down the ranks. */
static int decode_ranks(ibuf *b, rs_trace *t, uint32_t ngpus, uint32_t nclasses, const char *name, rs_err *err)
{
    uint32_t nranks = t->nranks, nslots = t->nslots;
    int64_t prev = -1;
    for (uint32_t r = 0; r < nranks && !b->what; r++) {
        int64_t g = prev + 1 + get_delta(b, "a GPU id");
        if (g < 0 || g >= ngpus)
            b->what = "a GPU id below the GPU count";
        t->rank_gpu[r] = (uint32_t)g;
        prev = g;
    }
    for (uint32_t r = 0; r < nranks && !b->what; r++)
        t->rank_class[r] = (uint32_t)get_range(b, 0, nclasses - 1, "a class below the class count");
    for (uint32_t s = 0; s < nslots && !b->what; s++) {
        int64_t p = 0;
        for (uint32_t r = 0; r < nranks && !b->what; r++) {
            int64_t w = p + get_delta(b, "a slot value");
            if (w < 0 || w > (int64_t)UINT32_MAX)
                b->what = "a slot value below 2^32";
            t->slots[(size_t)r * nslots + s] = w == 0 ? RS_NONE : (uint32_t)(w - 1);
            p = w;
        }
    }
    if (b->what)
        return corrupt(err, name, "rank table: expected %s", b->what);
    return RS_OK;
}

int rs_trace_payload_decode(const uint8_t *buf, size_t len, const char *name, rs_trace **out, rs_err *err)
{
    *out = NULL;
    ibuf b = { buf, buf + len, NULL };
    phdr h;
    int rc = decode_header(&b, &h, name, err);
    if (rc)
        return rc;
    rs_trace *t = NULL;
    rs_err e2;
    if ((rc = rs_trace_create(h.nranks, h.nslots, &t, &e2)))
        return rs_err_set(err, rc, "%s: %s", name, e2.msg);
    uint64_t total = 0;
    if ((rc = decode_strings(&b, t, h.nstrings, name, err)) || (rc = decode_comms(&b, t, h.ncomms, name, err)))
        goto fail;
    for (uint32_t c = 0; c < h.nclasses; c++)
        if ((rc = decode_class(&b, t, c, &total, name, err)))
            goto fail;
    if ((rc = decode_ranks(&b, t, h.ngpus, h.nclasses, name, err)))
        goto fail;
    if (b.p != b.end) {
        rc = corrupt(err, name, "%zu bytes after the rank table, expected none", (size_t)(b.end - b.p));
        goto fail;
    }
    if (h.name1 > h.nstrings) {
        rc = corrupt(err, name, "the name is string %llu, expected one below %u", (unsigned long long)h.name1 - 1,
                     h.nstrings);
        goto fail;
    }
    t->iter = h.it;
    t->ngpus = h.ngpus;
    t->name_id = h.name1 ? (uint32_t)(h.name1 - 1) : RS_NONE;
    if ((rc = rs_trace_finish(t, &e2))) {
        rc = rc == RS_ENOMEM ? read_oom(err, name) : corrupt(err, name, "%s", e2.msg);
        goto fail;
    }
    *out = t;
    return RS_OK;
fail:
    rs_trace_destroy(t);
    return rc;
}
