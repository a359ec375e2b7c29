/*
 * parts.c - the parts-table reader (parts.h).
 */
#include "parts.h"

#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "keys.h"

/* The known part closest to key (edit distance up to a third of its
 * length, at least 2), or the part key is a prefix of; NULL if none. */
static const char *suggest_part(const char *key)
{
    const char *const *keys = rs_parts_keys();
    const char *best = NULL;
    size_t best_d = SIZE_MAX, klen = strlen(key);
    size_t cap = klen / 3 > 2 ? klen / 3 : 2;
    for (size_t i = 0; keys[i]; i++) {
        size_t d = rs_edit_distance(key, keys[i], cap);
        if (d <= cap && d < best_d) {
            best = keys[i];
            best_d = d;
        }
    }
    for (size_t i = 0; !best && keys[i] && klen >= 3; i++)
        if (strncmp(keys[i], key, klen) == 0)
            best = keys[i];
    return best;
}

static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING: return "a string";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    case JSON_ARRAY: return "an array";
    default: return "an object";
    }
}

static int unknown_part(const char *path, const char *key, rs_err *err)
{
    char shown[96];
    rs_printable(key, shown, sizeof shown);
    const char *s = suggest_part(key);
    if (s)
        return rs_err_set(err, RS_EINVAL, "%s: unknown part '%s' (did you mean '%s'?)", path, shown, s);
    char list[320] = "";
    const char *const *keys = rs_parts_keys();
    for (size_t i = 0, used = 0; keys[i] && used < sizeof list; i++) {
        int n = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", keys[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    return rs_err_set(err, RS_EINVAL, "%s: unknown part '%s'; expected one of %s", path, shown, list);
}

int rs_parts_load(const char *path, rs_parts *p, rs_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return rs_err_set(err, RS_EIO, "%s: cannot open parts file: %s", path, strerror(errno));
    json_error_t jerr;
    json_t *root = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
    int read_failed = ferror(f);
    fclose(f);
    if (read_failed) {
        json_decref(root);
        return rs_err_set(err, RS_EIO, "%s: cannot read parts file", path);
    }
    if (!root) {
        if (jerr.line > 0)
            return rs_err_set(err, RS_EINVAL, "%s:%d:%d: JSON syntax error: %s", path, jerr.line,
                              jerr.column, jerr.text);
        return rs_err_set(err, RS_EINVAL, "%s: JSON syntax error: %s", path, jerr.text);
    }
    if (!json_is_object(root)) {
        json_decref(root);
        return rs_err_set(err, RS_EINVAL,
                          "%s: expected a JSON object of part names to numbers at the top level", path);
    }
    const char *key;
    json_t *val;
    int rc = RS_OK;
    json_object_foreach(root, key, val) {
        double dummy;
        if (rs_parts_get(p, key, &dummy) != RS_OK) {
            rc = unknown_part(path, key, err);
            break;
        }
        if (!json_is_number(val)) {
            rc = rs_err_set(err, RS_EINVAL, "%s: part '%s': expected a number, got %s", path, key,
                            json_kind(val));
            break;
        }
        rs_err sub;
        rs_err_clear(&sub);
        if (rs_parts_set(p, key, json_number_value(val), &sub) != RS_OK) {
            rc = rs_err_set(err, sub.code ? sub.code : RS_EINVAL, "%s: %s", path, sub.msg);
            break;
        }
    }
    json_decref(root);
    return rc;
}
