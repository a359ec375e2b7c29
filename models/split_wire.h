/*
 * split_wire.h - the messages between the processes of a split run
 * (split.c; docs/parallel.md, "Wire format"): a window's message and a
 * process's end-of-run message, each behind the wire header (wire.h).
 * Private to split.c, and to the tests and the fuzz target that write
 * such messages as another process would.
 */
#ifndef RS_SPLIT_WIRE_H
#define RS_SPLIT_WIRE_H

#include "netint.h"
#include "wire.h"

#include <string.h>

/* A shipped frame: its arrival time and the descriptor, whose link
 * (next, of no use in a copy) carries its flow's home process (RS_NONE:
 * the same id everywhere) and the flow's id there: 72 bytes. */
typedef struct part_frame {
    rs_time t;
    rs_pkt pkt;
} part_frame;
_Static_assert(sizeof(rs_pkt *) == 2 * sizeof(uint32_t), "a frame's link holds its flow's home and id");

static inline void frame_home_put(rs_pkt *pkt, uint32_t home, uint32_t fid)
{
    const uint32_t w[2] = { home, fid };
    memcpy(&pkt->next, w, sizeof w);
}

static inline void frame_home_get(const rs_pkt *pkt, uint32_t *home, uint32_t *fid)
{
    uint32_t w[2];
    memcpy(w, &pkt->next, sizeof w);
    *home = w[0];
    *fid = w[1];
}

/* A shipped timer (rs_net_at_gpu_for). */
typedef struct part_timer {
    rs_time t;
    uint64_t key, arg;
    uint32_t cb, pad;
} part_timer;

/* A mirror's packets made and freed since its last report, to its home. */
typedef struct part_rep {
    uint32_t home_id, made, freed, pad;
} part_rep;

/* What one process sends another in a window: the wire header and the
 * counts (in the room of one frame), then the arrays: flows to reuse,
 * sends to mirror, timers, frames, reports. */
typedef struct part_hdr {
    rs_wire w;
    uint32_t nd, ns, ne, nf, nr;
} part_hdr;
#define PART_HDR_ROOM sizeof(part_frame)
_Static_assert(sizeof(part_hdr) <= PART_HDR_ROOM, "a window's header fits a frame's room");

/* Process r's message to rank 0 at the end: the wire header
 * (RS_WIRE_TAIL), this, its ports (each: the index, then the port), its
 * kept completion times, then its completion-time histogram if fct_hist. */
typedef struct part_tail {
    rs_net_stats st;
    uint64_t events, events_shared, frames_sent;
    uint64_t nports;         /* its ports (each: index, then the port) */
    uint64_t fct_n, fct_min, fct_max, fct_hist;
    unsigned __int128 fct_sum;
    uint64_t msgs_relayed;   /* rs_net_msgs_relayed: counted where the message starts */
    int32_t status;
} part_tail;

#endif
