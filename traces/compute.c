/*
 * compute.c - the GPU compute model (compute.h): a compute op's end under
 * the straggler windows of the network's fault schedule.
 */
#include "compute.h"

#include "fault.h"

/* Slowdown factors (millionths) saturate at F_CAP = 1e6 x 2^64: one that
 * large stretches 1 ps of work past any time and does less than 1 ps of
 * work in any window, as would the larger factor it stands for, so no
 * result changes; below it, the products fit in 128 bits. */
#define F_CAP ((unsigned __int128)1000000 << 64)

/* The slowdown factor (millionths, at most F_CAP) on gpu at time t, and
 * the next time after t at which it changes (RS_TIME_MAX: never).
 * Overlapping windows multiply, in schedule order. O(stragglers). */
static unsigned __int128 strag_at(const rs_net *net, uint32_t n, uint32_t gpu, rs_time t, rs_time *next)
{
    unsigned __int128 f = 1000000;
    *next = RS_TIME_MAX;
    for (uint32_t i = 0; i < n; i++) {
        rs_net_straggler s;
        if (rs_net_straggler_get(net, i, &s) != RS_OK || s.gpu != gpu)
            continue;
        if (s.start > t && s.start < *next)
            *next = s.start;
        if (s.end > t && s.end < *next)
            *next = s.end;
        if (s.start <= t && t < s.end) {
            f = f * s.factor_ppm / 1000000; /* F_CAP x 1e9 < 2^128 */
            if (f > F_CAP)
                f = F_CAP;
        }
    }
    return f;
}

rs_time rs_compute_end(const rs_net *net, uint32_t gpu, rs_time start, rs_time duration)
{
    uint32_t n = rs_net_straggler_count(net);
    if (n == 0)
        return rs_time_add_sat(start, duration);
    /* Integrate: `left` ps of nominal work, done at 1e6/f ps per ps. Each
     * pass returns or moves t to the next window edge, and past the last
     * edge (next == RS_TIME_MAX) it returns: it ends by construction. */
    const unsigned __int128 all = ~(unsigned __int128)0;
    rs_time t = start, left = duration, next;
    for (;;) {
        unsigned __int128 f = strag_at(net, n, gpu, t, &next);
        /* left x f / 1e6 rounded up; past 2^128 it is past any window. */
        unsigned __int128 need = left && f > (all - 999999) / left ? all
                                                                   : ((unsigned __int128)left * f + 999999) / 1000000;
        if (need <= (unsigned __int128)(next - t))
            return t + (rs_time)need;
        if (next == RS_TIME_MAX)
            return RS_TIME_MAX; /* ends past the last representable time: saturate */
        rs_time done = (rs_time)((unsigned __int128)(next - t) * 1000000 / f);
        left -= done < left ? done : left;
        t = next;
    }
}

