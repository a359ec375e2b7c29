/*
 * callbacks.c - callbacks named by index (include/railsim/partition.h,
 * rs_net_cb_register): every process of a split run registers the same
 * ones in the same order, so a callback crossing processes (a mirrored
 * send's done, a shipped timer) goes by its index, found from (fn, ctx)
 * by the hash index (hindex.h). The hash of a pointer pair orders nothing
 * that is written: it only finds.
 */
#include "netint.h"

#include <stdlib.h>
#include <string.h>

#include "hindex.h"
#include "pool.h"

/* The hash of a callback (fn, ctx). */
static uint64_t cb_hash(rs_net_timer_fn fn, const void *ctx)
{
    return rs_mix64((uint64_t)(uintptr_t)fn * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)ctx);
}

static uint64_t cb_hash_of(const void *net, uint32_t i)
{
    const struct rs_net_cb *e = &((const rs_net *)net)->cbs[i];
    return cb_hash(e->fn, e->ctx);
}

typedef struct cb_key {
    const rs_net *net;
    rs_net_timer_fn fn;
    const void *ctx;
} cb_key;

static int cb_eq(const void *key, uint32_t i)
{
    const cb_key *k = key;
    return k->net->cbs[i].fn == k->fn && k->net->cbs[i].ctx == k->ctx;
}

/* Index i (bound) becomes the one rs_net_cb_find gives for its (fn, ctx):
 * the latest registration wins. */
static int cbh_insert(rs_net *net, uint32_t i)
{
    const struct rs_net_cb *e = &net->cbs[i];
    uint64_t h = cb_hash(e->fn, e->ctx);
    cb_key k = { net, e->fn, e->ctx };
    uint32_t old = rs_hindex_find(&net->cbh, h, cb_eq, &k);
    if (old != UINT32_MAX)
        rs_hindex_remove(&net->cbh, h, old);
    return rs_hindex_insert(&net->cbh, h, i, cb_hash_of, net);
}

int rs_net_cb_register(rs_net *net, rs_net_timer_fn fn, void *ctx, uint32_t *index)
{
    if (rs_array_reserve32((void **)&net->cbs, &net->capcbs, net->ncbs + 1, sizeof *net->cbs, 16) != RS_OK)
        return RS_ENOMEM;
    net->cbs[net->ncbs] = (struct rs_net_cb){ fn, ctx };
    if (cbh_insert(net, net->ncbs) != RS_OK)
        return RS_ENOMEM;
    *index = net->ncbs++;
    return RS_OK;
}

int rs_net_cb_reserve(rs_net *net, uint32_t n, rs_net_cb_resolve_fn resolve, void *ctx, uint32_t *first)
{
    if (!resolve || n > UINT32_MAX - 2 - net->ncbs)
        return RS_EINVAL;
    if (rs_array_reserve32((void **)&net->cbs, &net->capcbs, net->ncbs + n, sizeof *net->cbs, 16) != RS_OK)
        return RS_ENOMEM;
    struct rs_net_cb_range *rg = realloc(net->cb_ranges, (net->ncb_ranges + 1) * sizeof *rg);
    if (!rg)
        return RS_ENOMEM;
    net->cb_ranges = rg;
    rg[net->ncb_ranges++] = (struct rs_net_cb_range){ net->ncbs, n, resolve, ctx };
    if (n) /* cbs is still NULL when nothing was ever registered */
        memset(net->cbs + net->ncbs, 0, (size_t)n * sizeof *net->cbs);
    *first = net->ncbs;
    net->ncbs += n;
    return RS_OK;
}

int rs_net_cb_set(rs_net *net, uint32_t i, rs_net_timer_fn fn, void *ctx)
{
    if (i >= net->ncbs)
        return RS_EINVAL;
    if (net->cbs[i].fn)
        rs_hindex_remove(&net->cbh, cb_hash(net->cbs[i].fn, net->cbs[i].ctx), i);
    net->cbs[i] = (struct rs_net_cb){ fn, ctx };
    return fn ? cbh_insert(net, i) : RS_OK;
}

uint32_t rs_net_cb_find(const rs_net *net, rs_net_timer_fn fn, const void *ctx)
{
    cb_key k = { net, fn, ctx };
    return rs_hindex_find(&net->cbh, cb_hash(fn, ctx), cb_eq, &k); /* RS_NONE when none */
}

/* Index i as another process named it: bound now if it was reserved and
 * not yet set (its owner made here on first use). */
const struct rs_net_cb *rs_net_cb_named(rs_net *net, uint32_t i)
{
    if (i >= net->ncbs)
        return NULL;
    for (uint32_t k = 0; !net->cbs[i].fn && k < net->ncb_ranges; k++) {
        const struct rs_net_cb_range *rg = &net->cb_ranges[k];
        if (i >= rg->first && i - rg->first < rg->n)
            rg->fn(rg->ctx, net, i);
    }
    return net->cbs[i].fn ? &net->cbs[i] : NULL;
}
