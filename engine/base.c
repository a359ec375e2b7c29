/*
 * base.c - error names, error message formatting, unit conversion.
 */
#include "base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *rs_strerror(int code)
{
    switch (code) {
    case RS_OK: return "success";
    case RS_EINVAL: return "invalid input";
    case RS_ENOMEM: return "out of memory";
    case RS_EIO: return "input/output error";
    case RS_EFORMAT: return "malformed file";
    case RS_ERANGE: return "value out of range";
    case RS_EUNREACH: return "destination unreachable";
    case RS_EINTERNAL: return "internal error";
    case RS_EINCOMPLETE: return "run incomplete";
    case RS_EINTR: return "interrupted";
    default: return "unknown error";
    }
}

int rs_err_set(rs_err *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

void rs_err_clear(rs_err *err)
{
    if (err) {
        err->code = RS_OK;
        err->msg[0] = '\0';
    }
}

void rs_assert_fail(const char *expr, const char *file, int line)
{
    fprintf(stderr, "railsim: internal invariant failed: %s (%s:%d)\n",
            expr, file, line);
    abort();
}

static int from_units(double v, double ps_per_unit, rs_time *out)
{
    if (!(v >= 0.0)) /* also catches NaN */
        return RS_ERANGE;
    double ps = v * ps_per_unit;
    /* Below 2^63, so two results add without wrapping; (double)(MAX / 2)
     * would round up to exactly 2^63 and let it through. */
    if (!(ps < 0x1p63))
        return RS_ERANGE;
    *out = (rs_time)llround(ps);
    return RS_OK;
}

int rs_time_from_ns(double ns, rs_time *out) { return from_units(ns, 1e3, out); }
int rs_time_from_us(double us, rs_time *out) { return from_units(us, 1e6, out); }
