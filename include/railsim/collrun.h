/*
 * collrun.h - the collective driver behind `traffic.kind=collective`: one
 * NCCL-style collective (traffic.op, traffic.algo) over a group of GPUs
 * (traffic.group), run traffic.iters times back to back from
 * traffic.start_ns, the way nccl-tests times it. Under workload.sync=rank
 * (the default) with several iterations or a hierarchical collective, each
 * GPU issues iteration i+1 the moment its own part of iteration i is done,
 * as nccl-tests' ranks launch their ops back to back on their streams, and
 * iteration i's time is E_i - E_{i-1}, E_i the instant the last GPU
 * finished it (E_{-1} the start): the iterations run as a one-op replay
 * (replay.h). Otherwise (workload.sync=collective, one iteration of a flat
 * collective, send/recv, broadcast, reduce) iteration
 * i+1 starts at the moment iteration i has completed on every rank, and
 * each iteration's time is its end minus its start (docs/collectives.md,
 * "Iterations").
 *
 * An rs_collrun owns its communicator, the running collective and the
 * per-iteration times (traffic.iters entries, allocated at create). All
 * user-input checks happen in rs_collrun_create, before the run, so a bad
 * group or an algorithm the operation lacks is reported before anything is
 * written; the collectives layer does the op/algorithm/group checks itself
 * and its messages are passed on under the scenario key they concern.
 */
#ifndef RS_COLLRUN_H
#define RS_COLLRUN_H

#include "coll.h"
#include "comm.h"
#include "net.h"
#include "synth.h"

RS_BEGIN_DECLS

typedef struct rs_collrun rs_collrun;

/* Parse a traffic.group spec against a network of `gpus` GPUs in HB
 * domains of hb_size (1: no domains): "all", "rail:R" (GPUs R, R+K, ...),
 * "hb:H" (GPUs H*K .. H*K+K-1), or a comma-separated list of distinct GPU
 * ids in rank order ("0,8,16,24"). RS_EINVAL with err naming
 * traffic.group and what was expected; RS_ENOMEM. On success *out is the
 * caller's (rs_comm_destroy). spec is only read during the call. */
RS_API int rs_collrun_group_parse(const char *spec, uint32_t gpus, uint32_t hb_size, rs_comm **out,
                           rs_err *err);

/* A job's traffic.group over its n GPUs (rank i is gpus[i], GPU ids of a
 * network of net_gpus): "all" or a list of distinct ranks below n. With
 * gpus and out, *out is the communicator (the caller's); with either NULL
 * the spec is only checked. RS_EINVAL naming traffic.group, RS_ENOMEM. */
RS_API int rs_collrun_job_group(const char *spec, const uint32_t *gpus, uint32_t n, uint32_t net_gpus, rs_comm **out,
                                rs_err *err);

/* Check c (kind must be RS_SYNTH_COLLECTIVE) against net and schedule its
 * first iteration at traffic.start_ns. Errors, nothing scheduled and *out
 * NULL: RS_EINVAL with err naming the key (traffic.group, traffic.algo,
 * traffic.iters, traffic.start_ns); RS_ENOMEM.
 *
 * The checks run the collectives layer's own validation by starting a
 * zero-byte collective now (it moves nothing and completes from an event at
 * the current time; that event then arms the first real iteration), so
 * call this before rs_net_run, at time 0.
 *
 * c is copied; net is borrowed and must outlive the handle. *out is the
 * caller's: rs_collrun_destroy after rs_net_destroy(net), or once every
 * iteration has completed (never while one still runs). */
RS_API int rs_collrun_create(const rs_synth_config *c, rs_net *net, rs_collrun **out, rs_err *err);
/* The same for a job of a shared cluster (docs/shared-clusters.md): the
 * group is "all" or a list of the job's ranks, rank i being gpus[i] (n
 * of them, copied); iteration 0 starts at start + traffic.start_ns; done
 * (if not NULL) is called with ctx once the last iteration completes.
 * May be called while the network runs (start not before now). */
RS_API int rs_collrun_create_job(const rs_synth_config *c, rs_net *net, const uint32_t *gpus, uint32_t n,
                                 rs_time start, rs_net_done_fn done, void *ctx, rs_collrun **out, rs_err *err);
RS_API void rs_collrun_destroy(rs_collrun *r); /* NULL is a no-op */

RS_API rs_coll_op rs_collrun_op(const rs_collrun *r);
/* The algorithm of the first iteration (auto resolved); the requested one
 * (possibly RS_ALGO_AUTO) until that iteration has started. */
RS_API rs_coll_algo rs_collrun_algo(const rs_collrun *r);
/* The first iteration's NCCL protocol (rs_coll_proto_used) and what NCCL's
 * cost model predicted for it in us (rs_coll_predicted_us). */
RS_API rs_nccl_proto rs_collrun_proto(const rs_collrun *r);
RS_API double rs_collrun_predicted_us(const rs_collrun *r);
RS_API uint32_t rs_collrun_ranks(const rs_collrun *r);
RS_API uint64_t rs_collrun_bytes(const rs_collrun *r);
RS_API uint32_t rs_collrun_iters(const rs_collrun *r);      /* traffic.iters */
/* Iterations completed so far, and their times in picoseconds (end minus
 * start), borrowed until rs_collrun_destroy. */
RS_API const rs_time *rs_collrun_times(const rs_collrun *r, uint32_t *n_done);
/* RS_OK, or the error an iteration hit when starting or running (the run
 * is then stopped with that code). rs_collrun_errmsg says what when an
 * iteration could not start; "" otherwise (borrowed). */
RS_API int rs_collrun_status(const rs_collrun *r);
/* After the run (rank 0 of a split run: after rs_collrun_part_finish),
 * before asking for the results: streamed iterations read the replay's
 * end (rs_replay_finish). May be called more than once. */
RS_API void rs_collrun_finish(rs_collrun *r);
RS_API const char *rs_collrun_errmsg(const rs_collrun *r);

/* Completion time of the last completed iteration; 0 before the first. */
RS_API rs_time rs_collrun_end_time(const rs_collrun *r);
/* The share of traffic.iters done, 0..1, the running iteration counted
 * by rs_coll_progress: for a progress line, valid at any time. */
RS_API double rs_collrun_progress(const rs_collrun *r);

/* The collective's network-only bound (rs_coll_bound), mean over the
 * completed iterations, rounded to nearest (the iterations' times are
 * averaged the same way); 0 before the first. Streamed iterations: the
 * replay's bound per iteration (rs_replay_stats.bound_ps), known after
 * rs_collrun_finish once every iteration completed, 0 before. */
RS_API rs_time rs_collrun_bound(const rs_collrun *r);

/* From now on write a coll record per completed iteration into tl
 * (borrowed: it must stay open while the network runs): id = the
 * iteration's index, op, algorithm used, the group as communicator 0
 * (RS_TL_NS_COMM), its size, traffic.bytes, from the iteration's start to
 * its completion. The communicator's name record is written here: the
 * group spec ("all", "rail:3", "hb:0", or "group:0,8,16" for a list, cut
 * to ~60 characters). Streamed iterations write what a replay writes
 * (rs_replay_set_timeline): an op record per rank and iteration, a coll
 * record per iteration (in completion order), the ranks named "rank R
 * (gpu G)", the communicator as above. Call before rs_net_run. Write
 * errors stay in tl. RS_EINVAL for NULL. */
RS_API int rs_collrun_set_timeline(rs_collrun *r, rs_timeline *tl, rs_err *err);
/* A process's part of a split run's timeline other than rank 0's (which
 * rs_collrun_set_timeline takes): streamed iterations write their ranks'
 * op records there; the barrier's iterations write nothing there. */
RS_API int rs_collrun_set_timeline_part(rs_collrun *r, rs_timeline *tl, rs_err *err);
/* The same for one job of several on the network (docs/shared-clusters.md):
 * its communicator is id `comm`, named with the job ("all (ar)"), and
 * iteration i's coll record has id coll0 + i. Streamed iterations name
 * their ranks from id 0: beside other jobs, rs_collrun_set_timeline_job_at. */
RS_API int rs_collrun_set_timeline_job(rs_collrun *r, rs_timeline *tl, const char *job, uint32_t comm, uint64_t coll0,
                                       rs_err *err);
/* The same with the ids of the ranks it names given too: streamed
 * iterations name the group's ranks rank0 .. rank0 + n - 1 ("rank 2 (gpu
 * 17, job ar)"), as a job's replay does; rs_collrun_tl_ranks is how many
 * (0 behind the barrier, which writes no op records). */
RS_API int rs_collrun_set_timeline_job_at(rs_collrun *r, rs_timeline *tl, const char *job, uint32_t rank0,
                                          uint32_t comm0, uint64_t coll0, rs_err *err);
RS_API uint32_t rs_collrun_tl_ranks(const rs_collrun *r);

/* A partitioned run (docs/parallel.md): can this driver's collective run
 * split over the network's processes? Streamed iterations as their
 * replay (rs_replay_splits); else one iteration of a collective that
 * rs_coll_splits; 1, or 0 with the reason in why. */
RS_API int rs_collrun_splits(const rs_collrun *r, char *why, size_t n);
/* After the run, in every process: this process's part of the running
 * iteration (rs_coll_part_pack; an empty one when none is running), then,
 * on rank 0 with every process's part, the iteration finished as the
 * serial run finishes it (rs_coll_part_finish). Streamed iterations: the
 * replay's part and merge (rs_replay_part_pack, rs_replay_part_finish,
 * its records written into the timeline rs_collrun_timeline_move gave). */
RS_API int rs_collrun_part_pack(const rs_collrun *r, void **buf, size_t *len);
RS_API int rs_collrun_part_finish(rs_collrun *r, const void *const *all, const size_t *len, uint32_t n);
/* The coll records from now on go to tl (borrowed), the name record
 * staying where rs_collrun_set_timeline wrote it: a split run's rank 0
 * writes what rs_collrun_part_finish adds into a part of its own, since
 * its records belong before others already written. */
RS_API void rs_collrun_timeline_move(rs_collrun *r, rs_timeline *tl);

RS_END_DECLS

#endif
