/*
 * tlstats.h - what `railsim report` (and later `compare`) says about a
 * timeline: time per op kind and per parallelism dimension, per-rank
 * compute against exposed communication, collective times per kind,
 * flow completion times, sampled link utilisation, and PFC/ECN/CNP/drop/
 * fault totals. One streaming pass over the file (analysis/timeline_read).
 *
 * Memory: per op record 24 bytes (its rank, span and whether it is
 * compute) to compute the per-rank overlap, 8 bytes per flow (for FCT
 * percentiles), and a few words per distinct rank, port, op kind and
 * communicator. A 10-million-op timeline needs about 240 MB; everything
 * else is bounded by the number of distinct names.
 *
 * Definitions (docs/analysis.md):
 *   compute_ps   time covered by at least one compute op of the rank
 *   comm_ps      time covered by at least one non-compute op (collective,
 *                send, recv, ...) of the rank
 *   exposed_ps   time covered by communication and not by compute: the
 *                communication the rank waited for
 *   dimension    the communicator's name up to its first '[', ':', '.',
 *                '/', '#', ' ', '-', '_' or digit ("dp[3]" -> "dp",
 *                "tp0" -> "tp", "rail:0" -> "rail"); "comm" for an
 *                unnamed communicator, "-" for ops without one (compute)
 */
#ifndef RS_TLSTATS_H
#define RS_TLSTATS_H

#include <stddef.h>
#include <stdint.h>

#include "timeline_read.h"

/* Time spent in one op kind on one dimension (or on all: dim == NULL). */
typedef struct rs_tlstats_op {
    const char *op;
    const char *dim;      /* NULL in by_op */
    uint64_t count, total_ps, bytes;
} rs_tlstats_op;

typedef struct rs_tlstats_rank {
    uint32_t rank;
    const char *name;     /* from a name record, or "" */
    uint64_t ops;
    uint64_t first_ps, last_ps;   /* earliest op start, latest op end */
    uint64_t compute_ps, comm_ps, exposed_ps;
} rs_tlstats_rank;

typedef struct rs_tlstats_coll {
    const char *op, *algo;
    uint64_t count, bytes;
    uint64_t total_ps, min_ps, max_ps;
} rs_tlstats_coll;

typedef struct rs_tlstats_port {
    uint32_t port;
    const char *name;     /* from a name record, or "" */
    uint64_t samples;
    double mean_util, max_util;
    uint64_t max_queue_bytes, tx_bytes; /* tx_bytes: the largest sampled (cumulative) */
} rs_tlstats_port;

/* Everything is owned by the rs_tlstats and freed by rs_tlstats_destroy;
 * strings stay valid until then. Arrays are sorted as noted. */
typedef struct rs_tlstats {
    int complete, partial;        /* header and end record */
    uint64_t seed;
    const char *railsim_version;
    uint64_t records[11];         /* by kind (index = kind number), name records included */
    uint64_t skipped;             /* records of unknown kinds */

    rs_tlstats_op *by_op;         /* by total_ps, largest first (ties: op name) */
    size_t n_by_op;
    rs_tlstats_op *by_dim;        /* (dim, op), by total_ps, largest first */
    size_t n_by_dim;
    rs_tlstats_rank *ranks;       /* by rank id */
    size_t n_ranks;
    uint64_t ops_first_ps, ops_last_ps; /* over all ops (0, 0 without ops) */
    rs_tlstats_coll *colls;       /* by (op, algo) name */
    size_t n_colls;

    uint64_t flows, flow_bytes;
    uint64_t fct_min_ps, fct_p50_ps, fct_p99_ps, fct_max_ps; /* nearest rank; 0 without flows */
    double fct_mean_ps;

    rs_tlstats_port *ports;       /* sampled ports, by mean_util largest first (ties: port id) */
    size_t n_ports;

    uint64_t pfc_pauses, pfc_resumes;
    uint64_t ecn_marked, cnp_sent;
    uint64_t drop_packets, drop_bytes;
    uint64_t faults;
} rs_tlstats;

/* Read the timeline at path and compute the statistics. On success *out
 * owns the result (free with rs_tlstats_destroy). Errors: the reader's
 * (RS_AN_EIO, RS_AN_EFORMAT naming the file, record and offset) and
 * RS_AN_ENOMEM; *out is then NULL. A partial file is fine (partial = 1). */
int rs_tlstats_compute(const char *path, rs_tlstats **out, rs_an_err *err);

void rs_tlstats_destroy(rs_tlstats *s); /* NULL is a no-op */

/* Length of the dimension prefix of a communicator name (see above); 0
 * when the name starts with a separator or digit. */
size_t rs_tlstats_dim_len(const char *comm_name);

#endif
