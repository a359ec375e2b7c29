/*
 * array.h - the one growth rule of every array railsim keeps: make room
 * for `need` elements of elem bytes in the array *arr (a pointer to the
 * array's pointer) of capacity *cap. The capacity doubles, from `first`
 * when it is 0, until it holds need, so arrays grow amortized, never
 * element by element. RS_ENOMEM (also for a capacity past SIZE_MAX /
 * elem) leaves array and capacity as they were. rs_array_reserve32 is the
 * same for 32-bit capacities (at most UINT32_MAX).
 *
 * Header-only (inline), so the layers that never link the simulator
 * (analysis/) grow their arrays by the same rule: the rs_util target.
 */
#ifndef RS_ARRAY_H
#define RS_ARRAY_H

#include <stdint.h>
#include <stdlib.h>

#include "base.h"

static inline int rs_array_reserve(void *arr, size_t *cap, size_t need, size_t elem, size_t first)
{
    if (need <= *cap)
        return RS_OK;
    size_t c = *cap ? *cap : (first ? first : 1);
    while (c < need) {
        if (c > SIZE_MAX / 2)
            return RS_ENOMEM;
        c *= 2;
    }
    if (elem && c > SIZE_MAX / elem)
        return RS_ENOMEM;
    void *p = realloc(*(void **)arr, c * elem);
    if (!p)
        return RS_ENOMEM;
    *(void **)arr = p;
    *cap = c;
    return RS_OK;
}

/* The ascending order of uint32_t values, for qsort and bsearch. */
static inline int rs_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static inline int rs_array_reserve32(void *arr, uint32_t *cap, uint32_t need, size_t elem, uint32_t first)
{
    size_t c = *cap;
    int rc = rs_array_reserve(arr, &c, need, elem, first);
    if (rc == RS_OK)
        *cap = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c; /* past 32 bits: keep what fits (need did fit) */
    return rc;
}

#endif
