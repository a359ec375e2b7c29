/*
 * summary.c - builds summary.json. Key order is fixed (insertion order),
 * numbers are integers where the simulation computed integers (times in
 * picoseconds, counts), so the same run gives the same bytes; only wall_s
 * and peak_rss_bytes describe the host and differ between runs.
 */
#include "summary.h"

#include <stdlib.h>
#include <string.h>

static json_t *fct_stats(rs_net *net)
{
    rs_net_fct f;
    if (rs_net_fct_get(net, &f) != RS_OK)
        return NULL;
    json_t *o = json_object();
    const char *const keys[5] = { "min", "mean", "p50", "p99", "max" };
    const rs_time v[5] = { f.min, f.mean, f.p50, f.p99, f.max };
    for (int i = 0; i < 5; i++)
        json_object_set_new(o, keys[i], f.n ? json_integer((json_int_t)v[i]) : json_null());
    return o;
}

#define I(x) json_integer((json_int_t)(x))

/* Every port that queued, dropped, paused or marked anything, by port id. */
static json_t *port_list(rs_net *net)
{
    json_t *a = json_array();
    for (uint32_t i = 0; i < rs_net_port_count(net); i++) {
        rs_net_port_info pi;
        rs_net_port_info_get(net, i, &pi);
        if (!(pi.max_queue_bytes | pi.drops | pi.pfc_sent | pi.pfc_received | pi.ecn_marked | pi.cnp_sent))
            continue;
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(pi.name));
        json_object_set_new(o, "peer", json_string(pi.peer));
        json_object_set_new(o, "tx_packets", I(pi.tx_pkts));
        json_object_set_new(o, "tx_bytes", I(pi.tx_bytes));
        json_object_set_new(o, "max_queue_bytes", I(pi.max_queue_bytes));
        json_object_set_new(o, "max_ingress_bytes", I(pi.max_ingress_bytes));
        json_object_set_new(o, "drops", I(pi.drops));
        json_object_set_new(o, "pfc_sent", I(pi.pfc_sent));
        json_object_set_new(o, "pfc_received", I(pi.pfc_received));
        json_object_set_new(o, "paused_ps", I(pi.paused_ps));
        json_object_set_new(o, "ecn_marked", I(pi.ecn_marked));
        json_object_set_new(o, "cnp_sent", I(pi.cnp_sent));
        json_array_append_new(a, o);
    }
    return a;
}

/* The bandwidths under their names: algbw_GBps and busbw_GBps, then the
 * same values under algbw_gbps and busbw_gbps, deprecated (they read as
 * gigabits) and kept one release (docs/summary-format.md). Steals both. */
static void set_bw(json_t *o, json_t *alg, json_t *bus)
{
    json_object_set(o, "algbw_GBps", alg);
    json_object_set(o, "busbw_GBps", bus);
    json_object_set_new(o, "algbw_gbps", alg);
    json_object_set_new(o, "busbw_gbps", bus);
}

/* nccl-tests' figures: time = mean over the iterations; algbw = bytes /
 * time in GB/s (10^9 bytes/s), as nccl-tests prints it; busbw = algbw x
 * rs_coll_busbw_factor. null while no iteration has completed or when the
 * time is 0 (zero bytes, one rank). */
static json_t *collective_summary(const rs_collrun *r)
{
    uint32_t n;
    const rs_time *t = rs_collrun_times(r, &n);
    rs_coll_op op = rs_collrun_op(r);
    uint64_t bytes = rs_collrun_bytes(r);
    json_t *o = json_object();
    json_t *times = json_array();
    if (!o || !times) {
        json_decref(o);
        json_decref(times);
        return NULL;
    }
    unsigned __int128 sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        sum += t[i];
        json_array_append_new(times, I(t[i]));
    }
    json_object_set_new(o, "op", json_string(rs_coll_op_name(op)));
    json_object_set_new(o, "algo", json_string(rs_coll_algo_name(rs_collrun_algo(r))));
    json_object_set_new(o, "ranks", I(rs_collrun_ranks(r)));
    json_object_set_new(o, "bytes", I(bytes));
    json_object_set_new(o, "iters", I(rs_collrun_iters(r)));
    if (n == 0) {
        json_object_set_new(o, "time_ps", json_null());
        json_object_set_new(o, "times_ps", times);
        json_object_set_new(o, "bound_ps", json_null());
        set_bw(o, json_null(), json_null());
        return o;
    }
    uint64_t mean = (uint64_t)((sum + n / 2) / n);
    json_object_set_new(o, "time_ps", I(mean));
    json_object_set_new(o, "times_ps", times);
    json_object_set_new(o, "bound_ps", I(rs_collrun_bound(r)));
    if (mean == 0) {
        set_bw(o, json_null(), json_null());
        return o;
    }
    /* bytes / (mean * 1e-12 s) / 1e9 */
    double algbw = (double)bytes * 1e3 / (double)mean;
    set_bw(o, json_real(algbw), json_real(algbw * rs_coll_busbw_factor(op, rs_collrun_ranks(r))));
    return o;
}

/* {mean, min, max} of a per-rank figure. */
static json_t *spread(const rs_time v[3])
{
    json_t *o = json_object();
    json_object_set_new(o, "mean", I(v[0]));
    json_object_set_new(o, "min", I(v[1]));
    json_object_set_new(o, "max", I(v[2]));
    return o;
}

/* The replay's figures (docs/replay.md defines each). Times and rates are
 * null while no iteration has completed; comm_by_dim_ps also when the run
 * did not complete; tokens_per_s and mfu when the trace lacks the facts. */
static json_t *iteration_summary(const rs_replay *r)
{
    rs_replay_stats st;
    rs_replay_stats_get(r, &st);
    const rs_trace *t = rs_replay_trace(r);
    const rs_trace_iter *it = rs_trace_iteration(t);
    uint32_t n;
    const rs_time *times = rs_replay_iter_times(r, &n);
    json_t *o = json_object();
    json_t *ta = json_array();
    if (!o || !ta) {
        json_decref(o);
        json_decref(ta);
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++)
        json_array_append_new(ta, I(times[i]));
    json_object_set_new(o, "name", json_string(rs_trace_name(t)));
    json_object_set_new(o, "ranks", I(st.ranks));
    json_object_set_new(o, "iterations", I(st.iterations));
    json_object_set_new(o, "time_ps", st.done ? I(st.time_ps) : json_null());
    json_object_set_new(o, "times_ps", ta);
    json_object_set_new(o, "compute_ps", st.done ? spread(st.compute_ps) : json_null());
    json_object_set_new(o, "exposed_comm_ps", st.done ? spread(st.exposed_ps) : json_null());
    json_object_set_new(o, "bound_ps", st.bound_valid ? I(st.bound_ps) : json_null());
    json_object_set_new(o, "bound_rank", st.bound_valid ? I(st.bound_rank) : json_null());
    if (st.comm_valid) {
        json_t *d = json_object();
        static const rs_dim dims[] = { RS_DIM_TP, RS_DIM_PP, RS_DIM_DP, RS_DIM_CP, RS_DIM_EP };
        for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
            json_object_set_new(d, rs_dim_name(dims[i]), I(st.comm_by_dim_ps[dims[i]]));
        json_object_set_new(d, "other", I(st.comm_by_dim_ps[RS_DIM_NONE]));
        json_object_set_new(o, "comm_by_dim_ps", d);
    } else {
        json_object_set_new(o, "comm_by_dim_ps", json_null());
    }
    json_object_set_new(o, "tokens_per_s", st.done && it->tokens ? json_real(st.tokens_per_s) : json_null());
    json_object_set_new(o, "mfu", st.done && it->peak_flops > 0 && it->model_flops > 0 ? json_real(st.mfu)
                                                                                          : json_null());
    return o;
}

/* A fault entry's time, kind, target (full), spec, origin (full) and
 * entry, as the "faults" and "faults_absent" lists start it. */
static json_t *fault_head(const rs_net_fault_info *fi, int full)
{
    json_t *f = json_object();
    json_object_set_new(f, "time_ps", I(fi->time_ps));
    json_object_set_new(f, "kind", json_string(fi->kind));
    if (full)
        json_object_set_new(f, "target", json_string(fi->target));
    json_object_set_new(f, "spec", json_string(fi->spec));
    if (full)
        json_object_set_new(f, "origin", json_string(fi->origin));
    json_object_set_new(f, "entry", fi->entry ? I(fi->entry) : json_null());
    return f;
}

/* docs/summary-format.md, "faults": the schedule as resolved, in time
 * order, repairs included; a fault the run did not reach has applied false. */
static json_t *fault_list(rs_net *net)
{
    json_t *a = json_array();
    for (uint32_t i = 0; i < rs_net_fault_count(net); i++) {
        rs_net_fault_info fi;
        rs_net_fault_info_get(net, i, &fi);
        json_t *f = fault_head(&fi, 1);
        json_object_set_new(f, "applied", json_boolean(fi.applied));
        json_object_set_new(f, "packets_lost", I(fi.packets_lost));
        json_object_set_new(f, "routes_recomputed_at_ps",
                            fi.routes_recomputed_at == RS_TIME_MAX ? json_null() : I(fi.routes_recomputed_at));
        json_object_set_new(f, "packets_retransmitted", I(fi.packets_retransmitted));
        json_object_set_new(f, "flows_hit", I(fi.flows_hit));
        json_object_set_new(f, "time_to_recover_ps",
                            fi.time_to_recover_ps == RS_TIME_MAX ? json_null() : I(fi.time_to_recover_ps));
        json_t *stuck = json_array();
        for (uint32_t k = 0; k < rs_net_fault_pfc_stuck_count(net); k++) {
            rs_net_pfc_stuck ps;
            rs_net_fault_pfc_stuck_get(net, k, &ps);
            if (ps.fault != i)
                continue;
            json_t *x = json_object();
            json_object_set_new(x, "port", json_string(ps.port));
            json_object_set_new(x, "priority", I(ps.priority));
            json_object_set_new(x, "reason", json_string(ps.reason));
            json_object_set_new(x, "behind", json_string(ps.behind));
            json_object_set_new(x, "detected_at_ps", I(ps.detected_ps));
            json_array_append_new(stuck, x);
        }
        json_object_set_new(f, "pfc_stuck", stuck);
        json_array_append_new(a, f);
    }
    return a;
}

/* docs/summary-format.md, "faults_absent": entries skipped because their
 * class has no member in this topology (railsim compare only). */
static json_t *absent_list(rs_net *net)
{
    json_t *a = json_array();
    for (uint32_t i = 0; i < rs_net_fault_absent_count(net); i++) {
        rs_net_fault_info fi;
        rs_net_fault_absent_get(net, i, &fi);
        json_array_append_new(a, fault_head(&fi, 0));
    }
    return a;
}

json_t *rs_summary_build(const rs_scenario *sc, rs_net *net, const rs_run_info *info)
{
    rs_net_stats st;
    rs_net_topo_info ti;
    rs_net_stats_get(net, &st);
    rs_net_topo_info_get(net, &ti);
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "format", json_string("railsim-summary"));
    json_object_set_new(o, "version", I(1));
    json_object_set_new(o, "railsim", json_string(RS_VERSION));
    json_object_set_new(o, "status", json_string(info->status == RS_OK ? "complete" : info->status == RS_EINTR ? "interrupted" : "incomplete"));
    json_object_set_new(o, "scenario", rs_scenario_to_json(sc));
    /* A compute-only replay has no network activity: its end counts too. */
    rs_time end = st.last_activity;
    if (info->replay && rs_replay_end_time(info->replay) > end)
        end = rs_replay_end_time(info->replay);
    if (info->coll && rs_collrun_end_time(info->coll) > end)
        end = rs_collrun_end_time(info->coll);
    json_object_set_new(o, "sim_end_ps", I(end));

    json_t *topo = json_object();
    json_object_set_new(topo, "kind", json_string(sc->net.kind == RS_TOPO_RAIL_ONLY ? "rail-only" : "fat-tree"));
    json_object_set_new(topo, "gpus", I(sc->net.gpus));
    json_object_set_new(topo, "hb_domains", I(ti.hb_domains));
    json_object_set_new(topo, "planes", I(ti.planes));
    json_object_set_new(topo, "tiers", I(ti.tiers));
    /* Switches to buy, as railsim cost and compare count them; the
     * simulator's own (one per rail on rail-only) next to them. */
    json_object_set_new(topo, "switches", I(ti.switches_physical));
    json_object_set_new(topo, "switches_logical", I(ti.switches));
    json_object_set_new(topo, "links", I(ti.links));
    json_object_set_new(o, "topology", topo);
    if (info->coll)
        json_object_set_new(o, "collective", collective_summary(info->coll));
    if (info->replay)
        json_object_set_new(o, "iteration", iteration_summary(info->replay));

    json_t *flows = json_object();
    json_object_set_new(flows, "count", I(st.msgs));
    json_object_set_new(flows, "completed", I(st.msgs_done));
    json_object_set_new(flows, "bytes", I(st.msg_bytes));
    json_object_set_new(flows, "fct_ps", fct_stats(net));
    json_object_set_new(o, "flows", flows);

    json_t *pk = json_object();
    json_object_set_new(pk, "sent", I(st.pkts_sent));
    json_object_set_new(pk, "delivered", I(st.pkts_delivered));
    json_object_set_new(pk, "dropped", I(st.pkts_dropped));
    json_object_set_new(pk, "retransmitted", I(st.pkts_retransmitted));
    json_object_set_new(pk, "data", I(st.data_pkts));
    json_object_set_new(pk, "control", I(st.ctrl_pkts));
    json_object_set_new(pk, "naks", I(st.naks));
    json_object_set_new(pk, "timeouts", I(st.timeouts));
    json_object_set_new(pk, "in_flight", I(st.pkts_in_flight));
    json_object_set_new(o, "packets", pk);

    json_t *by = json_object();
    json_object_set_new(by, "nic", I(st.nic_bytes));
    json_object_set_new(by, "hb", I(st.hb_bytes));
    json_object_set_new(by, "goodput", I(st.goodput_bytes));
    json_object_set_new(o, "payload_bytes", by);
    json_t *pfc = json_object();
    json_object_set_new(pfc, "pauses_sent", I(st.pfc_pauses_sent));
    json_object_set_new(pfc, "resumes_sent", I(st.pfc_resumes_sent));
    json_object_set_new(pfc, "paused_ps", I(st.pfc_paused_ps));
    json_object_set_new(o, "pfc", pfc);
    json_t *ecn = json_object();
    json_object_set_new(ecn, "marked", I(st.ecn_marked));
    json_object_set_new(o, "ecn", ecn);
    json_t *cnp = json_object();
    json_object_set_new(cnp, "sent", I(st.cnps_sent));
    json_object_set_new(cnp, "received", I(st.cnps_received));
    json_object_set_new(o, "cnp", cnp);
    json_object_set_new(o, "max_queue_bytes", I(st.max_queue_bytes));
    json_object_set_new(o, "ports", port_list(net));
    json_object_set_new(o, "packet_hops", I(st.packet_hops));
    if (rs_net_fault_count(net) > 0)
        json_object_set_new(o, "faults", fault_list(net));
    if (rs_net_fault_absent_count(net) > 0)
        json_object_set_new(o, "faults_absent", absent_list(net));
    if (rs_net_fault_errmsg(net)[0])
        json_object_set_new(o, "faults_stop", json_string(rs_net_fault_errmsg(net)));
    /* The timeline's sampler events are not the run's: a run gives the
     * same summary with and without a timeline. */
    json_object_set_new(o, "events", I(rs_sim_events_run(rs_net_sim(net)) - rs_net_timeline_events(net)));
    if (info->estimate) {
        json_t *est = json_object();
        json_object_set_new(est, "messages", json_real(info->estimate->messages));
        json_object_set_new(est, "events", json_real(info->estimate->events));
        json_object_set_new(est, "memory_bytes", I(info->estimate->memory_bytes));
        json_object_set_new(est, "timeline_min_bytes", I(info->estimate->timeline_min_bytes));
        json_object_set_new(o, "estimate", est);
    }
    json_object_set_new(o, "wall_s", json_real(info->wall_s));
    json_object_set_new(o, "peak_rss_bytes", I(info->peak_rss_bytes));
    return o;
}
