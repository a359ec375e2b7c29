/*
 * test_analysis.c - the analysis layer: timeline statistics (per-rank
 * exposed communication, dimensions, collectives, FCT), the Perfetto
 * export (valid JSON, named processes and threads, one X event per op
 * record, properly nested tracks, exact microsecond times), the CSV export
 * (one row per record, quoting), the report, the shared tables, and bad
 * inputs (missing or damaged files, unwritable outputs leave nothing).
 *
 * Fixtures are written with the engine's timeline writer into a fresh
 * mkdtemp directory; only this test links the writer, never rs_analysis.
 */
#define _DEFAULT_SOURCE /* mkdtemp */
#include "cu_main.h"
#include "tables.h"
#include "export.h"
#include "fmt.h"
#include "report.h"
#include "timeline.h"
#include "timeline_read.h"
#include "tlstats.h"

#include <jansson.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#define US 1000000ULL

static char dir[64];

static const char *tpath(const char *name)
{
    static char buf[8][320];
    static int k;
    if (!dir[0]) {
        strcpy(dir, "/tmp/rs_an_XXXXXX");
        if (!mkdtemp(dir))
            abort();
    }
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static rs_timeline *open_tl(const char *path)
{
    static const rs_timeline_kv topo[] = { { "gpus", 4 }, { "hb_size", 2 } };
    rs_timeline_header h = { "0.1.0-test", 3, "{\"topology\": {\"hb_size\": 2}}", topo, 2, "" };
    rs_timeline *tl = NULL;
    rs_err err = { 0 };
    CU_ASSERT_EQUAL_FATAL(rs_timeline_create(path, &h, &tl, &err), RS_OK);
    return tl;
}

static void op(rs_timeline *tl, uint32_t rank, uint32_t comm, uint64_t s, uint64_t e, const char *kind,
               const char *label)
{
    rs_timeline_op_rec r = { rank, comm, s, e, strcmp(kind, "compute") ? 1000 : 0, kind, label };
    CU_ASSERT_EQUAL(rs_timeline_op(tl, &r), RS_OK);
}

/* The small exact fixture:
 *   rank 0: compute [0,100], allreduce on dp[0] [50,200]
 *           -> compute 100, comm 150, exposed 100
 *   rank 1: compute [0,100] and [150,250], allgather on tp0 [80,180]
 *           -> compute 200, comm 100, overlap 20 + 30, exposed 50
 *   rank 2: send [0,10] nested in recv [0,40] (comm only, exposed 40)
 *   rank 3: compute [1,2] ps (sub-microsecond times)
 * Times in microseconds except rank 3's. Two colls, three flows (FCT 10,
 * 20, 30 us), two samples of port 5, one of every event kind. */
static const char *write_small(void)
{
    const char *p = tpath("small.msgpack");
    rs_timeline *tl = open_tl(p);
    rs_timeline_name(tl, RS_TL_NS_RANK, 0, "gpu0");
    rs_timeline_name(tl, RS_TL_NS_COMM, 7, "dp[0]");
    rs_timeline_name(tl, RS_TL_NS_COMM, 8, "tp0");
    rs_timeline_name(tl, RS_TL_NS_PORT, 5, "leaf0.p5");
    op(tl, 0, RS_TL_NONE, 0, 100 * US, "compute", "fwd, \"layer 1\"");
    op(tl, 0, 7, 50 * US, 200 * US, "allreduce", "");
    op(tl, 1, RS_TL_NONE, 0, 100 * US, "compute", "");
    op(tl, 1, 8, 80 * US, 180 * US, "allgather", "");
    op(tl, 1, RS_TL_NONE, 150 * US, 250 * US, "compute", "");
    op(tl, 2, 9, 0, 40 * US, "recv", "");
    op(tl, 2, 9, 0, 10 * US, "send", "");
    op(tl, 3, RS_TL_NONE, 1, 2, "compute", "");
    rs_timeline_coll_rec c1 = { 1, 7, 2, 4096, 50 * US, 200 * US, "allreduce", "ring" };
    rs_timeline_coll_rec c2 = { 2, 7, 2, 4096, 300 * US, 350 * US, "allreduce", "ring" };
    rs_timeline_coll(tl, &c1);
    rs_timeline_coll(tl, &c2);
    for (uint64_t k = 1; k <= 3; k++) {
        rs_timeline_flow_rec f = { 0, 1, 100, 5 * US, 5 * US + k * 10 * US };
        rs_timeline_flow(tl, &f);
    }
    rs_timeline_sample_rec s1 = { 10 * US, 5, 1000, 64, 0.25 };
    rs_timeline_sample_rec s2 = { 20 * US, 5, 3000, 128, 0.75 };
    rs_timeline_sample_rec s3 = { 20 * US, 6, 10, 0, 0.5 };
    rs_timeline_sample(tl, &s1);
    rs_timeline_sample(tl, &s2);
    rs_timeline_sample(tl, &s3);
    rs_timeline_pfc_rec pf = { 30 * US, 5, 8, 1 };
    rs_timeline_pfc(tl, &pf);
    rs_timeline_ecn_rec ec = { 31 * US, 5, RS_TL_ECN_MARK, 3 };
    rs_timeline_ecn_rec cn = { 31 * US, 1, RS_TL_ECN_CNP, 2 };
    rs_timeline_ecn(tl, &ec);
    rs_timeline_ecn(tl, &cn);
    rs_timeline_drop_rec dr = { 32 * US, 5, 2, 8000, "buffer" };
    rs_timeline_drop(tl, &dr);
    rs_timeline_fault_rec fa = { 33 * US, "link leaf0.p5", "down", "" };
    rs_timeline_fault(tl, &fa);
    rs_err err = { 0 };
    CU_ASSERT_EQUAL_FATAL(rs_timeline_close(tl, 0, &err), RS_OK);
    return p;
}

static void test_tlstats_exposed_comm_per_rank(void)
{
    rs_tlstats *s = NULL;
    rs_an_err err = { 0, "" };
    CU_ASSERT_EQUAL_FATAL(rs_tlstats_compute(write_small(), &s, &err), RS_AN_OK);
    CU_ASSERT_TRUE(s->complete);
    CU_ASSERT_EQUAL_FATAL(s->n_ranks, 4);
    CU_ASSERT_EQUAL(s->ranks[0].rank, 0);
    CU_ASSERT_STRING_EQUAL(s->ranks[0].name, "gpu0");
    CU_ASSERT_EQUAL(s->ranks[0].compute_ps, 100 * US);
    CU_ASSERT_EQUAL(s->ranks[0].comm_ps, 150 * US);
    CU_ASSERT_EQUAL(s->ranks[0].exposed_ps, 100 * US);
    CU_ASSERT_EQUAL(s->ranks[0].last_ps - s->ranks[0].first_ps, 200 * US);
    CU_ASSERT_EQUAL(s->ranks[1].compute_ps, 200 * US);
    CU_ASSERT_EQUAL(s->ranks[1].comm_ps, 100 * US);
    CU_ASSERT_EQUAL(s->ranks[1].exposed_ps, 50 * US);
    CU_ASSERT_EQUAL(s->ranks[2].compute_ps, 0);
    CU_ASSERT_EQUAL(s->ranks[2].exposed_ps, 40 * US);
    CU_ASSERT_EQUAL(s->ranks[3].compute_ps, 1);
    CU_ASSERT_EQUAL(s->ops_first_ps, 0);
    CU_ASSERT_EQUAL(s->ops_last_ps, 250 * US);
    rs_tlstats_destroy(s);
}

static void test_tlstats_dimensions_collectives_and_fct(void)
{
    rs_tlstats *s = NULL;
    rs_an_err err = { 0, "" };
    CU_ASSERT_EQUAL_FATAL(rs_tlstats_compute(write_small(), &s, &err), RS_AN_OK);
    /* by op: compute 300 us + 1 ps first, then allreduce 150, allgather 100 */
    CU_ASSERT_EQUAL_FATAL(s->n_by_op, 5);
    CU_ASSERT_STRING_EQUAL(s->by_op[0].op, "compute");
    CU_ASSERT_EQUAL(s->by_op[0].count, 4);
    CU_ASSERT_EQUAL(s->by_op[0].total_ps, 300 * US + 1);
    CU_ASSERT_STRING_EQUAL(s->by_op[1].op, "allreduce");
    int seen_dp = 0, seen_tp = 0, seen_none = 0, seen_comm = 0;
    for (size_t i = 0; i < s->n_by_dim; i++) {
        const rs_tlstats_op *o = &s->by_dim[i];
        seen_dp += !strcmp(o->dim, "dp") && !strcmp(o->op, "allreduce") && o->total_ps == 150 * US;
        seen_tp += !strcmp(o->dim, "tp") && !strcmp(o->op, "allgather") && o->total_ps == 100 * US;
        seen_none += !strcmp(o->dim, "-") && !strcmp(o->op, "compute");
        seen_comm += !strcmp(o->dim, "comm") && (!strcmp(o->op, "send") || !strcmp(o->op, "recv"));
    }
    CU_ASSERT_EQUAL(seen_dp, 1);
    CU_ASSERT_EQUAL(seen_tp, 1);
    CU_ASSERT_EQUAL(seen_none, 1);
    CU_ASSERT_EQUAL(seen_comm, 2);
    CU_ASSERT_EQUAL_FATAL(s->n_colls, 1);
    CU_ASSERT_EQUAL(s->colls[0].count, 2);
    CU_ASSERT_EQUAL(s->colls[0].min_ps, 50 * US);
    CU_ASSERT_EQUAL(s->colls[0].max_ps, 150 * US);
    CU_ASSERT_EQUAL(s->colls[0].total_ps, 200 * US);
    CU_ASSERT_EQUAL(s->flows, 3);
    CU_ASSERT_EQUAL(s->fct_min_ps, 10 * US);
    CU_ASSERT_EQUAL(s->fct_p50_ps, 20 * US);
    CU_ASSERT_EQUAL(s->fct_p99_ps, 30 * US);
    CU_ASSERT_EQUAL_FATAL(s->n_ports, 2);
    CU_ASSERT_EQUAL(s->ports[0].port, 5); /* mean 0.5 == port 6's 0.5: tie by id */
    CU_ASSERT_STRING_EQUAL(s->ports[0].name, "leaf0.p5");
    CU_ASSERT_DOUBLE_EQUAL(s->ports[0].max_util, 0.75, 1e-12);
    CU_ASSERT_EQUAL(s->ports[0].max_queue_bytes, 128);
    CU_ASSERT_EQUAL(s->pfc_pauses, 1);
    CU_ASSERT_EQUAL(s->ecn_marked, 3);
    CU_ASSERT_EQUAL(s->cnp_sent, 2);
    CU_ASSERT_EQUAL(s->drop_packets, 2);
    CU_ASSERT_EQUAL(s->faults, 1);
    rs_tlstats_destroy(s);
}

static void test_tlstats_dimension_prefix(void)
{
    CU_ASSERT_EQUAL(rs_tlstats_dim_len("dp[3]"), 2);
    CU_ASSERT_EQUAL(rs_tlstats_dim_len("tp0"), 2);
    CU_ASSERT_EQUAL(rs_tlstats_dim_len("rail:0"), 4);
    CU_ASSERT_EQUAL(rs_tlstats_dim_len("world"), 5);
    CU_ASSERT_EQUAL(rs_tlstats_dim_len("0abc"), 0);
}

/* ---- Perfetto ---------------------------------------------------------------- */

static json_t *load_json(const char *p)
{
    json_error_t je;
    json_t *j = json_load_file(p, 0, &je);
    if (!j)
        fprintf(stderr, "%s:%d: %s\n", p, je.line, je.text);
    return j;
}

static const char *ev_str(const json_t *e, const char *k)
{
    const char *s = json_string_value(json_object_get(e, k));
    return s ? s : "";
}

/* X events per (pid, tid) are properly nested once sorted by (ts, -dur). */
typedef struct xev {
    int64_t pid, tid;
    double ts, end;
} xev;

static int cmp_xev(const void *x, const void *y)
{
    const xev *a = x, *b = y;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return (a->end < b->end) - (a->end > b->end);
}

static void test_perfetto_tracks_and_events(void)
{
    char out[320];
    snprintf(out, sizeof out, "%s", tpath("trace.json"));
    rs_export_counts cnt;
    rs_an_err err = { 0, "" };
    CU_ASSERT_EQUAL_FATAL(rs_export_perfetto(write_small(), out, NULL, &cnt, &err), RS_AN_OK);
    CU_ASSERT_FALSE(exists(tpath("trace.json.tmp")));
    json_t *j = load_json(out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    json_t *evs = json_object_get(j, "traceEvents");
    CU_ASSERT_TRUE_FATAL(json_is_array(evs));
    size_t n = json_array_size(evs), nx_op = 0, nx_coll = 0, nc = 0, ni = 0;
    int dom0 = 0, dom1 = 0, gpu0 = 0, rank1 = 0, overlap = 0, dp = 0;
    xev *xs = calloc(n, sizeof *xs);
    size_t nxs = 0;
    double first_ts_rank3 = -1;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(evs, i);
        const char *ph = ev_str(e, "ph"), *name = ev_str(e, "name");
        const char *argname = json_string_value(json_object_get(json_object_get(e, "args"), "name"));
        if (!strcmp(ph, "M") && !strcmp(name, "process_name")) {
            dom0 += !strcmp(argname, "HB domain 0");
            dom1 += !strcmp(argname, "HB domain 1");
        } else if (!strcmp(ph, "M") && !strcmp(name, "thread_name")) {
            gpu0 += !strcmp(argname, "gpu0 (rank 0)");
            rank1 += !strcmp(argname, "rank 1");
            overlap += !strcmp(argname, "rank 1 overlap 1");
            dp += !strcmp(argname, "dp[0] (comm 7)");
        } else if (!strcmp(ph, "X")) {
            const char *cat = ev_str(e, "cat");
            if (!strcmp(cat, "collective"))
                nx_coll++;
            else
                nx_op++;
            CU_ASSERT_TRUE(json_is_real(json_object_get(e, "ts")));
            double ts = json_real_value(json_object_get(e, "ts"));
            double dur = json_real_value(json_object_get(e, "dur"));
            xs[nxs++] = (xev){ json_integer_value(json_object_get(e, "pid")),
                               json_integer_value(json_object_get(e, "tid")), ts, ts + dur };
            if (json_integer_value(json_object_get(e, "tid")) == 1 + 3 * RS_EXPORT_MAX_LANES)
                first_ts_rank3 = ts;
        } else if (!strcmp(ph, "C")) {
            nc++;
        } else if (!strcmp(ph, "i")) {
            ni++;
        }
    }
    CU_ASSERT_EQUAL(nx_op, 8);    /* one per op record */
    CU_ASSERT_EQUAL(nx_coll, 2);
    CU_ASSERT_EQUAL(cnt.ops, 8);
    CU_ASSERT_EQUAL(cnt.colls, 2);
    CU_ASSERT_EQUAL(nc, 6);       /* 3 samples (2 links charted by default) x util and queue */
    CU_ASSERT_EQUAL(cnt.counters, 6);
    CU_ASSERT_EQUAL(ni, 3);       /* PFC, drop, fault */
    CU_ASSERT_EQUAL(dom0, 1);
    CU_ASSERT_EQUAL(dom1, 1);
    CU_ASSERT_EQUAL(gpu0, 1);
    CU_ASSERT_EQUAL(rank1, 1);
    CU_ASSERT_EQUAL(overlap, 1);  /* rank 1's allgather overlaps both computes */
    CU_ASSERT_EQUAL(dp, 1);
    CU_ASSERT_DOUBLE_EQUAL(first_ts_rank3, 1e-6, 1e-12); /* 1 ps */
    qsort(xs, nxs, sizeof *xs, cmp_xev);
    double stack[16];
    int depth = 0, bad = 0;
    for (size_t i = 0; i < nxs; i++) {
        if (i == 0 || xs[i].pid != xs[i - 1].pid || xs[i].tid != xs[i - 1].tid)
            depth = 0;
        /* ts + dur is a double sum: allow a femtosecond of rounding */
        while (depth && stack[depth - 1] <= xs[i].ts + 1e-9)
            depth--;
        if (depth && xs[i].end > stack[depth - 1] + 1e-9)
            bad++;
        if (depth < 16)
            stack[depth++] = xs[i].end;
    }
    CU_ASSERT_EQUAL(bad, 0);
    free(xs);
    json_decref(j);
}

static void test_perfetto_links_option_limits_counters(void)
{
    rs_perfetto_opts o;
    rs_perfetto_opts_default(&o);
    o.links = 1; /* port 5 (tx 3000) beats port 6 (tx 10) */
    rs_export_counts cnt;
    rs_an_err err = { 0, "" };
    CU_ASSERT_EQUAL_FATAL(rs_export_perfetto(write_small(), tpath("t1.json"), &o, &cnt, &err), RS_AN_OK);
    CU_ASSERT_EQUAL(cnt.counters, 4);
    o.links = 0;
    CU_ASSERT_EQUAL_FATAL(rs_export_perfetto(write_small(), tpath("t0.json"), &o, &cnt, &err), RS_AN_OK);
    CU_ASSERT_EQUAL(cnt.counters, 0);
}

/* ---- CSV ------------------------------------------------------------------------ */

static long count_lines(const char *p)
{
    FILE *f = fopen(p, "r");
    if (!f)
        return -1;
    long n = 0;
    int c, last = '\n';
    while ((c = fgetc(f)) != EOF) {
        n += c == '\n';
        last = c;
    }
    fclose(f);
    return n + (last != '\n');
}

static void test_csv_one_row_per_record(void)
{
    char d[320];
    snprintf(d, sizeof d, "%s", tpath("csv/sub"));
    rs_export_counts cnt;
    rs_an_err err = { 0, "" };
    CU_ASSERT_EQUAL_FATAL(rs_export_csv(write_small(), d, &cnt, &err), RS_AN_OK);
    static const struct { const char *file; long rows; } want[] = {
        { "name.csv", 4 }, { "op.csv", 8 }, { "coll.csv", 2 }, { "flow.csv", 3 }, { "sample.csv", 3 },
        { "pfc.csv", 1 },  { "ecn.csv", 2 }, { "drop.csv", 1 }, { "fault.csv", 1 },
    };
    char p[400];
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", d, want[i].file);
        /* the op label "fwd, \"layer 1\"" is quoted and stays on one line */
        CU_ASSERT_EQUAL(count_lines(p), want[i].rows + 1);
        CU_ASSERT_EQUAL(cnt.rows[i + 1], (uint64_t)want[i].rows);
    }
    snprintf(p, sizeof p, "%s/op.csv", d);
    FILE *f = fopen(p, "r");
    char line[512];
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof line, f));
    CU_ASSERT_STRING_EQUAL(line, "rank,rank_name,start_ps,end_ps,dur_ps,op,bytes,comm,comm_name,label\n");
    CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof line, f));
    CU_ASSERT_STRING_EQUAL(line, "0,gpu0,0,100000000,100000000,compute,0,,,\"fwd, \"\"layer 1\"\"\"\n");
    CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof line, f));
    CU_ASSERT_STRING_EQUAL(line, "0,gpu0,50000000,200000000,150000000,allreduce,1000,7,dp[0],\n");
    fclose(f);
    snprintf(p, sizeof p, "%s/sample.csv", d);
    f = fopen(p, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof line, f));
    CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof line, f));
    CU_ASSERT_STRING_EQUAL(line, "10000000,5,leaf0.p5,1000,64,0.25\n");
    fclose(f);
    snprintf(p, sizeof p, "%s/header.csv", d);
    CU_ASSERT_TRUE(exists(p));
    snprintf(p, sizeof p, "%s/op.csv.tmp", d);
    CU_ASSERT_FALSE(exists(p));
}

/* ---- bad inputs --------------------------------------------------------------- */

static void test_exports_reject_missing_and_damaged_timelines(void)
{
    rs_an_err err = { 0, "" };
    char out[320]; /* tpath's buffers rotate */
    snprintf(out, sizeof out, "%s", tpath("never.json"));
    CU_ASSERT_EQUAL(rs_export_perfetto(tpath("nope.msgpack"), out, NULL, NULL, &err), RS_AN_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "nope.msgpack"));
    FILE *f = fopen(tpath("junk.msgpack"), "wb");
    fputs("{\"not\": \"a timeline\"}", f);
    fclose(f);
    CU_ASSERT_EQUAL(rs_export_perfetto(tpath("junk.msgpack"), out, NULL, NULL, &err), RS_AN_EFORMAT);
    CU_ASSERT_EQUAL(rs_export_csv(tpath("junk.msgpack"), tpath("junkcsv"), NULL, &err), RS_AN_EFORMAT);
    CU_ASSERT_FALSE(exists(out));
    CU_ASSERT_FALSE(exists(tpath("never.json.tmp")));
    /* A truncated timeline: the records before the cut are read, then the
     * export fails and leaves nothing. */
    const char *src = write_small();
    FILE *in = fopen(src, "rb");
    unsigned char buf[4096];
    size_t n = fread(buf, 1, sizeof buf, in);
    fclose(in);
    f = fopen(tpath("cut.msgpack"), "wb");
    fwrite(buf, 1, n - 7, f);
    fclose(f);
    CU_ASSERT_EQUAL(rs_export_perfetto(tpath("cut.msgpack"), out, NULL, NULL, &err), RS_AN_EFORMAT);
    CU_ASSERT_FALSE(exists(out));
    CU_ASSERT_FALSE(exists(tpath("never.json.tmp")));
}

static void test_exports_report_unwritable_output(void)
{
    rs_an_err err = { 0, "" };
    const char *src = write_small();
    CU_ASSERT_EQUAL(rs_export_perfetto(src, tpath("no/such/dir/t.json"), NULL, NULL, &err), RS_AN_EOUTPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no/such/dir"));
    FILE *f = fopen(tpath("afile"), "w");
    fclose(f);
    CU_ASSERT_EQUAL(rs_export_csv(src, tpath("afile/sub"), NULL, &err), RS_AN_EOUTPUT);
}

/* ---- report ---------------------------------------------------------------------- */

static void write_text(const char *p, const char *s)
{
    FILE *f = fopen(p, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(s, f);
    fclose(f);
}

static char *report_of(const char *d, int *rc, rs_an_err *err)
{
    FILE *f = tmpfile();
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    *rc = rs_report_print(d, f, err);
    long len = ftell(f);
    char *buf = calloc((size_t)len + 1, 1);
    rewind(f);
    if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len)
        buf[0] = '\0';
    fclose(f);
    return buf;
}

static void test_report_reads_summary_and_timeline(void)
{
    mkdir(tpath("run"), 0777);
    write_text(tpath("run/summary.json"),
               "{\"format\": \"railsim-summary\", \"status\": \"complete\", \"railsim\": \"0.1.0\","
               " \"topology\": {\"kind\": \"rail-only\", \"gpus\": 4},"
               " \"ports\": [{\"name\": \"a.p1\", \"peer\": \"b\", \"tx_bytes\": 5, \"max_queue_bytes\": 900},"
               "             {\"name\": \"c.p2\", \"peer\": \"d\", \"tx_bytes\": 7000, \"max_queue_bytes\": 1}]}");
    int rc;
    rs_an_err err = { 0, "" };
    char *text = report_of(tpath("run"), &rc, &err);
    CU_ASSERT_EQUAL(rc, RS_AN_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "rail-only, 4 GPUs"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "timeline: none"));
    /* by tx_bytes c.p2 comes first, by max queue a.p1 */
    char *tx = strstr(text, "by tx_bytes"), *q = strstr(text, "by max queue");
    CU_ASSERT_TRUE_FATAL(tx && q);
    CU_ASSERT_TRUE(strstr(tx, "c.p2") < strstr(tx, "a.p1"));
    CU_ASSERT_TRUE(strstr(q, "a.p1") < strstr(q, "c.p2"));
    free(text);

    rename(write_small(), tpath("run/timeline.msgpack"));
    text = report_of(tpath("run"), &rc, &err);
    CU_ASSERT_EQUAL(rc, RS_AN_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "op time by kind"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "compute vs exposed communication per rank (4 ranks)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "100.000 us")); /* rank 0's exposed communication */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "collective times by op"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "leaf0.p5"));
    free(text);
}

static void test_report_rejects_missing_or_foreign_summary(void)
{
    mkdir(tpath("empty"), 0777);
    int rc;
    rs_an_err err = { 0, "" };
    char *text = report_of(tpath("empty"), &rc, &err);
    CU_ASSERT_EQUAL(rc, RS_AN_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "empty/summary.json"));
    CU_ASSERT_EQUAL(strlen(text), 0); /* nothing printed */
    free(text);
    mkdir(tpath("foreign"), 0777);
    write_text(tpath("foreign/summary.json"), "{\"format\": \"other\"}");
    text = report_of(tpath("foreign"), &rc, &err);
    CU_ASSERT_EQUAL(rc, RS_AN_EFORMAT);
    free(text);
    write_text(tpath("foreign/summary.json"), "{\"format\": ");
    text = report_of(tpath("foreign"), &rc, &err);
    CU_ASSERT_EQUAL(rc, RS_AN_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "summary.json:1:"));
    free(text);
}

/* ---- tables ------------------------------------------------------------------------ */

static void test_tables_intern_and_map(void)
{
    rs_strtab *t = rs_strtab_create();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(rs_strtab_intern(t, ""), 0);
    CU_ASSERT_EQUAL(rs_strtab_intern(t, NULL), 0);
    uint32_t a = rs_strtab_intern(t, "alpha");
    const char *pa = rs_strtab_str(t, a);
    char buf[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(buf, sizeof buf, "s%d", i);
        CU_ASSERT_EQUAL(rs_strtab_intern(t, buf), (uint32_t)i + 2);
    }
    CU_ASSERT_EQUAL(rs_strtab_intern(t, "alpha"), a);
    CU_ASSERT_PTR_EQUAL(rs_strtab_str(t, a), pa); /* never moved */
    CU_ASSERT_STRING_EQUAL(rs_strtab_str(t, 4001), "s3999");
    CU_ASSERT_STRING_EQUAL(rs_strtab_str(t, 999999), "");
    rs_strtab_destroy(t);

    rs_u64map m;
    rs_u64map_init(&m);
    for (uint64_t k = 0; k < 10000; k++)
        *rs_u64map_upsert(&m, k * 7919, 0) = k;
    CU_ASSERT_EQUAL(m.count, 10000);
    CU_ASSERT_EQUAL(*rs_u64map_get(&m, 7919 * 1234), 1234);
    CU_ASSERT_PTR_NULL(rs_u64map_get(&m, 1));
    CU_ASSERT_EQUAL(*rs_u64map_upsert(&m, 7919, 55), 1); /* existing key keeps its value */
    rs_u64map_fini(&m);
    CU_ASSERT_NOT_EQUAL(rs_an_name_key(0, 5), rs_an_name_key(1, 5));
}

/* The human units (fmt.h): the unit that fits, binary sizes, a shared
 * unit for a table row, money and power, and the progress line. */
static void test_fmt_picks_the_unit_that_fits(void)
{
    char b[RS_FMT_LEN];
    CU_ASSERT_STRING_EQUAL(rs_fmt_time(b, sizeof b, 6111983052000.0), "6.112 s"); /* was "6111983.052 us" */
    CU_ASSERT_STRING_EQUAL(rs_fmt_time(b, sizeof b, 191558000.0), "191.558 us");
    CU_ASSERT_STRING_EQUAL(rs_fmt_time(b, sizeof b, 1.5e9), "1.500 ms");
    CU_ASSERT_STRING_EQUAL(rs_fmt_time(b, sizeof b, 20), "0.020 ns");
    CU_ASSERT_STRING_EQUAL(rs_fmt_time(b, sizeof b, 999999), "999.999 ns");
    CU_ASSERT_STRING_EQUAL(rs_fmt_time(b, sizeof b, 1e6), "1.000 us");
    CU_ASSERT_STRING_EQUAL(rs_fmt_time(b, sizeof b, 0), "0 s");
    CU_ASSERT_STRING_EQUAL(rs_fmt_time(b, sizeof b, NAN), "-");
    CU_ASSERT_STRING_EQUAL(rs_fmt_time_like(b, sizeof b, 5e8, 2e9), "0.500 ms");
    CU_ASSERT_STRING_EQUAL(rs_fmt_time_like(b, sizeof b, 0, 2e9), "0.000 ms");
    CU_ASSERT_STRING_EQUAL(rs_fmt_bytes(b, sizeof b, 20376163713024.0), "18.53 TiB"); /* was "20376163713024 bytes" */
    CU_ASSERT_STRING_EQUAL(rs_fmt_bytes(b, sizeof b, 512), "512 B");
    CU_ASSERT_STRING_EQUAL(rs_fmt_bytes(b, sizeof b, 1024), "1.00 KiB");
    CU_ASSERT_STRING_EQUAL(rs_fmt_bytes(b, sizeof b, 67108864), "64.00 MiB");
    CU_ASSERT_STRING_EQUAL(rs_fmt_bytes(b, sizeof b, 2.04371e15), "1.82 PiB"); /* was "2.04371e+06 GB" */
    CU_ASSERT_STRING_EQUAL(rs_fmt_bytes_like(b, sizeof b, 536870912, 4294967296.0), "0.50 GiB");
    CU_ASSERT_STRING_EQUAL(rs_fmt_count(b, sizeof b, 1234567), "1,234,567");
    CU_ASSERT_STRING_EQUAL(rs_fmt_count(b, sizeof b, 999), "999");
    CU_ASSERT_STRING_EQUAL(rs_fmt_count(b, sizeof b, -1000), "-1,000");
    CU_ASSERT_STRING_EQUAL(rs_fmt_usd(b, sizeof b, 12345678.4), "$12,345,678");
    CU_ASSERT_STRING_EQUAL(rs_fmt_power(b, sizeof b, 950), "950 W");
    CU_ASSERT_STRING_EQUAL(rs_fmt_power(b, sizeof b, 12345), "12.35 kW");
    CU_ASSERT_STRING_EQUAL(rs_fmt_power_like(b, sizeof b, 500, 2e6), "0.00 MW");
    CU_ASSERT_STRING_EQUAL(rs_fmt_wait(b, sizeof b, 42.4), "42 s");
    CU_ASSERT_STRING_EQUAL(rs_fmt_wait(b, sizeof b, 125), "2 min 05 s");
    CU_ASSERT_STRING_EQUAL(rs_fmt_wait(b, sizeof b, 7625), "2 h 07 min");
    char line[160];
    /* A quarter done in 10 s: 30 s to go. */
    CU_ASSERT_STRING_EQUAL(rs_fmt_progress(line, sizeof line, 1.2345e10, 2000000, 10, 0.25),
                           "   25.0 %, ETA 30 s; simulated 12.345 ms, 2000000 events, 0.20 M events/s");
    CU_ASSERT_STRING_EQUAL(rs_fmt_progress(line, sizeof line, 1.2345e10, 2000000, 10, 0),
                           "    0.0 %, ETA -; simulated 12.345 ms, 2000000 events, 0.20 M events/s");
    CU_ASSERT_STRING_EQUAL(rs_fmt_progress(line, sizeof line, 1.2345e10, 2000000, 10, -1),
                           "  simulated 12.345 ms, 2000000 events, 0.20 M events/s");
}

static const rs_cu_test analysis_tests[] = {
    RS_CU_TEST(test_fmt_picks_the_unit_that_fits),
    RS_CU_TEST(test_tlstats_exposed_comm_per_rank),
    RS_CU_TEST(test_tlstats_dimensions_collectives_and_fct),
    RS_CU_TEST(test_tlstats_dimension_prefix),
    RS_CU_TEST(test_perfetto_tracks_and_events),
    RS_CU_TEST(test_perfetto_links_option_limits_counters),
    RS_CU_TEST(test_csv_one_row_per_record),
    RS_CU_TEST(test_exports_reject_missing_and_damaged_timelines),
    RS_CU_TEST(test_exports_report_unwritable_output),
    RS_CU_TEST(test_report_reads_summary_and_timeline),
    RS_CU_TEST(test_report_rejects_missing_or_foreign_summary),
    RS_CU_TEST(test_tables_intern_and_map),
};

static void register_suites(void)
{
    RS_CU_SUITE("analysis", analysis_tests);
}

int main(void)
{
    int rc = rs_cu_run(register_suites);
    if (dir[0]) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", dir);
    }
    return rc;
}
