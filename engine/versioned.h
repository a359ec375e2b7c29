/*
 * versioned.h - structs that cross the library's boundary and may grow
 * (rs_net_msg, rs_coll_req, rs_net_config, rs_run_opts, rs_result_data,
 * ...) start with `uint32_t size`: the sizeof of the struct where the
 * caller was compiled. The library reads and writes only that many bytes,
 * so a caller compiled against an older header keeps working with a newer
 * library: fields it does not know keep their defaults going in, and are
 * not written coming out (docs/library.md, "Versioned structs").
 */
#ifndef RS_VERSIONED_H
#define RS_VERSIONED_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base.h"

/* The size of a struct's first version: up to and including `last`,
 * its last field then. */
#define RS_SIZE_V1(type, last) (offsetof(type, last) + sizeof(((type *)0)->last))

/* The caller's *src (its first src_size bytes) over *dst, which holds the
 * library's defaults (dst_size bytes); dst's size field is left as the
 * library's. RS_EINVAL for NULL or a size below min_size (the first
 * version's: the caller did not initialise it). */
static inline int rs_versioned_take(void *dst, size_t dst_size, const void *src, size_t min_size)
{
    if (!src)
        return RS_EINVAL;
    uint32_t src_size;
    memcpy(&src_size, src, sizeof src_size);
    if (src_size < min_size)
        return RS_EINVAL;
    uint32_t own;
    memcpy(&own, dst, sizeof own);
    memcpy(dst, src, src_size < dst_size ? src_size : dst_size);
    memcpy(dst, &own, sizeof own);
    return RS_OK;
}

/* The library's *src (src_size bytes: its defaults, or its result) into
 * the caller's *dst, `size` bytes long (the sizeof where the caller was
 * compiled), and dst's size field set to size: the caller's share of a
 * struct that may have grown since. */
static inline void rs_versioned_give(void *dst, size_t size, const void *src, size_t src_size)
{
    memcpy(dst, src, size < src_size ? size : src_size);
    uint32_t own = (uint32_t)size;
    memcpy(dst, &own, sizeof own);
}

#endif
