/*
 * bundle.c - equal-cost paths as the flow level carries them under
 * per-packet routing (routing.ecmp=packet or adaptive): every equal-cost
 * path at once, the ports a flow may take at each stage pooled into one
 * link (a "bundle") of their summed capacity.
 *
 * A network leg's stages: stage 0 is its NIC port; from the leaf it
 * reaches, the ports of stage s+1 are the union, over the nodes stage s
 * reaches, of their next hops toward the destination's leaf (the leaf's
 * own port to the destination, at the leaf), until the ports reach the
 * destination GPU. A stage of one port is that port's link; a stage of
 * several is the bundle of exactly those ports, created the first time a
 * path needs it and shared by every path with the same stage (bundles are
 * keyed by their sorted member list).
 *
 * Why a bundle and not k subflows: with every packet taking an equal-cost
 * port (spraying evenly, or adaptive routing keeping the ports' queues
 * even), a flow's rate through a stage spreads over its members, so what
 * limits the flows of a stage is the stage's summed capacity. In a
 * rail-optimized fat tree two flows' stages are either the same ports or
 * disjoint (a leaf's uplinks, a pod's aggregation uplinks, the core's
 * downlinks into a pod, the aggregation downlinks into a leaf), so the
 * pooled max-min rates are those of perfectly balanced multipath routing.
 * Where stages overlap partly (oversubscribed or irregular Clos) the
 * bundles are an approximation: each shares its members evenly.
 *
 * Paths are cached per (source leaf, destination leaf) without their last
 * stage, the destination leaf's port to the destination GPU: the rest
 * depends on nothing else. Everything here is built lazily, so a run
 * that never asks costs nothing; the fluid adds each new bundle to its
 * solver as a link (fluid.c).
 */
#include "bundle.h"

#include <stdlib.h>
#include <string.h>

typedef struct bundle {
    uint32_t first, n;      /* members: mem[first .. first + n), ascending port ids */
    uint64_t hash;
} bundle;

/* A cached stage list, from the source's leaf on (stage 0, the NIC port,
 * is the flow's own). */
typedef struct path_ent {
    uint64_t key;           /* (source leaf switch + 1) << 32 | destination leaf index; 0 = empty */
    uint32_t n;
    uint32_t link[RS_BUNDLE_MAX_STAGES];
} path_ent;

struct rs_bundles {
    uint32_t nports;        /* bundle b is link nports + b */
    bundle *b;
    uint32_t nb;
    size_t capb;
    uint32_t *mem;
    uint32_t nmem;
    size_t capmem;
    uint32_t *bhash;        /* open addressing: bundle index + 1, 0 = empty */
    uint32_t capbhash;      /* a power of 2, kept above twice nb */
    path_ent *path;
    uint32_t npath, cappath; /* a power of 2, kept above twice npath */
    /* Scratch of one path computation: a stage's ports and nodes, and a
     * stamp per port and node so each goes in once. */
    uint32_t *sports, *snodes, *nstamp, *pstamp, stamp;
};

/* Room for `need` elements in *arr. */
static int reserve(void *arr, size_t *cap, size_t need, size_t elem)
{
    return rs_array_reserve(arr, cap, need, elem, 1024);
}

int rs_bundles_create(const rs_net *net, rs_bundles **out)
{
    *out = NULL;
    rs_bundles *b = calloc(1, sizeof *b);
    if (!b)
        return RS_ENOMEM;
    b->nports = net->nports;
    b->sports = malloc(((size_t)net->nports + 1) * sizeof *b->sports);
    b->pstamp = calloc((size_t)net->nports + 1, sizeof *b->pstamp);
    b->snodes = malloc(((size_t)net->nnodes + 1) * sizeof *b->snodes);
    b->nstamp = calloc((size_t)net->nnodes + 1, sizeof *b->nstamp);
    if (!b->sports || !b->pstamp || !b->snodes || !b->nstamp) {
        rs_bundles_destroy(b);
        return RS_ENOMEM;
    }
    *out = b;
    return RS_OK;
}

void rs_bundles_destroy(rs_bundles *b)
{
    if (!b)
        return;
    free(b->b);
    free(b->mem);
    free(b->bhash);
    free(b->path);
    free(b->sports);
    free(b->snodes);
    free(b->nstamp);
    free(b->pstamp);
    free(b);
}

uint32_t rs_bundles_count(const rs_bundles *b) { return b->nb; }

const uint32_t *rs_bundle_members(const rs_bundles *b, uint32_t link, uint32_t *n)
{
    const bundle *x = &b->b[link - b->nports];
    *n = x->n;
    return &b->mem[x->first];
}

static uint64_t set_hash(const uint32_t *p, uint32_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    for (uint32_t i = 0; i < n; i++)
        h = rs_mix64(h ^ p[i]);
    return h ? h : 1;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int rehash(rs_bundles *b, uint32_t cap)
{
    uint32_t *t = calloc(cap, sizeof *t);
    if (!t)
        return RS_ENOMEM;
    for (uint32_t i = 0; i < b->nb; i++) {
        uint32_t s = (uint32_t)b->b[i].hash & (cap - 1);
        while (t[s])
            s = (s + 1) & (cap - 1);
        t[s] = i + 1;
    }
    free(b->bhash);
    b->bhash = t;
    b->capbhash = cap;
    return RS_OK;
}

/* The bundle of ports p[0..n) (sorted, n >= 2): its link id, created if
 * new (*created = 1). */
static int bundle_of(rs_bundles *b, const uint32_t *p, uint32_t n, uint32_t *link, int *created)
{
    uint64_t h = set_hash(p, n);
    *created = 0;
    if (b->capbhash) {
        for (uint32_t s = (uint32_t)h & (b->capbhash - 1); b->bhash[s]; s = (s + 1) & (b->capbhash - 1)) {
            const bundle *x = &b->b[b->bhash[s] - 1];
            if (x->hash == h && x->n == n && !memcmp(&b->mem[x->first], p, n * sizeof *p)) {
                *link = b->nports + b->bhash[s] - 1;
                return RS_OK;
            }
        }
    }
    if ((b->nb + 1) * 2 > b->capbhash && rehash(b, b->capbhash ? b->capbhash * 2 : 64) != RS_OK)
        return RS_ENOMEM;
    if (reserve(&b->b, &b->capb, (size_t)b->nb + 1, sizeof *b->b) != RS_OK ||
        reserve(&b->mem, &b->capmem, (size_t)b->nmem + n, sizeof *b->mem) != RS_OK)
        return RS_ENOMEM;
    bundle *x = &b->b[b->nb];
    x->first = b->nmem;
    x->n = n;
    x->hash = h;
    memcpy(&b->mem[b->nmem], p, n * sizeof *p);
    b->nmem += n;
    uint32_t s = (uint32_t)h & (b->capbhash - 1);
    while (b->bhash[s])
        s = (s + 1) & (b->capbhash - 1);
    b->bhash[s] = ++b->nb;
    *link = b->nports + b->nb - 1;
    *created = 1;
    return RS_OK;
}

/* Stages from switch node `leaf` toward GPU dst into links[0..*n). */
static int stages(rs_bundles *b, const rs_net *net, uint32_t leaf, uint32_t dst, uint32_t *links, uint32_t *n,
                  uint32_t *created)
{
    uint32_t dli = net->leaf_index_of_gpu[dst], nn = 1, k = 0;
    b->snodes[0] = leaf;
    *created = 0;
    while (!(nn == 1 && b->snodes[0] == dst)) {
        if (k == RS_BUNDLE_MAX_STAGES)
            return RS_ERANGE;
        if (++b->stamp == 0) {
            memset(b->pstamp, 0, ((size_t)net->nports + 1) * sizeof *b->pstamp);
            memset(b->nstamp, 0, ((size_t)net->nnodes + 1) * sizeof *b->nstamp);
            b->stamp = 1;
        }
        uint32_t np = 0;
        for (uint32_t i = 0; i < nn; i++) {
            const rs_node *nd = &net->nodes[b->snodes[i]];
            if (nd->kind != RS_NODE_SWITCH)
                return RS_EUNREACH; /* a stage reached a GPU that is not dst */
            const uint32_t *set;
            uint32_t one, cnt;
            if (nd->leaf_index == dli) {
                one = net->leaf_port[dst];
                set = &one;
                cnt = 1;
            } else {
                uint32_t e = net->route[(size_t)nd->sw * net->nleaves + dli];
                if (e == RS_NONE)
                    return RS_EUNREACH;
                if (e & RS_ROUTE_DIRECT) {
                    one = e & ~RS_ROUTE_DIRECT;
                    set = &one;
                    cnt = 1;
                } else {
                    set = &net->nh[e + 1];
                    cnt = net->nh[e];
                }
            }
            for (uint32_t j = 0; j < cnt; j++)
                if (b->pstamp[set[j]] != b->stamp) {
                    b->pstamp[set[j]] = b->stamp;
                    b->sports[np++] = set[j];
                }
        }
        nn = 0;
        for (uint32_t j = 0; j < np; j++) {
            uint32_t peer = net->ports[b->sports[j]].peer_node;
            if (b->nstamp[peer] != b->stamp) {
                b->nstamp[peer] = b->stamp;
                b->snodes[nn++] = peer;
            }
        }
        if (np == 1) {
            links[k++] = b->sports[0];
        } else {
            int made;
            qsort(b->sports, np, sizeof *b->sports, cmp_u32);
            if (bundle_of(b, b->sports, np, &links[k], &made) != RS_OK)
                return RS_ENOMEM;
            *created += (uint32_t)made;
            k++;
        }
    }
    *n = k;
    return RS_OK;
}

int rs_bundles_path(rs_bundles *b, const rs_net *net, uint32_t leaf, uint32_t dst, uint32_t *links,
                    uint32_t max, uint32_t *n, uint32_t *created)
{
    *created = 0;
    uint64_t key = ((uint64_t)leaf + 1) << 32 | net->leaf_index_of_gpu[dst];
    if (b->cappath) {
        for (uint32_t s = (uint32_t)rs_mix64(key) & (b->cappath - 1); b->path[s].key;
             s = (s + 1) & (b->cappath - 1))
            if (b->path[s].key == key) {
                if (b->path[s].n + 1 > max)
                    return RS_ERANGE;
                memcpy(links, b->path[s].link, b->path[s].n * sizeof *links);
                links[b->path[s].n] = net->leaf_port[dst];
                *n = b->path[s].n + 1;
                return RS_OK;
            }
    }
    path_ent e = { key, 0, { 0 } };
    int rc = stages(b, net, leaf, dst, e.link, &e.n, created);
    if (rc != RS_OK)
        return rc;
    if (e.n > max)
        return RS_ERANGE;
    memcpy(links, e.link, e.n * sizeof *links);
    *n = e.n;
    if (RS_NEVER(e.n == 0 || e.link[e.n - 1] != net->leaf_port[dst]))
        return RS_EINTERNAL;
    e.n--; /* the last stage is the destination's own port: not cached */
    /* Cache it (a full table only means recomputing next time). */
    if ((b->npath + 1) * 2 > b->cappath) {
        uint32_t cap = b->cappath ? b->cappath * 2 : 256;
        path_ent *t = calloc(cap, sizeof *t);
        if (!t)
            return RS_OK;
        for (uint32_t i = 0; i < b->cappath; i++)
            if (b->path[i].key) {
                uint32_t s = (uint32_t)rs_mix64(b->path[i].key) & (cap - 1);
                while (t[s].key)
                    s = (s + 1) & (cap - 1);
                t[s] = b->path[i];
            }
        free(b->path);
        b->path = t;
        b->cappath = cap;
    }
    uint32_t s = (uint32_t)rs_mix64(key) & (b->cappath - 1);
    while (b->path[s].key)
        s = (s + 1) & (b->cappath - 1);
    b->path[s] = e;
    b->npath++;
    return RS_OK;
}
