/*
 * chakra_groups.c - process groups and communicators for the Chakra import
 * (docs/chakra.md, "Process groups"). A collective node names its process
 * group (pg_name); its members come from the rank's own tables, a
 * METADATA_NODE's PyTorch record (as ASTRA-sim reads it) or the
 * GlobalMetadata attributes "pg_ranks:NAME" railsim's exporter writes,
 * else from ASTRA-sim's --comm-group-configuration file; "0" and "world"
 * are every rank when no table names them. Equal member lists on one
 * dimension become one communicator.
 *
 * The tables (pgtab) and communicators (comm_def) belong to the import
 * state and are freed with it. A table's ranks are checked when it is
 * read (in range, none twice); that a group holds the rank of a node that
 * names it, when the node is read.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pool.h"

#include "chakra_int.h"

/* ---- integer list attributes ------------------------------------------------------- */

/* The i-th value of an integer list attribute; n = its length (-1 if the
 * attribute is not an integer list). */
static long long attr_list_len(const pb_attr *a)
{
    switch (a->value_case) {
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_LIST: return (long long)a->int32_list->n_values;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_LIST: return (long long)a->int64_list->n_values;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT32_LIST: return (long long)a->uint32_list->n_values;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_LIST: return (long long)a->uint64_list->n_values;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT32_LIST: return (long long)a->sint32_list->n_values;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT64_LIST: return (long long)a->sint64_list->n_values;
    default: return -1;
    }
}

static int64_t attr_list_at(const pb_attr *a, size_t i)
{
    switch (a->value_case) {
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_LIST: return a->int32_list->values[i];
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_LIST: return a->int64_list->values[i];
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT32_LIST: return a->uint32_list->values[i];
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_LIST:
        return a->uint64_list->values[i] > INT64_MAX ? -1 : (int64_t)a->uint64_list->values[i];
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT32_LIST: return a->sint32_list->values[i];
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT64_LIST: return a->sint64_list->values[i];
    default: return -1;
    }
}

/* ---- communicators ---------------------------------------------------------------- */

int rs_chakra_comm_intern(imp *im, const uint32_t *ranks, uint32_t n, uint8_t dim, const char *pg, uint32_t *id)
{
    for (uint32_t c = 0; c < im->ncomms; c++) {
        comm_def *cd = &im->comms[c];
        if (cd->n == n && cd->dim == dim && !memcmp(cd->ranks, ranks, n * sizeof *ranks)) {
            *id = c;
            return 0;
        }
    }
    if (rs_array_reserve32(&im->comms, &im->capcomms, im->ncomms + 1, sizeof *im->comms, 16))
        return -1;
    comm_def *cd = &im->comms[im->ncomms];
    cd->ranks = malloc(n * sizeof *ranks);
    cd->pg = pg ? strdup(pg) : NULL;
    if (!cd->ranks || (pg && !cd->pg)) {
        free(cd->ranks);
        free(cd->pg);
        return -1;
    }
    if (n)
        memcpy(cd->ranks, ranks, n * sizeof *ranks);
    cd->n = n;
    cd->dim = dim;
    *id = im->ncomms++;
    return 0;
}

/* ---- process groups ----------------------------------------------------------------- */

/* Add group name with members r[0..n) (n == 0: every rank, PyTorch's
 * convention for the default group) to tab. 0; -1 with why filled for a
 * rank out of range or listed twice; -2 out of memory. */
static int pg_add(pgtab *tab, const char *name, const int64_t *r, size_t n, uint32_t nranks, char *why,
                  size_t whylen)
{
    if (n > nranks) {
        snprintf(why, whylen, "%zu ranks, more than the %u there are", n, nranks);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        int dup = 0;
        for (size_t j = 0; j < i && !dup; j++)
            dup = r[j] == r[i];
        if (r[i] < 0 || r[i] >= nranks || dup) {
            snprintf(why, whylen, "rank %" PRId64 " %s", r[i], dup ? "listed twice" : "out of range");
            return -1;
        }
    }
    if (rs_array_reserve(&tab->v, &tab->cap, tab->n + 1, sizeof *tab->v, 16))
        return -2;
    pgdef *g = &tab->v[tab->n];
    g->name = strdup(name);
    g->ranks = malloc((n ? n : 1) * sizeof *g->ranks);
    if (!g->name || !g->ranks) {
        free(g->name);
        free(g->ranks);
        return -2;
    }
    for (size_t i = 0; i < n; i++)
        g->ranks[i] = (uint32_t)r[i];
    g->n = (uint32_t)n;
    tab->n++;
    return 0;
}

void rs_chakra_pg_free(pgtab *tab)
{
    for (size_t i = 0; i < tab->n; i++) {
        free(tab->v[i].name);
        free(tab->v[i].ranks);
    }
    free(tab->v);
}

/* A JSON list of integers into a malloc'ed array; -1 if it is not one. */
static int json_ranks(const json_t *a, int64_t **out, size_t *n)
{
    if (!json_is_array(a))
        return -1;
    *n = json_array_size(a);
    *out = malloc((*n ? *n : 1) * sizeof **out);
    if (!*out)
        return -2;
    for (size_t i = 0; i < *n; i++) {
        const json_t *v = json_array_get(a, i);
        if (!json_is_integer(v)) {
            free(*out);
            return -1;
        }
        (*out)[i] = json_integer_value(v);
    }
    return 0;
}

/* GlobalMetadata attributes "pg_ranks:NAME" (integer lists): the table
 * railsim's exporter writes. */
int rs_chakra_pg_from_meta(imp *im, rank_in *ri, rs_err *err)
{
    for (size_t k = 0; k < ri->meta->n_attr; k++) {
        const pb_attr *a = ri->meta->attr[k];
        if (!a->name || strncmp(a->name, "pg_ranks:", 9))
            continue;
        long long m = attr_list_len(a);
        if (m < 0)
            return BADAT(ri, 0, "GlobalMetadata attribute \"%s\": expected an integer list of ranks", a->name);
        int64_t *r = malloc(((size_t)m + 1) * sizeof *r);
        if (!r)
            return rs_chakra_oom(err);
        for (long long i = 0; i < m; i++)
            r[i] = attr_list_at(a, (size_t)i);
        char why[96];
        int rc = pg_add(&ri->pgs, a->name + 9, r, (size_t)m, im->nranks, why, sizeof why);
        free(r);
        if (rc == -2)
            return rs_chakra_oom(err);
        if (rc)
            return BADAT(ri, 0, "GlobalMetadata attribute \"%s\": %s", a->name, why);
    }
    return RS_OK;
}

/* A METADATA_NODE whose inputs.values is PyTorch's process-group record,
 * as ASTRA-sim reads it: ["[{"pg_name": "1", "ranks": [0, 1], ...}, ...]"]
 * (the JSON list inside one string list item; an empty ranks list is every
 * rank). Other metadata is no process-group table and is left alone. */
int rs_chakra_pg_from_node(imp *im, rank_in *ri, const nd *d, rs_err *err)
{
    const char *v = d->pb->inputs ? d->pb->inputs->values : NULL;
    size_t n = v ? strlen(v) : 0;
    if (n < 2)
        return RS_OK;
    json_error_t je;
    json_t *j = n >= 4 && !strncmp(v, "[\"", 2) && !strcmp(v + n - 2, "\"]") ? json_loadb(v + 2, n - 4, 0, &je)
                                                                             : json_loadb(v, n, 0, &je);
    if (!j)
        return RS_OK;
    int rc = RS_OK;
    size_t i;
    json_t *it;
    json_array_foreach(j, i, it) {
        const json_t *name = json_object_get(it, "pg_name"), *ranks = json_object_get(it, "ranks");
        if (!json_is_object(it) || !name)
            continue;
        int64_t *r = NULL;
        size_t m = 0;
        char why[96] = "expected a list of integer ranks";
        int bad = !json_is_string(name) ? -1 : json_ranks(ranks, &r, &m);
        if (bad == 0)
            bad = pg_add(&ri->pgs, json_string_value(name), r, m, im->nranks, why, sizeof why);
        free(r);
        if (bad == -2) {
            rc = rs_chakra_oom(err);
            break;
        }
        if (bad) {
            rc = BADAT(ri, d->off, "node %" PRIu64 ": process group record %zu: %s", d->id, i + 1, why);
            break;
        }
    }
    json_decref(j);
    return rc;
}

/* ASTRA-sim's --comm-group-configuration file: {"1": [0, 1, 2, 3], ...}. */
int rs_chakra_pg_from_file(imp *im, const char *path, rs_err *err)
{
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    if (!j)
        return rs_err_set(err, RS_EFORMAT, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    int rc = RS_OK;
    const char *key;
    json_t *v;
    if (!json_is_object(j))
        rc = rs_err_set(err, RS_EFORMAT, "%s: expected an object of process groups: {\"1\": [0, 1], ...}", path);
    json_object_foreach(j, key, v) {
        if (rc)
            break;
        int64_t *r = NULL;
        size_t m = 0;
        char why[96] = "expected a list of integer ranks";
        int bad = json_ranks(v, &r, &m);
        if (bad == 0)
            bad = pg_add(&im->gpgs, key, r, m, im->nranks, why, sizeof why);
        free(r);
        if (bad == -2)
            rc = rs_chakra_oom(err);
        else if (bad)
            rc = rs_err_set(err, RS_EFORMAT, "%s: process group \"%s\": %s", path, key, why);
    }
    json_decref(j);
    return rc;
}

/* The members of process group pg for rank ri: its own table (the last
 * definition), then the --comm-groups file; "0" and "world" are every rank
 * when no table names them (ASTRA-sim's default group). *out NULL = every
 * rank; else borrowed. */
int rs_chakra_pg_members(imp *im, rank_in *ri, const nd *d, const char *pg, const uint32_t **out, uint32_t *nout,
                         rs_err *err)
{
    (void)err;
    const pgdef *g = NULL;
    for (size_t i = ri->pgs.n; i-- > 0 && !g;)
        if (!strcmp(ri->pgs.v[i].name, pg))
            g = &ri->pgs.v[i];
    for (size_t i = 0; i < im->gpgs.n && !g; i++)
        if (!strcmp(im->gpgs.v[i].name, pg))
            g = &im->gpgs.v[i];
    *out = NULL;
    *nout = 0;
    if (!g) {
        if (!strcmp(pg, "0") || !strcmp(pg, "world"))
            return RS_OK;
        return BADAT(ri, d->off, "node %" PRIu64 ": process group \"%s\" is in no table (the metadata's "
                     "\"pg_ranks:%s\", a process-group METADATA_NODE before it, or --comm-groups)", d->id, pg, pg);
    }
    if (g->n == 0)
        return RS_OK;
    int self = 0;
    for (uint32_t i = 0; i < g->n; i++)
        self |= g->ranks[i] == ri->f->rank;
    if (!self)
        return BADAT(ri, d->off, "node %" PRIu64 ": process group \"%s\" does not contain rank %u", d->id, pg,
                     ri->f->rank);
    *out = g->ranks;
    *nout = g->n;
    return RS_OK;
}
