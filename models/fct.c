/*
 * fct.c - completion-time statistics of messages (rs_net_fct_get,
 * rs_net_msg_times). The first RS_NET_MSG_TIMES_KEEP completion times are
 * kept (exact percentiles), and with msg_records their whole records.
 * Past that, completion times go into a log-linear histogram: 2^FCT_SUB
 * sub-buckets per power of two, so a percentile is within 2^-FCT_SUB
 * (0.1%) of the exact one; count, sum, min and max stay exact. 56,320
 * buckets, 440 KiB, allocated only when needed. A split run pools every
 * process's (split.c).
 */
#include "netint.h"
#include "versioned.h"

#include <stdlib.h>
#include <string.h>

void rs_fct_free(rs_net *net)
{
    if (net->fct)
        free(net->fct->hist);
    free(net->fct);
    net->fct = NULL;
}

size_t rs_fct_bucket(rs_time v)
{
    if (v < (1ull << FCT_SUB))
        return (size_t)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v) - FCT_SUB;
    return ((size_t)e << FCT_SUB) + (size_t)(v >> e);
}

/* The middle of bucket b, rounded down. */
static rs_time fct_value(size_t b)
{
    if (b < (2ull << FCT_SUB))
        return b;
    unsigned e = (unsigned)(b >> FCT_SUB) - 1;
    rs_time lo = (rs_time)(b - ((size_t)e << FCT_SUB)) << e;
    return lo + ((1ull << e) - 1) / 2;
}

static int fct_add(rs_net *net, rs_time fct)
{
    struct rs_fct_acc *a = net->fct;
    if (!a && !(a = net->fct = calloc(1, sizeof *a)))
        return RS_ENOMEM;
    if (a->n == 0 || fct < a->min)
        a->min = fct;
    if (fct > a->max)
        a->max = fct;
    a->n++;
    a->sum += fct;
    if (a->hist)
        a->hist[rs_fct_bucket(fct)]++;
    return RS_OK;
}

int rs_fct_keep(rs_net *net, const rs_net_msg_time *t)
{
    int rc = fct_add(net, t->end - t->start);
    if (rc != RS_OK || net->fct->hist)
        return rc;
    if (net->ndone < net->msg_times_keep) {
        if (rs_array_reserve(&net->done_fct, &net->capfct, net->ndone + 1, sizeof *net->done_fct, 1024) != RS_OK)
            return RS_ENOMEM;
        if (net->cfg.msg_records) {
            if (rs_array_reserve(&net->done_times, &net->capdone, net->ndone + 1, sizeof *net->done_times,
                                 1024) != RS_OK)
                return RS_ENOMEM;
            net->done_times[net->ndone] = *t;
        }
        net->done_fct[net->ndone++] = t->end - t->start;
        return RS_OK;
    }
    if ((rc = rs_fct_histogram(net)) != RS_OK)
        return rc;
    net->fct->hist[rs_fct_bucket(t->end - t->start)]++;
    return RS_OK;
}

int rs_fct_histogram(rs_net *net)
{
    struct rs_fct_acc *a = net->fct;
    if (!a || a->hist)
        return RS_OK;
    if (!(a->hist = calloc(FCT_BUCKETS, sizeof *a->hist)))
        return RS_ENOMEM;
    for (size_t i = 0; i < net->ndone; i++)
        a->hist[rs_fct_bucket(net->done_fct[i])]++;
    /* The kept times are read no more (the percentiles come from the
     * histogram): up to 32 MiB back for the rest of the run. ndone stays
     * the count of kept records (rs_net_msg_times). */
    free(net->done_fct);
    net->done_fct = NULL;
    net->capfct = 0;
    return RS_OK;
}

/* The k-th smallest (from 0) of v[0..n), by quickselect: in place, no
 * memory (a sort's copy and merge buffer took twice the kept times while
 * the summary was built). Reorders v; the value does not depend on the
 * order v was in. */
static rs_time select_kth(rs_time *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        /* Median of three as the pivot: sorted or equal runs stay linear. */
        size_t mid = lo + (hi - lo) / 2;
        rs_time a = v[lo], b = v[mid], c = v[hi];
        rs_time p = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < p)
                i++;
            while (v[j] > p)
                j--;
            if (i <= j) {
                rs_time t = v[i];
                v[i++] = v[j];
                v[j] = t;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return v[k];
    }
    return v[k];
}

uint64_t rs_fct_rank(uint64_t n, double q)
{
    uint64_t r = (uint64_t)(q * (double)n + 0.999999999);
    return r < 1 ? 1 : r > n ? n : r;
}

static int net_fct_whole(const rs_net *net, rs_net_fct *out)
{
    memset(out, 0, sizeof *out);
    const struct rs_fct_acc *a = net->fct;
    out->exact = 1;
    if (!a || a->n == 0)
        return RS_OK;
    out->n = a->n;
    out->min = a->min;
    out->max = a->max;
    out->mean = (rs_time)((a->sum + a->n / 2) / a->n);
    const double q[2] = { 0.50, 0.99 };
    rs_time *dst[2] = { &out->p50, &out->p99 };
    if (!a->hist && a->pooled) {
        out->p50 = a->p50;
        out->p99 = a->p99;
        return RS_OK;
    }
    if (!a->hist) {
        /* The kept times are a multiset for the percentiles alone:
         * selecting reorders them, which nothing else sees. */
        rs_time *v = ((rs_net *)net)->done_fct;
        for (int k = 0; k < 2; k++)
            *dst[k] = select_kth(v, net->ndone, rs_fct_rank(net->ndone, q[k]) - 1);
        return RS_OK;
    }
    out->exact = 0;
    for (int k = 0; k < 2; k++) {
        uint64_t r = rs_fct_rank(a->n, q[k]), seen = 0;
        for (size_t b = 0; b < FCT_BUCKETS; b++)
            if ((seen += a->hist[b]) >= r) {
                rs_time v = fct_value(b);
                *dst[k] = v < a->min ? a->min : v > a->max ? a->max : v;
                break;
            }
    }
    return RS_OK;
}

int rs_net_fct_fill(const rs_net *net, rs_net_fct *out, size_t size)
{
    rs_net_fct v;
    memset(&v, 0, sizeof v);
    int rc = net_fct_whole(net, &v);
    if (rc == RS_OK)
        rs_versioned_give(out, size, &v, sizeof v);
    return rc;
}

const rs_net_msg_time *rs_net_msg_times(const rs_net *net, size_t *n)
{
    *n = net->cfg.msg_records ? net->ndone : 0;
    return net->done_times;
}
