/*
 * coll_ring.c - NCCL's ring AllGather, ReduceScatter and AllReduce.
 *
 * The buffer is split over `nch` channels; each channel is a ring over all
 * ranks and splits its share into n slices (slice j starts at ring position
 * j), each cut into m near-equal pieces of at most chunk_bytes. In step s a
 * rank sends one slice to its successor: AllGather sends slice (i-s) for
 * s < n-1; ReduceScatter sends slice (i-s-1), the receiver reducing it into
 * its own copy; AllReduce is ReduceScatter (steps 0..n-2) then AllGather of
 * the reduced slices (steps n-1..2n-3). A rank sends its pieces in the
 * order (step, piece) -- the order of NCCL's primitives -- and piece p of
 * step s may go once piece p of step s-1 has arrived from the predecessor
 * (plus the reduction time, bytes / reduce rate, on reduce steps): cut-
 * through pipelining, so the time is (steps x slice) / bandwidth plus about
 * one piece per hop, not per step. A piece also needs a free slot in the
 * successor's buffer of `window` pieces: the successor frees a slot once
 * its piece is usable (arrived, and reduced on a reduce step) and the
 * pieces before it are too, and tells its predecessor with a credit that
 * takes a path latency back (ring_credit; rs_coll_credit_time), as NCCL's
 * receiver posts its free slots to the sender over the network. So a
 * rank reads only its own state: what it received, what it was told.
 *
 * Ring order (per channel c): the ranks of one HB domain are consecutive,
 * entering the domain at one GPU and leaving from another; consecutive
 * domains enter on the rail the previous one left on, so each ring crosses
 * a domain boundary once per domain and always on one rail (alternating
 * between local indices c and c+1; an odd domain count uses c+2 once).
 * Channels rotate c, so with channels = GPUs per domain every rail NIC
 * carries one channel, as NCCL spreads channels over a node's NICs.
 *
 * State: O(channels x n); the sequence number of a piece is s*m + p, and a
 * rank needs its predecessor's piece k-m before sending piece k.
 *
 * At flow level a long pipelined ring sends one stream per rank and
 * channel instead of its pieces (stream_arrived, stream_pace).
 */
#include "coll_int.h"

#include "fault.h"

#include <math.h>
#include <stdlib.h>

struct ring_rank {
    uint64_t rcv_mask;  /* bit b: piece rcv_base + b arrived (and was reduced) */
    rs_time credit_lat; /* a credit's way back from its successor (ring_start) */
    rs_time hop_extra;  /* NCCL's per-step latency of the hop to its successor beyond the network's */
    uint32_t rcv_base;  /* every piece below arrived (and was reduced): its buffer slots are free */
    uint32_t issued;    /* next piece to send */
    uint32_t credit;    /* its successor's rcv_base as last told (ring_credit) */
    uint32_t posting;   /* its last piece has not left yet (ring_left) */
    uint64_t held;      /* members joining: bit k, piece k arrived over an HB link before it joined */
};

#define TAG_CH_SHIFT 58
#define TAG_POS_SHIFT 36
#define TAG_SEQ_MASK ((1ULL << 36) - 1)

/* Minimum bytes per rank per channel: below, fewer channels (as NCCL
 * shrinks nChannels for small messages; a piece under one MTU only adds
 * per-message overhead). */
#define RING_MIN_SLICE 4096u

/* Flow level: a ring runs as streams when steps x pieces is at least
 * RING_STREAM_MIN_SEQ, or when its slowest hop's bandwidth bounds it
 * even against a pessimistic pace (stream_pace's *busy). Else the
 * per-piece form: a 6.8 MB ReduceScatter over 4 ranks (3 steps x 2
 * pieces) came out 4.9% fast as plain streams, +0.4% per piece. */
#define RING_STREAM_MIN_SEQ 64u

static uint32_t slice_of(const rs_coll *c, uint32_t pos, uint32_t s)
{
    uint32_t n = c->n;
    uint64_t i = pos + (uint64_t)2 * n; /* keep the modular arithmetic positive */
    switch (c->op) {
    case RS_COLL_ALLGATHER:
        return (uint32_t)((i - s) % n);
    case RS_COLL_REDUCESCATTER:
        return (uint32_t)((i - s - 1) % n);
    default: /* allreduce */
        return s < n - 1 ? (uint32_t)((i - s - 1) % n) : (uint32_t)((i - (s - (n - 1))) % n);
    }
}

static int reduce_step(const rs_coll *c, uint32_t s)
{
    return c->op == RS_COLL_REDUCESCATTER || (c->op == RS_COLL_ALLREDUCE && s < c->n - 1);
}

static uint64_t piece_bytes(const rs_coll *c, uint32_t ch, uint32_t pos, uint32_t k)
{
    uint32_t m = c->ch_pieces[ch], s = k / m, p = k % m;
    uint64_t slice = coll_split(c->ch_bytes[ch], c->n, slice_of(c, pos, s));
    return coll_split(slice, m, p);
}

static int received(const ring_rank *r, uint32_t k)
{
    if (k < r->rcv_base)
        return 1;
    uint32_t b = k - r->rcv_base;
    return b < 64 && ((r->rcv_mask >> b) & 1);
}

static void mark_received(ring_rank *r, uint32_t k)
{
    uint32_t b = k - r->rcv_base;
    /* The sender issues no piece `window` (at most 64) or more past the
     * receiver's rcv_base as it last heard it (try_issue), which is never
     * ahead of the receiver's, so arrivals fit the mask even when a fault
     * holds a piece back. */
    RS_ASSERT(k >= r->rcv_base && b < 64);
    r->rcv_mask |= 1ULL << b;
    while (r->rcv_mask & 1) {
        r->rcv_mask >>= 1;
        r->rcv_base++;
    }
}

static void ring_arrived(void *ctx, rs_net *net, uint64_t tag);
static void ring_reduced(void *ctx, rs_net *net, uint64_t tag);
static void ring_left(void *ctx, rs_net *net, uint64_t tag);

static uint64_t ring_tag(uint32_t ch, uint32_t pos, uint32_t k)
{
    return ((uint64_t)ch << TAG_CH_SHIFT) | ((uint64_t)pos << TAG_POS_SHIFT) | k;
}

/* Send every piece of (channel, position) that is ready and has a free
 * slot in its successor's buffer. */
static void try_issue(rs_coll *c, uint32_t ch, uint32_t pos)
{
    uint32_t n = c->n, m = c->ch_pieces[ch];
    uint32_t total = c->steps * m;
    ring_rank *r = &c->rr[(size_t)ch * n + pos]; /* its send and its receive state */
    const uint32_t *ord = c->order + (size_t)ch * n;
    if (!coll_member_in(c, ord[pos]) || r->credit == RS_COLL_UNPOSTED)
        return;
    while (!r->posting && r->issued - r->credit < c->o.window && r->issued < total) {
        uint32_t k = r->issued;
        if (k >= m && !received(r, k - m))
            return;
        uint32_t next = pos + 1 == n ? 0 : pos + 1;
        r->posting = 1;
        uint64_t serial = c->ch_serial ? c->ch_serial[ch] + (uint64_t)pos * total + k : UINT64_MAX;
        if (rs_coll_send_named(c, ord[pos], ord[next], piece_bytes(c, ch, pos, k), ring_arrived, ring_left,
                               ring_tag(ch, pos, k), serial) != RS_OK)
            return;
        r->issued++;
        rs_coll_member_step(c, ord[pos]);
    }
}

static void stream_try(rs_coll *c, uint32_t ch, uint32_t pos);

/* Send what (channel, position) can: its pieces, or its stream. */
static void issue(rs_coll *c, uint32_t ch, uint32_t pos)
{
    if (c->stream)
        stream_try(c, ch, pos);
    else
        try_issue(c, ch, pos);
}

static void decode(uint64_t tag, uint32_t *ch, uint32_t *pos, uint32_t *k)
{
    *ch = (uint32_t)(tag >> TAG_CH_SHIFT);
    *pos = (uint32_t)((tag >> TAG_POS_SHIFT) & ((1u << 22) - 1));
    *k = (uint32_t)(tag & TAG_SEQ_MASK);
}

static void chain_try(rs_coll *c, uint32_t ch, uint32_t pos);

/* The last piece `pos` sent has left it (a ring's or a chain's): the
 * next may go. */
static void ring_left(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    rs_coll *c = ctx;
    uint32_t ch, pos, k;
    decode(tag, &ch, &pos, &k);
    c->rr[(size_t)ch * c->n + pos].posting = 0;
    if (coll_rooted(c->op)) /* a chain (below) */
        chain_try(c, ch, pos);
    else
        try_issue(c, ch, pos);
}

/* The credit the receiver of `pos` gave back reaches it: its rcv_base was
 * `tag`'s sequence field. */
static void ring_credit(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    rs_coll *c = ctx;
    uint32_t ch, pos, k;
    decode(tag, &ch, &pos, &k);
    ring_rank *r = &c->rr[(size_t)ch * c->n + pos];
    if (r->credit == RS_COLL_UNPOSTED || k > r->credit)
        r->credit = k;
    issue(c, ch, pos);
}

/* The GPU at ring position pos of channel ch. */
static uint32_t pos_gpu(const rs_coll *c, uint32_t ch, uint32_t pos)
{
    return c->gpu[c->order[(size_t)ch * c->n + pos]];
}

static void credit_latencies(rs_coll *c);

/* The kept credit times, computed again after a degrade or restore
 * changed a rate (rs_coll_rates_moved). */
static void credits_now(rs_coll *c)
{
    if (RS_UNLIKELY(rs_coll_rates_moved(c)))
        credit_latencies(c);
}

/* Piece k of receiver `pos` is usable: it goes on, and once the pieces up
 * to k are all in, it frees their slots (the credit goes back to its
 * predecessor, arriving a path latency later). No credit is sent once the
 * predecessor has every slot it can use: then none is pending when the
 * collective ends. */
static void piece_ready(rs_coll *c, uint32_t ch, uint32_t pos, uint32_t k)
{
    uint32_t n = c->n, prev = pos == 0 ? n - 1 : pos - 1;
    ring_rank *r = &c->rr[(size_t)ch * n + pos];
    uint32_t base = r->rcv_base, total = c->steps * c->ch_pieces[ch];
    mark_received(r, k);
    if (r->rcv_base > base && base + c->o.window < total) {
        credits_now(c);
        const ring_rank *rp = &c->rr[(size_t)ch * n + prev];
        rs_net_at_gpu_for(c->net, pos_gpu(c, ch, pos), pos_gpu(c, ch, prev), rs_net_now(c->net) + rp->credit_lat,
                          ring_credit, c, ring_tag(ch, prev, r->rcv_base));
    }
    try_issue(c, ch, pos);
    rs_coll_member_step(c, c->order[(size_t)ch * n + pos]);
    rs_coll_advance(c, 1); /* last: may finish and free c */
}

/* Piece k from `pos` is at its successor, which takes it in: reduces it
 * on a reduce step, else it is ready. */
static void ring_take(rs_coll *c, uint32_t ch, uint32_t pos, uint32_t k)
{
    rs_net *net = c->net;
    uint32_t n = c->n, m = c->ch_pieces[ch];
    uint32_t next = pos + 1 == n ? 0 : pos + 1;
    uint32_t s = k / m;
    if (reduce_step(c, s)) {
        rs_time d = rs_coll_reduce_time(c, piece_bytes(c, ch, pos, k));
        if (d) {
            rs_net_at_gpu(net, pos_gpu(c, ch, next), rs_net_now(net) + d, ring_reduced, c, ring_tag(ch, next, k));
            return;
        }
    }
    piece_ready(c, ch, next, k);
}

/* A piece (tag) is at the successor of its sender: NCCL's per-step
 * latency of the hop beyond the network's (nccl.model=nccl) passes
 * before the receiver sees it, landed(c, net, tag) then; 0 when there is
 * none (call landed now). Rings and chains alike. */
static int hop_delay(rs_coll *c, rs_net *net, uint64_t tag, rs_net_timer_fn landed)
{
    uint32_t ch, pos, k;
    decode(tag, &ch, &pos, &k);
    rs_time x = c->rr[(size_t)ch * c->n + pos].hop_extra;
    if (!x)
        return 0;
    uint32_t next = pos + 1 == c->n ? 0 : pos + 1;
    rs_net_at_gpu(net, pos_gpu(c, ch, next), rs_net_now(net) + x, landed, c, tag);
    return 1;
}

static void ring_landed(void *ctx, rs_net *net, uint64_t tag);

static void ring_arrived(void *ctx, rs_net *net, uint64_t tag)
{
    if (!hop_delay(ctx, net, tag, ring_landed))
        ring_landed(ctx, net, tag);
}

static void ring_landed(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    rs_coll *c = ctx;
    uint32_t ch, pos, k;
    decode(tag, &ch, &pos, &k);
    uint32_t next = pos + 1 == c->n ? 0 : pos + 1;
    if (!coll_member_in(c, c->order[(size_t)ch * c->n + next])) {
        /* Over an HB link into slots free from the last collective: its
         * receiver takes it in when it joins (rs_coll_ring_join). Within
         * the window, so k < 64. */
        c->rr[(size_t)ch * c->n + next].held |= 1ULL << k;
        return;
    }
    ring_take(c, ch, pos, k);
}

static void ring_reduced(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    uint32_t ch, pos, k;
    decode(tag, &ch, &pos, &k);
    piece_ready(ctx, ch, pos, k);
}

/* Flow level, streams: rank `pos` of channel ch sends everything it sends
 * in the ring (every step's slice) as one transfer, so a 1 GiB AllReduce
 * over 128 GPUs is 1,024 flows instead of 520,192 messages. A stream
 * carries the same bytes over the same hop; what it leaves out is the
 * wait at step boundaries (piece p of step s leaves once piece p of step
 * s-1 has arrived) and the window. stream_pace puts them back as a time
 * before which no stream completes. The collective ends when every stream
 * has arrived, plus the last piece's reduction when the last step
 * reduces. Measured against the packet level in docs/fidelity.md. */
static void stream_end(rs_coll *c, uint64_t tag)
{
    if (c->mleft) {
        uint32_t ch, pos, k;
        decode(tag, &ch, &pos, &k);
        rs_coll_member_step(c, c->order[(size_t)ch * c->n + (pos + 1 == c->n ? 0 : pos + 1)]);
    }
    rs_coll_advance(c, 1); /* last: may finish and free c */
}

static void stream_done(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    stream_end(ctx, tag);
}

static void stream_arrived(void *ctx, rs_net *net, uint64_t tag)
{
    rs_coll *c = ctx;
    uint32_t ch, pos, k;
    decode(tag, &ch, &pos, &k);
    uint32_t last = c->steps * c->ch_pieces[ch] - 1;
    /* Its last piece lands the hop's per-step latency after it arrives,
     * as every piece does (hop_delay); stream_hold counts it already. */
    rs_time now = rs_net_now(net), at = now + c->rr[(size_t)ch * c->n + pos].hop_extra;
    rs_time t = at > c->stream_hold ? at : c->stream_hold;
    t += reduce_step(c, c->steps - 1) ? rs_coll_reduce_time(c, piece_bytes(c, ch, pos, last)) : 0;
    if (t > now) {
        rs_net_at(net, t, stream_done, c, tag);
        return;
    }
    stream_end(c, tag);
}

/* 1 when ranks a and b are in one HB domain (as rs_coll_hop_extra). */
static uint32_t same_dom(const rs_coll *c, uint32_t a, uint32_t b)
{
    return c->gpu[a] / c->o.hb_size == c->gpu[b] / c->o.hb_size;
}

/* How long the piece-by-piece ring of channel ch takes at least, from its
 * start to the last piece's arrival, by the two bounds a stream leaves
 * out. Piece k of a rank waits for piece k-m from its predecessor (m
 * pieces per slice) and for the credit of its own piece k-window, given
 * back once that piece arrived at its successor; a piece crosses hop h in
 * T_h (its serialisation and latency L_h alone, rs_net_hop_estimate, plus
 * its reduction on a reduce step) and its credit comes back in about L_h.
 * The first wait chains around the ring, so a rank sends a piece at most
 * every avg(T_h) / m; the second holds each rank to (T_h + L_h) / window,
 * and as the ranks wait on each other the slowest hop holds them all: P =
 * max(avg(T_h) / m, max(T_h + L_h) / window). The last of a rank's steps x m
 * pieces arrives (steps x m - 1) x P + avg(T_h) after the start. The
 * slowest hop's bandwidth, the third bound, is the stream's own rate. A
 * ring with one piece per slice (llama2-7b's FSDP rings from 128 GPUs)
 * runs at these bounds, not at the slowest hop's rate (a ring crossing a
 * spine twice: at the spine hop's T_h / 2, for 64 GPUs in HB domains of 4
 * twice the time of rail-only); with two or more pieces of 512 KiB the
 * bandwidth bound dominates and this one is idle.
 *
 * *busy: the third bound holds even if every hop's piece waited behind
 * the pieces of every channel that leaves its GPU by the same kind of
 * link (share[2 x rank + same domain], ring_start): the hop sends as a
 * stream would and the stream is exact (a TP AllReduce of 48 MiB over 8
 * GPUs in two domains of 4: 0.01% from its pieces). Otherwise the pace
 * is what decides and the stream's bound is an estimate: with fewer than
 * RING_STREAM_MIN_SEQ pieces the ring keeps them (docs/fidelity.md,
 * "Ring streams").
 * RS_OK, *hold and *busy, or the estimate's error (then no streams). */
static int stream_pace(const rs_coll *c, uint32_t ch, const uint32_t *share, rs_time *hold, int *busy)
{
    uint32_t n = c->n, m = c->ch_pieces[ch];
    const uint32_t *ord = c->order + (size_t)ch * n;
    uint64_t piece = rs_coll_wire_bytes(c, ((c->ch_bytes[ch] + n - 1) / n + m - 1) / m);
    uint32_t reduces = 0;
    for (uint32_t s = 0; s < c->steps; s++)
        reduces += (uint32_t)reduce_step(c, s);
    double red = (double)rs_coll_reduce_time(c, piece) * reduces / c->steps;
    double sum = 0, max = 0, shared = 0;
    uint64_t stream = c->steps * ((c->ch_bytes[ch] + n - 1) / n); /* a stream's bytes, at most */
    rs_time bw = 0;
    for (uint32_t pos = 0; pos < n; pos++) {
        rs_time ser, lat, sser, slat;
        uint32_t a = c->gpu[ord[pos]], b = c->gpu[ord[pos + 1 == n ? 0 : pos + 1]];
        int rc = rs_net_hop_estimate(c->net, a, b, piece, &ser, &lat);
        if (rc == RS_OK)
            rc = rs_net_hop_estimate(c->net, a, b, rs_coll_wire_bytes(c, stream), &sser, &slat);
        if (rc != RS_OK)
            return rc;
        if (sser > bw)
            bw = sser;
        lat += c->rr[(size_t)ch * n + pos].hop_extra; /* hop_latencies ran first */
        sum += (double)(ser + lat);
        shared += (double)(ser * share[2 * ord[pos] + same_dom(c, ord[pos], ord[pos + 1 == n ? 0 : pos + 1])] + lat);
        if ((double)(ser + 2 * lat) > max)
            max = (double)(ser + 2 * lat);
    }
    double avg = sum / n + red, chain = avg / m, window = (max + red) / c->o.window;
    *hold = (rs_time)(((double)c->steps * m - 1) * (chain > window ? chain : window) + avg);
    double worst = shared / n + red;
    *busy = bw >= (rs_time)(((double)c->steps * m - 1) * (worst / m > window ? worst / m : window) + worst);
    return RS_OK;
}

static void stream_issue(rs_coll *c, uint32_t ch, uint32_t pos)
{
    uint32_t n = c->n;
    uint64_t bytes = 0;
    for (uint32_t s = 0; s < c->steps; s++)
        bytes += coll_split(c->ch_bytes[ch], n, slice_of(c, pos, s));
    const uint32_t *ord = c->order + (size_t)ch * n;
    uint64_t tag = ((uint64_t)ch << TAG_CH_SHIFT) | ((uint64_t)pos << TAG_POS_SHIFT);
    if (rs_coll_send(c, ord[pos], ord[pos + 1 == n ? 0 : pos + 1], bytes, stream_arrived, tag) == RS_OK)
        rs_coll_member_step(c, ord[pos]);
}

/* Members joining: (channel, position)'s stream goes once every member
 * has joined and its successor posted (issued marks it sent). A stream
 * carries every step: its bytes depend on every member's, which a
 * stream cannot wait for piece by piece, so none goes before the last
 * member is in (a 64 MiB ring AllReduce over 8 GPUs with one member 5 ms
 * late: the members end 6662-7403 us at packet level, 7399-7400 us as
 * streams; streams sent at their own joins ended from 5267 us). */
static void stream_try(rs_coll *c, uint32_t ch, uint32_t pos)
{
    ring_rank *r = &c->rr[(size_t)ch * c->n + pos];
    if (r->issued || c->njoined < c->n || r->credit == RS_COLL_UNPOSTED)
        return;
    r->issued = 1;
    stream_issue(c, ch, pos);
}

/* Ring order of channel ch: see the file comment. */
static void build_order(const rs_coll *c, uint32_t ch, uint32_t *ord)
{
    const coll_groups *g = &c->g;
    uint32_t N = g->ndom, at = 0;
    for (uint32_t d = 0; d < N; d++) {
        const uint32_t *L = g->dom_rank + g->dom_off[d];
        uint32_t k = g->dom_off[d + 1] - g->dom_off[d];
        uint32_t in, out;
        if (N == 1) {
            in = ch;
            out = ch + k - 1;
        } else if (N % 2 == 0) {
            in = d % 2 ? ch + 1 : ch;
            out = d % 2 ? ch : ch + 1;
        } else if (d == 0) {
            in = ch + 2;
            out = ch + 1;
        } else if (d % 2) {
            in = ch + 1;
            out = ch;
        } else if (d == N - 1) {
            in = ch;
            out = ch + 2;
        } else {
            in = ch;
            out = ch + 1;
        }
        in %= k;
        out %= k;
        if (in == out && k > 1)
            out = (in + 1) % k; /* two GPUs and an odd domain count: one hop changes rail */
        ord[at++] = L[in];
        for (uint32_t j = 1; j < k; j++) {
            uint32_t x = (in + j) % k;
            if (x != out)
                ord[at++] = L[x];
        }
        if (k > 1)
            ord[at++] = L[out];
    }
    RS_ASSERT(at == c->n);
}

/* NCCL's per-step latency of each position's hop beyond the network's. */
static void hop_latencies(rs_coll *c)
{
    uint32_t n = c->n;
    if (c->proto == RS_PROTO_AUTO)
        return;
    for (uint32_t ch = 0; ch < c->nch; ch++) {
        const uint32_t *ord = c->order + (size_t)ch * n;
        for (uint32_t pos = 0; pos < n; pos++)
            c->rr[(size_t)ch * n + pos].hop_extra = rs_coll_hop_extra(c, ord[pos], ord[pos + 1 == n ? 0 : pos + 1]);
    }
}

/* How long each position's credit takes back from its successor. */
static void credit_latencies(rs_coll *c)
{
    uint32_t n = c->n;
    for (uint32_t ch = 0; ch < c->nch; ch++) {
        const uint32_t *ord = c->order + (size_t)ch * n;
        for (uint32_t pos = 0; pos < n; pos++)
            c->rr[(size_t)ch * n + pos].credit_lat = rs_coll_credit_time(c, ord[pos + 1 == n ? 0 : pos + 1], ord[pos]);
    }
}

int rs_coll_ring_start(rs_coll *c, rs_err *err)
{
    uint32_t n = c->n;
    uint64_t per_rank = c->bytes / n;
    uint32_t nch = c->chan;
    if (per_rank / RING_MIN_SLICE < nch)
        nch = per_rank / RING_MIN_SLICE > 0 ? (uint32_t)(per_rank / RING_MIN_SLICE) : 1;
    c->nch = nch;
    c->steps = c->op == RS_COLL_ALLREDUCE ? 2 * (n - 1) : n - 1;
    c->order = malloc((size_t)nch * n * sizeof *c->order);
    c->rr = calloc((size_t)nch * n, sizeof *c->rr);
    c->ch_bytes = malloc((size_t)nch * sizeof *c->ch_bytes);
    c->ch_pieces = malloc((size_t)nch * sizeof *c->ch_pieces);
    if (!c->order || !c->rr || !c->ch_bytes || !c->ch_pieces)
        return rs_err_set(err, RS_ENOMEM, "out of memory starting a ring over %u ranks", n);
    uint64_t pending = 0;
    for (uint32_t ch = 0; ch < nch; ch++) {
        c->ch_bytes[ch] = coll_split(c->bytes, nch, ch);
        uint64_t slice = (c->ch_bytes[ch] + n - 1) / n;
        uint64_t m = (slice + c->o.chunk_bytes - 1) / c->o.chunk_bytes;
        if (m == 0)
            m = 1;
        if (m * c->steps > TAG_SEQ_MASK || m > UINT32_MAX / c->steps)
            return rs_err_set(err, RS_ERANGE, "collective: %llu bytes make too many pieces of %llu",
                              (unsigned long long)c->bytes, (unsigned long long)c->o.chunk_bytes);
        c->ch_pieces[ch] = (uint32_t)m;
        pending += (uint64_t)n * c->steps * m;
        build_order(c, ch, c->order + (size_t)ch * n);
    }
    hop_latencies(c);
    /* Flow level, a long pipelined ring: streams (stream_arrived;
     * docs/fidelity.md, "Ring streams"). */
    c->stream = rs_net_streams(c->net);
    c->stream_hold = 0;
    /* With faults a ring of one piece per slice keeps its pieces: a piece
     * a fault holds back (a retransmit timeout) stalls every piece behind
     * it around the ring, which a stream per rank would not. */
    int faults = rs_net_fault_count(c->net) > 0;
    uint32_t *share = c->stream ? calloc(2 * (size_t)n, sizeof *share) : NULL;
    if (c->stream && !share)
        return rs_err_set(err, RS_ENOMEM, "out of memory starting a ring over %u ranks", n);
    for (uint32_t ch = 0; share && ch < nch; ch++) {
        const uint32_t *ord = c->order + (size_t)ch * n;
        for (uint32_t pos = 0; pos < n; pos++)
            share[2 * ord[pos] + same_dom(c, ord[pos], ord[pos + 1 == n ? 0 : pos + 1])]++;
    }
    for (uint32_t ch = 0; ch < nch && c->stream; ch++) {
        rs_time hold = 0;
        int busy = 0;
        if ((c->ch_pieces[ch] == 1 && faults) || stream_pace(c, ch, share, &hold, &busy) != RS_OK ||
            ((uint64_t)c->ch_pieces[ch] * c->steps < RING_STREAM_MIN_SEQ && !busy))
            c->stream = 0;
        else if (hold > c->stream_hold)
            c->stream_hold = hold;
    }
    free(share);
    c->stream_pace = c->stream_hold;
    c->stream_hold += rs_net_now(c->net);
    if (!c->stream || c->member_done) /* pieces' credits, or members' postings */
        credit_latencies(c);
    if (c->stream) {
        pending = (uint64_t)nch * n;
    } else {
        /* Packet level: a piece's serial (its entropy, its captured QPN)
         * is its place in the collective, (channel, position, piece), from
         * a block taken now, not the order in which the ranks happen to
         * send: a run split over processes names it alike. */
        if (!rs_net_streams(c->net) &&
            !(c->ch_serial = rs_coll_serial_blocks(c, nch, (uint64_t)n * c->steps, c->ch_pieces)))
            return rs_err_set(err, RS_ENOMEM, "out of memory starting a ring over %u ranks", n);
        /* A split run: the callbacks that cross processes, named alike
         * in every one (the ring starts from a shared event). */
        for (uint32_t ch = 0; c->probe && ch < nch; ch++)
            for (uint32_t pos = 0; pos < n; pos++)
                c->probe->relayed += (uint32_t)rs_net_relayed(c->net, pos_gpu(c, ch, pos),
                                                                   pos_gpu(c, ch, pos + 1 == n ? 0 : pos + 1));
        if ((c->split || c->probe) && rs_coll_name_cbs(c, ring_arrived, ring_credit) != RS_OK)
            return rs_err_set(err, RS_ENOMEM, "out of memory starting a ring over %u ranks", n);
    }
    c->pending = pending;
    if (c->member_done) {
        /* Members join one by one (rs_coll_ring_join): across HB domains
         * no sender may go before its successor's buffer is posted; inside
         * one the slots are free from the last collective. A member
         * receives and sends steps x pieces on each channel (a stream
         * each way). */
        if (!(c->pos_of = malloc((size_t)nch * n * sizeof *c->pos_of)))
            return rs_err_set(err, RS_ENOMEM, "out of memory starting a ring over %u ranks", n);
        for (uint32_t ch = 0; ch < nch; ch++)
            for (uint32_t pos = 0; pos < n; pos++) {
                uint32_t x = c->order[(size_t)ch * n + pos];
                c->pos_of[(size_t)ch * n + x] = pos;
                c->rr[(size_t)ch * n + pos].credit =
                    coll_hb_pair(c, x, c->order[(size_t)ch * n + (pos + 1 == n ? 0 : pos + 1)]) ? 0
                                                                                          : RS_COLL_UNPOSTED;
                c->mleft[x] += c->stream ? 2 : 2 * (uint64_t)c->steps * c->ch_pieces[ch];
            }
        return RS_OK;
    }
    for (uint32_t ch = 0; ch < nch; ch++)
        for (uint32_t pos = 0; pos < n && c->status == RS_OK; pos++) {
            if (c->stream)
                stream_issue(c, ch, pos);
            else
                try_issue(c, ch, pos);
        }
    return c->status;
}

/* Member x joins: on each channel it posts its buffer to its predecessor
 * (a credit of its rcv_base, 0, a path latency away; over an HB link the
 * slots were free already), takes in what arrived over an HB link before
 * it joined, and sends what it may. */
int rs_coll_ring_join(rs_coll *c, uint32_t x)
{
    uint32_t n = c->n;
    /* Streams: every piece goes round the whole ring, so none of the
     * piece-by-piece pipeline can end before the latest member has joined
     * and the pace has run from there. */
    if (c->stream && rs_net_now(c->net) + c->stream_pace > c->stream_hold)
        c->stream_hold = rs_net_now(c->net) + c->stream_pace;
    credits_now(c);
    for (uint32_t ch = 0; ch < c->nch && c->status == RS_OK; ch++) {
        uint32_t pos = c->pos_of[(size_t)ch * n + x], prev = pos == 0 ? n - 1 : pos - 1;
        ring_rank *r = &c->rr[(size_t)ch * n + pos];
        const ring_rank *rp = &c->rr[(size_t)ch * n + prev];
        if (!coll_hb_pair(c, x, c->order[(size_t)ch * n + prev]))
            rs_net_at_gpu_for(c->net, pos_gpu(c, ch, pos), pos_gpu(c, ch, prev),
                              rs_net_now(c->net) + rp->credit_lat, ring_credit, c, ring_tag(ch, prev, r->rcv_base));
        /* The collective cannot finish here: x has sent nothing yet. */
        for (uint64_t held; (held = r->held) != 0 && c->status == RS_OK;) {
            uint32_t k = (uint32_t)__builtin_ctzll(held);
            r->held &= ~(1ULL << k);
            ring_take(c, ch, prev, k);
        }
        if (!c->stream)
            try_issue(c, ch, pos);
    }
    /* Streams: the last member in, every stream whose successor posted
     * goes (stream_try); the others when their credit comes. */
    for (uint32_t ch = 0; c->stream && c->njoined == n && ch < c->nch; ch++)
        for (uint32_t pos = 0; pos < n && c->status == RS_OK; pos++)
            stream_try(c, ch, pos);
    return c->status;
}

/* -- Broadcast and Reduce: the ring as a chain ------------------------------
 *
 * NCCL runs Broadcast and Reduce on its rings, each channel a chain that
 * starts at the root (Broadcast) or ends there (Reduce). railsim takes
 * each channel's ring order (build_order) turned so that rank 0, the root
 * (nccl-tests' root 0), is position 0 of a Broadcast's chain or position
 * n-1 of a Reduce's. A channel's share is cut into pieces of at most
 * chunk_bytes; position p sends piece k to p+1 once it has it (position 0
 * at once), reduced on a Reduce (bytes / reduce rate), one piece leaving
 * its NIC at a time and at most `window` pieces ahead of what p+1 took
 * in. The window is read at the receiver directly, not by credits: a
 * chain never runs split or with members joining (coll.c refuses both).
 * Done when every piece reached the end of every chain: (n-1) x pieces
 * arrivals per channel. NCCL's per-step latency applies per hop as on a
 * ring (nccl.model=nccl). */

static void chain_arrived(void *ctx, rs_net *net, uint64_t tag);

static void chain_try(rs_coll *c, uint32_t ch, uint32_t pos)
{
    uint32_t n = c->n, m = c->ch_pieces[ch];
    if (pos + 1 >= n)
        return;
    ring_rank *r = &c->rr[(size_t)ch * n + pos];
    const ring_rank *next = &c->rr[(size_t)ch * n + pos + 1];
    const uint32_t *ord = c->order + (size_t)ch * n;
    while (!r->posting && r->issued < m && r->issued - next->rcv_base < c->o.window &&
           (pos == 0 || received(r, r->issued))) {
        uint32_t k = r->issued;
        r->posting = 1;
        if (rs_coll_send_posted(c, ord[pos], ord[pos + 1], coll_split(c->ch_bytes[ch], m, k), chain_arrived,
                                ring_left, ring_tag(ch, pos, k)) != RS_OK)
            return;
        r->issued++;
    }
}

/* Piece k is usable at `pos`: it goes on, and its slot frees the sender. */
static void chain_ready(rs_coll *c, uint32_t ch, uint32_t pos, uint32_t k)
{
    mark_received(&c->rr[(size_t)ch * c->n + pos], k);
    chain_try(c, ch, pos);
    chain_try(c, ch, pos - 1);
    rs_coll_advance(c, 1); /* last: may finish and free c */
}

static void chain_reduced(void *ctx, rs_net *net, uint64_t tag)
{
    (void)net;
    uint32_t ch, pos, k;
    decode(tag, &ch, &pos, &k);
    chain_ready(ctx, ch, pos, k);
}

static void chain_landed(void *ctx, rs_net *net, uint64_t tag)
{
    rs_coll *c = ctx;
    uint32_t ch, pos, k;
    decode(tag, &ch, &pos, &k);
    rs_time d = c->op == RS_COLL_REDUCE ? rs_coll_reduce_time(c, coll_split(c->ch_bytes[ch], c->ch_pieces[ch], k)) : 0;
    if (d) {
        rs_net_at_gpu(net, pos_gpu(c, ch, pos + 1), rs_net_now(net) + d, chain_reduced, c, ring_tag(ch, pos + 1, k));
        return;
    }
    chain_ready(c, ch, pos + 1, k);
}

static void chain_arrived(void *ctx, rs_net *net, uint64_t tag)
{
    if (!hop_delay(ctx, net, tag, chain_landed))
        chain_landed(ctx, net, tag);
}

int rs_coll_chain_start(rs_coll *c, rs_err *err)
{
    uint32_t n = c->n, nch = c->chan;
    if (c->bytes / RING_MIN_SLICE < nch)
        nch = c->bytes / RING_MIN_SLICE > 0 ? (uint32_t)(c->bytes / RING_MIN_SLICE) : 1;
    c->nch = nch;
    c->steps = 1;
    c->order = malloc((size_t)nch * n * sizeof *c->order);
    c->rr = calloc((size_t)nch * n, sizeof *c->rr);
    c->ch_bytes = malloc((size_t)nch * sizeof *c->ch_bytes);
    c->ch_pieces = malloc((size_t)nch * sizeof *c->ch_pieces);
    uint32_t *ring = malloc((size_t)n * sizeof *ring);
    if (!c->order || !c->rr || !c->ch_bytes || !c->ch_pieces || !ring) {
        free(ring);
        return rs_err_set(err, RS_ENOMEM, "out of memory starting a chain over %u ranks", n);
    }
    uint64_t pending = 0;
    for (uint32_t ch = 0; ch < nch; ch++) {
        c->ch_bytes[ch] = coll_split(c->bytes, nch, ch);
        uint64_t m = (c->ch_bytes[ch] + c->o.chunk_bytes - 1) / c->o.chunk_bytes;
        if (m == 0)
            m = 1;
        if (m > TAG_SEQ_MASK)
            return rs_err_set(err, RS_ERANGE, "collective: %llu bytes make too many pieces of %llu",
                              (unsigned long long)c->bytes, (unsigned long long)c->o.chunk_bytes);
        c->ch_pieces[ch] = (uint32_t)m;
        pending += (uint64_t)(n - 1) * m;
        build_order(c, ch, ring);
        uint32_t r0 = 0;
        while (ring[r0] != 0)
            r0++;
        uint32_t first = c->op == RS_COLL_BROADCAST ? r0 : r0 + 1; /* Reduce: the root last */
        for (uint32_t i = 0; i < n; i++)
            c->order[(size_t)ch * n + i] = ring[(first + i) % n];
    }
    free(ring);
    hop_latencies(c);
    c->pending = pending;
    for (uint32_t ch = 0; ch < nch && c->status == RS_OK; ch++)
        for (uint32_t pos = 0; pos + 1 < n && c->status == RS_OK; pos++)
            chain_try(c, ch, pos);
    return c->status;
}

/* -- load estimate (coll.h) -------------------------------------------------- */

void rs_coll_load_steps(rs_coll_load *l, double times, double n, double steps, double slice, double hb,
                        double parts, double channels)
{
    if (parts == 0) {
        rs_coll_opts o;
        rs_coll_opts_default(&o);
        double chunks = ceil(slice / channels / (double)o.chunk_bytes);
        parts = channels * (chunks > 1 ? chunks : 1);
    }
    l->msgs += times * n * steps * parts;
    l->net_msgs += times * n * steps * parts * (1 - hb);
    l->net_bytes += times * n * steps * slice * (1 - hb);
    l->hb_bytes += times * n * steps * slice * hb;
}

void rs_coll_load_add(rs_coll_load *l, double times, rs_coll_op op, double n, double bytes, double ring_hb,
                      double a2a_hb, double per_domain, const rs_net_traits *t)
{
    if (n < 2)
        return;
    rs_coll_opts o;
    rs_coll_opts_default(&o);
    double ch = ring_hb < 1 && per_domain > 1 ? per_domain : ring_hb < 1 ? 1 : 2;
    double steps = op == RS_COLL_ALLREDUCE ? 2 * (n - 1) : n - 1;
    /* A long pipelined ring sends one stream per rank and channel where
     * the network takes streams (RING_STREAM_MIN_SEQ); so, roughly, does
     * one whose slices are half a piece or more, which its slowest hop's
     * bandwidth bounds (stream_pace's *busy: the estimate has no hop
     * times). */
    double pieces = ceil(bytes / n / ch / (double)o.chunk_bytes);
    int stream = t->streams && ((pieces > 1 ? pieces : 1) * steps >= RING_STREAM_MIN_SEQ ||
                                bytes / n / ch >= (double)o.chunk_bytes / 2);
    switch (op) {
    case RS_COLL_ALLREDUCE:
    case RS_COLL_ALLGATHER:
    case RS_COLL_REDUCESCATTER:
        rs_coll_load_steps(l, times, n, steps, bytes / n, ring_hb, 0, ch);
        if (stream) { /* the pieces become streams */
            l->msgs -= times * n * steps * ch * pieces;
            l->msgs += times * n * ch;
            l->net_msgs -= times * n * steps * ch * pieces * (1 - ring_hb);
            l->net_msgs += times * n * ch * (1 - ring_hb);
        }
        break;
    case RS_COLL_ALLTOALL:
        /* A block per peer: one message, relayed (PXN) as a pipeline of
         * chunks, or as one transfer where the network relays whole. */
        rs_coll_load_steps(l, times, n, n - 1, bytes / n, a2a_hb, t->whole_relays ? 1 : 0, 1);
        break;
    case RS_COLL_BROADCAST:
    case RS_COLL_REDUCE: /* every hop of the chain carries the buffer */
        rs_coll_load_steps(l, times, n - 1, 1, bytes, ring_hb, 0, ch);
        break;
    default: rs_coll_load_steps(l, times, 1, 1, bytes, ring_hb, 0, 1); break;
    }
}
