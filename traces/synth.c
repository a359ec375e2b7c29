/*
 * synth.c - synthetic traffic patterns (see synth.h). Random choices use
 * their own stream of the run seed, so they do not depend on the network.
 */
#include "synth.h"

#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "versioned.h"

enum { SYNTH_RNG_ENTITY = 0x53594e54 /* "SYNT" */ };

static void synth_defaults(rs_synth_config *c)
{
    memset(c, 0, sizeof *c);
    c->kind = RS_SYNTH_PERMUTATION;
    c->bytes = 1u << 20;
    c->src = 0;
    c->dst = 1;
    c->fan_in = 8;
    c->start_ns = 0;
    c->op = RS_COLL_ALLREDUCE;
    c->algo = RS_ALGO_AUTO;
    c->iters = 1;
    strcpy(c->group, "all");
    c->sync = RS_SYNC_RANK;
}

void rs_synth_config_init(rs_synth_config *c, size_t size)
{
    rs_synth_config d;
    synth_defaults(&d);
    d.size = (uint32_t)sizeof d;
    rs_versioned_give(c, size, &d, sizeof d);
}

/* Sattolo's algorithm: a uniformly random cyclic permutation, hence a
 * derangement in which everyone sends once and receives once. */
static void derangement(uint32_t *perm, uint32_t n, rs_rng *r)
{
    for (uint32_t i = 0; i < n; i++)
        perm[i] = i;
    for (uint32_t i = n - 1; i > 0; i--) {
        uint32_t j = rs_rng_below(r, i);
        uint32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

/* Where a pattern runs: its GPUs (job GPU i is gpus[i]; NULL: GPU i is
 * i), how its messages are sent and who is told of their arrival. */
typedef struct synth_on {
    const uint32_t *gpus;
    uint32_t n;
    uint32_t verbs;
    rs_net_done_fn done;
    void *ctx;
} synth_on;

/* A message of synthetic traffic between the pattern's GPUs src and dst;
 * its tag is its index in the pattern. */
static int synth_send(rs_net *net, const synth_on *on, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t tag)
{
    rs_net_msg m;
    rs_net_msg_init(&m);
    m.src = on->gpus ? on->gpus[src] : src;
    m.dst = on->gpus ? on->gpus[dst] : dst;
    m.bytes = bytes;
    m.tag = tag;
    m.verbs = on->verbs;
    m.done = on->done;
    m.ctx = on->ctx;
    return rs_net_send(net, &m);
}

static int send_all(rs_net *net, const synth_on *on, const uint32_t *src, const uint32_t *dst, size_t n,
                    uint64_t bytes)
{
    for (size_t i = 0; i < n; i++) {
        int rc = synth_send(net, on, src[i], dst[i], bytes, i);
        if (rc != RS_OK)
            return rc;
    }
    return RS_OK;
}

static int start_now(const rs_synth_config *c, const synth_on *on, rs_net *net, uint64_t seed)
{
    uint32_t n = on->n;
    rs_rng r;
    rs_rng_init(&r, seed, SYNTH_RNG_ENTITY, (uint64_t)c->kind);
    int rc = RS_OK;
    switch (c->kind) {
    case RS_SYNTH_SINGLE:
        return synth_send(net, on, c->src, c->dst, c->bytes, 0);
    case RS_SYNTH_PERMUTATION: {
        uint32_t *perm = malloc((size_t)n * sizeof *perm);
        uint32_t *ids = malloc((size_t)n * sizeof *ids);
        if (!perm || !ids) {
            rc = RS_ENOMEM;
        } else {
            derangement(perm, n, &r);
            for (uint32_t i = 0; i < n; i++)
                ids[i] = i;
            rc = send_all(net, on, ids, perm, n, c->bytes);
        }
        free(perm);
        free(ids);
        return rc;
    }
    case RS_SYNTH_ALL_TO_ALL:
        /* Staggered order (i sends to i+1, i+2, ...) as all-to-all
         * implementations do, so no receiver is hit by everyone first. */
        for (uint32_t k = 1; k < n && rc == RS_OK; k++)
            for (uint32_t i = 0; i < n && rc == RS_OK; i++)
                rc = synth_send(net, on, i, (i + k) % n, c->bytes, (uint64_t)k * n + i);
        return rc;
    case RS_SYNTH_INCAST: {
        /* fan_in distinct senders other than dst: a partial Fisher-Yates. */
        uint32_t *cand = malloc((size_t)n * sizeof *cand);
        if (!cand)
            return RS_ENOMEM;
        uint32_t m = 0;
        for (uint32_t i = 0; i < n; i++)
            if (i != c->dst)
                cand[m++] = i;
        for (uint32_t i = 0; i < c->fan_in && rc == RS_OK; i++) {
            uint32_t j = i + rs_rng_below(&r, m - i);
            uint32_t t = cand[i];
            cand[i] = cand[j];
            cand[j] = t;
            rc = synth_send(net, on, cand[i], c->dst, c->bytes, i);
        }
        free(cand);
        return rc;
    }
    case RS_SYNTH_COLLECTIVE:
        break; /* refused by rs_synth_start */
    }
    return RS_EINVAL;
}

static void ev_start(void *ctx, rs_net *net, uint64_t seed)
{
    /* Nobody waits for the messages (the run goes to idle); as perftest
     * sends: NIC to NIC, forwarded only where no rail path exists. */
    synth_on on = { .n = rs_net_gpus(net), .verbs = 1 };
    int rc = start_now(ctx, &on, net, seed);
    if (rc != RS_OK)
        rs_sim_stop(rs_net_sim(net), rc);
}

static void ev_start_job(void *ctx, rs_net *net, uint64_t seed)
{
    const rs_synth_job *j = ctx;
    synth_on on = { .gpus = j->gpus, .n = j->n, .verbs = j->verbs, .done = j->done, .ctx = j->ctx };
    int rc = start_now(j->cfg, &on, net, seed);
    if (rc != RS_OK)
        rs_sim_stop(rs_net_sim(net), rc);
}

/* c against n GPUs, and its start time into *t. */
static int synth_check(const rs_synth_config *c, uint32_t n, rs_time *t, rs_err *err)
{
    if (!c || c->size < RS_SIZE_V1(rs_synth_config, group))
        return rs_err_set(err, RS_EINVAL, "traffic: a configuration of no known size (initialise it with "
                          "rs_synth_config_default)");
    switch (c->kind) {
    case RS_SYNTH_SINGLE:
        if (c->src >= n)
            return rs_err_set(err, RS_EINVAL, "traffic.src: GPU %u does not exist; expected 0 to %u", c->src, n - 1);
        if (c->dst >= n)
            return rs_err_set(err, RS_EINVAL, "traffic.dst: GPU %u does not exist; expected 0 to %u", c->dst, n - 1);
        break;
    case RS_SYNTH_PERMUTATION:
    case RS_SYNTH_ALL_TO_ALL:
        if (n < 2)
            return rs_err_set(err, RS_EINVAL, "traffic.kind: a %s needs at least 2 GPUs",
                              c->kind == RS_SYNTH_PERMUTATION ? "permutation" : "all-to-all");
        break;
    case RS_SYNTH_INCAST:
        if (c->dst >= n)
            return rs_err_set(err, RS_EINVAL, "traffic.dst: GPU %u does not exist; expected 0 to %u", c->dst, n - 1);
        if (c->fan_in == 0 || c->fan_in >= n)
            return rs_err_set(err, RS_EINVAL, "traffic.fan_in: expected 1 to %u senders for %u GPUs", n - 1, n);
        break;
    case RS_SYNTH_COLLECTIVE:
        return rs_err_set(err, RS_EINVAL, "traffic.kind: a collective is started by rs_collrun_create, "
                                          "not rs_synth_start");
    default:
        return rs_err_set(err, RS_EINVAL, "traffic.kind: unknown traffic pattern");
    }
    if (rs_time_from_ns(c->start_ns, t) != RS_OK)
        return rs_err_set(err, RS_EINVAL, "traffic.start_ns: expected a non-negative time");
    return RS_OK;
}

int rs_synth_start_job(const rs_synth_job *j, rs_net *net, uint64_t seed, rs_time start, rs_err *err)
{
    rs_time t;
    int rc = synth_check(j->cfg, j->n, &t, err);
    if (rc != RS_OK)
        return rc;
    for (uint32_t i = 0; i < j->n; i++)
        if (j->gpus[i] >= rs_net_gpus(net))
            return rs_err_set(err, RS_EINVAL, "traffic: GPU %u of the job does not exist; expected 0 to %u",
                              j->gpus[i], rs_net_gpus(net) - 1);
    if (t > RS_TIME_MAX - start)
        return rs_err_set(err, RS_EINVAL, "traffic.start_ns: too late a start");
    rs_net_at(net, start + t, ev_start_job, (void *)j, seed);
    return RS_OK;
}

int rs_synth_start(const rs_synth_config *c, rs_net *net, uint64_t seed, rs_err *err)
{
    /* c is kept until the start (ev_start), so it is read in place: every
     * field start_now reads is a first-version field. */
    rs_time t;
    int rc = synth_check(c, rs_net_gpus(net), &t, err);
    if (rc == RS_OK)
        rs_net_at(net, t, ev_start, (void *)c, seed);
    return rc;
}

uint64_t rs_synth_messages(const rs_synth_config *c, uint32_t n)
{
    switch (c->kind) {
    case RS_SYNTH_SINGLE:
        return 1;
    case RS_SYNTH_PERMUTATION:
        return n;
    case RS_SYNTH_ALL_TO_ALL:
        return (uint64_t)n * (n - 1);
    case RS_SYNTH_INCAST:
        return c->fan_in;
    default:
        return 0;
    }
}
