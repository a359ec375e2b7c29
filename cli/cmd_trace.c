/*
 * cmd_trace.c - `railsim trace gen|info|dump|import|export`: plans to trace
 * files, trace files to text (docs/trace-format.md, docs/plan-format.md),
 * and Chakra execution traces in and out (docs/chakra.md).
 * Validates every argument before writing anything; trace files are
 * written atomically by rs_trace_write.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chakra.h"
#include "cli.h"
#include "coll.h"
#include "fmt.h"
#include "gen.h"
#include "plan.h"
#include "trace.h"

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void usage(FILE *f)
{
    fputs("usage: railsim trace gen PLAN.json|PRESET [--gpus N] -o FILE [-q]\n"
          "       railsim trace info FILE\n"
          "       railsim trace dump FILE [--rank R]\n"
          "       railsim trace import chakra DIR|FILE.RANK.et... -o FILE [--gpu PRESET] [--efficiency E]\n"
          "                                   [--comm-groups FILE.json] [-q]\n"
          "       railsim trace export chakra TRACE|PLAN|PRESET -o DIR [--name NAME] [--gpus N]\n"
          "presets: llama2-7b, llama2-70b, gpt3-175b, gpt-13b, gpt-1t, mixtral-8x7b, demo-dense, demo-moe\n", f);
}

/* A whole decimal number in [lo, hi]. */
static int parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
    if (!s || !*s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno || v < lo || v > hi)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

static int fail_err(const rs_err *err, int code)
{
    fprintf(stderr, "railsim: %s\n", err->msg);
    return code == RS_ENOMEM || code == RS_EINTERNAL ? RS_EXIT_RUN_FAILED : RS_EXIT_BAD_INPUT;
}

/* Load a plan file or preset, apply --gpus (0: keep), generate its trace. */
static int plan_trace(const char *arg, uint32_t gpus, rs_plan *plan, rs_trace **t, rs_err *err)
{
    int rc = rs_plan_load_arg(arg, plan, err);
    if (!rc && gpus)
        rc = rs_plan_set_gpus(plan, gpus, err);
    return rc ? rc : rs_gen(plan, t, err);
}

/* ---- gen ----------------------------------------------------------------------- */

static int cmd_gen(int argc, char **argv)
{
    const char *plan_arg = NULL, *out = NULL;
    uint32_t gpus = 0;
    int quiet = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-o") || !strcmp(a, "--out")) {
            if (i + 1 >= argc)
                return rs_cli_bad_input("%s: expected an output file after it", a);
            out = argv[++i];
        } else if (!strcmp(a, "--gpus")) {
            if (i + 1 >= argc || parse_u32(argv[i + 1], 1, RS_TRACE_MAX_RANKS, &gpus))
                return rs_cli_bad_input("%s: expected a GPU count from 1 to 16777216 after it", a);
            i++;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (a[0] == '-' && a[1]) {
            return rs_cli_bad_input("trace gen: unknown option '%s'; expected --gpus N, -o FILE or -q", a);
        } else if (plan_arg) {
            return rs_cli_bad_input("trace gen: unexpected argument '%s'; expected one plan", a);
        } else {
            plan_arg = a;
        }
    }
    if (!plan_arg)
        return rs_cli_bad_input("trace gen: expected a plan file or preset%s", "");
    if (!out)
        return rs_cli_bad_input("trace gen: expected -o FILE for the trace%s", "");
    rs_err err;
    rs_err_clear(&err);
    rs_plan plan;
    rs_trace *t;
    double t0 = wall_now();
    int rc = plan_trace(plan_arg, gpus, &plan, &t, &err);
    if (rc)
        return fail_err(&err, rc);
    double t1 = wall_now();
    rs_trace_file_stats st;
    rc = rs_trace_write(t, out, &st, &err);
    double t2 = wall_now();
    if (rc) {
        rs_trace_destroy(t);
        return fail_err(&err, rc);
    }
    if (!quiet) {
        uint32_t maxops = 0;
        for (uint32_t c = 0; c < rs_trace_nclasses(t); c++) {
            uint32_t n;
            rs_trace_class_program(t, c, &n);
            if (n > maxops)
                maxops = n;
        }
        printf("railsim trace gen: %s on %u GPUs (tp %u, pp %u, dp %u, cp %u, ep %u, zero %u, batch %u): "
               "%u ranks in %u classes, up to %u ops per rank\n",
               plan.name, rs_trace_ngpus(t), plan.par.tp, plan.par.pp, plan.par.dp, plan.par.cp, plan.par.ep,
               plan.par.zero, plan.par.global_batch, rs_trace_nranks(t), rs_trace_nclasses(t), maxops);
        char fb[RS_FMT_LEN], pb[RS_FMT_LEN], eb[RS_FMT_LEN];
        printf("  wrote %s: %s (payload %s, flat programs %s, ratio %.0f:1); generated in %.3f s, encoded in %.3f s\n",
               out, rs_fmt_bytes(fb, sizeof fb, (double)st.file_bytes), rs_fmt_bytes(pb, sizeof pb, (double)st.payload_bytes),
               rs_fmt_bytes(eb, sizeof eb, (double)st.expanded_bytes),
               st.file_bytes ? (double)st.expanded_bytes / (double)st.file_bytes : 0.0, t1 - t0, t2 - t1);
    }
    rs_trace_destroy(t);
    return RS_EXIT_OK;
}

/* ---- info ------------------------------------------------------------------------ */

static int load(const char *path, rs_trace **t, rs_trace_file_stats *st)
{
    rs_err err;
    rs_err_clear(&err);
    int rc = rs_trace_read(path, t, st, &err);
    return rc ? fail_err(&err, rc) : RS_EXIT_OK;
}

static void print_bytes(const char *name, double v)
{
    if (v > 0)
    {
        char b[RS_FMT_LEN];
        printf("    %-14s %s\n", name, rs_fmt_bytes(b, sizeof b, v));
    }
}

static int cmd_info(int argc, char **argv)
{
    if (argc < 1)
        return rs_cli_bad_input("trace info: expected a trace file%s", "");
    if (argc > 1)
        return rs_cli_bad_input("trace info: unexpected argument '%s'; expected one trace file", argv[1]);
    rs_trace *t;
    rs_trace_file_stats st;
    int rc = load(argv[0], &t, &st);
    if (rc)
        return rc;
    const rs_trace_iter *it = rs_trace_iteration(t);
    uint64_t ops_total = 0, kinds[RS_OP_NKINDS] = { 0 };
    double by_coll[RS_COLL_NOPS] = { 0 }, by_dim[RS_DIM_COUNT] = { 0 };
    uint32_t min_ops = UINT32_MAX, max_ops = 0;
    rs_time min_c = RS_TIME_MAX, max_c = 0;
    for (uint32_t c = 0; c < rs_trace_nclasses(t); c++) {
        uint32_t n, k = rs_trace_class_ranks(t, c);
        const rs_op *ops = rs_trace_class_program(t, c, &n);
        rs_time comp = 0;
        for (uint32_t i = 0; i < n; i++) {
            const rs_op *o = &ops[i];
            kinds[o->kind] += k;
            comp += o->duration;
            if (o->kind == RS_OP_COLL) {
                by_coll[o->coll] += (double)o->bytes * k;
                by_dim[o->dim] += (double)o->bytes * k;
            } else if (o->kind == RS_OP_SEND) {
                by_coll[RS_COLL_SENDRECV] += (double)o->bytes * k;
                by_dim[o->dim] += (double)o->bytes * k;
            }
        }
        ops_total += (uint64_t)n * k;
        if (k) {
            min_ops = n < min_ops ? n : min_ops;
            max_ops = n > max_ops ? n : max_ops;
            min_c = comp < min_c ? comp : min_c;
            max_c = comp > max_c ? comp : max_c;
        }
    }
    printf("trace %s: plan %s\n", argv[0], rs_trace_name(t));
    printf("  ranks          %u on %u GPUs, %u rank classes, %u communicators, %u slots per rank\n",
           rs_trace_nranks(t), rs_trace_ngpus(t), rs_trace_nclasses(t), rs_trace_ncomms(t), rs_trace_nslots(t));
    printf("  parallelism    tp %u, pp %u, dp %u, cp %u, ep %u, zero %u; %u micro-batches, %u layers\n", it->tp,
           it->pp, it->dp, it->cp, it->ep, it->zero, it->micro_batches, it->layers);
    printf("  iteration      %" PRIu64 " tokens, %.4g model FLOPs, GPU peak %.4g FLOP/s at efficiency %.3g\n",
           it->tokens, it->model_flops, it->peak_flops, it->efficiency);
    printf("  ops            %" PRIu64 " in all (compute %" PRIu64 ", collective %" PRIu64 ", send %" PRIu64
           ", recv %" PRIu64 "); %u to %u per rank\n",
           ops_total, kinds[RS_OP_COMPUTE], kinds[RS_OP_COLL], kinds[RS_OP_SEND], kinds[RS_OP_RECV], min_ops,
           max_ops);
    char b0[RS_FMT_LEN], b1[RS_FMT_LEN], b2[RS_FMT_LEN];
    printf("  compute        %s to %s per rank per iteration\n", rs_fmt_time_like(b0, sizeof b0, (double)min_c, (double)max_c),
           rs_fmt_time(b1, sizeof b1, (double)max_c));
    printf("  bytes by kind  (sum over ranks; collectives at their nccl-tests size, sends once)\n");
    for (int c = 0; c < RS_COLL_NOPS; c++)
        print_bytes(rs_coll_op_name((rs_coll_op)c), by_coll[c]);
    printf("  bytes by dimension\n");
    for (int d = 1; d < RS_DIM_COUNT; d++)
        print_bytes(rs_dim_name((rs_dim)d), by_dim[d]);
    printf("  file           %s; payload %s before zlib; flat per-rank programs "
           "would take %s: compression ratio %.0f:1\n",
           rs_fmt_bytes(b0, sizeof b0, (double)st.file_bytes),
           rs_fmt_bytes(b1, sizeof b1, (double)st.payload_bytes), rs_fmt_bytes(b2, sizeof b2, (double)st.expanded_bytes),
           st.file_bytes ? (double)st.expanded_bytes / (double)st.file_bytes : 0.0);
    rs_trace_destroy(t);
    return RS_EXIT_OK;
}

/* ---- dump ------------------------------------------------------------------------- */

/* One op; rank RS_NONE prints slots unresolved. */
static void dump_op(const rs_trace *t, uint32_t rank, uint32_t i, const rs_op *o)
{
    printf("  %6u s%-2u ", i, o->stream);
    switch (o->kind) {
    case RS_OP_COMPUTE:
        printf("compute %" PRIu64 " ps", o->duration);
        if (o->bytes)
            printf(" hbm %" PRIu64 " B", o->bytes);
        break;
    case RS_OP_COLL:
        printf("%s %s ", rs_coll_op_name((rs_coll_op)o->coll), rs_dim_name((rs_dim)o->dim));
        if (rank == RS_NONE) {
            printf("slot %u", o->comm);
        } else {
            uint32_t n, c = rs_trace_op_comm(t, rank, o);
            rs_trace_comm_ranks(t, c, &n);
            printf("comm %u (%u ranks)", c, n);
        }
        printf(" %" PRIu64 " B", o->bytes);
        break;
    default:
        printf("%s %s ", rs_op_kind_name((rs_op_kind)o->kind), rs_dim_name((rs_dim)o->dim));
        if (rank == RS_NONE)
            printf("slot %u", o->comm);
        else
            printf("peer %u", rs_trace_op_peer(t, rank, o));
        printf(" %" PRIu64 " B", o->bytes);
        break;
    }
    printf(" \"%s\"", rs_trace_string(t, o->label));
    if (o->dep[0] != RS_NONE)
        printf(" after %u", o->dep[0]);
    if (o->dep[1] != RS_NONE)
        printf(",%u", o->dep[1]);
    putchar('\n');
}

static void dump_header(const rs_trace *t)
{
    const rs_trace_iter *it = rs_trace_iteration(t);
    printf("railsim trace, plan %s\n", rs_trace_name(t));
    printf("ranks %u gpus %u classes %u communicators %u slots %u strings %u\n", rs_trace_nranks(t),
           rs_trace_ngpus(t), rs_trace_nclasses(t), rs_trace_ncomms(t), rs_trace_nslots(t), rs_trace_nstrings(t));
    printf("iteration tokens %" PRIu64 " model_flops %.17g peak_flops %.17g efficiency %.17g micro_batches %u "
           "layers %u tp %u pp %u dp %u cp %u ep %u zero %u\n",
           it->tokens, it->model_flops, it->peak_flops, it->efficiency, it->micro_batches, it->layers, it->tp,
           it->pp, it->dp, it->cp, it->ep, it->zero);
}

static void dump_rank(const rs_trace *t, uint32_t r)
{
    printf("rank %u gpu %u class %u slots", r, rs_trace_rank_gpu(t, r), rs_trace_rank_class(t, r));
    const uint32_t *s = rs_trace_rank_slots(t, r);
    for (uint32_t k = 0; k < rs_trace_nslots(t); k++) {
        if (s[k] == RS_NONE)
            printf(" -");
        else
            printf(" %u", s[k]);
    }
    putchar('\n');
}

static int cmd_dump(int argc, char **argv)
{
    const char *path = NULL;
    uint32_t rank = RS_NONE;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--rank")) {
            if (i + 1 >= argc || parse_u32(argv[i + 1], 0, RS_TRACE_MAX_RANKS - 1, &rank))
                return rs_cli_bad_input("--rank: expected a rank number after it%s", "");
            i++;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return rs_cli_bad_input("trace dump: unknown option '%s'; expected --rank R", argv[i]);
        } else if (path) {
            return rs_cli_bad_input("trace dump: unexpected argument '%s'; expected one trace file", argv[i]);
        } else {
            path = argv[i];
        }
    }
    if (!path)
        return rs_cli_bad_input("trace dump: expected a trace file%s", "");
    rs_trace *t;
    rs_trace_file_stats st;
    int rc = load(path, &t, &st);
    if (rc)
        return rc;
    if (rank != RS_NONE && rank >= rs_trace_nranks(t)) {
        fprintf(stderr, "railsim: --rank: %u, expected a rank below %u in %s\n", rank, rs_trace_nranks(t), path);
        rs_trace_destroy(t);
        return RS_EXIT_BAD_INPUT;
    }
    dump_header(t);
    if (rank != RS_NONE) {
        dump_rank(t, rank);
        uint32_t n;
        const rs_op *ops = rs_trace_program(t, rank, &n);
        printf("program %u ops\n", n);
        for (uint32_t i = 0; i < n; i++)
            dump_op(t, rank, i, &ops[i]);
        rs_trace_destroy(t);
        return RS_EXIT_OK;
    }
    for (uint32_t c = 0; c < rs_trace_ncomms(t); c++) {
        uint32_t n;
        const uint32_t *m = rs_trace_comm_ranks(t, c, &n);
        printf("comm %u %s %u:", c, rs_dim_name(rs_trace_comm_dim(t, c)), n);
        for (uint32_t k = 0; k < n; k++)
            printf(" %u", m[k]);
        putchar('\n');
    }
    for (uint32_t r = 0; r < rs_trace_nranks(t); r++)
        dump_rank(t, r);
    for (uint32_t c = 0; c < rs_trace_nclasses(t); c++) {
        uint32_t n;
        const rs_op *ops = rs_trace_class_program(t, c, &n);
        printf("class %u: %u ranks, %u ops\n", c, rs_trace_class_ranks(t, c), n);
        for (uint32_t i = 0; i < n; i++)
            dump_op(t, RS_NONE, i, &ops[i]);
    }
    rs_trace_destroy(t);
    return RS_EXIT_OK;
}


/* ---- import / export chakra -------------------------------------------------------- */

static int parse_frac(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = s ? strtod(s, &end) : 0;
    if (!s || !*s || *end || errno || !(v > 0 && v <= 1))
        return -1;
    *out = v;
    return 0;
}

static int cmd_import(int argc, char **argv)
{
    if (argc < 1 || strcmp(argv[0], "chakra"))
        return rs_cli_bad_input("trace import: expected the format 'chakra'%s", "");
    const char *out = NULL;
    int quiet = 0;
    rs_chakra_opts o;
    rs_chakra_opts_default(&o);
    const char **paths = calloc((size_t)argc, sizeof *paths);
    uint32_t np = 0;
    if (!paths)
        return RS_EXIT_RUN_FAILED;
    int code = RS_EXIT_OK;
    for (int i = 1; i < argc && code == RS_EXIT_OK; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-o") || !strcmp(a, "--out")) {
            if (i + 1 >= argc)
                code = rs_cli_bad_input("%s: expected an output file after it", a);
            else
                out = argv[++i];
        } else if (!strcmp(a, "--gpu")) {
            if (i + 1 >= argc || rs_plan_gpu_peak(argv[i + 1], &o.peak_flops, &o.mem_bw))
                code = rs_cli_bad_input("%s: expected a GPU preset after it (a100, h100, h200, b200, ...)", a);
            i++;
        } else if (!strcmp(a, "--comm-groups")) {
            if (i + 1 >= argc)
                code = rs_cli_bad_input("%s: expected a JSON file of process groups after it", a);
            else
                o.comm_groups = argv[++i];
        } else if (!strcmp(a, "--efficiency")) {
            if (i + 1 >= argc || parse_frac(argv[i + 1], &o.efficiency))
                code = rs_cli_bad_input("%s: expected a fraction above 0 and at most 1 after it", a);
            i++;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (a[0] == '-' && a[1]) {
            code = rs_cli_bad_input("trace import chakra: unknown option '%s'; expected -o FILE, --gpu PRESET, "
                                    "--efficiency E, --comm-groups FILE or -q", a);
        } else {
            paths[np++] = a;
        }
    }
    if (code == RS_EXIT_OK && !np)
        code = rs_cli_bad_input("trace import chakra: expected a directory of NAME.RANK.et files or the files%s", "");
    if (code == RS_EXIT_OK && !out)
        code = rs_cli_bad_input("trace import chakra: expected -o FILE for the trace%s", "");
    if (code != RS_EXIT_OK) {
        free(paths);
        return code;
    }
    rs_err err;
    rs_err_clear(&err);
    rs_trace *t;
    rs_chakra_stats st;
    int rc = rs_chakra_import_paths(paths, np, &o, &t, &st, &err);
    free(paths);
    if (rc)
        return fail_err(&err, rc);
    rs_trace_file_stats fs;
    rc = rs_trace_write(t, out, &fs, &err);
    if (rc) {
        rs_trace_destroy(t);
        return fail_err(&err, rc);
    }
    if (!quiet) {
        static const char *tn[RS_CHAKRA_NTYPES] = { "invalid", "metadata", "mem-load", "mem-store", "compute",
                                                    "send", "recv", "collective", "storage", "batch",
                                                    "checkpoint" };
        printf("railsim trace import chakra: %u ranks, %" PRIu64 " nodes (", st.nranks, st.nodes);
        int first = 1;
        for (int k = 0; k < RS_CHAKRA_NTYPES; k++)
            if (st.by_type[k]) {
                printf("%s%" PRIu64 " %s", first ? "" : ", ", st.by_type[k], tn[k]);
                first = 0;
            }
        printf(") -> %" PRIu64 " ops in %u classes\n", st.ops, rs_trace_nclasses(t));
        printf("  %" PRIu64 " nodes with nothing to simulate contracted, %" PRIu64 " collectives approximated, "
               "%" PRIu64 " joins, %" PRIu64 " ops serialized\n", st.contracted, st.approximated, st.joins,
               st.serialized);
        printf("  wrote %s: %" PRIu64 " bytes\n", out, fs.file_bytes);
    }
    rs_trace_destroy(t);
    return RS_EXIT_OK;
}

/* A railsim trace file (by its magic), else a plan file or preset. */
static int is_trace_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char m[8] = { 0 };
    if (!f)
        return 0;
    size_t n = fread(m, 1, sizeof m, f);
    fclose(f);
    return n == 8 && !memcmp(m, "RSTRACE", 8);
}

static int cmd_export(int argc, char **argv)
{
    if (argc < 1 || strcmp(argv[0], "chakra"))
        return rs_cli_bad_input("trace export: expected the format 'chakra'%s", "");
    const char *in = NULL, *out = NULL, *name = NULL;
    uint32_t gpus = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-o") || !strcmp(a, "--out")) {
            if (i + 1 >= argc)
                return rs_cli_bad_input("%s: expected an output directory after it", a);
            out = argv[++i];
        } else if (!strcmp(a, "--name")) {
            if (i + 1 >= argc || !*argv[i + 1] || strchr(argv[i + 1], '/'))
                return rs_cli_bad_input("%s: expected a file name prefix (no '/') after it", a);
            name = argv[++i];
        } else if (!strcmp(a, "--gpus")) {
            if (i + 1 >= argc || parse_u32(argv[i + 1], 1, RS_TRACE_MAX_RANKS, &gpus))
                return rs_cli_bad_input("%s: expected a GPU count from 1 to 16777216 after it", a);
            i++;
        } else if (a[0] == '-' && a[1]) {
            return rs_cli_bad_input("trace export chakra: unknown option '%s'; expected -o DIR, --name NAME or "
                                    "--gpus N", a);
        } else if (in) {
            return rs_cli_bad_input("trace export chakra: unexpected argument '%s'; expected one trace or plan", a);
        } else {
            in = a;
        }
    }
    if (!in)
        return rs_cli_bad_input("trace export chakra: expected a trace file, plan file or preset%s", "");
    if (!out)
        return rs_cli_bad_input("trace export chakra: expected -o DIR for the ET files%s", "");
    rs_err err;
    rs_err_clear(&err);
    rs_trace *t = NULL;
    int rc;
    if (is_trace_file(in)) {
        if (gpus)
            return rs_cli_bad_input("--gpus: applies to plans, and %s is a trace", in);
        rc = rs_trace_read(in, &t, NULL, &err);
    } else {
        rs_plan plan;
        rc = plan_trace(in, gpus, &plan, &t, &err);
    }
    if (rc)
        return fail_err(&err, rc);
    char base[128];
    if (!name) {
        const char *b = strrchr(in, '/');
        b = b ? b + 1 : in;
        snprintf(base, sizeof base, "%s", b);
        char *dot = strrchr(base, '.');
        if (dot && dot != base)
            *dot = 0;
        name = base;
    }
    rc = rs_chakra_export(t, out, name, &err);
    uint32_t n = rs_trace_nranks(t);
    rs_trace_destroy(t);
    if (rc)
        return fail_err(&err, rc);
    printf("railsim trace export chakra: wrote %u files %s/%s.0.et .. %s.%u.et\n", n, out, name, name, n - 1);
    return RS_EXIT_OK;
}

int rs_cmd_trace(int argc, char **argv)
{
    if (argc < 1)
        return rs_cli_bad_input("trace: expected a subcommand: gen, info, dump, import or export%s", "");
    if (!strcmp(argv[0], "gen"))
        return cmd_gen(argc - 1, argv + 1);
    if (!strcmp(argv[0], "info"))
        return cmd_info(argc - 1, argv + 1);
    if (!strcmp(argv[0], "dump"))
        return cmd_dump(argc - 1, argv + 1);
    if (!strcmp(argv[0], "import"))
        return cmd_import(argc - 1, argv + 1);
    if (!strcmp(argv[0], "export"))
        return cmd_export(argc - 1, argv + 1);
    if (!strcmp(argv[0], "help") || !strcmp(argv[0], "--help") || !strcmp(argv[0], "-h")) {
        usage(stdout);
        return RS_EXIT_OK;
    }
    return rs_cli_bad_input("trace: unknown subcommand '%s'; expected gen, info, dump, import or export", argv[0]);
}
