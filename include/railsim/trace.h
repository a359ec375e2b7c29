/*
 * trace.h - a collective trace in memory, and its compressed file format
 * (docs/trace-format.md). zlib is used only by trace_file.c.
 *
 * A trace is:
 *   - ranks 0..nranks-1, each placed on a GPU (rank -> GPU id, distinct,
 *     below rs_trace_ngpus);
 *   - communicators: id -> ordered list of distinct ranks, tagged with the
 *     parallelism dimension they serve. Rank order is the NCCL rank order
 *     (ring order) of the communicator;
 *   - rank classes: one program (rs_op array of one training iteration,
 *     program.h) per class; each rank belongs to one class and runs its
 *     program;
 *   - per rank, a slot table of rs_trace_nslots entries: op->comm of the
 *     rank's program indexes it, giving a communicator id (COLL ops) or a
 *     peer rank (SEND/RECV ops);
 *   - a string table (op labels, the plan's name);
 *   - iteration facts (tokens, model FLOPs, GPU peak) for MFU.
 *
 * Lifecycle: rs_trace_create, then the rs_trace_add_* / rs_trace_set_*
 * builders, then rs_trace_finish, which validates everything. Only a
 * finished trace may be queried or written; rs_trace_read and
 * rs_trace_decode return finished traces. A finished trace is read-only and
 * may be shared by threads.
 *
 * Validity (checked by rs_trace_finish and thus by the reader, so users of
 * a finished trace need not re-check): every program satisfies program.h's
 * rules (kinds, streams, coll ops, labels, deps earlier than the op, slots
 * below nslots, no slot used by both COLL and SEND/RECV ops of a class);
 * every rank has a class and a GPU, GPUs distinct and < ngpus; for every
 * rank and every slot its program uses, a COLL slot holds a communicator
 * that contains the rank, a SEND/RECV slot another rank. Not checked: that
 * members of a communicator issue matching collectives, or that sends and
 * receives pair up; replay must detect a collective or message that never
 * completes.
 *
 * Memory: programs are stored expanded, once per class (40 bytes per op);
 * slot tables cost 4 * nslots bytes per rank, communicators 4 bytes per
 * member. gpt-1t on 16,384 GPUs: docs/trace-format.md gives the figures.
 */
#ifndef RS_TRACE_H
#define RS_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "program.h"

RS_BEGIN_DECLS

typedef struct rs_trace rs_trace;

/* Facts about one training iteration (plain value type). */
typedef struct rs_trace_iter {
    uint64_t tokens;        /* tokens per iteration: global batch x sequence */
    double model_flops;     /* model FLOPs per iteration, all GPUs (forward + backward,
                               no recomputation): the MFU numerator */
    double peak_flops;      /* one GPU's peak dense FLOP/s (vendor figure) */
    double efficiency;      /* fraction of peak the compute durations assume */
    uint32_t micro_batches; /* per pipeline per iteration */
    uint32_t layers;        /* transformer layers of the model */
    uint32_t tp, pp, dp, cp, ep, zero; /* the plan's parallelism (0 if unknown) */
} rs_trace_iter;

/* Sizes seen by the codec (filled by rs_trace_write/read/encode/decode). */
typedef struct rs_trace_file_stats {
    uint64_t file_bytes;    /* whole file: header + zlib stream */
    uint64_t payload_bytes; /* the uncompressed payload */
    uint64_t expanded_bytes;/* what flat per-rank programs would take:
                               sum over ranks of ops x sizeof(rs_op) */
} rs_trace_file_stats;

/* ---- building ------------------------------------------------------------ */

/* An empty trace of nranks ranks (1 .. RS_TRACE_MAX_RANKS), each with a slot
 * table of nslots entries (0 .. RS_TRACE_MAX_SLOTS) initialised to RS_NONE.
 * *out is owned by the caller: rs_trace_destroy. RS_EINVAL, RS_ENOMEM. */
#define RS_TRACE_MAX_RANKS (1u << 24)
#define RS_TRACE_MAX_SLOTS 64u
RS_API int rs_trace_create(uint32_t nranks, uint32_t nslots, rs_trace **out, rs_err *err);
RS_API void rs_trace_destroy(rs_trace *t); /* NULL is a no-op */

/* Intern string s (copied; at most 255 bytes, no control characters) and
 * return its id in *id; the same text gives the same id. */
RS_API int rs_trace_add_string(rs_trace *t, const char *s, uint32_t *id, rs_err *err);

/* Add a communicator of n (>= 1) distinct ranks, in rank order (copied),
 * serving dimension dim; *id is its index (ids are 0, 1, 2, ...). */
RS_API int rs_trace_add_comm(rs_trace *t, rs_dim dim, const uint32_t *ranks, uint32_t n,
                      uint32_t *id, rs_err *err);

/* Add a program of n ops (copied; n >= 0) and return its class in *cls. A
 * program equal, op by op, to an earlier class's returns that class: ranks
 * with identical programs share one. Programs are checked by
 * rs_trace_finish, not here. */
RS_API int rs_trace_add_class(rs_trace *t, const rs_op *ops, uint32_t n, uint32_t *cls, rs_err *err);

/* Place rank on GPU gpu, in class cls, with slot table slots[nslots]
 * (copied; may be NULL when nslots is 0). */
RS_API int rs_trace_set_rank(rs_trace *t, uint32_t rank, uint32_t gpu, uint32_t cls,
                      const uint32_t *slots, rs_err *err);

/* Iteration facts and the GPU count (every rank's GPU must be below it).
 * name is the plan's name (interned). */
RS_API int rs_trace_set_info(rs_trace *t, const rs_trace_iter *it, uint32_t ngpus, const char *name,
                      rs_err *err);

/* Check everything (see the header comment); after RS_OK the trace is
 * read-only. RS_EINVAL with err naming the rank, class, op or slot. */
RS_API int rs_trace_finish(rs_trace *t, rs_err *err);

/* ---- queries (finished traces only) --------------------------------------- */

RS_API uint32_t rs_trace_nranks(const rs_trace *t);
RS_API uint32_t rs_trace_ngpus(const rs_trace *t);
RS_API uint32_t rs_trace_nclasses(const rs_trace *t);
RS_API uint32_t rs_trace_ncomms(const rs_trace *t);
RS_API uint32_t rs_trace_nslots(const rs_trace *t);
RS_API uint32_t rs_trace_nstrings(const rs_trace *t);
RS_API const char *rs_trace_name(const rs_trace *t);
RS_API const rs_trace_iter *rs_trace_iteration(const rs_trace *t);

/* GPU and class of rank (< nranks; RS_ASSERT). */
RS_API uint32_t rs_trace_rank_gpu(const rs_trace *t, uint32_t rank);
RS_API uint32_t rs_trace_rank_class(const rs_trace *t, uint32_t rank);
/* The rank's slot table (nslots entries, RS_NONE where unused); borrowed. */
RS_API const uint32_t *rs_trace_rank_slots(const rs_trace *t, uint32_t rank);

/* The expanded program of one training iteration of rank (< nranks), *nops
 * ops; shared by all ranks of its class, borrowed until rs_trace_destroy. */
RS_API const rs_op *rs_trace_program(const rs_trace *t, uint32_t rank, uint32_t *nops);
RS_API const rs_op *rs_trace_class_program(const rs_trace *t, uint32_t cls, uint32_t *nops);
/* Ranks in class cls. */
RS_API uint32_t rs_trace_class_ranks(const rs_trace *t, uint32_t cls);

/* For an op of rank's program: the communicator id (COLL) or peer rank
 * (SEND/RECV) its slot holds. Valid in a finished trace by construction. */
RS_API uint32_t rs_trace_slot(const rs_trace *t, uint32_t rank, uint32_t slot);
RS_API uint32_t rs_trace_op_comm(const rs_trace *t, uint32_t rank, const rs_op *op);
RS_API uint32_t rs_trace_op_peer(const rs_trace *t, uint32_t rank, const rs_op *op);

/* Communicator comm (< ncomms): its ranks in order (borrowed), and dim. */
RS_API const uint32_t *rs_trace_comm_ranks(const rs_trace *t, uint32_t comm, uint32_t *n);
RS_API rs_dim rs_trace_comm_dim(const rs_trace *t, uint32_t comm);

/* String id (< nstrings); "?" for an id out of range. */
RS_API const char *rs_trace_string(const rs_trace *t, uint32_t id);

/* ---- the file -------------------------------------------------------------- */

/* Write finished trace t to path atomically (path.tmp, then rename); st may
 * be NULL. RS_EIO with err naming the file; RS_ENOMEM. */
RS_API int rs_trace_write(const rs_trace *t, const char *path, rs_trace_file_stats *st, rs_err *err);

/* Read and validate a trace file. *out owned by the caller
 * (rs_trace_destroy). RS_EIO (cannot open or read), RS_EFORMAT (wrong
 * magic, wrong version, truncated, corrupt, inconsistent: one sentence
 * naming the file and what was expected), RS_ENOMEM. st may be NULL. */
RS_API int rs_trace_read(const char *path, rs_trace **out, rs_trace_file_stats *st, rs_err *err);

/* The same on memory: the whole file's bytes (*buf malloc'ed, caller
 * frees) and back; name is used in messages. */
RS_API int rs_trace_encode(const rs_trace *t, uint8_t **buf, size_t *len, rs_trace_file_stats *st,
                    rs_err *err);
RS_API int rs_trace_decode(const uint8_t *buf, size_t len, const char *name, rs_trace **out,
                    rs_trace_file_stats *st, rs_err *err);

/* The uncompressed payload alone, for tests and fuzzing of the parser
 * behind the zlib and CRC layers (*buf malloc'ed, caller frees). */
RS_API int rs_trace_payload_encode(const rs_trace *t, uint8_t **buf, size_t *len, rs_err *err);
RS_API int rs_trace_payload_decode(const uint8_t *buf, size_t len, const char *name, rs_trace **out,
                            rs_err *err);

RS_END_DECLS

#endif
