/*
 * timeline_read.c - streaming reader of timeline files (timeline_read.h).
 *
 * Bytes go from the FILE into one buffer `buf` (64 KiB, grown only while a
 * single object does not fit, up to RS_TLREAD_MAX_OBJECT). Before msgpack-c
 * sees an object, scan() walks its encoding and checks that the whole
 * object is in the buffer and holds at most RS_TLREAD_MAX_VALUES values.
 * That check is why this reader does not use msgpack_unpacker: the
 * unpacker allocates count * 24 bytes as soon as it reads an array header,
 * so one corrupted byte (0xdd 7f ff ff ff) asks for 48 GB before a single
 * element has arrived. After scan(), msgpack_unpack decodes the object
 * into one reused zone, whose size is bounded by the object's.
 *
 * Invariants: buf[beg, end) holds unread bytes; `off` is the file offset of
 * buf[beg]; `index` is the index of the next record; once `failed` is set,
 * every call returns `fail_code` with the stored message.
 */
#include "timeline_read.h"
#include "array.h"

#include <msgpack.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_INIT (64u * 1024u)

struct rs_tlread {
    FILE *f;
    char *path;
    unsigned char *buf;
    size_t cap, beg, end;
    uint64_t off;         /* file offset of buf[beg] */
    int eof;
    msgpack_zone zone;
    int zone_ok;
    char *strs;           /* NUL-terminated copies of the record's strings */
    size_t strs_cap, strs_used;
    uint64_t index;       /* index of the next record */
    uint64_t skipped;
    int ended;            /* end record read and checked */
    int complete;         /* end record's `complete` */
    int failed, fail_code;
    char fail_msg[512];
    rs_tlread_header hdr;
    rs_tlread_kv *topo;
    char *hdr_strs;       /* header strings, one block */
};

int rs_an_errf(rs_an_err *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* Record a sticky failure in r and report it through err. */
static int fail(rs_tlread *r, rs_an_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(rs_tlread *r, rs_an_err *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->fail_msg, sizeof r->fail_msg, fmt, ap);
    va_end(ap);
    r->failed = 1;
    r->fail_code = code;
    return rs_an_errf(err, code, "%s", r->fail_msg);
}

static const char *type_name(msgpack_object_type t)
{
    switch (t) {
    case MSGPACK_OBJECT_NIL: return "nil";
    case MSGPACK_OBJECT_BOOLEAN: return "a boolean";
    case MSGPACK_OBJECT_POSITIVE_INTEGER: return "an unsigned integer";
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: return "a negative integer";
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: return "a float";
    case MSGPACK_OBJECT_STR: return "a string";
    case MSGPACK_OBJECT_ARRAY: return "an array";
    case MSGPACK_OBJECT_MAP: return "a map";
    case MSGPACK_OBJECT_BIN: return "binary data";
    case MSGPACK_OBJECT_EXT: return "an extension value";
    }
    return "an unknown type";
}

/* ---- framing ---------------------------------------------------------- */

static uint64_t be(const unsigned char *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

enum { SCAN_MORE = 0, SCAN_DONE = 1, SCAN_BADBYTE = -1, SCAN_TOOMANY = -2 };

/* Is one whole msgpack object in p[0, n)? SCAN_DONE with its length in
 * *len, SCAN_MORE if it continues past n, SCAN_BADBYTE for the reserved
 * byte 0xc1, SCAN_TOOMANY past RS_TLREAD_MAX_VALUES values. No recursion:
 * `pending` counts values still to read (at most 2^33 per value, so no
 * overflow within the value limit). */
static int scan(const unsigned char *p, size_t n, size_t *len)
{
    uint64_t pending = 1, values = 0;
    size_t i = 0;
    while (pending) {
        if (i >= n)
            return SCAN_MORE;
        if (++values > RS_TLREAD_MAX_VALUES)
            return SCAN_TOOMANY;
        pending--;
        unsigned b = p[i];
        size_t hdr = 1;        /* bytes before the body */
        unsigned lenb = 0;     /* big-endian length field size, after byte 0 */
        int what = 0;          /* 0 body bytes, 1 elements, 2 key/value pairs */
        uint64_t fixed = 0;    /* body bytes not given by a length field */
        if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) {
            /* fixint, nil, bool */
        } else if (b <= 0x8f) {
            pending += 2u * (b & 0x0f);
        } else if (b <= 0x9f) {
            pending += b & 0x0f;
        } else if (b <= 0xbf) {
            fixed = b & 0x1f;
        } else {
            switch (b) {
            case 0xc1: return SCAN_BADBYTE;
            case 0xc4: case 0xd9: lenb = 1; break;            /* bin8, str8 */
            case 0xc5: case 0xda: lenb = 2; break;            /* bin16, str16 */
            case 0xc6: case 0xdb: lenb = 4; break;            /* bin32, str32 */
            case 0xc7: lenb = 1; fixed = 1; break;            /* ext8: + type */
            case 0xc8: lenb = 2; fixed = 1; break;
            case 0xc9: lenb = 4; fixed = 1; break;
            case 0xca: fixed = 4; break;                      /* float32 */
            case 0xcb: fixed = 8; break;                      /* float64 */
            case 0xcc: case 0xd0: fixed = 1; break;
            case 0xcd: case 0xd1: fixed = 2; break;
            case 0xce: case 0xd2: fixed = 4; break;
            case 0xcf: case 0xd3: fixed = 8; break;
            case 0xd4: fixed = 2; break;                      /* fixext1..16 */
            case 0xd5: fixed = 3; break;
            case 0xd6: fixed = 5; break;
            case 0xd7: fixed = 9; break;
            case 0xd8: fixed = 17; break;
            case 0xdc: lenb = 2; what = 1; break;             /* array16 */
            case 0xdd: lenb = 4; what = 1; break;             /* array32 */
            case 0xde: lenb = 2; what = 2; break;             /* map16 */
            case 0xdf: lenb = 4; what = 2; break;             /* map32 */
            }
        }
        hdr += lenb;
        if (n - i < hdr)
            return SCAN_MORE;
        uint64_t l = lenb ? be(p + i + 1, lenb) : 0;
        uint64_t body = fixed;
        if (what == 1)
            pending += l;
        else if (what == 2)
            pending += 2 * l;
        else
            body += l;
        if (body > n - i - hdr)
            return SCAN_MORE;
        i += hdr + (size_t)body;
    }
    *len = i;
    return SCAN_DONE;
}

/* What the object at the read position is, for messages. */
static const char *where(rs_tlread *r, char *tmp, size_t n)
{
    if (r->index == UINT64_MAX)
        snprintf(tmp, n, "the header");
    else
        snprintf(tmp, n, "record %" PRIu64 " (byte offset %" PRIu64 ")", r->index, r->off);
    return tmp;
}

/* Decode the next object into *obj (valid until the next call). 1 with an
 * object, 0 at a clean end of file (no byte left), negative on error. */
static int read_object(rs_tlread *r, msgpack_object *obj, rs_an_err *err)
{
    char w[96];
    for (;;) {
        size_t len = 0;
        int s = scan(r->buf + r->beg, r->end - r->beg, &len);
        if (s == SCAN_DONE) {
            size_t used = 0;
            msgpack_zone_clear(&r->zone);
            msgpack_unpack_return u = msgpack_unpack((const char *)r->buf + r->beg, len, &used,
                                                     &r->zone, obj);
            if (u == MSGPACK_UNPACK_NOMEM_ERROR)
                return fail(r, err, RS_AN_ENOMEM, "%s: out of memory decoding %s.", r->path,
                            where(r, w, sizeof w));
            if (u != MSGPACK_UNPACK_SUCCESS || used != len)
                return fail(r, err, RS_AN_EFORMAT,
                            "%s: %s is not valid msgpack (nested deeper than the decoder allows).",
                            r->path, where(r, w, sizeof w));
            r->beg += len;
            r->off += len;
            return 1;
        }
        if (s == SCAN_BADBYTE)
            return fail(r, err, RS_AN_EFORMAT,
                        "%s: %s is not valid msgpack (reserved byte 0xc1).", r->path,
                        where(r, w, sizeof w));
        if (s == SCAN_TOOMANY)
            return fail(r, err, RS_AN_EFORMAT,
                        "%s: %s holds more than %u values; expected a small record (the file is corrupt).",
                        r->path, where(r, w, sizeof w), RS_TLREAD_MAX_VALUES);
        /* SCAN_MORE */
        if (r->eof) {
            if (r->beg == r->end)
                return 0;
            return fail(r, err, RS_AN_EFORMAT,
                        "%s: truncated: the file ends inside %s, %zu bytes into it.", r->path,
                        where(r, w, sizeof w), r->end - r->beg);
        }
        if (r->beg > 0) {
            memmove(r->buf, r->buf + r->beg, r->end - r->beg);
            r->end -= r->beg;
            r->beg = 0;
        }
        if (r->end == r->cap) {
            if (r->cap >= RS_TLREAD_MAX_OBJECT)
                return fail(r, err, RS_AN_EFORMAT,
                            "%s: %s is larger than %u bytes, the reader's limit for one object (the file is corrupt).",
                            r->path, where(r, w, sizeof w), RS_TLREAD_MAX_OBJECT);
            /* BUF_INIT and the limit are powers of two: doubling reaches the limit exactly. */
            if (rs_array_reserve(&r->buf, &r->cap, r->cap + 1, 1, BUF_INIT) != RS_OK)
                return fail(r, err, RS_AN_ENOMEM, "%s: out of memory reading %s.", r->path,
                            where(r, w, sizeof w));
        }
        size_t got = fread(r->buf + r->end, 1, r->cap - r->end, r->f);
        r->end += got;
        if (got == 0) {
            if (ferror(r->f))
                return fail(r, err, RS_AN_EIO, "cannot read timeline %s: %s.", r->path,
                            strerror(errno));
            r->eof = 1;
        }
    }
}

/* ---- records ---------------------------------------------------------- */

/* Field access with messages naming record, kind and field. */
typedef struct fctx {
    rs_tlread *r;
    const msgpack_object *a; /* the record's elements */
    const char *kname;
    uint64_t roff;           /* byte offset of the record */
    rs_an_err *err;
} fctx;

static int bad_field(fctx *c, unsigned i, const char *field, const char *want,
                     const msgpack_object *o)
{
    char found[48];
    if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
        snprintf(found, sizeof found, "%" PRIu64, o->via.u64);
    else
        snprintf(found, sizeof found, "%s", type_name(o->type));
    return fail(c->r, c->err, RS_AN_EFORMAT,
                "%s: record %" PRIu64 " (%s, byte offset %" PRIu64
                "): field %u \"%s\" should be %s, found %s.",
                c->r->path, c->r->index, c->kname, c->roff, i, field, want, found);
}

static int get_u64(fctx *c, unsigned i, const char *field, uint64_t *out)
{
    const msgpack_object *o = &c->a[i];
    if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return bad_field(c, i, field, "an unsigned integer", o);
    *out = o->via.u64;
    return 0;
}

static int get_u32(fctx *c, unsigned i, const char *field, uint32_t *out)
{
    const msgpack_object *o = &c->a[i];
    if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER || o->via.u64 > UINT32_MAX)
        return bad_field(c, i, field, "an unsigned 32-bit integer", o);
    *out = (uint32_t)o->via.u64;
    return 0;
}

static int get_bool(fctx *c, unsigned i, const char *field, int *out)
{
    const msgpack_object *o = &c->a[i];
    if (o->type != MSGPACK_OBJECT_BOOLEAN)
        return bad_field(c, i, field, "a boolean", o);
    *out = o->via.boolean;
    return 0;
}

static int get_f64(fctx *c, unsigned i, const char *field, double *out)
{
    const msgpack_object *o = &c->a[i];
    if (o->type != MSGPACK_OBJECT_FLOAT64 && o->type != MSGPACK_OBJECT_FLOAT32)
        return bad_field(c, i, field, "a float", o);
    *out = o->via.f64;
    return 0;
}

/* Copy a string into the record's scratch (sized by the caller to hold
 * every string of the record plus their NULs). */
static int get_str(fctx *c, unsigned i, const char *field, const char **out)
{
    const msgpack_object *o = &c->a[i];
    if (o->type != MSGPACK_OBJECT_STR)
        return bad_field(c, i, field, "a string", o);
    rs_tlread *r = c->r;
    size_t n = o->via.str.size;
    if (n + 1 > r->strs_cap - r->strs_used)
        return fail(r, c->err, RS_AN_ENOMEM, "%s: internal: string scratch too small.", r->path);
    char *s = r->strs + r->strs_used;
    if (n) /* msgpack-c gives a NULL ptr for "" */
        memcpy(s, o->via.str.ptr, n);
    s[n] = '\0';
    r->strs_used += n + 1;
    *out = s;
    return 0;
}

static int check_span(fctx *c, uint64_t start, uint64_t end)
{
    if (end < start)
        return fail(c->r, c->err, RS_AN_EFORMAT,
                    "%s: record %" PRIu64 " (%s, byte offset %" PRIu64
                    "): end_ps %" PRIu64 " is before start_ps %" PRIu64 ".",
                    c->r->path, c->r->index, c->kname, c->roff, end, start);
    return 0;
}

static const struct {
    const char *name;
    unsigned nfields; /* elements including the kind */
} kinds[] = {
    [RS_TL_NAME] = {"name", 4},     [RS_TL_OP] = {"op", 8},
    [RS_TL_COLL] = {"coll", 9},     [RS_TL_FLOW] = {"flow", 6},
    [RS_TL_SAMPLE] = {"sample", 6}, [RS_TL_PFC] = {"pfc", 5},
    [RS_TL_ECN] = {"ecn", 5},       [RS_TL_DROP] = {"drop", 6},
    [RS_TL_FAULT] = {"fault", 5},   [RS_TL_END] = {"end", 3},
};
#define KIND_MAX RS_TL_END

/* Fill rec from a known record kind. 0 or a negative code. */
static int decode(fctx *c, rs_tlread_kind k, rs_tlread_rec *rec)
{
    int e = 0;
    switch (k) {
    case RS_TL_NAME:
        e = e ? e : get_u32(c, 1, "space", &rec->u.name.space);
        e = e ? e : get_u64(c, 2, "id", &rec->u.name.id);
        e = e ? e : get_str(c, 3, "name", &rec->u.name.name);
        return e;
    case RS_TL_OP:
        e = e ? e : get_u32(c, 1, "rank", &rec->u.op.rank);
        e = e ? e : get_u64(c, 2, "start_ps", &rec->u.op.start_ps);
        e = e ? e : get_u64(c, 3, "end_ps", &rec->u.op.end_ps);
        e = e ? e : get_str(c, 4, "op", &rec->u.op.op);
        e = e ? e : get_u64(c, 5, "bytes", &rec->u.op.bytes);
        if (!e && c->a[6].type == MSGPACK_OBJECT_NIL)
            rec->u.op.comm = RS_TL_NONE;
        else if (!e && (c->a[6].type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
                        c->a[6].via.u64 >= RS_TL_NONE))
            e = bad_field(c, 6, "comm", "nil or an unsigned integer below 2^32-1", &c->a[6]);
        else if (!e)
            rec->u.op.comm = (uint32_t)c->a[6].via.u64;
        e = e ? e : get_str(c, 7, "label", &rec->u.op.label);
        return e ? e : check_span(c, rec->u.op.start_ps, rec->u.op.end_ps);
    case RS_TL_COLL:
        e = e ? e : get_u64(c, 1, "id", &rec->u.coll.id);
        e = e ? e : get_str(c, 2, "op", &rec->u.coll.op);
        e = e ? e : get_str(c, 3, "algo", &rec->u.coll.algo);
        e = e ? e : get_u32(c, 4, "comm", &rec->u.coll.comm);
        e = e ? e : get_u32(c, 5, "nranks", &rec->u.coll.nranks);
        e = e ? e : get_u64(c, 6, "bytes", &rec->u.coll.bytes);
        e = e ? e : get_u64(c, 7, "start_ps", &rec->u.coll.start_ps);
        e = e ? e : get_u64(c, 8, "end_ps", &rec->u.coll.end_ps);
        return e ? e : check_span(c, rec->u.coll.start_ps, rec->u.coll.end_ps);
    case RS_TL_FLOW:
        e = e ? e : get_u32(c, 1, "src", &rec->u.flow.src);
        e = e ? e : get_u32(c, 2, "dst", &rec->u.flow.dst);
        e = e ? e : get_u64(c, 3, "bytes", &rec->u.flow.bytes);
        e = e ? e : get_u64(c, 4, "start_ps", &rec->u.flow.start_ps);
        e = e ? e : get_u64(c, 5, "end_ps", &rec->u.flow.end_ps);
        return e ? e : check_span(c, rec->u.flow.start_ps, rec->u.flow.end_ps);
    case RS_TL_SAMPLE:
        e = e ? e : get_u64(c, 1, "time_ps", &rec->u.sample.time_ps);
        e = e ? e : get_u32(c, 2, "port", &rec->u.sample.port);
        e = e ? e : get_u64(c, 3, "tx_bytes", &rec->u.sample.tx_bytes);
        e = e ? e : get_u64(c, 4, "queue_bytes", &rec->u.sample.queue_bytes);
        e = e ? e : get_f64(c, 5, "util", &rec->u.sample.util);
        return e;
    case RS_TL_PFC: {
        uint32_t mask = 0;
        e = e ? e : get_u64(c, 1, "time_ps", &rec->u.pfc.time_ps);
        e = e ? e : get_u32(c, 2, "port", &rec->u.pfc.port);
        e = e ? e : get_u32(c, 3, "prio_mask", &mask);
        if (!e && mask > 0xff)
            e = bad_field(c, 3, "prio_mask", "an integer 0..255", &c->a[3]);
        rec->u.pfc.prio_mask = (uint8_t)mask;
        e = e ? e : get_bool(c, 4, "pause", &rec->u.pfc.pause);
        return e;
    }
    case RS_TL_ECN:
        e = e ? e : get_u64(c, 1, "time_ps", &rec->u.ecn.time_ps);
        e = e ? e : get_u32(c, 2, "port", &rec->u.ecn.port);
        e = e ? e : get_u32(c, 3, "what", &rec->u.ecn.what);
        e = e ? e : get_u64(c, 4, "count", &rec->u.ecn.count);
        return e;
    case RS_TL_DROP:
        e = e ? e : get_u64(c, 1, "time_ps", &rec->u.drop.time_ps);
        e = e ? e : get_u32(c, 2, "port", &rec->u.drop.port);
        e = e ? e : get_str(c, 3, "reason", &rec->u.drop.reason);
        e = e ? e : get_u64(c, 4, "packets", &rec->u.drop.packets);
        e = e ? e : get_u64(c, 5, "bytes", &rec->u.drop.bytes);
        return e;
    case RS_TL_FAULT:
        e = e ? e : get_u64(c, 1, "time_ps", &rec->u.fault.time_ps);
        e = e ? e : get_str(c, 2, "target", &rec->u.fault.target);
        e = e ? e : get_str(c, 3, "kind", &rec->u.fault.kind);
        e = e ? e : get_str(c, 4, "detail", &rec->u.fault.detail);
        return e;
    case RS_TL_END:
        break;
    }
    return fail(c->r, c->err, RS_AN_EINVAL, "%s: internal: decode of kind %d.", c->r->path, (int)k);
}

/* The end record: check it, then that nothing follows. Returns 0 (end). */
static int finish(rs_tlread *r, fctx *c, rs_an_err *err)
{
    uint64_t n = 0;
    int complete = 0;
    int e = get_bool(c, 1, "complete", &complete);
    e = e ? e : get_u64(c, 2, "records", &n);
    if (e)
        return e;
    if (n != r->index)
        return fail(r, err, RS_AN_EFORMAT,
                    "%s: record %" PRIu64 " (end, byte offset %" PRIu64 ") says the file holds %" PRIu64
                    " records, but %" PRIu64 " came before it.",
                    r->path, r->index, c->roff, n, r->index);
    if (complete == r->hdr.partial)
        return fail(r, err, RS_AN_EFORMAT,
                    "%s: the end record says complete=%s but the header says partial=%s; expected opposite values.",
                    r->path, complete ? "true" : "false", r->hdr.partial ? "true" : "false");
    msgpack_object extra;
    int s = read_object(r, &extra, err);
    if (s < 0)
        return s;
    if (s > 0)
        return fail(r, err, RS_AN_EFORMAT,
                    "%s: data after the end record at byte offset %" PRIu64 "; expected the end of the file.",
                    r->path, c->roff);
    r->ended = 1;
    r->complete = complete;
    return 0;
}

int rs_tlread_next(rs_tlread *r, rs_tlread_rec *rec, rs_an_err *err)
{
    if (!r || !rec)
        return rs_an_errf(err, RS_AN_EINVAL, "timeline reader: NULL argument.");
    if (r->failed)
        return rs_an_errf(err, r->fail_code, "%s", r->fail_msg);
    if (r->ended)
        return 0;
    for (;;) {
        uint64_t roff = r->off;
        msgpack_object o;
        int s = read_object(r, &o, err);
        if (s < 0)
            return s;
        if (s == 0)
            return fail(r, err, RS_AN_EFORMAT,
                        "%s: truncated: the file ends before record %" PRIu64
                        " and has no end record (the writer did not finish).",
                        r->path, r->index);
        fctx c = {r, NULL, "?", roff, err};
        if (o.type != MSGPACK_OBJECT_ARRAY || o.via.array.size == 0)
            return fail(r, err, RS_AN_EFORMAT,
                        "%s: record %" PRIu64 " (byte offset %" PRIu64
                        ") should be an array starting with a kind number, found %s.",
                        r->path, r->index, roff,
                        o.type != MSGPACK_OBJECT_ARRAY ? type_name(o.type) : "an empty array");
        const msgpack_object *k0 = &o.via.array.ptr[0];
        if (k0->type != MSGPACK_OBJECT_POSITIVE_INTEGER || k0->via.u64 == 0)
            return fail(r, err, RS_AN_EFORMAT,
                        "%s: record %" PRIu64 " (byte offset %" PRIu64
                        "): element 0 \"kind\" should be an integer >= 1, found %s.",
                        r->path, r->index, roff,
                        k0->type == MSGPACK_OBJECT_POSITIVE_INTEGER ? "0" : type_name(k0->type));
        uint64_t k = o.via.array.ptr[0].via.u64;
        if (k > KIND_MAX) { /* a newer minor version's kind: skip it */
            r->skipped++;
            r->index++;
            continue;
        }
        c.a = o.via.array.ptr;
        c.kname = kinds[k].name;
        if (o.via.array.size < kinds[k].nfields)
            return fail(r, err, RS_AN_EFORMAT,
                        "%s: record %" PRIu64 " (%s, byte offset %" PRIu64
                        ") has %" PRIu32 " elements, expected at least %u.",
                        r->path, r->index, kinds[k].name, roff, o.via.array.size,
                        kinds[k].nfields);
        if (k == RS_TL_END)
            return finish(r, &c, err);
        /* Strings of one record fit in the record's length plus NULs. */
        size_t need = (size_t)(r->off - roff) + 16;
        if (rs_array_reserve(&r->strs, &r->strs_cap, need, 1, 256) != RS_OK)
            return fail(r, err, RS_AN_ENOMEM, "%s: out of memory reading record %" PRIu64 ".", r->path,
                        r->index);
        r->strs_used = 0;
        memset(rec, 0, sizeof *rec);
        rec->kind = (rs_tlread_kind)k;
        rec->index = r->index;
        int e = decode(&c, (rs_tlread_kind)k, rec);
        if (e)
            return e;
        r->index++;
        return 1;
    }
}

/* ---- header ----------------------------------------------------------- */

static int key_is(const msgpack_object *k, const char *s)
{
    size_t n = strlen(s);
    return k->type == MSGPACK_OBJECT_STR && k->via.str.size == n && memcmp(k->via.str.ptr, s, n) == 0;
}

static const msgpack_object *find_key(const msgpack_object *map, const char *s)
{
    for (uint32_t i = 0; i < map->via.map.size; i++)
        if (key_is(&map->via.map.ptr[i].key, s))
            return &map->via.map.ptr[i].val;
    return NULL;
}

static int hdr_want(rs_tlread *r, rs_an_err *err, const char *key, const msgpack_object *v,
                    msgpack_object_type t, const char *what)
{
    if (!v)
        return fail(r, err, RS_AN_EFORMAT, "%s: the header has no \"%s\" key; expected %s.",
                    r->path, key, what);
    if (v->type != t)
        return fail(r, err, RS_AN_EFORMAT, "%s: header \"%s\" should be %s, found %s.", r->path,
                    key, what, type_name(v->type));
    return 0;
}

static char *hdr_copy(char **p, const msgpack_object *s)
{
    char *d = *p;
    if (s->via.str.size)
        memcpy(d, s->via.str.ptr, s->via.str.size);
    d[s->via.str.size] = '\0';
    *p += s->via.str.size + 1;
    return d;
}

static int read_header(rs_tlread *r, rs_an_err *err)
{
    msgpack_object h;
    int s = read_object(r, &h, err);
    if (s < 0)
        return s;
    if (s == 0)
        return fail(r, err, RS_AN_EFORMAT, "%s is empty; expected a railsim timeline header.",
                    r->path);
    if (h.type != MSGPACK_OBJECT_MAP)
        return fail(r, err, RS_AN_EFORMAT,
                    "%s is not a railsim timeline: it should start with a msgpack map, found %s.",
                    r->path, type_name(h.type));
    const msgpack_object *fmt = find_key(&h, "format");
    if (!fmt || fmt->type != MSGPACK_OBJECT_STR || fmt->via.str.size != strlen(RS_TIMELINE_FORMAT) ||
        memcmp(fmt->via.str.ptr, RS_TIMELINE_FORMAT, strlen(RS_TIMELINE_FORMAT)) != 0)
        return fail(r, err, RS_AN_EFORMAT,
                    "%s is not a railsim timeline: its header has no \"format\": \"" RS_TIMELINE_FORMAT "\".",
                    r->path);
    const msgpack_object *ver = find_key(&h, "version");
    if (hdr_want(r, err, "version", ver, MSGPACK_OBJECT_POSITIVE_INTEGER, "an unsigned integer"))
        return r->fail_code;
    if (ver->via.u64 != RS_TIMELINE_VERSION)
        return fail(r, err, RS_AN_EFORMAT,
                    "%s: timeline version %" PRIu64 " is not supported; this reader reads version %d.",
                    r->path, ver->via.u64, RS_TIMELINE_VERSION);

    const msgpack_object *partial = find_key(&h, "partial");
    const msgpack_object *minor = find_key(&h, "version_minor");
    const msgpack_object *rv = find_key(&h, "railsim_version");
    const msgpack_object *seed = find_key(&h, "seed");
    const msgpack_object *scen = find_key(&h, "scenario");
    const msgpack_object *topo = find_key(&h, "topology");
    const msgpack_object *hash = find_key(&h, "trace_hash");
    if (hdr_want(r, err, "partial", partial, MSGPACK_OBJECT_BOOLEAN, "a boolean") ||
        hdr_want(r, err, "version_minor", minor, MSGPACK_OBJECT_POSITIVE_INTEGER, "an unsigned integer") ||
        hdr_want(r, err, "railsim_version", rv, MSGPACK_OBJECT_STR, "a string") ||
        hdr_want(r, err, "seed", seed, MSGPACK_OBJECT_POSITIVE_INTEGER, "an unsigned integer") ||
        hdr_want(r, err, "scenario", scen, MSGPACK_OBJECT_STR, "a string (JSON text)") ||
        hdr_want(r, err, "topology", topo, MSGPACK_OBJECT_MAP, "a map of names to unsigned integers") ||
        hdr_want(r, err, "trace_hash", hash, MSGPACK_OBJECT_STR, "a string"))
        return r->fail_code;
    if (minor->via.u64 > UINT32_MAX)
        return fail(r, err, RS_AN_EFORMAT, "%s: header \"version_minor\" %" PRIu64 " is out of range.",
                    r->path, minor->via.u64);

    size_t nt = topo->via.map.size;
    size_t bytes = rv->via.str.size + scen->via.str.size + hash->via.str.size + 3;
    for (size_t i = 0; i < nt; i++) {
        const msgpack_object_kv *kv = &topo->via.map.ptr[i];
        if (kv->key.type != MSGPACK_OBJECT_STR || kv->val.type != MSGPACK_OBJECT_POSITIVE_INTEGER)
            return fail(r, err, RS_AN_EFORMAT,
                        "%s: header \"topology\" entry %zu should map a string to an unsigned integer, found %s to %s.",
                        r->path, i, type_name(kv->key.type), type_name(kv->val.type));
        bytes += kv->key.via.str.size + 1;
    }
    r->topo = calloc(nt ? nt : 1, sizeof *r->topo);
    r->hdr_strs = malloc(bytes);
    if (!r->topo || !r->hdr_strs)
        return fail(r, err, RS_AN_ENOMEM, "%s: out of memory reading the header.", r->path);
    char *p = r->hdr_strs;
    r->hdr.version = RS_TIMELINE_VERSION;
    r->hdr.version_minor = (uint32_t)minor->via.u64;
    r->hdr.partial = partial->via.boolean;
    r->hdr.seed = seed->via.u64;
    r->hdr.railsim_version = hdr_copy(&p, rv);
    r->hdr.scenario_json = hdr_copy(&p, scen);
    r->hdr.trace_hash = hdr_copy(&p, hash);
    for (size_t i = 0; i < nt; i++) {
        r->topo[i].name = hdr_copy(&p, &topo->via.map.ptr[i].key);
        r->topo[i].value = topo->via.map.ptr[i].val.via.u64;
    }
    r->hdr.topology = r->topo;
    r->hdr.n_topology = nt;
    return 0;
}

int rs_tlread_open(const char *path, rs_tlread **out, rs_an_err *err)
{
    if (out)
        *out = NULL;
    if (!path || !out)
        return rs_an_errf(err, RS_AN_EINVAL, "timeline reader: a path and an output handle are required.");
    rs_tlread *r = calloc(1, sizeof *r);
    if (!r)
        return rs_an_errf(err, RS_AN_ENOMEM, "%s: out of memory opening the timeline.", path);
    r->path = strdup(path);
    r->buf = malloc(BUF_INIT);
    r->cap = BUF_INIT;
    r->zone_ok = msgpack_zone_init(&r->zone, 8192);
    int rc;
    if (!r->path || !r->buf || !r->zone_ok) {
        rc = rs_an_errf(err, RS_AN_ENOMEM, "%s: out of memory opening the timeline.", path);
        goto fail;
    }
    r->f = fopen(path, "rb");
    if (!r->f) {
        rc = rs_an_errf(err, RS_AN_EIO, "cannot open timeline %s: %s.", path, strerror(errno));
        goto fail;
    }
    r->index = UINT64_MAX; /* "the header" in messages */
    rc = read_header(r, err);
    if (rc)
        goto fail;
    r->index = 0;
    *out = r;
    return RS_AN_OK;
fail:
    rs_tlread_close(r);
    return rc;
}

const rs_tlread_header *rs_tlread_header_get(const rs_tlread *r) { return &r->hdr; }
uint64_t rs_tlread_skipped(const rs_tlread *r) { return r->skipped; }
int rs_tlread_complete(const rs_tlread *r) { return r->ended && r->complete; }

void rs_tlread_close(rs_tlread *r)
{
    if (!r)
        return;
    if (r->f)
        fclose(r->f);
    if (r->zone_ok)
        msgpack_zone_destroy(&r->zone);
    free(r->buf);
    free(r->strs);
    free(r->topo);
    free(r->hdr_strs);
    free(r->path);
    free(r);
}
