/*
 * standin.h - a stand-in for the MPI communicator of a split run
 * (partition.h rs_net_comm), header only, for the unit tests and the
 * fuzz target of the wire format (docs/parallel.md, "Wire format"):
 * this process is rank 0 of 2; rank 1 never runs, and what it sends is
 * given, the bytes of its first window message and of its end-of-run
 * message. The run on it is a small split network whose rank 0 receives
 * those bytes as another process's.
 */
#ifndef RS_STANDIN_H
#define RS_STANDIN_H

#include "netint.h"
#include "partition.h"
#include "split_wire.h"

#include <stdlib.h>
#include <string.h>

typedef struct rs_standin {
    const void *win;   /* rank 1's message in the first window's exchange; NULL: none */
    size_t nwin;
    const void *tail;  /* rank 1's end-of-run message (NULL, 0: an empty one) */
    size_t ntail;
    uint32_t exchanges;
} rs_standin;

/* Rank 1 agrees with whatever rank 0 says. */
static int standin_allreduce(void *ctx, uint64_t *v, size_t n, int max)
{
    (void)ctx, (void)v, (void)n, (void)max;
    return RS_OK;
}

static int standin_exchange(void *ctx, void *const *send, const size_t *send_len, uint64_t *v, size_t nv,
                            void **recv, size_t *recv_len)
{
    rs_standin *s = ctx;
    (void)send, (void)send_len, (void)v, (void)nv;
    *recv = NULL;
    *recv_len = 0;
    if (s->exchanges++ == 0 && s->nwin) {
        if (!(*recv = malloc(s->nwin)))
            return RS_ENOMEM;
        memcpy(*recv, s->win, s->nwin);
        *recv_len = s->nwin;
    }
    return RS_OK;
}

static int standin_gather(void *ctx, const void *buf, size_t n, void **all, size_t *len)
{
    rs_standin *s = ctx;
    char *b = malloc(n + s->ntail + 1);
    if (!b)
        return RS_ENOMEM;
    memcpy(b, buf, n);
    if (s->ntail)
        memcpy(b + n, s->tail, s->ntail);
    len[0] = n;
    len[1] = s->ntail;
    *all = b;
    return RS_OK;
}

static inline rs_net_comm rs_standin_comm(rs_standin *s)
{
    rs_net_comm c = { s, 0, 2, standin_allreduce, standin_exchange, standin_gather };
    return c;
}

/* Rank 1's end-of-run message when it did nothing (no ports, no
 * completions), well formed, into b (RS_STANDIN_TAIL bytes). */
#define RS_STANDIN_TAIL (sizeof(rs_wire) + sizeof(part_tail))
static inline size_t rs_standin_empty_tail(char *b)
{
    part_tail t;
    memset(&t, 0, sizeof t);
    rs_wire w = rs_wire_make(RS_WIRE_TAIL, 1, sizeof t);
    memcpy(b, &w, sizeof w);
    memcpy(b + sizeof w, &t, sizeof t);
    return sizeof w + sizeof t;
}

/* Split net on s (rs_net_part_start): RS_OK or its error. */
static inline int rs_standin_start(rs_net *net, rs_standin *s)
{
    rs_net_comm comm = rs_standin_comm(s);
    rs_err err;
    return rs_net_part_start(net, &comm, &err);
}

/* The small network the runs split: 8 GPUs on a fat tree of radix 4, HB
 * domains of 1, the ideal transport (no ACKs: rank 0's flows end without
 * rank 1); not split yet. NULL when it could not be built. */
static inline rs_net *rs_standin_bare_net(void)
{
    rs_net_config c;
    rs_net_config_default(&c);
    c.gpus = 8;
    c.hb_size = 1;
    c.radix = 4;
    c.transport = RS_TRANSPORT_IDEAL;
    rs_net *net = NULL;
    rs_err err;
    return rs_net_create(&c, &net, &err) == RS_OK ? net : NULL;
}

/* That network with GPU g sending 64 KiB to GPU g + 4 mod 8 at time 0,
 * split on s (rs_net_part_start), not run yet; NULL when it could not be
 * built. */
static inline rs_net *rs_standin_net(rs_standin *s)
{
    rs_net *net = rs_standin_bare_net();
    if (!net)
        return NULL;
    for (uint32_t g = 0; g < 8; g++) {
        rs_net_msg m;
        rs_net_msg_init(&m);
        m.src = g;
        m.dst = (g + 4) % 8;
        m.bytes = 65536;
        if (rs_net_send(net, &m) != RS_OK) {
            rs_net_destroy(net);
            return NULL;
        }
    }
    if (rs_standin_start(net, s) != RS_OK) {
        rs_net_destroy(net);
        return NULL;
    }
    return net;
}

/* A port of rank 1 whose cable ends in rank 0: what a frame from rank 1
 * arrives over (its pkt->link); the k-th of them, cyclically; RS_NONE:
 * none. */
static inline uint32_t rs_standin_cut_port(const rs_net *net, uint32_t k)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < net->nports; i++)
        n += net->ports[i].cut && rs_part_owns_node(net, net->ports[i].peer_node);
    if (!n)
        return RS_NONE;
    k %= n;
    for (uint32_t i = 0; i < net->nports; i++)
        if (net->ports[i].cut && rs_part_owns_node(net, net->ports[i].peer_node) && k-- == 0)
            return i;
    return RS_NONE;
}

#endif
