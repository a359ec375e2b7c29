/*
 * compute.h - the GPU compute model of a replay: how long a compute op
 * takes on a GPU, given the straggler faults of the network's schedule
 * (fault.h, rs_net_straggler_get). The network only keeps the windows;
 * the time a GPU takes to compute is the workload's business.
 */
#ifndef RS_COMPUTE_H
#define RS_COMPUTE_H

#include "net.h"

RS_BEGIN_DECLS

/* When a compute op of `duration` ps that GPU gpu starts at `start` ends:
 * inside a straggler window [TIME, TIME + DURATION) the GPU does 1/FACTOR
 * ps of work per ps (overlapping windows on one GPU multiply), outside it
 * 1. Only the part of an op inside a window is stretched; the result is
 * rounded up to the picosecond and saturates at RS_TIME_MAX (for any
 * duration; factor products saturate without changing the result).
 * start + duration (saturated) when the schedule has no straggler. Pure:
 * depends only on the schedule, not on what has run. */
RS_API rs_time rs_compute_end(const rs_net *net, uint32_t gpu, rs_time start, rs_time duration);

RS_END_DECLS

#endif
