/*
 * export_int.h - what the two exporters share (not part of the analysis
 * API): atomic output files and text escaping.
 */
#ifndef RS_EXPORT_INT_H
#define RS_EXPORT_INT_H

#include <stdint.h>
#include <stdio.h>

#include "timeline_read.h"

/* An output written as path.tmp and renamed to path by rs_xfile_commit. */
typedef struct rs_xfile {
    FILE *f;
    char path[4096], tmp[4100];
} rs_xfile;

/* Create path.tmp. RS_AN_EOUTPUT with err naming the file. */
int rs_xfile_open(rs_xfile *x, const char *path, rs_an_err *err);
/* Flush, close and rename over path. RS_AN_EOUTPUT (tmp removed) on any
 * write error seen since open. */
int rs_xfile_commit(rs_xfile *x, rs_an_err *err);
/* Close and remove path.tmp; no-op if not open. */
void rs_xfile_abort(rs_xfile *x);

/* Write s as a JSON string literal (quotes included). Invalid UTF-8 bytes
 * become U+FFFD, control characters \u00XX. */
void rs_json_str(FILE *f, const char *s);
/* Write s as one CSV field (RFC 4180: quoted when it holds a comma, a
 * quote, CR or LF; quotes doubled). */
void rs_csv_str(FILE *f, const char *s);
/* Write ps as microseconds with exactly 6 decimals ("12.000345"): exact
 * text, rounding happens only in the reader's double. */
void rs_ps_as_us(FILE *f, uint64_t ps);


#endif
