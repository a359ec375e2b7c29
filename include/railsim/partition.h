/*
 * partition.h - one run split over processes (MPI ranks), and the names
 * the layers above give what crosses processes (docs/parallel.md).
 *
 * A serial run needs none of this. A run split over processes builds the
 * same network in every process, starts the same workload, and calls
 * rs_net_part_start before rs_net_run; the layers above name their
 * callbacks and transfers alike in every process (rs_net_cb_register,
 * rs_net_cb_reserve, rs_net_serials_reserve), start only their own GPUs'
 * work (rs_net_gpu_local), and key what they write by the event that
 * writes it (rs_net_rec_key), so rank 0's outputs are the serial run's.
 */
#ifndef RS_PARTITION_H
#define RS_PARTITION_H

#include "base.h"
#include "net.h"
#include "timeline.h"

RS_BEGIN_DECLS

/* -- partitioned runs (docs/parallel.md) ----------------------------------
 *
 * One packet-level run split over processes (MPI ranks): every process
 * builds the same network and starts the same traffic, then owns the
 * nodes of a block of HB domains (with their GPUs, NICs and NVSwitch; a
 * switch goes where most of its GPUs are, one without GPUs round robin)
 * and runs only their events. Frames that cross a cut link are the only
 * effects between processes: the sender ships each one to the receiver's
 * process, which schedules its arrival as the serial run does
 * (rs_sim_at_once). Windows are conservative: every process runs the
 * events before min(next event of any process) + the lookahead (the
 * smallest latency of a cut link), then they exchange the frames. At the
 * end the counters, ports and completion times' statistics are merged into rank 0's
 * network, so its statistics and summary are the serial run's. */

/* What the processes do together (MPI or a test's stand-in). Every call
 * is collective: every process makes it, in the same order. */
typedef struct rs_net_comm {
    void *ctx;
    uint32_t rank, ranks;
    /* v[0..n) := its minimum (max = 0) or maximum (max = 1) over the processes. */
    int (*allreduce)(void *ctx, uint64_t *v, size_t n, int max);
    /* A window's exchange: send[r] (send_len[r] bytes) to each process
     * r; *recv gets (malloc'ed: free it; NULL when nothing came) what every
     * process sent here, in process order, *recv_len bytes; and v[0..nv)
     * := its minimum over the processes, as allreduce, in the same round. */
    int (*exchange)(void *ctx, void *const *send, const size_t *send_len, uint64_t *v, size_t nv, void **recv,
                    size_t *recv_len);
    /* Process 0 gets every process's buf in *all (malloc'ed, in process
     * order), len[r] bytes from r (len has ranks entries); others get NULL. */
    int (*gather)(void *ctx, const void *buf, size_t n, void **all, size_t *len);
} rs_net_comm;

/* Can this network's run be partitioned? 1, or 0 with the reason (one
 * clause, "faults are scheduled") in why. Packet level only, without
 * faults, without a whole-run timeline already started (a partitioned
 * run writes parts: rs_net_timeline_part after rs_net_part_start), and
 * without PXN relays under transport.kind=ideal (no ACKs: a relay's
 * buffer slots free at the destination). Bit errors, captures, HB
 * domains and PXN relays split (docs/parallel.md). */
RS_API int rs_net_part_possible(const rs_net *net, char *why, size_t n);

/* Split the run over comm's processes (after the traffic is started,
 * before rs_net_run). rs_net_run then runs this process's part, and on
 * process 0 leaves the merged statistics. RS_EINVAL when not possible. */
RS_API int rs_net_part_start(rs_net *net, const rs_net_comm *comm, rs_err *err);

typedef struct rs_net_part_stats {
    uint32_t size; /* sizeof(rs_net_part_stats) where the caller was compiled (docs/library.md, "Versioned structs") */
    uint32_t ranks;
    rs_time lookahead_ps;      /* window length: the smallest cut-link latency */
    uint64_t windows;          /* synchronization rounds (two collectives each) */
    uint64_t cut_links;        /* directed links between processes */
    uint64_t frames_sent;      /* frames this process shipped to others */
    uint64_t frames_all;       /* over all processes (process 0, after the run) */
    uint64_t events_mine;      /* events this process ran */
    double sync_s;             /* wall time in the collectives */
} rs_net_part_stats;

/* Filled after rs_net_part_start; zeros for a serial run. */
RS_API void rs_net_part_stats_fill(const rs_net *net, rs_net_part_stats *out, size_t size);
static inline void rs_net_part_stats_get(const rs_net *net, rs_net_part_stats *out)
{
    rs_net_part_stats_fill(net, out, sizeof *out);
}

/* Processes the run is split over: 1 for a serial run. */
RS_API uint32_t rs_net_part_ranks(const rs_net *net);

/* Why a split run stopped with RS_EFORMAT: what was wrong with a message
 * another process sent (its wire header, its length or a record in it;
 * docs/parallel.md, "Wire format"). "" when nothing was. */
RS_API const char *rs_net_part_errmsg(const rs_net *net);

/* Where a record goes in a partitioned run's merged outputs (timeline and
 * pcapng parts): the time and key of the event that writes it, the flow
 * starts of that event before it, and its index in the event. */
typedef struct rs_net_rec_key {
    rs_time t;
    uint64_t key;
    uint32_t step, idx;
} rs_net_rec_key;
/* The running event's place, reserving the next record index for the
 * caller (records written later in the event go after it). */
RS_API void rs_net_rec_key_take(rs_net *net, rs_net_rec_key *out);
/* Records written from now on go at *k (indices counting on from k->idx),
 * as if the event k names wrote them; NULL: back to the running event's.
 * For what a partitioned run learns only at its end, such as the last
 * completion of a collective spread over processes. */
RS_API void rs_net_rec_key_pin(rs_net *net, const rs_net_rec_key *k);
/* 1 when a goes before b. */
RS_API int rs_net_rec_key_less(const rs_net_rec_key *a, const rs_net_rec_key *b);

/* Name callback fn with ctx for the processes of a partitioned run: every
 * process registers the same ones in the same order (from the shared
 * driver's events), and a callback crossing processes (a mirrored send's
 * done, rs_net_at_gpu_for) goes by its index, *index. RS_ENOMEM. */
RS_API int rs_net_cb_register(rs_net *net, rs_net_timer_fn fn, void *ctx, uint32_t *index);
/* For callbacks whose owner is made later, at different times in
 * different processes (a collective whose members join one by one, built
 * by its first member there): reserve n consecutive indices, unset, alike
 * in every process (at setup), and bind each with rs_net_cb_set once its
 * owner exists. An unset index named by another process (a mirrored
 * send's done, a shipped timer) is first given to resolve(ctx, net,
 * index), which must set it (else the run stops with RS_EINTERNAL). Each
 * reservation has its own resolver (several replays on one network, one
 * per job). *first gets the first index. RS_EINVAL when resolve is NULL
 * or n is too many, RS_ENOMEM. */
typedef void (*rs_net_cb_resolve_fn)(void *ctx, rs_net *net, uint32_t index);
RS_API int rs_net_cb_reserve(rs_net *net, uint32_t n, rs_net_cb_resolve_fn resolve, void *ctx, uint32_t *first);
/* Bind (fn NULL: unbind) reserved or registered index i. RS_EINVAL for an
 * index never given out, RS_ENOMEM. */
RS_API int rs_net_cb_set(rs_net *net, uint32_t i, rs_net_timer_fn fn, void *ctx);
/* 1 when this process runs GPU gpu's events: always in a serial run; in
 * a partitioned one, for the GPUs of its HB domains (rs_net_part_start).
 * A workload starts only its own GPUs' work (docs/parallel.md). */
RS_API int rs_net_gpu_local(const rs_net *net, uint32_t gpu);
/* The first of n consecutive flow serials, for messages that name theirs
 * (rs_net_msg.serial). */
RS_API uint64_t rs_net_serials_reserve(rs_net *net, uint64_t n);

/* A partitioned run (docs/parallel.md): this process's part of the
 * timeline at path, writing the kinds in `enabled` (rs_timeline_enabled of
 * the whole file), each record keyed for rs_timeline_merge; start the
 * timeline with it, and after the run stop it, close the part and let one
 * process merge every part into the whole file. Errors as
 * rs_timeline_create_part. */
RS_API int rs_net_timeline_part(rs_net *net, const char *path, uint32_t enabled, rs_timeline **out, rs_err *err);
RS_END_DECLS

#endif
