/*
 * pcap.h - packet capture writer: turns frame descriptions into the exact
 * bytes a RoCEv2 / PFC wire carries and appends them to a pcap file.
 *
 * The simulator never stores payload bytes. When a port is captured it hands
 * this module an rs_frame (addresses, priority, ECN, BTH fields, lengths) and
 * the module synthesizes Ethernet II + IPv4 + UDP + InfiniBand BTH (+ RETH /
 * AETH / CNP reserved bytes) + payload + pad + ICRC, or an 802.1Qbb PFC
 * frame, and writes it with libpcap (Ethernet link type, nanosecond
 * timestamps, no FCS), or as pcapng blocks of its own (several interfaces
 * in one file, picosecond timestamps, a direction per frame). This is the
 * only module that links libpcap or knows either file format.
 *
 * Files are written as PATH.tmp and renamed to PATH by rs_pcap_close, so an
 * interrupted run never leaves a capture that looks complete.
 *
 * docs/pcap.md describes the frame layout field by field.
 */
#ifndef RS_PCAP_H
#define RS_PCAP_H

#include "base.h"

#include <stddef.h>
#include <stdint.h>

/* What a frame is; selects its layout (see rs_frame_build). */
typedef enum {
    RS_FRAME_ROCE_DATA, /* BTH with f->opcode; RETH on WRITE First/Only */
    RS_FRAME_ROCE_ACK,  /* BTH opcode Acknowledge + AETH */
    RS_FRAME_ROCE_NAK,  /* same layout as ACK; the syndrome says NAK; + SACK extension if f->sack */
    RS_FRAME_ROCE_CNP,  /* BTH opcode 0x81 + 16 reserved bytes */
    RS_FRAME_PFC        /* 802.1Qbb priority flow control (MAC Control) */
} rs_frame_kind;

/* IB BTH opcodes used by the simulator (IBA vol. 1, 9.2 table 38; RC
 * transport is 000b in bits 7-5). CNP is RoCEv2 Annex A17.9.3. */
#define RS_BTH_RC_WRITE_FIRST  0x06
#define RS_BTH_RC_WRITE_MIDDLE 0x07
#define RS_BTH_RC_WRITE_LAST   0x08
#define RS_BTH_RC_WRITE_ONLY   0x0A
#define RS_BTH_RC_ACK          0x11
#define RS_BTH_CNP             0x81

/* AETH syndromes (IBA vol. 1, 9.7.5.2.4 / table 44): bits 6-5 select
 * ACK (00), RNR NAK (01) or NAK (11); an ACK's low 5 bits are credits
 * (0x1F = invalid/unlimited), a NAK's are the code (0 = PSN sequence error). */
#define RS_AETH_ACK_CREDITS_INVALID 0x1F
#define RS_AETH_NAK_PSN_SEQ_ERR     0x60

/* UDP destination port of RoCEv2 (IANA-assigned; Annex A17). */
#define RS_ROCEV2_UDP_PORT 4791

/* Largest frame rs_frame_build can produce: Ethernet header + the 65,535
 * bytes an IPv4 total length can describe. */
#define RS_FRAME_MAX (14u + 65535u)

/* A frame description. Plain value type; the caller owns it. Fields beyond
 * their wire width are masked (dest_qp, psn, aeth_msn to 24 bits, prio to
 * 3, ecn to 2); ids are checked (ip ids must be < 2^24). */
typedef struct rs_frame {
    rs_frame_kind kind;
    uint32_t eth_src, eth_dst;   /* ids -> MAC 02:00:ii:ii:ii:ii (locally administered unicast) */
    uint32_t ip_src, ip_dst;     /* GPU ids -> IPv4 10.a.b.c from the 24-bit id (id < 2^24) */
    uint8_t prio;                /* 802.1p priority 0-7 -> IP DSCP = prio * 8 (CS<prio>); no VLAN tag */
    uint8_t ecn;                 /* IP ECN bits: 0 not-ECT, 2 ECT(0), 3 CE */
    uint8_t ttl;                 /* IP TTL */
    uint16_t udp_sport;          /* flow entropy; destination port is always 4791 */
    uint8_t opcode;              /* BTH opcode of RS_FRAME_ROCE_DATA: RC WRITE First/Middle/
                                    Last/Only (RS_BTH_RC_WRITE_*) or RC SEND First/Middle/Last/
                                    Only (0x00-0x02, 0x04); ignored by the other kinds */
    uint8_t ackreq, fecn, becn;  /* BTH bits (0 or nonzero); a CNP always has B=1, F=A=0 */
    uint32_t dest_qp;            /* 24 bits */
    uint32_t psn;                /* 24 bits */
    uint64_t reth_va; uint32_t reth_rkey; uint32_t reth_len;  /* RETH, on WRITE First/Only */
    uint8_t aeth_syndrome;       /* AETH on ACK/NAK: ACK 0x00|credits, NAK PSN seq. error 0x60 */
    uint32_t aeth_msn;           /* 24 bits */
    uint8_t sack;                /* NAK: railsim's 4-byte SACK extension follows the AETH
                                    (transport.recovery=selective; docs/pcap.md) */
    uint32_t sack_psn;           /* the PSN it acknowledges selectively, 24 bits */
    uint32_t payload_len;        /* RoCE payload bytes of DATA frames, before the pad to a
                                    multiple of 4 (synthesized: byte i = (psn * 7 + i) mod 256) */
    uint8_t pfc_enable;          /* PFC: class-enable vector bits 0-7 */
    uint16_t pfc_quanta[8];      /* PFC: pause time per class in quanta (512 bit times) */
} rs_frame;

typedef struct rs_pcap rs_pcap;

/* Create a capture file at path: written as path + ".tmp" (truncating any
 * stale one) and renamed to path by rs_pcap_close. snaplen: bytes of each
 * frame kept (0 = whole frame). Nanosecond timestamps, link type Ethernet.
 * The path is copied. On success *out owns the file until rs_pcap_close or
 * rs_pcap_abort. Errors: RS_EINVAL (NULL path/out), RS_ENOMEM, RS_EIO with
 * err naming the file and the system's reason. */
int rs_pcap_open(const char *path, uint32_t snaplen, rs_pcap **out, rs_err *err);

/* Create a pcapng file at path (PATH.tmp, renamed by rs_pcap_close, as
 * rs_pcap_open): one section whose header carries comment (opt_comment:
 * run metadata; NULL or "" for none) and appl (shb_userappl, e.g.
 * "railsim 0.1.0"; NULL for none), both copied at once. Nothing else goes
 * in the header (no host, no OS, no clock), so the bytes depend only on
 * what is written. Frames need an interface (rs_pcap_add_interface).
 * snaplen as for rs_pcap_open. Errors: RS_EINVAL (NULL path/out, a
 * string over 65,535 bytes), RS_ENOMEM, RS_EIO naming the file. */
int rs_pcapng_open(const char *path, uint32_t snaplen, const char *comment, const char *appl,
                   rs_pcap **out, rs_err *err);

/* Describe the next interface of a pcapng file (an Interface Description
 * Block): Ethernet, if_name = name, if_description = description (NULL:
 * none), picosecond timestamps (if_tsresol 12), no FCS (if_fcslen 0).
 * Interface ids count from 0 in call order; *ifid (may be NULL) gets this
 * one's. Add them before the frames that use them. Errors: RS_EINVAL (a
 * classic pcap writer, NULL or empty name, a string over 65,535 bytes),
 * RS_EIO if the file already failed or this write does (sticky). */
int rs_pcap_add_interface(rs_pcap *w, const char *name, const char *description, uint32_t *ifid,
                          rs_err *err);

/* The direction of a frame at the port its interface stands for. */
typedef enum {
    RS_PCAP_IN = 1,  /* received: sent by the port at the cable's other end */
    RS_PCAP_OUT = 2  /* sent by this port */
} rs_pcap_dir;

/* Append one frame at simulated time t (picoseconds; the record gets
 * t / 1000 ns, truncated; seconds since the epoch, i.e. 1970-01-01 is the
 * start of the run). The record's original length is the full frame, the
 * stored bytes at most snaplen. Records are written in call order.
 * Returns RS_OK, RS_EINVAL for a frame rs_frame_build rejects (not sticky),
 * or RS_EIO on a write failure (sticky: later writes and close fail too). */
int rs_pcap_write(rs_pcap *w, rs_time t, const rs_frame *f);

/* As rs_pcap_write, on interface ifid with a direction. pcapng: an
 * Enhanced Packet Block with the exact time in picoseconds and epb_flags
 * (direction; reception type unicast, or multicast for PFC; FCS length 0);
 * ifid must be an added interface, else RS_EINVAL (not sticky). Classic
 * pcap has one link and no direction: ifid must be 0 and dir is ignored.
 * rs_pcap_write(w, t, f) is rs_pcap_write_on(w, 0, RS_PCAP_OUT, t, f). */
int rs_pcap_write_on(rs_pcap *w, uint32_t ifid, rs_pcap_dir dir, rs_time t, const rs_frame *f);

/* pcapng in parts (a run split over processes, docs/parallel.md): each
 * process writes the blocks of the ports it owns into a part file, every
 * block after the key that places it in the serial run's file, and one
 * process merges the parts into the file rs_pcapng_open made. The key:
 * the record's stamp, its class (0: written as its event ran, 1: an
 * arrival stamped a pipeline latency back), the event's time and key
 * (rs_sim_key), the shared event's step (which flow start of it) and
 * the record's index within the event. */
typedef struct rs_pcap_key {
    rs_time stamp, ev_t;
    uint64_t ev_key;
    uint32_t step, idx;
    uint8_t cls;
} rs_pcap_key;

/* Total order of keys: stamp, class, event time, event key, step, index. */
int rs_pcap_key_cmp(const rs_pcap_key *a, const rs_pcap_key *b);

/* A part file at path (PATH.tmp until rs_pcap_close) for a pcapng file
 * of nif interfaces; only rs_pcap_write_keyed writes to it. Errors as
 * rs_pcapng_open. */
int rs_pcapng_open_part(const char *path, uint32_t snaplen, uint32_t nif, rs_pcap **out, rs_err *err);

/* rs_pcap_write_on with the record's key: w must be a part (RS_EINVAL
 * otherwise; a part takes no unkeyed write). */
int rs_pcap_write_keyed(rs_pcap *w, const rs_pcap_key *key, uint32_t ifid, rs_pcap_dir dir, rs_time t,
                        const rs_frame *f);

/* Append the blocks of the closed part files parts[0..n) to the pcapng
 * file w, in key order (each part is in key order already). Errors:
 * RS_EINVAL (w not a whole pcapng file), RS_ENOMEM, RS_EIO naming the
 * part that cannot be read or is cut short, or w's write failure. */
int rs_pcapng_merge(rs_pcap *w, const char *const *parts, uint32_t n, rs_err *err);

/* Flush, close and rename PATH.tmp to PATH. Frees w, also on error (then
 * the temporary file is removed). RS_EIO with err naming the file if an
 * earlier write failed or flushing/renaming fails. NULL w: RS_EINVAL. */
int rs_pcap_close(rs_pcap *w, rs_err *err);

/* Close and delete the temporary file (a run that failed); frees w. NULL ok. */
void rs_pcap_abort(rs_pcap *w);

/* Build the frame bytes into buf (cap bytes) and return the frame length
 * (without FCS: libpcap Ethernet captures carry none; padded to the 60-byte
 * minimum). Returns 0 if cap is too small or the frame is invalid: unknown
 * kind, a DATA opcode other than those listed at rs_frame.opcode, ip id
 * >= 2^24, or a payload too large for one IPv4 packet (over 65,472 bytes
 * with RETH, 65,488 without).
 * RS_FRAME_MAX bytes always suffice. Pure function; exposed for tests. */
size_t rs_frame_build(const rs_frame *f, uint8_t *buf, size_t cap);

/* The ICRC of a RoCEv2 packet over IPv4 (IBA vol. 1 7.8.1, Annex A17):
 * ip points at the IPv4 header (20 bytes, no options), len counts the
 * bytes from there up to, not including, the ICRC (IP + UDP + BTH + the
 * rest). Fields a router may rewrite (TOS, TTL, IP checksum, UDP checksum,
 * the BTH FECN/BECN octet) are masked, so any hop's copy gives the same
 * value. The wire carries it least significant byte first. len below 40
 * (no room for the headers) or NULL ip: 0. Pure; reads only ip[0..len). */
uint32_t rs_frame_icrc(const uint8_t *ip, size_t len);

/* Bytes this frame occupies on the wire: frame + 4 FCS padded to the 64-byte
 * minimum, + 8 preamble/SFD + 12 inter-frame gap (IEEE 802.3 clause 4).
 * What the simulator serializes, so the simulator and the capture agree.
 * Does not validate ids (an invalid frame still gets its size). */
uint32_t rs_frame_wire_bytes(const rs_frame *f);

#endif
