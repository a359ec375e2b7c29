/*
 * fmt.h - numbers a person reads: times, sizes, money, power and the
 * progress line, formatted one way for every human-facing print (run,
 * compare, cost, trace info, validate, faults sweep, report).
 *
 * The conventions (docs/cli.md, "Units"): a time is printed in the unit
 * that fits, ns, us, ms or s, with three decimals ("6.112 s"); a size in
 * binary units, B, KiB (1024 B), MiB, GiB, TiB, PiB, with two decimals
 * ("18.53 TiB"); rates stay decimal as networking and nccl-tests quote
 * them (Gb/s = 10^9 bit/s, GB/s = 10^9 B/s); money in whole dollars with
 * thousands separators ("$1,234,567"); power in W, kW or MW. Machine
 * outputs (summary.json, compare.json, CSV) never go through here: they
 * keep exact integers in their documented units.
 *
 * Every function writes into the caller's buffer (RS_FMT_LEN is always
 * enough), returns it, and prints "-" for NaN (a figure that is absent).
 * No state, no allocation: safe from any layer that links rs_analysis.
 */
#ifndef RS_FMT_H
#define RS_FMT_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"

RS_BEGIN_DECLS

#define RS_FMT_LEN 48

/* ps -> "950.000 ns", "12.345 us", "1.500 ms", "6.112 s" (ns below 1 us;
 * exactly 0 is "0 s"). */
RS_API const char *rs_fmt_time(char *buf, size_t n, double ps);
/* ps in the unit rs_fmt_time would pick for ref_ps: the cells of one
 * table row share a unit, so they compare at a glance. */
RS_API const char *rs_fmt_time_like(char *buf, size_t n, double ps, double ref_ps);

/* bytes -> "512 B", "1.50 KiB", "18.53 TiB" (binary units). */
RS_API const char *rs_fmt_bytes(char *buf, size_t n, double bytes);
RS_API const char *rs_fmt_bytes_like(char *buf, size_t n, double bytes, double ref_bytes);

/* 1234567 -> "1,234,567" (negative values keep their sign). */
RS_API const char *rs_fmt_count(char *buf, size_t n, double v);
/* US dollars, rounded to the dollar: "$1,234,567". */
RS_API const char *rs_fmt_usd(char *buf, size_t n, double usd);
/* watts -> "950 W", "12.35 kW", "1.23 MW". */
RS_API const char *rs_fmt_power(char *buf, size_t n, double w);
RS_API const char *rs_fmt_power_like(char *buf, size_t n, double w, double ref_w);

/* Wall-clock seconds as a duration a person waits: "42 s", "3 min 05 s",
 * "2 h 07 min". */
RS_API const char *rs_fmt_wait(char *buf, size_t n, double s);

/* The progress line (without "\r"): with 0 <= frac <= 1 known,
 * "  37.5 %, ETA 1 min 02 s; simulated 12.345 ms, 1234567 events,
 * 3.21 M events/s"; with frac < 0 (the end is not known: synthetic
 * traffic) only the part after the ';'. The ETA is wall-clock:
 * wall_s * (1 - frac) / frac, shown once frac > 0. */
RS_API const char *rs_fmt_progress(char *buf, size_t n, double sim_ps, uint64_t events, double wall_s, double frac);

RS_END_DECLS

#endif
