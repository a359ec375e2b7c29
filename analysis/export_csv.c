/*
 * export_csv.c - one CSV file per timeline record kind (export.h; the
 * columns are listed in docs/analysis.md and in `files` below).
 *
 * One streaming pass: every file is open at once (as NAME.csv.tmp), each
 * record becomes one row of its kind's file, and ids are joined with the
 * names given so far (name records always precede the records that use
 * them). Only the names are held in memory. All files are renamed at the
 * end; on any error every temporary is removed and no file is renamed.
 */
#include "export.h"
#include "export_int.h"

#include "tables.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

/* File names and header rows, by record kind (index = kind number); kind
 * 0 is header.csv. */
static const struct {
    const char *file, *columns;
} files[10] = {
    { "header.csv", "key,value" },
    { "name.csv", "space,id,name" },
    { "op.csv", "rank,rank_name,start_ps,end_ps,dur_ps,op,bytes,comm,comm_name,label" },
    { "coll.csv", "id,op,algo,comm,comm_name,nranks,bytes,start_ps,end_ps,dur_ps" },
    { "flow.csv", "src,src_name,dst,dst_name,bytes,start_ps,end_ps,fct_ps" },
    { "sample.csv", "time_ps,port,port_name,tx_bytes,queue_bytes,util" },
    { "pfc.csv", "time_ps,port,port_name,prio_mask,pause" },
    { "ecn.csv", "time_ps,port,port_name,what,count" },
    { "drop.csv", "time_ps,port,port_name,reason,packets,bytes" },
    { "fault.csv", "time_ps,target,kind,detail" },
};

typedef struct names {
    rs_strtab *strs;
    rs_u64map map;
} names;

static const char *name_of(const names *n, uint32_t space, uint64_t id)
{
    uint64_t *v = rs_u64map_get(&n->map, rs_an_name_key(space, id));
    return v ? rs_strtab_str(n->strs, (uint32_t)*v) : "";
}

/* mkdir -p; RS_AN_EOUTPUT naming the directory. */
static int make_dir(const char *dir, rs_an_err *err)
{
    char p[4096];
    if ((size_t)snprintf(p, sizeof p, "%s", dir) >= sizeof p)
        return rs_an_errf(err, RS_AN_EOUTPUT, "%.64s...: output directory name too long", dir);
    for (char *s = p + 1; ; s++) {
        if (*s == '/' || *s == '\0') {
            char c = *s;
            *s = '\0';
            struct stat st;
            if (mkdir(p, 0777) != 0 && errno != EEXIST)
                return rs_an_errf(err, RS_AN_EOUTPUT, "%s: cannot create output directory: %s", p, strerror(errno));
            if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
                return rs_an_errf(err, RS_AN_EOUTPUT, "%s: cannot create output directory: not a directory", p);
            *s = c;
            if (!c)
                break;
        }
    }
    return RS_AN_OK;
}

static void u64(FILE *f, uint64_t v, int comma)
{
    fprintf(f, "%" PRIu64 "%s", v, comma ? "," : "");
}

static void write_row(FILE *const *out, const rs_tlread_rec *r, const names *n)
{
    FILE *f = out[r->kind];
    switch (r->kind) {
    case RS_TL_NAME:
        fprintf(f, "%" PRIu32 ",%" PRIu64 ",", r->u.name.space, r->u.name.id);
        rs_csv_str(f, r->u.name.name);
        break;
    case RS_TL_OP:
        fprintf(f, "%" PRIu32 ",", r->u.op.rank);
        rs_csv_str(f, name_of(n, 1, r->u.op.rank));
        fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", r->u.op.start_ps, r->u.op.end_ps,
                r->u.op.end_ps - r->u.op.start_ps);
        rs_csv_str(f, r->u.op.op);
        fprintf(f, ",%" PRIu64 ",", r->u.op.bytes);
        if (r->u.op.comm != RS_TL_NONE) {
            fprintf(f, "%" PRIu32 ",", r->u.op.comm);
            rs_csv_str(f, name_of(n, 2, r->u.op.comm));
        } else {
            fputc(',', f);
        }
        fputc(',', f);
        rs_csv_str(f, r->u.op.label);
        break;
    case RS_TL_COLL:
        u64(f, r->u.coll.id, 1);
        rs_csv_str(f, r->u.coll.op);
        fputc(',', f);
        rs_csv_str(f, r->u.coll.algo);
        fprintf(f, ",%" PRIu32 ",", r->u.coll.comm);
        rs_csv_str(f, name_of(n, 2, r->u.coll.comm));
        fprintf(f, ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, r->u.coll.nranks, r->u.coll.bytes,
                r->u.coll.start_ps, r->u.coll.end_ps, r->u.coll.end_ps - r->u.coll.start_ps);
        break;
    case RS_TL_FLOW:
        fprintf(f, "%" PRIu32 ",", r->u.flow.src);
        rs_csv_str(f, name_of(n, 1, r->u.flow.src));
        fprintf(f, ",%" PRIu32 ",", r->u.flow.dst);
        rs_csv_str(f, name_of(n, 1, r->u.flow.dst));
        fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, r->u.flow.bytes, r->u.flow.start_ps,
                r->u.flow.end_ps, r->u.flow.end_ps - r->u.flow.start_ps);
        break;
    case RS_TL_SAMPLE:
        fprintf(f, "%" PRIu64 ",%" PRIu32 ",", r->u.sample.time_ps, r->u.sample.port);
        rs_csv_str(f, name_of(n, 0, r->u.sample.port));
        /* %.17g round-trips a double; a non-finite value (a damaged file)
         * is written as an empty field. */
        fprintf(f, ",%" PRIu64 ",%" PRIu64 ",", r->u.sample.tx_bytes, r->u.sample.queue_bytes);
        if (isfinite(r->u.sample.util))
            fprintf(f, "%.17g", r->u.sample.util);
        break;
    case RS_TL_PFC:
        fprintf(f, "%" PRIu64 ",%" PRIu32 ",", r->u.pfc.time_ps, r->u.pfc.port);
        rs_csv_str(f, name_of(n, 0, r->u.pfc.port));
        fprintf(f, ",%u,%d", (unsigned)r->u.pfc.prio_mask, r->u.pfc.pause ? 1 : 0);
        break;
    case RS_TL_ECN:
        fprintf(f, "%" PRIu64 ",%" PRIu32 ",", r->u.ecn.time_ps, r->u.ecn.port);
        rs_csv_str(f, name_of(n, 0, r->u.ecn.port));
        if (r->u.ecn.what == 0)
            fputs(",mark", f);
        else if (r->u.ecn.what == 1)
            fputs(",cnp", f);
        else
            fprintf(f, ",%" PRIu32, r->u.ecn.what);
        fprintf(f, ",%" PRIu64, r->u.ecn.count);
        break;
    case RS_TL_DROP:
        fprintf(f, "%" PRIu64 ",%" PRIu32 ",", r->u.drop.time_ps, r->u.drop.port);
        rs_csv_str(f, name_of(n, 0, r->u.drop.port));
        fputc(',', f);
        rs_csv_str(f, r->u.drop.reason);
        fprintf(f, ",%" PRIu64 ",%" PRIu64, r->u.drop.packets, r->u.drop.bytes);
        break;
    case RS_TL_FAULT:
        u64(f, r->u.fault.time_ps, 1);
        rs_csv_str(f, r->u.fault.target);
        fputc(',', f);
        rs_csv_str(f, r->u.fault.kind);
        fputc(',', f);
        rs_csv_str(f, r->u.fault.detail);
        break;
    default:
        return;
    }
    fputc('\n', f);
}

static void write_header(FILE *f, const rs_tlread_header *h)
{
    fprintf(f, "format,railsim-timeline\nversion,%" PRIu32 "\nversion_minor,%" PRIu32 "\npartial,%d\n",
            h->version, h->version_minor, h->partial ? 1 : 0);
    fputs("railsim_version,", f);
    rs_csv_str(f, h->railsim_version);
    fprintf(f, "\nseed,%" PRIu64 "\ntrace_hash,", h->seed);
    rs_csv_str(f, h->trace_hash);
    fputc('\n', f);
    for (size_t i = 0; i < h->n_topology; i++) {
        char key[160];
        snprintf(key, sizeof key, "topology.%s", h->topology[i].name);
        rs_csv_str(f, key);
        fprintf(f, ",%" PRIu64 "\n", h->topology[i].value);
    }
    fputs("scenario,", f);
    rs_csv_str(f, h->scenario_json);
    fputc('\n', f);
}

int rs_export_csv(const char *tl_path, const char *dir, rs_export_counts *counts, rs_an_err *err)
{
    rs_export_counts cnt;
    memset(&cnt, 0, sizeof cnt);
    rs_tlread *r = NULL;
    int rc = rs_tlread_open(tl_path, &r, err);
    if (rc != RS_AN_OK)
        return rc;
    rs_xfile out[10];
    FILE *fs[11] = { 0 };
    int opened = 0;
    names n = { rs_strtab_create(), { 0 } };
    rs_u64map_init(&n.map);
    if (!n.strs) {
        rc = rs_an_errf(err, RS_AN_ENOMEM, "%s: out of memory", tl_path);
        goto fail;
    }
    if ((rc = make_dir(dir, err)) != RS_AN_OK)
        goto fail;
    for (; opened < 10; opened++) {
        char path[4096];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, files[opened].file) >= sizeof path) {
            rc = rs_an_errf(err, RS_AN_EOUTPUT, "%.64s...: output directory name too long", dir);
            goto fail;
        }
        if ((rc = rs_xfile_open(&out[opened], path, err)) != RS_AN_OK)
            goto fail;
        fs[opened] = out[opened].f;
        fprintf(fs[opened], "%s\n", files[opened].columns);
    }
    write_header(fs[0], rs_tlread_header_get(r));
    rs_tlread_rec rec;
    while ((rc = rs_tlread_next(r, &rec, err)) == 1) {
        cnt.records++;
        if (rec.kind == RS_TL_NAME) {
            uint32_t sid = rs_strtab_intern(n.strs, rec.u.name.name);
            uint64_t *v = rs_u64map_upsert(&n.map, rs_an_name_key(rec.u.name.space, rec.u.name.id), 0);
            if (sid == UINT32_MAX || !v) {
                rc = rs_an_errf(err, RS_AN_ENOMEM, "%s: out of memory", tl_path);
                goto fail;
            }
            *v = sid;
        }
        if (rec.kind >= RS_TL_NAME && rec.kind <= RS_TL_FAULT) {
            write_row(fs, &rec, &n);
            cnt.rows[rec.kind]++;
        }
    }
    if (rc < 0)
        goto fail;
    for (int k = 0; k < 10; k++)
        if (ferror(fs[k])) {
            rc = rs_an_errf(err, RS_AN_EOUTPUT, "%s: cannot write output file: %s", out[k].path, strerror(errno));
            goto fail;
        }
    /* Commit all; a failure removes what is not yet renamed (the renamed
     * ones are complete files). */
    for (int k = 0; k < 10; k++) {
        if ((rc = rs_xfile_commit(&out[k], err)) != RS_AN_OK)
            goto fail; /* committed files have f == NULL: abort skips them */
    }
    cnt.ops = cnt.rows[RS_TL_OP];
    cnt.colls = cnt.rows[RS_TL_COLL];
    if (counts)
        *counts = cnt;
    rs_u64map_fini(&n.map);
    rs_strtab_destroy(n.strs);
    rs_tlread_close(r);
    return RS_AN_OK;
fail:
    for (int k = 0; k < opened; k++)
        rs_xfile_abort(&out[k]);
    rs_u64map_fini(&n.map);
    rs_strtab_destroy(n.strs);
    rs_tlread_close(r);
    return rc;
}
