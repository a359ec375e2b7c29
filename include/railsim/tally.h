/*
 * tally.h - payload bytes per GPU-side port (NIC transmit and receive, HB
 * transmit and receive) of a group of transfers. The network counts into
 * a tally the legs of every message sent with it (rs_net_msg.tally:
 * the source's HB crossing of a PXN relay, the network leg, a failover's
 * detour), so a collective learns what each port had to carry for it
 * whatever its algorithm, relays or faults did with the bytes, and from
 * that its network-only bound (rs_net_tally_bound).
 *
 * A tally is one entry per GPU found by a hash index of GPU ids, at most half
 * full: memory follows the GPUs its transfers touched (40 bytes each, x2
 * for the load factor, x2 while growing), not the cluster, and nothing is
 * kept per message. Adding is O(1) amortised; the table grows by doubling
 * (never per transfer once it holds the group's GPUs). Iteration order
 * never matters: only sums and maxima are read back, so a tally is as
 * deterministic as the transfers counted into it.
 */
#ifndef RS_TALLY_H
#define RS_TALLY_H

#include "base.h"

RS_BEGIN_DECLS

typedef enum {
    RS_TALLY_NIC_TX = 0, /* left the GPU's NIC onto the fabric */
    RS_TALLY_NIC_RX,     /* arrived at the GPU's NIC from the fabric */
    RS_TALLY_HB_TX,      /* left the GPU into its HB domain (NVLink) */
    RS_TALLY_HB_RX       /* arrived at the GPU from its HB domain */
} rs_tally_port;
#define RS_TALLY_NPORTS 4

typedef struct rs_tally rs_tally;

/* An empty tally; *out is the caller's (rs_tally_destroy). RS_ENOMEM. */
RS_API int rs_tally_create(rs_tally **out);
RS_API void rs_tally_destroy(rs_tally *t); /* NULL is a no-op */

/* Make room for `gpus` GPUs without growing (a collective knows its
 * ranks; relays beyond them still grow the table). RS_ENOMEM leaves t as
 * it was. */
RS_API int rs_tally_reserve(rs_tally *t, uint32_t gpus);

/* Forget every count; the table's memory stays for the next group. */
RS_API void rs_tally_clear(rs_tally *t);

/* Count `bytes` more on port `port` of GPU `gpu` (below UINT32_MAX).
 * RS_ENOMEM (growing the table) leaves t as it was; RS_EINVAL for a bad
 * port or gpu. */
RS_API int rs_tally_add(rs_tally *t, uint32_t gpu, rs_tally_port port, uint64_t bytes);

/* Bytes counted on one port; 0 for a GPU never counted. */
RS_API uint64_t rs_tally_get(const rs_tally *t, uint32_t gpu, rs_tally_port port);

/* GPUs with at least one count (zero-byte counts included). */
RS_API uint32_t rs_tally_gpus(const rs_tally *t);

/* out[p] = the largest count of port kind p over all GPUs (0 if none). */
RS_API void rs_tally_max(const rs_tally *t, uint64_t out[RS_TALLY_NPORTS]);

RS_END_DECLS

#endif
