/*
 * flow_int.h - transfers (models/ only): a flow record carries a message,
 * or one leg or chunk of it, across the fabric (flows.c), moved by the
 * packet level's RC transport (transport.c, sack.c) or the flow level
 * (fluid.c); the DCQCN reaction point's state and rules (dcqcn.c); the
 * free stacks of reusable records.
 */
#ifndef RS_FLOW_INT_H
#define RS_FLOW_INT_H

#include "fabric_int.h"

/* DCQCN reaction point (Zhu et al., SIGCOMM 2015), the sender's rate
 * state: the packet level keeps one per flow (transport.c), the flow level
 * one per flow (the flow backend); both run the law with rs_dcqcn_cut and
 * rs_dcqcn_increase. */
typedef struct rs_dcqcn_rp {
    double rc, rt, alpha;      /* current and target rate (bit/s), alpha */
    rs_time alpha_at;          /* alpha is current as of this time */
    uint32_t t_stage, b_stage; /* rate-increase events from the timer / byte counter */
    uint8_t limited;           /* rate below line rate, timers running */
    uint8_t timer_inc;         /* the last increase event was the timer's */
} rs_dcqcn_rp;

typedef struct rs_flow {
    uint64_t bytes;
    uint32_t src, dst;       /* GPUs */
    uint32_t port;           /* egress port at the source */
    uint32_t npkts, mtu;
    uint32_t snd_nxt;        /* next PSN to send */
    uint32_t snd_una;        /* oldest unacknowledged PSN */
    uint32_t max_sent;       /* one past the highest PSN ever sent */
    uint32_t rcv_nxt;        /* receiver: next expected PSN (ideal: packets received) */
    uint32_t since_ack;      /* receiver: in-order packets since the last ACK */
    uint32_t next_active;    /* link in the port's round-robin list */
    uint32_t msg;            /* owning message */
    uint32_t chunk;          /* relay chunk index, or RS_NONE */
    uint32_t hit;            /* faults: the faults that dropped its packets (fault.c's list), RS_NONE: none */
    uint32_t hit_last;       /* faults: the latest of them (its retransmissions are charged to it) */
    /* routing.dragonfly=ugal (ugal.c): the intermediate switch of its
     * Valiant detour (RS_NONE: minimal), the switch hops to it, and the
     * source switch's port its flow is counted on (RS_NONE: none). */
    uint32_t via, ugal_port;
    uint8_t via_hops;
    uint32_t relay_src;      /* flow level: a whole relayed message as one flow from this GPU across
                              * its HB domain to src, then the network (relay.c); RS_NONE: a plain flow */
    uint64_t serial;         /* creation order (= id unless records are reused): entropy, tie-breaks, QPN */
    uint32_t pkts_live;      /* packet level: its packets (data and control) not yet delivered or dropped */
    /* transport.recovery=selective (sack.c). The bitmaps exist only while
     * the flow has something out of order: NULL until then. */
    uint64_t *sack;          /* receiver's out-of-order bitmap, then the sender's SACK scoreboard */
    uint32_t rtx_nxt;        /* sender: lowest PSN that may still need resending */
    uint32_t lost_end;       /* sender: unacknowledged PSNs below this are lost */
    uint32_t rtx_mark;       /* sender: snd_nxt at the current resend pass's first resend, RS_NONE: no pass */
    rs_time last_progress;   /* sender: last ACK advance or go-back */
    rs_time rto_due;         /* sender: when its retransmit timer looks at it next (transport.c, rto_next) */
    uint16_t entropy;
    uint8_t reliable;        /* RoCE RC (ACK/NAK/GBN/RTO) vs ideal */
    uint8_t active;          /* in its port's round-robin list */
    uint8_t nak_pending;     /* receiver: a NAK for rcv_nxt is outstanding */
    uint8_t timer;           /* sender: an RTO event is pending */
    uint8_t tx_done, rx_done;
    uint8_t sleeping;        /* paced out of the round robin until next_tx */
    uint8_t cc_timer;        /* a DCQCN timer event is pending */
    uint8_t leg;             /* relayed message: 0 source HB, 1 network, 2 destination HB */
    uint8_t gone;            /* abandoned by a failover (failover.c): its packets are discarded */
    uint8_t freed;           /* handed back (rs_flow_release): its pending timers are stale */
    uint8_t job;             /* its message's source's job (rs_net_set_job), 0: none */
    uint8_t prio;            /* 802.1p priority of its data, ACKs and NAKs: its job's (rs_net_set_job_priority) or the network's */
    rs_dcqcn_rp cc;          /* DCQCN reaction point (sender) */
    uint64_t cc_bytes;       /* bytes sent since the last byte-counter event */
    rs_time next_tx;         /* pacing: earliest start of the next packet */
    rs_time next_rate;       /* DCQCN: next rate-increase timer event */
    rs_time last_cnp;        /* notification point (receiver): last CNP sent */
    /* A partitioned run: a flow made by one process's own event (not the
     * shared driver's) has its id there (home, home_id); the others hold a
     * mirror under ids of their own (split.c). RS_NONE: made everywhere
     * under the same id. */
    uint32_t home, home_id;
    /* A partitioned run: its packets made and freed in this process; at its
     * home the others' reported sums, in a mirror what it reported so far
     * (split.c: a flow made by a process's own event is reused everywhere
     * once every packet it ever had is gone). */
    uint32_t pmade, pfreed, rmade, rfreed;
    uint8_t part_mark;       /* on this process's list to report (mirror) or to check (home) */
} rs_flow;

/* Ids of records handed back for reuse (rs_slot_take / give): a
 * stack whose room `cap` is kept at least the record array's capacity,
 * so giving an id back never allocates. */
typedef struct rs_free_ids {
    uint32_t *ids;
    size_t n, cap;
} rs_free_ids;
/* A record id from arr (*n handed out, room for *cap of elem bytes): a
 * reused one from fr, else the next new one; RS_ENOMEM. rs_slot_give
 * hands one back (never allocates). flows.c. */
int rs_slot_take(rs_free_ids *fr, void *arr, size_t *cap, uint32_t *n, size_t elem, uint32_t *id);
void rs_slot_give(rs_free_ids *fr, uint32_t id);

/* transport.c: NIC side */
rs_pkt *rs_nic_pull(rs_net *net, rs_port *p);
void rs_nic_receive(rs_net *net, uint32_t gpu, rs_pkt *pkt);
/* A data or control packet leaves the network (delivered or dropped): back
 * to the pool, and its flow's record too once nothing else refers to it.
 * PFC frames (no flow) go straight back to the pool. */
void rs_pkt_free(rs_net *net, rs_pkt *pkt);
void rs_flow_activate(rs_net *net, uint32_t f);
int rs_flow_new(rs_net *net, uint32_t src, uint32_t dst, uint64_t bytes,
                uint32_t msg, uint32_t chunk, int via_hb, uint32_t *out);
/* The same with the serial given: a relay's chunk flows take serials its
 * message reserved (rs_msg.serial0), so they are the same whichever
 * process creates them, and when. */
int rs_flow_new_serial(rs_net *net, uint32_t src, uint32_t dst, uint64_t bytes,
                       uint32_t msg, uint32_t chunk, int via_hb, uint64_t serial, uint32_t *out);
/* Failover: flow f stops for good. It leaves its port's round robin and
 * sends nothing more; its timers find it done; its packets still in the
 * network are dropped (RS_DROP_FAILOVER) when they reach either end. The
 * record stays valid (pending timers and packets name it). */
void rs_flow_abandon(rs_net *net, uint32_t f);
/* DCQCN reaction point: a new flow's state (line rate, alpha 1); a CNP
 * (alpha decays by (1 - g) per alpha period since rp->alpha_at while
 * limited, then Rt = Rc (when the configuration clamps), Rc = Rc (1 - alpha/2) not below the floor,
 * alpha = (1 - g) alpha + g, stages restart, limited); one rate-increase
 * event (fast recovery, additive or hyper by the stages; back at line
 * rate it is no longer limited), by the timer or the byte counter (its
 * stage counts it). The caller keeps the timers. */
void rs_dcqcn_init(const rs_net *net, rs_dcqcn_rp *rp);
void rs_dcqcn_cut(const rs_net *net, rs_dcqcn_rp *rp, rs_time now);
void rs_dcqcn_increase(const rs_net *net, rs_dcqcn_rp *rp, int by_timer);

/* transport.c: queue a control frame (ACK, NAK, CNP) of flow fid from
 * its receiver back to its sender; flags RS_PF_SACK with sack = the PSN
 * selectively acknowledged. */
void rs_nic_send_ctrl(rs_net *net, uint32_t fid, uint8_t type, uint32_t psn, uint8_t flags, uint32_t sack);
/* transport.c, the receiver: flow fid has every byte (its message hears
 * of it); a duplicate arrived (re-ACK when an ACK is due). Both recoveries
 * share them. */
void rs_nic_rx_complete(rs_net *net, rs_flow *f, uint32_t fid);
void rs_nic_rx_duplicate(rs_net *net, rs_flow *f, uint32_t fid, const rs_pkt *pkt);

/* sack.c: selective repeat (transport.recovery=selective). */
/* Receiver: data packet pkt of reliable flow f (not the expected PSN's
 * in-order fast path of go-back-N). 1 when it belongs to a flow a
 * failover abandoned (the caller drops it). */
int rs_sack_data(rs_net *net, rs_flow *f, uint32_t fid, const rs_pkt *pkt);
/* Sender: an ACK or NAK (with or without SACK) of f. */
void rs_sack_ack(rs_net *net, rs_flow *f, uint32_t fid, const rs_pkt *pkt);
/* Sender: the PSN to send next (a lost one first, then new data within the
 * window), or RS_NONE; rs_sack_sent records that psn went out. */
uint32_t rs_sack_next(rs_flow *f, uint32_t window);
void rs_sack_sent(rs_flow *f, uint32_t psn);
/* Sender: a retransmit timeout: every unacknowledged PSN is lost. */
void rs_sack_timeout(rs_flow *f);
/* Both ends are done with f (or it was abandoned): its bitmaps go back. */
void rs_sack_release(rs_net *net, rs_flow *f);

/* flows.c: transport flow records. rs_flow_slot gives a record to fill (a
 * reused one when any was handed back); rs_flow_release hands one back once
 * nothing refers to it: at flow level once its message has been told, at
 * packet level once it is done both ways and no packet or timer of it is
 * left (transport.c flow_settle). */
int rs_flow_slot(rs_net *net, uint32_t *id);
void rs_flow_release(rs_net *net, uint32_t id);

#endif
