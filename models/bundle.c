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
#include "hindex.h"

#include <stdlib.h>
#include <string.h>

typedef struct bundle {
    uint32_t first, n;      /* members: mem[first .. first + n), ascending port ids */
    uint64_t hash;
} bundle;

/* A cached stage list, from the source's leaf on (stage 0, the NIC port,
 * is the flow's own). */
typedef struct path_ent {
    uint64_t key;           /* (source leaf switch + 1) << 32 | destination leaf index */
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
    rs_hindex bidx;         /* a member set's hash -> its bundle */
    path_ent *path;         /* [npath] cached stage lists, in the order computed */
    uint32_t npath;
    size_t cappath;
    rs_hindex pidx;         /* a path key's hash -> its cached stage list */
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
    rs_hindex_fini(&b->bidx);
    free(b->path);
    rs_hindex_fini(&b->pidx);
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

static uint64_t bundle_hash_of(const void *b, uint32_t i)
{
    return ((const rs_bundles *)b)->b[i].hash;
}

/* A member set looked up: the bundles, the set and its hash. */
typedef struct set_key {
    const rs_bundles *b;
    const uint32_t *p;
    uint32_t n;
    uint64_t hash;
} set_key;

static int set_eq(const void *key, uint32_t i)
{
    const set_key *k = key;
    const bundle *x = &k->b->b[i];
    return x->hash == k->hash && x->n == k->n && !memcmp(&k->b->mem[x->first], k->p, k->n * sizeof *k->p);
}

/* The bundle of ports p[0..n) (sorted, n >= 2): its link id, created if
 * new (*created = 1). */
static int bundle_of(rs_bundles *b, const uint32_t *p, uint32_t n, uint32_t *link, int *created)
{
    uint64_t h = set_hash(p, n);
    *created = 0;
    set_key k = { b, p, n, h };
    uint32_t i = rs_hindex_find(&b->bidx, h, set_eq, &k);
    if (i != UINT32_MAX) {
        *link = b->nports + i;
        return RS_OK;
    }
    if (reserve(&b->b, &b->capb, (size_t)b->nb + 1, sizeof *b->b) != RS_OK ||
        reserve(&b->mem, &b->capmem, (size_t)b->nmem + n, sizeof *b->mem) != RS_OK)
        return RS_ENOMEM;
    bundle *x = &b->b[b->nb];
    x->first = b->nmem;
    x->n = n;
    x->hash = h;
    memcpy(&b->mem[b->nmem], p, n * sizeof *p);
    if (rs_hindex_insert(&b->bidx, h, b->nb, bundle_hash_of, b) != RS_OK)
        return RS_ENOMEM;
    b->nmem += n;
    *link = b->nports + b->nb++;
    *created = 1;
    return RS_OK;
}

/* Stages from switch node `leaf` toward GPU dst (to the GPU with the NIC
 * it receives through) into links[0..*n). */
static int stages(rs_bundles *b, const rs_net *net, uint32_t leaf, uint32_t dst, uint32_t *links, uint32_t *n,
                  uint32_t *created)
{
    uint32_t dli = net->leaf_index_of_gpu[dst], nn = 1, k = 0, end = rs_nic_gpu(net, dst);
    b->snodes[0] = leaf;
    *created = 0;
    while (!(nn == 1 && b->snodes[0] == end)) {
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
            qsort(b->sports, np, sizeof *b->sports, rs_cmp_u32);
            if (bundle_of(b, b->sports, np, &links[k], &made) != RS_OK)
                return RS_ENOMEM;
            *created += (uint32_t)made;
            k++;
        }
    }
    *n = k;
    return RS_OK;
}

static uint64_t path_hash_of(const void *b, uint32_t i)
{
    return rs_mix64(((const rs_bundles *)b)->path[i].key);
}

typedef struct path_key {
    const rs_bundles *b;
    uint64_t key;
} path_key;

static int path_eq(const void *key, uint32_t i)
{
    const path_key *k = key;
    return k->b->path[i].key == k->key;
}

int rs_bundles_path(rs_bundles *b, const rs_net *net, uint32_t leaf, uint32_t dst, uint32_t *links,
                    uint32_t max, uint32_t *n, uint32_t *created)
{
    *created = 0;
    uint64_t key = ((uint64_t)leaf + 1) << 32 | net->leaf_index_of_gpu[dst];
    path_key k = { b, key };
    uint32_t i = rs_hindex_find(&b->pidx, rs_mix64(key), path_eq, &k);
    if (i != UINT32_MAX) {
        const path_ent *c = &b->path[i];
        if (c->n + 1 > max)
            return RS_ERANGE;
        memcpy(links, c->link, c->n * sizeof *links);
        links[c->n] = net->leaf_port[dst];
        *n = c->n + 1;
        return RS_OK;
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
    /* Cache it (out of memory only means recomputing next time). */
    if (b->npath < UINT32_MAX - 1 &&
        rs_array_reserve(&b->path, &b->cappath, (size_t)b->npath + 1, sizeof *b->path, 256) == RS_OK) {
        b->path[b->npath] = e;
        if (rs_hindex_insert(&b->pidx, rs_mix64(key), b->npath, path_hash_of, b) == RS_OK)
            b->npath++;
    }
    return RS_OK;
}
