/*
 * program.h - the op representation of one rank's training iteration: the
 * contract between the trace generator and codec (trace_codec.c, gen.c) and the
 * replay driver (replay.c). Plain data, no functions beyond names.
 *
 * A trace (trace.h) holds one program per rank CLASS; every rank of a class
 * runs the same array of rs_op. Ops never name a communicator or a peer
 * rank directly: they name a per-rank SLOT (op->comm), which the rank's
 * slot table resolves (rs_trace_op_comm / rs_trace_op_peer in trace.h).
 * That is what lets the thousands of ranks of one pipeline stage share one
 * program although each sits in a different TP, DP, ... group.
 *
 * Execution model (what replay must implement, and what the generator
 * assumes when it writes dependencies):
 *
 *  - A program is the op array of ONE training iteration, in issue order.
 *    Index i of the array is the op's id within the program.
 *  - Streams: op->stream names a queue. The ops of one stream run in
 *    program order, one at a time: an op of stream s may start only when the
 *    previous op of stream s (lower index) has completed. Stream 0 is the
 *    compute stream (COMPUTE ops only, and only there); streams 1 ..
 *    RS_STREAMS_MAX-1 are communication streams (COLL, SEND, RECV only).
 *  - Dependencies: op->dep[0], op->dep[1] are indices of EARLIER ops of the
 *    same program (dep < i) that must have completed before the op starts;
 *    RS_NONE when unused. Ordering across streams is expressed only through
 *    deps. An op starts as soon as both its stream predecessor and its deps
 *    have completed (and, for a collective or send/recv, runs until the
 *    network work it stands for is done: see below).
 *  - The iteration of a rank ends when all its ops have completed; the
 *    training iteration ends when every rank's has.
 *  - RS_OP_COMPUTE: occupies the GPU for op->duration picoseconds (longer
 *    inside a straggler fault's window: rs_net_compute_end in fault.h).
 *  - RS_OP_COLL: collective op->coll (rs_coll_op from coll.h: AllGather,
 *    ReduceScatter, AllReduce, AllToAll; never SENDRECV) over the
 *    communicator rs_trace_op_comm(t, rank, op), with op->bytes the size
 *    nccl-tests reports (AllReduce: the buffer; AllGather: the output;
 *    ReduceScatter: the input; AllToAll: each rank's buffer). Every rank of
 *    a communicator issues the same collectives on it, in the same order,
 *    with the same coll and bytes: the k-th collective a rank issues on a
 *    communicator is the same collective as every other member's k-th.
 *    It completes, for a rank, when the collective has finished (replay may
 *    treat it as finished for all members at once). Match collectives by
 *    that per-communicator issue index, not by start time: one
 *    communicator may carry ops of several streams (gradient ReduceScatter
 *    on one, ZeRO parameter AllGather on another, as FSDP uses separate
 *    NCCL communicators per stream), and those may be in flight at once.
 *  - RS_OP_SEND / RS_OP_RECV: a point-to-point message of op->bytes between
 *    this rank and the peer rank rs_trace_op_peer(t, rank, op). The k-th
 *    SEND from rank a to rank b matches the k-th RECV at b from a (same
 *    bytes). A SEND completes when its message has been delivered; a RECV
 *    when the matching message has arrived (a message may arrive before its
 *    RECV starts: it is then buffered and the RECV completes at once).
 *    The generator keeps each direction of each pipeline edge on its own
 *    stream, so blocking sends never deadlock.
 *
 * The generator's stream numbering (RS_STREAM_* below) is a convention for
 * reading dumps; replay must treat streams generically (any value below
 * RS_STREAMS_MAX), since other producers may number them differently.
 */
#ifndef RS_PROGRAM_H
#define RS_PROGRAM_H

#include <stdint.h>

#include "base.h"

RS_BEGIN_DECLS

/* Unused dependency, slot or peer. */
#define RS_NONE UINT32_MAX

typedef enum { RS_OP_COMPUTE = 0, RS_OP_COLL, RS_OP_SEND, RS_OP_RECV } rs_op_kind;
#define RS_OP_NKINDS 4

/* The parallelism dimension a communication serves (for accounting: the
 * summary's communication time by dimension). Compute ops carry NONE. DP
 * covers gradient reduction and ZeRO parameter gathering, whichever group
 * carries it (data-parallel, or expert-data-parallel for MoE experts). */
typedef enum { RS_DIM_NONE = 0, RS_DIM_TP, RS_DIM_PP, RS_DIM_DP, RS_DIM_CP, RS_DIM_EP } rs_dim;
#define RS_DIM_COUNT 6

/* Streams: any value below RS_STREAMS_MAX is valid. The generator uses: */
#define RS_STREAMS_MAX 16u
enum {
    RS_STREAM_COMPUTE = 0,  /* the GPU's compute stream (the only one COMPUTE ops use) */
    RS_STREAM_TP = 1,       /* TP AllReduce (on the critical path) */
    RS_STREAM_CP = 2,       /* context-parallel K/V AllGather and dK/dV ReduceScatter */
    RS_STREAM_EP = 3,       /* MoE all-to-all dispatch and combine */
    RS_STREAM_DP_REDUCE = 4,/* gradient AllReduce / ReduceScatter (buckets, ZeRO) */
    RS_STREAM_DP_GATHER = 5,/* ZeRO parameter AllGather (FSDP prefetch) */
    RS_STREAM_PP_SEND_NEXT = 6, /* activations to the next stage */
    RS_STREAM_PP_RECV_PREV = 7, /* activations from the previous stage */
    RS_STREAM_PP_SEND_PREV = 8, /* gradients to the previous stage */
    RS_STREAM_PP_RECV_NEXT = 9  /* gradients from the next stage */
};

/*
 * One op: 40 bytes (4 bytes of padding after dep[]; compare ops field by
 * field, never with memcmp).
 *
 *   kind      rs_op_kind.
 *   dim       rs_dim: which parallelism dimension this communication
 *             serves; RS_DIM_NONE for COMPUTE.
 *   coll      RS_OP_COLL: the rs_coll_op (RS_COLL_ALLGATHER ..
 *             RS_COLL_ALLTOALL); 0 for other kinds.
 *   stream    0 = compute, 1 .. RS_STREAMS_MAX-1 communication (see above).
 *   comm      COLL, SEND, RECV: the slot (index below rs_trace_nslots) of
 *             the rank's slot table holding the communicator id (COLL) or
 *             the peer rank (SEND/RECV); resolve it with rs_trace_op_comm /
 *             rs_trace_op_peer. RS_NONE for COMPUTE.
 *   label     index into the trace's string table (rs_trace_string):
 *             "fwd attn", "tp allreduce", "dp grad bucket". Labels name the
 *             op's role, never a layer or micro-batch number, so repeated
 *             layers encode as loops.
 *   dep[2]    indices of earlier ops of the same program that must have
 *             completed first, or RS_NONE. dep[0] is filled before dep[1].
 *   bytes     COLL: the nccl-tests size (see above); SEND/RECV: the message
 *             bytes; COMPUTE: the HBM bytes its memory-bound (streaming)
 *             kernels move, which NCCL's memory traffic beside it slows
 *             (docs/compute.md, "Contention"); 0: none known.
 *   duration  COMPUTE: picoseconds of GPU time; 0 for other kinds.
 *
 * Every trace the codec accepts or the builder finishes satisfies these
 * rules (trace.c checks them), so replay need not re-check them.
 */
typedef struct rs_op {
    uint8_t kind;
    uint8_t dim;
    uint8_t coll;
    uint8_t stream;
    uint32_t comm;
    uint32_t label;
    uint32_t dep[2];
    uint64_t bytes;
    rs_time duration;
} rs_op;

/* Lower-case names: "compute", "coll", "send", "recv"; "none", "tp", "pp",
 * "dp", "cp", "ep". "?" for a bad value. */
RS_API const char *rs_op_kind_name(rs_op_kind k);
RS_API const char *rs_dim_name(rs_dim d);

/* Field-by-field equality (padding ignored). */
RS_API int rs_op_equal(const rs_op *a, const rs_op *b);

RS_END_DECLS

#endif
