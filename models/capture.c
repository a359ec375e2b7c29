/*
 * capture.c - which ports are captured, and how a packet descriptor
 * becomes the frame description the pcap writer turns into bytes.
 *
 * Addresses: a frame's Ethernet source is the transmitting node and its
 * destination the receiving node (the fabric is routed, so MACs change per
 * hop); IPv4 addresses are the source and destination GPUs. Queue pairs: a
 * flow f is one RC connection between QP 0x100 + 2f at the sender and
 * 0x101 + 2f at the receiver; data carries the receiver's QPN, ACK/NAK/CNP
 * the sender's. A WRITE targets a per-flow virtual address with R_Key
 * 0x1000 + f and DMA length = the flow's bytes. TTL starts at 64 and drops
 * by one per switch. Frame sizes agree with what the fabric serializes
 * (checked in debug builds).
 *
 * Two formats (docs/pcap.md): a pcap file per captured port holding what
 * it transmits, or one pcapng file with an interface per captured port
 * holding what it transmits (outbound, when its first bit leaves) and
 * what arrives at it (inbound: the same bytes its peer sent, when their
 * last bit is in). The pcapng writer is shared by all captured ports (each
 * port's cap points at it, and net->cap_if maps a port to its interface).
 *
 * pcapng records are written in time order. An arrival event at a switch
 * runs a pipeline latency after the last bit came in (topo.c folds the
 * receiver's pipeline into the link's delay), so its record is stamped
 * that much in the past; every other record is stamped with the current
 * time. Those wait in a FIFO (capwait) until no earlier record can come:
 * until the time a pipeline latency ago has passed them. The FIFO holds a
 * pipeline latency's worth of captured frames (a few per captured port).
 */
#include "netint.h"
#include "versioned.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void capture_defaults(rs_capture_config *c)
{
    memset(c, 0, sizeof *c);
    c->start_ns = 0;
    c->end_ns = 1e15; /* a thousand seconds: the whole run */
    c->snaplen = 0;
}

void rs_capture_config_init(rs_capture_config *c, size_t size)
{
    rs_capture_config d;
    capture_defaults(&d);
    d.size = (uint32_t)sizeof d;
    rs_versioned_give(c, size, &d, sizeof d);
}

static int matches(const char *patterns, const char *name)
{
    char buf[sizeof ((rs_capture_config *)0)->ports];
    size_t n = strnlen(patterns, sizeof buf - 1);
    memcpy(buf, patterns, n);
    buf[n] = '\0';
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ')
            tok++;
        if (*tok && fnmatch(tok, name, 0) == 0)
            return 1;
    }
    return 0;
}

/* A pcapng record held back (see the file comment). */
typedef struct {
    rs_time t;
    uint32_t ifid;
    rs_pcap_dir dir;
    rs_frame f;
    rs_pcap_key key;     /* a split run's: its place in the serial file */
} capwait_rec;

struct rs_capwait {
    capwait_rec *r;      /* live records are r[head..n), in time order */
    size_t head, n, cap;
    rs_time lag;         /* a switch's pipeline latency (topology.switch_latency_ns) */
};

/* A split run's pcapng (docs/parallel.md): each process writes the
 * records of what it owns into a part file, each with the key that
 * places it in the serial run's file, and rank 0 merges the parts. The
 * serial file's order is: stamp; then the records written as their event
 * ran (class 0) before the arrivals stamped a pipeline latency back
 * (class 1, written when their event runs, after release()); then the
 * order of the events (their time and key, the same in every process);
 * then, within an event, the flow start of a shared event that wrote it
 * (the driver starts flows everywhere, but only the source's process
 * sends, so every process counts the starts) and the order of writing. */
static rs_pcap_key key_of(rs_net *net, rs_time stamp, uint8_t cls)
{
    rs_pcap_key k = { 0 };
    if (net->cap_whole_ranks) {
        k.stamp = stamp;
        k.cls = cls;
        rs_part_key(net, &k.ev_t, &k.ev_key, &k.step, &k.idx);
    }
    return k;
}

static void emit(rs_net *net, const rs_pcap_key *k, rs_time t, uint32_t ifid, rs_pcap_dir dir, const rs_frame *f)
{
    int rc = net->cap_whole_ranks ? rs_pcap_write_keyed(net->cap_ng, k, ifid, dir, t, f)
                                  : rs_pcap_write_on(net->cap_ng, ifid, dir, t, f);
    if (rc != RS_OK && net->cap_err == RS_OK)
        net->cap_err = rc;
}

/* Write the held records stamped at or before `upto`. */
static void release(rs_net *net, rs_time upto)
{
    struct rs_capwait *w = net->cap_wait;
    while (w->head < w->n && w->r[w->head].t <= upto) {
        const capwait_rec *r = &w->r[w->head++];
        emit(net, &r->key, r->t, r->ifid, r->dir, &r->f);
    }
    if (w->head == w->n)
        w->head = w->n = 0;
}

/* A record stamped now: out as soon as no lagged record can precede it. */
static void hold(rs_net *net, rs_time now, uint32_t ifid, rs_pcap_dir dir, const rs_frame *f)
{
    struct rs_capwait *w = net->cap_wait;
    rs_pcap_key k = key_of(net, now, 0);
    if (w->lag == 0) {
        emit(net, &k, now, ifid, dir, f);
        return;
    }
    if (now >= w->lag)
        release(net, now - w->lag);
    if (w->n == w->cap && w->head > 0) {
        memmove(w->r, w->r + w->head, (w->n - w->head) * sizeof *w->r);
        w->n -= w->head;
        w->head = 0;
    }
    if (rs_array_reserve(&w->r, &w->cap, w->n + 1, sizeof *w->r, 1024) != RS_OK) {
        if (net->cap_err == RS_OK)
            net->cap_err = RS_ENOMEM;
        return;
    }
    w->r[w->n++] = (capwait_rec){ now, ifid, dir, *f, k };
}

/* pcapng: one file for the run, one interface per captured port, named
 * after the port and described by the cable's other end. A split run:
 * rank 0 opens that file and every process its part (capture_start). */
static int open_pcapng(rs_net *net, const char *dir, const rs_capture_config *c, const char *comment,
                       rs_err *err)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/capture.pcapng", dir) >= sizeof path)
        return rs_err_set(err, RS_EIO, "%s: capture path too long", dir);
    net->cap_if = malloc((size_t)net->nports * sizeof *net->cap_if);
    net->cap_wait = calloc(1, sizeof *net->cap_wait);
    if (!net->cap_if || !net->cap_wait)
        return rs_err_set(err, RS_ENOMEM, "out of memory for %u capture interfaces", net->nports);
    if (rs_time_from_ns(net->cfg.switch_latency_ns, &net->cap_wait->lag) != RS_OK)
        return rs_err_set(err, RS_EINVAL, "topology.switch_latency_ns: expected a time");
    for (uint32_t i = 0; i < net->nports; i++)
        net->cap_if[i] = RS_NONE;
    if (rs_part_ranks(net) > 1) {
        net->cap_whole_ranks = rs_part_ranks(net);
        if (!(net->cap_dir = strdup(dir)))
            return rs_err_set(err, RS_ENOMEM, "out of memory");
        if (rs_part_rank(net) != 0)
            return RS_OK;
        return rs_pcapng_open(path, c->snaplen, comment, "railsim " RS_VERSION, &net->cap_whole, err);
    }
    return rs_pcapng_open(path, c->snaplen, comment, "railsim " RS_VERSION, &net->cap_ng, err);
}

/* Part r of a split run's pcapng (hidden until merged and removed). */
static int part_path(const rs_net *net, uint32_t r, char *buf, size_t n)
{
    return (size_t)snprintf(buf, n, "%s/.capture.pcapng.part%u", net->cap_dir, r) < n ? RS_OK : RS_EIO;
}

int rs_net_capture_start(rs_net *net, const char *dir, const rs_capture_config *cfg,
                         const char *comment, uint32_t *nports, rs_err *err)
{
    *nports = 0;
    rs_capture_config own;
    rs_capture_config_default(&own);
    if (rs_versioned_take(&own, sizeof own, cfg, RS_SIZE_V1(rs_capture_config, format)) != RS_OK)
        return rs_err_set(err, RS_EINVAL, "capture: a configuration of no known size (initialise it with "
                          "rs_capture_config_default)");
    const rs_capture_config *c = &own;
    if (rs_time_from_ns(c->start_ns, &net->cap_start) != RS_OK ||
        rs_time_from_ns(c->end_ns, &net->cap_end) != RS_OK || net->cap_end <= net->cap_start)
        return rs_err_set(err, RS_EINVAL, "capture.end_ns: expected a time after capture.start_ns");
    int ng = c->format == RS_CAPTURE_PCAPNG;
    int rc;
    if (dir && ng && (rc = open_pcapng(net, dir, c, comment, err)) != RS_OK)
        return rc;
    for (uint32_t i = 0; i < net->nports; i++) {
        rs_port *p = &net->ports[i];
        if (p->kind == RS_PORT_GPU_HB || p->kind == RS_PORT_HB)
            continue; /* NVLink is not Ethernet: never captured */
        char name[48], path[4096];
        rs_topo_port_name(net, i, name, sizeof name);
        if (!matches(c->ports, name))
            continue;
        if (!dir) {
            (*nports)++;
            continue;
        }
        if (ng) {
            char peer[48], descr[2 * 48 + 20];
            rs_topo_port_name(net, p->peer_port, peer, sizeof peer);
            snprintf(descr, sizeof descr, "port %s, cable to %s", name, peer);
            rs_pcap *whole = net->cap_whole_ranks ? net->cap_whole : net->cap_ng;
            if (whole && (rc = rs_pcap_add_interface(whole, name, descr, &net->cap_if[i], err)) != RS_OK)
                return rc;
            if (!whole)
                net->cap_if[i] = *nports; /* a split run's part: the ids rank 0's file gives */
            p->cap = net->cap_ng;
            (*nports)++;
            continue;
        }
        if (!rs_part_owns_node(net, p->node)) {
            (*nports)++; /* a split run: its owner writes its file */
            continue;
        }
        if ((size_t)snprintf(path, sizeof path, "%s/%s.pcap", dir, name) >= sizeof path)
            return rs_err_set(err, RS_EIO, "%s: capture path too long", dir);
        if ((rc = rs_pcap_open(path, c->snaplen, &p->cap, err)) != RS_OK)
            return rc;
        (*nports)++;
    }
    if (*nports == 0)
        return rs_err_set(err, RS_EINVAL,
                          "capture.ports: '%s' matches no Ethernet port; expected names such as "
                          "gpu0.nic, leaf0.p3, spine1.*, rail2-leaf0.* (see docs/pcap.md)", c->ports);
    if (dir && ng && net->cap_whole_ranks) {
        char path[4096];
        if (part_path(net, rs_part_rank(net), path, sizeof path) != RS_OK)
            return rs_err_set(err, RS_EIO, "%s: capture path too long", dir);
        if ((rc = rs_pcapng_open_part(path, c->snaplen, *nports, &net->cap_ng, err)) != RS_OK)
            return rc;
        for (uint32_t i = 0; i < net->nports; i++)
            if (net->cap_if[i] != RS_NONE && rs_part_owns_node(net, net->ports[i].node))
                net->ports[i].cap = net->cap_ng;
    }
    net->cap_err = RS_OK;
    net->cap_in = dir && ng;
    return RS_OK;
}

void rs_capture_part_close(rs_net *net)
{
    if (!net->cap_whole_ranks || !net->cap_ng)
        return;
    release(net, RS_TIME_MAX);
    for (uint32_t i = 0; i < net->nports; i++)
        if (rs_part_owns_port(net, i) && net->ports[i].cap == net->cap_ng)
            net->ports[i].cap = NULL;
    rs_err e;
    if (net->cap_err != RS_OK)
        rs_pcap_abort(net->cap_ng);
    else if (rs_pcap_close(net->cap_ng, &e) != RS_OK)
        net->cap_err = RS_EIO; /* its part is missing: rank 0's merge says which */
    net->cap_ng = NULL;
}

/* Rank 0 of a split run: the parts into the whole file, in the serial
 * run's order; the parts go. */
static int merge_parts(rs_net *net, int keep, int rc, rs_err *err)
{
    uint32_t R = net->cap_whole_ranks;
    char (*paths)[4200] = calloc(R, sizeof *paths);
    const char **names = calloc(R, sizeof *names);
    if (!paths || !names)
        rc = rc != RS_OK ? rc : rs_err_set(err, RS_ENOMEM, "out of memory merging the capture");
    for (uint32_t r = 0; paths && names && r < R; r++) {
        if (part_path(net, r, paths[r], sizeof paths[r]) != RS_OK && rc == RS_OK)
            rc = rs_err_set(err, RS_EIO, "%s: capture path too long", net->cap_dir);
        names[r] = paths[r];
    }
    if (keep && rc == RS_OK)
        rc = rs_pcapng_merge(net->cap_whole, names, R, err);
    if (keep && rc == RS_OK)
        rc = rs_pcap_close(net->cap_whole, err);
    else
        rs_pcap_abort(net->cap_whole);
    net->cap_whole = NULL;
    for (uint32_t r = 0; paths && r < R; r++)
        unlink(paths[r]);
    free(paths);
    free(names);
    return rc;
}

int rs_net_capture_finish(rs_net *net, int keep, rs_err *err)
{
    int rc = net->cap_err;
    if (rc != RS_OK)
        rs_err_set(err, rc, "a capture file could not be written");
    for (uint32_t i = 0; net->ports && i < net->nports; i++) {
        if (!rs_part_owns_port(net, i))
            continue; /* a split run: its process closes its file */
        rs_port *p = &net->ports[i];
        if (!p->cap)
            continue;
        if (p->cap == net->cap_ng) {
            /* shared: closed once, below */
        } else if (keep && rc == RS_OK) {
            rc = rs_pcap_close(p->cap, err);
        } else {
            rs_pcap_abort(p->cap);
        }
        p->cap = NULL;
    }
    if (net->cap_ng && net->cap_wait && keep && rc == RS_OK && !net->cap_whole_ranks) {
        release(net, RS_TIME_MAX);
        if ((rc = net->cap_err) != RS_OK)
            rs_err_set(err, rc, "a capture file could not be written");
    }
    if (net->cap_wait) {
        free(net->cap_wait->r);
        free(net->cap_wait);
        net->cap_wait = NULL;
    }
    if (net->cap_ng) {
        /* A split run's part still open: the run stopped before its end. */
        if (keep && rc == RS_OK && !net->cap_whole_ranks)
            rc = rs_pcap_close(net->cap_ng, err);
        else
            rs_pcap_abort(net->cap_ng);
        net->cap_ng = NULL;
    }
    if (net->cap_whole)
        rc = merge_parts(net, keep, rc, err);
    free(net->cap_if);
    free(net->cap_dir);
    net->cap_if = NULL;
    net->cap_dir = NULL;
    net->cap_in = 0;
    net->cap_whole_ranks = 0;
    return rc;
}

/* The frame pkt is on the wire out of port p (its sender), having crossed
 * `hops` switches so far. */
static void describe(const rs_net *net, const rs_link *p, const rs_pkt *pkt, uint32_t hops, rs_frame *out)
{
    rs_frame f;
    memset(&f, 0, sizeof f);
    f.eth_src = p->node;
    f.eth_dst = p->peer_node;
    f.prio = pkt->prio;
    if (pkt->type == RS_PKT_PFC) {
        f.kind = RS_FRAME_PFC;
        f.pfc_enable = pkt->flags;
        for (unsigned q = 0; q < RS_NPRIO; q++)
            f.pfc_quanta[q] = (pkt->psn & (1u << q)) ? RS_PFC_QUANTA_MAX : 0;
    } else {
        const rs_flow *fl = &net->flows[pkt->flow];
        /* Numbered by creation (serial), not by record: records are reused. */
        uint32_t qpi = (uint32_t)fl->serial, qp_src = 0x100 + 2 * qpi, qp_dst = qp_src + 1;
        f.ip_src = pkt->src;
        f.ip_dst = pkt->dst;
        f.ttl = (uint8_t)(64 - (hops < 63 ? hops : 63));
        f.udp_sport = pkt->entropy;
        f.ecn = (pkt->flags & RS_PF_CE) ? 3 : (pkt->flags & RS_PF_ECT) ? 2 : 0;
        f.psn = pkt->psn;
        switch (pkt->type) {
        case RS_PKT_DATA:
            f.kind = RS_FRAME_ROCE_DATA;
            f.dest_qp = qp_dst;
            f.ackreq = (pkt->flags & RS_PF_ACKREQ) != 0;
            f.payload_len = pkt->payload;
            if ((pkt->flags & (RS_PF_FIRST | RS_PF_LAST)) == (RS_PF_FIRST | RS_PF_LAST))
                f.opcode = RS_BTH_RC_WRITE_ONLY;
            else if (pkt->flags & RS_PF_FIRST)
                f.opcode = RS_BTH_RC_WRITE_FIRST;
            else if (pkt->flags & RS_PF_LAST)
                f.opcode = RS_BTH_RC_WRITE_LAST;
            else
                f.opcode = RS_BTH_RC_WRITE_MIDDLE;
            f.reth_va = 0x7f0000000000ULL + ((uint64_t)qpi << 24);
            f.reth_rkey = 0x1000 + qpi;
            f.reth_len = (uint32_t)fl->bytes;
            break;
        case RS_PKT_ACK:
        case RS_PKT_NAK:
            f.kind = pkt->type == RS_PKT_ACK ? RS_FRAME_ROCE_ACK : RS_FRAME_ROCE_NAK;
            f.dest_qp = qp_src;
            f.aeth_syndrome = pkt->type == RS_PKT_ACK ? RS_AETH_ACK_CREDITS_INVALID : RS_AETH_NAK_PSN_SEQ_ERR;
            /* MSN: messages completed on this QP (one message per QP). */
            f.aeth_msn = pkt->type == RS_PKT_ACK && pkt->psn + 1 == fl->npkts;
            f.sack = (pkt->flags & RS_PF_SACK) != 0;
            f.sack_psn = f.sack ? pkt->sack : 0;
            break;
        default:
            f.kind = RS_FRAME_ROCE_CNP;
            f.dest_qp = qp_src;
            f.becn = 1;
            break;
        }
    }
    RS_ASSERT(rs_frame_wire_bytes(&f) == pkt->wire);
    *out = f;
}

void rs_capture_frame(rs_net *net, const rs_port *p, const rs_pkt *pkt, rs_time t)
{
    rs_frame f;
    describe(net, &net->links[p - net->ports], pkt, pkt->hops, &f);
    if (net->cap_ng) {
        hold(net, t, net->cap_if[p - net->ports], RS_PCAP_OUT, &f);
        return;
    }
    int rc = rs_pcap_write(p->cap, t, &f);
    if (rc != RS_OK && net->cap_err == RS_OK)
        net->cap_err = rc;
}

void rs_capture_arrival(rs_net *net, const rs_pkt *pkt, rs_time now)
{
    uint32_t ifid = net->cap_if[pkt->to_port];
    if (ifid == RS_NONE)
        return;
    /* At a switch the event runs after its pipeline: the last bit came in
     * that long ago (topo.c: the delay of a link into a switch is the
     * propagation plus the switch's pipeline latency). */
    int sw = net->nodes[pkt->to_node].kind == RS_NODE_SWITCH;
    rs_time lag = sw ? net->cap_wait->lag : 0;
    rs_time t = now - lag;
    if (t < net->cap_start || t >= net->cap_end)
        return;
    /* The bytes its sender put on the wire: the arrival has counted this
     * hop already, the TTL was set before it. */
    rs_frame f;
    describe(net, &net->links[pkt->link], pkt, pkt->hops - 1, &f); /* the sender may be another process */
    if (lag == 0) {
        hold(net, t, ifid, RS_PCAP_IN, &f);
        return;
    }
    release(net, t);
    rs_pcap_key k = key_of(net, t, 1);
    emit(net, &k, t, ifid, RS_PCAP_IN, &f);
}
