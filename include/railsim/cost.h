/*
 * cost.h - bill of materials, price and power of both network designs.
 *
 * For one set of parameters (GPUs N, HB size K, switch radix R, NIC speed,
 * leaf oversubscription) this module counts what the rail-optimized fat
 * tree and the rail-only network need: switches per tier, switch ports,
 * cables, transceivers; then prices and powers them from a parts table.
 *
 * The counts follow the same structural rules as the topology builder
 * (models/topo.c: rail-pure leaves of dl = floor(R*o/(o+1)) GPUs, a
 * folded Clos per plane with the fewest upper switches and parallel
 * cables), computed in closed form, so they equal the switches, cables and
 * tiers of the network rs_net_create builds, with one deliberate
 * difference: in rail-only, rails small enough to fit in one switch share
 * a switch (floor(R / rail size) rails per switch, partitioned so the rails
 * stay separate networks). The simulator keeps those rails on separate
 * logical switches; rs_bom reports both counts (switches and
 * switches_logical). docs/cost.md has the model, the default parts table
 * and its sources.
 *
 * Everything here is plain value types and pure functions: nothing
 * allocates, nothing is kept. The module never reads files; the CLI reads
 * a parts table (JSON) and fills rs_catalog through rs_catalog_set.
 */
#ifndef RS_COST_H
#define RS_COST_H

#include "base.h"

#include <stdint.h>

RS_BEGIN_DECLS

/* The catalog: price and power of every part a network is built of (its
 * "parts table"; "part" alone names a process's share of a split run,
 * partition.h). Prices are US dollars, power watts, all
 * per unit at the configured link speed (one price per port and per
 * transceiver; nothing is scaled by speed: for a speed other than 400 Gb/s
 * set the prices of that speed). Every field is a parts-table key of the
 * same name (rs_catalog_keys). Plain value type. */
typedef struct rs_catalog {
    double switch_port_usd;  /* per switch port */
    double switch_port_w;    /* per switch port: ASIC share, SerDes, fans, PSU loss; optics excluded */
    double switch_usd;       /* per switch, on top of its ports (chassis, CPU); default 0 */
    double switch_w;         /* per switch, on top of its ports; default 0 */
    double transceiver_usd;  /* per optical transceiver (two per optical cable) */
    double transceiver_w;    /* per optical transceiver */
    double fiber_usd;        /* per optical cable (the fiber itself); default 0 */
    double dac_usd;          /* per copper NIC cable (DAC), used when nic_copper */
    double dac_w;            /* per copper NIC cable (passive DAC: 0) */
    double whole_switches;   /* 1: a switch costs and draws power for all R ports, cabled
                                or not (switches are bought whole); 0: only cabled ports
                                count (the per-port accounting of published comparisons) */
} rs_catalog;

/* Fill *p with the defaults of docs/cost.md: $748 and 15 W per switch
 * port, $374 and 12 W per transceiver, $150 and 0 W per DAC, whole
 * switches, the rest 0. */
RS_API void rs_catalog_default(rs_catalog *p);

/* The parts-table keys, NULL-terminated, in the order of rs_catalog. Static
 * storage; never freed. */
RS_API const char *const *rs_catalog_keys(void);

/* Set the part named key to v. RS_EINVAL with err naming the key for an
 * unknown key (the message lists the known ones), for a value that is
 * negative, not finite or above 1e12, and for whole_switches other than
 * 0 or 1. *p is unchanged on error. err may be NULL. */
RS_API int rs_catalog_set(rs_catalog *p, const char *key, double v, rs_err *err);

/* Read the part named key into *v: RS_OK, or RS_EINVAL for an unknown key. */
RS_API int rs_catalog_get(const rs_catalog *p, const char *key, double *v);

/* What to cost. Field names follow the scenario keys (topology.*) so
 * errors name those keys. Plain value type; start from
 * rs_cost_input_default. */
typedef struct rs_cost_input {
    uint32_t gpus;            /* topology.gpus: N, a multiple of hb_size */
    uint32_t hb_size;         /* topology.hb_size: K, GPUs per HB domain = rails */
    uint32_t radix;           /* topology.radix: R, ports per switch, even */
    double nic_gbps;          /* topology.nic_gbps: the link speed the parts prices refer to */
    double oversubscription;  /* topology.oversubscription: leaf down:up ratio, 1 to 64 */
    int nic_copper;           /* cost.nic_copper: NIC-to-leaf cables are copper DACs
                                 (no transceivers) instead of optical; default 0 */
    int pack_rails;           /* cost.pack_rails: rail-only rails that fit in one switch
                                 share switches; default 1; 0 counts as the simulator builds */
} rs_cost_input;

/* The simulator's defaults where they exist, taken from
 * rs_net_config_default (gpus, hb_size, radix, nic_gbps,
 * oversubscription); optical NIC cables; rail packing on. */
RS_API void rs_cost_input_default(rs_cost_input *in);

/* The input for the network of configuration *c, as railsim builds it:
 * its NICs (GPUs sharing NICs, topology.gpus_per_nic, count as the NICs
 * they share: gpus / s in domains of hb_size / s), radix, NIC rate and
 * oversubscription; optical NIC cables; rail packing on. */
struct rs_net_config; /* net.h */
RS_API void rs_cost_input_of(rs_cost_input *in, const struct rs_net_config *c);

/* Deepest plane the model counts (clos.h's bound: 32 tiers join 2^32
 * leaves at any radix of 4 or more). */
#define RS_COST_MAX_TIERS 32

/* Bill of materials of one design. Counts are whole network totals over
 * all planes; money and power are totals in dollars and watts. */
typedef struct rs_bom {
    uint32_t tiers;               /* switch tiers of the deepest plane (1 to RS_COST_MAX_TIERS) */
    uint32_t planes;              /* separate networks: 1 (fat tree) or K (rail-only) */
    uint32_t rails_per_switch;    /* rail-only: rails sharing one switch (1 = no packing);
                                     fat tree: 0 */
    uint64_t switches;            /* physical switches */
    uint64_t switches_logical;    /* switches as the simulator builds them (no packing) */
    uint64_t switches_per_tier[RS_COST_MAX_TIERS]; /* physical; [0] = leaves (tier 1) */
    uint64_t switch_ports;        /* installed: switches * R */
    uint64_t switch_ports_used;   /* cabled switch ports: NIC cables + 2 per switch cable */
    uint64_t links;               /* cables, NIC cables included (the simulator's links) */
    uint64_t nic_links;           /* GPU NIC to leaf cables (= N) */
    uint64_t optical_links;       /* cables with a transceiver at each end */
    uint64_t copper_links;        /* DAC NIC cables (nic_copper) */
    uint64_t transceivers;        /* 2 per optical cable, NIC ends included */
    double switch_usd, transceiver_usd, cable_usd, cost_usd;  /* cost_usd = sum of the three */
    double switch_w, transceiver_w, cable_w, power_w;         /* power_w = sum of the three */
} rs_bom;

/* Rail packing (docs/cost.md): how many rail-only rails of rail_gpus GPUs,
 * each one switch, share one physical R-port switch (partitioned, so each
 * stays its own network): floor(R / rail_gpus), at most rails, and 1 (no
 * sharing) when a rail needs more than R/2 ports. Physical switches are
 * ceil(rails / this). One rule for the cost model and rs_net_topo_info_get. */
RS_API uint32_t rs_cost_rails_per_switch(uint64_t rail_gpus, uint32_t radix, uint32_t rails);

/* Count and price both designs for *in with parts *parts. fat_tree and
 * rail_only receive the results; either may be NULL to skip that design
 * (its errors are then not reported either). On bad input returns
 * RS_EINVAL with err naming the key (topology.gpus, topology.hb_size,
 * topology.radix, topology.nic_gbps, topology.oversubscription; the same
 * checks and words as rs_net_create, including a radix that cannot join
 * the leaves at any number of tiers: 2 ports with more than 2 leaves) and
 * leaves the outputs untouched. err may be NULL. */
RS_API int rs_cost_compute(const rs_cost_input *in, const rs_catalog *parts,
                    rs_bom *fat_tree, rs_bom *rail_only, rs_err *err);

/* The bill of materials of a dragonfly (topology.kind=dragonfly, clos.h's
 * rs_dfly; docs/cost.md): one tier of switches, every one a leaf; NIC
 * cables as in->nic_copper says, the cables inside groups and between
 * them optical. df_hosts and df_group as the scenario keys (0: the
 * balanced dragonfly of the radix). in->hb_size and oversubscription are
 * checked but do not shape it, nor does topology.df_attach: with blocks
 * of switches that divide a group, both attachments fill the same
 * ceil(NICs / (df_hosts df_group)) groups. RS_EINVAL with err naming the key. */
RS_API int rs_cost_dragonfly(const rs_cost_input *in, uint32_t df_hosts, uint32_t df_group, const rs_catalog *parts,
                             rs_bom *out, rs_err *err);

/* Saving of rail-only over the fat tree in percent of the fat tree's
 * cost: (fat - rail) / fat * 100 (negative if rail-only costs more);
 * 0 when the fat tree costs nothing. rs_cost_power_saving_pct: same for
 * power. */
RS_API double rs_cost_saving_pct(const rs_bom *fat_tree, const rs_bom *rail_only);
RS_API double rs_cost_power_saving_pct(const rs_bom *fat_tree, const rs_bom *rail_only);

RS_END_DECLS

#endif
