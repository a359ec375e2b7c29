/*
 * guard.c - the pre-run estimate and memory guard (guard.h).
 *
 * The estimate counts what the workload hands the network: transfers
 * (messages) and the bytes they carry over NIC links and over HB domains.
 * Synthetic patterns are counted exactly; a collective or a replayed
 * trace by the ring schedule the collectives layer runs (steps per rank
 * of a slice of 1/n of the buffer, each cut into 512 KiB chunks), with the
 * HB share from which ring neighbours (or all-to-all peers) share a
 * domain. Events follow from those counts with per-packet and
 * per-message costs measured on the bench scenarios (bench/README.md):
 * an order-of-magnitude figure, not a prediction to the percent (0.6-1.6x
 * on the e2e scenarios, 2.7x over on gpt3-175b at flow level).
 */
#include "guard.h"
#include "array.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "coll.h"
#include "fmt.h"

/* Engine events per unit, measured over the bench and e2e scenarios
 * (events / packets 3.8-6.1 at packet level). */
#define EV_PER_NET_PKT 5.0  /* data packet hops, its ACK share, timers */
#define EV_PER_HB_UNIT 3.0  /* GPU -> NVSwitch -> GPU */
#define EV_PER_MSG_PKT 4.0  /* start, completion, callbacks (packet level) */
#define EV_PER_MSG_FLOW 2.5 /* start, finish, rate changes (flow level) */
/* A network transfer's DCQCN events at flow level (transport.cc=dcqcn:
 * CNPs, rate timer, backlog running out): 2.3-2.5 per network message on
 * the 64- and 128-GPU all-to-alls, fewer where flows rarely collide. */
#define EV_PER_NET_MSG_DCQCN 1.5
/* Synthetic traffic sends as perftest does, NIC to NIC across the spine
 * (no PXN relay): its messages meet in the fabric, 5.6 DCQCN events per
 * network message on the 64-GPU all-to-all of tests/e2e/bad_input.sh. */
#define EV_PER_NET_MSG_DCQCN_VERBS 5.6
#define EV_PER_COMPUTE 2.0  /* a compute op's start and end */
#define RS_GUARD_SAMPLE_MIN_BYTES 17.0 /* fixarray, kind, time, port, tx, queue, float64 */

/* What the workload hands the network (coll.h), plus its compute ops. */
typedef struct tally {
    rs_coll_load l;
    double compute_ops;
} tally;

/* HB shares of a set of GPUs in ring order: neighbours in one domain, and
 * ordered pairs in one domain. */
static void hb_shares(const uint32_t *gpus, uint32_t n, uint32_t hb, double *ring, double *a2a,
                      double *per_domain, uint8_t *one_rail)
{
    *ring = *a2a = 0;
    *per_domain = 1;
    /* One rail (or one domain): no block of an all-to-all needs a relay. */
    uint32_t rails = 1, doms = 1;
    for (uint32_t i = 1; hb > 1 && i < n; i++) {
        rails &= gpus[i] % hb == gpus[0] % hb;
        doms &= gpus[i] / hb == gpus[0] / hb;
    }
    *one_rail = (uint8_t)(hb < 2 || rails || doms);
    if (n < 2 || hb < 2)
        return;
    uint32_t same = 0;
    for (uint32_t i = 0; i < n; i++)
        same += gpus[i] / hb == gpus[(i + 1) % n] / hb;
    *ring = (double)same / n;
    /* Ranks of one domain sit together in every communicator the
     * generator builds; count runs of equal domains (a good bound
     * otherwise): ordered pairs inside a run, and the longest run. */
    double pairs = 0;
    uint32_t most = 1;
    for (uint32_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && gpus[j] / hb == gpus[i] / hb; j++)
            ;
        pairs += (double)(j - i) * (j - i - 1);
        most = j - i > most ? j - i : most;
    }
    *a2a = pairs / ((double)n * (n - 1));
    *per_domain = most;
}

/* The traits of the network sc will build (all 0 for none). */
static rs_net_traits traits_of(const rs_scenario *sc)
{
    rs_net_traits nt = { 0, 0, 0 };
    if (rs_net_config_traits(&sc->net, &nt) != RS_OK)
        memset(&nt, 0, sizeof nt);
    return nt;
}

static void tally_synthetic(const rs_scenario *sc, tally *t)
{
    rs_net_traits nt = traits_of(sc);
    const rs_synth_config *c = &sc->traffic;
    double n = sc->net.gpus, k = sc->net.hb_size, b = (double)c->bytes;
    switch (c->kind) {
    case RS_SYNTH_SINGLE: rs_coll_load_steps(&t->l, 1, 1, 1, b, 0, 1, 1); break;
    case RS_SYNTH_PERMUTATION: rs_coll_load_steps(&t->l, 1, n, 1, b, n > 1 ? (k - 1) / (n - 1) : 0, 1, 1); break;
    case RS_SYNTH_ALL_TO_ALL: rs_coll_load_steps(&t->l, 1, n, n - 1, b, n > 1 ? (k - 1) / (n - 1) : 0, 1, 1); break;
    case RS_SYNTH_INCAST: rs_coll_load_steps(&t->l, 1, c->fan_in, 1, b, 0, 1, 1); break;
    default: {
        /* Over all GPUs in id order: neighbours share a domain but at its
         * edge. A smaller group only makes this an overestimate. */
        double ring = k > 1 ? (k - 1) / k : 0, a2a = n > 1 ? (k - 1) / (n - 1) : 0;
        rs_coll_load_add(&t->l, c->iters ? c->iters : 1, c->op, n, b, ring, a2a, k, &nt);
        break;
    }
    }
}

static int tally_trace(const rs_scenario *sc, const rs_trace *tr, tally *t)
{
    rs_net_traits nt = traits_of(sc);
    uint32_t nranks = rs_trace_nranks(tr), ncls = rs_trace_nclasses(tr), ncomms = rs_trace_ncomms(tr);
    uint32_t *rep = malloc(((size_t)ncls + 1) * sizeof *rep);
    double *ring = malloc(((size_t)ncomms + 1) * sizeof *ring);
    double *a2a = malloc(((size_t)ncomms + 1) * sizeof *a2a);
    double *per = malloc(((size_t)ncomms + 1) * sizeof *per);
    uint8_t *one_rail = malloc((size_t)ncomms + 1);
    uint32_t *gpus = NULL;
    uint32_t gcap = 0;
    int rc = rep && ring && a2a && per && one_rail ? RS_OK : RS_ENOMEM;
    for (uint32_t c = 0; rc == RS_OK && c < ncls; c++)
        rep[c] = RS_NONE;
    for (uint32_t r = 0; rc == RS_OK && r < nranks; r++)
        if (rep[rs_trace_rank_class(tr, r)] == RS_NONE)
            rep[rs_trace_rank_class(tr, r)] = r;
    for (uint32_t c = 0; rc == RS_OK && c < ncomms; c++) {
        uint32_t n;
        const uint32_t *ranks = rs_trace_comm_ranks(tr, c, &n);
        if (rs_array_reserve32(&gpus, &gcap, n, sizeof *gpus, 64) != RS_OK) {
            rc = RS_ENOMEM;
            break;
        }
        for (uint32_t i = 0; i < n; i++)
            gpus[i] = rs_trace_rank_gpu(tr, ranks[i]);
        hb_shares(gpus, n, sc->net.hb_size, &ring[c], &a2a[c], &per[c], &one_rail[c]);
    }
    double iters = sc->workload.iterations ? sc->workload.iterations : 1;
    for (uint32_t c = 0; rc == RS_OK && c < ncls; c++) {
        if (rep[c] == RS_NONE)
            continue;
        uint32_t nops;
        const rs_op *ops = rs_trace_class_program(tr, c, &nops);
        double times = iters * rs_trace_class_ranks(tr, c);
        for (uint32_t i = 0; i < nops; i++) {
            const rs_op *op = &ops[i];
            if (op->kind == RS_OP_COMPUTE) {
                t->compute_ops += times;
            } else if (op->kind == RS_OP_SEND) {
                uint32_t peer = rs_trace_rank_gpu(tr, rs_trace_op_peer(tr, rep[c], op));
                uint32_t me = rs_trace_rank_gpu(tr, rep[c]);
                rs_coll_load_steps(&t->l, times, 1, 1, (double)op->bytes,
                          sc->net.hb_size > 1 && peer / sc->net.hb_size == me / sc->net.hb_size, 0, 1);
            } else if (op->kind == RS_OP_COLL) {
                uint32_t comm = rs_trace_op_comm(tr, rep[c], op), n;
                rs_trace_comm_ranks(tr, comm, &n);
                /* each rank of the class counts its own share: n = 1 rank;
                 * an all-to-all on one rail sends each block whole (no
                 * PXN relay, so no chunk pipeline) */
                if (op->coll == RS_COLL_ALLTOALL && one_rail[comm] && n > 1)
                    rs_coll_load_steps(&t->l, times / n, n, n - 1, (double)op->bytes / n, a2a[comm], 1, 1);
                else
                    rs_coll_load_add(&t->l, times / n, op->coll, n, (double)op->bytes, ring[comm], a2a[comm],
                                     per[comm], &nt);
            }
        }
    }
    free(gpus);
    free(one_rail);
    free(per);
    free(a2a);
    free(ring);
    free(rep);
    return rc;
}

int rs_guard_estimate(const rs_scenario *sc, const rs_trace *trace, rs_guard_est *e, rs_err *err)
{
    tally t = { 0 };
    if (trace) {
        if (tally_trace(sc, trace, &t) != RS_OK)
            return rs_err_set(err, RS_ENOMEM, "out of memory estimating the run");
    } else if (!rs_workload_active(&sc->workload)) {
        tally_synthetic(sc, &t);
    }
    e->messages = t.l.msgs;
    e->timeline_min_bytes = 0;
    if (sc->timeline.sample_us > 0) { /* written or not: the summary stays the same */
        /* A port carrying B bytes at rate R is busy at least B / R, so it
         * has at least B / (R I) samples of interval I; every network byte
         * leaves a NIC and a switch port, every HB byte a GPU and an
         * NVSwitch port. Each sample record is at least 17 bytes. */
        double link = sc->net.nic_gbps > sc->net.link_gbps ? sc->net.nic_gbps : sc->net.link_gbps;
        double per_tick = sc->timeline.sample_us * 1e-6 / 8 * 1e9; /* bytes per Gb/s per interval */
        double samples = 2 * t.l.net_bytes / (link * per_tick) + 2 * t.l.hb_bytes / (sc->net.hb_gbps * per_tick);
        double b = samples * RS_GUARD_SAMPLE_MIN_BYTES;
        e->timeline_min_bytes = b >= 1.8e19 ? UINT64_MAX : (uint64_t)b;
    }
    double mtu = sc->net.mtu ? sc->net.mtu : 4096, hb_mtu = sc->net.hb_mtu ? sc->net.hb_mtu : 65536;
    /* Synthetic traffic other than a collective: verbs messages, posted
     * all at once. */
    int verbs = !trace && !rs_workload_active(&sc->workload) && sc->traffic.kind != RS_SYNTH_COLLECTIVE;
    if (!traits_of(sc).packets) {
        e->events = t.l.msgs * EV_PER_MSG_FLOW + t.compute_ops * EV_PER_COMPUTE;
        if (sc->net.cc == RS_CC_DCQCN && sc->net.ecn && sc->net.transport == RS_TRANSPORT_ROCE)
            e->events += t.l.net_msgs * (verbs ? EV_PER_NET_MSG_DCQCN_VERBS : EV_PER_NET_MSG_DCQCN);
    }
    else
        e->events = ceil(t.l.net_bytes / mtu) * EV_PER_NET_PKT + ceil(t.l.hb_bytes / hb_mtu) * EV_PER_HB_UNIT +
                    t.l.msgs * EV_PER_MSG_PKT + t.compute_ops * EV_PER_COMPUTE;
    /* Synthetic traffic other than a collective posts every message at once;
     * collectives and replays send as their steps allow, a few per GPU
     * (the pool allowance). */
    double m = t.l.msgs;
    int together = verbs;
    uint64_t mi = m > 1.8e19 ? UINT64_MAX / 1024 : (uint64_t)m;
    return rs_net_estimate_bytes(&sc->net, mi, together ? mi : 0, &e->memory_bytes, err);
}

int rs_guard_check(const rs_scenario *sc, const rs_trace *trace, int force, rs_guard_est *e, rs_err *err)
{
    int rc = rs_guard_estimate(sc, trace, e, err);
    if (rc != RS_OK)
        return rc;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (force || pages <= 0 || page <= 0)
        return RS_OK;
    double have = (double)pages * (double)page;
    if ((double)e->memory_bytes <= 0.8 * have)
        return RS_OK;
    char need_s[RS_FMT_LEN], have_s[RS_FMT_LEN];
    return rs_err_set(err, RS_ERANGE,
                      "this run needs about %s (%.3g messages, %.3g events, on %u GPUs) and the machine "
                      "has %s; expected a smaller run: try fidelity=flow, fewer GPUs or smaller messages, "
                      "or railsim run --force",
                      rs_fmt_bytes(need_s, sizeof need_s, (double)e->memory_bytes), e->messages, e->events,
                      sc->net.gpus, rs_fmt_bytes(have_s, sizeof have_s, have));
}

int rs_guard_disk(const rs_scenario *sc, const rs_guard_est *e, const char *outdir, int force, rs_err *err)
{
    if (force || !outdir || !sc->timeline.enabled || !sc->timeline.heavy || e->timeline_min_bytes == 0)
        return RS_OK;
    struct statvfs fs;
    if (statvfs(outdir, &fs) != 0) {
        /* Not made yet: its parent's file system. */
        char parent[4096];
        const char *slash = strrchr(outdir, '/');
        if (!slash)
            snprintf(parent, sizeof parent, ".");
        else
            snprintf(parent, sizeof parent, "%.*s", slash == outdir ? 1 : (int)(slash - outdir), outdir);
        if (statvfs(parent, &fs) != 0)
            return RS_OK; /* the output step reports what is wrong with it */
    }
    double have = (double)fs.f_bavail * (double)fs.f_frsize;
    if ((double)e->timeline_min_bytes <= 0.9 * have)
        return RS_OK;
    char need_s[RS_FMT_LEN], have_s[RS_FMT_LEN];
    return rs_err_set(err, RS_ERANGE,
                      "timeline.sample_us: this run's link samples need at least %s and %s has %s free; "
                      "expected fewer samples: a longer timeline.sample_us, 0 (no samples), timeline.heavy=false, "
                      "or railsim run --force",
                      rs_fmt_bytes(need_s, sizeof need_s, (double)e->timeline_min_bytes), outdir,
                      rs_fmt_bytes(have_s, sizeof have_s, have));
}
