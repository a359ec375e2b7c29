/*
 * sack.c - selective repeat for the RoCE transport
 * (transport.recovery=selective), as IRN (Mittal et al., "Revisiting
 * Network Support for RDMA", SIGCOMM 2018) and NICs with out-of-order
 * placement do it.
 *
 * Receiver: the expected PSN advances rcv_nxt (and past every PSN already
 * placed); a PSN ahead of it, within sack_window, is placed into a bitmap
 * and answered at once with a NAK (PSN sequence error, BTH PSN = rcv_nxt:
 * everything before it has arrived) that carries the PSN that arrived (a
 * 4-byte SACK extension after the AETH, docs/pcap.md). ACKs are coalesced
 * as with go-back-N, except that one goes out at once when a hole fills.
 *
 * Sender: at most sack_window PSNs past snd_una are in flight (IRN's
 * BDP cap; it also keeps every PSN inside the receiver's bitmap). SACKed
 * PSNs go into a scoreboard; an unacknowledged PSN is lost once dupthresh
 * PSNs above it were SACKed (RFC 6675's DupThresh; IRN resends on the
 * first, dupthresh = 1), and lost PSNs are resent, lowest first, each once,
 * ahead of new data, in passes from snd_una. A pass's resends count as
 * lost again once dupthresh PSNs first sent after the pass's first resend
 * were SACKed (the idea of TCP's RACK, RFC 8985, with PSN order standing
 * for send order): then a new pass resends what is still missing (some of
 * it may only be late). A retransmit timeout makes every unacknowledged
 * PSN sent so far lost and starts a pass from snd_una.
 *
 * The two bitmaps are rings of sack_window bits indexed by PSN mod the
 * window, allocated from a pool the first time the flow sees something
 * out of order (never, for a flow that does not) and returned when the
 * sender is done. The receiver's covers [rcv_nxt, rcv_nxt + W), the
 * sender's [snd_una, snd_una + W); a bit is cleared when its PSN leaves
 * the range, so it is clear when the PSN W higher reuses it.
 */
#include "netint.h"

#include <string.h>

static inline uint64_t *rx_bits(const rs_flow *f) { return f->sack; }
static inline uint64_t *tx_bits(const rs_flow *f, uint32_t w) { return f->sack + w / 64; }

static inline int bit_get(const uint64_t *b, uint32_t w, uint32_t psn)
{
    uint32_t i = psn & (w - 1);
    return (int)((b[i >> 6] >> (i & 63)) & 1);
}

static inline void bit_set(uint64_t *b, uint32_t w, uint32_t psn)
{
    uint32_t i = psn & (w - 1);
    b[i >> 6] |= (uint64_t)1 << (i & 63);
}

static inline void bit_clear(uint64_t *b, uint32_t w, uint32_t psn)
{
    uint32_t i = psn & (w - 1);
    b[i >> 6] &= ~((uint64_t)1 << (i & 63));
}

static int bitmaps(rs_net *net, rs_flow *f)
{
    if (f->sack)
        return RS_OK;
    f->sack = rs_pool_get(&net->sacks);
    if (RS_UNLIKELY(!f->sack)) {
        rs_sim_stop(net->sim, RS_ENOMEM);
        return RS_ENOMEM;
    }
    memset(f->sack, 0, net->cfg.sack_window / 4); /* 2 x W bits */
    return RS_OK;
}

void rs_sack_release(rs_net *net, rs_flow *f)
{
    if (f->sack) {
        rs_pool_put(&net->sacks, f->sack);
        f->sack = NULL;
    }
}

/* -- receiver ------------------------------------------------------------- */

int rs_sack_data(rs_net *net, rs_flow *f, uint32_t fid, const rs_pkt *pkt)
{
    uint32_t w = net->cfg.sack_window, psn = pkt->psn;
    if (psn == f->rcv_nxt) {
        net->st.goodput_bytes += pkt->payload;
        f->rcv_nxt++;
        int filled = 0;
        if (f->sack) {
            uint64_t *rx = rx_bits(f);
            while (f->rcv_nxt < f->npkts && bit_get(rx, w, f->rcv_nxt)) {
                bit_clear(rx, w, f->rcv_nxt);
                f->rcv_nxt++;
                filled = 1;
            }
        }
        if (filled || ++f->since_ack >= net->cfg.ack_every || (pkt->flags & RS_PF_ACKREQ) ||
            f->rcv_nxt == f->npkts) {
            f->since_ack = 0;
            rs_nic_send_ctrl(net, fid, RS_PKT_ACK, f->rcv_nxt - 1, 0, 0);
        }
        if (f->rcv_nxt == f->npkts && !f->rx_done)
            rs_nic_rx_complete(net, f, fid);
        return 0;
    }
    if (psn > f->rcv_nxt) {
        /* The sender keeps every PSN below snd_una + W <= rcv_nxt + W. */
        if (RS_NEVER(psn - f->rcv_nxt >= w) || bitmaps(net, f) != RS_OK)
            return 0;
        uint64_t *rx = rx_bits(f);
        if (!bit_get(rx, w, psn)) {
            bit_set(rx, w, psn);
            net->st.goodput_bytes += pkt->payload; /* placed out of order */
        }
        rs_nic_send_ctrl(net, fid, RS_PKT_NAK, f->rcv_nxt, RS_PF_SACK, psn);
        return 0;
    }
    if (RS_UNLIKELY(f->gone))
        return 1; /* rcv_nxt = RS_NONE: every packet of an abandoned flow lands here */
    rs_nic_rx_duplicate(net, f, fid, pkt);
    return 0;
}

/* -- sender --------------------------------------------------------------- */

/* A SACK of PSN s (in [snd_una, snd_nxt), scoreboard present): the PSNs
 * below the dupthresh-th highest SACKed one are lost. Counting down from s
 * finds it when s is the highest (the usual case); a late SACK below the
 * highest can only find a lower one, which raises nothing. The scan stops
 * at the current lost_end, so over a flow's life it reads each PSN about
 * once per SACK above it within the reordering distance. */
static void note_sack(rs_flow *f, uint32_t w, uint32_t k, uint32_t s)
{
    const uint64_t *tx = tx_bits(f, w);
    uint32_t lo = f->lost_end > f->snd_una ? f->lost_end : f->snd_una;
    uint32_t seen = 0;
    for (uint32_t p = s + 1; p-- > lo;)
        if (bit_get(tx, w, p) && ++seen == k) {
            f->lost_end = p;
            return;
        }
}

void rs_sack_ack(rs_net *net, rs_flow *f, uint32_t fid, const rs_pkt *pkt)
{
    uint32_t w = net->cfg.sack_window;
    /* ACK psn: everything up to psn arrived. NAK psn: everything before it. */
    uint32_t una = pkt->type == RS_PKT_ACK ? pkt->psn + 1 : pkt->psn;
    if (una > f->snd_una) {
        if (f->sack) {
            uint64_t *tx = tx_bits(f, w);
            for (uint32_t p = f->snd_una; p < una; p++)
                bit_clear(tx, w, p);
        }
        f->snd_una = una;
        f->last_progress = rs_sim_now(net->sim);
        if (f->rtx_mark != RS_NONE && una >= f->rtx_nxt)
            f->rtx_mark = RS_NONE; /* every PSN the pass resent has arrived: the pass is over */
    }
    if (f->snd_una >= f->npkts) {
        f->tx_done = 1;
        rs_sack_release(net, f);
        if (RS_UNLIKELY(f->chunk != RS_NONE))
            rs_msg_flow_acked(net, fid); /* a relay slot is free */
        return;
    }
    if ((pkt->flags & RS_PF_SACK) && pkt->sack >= f->snd_una && pkt->sack < f->snd_nxt &&
        bitmaps(net, f) == RS_OK) {
        uint64_t *tx = tx_bits(f, w);
        if (!bit_get(tx, w, pkt->sack)) {
            bit_set(tx, w, pkt->sack);
            note_sack(f, w, net->cfg.dupthresh, pkt->sack);
            if (f->rtx_mark != RS_NONE && pkt->sack >= f->rtx_mark + net->cfg.dupthresh - 1) {
                /* dupthresh PSNs sent after the pass's first resend
                 * arrived ahead of it: what is still missing was lost again. */
                f->rtx_mark = RS_NONE;
                f->rtx_nxt = f->snd_una;
            }
        }
    }
    rs_flow_activate(net, fid); /* the window opened, or a PSN is now lost */
}

uint32_t rs_sack_next(rs_flow *f, uint32_t w)
{
    uint32_t end = f->lost_end < f->snd_nxt ? f->lost_end : f->snd_nxt;
    if (f->rtx_nxt < f->snd_una)
        f->rtx_nxt = f->snd_una;
    const uint64_t *tx = f->sack ? tx_bits(f, w) : NULL;
    for (; f->rtx_nxt < end; f->rtx_nxt++)
        if (!tx || !bit_get(tx, w, f->rtx_nxt))
            return f->rtx_nxt;
    if (f->snd_nxt < f->npkts && f->snd_nxt - f->snd_una < w)
        return f->snd_nxt;
    return RS_NONE;
}

void rs_sack_sent(rs_flow *f, uint32_t psn)
{
    if (psn == f->snd_nxt) {
        f->snd_nxt++;
    } else {
        f->rtx_nxt = psn + 1;
        if (f->rtx_mark == RS_NONE)
            f->rtx_mark = f->snd_nxt; /* the pass's first resend */
    }
}

void rs_sack_timeout(rs_flow *f)
{
    f->lost_end = f->snd_nxt;
    f->rtx_nxt = f->snd_una;
    f->rtx_mark = RS_NONE;
}
