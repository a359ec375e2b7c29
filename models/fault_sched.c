/*
 * fault_sched.c - a fault schedule before the run (fault_int.h): parse
 * faults.schedule (docs/faults-format.md), resolve each entry's target
 * against the topology (a port, a switch, a NIC, a GPU, or a class drawn
 * from by the seed), expand link flaps and faults.mtbf_us's random
 * failures into plain down/up entries, sort them by time and pair each up
 * with its down. The event stream is finite and a run is deterministic.
 */
#include "fault_int.h"

#include "rng.h"
#include "versioned.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const rs_fault_kind_names[FK_NKINDS] = {
    "link-down", "link-up", "switch-down", "switch-up", "nic-down", "nic-up", "link-degrade", "link-restore",
    "straggler", "straggler-end", "link-flap"
};
const uint8_t rs_fault_kind_target[FK_NKINDS] = {
    TGT_LINK, TGT_LINK, TGT_SWITCH, TGT_SWITCH, TGT_NIC, TGT_NIC, TGT_LINK, TGT_LINK, TGT_GPU, TGT_GPU, TGT_LINK
};
const char *const rs_fault_origin_names[] = { "schedule", "repair", "flap", "random" };
const char *const rs_fault_class_names[] = {
    "any-network-link", "any-spine-link", "any-rail-uplink", "any-spine", "any-rail-switch", "any-nic", "any-gpu", NULL
};
const uint8_t rs_fault_class_target[] = { TGT_LINK, TGT_LINK, TGT_LINK, TGT_SWITCH, TGT_SWITCH, TGT_NIC, TGT_GPU };

int rs_fault_config_take(rs_fault_config *own, const rs_fault_config *c, rs_err *err)
{
    rs_fault_config_default(own);
    if (rs_versioned_take(own, sizeof *own, c, RS_SIZE_V1(rs_fault_config, absent_ok)) != RS_OK)
        return rs_err_set(err, RS_EINVAL, "faults: a configuration of no known size (initialise it with "
                          "rs_fault_config_default)");
    return RS_OK;
}

static void fault_defaults(rs_fault_config *c)
{
    memset(c, 0, sizeof *c);
    c->convergence_us = 0;
    c->watchdog_us = 20000; /* 20 RTOs at the default transport.rto_us */
    c->reroute_hb = 1;
    c->baseline = 1;
    c->mttr_us = 100;
    snprintf(c->random_class, sizeof c->random_class, "any-network-link");
}

void rs_fault_config_init(rs_fault_config *c, size_t size)
{
    rs_fault_config d;
    fault_defaults(&d);
    d.size = (uint32_t)sizeof d;
    rs_versioned_give(c, size, &d, sizeof d);
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
        if (kind_written(k) && !strcmp(tok[1], rs_fault_kind_names[k]))
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
    for (unsigned c = 0; rs_fault_class_names[c]; c++)
        if (!strcmp(tok[2], rs_fault_class_names[c])) {
            is_class = 1;
            if (rs_fault_class_target[c] != rs_fault_kind_target[pe->kind])
                return rs_err_set(err, RS_EINVAL, "%s: entry %u '%s': class '%s' does not fit %s; expected %s",
                                  label, idx, shown, tok[2], rs_fault_kind_names[pe->kind],
                                  rs_fault_kind_target[pe->kind] == TGT_LINK ? "any-network-link, any-spine-link or any-rail-uplink"
                                  : rs_fault_kind_target[pe->kind] == TGT_SWITCH ? "any-spine or any-rail-switch"
                                  : rs_fault_kind_target[pe->kind] == TGT_NIC ? "any-nic" : "any-gpu");
        }
    if (is_class && kind_is_up(pe->kind))
        return rs_err_set(err, RS_EINVAL, "%s: entry %u '%s': %s needs a name, not a class; expected a DURATION "
                          "on the down fault instead", label, idx, shown, rs_fault_kind_names[pe->kind]);
    if (nt == 4) {
        if (parse_time(tok[3], &pe->dur) != RS_OK || pe->dur == 0)
            return rs_err_set(err, RS_EINVAL, "%s: entry %u '%s': DURATION '%s': expected a number above 0 with "
                              "a unit (ps, ns, us, ms, s)", label, idx, shown, tok[3]);
        if (kind_is_up(pe->kind))
            return rs_err_set(err, RS_EINVAL, "%s: entry %u '%s': %s takes no DURATION", label, idx, shown,
                              rs_fault_kind_names[pe->kind]);
        if (pe->t > RS_TIME_MAX / 2 || pe->dur > RS_TIME_MAX / 2)
            return rs_err_set(err, RS_EINVAL, "%s: entry %u '%s': TIME + DURATION too large", label, idx, shown);
        pe->has_dur = 1;
    } else if (pe->kind == FK_LINK_DEGRADE || pe->kind == FK_STRAGGLER || pe->kind == FK_LINK_FLAP) {
        return rs_err_set(err, RS_EINVAL, "%s: entry %u '%s': %s needs a DURATION", label, idx, shown,
                          rs_fault_kind_names[pe->kind]);
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
            if (rs_array_reserve32(&v, &cap, cnt + 1, sizeof *v, 8) != RS_OK) {
                free(v);
                return rs_err_set(err, RS_ENOMEM, "out of memory reading %s", label);
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

int rs_fault_config_check(const rs_fault_config *cfg, rs_err *err)
{
    rs_fault_config own;
    int rc0 = rs_fault_config_take(&own, cfg, err);
    if (rc0 != RS_OK)
        return rc0;
    const rs_fault_config *c = &own;
    int rc = rs_fault_check(c->schedule, "faults.schedule", err);
    if (rc != RS_OK || !(c->mtbf_us > 0))
        return rc;
    unsigned cls = 0;
    while (rs_fault_class_names[cls] && strcmp(rs_fault_class_names[cls], c->random_class))
        cls++;
    if (!rs_fault_class_names[cls] || rs_fault_class_target[cls] == TGT_GPU)
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
    if (rs_fault_class_target[c] == TGT_LINK) {
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
    } else if (rs_fault_class_target[c] == TGT_SWITCH) {
        for (uint32_t i = 0; i < net->nnodes; i++) {
            int t = tier_of(net, i);
            if ((c == 3 && t >= 2) || (c == 4 && t == 1))
                PUT(i);
        }
    } else { /* NICs (by the GPU that has each) and GPUs */
        for (uint32_t g = 0; g < net->gpus; g++)
            if (rs_fault_class_target[c] != TGT_NIC || rs_nic_gpu(net, g) == g)
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
    while (rs_fault_class_names[c] && strcmp(rs_fault_class_names[c], pe->target))
        c++;
    if (!F->cfg.absent_ok || !rs_fault_class_names[c] || candidates(net, c, NULL) > 0)
        return 0;
    if (rs_array_reserve32(&F->absent, &F->capabsent, F->nabsent + 1, sizeof *F->absent, 8) != RS_OK)
        return -1;
    struct absent *a = &F->absent[F->nabsent++];
    a->t = pe->t;
    a->entry = i + 1;
    a->kind = (uint8_t)pe->kind;
    snprintf(a->spec, sizeof a->spec, "%s", rs_fault_class_names[c]);
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
    unsigned tg = rs_fault_kind_target[pe->kind];
    for (unsigned c = 0; rs_fault_class_names[c]; c++) {
        if (strcmp(pe->target, rs_fault_class_names[c]))
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
#define KEY(m) (tg == TGT_NIC ? rs_gpu_nic_port(net, m) : (m))
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
            fe->port = rs_gpu_nic_port(net, pick);
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
            port = rs_gpu_nic_port(net, node); /* the NIC it sends through */
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

/* Room for one more entry in F->e (zeroed, in creation order); NULL when
 * the schedule expands past MAX_ENTRIES or memory runs out. */
static fentry *add_entry(struct rs_faults *F, size_t *cap)
{
    if (F->n >= MAX_ENTRIES || rs_array_reserve(&F->e, cap, F->n + 1, sizeof *F->e, 1024) != RS_OK)
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
    while (strcmp(rs_fault_class_names[cls], c->random_class))
        cls++;
    uint32_t *cand = malloc(((size_t)net->nports + net->nnodes + 1) * sizeof *cand);
    if (!cand)
        return rs_err_set(err, RS_ENOMEM, "out of memory drawing random failures");
    uint32_t n = candidates(net, cls, cand);
    unsigned tg = rs_fault_class_target[cls];
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
            res.port = tg == TGT_NIC ? rs_gpu_nic_port(net, cand[m]) : cand[m];
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

int rs_fault_schedule_build(rs_net *net, const rs_fault_config *c, struct rs_faults **out, rs_err *err)
{
    pentry *pe = NULL;
    uint32_t np = 0;
    *out = NULL;
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
    if (F->nstrag && !(F->strag = malloc(F->nstrag * sizeof *F->strag))) {
        rc = rs_err_set(err, RS_ENOMEM, "out of memory starting faults");
        goto fail;
    }
    for (uint32_t i = 0, k = 0; i < F->n; i++)
        if (F->e[i].kind == FK_STRAGGLER)
            F->strag[k++] = i;
    free(pe);
    *out = F;
    return RS_OK;
fail:
    free(pe);
    rs_fault_state_free(F);
    return rc;
}

void rs_fault_state_free(struct rs_faults *F)
{
    if (!F)
        return;
    for (uint32_t i = 0; F->e && i < F->n; i++)
        free(F->e[i].job_flows);
    free(F->e);
    free(F->stuck);
    free(F->hits);
    free(F->seen); /* verdict too: one block */
    free(F->cab_hold);
    free(F->deg_hold);
    free(F->sw_hold);
    free(F->absent);
    free(F->strag);
    free(F);
}
