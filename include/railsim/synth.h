/*
 * synth.h - synthetic traffic patterns: the workloads `railsim run` uses
 * when no training plan is given. Each pattern becomes a set of messages
 * handed to the network at one start time.
 *
 *   single       one message traffic.src -> traffic.dst
 *   permutation  every GPU sends to one partner; partners form a random
 *                derangement drawn from the run seed (nobody sends to itself,
 *                everybody receives exactly once)
 *   all-to-all   every GPU sends to every other GPU
 *   incast       traffic.fan_in GPUs send to traffic.dst at once; the
 *                senders are drawn from the run seed among the others
 *   collective   an NCCL-style collective over a group, repeated
 *                traffic.iters times; not started here but by
 *                rs_collrun_create (collrun.h), which reads the same config
 */
#ifndef RS_SYNTH_H
#define RS_SYNTH_H

#include "coll.h"
#include "net.h"

RS_BEGIN_DECLS

typedef enum {
    RS_SYNTH_SINGLE = 0,
    RS_SYNTH_PERMUTATION = 1,
    RS_SYNTH_ALL_TO_ALL = 2,
    RS_SYNTH_INCAST = 3,
    RS_SYNTH_COLLECTIVE = 4
} rs_synth_kind;

/* traffic.group: "all", "rail:R", "hb:H" or "0,8,16,24"; the longest
 * explicit list it holds is ~800 GPUs of 4 digits. */
#define RS_SYNTH_GROUP_MAX 4096

typedef struct rs_synth_config {
    uint32_t size; /* sizeof(rs_synth_config) where the caller was compiled (docs/library.md, "Versioned structs") */
    rs_synth_kind kind; /* traffic.kind */
    uint64_t bytes;     /* traffic.bytes: per message */
    uint32_t src;       /* traffic.src (single) */
    uint32_t dst;       /* traffic.dst (single, incast) */
    uint32_t fan_in;    /* traffic.fan_in (incast) */
    double start_ns;    /* traffic.start_ns */
    /* collective only (collrun.h) */
    rs_coll_op op;      /* traffic.op */
    rs_coll_algo algo;  /* traffic.algo; RS_ALGO_AUTO lets the collectives layer pick */
    uint32_t iters;     /* traffic.iters, >= 1 */
    char group[RS_SYNTH_GROUP_MAX]; /* traffic.group */
    /* workload.sync, for the iterations of a collective (collrun.h; added
     * after the first version, default RS_SYNC_RANK) */
    rs_replay_sync sync;
} rs_synth_config;

RS_API void rs_synth_config_init(rs_synth_config *c, size_t size);
static inline void rs_synth_config_default(rs_synth_config *c)
{
    rs_synth_config_init(c, sizeof *c);
}

/* Check *c against the network (GPU ids in range, fan_in < gpus, ...) and
 * schedule its messages on net at traffic.start_ns. RS_EINVAL with err
 * naming the key; kind collective is refused here (rs_collrun_create starts
 * it). The network keeps c (borrowed): it must stay valid until
 * the run has passed the start time. */
RS_API int rs_synth_start(const rs_synth_config *c, rs_net *net, uint64_t seed, rs_err *err);

/* A pattern as one job of a shared cluster (docs/shared-clusters.md): on
 * the job's n GPUs (its GPU i is gpus[i]; traffic.src, traffic.dst and
 * the draws are over the job's), sent as raw verbs (verbs 1) or NCCL's
 * (0), each arrival told to done(ctx, net, tag). Borrowed (*j, cfg, gpus)
 * until the start. */
typedef struct rs_synth_job {
    const rs_synth_config *cfg;
    const uint32_t *gpus;
    uint32_t n;
    uint32_t verbs;
    rs_net_done_fn done;
    void *ctx;
} rs_synth_job;
/* Check j's pattern against its GPUs and schedule its messages at start +
 * traffic.start_ns. RS_EINVAL with err naming the key. */
RS_API int rs_synth_start_job(const rs_synth_job *j, rs_net *net, uint64_t seed, rs_time start, rs_err *err);
/* The messages c's pattern sends over n GPUs (0 for a collective, which
 * is no pattern of messages). */
RS_API uint64_t rs_synth_messages(const rs_synth_config *c, uint32_t n);

RS_END_DECLS

#endif
