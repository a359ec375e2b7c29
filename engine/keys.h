/*
 * keys.h - the JSON key-table reader: one table of known keys (name, type,
 * field, bounds or names, meaning) drives reading a JSON object into a C
 * struct, reading one KEY=VALUE string, writing the struct back as JSON and
 * printing the table for help. Scenarios (run/scenario.c), training plans
 * (traces/plan.c) and parts tables (run/parts.c) are read with it, so the
 * three files reject unknown keys, wrong types and out-of-range values the
 * same way and in the same words.
 *
 * A key's section is the part before its last dot ("topology" in
 * "topology.gpus", "transport.dcqcn" in "transport.dcqcn.g"); in JSON a
 * section is an object, written nested or, below the top, under its dotted
 * name. Every error is one sentence "FILE: KEY: expected ..., got ..."
 * ("--set KEY: ..." for a KEY=VALUE string).
 *
 * It lives in engine/ as its own library (rs_keys, next to the rs_err type
 * it fills) so that traces/ and cli/ can both use it; only those link it,
 * and jansson stays out of rs_engine. Also here: the edit distance and the
 * printable copies of user text that the messages use.
 */
#ifndef RS_KEYS_H
#define RS_KEYS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base.h"

struct json_t; /* jansson's json_t; callers include <jansson.h> */

typedef enum {
    RS_KEY_UINT,   /* uint32_t or uint64_t (size), umin..umax */
    RS_KEY_DOUBLE, /* double, [dmin or (dmin, dmax]; dmin -inf and dmax inf: any number */
    RS_KEY_ENUM,   /* int, names[i] is value i */
    RS_KEY_BOOL,   /* int 0 or 1; JSON booleans, "true" and "false" */
    RS_KEY_STR,    /* char[size], NUL-terminated; with names, one of them */
    RS_KEY_SKIP,   /* known, read by the caller; walks pass over it */
} rs_key_type;

typedef struct rs_key {
    const char *name;          /* dotted key */
    rs_key_type type;
    size_t off, size;          /* the field in the caller's struct */
    uint64_t umin, umax;       /* RS_KEY_UINT */
    double dmin, dmax;         /* RS_KEY_DOUBLE */
    bool dmin_open;            /* RS_KEY_DOUBLE: value must be > dmin, not >= */
    const char *const *names;  /* RS_KEY_ENUM, RS_KEY_STR: NULL-terminated */
    const char *desc;          /* one line for help; may be NULL */
} rs_key;

/* Rows for a table of fields of struct S. */
#define RS_KEY_FIELD(S, m) offsetof(S, m), sizeof(((S *)0)->m)
#define RS_KEY_U(S, k, m, lo, hi, d) { k, RS_KEY_UINT, RS_KEY_FIELD(S, m), lo, hi, 0, 0, false, NULL, d }
#define RS_KEY_D(S, k, m, lo, open, hi, d) { k, RS_KEY_DOUBLE, RS_KEY_FIELD(S, m), 0, 0, lo, hi, open, NULL, d }
#define RS_KEY_E(S, k, m, names, d) { k, RS_KEY_ENUM, RS_KEY_FIELD(S, m), 0, 0, 0, 0, false, names, d }
#define RS_KEY_B(S, k, m, d) { k, RS_KEY_BOOL, RS_KEY_FIELD(S, m), 0, 0, 0, 0, false, rs_key_bool_names, d }
#define RS_KEY_S(S, k, m, names, d) { k, RS_KEY_STR, RS_KEY_FIELD(S, m), 0, 0, 0, 0, false, names, d }

/* { "false", "true", NULL }: the names of RS_KEY_BOOL. */
extern const char *const rs_key_bool_names[];

typedef struct rs_key_table {
    const rs_key *keys;
    size_t nkeys;
    /* The word in "unknown key 'x'": "key", "part". */
    const char *noun;
    /* A known name close to the unknown one, written to out: NULL for the
     * default (edit distance and prefixes over dotted keys, rs_keys_suggest). */
    bool (*suggest)(const struct rs_key_table *t, const char *name, char *out, size_t size);
    /* After "unknown key 'x'" when nothing is close: NULL for nothing, or
     * the rest of the sentence ("expected name, preset, ..."). */
    const char *unknown_expected;
    /* ... or true: "expected one of " and every key. */
    bool unknown_lists_keys;
    /* Called after a value was stored at its field (may be NULL): to note
     * that the key was given, or to check the value further. path is the
     * file (NULL for a KEY=VALUE string); a failure is returned as is. */
    int (*given)(const rs_key *k, void *base, void *ctx, const char *path, rs_err *err);
} rs_key_table;

/* The one shape of a message about a key, for the readers above and for
 * the checks their callers make afterwards (rs_plan_validate): "WHERE:
 * KEY: WHAT", or "KEY: WHAT" when where is NULL, WHAT from fmt (at most
 * 399 characters of it). Sets err (which may be NULL) and returns
 * RS_EINVAL. */
int rs_keys_fail(rs_err *err, const char *where, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same with the arguments of fmt as a va_list. */
int rs_keys_vfail(rs_err *err, const char *where, const char *key, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

/* The key named name, or NULL. */
const rs_key *rs_keys_find(const rs_key_table *t, const char *name);

/* Parse the JSON text[0..len) (no NUL bytes) into *root, a JSON object
 * (json_decref it). path names the text in messages. RS_EINVAL with
 * "PATH:LINE:COL: JSON syntax error ..." or "expected a JSON object at the
 * top level"; RS_ENOMEM. */
int rs_keys_parse(const char *path, const char *text, size_t len, struct json_t **root, rs_err *err);

/* Read the file at path whole into *text, *len (free it); what names it
 * in messages ("scenario file"). RS_EIO (cannot open or read) or RS_ENOMEM. */
int rs_keys_read_file(const char *path, const char *what, char **text, size_t *len, rs_err *err);

/* rs_keys_read_file, then rs_keys_parse. */
int rs_keys_load_file(const char *path, const char *what, struct json_t **root, rs_err *err);

/* Store the members of the object obj, all of them keys or sections of t,
 * into base, in file order; path names the file in messages. A failure
 * (RS_EINVAL and the message, or the given hook's) stops at that key with
 * the earlier ones stored. */
int rs_keys_apply_json(const rs_key_table *t, void *base, void *ctx, const struct json_t *obj,
                       const char *path, rs_err *err);

/* Store text as the value of key (a KEY=VALUE string: numbers in decimal,
 * the whole string the value). Messages read "--set KEY: ...". */
int rs_keys_apply_text(const rs_key_table *t, void *base, void *ctx, const char *key, const char *text,
                       rs_err *err);

/* base as a JSON object of every key but RS_KEY_SKIP, nested by section in
 * table order (json_decref it), or NULL when out of memory. */
struct json_t *rs_keys_to_json(const rs_key_table *t, const void *base);

/* The table as text, one key a line: KEY TYPE DEFAULT ALLOWED MEANING,
 * defaults read from base. */
void rs_keys_print(const rs_key_table *t, const void *base, FILE *f);

/* The default suggestion (rs_key_table.suggest): a key or section near
 * name, written to out (size > any key); false when none is close. */
bool rs_keys_suggest(const rs_key_table *t, const char *name, char *out, size_t size);

/* Optimal-string-alignment distance (Levenshtein plus adjacent swaps)
 * between a and b, or cap + 1 when it is larger than cap or a string is
 * longer than 63 characters. */
size_t rs_edit_distance(const char *a, const char *b, size_t cap);

/* Copy s into out (size > 0) for a one-line message, control characters
 * replaced by '?', truncated to fit; returns out. */
const char *rs_printable(const char *s, char *out, size_t size);

/* s in double quotes into buf (size >= 8) for a "got ..." clause: at most
 * ~60 characters and "..." after, control characters replaced. */
void rs_quote_text(char *buf, size_t size, const char *s);

/* A JSON value as a "got ..." clause names it: a string quoted (as
 * rs_quote_text), a number or literal as written, "an object", "an array". */
void rs_keys_describe(char *buf, size_t size, const struct json_t *v);

#endif
