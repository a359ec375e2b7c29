/*
 * fuzz_wire.c - the receiving side of a split run's messages (split.c,
 * docs/parallel.md "Wire format") on hostile bytes: rank 0 of a small
 * split network on a stand-in communicator (tests/unit/standin.h) gets
 * them as rank 1's. The run ends with RS_EFORMAT and a sentence, or
 * takes what it was sent; it never crashes, leaks or reads out of bounds.
 *
 * The first byte picks how the rest is sent:
 *   0  as rank 1's first window message, raw;
 *   1  as its end-of-run message, raw;
 *   2  as the records of a window message with a correct header and
 *      counts: 72-byte frames, each on a cable from rank 1 into rank 0
 *      (its first byte picks which), the rest of it as it comes;
 *   3  the same with the counts of every kind of record from the next 5
 *      bytes (each at most 3), the records' bytes as they come.
 */
#include "../unit/standin.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A window message of rank 1 whose records are body[0..n), with these
 * counts; NULL when out of memory. */
static char *window_of(const uint8_t *body, size_t n, const uint32_t cnt[5], size_t *len)
{
    part_hdr h;
    memset(&h, 0, sizeof h);
    h.nd = cnt[0];
    h.ns = cnt[1];
    h.ne = cnt[2];
    h.nf = cnt[3];
    h.nr = cnt[4];
    h.w = rs_wire_make(RS_WIRE_WINDOW, 1, PART_HDR_ROOM - sizeof h.w + n);
    char *b = calloc(1, PART_HDR_ROOM + n);
    if (!b)
        return NULL;
    memcpy(b, &h, sizeof h);
    if (n)
        memcpy(b + PART_HDR_ROOM, body, n);
    *len = PART_HDR_ROOM + n;
    return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t mode = data[0] % 4;
    data++, size--;
    rs_standin s = { 0 };
    rs_net *net = rs_standin_net(&s);
    if (!net)
        abort(); /* the fixed network always builds */
    char *msg = NULL;
    size_t n = 0;
    if (mode == 0 || mode == 1) {
        if (size && !(msg = malloc(size)))
            goto out;
        if (size)
            memcpy(msg, data, size);
        n = size;
    } else if (mode == 2) {
        size_t nf = size / sizeof(part_frame);
        uint8_t *body = malloc(nf * sizeof(part_frame) + 1);
        if (!body)
            goto out;
        for (size_t i = 0; i < nf; i++) {
            part_frame f;
            memcpy(&f, data + i * sizeof f, sizeof f);
            uint32_t L = rs_standin_cut_port(net, data[i * sizeof f]);
            if (L != RS_NONE) {
                f.pkt.link = L;
                f.pkt.to_port = net->ports[L].peer_port;
                f.pkt.to_node = net->ports[L].peer_node;
            }
            memcpy(body + i * sizeof f, &f, sizeof f);
        }
        uint32_t cnt[5] = { 0, 0, 0, (uint32_t)nf, 0 };
        msg = window_of(body, nf * sizeof(part_frame), cnt, &n);
        free(body);
    } else {
        if (size < 5)
            goto out;
        static const size_t rec[5] = { sizeof(uint32_t), sizeof(rs_part_send), sizeof(part_timer), sizeof(part_frame),
                                       sizeof(part_rep) };
        uint32_t cnt[5];
        size_t want = 0;
        for (int k = 0; k < 5; k++) {
            cnt[k] = data[k] % 4;
            want += cnt[k] * rec[k];
        }
        data += 5, size -= 5;
        if (size < want)
            goto out;
        msg = window_of(data, want, cnt, &n);
    }
    if (!msg && n)
        goto out;
    /* Rank 0 reads what it was sent; the run may fail, never crash. */
    rs_net_destroy(net);
    if (mode == 1) {
        s.tail = msg;
        s.ntail = n;
    } else {
        s.win = msg;
        s.nwin = n;
    }
    if (!(net = rs_standin_net(&s)))
        abort();
    int rc = rs_net_run(net, RS_TIME_MAX);
    if (rc == RS_EFORMAT && !rs_net_part_errmsg(net)[0])
        abort(); /* refused without saying why */
out:
    free(msg);
    rs_net_destroy(net);
    return 0;
}
