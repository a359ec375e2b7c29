/*
 * report.c - `railsim report DIR` (report.h).
 *
 * The summary is read with jansson and never trusted: a missing or
 * mistyped field prints as "-" rather than failing, because a report of an
 * older or partial summary is still useful; only a file that is not JSON
 * or not a railsim summary is an error.
 */
#include "report.h"

#include "fmt.h"
#include "tlstats.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- formatting --------------------------------------------------------- */

/* Rotating static buffers so one printf can hold several formatted values. */
static char *slot(void)
{
    static char bufs[16][48];
    static unsigned k;
    return bufs[k++ % 16];
}

/* fmt.h's conventions, in a rotating slot. */
static const char *fmt_time(uint64_t ps)
{
    return rs_fmt_time(slot(), 48, (double)ps);
}

static const char *fmt_bytes(uint64_t v)
{
    return rs_fmt_bytes(slot(), 48, (double)v);
}

static const char *fmt_pct(uint64_t part, uint64_t whole)
{
    char *b = slot();
    if (whole == 0)
        snprintf(b, 48, "-");
    else
        snprintf(b, 48, "%.1f %%", 100.0 * (double)part / (double)whole);
    return b;
}

/* ---- summary access: missing or mistyped fields print as "-" ----------- */

static const json_t *get(const json_t *o, const char *path)
{
    char key[64];
    while (o && *path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        if (n >= sizeof key)
            return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        o = json_is_object(o) ? json_object_get(o, key) : NULL;
        path += n + (dot ? 1 : 0);
    }
    return o;
}

static int has_u(const json_t *o, const char *path)
{
    const json_t *v = get(o, path);
    return json_is_integer(v) && json_integer_value(v) >= 0;
}

static uint64_t get_u(const json_t *o, const char *path)
{
    const json_t *v = get(o, path);
    return json_is_integer(v) && json_integer_value(v) >= 0 ? (uint64_t)json_integer_value(v) : 0;
}

/* An integer field as text, or "-". */
static const char *str_u(const json_t *o, const char *path)
{
    char *b = slot();
    if (!has_u(o, path))
        return "-";
    snprintf(b, 48, "%" PRIu64, get_u(o, path));
    return b;
}

static const char *str_s(const json_t *o, const char *path)
{
    const json_t *v = get(o, path);
    return json_is_string(v) ? json_string_value(v) : "-";
}

static const char *str_time(const json_t *o, const char *path)
{
    return has_u(o, path) ? fmt_time(get_u(o, path)) : "-";
}

/* ---- the summary part --------------------------------------------------- */

typedef struct port_row {
    const json_t *p;
    size_t index;
} port_row;

static int cmp_tx(const void *x, const void *y)
{
    const port_row *a = x, *b = y;
    uint64_t ta = get_u(a->p, "tx_bytes"), tb = get_u(b->p, "tx_bytes");
    if (ta != tb)
        return ta > tb ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

static int cmp_queue(const void *x, const void *y)
{
    const port_row *a = x, *b = y;
    uint64_t qa = get_u(a->p, "max_queue_bytes"), qb = get_u(b->p, "max_queue_bytes");
    if (qa != qb)
        return qa > qb ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

static void port_table(FILE *out, const char *title, port_row *rows, size_t n, size_t total)
{
    size_t shown = n < RS_REPORT_TOP ? n : RS_REPORT_TOP;
    fprintf(out, "\nbusiest ports by %s (top %zu of %zu)\n", title, shown, total);
    fprintf(out, "  %-20s %-20s %14s %12s %12s %8s %8s %8s %10s\n", "port", "peer", "tx_bytes",
            "tx_packets", "max_queue", "drops", "pfc_sent", "pfc_rcvd", "ecn_marked");
    for (size_t i = 0; i < shown; i++) {
        const json_t *p = rows[i].p;
        fprintf(out, "  %-20s %-20s %14s %12s %12s %8s %8s %8s %10s\n", str_s(p, "name"), str_s(p, "peer"),
                str_u(p, "tx_bytes"), str_u(p, "tx_packets"), str_u(p, "max_queue_bytes"),
                str_u(p, "drops"), str_u(p, "pfc_sent"), str_u(p, "pfc_received"), str_u(p, "ecn_marked"));
    }
}

static int print_summary(FILE *out, const char *path, const json_t *s)
{
    const json_t *topo = get(s, "topology");
    fprintf(out, "railsim report: %s\n", path);
    fprintf(out, "  status      %s (railsim %s, seed %s)\n", str_s(s, "status"), str_s(s, "railsim"),
            str_u(s, "scenario.seed"));
    fprintf(out, "  topology    %s, %s GPUs in %s HB domain(s), %s plane(s), %s tier(s), %s switches",
            str_s(topo, "kind"), str_u(topo, "gpus"), str_u(topo, "hb_domains"), str_u(topo, "planes"),
            str_u(topo, "tiers"), str_u(topo, "switches"));
    /* Summaries before switches_logical have none: nothing to add. */
    if (has_u(topo, "switches_logical") && get_u(topo, "switches_logical") != get_u(topo, "switches"))
        fprintf(out, " (%s simulated, one per rail)", str_u(topo, "switches_logical"));
    fprintf(out, ", %s links\n", str_u(topo, "links"));
    fprintf(out, "  simulated   %s, %s events\n", str_time(s, "sim_end_ps"), str_u(s, "events"));
    fprintf(out, "  flows       %s of %s completed, %s\n", str_u(s, "flows.completed"), str_u(s, "flows.count"),
            has_u(s, "flows.bytes") ? fmt_bytes(get_u(s, "flows.bytes")) : "-");
    if (has_u(s, "flows.fct_ps.p50"))
        fprintf(out, "  FCT         min %s, mean %s, p50 %s, p99 %s, max %s\n", str_time(s, "flows.fct_ps.min"),
                str_time(s, "flows.fct_ps.mean"), str_time(s, "flows.fct_ps.p50"),
                str_time(s, "flows.fct_ps.p99"), str_time(s, "flows.fct_ps.max"));
    const json_t *co = get(s, "collective");
    if (json_is_object(co)) {
        /* NCCL's protocol after the algorithm, where the run had one. */
        const char *proto = json_string_value(get(co, "protocol"));
        fprintf(out, "  collective  %s (%s%s%s), %s ranks, %s, %zu of %s iteration(s)", str_s(co, "op"),
                str_s(co, "algo"), proto ? "/" : "", proto ? proto : "", str_u(co, "ranks"), has_u(co, "bytes") ? fmt_bytes(get_u(co, "bytes")) : "-",
                json_array_size(get(co, "times_ps")), str_u(co, "iters"));
        if (has_u(co, "time_ps"))
            fprintf(out, ": mean %s", fmt_time(get_u(co, "time_ps")));
        /* algbw_gbps: a summary of railsim before algbw_GBps (deprecated). */
        const char *ak = json_is_number(get(co, "algbw_GBps")) ? "algbw_GBps" : "algbw_gbps";
        const char *bk = json_is_number(get(co, "busbw_GBps")) ? "busbw_GBps" : "busbw_gbps";
        if (json_is_number(get(co, ak)) && json_is_number(get(co, bk)))
            fprintf(out, ", algbw %.2f GB/s, busbw %.2f GB/s", json_number_value(get(co, ak)),
                    json_number_value(get(co, bk)));
        fputc('\n', out);
    }
    fprintf(out, "  packets     %s sent, %s delivered, %s dropped, %s retransmitted, %s timeouts\n",
            str_u(s, "packets.sent"), str_u(s, "packets.delivered"), str_u(s, "packets.dropped"),
            str_u(s, "packets.retransmitted"), str_u(s, "packets.timeouts"));
    fprintf(out, "  PFC         %s pauses, %s resumes, paused %s\n", str_u(s, "pfc.pauses_sent"),
            str_u(s, "pfc.resumes_sent"), str_time(s, "pfc.paused_ps"));
    fprintf(out, "  ECN/CNP     %s marked, %s CNPs sent, %s received\n", str_u(s, "ecn.marked"),
            str_u(s, "cnp.sent"), str_u(s, "cnp.received"));
    fprintf(out, "  drops       %s packets; deepest switch queue %s\n", str_u(s, "packets.dropped"),
            has_u(s, "max_queue_bytes") ? fmt_bytes(get_u(s, "max_queue_bytes")) : "-");

    /* A shared cluster (docs/shared-clusters.md): a row per job. */
    const json_t *jobs = get(s, "jobs");
    if (json_is_array(jobs) && json_array_size(jobs)) {
        fprintf(out, "\njobs (%zu), each against itself alone on the same GPUs\n", json_array_size(jobs));
        fprintf(out, "  %-16s %-9s %6s %-12s %14s %14s %14s %10s\n", "job", "kind", "gpus", "placement", "time",
                "alone", "exposed comm", "slowdown");
        for (size_t i = 0; i < json_array_size(jobs); i++) {
            const json_t *j = json_array_get(jobs, i);
            const json_t *sd = get(j, "slowdown");
            char slow[32] = "-";
            if (json_is_number(sd))
                snprintf(slow, sizeof slow, "%.4fx", json_number_value(sd));
            fprintf(out, "  %-16s %-9s %6s %-12s %14s %14s %14s %10s\n", str_s(j, "name"), str_s(j, "kind"),
                    str_u(j, "gpus"), str_s(j, "placement"), str_time(j, "time_ps"), str_time(j, "alone_time_ps"),
                    str_time(j, "iteration.exposed_comm_ps.mean"), slow);
        }
        const json_t *in = get(s, "interference");
        for (size_t i = 0; json_is_array(in) && i < json_array_size(in); i++) {
            const json_t *x = json_array_get(in, i), *nm = get(x, "jobs"), *by = get(x, "bytes");
            const json_t *b0 = json_array_get(by, 0), *b1 = json_array_get(by, 1);
            fprintf(out, "  shared: %s and %s, %s ports, their bytes there %s and %s\n",
                    json_is_string(json_array_get(nm, 0)) ? json_string_value(json_array_get(nm, 0)) : "-",
                    json_is_string(json_array_get(nm, 1)) ? json_string_value(json_array_get(nm, 1)) : "-",
                    str_u(x, "ports"), json_is_integer(b0) ? fmt_bytes((uint64_t)json_integer_value(b0)) : "-",
                    json_is_integer(b1) ? fmt_bytes((uint64_t)json_integer_value(b1)) : "-");
        }
    }

    const json_t *ports = get(s, "ports");
    size_t n = json_is_array(ports) ? json_array_size(ports) : 0;
    if (n == 0)
        return RS_AN_OK;
    port_row *rows = calloc(n, sizeof *rows);
    if (!rows)
        return RS_AN_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (json_is_object(json_array_get(ports, i)))
            rows[m++] = (port_row){ json_array_get(ports, i), i };
    qsort(rows, m, sizeof *rows, cmp_tx);
    port_table(out, "tx_bytes", rows, m, m);
    qsort(rows, m, sizeof *rows, cmp_queue);
    port_table(out, "max queue", rows, m, m);
    free(rows);
    return RS_AN_OK;
}

/* ---- the timeline part --------------------------------------------------- */

static void print_ranks(FILE *out, const rs_tlstats *t)
{
    fprintf(out, "\ncompute vs exposed communication per rank (%zu ranks)\n", t->n_ranks);
    if (t->n_ranks <= RS_REPORT_RANK_ROWS) {
        fprintf(out, "  %-8s %-14s %14s %14s %14s %14s %9s\n", "rank", "name", "span", "compute", "comm",
                "exposed comm", "exposed");
        for (size_t i = 0; i < t->n_ranks; i++) {
            const rs_tlstats_rank *r = &t->ranks[i];
            fprintf(out, "  %-8" PRIu32 " %-14s %14s %14s %14s %14s %9s\n", r->rank, r->name[0] ? r->name : "-",
                    fmt_time(r->last_ps - r->first_ps), fmt_time(r->compute_ps), fmt_time(r->comm_ps),
                    fmt_time(r->exposed_ps), fmt_pct(r->exposed_ps, r->last_ps - r->first_ps));
        }
        return;
    }
    /* The spread: min, mean, max of each column, with the ranks at the ends. */
    static const char *const col[] = { "span", "compute", "comm", "exposed comm" };
    fprintf(out, "  %-14s %14s %14s %14s %9s %9s\n", "", "min", "mean", "max", "min rank", "max rank");
    for (int c = 0; c < 4; c++) {
        uint64_t lo = UINT64_MAX, hi = 0;
        uint32_t rlo = 0, rhi = 0;
        double sum = 0;
        for (size_t i = 0; i < t->n_ranks; i++) {
            const rs_tlstats_rank *r = &t->ranks[i];
            uint64_t v = c == 0 ? r->last_ps - r->first_ps : c == 1 ? r->compute_ps : c == 2 ? r->comm_ps
                                                                                      : r->exposed_ps;
            sum += (double)v;
            if (v < lo) {
                lo = v;
                rlo = r->rank;
            }
            if (v > hi) {
                hi = v;
                rhi = r->rank;
            }
        }
        fprintf(out, "  %-14s %14s %14s %14s %9" PRIu32 " %9" PRIu32 "\n", col[c], fmt_time(lo),
                fmt_time((uint64_t)(sum / (double)t->n_ranks + 0.5)), fmt_time(hi), rlo, rhi);
    }
}

static void print_timeline(FILE *out, const char *path, const rs_tlstats *t)
{
    static const char *const kind_name[11] = { "", "name", "op", "coll", "flow", "sample",
                                               "pfc", "ecn", "drop", "fault", "end" };
    uint64_t total = 0;
    for (int k = 1; k < 10; k++)
        total += t->records[k];
    fprintf(out, "\ntimeline %s: %s, %" PRIu64 " records (", path,
            t->complete ? "complete" : t->partial ? "partial (interrupted run)" : "incomplete", total);
    int first = 1;
    for (int k = 2; k < 10; k++) {
        if (!t->records[k])
            continue;
        fprintf(out, "%s%" PRIu64 " %s", first ? "" : ", ", t->records[k], kind_name[k]);
        first = 0;
    }
    fprintf(out, "%s)", first ? "no events" : "");
    if (t->skipped)
        fprintf(out, ", %" PRIu64 " of unknown kinds skipped", t->skipped);
    fputc('\n', out);

    if (t->n_by_op) {
        uint64_t all = 0;
        for (size_t i = 0; i < t->n_by_op; i++)
            all += t->by_op[i].total_ps;
        fprintf(out, "  ops         from %s to %s (%s)\n", fmt_time(t->ops_first_ps), fmt_time(t->ops_last_ps),
                fmt_time(t->ops_last_ps - t->ops_first_ps));
        fprintf(out, "\nop time by kind (summed over ranks)\n");
        fprintf(out, "  %-16s %10s %16s %14s %16s %8s\n", "op", "count", "total", "mean", "bytes", "share");
        for (size_t i = 0; i < t->n_by_op; i++) {
            const rs_tlstats_op *o = &t->by_op[i];
            fprintf(out, "  %-16s %10" PRIu64 " %16s %14s %16s %8s\n", o->op, o->count, fmt_time(o->total_ps),
                    fmt_time(o->count ? o->total_ps / o->count : 0), fmt_bytes(o->bytes),
                    fmt_pct(o->total_ps, all));
        }
        fprintf(out, "\nop time by dimension (communicator; '-' = no communicator)\n");
        fprintf(out, "  %-10s %-16s %10s %16s %14s %16s\n", "dimension", "op", "count", "total", "mean", "bytes");
        for (size_t i = 0; i < t->n_by_dim; i++) {
            const rs_tlstats_op *o = &t->by_dim[i];
            fprintf(out, "  %-10s %-16s %10" PRIu64 " %16s %14s %16s\n", o->dim, o->op, o->count,
                    fmt_time(o->total_ps), fmt_time(o->count ? o->total_ps / o->count : 0), fmt_bytes(o->bytes));
        }
        print_ranks(out, t);
    }
    if (t->n_colls) {
        fprintf(out, "\ncollective times by op\n");
        fprintf(out, "  %-16s %-14s %8s %14s %14s %14s %14s\n", "op", "algo", "count", "bytes", "mean", "min",
                "max");
        for (size_t i = 0; i < t->n_colls; i++) {
            const rs_tlstats_coll *c = &t->colls[i];
            fprintf(out, "  %-16s %-14s %8" PRIu64 " %14s %14s %14s %14s\n", c->op, c->algo[0] ? c->algo : "-",
                    c->count, fmt_bytes(c->bytes), fmt_time(c->total_ps / c->count), fmt_time(c->min_ps),
                    fmt_time(c->max_ps));
        }
    }
    if (t->flows)
        fprintf(out, "\nflows (timeline) %" PRIu64 ", %s: FCT min %s, mean %s, p50 %s, p99 %s, max %s\n", t->flows,
                fmt_bytes(t->flow_bytes), fmt_time(t->fct_min_ps), fmt_time((uint64_t)(t->fct_mean_ps + 0.5)),
                fmt_time(t->fct_p50_ps), fmt_time(t->fct_p99_ps), fmt_time(t->fct_max_ps));
    if (t->n_ports) {
        size_t shown = t->n_ports < RS_REPORT_TOP ? t->n_ports : RS_REPORT_TOP;
        fprintf(out, "\nlinks by mean sampled utilisation (top %zu of %zu sampled ports)\n", shown, t->n_ports);
        fprintf(out, "  %-24s %8s %10s %10s %14s %16s\n", "port", "samples", "mean util", "max util", "max queue",
                "tx_bytes");
        for (size_t i = 0; i < shown; i++) {
            const rs_tlstats_port *p = &t->ports[i];
            char id[32];
            snprintf(id, sizeof id, "port %" PRIu32, p->port);
            fprintf(out, "  %-24s %8" PRIu64 " %9.1f%% %9.1f%% %14s %16" PRIu64 "\n", p->name[0] ? p->name : id,
                    p->samples, 100.0 * p->mean_util, 100.0 * p->max_util, fmt_bytes(p->max_queue_bytes),
                    p->tx_bytes);
        }
    }
    fprintf(out, "\nevents (timeline): %" PRIu64 " PFC pauses, %" PRIu64 " resumes, %" PRIu64 " ECN marks, %" PRIu64
            " CNPs, %" PRIu64 " packets (%s) dropped, %" PRIu64 " faults\n",
            t->pfc_pauses, t->pfc_resumes, t->ecn_marked, t->cnp_sent, t->drop_packets, fmt_bytes(t->drop_bytes),
            t->faults);
}

/* The timeline's fault records (record 9: every applied fault, repair
 * and route recomputation), in file order, up to RS_REPORT_FAULTS; and the
 * summary's slowdown against the fault-free run when it has one. A second
 * pass over the file, only for runs with faults. */
#define RS_REPORT_FAULTS 64
static int print_faults(FILE *out, const char *tpath, const json_t *s, rs_an_err *err)
{
    rs_tlread *r = NULL;
    int rc = rs_tlread_open(tpath, &r, err);
    if (rc != RS_AN_OK)
        return rc;
    fprintf(out, "\nfaults (timeline)\n  %14s  %-14s %-20s %s\n", "time", "kind", "target", "detail");
    rs_tlread_rec rec;
    uint64_t n = 0;
    while ((rc = rs_tlread_next(r, &rec, err)) == 1) {
        if (rec.kind != RS_TL_FAULT || n++ >= RS_REPORT_FAULTS)
            continue;
        fprintf(out, "  %14s  %-14s %-20s %s\n", fmt_time(rec.u.fault.time_ps), rec.u.fault.kind,
                rec.u.fault.target, rec.u.fault.detail);
    }
    rs_tlread_close(r);
    if (n > RS_REPORT_FAULTS)
        fprintf(out, "  ... and %" PRIu64 " more\n", n - RS_REPORT_FAULTS);
    const json_t *ff = json_object_get(s, "fault_free"), *stop = json_object_get(s, "faults_stop");
    if (json_is_string(stop))
        fprintf(out, "  stopped: %s\n", json_string_value(stop));
    if (json_is_real(json_object_get(ff, "slowdown")))
        fprintf(out, "  slowdown vs the fault-free run: %.4fx (%s %s, fault-free %s)\n",
                json_real_value(json_object_get(ff, "slowdown")), json_string_value(json_object_get(ff, "time_of")),
                fmt_time((uint64_t)json_integer_value(json_object_get(ff, "faulted_time_ps"))),
                fmt_time((uint64_t)json_integer_value(json_object_get(ff, "time_ps"))));
    /* A partial timeline ends early: what was read is shown, no error. */
    return rc < 0 && rc != RS_AN_EFORMAT ? rc : RS_AN_OK;
}

int rs_report_print(const char *dir, FILE *out, rs_an_err *err)
{
    char spath[4096], tpath[4096];
    if ((size_t)snprintf(spath, sizeof spath, "%s/summary.json", dir) >= sizeof spath ||
        (size_t)snprintf(tpath, sizeof tpath, "%s/timeline.msgpack", dir) >= sizeof tpath)
        return rs_an_errf(err, RS_AN_EINVAL, "%.64s...: directory name too long", dir);
    FILE *f = fopen(spath, "rb");
    if (!f)
        return rs_an_errf(err, RS_AN_EIO, "%s: cannot open the run summary: %s; expected a run directory "
                       "written by railsim run -o DIR", spath, strerror(errno));
    json_error_t jerr;
    json_t *s = json_loadf(f, 0, &jerr);
    int read_failed = ferror(f);
    fclose(f);
    if (read_failed) {
        json_decref(s);
        return rs_an_errf(err, RS_AN_EIO, "%s: cannot read the run summary", spath);
    }
    if (!s)
        return rs_an_errf(err, RS_AN_EFORMAT, "%s:%d:%d: not valid JSON: %s", spath, jerr.line, jerr.column,
                       jerr.text);
    const json_t *fmt = json_object_get(s, "format");
    if (!json_is_object(s) || !json_is_string(fmt) || strcmp(json_string_value(fmt), "railsim-summary") != 0) {
        json_decref(s);
        return rs_an_errf(err, RS_AN_EFORMAT, "%s: not a railsim summary; expected a JSON object with "
                       "\"format\": \"railsim-summary\"", spath);
    }
    rs_tlstats *t = NULL;
    struct stat st;
    if (stat(tpath, &st) == 0) {
        int rc = rs_tlstats_compute(tpath, &t, err);
        if (rc != RS_AN_OK) {
            json_decref(s);
            return rc;
        }
    }
    int rc = print_summary(out, spath, s);
    if (rc == RS_AN_OK && t)
        print_timeline(out, tpath, t);
    if (rc == RS_AN_OK && t && t->faults) {
        int frc = print_faults(out, tpath, s, err);
        if (frc != RS_AN_OK) {
            rs_tlstats_destroy(t);
            json_decref(s);
            return frc;
        }
    }
    if (rc == RS_AN_OK && !t)
        fprintf(out, "\ntimeline: none (%s not found)\n", tpath);
    rs_tlstats_destroy(t);
    json_decref(s);
    if (rc != RS_AN_OK)
        return rs_an_errf(err, rc, "%s: out of memory", spath);
    return RS_AN_OK;
}
