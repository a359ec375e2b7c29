/*
 * output.h - output files that never look complete when they are not:
 * write under DIR/.NAME.tmp, then rename over DIR/NAME.
 */
#ifndef RS_OUTPUT_H
#define RS_OUTPUT_H

#include <stddef.h>

#include "base.h"

RS_BEGIN_DECLS

/* Create directory `dir` and its parents if missing. RS_EIO with err
 * naming the directory. */
RS_API int rs_output_mkdir(const char *dir, rs_err *err);

/* Write len bytes to dir/name atomically (temporary file, fsync-free
 * rename). RS_EIO with err naming the file on any failure; the temporary
 * is removed then. */
RS_API int rs_output_write(const char *dir, const char *name, const char *data, size_t len, rs_err *err);

/* Files that belong together (a JSON result and its Markdown table): all
 * n written under temporary names first, then renamed, so a failure
 * leaves none of them rather than some. At most 8. RS_EIO with err naming
 * the file. */
RS_API int rs_output_write_set(const char *dir, const char *const *names, const char *const *data, const size_t *lens,
                        size_t n, rs_err *err);

RS_END_DECLS

#endif
