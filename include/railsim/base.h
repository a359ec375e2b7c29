/*
 * base.h - the few definitions every railsim module shares: picosecond time,
 * error codes, the caller-owned error message buffer, and the invariant
 * macros. Everything here is plain data or inline; nothing allocates.
 *
 * Time is an unsigned 64-bit count of picoseconds (about 213 days of
 * simulated time). Scheduling arithmetic is integer only; doubles appear
 * only when converting user units in and printing results out.
 */
#ifndef RS_BASE_H
#define RS_BASE_H

#include <stdint.h>
#include <stddef.h>
#include <stdarg.h>

#include "api.h"

RS_BEGIN_DECLS

typedef uint64_t rs_time;

#define RS_TIME_MAX UINT64_MAX
#define RS_PS_PER_NS 1000ULL
#define RS_PS_PER_US 1000000ULL
#define RS_PS_PER_MS 1000000000ULL
#define RS_PS_PER_S  1000000000000ULL

/* Error codes: functions that can fail return RS_OK or one of these. */
enum {
    RS_OK = 0,
    RS_EINVAL = -1,    /* invalid argument or user input */
    RS_ENOMEM = -2,    /* out of memory */
    RS_EIO = -3,       /* file could not be read or written */
    RS_EFORMAT = -4,   /* file content malformed */
    RS_ERANGE = -5,    /* number out of the representable or allowed range */
    RS_EUNREACH = -6,  /* a destination no path reaches */
    RS_EINTERNAL = -7, /* broken invariant survived in a release build */
    RS_EINCOMPLETE = -8, /* the run ended with work left undone */
    RS_EINTR = -9       /* the run was interrupted (a signal) */
};

/* A caller-owned buffer for one sentence saying what went wrong. */
typedef struct rs_err {
    int code;
    char msg[512];
} rs_err;

/* Name of an error code ("invalid input", ...). Never NULL. */
RS_API const char *rs_strerror(int code);

/* Fill err (which may be NULL) with code and a printf-style sentence;
 * returns code so callers can write `return rs_err_set(err, ...)`. */
RS_API int rs_err_set(rs_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

RS_API void rs_err_clear(rs_err *err);

/* Invariant checks for our own bugs, never for user input. RS_ASSERT
 * aborts with the location (kept on in RelWithDebInfo; off with NDEBUG).
 * RS_NEVER(cond) asserts in debug builds and evaluates to cond in release,
 * for "impossible, but survive it": if (RS_NEVER(x)) return RS_EINTERNAL; */
RS_API void rs_assert_fail(const char *expr, const char *file, int line)
    __attribute__((noreturn));

#ifdef NDEBUG
#define RS_ASSERT(x) ((void)0)
#define RS_NEVER(x) (!!(x))
#else
#define RS_ASSERT(x) ((x) ? (void)0 : rs_assert_fail(#x, __FILE__, __LINE__))
#define RS_NEVER(x) ((x) ? (rs_assert_fail(#x, __FILE__, __LINE__), 1) : 0)
#endif

#define RS_LIKELY(x) __builtin_expect(!!(x), 1)
#define RS_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Serialization time of `bytes` at `rate_bps` bits per second, rounded up
 * to the next picosecond (the one rounding rule for all transmissions: a
 * frame is never shorter on the wire than its bits). 400 Gb/s gives exactly
 * 20 ps per byte; 3.6 Tb/s (450 GB/s NVLink) is 2.22.. ps per byte and
 * rounds up per transfer. 128-bit intermediate: no overflow for any
 * realistic size. rate_bps must be > 0 (checked when links are built). */
static inline rs_time rs_ser_time(uint64_t bytes, uint64_t rate_bps)
{
    unsigned __int128 bits_ps = (unsigned __int128)bytes * 8u * RS_PS_PER_S;
    return (rs_time)((bits_ps + rate_bps - 1) / rate_bps);
}

/* User units to picoseconds, rounded to the nearest picosecond. Fail with
 * RS_ERANGE for negative, NaN or too-large values (past RS_TIME_MAX/2, so
 * that adding two user durations cannot wrap). */
RS_API int rs_time_from_ns(double ns, rs_time *out);
RS_API int rs_time_from_us(double us, rs_time *out);

/* a + b, saturating at RS_TIME_MAX instead of wrapping. */
static inline rs_time rs_time_add_sat(rs_time a, rs_time b)
{
    rs_time s = a + b;
    return s < a ? RS_TIME_MAX : s;
}

/* Picoseconds to floating units, for printing only. */
static inline double rs_time_to_us(rs_time t) { return (double)t / 1e6; }
static inline double rs_time_to_s(rs_time t) { return (double)t / 1e12; }

RS_END_DECLS

#endif
