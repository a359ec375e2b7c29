/*
 * keys.c - the JSON key-table reader (keys.h). Tables are const and owned
 * by their callers; nothing here keeps a pointer past a call. Values are
 * stored with memcpy at the row's offset, sized by the row, so a table
 * row cannot write outside its field.
 */
#include "keys.h"
#include "array.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Unsigned keys up to INT64_MAX travel as JSON integers. */
_Static_assert(sizeof(json_int_t) == sizeof(int64_t), "64-bit JSON integers");

const char *const rs_key_bool_names[] = { "false", "true", NULL };

/* ---- names ------------------------------------------------------------- */

size_t rs_edit_distance(const char *a, const char *b, size_t cap)
{
    enum { MAXLEN = 63 };
    size_t la = strlen(a), lb = strlen(b);
    if (la > MAXLEN || lb > MAXLEN || (la > lb ? la - lb : lb - la) > cap)
        return cap + 1;
    size_t d[MAXLEN + 1][MAXLEN + 1];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t best = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[la][lb] > cap ? cap + 1 : d[la][lb];
}

const char *rs_printable(const char *s, char *out, size_t size)
{
    size_t n = 0;
    for (; s[n] && n + 1 < size; n++)
        out[n] = (unsigned char)s[n] < 0x20 || s[n] == 0x7f ? '?' : s[n];
    out[n] = '\0';
    return out;
}

/* ---- field access ------------------------------------------------------ */

static uint64_t get_uint(const void *base, const rs_key *k)
{
    const char *p = (const char *)base + k->off;
    if (k->size == sizeof(uint32_t)) {
        uint32_t v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void put_uint(void *base, const rs_key *k, uint64_t v)
{
    char *p = (char *)base + k->off;
    if (k->size == sizeof(uint32_t)) {
        uint32_t w = (uint32_t)v; /* range-checked: umax fits */
        memcpy(p, &w, sizeof w);
    } else {
        memcpy(p, &v, sizeof v);
    }
}

static double get_double(const void *base, const rs_key *k)
{
    double v;
    memcpy(&v, (const char *)base + k->off, sizeof v);
    return v;
}

static void put_double(void *base, const rs_key *k, double v)
{
    memcpy((char *)base + k->off, &v, sizeof v);
}

static int get_enum(const void *base, const rs_key *k)
{
    int v;
    memcpy(&v, (const char *)base + k->off, sizeof v);
    return v;
}

static void put_enum(void *base, const rs_key *k, int v)
{
    memcpy((char *)base + k->off, &v, sizeof v);
}

static void put_str(void *base, const rs_key *k, const char *s, size_t len)
{
    memcpy((char *)base + k->off, s, len + 1);
}

static size_t enum_count(const rs_key *k)
{
    size_t n = 0;
    while (k->names[n])
        n++;
    return n;
}

/* Name of the current value; "?" for a value the enum does not name (only
 * possible when the caller filled the struct by hand). */
static const char *enum_name(const void *base, const rs_key *k)
{
    int v = get_enum(base, k);
    return v >= 0 && (size_t)v < enum_count(k) ? k->names[v] : "?";
}

/* ---- table lookups ----------------------------------------------------- */

const rs_key *rs_keys_find(const rs_key_table *t, const char *name)
{
    for (size_t i = 0; i < t->nkeys; i++)
        if (strcmp(t->keys[i].name, name) == 0)
            return &t->keys[i];
    return NULL;
}

/* Length of the section part of a key ("topology" in "topology.gpus"), 0 for
 * a top-level key. */
static size_t section_len(const char *key)
{
    const char *dot = strrchr(key, '.');
    return dot ? (size_t)(dot - key) : 0;
}

/* The first key of section name, or NULL when name is no section. */
static const rs_key *section_key(const rs_key_table *t, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < t->nkeys; i++)
        if (section_len(t->keys[i].name) == n && strncmp(t->keys[i].name, name, n) == 0)
            return &t->keys[i];
    return NULL;
}

/* In order of preference (ties go to table order):
 *  1. a key or section within edit distance 2 of the whole name
 *     ("topology.radx", "topolgy");
 *  2. same section, and one last segment is a prefix of the other, at least
 *     2 characters long ("topology.hb" -> topology.hb_size);
 *  3. the same last segment, or one edit away, in another section ("gpus",
 *     "transport.mtu" -> topology.mtu). */
bool rs_keys_suggest(const rs_key_table *t, const char *name, char *out, size_t size)
{
    const rs_key *best = NULL;
    bool best_is_section = false;
    size_t best_d = 3;
    size_t nlen = strlen(name);

    for (size_t i = 0; i < t->nkeys; i++) {
        const char *key = t->keys[i].name;
        size_t d = rs_edit_distance(name, key, 2);
        if (d < best_d && d < nlen) {
            best = &t->keys[i];
            best_d = d;
        }
        size_t sl = section_len(key);
        char section[64];
        if (sl == 0 || sl >= sizeof section)
            continue;
        memcpy(section, key, sl);
        section[sl] = '\0';
        /* A section name alone, of 6 or more letters, may be 3 edits
         * off ("topologies"). */
        int long_section = nlen >= 6 && !strchr(name, '.');
        d = rs_edit_distance(name, section, long_section ? 3 : 2);
        if (d < best_d + (size_t)long_section && d < nlen && (d < 3 || long_section)) {
            best = &t->keys[i];
            best_is_section = true;
            best_d = d;
        }
    }

    size_t nsec = section_len(name);
    const char *nseg = nsec ? name + nsec + 1 : name;
    size_t nseg_len = strlen(nseg);

    size_t best_extra = SIZE_MAX;
    for (size_t i = 0; !best && i < t->nkeys && nseg_len >= 2; i++) {
        const char *key = t->keys[i].name;
        size_t ksec = section_len(key);
        const char *kseg = ksec ? key + ksec + 1 : key;
        size_t kseg_len = strlen(kseg);
        if (ksec != nsec || strncmp(key, name, nsec) != 0)
            continue;
        size_t shorter = nseg_len < kseg_len ? nseg_len : kseg_len;
        size_t extra = nseg_len > kseg_len ? nseg_len - kseg_len : kseg_len - nseg_len;
        if (strncmp(nseg, kseg, shorter) == 0 && extra < best_extra) {
            best = &t->keys[i];
            best_extra = extra;
        }
    }

    /* Last, a key whose last part is one edit off (or equal): the
     * closest, the first of equals. */
    best_d = 2;
    const rs_key *before = best;
    for (size_t i = 0; !before && i < t->nkeys; i++) {
        const char *key = t->keys[i].name;
        size_t ksec = section_len(key);
        const char *kseg = ksec ? key + ksec + 1 : key;
        size_t d = rs_edit_distance(nseg, kseg, 1);
        if (d == 1 && nseg_len < 4)
            continue; /* one edit in a 3-letter name is a different word */
        if (d < best_d) {
            best = &t->keys[i];
            best_d = d;
        }
    }
    if (!best)
        return false;
    int len = best_is_section ? (int)section_len(best->name) : (int)strlen(best->name);
    snprintf(out, size, "%.*s", len, best->name);
    return true;
}

/* ---- error messages ---------------------------------------------------- */

int rs_keys_vfail(rs_err *err, const char *where, const char *key, const char *fmt, va_list ap)
{
    char what[400];
    vsnprintf(what, sizeof what, fmt, ap);
    if (where)
        return rs_err_set(err, RS_EINVAL, "%s: %s: %s", where, key, what);
    return rs_err_set(err, RS_EINVAL, "%s: %s", key, what);
}

int rs_keys_fail(rs_err *err, const char *where, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = rs_keys_vfail(err, where, key, fmt, ap);
    va_end(ap);
    return rc;
}

/* rs_keys_fail about key of the file at path: "scenario.json:
 * topology.gpus: ..." or, path NULL (a KEY=VALUE string), "--set
 * topology.gpus: ...". */
static int fail_key(const char *path, const char *key, rs_err *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail_key(const char *path, const char *key, rs_err *err, const char *fmt, ...)
{
    char set[272];
    if (!path) {
        snprintf(set, sizeof set, "--set %s", key);
        key = set;
    }
    va_list ap;
    va_start(ap, fmt);
    int rc = rs_keys_vfail(err, path, key, fmt, ap);
    va_end(ap);
    return rc;
}

static int fail_unknown(const rs_key_table *t, const char *path, const char *name_in, rs_err *err)
{
    char s[64], tail[384] = "", name[128];
    if ((t->suggest ? t->suggest : rs_keys_suggest)(t, name_in, s, sizeof s)) {
        snprintf(tail, sizeof tail, " (did you mean '%s'?)", s);
    } else if (t->unknown_expected) {
        snprintf(tail, sizeof tail, "; %s", t->unknown_expected);
    } else if (t->unknown_lists_keys) {
        size_t used = (size_t)snprintf(tail, sizeof tail, "; expected one of ");
        for (size_t i = 0; i < t->nkeys && used < sizeof tail; i++)
            used += (size_t)snprintf(tail + used, sizeof tail - used, "%s%s", i ? ", " : "", t->keys[i].name);
    }
    /* JSON keys may hold any character; keep the message on one line. */
    rs_printable(name_in, name, sizeof name);
    if (path)
        return rs_err_set(err, RS_EINVAL, "%s: unknown %s '%s'%s", path, t->noun, name, tail);
    return rs_err_set(err, RS_EINVAL, "--set %s: unknown %s%s", name, t->noun, tail);
}

/* A hostile value cannot break the one line. */
void rs_quote_text(char *buf, size_t size, const char *s)
{
    size_t n = 0;
    buf[n++] = '"';
    for (; *s && n + 5 < size && n < 62; s++)
        buf[n++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
    if (*s) {
        buf[n++] = '.';
        buf[n++] = '.';
        buf[n++] = '.';
    }
    buf[n++] = '"';
    buf[n] = '\0';
}

static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

void rs_keys_describe(char *buf, size_t size, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: snprintf(buf, size, "an object"); break;
    case JSON_ARRAY: snprintf(buf, size, "an array"); break;
    case JSON_STRING: rs_quote_text(buf, size, json_string_value(v)); break;
    case JSON_INTEGER: snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); break;
    case JSON_REAL: snprintf(buf, size, "%.15g", json_real_value(v)); break;
    case JSON_TRUE: snprintf(buf, size, "true"); break;
    case JSON_FALSE: snprintf(buf, size, "false"); break;
    default: snprintf(buf, size, "null"); break;
    }
}

/* Doubles for people: whole values without an exponent (1e15 as
 * 1000000000000000), others with up to 15 significant digits. */
static void format_double(char *buf, size_t size, double v)
{
    if (v == floor(v) && fabs(v) < 1e17)
        snprintf(buf, size, "%.0f", v);
    else
        snprintf(buf, size, "%.15g", v);
}

static bool any_number(const rs_key *k)
{
    return isinf(k->dmin) && k->dmin < 0 && isinf(k->dmax) && k->dmax > 0;
}

static void list_names(char *buf, size_t size, size_t n, const rs_key *k, const char *sep, bool quote)
{
    for (size_t i = 0; k->names[i] && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, quote ? "%s \"%s\"" : "%s%s", i ? sep : "", k->names[i]);
}

/* "expected an integer from 1 to 1048576" and friends. */
static void describe_expected(char *buf, size_t size, const rs_key *k)
{
    switch (k->type) {
    case RS_KEY_UINT:
        snprintf(buf, size, "expected an integer from %llu to %llu",
                 (unsigned long long)k->umin, (unsigned long long)k->umax);
        break;
    case RS_KEY_DOUBLE: {
        if (any_number(k)) {
            snprintf(buf, size, "expected a number");
            break;
        }
        char lo[32], hi[32];
        format_double(lo, sizeof lo, k->dmin);
        format_double(hi, sizeof hi, k->dmax);
        snprintf(buf, size, "expected a number %s %s %s %s", k->dmin_open ? "greater than" : "from", lo,
                 k->dmin_open ? "and at most" : "to", hi);
        break;
    }
    case RS_KEY_BOOL:
        snprintf(buf, size, "expected true or false");
        break;
    case RS_KEY_STR:
        if (!k->names) {
            snprintf(buf, size, "expected a string of at most %zu characters", k->size - 1);
            break;
        }
        __attribute__((fallthrough));
    case RS_KEY_ENUM:
        list_names(buf, size, (size_t)snprintf(buf, size, "expected one of"), k, ",", true);
        break;
    case RS_KEY_SKIP:
        snprintf(buf, size, "expected what the caller reads");
        break;
    }
}

/* The name of k nearest to text (within 2 edits, fewer than its length),
 * or NULL. */
static const char *enum_suggest(const rs_key *k, const char *text)
{
    const char *best = NULL;
    size_t best_d = 3, n = strlen(text);
    for (size_t i = 0; k->names[i]; i++) {
        size_t d = rs_edit_distance(text, k->names[i], 2);
        if (d < best_d && d < n) {
            best = k->names[i];
            best_d = d;
        }
    }
    return best;
}

static int fail_value(const char *path, const rs_key *k, const char *got, rs_err *err)
{
    char expected[160];
    describe_expected(expected, sizeof expected, k);
    return fail_key(path, k->name, err, "%s, got %s", expected, got);
}

/* A name not in an enum or name list: as fail_value, with the nearest
 * name when one is close. */
static int fail_enum(const char *path, const rs_key *k, const char *text, rs_err *err)
{
    char got[80];
    rs_quote_text(got, sizeof got, text);
    const char *near = enum_suggest(k, text);
    if (!near)
        return fail_value(path, k, got, err);
    char expected[160];
    describe_expected(expected, sizeof expected, k);
    return fail_key(path, k->name, err, "%s, got %s (did you mean \"%s\"?)", expected, got, near);
}

/* ---- storing one value ------------------------------------------------- */

static bool uint_in_range(const rs_key *k, uint64_t v)
{
    return v >= k->umin && v <= k->umax;
}

static bool double_in_range(const rs_key *k, double v)
{
    /* Written so that NaN fails both comparisons. */
    bool lo = k->dmin_open ? v > k->dmin : v >= k->dmin;
    return lo && v <= k->dmax;
}

/* A whole, non-negative double that fits the key's range, as an integer. */
static bool whole_uint(const rs_key *k, double d, uint64_t *out)
{
    if (!(d >= (double)k->umin && d <= (double)k->umax) || d != floor(d))
        return false;
    *out = (uint64_t)d;
    return uint_in_range(k, *out); /* (double)umax may round up */
}

/* a and b equal but for '-' and '_' ("all-to-all", "alltoall",
 * "all_to_all"); case still counts. */
static bool same_word(const char *a, const char *b)
{
    for (;;) {
        while (*a == '-' || *a == '_')
            a++;
        while (*b == '-' || *b == '_')
            b++;
        if (!*a || !*b)
            return !*a && !*b;
        if (*a++ != *b++)
            return false;
    }
}

/* A name by its spelling: exactly, or with other hyphens (so traffic.kind
 * and traffic.op both take "all-to-all" and "alltoall"); -1 if none. */
static int enum_lookup(const rs_key *k, const char *name)
{
    for (int i = 0; k->names[i]; i++)
        if (strcmp(k->names[i], name) == 0)
            return i;
    for (int i = 0; k->names[i]; i++)
        if (same_word(k->names[i], name))
            return i;
    return -1;
}

/* A string value of RS_KEY_STR, len bytes without a NUL: stored when it
 * fits (and, with names, is one of them, stored as spelled in the table). */
static int store_str(void *base, const rs_key *k, const char *s, size_t len, const char *path, bool *ok,
                     rs_err *err)
{
    if (k->names) {
        int e = enum_lookup(k, s);
        if (e < 0)
            return fail_enum(path, k, s, err);
        s = k->names[e];
        len = strlen(s);
    }
    if (len < k->size) {
        put_str(base, k, s, len);
        *ok = true;
    }
    return RS_OK;
}

static int stored(const rs_key_table *t, const rs_key *k, void *base, void *ctx, const char *path, rs_err *err)
{
    return t->given ? t->given(k, base, ctx, path, err) : RS_OK;
}

static int apply_json(const rs_key_table *t, void *base, void *ctx, const rs_key *k, const json_t *v,
                      const char *path, rs_err *err)
{
    bool ok = false;
    switch (k->type) {
    case RS_KEY_UINT: {
        uint64_t u = 0;
        if (json_is_integer(v)) {
            json_int_t i = json_integer_value(v);
            u = (uint64_t)i;
            ok = i >= 0 && uint_in_range(k, u);
        } else if (json_is_real(v)) {
            /* 64.0 is 64; 1.5 is not an integer. */
            ok = whole_uint(k, json_real_value(v), &u);
        }
        if (ok)
            put_uint(base, k, u);
        break;
    }
    case RS_KEY_DOUBLE:
        if (json_is_number(v) && double_in_range(k, json_number_value(v))) {
            put_double(base, k, json_number_value(v));
            ok = true;
        }
        break;
    case RS_KEY_STR:
        if (json_is_string(v) && strlen(json_string_value(v)) == json_string_length(v)) {
            int rc = store_str(base, k, json_string_value(v), json_string_length(v), path, &ok, err);
            if (rc)
                return rc;
        }
        break;
    case RS_KEY_BOOL:
        if (json_is_boolean(v)) {
            put_enum(base, k, json_is_true(v));
            ok = true;
            break;
        }
        __attribute__((fallthrough)); /* "true" and "false" as strings too */
    case RS_KEY_ENUM:
        if (json_is_string(v)) {
            int e = enum_lookup(k, json_string_value(v));
            if (e >= 0) {
                put_enum(base, k, e);
                ok = true;
            } else if (k->type == RS_KEY_ENUM) {
                return fail_enum(path, k, json_string_value(v), err);
            }
        }
        break;
    case RS_KEY_SKIP:
        return RS_OK;
    }
    if (ok)
        return stored(t, k, base, ctx, path, err);
    char got[80];
    rs_keys_describe(got, sizeof got, v);
    return fail_value(path, k, got, err);
}

/* Only decimal notation: strtod would also take "0x1p4", "inf" and
 * leading blanks. */
static bool decimal_text(const char *text)
{
    return text[0] != '\0' && text[strspn(text, "0123456789.eE+-")] == '\0';
}

/* A KEY=VALUE value: the whole string must be the number (no sign, no blanks). */
static int apply_text(const rs_key_table *t, void *base, void *ctx, const rs_key *k, const char *text,
                      rs_err *err)
{
    bool ok = false;
    char *end;
    switch (k->type) {
    case RS_KEY_UINT: {
        if (!isdigit((unsigned char)text[0]))
            break;
        errno = 0;
        unsigned long long u = strtoull(text, &end, 10);
        if (*end == '\0') {
            ok = errno == 0 && uint_in_range(k, u);
        } else if (decimal_text(text)) {
            /* "1e9" and "64.0" are whole numbers too. */
            double d = strtod(text, &end);
            uint64_t w = 0;
            ok = *end == '\0' && whole_uint(k, d, &w);
            u = w;
        }
        if (ok)
            put_uint(base, k, u);
        break;
    }
    case RS_KEY_DOUBLE: {
        if (!decimal_text(text))
            break;
        double d = strtod(text, &end);
        if (*end == '\0' && double_in_range(k, d)) { /* also rejects nan, inf */
            put_double(base, k, d);
            ok = true;
        }
        break;
    }
    case RS_KEY_STR: {
        int rc = store_str(base, k, text, strlen(text), NULL, &ok, err);
        if (rc)
            return rc;
        break;
    }
    case RS_KEY_BOOL:
    case RS_KEY_ENUM: {
        int e = enum_lookup(k, text);
        if (e >= 0) {
            put_enum(base, k, e);
            ok = true;
        } else if (k->type == RS_KEY_ENUM) {
            return fail_enum(NULL, k, text, err);
        }
        break;
    }
    case RS_KEY_SKIP:
        return fail_unknown(t, NULL, k->name, err);
    }
    if (ok)
        return stored(t, k, base, ctx, NULL, err);
    char got[80];
    rs_quote_text(got, sizeof got, text);
    return fail_value(NULL, k, got, err);
}

/* ---- objects and strings ----------------------------------------------- */

/* Apply the members of obj, whose dotted path is prefix ("" at the top). */
static int apply_object(const rs_key_table *t, void *base, void *ctx, const json_t *obj, const char *prefix,
                        const char *path, rs_err *err)
{
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)obj, name, v) {
        char dotted[256];
        snprintf(dotted, sizeof dotted, "%s%s%s", prefix, *prefix ? "." : "", name);
        const rs_key *k = rs_keys_find(t, dotted);
        if (k && strchr(name, '.'))
            /* One spelling per key, so a file cannot set a key twice. */
            return rs_err_set(err, RS_EINVAL,
                              "%s: key '%s' must be written nested, as {\"%.*s\": {\"%s\": ...}}",
                              path, dotted, (int)section_len(dotted), dotted,
                              dotted + section_len(dotted) + 1);
        if (k) {
            int rc = apply_json(t, base, ctx, k, v, path, err);
            if (rc)
                return rc;
        } else if (section_key(t, dotted)) {
            if (!json_is_object(v))
                return fail_key(path, dotted, err, "expected an object of %s.* keys, got %s",
                                dotted, json_kind(v));
            int rc = apply_object(t, base, ctx, v, dotted, path, err);
            if (rc)
                return rc;
        } else {
            return fail_unknown(t, path, dotted, err);
        }
    }
    return RS_OK;
}

int rs_keys_apply_json(const rs_key_table *t, void *base, void *ctx, const json_t *obj, const char *path,
                       rs_err *err)
{
    return apply_object(t, base, ctx, obj, "", path, err);
}

int rs_keys_apply_text(const rs_key_table *t, void *base, void *ctx, const char *key, const char *text,
                       rs_err *err)
{
    const rs_key *k = rs_keys_find(t, key);
    if (k)
        return apply_text(t, base, ctx, k, text, err);
    const rs_key *first = section_key(t, key);
    if (first)
        return rs_err_set(err, RS_EINVAL, "--set %s: '%s' is a group of keys; expected one of them, e.g. '%s'",
                          key, key, first->name);
    return fail_unknown(t, NULL, key, err);
}

/* ---- files ------------------------------------------------------------- */

/* The whole of file f in a new buffer (*buf, *len; free it), or RS_EIO
 * with errno kept. */
static int slurp(FILE *f, char **buf, size_t *len)
{
    size_t cap = 0, n = 0;
    char *b = NULL;
    for (;;) {
        /* At most 2 GiB: a scenario, plan or parts file is kilobytes. */
        if (n == cap && (cap > ((size_t)1 << 30) || rs_array_reserve(&b, &cap, n + 1, 1, 4096) != RS_OK)) {
            free(b);
            return RS_ENOMEM;
        }
        size_t r = fread(b + n, 1, cap - n, f);
        n += r;
        if (r == 0)
            break;
    }
    if (ferror(f)) {
        free(b);
        return RS_EIO;
    }
    *buf = b;
    *len = n;
    return RS_OK;
}

/* Read whole first: it tells a file we cannot read (RS_EIO, with errno)
 * from one we cannot parse. */
int rs_keys_read_file(const char *path, const char *what, char **text, size_t *len, rs_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return rs_err_set(err, RS_EIO, "%s: cannot open %s: %s", path, what, strerror(errno));
    int rc = slurp(f, text, len);
    int read_errno = errno;
    fclose(f);
    if (rc == RS_ENOMEM)
        return rs_err_set(err, rc, "%s: out of memory reading the %s", path, what);
    if (rc != RS_OK)
        return rs_err_set(err, RS_EIO, "%s: cannot read %s: %s", path, what, strerror(read_errno));
    return RS_OK;
}

/* A NUL byte, which JSON text cannot hold and the parser would stop at
 * silently, is refused by offset. */
int rs_keys_parse(const char *path, const char *text, size_t len, json_t **root, rs_err *err)
{
    *root = NULL;
    const char *nul = memchr(text, '\0', len);
    if (nul)
        return rs_err_set(err, RS_EINVAL, "%s: byte %zu is a NUL; expected JSON text", path, (size_t)(nul - text));
    json_error_t jerr;
    json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!j) {
        if (jerr.line > 0)
            return rs_err_set(err, RS_EINVAL, "%s:%d:%d: JSON syntax error at line %d, column %d: %s",
                              path, jerr.line, jerr.column, jerr.line, jerr.column, jerr.text);
        return rs_err_set(err, RS_EINVAL, "%s: JSON syntax error: %s", path, jerr.text);
    }
    if (!json_is_object(j)) {
        int rc = rs_err_set(err, RS_EINVAL, "%s: expected a JSON object at the top level, got %s",
                            path, json_kind(j));
        json_decref(j);
        return rc;
    }
    *root = j;
    return RS_OK;
}

int rs_keys_load_file(const char *path, const char *what, json_t **root, rs_err *err)
{
    char *text = NULL;
    size_t len = 0;
    *root = NULL;
    int rc = rs_keys_read_file(path, what, &text, &len, err);
    if (rc == RS_OK)
        rc = rs_keys_parse(path, text, len, root, err);
    free(text);
    return rc;
}

/* ---- writing ----------------------------------------------------------- */

static json_t *value_json(const void *base, const rs_key *k)
{
    switch (k->type) {
    case RS_KEY_UINT: {
        uint64_t u = get_uint(base, k);
        /* Only a hand-filled value can pass INT64_MAX; JSON integers cannot
         * hold it, so it degrades to a real rather than wrapping negative. */
        if (u > (uint64_t)INT64_MAX)
            return json_real((double)u);
        return json_integer((json_int_t)u);
    }
    case RS_KEY_DOUBLE:
        return json_real(get_double(base, k));
    case RS_KEY_ENUM:
        return json_string(enum_name(base, k));
    case RS_KEY_BOOL:
        return json_boolean(get_enum(base, k));
    case RS_KEY_STR:
        return json_string((const char *)base + k->off);
    case RS_KEY_SKIP:
        break;
    }
    return NULL;
}

json_t *rs_keys_to_json(const rs_key_table *t, const void *base)
{
    json_t *root = json_object();
    if (!root)
        return NULL;
    for (size_t i = 0; i < t->nkeys; i++) {
        const rs_key *k = &t->keys[i];
        if (k->type == RS_KEY_SKIP)
            continue;
        size_t sl = section_len(k->name);
        json_t *parent = root;
        const char *leaf = k->name;
        if (sl) {
            char section[64];
            if (RS_NEVER(sl >= sizeof section))
                goto fail;
            memcpy(section, k->name, sl);
            section[sl] = '\0';
            leaf = k->name + sl + 1;
            parent = json_object_get(root, section);
            if (!parent) {
                parent = json_object();
                if (!parent || json_object_set_new(root, section, parent))
                    goto fail; /* set_new dropped parent already */
            }
        }
        if (json_object_set_new(parent, leaf, value_json(base, k)))
            goto fail;
    }
    return root;
fail:
    json_decref(root);
    return NULL;
}

static void format_default(char *buf, size_t size, const void *base, const rs_key *k)
{
    switch (k->type) {
    case RS_KEY_UINT: snprintf(buf, size, "%llu", (unsigned long long)get_uint(base, k)); break;
    case RS_KEY_DOUBLE: format_double(buf, size, get_double(base, k)); break;
    case RS_KEY_BOOL:
    case RS_KEY_ENUM: snprintf(buf, size, "%s", enum_name(base, k)); break;
    case RS_KEY_STR: snprintf(buf, size, "\"%s\"", (const char *)base + k->off); break;
    case RS_KEY_SKIP: buf[0] = '\0'; break;
    }
}

/* Short bounds for the help table: 2^40 rather than 1099511627776. */
static void format_u64(char *buf, size_t size, uint64_t v)
{
    if (v == (uint64_t)INT64_MAX)
        snprintf(buf, size, "2^63-1");
    else if (v > UINT32_MAX && (v & (v - 1)) == 0)
        snprintf(buf, size, "2^%d", __builtin_ctzll(v));
    else
        snprintf(buf, size, "%llu", (unsigned long long)v);
}

static void format_range(char *buf, size_t size, const rs_key *k)
{
    buf[0] = '\0';
    switch (k->type) {
    case RS_KEY_UINT: {
        char lo[24], hi[24];
        format_u64(lo, sizeof lo, k->umin);
        format_u64(hi, sizeof hi, k->umax);
        snprintf(buf, size, "%s..%s", lo, hi);
        break;
    }
    case RS_KEY_DOUBLE: {
        char lo[32], hi[32];
        format_double(lo, sizeof lo, k->dmin);
        format_double(hi, sizeof hi, k->dmax);
        snprintf(buf, size, "%s%s, %s]", k->dmin_open ? "(" : "[", lo, hi);
        break;
    }
    case RS_KEY_STR:
        if (!k->names) {
            snprintf(buf, size, "text, up to %zu chars", k->size - 1);
            break;
        }
        __attribute__((fallthrough));
    case RS_KEY_BOOL:
    case RS_KEY_ENUM:
        list_names(buf, size, 0, k, "|", false);
        break;
    case RS_KEY_SKIP:
        break;
    }
}

void rs_keys_print(const rs_key_table *t, const void *base, FILE *f)
{
    static const char *const type_names[] = { "uint", "number", "enum", "bool", "string", "" };
    /* Two passes: column widths first, so the table lines up whatever the
     * defaults are. */
    int wkey = 3, wdef = 7, wrange = 7;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            fprintf(f, "%-*s  %-6s  %-*s  %-*s  %s\n", wkey, "KEY", "TYPE", wdef, "DEFAULT",
                    wrange, "ALLOWED", "MEANING");
        for (size_t i = 0; i < t->nkeys; i++) {
            const rs_key *k = &t->keys[i];
            char dflt[40], range[96];
            if (k->type == RS_KEY_SKIP)
                continue;
            format_default(dflt, sizeof dflt, base, k);
            format_range(range, sizeof range, k);
            if (pass == 0) {
                wkey = (int)strlen(k->name) > wkey ? (int)strlen(k->name) : wkey;
                wdef = (int)strlen(dflt) > wdef ? (int)strlen(dflt) : wdef;
                wrange = (int)strlen(range) > wrange ? (int)strlen(range) : wrange;
            } else {
                fprintf(f, "%-*s  %-6s  %-*s  %-*s  %s\n", wkey, k->name, type_names[k->type],
                        wdef, dflt, wrange, range, k->desc ? k->desc : "");
            }
        }
    }
}
