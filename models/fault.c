/*
 * fault.c - fault injection (fault.h, docs/faults-format.md): parse a
 * schedule, resolve its targets against the topology, apply each entry
 * from an event of its own, recompute routes after faults.convergence_us,
 * and stop a run that can no longer finish.
 *
 * Owns net->flt (the resolved entries, the watchdog state, the stop
 * message). Nothing here runs per packet: a failed port keeps its `up`
 * flag at 0 and the packet path's existing test drops what it would send
 * (so frames queued toward a failed link are lost as the port drains
 * them); a switch with a stale route sends into the dead port until the
 * routes are recomputed. Frames already on the wire when a cable fails
 * are lost too: the failure marks the link's last frame (cut_tail) and
 * the arrival path, which tests net->cuts_pending (one hot field, 0
 * except in the ~1.1 us after a cut), drops every frame up to that mark.
 *
 * Overlapping faults: each down entry holds its cable (a switch-down its
 * switch's cables) until an up entry cancels it; a cable is up when
 * nothing holds it, and only a change of that state touches the ports or
 * the flow level. Overlapping degrades: the lowest active rate.
 *
 * Flaps and random failures (faults.mtbf_us) are expanded into plain
 * down/up entries before the run: the event stream is finite (random
 * failures stop at faults.horizon_us) and a run is deterministic.
 *
 * Per entry it counts the drops it caused (link-down drops at the ports
 * it took down, no-route drops while it is the latest), the flows that
 * lost a packet to it (a list per flow, rs_flow.hit), their data
 * retransmissions (charged to a flow's latest fault) and when the last of
 * them was delivered (time to recover). PFC pauses that cannot be
 * released (pfc_wait) are looked for from switches' pause refreshes.
 *
 * Failover: after routes change, every unfinished message whose network
 * leg has no path moves to a live rail through the HB domains
 * (rs_msg_failover, net.c), faults.reroute_hb permitting.
 *
 * Stopping: after that, every unfinished message whose network leg still
 * has no path (rs_msg_cut) is cut off; if no repair is still
 * scheduled the run stops with RS_EUNREACH and a message naming the GPUs
 * and the fault. The watchdog stops a run in which neither delivered bytes
 * nor completed messages advanced for that long; it looks only when a
 * retransmit timer fires (a stuck reliable flow times out every RTO), so
 * it costs no event and no timer of its own.
 *
 * Flow level (net->fluid): no packets. A cable's change and a degrade go
 * to rs_fluid_cable_changed, new routes to rs_fluid_routes_changed; fluid.c
 * reports the flows it stops (rs_fault_note_flow_hit) and, having no
 * retransmit timers, runs the watchdog from an event of its own
 * (rs_fault_watchdog_stop). docs/fidelity.md, "Faults at flow level".
 */
#include "fault.h"

#include "fluid.h"
#include "netint.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum fkind {
    FK_LINK_DOWN, FK_LINK_UP, FK_SWITCH_DOWN, FK_SWITCH_UP, FK_NIC_DOWN, FK_NIC_UP,
    FK_LINK_DEGRADE, FK_LINK_RESTORE, FK_STRAGGLER, FK_STRAGGLER_END,
    FK_LINK_FLAP, /* schedule only: expands into link-down / link-up entries */
    FK_NKINDS
};
static const char *const kind_names[FK_NKINDS] = {
    "link-down", "link-up", "switch-down", "switch-up", "nic-down", "nic-up", "link-degrade", "link-restore",
    "straggler", "straggler-end", "link-flap"
};
enum { TGT_LINK, TGT_SWITCH, TGT_NIC, TGT_GPU };
static const uint8_t kind_target[FK_NKINDS] = {
    TGT_LINK, TGT_LINK, TGT_SWITCH, TGT_SWITCH, TGT_NIC, TGT_NIC, TGT_LINK, TGT_LINK, TGT_GPU, TGT_GPU, TGT_LINK
};
/* Kinds the schedule may name (the others are the second halves of pairs). */
static int kind_written(unsigned k) { return k != FK_LINK_RESTORE && k != FK_STRAGGLER_END; }
/* Where an entry came from (summary.json `origin`). */
enum { OR_SCHEDULE, OR_REPAIR, OR_FLAP, OR_RANDOM };
static const char *const origin_names[] = { "schedule", "repair", "flap", "random" };
/* link-flap without =PERIOD,DUTY: down 50 us of every 100 us. */
#define FLAP_PERIOD_PS 100000000ull
#define FLAP_DUTY 0.5
/* Entries a schedule may expand to (flaps and random failures included):
 * ~200 bytes each. */
#define MAX_ENTRIES 200000u
static int kind_is_up(unsigned k) { return k == FK_LINK_UP || k == FK_SWITCH_UP || k == FK_NIC_UP || k == FK_LINK_RESTORE; }

static const char *const class_names[] = {
    "any-network-link", "any-spine-link", "any-rail-uplink", "any-spine", "any-rail-switch", "any-nic", "any-gpu", NULL
};
static const uint8_t class_target[] = { TGT_LINK, TGT_LINK, TGT_LINK, TGT_SWITCH, TGT_SWITCH, TGT_NIC, TGT_GPU };

typedef struct fentry {
    rs_time t, dur;
    rs_time routes_at;
    uint64_t lost;
    uint64_t retx;          /* data packets retransmitted by flows it hit last */
    uint32_t flows_hit;     /* flows that lost a packet to it */
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
    uint32_t nstrag;        /* straggler entries (rs_net_compute_end scans only when > 0) */
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
    uint32_t nabsent;
    char errmsg[1024];
};

/* A PFC pause that cannot be released (docs/faults-format.md): port
 * `port` paused for priority `prio`, waiting on `behind` (the dead, paused
 * port at the end of its chain, or a port of the cycle it is in). */
enum { W_PROGRESS, W_DEAD, W_CYCLE, W_VISITING };
static const char *const wait_names[] = { "", "dead-link", "cycle" };
struct stuck {
    rs_time at;
    uint32_t fault;         /* the entry it is charged to */
    uint32_t port, behind;
    uint8_t prio, reason;
};
#define MAX_STUCK 256u
/* A wait chain longer than this is taken to progress (it is not followed:
 * Clos paths are a handful of hops). */
#define MAX_WAIT_DEPTH 64

void rs_fault_config_default(rs_fault_config *c)
{
    memset(c, 0, sizeof *c);
    c->convergence_us = 0;
    c->watchdog_us = 20000; /* 20 RTOs at the default transport.rto_us */
    c->reroute_hb = 1;
    c->baseline = 1;
    c->mttr_us = 100;
    snprintf(c->random_class, sizeof c->random_class, "any-network-link");
}

/* -- parsing --------------------------------------------------------------- */

/* "10us", "1.5ms", "0": a time in ps. 0 may go without a unit. */
static int parse_time(const char *s, rs_time *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v >= 0) || !isfinite(v))
        return RS_EINVAL;
    double ns_per;
    if (!strcmp(end, "ps"))
        ns_per = 1e-3;
    else if (!strcmp(end, "ns"))
        ns_per = 1;
    else if (!strcmp(end, "us"))
        ns_per = 1e3;
    else if (!strcmp(end, "ms"))
        ns_per = 1e6;
    else if (!strcmp(end, "s"))
        ns_per = 1e9;
    else if (*end == '\0' && v == 0)
        ns_per = 1;
    else
        return RS_EINVAL;
    return rs_time_from_ns(v * ns_per, out) == RS_OK ? RS_OK : RS_ERANGE;
}

typedef struct pentry {
    rs_time t, dur;
    int has_dur;
    unsigned kind;
    double gbps; /* degrade: 0 = half the link's rate */
    double factor; /* straggler: 0 = 2 */
    rs_time period; /* flap: PERIOD */
    double duty;    /* flap: the down share of each PERIOD */
    char target[64];
} pentry;

/* Parse one entry (text[0..len)). */
static int parse_entry(const char *text, size_t len, pentry *pe, const char *label, unsigned idx, rs_err *err)
{
    char buf[256], *tok[5];
    if (len >= sizeof buf)
        return rs_err_set(err, RS_EINVAL, "%s: entry %u is too long; expected \"TIME KIND TARGET [DURATION]\"",
                          label, idx);
    memcpy(buf, text, len);
    buf[len] = '\0';
    char shown[80];
    size_t sl = len < sizeof shown - 1 ? len : sizeof shown - 1;
    memcpy(shown, buf, sl);
    shown[sl] = '\0';
    int nt = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save)) {
        if (nt == 4)
            return rs_err_set(err, RS_EINVAL, "%s: entry %u '%s': too many fields; expected \"TIME KIND TARGET "
                              "[DURATION]\"", label, idx, shown);
        tok[nt++] = t;
    }
    if (nt < 3)
        return rs_err_set(err, RS_EINVAL, "%s: entry %u '%s': expected \"TIME KIND TARGET [DURATION]\"",
                          label, idx, shown);
    memset(pe, 0, sizeof *pe);
    if (parse_time(tok[0], &pe->t) != RS_OK)
        return rs_err_set(err, RS_EINVAL, "%s: entry %u '%s': TIME '%s': expected a number with a unit "
                          "(ps, ns, us, ms, s)", label, idx, shown, tok[0]);
    char *eq = strchr(tok[1], '=');
    if (eq)
        *eq = '\0';
    pe->kind = FK_NKINDS;
    for (unsigned k = 0; k < FK_NKINDS; k++)
        if (kind_written(k) && !strcmp(tok[1], kind_names[k]))
            pe->kind = k;
    if (pe->kind == FK_NKINDS)
        return rs_err_set(err, RS_EINVAL, "%s: entry %u '%s': KIND '%s': expected link-down, link-up, "
                          "switch-down, switch-up, nic-down, nic-up, link-degrade[=GBPS], "
                          "link-flap[=PERIOD[,DUTY]] or straggler[=FACTOR]", label, idx, shown, tok[1]);
    pe->period = FLAP_PERIOD_PS;
    pe->duty = FLAP_DUTY;
    if (eq && pe->kind == FK_STRAGGLER) {
        char *end;
        pe->factor = strtod(eq + 1, &end);
        if (end == eq + 1 || *end || !(pe->factor >= 1) || pe->factor > 1000)
            return rs_err_set(err, RS_EINVAL, "%s: entry %u '%s': '%s=%s': expected straggler=FACTOR with a "
                              "factor from 1 to 1000", label, idx, shown, tok[1], eq + 1);
    } else if (eq && pe->kind == FK_LINK_FLAP) {
        char *comma = strchr(eq + 1, ',');
        if (comma)
            *comma = '\0';
        char *end = NULL;
        if (parse_time(eq + 1, &pe->period) != RS_OK || pe->period == 0 ||
            (comma && ((pe->duty = strtod(comma + 1, &end)), end == comma + 1 || *end || !(pe->duty > 0) ||
                       !(pe->duty < 1))))
            return rs_err_set(err, RS_EINVAL, "%s: entry %u '%s': expected link-flap=PERIOD[,DUTY] with a "
                              "PERIOD above 0 with a unit and a DUTY (the down share) between 0 and 1",
                              label, idx, shown);
        rs_time down = (rs_time)llround((double)pe->period * pe->duty);
        if (down == 0 || down >= pe->period)
            return rs_err_set(err, RS_EINVAL, "%s: entry %u '%s': link-flap: PERIOD x DUTY must leave the link "
                              "down and up for at least 1 ps each", label, idx, shown);
    } else if (eq) {
        char *end;
        pe->gbps = strtod(eq + 1, &end);
        if (pe->kind != FK_LINK_DEGRADE || end == eq + 1 || *end || !(pe->gbps > 0) || pe->gbps > 1e6)
            return rs_err_set(err, RS_EINVAL, "%s: entry %u '%s': '%s=%s': expected link-degrade=GBPS with a "
                              "rate above 0 (Gb/s)", label, idx, shown, tok[1], eq + 1);
    }
    if (strlen(tok[2]) >= sizeof pe->target)
        return rs_err_set(err, RS_EINVAL, "%s: entry %u '%s': TARGET too long", label, idx, shown);
    strcpy(pe->target, tok[2]);
    int is_class = 0;
    for (unsigned c = 0; class_names[c]; c++)
        if (!strcmp(tok[2], class_names[c])) {
            is_class = 1;
            if (class_target[c] != kind_target[pe->kind])
                return rs_err_set(err, RS_EINVAL, "%s: entry %u '%s': class '%s' does not fit %s; expected %s",
                                  label, idx, shown, tok[2], kind_names[pe->kind],
                                  kind_target[pe->kind] == TGT_LINK ? "any-network-link, any-spine-link or any-rail-uplink"
                                  : kind_target[pe->kind] == TGT_SWITCH ? "any-spine or any-rail-switch"
                                  : kind_target[pe->kind] == TGT_NIC ? "any-nic" : "any-gpu");
        }
    if (is_class && kind_is_up(pe->kind))
        return rs_err_set(err, RS_EINVAL, "%s: entry %u '%s': %s needs a name, not a class; expected a DURATION "
                          "on the down fault instead", label, idx, shown, kind_names[pe->kind]);
    if (nt == 4) {
        if (parse_time(tok[3], &pe->dur) != RS_OK || pe->dur == 0)
            return rs_err_set(err, RS_EINVAL, "%s: entry %u '%s': DURATION '%s': expected a number above 0 with "
                              "a unit (ps, ns, us, ms, s)", label, idx, shown, tok[3]);
        if (kind_is_up(pe->kind))
            return rs_err_set(err, RS_EINVAL, "%s: entry %u '%s': %s takes no DURATION", label, idx, shown,
                              kind_names[pe->kind]);
        if (pe->t > RS_TIME_MAX / 2 || pe->dur > RS_TIME_MAX / 2)
            return rs_err_set(err, RS_EINVAL, "%s: entry %u '%s': TIME + DURATION too large", label, idx, shown);
        pe->has_dur = 1;
    } else if (pe->kind == FK_LINK_DEGRADE || pe->kind == FK_STRAGGLER || pe->kind == FK_LINK_FLAP) {
        return rs_err_set(err, RS_EINVAL, "%s: entry %u '%s': %s needs a DURATION", label, idx, shown,
                          kind_names[pe->kind]);
    }
    if (pe->kind == FK_LINK_FLAP && pe->dur / pe->period >= MAX_ENTRIES / 2)
        return rs_err_set(err, RS_EINVAL, "%s: entry %u '%s': link-flap: DURATION / PERIOD is %llu cycles; "
                          "expected fewer than %u", label, idx, shown,
                          (unsigned long long)(pe->dur / pe->period), MAX_ENTRIES / 2);
    return RS_OK;
}

/* Calls fn for each non-blank entry. */
static int parse_all(const char *s, const char *label, rs_err *err, pentry **out, uint32_t *n)
{
    uint32_t cap = 0, cnt = 0, idx = 0;
    pentry *v = NULL;
    for (const char *p = s;;) {
        const char *e = strchr(p, ';');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        size_t i = 0;
        while (i < len && isspace((unsigned char)p[i]))
            i++;
        idx++;
        if (i < len) {
            if (cnt == cap) {
                cap = cap ? cap * 2 : 8;
                pentry *g = realloc(v, cap * sizeof *g);
                if (!g) {
                    free(v);
                    return rs_err_set(err, RS_ENOMEM, "out of memory reading %s", label);
                }
                v = g;
            }
            int rc = parse_entry(p, len, &v[cnt], label, idx, err);
            if (rc != RS_OK) {
                free(v);
                return rc;
            }
            cnt++;
        }
        if (!e)
            break;
        p = e + 1;
    }
    if (out)
        *out = v;
    else
        free(v);
    if (n)
        *n = cnt;
    return RS_OK;
}

int rs_fault_parse_time(const char *s, rs_time *out) { return parse_time(s, out); }

int rs_fault_check(const char *schedule, const char *label, rs_err *err)
{
    return parse_all(schedule ? schedule : "", label, err, NULL, NULL);
}

int rs_fault_config_check(const rs_fault_config *c, rs_err *err)
{
    int rc = rs_fault_check(c->schedule, "faults.schedule", err);
    if (rc != RS_OK || !(c->mtbf_us > 0))
        return rc;
    unsigned cls = 0;
    while (class_names[cls] && strcmp(class_names[cls], c->random_class))
        cls++;
    if (!class_names[cls] || class_target[cls] == TGT_GPU)
        return rs_err_set(err, RS_EINVAL, "faults.random_class: '%s': expected any-network-link, any-spine-link, "
                          "any-rail-uplink, any-spine, any-rail-switch or any-nic", c->random_class);
    if (!(c->horizon_us > 0))
        return rs_err_set(err, RS_EINVAL, "faults.horizon_us: expected a time above 0 with faults.mtbf_us set "
                          "(random failures stop at the horizon)");
    if (!(c->mttr_us > 0))
        return rs_err_set(err, RS_EINVAL, "faults.mttr_us: expected a time above 0 with faults.mtbf_us set");
    return RS_OK;
}

/* -- targets ---------------------------------------------------------------- */

static int is_eth(const rs_port *p) { return p->kind == RS_PORT_NIC || p->kind == RS_PORT_SWITCH; }

/* Node name: the port name of its first port without ".pN" / ".nic". */
static void node_name(const rs_net *net, uint32_t node, char *buf, size_t n)
{
    rs_topo_port_name(net, net->nodes[node].port_base, buf, n);
    char *dot = strrchr(buf, '.');
    if (dot)
        *dot = '\0';
}

static uint32_t find_port(const rs_net *net, const char *name)
{
    char b[48];
    for (uint32_t i = 0; i < net->nports; i++) {
        rs_topo_port_name(net, i, b, sizeof b);
        if (!strcmp(b, name))
            return i;
    }
    return RS_NONE;
}

static uint32_t find_node(const rs_net *net, const char *name)
{
    char b[48];
    for (uint32_t i = 0; i < net->nnodes; i++) {
        if (net->nodes[i].nports == 0)
            continue;
        node_name(net, i, b, sizeof b);
        if (!strcmp(b, name))
            return i;
    }
    return RS_NONE;
}

static int tier_of(const rs_net *net, uint32_t node)
{
    const rs_node *n = &net->nodes[node];
    return n->kind == RS_NODE_SWITCH ? n->tier : 0;
}

/* Candidates of class c: ports (cables, the lower-numbered end) or nodes,
 * into out (NULL: only count them). */
static uint32_t candidates(const rs_net *net, unsigned c, uint32_t *out)
{
    uint32_t n = 0;
#define PUT(x) (out ? (void)(out[n] = (x)) : (void)0, n++)
    if (class_target[c] == TGT_LINK) {
        for (uint32_t i = 0; i < net->nports; i++) {
            const rs_port *p = &net->ports[i];
            if (!is_eth(p) || i > p->peer_port)
                continue;
            int t1 = tier_of(net, p->node), t2 = tier_of(net, p->peer_node);
            int ok = c == 0 ? 1
                   : c == 1 ? (t1 > 0 && t2 > 0 && (t1 >= 2 || t2 >= 2))
                            : (t1 == 0 || t2 == 0); /* any-rail-uplink: a GPU's cable to its rail switch */
            if (ok)
                PUT(i);
        }
    } else if (class_target[c] == TGT_SWITCH) {
        for (uint32_t i = 0; i < net->nnodes; i++) {
            int t = tier_of(net, i);
            if ((c == 3 && t >= 2) || (c == 4 && t == 1))
                PUT(i);
        }
    } else { /* NICs and GPUs */
        for (uint32_t g = 0; g < net->gpus; g++)
            PUT(g);
    }
#undef PUT
    return n;
}

/* cfg.absent_ok: schedule entry i (pe) names a class with no member in
 * this topology. 1 and the entry recorded as absent, 0 when it does not
 * (resolve handles it), -1 out of memory. */
static int note_absent(const rs_net *net, struct rs_faults *F, const pentry *pe, uint32_t i)
{
    unsigned c = 0;
    while (class_names[c] && strcmp(class_names[c], pe->target))
        c++;
    if (!F->cfg.absent_ok || !class_names[c] || candidates(net, c, NULL) > 0)
        return 0;
    struct absent *a = realloc(F->absent, ((size_t)F->nabsent + 1) * sizeof *a); /* once per entry, at start */
    if (!a)
        return -1;
    F->absent = a;
    a += F->nabsent++;
    a->t = pe->t;
    a->entry = i + 1;
    a->kind = (uint8_t)pe->kind;
    snprintf(a->spec, sizeof a->spec, "%s", class_names[c]);
    return 1;
}

/* One of the entries prev[0..nprev) drew `pick` (a port, or a node for
 * switch and GPU kinds) from the class fe names. */
static int drawn_before(const fentry *prev, uint32_t nprev, const fentry *fe, int by_node, uint32_t pick)
{
    for (const fentry *p = prev; p < prev + nprev; p++)
        if (!strcmp(p->spec, fe->spec) && (by_node ? p->node : p->port) == pick)
            return 1;
    return 0;
}

/* prev[0..fe) are the entries resolved so far; class draws use seed. */
static int resolve(rs_net *net, const pentry *pe, uint32_t idx, uint64_t seed, const fentry *prev, uint32_t nprev,
                   fentry *fe, rs_err *err)
{
    unsigned tg = kind_target[pe->kind];
    for (unsigned c = 0; class_names[c]; c++) {
        if (strcmp(pe->target, class_names[c]))
            continue;
        size_t cap = (size_t)net->nports + net->nnodes + 1;
        uint32_t *cand = malloc(cap * sizeof *cand);
        if (!cand)
            return rs_err_set(err, RS_ENOMEM, "out of memory resolving faults.schedule");
        uint32_t n = candidates(net, c, cand);
        if (n == 0) {
            free(cand);
            return rs_err_set(err, RS_EINVAL, "faults.schedule: entry %u: class '%s' has no member in this "
                              "topology", idx + 1, pe->target);
        }
        /* One stream per entry: adding an entry does not move the others'
         * draws. A member an earlier entry of the class drew is drawn
         * again (up to 16 times, then the first free one in order), so
         * the entries of one class hit distinct members. */
        rs_rng r;
        rs_rng_init(&r, seed, idx, 0xfa0171u);
        snprintf(fe->spec, sizeof fe->spec, "%s", pe->target);
        int by_node = tg == TGT_SWITCH || tg == TGT_GPU;
#define KEY(m) (tg == TGT_NIC ? net->nodes[m].port_base : (m))
        uint32_t pick = cand[rs_rng_below(&r, n)];
        for (uint32_t tries = 0; pick != RS_NONE && drawn_before(prev, nprev, fe, by_node, KEY(pick)); tries++) {
            if (tries < 16) {
                pick = cand[rs_rng_below(&r, n)];
                continue;
            }
            pick = RS_NONE;
            for (uint32_t k = 0; k < n && pick == RS_NONE; k++)
                if (!drawn_before(prev, nprev, fe, by_node, KEY(cand[k])))
                    pick = cand[k];
        }
#undef KEY
        free(cand);
        if (pick == RS_NONE)
            return rs_err_set(err, RS_EINVAL, "faults.schedule: entry %u: class '%s' has %u member(s) in this "
                              "topology, all drawn by earlier entries; expected at most %u entries naming it",
                              idx + 1, pe->target, n, n);
        if (tg == TGT_SWITCH || tg == TGT_GPU)
            fe->node = pick;
        else if (tg == TGT_NIC)
            fe->port = net->nodes[pick].port_base;
        else
            fe->port = pick;
        goto named;
    }
    if (tg == TGT_SWITCH) {
        fe->node = find_node(net, pe->target);
        if (fe->node == RS_NONE || net->nodes[fe->node].kind != RS_NODE_SWITCH)
            return rs_err_set(err, RS_EINVAL, "faults.schedule: entry %u: '%s' is not an Ethernet switch of this "
                              "topology; expected a name like leaf0, spine1, rail2-leaf0 or a class", idx + 1,
                              pe->target);
    } else if (tg == TGT_GPU) {
        unsigned g;
        int used = 0;
        if (sscanf(pe->target, "gpu%u%n", &g, &used) != 1 || pe->target[used] || g >= net->gpus)
            return rs_err_set(err, RS_EINVAL, "faults.schedule: entry %u: '%s' is not a GPU of this topology; "
                              "expected gpu0 .. gpu%u or any-gpu", idx + 1, pe->target, net->gpus - 1);
        fe->node = g;
    } else if (tg == TGT_NIC) {
        uint32_t node = find_node(net, pe->target);
        uint32_t port = find_port(net, pe->target);
        if (node != RS_NONE && node < net->gpus)
            port = net->nodes[node].port_base;
        if (port == RS_NONE || net->ports[port].kind != RS_PORT_NIC)
            return rs_err_set(err, RS_EINVAL, "faults.schedule: entry %u: '%s' is not a GPU NIC; expected gpuN, "
                              "gpuN.nic or any-nic", idx + 1, pe->target);
        fe->port = port;
    } else {
        fe->port = find_port(net, pe->target);
        if (fe->port == RS_NONE || !is_eth(&net->ports[fe->port]))
            return rs_err_set(err, RS_EINVAL, "faults.schedule: entry %u: '%s' is not an Ethernet port of this "
                              "topology; expected a port name like leaf0.p3 or gpu5.nic, or a class", idx + 1,
                              pe->target);
    }
named:
    if (tg == TGT_GPU)
        snprintf(fe->target, sizeof fe->target, "gpu%u", fe->node);
    else if (tg == TGT_SWITCH)
        node_name(net, fe->node, fe->target, sizeof fe->target);
    else
        rs_topo_port_name(net, fe->port, fe->target, sizeof fe->target);
    snprintf(fe->spec, sizeof fe->spec, "%s", pe->target);
    return RS_OK;
}

/* -- applying -------------------------------------------------------------- */

static void ev_fault(rs_sim *sim, void *obj, uint64_t i);
static void ev_converge(rs_sim *sim, void *obj, uint64_t i);

static void set_rate(rs_port *p, uint64_t bps)
{
    p->rate_bps = bps;
    p->ps_per_byte = (8 * RS_PS_PER_S) % bps == 0 ? 8 * RS_PS_PER_S / bps : 0;
}

/* The cable of port p failed: whatever is on its wire now is lost. Only
 * the link's last frame is known (fly_tail); arrivals come in order, so
 * every frame up to and including it is lost (rs_fault_arrival_lost).
 * A second failure before they have arrived moves the mark to the newer
 * last frame. */
static void cut_wire(rs_net *net, rs_port *p)
{
    if (!p->fly_tail)
        return;
    if (!p->cut_tail)
        net->cuts_pending++;
    p->cut_tail = p->fly_tail;
}

int rs_fault_arrival_lost(rs_net *net, rs_pkt *pkt)
{
    rs_port *p = &net->ports[pkt->link];
    if (!p->cut_tail)
        return 0;
    if (p->cut_tail == pkt) {
        p->cut_tail = NULL;
        net->cuts_pending--;
    }
    rs_fabric_drop(net, p, pkt, RS_DROP_LINK_DOWN);
    return 1;
}

/* Entry i applies and holds its target: first in the target's list. */
static void hold(struct rs_faults *F, uint32_t *head, uint32_t i)
{
    F->e[i].hold_next = *head;
    F->e[i].holding = 1;
    *head = i;
}

/* Up entry i cancels one holder of its target: its own down entry when
 * that still holds, else the oldest (an up written in the schedule
 * repairs the longest-standing down of its kind). Nothing when none
 * holds: the count never goes below 0. */
static void release(struct rs_faults *F, uint32_t *head, uint32_t i)
{
    uint32_t victim = F->e[i].partner;
    if (victim == RS_NONE || !F->e[victim].holding)
        for (uint32_t h = *head; h != RS_NONE; h = F->e[h].hold_next)
            victim = h;
    if (victim == RS_NONE || !F->e[victim].holding)
        return;
    uint32_t *link = head;
    while (*link != victim)
        link = &F->e[*link].hold_next;
    *link = F->e[victim].hold_next;
    F->e[victim].holding = 0;
}

static uint32_t cable_id(const rs_net *net, uint32_t port)
{
    uint32_t peer = net->ports[port].peer_port;
    return port < peer ? port : peer;
}

/* The earliest applied entry still holding the cable of port p down:
 * its own downs or either end's switch-down. RS_NONE: none. */
static uint32_t cable_holder(const rs_net *net, uint32_t port)
{
    const struct rs_faults *F = net->flt;
    const rs_port *p = &net->ports[port];
    uint32_t heads[3] = { F->cab_hold[cable_id(net, port)], F->sw_hold[p->node], F->sw_hold[p->peer_node] };
    uint32_t first = RS_NONE;
    for (unsigned k = 0; k < 3; k++)
        for (uint32_t h = heads[k]; h != RS_NONE; h = F->e[h].hold_next)
            if (h < first)
                first = h;
    return first;
}

/* Bring the cable of port `port` to the state its holders give: down
 * while any entry holds it, up when none does. Only a change of state
 * cuts the wire, kicks the ports or tells the flow level. */
static void set_cable(rs_net *net, uint32_t port)
{
    rs_port *p = &net->ports[port], *q = &net->ports[p->peer_port];
    uint32_t holder = cable_holder(net, port);
    uint8_t up = holder == RS_NONE;
    if (up == p->up) {
        /* Still down: its drops go to an entry that still holds it. */
        if (!up && !net->flt->e[p->down_fault].holding)
            p->down_fault = q->down_fault = holder;
        return;
    }
    if (!up) {
        cut_wire(net, p);
        cut_wire(net, q);
        p->down_fault = q->down_fault = net->flt->cur - 1;
    }
    p->up = q->up = up;
    if (net->fluid) {
        /* Flow level: capacities and parked flows (fluid.c). */
        int rc = rs_fluid_cable_changed(net, port);
        if (rc != RS_OK)
            rs_sim_stop(net->sim, rc);
        return;
    }
    /* Queued frames now drain into the dead link (dropped, counted); on
     * repair, whatever waits starts moving. */
    rs_port_kick(net, p);
    rs_port_kick(net, q);
}

/* The cable of port `port` runs at the lowest rate of the degrades
 * holding it, at its nominal rate when none does. */
static void set_cable_rate(rs_net *net, uint32_t port, uint64_t nominal)
{
    const struct rs_faults *F = net->flt;
    rs_port *p = &net->ports[port];
    uint64_t bps = nominal;
    for (uint32_t h = F->deg_hold[cable_id(net, port)]; h != RS_NONE; h = F->e[h].hold_next)
        if (F->e[h].rate_bps < bps)
            bps = F->e[h].rate_bps;
    if (bps == p->rate_bps)
        return;
    set_rate(p, bps);
    set_rate(&net->ports[p->peer_port], bps);
    int rc;
    if (net->fluid && (rc = rs_fluid_cable_changed(net, port)) != RS_OK)
        rs_sim_stop(net->sim, rc);
}

/* An up entry is still to come. Entries apply in index order (F->cur is
 * one past the last applied), so that is the last up entry's index being
 * at least F->cur: O(1), since it runs at every route change and a flap
 * or random failures can make tens of thousands of those. */
static int repair_pending(const struct rs_faults *F)
{
    return F->last_up > F->cur;
}

static int describe_fault(const struct rs_faults *F, uint32_t i, char *buf, size_t n)
{
    const fentry *e = &F->e[i];
    int drawn = !strncmp(e->spec, "any-", 4);
    return snprintf(buf, n, "fault %u (%s %s%s%s at %.3f us)", i + 1, kind_names[e->kind], e->target,
                    drawn ? " drawn from " : "", drawn ? e->spec : "", (double)e->t / 1e6);
}

/* -- PFC pauses that cannot be released ---------------------------------- */

/* Can port p's priority q drain? W_PROGRESS: it is not paused, or its
 * pause will be lifted by an XON (its pauser is below XOFF again) or by
 * the pauser's queues draining (at least one egress queue that holds
 * bytes of the pausing ingress port can make progress: it is not paused,
 * so it sends, or drops into a dead link). W_DEAD: p is paused and its
 * cable is down, or everything it waits on ends in such a port: no resume
 * can cross a dead cable, the pause holds until its quanta run out, and
 * behind it the pauser keeps refreshing. W_CYCLE: the waits form a loop
 * (a PFC deadlock): never released. *culprit gets the port at the end.
 * O(the pausers' queued packets along the chain); runs only from PFC
 * refresh events and stops of fault runs. */
static unsigned pfc_wait(rs_net *net, uint32_t pid, unsigned q, int depth, uint32_t *culprit)
{
    struct rs_faults *F = net->flt;
    rs_port *p = &net->ports[pid];
    if (!(p->paused & (1u << q)) || depth > MAX_WAIT_DEPTH)
        return W_PROGRESS;
    if (F->seen[pid] == F->gen) {
        if (F->verdict[pid] == W_VISITING) {
            *culprit = pid;
            return W_CYCLE;
        }
        return F->verdict[pid];
    }
    F->seen[pid] = F->gen;
    F->verdict[pid] = W_VISITING;
    unsigned v;
    const rs_port *in = &net->ports[p->peer_port]; /* the pauser: the switch's ingress from p */
    if (!p->up) {
        *culprit = pid;
        v = W_DEAD;
    } else if (!(in->pause_sent & (1u << q)) || net->nodes[p->peer_node].kind != RS_NODE_SWITCH) {
        v = W_PROGRESS; /* a resume is on its way */
    } else {
        /* Stuck only if every egress queue holding the pauser's bytes is. */
        const rs_node *sw = &net->nodes[p->peer_node];
        unsigned held = 0, drains = 0;
        v = W_DEAD;
        for (uint32_t k = 0; k < sw->nports && !drains; k++) {
            uint32_t eid = sw->port_base + k;
            const rs_pkt *x = net->ports[eid].q[q].head;
            while (x && x->in_port != p->peer_port)
                x = x->next;
            if (!x)
                continue;
            held = 1;
            unsigned w = pfc_wait(net, eid, q, depth + 1, culprit);
            if (w == W_PROGRESS)
                drains = 1;
            else if (w == W_CYCLE)
                v = W_CYCLE;
        }
        if (drains || !held)
            v = W_PROGRESS;
    }
    /* PROGRESS and DEAD do not depend on the ports being visited above
     * this one: keep them for the rest of the search; a CYCLE verdict may
     * (the loop may close through an ancestor that drains another way),
     * so it is computed again if asked again. */
    if (v == W_CYCLE)
        F->seen[pid] = 0;
    F->verdict[pid] = (uint8_t)v;
    return v;
}

/* Check the pause port pid (paused for priority q) is under: record it
 * when it cannot be released. Returns the verdict. */
static unsigned pfc_check(rs_net *net, uint32_t pid, unsigned q)
{
    struct rs_faults *F = net->flt;
    if (!F->seen) {
        /* One block for both: a failure leaves neither set. */
        uint32_t *seen = calloc(net->nports, sizeof *F->seen + sizeof *F->verdict);
        if (!seen) {
            rs_sim_stop(net->sim, RS_ENOMEM);
            return W_PROGRESS;
        }
        F->seen = seen;
        F->verdict = (uint8_t *)(seen + net->nports);
    }
    if (++F->gen == 0) {
        memset(F->seen, 0, net->nports * sizeof *F->seen);
        F->gen = 1;
    }
    uint32_t culprit = pid;
    unsigned v = pfc_wait(net, pid, q, 0, &culprit);
    if (v == W_PROGRESS)
        return v;
    /* Charged to the fault that took the dead port down, or for a cycle
     * to the latest fault (the routes it led to). */
    uint32_t fault = v == W_DEAD && !net->ports[culprit].up ? net->ports[culprit].down_fault : F->cur - 1;
    for (uint32_t i = 0; i < F->nstuck; i++) {
        const struct stuck *x = &F->stuck[i];
        if (x->port == pid && x->prio == q && x->reason == v && x->fault == fault)
            return v;
    }
    if (F->nstuck >= MAX_STUCK)
        return v;
    if (!F->stuck && !(F->stuck = calloc(MAX_STUCK, sizeof *F->stuck))) {
        rs_sim_stop(net->sim, RS_ENOMEM);
        return v;
    }
    F->stuck[F->nstuck++] = (struct stuck){ rs_sim_now(net->sim), fault, pid, culprit, (uint8_t)q, (uint8_t)v };
    return v;
}

/* Port pid (a switch's ingress side) is refreshing its pause of the peer:
 * is that pause one that cannot be released? */
void rs_fault_note_pfc_hold(rs_net *net, uint32_t pid)
{
    const rs_port *in = &net->ports[pid];
    for (unsigned q = 0; q < RS_NPRIO; q++)
        if (in->pause_sent & (1u << q))
            pfc_check(net, in->peer_port, q);
}

/* Every paused port, when the run stops: append the stuck ones to the
 * stop message. */
static void pfc_stop_report(rs_net *net)
{
    struct rs_faults *F = net->flt;
    size_t cap = sizeof F->errmsg, len = strlen(F->errmsg);
    uint32_t shown = 0, total = 0;
    for (uint32_t i = 0; i < net->nports; i++) {
        for (unsigned q = 0; q < RS_NPRIO && net->ports[i].paused; q++) {
            if (!(net->ports[i].paused & (1u << q)) || pfc_check(net, i, q) == W_PROGRESS)
                continue;
            total++;
            const struct stuck *x = NULL;
            for (uint32_t k = 0; k < F->nstuck; k++)
                if (F->stuck[k].port == i && F->stuck[k].prio == q)
                    x = &F->stuck[k];
            if (!x || shown >= 8 || len + 1 >= cap)
                continue;
            char a[48], b[48];
            rs_topo_port_name(net, x->port, a, sizeof a);
            rs_topo_port_name(net, x->behind, b, sizeof b);
            len += (size_t)snprintf(F->errmsg + len, cap - len, "%s %s priority %u (%s %s)",
                                    shown ? "," : "; PFC pauses that cannot be released:", a, q,
                                    x->reason == W_DEAD ? "behind dead link at" : "in a cycle through", b);
            shown++;
        }
    }
    if (total > shown && len + 1 < cap)
        snprintf(F->errmsg + len, cap - len, " and %u more", total - shown);
}

/* List unfinished messages whose network leg has no path; stop if any.
 * `why` prefixes the message. Returns 1 when it stopped the run. */
static int check_cut(rs_net *net, const char *why, int force)
{
    struct rs_faults *F = net->flt;
    if (!force && repair_pending(F))
        return 0; /* a scheduled repair may reconnect them: the watchdog decides */
    size_t len = 0, cap = sizeof F->errmsg;
    uint32_t cut = 0, nshown = 0, shown[16][4]; /* distinct (src, dst, a, b) listed */
    for (uint32_t m = 0; m < net->nmsgs; m++) {
        const rs_msg *msg = &net->msgs[m];
        if (!rs_msg_needs_network(net, m))
            continue;
        if (!force && !rs_msg_cut(net, m))
            continue;
        int seen = 0;
        for (uint32_t k = 0; k < nshown && !seen; k++)
            seen = shown[k][0] == msg->src && shown[k][1] == msg->dst && shown[k][2] == msg->a &&
                   shown[k][3] == msg->b;
        if (cut == 0) {
            len = (size_t)snprintf(F->errmsg, cap, "%s", why);
            if (F->cur > 0 && len < cap) {
                len += (size_t)snprintf(F->errmsg + len, cap - len, " after ");
                if (len < cap)
                    len += (size_t)describe_fault(F, F->cur - 1, F->errmsg + len, cap - len);
            }
            if (len < cap)
                len += (size_t)snprintf(F->errmsg + len, cap - len, ": undeliverable messages (source GPU->destination GPU):");
        }
        if (!seen && nshown < 16 && len < cap) {
            shown[nshown][0] = msg->src;
            shown[nshown][1] = msg->dst;
            shown[nshown][2] = msg->a;
            shown[nshown][3] = msg->b;
            nshown++;
            if (msg->a != msg->src || msg->b != msg->dst)
                len += (size_t)snprintf(F->errmsg + len, cap - len, " %u->%u (via %u->%u)", msg->src, msg->dst,
                                        msg->a, msg->b);
            else
                len += (size_t)snprintf(F->errmsg + len, cap - len, " %u->%u", msg->src, msg->dst);
        }
        cut++;
    }
    if (cut == 0)
        return 0;
    if (cut > nshown && len < cap)
        snprintf(F->errmsg + len, cap - len, " (%u message(s) in all)", cut);
    pfc_stop_report(net);
    rs_sim_stop(net->sim, RS_EUNREACH);
    return 1;
}

static void routes_changed(rs_net *net, uint32_t i)
{
    struct rs_faults *F = net->flt;
    int rc = rs_topo_route(net);
    if (rc != RS_OK) {
        rs_sim_stop(net->sim, rc);
        return;
    }
    if (net->fluid && (rc = rs_fluid_routes_changed(net)) != RS_OK) {
        rs_sim_stop(net->sim, rc);
        return;
    }
    F->e[i].routes_at = rs_sim_now(net->sim);
    if (RS_UNLIKELY(net->tl != NULL))
        rs_nettl_fault(net, F->e[i].target, "routes", "recomputed");
    /* Failover: a message whose network leg lost its path moves to a live
     * rail through the HB domains now, repair scheduled or not (the
     * endpoints cannot know one is coming). O(messages), per route change. */
    if (F->cfg.reroute_hb && net->K > 1)
        for (uint32_t m = 0; m < net->nmsgs; m++)
            if (rs_msg_needs_network(net, m) &&
                (net->msgs[m].fo || rs_net_path_links(net, net->msgs[m].a, net->msgs[m].b) < 0))
                rs_msg_failover(net, m, i);
    check_cut(net, "faults: no path left", 0);
}

static void ev_fault(rs_sim *sim, void *obj, uint64_t i)
{
    rs_net *net = obj;
    struct rs_faults *F = net->flt;
    fentry *e = &F->e[i];
    e->applied = 1;
    F->cur = (uint32_t)i + 1;
    switch (e->kind) {
    case FK_LINK_DOWN:
    case FK_NIC_DOWN:
        hold(F, &F->cab_hold[cable_id(net, e->port)], (uint32_t)i);
        set_cable(net, e->port);
        break;
    case FK_LINK_UP:
    case FK_NIC_UP:
        release(F, &F->cab_hold[cable_id(net, e->port)], (uint32_t)i);
        set_cable(net, e->port);
        break;
    case FK_SWITCH_DOWN:
    case FK_SWITCH_UP: {
        const rs_node *n = &net->nodes[e->node];
        if (e->kind == FK_SWITCH_DOWN)
            hold(F, &F->sw_hold[e->node], (uint32_t)i);
        else
            release(F, &F->sw_hold[e->node], (uint32_t)i);
        for (uint32_t k = 0; k < n->nports; k++)
            set_cable(net, n->port_base + k);
        break;
    }
    case FK_LINK_DEGRADE:
    case FK_LINK_RESTORE:
        if (e->kind == FK_LINK_DEGRADE)
            hold(F, &F->deg_hold[cable_id(net, e->port)], (uint32_t)i);
        else
            release(F, &F->deg_hold[cable_id(net, e->port)], (uint32_t)i);
        set_cable_rate(net, e->port, e->saved_bps);
        break;
    default:
        break;
    }
    if (RS_UNLIKELY(net->tl != NULL))
        rs_nettl_fault(net, e->target, kind_names[e->kind], e->spec);
    if (e->kind == FK_LINK_DEGRADE || e->kind == FK_LINK_RESTORE || kind_target[e->kind] == TGT_GPU)
        return; /* routes do not change; a straggler acts through rs_net_compute_end */
    if (F->conv == 0)
        routes_changed(net, (uint32_t)i);
    else
        rs_sim_at(sim, rs_sim_now(sim) + F->conv, F->ent, ev_converge, net, i);
}

static void ev_converge(rs_sim *sim, void *obj, uint64_t i)
{
    (void)sim;
    routes_changed(obj, (uint32_t)i);
}

/* Called on every retransmit timeout (never per packet). A stuck run is
 * one whose reliable flows keep timing out: checking here costs no event
 * of its own and leaves no timer running after the traffic ends. */
void rs_fault_note_timeout(rs_net *net)
{
    struct rs_faults *F = net->flt;
    rs_time now = rs_sim_now(net->sim);
    if (net->st.goodput_bytes != F->wd_goodput || net->st.msgs_done != F->wd_done || !F->wd_armed) {
        F->wd_goodput = net->st.goodput_bytes;
        F->wd_done = net->st.msgs_done;
        F->wd_since = now;
        F->wd_armed = 1;
        return;
    }
    if (F->wd == 0 || now - F->wd_since < F->wd)
        return;
    rs_fault_watchdog_stop(net, F->wd_since);
}

rs_time rs_fault_watchdog_ps(const rs_net *net) { return net->flt->wd; }

void rs_fault_watchdog_stop(rs_net *net, rs_time since)
{
    char why[160];
    snprintf(why, sizeof why, "faults: watchdog: no progress for %.3f us with %llu message(s) undelivered",
             (double)(rs_sim_now(net->sim) - since) / 1e6, (unsigned long long)(net->st.msgs - net->st.msgs_done));
    check_cut(net, why, 1);
}

void rs_fault_note_send(rs_net *net, uint32_t a, uint32_t b)
{
    if (rs_net_path_links(net, a, b) < 0)
        check_cut(net, "faults: no path left", 0); /* O(messages), once: it stops the run */
}

/* Remember that fault i hit flow f (once per flow and fault), for its
 * retransmissions and its recovery time. */
static void note_hit(rs_net *net, rs_flow *f, uint32_t i)
{
    struct rs_faults *F = net->flt;
    fentry *e = &F->e[i];
    f->hit_last = i;
    for (uint32_t h = f->hit; h != RS_NONE; h = F->hits[h].next)
        if (F->hits[h].fault == i)
            return;
    if (rs_grow(&F->hits, &F->caphits, F->nhits, sizeof *F->hits) != RS_OK) {
        rs_sim_stop(net->sim, RS_ENOMEM);
        return;
    }
    F->hits[F->nhits] = (struct hit){ i, f->hit };
    f->hit = (uint32_t)F->nhits++;
    e->flows_hit++;
    if (!f->rx_done)
        e->pending++;
    else if (e->recovered_at < e->t)
        e->recovered_at = e->t; /* delivered already (an ACK was lost): nothing to wait for */
}

/* A link-down drop is the fault's that took its port down (the frames on
 * the wire it cut included, even after a repair applied); a no-route drop
 * is the latest fault's (the routes it led to). A failover drop is the
 * fault's whose route change abandoned the flow (kept in its hit_last,
 * which nothing changes after). */
void rs_fault_note_drop(rs_net *net, const rs_port *p, const rs_pkt *pkt, unsigned reason)
{
    struct rs_faults *F = net->flt;
    const rs_flow *gone = pkt->flow < net->nflows && net->flows[pkt->flow].gone ? &net->flows[pkt->flow] : NULL;
    uint32_t i = reason == RS_DROP_FAILOVER ? (gone ? gone->hit_last : RS_NONE) : p ? p->down_fault : F->cur - 1;
    if (i >= F->n)
        return;
    F->e[i].lost++;
    if (pkt->flow < net->nflows && !gone)
        note_hit(net, &net->flows[pkt->flow], i);
}

/* Flow level: the flow stopped (fluid.c parked it); no packet is lost. */
void rs_fault_note_flow_hit(rs_net *net, const rs_port *dead, uint32_t fid)
{
    uint32_t i = dead ? dead->down_fault : net->flt->cur - 1;
    if (i < net->flt->n)
        note_hit(net, &net->flows[fid], i);
}

void rs_fault_note_failover(rs_net *net, uint32_t fid, uint32_t m, uint32_t fault)
{
    struct rs_faults *F = net->flt;
    rs_flow *f = &net->flows[fid];
    note_hit(net, f, fault); /* before it is abandoned: the fault waits for the message */
    f->hit_last = fault;
    if (f->hit == RS_NONE)
        return;
    uint32_t tail = f->hit;
    while (F->hits[tail].next != RS_NONE)
        tail = F->hits[tail].next;
    F->hits[tail].next = net->msgs[m].hit;
    net->msgs[m].hit = f->hit;
    f->hit = RS_NONE;
}

void rs_fault_note_retx(rs_net *net, const rs_flow *f)
{
    net->flt->e[f->hit_last].retx++;
}

/* The flows or messages of hit list `head` delivered everything. */
static void deliver_hits(rs_net *net, uint32_t head)
{
    struct rs_faults *F = net->flt;
    rs_time now = rs_sim_now(net->sim);
    for (uint32_t h = head; h != RS_NONE; h = F->hits[h].next) {
        fentry *e = &F->e[F->hits[h].fault];
        e->pending--;
        if (e->recovered_at < now)
            e->recovered_at = now;
        if (e->pending == 0 && RS_UNLIKELY(net->tl != NULL)) {
            /* Its last hit flow is delivered: time_ps + time_to_recover_ps. */
            char d[24];
            snprintf(d, sizeof d, "fault %u", F->hits[h].fault + 1);
            rs_nettl_fault(net, e->target, "recovered", d);
        }
    }
}

void rs_fault_note_delivered(rs_net *net, const rs_flow *f) { deliver_hits(net, f->hit); }

void rs_fault_note_msg_delivered(rs_net *net, uint32_t m) { deliver_hits(net, net->msgs[m].hit); }

int rs_fault_reroute_hb(const rs_net *net) { return net->flt->cfg.reroute_hb; }

int rs_fault_path_ok(const rs_net *net, uint32_t a, uint32_t b) { return rs_net_path_links(net, a, b) >= 0; }

void rs_fault_free(rs_net *net)
{
    if (!net->flt)
        return;
    free(net->flt->e);
    free(net->flt->stuck);
    free(net->flt->hits);
    free(net->flt->seen); /* verdict too: one block */
    free(net->flt->cab_hold);
    free(net->flt->deg_hold);
    free(net->flt->sw_hold);
    free(net->flt->absent);
    free(net->flt);
    net->flt = NULL;
}

/* Room for one more entry in F->e (zeroed, in creation order); NULL when
 * the schedule expands past MAX_ENTRIES or memory runs out. */
static fentry *add_entry(struct rs_faults *F, size_t *cap)
{
    if (F->n >= MAX_ENTRIES || rs_grow(&F->e, cap, F->n, sizeof *F->e) != RS_OK)
        return NULL;
    fentry *f = &F->e[F->n];
    memset(f, 0, sizeof *f);
    f->seq = F->n++;
    f->routes_at = RS_TIME_MAX;
    return f;
}

static unsigned up_kind(unsigned down)
{
    return down == FK_SWITCH_DOWN ? FK_SWITCH_UP : down == FK_NIC_DOWN ? FK_NIC_UP
         : down == FK_LINK_DEGRADE ? FK_LINK_RESTORE : down == FK_STRAGGLER ? FK_STRAGGLER_END : FK_LINK_UP;
}

/* The entries of schedule entry i (pe), resolved: itself, its repair, or
 * a flap's transitions. */
static int expand_entry(rs_net *net, struct rs_faults *F, size_t *cap, const pentry *pe, uint32_t i, rs_err *err)
{
    int absent = note_absent(net, F, pe, i);
    if (absent)
        return absent > 0 ? RS_OK : rs_err_set(err, RS_ENOMEM, "out of memory starting faults");
    fentry res;
    memset(&res, 0, sizeof res);
    int rc = resolve(net, pe, i, F->cfg.seed ? F->cfg.seed : net->cfg.seed, F->e, F->n, &res, err);
    if (rc != RS_OK)
        return rc;
    res.entry = i + 1;
    res.routes_at = RS_TIME_MAX;
    if (pe->kind == FK_LINK_DEGRADE) {
        uint64_t now_bps = net->ports[res.port].rate_bps;
        res.saved_bps = now_bps;
        res.rate_bps = pe->gbps > 0 ? (uint64_t)llround(pe->gbps * 1e9) : now_bps / 2;
        if (res.rate_bps == 0 || res.rate_bps > now_bps)
            return rs_err_set(err, RS_EINVAL, "faults.schedule: entry %u: link-degrade=%g: expected a rate above 0 "
                              "and at most the link's %g Gb/s", i + 1, pe->gbps, (double)now_bps / 1e9);
    }
    if (pe->kind == FK_STRAGGLER) {
        res.factor_ppm = (uint64_t)llround((pe->factor > 0 ? pe->factor : 2.0) * 1e6);
        res.dur = pe->dur;
        F->nstrag++;
    }
    /* A flap: down at the start of every PERIOD for DUTY of it, the last
     * up at the end of DURATION at the latest. */
    rs_time step = pe->kind == FK_LINK_FLAP ? pe->period : RS_TIME_MAX;
    rs_time down = pe->kind == FK_LINK_FLAP ? (rs_time)llround((double)pe->period * pe->duty) : pe->dur;
    rs_time end = pe->t + pe->dur;
    for (rs_time t = pe->t;; t += step) {
        fentry *f = add_entry(F, cap);
        if (!f)
            goto full;
        uint32_t seq = f->seq;
        *f = res;
        f->seq = seq;
        f->t = t;
        f->origin = pe->kind == FK_LINK_FLAP ? OR_FLAP : OR_SCHEDULE;
        f->kind = pe->kind == FK_LINK_FLAP ? FK_LINK_DOWN : (uint8_t)pe->kind;
        if (!pe->has_dur)
            break;
        fentry *r = add_entry(F, cap);
        if (!r)
            goto full;
        seq = r->seq;
        *r = *f;
        r->seq = seq;
        r->t = end - t > down ? t + down : end;
        r->kind = (uint8_t)up_kind(f->kind);
        r->origin = pe->kind == FK_LINK_FLAP ? OR_FLAP : OR_REPAIR;
        if (pe->kind != FK_LINK_FLAP || end - t <= step)
            break;
    }
    return RS_OK;
full:
    return F->n >= MAX_ENTRIES ? rs_err_set(err, RS_EINVAL, "faults.schedule: entry %u: the schedule expands to more "
                                            "than %u entries", i + 1, MAX_ENTRIES)
                               : rs_err_set(err, RS_ENOMEM, "out of memory starting faults");
}

/* An exponential draw of mean `mean` ps, at least 1 ps. */
static double exp_draw(rs_rng *r, double mean)
{
    double d = -mean * log1p(-rs_rng_unit(r));
    return d < 1 ? 1 : d;
}

/* Random failure and repair times are capped at 2^62 ps (53 days, far
 * past any run; a draw passes it only with faults.mttr_us near its 1e12
 * limit), below the schedule's RS_TIME_MAX / 2: they round into an
 * rs_time and leave room for convergence. */
#define RAND_T_MAX (1ull << 62)

static rs_time rand_time(double t)
{
    return t < (double)RAND_T_MAX ? (rs_time)llround(t) : RAND_T_MAX;
}

/* faults.mtbf_us: every member of faults.random_class fails after an
 * exponential time of mean MTBF, is repaired after one of mean MTTR, and
 * so on, as long as a failure falls before faults.horizon_us. One RNG
 * stream per member (its port or node id), so members are independent
 * and a member's draws do not depend on the others. */
static int draw_random(rs_net *net, struct rs_faults *F, size_t *cap, const rs_fault_config *c, rs_err *err)
{
    int rc = rs_fault_config_check(c, err);
    if (rc != RS_OK)
        return rc;
    unsigned cls = 0;
    while (strcmp(class_names[cls], c->random_class))
        cls++;
    uint32_t *cand = malloc(((size_t)net->nports + net->nnodes + 1) * sizeof *cand);
    if (!cand)
        return rs_err_set(err, RS_ENOMEM, "out of memory drawing random failures");
    uint32_t n = candidates(net, cls, cand);
    unsigned tg = class_target[cls];
    unsigned dk = tg == TGT_SWITCH ? FK_SWITCH_DOWN : tg == TGT_NIC ? FK_NIC_DOWN : FK_LINK_DOWN;
    double mtbf = c->mtbf_us * 1e6, mttr = c->mttr_us * 1e6, horizon = c->horizon_us * 1e6;
    for (uint32_t m = 0; m < n && rc == RS_OK; m++) {
        rs_rng r;
        rs_rng_init(&r, c->seed ? c->seed : net->cfg.seed, cand[m], 0xfa01b7bfu);
        fentry res;
        memset(&res, 0, sizeof res);
        if (tg == TGT_SWITCH)
            res.node = cand[m];
        else
            res.port = tg == TGT_NIC ? net->nodes[cand[m]].port_base : cand[m];
        if (tg == TGT_SWITCH)
            node_name(net, res.node, res.target, sizeof res.target);
        else
            rs_topo_port_name(net, res.port, res.target, sizeof res.target);
        snprintf(res.spec, sizeof res.spec, "%s", c->random_class);
        res.origin = OR_RANDOM;
        res.routes_at = RS_TIME_MAX;
        for (double t = exp_draw(&r, mtbf); t < horizon; t += exp_draw(&r, mtbf)) {
            double up = t + exp_draw(&r, mttr);
            fentry *f = add_entry(F, cap), *g = f ? add_entry(F, cap) : NULL;
            if (!g) {
                rc = F->n >= MAX_ENTRIES ? rs_err_set(err, RS_EINVAL, "faults.mtbf_us: %g us over faults.horizon_us "
                                                      "draws more than %u entries; expected fewer failures",
                                                      c->mtbf_us, MAX_ENTRIES)
                                         : rs_err_set(err, RS_ENOMEM, "out of memory drawing random failures");
                break;
            }
            uint32_t sf = f->seq, sg = g->seq;
            *f = res;
            *g = res;
            f->seq = sf;
            g->seq = sg;
            f->t = rand_time(t);
            f->kind = (uint8_t)dk;
            g->t = rand_time(up);
            g->kind = (uint8_t)up_kind(dk);
            t = up; /* the next failure comes MTBF after the repair */
        }
    }
    free(cand);
    return rc;
}

/* Time order, equal times in creation order (schedule order). */
static int entry_cmp(const void *a, const void *b)
{
    const fentry *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* After sorting: every expanded up kind (a repair, a flap's up, a random
 * repair, a restore: created right after its down) learns its down
 * entry, and the holder lists start empty. */
static int pair_entries(const rs_net *net, struct rs_faults *F, rs_err *err)
{
    uint32_t *at = malloc(((size_t)F->n + 1) * sizeof *at);
    F->cab_hold = malloc(((size_t)net->nports + 1) * sizeof *F->cab_hold);
    F->deg_hold = malloc(((size_t)net->nports + 1) * sizeof *F->deg_hold);
    F->sw_hold = malloc(((size_t)net->nnodes + 1) * sizeof *F->sw_hold);
    if (!at || !F->cab_hold || !F->deg_hold || !F->sw_hold) {
        free(at);
        return rs_err_set(err, RS_ENOMEM, "out of memory starting faults");
    }
    memset(F->cab_hold, 0xff, (size_t)net->nports * sizeof *F->cab_hold);
    memset(F->deg_hold, 0xff, (size_t)net->nports * sizeof *F->deg_hold);
    memset(F->sw_hold, 0xff, (size_t)net->nnodes * sizeof *F->sw_hold);
    for (uint32_t i = 0; i < F->n; i++)
        at[F->e[i].seq] = i;
    for (uint32_t i = 0; i < F->n; i++) {
        fentry *e = &F->e[i];
        e->partner = kind_is_up(e->kind) && e->origin != OR_SCHEDULE ? at[e->seq - 1] : RS_NONE;
        e->hold_next = RS_NONE;
        e->holding = 0;
    }
    free(at);
    return RS_OK;
}

int rs_net_faults_start(rs_net *net, const rs_fault_config *c, rs_err *err)
{
    pentry *pe = NULL;
    uint32_t np = 0;
    if (net->flt)
        return rs_err_set(err, RS_EINVAL, "faults.schedule: faults already started");
    int rc = parse_all(c->schedule, "faults.schedule", err, &pe, &np);
    if (rc != RS_OK || (np == 0 && !(c->mtbf_us > 0))) {
        free(pe);
        return rc;
    }
    struct rs_faults *F = calloc(1, sizeof *F);
    if (!F) {
        free(pe);
        return rs_err_set(err, RS_ENOMEM, "out of memory starting faults");
    }
    size_t cap = 0;
    F->cfg = *c;
    if (rs_time_from_us(c->convergence_us, &F->conv) != RS_OK ||
        rs_time_from_us(c->watchdog_us, &F->wd) != RS_OK) {
        rc = rs_err_set(err, RS_EINVAL, "faults.convergence_us / faults.watchdog_us: out of range");
        goto fail;
    }
    for (uint32_t i = 0; i < np; i++)
        if ((rc = expand_entry(net, F, &cap, &pe[i], i, err)) != RS_OK)
            goto fail;
    if (c->mtbf_us > 0 && (rc = draw_random(net, F, &cap, c, err)) != RS_OK)
        goto fail;
    if (F->n) /* none when every entry named a class this network lacks (absent_ok) */
        qsort(F->e, F->n, sizeof *F->e, entry_cmp);
    for (uint32_t i = 0; i < F->n; i++)
        if (kind_is_up(F->e[i].kind))
            F->last_up = i + 1;
    if ((rc = pair_entries(net, F, err)) != RS_OK)
        goto fail;
    if ((rc = rs_sim_entities_add(net->sim, 1, &F->ent)) != RS_OK) {
        rs_err_set(err, rc, "faults.schedule: too many entities");
        goto fail;
    }
    free(pe);
    net->flt = F;
    rs_time now = rs_sim_now(net->sim);
    /* Entries due now apply at once: an event at the same time would run
     * after the traffic's (equal times run in entity order). */
    for (uint32_t i = 0; i < F->n; i++)
        if (F->e[i].t <= now)
            ev_fault(net->sim, net, i);
        else
            rs_sim_at(net->sim, F->e[i].t, F->ent, ev_fault, net, i);
    return RS_OK;
fail:
    free(pe);
    free(F->e);
    free(F->absent);
    free(F->cab_hold);
    free(F->deg_hold);
    free(F->sw_hold);
    free(F);
    return rc;
}

uint32_t rs_net_fault_count(const rs_net *net) { return net->flt ? net->flt->n : 0; }

int rs_net_fault_info_get(const rs_net *net, uint32_t i, rs_net_fault_info *out)
{
    if (i >= rs_net_fault_count(net))
        return RS_EINVAL;
    const fentry *e = &net->flt->e[i];
    memset(out, 0, sizeof *out);
    out->time_ps = e->t;
    snprintf(out->kind, sizeof out->kind, "%s", kind_names[e->kind]);
    snprintf(out->target, sizeof out->target, "%s", e->target);
    snprintf(out->spec, sizeof out->spec, "%s", e->spec);
    snprintf(out->origin, sizeof out->origin, "%s", origin_names[e->origin]);
    out->entry = e->entry;
    out->applied = e->applied;
    out->packets_lost = e->lost;
    out->packets_retransmitted = e->retx;
    out->flows_hit = e->flows_hit;
    out->time_to_recover_ps = e->flows_hit && !e->pending ? e->recovered_at - e->t : RS_TIME_MAX;
    out->routes_recomputed_at = e->routes_at;
    return RS_OK;
}

uint32_t rs_net_fault_absent_count(const rs_net *net) { return net->flt ? net->flt->nabsent : 0; }

int rs_net_fault_absent_get(const rs_net *net, uint32_t i, rs_net_fault_info *out)
{
    if (i >= rs_net_fault_absent_count(net))
        return RS_EINVAL;
    const struct absent *a = &net->flt->absent[i];
    memset(out, 0, sizeof *out);
    out->time_ps = a->t;
    snprintf(out->kind, sizeof out->kind, "%s", kind_names[a->kind]);
    snprintf(out->spec, sizeof out->spec, "%s", a->spec);
    snprintf(out->origin, sizeof out->origin, "absent");
    out->entry = a->entry;
    out->routes_recomputed_at = out->time_to_recover_ps = RS_TIME_MAX;
    return RS_OK;
}

uint32_t rs_net_fault_pfc_stuck_count(const rs_net *net) { return net->flt ? net->flt->nstuck : 0; }

int rs_net_fault_pfc_stuck_get(const rs_net *net, uint32_t i, rs_net_pfc_stuck *out)
{
    if (i >= rs_net_fault_pfc_stuck_count(net))
        return RS_EINVAL;
    const struct stuck *x = &net->flt->stuck[i];
    memset(out, 0, sizeof *out);
    out->detected_ps = x->at;
    out->fault = x->fault;
    out->priority = x->prio;
    rs_topo_port_name(net, x->port, out->port, sizeof out->port);
    rs_topo_port_name(net, x->behind, out->behind, sizeof out->behind);
    snprintf(out->reason, sizeof out->reason, "%s", wait_names[x->reason]);
    return RS_OK;
}

const char *rs_net_fault_errmsg(const rs_net *net) { return net->flt ? net->flt->errmsg : ""; }

void rs_net_faults_timeline_catchup(rs_net *net)
{
    const struct rs_faults *F = net->flt;
    rs_time now = rs_sim_now(net->sim);
    for (uint32_t i = 0; F && net->tl && i < F->n && F->e[i].applied && F->e[i].t <= now; i++) {
        rs_nettl_fault(net, F->e[i].target, kind_names[F->e[i].kind], F->e[i].spec);
        if (F->e[i].routes_at <= now)
            rs_nettl_fault(net, F->e[i].target, "routes", "recomputed");
    }
}

/* Slowdown factors (millionths) saturate at F_CAP = 1e6 x 2^64: one that
 * large stretches 1 ps of work past any time and does less than 1 ps of
 * work in any window, as would the larger factor it stands for, so no
 * result changes; below it, the products fit in 128 bits. */
#define F_CAP ((unsigned __int128)1000000 << 64)

/* The slowdown factor (millionths, at most F_CAP) on gpu at time t, and
 * the next time after t at which it changes (RS_TIME_MAX: never).
 * Overlapping windows multiply. O(entries). */
static unsigned __int128 strag_at(const struct rs_faults *F, uint32_t gpu, rs_time t, rs_time *next)
{
    unsigned __int128 f = 1000000;
    *next = RS_TIME_MAX;
    for (uint32_t i = 0; i < F->n; i++) {
        const fentry *e = &F->e[i];
        if (e->kind != FK_STRAGGLER || e->node != gpu)
            continue;
        rs_time end = e->t + e->dur;
        if (e->t > t && e->t < *next)
            *next = e->t;
        if (end > t && end < *next)
            *next = end;
        if (e->t <= t && t < end) {
            f = f * e->factor_ppm / 1000000; /* F_CAP x 1e9 < 2^128 */
            if (f > F_CAP)
                f = F_CAP;
        }
    }
    return f;
}

rs_time rs_net_compute_end(const rs_net *net, uint32_t gpu, rs_time start, rs_time duration)
{
    const struct rs_faults *F = net->flt;
    if (!F || F->nstrag == 0)
        return rs_time_add_sat(start, duration);
    /* Integrate: `left` ps of nominal work, done at 1e6/f ps per ps. Each
     * pass returns or moves t to the next window edge, and past the last
     * edge (next == RS_TIME_MAX) it returns: it ends by construction. */
    const unsigned __int128 all = ~(unsigned __int128)0;
    rs_time t = start, left = duration, next;
    for (;;) {
        unsigned __int128 f = strag_at(F, gpu, t, &next);
        /* left x f / 1e6 rounded up; past 2^128 it is past any window. */
        unsigned __int128 need = left && f > (all - 999999) / left ? all
                                                                   : ((unsigned __int128)left * f + 999999) / 1000000;
        if (need <= (unsigned __int128)(next - t))
            return t + (rs_time)need;
        if (next == RS_TIME_MAX)
            return RS_TIME_MAX; /* ends past the last representable time: saturate */
        rs_time done = (rs_time)((unsigned __int128)(next - t) * 1000000 / f);
        left -= done < left ? done : left;
        t = next;
    }
}
