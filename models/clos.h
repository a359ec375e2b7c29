/*
 * clos.h - the shape of one folded-Clos plane of any number of tiers, the
 * one rule that both the topology builder (topo.c) and the cost model
 * (cost.c) follow, so that what is costed is what is simulated.
 *
 * A plane joins L leaf switches, each with `up` uplinks, using switches of
 * R ports. It is built bottom-up from blocks: a leaf is a block of tier 1;
 * a block of tier t (1 < t < T) is R/2 blocks of tier t-1 (the last one of
 * a tier may hold fewer) under width[t] switches; the top tier joins all
 * blocks of tier T-1 (at most R of them). This is the standard recursion of
 * the k-ary fat tree: every tier added multiplies the reach by R/2, so T
 * tiers join up to R * (R/2)^(T-2) leaves (R for two tiers, R*R/2 for
 * three, R*R*R/4 for four).
 *
 * Between tier t and t+1 (index i = t-1 below): the switch at position p
 * (0 <= p < width[i]) of a block connects to fan[i] switches of its parent
 * block, at positions p*fan[i] .. p*fan[i]+fan[i]-1, with par[i] parallel
 * cables to each; fan[i] * par[i] = uplinks[i] (`up` for a leaf, R/2
 * above). Below the top, fan = uplinks and par = 1. The top tier uses the
 * fewest switches that keep every uplink: fan = the smallest divisor C of
 * uplinks with C * R >= blocks * uplinks, and uplinks / C parallel cables.
 * So a plane is full bisection above its leaves, at the fewest top
 * switches, and a plane of two or three tiers is exactly what railsim
 * built before tiers were unbounded.
 *
 * Plain value type; nothing allocates.
 */
#ifndef RS_CLOS_H
#define RS_CLOS_H

#include "base.h"

#include <stdint.h>

/* 32 tiers join 2^32 leaves even at R = 4; only R = 2 (a tier that adds
 * no reach) can need more. */
#define RS_CLOS_MAX_TIERS 32

typedef struct rs_clos {
    uint32_t tiers;                       /* T: 1 (one switch) to RS_CLOS_MAX_TIERS */
    uint64_t blocks[RS_CLOS_MAX_TIERS];   /* [t-1]: blocks of tier t ([0] = leaves, [T-1] = 1) */
    uint64_t width[RS_CLOS_MAX_TIERS];    /* [t-1]: tier-t switches in one block ([0] = 1) */
    uint64_t uplinks[RS_CLOS_MAX_TIERS];  /* [t-1]: uplinks of a tier-t switch (0 at the top) */
    uint64_t fan[RS_CLOS_MAX_TIERS];      /* [t-1]: parent switches each tier-t switch reaches */
    uint64_t par[RS_CLOS_MAX_TIERS];      /* [t-1]: parallel cables to each of them */
    uint64_t children[RS_CLOS_MAX_TIERS]; /* [t-1]: tier-t blocks per tier-(t+1) block (the
                                             last may hold fewer) */
    uint64_t switches[RS_CLOS_MAX_TIERS]; /* [t-1]: tier-t switches = blocks * width */
    uint64_t cables;                      /* switch-to-switch cables */
} rs_clos;

/* Shape of a plane of nl >= 1 leaves with `up` uplinks each (1 <= up < R)
 * and R-port switches (even, >= 2). RS_EINVAL with err naming
 * topology.radix when no number of tiers up to RS_CLOS_MAX_TIERS joins nl
 * leaves (at R = 2 a tier adds no reach: more than 2 leaves cannot be
 * joined); `where` (may be NULL) is appended to that sentence, e.g. " in
 * the fat tree". *c is unspecified on error; err may be NULL. */
int rs_clos_shape(uint64_t nl, uint32_t R, uint32_t up, const char *where, rs_clos *c, rs_err *err);

/* Smallest divisor of n (>= 1) that is >= lo; n itself at worst. */
uint64_t rs_clos_divisor_at_least(uint64_t n, uint64_t lo);

/* A dragonfly (Kim, Dally, Scott and Abts, ISCA 2008): groups of `a`
 * switches joined all to all inside the group, each switch with `p` NIC
 * ports and `h` global links to other groups. NICs sit on the switches
 * in blocks of `unit` switches (1, or an HB domain's k NICs with
 * topology.df_attach=spread): NIC n is on switch (n / unit / p) unit +
 * n mod unit, so with unit 1 on switch n / p; G groups of a switches
 * (the last switches may hold no NIC); c parallel global links between every two groups, c = floor(a h / (G -
 * 1)): group i's global ports, numbered switch by switch (port l on
 * switch l / h), take the other groups in turn by offset d = 1 .. G-1
 * (group (i + d) mod G), copy m at port m (G - 1) + d - 1, so the m-th
 * link between groups i < j joins i's port m (G-1) + (j-i) - 1 and j's
 * port m (G-1) + (G - (j-i)) - 1. Plain value type. */
typedef struct rs_dfly {
    uint32_t p, a, h;     /* NIC ports, switches per group, global links per switch */
    uint32_t unit;        /* switches per block of NICs (1: packed) */
    uint32_t groups;      /* G */
    uint32_t per_pair;    /* c: global cables between every two groups (0 with one group) */
    uint64_t switches;    /* G a */
    uint64_t local_cables, global_cables;
} rs_dfly;

/* The dragonfly of `gpus` NICs on switches of `radix` ports, with p NIC
 * ports (topology.df_hosts, 0: radix / 4), a switches per group
 * (topology.df_group, 0: 2 p) and NICs in blocks of `unit` switches (1:
 * packed): h = radix - p - (a - 1). RS_EINVAL with err naming the key
 * when h < 1 with more than one group, when the groups outnumber a h + 1
 * (every group must reach every other), or when a block does not fit a
 * group a whole number of times (unit must divide a). */
int rs_dfly_shape(uint32_t gpus, uint32_t radix, uint32_t p, uint32_t a, uint32_t unit, rs_dfly *d, rs_err *err);

/* The switch of NIC n on dragonfly d (its ordinal among d's switches). */
static inline uint32_t rs_dfly_switch_of(const rs_dfly *d, uint32_t n)
{
    return n / d->unit / d->p * d->unit + n % d->unit;
}

/* The checks of the keys that shape a network, written once for the
 * simulator (topo.c) and the cost model (cost.c), each RS_EINVAL with err
 * naming the key: topology.gpus, hb_size and radix; a line rate (key
 * names it: above 0, at most 1000000 Gb/s, at least 1 b/s); and
 * topology.oversubscription (1 to 64). */
int rs_clos_check_shape(uint32_t gpus, uint32_t hb_size, uint32_t radix, rs_err *err);
int rs_clos_check_rate(const char *key, double gbps, rs_err *err);
int rs_clos_check_oversubscription(double ratio, rs_err *err);

#endif
