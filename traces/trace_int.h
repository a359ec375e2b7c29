/*
 * trace_int.h - what the trace modules share (not part of the traces API):
 * the trace itself (struct rs_trace), the reader's limits, and the append
 * paths the payload reader uses. trace.c builds, checks and queries a
 * trace; trace_codec.c encodes and decodes its payload; trace_file.c wraps
 * the payload in the compressed file and reads and writes it.
 */
#ifndef RS_TRACE_INT_H
#define RS_TRACE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

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

/* Hash of one op, and of a program (its length and its ops' hashes):
 * equal ops and programs hash equal. */
uint64_t rs_trace_op_hash(const rs_op *o);
uint64_t rs_trace_program_hash(const rs_op *ops, uint32_t n);

/* The reader's appends (trace.c): a string or a class added without
 * looking for an equal one, so that a file with many costs no quadratic
 * time. s is copied, ops copied, h is rs_trace_program_hash(ops, n).
 * RS_EINVAL past the limits above or for a control character in s,
 * RS_ENOMEM; err set either way. */
int rs_trace_string_push(rs_trace *t, const char *s, uint32_t *id, rs_err *err);
int rs_trace_class_push(rs_trace *t, const rs_op *ops, uint32_t n, uint64_t h, uint32_t *cls, rs_err *err);

#endif
