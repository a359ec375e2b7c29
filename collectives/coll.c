/*
 * coll.c - the collective front end: validation, grouping of a
 * communicator by HB domain, the auto rule, starting or creating a
 * collective under its algorithm, members joining, names, a split run's
 * parts, and the results (options and names: coll_opts.c; what every
 * algorithm does with its steps: coll_step.c).
 *
 * The auto rule (docs/collectives.md, "auto"), a simplified form of NCCL's
 * tuning model that keeps its decisions:
 *   send/recv                    -> direct
 *   all-to-all                   -> direct: NCCL runs an all-to-all as one
 *                                   group of every peer's send and receive
 *                                   (no step barriers); measured at the
 *                                   NIC bound where lock-step pairwise
 *                                   exchange was 24% above it
 *   AllReduce spanning domains   -> tree below 32 KiB x ranks (2 log2 N
 *                                   hops instead of the ring's 2(n-1))
 *   AllReduce/AllGather/ReduceScatter over several equal HB domains
 *   (>= 2 GPUs each) up to 128 KiB x ranks -> hierarchical (2(L-1) NVLink
 *                                   steps + 2(N-1) rail steps instead of
 *                                   2(n-1) ring steps)
 *   otherwise                    -> ring. Measured (docs/collectives.md):
 *                                   for large buffers the flat ring, whose
 *                                   order already crosses each domain on
 *                                   one rail, beats the phase-pipelined
 *                                   hierarchical form by 10-25%, because its
 *                                   NVLink and NIC hops overlap fully.
 */
#include "coll_int.h"
#include "versioned.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AUTO_TREE_BYTES_PER_RANK (32u << 10)
#define AUTO_HIER_BYTES_PER_RANK (128u << 10)


/* -- partitioned runs ---------------------------------------------------- */

static int groups_build(rs_coll *c, uint32_t ndomains);
static rs_coll_algo auto_algo(const rs_coll *c);

/* 1 when NCCL's tuner picks c's algorithm and protocol: nccl.model=nccl,
 * a reduction-like op and an algorithm it knows (auto, ring, tree, nvls)
 * that can run it (its groups resolved). */
static int tuned(const rs_coll *c)
{
    if (rs_coll_nccl(c)->model != RS_NCCL_NCCL)
        return 0;
    if (coll_rooted(c->op)) /* NCCL weighs the ring alone */
        return c->algo == RS_ALGO_AUTO || c->algo == RS_ALGO_RING;
    if (c->op != RS_COLL_ALLGATHER && c->op != RS_COLL_REDUCESCATTER && c->op != RS_COLL_ALLREDUCE)
        return 0;
    /* A forced algorithm that cannot run here is algo_check's to name. */
    if (c->algo == RS_ALGO_TREE)
        return c->op == RS_COLL_ALLREDUCE;
    if (c->algo == RS_ALGO_NVLS)
        return c->g.ndom == 1;
    return c->algo == RS_ALGO_AUTO || c->algo == RS_ALGO_RING;
}

uint32_t rs_coll_net_hb(const rs_net *net)
{
    rs_net_topo_info ti;
    rs_net_topo_info_get(net, &ti);
    return ti.hb_domains ? rs_net_gpus(net) / ti.hb_domains : 1;
}

/* c's HB domain size resolved on net (0 in the options: the network's)
 * and its ranks (c->gpu, c->n) grouped by domain. */
static int groups_resolve(rs_coll *c, const rs_net *net)
{
    uint32_t ngpus = rs_net_gpus(net);
    if (c->o.hb_size == 0)
        c->o.hb_size = rs_coll_net_hb(net);
    return groups_build(c, (ngpus + c->o.hb_size - 1) / c->o.hb_size);
}

/* The library's version of the caller's *req (versioned.h); RS_EINVAL
 * for a req of no known size. */
static int req_take(rs_coll_req *out, const rs_coll_req *req)
{
    rs_coll_req_init(out, RS_COLL_ALLREDUCE, 0);
    return rs_versioned_take(out, sizeof *out, req, RS_SIZE_V1(rs_coll_req, reserved));
}

/* The algorithm of req over gpus[0..n): its own, or the auto rule's;
 * RS_ALGO_AUTO when out of memory. */
static rs_coll_algo algo_of(const rs_net *net, const uint32_t *gpus, uint32_t n, const rs_coll_req *req)
{
    if (req->algo != RS_ALGO_AUTO)
        return req->algo;
    /* The rule rs_coll_launch applies, on the same group. */
    rs_coll c;
    memset(&c, 0, sizeof c);
    c.net = (rs_net *)net; /* read only: the tuner estimates hops */
    c.op = req->op;
    c.bytes = req->bytes;
    c.n = n;
    c.gpu = (uint32_t *)gpus; /* read only */
    c.member_done = req->member_done;
    c.split = rs_net_part_ranks(net) > 1;
    if (rs_coll_opts_take(&c.o, req->opts) != RS_OK)
        return RS_ALGO_AUTO;
    if (groups_resolve(&c, net) != RS_OK)
        return RS_ALGO_AUTO;
    rs_coll_algo algo = auto_algo(&c);
    coll_tune t;
    if (tuned(&c) && rs_coll_tune(&c, &t, NULL) == RS_OK)
        algo = t.algo;
    free(c.g.dom_off);
    free(c.g.dom_rank);
    return algo;
}

int rs_coll_algo_resolve(const rs_net *net, const rs_comm *comm, const rs_coll_req *req, rs_coll_algo *out)
{
    rs_coll_req r;
    if (req_take(&r, req) != RS_OK)
        return RS_EINVAL;
    *out = algo_of(net, rs_comm_gpus(comm), rs_comm_size(comm), &r);
    return *out == RS_ALGO_AUTO ? RS_ENOMEM : RS_OK;
}

int rs_coll_splits(rs_net *net, const rs_comm *comm, const rs_coll_req *req, char *why, size_t n)
{
    rs_coll_req r;
    rs_coll_algo algo;
    int rc = req_take(&r, req);
    if (rc == RS_OK)
        rc = rs_coll_algo_resolve(net, comm, &r, &algo);
    if (rc != RS_OK) {
        if (why)
            snprintf(why, n, "%s", rc == RS_ENOMEM ? "out of memory" : "a collective of no known size");
        return 0;
    }
    rs_coll_op op = r.op;
    uint32_t a2a_peers = r.opts ? r.opts->a2a_peers : 0;
    const char *w = NULL;
    if (op == RS_COLL_ALLTOALL && algo == RS_ALGO_DIRECT && a2a_peers != 0)
        w = "a direct all-to-all with a window of peers sends as sends finish";
    else if (coll_rooted(op))
        w = "a chain reads its successor's slots directly";
    else if (!((op == RS_COLL_ALLTOALL || op == RS_COLL_SENDRECV) && algo == RS_ALGO_DIRECT) && algo != RS_ALGO_RING &&
             algo != RS_ALGO_TREE)
        w = algo == RS_ALGO_PAIRWISE ? "pairwise steps wait for both ends at zero delay across GPUs"
            : algo == RS_ALGO_NVLS   ? "NVLS waits for every member at zero delay across GPUs"
                                     : "a hierarchical collective is not split yet (only ring, tree, direct "
                                       "all-to-all and send/recv)";
    if (w && why)
        snprintf(why, n, "%s %s: %s", rs_coll_op_name(op), rs_coll_algo_name(algo), w);
    return w == NULL;
}

/* A part: the completions, the latest's place, then the tally. */
typedef struct part_head {
    uint64_t done;
    rs_net_rec_key last;
    uint64_t gpus; /* tally entries that follow: gpus x RS_TALLY_NPORTS */
} part_head;

int rs_coll_part_pack(const rs_coll *c, void **buf, size_t *len)
{
    part_head h;
    memset(&h, 0, sizeof h);
    h.done = c->split_done;
    h.last = c->split_last;
    h.gpus = c->tally ? rs_net_gpus(c->net) : 0;
    size_t n = sizeof h + h.gpus * RS_TALLY_NPORTS * sizeof(uint64_t);
    unsigned char *b = malloc(n);
    if (!b)
        return RS_ENOMEM;
    memcpy(b, &h, sizeof h);
    for (uint64_t g = 0; g < h.gpus; g++)
        for (unsigned p = 0; p < RS_TALLY_NPORTS; p++) {
            uint64_t v = rs_tally_get(c->tally, (uint32_t)g, (rs_tally_port)p);
            memcpy(b + sizeof h + (g * RS_TALLY_NPORTS + p) * sizeof v, &v, sizeof v);
        }
    *buf = b;
    *len = n;
    return RS_OK;
}

int rs_coll_part_finish(rs_coll *c, const void *const *all, const size_t *len, uint32_t n)
{
    uint64_t done = 0;
    rs_net_rec_key last;
    int any = 0;
    for (uint32_t r = 0; r < n; r++) {
        part_head h;
        if (len[r] < sizeof h)
            return RS_EINVAL;
        memcpy(&h, all[r], sizeof h);
        if (len[r] != sizeof h + h.gpus * RS_TALLY_NPORTS * sizeof(uint64_t))
            return RS_EINVAL;
        done += h.done;
        if (h.done && (!any || rs_net_rec_key_less(&last, &h.last))) {
            last = h.last;
            any = 1;
        }
    }
    if (c->finished || !any || done != c->pending_total)
        return RS_OK;
    if (c->tally) {
        /* Each process counted its sources' transfers: the sum is the
         * serial run's tally. */
        rs_tally_clear(c->tally);
        for (uint32_t r = 0; r < n; r++) {
            part_head h;
            memcpy(&h, all[r], sizeof h);
            const unsigned char *v = (const unsigned char *)all[r] + sizeof h;
            for (uint64_t g = 0; g < h.gpus; g++)
                for (unsigned p = 0; p < RS_TALLY_NPORTS; p++) {
                    uint64_t x;
                    memcpy(&x, v + (g * RS_TALLY_NPORTS + p) * sizeof x, sizeof x);
                    if (x && rs_tally_add(c->tally, (uint32_t)g, (rs_tally_port)p, x) != RS_OK)
                        return RS_ENOMEM;
                }
        }
    }
    c->pending = 0;
    rs_net *net = c->net; /* done may destroy c */
    /* As the serial run's: NCCL's base latency after the last completion
     * (rs_coll_advance), none for members joining (each paid it in its
     * own process, and nothing a replay writes reads this end). The serial run spends
     * an event on it, counted here, and what done writes goes at that
     * event's time (the rest of its place is the last completion's: only
     * a record of another event at that very picosecond could sort
     * differently). */
    rs_time base = coll_base_lat(c);
    if (base) {
        rs_sim *sim = rs_net_sim(net);
        rs_sim_set_events_run(sim, rs_sim_events_run(sim) + 1);
        last.t += base;
    }
    rs_net_rec_key_pin(net, &last);
    rs_coll_finish_at(c, last.t);
    rs_net_rec_key_pin(net, NULL);
    return RS_OK;
}

/* -- grouping and the auto rule ----------------------------------------- */

static int groups_build(rs_coll *c, uint32_t ndomains)
{
    coll_groups *g = &c->g;
    uint32_t K = c->o.hb_size, n = c->n;
    uint32_t *idx = malloc((size_t)ndomains * sizeof *idx); /* domain id -> group index */
    uint32_t *cnt = calloc((size_t)n + 1, sizeof *cnt);
    g->dom_rank = malloc((size_t)n * sizeof *g->dom_rank);
    g->dom_off = NULL;
    if (!idx || !cnt || !g->dom_rank) {
        free(idx);
        free(cnt);
        return RS_ENOMEM;
    }
    for (uint32_t d = 0; d < ndomains; d++)
        idx[d] = RS_COLL_NONE;
    g->ndom = 0;
    for (uint32_t r = 0; r < n; r++) {
        uint32_t d = c->gpu[r] / K;
        if (idx[d] == RS_COLL_NONE)
            idx[d] = g->ndom++;
        cnt[idx[d]]++;
    }
    g->dom_off = malloc(((size_t)g->ndom + 1) * sizeof *g->dom_off);
    if (!g->dom_off) {
        free(idx);
        free(cnt);
        return RS_ENOMEM;
    }
    g->dom_off[0] = 0;
    g->kmin = UINT32_MAX;
    g->kmax = 0;
    for (uint32_t i = 0; i < g->ndom; i++) {
        g->dom_off[i + 1] = g->dom_off[i] + cnt[i];
        if (cnt[i] < g->kmin)
            g->kmin = cnt[i];
        if (cnt[i] > g->kmax)
            g->kmax = cnt[i];
        cnt[i] = g->dom_off[i]; /* now: fill cursor */
    }
    for (uint32_t r = 0; r < n; r++)
        g->dom_rank[cnt[idx[c->gpu[r] / K]]++] = r;
    free(idx);
    free(cnt);
    return RS_OK;
}

static rs_coll_algo auto_algo(const rs_coll *c)
{
    const coll_groups *g = &c->g;
    int equal_full = g->ndom >= 2 && g->kmin == g->kmax && g->kmin >= 2 &&
                     c->bytes <= (uint64_t)AUTO_HIER_BYTES_PER_RANK * c->n;
    switch (c->op) {
    case RS_COLL_SENDRECV:
        return RS_ALGO_DIRECT;
    case RS_COLL_ALLTOALL:
        return RS_ALGO_DIRECT;
    case RS_COLL_ALLREDUCE:
        if (g->ndom >= 2 && c->bytes < (uint64_t)AUTO_TREE_BYTES_PER_RANK * c->n)
            return RS_ALGO_TREE;
        return equal_full ? RS_ALGO_HIERARCHICAL : RS_ALGO_RING;
    case RS_COLL_ALLGATHER:
    case RS_COLL_REDUCESCATTER:
        return equal_full ? RS_ALGO_HIERARCHICAL : RS_ALGO_RING;
    case RS_COLL_BROADCAST:
    case RS_COLL_REDUCE:
        return RS_ALGO_RING;
    }
    return RS_ALGO_RING;
}

static int algo_check(const rs_coll *c, rs_err *err)
{
    rs_coll_op op = c->op;
    int ok = 0;
    switch (c->algo) {
    case RS_ALGO_RING:
        ok = op == RS_COLL_ALLGATHER || op == RS_COLL_REDUCESCATTER || op == RS_COLL_ALLREDUCE ||
             coll_rooted(op);
        break;
    case RS_ALGO_TREE:
        ok = op == RS_COLL_ALLREDUCE;
        break;
    case RS_ALGO_DIRECT:
        ok = op == RS_COLL_ALLTOALL || op == RS_COLL_SENDRECV;
        break;
    case RS_ALGO_PAIRWISE:
        ok = op == RS_COLL_ALLTOALL;
        break;
    case RS_ALGO_NVLS:
        ok = op == RS_COLL_ALLGATHER || op == RS_COLL_REDUCESCATTER || op == RS_COLL_ALLREDUCE;
        if (ok && c->g.ndom != 1)
            return rs_err_set(err, RS_EINVAL,
                              "collective: nvls %s reduces in one HB domain's NVSwitch (this group spans %u "
                              "domains; NVLS Tree is not simulated)",
                              rs_coll_op_name(op), c->g.ndom);
        break;
    case RS_ALGO_HIERARCHICAL:
        ok = op == RS_COLL_ALLGATHER || op == RS_COLL_REDUCESCATTER || op == RS_COLL_ALLREDUCE;
        if (ok && (c->g.ndom < 2 || c->g.kmin != c->g.kmax))
            return rs_err_set(err, RS_EINVAL,
                              "collective: hierarchical %s needs a group spanning several HB "
                              "domains with the same number of GPUs in each (this one spans %u "
                              "domains of %u to %u GPUs)",
                              rs_coll_op_name(op), c->g.ndom, c->g.kmin, c->g.kmax);
        break;
    default:
        break;
    }
    if (!ok)
        return rs_err_set(err, RS_EINVAL, "collective: algorithm %s does not implement %s",
                          rs_coll_algo_name(c->algo), rs_coll_op_name(op));
    return RS_OK;
}

/* Members joining one by one: 1 when c's steps wait for every member, so
 * that it starts when the last joins (rs_coll_join). NVLS: the switch's
 * reduction of each piece needs every member's; pairwise: each step
 * waits for both ends; a chain reads its successor's slots; a windowed
 * all-to-all sends as sends finish. */
static int join_gathers(const rs_coll *c)
{
    return c->algo == RS_ALGO_NVLS || c->algo == RS_ALGO_PAIRWISE || coll_rooted(c->op) ||
           (c->algo == RS_ALGO_DIRECT && c->o.a2a_peers && c->o.a2a_peers < c->n - 1);
}

/* 1 when every member's GPU runs in this process (a split network). */
static int coll_local(const rs_coll *c)
{
    for (uint32_t x = 0; x < c->n; x++)
        if (!rs_net_gpu_local(c->net, c->gpu[x]))
            return 0;
    return 1;
}

/* What members joining one by one cannot run (rs_coll_create). */
static int join_check(const rs_coll *c, rs_err *err)
{
    const char *r = NULL;
    int empty = c->n == 1 || c->bytes == 0; /* each member done as it joins: nothing crosses processes */
    if (c->split && !empty && c->cb0 == RS_COLL_NONE)
        r = "a network split over processes without a name (rs_coll_create with a reservation)";
    else if (c->split && !empty && join_gathers(c) && !(c->algo == RS_ALGO_NVLS && coll_local(c)))
        r = "a collective that waits for every member across processes (only NVLS, inside one process's HB "
            "domain)";
    else if (c->split && !empty && c->algo != RS_ALGO_RING && c->algo != RS_ALGO_TREE &&
             c->algo != RS_ALGO_HIERARCHICAL && c->algo != RS_ALGO_NVLS &&
             !(c->algo == RS_ALGO_DIRECT && c->op == RS_COLL_ALLTOALL))
        r = "this algorithm split over processes";
    else if (c->op == RS_COLL_SENDRECV)
        r = "send/recv (use rs_net_send)";
    if (r)
        return rs_err_set(err, RS_EINVAL, "collective: members joining one by one: %s is not implemented", r);
    return RS_OK;
}

/* Start c's algorithm: every member at once, or (member_done) none. */
static int coll_start(rs_coll *c, rs_err *err)
{
    switch (c->algo) {
    case RS_ALGO_RING:
        return coll_rooted(c->op) ? rs_coll_chain_start(c, err) : rs_coll_ring_start(c, err);
    case RS_ALGO_TREE:
        return rs_coll_tree_start(c, err);
    case RS_ALGO_DIRECT:
        return c->op == RS_COLL_SENDRECV ? rs_coll_sendrecv_start(c, err) : rs_coll_a2a_start(c, err);
    case RS_ALGO_PAIRWISE:
        return rs_coll_a2a_start(c, err);
    case RS_ALGO_HIERARCHICAL:
        return rs_coll_hier_start(c, err);
    case RS_ALGO_NVLS:
        return rs_coll_nvls_start(c, err);
    default:
        return RS_EINTERNAL;
    }
}

/* -- start and destroy -------------------------------------------------- */

/* What NCCL's model decided for c beyond its algorithm: protocol,
 * predicted time, per-step and base latencies, NVLS's efficiency. */
static void take_tune(rs_coll *c, const coll_tune *t)
{
    c->proto = t->proto;
    c->predicted_us = t->predicted_us;
    c->hop_us[0] = t->hop_us[0];
    c->hop_us[1] = t->hop_us[1];
    c->nvls_eff = t->nvls_eff;
    if (rs_time_from_us(t->base_us, &c->base_lat) != RS_OK)
        c->base_lat = 0;
}

int rs_coll_launch(rs_net *net, const uint32_t *gpus, uint32_t n, const rs_coll_req *req, rs_coll *parent,
                   rs_coll_needs *probe, rs_coll **out, rs_err *err)
{
    *out = NULL;
    rs_coll_op op = req->op;
    rs_coll_algo algo = req->algo;
    uint64_t bytes = req->bytes;
    rs_coll_member_fn member = req->member_done;
    rs_coll_opts opts;
    const rs_coll_opts *o = &opts;
    if (rs_coll_opts_take(&opts, req->opts) != RS_OK)
        return rs_err_set(err, RS_EINVAL, "collective: options of no known size (initialise them with "
                          "rs_coll_opts_default)");
    if ((unsigned)op >= RS_COLL_NOPS)
        return rs_err_set(err, RS_EINVAL, "collective: unknown operation %d", (int)op);
    if ((unsigned)algo >= RS_COLL_NALGOS)
        return rs_err_set(err, RS_EINVAL, "collective: unknown algorithm %d", (int)algo);
    if (o->chunk_bytes == 0)
        return rs_err_set(err, RS_EINVAL, "collective: chunk_bytes must be at least 1");
    if (o->window == 0 || o->window > 64)
        return rs_err_set(err, RS_EINVAL, "collective: window %u must be 1..64", o->window);
    if (!(o->reduce_gbps >= 0) || o->reduce_gbps > 1e9)
        return rs_err_set(err, RS_EINVAL, "collective: reduce_gbps must be >= 0 and finite");
    if (o->channels > RS_COLL_MAX_CHANNELS)
        return rs_err_set(err, RS_EINVAL, "collective: channels %u exceeds %u", o->channels,
                          RS_COLL_MAX_CHANNELS);
    uint32_t ngpus = rs_net_gpus(net);
    if (n > (1u << 20))
        return rs_err_set(err, RS_EINVAL, "collective: %u ranks exceed the limit of 2^20", n);
    for (uint32_t r = 0; r < n; r++)
        if (gpus[r] >= ngpus)
            return rs_err_set(err, RS_EINVAL,
                              "collective: rank %u is GPU %u, but the network has %u GPUs", r,
                              gpus[r], ngpus);
    if (op == RS_COLL_SENDRECV && n < 2)
        return rs_err_set(err, RS_EINVAL, "collective: sendrecv needs 2 ranks, the group has %u", n);

    rs_coll *c = calloc(1, sizeof *c);
    if (!c)
        return rs_err_set(err, RS_ENOMEM, "out of memory starting a collective");
    int rc = RS_ENOMEM;
    c->net = net;
    c->op = op;
    c->algo = algo;
    c->bytes = bytes;
    c->o = *o;
    c->done = req->done;
    c->ctx = req->ctx;
    c->tag = req->tag;
    c->parent = parent;
    c->n = n;
    c->t_start = rs_net_now(net);
    c->t_end = RS_TIME_MAX;
    c->reduce_bps = (uint64_t)(o->reduce_gbps * 1e9 + 0.5);
    c->split = !probe && rs_net_part_ranks(net) > 1;
    c->serial0 = req->reserved ? req->reserved->serial0 : UINT64_MAX;
    c->rate_changes = rs_net_rate_changes(net);
    c->cb0 = req->reserved ? req->reserved->cb0 : RS_COLL_NONE;
    c->probe = probe;
    c->gpu = malloc((size_t)n * sizeof *c->gpu);
    if (!c->gpu || (!parent && (rs_tally_create(&c->tally) != RS_OK || rs_tally_reserve(c->tally, n) != RS_OK)))
        goto nomem;
    memcpy(c->gpu, gpus, (size_t)n * sizeof *c->gpu);
    if (groups_resolve(c, net) != RS_OK)
        goto nomem;
    c->member_done = member;
    c->nvls_eff = 1;         /* nccl.model=ideal: an ideal switch reduction */
    if (tuned(c)) {
        coll_tune t;
        if ((rc = rs_coll_tune(c, &t, err)) != RS_OK)
            goto fail;
        c->algo = t.algo;
        take_tune(c, &t);
    }
    if (c->algo == RS_ALGO_AUTO)
        c->algo = auto_algo(c);
    if ((rc = algo_check(c, err)) != RS_OK)
        goto fail;
    if (rs_coll_nccl(c)->model == RS_NCCL_NCCL && (op == RS_COLL_ALLTOALL || op == RS_COLL_SENDRECV) && !parent) {
        coll_tune t;
        rs_coll_tune_p2p(c, &t);
        take_tune(c, &t);
        /* One step over the slowest kind of hop: to a rank of another
         * domain when the group spans several, else to rank 1. */
        uint32_t peer = 1;
        for (uint32_t i = 1; i < n && c->g.ndom > 1; i++)
            if (c->gpu[i] / c->o.hb_size != c->gpu[0] / c->o.hb_size) {
                peer = i;
                break;
            }
        if (n > 1)
            c->base_lat += rs_coll_hop_extra(c, 0, peer);
    }
    if (member && (rc = join_check(c, err)) != RS_OK)
        goto fail;
    if (member) {
        c->net_hb = rs_coll_net_hb(net);
        c->mleft = calloc(n, sizeof *c->mleft);
        c->joined = calloc(n, 1);
        if (!c->mleft || !c->joined)
            goto nomem;
    }
    c->chan = c->o.channels ? c->o.channels : rs_coll_nccl(c)->channels;
    if (c->chan == 0)
        c->chan = c->g.ndom >= 2 && c->g.kmax >= 2
                      ? (c->g.kmax < RS_COLL_MAX_CHANNELS ? c->g.kmax : RS_COLL_MAX_CHANNELS)
                      : 2;

    if (n == 1 || bytes == 0) {
        if (member) { /* each member is done as it joins (rs_coll_join) */
            c->pending = n;
            *out = c;
            return RS_OK;
        }
        rs_net_at(net, c->t_start, rs_coll_finish_timer, c, 0); /* empty: it finishes as it starts */
        *out = c;
        return RS_OK;
    }
    if (member && join_gathers(c)) {
        /* It runs as if every member started at once, from the last join.
         * NVLS keeps its name (its transfers' serials; it runs split, in
         * the process of its HB domain); the others run unnamed, on one
         * process only (join_check), and a probe counts nothing for them. */
        c->gather_done = member;
        c->member_done = NULL;
        if (c->algo != RS_ALGO_NVLS) {
            c->serial0 = UINT64_MAX;
            c->cb0 = RS_COLL_NONE;
        }
        if (!probe || c->algo != RS_ALGO_NVLS) {
            *out = c;
            return RS_OK;
        }
    }
    if ((rc = coll_start(c, err)) != RS_OK)
        goto fail;
    c->pending_total = c->pending;
    *out = c;
    return RS_OK;
nomem:
    rs_err_set(err, RS_ENOMEM, "out of memory starting a collective over %u ranks", n);
fail:
    /* Transfers already handed to the network would call back into c:
     * stop the run so they never do (the caller sees rc). */
    if (rs_coll_transfers(c))
        rs_sim_stop(rs_net_sim(net), rc);
    rs_coll_destroy(c);
    return rc;
}

int rs_coll_create(rs_net *net, const rs_comm *comm, const rs_coll_req *req, rs_coll **out, rs_err *err)
{
    *out = NULL;
    rs_coll_req r;
    if (req_take(&r, req) != RS_OK)
        return rs_err_set(err, RS_EINVAL, "collective: a request of no known size (initialise it with "
                          "rs_coll_req_init)");
    if (r.reserved && !r.member_done)
        return rs_err_set(err, RS_EINVAL, "collective: a reservation is for members joining one by one "
                          "(member_done)");
    return rs_coll_launch(net, rs_comm_gpus(comm), rs_comm_size(comm), &r, NULL, NULL, out, err);
}

static void probe_member(void *ctx, rs_net *net, uint64_t tag, uint32_t pos)
{
    (void)ctx;
    (void)net;
    (void)tag;
    (void)pos;
}

static int coll_needs_whole(rs_net *net, const rs_comm *comm, const rs_coll_req *req, rs_coll_needs *out, rs_err *err)
{
    memset(out, 0, sizeof *out);
    rs_coll_req r;
    if (req_take(&r, req) != RS_OK)
        return rs_err_set(err, RS_EINVAL, "collective: a request of no known size (initialise it with "
                          "rs_coll_req_init)");
    r.member_done = probe_member;
    r.done = NULL;
    r.ctx = NULL;
    r.tag = 0;
    r.reserved = NULL;
    rs_coll *c;
    int rc = rs_coll_launch(net, rs_comm_gpus(comm), rs_comm_size(comm), &r, NULL, out, &c, err);
    if (c) {
        out->algo = c->algo;
        out->proto = c->proto;
        out->predicted_us = c->predicted_us;
    }
    rs_coll_destroy(c);
    return rc;
}

int rs_coll_needs_fill(rs_net *net, const rs_comm *comm, const rs_coll_req *req, rs_coll_needs *out, size_t size,
                       rs_err *err)
{
    rs_coll_needs v;
    memset(&v, 0, sizeof v);
    int rc = coll_needs_whole(net, comm, req, &v, err);
    if (rc == RS_OK)
        rs_versioned_give(out, size, &v, sizeof v);
    return rc;
}

int rs_coll_bind(rs_coll *c, uint32_t i)
{
    if (c->cb0 == RS_COLL_NONE || i < c->cb0)
        return RS_EINVAL;
    if (c->algo == RS_ALGO_HIERARCHICAL && c->member_done && c->bytes && c->n > 1)
        return rs_coll_hier_bind(c, i - c->cb0);
    return i - c->cb0 < 2 ? RS_OK : RS_EINVAL;
}

const rs_tally *rs_coll_tally(const rs_coll *c) { return c->tally; }

/* An empty collective's member, done at its join (from an event). */
static void member_empty(void *ctx, rs_net *net, uint64_t x)
{
    (void)net;
    rs_coll *c = ctx;
    rs_coll_member_tell(c, (uint32_t)x);
    rs_coll_advance(c, 1); /* last: may finish and free c */
}

int rs_coll_join(rs_coll *c, uint32_t x)
{
    if ((!c->member_done && !c->gather_done) || x >= c->n || c->joined[x])
        return RS_EINVAL;
    c->joined[x] = 1;
    c->njoined++;
    if (c->n == 1 || c->bytes == 0) {
        rs_net_at_gpu(c->net, c->gpu[x], rs_net_now(c->net), member_empty, c, x);
        return RS_OK;
    }
    if (c->gather_done) {
        if (c->njoined < c->n)
            return RS_OK;
        rs_err err;
        c->t_start = rs_net_now(c->net);
        int rc = coll_start(c, &err);
        c->pending_total = c->pending;
        if (rc != RS_OK)
            rs_coll_fail(c, rc);
        return rc;
    }
    switch (c->algo) {
    case RS_ALGO_RING:
        return rs_coll_ring_join(c, x);
    case RS_ALGO_TREE:
        return rs_coll_tree_join(c, x);
    case RS_ALGO_DIRECT:
        return rs_coll_a2a_join(c, x);
    case RS_ALGO_HIERARCHICAL:
        return rs_coll_hier_join(c, x);
    default:
        return RS_EINTERNAL;
    }
}

void rs_coll_destroy(rs_coll *c)
{
    if (!c)
        return;
    rs_coll_hier_free(c);
    rs_tally_destroy(c->tally);
    free(c->gpu);
    free(c->g.dom_off);
    free(c->g.dom_rank);
    free(c->order);
    free(c->rr);
    free(c->ch_bytes);
    free(c->ch_pieces);
    free(c->ch_serial);
    free(c->tr);
    free(c->tree_bytes);
    free(c->tree_pieces);
    free(c->tree_serial);
    free(c->hk_serial);
    free(c->hk_cb);
    free(c->ar);
    free(c->mleft);
    free(c->joined);
    free(c->pos_of);
    free(c->posted);
    free(c->a2a_held);
    free(c);
}

rs_coll_algo rs_coll_algo_used(const rs_coll *c) { return c->algo; }
rs_nccl_proto rs_coll_proto_used(const rs_coll *c) { return c->proto; }
double rs_coll_predicted_us(const rs_coll *c) { return c->predicted_us; }
rs_time rs_coll_start_time(const rs_coll *c) { return c->t_start; }
rs_time rs_coll_end_time(const rs_coll *c) { return c->t_end; }
int rs_coll_finished(const rs_coll *c) { return c->finished; }
int rs_coll_status(const rs_coll *c) { return c->status; }
rs_time rs_coll_bound(const rs_coll *c) { return c->bound; }

double rs_coll_progress(const rs_coll *c)
{
    if (c->finished)
        return 1.0;
    if (c->pending_total == 0 || c->pending > c->pending_total)
        return 0.0;
    return 1.0 - (double)c->pending / (double)c->pending_total;
}

uint64_t rs_coll_transfers(const rs_coll *c)
{
    uint64_t t = c->transfers;
    for (uint32_t i = 0; i < c->nkids; i++)
        t += rs_coll_transfers(c->kids[i]);
    return t;
}
