/*
 * mmf.c - the max-min fair solver (mmf.h): links with capacities, flows
 * over a few links each, rates by progressive filling, re-solved
 * incrementally. It knows nothing of networks.
 *
 * Solver. Progressive filling over integer rates: every link starts with
 * its capacity and its unfrozen flow count; repeatedly the link with the
 * smallest fair share floor(rem / cnt) (ties: lowest link id) is saturated,
 * its unfrozen flows are frozen at that share and their other links lose
 * the share and one flow. A share never falls when a flow is frozen
 * elsewhere (that flow took at most the minimum share), so a key is a
 * lower bound of its link's share: a heap of (share, link) pushed once
 * per link, where a popped link whose share rose goes back in at its
 * share now, pops links in the same order as one kept exact, with a push
 * per rise that matters rather than per flow frozen (an all-to-all's
 * thousands of flows on a few hundred links). Integer floor division can leave up
 * to cnt - 1 bit/s of a link unused; it keeps every computation exact, so
 * solving one component alone gives bit-identical rates to solving the
 * whole network (components never interact and pop in the same relative
 * order), which the tests check.
 *
 * Incremental: adding or removing a flow marks its links dirty; a solve
 * collects the connected components of the dirty links (links -> their
 * flows -> those flows' links ...) and re-fills only those. Flows outside
 * keep their rates, which is exact because max-min rates of a component
 * depend on nothing outside it.
 */
#include "mmf.h"

#include "pool.h"

#include <stdlib.h>
#include <string.h>

int rs_mmf_create(uint32_t nlinks, const uint64_t *cap_bps, rs_mmf **out)
{
    *out = NULL;
    rs_mmf *m = calloc(1, sizeof *m);
    if (!m)
        return RS_ENOMEM;
    m->nlinks = nlinks;
    m->caplinks = nlinks + 1;
    m->capv = malloc(((size_t)nlinks + 1) * sizeof *m->capv);
    m->links = calloc((size_t)nlinks + 1, sizeof *m->links);
    m->comp_links = malloc(((size_t)nlinks + 1) * sizeof *m->comp_links);
    m->stack = malloc(((size_t)nlinks + 1) * sizeof *m->stack);
    m->dirty = malloc(((size_t)nlinks + 1) * sizeof *m->dirty);
    if (!m->capv || !m->links || !m->comp_links || !m->stack || !m->dirty)
        goto fail;
    if (nlinks)
        memcpy(m->capv, cap_bps, (size_t)nlinks * sizeof *m->capv);
    *out = m;
    return RS_OK;
fail:
    rs_mmf_destroy(m);
    return RS_ENOMEM;
}

void rs_mmf_destroy(rs_mmf *m)
{
    if (!m)
        return;
    for (uint32_t i = 0; i < m->nlinks && m->links; i++)
        free(m->links[i].fl);
    free(m->links);
    free(m->capv);
    free(m->flows);
    free(m->rate);
    free(m->bneck);
    free(m->fcap);
    free(m->free_ids);
    free(m->dirty);
    free(m->comp_links);
    free(m->comp_flows);
    free(m->stack);
    free(m->heap);
    free(m);
}

int rs_mmf_add_link(rs_mmf *m, uint64_t cap_bps, uint32_t *id)
{
    if (m->nlinks + 1 > m->caplinks) {
        /* Every per-link array grows together, each by the same rule from
         * the one capacity; one that fails leaves the others larger, which
         * is harmless. */
        uint32_t need = m->nlinks + 1, c[5] = { m->caplinks, m->caplinks, m->caplinks, m->caplinks, m->caplinks };
        if (rs_array_reserve32(&m->capv, &c[0], need, sizeof *m->capv, 64) != RS_OK ||
            rs_array_reserve32(&m->links, &c[1], need, sizeof *m->links, 64) != RS_OK ||
            rs_array_reserve32(&m->comp_links, &c[2], need, sizeof *m->comp_links, 64) != RS_OK ||
            rs_array_reserve32(&m->stack, &c[3], need, sizeof *m->stack, 64) != RS_OK ||
            rs_array_reserve32(&m->dirty, &c[4], need, sizeof *m->dirty, 64) != RS_OK)
            return RS_ENOMEM;
        memset(m->links + m->caplinks, 0, (size_t)(c[1] - m->caplinks) * sizeof *m->links);
        m->caplinks = c[0];
    }
    uint32_t l = m->nlinks++;
    memset(&m->links[l], 0, sizeof m->links[l]);
    m->capv[l] = cap_bps;
    *id = l;
    return RS_OK;
}

/* The dirty list holds each link at most once: sized nlinks at create. */
static void mark_dirty(rs_mmf *m, uint32_t l)
{
    if (m->links[l].dirty)
        return;
    m->links[l].dirty = 1;
    m->dirty[m->ndirty++] = l;
}

int rs_mmf_add(rs_mmf *m, const uint32_t *links, uint32_t nhops, uint32_t *id)
{
    if (nhops == 0 || nhops > RS_MMF_MAX_HOPS)
        return RS_EINVAL;
    for (uint32_t i = 0; i < nhops; i++) {
        if (links[i] >= m->nlinks)
            return RS_EINVAL;
        for (uint32_t j = 0; j < i; j++)
            if (links[j] == links[i])
                return RS_EINVAL;
    }
    /* Reserve everything first so that a failure leaves no trace. */
    for (uint32_t i = 0; i < nhops; i++) {
        mmf_link *L = &m->links[links[i]];
        if (rs_array_reserve32((void **)&L->fl, &L->cap, L->n + 1, sizeof *L->fl, 16) != RS_OK)
            return RS_ENOMEM;
    }
    uint32_t f;
    if (m->nfree) {
        f = m->free_ids[--m->nfree];
    } else {
        /* rate and free_ids grow with flows, so remove never allocates. */
        uint32_t c1 = m->capflows, c2 = m->capflows, c3 = m->capflows, c4 = m->capflows, c5 = m->capflows;
        if (rs_array_reserve32((void **)&m->flows, &c1, m->nflows + 1, sizeof *m->flows, 16) != RS_OK ||
            rs_array_reserve32((void **)&m->rate, &c2, m->nflows + 1, sizeof *m->rate, 16) != RS_OK ||
            rs_array_reserve32((void **)&m->bneck, &c4, m->nflows + 1, sizeof *m->bneck, 16) != RS_OK ||
            rs_array_reserve32((void **)&m->fcap, &c5, m->nflows + 1, sizeof *m->fcap, 16) != RS_OK ||
            rs_array_reserve32((void **)&m->free_ids, &c3, m->nflows + 1, sizeof *m->free_ids, 16) != RS_OK)
            return RS_ENOMEM; /* arrays that grew stay grown: harmless */
        m->capflows = c1;
        f = m->nflows++;
    }
    mmf_flow *fl = &m->flows[f];
    memset(fl, 0, sizeof *fl);
    fl->nhops = (uint8_t)nhops;
    fl->live = 1;
    if (m->cls_live[0]++ == 0)
        m->ncls++;
    m->rate[f] = 0;
    m->fcap[f] = 0;
    m->bneck[f] = links[0];
    for (uint32_t i = 0; i < nhops; i++) {
        mmf_link *L = &m->links[links[i]];
        fl->link[i] = links[i];
        fl->pos[i] = L->n;
        L->fl[L->n++] = f;
        mark_dirty(m, links[i]);
    }
    *id = f;
    return RS_OK;
}

void rs_mmf_remove(rs_mmf *m, uint32_t id)
{
    mmf_flow *fl = &m->flows[id];
    RS_ASSERT(fl->live);
    for (uint32_t i = 0; i < fl->nhops; i++) {
        mmf_link *L = &m->links[fl->link[i]];
        uint32_t p = fl->pos[i], last = L->fl[--L->n];
        if (p != L->n) {
            /* Swap the list's last flow into the hole and fix its index. */
            L->fl[p] = last;
            mmf_flow *o = &m->flows[last];
            for (uint32_t k = 0; k < o->nhops; k++)
                if (o->link[k] == fl->link[i]) {
                    o->pos[k] = p;
                    break;
                }
        }
        mark_dirty(m, fl->link[i]);
    }
    fl->live = 0;
    if (--m->cls_live[fl->cls] == 0)
        m->ncls--;
    m->rate[id] = 0;
    if (m->fcap[id]) {
        m->fcap[id] = 0;
        m->ncapped--;
    }
    m->free_ids[m->nfree++] = id;
}

/* -- lazy min-heap of (share, link) -- */

/* One comparison: the pair as a 96-bit key (links and capped flows'
 * ids are unique in the heap, so the order is total). */
static inline unsigned __int128 hkey(heap_ent e) { return (unsigned __int128)e.share << 32 | e.link; }

static int hreserve(rs_mmf *m, uint32_t more)
{
    return rs_array_reserve32((void **)&m->heap, &m->capheap, m->nheap + more, sizeof *m->heap, 16);
}

/* Entry i moved up to its place. */
static void hsift_up(rs_mmf *m, uint32_t i)
{
    heap_ent e = m->heap[i];
    unsigned __int128 k = hkey(e);
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (k >= hkey(m->heap[p]))
            break;
        m->heap[i] = m->heap[p];
        i = p;
    }
    m->heap[i] = e;
}

static int hpush(rs_mmf *m, uint64_t share, uint32_t link)
{
    if (hreserve(m, 1) != RS_OK)
        return RS_ENOMEM;
    m->heap[m->nheap] = (heap_ent){ share, link };
    hsift_up(m, m->nheap++);
    return RS_OK;
}

/* Entry i moved down to its place among n. */
static void hsift_down(heap_ent *h, uint32_t n, uint32_t i)
{
    heap_ent e = h[i];
    unsigned __int128 k = hkey(e);
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        unsigned __int128 kc = hkey(h[c]);
        if (c + 1 < n && hkey(h[c + 1]) < kc) {
            c++;
            kc = hkey(h[c]);
        }
        if (kc >= k)
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = e;
}

static heap_ent hpop(rs_mmf *m)
{
    heap_ent top = m->heap[0];
    if (--m->nheap) {
        m->heap[0] = m->heap[m->nheap];
        hsift_down(m->heap, m->nheap, 0);
    }
    return top;
}

/* The entries appended since nheap = 0, made a heap at once (Floyd's). */
static void heapify(rs_mmf *m)
{
    for (uint32_t i = m->nheap / 2; i-- > 0;)
        hsift_down(m->heap, m->nheap, i);
}

/* Filling: flow f reaches its cap before any link it crosses saturates
 * (unless frozen already): it takes the cap, its links give it out. Its
 * "bottleneck" is its first link (the sender's port). Off the hot path:
 * only runs with caps set (DCQCN at flow level). */
static int __attribute__((noinline)) freeze_capped(rs_mmf *m, uint32_t f, uint64_t cap, uint32_t fill,
                                                   uint64_t *dst, uint32_t *bn)
{
    mmf_flow *fl = &m->flows[f];
    if (fl->frozen == fill)
        return RS_OK;
    fl->frozen = fill;
    dst[f] = cap;
    if (bn)
        bn[f] = fl->link[0];
    for (uint32_t k = 0; k < fl->nhops; k++) {
        mmf_link *K = &m->links[fl->link[k]];
        K->rem -= cap;
        K->cnt--;
    }
    return RS_OK;
}

/* One progressive filling over links[0..nl) with fill stamp `fill`: of
 * class cls only, over the capacity the classes above left (L->rem), or
 * of every flow from the links' capacities when cls < 0. */
static int fill_pass(rs_mmf *m, const uint32_t *links, uint32_t nl, uint64_t *dst, uint32_t *bn, uint32_t fill,
                     int cls)
{
    m->nheap = 0;
    for (uint32_t i = 0; i < nl; i++) {
        mmf_link *L = &m->links[links[i]];
        if (cls < 0) {
            L->rem = m->capv[links[i]];
            L->cnt = L->n;
        } else {
            L->cnt = 0;
            for (uint32_t j = 0; j < L->n; j++)
                L->cnt += m->flows[L->fl[j]].cls == cls;
        }
        if (L->cnt) {
            if (hreserve(m, 1) != RS_OK)
                return RS_ENOMEM;
            m->heap[m->nheap++] = (heap_ent){ L->rem / L->cnt, links[i] };
        }
        /* A capped flow is one more constraint, popped in share order like
         * a link of its own (id nlinks + f, after real links on ties),
         * pushed once however many of these links it crosses (a copy per
         * link only made the heap deeper: the first copy popped froze it). */
        for (uint32_t j = 0; m->ncapped && j < L->n; j++) {
            uint32_t f = L->fl[j];
            mmf_flow *fl = &m->flows[f];
            if (!m->fcap[f] || fl->capped == fill || (cls >= 0 && fl->cls != cls))
                continue;
            fl->capped = fill;
            if (hreserve(m, 1) != RS_OK)
                return RS_ENOMEM;
            m->heap[m->nheap++] = (heap_ent){ m->fcap[f], m->nlinks + f };
        }
    }
    heapify(m);
    while (m->nheap) {
        heap_ent e = hpop(m);
        if (e.link >= m->nlinks) {
            if (freeze_capped(m, e.link - m->nlinks, e.share, fill, dst, bn) != RS_OK)
                return RS_ENOMEM;
            continue;
        }
        mmf_link *L = &m->links[e.link];
        if (L->cnt == 0)
            continue;
        if (L->rem / L->cnt != e.share) {
            /* Its share rose since it was keyed: back in at its share now. */
            if (hpush(m, L->rem / L->cnt, e.link) != RS_OK)
                return RS_ENOMEM;
            continue;
        }
        uint64_t s = e.share;
        for (uint32_t j = 0; j < L->n; j++) {
            uint32_t f = L->fl[j];
            mmf_flow *fl = &m->flows[f];
            if (fl->frozen == fill || (cls >= 0 && fl->cls != cls))
                continue;
            fl->frozen = fill;
            dst[f] = s;
            if (bn)
                bn[f] = e.link;
            for (uint32_t k = 0; k < fl->nhops; k++) {
                mmf_link *K = &m->links[fl->link[k]];
                K->rem -= s;
                K->cnt--;
            }
        }
        RS_ASSERT(L->cnt == 0);
    }
    return RS_OK;
}

/* Progressive filling over links[0..nl), which must be closed (every flow
 * on them has all its links in the set), class by class from the highest
 * when flows of several classes live. Rates go to dst[flow id], and
 * bottleneck links to bn[flow id] unless bn is NULL. */
static int waterfill(rs_mmf *m, const uint32_t *links, uint32_t nl, uint64_t *dst, uint32_t *bn)
{
    uint32_t fill = ++m->fill;
    if (RS_LIKELY(m->ncls <= 1))
        return fill_pass(m, links, nl, dst, bn, fill, -1);
    for (uint32_t i = 0; i < nl; i++)
        m->links[links[i]].rem = m->capv[links[i]];
    for (int c = RS_MMF_CLASSES - 1; c >= 0; c--) {
        int rc = m->cls_live[c] ? fill_pass(m, links, nl, dst, bn, fill, c) : RS_OK;
        if (rc != RS_OK)
            return rc;
    }
    return RS_OK;
}

void rs_mmf_set_class(rs_mmf *m, uint32_t id, uint8_t cls)
{
    mmf_flow *fl = &m->flows[id];
    if (fl->cls == cls || cls >= RS_MMF_CLASSES)
        return;
    if (--m->cls_live[fl->cls] == 0)
        m->ncls--;
    if (m->cls_live[cls]++ == 0)
        m->ncls++;
    fl->cls = cls;
    for (uint32_t k = 0; k < fl->nhops; k++)
        mark_dirty(m, fl->link[k]);
}

/* The rate filling gives a flow that is alone on all its links: the
 * smallest capacity, the lowest such link its bottleneck (the heap's
 * order). */
static void fill_alone(rs_mmf *m, uint32_t f)
{
    const mmf_flow *fl = &m->flows[f];
    uint32_t b = fl->link[0];
    for (uint32_t k = 1; k < fl->nhops; k++) {
        uint32_t l = fl->link[k];
        if (m->capv[l] < m->capv[b] || (m->capv[l] == m->capv[b] && l < b))
            b = l;
    }
    m->rate[f] = m->capv[b];
    m->bneck[f] = b;
    if (m->ncapped && m->fcap[f] && m->fcap[f] < m->capv[b]) {
        m->rate[f] = m->fcap[f];
        m->bneck[f] = fl->link[0];
    }
}

void rs_mmf_set_flow_cap(rs_mmf *m, uint32_t id, uint64_t cap_bps, int resolve)
{
    uint64_t old = m->fcap[id];
    if (old == cap_bps)
        return;
    m->ncapped += (cap_bps != 0) - (old != 0);
    m->fcap[id] = cap_bps;
    if (!resolve)
        return;
    const mmf_flow *fl = &m->flows[id];
    for (uint32_t k = 0; k < fl->nhops; k++)
        mark_dirty(m, fl->link[k]);
}

void rs_mmf_set_cap(rs_mmf *m, uint32_t l, uint64_t cap_bps)
{
    if (m->capv[l] == cap_bps)
        return;
    m->capv[l] = cap_bps;
    mark_dirty(m, l);
}

int rs_mmf_solve(rs_mmf *m)
{
    uint32_t stamp = ++m->stamp;
    m->ncl = m->ncf = 0;
    /* Room for every flow at once: a component holds each at most once. */
    if (rs_array_reserve32((void **)&m->comp_flows, &m->capcf, m->nflows + 1, sizeof *m->comp_flows, 16) != RS_OK)
        return RS_ENOMEM;
    /* Components of the dirty links: depth-first over link -> flows -> links. */
    for (uint32_t d = 0; d < m->ndirty; d++) {
        uint32_t l0 = m->dirty[d];
        if (m->links[l0].mark == stamp)
            continue;
        uint32_t sp = 0, ncl0 = m->ncl, ncf0 = m->ncf;
        m->links[l0].mark = stamp;
        m->stack[sp++] = l0;
        while (sp) {
            uint32_t l = m->stack[--sp];
            const mmf_link *L = &m->links[l];
            m->comp_links[m->ncl++] = l;
            for (uint32_t j = 0; j < L->n; j++) {
                uint32_t f = L->fl[j];
                mmf_flow *fl = &m->flows[f];
                if (fl->mark == stamp)
                    continue;
                fl->mark = stamp;
                m->comp_flows[m->ncf++] = f;
                for (uint32_t k = 0; k < fl->nhops; k++)
                    if (m->links[fl->link[k]].mark != stamp) {
                        m->links[fl->link[k]].mark = stamp;
                        m->stack[sp++] = fl->link[k]; /* each link once: fits */
                    }
            }
        }
        if (m->ncf - ncf0 <= 1) {
            /* A flow alone on its links (common: a start or finish rarely
             * shares a link) takes its slowest link, as filling would give
             * it; an empty component has nothing to fill. */
            if (m->ncf > ncf0)
                fill_alone(m, m->comp_flows[ncf0]);
            m->ncl = ncl0;
        }
    }
    int rc = waterfill(m, m->comp_links, m->ncl, m->rate, m->bneck);
    if (rc != RS_OK)
        return rc;
    for (uint32_t d = 0; d < m->ndirty; d++)
        m->links[m->dirty[d]].dirty = 0;
    m->ndirty = 0;
    m->solves++;
    m->visited += m->ncf;
    return RS_OK;
}


void rs_mmf_work(const rs_mmf *m, uint64_t *solves, uint64_t *flows_visited)
{
    *solves = m->solves;
    *flows_visited = m->visited;
}


int rs_mmf_solve_full(rs_mmf *m, uint64_t *rates)
{
    uint32_t *all = malloc(((size_t)m->nlinks + 1) * sizeof *all), n = 0;
    if (!all)
        return RS_ENOMEM;
    for (uint32_t l = 0; l < m->nlinks; l++)
        if (m->links[l].n)
            all[n++] = l;
    for (uint32_t f = 0; f < m->nflows; f++)
        rates[f] = 0;
    int rc = waterfill(m, all, n, rates, NULL);
    free(all);
    return rc;
}

