/*
 * coll_tree.c - NCCL's double binary tree AllReduce.
 *
 * Across HB domains, two complementary binary trees (NCCL's ncclGetDtree:
 * tree 0 is ncclGetBtree over the domains in order; tree 1 is its mirror
 * for an even domain count, else tree 0 shifted by one, so the leaves of
 * one tree are inner nodes of the other and every domain sends and
 * receives about the same amount). Inside a domain the ranks form a chain
 * hanging off the domain's head, the rank that talks across domains. The
 * buffer is split over 2 x channels tree instances in pairs, as NCCL
 * duplicates each tree channel (src/graph/connect.cc, connectTrees: the
 * copy takes the other tree over the same ranks and NIC): instance q uses
 * tree q % 2 and head local index (q / 2) mod GPUs-per-domain, so every
 * head's rail carries both trees, its domain inner in one and a leaf in
 * the other, and the pairs spread over rails. (With tree q % 2 and head
 * q mod an even domain size, each rail carried one tree twice: a domain
 * inner in that tree sent and received 1.5 shares per instance where a
 * balanced one does 1, and a 1 GiB AllReduce over 16 domains of 8 ran at
 * 248 GB/s of bus bandwidth instead of the ring's 392.) Each instance cuts
 * its share into pieces of at most
 * chunk_bytes and pipelines them:
 *   reduce (up):   a rank reduces piece p once it has arrived from all its
 *                  children (time: bytes x children / reduce rate), then
 *                  sends it to its parent; leaves send at once;
 *   broadcast:     the root's reduced piece p goes to its children; every
 *                  rank forwards a piece to its children when it arrives.
 * Up and down run concurrently, piece by piece, as NCCL's tree kernel
 * does. A rank sends a piece once the receiver has a free slot for it:
 * at most `window` pieces past what the receiver has consumed (reduced on
 * the way up, received on the way down) as its credit last told, which
 * comes back a path latency after it was consumed (as coll_ring.c).
 *
 * State: O(instances x n). Done when every up and down transfer arrived.
 */
#include "coll_int.h"

#include <stdlib.h>

struct tree_rank {
    uint64_t up_mask[3];   /* per child slot: pieces beyond up_base that arrived */
    uint64_t dn_mask;
    uint32_t up_base[3];
    uint32_t dn_base;
    uint32_t parent, slot, nchild, child[3];
    uint32_t red_done, red_busy;
    uint32_t up_issued, up_credit;       /* up_credit: the parent's red_done as last told */
    uint32_t dn_issued[3], dn_credit[3]; /* dn_credit: each child's dn_base as last told */
    rs_time up_lat, dn_lat[3];           /* those credits' way back (credit_latencies) */
    rs_time up_extra, dn_extra[3];       /* NCCL's per-step latency of its edges beyond the network's */
    uint8_t up_posting, dn_posting[3];   /* its last piece on that edge has not left yet (tree_left) */
    uint64_t up_held[3], dn_held;        /* members joining: bit p, piece p arrived over an HB link before it joined */
};

#define TREE_MIN_PART (64u << 10) /* bytes per instance below which fewer instances run */

static uint64_t ttag(uint32_t q, uint32_t dir, uint32_t rank, uint32_t p)
{
    return ((uint64_t)q << 58) | ((uint64_t)dir << 56) | ((uint64_t)rank << 32) | p;
}

/* A tag's instance, direction (0: up, 1 + s: down to child slot s),
 * rank and piece (or count). */
static void tdecode(uint64_t tag, uint32_t *q, uint32_t *dir, uint32_t *x, uint32_t *p)
{
    *q = (uint32_t)(tag >> 58);
    *dir = (uint32_t)(tag >> 56) & 3;
    *x = (uint32_t)(tag >> 32) & ((1u << 22) - 1);
    *p = (uint32_t)tag;
}

static int got(uint32_t base, uint64_t mask, uint32_t p)
{
    if (p < base)
        return 1;
    uint32_t b = p - base;
    return b < 64 && ((mask >> b) & 1);
}

static void mark(uint32_t *base, uint64_t *mask, uint32_t p)
{
    uint32_t b = p - *base;
    RS_ASSERT(p >= *base && b < 64); /* window <= 64 bounds reordering */
    *mask |= 1ULL << b;
    while (*mask & 1) {
        *mask >>= 1;
        ++*base;
    }
}

static uint64_t tpiece(const rs_coll *c, uint32_t q, uint32_t p)
{
    return coll_split(c->tree_bytes[q], c->tree_pieces[q], p);
}

static tree_rank *T(rs_coll *c, uint32_t q, uint32_t x) { return &c->tr[(size_t)q * c->n + x]; }

static void tree_arrived(void *ctx, rs_net *net, uint64_t tag);
static void tree_reduced(void *ctx, rs_net *net, uint64_t tag);
static void tree_left(void *ctx, rs_net *net, uint64_t tag);

/* Packet level: piece p of rank x on edge dir (0 up, 1 + s down to child
 * slot s) of instance q is serial tree_serial[q] + (x x 4 + dir) x pieces +
 * p: its place in the collective, not its creation order (coll_ring.c). */
static uint64_t tserial(const rs_coll *c, uint32_t q, uint32_t dir, uint32_t x, uint32_t p)
{
    if (!c->tree_serial)
        return UINT64_MAX;
    return c->tree_serial[q] + ((uint64_t)x * 4 + dir) * c->tree_pieces[q] + p;
}

static void try_up(rs_coll *c, uint32_t q, uint32_t x)
{
    tree_rank *r = T(c, q, x);
    if (r->parent == RS_COLL_NONE || !coll_member_in(c, x) || r->up_credit == RS_COLL_UNPOSTED)
        return;
    uint32_t m = c->tree_pieces[q];
    while (!r->up_posting && r->up_issued - r->up_credit < c->o.window && r->up_issued < m &&
           r->up_issued < r->red_done) {
        uint32_t p = r->up_issued;
        r->up_posting = 1;
        if (rs_coll_send_named(c, x, r->parent, tpiece(c, q, p), tree_arrived, tree_left, ttag(q, 0, x, p),
                               tserial(c, q, 0, x, p)) != RS_OK)
            return;
        r->up_issued++;
        rs_coll_member_step(c, x);
    }
}

static void try_down(rs_coll *c, uint32_t q, uint32_t x)
{
    tree_rank *r = T(c, q, x);
    uint32_t m = c->tree_pieces[q];
    int root = r->parent == RS_COLL_NONE;
    if (!coll_member_in(c, x))
        return;
    for (uint32_t s = 0; s < r->nchild; s++)
        while (r->dn_credit[s] != RS_COLL_UNPOSTED && !r->dn_posting[s] &&
               r->dn_issued[s] - r->dn_credit[s] < c->o.window && r->dn_issued[s] < m) {
            uint32_t p = r->dn_issued[s];
            if (root ? p >= r->red_done : !got(r->dn_base, r->dn_mask, p))
                break;
            r->dn_posting[s] = 1;
            if (rs_coll_send_named(c, x, r->child[s], tpiece(c, q, p), tree_arrived, tree_left, ttag(q, 1 + s, x, p),
                                   tserial(c, q, 1 + s, x, p)) != RS_OK)
                return;
            r->dn_issued[s]++;
            rs_coll_member_step(c, x);
        }
}

static void tree_credit(void *ctx, rs_net *net, uint64_t tag);
static void credit_latencies(rs_coll *c, uint32_t q);

/* The kept credit times, computed again after a degrade or restore
 * changed a rate (rs_coll_rates_moved). */
static void credits_now(rs_coll *c)
{
    if (RS_UNLIKELY(rs_coll_rates_moved(c)))
        for (uint32_t q = 0; q < c->ntree; q++)
            credit_latencies(c, q);
}

/* x consumed what its children sent up to piece red_done (from `old`):
 * their slots are free. As coll_ring.c, no credit once the children can
 * send everything. */
static void up_credit(rs_coll *c, uint32_t q, uint32_t x, uint32_t old)
{
    const tree_rank *r = T(c, q, x);
    if (r->red_done == old || old + c->o.window >= c->tree_pieces[q])
        return;
    credits_now(c);
    for (uint32_t s = 0; s < r->nchild; s++) {
        uint32_t y = r->child[s];
        rs_net_at_gpu_for(c->net, c->gpu[x], c->gpu[y], rs_net_now(c->net) + T(c, q, y)->up_lat, tree_credit, c,
                          ttag(q, 0, y, r->red_done));
    }
}

/* Start the next reduction at x if its children delivered the piece. */
static void try_reduce(rs_coll *c, uint32_t q, uint32_t x)
{
    tree_rank *r = T(c, q, x);
    uint32_t m = c->tree_pieces[q], old = r->red_done;
    while (!r->red_busy && r->red_done < m) {
        uint32_t p = r->red_done;
        for (uint32_t s = 0; s < r->nchild; s++)
            if (!got(r->up_base[s], r->up_mask[s], p))
                goto out;
        rs_time d = rs_coll_reduce_time(c, tpiece(c, q, p) * r->nchild);
        if (d) {
            r->red_busy = 1;
            rs_net_at_gpu(c->net, c->gpu[x], rs_net_now(c->net) + d, tree_reduced, c, ttag(q, 0, x, p));
            break;
        }
        r->red_done++;
    }
out:
    up_credit(c, q, x, old);
    try_up(c, q, x);
    if (r->parent == RS_COLL_NONE)
        try_down(c, q, x);
}

static void tree_reduced(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    rs_coll *c = ctx;
    uint32_t q, dir, x, p;
    tdecode(tag, &q, &dir, &x, &p);
    tree_rank *r = T(c, q, x);
    r->red_busy = 0;
    r->red_done++;
    up_credit(c, q, x, r->red_done - 1);
    try_reduce(c, q, x);
}

/* x's last piece on the tag's edge has left (credit 0), or its receiver's
 * credit came back (credit 1, with the receiver's count): the next piece
 * may go. */
static void edge_event(rs_coll *c, uint64_t tag, int credit)
{
    uint32_t q, dir, x, p;
    tdecode(tag, &q, &dir, &x, &p);
    tree_rank *r = T(c, q, x);
    if (credit) {
        uint32_t *have = dir == 0 ? &r->up_credit : &r->dn_credit[dir - 1];
        if (*have == RS_COLL_UNPOSTED || p > *have)
            *have = p;
    } else {
        *(dir == 0 ? &r->up_posting : &r->dn_posting[dir - 1]) = 0;
    }
    if (dir == 0)
        try_up(c, q, x);
    else
        try_down(c, q, x);
}

static void tree_left(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    edge_event(ctx, tag, 0);
}

static void tree_credit(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    edge_event(ctx, tag, 1);
}

/* Piece p that x sent on edge dir of instance q is at its receiver,
 * which takes it in. */
static void tree_take(rs_coll *c, uint32_t q, uint32_t dir, uint32_t x, uint32_t p)
{
    rs_net *net = c->net;
    tree_rank *r = T(c, q, x);
    if (dir == 0) {
        uint32_t y = r->parent;
        tree_rank *ry = T(c, q, y);
        mark(&ry->up_base[r->slot], &ry->up_mask[r->slot], p);
        try_reduce(c, q, y);
        rs_coll_member_step(c, y);
    } else {
        uint32_t s = dir - 1, z = r->child[s];
        tree_rank *rz = T(c, q, z);
        uint32_t old = rz->dn_base;
        mark(&rz->dn_base, &rz->dn_mask, p);
        if (rz->dn_base > old && old + c->o.window < c->tree_pieces[q]) {
            credits_now(c);
            rs_net_at_gpu_for(net, c->gpu[z], c->gpu[x], rs_net_now(net) + r->dn_lat[s], tree_credit, c,
                              ttag(q, dir, x, rz->dn_base));
        }
        try_down(c, q, z);
        rs_coll_member_step(c, z);
    }
    rs_coll_advance(c, 1); /* last: may finish and free c */
}

static void tree_landed(void *ctx, rs_net *net, uint64_t tag);

/* A piece is at its receiver: NCCL's per-step latency of the edge beyond
 * the network's passes before the receiver sees it (nccl.model=nccl). */
static void tree_arrived(void *ctx, rs_net *net, uint64_t tag)
{
    rs_coll *c = ctx;
    uint32_t q, dir, x, p;
    tdecode(tag, &q, &dir, &x, &p);
    const tree_rank *r = T(c, q, x);
    rs_time extra = dir == 0 ? r->up_extra : r->dn_extra[dir - 1];
    if (extra) {
        uint32_t to = dir == 0 ? r->parent : r->child[dir - 1];
        rs_net_at_gpu(net, c->gpu[to], rs_net_now(net) + extra, tree_landed, c, tag);
        return;
    }
    tree_landed(ctx, net, tag);
}

static void tree_landed(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    rs_coll *c = ctx;
    uint32_t q, dir, x, p;
    tdecode(tag, &q, &dir, &x, &p);
    const tree_rank *r = T(c, q, x);
    uint32_t to = dir == 0 ? r->parent : r->child[dir - 1];
    if (!coll_member_in(c, to)) {
        /* Over an HB link into slots free from the last collective: taken
         * in at its receiver's join (rs_coll_tree_join); p < window. */
        tree_rank *rt = T(c, q, to);
        *(dir == 0 ? &rt->up_held[r->slot] : &rt->dn_held) |= 1ULL << p;
        return;
    }
    tree_take(c, q, dir, x, p);
}

/* NCCL's ncclGetBtree: node 0 is the root; a node's parent and children
 * follow from its lowest set bit (-1: none). */
static void btree(int n, int rank, int *up, int *d0, int *d1)
{
    int bit;
    for (bit = 1; bit < n; bit <<= 1)
        if (bit & rank)
            break;
    if (rank == 0) {
        *up = -1;
        *d0 = -1;
        *d1 = n > 1 ? bit >> 1 : -1;
        return;
    }
    int u = (rank ^ bit) | (bit << 1);
    if (u >= n)
        u = rank ^ bit;
    *up = u;
    int low = bit >> 1;
    *d0 = low == 0 ? -1 : rank - low;
    *d1 = -1;
    for (; low; low >>= 1)
        if (rank + low < n) {
            *d1 = rank + low;
            break;
        }
}

/* NCCL's ncclGetDtree, tree t of domain d among n. */
static void dtree(int n, int d, int t, int *up, int *d0, int *d1)
{
    if (t == 0) {
        btree(n, d, up, d0, d1);
    } else if (n % 2) { /* shift by one */
        int u, a, b;
        btree(n, (d - 1 + n) % n, &u, &a, &b);
        *up = u < 0 ? -1 : (u + 1) % n;
        *d0 = a < 0 ? -1 : (a + 1) % n;
        *d1 = b < 0 ? -1 : (b + 1) % n;
    } else { /* mirror */
        int u, a, b;
        btree(n, n - 1 - d, &u, &a, &b);
        *up = u < 0 ? -1 : n - 1 - u;
        *d0 = a < 0 ? -1 : n - 1 - a;
        *d1 = b < 0 ? -1 : n - 1 - b;
    }
}

/* The local index, in a domain of k ranks, of instance q's head. */
static uint32_t head_index(uint32_t q, uint32_t k) { return q / 2 % k; }

static uint32_t head_of(const coll_groups *g, uint32_t d, uint32_t q)
{
    uint32_t k = g->dom_off[d + 1] - g->dom_off[d];
    return g->dom_rank[g->dom_off[d] + head_index(q, k)];
}

static void add_child(rs_coll *c, uint32_t q, uint32_t parent, uint32_t child)
{
    tree_rank *p = T(c, q, parent), *ch = T(c, q, child);
    RS_ASSERT(p->nchild < 3);
    ch->parent = parent;
    ch->slot = p->nchild;
    p->child[p->nchild++] = child;
}

static void build(rs_coll *c, uint32_t q)
{
    const coll_groups *g = &c->g;
    int N = (int)g->ndom;
    for (uint32_t x = 0; x < c->n; x++)
        T(c, q, x)->parent = RS_COLL_NONE;
    for (int d = 0; d < N; d++) {
        uint32_t off = g->dom_off[d], k = g->dom_off[d + 1] - off, h = head_index(q, k);
        int up, d0, d1; /* parents are set from the parent's side */
        dtree(N, d, (int)(q % 2), &up, &d0, &d1);
        /* The chain child first, then the child domains' heads. */
        uint32_t prev = g->dom_rank[off + h];
        for (uint32_t j = 1; j < k; j++) {
            uint32_t x = g->dom_rank[off + (h + j) % k];
            add_child(c, q, prev, x);
            prev = x;
        }
        (void)up;
        uint32_t head = g->dom_rank[off + h];
        if (d0 >= 0)
            add_child(c, q, head, head_of(g, (uint32_t)d0, q));
        if (d1 >= 0)
            add_child(c, q, head, head_of(g, (uint32_t)d1, q));
    }
}

/* Ranks on the longest root-to-leaf path of instance q. */
static uint32_t depth(rs_coll *c, uint32_t q)
{
    uint32_t best = 0;
    for (uint32_t x = 0; x < c->n; x++) {
        if (T(c, q, x)->nchild)
            continue;
        uint32_t d = 1;
        for (uint32_t y = x; T(c, q, y)->parent != RS_COLL_NONE; y = T(c, q, y)->parent)
            d++;
        if (d > best)
            best = d;
    }
    return best;
}

/* NCCL (enqueue.cc, tree Simple protocol) halves the chunk while the
 * pipeline would hold fewer pieces than a few times the tree depth, so the
 * fill and drain of a deep tree stay short: below 8 x depth pieces down to
 * 128 KiB, below 4 x depth down to 64 KiB, below depth down to 32 KiB. */
static uint64_t tree_chunk(rs_coll *c, uint32_t q)
{
    uint64_t ch = c->o.chunk_bytes, b = c->tree_bytes[q];
    uint64_t dep = depth(c, q);
    while (b / ch < dep * 8 && ch > 131072)
        ch /= 2;
    while (b / ch < dep * 4 && ch > 65536)
        ch /= 2;
    while (b / ch < dep && ch > 32768)
        ch /= 2;
    return ch;
}

/* A credit's way back on each edge of instance q. */
static void credit_latencies(rs_coll *c, uint32_t q)
{
    for (uint32_t x = 0; x < c->n; x++) {
        tree_rank *r = T(c, q, x);
        if (r->parent != RS_COLL_NONE)
            r->up_lat = rs_coll_credit_time(c, r->parent, x);
        for (uint32_t s = 0; s < r->nchild; s++)
            r->dn_lat[s] = rs_coll_credit_time(c, r->child[s], x);
    }
}

/* NCCL's per-step latency of each edge of instance q beyond the network's. */
static void hop_latencies(rs_coll *c, uint32_t q)
{
    if (c->proto == RS_PROTO_AUTO)
        return;
    for (uint32_t x = 0; x < c->n; x++) {
        tree_rank *r = T(c, q, x);
        if (r->parent != RS_COLL_NONE)
            r->up_extra = rs_coll_hop_extra(c, x, r->parent);
        for (uint32_t s = 0; s < r->nchild; s++)
            r->dn_extra[s] = rs_coll_hop_extra(c, x, r->child[s]);
    }
}

int rs_coll_tree_start(rs_coll *c, rs_err *err)
{
    uint32_t n = c->n;
    uint64_t parts = c->bytes / (2 * (uint64_t)TREE_MIN_PART);
    uint32_t nc = c->chan;
    if (parts < nc)
        nc = parts ? (uint32_t)parts : 1;
    c->ntree = 2 * nc;
    c->tr = calloc((size_t)c->ntree * n, sizeof *c->tr);
    c->tree_bytes = malloc((size_t)c->ntree * sizeof *c->tree_bytes);
    c->tree_pieces = malloc((size_t)c->ntree * sizeof *c->tree_pieces);
    if (!c->tr || !c->tree_bytes || !c->tree_pieces)
        return rs_err_set(err, RS_ENOMEM, "out of memory starting a tree over %u ranks", n);
    uint64_t pending = 0;
    for (uint32_t q = 0; q < c->ntree; q++) {
        c->tree_bytes[q] = coll_split(c->bytes, c->ntree, q);
        build(c, q);
        uint64_t ch = tree_chunk(c, q);
        uint64_t m = (c->tree_bytes[q] + ch - 1) / ch;
        if (m == 0)
            m = 1;
        if (m > UINT32_MAX)
            return rs_err_set(err, RS_ERANGE, "collective: %llu bytes make too many pieces",
                              (unsigned long long)c->bytes);
        c->tree_pieces[q] = (uint32_t)m;
        credit_latencies(c, q);
        hop_latencies(c, q);
        for (uint32_t x = 0; x < n; x++)
            if (T(c, q, x)->nchild == 0)
                T(c, q, x)->red_done = (uint32_t)m; /* a leaf's own data needs no reduction */
        pending += 2 * (uint64_t)(n - 1) * m;
    }
    c->pending = pending;
    if (c->member_done) {
        /* Members join one by one (rs_coll_tree_join): nothing goes up or
         * down an edge across HB domains before its receiver posted its
         * buffer (inside one the slots are free from the last
         * collective). A member receives and sends m pieces on each of
         * its edges. */
        for (uint32_t q = 0; q < c->ntree; q++)
            for (uint32_t x = 0; x < n; x++) {
                tree_rank *r = T(c, q, x);
                r->up_credit = r->parent != RS_COLL_NONE && coll_hb_pair(c, x, r->parent) ? 0 : RS_COLL_UNPOSTED;
                for (uint32_t s = 0; s < r->nchild; s++)
                    r->dn_credit[s] = coll_hb_pair(c, x, r->child[s]) ? 0 : RS_COLL_UNPOSTED;
                c->mleft[x] += 2 * (uint64_t)c->tree_pieces[q] * (r->nchild + (r->parent != RS_COLL_NONE));
            }
    }
    /* Packet level: the pieces' serials from a block taken now; a split
     * run: the callbacks that cross processes, named alike in every one
     * (coll_ring.c). */
    if (!rs_net_streams(c->net) &&
        !(c->tree_serial = rs_coll_serial_blocks(c, c->ntree, (uint64_t)n * 4, c->tree_pieces)))
        return rs_err_set(err, RS_ENOMEM, "out of memory starting a tree over %u ranks", n);
    for (uint32_t q = 0; c->probe && q < c->ntree; q++)
        for (uint32_t x = 0; x < n; x++)
            if (T(c, q, x)->parent != RS_COLL_NONE)
                c->probe->relayed += (uint32_t)(rs_net_relayed(c->net, c->gpu[x], c->gpu[T(c, q, x)->parent]) ||
                                                rs_net_relayed(c->net, c->gpu[T(c, q, x)->parent], c->gpu[x]));
    if ((c->split || c->probe) && rs_coll_name_cbs(c, tree_arrived, tree_credit) != RS_OK)
        return rs_err_set(err, RS_ENOMEM, "out of memory starting a tree over %u ranks", n);
    for (uint32_t q = 0; q < c->ntree && !c->member_done; q++)
        for (uint32_t x = 0; x < n && c->status == RS_OK; x++)
            try_up(c, q, x);
    return c->status;
}

/* Member x joins: in each instance it posts its buffers, to its children
 * (their up edge: its red_done) and to its parent (its down edge: its
 * dn_base), each a path latency away (over an HB link the slots were free
 * already), takes in what arrived over HB links before it joined, then
 * sends what it may. The collective cannot finish here: x has sent
 * nothing yet. */
int rs_coll_tree_join(rs_coll *c, uint32_t x)
{
    rs_time now = rs_net_now(c->net);
    credits_now(c);
    for (uint32_t q = 0; q < c->ntree && c->status == RS_OK; q++) {
        tree_rank *r = T(c, q, x);
        for (uint32_t s = 0; s < r->nchild; s++) {
            uint32_t y = r->child[s];
            if (!coll_hb_pair(c, x, y))
                rs_net_at_gpu_for(c->net, c->gpu[x], c->gpu[y], now + T(c, q, y)->up_lat, tree_credit, c,
                                  ttag(q, 0, y, r->red_done));
        }
        if (r->parent != RS_COLL_NONE && !coll_hb_pair(c, x, r->parent))
            rs_net_at_gpu_for(c->net, c->gpu[x], c->gpu[r->parent], now + T(c, q, r->parent)->dn_lat[r->slot],
                              tree_credit, c, ttag(q, 1 + r->slot, r->parent, r->dn_base));
        for (uint32_t s = 0; s < r->nchild && c->status == RS_OK; s++)
            for (uint64_t held; (held = r->up_held[s]) != 0 && c->status == RS_OK;) {
                uint32_t p = (uint32_t)__builtin_ctzll(held);
                r->up_held[s] &= ~(1ULL << p);
                tree_take(c, q, 0, r->child[s], p);
            }
        for (uint64_t held; (held = r->dn_held) != 0 && c->status == RS_OK;) {
            uint32_t p = (uint32_t)__builtin_ctzll(held);
            r->dn_held &= ~(1ULL << p);
            tree_take(c, q, 1 + r->slot, r->parent, p);
        }
        try_up(c, q, x);
        try_down(c, q, x);
    }
    return c->status;
}
