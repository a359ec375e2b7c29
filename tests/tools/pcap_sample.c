/*
 * pcap_sample.c - writes one frame of every kind the simulator captures to
 * OUT.pcap, for tests/e2e/pcap_check.sh to dissect with tshark and to check
 * the ICRCs with scapy: RDMA WRITE First/Middle/Last/Only, ACK, NAK, CNP, a
 * PFC pause of two classes, a selective NAK (SACK extension), a CE-marked packet and an odd payload length
 * that needs BTH padding. Frames are 1 us apart starting at 1.5 us + 1 ps
 * (the extra picosecond is truncated away in the file).
 *
 * With an OUT name ending in ".pcapng" it writes a pcapng file instead:
 * section comment "railsim pcap_sample", two interfaces, gpu1.nic (the
 * requester's NIC) and leaf0.p0 (the switch port at the cable's other
 * end); each frame on gpu1.nic (data outbound; ACK, NAK, CNP and the PFC
 * pause inbound) at the times above, kept to the picosecond, and again on
 * leaf0.p0 in the other direction 250 ns later: 20 records.
 *
 * Usage: pcap_sample OUT.pcap|OUT.pcapng    Exit 0 on success, 1 on a
 * write error, 2 on bad usage.
 */
#include "pcap.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: pcap_sample OUT.pcap\n");
        return 2;
    }
    rs_err err = { 0 };
    rs_pcap *w;
    size_t len = strlen(argv[1]);
    int ng = len > 7 && !strcmp(argv[1] + len - 7, ".pcapng");
    if ((ng ? rs_pcapng_open(argv[1], 0, "railsim pcap_sample", "railsim " RS_VERSION, &w, &err)
            : rs_pcap_open(argv[1], 0, &w, &err)) != RS_OK ||
        (ng && (rs_pcap_add_interface(w, "gpu1.nic", "GPU 1's NIC", NULL, &err) != RS_OK ||
                rs_pcap_add_interface(w, "leaf0.p0", "leaf 0, port 0, toward gpu1.nic", NULL, &err) != RS_OK))) {
        fprintf(stderr, "pcap_sample: %s\n", err.msg);
        return 1;
    }

    /* One RC flow from GPU 1 (10.0.0.1) to GPU 0x010203 (10.1.2.3), on
     * lossless priority 3, ECN-capable; a 3 x 1024-byte WRITE then a
     * one-packet WRITE. */
    const rs_frame base = {
        .kind = RS_FRAME_ROCE_DATA,
        .eth_src = 1, .eth_dst = 0x10203,
        .ip_src = 1, .ip_dst = 0x10203,
        .prio = 3, .ecn = 2, .ttl = 64,
        .udp_sport = 0xC123,
        .dest_qp = 0x000123, .psn = 100,
        .reth_va = 0x00007F0012340000ULL, .reth_rkey = 0xABCD, .reth_len = 3 * 1024,
        .payload_len = 1024,
    };
    rs_frame fr[10];
    int n = 0;

    fr[n] = base; fr[n].opcode = RS_BTH_RC_WRITE_FIRST; n++;
    fr[n] = base; fr[n].opcode = RS_BTH_RC_WRITE_MIDDLE; fr[n].psn = 101; n++;
    fr[n] = base; fr[n].opcode = RS_BTH_RC_WRITE_LAST; fr[n].psn = 102; fr[n].ackreq = 1; n++;
    /* WRITE Only with an odd length (1001 bytes: PadCnt 3) */
    fr[n] = base; fr[n].opcode = RS_BTH_RC_WRITE_ONLY; fr[n].psn = 103; fr[n].ackreq = 1;
    fr[n].reth_len = 1001; fr[n].payload_len = 1001; n++;
    /* CE-marked by a switch, FECN set as the receiver would see it */
    fr[n] = base; fr[n].opcode = RS_BTH_RC_WRITE_MIDDLE; fr[n].psn = 104; fr[n].ecn = 3;
    fr[n].fecn = 1; n++;

    /* Responder -> requester: ACK of PSN 102 (MSN 1), NAK PSN sequence
     * error expecting 104, CNP for QP 0x000456. */
    rs_frame back = base;
    back.eth_src = base.eth_dst; back.eth_dst = base.eth_src;
    back.ip_src = base.ip_dst; back.ip_dst = base.ip_src;
    back.dest_qp = 0x000456; back.payload_len = 0; back.ecn = 0;
    fr[n] = back; fr[n].kind = RS_FRAME_ROCE_ACK; fr[n].psn = 102;
    fr[n].aeth_syndrome = RS_AETH_ACK_CREDITS_INVALID; fr[n].aeth_msn = 1; n++;
    fr[n] = back; fr[n].kind = RS_FRAME_ROCE_NAK; fr[n].psn = 104;
    fr[n].aeth_syndrome = RS_AETH_NAK_PSN_SEQ_ERR; fr[n].aeth_msn = 1; n++;
    fr[n] = back; fr[n].kind = RS_FRAME_ROCE_CNP; fr[n].prio = 6; n++;

    /* PFC from switch port 7: pause priority 3 for 0xFFFF quanta, XON
     * (time 0) for priority 4. */
    rs_frame pfc = { .kind = RS_FRAME_PFC, .eth_src = 7, .pfc_enable = 0x18 };
    pfc.pfc_quanta[3] = 0xFFFF;
    fr[n++] = pfc;

    /* transport.recovery=selective: NAK expecting 104 that selectively
     * acknowledges PSN 107 (railsim's SACK extension after the AETH). */
    fr[n] = back; fr[n].kind = RS_FRAME_ROCE_NAK; fr[n].psn = 104;
    fr[n].aeth_syndrome = RS_AETH_NAK_PSN_SEQ_ERR; fr[n].sack = 1; fr[n].sack_psn = 107; n++;

    int rc = RS_OK;
    for (int i = 0; i < n && rc == RS_OK; i++) {
        rs_time t = 1500000 + (rs_time)i * 1000000 + 1;
        if (!ng) {
            rc = rs_pcap_write(w, t, &fr[i]);
            continue;
        }
        rs_pcap_dir at_gpu = fr[i].kind == RS_FRAME_ROCE_DATA ? RS_PCAP_OUT : RS_PCAP_IN;
        rc = rs_pcap_write_on(w, 0, at_gpu, t, &fr[i]);
        if (rc == RS_OK)
            rc = rs_pcap_write_on(w, 1, at_gpu == RS_PCAP_OUT ? RS_PCAP_IN : RS_PCAP_OUT, t + 250000, &fr[i]);
    }
    if (rc != RS_OK) {
        fprintf(stderr, "pcap_sample: writing frame failed: %s\n", rs_strerror(rc));
        rs_pcap_abort(w);
        return 1;
    }
    if (rs_pcap_close(w, &err) != RS_OK) {
        fprintf(stderr, "pcap_sample: %s\n", err.msg);
        return 1;
    }
    return 0;
}
