/*
 * run_scenario.c - run a whole scenario through the library, as `railsim
 * run` does: an AllReduce over 64 GPUs on a rail-only network, given as
 * JSON text plus KEY=VALUE sets (docs/scenario-format.md), with a
 * progress callback; then the headline figures and a few members of the
 * summary (docs/summary-format.md).
 *
 *   cc run_scenario.c $(pkg-config --cflags --libs railsim) -o run_scenario
 *   ./run_scenario [KEY=VALUE...]
 */
#include <stdio.h>

#include <railsim/railsim.h>

static int progress(void *ctx, rs_time now, uint64_t events, double done)
{
    unsigned *calls = ctx;
    (*calls)++;
    (void)now;
    (void)events;
    (void)done;
    return 0; /* nonzero would stop the run (status RS_EINTR) */
}

int main(int argc, char **argv)
{
    const char *json = "{ \"topology\": { \"kind\": \"rail-only\", \"gpus\": 64, \"hb_size\": 8 },"
                       "  \"traffic\": { \"kind\": \"collective\", \"op\": \"allreduce\", \"bytes\": 16777216 } }";
    rs_err err;
    rs_scenario *sc;
    if (rs_scenario_create(&sc, &err) != RS_OK ||
        rs_scenario_load_string(sc, json, argv + 1, argc - 1, &err) != RS_OK) {
        fprintf(stderr, "run_scenario: %s\n", err.msg);
        rs_scenario_destroy(sc);
        return 2;
    }
    unsigned calls = 0;
    rs_run_opts o;
    rs_run_opts_default(&o);
    o.progress = progress;
    o.ctx = &calls;
    rs_result *res;
    int rc = rs_run_with(sc, &o, &res, &err);
    rs_scenario_destroy(sc);
    if (rc != RS_OK && !res) {
        fprintf(stderr, "run_scenario: %s\n", err.msg);
        return 2;
    }
    rs_result_figures f;
    rs_result_figures_get(res, &f);
    printf("status %s%s%s\n", rs_strerror(rs_result_status(res)), rs_result_message(res)[0] ? ": " : "",
           rs_result_message(res));
    printf("%s time %.3f us, network-only bound %.3f us\n", f.what, f.time_ps / 1e6, f.bound_ps / 1e6);
    printf("%llu events, %llu packet-hops, %u progress calls\n", (unsigned long long)f.events,
           (unsigned long long)f.packet_hops, calls);
    /* Everything summary.json holds, as C values (run.h), and as the
     * JSON text summary.json is. */
    const rs_result_data *d = rs_result_data_get(res);
    if (d->collective)
        printf("%s over %u ranks: algbw %.2f GB/s, busbw %.2f GB/s\n", d->collective->op, d->collective->ranks,
               d->collective->algbw_GBps, d->collective->busbw_GBps);
    printf("%llu packets sent, %llu ECN marks, %u busy ports\n", (unsigned long long)d->net.pkts_sent,
           (unsigned long long)d->net.ecn_marked, d->nports);
    const char *s = rs_result_summary_json(res);
    printf("summary: %s\n", s[0] == '{' ? "a JSON object" : "missing");
    int ok = rs_result_status(res) == RS_OK;
    rs_result_destroy(res);
    return ok ? 0 : 1;
}
