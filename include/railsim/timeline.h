/*
 * timeline.h - the timeline sink: a streaming msgpack writer for what
 * happened during a run (docs/timeline-format.md is the file's contract).
 *
 * The file is one header map followed by a stream of records, each a
 * msgpack array whose first element is a small integer kind. Records are
 * packed into one fixed buffer (RS_TIMELINE_BUFSZ) and written to the file
 * whenever it fills, so memory does not grow with the run: the writer has
 * no growing array, no name table and no per-record allocation.
 *
 * The engine knows nothing of packets or ranks; it only defines the record
 * kinds and their fields, all plain integers (picoseconds, bytes, ids chosen
 * by the caller), short strings and float64 fractions. Callers give ids
 * names with rs_timeline_name before first use.
 *
 * Crash safety: the file is written as PATH.tmp and renamed to PATH by a
 * successful rs_timeline_close, so PATH never holds a truncated stream.
 * The header's "partial" flag is written as true at a fixed byte offset
 * (RS_TIMELINE_PARTIAL_OFFSET) and patched to false only by a complete
 * close; every closed file also ends with an END record that carries the
 * record count, so a reader tells "complete", "partial (interrupted run,
 * closed cleanly)" and "truncated" apart.
 *
 * Errors: the first failed write is remembered (sticky); later record calls
 * do nothing and return that code, and rs_timeline_close reports it.
 *
 * msgpack-c is used only inside timeline.c (STYLE: one third-party library
 * behind one module); this header does not include it.
 */
#ifndef RS_TIMELINE_H
#define RS_TIMELINE_H

#include "base.h"
#include "tlformat.h"

#include <stdint.h>
#include <stddef.h>

RS_BEGIN_DECLS

typedef struct rs_timeline rs_timeline;

/* The format's identity (RS_TIMELINE_FORMAT, RS_TIMELINE_VERSION,
 * RS_TIMELINE_VERSION_MINOR) and record kinds are tlformat.h's. */

/* Size of the writer's one packing buffer. */
#define RS_TIMELINE_BUFSZ (64u * 1024u)

/* Byte offset of the header's "partial" bool (0xc3 true / 0xc2 false). It
 * is fixed because the header starts with a 9-entry fixmap whose first keys
 * are "format", "version", "partial" in that order (see the format doc). */
#define RS_TIMELINE_PARTIAL_OFFSET 42


#define RS_TL_MASK(kind) (1u << (kind))
/* Every kind the caller can switch off (NAME and END are always written). */
#define RS_TL_ALL                                                                     \
    (RS_TL_MASK(RS_TL_OP) | RS_TL_MASK(RS_TL_COLL) | RS_TL_MASK(RS_TL_FLOW) |         \
     RS_TL_MASK(RS_TL_SAMPLE) | RS_TL_MASK(RS_TL_PFC) | RS_TL_MASK(RS_TL_ECN) |       \
     RS_TL_MASK(RS_TL_DROP) | RS_TL_MASK(RS_TL_FAULT))
/* The kinds whose count grows with packets or time rather than with ops. */
#define RS_TL_HEAVY                                                                   \
    (RS_TL_MASK(RS_TL_FLOW) | RS_TL_MASK(RS_TL_SAMPLE) | RS_TL_MASK(RS_TL_PFC) |      \
     RS_TL_MASK(RS_TL_ECN))

/* Name spaces of NAME records: which kind of id a name belongs to. */
enum {
    RS_TL_NS_PORT = 0, /* port ids used by SAMPLE, PFC, ECN, DROP */
    RS_TL_NS_RANK = 1, /* rank ids used by OP, FLOW */
    RS_TL_NS_COMM = 2, /* communicator ids used by OP, COLL */
    RS_TL_NS_NODE = 3  /* switches, NICs, HB domains (free for callers) */
};

/* "No communicator" in rs_timeline_op_rec.comm; written as msgpack nil. */

/* One (name, value) pair of the header's topology summary. */
typedef struct rs_timeline_kv {
    const char *name;
    uint64_t value;
} rs_timeline_kv;

/* What the header says. Strings may be NULL (written as ""); the writer
 * copies nothing and keeps no pointer after rs_timeline_create returns. */
typedef struct rs_timeline_header {
    const char *railsim_version;    /* NULL: this build's RS_VERSION */
    uint64_t seed;                  /* run seed */
    const char *scenario_json;      /* full effective scenario, JSON text */
    const rs_timeline_kv *topology; /* n_topology pairs, written in order */
    size_t n_topology;
    const char *trace_hash;         /* hash of the replayed trace, or "" */
} rs_timeline_header;

/* Record payloads. Times are picoseconds, sizes bytes; strings may be NULL
 * (written as ""). Nothing is kept after the call returns. */
typedef struct rs_timeline_op_rec {
    uint32_t rank;
    uint32_t comm;        /* communicator id, or RS_TL_NONE (compute, ...) */
    rs_time start_ps, end_ps;
    uint64_t bytes;       /* 0 for compute */
    const char *op;       /* "compute", "allreduce", "send", ... */
    const char *label;    /* free text ("layer 3 fwd"), often "" */
} rs_timeline_op_rec;

typedef struct rs_timeline_coll_rec {
    uint64_t id;          /* collective instance id, unique in the run */
    uint32_t comm;        /* communicator id */
    uint32_t nranks;      /* ranks taking part */
    uint64_t bytes;       /* per-rank buffer size given to the collective */
    rs_time start_ps, end_ps;
    const char *op;       /* "allreduce", "allgather", ... */
    const char *algo;     /* "ring", "tree", "hier-ring", ... */
} rs_timeline_coll_rec;

typedef struct rs_timeline_flow_rec {
    uint32_t src, dst;    /* rank ids */
    uint64_t bytes;
    rs_time start_ps, end_ps; /* posted, fully delivered */
} rs_timeline_flow_rec;

typedef struct rs_timeline_sample_rec {
    rs_time time_ps;
    uint32_t port;
    uint64_t tx_bytes;    /* cumulative bytes sent by the port since t=0 */
    uint64_t queue_bytes; /* bytes queued at the port at time_ps */
    double util;          /* fraction of line rate used since the port's
                             previous sample, 0..1 */
} rs_timeline_sample_rec;

typedef struct rs_timeline_pfc_rec {
    rs_time time_ps;
    uint32_t port;        /* port that sent the pause frame */
    uint8_t prio_mask;    /* bit p = priority p (802.1Qbb class-enable) */
    uint8_t pause;        /* 1 pause (XOFF), 0 resume (XON) */
} rs_timeline_pfc_rec;

enum { RS_TL_ECN_MARK = 0, RS_TL_ECN_CNP = 1 };
typedef struct rs_timeline_ecn_rec {
    rs_time time_ps;
    uint32_t port;        /* marking port, or NIC port that sent the CNP */
    uint32_t what;        /* RS_TL_ECN_MARK or RS_TL_ECN_CNP */
    uint64_t count;       /* packets marked / CNPs sent at time_ps */
} rs_timeline_ecn_rec;

typedef struct rs_timeline_drop_rec {
    rs_time time_ps;
    uint32_t port;
    uint64_t packets;
    uint64_t bytes;
    const char *reason;   /* "buffer", "link-down", "loss", ... */
} rs_timeline_drop_rec;

typedef struct rs_timeline_fault_rec {
    rs_time time_ps;
    const char *target;   /* "link spine0:p3", "switch rail2", ... */
    const char *kind;     /* "down", "up", ... */
    const char *detail;   /* free text, often "" */
} rs_timeline_fault_rec;

/* Create PATH.tmp and write the header (partial = true until a complete
 * close). On success *out owns the open file; end it with rs_timeline_close
 * or rs_timeline_abort. All kinds start enabled. Errors: RS_EINVAL (NULL
 * path/hdr/out), RS_ENOMEM, RS_EIO (cannot create or write; err names the
 * file). On failure nothing is left on disk and *out is NULL. */
RS_API int rs_timeline_create(const char *path, const rs_timeline_header *hdr,
                       rs_timeline **out, rs_err *err);

/* Write only the kinds in mask (RS_TL_MASK bits; NAME and END are always
 * written). Takes effect for the next record call. */
RS_API void rs_timeline_set_enabled(rs_timeline *tl, uint32_t mask);
RS_API uint32_t rs_timeline_enabled(const rs_timeline *tl);
/* Nonzero if records of `kind` are written: lets callers skip building
 * heavy records. */
RS_API int rs_timeline_wants(const rs_timeline *tl, rs_timeline_kind kind);

/* Append one record. Each returns RS_OK, also when the kind is disabled
 * (nothing written), or the sticky error of an earlier or this failed
 * write (RS_EIO). Never allocates. */
RS_API int rs_timeline_name(rs_timeline *tl, uint32_t space, uint64_t id, const char *name);
RS_API int rs_timeline_op(rs_timeline *tl, const rs_timeline_op_rec *r);
RS_API int rs_timeline_coll(rs_timeline *tl, const rs_timeline_coll_rec *r);
RS_API int rs_timeline_flow(rs_timeline *tl, const rs_timeline_flow_rec *r);
RS_API int rs_timeline_sample(rs_timeline *tl, const rs_timeline_sample_rec *r);
RS_API int rs_timeline_pfc(rs_timeline *tl, const rs_timeline_pfc_rec *r);
RS_API int rs_timeline_ecn(rs_timeline *tl, const rs_timeline_ecn_rec *r);
RS_API int rs_timeline_drop(rs_timeline *tl, const rs_timeline_drop_rec *r);
RS_API int rs_timeline_fault(rs_timeline *tl, const rs_timeline_fault_rec *r);

/* Records written so far (NAME included, END not). */
RS_API uint64_t rs_timeline_records(const rs_timeline *tl);

/* Finish the file and free tl (always, even on error). Writes the END
 * record, flushes, patches the header's partial flag to false unless
 * `partial` is nonzero (an interrupted run that still wants its file), and
 * renames PATH.tmp to PATH. RS_OK, or RS_EIO if any write, the flush, the
 * close or the rename failed: then PATH.tmp is deleted, PATH is untouched
 * and err names the file. tl == NULL: RS_EINVAL. */
RS_API int rs_timeline_close(rs_timeline *tl, int partial, rs_err *err);

/* -- a run split over processes (docs/parallel.md) ------------------------
 *
 * Each process writes its records into a part; one merges the parts into
 * the whole file (rs_timeline_create) in the order of their keys, which
 * the caller's keyer gives each record as it is written (for a network:
 * the time and key of the event that writes it, and its place within the
 * event), so the whole file has the bytes the serial run writes. */
#define RS_TL_KEY_WORDS 5 /* a part file's key (engine/partfile.h) */
typedef void (*rs_timeline_keyer)(void *ctx, uint64_t key[RS_TL_KEY_WORDS]);

/* A part at path (PATH.tmp until rs_timeline_close, which writes no END
 * and renames it), writing the kinds in `enabled`; every record is keyed
 * by keyer(ctx, key) as it starts. Errors as rs_timeline_create. */
RS_API int rs_timeline_create_part(const char *path, uint32_t enabled, rs_timeline_keyer keyer, void *ctx,
                                   rs_timeline **out, rs_err *err);

/* Append the records of the closed parts parts[0..n) to tl, smallest key
 * first (each part is in key order already); they count in tl's END.
 * Errors: RS_EINVAL (tl is a part), RS_ENOMEM, RS_EIO naming the part that
 * cannot be read or is cut short, or tl's write failure. */
RS_API int rs_timeline_merge(rs_timeline *tl, const char *const *parts, size_t n, rs_err *err);

/* Discard the run's file: close and delete PATH.tmp, free tl. PATH is
 * untouched. NULL is a no-op. */
RS_API void rs_timeline_abort(rs_timeline *tl);

RS_END_DECLS

#endif
