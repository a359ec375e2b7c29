/*
 * clos.c - the shape of a folded-Clos plane of any number of tiers
 * (clos.h): tier count, blocks, widths and cables, in closed form.
 */
#include "clos.h"

#include <math.h>
#include <string.h>

int rs_clos_check_shape(uint32_t gpus, uint32_t hb_size, uint32_t radix, rs_err *err)
{
    if (gpus == 0)
        return rs_err_set(err, RS_EINVAL, "topology.gpus: expected at least 1 GPU");
    if (hb_size == 0 || gpus % hb_size != 0)
        return rs_err_set(err, RS_EINVAL,
                          "topology.gpus: %u GPUs do not fill HB domains of topology.hb_size=%u; "
                          "expected a multiple of %u", gpus, hb_size, hb_size);
    if (hb_size > 65535)
        return rs_err_set(err, RS_EINVAL, "topology.hb_size: expected at most 65535 GPUs per HB domain");
    if (radix < 2 || radix % 2 != 0 || radix > 65536)
        return rs_err_set(err, RS_EINVAL,
                          "topology.radix: expected an even number of switch ports from 2 to 65536, got %u", radix);
    return RS_OK;
}

int rs_clos_check_rate(const char *key, double gbps, rs_err *err)
{
    if (!(gbps > 0.0 && gbps <= 1e6) || llround(gbps * 1e9) == 0)
        return rs_err_set(err, RS_EINVAL, "%s: expected a rate above 0 and at most 1000000 Gb/s", key);
    return RS_OK;
}

int rs_clos_check_oversubscription(double ratio, rs_err *err)
{
    if (!(ratio >= 1.0 && ratio <= 64.0))
        return rs_err_set(err, RS_EINVAL, "topology.oversubscription: expected a ratio from 1 to 64");
    return RS_OK;
}

uint64_t rs_clos_divisor_at_least(uint64_t n, uint64_t lo)
{
    for (uint64_t d = lo ? lo : 1; d < n; d++)
        if (n % d == 0)
            return d;
    return n;
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

int rs_clos_shape(uint64_t nl, uint32_t R, uint32_t up, const char *where, rs_clos *c, rs_err *err)
{
    memset(c, 0, sizeof *c);
    uint64_t half = R / 2;
    /* Tiers: each tier between the leaves and the top groups R/2 blocks;
     * the top joins up to R. */
    uint32_t T = 1;
    if (nl > 1) {
        T = 2;
        for (uint64_t b = nl; b > R; b = ceil_div(b, half)) {
            if (half < 2 || T == RS_CLOS_MAX_TIERS)
                return rs_err_set(err, RS_EINVAL,
                                  "topology.radix: %u-port switches cannot join %llu leaf switches%s (%s); "
                                  "expected a larger radix or fewer GPUs", R, (unsigned long long)nl,
                                  where ? where : "",
                                  half < 2 ? "2-port switches join at most 2, in any number of tiers"
                                           : "not in 32 tiers");
            T++;
        }
    }
    c->tiers = T;
    c->blocks[0] = nl;
    c->width[0] = 1;
    c->switches[0] = nl;
    for (uint32_t i = 0; i + 1 < T; i++) {
        c->uplinks[i] = i == 0 ? up : half;
        int top = i + 2 == T;
        /* The top joins every block below it; other tiers R/2 each. */
        c->children[i] = top ? c->blocks[i] : half;
        c->blocks[i + 1] = top ? 1 : ceil_div(c->blocks[i], half);
        c->fan[i] = top ? rs_clos_divisor_at_least(c->uplinks[i], ceil_div(c->blocks[i] * c->uplinks[i], R))
                        : c->uplinks[i];
        c->par[i] = c->uplinks[i] / c->fan[i];
        c->width[i + 1] = c->width[i] * c->fan[i];
        c->switches[i + 1] = c->blocks[i + 1] * c->width[i + 1];
        c->cables += c->blocks[i] * c->width[i] * c->uplinks[i];
    }
    return RS_OK;
}

int rs_dfly_shape(uint32_t gpus, uint32_t radix, uint32_t p, uint32_t a, uint32_t unit, rs_dfly *d, rs_err *err)
{
    memset(d, 0, sizeof *d);
    if (p == 0)
        p = radix / 4 ? radix / 4 : 1;
    if (a == 0)
        a = 2 * p;
    if (unit == 0)
        unit = 1;
    if (p >= radix || (uint64_t)p + a - 1 > radix)
        return rs_err_set(err, RS_EINVAL, "topology.df_hosts and topology.df_group: %u NIC ports and %u links "
                          "inside a group need more than the %u ports of a switch (topology.radix)", p, a - 1, radix);
    if (a % unit)
        return rs_err_set(err, RS_EINVAL, "topology.df_attach: spread puts an HB domain's %u NICs on as many "
                          "switches of one group; expected topology.df_group (%u) a multiple of %u", unit, a, unit);
    uint64_t per = (uint64_t)p * unit; /* NICs per block */
    uint64_t S = ((uint64_t)gpus + per - 1) / per * unit, G = (S + a - 1) / a;
    uint64_t h = radix - p - (a - 1);
    if (G > 1 && h < 1)
        return rs_err_set(err, RS_EINVAL, "topology.df_group: %u switches per group leave no global link on a "
                          "switch of %u ports with %u NIC ports; expected at most %u", a, radix, p, radix - p);
    if (G > 1 && (uint64_t)a * h < G - 1)
        return rs_err_set(err, RS_EINVAL, "topology.gpus: %u GPUs need %llu dragonfly groups, but a group of %u "
                          "switches with %llu global links each reaches at most %llu others; expected at most %llu "
                          "GPUs (or a larger topology.radix)", gpus, (unsigned long long)G, a, (unsigned long long)h,
                          (unsigned long long)a * h, ((unsigned long long)a * h + 1) * a * p);
    d->p = p;
    d->a = a;
    d->unit = unit;
    d->h = (uint32_t)h;
    d->groups = (uint32_t)G;
    d->per_pair = G > 1 ? (uint32_t)((uint64_t)a * h / (G - 1)) : 0;
    d->switches = G * a;
    d->local_cables = G * ((uint64_t)a * (a - 1) / 2);
    d->global_cables = G * (G - 1) / 2 * d->per_pair;
    return RS_OK;
}
