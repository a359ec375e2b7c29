/*
 * parts.c - the parts-table reader (parts.h): a key table of the parts
 * rs_catalog_keys names, read with the key-table reader (engine/keys.h) that
 * scenarios and plans use too. Each value lands in a scratch slot and goes
 * on to rs_catalog_set, which owns the parts' ranges.
 */
#include "run.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "keys.h"

/* More than rs_catalog has fields (10). */
#define MAX_PARTS 64

/* The known part closest to key (edit distance up to a third of its
 * length, at least 2), or the part key is a prefix of; false if none.
 * Part names are long and flat, so this reaches further than the
 * default suggestion for dotted keys. */
static bool suggest_part(const rs_key_table *t, const char *key, char *out, size_t size)
{
    const char *best = NULL;
    size_t best_d = SIZE_MAX, klen = strlen(key);
    size_t cap = klen / 3 > 2 ? klen / 3 : 2;
    for (size_t i = 0; i < t->nkeys; i++) {
        size_t d = rs_edit_distance(key, t->keys[i].name, cap);
        if (d <= cap && d < best_d) {
            best = t->keys[i].name;
            best_d = d;
        }
    }
    for (size_t i = 0; !best && i < t->nkeys && klen >= 3; i++)
        if (strncmp(t->keys[i].name, key, klen) == 0)
            best = t->keys[i].name;
    if (best)
        snprintf(out, size, "%s", best);
    return best != NULL;
}

/* A stored value goes on to the parts table: its range is the model's. */
static int set_part(const rs_key *k, void *base, void *ctx, const char *path, rs_err *err)
{
    double v;
    memcpy(&v, (const char *)base + k->off, sizeof v);
    rs_err sub;
    rs_err_clear(&sub);
    if (rs_catalog_set(ctx, k->name, v, &sub) != RS_OK)
        return rs_err_set(err, sub.code ? sub.code : RS_EINVAL, "%s: %s", path, sub.msg);
    return RS_OK;
}

int rs_catalog_load(const char *path, rs_catalog *p, rs_err *err)
{
    /* One row per part: any JSON number, into slot i of values. */
    const char *const *names = rs_catalog_keys();
    rs_key keys[MAX_PARTS];
    double values[MAX_PARTS];
    size_t n = 0;
    for (; names[n]; n++) {
        if (RS_NEVER(n == MAX_PARTS))
            return rs_err_set(err, RS_EINTERNAL, "%s: more parts than the reader holds", path);
        keys[n] = (rs_key){ names[n], RS_KEY_DOUBLE, n * sizeof(double), sizeof(double), 0, 0,
                            -INFINITY, INFINITY, false, NULL, NULL };
    }
    const rs_key_table table = {
        .keys = keys, .nkeys = n, .noun = "part", .suggest = suggest_part,
        .unknown_lists_keys = true, .given = set_part,
    };
    json_t *root;
    int rc = rs_keys_load_file(path, "parts file", &root, err);
    if (rc == RS_OK)
        rc = rs_keys_apply_json(&table, values, p, root, path, err);
    json_decref(root);
    return rc;
}
