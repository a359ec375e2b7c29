/*
 * partfile.h - keyed part files: what each process of a split run writes
 * of one output (a pcapng's blocks, a timeline's records), every record
 * after the key that places it in the serial run's file, and the merge
 * of the parts back into that order (docs/parallel.md).
 *
 * A record is a header, RS_PART_KEY_WORDS key words and the length of
 * what follows, each 8 bytes little-endian, then that many bytes. Keys
 * compare word by word; each part is in key order already, so the merge
 * scans the parts' heads.
 */
#ifndef RS_PARTFILE_H
#define RS_PARTFILE_H

#include "base.h"

#include <stddef.h>
#include <stdint.h>

RS_BEGIN_DECLS

#define RS_PART_KEY_WORDS 5
#define RS_PART_HDR (8 * RS_PART_KEY_WORDS + 8)

/* The header of a record of len bytes with key key[0..RS_PART_KEY_WORDS). */
void rs_part_hdr_put(unsigned char *h, const uint64_t *key, uint64_t len);

/* Records of the closed parts paths[0..n), smallest key first, each to
 * emit(ctx, bytes, len), which returns RS_OK or its error (with err set).
 * A record longer than max_len, or cut short, is RS_EIO naming its part
 * as "<what> part PATH"; so is a part that cannot be opened; RS_ENOMEM. */
int rs_part_merge(const char *const *paths, size_t n, size_t max_len, const char *what,
                         int (*emit)(void *ctx, const void *rec, size_t len), void *ctx, rs_err *err);

RS_END_DECLS

#endif
