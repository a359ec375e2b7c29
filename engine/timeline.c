/*
 * timeline.c - streaming msgpack writer of the run timeline (timeline.h).
 *
 * msgpack-c's packer writes through put() into one fixed RS_TIMELINE_BUFSZ
 * buffer owned by the writer; a full buffer goes to the FILE in one fwrite
 * (the FILE itself is unbuffered, so each byte is copied once). A packed
 * piece larger than the buffer (a huge scenario string) is written straight
 * through. Nothing else is allocated after create, so 10^9 records cost the
 * same memory as ten.
 *
 * Invariants: `bytes` counts every byte handed to put() (file offset of the
 * next byte); `ioerr` is 0 until the first failed write, then the errno of
 * that failure, and no byte is written after it.
 */
#include "timeline.h"
#include "partfile.h"

_Static_assert(RS_TL_KEY_WORDS == RS_PART_KEY_WORDS, "a timeline record's key is a part file's");

#include <msgpack.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef RS_VERSION
#define RS_VERSION "unknown"
#endif

struct rs_timeline {
    msgpack_packer pk;
    FILE *f;
    size_t used;          /* bytes pending in buf */
    uint64_t bytes;       /* bytes packed so far = file offset of the next */
    uint64_t records;     /* records written, NAME included, END not */
    uint32_t enabled;     /* RS_TL_MASK bits */
    int ioerr;            /* errno of the first failed write, or 0 */
    char *path;           /* final name */
    char *tmp;            /* path + ".tmp", the file being written */
    /* A part (rs_timeline_create_part): each record after its key. */
    rs_timeline_keyer keyer;
    void *kctx;
    size_t rec_at;        /* the open record's key header in buf */
    uint64_t key[RS_TL_KEY_WORDS]; /* its key */
    int part, rec_open;
    char buf[RS_TIMELINE_BUFSZ];
};

/* Write the pending buffer; remember the first failure. */
static int flush_buf(rs_timeline *tl)
{
    if (tl->ioerr)
        return -1;
    errno = 0;
    if (tl->used && fwrite(tl->buf, 1, tl->used, tl->f) != tl->used) {
        tl->ioerr = errno ? errno : EIO;
        return -1;
    }
    tl->used = 0;
    return 0;
}

/* msgpack_packer_write callback. */
static int put(void *data, const char *p, size_t len)
{
    rs_timeline *tl = data;
    if (RS_UNLIKELY(len > sizeof tl->buf - tl->used)) {
        if (flush_buf(tl))
            return -1;
        if (len >= sizeof tl->buf) {
            errno = 0;
            if (fwrite(p, 1, len, tl->f) != len) {
                tl->ioerr = errno ? errno : EIO;
                return -1;
            }
            tl->bytes += len;
            return 0;
        }
    }
    if (RS_UNLIKELY(tl->ioerr))
        return -1;
    memcpy(tl->buf + tl->used, p, len);
    tl->used += len;
    tl->bytes += len;
    return 0;
}

static void pack_str(rs_timeline *tl, const char *s)
{
    if (!s)
        s = "";
    size_t n = strlen(s);
    msgpack_pack_str_with_body(&tl->pk, s, n);
}

static void pack_key(rs_timeline *tl, const char *k) { pack_str(tl, k); }

/* Pack the header map. Its first three keys are fixed so that the partial
 * bool lands at RS_TIMELINE_PARTIAL_OFFSET: fixmap(9) 1 + "format" 7 +
 * "railsim-timeline" 17 + "version" 8 + 1 1 + "partial" 8 = 42. */
static void pack_header(rs_timeline *tl, const rs_timeline_header *h)
{
    msgpack_packer *pk = &tl->pk;
    msgpack_pack_map(pk, 9);
    pack_key(tl, "format");
    pack_str(tl, RS_TIMELINE_FORMAT);
    pack_key(tl, "version");
    msgpack_pack_uint32(pk, RS_TIMELINE_VERSION);
    pack_key(tl, "partial");
    RS_ASSERT(tl->bytes == RS_TIMELINE_PARTIAL_OFFSET);
    msgpack_pack_true(pk); /* patched to false by a complete close */
    pack_key(tl, "version_minor");
    msgpack_pack_uint32(pk, RS_TIMELINE_VERSION_MINOR);
    pack_key(tl, "railsim_version");
    pack_str(tl, h->railsim_version ? h->railsim_version : RS_VERSION);
    pack_key(tl, "seed");
    msgpack_pack_uint64(pk, h->seed);
    pack_key(tl, "scenario");
    pack_str(tl, h->scenario_json);
    pack_key(tl, "topology");
    msgpack_pack_map(pk, h->topology ? h->n_topology : 0);
    for (size_t i = 0; h->topology && i < h->n_topology; i++) {
        pack_str(tl, h->topology[i].name);
        msgpack_pack_uint64(pk, h->topology[i].value);
    }
    pack_key(tl, "trace_hash");
    pack_str(tl, h->trace_hash);
}

int rs_timeline_create(const char *path, const rs_timeline_header *hdr,
                       rs_timeline **out, rs_err *err)
{
    if (out)
        *out = NULL;
    if (!path || !*path || !hdr || !out)
        return rs_err_set(err, RS_EINVAL, "timeline: a path, a header and an output handle are required.");
    if (hdr->n_topology > UINT32_MAX)
        return rs_err_set(err, RS_EINVAL, "timeline %s: topology summary has %zu entries, at most %u allowed.",
                          path, hdr->n_topology, UINT32_MAX);

    int rc = RS_ENOMEM;
    rs_timeline *tl = calloc(1, sizeof *tl);
    size_t n = strlen(path);
    if (!tl)
        goto nomem;
    tl->path = malloc(n + 1);
    tl->tmp = malloc(n + 5);
    if (!tl->path || !tl->tmp)
        goto nomem;
    memcpy(tl->path, path, n + 1);
    memcpy(tl->tmp, path, n);
    memcpy(tl->tmp + n, ".tmp", 5);

    tl->f = fopen(tl->tmp, "wb");
    if (!tl->f) {
        rc = rs_err_set(err, RS_EIO, "cannot create timeline %s: %s.", tl->tmp, strerror(errno));
        goto fail;
    }
    setvbuf(tl->f, NULL, _IONBF, 0); /* our buffer is the only one */
    tl->enabled = RS_TL_ALL;
    msgpack_packer_init(&tl->pk, tl, put);
    pack_header(tl, hdr);
    /* Write the header now so a path we cannot write fails here, not at
     * the end of a long run. */
    if (flush_buf(tl)) {
        rc = rs_err_set(err, RS_EIO, "cannot write timeline %s: %s.", tl->tmp, strerror(tl->ioerr));
        fclose(tl->f);
        remove(tl->tmp);
        goto fail;
    }
    *out = tl;
    return RS_OK;

nomem:
    rs_err_set(err, RS_ENOMEM, "timeline %s: out of memory.", path);
fail:
    if (tl) {
        free(tl->path);
        free(tl->tmp);
        free(tl);
    }
    return rc;
}

void rs_timeline_set_enabled(rs_timeline *tl, uint32_t mask) { tl->enabled = mask & RS_TL_ALL; }
uint32_t rs_timeline_enabled(const rs_timeline *tl) { return tl->enabled; }
uint64_t rs_timeline_records(const rs_timeline *tl) { return tl->records; }

int rs_timeline_wants(const rs_timeline *tl, rs_timeline_kind kind)
{
    if (kind == RS_TL_NAME || kind == RS_TL_END)
        return !tl->ioerr;
    return !tl->ioerr && (unsigned)kind < 32 && (tl->enabled & RS_TL_MASK(kind));
}

/* ---- parts (rs_timeline_create_part) ----
 * A part holds keyed records (partfile.h). A record's header is reserved
 * in the buffer when it starts and filled when it ends, so a record must
 * fit the buffer's free room (PART_ROOM: every record a split run writes
 * is a few dozen bytes). */
enum { PART_ROOM = 4096 };

static void part_open(rs_timeline *tl)
{
    if (sizeof tl->buf - tl->used < RS_PART_HDR + PART_ROOM && flush_buf(tl))
        return;
    memset(tl->key, 0, sizeof tl->key);
    tl->keyer(tl->kctx, tl->key);
    tl->rec_at = tl->used;
    tl->used += RS_PART_HDR;
    tl->bytes += RS_PART_HDR;
    tl->rec_open = 1;
}

static void part_close(rs_timeline *tl)
{
    tl->rec_open = 0;
    if (tl->ioerr)
        return;
    if (tl->used < tl->rec_at + RS_PART_HDR || tl->used - tl->rec_at - RS_PART_HDR > PART_ROOM) {
        tl->ioerr = EFBIG; /* longer than a part's record may be (the merge reads PART_ROOM) */
        return;
    }
    rs_part_hdr_put((unsigned char *)tl->buf + tl->rec_at, tl->key, tl->used - tl->rec_at - RS_PART_HDR);
}

/* Common prologue: start array [kind, ...] of n elements (kind included). */
static void begin(rs_timeline *tl, rs_timeline_kind kind, size_t n)
{
    if (tl->part)
        part_open(tl);
    msgpack_pack_array(&tl->pk, n);
    msgpack_pack_uint32(&tl->pk, (uint32_t)kind);
    tl->records++;
}

static int done(rs_timeline *tl)
{
    if (tl->rec_open)
        part_close(tl);
    return tl->ioerr ? RS_EIO : RS_OK;
}

#define SKIP_IF_OFF(tl, kind)                                         \
    do {                                                              \
        if (RS_UNLIKELY(tl->ioerr))                                   \
            return RS_EIO;                                            \
        if (!(tl->enabled & RS_TL_MASK(kind)))                        \
            return RS_OK;                                             \
    } while (0)

int rs_timeline_name(rs_timeline *tl, uint32_t space, uint64_t id, const char *name)
{
    if (tl->ioerr)
        return RS_EIO;
    begin(tl, RS_TL_NAME, 4);
    msgpack_pack_uint32(&tl->pk, space);
    msgpack_pack_uint64(&tl->pk, id);
    pack_str(tl, name);
    return done(tl);
}

int rs_timeline_op(rs_timeline *tl, const rs_timeline_op_rec *r)
{
    SKIP_IF_OFF(tl, RS_TL_OP);
    begin(tl, RS_TL_OP, 8);
    msgpack_pack_uint32(&tl->pk, r->rank);
    msgpack_pack_uint64(&tl->pk, r->start_ps);
    msgpack_pack_uint64(&tl->pk, r->end_ps);
    pack_str(tl, r->op);
    msgpack_pack_uint64(&tl->pk, r->bytes);
    if (r->comm == RS_TL_NONE)
        msgpack_pack_nil(&tl->pk);
    else
        msgpack_pack_uint32(&tl->pk, r->comm);
    pack_str(tl, r->label);
    return done(tl);
}

int rs_timeline_coll(rs_timeline *tl, const rs_timeline_coll_rec *r)
{
    SKIP_IF_OFF(tl, RS_TL_COLL);
    begin(tl, RS_TL_COLL, 9);
    msgpack_pack_uint64(&tl->pk, r->id);
    pack_str(tl, r->op);
    pack_str(tl, r->algo);
    msgpack_pack_uint32(&tl->pk, r->comm);
    msgpack_pack_uint32(&tl->pk, r->nranks);
    msgpack_pack_uint64(&tl->pk, r->bytes);
    msgpack_pack_uint64(&tl->pk, r->start_ps);
    msgpack_pack_uint64(&tl->pk, r->end_ps);
    return done(tl);
}

/* The records written per flow and per sample are encoded here, straight
 * into the buffer (msgpack-c's packer calls put() per item, which cost a
 * fifth of a flow-level run). The bytes are the packer's: unsigned
 * integers in their shortest form, doubles as float64. A record takes at
 * most REC_MAX bytes. */
enum { REC_MAX = 64 };

typedef struct rec {
    unsigned char *b;
    size_t n;
} rec;

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define BE16(x) (x)
#define BE32(x) (x)
#define BE64(x) (x)
#else
#define BE16(x) __builtin_bswap16(x)
#define BE32(x) __builtin_bswap32(x)
#define BE64(x) __builtin_bswap64(x)
#endif

/* Tag, then v big-endian in 1, 2, 4 or 8 bytes. */
static void enc_be(rec *r, unsigned char tag, uint64_t v, unsigned bytes)
{
    unsigned char *d = r->b + r->n;
    d[0] = tag;
    if (bytes == 1) {
        d[1] = (unsigned char)v;
    } else if (bytes == 2) {
        uint16_t x = BE16((uint16_t)v);
        memcpy(d + 1, &x, 2);
    } else if (bytes == 4) {
        uint32_t x = BE32((uint32_t)v);
        memcpy(d + 1, &x, 4);
    } else {
        uint64_t x = BE64(v);
        memcpy(d + 1, &x, 8);
    }
    r->n += 1 + bytes;
}

static void enc_uint(rec *r, uint64_t v)
{
    if (v < 128)
        r->b[r->n++] = (unsigned char)v;
    else if (v < 256)
        enc_be(r, 0xcc, v, 1);
    else if (v < 65536)
        enc_be(r, 0xcd, v, 2);
    else if (v <= UINT32_MAX)
        enc_be(r, 0xce, v, 4);
    else
        enc_be(r, 0xcf, v, 8);
}

static void enc_f64(rec *r, double d)
{
    uint64_t v;
    memcpy(&v, &d, sizeof v);
    enc_be(r, 0xcb, v, 8);
}

/* A record of n items (n < 16: a fixarray) whose first is its kind, in
 * the buffer (flushed first if it has less than REC_MAX bytes left);
 * RS_EIO if that write failed. */
static int enc_begin(rs_timeline *tl, rec *r, rs_timeline_kind kind, unsigned n)
{
    if (RS_UNLIKELY(tl->part))
        part_open(tl);
    if (RS_UNLIKELY(sizeof tl->buf - tl->used < REC_MAX) && flush_buf(tl))
        return RS_EIO;
    r->b = (unsigned char *)tl->buf + tl->used;
    r->n = 0;
    r->b[r->n++] = (unsigned char)(0x90 | n);
    enc_uint(r, (uint64_t)kind);
    tl->records++;
    return RS_OK;
}

static int enc_done(rs_timeline *tl, const rec *r)
{
    tl->used += r->n;
    tl->bytes += r->n;
    return done(tl);
}

int rs_timeline_flow(rs_timeline *tl, const rs_timeline_flow_rec *r)
{
    SKIP_IF_OFF(tl, RS_TL_FLOW);
    rec e;
    if (enc_begin(tl, &e, RS_TL_FLOW, 6) != RS_OK)
        return RS_EIO;
    enc_uint(&e, r->src);
    enc_uint(&e, r->dst);
    enc_uint(&e, r->bytes);
    enc_uint(&e, r->start_ps);
    enc_uint(&e, r->end_ps);
    return enc_done(tl, &e);
}

int rs_timeline_sample(rs_timeline *tl, const rs_timeline_sample_rec *r)
{
    SKIP_IF_OFF(tl, RS_TL_SAMPLE);
    rec e;
    if (enc_begin(tl, &e, RS_TL_SAMPLE, 6) != RS_OK)
        return RS_EIO;
    enc_uint(&e, r->time_ps);
    enc_uint(&e, r->port);
    enc_uint(&e, r->tx_bytes);
    enc_uint(&e, r->queue_bytes);
    enc_f64(&e, r->util);
    return enc_done(tl, &e);
}

int rs_timeline_pfc(rs_timeline *tl, const rs_timeline_pfc_rec *r)
{
    SKIP_IF_OFF(tl, RS_TL_PFC);
    begin(tl, RS_TL_PFC, 5);
    msgpack_pack_uint64(&tl->pk, r->time_ps);
    msgpack_pack_uint32(&tl->pk, r->port);
    msgpack_pack_uint8(&tl->pk, r->prio_mask);
    if (r->pause)
        msgpack_pack_true(&tl->pk);
    else
        msgpack_pack_false(&tl->pk);
    return done(tl);
}

int rs_timeline_ecn(rs_timeline *tl, const rs_timeline_ecn_rec *r)
{
    SKIP_IF_OFF(tl, RS_TL_ECN);
    begin(tl, RS_TL_ECN, 5);
    msgpack_pack_uint64(&tl->pk, r->time_ps);
    msgpack_pack_uint32(&tl->pk, r->port);
    msgpack_pack_uint32(&tl->pk, r->what);
    msgpack_pack_uint64(&tl->pk, r->count);
    return done(tl);
}

int rs_timeline_drop(rs_timeline *tl, const rs_timeline_drop_rec *r)
{
    SKIP_IF_OFF(tl, RS_TL_DROP);
    begin(tl, RS_TL_DROP, 6);
    msgpack_pack_uint64(&tl->pk, r->time_ps);
    msgpack_pack_uint32(&tl->pk, r->port);
    pack_str(tl, r->reason);
    msgpack_pack_uint64(&tl->pk, r->packets);
    msgpack_pack_uint64(&tl->pk, r->bytes);
    return done(tl);
}

int rs_timeline_fault(rs_timeline *tl, const rs_timeline_fault_rec *r)
{
    SKIP_IF_OFF(tl, RS_TL_FAULT);
    begin(tl, RS_TL_FAULT, 5);
    msgpack_pack_uint64(&tl->pk, r->time_ps);
    pack_str(tl, r->target);
    pack_str(tl, r->kind);
    pack_str(tl, r->detail);
    return done(tl);
}

static void free_tl(rs_timeline *tl)
{
    free(tl->path);
    free(tl->tmp);
    free(tl);
}

int rs_timeline_close(rs_timeline *tl, int partial, rs_err *err)
{
    if (!tl)
        return rs_err_set(err, RS_EINVAL, "timeline: close of a NULL handle.");

    /* END is not counted in `records`: it carries the count of the others.
     * A part has neither END nor header. */
    if (!tl->part) {
        msgpack_pack_array(&tl->pk, 3);
        msgpack_pack_uint32(&tl->pk, RS_TL_END);
        if (partial)
            msgpack_pack_false(&tl->pk);
        else
            msgpack_pack_true(&tl->pk);
        msgpack_pack_uint64(&tl->pk, tl->records);
    }
    flush_buf(tl);

    if (!tl->ioerr && !partial && !tl->part) {
        static const unsigned char no = 0xc2; /* msgpack false */
        if (fseek(tl->f, RS_TIMELINE_PARTIAL_OFFSET, SEEK_SET) != 0 ||
            fwrite(&no, 1, 1, tl->f) != 1)
            tl->ioerr = errno ? errno : EIO;
    }
    if (fclose(tl->f) != 0 && !tl->ioerr)
        tl->ioerr = errno ? errno : EIO;
    tl->f = NULL;
    if (!tl->ioerr && rename(tl->tmp, tl->path) != 0) {
        int e = errno;
        rs_err_set(err, RS_EIO, "cannot rename timeline %s to %s: %s.", tl->tmp, tl->path,
                   strerror(e));
        remove(tl->tmp);
        free_tl(tl);
        return RS_EIO;
    }
    if (tl->ioerr) {
        rs_err_set(err, RS_EIO, "cannot write timeline %s: %s; the file was deleted.", tl->tmp,
                   strerror(tl->ioerr));
        remove(tl->tmp);
        free_tl(tl);
        return RS_EIO;
    }
    free_tl(tl);
    return RS_OK;
}

void rs_timeline_abort(rs_timeline *tl)
{
    if (!tl)
        return;
    if (tl->f)
        fclose(tl->f);
    remove(tl->tmp);
    free_tl(tl);
}

int rs_timeline_create_part(const char *path, uint32_t enabled, rs_timeline_keyer keyer, void *ctx,
                            rs_timeline **out, rs_err *err)
{
    if (out)
        *out = NULL;
    if (!path || !*path || !keyer || !out)
        return rs_err_set(err, RS_EINVAL, "timeline part: a path, a keyer and an output handle are required.");
    rs_timeline *tl = calloc(1, sizeof *tl);
    size_t n = strlen(path);
    if (!tl || !(tl->path = malloc(n + 1)) || !(tl->tmp = malloc(n + 5))) {
        if (tl)
            free_tl(tl);
        return rs_err_set(err, RS_ENOMEM, "timeline %s: out of memory.", path);
    }
    memcpy(tl->path, path, n + 1);
    memcpy(tl->tmp, path, n);
    memcpy(tl->tmp + n, ".tmp", 5);
    if (!(tl->f = fopen(tl->tmp, "wb"))) {
        int rc = rs_err_set(err, RS_EIO, "cannot create timeline %s: %s.", tl->tmp, strerror(errno));
        free_tl(tl);
        return rc;
    }
    setvbuf(tl->f, NULL, _IONBF, 0);
    tl->enabled = enabled & RS_TL_ALL;
    tl->part = 1;
    tl->keyer = keyer;
    tl->kctx = ctx;
    msgpack_packer_init(&tl->pk, tl, put);
    *out = tl;
    return RS_OK;
}

static int append_record(void *ctx, const void *bytes, size_t len)
{
    rs_timeline *tl = ctx;
    tl->records++;
    return put(tl, bytes, len) == 0 ? RS_OK : RS_EIO;
}

int rs_timeline_merge(rs_timeline *tl, const char *const *parts, size_t n, rs_err *err)
{
    if (!tl || tl->part || (n && !parts))
        return rs_err_set(err, RS_EINVAL, "timeline merge: expected a whole timeline and its parts.");
    int rc = rs_part_merge(parts, n, PART_ROOM, "timeline", append_record, tl, err);
    if (rc == RS_EIO && tl->ioerr)
        rs_err_set(err, RS_EIO, "cannot write timeline %s: %s.", tl->tmp, strerror(tl->ioerr));
    return rc;
}
