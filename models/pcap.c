/*
 * pcap.c - frame synthesis, the libpcap writer (the only file that
 * includes pcap.h from libpcap) and a pcapng writer.
 *
 * rs_frame_build is a pure function from an rs_frame to wire bytes:
 *   RoCEv2 (IBA vol. 1 rel. 1.4, Annex A17 "RoCEv2"):
 *     Ethernet II | IPv4 (20) | UDP (8, dport 4791) | BTH (12)
 *     | RETH (16, WRITE First/Only) or AETH (4, Acknowledge; a selective
 *       NAK adds railsim's 4-byte SACK extension: reserved, PSN)
 *       or 16 reserved bytes (CNP) | payload | pad to 4 | ICRC (4)
 *   PFC (IEEE 802.1Qbb clause 36, 802.3 Annex 31D):
 *     Ethernet (01:80:C2:00:00:01, 0x8808) | opcode 0x0101 | class-enable
 *     vector (2) | 8 x pause time (2) | zeros to 60 bytes
 * Frames carry no FCS (libpcap's Ethernet link type stores none) and are
 * padded with zeros to the 60-byte minimum like a real MAC pads them.
 *
 * A classic pcap writer owns one pcap_t ("dead", only for its link type,
 * snaplen and nanosecond precision) and one dumper on PATH.tmp; a pcapng
 * writer owns only its stdio stream on PATH.tmp and writes the blocks
 * itself (libpcap 1.10 cannot write pcapng). Frames are built on the
 * stack, so writing never allocates.
 * Invariant: once a write fails, `failed` stays set and the file is only
 * ever removed, never renamed to PATH.
 */
/* libpcap's headers use the BSD types u_char/u_int, which glibc hides under
 * the project-wide _POSIX_C_SOURCE; _DEFAULT_SOURCE brings them back. It
 * must come before the first system header. */
#define _DEFAULT_SOURCE 1

#include "pcap.h"
#include "partfile.h"

#include <pcap/pcap.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ETH_HDR 14u
#define IP_HDR 20u
#define UDP_HDR 8u
#define BTH_HDR 12u
#define RETH_LEN 16u
#define AETH_LEN 4u
#define SACK_LEN 4u  /* railsim's SACK extension after a NAK's AETH */
#define CNP_RSVD 16u /* Annex A17.9.3: 16 reserved bytes after the BTH */
#define ICRC_LEN 4u
#define ETH_MIN 60u  /* 802.3 minimum frame (64) without the FCS */
#define FCS_LEN 4u
#define PREAMBLE_IFG 20u /* 7 preamble + 1 SFD + 12 inter-frame gap */

#define OFF_IP ETH_HDR
#define OFF_UDP (OFF_IP + IP_HDR)
#define OFF_BTH (OFF_UDP + UDP_HDR)
#define OFF_EXT (OFF_BTH + BTH_HDR)

#define PCAP_MAX_SNAPLEN 262144u /* libpcap's MAXIMUM_SNAPLEN */

struct rs_pcap {
    pcap_t *pd;         /* classic pcap: libpcap's dead handle and dumper */
    pcap_dumper_t *dump;
    FILE *ng;           /* pcapng: our own stream (NULL for classic pcap) */
    uint32_t nif;       /* pcapng: interfaces described so far */
    uint32_t snaplen;   /* bytes kept per record; 0 = all */
    int failed;         /* sticky: a write failed */
    int fail_errno;     /* errno of the first failure (0 if unknown) */
    char *path;         /* final name */
    char *tmp;          /* path + ".tmp", where the bytes go */
    int part;           /* pcapng in parts: each EPB follows its key (rs_pcapng_open_part) */
};

static void destroy(rs_pcap *w, int remove_tmp);

/* ---- CRC-32 (IEEE 802.3, reflected, poly 0x04C11DB7 / 0xEDB88320) ----
 * The IB ICRC uses the Ethernet CRC (IBA vol. 1, 7.8.1). Constant table so
 * the module keeps no mutable global state. */
static const uint32_t crc_tab[256] = {
    0x00000000, 0x77073096, 0xee0e612c, 0x990951ba, 0x076dc419, 0x706af48f,
    0xe963a535, 0x9e6495a3, 0x0edb8832, 0x79dcb8a4, 0xe0d5e91e, 0x97d2d988,
    0x09b64c2b, 0x7eb17cbd, 0xe7b82d07, 0x90bf1d91, 0x1db71064, 0x6ab020f2,
    0xf3b97148, 0x84be41de, 0x1adad47d, 0x6ddde4eb, 0xf4d4b551, 0x83d385c7,
    0x136c9856, 0x646ba8c0, 0xfd62f97a, 0x8a65c9ec, 0x14015c4f, 0x63066cd9,
    0xfa0f3d63, 0x8d080df5, 0x3b6e20c8, 0x4c69105e, 0xd56041e4, 0xa2677172,
    0x3c03e4d1, 0x4b04d447, 0xd20d85fd, 0xa50ab56b, 0x35b5a8fa, 0x42b2986c,
    0xdbbbc9d6, 0xacbcf940, 0x32d86ce3, 0x45df5c75, 0xdcd60dcf, 0xabd13d59,
    0x26d930ac, 0x51de003a, 0xc8d75180, 0xbfd06116, 0x21b4f4b5, 0x56b3c423,
    0xcfba9599, 0xb8bda50f, 0x2802b89e, 0x5f058808, 0xc60cd9b2, 0xb10be924,
    0x2f6f7c87, 0x58684c11, 0xc1611dab, 0xb6662d3d, 0x76dc4190, 0x01db7106,
    0x98d220bc, 0xefd5102a, 0x71b18589, 0x06b6b51f, 0x9fbfe4a5, 0xe8b8d433,
    0x7807c9a2, 0x0f00f934, 0x9609a88e, 0xe10e9818, 0x7f6a0dbb, 0x086d3d2d,
    0x91646c97, 0xe6635c01, 0x6b6b51f4, 0x1c6c6162, 0x856530d8, 0xf262004e,
    0x6c0695ed, 0x1b01a57b, 0x8208f4c1, 0xf50fc457, 0x65b0d9c6, 0x12b7e950,
    0x8bbeb8ea, 0xfcb9887c, 0x62dd1ddf, 0x15da2d49, 0x8cd37cf3, 0xfbd44c65,
    0x4db26158, 0x3ab551ce, 0xa3bc0074, 0xd4bb30e2, 0x4adfa541, 0x3dd895d7,
    0xa4d1c46d, 0xd3d6f4fb, 0x4369e96a, 0x346ed9fc, 0xad678846, 0xda60b8d0,
    0x44042d73, 0x33031de5, 0xaa0a4c5f, 0xdd0d7cc9, 0x5005713c, 0x270241aa,
    0xbe0b1010, 0xc90c2086, 0x5768b525, 0x206f85b3, 0xb966d409, 0xce61e49f,
    0x5edef90e, 0x29d9c998, 0xb0d09822, 0xc7d7a8b4, 0x59b33d17, 0x2eb40d81,
    0xb7bd5c3b, 0xc0ba6cad, 0xedb88320, 0x9abfb3b6, 0x03b6e20c, 0x74b1d29a,
    0xead54739, 0x9dd277af, 0x04db2615, 0x73dc1683, 0xe3630b12, 0x94643b84,
    0x0d6d6a3e, 0x7a6a5aa8, 0xe40ecf0b, 0x9309ff9d, 0x0a00ae27, 0x7d079eb1,
    0xf00f9344, 0x8708a3d2, 0x1e01f268, 0x6906c2fe, 0xf762575d, 0x806567cb,
    0x196c3671, 0x6e6b06e7, 0xfed41b76, 0x89d32be0, 0x10da7a5a, 0x67dd4acc,
    0xf9b9df6f, 0x8ebeeff9, 0x17b7be43, 0x60b08ed5, 0xd6d6a3e8, 0xa1d1937e,
    0x38d8c2c4, 0x4fdff252, 0xd1bb67f1, 0xa6bc5767, 0x3fb506dd, 0x48b2364b,
    0xd80d2bda, 0xaf0a1b4c, 0x36034af6, 0x41047a60, 0xdf60efc3, 0xa867df55,
    0x316e8eef, 0x4669be79, 0xcb61b38c, 0xbc66831a, 0x256fd2a0, 0x5268e236,
    0xcc0c7795, 0xbb0b4703, 0x220216b9, 0x5505262f, 0xc5ba3bbe, 0xb2bd0b28,
    0x2bb45a92, 0x5cb36a04, 0xc2d7ffa7, 0xb5d0cf31, 0x2cd99e8b, 0x5bdeae1d,
    0x9b64c2b0, 0xec63f226, 0x756aa39c, 0x026d930a, 0x9c0906a9, 0xeb0e363f,
    0x72076785, 0x05005713, 0x95bf4a82, 0xe2b87a14, 0x7bb12bae, 0x0cb61b38,
    0x92d28e9b, 0xe5d5be0d, 0x7cdcefb7, 0x0bdbdf21, 0x86d3d2d4, 0xf1d4e242,
    0x68ddb3f8, 0x1fda836e, 0x81be16cd, 0xf6b9265b, 0x6fb077e1, 0x18b74777,
    0x88085ae6, 0xff0f6a70, 0x66063bca, 0x11010b5c, 0x8f659eff, 0xf862ae69,
    0x616bffd3, 0x166ccf45, 0xa00ae278, 0xd70dd2ee, 0x4e048354, 0x3903b3c2,
    0xa7672661, 0xd06016f7, 0x4969474d, 0x3e6e77db, 0xaed16a4a, 0xd9d65adc,
    0x40df0b66, 0x37d83bf0, 0xa9bcae53, 0xdebb9ec5, 0x47b2cf7f, 0x30b5ffe9,
    0xbdbdf21c, 0xcabac28a, 0x53b39330, 0x24b4a3a6, 0xbad03605, 0xcdd70693,
    0x54de5729, 0x23d967bf, 0xb3667a2e, 0xc4614ab8, 0x5d681b02, 0x2a6f2b94,
    0xb40bbe37, 0xc30c8ea1, 0x5a05df1b, 0x2d02ef8d,
};

/* Running CRC without the initial/final inversion: start with 0xFFFFFFFF,
 * xor the result with 0xFFFFFFFF at the end. */
static uint32_t crc_update(uint32_t c, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        c = crc_tab[(c ^ p[i]) & 0xFFu] ^ (c >> 8);
    return c;
}

/* ---- byte helpers (network order) ---- */
static inline void put16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void put24(uint8_t *p, uint32_t v) { p[0] = (uint8_t)(v >> 16); put16(p + 1, v); }
static inline void put32(uint8_t *p, uint32_t v) { put16(p, v >> 16); put16(p + 2, v); }
static inline void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)(v >> 32));
    put32(p + 4, (uint32_t)v);
}

/* Locally administered (bit 1 of the first octet), unicast (bit 0 clear). */
static void put_mac(uint8_t *p, uint32_t id)
{
    p[0] = 0x02;
    p[1] = 0x00;
    put32(p + 2, id);
}

/* ---- layout ---- */

static uint8_t wire_opcode(const rs_frame *f)
{
    switch (f->kind) {
    case RS_FRAME_ROCE_ACK:
    case RS_FRAME_ROCE_NAK: return RS_BTH_RC_ACK;
    case RS_FRAME_ROCE_CNP: return RS_BTH_CNP;
    default: return f->opcode;
    }
}

/* Bytes between the BTH and the payload, or -1 for a frame we do not
 * synthesize: a DATA frame whose opcode needs headers we do not model
 * (READ, atomics, immediate data) or that is not data at all (ACK, CNP:
 * use their kinds). IBA vol. 1, 9.2 table 38 lists the headers per opcode. */
static int ext_len(const rs_frame *f)
{
    switch (f->kind) {
    case RS_FRAME_ROCE_ACK:
        return (int)AETH_LEN;
    case RS_FRAME_ROCE_NAK:
        return (int)(AETH_LEN + (f->sack ? SACK_LEN : 0));
    case RS_FRAME_ROCE_CNP:
        return (int)CNP_RSVD;
    case RS_FRAME_ROCE_DATA:
        switch (f->opcode) {
        case 0x00: case 0x01: case 0x02: case 0x04: /* RC SEND First/Middle/Last/Only */
        case RS_BTH_RC_WRITE_MIDDLE:
        case RS_BTH_RC_WRITE_LAST:
            return 0;
        case RS_BTH_RC_WRITE_FIRST:
        case RS_BTH_RC_WRITE_ONLY:
            return (int)RETH_LEN;
        default:
            return -1;
        }
    default:
        return -1;
    }
}

/* Length of the IPv4 packet of a RoCE frame (header to ICRC), 64-bit so an
 * absurd payload_len cannot wrap; 0 if the frame is not synthesized. */
static uint64_t roce_ip_len(const rs_frame *f)
{
    int ext = ext_len(f);
    if (ext < 0)
        return 0;
    uint64_t pay = 0;
    if (f->kind == RS_FRAME_ROCE_DATA)
        pay = ((uint64_t)f->payload_len + 3u) & ~(uint64_t)3u; /* + pad */
    return IP_HDR + UDP_HDR + BTH_HDR + (uint64_t)ext + pay + ICRC_LEN;
}

/* Frame length without FCS, before padding to ETH_MIN; 0 if invalid. */
static uint64_t frame_len(const rs_frame *f)
{
    switch (f->kind) {
    case RS_FRAME_PFC:
        return ETH_MIN;
    case RS_FRAME_ROCE_DATA:
    case RS_FRAME_ROCE_ACK:
    case RS_FRAME_ROCE_NAK:
    case RS_FRAME_ROCE_CNP: {
        uint64_t ip = roce_ip_len(f);
        return ip ? ETH_HDR + ip : 0;
    }
    }
    return 0;
}

static size_t build_pfc(const rs_frame *f, uint8_t *b)
{
    /* 802.1Qbb 36.1.3 / 802.3 Annex 31D: reserved MAC Control multicast
     * address, MAC Control EtherType, opcode 0x0101 (PFC). */
    static const uint8_t pfc_dst[6] = { 0x01, 0x80, 0xC2, 0x00, 0x00, 0x01 };
    memset(b, 0, ETH_MIN);
    memcpy(b, pfc_dst, 6);
    put_mac(b + 6, f->eth_src);
    put16(b + 12, 0x8808);
    put16(b + 14, 0x0101);
    /* priority_enable_vector: high octet reserved (0), bit i = priority i. */
    put16(b + 16, f->pfc_enable);
    /* time[0..7], in quanta of 512 bit times; a zero time for an enabled
     * class is XON. Times of disabled classes are sent as given (the
     * receiver ignores them); callers pass 0. */
    for (unsigned i = 0; i < 8; i++)
        put16(b + 18 + 2 * i, f->pfc_quanta[i]);
    /* bytes 34..59: reserved, transmitted as zero (Annex 31D.2). */
    return ETH_MIN;
}

/* Payload byte at offset i of a packet with this PSN: a cheap pattern that
 * differs between packets, so a capture does not look like all zeros, and
 * is reproducible from the descriptor alone. */
static inline uint8_t payload_byte(uint32_t psn, uint32_t i)
{
    return (uint8_t)(psn * 7u + i);
}

/* ICRC (IBA vol. 1 7.8.1; RoCEv2 Annex A17 for the IP/UDP fields):
 * CRC-32 over 8 bytes of 0xFF for the absent LRH, then the IP/UDP/BTH
 * headers with the fields that may change in flight set to all ones (IPv4
 * TOS, TTL, header checksum; UDP checksum; BTH F/B/Resv6 octet), then the
 * rest of the packet. The caller stores it least significant byte first,
 * as Linux rxe (rxe_icrc.c) and scapy (contrib/roce.py) do. */
uint32_t rs_frame_icrc(const uint8_t *ip, size_t len)
{
    uint8_t hdr[IP_HDR + UDP_HDR + BTH_HDR];
    if (!ip || len < sizeof hdr)
        return 0;
    memcpy(hdr, ip, sizeof hdr);
    hdr[1] = 0xFF;
    hdr[8] = 0xFF;
    hdr[10] = hdr[11] = 0xFF;
    hdr[IP_HDR + 6] = hdr[IP_HDR + 7] = 0xFF;
    hdr[IP_HDR + UDP_HDR + 4] = 0xFF;
    static const uint8_t lrh[8] = { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF };
    uint32_t c = crc_update(0xFFFFFFFFu, lrh, sizeof lrh);
    c = crc_update(c, hdr, sizeof hdr);
    c = crc_update(c, ip + sizeof hdr, len - sizeof hdr);
    return c ^ 0xFFFFFFFFu;
}

/* Build the frame into b (room for the whole frame). With keep smaller
 * than the frame, only the first keep bytes are needed (a capture with a
 * snap length): the payload past them and the ICRC are not computed, which
 * makes header-only captures cheap. Returns the full frame length. */
static size_t build_roce(const rs_frame *f, uint8_t *b, size_t ip_len, size_t keep)
{
    uint8_t op = wire_opcode(f);
    int cnp = f->kind == RS_FRAME_ROCE_CNP;
    uint32_t pay = f->kind == RS_FRAME_ROCE_DATA ? f->payload_len : 0;
    uint32_t pad = (4u - (pay & 3u)) & 3u;

    /* Ethernet II */
    put_mac(b, f->eth_dst);
    put_mac(b + 6, f->eth_src);
    put16(b + 12, 0x0800);

    /* IPv4 (RFC 791): no options, DF set, id 0 (RFC 6864 allows a zero id
     * for atomic datagrams, i.e. DF=1 and not fragmented). */
    uint8_t *ip = b + OFF_IP;
    ip[0] = 0x45;
    ip[1] = (uint8_t)(((f->prio & 7u) * 8u) << 2 | (f->ecn & 3u)); /* DSCP CS<prio> | ECN */
    put16(ip + 2, (uint32_t)ip_len);
    put16(ip + 4, 0);
    put16(ip + 6, 0x4000);
    ip[8] = f->ttl;
    ip[9] = 17;
    put16(ip + 10, 0);
    ip[12] = 10;
    put24(ip + 13, f->ip_src);
    ip[16] = 10;
    put24(ip + 17, f->ip_dst);
    uint32_t sum = 0;
    for (unsigned i = 0; i < IP_HDR; i += 2)
        sum += (uint32_t)ip[i] << 8 | ip[i + 1];
    while (sum >> 16)
        sum = (sum & 0xFFFFu) + (sum >> 16);
    put16(ip + 10, ~sum & 0xFFFFu);

    /* UDP: checksum 0 = none (RFC 768); RoCEv2 senders send 0 and rely on
     * the ICRC (Annex A17), which is why the ICRC masks this field. */
    uint8_t *udp = b + OFF_UDP;
    put16(udp, f->udp_sport);
    put16(udp + 2, RS_ROCEV2_UDP_PORT);
    put16(udp + 4, (uint32_t)ip_len - IP_HDR);
    put16(udp + 6, 0);

    /* BTH (IBA vol. 1, 9.2): opcode | SE M PadCnt(2) TVer(4) | P_Key |
     * F B Resv6 | DestQP(24) | A Resv7 | PSN(24). RoCEv2 carries FECN/BECN
     * in the top bits of the octet after the P_Key. Data and ACKs set
     * MigReq=1 as RC NICs do; a CNP is sent as Mellanox/NVIDIA NICs send it
     * (A17.9.3): SE=M=0, F=0, B=1, A=0, PSN 0, then 16 reserved bytes. */
    uint8_t *bth = b + OFF_BTH;
    bth[0] = op;
    bth[1] = (uint8_t)((cnp ? 0x00 : 0x40) | pad << 4);
    put16(bth + 2, 0xFFFF); /* default partition key */
    if (cnp)
        bth[4] = 0x40;
    else
        bth[4] = (uint8_t)((f->fecn ? 0x80 : 0) | (f->becn ? 0x40 : 0));
    put24(bth + 5, f->dest_qp & 0xFFFFFFu);
    bth[8] = (uint8_t)(!cnp && f->ackreq ? 0x80 : 0);
    put24(bth + 9, cnp ? 0 : f->psn & 0xFFFFFFu);

    uint8_t *p = b + OFF_EXT;
    if (cnp) {
        memset(p, 0, CNP_RSVD);
        p += CNP_RSVD;
    } else if (ext_len(f) == (int)RETH_LEN) {
        /* RETH (9.3.3): virtual address, R_Key, DMA length of the message */
        put64(p, f->reth_va);
        put32(p + 8, f->reth_rkey);
        put32(p + 12, f->reth_len);
        p += RETH_LEN;
    } else if (f->kind == RS_FRAME_ROCE_ACK || f->kind == RS_FRAME_ROCE_NAK) {
        /* AETH (9.3.5): syndrome, MSN */
        p[0] = f->aeth_syndrome;
        put24(p + 1, f->aeth_msn & 0xFFFFFFu);
        p += AETH_LEN;
        if (f->kind == RS_FRAME_ROCE_NAK && f->sack) {
            /* SACK extension (not in the IB spec; IRN's NACK carries the
             * same PSN): a reserved byte, then the PSN that arrived out of
             * order. Wireshark shows the NAK and leaves these 4 bytes
             * undissected before the ICRC (docs/pcap.md). */
            p[0] = 0;
            put24(p + 1, f->sack_psn & 0xFFFFFFu);
            p += SACK_LEN;
        }
    }
    size_t full = ETH_HDR + ip_len < ETH_MIN ? ETH_MIN : ETH_HDR + ip_len;
    if (keep < full) {
        size_t have = (size_t)(p - b);
        for (uint32_t i = 0; i < pay && have + i < keep; i++)
            p[i] = payload_byte(f->psn, i);
        if (keep > have + pay)
            memset(p + pay, 0, keep - have - pay);
        return full;
    }
    for (uint32_t i = 0; i < pay; i++)
        p[i] = payload_byte(f->psn, i);
    memset(p + pay, 0, pad);
    p += pay + pad;

    /* ICRC (rs_frame_icrc), stored least significant byte first. */
    uint32_t c = rs_frame_icrc(ip, (size_t)(p - ip));
    p[0] = (uint8_t)c;
    p[1] = (uint8_t)(c >> 8);
    p[2] = (uint8_t)(c >> 16);
    p[3] = (uint8_t)(c >> 24);
    p += ICRC_LEN;

    size_t n = (size_t)(p - b);
    if (n < ETH_MIN) { /* MAC pad (802.3 4.2.3.3); outside IP, not in the ICRC */
        memset(p, 0, ETH_MIN - n);
        n = ETH_MIN;
    }
    return n;
}

size_t rs_frame_build(const rs_frame *f, uint8_t *buf, size_t cap)
{
    if (!f || !buf)
        return 0;
    uint64_t len = frame_len(f);
    if (len == 0)
        return 0;
    if (f->kind == RS_FRAME_PFC)
        return cap < ETH_MIN ? 0 : build_pfc(f, buf);
    /* A RoCE frame: one IPv4 packet; 10.x.y.z needs ids below 2^24. */
    uint64_t ip_len = len - ETH_HDR;
    if (ip_len > 0xFFFFu || f->ip_src >> 24 || f->ip_dst >> 24)
        return 0;
    if (cap < (len < ETH_MIN ? ETH_MIN : len))
        return 0;
    return build_roce(f, buf, (size_t)ip_len, SIZE_MAX);
}

/* As rs_frame_build, with only the first `keep` bytes guaranteed. */
static size_t frame_build_prefix(const rs_frame *f, uint8_t *buf, size_t cap, size_t keep)
{
    uint64_t len = frame_len(f);
    if (len == 0 || f->kind == RS_FRAME_PFC)
        return rs_frame_build(f, buf, cap);
    uint64_t ip_len = len - ETH_HDR;
    if (ip_len > 0xFFFFu || f->ip_src >> 24 || f->ip_dst >> 24 || cap < (len < ETH_MIN ? ETH_MIN : len))
        return 0;
    return build_roce(f, buf, (size_t)ip_len, keep);
}

uint32_t rs_frame_wire_bytes(const rs_frame *f)
{
    uint64_t n = f ? frame_len(f) : 0;
    n += FCS_LEN;
    if (n < ETH_MIN + FCS_LEN)
        n = ETH_MIN + FCS_LEN;
    n += PREAMBLE_IFG;
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* ---- writer ---- */

static char *str_cat(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    char *s = malloc(na + nb + 1);
    if (s) {
        memcpy(s, a, na);
        memcpy(s + na, b, nb + 1);
    }
    return s;
}

/* The parts both formats share: names, snaplen. NULL on out of memory. */
static rs_pcap *writer_new(const char *path, uint32_t snaplen)
{
    rs_pcap *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->snaplen = snaplen > PCAP_MAX_SNAPLEN ? PCAP_MAX_SNAPLEN : snaplen;
    w->path = str_cat(path, "");
    w->tmp = str_cat(path, ".tmp");
    if (!w->path || !w->tmp) {
        free(w->path);
        free(w->tmp);
        free(w);
        return NULL;
    }
    return w;
}

int rs_pcap_open(const char *path, uint32_t snaplen, rs_pcap **out, rs_err *err)
{
    if (!path || !out)
        return rs_err_set(err, RS_EINVAL, "pcap: no output path given");
    *out = NULL;
    int rc;
    FILE *fp;
    rs_pcap *w = writer_new(path, snaplen);
    if (!w)
        goto fail;
    uint32_t hdr_snap = snaplen == 0 || snaplen > PCAP_MAX_SNAPLEN ? PCAP_MAX_SNAPLEN : snaplen;
    w->pd = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, (int)hdr_snap,
                                                 PCAP_TSTAMP_PRECISION_NANO);
    if (!w->pd)
        goto fail;
    /* fopen ourselves rather than pcap_dump_open: errno is then the real
     * reason, and a path of "-" is not taken to mean stdout. */
    fp = fopen(w->tmp, "wb");
    if (!fp) {
        rc = rs_err_set(err, RS_EIO, "cannot create capture file '%s': %s", w->tmp,
                        strerror(errno));
        goto fail_quiet;
    }
    w->dump = pcap_dump_fopen(w->pd, fp);
    if (!w->dump) {
        rc = rs_err_set(err, RS_EIO, "cannot write capture file '%s': %s", w->tmp,
                        pcap_geterr(w->pd));
        /* No fclose: the only failure reachable here (writing the file
         * header) already closed fp inside libpcap (sf-pcap.c,
         * pcap_setup_dump); the others (unactivated pcap_t, unknown link
         * type) cannot happen for a dead DLT_EN10MB handle. */
        unlink(w->tmp);
        goto fail_quiet;
    }
    *out = w;
    return RS_OK;
fail:
    rc = rs_err_set(err, RS_ENOMEM, "pcap: out of memory opening '%s'", path);
fail_quiet:
    if (w) {
        if (w->pd)
            pcap_close(w->pd);
        free(w->path);
        free(w->tmp);
        free(w);
    }
    return rc;
}

/* ---- pcapng (draft-ietf-opsawg-pcapng) ----
 * libpcap 1.10 reads pcapng but writes only classic pcap, and one pcap
 * file has one link: so the blocks are written here. Always little-endian
 * (the byte-order magic says so), whatever the host, so a run's bytes do
 * not depend on the machine. Blocks and option values are padded to 32
 * bits with zeros. */
#define NG_SHB 0x0A0D0D0Au       /* Section Header Block */
#define NG_IDB 0x00000001u       /* Interface Description Block */
#define NG_EPB 0x00000006u       /* Enhanced Packet Block */
#define NG_BYTE_ORDER 0x1A2B3C4Du
#define NG_OPT_END 0
#define NG_OPT_COMMENT 1         /* opt_comment */
#define NG_SHB_USERAPPL 4        /* shb_userappl */
#define NG_IF_NAME 2             /* if_name */
#define NG_IF_DESCRIPTION 3      /* if_description */
#define NG_IF_TSRESOL 9          /* if_tsresol: 12 = 10^-12 s units */
#define NG_IF_FCSLEN 13          /* if_fcslen: 0, frames carry no FCS */
#define NG_EPB_FLAGS 2           /* epb_flags: direction, reception type */
#define NG_OPT_MAX 65535u        /* an option's length is 16 bits */
#define NG_LINKTYPE_ETHERNET 1

static inline uint32_t pad4(size_t n) { return (uint32_t)((4u - (n & 3u)) & 3u); }

static inline void le16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void le32(uint8_t *p, uint32_t v) { le16(p, v); le16(p + 2, v >> 16); }

static void ng_bytes(rs_pcap *w, const void *p, size_t n)
{
    static const uint8_t zero[4] = { 0, 0, 0, 0 };
    if (w->failed)
        return;
    if ((n && fwrite(p, 1, n, w->ng) != n) || (pad4(n) && fwrite(zero, 1, pad4(n), w->ng) != pad4(n))) {
        w->failed = 1;
        w->fail_errno = errno;
    }
}

static void ng_u32(rs_pcap *w, uint32_t v)
{
    uint8_t b[4];
    le32(b, v);
    ng_bytes(w, b, 4);
}

/* An option: code, length, value padded to 32 bits. */
static void ng_opt(rs_pcap *w, unsigned code, const void *v, size_t n)
{
    uint8_t h[4];
    le16(h, code);
    le16(h + 2, (uint32_t)n);
    ng_bytes(w, h, 4);
    ng_bytes(w, v, n);
}

/* Bytes a string option takes (0 if absent or empty). */
static size_t ng_str_len(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return n ? 4 + n + pad4(n) : 0;
}

static void ng_str(rs_pcap *w, unsigned code, const char *s)
{
    if (s && *s)
        ng_opt(w, code, s, strlen(s));
}

/* The sticky failure as an error: RS_EIO naming the file and the reason. */
static int write_failed(const rs_pcap *w, rs_err *err)
{
    return rs_err_set(err, RS_EIO, "cannot write capture file '%s': %s", w->tmp,
                      w->fail_errno ? strerror(w->fail_errno) : "write error");
}

int rs_pcapng_open(const char *path, uint32_t snaplen, const char *comment, const char *appl,
                   rs_pcap **out, rs_err *err)
{
    if (!path || !out)
        return rs_err_set(err, RS_EINVAL, "pcap: no output path given");
    *out = NULL;
    if ((comment && strlen(comment) > NG_OPT_MAX) || (appl && strlen(appl) > NG_OPT_MAX))
        return rs_err_set(err, RS_EINVAL, "pcapng '%s': section comment over %u bytes", path, NG_OPT_MAX);
    rs_pcap *w = writer_new(path, snaplen);
    if (!w)
        return rs_err_set(err, RS_ENOMEM, "pcap: out of memory opening '%s'", path);
    w->ng = fopen(w->tmp, "wb");
    if (!w->ng) {
        int rc = rs_err_set(err, RS_EIO, "cannot create capture file '%s': %s", w->tmp, strerror(errno));
        free(w->path);
        free(w->tmp);
        free(w);
        return rc;
    }
    /* SHB: type, length, byte-order magic, version 1.0, section length
     * -1 (not given: the file is streamed), options, length again. */
    size_t opts = ng_str_len(comment) + ng_str_len(appl) + 4;
    uint32_t len = (uint32_t)(28 + opts);
    uint8_t h[24];
    le32(h, NG_SHB);
    le32(h + 4, len);
    le32(h + 8, NG_BYTE_ORDER);
    le16(h + 12, 1);
    le16(h + 14, 0);
    memset(h + 16, 0xFF, 8);
    ng_bytes(w, h, sizeof h);
    ng_str(w, NG_OPT_COMMENT, comment);
    ng_str(w, NG_SHB_USERAPPL, appl);
    ng_u32(w, NG_OPT_END);
    ng_u32(w, len);
    *out = w;
    return RS_OK;
}

int rs_pcap_add_interface(rs_pcap *w, const char *name, const char *description, uint32_t *ifid,
                          rs_err *err)
{
    if (!w || !w->ng || !name || !*name)
        return rs_err_set(err, RS_EINVAL, "pcap: interfaces need a pcapng file and a name");
    if (strlen(name) > NG_OPT_MAX || (description && strlen(description) > NG_OPT_MAX))
        return rs_err_set(err, RS_EINVAL, "pcapng: interface name '%.40s...' too long", name);
    if (w->failed)
        return write_failed(w, err);
    /* IDB: link type, reserved, snaplen (0 = no limit), options. */
    size_t opts = ng_str_len(name) + ng_str_len(description) + 8 + 8 + 4;
    uint32_t len = (uint32_t)(20 + opts);
    uint8_t h[16];
    le32(h, NG_IDB);
    le32(h + 4, len);
    le16(h + 8, NG_LINKTYPE_ETHERNET);
    le16(h + 10, 0);
    le32(h + 12, w->snaplen);
    ng_bytes(w, h, sizeof h);
    ng_str(w, NG_IF_NAME, name);
    ng_str(w, NG_IF_DESCRIPTION, description);
    /* Picoseconds: the simulator's own unit, so timestamps are exact
     * (Wireshark 4.0 reads them and shows nanoseconds). */
    const uint8_t tsresol = 12, fcslen = 0;
    ng_opt(w, NG_IF_TSRESOL, &tsresol, 1);
    ng_opt(w, NG_IF_FCSLEN, &fcslen, 1);
    ng_u32(w, NG_OPT_END);
    ng_u32(w, len);
    if (w->failed)
        return write_failed(w, err);
    if (ifid)
        *ifid = w->nif;
    w->nif++;
    return RS_OK;
}

/* ---- pcapng in parts (rs_pcapng_open_part) ----
 * A part file holds keyed records (partfile.h), each an EPB; the key's
 * words are the stamp, the class, the event's time and key, and the step
 * and index (32 bits each) in one word. */
static void key_words(const rs_pcap_key *k, uint64_t w[RS_PART_KEY_WORDS])
{
    w[0] = k->stamp;
    w[1] = k->cls;
    w[2] = k->ev_t;
    w[3] = k->ev_key;
    w[4] = (uint64_t)k->step << 32 | k->idx;
}

int rs_pcap_key_cmp(const rs_pcap_key *a, const rs_pcap_key *b)
{
    uint64_t x[RS_PART_KEY_WORDS], y[RS_PART_KEY_WORDS];
    key_words(a, x);
    key_words(b, y);
    for (unsigned i = 0; i < RS_PART_KEY_WORDS; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

int rs_pcapng_open_part(const char *path, uint32_t snaplen, uint32_t nif, rs_pcap **out, rs_err *err)
{
    if (!path || !out)
        return rs_err_set(err, RS_EINVAL, "pcap: no output path given");
    *out = NULL;
    rs_pcap *w = writer_new(path, snaplen);
    if (!w)
        return rs_err_set(err, RS_ENOMEM, "pcap: out of memory opening '%s'", path);
    if (!(w->ng = fopen(w->tmp, "wb"))) {
        int rc = rs_err_set(err, RS_EIO, "cannot create capture file '%s': %s", w->tmp, strerror(errno));
        destroy(w, 0);
        return rc;
    }
    w->nif = nif;
    w->part = 1;
    *out = w;
    return RS_OK;
}

static int append_block(void *ctx, const void *blk, size_t len)
{
    rs_pcap *w = ctx;
    ng_bytes(w, blk, len); /* a block is 32-bit aligned already: no padding */
    return w->failed ? RS_EIO : RS_OK;
}

int rs_pcapng_merge(rs_pcap *w, const char *const *parts, uint32_t n, rs_err *err)
{
    if (!w || !w->ng || w->part || (n && !parts))
        return rs_err_set(err, RS_EINVAL, "pcapng merge: expected a pcapng file and its parts");
    int rc = rs_part_merge(parts, n, 64 + RS_FRAME_MAX, "capture", append_block, w, err);
    return rc == RS_EIO && w->failed ? write_failed(w, err) : rc;
}

/* EPB: interface, timestamp (picoseconds, high word first), captured and
 * original length, the bytes, epb_flags. */
static int ng_write(rs_pcap *w, const rs_pcap_key *key, uint32_t ifid, rs_pcap_dir dir, rs_time t,
                    const uint8_t *buf, size_t len, size_t caplen, int multicast)
{
    if (ifid >= w->nif || !w->part != !key)
        return RS_EINVAL;
    uint32_t blen = (uint32_t)(28 + caplen + pad4(caplen) + 8 + 4 + 4);
    if (key) {
        uint64_t kw[RS_PART_KEY_WORDS];
        unsigned char k[RS_PART_HDR];
        key_words(key, kw);
        rs_part_hdr_put(k, kw, blen);
        ng_bytes(w, k, sizeof k);
    }
    uint8_t h[28];
    le32(h, NG_EPB);
    le32(h + 4, blen);
    le32(h + 8, ifid);
    le32(h + 12, (uint32_t)(t >> 32));
    le32(h + 16, (uint32_t)t);
    le32(h + 20, (uint32_t)caplen);
    le32(h + 24, (uint32_t)len);
    ng_bytes(w, h, sizeof h);
    ng_bytes(w, buf, caplen);
    /* epb_flags bits 0-1: 01 inbound, 10 outbound; bits 2-4: reception
     * type 001 unicast, 010 multicast (PFC's 01:80:C2:00:00:01); bits
     * 5-8: FCS length 0 (none). */
    uint8_t fl[4];
    le32(fl, (dir == RS_PCAP_IN ? 1u : 2u) | (multicast ? 2u : 1u) << 2);
    ng_opt(w, NG_EPB_FLAGS, fl, 4);
    ng_u32(w, NG_OPT_END);
    ng_u32(w, blen);
    return w->failed ? RS_EIO : RS_OK;
}

int rs_pcap_write(rs_pcap *w, rs_time t, const rs_frame *f)
{
    return rs_pcap_write_on(w, 0, RS_PCAP_OUT, t, f);
}

int rs_pcap_write_on(rs_pcap *w, uint32_t ifid, rs_pcap_dir dir, rs_time t, const rs_frame *f)
{
    return rs_pcap_write_keyed(w, NULL, ifid, dir, t, f);
}

int rs_pcap_write_keyed(rs_pcap *w, const rs_pcap_key *key, uint32_t ifid, rs_pcap_dir dir, rs_time t,
                        const rs_frame *f)
{
    if (!w || !f)
        return RS_EINVAL;
    if (w->failed)
        return RS_EIO;
    /* On the stack, not in the writer: a run may hold thousands of
     * writers open (every port of a large fabric). */
    uint8_t buf[RS_FRAME_MAX];
    size_t len = frame_build_prefix(f, buf, sizeof buf, w->snaplen ? w->snaplen : SIZE_MAX);
    if (len == 0)
        return RS_EINVAL;
    size_t caplen = w->snaplen && len > w->snaplen ? w->snaplen : len;
    if (w->ng)
        return ng_write(w, key, ifid, dir, t, buf, len, caplen, f->kind == RS_FRAME_PFC);
    if (ifid != 0 || key)
        return RS_EINVAL;
    struct pcap_pkthdr h;
    h.ts.tv_sec = (time_t)(t / RS_PS_PER_S);
    /* With nanosecond precision the "usec" field carries nanoseconds. */
    h.ts.tv_usec = (suseconds_t)(t % RS_PS_PER_S / RS_PS_PER_NS);
    h.len = (bpf_u_int32)len;
    h.caplen = (bpf_u_int32)caplen;
    pcap_dump((u_char *)w->dump, &h, buf);
    /* pcap_dump returns nothing; the stdio error flag tells (ENOSPC etc.). */
    if (ferror(pcap_dump_file(w->dump))) {
        w->failed = 1;
        w->fail_errno = errno;
        return RS_EIO;
    }
    return RS_OK;
}

static void destroy(rs_pcap *w, int remove_tmp)
{
    if (w->dump)
        pcap_dump_close(w->dump);
    if (w->pd)
        pcap_close(w->pd);
    if (w->ng)
        fclose(w->ng);
    if (remove_tmp)
        unlink(w->tmp);
    free(w->path);
    free(w->tmp);
    free(w);
}

int rs_pcap_close(rs_pcap *w, rs_err *err)
{
    if (!w)
        return rs_err_set(err, RS_EINVAL, "pcap: no capture to close");
    int rc = RS_OK;
    FILE *fp = w->ng ? w->ng : pcap_dump_file(w->dump);
    if (!w->failed && (fflush(fp) != 0 || ferror(fp))) {
        w->failed = 1;
        w->fail_errno = errno;
    }
    if (!w->failed) {
        /* Everything is flushed, so fclose has nothing left to lose but
         * an NFS close error (which pcap_dump_close would ignore). */
        if (w->ng) {
            int bad = fclose(w->ng) != 0;
            w->ng = NULL;
            if (bad) {
                w->failed = 1;
                w->fail_errno = errno;
            }
        } else {
            pcap_dump_close(w->dump);
            w->dump = NULL;
        }
    }
    if (w->failed) {
        rc = write_failed(w, err);
        destroy(w, 1);
        return rc;
    }
    if (rename(w->tmp, w->path) != 0) {
        rc = rs_err_set(err, RS_EIO, "cannot rename capture file '%s' to '%s': %s", w->tmp,
                        w->path, strerror(errno));
        destroy(w, 1);
        return rc;
    }
    destroy(w, 0);
    return RS_OK;
}

void rs_pcap_abort(rs_pcap *w)
{
    if (w)
        destroy(w, 1);
}
