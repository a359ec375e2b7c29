/*
 * timeline_read.h - streaming reader of railsim timeline files
 * (docs/timeline-format.md; written by engine/timeline.c).
 *
 * rs_tlread_open reads and checks the header; rs_tlread_next then yields
 * one record at a time as a tagged struct. Memory is bounded: one read
 * buffer that grows only to hold the largest single object (at most
 * RS_TLREAD_MAX_OBJECT bytes) plus a msgpack zone reused for every record,
 * so a file of 10^9 records reads in the same memory as one of ten.
 *
 * The file is never trusted. A wrong type, a missing field, a truncated
 * stream, an object too large, an unsupported major version or bytes after
 * the end record each give RS_AN_EFORMAT with one sentence naming the file,
 * the record index, the byte offset and what was expected. Records of kinds
 * this reader does not know (added by a newer minor version) are skipped
 * and counted, not fatal; extra trailing fields of known kinds are ignored.
 *
 * The analysis layer never links the simulator, so it has its own small
 * error type with the same codes as include/railsim/base.h (move it to a shared
 * analysis header when a second analysis module needs it). msgpack-c is
 * used only inside timeline_read.c.
 */
#ifndef RS_TIMELINE_READ_H
#define RS_TIMELINE_READ_H

#include <stddef.h>
#include <stdint.h>

#include "tlformat.h"

/* Error codes: the same values as RS_OK / RS_E* in include/railsim/base.h. */
enum {
    RS_AN_OK = 0,
    RS_AN_EINVAL = -1,
    RS_AN_ENOMEM = -2,
    RS_AN_EIO = -3,
    RS_AN_EFORMAT = -4
};

/* A caller-owned buffer for one sentence saying what went wrong. */
typedef struct rs_an_err {
    int code;
    char msg[512];
} rs_an_err;

/* Fill err (may be NULL) with code and the formatted sentence; returns
 * code. The one error setter of the analysis layer (which cannot use the
 * engine's rs_err_set: it never links the simulator). */
int rs_an_errf(rs_an_err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Largest single msgpack object (the header or one record) accepted. */
#define RS_TLREAD_MAX_OBJECT (16u * 1024u * 1024u)
/* Most msgpack values inside one object (bounds msgpack-c's allocation,
 * which is 24 bytes per value). */
#define RS_TLREAD_MAX_VALUES (1u << 20)

/* Record kinds (tlformat.h, shared with the writer): RS_TL_NAME ...
 * RS_TL_FAULT; RS_TL_END is consumed by the reader, never returned.
 * RS_TL_NONE: "no communicator" in an OP record (nil in the file). */
typedef rs_timeline_kind rs_tlread_kind;

typedef struct rs_tlread_kv {
    const char *name;
    uint64_t value;
} rs_tlread_kv;

/* The header. Strings are NUL-terminated and owned by the reader, valid
 * until rs_tlread_close. */
typedef struct rs_tlread_header {
    uint32_t version;       /* always RS_TIMELINE_VERSION (tlformat.h), the one major this reader reads */
    uint32_t version_minor;
    int partial;            /* 1: the run was interrupted (see the format doc) */
    uint64_t seed;
    const char *railsim_version;
    const char *scenario_json;
    const char *trace_hash;
    const rs_tlread_kv *topology; /* n_topology pairs in file order */
    size_t n_topology;
} rs_tlread_header;

/* One record. `index` counts every record in the file from 0, skipped
 * unknown kinds included. Strings are NUL-terminated, owned by the reader
 * and valid until the next rs_tlread_next or rs_tlread_close. Times are
 * picoseconds, sizes bytes. */
typedef struct rs_tlread_rec {
    rs_tlread_kind kind;
    uint64_t index;
    union {
        struct { uint32_t space; uint64_t id; const char *name; } name;
        struct {
            uint32_t rank, comm; /* comm: RS_TL_NONE if nil */
            uint64_t start_ps, end_ps, bytes;
            const char *op, *label;
        } op;
        struct {
            uint64_t id;
            uint32_t comm, nranks;
            uint64_t bytes, start_ps, end_ps;
            const char *op, *algo;
        } coll;
        struct { uint32_t src, dst; uint64_t bytes, start_ps, end_ps; } flow;
        struct {
            uint64_t time_ps;
            uint32_t port;
            uint64_t tx_bytes, queue_bytes;
            double util;
        } sample;
        struct { uint64_t time_ps; uint32_t port; uint8_t prio_mask; int pause; } pfc;
        struct { uint64_t time_ps; uint32_t port, what; uint64_t count; } ecn;
        struct {
            uint64_t time_ps;
            uint32_t port;
            uint64_t packets, bytes;
            const char *reason;
        } drop;
        struct { uint64_t time_ps; const char *target, *kind, *detail; } fault;
    } u;
} rs_tlread_rec;

typedef struct rs_tlread rs_tlread;

/* Open path and read its header. On success *out owns the open file (end
 * with rs_tlread_close). Errors: RS_AN_EINVAL (NULL argument), RS_AN_EIO
 * (cannot open or read), RS_AN_ENOMEM, RS_AN_EFORMAT (not a timeline, an
 * unsupported version, a malformed header); err says which, *out is NULL. */
int rs_tlread_open(const char *path, rs_tlread **out, rs_an_err *err);

/* The header read by open; owned by r. */
const rs_tlread_header *rs_tlread_header_get(const rs_tlread *r);

/* Read the next record into *rec. Returns 1 with a record, 0 at the end of
 * a well-formed file (the end record was read and agreed with what came
 * before, and nothing follows it), or a negative RS_AN_* code with err
 * filled. Errors are sticky: later calls return the same code and message.
 * A truncated file yields every whole record before the cut, then
 * RS_AN_EFORMAT. */
int rs_tlread_next(rs_tlread *r, rs_tlread_rec *rec, rs_an_err *err);

/* Records of unknown kinds skipped so far. */
uint64_t rs_tlread_skipped(const rs_tlread *r);

/* After rs_tlread_next returned 0: 1 if the end record says the run was
 * complete (then header partial is 0), else 0. */
int rs_tlread_complete(const rs_tlread *r);

/* Close the file and free everything r owns. NULL is a no-op. */
void rs_tlread_close(rs_tlread *r);

#endif
