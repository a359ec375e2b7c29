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
 */
#include "netint.h"

#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

void rs_capture_config_default(rs_capture_config *c)
{
    memset(c, 0, sizeof *c);
    c->start_ns = 0;
    c->end_ns = 1e15; /* a thousand seconds: the whole run */
    c->snaplen = 0;
}

static int matches(const char *patterns, const char *name)
{
    char buf[sizeof ((rs_capture_config *)0)->ports];
    snprintf(buf, sizeof buf, "%s", patterns);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ')
            tok++;
        if (*tok && fnmatch(tok, name, 0) == 0)
            return 1;
    }
    return 0;
}

int rs_net_capture_start(rs_net *net, const char *dir, const rs_capture_config *c,
                         uint32_t *nports, rs_err *err)
{
    *nports = 0;
    if (rs_time_from_ns(c->start_ns, &net->cap_start) != RS_OK ||
        rs_time_from_ns(c->end_ns, &net->cap_end) != RS_OK || net->cap_end <= net->cap_start)
        return rs_err_set(err, RS_EINVAL, "capture.end_ns: expected a time after capture.start_ns");
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
        if ((size_t)snprintf(path, sizeof path, "%s/%s.pcap", dir, name) >= sizeof path)
            return rs_err_set(err, RS_EIO, "%s: capture path too long", dir);
        int rc = rs_pcap_open(path, c->snaplen, &p->cap, err);
        if (rc != RS_OK)
            return rc;
        (*nports)++;
    }
    if (*nports == 0)
        return rs_err_set(err, RS_EINVAL,
                          "capture.ports: '%s' matches no Ethernet port; expected names such as "
                          "gpu0.nic, leaf0.p3, spine1.*, rail2-leaf0.* (see docs/pcap.md)", c->ports);
    net->cap_err = RS_OK;
    return RS_OK;
}

int rs_net_capture_finish(rs_net *net, int keep, rs_err *err)
{
    int rc = net->cap_err;
    if (rc != RS_OK)
        rs_err_set(err, rc, "a capture file could not be written");
    for (uint32_t i = 0; net->ports && i < net->nports; i++) {
        rs_port *p = &net->ports[i];
        if (!p->cap)
            continue;
        if (keep && rc == RS_OK) {
            rc = rs_pcap_close(p->cap, err);
        } else {
            rs_pcap_abort(p->cap);
        }
        p->cap = NULL;
    }
    return rc;
}

void rs_capture_frame(rs_net *net, const rs_port *p, const rs_pkt *pkt, rs_time t)
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
        uint32_t qp_src = 0x100 + 2 * pkt->flow, qp_dst = qp_src + 1;
        f.ip_src = pkt->src;
        f.ip_dst = pkt->dst;
        f.ttl = (uint8_t)(64 - (pkt->hops < 63 ? pkt->hops : 63));
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
            f.reth_va = 0x7f0000000000ULL + ((uint64_t)pkt->flow << 24);
            f.reth_rkey = 0x1000 + pkt->flow;
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
    int rc = rs_pcap_write(p->cap, t, &f);
    if (rc != RS_OK && net->cap_err == RS_OK)
        net->cap_err = rc;
}
