/*
 * cmd_nccl_tests.c - `railsim nccl-tests OP`: the collective benchmark
 * people run on real clusters (NVIDIA/nccl-tests, its *_perf binaries),
 * run on the simulated one. Sizes, counts, the table and the bandwidth
 * figures follow nccl-tests exactly (src/common.cu, src/util.cu and each
 * op's GetCollByteCount and GetBw, as of nccl-tests a0b82b2, 2026-07),
 * so a row reads side by side with a measured one: float elements, the
 * printed size max(send, receive) bytes, the count nccl-tests passes to
 * NCCL, algbw = size / time, busbw = algbw x the op's factor, and "Avg bus
 * bandwidth" the mean busbw over the sizes. Each size is its own run of
 * traffic.kind=collective (docs/collectives.md) over every GPU, -w + -n
 * iterations back to back; the time is the mean of the last -n.
 * docs/nccl-tests.md.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "coll.h"
#include "output.h"

#define MAX_SIZES 4096

/* nccl-tests' binaries (without _perf) and railsim's ops. */
static const struct nt_op {
    const char *name;    /* all_reduce_perf -> "all_reduce" */
    const char *op;      /* traffic.op */
    int per_rank;        /* the element count is split over the ranks (all_gather, reduce_scatter, alltoall) */
    int redop;           /* the table's redop column says "sum" */
    int root;            /* the table's root column: 0 for the rooted ops (rank 0), else -1 */
} nt_ops[] = {
    { "all_reduce", "allreduce", 0, 1, -1 },
    { "all_gather", "allgather", 1, 0, -1 },
    { "reduce_scatter", "reducescatter", 1, 1, -1 },
    { "alltoall", "alltoall", 1, 0, -1 },
    { "sendrecv", "sendrecv", 0, 0, -1 },
    { "broadcast", "broadcast", 0, 0, 0 },
    { "reduce", "reduce", 0, 1, 0 },
};

typedef struct nt_opts {
    const struct nt_op *op;
    const char *path, *outdir;
    double min, max, step, factor; /* bytes; factor > 1 multiplies, else step adds */
    unsigned long iters, warmup;
    int json, quiet;
    char gpus[32];                 /* "topology.gpus=N" for --gpus, "" without */
} nt_opts;

/* nccl-tests' parsesize: a number with an optional K, M or G (binary
 * units: 1K = 1024). -1 for anything else. */
static double parse_size(const char *s)
{
    double v;
    char unit[2] = { 0 };
    int n = sscanf(s, "%lf %1s", &v, unit);
    if (n < 1 || v < 0 || !isfinite(v))
        return -1;
    if (n == 1)
        return v;
    switch (unit[0]) {
    case 'G': case 'g': return v * 1024.0 * 1024.0 * 1024.0;
    case 'M': case 'm': return v * 1024.0 * 1024.0;
    case 'K': case 'k': return v * 1024.0;
    default: return -1;
    }
}

/* One size as nccl-tests sets it up (setupArgs and the op's
 * GetCollByteCount, 4-byte floats): the size it prints (the larger of the
 * send and receive buffers, bytes) and the count it passes to NCCL. */
static void nt_size(const struct nt_op *op, size_t size, uint32_t nranks, size_t *bytes, size_t *count)
{
    size_t elems = size / 4, param = elems, total = elems;
    if (op->per_rank) {
        param = (elems / nranks) & ~(size_t)3; /* 16 bytes of floats: & ~(16 / 4 - 1) */
        total = param * nranks;
    }
    *bytes = total * 4;
    *count = param;
}

static int parse_args(nt_opts *o, int argc, char **argv, char **sets, int *nsets)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int val = !strcmp(a, "-b") || !strcmp(a, "-e") || !strcmp(a, "-f") || !strcmp(a, "-i") || !strcmp(a, "-n") ||
                  !strcmp(a, "-w") || !strcmp(a, "-g") || !strcmp(a, "--gpus") || !strcmp(a, "--set") ||
                  !strcmp(a, "-s") || !strcmp(a, "-o");
        if (val && i + 1 >= argc)
            return rs_cli_bad_input("nccl-tests: %s: expected a value after it", a);
        const char *v = val ? argv[++i] : NULL;
        char *end;
        if (!strcmp(a, "-b") || !strcmp(a, "-e") || !strcmp(a, "-i")) {
            double s = parse_size(v);
            if (s < 0 || s > 0x1p50)
                return rs_cli_bad_input("nccl-tests: '%s': expected a size in bytes, with K, M or G for 2^10, 2^20 "
                                        "or 2^30 (as nccl-tests: 8, 128K, 1M, 8G)", v);
            *(!strcmp(a, "-b") ? &o->min : !strcmp(a, "-e") ? &o->max : &o->step) = floor(s);
        } else if (!strcmp(a, "-f")) {
            errno = 0;
            o->factor = (double)strtoul(v, &end, 10);
            if (errno || *end || v[0] == '-' || o->factor < 1)
                return rs_cli_bad_input("nccl-tests: -f '%s': expected a whole step factor of 1 or more", v);
        } else if (!strcmp(a, "-n") || !strcmp(a, "-w")) {
            errno = 0;
            unsigned long n = strtoul(v, &end, 10);
            if (errno || *end || v[0] == '-' || n > 1000 || (!strcmp(a, "-n") && n == 0))
                return rs_cli_bad_input(!strcmp(a, "-n") ? "nccl-tests: -n '%s': expected 1 to 1000 iterations"
                                                         : "nccl-tests: -w '%s': expected 0 to 1000 warm-up iterations",
                                        v);
            *(!strcmp(a, "-n") ? &o->iters : &o->warmup) = n;
        } else if (!strcmp(a, "-g") || !strcmp(a, "--gpus")) {
            if ((size_t)snprintf(o->gpus, sizeof o->gpus, "topology.gpus=%s", v) >= sizeof o->gpus)
                return rs_cli_bad_input("nccl-tests: --gpus '%.20s': expected a GPU count", v);
            sets[(*nsets)++] = o->gpus;
        } else if (!strcmp(a, "--set") || !strcmp(a, "-s")) {
            sets[(*nsets)++] = (char *)v;
        } else if (!strcmp(a, "-o")) {
            o->outdir = v;
        } else if (!strcmp(a, "--json")) {
            o->json = 1;
        } else if (!strcmp(a, "-q")) {
            o->quiet = 1;
        } else if (a[0] == '-') {
            return rs_cli_bad_input("nccl-tests: unknown option '%s'; expected -b SIZE, -e SIZE, -f FACTOR, -i STEP, "
                                    "-n ITERS, -w WARMUP, --gpus N, --set KEY=VALUE, -o DIR, --json or -q", a);
        } else if (!o->op) {
            for (size_t k = 0; k < sizeof nt_ops / sizeof nt_ops[0]; k++)
                if (!strcmp(a, nt_ops[k].name) ||
                    (!strncmp(a, nt_ops[k].name, strlen(nt_ops[k].name)) && !strcmp(a + strlen(nt_ops[k].name), "_perf")))
                    o->op = &nt_ops[k];
            if (!o->op)
                return rs_cli_bad_input("nccl-tests: unknown test '%s'; expected all_reduce, all_gather, reduce_scatter, "
                                        "alltoall, broadcast, reduce or sendrecv (nccl-tests' binaries without _perf)",
                                        a);
        } else if (!o->path) {
            o->path = a;
        } else {
            return rs_cli_bad_input("nccl-tests: unexpected argument '%s'; expected at most one scenario file", a);
        }
    }
    if (!o->op)
        return rs_cli_bad_input("nccl-tests: %sexpected a test: all_reduce, all_gather, reduce_scatter, alltoall, "
                                "broadcast, reduce or sendrecv", "");
    if (o->min > o->max)
        return rs_cli_bad_input("nccl-tests: -b above -e%s; expected the smallest size first", "");
    if (o->factor <= 1 && o->step < 1 && o->max > o->min)
        return rs_cli_bad_input("nccl-tests: -i 0%s with -f 1 never reaches -e; expected a step above 0", "");
    return RS_EXIT_OK;
}

/* The sizes nccl-tests steps through (its loop in testStreamSynchronize's
 * caller): -b, then times -f (above 1) or plus -i, up to -e. */
static int sizes_list(const nt_opts *o, double *sizes, int *n)
{
    *n = 0;
    for (double s = o->min; s <= o->max; s = o->factor > 1 ? s * o->factor : s + o->step) {
        if (*n == MAX_SIZES)
            return rs_cli_bad_input("nccl-tests: more than %s sizes; expected fewer (raise -f or -i)", "4096");
        sizes[(*n)++] = s;
        if (o->factor > 1 && s == 0)
            break; /* 0 x factor stays 0 */
    }
    return RS_EXIT_OK;
}

/* nccl-tests' getFloatStr: the value in `width` characters, with fewer
 * decimals (then an exponent) when it does not fit. */
static const char *fit(char *buf, int width, double v)
{
    if (snprintf(buf, (size_t)width + 1, "%*.2f", width, v) <= width)
        return buf;
    if (snprintf(buf, (size_t)width + 1, "%*.1f", width, v) <= width)
        return buf;
    if (snprintf(buf, (size_t)width + 1, "%*.0f", width, v) <= width)
        return buf;
    snprintf(buf, (size_t)width + 1, width >= 7 ? "%*.1e" : "%*.0e", width, v);
    return buf;
}

/* Run one size: the scenario base with the collective's keys set, -w + -n
 * iterations. Its row object (size_bytes, count, time_us, algbw_GBps,
 * busbw_GBps, algo, protocol) into *row; an exit code. */
static int run_size(const nt_opts *o, const rs_scenario *base, uint32_t nranks, size_t size, json_t **row)
{
    size_t bytes, count;
    nt_size(o->op, size, nranks, &bytes, &count);
    char op[64], b[64], it[64];
    snprintf(op, sizeof op, "traffic.op=%s", o->op->op);
    snprintf(b, sizeof b, "traffic.bytes=%zu", bytes);
    snprintf(it, sizeof it, "traffic.iters=%lu", o->warmup + o->iters);
    /* Every GPU, as nccl-tests spans every rank it starts; send/recv keeps
     * the scenario's group (two GPUs, nccl_tests checked). */
    char *sets[5] = { "traffic.kind=collective", op, b, it, "traffic.group=all" };
    int nsets = strcmp(o->op->name, "sendrecv") ? 5 : 4;
    rs_scenario *sc = NULL;
    rs_err err;
    int rc = rs_scenario_clone(&sc, base, &err);
    if (rc == RS_OK && (rc = rs_scenario_set(sc, sets, nsets, &err)) != RS_OK)
        fprintf(stderr, "railsim: nccl-tests: %s\n", err.msg);
    if (rc != RS_OK) {
        rs_scenario_destroy(sc);
        return rc == RS_ENOMEM ? RS_EXIT_RUN_FAILED : RS_EXIT_BAD_INPUT;
    }
    json_t *s = NULL;
    rs_cli_run how = { .path = o->path, .quiet = 1 };
    int code = rs_run_execute(sc, &how, &s);
    rs_scenario_destroy(sc);
    const json_t *co = json_object_get(s, "collective"), *times = json_object_get(co, "times_ps");
    if (code == RS_EXIT_OK && json_array_size(times) != o->warmup + o->iters) {
        fprintf(stderr, "railsim: nccl-tests: %s of %zu bytes: %zu of %lu iterations completed\n", o->op->name,
                bytes, json_array_size(times), o->warmup + o->iters);
        code = RS_EXIT_RUN_FAILED;
    }
    if (code != RS_EXIT_OK) {
        json_decref(s);
        return code;
    }
    double sum = 0;
    for (size_t i = o->warmup; i < json_array_size(times); i++)
        sum += (double)json_integer_value(json_array_get(times, i));
    rs_coll_op cop;
    rs_coll_op_parse(o->op->op, &cop);
    double t_us = sum / (double)o->iters / 1e6, sec = t_us * 1e-6;
    double algbw = sec > 0 ? (double)bytes / 1e9 / sec : 0, busbw = algbw * rs_coll_busbw_factor(cop, nranks);
    /* The protocol and NCCL's predicted time under nccl.model=nccl, else
     * "-" and null. */
    const json_t *proto = json_object_get(co, "protocol"), *pred = json_object_get(co, "nccl_predicted_us");
    *row = json_pack("{s:I, s:I, s:f, s:f, s:f, s:O, s:s, s:o}", "size_bytes", (json_int_t)bytes, "count",
                     (json_int_t)count, "time_us", t_us, "algbw_GBps", algbw, "busbw_GBps", busbw, "algo",
                     json_object_get(co, "algo"), "protocol", proto ? json_string_value(proto) : "-",
                     "nccl_predicted_us", pred ? json_deep_copy(pred) : json_null());
    json_decref(s);
    if (!*row) {
        fprintf(stderr, "railsim: out of memory\n");
        return RS_EXIT_RUN_FAILED;
    }
    return RS_EXIT_OK;
}

static void table_head(FILE *f, const nt_opts *o, uint32_t nranks, const rs_scenario *sc)
{
    rs_net_config c;
    rs_scenario_net(sc, &c);
    fprintf(f, "# railsim nccl-tests %s: %u GPUs, %s, HB domains of %u, %g Gb/s NICs, %s level\n", o->op->name, nranks,
            c.kind == RS_TOPO_RAIL_ONLY ? "rail-only" : c.kind == RS_TOPO_DRAGONFLY ? "dragonfly" : "fat tree", c.hb_size, c.nic_gbps,
            c.fidelity == RS_FIDELITY_FLOW ? "flow" : "packet");
    fprintf(f, "# warmup iters: %lu iters: %lu; every size a simulated run, times are simulated time\n", o->warmup,
            o->iters);
    if (c.nccl.model == RS_NCCL_NCCL)
        fprintf(f, "# nccl.model=nccl: NCCL's protocols and tuner (NCCL 2.30.7's cost model, docs/collectives.md)\n#\n");
    else
        fprintf(f, "# nccl.model=ideal: bandwidth-perfect collectives, no NCCL protocol (docs/collectives.md)\n#\n");
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %-12s  %s\n", "size", "count", "type", "redop", "root",
            "time", "algbw", "busbw", "#wrong", "algo", "proto");
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s\n", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)",
            "(GB/s)", "");
}

static void table_row(FILE *f, const nt_opts *o, const json_t *r)
{
    char t[16], a[16], b[16];
    fprintf(f, "%12lld  %12lld  %8s  %6s  %6d  %7s  %6s  %6s    N/A  %-12s  %s\n",
            (long long)json_integer_value(json_object_get(r, "size_bytes")),
            (long long)json_integer_value(json_object_get(r, "count")), "float", o->op->redop ? "sum" : "none",
            o->op->root,
            fit(t, 7, json_real_value(json_object_get(r, "time_us"))),
            fit(a, 6, json_real_value(json_object_get(r, "algbw_GBps"))),
            fit(b, 6, json_real_value(json_object_get(r, "busbw_GBps"))),
            json_string_value(json_object_get(r, "algo")), json_string_value(json_object_get(r, "protocol")));
}

/* The table (nccl-tests' layout) into text, the JSON document into doc. */
static int results_write(const nt_opts *o, uint32_t nranks, const rs_scenario *sc, json_t *rows, char **text,
                         size_t *tlen, json_t **doc)
{
    FILE *f = open_memstream(text, tlen);
    if (!f)
        return RS_EXIT_RUN_FAILED;
    table_head(f, o, nranks, sc);
    double avg = 0;
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        table_row(f, o, r);
        avg += json_real_value(json_object_get(r, "busbw_GBps"));
    }
    avg = json_array_size(rows) ? avg / (double)json_array_size(rows) : 0;
    fprintf(f, "# %-20s : %d %s\n", "Out of bounds values", 0, "OK (nothing is checked: no data moves)");
    fprintf(f, "# %-20s : %g \n#\n", "Avg bus bandwidth", avg);
    fclose(f);
    *doc = json_pack("{s:s, s:s, s:i, s:I, s:I, s:O, s:f}", "format", "railsim-nccl-tests", "test", o->op->name,
                     "gpus", (int)nranks, "iters", (json_int_t)o->iters, "warmup_iters", (json_int_t)o->warmup,
                     "results", rows, "avg_busbw_GBps", avg);
    return *text && *doc ? RS_EXIT_OK : RS_EXIT_RUN_FAILED;
}

/* nccl-tests runs its own collective over every GPU: a workload
 * (workload.plan, workload.trace) or a shared cluster's jobs or scheduler
 * in the scenario would replace it, and no iteration of it would
 * complete. An exit code. */
static int own_traffic(const rs_scenario *sc)
{
    static const char *const keys[] = { "workload.plan", "workload.trace" };
    for (unsigned k = 0; k < 2; k++) {
        json_t *v = rs_cli_key(sc, keys[k]);
        int set = json_is_string(v) && json_string_value(v)[0];
        json_decref(v);
        if (set)
            return rs_cli_bad_input("nccl-tests: %s: expected it unset (nccl-tests runs its own collective over "
                                    "every GPU, which a workload would replace)", keys[k]);
    }
    char *text = NULL;
    if (rs_scenario_dump(sc, &text) != RS_OK)
        return RS_EXIT_RUN_FAILED;
    json_t *j = json_loads(text, 0, NULL);
    free(text);
    const char *what = json_object_get(j, "jobs") ? "jobs" : json_object_get(j, "scheduler") ? "scheduler" : NULL;
    int code = !j ? RS_EXIT_RUN_FAILED
                  : what ? rs_cli_bad_input("nccl-tests: %s: expected none in the scenario (nccl-tests runs its own "
                                            "collective over every GPU, not a shared cluster)", what)
                         : RS_EXIT_OK;
    json_decref(j);
    return code;
}

static int nccl_tests(const nt_opts *o, const rs_scenario *sc)
{
    rs_net_config c;
    rs_scenario_net(sc, &c);
    uint32_t nranks = c.gpus;
    if (!strcmp(o->op->name, "sendrecv")) {
        json_t *g = rs_cli_key(sc, "traffic.group");
        const char *gs = json_string_value(g), *comma = gs ? strchr(gs, ',') : NULL;
        int two = gs && ((!strcmp(gs, "all") && nranks == 2) || (comma && !strchr(comma + 1, ',')));
        json_decref(g);
        if (!two)
            return rs_cli_bad_input("nccl-tests: sendrecv: railsim's send/recv sends from rank 0 to rank 1 of "
                                    "traffic.group, which is nccl-tests' sendrecv_perf on 2 GPUs only (there every "
                                    "rank sends to the next); expected a group of two GPUs (--set traffic.group=0,8)%s",
                                    "");
        nranks = 2;
    }
    static double sizes[MAX_SIZES];
    int n, code = sizes_list(o, sizes, &n);
    rs_err err;
    /* The network builds (a size that does not fill HB domains is said
     * before the table starts). */
    rs_net *net = NULL;
    if (code == RS_EXIT_OK && rs_scenario_net_create(sc, 0, &net, &err) != RS_OK) {
        fprintf(stderr, "railsim: %s\n", err.msg);
        code = err.code == RS_ENOMEM ? RS_EXIT_RUN_FAILED : RS_EXIT_BAD_INPUT;
    }
    rs_net_destroy(net);
    if (code == RS_EXIT_OK && o->outdir && rs_output_mkdir(o->outdir, &err) != RS_OK) {
        fprintf(stderr, "railsim: %s\n", err.msg);
        code = RS_EXIT_BAD_INPUT;
    }
    json_t *rows = json_array();
    if (code == RS_EXIT_OK && !o->quiet && !o->json)
        table_head(stdout, o, nranks, sc);
    for (int i = 0; i < n && code == RS_EXIT_OK; i++) {
        json_t *row = NULL;
        if ((code = run_size(o, sc, nranks, (size_t)sizes[i], &row)) != RS_EXIT_OK)
            break;
        json_array_append_new(rows, row);
        if (!o->quiet && !o->json) {
            table_row(stdout, o, row);
            fflush(stdout);
        }
    }
    char *text = NULL;
    size_t tlen = 0;
    json_t *doc = NULL;
    if (code == RS_EXIT_OK)
        code = results_write(o, nranks, sc, rows, &text, &tlen, &doc);
    char *js = code == RS_EXIT_OK ? json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    if (code == RS_EXIT_OK && !js)
        code = RS_EXIT_RUN_FAILED;
    if (code == RS_EXIT_OK && !o->quiet) {
        if (o->json)
            printf("%s\n", js);
        else /* the rows are out already: the footer, the last lines of the text */
            fputs(strstr(text, "# Out of bounds"), stdout);
    }
    if (code == RS_EXIT_OK && o->outdir) {
        const char *names[2] = { "nccl-tests.json", "nccl-tests.txt" }, *data[2] = { js, text };
        size_t lens[2] = { strlen(js), tlen };
        if (rs_output_write_set(o->outdir, names, data, lens, 2, &err) != RS_OK) {
            fprintf(stderr, "railsim: %s\n", err.msg);
            code = RS_EXIT_BAD_INPUT;
        }
    }
    free(js);
    free(text);
    json_decref(doc);
    json_decref(rows);
    return code;
}

int rs_cmd_nccl_tests(int argc, char **argv)
{
    /* nccl-tests' defaults: -b 32M -e 32M -i 1M -f 1; -n 20 -w 1. */
    nt_opts o = { .min = 32 * 1048576.0, .max = 32 * 1048576.0, .step = 1048576.0, .factor = 1, .iters = 20,
                  .warmup = 1 };
    char **sets = calloc((size_t)argc + 1, sizeof *sets);
    if (!sets)
        return RS_EXIT_RUN_FAILED;
    int nsets = 0, code = parse_args(&o, argc, argv, sets, &nsets);
    rs_scenario *sc = NULL;
    if (code == RS_EXIT_OK)
        code = rs_cli_load(o.path, sets, nsets, &sc);
    free(sets);
    if (code == RS_EXIT_OK && rs_cli_key_is(sc, "fidelity", "both"))
        code = rs_cli_bad_input("fidelity: nccl-tests runs one level; expected packet or flow, got %s", "both");
    if (code == RS_EXIT_OK)
        code = own_traffic(sc);
    if (code == RS_EXIT_OK)
        code = nccl_tests(&o, sc);
    rs_scenario_destroy(sc);
    return code;
}
