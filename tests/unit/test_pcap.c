/*
 * test_pcap.c - the pcap writer: synthesized frame bytes (field offsets,
 * IPv4 checksum, ICRC against an independent bitwise CRC-32 and a CNP
 * captured from real ConnectX hardware, PFC layout),
 * wire sizes, and the file life cycle (tmp + rename, abort, errors, sticky
 * write failure, snaplen, nanosecond timestamps). Capture files are read
 * back by hand (the pcap format is tiny) so the test does not need libpcap.
 */
#include "cu_main.h"
#include "pcap.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint8_t fb[RS_FRAME_MAX];

static unsigned get16(const uint8_t *p) { return (unsigned)p[0] << 8 | p[1]; }
static uint32_t get24(const uint8_t *p) { return (uint32_t)p[0] << 16 | (uint32_t)get16(p + 1); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)get16(p) << 16 | get16(p + 2); }
static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Bitwise CRC-32 (IEEE 802.3, reflected), written independently of the
 * table in pcap.c: init all ones, final complement. */
static uint32_t crc32_bitwise(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}

/* ICRC recomputed from a built RoCE frame per IBA 7.8.1 / Annex A17. */
static uint32_t icrc_of(const uint8_t *frame)
{
    unsigned ip_len = get16(frame + 16);
    static uint8_t m[8 + 65535];
    memset(m, 0xFF, 8);
    memcpy(m + 8, frame + 14, ip_len - 4);
    uint8_t *ip = m + 8;
    ip[1] = 0xFF;               /* TOS */
    ip[8] = 0xFF;               /* TTL */
    ip[10] = ip[11] = 0xFF;     /* header checksum */
    ip[26] = ip[27] = 0xFF;     /* UDP checksum */
    ip[32] = 0xFF;              /* BTH FECN/BECN/Resv6 */
    return crc32_bitwise(m, 8 + ip_len - 4);
}

static rs_frame write_first(void)
{
    rs_frame f = {
        .kind = RS_FRAME_ROCE_DATA,
        .eth_src = 0x01020304, .eth_dst = 0x0A0B0C0D,
        .ip_src = 0x123456, .ip_dst = 0x000102,
        .prio = 3, .ecn = 2, .ttl = 64,
        .udp_sport = 0xC001,
        .opcode = RS_BTH_RC_WRITE_FIRST, .ackreq = 1,
        .dest_qp = 0xABCDEF, .psn = 0x123456,
        .reth_va = 0x1122334455667788ULL, .reth_rkey = 0xCAFEBABE, .reth_len = 4096,
        .payload_len = 1024,
    };
    return f;
}

static void test_pcap_write_first_fields_at_their_offsets(void)
{
    rs_frame f = write_first();
    size_t n = rs_frame_build(&f, fb, sizeof fb);
    CU_ASSERT_EQUAL(n, 14 + 20 + 8 + 12 + 16 + 1024 + 4);
    static const uint8_t dst[6] = { 0x02, 0x00, 0x0A, 0x0B, 0x0C, 0x0D };
    static const uint8_t src[6] = { 0x02, 0x00, 0x01, 0x02, 0x03, 0x04 };
    CU_ASSERT(memcmp(fb, dst, 6) == 0);
    CU_ASSERT(memcmp(fb + 6, src, 6) == 0);
    CU_ASSERT_EQUAL(get16(fb + 12), 0x0800);
    /* IPv4 */
    CU_ASSERT_EQUAL(fb[14], 0x45);
    CU_ASSERT_EQUAL(fb[15], (24 << 2) | 2);          /* DSCP CS3, ECT(0) */
    CU_ASSERT_EQUAL(get16(fb + 16), n - 14);         /* total length */
    CU_ASSERT_EQUAL(get16(fb + 18), 0);              /* identification */
    CU_ASSERT_EQUAL(get16(fb + 20), 0x4000);         /* DF */
    CU_ASSERT_EQUAL(fb[22], 64);
    CU_ASSERT_EQUAL(fb[23], 17);
    static const uint8_t ips[4] = { 10, 0x12, 0x34, 0x56 }, ipd[4] = { 10, 0, 1, 2 };
    CU_ASSERT(memcmp(fb + 26, ips, 4) == 0);
    CU_ASSERT(memcmp(fb + 30, ipd, 4) == 0);
    /* UDP */
    CU_ASSERT_EQUAL(get16(fb + 34), 0xC001);
    CU_ASSERT_EQUAL(get16(fb + 36), 4791);
    CU_ASSERT_EQUAL(get16(fb + 38), n - 34);
    CU_ASSERT_EQUAL(get16(fb + 40), 0);
    /* BTH */
    CU_ASSERT_EQUAL(fb[42], 0x06);
    CU_ASSERT_EQUAL(fb[43], 0x40);                   /* SE 0, M 1, PadCnt 0, TVer 0 */
    CU_ASSERT_EQUAL(get16(fb + 44), 0xFFFF);
    CU_ASSERT_EQUAL(fb[46], 0x00);
    CU_ASSERT_EQUAL(get24(fb + 47), 0xABCDEF);
    CU_ASSERT_EQUAL(fb[50], 0x80);                   /* AckReq */
    CU_ASSERT_EQUAL(get24(fb + 51), 0x123456);
    /* RETH */
    CU_ASSERT_EQUAL(get32(fb + 54), 0x11223344u);
    CU_ASSERT_EQUAL(get32(fb + 58), 0x55667788u);
    CU_ASSERT_EQUAL(get32(fb + 62), 0xCAFEBABEu);
    CU_ASSERT_EQUAL(get32(fb + 66), 4096u);
    /* ICRC last, little-endian */
    CU_ASSERT_EQUAL(le32(fb + n - 4), icrc_of(fb));
}

/* A CNP captured from a real NVIDIA ConnectX-4 Lx, published in scapy's
 * RoCE tests (secdev/scapy test/contrib/roce.uts, "RoCE CNP captured on
 * ConnectX-4 Lx"; scapy checks pkt.icrc == 0x82fd002a). 74 bytes without
 * FCS: Ethernet, IPv4 (TOS 0xc2 = DSCP 48 + ECT(0), id 0x718c, TTL 64),
 * UDP 0 -> 4791 with checksum 0, BTH opcode 0x81 to QP 0x000118 with
 * BECN set, 16 reserved bytes, ICRC 82 fd 00 2a. Unlike every other ICRC
 * test here, neither the bytes nor the expected value come from railsim. */
static const uint8_t cx4_cnp[74] = {
    0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32, 0x08, 0x00, 0x45, 0xc2,
    0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11, 0x91, 0x61, 0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00,
    0x12, 0x01, 0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, 0x81, 0x00, 0xff, 0xff, 0x40, 0x00,
    0x01, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x82, 0xfd, 0x00, 0x2a,
};

static void test_pcap_icrc_matches_connectx4_cnp(void)
{
    /* The IPv4 packet runs from byte 14 for its total length (60); the
     * ICRC is its last 4 bytes, least significant byte first. */
    CU_ASSERT_EQUAL_FATAL(get16(cx4_cnp + 16), 60);
    uint32_t want = le32(cx4_cnp + 70);
    CU_ASSERT_EQUAL(want, 0x2a00fd82u);
    CU_ASSERT_EQUAL(rs_frame_icrc(cx4_cnp + 14, 56), want);
    /* The independent bitwise CRC agrees, so the vector checks both. */
    CU_ASSERT_EQUAL(icrc_of(cx4_cnp), want);

    /* The masked fields do not matter (a switch rewrote them: ECN, TTL,
     * IP checksum, BTH BECN); any other byte does. */
    uint8_t v[74];
    memcpy(v, cx4_cnp, sizeof v);
    v[15] = 0x03; v[22] = 1; v[24] = v[25] = 0; v[46] = 0x80;
    CU_ASSERT_EQUAL(rs_frame_icrc(v + 14, 56), want);
    for (size_t i = 14; i < 70; i++) {
        if (i == 15 || i == 22 || i == 24 || i == 25 || i == 40 || i == 41 || i == 46)
            continue;
        memcpy(v, cx4_cnp, sizeof v);
        v[i] ^= 0x01;
        if (rs_frame_icrc(v + 14, 56) == want) {
            CU_FAIL("a flipped covered byte left the ICRC unchanged");
            break;
        }
    }
    CU_ASSERT_EQUAL(rs_frame_icrc(cx4_cnp + 14, 39), 0); /* too short for the headers */
    CU_ASSERT_EQUAL(rs_frame_icrc(NULL, 56), 0);
}

/* The same CNP as railsim builds it: the bytes railsim sets differently
 * (MACs, IP id 0, TOS, TTL, UDP source port, addresses) are outside the
 * reserved/BTH layout, which must match the hardware byte for byte. */
static void test_pcap_cnp_layout_matches_connectx4(void)
{
    rs_frame f = { .kind = RS_FRAME_ROCE_CNP, .ip_src = 0x001101, .ip_dst = 0x001201, .prio = 6, .ecn = 2,
                   .ttl = 64, .dest_qp = 0x000118, .becn = 1 };
    size_t n = rs_frame_build(&f, fb, sizeof fb);
    CU_ASSERT_EQUAL_FATAL(n, sizeof cx4_cnp);
    /* IP length, flags, TTL, protocol, addresses; UDP dport, length, checksum 0 */
    CU_ASSERT(memcmp(fb + 14, cx4_cnp + 14, 4) == 0);       /* 45 c2 00 3c: DSCP 48, ECT(0) */
    CU_ASSERT(memcmp(fb + 20, cx4_cnp + 20, 4) == 0);       /* DF, TTL 64, UDP */
    CU_ASSERT(memcmp(fb + 26, cx4_cnp + 26, 8) == 0);       /* 10.0.17.1 -> 10.0.18.1 */
    CU_ASSERT(memcmp(fb + 34, cx4_cnp + 34, 70 - 34) == 0); /* UDP (sport 0 here too), BTH, reserved */
    /* Its ICRC is railsim's own computation over its own bytes. */
    CU_ASSERT_EQUAL(le32(fb + 70), rs_frame_icrc(fb + 14, 56));
}

static void test_pcap_ipv4_checksum_sums_to_ffff(void)
{
    rs_frame f = write_first();
    for (int ecn = 0; ecn < 4; ecn++) {
        f.ecn = (uint8_t)ecn;
        f.ttl = (uint8_t)(1 + 60 * ecn);
        f.payload_len = 17u + 1000u * (unsigned)ecn;
        CU_ASSERT(rs_frame_build(&f, fb, sizeof fb) > 0);
        uint32_t sum = 0;
        for (int i = 0; i < 20; i += 2)
            sum += get16(fb + 14 + i);
        while (sum >> 16)
            sum = (sum & 0xFFFF) + (sum >> 16);
        CU_ASSERT_EQUAL(sum, 0xFFFF);
    }
}

static void test_pcap_icrc_matches_bitwise_crc32(void)
{
    rs_frame fs[6];
    fs[0] = write_first();
    fs[1] = write_first(); fs[1].opcode = RS_BTH_RC_WRITE_MIDDLE; fs[1].ackreq = 0;
    fs[2] = write_first(); fs[2].opcode = RS_BTH_RC_WRITE_ONLY; fs[2].payload_len = 1001;
    fs[3] = write_first(); fs[3].kind = RS_FRAME_ROCE_ACK; fs[3].aeth_syndrome = 0x1F;
    fs[3].aeth_msn = 0x010203;
    fs[4] = write_first(); fs[4].kind = RS_FRAME_ROCE_NAK;
    fs[4].aeth_syndrome = RS_AETH_NAK_PSN_SEQ_ERR;
    fs[5] = write_first(); fs[5].kind = RS_FRAME_ROCE_CNP;
    for (int i = 0; i < 6; i++) {
        size_t n = rs_frame_build(&fs[i], fb, sizeof fb);
        CU_ASSERT_FATAL(n >= 60);
        CU_ASSERT_EQUAL(le32(fb + 14 + get16(fb + 16) - 4), icrc_of(fb));
    }
}

/* A switch may mark CE, a hop decrements TTL, a receiver sets FECN: none of
 * that may change the ICRC (they are the masked, "variant" fields). */
static void test_pcap_icrc_ignores_variant_fields(void)
{
    rs_frame f = write_first();
    size_t n = rs_frame_build(&f, fb, sizeof fb);
    uint32_t a = le32(fb + n - 4);
    f.ecn = 3; f.ttl = 7; f.fecn = 1; f.becn = 1; f.prio = 5;
    CU_ASSERT_EQUAL(rs_frame_build(&f, fb, sizeof fb), n);
    CU_ASSERT_EQUAL(le32(fb + n - 4), a);
    CU_ASSERT_EQUAL(fb[46], 0xC0);
    f.psn++;
    rs_frame_build(&f, fb, sizeof fb);
    CU_ASSERT_NOT_EQUAL(le32(fb + n - 4), a);
}

static void test_pcap_odd_payload_is_padded_and_padcnt_set(void)
{
    rs_frame f = write_first();
    f.opcode = RS_BTH_RC_WRITE_LAST;
    f.payload_len = 1001; /* 3 pad bytes */
    size_t n = rs_frame_build(&f, fb, sizeof fb);
    CU_ASSERT_EQUAL(n, 54 + 1004 + 4);
    CU_ASSERT_EQUAL((fb[43] >> 4) & 3, 3);
    CU_ASSERT(fb[54 + 1001] == 0 && fb[54 + 1002] == 0 && fb[54 + 1003] == 0);
}

static void test_pcap_ack_and_cnp_layout(void)
{
    rs_frame f = write_first();
    f.kind = RS_FRAME_ROCE_NAK;
    f.opcode = 0; /* ignored: the kind sets the opcode */
    f.aeth_syndrome = RS_AETH_NAK_PSN_SEQ_ERR;
    f.aeth_msn = 0x1ABCDEF; /* masked to 24 bits */
    size_t n = rs_frame_build(&f, fb, sizeof fb);
    CU_ASSERT_EQUAL(n, 54 + 4 + 4);
    CU_ASSERT_EQUAL(fb[42], RS_BTH_RC_ACK);
    CU_ASSERT_EQUAL(fb[54], 0x60);
    CU_ASSERT_EQUAL(get24(fb + 55), 0xABCDEF);

    f.kind = RS_FRAME_ROCE_CNP;
    n = rs_frame_build(&f, fb, sizeof fb);
    CU_ASSERT_EQUAL(n, 54 + 16 + 4);
    /* As NICs send it (Annex A17.9.3): 81 00 ff ff 40 <qp> 00 00 00 00, 16 zeros */
    CU_ASSERT_EQUAL(fb[42], 0x81);
    CU_ASSERT_EQUAL(fb[43], 0x00);
    CU_ASSERT_EQUAL(fb[46], 0x40);
    CU_ASSERT_EQUAL(get24(fb + 47), 0xABCDEF);
    CU_ASSERT_EQUAL(get32(fb + 50), 0);
    for (int i = 0; i < 16; i++)
        CU_ASSERT_EQUAL(fb[54 + i], 0);
}

static void test_pcap_pfc_layout_and_length_60(void)
{
    rs_frame f = { .kind = RS_FRAME_PFC, .eth_src = 0x0000BEEF, .pfc_enable = 0x09 };
    f.pfc_quanta[0] = 0xFFFF;
    f.pfc_quanta[3] = 0x1234;
    f.pfc_quanta[7] = 0x5555; /* class 7 not enabled: sent as given */
    memset(fb, 0xAA, 100);
    CU_ASSERT_EQUAL(rs_frame_build(&f, fb, sizeof fb), 60);
    static const uint8_t dst[6] = { 0x01, 0x80, 0xC2, 0x00, 0x00, 0x01 };
    static const uint8_t src[6] = { 0x02, 0x00, 0x00, 0x00, 0xBE, 0xEF };
    CU_ASSERT(memcmp(fb, dst, 6) == 0);
    CU_ASSERT(memcmp(fb + 6, src, 6) == 0);
    CU_ASSERT_EQUAL(get16(fb + 12), 0x8808);
    CU_ASSERT_EQUAL(get16(fb + 14), 0x0101);
    CU_ASSERT_EQUAL(get16(fb + 16), 0x0009);
    CU_ASSERT_EQUAL(get16(fb + 18), 0xFFFF);
    CU_ASSERT_EQUAL(get16(fb + 18 + 2 * 3), 0x1234);
    CU_ASSERT_EQUAL(get16(fb + 18 + 2 * 7), 0x5555);
    CU_ASSERT_EQUAL(get16(fb + 18 + 2 * 1), 0);
    for (int i = 34; i < 60; i++)
        CU_ASSERT_EQUAL(fb[i], 0);
    CU_ASSERT_EQUAL(rs_frame_wire_bytes(&f), 64 + 20);
}

static void test_pcap_wire_bytes_add_fcs_preamble_gap_with_64_minimum(void)
{
    rs_frame f = write_first();
    size_t n = rs_frame_build(&f, fb, sizeof fb);
    CU_ASSERT_EQUAL(rs_frame_wire_bytes(&f), n + 4 + 20);
    f.kind = RS_FRAME_ROCE_ACK; /* 62 bytes: 66 with FCS */
    CU_ASSERT_EQUAL(rs_frame_build(&f, fb, sizeof fb), 62);
    CU_ASSERT_EQUAL(rs_frame_wire_bytes(&f), 62 + 4 + 20);
    /* A 58-byte frame (WRITE Middle, no payload) is padded to 60 + FCS. */
    f = write_first();
    f.opcode = RS_BTH_RC_WRITE_MIDDLE;
    f.payload_len = 0;
    memset(fb, 0xAA, 100);
    CU_ASSERT_EQUAL(rs_frame_build(&f, fb, sizeof fb), 60);
    CU_ASSERT_EQUAL(get16(fb + 16), 20 + 8 + 12 + 4);   /* IP excludes the MAC pad */
    CU_ASSERT(fb[58] == 0 && fb[59] == 0);
    CU_ASSERT_EQUAL(le32(fb + 54), icrc_of(fb));
    CU_ASSERT_EQUAL(rs_frame_wire_bytes(&f), 64 + 20);
}

static void test_pcap_build_rejects_small_buffer_and_bad_frames(void)
{
    rs_frame f = write_first();
    size_t n = rs_frame_build(&f, fb, sizeof fb);
    CU_ASSERT_EQUAL(rs_frame_build(&f, fb, n - 1), 0);
    CU_ASSERT_EQUAL(rs_frame_build(&f, fb, n), n);
    rs_frame g = f;
    g.ip_dst = 1u << 24;
    CU_ASSERT_EQUAL(rs_frame_build(&g, fb, sizeof fb), 0);
    g = f;
    g.payload_len = 65535; /* does not fit one IPv4 packet */
    CU_ASSERT_EQUAL(rs_frame_build(&g, fb, sizeof fb), 0);
    /* IPv4 total length 65,535 at most: 60 header/ICRC bytes leave 65,475,
     * which pads to 65,476 (too long); 65,472 is the largest payload. */
    g.payload_len = 65475;
    CU_ASSERT_EQUAL(rs_frame_build(&g, fb, sizeof fb), 0);
    g.payload_len = 65472;
    CU_ASSERT_EQUAL(rs_frame_build(&g, fb, sizeof fb), 14 + 65532);
    g = f;
    g.opcode = 0x0C; /* RDMA READ request: not synthesized */
    CU_ASSERT_EQUAL(rs_frame_build(&g, fb, sizeof fb), 0);
    g.opcode = RS_BTH_RC_ACK; /* ACKs and CNPs have their own kinds */
    CU_ASSERT_EQUAL(rs_frame_build(&g, fb, sizeof fb), 0);
    g.opcode = RS_BTH_CNP;
    CU_ASSERT_EQUAL(rs_frame_build(&g, fb, sizeof fb), 0);
    g = f;
    g.kind = (rs_frame_kind)42;
    CU_ASSERT_EQUAL(rs_frame_build(&g, fb, sizeof fb), 0);
    rs_frame p = { .kind = RS_FRAME_PFC };
    CU_ASSERT_EQUAL(rs_frame_build(&p, fb, 59), 0);
}

/* ---- files ---- */

static char dir[256];

static int suite_init(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/test_pcap.XXXXXX", t && *t ? t : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int suite_clean(void)
{
    return rmdir(dir); /* fails (and reports) if a test left a file */
}

static int exists(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
}

/* Read a whole file; caller frees. */
static uint8_t *slurp(const char *p, size_t *n)
{
    FILE *fp = fopen(p, "rb");
    if (!fp)
        return NULL;
    uint8_t *b = malloc(1 << 20);
    *n = b ? fread(b, 1, 1 << 20, fp) : 0;
    fclose(fp);
    return b;
}

static void test_pcap_close_renames_and_leaves_no_tmp(void)
{
    char p[300], tmp[310];
    snprintf(p, sizeof p, "%s/a.pcap", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", p);
    rs_err err = { 0 };
    rs_pcap *w = NULL;
    CU_ASSERT_FATAL(rs_pcap_open(p, 0, &w, &err) == RS_OK);
    CU_ASSERT(exists(tmp));
    CU_ASSERT(!exists(p));
    rs_frame f = write_first();
    CU_ASSERT_EQUAL(rs_pcap_write(w, 1234567, &f), RS_OK);
    /* 1,234,567 ps -> 1,234 ns (truncated); 3 s + 999 ps -> 3 s 0 ns */
    CU_ASSERT_EQUAL(rs_pcap_write(w, 3 * RS_PS_PER_S + 999, &f), RS_OK);
    rs_frame bad = f;
    bad.kind = (rs_frame_kind)42;
    CU_ASSERT_EQUAL(rs_pcap_write(w, 4 * RS_PS_PER_S, &bad), RS_EINVAL); /* not sticky */
    CU_ASSERT_EQUAL(rs_pcap_close(w, &err), RS_OK);
    CU_ASSERT(exists(p));
    CU_ASSERT(!exists(tmp));

    size_t n = 0;
    uint8_t *b = slurp(p, &n);
    CU_ASSERT_FATAL(b != NULL);
    size_t flen = rs_frame_build(&f, fb, sizeof fb);
    CU_ASSERT_EQUAL(n, 24 + 2 * (16 + flen));
    CU_ASSERT_EQUAL(le32(b), 0xA1B23C4Du);       /* nanosecond pcap, host order (LE) */
    CU_ASSERT_EQUAL(le32(b + 20), 1);            /* LINKTYPE_ETHERNET */
    CU_ASSERT_EQUAL(le32(b + 24), 0);            /* ts sec */
    CU_ASSERT_EQUAL(le32(b + 28), 1234);         /* ts nsec */
    CU_ASSERT_EQUAL(le32(b + 32), flen);
    CU_ASSERT_EQUAL(le32(b + 36), flen);
    CU_ASSERT(memcmp(b + 40, fb, flen) == 0);
    const uint8_t *r2 = b + 40 + flen;
    CU_ASSERT_EQUAL(le32(r2), 3);
    CU_ASSERT_EQUAL(le32(r2 + 4), 0);
    free(b);
    unlink(p);
}

static void test_pcap_snaplen_truncates_but_keeps_orig_len(void)
{
    char p[300];
    snprintf(p, sizeof p, "%s/snap.pcap", dir);
    rs_pcap *w = NULL;
    CU_ASSERT_FATAL(rs_pcap_open(p, 128, &w, NULL) == RS_OK);
    rs_frame f = write_first();
    rs_frame ack = f;
    ack.kind = RS_FRAME_ROCE_ACK;
    CU_ASSERT_EQUAL(rs_pcap_write(w, 0, &f), RS_OK);
    CU_ASSERT_EQUAL(rs_pcap_write(w, 0, &ack), RS_OK);
    CU_ASSERT_EQUAL(rs_pcap_close(w, NULL), RS_OK);
    size_t n = 0;
    uint8_t *b = slurp(p, &n);
    CU_ASSERT_FATAL(b != NULL);
    size_t flen = rs_frame_build(&f, fb, sizeof fb);
    CU_ASSERT_EQUAL(le32(b + 16), 128);          /* snaplen in the file header */
    CU_ASSERT_EQUAL(le32(b + 32), 128);          /* caplen */
    CU_ASSERT_EQUAL(le32(b + 36), flen);         /* orig len */
    CU_ASSERT(memcmp(b + 40, fb, 128) == 0);
    const uint8_t *r2 = b + 40 + 128;
    CU_ASSERT_EQUAL(le32(r2 + 8), 62);           /* short frame kept whole */
    CU_ASSERT_EQUAL(le32(r2 + 12), 62);
    CU_ASSERT_EQUAL(n, 24 + 16 + 128 + 16 + 62);
    free(b);
    unlink(p);
}

static void test_pcap_abort_leaves_nothing(void)
{
    char p[300], tmp[310];
    snprintf(p, sizeof p, "%s/ab.pcap", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", p);
    rs_pcap *w = NULL;
    CU_ASSERT_FATAL(rs_pcap_open(p, 0, &w, NULL) == RS_OK);
    rs_frame f = write_first();
    CU_ASSERT_EQUAL(rs_pcap_write(w, 0, &f), RS_OK);
    rs_pcap_abort(w);
    rs_pcap_abort(NULL);
    CU_ASSERT(!exists(p));
    CU_ASSERT(!exists(tmp));
}

static void test_pcap_open_in_missing_dir_is_eio_naming_path(void)
{
    char p[300];
    snprintf(p, sizeof p, "%s/no/such/dir/x.pcap", dir);
    rs_err err = { 0 };
    rs_pcap *w = (rs_pcap *)&err; /* must be reset to NULL */
    CU_ASSERT_EQUAL(rs_pcap_open(p, 0, &w, &err), RS_EIO);
    CU_ASSERT_PTR_NULL(w);
    CU_ASSERT_EQUAL(err.code, RS_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, p));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "No such file"));
    CU_ASSERT_EQUAL(rs_pcap_open(NULL, 0, &w, &err), RS_EINVAL);
}

/* PATH.tmp as a symlink to /dev/full: every flush fails with ENOSPC. The
 * first failure is sticky, close reports it naming the file, and neither
 * PATH nor PATH.tmp (the link) remains. */
static void test_pcap_write_failure_is_sticky_and_close_fails(void)
{
    if (access("/dev/full", W_OK) != 0)
        return; /* not Linux-like: nothing to test with */
    char p[300], tmp[310];
    snprintf(p, sizeof p, "%s/full.pcap", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", p);
    CU_ASSERT_FATAL(symlink("/dev/full", tmp) == 0);
    rs_err err = { 0 };
    rs_pcap *w = NULL;
    CU_ASSERT_FATAL(rs_pcap_open(p, 0, &w, &err) == RS_OK);
    rs_frame f = write_first();
    int rc = RS_OK, i;
    for (i = 0; i < 1000 && rc == RS_OK; i++)
        rc = rs_pcap_write(w, (rs_time)i, &f);
    CU_ASSERT_EQUAL(rc, RS_EIO);
    CU_ASSERT_EQUAL(rs_pcap_write(w, (rs_time)i, &f), RS_EIO);
    CU_ASSERT_EQUAL(rs_pcap_close(w, &err), RS_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, p));
    CU_ASSERT(!exists(p));
    CU_ASSERT(!exists(tmp));

    /* A failure only visible at the final flush (fewer bytes than the
     * stdio buffer) is reported by close too. */
    CU_ASSERT_FATAL(symlink("/dev/full", tmp) == 0);
    CU_ASSERT_FATAL(rs_pcap_open(p, 0, &w, &err) == RS_OK);
    rs_frame a = f;
    a.kind = RS_FRAME_ROCE_ACK;
    CU_ASSERT_EQUAL(rs_pcap_write(w, 0, &a), RS_OK);
    CU_ASSERT_EQUAL(rs_pcap_close(w, &err), RS_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "No space"));
    CU_ASSERT(!exists(p));
    CU_ASSERT(!exists(tmp));
}

/* Find option `code` in the options at o..end (pcapng, little-endian);
 * returns its value and sets *len, or NULL. */
static const uint8_t *ng_opt(const uint8_t *o, const uint8_t *end, unsigned code, unsigned *len)
{
    while (o + 4 <= end) {
        unsigned c = o[0] | o[1] << 8, n = o[2] | o[3] << 8;
        if (c == 0)
            return NULL;
        if (c == code) {
            *len = n;
            return o + 4;
        }
        o += 4 + ((n + 3) & ~3u);
    }
    return NULL;
}

/* The blocks, read back by hand: an SHB with the comment and application
 * and nothing else, one IDB per interface (Ethernet, name, description,
 * picoseconds, FCS length 0), EPBs with the interface, the exact
 * picosecond time, both lengths, the bytes and epb_flags; every block's
 * two length fields agree and the blocks tile the file. */
static void test_pcapng_blocks_carry_interfaces_directions_and_picoseconds(void)
{
    char p[300], tmp[310];
    snprintf(p, sizeof p, "%s/a.pcapng", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", p);
    rs_err err = { 0 };
    rs_pcap *w = NULL;
    CU_ASSERT_FATAL(rs_pcapng_open(p, 0, "scenario: x.json\nseed: 7", "railsim test", &w, &err) == RS_OK);
    CU_ASSERT(exists(tmp));
    rs_frame f = write_first();
    CU_ASSERT_EQUAL(rs_pcap_write_on(w, 0, RS_PCAP_OUT, 5, &f), RS_EINVAL); /* no interface yet */
    uint32_t a = 99, b = 99;
    CU_ASSERT_EQUAL(rs_pcap_add_interface(w, "gpu0.nic", "GPU 0's NIC", &a, &err), RS_OK);
    CU_ASSERT_EQUAL(rs_pcap_add_interface(w, "leaf0.p0", NULL, &b, &err), RS_OK);
    CU_ASSERT_EQUAL(a, 0);
    CU_ASSERT_EQUAL(b, 1);
    CU_ASSERT_EQUAL(rs_pcap_add_interface(w, "", NULL, NULL, &err), RS_EINVAL);
    rs_frame pfc = { .kind = RS_FRAME_PFC, .eth_src = 3, .pfc_enable = 8 };
    rs_time t1 = 3 * RS_PS_PER_S + 1234567;       /* kept to the picosecond */
    rs_time t2 = t1 + 1;
    CU_ASSERT_EQUAL(rs_pcap_write_on(w, 0, RS_PCAP_OUT, t1, &f), RS_OK);
    CU_ASSERT_EQUAL(rs_pcap_write_on(w, 1, RS_PCAP_IN, t2, &pfc), RS_OK);
    CU_ASSERT_EQUAL(rs_pcap_write_on(w, 2, RS_PCAP_IN, t2, &pfc), RS_EINVAL); /* not sticky */
    CU_ASSERT_EQUAL(rs_pcap_close(w, &err), RS_OK);
    CU_ASSERT(!exists(tmp));

    size_t n = 0;
    uint8_t *buf = slurp(p, &n);
    CU_ASSERT_FATAL(buf != NULL);
    size_t flen = rs_frame_build(&f, fb, sizeof fb);
    const uint8_t *blk[5] = { 0 };
    size_t nb = 0, off = 0;
    while (off + 12 <= n && nb < 5) {
        uint32_t len = le32(buf + off + 4);
        CU_ASSERT_FATAL(len % 4 == 0 && len >= 12 && off + len <= n);
        CU_ASSERT_EQUAL(le32(buf + off + len - 4), len);
        blk[nb++] = buf + off;
        off += len;
    }
    CU_ASSERT_EQUAL_FATAL(nb, 5);
    CU_ASSERT_EQUAL(off, n);
    unsigned ol;
    const uint8_t *o;

    const uint8_t *shb = blk[0];
    CU_ASSERT_EQUAL(le32(shb), 0x0A0D0D0Au);
    CU_ASSERT_EQUAL(le32(shb + 8), 0x1A2B3C4Du);  /* little-endian section */
    CU_ASSERT_EQUAL(le32(shb + 12), 1);           /* version 1.0 */
    CU_ASSERT_EQUAL(le32(shb + 16), 0xFFFFFFFFu); /* section length unknown */
    const uint8_t *end = shb + le32(shb + 4) - 4;
    o = ng_opt(shb + 24, end, 1, &ol);
    CU_ASSERT(o && ol == 24 && memcmp(o, "scenario: x.json\nseed: 7", 24) == 0);
    o = ng_opt(shb + 24, end, 4, &ol);
    CU_ASSERT(o && ol == 12 && memcmp(o, "railsim test", 12) == 0);
    CU_ASSERT_PTR_NULL(ng_opt(shb + 24, end, 2, &ol)); /* no hardware, */
    CU_ASSERT_PTR_NULL(ng_opt(shb + 24, end, 3, &ol)); /* no OS */

    for (int i = 0; i < 2; i++) {
        const uint8_t *idb = blk[1 + i];
        CU_ASSERT_EQUAL(le32(idb), 1);
        CU_ASSERT_EQUAL(le32(idb + 8), 1);        /* LINKTYPE_ETHERNET, reserved 0 */
        CU_ASSERT_EQUAL(le32(idb + 12), 0);       /* snaplen: no limit */
        end = idb + le32(idb + 4) - 4;
        o = ng_opt(idb + 16, end, 2, &ol);
        CU_ASSERT(o && ol == 8 && memcmp(o, i ? "leaf0.p0" : "gpu0.nic", 8) == 0);
        o = ng_opt(idb + 16, end, 3, &ol);
        if (i == 0) {
            CU_ASSERT(o && ol == 11 && memcmp(o, "GPU 0's NIC", 11) == 0);
        } else {
            CU_ASSERT_PTR_NULL(o);
        }
        o = ng_opt(idb + 16, end, 9, &ol);
        CU_ASSERT(o && ol == 1 && o[0] == 12);    /* if_tsresol: 10^-12 s */
        o = ng_opt(idb + 16, end, 13, &ol);
        CU_ASSERT(o && ol == 1 && o[0] == 0);     /* if_fcslen */
    }

    const uint8_t *epb = blk[3];
    CU_ASSERT_EQUAL(le32(epb), 6);
    CU_ASSERT_EQUAL(le32(epb + 8), 0);
    CU_ASSERT_EQUAL((uint64_t)le32(epb + 12) << 32 | le32(epb + 16), t1);
    CU_ASSERT_EQUAL(le32(epb + 20), flen);
    CU_ASSERT_EQUAL(le32(epb + 24), flen);
    CU_ASSERT(memcmp(epb + 28, fb, flen) == 0);
    end = epb + le32(epb + 4) - 4;
    o = ng_opt(epb + 28 + ((flen + 3) & ~(size_t)3), end, 2, &ol);
    CU_ASSERT(o && ol == 4 && le32(o) == (2u | 1u << 2)); /* outbound, unicast */
    CU_ASSERT_EQUAL(le32(blk[4] + 8), 1);         /* the PFC frame, on leaf0.p0 */
    free(buf);
    unlink(p);
}

static void test_pcapng_second_epb_is_inbound_multicast_pfc(void)
{
    char p[300];
    snprintf(p, sizeof p, "%s/b.pcapng", dir);
    rs_pcap *w = NULL;
    CU_ASSERT_FATAL(rs_pcapng_open(p, 40, NULL, NULL, &w, NULL) == RS_OK);
    CU_ASSERT_EQUAL(rs_pcap_add_interface(w, "leaf0.p0", NULL, NULL, NULL), RS_OK);
    rs_frame pfc = { .kind = RS_FRAME_PFC, .eth_src = 3, .pfc_enable = 8 };
    rs_time t = ((rs_time)1 << 40) + 5;
    CU_ASSERT_EQUAL(rs_pcap_write_on(w, 0, RS_PCAP_IN, t, &pfc), RS_OK);
    CU_ASSERT_EQUAL(rs_pcap_close(w, NULL), RS_OK);
    size_t n = 0;
    uint8_t *buf = slurp(p, &n);
    CU_ASSERT_FATAL(buf != NULL);
    /* SHB with only the end of options: 32 bytes; then the IDB. */
    CU_ASSERT_EQUAL_FATAL(le32(buf + 4), 32);
    const uint8_t *idb = buf + 32;
    CU_ASSERT_EQUAL(le32(idb + 12), 40);          /* the snap length */
    const uint8_t *epb = idb + le32(idb + 4);
    CU_ASSERT_EQUAL(le32(epb), 6);
    CU_ASSERT_EQUAL(le32(epb + 12), 1u << 8);     /* high word of 2^40 + 5 */
    CU_ASSERT_EQUAL(le32(epb + 16), 5);
    CU_ASSERT_EQUAL(le32(epb + 20), 40);          /* kept */
    CU_ASSERT_EQUAL(le32(epb + 24), 60);          /* on the wire */
    unsigned ol;
    const uint8_t *o = ng_opt(epb + 28 + 40, epb + le32(epb + 4) - 4, 2, &ol);
    CU_ASSERT(o && ol == 4 && le32(o) == (1u | 2u << 2)); /* inbound, multicast */
    CU_ASSERT_EQUAL(epb + le32(epb + 4), buf + n);
    free(buf);
    unlink(p);
}

/* Interfaces belong to pcapng only; classic pcap has one link. */
static void test_pcapng_interfaces_only_on_pcapng(void)
{
    char p[300];
    snprintf(p, sizeof p, "%s/c.pcap", dir);
    rs_err err = { 0 };
    rs_pcap *w = NULL;
    CU_ASSERT_FATAL(rs_pcap_open(p, 0, &w, &err) == RS_OK);
    CU_ASSERT_EQUAL(rs_pcap_add_interface(w, "gpu0.nic", NULL, NULL, &err), RS_EINVAL);
    rs_frame f = write_first();
    CU_ASSERT_EQUAL(rs_pcap_write_on(w, 1, RS_PCAP_OUT, 0, &f), RS_EINVAL);
    CU_ASSERT_EQUAL(rs_pcap_write_on(w, 0, RS_PCAP_IN, 0, &f), RS_OK);
    rs_pcap_abort(w);
    CU_ASSERT(!exists(p));
    snprintf(p, sizeof p, "%s/no/such/dir/x.pcapng", dir);
    CU_ASSERT_EQUAL(rs_pcapng_open(p, 0, NULL, NULL, &w, &err), RS_EIO);
    CU_ASSERT_PTR_NULL(w);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, p));
}

/* A pcapng write failure is sticky and close reports it (as pcap). */
static void test_pcapng_write_failure_is_sticky_and_close_fails(void)
{
    if (access("/dev/full", W_OK) != 0)
        return;
    char p[300], tmp[310];
    snprintf(p, sizeof p, "%s/full.pcapng", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", p);
    CU_ASSERT_FATAL(symlink("/dev/full", tmp) == 0);
    rs_err err = { 0 };
    rs_pcap *w = NULL;
    CU_ASSERT_FATAL(rs_pcapng_open(p, 0, "c", "a", &w, &err) == RS_OK);
    CU_ASSERT_EQUAL(rs_pcap_add_interface(w, "gpu0.nic", NULL, NULL, &err), RS_OK);
    rs_frame f = write_first();
    int rc = RS_OK, i;
    for (i = 0; i < 1000 && rc == RS_OK; i++)
        rc = rs_pcap_write_on(w, 0, RS_PCAP_OUT, (rs_time)i, &f);
    CU_ASSERT_EQUAL(rc, RS_EIO);
    CU_ASSERT_EQUAL(rs_pcap_write_on(w, 0, RS_PCAP_OUT, (rs_time)i, &f), RS_EIO);
    CU_ASSERT_EQUAL(rs_pcap_add_interface(w, "gpu1.nic", NULL, NULL, &err), RS_EIO);
    CU_ASSERT_EQUAL(rs_pcap_close(w, &err), RS_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, p));
    CU_ASSERT(!exists(p));
    CU_ASSERT(!exists(tmp));
}

/* Parts merge by key (stamp, class, event time, event key, step, index):
 * two parts written out of each other's order give the file written in
 * that order directly; a part cut short is an error naming it. */
static void test_pcapng_parts_merge_in_key_order(void)
{
    char whole[300], direct[300], pa[300], pb[300];
    snprintf(whole, sizeof whole, "%s/m.pcapng", dir);
    snprintf(direct, sizeof direct, "%s/d.pcapng", dir);
    snprintf(pa, sizeof pa, "%s/m.part0", dir);
    snprintf(pb, sizeof pb, "%s/m.part1", dir);
    /* Keys in serial order: class 0 before 1 at one stamp, then event
     * time, event key, step (a shared event's flow starts), index. */
    const rs_pcap_key k[6] = {
        { 1000, 1000, 5ULL << 40, 0, 0, 0 }, { 1000, 1000, 7ULL << 40, 0, 0, 0 }, { 1000, 1000, 7ULL << 40, 0, 1, 0 },
        { 1000, 1400, 2ULL << 40, 0, 0, 1 }, { 2000, 2000, 1ULL << 40, 1, 0, 0 }, { 2000, 2000, 1ULL << 40, 2, 0, 0 },
    };
    const int part_of[6] = { 1, 0, 0, 1, 0, 1 };
    for (unsigned i = 0; i + 1 < 6; i++)
        CU_ASSERT(rs_pcap_key_cmp(&k[i], &k[i + 1]) < 0 && rs_pcap_key_cmp(&k[i + 1], &k[i]) > 0);
    CU_ASSERT_EQUAL(rs_pcap_key_cmp(&k[2], &k[2]), 0);
    rs_pcap *w = NULL, *d = NULL, *part[2] = { NULL, NULL };
    CU_ASSERT_FATAL(rs_pcapng_open(whole, 0, "c", "a", &w, NULL) == RS_OK);
    CU_ASSERT_FATAL(rs_pcapng_open(direct, 0, "c", "a", &d, NULL) == RS_OK);
    CU_ASSERT_FATAL(rs_pcapng_open_part(pa, 0, 2, &part[0], NULL) == RS_OK);
    CU_ASSERT_FATAL(rs_pcapng_open_part(pb, 0, 2, &part[1], NULL) == RS_OK);
    CU_ASSERT_EQUAL(rs_pcap_add_interface(w, "gpu0.nic", NULL, NULL, NULL), RS_OK);
    CU_ASSERT_EQUAL(rs_pcap_add_interface(w, "leaf0.p0", NULL, NULL, NULL), RS_OK);
    CU_ASSERT_EQUAL(rs_pcap_add_interface(d, "gpu0.nic", NULL, NULL, NULL), RS_OK);
    CU_ASSERT_EQUAL(rs_pcap_add_interface(d, "leaf0.p0", NULL, NULL, NULL), RS_OK);
    for (unsigned i = 0; i < 6; i++) {
        rs_frame f = { .kind = RS_FRAME_ROCE_DATA, .opcode = RS_BTH_RC_WRITE_MIDDLE, .psn = i, .payload_len = 64 * (i + 1),
                       .eth_src = i, .ip_src = 1, .ip_dst = 2 };
        uint32_t ifid = i & 1;
        rs_pcap_dir dr = k[i].cls ? RS_PCAP_IN : RS_PCAP_OUT;
        CU_ASSERT_EQUAL(rs_pcap_write_on(d, ifid, dr, k[i].stamp, &f), RS_OK);
        CU_ASSERT_EQUAL(rs_pcap_write_keyed(part[part_of[i]], &k[i], ifid, dr, k[i].stamp, &f), RS_OK);
    }
    /* A part takes keyed writes only, a whole file unkeyed ones only. */
    rs_frame f0 = { .kind = RS_FRAME_ROCE_CNP, .ip_src = 1, .ip_dst = 2 };
    CU_ASSERT_EQUAL(rs_pcap_write_on(part[0], 0, RS_PCAP_OUT, 1, &f0), RS_EINVAL);
    CU_ASSERT_EQUAL(rs_pcap_write_keyed(w, &k[0], 0, RS_PCAP_OUT, 1, &f0), RS_EINVAL);
    CU_ASSERT_EQUAL(rs_pcap_close(part[0], NULL), RS_OK);
    CU_ASSERT_EQUAL(rs_pcap_close(part[1], NULL), RS_OK);
    CU_ASSERT_EQUAL(rs_pcap_close(d, NULL), RS_OK);
    const char *names[2] = { pa, pb };
    CU_ASSERT_EQUAL(rs_pcapng_merge(w, names, 2, NULL), RS_OK);
    CU_ASSERT_EQUAL(rs_pcap_close(w, NULL), RS_OK);
    size_t na = 0, nb = 0;
    uint8_t *a = slurp(whole, &na), *b = slurp(direct, &nb);
    CU_ASSERT_FATAL(a && b);
    CU_ASSERT(na == nb && na > 200 && memcmp(a, b, na) == 0);
    free(a);
    free(b);
    /* Cut a part short: the merge names it. */
    unlink(whole);
    CU_ASSERT_EQUAL(truncate(pb, 60), 0);
    rs_err err;
    rs_err_clear(&err);
    CU_ASSERT_FATAL(rs_pcapng_open(whole, 0, NULL, NULL, &w, NULL) == RS_OK);
    CU_ASSERT_EQUAL(rs_pcap_add_interface(w, "gpu0.nic", NULL, NULL, NULL), RS_OK);
    CU_ASSERT_EQUAL(rs_pcapng_merge(w, names, 2, &err), RS_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, pb));
    rs_pcap_abort(w);
    CU_ASSERT(!exists(whole));
    unlink(pa);
    unlink(pb);
    unlink(direct);
}

static const rs_cu_test frame_tests[] = {
    RS_CU_TEST(test_pcap_write_first_fields_at_their_offsets),
    RS_CU_TEST(test_pcap_ipv4_checksum_sums_to_ffff),
    RS_CU_TEST(test_pcap_icrc_matches_bitwise_crc32),
    RS_CU_TEST(test_pcap_icrc_ignores_variant_fields),
    RS_CU_TEST(test_pcap_icrc_matches_connectx4_cnp),
    RS_CU_TEST(test_pcap_cnp_layout_matches_connectx4),
    RS_CU_TEST(test_pcap_odd_payload_is_padded_and_padcnt_set),
    RS_CU_TEST(test_pcap_ack_and_cnp_layout),
    RS_CU_TEST(test_pcap_pfc_layout_and_length_60),
    RS_CU_TEST(test_pcap_wire_bytes_add_fcs_preamble_gap_with_64_minimum),
    RS_CU_TEST(test_pcap_build_rejects_small_buffer_and_bad_frames),
};

static const rs_cu_test file_tests[] = {
    RS_CU_TEST(test_pcap_close_renames_and_leaves_no_tmp),
    RS_CU_TEST(test_pcap_snaplen_truncates_but_keeps_orig_len),
    RS_CU_TEST(test_pcap_abort_leaves_nothing),
    RS_CU_TEST(test_pcap_open_in_missing_dir_is_eio_naming_path),
    RS_CU_TEST(test_pcap_write_failure_is_sticky_and_close_fails),
    RS_CU_TEST(test_pcapng_blocks_carry_interfaces_directions_and_picoseconds),
    RS_CU_TEST(test_pcapng_second_epb_is_inbound_multicast_pfc),
    RS_CU_TEST(test_pcapng_interfaces_only_on_pcapng),
    RS_CU_TEST(test_pcapng_write_failure_is_sticky_and_close_fails),
    RS_CU_TEST(test_pcapng_parts_merge_in_key_order),
};

static void register_suites(void)
{
    RS_CU_SUITE("pcap", frame_tests);
    /* The file tests need a scratch directory: a suite with setup. */
    CU_pSuite s = CU_add_suite("pcap_file", suite_init, suite_clean);
    if (!s) {
        rs_cu_register_failed = 1;
        return;
    }
    for (size_t i = 0; i < sizeof file_tests / sizeof file_tests[0]; i++)
        if (!CU_add_test(s, file_tests[i].name, file_tests[i].fn))
            rs_cu_register_failed = 1;
}

int main(void) { return rs_cu_run(register_suites); }
