/*
 * callbacks.c - callbacks named by index (include/railsim/partition.h,
 * rs_net_cb_register): every process of a split run registers the same
 * ones in the same order, so a callback crossing processes (a mirrored
 * send's done, a shipped timer) goes by its index. The index and its
 * lookup by (fn, ctx), open addressing: slots hold an index, CBH_EMPTY or
 * CBH_GONE (a tombstone). The hash of a pointer pair orders nothing that
 * is written: it only finds.
 */
#include "netint.h"

#include <string.h>

#include "pool.h"

#define CBH_EMPTY UINT32_MAX
#define CBH_GONE (UINT32_MAX - 1)

static int cbh_insert(rs_net *net, uint32_t i);

static uint32_t cbh_slot(const rs_net *net, rs_net_timer_fn fn, const void *ctx)
{
    uint64_t h = rs_mix64((uint64_t)(uintptr_t)fn * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)ctx);
    return (uint32_t)h & (net->capcbh - 1);
}

static int cbh_grow(rs_net *net)
{
    uint32_t live = 0;
    for (uint32_t k = 0; k < net->capcbh; k++)
        live += net->cbh[k] < CBH_GONE;
    uint32_t cap = net->capcbh ? net->capcbh : 64;
    while (cap < 4 * (live + 1))
        cap *= 2;
    uint32_t *old = net->cbh, oldcap = net->capcbh;
    if (!(net->cbh = malloc((size_t)cap * sizeof *net->cbh))) {
        net->cbh = old;
        return RS_ENOMEM;
    }
    memset(net->cbh, 0xff, (size_t)cap * sizeof *net->cbh);
    net->capcbh = cap;
    net->ncbh = 0;
    for (uint32_t k = 0; k < oldcap; k++)
        if (old[k] < CBH_GONE)
            cbh_insert(net, old[k]);
    free(old);
    return RS_OK;
}

/* Index i (bound) becomes the one rs_net_cb_find gives for its (fn, ctx):
 * the latest registration wins, as the reverse scan it replaces did. */
static int cbh_insert(rs_net *net, uint32_t i)
{
    if ((net->ncbh + 1) * 2 > net->capcbh && cbh_grow(net) != RS_OK)
        return RS_ENOMEM;
    const struct rs_net_cb *e = &net->cbs[i];
    uint32_t k = cbh_slot(net, e->fn, e->ctx), gone = CBH_EMPTY;
    for (;; k = (k + 1) & (net->capcbh - 1)) {
        uint32_t v = net->cbh[k];
        if (v == CBH_EMPTY)
            break;
        if (v == CBH_GONE) {
            if (gone == CBH_EMPTY)
                gone = k;
        } else if (net->cbs[v].fn == e->fn && net->cbs[v].ctx == e->ctx) {
            net->cbh[k] = i;
            return RS_OK;
        }
    }
    if (gone != CBH_EMPTY)
        k = gone;
    else
        net->ncbh++;
    net->cbh[k] = i;
    return RS_OK;
}

static void cbh_remove(rs_net *net, uint32_t i)
{
    if (!net->capcbh)
        return;
    const struct rs_net_cb *e = &net->cbs[i];
    for (uint32_t k = cbh_slot(net, e->fn, e->ctx); net->cbh[k] != CBH_EMPTY; k = (k + 1) & (net->capcbh - 1))
        if (net->cbh[k] == i) {
            net->cbh[k] = CBH_GONE;
            return;
        }
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
    if ((net->cb_resolve && (net->cb_resolve != resolve || net->cb_resolve_ctx != ctx)) ||
        n > UINT32_MAX - 2 - net->ncbs)
        return RS_EINVAL;
    if (rs_array_reserve32((void **)&net->cbs, &net->capcbs, net->ncbs + n, sizeof *net->cbs, 16) != RS_OK)
        return RS_ENOMEM;
    net->cb_resolve = resolve;
    net->cb_resolve_ctx = ctx;
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
        cbh_remove(net, i);
    net->cbs[i] = (struct rs_net_cb){ fn, ctx };
    return fn ? cbh_insert(net, i) : RS_OK;
}

uint32_t rs_net_cb_find(const rs_net *net, rs_net_timer_fn fn, const void *ctx)
{
    if (!net->capcbh)
        return RS_NONE;
    for (uint32_t k = cbh_slot(net, fn, ctx); net->cbh[k] != CBH_EMPTY; k = (k + 1) & (net->capcbh - 1)) {
        uint32_t v = net->cbh[k];
        if (v != CBH_GONE && net->cbs[v].fn == fn && net->cbs[v].ctx == ctx)
            return v;
    }
    return RS_NONE;
}

/* Index i as another process named it: bound now if it was reserved and
 * not yet set (its owner made here on first use). */
const struct rs_net_cb *rs_net_cb_named(rs_net *net, uint32_t i)
{
    if (i >= net->ncbs)
        return NULL;
    if (!net->cbs[i].fn && net->cb_resolve)
        net->cb_resolve(net->cb_resolve_ctx, net, i);
    return net->cbs[i].fn ? &net->cbs[i] : NULL;
}
