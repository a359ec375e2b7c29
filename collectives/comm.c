/*
 * comm.c - communicators: validated, owned copies of GPU lists.
 */
#include "comm.h"

#include <stdlib.h>
#include <string.h>

struct rs_comm {
    uint32_t n;
    uint32_t gpu[]; /* rank -> GPU id */
};

int rs_comm_create(const uint32_t *list, uint32_t n, uint32_t gpus, rs_comm **out, rs_err *err)
{
    *out = NULL;
    if (n == 0)
        return rs_err_set(err, RS_EINVAL, "communicator: the GPU list is empty");
    /* One bit per network GPU finds duplicates in O(n + gpus). */
    uint8_t *seen = calloc((size_t)gpus / 8 + 1, 1);
    rs_comm *c = malloc(sizeof *c + (size_t)n * sizeof c->gpu[0]);
    int rc = RS_ENOMEM;
    if (!seen || !c) {
        rs_err_set(err, rc, "out of memory creating a communicator of %u GPUs", n);
        goto fail;
    }
    rc = RS_EINVAL;
    for (uint32_t r = 0; r < n; r++) {
        uint32_t g = list[r];
        if (g >= gpus) {
            rs_err_set(err, rc, "communicator: rank %u is GPU %u, but the network has %u GPUs",
                       r, g, gpus);
            goto fail;
        }
        if (seen[g / 8] & (1u << (g % 8))) {
            rs_err_set(err, rc, "communicator: GPU %u appears twice (rank %u)", g, r);
            goto fail;
        }
        seen[g / 8] |= (uint8_t)(1u << (g % 8));
        c->gpu[r] = g;
    }
    c->n = n;
    free(seen);
    *out = c;
    return RS_OK;
fail:
    free(seen);
    free(c);
    return rc;
}

int rs_comm_create_strided(uint32_t gpus, uint32_t start, uint32_t stride, uint32_t count,
                           rs_comm **out, rs_err *err)
{
    *out = NULL;
    if (stride == 0)
        return rs_err_set(err, RS_EINVAL, "communicator: stride must be at least 1");
    if (count == 0)
        return rs_err_set(err, RS_EINVAL, "communicator: count must be at least 1");
    if (start >= gpus || (uint64_t)start + (uint64_t)stride * (count - 1) >= gpus)
        return rs_err_set(err, RS_EINVAL,
                          "communicator: start %u stride %u count %u runs past the network's %u GPUs",
                          start, stride, count, gpus);
    uint32_t *list = malloc((size_t)count * sizeof *list);
    if (!list)
        return rs_err_set(err, RS_ENOMEM, "out of memory creating a communicator of %u GPUs", count);
    for (uint32_t i = 0; i < count; i++)
        list[i] = start + i * stride;
    int rc = rs_comm_create(list, count, gpus, out, err);
    free(list);
    return rc;
}

int rs_comm_create_all(uint32_t gpus, rs_comm **out, rs_err *err)
{
    return rs_comm_create_strided(gpus, 0, 1, gpus, out, err);
}

static int check_hb(uint32_t gpus, uint32_t hb_size, rs_comm **out, rs_err *err)
{
    *out = NULL;
    if (hb_size == 0 || gpus == 0 || gpus % hb_size != 0)
        return rs_err_set(err, RS_EINVAL,
                          "communicator: hb_size %u must be at least 1 and divide the %u GPUs",
                          hb_size, gpus);
    return RS_OK;
}

int rs_comm_create_rail(uint32_t gpus, uint32_t hb_size, uint32_t rail, rs_comm **out, rs_err *err)
{
    int rc = check_hb(gpus, hb_size, out, err);
    if (rc != RS_OK)
        return rc;
    if (rail >= hb_size)
        return rs_err_set(err, RS_EINVAL, "communicator: rail %u out of range (hb_size %u)",
                          rail, hb_size);
    return rs_comm_create_strided(gpus, rail, hb_size, gpus / hb_size, out, err);
}

int rs_comm_create_domain(uint32_t gpus, uint32_t hb_size, uint32_t domain, rs_comm **out, rs_err *err)
{
    int rc = check_hb(gpus, hb_size, out, err);
    if (rc != RS_OK)
        return rc;
    if (domain >= gpus / hb_size)
        return rs_err_set(err, RS_EINVAL, "communicator: HB domain %u out of range (%u domains)",
                          domain, gpus / hb_size);
    return rs_comm_create_strided(gpus, domain * hb_size, 1, hb_size, out, err);
}

void rs_comm_destroy(rs_comm *c) { free(c); }
uint32_t rs_comm_size(const rs_comm *c) { return c->n; }
const uint32_t *rs_comm_gpus(const rs_comm *c) { return c->gpu; }

uint32_t rs_comm_gpu(const rs_comm *c, uint32_t rank)
{
    RS_ASSERT(rank < c->n);
    return c->gpu[rank];
}
