/*
 * fault_int.h - what the two halves of fault injection share: the entry
 * kinds and targets, an entry (fentry) and the fault state (struct
 * rs_faults, net->flt). fault_sched.c turns faults.* into the entries
 * (parse, resolve targets, expand flaps and random failures, pair downs
 * with their ups); fault.c applies them during the run. Models-internal.
 */
#ifndef RS_FAULT_INT_H
#define RS_FAULT_INT_H

#include "fault.h"
#include "netint.h"

enum fkind {
    FK_LINK_DOWN, FK_LINK_UP, FK_SWITCH_DOWN, FK_SWITCH_UP, FK_NIC_DOWN, FK_NIC_UP,
    FK_LINK_DEGRADE, FK_LINK_RESTORE, FK_STRAGGLER, FK_STRAGGLER_END,
    FK_LINK_FLAP, /* schedule only: expands into link-down / link-up entries */
    FK_NKINDS
};
extern const char *const rs_fault_kind_names[FK_NKINDS];
enum { TGT_LINK, TGT_SWITCH, TGT_NIC, TGT_GPU };
extern const uint8_t rs_fault_kind_target[FK_NKINDS];
/* Kinds the schedule may name (the others are the second halves of pairs). */
static inline int kind_written(unsigned k) { return k != FK_LINK_RESTORE && k != FK_STRAGGLER_END; }
/* Where an entry came from (summary.json `origin`). */
enum { OR_SCHEDULE, OR_REPAIR, OR_FLAP, OR_RANDOM };
extern const char *const rs_fault_origin_names[];
/* link-flap without =PERIOD,DUTY: down 50 us of every 100 us. */
#define FLAP_PERIOD_PS 100000000ull
#define FLAP_DUTY 0.5
/* Entries a schedule may expand to (flaps and random failures included):
 * ~200 bytes each. */
#define MAX_ENTRIES 200000u
static inline int kind_is_up(unsigned k) { return k == FK_LINK_UP || k == FK_SWITCH_UP || k == FK_NIC_UP || k == FK_LINK_RESTORE; }

extern const char *const rs_fault_class_names[];
extern const uint8_t rs_fault_class_target[];

typedef struct fentry {
    rs_time t, dur;
    rs_time routes_at;
    uint64_t lost;
    uint64_t retx;          /* data packets retransmitted by flows it hit last */
    uint32_t flows_hit;     /* flows that lost a packet to it */
    uint32_t *job_flows;    /* of those, per job [1 .. RS_NET_JOBS_MAX] (rs_net_set_job); NULL: none of a job */
    uint32_t pending;       /* of those, not yet delivered */
    rs_time recovered_at;   /* the last of them delivered (its own time when none was pending) */
    uint64_t rate_bps;      /* degrade: the lowered rate */
    uint64_t saved_bps;     /* degrade, restore: the cable's nominal rate */
    uint64_t factor_ppm;    /* straggler: compute slowdown in millionths (1.5 -> 1500000) */
    uint32_t port;          /* link and NIC kinds: one port of the cable */
    uint32_t node;          /* switch kinds; straggler: the GPU */
    uint32_t seq;           /* creation order: ties in time keep it */
    uint32_t entry;         /* 1-based schedule entry it came from, 0: a random draw */
    uint32_t partner;       /* an expanded up kind (repair, flap, random, restore): its down entry; else RS_NONE */
    uint32_t hold_next;     /* holding: the next (older) entry of its target's holder list */
    uint8_t kind;
    uint8_t applied;
    uint8_t holding;        /* a down kind or degrade applied and not yet cancelled by an up */
    uint8_t origin;         /* OR_* */
    char spec[64];
    char target[48];
} fentry;

struct rs_faults {
    rs_fault_config cfg;
    fentry *e;
    uint32_t n;
    uint32_t cur;           /* last applied entry + 1 (0: none yet) */
    uint32_t ent;           /* engine entity of the fault events */
    uint32_t nstrag;        /* straggler entries (the compute model looks only when > 0) */
    uint32_t *strag;        /* [nstrag]: their indices in e, in time order */
    uint32_t last_up;       /* 1 + index of the last up-kind entry, 0: none (entries apply in index order) */
    /* What holds each cable down or slowed (docs/faults-format.md,
     * "Overlapping faults"): lists of the entries applied and not yet
     * cancelled, newest first, through fentry.hold_next; RS_NONE: empty.
     * By the cable's lower port id: its link-down / nic-down entries
     * (cab_hold) and its degrades (deg_hold); by node: switch-downs. */
    uint32_t *cab_hold, *deg_hold, *sw_hold;
    rs_time conv, wd;
    int wd_armed;           /* wd_* hold a snapshot */
    rs_time wd_since;       /* goodput and completions last changed (as seen by timeouts) */
    uint64_t wd_goodput, wd_done;
    /* Which faults hit which flow: a list per flow (rs_flow.hit) through
     * `next`, one node per (flow, fault); grows with the drops only. */
    struct hit { uint32_t fault, next; } *hits;
    size_t nhits, caphits;
    /* PFC pauses found stuck (pfc_wait): at most MAX_STUCK, deduplicated. */
    struct stuck *stuck;
    uint32_t nstuck;
    uint32_t *seen;         /* per port: search generation that visited it */
    uint8_t *verdict;       /* per port: W_* once visited in this generation (in seen's block) */
    uint32_t gen;
    /* cfg.absent_ok: schedule entries whose class has no member here. */
    struct absent { rs_time t; uint32_t entry; uint8_t kind; char spec[24]; } *absent;
    uint32_t nabsent, capabsent;
    char errmsg[1024];
};

/* fault_sched.c: the entries of schedule c (and of faults.mtbf_us's random
 * failures) resolved on net, in time order, paired, in a new fault state
 * *out (rs_fault_state_free); *out is NULL when there is nothing to apply.
 * RS_EINVAL with err naming faults.schedule for a bad entry or target,
 * RS_ENOMEM. */
/* The caller's *c (its first c->size bytes) over the defaults into *own;
 * RS_EINVAL for a configuration of no known size. */
int rs_fault_config_take(rs_fault_config *own, const rs_fault_config *c, rs_err *err);
int rs_fault_schedule_build(rs_net *net, const rs_fault_config *c, struct rs_faults **out, rs_err *err);
void rs_fault_state_free(struct rs_faults *F); /* NULL is a no-op */

/* fault_watch.c: stop the run when an unfinished message's network leg
 * has no path (force: every one that needs the network) and no repair is
 * scheduled, with `why` and the fault to blame. 1 when it stopped. */
int rs_fault_check_cut(rs_net *net, const char *why, int force);

#endif
