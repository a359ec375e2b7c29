/*
 * partition_int.h - the seam between the packet path and a run split over
 * processes (include/railsim/partition.h is its public face).
 *
 * The packet path never asks whether the run is split: it asks the
 * network's partition. Does this process own node n (rs_part_owns_node,
 * netint.h)? A frame onto a cut link, a packet made or freed, a flow
 * started, a send or a timer for another process's GPU are handed to the
 * partition's operations, and rs_net_run runs the partition's loop. A
 * serial run has the trivial partition (partition.c): it owns every node,
 * cuts no link, runs the engine to the end, and has no hooks. A split
 * run has split.c's, installed by rs_net_part_start.
 *
 * The partition also keys the records a run writes (captures, timeline):
 * the running event's time and key, the flow starts in it so far and the
 * record's index in it (rs_part_key), the order in which a split run's
 * parts merge into the serial run's file. A serial run keys them alike.
 */
#ifndef RS_PARTITION_INT_H
#define RS_PARTITION_INT_H

#include <stddef.h>
#include <stdint.h>

#include "base.h"

struct rs_net;
struct rs_pkt;
struct rs_flow;

/* A send made by this process's own event, whose frames cross processes:
 * every other process makes a mirror of it from this record (split.c,
 * rs_net_mirror_send). A relayed (PXN) message is shipped chunk by chunk,
 * one record per network-leg chunk as it starts (rs_net_mirror_chunk):
 * the message's fields, the chunk's flow (serial, home_id) and place. */
typedef struct rs_part_send {
    rs_time start;
    uint64_t bytes, tag, serial;
    uint32_t home, home_id;  /* the sending process and its flow's id there */
    uint32_t src, dst;
    uint32_t cb;             /* the done callback (rs_net_cb_register), RS_NONE: none */
    uint32_t nchunks;        /* a relayed message's chunks; 0: a whole message (one flow) */
    uint32_t chunk;          /* relayed: this record's chunk */
    uint32_t home_msg;       /* relayed: the message's id in its home */
    uint32_t leg_src;        /* relayed: the relay GPU its network leg leaves from */
    uint32_t pad;
} rs_part_send;

/* What a partition does. Hooks marked "NULL: none" are left out by the
 * trivial partition; the packet path calls them through the wrappers in
 * netint.h, which skip a NULL hook. */
typedef struct rs_part_ops {
    /* rs_net_run: RS_OK, or the run's error. */
    int (*run)(struct rs_net *net, rs_time until);
    /* Free the partition's state (net->pt.state). NULL: none. */
    void (*free)(struct rs_net *net);
    /* A frame onto a cut link (rs_port.cut), arriving at t: the
     * partition owns it now. Called only where a link is cut. */
    void (*ship)(struct rs_net *net, struct rs_pkt *pkt, rs_time t);
    /* Packet pkt of flow f made here, or (pkt NULL) one freed. NULL: none. */
    void (*packet)(struct rs_net *net, uint32_t f, struct rs_pkt *pkt);
    /* A flow started (every process counts the starts of an event, for
     * the records' keys). NULL: none. */
    void (*flow_started)(struct rs_net *net);
    /* Flow fid has no packet left here and may be done: 1 when the
     * partition decides when its record is reused (its packets live in
     * several processes), 0 to reuse it as a serial run does. NULL: 0. */
    int (*flow_settle)(struct rs_net *net, struct rs_flow *f, uint32_t fid);
    /* A send from GPU src to dst about to be made; named: its serial is
     * given. RS_OK with *own = 1 when this process's own event makes it
     * and its frames cross processes (it is shipped, ship_send), else an
     * error: the send cannot be made in this run. NULL: RS_OK, *own 0. */
    int (*send_check)(struct rs_net *net, int named, uint32_t src, uint32_t dst, int *own);
    /* Message m's flow f, made by this process's own event (send_check). */
    void (*ship_send)(struct rs_net *net, uint32_t m, uint32_t f);
    /* A timer for GPU node `node` of another process, at t, with the
     * event key of the GPU that gives it; callback cb (rs_net_cb_register). */
    void (*ship_timer)(struct rs_net *net, uint32_t node, rs_time t, uint64_t key, uint32_t cb, uint64_t arg);
    /* Frames, sends and timers shipped and not yet exchanged. NULL: 0. */
    size_t (*shipped)(const struct rs_net *net);
    /* What was wrong with a message another process sent (docs/parallel.md,
     * "Wire format"), "" when nothing. NULL: "". */
    const char *(*errmsg)(const struct rs_net *net);
    /* Every process makes a relayed message's chunk flows as it is sent,
     * under ids of a block (net.c make_chunk_flows). */
    unsigned premade_relays : 1;
} rs_part_ops;

/* The network's partition (rs_net.pt). */
typedef struct rs_partition {
    const rs_part_ops *ops;
    void *state;              /* the partition's own (split.c's), NULL for the trivial one */
    const uint32_t *node_rank; /* per node, the process that owns it; NULL: this one owns every node */
    const uint8_t *port_mine; /* per port, 1 if this process owns it (its node); NULL: every port. The
                               * others' pages are given back (ports.c): ask before reading a port. */
    const struct rs_port_count *merged; /* rank 0 after the merge: per port, the counters of those it does
                                         * not own, as their processes sent them (split.c); else NULL */
    uint32_t rank, ranks;     /* this process, and how many; 0 and 1 in a serial run */
    /* The event the records are keyed in (rs_part_key): its time and key,
     * its flow starts so far and its next record's index. */
    rs_time ev_t;
    uint64_t ev_key;
    uint32_t ev_step, ev_idx;
    int ev_pinned;            /* rs_net_rec_key_pin: records go at ev_* until unpinned */
} rs_partition;

/* The trivial partition of a serial run (partition.c), as every network
 * starts. */
void rs_part_init(struct rs_net *net);

/* The running event's place, for what it writes: its time, key, the flow
 * starts of it so far (a shared event starts flows everywhere, the
 * source's process sends) and the next record's index in it. */
void rs_part_key(struct rs_net *net, rs_time *t, uint64_t *key, uint32_t *step, uint32_t *idx);
/* A flow started: the next records go after it (flow_started's default). */
void rs_part_flow_step(struct rs_net *net);

#endif
