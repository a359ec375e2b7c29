/*
 * bundle.h - equal-cost ports pooled into bundles: the flow level's
 * multipath paths for routing.ecmp=packet and adaptive (bundle.c). Private
 * to models/: fluid.c is the only user.
 *
 * Link ids: a port is its own link (0 .. nports-1); bundle b is link
 * nports + b. Bundles are created on demand and never removed.
 */
#ifndef RS_BUNDLE_H
#define RS_BUNDLE_H

#include "netint.h"

/* Stages a network leg may have past its NIC port (leaf up to the core and
 * back down in a 3-tier Clos is 5; deeper trees need more). */
#define RS_BUNDLE_MAX_STAGES 12

typedef struct rs_bundles rs_bundles;

/* For net's built topology (port and node counts are fixed from here on).
 * RS_ENOMEM; *out: rs_bundles_destroy. */
int rs_bundles_create(const rs_net *net, rs_bundles **out);
void rs_bundles_destroy(rs_bundles *b); /* NULL is a no-op */

/* The stage links from switch node `leaf` (the one a NIC port faces) to
 * GPU dst over the current routes: links[0 .. *n), each a port or a
 * bundle; *created counts the bundles this call made (the newest ids).
 * RS_EUNREACH when a stage has no route, RS_ERANGE when the path needs more
 * than max links, RS_ENOMEM. Cached per (leaf, destination leaf): call
 * only while the routes stay as they were (the flow level asks only in
 * runs without faults). */
int rs_bundles_path(rs_bundles *b, const rs_net *net, uint32_t leaf, uint32_t dst, uint32_t *links,
                    uint32_t max, uint32_t *n, uint32_t *created);

uint32_t rs_bundles_count(const rs_bundles *b);
/* The member ports of bundle link `link` (>= nports), ascending; *n of them. */
const uint32_t *rs_bundle_members(const rs_bundles *b, uint32_t link, uint32_t *n);

#endif
