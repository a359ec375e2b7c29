/*
 * execute.c - one scenario run and printed (cli.h, rs_run_execute): a
 * progress line for a person watching, SIGINT and SIGTERM stopping the
 * run through its progress callback, the human summary, and the one line
 * on stderr of what went wrong. `railsim run`, `faults sweep`, `validate`
 * and the MPI job spreader run scenarios through it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "fmt.h"

typedef struct progress {
    double t0;
    int shown;
    int show;   /* print a progress line (stderr is a terminal, not CI) */
    double last; /* wall time of the last line */
} progress;

/* SIGINT/SIGTERM: the handler only records the signal; the run loop's
 * progress hook (every 2^16 events) stops the run, which then closes its
 * outputs marked partial and exits 128 + the signal. */
static volatile sig_atomic_t got_signal;

#define TIME(ps) rs_fmt_time(fb(), RS_FMT_LEN, (double)(ps))
#define BYTES(b) rs_fmt_bytes(fb(), RS_FMT_LEN, (double)(b))
#define JI(o, k) json_integer_value(json_object_get((o), (k)))

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A progress line only for a person watching: stderr a terminal and not
 * a CI job (CI=true, as GitHub Actions and GitLab set it). */
static int progress_wanted(int quiet)
{
    const char *ci = getenv("CI");
    return !quiet && isatty(STDERR_FILENO) && !(ci && ci[0] && strcmp(ci, "0") && strcmp(ci, "false"));
}

static void on_signal(int sig)
{
    got_signal = sig;
}

/* rs_run_progress_fn: a nonzero return stops the run. */
static int show_progress(void *ctx, rs_time now, uint64_t events, double done)
{
    progress *p = ctx;
    if (RS_UNLIKELY(got_signal))
        return 1;
    if (!p->show)
        return 0;
    double w = wall_now();
    if (w - p->last < 0.5) /* at most two lines a second */
        return 0;
    p->last = w;
    char line[160];
    /* \033[K clears what a longer previous line left. */
    fprintf(stderr, "\r%s\033[K", rs_fmt_progress(line, sizeof line, (double)now, events, w - p->t0, done));
    p->shown = 1;
    return 0;
}

/* Formatted figures for one printf (fmt.h), in rotating buffers. */
static char *fb(void)
{
    static char bufs[12][RS_FMT_LEN];
    static unsigned k;
    return bufs[k++ % 12];
}

static void print_human(FILE *f, const json_t *s, uint64_t relayed)
{
    const json_t *fl = json_object_get(s, "flows"), *pk = json_object_get(s, "packets");
    const json_t *fct = json_object_get(fl, "fct_ps"), *topo = json_object_get(s, "topology");
    long long sw = json_integer_value(json_object_get(topo, "switches"));
    long long lsw = json_integer_value(json_object_get(topo, "switches_logical"));
    printf("railsim run: %s, %lld GPUs, %lld switches", json_string_value(json_object_get(topo, "kind")),
           (long long)json_integer_value(json_object_get(topo, "gpus")), sw);
    if (lsw != sw) /* rails sharing switches: the simulator keeps one per rail */
        printf(" (%lld simulated, one per rail)", lsw);
    printf(" in %lld tier(s), %lld links\n", (long long)json_integer_value(json_object_get(topo, "tiers")),
           (long long)json_integer_value(json_object_get(topo, "links")));
    fprintf(f, "  flows      %lld of %lld completed, %s\n", (long long)JI(fl, "completed"), (long long)JI(fl, "count"),
            BYTES(JI(fl, "bytes")));
    /* Forwarding across rails (docs/model.md, "HB domain and rail-only
     * forwarding"): NCCL's PXN relays, or synthetic (verbs) traffic
     * forwarded where rail-only has no path. */
    if (JI(topo, "hb_domains") > 0 && JI(topo, "gpus") > JI(topo, "hb_domains"))
        fprintf(f, "  forwarding %llu of %lld messages relayed through an HB domain onto another rail\n",
                (unsigned long long)relayed, (long long)JI(fl, "count"));
    if (json_is_integer(json_object_get(fct, "p50")))
        fprintf(f, "  FCT        min %s, p50 %s, p99 %s, max %s\n", TIME(JI(fct, "min")), TIME(JI(fct, "p50")),
                TIME(JI(fct, "p99")), TIME(JI(fct, "max")));
    const json_t *co = json_object_get(s, "collective");
    if (co) {
        const json_t *t = json_object_get(co, "time_ps");
        const char *proto = json_string_value(json_object_get(co, "protocol")); /* NCCL's, where it ran */
        fprintf(f, "  collective %s (%s%s%s), %lld ranks, %s, %zu of %lld iteration(s)",
                json_string_value(json_object_get(co, "op")), json_string_value(json_object_get(co, "algo")),
                proto ? "/" : "", proto ? proto : "",
                (long long)json_integer_value(json_object_get(co, "ranks")), BYTES(JI(co, "bytes")),
                json_array_size(json_object_get(co, "times_ps")),
                (long long)json_integer_value(json_object_get(co, "iters")));
        if (json_is_integer(t))
            fprintf(f, ": mean %s", TIME(json_integer_value(t)));
        if (json_is_real(json_object_get(co, "algbw_GBps")))
            fprintf(f, ", algbw %.2f GB/s, busbw %.2f GB/s",
                    json_real_value(json_object_get(co, "algbw_GBps")),
                    json_real_value(json_object_get(co, "busbw_GBps")));
        fputc('\n', f);
        const json_t *b = json_object_get(co, "bound_ps");
        if (json_is_integer(t) && json_integer_value(b) > 0)
            fprintf(f, "  bound      network-only %s; time over bound %.4fx\n", TIME(json_integer_value(b)),
                    (double)json_integer_value(t) / (double)json_integer_value(b));
    }
    const json_t *it = json_object_get(s, "iteration");
    if (it) {
        const json_t *t = json_object_get(it, "time_ps");
        fprintf(f, "  iteration  %s, %lld ranks, %zu of %lld iteration(s)", json_string_value(json_object_get(it, "name")),
                (long long)json_integer_value(json_object_get(it, "ranks")),
                json_array_size(json_object_get(it, "times_ps")),
                (long long)json_integer_value(json_object_get(it, "iterations")));
        if (json_is_integer(t)) {
            double tt = (double)json_integer_value(t);
            double c = (double)json_integer_value(json_object_get(json_object_get(it, "compute_ps"), "mean"));
            double e = (double)json_integer_value(json_object_get(json_object_get(it, "exposed_comm_ps"), "mean"));
            fprintf(f, ": mean %s, compute %s, exposed comm %s (%.1f %%)", TIME(tt), TIME(c), TIME(e),
                    tt > 0 ? 100.0 * e / tt : 0.0);
            if (json_is_real(json_object_get(it, "tokens_per_s")))
                fprintf(f, ", %.0f tokens/s", json_real_value(json_object_get(it, "tokens_per_s")));
            if (json_is_real(json_object_get(it, "mfu")))
                fprintf(f, ", MFU %.1f %%", 100.0 * json_real_value(json_object_get(it, "mfu")));
        }
        fputc('\n', f);
        const json_t *d = json_object_get(it, "comm_by_dim_ps");
        if (json_is_object(d)) {
            fprintf(f, "  exposed    by dimension:");
            const char *k;
            const json_t *v;
            /* One unit for the line: the exposed communication's. */
            double ref = (double)JI(json_object_get(it, "exposed_comm_ps"), "mean");
            json_object_foreach((json_t *)d, k, v)
                fprintf(f, " %s %s", k, rs_fmt_time_like(fb(), RS_FMT_LEN, (double)json_integer_value(v), ref));
            fputc('\n', f);
        }
        const json_t *g = json_object_get(it, "gpu");
        if (json_is_string(json_object_get(g, "name")) && json_is_integer(json_object_get(g, "contention_ps"))) {
            fprintf(f, "  gpu        %s: compute slowed %s by NCCL's SMs and HBM traffic, communication alone %s",
                    json_string_value(json_object_get(g, "name")), TIME(JI(g, "contention_ps")),
                    TIME(JI(g, "comm_only_ps")));
            if (json_is_real(json_object_get(g, "power_w")))
                fprintf(f, "; %.0f W per GPU, %.4g kJ per iteration", json_real_value(json_object_get(g, "power_w")),
                        json_real_value(json_object_get(g, "energy_j")) / 1e3);
            if (json_is_real(json_object_get(g, "energy_j_per_token")))
                fprintf(f, ", %.3g J per token", json_real_value(json_object_get(g, "energy_j_per_token")));
            fputc('\n', f);
        }
        const json_t *b = json_object_get(it, "bound_ps");
        if (json_is_integer(b))
            fprintf(f, "  bound      network-only %s per iteration (rank %lld)\n", TIME(json_integer_value(b)),
                    (long long)json_integer_value(json_object_get(it, "bound_rank")));
    }
    /* A shared cluster: one line per job (docs/shared-clusters.md). */
    size_t k;
    const json_t *job;
    json_array_foreach(json_object_get(s, "jobs"), k, job) {
        const json_t *jit = json_object_get(job, "iteration"), *tr = json_object_get(job, "traffic");
        const json_t *t = json_object_get(job, "time_ps"), *sd = json_object_get(job, "slowdown");
        fprintf(f, "  job        %s: %lld GPUs (%s), ", json_string_value(json_object_get(job, "name")),
                (long long)JI(job, "gpus"), json_string_value(json_object_get(job, "placement")));
        const json_t *jco = json_object_get(job, "collective");
        if (jit)
            fprintf(f, "%s, ", json_string_value(json_object_get(jit, "name")));
        else if (jco)
            fprintf(f, "%s (%s) of %s over %lld ranks, ", json_string_value(json_object_get(jco, "op")),
                    json_string_value(json_object_get(jco, "algo")), BYTES(JI(jco, "bytes")),
                    (long long)JI(jco, "ranks"));
        else
            fprintf(f, "%s over %s, ", json_string_value(json_object_get(tr, "kind")),
                    json_string_value(json_object_get(job, "comm")));
        if (!json_is_number(t)) {
            fprintf(f, "did not complete\n");
            continue;
        }
        fprintf(f, "%s%s", TIME(json_number_value(t)), jit || jco ? " per iteration" : "");
        if (jit && json_is_object(json_object_get(jit, "exposed_comm_ps")))
            fprintf(f, ", exposed comm %s",
                    TIME(JI(json_object_get(jit, "exposed_comm_ps"), "mean")));
        if (json_is_number(sd))
            fprintf(f, "; alone %s: slowdown %.4fx", TIME(json_number_value(json_object_get(job, "alone_time_ps"))),
                    json_number_value(sd));
        fputc('\n', f);
    }
    /* A scheduler's arrivals, in all. */
    const json_t *sch = json_object_get(s, "scheduler");
    if (sch) {
        fprintf(f, "  scheduler  %lld of %lld arrivals completed", (long long)JI(sch, "completed"),
                (long long)JI(sch, "arrivals"));
        if (json_is_integer(json_object_get(sch, "makespan_ps")))
            fprintf(f, " in %s, mean wait %s", TIME(JI(sch, "makespan_ps")), TIME(JI(sch, "mean_wait_ps")));
        if (json_is_number(json_object_get(sch, "mean_slowdown")))
            fprintf(f, "; slowdown mean %.4fx, p95 %.4fx, max %.4fx",
                    json_number_value(json_object_get(sch, "mean_slowdown")),
                    json_number_value(json_object_get(sch, "p95_slowdown")),
                    json_number_value(json_object_get(sch, "max_slowdown")));
        if (json_is_number(json_object_get(sch, "iterations_per_s")))
            fprintf(f, "; %.2f iterations/s", json_number_value(json_object_get(sch, "iterations_per_s")));
        fputc('\n', f);
    }
    /* Where the jobs met: the ports both of a pair's data crossed. */
    json_array_foreach(json_object_get(s, "interference"), k, job) {
        const json_t *nm = json_object_get(job, "jobs"), *by = json_object_get(job, "bytes");
        fprintf(f, "  shared     %s and %s: %lld ports (%lld of them GPUs' or NVSwitch's), their bytes there %s "
                "and %s\n", json_string_value(json_array_get(nm, 0)), json_string_value(json_array_get(nm, 1)),
                (long long)JI(job, "ports"), (long long)JI(job, "gpu_side_ports"), BYTES(json_integer_value(json_array_get(by, 0))),
                BYTES(json_integer_value(json_array_get(by, 1))));
    }
    fprintf(f, "  packets    %lld sent, %lld delivered, %lld dropped, %lld retransmitted\n",
            (long long)json_integer_value(json_object_get(pk, "sent")),
            (long long)json_integer_value(json_object_get(pk, "delivered")),
            (long long)json_integer_value(json_object_get(pk, "dropped")),
            (long long)json_integer_value(json_object_get(pk, "retransmitted")));
    /* Congestion control, when there was any (report prints them always). */
    const json_t *pfc = json_object_get(s, "pfc"), *ecn = json_object_get(s, "ecn"), *cnp = json_object_get(s, "cnp");
    if (JI(pfc, "pauses_sent") > 0)
        fprintf(f, "  PFC        %lld pauses, %lld resumes sent, ports paused %s in all\n",
                (long long)JI(pfc, "pauses_sent"), (long long)JI(pfc, "resumes_sent"), TIME(JI(pfc, "paused_ps")));
    if (JI(ecn, "marked") > 0)
        fprintf(f, "  ECN        %lld packets marked\n", (long long)JI(ecn, "marked"));
    if (JI(cnp, "sent") > 0 || JI(cnp, "received") > 0)
        fprintf(f, "  CNP        %lld sent, %lld received\n", (long long)JI(cnp, "sent"), (long long)JI(cnp, "received"));
    const json_t *ff = json_object_get(s, "fault_free");
    if (ff) {
        fprintf(f, "  faults     %zu entries; without them the %s takes ", json_array_size(json_object_get(s, "faults")),
                json_string_value(json_object_get(ff, "time_of")));
        if (json_is_real(json_object_get(ff, "slowdown")))
            fprintf(f, "%s: slowdown %.4fx\n", TIME(JI(ff, "time_ps")), json_real_value(json_object_get(ff, "slowdown")));
        else
            fprintf(f, "- (%s): no slowdown\n", json_string_value(json_object_get(ff, "status")));
    }
    /* With jobs: whom each fault hit. */
    size_t i;
    const json_t *fe;
    json_array_foreach(json_object_get(s, "faults"), i, fe) {
        const json_t *hit = json_object_get(fe, "jobs_hit");
        if (!json_array_size(hit))
            continue;
        fprintf(f, "  fault      %s %s at %s hit", json_string_value(json_object_get(fe, "kind")),
                json_string_value(json_object_get(fe, "target")), TIME(JI(fe, "time_ps")));
        size_t m;
        const json_t *h;
        json_array_foreach(hit, m, h)
            fprintf(f, "%s %s (%lld flows)", m ? "," : "", json_string_value(json_object_get(h, "job")),
                    (long long)JI(h, "flows_hit"));
        fputc('\n', f);
    }
    fprintf(f, "  simulated  %s in %.3f s wall, %lld events, %lld packet-hops\n", TIME(JI(s, "sim_end_ps")),
            json_real_value(json_object_get(s, "wall_s")),
            (long long)json_integer_value(json_object_get(s, "events")),
            (long long)json_integer_value(json_object_get(s, "packet_hops")));
}

/* rs_run_with, printed: the human summary unless quiet, and what went
 * wrong on stderr. */
int rs_run_execute(const rs_scenario *sc, const rs_cli_run *how, json_t **summary)
{
    if (summary)
        *summary = NULL;
    int quiet = how->quiet;
    const char *outdir = how->outdir;
    progress pr = { .t0 = wall_now(), .show = progress_wanted(quiet) };
    pr.last = pr.t0;
    rs_run_opts o;
    rs_run_opts_default(&o);
    o.outdir = outdir;
    o.name = how->path;
    o.force = how->force;
    o.flags = how->flags;
    o.progress = show_progress;
    o.ctx = &pr;
    o.part = how->part;
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    got_signal = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    rs_result *res = NULL;
    rs_err err;
    int rc = rs_run_with(sc, &o, &res, &err);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (pr.shown)
        fputc('\n', stderr);
    if (!res && rc == RS_OK)
        return RS_EXIT_OK; /* a rank other than 0: its part was merged into rank 0's result, or it had none */
    if (!res) {
        fprintf(stderr, "railsim: %s\n", err.msg);
        return rc == RS_ENOMEM ? RS_EXIT_RUN_FAILED : RS_EXIT_BAD_INPUT;
    }
    /* An output that cannot be written (full disk, read-only directory)
     * is the user's environment: bad input. */
    int code = RS_EXIT_OK;
    if (rc != RS_OK) {
        fprintf(stderr, "railsim: %s\n", err.msg);
        code = RS_EXIT_BAD_INPUT;
    }
    if (rs_result_parallel_note(res)[0])
        fprintf(stderr, "railsim: run: not split over the MPI ranks: %s; rank 0 runs it alone (docs/parallel.md)\n",
                rs_result_parallel_note(res));
    if (rs_result_warning(res)[0])
        fprintf(stderr, "railsim: %s\n", rs_result_warning(res));
    char *text = NULL;
    json_t *s = rs_result_summary_brief(res, &text) == RS_OK ? json_loads(text, 0, NULL) : NULL;
    free(text);
    if (!s) {
        fprintf(stderr, "railsim: out of memory reading the run's summary\n");
        rs_result_destroy(res);
        return RS_EXIT_RUN_FAILED;
    }
    /* A shared cluster over MPI ranks: who ran what. */
    const json_t *par = json_object_get(s, "parallel"), *runs = json_object_get(par, "alone_runs");
    if (runs) {
        fprintf(stderr, "railsim: run: over %lld MPI ranks: rank 0 ran the shared cluster, the ranks its jobs' runs alone (",
                (long long)JI(par, "ranks"));
        size_t k;
        const json_t *c;
        json_array_foreach(runs, k, c)
            fprintf(stderr, "%s%lld", k ? ", " : "", (long long)json_integer_value(c));
        fprintf(stderr, "); the run itself is not partitioned yet (docs/parallel.md)\n");
    }
    rs_result_figures fig;
    rs_result_figures_get(res, &fig);
    if (!quiet)
        print_human(stdout, s, fig.msgs_relayed);
    int status = rs_result_status(res);
    if ((status == RS_EINTR || got_signal) && code == RS_EXIT_OK) {
        rs_result_figures f;
        rs_result_figures_get(res, &f);
        fprintf(stderr, "railsim: interrupted by %s at simulated time %s%s%s%s\n",
                got_signal == SIGTERM ? "SIGTERM" : "SIGINT", TIME(f.sim_end_ps),
                outdir ? "; " : "", outdir ? outdir : "", outdir ? " holds partial results" : "");
        code = 128 + (got_signal ? got_signal : SIGINT);
    } else if (status != RS_OK && code == RS_EXIT_OK) {
        if (!rs_result_stopped_by_faults(res) || quiet < 2)
            fprintf(stderr, "railsim: %s\n", rs_result_message(res));
        code = RS_EXIT_RUN_FAILED;
    }
    if (summary)
        *summary = s;
    else
        json_decref(s);
    rs_result_destroy(res);
    return code;
}
