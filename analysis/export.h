/*
 * export.h - timeline exports for other tools (docs/analysis.md):
 *
 *   rs_export_perfetto  Chrome trace-event JSON ({"traceEvents": [...]})
 *                       that ui.perfetto.dev and chrome://tracing open: a
 *                       process per HB domain, a thread per rank, "X" spans
 *                       for ops, collectives on per-communicator tracks,
 *                       "C" counters for the busiest links, instant events
 *                       for PFC frames, drops and faults.
 *   rs_export_csv       one CSV file per record kind, with a header row,
 *                       for notebooks.
 *
 * Both stream the timeline (analysis/timeline_read) and write atomically:
 * every output file is written as NAME.tmp and renamed over NAME only when
 * complete, so a failed export never leaves a file that looks finished.
 *
 * Memory: the CSV export holds only the name records. The Perfetto export
 * holds the op and coll records (48 bytes each) because a rank's
 * overlapping spans must be sorted by start to be split into properly
 * nested tracks; samples, PFC, drops and faults are streamed (the file is
 * read twice: the busiest links are known only at its end).
 */
#ifndef RS_EXPORT_H
#define RS_EXPORT_H

#include <stdint.h>

#include "timeline_read.h"

/* Error code of the exports for an output that cannot be created,
 * written or renamed (an analysis-only code, below the engine's RS_E*
 * range): the CLI tells it apart from a bad input. */
#define RS_AN_EOUTPUT (-16)

/* Most tracks one rank (or communicator) is split into when its spans
 * overlap without nesting; spans beyond that share the last track. */
#define RS_EXPORT_MAX_LANES 8

typedef struct rs_perfetto_opts {
    uint32_t links;   /* busiest links (by final sampled tx_bytes) charted as counters; default 8 */
} rs_perfetto_opts;

void rs_perfetto_opts_default(rs_perfetto_opts *o);

/* What an export wrote (for messages and tests). */
typedef struct rs_export_counts {
    uint64_t records;     /* timeline records read (name records included) */
    uint64_t ops;         /* Perfetto: "X" op spans (one per op record); CSV: op rows */
    uint64_t colls;       /* Perfetto: "X" collective spans; CSV: coll rows */
    uint64_t counters;    /* Perfetto: "C" events (two per sample of a charted link) */
    uint64_t instants;    /* Perfetto: "i" events (PFC, drops, faults) */
    uint32_t processes;   /* Perfetto: processes named (HB domains + collectives + network) */
    uint32_t threads;     /* Perfetto: threads named */
    uint64_t rows[11];    /* CSV: data rows per record kind (index = kind number) */
} rs_export_counts;

/* Convert timeline tl_path to Chrome trace-event JSON at out_path. opts
 * may be NULL (defaults); counts may be NULL. Errors: the reader's
 * (RS_AN_EIO, RS_AN_EFORMAT naming the timeline), RS_AN_ENOMEM,
 * RS_AN_EOUTPUT (err names out_path; nothing is left at out_path or
 * out_path.tmp). */
int rs_export_perfetto(const char *tl_path, const char *out_path, const rs_perfetto_opts *opts,
                       rs_export_counts *counts, rs_an_err *err);

/* Write DIR/header.csv and DIR/<kind>.csv for every record kind (name,
 * op, coll, flow, sample, pfc, ecn, drop, fault; a kind with no records
 * gets its header row only). DIR is created if missing. Errors as for
 * rs_export_perfetto; on an input or write error no .csv file is renamed
 * into DIR (only a failing rename itself can leave the files renamed
 * before it). */
int rs_export_csv(const char *tl_path, const char *dir, rs_export_counts *counts, rs_an_err *err);

#endif
