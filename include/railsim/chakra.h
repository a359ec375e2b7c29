/*
 * chakra.h - MLCommons Chakra execution traces (ET) in and out of railsim
 * traces (docs/chakra.md). The only module that sees protobuf-c: the
 * schema is traces/chakra/et_def.proto, compiled by protoc-c at build time.
 *
 * A Chakra ET is one file per rank, "<name>.<rank>.et": a stream of
 * messages, each preceded by its length as a varint (Chakra's protolib
 * encodeMessage), first one GlobalMetadata, then Node messages forming a
 * DAG through ctrl_deps and data_deps (node ids of the same file).
 *
 * Import maps every rank's DAG onto a railsim program (program.h):
 * compute and memory nodes become COMPUTE ops on stream 0, collectives COLL
 * ops and sends/receives SEND/RECV ops on communication streams chosen so
 * that stream order adds no dependency the DAG lacks (while at most 15
 * independent chains of communication are open), dependencies are reduced
 * to the ones stream order and other deps do not already imply, and nodes
 * with nothing to simulate (metadata, zero-time compute) are contracted
 * away, their dependencies passed on. Everything that could make replay
 * hang or misbehave is checked first: missing ranks, duplicate ids,
 * dependencies on absent nodes, cycles, process groups, sends without a
 * matching receive, collectives that members do not all issue.
 */
#ifndef RS_CHAKRA_H
#define RS_CHAKRA_H

#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "trace.h"

RS_BEGIN_DECLS

/* One rank's ET file in memory (borrowed for the call). */
typedef struct rs_chakra_file {
    const char *name;   /* for messages: the path */
    uint32_t rank;      /* the rank the file holds */
    const uint8_t *buf;
    size_t len;
} rs_chakra_file;

/* How nodes without duration_micros are timed: num_ops FLOPs at peak x
 * efficiency, tensor_size bytes at mem_bw, the longer of the two (a
 * roofline, as ASTRA-sim's compute model). */
typedef struct rs_chakra_opts {
    double peak_flops;  /* FLOP/s, > 0 */
    double efficiency;  /* (0, 1] */
    double mem_bw;      /* bytes/s, > 0 */
    const char *comm_groups; /* ASTRA-sim's comm-group JSON ({"1": [0, 1], ...}) or NULL */
} rs_chakra_opts;

/* H100 (plan.h's preset) at the plans' default efficiency 0.5, no comm-group file. */
RS_API void rs_chakra_opts_default(rs_chakra_opts *o);

/* What an import met and did (all counts over all ranks). */
#define RS_CHAKRA_NTYPES 11 /* NodeType values 0 .. 10 */
typedef struct rs_chakra_stats {
    uint32_t nranks;
    uint64_t nodes;
    uint64_t by_type[RS_CHAKRA_NTYPES]; /* nodes per Chakra NodeType */
    uint64_t ops;          /* railsim ops written */
    uint64_t contracted;   /* nodes with nothing to simulate, dependencies passed on */
    uint64_t approximated; /* Reduce, Gather, Scatter, Broadcast, Barrier (docs/chakra.md) */
    uint64_t joins;        /* zero-time compute ops joining more than 2 dependencies */
    uint64_t serialized;   /* communication ops that had to share a stream with an
                              op they do not depend on (more than 15 open chains) */
} rs_chakra_stats;

/* Import n files (ranks 0 .. n-1, each exactly once, in any order) into a
 * finished trace, *out owned by the caller (rs_trace_destroy). st may be
 * NULL. RS_EFORMAT with err naming the file, the rank and the byte offset
 * (of the message, or the node) and what was expected; RS_EINVAL for a
 * missing or duplicate rank; RS_ENOMEM. */
RS_API int rs_chakra_import(const rs_chakra_file *files, uint32_t n, const rs_chakra_opts *o, rs_trace **out,
                     rs_chakra_stats *st, rs_err *err);

/* The same from paths: each a directory (every "*.<rank>.et" in it) or a
 * file named "<name>.<rank>.et". RS_EIO for an unreadable path. */
RS_API int rs_chakra_import_paths(const char *const *paths, uint32_t npaths, const rs_chakra_opts *o,
                           rs_trace **out, rs_chakra_stats *st, rs_err *err);

/* Rank's program as one ET file in memory (*buf malloc'ed, caller frees). */
RS_API int rs_chakra_export_rank(const rs_trace *t, uint32_t rank, uint8_t **buf, size_t *len, rs_err *err);

/* Every rank to dir/<name>.<rank>.et, and the communicators as ASTRA-sim's
 * comm-group file dir/<name>.comm_groups.json ({"<id + 1>": [ranks], ...}:
 * pg_name is the communicator id + 1). dir is created if absent; each file
 * is written to .tmp and renamed. RS_EIO naming the file. */
RS_API int rs_chakra_export(const rs_trace *t, const char *dir, const char *name, rs_err *err);

RS_END_DECLS

#endif
