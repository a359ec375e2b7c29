/*
 * fmt.c - human-facing number formats (fmt.h). The unit rules live here
 * once; callers only choose which figure to print.
 */
#include "fmt.h"

#include <math.h>
#include <stdio.h>

/* A family of units: unit i is base * step^i; the largest at most |v| is
 * picked (the first below that). The first unit prints with first_prec
 * decimals, the others with prec. */
typedef struct scale {
    const char *const *name;
    int n;
    double base, step;
    int first_prec, prec;
} scale;

static const char *const time_names[] = { "ns", "us", "ms", "s" };
static const char *const byte_names[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
static const char *const power_names[] = { "W", "kW", "MW" };
static const scale TIME = { time_names, 4, 1e3, 1e3, 3, 3 };
static const scale BYTES = { byte_names, 6, 1, 1024, 0, 2 };
static const scale POWER = { power_names, 3, 1, 1e3, 0, 2 };

static int unit_of(const scale *sc, double v)
{
    double a = fabs(v) / sc->base;
    int u = 0;
    while (a >= sc->step && u < sc->n - 1) {
        a /= sc->step;
        u++;
    }
    return u;
}

static const char *format_as(char *buf, size_t n, const scale *sc, double v, int u)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.*f %s", u ? sc->prec : sc->first_prec, v / (sc->base * pow(sc->step, u)), sc->name[u]);
    return buf;
}

static const char *format_like(char *buf, size_t n, const scale *sc, double v, double ref)
{
    return format_as(buf, n, sc, v, unit_of(sc, isnan(ref) ? v : ref));
}

const char *rs_fmt_time(char *buf, size_t n, double ps)
{
    if (ps == 0) { /* no unit fits nothing better than another */
        snprintf(buf, n, "0 s");
        return buf;
    }
    return format_like(buf, n, &TIME, ps, ps);
}

const char *rs_fmt_time_like(char *buf, size_t n, double ps, double ref_ps)
{
    return format_like(buf, n, &TIME, ps, ref_ps);
}

const char *rs_fmt_bytes(char *buf, size_t n, double bytes)
{
    return format_like(buf, n, &BYTES, bytes, bytes);
}

const char *rs_fmt_bytes_like(char *buf, size_t n, double bytes, double ref_bytes)
{
    return format_like(buf, n, &BYTES, bytes, ref_bytes);
}

const char *rs_fmt_power(char *buf, size_t n, double w)
{
    return format_like(buf, n, &POWER, w, w);
}

const char *rs_fmt_power_like(char *buf, size_t n, double w, double ref_w)
{
    return format_like(buf, n, &POWER, w, ref_w);
}

const char *rs_fmt_count(char *buf, size_t n, double v)
{
    if (isnan(v) || n == 0) {
        if (n)
            snprintf(buf, n, "-");
        return buf;
    }
    char tmp[40];
    int len = snprintf(tmp, sizeof tmp, "%.0f", fabs(v) < 1e30 ? fabs(v) : 1e30);
    size_t o = 0;
    if (v <= -0.5 && o + 1 < n)
        buf[o++] = '-';
    for (int i = 0; i < len && o + 1 < n; i++) {
        if (i > 0 && (len - i) % 3 == 0) {
            if (o + 2 >= n)
                break;
            buf[o++] = ',';
        }
        buf[o++] = tmp[i];
    }
    buf[o] = '\0';
    return buf;
}

const char *rs_fmt_usd(char *buf, size_t n, double usd)
{
    if (isnan(usd)) {
        snprintf(buf, n, "-");
        return buf;
    }
    char g[40];
    rs_fmt_count(g, sizeof g, fabs(usd));
    snprintf(buf, n, "%s$%s", usd <= -0.5 ? "-" : "", g);
    return buf;
}

const char *rs_fmt_wait(char *buf, size_t n, double s)
{
    if (isnan(s) || s < 0 || s > 1e9) {
        snprintf(buf, n, "-");
        return buf;
    }
    unsigned long long t = (unsigned long long)llround(s);
    if (t < 60)
        snprintf(buf, n, "%llu s", t);
    else if (t < 3600)
        snprintf(buf, n, "%llu min %02llu s", t / 60, t % 60);
    else
        snprintf(buf, n, "%llu h %02llu min", t / 3600, t / 60 % 60);
    return buf;
}

const char *rs_fmt_progress(char *buf, size_t n, double sim_ps, uint64_t events, double wall_s, double frac)
{
    char t[RS_FMT_LEN], eta[RS_FMT_LEN];
    double rate = wall_s > 0 ? (double)events / wall_s / 1e6 : 0.0;
    rs_fmt_time(t, sizeof t, sim_ps);
    if (frac >= 0) {
        if (frac > 1)
            frac = 1;
        if (frac > 0)
            rs_fmt_wait(eta, sizeof eta, wall_s * (1 - frac) / frac);
        else
            snprintf(eta, sizeof eta, "-");
        snprintf(buf, n, "  %5.1f %%, ETA %s; simulated %s, %llu events, %.2f M events/s", 100.0 * frac, eta, t,
                 (unsigned long long)events, rate);
    } else {
        snprintf(buf, n, "  simulated %s, %llu events, %.2f M events/s", t, (unsigned long long)events, rate);
    }
    return buf;
}
