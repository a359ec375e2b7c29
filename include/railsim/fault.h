/*
 * fault.h - fault injection: a schedule of link, switch and NIC failures
 * (and repairs, and degraded links) applied to a network while it runs,
 * route recomputation after a convergence delay, and a watchdog that stops
 * a run whose traffic can no longer make progress. docs/faults-format.md
 * describes the schedule syntax and the behaviour.
 *
 * The schedule is text: entries separated by ';', each
 * "TIME KIND TARGET [DURATION]" with TIME and DURATION in ps, ns, us, ms
 * or s. KIND is link-down, link-up, switch-down, switch-up, nic-down,
 * nic-up, link-degrade[=GBPS], link-flap[=PERIOD[,DUTY]] or
 * straggler[=FACTOR]; TARGET a port or node name as the topology names
 * them ("leaf0.p3", "gpu5.nic", "gpu5", "spine1") or a class drawn with
 * the run seed (or faults.seed): any-network-link, any-spine-link,
 * any-rail-uplink, any-spine, any-rail-switch, any-nic, any-gpu. A down
 * kind with a DURATION is repaired DURATION later; link-degrade,
 * link-flap and straggler need a DURATION (a flap becomes its down/up
 * transitions). Random failures (faults.mtbf_us) are drawn from the seed
 * before the run and join the schedule as entries of their own.
 *
 * The packet path gains one test per arrival (net->cuts_pending, for the
 * frames on a wire that failed); a down port drops what it would
 * transmit (the existing `up` test in fabric.c), routes are recomputed
 * by rs_topo_route, and everything else runs from the fault's own events.
 */
#ifndef RS_FAULT_H
#define RS_FAULT_H

#include "net.h"

RS_BEGIN_DECLS

/* Scenario keys faults.* (docs/scenario-format.md). Versioned: start from
 * rs_fault_config_default (docs/library.md, "Versioned structs"). */
typedef struct rs_fault_config {
    uint32_t size; /* sizeof(rs_fault_config) where the caller was compiled (docs/library.md, "Versioned structs") */
    char schedule[4096];   /* faults.schedule: ';'-separated entries, "" = none */
    double convergence_us; /* faults.convergence_us: failure to new routes, 0 = instant */
    double watchdog_us;    /* faults.watchdog_us: stop after this long without progress, 0 = off */
    int reroute_hb;        /* faults.reroute_hb: rail-only reaches a cut-off NIC through its HB domain */
    int baseline;          /* faults.baseline: the CLI also runs the fault-free scenario (unused here) */
    uint64_t seed;         /* faults.seed: seed of the class draws, 0 = the run seed */
    double mtbf_us;        /* faults.mtbf_us: random failures, mean time between failures per member; 0 = none */
    double mttr_us;        /* faults.mttr_us: mean time to repair */
    double horizon_us;     /* faults.horizon_us: random failures happen before this time only */
    char random_class[24]; /* faults.random_class: the class whose members fail at random */
    /* Not a scenario key (railsim compare sets it: one schedule for two
     * topologies): an entry whose class target has no member in this
     * topology (any-spine-link on a rail-only network without a spine)
     * is skipped and listed by rs_net_fault_absent_get, not RS_EINVAL.
     * Default 0. */
    int absent_ok;
} rs_fault_config;

/* No faults, instant convergence, 20 ms watchdog, HB reroute on; no
 * random failures (MTTR 100 us, class any-network-link when enabled). */
RS_API void rs_fault_config_init(rs_fault_config *c, size_t size);
static inline void rs_fault_config_default(rs_fault_config *c)
{
    rs_fault_config_init(c, sizeof *c);
}

/* A TIME or DURATION of the schedule ("150us", "0"): RS_OK and *out in
 * ps, or RS_EINVAL / RS_ERANGE. */
RS_API int rs_fault_parse_time(const char *s, rs_time *out);

/* Check the syntax of a schedule (targets are resolved only against a
 * network, by rs_net_faults_start). RS_OK, or RS_EINVAL with err naming
 * `label` (the key or option the text came from: "faults.schedule",
 * "--fault"), the entry and what was expected. */
RS_API int rs_fault_check(const char *schedule, const char *label, rs_err *err);

/* rs_fault_check on c->schedule, and the random-failure keys: a known
 * faults.random_class, faults.horizon_us and faults.mttr_us above 0 when
 * faults.mtbf_us is. RS_EINVAL with err naming the key. */
RS_API int rs_fault_config_check(const rs_fault_config *c, rs_err *err);

/* Resolve c->schedule against net (class targets are drawn with
 * c->seed, or the network's seed when it is 0; entries naming the same
 * class get distinct members, RS_EINVAL when the class has too few) and
 * schedule every entry. Call once, before traffic
 * starts (so a fault at time 0 comes first). c is copied. RS_EINVAL with
 * err naming faults.schedule for a bad entry or an unknown target;
 * RS_ENOMEM. Works at either fidelity (at flow level the flow backend carries the
 * failures: docs/fidelity.md).
 * An empty schedule does nothing and returns RS_OK. The fault state is
 * owned by net (freed by rs_net_destroy). */
RS_API int rs_net_faults_start(rs_net *net, const rs_fault_config *c, rs_err *err);

/* The schedule as resolved, repairs of down faults with a DURATION as
 * entries of their own, in time order. */
typedef struct rs_net_fault_info {
    uint32_t size; /* sizeof(rs_net_fault_info) where the caller was compiled (docs/library.md, "Versioned structs") */
    rs_time time_ps;
    char kind[24];                /* "link-down", ... */
    char target[48];              /* resolved name: "leaf0.p3" (one end of the cable), "spine1", "gpu5.nic" */
    char spec[64];                /* the target as written ("any-spine-link") */
    char origin[12];              /* "schedule", "repair" (of a down with a DURATION), "flap", "random" */
    uint32_t entry;               /* 1-based faults.schedule entry it came from; 0 for "random" */
    int applied;                  /* the run reached time_ps */
    uint64_t packets_lost;        /* link-down or no-route drops from this fault to the next, and
                                   * the frames on a wire it cut */
    rs_time routes_recomputed_at; /* RS_TIME_MAX: not (yet) */
    uint64_t packets_retransmitted; /* data packets re-sent by flows whose latest fault-caused loss was this one */
    uint32_t flows_hit;           /* flows (a message, or a relayed message's network chunk) that lost a
                                   * packet (data, ACK, NAK or CNP) to it */
    rs_time time_to_recover_ps;   /* from time_ps until the last of those flows had delivered every byte;
                                   * RS_TIME_MAX: none lost, or one never delivered */
} rs_net_fault_info;
RS_API uint32_t rs_net_fault_count(const rs_net *net);
/* RS_EINVAL if i >= rs_net_fault_count. */
RS_API int rs_net_fault_info_fill(const rs_net *net, uint32_t i, rs_net_fault_info *out, size_t size);
static inline int rs_net_fault_info_get(const rs_net *net, uint32_t i, rs_net_fault_info *out)
{
    return rs_net_fault_info_fill(net, i, out, sizeof *out);
}

/* Of fault i's flows_hit, those of job `job`'s messages (rs_net_set_job:
 * the job holding the message's source GPU when the flow was made); 0
 * for an i or job out of range. A run split over processes counts only
 * this process's flows. */
RS_API uint32_t rs_net_fault_job_flows(const rs_net *net, uint32_t i, uint32_t job);

/* With c->absent_ok: the schedule entries skipped because their class
 * has no member in this topology, in schedule order. Fills time_ps, kind,
 * spec (the class), entry and origin "absent"; target is "" and applied
 * 0. RS_EINVAL if i >= rs_net_fault_absent_count. */
RS_API uint32_t rs_net_fault_absent_count(const rs_net *net);
RS_API int rs_net_fault_absent_fill(const rs_net *net, uint32_t i, rs_net_fault_info *out, size_t size);
static inline int rs_net_fault_absent_get(const rs_net *net, uint32_t i, rs_net_fault_info *out)
{
    return rs_net_fault_absent_fill(net, i, out, sizeof *out);
}

/* PFC pauses found that cannot be released (docs/faults-format.md):
 * looked for whenever a switch refreshes a pause during a fault run, and
 * over every paused port when the faults stop the run. At most 256, each
 * (port, priority, reason, fault) once, in the order found. */
typedef struct rs_net_pfc_stuck {
    uint32_t size; /* sizeof(rs_net_pfc_stuck) where the caller was compiled (docs/library.md, "Versioned structs") */
    rs_time detected_ps;     /* first seen */
    uint32_t fault;          /* index of the fault entry it is charged to (rs_net_fault_info_get) */
    uint32_t priority;
    char port[48];           /* the paused port */
    char behind[48];         /* dead-link: the paused port with a dead cable at the end of the wait
                              * chain; cycle: a port of the loop */
    char reason[12];         /* "dead-link" or "cycle" */
} rs_net_pfc_stuck;
RS_API uint32_t rs_net_fault_pfc_stuck_count(const rs_net *net);
/* RS_EINVAL if i >= rs_net_fault_pfc_stuck_count. */
RS_API int rs_net_fault_pfc_stuck_fill(const rs_net *net, uint32_t i, rs_net_pfc_stuck *out, size_t size);
static inline int rs_net_fault_pfc_stuck_get(const rs_net *net, uint32_t i, rs_net_pfc_stuck *out)
{
    return rs_net_fault_pfc_stuck_fill(net, i, out, sizeof *out);
}

/* Why the faults stopped the run (RS_EUNREACH from rs_net_run): a
 * destination no path reaches, or the watchdog; names the GPUs and the
 * fault. "" when they did not. Borrowed, lives as long as net. */
RS_API const char *rs_net_fault_errmsg(const rs_net *net);

/* Write the timeline records (fault, routes) of the entries that applied
 * when the faults started (those due at that time: they apply at once,
 * before a timeline can be open). Call right after rs_net_timeline_start;
 * nothing happens without a timeline or such entries. */
RS_API void rs_net_faults_timeline_catchup(rs_net *net);

/* The straggler entries of the schedule, in time order: GPU gpu computes
 * factor_ppm / 1e6 times slower in [start, end) (the GPU compute model,
 * rs_compute_end in compute.h, applies them). The network only keeps
 * them: nothing in it computes. rs_net_straggler_get: RS_EINVAL when
 * i >= rs_net_straggler_count. */
typedef struct rs_net_straggler {
    uint32_t size; /* sizeof(rs_net_straggler) where the caller was compiled (docs/library.md, "Versioned structs") */
    uint32_t gpu;
    rs_time start, end;
    uint64_t factor_ppm;
} rs_net_straggler;
RS_API uint32_t rs_net_straggler_count(const rs_net *net);
RS_API int rs_net_straggler_fill(const rs_net *net, uint32_t i, rs_net_straggler *out, size_t size);
static inline int rs_net_straggler_get(const rs_net *net, uint32_t i, rs_net_straggler *out)
{
    return rs_net_straggler_fill(net, i, out, sizeof *out);
}

RS_END_DECLS

#endif
