/*
 * railsim.h - the whole public API of librailsim in one include:
 *
 *   #include <railsim/railsim.h>
 *   cc prog.c $(pkg-config --cflags --libs railsim)
 *
 * From the bottom up: the event engine (base.h: picosecond time and
 * errors; sim.h, rng.h; timeline.h, the msgpack timeline
 * writer), the network (net.h: build one, send, run, read its statistics;
 * partition.h, a run split over processes; fault.h, tally.h, cost.h), collectives (comm.h, coll.h), and workloads
 * (synth.h, collrun.h, plan.h, gen.h, program.h, trace.h, replay.h,
 * compute.h: the GPU compute model), and
 * whole runs from a scenario (run.h).
 * docs/library.md walks through a program that uses them. Every header
 * compiles as C (C11 or later) and as C++.
 */
#ifndef RS_RAILSIM_H
#define RS_RAILSIM_H

#include "api.h"
#include "base.h"
#include "rng.h"
#include "sim.h"
#include "timeline.h"

#include "cost.h"
#include "fault.h"
#include "net.h"
#include "partition.h"
#include "tally.h"

#include "coll.h"
#include "comm.h"

#include "chakra.h"
#include "collrun.h"
#include "compute.h"
#include "gen.h"
#include "gpu.h"
#include "plan.h"
#include "program.h"
#include "replay.h"
#include "synth.h"
#include "trace.h"

#include "fmt.h"
#include "run.h"
#include "output.h"

#endif
