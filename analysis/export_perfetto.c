/*
 * export_perfetto.c - Chrome trace-event JSON from a timeline (export.h;
 * the mapping is docs/analysis.md, "Perfetto / Chrome trace").
 *
 * Layout of the output:
 *   pid 1 + d            "HB domain d": one thread per rank of the domain
 *                        (rank r is in domain r / hb_size), "X" op spans
 *   pid RS_PF_PID_COLL   "collectives": a thread per communicator, "X"
 *                        spans of whole collectives
 *   pid RS_PF_PID_NET    "network": threads "PFC", "drops", "faults" with
 *                        instant events, and "C" counters (util, queue) of
 *                        the busiest links
 * Trace-event viewers need the spans of one thread properly nested, but a
 * rank's ops may overlap (compute with a prefetching collective), so each
 * rank's (and communicator's) spans are sorted by start and split into
 * lanes: a span goes to the first lane where it nests in, or starts after,
 * what is open there. Lane k > 0 is the thread "rank N (overlap k)".
 * tid = 1 + id * RS_EXPORT_MAX_LANES + lane.
 *
 * Times: "ts" and "dur" are microseconds written as exact decimals of the
 * integer picoseconds (6 decimals); a JSON reader's double keeps them to
 * the picosecond up to 2^53 ps (about 2.5 hours of simulated time).
 *
 * Two passes over the file: the first buffers op and coll records (sorted
 * afterwards), streams instant events and finds the busiest links (the
 * largest sampled cumulative tx_bytes); the second streams the samples of
 * those links as counters.
 */
#include "export.h"
#include "array.h"
#include "export_int.h"

#include "tables.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RS_PF_PID_COLL 1000000001u
#define RS_PF_PID_NET 1000000002u
enum { TID_PFC = 1, TID_DROP = 2, TID_FAULT = 3 };

void rs_perfetto_opts_default(rs_perfetto_opts *o)
{
    o->links = 8;
}

/* One buffered span: an op (track = rank) or a collective (track = comm). */
typedef struct span {
    uint64_t start, end, bytes;
    uint64_t seq;        /* record index: a stable tie-break */
    uint64_t id;         /* coll: instance id */
    uint32_t track;      /* rank or communicator */
    uint32_t comm;       /* op: communicator or RS_TL_NONE; coll: nranks */
    uint32_t name, extra; /* string ids: op kind; label (op) or algorithm (coll) */
} span;

typedef struct spans {
    span *v;
    size_t n, cap;
} spans;

typedef struct port_max {
    uint32_t port;
    uint64_t tx;
} port_max;

typedef struct ctx {
    FILE *f;
    rs_strtab *strs;
    rs_u64map names;     /* name key -> string id */
    rs_u64map port_tx;   /* port -> largest sampled tx_bytes */
    rs_u64map charted;   /* ports charted as counters -> 1 */
    spans ops, colls;
    uint32_t hb;         /* ranks per HB domain; 0 = unknown (one process) */
    rs_export_counts cnt;
    uint64_t *stack[RS_EXPORT_MAX_LANES]; /* open span ends per lane */
    size_t depth[RS_EXPORT_MAX_LANES], cap[RS_EXPORT_MAX_LANES];
} ctx;

static const char *name_of(const ctx *c, uint32_t space, uint64_t id)
{
    uint64_t *v = rs_u64map_get(&c->names, rs_an_name_key(space, id));
    return v ? rs_strtab_str(c->strs, (uint32_t)*v) : "";
}

static int push_span(spans *s, const span *x)
{
    if (rs_array_reserve(&s->v, &s->cap, s->n + 1, sizeof *s->v, 1024) != RS_OK)
        return -1;
    s->v[s->n++] = *x;
    return 0;
}

/* ---- event writers -------------------------------------------------------- */

static void sep(ctx *c)
{
    fputs(",\n", c->f);
}

static void meta(ctx *c, const char *what, uint32_t pid, int tid, const char *name, int64_t sort)
{
    sep(c);
    fprintf(c->f, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%" PRIu32, what, pid);
    if (tid >= 0)
        fprintf(c->f, ",\"tid\":%d", tid);
    if (name) {
        fputs(",\"args\":{\"name\":", c->f);
        rs_json_str(c->f, name);
        fputs("}}", c->f);
    } else {
        fprintf(c->f, ",\"args\":{\"sort_index\":%" PRId64 "}}", sort);
    }
}

static void meta_thread(ctx *c, uint32_t pid, uint64_t tid, const char *name)
{
    sep(c);
    fprintf(c->f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu64 ",\"args\":{\"name\":",
            pid, tid);
    rs_json_str(c->f, name);
    fprintf(c->f, "}},\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu64
            ",\"args\":{\"sort_index\":%" PRIu64 "}}", pid, tid, tid);
    c->cnt.threads++;
}

static void instant(ctx *c, const char *name, const char *cat, int tid, int global, uint64_t ps)
{
    sep(c);
    fputs("{\"name\":", c->f);
    rs_json_str(c->f, name);
    fprintf(c->f, ",\"cat\":\"%s\",\"ph\":\"i\",\"s\":\"%s\",\"ts\":", cat, global ? "g" : "t");
    rs_ps_as_us(c->f, ps);
    fprintf(c->f, ",\"pid\":%u,\"tid\":%d,\"args\":{", RS_PF_PID_NET, tid);
    c->cnt.instants++;
}

static void port_arg(ctx *c, uint32_t port)
{
    const char *n = name_of(c, 0, port);
    fputs("\"port\":", c->f);
    if (n[0])
        rs_json_str(c->f, n);
    else
        fprintf(c->f, "%" PRIu32, port);
}

static void write_instant(ctx *c, const rs_tlread_rec *r)
{
    char name[160];
    switch (r->kind) {
    case RS_TL_PFC:
        instant(c, r->u.pfc.pause ? "PFC pause" : "PFC resume", "pfc", TID_PFC, 0, r->u.pfc.time_ps);
        port_arg(c, r->u.pfc.port);
        fprintf(c->f, ",\"prio_mask\":%u}}", (unsigned)r->u.pfc.prio_mask);
        break;
    case RS_TL_DROP:
        snprintf(name, sizeof name, "drop %s", r->u.drop.reason);
        instant(c, name, "drop", TID_DROP, 0, r->u.drop.time_ps);
        port_arg(c, r->u.drop.port);
        fprintf(c->f, ",\"packets\":%" PRIu64 ",\"bytes\":%" PRIu64 "}}", r->u.drop.packets, r->u.drop.bytes);
        break;
    case RS_TL_FAULT:
        snprintf(name, sizeof name, "%s %s", r->u.fault.kind, r->u.fault.target);
        instant(c, name, "fault", TID_FAULT, 1, r->u.fault.time_ps);
        fputs("\"target\":", c->f);
        rs_json_str(c->f, r->u.fault.target);
        fputs(",\"kind\":", c->f);
        rs_json_str(c->f, r->u.fault.kind);
        fputs(",\"detail\":", c->f);
        rs_json_str(c->f, r->u.fault.detail);
        fputs("}}", c->f);
        break;
    default:
        break;
    }
}

/* ---- spans ------------------------------------------------------------------ */

static int cmp_span(const void *x, const void *y)
{
    const span *a = x, *b = y;
    if (a->track != b->track)
        return a->track < b->track ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    if (a->end != b->end)
        return a->end > b->end ? -1 : 1; /* the enclosing span first */
    return (a->seq > b->seq) - (a->seq < b->seq);
}

/* The lane of span [start, end) given the spans placed before it on its
 * track (sorted by start); -1 without memory. */
static int place(ctx *c, uint64_t start, uint64_t end)
{
    for (int k = 0; k < RS_EXPORT_MAX_LANES; k++) {
        while (c->depth[k] && c->stack[k][c->depth[k] - 1] <= start)
            c->depth[k]--;
        if (c->depth[k] && end > c->stack[k][c->depth[k] - 1] && k + 1 < RS_EXPORT_MAX_LANES)
            continue;
        if (rs_array_reserve(&c->stack[k], &c->cap[k], c->depth[k] + 1, sizeof *c->stack[k], 16) != RS_OK)
            return -1;
        /* The last lane takes what fits nowhere (improperly nested there). */
        if (!c->depth[k] || end <= c->stack[k][c->depth[k] - 1])
            c->stack[k][c->depth[k]++] = end;
        return k;
    }
    return RS_EXPORT_MAX_LANES - 1;
}

static uint32_t domain_pid(const ctx *c, uint32_t rank)
{
    return 1u + (c->hb ? rank / c->hb : 0u);
}

static int write_ops(ctx *c)
{
    spans *s = &c->ops;
    qsort(s->v, s->n, sizeof *s->v, cmp_span);
    uint32_t last_pid = 0;
    int have_pid = 0;
    for (size_t i = 0, j; i < s->n; i = j) {
        uint32_t rank = s->v[i].track, pid = domain_pid(c, rank);
        for (j = i; j < s->n && s->v[j].track == rank; j++)
            ;
        if (!have_pid || pid != last_pid) { /* ranks are sorted: each domain once */
            char pname[64];
            if (c->hb)
                snprintf(pname, sizeof pname, "HB domain %" PRIu32, pid - 1);
            else
                snprintf(pname, sizeof pname, "GPUs");
            meta(c, "process_name", pid, -1, pname, 0);
            meta(c, "process_sort_index", pid, -1, NULL, (int64_t)pid);
            c->cnt.processes++;
            last_pid = pid;
            have_pid = 1;
        }
        memset(c->depth, 0, sizeof c->depth);
        unsigned used = 0;
        for (size_t k = i; k < j; k++) {
            const span *x = &s->v[k];
            int lane = place(c, x->start, x->end);
            if (lane < 0)
                return -1;
            used |= 1u << lane;
            uint64_t tid = 1 + (uint64_t)rank * RS_EXPORT_MAX_LANES + (uint64_t)lane;
            const char *op = rs_strtab_str(c->strs, x->name);
            sep(c);
            fputs("{\"name\":", c->f);
            rs_json_str(c->f, op);
            fprintf(c->f, ",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":", strcmp(op, "compute") ? "comm" : "compute");
            rs_ps_as_us(c->f, x->start);
            fputs(",\"dur\":", c->f);
            rs_ps_as_us(c->f, x->end - x->start);
            fprintf(c->f, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu64 ",\"args\":{\"bytes\":%" PRIu64, pid, tid, x->bytes);
            if (x->comm != RS_TL_NONE) {
                const char *cn = name_of(c, 2, x->comm);
                fputs(",\"comm\":", c->f);
                if (cn[0])
                    rs_json_str(c->f, cn);
                else
                    fprintf(c->f, "%" PRIu32, x->comm);
            }
            const char *label = rs_strtab_str(c->strs, x->extra);
            if (label[0]) {
                fputs(",\"label\":", c->f);
                rs_json_str(c->f, label);
            }
            fputs("}}", c->f);
            c->cnt.ops++;
        }
        const char *rn = name_of(c, 1, rank);
        for (int lane = 0; lane < RS_EXPORT_MAX_LANES; lane++) {
            if (!(used & (1u << lane)))
                continue;
            char tname[200];
            int n = rn[0] ? snprintf(tname, sizeof tname, "%s (rank %" PRIu32 ")", rn, rank)
                          : snprintf(tname, sizeof tname, "rank %" PRIu32, rank);
            if (lane && n > 0 && (size_t)n < sizeof tname)
                snprintf(tname + n, sizeof tname - (size_t)n, " overlap %d", lane);
            meta_thread(c, pid, 1 + (uint64_t)rank * RS_EXPORT_MAX_LANES + (uint64_t)lane, tname);
        }
    }
    return 0;
}

static int write_colls(ctx *c)
{
    spans *s = &c->colls;
    qsort(s->v, s->n, sizeof *s->v, cmp_span);
    for (size_t i = 0, j; i < s->n; i = j) {
        uint32_t comm = s->v[i].track;
        for (j = i; j < s->n && s->v[j].track == comm; j++)
            ;
        memset(c->depth, 0, sizeof c->depth);
        unsigned used = 0;
        for (size_t k = i; k < j; k++) {
            const span *x = &s->v[k];
            int lane = place(c, x->start, x->end);
            if (lane < 0)
                return -1;
            used |= 1u << lane;
            sep(c);
            fputs("{\"name\":", c->f);
            rs_json_str(c->f, rs_strtab_str(c->strs, x->name));
            fputs(",\"cat\":\"collective\",\"ph\":\"X\",\"ts\":", c->f);
            rs_ps_as_us(c->f, x->start);
            fputs(",\"dur\":", c->f);
            rs_ps_as_us(c->f, x->end - x->start);
            fprintf(c->f, ",\"pid\":%u,\"tid\":%" PRIu64 ",\"args\":{\"id\":%" PRIu64 ",\"algo\":", RS_PF_PID_COLL,
                    1 + (uint64_t)comm * RS_EXPORT_MAX_LANES + (uint64_t)lane, x->id);
            rs_json_str(c->f, rs_strtab_str(c->strs, x->extra));
            fprintf(c->f, ",\"nranks\":%" PRIu32 ",\"bytes\":%" PRIu64 "}}", x->comm, x->bytes);
            c->cnt.colls++;
        }
        const char *cn = name_of(c, 2, comm);
        for (int lane = 0; lane < RS_EXPORT_MAX_LANES; lane++) {
            if (!(used & (1u << lane)))
                continue;
            char tname[200];
            int n = cn[0] ? snprintf(tname, sizeof tname, "%s (comm %" PRIu32 ")", cn, comm)
                          : snprintf(tname, sizeof tname, "comm %" PRIu32, comm);
            if (lane && n > 0 && (size_t)n < sizeof tname)
                snprintf(tname + n, sizeof tname - (size_t)n, " overlap %d", lane);
            meta_thread(c, RS_PF_PID_COLL, 1 + (uint64_t)comm * RS_EXPORT_MAX_LANES + (uint64_t)lane, tname);
        }
    }
    return 0;
}

/* ---- busiest links ---------------------------------------------------------- */

static int cmp_port(const void *x, const void *y)
{
    const port_max *a = x, *b = y;
    if (a->tx != b->tx)
        return a->tx > b->tx ? -1 : 1;
    return (a->port > b->port) - (a->port < b->port);
}

/* Mark the `links` ports with the largest sampled tx_bytes in c->charted. */
static int choose_links(ctx *c, uint32_t links)
{
    const rs_u64map *m = &c->port_tx;
    if (!m->count || !links)
        return 0;
    port_max *v = malloc(m->count * sizeof *v);
    if (!v)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < m->count; i++)
        v[n++] = (port_max){ (uint32_t)m->keys[i], m->vals[i] };
    qsort(v, n, sizeof *v, cmp_port);
    for (size_t i = 0; i < n && i < links; i++)
        if (!rs_u64map_upsert(&c->charted, v[i].port, 1)) {
            free(v);
            return -1;
        }
    free(v);
    return 0;
}

static void counter(ctx *c, const char *what, uint32_t port, uint64_t ps, const char *key)
{
    const char *n = name_of(c, 0, port);
    char name[200];
    if (n[0])
        snprintf(name, sizeof name, "%s %s", what, n);
    else
        snprintf(name, sizeof name, "%s port %" PRIu32, what, port);
    sep(c);
    fputs("{\"name\":", c->f);
    rs_json_str(c->f, name);
    fputs(",\"cat\":\"link\",\"ph\":\"C\",\"ts\":", c->f);
    rs_ps_as_us(c->f, ps);
    fprintf(c->f, ",\"pid\":%u,\"args\":{\"%s\":", RS_PF_PID_NET, key);
    c->cnt.counters++;
}

/* Second pass: counters for the charted links. */
static int write_counters(ctx *c, const char *tl_path, rs_an_err *err)
{
    if (!c->charted.count)
        return RS_AN_OK;
    rs_tlread *r = NULL;
    int rc = rs_tlread_open(tl_path, &r, err);
    if (rc != RS_AN_OK)
        return rc;
    rs_tlread_rec rec;
    while ((rc = rs_tlread_next(r, &rec, err)) == 1) {
        if (rec.kind != RS_TL_SAMPLE || !rs_u64map_get(&c->charted, rec.u.sample.port))
            continue;
        double u = isfinite(rec.u.sample.util) ? rec.u.sample.util : 0.0;
        counter(c, "util", rec.u.sample.port, rec.u.sample.time_ps, "util");
        fprintf(c->f, "%.17g}}", u);
        counter(c, "queue", rec.u.sample.port, rec.u.sample.time_ps, "bytes");
        fprintf(c->f, "%" PRIu64 "}}", rec.u.sample.queue_bytes);
    }
    rs_tlread_close(r);
    return rc < 0 ? rc : RS_AN_OK;
}

/* ---- header ------------------------------------------------------------------ */

/* Ranks per HB domain: the header's topology "hb_size", else the
 * scenario's topology.hb_size; 0 if neither says. */
static uint32_t hb_size_of(const rs_tlread_header *h)
{
    for (size_t i = 0; i < h->n_topology; i++)
        if (strcmp(h->topology[i].name, "hb_size") == 0 && h->topology[i].value <= UINT32_MAX)
            return (uint32_t)h->topology[i].value;
    json_t *s = h->scenario_json ? json_loads(h->scenario_json, 0, NULL) : NULL;
    json_t *v = json_object_get(json_object_get(s, "topology"), "hb_size");
    uint32_t hb = json_is_integer(v) && json_integer_value(v) > 0 && json_integer_value(v) <= UINT32_MAX
                      ? (uint32_t)json_integer_value(v) : 0;
    json_decref(s);
    return hb;
}

static void write_prologue(ctx *c, const rs_tlread_header *h)
{
    fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"source\":\"railsim-timeline\",\"railsim_version\":", c->f);
    rs_json_str(c->f, h->railsim_version);
    fprintf(c->f, ",\"seed\":\"%" PRIu64 "\",\"partial\":%s,\"trace_hash\":", h->seed, h->partial ? "true" : "false");
    rs_json_str(c->f, h->trace_hash);
    fputs("},\n\"traceEvents\":[\n", c->f);
    /* The first event has no leading comma; every later one has. */
    fprintf(c->f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"args\":{\"name\":\"collectives\"}}",
            RS_PF_PID_COLL);
    meta(c, "process_sort_index", RS_PF_PID_COLL, -1, NULL, 1000000001);
    meta(c, "process_name", RS_PF_PID_NET, -1, "network", 0);
    meta(c, "process_sort_index", RS_PF_PID_NET, -1, NULL, 1000000002);
    meta_thread(c, RS_PF_PID_NET, TID_PFC, "PFC");
    meta_thread(c, RS_PF_PID_NET, TID_DROP, "drops");
    meta_thread(c, RS_PF_PID_NET, TID_FAULT, "faults");
    c->cnt.processes += 2;
}

static void ctx_fini(ctx *c)
{
    rs_strtab_destroy(c->strs);
    rs_u64map_fini(&c->names);
    rs_u64map_fini(&c->port_tx);
    rs_u64map_fini(&c->charted);
    free(c->ops.v);
    free(c->colls.v);
    for (int k = 0; k < RS_EXPORT_MAX_LANES; k++)
        free(c->stack[k]);
}

int rs_export_perfetto(const char *tl_path, const char *out_path, const rs_perfetto_opts *opts,
                       rs_export_counts *counts, rs_an_err *err)
{
    rs_perfetto_opts o;
    rs_perfetto_opts_default(&o);
    if (opts)
        o = *opts;
    ctx c;
    memset(&c, 0, sizeof c);
    rs_u64map_init(&c.names);
    rs_u64map_init(&c.port_tx);
    rs_u64map_init(&c.charted);
    rs_xfile out;
    out.f = NULL;
    rs_tlread *r = NULL;
    int rc = rs_tlread_open(tl_path, &r, err);
    if (rc != RS_AN_OK)
        return rc;
    c.strs = rs_strtab_create();
    if (!c.strs)
        goto oom;
    const rs_tlread_header *h = rs_tlread_header_get(r);
    c.hb = hb_size_of(h);
    if ((rc = rs_xfile_open(&out, out_path, err)) != RS_AN_OK)
        goto fail;
    c.f = out.f;
    write_prologue(&c, h);

    rs_tlread_rec rec;
    while ((rc = rs_tlread_next(r, &rec, err)) == 1) {
        c.cnt.records++;
        switch (rec.kind) {
        case RS_TL_NAME: {
            uint32_t sid = rs_strtab_intern(c.strs, rec.u.name.name);
            uint64_t *v = rs_u64map_upsert(&c.names, rs_an_name_key(rec.u.name.space, rec.u.name.id), 0);
            if (sid == UINT32_MAX || !v)
                goto oom;
            *v = sid;
            break;
        }
        case RS_TL_OP: {
            span x = { rec.u.op.start_ps, rec.u.op.end_ps, rec.u.op.bytes, rec.index, 0, rec.u.op.rank,
                       rec.u.op.comm, rs_strtab_intern(c.strs, rec.u.op.op),
                       rs_strtab_intern(c.strs, rec.u.op.label) };
            if (x.name == UINT32_MAX || x.extra == UINT32_MAX || push_span(&c.ops, &x))
                goto oom;
            break;
        }
        case RS_TL_COLL: {
            span x = { rec.u.coll.start_ps, rec.u.coll.end_ps, rec.u.coll.bytes, rec.index, rec.u.coll.id,
                       rec.u.coll.comm, rec.u.coll.nranks, rs_strtab_intern(c.strs, rec.u.coll.op),
                       rs_strtab_intern(c.strs, rec.u.coll.algo) };
            if (x.name == UINT32_MAX || x.extra == UINT32_MAX || push_span(&c.colls, &x))
                goto oom;
            break;
        }
        case RS_TL_SAMPLE: {
            uint64_t *v = rs_u64map_upsert(&c.port_tx, rec.u.sample.port, 0);
            if (!v)
                goto oom;
            if (rec.u.sample.tx_bytes > *v)
                *v = rec.u.sample.tx_bytes;
            break;
        }
        case RS_TL_PFC:
        case RS_TL_DROP:
        case RS_TL_FAULT:
            write_instant(&c, &rec);
            break;
        default:
            break;
        }
    }
    if (rc < 0)
        goto fail;
    if (write_ops(&c) || write_colls(&c) || choose_links(&c, o.links))
        goto oom;
    if ((rc = write_counters(&c, tl_path, err)) != RS_AN_OK)
        goto fail;
    fputs("\n]}\n", c.f);
    if ((rc = rs_xfile_commit(&out, err)) != RS_AN_OK)
        goto fail;
    if (counts)
        *counts = c.cnt;
    ctx_fini(&c);
    rs_tlread_close(r);
    return RS_AN_OK;
oom:
    rc = rs_an_errf(err, RS_AN_ENOMEM, "%s: out of memory exporting the timeline", tl_path);
fail:
    rs_xfile_abort(&out);
    ctx_fini(&c);
    rs_tlread_close(r);
    return rc;
}
