/*
 * report.h - `railsim report DIR`: a human summary of one run directory.
 *
 * Reads DIR/summary.json (docs/summary-format.md) and, when present,
 * DIR/timeline.msgpack (docs/timeline-format.md, through tlstats), and
 * prints: status, topology, flows and FCT, the collective, packet/PFC/
 * ECN/CNP/drop totals, the busiest ports from the summary (by tx_bytes and
 * by max queue), and from the timeline: time by op kind and by
 * parallelism dimension, per-rank compute against exposed communication,
 * collective times by op, flow completion times, sampled link
 * utilisation and event totals. docs/analysis.md describes every line.
 *
 * Everything is read and checked before anything is printed, so a bad
 * input prints only the error.
 */
#ifndef RS_REPORT_H
#define RS_REPORT_H

#include <stdio.h>

#include "timeline_read.h"

/* Rows in the "busiest" tables. */
#define RS_REPORT_TOP 10
/* Per-rank table up to this many ranks; above it, the spread (min, mean,
 * max with the rank ids). */
#define RS_REPORT_RANK_ROWS 16

/* Print the report of run directory dir to out. Errors (nothing printed):
 * RS_AN_EIO when DIR/summary.json cannot be opened or read (err names the
 * file), RS_AN_EFORMAT when it is not JSON or not a railsim summary, the
 * timeline reader's errors for a present but damaged timeline,
 * RS_AN_ENOMEM. */
int rs_report_print(const char *dir, FILE *out, rs_an_err *err);

#endif
